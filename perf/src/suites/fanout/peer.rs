//! tokio-tungstenite 0.30's row of the fan-out suite: 1,000 `WebSocketStream`s (server
//! role, default config, made with `from_raw_socket`: the perf build leaves
//! tungstenite's handshake feature off, so its clients send no upgrade request) on one
//! `current_thread` runtime; the same `Message::Text` (one `Utf8Bytes`, cloned: a
//! reference count) sent to each with `SinkExt::send` (feed + flush: one write(2)).

use futures_util::SinkExt;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Utf8Bytes;
use tokio_tungstenite::tungstenite::protocol::{Message as TMessage, Role as TRole};

use super::{CONNECTIONS, Drain, connect_clients, message, per_connection, raise_fd_limit};
use crate::harness::{Measurement, RunConfig, bench_batch_async};
use crate::suites::{Case, unexpected};

const NOTE: &str = "WebSocketStream::send(msg.clone()).await (feed + flush, one write(2)) on each of 1000 \
    server-role streams (from_raw_socket, default config), one current_thread runtime; the same Message::Text \
    (a shared Utf8Bytes) for every connection; clients drained on the other core";

/// The row of scenario `s`.
pub(super) fn case(s: &str, peer: usize, v: &mut Vec<Case<'static>>) {
    v.push(Case::new(
        s,
        "tokio-tungstenite 0.30 send one by one",
        false,
        NOTE,
        move |cfg| row(cfg, peer),
    ));
}

fn row(cfg: &RunConfig, peer: usize) -> Measurement {
    raise_fd_limit();
    let rt = crate::suites::tokio_loopback::runtime();
    let text = message();
    // The frame a server sends: FIN + text, a 16-bit length, the payload.
    let mut frame = vec![0x81, 126, 0, text.len() as u8];
    frame.extend_from_slice(text.as_bytes());
    rt.block_on(async {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = l.local_addr().expect("addr");
        let clients = connect_clients(addr, CONNECTIONS, None);
        let mut conns = Vec::with_capacity(CONNECTIONS);
        for _ in 0..CONNECTIONS {
            let (s, _) = l.accept().await.expect("accept");
            s.set_nodelay(true).expect("nodelay");
            conns.push(WebSocketStream::from_raw_socket(s, TRole::Server, None).await);
        }
        let socks = clients.join().expect("clients");
        let drain = Drain::spawn(peer, socks, frame);
        let msg = TMessage::Text(Utf8Bytes::from(text));
        let send_all = async |conns: &mut Vec<WebSocketStream<tokio::net::TcpStream>>, n: usize| {
            for ws in &mut conns[..n] {
                if let Err(e) = ws.send(msg.clone()).await {
                    unexpected(&e);
                }
            }
        };
        send_all(&mut conns, CONNECTIONS).await;
        drain.wait_verified();
        let m = bench_batch_async(&per_connection(cfg), &mut conns, send_all).await;
        drop(drain);
        m
    })
}
