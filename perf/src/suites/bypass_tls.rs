//! Suite "bypass_tls" (issue 34): TLS WebSocket round trips across a veth pair
//! between two network namespaces, and many connections in one loop.
//!
//! - "wss 128B round trip": the client on tickwire-bypass's `Stack` (smoltcp
//!   over AF_XDP, busy-polling, the TSC clock, TLS 1.3 through the codec's
//!   records mode) beside tickwire's `ws::Client` over the client namespace's
//!   kernel TCP, blocking and busy-poll, with the same TLS settings. The server
//!   is tickwire's blocking `ws::Server` with TLS in the other namespace,
//!   pinned to the second core, for every row.
//! - "8 connections in one loop": one `Stack` holding four `ws://` and four
//!   `wss://` connections; one operation is one 128 B message on each of the
//!   eight and all eight echoes back; stderr prints messages per second.
//!
//! Rows run one after another on one veth pair (made at the first run, deleted
//! when the cases are dropped). They need root; without it they are not
//! registered and a line on stderr says so.

use std::net::TcpStream;
use std::sync::{Arc, OnceLock};

use tickwire::socket::RecvMode;
use tickwire::tls::{TlsConfig, TlsServerConfig};
use tickwire::ws::{ClientBuilder, Message as TwMessage, Server};
use tickwire_bypass::clock::LoopClock;
use tickwire_bypass::smoltcp::iface::SocketStorage;
use tickwire_bypass::smoltcp::wire::{EthernetAddress, HardwareAddress, Ipv4Cidr};
use tickwire_bypass::xdp::netns::{self, VethPair};
use tickwire_bypass::xdp::{Attach, UmemArea, XdpConfig, XdpDevice, XdpProgram};
use tickwire_bypass::{ConnId, Event, NetConfig, Options, Remote, Scheme, Slot, SlotSizes, Stack};
use tickwire_codec::ws::Message;

use super::loopback::rtt::{tw_echo, tw_round};
use super::loopback::{peer_core, spawn_pinned};
use super::{Case, Setup, touch, unexpected};
use crate::harness::{Measurement, RunConfig, bench_batch};

/// Payload size.
pub const SIZE: usize = 128;
/// Connections in the many-connections row.
pub const CONNS: usize = 8;
/// The name in the server's certificate (`super::tls::configs`), kept by every client
/// for SNI and the certificate check while the address is the namespace's.
const HOST: &str = "localhost";

const NOTE_XDP: &str = "Stack::sender().send_binary -> Stack::poll (TLS 1.3 records sealed by the \
                        codec into the slot's TLS buffer, smoltcp on Ethernet over AF_XDP, copy mode) \
                        spinning until Stack::recv has the echo (opened in place in the TLS buffer, \
                        copied once into the frame reader); delayed ACKs (Options::tcp_ack_delay \
                        10 ms: they ride on the next message); clock: TSC (clock::LoopClock)";
const NOTE_BLOCKING: &str = "ws::Client with TLS (the same TLS 1.3 config) over the client \
                             namespace's kernel TCP, same veth pair; recv sleeps in recvfrom(2)";
const NOTE_BUSY: &str = "ws::Client with TLS, recv_mode(RecvMode::Spin): spinning on non-blocking \
                         reads of the kernel socket";
const NOTE_MANY: &str = "one Stack, 4 ws:// + 4 wss:// connections over AF_XDP; one op = a 128 B \
                         message on each of the 8 and all 8 echoes back (messages per second = \
                         8 / op time; stderr prints the figure)";

/// Scenario names.
pub fn name() -> String {
    format!("wss {SIZE}B round trip across a veth pair (client netns -> server netns)")
}

fn name_many() -> String {
    format!("{CONNS} connections in one loop, {SIZE}B messages across a veth pair")
}

type Shared = Arc<OnceLock<Result<VethPair, String>>>;

/// The client and server TLS settings, sharing one CA (`super::tls::configs`).
#[derive(Clone)]
struct Tls {
    client: TlsConfig,
    server: TlsServerConfig,
}

fn pair(shared: &Shared) -> &VethPair {
    match shared.get_or_init(|| VethPair::create().map_err(|e| e.to_string())) {
        Ok(p) => p,
        Err(e) => panic!("bypass_tls: cannot build the veth pair: {e}"),
    }
}

/// Register the suite's rows (only where the environment can be built).
pub fn register(setup: &Setup, v: &mut Vec<Case<'static>>) {
    if let Err(e) = netns::available() {
        eprintln!("bench: skipping the AF_XDP TLS rows ({}): {e}", name());
        return;
    }
    let peer = peer_core(setup);
    let shared: Shared = Arc::new(OnceLock::new());
    let (client, server) = super::tls::configs();
    let tls = Tls { client, server };
    let (s, sh1, sh2, sh3) = (name(), shared.clone(), shared.clone(), shared.clone());
    let (t1, t2, t3, t4) = (tls.clone(), tls.clone(), tls.clone(), tls);
    let mut rows = vec![
        Case::new(
            s.clone(),
            "tickwire Stack + smoltcp + AF_XDP + TLS (busy-poll)",
            true,
            NOTE_XDP,
            move |cfg| xdp(cfg, pair(&sh1), peer, &t1),
        ),
        Case::new(
            s.clone(),
            "tickwire + kernel TCP + TLS (blocking)",
            false,
            NOTE_BLOCKING,
            move |cfg| kernel(cfg, pair(&sh2), peer, false, &t2),
        ),
        Case::new(
            s,
            "tickwire + kernel TCP + TLS (busy-poll)",
            false,
            NOTE_BUSY,
            move |cfg| kernel(cfg, pair(&sh3), peer, true, &t3),
        ),
        Case::new(
            name_many(),
            "tickwire Stack + smoltcp + AF_XDP (4 ws + 4 wss, busy-poll)",
            true,
            NOTE_MANY,
            move |cfg| many(cfg, pair(&shared), peer, &t4),
        ),
    ];
    for c in &mut rows {
        // Syscalls, another thread and the kernel: not for `--instructions`.
        c.counts = false;
    }
    v.extend(rows.into_iter().map(Case::sequential));
}

/// tickwire's blocking echo servers in the server namespace, pinned to `peer`:
/// `conns` connections each, TLS when `tls`; returns the port and the thread.
fn echo_server(
    pair: &VethPair,
    peer: usize,
    tls: Option<&Tls>,
    conns: usize,
) -> (u16, std::thread::JoinHandle<()>) {
    let mut b = Server::builder();
    if let Some(t) = tls {
        b = b.tls(t.server.clone());
    }
    let mut server = pair
        .in_server(|| b.bind((netns::SERVER_ADDR, 0)))
        .expect("enter the server namespace")
        .expect("bind in the server namespace");
    let port = server.local_addr().expect("local addr").port();
    let h = spawn_pinned(peer, move || {
        let mut threads = Vec::new();
        for _ in 0..conns {
            match server.accept() {
                Ok(c) => threads.push(std::thread::spawn(move || tw_echo(c, false))),
                Err(_) => break,
            }
        }
        for t in threads {
            let _ = t.join();
        }
    });
    (port, h)
}

fn payload(seed: u64) -> Vec<u8> {
    let mut rng = crate::inputs::SplitMix64::new(seed);
    (0..SIZE).map(|_| rng.next_u64() as u8).collect()
}

/// The client side of the AF_XDP rows: an XDP program, a socket, a stack.
struct Client {
    program: XdpProgram,
    umem: UmemArea,
}

/// Build the AF_XDP device in the client namespace, run `f` with a stack of
/// `n` slots over it (each `sizes`), and tear everything down.
fn with_stack<R>(
    pair: &VethPair,
    n: usize,
    f: impl FnOnce(&mut Stack<'_, XdpDevice<'_>>, &LoopClock) -> R,
) -> R {
    let xcfg = XdpConfig {
        frame_size: 2048,
        ring_size: 1024,
        ..XdpConfig::default()
    };
    let mut c = Client {
        program: pair
            .in_client(|| XdpProgram::attach(netns::CLIENT_IF, Attach::Auto))
            .expect("enter the client namespace")
            .expect("XDP program"),
        umem: UmemArea::new(2048, 2048).expect("UMEM"),
    };
    let device = pair
        .in_client(|| XdpDevice::open(netns::CLIENT_IF, c.umem.as_mut_slice(), xcfg))
        .expect("enter the client namespace")
        .expect("AF_XDP socket");
    c.program.insert(xcfg.queue, &device).expect("XSKMAP");
    let sizes = SlotSizes::with_tls(128 * 1024, 64 * 1024, 64 * 1024);
    let mut arena = vec![0u8; n * sizes.arena_len()];
    let mut slots: Vec<Slot<'_>> = arena
        .chunks_mut(sizes.arena_len())
        .map(|a| Slot::new(a, sizes).expect("slot"))
        .collect();
    let mut sockets: Vec<SocketStorage<'_>> = (0..n).map(|_| SocketStorage::EMPTY).collect();
    let clock = LoopClock::new();
    let net = NetConfig {
        hardware: HardwareAddress::Ethernet(EthernetAddress(device.mac())),
        addr: Ipv4Cidr::new(netns::XDP_ADDR, netns::PREFIX),
        gateway: None,
    };
    let mut stack = Stack::new(
        device,
        net,
        &mut sockets,
        &mut slots,
        [0x34; 32],
        clock.now(),
    )
    .expect("stack");
    f(&mut stack, &clock)
}

fn options(tls: &Tls) -> Options {
    Options {
        tls: Some(tls.client.client_config().clone()),
        tcp_ack_delay: Some(std::time::Duration::from_millis(10)),
        ..Options::default()
    }
}

/// Poll until every connection in `ids` is open.
fn open_all(stack: &mut Stack<'_, XdpDevice<'_>>, clock: &LoopClock, ids: &[ConnId]) {
    let t0 = std::time::Instant::now();
    while !ids.iter().all(|&id| stack.is_open(id)) {
        assert!(
            t0.elapsed().as_secs() < 20,
            "bypass_tls: connections stalled"
        );
        stack.poll(clock.now());
        while let Some((id, ev)) = stack.next_event() {
            if let Event::Failed(e) = ev {
                panic!("bypass_tls: connection {} failed: {e}", id.slot());
            }
        }
    }
}

/// One message on `id` and its echo; returns the touched byte.
#[inline]
fn round(stack: &mut Stack<'_, XdpDevice<'_>>, clock: &LoopClock, id: ConnId, p: &[u8]) -> u64 {
    match stack.sender(id).map(|tx| tx.send_binary(p)) {
        Ok(Ok(())) => {}
        other => unexpected(&other),
    }
    loop {
        stack.poll(clock.now());
        match stack.recv(id) {
            Ok(Some((Message::Binary(b), _))) if b.len() == p.len() => return touch(b),
            Ok(None) => std::hint::spin_loop(),
            other => unexpected(&other.map(|o| o.map(|(m, _)| m))),
        }
    }
}

fn xdp(cfg: &RunConfig, pair: &VethPair, peer: usize, tls: &Tls) -> Measurement {
    let (port, echo) = echo_server(pair, peer, Some(tls), 1);
    let m = with_stack(pair, 1, |stack, clock| {
        let remote = Remote::new(Scheme::Wss, HOST, netns::SERVER_ADDR, port, "/").expect("remote");
        let id = stack
            .connect(remote, options(tls), clock.now())
            .expect("connect");
        open_all(stack, clock, &[id]);
        let mut p = payload(0x7834);
        for i in 0..32u8 {
            p[0] = i;
            round(stack, clock, id, &p);
        }
        let codec = stack.tls(id).expect("TLS");
        assert!(codec.is_records_mode(), "TLS 1.3 records mode");
        let mut st = (stack, p);
        let m = bench_batch(
            &RunConfig { batch: 1, ..*cfg },
            &mut st,
            |_| {},
            |(stack, p), n| {
                for _ in 0..n {
                    std::hint::black_box(round(stack, clock, id, p));
                }
            },
        );
        let (stack, _) = st;
        eprintln!("bypass_tls: AF_XDP device {:?}", stack.device().stats());
        let _ = stack.remove(id); // a reset ends the server's thread at once
        stack.poll(clock.now());
        m
    });
    echo.join().expect("echo thread");
    m
}

fn kernel(cfg: &RunConfig, pair: &VethPair, peer: usize, busy: bool, tls: &Tls) -> Measurement {
    let (port, echo) = echo_server(pair, peer, Some(tls), 1);
    let client_tls = tls.client.clone();
    let url = format!("wss://{HOST}:{port}/");
    let mut c = pair
        .in_client(|| {
            let mode = if busy {
                RecvMode::Spin
            } else {
                RecvMode::Sleep
            };
            let tcp = TcpStream::connect((netns::SERVER_ADDR, port))?;
            ClientBuilder::new()
                .tls(client_tls)
                .recv_mode(mode)
                .connect_with(tcp, &url)
                .map_err(std::io::Error::other)
        })
        .expect("enter the client namespace")
        .expect("connect over the veth pair");
    let mut p = payload(0x7834);
    for i in 0..32u8 {
        p[0] = i;
        c.send_binary(&p).expect("send");
        match c.recv().expect("recv") {
            Some(TwMessage::Binary(b)) => assert_eq!(b, &p[..], "echo {i}"),
            other => unexpected(&other),
        }
    }
    let m = bench_batch(
        &RunConfig { batch: 1, ..*cfg },
        &mut c,
        |_| {},
        |c, n| {
            for _ in 0..n {
                std::hint::black_box(tw_round(c, &p));
            }
        },
    );
    drop(c);
    echo.join().expect("echo thread");
    m
}

fn many(cfg: &RunConfig, pair: &VethPair, peer: usize, tls: &Tls) -> Measurement {
    let half = CONNS / 2;
    let (plain_port, plain_echo) = echo_server(pair, peer, None, half);
    let (tls_port, tls_echo) = echo_server(pair, peer, Some(tls), half);
    let m = with_stack(pair, CONNS, |stack, clock| {
        let mut ids = Vec::new();
        for k in 0..CONNS {
            let (scheme, port) = if k < half {
                (Scheme::Ws, plain_port)
            } else {
                (Scheme::Wss, tls_port)
            };
            let remote = Remote::new(scheme, HOST, netns::SERVER_ADDR, port, "/").expect("remote");
            ids.push(
                stack
                    .connect(remote, options(tls), clock.now())
                    .expect("connect"),
            );
        }
        open_all(stack, clock, &ids);
        let payloads: Vec<Vec<u8>> = (0..CONNS).map(|k| payload(k as u64)).collect();
        for &id in &ids {
            round(stack, clock, id, &payloads[id.slot()]);
        }
        let (mut ops, mut spent) = (0u64, std::time::Duration::ZERO);
        let mut st = (stack, ids, payloads);
        let m = bench_batch(
            &RunConfig { batch: 1, ..*cfg },
            &mut st,
            |_| {},
            |(stack, ids, payloads), n| {
                let t = std::time::Instant::now();
                for _ in 0..n {
                    std::hint::black_box(all_eight(stack, clock, ids, payloads));
                }
                spent += t.elapsed();
                ops += n as u64;
            },
        );
        let (stack, ids, _) = st;
        eprintln!(
            "bypass_tls: {CONNS} connections in one loop: {:.0} messages per second ({ops} rounds of \
             {CONNS} round trips in {spent:?})",
            (ops * CONNS as u64) as f64 / spent.as_secs_f64().max(1e-9)
        );
        for &id in ids.iter() {
            let _ = stack.remove(id);
        }
        stack.poll(clock.now());
        m
    });
    plain_echo.join().expect("echo thread");
    tls_echo.join().expect("echo thread");
    m
}

/// One message on every connection, then every echo back.
#[inline]
fn all_eight(
    stack: &mut Stack<'_, XdpDevice<'_>>,
    clock: &LoopClock,
    ids: &[ConnId],
    payloads: &[Vec<u8>],
) -> u64 {
    for &id in ids {
        match stack
            .sender(id)
            .map(|tx| tx.send_binary(&payloads[id.slot()]))
        {
            Ok(Ok(())) => {}
            other => unexpected(&other),
        }
    }
    let (mut left, mut sum) = (ids.len(), 0u64);
    while left > 0 {
        stack.poll(clock.now());
        for &id in ids {
            while let Ok(Some((msg, _))) = stack.recv(id) {
                match msg {
                    Message::Binary(b) if b.len() == SIZE => {
                        sum = sum.wrapping_add(touch(b));
                        left -= 1;
                    }
                    other => unexpected(&other),
                }
            }
        }
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every row verifies its echoes and measures briefly (where root can build the pair).
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
            eprintln!("\n!!!! SKIPPED bypass_tls rows: {:?}\n", netns::available());
            assert!(
                std::env::var_os("TICKWIRE_REQUIRE_PEERS").is_none_or(|v| v.is_empty() || v == "0"),
                "TICKWIRE_REQUIRE_PEERS is set and the AF_XDP rows cannot run"
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
