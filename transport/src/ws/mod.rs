//! WebSocket over mio: [`Client`], [`Server`] and [`ServerConnection`].
//!
//! The transport is thin: it moves bytes between mio sockets and the `tickwire-codec`
//! reader and writer, which do all framing, validation and close codes. Each
//! connection can be driven two ways by the same code:
//!
//! - **blocking**: calls wait, within the configured timeouts, on a private
//!   [`mio::Poll`] per connection; with no deadline in play (no read or write
//!   timeout, no close under way) the socket itself is put in blocking mode and a
//!   wait is one `read(2)` or `write(2)` sleeping in the kernel (no `EAGAIN` read and
//!   `epoll_wait` before it);
//! - **evented**: the connection is a [`mio::event::Source`]; register it in your own
//!   poll and on readiness drain it with `try_recv` and `flush`. A send that meets a
//!   full socket keeps the rest in the bounded write buffer; a send that does not fit
//!   the buffer returns [`Error::Backpressure`].
//!
//! One message to many connections: [`PreparedMessage`] is encoded once and sent with
//! [`ServerConnection::send_prepared`] on each.
//!
//! A client that stays connected: [`Reconnecting`] connects, runs a hook on every
//! (re)connection (to subscribe), and on a lost connection reports the [`Cause`] and
//! connects again after a [`Backoff`] with jitter.
//!
//! Buffers are allocated when a connection is set up, never per message; received
//! messages borrow the read buffer ([`Message`]). A server connection's buffers start
//! small and grow on demand up to the configured sizes, and an evented one gives the
//! growth back when idle ([`ServerBuilder::initial_buffer_size`]).
//!
//! [`mio::Poll`]: https://docs.rs/mio/1/mio/struct.Poll.html
//! [`mio::event::Source`]: https://docs.rs/mio/1/mio/event/trait.Source.html

mod api;
pub(crate) mod backoff;
mod class;
mod client;
pub(crate) mod conn;
mod doc_pair;
pub(crate) mod error;
mod grow;
pub(crate) mod options;
mod prepared;
mod reconnect;
mod sender;
mod server;
mod shutdown;
pub(crate) mod stream;
mod upgrade;
pub mod url;
pub(crate) mod wait;

pub use crate::error::ErrorClass;
pub use backoff::{Backoff, Schedule};
pub use client::{Client, ClientBuilder};
#[doc(hidden)]
pub use doc_pair::doc_pair;
pub use error::Error;
#[cfg(feature = "tokio")]
pub(crate) use reconnect::Reconnector;
pub use reconnect::{Cause, Disconnect, Event, Reconnecting, ReconnectingBuilder};
pub use sender::Sender;
pub use server::{Server, ServerBuilder, ServerConnection};
pub use shutdown::ShutdownHandle;
/// permessage-deflate settings and the parameters a connection agreed on (feature
/// `deflate`): `ClientBuilder::deflate`, `ServerBuilder::deflate`, the connections'
/// `deflate()`.
#[cfg(feature = "deflate")]
pub use tickwire_codec::ws::deflate::{DeflateConfig, Negotiated};
pub use tickwire_codec::ws::handshake::HandshakeError;
pub use tickwire_codec::ws::{
    CloseCode, CloseFrame, EncodeError, Error as ProtocolError, Message, PreparedMessage,
};
pub use upgrade::{Decision, UpgradeRequest};
pub use url::{Url, UrlError};
