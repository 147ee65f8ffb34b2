//! Buffers that start small and grow on demand: a server connection begins with
//! [`initial_buffer_size`](super::ServerBuilder::initial_buffer_size)-byte read and
//! write buffers and moves to bigger ones (doubling, up to the configured read and write
//! buffer sizes) when a frame or a message does not fit, or when a read fills all the
//! room it had (the socket has more: a stream); an evented connection goes back to
//! small buffers when it is idle (a `try_recv` that finds nothing, with nothing
//! buffered). So an idle subscriber holds a few KiB, not the full message limit, and
//! the limits are those of the full-size buffers.
//!
//! The checks stay off the hot path: growth is tried only where the codec reports no
//! room (an empty read buffer, a refused send) or a read came back full; shrinking only
//! on the idle path, once grown.

use tickwire_codec::ws::connection::CONTROL_ROOM;

use super::conn::{Tx, Ws};
use tickwire_codec::ws::Masking;

/// The sizes of one connection's buffers: now, and the most they may grow to.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Buffers {
    read: usize,
    write: usize,
    read_max: usize,
    write_max: usize,
    initial_read: usize,
    initial_write: usize,
}

impl Buffers {
    /// Buffers allocated in full at the start: they never change.
    pub fn fixed() -> Self {
        Buffers {
            read: 0,
            write: 0,
            read_max: 0,
            write_max: 0,
            initial_read: 0,
            initial_write: 0,
        }
    }

    /// Buffers that start at `read` and `write` bytes and may grow to `read_max` and
    /// `write_max`.
    pub fn growing(read: usize, write: usize, read_max: usize, write_max: usize) -> Self {
        Buffers {
            read,
            write,
            read_max,
            write_max,
            initial_read: read,
            initial_write: write,
        }
    }

    /// The read buffer's size now (0 for fixed buffers).
    pub fn read_capacity(&self) -> usize {
        self.read
    }

    /// The write buffer's size now (0 for fixed buffers).
    pub fn write_capacity(&self) -> usize {
        self.write
    }

    /// Whether the read buffer may still grow.
    #[inline]
    pub fn read_can_grow(&self) -> bool {
        self.read < self.read_max
    }

    /// Whether the write buffer may still grow.
    #[inline]
    pub fn write_can_grow(&self) -> bool {
        self.write < self.write_max
    }

    /// Whether a buffer is bigger than it started.
    #[inline]
    pub fn grown(&self) -> bool {
        self.read > self.initial_read || self.write > self.initial_write
    }

    /// The write buffer's room for one application message at its largest.
    pub fn write_limit(&self) -> usize {
        self.write_max.saturating_sub(CONTROL_ROOM)
    }

    /// Double the read buffer (up to its maximum). `false`: it cannot grow.
    #[cold]
    #[inline(never)]
    pub fn grow_read<M: Masking>(&mut self, ws: &mut Ws<M>) -> bool {
        if !self.read_can_grow() {
            return false;
        }
        let size = self.read.saturating_mul(2).min(self.read_max);
        match ws.replace_read_storage(vec![0u8; size]) {
            Ok(_) => {
                self.read = size;
                true
            }
            Err(_) => false,
        }
    }

    /// Grow the write buffer so that a message of `need` bytes on the wire fits beside
    /// what waits (at least doubling, up to its maximum). `false`: it cannot grow.
    #[cold]
    #[inline(never)]
    pub fn grow_write<M: Masking>(&mut self, tx: &mut Tx<M>, need: usize) -> bool {
        if !self.write_can_grow() {
            return false;
        }
        let want = tx
            .pending()
            .saturating_add(need)
            .saturating_add(CONTROL_ROOM);
        let size = self.write.saturating_mul(2).max(want).min(self.write_max);
        match tx.replace_write_storage(vec![0u8; size]) {
            Ok(_) => {
                self.write = size;
                true
            }
            Err(_) => false,
        }
    }

    /// Idle: give back what grew, where nothing is buffered.
    #[cold]
    #[inline(never)]
    pub fn shrink<M: Masking>(&mut self, ws: &mut Ws<M>) {
        if self.read > self.initial_read
            && ws.read_storage_in_use() == 0
            && ws
                .replace_read_storage(vec![0u8; self.initial_read])
                .is_ok()
        {
            self.read = self.initial_read;
        }
        if self.write > self.initial_write
            && !ws.wants_write()
            && ws
                .replace_write_storage(vec![0u8; self.initial_write])
                .is_ok()
        {
            self.write = self.initial_write;
        }
    }
}
