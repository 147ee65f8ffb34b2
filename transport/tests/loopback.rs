//! tickwire client <-> tickwire server over 127.0.0.1: messages of several sizes,
//! fragmentation, auto-pong, the close handshake, evented mode under backpressure,
//! handshake refusals, timeouts and protocol errors.

mod ws_util;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener as StdListener, TcpStream as StdStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use mio::{Events, Interest, Poll, Token};
use tickwire::ws::{
    Client, ClientBuilder, CloseCode, CloseFrame, Error, HandshakeError, Message, ProtocolError,
    Server, ServerBuilder, ServerConnection,
};

use ws_util::{echo, pattern, raw_client, text_of};

const T: Duration = Duration::from_secs(20);

fn server_builder() -> ServerBuilder {
    Server::builder()
        .read_timeout(Some(T))
        .write_timeout(Some(T))
}

fn client_builder() -> ClientBuilder {
    Client::builder()
        .read_timeout(Some(T))
        .write_timeout(Some(T))
}

/// A server on 127.0.0.1:0 that accepts one connection and hands it to `f`.
fn serve<F>(builder: ServerBuilder, f: F) -> (SocketAddr, JoinHandle<()>)
where
    F: FnOnce(ServerConnection) + Send + 'static,
{
    let mut server = builder.bind("127.0.0.1:0").unwrap();
    let addr = server.local_addr().unwrap();
    let h = thread::spawn(move || {
        let mut conn = server.accept().unwrap();
        conn.handshake().unwrap();
        f(conn)
    });
    (addr, h)
}

fn url(addr: SocketAddr) -> String {
    format!("ws://{addr}/test")
}

const SIZES: [usize; 9] = [0, 1, 125, 126, 127, 65_535, 65_536, 300_000, 1 << 20];

#[test]
fn text_and_binary_of_many_sizes_round_trip() {
    let sb = server_builder()
        .max_message_size(2 << 20)
        .write_buffer_size(2 << 20);
    let (addr, h) = serve(sb, echo);
    let mut c = client_builder()
        .max_message_size(2 << 20)
        .write_buffer_size(2 << 20)
        .connect(&url(addr))
        .unwrap();
    for n in SIZES {
        let t = text_of(n);
        c.send_text(&t).unwrap();
        assert_eq!(c.recv().unwrap(), Some(Message::Text(&t)), "text {n}");
        let b = pattern(n);
        c.send_binary(&b).unwrap();
        assert_eq!(c.recv().unwrap(), Some(Message::Binary(&b)), "binary {n}");
    }
    c.close(CloseCode::NORMAL, "").unwrap();
    assert!(matches!(c.recv().unwrap(), Some(Message::Close(_))));
    assert_eq!(c.recv().unwrap(), None);
    h.join().unwrap();
}

#[test]
fn fragmented_messages_both_ways() {
    let sb = server_builder().fragment_size(1000);
    let (addr, h) = serve(sb, echo);
    let mut c = client_builder()
        .fragment_size(777)
        .connect(&url(addr))
        .unwrap();
    for n in [999, 1000, 1001, 5000, 100_000] {
        let t = text_of(n) + "é€"; // multi-byte characters across fragment edges
        c.send_text(&t).unwrap();
        assert_eq!(c.recv().unwrap(), Some(Message::Text(&t)), "text {n}");
        let b = pattern(n);
        c.send_binary(&b).unwrap();
        assert_eq!(c.recv().unwrap(), Some(Message::Binary(&b)), "binary {n}");
    }
    c.close(None, "").unwrap();
    assert_eq!(c.recv().unwrap(), Some(Message::Close(None)));
    assert_eq!(c.recv().unwrap(), None);
    h.join().unwrap();
}

#[test]
fn ping_is_answered_automatically_and_observed() {
    let (addr, h) = serve(server_builder(), |mut s| {
        // The server sees the ping (already answered), then the client's text.
        assert_eq!(s.recv().unwrap(), Some(Message::Ping(b"hi")));
        assert_eq!(s.recv().unwrap(), Some(Message::Text("after")));
        // Now the server pings the client.
        s.send_ping(b"srv").unwrap();
        assert_eq!(s.recv().unwrap(), Some(Message::Pong(b"srv")));
        assert!(matches!(s.recv().unwrap(), Some(Message::Close(_))));
        assert_eq!(s.recv().unwrap(), None);
    });
    let mut c = client_builder().connect(&url(addr)).unwrap();
    c.send_ping(b"hi").unwrap();
    assert_eq!(c.recv().unwrap(), Some(Message::Pong(b"hi")));
    c.send_text("after").unwrap();
    assert_eq!(c.recv().unwrap(), Some(Message::Ping(b"srv")));
    c.close(CloseCode::NORMAL, "").unwrap();
    assert!(matches!(c.recv().unwrap(), Some(Message::Close(_))));
    h.join().unwrap();
}

#[test]
fn auto_pong_can_be_turned_off() {
    let (addr, h) = serve(server_builder().auto_pong(false), |mut s| {
        assert_eq!(s.recv().unwrap(), Some(Message::Ping(b"x")));
        s.send_pong(b"manual").unwrap();
        assert!(matches!(s.recv().unwrap(), Some(Message::Close(_))));
    });
    let mut c = client_builder().connect(&url(addr)).unwrap();
    c.send_ping(b"x").unwrap();
    assert_eq!(c.recv().unwrap(), Some(Message::Pong(b"manual")));
    c.close(CloseCode::NORMAL, "").unwrap();
    h.join().unwrap();
}

#[test]
fn client_initiated_close_echoes_the_code() {
    let (addr, h) = serve(server_builder(), |mut s| {
        let close = Some(CloseFrame {
            code: CloseCode(4000),
            reason: "bye",
        });
        assert_eq!(s.recv().unwrap(), Some(Message::Close(close)));
        assert!(s.is_closed());
        assert_eq!(s.recv().unwrap(), None);
        assert!(matches!(s.send_text("late"), Err(Error::AlreadyClosed)));
    });
    let mut c = client_builder().connect(&url(addr)).unwrap();
    c.close(CloseCode(4000), "bye").unwrap();
    assert!(matches!(
        c.send_text("after close"),
        Err(Error::AlreadyClosed)
    ));
    let echo = Some(CloseFrame {
        code: CloseCode(4000),
        reason: "",
    });
    assert_eq!(c.recv().unwrap(), Some(Message::Close(echo)));
    assert_eq!(c.recv().unwrap(), None);
    assert_eq!(c.recv().unwrap(), None);
    h.join().unwrap();
}

#[test]
fn server_initiated_close_discards_late_data() {
    let (addr, h) = serve(server_builder(), |mut s| {
        s.close(CloseCode::GOING_AWAY, "restart").unwrap();
        // The client's data sent before it saw our close is discarded.
        let echo = Some(CloseFrame {
            code: CloseCode::GOING_AWAY,
            reason: "",
        });
        assert_eq!(s.recv().unwrap(), Some(Message::Close(echo)));
        assert_eq!(s.recv().unwrap(), None);
    });
    let mut c = client_builder().connect(&url(addr)).unwrap();
    c.send_text("racing the close").unwrap();
    let close = Some(CloseFrame {
        code: CloseCode::GOING_AWAY,
        reason: "restart",
    });
    assert_eq!(c.recv().unwrap(), Some(Message::Close(close)));
    assert_eq!(c.recv().unwrap(), None);
    h.join().unwrap();
}

#[test]
fn close_timeout_when_the_peer_never_answers() {
    // A raw peer that completes the handshake and then stays silent.
    let listener = StdListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    // It holds the connection open until the client has timed out (an event: a peer
    // that slept a while could close first on a loaded machine).
    let (done, wait) = std::sync::mpsc::channel::<()>();
    let h = thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let key = read_head(&mut s);
        s.write_all(accept_response(&key).as_bytes()).unwrap();
        let _ = wait.recv();
    });
    let mut c = client_builder()
        .close_timeout(Duration::from_millis(200))
        .connect(&url(addr))
        .unwrap();
    let start = Instant::now();
    c.close(CloseCode::NORMAL, "").unwrap();
    assert!(matches!(c.recv(), Err(Error::CloseTimeout)));
    // Not before the close timeout (how long after it depends on the machine).
    assert!(start.elapsed() >= Duration::from_millis(200));
    assert!(c.is_closed());
    done.send(()).unwrap();
    h.join().unwrap();
}

#[test]
fn read_timeout_leaves_the_connection_usable() {
    let (addr, h) = serve(server_builder(), |mut s| {
        assert_eq!(s.recv().unwrap(), Some(Message::Text("go")));
        s.send_text("late").unwrap();
        assert!(matches!(s.recv().unwrap(), Some(Message::Close(_))));
    });
    let mut c = client_builder()
        .read_timeout(Some(Duration::from_millis(100)))
        .connect(&url(addr))
        .unwrap();
    assert!(matches!(c.recv(), Err(Error::ReadTimeout)));
    c.send_text("go").unwrap();
    let got = loop {
        match c.recv() {
            Err(Error::ReadTimeout) => continue,
            other => break other.unwrap(),
        }
    };
    assert_eq!(got, Some(Message::Text("late")));
    c.close(CloseCode::NORMAL, "").unwrap();
    h.join().unwrap();
}

/// Evented client, blocking server that starts reading late: the client's sends hit
/// WouldBlock and backpressure, and every byte still arrives, in order.
#[test]
fn evented_backpressure_loses_nothing() {
    const COUNT: usize = 600;
    const SIZE: usize = 64 * 1024;
    // The server starts reading once the client met backpressure (an event, not a
    // guess of how long the client takes to fill the socket and its buffer).
    let full = Arc::new(AtomicBool::new(false));
    let seen_full = Arc::clone(&full);
    let (addr, h) = serve(server_builder(), move |mut s| {
        let deadline = Instant::now() + T;
        while !seen_full.load(Ordering::SeqCst) {
            assert!(
                Instant::now() < deadline,
                "the client never met backpressure"
            );
            thread::sleep(Duration::from_millis(2));
        }
        for i in 0..COUNT {
            match s.recv().unwrap() {
                Some(Message::Binary(b)) => {
                    assert_eq!(b.len(), SIZE);
                    assert_eq!(
                        &b[..8],
                        &(i as u64).to_le_bytes(),
                        "message {i} out of order"
                    );
                    assert!(
                        b[8..].iter().all(|&x| x == i as u8),
                        "message {i} corrupted"
                    );
                }
                other => panic!("message {i}: {other:?}"),
            }
        }
        s.send_text("done").unwrap();
        assert!(matches!(s.recv().unwrap(), Some(Message::Close(_))));
        assert_eq!(s.recv().unwrap(), None);
    });
    let mut c = client_builder()
        .write_buffer_size(256 * 1024)
        .connect(&url(addr))
        .unwrap();
    c.set_blocking(false).unwrap();
    let mut poll = Poll::new().unwrap();
    poll.registry()
        .register(&mut c, Token(1), Interest::READABLE | Interest::WRITABLE)
        .unwrap();
    let mut events = Events::with_capacity(8);
    let mut msg = vec![0u8; SIZE];
    let (mut backpressure, mut partial) = (0, 0);
    let deadline = Instant::now() + T;
    for i in 0..COUNT {
        msg[..8].copy_from_slice(&(i as u64).to_le_bytes());
        msg[8..].fill(i as u8);
        loop {
            match c.send_binary(&msg) {
                Ok(()) => break,
                Err(Error::Backpressure) => {
                    backpressure += 1;
                    full.store(true, Ordering::SeqCst);
                    while {
                        c.flush().unwrap();
                        c.wants_write()
                    } {
                        assert!(Instant::now() < deadline, "stalled");
                        poll.poll(&mut events, Some(Duration::from_millis(100)))
                            .unwrap();
                    }
                }
                Err(e) => panic!("{e}"),
            }
        }
        if c.wants_write() {
            partial += 1;
        }
    }
    while {
        c.flush().unwrap();
        c.wants_write()
    } {
        poll.poll(&mut events, Some(Duration::from_millis(100)))
            .unwrap();
    }
    assert!(backpressure > 0, "the burst never met a full buffer");
    assert!(partial > 0, "no send was left partly written");
    // Drain until the server's answer arrives.
    loop {
        assert!(Instant::now() < deadline, "no answer");
        match c.try_recv().unwrap() {
            Some(Message::Text(t)) => {
                assert_eq!(t, "done");
                break;
            }
            Some(other) => panic!("{other:?}"),
            None => poll
                .poll(&mut events, Some(Duration::from_millis(100)))
                .unwrap(),
        }
    }
    c.close(CloseCode::NORMAL, "").unwrap();
    while !c.is_closed() {
        assert!(Instant::now() < deadline, "close not answered");
        c.handle_timeout(Instant::now()).unwrap();
        match c.try_recv().unwrap() {
            Some(Message::Close(_)) => {}
            Some(other) => panic!("{other:?}"),
            None => poll
                .poll(&mut events, Some(Duration::from_millis(100)))
                .unwrap(),
        }
    }
    h.join().unwrap();
}

/// One thread, one poll, several clients: the evented server handshake and echo.
#[test]
fn evented_server_serves_many_clients_from_one_thread() {
    const CLIENTS: usize = 4;
    let mut server = server_builder().bind("127.0.0.1:0").unwrap();
    let addr = server.local_addr().unwrap();
    let h = thread::spawn(move || {
        let mut poll = Poll::new().unwrap();
        poll.registry()
            .register(&mut server, Token(0), Interest::READABLE)
            .unwrap();
        let mut conns: Vec<Option<ServerConnection>> = Vec::new();
        let mut events = Events::with_capacity(64);
        let mut scratch = Vec::new();
        let (mut done, deadline) = (0, Instant::now() + T);
        while done < CLIENTS {
            assert!(Instant::now() < deadline, "server stalled");
            poll.poll(&mut events, Some(Duration::from_millis(100)))
                .unwrap();
            while let Some(mut c) = server.try_accept().unwrap() {
                let token = Token(conns.len() + 1);
                poll.registry()
                    .register(&mut c, token, Interest::READABLE | Interest::WRITABLE)
                    .unwrap();
                conns.push(Some(c));
            }
            for slot in conns.iter_mut() {
                let Some(c) = slot else { continue };
                loop {
                    match c.try_recv() {
                        Ok(Some(Message::Text(t))) => {
                            scratch.clear();
                            scratch.extend_from_slice(t.as_bytes());
                            let t = std::str::from_utf8(&scratch).unwrap();
                            c.send_text(&format!("{t} from {}", c.path())).unwrap();
                        }
                        Ok(Some(_)) => {}
                        Ok(None) => break,
                        Err(e) => panic!("{e}"),
                    }
                }
                if c.is_closed() {
                    *slot = None;
                    done += 1;
                }
            }
        }
    });
    let clients: Vec<_> = (0..CLIENTS)
        .map(|i| {
            thread::spawn(move || {
                let mut c = client_builder()
                    .connect(&format!("ws://{addr}/c{i}"))
                    .unwrap();
                for j in 0..50 {
                    let m = format!("{i}:{j}");
                    c.send_text(&m).unwrap();
                    assert_eq!(
                        c.recv().unwrap(),
                        Some(Message::Text(&format!("{m} from /c{i}")))
                    );
                }
                c.close(CloseCode::NORMAL, "").unwrap();
                assert!(matches!(c.recv().unwrap(), Some(Message::Close(_))));
                assert_eq!(c.recv().unwrap(), None);
            })
        })
        .collect();
    for c in clients {
        c.join().unwrap();
    }
    h.join().unwrap();
}

/// Read an HTTP head from a raw socket; returns the Sec-WebSocket-Key if any.
fn read_head(s: &mut StdStream) -> String {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        assert_eq!(s.read(&mut byte).unwrap(), 1, "EOF in head");
        head.push(byte[0]);
    }
    let head = String::from_utf8(head).unwrap();
    head.lines()
        .find_map(|l| l.strip_prefix("Sec-WebSocket-Key: "))
        .unwrap_or("")
        .to_owned()
}

fn accept_response(key: &str) -> String {
    let accept = tickwire_codec::ws::handshake::accept_key(key.as_bytes());
    format!(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Accept: {}\r\n\r\n",
        std::str::from_utf8(&accept).unwrap()
    )
}

fn raw_request(addr: SocketAddr, request: &str) -> String {
    let mut s = StdStream::connect(addr).unwrap();
    s.set_read_timeout(Some(T)).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

fn refuse(request: &'static str) -> (String, Error) {
    let mut server = server_builder().bind("127.0.0.1:0").unwrap();
    let addr = server.local_addr().unwrap();
    let h = thread::spawn(move || server.accept().unwrap().handshake().err().unwrap());
    let response = raw_request(addr, request);
    (response, h.join().unwrap())
}

#[test]
fn bad_request_is_refused_with_400() {
    let (resp, err) = refuse(
        "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\r\n",
    );
    assert!(resp.starts_with("HTTP/1.1 400 "), "{resp}");
    assert!(
        matches!(
            err,
            Error::Handshake {
                error: HandshakeError::MissingKey,
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn wrong_version_is_refused_with_426() {
    let (resp, err) = refuse(
        "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 8\r\n\r\n",
    );
    assert!(resp.starts_with("HTTP/1.1 426 "), "{resp}");
    assert!(resp.contains("Sec-WebSocket-Version: 13"), "{resp}");
    assert!(
        matches!(
            err,
            Error::Handshake {
                error: HandshakeError::BadVersion,
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn client_rejects_a_non_101_answer() {
    let listener = StdListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let h = thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        read_head(&mut s);
        s.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
            .unwrap();
    });
    let err = client_builder().connect(&url(addr)).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Handshake {
                error: HandshakeError::BadStatus(404),
                ..
            }
        ),
        "{err:?}"
    );
    h.join().unwrap();
}

#[test]
fn handshake_timeout_against_a_listener_that_never_accepts() {
    let listener = StdListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let start = Instant::now();
    let err = client_builder()
        .connect_timeout(Duration::from_millis(300))
        .handshake_timeout(Duration::from_millis(300))
        .connect(&url(addr))
        .unwrap_err();
    assert!(matches!(err, Error::HandshakeTimeout { .. }), "{err:?}");
    assert!(start.elapsed() < Duration::from_secs(5));
    drop(listener);
}

#[test]
fn server_handshake_timeout() {
    let mut server = server_builder()
        .handshake_timeout(Duration::from_millis(200))
        .bind("127.0.0.1:0")
        .unwrap();
    let addr = server.local_addr().unwrap();
    let h = thread::spawn(move || server.accept().unwrap().handshake().err().unwrap());
    let s = StdStream::connect(addr).unwrap(); // says nothing
    assert!(matches!(h.join().unwrap(), Error::HandshakeTimeout { .. }));
    drop(s);
}

#[test]
fn connect_refused_is_an_io_error() {
    let port = StdListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let err = Client::connect(&format!("ws://127.0.0.1:{port}/")).unwrap_err();
    assert!(matches!(err, Error::Connect { .. }), "{err:?}");
}

#[test]
fn url_errors_are_typed() {
    assert!(matches!(
        Client::connect("wss://127.0.0.1:1/"),
        Err(Error::Connect { .. })
    ));
    assert!(matches!(
        Client::connect("http://127.0.0.1:1/"),
        Err(Error::Url(_))
    ));
}

#[test]
fn garbage_from_the_peer_gets_a_1002_close() {
    let (addr, h) = serve(server_builder(), |mut s| {
        let err = s.recv().unwrap_err();
        assert!(
            matches!(err, Error::Protocol(ProtocolError::ReservedOpcode(3))),
            "{err:?}"
        );
        // Later calls report what failed the connection.
        assert!(matches!(
            s.recv(),
            Err(Error::Protocol(ProtocolError::ReservedOpcode(3)))
        ));
    });
    // Masked frame with reserved opcode 3.
    let out = raw_client(addr, &[0x83, 0x80, 1, 2, 3, 4, 0xde, 0xad], T);
    assert_eq!(out, [0x88, 0x02, 0x03, 0xEA], "expected close 1002");
    h.join().unwrap();
}

#[test]
fn unmasked_client_frame_gets_a_1002_close() {
    let (addr, h) = serve(server_builder(), |mut s| {
        let err = s.recv().unwrap_err();
        assert!(
            matches!(err, Error::Protocol(ProtocolError::UnmaskedFrame)),
            "{err:?}"
        );
    });
    let out = raw_client(addr, &[0x81, 0x02, b'h', b'i'], T);
    assert_eq!(out, [0x88, 0x02, 0x03, 0xEA]);
    h.join().unwrap();
}

#[test]
fn oversized_message_gets_a_1009_close() {
    let sb = server_builder().read_buffer_size(0).max_message_size(1000);
    let (addr, h) = serve(sb, |mut s| {
        let err = s.recv().unwrap_err();
        assert!(
            matches!(
                err,
                Error::Protocol(ProtocolError::MessageTooLarge | ProtocolError::FrameTooLarge)
            ),
            "{err:?}"
        );
    });
    // Masked binary frame announcing 2000 bytes.
    let mut frame = vec![0x82, 0xFE, 0x07, 0xD0, 0, 0, 0, 0];
    frame.extend_from_slice(&[0u8; 2000]);
    let out = raw_client(addr, &frame, T);
    assert_eq!(out, [0x88, 0x02, 0x03, 0xF1], "expected close 1009");
    h.join().unwrap();
}

#[test]
fn invalid_utf8_gets_a_1007_close() {
    let (addr, h) = serve(server_builder(), |mut s| {
        let err = s.recv().unwrap_err();
        assert!(
            matches!(err, Error::Protocol(ProtocolError::InvalidUtf8)),
            "{err:?}"
        );
    });
    // Masked (zero key) text frame with 0xFF.
    let out = raw_client(addr, &[0x81, 0x81, 0, 0, 0, 0, 0xFF], T);
    assert_eq!(out, [0x88, 0x02, 0x03, 0xEF], "expected close 1007");
    h.join().unwrap();
}

#[test]
fn send_limits_are_typed() {
    let (addr, h) = serve(server_builder(), |mut s| {
        assert!(matches!(s.recv().unwrap(), Some(Message::Close(_))));
    });
    let mut c = client_builder()
        .write_buffer_size(4096)
        .connect(&url(addr))
        .unwrap();
    let err = c.send_binary(&[0u8; 5000]).unwrap_err();
    assert!(
        matches!(err, Error::MessageTooLarge { capacity: 4096, .. }),
        "{err:?}"
    );
    assert!(matches!(c.send_ping(&[0u8; 126]), Err(Error::Encode(_))));
    assert!(matches!(
        c.close(CloseCode(1005), ""),
        Err(Error::Encode(_))
    ));
    c.close(CloseCode::NORMAL, "").unwrap();
    h.join().unwrap();
}

#[test]
fn subprotocol_and_path_are_negotiated() {
    let sb = server_builder()
        .protocol("v2")
        .protocol("v1")
        .header("X-Server", "tickwire");
    let (addr, h) = serve(sb, |mut s| {
        assert_eq!(s.path(), "/feed?x=1");
        assert_eq!(s.protocol(), Some("v1"));
        assert!(matches!(s.recv().unwrap(), Some(Message::Close(_))));
    });
    let mut c = client_builder()
        .protocol("v1")
        .protocol("v0")
        .header("X-Client", "test")
        .connect(&format!("ws://{addr}/feed?x=1"))
        .unwrap();
    assert_eq!(c.protocol(), Some("v1"));
    c.close(CloseCode::NORMAL, "").unwrap();
    h.join().unwrap();
}
