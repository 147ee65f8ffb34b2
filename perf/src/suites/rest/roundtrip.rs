//! Loopback round trip on one keep-alive connection: the measuring thread
//! POSTs the order (4 headers, ~100 B JSON) and reads the 200 OK JSON answer
//! from a server thread on the other core. One round trip per sample. The
//! server is the same for every row: blocking std socket, httparse for the
//! request head, Content-Length body, one fixed response.

use std::hint::black_box;
use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use tickwire::rest::{Client, RequestWriter, ResponseReader};
use tickwire::socket::RecvMode;

use super::{BODY, HEADERS, PATH, RESPONSE_BODY, check_request, response};
use crate::harness::{Measurement, RunConfig, bench_batch};
use crate::suites::loopback::spawn_pinned;
use crate::suites::{Case, touch, unexpected};

/// Scenario name.
pub const SCENARIO: &str = "REST loopback round trip, POST 104B JSON -> 200 OK JSON (keep-alive)";

const NOTE_TW: &str = "rest::Client::send (blocking std socket, TCP_NODELAY) with RequestWriter + \
                       ResponseReader; request built inside the sample";
const NOTE_TW_BUSY: &str = "the same with ClientBuilder::recv_mode(RecvMode::Spin): the response is awaited \
                            spinning on non-blocking reads instead of sleeping in read(2) (same server)";
const NOTE_TW_BUILDER: &str = "rest::Client's own request builder: client.post(path).header() x4 .body().send() \
                               (blocking std socket, TCP_NODELAY; the client's writer and reader)";
const NOTE_REQWEST: &str = "reqwest::Client post().headers().body().send().await + bytes().await on a \
                            tokio current_thread runtime (block_on per request), pooled keep-alive connection";
const NOTE_RAW: &str = "the floor: write tickwire's request bytes, read the response's byte count \
                        (plain blocking TcpStream, TCP_NODELAY, no HTTP on the client)";

pub(super) fn cases(peer: usize, v: &mut Vec<Case<'static>>) {
    v.push(Case::new(SCENARIO, "tickwire", true, NOTE_TW, move |cfg| {
        tickwire(cfg, peer, RecvMode::Sleep)
    }));
    v.push(Case::new(
        SCENARIO,
        "tickwire (busy-poll)",
        false,
        NOTE_TW_BUSY,
        move |cfg| tickwire(cfg, peer, RecvMode::Spin),
    ));
    v.push(Case::new(
        SCENARIO,
        "tickwire (client.post() builder)",
        false,
        NOTE_TW_BUILDER,
        move |cfg| tickwire_builder(cfg, peer),
    ));
    v.push(Case::new(
        SCENARIO,
        super::nexus::LIB,
        false,
        super::nexus::NOTE_RTT,
        move |cfg| {
            let (url, h) = server(peer);
            let m = super::nexus::roundtrip(cfg, &url);
            h.join().expect("server thread");
            m
        },
    ));
    v.push(Case::new(
        SCENARIO,
        "reqwest 0.13 (tokio current_thread)",
        false,
        NOTE_REQWEST,
        move |cfg| reqwest_rtt(cfg, peer),
    ));
    v.push(Case::new(
        SCENARIO,
        "raw TCP (floor)",
        false,
        NOTE_RAW,
        move |cfg| raw(cfg, peer),
    ));
}

fn one(cfg: &RunConfig) -> RunConfig {
    RunConfig { batch: 1, ..*cfg }
}

/// A server on 127.0.0.1:0 for one connection, on the peer core: answers every
/// complete request with [`response`] until the client closes.
fn server(peer: usize) -> (String, std::thread::JoinHandle<()>) {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
    let addr = l.local_addr().expect("local addr");
    let h = spawn_pinned(peer, move || {
        let Ok((mut s, _)) = l.accept() else { return };
        s.set_nodelay(true).expect("nodelay");
        let resp = response();
        let mut buf = vec![0u8; 64 << 10];
        let mut have = 0;
        loop {
            // Every complete request at the front of the buffer gets its answer.
            loop {
                let mut h = [httparse::EMPTY_HEADER; 32];
                let mut req = httparse::Request::new(&mut h);
                let head = match req.parse(&buf[..have]) {
                    Ok(httparse::Status::Complete(n)) => n,
                    Ok(httparse::Status::Partial) => break,
                    Err(_) => return,
                };
                let len = req
                    .headers
                    .iter()
                    .find(|x| x.name.eq_ignore_ascii_case("content-length"))
                    .and_then(|x| std::str::from_utf8(x.value).ok()?.trim().parse().ok())
                    .unwrap_or(0usize);
                if have < head + len {
                    break;
                }
                buf.copy_within(head + len..have, 0);
                have -= head + len;
                if s.write_all(&resp).is_err() {
                    return;
                }
            }
            match s.read(&mut buf[have..]) {
                Ok(0) | Err(_) => return,
                Ok(n) => have += n,
            }
        }
    });
    (format!("http://{addr}"), h)
}

fn tickwire(cfg: &RunConfig, peer: usize, mode: RecvMode) -> Measurement {
    let (url, h) = server(peer);
    let mut c = Client::builder()
        .recv_mode(mode)
        .build(&url)
        .expect("client");
    let mut w = RequestWriter::new(vec![0u8; 4096], c.host_header()).expect("writer");
    let mut r: ResponseReader<Vec<u8>> = ResponseReader::new(vec![0u8; 16 << 10]);
    {
        let req = build(&mut w);
        check_request(req.as_bytes(), c.host_header());
        let resp = c.send(&req, &mut r).expect("first round trip");
        assert_eq!(resp.body(), RESPONSE_BODY.as_bytes());
    }
    let mut st = (c, w, r);
    let m = bench_batch(
        &one(cfg),
        &mut st,
        |_| {},
        |(c, w, r), _| {
            let req = build(w);
            match c.send(&req, r) {
                Ok(resp) if resp.status() == 200 => {
                    black_box(touch(resp.body()));
                }
                other => unexpected(&other.map(|x| x.status())),
            }
        },
    );
    assert_eq!(st.0.stats().connects, 1, "one keep-alive connection");
    drop(st);
    h.join().expect("server thread");
    m
}

fn tickwire_builder(cfg: &RunConfig, peer: usize) -> Measurement {
    let (url, h) = server(peer);
    let mut c = Client::builder()
        .request_buffer(4096)
        .response_buffer(16 << 10)
        .build(&url)
        .expect("client");
    assert_eq!(
        send_builder(&mut c).expect("first round trip").body(),
        RESPONSE_BODY.as_bytes()
    );
    let m = bench_batch(
        &one(cfg),
        &mut c,
        |_| {},
        |c, _| match send_builder(c) {
            Ok(resp) if resp.status() == 200 => {
                black_box(touch(resp.body()));
            }
            other => unexpected(&other.map(|x| x.status())),
        },
    );
    assert_eq!(c.stats().connects, 1, "one keep-alive connection");
    drop(c);
    h.join().expect("server thread");
    m
}

#[inline(always)]
fn send_builder(c: &mut Client) -> Result<tickwire::rest::RestResponse<'_>, tickwire::rest::Error> {
    c.post(PATH)
        .header(HEADERS[0].0, HEADERS[0].1)
        .header(HEADERS[1].0, HEADERS[1].1)
        .header(HEADERS[2].0, HEADERS[2].1)
        .header(HEADERS[3].0, HEADERS[3].1)
        .body(BODY.as_bytes())
        .send()
}

#[inline(always)]
fn build(w: &mut RequestWriter<Vec<u8>>) -> tickwire::rest::Request<'_> {
    match w
        .post(PATH)
        .header(HEADERS[0].0, HEADERS[0].1)
        .header(HEADERS[1].0, HEADERS[1].1)
        .header(HEADERS[2].0, HEADERS[2].1)
        .header(HEADERS[3].0, HEADERS[3].1)
        .body(BODY.as_bytes())
        .finish()
    {
        Ok(r) => r,
        Err(e) => unexpected(&e),
    }
}

fn reqwest_rtt(cfg: &RunConfig, peer: usize) -> Measurement {
    let (url, h) = server(peer);
    let url = format!("{url}{PATH}");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let client = reqwest::Client::new();
    let mut headers = HeaderMap::new();
    for (k, v) in HEADERS {
        headers.insert(
            HeaderName::from_bytes(k.as_bytes()).expect("header name"),
            HeaderValue::from_static(v),
        );
    }
    let round = |client: &reqwest::Client| {
        rt.block_on(async {
            let resp = client
                .post(url.as_str())
                .headers(headers.clone())
                .body(BODY)
                .send()
                .await?;
            let status = resp.status();
            resp.bytes().await.map(|b| (status, b))
        })
    };
    match round(&client) {
        Ok((status, b)) => {
            assert_eq!(status, 200);
            assert_eq!(&b[..], RESPONSE_BODY.as_bytes());
        }
        Err(e) => unexpected(&e),
    }
    let mut st = client;
    let m = bench_batch(
        &one(cfg),
        &mut st,
        |_| {},
        |client, _| match round(client) {
            Ok((status, b)) if status == 200 => {
                black_box(touch(&b));
            }
            other => unexpected(&other.map(|x| x.0)),
        },
    );
    drop(st);
    drop(rt);
    h.join().expect("server thread");
    m
}

fn raw(cfg: &RunConfig, peer: usize) -> Measurement {
    let (url, h) = server(peer);
    let addr = url.trim_start_matches("http://").to_string();
    let mut w = RequestWriter::new(vec![0u8; 4096], &addr).expect("writer");
    let out = build(&mut w).as_bytes().to_vec();
    let mut back = vec![0u8; response().len()];
    let mut s = TcpStream::connect(&addr).expect("connect");
    s.set_nodelay(true).expect("nodelay");
    s.write_all(&out).expect("write");
    s.read_exact(&mut back).expect("read");
    assert_eq!(back, response());
    let mut st = (s, back);
    let m = bench_batch(
        &one(cfg),
        &mut st,
        |_| {},
        |(s, back), _| {
            if s.write_all(&out).is_err() || !read_all(s, back) {
                unexpected(&"raw round trip failed");
            }
            black_box(touch(back));
        },
    );
    drop(st);
    h.join().expect("server thread");
    m
}

fn read_all(s: &mut TcpStream, mut buf: &mut [u8]) -> bool {
    while !buf.is_empty() {
        match s.read(buf) {
            Ok(0) => return false,
            Ok(k) => buf = &mut buf[k..],
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
    true
}
