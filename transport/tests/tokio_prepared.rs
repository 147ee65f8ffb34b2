//! One frame to many connections through the tokio adapter over 127.0.0.1: every client
//! gets the prepared message; a client that does not read makes `try_send_prepared`
//! say `Backpressure` on its connection alone, and `send_prepared` time out there
//! (write timeout) while the others are served; a closed connection refuses it; with
//! permessage-deflate the clients inflate the right text.
#![cfg(all(feature = "tokio", unix))]

use std::net::SocketAddr;
use std::time::Duration;

use tickwire::tokio::ws::{
    Client, ClientBuilder, Error, Message, PreparedMessage, Server, ServerConnection,
};
use tickwire::ws::CloseCode;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

const T: Duration = Duration::from_secs(20);

/// A 128-byte text tick carrying its sequence number.
fn tick(i: usize) -> String {
    let mut s = format!("{{\"seq\":{i},\"s\":\"BTCUSDT\",\"b\":\"64123.10\",\"pad\":\"");
    while s.len() < 126 {
        s.push('x');
    }
    s.push_str("\"}");
    s
}

/// Accept a connection and finish its opening handshake (`accept` leaves it to the
/// first use; the prepared sends below need the negotiated connection).
async fn open(server: &mut Server) -> ServerConnection {
    let mut c = server.accept().await.unwrap();
    c.handshake().await.unwrap();
    c
}

/// A client task: connect, wait for `go` (if any), receive texts until the close.
fn client(
    addr: SocketAddr,
    builder: ClientBuilder,
    go: Option<oneshot::Receiver<()>>,
) -> JoinHandle<Vec<String>> {
    let url = format!("ws://{addr}/");
    tokio::spawn(async move {
        let mut c = builder.read_timeout(Some(T)).connect(&url).await.unwrap();
        if let Some(go) = go {
            go.await.unwrap();
        }
        let mut got = Vec::new();
        loop {
            match c.recv().await.unwrap() {
                Some(Message::Text(t)) => got.push(t.to_owned()),
                Some(Message::Close(_)) => {}
                Some(other) => panic!("{other:?}"),
                None => return got,
            }
        }
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_client_gets_it_and_a_silent_one_is_throttled_alone() {
    const READERS: usize = 4;
    const COUNT: usize = 3000;
    // The readers' server has no write timeout (a loaded machine may keep a reader
    // waiting); the silent client's has a short one, its only way out.
    let mut patient = Server::bind("127.0.0.1:0").await.unwrap();
    let mut strict = Server::builder()
        .write_buffer_size(4096)
        .so_sndbuf(4096)
        .write_timeout(Some(Duration::from_millis(200)))
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let addr = patient.local_addr().unwrap();
    let mut readers = Vec::new();
    let mut conns = Vec::new();
    for _ in 0..READERS {
        readers.push(client(addr, Client::builder(), None));
        conns.push(open(&mut patient).await);
    }
    let (release, go) = oneshot::channel();
    let addr = strict.local_addr().unwrap();
    let silent = client(addr, Client::builder().so_rcvbuf(4096), Some(go));
    let mut slow = open(&mut strict).await;
    let (mut accepted, mut refused) = (Vec::new(), 0);
    for i in 0..COUNT {
        let msg = PreparedMessage::text(&tick(i));
        for c in &mut conns {
            // Readers: awaits room while they read.
            c.send_prepared(&msg).await.unwrap();
        }
        match slow.try_send_prepared(&msg) {
            Ok(()) => accepted.push(tick(i)),
            Err(Error::Backpressure) => refused += 1,
            Err(e) => panic!("{e:?}"),
        }
    }
    assert!(
        refused > COUNT / 2,
        "the silent client pushed back {refused} times"
    );
    // Awaiting room on the silent connection ends in its write timeout. (The kernel
    // may still find room for a few more frames meanwhile: a receive queue collapsed
    // under memory pressure opens the window without the client reading; what is
    // accepted then is accounted for like the rest.)
    let mut next = COUNT;
    let msg = loop {
        let msg = PreparedMessage::text(&tick(next));
        match slow.send_prepared(&msg).await {
            Ok(()) => accepted.push(tick(next)),
            Err(Error::WriteTimeout) => break msg,
            Err(e) => panic!("{e:?}"),
        }
        next += 1;
        assert!(
            next < 2 * COUNT,
            "a peer that never reads took {next} messages"
        );
    };
    for mut c in conns {
        c.close(CloseCode::NORMAL, "").await.unwrap();
        assert!(matches!(c.recv().await.unwrap(), Some(Message::Close(_))));
    }
    for r in readers {
        assert_eq!(r.await.unwrap(), (0..COUNT).map(tick).collect::<Vec<_>>());
    }
    release.send(()).unwrap();
    // (Its write timeout may pass on a loaded machine before the client reads; a
    // timed-out flush leaves the bytes queued.)
    loop {
        match slow.flush().await {
            Ok(()) => break,
            Err(Error::WriteTimeout) => {}
            Err(e) => panic!("{e:?}"),
        }
    }
    slow.close(CloseCode::NORMAL, "").await.unwrap();
    assert!(matches!(
        slow.recv().await.unwrap(),
        Some(Message::Close(_))
    ));
    // Nothing accepted is lost, nothing refused went out. The send that timed out may
    // have found room and timed out writing it (then it is queued and goes out whole)
    // or timed out waiting for room (then nothing was queued): either is correct.
    let mut got = silent.await.unwrap();
    if got.last() == Some(&tick(next)) {
        got.pop();
    }
    assert_eq!(got, accepted);
    // After the close it is refused.
    assert!(matches!(
        slow.send_prepared(&msg).await,
        Err(Error::AlreadyClosed)
    ));
    assert!(matches!(
        slow.try_send_prepared(&msg),
        Err(Error::AlreadyClosed)
    ));
}

#[cfg(feature = "deflate")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_deflate_every_client_inflates_the_right_text() {
    use tickwire::codec::ws::deflate::DeflateConfig;
    for no_takeover in [true, false] {
        let cfg = DeflateConfig {
            server_no_context_takeover: no_takeover,
            ..DeflateConfig::default()
        };
        let mut server = Server::builder()
            .deflate(cfg)
            .bind("127.0.0.1:0")
            .await
            .unwrap();
        let addr = server.local_addr().unwrap();
        let mut readers = Vec::new();
        let mut conns = Vec::new();
        for _ in 0..3 {
            readers.push(client(
                addr,
                Client::builder().deflate(DeflateConfig::default()),
                None,
            ));
            conns.push(open(&mut server).await);
        }
        let texts: Vec<String> = (0..20).map(|i| tick(i).repeat(1 + i % 5)).collect();
        for (i, text) in texts.iter().enumerate() {
            let msg = PreparedMessage::text(text).with_deflate(&cfg).unwrap();
            for c in &mut conns {
                assert_eq!(c.deflate().unwrap().server_no_context_takeover, no_takeover);
                if i % 3 == 0 {
                    c.send_text(text).await.unwrap();
                } else {
                    c.send_prepared(&msg).await.unwrap();
                }
            }
        }
        for mut c in conns {
            c.close(CloseCode::NORMAL, "").await.unwrap();
            assert!(matches!(c.recv().await.unwrap(), Some(Message::Close(_))));
        }
        for r in readers {
            assert_eq!(r.await.unwrap(), texts);
        }
    }
}

/// Fan-out over split halves: each subscriber's read half in a task of its own (it sees
/// the client's texts and its close), one task feeding every write half with
/// `try_send_prepared` (a tick it cannot queue now is retried after a flush) and then
/// `send_prepared`: every client gets every tick in order, and each read half sees what
/// its client sent meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn split_write_halves_fan_out_prepared_messages() {
    const SUBSCRIBERS: usize = 3;
    const COUNT: usize = 500;
    let mut server = Server::builder()
        .write_buffer_size(8192)
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let addr = server.local_addr().unwrap();
    let url = format!("ws://{addr}/");
    let mut clients = Vec::new();
    let mut readers = Vec::new();
    let mut writers = Vec::new();
    for i in 0..SUBSCRIBERS {
        let url = url.clone();
        clients.push(tokio::spawn(async move {
            let mut c = Client::builder()
                .read_timeout(Some(T))
                .connect(&url)
                .await
                .unwrap();
            c.send_text(&format!("hello from {i}")).await.unwrap();
            let mut got = Vec::new();
            while got.len() < 2 * COUNT {
                match c.recv().await.unwrap() {
                    Some(Message::Text(t)) => got.push(t.to_owned()),
                    other => panic!("{other:?}"),
                }
            }
            c.close(CloseCode::NORMAL, "done").await.unwrap();
            while c.recv().await.unwrap().is_some() {}
            got
        }));
        let (mut rx, tx) = open(&mut server).await.split().await.unwrap();
        writers.push(tx);
        readers.push(tokio::spawn(async move {
            let mut seen = Vec::new();
            while let Some(m) = rx.recv().await.unwrap() {
                match m {
                    Message::Text(t) => seen.push(t.to_owned()),
                    Message::Close(_) => seen.push("close".to_owned()),
                    other => panic!("{other:?}"),
                }
            }
            seen
        }));
    }
    for i in 0..COUNT {
        let msg = PreparedMessage::text(&tick(i));
        for tx in &mut writers {
            loop {
                match tx.try_send_prepared(&msg) {
                    Ok(()) => break,
                    Err(Error::Backpressure) => tx.flush().await.unwrap(),
                    Err(e) => panic!("{e}"),
                }
            }
        }
    }
    for i in COUNT..2 * COUNT {
        let msg = PreparedMessage::text(&tick(i));
        for tx in &mut writers {
            tx.send_prepared(&msg).await.unwrap();
        }
    }
    for tx in &mut writers {
        tx.flush().await.unwrap();
    }
    let want: Vec<String> = (0..2 * COUNT).map(tick).collect();
    for (i, c) in clients.into_iter().enumerate() {
        assert_eq!(tokio::time::timeout(T, c).await.unwrap().unwrap(), want);
        let seen = tokio::time::timeout(T, readers.remove(0))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(seen, [format!("hello from {i}"), "close".to_owned()]);
    }
}
