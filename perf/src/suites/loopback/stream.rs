//! One-connection throughput: a sender thread on the other core streams
//! 128 B binary messages (client role: masked) as fast as it can; the
//! measuring thread receives them (server role: unmasks, checks). A sample
//! is [`PER_SAMPLE`] messages received; the table shows per-message ticks and
//! messages per second at the median.

use std::io::{ErrorKind, Read};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tickwire::ws::{Client, Message, Server};
use tungstenite::Bytes;
use tungstenite::protocol::{Message as TMessage, Role as TRole, WebSocket as TSocket};

use super::{STREAM_SIZE, payload, spawn_pinned, tcp_pair, wire_len};
use crate::harness::{Measurement, RunConfig, bench_batch};
use crate::inputs::{OP_BINARY, push_frame};
use crate::suites::{Case, touch, unexpected};

/// Messages per sample.
pub const PER_SAMPLE: usize = 256;

/// Distinct payloads the sender cycles through.
const DISTINCT: usize = 16;

const NOTE_TW: &str = "sender: ws::Client::send_binary (blocking, one write per message, fresh mask key); \
                       receiver: ws::ServerConnection::recv (blocking), unmask + checks";
const NOTE_TUNG: &str = "sender: WebSocket::send(Message::Binary) over std TcpStream (write + flush per message); \
                         receiver: WebSocket::read; default config, no handshake";
const NOTE_RAW: &str = "the floor: the sender writes each masked frame's bytes with one write; the receiver reads \
                        into a 64 KiB buffer and counts bytes (no framing, no unmasking)";

/// Scenario name.
pub fn name() -> String {
    format!("tcp loopback stream {STREAM_SIZE}B binary, per message (blocking)")
}

pub(super) fn cases(peer: usize, v: &mut Vec<Case<'static>>) {
    let first = v.len();
    let s = name();
    v.push(Case::new(
        s.clone(),
        "tickwire",
        true,
        NOTE_TW,
        move |cfg| tickwire(cfg, peer),
    ));
    v.push(Case::new(
        s.clone(),
        "tungstenite 0.30",
        false,
        NOTE_TUNG,
        move |cfg| tungstenite(cfg, peer),
    ));
    v.push(Case::new(
        s,
        "raw TCP (floor)",
        false,
        NOTE_RAW,
        move |cfg| raw(cfg, peer),
    ));
    // The writer keeps filling the socket while its row waits for a turn: the
    // row would come back to a backlog and read faster than it keeps pace.
    for c in &mut v[first..] {
        c.interleave = false;
    }
}

fn per_sample(cfg: &RunConfig) -> RunConfig {
    RunConfig {
        batch: PER_SAMPLE,
        ..*cfg
    }
}

fn payloads() -> Vec<Vec<u8>> {
    (0..DISTINCT as u64)
        .map(|i| payload(STREAM_SIZE, 100 + i))
        .collect()
}

fn tickwire(cfg: &RunConfig, peer: usize) -> Measurement {
    let mut server = Server::bind("127.0.0.1:0").expect("bind 127.0.0.1");
    let url = format!("ws://{}/", server.local_addr().expect("local addr"));
    let stop = Arc::new(AtomicBool::new(false));
    let ps = payloads();
    let sender = {
        let (stop, ps) = (stop.clone(), ps.clone());
        spawn_pinned(peer, move || {
            let mut c = Client::connect(&url).expect("connect");
            let mut i = 0;
            while !stop.load(Ordering::Relaxed) {
                if c.send_binary(&ps[i % DISTINCT]).is_err() {
                    return;
                }
                i += 1;
            }
        })
    };
    let mut c = server.accept().expect("accept + handshake");
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
    while let Ok(Some(_)) = c.recv() {}
    sender.join().expect("sender thread");
    m
}

fn tungstenite(cfg: &RunConfig, peer: usize) -> Measurement {
    let (c, s) = tcp_pair();
    let stop = Arc::new(AtomicBool::new(false));
    let ps = payloads();
    let sender = {
        let stop = stop.clone();
        let ps: Vec<Bytes> = ps.iter().cloned().map(Bytes::from).collect();
        spawn_pinned(peer, move || {
            let mut ws = TSocket::from_raw_socket(c, TRole::Client, None);
            let mut i = 0;
            while !stop.load(Ordering::Relaxed) {
                if ws.send(TMessage::Binary(ps[i % DISTINCT].clone())).is_err() {
                    return;
                }
                i += 1;
            }
        })
    };
    let mut ws = TSocket::from_raw_socket(s, TRole::Server, None);
    for (i, want) in ps.iter().cycle().take(2 * DISTINCT).enumerate() {
        match ws.read() {
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
                match ws.read() {
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
    while ws.read().is_ok() {}
    sender.join().expect("sender thread");
    m
}

fn raw(cfg: &RunConfig, peer: usize) -> Measurement {
    use std::io::Write;
    let frame_len = wire_len(STREAM_SIZE, true);
    let mut frames = Vec::new();
    let mut rng = crate::inputs::SplitMix64::new(7);
    for p in payloads() {
        push_frame(&mut frames, OP_BINARY, &p, Some(rng.key()));
    }
    let (mut c, mut s) = tcp_pair();
    let stop = Arc::new(AtomicBool::new(false));
    let sender = {
        let (stop, frames) = (stop.clone(), frames.clone());
        spawn_pinned(peer, move || {
            let mut i = 0;
            while !stop.load(Ordering::Relaxed) {
                let at = (i % DISTINCT) * frame_len;
                if c.write_all(&frames[at..at + frame_len]).is_err() {
                    return;
                }
                i += 1;
            }
        })
    };
    let mut first = vec![0u8; frames.len()];
    s.read_exact(&mut first).expect("read the first frames");
    assert_eq!(first, frames, "raw stream bytes");
    // `have`: bytes received beyond the messages already counted.
    let mut st = (s, vec![0u8; 1 << 16], 0usize);
    let m = bench_batch(
        &per_sample(cfg),
        &mut st,
        |_| {},
        |(s, buf, have), n| {
            let need = n * frame_len;
            while *have < need {
                match s.read(buf) {
                    Ok(0) => unexpected(&"end of stream"),
                    Ok(k) => *have += k,
                    Err(e) if e.kind() == ErrorKind::Interrupted => {}
                    Err(e) => unexpected(&e),
                }
            }
            *have -= need;
            std::hint::black_box(touch(buf));
        },
    );
    stop.store(true, Ordering::Relaxed);
    let (mut s, mut buf, _) = st;
    while matches!(s.read(&mut buf), Ok(k) if k > 0) {}
    sender.join().expect("sender thread");
    m
}
