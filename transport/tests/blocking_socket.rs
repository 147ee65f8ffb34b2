//! Blocking mode with no deadline runs on a blocking socket (one `read(2)` per wait,
//! one `write(2)` per send); everything else (`try_recv`, timeouts, the close
//! timeout, evented mode) must find the socket non-blocking again. These tests run
//! both `ws://` and `wss://` with no read or write timeout, check the socket's
//! `O_NONBLOCK` flag at each step, and check that large messages and backpressure keep
//! every byte. Each test body runs under a watchdog, so a wait that should not block
//! fails the test instead of hanging it.
#![cfg(all(feature = "tls", unix))]

mod net_events;
mod tls_util;
mod watchdog;

use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::sync::mpsc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use mio::{Events, Interest, Poll, Token};
use tickwire::tls::TlsConfig;
use tickwire::ws::{Client, Error, Message, Server, ServerConnection};
use tls_util::Ca;
use watchdog::watchdog;

/// Whether the socket is in blocking mode (`O_NONBLOCK` clear).
fn is_blocking_fd(c: &Client) -> bool {
    // SAFETY: fcntl(F_GETFL) on a descriptor the client keeps open only reads its flags.
    let flags = unsafe { libc::fcntl(c.as_raw_fd(), libc::F_GETFL) };
    assert!(flags >= 0, "fcntl: {}", std::io::Error::last_os_error());
    flags & libc::O_NONBLOCK == 0
}

/// Plain or TLS: the server builder's TLS config and the client's, and the scheme.
struct Mode {
    tls: Option<(tickwire::tls::TlsServerConfig, TlsConfig)>,
}

impl Mode {
    fn all() -> [Mode; 2] {
        let ca = Ca::new("blocking socket CA");
        let leaf = ca.server(&["localhost"]);
        [
            Mode { tls: None },
            Mode {
                tls: Some((leaf.server_config(), ca.client_config())),
            },
        ]
    }

    /// A server (no timeouts) accepting one connection, handed to `f`.
    fn serve<F>(&self, f: F) -> (SocketAddr, JoinHandle<()>)
    where
        F: FnOnce(ServerConnection) + Send + 'static,
    {
        let mut b = Server::builder();
        if let Some((s, _)) = &self.tls {
            b = b.tls(s.clone());
        }
        let mut server = b.bind("127.0.0.1:0").unwrap();
        let addr = server.local_addr().unwrap();
        (addr, thread::spawn(move || f(server.accept().unwrap())))
    }

    /// A client (no timeouts, unless `close_timeout`).
    fn connect(&self, addr: SocketAddr, close_timeout: Option<Duration>) -> Client {
        let mut b = Client::builder();
        if let Some(t) = close_timeout {
            b = b.close_timeout(t);
        }
        let url = match &self.tls {
            Some((_, c)) => {
                b = b.tls(c.clone());
                format!("wss://localhost:{}/", addr.port())
            }
            None => format!("ws://{addr}/"),
        };
        b.connect(&url).unwrap()
    }
}

fn pattern(n: usize, seed: usize) -> Vec<u8> {
    (0..n)
        .map(|i| (i * 31 + seed * 7 + i / 251) as u8)
        .collect()
}

/// Echo binary messages until the close handshake completes.
fn echo(mut c: ServerConnection) {
    let mut scratch = Vec::new();
    loop {
        match c.recv().unwrap() {
            Some(Message::Binary(b)) => {
                scratch.clear();
                scratch.extend_from_slice(b);
            }
            Some(_) => continue,
            None => return,
        }
        if let Some(tls) = c.tls() {
            assert!(tls.is_records_mode(), "server in records mode");
        }
        c.send_binary(&scratch).unwrap();
    }
}

fn close(c: &mut Client) {
    c.close(None, "").unwrap();
    loop {
        match c.recv().unwrap() {
            Some(Message::Close(_)) => {}
            Some(m) => panic!("after close: {m:?}"),
            None => break,
        }
    }
}

#[test]
fn echo_without_timeouts_runs_on_a_blocking_socket_and_keeps_every_byte() {
    watchdog(|| {
        for mode in Mode::all() {
            let (addr, h) = mode.serve(echo);
            let mut c = mode.connect(addr, None);
            assert!(!is_blocking_fd(&c), "non-blocking until the first wait");
            // 900 kB is more than loopback's socket buffers take at once: the blocking
            // writes on both sides and the blocking reads interleave.
            for (i, size) in [0, 1, 40, 128, 16_384, 16_385, 300_000, 900_000]
                .into_iter()
                .enumerate()
            {
                let data = pattern(size, i);
                c.send_binary(&data).unwrap();
                assert_eq!(c.recv().unwrap(), Some(Message::Binary(&data[..])));
                assert!(is_blocking_fd(&c), "a wait with no deadline blocks in read");
            }
            if let Some(tls) = c.tls() {
                // TLS 1.3: the codec's own record layer took over after the handshake.
                assert!(tls.is_records_mode());
            }
            close(&mut c);
            h.join().unwrap();
        }
    });
}

#[test]
fn try_recv_and_evented_mode_find_the_socket_non_blocking() {
    watchdog(|| {
        for mode in Mode::all() {
            let (addr, h) = mode.serve(echo);
            let mut c = mode.connect(addr, None);
            c.send_binary(b"one").unwrap();
            assert_eq!(c.recv().unwrap(), Some(Message::Binary(&b"one"[..])));
            assert!(is_blocking_fd(&c));
            // Blocking mode's try_recv never waits.
            assert_eq!(c.try_recv().unwrap(), None);
            assert!(!is_blocking_fd(&c));
            c.send_binary(b"two").unwrap();
            assert_eq!(c.recv().unwrap(), Some(Message::Binary(&b"two"[..])));
            assert!(is_blocking_fd(&c));

            // Evented mode: the caller's poll, non-blocking socket.
            c.set_blocking(false).unwrap();
            assert!(!is_blocking_fd(&c));
            let mut poll = Poll::new().unwrap();
            poll.registry()
                .register(&mut c, Token(1), Interest::READABLE | Interest::WRITABLE)
                .unwrap();
            let mut events = Events::with_capacity(8);
            c.send_binary(b"three").unwrap();
            while c.wants_write() {
                poll.poll(&mut events, None).unwrap();
                c.flush().unwrap();
            }
            let got = loop {
                if let Some(m) = c.try_recv().unwrap() {
                    break m.payload().to_vec();
                }
                poll.poll(&mut events, None).unwrap();
            };
            assert_eq!(got, b"three");
            poll.registry().deregister(&mut c).unwrap();

            // And back to blocking.
            c.set_blocking(true).unwrap();
            c.send_binary(b"four").unwrap();
            assert_eq!(c.recv().unwrap(), Some(Message::Binary(&b"four"[..])));
            assert!(is_blocking_fd(&c));
            close(&mut c);
            h.join().unwrap();
        }
    });
}

#[test]
fn close_timeout_still_applies_after_blocking_waits() {
    watchdog(|| {
        for mode in Mode::all() {
            // The server echoes once, then reads nothing and never answers the close.
            let (stop_tx, stop_rx) = mpsc::channel::<()>();
            let (addr, h) = mode.serve(move |mut s| {
                let m = s.recv().unwrap().unwrap().payload().to_vec();
                s.send_binary(&m).unwrap();
                let _ = stop_rx.recv();
            });
            let mut c = mode.connect(addr, Some(Duration::from_millis(200)));
            c.send_binary(b"ping").unwrap();
            assert_eq!(c.recv().unwrap(), Some(Message::Binary(&b"ping"[..])));
            assert!(is_blocking_fd(&c));
            c.close(None, "").unwrap();
            let t0 = Instant::now();
            match c.recv() {
                Err(Error::CloseTimeout) => {}
                other => panic!("expected the close timeout, got {other:?}"),
            }
            let took = t0.elapsed();
            assert!(
                took >= Duration::from_millis(150) && took < Duration::from_secs(10),
                "{took:?}"
            );
            stop_tx.send(()).unwrap();
            h.join().unwrap();
        }
    });
}

#[test]
fn blocking_sends_against_a_slow_reader_keep_every_byte() {
    watchdog(|| {
        for mode in Mode::all() {
            const N: usize = 48;
            const SIZE: usize = 256 * 1024;
            // 12 MiB against a reader that starts only once the client's writes wait
            // for the socket (an event: its bytes queue in its send buffer); every byte
            // must arrive in order.
            let (addr, h) = mode.serve(|mut s| {
                s.handshake().unwrap();
                let (ours, theirs) = (s.local_addr().unwrap(), s.peer_addr().unwrap());
                net_events::wait_backed_up(theirs, ours);
                for i in 0..N {
                    match s.recv().unwrap() {
                        Some(Message::Binary(b)) => assert!(b == &pattern(SIZE, i)[..], "{i}"),
                        other => panic!("{i}: {other:?}"),
                    }
                }
                s.send_binary(b"done").unwrap();
                assert!(matches!(s.recv().unwrap(), Some(Message::Close(_))));
            });
            let mut c = mode.connect(addr, None);
            for i in 0..N {
                c.send_binary(&pattern(SIZE, i)).unwrap();
            }
            assert_eq!(c.recv().unwrap(), Some(Message::Binary(&b"done"[..])));
            close(&mut c);
            h.join().unwrap();
        }
    });
}
