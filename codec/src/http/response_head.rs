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

/// Parses the head at the start of `data`, recording each header's name and
/// value into `spans` (cleared first; at most `N`, more is
/// [`TooManyHeaders`](E::TooManyHeaders)). `Ok(None)`: not complete yet.
#[inline]
pub(crate) fn parse<const N: usize>(
    data: &[u8],
    spans: &mut heapless::Vec<HeaderSpan, N>,
) -> Result<Option<StatusLine>, E> {
    spans.clear();
    let Some((mut line, mut i)) = status_line(data)? else {
        return Ok(None);
    };
    loop {
        let b = byte!(data, i);
        if b == b'\r' || b == b'\n' {
            line.head_len = line_end!(data, i, E::NewLine);
            return Ok(Some(line));
        }
        #[cfg(all(
            any(target_arch = "x86", target_arch = "x86_64"),
            target_feature = "sse2",
            not(miri)
        ))]
        // SAFETY: SSE2 is enabled for the whole target (cfg above).
        if let Some((span, next)) = unsafe { sse2::header_line(data, i) } {
            spans.push(span).map_err(|_| E::TooManyHeaders)?;
            i = next;
            continue;
        }
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
        spans
            .push(HeaderSpan::new((name0, name1), (value0, value1)))
            .map_err(|_| E::TooManyHeaders)?;
    }
}

/// The status line: its facts and where the headers start.
#[inline]
fn status_line(data: &[u8]) -> Result<Option<(StatusLine, usize)>, E> {
    #[cfg(all(
        any(target_arch = "x86", target_arch = "x86_64"),
        target_feature = "sse2",
        not(miri)
    ))]
    // SAFETY: SSE2 is enabled for the whole target (cfg above).
    if let Some(line) = unsafe { sse2::status_line(data) } {
        return Ok(Some(line));
    }
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

/// The usual header line at a glance, 16 bytes at a time: a name of under
/// 16 bytes in the letters/digits/`-` alphabet, `:`, at most one SP, a value
/// of field-value bytes, CRLF. Anything else (and a line too near the end of
/// the bytes for whole blocks) is left to the byte-wise parse, which decides
/// every other case; what this accepts is exactly what that would.
#[cfg(all(
    any(target_arch = "x86", target_arch = "x86_64"),
    target_feature = "sse2",
    not(miri)
))]
mod sse2 {
    #[cfg(target_arch = "x86")]
    use core::arch::x86::{
        __m128i, _mm_andnot_si128, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8,
        _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8, _mm_sub_epi8,
    };
    #[cfg(target_arch = "x86_64")]
    use core::arch::x86_64::{
        __m128i, _mm_andnot_si128, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8,
        _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8, _mm_sub_epi8,
    };

    use super::HeaderSpan;

    /// The 16 bytes of `data` from `at`, if there are as many.
    #[target_feature(enable = "sse2")]
    #[inline]
    fn load(data: &[u8], at: usize) -> Option<__m128i> {
        let block = data.get(at..at.checked_add(16)?)?;
        // SAFETY: `block` holds 16 bytes; the load is unaligned.
        Some(unsafe { _mm_loadu_si128(block.as_ptr().cast::<__m128i>()) })
    }

    /// Unsigned `a <= b` per byte.
    #[target_feature(enable = "sse2")]
    #[inline]
    fn le(a: __m128i, b: u8) -> __m128i {
        _mm_cmpeq_epi8(_mm_min_epu8(a, _mm_set1_epi8(b as i8)), a)
    }

    #[target_feature(enable = "sse2")]
    #[inline]
    fn eq(a: __m128i, b: u8) -> __m128i {
        _mm_cmpeq_epi8(a, _mm_set1_epi8(b as i8))
    }

    #[target_feature(enable = "sse2")]
    #[inline]
    fn mask(a: __m128i) -> u32 {
        _mm_movemask_epi8(a) as u32
    }

    /// Bits of the bytes that are not letters, digits or `-`.
    #[target_feature(enable = "sse2")]
    #[inline]
    fn not_name(x: __m128i) -> u32 {
        let lower = _mm_or_si128(x, _mm_set1_epi8(0x20));
        let letter = le(_mm_sub_epi8(lower, _mm_set1_epi8(b'a' as i8)), 25);
        let digit = le(_mm_sub_epi8(x, _mm_set1_epi8(b'0' as i8)), 9);
        !mask(_mm_or_si128(_mm_or_si128(letter, digit), eq(x, b'-'))) & 0xffff
    }

    /// Bits of the bytes that are not field-value bytes (controls but HTAB, DEL).
    #[target_feature(enable = "sse2")]
    #[inline]
    fn not_value(x: __m128i) -> u32 {
        mask(_mm_or_si128(
            _mm_andnot_si128(eq(x, b'\t'), le(x, 0x1f)),
            eq(x, 0x7f),
        ))
    }

    /// Bits of the bytes that are SP or HTAB.
    #[target_feature(enable = "sse2")]
    #[inline]
    fn ows(x: __m128i) -> u32 {
        mask(_mm_or_si128(eq(x, b' '), eq(x, b'\t')))
    }

    /// The status line in its usual form (`HTTP/1.x NNN reason` and CRLF,
    /// at the very start): its facts and where the headers start; `None`
    /// for anything else.
    #[target_feature(enable = "sse2")]
    #[inline]
    pub(super) fn status_line(data: &[u8]) -> Option<(super::StatusLine, usize)> {
        let version = match data.get(..9)? {
            b"HTTP/1.1 " => 1,
            b"HTTP/1.0 " => 0,
            _ => return None,
        };
        let &[d0, d1, d2, b' '] = data.get(9..13)? else {
            return None;
        };
        let digit = |d: u8| d.wrapping_sub(b'0') < 10;
        if !(digit(d0) && digit(d1) && digit(d2)) {
            return None;
        }
        let status = u16::from(d0 - b'0') * 100 + u16::from(d1 - b'0') * 10 + u16::from(d2 - b'0');
        // The reason: field-value bytes up to CRLF; obs-text (a high bit)
        // makes it read as empty.
        let mut at = 13;
        let mut high = 0;
        let e = loop {
            let x = load(data, at)?;
            let bad = not_value(x);
            if bad != 0 {
                high |= mask(x) & (bad & bad.wrapping_neg()).wrapping_sub(1);
                break at + bad.trailing_zeros() as usize;
            }
            high |= mask(x);
            at += 16;
        };
        if data.get(e..e + 2) != Some(b"\r\n") {
            return None;
        }
        let reason = if high == 0 { (13, e) } else { (0, 0) };
        let line = super::StatusLine {
            version,
            status,
            reason,
            head_len: 0,
        };
        Some((line, e + 2))
    }

    /// The header line at `i` in its usual form: its spans and where the
    /// next line starts; `None` for anything else.
    #[target_feature(enable = "sse2")]
    #[inline]
    pub(super) fn header_line(data: &[u8], i: usize) -> Option<(HeaderSpan, usize)> {
        // Name: whole blocks of the alphabet, then one whose first byte
        // out of it is the colon (the lowest bit of `out`).
        let mut c = i;
        let colon = loop {
            let x = load(data, c)?;
            let out = not_name(x);
            if out == 0 {
                c += 16;
                continue;
            }
            break out & out.wrapping_neg() & mask(eq(x, b':'));
        };
        c += colon.trailing_zeros() as usize;
        if colon == 0 || c == i {
            return None;
        }
        // OWS and the value's end, from the block after the colon (OWS
        // bytes are value bytes: the first byte out of the value is the end).
        let mut at = c + 1;
        let y = load(data, at)?;
        let skip = (!ows(y)).trailing_zeros() as usize;
        if skip >= 16 {
            return None;
        }
        let v = at + skip;
        let mut bad = not_value(y);
        while bad == 0 {
            at += 16;
            bad = not_value(load(data, at)?);
        }
        let e = at + bad.trailing_zeros() as usize;
        if data.get(e..e + 2) != Some(b"\r\n") {
            return None;
        }
        let mut end = e;
        while end > v && matches!(data[end - 1], b' ' | b'\t') {
            end -= 1;
        }
        Some((HeaderSpan::new((i, c), (v, end)), e + 2))
    }
}
