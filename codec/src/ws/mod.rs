//! WebSocket (RFC 6455): frames, messages, close codes and the opening handshake.
//!
//! - [`FrameReader`]: bytes in, [`Message`]s out, borrowed from its buffer.
//! - [`FrameWriter`]: messages out, into a slice or a [`WriteBuf`](crate::buf::WriteBuf).
//! - [`handshake`]: the HTTP upgrade, both sides.
//! - [`client_pair`], [`server_pair`]: a reader and a writer for one connection.
//! - [`Connection`]: the whole connection state machine (handshake, close, pongs,
//!   keepalive, timeouts) over a reader and a writer, with time passed in.

pub mod close;
pub mod connection;
#[cfg(feature = "deflate")]
pub mod deflate;
pub mod error;
pub mod frame;
pub mod handshake;
pub mod message;
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
pub use reader::{Compressed, Config, FrameReader};
pub use writer::{FrameWriter, Masking};

use crate::rand::{MaskSource, NoMask};

/// A client's reader and writer: the reader decodes into `storage` with `config`'s
/// limits (and refuses masked frames); the writer masks every frame with keys from
/// `mask`.
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
/// limits (and insists on masked frames); the writer never masks.
pub fn server_pair<B>(storage: B, config: Config) -> (FrameReader<B>, FrameWriter<NoMask>)
where
    B: AsRef<[u8]> + AsMut<[u8]>,
{
    (
        FrameReader::with_config(Role::Server, storage, config),
        FrameWriter::server(),
    )
}
