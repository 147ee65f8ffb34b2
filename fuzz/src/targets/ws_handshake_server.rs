//! The server's parse of the opening request (`parse_request_with_limit`) and what the
//! server writes back, in two modes chosen by the first input byte:
//!
//! - raw (even): the rest is request bytes after a 2-byte head limit. An accepted request
//!   parses the same from exactly its head, every strict prefix of it is "need more",
//!   its key is base64 of 16 bytes, and the `101` written for it (without and with a
//!   subprotocol) passes the client's check for that key; a refused one gets a
//!   well-formed refusal with its status.
//! - structured (odd): host, path, origin, subprotocols and extra headers are cut from the
//!   input, the client writes the request (`ClientHandshake::encode`), and whatever the
//!   client agrees to write the server must parse back to the same fields.
use tickwire_codec::ws::handshake::{
    ClientHandshake, DEFAULT_MAX_HEAD_LEN, HandshakeError, MAX_HEADERS, UpgradeRequest, base64,
    parse_request, parse_request_with_limit, reject_status, write_accept, write_reject,
};

/// One input of the fuzz target `ws_handshake_server` (see the module docs).
pub fn run(input: &[u8]) {
    match input.split_first() {
        Some((mode, rest)) if mode & 1 == 0 => raw(rest),
        Some((_, rest)) => structured(rest),
        None => {}
    }
}

fn raw(input: &[u8]) {
    let Some((head, bytes)) = input.split_at_checked(2) else {
        return;
    };
    let max_len = usize::from(u16::from_le_bytes([head[0], head[1]]));
    match parse_request_with_limit(bytes, max_len) {
        Ok(Some(req)) => {
            assert!(req.consumed <= bytes.len() && req.consumed <= max_len);
            let again = parse_request_with_limit(&bytes[..req.consumed], max_len);
            assert_eq!(again.as_ref(), Ok(&Some(req.clone())), "head alone differs");
            for cut in [req.consumed - 1, req.consumed / 2] {
                assert_eq!(parse_request_with_limit(&bytes[..cut], max_len), Ok(None));
            }
            answer_round_trip(&req);
        }
        Ok(None) => assert!(bytes.len() < max_len, "need more at the limit"),
        Err(e) => {
            let mut out = [0u8; 512];
            let n = write_reject(e, &mut out).expect("a refusal fits 512 bytes");
            let status = reject_status(e);
            assert!((400..500).contains(&status));
            let line = format!("HTTP/1.1 {status} ");
            assert!(out[..n].starts_with(line.as_bytes()));
            assert!(out[..n].ends_with(b"\r\n\r\n"));
        }
    }
}

/// The `101` for `req` passes the check of a client that sent `req`'s key.
fn answer_round_trip(req: &UpgradeRequest<'_>) {
    let mut key = [0u8; 16];
    assert_eq!(
        base64::decode(req.key, &mut key),
        Ok(16),
        "key is not 16 bytes"
    );
    let host = req.host.expect("host is required");
    let mut out = [0u8; 1024];
    let n = write_accept(req, None, &[], &mut out).expect("plain 101");
    let client = ClientHandshake::new(host, req.path, key);
    let resp = client
        .check_response(&out[..n])
        .expect("client accepts the 101");
    assert_eq!(resp.map(|r| (r.consumed, r.protocol)), Some((n, None)));

    let Some(p) = req
        .protocols()
        .find(|p| !p.is_empty() && p.bytes().all(is_tchar))
    else {
        return;
    };
    let n = match write_accept(req, Some(p), &[], &mut out) {
        Ok(n) => n,
        // A very long offered token may not fit this buffer.
        Err(HandshakeError::BufferTooSmall) => return,
        Err(e) => panic!("accepting offered protocol {p:?}: {e}"),
    };
    let offered = [p];
    let client = ClientHandshake::new(host, req.path, key).protocols(&offered);
    let resp = client
        .check_response(&out[..n])
        .expect("client accepts the 101");
    assert_eq!(resp.map(|r| (r.consumed, r.protocol)), Some((n, Some(p))));
}

fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn structured(input: &[u8]) {
    let Some((key, rest)) = input.split_first_chunk::<16>() else {
        return;
    };
    let Ok(text) = core::str::from_utf8(rest) else {
        return;
    };
    let mut fields = text.split('\0');
    let host = fields.next().unwrap_or("");
    let path = fields.next().unwrap_or("/");
    let origin = fields.next().filter(|o| !o.is_empty());
    let protocols: Vec<&str> = fields
        .next()
        .unwrap_or("")
        .split(',')
        .filter(|p| !p.is_empty())
        .collect();
    let rest: Vec<&str> = fields.collect();
    let headers: Vec<(&str, &str)> = rest.chunks_exact(2).map(|c| (c[0], c[1])).collect();

    let mut hs = ClientHandshake::new(host, path, *key)
        .protocols(&protocols)
        .headers(&headers);
    if let Some(o) = origin {
        hs = hs.origin(o);
    }
    let mut out = vec![0u8; 16 * 1024];
    let Ok(n) = hs.encode(&mut out) else {
        return;
    };
    let header_count = 5 + usize::from(origin.is_some()) + usize::from(!protocols.is_empty());
    let req = match parse_request(&out[..n]) {
        Ok(Some(req)) => req,
        Err(HandshakeError::HeaderTooLarge)
            if n > DEFAULT_MAX_HEAD_LEN || header_count + headers.len() > MAX_HEADERS =>
        {
            return;
        }
        other => panic!("server refused what the client wrote: {other:?}"),
    };
    assert_eq!(req.consumed, n);
    assert_eq!(req.path, path);
    assert_eq!(req.host, Some(host));
    assert_eq!(req.key, hs.key());
    assert_eq!(req.protocols().collect::<Vec<_>>(), protocols);
    assert_eq!(
        req.header("origin").map(|o| o.trim_ascii()),
        origin.map(|o| o.trim_ascii().as_bytes())
    );
    let got: Vec<(&str, &[u8])> = req.headers().collect();
    let extra = &got[got.len() - headers.len()..];
    for ((name, value), (gname, gvalue)) in headers.iter().zip(extra) {
        assert_eq!(name, gname);
        assert_eq!(value.trim_ascii().as_bytes(), gvalue.trim_ascii());
    }
}
