//! `TCP_QUICKACK` stays on with the builders' `quickack(true)`: Linux leaves quick-ACK
//! mode by itself once data flows both ways (the socket turns "ping-pong"), so the
//! connection sets it again after each read that got data. Read back with getsockopt
//! right after the reads of an echo exchange, on the client and on the server, blocking
//! and tokio. Without the re-arm these sockets read back off (the kernel left the mode
//! after the first exchanges).

#![cfg(all(feature = "tokio", target_os = "linux"))]

use std::os::fd::AsFd;
use std::thread;

use socket2::SockRef;
use tickwire::ws::{self, Message};

/// Round trips before each check: enough for the kernel's ping-pong detection.
const ROUNDS: usize = 8;

fn quickack(fd: impl AsFd) -> bool {
    SockRef::from(&fd).tcp_quickack().unwrap()
}

#[test]
fn blocking_connections_keep_quickack_after_reads() {
    let mut srv = ws::ServerBuilder::new()
        .quickack(true)
        .bind("127.0.0.1:0")
        .unwrap();
    let addr = srv.local_addr().unwrap();
    let server = thread::spawn(move || {
        let mut c = srv.accept().unwrap();
        c.handshake().unwrap();
        let mut on_after_reads = 0;
        loop {
            let text = match c.recv() {
                Ok(Some(Message::Text(t))) => t.to_owned(),
                Ok(Some(_)) => continue,
                _ => return on_after_reads,
            };
            if quickack(&c) {
                on_after_reads += 1;
            }
            c.send_text(&text).unwrap();
        }
    });
    let mut c = ws::ClientBuilder::new()
        .quickack(true)
        .connect(&format!("ws://{addr}/"))
        .unwrap();
    for i in 0..ROUNDS {
        let text = format!("tick {i}");
        c.send_text(&text).unwrap();
        assert_eq!(c.recv().unwrap(), Some(Message::Text(&text)));
        assert!(quickack(&c), "client, round {i}");
    }
    c.close(ws::CloseCode::NORMAL, "").unwrap();
    while let Ok(Some(_)) = c.recv() {}
    assert_eq!(
        server.join().unwrap(),
        ROUNDS,
        "server reads with quickack on"
    );
}

#[test]
fn tokio_connections_keep_quickack_after_reads() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut srv = tickwire::tokio::ws::ServerBuilder::new()
            .quickack(true)
            .bind("127.0.0.1:0")
            .await
            .unwrap();
        let addr = srv.local_addr().unwrap();
        let server = async move {
            let mut c = srv.accept().await.unwrap();
            let mut on_after_reads = 0;
            loop {
                let text = match c.recv().await {
                    Ok(Some(Message::Text(t))) => t.to_owned(),
                    Ok(Some(_)) => continue,
                    _ => return on_after_reads,
                };
                if quickack(&c) {
                    on_after_reads += 1;
                }
                c.send_text(&text).await.unwrap();
            }
        };
        let client = async {
            let mut c = tickwire::tokio::ws::ClientBuilder::new()
                .quickack(true)
                .connect(&format!("ws://{addr}/"))
                .await
                .unwrap();
            for i in 0..ROUNDS {
                let text = format!("tick {i}");
                c.send_text(&text).await.unwrap();
                assert_eq!(c.recv().await.unwrap(), Some(Message::Text(&text)));
                assert!(quickack(&c), "client, round {i}");
            }
            c.close(ws::CloseCode::NORMAL, "").await.unwrap();
            while let Ok(Some(_)) = c.recv().await {}
        };
        let (on_after_reads, ()) = tokio::join!(server, client);
        assert_eq!(on_after_reads, ROUNDS, "server reads with quickack on");
    });
}
