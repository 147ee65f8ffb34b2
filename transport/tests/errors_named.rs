//! Errors of a request in flight and of an opening handshake name what they failed:
//! a REST read or write timeout, a connection lost before the response, a socket
//! error and a garbage response name the request (`GET http://127.0.0.1:port/api/x`), and a timeout names
//! the setting to raise; a WebSocket client's refused or timed-out handshake names the
//! URL, a server's names the client's address. Blocking and tokio. Each server is a
//! small thread on 127.0.0.1 that does one thing and then waits for the test to say it
//! is done (a channel, not a sleep).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::mpsc::{self, Sender};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use tickwire::codec::http::Error as HttpError;
use tickwire::rest::{self, ResponseReader};
use tickwire::ws::{self, HandshakeError};

/// A short timeout: what the tests wait for is the client's own timer, never a guess.
const SHORT: Duration = Duration::from_millis(100);

/// A server on 127.0.0.1 for one connection: `serve(stream)` runs, then the thread
/// holds the stream until the test sends on the returned channel (or drops it).
fn one_shot<F>(serve: F) -> (SocketAddr, Sender<()>, JoinHandle<()>)
where
    F: FnOnce(&mut TcpStream) + Send + 'static,
{
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let h = thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        serve(&mut s);
        let _ = done_rx.recv();
    });
    (addr, done_tx, h)
}

/// Read a request or response head (to its blank line).
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

/// Answer the request with bytes that are not HTTP.
fn garbage(s: &mut TcpStream) {
    read_head(s);
    s.write_all(b"garbage\r\n\r\n").unwrap();
}

/// Read the request head and end the connection (FIN) without an answer.
fn hang_up(s: &mut TcpStream) {
    read_head(s);
    s.shutdown(std::net::Shutdown::Write).unwrap();
}

/// A server on 127.0.0.1 for one connection that reads the request head and resets
/// the connection (RST: linger 0, then close).
fn resetting() -> (SocketAddr, JoinHandle<()>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let h = thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        read_head(&mut s);
        socket2::SockRef::from(&s)
            .set_linger(Some(Duration::ZERO))
            .unwrap();
    });
    (addr, h)
}

fn contains(e: &impl std::fmt::Display, needles: &[&str]) {
    let text = e.to_string();
    for n in needles {
        assert!(text.contains(n), "{n:?} not in {text:?}");
    }
    // Each level once: the request is named once.
    assert_eq!(text.matches(needles[0]).count(), 1, "{text:?}");
}

// ---- REST, blocking ----

#[test]
fn rest_read_timeout_names_the_request_and_the_setting() {
    let (addr, done, h) = one_shot(read_head);
    let mut c = rest::Client::builder()
        .read_timeout(Some(SHORT))
        .connect(&format!("http://{addr}/api"))
        .unwrap();
    let e = c.get("/x?symbol=BTC").send().unwrap_err();
    assert!(matches!(&e, rest::Error::ReadTimeout { url, .. } if url.contains("/api/x")));
    let url = format!("GET http://{addr}/api/x?symbol=BTC: ");
    contains(&e, &[&url, "read timed out", "raise `read_timeout`"]);
    done.send(()).unwrap();
    h.join().unwrap();
}

#[test]
fn rest_write_timeout_names_the_request_and_the_setting() {
    // The server never reads: the request fills both socket buffers.
    let (addr, done, h) = one_shot(|_| {});
    let mut c = rest::Client::builder()
        .write_timeout(Some(SHORT))
        .connect(&format!("http://{addr}"))
        .unwrap();
    let body = vec![b'x'; 32 << 20];
    let mut w = c.request_writer(vec![0; (32 << 20) + 4096]).unwrap();
    let mut r: ResponseReader<Vec<u8>> = ResponseReader::new(vec![0; 4096]);
    let req = w.post("/big").body(&body).finish().unwrap();
    let e = c.send(&req, &mut r).map(|_| ()).unwrap_err();
    assert!(matches!(e, rest::Error::WriteTimeout { .. }), "{e:?}");
    let url = format!("POST http://{addr}/big: ");
    contains(&e, &[&url, "write timed out", "raise `write_timeout`"]);
    done.send(()).unwrap();
    h.join().unwrap();
}

#[test]
fn rest_connection_lost_names_the_request() {
    let (addr, done, h) = one_shot(hang_up);
    let mut c = rest::Client::connect(&format!("http://{addr}")).unwrap();
    let e = c.post("/order").body(b"{}").send().unwrap_err();
    assert!(matches!(e, rest::Error::ConnectionLost { .. }), "{e:?}");
    let url = format!("POST http://{addr}/order: ");
    contains(&e, &[&url, "closed the connection before responding"]);
    done.send(()).unwrap();
    h.join().unwrap();
}

#[test]
fn rest_garbage_response_names_the_request() {
    let (addr, done, h) = one_shot(garbage);
    let mut c = rest::Client::connect(&format!("http://{addr}")).unwrap();
    let e = c.delete("/order?id=1").send().unwrap_err();
    assert!(matches!(e, rest::Error::Http { .. }), "{e:?}");
    let url = format!("DELETE http://{addr}/order?id=1: ");
    contains(&e, &[&url, "invalid HTTP response: "]);
    done.send(()).unwrap();
    h.join().unwrap();
}

#[test]
fn rest_socket_error_names_the_request() {
    let (addr, h) = resetting();
    let mut c = rest::Client::connect(&format!("http://{addr}")).unwrap();
    let e = c.get("/depth").send().map(|_| ()).unwrap_err();
    h.join().unwrap();
    assert!(
        matches!(&e, rest::Error::Io { error, .. } if error.kind() == std::io::ErrorKind::ConnectionReset),
        "{e:?}"
    );
    let url = format!("http://{addr}/depth: ");
    contains(&e, &[&url]);
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

// ---- WebSocket, blocking ----

#[test]
fn ws_client_handshake_refused_names_the_url() {
    let (addr, done, h) = one_shot(|s| {
        read_head(s);
        s.write_all(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
            .unwrap();
    });
    let e = ws::Client::connect(&format!("ws://{addr}/feed")).unwrap_err();
    assert!(
        matches!(&e, ws::Error::Handshake { error: HandshakeError::BadStatus(403), peer } if peer.ends_with("/feed")),
        "{e:?}"
    );
    let url = format!("ws://{addr}/feed: ");
    contains(&e, &[&url, "opening handshake failed", "403"]);
    done.send(()).unwrap();
    h.join().unwrap();
}

#[test]
fn ws_client_handshake_timeout_names_the_url_and_the_setting() {
    let (addr, done, h) = one_shot(read_head);
    let e = ws::ClientBuilder::new()
        .handshake_timeout(SHORT)
        .connect(&format!("ws://{addr}/feed?x=1"))
        .unwrap_err();
    assert!(matches!(e, ws::Error::HandshakeTimeout { .. }), "{e:?}");
    let url = format!("ws://{addr}/feed?x=1: ");
    contains(&e, &[&url, "raise `handshake_timeout`"]);
    done.send(()).unwrap();
    h.join().unwrap();
}

/// A client on 127.0.0.1 that sends `request` (may be empty) and holds its socket
/// until the test is done; returns its own address.
fn raw_client(
    server: SocketAddr,
    request: &'static [u8],
) -> (SocketAddr, Sender<()>, JoinHandle<()>) {
    let s = TcpStream::connect(server).unwrap();
    let local = s.local_addr().unwrap();
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let h = thread::spawn(move || {
        let mut s = s;
        s.write_all(request).unwrap();
        let _ = done_rx.recv();
    });
    (local, done_tx, h)
}

const NOT_AN_UPGRADE: &[u8] = b"GET /feed HTTP/1.1\r\nHost: h\r\n\r\n";

#[test]
fn ws_server_handshake_error_names_the_client() {
    let mut server = ws::Server::bind("127.0.0.1:0").unwrap();
    let (client, done, h) = raw_client(server.local_addr().unwrap(), NOT_AN_UPGRADE);
    let e = server.accept().unwrap().handshake().unwrap_err();
    assert!(matches!(e, ws::Error::Handshake { .. }), "{e:?}");
    let peer = format!("client {client}: ");
    contains(&e, &[&peer, "opening handshake failed"]);
    done.send(()).unwrap();
    h.join().unwrap();
}

#[test]
fn ws_server_handshake_timeout_names_the_client_and_the_setting() {
    let mut server = ws::ServerBuilder::new()
        .handshake_timeout(SHORT)
        .bind("127.0.0.1:0")
        .unwrap();
    let (client, done, h) = raw_client(server.local_addr().unwrap(), b"");
    let e = server.accept().unwrap().handshake().unwrap_err();
    assert!(matches!(e, ws::Error::HandshakeTimeout { .. }), "{e:?}");
    let peer = format!("client {client}: ");
    contains(&e, &[&peer, "raise `handshake_timeout`"]);
    done.send(()).unwrap();
    h.join().unwrap();
}

// ---- tokio ----

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
    fn rest_read_timeout() {
        let (addr, done, h) = one_shot(read_head);
        run(async {
            let mut c = trest::Client::builder()
                .read_timeout(Some(SHORT))
                .build(&format!("http://{addr}/api"))
                .unwrap();
            let e = c.get("/x").send().await.map(|_| ()).unwrap_err();
            assert!(matches!(e, rest::Error::ReadTimeout { .. }), "{e:?}");
            let url = format!("GET http://{addr}/api/x: ");
            contains(&e, &[&url, "raise `read_timeout`"]);
        });
        done.send(()).unwrap();
        h.join().unwrap();
    }

    #[test]
    fn rest_write_timeout() {
        let (addr, done, h) = one_shot(|_| {});
        run(async {
            let mut c = trest::Client::builder()
                .write_timeout(Some(SHORT))
                .build(&format!("http://{addr}"))
                .unwrap();
            let body = vec![b'x'; 32 << 20];
            let mut w = c.request_writer(vec![0; (32 << 20) + 4096]).unwrap();
            let mut r: ResponseReader<Vec<u8>> = ResponseReader::new(vec![0; 4096]);
            let req = w.put("/big").body(&body).finish().unwrap();
            let e = c.send(&req, &mut r).await.map(|_| ()).unwrap_err();
            assert!(matches!(e, rest::Error::WriteTimeout { .. }), "{e:?}");
            let url = format!("PUT http://{addr}/big: ");
            contains(&e, &[&url, "raise `write_timeout`"]);
        });
        done.send(()).unwrap();
        h.join().unwrap();
    }

    #[test]
    fn rest_connection_lost() {
        let (addr, done, h) = one_shot(hang_up);
        run(async {
            let mut c = trest::Client::builder()
                .build(&format!("http://{addr}"))
                .unwrap();
            let e = c.patch("/order/1").send().await.map(|_| ()).unwrap_err();
            assert!(matches!(e, rest::Error::ConnectionLost { .. }), "{e:?}");
            let url = format!("PATCH http://{addr}/order/1: ");
            contains(&e, &[&url, "before responding"]);
        });
        done.send(()).unwrap();
        h.join().unwrap();
    }

    #[test]
    fn rest_garbage_response() {
        let (addr, done, h) = one_shot(garbage);
        run(async {
            let mut c = trest::Client::builder()
                .build(&format!("http://{addr}"))
                .unwrap();
            let e = c.get("/time").send().await.map(|_| ()).unwrap_err();
            assert!(matches!(e, rest::Error::Http { .. }), "{e:?}");
            let url = format!("GET http://{addr}/time: ");
            contains(&e, &[&url, "invalid HTTP response: "]);
        });
        done.send(()).unwrap();
        h.join().unwrap();
    }

    #[test]
    fn rest_socket_error() {
        let (addr, h) = resetting();
        run(async {
            let mut c = trest::Client::builder()
                .build(&format!("http://{addr}"))
                .unwrap();
            let e = c.get("/depth").send().await.map(|_| ()).unwrap_err();
            assert!(matches!(e, rest::Error::Io { .. }), "{e:?}");
            let url = format!("http://{addr}/depth: ");
            contains(&e, &[&url]);
        });
        h.join().unwrap();
    }

    #[test]
    fn ws_client_handshake_refused_and_timeout() {
        let (addr, done, h) = one_shot(|s| {
            read_head(s);
            s.write_all(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
                .unwrap();
        });
        let e = run(tws::Client::connect(&format!("ws://{addr}/feed")))
            .map(|_| ())
            .unwrap_err();
        assert!(
            matches!(
                e,
                ws::Error::Handshake {
                    error: HandshakeError::BadStatus(403),
                    ..
                }
            ),
            "{e:?}"
        );
        let url = format!("ws://{addr}/feed: ");
        contains(&e, &[&url, "403"]);
        done.send(()).unwrap();
        h.join().unwrap();

        let (addr, done, h) = one_shot(read_head);
        let e = run(async {
            tws::ClientBuilder::new()
                .handshake_timeout(SHORT)
                .connect(&format!("ws://{addr}/feed"))
                .await
                .map(|_| ())
                .unwrap_err()
        });
        assert!(matches!(e, ws::Error::HandshakeTimeout { .. }), "{e:?}");
        let url = format!("ws://{addr}/feed: ");
        contains(&e, &[&url, "raise `handshake_timeout`"]);
        done.send(()).unwrap();
        h.join().unwrap();
    }

    #[test]
    fn ws_server_handshake_error_and_timeout() {
        run(async {
            let mut server = tws::Server::bind("127.0.0.1:0").await.unwrap();
            let (client, done, h) = raw_client(server.local_addr().unwrap(), NOT_AN_UPGRADE);
            let e = server
                .accept()
                .await
                .unwrap()
                .handshake()
                .await
                .unwrap_err();
            assert!(matches!(e, ws::Error::Handshake { .. }), "{e:?}");
            let peer = format!("client {client}: ");
            contains(&e, &[&peer, "opening handshake failed"]);
            done.send(()).unwrap();
            h.join().unwrap();

            let mut server = tws::ServerBuilder::new()
                .handshake_timeout(SHORT)
                .bind("127.0.0.1:0")
                .await
                .unwrap();
            let (client, done, h) = raw_client(server.local_addr().unwrap(), b"");
            let e = server
                .accept()
                .await
                .unwrap()
                .handshake()
                .await
                .unwrap_err();
            assert!(matches!(e, ws::Error::HandshakeTimeout { .. }), "{e:?}");
            let peer = format!("client {client}: ");
            contains(&e, &[&peer, "raise `handshake_timeout`"]);
            done.send(()).unwrap();
            h.join().unwrap();
        });
    }
}
