//! Our response head parser against httparse (default configuration): for
//! any bytes, and every prefix of them (the head split at any point), both
//! say Complete, Partial or the same error kind, and for a complete head the
//! same version, status, reason, header names and values and head length.
//! Then the reader built on it: the same outcome whether a response arrives
//! whole or in two pieces split anywhere.
//!
//! There is no deliberate difference: where httparse reads the reason as
//! empty (absent, or holding obs-text) ours does too.

use super::differential::{self, PATHS, Path};
use crate::http::head::HeaderSpan;
use crate::http::response_head::{self, StatusLine};
use crate::http::{Error, ResponseReader};
use proptest::prelude::*;
use std::vec::Vec;

/// What a parser made of a head, in comparable form.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    Complete {
        version: u8,
        status: u16,
        reason: Vec<u8>,
        headers: Vec<(Vec<u8>, Vec<u8>)>,
        head_len: usize,
    },
    Partial,
    Error(httparse::Error),
}

fn ours<const N: usize>(data: &[u8], path: Path) -> Outcome {
    let mut spans = heapless::Vec::<HeaderSpan, N>::new();
    let parsed = match path {
        Path::Dispatched => {
            let mut line = response_head::StatusLine::default();
            response_head::parse(data, &mut spans, &mut line).map(|done| done.then_some(line))
        }
        Path::Bytewise => response_head::parse_with(data, &mut spans, |_| None, |_, _| None),
        #[cfg(target_arch = "x86_64")]
        Path::Sse2 => response_head::parse_blocks(
            crate::http::head_blocks::Sse2::detect().unwrap(),
            data,
            &mut spans,
        ),
        #[cfg(target_arch = "x86_64")]
        Path::Avx2 => {
            // A CPU without AVX2 has no such path to compare.
            let Some(b) = crate::http::head_blocks::Avx2::detect() else {
                return theirs::<N>(data);
            };
            response_head::parse_blocks(b, data, &mut spans)
        }
    };
    match parsed {
        Ok(Some(StatusLine {
            version,
            status,
            reason,
            head_len,
        })) => {
            let headers = crate::http::Headers {
                msg: data,
                spans: &spans,
            };
            Outcome::Complete {
                version,
                status,
                reason: data[reason.0..reason.1].to_vec(),
                headers: headers
                    .iter()
                    .map(|(n, v)| (n.as_bytes().to_vec(), v.to_vec()))
                    .collect(),
                head_len,
            }
        }
        Ok(None) => Outcome::Partial,
        Err(e) => Outcome::Error(e),
    }
}

fn theirs<const N: usize>(data: &[u8]) -> Outcome {
    let mut h = [httparse::EMPTY_HEADER; N];
    let mut r = httparse::Response::new(&mut h);
    match r.parse(data) {
        Ok(httparse::Status::Complete(head_len)) => Outcome::Complete {
            version: r.version.unwrap_or(9),
            status: r.code.unwrap_or(0),
            reason: r.reason.unwrap_or("?").as_bytes().to_vec(),
            headers: r
                .headers
                .iter()
                .map(|h| (h.name.as_bytes().to_vec(), h.value.to_vec()))
                .collect(),
            head_len,
        },
        Ok(httparse::Status::Partial) => Outcome::Partial,
        Err(e) => Outcome::Error(e),
    }
}

/// Both parsers agree on `data` and on every prefix of it (see
/// [`differential::agree`]).
fn agree(data: &[u8]) {
    differential::agree(
        data,
        |d, path, small| {
            if small {
                ours::<3>(d, path)
            } else {
                ours::<16>(d, path)
            }
        },
        |d, small| {
            if small {
                theirs::<3>(d)
            } else {
                theirs::<16>(d)
            }
        },
    );
}

/// Pieces heads are made of: the right ones, near misses, and every byte
/// class the grammar tells apart.
const PIECES: &[&[u8]] = &[
    b"HTTP/1.1 ",
    b"HTTP/1.0 ",
    b"HTTP/1.1",
    b"HTTP/1.2 ",
    b"HTTP/1.",
    b"HTTP/2 ",
    b"200",
    b"200 OK",
    b" OK",
    b"1x0",
    b"99",
    b"\r\n",
    b"\r\n",
    b"\r\n",
    b"\n",
    b"\r",
    b":",
    b": ",
    b" ",
    b"\t",
    b"Content-Length",
    b"\r\nX-Mbx-Used-Weight-1m: 1\r\n",
    b"\r\nAccess-Control-Allow-Origin:*\r\n",
    b"\r\nA:  \t two OWS and trailing \t \r\n",
    b"content-length: 12",
    b"X-Mbx-Used-Weight-1m: 1",
    b"Date: Mon, 23 Nov 2026 11:45:00 GMT",
    b"x_weird!#$%&'*+.^`|~",
    b"value with spaces   ",
    b"0123456789abcdefghijklmnopqrstuvwxyz-ABCDEFGHIJKLMNOPQRSTUVWXYZ",
    b"\0",
    b"\x7f",
    b"\x80\xff",
    b"\x01",
    b"\x0b",
    b"\"",
    b"(",
    b"@",
    b"[",
    b"{",
];

/// Status lines (and empty lines before one) to start from.
const STARTS: &[&[u8]] = &[
    b"HTTP/1.1 200 OK\r\n",
    b"\r\nHTTP/1.0 404\n",
    b"HTTP/1.1 204 \r\n",
];

fn input() -> impl Strategy<Value = Vec<u8>> {
    differential::input(PIECES, STARTS, b"HTTP/1.1 200 OK\r\n")
}

/// Long heads whose lines the block paths take and leave in turn (a bare
/// LF, obs-text, a name outside SSE2's alphabet, OWS to a block end, lines
/// longer than a block), so the line-end walk crosses several windows, the
/// last one clamped to the end of the bytes, beside byte-wise lines; and
/// every prefix of each.
#[test]
#[cfg_attr(miri, ignore = "every prefix of long heads: too slow for Miri")]
fn long_heads_with_mixed_lines() {
    let long = [b"Long: ".as_slice(), &[b'a'; 70], b"\r\n"].concat();
    let pad = [b"Pad:".as_slice(), &[b' '; 40], b"v \t\r\n"].concat();
    let lines: &[&[u8]] = &[
        b"Content-Type: application/json;charset=UTF-8\r\n",
        b"Bare: lf\n",
        b"x_weird!#$%&'*+.^`|~: v\r\n",
        b"Obs: caf\xc3\xa9\r\n",
        &long,
        &pad,
        b"Date: Mon, 23 Nov 2026 11:45:00 GMT\r\n",
        b"x-mbx-used-weight-1m: 1\r\n",
    ];
    for rot in 0..lines.len() {
        let mut v = b"HTTP/1.1 200 OK\r\n".to_vec();
        for k in 0..lines.len() + 3 {
            v.extend_from_slice(lines[(k + rot) % lines.len()]);
        }
        v.extend_from_slice(b"\r\n{\"a\":1}");
        agree(&v);
    }
}

proptest! {
    #![proptest_config(super::proptest_config(4096))]

    #[test]
    #[cfg_attr(miri, ignore = "every prefix of many inputs: too slow for Miri")]
    fn response_head_agrees_with_httparse(data in input()) {
        agree(&data);
    }

    /// The reader's outcome does not depend on where the bytes are split.
    #[test]
    #[cfg_attr(miri, ignore = "too slow for Miri")]
    fn reader_outcome_does_not_depend_on_the_split(data in input(), at in any::<usize>()) {
        let whole = read(&[&data]);
        let at = at % (data.len() + 1);
        prop_assert_eq!(read(&[&data[..at], &data[at..]]), whole);
    }
}

/// Feeds the pieces, then EOF: every response's status, reason, headers and
/// body, or the first error.
#[allow(clippy::type_complexity)]
fn read(pieces: &[&[u8]]) -> Result<Vec<(u16, Vec<u8>, Vec<(Vec<u8>, Vec<u8>)>, Vec<u8>)>, Error> {
    let mut r: ResponseReader<Vec<u8>, 4> = ResponseReader::new(std::vec![0u8; 4096]);
    let mut out = Vec::new();
    for (i, p) in pieces.iter().enumerate() {
        assert_eq!(r.feed(p), p.len());
        if i + 1 == pieces.len() {
            r.signal_eof();
        }
        while let Some(resp) = r.poll()? {
            out.push((
                resp.status(),
                resp.reason().as_bytes().to_vec(),
                resp.headers()
                    .iter()
                    .map(|(n, v)| (n.as_bytes().to_vec(), v.to_vec()))
                    .collect(),
                resp.body().to_vec(),
            ));
        }
    }
    Ok(out)
}

#[test]
fn agrees_on_known_heads() {
    for head in [
        &b"HTTP/1.1 200 OK\r\nContent-Type: application/json;charset=UTF-8\r\nContent-Length: 5\r\n\r\nhello"[..],
        b"\n\r\nHTTP/1.0 301 Moved Permanently\nLocation: /x\n\n",
        b"HTTP/1.1 200 \xe9t\xe9\r\nA: \x80\xff \t \r\n\r\n",
        b"HTTP/1.1 200 OK\r\nA:\r\nB: \t\r\n_x~: 1\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nA: 1\r\n B: 2\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nA\0: 1\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nA: 1\r\x00\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\n\r\n",
        b"HTTP/1.1 2000 OK\r\n\r\n",
        b"HTTP/1.1  200 OK\r\n\r\n",
        b"HTTP/1.1 200\tOK\r\n\r\n",
        b"HTTP/1.1 200 OK\r\r\n\r\n",
        b"HTTP/1.1 200 OK\r\n\r\r\n",
        b"\rHTTP/1.1 200 OK\r\n\r\n",
        b"HTTP/1.1 200 OK\r\n: empty name\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nName : v\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nA: a\x7fb\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nA: \x7f\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nVery-Long-Header-Name-Beyond-Sixteen-Bytes: a value that is longer than thirty-two bytes\tfor sure \r\n\r\n",
    ] {
        agree(head);
    }
}

/// Trailing OWS of every length ending at every offset around the 16- and
/// 32-byte blocks (the block paths trim it from a bit mask, or byte-wise when
/// the OWS reaches back into an earlier block).
#[test]
fn agrees_on_trailing_ows_across_blocks() {
    let lens: Vec<usize> = if cfg!(miri) {
        std::vec![0, 1, 15, 31, 33]
    } else {
        (0..=40).collect()
    };
    for &value_len in &lens {
        for &ows_len in &[0usize, 1, 2, 15, 16, 17, 31, 32, 33] {
            for tab in [false, true] {
                let mut head = b"HTTP/1.1 200 OK\r\nAb: ".to_vec();
                head.extend((0..value_len).map(|k| b'a' + (k % 26) as u8));
                head.extend((0..ows_len).map(|k| if tab && k % 2 == 1 { b'\t' } else { b' ' }));
                head.extend_from_slice(b"\r\nX: 1\r\n\r\n");
                for &path in PATHS {
                    assert_eq!(
                        ours::<16>(&head, path),
                        theirs::<16>(&head),
                        "{path:?} {}",
                        head.escape_ascii()
                    );
                }
            }
        }
    }
}
