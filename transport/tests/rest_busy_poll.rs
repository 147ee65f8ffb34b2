//! The REST clients' socket tuning, as the WebSocket builders have it: busy-poll receive
//! mode (`recv_mode`) gets responses from a server on 127.0.0.1 without sleeping in the
//! kernel while it waits (blocking: the socket stays non-blocking while the server holds
//! the response; tokio: the waiting `send` never yields to the runtime), falls back to
//! sleeping after its budget, and honours the read and request timeouts;
//! `TCP_QUICKACK` is set again after the reads of each response; and a pool's
//! connections, reconnected ones too, carry the builder's options.

#![cfg(all(feature = "tokio", unix))]
// `Error::ReadTimeout { .. }`: the pattern holds whether the variant carries fields
// (such as the request's URL) or not.
#![allow(clippy::unneeded_struct_pattern)]

#[cfg(feature = "tls")]
mod https_util;
#[cfg(feature = "tls")]
mod tls_util;

use std::cell::Cell;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::os::fd::{AsFd, AsRawFd};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use socket2::SockRef;
use tickwire::rest::{self, HttpStream, PoolConfig};
use tickwire::socket::RecvMode;

/// A server for one connection that answers each request only when told: it reports
/// every request it has read on the first channel, then waits for the body size of the
/// response on the second (the channel closed: it stops answering and holds the
/// connection until the client goes).
fn gated_server() -> (SocketAddr, mpsc::Receiver<()>, mpsc::Sender<usize>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let (seen_tx, seen) = mpsc::channel();
    let (go, go_rx) = mpsc::channel::<usize>();
    thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        loop {
            while let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                buf.drain(..end + 4);
                if seen_tx.send(()).is_err() {
                    return;
                }
                let Ok(n) = go_rx.recv() else {
                    // Hold the connection open until the client closes it.
                    while matches!(s.read(&mut chunk), Ok(1..)) {}
                    return;
                };
                let mut resp =
                    format!("HTTP/1.1 200 OK\r\nContent-Length: {n}\r\n\r\n").into_bytes();
                resp.extend((0..n).map(|i| b'a' + (i % 26) as u8));
                if s.write_all(&resp).is_err() {
                    return;
                }
            }
            match s.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
    });
    (addr, seen, go)
}

fn body(n: usize) -> Vec<u8> {
    (0..n).map(|i| b'a' + (i % 26) as u8).collect()
}

/// Whether the socket `fd` is in non-blocking mode now.
fn nonblocking(fd: i32) -> bool {
    // SAFETY: F_GETFL on a descriptor the test keeps open (the client lives in another
    // thread until the test has made its last check and closed the channels).
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    assert!(flags >= 0);
    flags & libc::O_NONBLOCK != 0
}

fn quickack(fd: impl AsFd) -> bool {
    SockRef::from(&fd).tcp_quickack().unwrap()
}

fn tcp(c: &rest::Client) -> &std::net::TcpStream {
    match c.stream() {
        Some(HttpStream::Tcp(s)) => s,
        other => panic!("{other:?}"),
    }
}

/// A blocking client with `builder`'s settings on its own thread, connected to a gated
/// server: it sends a GET per `()` it is told, and reports each response's body (or
/// error). Returns its socket's fd, the server's channels and the client's.
struct Pair {
    fd: i32,
    seen: mpsc::Receiver<()>,
    go: mpsc::Sender<usize>,
    ask: mpsc::Sender<()>,
    got: mpsc::Receiver<Result<Vec<u8>, rest::Error>>,
}

fn pair(builder: rest::ClientBuilder) -> Pair {
    let (addr, seen, go) = gated_server();
    let mut c = builder.connect(&format!("http://{addr}")).unwrap();
    let fd = tcp(&c).as_raw_fd();
    let (ask, asked) = mpsc::channel::<()>();
    let (tx, got) = mpsc::channel();
    thread::spawn(move || {
        for () in asked {
            let r = c.get("/t").send().map(|r| r.body().to_vec());
            if tx.send(r).is_err() {
                return;
            }
        }
    });
    Pair {
        fd,
        seen,
        go,
        ask,
        got,
    }
}

#[test]
fn blocking_busy_poll_gets_responses_and_never_sleeps_in_read() {
    let p = pair(rest::Client::builder().recv_mode(RecvMode::Spin));
    for (i, n) in [2, 0, 300_000, 17, 1 << 19].into_iter().enumerate() {
        p.ask.send(()).unwrap();
        p.seen.recv().unwrap();
        // The request is out and the server holds the answer: the client waits on a
        // non-blocking socket (spinning), never in a read(2) that sleeps.
        if i < 2 {
            // (It may still be between its write and its first read.)
            let until = Instant::now() + Duration::from_secs(10);
            while !nonblocking(p.fd) {
                assert!(Instant::now() < until, "request {i}: never non-blocking");
                thread::sleep(Duration::from_millis(1));
            }
            let until = Instant::now() + Duration::from_millis(100);
            while Instant::now() < until {
                assert!(nonblocking(p.fd), "request {i}: a sleeping read");
                thread::sleep(Duration::from_millis(5));
            }
        }
        p.go.send(n).unwrap();
        assert_eq!(p.got.recv().unwrap().unwrap(), body(n), "request {i}");
        // Between requests the socket is blocking again (requests are written there).
        assert!(!nonblocking(p.fd), "request {i}: left non-blocking");
    }
}

#[test]
fn blocking_sleep_mode_and_a_spent_spin_budget_sleep_in_the_kernel() {
    for mode in [
        RecvMode::Sleep,
        RecvMode::SpinFor(Duration::from_millis(20)),
    ] {
        let p = pair(rest::Client::builder().recv_mode(mode));
        for i in 0..2 {
            p.ask.send(()).unwrap();
            p.seen.recv().unwrap();
            // Within a few seconds the socket is blocking: a read sleeping in the
            // kernel, the budget spent.
            let until = Instant::now() + Duration::from_secs(10);
            while nonblocking(p.fd) {
                assert!(Instant::now() < until, "{mode:?}: still non-blocking");
                thread::sleep(Duration::from_millis(2));
            }
            p.go.send(5).unwrap();
            assert_eq!(p.got.recv().unwrap().unwrap(), body(5), "{mode:?} {i}");
        }
    }
}

#[test]
fn blocking_busy_poll_honours_the_read_and_request_timeouts() {
    for mode in [RecvMode::Spin, RecvMode::SpinFor(Duration::from_millis(5))] {
        let b = rest::Client::builder().recv_mode(mode);
        let p = pair(b.read_timeout(Some(Duration::from_millis(100))));
        p.ask.send(()).unwrap();
        p.seen.recv().unwrap();
        drop(p.go);
        let e = p.got.recv_timeout(Duration::from_secs(20)).unwrap();
        assert!(
            matches!(e, Err(rest::Error::ReadTimeout { .. })),
            "{mode:?}: {e:?}"
        );

        let b = rest::Client::builder().recv_mode(mode);
        let p = pair(b.timeout(Duration::from_millis(100)));
        p.ask.send(()).unwrap();
        p.seen.recv().unwrap();
        drop(p.go);
        let e = p.got.recv_timeout(Duration::from_secs(20)).unwrap();
        assert!(
            matches!(e, Err(rest::Error::RequestTimeout { .. })),
            "{mode:?}: {e:?}"
        );
    }
}

/// Round trips before each check: enough for the kernel's ping-pong detection.
const ROUNDS: usize = 8;

#[test]
fn blocking_client_keeps_quickack_after_reads() {
    for mode in [RecvMode::Sleep, RecvMode::Spin] {
        let server = rest::doc_server();
        let mut c = rest::Client::builder()
            .quickack(true)
            .recv_mode(mode)
            .connect(&format!("http://{server}"))
            .unwrap();
        for i in 0..ROUNDS {
            let r = c.get(&format!("/round/{i}")).send().unwrap();
            assert_eq!(r.body(), format!("GET /round/{i}").as_bytes());
            assert!(quickack(tcp(&c)), "{mode:?}, round {i}");
        }
    }
}

#[test]
fn pool_connections_carry_the_builders_options_after_reconnects_too() {
    let server = rest::doc_server();
    let builder = rest::Client::builder()
        .nodelay(false)
        .so_busy_poll(33)
        .quickack(true)
        .recv_mode(RecvMode::Spin);
    let config = PoolConfig {
        size: 2,
        ..PoolConfig::default()
    };
    let pool =
        rest::ClientPool::with_builder(builder, &format!("http://{server}"), config).unwrap();
    for round in 0..2 {
        let mut a = pool.acquire().unwrap();
        let mut b = pool.acquire().unwrap();
        for c in [&mut a, &mut b] {
            for i in 0..ROUNDS {
                let r = c.get("/p").send().unwrap();
                assert_eq!(r.body(), b"GET /p");
                let s = SockRef::from(tcp(c));
                assert!(!s.tcp_nodelay().unwrap(), "round {round}");
                assert_eq!(s.busy_poll().unwrap(), 33, "round {round}");
                assert!(quickack(tcp(c)), "round {round}, request {i}");
            }
            // The next acquire reconnects.
            c.disconnect();
        }
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn tokio_busy_poll_send_never_yields_to_the_runtime() {
    for mode in [RecvMode::Spin, RecvMode::SpinFor(Duration::from_secs(3600))] {
        let (addr, seen, go) = gated_server();
        runtime().block_on(async {
            let mut c = tickwire::tokio::rest::Client::builder()
                .recv_mode(mode)
                .connect(&format!("http://{addr}"))
                .await
                .unwrap();
            for (i, n) in [3, 0, 300_000, 40].into_iter().enumerate() {
                // The server answers as soon as it has read the request: the client's
                // first read after writing it finds nothing, and from then on `send`
                // waits for the answer.
                go.send(n).unwrap();
                let (done, polls) = (Cell::new(false), Cell::new(0));
                let send = async {
                    let r = c.get("/t").send().await.unwrap();
                    assert_eq!(r.body(), &body(n)[..], "{mode:?} {i}");
                    done.set(true);
                };
                let other = async {
                    while !done.get() {
                        polls.set(polls.get() + 1);
                        tokio::task::yield_now().await;
                    }
                };
                tokio::join!(send, other);
                seen.recv().unwrap();
                assert_eq!(polls.get(), 0, "{mode:?}, request {i}: send yielded");
            }
        });
    }
}

#[test]
fn tokio_sleep_mode_yields_while_it_waits() {
    let (addr, seen, go) = gated_server();
    runtime().block_on(async {
        let mut c = tickwire::tokio::rest::Client::connect(&format!("http://{addr}"))
            .await
            .unwrap();
        let (done, polls) = (Cell::new(false), Cell::new(0));
        let send = async {
            let r = c.get("/t").send().await.unwrap();
            assert_eq!(r.body(), b"abc");
            done.set(true);
        };
        let other = async {
            seen.recv().unwrap();
            // Polled again while `send` waits on the reactor.
            for _ in 0..3 {
                tokio::task::yield_now().await;
                polls.set(polls.get() + 1);
            }
            go.send(3).unwrap();
            while !done.get() {
                tokio::task::yield_now().await;
            }
        };
        tokio::join!(send, other);
        assert_eq!(polls.get(), 3);
    });
}

#[test]
fn tokio_busy_poll_honours_the_read_timeout() {
    let (addr, seen, go) = gated_server();
    runtime().block_on(async {
        let mut c = tickwire::tokio::rest::Client::builder()
            .recv_mode(RecvMode::Spin)
            .read_timeout(Some(Duration::from_millis(100)))
            .connect(&format!("http://{addr}"))
            .await
            .unwrap();
        let send = c.get("/t").send();
        let server = async {
            seen.recv().unwrap();
            drop(go);
        };
        let (r, ()) = tokio::join!(send, server);
        assert!(matches!(r, Err(rest::Error::ReadTimeout { .. })), "{r:?}");
    });
}

/// Over TLS too: the spinning reads go through the TLS stream on the non-blocking
/// socket (records that arrive in pieces, a chunked body), blocking and tokio, and the
/// socket is blocking again between requests.
#[cfg(feature = "tls")]
#[test]
fn busy_poll_over_tls() {
    let ca = tls_util::Ca::new("busy-poll CA");
    let leaf = ca.server(&["localhost"]);
    let (port, seen, h) = https_util::serve(leaf.server_config(), 2);
    let url = format!("https://localhost:{port}");
    let want: String = (0..50).map(|i| format!("line {i:02}\n")).collect();
    let mut c = rest::Client::builder()
        .tls(ca.client_config())
        .recv_mode(RecvMode::Spin)
        .connect(&url)
        .unwrap();
    let fd = match c.stream() {
        Some(HttpStream::Tls(s)) => s.get_ref().as_raw_fd(),
        other => panic!("{other:?}"),
    };
    for i in 0..10 {
        let r = c
            .post("/order")
            .body(format!("{i}").as_bytes())
            .send()
            .unwrap();
        assert_eq!(r.body_str().unwrap(), format!("POST /order {i}"));
        let r = c.get("/chunked").send().unwrap();
        assert_eq!(r.body_str().unwrap(), want);
        assert!(!nonblocking(fd), "left non-blocking");
    }
    drop(c);
    runtime().block_on(async {
        let mut c = tickwire::tokio::rest::Client::builder()
            .tls(ca.client_config())
            .recv_mode(RecvMode::Spin)
            .connect(&url)
            .await
            .unwrap();
        for i in 0..10 {
            let r = c
                .post("/order")
                .body(format!("{i}").as_bytes())
                .send()
                .await
                .unwrap();
            assert_eq!(r.body_str().unwrap(), format!("POST /order {i}"));
            let r = c.get("/chunked").send().await.unwrap();
            assert_eq!(r.body_str().unwrap(), want);
        }
        c.close().await;
    });
    h.join().unwrap();
    assert_eq!(seen.per_connection(), [20, 20]);
}
