//! What the WebSocket loopback tests share, blocking and async: payload patterns,
//! the blocking echo server loop and a raw client that does the handshake by hand.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use tickwire::ws::{Client, Message, ServerConnection};

/// `n` bytes that are not periodic in any small power of two.
pub fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 31 + i / 251) as u8).collect()
}

/// `n` ASCII letters.
pub fn text_of(n: usize) -> String {
    (0..n).map(|i| char::from(b'a' + (i % 26) as u8)).collect()
}

/// `n` bytes of JSON-like market data (`seed` picks the sequence): text that compresses
/// well, as permessage-deflate tests want.
pub fn json(n: usize, seed: usize) -> String {
    let mut s = String::new();
    let mut k = seed;
    while s.len() < n {
        s.push_str(&format!("{{\"px\":{},\"qty\":{}}},", k % 997, k % 13));
        k = k.wrapping_mul(31).wrapping_add(7);
    }
    s.truncate(n);
    s
}

/// Echo text and binary until the close handshake completes, each echo written from
/// the received message (no copy).
pub fn echo(mut c: ServerConnection) {
    while let Some(()) = c
        .recv_with(|msg, tx| match msg {
            Message::Text(t) => tx.send_text(t),
            Message::Binary(b) => tx.send_binary(b),
            _ => Ok(()),
        })
        .unwrap()
    {}
}

/// A raw client: the handshake by hand (the RFC 6455 sample key), then `frames`;
/// returns everything the server sent back until it closed (or `timeout` passed).
pub fn raw_client(addr: SocketAddr, frames: &[u8], timeout: Duration) -> Vec<u8> {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(timeout)).unwrap();
    s.write_all(
        b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
          Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
    )
    .unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        assert_eq!(s.read(&mut byte).unwrap(), 1);
        head.push(byte[0]);
    }
    assert!(head.starts_with(b"HTTP/1.1 101"));
    s.write_all(frames).unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    out
}

/// The client's view of a message the server refused: the code of the server's close
/// frame (`None`: the connection ended without one).
pub fn close_code(c: &mut Client) -> Option<u16> {
    loop {
        match c.recv() {
            Ok(Some(Message::Close(frame))) => return frame.map(|f| f.code.0),
            Ok(Some(_)) => {}
            _ => return None,
        }
    }
}

/// What a server connection of the message-limit tests reports: per message, its
/// length and the read buffer's size before and after receiving it, or the close code
/// it failed with.
pub type LimitReport = Vec<Result<(usize, usize, usize), u16>>;

/// The client side of the message-limit tests (blocking and tokio servers; a
/// connection each): a message of exactly `limit` bytes, whole and fragmented, arrives
/// after the read buffer grew from `initial`; one byte more, whole and fragmented, is
/// refused with close 1009.
pub fn send_at_and_over_the_limit(
    url: &str,
    limit: usize,
    initial: usize,
    reports: &std::sync::mpsc::Receiver<LimitReport>,
) {
    for fragment in [0, 7_000] {
        let mut c = Client::builder()
            .fragment_size(fragment)
            .connect(url)
            .unwrap();
        c.send_binary(&pattern(limit)).unwrap();
        c.close(None, "").unwrap();
        while let Ok(Some(_)) = c.recv() {}
        let report = reports.recv().unwrap();
        assert_eq!(report.len(), 1, "{report:?}");
        let (len, before, after) = report[0].unwrap();
        assert_eq!((len, before), (limit, initial), "starts small");
        assert!(after > limit, "grew to hold the message: {after}");
    }
    for fragment in [0, 7_000] {
        let mut c = Client::builder()
            .fragment_size(fragment)
            .connect(url)
            .unwrap();
        c.send_binary(&pattern(limit + 1)).unwrap();
        assert_eq!(close_code(&mut c), Some(1009), "fragment {fragment}");
        assert_eq!(reports.recv().unwrap(), vec![Err(1009)]);
    }
}
