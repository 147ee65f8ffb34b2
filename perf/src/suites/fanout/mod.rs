//! Suite "fan-out" (issue 27): one 128 B text message to 1,000 server connections over
//! 127.0.0.1, the way a market-data server sends a tick to its subscribers: tickwire's
//! [`PreparedMessage`](tickwire::ws::PreparedMessage) (encoded once, written straight
//! from the shared frame) against sending the same text one connection at a time, beside
//! tokio-tungstenite 0.30 sending the same `Message` (a clone of one `Utf8Bytes`) to each
//! of its 1,000 connections.
//!
//! A sample is one fan-out: the message to all 1,000 connections, one after another; it
//! is reported per connection (batch ticks / 1,000), so p50 and p99 are across fan-outs.
//! The clients are plain sockets on a drain thread pinned to the other core: it reads and
//! discards what arrives, after checking that the first frame on every socket is the
//! expected bytes (the message as the row sends it).
//!
//! The floor row is the least any library does per connection: one `send(2)` of the
//! frame encoded before the run (the call std's `TcpStream::write` makes), on the same
//! sockets, the same clients draining, no library code. Profiled (`perf record -e
//! cpu-clock -g` on the measuring thread), about 85% of a plain fan-out's time per
//! connection is the kernel's: the TCP send path, and the loopback receive path (TCP
//! receive, waking the drain thread) that the kernel runs in the sender's softirq. The
//! library's own code is a few per cent, so for a plain 128 B message no library can
//! make a fan-out many times faster than sending one by one: the rows sit within ~15%
//! of the floor (see the README's table note). The queueing scenario shows the part a
//! library can save (queueing only, in memory), and the deflate scenario the case where
//! encoding once pays (each connection's compressor reset and run per message, 70 to
//! 100 µs per connection with 1,000 cold compressors, against one compression in all).
//!
//! The evented `ws::ServerConnection` rows (send_prepared, send_text, queue_prepared then
//! flush), the floors, the tokio adapter's, the in-memory queueing rows and the deflate rows are in
//! [`tickwire`]; tokio-tungstenite's row is in [`peer`].

mod peer;
mod tickwire;

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use super::loopback::peer_core;
use super::{Case, Setup};
use crate::harness::RunConfig;
use crate::inputs::{SplitMix64, quote_text};
use crate::machine;

/// Server connections per fan-out (the unit test of the rows, a debug build in CI's
/// workspace tests, checks them with fewer: setting up 1,000 connections per row is most
/// of its time there).
pub const CONNECTIONS: usize = if cfg!(test) { 64 } else { 1000 };

/// Payload size of the message.
pub const SIZE: usize = 128;

/// Scenario: plain text over loopback.
const PLAIN: &str = "fan-out 128B text to 1000 connections (per connection)";
/// Scenario: queueing only, in memory.
const QUEUE: &str = "fan-out queue only 128B text x 1000 connections, in memory (per connection)";
/// Scenario: permessage-deflate without server context takeover, over loopback.
const DEFLATE: &str =
    "fan-out 128B JSON deflate, no server context takeover, to 1000 connections (per connection)";

/// Register the suite's rows.
pub fn register(setup: &Setup, v: &mut Vec<Case<'static>>) {
    let peer = peer_core(setup);
    let first = v.len();
    tickwire::plain_cases(PLAIN, peer, v);
    peer::case(PLAIN, peer, v);
    tickwire::deflate_cases(DEFLATE, peer, v);
    // Their cost is system calls and the kernel: not for `--instructions`.
    for c in &mut v[first..] {
        c.counts = false;
    }
    tickwire::queue_cases(QUEUE, v);
}

/// The message: a 128-byte JSON quote.
pub fn message() -> String {
    quote_text(SIZE, &mut SplitMix64::new(27))
}

/// One fan-out per sample, reported per connection.
fn per_connection(cfg: &RunConfig) -> RunConfig {
    RunConfig {
        batch: CONNECTIONS,
        ..*cfg
    }
}

/// The opening request of a raw client (the RFC 6455 sample key), offering
/// permessage-deflate with `server_no_context_takeover` when `deflate`.
fn request(deflate: bool) -> &'static [u8] {
    if deflate {
        b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
          Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\
          Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover\r\n\r\n"
    } else {
        b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
          Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    }
}

/// Connect `n` plain sockets to `addr` on a helper thread (the caller accepts them
/// meanwhile); with `request`, each writes it, then (once all are connected) reads the
/// server's answer head, which must be a 101.
fn connect_clients(
    addr: SocketAddr,
    n: usize,
    request: Option<&'static [u8]>,
) -> JoinHandle<Vec<TcpStream>> {
    std::thread::spawn(move || {
        let mut socks: Vec<TcpStream> = (0..n)
            .map(|_| {
                let mut s = TcpStream::connect(addr).expect("connect");
                s.set_nodelay(true).expect("nodelay");
                if let Some(r) = request {
                    s.write_all(r).expect("write the request");
                }
                s
            })
            .collect();
        if request.is_some() {
            for s in &mut socks {
                s.set_read_timeout(Some(Duration::from_secs(30)))
                    .expect("timeout");
                let mut head = Vec::new();
                let mut buf = [0u8; 512];
                while !head.ends_with(b"\r\n\r\n") {
                    let k = s.read(&mut buf).expect("read the answer");
                    assert!(k > 0, "server closed during the handshake");
                    head.extend_from_slice(&buf[..k]);
                }
                assert!(
                    head.starts_with(b"HTTP/1.1 101"),
                    "{}",
                    String::from_utf8_lossy(&head)
                );
            }
        }
        socks
    })
}

/// The client side of a row: a thread on the peer core reading every socket.
struct Drain {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
    verified: mpsc::Receiver<Result<(), String>>,
}

impl Drain {
    /// Read and discard on `socks` from a thread pinned to `core`; the first
    /// `expect.len()` bytes of every socket are checked against `expect` (see
    /// [`wait_verified`](Self::wait_verified)).
    fn spawn(core: usize, socks: Vec<TcpStream>, expect: Vec<u8>) -> Drain {
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, verified) = mpsc::channel();
        let flag = stop.clone();
        let handle = std::thread::Builder::new()
            .name("bench-drain".into())
            .spawn(move || {
                machine::pin(core);
                drain(socks, &expect, &flag, &tx);
            })
            .expect("spawn the drain thread");
        Drain {
            stop,
            handle: Some(handle),
            verified,
        }
    }

    /// Wait until every socket received its first frame and it matched.
    fn wait_verified(&self) {
        match self.verified.recv_timeout(Duration::from_secs(60)) {
            Ok(Ok(())) => {}
            Ok(Err(e)) => panic!("fan-out output: {e}"),
            Err(e) => panic!("fan-out output not received: {e}"),
        }
    }
}

impl Drop for Drain {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// The drain loop: edge-triggered readiness on every socket, read until `WouldBlock`.
fn drain(
    socks: Vec<TcpStream>,
    expect: &[u8],
    stop: &AtomicBool,
    verified: &mpsc::Sender<Result<(), String>>,
) {
    use mio::net::TcpStream as MioStream;
    use mio::{Events, Interest, Poll, Token};
    let mut poll = Poll::new().expect("poll");
    let mut socks: Vec<MioStream> = socks
        .into_iter()
        .map(|s| {
            s.set_nonblocking(true).expect("non-blocking");
            MioStream::from_std(s)
        })
        .collect();
    for (i, s) in socks.iter_mut().enumerate() {
        poll.registry()
            .register(s, Token(i), Interest::READABLE)
            .expect("register");
    }
    let mut first: Vec<Vec<u8>> = vec![Vec::new(); socks.len()];
    let mut done = 0;
    let mut events = Events::with_capacity(1024);
    let mut buf = vec![0u8; 1 << 16];
    while !stop.load(Ordering::Relaxed) {
        if poll
            .poll(&mut events, Some(Duration::from_millis(20)))
            .is_err()
        {
            continue;
        }
        for ev in &events {
            let i = ev.token().0;
            loop {
                match socks[i].read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        let got = &mut first[i];
                        if got.len() < expect.len() {
                            let k = n.min(expect.len() - got.len());
                            got.extend_from_slice(&buf[..k]);
                            if got.len() == expect.len() {
                                done += 1;
                                if got.as_slice() != expect {
                                    let _ = verified.send(Err(format!(
                                        "connection {i} received {:02x?}, expected {:02x?}",
                                        got, expect
                                    )));
                                } else if done == socks.len() {
                                    let _ = verified.send(Ok(()));
                                }
                            }
                        }
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
        }
    }
}

/// Raise the soft limit on open files to what `CONNECTIONS` sockets on both ends of
/// every row of a scenario need (rows of a scenario are set up at once).
fn raise_fd_limit() {
    let need = (2 * CONNECTIONS * 8 + 256) as libc::rlim_t;
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit only read and write the struct passed, which lives
    // for the calls.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 && lim.rlim_cur < need {
            lim.rlim_cur = need.min(lim.rlim_max);
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every row verifies what its clients receive and measures briefly.
    #[test]
    fn every_case_verifies_and_measures() {
        let mut v = Vec::new();
        let setup = Setup {
            batch: 8,
            core: 0,
            peer_core: None,
        };
        register(&setup, &mut v);
        let cfg = RunConfig {
            batch: 8,
            warmup: Duration::ZERO,
            measure: Duration::from_millis(5),
            max_samples: 4,
            count_rounds: 0,
        };
        for case in &v {
            let m = case.run(&cfg);
            assert!(m.samples() > 0, "{case:?}");
        }
    }
}
