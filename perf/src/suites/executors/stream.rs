//! The receive-stream rows: the loopback suite's sender on the other core, the server
//! connection under test receiving on this thread's executor.

use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use futures_io::{AsyncRead, AsyncWrite};
use tickwire::futures_io::Timer;
use tickwire::futures_io::ws::{ServerBuilder, ServerConnection};
use tickwire::ws::Message;

use super::nexus_net;
use super::nexus_util::{self, NexusTcp, NexusTimer};
use crate::harness::{Measurement, RunConfig, bench_batch_async};
use crate::suites::loopback::STREAM_SIZE;
use crate::suites::loopback::stream::{
    DISTINCT, NOTE_RAW, payloads, per_sample, raw, spawn_sender,
};
use crate::suites::tokio_loopback::runtime;
use crate::suites::{Case, touch, unexpected};

/// The scenario.
pub fn name() -> String {
    format!("executors receive stream {STREAM_SIZE}B binary, per message")
}

const NOTE_TOKIO: &str = "the baseline: tokio::ws::ServerConnection::recv().await on a current_thread runtime, \
                          unmask + checks; sender (same for every row): pre-encoded masked frames, ~64 KiB per write";
const NOTE_SMOL: &str = "futures_io::ws::ServerConnection over smol::net::TcpStream, smol::block_on: \
                         recv().await, unmask + checks; same sender";
const NOTE_NEXUS: &str = "futures_io::ws::ServerConnection over nexus-async-rt's TcpStream, Runtime::block_on: \
                          recv().await, unmask + checks; same sender";

pub(super) fn cases(peer: usize, v: &mut Vec<Case<'static>>) {
    let first = v.len();
    let s = name();
    v.push(Case::new(
        &s,
        "tickwire (tokio)",
        true,
        NOTE_TOKIO,
        move |cfg| tokio_row(cfg, peer),
    ));
    v.push(Case::new(
        &s,
        "tickwire futures-io (smol)",
        false,
        NOTE_SMOL,
        move |cfg| smol_row(cfg, peer),
    ));
    v.push(Case::new(
        &s,
        "tickwire futures-io (nexus-async-rt)",
        false,
        NOTE_NEXUS,
        move |cfg| nexus_row(cfg, peer),
    ));
    v.push(Case::new(
        &s,
        nexus_net::LIB,
        false,
        nexus_net::NOTE_STREAM,
        move |cfg| nexus_net::stream_row(cfg, peer),
    ));
    v.push(Case::new(
        &s,
        "raw TCP (floor)",
        false,
        NOTE_RAW,
        move |cfg| raw(cfg, peer, false),
    ));
    // As the loopback suite's stream rows: the sender keeps filling the socket while
    // a row waits for a turn, so these run in rounds of whole runs instead.
    for c in &mut v[first..] {
        c.interleave = false;
    }
}

/// The sender on `peer`, connected to `addr`, handshake first.
pub(super) fn start_sender(
    addr: SocketAddr,
    peer: usize,
) -> (std::thread::JoinHandle<()>, Arc<AtomicBool>) {
    let sock = TcpStream::connect(addr).expect("connect");
    sock.set_nodelay(true).expect("nodelay");
    let stop = Arc::new(AtomicBool::new(false));
    (spawn_sender(peer, sock, true, stop.clone()), stop)
}

/// Stop the sender and wait for it: call after the receiving connection is dropped
/// (a sender blocked in a write then fails and ends).
pub(super) fn stop_sender(sender: std::thread::JoinHandle<()>, stop: Arc<AtomicBool>) {
    stop.store(true, Ordering::Relaxed);
    sender.join().expect("sender thread");
}

/// Check the first messages, then measure.
async fn measure<S, Tm>(cfg: RunConfig, c: &mut ServerConnection<S, Tm>) -> Measurement
where
    S: AsyncRead + AsyncWrite + Unpin,
    Tm: Timer,
{
    for (i, want) in payloads().iter().cycle().take(2 * DISTINCT).enumerate() {
        match c.recv().await {
            Ok(Some(Message::Binary(b))) => assert_eq!(b, &want[..], "message {i}"),
            other => unexpected(&other),
        }
    }
    bench_batch_async(&per_sample(&cfg), c, async |c, n| {
        let mut acc = 0u64;
        for _ in 0..n {
            match c.recv().await {
                Ok(Some(Message::Binary(b))) if b.len() == STREAM_SIZE => {
                    acc = acc.wrapping_add(touch(b));
                }
                other => unexpected(&other),
            }
        }
        std::hint::black_box(acc);
    })
    .await
}

fn tokio_row(cfg: &RunConfig, peer: usize) -> Measurement {
    let rt = runtime();
    rt.block_on(async {
        let mut server = tickwire::tokio::ws::Server::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let (sender, stop) = start_sender(server.local_addr().expect("addr"), peer);
        let mut c = server.accept().await.expect("accept");
        for (i, want) in payloads().iter().cycle().take(2 * DISTINCT).enumerate() {
            match c.recv().await {
                Ok(Some(Message::Binary(b))) => assert_eq!(b, &want[..], "message {i}"),
                other => unexpected(&other),
            }
        }
        let m = bench_batch_async(&per_sample(cfg), &mut c, async |c, n| {
            let mut acc = 0u64;
            for _ in 0..n {
                match c.recv().await {
                    Ok(Some(Message::Binary(b))) if b.len() == STREAM_SIZE => {
                        acc = acc.wrapping_add(touch(b));
                    }
                    other => unexpected(&other),
                }
            }
            std::hint::black_box(acc);
        })
        .await;
        drop(c);
        stop_sender(sender, stop);
        m
    })
}

fn smol_row(cfg: &RunConfig, peer: usize) -> Measurement {
    let cfg = *cfg;
    smol::block_on(async move {
        let listener = smol::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let (sender, stop) = start_sender(listener.local_addr().expect("addr"), peer);
        let (tcp, _) = listener.accept().await.expect("accept");
        let mut c = ServerBuilder::new().accept_stream(tcp).expect("accept");
        let m = measure(cfg, &mut c).await;
        drop(c);
        stop_sender(sender, stop);
        m
    })
}

fn nexus_row(cfg: &RunConfig, peer: usize) -> Measurement {
    let cfg = *cfg;
    nexus_util::block_on(async move {
        let mut listener =
            nexus_async_rt::TcpListener::bind("127.0.0.1:0".parse().expect("addr")).expect("bind");
        let (sender, stop) = start_sender(listener.local_addr().expect("addr"), peer);
        let (tcp, _) = listener.accept().await.expect("accept");
        let mut c = ServerBuilder::new()
            .timer::<NexusTimer>()
            .accept_stream(NexusTcp(tcp))
            .expect("accept");
        let m = measure(cfg, &mut c).await;
        drop(c);
        stop_sender(sender, stop);
        m
    })
}
