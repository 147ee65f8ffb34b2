//! WebSocket (RFC 6455): frames, messages, close codes and the opening handshake.
//!
//! - [`FrameReader`]: bytes in, [`Message`]s out, borrowed from its buffer.
//! - [`FrameWriter`]: messages out, into a slice or a [`WriteBuf`](crate::buf::WriteBuf).
//! - [`handshake`]: the HTTP upgrade, both sides.
//! - [`pair`]: a reader and a writer for one connection.
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

use crate::rand::MaskSource;

/// A reader and a writer for one connection in `role`: the reader decodes
/// into `storage` with `config`'s limits; a client writer masks with keys
/// from `mask` (a server writer never uses it).
pub fn pair<B, M>(
    role: Role,
    storage: B,
    config: Config,
    mask: M,
) -> (FrameReader<B>, FrameWriter<M>)
where
    B: AsRef<[u8]> + AsMut<[u8]>,
    M: MaskSource,
{
    (
        FrameReader::with_config(role, storage, config),
        FrameWriter::new(role, mask),
    )
}
