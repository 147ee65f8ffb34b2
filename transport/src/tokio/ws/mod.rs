//! Async WebSocket: [`Client`], [`Server`] and [`ServerConnection`] on tokio.
//!
//! Same method names as the blocking [`crate::ws`] API, awaited:
//! `recv().await` returns a [`Message`] borrowing the read buffer (zero-copy) and is
//! cancellation-safe; `send_text(&str).await` (and `send_binary`, `send_ping`,
//! `send_pong`, `close`) queue into the bounded write buffer, awaiting room when it is
//! full (backpressure), and return once the bytes are written to the socket. Pings are
//! answered automatically and the close handshake is bounded by the close timeout.
//! `wss://` runs through the transport's TLS stream (the codec's `TlsCodec`).
//! `split()` gives a [`ReadHalf`] and a [`WriteHalf`] for two tasks.

mod api;
mod builder;
mod client;
mod readiness;
mod server;
mod split;

pub use crate::ws::{CloseCode, CloseFrame, Error, Message};
pub use client::{Client, ClientBuilder};
pub use server::{Server, ServerBuilder, ServerConnection};
pub use split::{ReadHalf, WriteHalf};
