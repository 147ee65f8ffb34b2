//! What the readers learn from a parsed head: header positions (so the
//! head stays zero-copy in the buffer), body framing by RFC 9112 §6 with the
//! request-smuggling cases as errors, and httparse errors made precise.

use super::error::Error;
use super::syntax::{eq_ignore_case, list_contains, list_items, parse_decimal, trim_ows};

/// A header's name and value as offsets into its message.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct HeaderSpan {
    name: (u32, u32),
    value: (u32, u32),
}

impl HeaderSpan {
    /// The spans of a name and a value, as offsets into their message.
    #[inline]
    pub(crate) fn new(name: (usize, usize), value: (usize, usize)) -> Self {
        HeaderSpan {
            name: (name.0 as u32, name.1 as u32),
            value: (value.0 as u32, value.1 as u32),
        }
    }

    #[inline]
    fn name<'a>(&self, msg: &'a [u8]) -> &'a [u8] {
        msg.get(self.name.0 as usize..self.name.1 as usize)
            .unwrap_or_default()
    }

    #[inline]
    fn value<'a>(&self, msg: &'a [u8]) -> &'a [u8] {
        msg.get(self.value.0 as usize..self.value.1 as usize)
            .unwrap_or_default()
    }
}

/// How the body of a message is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    /// No body (HEAD, 1xx, 204, 304, or a request without length).
    None,
    /// Exactly this many bytes.
    Length(u64),
    /// Chunked transfer coding.
    Chunked,
    /// Until the connection closes (responses only).
    Close,
}

/// Framing-relevant facts gathered in the one pass over the headers.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Facts {
    pub content_length: Option<u64>,
    pub transfer_encoding: bool,
    pub chunked: bool,
    pub conn_close: bool,
    pub conn_keep_alive: bool,
}

impl Facts {
    /// The framing when the message may have a body; `close_delimited`
    /// says what no length means (true for responses, false for requests).
    pub fn framing(&self, close_delimited: bool) -> Result<Framing, Error> {
        if self.transfer_encoding {
            if self.content_length.is_some() {
                return Err(Error::ContentLengthWithTransferEncoding);
            }
            return Ok(Framing::Chunked);
        }
        Ok(match self.content_length {
            Some(n) => Framing::Length(n),
            None if close_delimited => Framing::Close,
            None => Framing::None,
        })
    }
}

/// Gathers the framing facts of the headers at `spans` in `msg`, rejecting
/// duplicate and conflicting Content-Length and any Transfer-Encoding other
/// than a single final `chunked`.
#[inline]
pub(crate) fn facts(msg: &[u8], spans: &[HeaderSpan]) -> Result<Facts, Error> {
    let mut f = Facts::default();
    let mut codings = 0u32;
    for s in spans {
        // Only names of the lengths that matter are compared (the length
        // from the span alone: most headers are passed over without
        // slicing the message).
        if !matches!(s.name.1.wrapping_sub(s.name.0), 10 | 14 | 17) {
            continue;
        }
        let name = s.name(msg);
        match name.len() {
            14 if eq_ignore_case(name, b"content-length") => {
                let value = s.value(msg);
                // The usual value is one plain number: no list to split.
                if let (None, Some(n)) = (f.content_length, parse_decimal(value)) {
                    f.content_length = Some(n);
                    continue;
                }
                let mut dup = f.content_length.is_some();
                for item in value.split(|&c| c == b',') {
                    let n = parse_decimal(trim_ows(item)).ok_or(Error::InvalidContentLength)?;
                    match f.content_length {
                        Some(prev) if prev != n => return Err(Error::ConflictingContentLength),
                        Some(_) => dup = true,
                        None => f.content_length = Some(n),
                    }
                }
                if dup {
                    return Err(Error::DuplicateContentLength);
                }
            }
            17 if eq_ignore_case(name, b"transfer-encoding") => {
                f.transfer_encoding = true;
                let mut any = false;
                for coding in list_items(s.value(msg)) {
                    any = true;
                    codings += 1;
                    // A coding may carry parameters: `chunked` never does.
                    if f.chunked {
                        return Err(Error::ChunkedNotLast);
                    }
                    if eq_ignore_case(coding, b"chunked") {
                        f.chunked = true;
                    }
                }
                if !any {
                    return Err(Error::UnsupportedTransferEncoding);
                }
            }
            10 if eq_ignore_case(name, b"connection") => {
                let value = s.value(msg);
                // The usual value is a single option: no list to split.
                if eq_ignore_case(value, b"keep-alive") {
                    f.conn_keep_alive = true;
                } else if eq_ignore_case(value, b"close") {
                    f.conn_close = true;
                } else {
                    f.conn_close |= list_contains(value, b"close");
                    f.conn_keep_alive |= list_contains(value, b"keep-alive");
                }
            }
            _ => {}
        }
    }
    if f.transfer_encoding && (!f.chunked || codings != 1) {
        return Err(Error::UnsupportedTransferEncoding);
    }
    Ok(f)
}

/// The precise error for an httparse failure: NUL bytes and obs-fold are
/// reported as such (httparse folds them into header name/value errors).
///
/// Only the shortest prefix of `data` that `reparse` (the same parser,
/// returning its error) refuses is looked at, so the error does not depend
/// on how many bytes after the offending one had arrived: a head fed byte
/// by byte fails with the same error as one received whole. This search
/// runs on the error path only (O(log n) parses).
pub(crate) fn diagnose(
    data: &[u8],
    e: httparse::Error,
    line_error: Error,
    reparse: impl Fn(&[u8]) -> Option<httparse::Error>,
) -> Error {
    // Invariant: data[..lo] is not refused (empty never is), data[..hi] is, with `e`.
    let (mut lo, mut hi, mut e) = (0, data.len(), e);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        match reparse(&data[..mid]) {
            Some(err) => (hi, e) = (mid, err),
            None => lo = mid,
        }
    }
    let data = &data[..hi];
    let head = match data.windows(4).position(|w| w == b"\r\n\r\n") {
        Some(p) => &data[..p + 4],
        None => data,
    };
    if head.contains(&0) {
        return Error::NulByte;
    }
    if head
        .windows(2)
        .any(|w| w[0] == b'\n' && (w[1] == b' ' || w[1] == b'\t'))
        && head.first().is_some_and(|&c| c != b' ' && c != b'\t')
    {
        return Error::ObsFold;
    }
    match e {
        httparse::Error::HeaderName => Error::InvalidHeaderName,
        httparse::Error::HeaderValue => Error::InvalidHeaderValue,
        httparse::Error::NewLine => Error::InvalidNewLine,
        httparse::Error::Status => Error::InvalidStatus,
        httparse::Error::Token => line_error,
        httparse::Error::TooManyHeaders => Error::TooManyHeaders,
        httparse::Error::Version => Error::InvalidVersion,
    }
}

/// The header section of a received message, borrowed from the reader.
#[derive(Debug, Clone, Copy)]
pub struct Headers<'a> {
    pub(crate) msg: &'a [u8],
    pub(crate) spans: &'a [HeaderSpan],
}

impl<'a> Headers<'a> {
    /// The value of the first header called `name` (ASCII case-insensitive).
    #[inline]
    pub fn get(&self, name: &str) -> Option<&'a [u8]> {
        let name = name.as_bytes();
        self.spans
            .iter()
            .find(|s| eq_ignore_case(s.name(self.msg), name))
            .map(|s| s.value(self.msg))
    }

    /// [`get`](Self::get) as text; `None` as well when the value is not UTF-8.
    #[inline]
    pub fn get_str(&self, name: &str) -> Option<&'a str> {
        self.get(name).and_then(|v| core::str::from_utf8(v).ok())
    }

    /// All values of headers called `name`, in order.
    pub fn get_all<'n>(&self, name: &'n str) -> impl Iterator<Item = &'a [u8]> + 'n
    where
        'a: 'n,
    {
        let msg = self.msg;
        self.spans
            .iter()
            .filter(move |s| eq_ignore_case(s.name(msg), name.as_bytes()))
            .map(move |s| s.value(msg))
    }

    /// Number of header lines.
    #[inline]
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// Whether there are no headers.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// `(name, value)` pairs in order of arrival.
    pub fn iter(&self) -> HeaderIter<'a> {
        HeaderIter {
            msg: self.msg,
            spans: self.spans.iter(),
        }
    }
}

impl<'a> IntoIterator for Headers<'a> {
    type Item = (&'a str, &'a [u8]);
    type IntoIter = HeaderIter<'a>;
    fn into_iter(self) -> HeaderIter<'a> {
        self.iter()
    }
}

/// Iterator over `(name, value)` header pairs.
#[derive(Debug, Clone)]
pub struct HeaderIter<'a> {
    msg: &'a [u8],
    spans: core::slice::Iter<'a, HeaderSpan>,
}

impl<'a> Iterator for HeaderIter<'a> {
    type Item = (&'a str, &'a [u8]);
    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let s = self.spans.next()?;
        // Names were checked as tokens (ASCII) by httparse.
        let name = core::str::from_utf8(s.name(self.msg)).unwrap_or_default();
        Some((name, s.value(self.msg)))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.spans.size_hint()
    }
}

/// The trailer fields of a chunked body, left in place after the data.
#[derive(Debug, Clone, Copy, Default)]
pub struct Trailers<'a> {
    pub(crate) raw: &'a [u8],
}

impl<'a> Trailers<'a> {
    /// `(name, value)` pairs (the decoder checked their syntax).
    pub fn iter(&self) -> impl Iterator<Item = (&'a str, &'a [u8])> + 'a {
        self.raw.split(|&c| c == b'\n').filter_map(|line| {
            let line = line.strip_suffix(b"\r")?;
            let colon = line.iter().position(|&c| c == b':')?;
            let name = core::str::from_utf8(&line[..colon]).ok()?;
            Some((name, trim_ows(&line[colon + 1..])))
        })
    }

    /// The value of the first trailer called `name` (case-insensitive).
    pub fn get(&self, name: &str) -> Option<&'a [u8]> {
        self.iter()
            .find(|(n, _)| eq_ignore_case(n.as_bytes(), name.as_bytes()))
            .map(|(_, v)| v)
    }

    /// Whether there are no trailer fields.
    pub fn is_empty(&self) -> bool {
        self.raw.is_empty()
    }
}
