//! Deflater: one raw DEFLATE stream for the messages this endpoint compresses
//! (RFC 7692 §7.2.1): each message ends with a sync flush whose trailing
//! `00 00 ff ff` is removed before it is framed with RSV1.
//!
//! Window bits 8: zlib (and zlib-rs) refuse a 256-byte window for raw DEFLATE
//! and the usual answer is to compress with 9 bits. That is what this does,
//! and it stays within the 256 bytes promised: zlib's deflate never emits a
//! match farther back than its window size minus `MIN_LOOKAHEAD` (262), so
//! 512 - 262 = 250 bytes. conformance/tests/deflate_python.rs checks it with
//! C zlib's inflate and an 8-bit window, which refuses a match one byte too far.
//!
//! Cost: a stream without context takeover is reset after every message, and
//! zlib-rs's reset clears its 64 Ki-entry hash table (128 KiB): about 10 µs a
//! message here, whatever its size. Context takeover avoids it.

use alloc::vec::Vec;
use core::mem::MaybeUninit;

use super::inflate::TAIL;
use super::params::{DeflateConfig, MAX_WINDOW_BITS, MIN_WINDOW_BITS, Negotiated};
use super::zstream::{SYNC_FLUSH, ZDeflate};
use crate::ws::error::EncodeError;
use crate::ws::frame::Role;

/// Compresses the messages of one direction of a connection.
pub struct Deflater {
    z: ZDeflate,
    window_bits: u8,
    no_context_takeover: bool,
    threshold: usize,
}

impl core::fmt::Debug for Deflater {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Deflater")
            .field("window_bits", &self.window_bits)
            .field("no_context_takeover", &self.no_context_takeover)
            .field("threshold", &self.threshold)
            .finish_non_exhaustive()
    }
}

impl Deflater {
    /// A stream compressing with at most `window_bits` (clamped to 8..=15; 8
    /// compresses with 9, see the module notes) at zlib `level` (at most 9),
    /// reset after every message with `no_context_takeover`; payloads shorter
    /// than `threshold` are left uncompressed ([`should_compress`](Self::should_compress)).
    ///
    /// Allocates the zlib state once (about 64 KiB at 15 bits, less below).
    ///
    /// ```
    /// use tickwire_codec::ws::deflate::{Deflater, Inflater};
    ///
    /// let mut deflater = Deflater::new(15, false, 6, 0); // window, takeover, level, threshold
    /// let mut inflater = Inflater::new(15, false);
    /// let payload = br#"{"px":"101.5","qty":"3"}"#.repeat(8);
    /// let mut wire = Vec::new();
    /// deflater.compress(&payload, &mut wire).unwrap(); // one message, without the tail
    /// assert!(wire.len() < payload.len());
    /// let mut out = Vec::new();
    /// inflater.inflate(&wire, &mut out, 1 << 20).unwrap(); // at most 1 MiB
    /// assert_eq!(out, payload);
    /// ```
    pub fn new(window_bits: u8, no_context_takeover: bool, level: u8, threshold: usize) -> Self {
        let window_bits = window_bits.clamp(MIN_WINDOW_BITS, MAX_WINDOW_BITS);
        let z = ZDeflate::new(level, window_bits.max(9));
        Deflater {
            z,
            window_bits,
            no_context_takeover,
            threshold,
        }
    }

    /// The stream for what an endpoint in `role` sends on a connection that
    /// negotiated `n`, with `config`'s level and threshold.
    pub fn for_role(n: &Negotiated, role: Role, config: &DeflateConfig) -> Self {
        let (bits, reset) = n.sending(role);
        Self::new(bits, reset, config.level, config.threshold)
    }

    /// The window bits agreed for this stream.
    pub fn window_bits(&self) -> u8 {
        self.window_bits
    }

    /// Whether the stream starts afresh with every message.
    pub fn no_context_takeover(&self) -> bool {
        self.no_context_takeover
    }

    /// The smallest payload that goes out compressed (see
    /// [`should_compress`](Self::should_compress)).
    pub fn threshold(&self) -> usize {
        self.threshold
    }

    /// Whether a payload of `len` bytes should go out compressed (RSV1 set):
    /// at or above the threshold. Below it, send it as it is, RSV1 clear.
    #[inline]
    pub fn should_compress(&self, len: usize) -> bool {
        len >= self.threshold
    }

    /// The most bytes [`compress_into`](Self::compress_into) writes for a
    /// payload of `len` bytes: zlib-rs's conservative bound (fixed-code
    /// blocks on incompressible data, as level 1 emits, grow it by up to 1/8),
    /// plus the sync flush's empty stored block.
    pub const fn max_compressed_len(len: usize) -> usize {
        len + len.div_ceil(8) + len.div_ceil(64) + 5 + 1 + TAIL.len()
    }

    /// Compress one message's `payload`, appending the compressed bytes
    /// (without the trailing `00 00 ff ff`) to `out`; returns how many.
    pub fn compress(&mut self, payload: &[u8], out: &mut Vec<u8>) -> Result<usize, EncodeError> {
        let start = out.len();
        out.reserve(Self::max_compressed_len(payload.len()));
        let mut input = payload;
        loop {
            if out.capacity() - out.len() < 64 {
                out.reserve(64.max(input.len()));
            }
            let spare = out.spare_capacity_mut();
            let room = spare.len();
            let (made, used, ok) = self.step(input, spare);
            // SAFETY: deflate initialized the first `made` bytes of the spare
            // capacity it was given.
            unsafe { out.set_len(out.len() + made) };
            if !ok {
                return Err(self.fail(out, start));
            }
            input = &input[used..];
            if input.is_empty() && made < room {
                break;
            }
        }
        self.end_message(out, start)
    }

    /// Compress one message's `payload` into `out` (without the trailing
    /// `00 00 ff ff`); returns the compressed length. `out` must hold
    /// [`max_compressed_len`](Self::max_compressed_len) bytes, else
    /// [`EncodeError::BufferFull`] with nothing compressed.
    pub fn compress_into(&mut self, payload: &[u8], out: &mut [u8]) -> Result<usize, EncodeError> {
        if out.len() < Self::max_compressed_len(payload.len()) {
            return Err(EncodeError::BufferFull);
        }
        // SAFETY: `u8` and `MaybeUninit<u8>` have the same layout, and deflate
        // only writes initialized bytes.
        let spare = unsafe { &mut *(out as *mut [u8] as *mut [MaybeUninit<u8>]) };
        let (made, used, ok) = self.step(payload, spare);
        if made == 0 && ok && payload.is_empty() {
            // As in `end_message`: an empty message with nothing to flush.
            out[0] = 0x00;
            return Ok(1);
        }
        if !ok || used != payload.len() || made == out.len() {
            // Out of room despite the bound, or a zlib error: the stream's
            // state is lost with the message.
            self.z.reset();
            return Err(EncodeError::Compression);
        }
        match out[..made].strip_suffix(&TAIL) {
            Some(body) => {
                let n = body.len();
                if self.no_context_takeover {
                    self.z.reset();
                }
                Ok(n)
            }
            None => {
                self.z.reset();
                Err(EncodeError::Compression)
            }
        }
    }

    /// The message just compressed was not sent compressed (it went out as it is,
    /// or not at all): the peer's window lacks it. With context takeover the stream
    /// then starts afresh: a compressor whose window holds less than the peer's never
    /// refers to what the peer lacks, and the peer's stream goes on at a block
    /// boundary, so nothing else changes. (Without context takeover the stream was
    /// reset after the message already.)
    pub fn discard_last(&mut self) {
        if !self.no_context_takeover {
            self.z.reset();
        }
    }

    /// One sync-flushed deflate call: (bytes written, bytes consumed, no error).
    fn step(&mut self, input: &[u8], out: &mut [MaybeUninit<u8>]) -> (usize, usize, bool) {
        let step = self.z.compress(input, out, SYNC_FLUSH);
        (step.made, step.used, step.ok())
    }

    /// Strip the flush's tail from `out[start..]`, reset if asked.
    fn end_message(&mut self, out: &mut Vec<u8>, start: usize) -> Result<usize, EncodeError> {
        if out.len() == start {
            // An empty message right after another: zlib has nothing to
            // flush. One 0x00 (an empty stored block's header, completed by
            // the receiver's tail) inflates to nothing (RFC 7692 §7.2.3.6).
            out.push(0x00);
        } else if !out[start..].ends_with(&TAIL) {
            return Err(self.fail(out, start));
        } else {
            out.truncate(out.len() - TAIL.len());
        }
        if self.no_context_takeover {
            self.z.reset();
        }
        Ok(out.len() - start)
    }

    fn fail(&mut self, out: &mut Vec<u8>, start: usize) -> EncodeError {
        out.truncate(start);
        self.z.reset();
        EncodeError::Compression
    }
}
