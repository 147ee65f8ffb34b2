//! The REST clients (blocking and tokio) against a server on 127.0.0.1 that misbehaves
//! between requests on a keep-alive connection, where reqwest and ureq hold every rule:
//!
//! - it sends a complete response nobody asked for shortly after answering (well inside
//!   the idle-probe interval): RFC 9112 §6.3, those bytes are never the answer to the next
//!   request, and the connection is not reused;
//! - it answers with an HTTP/1.0 response framed by Transfer-Encoding and
//!   `Connection: keep-alive`: RFC 9112 §6.1, the framing is faulty, the connection is
//!   closed after it (the server then answers anything further on it with garbage);
//! - it closes the connection (FIN) after answering: a POST that follows goes out on a
//!   new connection, not into the dead one.
//!
//! Each test waits for the event it needs (the bytes or the FIN in the client's socket)
//! through `/proc/net/tcp`, never for a length of time.
#![cfg(unix)]

mod net_events;
mod rest_util;

use std::io::Write;
use std::net::{SocketAddr, TcpListener};
use std::sync::mpsc::{self, Receiver};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use rest_util::read_request;
use tickwire::rest::{Client, Error};

/// How the server misbehaves after its first answer on a connection.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Misbehave {
    /// Sends a whole unsolicited response once the client has read the first one.
    Unsolicited,
    /// Answers the first request with HTTP/1.0 + chunked + keep-alive, then garbage.
    Http10Chunked,
    /// Closes the connection after the first answer.
    Fin,
}

/// Both ends of a connection: the client's, the server's.
type Ends = (SocketAddr, SocketAddr);

/// The request line's method and target, as the answer's body: `POST /2`.
fn line(req: &[u8]) -> String {
    let text = String::from_utf8_lossy(req);
    let mut parts = text.split(' ');
    format!("{} {}", parts.next().unwrap(), parts.next().unwrap())
}

fn ok(body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// A server for `conns` connections, one after another; the first misbehaves as `how`,
/// the others answer every request with its request line. Sends on `events` (both ends
/// of the first connection) once the misbehaviour is on its way to the client; returns
/// the request lines of each connection.
fn server(how: Misbehave, conns: usize) -> (String, Receiver<Ends>, JoinHandle<Vec<Vec<String>>>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    let (tx, rx) = mpsc::channel();
    let h = thread::spawn(move || {
        (0..conns)
            .map(|ci| {
                let (mut s, _) = l.accept().unwrap();
                s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
                let (ours, theirs) = (s.local_addr().unwrap(), s.peer_addr().unwrap());
                let mut seen = Vec::new();
                while let Some(req) = read_request(&mut s) {
                    let l = line(&req);
                    seen.push(l.clone());
                    if ci > 0 {
                        s.write_all(&ok(&l)).unwrap();
                        continue;
                    }
                    match (how, seen.len()) {
                        (Misbehave::Unsolicited, 1) => {
                            s.write_all(&ok(&l)).unwrap();
                            // Once the client has read its answer: a response nobody
                            // asked for.
                            net_events::wait_delivered(ours, theirs);
                            net_events::wait_read(theirs, ours);
                            s.write_all(&ok("unsolicited")).unwrap();
                            net_events::wait_delivered(ours, theirs);
                            tx.send((theirs, ours)).unwrap();
                        }
                        (Misbehave::Http10Chunked, 1) => {
                            let body = l.len();
                            let resp = format!(
                                "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n\
                                 Transfer-Encoding: chunked\r\n\r\n{body:x}\r\n{l}\r\n0\r\n\r\n"
                            );
                            s.write_all(resp.as_bytes()).unwrap();
                            tx.send((theirs, ours)).unwrap();
                        }
                        (Misbehave::Http10Chunked, _) => {
                            s.write_all(b"garbage\r\n\r\n").unwrap();
                        }
                        (Misbehave::Fin, 1) => {
                            s.write_all(&ok(&l)).unwrap();
                            tx.send((theirs, ours)).unwrap();
                            break;
                        }
                        _ => s.write_all(&ok(&l)).unwrap(),
                    }
                }
                seen
            })
            .collect()
    });
    (url, rx, h)
}

/// What the client's socket must hold before the second request: the unsolicited
/// response, or the FIN.
fn wait_client_side(how: Misbehave, client: SocketAddr, server: SocketAddr) {
    match how {
        Misbehave::Unsolicited => net_events::wait_arrived(client, server),
        Misbehave::Fin => net_events::wait_peer_closed(client, server),
        Misbehave::Http10Chunked => {}
    }
}

fn blocking_case(how: Misbehave, second: tickwire::rest::Method) {
    let (url, events, h) = server(how, 2);
    // The default idle probe (it is never shorter than the time these tests take
    // between the two requests on a machine this fast: the rule must hold regardless).
    let mut c = Client::connect(&url).unwrap();
    let first = c.get("/1").send().unwrap();
    assert_eq!(first.body_str().unwrap(), "GET /1");
    if how == Misbehave::Http10Chunked {
        assert!(
            !first.keep_alive(),
            "HTTP/1.0 + Transfer-Encoding is not reused"
        );
    }
    let (client, server_end) = events.recv().unwrap();
    wait_client_side(how, client, server_end);
    let resp = c
        .request(second, "/2")
        .body(b"x")
        .send()
        .unwrap_or_else(|e: Error| panic!("{how:?}: second request failed: {e}"));
    assert_eq!(resp.body_str().unwrap(), format!("{} /2", second.as_str()));
    let s = c.stats();
    assert_eq!((s.connects, s.retries), (2, 0));
    c.disconnect();
    let seen = h.join().unwrap();
    assert_eq!(seen[0].len(), 1, "the first connection carried one request");
    assert_eq!(seen[1], [format!("{} /2", second.as_str())]);
}

#[test]
fn blocking_unsolicited_response_is_never_the_next_answer() {
    blocking_case(Misbehave::Unsolicited, tickwire::rest::Method::Get);
}

#[test]
fn blocking_http10_with_transfer_encoding_is_not_reused() {
    blocking_case(Misbehave::Http10Chunked, tickwire::rest::Method::Get);
}

#[test]
fn blocking_post_after_fin_goes_on_a_new_connection() {
    blocking_case(Misbehave::Fin, tickwire::rest::Method::Post);
}

#[cfg(feature = "tokio")]
mod tokio_client {
    use super::*;
    use tickwire::tokio::rest::{Client, Method};

    async fn case(how: Misbehave, second: Method) {
        let (url, events, h) = server(how, 2);
        let mut c = Client::connect(&url).await.unwrap();
        let first = c.get("/1").send().await.unwrap();
        assert_eq!(first.body_str().unwrap(), "GET /1");
        if how == Misbehave::Http10Chunked {
            assert!(!first.keep_alive());
        }
        tokio::task::spawn_blocking(move || {
            let (client, server_end) = events.recv().unwrap();
            wait_client_side(how, client, server_end);
        })
        .await
        .unwrap();
        let resp = c
            .request(second, "/2")
            .body(b"x")
            .send()
            .await
            .unwrap_or_else(|e| panic!("{how:?}: second request failed: {e}"));
        assert_eq!(resp.body_str().unwrap(), format!("{} /2", second.as_str()));
        let s = c.stats();
        assert_eq!((s.connects, s.retries), (2, 0));
        c.disconnect();
        let seen = tokio::task::spawn_blocking(move || h.join().unwrap())
            .await
            .unwrap();
        assert_eq!(seen[0].len(), 1);
        assert_eq!(seen[1], [format!("{} /2", second.as_str())]);
    }

    fn run(how: Misbehave, second: Method) {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(case(how, second));
    }

    #[test]
    fn tokio_unsolicited_response_is_never_the_next_answer() {
        run(Misbehave::Unsolicited, Method::Get);
    }

    #[test]
    fn tokio_http10_with_transfer_encoding_is_not_reused() {
        run(Misbehave::Http10Chunked, Method::Get);
    }

    #[test]
    fn tokio_post_after_fin_goes_on_a_new_connection() {
        run(Misbehave::Fin, Method::Post);
    }
}
