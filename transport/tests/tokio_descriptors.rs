//! Descriptors of the tokio adapter: one per connection (the socket itself is what the
//! reactor watches, no duplicate), and every registration leaves the reactor before its
//! socket is closed, whatever is dropped and in which order.
//!
//! The second is checked where it can be seen: the reactor's epoll set, listed in
//! `/proc/self/fdinfo` of its descriptor (a `tfd:` line per watched file, with the
//! file's inode). Before each drop the test takes a duplicate of the socket (a probe),
//! so the socket's file stays open after the connection closes its descriptor. When the
//! registration is removed first (`EPOLL_CTL_DEL` on the open descriptor), the entry is
//! gone. When the socket's descriptor is closed first, the removal fails (`EBADF`) and
//! the entry stays in the set for the life of the runtime, still aimed at the
//! connection's registration (and, had the number been reused by another socket in
//! between, the removal would have taken that socket's entry instead): the test fails.
//! Checked for the client, the server's connection, split halves in both drop orders, a
//! failed handshake, the listener, the REST client's connection, and the task that
//! finishes an https:// close the socket could not take at once. Linux only (`/proc`).
#![cfg(all(feature = "tokio", target_os = "linux"))]

#[cfg(feature = "tls")]
mod tls_util;

use std::fs;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::{FromRawFd, OwnedFd};
use std::time::Duration;

use tickwire::tokio::rest;
use tickwire::tokio::ws::{Client, Message, Server};

const T: Duration = Duration::from_secs(20);

/// The tests count this process's descriptors and epoll entries: one at a time.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// The socket whose local address is `local` (and, with `listening`, in the listen
/// state) by its inode: from `/proc/net/tcp`.
fn socket_inode(local: SocketAddr, listening: bool) -> u64 {
    let SocketAddr::V4(v4) = local else {
        panic!("IPv4 only: {local}")
    };
    let want = format!(
        "{:08X}:{:04X}",
        u32::from_ne_bytes(v4.ip().octets()),
        v4.port()
    );
    let table = fs::read_to_string("/proc/net/tcp").unwrap();
    let found = table.lines().skip(1).find_map(|line| {
        let f: Vec<&str> = line.split_whitespace().collect();
        let listen = f[3] == "0A";
        let ino: u64 = f[9].parse().unwrap();
        // (Inode 0: a socket no descriptor holds any more, in TIME_WAIT.)
        (f[1] == want && listen == listening && ino != 0).then_some(ino)
    });
    found.unwrap_or_else(|| panic!("no socket {local} in /proc/net/tcp"))
}

/// A duplicate of this process's descriptor of socket `ino`: it keeps the socket's file
/// open after the connection closes its own.
fn probe(ino: u64) -> OwnedFd {
    let link = format!("socket:[{ino}]");
    for entry in fs::read_dir("/proc/self/fd").unwrap() {
        let entry = entry.unwrap();
        if fs::read_link(entry.path()).is_ok_and(|l| l.to_str() == Some(&link)) {
            let fd: i32 = entry.file_name().to_str().unwrap().parse().unwrap();
            // SAFETY: dup of a descriptor this process has open; the new one is ours.
            let dup = unsafe { libc::dup(fd) };
            assert!(dup >= 0, "dup: {}", std::io::Error::last_os_error());
            // SAFETY: `dup` is a fresh descriptor nobody else owns.
            return unsafe { OwnedFd::from_raw_fd(dup) };
        }
    }
    panic!("socket {ino} is not open in this process")
}

/// How many entries of this process's epoll sets watch the file with inode `ino` (an
/// epoll set open through several descriptors, as mio's registry clones it, counts once).
fn watched(ino: u64) -> usize {
    let mut sets = std::collections::HashSet::new();
    let mut n = 0;
    for entry in fs::read_dir("/proc/self/fd").unwrap() {
        let entry = entry.unwrap();
        if !fs::read_link(entry.path()).is_ok_and(|l| l.to_str() == Some("anon_inode:[eventpoll]"))
        {
            continue;
        }
        let info = format!("/proc/self/fdinfo/{}", entry.file_name().to_str().unwrap());
        let Ok(info) = fs::read_to_string(info) else {
            continue; // closed meanwhile
        };
        // The set's own inode (the `ino:` line of its header).
        let set = info
            .lines()
            .find(|l| l.starts_with("ino:"))
            .map(str::to_owned);
        if !sets.insert(set) {
            continue;
        }
        let ino_field = format!("ino:{ino:x} ");
        n += info
            .lines()
            .filter(|l| l.starts_with("tfd:") && format!("{l} ").contains(&ino_field))
            .count();
    }
    n
}

/// Watch socket `local` across `drop_it`: registered (once) before, out of every epoll
/// set after, though its file is still open (`what` names the case).
fn dropped_unwatched(what: &str, local: SocketAddr, listening: bool, drop_it: impl FnOnce()) {
    let ino = socket_inode(local, listening);
    let probe = probe(ino);
    assert_eq!(watched(ino), 1, "{what}: registered once before the drop");
    drop_it();
    assert_eq!(
        watched(ino),
        0,
        "{what}: the socket's file is still in the reactor's epoll set after the drop \
         (its descriptor was closed before the registration was removed)"
    );
    drop(probe);
}

/// A connected client and the server's accepted connection (handshake done).
async fn pair(server: &mut Server, url: &str) -> (Client, tickwire::tokio::ws::ServerConnection) {
    let client = tokio::spawn({
        let url = url.to_owned();
        async move { Client::connect(&url).await.unwrap() }
    });
    let mut conn = server.accept().await.unwrap();
    conn.handshake().await.unwrap();
    (client.await.unwrap(), conn)
}

async fn every_owner_unregisters_before_closing() {
    let mut server = Server::bind("127.0.0.1:0").await.unwrap();
    let addr = server.local_addr().unwrap();
    let url = format!("ws://{addr}/");

    let (client, conn) = pair(&mut server, &url).await;
    let (c, s) = (client.local_addr().unwrap(), client.peer_addr().unwrap());
    assert_eq!(s, addr);
    dropped_unwatched("client", c, false, || drop(client));
    // The server's end of the same connection: its local address is the listener's,
    // so find it by the client's port through the accepted socket's peer.
    let local = conn.local_addr().unwrap();
    assert_eq!(conn.peer_addr().unwrap(), c);
    let ino = server_side_inode(local, c);
    let p = probe(ino);
    assert_eq!(
        watched(ino),
        1,
        "server connection: registered before the drop"
    );
    drop(conn);
    assert_eq!(
        watched(ino),
        0,
        "server connection: still watched after the drop"
    );
    drop(p);

    // Split halves, dropped in both orders, on both roles.
    for read_first in [true, false] {
        let (client, conn) = pair(&mut server, &url).await;
        let c = client.local_addr().unwrap();
        let ino_c = socket_inode(c, false);
        let ino_s = server_side_inode(addr, c);
        let probes = (probe(ino_c), probe(ino_s));
        let (crx, ctx) = client.split();
        let (srx, stx) = conn.split().await.unwrap();
        assert_eq!(
            (watched(ino_c), watched(ino_s)),
            (1, 1),
            "split: registered"
        );
        if read_first {
            drop((crx, srx));
            assert_eq!(
                (watched(ino_c), watched(ino_s)),
                (1, 1),
                "one half still open"
            );
            drop((ctx, stx));
        } else {
            drop((ctx, stx));
            assert_eq!(
                (watched(ino_c), watched(ino_s)),
                (1, 1),
                "one half still open"
            );
            drop((crx, srx));
        }
        assert_eq!(
            (watched(ino_c), watched(ino_s)),
            (0, 0),
            "split halves (read half dropped first: {read_first}): still watched"
        );
        drop(probes);
    }

    // A connection that failed its handshake (the client gives up: server closes).
    let raw = TcpStream::connect(addr).unwrap();
    let mut conn = server.accept().await.unwrap();
    let ino = server_side_inode(addr, raw.local_addr().unwrap());
    let p = probe(ino);
    drop(raw);
    assert!(conn.handshake().await.is_err());
    drop(conn);
    assert_eq!(watched(ino), 0, "failed handshake: still watched");
    drop(p);

    // The listener.
    dropped_unwatched("listener", addr, true, || drop(server));

    // The REST client's connection (plain TCP), dropped by `disconnect` and by dropping
    // the client.
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", l.local_addr().unwrap());
    for disconnect in [true, false] {
        let mut c = rest::Client::builder()
            .read_timeout(Some(T))
            .connect(&url)
            .await
            .unwrap();
        let (peer, _) = l.accept().unwrap();
        let local = c.local_addr().unwrap();
        dropped_unwatched("rest client", local, false, || {
            if disconnect { c.disconnect() } else { drop(c) }
        });
        drop(peer);
    }
}

/// The accepted socket on listener address `local` whose peer is `peer`: its inode.
fn server_side_inode(local: SocketAddr, peer: SocketAddr) -> u64 {
    let hex = |a: SocketAddr| {
        let SocketAddr::V4(v4) = a else {
            panic!("IPv4 only: {a}")
        };
        format!(
            "{:08X}:{:04X}",
            u32::from_ne_bytes(v4.ip().octets()),
            v4.port()
        )
    };
    let (want_l, want_r) = (hex(local), hex(peer));
    let table = fs::read_to_string("/proc/net/tcp").unwrap();
    let found = table.lines().skip(1).find_map(|line| {
        let f: Vec<&str> = line.split_whitespace().collect();
        let ino: u64 = f[9].parse().unwrap();
        (f[1] == want_l && f[2] == want_r && ino != 0).then_some(ino)
    });
    found.unwrap_or_else(|| panic!("no socket {local} <- {peer} in /proc/net/tcp"))
}

#[test]
fn registrations_leave_the_reactor_before_sockets_close_current_thread() {
    let _one = one_at_a_time();
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(every_owner_unregisters_before_closing());
}

#[test]
fn registrations_leave_the_reactor_before_sockets_close_multi_thread() {
    let _one = one_at_a_time();
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
        .block_on(every_owner_unregisters_before_closing());
}

/// Descriptors this process has open.
fn open_descriptors() -> usize {
    fs::read_dir("/proc/self/fd").unwrap().count()
}

#[test]
fn one_descriptor_per_tokio_connection() {
    const N: usize = 64;
    let _one = one_at_a_time();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut server = Server::bind("127.0.0.1:0").await.unwrap();
        let url = format!("ws://{}/", server.local_addr().unwrap());
        // Warm: the runtime's own descriptors (its timer, the blocking pool) exist.
        let warm = pair(&mut server, &url).await;
        drop(warm);
        let before = open_descriptors();
        let mut pairs = Vec::new();
        for _ in 0..N {
            pairs.push(pair(&mut server, &url).await);
        }
        let opened = open_descriptors() - before;
        // Each pair is two sockets (the client's and the server's end), in this process.
        assert_eq!(
            opened,
            2 * N,
            "{N} client + {N} server connections hold {opened} descriptors: {:.2} per connection",
            opened as f64 / (2 * N) as f64
        );
        // Still one each after a split, and while messages flow.
        let mut halves = Vec::new();
        for (client, conn) in pairs {
            let (crx, mut ctx) = client.split();
            let (mut srx, stx) = conn.split().await.unwrap();
            ctx.send_text("x").await.unwrap();
            assert_eq!(srx.recv().await.unwrap(), Some(Message::Text("x")));
            halves.push((crx, ctx, srx, stx));
        }
        assert_eq!(open_descriptors() - before, 2 * N, "after split");
        drop(halves);
        assert_eq!(
            open_descriptors(),
            before,
            "every descriptor closed with its owner"
        );
    });
}

/// An https:// connection dropped while the socket cannot take its close_notify (the
/// server stopped reading): a task finishes the close, registering the socket again on
/// its runtime; when it gives up (the close timeout), that registration too leaves the
/// reactor before the socket closes.
#[cfg(feature = "tls")]
#[test]
fn the_tls_close_task_unregisters_before_closing() {
    use std::sync::mpsc;
    use std::time::Instant;
    use tickwire::tls::TlsStream;

    let _one = one_at_a_time();
    let ca = tls_util::Ca::new("test CA");
    let server_tls = ca.server(&["localhost"]).server_config();
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let (done_tx, done_rx) = mpsc::channel::<()>();
    // A TLS server that completes the handshake, then reads nothing until told to end.
    let server = std::thread::spawn(move || {
        let (s, _) = l.accept().unwrap();
        let mut s = TlsStream::server(s, &server_tls).unwrap();
        while !s.handshake().unwrap() {}
        let _ = done_rx.recv();
    });
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut c = rest::Client::builder()
            .tls(ca.client_config())
            .close_timeout(Duration::from_millis(300))
            .so_sndbuf(32 << 10)
            .request_buffer(32 << 20)
            .connect(&format!("https://localhost:{port}/"))
            .await
            .unwrap();
        let ino = socket_inode(c.local_addr().unwrap(), false);
        let probe = probe(ino);
        assert_eq!(watched(ino), 1, "registered");
        // More than the loopback socket buffers hold: the request is given up (its
        // future dropped) with the socket full; the connection itself has not failed.
        let big = vec![b'x'; 16 << 20];
        let r = tokio::time::timeout(Duration::from_secs(2), c.post("/up").body(&big).send());
        assert!(r.await.is_err(), "the server reads nothing");
        drop(big);
        c.disconnect();
        // The close task registers the socket again and waits for room.
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        assert_eq!(watched(ino), 1, "the close task waits on the socket");
        let deadline = Instant::now() + T;
        while watched(ino) != 0 {
            assert!(
                Instant::now() < deadline,
                "the close task's registration is still in the reactor's epoll set"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        drop(probe);
    });
    done_tx.send(()).unwrap();
    server.join().unwrap();
}
