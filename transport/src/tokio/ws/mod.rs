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
//!
//! The names, receivers and return types are the blocking API's (checked by
//! `tests/vocabulary.rs`), with these deliberate differences: the calls are `async fn`s;
//! the blocking API's evented-mode calls (`try_recv`, `try_recv_with`, `try_accept`,
//! `try_handshake`, `queue_prepared`, `set_blocking`, `is_blocking`, `timeout_at`,
//! `handle_timeout`, and `shutdown_handle`, which wakes a thread blocked in `recv`) have
//! no counterpart here, since the reactor and the runtime's timers do their job and every
//! future is cancellation-safe (a `select!` branch is the way not to wait, or to stop
//! waiting); this API adds [`Client::split`], `into_messages`,
//! [`ServerConnection::try_send_prepared`] and [`WriteHalf::try_send_prepared`] (send to
//! many connections from one task without awaiting the slowest).
//! `ServerConnection::split` is `async` where `Client::split` is not: a server
//! connection's opening handshake may still be pending (`accept` leaves it to first
//! use), and it is finished before the halves part.

mod api;
mod builder;
mod client;
mod doc_pair;
pub(crate) mod readiness;
mod reconnect;
mod server;
mod split;
#[cfg(feature = "futures")]
mod stream;

pub use crate::ws::{Backoff, Cause, Disconnect, Event, Schedule};
pub use crate::ws::{CloseCode, CloseFrame, Error, Message, PreparedMessage};
pub use client::{Client, ClientBuilder};
#[doc(hidden)]
pub use doc_pair::doc_pair;
pub use reconnect::{Reconnecting, ReconnectingBuilder};
pub use server::{Server, ServerBuilder, ServerConnection};
pub use split::{ReadHalf, WriteHalf};
#[cfg(feature = "futures")]
pub use stream::Messages;
#[cfg(feature = "futures")]
pub use tickwire_codec::ws::OwnedMessage;
