//! https:// over 127.0.0.1: the REST client and pool against an HTTP/1.1 server built on
//! the codec (RequestReader + ResponseWriter) over the transport's TLS server stream,
//! with certificates made by rcgen at test time. Keep-alive over TLS counted on the
//! server, chunked bodies over TLS, TLS 1.3-only, mTLS, stale TLS connections, and the
//! failures (untrusted CA, wrong host name, expired certificate) as typed
//! `Error::Tls`.

#![cfg(feature = "tls")]

mod https_util;
mod net_events;
mod tls_util;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::thread::{self};
use std::time::Duration;

use https_util::{serve, tls_kind};
use tickwire::codec::http::RequestReader;
use tickwire::rest::{
    Client, ClientBuilder, ClientPool, Error, PoolConfig, RequestWriter, ResponseReader,
};
use tickwire::tls::{TlsConfig, TlsErrorKind, TlsServerConfig, TlsStream, rustls};
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
        RequestWriter::new(vec![0; 16 << 10], c.host_header()).unwrap(),
        ResponseReader::new(vec![0; 64 << 10]),
    )
}

#[test]
fn https_keep_alive_counted_and_chunked() {
    let ca = Ca::new("test CA");
    let leaf = ca.server(&["localhost", "127.0.0.1"]);
    let (port, seen, h) = serve(leaf.server_config(), 1);
    // SNI and the certificate name come from the URL's host.
    let mut c = builder(ca.client_config())
        .connect(&format!("https://localhost:{port}/api"))
        .unwrap();
    assert_eq!(c.host_header(), format!("localhost:{port}"));
    let (mut w, mut r) = parts(&c);
    for i in 0..20 {
        let body = format!(r#"{{"n":{i}}}"#);
        let resp = c
            .send(
                &w.post("/order").body(body.as_bytes()).finish().unwrap(),
                &mut r,
            )
            .unwrap();
        assert_eq!(resp.status(), 200);
        assert_eq!(resp.body_str().unwrap(), format!("POST /order {body}"));
        assert!(resp.keep_alive());
    }
    let resp = c
        .send(&w.get("/chunked").finish().unwrap(), &mut r)
        .unwrap();
    assert_eq!(resp.header_str("transfer-encoding"), Some("chunked"));
    let want: String = (0..50).map(|i| format!("line {i:02}\n")).collect();
    assert_eq!(resp.body_str().unwrap(), want);
    let resp = c.send(&w.get("/after").finish().unwrap(), &mut r).unwrap();
    assert_eq!(resp.body_str().unwrap(), "GET /after ");
    let s = c.stats();
    assert_eq!((s.connects, s.requests, s.retries), (1, 22, 0));
    c.disconnect();
    h.join().unwrap();
    assert_eq!(seen.per_connection(), [22]);
}

#[test]
fn https_connection_close_then_reconnect_and_ip_literal() {
    let ca = Ca::new("test CA");
    let (port, seen, h) = serve(ca.server(&["127.0.0.1"]).server_config(), 2);
    let mut c = builder(ca.client_config())
        .build(&format!("https://127.0.0.1:{port}"))
        .unwrap();
    let (mut w, mut r) = parts(&c);
    let resp = c.send(&w.get("/close").finish().unwrap(), &mut r).unwrap();
    assert_eq!((resp.body(), resp.keep_alive()), (&b"bye"[..], false));
    assert!(!c.is_connected());
    let resp = c.send(&w.get("/x").finish().unwrap(), &mut r).unwrap();
    assert_eq!(resp.body_str().unwrap(), "GET /x ");
    assert_eq!(c.stats().connects, 2);
    c.disconnect();
    h.join().unwrap();
    assert_eq!(seen.per_connection(), [1, 1]);
}

#[test]
fn disconnect_close_and_drop_send_close_notify() {
    let ca = Ca::new("test CA");
    let (port, seen, h) = serve(ca.server(&["localhost"]).server_config(), 3);
    let url = format!("https://localhost:{port}");
    let mut c = builder(ca.client_config()).build(&url).unwrap();
    let (mut w, mut r) = parts(&c);
    // 1: an explicit disconnect.
    c.send(&w.get("/a").finish().unwrap(), &mut r).unwrap();
    c.disconnect();
    // 2: the server's `Connection: close` (our test server hangs up right after its
    // own close_notify, so it does not count ours).
    let resp = c.send(&w.get("/close").finish().unwrap(), &mut r).unwrap();
    assert!(!resp.keep_alive());
    // 3: the client dropped with its connection open.
    c.send(&w.get("/b").finish().unwrap(), &mut r).unwrap();
    drop(c);
    h.join().unwrap();
    assert_eq!(seen.per_connection(), [1, 1, 1]);
    assert_eq!(seen.close_notifies(), 2, "disconnect and drop say goodbye");
}

#[test]
fn stale_tls_connection_is_retried_for_get() {
    let ca = Ca::new("test CA");
    // Connections 0 and 1 are dropped by the server on `/hangup` (a bare FIN, no
    // close_notify); connection 2 serves the rest.
    let (port, seen, h) = serve(ca.server(&["localhost"]).server_config(), 3);
    let mut c = builder(ca.client_config())
        .idle_probe(Some(Duration::ZERO))
        .build(&format!("https://localhost:{port}"))
        .unwrap();
    let (mut w, mut r) = parts(&c);
    c.send(&w.get("/a").finish().unwrap(), &mut r).unwrap();
    // A GET on a reused connection that ends before any response byte is sent once
    // more on a new connection; that one is dropped too, and its error is returned:
    // the stream was cut without close_notify.
    match c.send(&w.get("/hangup").finish().unwrap(), &mut r) {
        Err(Error::Tls { url, error }) => {
            assert_eq!(error.kind(), TlsErrorKind::Truncated);
            // The error names the request it failed.
            assert_eq!(url, format!("https://localhost:{port}/hangup"));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(c.stats().retries, 1);
    c.send(&w.get("/b").finish().unwrap(), &mut r).unwrap();
    // Every byte the server sent (its session tickets too) has arrived.
    net_events::wait_delivered(([127, 0, 0, 1], port).into(), c.local_addr().unwrap());
    // The idle probe finds this live connection alive (not closed by the server).
    let resp = c
        .send(&w.post("/c").body(b"x").finish().unwrap(), &mut r)
        .unwrap();
    assert_eq!(resp.body_str().unwrap(), "POST /c x");
    let s = c.stats();
    assert_eq!((s.connects, s.stale_probed), (3, 0));
    c.disconnect();
    h.join().unwrap();
    assert_eq!(seen.per_connection(), [2, 1, 2]);
}

#[test]
fn idle_probe_sees_close_notify_and_reconnects_before_post() {
    let ca = Ca::new("test CA");
    // The server closes the idle connection (close_notify, FIN) after one answer that
    // did not say so: the probe before the POST sees it and reconnects first.
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
    c.send(&w.get("/a").finish().unwrap(), &mut r).unwrap();
    // The server's close_notify and FIN have arrived; the default idle probe checks
    // before every reuse.
    net_events::wait_peer_closed(c.local_addr().unwrap(), c.peer_addr().unwrap());
    let resp = c
        .send(&w.post("/b").body(b"x").finish().unwrap(), &mut r)
        .unwrap();
    assert_eq!(resp.body(), b"ok");
    let s = c.stats();
    assert_eq!((s.connects, s.stale_probed, s.retries), (2, 1, 0));
    assert_eq!(h.join().unwrap(), 1);
}

#[test]
fn https_pool_by_scheme() {
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
    .unwrap();
    for i in 0..6 {
        let mut a = pool.acquire().unwrap();
        let mut b = pool.acquire().unwrap();
        let resp = a.send_with(|w| w.get(&format!("/a{i}")).finish()).unwrap();
        assert_eq!(resp.body_str().unwrap(), format!("GET /v1/a{i} "));
        let resp = b.send_with(|w| w.get("/b").finish()).unwrap();
        assert_eq!(resp.body_str().unwrap(), "GET /v1/b ");
        assert!(b.is_connected());
    }
    drop(pool);
    h.join().unwrap();
    assert_eq!(seen.per_connection(), [6, 6]);
}

#[test]
fn mtls_and_tls13_only() {
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
    let mut c = builder(config).connect(&url).unwrap();
    let (mut w, mut r) = parts(&c);
    let resp = c.send(&w.get("/m").finish().unwrap(), &mut r).unwrap();
    assert_eq!(resp.body_str().unwrap(), "GET /m ");
    c.disconnect();
    // Without a client certificate the server refuses the connection. In TLS 1.3 the
    // client finishes its handshake first and hears the server's alert on its first
    // read: a typed TLS error either way.
    let mut c = builder(ca.client_config()).build(&url).unwrap();
    match c.send(&w.get("/m").finish().unwrap(), &mut r) {
        Err(Error::Tls { error: e, .. }) => {
            assert_eq!(e.kind(), TlsErrorKind::AlertReceived, "{e:?}")
        }
        // The server's RST can overtake its alert.
        Err(Error::Io { error: e, .. }) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
        other => panic!("{other:?}"),
    }
    h.join().unwrap();
    assert_eq!(seen.per_connection(), [1]);
}

#[test]
fn certificate_failures_are_typed() {
    let ca = Ca::new("test CA");
    let other = Ca::new("other CA");
    // Untrusted CA.
    let (port, _, h) = serve(ca.server(&["localhost"]).server_config(), 1);
    let url = format!("https://localhost:{port}");
    assert_eq!(
        tls_kind(builder(other.client_config()).connect(&url)),
        TlsErrorKind::UnknownIssuer
    );
    h.join().unwrap();
    // Wrong host name: the certificate is for another name.
    let (port, _, h) = serve(ca.server(&["exchange.test"]).server_config(), 1);
    assert_eq!(
        tls_kind(builder(ca.client_config()).connect(&format!("https://localhost:{port}"))),
        TlsErrorKind::NameMismatch
    );
    h.join().unwrap();
    // Expired.
    let (port, _, h) = serve(ca.expired_server(&["localhost"]).server_config(), 1);
    assert_eq!(
        tls_kind(builder(ca.client_config()).connect(&format!("https://localhost:{port}"))),
        TlsErrorKind::Expired
    );
    h.join().unwrap();
    // The explicit no-verification mode accepts any of them (tests only).
    let (port, _, h) = serve(other.server(&["exchange.test"]).server_config(), 1);
    let mut c = builder(TlsConfig::dangerous_no_verify())
        .connect(&format!("https://localhost:{port}"))
        .unwrap();
    let (mut w, mut r) = parts(&c);
    let resp = c.send(&w.get("/nv").finish().unwrap(), &mut r).unwrap();
    assert_eq!(resp.body_str().unwrap(), "GET /nv ");
    let v = c_version(&c);
    assert_eq!(v, Some(rustls::ProtocolVersion::TLSv1_3));
    c.disconnect();
    h.join().unwrap();
}

/// A plain-TCP server that is not TLS at all: the handshake fails typed, no panic.
#[test]
fn http_server_on_https_url_is_a_tls_error() {
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
        .connect(&format!("https://127.0.0.1:{port}"));
    assert_eq!(tls_kind(r), TlsErrorKind::Corrupt);
    h.join().unwrap();
}

fn c_version(c: &Client) -> Option<rustls::ProtocolVersion> {
    c.stream()
        .and_then(|s| s.tls())
        .and_then(|t| t.protocol_version())
}
