//! Issue 26, WebSocket side, over 127.0.0.1, blocking and tokio: a server answers each
//! message from inside `recv_with` (no copy) for 1,000 messages of many sizes, some
//! fragmented; and the `on_upgrade` hook refuses with a status and body, accepts by
//! `Origin`, picks a subprotocol and adds a response header.

mod ws_util;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::thread;
use std::time::Duration;

use tickwire::ws::{
    Client, Decision, Error, HandshakeError, Message, Sender, Server, UpgradeRequest,
};
use ws_util::{pattern, text_of};

const T: Duration = Duration::from_secs(20);

/// The size of message `i`: empty, the 7/16/64-bit length edges, up to 70,000 bytes.
fn size(i: usize) -> usize {
    match i % 12 {
        0 => 0,
        1 => 125,
        2 => 126,
        3 => 65_535,
        4 => 65_536,
        5 => 70_000,
        _ => (i * 7919) % 5000,
    }
}

fn echo(msg: Message<'_>, tx: &mut Sender<'_>) -> Result<(), Error> {
    match msg {
        Message::Text(t) => tx.send_text(t),
        Message::Binary(b) => tx.send_binary(b),
        _ => Ok(()),
    }
}

/// Send 1,000 messages (every third text; the client fragments what exceeds 1,000
/// bytes, the server what exceeds 3,000) and check each echo as it comes back.
fn check_echoes(c: &mut Client) {
    for i in 0..1000 {
        let n = size(i);
        if i % 3 == 0 {
            let t = text_of(n);
            c.send_text(&t).unwrap();
            assert_eq!(c.recv().unwrap(), Some(Message::Text(&t)), "message {i}");
        } else {
            let b = pattern(n + i % 7);
            c.send_binary(&b).unwrap();
            assert_eq!(c.recv().unwrap(), Some(Message::Binary(&b)), "message {i}");
        }
    }
    c.close(tickwire::ws::CloseCode::NORMAL, "").unwrap();
    while c.recv().unwrap().is_some() {}
}

fn client(addr: SocketAddr) -> Client {
    Client::builder()
        .fragment_size(1000)
        .read_timeout(Some(T))
        .write_timeout(Some(T))
        .connect(&format!("ws://{addr}/echo"))
        .unwrap()
}

#[test]
fn blocking_recv_with_echoes_1000_messages() {
    let mut server = Server::builder()
        .fragment_size(3000)
        .read_timeout(Some(T))
        .write_timeout(Some(T))
        .bind("127.0.0.1:0")
        .unwrap();
    let addr = server.local_addr().unwrap();
    let h = thread::spawn(move || {
        let mut conn = server.accept().unwrap();
        let mut n = 0;
        while let Some(()) = conn.recv_with(echo).unwrap() {
            n += 1;
        }
        n
    });
    check_echoes(&mut client(addr));
    // 1,000 messages and the peer's close.
    assert_eq!(h.join().unwrap(), 1001);
}

/// Evented mode: `try_recv_with` with the echo written as far as the socket takes it.
#[test]
fn evented_try_recv_with_echoes_1000_messages() {
    let mut server = Server::builder()
        .fragment_size(3000)
        .bind("127.0.0.1:0")
        .unwrap();
    let addr = server.local_addr().unwrap();
    let h = thread::spawn(move || {
        let mut conn = server.accept().unwrap();
        conn.set_blocking(false).unwrap();
        let mut poll = mio::Poll::new().unwrap();
        let mut events = mio::Events::with_capacity(4);
        poll.registry()
            .register(
                &mut conn,
                mio::Token(0),
                mio::Interest::READABLE | mio::Interest::WRITABLE,
            )
            .unwrap();
        let mut n = 0;
        loop {
            poll.poll(&mut events, Some(Duration::from_millis(100)))
                .unwrap();
            conn.flush().unwrap();
            // Read only with nothing left to write: each echo then finds room.
            while !conn.wants_write() {
                match conn.try_recv_with(echo).unwrap() {
                    Some(()) => n += 1,
                    None => break,
                }
            }
            if conn.is_closed() && !conn.wants_write() {
                return n;
            }
        }
    });
    check_echoes(&mut client(addr));
    assert_eq!(h.join().unwrap(), 1001);
}

#[cfg(feature = "tokio")]
#[test]
fn tokio_recv_with_echoes_1000_messages() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (addr, h) = rt.block_on(async {
        let mut server = tickwire::tokio::ws::Server::builder()
            .fragment_size(3000)
            .bind("127.0.0.1:0")
            .await
            .unwrap();
        let addr = server.local_addr().unwrap();
        let h = tokio::spawn(async move {
            let mut conn = server.accept().await.unwrap();
            let mut n = 0;
            while let Some(()) = conn.recv_with(echo).await.unwrap() {
                n += 1;
            }
            n
        });
        (addr, h)
    });
    let c = thread::spawn(move || check_echoes(&mut client(addr)));
    assert_eq!(rt.block_on(h).unwrap(), 1001);
    c.join().unwrap();
}

/// The hook of every test below: a bearer token or an allowed `Origin` is let in (the
/// first offered of `v2.feed`/`v1.feed` chosen, a session header added), anyone else
/// gets a 401 with a body.
fn gate(req: &UpgradeRequest<'_>) -> Decision {
    let token = req.header("authorization") == Some(&b"Bearer s3cret"[..]);
    let origin = req.header("origin") == Some(&b"https://app.example"[..]);
    if !token && !origin {
        return Decision::refuse(401, "who are you?").header("WWW-Authenticate", "Bearer");
    }
    let mut d = Decision::accept().header("X-Session", req.path);
    if let Some(p) = req.protocols().find(|p| *p == "v2.feed" || *p == "v1.feed") {
        d = d.protocol(p);
    }
    d
}

/// An upgrade request by hand with `extra` headers; everything the server answered
/// (the head, and a refusal's body up to the close).
fn raw_upgrade(addr: SocketAddr, extra: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(T)).unwrap();
    write!(
        s,
        "GET /room?id=7 HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n{extra}\r\n"
    )
    .unwrap();
    let mut out = Vec::new();
    let mut byte = [0u8; 1];
    while !out.ends_with(b"\r\n\r\n") {
        assert_eq!(
            s.read(&mut byte).unwrap(),
            1,
            "{:?}",
            String::from_utf8_lossy(&out)
        );
        out.push(byte[0]);
    }
    if !out.starts_with(b"HTTP/1.1 101") {
        let _ = s.read_to_end(&mut out);
    }
    String::from_utf8(out).unwrap()
}

/// What the four hook tests check, against a server at `addr` that serves `n` handshakes
/// (see [`serve_blocking`] and the tokio one) and reports each outcome.
fn check_gate(addr: SocketAddr) {
    let url = format!("ws://{addr}/room?id=7");
    // Refused: the ws client sees the status, the raw client the body too.
    let err = Client::connect(&url).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Handshake {
                error: HandshakeError::BadStatus(401),
                ..
            }
        ),
        "{err:?}"
    );
    let raw = raw_upgrade(addr, "");
    assert!(raw.starts_with("HTTP/1.1 401 Unauthorized\r\n"), "{raw}");
    assert!(raw.contains("\r\nWWW-Authenticate: Bearer\r\n"), "{raw}");
    assert!(raw.contains("\r\nContent-Length: 12\r\n"), "{raw}");
    assert!(raw.ends_with("\r\n\r\nwho are you?"), "{raw}");
    // Accepted by Origin, with the added header.
    let raw = raw_upgrade(addr, "Origin: https://app.example\r\n");
    assert!(raw.starts_with("HTTP/1.1 101"), "{raw}");
    assert!(raw.contains("\r\nX-Session: /room?id=7\r\n"), "{raw}");
    assert!(!raw.contains("Sec-WebSocket-Protocol"), "{raw}");
    // A subprotocol picked among the offered ones.
    let c = Client::builder()
        .header("Authorization", "Bearer s3cret")
        .protocol("v0.feed")
        .protocol("v1.feed")
        .connect(&url)
        .unwrap();
    assert_eq!(c.protocol(), Some("v1.feed"));
    drop(c);
}

/// The server outcomes of [`check_gate`]'s four handshakes, in order.
fn check_outcomes(outcomes: Vec<Result<Option<String>, Error>>) {
    assert_eq!(outcomes.len(), 4);
    for o in &outcomes[..2] {
        assert!(
            matches!(
                o,
                Err(Error::Handshake {
                    error: HandshakeError::Refused(401),
                    ..
                })
            ),
            "{o:?}"
        );
    }
    assert_eq!(outcomes[2].as_ref().unwrap(), &None);
    assert_eq!(outcomes[3].as_ref().unwrap().as_deref(), Some("v1.feed"));
}

#[test]
fn blocking_hook_refuses_accepts_picks_and_adds() {
    let mut server = Server::builder()
        .on_upgrade(gate)
        .bind("127.0.0.1:0")
        .unwrap();
    let addr = server.local_addr().unwrap();
    let h = thread::spawn(move || {
        (0..4)
            .map(|_| {
                let mut c = server.accept()?;
                c.handshake()?;
                assert_eq!(c.path(), "/room?id=7");
                Ok(c.protocol().map(str::to_owned))
            })
            .collect::<Vec<_>>()
    });
    check_gate(addr);
    check_outcomes(h.join().unwrap());
}

#[cfg(feature = "tokio")]
#[test]
fn tokio_hook_refuses_accepts_picks_and_adds() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (addr, h) = rt.block_on(async {
        let mut server = tickwire::tokio::ws::Server::builder()
            .on_upgrade(gate)
            .bind("127.0.0.1:0")
            .await
            .unwrap();
        let addr = server.local_addr().unwrap();
        let h = tokio::spawn(async move {
            let mut outcomes = Vec::new();
            for _ in 0..4 {
                let mut c = server.accept().await.unwrap();
                outcomes.push(
                    c.handshake()
                        .await
                        .map(|()| c.protocol().map(str::to_owned)),
                );
            }
            outcomes
        });
        (addr, h)
    });
    let c = thread::spawn(move || check_gate(addr));
    check_outcomes(rt.block_on(h).unwrap());
    c.join().unwrap();
}

/// A hook that picks a subprotocol the client did not offer gets the codec's 400 (the
/// client's error says so), and `handshake` in evented mode says the handshake is still
/// in progress rather than waiting.
#[test]
fn hook_mistakes_and_evented_handshake() {
    let mut server = Server::builder()
        .on_upgrade(|_| Decision::accept().protocol("never.offered"))
        .bind("127.0.0.1:0")
        .unwrap();
    let addr = server.local_addr().unwrap();
    // Connected, the request not sent yet.
    let tcp = TcpStream::connect(addr).unwrap();
    let mut conn = server.accept().unwrap();
    conn.set_blocking(false).unwrap();
    assert!(matches!(conn.handshake(), Err(Error::HandshakeInProgress)));
    let url = format!("ws://{addr}/");
    let c = thread::spawn(move || Client::connect_with(tcp, &url).unwrap_err());
    let deadline = std::time::Instant::now() + T;
    let err = loop {
        match conn.try_handshake() {
            Ok(false) => {}
            Ok(true) => panic!("accepted a protocol that was not offered"),
            Err(e) => break e,
        }
        assert!(std::time::Instant::now() < deadline);
        thread::sleep(Duration::from_millis(1));
    };
    assert!(
        matches!(
            err,
            Error::Handshake {
                error: HandshakeError::ProtocolMismatch,
                ..
            }
        ),
        "{err:?}"
    );
    // The refusal goes out as the socket takes it.
    while conn.wants_write() {
        conn.flush().unwrap();
    }
    let err = c.join().unwrap();
    assert!(
        matches!(
            err,
            Error::Handshake {
                error: HandshakeError::BadStatus(400),
                ..
            }
        ),
        "{err:?}"
    );
}
