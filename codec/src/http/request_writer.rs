//! RequestWriter: HTTP/1.1 requests serialized straight into caller storage.
//!
//! Configured once (host, base path, default headers: kept pre-serialized at
//! the front of the storage), then one typestate [`RequestBuilder`] per
//! request: request line and query first ([`Line`]), then headers
//! ([`Fields`]), then a body ([`Complete`]). Errors are latched and
//! reported by [`RequestBuilder::finish`], so calls chain. The finished
//! [`Request`] borrows the wire bytes: nothing is allocated or copied twice.
//!
//! ```
//! use tickwire_codec::http::RequestWriter;
//! let mut w = RequestWriter::new([0u8; 1024], "api.example.com").unwrap();
//! w.set_base_path("/api/v3").unwrap();
//! w.default_header("Accept", "application/json").unwrap();
//! let req = w
//!     .post("/order")
//!     .query("symbol", "BTC-USD")
//!     .header("Content-Type", "application/json")
//!     .body(br#"{"side":"buy"}"#)
//!     .finish()
//!     .unwrap();
//! assert!(req.as_bytes().starts_with(b"POST /api/v3/order?symbol=BTC-USD HTTP/1.1\r\n"));
//! ```

use core::marker::PhantomData;
use core::ptr::NonNull;

use super::error::BuildError;
use super::method::Method;
use super::percent;
use super::syntax::{dec_digits, eq_ignore_case, is_field_value, is_token};
use crate::simd::copy::copy;

/// Headers the codec writes itself; setting them by hand is
/// [`BuildError::ReservedHeader`] (a second Content-Length is a smuggling vector).
#[inline]
pub(crate) fn is_reserved(name: &[u8]) -> bool {
    eq_ignore_case(name, b"content-length")
        || eq_ignore_case(name, b"transfer-encoding")
        || eq_ignore_case(name, b"host")
}

/// Width reserved for a Content-Length filled in after the body (`u64::MAX` has 20 digits).
const CL_WIDTH: usize = 20;

/// Serializes requests for one host into storage `B`.
#[derive(Debug, Clone)]
pub struct RequestWriter<B> {
    buf: B,
    /// The configuration's extent (`base_len`, `fixed_end`) and the request
    /// being built (its builder points here).
    cursor: Cursor,
}

impl<B: AsRef<[u8]> + AsMut<[u8]>> RequestWriter<B> {
    /// A writer for requests to `host` (`name` or `name:port`).
    ///
    /// ```
    /// use tickwire_codec::http::RequestWriter;
    ///
    /// let mut w = RequestWriter::new([0u8; 1024], "api.example.com").unwrap();
    /// let req = w.get("/time").finish().unwrap();
    /// assert!(req.as_bytes().starts_with(b"GET /time HTTP/1.1\r\nHost: api.example.com\r\n"));
    /// ```
    pub fn new(storage: B, host: &str) -> Result<Self, BuildError> {
        let h = host.as_bytes();
        if h.is_empty()
            || h.iter()
                .any(|&c| c <= b' ' || c >= 0x7f || matches!(c, b'/' | b'?' | b'#' | b'@'))
        {
            return Err(BuildError::InvalidHost);
        }
        let mut w = RequestWriter {
            buf: storage,
            cursor: Cursor {
                cap: 0,
                start: 0,
                at: 0,
                base_len: 0,
                fixed_end: 0,
                method: Method::Get,
                has_query: false,
                err: None,
            },
        };
        w.append_fixed(&[b"Host: ", h, b"\r\n"])?;
        Ok(w)
    }

    /// Sets the path prefix of every request (`/api/v3`; a trailing `/` is dropped).
    pub fn set_base_path(&mut self, base: &str) -> Result<(), BuildError> {
        let mut b = base.as_bytes();
        while let [rest @ .., b'/'] = b {
            b = rest;
        }
        // Target bytes only, and no query: `(valid, has '?')` must be `(true, false)`.
        if !b.is_empty() && (b[0] != b'/' || super::scan::path(b) != (true, false)) {
            return Err(BuildError::InvalidPath);
        }
        let c = &mut self.cursor;
        let headers = c.fixed_end - c.base_len;
        if b.len() + headers > self.buf.as_ref().len() {
            return Err(BuildError::BufferFull);
        }
        let buf = self.buf.as_mut();
        buf.copy_within(c.base_len..c.fixed_end, b.len());
        buf[..b.len()].copy_from_slice(b);
        c.base_len = b.len();
        c.fixed_end = b.len() + headers;
        Ok(())
    }

    /// Adds a header sent with every request.
    pub fn default_header(&mut self, name: &str, value: &str) -> Result<(), BuildError> {
        check_header(name.as_bytes(), value.as_bytes())?;
        self.append_fixed(&[name.as_bytes(), b": ", value.as_bytes(), b"\r\n"])
    }

    fn append_fixed(&mut self, parts: &[&[u8]]) -> Result<(), BuildError> {
        let len: usize = parts.iter().map(|p| p.len()).sum();
        let buf = self.buf.as_mut();
        let end = &mut self.cursor.fixed_end;
        if *end + len > buf.len() {
            return Err(BuildError::BufferFull);
        }
        for p in parts {
            buf[*end..*end + p.len()].copy_from_slice(p);
            *end += p.len();
        }
        Ok(())
    }

    /// Bytes of storage taken by the configuration (the rest is for requests).
    pub fn config_len(&self) -> usize {
        self.cursor.fixed_end
    }

    /// Starts a request. `path` starts with `/`, is already percent-encoded
    /// where needed and may carry a query; it is appended to the base path.
    ///
    /// ```
    /// use tickwire_codec::http::{Method, RequestWriter};
    ///
    /// let mut w = RequestWriter::new([0u8; 1024], "api.example.com").unwrap();
    /// let req = w.request(Method::Delete, "/order").query("id", "7").finish().unwrap();
    /// assert!(req.as_bytes().starts_with(b"DELETE /order?id=7 HTTP/1.1\r\n"));
    /// ```
    pub fn request(&mut self, method: Method, path: &str) -> RequestBuilder<'_, Line> {
        let (base_len, fixed_end) = (self.cursor.base_len, self.cursor.fixed_end);
        let buf = self.buf.as_mut();
        // The configuration's extent stays; the rest starts anew.
        self.cursor = Cursor {
            cap: buf.len(),
            start: fixed_end,
            at: fixed_end,
            method,
            has_query: false,
            err: None,
            ..self.cursor
        };
        let mut b = RequestBuilder {
            ptr: NonNull::from(&mut *buf).cast(),
            cursor: &mut self.cursor,
            _state: PhantomData,
        };
        let p = path.as_bytes();
        let (valid, query) = super::scan::path(p);
        if p.first() != Some(&b'/') || !valid {
            b.cursor.err = Some(BuildError::InvalidPath);
            return b;
        }
        b.cursor.has_query = query;
        b.put(method.as_str().as_bytes());
        b.put(b" ");
        if b.cursor.err.is_none() && base_len > 0 {
            let at = b.cursor.at;
            if at + base_len > b.cursor.cap {
                b.cursor.err = Some(BuildError::BufferFull);
            } else {
                b.buf().copy_within(..base_len, at);
                b.cursor.at += base_len;
            }
        }
        b.put(p);
        b
    }

    /// `GET path`
    ///
    /// ```
    /// use tickwire_codec::http::RequestWriter;
    ///
    /// let mut w = RequestWriter::new([0u8; 1024], "api.example.com").unwrap();
    /// let req = w.get("/time").finish().unwrap();
    /// assert!(req.as_bytes().starts_with(b"GET /time HTTP/1.1\r\n"));
    /// ```
    pub fn get(&mut self, path: &str) -> RequestBuilder<'_, Line> {
        self.request(Method::Get, path)
    }
    /// `POST path`
    ///
    /// ```
    /// use tickwire_codec::http::RequestWriter;
    ///
    /// let mut w = RequestWriter::new([0u8; 1024], "api.example.com").unwrap();
    /// let req = w.post("/order").body(b"qty=1").finish().unwrap();
    /// assert!(req.as_bytes().starts_with(b"POST /order HTTP/1.1\r\n"));
    /// ```
    pub fn post(&mut self, path: &str) -> RequestBuilder<'_, Line> {
        self.request(Method::Post, path)
    }
    /// `PUT path`
    ///
    /// ```
    /// use tickwire_codec::http::RequestWriter;
    ///
    /// let mut w = RequestWriter::new([0u8; 1024], "api.example.com").unwrap();
    /// let req = w.put("/order/1").body(b"qty=2").finish().unwrap();
    /// assert!(req.as_bytes().starts_with(b"PUT /order/1 HTTP/1.1\r\n"));
    /// ```
    pub fn put(&mut self, path: &str) -> RequestBuilder<'_, Line> {
        self.request(Method::Put, path)
    }
    /// `DELETE path`
    ///
    /// ```
    /// use tickwire_codec::http::RequestWriter;
    ///
    /// let mut w = RequestWriter::new([0u8; 1024], "api.example.com").unwrap();
    /// let req = w.delete("/order/1").finish().unwrap();
    /// assert!(req.as_bytes().starts_with(b"DELETE /order/1 HTTP/1.1\r\n"));
    /// ```
    pub fn delete(&mut self, path: &str) -> RequestBuilder<'_, Line> {
        self.request(Method::Delete, path)
    }
    /// `PATCH path`
    ///
    /// ```
    /// use tickwire_codec::http::RequestWriter;
    ///
    /// let mut w = RequestWriter::new([0u8; 1024], "api.example.com").unwrap();
    /// let req = w.patch("/order/1").body(b"{}").finish().unwrap();
    /// assert!(req.as_bytes().starts_with(b"PATCH /order/1 HTTP/1.1\r\n"));
    /// ```
    pub fn patch(&mut self, path: &str) -> RequestBuilder<'_, Line> {
        self.request(Method::Patch, path)
    }
    /// `HEAD path`
    ///
    /// ```
    /// use tickwire_codec::http::RequestWriter;
    ///
    /// let mut w = RequestWriter::new([0u8; 1024], "api.example.com").unwrap();
    /// let req = w.head("/status").finish().unwrap();
    /// assert!(req.as_bytes().starts_with(b"HEAD /status HTTP/1.1\r\n"));
    /// ```
    pub fn head(&mut self, path: &str) -> RequestBuilder<'_, Line> {
        self.request(Method::Head, path)
    }
}

/// Checks a header before it is written.
#[inline(always)]
pub(crate) fn check_header(name: &[u8], value: &[u8]) -> Result<(), BuildError> {
    if !is_token(name) {
        return Err(BuildError::InvalidHeaderName);
    }
    if is_reserved(name) {
        return Err(BuildError::ReservedHeader);
    }
    if !is_field_value(value) {
        return Err(BuildError::InvalidHeaderValue);
    }
    Ok(())
}

/// Builder state: the request line is open; `query` may still be added.
#[derive(Debug)]
pub struct Line;
/// Builder state: the header section is open.
#[derive(Debug)]
pub struct Fields;
/// Builder state: the body is written; only `finish` remains.
#[derive(Debug)]
pub struct Complete;

mod sealed {
    /// A state in which headers and a body may still be written.
    pub trait Open {
        /// Whether the request line is already closed.
        const IN_HEADERS: bool;
    }
    impl Open for super::Line {
        const IN_HEADERS: bool = false;
    }
    impl Open for super::Fields {
        const IN_HEADERS: bool = true;
    }
}

/// Where a request stands while it is built, and the configuration's
/// extent: kept in the writer, so the builder that chains by value is two
/// pointers (its storage and this), passed and returned in registers, not a
/// struct copied in and out of every call.
#[derive(Debug, Clone, Copy)]
struct Cursor {
    /// Length of the storage.
    cap: usize,
    start: usize,
    at: usize,
    /// The base path occupies `buf[..base_len]`.
    base_len: usize,
    /// The pre-serialized `Host` and default headers occupy `buf[base_len..fixed_end]`.
    fixed_end: usize,
    method: Method,
    has_query: bool,
    err: Option<BuildError>,
}

/// One request being serialized; see the [module docs](self).
#[derive(Debug)]
#[must_use = "a request is only usable after finish()"]
pub struct RequestBuilder<'w, S> {
    /// The writer's storage: `cursor.cap` bytes, borrowed mutably for `'w`
    /// (the writer is, through `cursor`, and nothing else reaches it).
    ptr: NonNull<u8>,
    cursor: &'w mut Cursor,
    _state: PhantomData<(&'w mut [u8], S)>,
}

// SAFETY: a builder is an exclusive borrow of the writer's storage and
// cursor (`&mut [u8]` and `&mut Cursor`, both Send and Sync).
unsafe impl<S> Send for RequestBuilder<'_, S> {}
// SAFETY: as above; `&self` methods only read.
unsafe impl<S> Sync for RequestBuilder<'_, S> {}

impl<'w, S> RequestBuilder<'w, S> {
    /// The storage, for as long as `self` is borrowed.
    #[inline(always)]
    fn buf(&mut self) -> &mut [u8] {
        // SAFETY: `ptr` and `cap` are the writer's storage, borrowed
        // mutably for `'w` by this builder alone; the slice borrows `self`.
        unsafe { core::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.cursor.cap) }
    }

    /// The storage for all of `'w` (the builder is consumed).
    #[inline(always)]
    fn into_buf(self) -> &'w mut [u8] {
        // SAFETY: as in `buf`; `self` is gone, so nothing else reaches it.
        unsafe { core::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.cursor.cap) }
    }

    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        if self.cursor.err.is_some() {
            return;
        }
        let at = self.cursor.at;
        match self.buf().get_mut(at..at + bytes.len()) {
            Some(dst) => {
                copy(dst, bytes);
                self.cursor.at += bytes.len();
            }
            None => self.cursor.err = Some(BuildError::BufferFull),
        }
    }

    /// Appends a header line `name: value\r\n` with one bounds check.
    #[inline]
    fn put_field(&mut self, name: &[u8], value: &[u8]) {
        if self.cursor.err.is_some() {
            return;
        }
        let (n, v) = (name.len(), value.len());
        let len = n.checked_add(v).and_then(|x| x.checked_add(4));
        let at = self.cursor.at;
        let Some(dst) = len.and_then(|len| self.buf().get_mut(at..)?.get_mut(..len)) else {
            self.cursor.err = Some(BuildError::BufferFull);
            return;
        };
        let (d_name, rest) = dst.split_at_mut(n);
        let (d_sep, rest) = rest.split_at_mut(2);
        let (d_value, d_end) = rest.split_at_mut(v);
        copy(d_name, name);
        d_sep.copy_from_slice(b": ");
        copy(d_value, value);
        d_end.copy_from_slice(b"\r\n");
        self.cursor.at += n + v + 4;
    }

    #[inline]
    fn into_state<T>(self) -> RequestBuilder<'w, T> {
        RequestBuilder {
            ptr: self.ptr,
            cursor: self.cursor,
            _state: PhantomData,
        }
    }

    /// The method of this request.
    pub fn method(&self) -> Method {
        self.cursor.method
    }
}

impl<'w> RequestBuilder<'w, Line> {
    /// Appends `key=value` to the query, both percent-encoded (RFC 3986
    /// unreserved characters kept).
    pub fn query(self, key: &str, value: &str) -> Self {
        self.query_bytes(key.as_bytes(), value.as_bytes())
    }

    /// [`query`](Self::query) with an integer value, written without formatting machinery.
    pub fn query_u64(self, key: &str, value: u64) -> Self {
        let mut d = [0u8; 20];
        let s = dec_digits(value, &mut d);
        self.query_bytes(key.as_bytes(), &d[s..])
    }

    /// [`query`](Self::query) over raw bytes.
    pub fn query_bytes(mut self, key: &[u8], value: &[u8]) -> Self {
        let sep: &[u8] = if self.cursor.has_query { b"&" } else { b"?" };
        self.cursor.has_query = true;
        self.put(sep);
        self.put_encoded(key);
        self.put(b"=");
        self.put_encoded(value);
        self
    }

    fn put_encoded(&mut self, src: &[u8]) {
        if self.cursor.err.is_some() {
            return;
        }
        let at = self.cursor.at;
        match percent::encode_into(src, &mut self.buf()[at..]) {
            Some(n) => self.cursor.at += n,
            None => self.cursor.err = Some(BuildError::BufferFull),
        }
    }
}

impl<'w, S: sealed::Open> RequestBuilder<'w, S> {
    /// Ends the request line and writes the configured headers (once).
    fn open_headers(&mut self) {
        if S::IN_HEADERS {
            return;
        }
        self.put(b" HTTP/1.1\r\n");
        if self.cursor.err.is_some() {
            return;
        }
        let n = self.cursor.fixed_end - self.cursor.base_len;
        let (at, config) = (self.cursor.at, self.cursor.base_len..self.cursor.fixed_end);
        if at + n > self.cursor.cap {
            self.cursor.err = Some(BuildError::BufferFull);
            return;
        }
        self.buf().copy_within(config, at);
        self.cursor.at += n;
    }

    /// Adds a header to this request. A name that is not a token, a value
    /// with CR, LF, NUL or another control byte (header injection), or a
    /// header the codec writes itself (Content-Length, Transfer-Encoding,
    /// Host) is an error reported by `finish`.
    pub fn header(mut self, name: &str, value: &str) -> RequestBuilder<'w, Fields> {
        self.open_headers();
        if self.cursor.err.is_none()
            && let Err(e) = check_header(name.as_bytes(), value.as_bytes())
        {
            self.cursor.err = Some(e);
        }
        self.put_field(name.as_bytes(), value.as_bytes());
        self.into_state()
    }

    fn content_length(&mut self, n: u64) {
        self.put(b"Content-Length: ");
        self.put_decimal(n);
        self.put(b"\r\n\r\n");
    }

    /// `n` in decimal, written straight into the buffer. (Not through a stack array
    /// copied afterwards: byte stores read back by one wider load cannot be forwarded,
    /// and when that array straddled a cache line the whole build took ~80% longer,
    /// depending only on where the stack happened to sit.)
    #[inline]
    fn put_decimal(&mut self, n: u64) {
        if self.cursor.err.is_some() {
            return;
        }
        let digits = decimal_len(n);
        let at = self.cursor.at;
        match self.buf().get_mut(at..at + digits) {
            Some(dst) => {
                let mut v = n;
                for b in dst.iter_mut().rev() {
                    *b = b'0' + (v % 10) as u8;
                    v /= 10;
                }
                self.cursor.at += digits;
            }
            None => self.cursor.err = Some(BuildError::BufferFull),
        }
    }

    /// The body from a slice, with its Content-Length.
    pub fn body(mut self, body: &[u8]) -> RequestBuilder<'w, Complete> {
        self.open_headers();
        self.content_length(body.len() as u64);
        self.put(body);
        self.into_state()
    }

    /// A JSON body: `Content-Type: application/json`, then the bytes as they are
    /// (see [`body`](Self::body)); the same call as the transport's REST request
    /// builders.
    ///
    /// ```
    /// use tickwire_codec::http::RequestWriter;
    ///
    /// let mut w = RequestWriter::new([0u8; 512], "api.example.com").unwrap();
    /// let req = w.post("/order").json_bytes(br#"{"qty":"1"}"#).finish().unwrap();
    /// let text = core::str::from_utf8(req.as_bytes()).unwrap();
    /// assert!(text.contains("Content-Type: application/json\r\n"));
    /// assert!(text.ends_with(r#"{"qty":"1"}"#));
    /// ```
    pub fn json_bytes(self, json: &[u8]) -> RequestBuilder<'w, Complete> {
        self.header("Content-Type", "application/json").body(json)
    }

    /// A body of exactly `len` bytes written in place by `fill` (e.g. a
    /// binary encoder), with its Content-Length.
    pub fn body_fixed(
        mut self,
        len: usize,
        fill: impl FnOnce(&mut [u8]),
    ) -> RequestBuilder<'w, Complete> {
        self.open_headers();
        self.content_length(len as u64);
        if self.cursor.err.is_none() {
            let at = self.cursor.at;
            match self.buf().get_mut(at..at + len) {
                Some(dst) => {
                    fill(dst);
                    self.cursor.at += len;
                }
                None => self.cursor.err = Some(BuildError::BufferFull),
            }
        }
        self.into_state()
    }

    /// A body serialized by `write` straight into the wire buffer through a
    /// [`BodyWriter`] (`core::fmt::Write` and byte writes). The
    /// Content-Length is filled in afterwards: a 20-byte field is reserved
    /// and the head is shifted over the unused part (a copy of the head,
    /// never of the body).
    pub fn body_writer(
        mut self,
        write: impl FnOnce(&mut BodyWriter<'_>) -> core::fmt::Result,
    ) -> RequestBuilder<'w, Complete> {
        self.open_headers();
        self.put(b"Content-Length: ");
        let field = self.cursor.at;
        self.put(&[b'0'; CL_WIDTH]);
        self.put(b"\r\n\r\n");
        if self.cursor.err.is_some() {
            return self.into_state();
        }
        let at = self.cursor.at;
        let mut w = BodyWriter {
            buf: &mut self.buf()[at..],
            len: 0,
            overflow: false,
        };
        let res = write(&mut w);
        let (len, overflow) = (w.len, w.overflow);
        if overflow {
            self.cursor.err = Some(BuildError::BufferFull);
        } else if res.is_err() {
            self.cursor.err = Some(BuildError::BodyWriter);
        } else {
            let mut d = [0u8; 20];
            let s = dec_digits(len as u64, &mut d);
            let digits = &d[s..];
            let slack = CL_WIDTH - digits.len();
            let start = self.cursor.start;
            self.buf()[field + slack..field + CL_WIDTH].copy_from_slice(digits);
            self.buf().copy_within(start..field, start + slack);
            self.cursor.start += slack;
            self.cursor.at += len;
        }
        self.into_state()
    }

    /// Ends a request without a body (`Content-Length: 0` for POST, PUT and
    /// PATCH, which servers otherwise answer with 411).
    pub fn finish(mut self) -> Result<Request<'w>, BuildError> {
        self.open_headers();
        if self.cursor.method.expects_body() {
            self.put(b"Content-Length: 0\r\n");
        }
        self.put(b"\r\n");
        self.into_state::<Complete>().finish()
    }
}

impl<'w> RequestBuilder<'w, Complete> {
    /// The finished request, or the first error met while building it.
    pub fn finish(self) -> Result<Request<'w>, BuildError> {
        if let Some(e) = self.cursor.err {
            return Err(e);
        }
        let (start, at, method) = (self.cursor.start, self.cursor.at, self.cursor.method);
        Ok(Request {
            bytes: &self.into_buf()[start..at],
            method,
        })
    }
}

/// Where [`RequestBuilder::body_writer`] serializes: the free part of the
/// wire buffer. Writing past its end fails and the request reports
/// [`BuildError::BufferFull`].
#[derive(Debug)]
pub struct BodyWriter<'a> {
    buf: &'a mut [u8],
    len: usize,
    overflow: bool,
}

impl<'a> BodyWriter<'a> {
    pub(crate) fn new(buf: &'a mut [u8]) -> Self {
        BodyWriter {
            buf,
            len: 0,
            overflow: false,
        }
    }

    pub(crate) fn overflowed(&self) -> bool {
        self.overflow
    }

    /// Appends bytes, whole or not at all.
    #[inline]
    pub fn write_bytes(&mut self, bytes: &[u8]) -> Result<(), crate::buf::BufferFull> {
        match self.buf.get_mut(self.len..self.len + bytes.len()) {
            Some(dst) => {
                copy(dst, bytes);
                self.len += bytes.len();
                Ok(())
            }
            None => {
                self.overflow = true;
                Err(crate::buf::BufferFull)
            }
        }
    }

    /// Free space for an encoder that writes in place; then [`advance`](Self::advance).
    #[inline]
    pub fn spare_mut(&mut self) -> &mut [u8] {
        &mut self.buf[self.len..]
    }

    /// Marks `n` bytes of [`spare_mut`](Self::spare_mut) as written (clamped).
    #[inline]
    pub fn advance(&mut self, n: usize) {
        self.len = (self.len + n).min(self.buf.len());
    }

    /// Body bytes written so far.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing was written yet.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl core::fmt::Write for BodyWriter<'_> {
    #[inline]
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        self.write_bytes(s.as_bytes()).map_err(|_| core::fmt::Error)
    }
}

/// A serialized request, borrowing the writer's storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request<'a> {
    bytes: &'a [u8],
    method: Method,
}

impl<'a> Request<'a> {
    /// The wire bytes: write them to the connection.
    #[inline]
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The request method (tell the response reader when it is HEAD).
    #[inline]
    pub fn method(&self) -> Method {
        self.method
    }

    /// Length on the wire.
    #[inline]
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Always false: a request has at least a request line.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
}

/// How many decimal digits `n` has (1 for 0).
#[inline]
fn decimal_len(n: u64) -> usize {
    let mut len = 1;
    let mut v = n;
    while v >= 10 {
        v /= 10;
        len += 1;
    }
    len
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::fmt::Write;

    fn writer() -> RequestWriter<[u8; 512]> {
        let mut w = RequestWriter::new([0u8; 512], "api.example.com:8443").unwrap();
        w.default_header("User-Agent", "tickwire").unwrap();
        w.set_base_path("/api/v3/").unwrap();
        w
    }

    #[test]
    fn content_length_at_every_digit_count() {
        let body = [b'x'; 100_000];
        let mut w = RequestWriter::new(std::vec![0u8; 101_000], "h").unwrap();
        for n in [
            0usize, 1, 9, 10, 99, 100, 999, 1000, 9999, 10_000, 99_999, 100_000,
        ] {
            if cfg!(miri) && n > 10_000 {
                continue;
            }
            let req = w.post("/").body(&body[..n]).finish().unwrap();
            let wire = req.as_bytes();
            let want = std::format!("Content-Length: {n}\r\n\r\n");
            let at = wire
                .windows(want.len())
                .position(|x| x == want.as_bytes())
                .unwrap_or_else(|| panic!("no {want:?}"));
            assert_eq!(wire.len(), at + want.len() + n, "{n}");
        }
        assert_eq!(decimal_len(u64::MAX), 20);
    }

    #[test]
    fn get_with_query_and_headers() {
        let mut w = writer();
        let req = w
            .get("/ticker")
            .query("symbol", "BTC-USD")
            .query("note", "a b&c=d/é")
            .query_u64("limit", 100)
            .header("X-Key", "k1")
            .finish()
            .unwrap();
        assert_eq!(req.method(), Method::Get);
        assert_eq!(
            req.as_bytes(),
            &b"GET /api/v3/ticker?symbol=BTC-USD&note=a%20b%26c%3Dd%2F%C3%A9&limit=100 HTTP/1.1\r\n\
               Host: api.example.com:8443\r\nUser-Agent: tickwire\r\nX-Key: k1\r\n\r\n"[..]
        );
    }

    #[test]
    fn path_with_query_continues_it() {
        let mut w = RequestWriter::new([0u8; 256], "h").unwrap();
        let req = w.delete("/o?id=1").query("x", "2").finish().unwrap();
        assert_eq!(
            req.as_bytes(),
            b"DELETE /o?id=1&x=2 HTTP/1.1\r\nHost: h\r\n\r\n"
        );
    }

    #[test]
    fn post_bodies_three_ways_are_identical() {
        let json = br#"{"symbol":"BTC-USD","side":"buy","qty":"0.5"}"#;
        let mut w = writer();
        let a = std::vec::Vec::from(
            w.post("/order")
                .header("Content-Type", "application/json")
                .body(json)
                .finish()
                .unwrap()
                .as_bytes(),
        );
        let b = std::vec::Vec::from(
            w.post("/order")
                .header("Content-Type", "application/json")
                .body_writer(|bw| {
                    bw.write_str(r#"{"symbol":"BTC-USD","#)?;
                    bw.write_bytes(br#""side":"buy","#)
                        .map_err(|_| core::fmt::Error)?;
                    write!(bw, "\"qty\":\"{}\"}}", 0.5)
                })
                .finish()
                .unwrap()
                .as_bytes(),
        );
        let c = std::vec::Vec::from(
            w.post("/order")
                .header("Content-Type", "application/json")
                .body_fixed(json.len(), |buf| buf.copy_from_slice(json))
                .finish()
                .unwrap()
                .as_bytes(),
        );
        assert_eq!(a, b);
        assert_eq!(a, c);
        let mut want = std::vec::Vec::from(
            &b"POST /api/v3/order HTTP/1.1\r\nHost: api.example.com:8443\r\nUser-Agent: tickwire\r\n\
               Content-Type: application/json\r\nContent-Length: 45\r\n\r\n"[..],
        );
        want.extend_from_slice(json);
        assert_eq!(a, want);
    }

    #[test]
    fn empty_body_writer_and_bodyless_post() {
        let mut w = RequestWriter::new([0u8; 256], "h").unwrap();
        let req = w.put("/x").body_writer(|_| Ok(())).finish().unwrap();
        assert_eq!(
            req.as_bytes(),
            b"PUT /x HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n"
        );
        let req = w.post("/x").finish().unwrap();
        assert_eq!(
            req.as_bytes(),
            b"POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n"
        );
        let req = w.head("/x").finish().unwrap();
        assert_eq!(req.as_bytes(), b"HEAD /x HTTP/1.1\r\nHost: h\r\n\r\n");
    }

    #[test]
    fn header_injection_is_rejected() {
        let mut w = RequestWriter::new([0u8; 256], "h").unwrap();
        let cases: [(&str, &str, BuildError); 8] = [
            ("X-A", "v\r\nX-Evil: 1", BuildError::InvalidHeaderValue),
            ("X-A", "v\nX", BuildError::InvalidHeaderValue),
            ("X-A", "v\0", BuildError::InvalidHeaderValue),
            ("X-A\r\nX-Evil", "v", BuildError::InvalidHeaderName),
            ("X A", "v", BuildError::InvalidHeaderName),
            ("", "v", BuildError::InvalidHeaderName),
            ("content-length", "5", BuildError::ReservedHeader),
            ("Transfer-Encoding", "chunked", BuildError::ReservedHeader),
        ];
        for (n, v, e) in cases {
            assert_eq!(
                w.get("/").header(n, v).finish().unwrap_err(),
                e,
                "{n:?}: {v:?}"
            );
            assert_eq!(w.default_header(n, v).unwrap_err(), e);
        }
        assert_eq!(
            RequestWriter::new([0u8; 64], "h\r\nX: y").unwrap_err(),
            BuildError::InvalidHost
        );
        assert_eq!(w.get("x").finish().unwrap_err(), BuildError::InvalidPath);
        assert_eq!(w.get("/a b").finish().unwrap_err(), BuildError::InvalidPath);
        assert_eq!(
            w.get("/a\r\n").finish().unwrap_err(),
            BuildError::InvalidPath
        );
        assert_eq!(w.set_base_path("api").unwrap_err(), BuildError::InvalidPath);
        // A base path is target bytes without a query, short (byte-wise scan) or
        // long (block scan).
        for bad in [
            "/a?b",
            "/a#b",
            "/a b",
            "/a\r\nX",
            "/api/v3/orders?x=1",
            "/api/v3/orders#frag",
            "/api/v3/ord ers/x",
            "/api/v3/orders\r\nX: y",
        ] {
            assert_eq!(
                w.set_base_path(bad).unwrap_err(),
                BuildError::InvalidPath,
                "{bad:?}"
            );
        }
        for good in ["/a", "/api/v3/orders/abc-DEF_1.2~x"] {
            w.set_base_path(good).unwrap();
        }
        w.set_base_path("").unwrap();
        // The writer is still usable after errors.
        assert_eq!(
            w.get("/").finish().unwrap().as_bytes(),
            b"GET / HTTP/1.1\r\nHost: h\r\n\r\n"
        );
    }

    /// A bad header is reported as such whether or not it fits.
    #[test]
    fn bad_header_wins_over_buffer_full() {
        // 9 bytes of configuration and 25 of request line and Host: the header is next.
        for cap in 34..80 {
            let mut storage = std::vec![0u8; cap];
            let mut w = RequestWriter::new(&mut storage[..], "h").unwrap();
            let e = w.get("/").header("X-A", "v\r\nX-Evil: 1").finish();
            assert_eq!(e.unwrap_err(), BuildError::InvalidHeaderValue, "cap {cap}");
            let e = w.get("/").header("X:A", "v").finish();
            assert_eq!(e.unwrap_err(), BuildError::InvalidHeaderName, "cap {cap}");
            let e = w.get("/").header("Host", "v").finish();
            assert_eq!(e.unwrap_err(), BuildError::ReservedHeader, "cap {cap}");
            let ok = w.get("/").header("X-Ok_1", "v\tw").finish();
            assert!(
                matches!(ok, Ok(_) | Err(BuildError::BufferFull)),
                "cap {cap}"
            );
            assert_eq!(ok.is_ok(), cap >= 49, "cap {cap}");
        }
    }

    #[test]
    fn buffer_too_small_is_an_error_at_every_size() {
        let json = [b'x'; 100];
        let full = {
            let mut w = RequestWriter::new([0u8; 512], "h").unwrap();
            let len = w
                .post("/o")
                .query("a", "b c")
                .header("K", "V")
                .body(&json)
                .finish()
                .unwrap()
                .len();
            len + w.config_len()
        };
        for cap in 0..full + 30 {
            let mut storage = std::vec![0u8; cap];
            let Ok(mut w) = RequestWriter::new(&mut storage[..], "h") else {
                assert!(cap < 9);
                continue;
            };
            let a = w
                .post("/o")
                .query("a", "b c")
                .header("K", "V")
                .body(&json)
                .finish();
            assert_eq!(a.is_ok(), cap >= full, "cap {cap}");
            if let Err(e) = a {
                assert_eq!(e, BuildError::BufferFull);
            }
            let b = w
                .post("/o")
                .query("a", "b c")
                .header("K", "V")
                .body_writer(|bw| bw.write_str(core::str::from_utf8(&json).unwrap()))
                .finish();
            // body_writer needs the reserved width during serialization.
            assert_eq!(b.is_ok(), cap >= full + CL_WIDTH - 3, "cap {cap}");
            let c = w
                .post("/o")
                .query("a", "b c")
                .header("K", "V")
                .body_fixed(json.len(), |b| b.copy_from_slice(&json))
                .finish();
            assert_eq!(c.is_ok(), cap >= full, "cap {cap}");
        }
    }

    #[test]
    fn body_writer_error_is_typed() {
        let mut w = RequestWriter::new([0u8; 256], "h").unwrap();
        let e = w.post("/").body_writer(|_| Err(core::fmt::Error)).finish();
        assert_eq!(e.unwrap_err(), BuildError::BodyWriter);
    }
}
