//! WebSocket (RFC 6455): frames, messages, close codes and the opening handshake.
//!
//! - [`FrameReader`]: bytes in, [`Message`]s out, borrowed from its buffer.
//! - [`FrameWriter`]: messages out, into a slice or a [`WriteBuf`](crate::buf::WriteBuf).
//! - [`handshake`]: the HTTP upgrade, both sides.
//! - [`client_pair`], [`server_pair`]: a reader and a writer for one connection.
//! - [`Connection`]: the whole connection state machine (handshake, close, pongs,
//!   keepalive, timeouts) over a reader and a writer, with time passed in.
//! - [`PreparedMessage`] (feature `alloc`): a message encoded once, sent on many
//!   server connections.

pub mod close;
pub mod connection;
#[cfg(feature = "deflate")]
pub mod deflate;
pub mod error;
pub mod frame;
pub mod handshake;
pub mod message;
#[cfg(feature = "alloc")]
pub mod prepared;
pub mod reader;
pub mod writer;

#[cfg(test)]
mod limits_tests;
#[cfg(test)]
mod tests;

pub use close::{CloseCode, CloseFrame};
pub use connection::{Answer, Connection, ConnectionError, Sender, Settings, State};
pub use error::{EncodeError, Error};
pub use frame::{OpCode, Role};
pub use message::Message;
#[cfg(feature = "alloc")]
pub use message::OwnedMessage;
#[cfg(feature = "alloc")]
pub use prepared::PreparedMessage;
pub use reader::{Compressed, Config, FrameReader};
pub use writer::{FrameWriter, Masking};

use crate::rand::{MaskSource, NoMask};

/// A client's reader and writer: the reader decodes into `storage` with `config`'s
/// limits (and refuses masked frames); the writer masks every frame with keys from
/// `mask`.
///
/// ```
/// use tickwire_codec::rand::MaskRng;
/// use tickwire_codec::ws::{Config, Message, client_pair, server_pair};
///
/// let (_, mut client_tx) = client_pair([0u8; 512], Config::default(), MaskRng::from_seed([1; 32]));
/// let (mut server_rx, _) = server_pair([0u8; 512], Config::default());
/// let mut wire = [0u8; 64];
/// let n = client_tx.encode_text("hello", &mut wire).unwrap();
/// server_rx.feed(&wire[..n]);
/// assert_eq!(server_rx.next(), Ok(Some(Message::Text("hello"))));
/// ```
pub fn client_pair<B, M>(storage: B, config: Config, mask: M) -> (FrameReader<B>, FrameWriter<M>)
where
    B: AsRef<[u8]> + AsMut<[u8]>,
    M: MaskSource,
{
    (
        FrameReader::with_config(Role::Client, storage, config),
        FrameWriter::client(mask),
    )
}

/// A server's reader and writer: the reader decodes into `storage` with `config`'s
/// limits (and insists on masked frames); the writer never masks (see
/// [`client_pair`] for an example).
pub fn server_pair<B>(storage: B, config: Config) -> (FrameReader<B>, FrameWriter<NoMask>)
where
    B: AsRef<[u8]> + AsMut<[u8]>,
{
    (
        FrameReader::with_config(Role::Server, storage, config),
        FrameWriter::server(),
    )
}
