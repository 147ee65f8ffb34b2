//! What TLS errors say: a certificate problem in words (a CA certificate used as the
//! server's own, expired, wrong name, unknown issuer) with the setting to change, the
//! URL it happened on (blocking and tokio clients), a server's TLS handshake failure
//! with the client's address, and "TLS" said once however the error is printed.
//! Servers are tickwire's own (rustls), certificates made by rcgen at test time.

#![cfg(feature = "tls")]

mod tls_util;

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use tickwire::tls::TlsConfig;
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

/// How a test connects: `connect(url, config)` is the client's error.
type Connect = fn(&str, TlsConfig) -> ws::Error;

/// The blocking client's error connecting to `url`.
fn blocking(url: &str, config: TlsConfig) -> ws::Error {
    ws::Client::builder()
        .tls(config)
        .handshake_timeout(Duration::from_secs(20))
        .connect(url)
        .map(|_| ())
        .unwrap_err()
}

/// The client's error connecting to such a server as `host` with `config`, and the
/// URL it connected to.
fn tls_failure_with(
    connect: Connect,
    leaf: &tls_util::Leaf,
    config: TlsConfig,
    host: &str,
) -> (ws::Error, String) {
    let (port, h) = one_tls_server(leaf);
    let url = format!("wss://{host}:{port}/feed?x=1");
    let e = connect(&url, config);
    h.join().unwrap();
    (e, url)
}

/// The blocking client's error connecting to such a server as `host` with `config`.
fn tls_failure(leaf: &tls_util::Leaf, config: TlsConfig, host: &str) -> ws::Error {
    tls_failure_with(blocking, leaf, config, host).0
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

/// A certificate problem: the server's certificate (made with the test CA), what the
/// client trusts, and what the error says (what is wrong, what to change).
struct CertCase {
    leaf: fn(&tls_util::Ca) -> tls_util::Leaf,
    trust: fn(&tls_util::Ca, &tls_util::Leaf) -> TlsConfig,
    says: &'static [&'static str],
}

/// The name every client asks for.
const HOST: &str = "localhost";

const CERT_CASES: &[CertCase] = &[
    // A self-signed CA certificate used as the server's own, trusted as a CA.
    CertCase {
        leaf: |_| tls_util::self_signed_ca_as_leaf(&[HOST]),
        trust: |_, leaf| tls_util::trusting(&leaf.cert),
        says: &["CA certificate as its own", "TlsServerConfig::from_pem"],
    },
    CertCase {
        leaf: |ca| ca.expired_server(&[HOST]),
        trust: |ca, _| ca.client_config(),
        says: &[
            "certificate expired on 2021-01-01",
            "renew the server's certificate",
        ],
    },
    // Wrong name: the name asked for and the names the certificate has.
    CertCase {
        leaf: |ca| ca.server(&["exchange.test"]),
        trust: |ca, _| ca.client_config(),
        says: &[
            "not valid for the name localhost",
            "it is valid for exchange.test;",
        ],
    },
    // Unknown issuer: the setting that trusts a private CA.
    CertCase {
        leaf: |ca| ca.server(&[HOST]),
        trust: |_, _| tls_util::Ca::new("stranger CA").client_config(),
        says: &["not signed by a trusted CA (unknown issuer)", "add_ca_pem"],
    },
];

/// Every certificate case through `connect`: a TLS error that names the URL once,
/// then says what is wrong and what to change.
fn certificate_cases(connect: Connect) {
    let ca = tls_util::Ca::new("test CA");
    for case in CERT_CASES {
        let leaf = (case.leaf)(&ca);
        let config = (case.trust)(&ca, &leaf);
        let (e, url) = tls_failure_with(connect, &leaf, config, HOST);
        assert!(matches!(e, ws::Error::Tls { .. }), "{e:?}");
        let s = e.to_string();
        let named = format!("{url}: ");
        assert!(s.starts_with(&named), "{named:?} does not start {s:?}");
        assert_eq!(s.matches(&url).count(), 1, "{s}");
        for says in case.says {
            assert!(s.contains(says), "{says:?} not in {s:?}");
        }
    }
}

#[test]
fn certificate_errors_say_what_is_wrong_and_what_to_change() {
    certificate_cases(blocking);
}

/// A client that sends bytes which are not a TLS ClientHello to `server` and holds
/// the connection until the test is done: its own address.
fn garbage_client(server: SocketAddr) -> (SocketAddr, mpsc::Sender<()>, thread::JoinHandle<()>) {
    let mut s = TcpStream::connect(server).unwrap();
    let local = s.local_addr().unwrap();
    s.write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .unwrap();
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let h = thread::spawn(move || {
        let _ = done_rx.recv();
        drop(s);
    });
    (local, done_tx, h)
}

/// A server's TLS handshake error names the client's address once.
fn check_server_tls_error(e: &ws::Error, client: SocketAddr) {
    assert!(matches!(e, ws::Error::Tls { .. }), "{e:?}");
    let s = e.to_string();
    let named = format!("client {client}: ");
    assert!(s.starts_with(&named), "{named:?} does not start {s:?}");
    assert_eq!(s.matches(&client.to_string()).count(), 1, "{s}");
}

#[test]
fn server_tls_errors_name_the_client() {
    let ca = tls_util::Ca::new("test CA");
    let mut server = ws::Server::builder()
        .tls(ca.server(&[HOST]).server_config())
        .handshake_timeout(Duration::from_secs(20))
        .bind("127.0.0.1:0")
        .unwrap();
    let (client, done, h) = garbage_client(server.local_addr().unwrap());
    let e = server.accept().unwrap().handshake().unwrap_err();
    check_server_tls_error(&e, client);
    done.send(()).unwrap();
    h.join().unwrap();
}

#[cfg(all(feature = "tokio", unix))]
mod on_tokio {
    use super::*;
    use tickwire::tokio::ws as tws;

    /// The tokio client's error connecting to `url` (on a runtime of its own).
    fn tokio_client(url: &str, config: TlsConfig) -> ws::Error {
        let builder = tws::Client::builder()
            .tls(config)
            .handshake_timeout(Duration::from_secs(20));
        let rt = ::tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(builder.connect(url)).map(|_| ()).unwrap_err()
    }

    #[test]
    fn certificate_errors_say_what_is_wrong_and_what_to_change() {
        certificate_cases(tokio_client);
    }

    #[::tokio::test(flavor = "current_thread")]
    async fn server_tls_errors_name_the_client() {
        let ca = tls_util::Ca::new("test CA");
        let mut server = tws::Server::builder()
            .tls(ca.server(&[HOST]).server_config())
            .handshake_timeout(Duration::from_secs(20))
            .bind("127.0.0.1:0")
            .await
            .unwrap();
        let (client, done, h) = garbage_client(server.local_addr().unwrap());
        let mut conn = server.accept().await.unwrap();
        let e = conn.handshake().await.unwrap_err();
        check_server_tls_error(&e, client);
        done.send(()).unwrap();
        h.join().unwrap();
    }
}
