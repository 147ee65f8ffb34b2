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
//! TLS (`wss://`, and `https://` in [`rest`]) is the transport's own TLS stream, the
//! codec's `TlsCodec` over rustls's unbuffered API, driven by the same readiness;
//! tokio-rustls is not used. Measured against it (perf suite "tokio loopback", TLS
//! rows: tokio-tungstenite 0.30 over tokio-rustls 0.26 with the same rustls 0.23
//! configs, ring, TLS 1.3, each side on a `current_thread` runtime, echo on the other
//! core): per round trip of a 40 B binary message, 8.6k user-space instructions (both
//! threads, runtime included, callgrind) against 22.7k, 2.6x fewer (77 B JSON text:
//! 8.9k against 23.0k); in time (p50, median of 5 runs on a shared 2-core machine,
//! load ~4.5) 106k against 113k TSC ticks (40 B) and 105k against 116k (77 B), 1.06x
//! and 1.11x: the round trip is dominated by the kernel's wake-ups, which both pay.
//! Our path wins on both counts and keeps one TLS implementation, so the choice stays.
//!
//! Cost over the blocking path: the same system calls per message (one send, one
//! receive, one `epoll_wait`: after a short read the next read waits for readiness
//! first, as tokio's own sockets do), plus tokio's `block_on`, park and reactor
//! dispatch, about 2.4k instructions per round trip (3.6k against 1.2k for 40 B over
//! plain TCP; tokio-tungstenite: 17.9k). Timed in the same run the async round trip
//! was within 0.97x-1.11x of the blocking one (medians of 5 runs, see the suite's
//! "tickwire (blocking)" rows).

pub mod rest;
pub mod ws;
