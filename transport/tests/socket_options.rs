//! Socket options from the builders, read back with getsockopt on the connected and the
//! accepted socket (blocking and tokio ws, REST), and the busy-poll receive mode: it
//! receives every message, keeps the socket non-blocking while it spins, falls back to
//! sleeping after its budget, and still honours the read timeout.

#![cfg(all(feature = "tokio", unix))]

use std::os::fd::{AsFd, AsRawFd};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use socket2::SockRef;
use tickwire::rest::{self, HttpStream};
use tickwire::socket::{RecvMode, SocketOptions};
use tickwire::ws::{self, Message};

const RCVBUF: usize = 200 << 10;
const SNDBUF: usize = 300 << 10;

/// Check the tuned options on `fd`: nodelay off, both buffers at least what was asked
/// (Linux doubles), busy-poll on Linux. Quick-ACK too when `quickack_now`: the kernel
/// leaves quick-ACK mode by itself once data flowed both ways (the WebSocket
/// handshake), so it is read back only on sockets that carried nothing yet.
fn assert_tuned(fd: impl AsFd, busy_poll: u32, quickack_now: bool) {
    let s = SockRef::from(&fd);
    assert!(!s.tcp_nodelay().unwrap());
    assert!(s.recv_buffer_size().unwrap() >= RCVBUF);
    assert!(s.send_buffer_size().unwrap() >= SNDBUF);
    #[cfg(target_os = "linux")]
    {
        assert_eq!(s.busy_poll().unwrap(), busy_poll);
        if quickack_now {
            assert!(s.tcp_quickack().unwrap());
        }
    }
    let _ = (busy_poll, quickack_now);
}

/// The defaults: nodelay on, the kernel's buffers (smaller than the tuned ones here).
fn assert_default(fd: impl AsFd) {
    let s = SockRef::from(&fd);
    assert!(s.tcp_nodelay().unwrap());
    #[cfg(target_os = "linux")]
    assert_eq!(s.busy_poll().unwrap(), 0);
}

#[test]
fn blocking_ws_client_and_server_apply_their_options() {
    let mut srv = ws::ServerBuilder::new()
        .nodelay(false)
        .so_rcvbuf(RCVBUF)
        .so_sndbuf(SNDBUF)
        .quickack(true)
        .so_busy_poll(25)
        .bind("127.0.0.1:0")
        .unwrap();
    let addr = srv.local_addr().unwrap();
    let h = thread::spawn(move || {
        // Evented accept: the options are set before any byte of the handshake.
        let c = loop {
            match srv.try_accept().unwrap() {
                Some(c) => break c,
                None => thread::sleep(Duration::from_millis(1)),
            }
        };
        assert_tuned(&c, 25, true);
        let mut c = c;
        c.set_blocking(true).unwrap();
        c.handshake().unwrap();
        assert_tuned(&c, 25, false);
        c
    });
    let c = ws::ClientBuilder::new()
        .socket_options({
            let mut o = SocketOptions::default();
            o.nodelay = false;
            o.recv_buffer = Some(RCVBUF);
            o.send_buffer = Some(SNDBUF);
            o.quickack = true;
            o.busy_poll = Some(40);
            o
        })
        .connect(&format!("ws://{addr}/"))
        .unwrap();
    assert_tuned(&c, 40, false);
    let _server_side = h.join().unwrap();

    // Defaults on both sides.
    let mut srv = ws::Server::bind("127.0.0.1:0").unwrap();
    let addr = srv.local_addr().unwrap();
    let h = thread::spawn(move || {
        let mut c = srv.accept().unwrap();
        c.handshake().unwrap();
        assert_default(&c);
    });
    let c = ws::Client::connect(&format!("ws://{addr}/")).unwrap();
    assert_default(&c);
    h.join().unwrap();
}

#[test]
fn tokio_ws_client_and_server_apply_their_options() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut srv = tickwire::tokio::ws::ServerBuilder::new()
            .nodelay(false)
            .so_rcvbuf(RCVBUF)
            .so_sndbuf(SNDBUF)
            .quickack(true)
            .so_busy_poll(30)
            .bind("127.0.0.1:0")
            .await
            .unwrap();
        let addr = srv.local_addr().unwrap();
        let server = async move {
            let mut c = srv.accept().await.unwrap();
            c.handshake().await.unwrap();
            assert_tuned(&c, 30, false);
            c
        };
        let client = async {
            tickwire::tokio::ws::ClientBuilder::new()
                .nodelay(false)
                .so_rcvbuf(RCVBUF)
                .so_sndbuf(SNDBUF)
                .quickack(true)
                .so_busy_poll(35)
                .connect(&format!("ws://{addr}/"))
                .await
                .unwrap()
        };
        let (_s, c) = tokio::join!(server, client);
        assert_tuned(&c, 35, false);
    });
}

#[test]
fn rest_client_applies_its_options() {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let c = rest::Client::builder()
        .nodelay(false)
        .so_rcvbuf(RCVBUF)
        .so_sndbuf(SNDBUF)
        .quickack(true)
        .so_busy_poll(45)
        .connect(&format!("http://{addr}"))
        .unwrap();
    match c.stream() {
        Some(HttpStream::Tcp(s)) => assert_tuned(s, 45, true),
        other => panic!("{other:?}"),
    }
    let c = rest::Client::connect(&format!("http://{addr}")).unwrap();
    match c.stream() {
        Some(HttpStream::Tcp(s)) => assert_default(s),
        other => panic!("{other:?}"),
    }
}

/// Whether the socket `fd` is in non-blocking mode now.
fn nonblocking(fd: i32) -> bool {
    // SAFETY: F_GETFL on a descriptor the test keeps open (the client lives in another
    // thread until it has received the last message, after the last call here).
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    assert!(flags >= 0);
    flags & libc::O_NONBLOCK != 0
}

/// A server that sends what arrives on `rx` as text, then closes; the client connects
/// with `mode` and receives. Returns the client's socket fd (for flag checks while it
/// waits), a channel of what it received, and the sender for the server.
fn spin_pair(
    mode: RecvMode,
    read_timeout: Option<Duration>,
) -> (
    i32,
    mpsc::Receiver<Result<String, String>>,
    mpsc::Sender<String>,
) {
    let mut srv = ws::Server::bind("127.0.0.1:0").unwrap();
    let addr = srv.local_addr().unwrap();
    let (to_server, from_test) = mpsc::channel::<String>();
    thread::spawn(move || {
        let mut c = srv.accept().unwrap();
        c.handshake().unwrap();
        for text in from_test {
            c.send_text(&text).unwrap();
        }
        let _ = c.close(ws::CloseCode::NORMAL, "");
        while let Ok(Some(_)) = c.recv() {}
    });
    let mut c = ws::ClientBuilder::new()
        .recv_mode(mode)
        .read_timeout(read_timeout)
        .connect(&format!("ws://{addr}/"))
        .unwrap();
    let fd = c.as_raw_fd();
    let (tx, got) = mpsc::channel();
    thread::spawn(move || {
        loop {
            let r = match c.recv() {
                Ok(Some(Message::Text(t))) => Ok(t.to_owned()),
                Ok(Some(_)) => continue,
                Ok(None) => return,
                Err(e) => Err(e.to_string()),
            };
            let stop = r.is_err();
            if tx.send(r).is_err() || stop {
                return;
            }
        }
    });
    (fd, got, to_server)
}

#[test]
fn busy_poll_receives_every_message_and_never_sleeps_in_read() {
    let (fd, got, server) = spin_pair(RecvMode::Spin, None);
    let big = "x".repeat(300 << 10);
    for i in 0..200 {
        let text = if i % 50 == 7 {
            big.clone()
        } else {
            format!("tick {i}")
        };
        server.send(text.clone()).unwrap();
        assert_eq!(got.recv().unwrap(), Ok(text));
    }
    // Waiting with nothing to read: the socket stays non-blocking (spinning), never a
    // read(2) that sleeps, for as long as we look.
    let until = Instant::now() + Duration::from_millis(200);
    while Instant::now() < until {
        assert!(nonblocking(fd));
        thread::sleep(Duration::from_millis(10));
    }
    server.send("last".into()).unwrap();
    assert_eq!(got.recv().unwrap(), Ok("last".into()));
}

#[test]
fn sleep_mode_and_spent_spin_budget_sleep_in_the_kernel() {
    for mode in [
        RecvMode::Sleep,
        RecvMode::SpinFor(Duration::from_millis(20)),
    ] {
        let (fd, got, server) = spin_pair(mode, None);
        server.send("first".into()).unwrap();
        assert_eq!(got.recv().unwrap(), Ok("first".into()));
        // Waiting for the next one: within a few seconds the socket is in blocking mode
        // (a read sleeping in the kernel), the budget spent.
        let until = Instant::now() + Duration::from_secs(10);
        while nonblocking(fd) {
            assert!(Instant::now() < until, "{mode:?}: still non-blocking");
            thread::sleep(Duration::from_millis(5));
        }
        server.send("second".into()).unwrap();
        assert_eq!(got.recv().unwrap(), Ok("second".into()), "{mode:?}");
        // A fresh budget for the next wait: it receives right away again.
        server.send("third".into()).unwrap();
        assert_eq!(got.recv().unwrap(), Ok("third".into()), "{mode:?}");
    }
}

#[test]
fn busy_poll_honours_the_read_timeout() {
    for mode in [RecvMode::Spin, RecvMode::SpinFor(Duration::from_millis(5))] {
        let (_fd, got, server) = spin_pair(mode, Some(Duration::from_millis(100)));
        server.send("a".into()).unwrap();
        assert_eq!(got.recv().unwrap(), Ok("a".into()));
        let e = got
            .recv_timeout(Duration::from_secs(10))
            .unwrap()
            .unwrap_err();
        assert_eq!(e, ws::Error::ReadTimeout.to_string(), "{mode:?}");
    }
}
