//! tickwire's rows of the tokio loopback suite: the tokio adapter (`ws://` or
//! `wss://`, the transport's own TLS stream over the codec's `TlsCodec`), and the
//! blocking client doing the same round trip against the same echo server (the
//! adapter's, [`tokio_echo`]), so the async-vs-blocking ratio compares the two
//! clients and nothing else.

use std::net::SocketAddr;

use tickwire::tls::rustls::ProtocolVersion;
use tickwire::tls::{TlsConfig, TlsServerConfig};
use tickwire::tokio::ws::{Client, Message, ServerBuilder};
use tickwire::ws;

use super::{one, payload, runtime, spawn_echo};
use crate::callgrind::Follower;
use crate::harness::{Measurement, RunConfig, bench_batch, bench_batch_async};
use crate::suites::{Case, touch, unexpected};

const NOTE_TOKIO: &str = "tokio::ws::Client::send_binary/send_text + recv().await (borrowed message) \
                          against a tokio::ws::ServerConnection echoing on the other core; client frames masked";
const NOTE_TOKIO_TLS: &str = "wss://: tokio::ws::Client::send_binary/send_text + recv().await against a TLS \
                              tokio::ws::ServerConnection echo on the other core; tickwire's TLS stream \
                              (TlsCodec on rustls unbuffered), ring, TLS 1.3 (checked)";
const NOTE_BLOCKING: &str = "the blocking path for comparison: ws::Client::send_binary/send_text + recv \
                             (sleeps in the socket's blocking read) against the same tokio::ws::ServerConnection \
                             echo as the tokio row, on the other core";
const NOTE_BLOCKING_TLS: &str = "the blocking path for comparison, wss://: ws::Client send + recv against the \
                                 same TLS tokio::ws::ServerConnection echo as the tokio row; same rustls configs";

/// The tokio adapter's row of scenario `s` (the baseline).
pub(super) fn cases(s: &str, peer: usize, tls: bool, text: bool, v: &mut Vec<Case<'static>>) {
    let note = if tls { NOTE_TOKIO_TLS } else { NOTE_TOKIO };
    v.push(Case::new(s, "tickwire (tokio)", true, note, move |cfg| {
        tokio_row(cfg, peer, tls, text, false)
    }));
}

/// The blocking row of scenario `s`.
pub(super) fn blocking_case(
    s: &str,
    peer: usize,
    tls: bool,
    text: bool,
    v: &mut Vec<Case<'static>>,
) {
    let note = if tls {
        NOTE_BLOCKING_TLS
    } else {
        NOTE_BLOCKING
    };
    v.push(Case::new(
        s,
        "tickwire (blocking)",
        false,
        note,
        move |cfg| blocking_row(cfg, peer, tls, text),
    ));
}

/// Client and server TLS settings (the tls suite's: one rcgen CA, TLS 1.3 only).
fn tls_configs(tls: bool) -> (Option<TlsConfig>, Option<TlsServerConfig>) {
    if tls {
        let (c, s) = crate::suites::tls::configs();
        (Some(c), Some(s))
    } else {
        (None, None)
    }
}

fn url(tls: bool, port: u16) -> String {
    if tls {
        format!("wss://localhost:{port}/")
    } else {
        format!("ws://127.0.0.1:{port}/")
    }
}

fn check_tls13(version: Option<ProtocolVersion>, tls: bool) {
    if tls {
        assert_eq!(version, Some(ProtocolVersion::TLSv1_3));
    }
}

/// The message to echo: `Some(text?)`, `None` for other kinds.
fn copy_out(m: &Message<'_>, buf: &mut Vec<u8>) -> Option<bool> {
    let (bytes, text) = match m {
        Message::Binary(b) => (*b, false),
        Message::Text(t) => (t.as_bytes(), true),
        _ => return None,
    };
    buf.clear();
    buf.extend_from_slice(bytes);
    Some(text)
}

/// Whether `m` is the echo of `p` (`text` or binary); returns its last byte.
pub(crate) fn check_echo(m: Result<Option<Message<'_>>, ws::Error>, p: &[u8], text: bool) -> u64 {
    match m {
        Ok(Some(Message::Binary(b))) if !text && b.len() == p.len() => touch(b),
        Ok(Some(Message::Text(t))) if text && t.len() == p.len() => touch(t.as_bytes()),
        other => unexpected(&other),
    }
}

/// The echo server both tickwire rows talk to: a `tokio::ws::ServerConnection` on
/// its own `current_thread` runtime on core `peer` (TLS with `server_cfg`). Returns
/// its address and thread.
/// The tokio echo on `peer`; `paced`: it waits before each reply (the executors suite
/// under callgrind, see `executors::pace`).
pub(crate) fn tokio_echo(
    peer: usize,
    server_cfg: Option<TlsServerConfig>,
    paced: bool,
) -> (SocketAddr, std::thread::JoinHandle<()>) {
    // Each side's connection lives on its own runtime (it registers with that
    // runtime's reactor): the echo side binds and accepts on its thread.
    let (tx, rx) = std::sync::mpsc::channel();
    let echo = spawn_echo(peer, move || async move {
        let builder = match server_cfg {
            Some(s) => ServerBuilder::new().tls(s),
            None => ServerBuilder::new(),
        };
        let mut server = builder.bind("127.0.0.1:0").await.expect("bind");
        tx.send(server.local_addr().expect("addr"))
            .expect("send addr");
        let mut c = server.accept().await.expect("accept");
        let mut buf = Vec::with_capacity(1 << 16);
        let mut count = Follower::default();
        loop {
            let got = c.recv().await;
            count.sync();
            let text = match got {
                Ok(Some(m)) => match copy_out(&m, &mut buf) {
                    Some(text) => text,
                    None => continue,
                },
                _ => return,
            };
            crate::suites::executors::pace(paced);
            let sent = if text {
                c.send_text(std::str::from_utf8(&buf).unwrap_or_default())
                    .await
            } else {
                c.send_binary(&buf).await
            };
            if sent.is_err() {
                return;
            }
        }
    });
    (rx.recv().expect("echo address"), echo)
}

/// The tokio adapter's round trip; `paced`: both sides wait before each write (the
/// executors suite under callgrind, see `executors::pace`).
pub(crate) fn tokio_row(
    cfg: &RunConfig,
    peer: usize,
    tls: bool,
    text: bool,
    paced: bool,
) -> Measurement {
    let (client_cfg, server_cfg) = tls_configs(tls);
    let rt = runtime();
    let (addr, echo) = tokio_echo(peer, server_cfg, paced);
    let mut builder = Client::builder();
    if let Some(c) = client_cfg {
        builder = builder.tls(c);
    }
    let mut c = rt
        .block_on(builder.connect(&url(tls, addr.port())))
        .expect("connect");
    check_tls13(c.tls().and_then(|t| t.protocol_version()), tls);
    let p = payload(text);
    let round = async |c: &mut Client| -> u64 {
        crate::suites::executors::pace(paced);
        let sent = if text {
            c.send_text(std::str::from_utf8(&p).unwrap_or_default())
                .await
        } else {
            c.send_binary(&p).await
        };
        if let Err(e) = sent {
            unexpected(&e);
        }
        check_echo(c.recv().await, &p, text)
    };
    let m = rt.block_on(async {
        // Verify the echo once.
        assert_eq!(round(&mut c).await, u64::from(*p.last().unwrap_or(&0)));
        bench_batch_async(&one(cfg), &mut c, async |c, _| {
            std::hint::black_box(round(c).await);
        })
        .await
    });
    drop(c);
    drop(rt);
    echo.join().expect("echo thread");
    m
}

fn blocking_row(cfg: &RunConfig, peer: usize, tls: bool, text: bool) -> Measurement {
    let (client_cfg, server_cfg) = tls_configs(tls);
    let (addr, echo) = tokio_echo(peer, server_cfg, false);
    let mut builder = ws::Client::builder();
    if let Some(c) = client_cfg {
        builder = builder.tls(c);
    }
    let mut c = builder.connect(&url(tls, addr.port())).expect("connect");
    check_tls13(c.tls().and_then(|t| t.protocol_version()), tls);
    let p = payload(text);
    let round = |c: &mut ws::Client| -> u64 {
        let sent = if text {
            c.send_text(std::str::from_utf8(&p).unwrap_or_default())
        } else {
            c.send_binary(&p)
        };
        if let Err(e) = sent {
            unexpected(&e);
        }
        check_echo(c.recv(), &p, text)
    };
    assert_eq!(round(&mut c), u64::from(*p.last().unwrap_or(&0)));
    let m = bench_batch(
        &one(cfg),
        &mut c,
        |_| {},
        |c, _| {
            std::hint::black_box(round(c));
        },
    );
    drop(c);
    echo.join().expect("echo thread");
    m
}
