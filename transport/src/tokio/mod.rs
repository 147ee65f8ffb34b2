//! The tokio adapter (feature `tokio`, Unix): the same WebSocket connections as
//! [`crate::ws`], awaited instead of blocking, and the same REST client and pool as
//! [`crate::rest`] ([`rest`]).
//!
//! Nothing here knows the protocol. Each async connection owns an evented
//! [`crate::ws`] connection (the codec's reader, writer and close state machine, and
//! the transport's TLS stream) and registers its socket with tokio's reactor
//! ([`::tokio::io::unix::AsyncFd`]): every call first does the non-blocking step, and
//! only when the socket would block does it await readiness. So the bytes and the
//! state live in the connection, never in a future, and dropping a future (a
//! `tokio::select!` branch that lost) loses nothing.
//!
//! # A client, an echo server and REST, awaited
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use tickwire::tokio::{rest, ws};
//! use tickwire::ws::{CloseCode, Message};
//!
//! // An echo server: each reply is written from the received message, no copy.
//! let mut server = ws::Server::bind("127.0.0.1:0").await?;
//! let url = format!("ws://{}/", server.local_addr()?);
//! tokio::spawn(async move {
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
//! // A client.
//! let mut client = ws::Client::connect(&url).await?;
//! client.send_text("hello").await?;
//! assert_eq!(client.recv().await?, Some(Message::Text("hello")));
//! client.close(CloseCode::NORMAL, "done").await?;
//! while client.recv().await?.is_some() {}
//!
//! // REST: GET and POST JSON, one expression each (a stand-in server on 127.0.0.1).
//! # let api = format!("http://{}/api/v3", tickwire::rest::doc_server());
//! let mut rest = rest::Client::connect(&api).await?;
//! let time = rest.get("/time").send().await?;
//! assert_eq!(time.body_str()?, "GET /api/v3/time");
//! let order = rest.post("/order").json_bytes(br#"{"qty":"0.01"}"#).send().await?;
//! assert_eq!(order.status(), 200);
//! # Ok(())
//! # }
//! ```
//!
//! `wss://` and `https://` with a private CA: the builders' `tls(..)` takes the same
//! [`TlsConfig`](crate::tls::TlsConfig) as the blocking ones (see the crate's front
//! page).
//!
//! Works on a `current_thread` runtime with a `LocalSet` and on the multi-thread
//! runtime (the connections are `Send`). Unix only (readiness through `AsyncFd`).
//!
//! TLS (`wss://`, and `https://` in [`rest`]) is the transport's own TLS stream, the
//! codec's `TlsCodec` over rustls's unbuffered API, driven by the same readiness;
//! tokio-rustls is not used. Measured against it (perf suite "tokio loopback", TLS
//! rows: tokio-tungstenite 0.30 over tokio-rustls 0.26 with the same rustls 0.23
//! configs, ring, TLS 1.3, each side on a `current_thread` runtime, echo on the other
//! core): per round trip of a 40 B binary message, 10.9k user-space instructions
//! (client and echo threads, runtimes included, callgrind) against 44.8k, 4.1x fewer
//! (77 B JSON text: 11.3k against 45.1k); over plain TCP 4.6k against 35.0k
//! (fastwebsockets 0.10 on tokio: 5.1k; nexus-async-net 0.7.1 on tokio: 4.7k). In time
//! the round trip is dominated by the kernel's wake-ups, which both pay (about
//! 1.05-1.1x faster on a shared, loaded 2-core machine). Our path wins on both counts and
//! keeps one TLS implementation, so the choice stays.
//!
//! Waiting costs one system call per message more than the blocking path: a blocking
//! connection sleeps in its socket's read (send, recv per hop), an async one in the
//! reactor's `epoll_wait` and then reads (send, `epoll_wait`, recv), as tokio's own
//! sockets do (after a short read the next read waits for readiness first, so no
//! read ends in `WouldBlock`). A `recv` without a deadline is one poll function: it
//! answers "nothing now" at once after a read that drained the socket, polls
//! `poll_read_ready` (the waker kept in the registration's slot), and after the
//! wake-up takes and clears the readiness before reading; a send returns without a
//! second flush when the evented call wrote everything. Against the same echo server
//! the tokio client costs about 1.5k instructions per round trip more than the
//! blocking one (4.6k against 3.2k for 40 B over plain TCP, both threads counted): tokio's park, timer and I/O driver,
//! reactor dispatch, wake-up and scheduler loop (with its busy-time clock reads)
//! about 1.0k, the two readiness polls per message 0.18k, our futures and the
//! benchmark's own async loop the rest. After a read that drained the socket a `recv`
//! goes straight to the readiness wait (no pass through the receive loop to learn
//! that nothing is buffered), and `recv`, `recv_with` and the sends are each one
//! state machine (no `async fn` awaiting another on the way).

pub mod rest;
pub mod ws;
