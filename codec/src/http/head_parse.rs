//! The head parser shared by both directions: a head's first line (the
//! status line of a response, [`response_head`](super::response_head); the
//! request line of a request, [`request_head`](super::request_head)), then
//! header fields, read in one pass into header spans over caller storage.
//! httparse reads the header lines of requests and responses alike (with its
//! default configuration), and so do we.
//!
//! What it does faster than httparse: the usual lines go through the block
//! paths of [`head_blocks`](super::head_blocks) (AVX2 or SSE2, chosen by the
//! codec's proof tokens), other header names and values are skipped 16 bytes
//! at a time ([`runs`](super::runs)), and the spans are recorded as offsets
//! while parsing, with no second pass.
//!
//! The header grammar, as httparse reads it: header lines
//! `token ":" OWS value` where the value is HTAB / SP / VCHAR / obs-text
//! with trailing SP and HTAB trimmed; obs-fold is refused; line ends are
//! CRLF or a bare LF; a CR must be followed by LF.

use httparse::Error as E;

use super::head::HeaderSpan;
use super::runs::{name_run, value_run};
use super::syntax::is_tchar;

/// A head's first line, as the shared parse needs it.
pub(super) trait FirstLine: Copy {
    /// The line in its usual form, a block at a time: its facts and where
    /// the headers start; `None` leaves it to [`bytewise`](Self::bytewise).
    #[cfg(all(
        any(target_arch = "x86", target_arch = "x86_64"),
        target_feature = "sse2"
    ))]
    fn blocks<B: super::head_blocks::Blocks>(b: B, data: &[u8]) -> Option<(Self, usize)>;
    /// The line byte-wise (empty lines before it skipped): its facts and
    /// where the headers start, `None` when incomplete.
    fn bytewise(data: &[u8]) -> Result<Option<(Self, usize)>, E>;
    /// Records the length of the whole head.
    fn set_head_len(&mut self, n: usize);
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

// For the first-line parsers, which read their lines the same way.
pub(super) use {byte, line_end};

/// `HTTP/1.1` (1) or `HTTP/1.0` (0) at `i`, as httparse reads it: `None`
/// when fewer than 8 bytes are there and they could still become one.
#[inline(always)]
pub(super) fn version(data: &[u8], i: usize) -> Result<Option<u8>, E> {
    match data.get(i..i + 8) {
        Some(b"HTTP/1.1") => Ok(Some(1)),
        Some(b"HTTP/1.0") => Ok(Some(0)),
        Some(_) => Err(E::Version),
        None => {
            // Fewer than 8 bytes: refuse as soon as they cannot be a version.
            let have = data.get(i..).unwrap_or_default();
            if b"HTTP/1.".starts_with(&have[..have.len().min(7)]) {
                Ok(None)
            } else {
                Err(E::Version)
            }
        }
    }
}

/// Parses the head at the start of `data`, recording each header's name and
/// value into `spans` (cleared first; at most `N`, more is
/// [`TooManyHeaders`](E::TooManyHeaders)) and the first line into `out`.
/// `Ok(false)`: not complete yet (`out` unchanged).
///
/// The first line goes out through `out`, not the return value: returned
/// in memory from this out-of-line function, it was copied by the caller
/// with wide loads across the narrower stores that had just written it, a
/// store-forwarding stall that cost the REST round trip ~10 ticks.
///
/// On x86 the usual lines go through the block paths, AVX2 when the CPU has
/// it, else SSE2; elsewhere every line is read byte-wise.
#[inline]
pub(crate) fn parse<L: FirstLine, const N: usize>(
    data: &[u8],
    spans: &mut heapless::Vec<HeaderSpan, N>,
    out: &mut L,
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

/// The first line of a complete head into `out`.
#[inline(always)]
fn emit<L>(parsed: Result<Option<L>, E>, out: &mut L) -> Result<bool, E> {
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
fn parse_avx2<L: FirstLine, const N: usize>(
    b: super::head_blocks::Avx2,
    data: &[u8],
    spans: &mut heapless::Vec<HeaderSpan, N>,
    out: &mut L,
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
pub(super) fn parse_blocks<L: FirstLine, B: super::head_blocks::Blocks, const N: usize>(
    b: B,
    data: &[u8],
    spans: &mut heapless::Vec<HeaderSpan, N>,
) -> Result<Option<L>, E> {
    use super::head_blocks::LineEnds;
    let mut ends = LineEnds::at_start(b, data);
    parse_with(
        data,
        spans,
        |d| L::blocks(b, d),
        |d, i| ends.header_line(b, d, i),
    )
}

/// The parse, with `first_fast` taking a usual first line and `line_fast`
/// the usual header lines (`None`: read that line byte-wise).
#[inline(always)]
pub(super) fn parse_with<L: FirstLine, const N: usize>(
    data: &[u8],
    spans: &mut heapless::Vec<HeaderSpan, N>,
    first_fast: impl Fn(&[u8]) -> Option<(L, usize)>,
    line_fast: impl FnMut(&[u8], usize) -> Option<(HeaderSpan, usize)>,
) -> Result<Option<L>, E> {
    spans.clear();
    let (mut line, i) = match first_fast(data) {
        Some(found) => found,
        None => match L::bytewise(data)? {
            Some(found) => found,
            None => return Ok(None),
        },
    };
    Ok(headers_with(data, spans, i, line_fast)?.map(|head_len| {
        line.set_head_len(head_len);
        line
    }))
}

/// The header lines from `i` to the empty line that ends the head: the
/// head's length, `None` when incomplete. `line_fast` takes
/// the usual lines (`None`: read that line byte-wise).
#[inline(always)]
fn headers_with<const N: usize>(
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
