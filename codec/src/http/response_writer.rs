//! ResponseWriter: an HTTP/1.1 response serialized into a caller slice.
//!
//! For our tests, users, and the WebSocket server handshake. A typestate
//! builder like the [`RequestBuilder`](super::RequestBuilder): status line,
//! headers, then a body from a slice, from a writer, or in chunks. Errors
//! are latched and reported when the response is finished; the result is
//! the number of bytes written at the front of the slice.
//!
//! ```
//! use tickwire_codec::http::ResponseWriter;
//! let mut out = [0u8; 256];
//! let n = ResponseWriter::new(&mut out, 200, "OK")
//!     .header("Content-Type", "application/json")
//!     .body(b"{}")
//!     .finish()
//!     .unwrap();
//! assert_eq!(&out[..n], b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}");
//! ```

use core::marker::PhantomData;

use super::error::BuildError;
use super::request_writer::{BodyWriter, Complete, Fields, check_header};
use super::syntax::{dec_digits, hex_digits};
use crate::simd::copy::copy;

/// One response being serialized into `buf`.
#[derive(Debug)]
#[must_use = "a response is only written by finish()"]
pub struct ResponseWriter<'a, S> {
    buf: &'a mut [u8],
    at: usize,
    status: u16,
    err: Option<BuildError>,
    _state: PhantomData<S>,
}

impl<'a, S> ResponseWriter<'a, S> {
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        if self.err.is_some() {
            return;
        }
        match self.buf.get_mut(self.at..self.at + bytes.len()) {
            Some(dst) => {
                copy(dst, bytes);
                self.at += bytes.len();
            }
            None => self.err = Some(BuildError::BufferFull),
        }
    }

    fn into_state<T>(self) -> ResponseWriter<'a, T> {
        ResponseWriter {
            buf: self.buf,
            at: self.at,
            status: self.status,
            err: self.err,
            _state: PhantomData,
        }
    }

    fn content_length(&mut self, n: u64) {
        let mut d = [0u8; 20];
        let s = dec_digits(n, &mut d);
        self.put(b"Content-Length: ");
        self.put(&d[s..]);
        self.put(b"\r\n");
    }
}

impl<'a> ResponseWriter<'a, Fields> {
    /// Starts `HTTP/1.1 {status} {reason}` in `buf`.
    ///
    /// ```
    /// use tickwire_codec::http::ResponseWriter;
    ///
    /// let mut buf = [0u8; 256];
    /// let n = ResponseWriter::new(&mut buf, 200, "OK")
    ///     .header("Content-Type", "application/json")
    ///     .body(b"{}")
    ///     .finish()
    ///     .unwrap();
    /// assert!(buf[..n].starts_with(b"HTTP/1.1 200 OK\r\n")); // n bytes to write
    /// ```
    pub fn new(buf: &'a mut [u8], status: u16, reason: &str) -> Self {
        let mut w = ResponseWriter {
            buf,
            at: 0,
            status,
            err: None,
            _state: PhantomData,
        };
        if !(100..=999).contains(&status) {
            w.err = Some(BuildError::InvalidStatus);
        } else if !reason
            .bytes()
            .all(|c| c == b'\t' || (c >= 0x20 && c != 0x7f))
        {
            w.err = Some(BuildError::InvalidReason);
        }
        let mut d = [0u8; 20];
        let s = dec_digits(u64::from(status), &mut d);
        w.put(b"HTTP/1.1 ");
        w.put(&d[s..]);
        w.put(b" ");
        w.put(reason.as_bytes());
        w.put(b"\r\n");
        w
    }

    /// Adds a header (same checks as requests: token names, no CR/LF/NUL
    /// in values, Content-Length and Transfer-Encoding written by the codec).
    pub fn header(mut self, name: &str, value: &str) -> Self {
        if self.err.is_none()
            && let Err(e) = check_header(name.as_bytes(), value.as_bytes())
        {
            self.err = Some(e);
        }
        self.put(name.as_bytes());
        self.put(b": ");
        self.put(value.as_bytes());
        self.put(b"\r\n");
        self
    }

    /// The body from a slice, with its Content-Length.
    pub fn body(mut self, body: &[u8]) -> ResponseWriter<'a, Complete> {
        self.content_length(body.len() as u64);
        self.put(b"\r\n");
        self.put(body);
        self.into_state()
    }

    /// A body serialized by `write`; the Content-Length is written
    /// afterwards and the body moved behind it.
    pub fn body_writer(
        mut self,
        write: impl FnOnce(&mut BodyWriter<'_>) -> core::fmt::Result,
    ) -> ResponseWriter<'a, Complete> {
        // Room for the longest Content-Length line and the blank line.
        const RESERVE: usize = 16 + 20 + 4;
        if self.err.is_none() && self.at + RESERVE > self.buf.len() {
            self.err = Some(BuildError::BufferFull);
        }
        if self.err.is_some() {
            return self.into_state();
        }
        let start = self.at + RESERVE;
        let mut w = BodyWriter::new(&mut self.buf[start..]);
        let res = write(&mut w);
        let (len, overflow) = (w.len(), w.overflowed());
        if overflow {
            self.err = Some(BuildError::BufferFull);
        } else if res.is_err() {
            self.err = Some(BuildError::BodyWriter);
        } else {
            self.content_length(len as u64);
            self.put(b"\r\n");
            self.buf.copy_within(start..start + len, self.at);
            self.at += len;
        }
        self.into_state()
    }

    /// Ends a response without a body: `Content-Length: 0`, except for
    /// 1xx, 204 and 304 which carry no length.
    pub fn finish(mut self) -> Result<usize, BuildError> {
        let s = self.status;
        if !((100..200).contains(&s) || s == 204 || s == 304) {
            self.content_length(0);
        }
        self.put(b"\r\n");
        self.into_state::<Complete>().finish()
    }

    /// Ends the head only: for a response to HEAD (`content_length` is
    /// what a GET would carry), a 101 upgrade, or a body delimited by
    /// closing the connection (`None`, then write the body raw).
    pub fn finish_head(mut self, content_length: Option<u64>) -> Result<usize, BuildError> {
        if let Some(n) = content_length {
            self.content_length(n);
        }
        self.put(b"\r\n");
        self.into_state::<Complete>().finish()
    }

    /// Switches to a chunked body: write chunks, then finish.
    pub fn chunked(mut self) -> ChunkedWriter<'a> {
        self.put(b"Transfer-Encoding: chunked\r\n\r\n");
        ChunkedWriter {
            inner: self.into_state(),
        }
    }
}

impl ResponseWriter<'_, Complete> {
    /// The number of bytes written at the front of the buffer, or the first error.
    pub fn finish(self) -> Result<usize, BuildError> {
        match self.err {
            Some(e) => Err(e),
            None => Ok(self.at),
        }
    }
}

/// Writes a chunked body after a [`ResponseWriter`]'s head.
#[derive(Debug)]
#[must_use = "a chunked body is only complete after finish()"]
pub struct ChunkedWriter<'a> {
    inner: ResponseWriter<'a, Complete>,
}

impl ChunkedWriter<'_> {
    /// Appends one chunk (an empty slice writes nothing: a zero-size chunk
    /// would end the body).
    pub fn chunk(&mut self, data: &[u8]) -> &mut Self {
        if data.is_empty() {
            return self;
        }
        let mut h = [0u8; 16];
        let s = hex_digits(data.len() as u64, &mut h);
        self.inner.put(&h[s..]);
        self.inner.put(b"\r\n");
        self.inner.put(data);
        self.inner.put(b"\r\n");
        self
    }

    /// Ends the body, with trailer fields.
    pub fn finish_with_trailers(mut self, trailers: &[(&str, &str)]) -> Result<usize, BuildError> {
        self.inner.put(b"0\r\n");
        for (n, v) in trailers {
            if self.inner.err.is_none()
                && let Err(e) = check_header(n.as_bytes(), v.as_bytes())
            {
                self.inner.err = Some(e);
            }
            self.inner.put(n.as_bytes());
            self.inner.put(b": ");
            self.inner.put(v.as_bytes());
            self.inner.put(b"\r\n");
        }
        self.inner.put(b"\r\n");
        self.inner.finish()
    }

    /// Ends the body.
    pub fn finish(self) -> Result<usize, BuildError> {
        self.finish_with_trailers(&[])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::fmt::Write;

    #[test]
    fn bodies() {
        let mut out = [0u8; 256];
        let n = ResponseWriter::new(&mut out, 404, "Not Found")
            .body_writer(|w| write!(w, "missing {}", 42))
            .finish()
            .unwrap();
        assert_eq!(
            &out[..n],
            b"HTTP/1.1 404 Not Found\r\nContent-Length: 10\r\n\r\nmissing 42"
        );
        let n = ResponseWriter::new(&mut out, 204, "No Content")
            .finish()
            .unwrap();
        assert_eq!(&out[..n], b"HTTP/1.1 204 No Content\r\n\r\n");
        let n = ResponseWriter::new(&mut out, 200, "OK").finish().unwrap();
        assert_eq!(&out[..n], b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
        let n = ResponseWriter::new(&mut out, 101, "Switching Protocols")
            .header("Upgrade", "websocket")
            .finish_head(None)
            .unwrap();
        assert_eq!(
            &out[..n],
            b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n"
        );
        let mut w = ResponseWriter::new(&mut out, 200, "OK").chunked();
        w.chunk(b"hello ").chunk(b"").chunk(&[b'x'; 17]);
        let n = w.finish_with_trailers(&[("X-Sum", "1")]).unwrap();
        assert_eq!(
            &out[..n],
            &b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nhello \r\n11\r\nxxxxxxxxxxxxxxxxx\r\n0\r\nX-Sum: 1\r\n\r\n"[..]
        );
    }

    #[test]
    fn errors() {
        let mut out = [0u8; 64];
        assert_eq!(
            ResponseWriter::new(&mut out, 99, "x").finish(),
            Err(BuildError::InvalidStatus)
        );
        assert_eq!(
            ResponseWriter::new(&mut out, 200, "O\r\nK").finish(),
            Err(BuildError::InvalidReason)
        );
        assert_eq!(
            ResponseWriter::new(&mut out, 200, "OK")
                .header("X", "a\nb")
                .finish(),
            Err(BuildError::InvalidHeaderValue)
        );
        assert_eq!(
            ResponseWriter::new(&mut out, 200, "OK")
                .body(&[0; 64])
                .finish(),
            Err(BuildError::BufferFull)
        );
        assert_eq!(
            ResponseWriter::new(&mut out, 200, "OK")
                .body_writer(|w| w.write_str(&"y".repeat(30)))
                .finish(),
            Err(BuildError::BufferFull)
        );
        for cap in 0..50 {
            let mut small = std::vec![0u8; cap];
            let r = ResponseWriter::new(&mut small, 200, "OK")
                .body(b"abc")
                .finish();
            assert_eq!(r.is_ok(), cap >= 41, "cap {cap}");
        }
    }
}
