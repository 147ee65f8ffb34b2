//! Client behaviour against scripted raw-TCP servers on 127.0.0.1: keep-alive reuse,
//! stale connections and the retry policy, timeouts, responses split into single bytes,
//! large requests written in pieces.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use tickwire_codec::http::{Error as HttpError, RequestWriter, ResponseReader};

use super::*;

#[path = "../../tests/net_events/mod.rs"]
pub(super) mod net_events;

#[path = "../../tests/rest_util/mod.rs"]
mod rest_util;
use rest_util::read_request;

const OK: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

/// A server that runs `script` on each accepted connection (in order, one at a time)
/// for `conns` connections and returns what each script returned.
fn server<T: Send + 'static>(
    conns: usize,
    script: impl Fn(usize, TcpStream) -> T + Send + 'static,
) -> (String, JoinHandle<Vec<T>>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    let h = thread::spawn(move || {
        (0..conns)
            .map(|i| {
                let (s, _) = l.accept().unwrap();
                s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
                script(i, s)
            })
            .collect()
    });
    (url, h)
}

fn parts(c: &Client) -> (RequestWriter<Vec<u8>>, ResponseReader<Vec<u8>>) {
    (
        RequestWriter::new(vec![0; 1 << 16], c.host_header()).unwrap(),
        ResponseReader::new(vec![0; 1 << 16]),
    )
}

#[test]
fn keep_alive_reuses_one_connection() {
    let (url, h) = server(1, |_, mut s| {
        let mut n = 0;
        while read_request(&mut s).is_some() {
            s.write_all(OK).unwrap();
            n += 1;
        }
        n
    });
    let mut c = Client::connect(&url).unwrap();
    let (mut w, mut r) = parts(&c);
    let port = c.local_addr().unwrap().port();
    for _ in 0..5 {
        let req = w.get("/x").finish().unwrap();
        let resp = c.send(&req, &mut r).unwrap();
        assert_eq!((resp.status(), resp.body()), (200, &b"ok"[..]));
        assert_eq!(c.local_addr().unwrap().port(), port);
    }
    assert_eq!(c.stats().connects, 1);
    c.disconnect();
    assert_eq!(h.join().unwrap(), [5]);
}

#[test]
fn stale_connection_is_retried_for_idempotent_requests() {
    // Each connection answers one request without saying `Connection: close`, then
    // closes: the next request finds the connection stale.
    let (url, h) = server(2, |_, mut s| {
        read_request(&mut s).unwrap();
        s.write_all(OK).unwrap();
    });
    // No idle probe: however long the machine takes, the stale connection is found by
    // the request itself, which is then retried.
    let mut c = Client::builder().idle_probe(None).build(&url).unwrap();
    let (mut w, mut r) = parts(&c);
    assert_eq!(
        c.send(&w.get("/1").finish().unwrap(), &mut r)
            .unwrap()
            .status(),
        200
    );
    // The server closed the connection after answering: its FIN has arrived.
    net_events::wait_peer_closed(c.local_addr().unwrap(), c.peer_addr().unwrap());
    let resp = c.send(&w.delete("/2").finish().unwrap(), &mut r).unwrap();
    assert_eq!(resp.status(), 200);
    let s = c.stats();
    assert_eq!((s.connects, s.requests, s.retries), (2, 3, 1));
    h.join().unwrap();
}

#[test]
fn stale_connection_is_not_retried_for_post() {
    let (url, h) = server(2, |i, mut s| {
        let req = read_request(&mut s).unwrap();
        s.write_all(OK).unwrap();
        (i, req.starts_with(b"POST"))
    });
    // Probe disabled: the POST goes out on the stale connection and fails.
    let mut c = Client::builder().idle_probe(None).build(&url).unwrap();
    let (mut w, mut r) = parts(&c);
    c.send(&w.post("/1").body(b"a").finish().unwrap(), &mut r)
        .unwrap();
    net_events::wait_peer_closed(c.local_addr().unwrap(), c.peer_addr().unwrap());
    match c.send(&w.post("/2").body(b"b").finish().unwrap(), &mut r) {
        Err(Error::ConnectionLost { .. } | Error::Io { .. }) => {}
        other => panic!("{other:?}"),
    }
    assert_eq!(c.stats().retries, 0);
    assert!(!c.is_connected());
    // The next call connects again.
    let resp = c
        .send(&w.post("/3").body(b"c").finish().unwrap(), &mut r)
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(h.join().unwrap(), [(0, true), (1, true)]);
}

#[test]
fn idle_probe_replaces_a_closed_connection_before_a_post() {
    let (url, h) = server(2, |_, mut s| {
        let req = read_request(&mut s).unwrap();
        s.write_all(OK).unwrap();
        req
    });
    // The default idle probe: before every reuse, however short the idle time (the
    // interval itself is the codec's rule, tested there with instants).
    let mut c = Client::builder().build(&url).unwrap();
    let (mut w, mut r) = parts(&c);
    c.send(&w.post("/1").body(b"a").finish().unwrap(), &mut r)
        .unwrap();
    // The server's FIN has arrived.
    net_events::wait_peer_closed(c.local_addr().unwrap(), c.peer_addr().unwrap());
    let resp = c
        .send(&w.patch("/2").body(b"b").finish().unwrap(), &mut r)
        .unwrap();
    assert_eq!(resp.status(), 200);
    let s = c.stats();
    assert_eq!(
        (s.connects, s.requests, s.retries, s.stale_probed),
        (2, 2, 0, 1)
    );
    let reqs = h.join().unwrap();
    assert!(reqs[1].starts_with(b"PATCH /2 "));
}

#[test]
fn connection_close_and_close_delimited_responses_end_the_connection() {
    let (url, h) = server(2, |i, mut s| {
        read_request(&mut s).unwrap();
        if i == 0 {
            s.write_all(b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\na")
                .unwrap();
        } else {
            s.write_all(b"HTTP/1.1 200 OK\r\n\r\nuntil the end")
                .unwrap();
        }
    });
    let mut c = Client::connect(&url).unwrap();
    let (mut w, mut r) = parts(&c);
    let resp = c.send(&w.get("/a").finish().unwrap(), &mut r).unwrap();
    assert_eq!(resp.body(), b"a");
    assert!(!c.is_connected());
    let resp = c.send(&w.get("/b").finish().unwrap(), &mut r).unwrap();
    assert_eq!(resp.body(), b"until the end");
    assert!(!resp.keep_alive());
    assert!(!c.is_connected());
    assert_eq!(c.stats().connects, 2);
    h.join().unwrap();
}

#[test]
fn response_in_single_bytes_and_head_request() {
    let (url, h) = server(1, |_, mut s| {
        read_request(&mut s).unwrap();
        s.set_nodelay(true).unwrap();
        let resp = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\nT: 1\r\n\r\n";
        // One byte at a time, each read by the client before the next is sent.
        let (ours, theirs) = (s.local_addr().unwrap(), s.peer_addr().unwrap());
        for b in resp {
            s.write_all(&[*b]).unwrap();
            net_events::wait_delivered(ours, theirs);
            net_events::wait_read(theirs, ours);
        }
        read_request(&mut s).unwrap();
        // A HEAD response announces a length but has no body.
        s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")
            .unwrap();
        read_request(&mut s).unwrap();
        s.write_all(OK).unwrap();
    });
    let mut c = Client::connect(&url).unwrap();
    let (mut w, mut r) = parts(&c);
    assert_eq!(
        c.send(&w.get("/c").finish().unwrap(), &mut r)
            .unwrap()
            .body(),
        b"abcde"
    );
    let resp = c.send(&w.head("/h").finish().unwrap(), &mut r).unwrap();
    assert_eq!((resp.status(), resp.body()), (200, &b""[..]));
    assert_eq!(
        c.send(&w.get("/x").finish().unwrap(), &mut r)
            .unwrap()
            .body(),
        b"ok"
    );
    assert_eq!(c.stats().connects, 1);
    h.join().unwrap();
}

#[test]
fn large_request_is_written_whole_to_a_slow_reader() {
    const LEN: usize = 8 << 20;
    let (url, h) = server(1, |_, mut s| {
        // Read only once the client's writes back up against the full socket.
        net_events::wait_backed_up(s.peer_addr().unwrap(), s.local_addr().unwrap());
        let req = read_request(&mut s).unwrap();
        s.write_all(OK).unwrap();
        req
    });
    let body: Vec<u8> = (0..LEN).map(|i| (i % 251) as u8).collect();
    let mut c = Client::connect(&url).unwrap();
    let mut w = RequestWriter::new(vec![0; LEN + 4096], c.host_header()).unwrap();
    let mut r: ResponseReader<Vec<u8>> = ResponseReader::new(vec![0; 4096]);
    let resp = c
        .send(&w.put("/big").body(&body).finish().unwrap(), &mut r)
        .unwrap();
    assert_eq!(resp.status(), 200);
    let req = &h.join().unwrap()[0];
    assert!(req.ends_with(&body));
}

#[test]
fn read_timeout_is_a_typed_error() {
    // Half a response, then silence: the socket stays open until the client has seen
    // its timeout (an event; a server that slept a while could close first on a
    // loaded machine, and the client would see the end of the stream instead).
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let done_rx = std::sync::Mutex::new(done_rx);
    let (url, h) = server(1, move |_, mut s| {
        read_request(&mut s).unwrap();
        s.write_all(b"HTTP/1.1 200 OK\r\n").unwrap();
        let _ = done_rx.lock().unwrap().recv();
    });
    let mut c = Client::builder()
        .read_timeout(Some(Duration::from_millis(150)))
        .connect(&url)
        .unwrap();
    let (mut w, mut r) = parts(&c);
    match c.send(&w.get("/slow").finish().unwrap(), &mut r) {
        Err(Error::ReadTimeout { .. }) => {}
        other => panic!("{other:?}"),
    }
    assert!(!c.is_connected());
    done_tx.send(()).unwrap();
    h.join().unwrap();
}

#[test]
fn read_timeout_on_a_reused_connection_started_without_a_clock_read() {
    // No deadline and the default idle probe: the second request starts at the
    // connection's latest `now` and its read timer at the socket's wait; the socket's
    // read timeout ends the wait and the clock read after it finds the timer passed.
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let done_rx = std::sync::Mutex::new(done_rx);
    let (url, h) = server(1, move |_, mut s| {
        read_request(&mut s).unwrap();
        s.write_all(OK).unwrap();
        read_request(&mut s).unwrap();
        s.write_all(b"HTTP/1.1 200 OK\r\n").unwrap();
        let _ = done_rx.lock().unwrap().recv();
    });
    let read = Duration::from_millis(150);
    let mut c = Client::builder()
        .read_timeout(Some(read))
        .connect(&url)
        .unwrap();
    let (mut w, mut r) = parts(&c);
    assert_eq!(
        c.send(&w.get("/a").finish().unwrap(), &mut r)
            .unwrap()
            .body(),
        b"ok"
    );
    let t0 = std::time::Instant::now();
    match c.send(&w.get("/slow").finish().unwrap(), &mut r) {
        Err(Error::ReadTimeout { .. }) => {}
        other => panic!("{other:?}"),
    }
    // A lower bound only: the socket cannot end its wait before its timeout.
    assert!(t0.elapsed() >= read, "{:?}", t0.elapsed());
    assert!(!c.is_connected());
    done_tx.send(()).unwrap();
    h.join().unwrap();
}

#[test]
fn connect_errors_are_typed() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    match Client::connect(&format!("http://127.0.0.1:{port}")) {
        Err(Error::Connect { source, .. }) => {
            assert_eq!(source.kind(), std::io::ErrorKind::ConnectionRefused)
        }
        other => panic!("{other:?}"),
    }
    match Client::builder()
        .connect_timeout(Duration::ZERO)
        .connect(&format!("http://127.0.0.1:{port}"))
    {
        Err(Error::ConnectTimeout { .. }) => {}
        other => panic!("{other:?}"),
    }
    // TCP only, asked for https://: a scheme error, before any connect.
    assert!(matches!(
        Client::builder()
            .connector(TcpConnector::default())
            .connect("https://127.0.0.1:1"),
        Err(Error::Url(crate::rest::UrlError::Scheme))
    ));
    // REST's own URL error, naming REST's schemes.
    match Client::connect("ftp://h") {
        Err(e @ Error::Url(crate::rest::UrlError::Scheme)) => {
            let text = e.to_string();
            assert!(text.contains("http:// or https://"), "{text}");
            assert!(!text.contains("ws://"), "{text}");
        }
        other => panic!("{other:?}"),
    }
}

/// The request builder on the client's own writer: Host and the URL's base path on
/// every method, query pairs, headers, a JSON body; the response borrowed from the
/// client's reader.
#[test]
fn request_builder_sends_under_the_base_path() {
    let (url, h) = server(1, |_, mut s| {
        let mut seen = Vec::new();
        while let Some(req) = read_request(&mut s) {
            if req.starts_with(b"HEAD ") {
                s.write_all(&OK[..OK.len() - 2]).unwrap();
            } else {
                s.write_all(OK).unwrap();
            }
            seen.push(String::from_utf8(req).unwrap());
        }
        seen
    });
    let mut c = Client::connect(&format!("{url}/api/v3/")).unwrap();
    let host = c.host_header().to_owned();
    let resp = c.get("/time").query("symbol", "BTC USDT").send().unwrap();
    assert_eq!((resp.status(), resp.body()), (200, &b"ok"[..]));
    let resp = c
        .post("/order")
        .header("X-Key", "k")
        .json_bytes(br#"{"side":"BUY"}"#)
        .send()
        .unwrap();
    assert_eq!(resp.body(), b"ok");
    c.put("/order").body(b"x").send().unwrap();
    c.delete("/order?id=1").send().unwrap();
    c.patch("/order").send().unwrap();
    c.head("/h").send().unwrap();
    c.send_with(|w| w.get("/with").finish()).unwrap();
    // The explicit path: a writer with Host and base path preset.
    let mut w = c.request_writer(vec![0; 4096]).unwrap();
    let mut r: ResponseReader<Vec<u8>> = ResponseReader::new(vec![0; 4096]);
    c.send(&w.get("/explicit").finish().unwrap(), &mut r)
        .unwrap();
    drop(c);
    let seen = h.join().unwrap().remove(0);
    let lines: Vec<&str> = seen.iter().map(|r| r.lines().next().unwrap()).collect();
    assert_eq!(
        lines,
        [
            "GET /api/v3/time?symbol=BTC%20USDT HTTP/1.1",
            "POST /api/v3/order HTTP/1.1",
            "PUT /api/v3/order HTTP/1.1",
            "DELETE /api/v3/order?id=1 HTTP/1.1",
            "PATCH /api/v3/order HTTP/1.1",
            "HEAD /api/v3/h HTTP/1.1",
            "GET /api/v3/with HTTP/1.1",
            "GET /api/v3/explicit HTTP/1.1",
        ]
    );
    for r in &seen {
        assert!(r.contains(&format!("\r\nHost: {host}\r\n")), "{r}");
    }
    assert!(
        seen[1].ends_with(
            "X-Key: k\r\nContent-Type: application/json\r\nContent-Length: 14\r\n\r\n\
             {\"side\":\"BUY\"}"
        ),
        "{}",
        seen[1]
    );
    assert!(
        seen[2].ends_with("Content-Length: 1\r\n\r\nx"),
        "{}",
        seen[2]
    );
    assert!(seen[4].contains("Content-Length: 0\r\n"), "{}", seen[4]);
}

/// A request that does not fit the client's writer is refused before anything is
/// sent, with an error that names the setting; a bigger buffer sends it.
#[test]
fn request_too_large_names_the_setting() {
    let (url, h) = server(2, |_, mut s| {
        let mut n = 0;
        while read_request(&mut s).is_some() {
            s.write_all(OK).unwrap();
            n += 1;
        }
        n
    });
    let mut c = Client::builder()
        .request_buffer(1024)
        .connect(&url)
        .unwrap();
    let body = vec![b'x'; 2048];
    match c.post("/big").body(&body).send() {
        Err(e @ Error::RequestTooLarge { buffer: 1024 }) => {
            assert!(
                e.to_string().contains("ClientBuilder::request_buffer"),
                "{e}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(c.stats().requests, 0);
    // A bad header is a build error, not a size one.
    assert!(matches!(
        c.get("/").header("Host", "x").send(),
        Err(Error::Build(crate::rest::BuildError::ReservedHeader))
    ));
    drop(c);
    let mut c = Client::builder()
        .request_buffer(4096)
        .connect(&url)
        .unwrap();
    assert_eq!(c.post("/big").body(&body).send().unwrap().body(), b"ok");
    drop(c);
    assert_eq!(h.join().unwrap(), [0, 1]);
}

/// A server that sends its response head one byte every 50 ms, forever: each read
/// gets a byte well within the read timeout, so only the request timeout ends the
/// call. It must end with `RequestTimeout` naming the request (the 5 s bound is a hang
/// guard: without the deadline the 16 KiB head limit would take ~14 minutes).
#[test]
fn request_timeout_cuts_a_dribbling_server() {
    fn dribble(mut s: TcpStream) {
        if read_request(&mut s).is_none() {
            return;
        }
        for b in b"HTTP/1.1 200 OK\r\n"
            .iter()
            .chain(std::iter::repeat(&b'X'))
        {
            if s.write_all(&[*b]).is_err() {
                return;
            }
            thread::sleep(Duration::from_millis(50));
        }
    }
    let (url, h) = server(2, |_, s| dribble(s));
    let mut c = Client::builder()
        .timeout(Duration::from_millis(300))
        .connect(&format!("{url}/api"))
        .unwrap();
    let t = std::time::Instant::now();
    match c.get("/slow").query("a", "1").send() {
        Err(e @ Error::RequestTimeout { .. }) => {
            let Error::RequestTimeout {
                method,
                url: u,
                after,
            } = &e
            else {
                unreachable!()
            };
            assert_eq!(*method, crate::rest::Method::Get);
            assert_eq!(*u, format!("{url}/api/slow?a=1"));
            assert_eq!(*after, Duration::from_millis(300));
            assert!(e.to_string().contains("/api/slow?a=1"), "{e}");
        }
        other => panic!("{other:?}"),
    }
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    assert!(!c.is_connected());
    // The per-request override, on a second dribbling connection.
    let t = std::time::Instant::now();
    match c.get("/slow").timeout(Duration::from_millis(200)).send() {
        Err(Error::RequestTimeout { after, .. }) => {
            assert_eq!(after, Duration::from_millis(200));
        }
        other => panic!("{other:?}"),
    }
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    h.join().unwrap();
}

#[test]
fn malformed_response_is_an_http_error_and_drops_the_connection() {
    let (url, h) = server(1, |_, mut s| {
        read_request(&mut s).unwrap();
        s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab")
            .unwrap();
    });
    let mut c = Client::connect(&url).unwrap();
    let (mut w, mut r) = parts(&c);
    match c.send(&w.get("/").finish().unwrap(), &mut r) {
        Err(Error::Http {
            error: HttpError::ConflictingContentLength,
            ..
        }) => {}
        other => panic!("{other:?}"),
    }
    assert!(!c.is_connected());
    h.join().unwrap();
}

#[test]
fn reader_is_cleared_for_a_connection_opened_ahead_of_the_request() {
    let (url, h) = server(2, |i, mut s| {
        read_request(&mut s).unwrap();
        if i == 0 {
            // Close-delimited: leaves the reader at EOF.
            s.write_all(b"HTTP/1.1 200 OK\r\n\r\nfirst").unwrap();
        } else {
            s.write_all(OK).unwrap();
        }
    });
    let mut c = Client::connect(&url).unwrap();
    let (mut w, mut r) = parts(&c);
    assert_eq!(
        c.send(&w.get("/1").finish().unwrap(), &mut r)
            .unwrap()
            .body(),
        b"first"
    );
    assert!(r.is_eof());
    // As a pool does at acquire time: connect before the next request.
    c.ensure_connected().unwrap();
    assert_eq!(
        c.send(&w.get("/2").finish().unwrap(), &mut r)
            .unwrap()
            .body(),
        b"ok"
    );
    h.join().unwrap();
}

#[test]
fn a_connection_with_unsolicited_bytes_is_replaced() {
    // 0: the 408 comes with the response (it may land in the reader);
    // 1: it comes once the client has read the response (it waits in the socket: the
    //    idle probe sees it).
    // The client sends its next request only once the 408 has arrived (`sent`, then the
    // server's send queue empty); the server holds the connection open until the client
    // drops it (end of stream), so nothing but the 408 can tell the client it is stale.
    let (sent_tx, sent_rx) = std::sync::mpsc::channel::<(SocketAddr, SocketAddr)>();
    let sent_tx = std::sync::Mutex::new(sent_tx);
    let (url, h) = server(3, move |i, mut s| {
        read_request(&mut s).unwrap();
        s.write_all(OK).unwrap();
        let (ours, theirs) = (s.local_addr().unwrap(), s.peer_addr().unwrap());
        if i == 1 {
            net_events::wait_delivered(ours, theirs);
            net_events::wait_read(theirs, ours);
        }
        if i < 2 {
            // A server giving up on an idle connection, before closing it.
            s.write_all(b"HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\n\r\n")
                .unwrap();
            sent_tx.lock().unwrap().send((ours, theirs)).unwrap();
            let mut rest = Vec::new();
            let _ = s.read_to_end(&mut rest);
        }
    });
    let mut c = Client::builder().build(&url).unwrap();
    let (mut w, mut r) = parts(&c);
    for i in 1..=3u64 {
        let resp = c.send(&w.get("/").finish().unwrap(), &mut r).unwrap();
        // Never answered by the 408: the connection is replaced first.
        assert_eq!((resp.status(), resp.body()), (200, &b"ok"[..]));
        assert_eq!(c.stats().connects, i);
        if i < 3 {
            let (server, client) = sent_rx.recv().unwrap();
            net_events::wait_delivered(server, client);
        }
    }
    let s = c.stats();
    assert_eq!((s.connects, s.stale_probed, s.retries), (3, 2, 0));
    h.join().unwrap();
}

#[test]
fn write_timeout_is_a_typed_error() {
    // The server never reads: the request fills both socket buffers. It holds the
    // socket open until the client has seen its timeout (an event, not a sleep: a
    // loaded machine may take any time to fill the buffers).
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let done_rx = std::sync::Mutex::new(done_rx);
    let (url, h) = server(1, move |_, s| {
        let _ = done_rx.lock().unwrap().recv();
        drop(s);
    });
    let mut c = Client::builder()
        .write_timeout(Some(Duration::from_millis(200)))
        .connect(&url)
        .unwrap();
    let body = vec![b'x'; 32 << 20];
    let mut w = RequestWriter::new(vec![0; (32 << 20) + 4096], c.host_header()).unwrap();
    let mut r: ResponseReader<Vec<u8>> = ResponseReader::new(vec![0; 4096]);
    match c.send(&w.post("/big").body(&body).finish().unwrap(), &mut r) {
        Err(Error::WriteTimeout { .. }) => {}
        other => panic!("{:?}", other.map(|r| r.status())),
    }
    assert!(!c.is_connected());
    assert_eq!(c.stats().retries, 0);
    done_tx.send(()).unwrap();
    h.join().unwrap();
}

/// A request deadline shortens the socket's read timeout only for its own request:
/// the next request, without one, waits as long as the read timeout says.
#[test]
fn read_timeout_is_restored_after_a_deadline() {
    let (url, h) = server(1, |_, mut s| {
        read_request(&mut s).unwrap();
        s.write_all(OK).unwrap();
        read_request(&mut s).unwrap();
        // Longer than the first request's deadline.
        thread::sleep(Duration::from_millis(600));
        s.write_all(OK).unwrap();
        read_request(&mut s).is_none()
    });
    let mut c = Client::builder().read_timeout(None).connect(&url).unwrap();
    let resp = c
        .get("/fast")
        .timeout(Duration::from_millis(300))
        .send()
        .unwrap();
    assert_eq!(resp.body(), b"ok");
    assert_eq!(c.get("/slow").send().unwrap().body(), b"ok");
    assert_eq!(c.stats().connects, 1);
    drop(c);
    assert_eq!(h.join().unwrap(), [true]);
}
