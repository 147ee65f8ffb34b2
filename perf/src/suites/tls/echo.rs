//! TLS loopback round trip: the measuring thread sends a binary message over
//! TLS 1.3 and waits for its echo from a server of the same library on the
//! other core. One round trip per sample.

use std::hint::black_box;
use std::net::TcpStream;

use tickwire::tls::rustls::pki_types::ServerName;
use tickwire::tls::rustls::{ClientConnection, ServerConnection, StreamOwned};
use tickwire::ws::{Client, Message, Server};
use tungstenite::Bytes;
use tungstenite::protocol::{Message as TMessage, Role as TRole, WebSocket as TSocket};

use crate::harness::{Measurement, RunConfig, bench_batch};
use crate::suites::loopback::rtt::tw_echo;
use crate::suites::loopback::{RTT_SIZES, spawn_pinned, tcp_pair};
use crate::suites::{Case, touch, unexpected};

/// Scenario name.
pub fn name(n: usize, busy: bool) -> String {
    let mode = if busy { "busy-poll" } else { "blocking" };
    format!("TLS 1.3 loopback round trip {n}B binary ({mode})")
}

const NOTE_TW: &str = "wss://: ws::Client::send_binary + recv (blocking, no timeouts: read(2) sleeps on \
                       the socket) against a TLS ws::Server echo on the other core; TLS via the codec's \
                       TlsCodec (rustls unbuffered handshake, then its own TLS 1.3 record layer on \
                       ring's AEAD), client frames masked";
const NOTE_TUNG: &str = "tungstenite WebSocket over rustls StreamOwned<ClientConnection, TcpStream> (same \
                         rustls configs: ring, TLS 1.3) against a tungstenite + rustls echo on the other core";

const NOTE_BUSY: &str = "both ends on non-blocking sockets, spinning on WouldBlock (tickwire: \
                         set_blocking(false) + try_recv; tungstenite: read() until not WouldBlock)";

pub(super) fn cases(peer: usize, v: &mut Vec<Case<'static>>) {
    for busy in [false, true] {
        let (tw_note, tung_note) = if busy {
            (NOTE_BUSY, NOTE_BUSY)
        } else {
            (NOTE_TW, NOTE_TUNG)
        };
        // A busy-polling echo spins on the peer core even while its row waits for its turn.
        let turns = |c: Case<'static>| if busy { c.sequential() } else { c };
        for n in RTT_SIZES {
            v.push(turns(Case::new(
                name(n, busy),
                "tickwire",
                true,
                tw_note,
                move |cfg| tickwire(cfg, peer, n, busy),
            )));
            v.push(turns(Case::new(
                name(n, busy),
                "tungstenite 0.30 + rustls 0.23",
                false,
                tung_note,
                move |cfg| tungstenite(cfg, peer, n, busy),
            )));
            let nx_note = if busy {
                super::nexus::NOTE_ECHO_BUSY
            } else {
                super::nexus::NOTE_ECHO
            };
            v.push(turns(Case::new(
                name(n, busy),
                super::nexus::LIB,
                false,
                nx_note,
                move |cfg| super::nexus::echo(cfg, peer, n, busy),
            )));
        }
    }
}

/// tungstenite's read, spinning on `WouldBlock` (a non-blocking socket).
#[inline(always)]
fn t_read<S: std::io::Read + std::io::Write>(
    ws: &mut TSocket<S>,
) -> Result<TMessage, tungstenite::Error> {
    loop {
        match ws.read() {
            Err(tungstenite::Error::Io(e)) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::hint::spin_loop()
            }
            r => return r,
        }
    }
}

/// tungstenite's send, then flush until the socket took it all.
#[inline(always)]
fn t_send<S: std::io::Read + std::io::Write>(
    ws: &mut TSocket<S>,
    m: TMessage,
) -> Result<(), tungstenite::Error> {
    let mut r = ws.send(m);
    loop {
        match r {
            Err(tungstenite::Error::Io(e)) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::hint::spin_loop();
                r = ws.flush();
            }
            r => return r,
        }
    }
}

fn one(cfg: &RunConfig) -> RunConfig {
    RunConfig { batch: 1, ..*cfg }
}

fn payload(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 31 + 7) as u8).collect()
}

/// tickwire's wss:// echo server on `peer` (127.0.0.1, one connection): its port and thread.
pub(super) fn tw_server(
    server_cfg: tickwire::tls::TlsServerConfig,
    peer: usize,
    busy: bool,
) -> (u16, std::thread::JoinHandle<()>) {
    let mut server = Server::builder()
        .tls(server_cfg)
        .bind("127.0.0.1:0")
        .expect("bind 127.0.0.1");
    let port = server.local_addr().expect("local addr").port();
    let echo = spawn_pinned(peer, move || {
        let mut c = server.accept().expect("accept");
        c.handshake().expect("TLS + handshake");
        tw_echo(c, busy);
    });
    (port, echo)
}

fn tickwire(cfg: &RunConfig, peer: usize, n: usize, busy: bool) -> Measurement {
    let (client_cfg, server_cfg) = super::configs();
    let (port, echo) = tw_server(server_cfg, peer, busy);
    let mut c = Client::builder()
        .tls(client_cfg)
        .connect(&format!("wss://localhost:{port}/"))
        .expect("wss connect");
    let p = payload(n);
    c.send_binary(&p).expect("send");
    match c.recv() {
        Ok(Some(Message::Binary(b))) => assert_eq!(b, &p[..], "echo"),
        other => unexpected(&other),
    }
    let version = c.tls().and_then(|t| t.protocol_version());
    assert_eq!(
        version,
        Some(tickwire::tls::rustls::ProtocolVersion::TLSv1_3)
    );
    assert!(
        c.tls().is_some_and(|t| t.is_records_mode()),
        "TLS 1.3 records mode"
    );
    if busy {
        c.set_blocking(false).expect("evented mode");
    }
    let m = bench_batch(
        &one(cfg),
        &mut c,
        |_| {},
        |c, _| {
            if let Err(e) = c.send_binary(&p) {
                unexpected(&e);
            }
            if busy {
                loop {
                    match c.flush() {
                        Ok(()) if !c.wants_write() => break,
                        Ok(()) => std::hint::spin_loop(),
                        Err(e) => unexpected(&e),
                    }
                }
            }
            loop {
                let got = if busy { c.try_recv() } else { c.recv() };
                match got {
                    Ok(Some(Message::Binary(b))) if b.len() == p.len() => {
                        black_box(touch(b));
                        break;
                    }
                    Ok(None) if busy => std::hint::spin_loop(),
                    other => unexpected(&other),
                }
            }
        },
    );
    drop(c);
    echo.join().expect("echo thread");
    m
}

fn tungstenite(cfg: &RunConfig, peer: usize, n: usize, busy: bool) -> Measurement {
    let (client_cfg, server_cfg) = super::configs();
    let (c, s) = tcp_pair();
    let server_conn = ServerConnection::new(server_cfg.server_config().clone()).expect("server");
    let echo = spawn_pinned(peer, move || {
        let mut ws =
            TSocket::from_raw_socket(StreamOwned::new(server_conn, s), TRole::Server, None);
        let mut first = true;
        loop {
            let got = if first { ws.read() } else { t_read(&mut ws) };
            if first && busy {
                // The TLS handshake ran blocking; from now on the socket spins.
                ws.get_mut().sock.set_nonblocking(true).expect("mode");
            }
            first = false;
            match got {
                Ok(TMessage::Binary(b)) => {
                    if t_send(&mut ws, TMessage::Binary(b)).is_err() {
                        return;
                    }
                }
                Ok(_) => {}
                Err(_) => return,
            }
        }
    });
    let name = ServerName::try_from("localhost").expect("name");
    let conn = ClientConnection::new(client_cfg.client_config().clone(), name).expect("client");
    let stream: StreamOwned<ClientConnection, TcpStream> = StreamOwned::new(conn, c);
    let mut ws = TSocket::from_raw_socket(stream, TRole::Client, None);
    let p = Bytes::from(payload(n));
    ws.send(TMessage::Binary(p.clone())).expect("send");
    match ws.read() {
        Ok(TMessage::Binary(b)) => assert_eq!(b, p, "echo"),
        other => unexpected(&other),
    }
    let tls = &ws.get_ref().conn;
    assert_eq!(
        tls.protocol_version(),
        Some(tickwire::tls::rustls::ProtocolVersion::TLSv1_3)
    );
    if busy {
        ws.get_mut().sock.set_nonblocking(true).expect("mode");
    }
    let m = bench_batch(
        &one(cfg),
        &mut ws,
        |_| {},
        |ws, _| {
            if let Err(e) = t_send(ws, TMessage::Binary(p.clone())) {
                unexpected(&e);
            }
            match t_read(ws) {
                Ok(TMessage::Binary(b)) if b.len() == p.len() => {
                    black_box(touch(&b));
                }
                other => unexpected(&other),
            }
        },
    );
    drop(ws);
    echo.join().expect("echo thread");
    m
}
