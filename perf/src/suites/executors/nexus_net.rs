//! nexus-async-net 0.7.1's rows: its tokio `WsStream` over `AsyncReadAdapter<TcpStream>`
//! on a `current_thread` runtime, the round-trip client against its own echo, and the
//! receive stream's server side.

use nexus_async_net::AsyncReadAdapter;
use nexus_async_net::nexus_net::ws::Message;
use nexus_async_net::ws::WsStream;

use crate::callgrind::Follower;
use crate::harness::{Measurement, RunConfig, bench_batch_async};
use crate::suites::loopback::STREAM_SIZE;
use crate::suites::loopback::stream::{DISTINCT, payloads, per_sample};
use crate::suites::tokio_loopback::{one, payload, runtime, spawn_echo};
use crate::suites::{touch, unexpected};

pub const LIB: &str = "nexus-async-net 0.7.1 (tokio)";

pub const NOTE_RTT: &str = "WsStream::send_binary + recv().await (borrowed message) over \
                            AsyncReadAdapter<tokio TcpStream>, current_thread runtime, against a \
                            nexus-async-net WsStream echo on the other core; client frames masked";

pub const NOTE_STREAM: &str = "receiver: WsStream::recv().await (server side, accept) over \
                               AsyncReadAdapter<tokio TcpStream>, current_thread runtime; unmask + checks";

type Ws = WsStream<AsyncReadAdapter<tokio::net::TcpStream>>;

/// Its echo on `peer`, its client here: one 40 B binary round trip per sample.
pub fn rtt_row(cfg: &RunConfig, peer: usize) -> Measurement {
    let (tx, rx) = std::sync::mpsc::channel();
    let echo = spawn_echo(peer, move || async move {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        tx.send(listener.local_addr().expect("addr"))
            .expect("send addr");
        let (tcp, _) = listener.accept().await.expect("accept");
        tcp.set_nodelay(true).expect("nodelay");
        let mut ws = WsStream::accept(AsyncReadAdapter::new(tcp))
            .await
            .expect("handshake");
        let mut buf = Vec::with_capacity(1 << 16);
        let mut count = Follower::default();
        let paced = super::paced();
        loop {
            let got = ws.recv().await;
            count.sync();
            match got {
                Ok(Some(Message::Binary(b))) => {
                    buf.clear();
                    buf.extend_from_slice(b);
                }
                Ok(Some(_)) => continue,
                _ => return,
            }
            super::pace(paced);
            if ws.send_binary(&buf).await.is_err() {
                return;
            }
        }
    });
    let addr: std::net::SocketAddr = rx.recv().expect("echo address");
    let rt = runtime();
    let p = payload(false);
    let paced = super::paced();
    let round = async |ws: &mut Ws| -> u64 {
        super::pace(paced);
        if let Err(e) = ws.send_binary(&p).await {
            unexpected(&e);
        }
        match ws.recv().await {
            Ok(Some(Message::Binary(b))) if b.len() == p.len() => touch(b),
            other => unexpected(&other),
        }
    };
    let m = rt.block_on(async {
        let tcp = tokio::net::TcpStream::connect(addr).await.expect("connect");
        tcp.set_nodelay(true).expect("nodelay");
        let mut ws = WsStream::connect_with(AsyncReadAdapter::new(tcp), &format!("ws://{addr}/"))
            .await
            .expect("handshake");
        assert_eq!(round(&mut ws).await, u64::from(*p.last().unwrap_or(&0)));
        bench_batch_async(&one(cfg), &mut ws, async |ws, _| {
            std::hint::black_box(round(ws).await);
        })
        .await
    });
    drop(rt);
    echo.join().expect("echo thread");
    m
}

/// The receive stream's server side: the sender on `peer` does the opening handshake
/// with `WsStream::accept`, then streams.
pub fn stream_row(cfg: &RunConfig, peer: usize) -> Measurement {
    let rt = runtime();
    rt.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let (sender, stop) =
            super::stream::start_sender(listener.local_addr().expect("addr"), peer);
        let (tcp, _) = listener.accept().await.expect("accept");
        let mut ws = WsStream::accept(AsyncReadAdapter::new(tcp))
            .await
            .expect("handshake");
        for (i, want) in payloads().iter().cycle().take(2 * DISTINCT).enumerate() {
            match ws.recv().await {
                Ok(Some(Message::Binary(b))) => assert_eq!(b, &want[..], "message {i}"),
                other => unexpected(&other),
            }
        }
        let m = bench_batch_async(&per_sample(cfg), &mut ws, async |ws, n| {
            let mut acc = 0u64;
            for _ in 0..n {
                match ws.recv().await {
                    Ok(Some(Message::Binary(b))) if b.len() == STREAM_SIZE => {
                        acc = acc.wrapping_add(touch(b));
                    }
                    other => unexpected(&other),
                }
            }
            std::hint::black_box(acc);
        })
        .await;
        drop(ws);
        super::stream::stop_sender(sender, stop);
        m
    })
}
