//! `rest::Client` itself, in memory: the order POST (4 headers, 104 B JSON) sent
//! through the client over a stream that takes the request bytes and answers each
//! request with the 200 OK JSON response from memory (a custom `Connector`). What
//! the loopback round trip measures minus the kernel and the server: building the
//! request, the client's send path (keep-alive bookkeeping, the write, the read loop)
//! and the parse. Two tickwire rows, both zero-allocation: the explicit path
//! (`RequestWriter` + `Client::send` with the caller's reader), and the client's own
//! request builder (`client.post(path)...send()`): their ratio is what the one-expression
//! API costs.

use std::hint::black_box;
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::time::Duration;

use tickwire::rest::{Client, Connector, Error, HttpUrl, ResponseReader, Stream, Timeouts};

use super::{BODY, HEADERS, PATH, RESPONSE_BODY, check_request, response};
use crate::harness::{Measurement, RunConfig, bench_op};
use crate::suites::{Case, touch, unexpected};

/// Scenario name.
pub const SCENARIO: &str =
    "REST rest::Client in memory, POST 4 headers + 104B JSON -> 200 OK JSON (send path)";

const NOTE_SEND: &str = "RequestWriter post().header() x4 .body().finish(), then Client::send(&req, \
                         &mut reader) over an in-memory stream that answers each request";
const NOTE_BUILDER: &str = "client.post(path).header() x4 .body().send() on the client's own writer and \
                            reader, over the same in-memory stream";

pub(super) fn cases(v: &mut Vec<Case<'static>>) {
    v.push(Case::new(
        SCENARIO,
        "tickwire (RequestWriter + Client::send)",
        true,
        NOTE_SEND,
        explicit,
    ));
    v.push(Case::new(
        SCENARIO,
        "tickwire (client.post() builder)",
        false,
        NOTE_BUILDER,
        builder,
    ));
}

/// Answers every write (one whole request: the client writes it in one call) with
/// the response, read back in one piece.
struct MemStream {
    response: Vec<u8>,
    /// Bytes of the response still to be read.
    pending: usize,
    /// The last request's wire bytes, copied as a socket would.
    sink: Vec<u8>,
}

impl Read for MemStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let start = self.response.len() - self.pending;
        let n = self.pending.min(buf.len());
        buf[..n].copy_from_slice(&self.response[start..start + n]);
        self.pending -= n;
        Ok(n)
    }
}

impl Write for MemStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.sink.clear();
        self.sink.extend_from_slice(buf);
        self.pending = self.response.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Stream for MemStream {
    fn stale(&mut self) -> io::Result<bool> {
        Ok(false)
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        Err(io::ErrorKind::Unsupported.into())
    }

    fn set_read_timeout(&mut self, _: Option<Duration>) -> io::Result<()> {
        Ok(())
    }
}

#[derive(Clone)]
struct MemConnector;

impl Connector for MemConnector {
    type Stream = MemStream;

    fn connect(&self, _: &HttpUrl, _: &Timeouts) -> Result<MemStream, Error> {
        Ok(MemStream {
            response: response(),
            pending: 0,
            sink: Vec::with_capacity(4096),
        })
    }
}

fn client() -> Client<MemConnector> {
    let mut c = Client::builder()
        .idle_probe(None)
        .request_buffer(4096)
        .response_buffer(16 << 10)
        .connector(MemConnector)
        .build(&format!("http://{}", super::memory::HOST))
        .expect("client");
    c.ensure_connected().expect("in-memory connect");
    c
}

/// The request and response seen through the client's stream are the right ones.
fn check(c: &Client<MemConnector>, body: &[u8]) {
    assert_eq!(body, RESPONSE_BODY.as_bytes());
    check_request(&c.stream().expect("connected").sink, super::memory::HOST);
}

fn explicit(cfg: &RunConfig) -> Measurement {
    let mut c = client();
    let mut w = c.request_writer(vec![0u8; 4096]).expect("writer");
    let mut r: ResponseReader<Vec<u8>> = ResponseReader::new(vec![0u8; 16 << 10]);
    let body = {
        let req = super::memory::tw_build(&mut w);
        c.send(&req, &mut r).expect("send").body().to_vec()
    };
    check(&c, &body);
    let mut st = (c, w, r);
    let m = bench_op(
        cfg,
        &mut st,
        |_| {},
        |(c, w, r)| {
            let req = super::memory::tw_build(w);
            match c.send(&req, r) {
                Ok(resp) if resp.status() == 200 => {
                    black_box(touch(resp.body()));
                }
                other => unexpected(&other.map(|x| x.status())),
            }
        },
    );
    assert_eq!(st.0.stats().connects, 1, "one connection");
    m
}

#[inline(always)]
fn builder_op(c: &mut Client<MemConnector>) -> u64 {
    // Run-time values, as in `memory::tw_build`.
    let (path, h, body) = black_box((PATH, &HEADERS, BODY.as_bytes()));
    match c
        .post(path)
        .header(h[0].0, h[0].1)
        .header(h[1].0, h[1].1)
        .header(h[2].0, h[2].1)
        .header(h[3].0, h[3].1)
        .body(body)
        .send()
    {
        Ok(resp) if resp.status() == 200 => touch(resp.body()),
        other => unexpected(&other.map(|x| x.status())),
    }
}

fn builder(cfg: &RunConfig) -> Measurement {
    let mut c = client();
    builder_op(&mut c);
    let body = c
        .send_with(|w| Ok(super::memory::tw_build(w)))
        .expect("send")
        .body()
        .to_vec();
    check(&c, &body);
    let m = bench_op(
        cfg,
        &mut c,
        |_| {},
        |c| {
            black_box(builder_op(c));
        },
    );
    assert_eq!(c.stats().connects, 1, "one connection");
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both paths put the same bytes on the wire.
    #[test]
    fn both_paths_write_the_same_request() {
        let mut c = client();
        builder_op(&mut c);
        let a = c.stream().unwrap().sink.clone();
        let mut w = c.request_writer(vec![0u8; 4096]).unwrap();
        let mut r: ResponseReader<Vec<u8>> = ResponseReader::new(vec![0u8; 16 << 10]);
        let req = super::super::memory::tw_build(&mut w);
        c.send(&req, &mut r).unwrap();
        assert_eq!(a, c.stream().unwrap().sink);
    }
}
