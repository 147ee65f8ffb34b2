//! The request head parser: request line and header fields of an HTTP/1.x
//! request, read in one pass into header spans over caller storage.
//!
//! It accepts, refuses and reports exactly what `httparse::Request::parse`
//! with the default configuration does (same method, target, version,
//! header names and values, head length; `Ok(None)` where httparse says
//! Partial; the same `httparse::Error` kind where it fails); a differential
//! test holds it to that (`tests/request_differential.rs`). It replaces
//! httparse on the hot path because httparse's SIMD needs its `std` feature
//! (runtime detection through `std`), which a `no_std` codec cannot turn
//! on: a user's build parsed requests byte by byte. The parse itself
//! (dispatch, block paths, header lines) is
//! [`head_parse`](super::head_parse)'s, shared with the response side; this
//! module holds the request line (its usual form a block at a time in
//! [`head_blocks`](super::head_blocks)).
//!
//! The request line, as httparse reads it:
//! - empty lines (CRLF or LF) before it are skipped;
//! - a method token (tchar), one SP, a target of bytes `!`..=`~` or
//!   obs-text that must be UTF-8 (else `Token`), one SP, `HTTP/1.0` or
//!   `HTTP/1.1`, then CRLF or a bare LF.

use httparse::Error as E;

pub(crate) use super::head_parse::parse;
#[cfg(all(
    test,
    any(target_arch = "x86", target_arch = "x86_64"),
    target_feature = "sse2"
))]
pub(super) use super::head_parse::parse_blocks;
#[cfg(test)]
pub(super) use super::head_parse::parse_with;
use super::head_parse::{FirstLine, byte, line_end, version};
use super::syntax::is_tchar;

/// Facts of the request line, and the length of the whole head.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct RequestLine {
    /// The minor version: 0 or 1.
    pub version: u8,
    /// The method token, as offsets.
    pub method: (usize, usize),
    /// The request target, as offsets.
    pub target: (usize, usize),
    pub head_len: usize,
}

impl FirstLine for RequestLine {
    #[cfg(all(
        any(target_arch = "x86", target_arch = "x86_64"),
        target_feature = "sse2"
    ))]
    #[inline(always)]
    fn blocks<B: super::head_blocks::Blocks>(b: B, data: &[u8]) -> Option<(Self, usize)> {
        super::head_blocks::request_line(b, data)
    }
    #[inline(always)]
    fn bytewise(data: &[u8]) -> Result<Option<(Self, usize)>, E> {
        request_line(data)
    }
    #[inline(always)]
    fn set_head_len(&mut self, n: usize) {
        self.head_len = n;
    }
}

/// The request line, byte-wise: its facts and where the headers start (out
/// of line: the block path takes the usual lines).
#[inline(never)]
fn request_line(data: &[u8]) -> Result<Option<(RequestLine, usize)>, E> {
    let mut i = 0;
    while matches!(byte!(data, i), b'\r' | b'\n') {
        i = line_end!(data, i, E::NewLine);
    }
    // Method: one or more tchars, then SP.
    let m0 = i;
    loop {
        let b = byte!(data, i);
        if b == b' ' && i > m0 {
            break;
        }
        if !is_tchar(b) {
            return Err(E::Token);
        }
        i += 1;
    }
    let m1 = i;
    i += 1;
    // Target: `!`..=`~` and obs-text, then SP; UTF-8 once the SP is seen.
    let t0 = i;
    loop {
        let b = byte!(data, i);
        if b == b' ' {
            break;
        }
        if b < b'!' || b == 0x7f {
            return Err(E::Token);
        }
        i += 1;
    }
    let t1 = i;
    if t1 == t0 || core::str::from_utf8(&data[t0..t1]).is_err() {
        return Err(E::Token);
    }
    i += 1;
    let Some(version) = version(data, i)? else {
        return Ok(None);
    };
    i += 8;
    match byte!(data, i) {
        b'\r' | b'\n' => {}
        _ => return Err(E::NewLine),
    }
    let i = line_end!(data, i, E::NewLine);
    let line = RequestLine {
        version,
        method: (m0, m1),
        target: (t0, t1),
        head_len: 0,
    };
    Ok(Some((line, i)))
}
