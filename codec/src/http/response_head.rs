//! The response head parser: status line and header fields of an HTTP/1.x
//! response, read in one pass into header spans over caller storage.
//!
//! It accepts, refuses and reports exactly what `httparse::Response::parse`
//! with the default configuration does (same status, reason, header names and
//! values, head length; `Ok(None)` where httparse says Partial; the same
//! `httparse::Error` kind where it fails), so the readers' error diagnosis is
//! shared with the request side; a differential test holds it to that
//! (`tests/head_differential.rs`). The parse itself (dispatch, block paths,
//! header lines) is [`head_parse`](super::head_parse)'s, shared with the
//! request side; this module holds the status line.
//!
//! The grammar, as httparse reads it:
//! - empty lines (CRLF or LF) before the status line are skipped;
//! - `HTTP/1.0` or `HTTP/1.1`, SP, three digits, then SP and a reason of
//!   HTAB / SP / VCHAR / obs-text (the reason reads as empty if it holds
//!   obs-text), or directly the line end;
//! - header lines as [`head_parse`](super::head_parse) reads them.

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
use super::runs::value_run;

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

impl FirstLine for StatusLine {
    #[cfg(all(
        any(target_arch = "x86", target_arch = "x86_64"),
        target_feature = "sse2"
    ))]
    #[inline(always)]
    fn blocks<B: super::head_blocks::Blocks>(b: B, data: &[u8]) -> Option<(Self, usize)> {
        super::head_blocks::status_line(b, data)
    }
    #[inline(always)]
    fn bytewise(data: &[u8]) -> Result<Option<(Self, usize)>, E> {
        status_line(data)
    }
    #[inline(always)]
    fn set_head_len(&mut self, n: usize) {
        self.head_len = n;
    }
}

/// The status line, byte-wise: its facts and where the headers start (out
/// of line: the block path takes the usual lines).
#[inline(never)]
fn status_line(data: &[u8]) -> Result<Option<(StatusLine, usize)>, E> {
    let mut i = 0;
    while matches!(byte!(data, i), b'\r' | b'\n') {
        i = line_end!(data, i, E::NewLine);
    }
    let Some(version) = version(data, i)? else {
        return Ok(None);
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
