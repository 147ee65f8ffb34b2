//! The blocking driver over the codec's `Connection`, against real loopback sockets:
//! a protocol error reaches the caller at once (not after the close handshake), a slow
//! client's opening handshake never holds up `accept`, pongs reach a peer whose socket
//! refused the write when its ping came in, a read timeout is the socket's own receive
//! timeout, and keepalive and dead-peer detection work over a real socket. Every wait is
//! for an event; the watchdog only turns a hang into a failure.
#![cfg(unix)]

mod watchdog;

use std::io::{Read, Write};
use std::net::{TcpListener as StdListener, TcpStream as StdStream};
use std::os::fd::AsRawFd;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use tickwire::ws::{Client, CloseCode, Error, Message, Server};
use watchdog::watchdog;

/// Long enough that a test passing by waiting for it would fail the watchdog first.
const FOREVER: Duration = Duration::from_secs(3600);

/// A raw server that completes the opening handshake by hand, then runs `f` on the
/// socket: the peer is bytes nobody here framed.
fn raw_server(f: impl FnOnce(StdStream) + Send + 'static) -> std::net::SocketAddr {
    let l = StdListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        let mut head = Vec::new();
        let mut b = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            s.read_exact(&mut b).unwrap();
            head.push(b[0]);
        }
        let head = String::from_utf8(head).unwrap();
        let key = head
            .lines()
            .find_map(|l| l.strip_prefix("Sec-WebSocket-Key: "))
            .unwrap();
        let accept = tickwire::codec::ws::handshake::accept_key(key.trim().as_bytes());
        write!(
            s,
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\
             Connection: Upgrade\r\nSec-WebSocket-Accept: {}\r\n\r\n",
            std::str::from_utf8(&accept).unwrap()
        )
        .unwrap();
        f(s);
    });
    addr
}

/// A protocol error is returned by the `recv` that met it, with the close frame on
/// its way: never after waiting for the peer's close. The peer here answers nothing
/// and never closes, and the close timeout is an hour: before the change, `recv`
/// waited out the close timeout first.
#[test]
fn a_protocol_error_reaches_the_caller_at_once() {
    watchdog(|| {
        let (seen_tx, seen_rx) = mpsc::channel();
        let addr = raw_server(move |mut s| {
            // Invalid UTF-8 in an unmasked text frame.
            s.write_all(&[0x81, 0x02, 0xC3, 0x28]).unwrap();
            // Our close frame arrives (masked, code 1007); then silence, socket open.
            let mut close = [0u8; 8];
            s.read_exact(&mut close).unwrap();
            seen_tx.send(close).unwrap();
            let _ = s.read(&mut [0u8; 64]);
            // Not a wait for time to pass: the peer must stay silent with its socket open
            // for the rest of the test (the thread ends with the process).
            thread::sleep(FOREVER);
        });
        let mut c = Client::builder()
            .close_timeout(FOREVER)
            .connect(&format!("ws://{addr}/"))
            .unwrap();
        match c.recv() {
            Err(Error::Protocol(e)) => assert_eq!(e.close_code(), CloseCode::INVALID_PAYLOAD),
            other => panic!("{other:?}"),
        }
        let close = seen_rx.recv().unwrap();
        assert_eq!(close[0], 0x88, "a close frame");
        let code = u16::from_be_bytes([close[6] ^ close[2], close[7] ^ close[3]]);
        assert_eq!(code, 1007);
    });
}

/// A client that sends its upgrade request one byte at a time, and then stalls, does
/// not keep `accept` from returning the next connection: the handshake runs where the
/// connection is used. Before the change, `accept` ran the handshake and the second
/// client waited out the handshake timeout (an hour here).
#[test]
fn a_slow_handshake_does_not_hold_up_accept() {
    watchdog(|| {
        let mut server = Server::builder()
            .handshake_timeout(FOREVER)
            .bind("127.0.0.1:0")
            .unwrap();
        let addr = server.local_addr().unwrap();
        thread::spawn(move || {
            loop {
                let Ok(mut conn) = server.accept() else {
                    return;
                };
                thread::spawn(move || {
                    while let Ok(Some(msg)) = conn.recv() {
                        if let Message::Text(t) = msg {
                            let t = t.to_owned();
                            if conn.send_text(&t).is_err() {
                                return;
                            }
                        }
                    }
                });
            }
        });
        // The slow client: half a request line, byte by byte, then nothing.
        let mut slow = StdStream::connect(addr).unwrap();
        for b in b"GET / HT" {
            slow.write_all(&[*b]).unwrap();
        }
        let mut fast = Client::connect(&format!("ws://{addr}/")).unwrap();
        fast.send_text("not held up").unwrap();
        assert_eq!(fast.recv().unwrap(), Some(Message::Text("not held up")));
        fast.close(CloseCode::NORMAL, "").unwrap();
        drop(slow);
    });
}

/// A peer pings a client that only reads. The first ping comes while the client's
/// socket refuses writes (the client filled it and the peer has not read it yet); the
/// pong goes out as soon as the socket takes it, and every later pong follows its ping.
#[test]
fn pongs_reach_a_peer_of_a_client_that_only_reads() {
    watchdog(|| {
        let mut server = Server::builder()
            .read_timeout(Some(FOREVER))
            .bind("127.0.0.1:0")
            .unwrap();
        let addr = server.local_addr().unwrap();
        let (full_tx, full_rx) = mpsc::channel::<usize>();
        let h = thread::spawn(move || {
            let mut s = server.accept().unwrap();
            s.handshake().unwrap();
            let sent = full_rx.recv().unwrap();
            // The client's socket is full: ping now, then start reading.
            s.send_ping(b"0").unwrap();
            let mut got = 0;
            loop {
                match s.recv().unwrap() {
                    Some(Message::Binary(b)) => got += b.len(),
                    Some(Message::Pong(p)) => {
                        assert_eq!(p, b"0");
                        break;
                    }
                    other => panic!("{other:?}"),
                }
            }
            assert!(got <= sent);
            for i in 1..100u32 {
                let payload = i.to_be_bytes();
                s.send_ping(&payload).unwrap();
                loop {
                    match s.recv().unwrap() {
                        Some(Message::Binary(_)) => {}
                        Some(Message::Pong(p)) => {
                            assert_eq!(p, payload);
                            break;
                        }
                        other => panic!("{other:?}"),
                    }
                }
            }
            s.close(CloseCode::NORMAL, "").unwrap();
            while let Ok(Some(_)) = s.recv() {}
        });
        let mut c = Client::builder()
            .write_buffer_size(64 * 1024)
            .connect(&format!("ws://{addr}/"))
            .unwrap();
        // Fill the socket and the write buffer without blocking.
        c.set_blocking(false).unwrap();
        let chunk = vec![7u8; 16 * 1024];
        let mut sent = 0;
        let mut full = 0;
        while full < 3 {
            match c.send_binary(&chunk) {
                Ok(()) => sent += chunk.len(),
                Err(Error::Backpressure) => {
                    full += 1;
                    thread::yield_now();
                }
                Err(e) => panic!("{e}"),
            }
        }
        full_tx.send(sent).unwrap();
        c.set_blocking(true).unwrap();
        // From here the client only reads.
        let mut pings = 0;
        loop {
            match c.recv().unwrap() {
                Some(Message::Ping(_)) => pings += 1,
                Some(Message::Close(_)) => break,
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(pings, 100);
        assert_eq!(c.recv().unwrap(), None);
        h.join().unwrap();
    });
}

/// With a read timeout, a waiting `recv` sleeps in one `read(2)` bounded by the
/// socket's receive timeout (`SO_RCVTIMEO`), not in a poll of its own; the timeout is
/// reported as `Error::ReadTimeout` and leaves the connection usable.
#[test]
fn a_read_timeout_is_the_sockets_receive_timeout() {
    watchdog(|| {
        let (go_tx, go_rx) = mpsc::channel::<()>();
        let addr = raw_server(move |mut s| {
            // One unmasked text frame, then wait to be told to send the next.
            s.write_all(&[0x81, 0x02, b'h', b'i']).unwrap();
            go_rx.recv().unwrap();
            s.write_all(&[0x81, 0x02, b'h', b'o']).unwrap();
            let _ = s.read(&mut [0u8; 64]);
        });
        let t = Duration::from_millis(300);
        let mut c = Client::builder()
            .read_timeout(Some(t))
            .connect(&format!("ws://{addr}/"))
            .unwrap();
        assert_eq!(c.recv().unwrap(), Some(Message::Text("hi")));
        // Nothing more comes: the read times out.
        assert!(matches!(c.recv(), Err(Error::ReadTimeout)));
        let fd = c.as_raw_fd();
        // SAFETY: fcntl(F_GETFL) on a descriptor the client keeps open only reads flags.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
        assert_eq!(
            flags & libc::O_NONBLOCK,
            0,
            "the read blocked in the kernel"
        );
        let mut tv = libc::timeval {
            tv_sec: 0,
            tv_usec: 0,
        };
        let mut len = std::mem::size_of::<libc::timeval>() as libc::socklen_t;
        // SAFETY: getsockopt writes at most `len` bytes into `tv`, a timeval.
        let rc = unsafe {
            libc::getsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_RCVTIMEO,
                (&mut tv as *mut libc::timeval).cast(),
                &mut len,
            )
        };
        assert_eq!(rc, 0);
        let set = Duration::from_secs(tv.tv_sec as u64) + Duration::from_micros(tv.tv_usec as u64);
        assert!(set > Duration::ZERO && set <= t, "SO_RCVTIMEO {set:?}");
        // The connection is unchanged by the timeout.
        go_tx.send(()).unwrap();
        assert_eq!(c.recv().unwrap(), Some(Message::Text("ho")));
    });
}

/// Keepalive over a real socket: a client that only waits in `recv` pings a peer that
/// says nothing, and the peer's pongs keep it alive; a peer that never answers is
/// declared dead (`Error::DeadPeer`) and the socket is shut without a close frame.
#[test]
fn keepalive_pings_a_quiet_peer_and_a_dead_one_is_detected() {
    watchdog(|| {
        let (pings_tx, pings_rx) = mpsc::channel::<u8>();
        let addr = raw_server(move |mut s| {
            // Answer three pings with pongs, then go silent (but keep the socket open).
            for _ in 0..3 {
                let mut head = [0u8; 6];
                s.read_exact(&mut head).unwrap();
                pings_tx.send(head[0]).unwrap();
                s.write_all(&[0x8A, 0x00]).unwrap();
            }
            let mut rest = Vec::new();
            let _ = s.read_to_end(&mut rest);
            // The client shut its write half: no close frame was sent, only pings.
            assert!(rest.chunks(6).all(|f| f[0] == 0x89), "{rest:?}");
        });
        let mut c = Client::builder()
            .keepalive(Some(Duration::from_millis(50)))
            .dead_peer_timeout(Some(Duration::from_millis(400)))
            .connect(&format!("ws://{addr}/"))
            .unwrap();
        for _ in 0..3 {
            assert_eq!(c.recv().unwrap(), Some(Message::Pong(b"")));
            assert_eq!(pings_rx.recv().unwrap(), 0x89);
        }
        assert!(matches!(c.recv(), Err(Error::DeadPeer)));
        assert!(c.is_closed());
    });
}
