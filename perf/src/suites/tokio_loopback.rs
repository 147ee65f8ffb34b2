//! Suite "tokio loopback": WebSocket round trip over TCP on 127.0.0.1 through
//! tokio, tickwire's tokio adapter against tokio-tungstenite, each side on a
//! `current_thread` runtime, the echo server on a second pinned core.
//!
//! A sample is one round trip driven by `block_on` on the measuring thread's
//! runtime (send, then await the echo); both rows pay the same `block_on`
//! and reactor costs, so the difference is the library. 40 B binary and a
//! 77 B JSON tick (text), the sizes of issue 9.

use futures_util::{SinkExt, StreamExt};
use tickwire::tokio::ws::{Client, Message, Server};
use tokio::runtime::{Builder, Runtime};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Bytes;
use tokio_tungstenite::tungstenite::protocol::{Message as TMessage, Role as TRole};

use super::loopback::peer_core;
use super::{Case, Setup, touch, unexpected};
use crate::harness::{Measurement, RunConfig, bench_batch};
use crate::machine;

const NOTE_TW: &str = "tokio::ws::Client::send_binary/send_text + recv().await (borrowed message) \
                       against a tokio::ws::ServerConnection echoing on the other core; client frames masked";
const NOTE_TT: &str = "WebSocketStream::send + next() over tokio TcpStream (TCP_NODELAY) against a \
                       tokio-tungstenite echo server on the other core; default config, no handshake";

/// A 77-byte JSON market-data tick.
const TICK: &str =
    r#"{"s":"BTCUSDT","b":"64123.10","bq":"0.512","a":"64123.20","aq":"1.004","t":7}"#;
const _: () = assert!(TICK.len() == 77);

/// Register the suite's rows.
pub fn register(setup: &Setup, v: &mut Vec<Case<'static>>) {
    let peer = peer_core(setup);
    for text in [false, true] {
        let s = if text {
            "tokio loopback round trip 77B JSON text".to_owned()
        } else {
            "tokio loopback round trip 40B binary".to_owned()
        };
        let mut tw = Case::new(s.clone(), "tickwire (tokio)", true, NOTE_TW, move |cfg| {
            tickwire(cfg, peer, text)
        });
        tw.counts = false;
        v.push(tw);
        let mut tt = Case::new(s, "tokio-tungstenite 0.30", false, NOTE_TT, move |cfg| {
            tokio_tungstenite(cfg, peer, text)
        });
        tt.counts = false;
        v.push(tt);
    }
}

fn runtime() -> Runtime {
    Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

/// Run `f` on a thread pinned to `core`, with its own `current_thread` runtime.
fn spawn_echo<F: Future<Output = ()> + 'static>(
    core: usize,
    f: impl FnOnce() -> F + Send + 'static,
) -> std::thread::JoinHandle<()> {
    std::thread::Builder::new()
        .name("bench-peer".into())
        .spawn(move || {
            machine::pin(core);
            runtime().block_on(f())
        })
        .expect("spawn the peer thread")
}

fn payload(text: bool) -> Vec<u8> {
    if text {
        TICK.as_bytes().to_vec()
    } else {
        (0..40u8).map(|i| i.wrapping_mul(37)).collect()
    }
}

/// One round per sample.
fn one(cfg: &RunConfig) -> RunConfig {
    RunConfig { batch: 1, ..*cfg }
}

fn tickwire(cfg: &RunConfig, peer: usize, text: bool) -> Measurement {
    let rt = runtime();
    // Each side's connection lives on its own runtime (it registers with that
    // runtime's reactor): the echo side binds and accepts on its thread.
    let (tx, rx) = std::sync::mpsc::channel();
    let echo = spawn_echo(peer, move || async move {
        let mut server = Server::bind("127.0.0.1:0").await.expect("bind");
        tx.send(server.local_addr().expect("addr"))
            .expect("send addr");
        let mut c = server.accept().await.expect("accept");
        let mut buf = Vec::with_capacity(1 << 16);
        loop {
            let text = match c.recv().await {
                Ok(Some(Message::Binary(b))) => {
                    buf.clear();
                    buf.extend_from_slice(b);
                    false
                }
                Ok(Some(Message::Text(t))) => {
                    buf.clear();
                    buf.extend_from_slice(t.as_bytes());
                    true
                }
                Ok(Some(_)) => continue,
                _ => return,
            };
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
    let addr = rx.recv().expect("echo address");
    let mut c = rt
        .block_on(Client::connect(&format!("ws://{addr}/")))
        .expect("connect");
    let p = payload(text);
    let round = |c: &mut Client, rt: &Runtime| -> u64 {
        rt.block_on(async {
            let sent = if text {
                c.send_text(std::str::from_utf8(&p).unwrap_or_default())
                    .await
            } else {
                c.send_binary(&p).await
            };
            if let Err(e) = sent {
                unexpected(&e);
            }
            match c.recv().await {
                Ok(Some(Message::Binary(b))) if !text && b.len() == p.len() => touch(b),
                Ok(Some(Message::Text(t))) if text && t.len() == p.len() => touch(t.as_bytes()),
                other => unexpected(&other),
            }
        })
    };
    // Verify the echo once.
    assert_eq!(round(&mut c, &rt), u64::from(*p.last().unwrap_or(&0)));
    let mut state = (c, rt);
    let m = bench_batch(
        &one(cfg),
        &mut state,
        |_| {},
        |(c, rt), _| {
            std::hint::black_box(round(c, rt));
        },
    );
    let (c, rt) = state;
    drop(c);
    drop(rt);
    echo.join().expect("echo thread");
    m
}

fn tokio_tungstenite(cfg: &RunConfig, peer: usize, text: bool) -> Measurement {
    let (tx, rx) = std::sync::mpsc::channel();
    let echo = spawn_echo(peer, move || async move {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        tx.send(l.local_addr().expect("addr")).expect("send addr");
        let (s, _) = l.accept().await.expect("accept");
        s.set_nodelay(true).expect("nodelay");
        let mut ws = WebSocketStream::from_raw_socket(s, TRole::Server, None).await;
        while let Some(Ok(m)) = ws.next().await {
            if (m.is_binary() || m.is_text()) && ws.send(m).await.is_err() {
                return;
            }
        }
    });
    let addr = rx.recv().expect("echo address");
    let rt = runtime();
    let mut ws = rt.block_on(async {
        let s = tokio::net::TcpStream::connect(addr).await.expect("connect");
        s.set_nodelay(true).expect("nodelay");
        WebSocketStream::from_raw_socket(s, TRole::Client, None).await
    });
    let p = Bytes::from(payload(text));
    let msg = move || {
        if text {
            TMessage::Text(
                tokio_tungstenite::tungstenite::Utf8Bytes::try_from(p.clone())
                    .unwrap_or_else(|e| unexpected(&e)),
            )
        } else {
            TMessage::Binary(p.clone())
        }
    };
    let len = msg().len();
    let round = |ws: &mut WebSocketStream<tokio::net::TcpStream>, rt: &Runtime| -> u64 {
        rt.block_on(async {
            if let Err(e) = ws.send(msg()).await {
                unexpected(&e);
            }
            match ws.next().await {
                Some(Ok(TMessage::Binary(b))) if !text && b.len() == len => touch(&b),
                Some(Ok(TMessage::Text(t))) if text && t.len() == len => touch(t.as_bytes()),
                other => unexpected(&other),
            }
        })
    };
    round(&mut ws, &rt);
    let mut state = (ws, rt);
    let m = bench_batch(
        &one(cfg),
        &mut state,
        |_| {},
        |(ws, rt), _| {
            std::hint::black_box(round(ws, rt));
        },
    );
    drop(state);
    echo.join().expect("echo thread");
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Every row verifies its echo and measures briefly.
    #[test]
    fn every_case_verifies_and_measures() {
        let mut v = Vec::new();
        let setup = Setup {
            batch: 8,
            core: 0,
            peer_core: None,
        };
        register(&setup, &mut v);
        assert_eq!(v.len(), 4);
        let cfg = RunConfig {
            batch: 8,
            warmup: Duration::ZERO,
            measure: Duration::from_millis(5),
            max_samples: 64,
            count_rounds: 0,
        };
        for case in &v {
            let m = case.run(&cfg);
            assert!(m.samples() > 0, "{case:?}");
        }
    }
}
