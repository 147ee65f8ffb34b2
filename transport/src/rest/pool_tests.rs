//! Pool behaviour against a raw-TCP keep-alive server on 127.0.0.1: LIFO hand-out,
//! return on drop, exhaustion and waiting, bounded reconnect.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use super::*;

/// Serves `HTTP/1.1 200` with the request path as body, a thread per connection;
/// counts accepted connections.
fn server() -> (String, Arc<AtomicUsize>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { return };
            count.fetch_add(1, Ordering::SeqCst);
            thread::spawn(move || {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                loop {
                    while let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        let head = String::from_utf8_lossy(&buf[..end]).into_owned();
                        buf.drain(..end + 4);
                        let path = head.split(' ').nth(1).unwrap_or("").to_owned();
                        let resp = format!(
                            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{path}",
                            path.len()
                        );
                        if s.write_all(resp.as_bytes()).is_err() {
                            return;
                        }
                    }
                    match s.read(&mut chunk) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                }
            });
        }
    });
    (url, accepted)
}

/// The counter once it reached `n` (the accept loop runs in its own thread), or after
/// `within`.
fn settled(c: &AtomicUsize, n: usize, within: Duration) -> usize {
    let deadline = Instant::now() + within;
    while c.load(Ordering::SeqCst) < n && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(5));
    }
    c.load(Ordering::SeqCst)
}

fn config(size: usize) -> PoolConfig {
    PoolConfig {
        size,
        request_buffer: 4096,
        response_buffer: 4096,
        ..PoolConfig::default()
    }
}

#[test]
fn connections_are_preallocated_and_handed_out_lifo() {
    let (url, accepted) = server();
    let pool = ClientPool::new(&format!("{url}/api"), config(3)).unwrap();
    assert_eq!(settled(&accepted, 3, Duration::from_secs(5)), 3);
    assert_eq!(pool.idle(), 3);
    let mut a = pool.acquire().unwrap();
    let b = pool.acquire().unwrap();
    assert_eq!(pool.idle(), 1);
    let resp = a
        .send_with(|w| w.get("/time").query("x", "a b").finish())
        .unwrap();
    assert_eq!(resp.body(), b"/api/time?x=a%20b");
    // The client's request builder through the guard.
    let resp = a.post("/order").json_bytes(b"{}").send().unwrap();
    assert_eq!(resp.body(), b"/api/order");
    let (pa, pb) = (a.local_addr().unwrap(), b.local_addr().unwrap());
    assert_ne!(pa, pb);
    drop(b);
    drop(a);
    assert_eq!(pool.idle(), 3);
    // Last in, first out: `a` was returned last.
    let mut again = pool.acquire().unwrap();
    assert_eq!(again.local_addr().unwrap(), pa);
    assert_eq!(again.get("/b").send().unwrap().body(), b"/api/b");
    drop(again);
    // Reuse opened no connection.
    assert_eq!(settled(&accepted, 4, Duration::from_millis(200)), 3);
}

#[test]
fn exhaustion_and_waiting_for_a_return() {
    let (url, _) = server();
    let pool = ClientPool::new(&url, config(1)).unwrap();
    let g = pool.acquire().unwrap();
    assert!(matches!(pool.try_acquire(), Err(Error::PoolExhausted)));
    let t = Instant::now();
    assert!(matches!(
        pool.acquire_within(Duration::from_millis(50)),
        Err(Error::PoolExhausted)
    ));
    assert!(t.elapsed() >= Duration::from_millis(50));
    thread::scope(|s| {
        s.spawn(|| {
            thread::sleep(Duration::from_millis(50));
            drop(g);
        });
        let mut g2 = pool.acquire_within(Duration::from_secs(10)).unwrap();
        assert_eq!(
            g2.send_with(|w| w.get("/w").finish()).unwrap().body(),
            b"/w"
        );
    });
}

#[test]
fn many_threads_share_the_pool() {
    let (url, accepted) = server();
    let pool = ClientPool::new(&url, config(4)).unwrap();
    thread::scope(|s| {
        for t in 0..8 {
            let pool = &pool;
            s.spawn(move || {
                for i in 0..50 {
                    let mut g = pool.acquire_within(Duration::from_secs(10)).unwrap();
                    let path = format!("/t{t}/{i}");
                    let resp = g.send_with(|w| w.get(&path).finish()).unwrap();
                    assert_eq!(resp.body(), path.as_bytes());
                }
            });
        }
    });
    assert_eq!(pool.idle(), 4);
    assert_eq!(settled(&accepted, 5, Duration::from_millis(200)), 4);
}

#[test]
fn reconnect_at_acquire_is_bounded() {
    // A port with no listener: every connect is refused.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let cfg = PoolConfig {
        connect_now: false,
        reconnect_attempts: 3,
        reconnect_backoff: Duration::from_millis(20),
        ..config(2)
    };
    let pool = ClientPool::new(&format!("http://127.0.0.1:{port}"), cfg).unwrap();
    let t = Instant::now();
    match pool.acquire() {
        Err(Error::Connect { source, .. }) => {
            assert_eq!(source.kind(), std::io::ErrorKind::ConnectionRefused)
        }
        other => panic!("{other:?}"),
    }
    // Three attempts: waits of 20 and 40 ms between them.
    assert!(
        t.elapsed() >= Duration::from_millis(60),
        "{:?}",
        t.elapsed()
    );
    assert_eq!(pool.idle(), 2, "the connection went back to the pool");
}

#[test]
fn a_closed_connection_is_reconnected_at_acquire() {
    let (url, accepted) = server();
    let pool = ClientPool::new(&url, config(1)).unwrap();
    let mut g = pool.acquire().unwrap();
    assert_eq!(g.send_with(|w| w.get("/a").finish()).unwrap().body(), b"/a");
    g.disconnect();
    drop(g);
    let mut g = pool.acquire().unwrap();
    assert!(g.is_connected());
    assert_eq!(g.stats().connects, 2);
    assert_eq!(g.send_with(|w| w.get("/b").finish()).unwrap().body(), b"/b");
    assert_eq!(settled(&accepted, 2, Duration::from_secs(5)), 2);
}
