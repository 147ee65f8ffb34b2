//! The response head parser: status line and header fields of an HTTP/1.x
//! response, read in one pass into header spans over caller storage.
//!
//! It accepts, refuses and reports exactly what `httparse::Response::parse`
//! with the default configuration does (same status, reason, header names and
//! values, head length; `Ok(None)` where httparse says Partial; the same
//! `httparse::Error` kind where it fails), so the readers' error diagnosis is
//! shared with the request side; a differential test holds it to that
//! (`tests/head_differential.rs`). What it does faster: header names and
//! values are skipped 16 bytes at a time ([`runs`](super::runs)) and the
//! spans are recorded as offsets while parsing, with no second pass.
//!
//! The grammar, as httparse reads it:
//! - empty lines (CRLF or LF) before the status line are skipped;
//! - `HTTP/1.0` or `HTTP/1.1`, SP, three digits, then SP and a reason of
//!   HTAB / SP / VCHAR / obs-text (the reason reads as empty if it holds
//!   obs-text), or directly the line end;
//! - header lines `token ":" OWS value` where the value is HTAB / SP / VCHAR /
//!   obs-text with trailing SP and HTAB trimmed; obs-fold is refused;
//! - line ends are CRLF or a bare LF; a CR must be followed by LF.

use httparse::Error as E;

use super::head::HeaderSpan;
use super::runs::{name_run, value_run};
use super::syntax::is_tchar;

/// Facts of the status line, and the length of the whole head.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct StatusLine {
    /// The minor version: 0 or 1.
    pub version: u8,
    pub status: u16,
    /// The reason phrase; `(0, 0)` when absent or holding obs-text.
    pub reason: (usize, usize),
    pub head_len: usize,
}

/// The byte at `i`, or "need more bytes".
macro_rules! byte {
    ($data:ident, $i:expr) => {
        match $data.get($i) {
            Some(&b) => b,
            None => return Ok(None),
        }
    };
}

/// The line end at `i` (where a CR or LF was found): the index after it, or
/// `err` for a CR not followed by LF.
macro_rules! line_end {
    ($data:ident, $i:expr, $err:expr) => {
        if $data[$i] == b'\r' {
            if byte!($data, $i + 1) != b'\n' {
                return Err($err);
            }
            $i + 2
        } else {
            $i + 1
        }
    };
}

// For the request head parser, which reads its lines the same way.
pub(super) use {byte, line_end};

/// Parses the head at the start of `data`, recording each header's name and
/// value into `spans` (cleared first; at most `N`, more is
/// [`TooManyHeaders`](E::TooManyHeaders)) and the status line into `out`.
/// `Ok(false)`: not complete yet (`out` unchanged).
///
/// The status line goes out through `out`, not the return value: returned
/// in memory from this out-of-line function, it was copied by the caller
/// with wide loads across the narrower stores that had just written it, a
/// store-forwarding stall that cost the REST round trip ~10 ticks.
///
/// On x86 the usual lines go through the block paths, AVX2 when the CPU has
/// it, else SSE2; elsewhere every line is read byte-wise.
#[inline]
pub(crate) fn parse<const N: usize>(
    data: &[u8],
    spans: &mut heapless::Vec<HeaderSpan, N>,
    out: &mut StatusLine,
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

/// The status line of a complete head into `out`.
#[inline(always)]
fn emit(parsed: Result<Option<StatusLine>, E>, out: &mut StatusLine) -> Result<bool, E> {
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
    out: &mut StatusLine,
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
) -> Result<Option<StatusLine>, E> {
    use super::head_blocks::{LineEnds, status_line};
    let mut ends = LineEnds::at_start(b, data);
    parse_with(
        data,
        spans,
        |d| status_line(b, d),
        |d, i| ends.header_line(b, d, i),
    )
}

/// The parse, with `status_fast` and `line_fast` taking the usual lines
/// (`None`: read that line byte-wise).
#[inline(always)]
pub(super) fn parse_with<const N: usize>(
    data: &[u8],
    spans: &mut heapless::Vec<HeaderSpan, N>,
    status_fast: impl Fn(&[u8]) -> Option<(StatusLine, usize)>,
    line_fast: impl FnMut(&[u8], usize) -> Option<(HeaderSpan, usize)>,
) -> Result<Option<StatusLine>, E> {
    spans.clear();
    let (mut line, i) = match status_fast(data) {
        Some(found) => found,
        None => match status_line(data)? {
            Some(found) => found,
            None => return Ok(None),
        },
    };
    Ok(headers_with(data, spans, i, line_fast)?.map(|head_len| {
        line.head_len = head_len;
        line
    }))
}

/// The header lines from `i` to the empty line that ends the head (shared
/// with the request head parser, whose header grammar is the same in
/// httparse): the head's length, `None` when incomplete. `line_fast` takes
/// the usual lines (`None`: read that line byte-wise).
#[inline(always)]
pub(super) fn headers_with<const N: usize>(
    data: &[u8],
    spans: &mut heapless::Vec<HeaderSpan, N>,
    mut i: usize,
    mut line_fast: impl FnMut(&[u8], usize) -> Option<(HeaderSpan, usize)>,
) -> Result<Option<usize>, E> {
    loop {
        if let Some((span, next)) = line_fast(data, i) {
            spans.push(span).map_err(|_| E::TooManyHeaders)?;
            i = next;
            continue;
        }
        let b = byte!(data, i);
        if b == b'\r' || b == b'\n' {
            return Ok(Some(line_end!(data, i, E::NewLine)));
        }
        let (span, next) = match header_line(data, i)? {
            Some(found) => found,
            None => return Ok(None),
        };
        spans.push(span).map_err(|_| E::TooManyHeaders)?;
        i = next;
    }
}

/// The header line at `i`, byte-wise: its spans and where the next line
/// starts. Out of line: the block paths take the usual lines, and the
/// parse loop stays small without this one's registers and constants.
#[inline(never)]
fn header_line(data: &[u8], mut i: usize) -> Result<Option<(HeaderSpan, usize)>, E> {
    let name0 = i;
    // Name: the usual alphabet at speed, other tchars byte by byte.
    i += name_run(&data[i..]);
    loop {
        let b = byte!(data, i);
        if b == b':' && i > name0 {
            break;
        }
        if !is_tchar(b) {
            return Err(E::HeaderName);
        }
        i += 1 + name_run(&data[i + 1..]);
    }
    let name1 = i;
    i += 1;
    // OWS before the value.
    let mut b = byte!(data, i);
    while b == b' ' || b == b'\t' {
        i += 1;
        b = byte!(data, i);
    }
    let value0 = i;
    i += value_run(&data[i..]);
    let b = byte!(data, i);
    if b != b'\r' && b != b'\n' {
        return Err(E::HeaderValue);
    }
    let mut value1 = i;
    i = line_end!(data, i, E::HeaderValue);
    while value1 > value0 && matches!(data[value1 - 1], b' ' | b'\t') {
        value1 -= 1;
    }
    Ok(Some((HeaderSpan::new((name0, name1), (value0, value1)), i)))
}

/// The status line, byte-wise: its facts and where the headers start (out
/// of line, like [`header_line`]).
#[inline(never)]
fn status_line(data: &[u8]) -> Result<Option<(StatusLine, usize)>, E> {
    let mut i = 0;
    while matches!(byte!(data, i), b'\r' | b'\n') {
        i = line_end!(data, i, E::NewLine);
    }
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
    if byte!(data, i) != b' ' {
        return Err(E::Version);
    }
    let mut status = 0u16;
    for k in 1..=3 {
        let d = byte!(data, i + k);
        if !d.is_ascii_digit() {
            return Err(E::Status);
        }
        status = status * 10 + u16::from(d - b'0');
    }
    i += 4;
    let mut reason = (0, 0);
    match byte!(data, i) {
        b' ' => {
            let r0 = i + 1;
            i = r0 + value_run(&data[r0..]);
            let b = byte!(data, i);
            if b != b'\r' && b != b'\n' {
                return Err(E::Status);
            }
            if data[r0..i].is_ascii() {
                reason = (r0, i);
            }
        }
        b'\r' | b'\n' => {}
        _ => return Err(E::Status),
    }
    let i = line_end!(data, i, E::Status);
    let line = StatusLine {
        version,
        status,
        reason,
        head_len: 0,
    };
    Ok(Some((line, i)))
}
