//! The machinery both readers share: a receive buffer over caller storage,
//! a head parsed once into header spans, and a body delimited by length,
//! chunks or connection close, kept contiguous in place.
//!
//! All positions of the message being read are relative to its first byte
//! (`pos`), so moving live bytes to the front of the buffer never
//! invalidates them. A delivered message stays in the buffer until the next
//! call that needs room or the next message: bytes after it (pipelined
//! responses, upgraded protocols) are never lost nor read as its body.

use super::chunked::ChunkedDecoder;
use super::error::Error;
use super::head::{Facts, Framing, HeaderSpan, Headers, Trailers};
use crate::simd::copy::copy;

/// Default limit of a message head.
pub const DEFAULT_MAX_HEAD: usize = 16 * 1024;
/// Default limit of a body.
pub const DEFAULT_MAX_BODY: usize = 16 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    Head,
    Body,
    /// Complete; `delivered` once handed to the caller.
    Complete {
        delivered: bool,
    },
}

#[derive(Debug, Clone)]
pub(crate) struct Inbound<B, const N: usize> {
    buf: B,
    pos: usize,
    end: usize,
    eof: bool,
    pub max_head: usize,
    pub max_body: usize,
    pub phase: Phase,
    pub head_len: usize,
    pub headers: heapless::Vec<HeaderSpan, N>,
    pub facts: Facts,
    pub framing: Framing,
    chunk: ChunkedDecoder,
    /// Chunked: end of decoded data, start of undecoded bytes.
    dst: usize,
    src: usize,
    /// Complete: total length on the wire, body span, trailer span.
    pub msg_len: usize,
    pub body: (usize, usize),
    pub trailers: (usize, usize),
}

impl<B: AsRef<[u8]> + AsMut<[u8]>, const N: usize> Inbound<B, N> {
    pub fn new(storage: B) -> Self {
        let cap = storage.as_ref().len();
        Inbound {
            buf: storage,
            pos: 0,
            end: 0,
            eof: false,
            max_head: DEFAULT_MAX_HEAD.min(cap),
            max_body: DEFAULT_MAX_BODY,
            phase: Phase::Head,
            head_len: 0,
            headers: heapless::Vec::new(),
            facts: Facts::default(),
            framing: Framing::None,
            chunk: ChunkedDecoder::default(),
            dst: 0,
            src: 0,
            msg_len: 0,
            body: (0, 0),
            trailers: (0, 0),
        }
    }

    pub fn capacity(&self) -> usize {
        self.buf.as_ref().len()
    }

    pub fn set_max_head(&mut self, n: usize) {
        self.max_head = n.min(self.capacity());
    }

    /// Drops a delivered message, keeping the bytes after it.
    #[inline]
    pub fn release(&mut self) {
        if let Phase::Complete { delivered: true } = self.phase {
            self.pos += self.msg_len;
            self.phase = Phase::Head;
        }
        if self.pos == self.end && self.phase == Phase::Head {
            self.pos = 0;
            self.end = 0;
        }
    }

    /// Skips a head-only message (an interim 1xx response).
    pub fn skip_head(&mut self, head_len: usize) {
        self.pos += head_len;
        self.phase = Phase::Head;
    }

    #[inline]
    pub fn spare_mut(&mut self) -> &mut [u8] {
        self.release();
        let cap = self.capacity();
        if self.pos > 0 && cap - self.end <= cap / 4 {
            self.buf.as_mut().copy_within(self.pos..self.end, 0);
            self.end -= self.pos;
            self.pos = 0;
        }
        let e = self.end;
        &mut self.buf.as_mut()[e..]
    }

    #[inline]
    pub fn commit(&mut self, n: usize) {
        self.end = (self.end + n).min(self.capacity());
    }

    pub fn feed(&mut self, bytes: &[u8]) -> usize {
        let spare = self.spare_mut();
        let n = spare.len().min(bytes.len());
        copy(spare, &bytes[..n]);
        self.commit(n);
        n
    }

    pub fn signal_eof(&mut self) {
        self.eof = true;
    }

    pub fn is_eof(&self) -> bool {
        self.eof
    }

    /// Bytes received and not part of a delivered message.
    pub fn unparsed(&mut self) -> &[u8] {
        self.release();
        &self.buf.as_ref()[self.pos..self.end]
    }

    pub fn clear(&mut self) {
        self.pos = 0;
        self.end = 0;
        self.eof = false;
        self.phase = Phase::Head;
    }

    /// Whether the current message fills the whole buffer (no progress possible).
    #[inline]
    fn full(&self) -> bool {
        self.end - self.pos >= self.capacity()
    }

    /// A partial head: an error if it can no longer complete.
    pub fn head_partial(&self) -> Result<(), Error> {
        let len = self.end - self.pos;
        if len >= self.max_head || self.full() {
            return Err(Error::HeadTooLarge);
        }
        if self.eof {
            return Err(if len == 0 {
                Error::Closed
            } else {
                Error::UnexpectedEof
            });
        }
        Ok(())
    }

    /// The head is parsed: `head_len` bytes, body framed by `framing`.
    pub fn begin_body(&mut self, head_len: usize, framing: Framing) -> Result<(), Error> {
        if head_len > self.max_head {
            return Err(Error::HeadTooLarge);
        }
        self.head_len = head_len;
        self.framing = framing;
        // Only a chunked body has trailers: never show the last message's.
        self.trailers = (0, 0);
        if let Framing::Length(n) = framing {
            let room = self.capacity() - head_len;
            if n > self.max_body as u64 || n > room as u64 {
                return Err(Error::BodyTooLarge);
            }
        }
        if framing == Framing::Chunked {
            let room = self.capacity() - head_len;
            self.chunk = ChunkedDecoder::new(self.max_body.min(room) as u64, self.max_head);
            self.dst = head_len;
            self.src = head_len;
        }
        self.phase = Phase::Body;
        Ok(())
    }

    /// Reads as much of the body as arrived; true when the message is complete.
    #[inline]
    pub fn poll_body(&mut self) -> Result<bool, Error> {
        let avail = self.end - self.pos;
        let h = self.head_len;
        let done = match self.framing {
            Framing::None => {
                self.body = (h, h);
                self.msg_len = h;
                true
            }
            Framing::Length(n) => {
                let n = n as usize;
                if avail - h >= n {
                    self.body = (h, h + n);
                    self.msg_len = h + n;
                    true
                } else {
                    false
                }
            }
            Framing::Close => {
                if avail - h > self.max_body {
                    return Err(Error::BodyTooLarge);
                }
                if self.eof {
                    self.body = (h, avail);
                    self.msg_len = avail;
                    true
                } else {
                    false
                }
            }
            Framing::Chunked => self.poll_chunked()?,
        };
        if done {
            self.phase = Phase::Complete { delivered: false };
            return Ok(true);
        }
        if self.eof {
            return Err(Error::UnexpectedEof);
        }
        if self.full() {
            return Err(Error::BodyTooLarge);
        }
        Ok(false)
    }

    fn poll_chunked(&mut self) -> Result<bool, Error> {
        let (pos, end) = (self.pos, self.end);
        let region = &mut self.buf.as_mut()[pos..end];
        let r = self.chunk.decode_in_place(region, self.dst, self.src)?;
        self.dst += r.written;
        self.src += r.read;
        if r.done {
            let t = self.chunk.trailer_start().unwrap_or(self.src);
            self.trailers = (t, self.src.saturating_sub(2).max(t));
            self.body = (self.head_len, self.dst);
            self.msg_len = self.src;
            return Ok(true);
        }
        // Reclaim the chunk lines already decoded, unless trailer lines
        // (kept in place) are being read: what is left undecoded is at
        // most a partial line.
        if self.src > self.dst && self.chunk.trailer_start().is_none() {
            let (s, d) = (pos + self.src, pos + self.dst);
            self.buf.as_mut().copy_within(s..end, d);
            self.end -= s - d;
            self.src = self.dst;
        }
        Ok(false)
    }

    /// Marks the complete message as handed out and returns its bytes.
    #[inline]
    pub fn deliver(&mut self) -> &[u8] {
        self.phase = Phase::Complete { delivered: true };
        &self.buf.as_ref()[self.pos..self.pos + self.msg_len]
    }

    /// Splits the borrow: the complete message's bytes and the header spans.
    #[inline]
    /// The delivered message (HTTP/1.`version`), as both readers hand it out.
    /// Keep-alive: HTTP/1.1 without `Connection: close`, or HTTP/1.0 with
    /// `Connection: keep-alive` and no Transfer-Encoding (a response delimited by the close also ends it,
    /// which its reader adds).
    pub fn parsed(&self, version: u8) -> Parsed<'_> {
        Parsed {
            msg: &self.buf.as_ref()[self.pos..self.pos + self.msg_len],
            spans: &self.headers,
            version,
            body: self.body,
            trailers: self.trailers,
            keep_alive: self.keep_alive(version),
        }
    }

    /// Whether the delivered message (HTTP/1.`version`) keeps the connection by its
    /// headers (see [`parsed`](Self::parsed)).
    #[inline]
    pub fn keep_alive(&self, version: u8) -> bool {
        let f = &self.facts;
        if version == 1 {
            !f.conn_close
        } else {
            // RFC 9112 §6.1: an HTTP/1.0 message with Transfer-Encoding has faulty
            // framing; the connection closes after it, whatever it says.
            f.conn_keep_alive && !f.conn_close && !f.transfer_encoding
        }
    }
}

/// What a complete request and a complete response have in common, borrowed from
/// their reader: the bytes, the header spans, the body and trailer spans, the version
/// and keep-alive. [`ServerRequest`](super::ServerRequest) and
/// [`RestResponse`](super::RestResponse) answer through it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Parsed<'a> {
    msg: &'a [u8],
    spans: &'a [HeaderSpan],
    version: u8,
    body: (usize, usize),
    trailers: (usize, usize),
    pub keep_alive: bool,
}

impl<'a> Parsed<'a> {
    #[inline]
    pub fn span(&self, span: (usize, usize)) -> &'a [u8] {
        self.msg.get(span.0..span.1).unwrap_or_default()
    }

    #[inline]
    pub fn version(&self) -> u8 {
        self.version
    }

    #[inline]
    pub fn headers(&self) -> Headers<'a> {
        Headers {
            msg: self.msg,
            spans: self.spans,
        }
    }

    #[inline]
    pub fn body(&self) -> &'a [u8] {
        self.span(self.body)
    }

    #[inline]
    pub fn body_str(&self) -> Result<&'a str, Error> {
        let b = self.body();
        if crate::simd::utf8::is_valid(b) {
            // SAFETY: `is_valid` just checked that `b` is UTF-8.
            Ok(unsafe { core::str::from_utf8_unchecked(b) })
        } else {
            Err(Error::BodyNotUtf8)
        }
    }

    #[inline]
    pub fn trailers(&self) -> Trailers<'a> {
        Trailers {
            raw: self.span(self.trailers),
        }
    }

    #[inline]
    pub fn as_bytes(&self) -> &'a [u8] {
        self.msg
    }
}

impl<B: AsRef<[u8]> + AsMut<[u8]>, const N: usize> Inbound<B, N> {
    /// Runs `parse` over the bytes of the current message and its header
    /// span list (a split borrow of the buffer and the spans).
    #[inline]
    pub fn parse_head<R>(
        &mut self,
        parse: impl FnOnce(&[u8], &mut heapless::Vec<HeaderSpan, N>) -> Result<Option<R>, Error>,
    ) -> Result<Option<R>, Error> {
        let data = &self.buf.as_ref()[self.pos..self.end];
        let data = &data[..data.len().min(self.max_head)];
        parse(data, &mut self.headers)
    }
}
