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
//! on: a user's build parsed requests byte by byte. Here the usual lines go
//! through the block paths of [`head_blocks`](super::head_blocks) (AVX2 or
//! SSE2, chosen by the codec's proof tokens), and the header lines share
//! the response parser's loop ([`headers_with`]), whose grammar httparse
//! applies to requests too.
//!
//! The request line, as httparse reads it:
//! - empty lines (CRLF or LF) before it are skipped;
//! - a method token (tchar), one SP, a target of bytes `!`..=`~` or
//!   obs-text that must be UTF-8 (else `Token`), one SP, `HTTP/1.0` or
//!   `HTTP/1.1`, then CRLF or a bare LF.

use httparse::Error as E;

use super::head::HeaderSpan;
use super::response_head::{byte, headers_with, line_end};
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

/// Parses the head at the start of `data`, recording each header's name and
/// value into `spans` (cleared first; at most `N`, more is
/// [`TooManyHeaders`](E::TooManyHeaders)) and the request line into `out`.
/// `Ok(false)`: not complete yet (`out` unchanged).
///
/// On x86 the usual lines go through the block paths, AVX2 when the CPU has
/// it, else SSE2; elsewhere every line is read byte-wise.
#[inline]
pub(crate) fn parse<const N: usize>(
    data: &[u8],
    spans: &mut heapless::Vec<HeaderSpan, N>,
    out: &mut RequestLine,
) -> Result<bool, E> {
    #[cfg(all(
        any(target_arch = "x86", target_arch = "x86_64"),
        target_feature = "sse2"
    ))]
    {
        use super::head_blocks::{Avx2, Sse2};
        if let Some(b) = Avx2::detect() {
            // SAFETY: `b` exists, so the CPU has AVX2 (see `simd::token`).
            return unsafe { parse_avx2(b, data, spans, out) };
        }
        if let Some(b) = Sse2::detect() {
            return emit(parse_blocks(b, data, spans), out);
        }
    }
    emit(parse_with(data, spans, |_| None, |_, _| None), out)
}

/// The request line of a complete head into `out`.
#[inline(always)]
fn emit(parsed: Result<Option<RequestLine>, E>, out: &mut RequestLine) -> Result<bool, E> {
    match parsed? {
        Some(line) => {
            *out = line;
            Ok(true)
        }
        None => Ok(false),
    }
}

/// [`parse`] compiled for AVX2 (its block paths inlined with it).
#[cfg(all(
    any(target_arch = "x86", target_arch = "x86_64"),
    target_feature = "sse2"
))]
#[target_feature(enable = "avx2")]
fn parse_avx2<const N: usize>(
    b: super::head_blocks::Avx2,
    data: &[u8],
    spans: &mut heapless::Vec<HeaderSpan, N>,
    out: &mut RequestLine,
) -> Result<bool, E> {
    emit(parse_blocks(b, data, spans), out)
}

/// The parse with the block paths of `b` for the usual lines and one
/// line-end walk for the whole head (read from its first byte).
#[cfg(all(
    any(target_arch = "x86", target_arch = "x86_64"),
    target_feature = "sse2"
))]
#[inline(always)]
pub(super) fn parse_blocks<B: super::head_blocks::Blocks, const N: usize>(
    b: B,
    data: &[u8],
    spans: &mut heapless::Vec<HeaderSpan, N>,
) -> Result<Option<RequestLine>, E> {
    use super::head_blocks::{LineEnds, request_line};
    let mut ends = LineEnds::at_start(b, data);
    parse_with(
        data,
        spans,
        |d| request_line(b, d),
        |d, i| ends.header_line(b, d, i),
    )
}

/// The parse, with `line_fast` taking a usual request line and `header_fast`
/// the usual header lines (`None`: read that line byte-wise).
#[inline(always)]
pub(super) fn parse_with<const N: usize>(
    data: &[u8],
    spans: &mut heapless::Vec<HeaderSpan, N>,
    line_fast: impl Fn(&[u8]) -> Option<(RequestLine, usize)>,
    header_fast: impl FnMut(&[u8], usize) -> Option<(HeaderSpan, usize)>,
) -> Result<Option<RequestLine>, E> {
    spans.clear();
    let (mut line, i) = match line_fast(data) {
        Some(found) => found,
        None => match request_line(data)? {
            Some(found) => found,
            None => return Ok(None),
        },
    };
    Ok(headers_with(data, spans, i, header_fast)?.map(|head_len| {
        line.head_len = head_len;
        line
    }))
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
    let version = match data.get(i..i + 8) {
        Some(b"HTTP/1.1") => 1,
        Some(b"HTTP/1.0") => 0,
        Some(_) => return Err(E::Version),
        None => {
            // Fewer than 8 bytes: refuse as soon as they cannot be a version.
            let have = &data[i..];
            return if b"HTTP/1.".starts_with(&have[..have.len().min(7)]) {
                Ok(None)
            } else {
                Err(E::Version)
            };
        }
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
