//! Client side of the opening handshake: write the upgrade request, check the response.

use super::{
    Cursor, DEFAULT_MAX_HEAD_LEN, HandshakeError, MAX_HEADERS, accept_key, base64,
    check_extra_headers, collect_headers, has_token, head_status, is_field_value, is_token,
    list_items, lookup, single,
};

/// Headers [`ClientHandshake::encode`] writes itself; extra headers may not repeat them.
const RESERVED: &[&str] = &[
    "host",
    "upgrade",
    "connection",
    "sec-websocket-key",
    "sec-websocket-version",
    "sec-websocket-protocol",
    "content-length",
    "transfer-encoding",
];

/// A client's opening handshake: borrows host, path, offered subprotocols and extra headers.
#[derive(Debug, Clone, Copy)]
pub struct ClientHandshake<'a> {
    host: &'a str,
    path: &'a str,
    /// base64 of the caller's 16 random bytes.
    key: [u8; 24],
    protocols: &'a [&'a str],
    headers: &'a [(&'a str, &'a str)],
    origin: Option<&'a str>,
    max_len: usize,
    /// permessage-deflate to offer (feature `deflate`).
    #[cfg(feature = "deflate")]
    deflate: Option<crate::ws::deflate::DeflateConfig>,
}

impl<'a> ClientHandshake<'a> {
    /// `key` is 16 random bytes supplied by the caller (the codec has no OS randomness).
    ///
    /// ```
    /// use tickwire_codec::ws::handshake::ClientHandshake;
    ///
    /// let hs = ClientHandshake::new("stream.example.com", "/ws", [7; 16]); // a random key
    /// let mut buf = [0u8; 512];
    /// let n = hs.encode(&mut buf).unwrap();
    /// assert!(buf[..n].starts_with(b"GET /ws HTTP/1.1\r\n"));
    /// ```
    #[must_use]
    pub fn new(host: &'a str, path: &'a str, key: [u8; 16]) -> Self {
        let mut b64 = [0u8; 24];
        // 16 bytes always encode to exactly 24; cannot fail.
        let written = base64::encode(&key, &mut b64);
        debug_assert_eq!(written, Ok(24));
        Self {
            host,
            path,
            key: b64,
            protocols: &[],
            headers: &[],
            origin: None,
            max_len: DEFAULT_MAX_HEAD_LEN,
            #[cfg(feature = "deflate")]
            deflate: None,
        }
    }

    /// Offer permessage-deflate with `config` (feature `deflate`): the request
    /// carries [`DeflateConfig::offer`](crate::ws::deflate::DeflateConfig::offer)
    /// (extra headers may then not carry `Sec-WebSocket-Extensions`), and
    /// [`check_response`](Self::check_response) checks the server's answer and
    /// reports the outcome in [`ClientResponse::deflate`].
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
    #[must_use]
    pub fn deflate(self, config: crate::ws::deflate::DeflateConfig) -> Self {
        Self {
            deflate: Some(config),
            ..self
        }
    }

    /// Offer these subprotocols (`Sec-WebSocket-Protocol`), in order of preference.
    #[must_use]
    pub fn protocols(self, protocols: &'a [&'a str]) -> Self {
        Self { protocols, ..self }
    }

    /// Extra request headers (validated by [`encode`](Self::encode)).
    #[must_use]
    pub fn headers(self, headers: &'a [(&'a str, &'a str)]) -> Self {
        Self { headers, ..self }
    }

    /// Send an `Origin` header.
    #[must_use]
    pub fn origin(self, origin: &'a str) -> Self {
        Self {
            origin: Some(origin),
            ..self
        }
    }

    /// Largest response head [`check_response`](Self::check_response) accepts
    /// (default [`DEFAULT_MAX_HEAD_LEN`]).
    #[must_use]
    pub fn max_len(self, max_len: usize) -> Self {
        Self { max_len, ..self }
    }

    /// The `Sec-WebSocket-Key` this handshake sends (24 base64 bytes).
    pub fn key(&self) -> &[u8; 24] {
        &self.key
    }

    /// Write the upgrade request into `out`; returns its length. Everything is validated
    /// before anything is written: `InvalidPath`, `InvalidHeader`, then `BufferTooSmall`.
    pub fn encode(&self, out: &mut [u8]) -> Result<usize, HandshakeError> {
        let path_ok =
            self.path.starts_with('/') && self.path.bytes().all(|b| b > b' ' && b != 0x7F);
        if !path_ok {
            return Err(HandshakeError::InvalidPath);
        }
        let host_ok = !self.host.is_empty()
            && is_field_value(self.host)
            && !self.host.bytes().any(|b| b == b' ' || b == b'\t');
        let origin_ok = self.origin.is_none_or(is_field_value);
        if !host_ok || !origin_ok || !self.protocols.iter().all(|p| is_token(p)) {
            return Err(HandshakeError::InvalidHeader);
        }
        check_extra_headers(self.headers, RESERVED)?;
        if self.origin.is_some() {
            check_extra_headers(self.headers, &["origin"])?;
        }
        #[cfg(feature = "deflate")]
        let offer = self.deflate.map(|c| c.offer());
        #[cfg(feature = "deflate")]
        if offer.is_some() {
            check_extra_headers(self.headers, &["sec-websocket-extensions"])?;
        }

        let mut w = Cursor::new(out);
        w.put(b"GET ")?
            .put(self.path.as_bytes())?
            .put(b" HTTP/1.1\r\n")?
            .header("Host", self.host.as_bytes())?
            .put(b"Upgrade: websocket\r\nConnection: Upgrade\r\n")?
            .header("Sec-WebSocket-Key", &self.key)?
            .put(b"Sec-WebSocket-Version: 13\r\n")?;
        if let Some(origin) = self.origin {
            w.header("Origin", origin.as_bytes())?;
        }
        if let Some((first, rest)) = self.protocols.split_first() {
            w.put(b"Sec-WebSocket-Protocol: ")?.put(first.as_bytes())?;
            for p in rest {
                w.put(b", ")?.put(p.as_bytes())?;
            }
            w.put(b"\r\n")?;
        }
        #[cfg(feature = "deflate")]
        if let Some(offer) = &offer {
            w.header("Sec-WebSocket-Extensions", offer.as_bytes())?;
        }
        w.extra_headers(self.headers)?.put(b"\r\n")?;
        Ok(w.len())
    }

    /// Parse the server's response from `bytes`. `Ok(None)`: need more bytes.
    /// `Ok(Some(resp))`: the handshake succeeded; `resp.consumed` is the length of the HTTP
    /// head, and bytes after it are already WebSocket frames for the frame reader.
    ///
    /// Checks, in order: status 101 (else `BadStatus(code)`), HTTP/1.1, `Upgrade` has the
    /// token `websocket`, `Connection` has the token `upgrade` (both case-insensitive,
    /// comma-separated lists allowed), a single `Sec-WebSocket-Accept` equal to
    /// [`accept_key`] of our key, no `Sec-WebSocket-Extensions` unless the extra headers
    /// offered some, and at most one subprotocol, which must be one we offered
    /// (compared exactly).
    pub fn check_response<'b>(
        &self,
        bytes: &'b [u8],
    ) -> Result<Option<ClientResponse<'b>>, HandshakeError> {
        check(
            bytes,
            self.max_len,
            &accept_key(&self.key),
            self.offers_extensions(),
            #[cfg(feature = "deflate")]
            self.deflate.as_ref(),
            |p| self.protocols.contains(&p),
        )
    }

    /// Whether the extra headers offer extensions (then the server may choose some).
    fn offers_extensions(&self) -> bool {
        #[cfg(feature = "deflate")]
        if self.deflate.is_some() {
            return true;
        }
        self.headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("sec-websocket-extensions"))
    }

    /// What checking the response needs, kept apart from the borrowed request fields,
    /// so a connection can check the answer after the request is gone.
    /// `HeaderTooLarge` when the offered subprotocols take more than
    /// [`MAX_OFFERED_PROTOCOLS_LEN`] bytes (joined by commas).
    pub fn response_check(&self) -> Result<ResponseCheck, HandshakeError> {
        let mut protocols = heapless::String::new();
        for (i, p) in self.protocols.iter().enumerate() {
            if i > 0 {
                protocols
                    .push(',')
                    .map_err(|_| HandshakeError::HeaderTooLarge)?;
            }
            protocols
                .push_str(p)
                .map_err(|_| HandshakeError::HeaderTooLarge)?;
        }
        Ok(ResponseCheck {
            accept: accept_key(&self.key),
            protocols,
            offered_extensions: self.offers_extensions(),
            #[cfg(feature = "deflate")]
            deflate: self.deflate,
            max_len: self.max_len,
        })
    }
}

/// Most bytes of offered subprotocol names (joined by commas) a [`ResponseCheck`] keeps.
pub const MAX_OFFERED_PROTOCOLS_LEN: usize = 512;

/// The owned half of a [`ClientHandshake`]: the expected `Sec-WebSocket-Accept`, the
/// offered subprotocols and extensions, and the head limit. Checks a response exactly as
/// [`ClientHandshake::check_response`] does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseCheck {
    accept: [u8; 28],
    /// Offered subprotocols, joined by `,` (tokens never contain a comma).
    protocols: heapless::String<MAX_OFFERED_PROTOCOLS_LEN>,
    offered_extensions: bool,
    /// The permessage-deflate offer (feature `deflate`).
    #[cfg(feature = "deflate")]
    deflate: Option<crate::ws::deflate::DeflateConfig>,
    max_len: usize,
}

impl ResponseCheck {
    /// See [`ClientHandshake::check_response`].
    pub fn check<'b>(&self, bytes: &'b [u8]) -> Result<Option<ClientResponse<'b>>, HandshakeError> {
        check(
            bytes,
            self.max_len,
            &self.accept,
            self.offered_extensions,
            #[cfg(feature = "deflate")]
            self.deflate.as_ref(),
            |p| self.offered(p),
        )
    }

    /// Whether `protocol` is one of the offered subprotocols (compared exactly).
    pub fn offered(&self, protocol: &str) -> bool {
        !self.protocols.is_empty() && self.protocols.split(',').any(|o| o == protocol)
    }

    /// The largest response head accepted.
    pub fn max_len(&self) -> usize {
        self.max_len
    }
}

/// The response checks of [`ClientHandshake::check_response`], over what they need.
fn check<'b>(
    bytes: &'b [u8],
    max_len: usize,
    accept: &[u8; 28],
    offered_extensions: bool,
    #[cfg(feature = "deflate")] deflate_offer: Option<&crate::ws::deflate::DeflateConfig>,
    offered: impl Fn(&str) -> bool,
) -> Result<Option<ClientResponse<'b>>, HandshakeError> {
    let window = bytes.get(..max_len).unwrap_or(bytes);
    let mut raw = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut resp = httparse::Response::new(&mut raw);
    let parsed = resp.parse(window);
    let Some(consumed) = head_status(parsed, bytes.len(), max_len)? else {
        return Ok(None);
    };

    let code = resp.code.unwrap_or(0);
    if code != 101 {
        return Err(HandshakeError::BadStatus(code));
    }
    if resp.version != Some(1) {
        return Err(HandshakeError::BadHttpVersion);
    }
    let headers = collect_headers(resp.headers)?;

    if !has_token(&headers, "upgrade", "websocket") {
        return Err(HandshakeError::MissingUpgrade);
    }
    if !has_token(&headers, "connection", "upgrade") {
        return Err(HandshakeError::MissingConnectionUpgrade);
    }
    let got = single(&headers, "sec-websocket-accept", HandshakeError::BadAccept)?;
    if got != Some(&accept[..]) {
        return Err(HandshakeError::BadAccept);
    }

    #[cfg(feature = "deflate")]
    let deflate = match deflate_offer {
        Some(config) => config
            .check_response(
                headers
                    .iter()
                    .filter(|(n, _)| n.eq_ignore_ascii_case("sec-websocket-extensions"))
                    .map(|&(_, v)| v),
            )
            .map_err(|_| HandshakeError::ExtensionMismatch)?,
        None => None,
    };
    let chosen_extensions = headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case("sec-websocket-extensions"))
        .any(|&(_, v)| list_items(v).next().is_some());
    if chosen_extensions && !offered_extensions {
        return Err(HandshakeError::ExtensionMismatch);
    }

    let protocol = match single(
        &headers,
        "sec-websocket-protocol",
        HandshakeError::ProtocolMismatch,
    )? {
        None => None,
        Some(p) => {
            let p = core::str::from_utf8(p).map_err(|_| HandshakeError::Malformed)?;
            if !offered(p) {
                return Err(HandshakeError::ProtocolMismatch);
            }
            Some(p)
        }
    };

    Ok(Some(ClientResponse {
        consumed,
        protocol,
        headers,
        #[cfg(feature = "deflate")]
        deflate,
    }))
}

/// A successful `101 Switching Protocols` response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientResponse<'b> {
    /// Length of the HTTP head; bytes after it are WebSocket frames.
    pub consumed: usize,
    /// The subprotocol the server chose, if any (always one we offered).
    pub protocol: Option<&'b str>,
    headers: heapless::Vec<(&'b str, &'b [u8]), MAX_HEADERS>,
    #[cfg(feature = "deflate")]
    deflate: Option<crate::ws::deflate::Negotiated>,
}

impl<'b> ClientResponse<'b> {
    /// The first header called `name` (case-insensitive), as raw bytes.
    pub fn header(&self, name: &str) -> Option<&'b [u8]> {
        lookup(&self.headers, name)
    }

    /// All response headers, in order.
    pub fn headers(&self) -> impl Iterator<Item = (&'b str, &'b [u8])> {
        self.headers.iter().copied()
    }

    /// The permessage-deflate parameters the server accepted (feature
    /// `deflate`); `None` when it was not offered or the server declined it.
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
    pub fn deflate(&self) -> Option<crate::ws::deflate::Negotiated> {
        self.deflate
    }
}

#[cfg(test)]
mod tests {
    use super::super::{parse_request, write_accept};
    use super::*;
    use std::string::String;
    use std::vec::Vec;

    const KEY: [u8; 16] = *b"the sample nonce";

    fn response_for(hs: &ClientHandshake<'_>, extra: &str) -> String {
        let accept = accept_key(hs.key());
        let accept = core::str::from_utf8(&accept).unwrap();
        std::format!(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Accept: {accept}\r\n{extra}\r\n"
        )
    }

    #[test]
    fn key_is_base64_of_nonce() {
        let hs = ClientHandshake::new("h", "/", KEY);
        assert_eq!(hs.key(), b"dGhlIHNhbXBsZSBub25jZQ==");
    }

    #[test]
    fn encode_exact_bytes() {
        let protos = ["chat", "superchat"];
        let extra = [("X-Api-Key", "abc")];
        let hs = ClientHandshake::new("server.example.com", "/chat", KEY)
            .origin("http://example.com")
            .protocols(&protos)
            .headers(&extra);
        let mut buf = [0u8; 512];
        let n = hs.encode(&mut buf).unwrap();
        assert_eq!(
            core::str::from_utf8(&buf[..n]).unwrap(),
            "GET /chat HTTP/1.1\r\nHost: server.example.com\r\nUpgrade: websocket\r\n\
             Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
             Sec-WebSocket-Version: 13\r\nOrigin: http://example.com\r\n\
             Sec-WebSocket-Protocol: chat, superchat\r\nX-Api-Key: abc\r\n\r\n"
        );
        // Every shorter buffer fails cleanly.
        for len in 0..n {
            assert_eq!(
                hs.encode(&mut buf[..len]),
                Err(HandshakeError::BufferTooSmall)
            );
        }
    }

    fn round_trip(protos: &[&str], pick: Option<&str>, extra: &[(&str, &str)]) {
        let hs = ClientHandshake::new("example.com:443", "/ws?x=1", KEY)
            .protocols(protos)
            .headers(extra);
        let mut req = [0u8; 1024];
        let n = hs.encode(&mut req).unwrap();
        // Leftover bytes after the request head are not consumed.
        req[n..n + 3].copy_from_slice(b"\x81\x00\x00");
        let parsed = parse_request(&req[..n + 3]).unwrap().unwrap();
        assert_eq!(parsed.consumed, n);
        assert_eq!(parsed.path, "/ws?x=1");
        assert_eq!(parsed.host, Some("example.com:443"));
        assert_eq!(parsed.protocols().collect::<Vec<_>>(), protos);
        for (name, value) in extra {
            assert_eq!(parsed.header(name), Some(value.as_bytes()));
        }

        let server_extra = [("X-Server", "tickwire")];
        let mut resp = [0u8; 1024];
        let m = write_accept(&parsed, pick, &server_extra, &mut resp).unwrap();
        resp[m..m + 2].copy_from_slice(b"\x81\x05");
        let got = hs.check_response(&resp[..m + 2]).unwrap().unwrap();
        assert_eq!(got.consumed, m);
        assert_eq!(got.protocol, pick);
        assert_eq!(got.header("x-server"), Some(&b"tickwire"[..]));
        assert_eq!(got.headers().count(), 4 + usize::from(pick.is_some()));
    }

    #[test]
    fn round_trip_plain() {
        round_trip(&[], None, &[]);
    }

    #[test]
    fn round_trip_with_protocols_and_headers() {
        round_trip(
            &["v2.bin", "v1.json"],
            Some("v1.json"),
            &[("Authorization", "Bearer t")],
        );
        round_trip(&["v2.bin", "v1.json"], None, &[]);
        round_trip(&["a"], Some("a"), &[("X-A", ""), ("X-B", "b\tc")]);
    }

    #[test]
    fn byte_at_a_time() {
        let hs = ClientHandshake::new("h", "/", KEY);
        let resp = response_for(&hs, "X-Extra: 1\r\n");
        let mut bytes = resp.clone().into_bytes();
        bytes.extend_from_slice(b"\x81\x02hi");
        let full = hs.check_response(&bytes).unwrap().unwrap();
        assert_eq!(full.consumed, resp.len());
        for end in 0..resp.len() {
            assert_eq!(hs.check_response(&bytes[..end]), Ok(None), "at {end}");
        }
        for end in resp.len()..=bytes.len() {
            assert_eq!(
                hs.check_response(&bytes[..end]).unwrap().as_ref(),
                Some(&full)
            );
        }
    }

    #[test]
    fn case_insensitive_tokens() {
        let hs = ClientHandshake::new("h", "/", KEY);
        let accept = accept_key(hs.key());
        let accept = core::str::from_utf8(&accept).unwrap();
        let resp = std::format!(
            "HTTP/1.1 101 OK\r\nupgrade: WebSocket\r\nCONNECTION: keep-alive, Upgrade\r\n\
             sec-websocket-accept:   {accept}  \r\n\r\n"
        );
        assert!(hs.check_response(resp.as_bytes()).unwrap().is_some());
    }

    fn check(hs: &ClientHandshake<'_>, resp: &str) -> Result<(), HandshakeError> {
        hs.check_response(resp.as_bytes()).map(|r| {
            assert!(r.is_some());
        })
    }

    #[test]
    fn rejects_bad_status() {
        let hs = ClientHandshake::new("h", "/", KEY);
        let ok = response_for(&hs, "");
        for (code, want) in [("200 OK", 200), ("404 Not Found", 404), ("400 Bad", 400)] {
            let resp = ok.replace("101 Switching Protocols", code);
            assert_eq!(check(&hs, &resp), Err(HandshakeError::BadStatus(want)));
        }
        let resp = ok.replace("HTTP/1.1", "HTTP/1.0");
        assert_eq!(check(&hs, &resp), Err(HandshakeError::BadHttpVersion));
        let resp = ok.replace("HTTP/1.1", "HTTP/2.0");
        assert_eq!(check(&hs, &resp), Err(HandshakeError::BadHttpVersion));
        assert_eq!(
            check(&hs, "HTTP/1.1 1x1 Nope\r\n\r\n"),
            Err(HandshakeError::Malformed)
        );
    }

    #[test]
    fn rejects_bad_headers() {
        let hs = ClientHandshake::new("h", "/", KEY);
        let ok = response_for(&hs, "");
        assert_eq!(check(&hs, &ok), Ok(()));
        let cases = [
            ("Upgrade: websocket\r\n", "", HandshakeError::MissingUpgrade),
            (
                "Upgrade: websocket",
                "Upgrade: h2c",
                HandshakeError::MissingUpgrade,
            ),
            (
                "Connection: Upgrade\r\n",
                "",
                HandshakeError::MissingConnectionUpgrade,
            ),
            (
                "Connection: Upgrade",
                "Connection: close",
                HandshakeError::MissingConnectionUpgrade,
            ),
            (
                "Sec-WebSocket-Accept",
                "X-Accept",
                HandshakeError::BadAccept,
            ),
            ("=\r\n", "A\r\n", HandshakeError::BadAccept),
        ];
        for (from, to, want) in cases {
            let resp = ok.replacen(from, to, 1);
            assert_ne!(resp, ok);
            assert_eq!(check(&hs, &resp), Err(want), "{from} -> {to}");
        }
        // Accept for a different key, and a repeated accept.
        let other = ClientHandshake::new("h", "/", [0; 16]);
        assert_eq!(
            check(&hs, &response_for(&other, "")),
            Err(HandshakeError::BadAccept)
        );
        let accept = accept_key(hs.key());
        let twice = std::format!(
            "Sec-WebSocket-Accept: {}\r\n",
            core::str::from_utf8(&accept).unwrap()
        );
        assert_eq!(
            check(&hs, &response_for(&hs, &twice)),
            Err(HandshakeError::BadAccept)
        );
    }

    #[test]
    fn subprotocol_agreement() {
        let none = ClientHandshake::new("h", "/", KEY);
        let protos = ["chat", "superchat"];
        let some = none.protocols(&protos);
        let pick = |p: &str| std::format!("Sec-WebSocket-Protocol: {p}\r\n");

        assert_eq!(
            check(&none, &response_for(&none, &pick("chat"))),
            Err(HandshakeError::ProtocolMismatch)
        );
        assert_eq!(
            check(&some, &response_for(&some, &pick("other"))),
            Err(HandshakeError::ProtocolMismatch)
        );
        assert_eq!(
            check(&some, &response_for(&some, &pick("Chat"))),
            Err(HandshakeError::ProtocolMismatch)
        );
        assert_eq!(
            check(&some, &response_for(&some, &pick("chat, superchat"))),
            Err(HandshakeError::ProtocolMismatch)
        );
        let two = std::format!("{}{}", pick("chat"), pick("chat"));
        assert_eq!(
            check(&some, &response_for(&some, &two)),
            Err(HandshakeError::ProtocolMismatch)
        );
        let mut bad = response_for(&some, &pick("\u{fffd}")).into_bytes();
        let at = bad
            .windows(3)
            .position(|w| w == "\u{fffd}".as_bytes())
            .unwrap();
        bad[at] = 0xFF;
        assert_eq!(some.check_response(&bad), Err(HandshakeError::Malformed));
        // Declining every offer is allowed.
        let r = response_for(&some, "");
        assert_eq!(
            some.check_response(r.as_bytes()).unwrap().unwrap().protocol,
            None
        );
        let r = response_for(&some, &pick(" superchat "));
        assert_eq!(
            some.check_response(r.as_bytes()).unwrap().unwrap().protocol,
            Some("superchat")
        );
    }

    #[test]
    fn unrequested_extension_rejected() {
        let hs = ClientHandshake::new("h", "/", KEY);
        let ext = "Sec-WebSocket-Extensions: permessage-deflate\r\n";
        assert_eq!(
            check(&hs, &response_for(&hs, ext)),
            Err(HandshakeError::ExtensionMismatch)
        );
        let offer = [("Sec-WebSocket-Extensions", "permessage-deflate")];
        let hs = hs.headers(&offer);
        assert_eq!(check(&hs, &response_for(&hs, ext)), Ok(()));
    }

    #[test]
    fn oversize_head_and_too_many_headers() {
        let hs = ClientHandshake::new("h", "/", KEY).max_len(256);
        let ok = response_for(&hs, "");
        assert_eq!(check(&hs, &ok), Ok(()));
        let big = response_for(&hs, &std::format!("X-Pad: {}\r\n", "a".repeat(300)));
        assert_eq!(check(&hs, &big), Err(HandshakeError::HeaderTooLarge));
        // A partial head already past the limit is refused without waiting for more.
        assert_eq!(
            hs.check_response(&big.as_bytes()[..256]),
            Err(HandshakeError::HeaderTooLarge)
        );
        assert_eq!(hs.check_response(&big.as_bytes()[..255]), Ok(None));

        let hs = ClientHandshake::new("h", "/", KEY);
        let many: String = (0..MAX_HEADERS - 3)
            .map(|i| std::format!("X-{i}: v\r\n"))
            .collect();
        assert_eq!(check(&hs, &response_for(&hs, &many)), Ok(()));
        let too_many: String = (0..MAX_HEADERS - 2)
            .map(|i| std::format!("X-{i}: v\r\n"))
            .collect();
        assert_eq!(
            check(&hs, &response_for(&hs, &too_many)),
            Err(HandshakeError::HeaderTooLarge)
        );
    }

    #[test]
    fn encode_rejects_injection() {
        let mut buf = [0u8; 512];
        let enc = |hs: ClientHandshake<'_>, buf: &mut [u8]| hs.encode(buf);
        let base = ClientHandshake::new("h", "/", KEY);
        for path in ["", "chat", "/a b", "/a\r\nX: y", "/\0", "/a\tb"] {
            let hs = ClientHandshake::new("h", path, KEY);
            assert_eq!(
                enc(hs, &mut buf),
                Err(HandshakeError::InvalidPath),
                "{path:?}"
            );
        }
        for host in ["", "a b", "h\r\nX-Evil: 1", "h\n", "h\0"] {
            let hs = ClientHandshake::new(host, "/", KEY);
            assert_eq!(
                enc(hs, &mut buf),
                Err(HandshakeError::InvalidHeader),
                "{host:?}"
            );
        }
        assert_eq!(
            enc(base.origin("o\r\nX: 1"), &mut buf),
            Err(HandshakeError::InvalidHeader)
        );
        for p in [&["a b"][..], &["a,b"], &[""], &["ok", "x\r\n"]] {
            assert_eq!(
                enc(base.protocols(p), &mut buf),
                Err(HandshakeError::InvalidHeader)
            );
        }
        let bad: &[&[(&str, &str)]] = &[
            &[("X-A", "v\r\nX-Evil: 1")],
            &[("X-A", "v\n")],
            &[("X-A", "v\r")],
            &[("X-A", "v\0")],
            &[("X A", "v")],
            &[("X-A:", "v")],
            &[("", "v")],
            &[("X\r\nY", "v")],
            &[("Host", "evil")],
            &[("sec-websocket-key", "x")],
            &[("Connection", "close")],
            &[("Content-Length", "5")],
        ];
        for h in bad {
            assert_eq!(
                enc(base.headers(h), &mut buf),
                Err(HandshakeError::InvalidHeader),
                "{h:?}"
            );
        }
        let origin = [("Origin", "x")];
        assert!(enc(base.headers(&origin), &mut buf).is_ok());
        assert_eq!(
            enc(base.origin("y").headers(&origin), &mut buf),
            Err(HandshakeError::InvalidHeader)
        );
        // Validation comes before the buffer check.
        assert_eq!(
            enc(base.headers(bad[0]), &mut []),
            Err(HandshakeError::InvalidHeader)
        );
    }

    proptest::proptest! {
        #[test]
        fn check_response_never_panics(
            bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..600),
            max in 0usize..700,
        ) {
            let protos = ["chat"];
            let hs = ClientHandshake::new("h", "/", KEY).protocols(&protos).max_len(max);
            let _ = hs.check_response(&bytes);
        }

        #[test]
        fn check_response_never_panics_near_valid(cut in 0usize..200, flip in 0usize..200, byte in proptest::num::u8::ANY) {
            let protos = ["chat"];
            let hs = ClientHandshake::new("h", "/", KEY).protocols(&protos);
            let mut bytes = response_for(&hs, "Sec-WebSocket-Protocol: chat\r\n").into_bytes();
            if let Some(b) = bytes.get_mut(flip) { *b = byte; }
            bytes.truncate(bytes.len().saturating_sub(cut % 8));
            let _ = hs.check_response(&bytes);
        }
    }
}
