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
//! Works on a `current_thread` runtime with a `LocalSet` and on the multi-thread
//! runtime (the connections are `Send`). Unix only (readiness through `AsyncFd`).
//!
//! TLS (`wss://`) is the transport's own TLS stream, the codec's `TlsCodec` over
//! rustls's unbuffered API, driven by the same readiness; tokio-rustls is not used
//! (no second TLS path to keep correct; not measured against it yet).

pub mod rest;
pub mod ws;
