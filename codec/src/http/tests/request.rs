//! RequestReader: request framing, pipelining and the smuggling cases a
//! server must refuse.

use crate::http::{Error, Method, RequestReader};
use std::vec::Vec;

fn reader() -> RequestReader<Vec<u8>> {
    RequestReader::new(std::vec![0u8; 4096])
}

#[test]
fn pipelined_requests_with_bodies() {
    let mut r = reader();
    r.feed(b"GET /ticker?symbol=BTC-USD&depth=10&flag HTTP/1.1\r\nHost: x\r\n\r\n\
              POST /order HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nbody\
              PUT /chunky HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX-T: y\r\n\r\n\
              DELETE /o/1 HTTP/1.0\r\n\r\n");
    let q = r.poll().unwrap().unwrap();
    assert_eq!(q.method(), Some(Method::Get));
    assert_eq!(q.path(), "/ticker");
    assert_eq!(q.query(), Some("symbol=BTC-USD&depth=10&flag"));
    let pairs: Vec<_> = q.query_pairs().collect();
    assert_eq!(
        pairs,
        [("symbol", "BTC-USD"), ("depth", "10"), ("flag", "")]
    );
    assert_eq!(q.header_str("host"), Some("x"));
    assert!(q.body().is_empty() && q.keep_alive());
    let q = r.poll().unwrap().unwrap();
    assert_eq!(
        (q.method_str(), q.target(), q.body()),
        ("POST", "/order", &b"body"[..])
    );
    let q = r.poll().unwrap().unwrap();
    assert_eq!((q.method(), q.body_str()), (Some(Method::Put), Ok("abc")));
    assert_eq!(q.trailers().get("x-t"), Some(&b"y"[..]));
    let q = r.poll().unwrap().unwrap();
    assert_eq!(
        (q.method(), q.version(), q.keep_alive()),
        (Some(Method::Delete), 0, false)
    );
    assert!(r.poll().unwrap().is_none());
    r.signal_eof();
    assert_eq!(r.poll().unwrap_err(), Error::Closed);
}

#[test]
fn unknown_methods_are_reported_as_sent() {
    let mut r = reader();
    r.feed(b"OPTIONS * HTTP/1.1\r\n\r\n");
    let q = r.poll().unwrap().unwrap();
    assert_eq!(
        (q.method(), q.method_str(), q.target()),
        (None, "OPTIONS", "*")
    );
}

#[test]
fn upgrade_leaves_frames_in_the_buffer() {
    let mut r = reader();
    r.feed(b"GET /ws HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n\x81\x80abcd");
    let q = r.poll().unwrap().unwrap();
    assert_eq!(q.header("connection"), Some(&b"Upgrade"[..]));
    assert_eq!(r.unparsed(), b"\x81\x80abcd");
}

#[test]
fn smuggling_requests_are_refused() {
    let cases: [(&[u8], Error); 9] = [
        (
            b"POST / HTTP/1.1\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            Error::ContentLengthWithTransferEncoding,
        ),
        (
            b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n0\r\n\r\n",
            Error::ContentLengthWithTransferEncoding,
        ),
        (
            b"POST / HTTP/1.1\r\nContent-Length: 4\r\nContent-Length: 5\r\n\r\nbody!",
            Error::ConflictingContentLength,
        ),
        (
            b"POST / HTTP/1.1\r\nContent-Length: 4\r\nContent-Length: 4\r\n\r\nbody",
            Error::DuplicateContentLength,
        ),
        (
            b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked, identity\r\n\r\n",
            Error::ChunkedNotLast,
        ),
        (
            b"POST / HTTP/1.1\r\nTransfer-Encoding: xchunked\r\n\r\n",
            Error::UnsupportedTransferEncoding,
        ),
        (
            b"POST / HTTP/1.1\r\nTransfer-Encoding : chunked\r\n\r\n",
            Error::InvalidHeaderName,
        ),
        (b"POST / HTTP/1.1\r\nX: a\r\n b\r\n\r\n", Error::ObsFold),
        (b"GET /\0 HTTP/1.1\r\n\r\n", Error::NulByte),
    ];
    for (input, want) in cases {
        for step in [1, input.len()] {
            let mut r = reader();
            let mut got = None;
            for piece in input.chunks(step) {
                r.feed(piece);
                match r.poll() {
                    Ok(None) => {}
                    Ok(Some(_)) => panic!("accepted {}", input.escape_ascii()),
                    Err(e) => {
                        got = Some(e);
                        break;
                    }
                }
            }
            assert_eq!(got, Some(want), "{}", input.escape_ascii());
        }
    }
    let mut r = reader();
    r.feed(b"G(T / HTTP/1.1\r\n\r\n");
    assert_eq!(r.poll().unwrap_err(), Error::InvalidRequestLine);
}
