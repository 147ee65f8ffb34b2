//! permessage-deflate through the futures-io driver on smol: a compressed message is held
//! to the message limit, not to the read buffer's size, as through the blocking and tokio
//! drivers (`deflate_limit.rs`, `tokio_deflate.rs`; all share the codec's connection and
//! the builders' options): with 64 KiB read buffers and a 1 MiB limit, 100 KB and exactly
//! 1 MiB arrive whole, 1 MiB + 1 fails with 1009, and a bomb (4 MiB of zeros, a few KiB
//! compressed) fails with 1009 at the default limit (what the read buffer holds).
#![cfg(all(feature = "futures-io", feature = "deflate", unix))]

mod ws_util;

use std::time::Duration;

use smol::net::TcpStream;
use tickwire::futures_io::ws::{Client, CloseCode, Error, Message, Server};
use tickwire::ws::{DeflateConfig, ProtocolError};
use ws_util::json;

const T: Duration = Duration::from_secs(20);
const LIMIT: usize = 1 << 20;

#[test]
fn compressed_messages_are_held_to_the_limit_not_to_the_read_buffer() {
    smol::block_on(async {
        for limit in [Some(LIMIT), None] {
            let mut sb = Server::builder()
                .deflate(DeflateConfig::default())
                .read_buffer_size(64 << 10)
                .read_timeout(Some(T));
            let mut cb = Client::builder()
                .deflate(DeflateConfig::default())
                .read_buffer_size(64 << 10)
                .read_timeout(Some(T));
            if let Some(l) = limit {
                sb = sb.max_message_size(l);
                cb = cb.max_message_size(l);
            }
            let mut server = sb.bind("127.0.0.1:0").unwrap();
            let addr = server.local_addr().unwrap();
            let h = smol::spawn(async move {
                let mut s = server.accept().await.unwrap();
                s.handshake().await.unwrap();
                if limit.is_some() {
                    for (i, len) in [100_000, LIMIT, LIMIT + 1].into_iter().enumerate() {
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
            let tcp = TcpStream::connect(addr).await.unwrap();
            let mut c = cb
                .connect_with(tcp, &format!("ws://{addr}/"))
                .await
                .unwrap();
            assert!(c.deflate().is_some());
            if limit.is_some() {
                for (i, len) in [100_000, LIMIT].into_iter().enumerate() {
                    let m = json(len, i);
                    assert!(c.recv().await.unwrap() == Some(Message::Text(&m)), "{len}");
                }
            }
            let got = c.recv().await;
            assert!(
                matches!(got, Err(Error::Protocol(ProtocolError::MessageTooLarge))),
                "{limit:?}: {:?}",
                got.map(|m| m.map(|m| m.payload().len()))
            );
            h.await;
        }
    });
}
