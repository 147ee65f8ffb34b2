//! The reconnecting client (issue 37), blocking and tokio, against a server that is
//! killed (its sockets closed without a close handshake, as the kernel does for a killed
//! process) and restarted on the same port, and against one that goes silent (a dead
//! peer). Each (re)connection runs the hook (the server sees the subscription again);
//! each disconnect is reported with its cause. The waits are for events; the backoff is
//! short so the tests run in milliseconds, and the watchdog turns a hang into a failure.
#![cfg(unix)]

mod watchdog;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener as StdListener};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use tickwire::ws::{Backoff, Cause, ClientBuilder, Error, Event, Message, Reconnecting, Server};
#[cfg(feature = "tokio")]
use watchdog::WATCHDOG;
use watchdog::watchdog;

fn backoff() -> Backoff {
    Backoff {
        initial: Duration::from_millis(5),
        max: Duration::from_millis(50),
        ..Backoff::default()
    }
}

/// A free port of 127.0.0.1.
fn free_port() -> u16 {
    StdListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// One life of the server on `port`: accept one client, pass on its subscription,
/// send `tick`, then die without a close handshake (connection and listener dropped).
fn life(port: u16, tick: &'static str, subs: mpsc::Sender<String>) -> thread::JoinHandle<()> {
    let mut srv = Server::bind(("127.0.0.1", port)).unwrap();
    thread::spawn(move || {
        let mut c = srv.accept().unwrap();
        match c.recv().unwrap() {
            Some(Message::Text(t)) => subs.send(t.to_owned()).unwrap(),
            other => panic!("{other:?}"),
        }
        c.send_text(tick).unwrap();
        // Killed: the sockets close with no close frame.
        drop(c);
        drop(srv);
    })
}

#[test]
fn blocking_reconnects_to_a_server_killed_and_restarted() {
    watchdog(|| {
        let port = free_port();
        let (subs_tx, subs) = mpsc::channel();
        let first = life(port, "tick 1", subs_tx.clone());
        let mut feed = Reconnecting::builder(ClientBuilder::new())
            .backoff(backoff())
            .seed(1)
            .on_connect(|c| c.send_text("subscribe trades"))
            .connect(&format!("ws://127.0.0.1:{port}/feed"))
            .unwrap();
        assert!(matches!(feed.recv().unwrap(), Event::Connected));
        assert_eq!(subs.recv().unwrap(), "subscribe trades");
        assert!(matches!(
            feed.recv().unwrap(),
            Event::Message(Message::Text("tick 1"))
        ));
        first.join().unwrap();
        // The server is gone: the loss, then refused attempts, failures counting up.
        match feed.recv().unwrap() {
            Event::Disconnected(d) => {
                assert!(
                    matches!(d.cause, Cause::Error(Error::ConnectionLost)),
                    "{d:?}"
                );
                assert_eq!(d.failures, 1);
                assert!(d.retry_at.is_some());
            }
            other => panic!("{other:?}"),
        }
        let mut refused = 0;
        while refused < 3 {
            match feed.recv().unwrap() {
                Event::Disconnected(d) => {
                    assert!(
                        matches!(d.cause, Cause::Error(Error::Connect { .. })),
                        "{d:?}"
                    );
                    refused += 1;
                    assert_eq!(d.failures, 1 + refused);
                }
                other => panic!("{other:?}"),
            }
        }
        // Restarted on the same port: connected again, subscribed again.
        let second = life(port, "tick 2", subs_tx);
        loop {
            match feed.recv().unwrap() {
                Event::Connected => break,
                Event::Disconnected(d) => {
                    assert!(
                        matches!(d.cause, Cause::Error(Error::Connect { .. })),
                        "{d:?}"
                    )
                }
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(subs.recv().unwrap(), "subscribe trades");
        assert!(matches!(
            feed.recv().unwrap(),
            Event::Message(Message::Text("tick 2"))
        ));
        second.join().unwrap();
        assert!(matches!(feed.recv().unwrap(), Event::Disconnected(_)));
        feed.close().unwrap();
        assert!(matches!(feed.recv(), Err(Error::AlreadyClosed)));
    });
}

/// A server whose first connection completes the handshake by hand and then says
/// nothing, never answering a ping (a dead peer); the second is a tickwire server
/// connection that sends `alive`. The subscriptions each connection got come out of
/// `subs`.
fn silent_then_alive(subs: mpsc::Sender<String>) -> SocketAddr {
    let l = StdListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        let mut head = Vec::new();
        let mut b = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            s.read_exact(&mut b).unwrap();
            head.push(b[0]);
        }
        let head = String::from_utf8(head).unwrap();
        let key = head
            .lines()
            .find_map(|l| l.strip_prefix("Sec-WebSocket-Key: "))
            .unwrap();
        let accept = tickwire::codec::ws::handshake::accept_key(key.trim().as_bytes());
        write!(
            s,
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\
             Connection: Upgrade\r\nSec-WebSocket-Accept: {}\r\n\r\n",
            std::str::from_utf8(&accept).unwrap()
        )
        .unwrap();
        subs.send("(silent)".into()).unwrap();
        // Read (the subscription, pings) and answer nothing, until the client gives up.
        let _ = std::io::copy(&mut s, &mut std::io::sink());
        // The second connection: a live server.
        let (s2, _) = l.accept().unwrap();
        let mut c = Server::builder().accept_stream(s2).unwrap();
        if let Some(Message::Text(t)) = c.recv().unwrap() {
            subs.send(t.to_owned()).unwrap();
        }
        c.send_text("alive").unwrap();
        while let Ok(Some(_)) = c.recv() {}
    });
    addr
}

fn dead_peer_client() -> ClientBuilder {
    ClientBuilder::new()
        .keepalive(Some(Duration::from_millis(50)))
        .dead_peer_timeout(Some(Duration::from_millis(300)))
}

#[test]
fn blocking_reconnects_after_a_dead_peer() {
    watchdog(|| {
        let (subs_tx, subs) = mpsc::channel();
        let addr = silent_then_alive(subs_tx);
        let mut feed = Reconnecting::builder(dead_peer_client())
            .backoff(backoff())
            .on_connect(|c| c.send_text("subscribe"))
            .connect(&format!("ws://{addr}/"))
            .unwrap();
        assert!(matches!(feed.recv().unwrap(), Event::Connected));
        assert_eq!(subs.recv().unwrap(), "(silent)");
        match feed.recv().unwrap() {
            Event::Disconnected(d) => {
                assert!(matches!(d.cause, Cause::Error(Error::DeadPeer)), "{d:?}")
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(feed.recv().unwrap(), Event::Connected));
        assert_eq!(subs.recv().unwrap(), "subscribe");
        assert!(matches!(
            feed.recv().unwrap(),
            Event::Message(Message::Text("alive"))
        ));
        feed.close().unwrap();
    });
}

#[cfg(feature = "tokio")]
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[cfg(feature = "tokio")]
#[test]
fn tokio_reconnects_to_a_server_killed_and_restarted() {
    use tickwire::tokio::ws::{ClientBuilder, Reconnecting};
    let port = free_port();
    let (subs_tx, subs) = mpsc::channel();
    let first = life(port, "tick 1", subs_tx.clone());
    runtime().block_on(async {
        let body = async {
            let mut feed = Reconnecting::builder(ClientBuilder::new())
                .backoff(backoff())
                .on_connect(|c| Box::pin(async move { c.send_text("subscribe trades").await }))
                .connect(&format!("ws://127.0.0.1:{port}/feed"))
                .unwrap();
            assert!(matches!(feed.recv().await.unwrap(), Event::Connected));
            assert!(matches!(
                feed.recv().await.unwrap(),
                Event::Message(Message::Text("tick 1"))
            ));
            match feed.recv().await.unwrap() {
                Event::Disconnected(d) => {
                    assert!(
                        matches!(d.cause, Cause::Error(Error::ConnectionLost)),
                        "{d:?}"
                    )
                }
                other => panic!("{other:?}"),
            }
            match feed.recv().await.unwrap() {
                Event::Disconnected(d) => {
                    assert!(
                        matches!(d.cause, Cause::Error(Error::Connect { .. })),
                        "{d:?}"
                    );
                    assert_eq!(d.failures, 2);
                }
                other => panic!("{other:?}"),
            }
            let second = life(port, "tick 2", subs_tx);
            loop {
                match feed.recv().await.unwrap() {
                    Event::Connected => break,
                    Event::Disconnected(d) => {
                        assert!(
                            matches!(d.cause, Cause::Error(Error::Connect { .. })),
                            "{d:?}"
                        )
                    }
                    other => panic!("{other:?}"),
                }
            }
            assert!(matches!(
                feed.recv().await.unwrap(),
                Event::Message(Message::Text("tick 2"))
            ));
            second.join().unwrap();
            assert!(matches!(feed.recv().await.unwrap(), Event::Disconnected(_)));
            feed.close().await.unwrap();
            assert!(matches!(feed.recv().await, Err(Error::AlreadyClosed)));
        };
        tokio::time::timeout(WATCHDOG, body)
            .await
            .expect("blocked past the watchdog");
    });
    first.join().unwrap();
    assert_eq!(subs.try_iter().collect::<Vec<_>>(), ["subscribe trades"; 2]);
}

#[cfg(feature = "tokio")]
#[test]
fn tokio_reconnects_after_a_dead_peer() {
    use tickwire::tokio::ws::Reconnecting;
    let (subs_tx, subs) = mpsc::channel();
    let addr = silent_then_alive(subs_tx);
    runtime().block_on(async {
        let body = async {
            let client = tickwire::tokio::ws::ClientBuilder::new()
                .keepalive(Some(Duration::from_millis(50)))
                .dead_peer_timeout(Some(Duration::from_millis(300)));
            let mut feed = Reconnecting::builder(client)
                .backoff(backoff())
                .on_connect(|c| Box::pin(async move { c.send_text("subscribe").await }))
                .connect(&format!("ws://{addr}/"))
                .unwrap();
            assert!(matches!(feed.recv().await.unwrap(), Event::Connected));
            match feed.recv().await.unwrap() {
                Event::Disconnected(d) => {
                    assert!(matches!(d.cause, Cause::Error(Error::DeadPeer)), "{d:?}")
                }
                other => panic!("{other:?}"),
            }
            assert!(matches!(feed.recv().await.unwrap(), Event::Connected));
            assert!(matches!(
                feed.recv().await.unwrap(),
                Event::Message(Message::Text("alive"))
            ));
            feed.close().await.unwrap();
        };
        tokio::time::timeout(WATCHDOG, body)
            .await
            .expect("blocked past the watchdog");
    });
    assert_eq!(
        subs.try_iter().collect::<Vec<_>>(),
        ["(silent)", "subscribe"]
    );
}

/// Giving up after `max_attempts` failures in a row: the last disconnect says so
/// (`retry_at: None`), and `recv` then refuses.
#[test]
fn gives_up_after_max_attempts() {
    watchdog(|| {
        let port = free_port();
        let mut feed = Reconnecting::builder(ClientBuilder::new())
            .backoff(Backoff {
                max_attempts: Some(2),
                ..backoff()
            })
            .connect(&format!("ws://127.0.0.1:{port}/"))
            .unwrap();
        let mut retries = Vec::new();
        loop {
            match feed.recv() {
                Ok(Event::Disconnected(d)) => retries.push((d.failures, d.retry_at.is_some())),
                Err(Error::AlreadyClosed) => break,
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(retries, [(1, true), (2, true), (2, false)]);
    });
}
