//! Server side of the opening handshake: validate the upgrade request, write the
//! `101 Switching Protocols` answer or a refusal.

use super::{
    Cursor, DEFAULT_MAX_HEAD_LEN, HandshakeError, MAX_HEADERS, base64, check_extra_headers,
    collect_headers, has_token, head_status, is_token, list_items, lookup, single,
};

/// Headers [`write_accept`] writes itself; extra headers may not repeat them.
const RESERVED: &[&str] = &[
    "upgrade",
    "connection",
    "sec-websocket-accept",
    "sec-websocket-protocol",
    "content-length",
    "transfer-encoding",
];

/// A validated client opening request, borrowing the input bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpgradeRequest<'b> {
    /// Length of the HTTP head; bytes after it are WebSocket frames.
    pub consumed: usize,
    /// The request target, as sent (usually origin-form, `/path?query`).
    pub path: &'b str,
    /// The `Host` header. Always `Some` after a successful parse (Host is required).
    pub host: Option<&'b str>,
    /// The `Sec-WebSocket-Key` value (trimmed; base64 of 16 bytes).
    pub key: &'b [u8],
    headers: heapless::Vec<(&'b str, &'b [u8]), MAX_HEADERS>,
}

impl<'b> UpgradeRequest<'b> {
    /// The first header called `name` (case-insensitive), as raw bytes.
    pub fn header(&self, name: &str) -> Option<&'b [u8]> {
        lookup(&self.headers, name)
    }

    /// All request headers, in order.
    pub fn headers(&self) -> impl Iterator<Item = (&'b str, &'b [u8])> {
        self.headers.iter().copied()
    }

    /// Offered subprotocols, trimmed, in order, from all `Sec-WebSocket-Protocol` headers.
    pub fn protocols(&self) -> impl Iterator<Item = &'b str> {
        self.headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case("sec-websocket-protocol"))
            .flat_map(|&(_, v)| list_items(v))
            // UTF-8 was checked by the parser; nothing is dropped here.
            .filter_map(|p| core::str::from_utf8(p).ok())
    }

    /// The `Sec-WebSocket-Accept` value answering this request.
    pub fn accept_key(&self) -> [u8; 28] {
        super::accept_key(self.key)
    }

    /// The permessage-deflate parameters `config` chooses for the first
    /// acceptable offer of this request's `Sec-WebSocket-Extensions` headers
    /// (feature `deflate`; see [`DeflateConfig::accept`](crate::ws::deflate::DeflateConfig::accept));
    /// `None`: go on without compression. Answer with [`write_accept_deflate`].
    ///
    /// ```
    /// use tickwire_codec::ws::deflate::DeflateConfig;
    /// use tickwire_codec::ws::handshake::{ClientHandshake, parse_request, write_accept_deflate};
    ///
    /// // Client: offer permessage-deflate.
    /// let hs = ClientHandshake::new("feed.example", "/ws", [7; 16]).deflate(DeflateConfig::default());
    /// let mut req = [0u8; 512];
    /// let n = hs.encode(&mut req).unwrap();
    /// // Server: choose from the offer (a fan-out server insists on no context takeover).
    /// let parsed = parse_request(&req[..n]).unwrap().unwrap();
    /// let chosen = parsed.deflate(&DeflateConfig::fan_out()).unwrap();
    /// assert!(chosen.server_no_context_takeover);
    /// let mut resp = [0u8; 512];
    /// let m = write_accept_deflate(&parsed, None, Some(&chosen), &[], &mut resp).unwrap();
    /// // Client: the parameters both sides now use.
    /// let got = hs.check_response(&resp[..m]).unwrap().unwrap();
    /// assert_eq!(got.deflate(), Some(chosen));
    /// ```
    #[cfg(feature = "deflate")]
    pub fn deflate(
        &self,
        config: &crate::ws::deflate::DeflateConfig,
    ) -> Option<crate::ws::deflate::Negotiated> {
        config.accept(
            self.headers
                .iter()
                .filter(|(n, _)| n.eq_ignore_ascii_case("sec-websocket-extensions"))
                .map(|&(_, v)| v),
        )
    }
}

/// [`parse_request_with_limit`] with [`DEFAULT_MAX_HEAD_LEN`].
pub fn parse_request(bytes: &[u8]) -> Result<Option<UpgradeRequest<'_>>, HandshakeError> {
    parse_request_with_limit(bytes, DEFAULT_MAX_HEAD_LEN)
}

/// Parse a client's opening request. `Ok(None)`: need more bytes. A head longer than
/// `max_len`, or with more than [`MAX_HEADERS`] headers, is `HeaderTooLarge`.
///
/// Checks, in order: method GET (`BadMethod`), HTTP/1.1 (`BadHttpVersion`), exactly one
/// `Host` (`MissingHost`; repeated: `Malformed`), `Upgrade` has the token `websocket`,
/// `Connection` has the token `upgrade` (case-insensitive lists), exactly one
/// `Sec-WebSocket-Key` (`MissingKey`) that is the base64 of exactly 16 bytes (`BadKey`),
/// exactly one `Sec-WebSocket-Version: 13` (`BadVersion`), UTF-8 subprotocol offers.
pub fn parse_request_with_limit(
    bytes: &[u8],
    max_len: usize,
) -> Result<Option<UpgradeRequest<'_>>, HandshakeError> {
    let window = bytes.get(..max_len).unwrap_or(bytes);
    let mut raw = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut raw);
    let parsed = req.parse(window);
    let Some(consumed) = head_status(parsed, bytes.len(), max_len)? else {
        return Ok(None);
    };

    if req.method != Some("GET") {
        return Err(HandshakeError::BadMethod);
    }
    if req.version != Some(1) {
        return Err(HandshakeError::BadHttpVersion);
    }
    let path = req.path.ok_or(HandshakeError::Malformed)?;
    let headers = collect_headers(req.headers)?;

    let host =
        single(&headers, "host", HandshakeError::Malformed)?.ok_or(HandshakeError::MissingHost)?;
    let host = core::str::from_utf8(host).map_err(|_| HandshakeError::Malformed)?;
    if !has_token(&headers, "upgrade", "websocket") {
        return Err(HandshakeError::MissingUpgrade);
    }
    if !has_token(&headers, "connection", "upgrade") {
        return Err(HandshakeError::MissingConnectionUpgrade);
    }
    let key = single(&headers, "sec-websocket-key", HandshakeError::BadKey)?
        .ok_or(HandshakeError::MissingKey)?;
    if base64::decode(key, &mut [0u8; 16]) != Ok(16) {
        return Err(HandshakeError::BadKey);
    }
    if single(
        &headers,
        "sec-websocket-version",
        HandshakeError::BadVersion,
    )? != Some(b"13")
    {
        return Err(HandshakeError::BadVersion);
    }
    let offers_utf8 = headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case("sec-websocket-protocol"))
        .all(|&(_, v)| core::str::from_utf8(v).is_ok());
    if !offers_utf8 {
        return Err(HandshakeError::Malformed);
    }

    Ok(Some(UpgradeRequest {
        consumed,
        path,
        host: Some(host),
        key,
        headers,
    }))
}

/// Write the `101 Switching Protocols` answer to `req` into `out`; returns its length.
///
/// `protocol`, if any, must be an RFC 9110 token (`InvalidHeader`) and one of
/// [`UpgradeRequest::protocols`] (`ProtocolMismatch`). Extra `headers` are validated
/// (`InvalidHeader`) and may not repeat the headers written here. Validation happens
/// before anything is written.
pub fn write_accept(
    req: &UpgradeRequest<'_>,
    protocol: Option<&str>,
    headers: &[(&str, &str)],
    out: &mut [u8],
) -> Result<usize, HandshakeError> {
    accept_with(req, protocol, None, headers, out)
}

/// [`write_accept`] that also answers permessage-deflate (feature `deflate`)
/// with `deflate`'s [`response`](crate::ws::deflate::Negotiated::response),
/// as [`UpgradeRequest::deflate`] chose it; extra `headers` may then not carry
/// `Sec-WebSocket-Extensions`. `None` is [`write_accept`].
#[cfg(feature = "deflate")]
pub fn write_accept_deflate(
    req: &UpgradeRequest<'_>,
    protocol: Option<&str>,
    deflate: Option<&crate::ws::deflate::Negotiated>,
    headers: &[(&str, &str)],
    out: &mut [u8],
) -> Result<usize, HandshakeError> {
    let answer = deflate.map(|n| n.response());
    accept_with(
        req,
        protocol,
        answer.as_ref().map(|a| a.as_bytes()),
        headers,
        out,
    )
}

/// The 101 answer, with `extensions` as its `Sec-WebSocket-Extensions` if any.
fn accept_with(
    req: &UpgradeRequest<'_>,
    protocol: Option<&str>,
    extensions: Option<&[u8]>,
    headers: &[(&str, &str)],
    out: &mut [u8],
) -> Result<usize, HandshakeError> {
    if extensions.is_some() {
        check_extra_headers(headers, &["sec-websocket-extensions"])?;
    }
    if let Some(p) = protocol {
        if !is_token(p) {
            return Err(HandshakeError::InvalidHeader);
        }
        if !req.protocols().any(|offered| offered == p) {
            return Err(HandshakeError::ProtocolMismatch);
        }
    }
    check_extra_headers(headers, RESERVED)?;

    let mut w = Cursor::new(out);
    w.put(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n")?
        .header("Sec-WebSocket-Accept", &req.accept_key())?;
    if let Some(p) = protocol {
        w.header("Sec-WebSocket-Protocol", p.as_bytes())?;
    }
    if let Some(e) = extensions {
        w.header("Sec-WebSocket-Extensions", e)?;
    }
    w.extra_headers(headers)?.put(b"\r\n")?;
    Ok(w.len())
}

/// Status line and status-specific headers of a refusal.
fn reject_head(err: HandshakeError) -> (u16, &'static [u8]) {
    match err {
        // RFC 6455 §4.2.2 / §4.4: say which version we speak. RFC 9110 §15.5.22 and §7.8:
        // a 426 carries Upgrade, which needs the `upgrade` connection option.
        HandshakeError::BadVersion => (
            426,
            b"HTTP/1.1 426 Upgrade Required\r\nUpgrade: websocket\r\n\
              Sec-WebSocket-Version: 13\r\nConnection: Upgrade, close\r\n",
        ),
        // RFC 9110 §15.5.6: a 405 must list the allowed methods.
        HandshakeError::BadMethod => (
            405,
            b"HTTP/1.1 405 Method Not Allowed\r\nAllow: GET\r\nConnection: close\r\n",
        ),
        // RFC 6585 §5.
        HandshakeError::HeaderTooLarge => (
            431,
            b"HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n",
        ),
        // Everything else, HTTP/1.0 included (505 is for an unsupported *major* version,
        // RFC 9110 §15.6.6), is a client error.
        _ => (400, b"HTTP/1.1 400 Bad Request\r\nConnection: close\r\n"),
    }
}

/// The status a refusal uses for `err`: 426 Upgrade Required for `BadVersion`
/// (RFC 6455 §4.2.2), 405 Method Not Allowed for `BadMethod` (RFC 9110 §15.5.6),
/// 431 Request Header Fields Too Large for `HeaderTooLarge` (RFC 6585), 400 otherwise.
/// [`HandshakeError::Refused`] is its own status.
pub fn reject_status(err: HandshakeError) -> u16 {
    match err {
        HandshakeError::Refused(status) if (300..=599).contains(&status) => status,
        err => reject_head(err).0,
    }
}

/// Write a refusal for `err` into `out`; returns its length. The status is
/// [`reject_status`]; the response has `Content-Length: 0` and closes the connection.
/// 426 adds `Upgrade: websocket` and `Sec-WebSocket-Version: 13`; 405 adds `Allow: GET`.
/// [`HandshakeError::Refused`] is [`write_refusal`] with no header and no body.
pub fn write_reject(err: HandshakeError, out: &mut [u8]) -> Result<usize, HandshakeError> {
    if let HandshakeError::Refused(status) = err
        && (300..=599).contains(&status)
    {
        return write_refusal(status, &[], b"", out);
    }
    let mut w = Cursor::new(out);
    w.put(reject_head(err).1)?
        .put(b"Content-Length: 0\r\n\r\n")?;
    Ok(w.len())
}

/// Headers [`write_refusal`] writes itself; extra headers may not repeat them.
const REFUSAL_RESERVED: &[&str] = &["content-length", "transfer-encoding", "connection"];

/// Write an application's refusal of an upgrade request into `out`: the status line for
/// `status` (300 to 599, else `InvalidHeader`), the extra `headers` (validated as
/// [`write_accept`]'s; they may not set `Content-Length`, `Transfer-Encoding` or
/// `Connection`), `Connection: close`, `Content-Length` and `body`. Returns its length.
/// Validation happens before anything is written.
///
/// ```
/// use tickwire_codec::ws::handshake::write_refusal;
///
/// let mut out = [0u8; 256];
/// let n = write_refusal(401, &[("WWW-Authenticate", "Bearer")], b"token?", &mut out).unwrap();
/// assert_eq!(
///     &out[..n],
///     b"HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Bearer\r\nConnection: close\r\n\
///       Content-Length: 6\r\n\r\ntoken?"
/// );
/// ```
pub fn write_refusal(
    status: u16,
    headers: &[(&str, &str)],
    body: &[u8],
    out: &mut [u8],
) -> Result<usize, HandshakeError> {
    if !(300..=599).contains(&status) {
        return Err(HandshakeError::InvalidHeader);
    }
    check_extra_headers(headers, REFUSAL_RESERVED)?;
    let digits = [
        b'0' + (status / 100) as u8,
        b'0' + (status / 10 % 10) as u8,
        b'0' + (status % 10) as u8,
    ];
    let mut len = [0u8; 20];
    let at = crate::http::syntax::dec_digits(body.len() as u64, &mut len);
    let mut w = Cursor::new(out);
    w.put(b"HTTP/1.1 ")?
        .put(&digits)?
        .put(b" ")?
        .put(reason_phrase(status).as_bytes())?
        .put(b"\r\n")?
        .extra_headers(headers)?
        .put(b"Connection: close\r\nContent-Length: ")?
        .put(&len[at..])?
        .put(b"\r\n\r\n")?
        .put(body)?;
    Ok(w.len())
}

/// The reason phrase of a refusal status (RFC 9110 §15; clients ignore it).
fn reason_phrase(status: u16) -> &'static str {
    match status {
        301 => "Moved Permanently",
        302 => "Found",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        409 => "Conflict",
        426 => "Upgrade Required",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Refused",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::String;
    use std::vec::Vec;

    /// RFC 6455 §1.3 / §4.1 example request.
    const EXAMPLE: &str = "GET /chat HTTP/1.1\r\n\
        Host: server.example.com\r\n\
        Upgrade: websocket\r\n\
        Connection: Upgrade\r\n\
        Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
        Origin: http://example.com\r\n\
        Sec-WebSocket-Protocol: chat, superchat\r\n\
        Sec-WebSocket-Version: 13\r\n\r\n";

    fn parse(s: &str) -> Result<Option<UpgradeRequest<'_>>, HandshakeError> {
        parse_request(s.as_bytes())
    }

    fn err(s: &str) -> HandshakeError {
        parse(s).unwrap_err()
    }

    #[test]
    fn rfc6455_example_request() {
        let req = parse(EXAMPLE).unwrap().unwrap();
        assert_eq!(req.consumed, EXAMPLE.len());
        assert_eq!(req.path, "/chat");
        assert_eq!(req.host, Some("server.example.com"));
        assert_eq!(req.key, b"dGhlIHNhbXBsZSBub25jZQ==");
        assert_eq!(req.header("ORIGIN"), Some(&b"http://example.com"[..]));
        assert_eq!(req.header("X-Missing"), None);
        assert_eq!(req.protocols().collect::<Vec<_>>(), ["chat", "superchat"]);
        assert_eq!(&req.accept_key(), b"s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
        assert_eq!(req.headers().count(), 7);

        let mut out = [0u8; 256];
        let n = write_accept(&req, Some("chat"), &[], &mut out).unwrap();
        assert_eq!(
            core::str::from_utf8(&out[..n]).unwrap(),
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\
             Sec-WebSocket-Protocol: chat\r\n\r\n"
        );
        for len in 0..n {
            assert_eq!(
                write_accept(&req, Some("chat"), &[], &mut out[..len]),
                Err(HandshakeError::BufferTooSmall)
            );
        }
    }

    #[test]
    fn byte_at_a_time_and_leftover() {
        let mut bytes = String::from(EXAMPLE).into_bytes();
        bytes.extend_from_slice(b"\x81\x85\x00\x00\x00\x00hello");
        let full = parse_request(&bytes).unwrap().unwrap();
        assert_eq!(full.consumed, EXAMPLE.len());
        for end in 0..EXAMPLE.len() {
            assert_eq!(parse_request(&bytes[..end]), Ok(None), "at {end}");
        }
        for end in EXAMPLE.len()..=bytes.len() {
            assert_eq!(parse_request(&bytes[..end]).unwrap().as_ref(), Some(&full));
        }
    }

    #[test]
    fn case_insensitive_tokens_and_protocol_lists() {
        let s = EXAMPLE
            .replace("Upgrade: websocket", "upgrade: WebSocket")
            .replace("Connection: Upgrade", "connection: keep-alive, Upgrade")
            .replace(
                "Sec-WebSocket-Protocol: chat, superchat",
                "sec-websocket-protocol: a ,b\r\nSec-WebSocket-Protocol: ,c,",
            );
        let req = parse(&s).unwrap().unwrap();
        assert_eq!(req.protocols().collect::<Vec<_>>(), ["a", "b", "c"]);
        let s = EXAMPLE.replace(
            "Connection: Upgrade",
            "Connection: keep-alive\r\nConnection: upgrade",
        );
        assert!(parse(&s).unwrap().is_some());
    }

    #[test]
    fn every_rejection() {
        let cases: &[(&str, &str, HandshakeError)] = &[
            ("GET /chat", "POST /chat", HandshakeError::BadMethod),
            ("GET /chat", "get /chat", HandshakeError::BadMethod),
            ("HTTP/1.1", "HTTP/1.0", HandshakeError::BadHttpVersion),
            ("HTTP/1.1", "HTTP/2.0", HandshakeError::BadHttpVersion),
            (
                "Host: server.example.com\r\n",
                "",
                HandshakeError::MissingHost,
            ),
            (
                "Host: server.example.com\r\n",
                "Host: a\r\nHost: b\r\n",
                HandshakeError::Malformed,
            ),
            ("Upgrade: websocket\r\n", "", HandshakeError::MissingUpgrade),
            (
                "Upgrade: websocket",
                "Upgrade: websockets",
                HandshakeError::MissingUpgrade,
            ),
            (
                "Connection: Upgrade\r\n",
                "",
                HandshakeError::MissingConnectionUpgrade,
            ),
            (
                "Connection: Upgrade",
                "Connection: keep-alive",
                HandshakeError::MissingConnectionUpgrade,
            ),
            (
                "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n",
                "",
                HandshakeError::MissingKey,
            ),
            (
                "dGhlIHNhbXBsZSBub25jZQ==",
                "dGhlIHNhbXBsZSBub25jZQ",
                HandshakeError::BadKey,
            ),
            (
                "dGhlIHNhbXBsZSBub25jZQ==",
                "dGhlIHNhbXBsZSBub25jZSE=",
                HandshakeError::BadKey,
            ),
            (
                "dGhlIHNhbXBsZSBub25jZQ==",
                "dGhlIHNhbXBsZSBub25j",
                HandshakeError::BadKey,
            ),
            (
                "dGhlIHNhbXBsZSBub25jZQ==",
                "dGhlIHNhbXBsZSBub25jZQ==dGhl",
                HandshakeError::BadKey,
            ),
            (
                "dGhlIHNhbXBsZSBub25jZQ==",
                "dGhlIHNhbXBsZSBub25j*Q==",
                HandshakeError::BadKey,
            ),
            ("dGhlIHNhbXBsZSBub25jZQ==", "", HandshakeError::BadKey),
            (
                "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n",
                "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n",
                HandshakeError::BadKey,
            ),
            (
                "Sec-WebSocket-Version: 13",
                "Sec-WebSocket-Version: 8",
                HandshakeError::BadVersion,
            ),
            (
                "Sec-WebSocket-Version: 13",
                "Sec-WebSocket-Version: 13, 8",
                HandshakeError::BadVersion,
            ),
            (
                "Sec-WebSocket-Version: 13\r\n",
                "",
                HandshakeError::BadVersion,
            ),
            (
                "Sec-WebSocket-Version: 13\r\n",
                "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Version: 13\r\n",
                HandshakeError::BadVersion,
            ),
            ("Origin: http", "Origin : http", HandshakeError::Malformed),
        ];
        for &(from, to, want) in cases {
            let s = EXAMPLE.replacen(from, to, 1);
            assert_ne!(s, EXAMPLE);
            assert_eq!(err(&s), want, "{from:?} -> {to:?}");
        }
        // Non-UTF-8 bytes in the Host value or a subprotocol offer.
        for from in ["server.example.com", "superchat"] {
            let mut b = EXAMPLE.replace(from, "\u{fffd}").into_bytes();
            let at = b
                .windows(3)
                .position(|w| w == "\u{fffd}".as_bytes())
                .unwrap();
            b[at] = 0xFF;
            assert_eq!(parse_request(&b), Err(HandshakeError::Malformed), "{from}");
        }
    }

    #[test]
    fn oversize_head_and_too_many_headers() {
        assert!(
            parse_request_with_limit(EXAMPLE.as_bytes(), EXAMPLE.len())
                .unwrap()
                .is_some()
        );
        assert_eq!(
            parse_request_with_limit(EXAMPLE.as_bytes(), EXAMPLE.len() - 1),
            Err(HandshakeError::HeaderTooLarge)
        );
        assert_eq!(
            parse_request_with_limit(&EXAMPLE.as_bytes()[..99], 100),
            Ok(None)
        );
        assert_eq!(
            parse_request_with_limit(&EXAMPLE.as_bytes()[..100], 100),
            Err(HandshakeError::HeaderTooLarge)
        );
        let pad = std::format!("X-Pad: {}\r\n\r\n", "a".repeat(DEFAULT_MAX_HEAD_LEN));
        let big = EXAMPLE.replace("\r\n\r\n", &std::format!("\r\n{pad}"));
        assert_eq!(err(&big), HandshakeError::HeaderTooLarge);

        let fill = |n: usize| -> String {
            let extra: String = (0..n).map(|i| std::format!("X-{i}: v\r\n")).collect();
            EXAMPLE.replace("\r\n\r\n", &std::format!("\r\n{extra}\r\n"))
        };
        assert!(parse(&fill(MAX_HEADERS - 7)).unwrap().is_some());
        assert_eq!(err(&fill(MAX_HEADERS - 6)), HandshakeError::HeaderTooLarge);
    }

    #[test]
    fn accept_validates_protocol_and_headers() {
        let req = parse(EXAMPLE).unwrap().unwrap();
        let mut out = [0u8; 512];
        assert_eq!(
            write_accept(&req, Some("other"), &[], &mut out),
            Err(HandshakeError::ProtocolMismatch)
        );
        assert_eq!(
            write_accept(&req, Some("chat\r\nX: 1"), &[], &mut out),
            Err(HandshakeError::InvalidHeader)
        );
        assert_eq!(
            write_accept(&req, Some(""), &[], &mut out),
            Err(HandshakeError::InvalidHeader)
        );
        let bad: &[&[(&str, &str)]] = &[
            &[("Set-Cookie", "a=b\r\nX-Evil: 1")],
            &[("Set-Cookie", "a\0")],
            &[("Bad Name", "v")],
            &[("Bad\nName", "v")],
            &[("Sec-WebSocket-Accept", "x")],
            &[("upgrade", "h2c")],
        ];
        for h in bad {
            assert_eq!(
                write_accept(&req, None, h, &mut out),
                Err(HandshakeError::InvalidHeader),
                "{h:?}"
            );
        }
        let n = write_accept(
            &req,
            None,
            &[("Set-Cookie", "a=b"), ("Server", "tw")],
            &mut out,
        )
        .unwrap();
        assert!(out[..n].ends_with(b"Set-Cookie: a=b\r\nServer: tw\r\n\r\n"));
    }

    #[test]
    fn rejections() {
        let mut out = [0u8; 256];
        let text = |e, out: &mut [u8]| {
            let n = write_reject(e, out).unwrap();
            String::from_utf8(out[..n].to_vec()).unwrap()
        };
        assert_eq!(
            text(HandshakeError::BadVersion, &mut out),
            "HTTP/1.1 426 Upgrade Required\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n\
             Connection: Upgrade, close\r\nContent-Length: 0\r\n\r\n"
        );
        assert_eq!(
            text(HandshakeError::BadKey, &mut out),
            "HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
        );
        assert_eq!(
            text(HandshakeError::BadMethod, &mut out),
            "HTTP/1.1 405 Method Not Allowed\r\nAllow: GET\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
        );
        assert!(text(HandshakeError::HeaderTooLarge, &mut out).starts_with("HTTP/1.1 431 "));
        assert_eq!(reject_status(HandshakeError::BadVersion), 426);
        assert_eq!(reject_status(HandshakeError::BadMethod), 405);
        assert_eq!(reject_status(HandshakeError::HeaderTooLarge), 431);
        for e in [
            HandshakeError::BadHttpVersion,
            HandshakeError::MissingKey,
            HandshakeError::Malformed,
        ] {
            assert_eq!(reject_status(e), 400);
        }
        // The status line agrees with reject_status, and a short buffer fails cleanly.
        let s = text(HandshakeError::BadVersion, &mut out);
        assert_eq!(
            write_reject(HandshakeError::BadVersion, &mut out[..s.len() - 1]),
            Err(HandshakeError::BufferTooSmall)
        );
        // The refusal parses as an HTTP response.
        let mut hdrs = [httparse::EMPTY_HEADER; 8];
        let mut resp = httparse::Response::new(&mut hdrs);
        assert_eq!(
            resp.parse(s.as_bytes()),
            Ok(httparse::Status::Complete(s.len()))
        );
        assert_eq!(resp.code, Some(426));
    }

    proptest::proptest! {
        #[test]
        fn parse_request_never_panics(
            bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..600),
            max in 0usize..700,
        ) {
            let _ = parse_request(&bytes);
            let _ = parse_request_with_limit(&bytes, max);
        }

        #[test]
        fn parse_request_never_panics_near_valid(
            flips in proptest::collection::vec((0usize..EXAMPLE.len(), proptest::num::u8::ANY), 0..4),
            cut in 0usize..EXAMPLE.len(),
        ) {
            let mut bytes = EXAMPLE.as_bytes().to_vec();
            for (at, b) in flips {
                bytes[at] = b;
            }
            bytes.truncate(EXAMPLE.len() - cut % 16);
            if let Ok(Some(req)) = parse_request(&bytes) {
                let mut out = [0u8; 512];
                let _ = req.accept_key();
                let _ = req.protocols().count();
                let _ = write_accept(&req, req.protocols().next(), &[], &mut out);
            }
        }
    }
}
