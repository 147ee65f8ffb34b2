//! Buffers over caller-owned storage.
//!
//! Both buffers are generic over `B: AsRef<[u8]> + AsMut<[u8]>`, so a caller
//! can hand them a `[u8; N]`, a `&mut [u8]`, a `heapless::Vec` or a `Vec<u8>`.
//! They never grow and never allocate; running out of room is a value.
//!
//! - [`ReadBuf`]: bytes arrive at the end (`spare_mut` + `commit`) and are
//!   consumed from the front.
//! - [`WriteBuf`]: bytes to send, drained from the front after a (possibly
//!   partial) write. It keeps [`HEADROOM`] bytes free in front of a payload
//!   that is serialized in place, so a frame header can be prepended without
//!   moving the payload: one contiguous slice for the syscall.

use crate::simd::copy::copy;

/// Room kept in front of an in-place payload: the largest WebSocket header
/// (2 + 8 bytes of length + 4 bytes of masking key).
pub const HEADROOM: usize = 14;

/// The buffer has no room for what was asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BufferFull;

impl core::fmt::Display for BufferFull {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("buffer full")
    }
}

impl core::error::Error for BufferFull {}

/// A receive buffer: filled at the end, consumed from the front.
#[derive(Debug, Clone)]
pub struct ReadBuf<B> {
    storage: B,
    start: usize,
    end: usize,
}

impl<B: AsRef<[u8]> + AsMut<[u8]>> ReadBuf<B> {
    /// An empty buffer over `storage`; its capacity is `storage.as_ref().len()`.
    ///
    /// ```
    /// use tickwire_codec::buf::ReadBuf;
    ///
    /// let mut buf = ReadBuf::new([0u8; 64]); // any storage: an array, a Vec, a &mut [u8]
    /// let spare = buf.spare_mut(); // read(2) into this ...
    /// spare[..5].copy_from_slice(b"hello");
    /// buf.commit(5); // ... then commit what arrived
    /// assert_eq!(buf.data(), b"hello");
    /// buf.consume(2);
    /// assert_eq!(buf.data(), b"llo");
    /// ```
    pub fn new(storage: B) -> Self {
        ReadBuf {
            storage,
            start: 0,
            end: 0,
        }
    }

    /// Total capacity in bytes.
    #[inline]
    pub fn capacity(&self) -> usize {
        self.storage.as_ref().len()
    }

    /// Bytes received and not yet consumed.
    #[inline]
    pub fn data(&self) -> &[u8] {
        &self.storage.as_ref()[self.start..self.end]
    }

    /// Bytes received and not yet consumed, mutable (e.g. to unmask in place).
    #[inline]
    pub fn data_mut(&mut self) -> &mut [u8] {
        let (s, e) = (self.start, self.end);
        &mut self.storage.as_mut()[s..e]
    }

    /// Number of unconsumed bytes.
    #[inline]
    pub fn len(&self) -> usize {
        self.end - self.start
    }

    /// Whether there are no unconsumed bytes.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }

    /// Free space at the end, to read into. Moves unconsumed bytes to the
    /// front first when that frees a useful amount of room (at most a copy of
    /// the unconsumed bytes, never of consumed ones).
    #[inline]
    pub fn spare_mut(&mut self) -> &mut [u8] {
        let cap = self.capacity();
        if self.start > 0 && cap - self.end <= cap / 4 {
            self.compact();
        }
        let e = self.end;
        &mut self.storage.as_mut()[e..]
    }

    /// Mark `n` bytes of [`spare_mut`](Self::spare_mut) as filled. `n` is
    /// clamped to the free space.
    #[inline]
    pub fn commit(&mut self, n: usize) {
        self.end = (self.end + n).min(self.capacity());
    }

    /// Consume `n` bytes from the front (clamped to what is there).
    #[inline]
    pub fn consume(&mut self, n: usize) {
        self.start = (self.start + n).min(self.end);
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        }
    }

    /// Move unconsumed bytes to the front.
    pub fn compact(&mut self) {
        if self.start > 0 {
            let (s, e) = (self.start, self.end);
            self.storage.as_mut().copy_within(s..e, 0);
            self.end = e - s;
            self.start = 0;
        }
    }

    /// Copy as much of `src` as fits; returns the number of bytes taken.
    pub fn extend(&mut self, src: &[u8]) -> usize {
        let spare = self.spare_mut();
        let n = spare.len().min(src.len());
        copy(spare, &src[..n]);
        self.commit(n);
        n
    }

    /// Forget all bytes.
    #[inline]
    pub fn clear(&mut self) {
        self.start = 0;
        self.end = 0;
    }

    /// Give the storage back.
    pub fn into_inner(self) -> B {
        self.storage
    }
}

/// A send buffer: frames appended at the end, drained from the front as the
/// socket takes them. A partial write is `consume(n)` of what was written; the
/// rest stays in order, so no byte is lost and no frame is interleaved.
#[derive(Debug, Clone)]
pub struct WriteBuf<B> {
    storage: B,
    start: usize,
    end: usize,
}

impl<B: AsRef<[u8]> + AsMut<[u8]>> WriteBuf<B> {
    /// An empty buffer over `storage`.
    ///
    /// ```
    /// use tickwire_codec::buf::WriteBuf;
    ///
    /// let mut buf = WriteBuf::new(vec![0u8; 64]);
    /// buf.extend(b"frame 1").unwrap();
    /// buf.extend(b"frame 2").unwrap();
    /// let n = 4; // the socket took 4 bytes: a partial write
    /// buf.consume(n);
    /// assert_eq!(buf.data(), b"e 1frame 2"); // the rest, in order
    /// ```
    pub fn new(storage: B) -> Self {
        WriteBuf {
            storage,
            start: 0,
            end: 0,
        }
    }

    /// Total capacity in bytes.
    #[inline]
    pub fn capacity(&self) -> usize {
        self.storage.as_ref().len()
    }

    /// Bytes waiting to be sent: one contiguous slice for the syscall.
    #[inline]
    pub fn data(&self) -> &[u8] {
        &self.storage.as_ref()[self.start..self.end]
    }

    /// Number of bytes waiting.
    #[inline]
    pub fn len(&self) -> usize {
        self.end - self.start
    }

    /// Whether nothing is waiting.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }

    /// Room left for new bytes, counting the space a compaction would free.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.capacity() - self.len()
    }

    /// `n` bytes were sent: drop them from the front.
    #[inline]
    pub fn consume(&mut self, n: usize) {
        self.start = (self.start + n).min(self.end);
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        }
    }

    /// Forget everything waiting.
    #[inline]
    pub fn clear(&mut self) {
        self.start = 0;
        self.end = 0;
    }

    /// Make `n` contiguous free bytes available at the end, moving waiting
    /// bytes to the front if needed, and return them.
    #[inline]
    pub fn reserve(&mut self, n: usize) -> Result<&mut [u8], BufferFull> {
        let cap = self.capacity();
        if cap - self.end < n {
            if cap - self.len() < n {
                return Err(BufferFull);
            }
            let (s, e) = (self.start, self.end);
            self.storage.as_mut().copy_within(s..e, 0);
            self.start = 0;
            self.end = e - s;
        }
        let e = self.end;
        Ok(&mut self.storage.as_mut()[e..])
    }

    /// Mark `n` reserved bytes as written (clamped to the capacity).
    #[inline]
    pub fn commit(&mut self, n: usize) {
        self.end = (self.end + n).min(self.capacity());
    }

    /// Append `src` whole, or nothing.
    #[inline]
    pub fn extend(&mut self, src: &[u8]) -> Result<(), BufferFull> {
        let dst = self.reserve(src.len())?;
        copy(dst, src);
        self.commit(src.len());
        Ok(())
    }

    /// Free space for a payload serialized in place, after [`HEADROOM`]
    /// bytes kept for the frame header. Finish with
    /// [`FrameWriter::commit_in_place`](crate::ws::FrameWriter::commit_in_place).
    #[inline]
    pub fn payload_mut(&mut self) -> &mut [u8] {
        if self.is_empty() {
            self.start = 0;
            self.end = 0;
        }
        let at = (self.end + HEADROOM).min(self.capacity());
        &mut self.storage.as_mut()[at..]
    }

    /// Raw access for the frame writer: (storage, end of waiting data).
    #[inline]
    pub(crate) fn raw_tail(&mut self) -> (&mut [u8], usize) {
        let e = self.end;
        (self.storage.as_mut(), e)
    }

    /// For the frame writer: the waiting data now ends at `end`, and if the
    /// buffer was empty it starts at `start` (where an in-place header begins).
    #[inline]
    pub(crate) fn set_span(&mut self, start: usize, end: usize) {
        if self.is_empty() {
            self.start = start;
        }
        self.end = end;
    }

    /// Give the storage back.
    pub fn into_inner(self) -> B {
        self.storage
    }

    /// Move to `storage` (bigger, to fit a message; or smaller, once drained): the
    /// waiting bytes are copied to its front, in order. Returns the old storage, or
    /// `Err(storage)` (nothing changed) when it cannot hold them.
    pub fn replace_storage(&mut self, mut storage: B) -> Result<B, B> {
        let len = self.len();
        let Some(dst) = storage.as_mut().get_mut(..len) else {
            return Err(storage);
        };
        copy(dst, self.data());
        self.start = 0;
        self.end = len;
        Ok(core::mem::replace(&mut self.storage, storage))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_buf_fill_consume_compact() {
        let mut rb = ReadBuf::new([0u8; 16]);
        assert_eq!(rb.extend(b"hello world"), 11);
        assert_eq!(rb.data(), b"hello world");
        rb.consume(6);
        assert_eq!(rb.data(), b"world");
        // 5 bytes free at the end: more than a quarter, no compaction yet.
        assert_eq!(rb.spare_mut().len(), 5);
        assert_eq!(rb.extend(b"1234"), 4);
        // 1 byte free: compacts, the unconsumed bytes move to the front.
        assert_eq!(rb.spare_mut().len(), 7);
        assert_eq!(rb.data(), b"world1234");
        assert_eq!(rb.extend(b"0123456789abcdef"), 7);
        assert_eq!(rb.len(), 16);
        assert_eq!(rb.extend(b"x"), 0);
        rb.consume(100);
        assert!(rb.is_empty());
        assert_eq!(rb.spare_mut().len(), 16);
    }

    #[test]
    fn read_buf_over_slice_and_vec() {
        let mut storage = [0u8; 8];
        let mut rb = ReadBuf::new(&mut storage[..]);
        rb.extend(b"abc");
        assert_eq!(rb.data(), b"abc");
        let mut rb = ReadBuf::new(std::vec![0u8; 4]);
        assert_eq!(rb.extend(b"abcdef"), 4);
        rb.commit(10); // clamped
        assert_eq!(rb.len(), 4);
    }

    #[test]
    fn write_buf_partial_writes_keep_order() {
        let mut wb = WriteBuf::new([0u8; 10]);
        wb.extend(b"abcdef").unwrap();
        wb.consume(4);
        assert_eq!(wb.data(), b"ef");
        // 8 free in total but only 4 at the end: reserve compacts.
        wb.extend(b"ghijklmn").unwrap();
        assert_eq!(wb.data(), b"efghijklmn");
        assert_eq!(wb.extend(b"x"), Err(BufferFull));
        assert_eq!(wb.data(), b"efghijklmn");
        wb.consume(10);
        assert!(wb.is_empty());
        assert_eq!(wb.remaining(), 10);
    }

    #[test]
    fn write_buf_replace_storage_keeps_waiting_bytes() {
        let mut wb = WriteBuf::new(std::vec![0u8; 8]);
        wb.extend(b"abcdefgh").unwrap();
        wb.consume(3);
        assert!(wb.replace_storage(std::vec![0u8; 4]).is_err());
        assert_eq!(wb.data(), b"defgh");
        assert_eq!(
            wb.replace_storage(std::vec![0u8; 16]).map(|o| o.len()),
            Ok(8)
        );
        assert_eq!(wb.data(), b"defgh");
        wb.extend(b"0123456789a").unwrap();
        assert_eq!(wb.data(), b"defgh0123456789a");
        wb.consume(16);
        assert_eq!(
            wb.replace_storage(std::vec![0u8; 2]).map(|o| o.len()),
            Ok(16)
        );
        assert_eq!(wb.capacity(), 2);
    }
}
