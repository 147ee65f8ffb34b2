//! Our request head parser against httparse (default configuration): for
//! any bytes, and every prefix of them, both say Complete, Partial or the
//! same error kind, and for a complete head the same method, target,
//! version, header names and values and head length, on every path (as
//! dispatched, byte-wise, SSE2 blocks, AVX2 blocks where the CPU has them).
//! Then the reader built on it: the same outcome whether a request arrives
//! whole or in two pieces split anywhere.

use super::differential::{self, PATHS, Path};
use crate::http::head::HeaderSpan;
use crate::http::request_head::{self, RequestLine};
use crate::http::{Error, RequestReader};
use proptest::prelude::*;
use std::vec::Vec;

/// What a parser made of a head, in comparable form.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    Complete {
        version: u8,
        method: Vec<u8>,
        target: Vec<u8>,
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
            let mut line = RequestLine::default();
            request_head::parse(data, &mut spans, &mut line).map(|done| done.then_some(line))
        }
        Path::Bytewise => request_head::parse_with(data, &mut spans, |_| None, |_, _| None),
        #[cfg(target_arch = "x86_64")]
        Path::Sse2 => {
            let b = crate::http::head_blocks::Sse2::detect().unwrap();
            request_head::parse_blocks(b, data, &mut spans)
        }
        #[cfg(target_arch = "x86_64")]
        Path::Avx2 => {
            // A CPU without AVX2 has no such path to compare.
            let Some(b) = crate::http::head_blocks::Avx2::detect() else {
                return theirs::<N>(data);
            };
            request_head::parse_blocks(b, data, &mut spans)
        }
    };
    match parsed {
        Ok(Some(RequestLine {
            version,
            method,
            target,
            head_len,
        })) => {
            let headers = crate::http::Headers {
                msg: data,
                spans: &spans,
            };
            Outcome::Complete {
                version,
                method: data[method.0..method.1].to_vec(),
                target: data[target.0..target.1].to_vec(),
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
    let mut r = httparse::Request::new(&mut h);
    match r.parse(data) {
        Ok(httparse::Status::Complete(head_len)) => Outcome::Complete {
            version: r.version.unwrap_or(9),
            method: r.method.unwrap_or("?").as_bytes().to_vec(),
            target: r.path.unwrap_or("?").as_bytes().to_vec(),
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
    b"GET ",
    b"POST ",
    b"POST",
    b"M-SEARCH ",
    b"x_weird!#$%&'*+.^`|~ ",
    b"/",
    b"/api/v3/order?symbol=BTCUSDT&side=BUY&quantity=0.001",
    b"/caf\xc3\xa9",
    b"/\xc3",
    b"*",
    b" HTTP/1.1",
    b" HTTP/1.0",
    b"HTTP/1.1",
    b"HTTP/1.2",
    b"HTTP/1.",
    b"\r\n",
    b"\r\n",
    b"\n",
    b"\r",
    b":",
    b": ",
    b" ",
    b"  ",
    b"\t",
    b"Host: example.com",
    b"\r\nContent-Length: 5\r\n",
    b"\r\nA:  \t two OWS and trailing \t \r\n",
    b"0123456789abcdefghijklmnopqrstuvwxyz-ABCDEFGHIJKLMNOPQRSTUVWXYZ",
    b"\0",
    b"\x7f",
    b"\x80\xff",
    b"\x01",
    b"\"",
    b"(",
    b"@",
    b"{",
];

/// Request lines (and empty lines before one) to start from.
const STARTS: &[&[u8]] = &[
    b"GET / HTTP/1.1\r\n",
    b"\r\nPOST /api/v3/order HTTP/1.0\n",
    b"DELETE /api/v3/order?symbol=BTCUSDT&orderId=1234567890 HTTP/1.1\r\n",
];

fn input() -> impl Strategy<Value = Vec<u8>> {
    differential::input(
        PIECES,
        STARTS,
        b"GET /api/v3/ticker/price?symbol=BTCUSDT HTTP/1.1\r\n",
    )
}

proptest! {
    #![proptest_config(super::proptest_config(4096))]

    #[test]
    #[cfg_attr(miri, ignore = "every prefix of many inputs: too slow for Miri")]
    fn request_head_agrees_with_httparse(data in input()) {
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

/// Feeds the pieces, then EOF: every request's method, target, headers and
/// body, or the first error.
#[allow(clippy::type_complexity)]
fn read(
    pieces: &[&[u8]],
) -> Result<Vec<(Vec<u8>, Vec<u8>, Vec<(Vec<u8>, Vec<u8>)>, Vec<u8>)>, Error> {
    let mut r: RequestReader<Vec<u8>, 4> = RequestReader::new(std::vec![0u8; 4096]);
    let mut out = Vec::new();
    for (i, p) in pieces.iter().enumerate() {
        assert_eq!(r.feed(p), p.len());
        if i + 1 == pieces.len() {
            r.signal_eof();
        }
        while let Some(req) = r.poll()? {
            out.push((
                req.method_str().as_bytes().to_vec(),
                req.target().as_bytes().to_vec(),
                req.headers()
                    .iter()
                    .map(|(n, v)| (n.as_bytes().to_vec(), v.to_vec()))
                    .collect(),
                req.body().to_vec(),
            ));
        }
    }
    Ok(out)
}

/// Known heads, each with every prefix; the request line's block path at
/// every target length around the 16- and 32-byte blocks (few enough to
/// run under Miri, where they exercise the block paths the CPU tokens
/// allow).
#[test]
fn agrees_on_known_heads() {
    let heads: &[&[u8]] = &[
        b"GET /api/v3/ticker/price?symbol=BTCUSDT HTTP/1.1\r\nHost: api.example.com\r\nUser-Agent: tickwire\r\nAccept: */*\r\n\r\n",
        b"POST /api/v3/order HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
        b"\n\r\nGET / HTTP/1.0\nHost: x\n\n",
        b"GET /caf\xc3\xa9 HTTP/1.1\r\n\r\n",
        b"GET /\xc3 HTTP/1.1\r\n\r\n",
        b"GET  / HTTP/1.1\r\n\r\n",
        b"GET / HTTP/1.1 \r\n\r\n",
        b"GET /\x7f HTTP/1.1\r\n\r\n",
        b"GET\t/ HTTP/1.1\r\n\r\n",
        b" GET / HTTP/1.1\r\n\r\n",
        b"GET / HTTP/1.2\r\n\r\n",
        b"GET / HTTP/1.1\r\r\n\r\n",
        b"GET / HTTP/1.1\r\nA: 1\r\n B: 2\r\n\r\n",
        b"GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\n\r\n",
        b"M-SEARCH * HTTP/1.1\r\nx_weird!#$%&'*+.^`|~: v\r\n\r\n",
    ];
    for &head in heads {
        if cfg!(miri) {
            for &path in PATHS {
                assert_eq!(ours::<16>(head, path), theirs::<16>(head), "{path:?}");
            }
        } else {
            agree(head);
        }
    }
    let lens: Vec<usize> = if cfg!(miri) {
        std::vec![1, 14, 15, 16, 31, 32, 33]
    } else {
        (1..=70).collect()
    };
    for &n in &lens {
        let target: Vec<u8> = (0..n).map(|k| b'a' + (k % 26) as u8).collect();
        for end in [
            &b" HTTP/1.1\r\nHost: h\r\n\r\n"[..],
            b" HTTP/1.1\nHost: h\n\n",
        ] {
            let head = [b"GET /".as_slice(), &target, end, &[b'z'; 40]].concat();
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
