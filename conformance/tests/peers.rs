//! The harness's peers do what the HTTP conformance tests rely on, checked with plain
//! std sockets (no tickwire code): nginx serves lengths, chunked, close-delimited and
//! keep-alive as configured; httpbin answers and keeps connections alive.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use tickwire_conformance::{Httpbin, Nginx, pattern, skip_or_fail};

/// Send `req` and read until the peer closes; returns (head, body bytes after the head).
fn exchange(addr: SocketAddr, req: &str) -> (String, Vec<u8>) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(req.as_bytes()).unwrap();
    let mut all = Vec::new();
    s.read_to_end(&mut all).unwrap();
    let end = all
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("no head")
        + 4;
    let head = String::from_utf8(all[..end].to_vec())
        .unwrap()
        .to_ascii_lowercase();
    (head, all[end..].to_vec())
}

fn get(path: &str, host: SocketAddr) -> String {
    format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n")
}

#[test]
fn nginx_serves_each_framing_as_configured() {
    let Some(n) = skip_or_fail("nginx_serves_each_framing", Nginx::start()) else {
        return;
    };
    let a = n.addr();
    let (head, body) = exchange(a, &get("/small.txt", a));
    assert!(head.starts_with("http/1.1 200"), "{head}");
    assert!(head.contains(&format!("content-length: {}", Nginx::SMALL.len())));
    assert_eq!(body, Nginx::SMALL.as_bytes());

    let (head, body) = exchange(a, &get("/large.bin", a));
    assert!(head.contains(&format!("content-length: {}", Nginx::LARGE_LEN)));
    assert_eq!(body.len(), Nginx::LARGE_LEN);
    assert!(body.iter().enumerate().all(|(i, b)| *b == pattern(i)));

    let (head, _) = exchange(a, &get("/chunked/text.txt", a));
    assert!(head.contains("transfer-encoding: chunked"), "{head}");
    assert!(!head.contains("content-length"), "{head}");

    let (head, body) = exchange(
        a,
        &get("/close-delimited/text.txt", a).replace("Connection: close\r\n", ""),
    );
    assert!(!head.contains("transfer-encoding"), "{head}");
    assert!(!head.contains("content-length"), "{head}");
    assert_eq!(body, Nginx::text().replace("MARK", "mark").as_bytes());

    let (head, _) = exchange(
        a,
        &get("/no-keepalive/small.txt", a).replace("Connection: close\r\n", ""),
    );
    assert!(head.contains("connection: close"), "{head}");

    let log = n.access_log_of(5);
    assert_eq!(log.len(), 5, "{log:?}");
    assert!(
        log.iter().all(|e| e.request == 1 && e.status == 200),
        "{log:?}"
    );
}

#[test]
fn nginx_keeps_connections_alive_and_logs_them() {
    let Some(n) = skip_or_fail("nginx_keeps_connections_alive", Nginx::start()) else {
        return;
    };
    let a = n.addr();
    let one = format!("GET /small.txt HTTP/1.1\r\nHost: {a}\r\n\r\n");
    let req = one.repeat(2) + &get("/small.txt", a);
    let (head, rest) = exchange(a, &req);
    assert!(head.contains("connection: keep-alive"), "{head}");
    let rest = String::from_utf8(rest).unwrap();
    assert_eq!(rest.matches("HTTP/1.1 200 OK").count(), 2, "{rest}");
    let log = n.access_log_of(3);
    assert_eq!(log.len(), 3, "{log:?}");
    assert!(log.iter().all(|e| e.connection == log[0].connection));
    assert_eq!(log.iter().map(|e| e.request).collect::<Vec<_>>(), [1, 2, 3]);
}

#[test]
fn httpbin_answers_and_keeps_alive() {
    let Some(h) = skip_or_fail("httpbin_answers", Httpbin::shared()) else {
        return;
    };
    let a = h.addr();
    let one = format!("GET /get?x=1 HTTP/1.1\r\nHost: {a}\r\n\r\n");
    let (head, rest) = exchange(a, &(one + &get("/status/204", a)));
    assert!(head.starts_with("http/1.1 200"), "{head}");
    assert!(head.contains("connection: keep-alive"), "{head}");
    let rest = String::from_utf8(rest).unwrap();
    assert!(rest.contains("\"x\": \"1\""), "{rest}");
    assert!(rest.contains("HTTP/1.1 204"), "{rest}");
}
