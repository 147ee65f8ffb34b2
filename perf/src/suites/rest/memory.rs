//! In memory: build + write a POST (4 headers, ~100 B JSON body) and parse a
//! 200 OK JSON response, per operation. "write" is the copy of the request's
//! wire bytes into a socket-sized sink; "parse" includes copying the response
//! into the reader, as a recv would.
//!
//! Both rows copy the response in first, then build and write the request,
//! then parse: the same work in every operation, in an order that keeps the
//! parse from reading bytes a `memcpy` has only just stored. A recv's copy
//! is behind a system call by the time the parse runs; a `memcpy` right
//! before the parse leaves its stores in flight, and the parse's unaligned
//! loads that straddle two of them wait until they reach the cache, a stall
//! of the emulation rather than of either library (measured: 12 ticks of
//! tickwire's row).

use std::hint::black_box;
use std::io::Write;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use tickwire_codec::http::{Method, Request, RequestWriter, ResponseReader};

use super::{BODY, HEADERS, PATH, RESPONSE_BODY, check_request, response};
use crate::harness::{Measurement, RunConfig, bench_op};
use crate::suites::{Case, touch, unexpected};

pub(super) const HOST: &str = "127.0.0.1:8080";

/// Scenario name.
pub const SCENARIO: &str = "REST POST 4 headers + 104B JSON, build + write + parse 200 OK JSON";

const NOTE_TW: &str = "copy the response into ResponseReader; RequestWriter post().header() x4 .body().finish() \
                       into its buffer, copy the wire bytes to a sink; poll (status, headers, body)";
const NOTE_HTTPARSE: &str = "hand-rolled: copy the response into a receive buffer; write! the head into a reused \
                             Vec, copy to a sink; httparse::Response parse, Content-Length lookup, body slice";
const NOTE_REQWEST: &str = "reqwest::Client::post(url).headers(map.clone()).body(&'static str).build() \
                            only: no write, no response parse (reqwest cannot parse without I/O)";

pub(super) fn cases(v: &mut Vec<Case<'static>>) {
    v.push(Case::new(SCENARIO, "tickwire", true, NOTE_TW, tickwire));
    v.push(Case::new(
        SCENARIO,
        "httparse 1.10 (hand-rolled)",
        false,
        NOTE_HTTPARSE,
        hand_rolled,
    ));
    v.push(Case::new(
        SCENARIO,
        super::nexus::LIB,
        false,
        super::nexus::NOTE_MEMORY,
        super::nexus::memory,
    ));
    v.push(Case::new(
        SCENARIO,
        "reqwest 0.13 (build only)",
        false,
        NOTE_REQWEST,
        reqwest_build,
    ));
}

struct Tw {
    w: RequestWriter<Vec<u8>>,
    r: ResponseReader<Vec<u8>>,
    sink: Vec<u8>,
    resp: Vec<u8>,
}

/// tickwire's request: the builder into the writer's storage.
#[inline(always)]
pub(super) fn tw_build(w: &mut RequestWriter<Vec<u8>>) -> Request<'_> {
    // Run-time values, as a trading app's are: through `black_box`, so the compiler
    // cannot check the literal path and headers at build time and leave the row
    // measuring less than the request's validation.
    let (path, h, body) = black_box((PATH, &HEADERS, BODY.as_bytes()));
    match w
        .post(path)
        .header(h[0].0, h[0].1)
        .header(h[1].0, h[1].1)
        .header(h[2].0, h[2].1)
        .header(h[3].0, h[3].1)
        .body(body)
        .finish()
    {
        Ok(req) => req,
        Err(e) => unexpected(&e),
    }
}

#[inline(always)]
fn tw_op(s: &mut Tw) -> u64 {
    // Response first (see the module docs).
    s.r.expect(Method::Post);
    let n = s.resp.len();
    let spare = s.r.spare_mut();
    if spare.len() < n {
        unexpected(&"reader full");
    }
    spare[..n].copy_from_slice(&s.resp);
    s.r.commit(n);
    let req = tw_build(&mut s.w);
    s.sink.clear();
    s.sink.extend_from_slice(req.as_bytes());
    match s.r.poll() {
        Ok(Some(resp)) if resp.status() == 200 => touch(resp.body()) + touch(&s.sink),
        other => unexpected(&other.map(|o| o.map(|r| r.status()))),
    }
}

fn tickwire(cfg: &RunConfig) -> Measurement {
    let mut s = Tw {
        w: RequestWriter::new(vec![0u8; 4096], HOST).expect("writer"),
        r: ResponseReader::new(vec![0u8; 16 << 10]),
        sink: Vec::with_capacity(4096),
        resp: response(),
    };
    tw_op(&mut s);
    check_request(&s.sink, HOST);
    s.r.expect(Method::Post);
    s.r.feed(&response());
    match s.r.poll() {
        Ok(Some(r)) => {
            assert_eq!(r.body(), RESPONSE_BODY.as_bytes());
            assert_eq!(
                r.header_str("content-type"),
                Some("application/json;charset=UTF-8")
            );
        }
        other => unexpected(&other.map(|o| o.map(|r| r.status()))),
    }
    bench_op(
        cfg,
        &mut s,
        |_| {},
        |s| {
            black_box(tw_op(s));
        },
    )
}

struct Hand {
    buf: Vec<u8>,
    sink: Vec<u8>,
    resp: Vec<u8>,
    /// The receive buffer the response is copied into, as a recv would (tickwire's row
    /// copies it into its ResponseReader the same way).
    rbuf: Vec<u8>,
}

/// The hand-rolled request: `write!` and appends into a reused Vec.
#[inline(always)]
pub(super) fn hand_build(buf: &mut Vec<u8>) {
    // The same run-time inputs as tickwire's row (see `tw_build`).
    let (path, h, body) = black_box((PATH, &HEADERS, BODY.as_bytes()));
    buf.clear();
    let _ = write!(buf, "POST {path} HTTP/1.1\r\nHost: {HOST}\r\n");
    for (k, v) in h {
        buf.extend_from_slice(k.as_bytes());
        buf.extend_from_slice(b": ");
        buf.extend_from_slice(v.as_bytes());
        buf.extend_from_slice(b"\r\n");
    }
    let _ = write!(buf, "Content-Length: {}\r\n\r\n", body.len());
    buf.extend_from_slice(body);
}

#[inline(always)]
fn hand_op(s: &mut Hand) -> u64 {
    // Response first, as in tickwire's row (see the module docs).
    let got = s.resp.len();
    s.rbuf[..got].copy_from_slice(&s.resp);
    hand_build(&mut s.buf);
    s.sink.clear();
    s.sink.extend_from_slice(&s.buf);
    let wire = &s.rbuf[..got];
    let mut h = [httparse::EMPTY_HEADER; 16];
    let mut resp = httparse::Response::new(&mut h);
    let head = match resp.parse(wire) {
        Ok(httparse::Status::Complete(n)) if resp.code == Some(200) => n,
        other => unexpected(&other),
    };
    let len = resp
        .headers
        .iter()
        .find(|x| x.name.eq_ignore_ascii_case("content-length"))
        .and_then(|x| {
            std::str::from_utf8(x.value)
                .ok()?
                .trim()
                .parse::<usize>()
                .ok()
        })
        .unwrap_or_else(|| unexpected(&"no content-length"));
    let Some(body) = wire.get(head..head + len) else {
        unexpected(&"short body")
    };
    touch(body) + touch(&s.sink)
}

fn hand_rolled(cfg: &RunConfig) -> Measurement {
    let mut s = Hand {
        buf: Vec::with_capacity(4096),
        sink: Vec::with_capacity(4096),
        resp: response(),
        rbuf: vec![0u8; 4096],
    };
    hand_op(&mut s);
    check_request(&s.sink, HOST);
    bench_op(
        cfg,
        &mut s,
        |_| {},
        |s| {
            black_box(hand_op(s));
        },
    )
}

/// reqwest's side: a client, the URL and the prebuilt header map.
pub(super) struct Rq {
    client: reqwest::Client,
    url: String,
    headers: HeaderMap,
}

/// reqwest builds the request (URL parse, header map clone, body).
#[inline(always)]
pub(super) fn reqwest_op(s: &Rq) -> reqwest::Request {
    match s
        .client
        .post(s.url.as_str())
        .headers(s.headers.clone())
        .body(BODY)
        .build()
    {
        Ok(r) => r,
        Err(e) => unexpected(&e),
    }
}

/// reqwest's inputs, with one request built and checked.
pub(super) fn reqwest_setup() -> Rq {
    let mut headers = HeaderMap::new();
    for (k, v) in HEADERS {
        headers.insert(
            HeaderName::from_bytes(k.as_bytes()).expect("header name"),
            HeaderValue::from_static(v),
        );
    }
    let s = Rq {
        client: reqwest::Client::new(),
        url: format!("http://{HOST}{PATH}"),
        headers,
    };
    let req = reqwest_op(&s);
    assert_eq!(req.method(), reqwest::Method::POST);
    assert_eq!(req.url().path(), PATH);
    for (k, v) in HEADERS {
        assert_eq!(
            req.headers().get(k).map(|x| x.as_bytes()),
            Some(v.as_bytes())
        );
    }
    assert_eq!(req.body().and_then(|b| b.as_bytes()), Some(BODY.as_bytes()));
    s
}

/// reqwest building the request, no more (both REST in-memory scenarios use it).
pub(super) fn reqwest_build(cfg: &RunConfig) -> Measurement {
    let mut s = reqwest_setup();
    bench_op(
        cfg,
        &mut s,
        |_| {},
        |s| {
            let r = reqwest_op(s);
            black_box(&r);
        },
    )
}
