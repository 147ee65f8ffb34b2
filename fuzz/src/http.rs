//! Harness for the HTTP fuzz targets: an input's setup block (limits, HEAD or not, chunking,
//! EOF), driving a ResponseReader or RequestReader over chunks, and the invariants every
//! returned message must satisfy.

use crate::Chunks;
use tickwire_codec::http::{Error, Method, RequestReader, ResponseReader, ResponseWriter};

/// Bytes of setup at the start of an HTTP reader input.
pub const HTTP_SETUP_LEN: usize = 6;

/// How an HTTP reader is set up and fed, decoded from the first [`HTTP_SETUP_LEN`] bytes.
#[derive(Debug, Clone, Copy)]
pub struct HttpSetup {
    /// Every response answers a HEAD request (response reader only).
    pub head: bool,
    /// Signal EOF after the last byte.
    pub eof: bool,
    pub max_head: usize,
    pub max_body: usize,
    /// Reader storage size.
    pub capacity: usize,
    pub chunk_seed: u8,
}

impl HttpSetup {
    /// byte 0: bit 0 HEAD, bit 1 EOF at the end; bytes 1-2 max head (u16 LE, 0xFFFF =
    /// default 16 KiB); bytes 3-4 max body (u16 LE, 0xFFFF = unlimited); byte 5 chunk seed.
    /// Storage is 16 KiB.
    pub fn decode(input: &[u8]) -> Option<(HttpSetup, &[u8])> {
        let (h, rest) = input.split_at_checked(HTTP_SETUP_LEN)?;
        let lim = |lo: u8, hi: u8, all: usize| match u16::from_le_bytes([lo, hi]) {
            0xFFFF => all,
            n => usize::from(n),
        };
        Some((
            HttpSetup {
                head: h[0] & 1 != 0,
                eof: h[0] & 2 != 0,
                max_head: lim(h[1], h[2], 16 * 1024),
                max_body: lim(h[3], h[4], usize::MAX),
                capacity: 16 * 1024,
                chunk_seed: h[5],
            },
            rest,
        ))
    }

    /// The setup block for no limits beyond the 16 KiB buffer.
    pub fn encode_default(head: bool, eof: bool) -> [u8; HTTP_SETUP_LEN] {
        [
            u8::from(head) | (u8::from(eof) << 1),
            0xFF,
            0xFF,
            0xFF,
            0xFF,
            7,
        ]
    }
}

/// A received message, owned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Msg {
    /// Status (responses) or 0 (requests).
    pub status: u16,
    /// Reason (responses) or method and target (requests).
    pub line: String,
    pub headers: Vec<(String, Vec<u8>)>,
    pub body: Vec<u8>,
    pub trailers: Vec<(String, Vec<u8>)>,
    /// The message's own bytes as received (only the head for a chunked body, which is
    /// decoded in place).
    pub raw: Vec<u8>,
}

/// How a run ended after all input was offered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HttpEnd {
    /// Everything consumed; more bytes are needed (or nothing is pending).
    NeedMore,
    /// The reader refused to take more bytes though it had no message ready.
    Full,
    /// A final error.
    Failed(Error),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpRun {
    pub msgs: Vec<Msg>,
    pub end: HttpEnd,
}

fn within(outer: &[u8], inner: &[u8]) -> bool {
    let (o, i) = (outer.as_ptr() as usize, inner.as_ptr() as usize);
    inner.is_empty() || (i >= o && i + inner.len() <= o + outer.len())
}

/// Where `needle` occurs in `hay` at or after `from`.
fn find_from(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    if needle.is_empty() {
        return Some(from);
    }
    hay.get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| p + from)
}

/// Checks shared by requests and responses: body within limits and within the message,
/// header spans within the message, `body_str` agrees with UTF-8 validity, and the
/// message's bytes are a contiguous part of the input after the previous message.
#[allow(clippy::too_many_arguments)]
fn check_common(
    raw: &[u8],
    headers: &[(&str, &[u8])],
    body: &[u8],
    body_str: Result<&str, Error>,
    max_body: usize,
    data: &[u8],
    pos: &mut usize,
) -> usize {
    assert!(
        body.len() <= max_body,
        "body {} over the limit {max_body}",
        body.len()
    );
    for (n, v) in headers {
        assert!(within(raw, n.as_bytes()), "header name outside the message");
        assert!(within(raw, v), "header value outside the message");
    }
    assert!(within(raw, body), "body outside the message");
    match body_str {
        Ok(s) => assert_eq!(s.as_bytes(), body, "body_str differs from body"),
        Err(_) => assert!(
            core::str::from_utf8(body).is_err(),
            "body_str refused UTF-8"
        ),
    }
    // A chunked body is decoded in place: then only the head (up to the body) is as sent.
    let chunked = headers
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case("transfer-encoding"));
    let sent = if chunked {
        // Empty lines before the status line are skipped (as httparse does).
        let start = raw
            .iter()
            .position(|&b| b != b'\r' && b != b'\n')
            .unwrap_or(raw.len());
        let end = |pat: &[u8]| find_from(raw, pat, start).map(|p| p + pat.len());
        let head = match (end(b"\n\r\n"), end(b"\n\n")) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b).expect("a head without its blank line"),
        };
        &raw[..head]
    } else {
        raw
    };
    let at = find_from(data, sent, *pos)
        .expect("message bytes are not a contiguous part of the input after the previous message");
    *pos = at + sent.len();
    sent.len()
}

fn owned(
    headers: impl Iterator<Item = (impl AsRef<str>, impl AsRef<[u8]>)>,
) -> Vec<(String, Vec<u8>)> {
    headers
        .map(|(n, v)| (n.as_ref().to_owned(), v.as_ref().to_vec()))
        .collect()
}

/// Drive a ResponseReader over `data` fed in `chunks` (storage pre-filled with `fill`).
pub fn run_responses(setup: &HttpSetup, data: &[u8], chunks: Chunks, fill: u8) -> HttpRun {
    let mut r: ResponseReader<Vec<u8>> = ResponseReader::new(vec![fill; setup.capacity])
        .max_head_size(setup.max_head)
        .max_body_size(setup.max_body);
    let method = if setup.head {
        Method::Head
    } else {
        Method::Get
    };
    r.expect(method);
    let mut next = chunks.sizes();
    let mut msgs = Vec::new();
    let (mut fed, mut pos) = (0usize, 0usize);
    let mut eof_sent = false;
    loop {
        loop {
            match r.advance() {
                Ok(true) => {
                    let resp = r.response().expect("advance said a response is ready");
                    let headers: Vec<(&str, &[u8])> = resp.headers().iter().collect();
                    let raw = resp.as_bytes();
                    let sent = check_common(
                        raw,
                        &headers,
                        resp.body(),
                        resp.body_str(),
                        setup.max_body,
                        data,
                        &mut pos,
                    );
                    let s = resp.status();
                    if setup.head || (100..200).contains(&s) || s == 204 || s == 304 {
                        assert!(
                            resp.body().is_empty(),
                            "a body on a {s} response (HEAD: {})",
                            setup.head
                        );
                    }
                    msgs.push(Msg {
                        status: s,
                        line: resp.reason().to_owned(),
                        headers: owned(headers.into_iter()),
                        body: resp.body().to_vec(),
                        trailers: owned(resp.trailers().iter()),
                        raw: raw[..sent].to_vec(),
                    });
                    r.expect(method);
                }
                Ok(false) => break,
                Err(e) => {
                    return HttpRun {
                        msgs,
                        end: HttpEnd::Failed(e),
                    };
                }
            }
        }
        if fed == data.len() {
            if setup.eof && !eof_sent {
                r.signal_eof();
                eof_sent = true;
                continue;
            }
            return HttpRun {
                msgs,
                end: HttpEnd::NeedMore,
            };
        }
        let want = next().min(data.len() - fed);
        let n = r.feed(&data[fed..fed + want]);
        assert!(n <= want, "feed took {n} of {want}");
        if n == 0 {
            return HttpRun {
                msgs,
                end: HttpEnd::Full,
            };
        }
        fed += n;
    }
}

/// Drive a RequestReader over `data` fed in `chunks` (storage pre-filled with `fill`).
/// Beyond the common checks: no request has both Content-Length and chunked framing, and
/// a request's body never extends past its own bytes.
pub fn run_requests(setup: &HttpSetup, data: &[u8], chunks: Chunks, fill: u8) -> HttpRun {
    let mut r: RequestReader<Vec<u8>> = RequestReader::new(vec![fill; setup.capacity])
        .max_head_size(setup.max_head)
        .max_body_size(setup.max_body);
    let mut next = chunks.sizes();
    let mut msgs = Vec::new();
    let (mut fed, mut pos) = (0usize, 0usize);
    let mut eof_sent = false;
    loop {
        loop {
            match r.poll() {
                Ok(Some(req)) => {
                    let headers: Vec<(&str, &[u8])> = req.headers().iter().collect();
                    let raw = req.as_bytes();
                    let sent = check_common(
                        raw,
                        &headers,
                        req.body(),
                        req.body_str(),
                        setup.max_body,
                        data,
                        &mut pos,
                    );
                    let has_cl = req.header("content-length").is_some();
                    let has_te = req.header("transfer-encoding").is_some();
                    assert!(
                        !(has_cl && has_te),
                        "request accepted with both Content-Length and Transfer-Encoding"
                    );
                    if let Some(cl) = req.header_str("content-length") {
                        let n: usize = cl
                            .trim()
                            .parse()
                            .expect("accepted Content-Length is not a number");
                        assert_eq!(
                            req.body().len(),
                            n,
                            "body length differs from Content-Length"
                        );
                        assert!(
                            raw.ends_with(req.body()),
                            "Content-Length body is not the end of its request"
                        );
                    }
                    if !has_cl && !has_te {
                        assert!(req.body().is_empty(), "a body without framing headers");
                    }
                    msgs.push(Msg {
                        status: 0,
                        line: format!("{} {}", req.method_str(), req.target()),
                        headers: owned(headers.into_iter()),
                        body: req.body().to_vec(),
                        trailers: owned(req.trailers().iter()),
                        raw: raw[..sent].to_vec(),
                    });
                }
                Ok(None) => break,
                Err(e) => {
                    return HttpRun {
                        msgs,
                        end: HttpEnd::Failed(e),
                    };
                }
            }
        }
        if fed == data.len() {
            if setup.eof && !eof_sent {
                r.signal_eof();
                eof_sent = true;
                continue;
            }
            return HttpRun {
                msgs,
                end: HttpEnd::NeedMore,
            };
        }
        let want = next().min(data.len() - fed);
        let n = r.feed(&data[fed..fed + want]);
        assert!(n <= want, "feed took {n} of {want}");
        if n == 0 {
            return HttpRun {
                msgs,
                end: HttpEnd::Full,
            };
        }
        fed += n;
    }
}

/// Headers the writers produce themselves (or refuse), left out when re-serializing.
fn is_framing(name: &str) -> bool {
    ["content-length", "transfer-encoding", "host"]
        .iter()
        .any(|f| name.eq_ignore_ascii_case(f))
}

/// Re-serialize a received response with ResponseWriter and parse it again: same status,
/// reason, non-framing headers and body. Skipped when a header value is not UTF-8 (the
/// writer takes `&str`).
pub fn check_response_roundtrip(m: &Msg, head: bool) {
    let mut hdrs = Vec::new();
    for (n, v) in m.headers.iter().filter(|(n, _)| !is_framing(n)) {
        let Ok(v) = core::str::from_utf8(v) else {
            return;
        };
        hdrs.push((n.as_str(), v));
    }
    let mut buf = vec![0u8; m.raw.len() + m.body.len() + 256];
    let mut w = ResponseWriter::new(&mut buf, m.status, &m.line);
    for (n, v) in &hdrs {
        w = w.header(n, v);
    }
    let s = m.status;
    let n = if (100..200).contains(&s) || s == 204 || s == 304 {
        w.finish()
    } else {
        w.body(&m.body).finish()
    }
    .unwrap_or_else(|e| panic!("ResponseWriter refused a received response: {e:?} {m:?}"));
    // Room for one header more than the reader that took the response (its default
    // 32): a response with the most headers and a close-delimited body comes back
    // with the Content-Length the writer adds.
    let mut r: ResponseReader<Vec<u8>, 64> =
        ResponseReader::new(vec![0; buf.len() + 64]).max_body_size(usize::MAX);
    if head {
        r.expect(Method::Head);
    }
    assert_eq!(r.feed(&buf[..n]), n);
    let again = r
        .poll()
        .unwrap_or_else(|e| panic!("re-serialized response refused: {e:?}"))
        .expect("re-serialized response incomplete");
    assert_eq!(again.status(), m.status);
    assert_eq!(again.reason(), m.line);
    assert_eq!(again.body(), &m.body[..]);
    let got: Vec<(String, Vec<u8>)> = owned(again.headers().iter().filter(|(n, _)| !is_framing(n)));
    let want: Vec<(String, Vec<u8>)> = hdrs
        .iter()
        .map(|(n, v)| ((*n).to_owned(), v.as_bytes().to_vec()))
        .collect();
    assert_eq!(got, want, "headers differ after re-serialization");
}

/// Whole, chunked and byte-at-a-time runs over differently pre-filled storage agree.
pub fn check_all_ways(
    setup: &HttpSetup,
    data: &[u8],
    run: fn(&HttpSetup, &[u8], Chunks, u8) -> HttpRun,
) -> HttpRun {
    let whole = run(setup, data, Chunks::Whole, 0x00);
    let chunked = run(setup, data, Chunks::Seeded(setup.chunk_seed), 0xA5);
    assert_eq!(whole, chunked, "whole vs chunked feeding differ");
    if data.len() <= 4096 {
        let bytes = run(setup, data, Chunks::Bytes, 0xFF);
        assert_eq!(whole, bytes, "whole vs byte-at-a-time feeding differ");
    }
    whole
}

/// The response head parser against httparse (default configuration, 32 headers as the
/// reader's default): every returned response's head parses the same (status, reason,
/// header names and values), and when the reader refused the first final head for its
/// syntax, httparse refuses the same bytes (interim 1xx heads it accepted are skipped).
pub fn check_response_heads_against_httparse(setup: &HttpSetup, run: &HttpRun, data: &[u8]) {
    for m in &run.msgs {
        let mut h = [httparse::EMPTY_HEADER; 32];
        let mut r = httparse::Response::new(&mut h);
        match r.parse(&m.raw) {
            Ok(httparse::Status::Complete(_)) => {}
            other => panic!("httparse refuses a head the reader accepted: {other:?} {m:?}"),
        }
        assert_eq!(r.code, Some(m.status), "status differs from httparse");
        assert_eq!(
            r.reason.unwrap_or(""),
            m.line,
            "reason differs from httparse"
        );
        let theirs: Vec<(String, Vec<u8>)> = owned(r.headers.iter().map(|h| (h.name, h.value)));
        assert_eq!(theirs, m.headers, "headers differ from httparse");
    }
    let syntax = matches!(
        run.end,
        HttpEnd::Failed(
            Error::InvalidVersion
                | Error::InvalidStatus
                | Error::InvalidHeaderName
                | Error::InvalidHeaderValue
                | Error::NulByte
                | Error::ObsFold
                | Error::InvalidNewLine
                | Error::TooManyHeaders
        )
    );
    if !run.msgs.is_empty() || !syntax {
        return;
    }
    let mut at = 0;
    loop {
        let mut h = [httparse::EMPTY_HEADER; 32];
        let mut r = httparse::Response::new(&mut h);
        match r.parse(&data[at..]) {
            Ok(httparse::Status::Complete(n)) => {
                let code = r.code.unwrap_or(0);
                if (100..200).contains(&code) && code != 101 {
                    at += n;
                    continue;
                }
                // A status out of 100..=999 is refused after httparse's syntax.
                if !(100..=999).contains(&code) {
                    assert_eq!(
                        run.end,
                        HttpEnd::Failed(Error::InvalidStatus),
                        "httparse accepts a head whose status the reader refused"
                    );
                    return;
                }
                // Both accept the head: the refusal came from the body (a NUL byte or
                // a bad size in a chunk line), which the reader fed only the heads
                // up to here (and no EOF after them) must not refuse.
                let no_eof = HttpSetup {
                    eof: false,
                    ..*setup
                };
                let heads = run_responses(&no_eof, &data[..at + n], Chunks::Whole, 0x00);
                assert!(
                    !matches!(heads.end, HttpEnd::Failed(_)),
                    "httparse accepts a head the reader refused with {:?}",
                    heads.end
                );
                return;
            }
            Ok(httparse::Status::Partial) => {
                panic!(
                    "httparse wants more of a head the reader refused with {:?}",
                    run.end
                )
            }
            Err(_) => return,
        }
    }
}

/// The request head parser against httparse (default configuration, 32 headers as the
/// reader's default): every returned request's head parses the same (method, target,
/// header names and values), and when the reader refused the first head for its syntax,
/// httparse refuses the same bytes.
pub fn check_request_heads_against_httparse(setup: &HttpSetup, run: &HttpRun, data: &[u8]) {
    for m in &run.msgs {
        let mut h = [httparse::EMPTY_HEADER; 32];
        let mut r = httparse::Request::new(&mut h);
        match r.parse(&m.raw) {
            Ok(httparse::Status::Complete(_)) => {}
            other => panic!("httparse refuses a head the reader accepted: {other:?} {m:?}"),
        }
        let line = format!("{} {}", r.method.unwrap_or(""), r.path.unwrap_or(""));
        assert_eq!(line, m.line, "method or target differs from httparse");
        let theirs: Vec<(String, Vec<u8>)> = owned(r.headers.iter().map(|h| (h.name, h.value)));
        assert_eq!(theirs, m.headers, "headers differ from httparse");
    }
    let syntax = matches!(
        run.end,
        HttpEnd::Failed(
            Error::InvalidRequestLine
                | Error::InvalidVersion
                | Error::InvalidHeaderName
                | Error::InvalidHeaderValue
                | Error::NulByte
                | Error::ObsFold
                | Error::InvalidNewLine
                | Error::TooManyHeaders
        )
    );
    if !run.msgs.is_empty() || !syntax {
        return;
    }
    let mut h = [httparse::EMPTY_HEADER; 32];
    let mut r = httparse::Request::new(&mut h);
    match r.parse(data) {
        Ok(httparse::Status::Complete(n)) => {
            // Both accept the head: the refusal came from the body (a NUL byte or a bad
            // size in a chunk line), which the reader fed only the head (and no EOF after
            // it) must not refuse.
            let no_eof = HttpSetup {
                eof: false,
                ..*setup
            };
            let head = run_requests(&no_eof, &data[..n], Chunks::Whole, 0x00);
            assert!(
                !matches!(head.end, HttpEnd::Failed(_)),
                "httparse accepts a head the reader refused with {:?}",
                head.end
            );
        }
        Ok(httparse::Status::Partial) => panic!(
            "httparse wants more of a head the reader refused with {:?}",
            run.end
        ),
        Err(_) => {}
    }
}
