//! The scripted exchanges of the device tests (AF_XDP, DPDK), written once:
//! the message script both ends build from one seed, the kernel-TCP servers
//! on the other side of the veth pair (tickwire's, tungstenite's, a tiny
//! std + httparse HTTP server), and the smoltcp-side WebSocket client, REST
//! client and WebSocket server, generic over the Ethernet device under test.
//!
//! Every byte is checked: the server checks each message against the script
//! and echoes it, the client checks each echo; pings both ways with their
//! pongs; the close handshake. The smoltcp side counts heap allocations from
//! the first message to the end of the close (the test asserts 0).
#![allow(dead_code)]

use std::io::{self, Read, Write};
use std::net::TcpListener;
use std::time::Duration as StdDuration;

use smoltcp::iface::SocketHandle;
use smoltcp::socket::tcp;
use smoltcp::time::Instant;
use tickwire_bypass::demo::{self, ORDER_BODY, ORDER_REPLY, QUOTE_BODY, QUOTE_PATH, SYMBOL};
use tickwire_bypass::eth::{EthDevice, EthLink};
use tickwire_bypass::rest::{RestClient, RestError};
use tickwire_bypass::ws::codec_instant;
use tickwire_bypass::xdp::netns::{self, VethPair};
use tickwire_bypass::{Endpoint, State};
use tickwire_codec::http::RequestWriter;
use tickwire_codec::rand::MaskRng;
use tickwire_codec::ws::handshake::ClientHandshake;
use tickwire_codec::ws::{CloseCode, ConnectionError, Message, Settings};
use tickwire_conformance::{PeerError, skip_or_fail};

use crate::common::allocs;
use crate::generator::Gen;

/// Messages each way.
pub const COUNT: usize = 10_000;
/// The largest message.
pub const MAX_LEN: usize = 16 * 1024;
/// The client pings every this many messages; the server every 1,000.
pub const PING_EVERY: usize = 500;
/// Messages the client keeps in flight (sent, echo not yet received).
pub const WINDOW: usize = 32;
/// The whole exchange must finish within this (real) time.
pub const DEADLINE: StdDuration = StdDuration::from_secs(240);
/// The script's seed.
pub const SEED: u64 = 0x7469_636b_7769_7265;
/// The REST echo path: the body comes back as it went.
pub const ECHO_PATH: &str = "/echo";

/// The messages the client sends, all payloads in one store. The server
/// builds the same script from the same seed and checks against it.
pub struct Script {
    /// (text, start, len)
    specs: Vec<(bool, usize, usize)>,
    pub bytes: Vec<u8>,
}

impl Script {
    pub fn new(seed: u64) -> Self {
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

    pub fn payload(&self, i: usize) -> (bool, &[u8]) {
        let (text, at, len) = self.specs[i];
        (text, &self.bytes[at..at + len])
    }
}

/// The real clock, as smoltcp's `Instant` (the peer's TCP runs on real time).
pub struct Clock(pub std::time::Instant);

impl Clock {
    pub fn start() -> Self {
        Clock(std::time::Instant::now())
    }
    pub fn now(&self) -> Instant {
        Instant::from_micros(self.0.elapsed().as_micros() as i64)
    }
    pub fn check(&self, what: &str) {
        self.check_at(what, 0);
    }
    /// As `check`, saying how far it got (`at`: messages, requests).
    pub fn check_at(&self, what: &str, at: usize) {
        // Read once (the first call is before any loop that counts allocations).
        static LIMIT: std::sync::OnceLock<StdDuration> = std::sync::OnceLock::new();
        let limit = *LIMIT.get_or_init(|| {
            std::env::var("TICKWIRE_TEST_DEADLINE_SECS")
                .ok()
                .and_then(|s| s.parse().ok())
                .map_or(DEADLINE, StdDuration::from_secs)
        });
        assert!(self.0.elapsed() < limit, "stalled: {what} at {at}");
    }
}

/// What the smoltcp-side WebSocket client saw.
#[derive(Debug, Default, Clone, Copy)]
pub struct WsReport {
    pub echoes: usize,
    pub pongs: usize,
    pub server_pings: usize,
    pub close: Option<u16>,
    pub allocs_in_loop: u64,
}

/// The client's whole WebSocket script on socket `h` of `link` (connecting
/// to `host`): the handshake, COUNT messages with WINDOW in flight, every
/// echo checked, a ping every PING_EVERY, the close. `idle` runs when a turn
/// moved nothing (sleep in the device's poll(2), or yield).
pub fn ws_client<D: EthDevice>(
    link: &mut EthLink<'_, D>,
    h: SocketHandle,
    host: &str,
    clock: &Clock,
    script: &Script,
    idle: &mut dyn FnMut(&mut EthLink<'_, D>),
) -> WsReport {
    let mut report = WsReport::default();
    let mut ws_read = vec![0u8; MAX_LEN + 1024];
    let mut ws_write = vec![0u8; 64 * 1024];
    let mut rng = MaskRng::from_seed([9; 32]);
    let mut nonce = [0u8; 16];
    rng.fill_bytes(&mut nonce);
    let hs = ClientHandshake::new(host, "/", nonce);
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
    // the device; `idle` when nothing moved.
    macro_rules! turn {
        () => {{
            ep.flush(link.socket(h)).expect("flush");
            let moved = link.poll(clock.now()).expect("poll");
            if !moved {
                idle(link);
            }
        }};
    }

    while ep.state() == State::Handshake {
        turn!();
        assert!(ep.recv(link.socket(h)).expect("handshake").is_none());
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
        while let Some((msg, _)) = ep.recv(link.socket(h)).expect("recv") {
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
        clock.check_at("messages", report.echoes);
    }

    ep.tx()
        .close(Some(CloseCode::NORMAL), "bye")
        .expect("close");
    while !(ep.is_done() && finished(link.socket(h).state())) {
        turn!();
        while let Some((msg, _)) = ep.recv(link.socket(h)).expect("recv close") {
            if let Message::Close(c) = msg {
                report.close = c.map(|c| c.code.into());
            }
        }
        clock.check("close");
    }
    report.allocs_in_loop = allocs() - before;
    report
}

/// The `idle` of a busy-polling loop: yield the core when a turn moved
/// nothing (the tests share 2 cores with their peers).
pub fn yield_core<D: EthDevice>(_: &mut EthLink<'_, D>) {
    std::thread::yield_now();
}

/// Whether a TCP connection is over on our side.
pub fn finished(s: tcp::State) -> bool {
    matches!(s, tcp::State::Closed | tcp::State::TimeWait)
}

/// What the smoltcp-side REST client saw.
#[derive(Debug, Default, Clone, Copy)]
pub struct RestReport {
    /// Echo responses whose body matched the request's, byte for byte.
    pub echoes: usize,
    /// Statuses of the quote, the order and the unknown path.
    pub statuses: [u16; 3],
    pub allocs_in_loop: u64,
}

/// The REST script on socket `h` (connecting to `host`), one request at a
/// time on one keep-alive connection: COUNT `POST /echo` with the script's
/// payloads as bodies (each response body checked), then the quote, the
/// order and an unknown path; then the client closes.
pub fn rest_client<D: EthDevice>(
    link: &mut EthLink<'_, D>,
    h: SocketHandle,
    host: &str,
    clock: &Clock,
    script: &Script,
    idle: &mut dyn FnMut(&mut EthLink<'_, D>),
) -> RestReport {
    let mut report = RestReport::default();
    let mut writer = RequestWriter::new(vec![0u8; MAX_LEN + 1024], host).expect("writer");
    writer
        .default_header("Accept", "application/json")
        .expect("default header");
    let mut client = RestClient::new(writer, vec![0u8; MAX_LEN + 4096]);
    let before = allocs();
    let mut step = 0;
    let mut waiting = false;
    let last = COUNT + 3;
    loop {
        let moved = link.poll(clock.now()).expect("poll");
        let sock = link.socket(h);
        if !waiting && step < last && sock.may_send() {
            let sent = if step < COUNT {
                let (_, body) = script.payload(step);
                client.send(sock, |w| {
                    w.post(ECHO_PATH)
                        .header("Content-Type", "application/octet-stream")
                        .body(body)
                        .finish()
                })
            } else {
                demo::send_rest_request(&mut client, sock, step - COUNT)
            };
            match sent {
                Ok(_) => waiting = true,
                Err(RestError::SocketFull) => {}
                Err(e) => panic!("REST send {step}: {e}"),
            }
        }
        let sock = link.socket(h);
        if waiting && let Some(r) = client.recv(sock).expect("REST recv") {
            if step < COUNT {
                assert_eq!(r.status(), 200, "echo {step}");
                assert!(r.body() == script.payload(step).1, "echo {step}: body");
                report.echoes += 1;
            } else {
                let want: &[u8] = match step - COUNT {
                    0 => QUOTE_BODY.as_bytes(),
                    1 => ORDER_REPLY.as_bytes(),
                    _ => b"",
                };
                assert_eq!(r.body(), want, "REST response {step}");
                report.statuses[step - COUNT] = r.status();
            }
            waiting = false;
            step += 1;
            if step == last {
                sock.close();
            }
            continue;
        }
        if step == last && finished(link.socket(h).state()) {
            break;
        }
        if !moved {
            idle(link);
        }
        clock.check_at("REST", step);
    }
    report.allocs_in_loop = allocs() - before;
    report
}

/// What the smoltcp-side WebSocket server saw.
#[derive(Debug, Default, Clone, Copy)]
pub struct ServerReport {
    pub messages: usize,
    pub pongs: usize,
    pub close: Option<u16>,
    pub allocs_in_loop: u64,
}

/// A tickwire WebSocket server on smoltcp: the listening socket `h` accepts
/// one client; each data message is checked against the script and echoed,
/// a ping goes out every 1,000, the close is answered; returns when the TCP
/// connection is over.
pub fn ws_server<D: EthDevice>(
    link: &mut EthLink<'_, D>,
    h: SocketHandle,
    clock: &Clock,
    script: &Script,
    idle: &mut dyn FnMut(&mut EthLink<'_, D>),
) -> ServerReport {
    let mut report = ServerReport::default();
    let mut read = vec![0u8; MAX_LEN + 1024];
    let mut write = vec![0u8; 64 * 1024];
    let settings = Settings::default();
    let mut ep = Endpoint::server(
        &mut read[..],
        &mut write[..],
        &settings,
        codec_instant(clock.now()),
    );
    let mut before = None;
    let mut connected = false;
    loop {
        ep.flush(link.socket(h)).expect("server flush");
        let moved = link.poll(clock.now()).expect("poll");
        if ep.state() == State::Open && before.is_none() {
            before = Some(allocs());
        }
        let mut pings = 0;
        loop {
            // Read the next message only when its echo (and a control frame)
            // fits the send buffer: until then TCP's window holds the client back.
            ep.flush(link.socket(h)).expect("server flush");
            if ep.tx().room() < MAX_LEN + 64 {
                break;
            }
            let Some((msg, tx)) = ep.recv(link.socket(h)).expect("server recv") else {
                break;
            };
            match msg {
                Message::Text(t) => {
                    server_check(script, report.messages, true, t.as_bytes());
                    tx.send_text(t).expect("echo");
                }
                Message::Binary(b) => {
                    server_check(script, report.messages, false, b);
                    tx.send_binary(b).expect("echo");
                }
                Message::Pong(_) => {
                    report.pongs += 1;
                    continue;
                }
                Message::Close(c) => {
                    report.close = c.map(|c| c.code.into());
                    continue;
                }
                Message::Ping(_) => continue,
            }
            report.messages += 1;
            if report.messages % 1000 == 0 {
                pings += 1;
            }
        }
        for _ in 0..pings {
            ep.tx().send_ping(b"server").expect("server ping");
        }
        connected |= link.socket(h).is_active();
        if connected && ep.is_done() && finished(link.socket(h).state()) {
            break;
        }
        if !moved {
            idle(link);
        }
        clock.check_at("server", report.messages);
    }
    report.allocs_in_loop = allocs() - before.expect("the connection opened");
    report
}

/// The two-namespace environment, or `None` after a loud skip (no root, no `ip`).
pub fn veth_env(test: &str) -> Option<VethPair> {
    let pair = VethPair::create().map_err(|e| match e.kind() {
        io::ErrorKind::PermissionDenied | io::ErrorKind::NotFound => {
            PeerError::Absent(format!("{e} (run as root with iproute2 installed)"))
        }
        _ => PeerError::Failed(e.to_string()),
    });
    skip_or_fail(test, pair)
}

/// Bind a listener in the server namespace.
pub fn listen(pair: &VethPair, port: u16) -> TcpListener {
    pair.in_server(move || TcpListener::bind((netns::SERVER_ADDR, port)))
        .expect("enter server namespace")
        .expect("bind in the server namespace")
}

/// Check message `i` of the script at the server.
pub fn server_check(script: &Script, i: usize, text: bool, got: &[u8]) {
    let (want_text, want) = script.payload(i);
    assert_eq!(text, want_text, "server: message {i}: kind");
    assert!(got == want, "server: message {i}: bytes differ");
}

/// tickwire's blocking server: checks and echoes every data message, pings
/// the client every 1,000 messages, answers the close. Returns (messages, pongs).
pub fn tickwire_server(listener: TcpListener, script: &Script) -> (usize, usize) {
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
pub fn tungstenite_server(listener: TcpListener, script: &Script) -> (usize, usize) {
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

/// A tiny keep-alive HTTP/1.1 server (std sockets, httparse): `POST /echo`
/// answers with the body it got, the quote, the order, 404 otherwise.
/// Returns the requests served.
pub fn http_server(listener: TcpListener) -> usize {
    let (mut s, _) = listener.accept().expect("accept");
    s.set_read_timeout(Some(StdDuration::from_secs(60)))
        .expect("timeout");
    s.set_nodelay(true).expect("nodelay");
    let mut buf = Vec::new();
    let mut served = 0;
    let mut out = Vec::new();
    loop {
        let mut headers = [httparse::EMPTY_HEADER; 16];
        let mut req = httparse::Request::new(&mut headers);
        let head = match req.parse(&buf).expect("HTTP request") {
            httparse::Status::Complete(n) => n,
            httparse::Status::Partial => {
                let mut chunk = [0u8; 16384];
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
            let mut chunk = [0u8; 16384];
            match s.read(&mut chunk).expect("read body") {
                0 => return served,
                k => buf.extend_from_slice(&chunk[..k]),
            }
            continue;
        }
        let body = &buf[head..head + len];
        let quote = format!("{QUOTE_PATH}?symbol={SYMBOL}");
        let (status, ctype, payload): (&str, &str, &[u8]) = match (req.method, req.path) {
            (Some("POST"), Some(ECHO_PATH)) => ("200 OK", "application/octet-stream", body),
            (Some("GET"), Some(p)) if p == quote => {
                ("200 OK", "application/json", QUOTE_BODY.as_bytes())
            }
            (Some("POST"), Some("/order")) => {
                assert_eq!(body, ORDER_BODY.as_bytes());
                ("201 Created", "application/json", ORDER_REPLY.as_bytes())
            }
            _ => ("404 Not Found", "application/json", b""),
        };
        out.clear();
        out.extend_from_slice(
            format!(
                "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\n\r\n",
                payload.len()
            )
            .as_bytes(),
        );
        out.extend_from_slice(payload);
        s.write_all(&out).expect("write");
        served += 1;
        buf.drain(..head + len);
    }
}
