//! Async WebSocket over any executor: [`Client`], [`Server`] and [`ServerConnection`]
//! over a futures-io stream of yours (or async-io's TCP, which [`Server`] accepts).
//!
//! The tokio connections' API ([`crate::tokio::ws`]) with the same names, receivers and
//! errors: `recv().await` returns a [`Message`] borrowing the read buffer (zero-copy)
//! and is cancellation-safe; `recv_with` answers a message while it is borrowed; the
//! sends (`send_text`, `send_binary`, `send_ping`, `send_pong`, `close`) queue into the
//! bounded write buffer, await room when it is full (backpressure) and return once the
//! bytes are written; pings are answered automatically, the close handshake is bounded
//! by the close timeout, keepalive pings and dead-peer detection run while `recv` waits;
//! `split()` gives a [`ReadHalf`] and a [`WriteHalf`] for two tasks. `wss://` (and a
//! server with a TLS config) runs through the transport's TLS stream over your stream.
//!
//! Differences, all from the stream being yours: connections are generic over the
//! stream `T` and the timer `Tm` ([`Timer`](crate::futures_io::Timer)); a client
//! connects with `connect_with(stream, url)` (you dial, with your runtime's resolver);
//! socket options are set on the socket you made (the builders have none);
//! `get_ref()` gives the stream back where the tokio connections have `local_addr`.

mod api;
mod client;
mod doc_pair;
mod driver;
mod server;
mod split;

pub use crate::ws::{CloseCode, CloseFrame, Error, Message};
pub use client::{Client, ClientBuilder};
#[doc(hidden)]
pub use doc_pair::{doc_pair, doc_server};
pub use server::{Server, ServerBuilder, ServerConnection};
pub use split::{ReadHalf, WriteHalf};

/// The builders' connection settings, forwarded to the blocking builder each wraps
/// (one set of options, one set of defaults). Each builder has
/// `fn map(self, f) -> Self` applying `f` to its blocking builder.
macro_rules! forward_settings {
    ($ty:ident) => {
        impl<Tm> $ty<Tm> {
            /// Read buffer capacity in bytes (default 1 MiB, which is also the default
            /// message limit; see the blocking builder).
            pub fn read_buffer_size(self, bytes: usize) -> Self {
                self.map(|b| b.read_buffer_size(bytes))
            }

            /// Write buffer capacity in bytes: the bound of the send backpressure.
            pub fn write_buffer_size(self, bytes: usize) -> Self {
                self.map(|b| b.write_buffer_size(bytes))
            }

            /// Largest accepted frame payload (close code 1009 beyond).
            pub fn max_frame_size(self, bytes: usize) -> Self {
                self.map(|b| b.max_frame_size(bytes))
            }

            /// Largest accepted message (close code 1009 beyond); the read buffer grows
            /// to hold it.
            pub fn max_message_size(self, bytes: usize) -> Self {
                self.map(|b| b.max_message_size(bytes))
            }

            /// Answer pings automatically (default on).
            pub fn auto_pong(self, on: bool) -> Self {
                self.map(|b| b.auto_pong(on))
            }

            /// Split outgoing messages into frames of at most `bytes` (default 0: never).
            pub fn fragment_size(self, bytes: usize) -> Self {
                self.map(|b| b.fragment_size(bytes))
            }

            /// Time allowed for the opening handshake (default 10 s).
            pub fn handshake_timeout(self, t: std::time::Duration) -> Self {
                self.map(|b| b.handshake_timeout(t))
            }

            /// Time the peer has to answer our close frame (default 5 s).
            pub fn close_timeout(self, t: std::time::Duration) -> Self {
                self.map(|b| b.close_timeout(t))
            }

            /// Longest a `recv` waits (default: forever; `Error::ReadTimeout`,
            /// connection unchanged).
            pub fn read_timeout(self, t: Option<std::time::Duration>) -> Self {
                self.map(|b| b.read_timeout(t))
            }

            /// Longest a send or flush waits for the stream (default: forever).
            pub fn write_timeout(self, t: Option<std::time::Duration>) -> Self {
                self.map(|b| b.write_timeout(t))
            }

            /// Send a ping whenever nothing was received for `t` (default: never). The
            /// connection's own timer, run while `recv` waits.
            ///
            /// ```
            /// # smol::block_on(async {
            /// # let (url, tcp) = tickwire::futures_io::ws::doc_server().await?;
            /// use std::time::Duration;
            ///
            /// // A quiet feed: ping after 15 s without a byte from the server, give up
            /// // (`Error::DeadPeer`) after 45 s without one.
            /// let ws = tickwire::futures_io::ws::Client::builder()
            ///     .keepalive(Some(Duration::from_secs(15)))
            ///     .dead_peer_timeout(Some(Duration::from_secs(45)))
            ///     .connect_with(tcp, &url)
            ///     .await?;
            /// # Ok::<(), tickwire::ws::Error>(())
            /// # }).unwrap();
            /// ```
            pub fn keepalive(self, t: Option<std::time::Duration>) -> Self {
                self.map(|b| b.keepalive(t))
            }

            /// Fail the connection with `Error::DeadPeer` when nothing was received for
            /// `t` (default: never). It bounds sends and flushes too (see the blocking
            /// builder).
            ///
            /// ```
            /// # smol::block_on(async {
            /// # let (url, tcp) = tickwire::futures_io::ws::doc_server().await?;
            /// use std::time::Duration;
            ///
            /// let ws = tickwire::futures_io::ws::Client::builder()
            ///     .keepalive(Some(Duration::from_millis(500)))
            ///     .dead_peer_timeout(Some(Duration::from_secs(2)))
            ///     .connect_with(tcp, &url)
            ///     .await?;
            /// # Ok::<(), tickwire::ws::Error>(())
            /// # }).unwrap();
            /// ```
            pub fn dead_peer_timeout(self, t: Option<std::time::Duration>) -> Self {
                self.map(|b| b.dead_peer_timeout(t))
            }

            /// Add a header (client: to the request; server: to every `101`).
            pub fn header(self, name: &str, value: &str) -> Self {
                self.map(|b| b.header(name, value))
            }

            /// Offer (client) or support (server) a subprotocol.
            pub fn protocol(self, protocol: &str) -> Self {
                self.map(|b| b.protocol(protocol))
            }

            /// permessage-deflate (see the blocking builder; feature `deflate`).
            ///
            /// ```
            /// # smol::block_on(async {
            /// # let (url, tcp) = tickwire::futures_io::ws::doc_server().await?;
            /// use tickwire::ws::DeflateConfig;
            ///
            /// let ws = tickwire::futures_io::ws::Client::builder()
            ///     .deflate(DeflateConfig::default())
            ///     .connect_with(tcp, &url)
            ///     .await?;
            /// // The documentation server does not compress: nothing was agreed.
            /// assert!(ws.deflate().is_none());
            /// # Ok::<(), tickwire::ws::Error>(())
            /// # }).unwrap();
            /// ```
            #[cfg(feature = "deflate")]
            pub fn deflate(self, config: tickwire_codec::ws::deflate::DeflateConfig) -> Self {
                self.map(|b| b.deflate(config))
            }
        }
    };
}

pub(crate) use forward_settings;
