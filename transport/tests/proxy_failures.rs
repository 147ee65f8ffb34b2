//! Proxies that misbehave, played by a tiny fake on loopback: one that answers garbage,
//! one that closes mid-handshake, one that never answers, and a port with no proxy at
//! all. Each is a typed [`ProxyError`] naming the proxy's address, from the blocking
//! and tokio ws clients and REST clients alike. (Real proxies, refusing and tunnelling:
//! conformance/tests/proxy.rs.)

#![cfg(all(feature = "tokio", unix))]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::thread;
use std::time::Duration;

use tickwire::proxy::{Proxy, ProxyError, ProxyErrorKind};
use tickwire::{rest, ws};

/// What the fake does after reading the client's first bytes.
#[derive(Clone, Copy)]
enum Act {
    /// Answer these bytes, then close.
    Answer(&'static [u8]),
    /// Close without a word.
    Close,
    /// Say nothing, keep the connection open a while.
    Silent,
}

/// A fake proxy serving `n` connections with `act`.
fn fake(act: Act, n: usize) -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    thread::spawn(move || {
        for _ in 0..n {
            let Ok((mut s, _)) = l.accept() else { return };
            let mut b = [0u8; 512];
            let _ = s.read(&mut b);
            match act {
                Act::Answer(bytes) => {
                    let _ = s.write_all(bytes);
                }
                Act::Close => {}
                // Says nothing, holding the connection until the client gives up (an
                // event: a proxy that slept a while could close first on a loaded
                // machine).
                Act::Silent => {
                    let _ = s.read_to_end(&mut Vec::new());
                }
            }
        }
    });
    addr
}

/// The four clients, each connecting to `ws(s)://` or `http(s)://localhost:9` (never
/// reached) through `proxy`; their proxy errors.
fn errors(proxy: &Proxy, secure: bool) -> Vec<ProxyError> {
    let t = Duration::from_millis(600);
    let (ws_url, http_url) = if secure {
        ("wss://localhost:9/", "https://localhost:9")
    } else {
        ("ws://localhost:9/", "http://localhost:9")
    };
    let ws_err = |r: Result<(), ws::Error>| match r {
        Err(ws::Error::Proxy(e)) => e,
        other => panic!("{other:?}"),
    };
    let rest_err = |r: Result<(), rest::Error>| match r {
        Err(rest::Error::Proxy(e)) => e,
        other => panic!("{other:?}"),
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    vec![
        ws_err(
            ws::ClientBuilder::new()
                .connect_timeout(t)
                .proxy(proxy.clone())
                .connect(ws_url)
                .map(|_| ()),
        ),
        rest_err(
            rest::Client::builder()
                .connect_timeout(t)
                .proxy(proxy.clone())
                .connect(http_url)
                .map(|_| ()),
        ),
        ws_err(rt.block_on(async {
            tickwire::tokio::ws::ClientBuilder::new()
                .connect_timeout(t)
                .proxy(proxy.clone())
                .connect(ws_url)
                .await
                .map(|_| ())
        })),
        rest_err(rt.block_on(async {
            tickwire::tokio::rest::Client::builder()
                .connect_timeout(t)
                .proxy(proxy.clone())
                .connect(http_url)
                .await
                .map(|_| ())
        })),
    ]
}

fn check(act: Act, socks: bool, want: ProxyErrorKind) {
    for secure in [false, true] {
        let addr = fake(act, 4);
        let proxy = if socks {
            Proxy::socks5(&format!("socks5://{addr}")).unwrap()
        } else {
            Proxy::http(&format!("http://{addr}")).unwrap()
        };
        for e in errors(&proxy, secure) {
            assert_eq!(e.kind(), &want, "{e}");
            assert_eq!(e.proxy(), addr.to_string());
            assert_eq!(e.target(), "localhost:9");
            assert!(
                e.to_string().contains(&format!("{addr} to localhost:9: ")),
                "{e}"
            );
        }
    }
}

#[test]
fn http_proxy_answering_garbage() {
    check(
        Act::Answer(b"SSH-2.0-OpenSSH_9.2\r\n"),
        false,
        ProxyErrorKind::Garbage("answer does not start with HTTP/1.x"),
    );
}

#[test]
fn http_proxy_closing_mid_handshake() {
    check(Act::Close, false, ProxyErrorKind::Closed);
    // Half an answer, then the close.
    check(
        Act::Answer(b"HTTP/1.1 200 Connection est"),
        false,
        ProxyErrorKind::Closed,
    );
}

#[test]
fn http_proxy_refusing() {
    check(
        Act::Answer(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n"),
        false,
        ProxyErrorKind::Refused {
            status: 403,
            reason: "Forbidden".into(),
        },
    );
}

#[test]
fn socks_proxy_answering_garbage_or_closing() {
    check(
        Act::Answer(b"HTTP/1.1 400 Bad Request\r\n\r\n"),
        true,
        ProxyErrorKind::Garbage("method choice is not SOCKS version 5"),
    );
    check(Act::Close, true, ProxyErrorKind::Closed);
    check(Act::Answer(&[5]), true, ProxyErrorKind::Closed);
}

#[test]
fn silent_proxy_times_out_within_the_connect_timeout() {
    check(Act::Silent, false, ProxyErrorKind::Timeout);
}

#[test]
fn unreachable_proxy_is_a_connect_error_naming_it() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let proxy = Proxy::http(&format!("http://127.0.0.1:{port}")).unwrap();
    for e in errors(&proxy, false) {
        assert!(
            matches!(
                e.kind(),
                ProxyErrorKind::Connect(std::io::ErrorKind::ConnectionRefused, _)
            ),
            "{e}"
        );
        assert_eq!(e.proxy(), format!("127.0.0.1:{port}"));
        assert_eq!(e.target(), "localhost:9");
    }
}
