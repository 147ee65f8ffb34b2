//! No input makes a reader panic or loop: arbitrary bytes and mutated
//! valid messages, in arbitrary pieces, with and without EOF.

use crate::http::{ChunkedDecoder, Method, RequestReader, ResponseReader};
use proptest::prelude::*;
use std::vec::Vec;

const SEEDS: [&[u8]; 4] = [
    b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;e=1\r\nhello\r\n0\r\nT: 1\r\n\r\n",
    b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.0 200 OK\r\n\r\nclose-delimited",
    b"POST /o?a=b HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
];

fn input() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..300),
        (
            0..SEEDS.len(),
            proptest::collection::vec((any::<usize>(), any::<u8>()), 1..6)
        )
            .prop_map(|(i, muts)| {
                let mut v = SEEDS[i].to_vec();
                for (at, b) in muts {
                    let at = at % v.len();
                    v[at] = b;
                }
                v
            }),
    ]
}

proptest! {
    #![proptest_config(super::proptest_config(512))]

    #[test]
    #[cfg_attr(miri, ignore = "bytewise re-parsing is too slow for Miri; safe code only")]
    fn readers_never_panic(
        data in input(),
        sizes in proptest::collection::vec(1..40usize, 1..5),
        eof in any::<bool>(),
        head in any::<bool>(),
        cap in 16..512usize,
    ) {
        let mut resp: ResponseReader<Vec<u8>, 4> = ResponseReader::new(std::vec![0u8; cap]);
        let mut req: RequestReader<Vec<u8>, 4> = RequestReader::new(std::vec![0u8; cap]);
        let mut resp_done = false;
        let mut req_done = false;
        let mut at = 0;
        let mut i = 0;
        while at < data.len() && !(resp_done && req_done) {
            let n = sizes[i % sizes.len()].min(data.len() - at);
            i += 1;
            if head {
                resp.expect(Method::Head);
            }
            if !resp_done {
                resp.feed(&data[at..at + n]);
                loop {
                    match resp.poll() {
                        Ok(Some(r)) => {
                            let _ = (r.body_str(), r.header("x"), r.trailers().get("t"), r.keep_alive());
                        }
                        Ok(None) => break,
                        Err(_) => {
                            resp_done = true;
                            break;
                        }
                    }
                }
            }
            if !req_done {
                req.feed(&data[at..at + n]);
                loop {
                    match req.poll() {
                        Ok(Some(r)) => {
                            let _ = (r.path(), r.query_pairs().count(), r.method(), r.body_str());
                        }
                        Ok(None) => break,
                        Err(_) => {
                            req_done = true;
                            break;
                        }
                    }
                }
            }
            at += n;
        }
        if eof {
            resp.signal_eof();
            req.signal_eof();
            while !resp_done {
                resp_done = !matches!(resp.poll(), Ok(Some(_)));
            }
            while !req_done {
                req_done = !matches!(req.poll(), Ok(Some(_)));
            }
        }
        let mut buf = data.clone();
        let mut dec = ChunkedDecoder::new(1 << 20, 64);
        let _ = dec.decode_in_place(&mut buf, 0, 0);
    }
}
