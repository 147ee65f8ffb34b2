//! tickwire's async REST client and pool (`tickwire::tokio::rest`) over https://
//! against nginx with TLS (Debian's package, OpenSSL; started by the harness on
//! 127.0.0.1 with a certificate rcgen made for this run): keep-alive over TLS counted
//! from nginx's access log with an 8 MiB body, chunked and close-delimited bodies, the
//! idle probe seeing nginx's close of an idle TLS connection, the pool from concurrent
//! tasks, and a wrong host name and an untrusted CA as typed errors. On current_thread
//! and multi-thread runtimes.

use std::sync::Arc;
use std::time::Duration;

use tickwire::tls::{TlsConfig, TlsErrorKind, rustls};
use tickwire::tokio::rest::{Client, ClientPool, Error, PoolConfig, RequestWriter, ResponseReader};
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

async fn keep_alive_counted_by_nginx(test: &str) {
    let Some((n, ca)) = start(test) else { return };
    let (mut c, mut w, mut r) = client(ca.client_config(), &n.https_url("localhost", ""));
    for i in 0..12 {
        if i % 4 == 3 {
            let resp = c
                .send(&w.get("/large.bin").finish().unwrap(), &mut r)
                .await
                .unwrap();
            let body = resp.body();
            assert_eq!(body.len(), Nginx::LARGE_LEN);
            assert!(body.iter().enumerate().all(|(i, b)| *b == pattern(i)));
        } else {
            let resp = c
                .send(&w.get("/small.txt").finish().unwrap(), &mut r)
                .await
                .unwrap();
            assert_eq!(resp.status(), 200);
            assert_eq!(resp.body_str().unwrap(), Nginx::SMALL);
            assert!(resp.keep_alive());
        }
    }
    let version = c.tls().and_then(|t| t.protocol_version());
    assert_eq!(version, Some(rustls::ProtocolVersion::TLSv1_3));
    assert_eq!(c.stats().connects, 1);
    let log = n.access_log_of(12);
    assert_eq!(log.len(), 12, "{log:?}");
    assert!(
        log.iter().all(|e| e.connection == log[0].connection),
        "{log:?}"
    );
    assert_eq!(
        log.iter().map(|e| e.request).collect::<Vec<_>>(),
        (1..=12).collect::<Vec<_>>()
    );

    // Chunked, then a close-delimited body (nginx's close_notify, then FIN).
    let resp = c
        .send(&w.get("/chunked/text.txt").finish().unwrap(), &mut r)
        .await
        .unwrap();
    assert_eq!(resp.header_str("transfer-encoding"), Some("chunked"));
    assert_eq!(
        resp.body_str().unwrap(),
        Nginx::text().replace("MARK", "mark")
    );
    let resp = c
        .send(
            &w.get("/close-delimited/text.txt").finish().unwrap(),
            &mut r,
        )
        .await
        .unwrap();
    assert!(!resp.keep_alive());
    assert_eq!(
        resp.body_str().unwrap(),
        Nginx::text().replace("MARK", "mark")
    );
    assert!(!c.is_connected());
}

async fn stale_connection_is_replaced(test: &str) {
    let Some((n, ca)) = start(test) else { return };
    let (mut c, mut w, mut r) = client(ca.client_config(), &n.https_url("localhost", ""));
    let path = "/short-keepalive/small.txt";
    let resp = c
        .send(&w.get(path).finish().unwrap(), &mut r)
        .await
        .unwrap();
    assert_eq!(resp.body(), Nginx::SMALL.as_bytes());
    // nginx closes the idle TLS connection after 1 s; the idle probe sees it and
    // connects afresh before sending the POST, once its FIN has arrived (an event: the
    // probe runs before every reuse by default).
    net_events::wait_peer_closed(c.local_addr().unwrap(), c.peer_addr().unwrap());
    let resp = c
        .send(&w.post(path).body(b"x").finish().unwrap(), &mut r)
        .await
        .unwrap();
    assert_eq!(resp.status(), 405);
    let s = c.stats();
    assert_eq!((s.connects, s.retries, s.stale_probed), (2, 0, 1), "{s:?}");
    assert_eq!(n.access_log_of(2).len(), 2);
}

async fn pool_from_tasks_and_typed_errors(test: &str) {
    let Some((n, ca)) = start(test) else { return };
    let builder = Client::builder()
        .tls(ca.client_config())
        .read_timeout(Some(Duration::from_secs(20)));
    let pool = ClientPool::with_builder(
        builder.clone(),
        &n.https_url("localhost", ""),
        PoolConfig {
            size: 3,
            request_buffer: 4096,
            response_buffer: 64 << 10,
            ..PoolConfig::default()
        },
    )
    .await
    .unwrap();
    let pool = Arc::new(pool);
    let tasks: Vec<_> = (0..3)
        .map(|_| {
            let pool = pool.clone();
            tokio::spawn(async move {
                for _ in 0..5 {
                    let mut g = pool.acquire().await.unwrap();
                    let resp = g.send_with(|w| w.get("/small.txt").finish()).await.unwrap();
                    assert_eq!(resp.body_str().unwrap(), Nginx::SMALL);
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    let log = n.access_log_of(15);
    assert_eq!(log.len(), 15, "{log:?}");
    let mut conns: Vec<_> = log.iter().map(|e| e.connection).collect();
    conns.sort_unstable();
    conns.dedup();
    assert!(conns.len() <= 3, "{log:?}");

    let kind = |r: Result<Client, Error>| match r {
        Err(Error::Tls { error: e, .. }) => e.kind(),
        other => panic!("not a TLS error: {other:?}"),
    };
    // The certificate names `localhost`, not the IP address.
    let wrong_host = Client::builder()
        .tls(ca.client_config())
        .connect(&n.https_url("127.0.0.1", ""))
        .await;
    assert_eq!(kind(wrong_host), TlsErrorKind::NameMismatch);
    let untrusted = Client::builder()
        .tls(Ca::new("some other CA").client_config())
        .connect(&n.https_url("localhost", ""))
        .await;
    assert_eq!(kind(untrusted), TlsErrorKind::UnknownIssuer);
    // The compiled-in Mozilla roots do not know this CA either.
    let default_roots = Client::connect(&n.https_url("localhost", "")).await;
    assert_eq!(kind(default_roots), TlsErrorKind::UnknownIssuer);
}

macro_rules! on_both_runtimes {
    ($($name:ident),* $(,)?) => {
        mod current_thread {
            $(#[tokio::test(flavor = "current_thread")]
            async fn $name() {
                super::$name(concat!(stringify!($name), "_current_thread")).await
            })*
        }
        mod multi_thread {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                let name = concat!(stringify!($name), "_multi_thread");
                // Spawned, so the future must be `Send`.
                tokio::spawn(super::$name(name)).await.unwrap()
            })*
        }
    };
}

on_both_runtimes!(
    keep_alive_counted_by_nginx,
    stale_connection_is_replaced,
    pool_from_tasks_and_typed_errors,
);
