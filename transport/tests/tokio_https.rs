//! https:// through the async REST client and pool (feature `tokio`) over 127.0.0.1,
//! against an HTTP/1.1 server built on the codec (RequestReader + ResponseWriter) over
//! the transport's TLS server stream in threads, certificates made by rcgen at test
//! time: keep-alive over TLS counted on the server, chunked bodies, SNI from the URL,
//! IP literals, `Connection: close` then reconnect, a stale TLS connection retried
//! for GET, the idle probe seeing close_notify, the pool, mTLS with TLS 1.3 only, a
//! handshake that never completes (connect timeout) and the certificate failures
//! (untrusted CA, wrong host name, expired) as typed `Error::Tls`. Every test runs on
//! a current_thread and on a multi-thread runtime.
#![cfg(all(feature = "tokio", feature = "tls", unix))]

mod https_util;
mod net_events;
mod tls_util;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::mpsc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use https_util::{serve, tls_kind};
use tickwire::codec::http::RequestReader;
use tickwire::tls::{TlsConfig, TlsErrorKind, TlsServerConfig, TlsStream, rustls};
use tickwire::tokio::rest::{
    Client, ClientBuilder, ClientPool, Error, PoolConfig, RequestWriter, ResponseReader,
};
use tls_util::Ca;

const T: Duration = Duration::from_secs(20);

fn builder(config: TlsConfig) -> ClientBuilder {
    Client::builder()
        .tls(config)
        .connect_timeout(T)
        .read_timeout(Some(T))
        .write_timeout(Some(T))
}

fn parts(c: &Client) -> (RequestWriter<Vec<u8>>, ResponseReader<Vec<u8>>) {
    (
        RequestWriter::new(vec![0; 64 << 10], c.host_header()).unwrap(),
        ResponseReader::new(vec![0; 64 << 10]),
    )
}

/// Join a server thread without blocking the runtime's thread.
async fn join<R: Send + 'static>(h: JoinHandle<R>) -> R {
    ::tokio::task::spawn_blocking(move || h.join().unwrap())
        .await
        .unwrap()
}

async fn keep_alive_chunked_and_sni() {
    let ca = Ca::new("test CA");
    let (port, seen, h) = serve(ca.server(&["localhost"]).server_config(), 1);
    let mut c = builder(ca.client_config())
        .connect(&format!("https://localhost:{port}/api"))
        .await
        .unwrap();
    assert_eq!(c.host_header(), format!("localhost:{port}"));
    let version = c.tls().and_then(|t| t.protocol_version());
    assert_eq!(version, Some(rustls::ProtocolVersion::TLSv1_3));
    let (mut w, mut r) = parts(&c);
    for i in 0..20 {
        let body = format!(r#"{{"n":{i}}}"#);
        let req = w.post("/order").body(body.as_bytes()).finish().unwrap();
        let resp = c.send(&req, &mut r).await.unwrap();
        assert_eq!(resp.status(), 200);
        assert_eq!(resp.body_str().unwrap(), format!("POST /order {body}"));
        assert!(resp.keep_alive());
    }
    let req = w.get("/chunked").finish().unwrap();
    let resp = c.send(&req, &mut r).await.unwrap();
    assert_eq!(resp.header_str("transfer-encoding"), Some("chunked"));
    let want: String = (0..50).map(|i| format!("line {i:02}\n")).collect();
    assert_eq!(resp.body_str().unwrap(), want);
    // A request larger than one TLS write chunk (32 KiB) goes out whole.
    let big = vec![b'x'; 40_000];
    let req = w.post("/big").body(&big).finish().unwrap();
    let resp = c.send(&req, &mut r).await.unwrap();
    assert_eq!(resp.body().len(), "POST /big ".len() + big.len());
    let s = c.stats();
    assert_eq!((s.connects, s.requests, s.retries), (1, 22, 0));
    c.disconnect();
    join(h).await;
    assert_eq!(seen.per_connection(), [22]);
    assert_eq!(seen.sni(), [Some("localhost".to_owned())]);
}

async fn close_then_reconnect_and_ip_literal() {
    let ca = Ca::new("test CA");
    let (port, seen, h) = serve(ca.server(&["127.0.0.1"]).server_config(), 2);
    let mut c = builder(ca.client_config())
        .build(&format!("https://127.0.0.1:{port}"))
        .unwrap();
    let (mut w, mut r) = parts(&c);
    let resp = c
        .send(&w.get("/close").finish().unwrap(), &mut r)
        .await
        .unwrap();
    assert_eq!((resp.body(), resp.keep_alive()), (&b"bye"[..], false));
    assert!(!c.is_connected());
    let resp = c
        .send(&w.get("/x").finish().unwrap(), &mut r)
        .await
        .unwrap();
    assert_eq!(resp.body_str().unwrap(), "GET /x ");
    assert_eq!(c.stats().connects, 2);
    c.disconnect();
    join(h).await;
    assert_eq!(seen.per_connection(), [1, 1]);
    // The disconnect said goodbye with close_notify (the `/close` connection was
    // closed by the server right after its own).
    assert_eq!(seen.close_notifies(), 1);
    // An IP literal sends no SNI.
    assert_eq!(seen.sni(), [None, None]);
}

async fn stale_tls_connection_is_retried_for_get() {
    let ca = Ca::new("test CA");
    // Connections 0 and 1 are dropped by the server on `/hangup` (a bare FIN, no
    // close_notify); connection 2 serves the rest.
    let (port, seen, h) = serve(ca.server(&["localhost"]).server_config(), 3);
    let mut c = builder(ca.client_config())
        .idle_probe(Some(Duration::ZERO))
        .build(&format!("https://localhost:{port}"))
        .unwrap();
    let (mut w, mut r) = parts(&c);
    c.send(&w.get("/a").finish().unwrap(), &mut r)
        .await
        .unwrap();
    match c.send(&w.get("/hangup").finish().unwrap(), &mut r).await {
        Err(Error::Tls { url, error }) => {
            assert_eq!(error.kind(), TlsErrorKind::Truncated);
            // The error names the request it failed.
            assert_eq!(url, format!("https://localhost:{port}/hangup"));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(c.stats().retries, 1);
    c.send(&w.get("/b").finish().unwrap(), &mut r)
        .await
        .unwrap();
    // Every byte the server sent (its session tickets too) has arrived.
    net_events::wait_delivered(([127, 0, 0, 1], port).into(), c.local_addr().unwrap());
    // The idle probe finds this live connection alive (the session tickets the server
    // sent after the handshake do not make it stale).
    let resp = c
        .send(&w.post("/c").body(b"x").finish().unwrap(), &mut r)
        .await
        .unwrap();
    assert_eq!(resp.body_str().unwrap(), "POST /c x");
    let s = c.stats();
    assert_eq!((s.connects, s.stale_probed), (3, 0));
    c.disconnect();
    join(h).await;
    assert_eq!(seen.per_connection(), [2, 1, 2]);
}

async fn idle_probe_sees_close_notify_and_reconnects_before_post() {
    let ca = Ca::new("test CA");
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let tls = ca.server(&["localhost"]).server_config();
    let h = thread::spawn(move || {
        let mut posts = 0;
        for i in 0..2 {
            let (s, _) = l.accept().unwrap();
            s.set_read_timeout(Some(T)).unwrap();
            let mut s = TlsStream::server(s, &tls).unwrap();
            let mut reader: RequestReader<Vec<u8>> = RequestReader::new(vec![0u8; 4096]);
            loop {
                if let Some(req) = reader.poll().unwrap() {
                    posts += usize::from(req.method_str() == "POST");
                    break;
                }
                let n = s.read(reader.spare_mut()).unwrap();
                assert!(n > 0);
                reader.commit(n);
            }
            s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                .unwrap();
            s.flush().unwrap();
            if i == 0 {
                // Idle close, once the client has read the response: close_notify,
                // then FIN.
                let (ours, theirs) = (
                    s.get_ref().local_addr().unwrap(),
                    s.get_ref().peer_addr().unwrap(),
                );
                net_events::wait_delivered(ours, theirs);
                net_events::wait_read(theirs, ours);
                s.close_notify().unwrap();
                s.get_ref().shutdown(std::net::Shutdown::Write).unwrap();
            }
        }
        posts
    });
    let mut c = builder(ca.client_config())
        .build(&format!("https://localhost:{port}"))
        .unwrap();
    let (mut w, mut r) = parts(&c);
    c.send(&w.get("/a").finish().unwrap(), &mut r)
        .await
        .unwrap();
    // The server's close_notify and FIN have arrived; the default idle probe checks
    // before every reuse.
    net_events::wait_peer_closed(c.local_addr().unwrap(), c.peer_addr().unwrap());
    let resp = c
        .send(&w.post("/b").body(b"x").finish().unwrap(), &mut r)
        .await
        .unwrap();
    assert_eq!(resp.body(), b"ok");
    let s = c.stats();
    assert_eq!((s.connects, s.stale_probed, s.retries), (2, 1, 0));
    assert_eq!(join(h).await, 1);
}

async fn pool_over_https() {
    let ca = Ca::new("test CA");
    let (port, seen, h) = serve(ca.server(&["localhost"]).server_config(), 2);
    let pool = ClientPool::with_builder(
        builder(ca.client_config()),
        &format!("https://localhost:{port}/v1"),
        PoolConfig {
            size: 2,
            request_buffer: 4096,
            response_buffer: 4096,
            ..PoolConfig::default()
        },
    )
    .await
    .unwrap();
    for i in 0..6 {
        let mut a = pool.acquire().await.unwrap();
        let mut b = pool.acquire().await.unwrap();
        let resp = a
            .send_with(|w| w.get(&format!("/a{i}")).finish())
            .await
            .unwrap();
        assert_eq!(resp.body_str().unwrap(), format!("GET /v1/a{i} "));
        let resp = b.send_with(|w| w.get("/b").finish()).await.unwrap();
        assert_eq!(resp.body_str().unwrap(), "GET /v1/b ");
        assert!(b.tls().is_some());
    }
    drop(pool);
    join(h).await;
    assert_eq!(seen.per_connection(), [6, 6]);
}

async fn mtls_and_tls13_only() {
    let ca = Ca::new("test CA");
    let leaf = ca.server(&["localhost"]);
    let client_leaf = ca.client();
    let server = TlsServerConfig::builder(leaf.cert.as_bytes(), leaf.key.as_bytes())
        .unwrap()
        .require_client_cert_pem(ca.pem().as_bytes())
        .unwrap()
        .tls13_only()
        .build()
        .unwrap();
    let (port, seen, h) = serve(server, 2);
    let config = TlsConfig::builder()
        .system_roots(false)
        .add_ca_pem(ca.pem().as_bytes())
        .unwrap()
        .client_cert_pem(client_leaf.cert.as_bytes(), client_leaf.key.as_bytes())
        .unwrap()
        .tls13_only()
        .build()
        .unwrap();
    let url = format!("https://localhost:{port}");
    let mut c = builder(config).connect(&url).await.unwrap();
    let (mut w, mut r) = parts(&c);
    let resp = c
        .send(&w.get("/m").finish().unwrap(), &mut r)
        .await
        .unwrap();
    assert_eq!(resp.body_str().unwrap(), "GET /m ");
    c.disconnect();
    // Without a client certificate the server refuses: in TLS 1.3 the client hears the
    // alert on its first read, a typed TLS error.
    let mut c = builder(ca.client_config()).build(&url).unwrap();
    match c.send(&w.get("/m").finish().unwrap(), &mut r).await {
        Err(Error::Tls { error: e, .. }) => {
            assert_eq!(e.kind(), TlsErrorKind::AlertReceived, "{e:?}")
        }
        // The server's RST can overtake its alert.
        Err(Error::Io { error: e, .. }) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
        other => panic!("{other:?}"),
    }
    join(h).await;
    assert_eq!(seen.per_connection(), [1]);
}

async fn certificate_failures_are_typed() {
    let ca = Ca::new("test CA");
    let other = Ca::new("other CA");
    let (port, _, h) = serve(ca.server(&["localhost"]).server_config(), 1);
    let url = format!("https://localhost:{port}");
    let r = builder(other.client_config()).connect(&url).await;
    assert_eq!(tls_kind(r), TlsErrorKind::UnknownIssuer);
    join(h).await;
    let (port, _, h) = serve(ca.server(&["exchange.test"]).server_config(), 1);
    let r = builder(ca.client_config())
        .connect(&format!("https://localhost:{port}"))
        .await;
    assert_eq!(tls_kind(r), TlsErrorKind::NameMismatch);
    join(h).await;
    let (port, _, h) = serve(ca.expired_server(&["localhost"]).server_config(), 1);
    let r = builder(ca.client_config())
        .connect(&format!("https://localhost:{port}"))
        .await;
    assert_eq!(tls_kind(r), TlsErrorKind::Expired);
    join(h).await;
    // The explicit no-verification mode accepts any of them (tests only).
    let (port, _, h) = serve(other.server(&["exchange.test"]).server_config(), 1);
    let mut c = builder(TlsConfig::dangerous_no_verify())
        .connect(&format!("https://localhost:{port}"))
        .await
        .unwrap();
    let (mut w, mut r) = parts(&c);
    let resp = c
        .send(&w.get("/nv").finish().unwrap(), &mut r)
        .await
        .unwrap();
    assert_eq!(resp.body_str().unwrap(), "GET /nv ");
    c.disconnect();
    join(h).await;
}

/// A server that accepts TCP and never answers the ClientHello: the handshake is
/// bounded by the connect timeout. A plain HTTP server on an https:// URL: a typed
/// TLS error.
async fn silent_server_times_out_and_plain_http_is_a_tls_error() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let (tx, rx) = mpsc::channel::<()>();
    let h = thread::spawn(move || {
        let (s, _) = l.accept().unwrap();
        // Hold the connection open until the client gave up.
        let _ = rx.recv_timeout(T);
        drop(s);
    });
    let start = Instant::now();
    let r = Client::builder()
        .connect_timeout(Duration::from_millis(300))
        .connect(&format!("https://127.0.0.1:{port}"))
        .await;
    assert!(matches!(r, Err(Error::ConnectTimeout { .. })), "{r:?}");
    assert!(start.elapsed() < Duration::from_secs(10));
    tx.send(()).unwrap();
    join(h).await;

    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let h = thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        let mut b = [0u8; 512];
        let _ = s.read(&mut b);
        let _ = s.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
    });
    let r = Client::builder()
        .connect_timeout(T)
        .connect(&format!("https://127.0.0.1:{port}"))
        .await;
    assert_eq!(tls_kind(r), TlsErrorKind::Corrupt);
    join(h).await;
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
    keep_alive_chunked_and_sni,
    close_then_reconnect_and_ip_literal,
    stale_tls_connection_is_retried_for_get,
    idle_probe_sees_close_notify_and_reconnects_before_post,
    pool_over_https,
    mtls_and_tls13_only,
    certificate_failures_are_typed,
    silent_server_times_out_and_plain_http_is_a_tls_error,
);
