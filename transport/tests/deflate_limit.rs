//! A compressed message is held to the message limit (`max_message_size`), not to the read
//! buffer's size, through the blocking client and server over 127.0.0.1 with
//! permessage-deflate: messages up to the limit arrive whole whatever `read_buffer_size`
//! says, one byte more fails the connection with close 1009, and a decompression bomb (a
//! few KiB that inflate to MiBs) stops at the limit, also at the default limit (what the
//! read buffer holds) when none is set.
//!
//! The codec's own test (`an_inflated_message_is_held_to_the_limit_not_to_the_read_buffer`)
//! fails on the old code; here the transport sizes the client's read buffer and the
//! server's largest one to the limit, so these pass on the old code too: they pin the
//! transport's limit (the one a user configures) as the codec change keeps it, and the
//! default limit, which the transport now says to the codec instead of leaving it to the
//! read buffer's size (inflated bytes do not live in that buffer).
#![cfg(all(feature = "deflate", unix))]

mod watchdog;
mod ws_util;

use std::thread;
use std::time::Duration;

use tickwire::ws::{
    Client, ClientBuilder, CloseCode, DeflateConfig, Error, Message, ProtocolError, Server,
    ServerBuilder,
};
use watchdog::watchdog;
use ws_util::json;

const T: Duration = Duration::from_secs(20);
const LIMIT: usize = 1 << 20;

fn server(limit: Option<usize>) -> ServerBuilder {
    let b = Server::builder()
        .deflate(DeflateConfig::default())
        .read_buffer_size(64 << 10)
        .read_timeout(Some(T))
        .write_timeout(Some(T));
    match limit {
        Some(l) => b.max_message_size(l),
        None => b,
    }
}

fn client(limit: Option<usize>) -> ClientBuilder {
    let b = Client::builder()
        .deflate(DeflateConfig::default())
        .read_buffer_size(64 << 10)
        .read_timeout(Some(T))
        .write_timeout(Some(T));
    match limit {
        Some(l) => b.max_message_size(l),
        None => b,
    }
}

/// `recv`'s answer must be `MessageTooLarge` (a message is shown by its length only).
fn assert_too_large(got: Result<Option<Message<'_>>, Error>, what: &str) {
    match got {
        Err(Error::Protocol(ProtocolError::MessageTooLarge)) => {}
        Err(e) => panic!("{what}: {e:?}"),
        Ok(m) => panic!("{what}: delivered {:?} bytes", m.map(|m| m.payload().len())),
    }
}

/// 64 KiB read buffers, a 1 MiB limit: 100 KB and exactly 1 MiB of compressed text
/// arrive whole both ways; 1 MiB + 1 fails the receiver with 1009.
#[test]
fn compressed_messages_up_to_the_limit_whatever_the_read_buffer() {
    watchdog(|| {
        let mut srv = server(Some(LIMIT)).bind("127.0.0.1:0").unwrap();
        let addr = srv.local_addr().unwrap();
        let h = thread::spawn(move || {
            let mut s = srv.accept().unwrap();
            s.handshake().unwrap();
            assert!(s.deflate().is_some());
            for (i, len) in [100_000, LIMIT].into_iter().enumerate() {
                let msg = json(len, i);
                match s.recv().unwrap() {
                    Some(Message::Text(t)) => assert!(t == msg, "{len}: {} bytes", t.len()),
                    other => panic!("{other:?}"),
                }
                s.send_text(&msg).unwrap();
            }
            s.send_text(&json(LIMIT + 1, 7)).unwrap();
            // The client refuses it: its close says 1009.
            match s.recv().unwrap() {
                Some(Message::Close(Some(f))) => assert_eq!(f.code, CloseCode::TOO_BIG),
                other => panic!("{other:?}"),
            }
        });
        let mut c = client(Some(LIMIT))
            .connect(&format!("ws://{addr}/"))
            .unwrap();
        assert!(c.deflate().is_some());
        for (i, len) in [100_000, LIMIT].into_iter().enumerate() {
            let msg = json(len, i);
            c.send_text(&msg).unwrap();
            match c.recv().unwrap() {
                Some(Message::Text(t)) => assert!(t == msg, "{len}: {} bytes", t.len()),
                other => panic!("{other:?}"),
            }
        }
        assert_too_large(c.recv(), "LIMIT + 1");
        h.join().unwrap();
    });
}

/// 4 MiB of zeros compress to a few KiB: the receiver stops at its limit with 1009,
/// both at a configured 1 MiB and at the default limit (what the 64 KiB read buffer
/// holds), client and server.
#[test]
fn a_bomb_stops_at_the_limit() {
    watchdog(|| {
        let zeros = vec![0u8; 4 << 20];
        for limit in [Some(LIMIT), None] {
            // The server receives it.
            let mut srv = server(limit).bind("127.0.0.1:0").unwrap();
            let addr = srv.local_addr().unwrap();
            let h = thread::spawn(move || {
                let mut s = srv.accept().unwrap();
                s.handshake().unwrap();
                assert_too_large(s.recv(), &format!("server, limit {limit:?}"));
            });
            let mut c = client(None).connect(&format!("ws://{addr}/")).unwrap();
            c.send_binary(&zeros).unwrap();
            match c.recv() {
                Ok(Some(Message::Close(Some(f)))) => assert_eq!(f.code, CloseCode::TOO_BIG),
                other => panic!("{limit:?}: {other:?}"),
            }
            h.join().unwrap();

            // The client receives it.
            let mut srv = server(None).bind("127.0.0.1:0").unwrap();
            let addr = srv.local_addr().unwrap();
            let zeros = zeros.clone();
            let h = thread::spawn(move || {
                let mut s = srv.accept().unwrap();
                s.handshake().unwrap();
                s.send_binary(&zeros).unwrap();
                match s.recv() {
                    Ok(Some(Message::Close(Some(f)))) => assert_eq!(f.code, CloseCode::TOO_BIG),
                    other => panic!("{limit:?}: {other:?}"),
                }
            });
            let mut c = client(limit).connect(&format!("ws://{addr}/")).unwrap();
            assert_too_large(c.recv(), &format!("client, limit {limit:?}"));
            h.join().unwrap();
        }
    });
}
