//! nexus-net 0.4.2 (and 0.7.2 in the round trips) in the loopback rows (issue 24): its blocking
//! `ws::Client<TcpStream>` (the I/O wrapper its README shows), opened with its
//! own handshake (`ClientBuilder::connect_with` on the measuring side,
//! `ClientBuilder::accept` on the echo side), default buffers (1 MiB read
//! buffer, like tickwire's; 64 KiB write buffer), TCP_NODELAY on both sockets.
//!
//! Busy-poll: its `recv` returns `Ok(None)` on `WouldBlock` (documented for
//! non-blocking sockets), so both ends put their socket in non-blocking mode
//! after the handshake and spin on `recv`, as tickwire's busy-poll row spins
//! on `try_recv`. Its `send_binary` is `write_all` into the socket, which a
//! single 134-byte frame never finds full.

use std::net::TcpStream;

use nexus_net::ws::{Client as NxClient, ClientBuilder, Message as NxMessage};

use crate::suites::{touch, unexpected};

/// The library column of every nexus-net 0.4.2 row.
pub const LIB: &str = "nexus-net 0.4.2";

/// The library column of the nexus-net 0.7.2 rows (round trips only: the
/// newest release for this workspace's rust-version 1.88; its read path is
/// 0.4.2's, its client draws masking keys from a ChaCha8 generator seeded
/// once instead of a `getrandom` call per frame).
pub const LIB_07: &str = "nexus-net 0.7.2";

/// Note of the blocking round-trip rows.
pub const NOTE_RTT: &str = "ws::Client::send_binary + recv (blocking std TcpStream, TCP_NODELAY, its own \
                            handshake) against a nexus-net ws::Client::accept echo on the other core; \
                            client frames masked with a getrandom key per frame (0.7.2: ChaCha8 keys)";
/// Note of the busy-poll round-trip rows.
pub const NOTE_RTT_BUSY: &str = "both ends set_nonblocking(true) after the handshake and spin on recv \
                                 (Ok(None) on WouldBlock)";
/// Note of the receive-stream row.
pub const NOTE_STREAM: &str = "receiver: ws::ClientBuilder::accept (server side of the handshake), then \
                               Client::recv (blocking): read_from into its 1 MiB ReadBuf, unmask + checks; \
                               sender (same for every row): pre-encoded masked frames, ~64 KiB per write";

/// Note of the busy-poll receive-stream row.
pub const NOTE_STREAM_BUSY: &str = "the same on a non-blocking socket (set_nonblocking(true) after the \
                                    handshake), spinning on recv's Ok(None)";

/// The round-trip rows' code for one nexus-net version (`$nx`: its crate name
/// here), in module `$m`: the APIs used are the same in 0.4.2 and 0.7.2.
macro_rules! round_trip_rows {
    ($m:ident, $nx:ident) => {
        /// Round-trip rows of one nexus-net version.
        pub(crate) mod $m {
            use std::io::{Read, Write};
            use std::net::TcpStream;
            use std::sync::Arc;
            use std::sync::atomic::{AtomicBool, Ordering};

            use $nx::ws::{Client as NxClient, ClientBuilder, Message as NxMessage};

            use crate::harness::{Measurement, RunConfig, bench_batch};
            use crate::suites::loopback::{payload, spawn_pinned, tcp_pair};
            use crate::suites::{touch, unexpected};

            /// A connected nexus-net pair over loopback TCP: the measuring (client) side,
            /// and the echo thread on `peer`, which echoes every binary message until the
            /// connection ends (blocking) or `stop` is set (busy-poll).
            fn echo_pair(
                peer: usize,
                busy: bool,
                stop: Arc<AtomicBool>,
            ) -> (NxClient<TcpStream>, std::thread::JoinHandle<()>) {
                let (c, s) = tcp_pair();
                let url = format!("ws://{}/", s.local_addr().expect("local addr"));
                let echo = spawn_pinned(peer, move || {
                    let mut ws = ClientBuilder::new().accept(s).expect("accept + handshake");
                    if busy {
                        ws.stream()
                            .set_nonblocking(true)
                            .expect("non-blocking socket");
                    }
                    let mut buf = Vec::with_capacity(1 << 16);
                    loop {
                        match ws.recv() {
                            Ok(Some(NxMessage::Binary(b))) => {
                                buf.clear();
                                buf.extend_from_slice(b);
                            }
                            Ok(Some(_)) => continue,
                            // WouldBlock (busy) or end of stream (blocking).
                            Ok(None) if busy && !stop.load(Ordering::Relaxed) => {
                                std::hint::spin_loop();
                                continue;
                            }
                            Ok(None) | Err(_) => return,
                        }
                        if ws.send_binary(&buf).is_err() {
                            return;
                        }
                    }
                });
                let ws = ClientBuilder::new()
                    .connect_with(c, &url)
                    .expect("connect + handshake");
                (ws, echo)
            }

            /// Send `p` and wait for its echo (spinning on `Ok(None)` when `busy`); the
            /// echo's last byte. Plain TCP here, TLS in the TLS suite.
            #[inline(always)]
            pub(crate) fn round<S: Read + Write>(
                ws: &mut NxClient<S>,
                p: &[u8],
                busy: bool,
            ) -> u64 {
                if let Err(e) = ws.send_binary(p) {
                    unexpected(&e);
                }
                loop {
                    match ws.recv() {
                        Ok(Some(NxMessage::Binary(b))) if b.len() == p.len() => return touch(b),
                        Ok(None) if busy => std::hint::spin_loop(),
                        other => unexpected(&other),
                    }
                }
            }

            /// One round trip over loopback: `n` payload bytes out and back.
            pub fn rtt(cfg: &RunConfig, peer: usize, n: usize, busy: bool) -> Measurement {
                let stop = Arc::new(AtomicBool::new(false));
                let (mut ws, echo) = echo_pair(peer, busy, stop.clone());
                let p = payload(n, 1);
                // Verify the echo once (blocking), then switch modes.
                ws.send_binary(&p).expect("send");
                match ws.recv() {
                    Ok(Some(NxMessage::Binary(b))) => assert_eq!(b, &p[..], "echo"),
                    other => unexpected(&other),
                }
                if busy {
                    ws.stream()
                        .set_nonblocking(true)
                        .expect("non-blocking socket");
                }
                let m = bench_batch(
                    &RunConfig { batch: 1, ..*cfg },
                    &mut ws,
                    |_| {},
                    |ws, _| {
                        std::hint::black_box(round(ws, &p, busy));
                    },
                );
                stop.store(true, Ordering::Relaxed);
                drop(ws);
                echo.join().expect("echo thread");
                m
            }
        }
    };
}

round_trip_rows!(v04, nexus_net);
round_trip_rows!(v07, nexus_net_07);

/// The receiving side of the stream rows: the server side of nexus-net's
/// handshake on `sock`, ready to `recv`.
pub fn stream_receiver(sock: TcpStream) -> NxClient<TcpStream> {
    ClientBuilder::new()
        .accept(sock)
        .expect("accept + handshake")
}

/// Receive one message of `len` bytes (`busy`: spinning on `Ok(None)`, which a
/// non-blocking socket's `WouldBlock` gives); its last byte.
#[inline(always)]
pub fn stream_recv(ws: &mut NxClient<TcpStream>, len: usize, busy: bool) -> u64 {
    loop {
        match ws.recv() {
            Ok(Some(NxMessage::Binary(b))) if b.len() == len => return touch(b),
            Ok(None) if busy => std::hint::spin_loop(),
            other => unexpected(&other),
        }
    }
}

/// Receive one message (spinning as [`stream_recv`]); it must be `want`.
pub fn stream_check(ws: &mut NxClient<TcpStream>, want: &[u8], busy: bool) {
    loop {
        match ws.recv() {
            Ok(Some(NxMessage::Binary(b))) => return assert_eq!(b, want),
            Ok(None) if busy => std::hint::spin_loop(),
            other => unexpected(&other),
        }
    }
}

/// Receive one binary message and hand it to `f`.
#[inline(always)]
pub fn with_binary(ws: &mut NxClient<TcpStream>, f: impl FnOnce(&[u8])) {
    match ws.recv() {
        Ok(Some(NxMessage::Binary(b))) => f(b),
        other => unexpected(&other),
    }
}
