//! Async WebSocket: [`Client`], [`Server`] and [`ServerConnection`] on tokio.
//!
//! Same method names as the blocking [`crate::ws`] API, awaited:
//! `recv().await` returns a [`Message`] borrowing the read buffer (zero-copy) and is
//! cancellation-safe; `send_text(&str).await` (and `send_binary`, `send_ping`,
//! `send_pong`, `close`) queue into the bounded write buffer, awaiting room when it is
//! full (backpressure), and return once the bytes are written to the socket. Pings are
//! answered automatically and the close handshake is bounded by the close timeout.
//! `wss://` runs through the transport's TLS stream (the codec's `TlsCodec`).
//! `split()` gives a [`ReadHalf`] and a [`WriteHalf`] for two tasks. With feature
//! `futures`, `into_messages()` gives a `Stream`/`Sink` of owned messages (the slower
//! path: one allocation per received message).

mod api;
mod builder;
mod client;
pub(crate) mod readiness;
mod server;
mod split;
#[cfg(feature = "futures")]
mod stream;

pub use crate::ws::{CloseCode, CloseFrame, Error, Message, PreparedMessage};
pub use client::{Client, ClientBuilder};
pub use server::{Server, ServerBuilder, ServerConnection};
pub use split::{ReadHalf, WriteHalf};
#[cfg(feature = "futures")]
pub use stream::Messages;
#[cfg(feature = "futures")]
pub use tickwire_codec::ws::OwnedMessage;
