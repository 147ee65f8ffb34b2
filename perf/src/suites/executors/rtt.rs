//! The round-trip rows: one 40 B binary message out, its echo back, per sample.

use std::net::SocketAddr;

use futures_io::{AsyncRead, AsyncWrite};
use tickwire::futures_io::Timer;
use tickwire::futures_io::ws::Client;

use super::nexus_net;
use super::nexus_util::{self, NexusTimer};
use crate::callgrind::Follower;
use crate::harness::{Measurement, RunConfig, bench_batch_async};
use crate::suites::tokio_loopback::tickwire::{check_echo, tokio_echo, tokio_row};
use crate::suites::tokio_loopback::{one, payload, runtime, spawn_echo};
use crate::suites::{Case, unexpected};

/// The scenario.
pub fn name() -> String {
    "executors round trip 40B binary".into()
}

const NOTE_TOKIO: &str = "the baseline: tokio::ws::Client::send_binary + recv().await on a current_thread \
                          runtime, against a tokio::ws::ServerConnection echo on the other core";
const NOTE_SMOL: &str = "futures_io::ws::Client over smol::net::TcpStream, smol::block_on (async-io's reactor on \
                         this thread): send_binary + recv().await, against the same tokio::ws echo";
const NOTE_NEXUS: &str = "futures_io::ws::Client over nexus-async-rt's TcpStream (its mio reactor and timer \
                          wheel), Runtime::block_on: send_binary + recv().await, against the same tokio::ws echo";
const NOTE_RAW: &str = "the executor's floor: the same 46 B out (a masked 40 B frame, pre-encoded) and 42 B back \
                        through the executor's TCP stream (write_all, read_exact), no codec, against a raw \
                        echo on tokio on the other core";

pub(super) fn cases(peer: usize, v: &mut Vec<Case<'static>>) {
    let s = name();
    v.push(Case::new(
        &s,
        "tickwire (tokio)",
        true,
        NOTE_TOKIO,
        move |cfg| tokio_row(cfg, peer, false, false, super::paced()),
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
        nexus_net::NOTE_RTT,
        move |cfg| nexus_net::rtt_row(cfg, peer),
    ));
    v.push(Case::new(
        &s,
        "raw TCP (tokio, floor)",
        false,
        NOTE_RAW,
        move |cfg| raw_tokio(cfg, peer),
    ));
    v.push(Case::new(
        &s,
        "raw TCP (smol, floor)",
        false,
        NOTE_RAW,
        move |cfg| raw_smol(cfg, peer),
    ));
    v.push(Case::new(
        &s,
        "raw TCP (nexus-async-rt, floor)",
        false,
        NOTE_RAW,
        move |cfg| raw_nexus(cfg, peer),
    ));
}

/// One round trip of `p` (binary); the echo's last byte. `paced`: see [`super::pace`].
async fn round<S, Tm>(c: &mut Client<S, Tm>, p: &[u8], paced: bool) -> u64
where
    S: AsyncRead + AsyncWrite + Unpin,
    Tm: Timer,
{
    super::pace(paced);
    if let Err(e) = c.send_binary(p).await {
        unexpected(&e);
    }
    check_echo(c.recv().await, p, false)
}

/// Verify one echo, then measure.
async fn measure<S, Tm>(cfg: RunConfig, c: &mut Client<S, Tm>) -> Measurement
where
    S: AsyncRead + AsyncWrite + Unpin,
    Tm: Timer,
{
    let p = payload(false);
    let paced = super::paced();
    assert_eq!(
        round(c, &p, paced).await,
        u64::from(*p.last().unwrap_or(&0))
    );
    bench_batch_async(&one(&cfg), c, async |c, _| {
        std::hint::black_box(round(c, &p, paced).await);
    })
    .await
}

fn smol_row(cfg: &RunConfig, peer: usize) -> Measurement {
    let (addr, echo) = tokio_echo(peer, None, super::paced());
    let cfg = *cfg;
    let m = smol::block_on(async move {
        let tcp = smol::net::TcpStream::connect(addr).await.expect("connect");
        tcp.set_nodelay(true).expect("nodelay");
        let mut c = Client::connect_with(tcp, &format!("ws://{addr}/"))
            .await
            .expect("handshake");
        measure(cfg, &mut c).await
    });
    echo.join().expect("echo thread");
    m
}

fn nexus_row(cfg: &RunConfig, peer: usize) -> Measurement {
    let (addr, echo) = tokio_echo(peer, None, super::paced());
    let cfg = *cfg;
    let m = nexus_util::block_on(async move {
        let mut c = Client::builder()
            .timer::<NexusTimer>()
            .connect_with(nexus_util::connect(addr), &format!("ws://{addr}/"))
            .await
            .expect("handshake");
        measure(cfg, &mut c).await
    });
    echo.join().expect("echo thread");
    m
}

/// The frame the raw rows send: 40 B binary, masked (46 B), and the echo's 42 B.
fn raw_frames() -> (Vec<u8>, Vec<u8>) {
    let p = payload(false);
    let key = [0x12, 0x34, 0x56, 0x78];
    let mut out = vec![0x82, 0x80 | 40];
    out.extend_from_slice(&key);
    out.extend(p.iter().enumerate().map(|(i, b)| b ^ key[i % 4]));
    let mut back = vec![0x82, 40];
    back.extend_from_slice(&p);
    (out, back)
}

/// The raw echo on `peer`: reads 46 B, writes the 42 B reply, until the end.
fn raw_echo(peer: usize) -> (SocketAddr, std::thread::JoinHandle<()>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (tx, rx) = std::sync::mpsc::channel();
    let echo = spawn_echo(peer, move || async move {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        tx.send(listener.local_addr().expect("addr"))
            .expect("send addr");
        let (mut s, _) = listener.accept().await.expect("accept");
        s.set_nodelay(true).expect("nodelay");
        let (frame, back) = raw_frames();
        let mut buf = vec![0u8; frame.len()];
        let mut count = Follower::default();
        let paced = super::paced();
        loop {
            if s.read_exact(&mut buf).await.is_err() {
                return;
            }
            count.sync();
            super::pace(paced);
            if s.write_all(&back).await.is_err() {
                return;
            }
        }
    });
    (rx.recv().expect("echo address"), echo)
}

fn raw_tokio(cfg: &RunConfig, peer: usize) -> Measurement {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (addr, echo) = raw_echo(peer);
    let rt = runtime();
    let (frame, back) = raw_frames();
    let m = rt.block_on(async {
        let mut s = tokio::net::TcpStream::connect(addr).await.expect("connect");
        s.set_nodelay(true).expect("nodelay");
        let mut buf = vec![0u8; back.len()];
        let paced = super::paced();
        bench_batch_async(&one(cfg), &mut s, async |s, _| {
            super::pace(paced);
            s.write_all(&frame).await.expect("write");
            s.read_exact(&mut buf).await.expect("read");
            assert_eq!(buf, back);
        })
        .await
    });
    drop(rt);
    echo.join().expect("echo thread");
    m
}

fn raw_smol(cfg: &RunConfig, peer: usize) -> Measurement {
    use smol::io::{AsyncReadExt, AsyncWriteExt};
    let (addr, echo) = raw_echo(peer);
    let (frame, back) = raw_frames();
    let m = smol::block_on(async {
        let mut s = smol::net::TcpStream::connect(addr).await.expect("connect");
        s.set_nodelay(true).expect("nodelay");
        let mut buf = vec![0u8; back.len()];
        let paced = super::paced();
        bench_batch_async(&one(cfg), &mut s, async |s, _| {
            super::pace(paced);
            s.write_all(&frame).await.expect("write");
            s.read_exact(&mut buf).await.expect("read");
            assert_eq!(buf, back);
        })
        .await
    });
    echo.join().expect("echo thread");
    m
}

fn raw_nexus(cfg: &RunConfig, peer: usize) -> Measurement {
    let (addr, echo) = raw_echo(peer);
    let cfg = *cfg;
    let m = nexus_util::block_on(async move {
        let (frame, back) = raw_frames();
        let mut s = nexus_async_rt::TcpStream::connect(addr).expect("connect");
        s.set_nodelay(true).expect("nodelay");
        let mut buf = vec![0u8; back.len()];
        let paced = super::paced();
        bench_batch_async(&one(&cfg), &mut s, async |s, _| {
            super::pace(paced);
            s.write_all(&frame).await.expect("write");
            let mut got = 0;
            while got < buf.len() {
                match s.read(&mut buf[got..]).await {
                    Ok(0) | Err(_) => unexpected(&"the echo ended"),
                    Ok(n) => got += n,
                }
            }
            assert_eq!(buf, back);
        })
        .await
    });
    echo.join().expect("echo thread");
    m
}
