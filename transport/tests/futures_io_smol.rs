//! The futures-io driver on smol (async-io's reactor and timers): async client <->
//! async server over 127.0.0.1 with the tokio suite's key behaviours (sizes,
//! fragmentation, auto-pong, both close initiators, close, read and handshake
//! timeouts, protocol errors and limits, backpressure, keepalive, split halves, also
//! over a stream with one waker for both directions), and the cancellation safety of
//! `recv` inside a select against a timer.
#![cfg(all(feature = "futures-io", unix))]

mod net_events;
mod ws_util;

use std::future::Future;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener as StdListener, TcpStream as StdStream};
use std::time::Duration;

use smol::Task;
use smol::future::FutureExt as _;
use smol::net::TcpStream;
use tickwire::codec::ws::handshake;
use tickwire::futures_io::ws::{
    Client, ClientBuilder, CloseCode, CloseFrame, Error, Message, Server, ServerBuilder,
    ServerConnection,
};
use tickwire::ws::ProtocolError;
use ws_util::{pattern, raw_client, text_of};

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

/// A server on 127.0.0.1:0 that accepts one connection and hands it to `f` (after
/// its handshake).
fn serve<F, Fut>(builder: ServerBuilder, f: F) -> (SocketAddr, Task<()>)
where
    F: FnOnce(ServerConnection) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let mut server = builder.bind("127.0.0.1:0").unwrap();
    let addr = server.local_addr().unwrap();
    let h = smol::spawn(async move {
        let mut conn = server.accept().await.unwrap();
        conn.handshake().await.unwrap();
        f(conn).await
    });
    (addr, h)
}

fn url(addr: SocketAddr) -> String {
    format!("ws://{addr}/test")
}

/// Dial `addr` with smol's TCP stream and handshake with `cb`.
async fn connect(cb: &ClientBuilder, addr: SocketAddr) -> Client<TcpStream> {
    let tcp = TcpStream::connect(addr).await.unwrap();
    tcp.set_nodelay(true).unwrap();
    cb.connect_with(tcp, &url(addr)).await.unwrap()
}

/// Echo text and binary until the close handshake completes.
async fn echo(mut c: ServerConnection) {
    while let Some(()) = c
        .recv_with(|msg, tx| match msg {
            Message::Text(t) => tx.send_text(t),
            Message::Binary(b) => tx.send_binary(b),
            _ => Ok(()),
        })
        .await
        .unwrap()
    {}
}

const SIZES: [usize; 9] = [0, 1, 125, 126, 127, 65_535, 65_536, 300_000, 1 << 20];

#[test]
fn text_and_binary_of_many_sizes_round_trip() {
    smol::block_on(async {
        let sb = server_builder()
            .max_message_size(2 << 20)
            .write_buffer_size(2 << 20);
        let cb = client_builder()
            .max_message_size(2 << 20)
            .write_buffer_size(2 << 20);
        let (addr, h) = serve(sb, echo);
        let mut c = connect(&cb, addr).await;
        for n in SIZES {
            let text = text_of(n);
            c.send_text(&text).await.unwrap();
            match c.recv().await.unwrap() {
                Some(Message::Text(t)) => assert_eq!(t, text, "text of {n}"),
                other => panic!("expected text of {n}, got {other:?}"),
            }
            let bin = pattern(n);
            c.send_binary(&bin).await.unwrap();
            match c.recv().await.unwrap() {
                Some(Message::Binary(b)) => assert_eq!(b, &bin[..], "binary of {n}"),
                other => panic!("expected binary of {n}, got {other:?}"),
            }
        }
        c.close(CloseCode::NORMAL, "done").await.unwrap();
        assert!(matches!(c.recv().await.unwrap(), Some(Message::Close(_))));
        assert!(c.recv().await.unwrap().is_none());
        assert!(c.is_closed());
        h.await;
    });
}

#[test]
fn fragmented_messages_and_pings_both_ways() {
    smol::block_on(async {
        let (addr, h) = serve(server_builder().fragment_size(100), |mut s| async move {
            s.send_ping(b"hb").await.unwrap();
            echo(s).await
        });
        let mut c = connect(&client_builder().fragment_size(7), addr).await;
        // The server's ping, answered before it is returned.
        assert_eq!(c.recv().await.unwrap(), Some(Message::Ping(b"hb")));
        let text = text_of(1000);
        c.send_text(&text).await.unwrap();
        assert_eq!(c.recv().await.unwrap(), Some(Message::Text(&text[..])));
        c.send_ping(b"t1").await.unwrap();
        assert_eq!(c.recv().await.unwrap(), Some(Message::Pong(b"t1")));
        c.close(CloseCode::NORMAL, "").await.unwrap();
        while c.recv().await.unwrap().is_some() {}
        h.await;
    });
}

#[test]
fn client_initiated_close_echoes_the_code() {
    smol::block_on(async {
        let (addr, h) = serve(server_builder(), |mut s| async move {
            let bye = CloseFrame {
                code: CloseCode::NORMAL,
                reason: "client done",
            };
            assert_eq!(s.recv().await.unwrap(), Some(Message::Close(Some(bye))));
            assert!(s.recv().await.unwrap().is_none());
            assert!(s.is_closed());
            assert!(matches!(
                s.send_text("late").await,
                Err(Error::AlreadyClosed)
            ));
        });
        let mut c = connect(&client_builder(), addr).await;
        c.close(CloseCode::NORMAL, "client done").await.unwrap();
        match c.recv().await.unwrap() {
            Some(Message::Close(Some(f))) => assert_eq!(f.code, CloseCode::NORMAL),
            other => panic!("{other:?}"),
        }
        assert!(c.recv().await.unwrap().is_none());
        h.await;
    });
}

#[test]
fn server_initiated_close_discards_late_data() {
    smol::block_on(async {
        let (addr, h) = serve(server_builder(), |mut s| async move {
            s.close(CloseCode::GOING_AWAY, "maintenance").await.unwrap();
            match s.recv().await.unwrap() {
                Some(Message::Close(Some(f))) => assert_eq!(f.code, CloseCode::GOING_AWAY),
                other => panic!("{other:?}"),
            }
            assert!(s.recv().await.unwrap().is_none());
        });
        let mut c = connect(&client_builder(), addr).await;
        c.send_text("late 1").await.unwrap();
        c.send_text("late 2").await.unwrap();
        match c.recv().await.unwrap() {
            Some(Message::Close(Some(f))) => {
                assert_eq!(f.code, CloseCode::GOING_AWAY);
                assert_eq!(f.reason, "maintenance");
            }
            other => panic!("{other:?}"),
        }
        assert!(c.recv().await.unwrap().is_none());
        h.await;
    });
}

#[test]
fn close_timeout_when_the_peer_never_answers() {
    smol::block_on(async {
        // The server holds the connection unread until the client has timed out.
        let (done, wait) = async_channel();
        let (addr, h) = serve(server_builder(), |s| async move {
            let _ = wait.recv().await;
            drop(s);
        });
        let mut c = connect(
            &client_builder().close_timeout(Duration::from_millis(200)),
            addr,
        )
        .await;
        let started = std::time::Instant::now();
        c.close(CloseCode::NORMAL, "").await.unwrap();
        assert!(matches!(c.recv().await, Err(Error::CloseTimeout)));
        assert!(started.elapsed() >= Duration::from_millis(200));
        assert!(c.is_closed());
        done.send(()).await.unwrap();
        h.await;
    });
}

/// A one-shot channel between tasks (smol's executor has none of its own).
fn async_channel() -> (Sender, Receiver) {
    let (tx, rx) = std::sync::mpsc::channel();
    (Sender(tx), Receiver(std::sync::Mutex::new(rx)))
}

struct Sender(std::sync::mpsc::Sender<()>);
struct Receiver(std::sync::Mutex<std::sync::mpsc::Receiver<()>>);

impl Sender {
    async fn send(&self, v: ()) -> Result<(), std::sync::mpsc::SendError<()>> {
        self.0.send(v)
    }
}

impl Receiver {
    /// Poll the channel every millisecond on async-io's timer (no thread blocked).
    async fn recv(&self) -> Option<()> {
        loop {
            match self.0.lock().unwrap().try_recv() {
                Ok(v) => return Some(v),
                Err(std::sync::mpsc::TryRecvError::Disconnected) => return None,
                Err(std::sync::mpsc::TryRecvError::Empty) => {}
            }
            smol::Timer::after(Duration::from_millis(1)).await;
        }
    }
}

#[test]
fn read_timeout_leaves_the_connection_usable() {
    smol::block_on(async {
        let (timed_out, wait) = async_channel();
        let (addr, h) = serve(server_builder(), |mut s| async move {
            wait.recv().await.unwrap();
            s.send_text("late but fine").await.unwrap();
            while s.recv().await.unwrap().is_some() {}
        });
        let cb = client_builder().read_timeout(Some(Duration::from_millis(50)));
        let mut c = connect(&cb, addr).await;
        assert!(matches!(c.recv().await, Err(Error::ReadTimeout)));
        timed_out.send(()).await.unwrap();
        let mut got = None;
        for _ in 0..1000 {
            match c.recv().await {
                Err(Error::ReadTimeout) => continue,
                Ok(Some(Message::Text(t))) => {
                    got = Some(t.to_owned());
                    break;
                }
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(got.as_deref(), Some("late but fine"));
        c.close(CloseCode::NORMAL, "").await.unwrap();
        while c.recv().await.unwrap().is_some() {}
        h.await;
    });
}

#[test]
fn backpressure_waits_for_room_and_loses_nothing() {
    // A write buffer of 64 KiB, 200 messages of 40 KiB, a reader that starts once the
    // client's socket is full: sends await room, and everything arrives in order.
    const N: usize = 200;
    smol::block_on(async {
        let (addr, h) = serve(server_builder(), |mut s| async move {
            let tcp = s.get_ref().get_ref();
            let (ours, theirs) = (tcp.local_addr().unwrap(), tcp.peer_addr().unwrap());
            let deadline = std::time::Instant::now() + T;
            while net_events::tcp(theirs, Some(ours)).is_none_or(|t| t.tx == 0) {
                assert!(
                    std::time::Instant::now() < deadline,
                    "the client never backed up"
                );
                smol::Timer::after(Duration::from_millis(2)).await;
            }
            for i in 0..N {
                match s.recv().await.unwrap() {
                    Some(Message::Binary(b)) => {
                        assert_eq!(b.len(), 40 << 10);
                        assert!(b.iter().all(|&x| x == i as u8), "message {i}");
                    }
                    other => panic!("{other:?}"),
                }
            }
            while s.recv().await.unwrap().is_some() {}
        });
        let mut c = connect(&client_builder().write_buffer_size(64 << 10), addr).await;
        for i in 0..N {
            c.send_binary(&vec![i as u8; 40 << 10]).await.unwrap();
        }
        c.close(CloseCode::NORMAL, "").await.unwrap();
        while c.recv().await.unwrap().is_some() {}
        h.await;
    });
}

#[test]
fn a_message_larger_than_the_write_buffer_is_refused() {
    smol::block_on(async {
        let (addr, h) = serve(server_builder(), echo);
        let mut c = connect(&client_builder().write_buffer_size(1000), addr).await;
        assert!(matches!(
            c.send_binary(&[0u8; 2000]).await,
            Err(Error::MessageTooLarge { .. })
        ));
        c.send_text("still fine").await.unwrap();
        assert_eq!(c.recv().await.unwrap(), Some(Message::Text("still fine")));
        c.close(CloseCode::NORMAL, "").await.unwrap();
        while c.recv().await.unwrap().is_some() {}
        h.await;
    });
}

/// A raw WebSocket server on a std thread: accepts one connection, answers the
/// handshake through the codec, then runs `f` on the socket.
fn raw_server<F>(f: F) -> (SocketAddr, std::thread::JoinHandle<()>)
where
    F: FnOnce(StdStream) + Send + 'static,
{
    let listener = StdListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let h = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        s.set_read_timeout(Some(T)).unwrap();
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            assert_eq!(s.read(&mut byte).unwrap(), 1);
            head.push(byte[0]);
        }
        let req = handshake::parse_request(&head).unwrap().unwrap();
        let mut out = [0u8; 512];
        let n = handshake::write_accept(&req, None, &[], &mut out).unwrap();
        s.write_all(&out[..n]).unwrap();
        f(s)
    });
    (addr, h)
}

/// The tokio suite's cancellation test on smol: two binary messages trickled in
/// pieces (a split header, then the payload in thirds), a pause after each piece
/// until a timer has won the race against `recv`; every dropped `recv` loses nothing.
#[test]
fn recv_is_cancellation_safe_in_select() {
    let payload: Vec<u8> = pattern(30_000);
    let frame = {
        let mut f = vec![0x82, 126, (30_000u16 >> 8) as u8, 30_000u16 as u8];
        f.extend_from_slice(&payload);
        f
    };
    let pieces = [0..1, 1..4, 4..10_004, 10_004..20_004, 20_004..frame.len()];
    let (tick, ticked) = std::sync::mpsc::channel::<()>();
    let (addr, h) = raw_server({
        let frame = frame.clone();
        move |mut s| {
            for _ in 0..2 {
                for r in pieces.clone() {
                    s.write_all(&frame[r]).unwrap();
                    s.flush().unwrap();
                    while ticked.try_recv().is_ok() {}
                    ticked.recv_timeout(T).unwrap();
                }
            }
            s.write_all(&[0x88, 0x02, 0x03, 0xE8]).unwrap();
            let mut rest = Vec::new();
            let _ = s.read_to_end(&mut rest);
        }
    });
    smol::block_on(async {
        let mut c = connect(&client_builder(), addr).await;
        let (mut ticks, mut got) = (0, 0);
        loop {
            enum Won {
                Recv(Option<Vec<u8>>),
                Timer,
            }
            let recv = async {
                match c.recv().await.unwrap() {
                    Some(Message::Binary(b)) => Won::Recv(Some(b.to_vec())),
                    Some(Message::Close(Some(f))) => {
                        assert_eq!(f.code, CloseCode::NORMAL);
                        Won::Recv(None)
                    }
                    other => panic!("{other:?}"),
                }
            };
            let timer = async {
                smol::Timer::after(Duration::from_millis(40)).await;
                Won::Timer
            };
            match recv.or(timer).await {
                Won::Recv(Some(b)) => {
                    assert_eq!(b, payload, "message {got} intact");
                    got += 1;
                }
                Won::Recv(None) => break,
                Won::Timer => {
                    ticks += 1;
                    let _ = tick.send(());
                }
            }
        }
        assert_eq!(got, 2);
        assert!(ticks >= 10, "only {ticks} timer wins");
        assert!(c.recv().await.unwrap().is_none());
    });
    h.join().unwrap();
}

#[test]
fn protocol_error_gets_a_1002_close() {
    smol::block_on(async {
        let (addr, h) = serve(server_builder(), |mut s| async move {
            let err = s.recv().await.unwrap_err();
            assert!(
                matches!(err, Error::Protocol(ProtocolError::ReservedOpcode(3))),
                "{err:?}"
            );
            // A failed connection answers every later call with the cause.
            let again = s.recv().await;
            assert!(
                matches!(
                    again,
                    Err(Error::Protocol(ProtocolError::ReservedOpcode(3)))
                ),
                "{again:?}"
            );
        });
        let out =
            smol::unblock(move || raw_client(addr, &[0x83, 0x80, 1, 2, 3, 4, 0xde, 0xad], T)).await;
        assert_eq!(out, [0x88, 0x02, 0x03, 0xEA], "expected close 1002");
        h.await;
    });
}

#[test]
fn oversized_message_gets_a_1009_close() {
    smol::block_on(async {
        let sb = server_builder().read_buffer_size(0).max_message_size(1000);
        let (addr, h) = serve(sb, |mut s| async move {
            let err = s.recv().await.unwrap_err();
            assert!(
                matches!(
                    err,
                    Error::Protocol(ProtocolError::MessageTooLarge | ProtocolError::FrameTooLarge)
                ),
                "{err:?}"
            );
        });
        let mut frame = vec![0x82, 0xFE, 0x07, 0xD0, 0, 0, 0, 0];
        frame.extend_from_slice(&[0u8; 2000]);
        let out = smol::unblock(move || raw_client(addr, &frame, T)).await;
        assert_eq!(out, [0x88, 0x02, 0x03, 0xF1], "expected close 1009");
        h.await;
    });
}

#[test]
fn bad_request_is_refused_with_400() {
    smol::block_on(async {
        let mut server = server_builder().bind("127.0.0.1:0").unwrap();
        let addr = server.local_addr().unwrap();
        let raw = smol::unblock(move || {
            let mut s = StdStream::connect(addr).unwrap();
            s.set_read_timeout(Some(T)).unwrap();
            s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
            let mut out = String::new();
            let _ = s.read_to_string(&mut out);
            out
        });
        let mut conn = server.accept().await.unwrap();
        assert!(matches!(
            conn.handshake().await,
            Err(Error::Handshake { .. })
        ));
        drop(conn);
        assert!(raw.await.starts_with("HTTP/1.1 400"));
    });
}

#[test]
fn server_handshake_timeout_and_subprotocol() {
    smol::block_on(async {
        let mut server = server_builder()
            .handshake_timeout(Duration::from_millis(200))
            .protocol("v2")
            .bind("127.0.0.1:0")
            .unwrap();
        let addr = server.local_addr().unwrap();
        // A client that connects and says nothing.
        let silent = StdStream::connect(addr).unwrap();
        let mut conn = server.accept().await.unwrap();
        assert!(matches!(
            conn.handshake().await,
            Err(Error::HandshakeTimeout { .. })
        ));
        drop(silent);
        let client = smol::spawn(async move {
            let tcp = TcpStream::connect(addr).await.unwrap();
            let c = client_builder()
                .protocol("v1")
                .protocol("v2")
                .connect_with(tcp, &format!("ws://{addr}/feed?x=1"))
                .await
                .unwrap();
            assert_eq!(c.protocol(), Some("v2"));
            c
        });
        let mut s = server.accept().await.unwrap();
        s.handshake().await.unwrap();
        assert_eq!(s.path(), "/feed?x=1");
        assert_eq!(s.protocol(), Some("v2"));
        drop(client.await);
    });
}

#[test]
fn bad_urls_are_typed() {
    smol::block_on(async {
        let (addr, _h) = serve(server_builder(), echo);
        let tcp = TcpStream::connect(addr).await.unwrap();
        assert!(matches!(
            Client::connect_with(tcp, "http://127.0.0.1:1/").await,
            Err(Error::Url(_))
        ));
    });
}

/// The builders' `keepalive`: a quiet connection sends a ping while `recv` waits (on
/// async-io's timer), and the peer's pong comes back through `recv`.
#[test]
fn keepalive_pings_a_quiet_peer() {
    smol::block_on(async {
        let (addr, h) = serve(server_builder(), |mut s| async move {
            assert!(matches!(s.recv().await.unwrap(), Some(Message::Ping(_))));
            while s.recv().await.unwrap().is_some() {}
        });
        let cb = client_builder()
            .keepalive(Some(Duration::from_millis(50)))
            .dead_peer_timeout(Some(T));
        let mut c = connect(&cb, addr).await;
        assert!(matches!(c.recv().await.unwrap(), Some(Message::Pong(_))));
        c.close(CloseCode::NORMAL, "").await.unwrap();
        while c.recv().await.unwrap().is_some() {}
        h.await;
    });
}

/// Split halves in two tasks on smol's multi-threaded global executor: the writer
/// sends N messages while the reader receives the echoes and the answer to the
/// server's ping is written by the read half.
#[test]
fn split_halves_send_and_receive_in_two_tasks_with_pongs_routed() {
    const N: usize = 500;
    smol::block_on(async {
        let (addr, h) = serve(server_builder(), |mut s| async move {
            s.send_ping(b"hb").await.unwrap();
            let mut echoed = 0;
            let mut pong = false;
            let mut scratch = Vec::new();
            while let Some(msg) = s.recv().await.unwrap() {
                match msg {
                    Message::Pong(p) => {
                        assert_eq!(p, b"hb");
                        pong = true;
                    }
                    Message::Text(t) => {
                        scratch.clear();
                        scratch.extend_from_slice(t.as_bytes());
                        let t = std::str::from_utf8(&scratch).unwrap();
                        s.send_text(t).await.unwrap();
                        echoed += 1;
                    }
                    Message::Close(_) => {}
                    other => panic!("{other:?}"),
                }
            }
            assert!(pong, "the read half answered the ping");
            assert_eq!(echoed, N);
        });
        let c = connect(&client_builder(), addr).await;
        let (mut rx, mut tx) = c.split();
        let writer = smol::spawn(async move {
            for i in 0..N {
                tx.send_text(&format!("m{i}")).await.unwrap();
            }
            tx
        });
        assert_eq!(rx.recv().await.unwrap(), Some(Message::Ping(b"hb")));
        for i in 0..N {
            match rx.recv().await.unwrap() {
                Some(Message::Text(t)) => assert_eq!(t, format!("m{i}")),
                other => panic!("{other:?}"),
            }
        }
        let mut tx = writer.await;
        tx.close(CloseCode::NORMAL, "").await.unwrap();
        assert!(matches!(rx.recv().await.unwrap(), Some(Message::Close(_))));
        assert!(rx.recv().await.unwrap().is_none());
        h.await;
    });
}

/// smol's TCP stream behind a futures-io stream that keeps one waker for both
/// directions, as nexus-async-rt's `TcpStream` and many hand-written adapters do: each
/// poll leaves the waker of the task polling it (to read or to write) in place of the
/// one before, and the inner stream wakes only that one. Counts the reads and the
/// writes that went `Pending`.
#[derive(Debug)]
struct OneWaker {
    io: TcpStream,
    last: std::sync::Arc<LastWaker>,
    /// Wakes `last` (the inner stream is polled with it, both directions).
    inner: std::task::Waker,
    parked: std::sync::Arc<Parked>,
}

/// How many reads and writes of a [`OneWaker`] went `Pending`.
#[derive(Debug, Default)]
struct Parked {
    reads: std::sync::atomic::AtomicUsize,
    writes: std::sync::atomic::AtomicUsize,
}

impl Parked {
    fn reads(&self) -> usize {
        self.reads.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn writes(&self) -> usize {
        self.writes.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Until `count` (of reads or writes) passes `before` (async-io's timer, 1 ms).
    async fn wait_past(&self, count: fn(&Self) -> usize, before: usize) {
        while count(self) == before {
            smol::Timer::after(Duration::from_millis(1)).await;
        }
    }
}

/// The waker of the task that polled [`OneWaker`] last.
#[derive(Debug, Default)]
struct LastWaker(std::sync::Mutex<Option<std::task::Waker>>);

impl std::task::Wake for LastWaker {
    fn wake(self: std::sync::Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &std::sync::Arc<Self>) {
        if let Some(w) = &*self.0.lock().unwrap() {
            w.wake_by_ref();
        }
    }
}

impl OneWaker {
    fn new(io: TcpStream, parked: std::sync::Arc<Parked>) -> Self {
        let last = std::sync::Arc::new(LastWaker::default());
        OneWaker {
            io,
            inner: std::task::Waker::from(last.clone()),
            last,
            parked,
        }
    }

    /// A connection with no read timeout or keepalive (nothing but the stream wakes a
    /// half), over a [`OneWaker`], with room for `size`-byte messages, on a socket with
    /// a small send buffer (a message of a few hundred KB waits for room while the peer
    /// does not read).
    async fn connect(addr: SocketAddr, size: usize) -> (Client<OneWaker>, std::sync::Arc<Parked>) {
        let tcp = TcpStream::connect(addr).await.unwrap();
        tcp.set_nodelay(true).unwrap();
        socket2::SockRef::from(&tcp)
            .set_send_buffer_size(4096)
            .unwrap();
        let parked = std::sync::Arc::new(Parked::default());
        let c = Client::builder()
            .read_timeout(None)
            .keepalive(None)
            .max_message_size(size)
            .write_buffer_size(size + 64)
            .connect_with(OneWaker::new(tcp, parked.clone()), &url(addr))
            .await
            .unwrap();
        (c, parked)
    }

    /// Poll the inner stream for the task of `cx`, which replaces the one before.
    fn poll_inner<R>(
        &mut self,
        cx: &mut std::task::Context<'_>,
        op: impl FnOnce(
            std::pin::Pin<&mut TcpStream>,
            &mut std::task::Context<'_>,
        ) -> std::task::Poll<R>,
    ) -> std::task::Poll<R> {
        *self.last.0.lock().unwrap() = Some(cx.waker().clone());
        op(
            std::pin::Pin::new(&mut self.io),
            &mut std::task::Context::from_waker(&self.inner),
        )
    }
}

impl futures_io::AsyncRead for OneWaker {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut [u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        let r = self.poll_inner(cx, |io, cx| io.poll_read(cx, buf));
        if r.is_pending() {
            self.parked
                .reads
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
        r
    }
}

impl futures_io::AsyncWrite for OneWaker {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        let r = self.poll_inner(cx, |io, cx| io.poll_write(cx, buf));
        if r.is_pending() {
            self.parked
                .writes
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
        r
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        self.poll_inner(cx, |io, cx| io.poll_flush(cx))
    }

    fn poll_close(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        self.poll_inner(cx, |io, cx| io.poll_close(cx))
    }
}

/// Split halves over a stream with one waker for both directions ([`OneWaker`]): the
/// read half is parked in `recv` in its task (a read went `Pending`), then the write
/// half sends from the root task, so the stream keeps the root's waker only; the
/// peer's answer comes after that write and must still wake the reader. Before the
/// halves polled the stream with a waker for both, the reader slept until the bound
/// (no read timeout or keepalive here to wake it).
#[test]
fn split_reader_is_woken_over_a_stream_with_one_waker() {
    smol::block_on(async {
        let (addr, h) = serve(server_builder(), |mut s| async move {
            assert_eq!(s.recv().await.unwrap(), Some(Message::Text("go")));
            s.send_text("reply").await.unwrap();
            while s.recv().await.unwrap().is_some() {}
        });
        let (c, parked) = OneWaker::connect(addr, 1 << 16).await;
        let (mut rx, mut tx) = c.split();
        let before = parked.reads();
        let reader = smol::spawn(async move {
            let got = rx.recv().await.unwrap().map(|m| format!("{m:?}"));
            (got, rx)
        });
        // Only the reader reads until "go": a parked read is the reader waiting.
        parked.wait_past(Parked::reads, before).await;
        tx.send_text("go").await.unwrap();
        let (got, mut rx) = within_t(reader, "the reader was not woken").await;
        assert_eq!(got.as_deref(), Some(r#"Text("reply")"#));
        tx.close(CloseCode::NORMAL, "").await.unwrap();
        assert!(matches!(rx.recv().await.unwrap(), Some(Message::Close(_))));
        assert!(rx.recv().await.unwrap().is_none());
        h.await;
    });
}

/// `f`, or a panic saying `what` when it takes longer than `T` (a lost wake-up fails
/// instead of hanging).
async fn within_t<R>(f: impl Future<Output = R>, what: &str) -> R {
    f.or(async {
        smol::Timer::after(T).await;
        panic!("{what} within {T:?}")
    })
    .await
}

/// Both halves waiting at once over [`OneWaker`]: the write half's send waits for room
/// (a message far larger than the socket buffers; the peer does not read yet), then the
/// read half parks in `recv`; the room that comes when the peer reads must wake the
/// writer, and the peer's answer after the whole message the reader. On b00f68a the
/// reader was lost here too (its step ends by writing the writer's pending bytes with
/// the writer's waker, so the stream kept only the writer's): it failed at the bound.
#[test]
fn split_writer_is_woken_over_a_stream_with_one_waker() {
    const BIG: usize = 1 << 20;
    smol::block_on(async {
        let (drain, wait) = async_channel();
        let (addr, h) = serve(server_builder().max_message_size(BIG), |mut s| async move {
            wait.recv().await.unwrap();
            match s.recv().await.unwrap() {
                Some(Message::Binary(b)) => assert!(b.len() == BIG && b.iter().all(|&x| x == 7)),
                other => panic!("{other:?}"),
            }
            s.send_text("got it").await.unwrap();
            while s.recv().await.unwrap().is_some() {}
        });
        let (c, parked) = OneWaker::connect(addr, BIG).await;
        let (mut rx, mut tx) = c.split();
        let before = parked.writes();
        let writer = smol::spawn(async move {
            tx.send_binary(&vec![7; BIG]).await.unwrap();
            tx
        });
        // Only the writer writes: a parked write is the writer waiting for room.
        parked.wait_past(Parked::writes, before).await;
        let before = parked.reads();
        let reader = smol::spawn(async move {
            let got = rx.recv().await.unwrap().map(|m| format!("{m:?}"));
            (got, rx)
        });
        parked.wait_past(Parked::reads, before).await;
        drain.send(()).await.unwrap();
        let mut tx = within_t(writer, "the writer was not woken").await;
        let (got, mut rx) = within_t(reader, "the reader was not woken").await;
        assert_eq!(got.as_deref(), Some(r#"Text("got it")"#));
        tx.close(CloseCode::NORMAL, "").await.unwrap();
        assert!(matches!(rx.recv().await.unwrap(), Some(Message::Close(_))));
        assert!(rx.recv().await.unwrap().is_none());
        h.await;
    });
}

/// A select on the read half against a timer: the read half is cancellation-safe too.
#[test]
fn split_server_connection_and_select_on_the_read_half() {
    smol::block_on(async {
        // The client sends only once the server's timer has won a race against `recv`
        // (told over a channel, not guessed with a sleep), so the test exercises a
        // dropped receive future before the message arrives on any machine.
        let (won, timer_won) = smol::channel::bounded::<()>(1);
        let (addr, h) = serve(server_builder(), |s| async move {
            let (mut rx, mut tx) = s.split().await.unwrap();
            let mut timer_wins = 0;
            loop {
                let r = async { Some(rx.recv().await.unwrap().map(|m| format!("{m:?}"))) }
                    .or(async {
                        smol::Timer::after(Duration::from_millis(5)).await;
                        None
                    })
                    .await;
                match r {
                    None => {
                        timer_wins += 1;
                        let _ = won.try_send(());
                    }
                    Some(Some(m)) if m.contains("Text") => {
                        tx.send_text("ack").await.unwrap();
                    }
                    Some(Some(_)) => {}
                    Some(None) => break,
                }
            }
            assert!(timer_wins > 0);
        });
        let mut c = connect(&client_builder(), addr).await;
        timer_won.recv().await.unwrap();
        c.send_text("order").await.unwrap();
        assert_eq!(c.recv().await.unwrap(), Some(Message::Text("ack")));
        c.close(CloseCode::NORMAL, "").await.unwrap();
        while c.recv().await.unwrap().is_some() {}
        h.await;
    });
}
