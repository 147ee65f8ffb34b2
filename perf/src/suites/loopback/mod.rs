//! Suite "loopback": WebSocket over TCP on 127.0.0.1, two threads pinned to
//! two cores, tickwire against tungstenite and a raw-socket floor.
//!
//! Peers: tungstenite 0.30 and nexus-net 0.4.2 ([`nexus`]).
//!
//! - [`rtt`]: one connection, ping-pong of 40 B and 128 B binary messages; a
//!   sample is one round trip (B = 1). Blocking rows wait in the kernel and
//!   are dominated by its wake-ups (tens of microseconds on a VM); busy-poll
//!   rows spin on non-blocking sockets instead and sit beside them (tickwire's
//!   through its public `RecvMode::Spin` receive mode, same blocking calls).
//! - [`stream`]: one connection, receive throughput: a sender thread writes
//!   the same pre-encoded 128 B binary client frames in ~64 KiB writes for
//!   every row; the measuring thread receives them with each library (server
//!   role, so it unmasks) and a sample is B messages, reported per message
//!   (and as messages per second).
//!
//! The blocking receive-stream rows also run under `--instructions` (both
//! threads, user space): per message, the receiver's work plus its share of
//! each `read` call and of the sender's loop, which writes ~64 KiB at a time.
//!
//! The raw-socket floor moves the same byte counts as the WebSocket frames
//! (masked client frame one way, unmasked server frame back) with plain
//! `write`/`read` calls: what nobody's framing can beat.

pub(crate) mod nexus;
pub(crate) mod rtt;
pub(crate) mod stream;

use std::io::ErrorKind;
use std::net::{TcpListener, TcpStream};
use std::thread::JoinHandle;

use tickwire::socket::RecvMode;
use tickwire::ws::{Server, ServerBuilder};
use tungstenite::protocol::{Message as TMessage, WebSocket as TSocket};

use super::{Case, Setup};
use crate::machine;

/// Payload sizes of the round-trip rows.
pub const RTT_SIZES: [usize; 2] = [40, 128];

/// Payload size of the streaming rows.
pub const STREAM_SIZE: usize = 128;

/// Register the suite's rows.
pub fn register(setup: &Setup, v: &mut Vec<Case<'static>>) {
    let peer = peer_core(setup);
    let first = v.len();
    rtt::cases(peer, v);
    // Their cost is syscalls and another thread's wake-ups: not for `--instructions`.
    for c in &mut v[first..] {
        c.counts = false;
    }
    // The blocking receive-stream rows are counted (see `stream`).
    stream::cases(peer, v);
}

/// The core of the peer thread: the second of `--cores`, else the next one.
pub fn peer_core(setup: &Setup) -> usize {
    setup.peer_core.unwrap_or_else(|| {
        let n = std::thread::available_parallelism().map_or(1, |n| n.get());
        if n > 1 {
            (setup.core + 1) % n
        } else {
            setup.core
        }
    })
}

/// Bytes a frame of `len` payload bytes takes on the wire (len < 65536).
pub fn wire_len(len: usize, masked: bool) -> usize {
    crate::inputs::header_len(len, masked) + len
}

/// Spawn `f` on a thread pinned to `core`.
pub(crate) fn spawn_pinned<T: Send + 'static>(
    core: usize,
    f: impl FnOnce() -> T + Send + 'static,
) -> JoinHandle<T> {
    std::thread::Builder::new()
        .name("bench-peer".into())
        .spawn(move || {
            machine::pin(core);
            f()
        })
        .expect("spawn the peer thread")
}

/// A connected pair of plain TCP sockets on 127.0.0.1 with TCP_NODELAY.
pub(crate) fn tcp_pair() -> (TcpStream, TcpStream) {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
    let c = TcpStream::connect(l.local_addr().expect("local addr")).expect("connect");
    let (s, _) = l.accept().expect("accept");
    c.set_nodelay(true).expect("nodelay");
    s.set_nodelay(true).expect("nodelay");
    (c, s)
}

/// A tickwire server on 127.0.0.1, its connections receiving in busy-poll mode
/// (`RecvMode::Spin`) when `busy`, else sleeping in the kernel (the default).
pub(crate) fn tw_server(busy: bool) -> Server {
    let mode = if busy {
        RecvMode::Spin
    } else {
        RecvMode::Sleep
    };
    ServerBuilder::new()
        .recv_mode(mode)
        .bind("127.0.0.1:0")
        .expect("bind 127.0.0.1")
}

/// tungstenite's `read`, spinning on `WouldBlock` (which only a non-blocking socket gives).
#[inline(always)]
pub(crate) fn tung_read(ws: &mut TSocket<TcpStream>) -> Result<TMessage, tungstenite::Error> {
    loop {
        match ws.read() {
            Err(tungstenite::Error::Io(e)) if e.kind() == ErrorKind::WouldBlock => {
                std::hint::spin_loop()
            }
            r => return r,
        }
    }
}

/// tungstenite's `send`, then `flush` until nothing waits (a non-blocking socket's
/// `WouldBlock`; a blocking socket sends at once).
#[inline(always)]
pub(crate) fn tung_send(
    ws: &mut TSocket<TcpStream>,
    m: TMessage,
) -> Result<(), tungstenite::Error> {
    let mut r = ws.send(m);
    loop {
        match r {
            Err(tungstenite::Error::Io(e)) if e.kind() == ErrorKind::WouldBlock => {
                std::hint::spin_loop();
                r = ws.flush();
            }
            r => return r,
        }
    }
}

/// The payload of message `i` (binary, distinct per message).
pub(crate) fn payload(len: usize, i: u64) -> Vec<u8> {
    let mut rng = crate::inputs::SplitMix64::new(i);
    (0..len).map(|_| rng.next_u64() as u8).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::RunConfig;
    use std::time::Duration;

    /// Every loopback row verifies its echo and measures briefly.
    #[test]
    fn every_case_verifies_and_measures() {
        let mut v = Vec::new();
        register(
            &Setup {
                batch: 8,
                core: 0,
                peer_core: None,
            },
            &mut v,
        );
        assert!(v.len() >= 8);
        let cfg = RunConfig {
            batch: 8,
            warmup: Duration::ZERO,
            measure: Duration::from_millis(5),
            max_samples: 64,
            count_rounds: 0,
        };
        for case in &v {
            let m = case.run(&cfg);
            assert!(m.samples() > 0, "{case:?}");
        }
    }
}
