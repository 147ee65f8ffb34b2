//! nexus-net 0.4.2 in the REST rows (issue 24): its `rest::RequestWriter`
//! (typestate builder into its own 32 KiB write buffer, Host and
//! `Connection: keep-alive` pre-serialized) and `http::ResponseReader`, in
//! memory exactly as its `rest::Client::send` drives them (consume the last
//! response, buffer the bytes, parse the head, Content-Length, body view),
//! and over loopback through `rest::Client<TcpStream>` itself.

use std::hint::black_box;

use nexus_net::http::ResponseReader as NxReader;
use nexus_net::rest::{
    ClientBuilder, Request as NxRequest, RequestWriter as NxWriter, RestResponse,
};

use super::memory::HOST;
use super::{BODY, HEADERS, PATH, RESPONSE_BODY, check_request, response};
use crate::harness::{Measurement, RunConfig, bench_batch, bench_op};
use crate::suites::{touch, unexpected};

/// The library column of every nexus-net row.
pub const LIB: &str = "nexus-net 0.4.2";

/// Note of the in-memory build + write + parse row.
pub const NOTE_MEMORY: &str = "ResponseReader::read copies the response in; RequestWriter post().header() x4 \
                               .body().finish() into its buffer, copy the wire bytes to a sink; next() + \
                               Content-Length + RestResponse body (its Client::send's steps, without the socket)";
/// Note of the build-only row.
pub const NOTE_BUILD: &str = "RequestWriter post().header() x4 .body().finish(): the wire bytes in its buffer \
                              (CR/LF checked, Content-Length written, Host + Connection pre-serialized)";
/// Note of the loopback row.
pub const NOTE_RTT: &str = "rest::Client::send (ClientBuilder::disable_nagle().connect, blocking std \
                            TcpStream in its MaybeTls::Plain) with RequestWriter + ResponseReader; request built inside the sample";

/// The request, with the same run-time inputs as tickwire's (`memory::tw_build`).
#[inline(always)]
pub fn build(w: &mut NxWriter) -> NxRequest<'_> {
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

/// Parse the buffered response the way `rest::Client::send` does after its
/// reads: head, status, Content-Length, body bytes present, the body view.
#[inline(always)]
fn parse(r: &mut NxReader) -> RestResponse<'_> {
    match r.next() {
        Ok(Some(_)) => {}
        other => unexpected(&other),
    }
    let status = r.status();
    let len = match r.content_length() {
        Some(Ok(n)) => n,
        other => unexpected(&other),
    };
    if r.body_remaining() < len {
        unexpected(&"short body");
    }
    r.set_body_consumed(len);
    RestResponse::new(status, len, r)
}

struct Mem {
    w: NxWriter,
    r: NxReader,
    sink: Vec<u8>,
    resp: Vec<u8>,
}

/// One in-memory operation; the same order as tickwire's row (response in first).
#[inline(always)]
fn mem_op(s: &mut Mem) -> u64 {
    s.r.consume_response();
    if let Err(e) = s.r.read(&s.resp) {
        unexpected(&e);
    }
    let req = build(&mut s.w);
    s.sink.clear();
    s.sink.extend_from_slice(req.as_bytes());
    let resp = parse(&mut s.r);
    if resp.status() != 200 {
        unexpected(&resp.status());
    }
    touch(resp.body()) + touch(&s.sink)
}

/// The in-memory build + write + parse row.
pub fn memory(cfg: &RunConfig) -> Measurement {
    let mut s = Mem {
        w: NxWriter::new(HOST).expect("writer"),
        r: NxReader::new(16 << 10),
        sink: Vec::with_capacity(4096),
        resp: response(),
    };
    mem_op(&mut s);
    check_request(&s.sink, HOST);
    s.r.consume_response();
    s.r.read(&response()).expect("room for the response");
    {
        let resp = parse(&mut s.r);
        assert_eq!(resp.body(), RESPONSE_BODY.as_bytes());
        assert_eq!(
            resp.header("content-type"),
            Some("application/json;charset=UTF-8")
        );
    }
    bench_op(
        cfg,
        &mut s,
        |_| {},
        |s| {
            black_box(mem_op(s));
        },
    )
}

/// The build-only row.
pub fn build_only(cfg: &RunConfig) -> Measurement {
    let mut w = NxWriter::new(HOST).expect("writer");
    check_request(build(&mut w).as_bytes(), HOST);
    bench_op(
        cfg,
        &mut w,
        |_| {},
        |w| {
            black_box(touch(build(w).as_bytes()));
        },
    )
}

/// The loopback round trip against the suite's server at `url` (`http://host:port`).
pub fn roundtrip(cfg: &RunConfig, url: &str) -> Measurement {
    let mut c = ClientBuilder::new()
        .disable_nagle()
        .connect(url)
        .expect("connect");
    let host = url.trim_start_matches("http://");
    let mut w = NxWriter::new(host).expect("writer");
    let mut r = NxReader::new(16 << 10);
    {
        let req = build(&mut w);
        check_request(req.as_bytes(), host);
        let resp = c.send(req, &mut r).expect("first round trip");
        assert_eq!(resp.status(), 200);
        assert_eq!(resp.body(), RESPONSE_BODY.as_bytes());
    }
    let mut st = (c, w, r);
    bench_batch(
        &RunConfig { batch: 1, ..*cfg },
        &mut st,
        |_| {},
        |(c, w, r), _| {
            let req = build(w);
            match c.send(req, r) {
                Ok(resp) if resp.status() == 200 => {
                    black_box(touch(resp.body()));
                }
                other => unexpected(&other.map(|x| x.status())),
            }
        },
    )
}
