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
//! included, callgrind; README table of 2026-11-28 05:34): a 40 B binary round trip
//! against the same tokio echo costs 4.67k instructions on smol and 5.14k on
//! nexus-async-rt against 4.64k through the tokio adapter (nexus-async-net 0.7.1 on
//! tokio, against its own echo: 4.71k; raw TCP with no codec on the same executors:
//! 3.37k to 3.69k). The smol and nexus-async-rt rows move by up to 1k from run to run
//! (3.3k to 5.5k): whether the echo's reply is already there at the first read depends
//! on how callgrind schedules the two threads; with valgrind's `--fair-sched=yes` they
//! count 5.3k-5.4k (smol) and 5.18k (nexus-async-rt), about 1.8k above their floors
//! where the tokio adapter is 0.95k above its own. Receiving a stream of 128 B
//! messages: 327 per message on smol and 338 on nexus-async-rt against 370 through the
//! tokio adapter (nexus-async-net: 407). In time the round trip is the kernel's
//! wake-ups: on a loaded 2-core machine every row sits at its executor's raw-TCP floor
//! (median ratios 1.02-1.04 against 0.99-1.02 for the floors).

mod io;
pub mod rest;
mod tcp;
pub mod ws;

pub use io::Timer;
pub use tcp::TcpStream;
