//! The limits matrix: every configured limit exceeded by one byte (or one header) gives its
//! typed error and the close code (1009 for size, 1002 for protocol) or HTTP status the
//! peer must get; exactly at the limit it still works.

use super::handshake::{
    ClientHandshake, DEFAULT_MAX_HEAD_LEN, HandshakeError, MAX_HEADERS, parse_request,
    parse_request_with_limit, reject_status, write_accept,
};
use super::reader::READER_OVERHEAD;
use super::*;
use std::string::String;
use std::vec;
use std::vec::Vec;

/// Server frames (unmasked) of one binary message, fragmented into `fragment`-byte frames.
fn binary_wire(len: usize, fragment: usize) -> Vec<u8> {
    let mut w = FrameWriter::server().with_fragment_size(fragment);
    let mut out = vec![0u8; w.message_len(len)];
    let n = w.encode_binary(&vec![0x5A; len], &mut out).unwrap();
    out.truncate(n);
    out
}

/// Everything a client reader with `config` over `capacity` bytes makes of `wire`:
/// the payload lengths of its messages, or its error.
fn read_all(config: Config, capacity: usize, wire: &[u8]) -> Result<Vec<usize>, Error> {
    let mut r = FrameReader::with_config(Role::Client, vec![0u8; capacity], config);
    let mut at = 0;
    let mut lens = Vec::new();
    loop {
        while let Some(m) = r.next()? {
            lens.push(m.payload().len());
        }
        if at == wire.len() {
            return Ok(lens);
        }
        at += r.feed(&wire[at..]);
    }
}

fn config(max_frame: usize, max_message: usize) -> Config {
    Config {
        max_frame_size: max_frame,
        max_message_size: max_message,
        allowed_rsv: 0,
    }
}

#[test]
fn max_frame_size() {
    let cfg = config(1000, 1 << 20);
    assert_eq!(
        read_all(cfg, 1 << 16, &binary_wire(1000, 0)),
        Ok(vec![1000])
    );
    let e = read_all(cfg, 1 << 16, &binary_wire(1001, 0)).unwrap_err();
    assert_eq!(e, Error::FrameTooLarge);
    assert_eq!(e.close_code(), CloseCode::TOO_BIG);
    // Each fragment is a frame: fragments at the limit are fine.
    assert_eq!(
        read_all(cfg, 1 << 16, &binary_wire(3000, 1000)),
        Ok(vec![3000])
    );
    assert_eq!(
        read_all(cfg, 1 << 16, &binary_wire(3000, 1001)),
        Err(Error::FrameTooLarge)
    );
}

#[test]
fn max_message_size() {
    let cfg = config(1 << 20, 2500);
    // Fragmented: the sum counts.
    assert_eq!(
        read_all(cfg, 1 << 16, &binary_wire(2500, 700)),
        Ok(vec![2500])
    );
    let e = read_all(cfg, 1 << 16, &binary_wire(2501, 700)).unwrap_err();
    assert_eq!(e, Error::MessageTooLarge);
    assert_eq!(e.close_code(), CloseCode::TOO_BIG);
    // Unfragmented: the frame limit follows the message limit.
    assert_eq!(
        read_all(cfg, 1 << 16, &binary_wire(2500, 0)),
        Ok(vec![2500])
    );
    let e = read_all(cfg, 1 << 16, &binary_wire(2501, 0)).unwrap_err();
    assert_eq!(e.close_code(), CloseCode::TOO_BIG);
}

#[test]
fn buffer_capacity_bounds_the_message() {
    // No configured limit: the buffer sets it at capacity - READER_OVERHEAD.
    let cap = 4096;
    let limit = cap - READER_OVERHEAD;
    let cfg = Config::default();
    assert_eq!(
        FrameReader::with_config(Role::Client, vec![0u8; cap], cfg).max_message_size(),
        limit
    );
    assert_eq!(read_all(cfg, cap, &binary_wire(limit, 0)), Ok(vec![limit]));
    assert_eq!(
        read_all(cfg, cap, &binary_wire(limit, 1000)),
        Ok(vec![limit])
    );
    let e = read_all(cfg, cap, &binary_wire(limit + 1, 1000)).unwrap_err();
    assert_eq!(
        (e, e.close_code()),
        (Error::MessageTooLarge, CloseCode::TOO_BIG)
    );
    // A control frame between fragments of a message at the limit still fits.
    let first = limit / 2 + 1; // two fragments; 16-bit lengths (4-byte headers)
    let mut wire = binary_wire(limit, first);
    let mid = 4 + first;
    let ping = [&[0x89u8, 125][..], &[7u8; 125]].concat();
    wire.splice(mid..mid, ping);
    assert_eq!(read_all(cfg, cap, &wire), Ok(vec![125, limit]));
}

#[test]
fn control_payload_125() {
    for op in [0x89u8, 0x8A] {
        let mut at = vec![op, 125];
        at.extend_from_slice(&[1; 125]);
        assert_eq!(read_all(Config::default(), 4096, &at), Ok(vec![125]));
        let mut over = vec![op, 126, 0, 126];
        over.extend_from_slice(&[1; 126]);
        let e = read_all(Config::default(), 4096, &over).unwrap_err();
        assert_eq!(e, Error::ControlFrameTooLarge);
        assert_eq!(e.close_code(), CloseCode::PROTOCOL_ERROR);
    }
    // A close: code + 123-byte reason is the most; 124 cannot even be encoded.
    let mut w = FrameWriter::server();
    let mut out = [0u8; 256];
    let reason = "r".repeat(123);
    let n = w
        .encode_close(Some(CloseCode::NORMAL), &reason, &mut out)
        .unwrap();
    assert_eq!(read_all(Config::default(), 4096, &out[..n]), Ok(vec![123]));
    assert_eq!(
        w.encode_close(Some(CloseCode::NORMAL), &"r".repeat(124), &mut out),
        Err(EncodeError::ControlPayloadTooLarge)
    );
    assert_eq!(
        w.encode_ping(&[0; 126], &mut out),
        Err(EncodeError::ControlPayloadTooLarge)
    );
    assert!(w.encode_ping(&[0; 125], &mut out).is_ok());
    let mut over = vec![0x88, 126, 0, 126, 0x03, 0xE8];
    over.extend_from_slice(&[b'r'; 124]);
    let e = read_all(Config::default(), 4096, &over).unwrap_err();
    assert_eq!(e.close_code(), CloseCode::PROTOCOL_ERROR);
}

const REQUEST_HEAD: &str = "GET /chat HTTP/1.1\r\nHost: example.com\r\nUpgrade: websocket\r\n\
Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
Sec-WebSocket-Version: 13\r\n";

/// A valid upgrade request of exactly `len` bytes (padded with an `X-Pad` header).
fn request_of_len(len: usize) -> String {
    let fixed = REQUEST_HEAD.len() + "X-Pad: \r\n\r\n".len();
    std::format!("{REQUEST_HEAD}X-Pad: {}\r\n\r\n", "a".repeat(len - fixed))
}

/// A valid upgrade request with `n` header fields in all.
fn request_with_headers(n: usize) -> String {
    let mut s = String::from(REQUEST_HEAD);
    for i in 5..n {
        s.push_str(&std::format!("X-H{i}: v\r\n"));
    }
    s.push_str("\r\n");
    s
}

#[test]
fn request_head_size() {
    let at = request_of_len(DEFAULT_MAX_HEAD_LEN);
    assert_eq!(at.len(), DEFAULT_MAX_HEAD_LEN);
    let req = parse_request(at.as_bytes()).unwrap().unwrap();
    assert_eq!(req.consumed, DEFAULT_MAX_HEAD_LEN);
    let over = request_of_len(DEFAULT_MAX_HEAD_LEN + 1);
    let e = parse_request(over.as_bytes()).unwrap_err();
    assert_eq!(e, HandshakeError::HeaderTooLarge);
    assert_eq!(reject_status(e), 431);
    // A configured limit works the same, also before the head is complete.
    let small = request_of_len(300);
    assert!(
        parse_request_with_limit(small.as_bytes(), 300)
            .unwrap()
            .is_some()
    );
    assert_eq!(
        parse_request_with_limit(small.as_bytes(), 299),
        Err(HandshakeError::HeaderTooLarge)
    );
    assert_eq!(
        parse_request_with_limit(&small.as_bytes()[..299], 299),
        Err(HandshakeError::HeaderTooLarge)
    );
    assert_eq!(
        parse_request_with_limit(&small.as_bytes()[..298], 299),
        Ok(None)
    );
}

#[test]
fn request_header_count() {
    let at = request_with_headers(MAX_HEADERS);
    let req = parse_request(at.as_bytes()).unwrap().unwrap();
    assert_eq!(req.headers().count(), MAX_HEADERS);
    let over = request_with_headers(MAX_HEADERS + 1);
    let e = parse_request(over.as_bytes()).unwrap_err();
    assert_eq!(e, HandshakeError::HeaderTooLarge);
    assert_eq!(reject_status(e), 431);
}

/// The `101` for the RFC 6455 §1.3 key, padded to `len` bytes or to `headers` fields.
fn response(len: Option<usize>, headers: usize) -> (ClientHandshake<'static>, Vec<u8>) {
    let client = ClientHandshake::new("example.com", "/chat", *b"the sample nonce");
    let request = request_of_len(400);
    let req = parse_request(request.as_bytes()).unwrap().unwrap();
    let mut extra_names = Vec::new();
    for i in 3..headers {
        extra_names.push(std::format!("X-H{i}"));
    }
    let extra: Vec<(&str, &str)> = extra_names.iter().map(|n| (n.as_str(), "v")).collect();
    let mut out = vec![0u8; 16 * 1024];
    let n = write_accept(&req, None, &extra, &mut out).unwrap();
    out.truncate(n);
    if let Some(len) = len {
        // Pad with an extra header before the final CRLF.
        let pad = len - n - "X-Pad: \r\n".len();
        let tail = out.split_off(n - 2);
        out.extend_from_slice(std::format!("X-Pad: {}\r\n", "a".repeat(pad)).as_bytes());
        out.extend_from_slice(&tail);
    }
    (client, out)
}

#[test]
fn response_head_size() {
    let (client, at) = response(Some(1000), 3);
    assert_eq!(at.len(), 1000);
    let client = client.max_len(1000);
    assert_eq!(client.check_response(&at).unwrap().unwrap().consumed, 1000);
    let (_, over) = response(Some(1001), 3);
    assert_eq!(
        client.check_response(&over),
        Err(HandshakeError::HeaderTooLarge)
    );
}

#[test]
fn response_header_count() {
    let (client, at) = response(None, MAX_HEADERS);
    let resp = client.check_response(&at).unwrap().unwrap();
    assert_eq!(resp.headers().count(), MAX_HEADERS);
    let (client, over) = response(None, MAX_HEADERS + 1);
    assert_eq!(
        client.check_response(&over),
        Err(HandshakeError::HeaderTooLarge)
    );
}
