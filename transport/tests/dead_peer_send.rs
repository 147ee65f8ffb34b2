//! Dead-peer detection bounds sends, not only receives (issue 37): with `keepalive` and
//! `dead_peer_timeout` set and no write timeout, a send stuck behind a peer that stopped
//! reading and went silent ends with `Error::DeadPeer` within the dead-peer timeout
//! (plus scheduling slack), blocking and tokio, unsplit, from a `recv_with` echo and
//! from a split write half. Before, the send sat in `write(2)` (or awaited
//! writability) forever; the watchdog turns that hang into a failure.
#![cfg(unix)]

mod watchdog;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener as StdListener, TcpStream as StdStream};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use tickwire::ws::{Client, Error, Message};
#[cfg(feature = "tokio")]
use watchdog::WATCHDOG;
use watchdog::watchdog;

const KEEPALIVE: Duration = Duration::from_millis(100);
const DEAD_PEER: Duration = Duration::from_millis(400);
/// Scheduling slack on a loaded 2-core machine: generous, and still far below the
/// watchdog, so a send that waits for the socket alone fails.
const SLACK: Duration = Duration::from_secs(10);
/// One message: big enough that a few fill both sockets' buffers.
const BIG: usize = 256 * 1024;

/// A raw server that completes the opening handshake by hand, runs `f` on the socket
/// (`f` never reads), then holds the socket open, reading nothing, until `hold` is
/// dropped: a peer that stopped reading and went silent.
fn silent_server(
    f: impl FnOnce(&mut StdStream) + Send + 'static,
) -> (SocketAddr, mpsc::Sender<()>) {
    let l = StdListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let (hold, held) = mpsc::channel::<()>();
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
        f(&mut s);
        let _ = held.recv();
    });
    (addr, hold)
}

/// An unmasked binary frame of `n` bytes (the server's).
fn binary_frame(n: usize) -> Vec<u8> {
    let mut f = vec![0x82, 127];
    f.extend_from_slice(&(n as u64).to_be_bytes());
    f.resize(f.len() + n, 0x5a);
    f
}

/// Assert that a send ended as a dead peer within the timeout and slack.
fn assert_dead_peer(r: Result<(), Error>, started: Instant) {
    let took = started.elapsed();
    assert!(matches!(r, Err(Error::DeadPeer)), "{r:?}");
    assert!(took < DEAD_PEER + SLACK, "the send ended after {took:?}");
}

fn client(addr: SocketAddr) -> Client {
    Client::builder()
        .keepalive(Some(KEEPALIVE))
        .dead_peer_timeout(Some(DEAD_PEER))
        .write_timeout(None)
        .connect(&format!("ws://{addr}/"))
        .unwrap()
}

#[test]
fn a_blocking_send_to_a_peer_that_stopped_reading_ends_as_dead_peer() {
    watchdog(|| {
        let (addr, hold) = silent_server(|_| {});
        let mut c = client(addr);
        let data = vec![7u8; BIG];
        loop {
            let started = Instant::now();
            match c.send_binary(&data) {
                Ok(()) => continue,
                r => {
                    assert_dead_peer(r, started);
                    break;
                }
            }
        }
        assert!(c.is_closed());
        drop(hold);
    });
}

/// The case: a large echo written from `recv_with`, while the message still
/// borrows the read buffer (only the sending half is lent to the closure).
#[test]
fn a_blocking_echo_from_recv_with_to_a_peer_that_stopped_reading_ends_as_dead_peer() {
    watchdog(|| {
        let (addr, hold) = silent_server(|s| {
            // Enough to echo that the echoes fill both buffers (the writes may block
            // once the client stops reading: that is this peer's business).
            let frame = binary_frame(BIG);
            for _ in 0..64 {
                if s.write_all(&frame).is_err() {
                    return;
                }
            }
        });
        let mut c = client(addr);
        loop {
            let started = Instant::now();
            let r = c.recv_with(|msg, tx| match msg {
                Message::Binary(b) => tx.send_binary(b),
                _ => Ok(()),
            });
            match r {
                Ok(Some(())) => continue,
                Ok(None) => panic!("the connection ended without an error"),
                Err(e) => {
                    assert_dead_peer(Err(e), started);
                    break;
                }
            }
        }
        drop(hold);
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
async fn tokio_client(addr: SocketAddr) -> tickwire::tokio::ws::Client {
    tickwire::tokio::ws::Client::builder()
        .keepalive(Some(KEEPALIVE))
        .dead_peer_timeout(Some(DEAD_PEER))
        .write_timeout(None)
        .connect(&format!("ws://{addr}/"))
        .await
        .unwrap()
}

#[cfg(feature = "tokio")]
#[test]
fn a_tokio_send_to_a_peer_that_stopped_reading_ends_as_dead_peer() {
    let (addr, hold) = silent_server(|_| {});
    runtime().block_on(async {
        let body = async {
            let mut c = tokio_client(addr).await;
            let data = vec![7u8; BIG];
            loop {
                let started = Instant::now();
                match c.send_binary(&data).await {
                    Ok(()) => continue,
                    r => return assert_dead_peer(r, started),
                }
            }
        };
        tokio::time::timeout(WATCHDOG, body)
            .await
            .expect("the send blocked past the watchdog");
    });
    drop(hold);
}

#[cfg(feature = "tokio")]
#[test]
fn a_tokio_write_half_send_to_a_peer_that_stopped_reading_ends_as_dead_peer() {
    let (addr, hold) = silent_server(|_| {});
    runtime().block_on(async {
        let body = async {
            let (_rx, mut tx) = tokio_client(addr).await.split();
            let data = vec![7u8; BIG];
            loop {
                let started = Instant::now();
                match tx.send_binary(&data).await {
                    Ok(()) => continue,
                    r => return assert_dead_peer(r, started),
                }
            }
        };
        tokio::time::timeout(WATCHDOG, body)
            .await
            .expect("the send blocked past the watchdog");
    });
    drop(hold);
}
