//! The async API over any executor (feature `futures-io`): the same WebSocket
//! connections as the tokio adapter's ([`ws`]) and the same REST client ([`rest`]),
//! with the same names, over a stream of yours
//! that implements the futures-io traits (`AsyncRead`, `AsyncWrite`): smol's and
//! async-io's TCP streams, a thread-per-core runtime's, nexus-async-rt's (through a
//! small wrapper; its own traits mirror these), or anything layered on one.
//!
//! Nothing here knows the protocol or the runtime. Each WebSocket connection is the
//! driver every connection of this crate runs (the codec's state machine, the transport's TLS
//! stream, buffers that grow on demand) polled over your stream with the waker of the
//! task that awaits it: a read or write that would block leaves the waker with the
//! stream (its `poll_read` / `poll_write` returned `Pending`) and the future returns
//! `Pending`. The bytes and the state live in the connection, never in a future, so
//! dropping a future (a `select` branch that lost) loses nothing.
//!
//! A stream's `poll_close` must shut its write half (a TCP FIN): the close handshake
//! ends with it. smol's `net::TcpStream` and this module's [`TcpStream`] do;
//! async-io's `Async<TcpStream>` only flushes (wrap it: `TcpStream::from`).
//!
//! Deadlines (read, write, handshake and close timeouts, keepalive pings, dead-peer
//! detection) run on a [`Timer`]: async-io's by default, which works under any
//! executor; a runtime's own timer plugs in with a few lines (see [`Timer`]).
//!
//! # A client and an echo server on smol
//!
//! ```
//! # smol::block_on(async {
//! use tickwire::futures_io::ws::{Client, Server};
//! use tickwire::ws::{CloseCode, Message};
//!
//! let mut server = Server::bind("127.0.0.1:0")?;
//! let addr = server.local_addr()?;
//! let echo = smol::spawn(async move {
//!     let mut conn = server.accept().await?;
//!     while let Some(()) = conn
//!         .recv_with(|msg, tx| match msg {
//!             Message::Text(t) => tx.send_text(t),
//!             Message::Binary(b) => tx.send_binary(b),
//!             _ => Ok(()),
//!         })
//!         .await?
//!     {}
//!     Ok::<(), tickwire::ws::Error>(())
//! });
//!
//! // You dial (with your runtime's resolver), then hand the stream over.
//! let tcp = smol::net::TcpStream::connect(addr).await?;
//! let mut client = Client::connect_with(tcp, &format!("ws://{addr}/")).await?;
//! client.send_text("hello").await?;
//! assert_eq!(client.recv().await?, Some(Message::Text("hello")));
//! client.close(CloseCode::NORMAL, "done").await?;
//! while client.recv().await?.is_some() {}
//! echo.await?;
//! # Ok::<(), tickwire::ws::Error>(())
//! # }).unwrap();
//! ```

//! # What it costs
//!
//! Measured by the perf suite "executors" (`cargo xtask bench --filter executors
//! --instructions`; every user-space instruction of both threads per message, runtimes
//! included, callgrind; README table of 2026-11-28 09:29): a 40 B binary round trip
//! against the same tokio echo costs 4.29k instructions on smol and 4.89k on
//! nexus-async-rt against 4.82k through the tokio adapter (nexus-async-net 0.7.1 on
//! tokio, against its own echo: 4.91k). Under callgrind each side waits before it
//! writes, so the reader is always parked when the bytes arrive, and the counts repeat
//! to the decimal. Raw TCP with no codec on the same executors: 3.89k (tokio), 2.92k
//! (smol), 3.55k (nexus-async-rt): the futures-io driver is about 1.4k above its
//! executor's floor, the tokio adapter 0.93k above its own (futures-io must make the
//! read that arms the wake-up; tokio's readiness lets the adapter skip it). Receiving a
//! stream of 128 B messages: 278 per message on smol and 279 on nexus-async-rt against
//! 326-372 through the tokio adapter (nexus-async-net: 407). In time the round trip is the
//! kernel's wake-ups: every row sits at its executor's raw-TCP floor (p50 within 1-3%).
//!
//! On nexus-async-rt, wrap its timer as the [`Timer`] docs show: its wheel cannot
//! cancel an entry, so a dropped sleep's entry (the handshake timeout's, 10 s) would be
//! walked by every turn of the runtime until it fires, about 350 instructions per round
//! trip; the adapter's entries reach at most 20 ms ahead.

mod io;
pub mod rest;
mod tcp;
pub mod ws;

pub use io::Timer;
pub use tcp::TcpStream;
