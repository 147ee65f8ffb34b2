//! Suite "bypass_xdp" (issue 28): a 128 B binary WebSocket round trip across
//! a veth pair between two network namespaces, the client on smoltcp over an
//! AF_XDP socket (busy-polling its rings) beside the same tickwire client on
//! the kernel's TCP stack (blocking, and busy-poll). The server is the same
//! for every row: tickwire's blocking `ws::Server` echo on the kernel's TCP
//! stack in the other namespace, pinned to the second core.
//!
//! All three rows use one veth pair (made at the first run, deleted when the
//! cases are dropped) and run one after another, never interleaved: while the
//! AF_XDP row runs, the XDP program sends every frame of the client's end to
//! its socket, so the kernel rows could not share the link with it.
//!
//! The rows need root (namespaces, XDP); without it they are not registered
//! and a line on stderr says so.

use std::sync::{Arc, OnceLock};

use tickwire::socket::RecvMode;
use tickwire::ws::{ClientBuilder, Message as TwMessage, Server};
use tickwire_bypass::Endpoint;
use tickwire_bypass::eth::{EthDevice, EthLink};
use tickwire_bypass::link::TcpBuffers;
use tickwire_bypass::smoltcp::iface::{SocketHandle, SocketStorage};
use tickwire_bypass::smoltcp::socket::tcp;
use tickwire_bypass::smoltcp::time::Instant;
use tickwire_bypass::smoltcp::wire::Ipv4Cidr;
use tickwire_bypass::xdp::netns::{self, VethPair};
use tickwire_bypass::xdp::{Attach, UmemArea, XdpConfig, XdpDevice, XdpLink, XdpProgram};
use tickwire_codec::rand::MaskRng;
use tickwire_codec::time::Instant as CodecInstant;
use tickwire_codec::ws::handshake::ClientHandshake;
use tickwire_codec::ws::{Message, Settings};

use super::loopback::rtt::{tw_echo, tw_round};
use super::loopback::{peer_core, spawn_pinned};
use super::{Case, Setup, touch, unexpected};
use crate::harness::{Measurement, RunConfig, bench_batch};

/// Payload size.
pub const SIZE: usize = 128;

const NOTE_XDP: &str = "Endpoint::tx().send_binary (masked) + flush into the smoltcp socket -> \
                        XdpLink::poll (smoltcp on Ethernet; the frame written in place in the UMEM, \
                        copy mode) spinning until the echo is on the RX ring -> Endpoint::recv; delayed \
                        ACKs (they ride on the next message); clock: std Instant (vDSO) per poll. \
                        System calls per round trip: 1, the sendto(2) kick (strace -f; the row also \
                        counts its kicks and prints them on stderr)";
const NOTE_BLOCKING: &str = "ws::Client::send_binary + recv from the client namespace's kernel TCP \
                             over the same veth pair; system calls per round trip: sendto(2) + \
                             recvfrom(2), which sleeps (1 voluntary context switch)";
pub(super) const NOTE_BUSY: &str = "ws::Client built with recv_mode(RecvMode::Spin): the same blocking send + recv, \
                         spinning on non-blocking reads; system calls per round trip: sendto(2) + one \
                         recvfrom(2) per spin (EAGAIN until the echo is there)";

/// Scenario name.
pub fn name() -> String {
    format!("ws {SIZE}B round trip across a veth pair (client netns -> server netns)")
}

/// The veth pair shared by the rows, made by the first run that needs it.
type Shared = Arc<OnceLock<Result<VethPair, String>>>;

fn pair(shared: &Shared) -> &VethPair {
    match shared.get_or_init(|| VethPair::create().map_err(|e| e.to_string())) {
        Ok(p) => p,
        Err(e) => panic!("bypass_xdp: cannot build the veth pair: {e}"),
    }
}

/// Register the suite's rows (only where the environment can be built).
pub fn register(setup: &Setup, v: &mut Vec<Case<'static>>) {
    if let Err(e) = netns::available() {
        eprintln!("bench: skipping the AF_XDP rows ({}): {e}", name());
        return;
    }
    let peer = peer_core(setup);
    let shared: Shared = Arc::new(OnceLock::new());
    let s = name();
    let sh = shared.clone();
    let mut rows = vec![
        Case::new(
            s.clone(),
            "tickwire + smoltcp + AF_XDP (busy-poll)",
            true,
            NOTE_XDP,
            move |cfg| xdp(cfg, pair(&sh), peer),
        ),
        {
            let sh = shared.clone();
            Case::new(
                s.clone(),
                "tickwire + kernel TCP (blocking)",
                false,
                NOTE_BLOCKING,
                move |cfg| kernel(cfg, pair(&sh), peer, false),
            )
        },
        Case::new(
            s,
            "tickwire + kernel TCP (busy-poll)",
            false,
            NOTE_BUSY,
            move |cfg| kernel(cfg, pair(&shared), peer, true),
        ),
    ];
    for c in &mut rows {
        // Syscalls, another thread and the kernel: not for `--instructions`.
        c.counts = false;
    }
    v.extend(rows.into_iter().map(Case::sequential));
}

/// Start tickwire's blocking echo server in the server namespace, pinned to
/// `peer`; returns its port and thread.
pub(super) fn echo_server(pair: &VethPair, peer: usize) -> (u16, std::thread::JoinHandle<()>) {
    let mut server = pair
        .in_server(|| Server::bind((netns::SERVER_ADDR, 0)))
        .expect("enter the server namespace")
        .expect("bind in the server namespace");
    let port = server.local_addr().expect("local addr").port();
    let h = spawn_pinned(peer, move || {
        if let Ok(c) = server.accept() {
            tw_echo(c, false);
        }
    });
    (port, h)
}

pub(super) fn payload() -> Vec<u8> {
    let mut rng = crate::inputs::SplitMix64::new(0x7864_7028);
    (0..SIZE).map(|_| rng.next_u64() as u8).collect()
}

/// Voluntary context switches of the calling thread so far.
pub(super) fn context_switches() -> u64 {
    std::fs::read_to_string("/proc/thread-self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
                .and_then(|v| v.trim().parse().ok())
        })
        .unwrap_or(0)
}

/// tickwire's WebSocket client on smoltcp over an Ethernet device (AF_XDP
/// here, DPDK in suite "bypass_dpdk"), connected and verified.
pub(super) struct SmolClient<'s, D> {
    pub link: EthLink<'s, D>,
    pub h: SocketHandle,
    pub ep: Endpoint<&'s mut [u8], &'s mut [u8], MaskRng>,
    pub t0: std::time::Instant,
    pub p: Vec<u8>,
}

impl<'s, D: EthDevice> SmolClient<'s, D> {
    /// The WebSocket handshake on socket `h` (connecting to `host`) over
    /// `wr`/`ww`, then 32 echoes of the payload checked byte for byte.
    pub fn start(
        mut link: EthLink<'s, D>,
        h: SocketHandle,
        host: &str,
        wr: &'s mut [u8],
        ww: &'s mut [u8],
        t0: std::time::Instant,
    ) -> Self {
        // Delayed ACKs (smoltcp's default 10 ms, as the kernel client does once it
        // sees a ping-pong pattern): the echo's ACK rides on the next message
        // instead of costing a frame (and a kick) of its own inside the round trip.
        link.socket(h)
            .set_ack_delay(Some(tickwire_bypass::smoltcp::time::Duration::from_millis(
                10,
            )));
        let mut rng = MaskRng::from_seed([0x28; 32]);
        let mut nonce = [0u8; 16];
        rng.fill_bytes(&mut nonce);
        let hs = ClientHandshake::new(host, "/", nonce);
        // This loop runs no codec timers (no handle_timeout): any instant will do.
        let ep = Endpoint::client(&hs, wr, ww, rng, &Settings::default(), CodecInstant::ZERO)
            .expect("endpoint");
        let mut st = SmolClient {
            link,
            h,
            ep,
            t0,
            p: payload(),
        };
        while !st.ep.is_open() {
            assert!(t0.elapsed().as_secs() < 20, "smoltcp handshake stalled");
            st.ep.flush(st.link.socket(h)).expect("flush");
            let now = st.now();
            st.link.poll(now).expect("poll");
            assert!(st.ep.recv(st.link.socket(h)).expect("handshake").is_none());
        }
        // Verify: the echo is the payload.
        for i in 0..32u8 {
            st.p[0] = i;
            st.ep.tx().send_binary(&st.p.clone()).expect("send");
            st.ep.flush(st.link.socket(h)).expect("flush");
            loop {
                let now = st.now();
                st.link.poll(now).expect("poll");
                match st.ep.recv(st.link.socket(h)).expect("recv") {
                    Some((Message::Binary(b), _)) => {
                        assert_eq!(b, &st.p[..], "echo {i}");
                        break;
                    }
                    Some(_) => {}
                    None => assert!(t0.elapsed().as_secs() < 20, "smoltcp echo stalled"),
                }
            }
        }
        st
    }

    pub fn now(&self) -> Instant {
        Instant::from_micros(self.t0.elapsed().as_micros() as i64)
    }

    /// One round trip; returns the touched payload byte.
    #[inline]
    pub fn one(&mut self) -> u64 {
        if let Err(e) = self.ep.tx().send_binary(&self.p) {
            unexpected(&e);
        }
        if let Err(e) = self.ep.flush(self.link.socket(self.h)) {
            unexpected(&e);
        }
        loop {
            let now = self.now();
            if let Err(e) = self.link.poll(now) {
                unexpected(&e);
            }
            match self
                .ep
                .recv(self.link.sockets.get_mut::<tcp::Socket>(self.h))
            {
                Ok(Some((Message::Binary(b), _))) if b.len() == SIZE => return touch(b),
                Ok(None) => std::hint::spin_loop(),
                other => unexpected(&other.map(|o| o.map(|(m, _)| m))),
            }
        }
    }

    /// Reset the connection (its server ends at once).
    pub fn abort(&mut self) {
        self.link.socket(self.h).abort();
        let now = self.now();
        let _ = self.link.poll(now);
    }
}

fn xdp(cfg: &RunConfig, pair: &VethPair, peer: usize) -> Measurement {
    let (port, echo) = echo_server(pair, peer);
    let mut area = UmemArea::new(1024, 2048).expect("UMEM");
    let xcfg = XdpConfig {
        frame_size: 2048,
        ring_size: 512,
        ..XdpConfig::default()
    };
    let (program, device) = pair
        .in_client(|| {
            let program = XdpProgram::attach(netns::CLIENT_IF, Attach::Auto)?;
            let device = XdpDevice::open(netns::CLIENT_IF, area.as_mut_slice(), xcfg)?;
            program.insert(xcfg.queue, &device)?;
            Ok::<_, std::io::Error>((program, device))
        })
        .expect("enter the client namespace")
        .expect("AF_XDP socket and XDP program");
    let mut mem = vec![0u8; 4 * 64 * 1024];
    let (tcp_mem, ws_mem) = mem.split_at_mut(2 * 64 * 1024);
    let (rx, tx) = tcp_mem.split_at_mut(64 * 1024);
    let (wr, ww) = ws_mem.split_at_mut(64 * 1024);
    let mut slots = [SocketStorage::EMPTY; 1];
    let t0 = std::time::Instant::now();
    let addr = Ipv4Cidr::new(netns::XDP_ADDR, netns::PREFIX);
    let mut link = XdpLink::new(device, &mut slots, addr, None, 0x5eed, Instant::ZERO);
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
        "bypass_xdp: AF_XDP ({} XDP, {}): per round trip {:.2} sendto(2) kicks, {:.2} TX frames, \
         {:.2} RX frames, {:.3} voluntary context switches, no other system call ({ops} round trips)",
        if program.is_native() {
            "native"
        } else {
            "generic"
        },
        if st.link.device.is_zero_copy() {
            "zero-copy"
        } else {
            "copy mode"
        },
        per(stats.tx_kicks, stats0.tx_kicks),
        per(stats.tx_frames, stats0.tx_frames),
        per(stats.rx_frames, stats0.rx_frames),
        per(cs, cs0),
    );
    // A reset ends the server's connection (and its thread) at once.
    st.abort();
    echo.join().expect("echo thread");
    drop(program);
    m
}

pub(super) fn kernel(cfg: &RunConfig, pair: &VethPair, peer: usize, busy: bool) -> Measurement {
    let (port, echo) = echo_server(pair, peer);
    let url = format!("ws://{}:{port}/", netns::SERVER_ADDR);
    let mut c = pair
        .in_client(|| {
            let mode = if busy {
                RecvMode::Spin
            } else {
                RecvMode::Sleep
            };
            ClientBuilder::new().recv_mode(mode).connect(&url)
        })
        .expect("enter the client namespace")
        .expect("connect over the veth pair");
    let mut p = payload();
    for i in 0..32u8 {
        p[0] = i;
        c.send_binary(&p).expect("send");
        match c.recv().expect("recv") {
            Some(TwMessage::Binary(b)) => assert_eq!(b, &p[..], "echo {i}"),
            other => unexpected(&other),
        }
    }
    let cs0 = context_switches();
    let mut ops = 0u64;
    let m = bench_batch(
        &RunConfig { batch: 1, ..*cfg },
        &mut c,
        |_| {},
        |c, n| {
            for _ in 0..n {
                std::hint::black_box(tw_round(c, &p));
            }
            ops += n as u64;
        },
    );
    eprintln!(
        "bypass_xdp: kernel TCP ({}): {:.3} voluntary context switches per round trip ({ops} round trips)",
        if busy { "busy-poll" } else { "blocking" },
        (context_switches() - cs0) as f64 / ops.max(1) as f64,
    );
    drop(c);
    echo.join().expect("echo thread");
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every row verifies its echo and measures briefly (where root can build the pair).
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
            eprintln!("\n!!!! SKIPPED bypass_xdp rows: {:?}\n", netns::available());
            assert!(
                std::env::var_os("TICKWIRE_REQUIRE_PEERS").is_none_or(|v| v.is_empty() || v == "0"),
                "TICKWIRE_REQUIRE_PEERS is set and the AF_XDP rows cannot run"
            );
            return;
        }
        assert_eq!(v.len(), 3);
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
