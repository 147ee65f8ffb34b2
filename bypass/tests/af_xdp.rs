//! Real kernel bypass, proven between two network namespaces: a tickwire
//! WebSocket client (and a REST client) on smoltcp over an AF_XDP socket in
//! one namespace, servers on the kernel's TCP stack in the other, a veth pair
//! between them (see `tickwire_bypass::xdp::netns`).
//!
//! - tickwire's own blocking server, and tungstenite's as a peer nobody here
//!   wrote: 10,000 messages each way (the server checks every byte of every
//!   message against the same script, then echoes it; the client checks every
//!   byte of every echo), pings both ways with their pongs, the close handshake.
//! - A REST exchange (quote, order, 404) with a tiny std + httparse server.
//! - Not one heap allocation in the client's loop once it is set up.
//!
//! Needs root (network namespaces, XDP, AF_XDP). Without it each test prints
//! a loud SKIPPED line, or fails when `TICKWIRE_REQUIRE_PEERS` is set (CI).
//! The namespaces, the veth pair and the XDP program are gone when a test
//! ends, passed or failed (RAII guards).
#![cfg(all(feature = "af-xdp", target_os = "linux"))]

use std::io::{self, Read, Write};
use std::net::TcpListener;
use std::time::Duration as StdDuration;

use smoltcp::iface::SocketStorage;
use smoltcp::socket::tcp;
use smoltcp::time::Instant;
use smoltcp::wire::Ipv4Cidr;
use tickwire_bypass::demo::{self, ORDER_BODY, ORDER_REPLY, QUOTE_BODY, QUOTE_PATH, SYMBOL};
use tickwire_bypass::link::TcpBuffers;
use tickwire_bypass::rest::{RestClient, RestError};
use tickwire_bypass::ws::codec_instant;
use tickwire_bypass::xdp::netns::{self, VethPair};
use tickwire_bypass::xdp::{Attach, UmemArea, XdpConfig, XdpDevice, XdpLink, XdpProgram};
use tickwire_bypass::{Endpoint, State};
use tickwire_codec::http::RequestWriter;
use tickwire_codec::rand::MaskRng;
use tickwire_codec::ws::handshake::ClientHandshake;
use tickwire_codec::ws::{CloseCode, ConnectionError, Message, Settings};
use tickwire_conformance::{PeerError, skip_or_fail};

// The counting allocator shared with the codec's no-allocation tests.
#[path = "../../codec/tests/common/mod.rs"]
mod common;
use common::allocs;

const COUNT: usize = 10_000;
const MAX_LEN: usize = 16 * 1024;
const PING_EVERY: usize = 500;
const WS_PORT: u16 = 9001;
const HTTP_PORT: u16 = 8080;
/// Messages the client keeps in flight (sent, echo not yet received).
const WINDOW: usize = 32;
/// The whole exchange must finish within this (real) time.
const DEADLINE: StdDuration = StdDuration::from_secs(240);

/// The environment, or `None` after a loud skip (no root, no `ip`).
fn env(test: &str) -> Option<VethPair> {
    let pair = VethPair::create().map_err(|e| match e.kind() {
        io::ErrorKind::PermissionDenied | io::ErrorKind::NotFound => {
            PeerError::Absent(format!("{e} (run as root with iproute2 installed)"))
        }
        _ => PeerError::Failed(e.to_string()),
    });
    skip_or_fail(test, pair)
}

// The test's own generator, independent of the codec.
#[path = "support/gen.rs"]
mod generator;
use generator::Gen;

/// The messages the client sends, all payloads in one store. The server
/// builds the same script from the same seed and checks against it.
struct Script {
    /// (text, start, len)
    specs: Vec<(bool, usize, usize)>,
    bytes: Vec<u8>,
}

impl Script {
    fn new(seed: u64) -> Self {
        const EDGES: [usize; 9] = [0, 1, 125, 126, 127, 1460, 4096, 8192, MAX_LEN];
        const CHARS: [&str; 6] = ["a", "Z", " ", "é", "€", "😀"];
        let mut g = Gen(seed);
        let mut specs = Vec::with_capacity(COUNT);
        let mut bytes = Vec::new();
        for _ in 0..COUNT {
            let len = match g.below(10) {
                0 => EDGES[g.below(EDGES.len())],
                1..=6 => g.below(200),
                _ => g.below(MAX_LEN + 1),
            };
            let text = g.below(2) == 0;
            let at = bytes.len();
            if text {
                while bytes.len() - at < len {
                    let c = CHARS[g.below(CHARS.len())];
                    if bytes.len() - at + c.len() > len {
                        bytes.push(b'.');
                    } else {
                        bytes.extend_from_slice(c.as_bytes());
                    }
                }
            } else {
                bytes.extend((0..len).map(|_| g.next() as u8));
            }
            specs.push((text, at, len));
        }
        Script { specs, bytes }
    }

    fn payload(&self, i: usize) -> (bool, &[u8]) {
        let (text, at, len) = self.specs[i];
        (text, &self.bytes[at..at + len])
    }
}

const SEED: u64 = 0x7469_636b_7769_7265;

/// The real clock, as smoltcp's `Instant` (the peer's TCP runs on real time).
struct Clock(std::time::Instant);

impl Clock {
    fn now(&self) -> Instant {
        Instant::from_micros(self.0.elapsed().as_micros() as i64)
    }
    fn check(&self, what: &str) {
        assert!(self.0.elapsed() < DEADLINE, "stalled: {what}");
    }
}

/// What the client saw.
#[derive(Debug, Default)]
struct ClientReport {
    echoes: usize,
    pongs: usize,
    server_pings: usize,
    close: Option<u16>,
    allocs_in_loop: u64,
    zero_copy: bool,
    native: bool,
    rest: [u16; 3],
    stats: Option<tickwire_bypass::xdp::Stats>,
}

/// The client's whole run, inside the client namespace: attach the XDP
/// program, open the socket, bring smoltcp up, then the WebSocket script
/// (and the REST script if `rest`).
fn xdp_client(script: &Script, rest: bool, attach: Attach) -> ClientReport {
    let clock = Clock(std::time::Instant::now());
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
    let mut ws_read = vec![0u8; MAX_LEN + 1024];
    let mut ws_write = vec![0u8; 64 * 1024];
    let mut slots = [SocketStorage::EMPTY; 2];
    let addr = Ipv4Cidr::new(netns::XDP_ADDR, netns::PREFIX);
    let mut link = XdpLink::new(device, &mut slots, addr, None, SEED, clock.now());
    let ws = link
        .connect(
            TcpBuffers {
                rx: ws_rx,
                tx: ws_tx,
            },
            (netns::SERVER_ADDR, WS_PORT),
            49152,
        )
        .expect("connect");
    let mut rng = MaskRng::from_seed([9; 32]);
    let mut nonce = [0u8; 16];
    rng.fill_bytes(&mut nonce);
    let hs = ClientHandshake::new("10.77.0.1:9001", "/", nonce);
    let mut ep = Endpoint::client(
        &hs,
        &mut ws_read[..],
        &mut ws_write[..],
        rng,
        &Settings::default(),
        codec_instant(clock.now()),
    )
    .expect("client endpoint");

    // One turn: queued frames into the socket, packets through smoltcp and
    // the rings; when nothing moved, sleep in poll(2) for at most 1 ms.
    macro_rules! turn {
        () => {{
            ep.flush(link.socket(ws)).expect("flush");
            let moved = link.poll(clock.now()).expect("poll");
            if !moved && !link.device.has_rx() {
                link.device.wait(1).expect("wait");
            }
        }};
    }

    while ep.state() == State::Handshake {
        turn!();
        assert!(ep.recv(link.socket(ws)).expect("handshake").is_none());
        clock.check("handshake");
    }
    assert_eq!(ep.state(), State::Open);

    let before = allocs();
    let (mut sent, mut pings) = (0, 0);
    while report.echoes < COUNT || report.pongs < pings {
        // Keep WINDOW messages in flight.
        while sent < COUNT && sent < report.echoes + WINDOW {
            let (text, p) = script.payload(sent);
            let r = if text {
                ep.tx()
                    .send_text(std::str::from_utf8(p).expect("script text"))
            } else {
                ep.tx().send_binary(p)
            };
            match r {
                Ok(()) => sent += 1,
                Err(ConnectionError::Backpressure) => break,
                Err(e) => panic!("send {sent}: {e}"),
            }
            if sent % PING_EVERY == 0 {
                ep.tx()
                    .send_ping(&(sent as u64).to_be_bytes())
                    .expect("ping");
                pings += 1;
            }
        }
        turn!();
        while let Some((msg, _)) = ep.recv(link.socket(ws)).expect("recv") {
            let i = report.echoes;
            match msg {
                Message::Text(t) => {
                    assert_eq!(script.payload(i), (true, t.as_bytes()), "echo {i}");
                    report.echoes += 1;
                }
                Message::Binary(b) => {
                    assert_eq!(script.payload(i), (false, b), "echo {i}");
                    report.echoes += 1;
                }
                Message::Pong(p) => {
                    assert_eq!(p, &(((report.pongs + 1) * PING_EVERY) as u64).to_be_bytes());
                    report.pongs += 1;
                }
                Message::Ping(_) => report.server_pings += 1,
                Message::Close(c) => panic!("server closed early: {c:?}"),
            }
        }
        clock.check("messages");
    }

    ep.tx()
        .close(Some(CloseCode::NORMAL), "bye")
        .expect("close");
    let finished = |s: tcp::State| matches!(s, tcp::State::Closed | tcp::State::TimeWait);
    while !(ep.is_done() && finished(link.socket(ws).state())) {
        turn!();
        while let Some((msg, _)) = ep.recv(link.socket(ws)).expect("recv close") {
            if let Message::Close(c) = msg {
                report.close = c.map(|c| c.code.into());
            }
        }
        clock.check("close");
    }
    report.allocs_in_loop = allocs() - before;

    if rest {
        let h = link
            .connect(
                TcpBuffers {
                    rx: rest_rx,
                    tx: rest_tx,
                },
                (netns::SERVER_ADDR, HTTP_PORT),
                49153,
            )
            .expect("connect REST");
        let mut writer = RequestWriter::new([0u8; 1024], "10.77.0.1:8080").expect("writer");
        writer
            .default_header("Accept", "application/json")
            .expect("default header");
        let mut client = RestClient::new(writer, [0u8; 4096]);
        let before = allocs();
        let mut step = 0;
        let mut waiting = false;
        loop {
            link.poll(clock.now()).expect("poll");
            let sock = link.socket(h);
            if !waiting && step < 3 && sock.may_send() {
                match demo::send_rest_request(&mut client, sock, step) {
                    Ok(_) => waiting = true,
                    Err(RestError::SocketFull) => {}
                    Err(e) => panic!("REST send: {e}"),
                }
            }
            let sock = link.socket(h);
            if waiting && let Some(r) = client.recv(sock).expect("REST recv") {
                let want: &[u8] = match step {
                    0 => QUOTE_BODY.as_bytes(),
                    1 => ORDER_REPLY.as_bytes(),
                    _ => b"",
                };
                assert_eq!(r.body(), want, "REST response {step}");
                report.rest[step] = r.status();
                waiting = false;
                step += 1;
                if step == 3 {
                    sock.close();
                }
            }
            if step == 3 && finished(link.socket(h).state()) {
                break;
            }
            if !link.device.has_rx() {
                link.device.wait(1).expect("wait");
            }
            clock.check("REST");
        }
        report.allocs_in_loop += allocs() - before;
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

/// Check message `i` of the script at the server.
fn server_check(script: &Script, i: usize, text: bool, got: &[u8]) {
    let (want_text, want) = script.payload(i);
    assert_eq!(text, want_text, "server: message {i}: kind");
    assert!(got == want, "server: message {i}: bytes differ");
}

/// tickwire's blocking server: checks and echoes every data message, pings
/// the client every 1,000 messages, answers the close. Returns (messages, pongs).
fn tickwire_server(listener: TcpListener, script: &Script) -> (usize, usize) {
    use tickwire::ws::Message;
    let mut server = tickwire::ws::Server::builder()
        .max_message_size(1 << 20)
        .read_timeout(Some(StdDuration::from_secs(60)))
        .listener(listener)
        .expect("listener");
    let mut c = server.accept().expect("accept");
    let (mut n, mut pongs) = (0, 0);
    loop {
        // Check and echo each data message while it borrows the read buffer.
        let data = c
            .recv_with(|msg, tx| match msg {
                Message::Text(t) => {
                    server_check(script, n, true, t.as_bytes());
                    tx.send_text(t).map(|()| true)
                }
                Message::Binary(b) => {
                    server_check(script, n, false, b);
                    tx.send_binary(b).map(|()| true)
                }
                Message::Pong(_) => {
                    pongs += 1;
                    Ok(false)
                }
                Message::Close(f) => {
                    assert_eq!(f.map(|f| f.code), Some(CloseCode::NORMAL));
                    Ok(false)
                }
                _ => Ok(false),
            })
            .expect("server recv");
        match data {
            Some(true) => {}
            Some(false) => continue,
            None => return (n, pongs),
        }
        n += 1;
        if n % 1000 == 0 {
            c.send_ping(b"server").expect("ping");
        }
    }
}

/// tungstenite's server, the same script.
fn tungstenite_server(listener: TcpListener, script: &Script) -> (usize, usize) {
    use tungstenite::Message as T;
    let (s, _) = listener.accept().expect("accept");
    s.set_read_timeout(Some(StdDuration::from_secs(60)))
        .expect("timeout");
    let mut ws = tungstenite::accept(s).expect("tungstenite handshake");
    let (mut n, mut pongs) = (0, 0);
    loop {
        let msg = match ws.read() {
            Ok(m) => m,
            Err(tungstenite::Error::ConnectionClosed) => return (n, pongs),
            Err(e) => panic!("tungstenite server: {e}"),
        };
        match &msg {
            T::Text(t) => server_check(script, n, true, t.as_bytes()),
            T::Binary(b) => server_check(script, n, false, b),
            T::Pong(_) => {
                pongs += 1;
                continue;
            }
            T::Close(f) => {
                assert_eq!(f.as_ref().map(|f| u16::from(f.code)), Some(1000));
                continue;
            }
            _ => continue,
        }
        n += 1;
        ws.send(msg).expect("echo");
        if n % 1000 == 0 {
            ws.send(T::Ping(b"server".to_vec().into())).expect("ping");
        }
    }
}

/// A tiny keep-alive HTTP/1.1 server (std sockets, httparse): the quote,
/// the order, 404 otherwise. Returns the requests served.
fn http_server(listener: TcpListener) -> usize {
    let (mut s, _) = listener.accept().expect("accept");
    s.set_read_timeout(Some(StdDuration::from_secs(60)))
        .expect("timeout");
    let mut buf = Vec::new();
    let mut served = 0;
    loop {
        let mut headers = [httparse::EMPTY_HEADER; 16];
        let mut req = httparse::Request::new(&mut headers);
        let head = match req.parse(&buf).expect("HTTP request") {
            httparse::Status::Complete(n) => n,
            httparse::Status::Partial => {
                let mut chunk = [0u8; 4096];
                match s.read(&mut chunk).expect("read") {
                    0 => return served,
                    k => buf.extend_from_slice(&chunk[..k]),
                }
                continue;
            }
        };
        let len: usize = req
            .headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case("content-length"))
            .map_or(0, |h| {
                std::str::from_utf8(h.value).unwrap().parse().unwrap()
            });
        if buf.len() < head + len {
            let mut chunk = [0u8; 4096];
            match s.read(&mut chunk).expect("read body") {
                0 => return served,
                k => buf.extend_from_slice(&chunk[..k]),
            }
            continue;
        }
        let body = &buf[head..head + len];
        let quote = format!("{QUOTE_PATH}?symbol={SYMBOL}");
        let (status, out): (&str, &[u8]) = match (req.method, req.path) {
            (Some("GET"), Some(p)) if p == quote => ("200 OK", QUOTE_BODY.as_bytes()),
            (Some("POST"), Some("/order")) => {
                assert_eq!(body, ORDER_BODY.as_bytes());
                ("201 Created", ORDER_REPLY.as_bytes())
            }
            _ => ("404 Not Found", b""),
        };
        let resp = format!(
            "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            out.len()
        );
        s.write_all(resp.as_bytes()).expect("write");
        s.write_all(out).expect("write");
        served += 1;
        buf.drain(..head + len);
    }
}

/// Bind a listener in the server namespace.
fn listen(pair: &VethPair, port: u16) -> TcpListener {
    pair.in_server(move || TcpListener::bind((netns::SERVER_ADDR, port)))
        .expect("enter server namespace")
        .expect("bind in the server namespace")
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
    let http = http.map(|l| std::thread::spawn(move || http_server(l)));
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
    assert_eq!(report.echoes, COUNT, "echoes the client checked");
    assert_eq!(
        report.pongs,
        COUNT / PING_EVERY,
        "pongs for the client's pings"
    );
    assert_eq!(report.server_pings, COUNT / 1000, "server pings seen");
    assert_eq!(pongs, COUNT / 1000, "pongs for the server's pings");
    assert_eq!(report.close, Some(1000), "close code echoed");
    assert_eq!(
        report.allocs_in_loop, 0,
        "heap allocations in the client loop"
    );
    let stats = report.stats.expect("stats");
    assert_eq!(stats.rx_invalid, 0);
    if attach == Attach::Generic {
        assert!(!report.native, "generic XDP asked for");
    }
    if let Some(h) = http {
        assert_eq!(h.join().expect("http thread"), 3);
        assert_eq!(report.rest, [200, 201, 404]);
    }
    drop(pair);
}

#[test]
fn af_xdp_client_against_tickwire_server_and_rest() {
    // Native XDP in the veth driver (veth has it), copy-mode socket.
    run(
        "af_xdp_client_against_tickwire_server",
        tickwire_server,
        true,
        Attach::Auto,
    );
}

#[test]
fn af_xdp_client_against_tungstenite_server() {
    // Generic XDP, the mode every interface has.
    run(
        "af_xdp_client_against_tungstenite_server",
        tungstenite_server,
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
