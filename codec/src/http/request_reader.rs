//! RequestReader: HTTP/1.1 requests in, [`ServerRequest`]s out, zero-copy.
//!
//! The server side of the codec, for tests, users and the WebSocket
//! handshake. Same feed shape, limits and smuggling rules as the
//! [`ResponseReader`](super::ResponseReader): Content-Length and chunked
//! bodies; a request with neither has no body. Pipelined requests stay in
//! the buffer until the previous one is released by the next `poll`. The
//! head is read by our own parser (`request_head`),
//! a block at a time on x86, held to httparse's answers by a differential
//! test.

use super::error::Error;
use super::head::{self, Headers, Trailers};
use super::inbound::{Inbound, Parsed, Phase};
use super::method::Method;
use super::request_head::{self, RequestLine};

/// Decodes requests from storage `B`, with room for `N` headers.
#[derive(Debug, Clone)]
pub struct RequestReader<B, const N: usize = 32> {
    inner: Inbound<B, N>,
    line: RequestLine,
}

impl<B: AsRef<[u8]> + AsMut<[u8]>, const N: usize> RequestReader<B, N> {
    /// A reader over `storage` with default limits (16 KiB head, 16 MiB
    /// body, both lowered to what the storage can hold).
    ///
    /// ```
    /// use tickwire_codec::http::{Method, RequestReader};
    ///
    /// let mut r: RequestReader<[u8; 1024]> = RequestReader::new([0u8; 1024]);
    /// r.feed(b"GET /time?tz=utc HTTP/1.1\r\nHost: a\r\n\r\n");
    /// let req = r.poll().unwrap().unwrap();
    /// assert_eq!((req.method(), req.path(), req.query()), (Some(Method::Get), "/time", Some("tz=utc")));
    /// ```
    pub fn new(storage: B) -> Self {
        RequestReader {
            inner: Inbound::new(storage),
            line: RequestLine::default(),
        }
    }

    /// Limits the head (request line + headers) to `n` bytes.
    pub fn max_head_size(mut self, n: usize) -> Self {
        self.inner.set_max_head(n);
        self
    }

    /// Limits the body to `n` bytes (decoded size for chunked bodies).
    pub fn max_body_size(mut self, n: usize) -> Self {
        self.inner.max_body = n;
        self
    }

    /// Storage size.
    pub fn capacity(&self) -> usize {
        self.inner.capacity()
    }

    /// Free space to read socket bytes into; then [`commit`](Self::commit).
    #[inline]
    pub fn spare_mut(&mut self) -> &mut [u8] {
        self.inner.spare_mut()
    }

    /// Marks `n` bytes of [`spare_mut`](Self::spare_mut) as received.
    #[inline]
    pub fn commit(&mut self, n: usize) {
        self.inner.commit(n);
    }

    /// Copies in as much of `bytes` as fits; returns how many were taken.
    pub fn feed(&mut self, bytes: &[u8]) -> usize {
        self.inner.feed(bytes)
    }

    /// The peer closed: an unfinished request is [`Error::UnexpectedEof`],
    /// none at all [`Error::Closed`].
    pub fn signal_eof(&mut self) {
        self.inner.signal_eof();
    }

    /// Bytes received after the last returned request (e.g. WebSocket
    /// frames sent right after an upgrade request).
    pub fn unparsed(&mut self) -> &[u8] {
        self.inner.unparsed()
    }

    /// Forgets every byte and the EOF flag.
    pub fn clear(&mut self) {
        self.inner.clear();
    }

    /// The next complete request, or `Ok(None)` when more bytes are needed.
    /// An error is final (answer 400 and close).
    #[inline]
    pub fn poll(&mut self) -> Result<Option<ServerRequest<'_>>, Error> {
        self.inner.release();
        loop {
            match self.inner.phase {
                Phase::Head => {
                    if !self.poll_head()? {
                        return Ok(None);
                    }
                }
                Phase::Body => {
                    if !self.inner.poll_body()? {
                        return Ok(None);
                    }
                }
                Phase::Complete { .. } => break,
            }
        }
        self.inner.deliver();
        Ok(Some(ServerRequest {
            parsed: self.inner.parsed(self.line.version),
            method: self.line.method,
            target: self.line.target,
        }))
    }

    fn poll_head(&mut self) -> Result<bool, Error> {
        // The request line is parsed straight into `self.line` (see
        // `response_head::parse` for why it goes out through a reference).
        let out = &mut self.line;
        let parsed =
            self.inner
                .parse_head(|data, spans| match request_head::parse(data, spans, out) {
                    Ok(true) => Ok(Some(head::facts(data, spans)?)),
                    Ok(false) => Ok(None),
                    Err(e) => Err(diagnose_head::<N>(data, e)),
                })?;
        let Some(facts) = parsed else {
            self.inner.head_partial()?;
            return Ok(false);
        };
        self.inner.facts = facts;
        self.inner
            .begin_body(self.line.head_len, facts.framing(false)?)?;
        Ok(true)
    }
}

/// The precise error for a head the parser refused (out of line: the error
/// path re-parses with a span list of its own).
#[cold]
#[inline(never)]
fn diagnose_head<const N: usize>(data: &[u8], e: httparse::Error) -> Error {
    head::diagnose(data, e, Error::InvalidRequestLine, |d| {
        request_head::parse(
            d,
            &mut heapless::Vec::<_, N>::new(),
            &mut RequestLine::default(),
        )
        .err()
    })
}

/// A complete request, borrowed from its [`RequestReader`].
#[derive(Debug, Clone, Copy)]
pub struct ServerRequest<'a> {
    parsed: Parsed<'a>,
    method: (usize, usize),
    target: (usize, usize),
}

impl<'a> ServerRequest<'a> {
    fn text(&self, span: (usize, usize)) -> &'a str {
        // The head parser checked the method as tchars and the target as UTF-8.
        core::str::from_utf8(self.parsed.span(span)).unwrap_or_default()
    }

    /// The method, if one of [`Method`]'s.
    #[inline]
    pub fn method(&self) -> Option<Method> {
        Method::from_bytes(self.method_str().as_bytes())
    }

    /// The method token as sent.
    #[inline]
    pub fn method_str(&self) -> &'a str {
        self.text(self.method)
    }

    /// The request target as sent (path and query).
    #[inline]
    pub fn target(&self) -> &'a str {
        self.text(self.target)
    }

    /// The path: the target up to `?`.
    #[inline]
    pub fn path(&self) -> &'a str {
        let t = self.target();
        t.split_once('?').map_or(t, |(p, _)| p)
    }

    /// The query: the target after `?`, still percent-encoded.
    #[inline]
    pub fn query(&self) -> Option<&'a str> {
        self.target().split_once('?').map(|(_, q)| q)
    }

    /// `(key, value)` pairs of the query, still percent-encoded (decode
    /// with [`percent::decode_into`](super::percent::decode_into)).
    pub fn query_pairs(&self) -> impl Iterator<Item = (&'a str, &'a str)> + 'a {
        self.query()
            .unwrap_or_default()
            .split('&')
            .filter(|kv| !kv.is_empty())
            .map(|kv| kv.split_once('=').unwrap_or((kv, "")))
    }

    /// The minor version: 1 for HTTP/1.1, 0 for HTTP/1.0.
    #[inline]
    pub fn version(&self) -> u8 {
        self.parsed.version()
    }

    /// The value of the first header called `name` (ASCII case-insensitive).
    #[inline]
    pub fn header(&self, name: &str) -> Option<&'a [u8]> {
        self.headers().get(name)
    }

    /// [`header`](Self::header) as text; `None` as well when not UTF-8.
    #[inline]
    pub fn header_str(&self, name: &str) -> Option<&'a str> {
        self.headers().get_str(name)
    }

    /// All headers, in order.
    #[inline]
    pub fn headers(&self) -> Headers<'a> {
        self.parsed.headers()
    }

    /// The body (decoded, for a chunked one).
    #[inline]
    pub fn body(&self) -> &'a [u8] {
        self.parsed.body()
    }

    /// The body as text, UTF-8 checked.
    #[inline]
    pub fn body_str(&self) -> Result<&'a str, Error> {
        self.parsed.body_str()
    }

    /// Trailer fields of a chunked body (empty otherwise).
    #[inline]
    pub fn trailers(&self) -> Trailers<'a> {
        self.parsed.trailers()
    }

    /// Whether the client wants the connection kept open.
    #[inline]
    pub fn keep_alive(&self) -> bool {
        self.parsed.keep_alive
    }

    /// The whole request: the head as received, then the body; a chunked
    /// body is decoded in place, so after its data come leftovers of the
    /// chunk framing and the trailer section (not the bytes as sent).
    #[inline]
    pub fn as_bytes(&self) -> &'a [u8] {
        self.parsed.as_bytes()
    }
}
