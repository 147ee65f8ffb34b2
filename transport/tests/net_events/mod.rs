//! Events the loopback tests wait for instead of sleeping: a TCP connection's state and
//! queues as the kernel reports them (Linux `/proc/net/tcp`), polled under a generous
//! deadline. A test that waits for "the peer's FIN has arrived" or "the socket is backed
//! up" passes however slowly a loaded machine runs it; a fixed sleep guesses.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::thread;
use std::time::{Duration, Instant};

/// The longest a test waits for an event before it fails.
pub const DEADLINE: Duration = Duration::from_secs(30);

/// `/proc/net/tcp`'s `st` for a connection whose peer closed its side (FIN received).
pub const CLOSE_WAIT: u8 = 0x08;

/// One connection as the kernel reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tcp {
    /// TCP state (`/proc/net/tcp`'s `st`: 01 established, 08 close-wait, ...).
    pub state: u8,
    /// Bytes sent but not yet acknowledged (or not yet sent).
    pub tx: u64,
    /// Bytes received but not yet read by the application.
    pub rx: u64,
    /// The timer running (`tr`: 1 retransmit, 2 keepalive, 4 zero-window probe).
    pub timer: u8,
}

/// `tr` when the peer's receive window is zero: the sender probes it, and no
/// byte more goes out (nor room opens in the send buffer) until the peer reads.
pub const ZERO_WINDOW_PROBE: u8 = 4;

fn hex(a: SocketAddr) -> String {
    match a {
        SocketAddr::V4(a) => format!(
            "{:08X}:{:04X}",
            u32::from_ne_bytes(a.ip().octets()),
            a.port()
        ),
        SocketAddr::V6(_) => String::new(),
    }
}

/// `/proc/net/tcp`'s `st` for an established connection.
pub const ESTABLISHED: u8 = 0x01;

/// The IPv4 connections `local` -> `remote` (any remote when `None`) the kernel lists
/// (more than one only when an old one on the same ports lingers in time-wait).
pub fn tcp_all(local: SocketAddr, remote: Option<SocketAddr>) -> Vec<Tcp> {
    let (local, remote) = (hex(local), remote.map(hex));
    let table = std::fs::read_to_string("/proc/net/tcp").unwrap_or_default();
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() <= 4 || f[1] != local || remote.as_ref().is_some_and(|r| f[2] != r) {
                return None;
            }
            let (tx, rx) = f[4].split_once(':')?;
            let (timer, _) = f.get(5)?.split_once(':')?;
            Some(Tcp {
                state: u8::from_str_radix(f[3], 16).ok()?,
                tx: u64::from_str_radix(tx, 16).ok()?,
                rx: u64::from_str_radix(rx, 16).ok()?,
                timer: u8::from_str_radix(timer, 16).ok()?,
            })
        })
        .collect()
}

/// The live IPv4 connection `local` -> `remote` (any remote when `None`), if the kernel
/// lists it: the one not in time-wait.
pub fn tcp(local: SocketAddr, remote: Option<SocketAddr>) -> Option<Tcp> {
    tcp_all(local, remote)
        .into_iter()
        .find(|t| t.state != TIME_WAIT)
}

/// `/proc/net/tcp`'s `st` for a connection closed on both sides, lingering.
pub const TIME_WAIT: u8 = 0x06;

/// Poll `done` until it holds; fail naming `what` after [`DEADLINE`].
pub fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + DEADLINE;
    while !done() {
        assert!(Instant::now() < deadline, "never happened: {what}");
        thread::sleep(Duration::from_millis(2));
    }
}

/// Wait until the peer `remote` of our socket `local` has closed its side: its FIN
/// arrived (close-wait), or its reset (the kernel then no longer lists the
/// connection). Both ends are named: the kernel gives one local port to connections to
/// different servers, so `local` alone may find another test's live connection.
pub fn wait_peer_closed(local: SocketAddr, remote: SocketAddr) {
    wait_for("the peer's FIN arrives", || {
        tcp(local, Some(remote)).is_none_or(|t| t.state != ESTABLISHED)
    });
}

/// Wait until everything sent on `local` -> `remote` is acknowledged by the peer's
/// kernel (it waits in the peer's receive queue or was read).
pub fn wait_delivered(local: SocketAddr, remote: SocketAddr) {
    wait_for("the bytes sent arrive", || {
        tcp(local, Some(remote)).is_some_and(|t| t.tx == 0)
    });
}

/// Wait until the application on `local` -> `remote` has read everything that arrived.
pub fn wait_read(local: SocketAddr, remote: SocketAddr) {
    wait_for("the bytes received are read", || {
        tcp(local, Some(remote)).is_some_and(|t| t.rx == 0)
    });
}

/// Wait until bytes arrived unread on `local` -> `remote`.
pub fn wait_arrived(local: SocketAddr, remote: SocketAddr) {
    wait_for("bytes arrive", || {
        tcp(local, Some(remote)).is_some_and(|t| t.rx > 0)
    });
}

/// Wait until the sender on `local` -> `remote` is backed up: bytes wait in its send
/// queue because the peer's receive window is full (on loopback, anything unacknowledged
/// is waiting for window).
pub fn wait_backed_up(local: SocketAddr, remote: SocketAddr) {
    wait_for("the sender backs up", || {
        tcp(local, Some(remote)).is_some_and(|t| t.tx > 0)
    });
}

/// Sleep until at least `d` has passed since `since`: for a threshold on the caller's
/// own clock (a client's idle probe), a lower bound, not a guess about a peer.
pub fn at_least(since: Instant, d: Duration) {
    thread::sleep(d.saturating_sub(since.elapsed()));
}

/// Wait until the peer of `local` -> `remote` has closed its receive window (it reads
/// nothing and its buffer is full): our kernel probes the window, and our send buffer
/// stays as full as it is until the peer reads again.
pub fn wait_zero_window(local: SocketAddr, remote: SocketAddr) {
    wait_for("the peer's window closes", || {
        tcp(local, Some(remote)).is_some_and(|t| t.timer == ZERO_WINDOW_PROBE)
    });
}
