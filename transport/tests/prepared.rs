//! One frame to many connections over 127.0.0.1: a `PreparedMessage` sent on several
//! server connections arrives whole and equal on every client; a client that does not
//! read fills its own connection's buffers until that connection alone says
//! `Backpressure` (evented) or times out (blocking), and loses nothing; a closed
//! connection refuses it; with permessage-deflate the clients inflate the right text.

mod watchdog;

use std::net::SocketAddr;
use std::sync::mpsc;
use std::thread::{self, JoinHandle};
use std::time::Duration;

use tickwire::ws::{Client, CloseCode, Error, Message, PreparedMessage, Server, ServerConnection};
use watchdog::watchdog;

const T: Duration = Duration::from_secs(20);

/// A 128-byte text tick carrying its sequence number.
fn tick(i: usize) -> String {
    let mut s =
        format!("{{\"seq\":{i},\"s\":\"BTCUSDT\",\"b\":\"64123.10\",\"a\":\"64123.20\",\"pad\":\"");
    while s.len() < 126 {
        s.push('x');
    }
    s.push_str("\"}");
    assert_eq!(s.len(), 128);
    s
}

/// Accept `n` connections on `server` and finish their handshakes (blocking).
fn accept(server: &mut Server, n: usize) -> Vec<ServerConnection> {
    (0..n)
        .map(|_| {
            let mut c = server.accept().unwrap();
            c.handshake().unwrap();
            c
        })
        .collect()
}

/// A client thread that connects to `path`, waits for `go` (if any), then receives
/// messages until the close and returns them as text.
fn client(
    addr: SocketAddr,
    path: &str,
    builder: tickwire::ws::ClientBuilder,
    go: Option<mpsc::Receiver<()>>,
) -> JoinHandle<Vec<String>> {
    let url = format!("ws://{addr}{path}");
    thread::spawn(move || {
        let mut c = builder.read_timeout(Some(T)).connect(&url).unwrap();
        if let Some(go) = go {
            go.recv().unwrap();
        }
        texts_until_close(&mut c)
    })
}

/// Receive messages on `c` until the close, as text.
fn texts_until_close(c: &mut Client) -> Vec<String> {
    let mut got = Vec::new();
    loop {
        match c.recv().unwrap() {
            Some(Message::Text(t)) => got.push(t.to_owned()),
            Some(Message::Close(_)) => {}
            Some(other) => panic!("{other:?}"),
            None => return got,
        }
    }
}

/// Send `msg` on an evented connection whose client reads, flushing until it has room.
fn send_to_reader(c: &mut ServerConnection, msg: &PreparedMessage) {
    loop {
        match c.send_prepared(msg) {
            Ok(()) => return,
            Err(Error::Backpressure) => {
                c.flush().unwrap();
                thread::yield_now();
            }
            Err(e) => panic!("{e:?}"),
        }
    }
}

/// Evented: write everything out, yielding to the reader in between.
fn flush_all(c: &mut ServerConnection) {
    while {
        c.flush().unwrap();
        c.wants_write()
    } {
        thread::yield_now();
    }
}

#[test]
fn every_client_gets_the_message_and_a_client_that_does_not_read_is_throttled_alone() {
    watchdog(|| {
        const READERS: usize = 4;
        const COUNT: usize = 3000;
        // Small buffers on the server's side, so the silent client fills them early.
        let mut server = Server::builder()
            .write_buffer_size(4096)
            .so_sndbuf(4096)
            .write_timeout(Some(T))
            .bind("127.0.0.1:0")
            .unwrap();
        let addr = server.local_addr().unwrap();
        let readers: Vec<_> = (0..READERS)
            .map(|_| client(addr, "/reader", Client::builder(), None))
            .collect();
        let mut conns = accept(&mut server, READERS);
        let (release, go) = mpsc::channel();
        let silent = client(addr, "/silent", Client::builder().so_rcvbuf(4096), Some(go));
        let mut slow = accept(&mut server, 1).pop().unwrap();
        assert_eq!(slow.path(), "/silent");
        for c in conns.iter_mut().chain([&mut slow]) {
            c.set_blocking(false).unwrap();
        }
        // (A refused message is skipped; one accepted after a refusal is fine: bytes in
        // flight can still free room in the kernel's buffers.)
        let (mut accepted, mut refused) = (Vec::new(), 0);
        for i in 0..COUNT {
            let msg = PreparedMessage::text(&tick(i));
            for c in &mut conns {
                send_to_reader(c, &msg);
            }
            // The silent client: queued while there is room, then refused whole.
            match slow.send_prepared(&msg) {
                Ok(()) => accepted.push(tick(i)),
                Err(Error::Backpressure) => refused += 1,
                Err(e) => panic!("{e:?}"),
            }
        }
        assert!(
            refused > COUNT / 2,
            "the silent client pushed back {refused} times"
        );
        assert!(!accepted.is_empty());
        // Nothing the silent connection accepted is lost: it reads them once released.
        release.send(()).unwrap();
        flush_all(&mut slow);
        slow.set_blocking(true).unwrap();
        slow.close(CloseCode::NORMAL, "").unwrap();
        assert!(matches!(slow.recv().unwrap(), Some(Message::Close(_))));
        assert_eq!(silent.join().unwrap(), accepted);
        for mut c in conns {
            flush_all(&mut c);
            c.set_blocking(true).unwrap();
            c.close(CloseCode::NORMAL, "").unwrap();
            assert!(matches!(c.recv().unwrap(), Some(Message::Close(_))));
        }
        for r in readers {
            let got = r.join().unwrap();
            assert_eq!(got.len(), COUNT);
            for (i, t) in got.iter().enumerate() {
                assert_eq!(*t, tick(i));
            }
        }
    });
}

#[test]
fn blocking_mode_writes_it_and_a_client_that_does_not_read_times_out() {
    watchdog(|| {
        const COUNT: usize = 3000;
        // Two servers: no write timeout for the reading client (a loaded machine may
        // leave its reader waiting), a short one for the silent client (it never reads
        // until released, so the timeout is the only way out).
        let mut patient = Server::bind("127.0.0.1:0").unwrap();
        let mut strict = Server::builder()
            .write_buffer_size(4096)
            .so_sndbuf(4096)
            .write_timeout(Some(Duration::from_millis(200)))
            .bind("127.0.0.1:0")
            .unwrap();
        let reader = client(patient.local_addr().unwrap(), "/", Client::builder(), None);
        let mut fast = accept(&mut patient, 1).pop().unwrap();
        let (release, go) = mpsc::channel();
        let silent = client(
            strict.local_addr().unwrap(),
            "/",
            Client::builder().so_rcvbuf(4096),
            Some(go),
        );
        let mut slow = accept(&mut strict, 1).pop().unwrap();
        let mut sent_slow = 0;
        let mut timed_out = false;
        for i in 0..COUNT {
            let msg = PreparedMessage::text(&tick(i));
            fast.send_prepared(&msg).unwrap();
            assert!(!fast.wants_write());
            if !timed_out {
                match slow.send_prepared(&msg) {
                    Ok(()) => sent_slow += 1,
                    Err(Error::WriteTimeout) => timed_out = true,
                    Err(e) => panic!("{e:?}"),
                }
            }
        }
        assert!(timed_out, "a peer that never reads took {COUNT} messages");
        fast.close(CloseCode::NORMAL, "").unwrap();
        assert!(matches!(fast.recv().unwrap(), Some(Message::Close(_))));
        assert_eq!(
            reader.join().unwrap(),
            (0..COUNT).map(tick).collect::<Vec<_>>()
        );
        // What the silent connection accepted arrives once read (the message being
        // written when the timeout hit stays queued and goes out whole).
        release.send(()).unwrap();
        slow.set_blocking(false).unwrap();
        flush_all(&mut slow);
        slow.set_blocking(true).unwrap();
        slow.close(CloseCode::NORMAL, "").unwrap();
        assert!(matches!(slow.recv().unwrap(), Some(Message::Close(_))));
        let got = silent.join().unwrap();
        assert!(got.len() == sent_slow || got.len() == sent_slow + 1);
        assert_eq!(got, (0..got.len()).map(tick).collect::<Vec<_>>());
    });
}

#[test]
fn a_closed_connection_refuses_it() {
    watchdog(|| {
        let mut server = Server::bind("127.0.0.1:0").unwrap();
        let addr = server.local_addr().unwrap();
        let url = format!("ws://{addr}/");
        let h = thread::spawn(move || {
            let mut c = Client::builder()
                .read_timeout(Some(T))
                .connect(&url)
                .unwrap();
            assert_eq!(c.recv().unwrap(), Some(Message::Text("before")));
            // The server's close, echoed.
            assert!(matches!(c.recv().unwrap(), Some(Message::Close(_))));
            assert_eq!(c.recv().unwrap(), None);
        });
        let mut s = accept(&mut server, 1).pop().unwrap();
        s.send_prepared(&PreparedMessage::text("before")).unwrap();
        s.close(CloseCode::NORMAL, "").unwrap();
        let msg = PreparedMessage::text("after");
        assert!(matches!(s.send_prepared(&msg), Err(Error::AlreadyClosed)));
        assert!(matches!(s.queue_prepared(&msg), Err(Error::AlreadyClosed)));
        assert!(matches!(s.recv().unwrap(), Some(Message::Close(_))));
        assert!(matches!(s.send_prepared(&msg), Err(Error::AlreadyClosed)));
        h.join().unwrap();
    });
}

#[test]
fn queued_on_every_connection_then_flushed() {
    watchdog(|| {
        const N: usize = 8;
        let mut server = Server::bind("127.0.0.1:0").unwrap();
        let addr = server.local_addr().unwrap();
        let readers: Vec<_> = (0..N)
            .map(|_| client(addr, "/", Client::builder(), None))
            .collect();
        let mut conns = accept(&mut server, N);
        for i in 0..10 {
            let msg = PreparedMessage::text(&tick(i));
            for c in &mut conns {
                c.queue_prepared(&msg).unwrap();
                assert!(c.wants_write());
            }
            for c in &mut conns {
                c.flush().unwrap();
                assert!(!c.wants_write());
            }
        }
        for mut c in conns {
            c.close(CloseCode::NORMAL, "").unwrap();
            assert!(matches!(c.recv().unwrap(), Some(Message::Close(_))));
        }
        for r in readers {
            assert_eq!(r.join().unwrap(), (0..10).map(tick).collect::<Vec<_>>());
        }
    });
}

#[cfg(feature = "deflate")]
#[test]
fn with_deflate_every_client_inflates_the_right_text() {
    use tickwire::codec::ws::deflate::DeflateConfig;
    watchdog(|| {
        // One server that resets its compressor after each message (the frame
        // compressed once goes out) and one that keeps its context (each connection
        // compresses): the clients read the same texts either way.
        for no_takeover in [true, false] {
            let cfg = if no_takeover {
                tickwire::ws::DeflateConfig::fan_out()
            } else {
                DeflateConfig::default()
            };
            let mut server = Server::builder().deflate(cfg).bind("127.0.0.1:0").unwrap();
            let addr = server.local_addr().unwrap();
            let readers: Vec<_> = (0..3)
                .map(|_| {
                    client(
                        addr,
                        "/",
                        Client::builder().deflate(DeflateConfig::default()),
                        None,
                    )
                })
                .collect();
            let mut conns = accept(&mut server, 3);
            let texts: Vec<String> = (0..20).map(|i| tick(i).repeat(1 + i % 5)).collect();
            for (i, text) in texts.iter().enumerate() {
                let msg = PreparedMessage::text(text).with_deflate(&cfg).unwrap();
                assert!(msg.compressed_frame().unwrap().len() < msg.frame().len());
                for c in &mut conns {
                    let n = c.deflate().unwrap();
                    assert_eq!(n.server_no_context_takeover, no_takeover);
                    // The frame compressed once goes out only without context takeover
                    // (the clients did not ask for it: the fan-out server insists).
                    assert_eq!(c.shares_prepared(&msg), no_takeover);
                    // Messages of the connection's own stream in between.
                    if i % 3 == 0 {
                        c.send_text(text).unwrap();
                    } else {
                        c.send_prepared(&msg).unwrap();
                    }
                }
            }
            for mut c in conns {
                c.close(CloseCode::NORMAL, "").unwrap();
                assert!(matches!(c.recv().unwrap(), Some(Message::Close(_))));
            }
            for r in readers {
                assert_eq!(r.join().unwrap(), texts);
            }
        }
    });
}

/// Bytes written on `server`'s socket that its peer has not read: unacknowledged in the
/// server's send queue (`SIOCOUTQ`) plus waiting in the client's receive queue
/// (`FIONREAD`). The client never reads while it is asked, so this is every byte the
/// server's socket took.
fn unread(server: &ServerConnection, client_fd: i32) -> usize {
    use std::os::fd::AsRawFd;
    let (mut outq, mut inq): (libc::c_int, libc::c_int) = (0, 0);
    // SAFETY: both descriptors are open sockets (the connection and the client thread,
    // which waits on a channel, hold them) and each ioctl writes one c_int we own.
    unsafe {
        assert_eq!(
            libc::ioctl(server.as_raw_fd(), libc::TIOCOUTQ, &mut outq),
            0
        );
        assert_eq!(libc::ioctl(client_fd, libc::FIONREAD, &mut inq), 0);
    }
    (outq + inq) as usize
}

#[test]
fn a_partial_direct_write_keeps_the_rest_in_order_and_loses_nothing() {
    watchdog(|| {
        use std::os::fd::AsRawFd;
        // Frames far larger than the kernel's buffers on both sides: the first
        // send_prepared on an empty connection writes straight from the shared frame and
        // the socket takes only part of it; the rest must be queued, and everything sent
        // after it (prepared or not) must follow it on the wire, byte for byte.
        const BIG: usize = 200_000;
        let mut server = Server::builder()
            .write_buffer_size(1 << 20)
            .so_sndbuf(4096)
            .bind("127.0.0.1:0")
            .unwrap();
        let addr = server.local_addr().unwrap();
        let (fd_tx, fd_rx) = mpsc::channel();
        let (release, go) = mpsc::channel::<()>();
        let url = format!("ws://{addr}/");
        let reader = thread::spawn(move || {
            let mut c = Client::builder()
                .so_rcvbuf(4096)
                .read_buffer_size(1 << 20)
                .read_timeout(Some(T))
                .connect(&url)
                .unwrap();
            fd_tx.send(c.as_raw_fd()).unwrap();
            go.recv().unwrap();
            texts_until_close(&mut c)
        });
        let mut s = accept(&mut server, 1).pop().unwrap();
        let client_fd = fd_rx.recv().unwrap();
        s.set_blocking(false).unwrap();
        // Distinct bytes everywhere, so a byte out of place or lost shows in the texts.
        let text = |i: usize, len: usize| -> String {
            let mut t = tick(i);
            while t.len() < len {
                t.push(char::from(b'a' + (t.len() * 7 + i) as u8 % 26));
            }
            t
        };
        let first = PreparedMessage::text(&text(0, BIG));
        assert_eq!(unread(&s, client_fd), 0);
        s.send_prepared(&first).unwrap();
        let took = unread(&s, client_fd);
        assert!(
            took > 0 && took < first.frame().len(),
            "the socket took {took} of {} bytes",
            first.frame().len()
        );
        assert!(s.wants_write(), "the rest of the frame is queued");
        let mut sent = vec![text(0, BIG)];
        // Behind it: prepared messages (copied behind the queued bytes), a message the
        // connection encodes itself, a small prepared one; refused ones are skipped.
        for i in 1..12 {
            let t = text(i, if i % 4 == 0 { 128 } else { BIG / 2 + i });
            let r = if i % 3 == 0 {
                s.send_text(&t)
            } else {
                s.send_prepared(&PreparedMessage::text(&t))
            };
            match r {
                Ok(()) => sent.push(t),
                Err(Error::Backpressure) => {}
                Err(e) => panic!("{e:?}"),
            }
        }
        assert!(sent.len() > 2, "only {} messages queued", sent.len());
        release.send(()).unwrap();
        flush_all(&mut s);
        // Once the queue is empty the direct path writes again.
        let last = text(99, 128);
        s.send_prepared(&PreparedMessage::text(&last)).unwrap();
        sent.push(last);
        flush_all(&mut s);
        s.set_blocking(true).unwrap();
        s.close(CloseCode::NORMAL, "").unwrap();
        assert!(matches!(s.recv().unwrap(), Some(Message::Close(_))));
        let got = reader.join().unwrap();
        assert_eq!(got.len(), sent.len());
        for (g, e) in got.iter().zip(&sent) {
            assert!(
                g == e,
                "a message differs ({} vs {} bytes)",
                g.len(),
                e.len()
            );
        }
    });
}
