//! Storage that grows: a driver that starts a [`FrameReader`] on a small buffer moves it
//! to a bigger one when a frame does not fit (and back to a small one when it is idle),
//! with limits set for the largest buffer it will grow to. The reader never allocates:
//! the caller brings each buffer and gets the old one back.

use super::{Config, FrameReader, READER_OVERHEAD};

impl<B: AsRef<[u8]> + AsMut<[u8]>> FrameReader<B> {
    /// Set the size limits as [`with_config`](Self::with_config) does, but lowered to fit
    /// a buffer of `capacity` bytes (the largest the caller will grow the storage to)
    /// instead of the current one. The caller then grows the storage with
    /// [`replace_storage`](Self::replace_storage) whenever
    /// [`spare_mut`](Self::spare_mut) comes back empty, up to `capacity`; within these
    /// limits a buffer of `capacity` bytes never runs out of room. The limit of a decoded
    /// (inflated) message is `config`'s, as [`max_decoded_size`](Self::max_decoded_size)
    /// says. The RSV bits allowed are left as they are.
    pub fn set_limits(&mut self, config: Config, capacity: usize) {
        let max_message = config
            .max_message_size
            .min(capacity.saturating_sub(READER_OVERHEAD));
        self.max_message = max_message;
        self.max_decoded = config.max_message_size;
        self.max_frame = config.max_frame_size.min(max_message);
    }

    /// Bytes at the front of the storage the reader still needs: received bytes not yet
    /// processed, a message being assembled, the message last returned. 0 when it holds
    /// nothing, so any storage will do.
    pub fn storage_in_use(&self) -> usize {
        if self.holds_nothing() { 0 } else { self.end }
    }

    /// The storage's size.
    pub fn capacity(&self) -> usize {
        self.buf.as_ref().len()
    }

    /// Move to `storage` (bigger, to fit a frame; or smaller, once idle), which must
    /// hold [`storage_in_use`](Self::storage_in_use) bytes: they are copied to the same
    /// offsets, so a message in progress carries on. Returns the old storage, or
    /// `Err(storage)` (nothing changed) when it is too small.
    pub fn replace_storage(&mut self, storage: B) -> Result<B, B> {
        self.replace_storage_keeping(storage, 0)
    }

    fn holds_nothing(&self) -> bool {
        self.msg.is_none() && self.frame.is_none() && self.pos == self.end
    }

    /// [`replace_storage`](Self::replace_storage), also keeping the `extra` bytes read
    /// into the spare room without a commit (a connection's handshake head).
    pub(crate) fn replace_storage_keeping(&mut self, mut storage: B, extra: usize) -> Result<B, B> {
        let cap = self.buf.as_ref().len();
        let extra = extra.min(cap - self.end);
        if self.holds_nothing() && self.end != 0 {
            // Start over at 0, as `spare_mut` would.
            let e = self.end;
            self.buf.as_mut().copy_within(e..e + extra, 0);
            self.pos = 0;
            self.end = 0;
            self.ready = None;
            self.fast = 0;
        }
        let keep = self.end + extra;
        let Some(dst) = storage.as_mut().get_mut(..keep) else {
            return Err(storage);
        };
        dst.copy_from_slice(&self.buf.as_ref()[..keep]);
        Ok(core::mem::replace(&mut self.buf, storage))
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Error, Message, Role};
    use super::*;
    use std::vec;
    use std::vec::Vec;

    /// A masked client frame of `payload` (64-bit length when needed).
    fn masked(b0: u8, payload: &[u8]) -> Vec<u8> {
        let key = [1, 2, 3, 4];
        let mut f = vec![b0];
        match payload.len() {
            n if n < 126 => f.push(0x80 | n as u8),
            n if n <= 0xffff => {
                f.push(0x80 | 126);
                f.extend_from_slice(&(n as u16).to_be_bytes());
            }
            n => {
                f.push(0x80 | 127);
                f.extend_from_slice(&(n as u64).to_be_bytes());
            }
        }
        f.extend_from_slice(&key);
        f.extend(payload.iter().enumerate().map(|(i, b)| b ^ key[i % 4]));
        f
    }

    /// Feed `wire` to a reader that starts at 256 bytes and doubles its storage whenever
    /// there is no room, up to `max`; collect the messages (as lengths) or the error.
    fn grow_and_read(wire: &[u8], limits: Config, max: usize) -> Result<Vec<usize>, Error> {
        let mut r = FrameReader::with_config(Role::Server, vec![0u8; 256], limits);
        r.set_limits(limits, max);
        let mut got = Vec::new();
        let mut at = 0;
        loop {
            while r.advance()? {
                match r.message() {
                    Some(Message::Binary(b)) => {
                        assert!(b.iter().enumerate().all(|(i, &x)| x == (i % 251) as u8));
                        got.push(b.len());
                    }
                    other => panic!("unexpected {other:?}"),
                }
            }
            if at == wire.len() {
                return Ok(got);
            }
            if r.spare_mut().is_empty() {
                let cap = r.capacity();
                assert!(cap < max, "no room at the largest capacity");
                let bigger = vec![0u8; (cap * 2).min(max)];
                assert_eq!(r.replace_storage(bigger).map(|old| old.len()), Ok(cap));
            }
            at += r.feed(&wire[at..]);
        }
    }

    #[test]
    fn grows_to_the_message_limit_and_no_further() {
        let payload: Vec<u8> = (0..5000).map(|i| (i % 251) as u8).collect();
        let limits = Config {
            max_frame_size: usize::MAX,
            max_message_size: 5000,
            allowed_rsv: 0,
        };
        let max = 5000 + READER_OVERHEAD;
        // Exactly the limit, whole and in fragments (with a small message after each).
        let mut wire = masked(0x82, &payload);
        wire.extend(masked(0x02, &payload[..1000]));
        wire.extend(masked(0x00, &payload[1000..4999]));
        wire.extend(masked(0x80, &payload[4999..]));
        wire.extend(masked(0x82, &payload[..10]));
        assert_eq!(grow_and_read(&wire, limits, max), Ok(vec![5000, 5000, 10]));
        // One byte more: refused with close 1009, whole (the frame limit is the message
        // limit) or fragmented.
        let more: Vec<u8> = (0..5001).map(|i| (i % 251) as u8).collect();
        let whole = grow_and_read(&masked(0x82, &more), limits, max);
        assert_eq!(whole, Err(Error::FrameTooLarge));
        assert_eq!(Error::FrameTooLarge.close_code().0, 1009);
        let mut wire = masked(0x02, &more[..3000]);
        wire.extend(masked(0x80, &more[3000..]));
        assert_eq!(
            grow_and_read(&wire, limits, max),
            Err(Error::MessageTooLarge)
        );
    }

    #[test]
    fn replace_keeps_a_partial_frame_and_refuses_small_storage() {
        let payload: Vec<u8> = (0..300).map(|i| (i % 251) as u8).collect();
        let wire = masked(0x82, &payload);
        let mut r = FrameReader::new(Role::Server, vec![0u8; 1024]);
        r.feed(&wire[..100]);
        assert_eq!(r.advance(), Ok(false));
        assert_eq!(r.storage_in_use(), 100);
        assert!(r.replace_storage(vec![0u8; 99]).is_err());
        assert!(r.replace_storage(vec![0u8; 600]).is_ok());
        r.feed(&wire[100..]);
        assert_eq!(r.next(), Ok(Some(Message::Binary(&payload))));
        // Idle: any storage will do, and reading goes on in it.
        assert_eq!(r.storage_in_use(), 0);
        assert_eq!(r.replace_storage(vec![0u8; 512]).map(|o| o.len()), Ok(600));
        r.feed(&wire);
        assert_eq!(r.next(), Ok(Some(Message::Binary(&payload))));
    }
}
