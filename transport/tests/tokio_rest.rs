//! The async REST client and pool (feature `tokio`) against a local HTTP/1.1 server
//! built from the codec's RequestReader and ResponseWriter in a thread: keep-alive
//! reuse, chunked, close-delimited and HEAD responses, timeouts, the stale-connection
//! retry policy, cancellation mid-response, pool LIFO order and exhaustion. Every test
//! runs on a current_thread and on a multi-thread runtime.
#![cfg(all(feature = "tokio", unix))]

mod net_events;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use tickwire::tokio::rest::{
    Client, ClientBuilder, ClientPool, Error, PoolConfig, RequestWriter, ResponseReader, UrlError,
};
use tickwire_codec::http::{RequestReader, ResponseWriter, ServerRequest};

type Reader = ResponseReader<Vec<u8>>;

/// What the server does after a request: keep the connection, or close it.
#[derive(PartialEq)]
enum Next {
    Keep,
    Close,
}

/// A server on 127.0.0.1 that serves `conns` connections one after another, calling
/// `handle(connection, request index, request, stream)` for each request; returns how
/// many requests each connection carried.
fn serve<F>(conns: usize, handle: F) -> (String, JoinHandle<Vec<usize>>)
where
    F: Fn(usize, usize, &ServerRequest<'_>, &mut TcpStream) -> Next + Send + 'static,
{
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    let h = thread::spawn(move || {
        (0..conns)
            .map(|ci| {
                let (mut s, _) = l.accept().unwrap();
                s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
                let mut rr: RequestReader<Vec<u8>> = RequestReader::new(vec![0; 64 << 10]);
                let mut n = 0;
                loop {
                    match rr.poll() {
                        Ok(Some(req)) => {
                            n += 1;
                            if handle(ci, n - 1, &req, &mut s) == Next::Close {
                                break;
                            }
                        }
                        Ok(None) => match s.read(rr.spare_mut()) {
                            Ok(0) | Err(_) => break,
                            Ok(k) => rr.commit(k),
                        },
                        Err(_) => break,
                    }
                }
                n
            })
            .collect()
    });
    (url, h)
}

/// A signal for a server script (`Fn`, so the receiver sits in a mutex): the test sends
/// when the event the script waits for has happened.
fn signal() -> (mpsc::Sender<()>, Mutex<Receiver<()>>) {
    let (tx, rx) = mpsc::channel();
    (tx, Mutex::new(rx))
}

/// 200 with `body` and a Content-Length.
fn ok(s: &mut TcpStream, body: &[u8]) {
    let mut out = vec![0u8; body.len() + 256];
    let n = ResponseWriter::new(&mut out, 200, "OK")
        .header("Content-Type", "text/plain")
        .body(body)
        .finish()
        .unwrap();
    s.write_all(&out[..n]).unwrap();
}

fn parts(c: &Client) -> (RequestWriter<Vec<u8>>, Reader) {
    (
        RequestWriter::new(vec![0; 1 << 16], c.host_header()).unwrap(),
        ResponseReader::new(vec![0; 1 << 16]),
    )
}

/// A port nothing listens on.
fn dead_url() -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    format!("http://{}", l.local_addr().unwrap())
}

async fn keep_alive_reuses_one_connection() {
    let (url, h) = serve(1, |_, i, req, s| {
        assert_eq!(req.path(), format!("/x/{i}"));
        ok(s, format!("r{i}").as_bytes());
        Next::Keep
    });
    let mut c = Client::connect(&url).await.unwrap();
    let (mut w, mut r) = parts(&c);
    let local = c.local_addr().unwrap();
    for i in 0..5 {
        let req = w.get(&format!("/x/{i}")).finish().unwrap();
        let resp = c.send(&req, &mut r).await.unwrap();
        assert_eq!(resp.status(), 200);
        assert_eq!(resp.body(), format!("r{i}").as_bytes());
        assert!(resp.keep_alive());
        assert_eq!(c.local_addr(), Some(local));
    }
    let s = c.stats();
    assert_eq!((s.connects, s.requests, s.retries), (1, 5, 0));
    c.disconnect();
    assert_eq!(h.join().unwrap(), [5]);
}

async fn chunked_then_reuse() {
    let (url, h) = serve(1, |_, i, _, s| {
        let mut out = vec![0u8; 512];
        let mut cw = ResponseWriter::new(&mut out, 200, "OK").chunked();
        cw.chunk(b"hello ")
            .chunk(b"chunked ")
            .chunk(format!("{i}").as_bytes());
        let n = cw.finish().unwrap();
        // In small pieces, to cross read boundaries: each read by the client before
        // the next is sent.
        let (ours, theirs) = (s.local_addr().unwrap(), s.peer_addr().unwrap());
        for piece in out[..n].chunks(7) {
            s.write_all(piece).unwrap();
            net_events::wait_delivered(ours, theirs);
            net_events::wait_read(theirs, ours);
        }
        Next::Keep
    });
    let mut c = Client::builder().build(&url).unwrap();
    let (mut w, mut r) = parts(&c);
    for i in 0..2 {
        let resp = c
            .send(&w.get("/c").finish().unwrap(), &mut r)
            .await
            .unwrap();
        assert_eq!(resp.body(), format!("hello chunked {i}").as_bytes());
    }
    assert_eq!(c.stats().connects, 1);
    c.disconnect();
    assert_eq!(h.join().unwrap(), [2]);
}

async fn close_delimited_body_then_reconnect() {
    let (url, h) = serve(2, |ci, _, _, s| {
        if ci == 0 {
            s.write_all(b"HTTP/1.1 200 OK\r\n\r\nuntil the end")
                .unwrap();
            Next::Close
        } else {
            ok(s, b"fresh");
            Next::Keep
        }
    });
    let mut c = Client::builder().build(&url).unwrap();
    let (mut w, mut r) = parts(&c);
    let resp = c
        .send(&w.get("/a").finish().unwrap(), &mut r)
        .await
        .unwrap();
    assert_eq!(resp.body(), b"until the end");
    assert!(!resp.keep_alive());
    assert!(!c.is_connected());
    let resp = c
        .send(&w.get("/b").finish().unwrap(), &mut r)
        .await
        .unwrap();
    assert_eq!(resp.body(), b"fresh");
    assert_eq!(c.stats().connects, 2);
    c.disconnect();
    assert_eq!(h.join().unwrap(), [1, 1]);
}

async fn head_has_no_body_and_keeps_the_connection() {
    let (url, h) = serve(1, |_, _, req, s| {
        if req.method_str() == "HEAD" {
            s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")
                .unwrap();
        } else {
            ok(s, b"after head");
        }
        Next::Keep
    });
    let mut c = Client::connect(&url).await.unwrap();
    let (mut w, mut r) = parts(&c);
    let resp = c
        .send(&w.head("/h").finish().unwrap(), &mut r)
        .await
        .unwrap();
    assert_eq!((resp.status(), resp.body()), (200, &b""[..]));
    assert_eq!(resp.header_str("content-length"), Some("1000"));
    let resp = c
        .send(&w.get("/g").finish().unwrap(), &mut r)
        .await
        .unwrap();
    assert_eq!(resp.body(), b"after head");
    assert_eq!(c.stats().connects, 1);
    c.disconnect();
    assert_eq!(h.join().unwrap(), [2]);
}

async fn read_timeout_drops_the_connection() {
    // Connection 0 never answers: it waits until the client has timed out (an event),
    // then closes. Connection 1 answers.
    let (timed_out, wait) = signal();
    let (url, h) = serve(2, move |ci, _, _, s| {
        if ci == 0 {
            wait.lock().unwrap().recv().unwrap();
            return Next::Close;
        }
        ok(s, b"late");
        Next::Keep
    });
    let mut c = Client::builder()
        .read_timeout(Some(Duration::from_millis(100)))
        .build(&url)
        .unwrap();
    let (mut w, mut r) = parts(&c);
    let t0 = Instant::now();
    match c.send(&w.get("/slow").finish().unwrap(), &mut r).await {
        Err(Error::ReadTimeout { .. }) => {}
        other => panic!("{:?}", other.map(|r| r.status())),
    }
    // Not before the read timeout (how long after it depends on the machine).
    let took = t0.elapsed();
    assert!(took >= Duration::from_millis(90), "{took:?}");
    assert!(!c.is_connected());
    timed_out.send(()).unwrap();
    let resp = c
        .send(&w.get("/ok").finish().unwrap(), &mut r)
        .await
        .unwrap();
    assert_eq!(resp.body(), b"late");
    assert_eq!(c.stats().connects, 2);
    c.disconnect();
    h.join().unwrap();
}

async fn connect_refused_and_bad_scheme_are_typed_errors() {
    match Client::connect(&dead_url()).await {
        Err(Error::Connect { source, .. }) => {
            assert_eq!(source.kind(), std::io::ErrorKind::ConnectionRefused)
        }
        other => panic!("{other:?}"),
    }
    // https:// is built (TLS runs at connect: tests/tokio_https.rs); refused the same.
    let https = dead_url().replacen("http://", "https://", 1);
    match Client::connect(&https).await {
        Err(Error::Connect { source, .. }) => {
            assert_eq!(source.kind(), std::io::ErrorKind::ConnectionRefused)
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        Client::builder().build("ws://127.0.0.1:1"),
        Err(Error::Url(_))
    ));
    // REST's own URL error names REST's schemes.
    match Client::connect("ftp://127.0.0.1:1").await {
        Err(e @ Error::Url(UrlError::Scheme)) => {
            assert!(e.to_string().contains("http:// or https://"), "{e}")
        }
        other => panic!("{other:?}"),
    }
}

/// The request builder on the client's own writer: Host and the URL's base path on
/// every method, query pairs, headers and a JSON body.
async fn request_builder_sends_under_the_base_path() {
    let (url, h) = serve(1, |_, i, req, s| {
        let want = [
            ("GET", "/api/v3/time", "symbol=BTC%20USDT", ""),
            ("POST", "/api/v3/order", "", r#"{"side":"BUY"}"#),
            ("PUT", "/api/v3/order", "", "x"),
            ("DELETE", "/api/v3/order", "id=1", ""),
            ("PATCH", "/api/v3/order", "", ""),
            ("GET", "/api/v3/with", "", ""),
        ][i];
        assert_eq!(req.method_str(), want.0);
        assert_eq!(req.path(), want.1);
        assert_eq!(req.query().unwrap_or(""), want.2);
        assert_eq!(req.body(), want.3.as_bytes());
        assert!(req.header("host").is_some());
        if i == 1 {
            assert_eq!(req.header_str("content-type"), Some("application/json"));
            assert_eq!(req.header_str("x-key"), Some("k"));
        }
        ok(s, req.path().as_bytes());
        Next::Keep
    });
    let mut c = Client::connect(&format!("{url}/api/v3")).await.unwrap();
    let resp = c
        .get("/time")
        .query("symbol", "BTC USDT")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.body(), b"/api/v3/time");
    let resp = c
        .post("/order")
        .header("X-Key", "k")
        .json_bytes(br#"{"side":"BUY"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.body(), b"/api/v3/order");
    c.put("/order").body(b"x").send().await.unwrap();
    c.delete("/order?id=1").send().await.unwrap();
    c.patch("/order").send().await.unwrap();
    let resp = c.send_with(|w| w.get("/with").finish()).await.unwrap();
    assert_eq!(resp.body(), b"/api/v3/with");
    // Too large for the client's writer: refused before sending, naming the setting.
    let mut small = Client::builder().request_buffer(512).build(&url).unwrap();
    match small.post("/big").body(&[b'x'; 1024]).send().await {
        Err(e @ Error::RequestTooLarge { buffer: 512 }) => {
            assert!(e.to_string().contains("request_buffer"), "{e}")
        }
        other => panic!("{other:?}"),
    }
    assert!(!small.is_connected());
    c.disconnect();
    assert_eq!(h.join().unwrap(), [6]);
}

/// A server that sends its response head one byte every 50 ms, forever: only the
/// request timeout ends the call, with `RequestTimeout` naming the request (the 5 s
/// bound is a hang guard; without the deadline the head limit would take minutes).
async fn request_timeout_cuts_a_dribbling_server() {
    let (url, h) = serve(2, |_, _, _, s| {
        for b in b"HTTP/1.1 200 OK\r\n"
            .iter()
            .chain(std::iter::repeat(&b'X'))
        {
            if s.write_all(&[*b]).is_err() {
                break;
            }
            thread::sleep(Duration::from_millis(50));
        }
        Next::Close
    });
    let mut c = Client::builder()
        .timeout(Duration::from_millis(300))
        .build(&format!("{url}/api"))
        .unwrap();
    let t = Instant::now();
    match c.get("/slow").query("a", "1").send().await {
        Err(Error::RequestTimeout {
            method,
            url: u,
            after,
        }) => {
            assert_eq!(method.as_str(), "GET");
            assert_eq!(u, format!("{url}/api/slow?a=1"));
            assert_eq!(after, Duration::from_millis(300));
        }
        other => panic!("{other:?}"),
    }
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    assert!(!c.is_connected());
    // The per-request override.
    let t = Instant::now();
    match c
        .get("/slow")
        .timeout(Duration::from_millis(200))
        .send()
        .await
    {
        Err(Error::RequestTimeout { after, .. }) => assert_eq!(after, Duration::from_millis(200)),
        other => panic!("{other:?}"),
    }
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    drop(c);
    h.join().unwrap();
}

/// Each connection answers one request (keep-alive framing) and then closes.
fn one_per_connection(conns: usize) -> (String, JoinHandle<Vec<usize>>) {
    serve(conns, |_, _, _, s| {
        ok(s, b"ok");
        Next::Close
    })
}

async fn stale_connection_is_retried_for_get() {
    let (url, h) = one_per_connection(2);
    let mut c = Client::builder().idle_probe(None).build(&url).unwrap();
    let (mut w, mut r) = parts(&c);
    c.send(&w.get("/1").finish().unwrap(), &mut r)
        .await
        .unwrap();
    // The server closed the connection after answering: its FIN has arrived.
    net_events::wait_peer_closed(c.local_addr().unwrap(), c.peer_addr().unwrap());
    let resp = c
        .send(&w.get("/2").finish().unwrap(), &mut r)
        .await
        .unwrap();
    assert_eq!(resp.body(), b"ok");
    let s = c.stats();
    assert_eq!((s.connects, s.requests, s.retries), (2, 3, 1));
    c.disconnect();
    assert_eq!(h.join().unwrap(), [1, 1]);
}

async fn stale_connection_is_not_retried_for_post() {
    let (url, h) = one_per_connection(2);
    let mut c = Client::builder().idle_probe(None).build(&url).unwrap();
    let (mut w, mut r) = parts(&c);
    c.send(&w.post("/1").body(b"a").finish().unwrap(), &mut r)
        .await
        .unwrap();
    net_events::wait_peer_closed(c.local_addr().unwrap(), c.peer_addr().unwrap());
    match c
        .send(&w.post("/2").body(b"b").finish().unwrap(), &mut r)
        .await
    {
        Err(Error::ConnectionLost { .. } | Error::Io { .. }) => {}
        other => panic!("{:?}", other.map(|r| r.status())),
    }
    assert_eq!(c.stats().retries, 0);
    assert!(!c.is_connected());
    let resp = c
        .send(&w.post("/3").body(b"c").finish().unwrap(), &mut r)
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(c.stats().connects, 2);
    c.disconnect();
    assert_eq!(h.join().unwrap(), [1, 1]);
}

async fn idle_probe_replaces_a_closed_connection_before_a_post() {
    let (url, h) = one_per_connection(2);
    // The default idle probe: before every reuse (its interval is the codec's rule,
    // tested there with instants).
    let mut c = Client::builder().build(&url).unwrap();
    let (mut w, mut r) = parts(&c);
    c.send(&w.post("/1").finish().unwrap(), &mut r)
        .await
        .unwrap();
    // The server's FIN has arrived.
    net_events::wait_peer_closed(c.local_addr().unwrap(), c.peer_addr().unwrap());
    let resp = c
        .send(&w.post("/2").finish().unwrap(), &mut r)
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let s = c.stats();
    assert_eq!((s.connects, s.retries, s.stale_probed), (2, 0, 1));
    c.disconnect();
    assert_eq!(h.join().unwrap(), [1, 1]);
}

async fn cancelled_send_discards_the_connection() {
    // Connection 0: the head and half the body, then, once the caller has given up
    // waiting (an event), the rest. Connection 1: a clean response.
    let (cancelled, wait) = signal();
    let (url, h) = serve(2, move |ci, _, _, s| {
        if ci == 0 {
            s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhalf-")
                .unwrap();
            wait.lock().unwrap().recv().unwrap();
            let _ = s.write_all(b"STALE");
        } else {
            ok(s, b"clean");
        }
        Next::Keep
    });
    let mut c = Client::connect(&url).await.unwrap();
    let (mut w, mut r) = parts(&c);
    let req = w.get("/slow").finish().unwrap();
    let cut = ::tokio::time::timeout(Duration::from_millis(100), c.send(&req, &mut r)).await;
    assert!(cut.is_err(), "the send should have been cancelled");
    assert!(!c.is_connected(), "a half-read connection must not be kept");
    cancelled.send(()).unwrap();
    let resp = c
        .send(&w.get("/next").finish().unwrap(), &mut r)
        .await
        .unwrap();
    assert_eq!((resp.status(), resp.body()), (200, &b"clean"[..]));
    let s = c.stats();
    assert_eq!((s.connects, s.requests, s.retries), (2, 2, 0));
    c.disconnect();
    assert_eq!(h.join().unwrap(), [1, 1]);
}

fn pool_config(size: usize) -> PoolConfig {
    PoolConfig {
        size,
        request_buffer: 4 << 10,
        response_buffer: 16 << 10,
        reconnect_backoff: Duration::from_millis(5),
        ..PoolConfig::default()
    }
}

async fn pool_is_lifo_and_bounded() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    // Accept and answer on every connection in its own thread.
    let srv = thread::spawn(move || {
        let mut threads = Vec::new();
        for _ in 0..2 {
            let (mut s, _) = l.accept().unwrap();
            threads.push(thread::spawn(move || {
                let mut rr: RequestReader<Vec<u8>> = RequestReader::new(vec![0; 8 << 10]);
                let mut n = 0;
                loop {
                    match rr.poll() {
                        Ok(Some(_)) => {
                            n += 1;
                            ok(&mut s, b"pooled");
                        }
                        Ok(None) => match s.read(rr.spare_mut()) {
                            Ok(0) | Err(_) => break,
                            Ok(k) => rr.commit(k),
                        },
                        Err(_) => break,
                    }
                }
                n
            }));
        }
        threads
            .into_iter()
            .map(|t| t.join().unwrap())
            .sum::<usize>()
    });
    let config = PoolConfig {
        acquire_timeout: Duration::from_secs(5),
        ..pool_config(2)
    };
    let pool = Arc::new(
        ClientPool::with_builder(ClientBuilder::default(), &url, config)
            .await
            .unwrap(),
    );
    assert_eq!(pool.idle(), 2);
    let mut a = pool.acquire().await.unwrap();
    let b = pool.acquire().await.unwrap();
    let (la, lb) = (a.local_addr(), b.local_addr());
    assert_ne!(la, lb);
    assert!(matches!(
        pool.try_acquire().await,
        Err(Error::PoolExhausted)
    ));
    let t0 = Instant::now();
    assert!(matches!(
        pool.acquire_within(Duration::from_millis(80)).await,
        Err(Error::PoolExhausted)
    ));
    assert!(t0.elapsed() >= Duration::from_millis(70));
    let resp = a.send_with(|w| w.get("/p").finish()).await.unwrap();
    assert_eq!(resp.body(), b"pooled");
    // LIFO: the last one returned comes out first.
    drop(a);
    drop(b);
    assert_eq!(pool.acquire().await.unwrap().local_addr(), lb);
    // A waiter gets the connection another task returns.
    let held = pool.clone();
    let (both, have_both) = ::tokio::sync::oneshot::channel::<()>();
    let returner = ::tokio::spawn(async move {
        let mut g = held.acquire().await.unwrap();
        let g2 = held.acquire().await.unwrap();
        both.send(()).unwrap();
        // (Gives the waiter time to queue; had it not, it gets the connection at once.)
        ::tokio::time::sleep(Duration::from_millis(50)).await;
        let status = g
            .send_with(|w| w.get("/q").finish())
            .await
            .unwrap()
            .status();
        drop(g2);
        drop(g);
        status
    });
    // Once the other task holds both connections (an event).
    have_both.await.unwrap();
    let mut g = pool.acquire().await.unwrap();
    assert_eq!(returner.await.unwrap(), 200);
    assert_eq!(
        g.send_with(|w| w.get("/r").finish())
            .await
            .unwrap()
            .status(),
        200
    );
    drop(g);
    assert_eq!(pool.idle(), 2);
    drop(pool);
    assert_eq!(srv.join().unwrap(), 3);
}

async fn pool_reconnect_is_bounded_and_returns_the_connection() {
    let cfg = PoolConfig {
        connect_now: false,
        reconnect_attempts: 3,
        ..pool_config(1)
    };
    let pool = ClientPool::new(&dead_url(), cfg).await.unwrap();
    let t0 = Instant::now();
    assert!(matches!(pool.acquire().await, Err(Error::Connect { .. })));
    // Two backoffs: 5 ms then 10 ms.
    assert!(t0.elapsed() >= Duration::from_millis(15));
    assert_eq!(pool.idle(), 1);
}

async fn pool_guard_after_cancelled_send_reconnects() {
    // Connection 0 answers only once the caller has given up waiting (an event).
    let (cancelled, wait) = signal();
    let (url, h) = serve(2, move |ci, _, _, s| {
        if ci == 0 {
            wait.lock().unwrap().recv().unwrap();
        }
        ok(s, b"ok");
        Next::Keep
    });
    let pool = ClientPool::new(&url, pool_config(1)).await.unwrap();
    {
        let mut g = pool.acquire().await.unwrap();
        let cut = ::tokio::time::timeout(
            Duration::from_millis(50),
            g.send_with(|w| w.get("/").finish()),
        )
        .await;
        assert!(cut.is_err());
        assert!(!g.is_connected());
        cancelled.send(()).unwrap();
    }
    let mut g = pool.acquire().await.unwrap();
    assert_eq!(
        g.send_with(|w| w.get("/").finish()).await.unwrap().body(),
        b"ok"
    );
    assert_eq!(g.stats().connects, 2);
    g.disconnect();
    drop(g);
    drop(pool);
    assert_eq!(h.join().unwrap(), [1, 1]);
}

macro_rules! on_both_runtimes {
    ($($name:ident),* $(,)?) => {
        mod current_thread {
            $(#[::tokio::test(flavor = "current_thread")]
            async fn $name() {
                super::$name().await
            })*
        }
        mod multi_thread {
            $(#[::tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                // Spawned, so the future must be `Send`.
                ::tokio::spawn(super::$name()).await.unwrap()
            })*
        }
    };
}

on_both_runtimes!(
    keep_alive_reuses_one_connection,
    chunked_then_reuse,
    close_delimited_body_then_reconnect,
    head_has_no_body_and_keeps_the_connection,
    read_timeout_drops_the_connection,
    connect_refused_and_bad_scheme_are_typed_errors,
    request_builder_sends_under_the_base_path,
    request_timeout_cuts_a_dribbling_server,
    stale_connection_is_retried_for_get,
    stale_connection_is_not_retried_for_post,
    idle_probe_replaces_a_closed_connection_before_a_post,
    cancelled_send_discards_the_connection,
    pool_is_lifo_and_bounded,
    pool_reconnect_is_bounded_and_returns_the_connection,
    pool_guard_after_cancelled_send_reconnects,
);
