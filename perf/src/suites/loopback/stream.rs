//! One-connection receive throughput: a sender thread on the other core
//! streams 128 B binary client frames (masked) as fast as the kernel takes
//! them; the measuring thread receives them with the library under test
//! (server role: unmasks, checks). A sample is [`PER_SAMPLE`] messages
//! received; the table shows per-message ticks and messages per second at
//! the median.
//!
//! The sender is the same for every row: it writes the same pre-encoded
//! frames in [`BLOCK`]-frame writes (about 64 KiB each), so it is not the
//! bottleneck of a library row and the rows differ only in the receiving library. (With a
//! library sender and one write per message, the row measured the sender's
//! `sendto` rate and the scheduler's wake-ups, the same for everyone.) For
//! tickwire (and nexus-net) the sender first does a real opening handshake
//! with the server.
//!
//! Two scenarios: blocking (every receiver sleeps in `read(2)` when it has
//! no whole frame) and busy-poll (every receiver reads a non-blocking socket
//! and spins on `WouldBlock`: tickwire through its public
//! `RecvMode::Spin`). Each has its floor: the same `read` calls as
//! tickwire's reader makes, into a buffer of the same size (a server
//! connection's read buffer starts at 4 KiB and doubles after each read that
//! filled it, up to 1 MiB; the floor does the same), without the parse.
//!
//! The blocking rows are also counted under `--instructions` (both threads,
//! user space: the receiver's work per message, the sender's
//! few instructions per 480 frames, and each `read` call's share); the
//! busy-poll rows are not (their spins depend on timing).

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tickwire::ws::Message;
use tungstenite::protocol::{Message as TMessage, Role as TRole, WebSocket as TSocket};

use super::{STREAM_SIZE, nexus, payload, spawn_pinned, tcp_pair, tung_read, tw_server, wire_len};
use crate::harness::{Measurement, RunConfig, bench_batch};
use crate::inputs::{OP_BINARY, push_frame};
use crate::suites::{Case, touch, unexpected};

/// Messages per sample: about 4.4 MB, so that every sample spans several
/// reads (tickwire reads up to its 1 MiB buffer at a time, the floor the
/// same) and the per-sample median is the throughput, not the cost of the
/// samples that found their messages already in the read buffer.
pub const PER_SAMPLE: usize = 32 * 1024;

/// Distinct payloads the sender cycles through.
pub(crate) const DISTINCT: usize = 16;

/// Frames per sender write: 480 x 136 B = 65,280 B.
const BLOCK: usize = 30 * DISTINCT;

const NOTE_TW: &str = "receiver: ws::ServerConnection::recv (blocking), unmask + checks; \
                       sender (same for every row): pre-encoded masked frames, ~64 KiB per write";
const NOTE_TW_BUSY: &str = "receiver: ws::ServerConnection::recv, the server built with \
                            recv_mode(RecvMode::Spin): non-blocking reads, spinning on WouldBlock; \
                            unmask + checks; sender (same for every row): pre-encoded masked frames, \
                            ~64 KiB per write";
const NOTE_TUNG: &str = "receiver: WebSocket::read over std TcpStream, default config, no handshake; \
                         sender (same for every row): pre-encoded masked frames, ~64 KiB per write";
const NOTE_TUNG_BUSY: &str = "the same on a non-blocking socket, spinning on its WouldBlock error";
pub(crate) const NOTE_RAW: &str = "the floor: the receiver reads the way tickwire's reader does (a buffer that starts \
                        at 4 KiB and doubles after a read that filled it, up to 1 MiB, as a server \
                        connection's does; a read into its free tail when less than a frame is buffered, \
                        the partial frame moved to the front when the tail is down to a quarter) and steps \
                        over whole frames (no header parse, no unmasking): the same system calls with the \
                        same room as the row it bounds; sender (same for every row): pre-encoded masked \
                        frames, ~64 KiB per write";
const NOTE_RAW_SPIN: &str = "the floor of the busy-poll rows: the blocking floor's reads on a non-blocking \
                             socket, spinning on WouldBlock";

/// Scenario name.
pub fn name(busy: bool) -> String {
    let mode = if busy { "busy-poll" } else { "blocking" };
    format!("tcp loopback receive stream {STREAM_SIZE}B binary, per message ({mode})")
}

pub(super) fn cases(peer: usize, v: &mut Vec<Case<'static>>) {
    for busy in [false, true] {
        let first = v.len();
        let s = name(busy);
        v.push(Case::new(
            s.clone(),
            "tickwire",
            true,
            if busy { NOTE_TW_BUSY } else { NOTE_TW },
            move |cfg| tickwire(cfg, peer, busy),
        ));
        v.push(Case::new(
            s.clone(),
            "tungstenite 0.30",
            false,
            if busy { NOTE_TUNG_BUSY } else { NOTE_TUNG },
            move |cfg| tungstenite(cfg, peer, busy),
        ));
        v.push(Case::new(
            s.clone(),
            nexus::LIB,
            false,
            if busy {
                nexus::NOTE_STREAM_BUSY
            } else {
                nexus::NOTE_STREAM
            },
            move |cfg| nexus_net(cfg, peer, busy),
        ));
        v.push(Case::new(
            s,
            if busy {
                "raw TCP, spinning (floor)"
            } else {
                "raw TCP (floor)"
            },
            false,
            if busy { NOTE_RAW_SPIN } else { NOTE_RAW },
            move |cfg| raw(cfg, peer, busy),
        ));
        // The sender keeps filling the socket while its row waits for a turn: the
        // row would come back to a full socket buffer, which flatters a receiver
        // that is faster than the sender (the raw floor), so these rows do not
        // take turns: they run in rounds of whole runs, each on a new connection.
        // Blocking rows are counted too (`--instructions`); spinning ones are not.
        for c in &mut v[first..] {
            c.interleave = false;
            c.counts = !busy;
        }
    }
}

/// The sender's bytes: [`BLOCK`] masked client frames cycling through
/// [`payloads`], each with its own key.
fn block() -> Vec<u8> {
    let ps = payloads();
    let mut rng = crate::inputs::SplitMix64::new(7);
    let mut out = Vec::with_capacity(BLOCK * wire_len(STREAM_SIZE, true));
    for i in 0..BLOCK {
        push_frame(&mut out, OP_BINARY, &ps[i % DISTINCT], Some(rng.key()));
    }
    out
}

/// Start the sender on `peer`: optionally a client opening handshake
/// (request written, the 101 response read to its end), then [`block`]
/// written again and again until `stop` or an error.
pub(crate) fn spawn_sender(
    peer: usize,
    mut sock: TcpStream,
    handshake: bool,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<()> {
    spawn_pinned(peer, move || {
        if handshake {
            client_handshake(&mut sock);
        }
        let bytes = block();
        while !stop.load(Ordering::Relaxed) {
            if sock.write_all(&bytes).is_err() {
                return;
            }
        }
    })
}

/// A client's opening handshake on `sock` by hand (request written, the 101 response
/// read to its end), for a sender of pre-encoded frames to a WebSocket server.
pub(crate) fn client_handshake(sock: &mut TcpStream) {
    let req = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n\
               Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
               Sec-WebSocket-Version: 13\r\n\r\n";
    sock.write_all(req.as_bytes()).expect("write the handshake");
    let mut resp = Vec::new();
    let mut byte = [0u8; 1];
    while !resp.ends_with(b"\r\n\r\n") {
        sock.read_exact(&mut byte).expect("read the 101 response");
        resp.push(byte[0]);
    }
    assert!(resp.starts_with(b"HTTP/1.1 101"), "handshake refused");
}

pub(crate) fn per_sample(cfg: &RunConfig) -> RunConfig {
    RunConfig {
        batch: PER_SAMPLE,
        ..*cfg
    }
}

pub(crate) fn payloads() -> Vec<Vec<u8>> {
    (0..DISTINCT as u64)
        .map(|i| payload(STREAM_SIZE, 100 + i))
        .collect()
}

fn tickwire(cfg: &RunConfig, peer: usize, busy: bool) -> Measurement {
    let mut server = tw_server(busy);
    let sock = TcpStream::connect(server.local_addr().expect("local addr")).expect("connect");
    sock.set_nodelay(true).expect("nodelay");
    let stop = Arc::new(AtomicBool::new(false));
    let sender = spawn_sender(peer, sock, true, stop.clone());
    let ps = payloads();
    let mut c = server.accept().expect("accept");
    c.handshake().expect("handshake");
    for (i, want) in ps.iter().cycle().take(2 * DISTINCT).enumerate() {
        match c.recv() {
            Ok(Some(Message::Binary(b))) => assert_eq!(b, &want[..], "message {i}"),
            other => unexpected(&other),
        }
    }
    let m = bench_batch(
        &per_sample(cfg),
        &mut c,
        |_| {},
        |c, n| {
            let mut acc = 0u64;
            for _ in 0..n {
                match c.recv() {
                    Ok(Some(Message::Binary(b))) if b.len() == STREAM_SIZE => {
                        acc = acc.wrapping_add(touch(b));
                    }
                    other => unexpected(&other),
                }
            }
            std::hint::black_box(acc);
        },
    );
    stop.store(true, Ordering::Relaxed);
    drop(c);
    sender.join().expect("sender thread");
    m
}

fn tungstenite(cfg: &RunConfig, peer: usize, busy: bool) -> Measurement {
    let (c, s) = tcp_pair();
    s.set_nonblocking(busy).expect("socket mode");
    let stop = Arc::new(AtomicBool::new(false));
    let sender = spawn_sender(peer, c, false, stop.clone());
    let ps = payloads();
    let mut ws = TSocket::from_raw_socket(s, TRole::Server, None);
    for (i, want) in ps.iter().cycle().take(2 * DISTINCT).enumerate() {
        match tung_read(&mut ws) {
            Ok(TMessage::Binary(b)) => assert_eq!(&b[..], &want[..], "message {i}"),
            other => unexpected(&other),
        }
    }
    let m = bench_batch(
        &per_sample(cfg),
        &mut ws,
        |_| {},
        |ws, n| {
            let mut acc = 0u64;
            for _ in 0..n {
                match tung_read(ws) {
                    Ok(TMessage::Binary(b)) if b.len() == STREAM_SIZE => {
                        acc = acc.wrapping_add(touch(&b));
                    }
                    other => unexpected(&other),
                }
            }
            std::hint::black_box(acc);
        },
    );
    stop.store(true, Ordering::Relaxed);
    drop(ws);
    sender.join().expect("sender thread");
    m
}

fn nexus_net(cfg: &RunConfig, peer: usize, busy: bool) -> Measurement {
    let (c, s) = tcp_pair();
    let stop = Arc::new(AtomicBool::new(false));
    let sender = spawn_sender(peer, c, true, stop.clone());
    let ps = payloads();
    let mut ws = nexus::stream_receiver(s);
    if busy {
        ws.stream()
            .set_nonblocking(true)
            .expect("non-blocking socket");
    }
    for want in ps.iter().cycle().take(2 * DISTINCT) {
        nexus::stream_check(&mut ws, want, busy);
    }
    let m = bench_batch(
        &per_sample(cfg),
        &mut ws,
        |_| {},
        |ws, n| {
            let mut acc = 0u64;
            for _ in 0..n {
                acc = acc.wrapping_add(nexus::stream_recv(ws, STREAM_SIZE, busy));
            }
            std::hint::black_box(acc);
        },
    );
    stop.store(true, Ordering::Relaxed);
    drop(ws);
    sender.join().expect("sender thread");
    m
}

/// The floor's receive buffer: tickwire's `FrameReader` discipline (its
/// `spare_mut`) and a server connection's buffer growth, without the parse, so
/// the floor makes the same `read` calls with the same buffer room as the
/// library row it bounds.
struct FloorReader {
    s: TcpStream,
    buf: Vec<u8>,
    /// Start of the bytes not yet stepped over.
    pos: usize,
    /// End of the bytes received.
    end: usize,
}

impl FloorReader {
    /// A server connection's read buffer to begin with
    /// (`ws::ServerBuilder::initial_buffer_size`, default 4 KiB) ...
    const INITIAL: usize = 4096;
    /// ... and the most it grows to (`read_buffer_size`, default 1 MiB).
    const MAX: usize = 1 << 20;

    fn new(s: TcpStream) -> Self {
        FloorReader {
            s,
            buf: vec![0u8; Self::INITIAL],
            pos: 0,
            end: 0,
        }
    }

    /// Step over one frame of `len` wire bytes, reading first if fewer are
    /// buffered; returns the frame's last byte.
    #[inline(always)]
    fn frame(&mut self, len: usize) -> u8 {
        while self.end - self.pos < len {
            self.read();
        }
        self.pos += len;
        self.buf[self.pos - 1]
    }

    #[inline(never)]
    fn read(&mut self) {
        // tickwire's `spare_mut`: an empty buffer starts over at 0; otherwise the
        // unread bytes move to the front when the free tail is down to a quarter.
        let cap = self.buf.len();
        if self.pos == self.end {
            self.pos = 0;
            self.end = 0;
        } else if self.pos > 0 && cap - self.end <= cap / 4 {
            self.buf.copy_within(self.pos..self.end, 0);
            self.end -= self.pos;
            self.pos = 0;
        }
        let asked = cap - self.end;
        match self.s.read(&mut self.buf[self.end..]) {
            Ok(0) => unexpected(&"end of stream"),
            Ok(k) => {
                self.end += k;
                // A server connection's growth: the read took all the room (the
                // socket has more), so the buffer doubles, live bytes copied over.
                if k == asked && cap < Self::MAX {
                    let mut bigger = vec![0u8; (cap * 2).min(Self::MAX)];
                    bigger[..self.end].copy_from_slice(&self.buf[..self.end]);
                    self.buf = bigger;
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted || e.kind() == ErrorKind::WouldBlock => {
                std::hint::spin_loop()
            }
            Err(e) => unexpected(&e),
        }
    }
}

pub(crate) fn raw(cfg: &RunConfig, peer: usize, spin: bool) -> Measurement {
    let frame_len = wire_len(STREAM_SIZE, true);
    let (c, s) = tcp_pair();
    s.set_nonblocking(spin).expect("socket mode");
    let stop = Arc::new(AtomicBool::new(false));
    let sender = spawn_sender(peer, c, false, stop.clone());
    let want = block();
    let mut r = FloorReader::new(s);
    for (i, w) in want.chunks(frame_len).enumerate() {
        r.frame(frame_len);
        assert_eq!(&r.buf[r.pos - frame_len..r.pos], w, "raw stream frame {i}");
    }
    let mut st = r;
    let m = bench_batch(
        &per_sample(cfg),
        &mut st,
        |_| {},
        |r, n| {
            let mut acc = 0u64;
            for _ in 0..n {
                acc = acc.wrapping_add(u64::from(r.frame(frame_len)));
            }
            std::hint::black_box(acc);
        },
    );
    stop.store(true, Ordering::Relaxed);
    drop(st);
    sender.join().expect("sender thread");
    m
}
