//! Round trip on one connection: the measuring thread (client role) sends a
//! binary message and waits for its echo from a server thread on the other
//! core. A sample is one round trip (B = 1, so the timer is ~0.2% of it).

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use tickwire::socket::RecvMode;
use tickwire::ws::{Client, ClientBuilder, Message, Sender, ServerConnection};
use tungstenite::Bytes;
use tungstenite::protocol::{Message as TMessage, Role as TRole, WebSocket as TSocket};

use super::{nexus, payload, spawn_pinned, tcp_pair, tung_read, tung_send, tw_server, wire_len};
use crate::harness::{Measurement, RunConfig, bench_batch};
use crate::suites::{Case, touch, unexpected};

const NOTE_TW: &str = "ws::Client::send_binary + recv (blocking, no timeouts: sleeps in read(2) on the \
                       socket, put in blocking mode) against a \
                       ws::ServerConnection echoing on the other core; client frames masked with a fresh key";
const NOTE_TW_TIMEOUT: &str = "the same with read_timeout(Some(10 s)): the wait is still one read(2) on the \
                               blocking socket, bounded by its SO_RCVTIMEO (set once), plus one clock read \
                               per waiting recv";
const NOTE_TW_BUSY: &str = "the same blocking send_binary + recv, both ends built with \
                            recv_mode(RecvMode::Spin): recv spins on non-blocking reads instead of \
                            sleeping in read(2)";
const NOTE_TUNG: &str = "WebSocket::send(Message::Binary) + read over std TcpStream (TCP_NODELAY) against a \
                         tungstenite echo server on the other core; default config, no handshake";
const NOTE_TUNG_BUSY: &str = "the same on non-blocking sockets at both ends, spinning on its WouldBlock \
                              error (reads; a send that would block is flushed until it went)";
const NOTE_RAW: &str = "the floor: write the masked frame's byte count, read the echo's byte count \
                        (plain blocking TcpStream, TCP_NODELAY, no framing)";
const NOTE_RAW_BUSY: &str =
    "the busy-poll floor: the same byte counts on non-blocking sockets, spinning on WouldBlock";

/// Scenario name of the blocking round trip of `n` bytes.
pub fn name(n: usize, busy: bool) -> String {
    let mode = if busy { "busy-poll" } else { "blocking" };
    format!("tcp loopback round trip {n}B binary ({mode})")
}

pub(super) fn cases(peer: usize, v: &mut Vec<Case<'static>>) {
    for n in super::RTT_SIZES {
        let s = name(n, false);
        v.push(Case::new(
            s.clone(),
            "tickwire",
            true,
            NOTE_TW,
            move |cfg| tickwire(cfg, peer, n, false, None),
        ));
        v.push(Case::new(
            s.clone(),
            "tickwire (read timeout)",
            false,
            NOTE_TW_TIMEOUT,
            move |cfg| tickwire(cfg, peer, n, false, Some(READ_TIMEOUT)),
        ));
        v.push(Case::new(
            s.clone(),
            "tungstenite 0.30",
            false,
            NOTE_TUNG,
            move |cfg| tungstenite(cfg, peer, n, false),
        ));
        v.push(Case::new(
            s.clone(),
            nexus::LIB,
            false,
            nexus::NOTE_RTT,
            move |cfg| nexus::v04::rtt(cfg, peer, n, false),
        ));
        v.push(Case::new(
            s.clone(),
            nexus::LIB_07,
            false,
            nexus::NOTE_RTT,
            move |cfg| nexus::v07::rtt(cfg, peer, n, false),
        ));
        v.push(Case::new(
            s,
            "raw TCP (floor)",
            false,
            NOTE_RAW,
            move |cfg| raw(cfg, peer, n, false),
        ));
        let s = name(n, true);
        v.push(
            Case::new(s.clone(), "tickwire", true, NOTE_TW_BUSY, move |cfg| {
                tickwire(cfg, peer, n, true, None)
            })
            // A busy-polling echo spins on the peer core even while its row waits for its turn.
            .sequential(),
        );
        v.push(
            Case::new(
                s.clone(),
                "tungstenite 0.30",
                false,
                NOTE_TUNG_BUSY,
                move |cfg| tungstenite(cfg, peer, n, true),
            )
            .sequential(),
        );
        for (lib, v07) in [(nexus::LIB, false), (nexus::LIB_07, true)] {
            v.push(
                Case::new(s.clone(), lib, false, nexus::NOTE_RTT_BUSY, move |cfg| {
                    if v07 {
                        nexus::v07::rtt(cfg, peer, n, true)
                    } else {
                        nexus::v04::rtt(cfg, peer, n, true)
                    }
                })
                .sequential(),
            );
        }
        v.push(
            Case::new(s, "raw TCP (floor)", false, NOTE_RAW_BUSY, move |cfg| {
                raw(cfg, peer, n, true)
            })
            .sequential(),
        );
    }
}

/// One round per sample.
fn one(cfg: &RunConfig) -> RunConfig {
    RunConfig { batch: 1, ..*cfg }
}

/// Send everything buffered (evented mode spins until the socket took it).
fn flush_all(c: &mut ServerConnection) -> bool {
    loop {
        match c.flush() {
            Ok(()) if !c.wants_write() => return true,
            Ok(()) => std::hint::spin_loop(),
            Err(_) => return false,
        }
    }
}

/// The echo server: every binary message goes back as it came (ws:// here, wss://
/// for the TLS rows). `busy`: spin on `try_recv` in evented mode (the TLS busy-poll
/// rows); the rows here pass `false` and get their mode from the builder's
/// `recv_mode`.
pub(crate) fn tw_echo(mut c: ServerConnection, busy: bool) {
    if busy {
        c.set_blocking(false).expect("evented mode");
    }
    // Each binary message goes back from the read buffer, inside `recv_with`.
    let echo = |msg: Message<'_>, tx: &mut Sender<'_>| match msg {
        Message::Binary(b) => tx.send_binary(b),
        _ => Ok(()),
    };
    loop {
        let got = if busy {
            c.try_recv_with(echo)
        } else {
            c.recv_with(echo)
        };
        match got {
            Ok(Some(())) => {}
            Ok(None) if busy && !c.is_closed() => {
                std::hint::spin_loop();
                continue;
            }
            Ok(None) | Err(_) => return,
        }
        if !flush_all(&mut c) {
            return;
        }
    }
}

/// Send `p` and wait for a binary message (blocking API: in `RecvMode::Spin` the wait
/// spins inside `recv`); returns its last byte (and checks its length).
#[inline(always)]
pub(crate) fn tw_round(c: &mut Client, p: &[u8]) -> u64 {
    if let Err(e) = c.send_binary(p) {
        unexpected(&e);
    }
    match c.recv() {
        Ok(Some(Message::Binary(b))) if b.len() == p.len() => touch(b),
        other => unexpected(&other),
    }
}

/// Blocking rows sleep in the kernel (the default); busy-poll rows use the public
/// busy-poll receive mode on both ends, with the same blocking calls.
/// The read timeout of the "read timeout" rows: never reached, only set.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

fn tickwire(
    cfg: &RunConfig,
    peer: usize,
    n: usize,
    busy: bool,
    read_timeout: Option<Duration>,
) -> Measurement {
    let mode = if busy {
        RecvMode::Spin
    } else {
        RecvMode::Sleep
    };
    let mut server = tw_server(busy);
    let url = format!("ws://{}/", server.local_addr().expect("local addr"));
    let echo = spawn_pinned(peer, move || {
        let mut c = server.accept().expect("accept");
        c.handshake().expect("handshake");
        tw_echo(c, false);
    });
    let mut c = ClientBuilder::new()
        .recv_mode(mode)
        .read_timeout(read_timeout)
        .connect(&url)
        .expect("connect");
    let p = payload(n, 1);
    // Verify the echo once (blocking), then switch modes.
    c.send_binary(&p).expect("send");
    match c.recv() {
        Ok(Some(Message::Binary(b))) => assert_eq!(b, &p[..], "echo"),
        other => unexpected(&other),
    }
    let m = bench_batch(
        &one(cfg),
        &mut c,
        |_| {},
        |c, _| {
            std::hint::black_box(tw_round(c, &p));
        },
    );
    drop(c);
    echo.join().expect("echo thread");
    m
}

/// tungstenite at both ends; `busy`: on non-blocking sockets, spinning on `WouldBlock`.
fn tungstenite(cfg: &RunConfig, peer: usize, n: usize, busy: bool) -> Measurement {
    let (c, s) = tcp_pair();
    c.set_nonblocking(busy).expect("mode");
    s.set_nonblocking(busy).expect("mode");
    let echo = spawn_pinned(peer, move || {
        let mut ws = TSocket::from_raw_socket(s, TRole::Server, None);
        loop {
            match tung_read(&mut ws) {
                Ok(TMessage::Binary(b)) => {
                    if tung_send(&mut ws, TMessage::Binary(b)).is_err() {
                        return;
                    }
                }
                Ok(_) => {}
                Err(_) => return,
            }
        }
    });
    let mut ws = TSocket::from_raw_socket(c, TRole::Client, None);
    let p = Bytes::from(payload(n, 1));
    tung_send(&mut ws, TMessage::Binary(p.clone())).expect("send");
    match tung_read(&mut ws) {
        Ok(TMessage::Binary(b)) => assert_eq!(b, p, "echo"),
        other => unexpected(&other),
    }
    let m = bench_batch(
        &one(cfg),
        &mut ws,
        |_| {},
        |ws, _| {
            if let Err(e) = tung_send(ws, TMessage::Binary(p.clone())) {
                unexpected(&e);
            }
            match tung_read(ws) {
                Ok(TMessage::Binary(b)) if b.len() == p.len() => {
                    std::hint::black_box(touch(&b));
                }
                other => unexpected(&other),
            }
        },
    );
    drop(ws);
    echo.join().expect("echo thread");
    m
}

/// `read_exact`, spinning on `WouldBlock` for a non-blocking socket; false at end of stream.
#[inline(always)]
fn read_all(s: &mut TcpStream, mut buf: &mut [u8]) -> bool {
    while !buf.is_empty() {
        match s.read(buf) {
            Ok(0) => return false,
            Ok(k) => buf = &mut buf[k..],
            Err(e) if e.kind() == ErrorKind::WouldBlock => std::hint::spin_loop(),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
    true
}

/// `write_all`, spinning on `WouldBlock`; false on error.
#[inline(always)]
fn write_all(s: &mut TcpStream, mut buf: &[u8]) -> bool {
    while !buf.is_empty() {
        match s.write(buf) {
            Ok(0) => return false,
            Ok(k) => buf = &buf[k..],
            Err(e) if e.kind() == ErrorKind::WouldBlock => std::hint::spin_loop(),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
    true
}

fn raw(cfg: &RunConfig, peer: usize, n: usize, busy: bool) -> Measurement {
    let (up, down) = (wire_len(n, true), wire_len(n, false));
    let (mut c, mut s) = tcp_pair();
    c.set_nonblocking(busy).expect("mode");
    s.set_nonblocking(busy).expect("mode");
    let echo = spawn_pinned(peer, move || {
        let mut buf = vec![0u8; up.max(down)];
        while read_all(&mut s, &mut buf[..up]) && write_all(&mut s, &buf[..down]) {}
    });
    let out = payload(up, 1);
    let mut back = vec![0u8; down];
    assert!(write_all(&mut c, &out) && read_all(&mut c, &mut back));
    assert_eq!(back, out[..down], "echo");
    let mut st = (c, back);
    let m = bench_batch(
        &one(cfg),
        &mut st,
        |_| {},
        |(c, back), _| {
            if !(write_all(c, &out) && read_all(c, back)) {
                unexpected(&"raw echo failed");
            }
            std::hint::black_box(touch(back));
        },
    );
    drop(st);
    echo.join().expect("echo thread");
    m
}
