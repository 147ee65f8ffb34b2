//! The futures-io driver on nexus-async-rt (its own mio reactor, its timer wheel, a
//! single-threaded executor): client and server over its TCP streams, sizes, pings,
//! keepalive and read timeout on its timers, the close handshake, and the
//! cancellation safety of `recv` in a race against its timer; split halves in two
//! tasks over its one-waker-per-socket stream; the timer adapter keeps its wake-up
//! when the wheel fires early.
#![cfg(all(feature = "futures-io", unix))]

mod nexus_util;
mod ws_util;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener as StdListener};
use std::time::Duration;

use nexus_util::{NexusTcp, NexusTimer, block_on, connect, race};
use tickwire::codec::ws::handshake;
use tickwire::futures_io::ws::{Client, ClientBuilder, CloseCode, Error, Message, ServerBuilder};
use ws_util::{pattern, text_of};

const T: Duration = Duration::from_secs(20);
const CLOSE: Duration = Duration::from_millis(300);

/// Let the timer wheel fire what the test armed (see `client_builder`).
async fn settle() {
    nexus_util::sleep(CLOSE * 2).await;
}

// No read or write timeouts here, and a short close timeout: nexus-async-rt's timer
// wheel keeps an entry (and its waker) until its deadline even when the sleep is
// dropped, and the runtime insists that no waker outlives it; each test ends with
// `settle`, a sleep past the last deadline it armed.
fn client_builder() -> ClientBuilder<NexusTimer> {
    Client::builder()
        .close_timeout(CLOSE)
        .max_message_size(2 << 20)
        .write_buffer_size(2 << 20)
        .timer::<NexusTimer>()
}

fn server_builder() -> ServerBuilder<NexusTimer> {
    ServerBuilder::new()
        .close_timeout(CLOSE)
        .handshake_timeout(CLOSE)
        .max_message_size(2 << 20)
        .write_buffer_size(2 << 20)
        .timer::<NexusTimer>()
}

/// An echo server task on the runtime: one connection, until the close handshake.
fn spawn_echo(builder: ServerBuilder<NexusTimer>) -> (SocketAddr, nexus_async_rt::JoinHandle<()>) {
    let mut listener = nexus_async_rt::TcpListener::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = listener.local_addr().unwrap();
    let h = nexus_async_rt::spawn_boxed(async move {
        let (tcp, _) = listener.accept().await.unwrap();
        tcp.set_nodelay(true).unwrap();
        let mut c = builder.accept_stream(NexusTcp(tcp)).unwrap();
        while let Some(()) = c
            .recv_with(|msg, tx| match msg {
                Message::Text(t) => tx.send_text(t),
                Message::Binary(b) => tx.send_binary(b),
                _ => Ok(()),
            })
            .await
            .unwrap()
        {}
    });
    (addr, h)
}

#[test]
fn client_and_server_on_nexus_round_trip_sizes_pings_and_close() {
    block_on(async {
        let (addr, h) = spawn_echo(server_builder());
        let mut c = client_builder()
            .connect_with(connect(addr), &format!("ws://{addr}/nexus"))
            .await
            .unwrap();
        for n in [0, 1, 125, 126, 65_535, 65_536, 300_000, 1 << 20] {
            let t = text_of(n);
            c.send_text(&t).await.unwrap();
            assert_eq!(c.recv().await.unwrap(), Some(Message::Text(&t)), "text {n}");
            let b = pattern(n);
            c.send_binary(&b).await.unwrap();
            assert_eq!(
                c.recv().await.unwrap(),
                Some(Message::Binary(&b)),
                "binary {n}"
            );
        }
        c.send_ping(b"np").await.unwrap();
        assert_eq!(c.recv().await.unwrap(), Some(Message::Pong(b"np")));
        c.close(CloseCode::NORMAL, "done").await.unwrap();
        assert!(matches!(c.recv().await.unwrap(), Some(Message::Close(_))));
        assert_eq!(c.recv().await.unwrap(), None);
        h.await;
        settle().await;
    });
}

#[test]
fn keepalive_and_read_timeout_run_on_nexus_timers() {
    block_on(async {
        // A server that never sends data: the client's keepalive pings it every 30 ms
        // (the pongs come back through recv) well within the 500 ms read timeout.
        let mut listener =
            nexus_async_rt::TcpListener::bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = listener.local_addr().unwrap();
        let h = nexus_async_rt::spawn_boxed(async move {
            let (tcp, _) = listener.accept().await.unwrap();
            let mut s = server_builder().accept_stream(NexusTcp(tcp)).unwrap();
            let mut pings = 0;
            while let Some(m) = s.recv().await.unwrap() {
                pings += usize::from(matches!(m, Message::Ping(_)));
            }
            pings
        });
        let mut c = client_builder()
            .keepalive(Some(Duration::from_millis(30)))
            .dead_peer_timeout(Some(Duration::from_millis(500)))
            .connect_with(connect(addr), &format!("ws://{addr}/"))
            .await
            .unwrap();
        let mut pongs = 0;
        while pongs < 3 {
            match c.recv().await {
                Ok(Some(Message::Pong(_))) => pongs += 1,
                other => panic!("{other:?}"),
            }
        }
        c.close(CloseCode::NORMAL, "").await.unwrap();
        while c.recv().await.unwrap().is_some() {}
        assert!(h.await >= 3);
        settle().await;
    });
}

#[test]
fn read_timeout_on_nexus_leaves_the_connection_usable() {
    block_on(async {
        let (addr, h) = spawn_echo(server_builder());
        let mut c = client_builder()
            .read_timeout(Some(Duration::from_millis(30)))
            .connect_with(connect(addr), &format!("ws://{addr}/"))
            .await
            .unwrap();
        assert!(matches!(c.recv().await, Err(Error::ReadTimeout)));
        c.send_text("still here").await.unwrap();
        assert_eq!(c.recv().await.unwrap(), Some(Message::Text("still here")));
        c.close(CloseCode::NORMAL, "").await.unwrap();
        while c.recv().await.unwrap().is_some() {}
        h.await;
        settle().await;
    });
}

/// The tokio suite's cancellation test on nexus-async-rt: two binary messages
/// trickled in pieces, a pause after each piece until the runtime's timer has won a
/// race against `recv`; every dropped `recv` loses nothing.
#[test]
fn recv_is_cancellation_safe_in_a_race_with_the_timer() {
    let payload: Vec<u8> = pattern(30_000);
    let frame = {
        let mut f = vec![0x82, 126, (30_000u16 >> 8) as u8, 30_000u16 as u8];
        f.extend_from_slice(&payload);
        f
    };
    let pieces = [0..1, 1..4, 4..10_004, 10_004..20_004, 20_004..frame.len()];
    let (tick, ticked) = std::sync::mpsc::channel::<()>();
    let listener = StdListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let server = std::thread::spawn({
        let frame = frame.clone();
        move || {
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
    block_on(async move {
        let mut c = client_builder()
            .connect_with(connect(addr), &format!("ws://{addr}/"))
            .await
            .unwrap();
        let (mut ticks, mut got) = (0, 0);
        loop {
            let r = race(
                async {
                    match c.recv().await.unwrap() {
                        Some(Message::Binary(b)) => Some((false, b.to_vec())),
                        Some(Message::Close(_)) => Some((true, Vec::new())),
                        other => panic!("{other:?}"),
                    }
                },
                nexus_util::sleep(Duration::from_millis(40)),
            )
            .await;
            match r {
                Ok(Some((false, b))) => {
                    assert_eq!(b, payload, "message {got} intact");
                    got += 1;
                }
                Ok(Some((true, _))) => break,
                Ok(None) => panic!("ended early"),
                Err(()) => {
                    ticks += 1;
                    let _ = tick.send(());
                }
            }
        }
        assert_eq!(got, 2);
        assert!(ticks >= 10, "only {ticks} timer wins");
        assert!(c.recv().await.unwrap().is_none());
        drop(c);
        settle().await;
    });
    server.join().unwrap();
}

/// Run `f` on a thread of its own and fail (instead of hanging) when it takes longer
/// than `limit` (a test that would wait for ever on a lost wake-up).
fn within<R: Send + 'static>(limit: Duration, f: impl FnOnce() -> R + Send + 'static) -> R {
    let (done, result) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(f());
    });
    result
        .recv_timeout(limit)
        .unwrap_or_else(|e| panic!("not done within {limit:?} ({e})"))
}

/// Split halves in two tasks over nexus-async-rt's `TcpStream`, which keeps one waker
/// per socket (that of the last task that polled it, to read or to write): the read
/// half waits in `recv` in its task, then the write half sends from the root task, so
/// the socket remembers the writer's task; the peer's answer (which comes only after
/// that write) must still wake the reader. Before the halves polled the stream with a
/// waker for both, the reader slept for ever.
#[test]
fn split_reader_is_woken_when_the_writer_polled_the_socket_last() {
    within(T, || {
        block_on(async {
            let mut listener =
                nexus_async_rt::TcpListener::bind("127.0.0.1:0".parse().unwrap()).unwrap();
            let addr = listener.local_addr().unwrap();
            let server = nexus_async_rt::spawn_boxed(async move {
                let (tcp, _) = listener.accept().await.unwrap();
                tcp.set_nodelay(true).unwrap();
                let mut s = server_builder().accept_stream(NexusTcp(tcp)).unwrap();
                assert_eq!(s.recv().await.unwrap(), Some(Message::Text("go")));
                s.send_text("reply").await.unwrap();
                while s.recv().await.unwrap().is_some() {}
            });
            let c = client_builder()
                .connect_with(connect(addr), &format!("ws://{addr}/split"))
                .await
                .unwrap();
            let (mut rx, mut tx) = c.split();
            let polled = std::rc::Rc::new(std::cell::Cell::new(false));
            let reader = nexus_async_rt::spawn_boxed({
                let polled = polled.clone();
                async move {
                    // Set in the reader's first poll, which then waits in `recv` (the
                    // peer sends nothing before "go"): one thread, so once the root
                    // sees it, the reader is parked on the socket.
                    polled.set(true);
                    let got = rx.recv().await.unwrap().map(|m| format!("{m:?}"));
                    (got, rx)
                }
            });
            while !polled.get() {
                nexus_async_rt::yield_now().await;
            }
            tx.send_text("go").await.unwrap();
            let (got, mut rx) = reader.await;
            assert_eq!(got.as_deref(), Some(r#"Text("reply")"#));
            tx.close(CloseCode::NORMAL, "").await.unwrap();
            assert!(matches!(rx.recv().await.unwrap(), Some(Message::Close(_))));
            assert!(rx.recv().await.unwrap().is_none());
            server.await;
            drop((rx, tx));
            settle().await;
        })
    });
}

/// Wakes recorded by a waker of the test's own (the timer wheel holds it, nothing else).
#[derive(Default)]
struct Woken(std::sync::atomic::AtomicBool);

impl std::task::Wake for Woken {
    fn wake(self: std::sync::Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &std::sync::Arc<Self>) {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

/// The timer the connections wait on keeps the `Timer` contract on nexus-async-rt:
/// every `Pending` leaves a wake-up armed, and the wake-up that comes is answered
/// `Ready` once the deadline passed. nexus-async-rt 0.7's wheel fires an entry when
/// the clock reaches the deadline's 1 ms tick, up to a tick before the deadline, and
/// its `Sleep` polled then answers `Pending` and schedules nothing (see
/// [`NexusTimer`]): the tests above slept until another timer of the runtime woke
/// them (the client's 10 s handshake timeout) or for ever. Here the runtime's loop is
/// kept turning (the test yields) so that it fires its timers within microseconds of
/// each tick: a wheel firing early is caught in nearly every round (the plain `Sleep`
/// as the timer fails in the first or second round of 20).
#[test]
fn nexus_timer_never_answers_pending_without_a_wake_up_armed() {
    block_on(async {
        for round in 0..20 {
            let deadline = std::time::Instant::now() + Duration::from_millis(3);
            wait_out(deadline, &format!("round {round}")).await;
        }
        settle().await;
    });
}

/// Wait for a [`NexusTimer`] armed for `deadline` as a connection's task does: poll it
/// (`Pending`), then poll it again at each wake-up while the runtime's loop turns
/// (the test yields, so the runtime fires its due timers within microseconds of each
/// tick). Returns the wake-ups it took. Fails (`what` names the wait) if it answers
/// `Ready` before the deadline, or `Pending` with no wake-up armed (none comes within
/// [`T`] past the deadline).
async fn wait_out(deadline: std::time::Instant, what: &str) -> usize {
    use std::sync::Arc;
    use std::sync::atomic::Ordering;
    use std::task::{Context, Waker};
    use std::time::Instant;
    use tickwire::futures_io::Timer;

    let mut timer = NexusTimer::at(deadline);
    let woken = Arc::new(Woken::default());
    let waker = Waker::from(woken.clone());
    let mut cx = Context::from_waker(&waker);
    assert!(
        timer.poll_expired(&mut cx).is_pending(),
        "{what}: ready at once"
    );
    let lost = deadline + T;
    let mut wake_ups = 0;
    loop {
        nexus_async_rt::yield_now().await;
        if woken.0.swap(false, Ordering::SeqCst) {
            wake_ups += 1;
            if timer.poll_expired(&mut cx).is_ready() {
                assert!(Instant::now() >= deadline, "{what}: ready early");
                return wake_ups;
            }
        }
        assert!(
            Instant::now() < lost,
            "{what}: the timer said Pending with no wake-up armed (after {wake_ups} wake-ups)"
        );
    }
}

/// A wait longer than [`nexus_util::HORIZON`] keeps the contract too: the wheel's
/// entry stands for at most the horizon (nexus-async-rt cannot cancel an entry, so a
/// timer dropped early leaves the wheel within it), the wake-up at each horizon
/// re-arms the next entry, and `Ready` comes only once the deadline passed. Fails if
/// the adapter schedules the whole wait at once (one wake-up) or answers at a horizon.
#[test]
fn nexus_timer_rearms_at_each_horizon_until_the_deadline() {
    block_on(async {
        let wait = nexus_util::HORIZON * 2 + Duration::from_millis(7);
        let wake_ups = wait_out(std::time::Instant::now() + wait, "a wait of 2 horizons").await;
        // One wake-up per horizon, then the deadline's.
        assert!(
            wake_ups >= 3,
            "{wake_ups} wake-ups: the entry was not bounded by the horizon"
        );
        settle().await;
    });
}
