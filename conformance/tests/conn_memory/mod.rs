//! 10,000 WebSocket connections on one server poll loop (issue 27): the resident memory
//! per idle connection, tickwire beside tokio-tungstenite, and a soak in which every
//! connection sends and receives. Shared by `conformance/tests/conn_memory.rs` (the
//! test) and perf's `conn_memory` binary (the benchmark row and the full soak).
//!
//! Each server runs in a child process of its own and the clients in another, so a
//! server's resident set (`/proc/self/statm`) is its own: its figure is the growth from
//! just before the first accept to the moment all connections are open and idle,
//! divided by their count. The processes are the same executable started again with
//! [`ROLE`] set; a test or a `main` calls [`child`] first.
//!
//! The clients are raw sockets: a valid upgrade request each (opened in batches, so
//! the listen backlog never overflows), the `101` read and checked; in the soak, each
//! round every connection sends masked text messages (every tenth one also a message
//! bigger than a server connection's initial buffers) and reads the echoes, checking
//! count, order and content. The tickwire server samples its resident set after each
//! round and counts the connections still open.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

/// The environment variable that makes the executable a child: `server-tickwire`,
/// `server-tokio-tungstenite` or `clients`.
pub const ROLE: &str = "TICKWIRE_CONN_MEMORY_ROLE";
const ARGS: &str = "TICKWIRE_CONN_MEMORY_ARGS";
/// Lines of the protocol between the processes start with this.
const TAG: &str = "CONNMEM";

/// The servers compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Peer {
    /// tickwire's `ws::Server`, evented: `try_accept`, `try_recv` and `flush` on a mio poll.
    Tickwire,
    /// The same with `initial_buffer_size(usize::MAX)`: full-size buffers (1 MiB read,
    /// 1 MiB write) from the start, as before buffers grew on demand.
    TickwireFullBuffers,
    /// tokio-tungstenite 0.30 `accept_async` on a current-thread runtime, a task each.
    TokioTungstenite,
    /// tickwire's tokio `ws::Server`, the same way: a current-thread runtime, a task
    /// each (`accept`, `recv`, `send_text`).
    TickwireTokio,
}

impl Peer {
    fn role(self) -> &'static str {
        match self {
            Peer::Tickwire => "server-tickwire",
            Peer::TickwireFullBuffers => "server-tickwire-full",
            Peer::TokioTungstenite => "server-tokio-tungstenite",
            Peer::TickwireTokio => "server-tickwire-tokio",
        }
    }

    /// The library's name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Peer::Tickwire => "tickwire",
            Peer::TickwireFullBuffers => "tickwire, full-size buffers from the start",
            Peer::TokioTungstenite => "tokio-tungstenite 0.30",
            Peer::TickwireTokio => "tickwire tokio",
        }
    }
}

/// What a run measures.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Connections.
    pub conns: usize,
    /// Soak rounds after the idle measurement (0: none).
    pub rounds: usize,
    /// Messages each connection sends per round.
    pub messages: usize,
}

/// What a run found.
#[derive(Debug, Clone)]
pub struct Report {
    /// The server.
    pub peer: Peer,
    /// Connections open at the idle measurement.
    pub conns: usize,
    /// Resident bytes before the first accept, and with every connection open and idle.
    pub rss_before: u64,
    /// See `rss_before`.
    pub rss_idle: u64,
    /// Virtual bytes at the same two moments.
    pub vm_before: u64,
    /// See `vm_before`.
    pub vm_idle: u64,
    /// Resident bytes after each soak round, and connections open then.
    pub samples: Vec<(u64, usize)>,
    /// Echoes the clients received and checked.
    pub echoes: u64,
    /// Time to open every connection, and for the soak rounds.
    pub open_time: Duration,
    /// See `open_time`.
    pub soak_time: Duration,
}

impl Report {
    /// Resident bytes per idle connection.
    pub fn per_conn(&self) -> f64 {
        (self.rss_idle.saturating_sub(self.rss_before)) as f64 / self.conns as f64
    }

    /// Virtual bytes per idle connection (address space reserved: allocations whose
    /// pages were never touched count here, not in the resident figure).
    pub fn vm_per_conn(&self) -> f64 {
        (self.vm_idle.saturating_sub(self.vm_before)) as f64 / self.conns as f64
    }

    /// Resident bytes per connection after the last soak round (idle again).
    pub fn after_soak_per_conn(&self) -> Option<f64> {
        let last = self.samples.last()?.0;
        Some(last.saturating_sub(self.rss_before) as f64 / self.conns as f64)
    }
}

/// In a child process (with [`ROLE`] set): run the role and exit. Otherwise return.
pub fn child() {
    let Ok(role) = std::env::var(ROLE) else {
        return;
    };
    let args: Vec<String> = std::env::var(ARGS)
        .unwrap_or_default()
        .split(',')
        .map(str::to_owned)
        .collect();
    let num = |i: usize| args[i].parse::<usize>().expect("numeric argument");
    match role.as_str() {
        "server-tickwire" => tickwire_server::run(num(0), num(1), false),
        "server-tickwire-full" => tickwire_server::run(num(0), num(1), true),
        "server-tokio-tungstenite" => tt_server::run(num(0), num(1)),
        "server-tickwire-tokio" => tokio_server::run(num(0), num(1)),
        "clients" => clients::run(args[0].parse().expect("address"), num(1), num(2), num(3)),
        other => panic!("unknown role {other}"),
    }
    std::process::exit(0);
}

/// A child process, killed when dropped.
struct Proc {
    child: Child,
    lines: std::io::Lines<BufReader<ChildStdout>>,
}

impl Proc {
    /// Start this executable with `exe_args` as `role`.
    fn start(exe_args: &[&str], role: &str, args: &str) -> Proc {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(exe_args)
            .env(ROLE, role)
            .env(ARGS, args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start a child process");
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Proc { child, lines }
    }

    /// The next protocol line's words after the tag (panics if the child ended).
    fn next(&mut self) -> Vec<String> {
        for line in self.lines.by_ref() {
            let line = line.expect("child output");
            // A test harness may print "test NAME ... " before it on the same line.
            if let Some(at) = line.find(TAG) {
                return line[at + TAG.len()..]
                    .split_whitespace()
                    .map(str::to_owned)
                    .collect();
            }
        }
        let status = self.child.wait();
        panic!("child process ended early: {status:?}");
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Print a protocol line (flushed at once).
fn say(words: std::fmt::Arguments<'_>) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{TAG} {words}");
    let _ = out.flush();
}

/// Run `plan` against `peer`'s server: a server process, a clients process. `exe_args`
/// make this executable run [`child`] again (a test: `--exact NAME --nocapture`).
pub fn run(exe_args: &[&str], peer: Peer, plan: Plan) -> Report {
    let total = plan.conns * plan.messages;
    let start = Instant::now();
    let mut server = Proc::start(exe_args, peer.role(), &format!("{},{total}", plan.conns));
    let w = server.next();
    assert_eq!(w[0], "ADDR", "{w:?}");
    let addr = w[1].clone();
    let rss_before: u64 = w[2].parse().unwrap();
    let vm_before: u64 = w[3].parse().unwrap();
    let mut clients = Proc::start(
        exe_args,
        "clients",
        &format!("{addr},{},{},{}", plan.conns, plan.rounds, plan.messages),
    );
    let w = clients.next();
    assert_eq!(w, ["CONNECTED", &plan.conns.to_string()], "clients: {w:?}");
    // The server reports once every connection it accepted is open and idle.
    let w = server.next();
    assert_eq!(w[0], "IDLE", "{w:?}");
    let conns: usize = w[1].parse().unwrap();
    let rss_idle: u64 = w[2].parse().unwrap();
    let vm_idle: u64 = w[3].parse().unwrap();
    let open_time = start.elapsed();
    let mut samples = Vec::new();
    let mut echoes = 0;
    for round in 0..plan.rounds {
        let w = clients.next();
        assert_eq!(w[..2], ["ROUND", &round.to_string()], "clients: {w:?}");
        echoes += w[2].parse::<u64>().unwrap();
        if peer != Peer::TokioTungstenite {
            let w = server.next();
            assert_eq!(w[..2], ["SAMPLE", &round.to_string()], "{w:?}");
            samples.push((w[2].parse().unwrap(), w[3].parse().unwrap()));
        }
    }
    Report {
        peer,
        conns,
        rss_before,
        rss_idle,
        vm_before,
        vm_idle,
        samples,
        echoes,
        open_time,
        soak_time: start.elapsed() - open_time,
    }
}

/// Resident bytes of this process (`/proc/self/statm`'s second field, in pages).
fn rss() -> u64 {
    statm(1)
}

/// Virtual bytes of this process (`/proc/self/statm`'s first field).
fn vm() -> u64 {
    statm(0)
}

fn statm(field: usize) -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: u64 = statm
        .split_whitespace()
        .nth(field)
        .unwrap()
        .parse()
        .unwrap();
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    pages * page as u64
}

/// Raise the open-file limit for `need` sockets and then some: to the hard limit, or
/// beyond it where that is allowed (root).
fn raise_nofile(need: usize) {
    let max = open_files_max(need);
    assert!(
        max > need + 64,
        "open-file hard limit {max} too low for {need} sockets"
    );
}

/// Raise the open-file limit to the hard limit, first raising that to `need` sockets
/// and then some where that is allowed (root); returns the limit.
fn open_files_max(need: usize) -> usize {
    let want = (need + 1024) as libc::rlim_t;
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `lim` is a valid rlimit for getrlimit/setrlimit to read and write.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim), 0);
        if lim.rlim_max < want {
            let raised = libc::rlimit {
                rlim_cur: want,
                rlim_max: want,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                lim = raised;
            }
        }
        lim.rlim_cur = lim.rlim_max;
        assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &lim), 0);
    }
    lim.rlim_cur as usize
}

/// Every tenth connection's big message per round: more than a tickwire server
/// connection's initial 4 KiB buffers, so they grow (and shrink again when idle).
const BIG: usize = 10_000;

/// The text connection `conn` sends as message `k` of round `round`.
fn message(conn: usize, round: usize, k: usize) -> String {
    let mut s = format!("{conn}:{round}:{k}:");
    if k == 0 && conn.is_multiple_of(10) {
        while s.len() < BIG {
            s.push_str("0123456789abcdef");
        }
    }
    s
}

mod tickwire_server {
    use mio::{Events, Interest, Poll, Token};
    use tickwire::ws::{Message, Server, ServerConnection};

    use super::{raise_nofile, rss, say, vm};

    const LISTENER: Token = Token(usize::MAX);

    /// Serve until killed; report the idle figure once `conns` connections are open,
    /// then a sample after each `per_round` echoes.
    pub fn run(conns: usize, per_round: usize, full: bool) {
        raise_nofile(10_000);
        let builder = if full {
            Server::builder().initial_buffer_size(usize::MAX)
        } else {
            Server::builder()
        };
        let mut server = builder.bind("127.0.0.1:0").unwrap();
        let mut poll = Poll::new().unwrap();
        let mut events = Events::with_capacity(1024);
        poll.registry()
            .register(&mut server, LISTENER, Interest::READABLE)
            .unwrap();
        let before = rss();
        say(format_args!(
            "ADDR {} {before} {}",
            server.local_addr().unwrap(),
            vm()
        ));
        let mut slots: Vec<Option<ServerConnection>> = Vec::new();
        let (mut open, mut handshaking) = (0usize, 0usize);
        let mut idle_said = false;
        let (mut echoed, mut round) = (0usize, 0usize);
        let mut scratch = String::new();
        loop {
            if let Err(e) = poll.poll(&mut events, None) {
                assert_eq!(e.kind(), std::io::ErrorKind::Interrupted, "{e}");
            }
            for ev in &events {
                if ev.token() == LISTENER {
                    while let Some(mut c) = server.try_accept().unwrap() {
                        let token = Token(slots.len());
                        poll.registry()
                            .register(&mut c, token, Interest::READABLE | Interest::WRITABLE)
                            .unwrap();
                        slots.push(Some(c));
                        handshaking += 1;
                    }
                    continue;
                }
                let slot = &mut slots[ev.token().0];
                let Some(c) = slot else { continue };
                let was_handshaking = c.is_handshaking();
                let mut lost = false;
                loop {
                    match c.try_recv() {
                        Ok(Some(Message::Text(t))) => {
                            scratch.clear();
                            scratch.push_str(t);
                        }
                        Ok(Some(_)) => continue,
                        Ok(None) => break,
                        Err(_) => {
                            lost = true;
                            break;
                        }
                    }
                    if c.send_text(&scratch).is_err() {
                        lost = true;
                        break;
                    }
                    echoed += 1;
                }
                if !lost && c.wants_write() && c.flush().is_err() {
                    lost = true;
                }
                if was_handshaking && !c.is_handshaking() {
                    handshaking -= 1;
                    if !lost {
                        open += 1;
                    }
                } else if lost {
                    open -= 1;
                }
                if lost {
                    let _ = poll.registry().deregister(c);
                    *slot = None;
                }
            }
            if !idle_said && handshaking == 0 && open == conns {
                idle_said = true;
                say(format_args!("IDLE {open} {} {}", rss(), vm()));
            }
            while per_round > 0 && echoed >= (round + 1) * per_round {
                say(format_args!("SAMPLE {round} {} {open}", rss()));
                round += 1;
            }
        }
    }
}

mod tokio_server {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    // `sync` and `time` (for the handshake timeout: `enable_all`) are on through
    // tickwire's `tokio` feature.
    use tokio::sync::Notify;

    use tickwire::tokio::ws::Server;
    use tickwire::ws::Message;

    use super::{raise_nofile, rss, say, vm};

    /// Accept `conns` connections, a task each that echoes text; report the idle figure
    /// once all are open and a sample after each `per_round` echoes; then serve until
    /// killed.
    pub fn run(conns: usize, per_round: usize) {
        // One descriptor a connection: tokio's reactor watches the socket itself.
        raise_nofile(conns);
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let mut server = Server::bind("127.0.0.1:0").await.unwrap();
            let open = Arc::new(AtomicUsize::new(0));
            let echoed = Arc::new(AtomicUsize::new(0));
            let changed = Arc::new(Notify::new());
            let before = rss();
            say(format_args!(
                "ADDR {} {before} {}",
                server.local_addr().unwrap(),
                vm()
            ));
            for _ in 0..conns {
                let mut c = server.accept().await.unwrap();
                let (open, echoed, changed) = (open.clone(), echoed.clone(), changed.clone());
                tokio::spawn(async move {
                    if c.handshake().await.is_err() {
                        return;
                    }
                    open.fetch_add(1, Ordering::Relaxed);
                    changed.notify_one();
                    let mut scratch = String::new();
                    loop {
                        match c.recv().await {
                            Ok(Some(Message::Text(t))) => {
                                scratch.clear();
                                scratch.push_str(t);
                            }
                            Ok(Some(_)) => continue,
                            _ => break,
                        }
                        if c.send_text(&scratch).await.is_err() {
                            break;
                        }
                        echoed.fetch_add(1, Ordering::Relaxed);
                        changed.notify_one();
                    }
                    open.fetch_sub(1, Ordering::Relaxed);
                });
            }
            while open.load(Ordering::Relaxed) < conns {
                changed.notified().await;
            }
            say(format_args!(
                "IDLE {} {} {}",
                open.load(Ordering::Relaxed),
                rss(),
                vm()
            ));
            let mut round = 0;
            loop {
                while per_round > 0 && echoed.load(Ordering::Relaxed) >= (round + 1) * per_round {
                    say(format_args!(
                        "SAMPLE {round} {} {}",
                        rss(),
                        open.load(Ordering::Relaxed)
                    ));
                    round += 1;
                }
                changed.notified().await;
            }
        });
    }
}

mod tt_server {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use futures_util::{SinkExt, StreamExt};

    use super::{raise_nofile, rss, say, vm};

    /// Accept `conns` connections, a task each that echoes text; report the idle figure
    /// once all are open; then serve until killed.
    pub fn run(conns: usize, _per_round: usize) {
        raise_nofile(10_000);
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let open = Arc::new(AtomicUsize::new(0));
            let before = rss();
            say(format_args!(
                "ADDR {} {before} {}",
                listener.local_addr().unwrap(),
                vm()
            ));
            for _ in 0..conns {
                let (s, _) = listener.accept().await.unwrap();
                let open = open.clone();
                tokio::spawn(async move {
                    let _ = s.set_nodelay(true);
                    let Ok(mut ws) = tokio_tungstenite::accept_async(s).await else {
                        return;
                    };
                    open.fetch_add(1, Ordering::Relaxed);
                    while let Some(Ok(m)) = ws.next().await {
                        if m.is_text() && ws.send(m).await.is_err() {
                            break;
                        }
                    }
                });
            }
            while open.load(Ordering::Relaxed) < conns {
                tokio::task::yield_now().await;
            }
            say(format_args!("IDLE {conns} {} {}", rss(), vm()));
            std::future::pending::<()>().await;
        });
    }
}

mod clients {
    use std::io::{Read, Write};
    use std::net::{SocketAddr, TcpStream};
    use std::time::Duration;

    use super::{message, raise_nofile, say};

    /// Connections opened before their `101`s are read: inside the listen backlog
    /// (mio's, as std's, is 128; a dropped SYN costs a second's retransmit).
    const BATCH: usize = 64;

    const REQUEST: &[u8] = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n\
        Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
        Sec-WebSocket-Version: 13\r\n\r\n";

    /// Open `conns` connections, then run `rounds` soak rounds of `messages` each.
    pub fn run(addr: SocketAddr, conns: usize, rounds: usize, messages: usize) {
        raise_nofile(conns);
        let mut socks: Vec<TcpStream> = Vec::with_capacity(conns);
        while socks.len() < conns {
            let n = BATCH.min(conns - socks.len());
            let batch: Vec<TcpStream> = (0..n)
                .map(|_| {
                    let mut s = TcpStream::connect(addr).expect("connect");
                    s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
                    s.write_all(REQUEST).unwrap();
                    s
                })
                .collect();
            for mut s in batch {
                read_head(&mut s);
                socks.push(s);
            }
        }
        say(format_args!("CONNECTED {conns}"));
        let mut out = Vec::new();
        let mut payload = Vec::new();
        for round in 0..rounds {
            for (i, s) in socks.iter_mut().enumerate() {
                out.clear();
                for k in 0..messages {
                    masked_text(
                        &mut out,
                        message(i, round, k).as_bytes(),
                        (i * 31 + k) as u32,
                    );
                }
                s.write_all(&out).expect("send");
            }
            let mut got = 0u64;
            for (i, s) in socks.iter_mut().enumerate() {
                for k in 0..messages {
                    read_text(s, &mut payload);
                    assert!(
                        payload == message(i, round, k).as_bytes(),
                        "connection {i} round {round} message {k}: wrong echo"
                    );
                    got += 1;
                }
            }
            say(format_args!("ROUND {round} {got}"));
        }
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }

    /// Read the handshake answer (up to its blank line) and check it is a `101`.
    fn read_head(s: &mut TcpStream) {
        let mut head = Vec::new();
        let mut byte = [0u8; 256];
        while !head.ends_with(b"\r\n\r\n") {
            // Nothing follows the answer until we send: reading past it is no risk.
            let n = s.read(&mut byte).expect("read the 101");
            assert!(n > 0, "server closed during the handshake");
            head.extend_from_slice(&byte[..n]);
        }
        assert!(
            head.starts_with(b"HTTP/1.1 101"),
            "{}",
            String::from_utf8_lossy(&head)
        );
    }

    /// Append a masked text frame.
    fn masked_text(out: &mut Vec<u8>, payload: &[u8], key: u32) {
        out.push(0x81);
        match payload.len() {
            n if n < 126 => out.push(0x80 | n as u8),
            n if n <= 0xffff => {
                out.push(0x80 | 126);
                out.extend_from_slice(&(n as u16).to_be_bytes());
            }
            n => {
                out.push(0x80 | 127);
                out.extend_from_slice(&(n as u64).to_be_bytes());
            }
        }
        let key = key.to_be_bytes();
        out.extend_from_slice(&key);
        out.extend(payload.iter().enumerate().map(|(i, b)| b ^ key[i % 4]));
    }

    /// Read one unmasked, unfragmented text frame from the server into `payload`.
    fn read_text(s: &mut TcpStream, payload: &mut Vec<u8>) {
        let mut h = [0u8; 2];
        s.read_exact(&mut h).expect("read an echo");
        assert_eq!(h[0], 0x81, "a final text frame");
        let len = match h[1] {
            126 => {
                let mut l = [0u8; 2];
                s.read_exact(&mut l).unwrap();
                usize::from(u16::from_be_bytes(l))
            }
            127 => {
                let mut l = [0u8; 8];
                s.read_exact(&mut l).unwrap();
                u64::from_be_bytes(l) as usize
            }
            n => usize::from(n),
        };
        payload.resize(len, 0);
        s.read_exact(payload).expect("read an echo's payload");
    }
}
