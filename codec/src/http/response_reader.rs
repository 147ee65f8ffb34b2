//! ResponseReader: HTTP/1.1 responses in, [`RestResponse`]s out, zero-copy.
//!
//! Same feed shape as the WebSocket `FrameReader`: read socket bytes into
//! [`spare_mut`](ResponseReader::spare_mut) and [`commit`](ResponseReader::commit)
//! them (or [`feed`](ResponseReader::feed) a slice), then
//! [`poll`](ResponseReader::poll): `Ok(None)` means more bytes are needed.
//! Interim 1xx responses are skipped (101 is returned). Tell the reader
//! when a response answers a HEAD request ([`expect`](ResponseReader::expect)),
//! and when the connection closed ([`signal_eof`](ResponseReader::signal_eof)):
//! that ends a body delimited by close.
//!
//! A returned response stays in the buffer until the next `poll` (or
//! `spare_mut`/`feed`), which drops exactly its bytes: whatever followed it
//! (a pipelined response, extra bytes after a Content-Length body) is the
//! start of the next response. Extra bytes that are not a response are an
//! error at the next `poll`, never part of a body; after a response that is
//! not [`keep_alive`](RestResponse::keep_alive), check
//! [`unparsed`](ResponseReader::unparsed) and close.

use super::error::Error;
use super::head::{self, Framing, Headers, Trailers};
use super::inbound::{Inbound, Parsed, Phase};
use super::method::Method;
use super::response_head::{self, StatusLine};

/// Decodes responses from storage `B`, with room for `N` headers.
#[derive(Debug, Clone)]
pub struct ResponseReader<B, const N: usize = 32> {
    inner: Inbound<B, N>,
    method: Method,
    line: StatusLine,
}

impl<B: AsRef<[u8]> + AsMut<[u8]>, const N: usize> ResponseReader<B, N> {
    /// A reader over `storage` with default limits (16 KiB head, 16 MiB
    /// body, both lowered to what the storage can hold).
    ///
    /// ```
    /// use tickwire_codec::http::ResponseReader;
    ///
    /// let mut r: ResponseReader<[u8; 1024]> = ResponseReader::new([0u8; 1024]);
    /// r.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n"); // bytes from the socket
    /// assert!(r.poll().unwrap().is_none()); // more needed
    /// r.feed(b"{}");
    /// let resp = r.poll().unwrap().unwrap(); // borrows the reader's storage
    /// assert_eq!((resp.status(), resp.body()), (200, &b"{}"[..]));
    /// ```
    pub fn new(storage: B) -> Self {
        ResponseReader {
            inner: Inbound::new(storage),
            method: Method::Get,
            line: StatusLine::default(),
        }
    }

    /// Limits the head (status line + headers) to `n` bytes.
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

    /// The next response answers a request with `method` (only HEAD
    /// changes anything: its response has no body). Reset to GET after
    /// each response.
    pub fn expect(&mut self, method: Method) {
        self.method = method;
    }

    /// Free space to read socket bytes into; then [`commit`](Self::commit).
    /// Drops a response already returned and moves live bytes to the front
    /// when the tail runs low.
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

    /// The connection was closed by the peer: a close-delimited body ends
    /// here, anything else unfinished is [`Error::UnexpectedEof`], and no
    /// response at all is [`Error::Closed`].
    pub fn signal_eof(&mut self) {
        self.inner.signal_eof();
    }

    /// Whether [`signal_eof`](Self::signal_eof) was called since the last [`clear`](Self::clear).
    pub fn is_eof(&self) -> bool {
        self.inner.is_eof()
    }

    /// Bytes received after the last returned response (the start of the
    /// next one, or the first bytes of an upgraded protocol after a 101).
    pub fn unparsed(&mut self) -> &[u8] {
        self.inner.unparsed()
    }

    /// Forgets every byte and the EOF flag (for a new connection).
    pub fn clear(&mut self) {
        self.inner.clear();
        self.method = Method::Get;
    }

    /// The next complete response, or `Ok(None)` when more bytes are needed.
    /// An error is final for the connection. Same as [`advance`](Self::advance)
    /// followed by [`response`](Self::response).
    #[inline]
    pub fn poll(&mut self) -> Result<Option<RestResponse<'_>>, Error> {
        if self.advance()? {
            Ok(self.response())
        } else {
            Ok(None)
        }
    }

    /// Process received bytes up to the end of the next response: `Ok(true)`
    /// when one is ready for [`response`](Self::response), `Ok(false)` when
    /// more bytes are needed. Drops the response returned before. An error is
    /// final for the connection.
    ///
    /// The split lets a read loop decide before it borrows: the borrow of
    /// `response()` can be returned from the loop, where a conditionally
    /// returned borrow of `poll()` cannot (a borrow-checker limitation).
    #[inline]
    pub fn advance(&mut self) -> Result<bool, Error> {
        self.inner.release();
        loop {
            match self.inner.phase {
                Phase::Head => {
                    if !self.poll_head()? {
                        return Ok(false);
                    }
                }
                Phase::Body => {
                    if !self.inner.poll_body()? {
                        return Ok(false);
                    }
                }
                Phase::Complete { delivered: true } => return Ok(true),
                Phase::Complete { delivered: false } => break,
            }
        }
        self.method = Method::Get;
        self.inner.deliver();
        Ok(true)
    }

    /// The response the last [`advance`](Self::advance) (or [`poll`](Self::poll))
    /// finished, borrowing the buffer; `None` if there is none, or once
    /// [`spare_mut`](Self::spare_mut), [`feed`](Self::feed) or `advance` moved on.
    #[inline]
    pub fn response(&self) -> Option<RestResponse<'_>> {
        if self.inner.phase != (Phase::Complete { delivered: true }) {
            return None;
        }
        let mut parsed = self.inner.parsed(self.line.version);
        // A body delimited by the close ends the connection whatever the headers say.
        parsed.keep_alive &= self.inner.framing != Framing::Close;
        Some(RestResponse {
            parsed,
            status: self.line.status,
            reason: self.line.reason,
        })
    }

    /// Whether the response the last [`advance`](Self::advance) finished lets the
    /// connection carry another request ([`RestResponse::keep_alive`], and not a 101):
    /// the client connection's reuse decision, without building the response.
    #[inline]
    pub(crate) fn reusable(&self) -> bool {
        self.inner.phase == (Phase::Complete { delivered: true })
            && self.line.status != 101
            && self.inner.framing != Framing::Close
            && self.inner.keep_alive(self.line.version)
    }

    fn has_body(&self) -> bool {
        let s = self.line.status;
        !(self.method == Method::Head || (100..200).contains(&s) || s == 204 || s == 304)
    }

    /// Parses a head; true when one is complete (interim ones are skipped).
    fn poll_head(&mut self) -> Result<bool, Error> {
        // Each skipped interim response consumes its head: this terminates.
        while let Some(complete) = self.poll_one_head()? {
            if complete {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Parses one head: `None` when incomplete, `Some(false)` when an
    /// interim response was skipped, `Some(true)` for a final response.
    fn poll_one_head(&mut self) -> Result<Option<bool>, Error> {
        // The status line is parsed straight into `self.line` (see
        // `response_head::parse`).
        let out = &mut self.line;
        let parsed =
            self.inner
                .parse_head(|data, spans| match response_head::parse(data, spans, out) {
                    Ok(true) => Ok(Some(head::facts(data, spans)?)),
                    Ok(false) => Ok(None),
                    Err(e) => Err(diagnose_head::<N>(data, e)),
                })?;
        let Some(facts) = parsed else {
            self.inner.head_partial()?;
            return Ok(None);
        };
        let line = self.line;
        if !(100..=999).contains(&line.status) {
            return Err(Error::InvalidStatus);
        }
        self.inner.facts = facts;
        // Smuggling checks apply to every response, bodiless or not.
        let framing = facts.framing(true)?;
        if (100..200).contains(&line.status) && line.status != 101 {
            self.inner.skip_head(line.head_len);
            return Ok(Some(false));
        }
        let framing = if self.has_body() {
            framing
        } else {
            Framing::None
        };
        self.inner.begin_body(line.head_len, framing)?;
        Ok(Some(true))
    }
}

/// The precise error for a head the parser refused (out of line: the error
/// path re-parses with a span list of its own, which the hot path's frame
/// need not hold).
#[cold]
#[inline(never)]
fn diagnose_head<const N: usize>(data: &[u8], e: httparse::Error) -> Error {
    head::diagnose(data, e, Error::InvalidStatus, |d| {
        response_head::parse(
            d,
            &mut heapless::Vec::<_, N>::new(),
            &mut StatusLine::default(),
        )
        .err()
    })
}

/// A complete response, borrowed from its [`ResponseReader`].
#[derive(Debug, Clone, Copy)]
pub struct RestResponse<'a> {
    parsed: Parsed<'a>,
    status: u16,
    reason: (usize, usize),
}

impl<'a> RestResponse<'a> {
    /// The status code.
    #[inline]
    pub fn status(&self) -> u16 {
        self.status
    }

    /// The reason phrase (empty when absent or not UTF-8).
    #[inline]
    pub fn reason(&self) -> &'a str {
        core::str::from_utf8(self.parsed.span(self.reason)).unwrap_or_default()
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

    /// Whether the connection may carry the next request: HTTP/1.1 without
    /// `Connection: close`, or HTTP/1.0 with `Connection: keep-alive` and no
    /// Transfer-Encoding (RFC 9112 §6.1: faulty framing), and a body that was not
    /// delimited by the close.
    #[inline]
    pub fn keep_alive(&self) -> bool {
        self.parsed.keep_alive
    }

    /// The whole response: the head as received, then the body; a chunked
    /// body is decoded in place, so after its data come leftovers of the
    /// chunk framing and the trailer section (not the bytes as sent).
    #[inline]
    pub fn as_bytes(&self) -> &'a [u8] {
        self.parsed.as_bytes()
    }
}
