//! Zero heap allocations per HTTP request and response: a counting global
//! allocator watches the order-entry round trip (POST with 4 headers and a
//! ~100 B JSON body, built three ways; a 200 OK JSON response parsed, plain
//! and chunked) and the server side, after the buffers were allocated once.

use tickwire_codec::http::{RequestReader, RequestWriter, ResponseReader, ResponseWriter};

mod common;
use common::allocs;

const ACK: &[u8] = br#"{"orderId":"8d1e","status":"NEW","filled":"0"}"#;
const ORDER: &[u8] = br#"{"symbol":"BTC-USD","side":"buy","type":"limit","qty":"0.25","price":"64123.50","tif":"GTC"}"#;

#[test]
fn order_entry_round_trip_does_not_allocate() {
    let mut writer = RequestWriter::new(vec![0u8; 4096], "api.exchange.test").unwrap();
    writer.set_base_path("/api/v3").unwrap();
    writer.default_header("User-Agent", "tickwire").unwrap();
    let mut reader: ResponseReader<Vec<u8>> = ResponseReader::new(vec![0u8; 16 * 1024]);
    let mut server: RequestReader<Vec<u8>> = RequestReader::new(vec![0u8; 16 * 1024]);
    let mut out = vec![0u8; 4096];
    let mut seen = 0usize;

    let before = allocs();
    for i in 0..10_000u64 {
        let b = writer
            .post("/order")
            .header("Content-Type", "application/json")
            .header("X-Api-Key", "k-0123456789abcdef")
            .header("X-Timestamp", "1732358400000")
            .header("X-Signature", "5f2b9c0e7d4a1b3c");
        let req = match i % 3 {
            0 => b.body(ORDER),
            1 => b.body_fixed(ORDER.len(), |dst| dst.copy_from_slice(ORDER)),
            _ => b.body_writer(|w| {
                w.write_bytes(&ORDER[..40]).map_err(|_| core::fmt::Error)?;
                core::fmt::Write::write_fmt(w, format_args!("{}", i % 10))?;
                w.write_bytes(&ORDER[41..]).map_err(|_| core::fmt::Error)
            }),
        }
        .finish()
        .unwrap();
        assert_eq!(server.feed(req.as_bytes()), req.len());
        let r = server.poll().unwrap().unwrap();
        seen += r.body().len() + r.path().len();

        let n = if i % 2 == 0 {
            ResponseWriter::new(&mut out, 200, "OK")
                .header("Content-Type", "application/json")
                .body(ACK)
                .finish()
                .unwrap()
        } else {
            let mut c = ResponseWriter::new(&mut out, 200, "OK")
                .header("Content-Type", "application/json")
                .chunked();
            c.chunk(&ACK[..20]).chunk(&ACK[20..]);
            c.finish().unwrap()
        };
        assert_eq!(reader.feed(&out[..n]), n);
        let resp = reader.poll().unwrap().unwrap();
        assert_eq!(resp.status(), 200);
        seen += resp.body_str().unwrap().len() + resp.header("content-type").unwrap().len();
    }
    let after = allocs();
    assert_eq!(
        seen,
        10_000 * (ORDER.len() + "/api/v3/order".len() + ACK.len() + 16)
    );
    assert_eq!(after - before, 0, "allocations in the steady-state loop");
}
