//! tickwire's REST client against nginx (Debian's package, started by the harness on
//! 127.0.0.1): keep-alive counted from nginx's own access log, chunked and
//! close-delimited bodies, `Connection: close`, HEAD, large bodies, stale connections.

use std::time::Duration;

use tickwire::rest::{Client, ClientPool, PoolConfig, RequestWriter, ResponseReader};
use tickwire_conformance::{Nginx, pattern, skip_or_fail};

type Reader = ResponseReader<Vec<u8>>;

fn setup(test: &str) -> Option<(Nginx, Client, RequestWriter<Vec<u8>>, Reader)> {
    let n = skip_or_fail(test, Nginx::start())?;
    let c = Client::builder()
        .read_timeout(Some(Duration::from_secs(20)))
        .build(&n.url(""))
        .unwrap();
    let w = RequestWriter::new(vec![0; 16 << 10], c.host_header()).unwrap();
    let r = ResponseReader::new(vec![0; 9 << 20]);
    Some((n, c, w, r))
}

fn text_served() -> String {
    Nginx::text().replace("MARK", "mark")
}

#[test]
fn keep_alive_one_connection_counted_by_nginx() {
    let Some((n, mut c, mut w, mut r)) = setup("keep_alive_one_connection_counted_by_nginx") else {
        return;
    };
    for i in 0..20 {
        if i % 5 == 4 {
            let resp = c
                .send(&w.get("/large.bin").finish().unwrap(), &mut r)
                .unwrap();
            assert_eq!(resp.body().len(), Nginx::LARGE_LEN);
        } else {
            let resp = c
                .send(&w.get("/small.txt").finish().unwrap(), &mut r)
                .unwrap();
            assert_eq!(resp.status(), 200);
            assert_eq!(resp.body_str().unwrap(), Nginx::SMALL);
            assert!(resp.keep_alive());
        }
    }
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
fn large_static_file_with_content_length() {
    let Some((_n, mut c, mut w, mut r)) = setup("large_static_file_with_content_length") else {
        return;
    };
    let resp = c
        .send(&w.get("/large.bin").finish().unwrap(), &mut r)
        .unwrap();
    assert_eq!(
        resp.header_str("content-length"),
        Some(Nginx::LARGE_LEN.to_string().as_str())
    );
    let body = resp.body();
    assert_eq!(body.len(), Nginx::LARGE_LEN);
    assert!(body.iter().enumerate().all(|(i, b)| *b == pattern(i)));
    // HEAD: the length, no body, and the connection stays usable.
    let resp = c
        .send(&w.head("/large.bin").finish().unwrap(), &mut r)
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(
        resp.header_str("Content-Length"),
        Some(Nginx::LARGE_LEN.to_string().as_str())
    );
    assert!(resp.body().is_empty());
    let resp = c
        .send(&w.get("/missing").finish().unwrap(), &mut r)
        .unwrap();
    assert_eq!(resp.status(), 404);
    assert!(resp.body_str().unwrap().contains("404 Not Found"));
    let resp = c
        .send(&w.get("/small.txt").finish().unwrap(), &mut r)
        .unwrap();
    assert_eq!(resp.body(), Nginx::SMALL.as_bytes());
    assert_eq!(c.stats().connects, 1);
}

#[test]
fn chunked_response_then_reuse() {
    let Some((n, mut c, mut w, mut r)) = setup("chunked_response_then_reuse") else {
        return;
    };
    for _ in 0..3 {
        let resp = c
            .send(&w.get("/chunked/text.txt").finish().unwrap(), &mut r)
            .unwrap();
        assert_eq!(resp.status(), 200);
        assert_eq!(resp.header_str("transfer-encoding"), Some("chunked"));
        assert_eq!(resp.header("content-length"), None);
        assert!(resp.keep_alive());
        assert_eq!(resp.body_str().unwrap(), text_served());
    }
    assert_eq!(c.stats().connects, 1);
    let log = n.access_log_of(3);
    assert!(
        log.iter().all(|e| e.connection == log[0].connection),
        "{log:?}"
    );
}

#[test]
fn close_delimited_response_ends_the_connection() {
    let Some((n, mut c, mut w, mut r)) = setup("close_delimited_response_ends_the_connection")
    else {
        return;
    };
    for _ in 0..2 {
        let resp = c
            .send(
                &w.get("/close-delimited/text.txt").finish().unwrap(),
                &mut r,
            )
            .unwrap();
        assert_eq!(resp.status(), 200);
        assert_eq!(resp.header("content-length"), None);
        assert_eq!(resp.header("transfer-encoding"), None);
        assert!(!resp.keep_alive());
        assert_eq!(resp.body_str().unwrap(), text_served());
        assert!(!c.is_connected());
    }
    assert_eq!(c.stats().connects, 2);
    let log = n.access_log_of(2);
    assert_ne!(log[0].connection, log[1].connection, "{log:?}");
}

#[test]
fn connection_close_header_is_honoured() {
    let Some((n, mut c, mut w, mut r)) = setup("connection_close_header_is_honoured") else {
        return;
    };
    let resp = c
        .send(&w.get("/no-keepalive/small.txt").finish().unwrap(), &mut r)
        .unwrap();
    assert_eq!(resp.header_str("connection"), Some("close"));
    assert!(!resp.keep_alive());
    assert_eq!(resp.body(), Nginx::SMALL.as_bytes());
    assert!(!c.is_connected());
    let resp = c
        .send(&w.get("/small.txt").finish().unwrap(), &mut r)
        .unwrap();
    assert_eq!(resp.body(), Nginx::SMALL.as_bytes());
    assert_eq!(c.stats().connects, 2);
    let log = n.access_log_of(2);
    assert_ne!(log[0].connection, log[1].connection, "{log:?}");
}

#[test]
fn stale_keep_alive_connection_is_replaced() {
    let Some((n, mut c, mut w, mut r)) = setup("stale_keep_alive_connection_is_replaced") else {
        return;
    };
    let get = |c: &mut Client, w: &mut RequestWriter<Vec<u8>>, r: &mut Reader| {
        let resp = c
            .send(&w.get("/short-keepalive/small.txt").finish().unwrap(), r)
            .unwrap();
        assert_eq!(resp.body(), Nginx::SMALL.as_bytes());
    };
    get(&mut c, &mut w, &mut r);
    // nginx closes the idle connection after 1 s; the GET meets the closed connection
    // and is sent again on a fresh one.
    std::thread::sleep(Duration::from_millis(1600));
    get(&mut c, &mut w, &mut r);
    let s = c.stats();
    assert_eq!((s.connects, s.retries), (2, 1), "{s:?}");
    // A POST after the same idle time: the probe sees the close first and reconnects
    // before sending (nginx answers 405 for POST to a static file: still a response).
    std::thread::sleep(Duration::from_millis(1600));
    let resp = c
        .send(
            &w.post("/short-keepalive/small.txt")
                .body(b"x")
                .finish()
                .unwrap(),
            &mut r,
        )
        .unwrap();
    assert_eq!(resp.status(), 405);
    let s = c.stats();
    assert_eq!((s.connects, s.retries, s.stale_probed), (3, 1, 1), "{s:?}");
    let log = n.access_log_of(3);
    assert_eq!(log.len(), 3, "{log:?}");
}

#[test]
fn pool_uses_exactly_its_connections() {
    let Some(n) = skip_or_fail("pool_uses_exactly_its_connections", Nginx::start()) else {
        return;
    };
    let cfg = PoolConfig {
        size: 3,
        request_buffer: 4096,
        response_buffer: 64 << 10,
        ..PoolConfig::default()
    };
    let pool = ClientPool::new(&n.url(""), cfg).unwrap();
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..25 {
                    let mut g = pool.acquire_timeout(Duration::from_secs(20)).unwrap();
                    let resp = g.send_with(|w| w.get("/small.txt").finish()).unwrap();
                    assert_eq!(resp.body(), Nginx::SMALL.as_bytes());
                }
            });
        }
    });
    // nginx saw 100 requests on at most the pool's 3 connections.
    let log = n.access_log_of(100);
    assert_eq!(log.len(), 100);
    let mut conns: Vec<u64> = log.iter().map(|e| e.connection).collect();
    conns.sort_unstable();
    conns.dedup();
    assert!(conns.len() <= 3, "{conns:?}");
}
