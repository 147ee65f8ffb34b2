//! The peer rows of the tokio loopback suite: tokio-tungstenite 0.30 and
//! fastwebsockets 0.10 over tokio's `TcpStream` (TCP_NODELAY), or over tokio-rustls
//! 0.26 on it with the same rustls 0.23 configs as tickwire's wss:// rows (ring,
//! TLS 1.3 only, checked); each library's own echo server on the other core.
//!
//! The connection set-up (TCP, TLS, the echo thread, verifying one echo, the timed
//! loop) is shared; a [`Lib`] supplies the echo loop, the client and one round trip.

use futures_util::{SinkExt, StreamExt};
use tickwire::tls::rustls::ProtocolVersion;
use tickwire::tls::rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_rustls::{TlsAcceptor, TlsConnector};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::protocol::{Message as TMessage, Role as TRole};
use tokio_tungstenite::tungstenite::{Bytes, Utf8Bytes};

use super::{one, payload, runtime, spawn_echo};
use crate::callgrind::Follower;
use crate::harness::{Measurement, RunConfig, bench_batch_async};
use crate::suites::{Case, touch, unexpected};

/// A byte stream the peers run over: a TCP stream or a TLS stream on one.
pub(super) trait Stream: AsyncRead + AsyncWrite + Unpin + 'static {}
impl<S: AsyncRead + AsyncWrite + Unpin + 'static> Stream for S {}

/// One peer library's side of the scenario.
pub(super) trait Lib {
    /// The row's name, plain and over TLS.
    const NAME: &str;
    const NAME_TLS: &str;
    /// What the row times, plain and over TLS.
    const NOTE: &str;
    const NOTE_TLS: &str;
    /// A connected client with the payload it sends.
    type Client<S: Stream>;
    /// Echo every data message on `s` (the server role) until the peer leaves,
    /// syncing `count` after each receive.
    async fn serve<S: Stream>(s: S, count: Follower);
    /// The client on `s` (the handshake is done), sending `p` (text or binary).
    async fn client<S: Stream>(s: S, p: Vec<u8>, text: bool) -> Self::Client<S>;
    /// One round trip: send the payload, await its echo, check it; returns its
    /// last byte.
    async fn round<S: Stream>(c: &mut Self::Client<S>) -> u64;
}

/// tokio-tungstenite: `WebSocketStream`, its Sink and Stream halves.
pub(super) struct TokioTungstenite;

impl Lib for TokioTungstenite {
    const NAME: &str = "tokio-tungstenite 0.30";
    const NAME_TLS: &str = "tokio-tungstenite 0.30 + tokio-rustls 0.26";
    const NOTE: &str = "WebSocketStream::send + next() over tokio TcpStream (TCP_NODELAY) against a \
                        tokio-tungstenite echo server on the other core; default config, no handshake";
    const NOTE_TLS: &str = "WebSocketStream::send + next() over tokio_rustls TlsStream<TcpStream> (TCP_NODELAY; \
                            the same rustls ClientConfig/ServerConfig as tickwire's wss:// rows: ring, TLS 1.3) \
                            against a tokio-tungstenite + tokio-rustls echo server on the other core; no WS handshake";
    type Client<S: Stream> = (WebSocketStream<S>, TMessage);

    async fn serve<S: Stream>(s: S, mut count: Follower) {
        let mut ws = WebSocketStream::from_raw_socket(s, TRole::Server, None).await;
        while let Some(Ok(m)) = ws.next().await {
            count.sync();
            if (m.is_binary() || m.is_text()) && ws.send(m).await.is_err() {
                return;
            }
        }
    }

    async fn client<S: Stream>(s: S, p: Vec<u8>, text: bool) -> Self::Client<S> {
        let ws = WebSocketStream::from_raw_socket(s, TRole::Client, None).await;
        let p = Bytes::from(p);
        let msg = if text {
            TMessage::Text(Utf8Bytes::try_from(p).unwrap_or_else(|e| unexpected(&e)))
        } else {
            TMessage::Binary(p)
        };
        (ws, msg)
    }

    async fn round<S: Stream>((ws, msg): &mut Self::Client<S>) -> u64 {
        // A message owns its payload (Bytes): sending one clones the handle.
        if let Err(e) = ws.send(msg.clone()).await {
            unexpected(&e);
        }
        match (ws.next().await, &*msg) {
            (Some(Ok(TMessage::Binary(b))), TMessage::Binary(p)) if b.len() == p.len() => touch(&b),
            (Some(Ok(TMessage::Text(t))), TMessage::Text(p)) if t.len() == p.len() => {
                touch(t.as_bytes())
            }
            (other, _) => unexpected(&other),
        }
    }
}

/// fastwebsockets: `WebSocket::write_frame` + `read_frame` (its frame API; the
/// payloads are single frames, so no `FragmentCollector` is needed), `flush`
/// after each write (tokio-rustls buffers; a no-op on TCP).
pub(super) struct FastWebSockets;

impl Lib for FastWebSockets {
    const NAME: &str = "fastwebsockets 0.10";
    const NAME_TLS: &str = "fastwebsockets 0.10 + tokio-rustls 0.26";
    const NOTE: &str = "WebSocket::write_frame (Payload::Borrowed; client frames masked) + flush + read_frame \
                        over tokio TcpStream (TCP_NODELAY) against a fastwebsockets echo server on the other \
                        core; default config (auto pong/close/unmask), no handshake";
    const NOTE_TLS: &str = "WebSocket::write_frame + flush + read_frame over tokio_rustls TlsStream<TcpStream> \
                            (TCP_NODELAY; the same rustls configs as tickwire's wss:// rows: ring, TLS 1.3) \
                            against a fastwebsockets + tokio-rustls echo server on the other core; no WS handshake";
    type Client<S: Stream> = (fastwebsockets::WebSocket<S>, Vec<u8>, bool);

    async fn serve<S: Stream>(s: S, mut count: Follower) {
        use fastwebsockets::{Frame, OpCode, Role, WebSocket};
        let mut ws = WebSocket::after_handshake(s, Role::Server);
        while let Ok(frame) = ws.read_frame().await {
            count.sync();
            match frame.opcode {
                OpCode::Text | OpCode::Binary => {
                    // A fresh frame: the one read keeps the client's mask key
                    // (its payload already unmasked), and written back as it
                    // is it would go out with the mask bit set, which a server
                    // must not send.
                    let echo = Frame::new(true, frame.opcode, None, frame.payload);
                    if ws.write_frame(echo).await.is_err() || ws.flush().await.is_err() {
                        return;
                    }
                }
                OpCode::Close => return,
                _ => {}
            }
        }
    }

    async fn client<S: Stream>(s: S, p: Vec<u8>, text: bool) -> Self::Client<S> {
        let ws = fastwebsockets::WebSocket::after_handshake(s, fastwebsockets::Role::Client);
        (ws, p, text)
    }

    async fn round<S: Stream>((ws, p, text): &mut Self::Client<S>) -> u64 {
        use fastwebsockets::{Frame, OpCode, Payload};
        let payload = Payload::Borrowed(p);
        let frame = if *text {
            Frame::text(payload)
        } else {
            Frame::binary(payload)
        };
        if let Err(e) = ws.write_frame(frame).await {
            unexpected(&e);
        }
        if let Err(e) = ws.flush().await {
            unexpected(&e);
        }
        let want = if *text { OpCode::Text } else { OpCode::Binary };
        match ws.read_frame().await {
            Ok(f) if f.fin && f.opcode == want && f.payload.len() == p.len() => touch(&f.payload),
            Ok(f) => unexpected(&(f.fin, f.opcode, f.payload.len())),
            Err(e) => unexpected(&e),
        }
    }
}

/// The row of library `L` in scenario `s`.
pub(super) fn case<L: Lib>(
    s: &str,
    peer: usize,
    tls: bool,
    text: bool,
    v: &mut Vec<Case<'static>>,
) {
    let (lib, note) = if tls {
        (L::NAME_TLS, L::NOTE_TLS)
    } else {
        (L::NAME, L::NOTE)
    };
    v.push(Case::new(s, lib, false, note, move |cfg| {
        row::<L>(cfg, peer, tls, text)
    }));
}

fn row<L: Lib>(cfg: &RunConfig, peer: usize, tls: bool, text: bool) -> Measurement {
    if !tls {
        return measure::<L, _, _, _, _>(
            cfg,
            peer,
            text,
            |s| async move { s },
            |s| async move { s },
        );
    }
    let (client, server) = crate::suites::tls::configs();
    let acceptor = TlsAcceptor::from(server.server_config().clone());
    let connector = TlsConnector::from(client.client_config().clone());
    measure::<L, _, _, _, _>(
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

/// The round trip of `L` over streams made by `server` (on the echo thread) and
/// `client` from connected TCP sockets.
fn measure<L, SS, CS, SF, CF>(
    cfg: &RunConfig,
    peer: usize,
    text: bool,
    server: impl FnOnce(tokio::net::TcpStream) -> SF + Send + 'static,
    client: impl FnOnce(tokio::net::TcpStream) -> CF,
) -> Measurement
where
    L: Lib,
    SS: Stream,
    CS: Stream,
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
        L::serve(server(s).await, Follower::default()).await;
    });
    let addr = rx.recv().expect("echo address");
    let rt = runtime();
    let p = payload(text);
    let last = u64::from(*p.last().unwrap_or(&0));
    let mut c = rt.block_on(async {
        let s = tokio::net::TcpStream::connect(addr).await.expect("connect");
        s.set_nodelay(true).expect("nodelay");
        L::client(client(s).await, p, text).await
    });
    let m = rt.block_on(async {
        // Verify the echo once.
        assert_eq!(L::round(&mut c).await, last);
        bench_batch_async(&one(cfg), &mut c, async |c, _| {
            std::hint::black_box(L::round(c).await);
        })
        .await
    });
    drop(c);
    drop(rt);
    echo.join().expect("echo thread");
    m
}
