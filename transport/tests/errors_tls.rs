//! What TLS errors say: a certificate problem in words (a CA certificate used as the
//! server's own, expired, wrong name, unknown issuer) with the setting to change, and
//! "TLS" said once however the error is printed. Servers are tickwire's own (rustls),
//! certificates made by rcgen at test time.

#![cfg(feature = "tls")]

mod tls_util;

use std::thread;
use std::time::Duration;

use tickwire::{rest, ws};

#[test]
fn a_tls_error_says_tls_once() {
    let ca = tls_util::Ca::new("test CA");
    let stranger = tls_util::Ca::new("stranger CA");
    let e = tls_failure(
        &ca.server(&["localhost"]),
        stranger.client_config(),
        "localhost",
    );
    let s = format!("{e:#}");
    assert_eq!(s.matches("TLS").count(), 1, "{s}");
    let e = rest_tls_failure(&ca.server(&["localhost"]), stranger.client_config());
    let s = format!("{e:#}");
    assert!(!s.contains("TLS error: TLS"), "{s}");
    assert_eq!(s.matches("TLS:").count(), 1, "{s}");
}

/// A TLS WebSocket server with `leaf` on 127.0.0.1 accepting one connection (whose
/// TLS handshake is expected to fail): its port and thread.
fn one_tls_server(leaf: &tls_util::Leaf) -> (u16, thread::JoinHandle<()>) {
    let mut server = ws::Server::builder()
        .tls(leaf.server_config())
        .handshake_timeout(Duration::from_secs(20))
        .bind("127.0.0.1:0")
        .unwrap();
    let port = server.local_addr().unwrap().port();
    let h = thread::spawn(move || {
        let _ = server.accept().and_then(|mut c| c.handshake().map(|_| ()));
    });
    (port, h)
}

/// The client's error connecting to such a server as `host` with `config`.
fn tls_failure(leaf: &tls_util::Leaf, config: tickwire::tls::TlsConfig, host: &str) -> ws::Error {
    let (port, h) = one_tls_server(leaf);
    let e = ws::Client::builder()
        .tls(config)
        .handshake_timeout(Duration::from_secs(20))
        .connect(&format!("wss://{host}:{port}/"))
        .unwrap_err();
    h.join().unwrap();
    e
}

/// The same over `https://` with the REST client (the TLS handshake fails before any
/// HTTP).
fn rest_tls_failure(leaf: &tls_util::Leaf, config: tickwire::tls::TlsConfig) -> rest::Error {
    let (port, h) = one_tls_server(leaf);
    let e = rest::Client::builder()
        .tls(config)
        .connect(&format!("https://localhost:{port}/"))
        .unwrap_err();
    h.join().unwrap();
    e
}

fn text(e: &ws::Error) -> String {
    assert!(matches!(e, ws::Error::Tls(_)), "{e:?}");
    e.to_string()
}

#[test]
fn certificate_errors_say_what_is_wrong_and_what_to_change() {
    let ca = tls_util::Ca::new("test CA");
    // (a) A self-signed CA certificate used as the server's own, trusted as a CA.
    let leaf = tls_util::self_signed_ca_as_leaf(&["localhost"]);
    let e = tls_failure(&leaf, tls_util::trusting(&leaf.cert), "localhost");
    let s = text(&e);
    assert!(s.contains("CA certificate as its own"), "{s}");
    assert!(s.contains("TlsServerConfig::from_pem"), "{s}");
    // (b) Expired.
    let e = tls_failure(
        &ca.expired_server(&["localhost"]),
        ca.client_config(),
        "localhost",
    );
    let s = text(&e);
    assert!(s.contains("certificate expired on 2021-01-01"), "{s}");
    assert!(s.contains("renew the server's certificate"), "{s}");
    // (c) Wrong name: the name asked for and the names the certificate has.
    let e = tls_failure(
        &ca.server(&["exchange.test"]),
        ca.client_config(),
        "localhost",
    );
    let s = text(&e);
    assert!(s.contains("not valid for the name localhost"), "{s}");
    assert!(s.contains("it is valid for exchange.test;"), "{s}");
    // (d) Unknown issuer: the setting that trusts a private CA.
    let stranger = tls_util::Ca::new("stranger CA");
    let e = tls_failure(
        &ca.server(&["localhost"]),
        stranger.client_config(),
        "localhost",
    );
    let s = text(&e);
    assert!(
        s.contains("not signed by a trusted CA (unknown issuer)"),
        "{s}"
    );
    assert!(s.contains("add_ca_pem"), "{s}");
}
