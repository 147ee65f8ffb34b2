//! Server connections start with small buffers and grow on demand (issue 27): the limits
//! are still those of the full-size buffers. A message of exactly the message limit is
//! received after growth, whole and fragmented; one byte more fails with close 1009; the
//! write side grows to the write buffer size and a bigger message is refused with
//! `Error::MessageTooLarge`; an evented connection gives the growth back when idle.

mod ws_util;

use std::sync::mpsc;
use std::thread;

use tickwire::ws::{Client, Error, Message, Server, ServerBuilder, ServerConnection};
use ws_util::pattern;

const INITIAL: usize = 4096;

/// A server with `builder`'s settings running `each` on every accepted connection, one
/// after another, in a thread.
fn serve(
    builder: ServerBuilder,
    conns: usize,
    each: impl Fn(ServerConnection) + Send + 'static,
) -> (String, thread::JoinHandle<()>) {
    let mut server = builder
        .initial_buffer_size(INITIAL)
        .bind("127.0.0.1:0")
        .unwrap();
    let url = format!("ws://{}/", server.local_addr().unwrap());
    let t = thread::spawn(move || {
        for _ in 0..conns {
            each(server.accept().unwrap());
        }
    });
    (url, t)
}

#[test]
fn read_buffer_grows_to_the_message_limit_and_the_limit_holds() {
    const LIMIT: usize = 300_000;
    let (tx, rx) = mpsc::channel();
    let builder = Server::builder()
        .max_message_size(LIMIT)
        .read_buffer_size(0);
    // Connections: the limit whole, then fragmented; one byte more, whole, fragmented.
    let (url, server) = serve(builder, 4, move |mut c| {
        let mut report = Vec::new();
        loop {
            let before = c.buffer_sizes().0;
            match c.recv() {
                Ok(Some(Message::Binary(b))) => {
                    assert!(b == pattern(b.len()).as_slice(), "payload changed");
                    report.push(Ok((b.len(), before, c.buffer_sizes().0)));
                }
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(Error::Protocol(e)) => {
                    report.push(Err(e.close_code().0));
                    let _ = c.recv();
                    break;
                }
                Err(e) => panic!("{e}"),
            }
        }
        tx.send(report).unwrap();
    });
    ws_util::send_at_and_over_the_limit(&url, LIMIT, INITIAL, &rx);
    server.join().unwrap();
}

#[test]
fn write_buffer_grows_to_its_size_and_gives_it_back_when_idle() {
    const SIZE: usize = 100_000;
    // A payload of 65,536 bytes or more takes a 10-byte header (server role).
    let fits = SIZE - 10;
    let (tx, rx) = mpsc::channel();
    let builder = Server::builder().write_buffer_size(SIZE);
    let (url, server) = serve(builder, 1, move |mut c| {
        c.handshake().unwrap();
        let start = c.buffer_sizes();
        c.send_binary(&pattern(fits)).unwrap();
        let grown = c.buffer_sizes();
        let refused = match c.send_binary(&pattern(fits + 1)) {
            Err(Error::MessageTooLarge { len, capacity }) => (len, capacity),
            other => panic!("{other:?}"),
        };
        // Evented: drain, then an idle try_recv gives the growth back.
        c.set_blocking(false).unwrap();
        while {
            c.flush().unwrap();
            c.wants_write()
        } {
            thread::yield_now();
        }
        assert!(c.try_recv().unwrap().is_none());
        tx.send((start, grown, refused, c.buffer_sizes())).unwrap();
        c.set_blocking(true).unwrap();
        c.close(None, "").unwrap();
        while let Ok(Some(_)) = c.recv() {}
    });
    let mut c = Client::connect(&url).unwrap();
    match c.recv().unwrap() {
        Some(Message::Binary(b)) => assert!(b == pattern(fits).as_slice()),
        other => panic!("{other:?}"),
    }
    let (start, grown, refused, idle) = rx.recv().unwrap();
    assert_eq!(start, (INITIAL, INITIAL));
    assert!(grown.1 > SIZE, "grew to the write buffer size: {grown:?}");
    assert_eq!(refused, (SIZE + 1, SIZE));
    assert_eq!(idle, (INITIAL, INITIAL), "growth given back when idle");
    while let Ok(Some(_)) = c.recv() {}
    server.join().unwrap();
}

#[test]
fn handshake_head_bigger_than_the_initial_buffer() {
    let (tx, rx) = mpsc::channel();
    let (url, server) = serve(Server::builder(), 2, move |mut c| {
        tx.send((c.handshake().is_ok(), c.buffer_sizes().0))
            .unwrap();
    });
    let addr = url
        .trim_start_matches("ws://")
        .trim_end_matches('/')
        .to_owned();
    for (pad, accepted) in [(6_000, true), (9_000, false)] {
        let mut s = std::net::TcpStream::connect(&addr).unwrap();
        let request = format!(
            "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\
             X-Pad: {}\r\n\r\n",
            "a".repeat(pad)
        );
        std::io::Write::write_all(&mut s, request.as_bytes()).unwrap();
        let (ok, read) = rx.recv().unwrap();
        assert_eq!(ok, accepted, "a {pad}-byte header");
        if accepted {
            assert!(read > INITIAL, "the read buffer grew for the head: {read}");
        }
        let mut answer = [0u8; 12];
        std::io::Read::read_exact(&mut s, &mut answer).unwrap();
        assert_eq!(&answer[..9], b"HTTP/1.1 ");
        assert_eq!(&answer[9..] == b"101", accepted, "{answer:?}");
    }
    server.join().unwrap();
}
