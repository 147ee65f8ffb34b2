//! The futures-io REST client on smol and on nexus-async-rt against the crate's
//! stand-in server and scripted servers on 127.0.0.1: methods and bodies, keep-alive
//! reuse, a server that closes an idle connection (the stale check reconnects), a read
//! timeout on the executor's timer, and a dropped `send` future closing the connection.
#![cfg(all(feature = "futures-io", unix))]

mod nexus_util;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::time::Duration;

use nexus_util::{NexusConnector, NexusTimer};
use tickwire::futures_io::Timer;
use tickwire::futures_io::rest::{Client, ClientBuilder, Connect, Error};

/// GET, POST with JSON, DELETE with a query, HEAD; all on one connection.
async fn methods_on_one_connection<C: Connect + Clone, Tm: Timer>(mut c: Client<C, Tm>) {
    let resp = c
        .get("/time")
        .query("symbol", "BTCUSDT")
        .send()
        .await
        .unwrap();
    assert_eq!(
        (resp.status(), resp.body_str().unwrap()),
        (200, "GET /api/v3/time")
    );
    let resp = c
        .post("/order")
        .header("X-MBX-APIKEY", "key")
        .json_bytes(br#"{"qty":"0.01"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.body_str().unwrap(), "POST /api/v3/order");
    let resp = c.delete("/order").query_u64("id", 7).send().await.unwrap();
    assert_eq!(resp.body_str().unwrap(), "DELETE /api/v3/order");
    for i in 0..20 {
        let resp = c.get("/depth").query_u64("i", i).send().await.unwrap();
        assert_eq!(resp.status(), 200);
    }
    let s = c.stats();
    assert_eq!((s.connects, s.requests, s.retries), (1, 23, 0));
    c.close().await;
    assert!(!c.is_connected());
}

#[test]
fn smol_methods_and_keep_alive() {
    let server = tickwire::rest::doc_server();
    smol::block_on(async {
        let c = Client::connect(&format!("http://{server}/api/v3"))
            .await
            .unwrap();
        methods_on_one_connection(c).await;
    });
}

#[test]
fn nexus_methods_and_keep_alive() {
    let server = tickwire::rest::doc_server();
    nexus_util::block_on(async move {
        let c = ClientBuilder::new()
            .connector(NexusConnector)
            .timer::<NexusTimer>()
            .read_timeout(None)
            .write_timeout(None)
            .connect(&format!("http://{server}/api/v3"))
            .await
            .unwrap();
        methods_on_one_connection(c).await;
    });
}

/// A scripted HTTP/1.1 server: for each connection, answers `answers` requests with
/// `200 ok` (keep-alive), then closes it (after `hold` without answering the next,
/// when set); accepts `conns` connections.
fn scripted(
    conns: usize,
    answers: usize,
    hold: Option<Duration>,
) -> (SocketAddr, std::thread::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let h = std::thread::spawn(move || {
        for _ in 0..conns {
            let (mut s, _) = listener.accept().unwrap();
            s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
            for _ in 0..answers {
                let mut head = Vec::new();
                let mut b = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    if s.read(&mut b).unwrap_or(0) == 0 {
                        return;
                    }
                    head.push(b[0]);
                }
                s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                    .unwrap();
            }
            if let Some(d) = hold {
                std::thread::sleep(d);
            }
            // Closing: the client sees the FIN on its next reuse (the stale check).
            drop(s);
        }
    });
    (addr, h)
}

/// The server closes the connection after one answer: the next request's stale check
/// sees the FIN and the request goes on a new connection (no error, no retry).
#[test]
fn smol_stale_connection_is_replaced() {
    let (addr, h) = scripted(2, 1, None);
    smol::block_on(async {
        let mut c = Client::connect(&format!("http://{addr}")).await.unwrap();
        assert_eq!(c.get("/a").send().await.unwrap().body(), b"ok");
        // Wait until the server's FIN has arrived (an event, not a time): a probe read
        // sees it, as the client's own check will.
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        loop {
            let s = c.stream().unwrap().get_ref();
            let mut b = [0u8; 1];
            s.set_nonblocking(true).unwrap();
            if matches!(s.peek(&mut b), Ok(0)) {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "no FIN");
            smol::Timer::after(Duration::from_millis(1)).await;
        }
        assert_eq!(c.get("/b").send().await.unwrap().body(), b"ok");
        let s = c.stats();
        assert_eq!((s.connects, s.stale_probed), (2, 1), "{s:?}");
    });
    h.join().unwrap();
}

/// A read timeout on the executor's timer closes the connection.
fn read_timeout_closes<C: Connect + Clone + 'static, Tm: Timer + 'static>(
    builder: ClientBuilder<C, Tm>,
    run: impl FnOnce(std::pin::Pin<Box<dyn std::future::Future<Output = ()>>>),
) {
    // One connection that never answers (held 1 s, then closed).
    let (addr, h) = scripted(1, 0, Some(Duration::from_secs(1)));
    run(Box::pin(async move {
        let mut c = builder
            .read_timeout(Some(Duration::from_millis(100)))
            .build(&format!("http://{addr}"))
            .unwrap();
        match c.get("/slow").send().await {
            Err(Error::ReadTimeout { .. }) => {}
            other => panic!("{:?}", other.map(|r| r.status())),
        }
        assert!(!c.is_connected());
        c.disconnect();
    }));
    h.join().unwrap();
}

#[test]
fn smol_read_timeout() {
    read_timeout_closes(ClientBuilder::new(), smol::block_on);
}

#[test]
fn nexus_read_timeout() {
    read_timeout_closes(
        ClientBuilder::new()
            .connector(NexusConnector)
            .timer::<NexusTimer>(),
        |f| {
            nexus_util::block_on(async move {
                f.await;
                // nexus's timer wheel keeps its entries until their deadlines.
                nexus_util::sleep(Duration::from_millis(200)).await;
            })
        },
    );
}

/// A `send` future dropped while the response is awaited closes the connection: the
/// next request connects again and gets its own answer.
#[test]
fn smol_dropped_send_closes_the_connection() {
    use smol::future::FutureExt as _;
    let server = tickwire::rest::doc_server();
    let (addr, h) = scripted(1, 0, Some(Duration::from_millis(300)));
    smol::block_on(async {
        let mut c = Client::connect(&format!("http://{addr}")).await.unwrap();
        let lost = async {
            let _ = c.get("/never").send().await;
            true
        }
        .or(async {
            smol::Timer::after(Duration::from_millis(50)).await;
            false
        })
        .await;
        assert!(!lost, "the timer won");
        assert!(!c.is_connected());
        // A client of the stand-in server: the same API, a connection of its own.
        let mut ok = Client::connect(&format!("http://{server}")).await.unwrap();
        assert_eq!(ok.get("/x").send().await.unwrap().status(), 200);
    });
    h.join().unwrap();
}
