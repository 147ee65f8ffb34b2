//! Tokio server connections start with small buffers and grow on demand, as the blocking
//! server's do (tests/buffer_growth.rs; the same `ws::ServerConnection` underneath): an
//! accepted, idle connection holds 4 KiB read and write buffers; a message of exactly
//! the message limit is received after growth, whole and fragmented, and one byte more
//! fails with close 1009; the write side grows for a reply bigger than its initial
//! buffer, up to the write buffer size, and a bigger message is refused with
//! `Error::MessageTooLarge`; a `recv` that finds the connection idle gives the growth
//! back.

#![cfg(feature = "tokio")]

mod ws_util;

use std::future::Future;
use std::sync::mpsc;
use std::thread;

use tickwire::tokio::ws::{Server, ServerBuilder, ServerConnection};
use tickwire::ws::{Client, Error, Message};
use ws_util::pattern;

/// The default initial size.
const INITIAL: usize = 4096;

/// A tokio server (current-thread runtime on its own thread) with `builder`'s settings
/// running `each` on every accepted connection, one after another.
fn serve<F, Fut>(builder: ServerBuilder, conns: usize, each: F) -> (String, thread::JoinHandle<()>)
where
    F: Fn(ServerConnection) -> Fut + Send + 'static,
    Fut: Future<Output = ()>,
{
    let (url_tx, url_rx) = mpsc::channel();
    let t = thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let mut server = builder.bind("127.0.0.1:0").await.unwrap();
            url_tx
                .send(format!("ws://{}/", server.local_addr().unwrap()))
                .unwrap();
            for _ in 0..conns {
                each(server.accept().await.unwrap()).await;
            }
        });
    });
    (url_rx.recv().unwrap(), t)
}

/// Poll `recv` once: on a connection with nothing to read it finds it idle (and gives
/// grown buffers back); `recv` is cancellation-safe.
async fn poll_recv_once(c: &mut ServerConnection) {
    tokio::select! {
        biased;
        r = c.recv() => panic!("nothing was sent: {:?}", r.map(|m| m.map(|m| m.payload().len()))),
        () = std::future::ready(()) => {}
    }
}

#[test]
fn accepted_and_idle_connections_hold_small_buffers() {
    const BIG: usize = 200_000;
    let (tx, rx) = mpsc::channel();
    let (url, server) = serve(Server::builder(), 3, move |mut c| {
        let tx = tx.clone();
        async move {
            let accepted = c.buffer_sizes();
            c.handshake().await.unwrap();
            let handshaken = c.buffer_sizes();
            let echoed = match c.recv().await.unwrap() {
                Some(Message::Binary(b)) => b.to_vec(),
                other => panic!("{other:?}"),
            };
            let grown_read = c.buffer_sizes();
            c.send_binary(&echoed).await.unwrap();
            let grown = c.buffer_sizes();
            poll_recv_once(&mut c).await;
            let idle = c.buffer_sizes();
            tx.send([accepted, handshaken, grown_read, grown, idle])
                .unwrap();
            assert!(matches!(c.recv().await, Ok(Some(Message::Close(_)))));
            while let Ok(Some(_)) = c.recv().await {}
        }
    });
    for _ in 0..3 {
        let mut c = Client::connect(&url).unwrap();
        c.send_binary(&pattern(BIG)).unwrap();
        match c.recv().unwrap() {
            Some(Message::Binary(b)) => assert!(b == pattern(BIG).as_slice(), "echo changed"),
            other => panic!("{other:?}"),
        }
        let [accepted, handshaken, grown_read, grown, idle] = rx.recv().unwrap();
        assert_eq!(accepted, (INITIAL, INITIAL), "small after accept");
        assert_eq!(handshaken, (INITIAL, INITIAL), "small after the handshake");
        assert!(
            grown_read.0 > BIG,
            "read grew for the message: {grown_read:?}"
        );
        assert!(grown.1 > BIG, "write grew for the reply: {grown:?}");
        assert_eq!(idle, (INITIAL, INITIAL), "growth given back when idle");
        c.close(None, "").unwrap();
        while let Ok(Some(_)) = c.recv() {}
    }
    server.join().unwrap();
}

#[test]
fn read_buffer_grows_to_the_message_limit_and_the_limit_holds() {
    const LIMIT: usize = 300_000;
    let (tx, rx) = mpsc::channel();
    let builder = Server::builder()
        .max_message_size(LIMIT)
        .read_buffer_size(0);
    // Connections: the limit whole, then fragmented; one byte more, whole, fragmented.
    let (url, server) = serve(builder, 4, move |mut c| {
        let tx = tx.clone();
        async move {
            let mut report = Vec::new();
            loop {
                let before = c.buffer_sizes().0;
                match c.recv().await {
                    Ok(Some(Message::Binary(b))) => {
                        assert!(b == pattern(b.len()).as_slice(), "payload changed");
                        let len = b.len();
                        report.push(Ok((len, before, c.buffer_sizes().0)));
                    }
                    Ok(Some(_)) => {}
                    Ok(None) => break,
                    Err(Error::Protocol(e)) => {
                        report.push(Err(e.close_code().0));
                        let _ = c.recv().await;
                        break;
                    }
                    Err(e) => panic!("{e}"),
                }
            }
            tx.send(report).unwrap();
        }
    });
    ws_util::send_at_and_over_the_limit(&url, LIMIT, INITIAL, &rx);
    server.join().unwrap();
}

#[test]
fn write_buffer_grows_to_its_size_and_the_limit_holds() {
    const SIZE: usize = 100_000;
    // A payload of 65,536 bytes or more takes a 10-byte header (server role).
    let fits = SIZE - 10;
    let (tx, rx) = mpsc::channel();
    let builder = Server::builder().write_buffer_size(SIZE);
    let (url, server) = serve(builder, 1, move |mut c| {
        let tx = tx.clone();
        async move {
            c.handshake().await.unwrap();
            let start = c.buffer_sizes();
            c.send_binary(&pattern(fits)).await.unwrap();
            let grown = c.buffer_sizes();
            let refused = match c.send_binary(&pattern(fits + 1)).await {
                Err(Error::MessageTooLarge { len, capacity }) => (len, capacity),
                other => panic!("{other:?}"),
            };
            c.flush().await.unwrap();
            poll_recv_once(&mut c).await;
            tx.send((start, grown, refused, c.buffer_sizes())).unwrap();
            c.close(None, "").await.unwrap();
            while let Ok(Some(_)) = c.recv().await {}
        }
    });
    let mut c = Client::connect(&url).unwrap();
    match c.recv().unwrap() {
        Some(Message::Binary(b)) => assert!(b == pattern(fits).as_slice()),
        other => panic!("{other:?}"),
    }
    let (start, grown, refused, idle) = rx.recv().unwrap();
    assert_eq!(start, (INITIAL, INITIAL));
    assert!(grown.1 > SIZE, "grew to the write buffer size: {grown:?}");
    assert_eq!(refused, (SIZE + 1, SIZE));
    assert_eq!(idle, (INITIAL, INITIAL), "growth given back when idle");
    while let Ok(Some(_)) = c.recv() {}
    server.join().unwrap();
}

#[test]
fn full_size_buffers_on_request() {
    let (tx, rx) = mpsc::channel();
    let builder = Server::builder()
        .initial_buffer_size(usize::MAX)
        .read_buffer_size(64 << 10)
        .write_buffer_size(32 << 10);
    let (url, server) = serve(builder, 1, move |mut c| {
        let tx = tx.clone();
        async move {
            c.handshake().await.unwrap();
            tx.send(c.buffer_sizes()).unwrap();
            while let Ok(Some(_)) = c.recv().await {}
        }
    });
    let mut c = Client::connect(&url).unwrap();
    let (read, write) = rx.recv().unwrap();
    assert!(read >= 64 << 10, "{read}");
    assert!(write >= 32 << 10, "{write}");
    c.close(None, "").unwrap();
    while let Ok(Some(_)) = c.recv() {}
    server.join().unwrap();
}
