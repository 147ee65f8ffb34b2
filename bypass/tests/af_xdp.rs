//! Real kernel bypass, proven between two network namespaces: a tickwire
//! WebSocket client (and a REST client) on smoltcp over an AF_XDP socket in
//! one namespace, servers on the kernel's TCP stack in the other, a veth pair
//! between them (see `tickwire_bypass::xdp::netns`).
//!
//! - tickwire's own blocking server, and tungstenite's as a peer nobody here
//!   wrote: 10,000 messages each way (the server checks every byte of every
//!   message against the same script, then echoes it; the client checks every
//!   byte of every echo), pings both ways with their pongs, the close handshake.
//! - REST with a tiny std + httparse server: 10,000 `POST /echo` (every body
//!   checked), then a quote, an order and a 404.
//! - Not one heap allocation in the client's loop once it is set up.
//!
//! Needs root (network namespaces, XDP, AF_XDP). Without it each test prints
//! a loud SKIPPED line, or fails when `TICKWIRE_REQUIRE_PEERS` is set (CI).
//! The namespaces, the veth pair and the XDP program are gone when a test
//! ends, passed or failed (RAII guards).
#![cfg(all(feature = "af-xdp", target_os = "linux"))]

use std::net::TcpListener;

use smoltcp::iface::SocketStorage;
use smoltcp::wire::Ipv4Cidr;
use tickwire_bypass::link::TcpBuffers;
use tickwire_bypass::xdp::netns;
use tickwire_bypass::xdp::{Attach, UmemArea, XdpConfig, XdpDevice, XdpLink, XdpProgram};

// The counting allocator shared with the codec's no-allocation tests.
#[path = "../../codec/tests/common/mod.rs"]
mod common;
// The test's own generator, independent of the codec.
#[path = "support/gen.rs"]
mod generator;
// The scripts and the peers, shared with the DPDK tests.
#[path = "support/peers.rs"]
mod peers;

use peers::{COUNT, Clock, PING_EVERY, SEED, Script, listen, veth_env as env};

const WS_PORT: u16 = 9001;
const HTTP_PORT: u16 = 8080;

/// What the client saw.
#[derive(Debug, Default)]
struct ClientReport {
    ws: peers::WsReport,
    rest: Option<peers::RestReport>,
    zero_copy: bool,
    native: bool,
    stats: Option<tickwire_bypass::xdp::Stats>,
}

/// Sleep in the socket's poll(2) for at most 1 ms when a turn moved nothing.
fn wait(link: &mut XdpLink<'_, '_>) {
    if !link.device.has_rx() {
        link.device.wait(1).expect("wait");
    }
}

/// The client's whole run, inside the client namespace: attach the XDP
/// program, open the socket, bring smoltcp up, then the WebSocket script
/// (and the REST script if `rest`).
fn xdp_client(script: &Script, rest: bool, attach: Attach) -> ClientReport {
    let clock = Clock::start();
    let program = XdpProgram::attach(netns::CLIENT_IF, attach).expect("attach XDP program");
    let mut area = UmemArea::new(2048, 2048).expect("UMEM");
    let cfg = XdpConfig {
        frame_size: 2048,
        ring_size: 1024,
        ..XdpConfig::default()
    };
    let device = XdpDevice::open(netns::CLIENT_IF, area.as_mut_slice(), cfg).expect("XDP socket");
    program.insert(cfg.queue, &device).expect("XSKMAP insert");
    let mut report = ClientReport {
        zero_copy: device.is_zero_copy(),
        native: program.is_native(),
        ..ClientReport::default()
    };

    // All the client's memory, up front.
    const TCP: usize = 256 * 1024;
    let mut tcp_mem = vec![0u8; 4 * TCP];
    let (ws_tcp, rest_tcp) = tcp_mem.split_at_mut(2 * TCP);
    let (ws_rx, ws_tx) = ws_tcp.split_at_mut(TCP);
    let (rest_rx, rest_tx) = rest_tcp.split_at_mut(TCP);
    let mut slots = [SocketStorage::EMPTY; 2];
    let addr = Ipv4Cidr::new(netns::XDP_ADDR, netns::PREFIX);
    let mut link = XdpLink::new(device, &mut slots, addr, None, SEED, clock.now());
    let server = netns::SERVER_ADDR;
    let ws = link
        .connect(
            TcpBuffers {
                rx: ws_rx,
                tx: ws_tx,
            },
            (server, WS_PORT),
            49152,
        )
        .expect("connect");
    let host = format!("{server}:{WS_PORT}");
    report.ws = peers::ws_client(&mut link, ws, &host, &clock, script, &mut wait);
    if rest {
        let h = link
            .connect(
                TcpBuffers {
                    rx: rest_rx,
                    tx: rest_tx,
                },
                (server, HTTP_PORT),
                49153,
            )
            .expect("connect REST");
        let host = format!("{server}:{HTTP_PORT}");
        report.rest = Some(peers::rest_client(
            &mut link, h, &host, &clock, script, &mut wait,
        ));
    }
    report.stats = Some(link.device.stats());
    let ks = link.device.kernel_stats().expect("XDP statistics");
    assert_eq!(
        (ks.rx_invalid_descs, ks.tx_invalid_descs),
        (0, 0),
        "descriptors the kernel refused"
    );
    eprintln!("AF_XDP client: {:?}; kernel: {ks:?}", report.stats);
    report
}

fn run(test: &str, server: fn(TcpListener, &Script) -> (usize, usize), rest: bool, attach: Attach) {
    let Some(pair) = env(test) else {
        return;
    };
    let ws_listener = listen(&pair, WS_PORT);
    let http = rest.then(|| listen(&pair, HTTP_PORT));
    // The sockets were made in the server namespace; the threads serving them
    // need not be in it.
    let ws = std::thread::spawn(move || server(ws_listener, &Script::new(SEED)));
    let http = http.map(|l| std::thread::spawn(move || peers::http_server(l)));
    let script = Script::new(SEED);
    let report = pair
        .in_client(|| xdp_client(&script, rest, attach))
        .expect("enter client namespace");
    let (got, pongs) = ws.join().expect("server thread");
    println!(
        "{test}: {COUNT} messages each way ({} payload bytes), XDP program {}, socket {}; {report:?}",
        script.bytes.len(),
        if report.native { "native" } else { "generic" },
        if report.zero_copy {
            "zero-copy"
        } else {
            "copy mode"
        },
    );
    assert_eq!(got, COUNT, "messages the server checked");
    let ws = report.ws;
    assert_eq!(ws.echoes, COUNT, "echoes the client checked");
    assert_eq!(ws.pongs, COUNT / PING_EVERY, "pongs for the client's pings");
    assert_eq!(ws.server_pings, COUNT / 1000, "server pings seen");
    assert_eq!(pongs, COUNT / 1000, "pongs for the server's pings");
    assert_eq!(ws.close, Some(1000), "close code echoed");
    assert_eq!(ws.allocs_in_loop, 0, "heap allocations in the client loop");
    let stats = report.stats.expect("stats");
    assert_eq!(stats.rx_invalid, 0);
    if attach == Attach::Generic {
        assert!(!report.native, "generic XDP asked for");
    }
    if let Some(h) = http {
        assert_eq!(h.join().expect("http thread"), COUNT + 3, "requests served");
        let r = report.rest.expect("REST report");
        assert_eq!(r.echoes, COUNT, "REST echoes checked");
        assert_eq!(r.statuses, [200, 201, 404]);
        assert_eq!(r.allocs_in_loop, 0, "heap allocations in the REST loop");
    }
    drop(pair);
}

#[test]
fn af_xdp_client_against_tickwire_server_and_rest() {
    // Native XDP in the veth driver (veth has it), copy-mode socket.
    run(
        "af_xdp_client_against_tickwire_server",
        peers::tickwire_server,
        true,
        Attach::Auto,
    );
}

#[test]
fn af_xdp_client_against_tungstenite_server() {
    // Generic XDP, the mode every interface has.
    run(
        "af_xdp_client_against_tungstenite_server",
        peers::tungstenite_server,
        false,
        Attach::Generic,
    );
}

#[test]
fn environment_is_torn_down_when_a_test_fails() {
    let Some(pair) = env("environment_is_torn_down_when_a_test_fails") else {
        return;
    };
    let names = [pair.client_ns().to_string(), pair.server_ns().to_string()];
    for ns in &names {
        assert!(
            std::path::Path::new("/run/netns").join(ns).exists(),
            "{ns} made"
        );
    }
    // A failure inside the client namespace with the XDP program attached.
    let failed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
        pair.in_client(|| {
            let _program = XdpProgram::attach(netns::CLIENT_IF, Attach::Auto).expect("attach");
            panic!("deliberate failure (this message is expected)");
        })
    }));
    assert!(failed.is_err(), "the failure propagates");
    for ns in &names {
        assert!(
            !std::path::Path::new("/run/netns").join(ns).exists(),
            "{ns} deleted after the failure"
        );
    }
}
