//! Errors of a request in flight and of an opening handshake name what they failed: a
//! REST read or write timeout, a connection lost before the response, a socket error
//! and a garbage response name the request (`GET http://127.0.0.1:port/api/x`), and a
//! timeout names the setting to raise; a WebSocket client's refused or timed-out
//! handshake names the URL, a server's names the client's address, and so do their
//! socket errors (a reset in the handshake or in the session). Blocking and tokio,
//! the same cases. Each server is a small thread on 127.0.0.1 that does one thing and
//! then waits for the test to say it is done (a channel, not a sleep).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::mpsc::{self, Sender};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use tickwire::codec::http::{Error as HttpError, Method};
use tickwire::rest::{self, ResponseReader};
use tickwire::ws::{self, HandshakeError};

/// A short timeout: what the tests wait for is the client's own timer, never a guess.
const SHORT: Duration = Duration::from_millis(100);

/// A timeout for the cases that must not time out, however loaded the machine.
const LONG: Duration = Duration::from_secs(30);

/// A server on 127.0.0.1 for one connection: `serve(stream)` runs; when it returns
/// true the thread holds the stream until the test sends on the returned channel (or
/// drops it), else it closes the stream at once.
fn one_shot(serve: fn(&mut TcpStream) -> bool) -> (SocketAddr, Sender<()>, JoinHandle<()>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let h = thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        if serve(&mut s) {
            let _ = done_rx.recv();
        }
    });
    (addr, done_tx, h)
}

/// Read a request head (to its blank line).
fn read_head(s: &mut TcpStream) {
    let mut head = Vec::new();
    let mut b = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match s.read(&mut b) {
            Ok(1) => head.push(b[0]),
            _ => return,
        }
    }
}

/// Read the request and never answer.
fn silent(s: &mut TcpStream) -> bool {
    read_head(s);
    true
}

/// Answer the request with bytes that are not HTTP.
fn garbage(s: &mut TcpStream) -> bool {
    read_head(s);
    s.write_all(b"garbage\r\n\r\n").unwrap();
    true
}

/// Read the request head and end the connection (FIN) without an answer.
fn hang_up(s: &mut TcpStream) -> bool {
    read_head(s);
    s.shutdown(std::net::Shutdown::Write).unwrap();
    true
}

/// Read the request head and reset the connection (RST: linger 0, then close).
fn reset(s: &mut TcpStream) -> bool {
    read_head(s);
    socket2::SockRef::from(&*s)
        .set_linger(Some(Duration::ZERO))
        .unwrap();
    false
}

/// Refuse a WebSocket upgrade.
fn forbidden(s: &mut TcpStream) -> bool {
    read_head(s);
    s.write_all(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
        .unwrap();
    true
}

/// `e`'s text has each of `needles`, and the first (what failed) once.
fn contains(e: &impl std::fmt::Display, needles: &[&str]) {
    let text = e.to_string();
    for n in needles {
        assert!(text.contains(n), "{n:?} not in {text:?}");
    }
    assert_eq!(text.matches(needles[0]).count(), 1, "{text:?}");
}

/// One REST failure: what the server does, the request, and what the error is.
struct RestCase {
    serve: fn(&mut TcpStream) -> bool,
    method: Method,
    path: &'static str,
    read_timeout: Option<Duration>,
    variant: fn(&rest::Error) -> bool,
    /// The text names the method too (the URL alone for a socket or TLS error).
    names_method: bool,
    says: &'static [&'static str],
}

/// The client's URL: the request's URL is under its base path.
const BASE: &str = "/api";

const REST_CASES: &[RestCase] = &[
    RestCase {
        serve: silent,
        method: Method::Get,
        path: "/x?symbol=BTC",
        read_timeout: Some(SHORT),
        variant: |e| matches!(e, rest::Error::ReadTimeout { .. }),
        names_method: true,
        says: &["read timed out", "raise `read_timeout`"],
    },
    RestCase {
        serve: hang_up,
        method: Method::Post,
        path: "/order",
        read_timeout: None,
        variant: |e| matches!(e, rest::Error::ConnectionLost { .. }),
        names_method: true,
        says: &["closed the connection before responding"],
    },
    RestCase {
        serve: garbage,
        method: Method::Delete,
        path: "/order?id=1",
        read_timeout: None,
        variant: |e| matches!(e, rest::Error::Http { .. }),
        names_method: true,
        says: &["invalid HTTP response: "],
    },
    RestCase {
        serve: reset,
        method: Method::Get,
        path: "/depth",
        read_timeout: None,
        variant: |e| {
            matches!(e, rest::Error::Io { error, .. }
                if error.kind() == std::io::ErrorKind::ConnectionReset)
        },
        names_method: false,
        says: &[],
    },
];

impl RestCase {
    fn check(&self, addr: SocketAddr, e: &rest::Error) {
        assert!((self.variant)(e), "{:?}: {e:?}", self.path);
        let url = format!("http://{addr}{BASE}{}: ", self.path);
        let named = if self.names_method {
            format!("{} {url}", self.method.as_str())
        } else {
            url
        };
        let mut needles = vec![named.as_str()];
        needles.extend(self.says);
        contains(e, &needles);
    }
}

#[test]
fn rest_errors_name_the_request() {
    for case in REST_CASES {
        let (addr, done, h) = one_shot(case.serve);
        let mut c = rest::Client::builder()
            .read_timeout(case.read_timeout)
            .build(&format!("http://{addr}{BASE}"))
            .unwrap();
        let e = c.request(case.method, case.path).send().map(|_| ());
        case.check(addr, &e.unwrap_err());
        done.send(()).ok();
        h.join().unwrap();
    }
}

/// A request larger than both socket buffers to a server that never reads.
const BIG: usize = 32 << 20;

#[test]
fn rest_write_timeout_names_the_request_and_the_setting() {
    let (addr, done, h) = one_shot(|_| true);
    let mut c = rest::Client::builder()
        .write_timeout(Some(SHORT))
        .connect(&format!("http://{addr}"))
        .unwrap();
    let body = vec![b'x'; BIG];
    let mut w = c.request_writer(vec![0; BIG + 4096]).unwrap();
    let mut r: ResponseReader<Vec<u8>> = ResponseReader::new(vec![0; 4096]);
    let req = w.post("/big").body(&body).finish().unwrap();
    let e = c.send(&req, &mut r).map(|_| ()).unwrap_err();
    assert!(matches!(e, rest::Error::WriteTimeout { .. }), "{e:?}");
    let url = format!("POST http://{addr}/big: ");
    contains(&e, &[&url, "write timed out", "raise `write_timeout`"]);
    done.send(()).unwrap();
    h.join().unwrap();
}

/// What the codec said is part of the text, and matching on it stays one pattern.
#[test]
fn rest_http_error_keeps_the_codec_error() {
    let e = rest::Error::from(HttpError::UnexpectedEof);
    assert!(matches!(
        e,
        rest::Error::Http {
            error: HttpError::UnexpectedEof,
            ..
        }
    ));
    assert!(
        e.to_string()
            .ends_with(&HttpError::UnexpectedEof.to_string())
    );
}

/// A WebSocket client's failed handshake against `serve` names the URL.
struct WsClientCase {
    serve: fn(&mut TcpStream) -> bool,
    handshake_timeout: Duration,
    variant: fn(&ws::Error) -> bool,
    says: &'static [&'static str],
}

const WS_CLIENT_CASES: &[WsClientCase] = &[
    WsClientCase {
        serve: forbidden,
        handshake_timeout: LONG,
        variant: |e| {
            matches!(
                e,
                ws::Error::Handshake {
                    error: HandshakeError::BadStatus(403),
                    ..
                }
            )
        },
        says: &["opening handshake failed", "403"],
    },
    WsClientCase {
        serve: silent,
        handshake_timeout: SHORT,
        variant: |e| matches!(e, ws::Error::HandshakeTimeout { .. }),
        says: &["opening handshake timed out", "raise `handshake_timeout`"],
    },
    WsClientCase {
        serve: reset,
        handshake_timeout: LONG,
        variant: is_reset,
        says: &[],
    },
];

/// A socket error: the connection was reset.
fn is_reset(e: &ws::Error) -> bool {
    matches!(e, ws::Error::Io { error, .. } if error.kind() == std::io::ErrorKind::ConnectionReset)
}

impl WsClientCase {
    fn check(&self, url: &str, e: &ws::Error) {
        assert!((self.variant)(e), "{e:?}");
        let named = format!("{url}: ");
        let mut needles = vec![named.as_str()];
        needles.extend(self.says);
        contains(e, &needles);
    }
}

/// A WebSocket server's failed handshake with a client that sends `request` (nothing:
/// a client that never speaks), then holds the connection or resets it, names the
/// client's address.
struct WsServerCase {
    request: &'static [u8],
    reset: bool,
    handshake_timeout: Duration,
    variant: fn(&ws::Error) -> bool,
    says: &'static [&'static str],
}

const WS_SERVER_CASES: &[WsServerCase] = &[
    WsServerCase {
        request: b"GET /feed HTTP/1.1\r\nHost: h\r\n\r\n",
        reset: false,
        handshake_timeout: LONG,
        variant: |e| matches!(e, ws::Error::Handshake { .. }),
        says: &["opening handshake failed"],
    },
    WsServerCase {
        request: b"",
        reset: false,
        handshake_timeout: SHORT,
        variant: |e| matches!(e, ws::Error::HandshakeTimeout { .. }),
        says: &["raise `handshake_timeout`"],
    },
    WsServerCase {
        request: b"GET /feed HTTP/1.1\r\nHost: h\r\n",
        reset: true,
        handshake_timeout: LONG,
        variant: is_reset,
        says: &[],
    },
];

impl WsServerCase {
    /// Connect to `server`, send the request, hold the socket until the test is done;
    /// returns the client's own address.
    fn client(&self, server: SocketAddr) -> (SocketAddr, Sender<()>, JoinHandle<()>) {
        let mut s = TcpStream::connect(server).unwrap();
        let local = s.local_addr().unwrap();
        s.write_all(self.request).unwrap();
        if self.reset {
            socket2::SockRef::from(&s)
                .set_linger(Some(Duration::ZERO))
                .unwrap();
            drop(s);
            let (done_tx, _) = mpsc::channel::<()>();
            return (local, done_tx, thread::spawn(|| {}));
        }
        let (done_tx, done_rx) = mpsc::channel::<()>();
        let h = thread::spawn(move || {
            let _ = done_rx.recv();
            drop(s);
        });
        (local, done_tx, h)
    }

    fn check(&self, client: SocketAddr, e: &ws::Error) {
        assert!((self.variant)(e), "{e:?}");
        let named = format!("client {client}: ");
        let mut needles = vec![named.as_str()];
        needles.extend(self.says);
        contains(e, &needles);
    }
}

#[test]
fn ws_client_handshake_errors_name_the_url() {
    for case in WS_CLIENT_CASES {
        let (addr, done, h) = one_shot(case.serve);
        let url = format!("ws://{addr}/feed?x=1");
        let e = ws::ClientBuilder::new()
            .handshake_timeout(case.handshake_timeout)
            .connect(&url)
            .map(|_| ())
            .unwrap_err();
        case.check(&url, &e);
        done.send(()).ok();
        h.join().unwrap();
    }
}

#[test]
fn ws_server_handshake_errors_name_the_client() {
    for case in WS_SERVER_CASES {
        let mut server = ws::ServerBuilder::new()
            .handshake_timeout(case.handshake_timeout)
            .bind("127.0.0.1:0")
            .unwrap();
        let (client, done, h) = case.client(server.local_addr().unwrap());
        let e = server.accept().unwrap().handshake().unwrap_err();
        case.check(client, &e);
        done.send(()).ok();
        h.join().unwrap();
    }
}

/// End a connection with a reset (RST: linger 0, then close).
fn reset_now(conn: impl std::os::fd::AsFd) {
    socket2::SockRef::from(&conn)
        .set_linger(Some(Duration::ZERO))
        .unwrap();
}

/// A blocking WebSocket server for one connection that resets it when the test says
/// so (after the client has read the `101`).
fn resetting_server() -> (String, Sender<()>, JoinHandle<()>) {
    let mut server = ws::Server::bind("127.0.0.1:0").unwrap();
    let url = format!("ws://{}/feed", server.local_addr().unwrap());
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let h = thread::spawn(move || {
        let mut conn = server.accept().unwrap();
        conn.handshake().unwrap();
        go_rx.recv().unwrap();
        reset_now(&conn);
    });
    (url, go_tx, h)
}

/// A blocking client that connects to `url` and resets the connection once it is
/// open: its own address.
fn resetting_client(url: &str) -> SocketAddr {
    let client = ws::Client::connect(url).unwrap();
    let local = client.local_addr().unwrap();
    reset_now(&client);
    local
}

/// `e` is the reset of the open connection, named once.
fn check_session_reset(e: &ws::Error, named: &str) {
    assert!(is_reset(e), "{e:?}");
    contains(e, &[&format!("{named}: ")]);
}

#[test]
fn ws_client_session_errors_name_the_url() {
    let (url, go, h) = resetting_server();
    let mut client = ws::Client::connect(&url).unwrap();
    go.send(()).unwrap();
    h.join().unwrap();
    let e = client.recv().map(|_| ()).unwrap_err();
    check_session_reset(&e, &url);
}

#[test]
fn ws_server_session_errors_name_the_client() {
    let mut server = ws::Server::bind("127.0.0.1:0").unwrap();
    let url = format!("ws://{}/", server.local_addr().unwrap());
    let client = thread::spawn(move || resetting_client(&url));
    let mut conn = server.accept().unwrap();
    conn.handshake().unwrap();
    let addr = client.join().unwrap();
    let e = conn.recv().map(|_| ()).unwrap_err();
    check_session_reset(&e, &format!("client {addr}"));
}

#[cfg(all(feature = "tokio", unix))]
mod on_tokio {
    use super::*;
    use tickwire::tokio::{rest as trest, ws as tws};

    fn run<F: std::future::Future>(f: F) -> F::Output {
        ::tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(f)
    }

    #[test]
    fn rest_errors_name_the_request() {
        for case in REST_CASES {
            let (addr, done, h) = one_shot(case.serve);
            let e = run(async {
                let mut c = trest::Client::builder()
                    .read_timeout(case.read_timeout)
                    .build(&format!("http://{addr}{BASE}"))
                    .unwrap();
                let e = c.request(case.method, case.path).send().await.map(|_| ());
                e.unwrap_err()
            });
            case.check(addr, &e);
            done.send(()).ok();
            h.join().unwrap();
        }
    }

    #[test]
    fn rest_write_timeout() {
        let (addr, done, h) = one_shot(|_| true);
        let e = run(async {
            let mut c = trest::Client::builder()
                .write_timeout(Some(SHORT))
                .build(&format!("http://{addr}"))
                .unwrap();
            let body = vec![b'x'; BIG];
            let mut w = c.request_writer(vec![0; BIG + 4096]).unwrap();
            let mut r: ResponseReader<Vec<u8>> = ResponseReader::new(vec![0; 4096]);
            let req = w.put("/big").body(&body).finish().unwrap();
            c.send(&req, &mut r).await.map(|_| ()).unwrap_err()
        });
        assert!(matches!(e, rest::Error::WriteTimeout { .. }), "{e:?}");
        let url = format!("PUT http://{addr}/big: ");
        contains(&e, &[&url, "raise `write_timeout`"]);
        done.send(()).unwrap();
        h.join().unwrap();
    }

    #[test]
    fn ws_client_handshake_errors_name_the_url() {
        for case in WS_CLIENT_CASES {
            let (addr, done, h) = one_shot(case.serve);
            let url = format!("ws://{addr}/feed?x=1");
            let e = run(tws::ClientBuilder::new()
                .handshake_timeout(case.handshake_timeout)
                .connect(&url));
            case.check(&url, &e.map(|_| ()).unwrap_err());
            done.send(()).ok();
            h.join().unwrap();
        }
    }

    #[test]
    fn ws_server_handshake_errors_name_the_client() {
        for case in WS_SERVER_CASES {
            let (client, e, done, h) = run(async {
                let mut server = tws::ServerBuilder::new()
                    .handshake_timeout(case.handshake_timeout)
                    .bind("127.0.0.1:0")
                    .await
                    .unwrap();
                let (client, done, h) = case.client(server.local_addr().unwrap());
                let mut conn = server.accept().await.unwrap();
                (client, conn.handshake().await.unwrap_err(), done, h)
            });
            case.check(client, &e);
            done.send(()).ok();
            h.join().unwrap();
        }
    }

    #[test]
    fn ws_client_session_errors_name_the_url() {
        let (url, go, h) = resetting_server();
        let e = run(async {
            let mut client = tws::Client::connect(&url).await.unwrap();
            go.send(()).unwrap();
            h.join().unwrap();
            client.recv().await.map(|_| ()).unwrap_err()
        });
        check_session_reset(&e, &url);
    }

    #[test]
    fn ws_server_session_errors_name_the_client() {
        let (addr, e) = run(async {
            let mut server = tws::Server::bind("127.0.0.1:0").await.unwrap();
            let url = format!("ws://{}/", server.local_addr().unwrap());
            let client = thread::spawn(move || resetting_client(&url));
            let mut conn = server.accept().await.unwrap();
            conn.handshake().await.unwrap();
            let addr = client.join().unwrap();
            (addr, conn.recv().await.map(|_| ()).unwrap_err())
        });
        check_session_reset(&e, &format!("client {addr}"));
    }
}
