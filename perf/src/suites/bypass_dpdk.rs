//! Suite "bypass_dpdk" (issue 35, feature `dpdk`): tickwire's WebSocket
//! client on smoltcp over DPDK, 128 B binary messages, beside the same
//! client on kernel TCP with busy-poll across a veth pair, in the same run.
//!
//! Round trip rows (one scenario, the DPDK-to-DPDK row its baseline):
//! - DPDK to DPDK: two DPDK ports joined by rte_rings in this process
//!   (`Dpdk::ring_pair`), the client on one, a tickwire WebSocket echo
//!   server on smoltcp over the other, busy-polling on the peer core: no
//!   kernel anywhere on the data path.
//! - DPDK over `net_af_packet`: the client on the client namespace's end of
//!   a veth pair, tickwire's blocking echo server on kernel TCP in the other
//!   namespace (pinned to the peer core), as the AF_XDP row of "bypass_xdp".
//! - kernel TCP busy-poll: tickwire's client (`RecvMode::Spin`) in the client
//!   namespace, the same server, the same veth pair.
//!
//! Streaming row: the DPDK-to-DPDK pair with 64 messages in flight; the time
//! per message gives messages per second on one connection.
//!
//! EAL is initialised once per process (`--no-huge -m 512 --no-pci`, no
//! shared config, a file prefix of its own) on a short-lived thread, so the
//! measuring threads keep the harness's pinning; they register with EAL for
//! their mempool caches. The rows need root (namespaces, af_packet) and
//! DPDK; without them they are not registered and a line on stderr says so.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use tickwire_bypass::Endpoint;
use tickwire_bypass::dpdk::{Dpdk, DpdkDevice, EalConfig, PortConfig};
use tickwire_bypass::eth::EthLink;
use tickwire_bypass::link::TcpBuffers;
use tickwire_bypass::smoltcp::iface::SocketStorage;
use tickwire_bypass::smoltcp::time::Instant;
use tickwire_bypass::smoltcp::wire::{Ipv4Address, Ipv4Cidr};
use tickwire_bypass::xdp::netns::{self, VethPair};
use tickwire_codec::time::Instant as CodecInstant;
use tickwire_codec::ws::{Message, Settings};

use super::bypass_xdp::{NOTE_BUSY, SIZE, SmolClient, context_switches, echo_server, kernel};
use super::loopback::{peer_core, spawn_pinned};
use super::{Case, Setup, touch, unexpected};
use crate::harness::{Measurement, RunConfig, bench_batch};

const NOTE_RING: &str = "Endpoint::tx().send_binary (masked) + flush -> EthLink::poll (smoltcp on \
                         Ethernet, the frame written into a fresh mbuf, one rte_eth_tx_burst) -> \
                         rte_ring -> the echo server's smoltcp + Endpoint on the peer core (busy-poll) \
                         -> back; the client spins on rte_eth_rx_burst until the echo is there; \
                         delayed ACKs; no system call, no kernel";
const NOTE_AF_PACKET: &str = "the same client on DPDK's net_af_packet PMD on the client namespace's \
                              veth end (PACKET_MMAP rings; one sendto(2) kick per TX burst) -> the \
                              kernel echo server in the server namespace; busy-poll";
const NOTE_STREAM: &str = "DPDK to DPDK (ring pair) as the round trip row, with 64 messages in \
                           flight on one connection: time per message echoed; messages per second \
                           = 1e9 / ns";

/// Messages in flight in the streaming row.
const WINDOW: usize = 64;
/// smoltcp's addresses on the ring pair.
const RING_CLIENT: Ipv4Address = Ipv4Address::new(10, 80, 0, 2);
const RING_SERVER: Ipv4Address = Ipv4Address::new(10, 80, 0, 1);
const PORT: u16 = 9001;

/// Round trip scenario name.
pub fn name() -> String {
    format!("ws {SIZE}B round trip: DPDK to DPDK (ring), DPDK af_packet over veth, kernel TCP")
}

/// Streaming scenario name.
pub fn stream_name() -> String {
    format!("ws {SIZE}B messages streamed on one connection, {WINDOW} in flight (per message)")
}

/// EAL, once per process.
fn dpdk() -> Result<&'static Dpdk, String> {
    static DPDK: OnceLock<Result<Dpdk, String>> = OnceLock::new();
    DPDK.get_or_init(|| {
        // On a thread of its own: EAL pins the thread that initialises it.
        std::thread::spawn(|| {
            let n = std::thread::available_parallelism().map_or(1, |n| n.get());
            let mut eal = EalConfig::virtual_devices(&format!("0@(0-{})", n - 1), 512);
            eal.file_prefix = Some(format!("tickwire-bench-{}", std::process::id()));
            Dpdk::init(&eal).map_err(|e| e.to_string())
        })
        .join()
        .unwrap_or_else(|_| Err("EAL init panicked".into()))
    })
    .as_ref()
    .map_err(Clone::clone)
}

type Shared = Arc<OnceLock<Result<VethPair, String>>>;

fn pair(shared: &Shared) -> &VethPair {
    match shared.get_or_init(|| VethPair::create().map_err(|e| e.to_string())) {
        Ok(p) => p,
        Err(e) => panic!("bypass_dpdk: cannot build the veth pair: {e}"),
    }
}

/// Register the suite's rows (only where DPDK and namespaces work).
pub fn register(setup: &Setup, v: &mut Vec<Case<'static>>) {
    if let Err(e) = netns::available() {
        eprintln!("bench: skipping the DPDK rows ({}): {e}", name());
        return;
    }
    if let Err(e) = dpdk() {
        eprintln!("bench: skipping the DPDK rows ({}): {e}", name());
        return;
    }
    let peer = peer_core(setup);
    let shared: Shared = Arc::new(OnceLock::new());
    let s = name();
    let sh = shared.clone();
    let mut rows = vec![
        Case::new(
            s.clone(),
            "tickwire + smoltcp + DPDK ring pair <-> smoltcp + DPDK echo (busy-poll)",
            true,
            NOTE_RING,
            move |cfg| ring(cfg, peer, 1),
        ),
        Case::new(
            s.clone(),
            "tickwire + smoltcp + DPDK net_af_packet over veth (busy-poll)",
            false,
            NOTE_AF_PACKET,
            move |cfg| af_packet(cfg, pair(&sh), peer),
        ),
        Case::new(
            s,
            "tickwire + kernel TCP over veth (busy-poll)",
            false,
            NOTE_BUSY,
            move |cfg| kernel(cfg, pair(&shared), peer, true),
        ),
        Case::new(
            stream_name(),
            "tickwire + smoltcp + DPDK ring pair <-> smoltcp + DPDK echo (busy-poll)",
            true,
            NOTE_STREAM,
            move |cfg| ring(cfg, peer, WINDOW),
        ),
    ];
    for c in &mut rows {
        // Another thread, rings and the kernel: not for `--instructions`.
        c.counts = false;
    }
    v.extend(rows.into_iter().map(Case::sequential));
}

/// Ring sizes and a pool large enough for a window of 64 each way.
fn port_config() -> PortConfig {
    PortConfig {
        rx_desc: 512,
        tx_desc: 512,
        mbufs: 4095,
        ..PortConfig::default()
    }
}

/// The DPDK-to-DPDK rows: a ring pair, the echo server on the peer core;
/// `window` messages in flight (1: round trips).
fn ring(cfg: &RunConfig, peer: usize, window: usize) -> Measurement {
    let dpdk = dpdk().expect("EAL");
    static PAIRS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = PAIRS.fetch_add(1, Ordering::Relaxed);
    let (client_dev, server_dev) = dpdk
        .ring_pair(&format!("twb{n}"), &port_config())
        .expect("ring pair");
    let stop = Arc::new(AtomicBool::new(false));
    let server = {
        let stop = stop.clone();
        spawn_pinned(peer, move || ring_echo(server_dev, &stop))
    };
    let _ = dpdk.register_thread();
    let mut mem = vec![0u8; 4 * 256 * 1024];
    let (tcp_mem, ws_mem) = mem.split_at_mut(2 * 256 * 1024);
    let (rx, tx) = tcp_mem.split_at_mut(256 * 1024);
    let (wr, ww) = ws_mem.split_at_mut(256 * 1024);
    let mut slots = [SocketStorage::EMPTY; 1];
    let t0 = std::time::Instant::now();
    let mut link = EthLink::new(
        client_dev,
        &mut slots,
        Ipv4Cidr::new(RING_CLIENT, 24),
        None,
        0x35,
        Instant::ZERO,
    );
    let h = link
        .connect(TcpBuffers { rx, tx }, (RING_SERVER, PORT), 49152)
        .expect("connect");
    let host = format!("{RING_SERVER}:{PORT}");
    let mut st = SmolClient::start(link, h, &host, wr, ww, t0);
    let stats0 = st.link.device.stats();
    let mut ops = 0u64;
    let m = if window == 1 {
        bench_batch(
            &RunConfig { batch: 1, ..*cfg },
            &mut st,
            |_| {},
            |st, n| {
                for _ in 0..n {
                    std::hint::black_box(st.one());
                }
                ops += n as u64;
            },
        )
    } else {
        bench_batch(
            &RunConfig { batch: 256, ..*cfg },
            &mut st,
            |_| {},
            |st, n| {
                std::hint::black_box(stream(st, n, window));
                ops += n as u64;
            },
        )
    };
    let stats = st.link.device.stats();
    let per = |a: u64, b: u64| (a - b) as f64 / ops.max(1) as f64;
    eprintln!(
        "bypass_dpdk: ring pair, window {window}: per message {:.2} TX packets in {:.2} tx bursts, \
         {:.2} RX packets in {:.2} rx bursts; dropped: {} no mbuf, {} ring full ({ops} messages)",
        per(stats.tx_packets, stats0.tx_packets),
        per(stats.tx_bursts, stats0.tx_bursts),
        per(stats.rx_packets, stats0.rx_packets),
        per(stats.rx_bursts, stats0.rx_bursts),
        stats.tx_no_mbuf - stats0.tx_no_mbuf,
        stats.tx_ring_full - stats0.tx_ring_full,
    );
    st.abort();
    stop.store(true, Ordering::Release);
    server.join().expect("echo thread");
    m
}

/// `n` messages with `window` in flight, every echo received; returns a
/// touched byte.
fn stream(st: &mut SmolClient<'_, DpdkDevice>, n: usize, window: usize) -> u64 {
    let (mut sent, mut got, mut acc) = (0, 0, 0u64);
    while got < n {
        while sent < n && sent < got + window {
            match st.ep.tx().send_binary(&st.p) {
                Ok(()) => sent += 1,
                Err(tickwire_codec::ws::ConnectionError::Backpressure) => break,
                Err(e) => unexpected(&e),
            }
        }
        if let Err(e) = st.ep.flush(st.link.socket(st.h)) {
            unexpected(&e);
        }
        let now = st.now();
        if let Err(e) = st.link.poll(now) {
            unexpected(&e);
        }
        loop {
            match st.ep.recv(st.link.socket(st.h)) {
                Ok(Some((Message::Binary(b), _))) if b.len() == SIZE => {
                    acc += touch(b);
                    got += 1;
                }
                Ok(None) => break,
                other => unexpected(&other.map(|o| o.map(|(m, _)| m))),
            }
        }
    }
    acc
}

/// The echo server on the other port of the ring pair: tickwire's server
/// endpoint on smoltcp, busy-polling until `stop`.
fn ring_echo(device: DpdkDevice, stop: &AtomicBool) {
    if let Ok(d) = dpdk() {
        let _ = d.register_thread();
    }
    let mut mem = vec![0u8; 4 * 256 * 1024];
    let (tcp_mem, ws_mem) = mem.split_at_mut(2 * 256 * 1024);
    let (rx, tx) = tcp_mem.split_at_mut(256 * 1024);
    let (wr, ww) = ws_mem.split_at_mut(256 * 1024);
    let mut slots = [SocketStorage::EMPTY; 1];
    let t0 = std::time::Instant::now();
    let now = || Instant::from_micros(t0.elapsed().as_micros() as i64);
    let mut link = EthLink::new(
        device,
        &mut slots,
        Ipv4Cidr::new(RING_SERVER, 24),
        None,
        0x53,
        now(),
    );
    let h = link.listen(TcpBuffers { rx, tx }, PORT).expect("listen");
    link.socket(h)
        .set_ack_delay(Some(tickwire_bypass::smoltcp::time::Duration::from_millis(
            10,
        )));
    let mut ep = Endpoint::server(wr, ww, &Settings::default(), CodecInstant::ZERO);
    while !stop.load(Ordering::Acquire) {
        let _ = link.poll(now());
        // Read a message only while its echo fits the send buffer.
        while ep.tx().room() >= 1024 {
            match ep.recv(link.socket(h)) {
                Ok(Some((Message::Binary(b), tx))) => {
                    if let Err(e) = tx.send_binary(b) {
                        unexpected(&e);
                    }
                }
                Ok(Some(_)) => {}
                // A reset (the client's end of a row) ends the connection.
                Ok(None) | Err(_) => break,
            }
        }
        if ep.flush(link.socket(h)).is_err() {
            break;
        }
    }
}

/// The af_packet row: the client's port is a vdev created inside the client
/// namespace (its AF_PACKET socket lives there), the server the kernel's.
fn af_packet(cfg: &RunConfig, pair: &VethPair, peer: usize) -> Measurement {
    let dpdk = dpdk().expect("EAL");
    let (port, echo) = echo_server(pair, peer);
    static VDEVS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = VDEVS.fetch_add(1, Ordering::Relaxed);
    let spec = format!("net_af_packet{n},iface={}", netns::CLIENT_IF);
    let device = pair
        .in_client(|| dpdk.open_vdev(&spec, &port_config()))
        .expect("enter the client namespace")
        .expect("af_packet port");
    let _ = dpdk.register_thread();
    let mut mem = vec![0u8; 4 * 64 * 1024];
    let (tcp_mem, ws_mem) = mem.split_at_mut(2 * 64 * 1024);
    let (rx, tx) = tcp_mem.split_at_mut(64 * 1024);
    let (wr, ww) = ws_mem.split_at_mut(64 * 1024);
    let mut slots = [SocketStorage::EMPTY; 1];
    let t0 = std::time::Instant::now();
    let addr = Ipv4Cidr::new(netns::XDP_ADDR, netns::PREFIX);
    let mut link = EthLink::new(device, &mut slots, addr, None, 0x5eed, Instant::ZERO);
    let h = link
        .connect(TcpBuffers { rx, tx }, (netns::SERVER_ADDR, port), 49152)
        .expect("connect");
    let host = format!("{}:{port}", netns::SERVER_ADDR);
    let mut st = SmolClient::start(link, h, &host, wr, ww, t0);
    let (stats0, cs0) = (st.link.device.stats(), context_switches());
    let mut ops = 0u64;
    let m = bench_batch(
        &RunConfig { batch: 1, ..*cfg },
        &mut st,
        |_| {},
        |st, n| {
            for _ in 0..n {
                std::hint::black_box(st.one());
            }
            ops += n as u64;
        },
    );
    let (stats, cs) = (st.link.device.stats(), context_switches());
    let per = |a: u64, b: u64| (a - b) as f64 / ops.max(1) as f64;
    eprintln!(
        "bypass_dpdk: af_packet: per round trip {:.2} TX packets in {:.2} tx bursts, {:.2} RX \
         packets, {:.3} voluntary context switches ({ops} round trips)",
        per(stats.tx_packets, stats0.tx_packets),
        per(stats.tx_bursts, stats0.tx_bursts),
        per(stats.rx_packets, stats0.rx_packets),
        per(cs, cs0),
    );
    st.abort();
    echo.join().expect("echo thread");
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every row verifies its echo and measures briefly (where DPDK and root work).
    #[test]
    fn every_row_verifies_and_measures() {
        let mut v = Vec::new();
        register(
            &Setup {
                batch: 8,
                core: 0,
                peer_core: None,
            },
            &mut v,
        );
        if v.is_empty() {
            eprintln!("\n!!!! SKIPPED bypass_dpdk rows (see the line above)\n");
            assert!(
                std::env::var_os("TICKWIRE_REQUIRE_PEERS").is_none_or(|v| v.is_empty() || v == "0"),
                "TICKWIRE_REQUIRE_PEERS is set and the DPDK rows cannot run"
            );
            return;
        }
        assert_eq!(v.len(), 4);
        let cfg = RunConfig {
            batch: 1,
            warmup: std::time::Duration::ZERO,
            measure: std::time::Duration::from_millis(20),
            max_samples: 64,
            count_rounds: 0,
        };
        for case in &v {
            let m = case.run(&cfg);
            assert!(m.samples() > 0, "{case:?}");
        }
    }
}
