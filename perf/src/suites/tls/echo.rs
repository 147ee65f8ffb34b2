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
use crate::suites::loopback::{RTT_SIZES, spawn_pinned, tcp_pair};
use crate::suites::{Case, touch, unexpected};

/// Scenario name.
pub fn name(n: usize) -> String {
    format!("TLS 1.3 loopback round trip {n}B binary (blocking)")
}

const NOTE_TW: &str = "wss://: ws::Client::send_binary + recv against a TLS ws::Server echo on the other \
                       core; TLS via the codec's TlsCodec (rustls unbuffered, ring), client frames masked";
const NOTE_TUNG: &str = "tungstenite WebSocket over rustls StreamOwned<ClientConnection, TcpStream> (same \
                         rustls configs: ring, TLS 1.3) against a tungstenite + rustls echo on the other core";

pub(super) fn cases(peer: usize, v: &mut Vec<Case<'static>>) {
    for n in RTT_SIZES {
        v.push(Case::new(name(n), "tickwire", true, NOTE_TW, move |cfg| {
            tickwire(cfg, peer, n)
        }));
        v.push(Case::new(
            name(n),
            "tungstenite 0.30 + rustls 0.23",
            false,
            NOTE_TUNG,
            move |cfg| tungstenite(cfg, peer, n),
        ));
    }
}

fn one(cfg: &RunConfig) -> RunConfig {
    RunConfig { batch: 1, ..*cfg }
}

fn payload(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 31 + 7) as u8).collect()
}

fn tickwire(cfg: &RunConfig, peer: usize, n: usize) -> Measurement {
    let (client_cfg, server_cfg) = super::configs();
    let mut server = Server::builder()
        .tls(server_cfg)
        .bind("127.0.0.1:0")
        .expect("bind 127.0.0.1");
    let port = server.local_addr().expect("local addr").port();
    let echo = spawn_pinned(peer, move || {
        let mut c = server.accept().expect("accept + TLS + handshake");
        let mut buf = Vec::with_capacity(1 << 16);
        loop {
            match c.recv() {
                Ok(Some(Message::Binary(b))) => {
                    buf.clear();
                    buf.extend_from_slice(b);
                }
                Ok(Some(_)) => continue,
                Ok(None) | Err(_) => return,
            }
            if c.send_binary(&buf).is_err() {
                return;
            }
        }
    });
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
    let suite = c.tls().and_then(|t| t.codec().protocol_version());
    assert_eq!(suite, Some(tickwire::tls::rustls::ProtocolVersion::TLSv1_3));
    let m = bench_batch(
        &one(cfg),
        &mut c,
        |_| {},
        |c, _| {
            if let Err(e) = c.send_binary(&p) {
                unexpected(&e);
            }
            match c.recv() {
                Ok(Some(Message::Binary(b))) if b.len() == p.len() => {
                    black_box(touch(b));
                }
                other => unexpected(&other),
            }
        },
    );
    drop(c);
    echo.join().expect("echo thread");
    m
}

fn tungstenite(cfg: &RunConfig, peer: usize, n: usize) -> Measurement {
    let (client_cfg, server_cfg) = super::configs();
    let (c, s) = tcp_pair();
    let server_conn = ServerConnection::new(server_cfg.server_config().clone()).expect("server");
    let echo = spawn_pinned(peer, move || {
        let mut ws =
            TSocket::from_raw_socket(StreamOwned::new(server_conn, s), TRole::Server, None);
        loop {
            match ws.read() {
                Ok(TMessage::Binary(b)) => {
                    if ws.send(TMessage::Binary(b)).is_err() {
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
    let m = bench_batch(
        &one(cfg),
        &mut ws,
        |_| {},
        |ws, _| {
            if let Err(e) = ws.send(TMessage::Binary(p.clone())) {
                unexpected(&e);
            }
            match ws.read() {
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
