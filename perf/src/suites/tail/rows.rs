//! The rows of the tail scenario: each library receives the paced feed in the server
//! role (it unmasks), blocking, busy-polling or on a `current_thread` tokio runtime;
//! three raw-socket floors receive the same bytes the same three ways with plain reads
//! and no parsing (the frame size is known; only the stamp is unmasked).

use std::io::{ErrorKind, Read};
use std::net::TcpStream;
use std::sync::Arc;

use futures_util::StreamExt;
use tickwire::socket::RecvMode;
use tickwire::ws::{Message, ServerBuilder};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::protocol::{Message as TMessage, Role as TRole};
use tungstenite::protocol::{Message as SMessage, Role as SRole, WebSocket as SSocket};

use super::{Feed, Recorder, Schedule, WIRE, finish, scenario, seed};
use crate::harness::{Measurement, RunConfig};
use crate::suites::loopback::{nexus, tcp_pair};
use crate::suites::tokio_loopback::runtime;
use crate::suites::{Case, unexpected};

/// The rows (the libraries), in report order.
pub const TW: &str = "tickwire";
/// tickwire in its busy-poll receive mode.
pub const TW_SPIN: &str = "tickwire, busy-poll";
/// tickwire's tokio adapter.
pub const TW_TOKIO: &str = "tickwire tokio";
/// tungstenite, blocking.
pub const TUNG: &str = "tungstenite 0.30";
/// tokio-tungstenite.
pub const TTUNG: &str = "tokio-tungstenite 0.30";
/// fastwebsockets.
pub const FWS: &str = "fastwebsockets 0.10";
/// The blocking floor.
pub const FLOOR: &str = "raw TCP (floor)";
/// The busy-poll floor.
pub const FLOOR_SPIN: &str = "raw TCP, busy-poll (floor)";
/// The tokio floor.
pub const FLOOR_TOKIO: &str = "raw TCP tokio (floor)";

/// The floor a row is held to: the same way of waiting, no library.
pub fn floor_of(library: &str) -> &'static str {
    match library {
        TW_SPIN | FLOOR_SPIN => FLOOR_SPIN,
        TW_TOKIO | TTUNG | FWS | FLOOR_TOKIO => FLOOR_TOKIO,
        _ => FLOOR,
    }
}

const NOTE_TW: &str = "one-way latency: the sender's TSC stamp in the payload to the TSC read as \
                       ws::ServerConnection::recv (blocking) returns the message; sender (every row): \
                       pre-encoded masked frames, one write each, on a paced schedule on the other core";
const NOTE_TW_SPIN: &str =
    "as tickwire, with recv_mode(RecvMode::Spin): recv spins on non-blocking reads";
const NOTE_TW_TOKIO: &str =
    "tickwire::tokio::ws::ServerConnection::recv().await on a current_thread runtime";
const NOTE_NEXUS: &str = "nexus-net ws::ClientBuilder::accept (server side of its handshake), then \
                          Client::recv (blocking)";
const NOTE_TUNG: &str =
    "WebSocket::read over std TcpStream (server role, default config, no handshake)";
const NOTE_TTUNG: &str = "WebSocketStream::next().await (server role, default config, no handshake) on a \
                          current_thread runtime";
const NOTE_FWS: &str =
    "WebSocket::read_frame().await (server role, after_handshake) on a current_thread runtime";
const NOTE_FLOOR: &str = "the floor: blocking read into a 64 KiB buffer, whole frames stepped over (only the \
                          stamp unmasked, no parse)";
const NOTE_FLOOR_SPIN: &str = "the floor on a non-blocking socket, spinning on WouldBlock";
const NOTE_FLOOR_TOKIO: &str = "the floor on tokio: AsyncFd readable().await, then read; after a short read \
                                (drained) or WouldBlock the readiness it saw is cleared, so the next wait is for a \
                                new arrival (one read and one epoll_wait per message, as tickwire's tokio adapter); \
                                current_thread runtime";

pub(super) fn cases(peer: usize, v: &mut Vec<Case<'static>>) {
    let s = scenario();
    let mut row =
        |lib: &'static str, note: &'static str, f: fn(&RunConfig, usize) -> Measurement| {
            v.push(Case::new(s.clone(), lib, lib == TW, note, move |cfg| {
                f(cfg, peer)
            }));
        };
    row(TW, NOTE_TW, |c, p| tickwire(c, p, TW, RecvMode::Sleep));
    row(TW_SPIN, NOTE_TW_SPIN, |c, p| {
        tickwire(c, p, TW_SPIN, RecvMode::Spin)
    });
    row(TW_TOKIO, NOTE_TW_TOKIO, tickwire_tokio);
    row(nexus::LIB, NOTE_NEXUS, nexus_net);
    row(TUNG, NOTE_TUNG, tungstenite);
    row(TTUNG, NOTE_TTUNG, tokio_tungstenite);
    row(FWS, NOTE_FWS, fastwebsockets);
    row(FLOOR, NOTE_FLOOR, |c, p| floor(c, p, FLOOR, false));
    row(FLOOR_SPIN, NOTE_FLOOR_SPIN, |c, p| {
        floor(c, p, FLOOR_SPIN, true)
    });
    row(FLOOR_TOKIO, NOTE_FLOOR_TOKIO, floor_tokio);
}

/// A run's schedule, a connected pair and its sender (`handshake`: the sender opens
/// with a client handshake); the receiving socket.
fn start(
    cfg: &RunConfig,
    peer: usize,
    lib: &str,
    handshake: bool,
) -> (Arc<Schedule>, Feed, TcpStream) {
    let sched = Arc::new(Schedule::new(cfg, seed(lib)));
    let (c, s) = tcp_pair();
    let feed = Feed::start(peer, c, handshake, sched.clone());
    (sched, feed, s)
}

fn tickwire(cfg: &RunConfig, peer: usize, lib: &str, mode: RecvMode) -> Measurement {
    let (sched, feed, s) = start(cfg, peer, lib, true);
    let mut c = ServerBuilder::new()
        .recv_mode(mode)
        .accept_stream(s)
        .expect("accept");
    c.handshake().expect("handshake");
    let mut rec = Recorder::new(&sched);
    feed.go();
    while !rec.done() {
        match c.recv() {
            Ok(Some(Message::Binary(b))) => rec.got(b),
            other => unexpected(&other),
        }
    }
    finish(lib, rec, feed)
}

fn tickwire_tokio(cfg: &RunConfig, peer: usize) -> Measurement {
    let (sched, feed, s) = start(cfg, peer, TW_TOKIO, true);
    s.set_nonblocking(true).expect("non-blocking");
    let rt = runtime();
    let rec = rt.block_on(async {
        let s = tokio::net::TcpStream::from_std(s).expect("tokio stream");
        let mut c = tickwire::tokio::ws::ServerBuilder::new()
            .accept_stream(s)
            .expect("accept");
        c.handshake().await.expect("handshake");
        let mut rec = Recorder::new(&sched);
        feed.go();
        while !rec.done() {
            match c.recv().await {
                Ok(Some(Message::Binary(b))) => rec.got(b),
                other => unexpected(&other),
            }
        }
        rec
    });
    finish(TW_TOKIO, rec, feed)
}

fn nexus_net(cfg: &RunConfig, peer: usize) -> Measurement {
    let (sched, feed, s) = start(cfg, peer, nexus::LIB, true);
    let mut ws = nexus::stream_receiver(s);
    let mut rec = Recorder::new(&sched);
    feed.go();
    while !rec.done() {
        nexus::with_binary(&mut ws, |b| rec.got(b));
    }
    finish(nexus::LIB, rec, feed)
}

fn tungstenite(cfg: &RunConfig, peer: usize) -> Measurement {
    let (sched, feed, s) = start(cfg, peer, TUNG, false);
    let mut ws = SSocket::from_raw_socket(s, SRole::Server, None);
    let mut rec = Recorder::new(&sched);
    feed.go();
    while !rec.done() {
        match ws.read() {
            Ok(SMessage::Binary(b)) => rec.got(&b),
            other => unexpected(&other),
        }
    }
    finish(TUNG, rec, feed)
}

fn tokio_tungstenite(cfg: &RunConfig, peer: usize) -> Measurement {
    let (sched, feed, s) = start(cfg, peer, TTUNG, false);
    s.set_nonblocking(true).expect("non-blocking");
    let rt = runtime();
    let rec = rt.block_on(async {
        let s = tokio::net::TcpStream::from_std(s).expect("tokio stream");
        let mut ws = WebSocketStream::from_raw_socket(s, TRole::Server, None).await;
        let mut rec = Recorder::new(&sched);
        feed.go();
        while !rec.done() {
            match ws.next().await {
                Some(Ok(TMessage::Binary(b))) => rec.got(&b),
                other => unexpected(&other),
            }
        }
        rec
    });
    finish(TTUNG, rec, feed)
}

fn fastwebsockets(cfg: &RunConfig, peer: usize) -> Measurement {
    use fastwebsockets::{OpCode, Role, WebSocket};
    let (sched, feed, s) = start(cfg, peer, FWS, false);
    s.set_nonblocking(true).expect("non-blocking");
    let rt = runtime();
    let rec = rt.block_on(async {
        let s = tokio::net::TcpStream::from_std(s).expect("tokio stream");
        let mut ws = WebSocket::after_handshake(s, Role::Server);
        let mut rec = Recorder::new(&sched);
        feed.go();
        while !rec.done() {
            match ws.read_frame().await {
                Ok(f) if f.opcode == OpCode::Binary && f.fin => rec.got(&f.payload),
                Ok(f) => unexpected(&(f.opcode, f.fin)),
                Err(e) => unexpected(&e),
            }
        }
        rec
    });
    finish(FWS, rec, feed)
}

/// The floors' receive buffer: whole frames are stepped over as they complete; a
/// partial frame moves to the front before the next read.
struct FloorBuf {
    buf: Vec<u8>,
    pos: usize,
    end: usize,
}

impl FloorBuf {
    fn new() -> Self {
        FloorBuf {
            buf: vec![0u8; 64 << 10],
            pos: 0,
            end: 0,
        }
    }

    /// Room to read into.
    #[inline(always)]
    fn spare(&mut self) -> &mut [u8] {
        if self.pos > 0 {
            self.buf.copy_within(self.pos..self.end, 0);
            self.end -= self.pos;
            self.pos = 0;
        }
        &mut self.buf[self.end..]
    }

    /// `n` bytes arrived: record every whole frame.
    #[inline(always)]
    fn filled(&mut self, n: usize, rec: &mut Recorder) {
        if n == 0 {
            unexpected(&"end of stream");
        }
        self.end += n;
        while self.end - self.pos >= WIRE {
            rec.got_frame(&self.buf[self.pos..self.pos + WIRE]);
            self.pos += WIRE;
        }
    }
}

fn floor(cfg: &RunConfig, peer: usize, lib: &str, spin: bool) -> Measurement {
    let (sched, feed, mut s) = start(cfg, peer, lib, false);
    s.set_nonblocking(spin).expect("socket mode");
    let mut b = FloorBuf::new();
    let mut rec = Recorder::new(&sched);
    feed.go();
    while !rec.done() {
        match s.read(b.spare()) {
            Ok(n) => b.filled(n, &mut rec),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => {
                std::hint::spin_loop()
            }
            Err(e) => unexpected(&e),
        }
    }
    finish(lib, rec, feed)
}

fn floor_tokio(cfg: &RunConfig, peer: usize) -> Measurement {
    use tokio::io::unix::AsyncFd;
    let (sched, feed, s) = start(cfg, peer, FLOOR_TOKIO, false);
    s.set_nonblocking(true).expect("non-blocking");
    let rt = runtime();
    let rec = rt.block_on(async {
        // SAFETY: the AsyncFd owns the socket: it stays open while registered.
        let s = unsafe { AsyncFd::register(s) }.unwrap_or_else(|e| unexpected(&e.to_string()));
        let mut b = FloorBuf::new();
        let mut rec = Recorder::new(&sched);
        feed.go();
        while !rec.done() {
            let mut ready = s.readable().await.unwrap_or_else(|e| unexpected(&e));
            let spare = b.spare();
            let room = spare.len();
            match s.get_ref().read(spare) {
                Ok(n) => {
                    b.filled(n, &mut rec);
                    // Drained (a short read): the next wait is for a new arrival, not
                    // a read into WouldBlock. (Only the readiness this guard saw is
                    // cleared: an arrival since then is kept.)
                    if n < room {
                        ready.clear_ready();
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => ready.clear_ready(),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => unexpected(&e),
            }
        }
        rec
    });
    finish(FLOOR_TOKIO, rec, feed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suites::Setup;
    use std::time::Duration;

    /// Every row receives a short paced feed, in order and checked, and records it.
    #[test]
    fn every_row_receives_the_feed() {
        let mut v = Vec::new();
        super::super::register(
            &Setup {
                batch: 1,
                core: 0,
                peer_core: None,
            },
            &mut v,
        );
        assert_eq!(v.len(), 10);
        let cfg = RunConfig {
            batch: 1,
            warmup: Duration::from_millis(5),
            measure: Duration::from_millis(20),
            max_samples: 0,
            count_rounds: 0,
        };
        for case in &v {
            let m = case.run(&cfg);
            assert!(m.samples() > 500, "{case:?}: {}", m.samples());
        }
        let runs = super::super::take_runs();
        assert_eq!(runs.len(), v.len());
        assert!(runs.iter().all(|r| r.lateness.len() == r.latency.len()));
    }
}
