//! Server resilience on 127.0.0.1: a slow-loris peer is cut off by the handshake timeout
//! and its connection freed while others are served; a peer that never reads makes the
//! server stop reading from it (bounded buffers, backpressure all the way back to the
//! peer's socket) and loses nothing once it reads again; 1,000 concurrent connections
//! echo through one evented `ws::Server` poll loop with every message accounted for.

use std::collections::HashMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream as StdStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use mio::{Events, Interest, Poll, Token};
use tickwire::ws::{Client, CloseCode, Error, Message, Server, ServerBuilder, ServerConnection};

const T: Duration = Duration::from_secs(60);
const LISTENER: Token = Token(usize::MAX);

const REQUEST: &str = "GET /slow HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\n\
Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
Sec-WebSocket-Version: 13\r\n\r\n";

/// What an evented echo loop does with one connection's messages.
struct Echo {
    conn: ServerConnection,
    /// A message whose echo met a full write buffer: resend it before reading more.
    pending: Option<Vec<u8>>,
    received: usize,
}

/// Counters of an evented echo server run.
#[derive(Debug, Default)]
struct Stats {
    accepted: usize,
    handshake_timeouts: usize,
    closed: usize,
    received: usize,
    backpressure: usize,
    /// Passes over a connection skipped because its echo was still pending.
    reads_paused: usize,
}

/// One thread, one poll: accept, drive handshakes, echo binary/text messages (as binary),
/// enforce handshake timeouts via `timeout_at`/`handle_timeout`, and pause reading from a
/// connection while its echo does not fit (the backpressure policy the API enables).
/// Runs until `stop(&stats)` says so or `T` passes.
fn echo_loop(mut server: Server, stop: impl Fn(&Stats) -> bool) -> Stats {
    let mut poll = Poll::new().unwrap();
    poll.registry()
        .register(&mut server, LISTENER, Interest::READABLE)
        .unwrap();
    let mut events = Events::with_capacity(1024);
    let mut conns: HashMap<usize, Echo> = HashMap::new();
    let mut next_token = 0;
    let mut stats = Stats::default();
    let mut scratch = Vec::new();
    let deadline = Instant::now() + T;
    while !stop(&stats) {
        assert!(Instant::now() < deadline, "echo loop stalled: {stats:?}");
        let wake = conns
            .values()
            .filter_map(|e| e.conn.timeout_at())
            .min()
            .map(|t| t.saturating_duration_since(Instant::now()))
            .unwrap_or(Duration::from_millis(100))
            .min(Duration::from_millis(100));
        poll.poll(&mut events, Some(wake)).unwrap();
        while let Some(mut conn) = server.try_accept().unwrap() {
            poll.registry()
                .register(
                    &mut conn,
                    Token(next_token),
                    Interest::READABLE | Interest::WRITABLE,
                )
                .unwrap();
            conns.insert(
                next_token,
                Echo {
                    conn,
                    pending: None,
                    received: 0,
                },
            );
            next_token += 1;
            stats.accepted += 1;
        }
        let now = Instant::now();
        let mut gone = Vec::new();
        for (&token, e) in conns.iter_mut() {
            if let Err(err) = e.conn.handle_timeout(now) {
                assert!(matches!(err, Error::HandshakeTimeout { .. }), "{err}");
                stats.handshake_timeouts += 1;
                gone.push(token);
                continue;
            }
            if !serve_one(e, &mut scratch, &mut stats) {
                gone.push(token);
            }
        }
        for token in gone {
            // Dropping the connection frees its buffers and closes the socket.
            let mut e = conns.remove(&token).unwrap();
            poll.registry().deregister(&mut e.conn).unwrap();
        }
    }
    stats
}

/// Drive one connection; `false` when it is finished.
fn serve_one(e: &mut Echo, scratch: &mut Vec<u8>, stats: &mut Stats) -> bool {
    if let Some(p) = e.pending.take() {
        e.conn.flush().unwrap();
        match e.conn.send_binary(&p) {
            Ok(()) => {}
            Err(Error::Backpressure) => {
                stats.reads_paused += 1;
                e.pending = Some(p);
                return true;
            }
            Err(err) => panic!("{err}"),
        }
    }
    loop {
        match e.conn.try_recv() {
            Ok(Some(Message::Binary(b))) => {
                scratch.clear();
                scratch.extend_from_slice(b);
            }
            Ok(Some(Message::Text(t))) => {
                scratch.clear();
                scratch.extend_from_slice(t.as_bytes());
            }
            Ok(Some(_)) => continue,
            Ok(None) => break,
            Err(Error::ConnectionLost) => {
                stats.closed += 1;
                return false;
            }
            Err(err) => panic!("{err}"),
        }
        e.received += 1;
        stats.received += 1;
        match e.conn.send_binary(scratch) {
            Ok(()) => {}
            Err(Error::Backpressure) => {
                // Stop reading from this peer until its echo fits.
                stats.backpressure += 1;
                e.pending = Some(scratch.clone());
                return true;
            }
            Err(err) => panic!("{err}"),
        }
    }
    if e.conn.is_closed() {
        stats.closed += 1;
        return false;
    }
    true
}

fn small_buffers(b: ServerBuilder) -> ServerBuilder {
    b.read_buffer_size(16 * 1024).write_buffer_size(16 * 1024)
}

/// A peer sends the opening request one byte per 50 ms; the server's 500 ms handshake
/// timeout ends it, the connection is dropped (the peer sees its socket closed), and a
/// well-behaved client is served by the same loop meanwhile.
#[test]
fn slow_loris_handshake_times_out_and_is_freed() {
    let server = Server::builder()
        .handshake_timeout(Duration::from_millis(500))
        .bind("127.0.0.1:0")
        .unwrap();
    let addr = server.local_addr().unwrap();
    let h = thread::spawn(move || {
        echo_loop(server, |s| {
            s.handshake_timeouts >= 1 && s.closed >= 1 && s.received >= 1
        })
    });

    let mut slow = StdStream::connect(addr).unwrap();
    slow.set_read_timeout(Some(Duration::from_millis(10)))
        .unwrap();
    let start = Instant::now();
    let mut cut_off = None;
    let mut buf = [0u8; 64];
    for &byte in REQUEST.as_bytes() {
        if slow.write_all(&[byte]).is_err() {
            cut_off = Some(start.elapsed());
            break;
        }
        match slow.read(&mut buf) {
            Ok(0) => {
                cut_off = Some(start.elapsed());
                break;
            }
            Ok(n) => panic!("server answered a partial request: {:?}", &buf[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => {
                cut_off = Some(start.elapsed());
                break;
            }
        }
        thread::sleep(Duration::from_millis(40));
    }
    let cut_off = cut_off.expect("the slow peer finished its request: no timeout");
    assert!(
        cut_off >= Duration::from_millis(450) && cut_off < Duration::from_secs(5),
        "cut off after {cut_off:?}"
    );

    // The same loop still serves a normal client.
    let mut c = Client::builder()
        .read_timeout(Some(T))
        .connect(&format!("ws://{addr}/ok"))
        .unwrap();
    c.send_binary(b"still here").unwrap();
    assert_eq!(c.recv().unwrap(), Some(Message::Binary(b"still here")));
    c.close(CloseCode::NORMAL, "").unwrap();
    assert!(matches!(c.recv().unwrap(), Some(Message::Close(_))));
    let stats = h.join().unwrap();
    assert_eq!(stats.handshake_timeouts, 1, "{stats:?}");
    assert_eq!(stats.accepted, 2, "{stats:?}");
}

/// A peer that sends without ever reading. The server's write buffer is bounded, so its
/// echo meets `Backpressure`; the loop then stops reading from that peer, the kernel
/// buffers fill and the peer's own sends stall: what is held in flight is bounded by
/// socket and connection buffers, not by what the peer wants to send. When the peer
/// starts reading, every message comes back, in order.
#[test]
fn peer_that_never_reads_is_throttled_not_buffered() {
    const SIZE: usize = 8 * 1024;
    const WANTED: usize = 32 * 1024; // 256 MiB if nothing pushed back
    let server = small_buffers(Server::builder())
        .bind("127.0.0.1:0")
        .unwrap();
    let addr = server.local_addr().unwrap();
    // Set once the server has met backpressure and paused reading from us (an event
    // the client waits for: on a loaded machine the server may not have run at all by
    // the time the client's sends stall on the kernel buffers).
    let paused = Arc::new(AtomicBool::new(false));
    let server_paused = Arc::clone(&paused);
    let h = thread::spawn(move || {
        echo_loop(server, |s| {
            if s.backpressure > 0 && s.reads_paused > 0 {
                server_paused.store(true, Ordering::SeqCst);
            }
            s.closed >= 1
        })
    });

    let mut c = Client::builder()
        .read_timeout(Some(T))
        .write_buffer_size(256 * 1024)
        .read_buffer_size(256 * 1024)
        .connect(&format!("ws://{addr}/hog"))
        .unwrap();
    c.set_blocking(false).unwrap();
    let mut poll = Poll::new().unwrap();
    poll.registry()
        .register(&mut c, Token(1), Interest::READABLE | Interest::WRITABLE)
        .unwrap();
    let mut events = Events::with_capacity(8);
    let message = |i: usize| {
        let mut m = vec![i as u8; SIZE];
        m[..8].copy_from_slice(&(i as u64).to_le_bytes());
        m
    };

    // Phase 1: send, never read, until the server has paused reading from us and our
    // sends have made no progress for 500 ms since.
    let mut sent = 0;
    let mut stalled_since: Option<Instant> = None;
    let deadline = Instant::now() + T;
    while sent < WANTED {
        assert!(Instant::now() < deadline, "phase 1 did not stall or finish");
        match c.send_binary(&message(sent)) {
            Ok(()) => {
                sent += 1;
                stalled_since = None;
            }
            Err(Error::Backpressure) => {
                if paused.load(Ordering::SeqCst) {
                    let since = *stalled_since.get_or_insert_with(Instant::now);
                    if since.elapsed() > Duration::from_millis(500) {
                        break;
                    }
                }
                c.flush().unwrap();
                poll.poll(&mut events, Some(Duration::from_millis(50)))
                    .unwrap();
            }
            Err(e) => panic!("{e}"),
        }
    }
    eprintln!("never-reading peer stalled after {sent} x 8 KiB");
    assert!(
        sent < WANTED / 4,
        "the peer sent {sent} x 8 KiB without reading: the server kept buffering"
    );

    // Phase 2: read everything back, sending the rest of a smaller total as we go.
    let total = sent + 64;
    let mut got = 0;
    while got < total {
        assert!(
            Instant::now() < deadline,
            "phase 2 stalled at {got}/{total}"
        );
        let mut progress = false;
        if sent < total {
            match c.send_binary(&message(sent)) {
                Ok(()) => {
                    sent += 1;
                    progress = true;
                }
                Err(Error::Backpressure) => {}
                Err(e) => panic!("{e}"),
            }
        }
        c.flush().unwrap();
        while let Some(m) = c.try_recv().unwrap() {
            match m {
                Message::Binary(b) => {
                    assert_eq!(b.len(), SIZE);
                    assert_eq!(&b[..8], &(got as u64).to_le_bytes(), "out of order");
                    assert!(b[8..].iter().all(|&x| x == got as u8), "corrupted");
                    got += 1;
                    progress = true;
                }
                other => panic!("{other:?}"),
            }
        }
        if !progress {
            poll.poll(&mut events, Some(Duration::from_millis(50)))
                .unwrap();
        }
    }
    c.close(CloseCode::NORMAL, "").unwrap();
    while !c.is_closed() {
        assert!(Instant::now() < deadline, "close not answered");
        c.flush().unwrap();
        if c.try_recv().unwrap().is_none() {
            poll.poll(&mut events, Some(Duration::from_millis(50)))
                .unwrap();
        }
    }
    let stats = h.join().unwrap();
    assert_eq!(stats.received, total, "{stats:?}");
    assert!(stats.backpressure > 0, "never met backpressure: {stats:?}");
    assert!(stats.reads_paused > 0, "never paused reading: {stats:?}");
}

/// Make sure this process may open `need` descriptors: raise the soft limit up to the
/// hard one if needed. `false` if it cannot be done.
fn ensure_fd_limit(need: u64) -> bool {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `lim` is a valid, writable rlimit for getrlimit to fill.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return false;
    }
    if lim.rlim_cur >= need {
        return true;
    }
    if lim.rlim_max < need {
        return false;
    }
    lim.rlim_cur = need;
    // SAFETY: `lim` is a valid rlimit; setrlimit only reads it.
    unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) == 0 }
}

/// 1,000 clients connected at once, each sending 10 messages through one server poll
/// loop; every message is echoed to the client that sent it, in order.
#[test]
fn thousand_concurrent_connections_through_one_poll_loop() {
    const CLIENTS: usize = 1000;
    const MESSAGES: usize = 10;
    // Both ends live in this process: 2 descriptors per connection, plus polls and slack.
    if !ensure_fd_limit(2 * CLIENTS as u64 + 256) {
        let msg = "RLIMIT_NOFILE cannot be raised to 2256 (hard limit too low)";
        assert!(
            std::env::var_os("TICKWIRE_REQUIRE_PEERS").is_none(),
            "{msg}"
        );
        eprintln!("SKIPPED thousand_concurrent_connections_through_one_poll_loop: {msg}");
        return;
    }
    let server = small_buffers(Server::builder())
        .handshake_timeout(T)
        .bind("127.0.0.1:0")
        .unwrap();
    let addr = server.local_addr().unwrap();
    let h = thread::spawn(move || echo_loop(server, |s| s.closed >= CLIENTS));

    let clients = connect_all(addr, CLIENTS);
    let stats = exchange(clients, MESSAGES);
    let server_stats = h.join().unwrap();
    assert_eq!(stats, CLIENTS * MESSAGES);
    assert_eq!(server_stats.accepted, CLIENTS, "{server_stats:?}");
    assert_eq!(
        server_stats.received,
        CLIENTS * MESSAGES,
        "{server_stats:?}"
    );
    assert_eq!(server_stats.closed, CLIENTS, "{server_stats:?}");
    assert_eq!(server_stats.handshake_timeouts, 0, "{server_stats:?}");
}

fn connect_all(addr: SocketAddr, n: usize) -> Vec<Client> {
    let builder = Client::builder()
        .read_buffer_size(16 * 1024)
        .write_buffer_size(16 * 1024)
        .read_timeout(Some(T));
    (0..n)
        .map(|i| {
            let mut c = builder.connect(&format!("ws://{addr}/c{i}")).unwrap();
            c.set_blocking(false).unwrap();
            c
        })
        .collect()
}

/// Every client sends `messages` messages, all clients at once, and checks its echoes;
/// then all close. Returns the number of echoes received.
fn exchange(mut clients: Vec<Client>, messages: usize) -> usize {
    let mut poll = Poll::new().unwrap();
    for (i, c) in clients.iter_mut().enumerate() {
        poll.registry()
            .register(c, Token(i), Interest::READABLE | Interest::WRITABLE)
            .unwrap();
    }
    let mut events = Events::with_capacity(1024);
    let mut sent = vec![0usize; clients.len()];
    let mut got = vec![0usize; clients.len()];
    let mut closing = vec![false; clients.len()];
    let total = clients.len() * messages;
    let mut echoes = 0;
    let deadline = Instant::now() + T;
    loop {
        assert!(
            Instant::now() < deadline,
            "stalled at {echoes}/{total} echoes"
        );
        let mut open = 0;
        for (i, c) in clients.iter_mut().enumerate() {
            if c.is_closed() {
                continue;
            }
            open += 1;
            while sent[i] < messages {
                match c.send_text(&format!("client {i} message {}", sent[i])) {
                    Ok(()) => sent[i] += 1,
                    Err(Error::Backpressure) => break,
                    Err(e) => panic!("{e}"),
                }
            }
            c.flush().unwrap();
            loop {
                match c.try_recv().unwrap() {
                    Some(Message::Binary(b)) => {
                        let want = format!("client {i} message {}", got[i]);
                        assert_eq!(b, want.as_bytes(), "client {i}");
                        got[i] += 1;
                        echoes += 1;
                    }
                    Some(Message::Close(_)) => {}
                    Some(other) => panic!("client {i}: {other:?}"),
                    None => break,
                }
            }
            if got[i] == messages && !closing[i] {
                c.close(CloseCode::NORMAL, "").unwrap();
                closing[i] = true;
            }
        }
        if open == 0 {
            return echoes;
        }
        poll.poll(&mut events, Some(Duration::from_millis(20)))
            .unwrap();
    }
}
