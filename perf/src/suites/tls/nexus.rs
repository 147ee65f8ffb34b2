//! nexus-net 0.4.2 in the TLS rows (issue 24), with its `tls` feature: its
//! `TlsConfig` (rustls `ClientConfig`, TLS 1.3 only, the bench CA as its only
//! root) and `TlsCodec` (a rustls `ClientConnection`).
//!
//! Provider: nexus-net builds its `ClientConfig` with rustls's process-default
//! crypto provider and turns on rustls's `aws_lc_rs` feature; in this binary
//! rustls also has `ring` (tickwire's provider), so no default is implied and
//! the rows install aws-lc-rs as the process default first: the provider a
//! nexus-net user gets. tickwire's and tungstenite's configs name *ring*
//! explicitly and are unaffected. The server side is the suite's (ring); the
//! rows check that the same TLS 1.3 cipher suite is negotiated as in
//! tickwire's rows.
//!
//! nexus-net has no TLS server, so the loopback rows' echo is tickwire's wss://
//! server, the one tickwire's own rows talk to: only the client differs.

use std::hint::black_box;

use nexus_net::tls::{TlsCodec, TlsConfig as NxTlsConfig};
use nexus_net::ws::{ClientBuilder, FrameReader as NxReader, Message as NxMessage, Role as NxRole};
use tickwire::tls::rustls;

use super::tick::{Exchange, consume, pipe, pump};
use crate::harness::{Measurement, RunConfig, bench_batch};
use crate::suites::loopback::nexus::v04::round;
use crate::suites::unexpected;

/// The library column of every nexus-net TLS row.
pub const LIB: &str = "nexus-net 0.4.2 (tls, aws-lc-rs)";

/// Note of the in-memory tick row.
pub const NOTE_TICK: &str = "TlsCodec::process_into(&mut FrameReader) (rustls decrypts into its buffer; one \
                             record's plaintext copied into the FrameReader per call), read_tls_from the pipe \
                             when it has none, next() per message, serde_json::from_str::<Tick>; rustls with \
                             aws-lc-rs (its provider)";
/// Note of the blocking loopback rows.
pub const NOTE_ECHO: &str = "wss://: ws::ClientBuilder::tls(&TlsConfig).connect (TlsStream over a blocking \
                             TcpStream, rustls + aws-lc-rs), send_binary + recv, against tickwire's TLS \
                             ws::Server echo on the other core (nexus-net has no TLS server)";
/// Note of the busy-poll loopback rows.
pub const NOTE_ECHO_BUSY: &str = "after the handshake the socket is put in non-blocking mode and recv spun on \
                                  (Ok(None) on WouldBlock); tickwire's echo spins on try_recv";

/// nexus-net's client settings: the bench CA only, TLS 1.3 only. Installs
/// aws-lc-rs as the process-default provider (see the module docs).
fn config(ca_der: &[u8]) -> NxTlsConfig {
    // Err only if a default is installed already (an earlier row): the same one.
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    NxTlsConfig::builder()
        .skip_system_certs()
        .add_root_cert(ca_der.to_vec())
        .tls13_only()
        .build()
        .expect("nexus-net TLS config")
}

struct Nx {
    codec: TlsCodec,
    io: super::tick::End,
    reader: NxReader,
    ex: Exchange,
    b: usize,
}

#[inline(always)]
fn batch(s: &mut Nx, b: usize, verify: bool) {
    let mut got = 0;
    while got < b {
        // Plaintext of the records read so far (one record's per call), else more records.
        match s.codec.process_into(&mut s.reader) {
            Ok(0) => {
                match s.codec.read_tls_from(&mut s.io) {
                    Ok(n) if n > 0 => {}
                    other => unexpected(&other),
                }
                continue;
            }
            Ok(_) => {}
            Err(e) => unexpected(&e),
        }
        loop {
            match s.reader.next() {
                Ok(Some(NxMessage::Text(t))) => {
                    consume(t, verify);
                    got += 1;
                }
                Ok(None) => break,
                other => unexpected(&other),
            }
        }
    }
}

/// The in-memory quote-tick row.
pub fn tick(cfg: &RunConfig) -> Measurement {
    let (client, server, ca) = super::configs_with_ca();
    // The suite tickwire's client config negotiates with the same server.
    let want_suite = super::tick::rustls_client(&client, &server)
        .0
        .negotiated_cipher_suite();
    let (mut c_end, s_end) = pipe();
    let mut codec = TlsCodec::new(&config(&ca), "localhost").expect("client");
    let mut ex = Exchange::new(&server, s_end);
    // The handshake over the pipe: the codec's records out, the server's in.
    for _ in 0..20 {
        while codec.wants_write() {
            codec.write_tls_to(&mut c_end).expect("pipe write");
        }
        pump(&mut ex.conn, &mut ex.io);
        match codec.read_tls_from(&mut c_end) {
            Ok(_) => codec.process_new_packets().expect("TLS records"),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => panic!("pipe: {e}"),
        }
        if !codec.is_handshaking() && !ex.conn.is_handshaking() && !codec.wants_write() {
            break;
        }
    }
    assert!(!codec.is_handshaking() && !ex.conn.is_handshaking());
    assert!(want_suite.is_some());
    assert_eq!(ex.conn.negotiated_cipher_suite(), want_suite);
    let b = cfg.batch.max(1);
    let mut s = Nx {
        codec,
        io: c_end,
        reader: NxReader::builder()
            .role(NxRole::Client)
            .buffer_capacity(64 << 10)
            .build(),
        ex,
        b,
    };
    s.ex.send(b);
    batch(&mut s, b, true);
    bench_batch(
        cfg,
        &mut s,
        |s| {
            let b = s.b;
            s.ex.send(b)
        },
        |s, b| batch(s, b, false),
    )
}

/// The wss:// round trip of `n` bytes against tickwire's TLS echo.
pub fn echo(cfg: &RunConfig, peer: usize, n: usize, busy: bool) -> Measurement {
    let (_, server_cfg, ca) = super::configs_with_ca();
    let (port, echo) = super::echo::tw_server(server_cfg, peer, busy);
    let mut ws = ClientBuilder::new()
        .disable_nagle()
        .tls(&config(&ca))
        .connect(&format!("wss://localhost:{port}/"))
        .expect("wss connect");
    assert!(
        matches!(ws.stream(), nexus_net::MaybeTls::Tls(_)),
        "a TLS stream"
    );
    let p: Vec<u8> = (0..n).map(|i| (i * 31 + 7) as u8).collect();
    ws.send_binary(&p).expect("send");
    match ws.recv() {
        Ok(Some(NxMessage::Binary(b))) => assert_eq!(b, &p[..], "echo"),
        other => unexpected(&other),
    }
    if busy {
        match ws.stream() {
            nexus_net::MaybeTls::Tls(t) => t.stream().set_nonblocking(true),
            nexus_net::MaybeTls::Plain(s) => s.set_nonblocking(true),
        }
        .expect("non-blocking socket");
    }
    let m = bench_batch(
        &RunConfig { batch: 1, ..*cfg },
        &mut ws,
        |_| {},
        |ws, _| {
            black_box(round(ws, &p, busy));
        },
    );
    drop(ws);
    echo.join().expect("echo thread");
    m
}
