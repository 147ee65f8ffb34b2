//! Inflater: one raw DEFLATE stream for the messages a peer compressed
//! (RFC 7692 §7.2.2), inflated into caller memory bounded by the message limit.

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::mem::MaybeUninit;

use super::params::{MAX_WINDOW_BITS, MIN_WINDOW_BITS, Negotiated};
use super::zstream::{SYNC_FLUSH, ZInflate};
use crate::simd::utf8;
use crate::ws::error::Error;
use crate::ws::frame::Role;

/// What RFC 7692 §7.2.2 appends to a message's payload before inflating it
/// (the sender removed it: an empty stored block's LEN and NLEN).
pub const TAIL: [u8; 4] = [0x00, 0x00, 0xff, 0xff];

/// Output grows by at least this much at a time in [`Inflater::inflate`].
const MIN_GROWTH: usize = 4096;

/// Inflates the compressed messages of one direction of a connection.
///
/// A message is inflated whole ([`inflate_into`](Self::inflate_into) or
/// [`inflate`](Self::inflate)): the reader assembles its fragments first.
/// Errors are final for the connection (its close code is
/// [`Error::close_code`]): invalid DEFLATE data is
/// [`Error::InvalidCompressedData`] (1002, as Python websockets and
/// tungstenite answer it), output past the limit is [`Error::MessageTooLarge`]
/// (1009), inflated text that is not UTF-8 is [`Error::InvalidUtf8`] (1007).
/// After an error the stream is reset, so the value stays usable.
pub struct Inflater {
    z: ZInflate,
    window_bits: u8,
    no_context_takeover: bool,
    /// The window, copied out while the stream restarts after a DEFLATE block with
    /// BFINAL set (allocated the first time a peer does that).
    window: Option<Box<[u8; 1 << 15]>>,
}

impl core::fmt::Debug for Inflater {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Inflater")
            .field("window_bits", &self.window_bits)
            .field("no_context_takeover", &self.no_context_takeover)
            .finish_non_exhaustive()
    }
}

impl Inflater {
    /// A stream for a peer that compresses with at most `window_bits`
    /// (clamped to 8..=15) and, with `no_context_takeover`, resets its
    /// compressor after every message (this stream then does the same).
    ///
    /// Allocates the zlib state (about 7 KiB plus the window) once.
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
    pub fn new(window_bits: u8, no_context_takeover: bool) -> Self {
        let window_bits = window_bits.clamp(MIN_WINDOW_BITS, MAX_WINDOW_BITS);
        Inflater {
            z: ZInflate::new(window_bits),
            window_bits,
            no_context_takeover,
            window: None,
        }
    }

    /// The stream for what an endpoint in `role` receives on a connection that
    /// negotiated `n`.
    pub fn for_role(n: &Negotiated, role: Role) -> Self {
        let (bits, reset) = n.receiving(role);
        Self::new(bits, reset)
    }

    /// The window the peer compresses with (bits).
    pub fn window_bits(&self) -> u8 {
        self.window_bits
    }

    /// Whether the stream starts afresh with every message.
    pub fn no_context_takeover(&self) -> bool {
        self.no_context_takeover
    }

    /// Inflate one message's `payload` (as received: without the tail) into
    /// `out`, whose length is the limit; returns the inflated length.
    /// More output than `out` holds is [`Error::MessageTooLarge`].
    pub fn inflate_into(&mut self, payload: &[u8], out: &mut [u8]) -> Result<usize, Error> {
        let mut sink = SliceSink { out, done: 0 };
        let r = self.run(payload, &mut sink);
        self.finish(r)?;
        Ok(sink.done)
    }

    /// Inflate one message's `payload` (as received: without the tail),
    /// appending at most `max` bytes to `out`; returns how many were appended.
    /// More output is [`Error::MessageTooLarge`] (inflating stops there: at most
    /// one byte past `max` is ever made), and `out`'s capacity never grows past its
    /// length before the call plus `max`; memory that cannot hold the output is the
    /// same error.
    pub fn inflate(
        &mut self,
        payload: &[u8],
        out: &mut Vec<u8>,
        max: usize,
    ) -> Result<usize, Error> {
        let start = out.len();
        let mut sink = VecSink {
            out,
            start,
            max,
            hint: payload.len(),
        };
        let r = self.run(payload, &mut sink);
        self.finish(r)?;
        Ok(out.len() - start)
    }

    /// [`inflate`](Self::inflate), then check that the inflated bytes are
    /// UTF-8 ([`Error::InvalidUtf8`] otherwise; `out` keeps them).
    pub fn inflate_text(
        &mut self,
        payload: &[u8],
        out: &mut Vec<u8>,
        max: usize,
    ) -> Result<usize, Error> {
        let start = out.len();
        let n = self.inflate(payload, out, max)?;
        check_utf8(&out[start..])?;
        Ok(n)
    }

    /// Inflate `payload` then [`TAIL`] into `sink`.
    /// `Ok(true)`: the peer ended the DEFLATE stream (a BFINAL block).
    fn run(&mut self, payload: &[u8], sink: &mut dyn Sink) -> Result<bool, Error> {
        let mut inputs = [payload, &TAIL[..]];
        let mut which = 0;
        let mut scratch = [MaybeUninit::<u8>::uninit(); 1];
        loop {
            let input = inputs[which];
            let room = sink.room();
            let at_limit = room.is_empty();
            let out = if at_limit { &mut scratch[..] } else { room };
            let room = out.len();
            let step = self.z.decompress(input, out, SYNC_FLUSH);
            if !step.ok() {
                return Err(Error::InvalidCompressedData);
            }
            let (used, made) = (step.used, step.made);
            if at_limit {
                if made > 0 {
                    return Err(Error::MessageTooLarge);
                }
            } else {
                sink.wrote(made);
            }
            inputs[which] = &input[used.min(input.len())..];
            if step.ended() {
                // The sender ended a DEFLATE stream: a block with BFINAL set, which
                // RFC 7692 §7.2.3.3 allows in place of a sync flush. The message goes
                // on if payload follows (a conforming sender's empty stored block, the
                // `0x00` RFC 7692 §7.2.3.4 shows, or more compressed blocks): a new
                // stream over the same window, so that nothing of a message is ever
                // dropped. Only our own tail left: the message ends with the stream.
                if which == 1 || inputs[0].is_empty() {
                    return Ok(true);
                }
                self.restart()?;
                continue;
            }
            if inputs[which].is_empty() {
                if which == 0 {
                    which = 1;
                    continue;
                }
                // All input in; done once inflate stopped short of the room
                // it had (nothing more to write).
                if made < room {
                    return Ok(false);
                }
            } else if used == 0 && made == 0 {
                // No progress with input and room: cannot happen with zlib's
                // inflate, but never loop on it.
                return Err(Error::InvalidCompressedData);
            }
        }
    }

    /// Start a new DEFLATE stream that keeps the window: what the peer's compressor
    /// may still refer back to (its context across a BFINAL block).
    fn restart(&mut self) -> Result<(), Error> {
        let window = self.window.get_or_insert_with(|| Box::new([0; 1 << 15]));
        let n = self.z.get_dictionary(window);
        self.z.reset();
        if n > 0 && !self.z.set_dictionary(&window[..n]) {
            return Err(Error::InvalidCompressedData);
        }
        Ok(())
    }

    /// After a message: reset as the parameters ask, or after an error. A stream the
    /// peer ended (a BFINAL block) starts again with the window it keeps, unless it
    /// resets its context after each message anyway.
    fn finish(&mut self, r: Result<bool, Error>) -> Result<(), Error> {
        match r {
            Ok(false) if !self.no_context_takeover => Ok(()),
            Ok(true) if !self.no_context_takeover => self.restart().inspect_err(|_| {
                self.z.reset();
            }),
            Ok(_) => {
                self.z.reset();
                Ok(())
            }
            Err(e) => {
                self.z.reset();
                Err(e)
            }
        }
    }
}

/// Where [`Inflater::run`] writes.
trait Sink {
    /// Room for more output; empty at the limit.
    fn room(&mut self) -> &mut [MaybeUninit<u8>];
    /// Inflate wrote `n` bytes at the start of the last `room`.
    fn wrote(&mut self, n: usize);
}

/// A caller's slice, filled from the front.
struct SliceSink<'a> {
    out: &'a mut [u8],
    done: usize,
}

impl Sink for SliceSink<'_> {
    fn room(&mut self) -> &mut [MaybeUninit<u8>] {
        let rest = &mut self.out[self.done..];
        // SAFETY: `u8` and `MaybeUninit<u8>` have the same layout, and the
        // slice is only written with initialized bytes (inflate's output).
        unsafe { &mut *(rest as *mut [u8] as *mut [MaybeUninit<u8>]) }
    }

    fn wrote(&mut self, n: usize) {
        self.done = (self.done + n).min(self.out.len());
    }
}

/// A caller's `Vec`, appended to, its capacity grown to at most `start + max`.
struct VecSink<'a> {
    out: &'a mut Vec<u8>,
    start: usize,
    max: usize,
    /// The compressed size: a first guess of the output's.
    hint: usize,
}

impl Sink for VecSink<'_> {
    fn room(&mut self) -> &mut [MaybeUninit<u8>] {
        let produced = self.out.len() - self.start;
        let left = self.max.saturating_sub(produced);
        if left > 0 && self.out.capacity() == self.out.len() {
            let grow = left.min(produced.max(self.hint.saturating_mul(2)).max(MIN_GROWTH));
            if self.out.try_reserve_exact(grow).is_err() {
                // Memory does not hold it: no room, so more output is
                // `MessageTooLarge` (close 1009), never an abort.
                return &mut [];
            }
        }
        let spare = self.out.spare_capacity_mut();
        let n = spare.len().min(left);
        &mut spare[..n]
    }

    fn wrote(&mut self, n: usize) {
        let len = self.out.len() + n;
        debug_assert!(len <= self.out.capacity());
        // SAFETY: inflate initialized the first `n` bytes of the spare
        // capacity `room` handed out, which lies within the capacity.
        unsafe { self.out.set_len(len) };
    }
}

/// Inflated text must be UTF-8 (checked with the codec's SIMD validator).
pub fn check_utf8(bytes: &[u8]) -> Result<&str, Error> {
    utf8::to_str(bytes).ok_or(Error::InvalidUtf8)
}

#[cfg(test)]
mod tests {
    use alloc::vec::Vec;

    use super::*;

    /// A decompression bomb stops at the limit without inflating further: the stream
    /// made at most one byte past the limit (the probe that tells "more") before
    /// `MessageTooLarge`, though the payload goes on for 64 MiB, and the output never
    /// grew past the limit. With room for all of it, the same payload inflates whole.
    #[test]
    fn a_bomb_stops_inflating_at_the_limit() {
        let bomb = super::super::tests::zeros_bomb(64);
        for limit in [0, 1, 4096, 100_000, 1 << 20, (64 << 20) - 1] {
            let mut inf = Inflater::new(15, false);
            let mut out = Vec::new();
            let mut sink = VecSink {
                out: &mut out,
                start: 0,
                max: limit,
                hint: bomb.len(),
            };
            assert_eq!(inf.run(&bomb, &mut sink), Err(Error::MessageTooLarge));
            assert!(inf.z.total_out() <= limit + 1, "limit {limit}");
            assert!(out.len() == limit && out.capacity() <= limit.max(1));
        }
        let mut out = Vec::new();
        let n = Inflater::new(15, false).inflate(&bomb, &mut out, 64 << 20);
        assert_eq!(n, Ok(64 << 20));
    }
}
