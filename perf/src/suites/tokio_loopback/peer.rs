//! The peer rows of the tokio loopback suite: tokio-tungstenite 0.30 over tokio's
//! `TcpStream` (TCP_NODELAY), or over tokio-rustls 0.26 on it with the same rustls
//! 0.23 configs as tickwire's wss:// rows (ring, TLS 1.3 only, checked); its echo
//! server on the other core.

use futures_util::{SinkExt, StreamExt};
use tickwire::tls::rustls::ProtocolVersion;
use tickwire::tls::rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_rustls::{TlsAcceptor, TlsConnector};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Bytes;
use tokio_tungstenite::tungstenite::protocol::{Message as TMessage, Role as TRole};

use super::{one, payload, runtime, spawn_echo};
use crate::callgrind::Follower;
use crate::harness::{Measurement, RunConfig, bench_batch_async};
use crate::suites::{Case, touch, unexpected};

const NOTE: &str = "WebSocketStream::send + next() over tokio TcpStream (TCP_NODELAY) against a \
                    tokio-tungstenite echo server on the other core; default config, no handshake";
const NOTE_TLS: &str = "WebSocketStream::send + next() over tokio_rustls TlsStream<TcpStream> (TCP_NODELAY; \
                        the same rustls ClientConfig/ServerConfig as tickwire's wss:// rows: ring, TLS 1.3) \
                        against a tokio-tungstenite + tokio-rustls echo server on the other core; no WS handshake";

/// The peer row of scenario `s`.
pub(super) fn cases(s: &str, peer: usize, tls: bool, text: bool, v: &mut Vec<Case<'static>>) {
    let (lib, note) = if tls {
        ("tokio-tungstenite 0.30 + tokio-rustls 0.26", NOTE_TLS)
    } else {
        ("tokio-tungstenite 0.30", NOTE)
    };
    v.push(Case::new(s, lib, false, note, move |cfg| {
        row(cfg, peer, tls, text)
    }));
}

fn row(cfg: &RunConfig, peer: usize, tls: bool, text: bool) -> Measurement {
    if !tls {
        return measure(cfg, peer, text, |s| async move { s }, |s| async move { s });
    }
    let (client, server) = crate::suites::tls::configs();
    let acceptor = TlsAcceptor::from(server.server_config().clone());
    let connector = TlsConnector::from(client.client_config().clone());
    measure(
        cfg,
        peer,
        text,
        move |s| async move { acceptor.accept(s).await.expect("TLS accept") },
        move |s| async move {
            let name = ServerName::try_from("localhost").expect("server name");
            let s = connector.connect(name, s).await.expect("TLS connect");
            assert_eq!(
                s.get_ref().1.protocol_version(),
                Some(ProtocolVersion::TLSv1_3)
            );
            s
        },
    )
}

/// The round trip over streams made by `server` (on the echo thread) and `client`
/// from connected TCP sockets.
fn measure<SS, CS, SF, CF>(
    cfg: &RunConfig,
    peer: usize,
    text: bool,
    server: impl FnOnce(tokio::net::TcpStream) -> SF + Send + 'static,
    client: impl FnOnce(tokio::net::TcpStream) -> CF,
) -> Measurement
where
    SS: AsyncRead + AsyncWrite + Unpin,
    CS: AsyncRead + AsyncWrite + Unpin,
    SF: Future<Output = SS>,
    CF: Future<Output = CS>,
{
    let (tx, rx) = std::sync::mpsc::channel();
    let echo = spawn_echo(peer, move || async move {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        tx.send(l.local_addr().expect("addr")).expect("send addr");
        let (s, _) = l.accept().await.expect("accept");
        s.set_nodelay(true).expect("nodelay");
        let s = server(s).await;
        let mut ws = WebSocketStream::from_raw_socket(s, TRole::Server, None).await;
        let mut count = Follower::default();
        while let Some(Ok(m)) = ws.next().await {
            count.sync();
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
        let s = client(s).await;
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
    let round = async |ws: &mut WebSocketStream<CS>| -> u64 {
        if let Err(e) = ws.send(msg()).await {
            unexpected(&e);
        }
        match ws.next().await {
            Some(Ok(TMessage::Binary(b))) if !text && b.len() == len => touch(&b),
            Some(Ok(TMessage::Text(t))) if text && t.len() == len => touch(t.as_bytes()),
            other => unexpected(&other),
        }
    };
    let m = rt.block_on(async {
        round(&mut ws).await;
        bench_batch_async(&one(cfg), &mut ws, async |ws, _| {
            std::hint::black_box(round(ws).await);
        })
        .await
    });
    drop(ws);
    drop(rt);
    echo.join().expect("echo thread");
    m
}
