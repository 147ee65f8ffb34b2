//! tickwire's REST client over https:// against nginx with TLS (Debian's package,
//! OpenSSL; started by the harness on 127.0.0.1 with a certificate rcgen made for this
//! run): keep-alive over TLS counted from nginx's access log, chunked and
//! close-delimited bodies over TLS, a stale TLS connection, TLS 1.3 only, and a wrong
//! host name and an untrusted CA as typed errors.

use std::time::Duration;

use tickwire::rest::{Client, Error, RequestWriter, ResponseReader};
use tickwire::tls::{TlsConfig, TlsErrorKind, rustls};
use tickwire_conformance::{Nginx, TlsFiles, pattern, skip_or_fail};
// The test PKI (rcgen) shared with the transport's TLS tests.
#[path = "../../transport/tests/tls_util/mod.rs"]
mod tls_util;

#[path = "../../transport/tests/net_events/mod.rs"]
mod net_events;
use tls_util::Ca;

type Reader = ResponseReader<Vec<u8>>;

/// nginx with TLS whose certificate names `localhost` only, and the CA that signed it.
fn start(test: &str) -> Option<(Nginx, Ca)> {
    let ca = Ca::new("tickwire nginx test CA");
    let leaf = ca.server(&["localhost"]);
    let n = skip_or_fail(
        test,
        Nginx::start_tls(TlsFiles {
            cert_pem: &leaf.cert,
            key_pem: &leaf.key,
        }),
    )?;
    Some((n, ca))
}

/// Client settings that trust `ca` only, TLS 1.3 only.
fn tls13_only(ca: &Ca) -> TlsConfig {
    TlsConfig::builder()
        .system_roots(false)
        .add_ca_pem(ca.pem().as_bytes())
        .unwrap()
        .tls13_only()
        .build()
        .unwrap()
}

fn client(config: TlsConfig, url: &str) -> (Client, RequestWriter<Vec<u8>>, Reader) {
    let c = Client::builder()
        .tls(config)
        .read_timeout(Some(Duration::from_secs(20)))
        .build(url)
        .unwrap();
    let w = RequestWriter::new(vec![0; 16 << 10], c.host_header()).unwrap();
    let r = ResponseReader::new(vec![0; 9 << 20]);
    (c, w, r)
}

fn text_served() -> String {
    Nginx::text().replace("MARK", "mark")
}

fn tls_version(c: &Client) -> Option<rustls::ProtocolVersion> {
    c.stream()
        .and_then(|s| s.tls())
        .and_then(|t| t.protocol_version())
}

#[test]
fn https_keep_alive_counted_by_nginx() {
    let Some((n, ca)) = start("https_keep_alive_counted_by_nginx") else {
        return;
    };
    let (mut c, mut w, mut r) = client(ca.client_config(), &n.https_url("localhost", ""));
    for i in 0..20 {
        if i % 5 == 4 {
            let resp = c
                .send(&w.get("/large.bin").finish().unwrap(), &mut r)
                .unwrap();
            let body = resp.body();
            assert_eq!(body.len(), Nginx::LARGE_LEN);
            assert!(body.iter().enumerate().all(|(i, b)| *b == pattern(i)));
        } else {
            let resp = c
                .send(&w.get("/small.txt").finish().unwrap(), &mut r)
                .unwrap();
            assert_eq!(resp.status(), 200);
            assert_eq!(resp.body_str().unwrap(), Nginx::SMALL);
            assert!(resp.keep_alive());
        }
    }
    // Debian's nginx negotiates TLS 1.3 with a client that offers it.
    assert_eq!(tls_version(&c), Some(rustls::ProtocolVersion::TLSv1_3));
    assert_eq!(c.stats().connects, 1);
    let log = n.access_log_of(20);
    assert_eq!(log.len(), 20, "{log:?}");
    assert!(
        log.iter().all(|e| e.connection == log[0].connection),
        "{log:?}"
    );
    assert_eq!(
        log.iter().map(|e| e.request).collect::<Vec<_>>(),
        (1..=20).collect::<Vec<_>>()
    );
}

#[test]
fn https_chunked_and_close_delimited() {
    let Some((n, ca)) = start("https_chunked_and_close_delimited") else {
        return;
    };
    let (mut c, mut w, mut r) = client(tls13_only(&ca), &n.https_url("localhost", ""));
    for _ in 0..3 {
        let resp = c
            .send(&w.get("/chunked/text.txt").finish().unwrap(), &mut r)
            .unwrap();
        assert_eq!(resp.header_str("transfer-encoding"), Some("chunked"));
        assert!(resp.keep_alive());
        assert_eq!(resp.body_str().unwrap(), text_served());
    }
    assert_eq!(c.stats().connects, 1);
    // The body ends with the connection: nginx's close_notify, then FIN.
    let resp = c
        .send(
            &w.get("/close-delimited/text.txt").finish().unwrap(),
            &mut r,
        )
        .unwrap();
    assert_eq!(resp.header("transfer-encoding"), None);
    assert!(!resp.keep_alive());
    assert_eq!(resp.body_str().unwrap(), text_served());
    assert!(!c.is_connected());
    let resp = c
        .send(&w.head("/large.bin").finish().unwrap(), &mut r)
        .unwrap();
    assert!(resp.body().is_empty());
    assert_eq!(c.stats().connects, 2);
    let log = n.access_log_of(5);
    assert_eq!(log.len(), 5, "{log:?}");
    assert!(log[..4].iter().all(|e| e.connection == log[0].connection));
    assert_ne!(log[4].connection, log[0].connection, "{log:?}");
}

#[test]
fn https_stale_connection_is_replaced() {
    let Some((n, ca)) = start("https_stale_connection_is_replaced") else {
        return;
    };
    let (mut c, mut w, mut r) = client(ca.client_config(), &n.https_url("localhost", ""));
    let path = "/short-keepalive/small.txt";
    let resp = c.send(&w.get(path).finish().unwrap(), &mut r).unwrap();
    assert_eq!(resp.body(), Nginx::SMALL.as_bytes());
    // nginx closes the idle TLS connection after 1 s (close_notify, FIN); the idle
    // probe before the GET reads that and connects afresh before sending. (The retry
    // path over TLS, probe off, is in transport/tests/https_loopback.rs.)
    idle_and_closed((c.local_addr(), c.peer_addr()));
    let resp = c.send(&w.get(path).finish().unwrap(), &mut r).unwrap();
    assert_eq!(resp.body(), Nginx::SMALL.as_bytes());
    let s = c.stats();
    assert_eq!((s.connects, s.retries, s.stale_probed), (2, 0, 1), "{s:?}");
    // A POST after the same idle time: the probe sees the close and reconnects before
    // sending (405: nginx does not take POSTs to static files; still a response).
    idle_and_closed((c.local_addr(), c.peer_addr()));
    let resp = c
        .send(&w.post(path).body(b"x").finish().unwrap(), &mut r)
        .unwrap();
    assert_eq!(resp.status(), 405);
    let s = c.stats();
    assert_eq!((s.connects, s.retries, s.stale_probed), (3, 0, 2), "{s:?}");
    assert_eq!(n.access_log_of(3).len(), 3);
}

#[test]
fn https_wrong_host_and_untrusted_ca_are_typed_errors() {
    let Some((n, ca)) = start("https_wrong_host_and_untrusted_ca_are_typed_errors") else {
        return;
    };
    let kind = |r: Result<Client, Error>| match r {
        Err(Error::Tls { error: e, .. }) => e.kind(),
        other => panic!("not a TLS error: {other:?}"),
    };
    // The certificate names `localhost`, not the IP address.
    let wrong_host = Client::builder()
        .tls(ca.client_config())
        .connect(&n.https_url("127.0.0.1", ""));
    assert_eq!(kind(wrong_host), TlsErrorKind::NameMismatch);
    let other = Ca::new("some other CA");
    let untrusted = Client::builder()
        .tls(other.client_config())
        .connect(&n.https_url("localhost", ""));
    assert_eq!(kind(untrusted), TlsErrorKind::UnknownIssuer);
    // The compiled-in Mozilla roots do not know this CA either.
    let default_roots = Client::connect(&n.https_url("localhost", ""));
    assert_eq!(kind(default_roots), TlsErrorKind::UnknownIssuer);
    // Plain http:// on the TLS port: nginx answers 400 in plain text.
    let port = n.tls_addr().unwrap().port();
    let (mut c, mut w, mut r) = client(ca.client_config(), &format!("http://localhost:{port}"));
    let resp = c
        .send(&w.get("/small.txt").finish().unwrap(), &mut r)
        .unwrap();
    assert_eq!(resp.status(), 400);
    // And the same client settings against the right name work.
    let (mut c, mut w, mut r) = client(ca.client_config(), &n.https_url("localhost", ""));
    let resp = c
        .send(&w.get("/small.txt").finish().unwrap(), &mut r)
        .unwrap();
    assert_eq!(resp.body_str().unwrap(), Nginx::SMALL);
}

/// Wait until nginx has closed the idle connection `(local, remote)` (its FIN arrived:
/// an event) and nothing else: the client's idle probe checks before every reuse.
type Ends = (Option<std::net::SocketAddr>, Option<std::net::SocketAddr>);
fn idle_and_closed((local, remote): Ends) {
    net_events::wait_peer_closed(local.unwrap(), remote.unwrap());
}
