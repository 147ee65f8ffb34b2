//! tickwire's rows of the fan-out suite.
//!
//! Loopback rows: 1,000 `ws::ServerConnection`s in evented mode (non-blocking sockets,
//! as a server loop sending to many clients runs them), or 1,000 tokio
//! `ServerConnection`s on a `current_thread` runtime; write buffers of 64 KiB (read
//! buffers 4 KiB: nothing is received). A connection that refuses for backpressure (its
//! client fell behind) is flushed and sent to again inside the timed fan-out. The floor
//! rows send the pre-encoded frame with `send(2)` straight on the same connections'
//! sockets, no library code.
//!
//! In-memory rows ([`queue_cases`]): 1,000 codec `Connection`s (server role, the same
//! buffers), the message queued on each, nothing written; the untimed step between
//! fan-outs empties the outputs.

use std::os::fd::{AsRawFd, RawFd};

use tickwire::codec::time::Instant as CodecInstant;
use tickwire::codec::ws::deflate::{DeflateConfig, Inflater};
use tickwire::codec::ws::{Connection, Settings};
use tickwire::ws::{self, Error, PreparedMessage, ServerConnection};

use super::{
    CONNECTIONS, Drain, connect_clients, message, per_connection, raise_fd_limit, request,
};
use crate::harness::{Measurement, RunConfig, bench_batch, bench_batch_async};
use crate::suites::{Case, unexpected};

/// Write buffer of every server connection.
const WRITE_BUF: usize = 64 << 10;
/// Read buffer of every server connection.
const READ_BUF: usize = 4 << 10;

/// How a row sends the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum How {
    /// `send_prepared` on each connection.
    Prepared,
    /// `send_text` on each connection.
    OneByOne,
    /// `queue_prepared` on every connection, then `flush` on each.
    QueueThenFlush,
    /// The floor: `send(2)` of the pre-encoded frame on each connection's socket, no
    /// library code.
    Floor,
}

const NOTE_PREPARED: &str = "ws::ServerConnection::send_prepared (evented, non-blocking socket) on each of 1000 \
    connections: the frame encoded once before the run, written straight from the shared bytes (one write(2) \
    per connection); clients drained on the other core";
const NOTE_ONE: &str = "ws::ServerConnection::send_text (evented) on each of 1000 connections: each encodes \
    the frame into its write buffer, then one write(2); clients drained on the other core";
const NOTE_QUEUE_FLUSH: &str = "ws::ServerConnection::queue_prepared on all 1000 connections (a copy into each \
    write buffer), then flush on each (one write(2) per connection), both timed";
const NOTE_FLOOR: &str = "floor: send(fd, frame, 132, MSG_NOSIGNAL) (the system call std's TcpStream::write \
    and mio make) on the socket of each of the same 1000 handshaken ws::ServerConnections (non-blocking), the \
    frame encoded before the run, no library code: the least any library does per connection (a short write is \
    finished by sending the rest); clients drained on the other core";
const NOTE_Z_FLOOR: &str = "floor: send(2) of the frame compressed before the run (the bytes send_prepared \
    writes) on the socket of each of the same 1000 deflate-negotiated ws::ServerConnections, no library code";
const NOTE_TOKIO_PREPARED: &str = "tokio::ws::ServerConnection::send_prepared(..).await on each of 1000 \
    connections, one current_thread runtime; clients drained on the other core";
const NOTE_TOKIO_ONE: &str = "tokio::ws::ServerConnection::send_text(..).await on each of 1000 connections, \
    one current_thread runtime; clients drained on the other core";
const NOTE_Q_PREPARED: &str = "codec Connection::send_prepared on 1000 server connections in memory (a copy of \
    the 132 frame bytes into each write buffer); no I/O; outputs emptied between fan-outs (untimed)";
const NOTE_Q_ONE: &str = "codec Connection::send_text on 1000 server connections in memory (header + payload \
    encoded into each write buffer); no I/O; outputs emptied between fan-outs (untimed)";
const NOTE_Z_PREPARED: &str = "permessage-deflate negotiated with server_no_context_takeover: send_prepared \
    (evented) on 1000 connections of a message compressed once before the run; one write(2) each";
const NOTE_Z_ONE: &str = "permessage-deflate negotiated with server_no_context_takeover: send_text (evented) \
    on 1000 connections, each compressing with its own stream (reset after every message); one write(2) each";

/// The loopback rows of plain scenario `s`: prepared (the baseline), one by one, queue
/// then flush, the floor (`send(2)` of the frame, no library), and the tokio adapter's two.
pub(super) fn plain_cases(s: &str, peer: usize, v: &mut Vec<Case<'static>>) {
    v.push(Case::new(
        s,
        "tickwire send_prepared",
        true,
        NOTE_PREPARED,
        move |cfg| mio_row(cfg, peer, How::Prepared, false),
    ));
    v.push(Case::new(
        s,
        "tickwire send_text one by one",
        false,
        NOTE_ONE,
        move |cfg| mio_row(cfg, peer, How::OneByOne, false),
    ));
    v.push(Case::new(
        s,
        "tickwire queue_prepared x1000 then flush",
        false,
        NOTE_QUEUE_FLUSH,
        move |cfg| mio_row(cfg, peer, How::QueueThenFlush, false),
    ));
    v.push(Case::new(
        s,
        "floor: send(2) of the frame",
        false,
        NOTE_FLOOR,
        move |cfg| mio_row(cfg, peer, How::Floor, false),
    ));
    v.push(Case::new(
        s,
        "tickwire (tokio) send_prepared",
        false,
        NOTE_TOKIO_PREPARED,
        move |cfg| tokio_row(cfg, peer, How::Prepared),
    ));
    v.push(Case::new(
        s,
        "tickwire (tokio) send_text one by one",
        false,
        NOTE_TOKIO_ONE,
        move |cfg| tokio_row(cfg, peer, How::OneByOne),
    ));
}

/// The deflate scenario `s`: compressed once vs compressed per connection, and its floor.
pub(super) fn deflate_cases(s: &str, peer: usize, v: &mut Vec<Case<'static>>) {
    v.push(Case::new(
        s,
        "tickwire send_prepared",
        true,
        NOTE_Z_PREPARED,
        move |cfg| mio_row(cfg, peer, How::Prepared, true),
    ));
    v.push(Case::new(
        s,
        "tickwire send_text one by one",
        false,
        NOTE_Z_ONE,
        move |cfg| mio_row(cfg, peer, How::OneByOne, true),
    ));
    v.push(Case::new(
        s,
        "floor: send(2) of the frame",
        false,
        NOTE_Z_FLOOR,
        move |cfg| mio_row(cfg, peer, How::Floor, true),
    ));
}

/// The in-memory queueing scenario `s`.
pub(super) fn queue_cases(s: &str, v: &mut Vec<Case<'static>>) {
    v.push(Case::new(
        s,
        "tickwire send_prepared",
        true,
        NOTE_Q_PREPARED,
        |cfg| queue_row(cfg, true),
    ));
    v.push(Case::new(
        s,
        "tickwire send_text one by one",
        false,
        NOTE_Q_ONE,
        |cfg| queue_row(cfg, false),
    ));
}

/// The server's permessage-deflate settings.
fn deflate_config() -> DeflateConfig {
    DeflateConfig {
        server_no_context_takeover: true,
        ..DeflateConfig::default()
    }
}

/// The message, prepared (compressed once too with `deflate`), and the frame the
/// clients must receive.
fn prepared(text: &str, deflate: bool) -> (PreparedMessage, Vec<u8>) {
    let msg = PreparedMessage::text(text);
    if !deflate {
        let frame = msg.frame().to_vec();
        return (msg, frame);
    }
    let msg = msg
        .with_deflate(&deflate_config())
        .unwrap_or_else(|e| unexpected(&e));
    let frame = msg.compressed_frame().unwrap_or(&[]).to_vec();
    // A fresh stream without context takeover makes the same bytes on every
    // connection, so the one-by-one row is checked against them too; check they
    // inflate to the text.
    assert!(
        frame.len() > 2 && frame[1] < 126 && frame[0] == 0xc1,
        "{frame:02x?}"
    );
    let mut out = Vec::new();
    Inflater::new(15, true)
        .inflate(&frame[2..], &mut out, 1 << 16)
        .unwrap_or_else(|e| unexpected(&e));
    assert_eq!(out, text.as_bytes());
    (msg, frame)
}

/// 1,000 evented server connections with drained clients.
fn mio_row(cfg: &RunConfig, peer: usize, how: How, deflate: bool) -> Measurement {
    raise_fd_limit();
    let mut b = ws::Server::builder()
        .write_buffer_size(WRITE_BUF)
        .read_buffer_size(READ_BUF);
    if deflate {
        b = b.deflate(deflate_config());
    }
    let mut server = b.bind("127.0.0.1:0").expect("bind");
    let addr = server.local_addr().expect("addr");
    let clients = connect_clients(addr, CONNECTIONS, Some(request(deflate)));
    let mut conns: Vec<ServerConnection> = (0..CONNECTIONS)
        .map(|_| {
            let mut c = server.accept().expect("accept");
            c.handshake().expect("handshake");
            assert_eq!(c.deflate().is_some(), deflate);
            c.set_blocking(false).expect("evented");
            c
        })
        .collect();
    let socks = clients.join().expect("clients");
    let text = message();
    let (msg, frame) = prepared(&text, deflate);
    let drain = Drain::spawn(peer, socks, frame.clone());
    fan_out(&mut conns, how, &msg, &text, &frame, CONNECTIONS);
    drain.wait_verified();
    let m = bench_batch(
        &per_connection(cfg),
        &mut conns,
        |_| {},
        |conns, n| fan_out(conns, how, &msg, &text, &frame, n),
    );
    drop(drain);
    m
}

/// One fan-out: the message to the first `n` connections.
#[inline]
fn fan_out(
    conns: &mut [ServerConnection],
    how: How,
    msg: &PreparedMessage,
    text: &str,
    frame: &[u8],
    n: usize,
) {
    let conns = &mut conns[..n];
    match how {
        How::Floor => {
            for c in conns {
                write_all_raw(c.as_raw_fd(), frame);
            }
        }
        How::Prepared => {
            for c in conns {
                send(c, |c| c.send_prepared(msg));
            }
        }
        How::OneByOne => {
            for c in conns {
                send(c, |c| c.send_text(text));
            }
        }
        How::QueueThenFlush => {
            for c in conns.iter_mut() {
                send(c, |c| c.queue_prepared(msg));
            }
            for c in conns {
                if let Err(e) = c.flush() {
                    unexpected(&e);
                }
            }
        }
    }
}

/// The floor's send: `send(2)` of `bytes` on `fd` with `MSG_NOSIGNAL`, as std's
/// `TcpStream::write` makes it, spinning on a short write or `EAGAIN` until all went
/// (the drained client makes room; rare at these sizes).
#[inline(always)]
fn write_all_raw(fd: RawFd, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        // SAFETY: `bytes` is a live slice of `bytes.len()` bytes for the call; `fd` is
        // the socket of a connection the caller holds open.
        let r = unsafe { libc::send(fd, bytes.as_ptr().cast(), bytes.len(), libc::MSG_NOSIGNAL) };
        if r >= 0 {
            bytes = &bytes[r as usize..];
            continue;
        }
        let e = std::io::Error::last_os_error();
        match e.kind() {
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted => {
                std::hint::spin_loop()
            }
            _ => unexpected(&e),
        }
    }
}

/// `op` on `c`, flushing and trying again while the connection pushes back.
#[inline(always)]
fn send(c: &mut ServerConnection, mut op: impl FnMut(&mut ServerConnection) -> Result<(), Error>) {
    loop {
        match op(c) {
            Ok(()) => return,
            Err(Error::Backpressure) => {
                if let Err(e) = c.flush() {
                    unexpected(&e);
                }
            }
            Err(e) => unexpected(&e),
        }
    }
}

/// 1,000 tokio server connections with drained clients.
fn tokio_row(cfg: &RunConfig, peer: usize, how: How) -> Measurement {
    use tickwire::tokio::ws::Server;
    raise_fd_limit();
    let rt = crate::suites::tokio_loopback::runtime();
    let text = message();
    let (msg, frame) = prepared(&text, false);
    rt.block_on(async {
        let mut server = Server::builder()
            .write_buffer_size(WRITE_BUF)
            .read_buffer_size(READ_BUF)
            .bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = server.local_addr().expect("addr");
        let clients = connect_clients(addr, CONNECTIONS, Some(request(false)));
        let mut conns = Vec::with_capacity(CONNECTIONS);
        for _ in 0..CONNECTIONS {
            let mut c = server.accept().await.expect("accept");
            c.handshake().await.expect("handshake");
            conns.push(c);
        }
        let socks = clients.join().expect("clients");
        let drain = Drain::spawn(peer, socks, frame);
        let send_all = async |conns: &mut Vec<tickwire::tokio::ws::ServerConnection>, n: usize| {
            for c in &mut conns[..n] {
                let r = match how {
                    How::Prepared => c.send_prepared(&msg).await,
                    _ => c.send_text(&text).await,
                };
                if let Err(e) = r {
                    unexpected(&e);
                }
            }
        };
        send_all(&mut conns, CONNECTIONS).await;
        drain.wait_verified();
        let m = bench_batch_async(&per_connection(cfg), &mut conns, send_all).await;
        drop(drain);
        m
    })
}

/// 1,000 codec connections in memory: queueing only.
fn queue_row(cfg: &RunConfig, prepared_msg: bool) -> Measurement {
    let text = message();
    let (msg, frame) = prepared(&text, false);
    let settings = Settings::default();
    let now = CodecInstant::from_nanos(0);
    let mut conns: Vec<_> = (0..CONNECTIONS)
        .map(|_| {
            let mut c =
                Connection::server(vec![0u8; READ_BUF], vec![0u8; WRITE_BUF], &settings, now);
            c.skip_handshake();
            c
        })
        .collect();
    // Check once: every connection queued exactly the frame.
    for c in &mut conns {
        let r = if prepared_msg {
            c.send_prepared(&msg)
        } else {
            c.send_text(&text)
        };
        r.unwrap_or_else(|e| unexpected(&e));
        assert_eq!(c.transmit(), frame.as_slice());
    }
    bench_batch(
        &per_connection(cfg),
        &mut conns,
        |conns| {
            for c in conns.iter_mut() {
                let n = c.transmit().len();
                c.handle_written(n);
            }
        },
        |conns, n| {
            for c in &mut conns[..n] {
                let r = if prepared_msg {
                    c.send_prepared(&msg)
                } else {
                    c.send_text(&text)
                };
                if let Err(e) = r {
                    unexpected(&e);
                }
            }
        },
    )
}
