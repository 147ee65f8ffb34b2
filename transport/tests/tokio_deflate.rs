//! permessage-deflate through the tokio adapter over 127.0.0.1: builders turn it on,
//! both ends see what was negotiated, and compressed messages arrive intact through
//! `recv` and through a split connection's read half (which copies the inflated
//! message out of the shared connection). A compressed message is held to the message
//! limit, not to the read buffer's size, as in the blocking transport (`deflate_limit.rs`):
//! the drivers share the codec's connection and the builders' options.
#![cfg(all(feature = "tokio", feature = "deflate", unix))]

mod ws_util;

use std::time::Duration;

use tickwire::codec::ws::deflate::DeflateConfig;
use tickwire::tokio::ws::{Client, Server};
use tickwire::ws::{CloseCode, Error, Message, ProtocolError};
use ws_util::json;

const T: Duration = Duration::from_secs(20);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compressed_messages_through_recv_and_a_split_read_half() {
    const SIZES: [usize; 6] = [0, 10, 100, 1000, 30000, 200000];
    let cfg = DeflateConfig {
        server_no_context_takeover: true,
        ..DeflateConfig::default()
    };
    let mut server = Server::builder()
        .deflate(cfg)
        .read_timeout(Some(T))
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let addr = server.local_addr().unwrap();
    let h = tokio::spawn(async move {
        let mut s = server.accept().await.unwrap();
        s.handshake().await.unwrap();
        let n = s.deflate().expect("server negotiated");
        assert!(n.server_no_context_takeover);
        let mut scratch = Vec::new();
        while let Some(msg) = s.recv().await.unwrap() {
            let text = match msg {
                Message::Text(t) => {
                    scratch.clear();
                    scratch.extend_from_slice(t.as_bytes());
                    true
                }
                Message::Binary(b) => {
                    scratch.clear();
                    scratch.extend_from_slice(b);
                    false
                }
                _ => continue,
            };
            if text {
                s.send_text(std::str::from_utf8(&scratch).unwrap())
                    .await
                    .unwrap();
            } else {
                s.send_binary(&scratch).await.unwrap();
            }
        }
    });
    let mut c = Client::builder()
        .deflate(DeflateConfig::default())
        .read_timeout(Some(T))
        .connect(&format!("ws://{addr}/"))
        .await
        .unwrap();
    assert_eq!(
        c.deflate(),
        Some(tickwire::codec::ws::deflate::Negotiated::new(
            15, 15, false, true
        ))
    );
    for (i, n) in SIZES.into_iter().enumerate() {
        let m = json(n, i);
        c.send_text(&m).await.unwrap();
        assert_eq!(c.recv().await.unwrap(), Some(Message::Text(&m)));
    }
    let (mut rx, mut tx) = c.split();
    for (i, n) in SIZES.into_iter().enumerate() {
        let m = json(n, i + 10);
        tx.send_binary(m.as_bytes()).await.unwrap();
        assert_eq!(
            rx.recv().await.unwrap(),
            Some(Message::Binary(m.as_bytes()))
        );
        tx.send_text(&m).await.unwrap();
        assert_eq!(rx.recv().await.unwrap(), Some(Message::Text(&m)));
    }
    tx.close(CloseCode::NORMAL, "").await.unwrap();
    assert!(matches!(rx.recv().await.unwrap(), Some(Message::Close(_))));
    h.await.unwrap();
}

/// 64 KiB read buffers, a 1 MiB limit: 100 KB and exactly 1 MiB of compressed text arrive
/// whole, through `recv` and through a split read half; 1 MiB + 1 and a bomb (4 MiB of
/// zeros, a few KiB compressed) fail the receiver with 1009, the bomb also at the default
/// limit (what the read buffer holds).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compressed_messages_are_held_to_the_limit_not_to_the_read_buffer() {
    const LIMIT: usize = 1 << 20;
    for limit in [Some(LIMIT), None] {
        let mut sb = Server::builder()
            .deflate(DeflateConfig::default())
            .read_buffer_size(64 << 10)
            .read_timeout(Some(T));
        if let Some(l) = limit {
            sb = sb.max_message_size(l);
        }
        let mut server = sb.bind("127.0.0.1:0").await.unwrap();
        let addr = server.local_addr().unwrap();
        let h = tokio::spawn(async move {
            let mut s = server.accept().await.unwrap();
            s.handshake().await.unwrap();
            if limit.is_some() {
                for (i, len) in [100_000, LIMIT, 100_000, LIMIT, LIMIT + 1]
                    .into_iter()
                    .enumerate()
                {
                    s.send_text(&json(len, i)).await.unwrap();
                }
            } else {
                s.send_binary(&vec![0u8; 4 << 20]).await.unwrap();
            }
            match s.recv().await {
                Ok(Some(Message::Close(Some(f)))) => assert_eq!(f.code, CloseCode::TOO_BIG),
                other => panic!("{limit:?}: {other:?}"),
            }
        });
        let mut cb = Client::builder()
            .deflate(DeflateConfig::default())
            .read_buffer_size(64 << 10)
            .read_timeout(Some(T));
        if let Some(l) = limit {
            cb = cb.max_message_size(l);
        }
        let mut c = cb.connect(&format!("ws://{addr}/")).await.unwrap();
        if limit.is_none() {
            let got = c.recv().await;
            assert!(
                matches!(got, Err(Error::Protocol(ProtocolError::MessageTooLarge))),
                "{:?}",
                got.map(|m| m.map(|m| m.payload().len()))
            );
            h.await.unwrap();
            continue;
        }
        for (i, len) in [100_000, LIMIT].into_iter().enumerate() {
            let m = json(len, i);
            assert!(c.recv().await.unwrap() == Some(Message::Text(&m)), "{len}");
        }
        let (mut rx, _tx) = c.split();
        for (i, len) in [100_000, LIMIT].into_iter().enumerate() {
            let m = json(len, i + 2);
            assert!(rx.recv().await.unwrap() == Some(Message::Text(&m)), "{len}");
        }
        let got = rx.recv().await;
        assert!(
            matches!(got, Err(Error::Protocol(ProtocolError::MessageTooLarge))),
            "{:?}",
            got.map(|m| m.map(|m| m.payload().len()))
        );
        h.await.unwrap();
    }
}
