//! The WebSocket opening handshake (RFC 6455 §4), client and server, sans-IO.
//!
//! No I/O, no allocation, caller buffers, no panics on any input. Parsing follows
//! httparse: `Ok(None)` means "need more bytes"; `Ok(Some(..))` carries `consumed`, the
//! length of the HTTP head — any bytes after it are already WebSocket frames.
//!
//! - Client: [`ClientHandshake::encode`] writes the request,
//!   [`ClientHandshake::check_response`] validates the server's answer.
//! - Server: [`parse_request`] validates a request, [`write_accept`] writes the
//!   `101 Switching Protocols`, [`write_reject`] writes a refusal.
//!
//! Header names and values we are asked to write are validated (names must be RFC 9110
//! tokens; values must not contain CR, LF, NUL or other control bytes except HTAB), so
//! caller input cannot inject headers.

pub mod base64;
mod client;
mod server;

pub use client::{ClientHandshake, ClientResponse, MAX_OFFERED_PROTOCOLS_LEN, ResponseCheck};
#[cfg(feature = "deflate")]
pub use server::write_accept_deflate;
pub use server::{
    UpgradeRequest, parse_request, parse_request_with_limit, reject_status, write_accept,
    write_refusal, write_reject,
};

use core::fmt;

/// The GUID RFC 6455 appends to `Sec-WebSocket-Key` before hashing.
pub const GUID: &str = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/// Default limit on the size of a request or response head, in bytes.
pub const DEFAULT_MAX_HEAD_LEN: usize = 8 * 1024;

/// Most header fields a request or response head may carry.
pub const MAX_HEADERS: usize = 32;

/// `base64(SHA-1(key ++ GUID))` — the 28 ASCII bytes of `Sec-WebSocket-Accept`.
///
/// SHA-1 is the `sha1_smol` crate's and base64 the `base64` crate's (both no_std, no
/// alloc, no dependency of their own). They replaced our own copies (233 and 187 lines)
/// on 2026-11-28, measured with callgrind on x86-64 (release, instructions per key, the
/// loop's own cost taken out): 3,397 with them against 5,786 with ours. RustCrypto's
/// `sha1` 0.11 took 3,292 with its portable code, and with SHA-NI a tenth of our wall
/// time (180 ns against 1,730 ns, best of 7 on a busy machine), but its SHA-NI code
/// does not compile for `x86_64-unknown-none` (LLVM: "Do not know how to split the
/// result of this operator", as zlib-rs's SIMD there) unless the final build sets
/// `--cfg sha1_backend="soft"`, which a library cannot set for its users; the codec and
/// the bypass crate must build there. The accept key is computed once per connection.
/// (`sha1_smol` is BSD-3-Clause, `base64` MIT OR Apache-2.0.)
pub fn accept_key(sec_websocket_key: &[u8]) -> [u8; 28] {
    let mut hash = sha1_smol::Sha1::new();
    hash.update(sec_websocket_key);
    hash.update(GUID.as_bytes());
    let digest = hash.digest().bytes();
    let mut out = [0u8; 28];
    // 20 bytes always encode to exactly 28; cannot fail.
    let written = base64::encode(&digest, &mut out);
    debug_assert_eq!(written, Ok(28));
    out
}

/// Why a handshake could not be written, or was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum HandshakeError {
    /// The output buffer cannot hold the message.
    BufferTooSmall,
    /// The head exceeds the size limit, or has more than [`MAX_HEADERS`] headers.
    HeaderTooLarge,
    /// Not valid HTTP/1.x (httparse error, or a non-UTF-8 path, host or protocol).
    Malformed,
    /// The server answered with this status instead of 101.
    BadStatus(u16),
    /// No `Upgrade` header with the token `websocket`.
    MissingUpgrade,
    /// No `Connection` header with the token `upgrade`.
    MissingConnectionUpgrade,
    /// `Sec-WebSocket-Accept` missing, repeated or wrong.
    BadAccept,
    /// No `Sec-WebSocket-Key`.
    MissingKey,
    /// `Sec-WebSocket-Key` repeated or not the base64 of exactly 16 bytes.
    BadKey,
    /// `Sec-WebSocket-Version` missing, repeated or not 13.
    BadVersion,
    /// Request method is not GET.
    BadMethod,
    /// Not HTTP/1.1.
    BadHttpVersion,
    /// The server chose a subprotocol we did not offer (or one when none was offered,
    /// or more than one); or a server tried to accept with one the client did not offer.
    ProtocolMismatch,
    /// A header name or value we were asked to write is invalid (CR/LF/NUL/control
    /// bytes, non-token name, non-token subprotocol, or a name the handshake writes itself).
    InvalidHeader,
    /// The request path does not start with `/` or contains whitespace/control bytes.
    InvalidPath,
    /// The request has no `Host` header.
    MissingHost,
    /// The server answered with `Sec-WebSocket-Extensions` although we offered none.
    ExtensionMismatch,
    /// Server: the application refused the request with this status
    /// ([`Answer::Refuse`](crate::ws::Answer::Refuse); the answer was queued).
    Refused(u16),
}

impl fmt::Display for HandshakeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let msg = match self {
            Self::BufferTooSmall => "output buffer too small",
            Self::HeaderTooLarge => "handshake head too large or too many headers",
            Self::Malformed => "malformed HTTP head",
            Self::BadStatus(code) => return write!(f, "unexpected HTTP status {code}"),
            Self::MissingUpgrade => "missing `Upgrade: websocket`",
            Self::MissingConnectionUpgrade => "missing `Connection: upgrade`",
            Self::BadAccept => "missing or wrong Sec-WebSocket-Accept",
            Self::MissingKey => "missing Sec-WebSocket-Key",
            Self::BadKey => "Sec-WebSocket-Key is not base64 of 16 bytes",
            Self::BadVersion => "Sec-WebSocket-Version is not 13",
            Self::BadMethod => "method is not GET",
            Self::BadHttpVersion => "not HTTP/1.1",
            Self::ProtocolMismatch => "subprotocol was not offered",
            Self::InvalidHeader => "invalid header name or value",
            Self::InvalidPath => "invalid request path",
            Self::MissingHost => "missing Host header",
            Self::ExtensionMismatch => "server chose an extension that was not offered",
            Self::Refused(code) => return write!(f, "refused with HTTP status {code}"),
        };
        f.write_str(msg)
    }
}

impl core::error::Error for HandshakeError {}

// ---- helpers shared by client.rs and server.rs ----

/// Strip optional whitespace (SP / HTAB) from both ends.
pub(crate) fn trim_ows(mut v: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = v {
        v = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = v {
        v = rest;
    }
    v
}

/// The comma-separated, trimmed, non-empty elements of a list-valued header.
fn list_items(value: &[u8]) -> impl Iterator<Item = &[u8]> {
    value
        .split(|&b| b == b',')
        .map(trim_ows)
        .filter(|s| !s.is_empty())
}

/// Does any `name` header contain `token` (ASCII case-insensitive) in its list?
fn has_token(headers: &[(&str, &[u8])], name: &str, token: &str) -> bool {
    headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case(name))
        .flat_map(|&(_, v)| list_items(v))
        .any(|item| item.eq_ignore_ascii_case(token.as_bytes()))
}

/// The single `name` header's trimmed value: `Ok(None)` if absent, `Err(repeated)` if
/// it appears more than once.
fn single<'b>(
    headers: &[(&'b str, &'b [u8])],
    name: &str,
    repeated: HandshakeError,
) -> Result<Option<&'b [u8]>, HandshakeError> {
    let mut found = None;
    for &(n, v) in headers {
        if n.eq_ignore_ascii_case(name) {
            if found.is_some() {
                return Err(repeated);
            }
            found = Some(trim_ows(v));
        }
    }
    Ok(found)
}

/// First `name` header, case-insensitive.
fn lookup<'b>(headers: &[(&'b str, &'b [u8])], name: &str) -> Option<&'b [u8]> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|&(_, v)| v)
}

/// RFC 9110 `tchar`.
pub(crate) const fn is_tchar(b: u8) -> bool {
    matches!(b,
        b'!' | b'#' | b'$' | b'%' | b'&' | b'\'' | b'*' | b'+' | b'-' | b'.' |
        b'^' | b'_' | b'`' | b'|' | b'~' | b'0'..=b'9' | b'a'..=b'z' | b'A'..=b'Z')
}

/// RFC 9110 `token`: one or more `tchar`.
fn is_token(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(is_tchar)
}

/// A field value we may write: no CR, LF, NUL, DEL or other control bytes but HTAB.
fn is_field_value(s: &str) -> bool {
    s.bytes().all(|b| b == b'\t' || (b >= 0x20 && b != 0x7F))
}

/// Validate caller-supplied extra headers: token names, safe values, and none of the
/// `reserved` names the handshake writes itself.
fn check_extra_headers(headers: &[(&str, &str)], reserved: &[&str]) -> Result<(), HandshakeError> {
    for &(name, value) in headers {
        if !is_token(name)
            || !is_field_value(value)
            || reserved.iter().any(|r| r.eq_ignore_ascii_case(name))
        {
            return Err(HandshakeError::InvalidHeader);
        }
    }
    Ok(())
}

/// Parse with httparse on at most `max_len` bytes, mapping its outcome to ours.
/// `Ok(None)`: partial and still under the limit.
fn head_status(
    parsed: Result<httparse::Status<usize>, httparse::Error>,
    available: usize,
    max_len: usize,
) -> Result<Option<usize>, HandshakeError> {
    match parsed {
        Ok(httparse::Status::Complete(n)) => Ok(Some(n)),
        Ok(httparse::Status::Partial) if available >= max_len => {
            Err(HandshakeError::HeaderTooLarge)
        }
        Ok(httparse::Status::Partial) => Ok(None),
        Err(httparse::Error::TooManyHeaders) => Err(HandshakeError::HeaderTooLarge),
        Err(httparse::Error::Version) => Err(HandshakeError::BadHttpVersion),
        Err(_) => Err(HandshakeError::Malformed),
    }
}

/// Copy httparse's headers into our fixed list.
fn collect_headers<'b>(
    parsed: &[httparse::Header<'b>],
) -> Result<heapless::Vec<(&'b str, &'b [u8]), MAX_HEADERS>, HandshakeError> {
    let mut out = heapless::Vec::new();
    for h in parsed {
        out.push((h.name, h.value))
            .map_err(|_| HandshakeError::HeaderTooLarge)?;
    }
    Ok(out)
}

/// A bounds-checked writer over a caller buffer.
struct Cursor<'o> {
    out: &'o mut [u8],
    pos: usize,
}

impl<'o> Cursor<'o> {
    fn new(out: &'o mut [u8]) -> Self {
        Self { out, pos: 0 }
    }

    fn put(&mut self, bytes: &[u8]) -> Result<&mut Self, HandshakeError> {
        let end = self
            .pos
            .checked_add(bytes.len())
            .ok_or(HandshakeError::BufferTooSmall)?;
        let dst = self
            .out
            .get_mut(self.pos..end)
            .ok_or(HandshakeError::BufferTooSmall)?;
        dst.copy_from_slice(bytes);
        self.pos = end;
        Ok(self)
    }

    /// `name: value\r\n`
    fn header(&mut self, name: &str, value: &[u8]) -> Result<&mut Self, HandshakeError> {
        self.put(name.as_bytes())?
            .put(b": ")?
            .put(value)?
            .put(b"\r\n")
    }

    fn extra_headers(&mut self, headers: &[(&str, &str)]) -> Result<&mut Self, HandshakeError> {
        for &(name, value) in headers {
            self.header(name, value.as_bytes())?;
        }
        Ok(self)
    }

    fn len(&self) -> usize {
        self.pos
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc6455_section_1_3_vector() {
        assert_eq!(
            &accept_key(b"dGhlIHNhbXBsZSBub25jZQ=="),
            b"s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
        );
    }

    #[test]
    fn tokens_are_case_insensitive_lists() {
        let h: &[(&str, &[u8])] = &[
            ("connection", b"keep-alive, Upgrade"),
            ("UPGRADE", b" WebSocket "),
        ];
        assert!(has_token(h, "Connection", "upgrade"));
        assert!(has_token(h, "upgrade", "websocket"));
        assert!(!has_token(h, "connection", "close"));
        let h: &[(&str, &[u8])] = &[("Connection", b"keep-alive,upgraded")];
        assert!(!has_token(h, "connection", "upgrade"));
    }

    #[test]
    fn validation_helpers() {
        assert!(is_token("X-Foo_1"));
        assert!(!is_token(""));
        assert!(!is_token("X Foo"));
        assert!(!is_token("X:Foo"));
        assert!(is_field_value("a\tb c"));
        assert!(!is_field_value("a\r\nX-Evil: 1"));
        assert!(!is_field_value("a\0"));
        assert_eq!(trim_ows(b" \t a b \t"), b"a b");
        assert_eq!(trim_ows(b"  "), b"");
    }

    #[test]
    fn cursor_never_overruns() {
        let mut buf = [0u8; 4];
        let mut c = Cursor::new(&mut buf);
        assert!(c.put(b"abc").is_ok());
        assert_eq!(c.put(b"de").err(), Some(HandshakeError::BufferTooSmall));
        assert_eq!(c.len(), 3);
    }

    #[test]
    fn display() {
        use std::string::ToString;
        assert_eq!(
            HandshakeError::BadStatus(404).to_string(),
            "unexpected HTTP status 404"
        );
    }
}
