//! permessage-deflate negotiation (RFC 7692 §5 and §7.1): what the user asks for
//! ([`DeflateConfig`]), the client's offer, the server's choice among the offers
//! of a `Sec-WebSocket-Extensions` header and its answer, the client's check of
//! that answer, and the outcome both sides read later ([`Negotiated`]).
//!
//! Header syntax (RFC 6455 §9.1): `extension *( "," extension )`, an extension
//! being `token *( ";" token [ "=" ( token / quoted-string ) ] )`; a quoted value
//! must be a token once unescaped (RFC 7692 §7.1). Window bits are a decimal
//! integer from 8 to 15 without leading zeros.

use crate::ws::frame::Role;
use crate::ws::handshake::{is_tchar, trim_ows as trim};

/// The extension's name in `Sec-WebSocket-Extensions`.
pub const EXTENSION_NAME: &str = "permessage-deflate";

/// Smallest LZ77 window RFC 7692 allows (256 bytes).
pub const MIN_WINDOW_BITS: u8 = 8;

/// Largest LZ77 window (32 KiB): no limit.
pub const MAX_WINDOW_BITS: u8 = 15;

/// What one endpoint asks of permessage-deflate. `Option<DeflateConfig>` in a
/// handshake turns the extension on; `None` leaves it off.
///
/// Window bits outside 8..=15 are clamped into that range, a level above 9 is 9.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeflateConfig {
    /// Largest LZ77 window the client compresses with. A client offers it
    /// (`client_max_window_bits`, with this value when below 15); a server asks
    /// for it in its answer when the client offered the parameter (a client
    /// that did not offer it may use 15, which the server then accepts), but
    /// never for 8 unless the client offered 8: zlib-based clients cannot
    /// compress with 8 bits and fail the handshake on it; 8 is asked as 9.
    pub client_max_window_bits: u8,
    /// Largest LZ77 window the server compresses with. A client asks for it
    /// when below 15 (8 asked as 9, which zlib-based servers accept where they
    /// decline 8); a server uses at most this, and at most what was asked.
    pub server_max_window_bits: u8,
    /// The client resets its compressor after every message.
    pub client_no_context_takeover: bool,
    /// The server resets its compressor after every message.
    pub server_no_context_takeover: bool,
    /// Payloads shorter than this many bytes are sent uncompressed (RSV1 clear),
    /// which RFC 7692 always allows. From it up, a message goes out compressed when
    /// that makes it smaller, else as it is (a connection with context takeover then
    /// starts its compressor afresh, so the peer's window stays a superset).
    pub threshold: usize,
    /// zlib compression level, 0 (stored) to 9 (best). The default, 1, is
    /// zlib-rs's quick strategy: on ~100-byte JSON messages with context
    /// takeover it measured about 0.5 µs a message here against 4-7 µs for
    /// levels 2 to 6, for a few bytes more per message.
    pub level: u8,
}

impl Default for DeflateConfig {
    /// No window limits, context takeover both ways, level 1, threshold 64 bytes.
    fn default() -> Self {
        DeflateConfig {
            client_max_window_bits: MAX_WINDOW_BITS,
            server_max_window_bits: MAX_WINDOW_BITS,
            client_no_context_takeover: false,
            server_no_context_takeover: false,
            threshold: 64,
            level: 1,
        }
    }
}

impl DeflateConfig {
    /// A server's settings for fan-out with [`PreparedMessage`](crate::ws::PreparedMessage):
    /// the defaults, and `server_no_context_takeover` insisted on. The server then answers
    /// every offer with `server_no_context_takeover` (RFC 7692 §7.1.1.1 lets a server add
    /// it to an offer that lacks it), so each connection sends the frame a prepared
    /// message compressed once (`PreparedMessage::with_deflate`) instead of compressing
    /// the payload again with its own stream. The cost: a connection's own messages are
    /// compressed without the history of the earlier ones (a few bytes more per small
    /// JSON message).
    ///
    /// ```
    /// use tickwire_codec::ws::deflate::DeflateConfig;
    ///
    /// let cfg = DeflateConfig::fan_out();
    /// assert!(cfg.server_no_context_takeover);
    /// assert_eq!(cfg, DeflateConfig { server_no_context_takeover: true, ..DeflateConfig::default() });
    /// ```
    pub fn fan_out() -> Self {
        DeflateConfig {
            server_no_context_takeover: true,
            ..DeflateConfig::default()
        }
    }
}

const fn clamp_bits(bits: u8) -> u8 {
    if bits < MIN_WINDOW_BITS {
        MIN_WINDOW_BITS
    } else if bits > MAX_WINDOW_BITS {
        MAX_WINDOW_BITS
    } else {
        bits
    }
}

/// The smallest window this side asks the peer to compress with: zlib cannot
/// compress with 8 bits (it refuses a raw 256-byte window), so zlib-based peers
/// decline an offer that asks for 8 (Python websockets' server) or fail on an
/// answer that does (its client, "unsupported client_max_window_bits = 8").
/// A peer may still offer 8 for itself, and this side compresses with 8 when
/// asked (see `Deflater`).
const MIN_ASKED_BITS: u8 = 9;

impl DeflateConfig {
    fn client_bits(&self) -> u8 {
        clamp_bits(self.client_max_window_bits)
    }

    fn server_bits(&self) -> u8 {
        clamp_bits(self.server_max_window_bits)
    }

    /// The client's offer: the value of its `Sec-WebSocket-Extensions` header.
    ///
    /// Always carries `client_max_window_bits` (a client of ours can honour any
    /// window the server asks for), with a value when this config limits it.
    pub fn offer(&self) -> HeaderValue {
        let mut v = HeaderValue::start(
            self.client_no_context_takeover,
            self.server_no_context_takeover,
        );
        v.push("; client_max_window_bits");
        if self.client_bits() < MAX_WINDOW_BITS {
            v.push("=");
            v.push_bits(self.client_bits());
        }
        let server = self.server_bits().max(MIN_ASKED_BITS);
        if server < MAX_WINDOW_BITS {
            v.push("; server_max_window_bits=");
            v.push_bits(server);
        }
        v
    }

    /// Server side: the first acceptable permessage-deflate offer among the
    /// values of every `Sec-WebSocket-Extensions` header of a request, in
    /// order, and the parameters this config chooses for it; `None` when there
    /// is none (the connection then goes on without compression).
    ///
    /// An offer is declined (RFC 7692 §5) when it has an unknown parameter, a
    /// repeated one, a value where none is allowed, a missing or invalid value
    /// (window bits must be 8..=15, without leading zeros, as a token or a
    /// quoted string), or broken syntax; other extensions are skipped.
    /// Answer with [`Negotiated::response`].
    pub fn accept<'h>(&self, headers: impl IntoIterator<Item = &'h [u8]>) -> Option<Negotiated> {
        headers
            .into_iter()
            .flat_map(|h| Split::new(h, b','))
            .filter_map(|element| match parse_element(element) {
                Element::Deflate(p) => Some(p),
                _ => None,
            })
            .map(|offer| self.choose(&offer))
            .next()
    }

    /// The server's parameters for a valid offer.
    fn choose(&self, offer: &Params) -> Negotiated {
        let server = self
            .server_bits()
            .min(offer.server_bits.unwrap_or(MAX_WINDOW_BITS));
        let client = match offer.client_bits {
            Some(hint) => self
                .client_bits()
                .max(MIN_ASKED_BITS)
                .min(hint.unwrap_or(MAX_WINDOW_BITS)),
            // Not offered: the server may not limit the client's window.
            None => MAX_WINDOW_BITS,
        };
        Negotiated {
            client_max_window_bits: client,
            server_max_window_bits: server,
            client_no_context_takeover: offer.client_nct || self.client_no_context_takeover,
            server_no_context_takeover: offer.server_nct || self.server_no_context_takeover,
            answer_client_bits: offer.client_bits.is_some_and(|hint| hint.is_some())
                || client < MAX_WINDOW_BITS,
            answer_server_bits: offer.server_bits.is_some() || server < MAX_WINDOW_BITS,
        }
    }

    /// Client side: check the values of every `Sec-WebSocket-Extensions`
    /// header of the server's answer against the offer this config made
    /// ([`offer`](Self::offer)). `Ok(None)`: the server declined (no
    /// extension header, or only empty ones).
    ///
    /// The answer must be one permessage-deflate element with valid
    /// parameters (as for an offer), a `client_max_window_bits` with a value
    /// no larger than the one offered, and a `server_max_window_bits` no
    /// larger than the one asked for; anything else fails the connection.
    pub fn check_response<'h>(
        &self,
        headers: impl IntoIterator<Item = &'h [u8]>,
    ) -> Result<Option<Negotiated>, NegotiationError> {
        let mut found: Option<Params> = None;
        for element in headers.into_iter().flat_map(|h| Split::new(h, b',')) {
            let params = match parse_element(element) {
                Element::Empty => continue,
                Element::Other => return Err(NegotiationError::NotOffered),
                Element::Invalid(e) => return Err(e),
                Element::Deflate(p) => p,
            };
            if found.is_some() {
                return Err(NegotiationError::Repeated);
            }
            found = Some(params);
        }
        let Some(p) = found else {
            return Ok(None);
        };
        let server = match p.server_bits {
            Some(bits) if bits > self.server_bits().max(MIN_ASKED_BITS) => {
                return Err(NegotiationError::NotOffered);
            }
            Some(bits) => bits,
            None => MAX_WINDOW_BITS,
        };
        let client = match p.client_bits {
            None => self.client_bits(),
            Some(None) => return Err(NegotiationError::InvalidValue),
            Some(Some(bits)) if bits > self.client_bits() => {
                return Err(NegotiationError::NotOffered);
            }
            Some(Some(bits)) => bits,
        };
        Ok(Some(Negotiated {
            client_max_window_bits: client,
            server_max_window_bits: server,
            client_no_context_takeover: p.client_nct || self.client_no_context_takeover,
            server_no_context_takeover: p.server_nct,
            answer_client_bits: p.client_bits.is_some(),
            answer_server_bits: p.server_bits.is_some(),
        }))
    }
}

/// Why a client refuses the server's permessage-deflate answer (the
/// handshake reports it as `HandshakeError::ExtensionMismatch`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum NegotiationError {
    /// An extension, a parameter or a value the client did not offer.
    NotOffered,
    /// A parameter this extension does not define.
    UnknownParameter,
    /// A parameter given twice.
    DuplicateParameter,
    /// A value where none is allowed, a missing one, or one out of 8..=15.
    InvalidValue,
    /// permessage-deflate accepted more than once.
    Repeated,
    /// Not `token *( ";" param )` syntax.
    Malformed,
}

impl core::fmt::Display for NegotiationError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            NegotiationError::NotOffered => "extension parameter not offered",
            NegotiationError::UnknownParameter => "unknown extension parameter",
            NegotiationError::DuplicateParameter => "duplicate extension parameter",
            NegotiationError::InvalidValue => "invalid extension parameter value",
            NegotiationError::Repeated => "permessage-deflate accepted twice",
            NegotiationError::Malformed => "malformed extension header",
        })
    }
}

impl core::error::Error for NegotiationError {}

/// The permessage-deflate parameters both sides agreed on, for the life of
/// the connection. Two are equal when their four public fields are.
#[derive(Debug, Clone, Copy, Eq)]
pub struct Negotiated {
    /// The client compresses with at most this window (the server inflates
    /// with it).
    pub client_max_window_bits: u8,
    /// The server compresses with at most this window.
    pub server_max_window_bits: u8,
    /// The client resets its compressor after each message.
    pub client_no_context_takeover: bool,
    /// The server resets its compressor after each message.
    pub server_no_context_takeover: bool,
    /// The server's answer names `client_max_window_bits`.
    answer_client_bits: bool,
    /// The server's answer names `server_max_window_bits`.
    answer_server_bits: bool,
}

impl PartialEq for Negotiated {
    fn eq(&self, other: &Self) -> bool {
        self.client_max_window_bits == other.client_max_window_bits
            && self.server_max_window_bits == other.server_max_window_bits
            && self.client_no_context_takeover == other.client_no_context_takeover
            && self.server_no_context_takeover == other.server_no_context_takeover
    }
}

impl Negotiated {
    /// Agreed parameters, for tests and for callers that negotiate by other
    /// means. Window bits are clamped to 8..=15.
    ///
    /// ```
    /// use tickwire_codec::ws::deflate::{DeflateConfig, Deflater, Negotiated};
    /// use tickwire_codec::ws::Role;
    ///
    /// // Agreed elsewhere: a 12-bit client window, no context takeover on the server.
    /// let agreed = Negotiated::new(12, 15, false, true);
    /// let client_side = Deflater::for_role(&agreed, Role::Client, &DeflateConfig::default());
    /// assert_eq!(client_side.window_bits(), 12);
    /// ```
    pub fn new(
        client_max_window_bits: u8,
        server_max_window_bits: u8,
        client_no_context_takeover: bool,
        server_no_context_takeover: bool,
    ) -> Self {
        let client = clamp_bits(client_max_window_bits);
        let server = clamp_bits(server_max_window_bits);
        Negotiated {
            client_max_window_bits: client,
            server_max_window_bits: server,
            client_no_context_takeover,
            server_no_context_takeover,
            answer_client_bits: client < MAX_WINDOW_BITS,
            answer_server_bits: server < MAX_WINDOW_BITS,
        }
    }

    /// Window bits and "reset after each message" of what `role` sends.
    pub fn sending(&self, role: Role) -> (u8, bool) {
        match role {
            Role::Client => (self.client_max_window_bits, self.client_no_context_takeover),
            Role::Server => (self.server_max_window_bits, self.server_no_context_takeover),
        }
    }

    /// Window bits and "reset after each message" of what `role` receives.
    pub fn receiving(&self, role: Role) -> (u8, bool) {
        match role {
            Role::Client => self.sending(Role::Server),
            Role::Server => self.sending(Role::Client),
        }
    }

    /// The server's answer: the value of its `Sec-WebSocket-Extensions` header.
    pub fn response(&self) -> HeaderValue {
        let mut v = HeaderValue::start(
            self.client_no_context_takeover,
            self.server_no_context_takeover,
        );
        if self.answer_client_bits {
            v.push("; client_max_window_bits=");
            v.push_bits(self.client_max_window_bits);
        }
        if self.answer_server_bits {
            v.push("; server_max_window_bits=");
            v.push_bits(self.server_max_window_bits);
        }
        v
    }
}

/// A `Sec-WebSocket-Extensions` value written by this module, in a fixed buffer
/// (the longest is 126 bytes).
#[derive(Clone, Copy)]
pub struct HeaderValue {
    buf: [u8; 128],
    len: usize,
}

impl HeaderValue {
    /// The extension's name and the no-context-takeover flags.
    fn start(client_nct: bool, server_nct: bool) -> Self {
        let mut v = HeaderValue {
            buf: [0; 128],
            len: 0,
        };
        v.push(EXTENSION_NAME);
        if client_nct {
            v.push("; client_no_context_takeover");
        }
        if server_nct {
            v.push("; server_no_context_takeover");
        }
        v
    }

    /// Append `s`; every caller's total fits the buffer (see the tests).
    fn push(&mut self, s: &str) {
        let end = (self.len + s.len()).min(self.buf.len());
        let n = end - self.len;
        self.buf[self.len..end].copy_from_slice(&s.as_bytes()[..n]);
        self.len = end;
    }

    fn push_bits(&mut self, bits: u8) {
        const DIGITS: [&str; 8] = ["8", "9", "10", "11", "12", "13", "14", "15"];
        self.push(DIGITS[usize::from(clamp_bits(bits) - MIN_WINDOW_BITS)]);
    }

    /// The value's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    /// The value (ASCII).
    pub fn as_str(&self) -> &str {
        // Only ASCII literals are pushed, whole (every total fits).
        core::str::from_utf8(self.as_bytes()).unwrap_or("")
    }
}

impl core::fmt::Debug for HeaderValue {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        core::fmt::Debug::fmt(self.as_str(), f)
    }
}

impl PartialEq<&str> for HeaderValue {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

// ---- parsing ----

/// The parameters of one permessage-deflate element.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Params {
    server_nct: bool,
    client_nct: bool,
    server_bits: Option<u8>,
    /// `Some(None)`: present without a value (allowed in an offer only).
    client_bits: Option<Option<u8>>,
}

/// One element of an extension list.
#[derive(Debug, PartialEq, Eq)]
enum Element {
    /// Only whitespace (the list syntax allows empty elements).
    Empty,
    /// Another extension (or an unparseable name).
    Other,
    /// permessage-deflate with parameters that are not valid.
    Invalid(NegotiationError),
    /// permessage-deflate with valid parameters.
    Deflate(Params),
}

/// Pieces of `s` between `sep` bytes that are not inside a quoted string.
struct Split<'a> {
    rest: Option<&'a [u8]>,
    sep: u8,
}

impl<'a> Split<'a> {
    fn new(s: &'a [u8], sep: u8) -> Self {
        Split { rest: Some(s), sep }
    }
}

impl<'a> Iterator for Split<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        let s = self.rest?;
        let (mut quoted, mut escaped) = (false, false);
        for (i, &b) in s.iter().enumerate() {
            if quoted {
                if escaped {
                    escaped = false;
                } else if b == b'\\' {
                    escaped = true;
                } else if b == b'"' {
                    quoted = false;
                }
            } else if b == b'"' {
                quoted = true;
            } else if b == self.sep {
                self.rest = s.get(i + 1..);
                return Some(&s[..i]);
            }
        }
        self.rest = None;
        Some(s)
    }
}

fn is_token(s: &[u8]) -> bool {
    !s.is_empty() && s.iter().all(|&b| is_tchar(b))
}

fn parse_element(element: &[u8]) -> Element {
    let mut parts = Split::new(element, b';');
    let name = trim(parts.next().unwrap_or(&[]));
    if name.is_empty() && trim(element).is_empty() {
        return Element::Empty;
    }
    if !name.eq_ignore_ascii_case(EXTENSION_NAME.as_bytes()) {
        return Element::Other;
    }
    let mut p = Params::default();
    for param in parts {
        if let Err(e) = parse_param(param, &mut p) {
            return Element::Invalid(e);
        }
    }
    Element::Deflate(p)
}

/// A parameter's value: absent, or window bits (8..=15), or anything else.
fn parse_param(param: &[u8], p: &mut Params) -> Result<(), NegotiationError> {
    let (name, value) = match param.iter().position(|&b| b == b'=') {
        Some(i) => (trim(&param[..i]), Some(trim(&param[i + 1..]))),
        None => (trim(param), None),
    };
    if !is_token(name) {
        return Err(NegotiationError::Malformed);
    }
    let bits = match value {
        None => None,
        Some(v) => Some(window_bits(v)?),
    };
    let dup = NegotiationError::DuplicateParameter;
    if name.eq_ignore_ascii_case(b"server_no_context_takeover") {
        if p.server_nct {
            return Err(dup);
        }
        if bits.is_some() {
            return Err(NegotiationError::InvalidValue);
        }
        p.server_nct = true;
    } else if name.eq_ignore_ascii_case(b"client_no_context_takeover") {
        if p.client_nct {
            return Err(dup);
        }
        if bits.is_some() {
            return Err(NegotiationError::InvalidValue);
        }
        p.client_nct = true;
    } else if name.eq_ignore_ascii_case(b"server_max_window_bits") {
        if p.server_bits.is_some() {
            return Err(dup);
        }
        p.server_bits = Some(bits.ok_or(NegotiationError::InvalidValue)?);
    } else if name.eq_ignore_ascii_case(b"client_max_window_bits") {
        if p.client_bits.is_some() {
            return Err(dup);
        }
        p.client_bits = Some(bits);
    } else {
        return Err(NegotiationError::UnknownParameter);
    }
    Ok(())
}

/// Window bits from a token or a quoted string: 8..=15, no leading zero.
fn window_bits(v: &[u8]) -> Result<u8, NegotiationError> {
    let mut digits = [0u8; 2];
    let mut n = 0;
    if let [b'"', inner @ ..] = v {
        // quoted-string: unescape, then it must end at the closing quote.
        let mut escaped = false;
        let mut closed = false;
        for &b in inner {
            if closed {
                return Err(NegotiationError::Malformed);
            }
            if !escaped && b == b'\\' {
                escaped = true;
                continue;
            }
            if !escaped && b == b'"' {
                closed = true;
                continue;
            }
            escaped = false;
            *digits.get_mut(n).ok_or(NegotiationError::InvalidValue)? = b;
            n += 1;
        }
        if !closed {
            return Err(NegotiationError::Malformed);
        }
    } else {
        if !is_token(v) {
            return Err(NegotiationError::Malformed);
        }
        for &b in v {
            *digits.get_mut(n).ok_or(NegotiationError::InvalidValue)? = b;
            n += 1;
        }
    }
    match &digits[..n] {
        [d @ b'8'..=b'9'] => Ok(d - b'0'),
        [b'1', d @ b'0'..=b'5'] => Ok(10 + d - b'0'),
        _ => Err(NegotiationError::InvalidValue),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accept(cfg: &DeflateConfig, h: &str) -> Option<Negotiated> {
        cfg.accept([h.as_bytes()])
    }

    #[test]
    fn window_bits_values() {
        for (v, want) in [
            ("8", Ok(8)),
            ("15", Ok(15)),
            ("\"10\"", Ok(10)),
            ("\"1\\2\"", Ok(12)),
            ("7", Err(NegotiationError::InvalidValue)),
            ("16", Err(NegotiationError::InvalidValue)),
            ("08", Err(NegotiationError::InvalidValue)),
            ("015", Err(NegotiationError::InvalidValue)),
            ("", Err(NegotiationError::Malformed)),
            ("\"10", Err(NegotiationError::Malformed)),
            ("\"10\"x", Err(NegotiationError::Malformed)),
            ("\"\"", Err(NegotiationError::InvalidValue)),
            ("1 0", Err(NegotiationError::Malformed)),
            ("a", Err(NegotiationError::InvalidValue)),
            ("+9", Err(NegotiationError::InvalidValue)),
        ] {
            assert_eq!(window_bits(v.as_bytes()), want, "{v:?}");
        }
    }

    #[test]
    fn offers() {
        assert_eq!(
            DeflateConfig::default().offer(),
            "permessage-deflate; client_max_window_bits"
        );
        let cfg = DeflateConfig {
            client_max_window_bits: 9,
            server_max_window_bits: 3, // clamped to 8
            client_no_context_takeover: true,
            server_no_context_takeover: true,
            ..DeflateConfig::default()
        };
        let o = cfg.offer();
        assert_eq!(
            o,
            "permessage-deflate; client_no_context_takeover; server_no_context_takeover; \
             client_max_window_bits=9; server_max_window_bits=9"
        );
        // The server of the same config accepts the offer as made.
        let n = accept(&cfg, o.as_str()).unwrap();
        assert_eq!(n, Negotiated::new(9, 8, true, true));
        // The longest values fit.
        let r = Negotiated::new(10, 10, true, true).response();
        assert!(r.as_str().ends_with("server_max_window_bits=10"), "{r:?}");
    }

    #[test]
    fn server_declines_invalid_offers() {
        let cfg = DeflateConfig::default();
        for bad in [
            "permessage-deflate; foo",
            "permessage-deflate; server_max_window_bits",
            "permessage-deflate; server_max_window_bits=7",
            "permessage-deflate; server_max_window_bits=16",
            "permessage-deflate; server_max_window_bits=010",
            "permessage-deflate; client_max_window_bits=0",
            "permessage-deflate; client_max_window_bits; client_max_window_bits",
            "permessage-deflate; server_no_context_takeover; server_no_context_takeover",
            "permessage-deflate; server_no_context_takeover=1",
            "permessage-deflate; client_no_context_takeover=\"\"",
            "permessage-deflate; server_max_window_bits=\"1 0\"",
            "permessage-deflate; =10",
            "permessage-deflate; client_max_window_bits=\"10",
            "x-webkit-deflate-frame",
            "",
            " , ",
        ] {
            assert_eq!(accept(&cfg, bad), None, "{bad:?}");
        }
    }

    #[test]
    fn server_takes_first_acceptable_offer() {
        let cfg = DeflateConfig::default();
        let h = "foo; bar=\"a,b;c\", permessage-deflate; server_max_window_bits=20, \
                 permessage-deflate; server_max_window_bits=\"10\"; client_max_window_bits, \
                 permessage-deflate";
        let n = accept(&cfg, h).unwrap();
        assert_eq!(n.server_max_window_bits, 10);
        assert_eq!(n.client_max_window_bits, 15);
        assert_eq!(
            n.response(),
            "permessage-deflate; server_max_window_bits=10"
        );
        // Across several headers, in order.
        let n = cfg
            .accept([
                &b"permessage-deflate; nope"[..],
                b"",
                b"PerMessage-Deflate ; Client_No_Context_Takeover ",
            ])
            .unwrap();
        assert!(n.client_no_context_takeover && !n.server_no_context_takeover);
        assert_eq!(
            n.response(),
            "permessage-deflate; client_no_context_takeover"
        );
    }

    #[test]
    fn server_config_limits() {
        let cfg = DeflateConfig {
            client_max_window_bits: 10,
            server_max_window_bits: 12,
            server_no_context_takeover: true,
            ..DeflateConfig::default()
        };
        // The client offered client_max_window_bits: the server limits it.
        let n = accept(&cfg, "permessage-deflate; client_max_window_bits").unwrap();
        assert_eq!(n, Negotiated::new(10, 12, false, true));
        assert_eq!(
            n.response(),
            "permessage-deflate; server_no_context_takeover; client_max_window_bits=10; \
             server_max_window_bits=12"
        );
        // A smaller hint wins; a smaller server window asked for wins.
        let n = accept(
            &cfg,
            "permessage-deflate; client_max_window_bits=9; server_max_window_bits=8",
        )
        .unwrap();
        assert_eq!((n.client_max_window_bits, n.server_max_window_bits), (9, 8));
        // Not offered: the client may use 15, and the answer does not name it.
        let n = accept(&cfg, "permessage-deflate").unwrap();
        assert_eq!(n.client_max_window_bits, 15);
        assert!(!n.response().as_str().contains("client_max"));
        // An offered server_max_window_bits=15 is answered.
        let n = accept(
            &DeflateConfig::default(),
            "permessage-deflate; server_max_window_bits=15",
        );
        assert_eq!(
            n.unwrap().response(),
            "permessage-deflate; server_max_window_bits=15"
        );
    }

    /// 8 bits are asked as 9 (zlib-based peers cannot compress with 8), but
    /// taken when the peer offers 8 for itself.
    #[test]
    fn eight_bits_are_asked_as_nine() {
        let cfg = DeflateConfig {
            client_max_window_bits: 8,
            server_max_window_bits: 8,
            ..DeflateConfig::default()
        };
        assert_eq!(
            cfg.offer(),
            "permessage-deflate; client_max_window_bits=8; server_max_window_bits=9"
        );
        let n = accept(&cfg, "permessage-deflate; client_max_window_bits").unwrap();
        assert_eq!((n.client_max_window_bits, n.server_max_window_bits), (9, 8));
        let n = accept(&cfg, "permessage-deflate; client_max_window_bits=8").unwrap();
        assert_eq!(n.client_max_window_bits, 8);
        let n = check(&cfg, "permessage-deflate; server_max_window_bits=9").unwrap();
        assert_eq!(n.unwrap().server_max_window_bits, 9);
        let n = check(&cfg, "permessage-deflate; server_max_window_bits=8").unwrap();
        assert_eq!(n.unwrap().server_max_window_bits, 8);
        assert_eq!(
            check(&cfg, "permessage-deflate; server_max_window_bits=10"),
            Err(NegotiationError::NotOffered)
        );
    }

    #[test]
    fn roles() {
        let n = Negotiated::new(9, 12, true, false);
        assert_eq!(n.sending(Role::Client), (9, true));
        assert_eq!(n.receiving(Role::Server), (9, true));
        assert_eq!(n.sending(Role::Server), (12, false));
        assert_eq!(n.receiving(Role::Client), (12, false));
    }

    fn check(cfg: &DeflateConfig, h: &str) -> Result<Option<Negotiated>, NegotiationError> {
        cfg.check_response([h.as_bytes()])
    }

    #[test]
    fn client_checks_the_answer() {
        let cfg = DeflateConfig {
            client_max_window_bits: 12,
            server_max_window_bits: 10,
            ..DeflateConfig::default()
        };
        assert_eq!(cfg.check_response([]), Ok(None));
        assert_eq!(check(&cfg, " , "), Ok(None));
        assert_eq!(
            check(&cfg, "permessage-deflate"),
            Ok(Some(Negotiated::new(12, 15, false, false)))
        );
        let n = check(
            &cfg,
            "permessage-deflate; server_no_context_takeover; client_no_context_takeover; \
             client_max_window_bits=9; server_max_window_bits=\"8\"",
        );
        assert_eq!(n, Ok(Some(Negotiated::new(9, 8, true, true))));
        for (bad, want) in [
            (
                "permessage-deflate; server_max_window_bits=11",
                NegotiationError::NotOffered,
            ),
            (
                "permessage-deflate; client_max_window_bits=13",
                NegotiationError::NotOffered,
            ),
            (
                "permessage-deflate; client_max_window_bits",
                NegotiationError::InvalidValue,
            ),
            (
                "permessage-deflate; server_max_window_bits",
                NegotiationError::InvalidValue,
            ),
            (
                "permessage-deflate; mystery",
                NegotiationError::UnknownParameter,
            ),
            (
                "permessage-deflate; client_no_context_takeover; client_no_context_takeover",
                NegotiationError::DuplicateParameter,
            ),
            (
                "permessage-deflate, permessage-deflate",
                NegotiationError::Repeated,
            ),
            ("x-other", NegotiationError::NotOffered),
            (
                "permessage-deflate; server_max_window_bits=\"9",
                NegotiationError::Malformed,
            ),
        ] {
            assert_eq!(check(&cfg, bad), Err(want), "{bad:?}");
        }
        // Without window limits in the offer, any server window is fine.
        let n = check(
            &DeflateConfig::default(),
            "permessage-deflate; server_max_window_bits=8",
        );
        assert_eq!(n, Ok(Some(Negotiated::new(15, 8, false, false))));
    }
}
