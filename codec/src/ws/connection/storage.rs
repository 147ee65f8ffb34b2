//! Buffers that grow and shrink: a driver that starts a connection on small buffers
//! moves it to bigger ones when a frame or a message does not fit, up to the sizes it
//! set the limits for ([`FrameReader::set_limits`](crate::ws::FrameReader::set_limits)),
//! and back to small ones when the connection is idle. The connection never allocates:
//! the driver brings each buffer and gets the old one back.

use super::{Connection, Hs};
use crate::ws::Masking;

impl<R, W, M> Connection<R, W, M>
where
    R: AsRef<[u8]> + AsMut<[u8]>,
    W: AsRef<[u8]> + AsMut<[u8]>,
    M: Masking,
{
    /// Bytes of the read storage in use (handshake bytes included; see
    /// [`FrameReader::storage_in_use`](crate::ws::FrameReader::storage_in_use)): the
    /// least a replacement must hold. 0 when the connection holds no received bytes.
    pub fn read_storage_in_use(&self) -> usize {
        self.reader.storage_in_use() + self.head_bytes()
    }

    /// Handshake bytes read into the reader's spare room (not committed).
    fn head_bytes(&self) -> usize {
        if matches!(self.hs, Hs::Done) {
            0
        } else {
            self.hs_got
        }
    }

    /// Move the reader to `storage`, which must hold
    /// [`read_storage_in_use`](Self::read_storage_in_use) bytes (copied to the same
    /// offsets; a handshake or a message in progress carries on). Returns the old
    /// storage, or `Err(storage)` (nothing changed) when it is too small.
    pub fn replace_read_storage(&mut self, storage: R) -> Result<R, R> {
        let hs = self.head_bytes();
        self.reader.replace_storage_keeping(storage, hs)
    }

    /// Move the output buffer to `storage`, which must hold the bytes waiting to be
    /// written ([`Sender::pending`](super::Sender::pending)); they are copied to its
    /// front. Application messages always leave
    /// [`CONTROL_ROOM`](super::CONTROL_ROOM) of it free. Returns the old storage, or
    /// `Err(storage)` (nothing changed) when it is too small.
    pub fn replace_write_storage(&mut self, storage: W) -> Result<W, W> {
        self.tx.out().replace_storage(storage)
    }
}
