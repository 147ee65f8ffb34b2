//! Zero heap allocations per message: a counting global allocator watches a
//! steady-state loop of encode + decode in both roles, fragmented and not,
//! with control frames, after the buffers were allocated once.

use tickwire_codec::buf::WriteBuf;
use tickwire_codec::rand::MaskRng;
use tickwire_codec::ws::{CloseCode, FrameReader, FrameWriter, Message, OpCode, Role};

mod common;
use common::allocs;

#[test]
fn steady_state_encode_and_decode_do_not_allocate() {
    let text: String = "{\"sym\":\"BTC-USD\",\"bid\":\"64123.50\",\"ask\":\"64124.00\"}".repeat(40);
    let binary: Vec<u8> = (0..3000u32).map(|i| i as u8).collect();
    let mut wire = WriteBuf::new(vec![0u8; 1 << 16]);
    let mut client_w = FrameWriter::client(MaskRng::from_seed([1; 32])).with_fragment_size(700);
    let mut server_w = FrameWriter::server();
    let mut server_r = FrameReader::new(Role::Server, vec![0u8; 1 << 16]);
    let mut client_r = FrameReader::new(Role::Client, vec![0u8; 1 << 16]);
    let mut out = [0u8; 256];

    let before = allocs();
    let mut seen = 0usize;
    for i in 0..10_000usize {
        // Client -> server: fragmented text, a ping, binary.
        client_w
            .write_text(&text[..(i * 37) % text.len()], &mut wire)
            .unwrap();
        client_w.write_ping(b"hb", &mut wire).unwrap();
        client_w
            .write_binary(&binary[..(i * 13) % binary.len()], &mut wire)
            .unwrap();
        // In-place payload.
        let p = wire.payload_mut();
        p[..4].copy_from_slice(b"tick");
        client_w
            .commit_in_place(OpCode::Text, 4, &mut wire)
            .unwrap();
        let n = server_r.feed(wire.data());
        wire.consume(n);
        while let Some(m) = server_r.next().unwrap() {
            seen += m.payload().len();
        }
        // Server -> client: a text and a pong, into a plain slice.
        let n = server_w.encode_text(&text[..i % 100], &mut out).unwrap();
        client_r.feed(&out[..n]);
        let n = server_w.encode_pong(b"hb", &mut out).unwrap();
        client_r.feed(&out[..n]);
        while let Some(m) = client_r.next().unwrap() {
            if let Message::Text(s) = m {
                seen += s.len();
            }
        }
    }
    let n = server_w
        .encode_close(Some(CloseCode::NORMAL), "bye", &mut out)
        .unwrap();
    client_r.feed(&out[..n]);
    assert!(matches!(client_r.next(), Ok(Some(Message::Close(Some(_))))));
    let after = allocs();
    assert!(seen > 10_000);
    assert_eq!(after - before, 0, "allocations in the steady-state loop");
}
