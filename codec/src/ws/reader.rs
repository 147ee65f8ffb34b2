//! FrameReader: WebSocket frames in, whole messages out, in place.
//!
//! The reader owns a receive buffer over caller storage. Bytes are read into
//! [`FrameReader::spare_mut`] and committed; [`FrameReader::next`] then yields
//! one [`Message`] at a time, borrowing the buffer. The same step comes in two
//! halves for callers that must decide what to do before they borrow:
//! [`FrameReader::advance`] (`Ok(true)`: a message is ready) and
//! [`FrameReader::message`] (borrow it, as often as needed, until the reader is
//! used again). Nothing is copied for an
//! unfragmented message. A fragmented message is assembled in place: each
//! fragment's payload is moved down over the header that preceded it, so the
//! message is one contiguous slice when it completes. Control frames that
//! arrive between fragments are delivered as they come.
//!
//! Payload bytes are processed as they arrive, not only when a frame is
//! complete: masked payloads are unmasked piece by piece with the key phase
//! carried over, and text is UTF-8 checked incrementally, so an invalid text
//! message is rejected at the first byte where it is certain to be invalid,
//! even in the middle of a frame.

use super::close::{CloseCode, CloseFrame, parse_close};
use super::error::Error;
use super::frame::{Header, MAX_CONTROL_PAYLOAD, MAX_HEADER_LEN, OpCode, Role};
use super::message::Message;
use crate::simd::{
    copy::copy,
    mask::{apply_mask, apply_mask_widest},
    mask_ascii::apply_mask_ascii,
    utf8,
};

/// Room the reader keeps beyond the largest message: a control frame that
/// arrives between fragments (header + 125 bytes) and a data frame header.
pub const READER_OVERHEAD: usize = MAX_HEADER_LEN + MAX_CONTROL_PAYLOAD + 6 + MAX_HEADER_LEN;

/// Reader limits. Sizes beyond what the buffer can hold are lowered to fit it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// Largest accepted frame payload; larger is [`Error::FrameTooLarge`] (close 1009).
    pub max_frame_size: usize,
    /// Largest accepted message (sum of fragments); larger is
    /// [`Error::MessageTooLarge`] (close 1009). On the wire it is lowered to what the
    /// reader's buffer holds; a compressed message's decoded (inflated) size is held to
    /// it as it is ([`FrameReader::max_decoded_size`]), whatever the buffer's size.
    pub max_message_size: usize,
    /// RSV bits (RSV1 = 0b100) an extension has negotiated; others are errors.
    /// They are allowed on the first frame of a data message only (RFC 7692
    /// §6: never on a continuation or control frame, where they are
    /// [`Error::ReservedBits`]), and a message that carries them is the
    /// extension's to decode: see [`FrameReader::compressed`].
    pub allowed_rsv: u8,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_frame_size: 16 << 20,
            max_message_size: 16 << 20,
            allowed_rsv: 0,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct FrameState {
    fin: bool,
    mask: Option<[u8; 4]>,
    len: usize,
    done: usize,
}

#[derive(Debug, Clone, Copy)]
struct MsgState {
    text: bool,
    rsv: u8,
    /// Offset of the message's first payload byte in the buffer.
    start: usize,
    /// Payload bytes assembled so far.
    len: usize,
    /// Leading bytes known to be valid UTF-8 (text only).
    valid: usize,
}

/// Where the last message [`FrameReader::advance`] finished sits in the buffer.
#[derive(Debug, Clone, Copy)]
enum Ready {
    Text {
        start: usize,
        len: usize,
    },
    Binary {
        start: usize,
        len: usize,
    },
    Ping {
        start: usize,
        len: usize,
    },
    Pong {
        start: usize,
        len: usize,
    },
    /// A data message whose first frame carried RSV bits: not UTF-8 checked.
    Encoded {
        text: bool,
        start: usize,
        len: usize,
    },
    /// A close; `start`/`len` locate the reason (already checked as UTF-8).
    Close {
        code: Option<CloseCode>,
        start: usize,
        len: usize,
    },
}

impl Ready {
    #[inline(always)]
    fn data(start: usize, len: usize, text: bool) -> Self {
        if text {
            Ready::Text { start, len }
        } else {
            Ready::Binary { start, len }
        }
    }
}

/// Where the payload of the frame the fast path finished lies: a pointer
/// into the reader's buffer, so that [`FrameReader::next`] can decide between
/// the fast and the general path without a borrow of the buffer outliving
/// the fast path (a returned borrow would keep `self` borrowed on the general
/// path too), and without slicing the buffer a second time.
#[derive(Clone, Copy)]
struct Payload {
    ptr: *const u8,
    len: usize,
    text: bool,
}

impl Payload {
    /// The message, borrowing the buffer for `'a`.
    ///
    /// # Safety
    /// `self` must come from the last [`FrameReader::whole_frame`] call on a
    /// reader that stays borrowed for `'a` (so its buffer is neither moved nor
    /// written in that time).
    #[inline(always)]
    unsafe fn message<'a>(self) -> Message<'a> {
        // SAFETY: `ptr..ptr + len` is a subslice of the buffer's `as_mut()`
        // slice (`whole_frame` took it with a checked `get_mut`), the buffer
        // is not touched before `'a` ends (this function's contract), and a
        // text payload was validated as UTF-8 before `whole_frame` returned it.
        unsafe {
            let bytes = core::slice::from_raw_parts(self.ptr, self.len);
            if self.text {
                Message::Text(core::str::from_utf8_unchecked(bytes))
            } else {
                Message::Binary(bytes)
            }
        }
    }
}

/// Decodes frames of one role from a buffer over caller storage `B`.
#[derive(Debug, Clone)]
pub struct FrameReader<B> {
    buf: B,
    /// Next unprocessed byte.
    pos: usize,
    /// End of received bytes.
    end: usize,
    role: Role,
    max_frame: usize,
    max_message: usize,
    /// [`Config::max_message_size`] as configured, not lowered to the buffer: the
    /// limit of a message an extension decodes ([`max_decoded_size`](Self::max_decoded_size)).
    max_decoded: usize,
    allowed_rsv: u8,
    frame: Option<FrameState>,
    msg: Option<MsgState>,
    /// The mask bit a frame must carry in this role, where the fast path
    /// finds it in the frame's first two bytes read as a little-endian
    /// `u16`: `0x8000` (server) or 0 (client).
    want_mask: u16,
    /// No frame or message in progress, no close received and `last_rsv`
    /// zero: the fast path may take the next frame, and it need not store
    /// `last_rsv`. Kept by [`advance_general`](Self::advance_general), the
    /// only place that changes those four, so the fast path tests one byte.
    idle: bool,
    last_rsv: u8,
    closed: bool,
    /// The message the last `advance` finished on the general path, until
    /// the buffer is touched again.
    ready: Option<Ready>,
    /// The message the last `advance` finished on the fast path (then
    /// `ready` is `None`): 0 for none, else its length times 4 plus
    /// [`FAST_TEXT`] or [`FAST_BINARY`]; it is the `len` bytes before `pos`.
    /// The fast path stores `pos` and this, two stores a message, where a
    /// `Ready` would take three more (tests on this machine showed each
    /// store a message adds to the chance that one of them 4K-aliases a
    /// caller's stack slot or a load of the input).
    fast: usize,
}

/// [`FrameReader::fast`]'s kind bits (its low two) for a text message.
const FAST_TEXT: usize = 1;
/// [`FrameReader::fast`]'s kind bits for a binary message.
const FAST_BINARY: usize = 2;

impl<B: AsRef<[u8]> + AsMut<[u8]>> FrameReader<B> {
    /// A reader for `role` (the role of *this* endpoint) with default limits.
    ///
    /// ```
    /// use tickwire_codec::ws::{FrameReader, Message, Role};
    ///
    /// let mut r = FrameReader::new(Role::Client, [0u8; 1024]); // reads a server's frames
    /// r.feed(&[0x81, 0x02, b'h', b'i']); // FIN + text, unmasked, 2 bytes
    /// assert_eq!(r.next().unwrap(), Some(Message::Text("hi")));
    /// ```
    pub fn new(role: Role, storage: B) -> Self {
        Self::with_config(role, storage, Config::default())
    }

    /// A reader with explicit limits. The message limit is lowered to
    /// `capacity - READER_OVERHEAD` if the buffer is smaller than that needs (not the
    /// limit of a decoded message: [`max_decoded_size`](Self::max_decoded_size)).
    pub fn with_config(role: Role, storage: B, config: Config) -> Self {
        let cap = storage.as_ref().len();
        let max_message = config
            .max_message_size
            .min(cap.saturating_sub(READER_OVERHEAD));
        FrameReader {
            buf: storage,
            pos: 0,
            end: 0,
            role,
            max_frame: config.max_frame_size.min(max_message),
            max_message,
            max_decoded: config.max_message_size,
            allowed_rsv: config.allowed_rsv & 0x7,
            frame: None,
            msg: None,
            want_mask: match role {
                Role::Server => 0x8000,
                Role::Client => 0,
            },
            idle: true,
            last_rsv: 0,
            closed: false,
            ready: None,
            fast: 0,
        }
    }

    /// The role this reader decodes for.
    pub fn role(&self) -> Role {
        self.role
    }

    /// The effective message size limit: [`Config::max_message_size`], lowered to what
    /// the buffer holds.
    pub fn max_message_size(&self) -> usize {
        self.max_message
    }

    /// The limit of a message an extension decodes from a [`compressed`](Self::compressed)
    /// one (permessage-deflate inflates it): [`Config::max_message_size`] as configured,
    /// not lowered to the buffer's size, since the decoded bytes are stored elsewhere (a
    /// [`Connection`](crate::ws::Connection) inflates into a buffer of its own, grown up
    /// to this limit). The compressed payload itself, which the buffer holds, stays
    /// within [`max_message_size`](Self::max_message_size).
    ///
    /// ```
    /// use tickwire_codec::ws::{Config, FrameReader, Role};
    ///
    /// let limits = Config { max_message_size: 1 << 20, ..Config::default() };
    /// let r = FrameReader::with_config(Role::Client, vec![0u8; 64 << 10], limits);
    /// assert!(r.max_message_size() < 64 << 10); // on the wire: what the buffer holds
    /// assert_eq!(r.max_decoded_size(), 1 << 20); // inflated: the configured limit
    /// ```
    pub fn max_decoded_size(&self) -> usize {
        self.max_decoded
    }

    /// Change the RSV bits a data message's first frame may carry
    /// ([`Config::allowed_rsv`]): a connection turns RSV1 on once it has
    /// negotiated permessage-deflate. Only the low three bits count.
    pub fn set_allowed_rsv(&mut self, bits: u8) {
        self.allowed_rsv = bits & 0x7;
    }

    /// RSV bits of the first frame of the last data message returned (for extensions).
    pub fn last_rsv(&self) -> u8 {
        self.last_rsv
    }

    /// The message the last [`advance`](Self::advance) (or [`next`](Self::next))
    /// finished, if its first frame carried RSV bits (RSV1: compressed by
    /// permessage-deflate): its kind, bits and payload as received, for the
    /// extension to decode. Such a text message is not UTF-8 checked here
    /// (that is for its decoded bytes), so [`message`](Self::message) shows
    /// it as [`Message::Binary`]. `None` for every other message, and when
    /// `message` would be `None`.
    #[inline]
    pub fn compressed(&self) -> Option<Compressed<'_>> {
        match self.ready? {
            Ready::Encoded { text, start, len } => Some(Compressed {
                text,
                rsv: self.last_rsv,
                payload: self.buf.as_ref().get(start..start + len).unwrap_or(&[]),
            }),
            _ => None,
        }
    }

    /// Whether a close frame has been received.
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// Received bytes not yet turned into messages (a partial frame, or
    /// frames not yet asked for).
    pub fn buffered(&self) -> usize {
        self.end - self.pos
    }

    /// Whether a fragmented message or a frame is partly received.
    pub fn in_message(&self) -> bool {
        self.msg.is_some() || self.frame.is_some()
    }

    /// Free space to read socket bytes into; [`commit`](Self::commit) what was read.
    ///
    /// Moves live bytes to the front when the tail runs low. Empty only when
    /// the buffer holds a full message plus its overhead, which the limits
    /// prevent.
    #[inline]
    pub fn spare_mut(&mut self) -> &mut [u8] {
        // Compaction may move the finished message: it is no longer available.
        self.ready = None;
        self.fast = 0;
        // Bytes that can be reclaimed: everything before the live data, plus
        // (inside a fragmented message) the headers of the fragments already
        // folded into the message, which sit between its end and `pos`.
        let waste = match self.msg {
            Some(m) => m.start + (self.pos - (m.start + m.len)),
            None => self.pos,
        };
        if self.msg.is_none() && self.pos == self.end {
            self.pos = 0;
            self.end = 0;
        } else if waste > 0 {
            let cap = self.buf.as_ref().len();
            if cap - self.end <= cap / 4 {
                self.compact();
            }
        }
        let e = self.end;
        &mut self.buf.as_mut()[e..]
    }

    /// Mark `n` bytes of [`spare_mut`](Self::spare_mut) as received.
    #[inline]
    pub fn commit(&mut self, n: usize) {
        self.end = (self.end + n).min(self.buf.as_ref().len());
    }

    /// Copy in as much of `bytes` as fits; returns how many were taken.
    pub fn feed(&mut self, bytes: &[u8]) -> usize {
        let spare = self.spare_mut();
        let n = spare.len().min(bytes.len());
        copy(spare, &bytes[..n]);
        self.commit(n);
        n
    }

    fn compact(&mut self) {
        let buf = self.buf.as_mut();
        let mut at = 0;
        if let Some(m) = &mut self.msg {
            if m.start != 0 {
                buf.copy_within(m.start..m.start + m.len, 0);
                m.start = 0;
            }
            at = m.len;
        }
        buf.copy_within(self.pos..self.end, at);
        self.end = at + (self.end - self.pos);
        self.pos = at;
    }

    /// The next message, or `Ok(None)` when more bytes are needed.
    ///
    /// An error is final: fail the connection with [`Error::close_code`].
    /// Same as [`advance`](Self::advance) followed by [`message`](Self::message).
    #[inline(always)]
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<Option<Message<'_>>, Error> {
        // Inlined into the caller: a whole unfragmented data frame costs no
        // call, and the message stays in registers. The general path answers
        // in registers too (`Result<bool, _>`) and the message is then built
        // from `ready`: a general path that returned a `Message` would do so
        // through memory, and the fast path would have to store its message
        // into the same stack slot for the two to meet.
        match self.whole_frame() {
            // SAFETY: `p` comes from the call just made, and the message
            // borrows `self` for as long as it lives.
            Ok(Some(p)) => Ok(Some(unsafe { p.message() })),
            Ok(None) => match self.advance_general() {
                Ok(true) => Ok(self.message()),
                Ok(false) => Ok(None),
                Err(e) => Err(e),
            },
            Err(e) => Err(e),
        }
    }

    /// Process received bytes up to the end of the next message: `Ok(true)` when
    /// one is ready for [`message`](Self::message), `Ok(false)` when more bytes
    /// are needed. An error is final, as for [`next`](Self::next).
    #[inline]
    pub fn advance(&mut self) -> Result<bool, Error> {
        if self.advance_fast()? {
            return Ok(true);
        }
        self.advance_general()
    }

    /// The fast half of [`advance`](Self::advance): `Ok(true)` when the next
    /// message is a whole unfragmented text or binary frame already buffered
    /// (unmasked, validated, consumed: [`message`](Self::message) has it);
    /// `Ok(false)`, with nothing changed, for everything else, which
    /// `advance` hands to its general path. Errors as `advance`'s.
    #[inline(always)]
    pub fn advance_fast(&mut self) -> Result<bool, Error> {
        Ok(self.whole_frame()?.is_some())
    }

    /// [`advance`](Self::advance) for everything the fast path leaves:
    /// partial frames, fragments, control frames, errors.
    #[inline(never)]
    fn advance_general(&mut self) -> Result<bool, Error> {
        let r = self.advance_slow();
        self.idle =
            self.frame.is_none() && self.msg.is_none() && !self.closed && self.last_rsv == 0;
        r
    }

    fn advance_slow(&mut self) -> Result<bool, Error> {
        self.ready = None;
        self.fast = 0;
        loop {
            if self.frame.is_none() {
                let data = &self.buf.as_ref()[self.pos..self.end];
                let h = match Header::parse(data, self.role, self.allowed_rsv)? {
                    Some(h) => h,
                    None => return Ok(false),
                };
                // An extension's bits mark a message, on its first frame.
                if h.rsv != 0 && (h.opcode.is_control() || h.opcode == OpCode::Continuation) {
                    return Err(Error::ReservedBits);
                }
                if self.closed {
                    return Err(Error::FrameAfterClose);
                }
                if h.opcode.is_control() {
                    return self.control(h);
                }
                self.start_data(h)?;
            }
            match self.advance_payload()? {
                Some((start, len, text)) if self.last_rsv != 0 => {
                    self.ready = Some(Ready::Encoded { text, start, len });
                    return Ok(true);
                }
                Some((start, len, text)) => {
                    self.ready = Some(Ready::data(start, len, text));
                    return Ok(true);
                }
                None if self.frame.is_some() => return Ok(false),
                None => {} // a non-final fragment finished: parse the next header
            }
        }
    }

    /// The fast path of [`next`](Self::next) and [`advance`](Self::advance):
    /// no message in progress and a whole final text or binary frame in the
    /// buffer, with RSV bits clear, masked as the role requires, a 7- or
    /// 16-bit length within the limits, and at least 4 bytes buffered (a
    /// frame of 2 or 3 bytes, a payload of 0 or 1 byte, takes the general
    /// path when nothing follows it). Unmasks it, validates text, consumes
    /// it, records it (in `fast`) and returns where it lies. `Ok(None)` for
    /// everything else (a partial frame, a control frame, fragments, anything
    /// invalid), with nothing changed: the general path handles those, with
    /// the same results, errors included.
    ///
    /// It reads what it needs once into locals and stores only the new
    /// position and the message's length and kind: inlined into a caller's
    /// loop, a message costs no other memory traffic than its own bytes.
    /// The checks of the first two header bytes are one subtraction and one
    /// test. The 7- and 16-bit lengths then take separate copies of the
    /// rest (`take!`), each with its header size a constant and its length's
    /// range known, so the UTF-8 check's size classes that range rules out
    /// cost nothing; a branch rather than a select, which measured slower
    /// here (the select puts the length's load and the header's arithmetic
    /// on the chain from one frame's position to the next).
    #[inline(always)]
    fn whole_frame(&mut self) -> Result<Option<Payload>, Error> {
        if !self.idle {
            return Ok(None);
        }
        let (pos, end) = (self.pos, self.end);
        let Some(data) = self.buf.as_mut().get_mut(pos..end) else {
            return Ok(None);
        };
        let [b0, b1, b2, b3, ..] = *data else {
            return Ok(None);
        };
        // Byte 0 must be 0x81 (final text) or 0x82 (final binary): FIN set,
        // RSV clear; byte 1's top bit the role's mask bit. With the mask bit
        // flipped to 0 when it is right, the two bytes minus 0x81 leave
        // byte 0 at 0 or 1 (and byte 1 unchanged) exactly then; any other
        // byte 0 leaves a bit of 0xFE set (below 0x81 it borrows, leaving
        // 0x7F..=0xFF), a wrong mask bit leaves 0x8000.
        let t = (u16::from_le_bytes([b0, b1]) ^ self.want_mask).wrapping_sub(0x81);
        if t & 0x80FE != 0 {
            return Ok(None);
        }
        let text = t & 1 == 0;
        // The rest, for a header of `$hl` bytes before any key (a constant)
        // and a payload of `$len` bytes.
        macro_rules! take {
            ($hl:literal, $len:expr) => {{
                let len: usize = $len;
                // `max_frame <= max_message` (set so in `with_config`): one compare.
                if len > self.max_frame {
                    return Ok(None);
                }
                let Some((_, rest)) = data.split_at_mut_checked($hl) else {
                    return Ok(None);
                };
                // A server's frames carry the key after the length.
                let (payload, valid, used) = if self.want_mask != 0 {
                    let Some((&mut key, rest)) = rest.split_first_chunk_mut::<4>() else {
                        return Ok(None);
                    };
                    let Some(payload) = rest.get_mut(..len) else {
                        return Ok(None);
                    };
                    // Masked text: unmask and check for ASCII in one pass;
                    // only a payload with a non-ASCII byte gets the full
                    // UTF-8 check.
                    let valid = if text {
                        apply_mask_ascii(payload, key, 0) || utf8::is_valid_non_ascii(payload)
                    } else {
                        apply_mask_widest(payload, key, 0);
                        true
                    };
                    (payload, valid, $hl + 4 + len)
                } else {
                    let Some(payload) = rest.get_mut(..len) else {
                        return Ok(None);
                    };
                    let valid = !text || utf8::is_valid(payload);
                    (payload, valid, $hl + len)
                };
                self.pos = pos + used;
                if !valid {
                    self.ready = None;
                    self.fast = 0;
                    return Err(Error::InvalidUtf8);
                }
                // `ready` is `None` and `last_rsv` 0 already (see `idle`).
                // The two kinds return apart, each with its constant `text`,
                // so that an inlined caller's `match` on the message's kind
                // can be threaded through to its arm.
                let ptr = payload.as_ptr();
                if text {
                    self.fast = len << 2 | FAST_TEXT;
                    Ok(Some(Payload {
                        ptr,
                        len,
                        text: true,
                    }))
                } else {
                    self.fast = len << 2 | FAST_BINARY;
                    Ok(Some(Payload {
                        ptr,
                        len,
                        text: false,
                    }))
                }
            }};
        }
        // The mask bit is now clear: the high byte is the 7-bit length.
        // 126: the 16-bit length in bytes 2 and 3, which must be 126 or more
        // (minimal encoding); 127 (a 64-bit length) is not taken here.
        match t >> 8 {
            126 => match u16::from_be_bytes([b2, b3]) {
                len @ 126.. => take!(4, usize::from(len)),
                _ => Ok(None),
            },
            len @ 0..126 => take!(2, usize::from(len)),
            _ => Ok(None),
        }
    }

    /// The message the last [`advance`](Self::advance) (or [`next`](Self::next))
    /// finished, borrowing the buffer; `None` if there is none, or once
    /// [`spare_mut`](Self::spare_mut), [`feed`](Self::feed) or `advance` ran since.
    #[inline]
    pub fn message(&self) -> Option<Message<'_>> {
        let buf = self.buf.as_ref();
        let bytes = |start: usize, len: usize| buf.get(start..start + len).unwrap_or(&[]);
        if self.fast != 0 {
            let len = self.fast >> 2;
            let bytes = bytes(self.pos.wrapping_sub(len), len);
            return Some(if self.fast & 3 == FAST_TEXT {
                Message::Text(checked_str(bytes))
            } else {
                Message::Binary(bytes)
            });
        }
        Some(match self.ready? {
            Ready::Text { start, len } => Message::Text(checked_str(bytes(start, len))),
            Ready::Binary { start, len } | Ready::Encoded { start, len, .. } => {
                Message::Binary(bytes(start, len))
            }
            Ready::Ping { start, len } => Message::Ping(bytes(start, len)),
            Ready::Pong { start, len } => Message::Pong(bytes(start, len)),
            Ready::Close { code, start, len } => Message::Close(code.map(|code| CloseFrame {
                code,
                reason: checked_str(bytes(start, len)),
            })),
        })
    }

    fn control(&mut self, h: Header) -> Result<bool, Error> {
        let len = h.payload_len as usize; // <= 125, checked by Header::parse
        let total = h.header_len + len;
        if self.end - self.pos < total {
            return Ok(false);
        }
        let start = self.pos + h.header_len;
        self.pos += total;
        let buf = self.buf.as_mut();
        let payload = &mut buf[start..start + len];
        if let Some(key) = h.mask {
            apply_mask(payload, key, 0);
        }
        self.ready = Some(match h.opcode {
            OpCode::Ping => Ready::Ping { start, len },
            OpCode::Pong => Ready::Pong { start, len },
            _ => {
                let close = parse_close(&buf[start..start + len])?;
                self.closed = true;
                match close {
                    None => Ready::Close {
                        code: None,
                        start,
                        len: 0,
                    },
                    Some(c) => Ready::Close {
                        code: Some(c.code),
                        start: start + 2,
                        len: len - 2,
                    },
                }
            }
        });
        Ok(true)
    }

    fn start_data(&mut self, h: Header) -> Result<(), Error> {
        let continuation = h.opcode == OpCode::Continuation;
        match (&self.msg, continuation) {
            (None, true) => return Err(Error::UnexpectedContinuation),
            (Some(_), false) => return Err(Error::ExpectedContinuation),
            _ => {}
        }
        if h.payload_len > self.max_frame as u64 {
            return Err(Error::FrameTooLarge);
        }
        let len = h.payload_len as usize;
        let so_far = self.msg.map_or(0, |m| m.len);
        if so_far + len > self.max_message {
            return Err(Error::MessageTooLarge);
        }
        self.pos += h.header_len;
        if self.msg.is_none() {
            self.msg = Some(MsgState {
                text: h.opcode == OpCode::Text,
                rsv: h.rsv,
                start: self.pos,
                len: 0,
                valid: 0,
            });
        }
        self.frame = Some(FrameState {
            fin: h.fin,
            mask: h.mask,
            len,
            done: 0,
        });
        Ok(())
    }

    /// Process the payload bytes of the current data frame that have arrived.
    /// Returns the finished message's (start, len, is_text) when the final
    /// frame completes.
    #[inline]
    fn advance_payload(&mut self) -> Result<Option<(usize, usize, bool)>, Error> {
        let (Some(mut f), Some(mut m)) = (self.frame, self.msg) else {
            return Ok(None);
        };
        let n = (self.end - self.pos).min(f.len - f.done);
        let dst = m.start + m.len;
        let buf = self.buf.as_mut();
        if dst != self.pos && n > 0 {
            buf.copy_within(self.pos..self.pos + n, dst);
        }
        if let Some(key) = f.mask {
            apply_mask_widest(&mut buf[dst..dst + n], key, f.done);
        }
        self.pos += n;
        f.done += n;
        m.len += n;
        let frame_done = f.done == f.len;
        let last = frame_done && f.fin;
        // A message with RSV bits is checked once decoded, not here.
        if m.text && m.rsv == 0 && (n > 0 || last) {
            let region = &buf[m.start + m.valid..m.start + m.len];
            if last && m.valid == 0 {
                if !utf8::is_valid(region) {
                    return Err(Error::InvalidUtf8);
                }
                m.valid = m.len;
            } else {
                m.valid += utf8::validate_prefix(region).map_err(|_| Error::InvalidUtf8)?;
                if last && m.valid != m.len {
                    return Err(Error::InvalidUtf8);
                }
            }
        }
        if !frame_done {
            self.frame = Some(f);
            self.msg = Some(m);
            return Ok(None);
        }
        self.frame = None;
        if !f.fin {
            self.msg = Some(m);
            return Ok(None);
        }
        self.msg = None;
        self.last_rsv = m.rsv;
        Ok(Some((m.start, m.len, m.text)))
    }
}

/// A data message whose first frame carried RSV bits, as received
/// ([`FrameReader::compressed`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Compressed<'a> {
    /// A text message (its decoded bytes must be UTF-8).
    pub text: bool,
    /// The RSV bits of its first frame (0b100: RSV1).
    pub rsv: u8,
    /// The payload, unmasked and reassembled, not decoded.
    pub payload: &'a [u8],
}

/// Bytes the reader has already validated as UTF-8 (a finished text message, or
/// a close reason), as `&str`.
#[inline]
fn checked_str(bytes: &[u8]) -> &str {
    debug_assert!(core::str::from_utf8(bytes).is_ok());
    // SAFETY: only called on the span of a `Ready::Text`, a `Ready::Close`
    // reason or a fast-path text message (`fast >> 2` bytes before `pos`).
    // `advance_payload` validated a text message's bytes (whole, or
    // incrementally with nothing left over), `parse_close` the reason's and
    // `whole_frame` the fast message's before that `Ready` or `fast` was
    // recorded (with `pos`), and neither the bytes nor `pos`
    // can change while it stands: every `&mut` access to the buffer
    // (`spare_mut`, `feed`, `advance`) clears it or replaces it first.
    unsafe { core::str::from_utf8_unchecked(bytes) }
}

#[path = "reader_storage.rs"]
mod storage;

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec;
    use std::vec::Vec;

    /// A frame: `b0`, 7- or 16-bit length, the key if any, the (masked) payload.
    fn frame(b0: u8, payload: &[u8], key: Option<[u8; 4]>) -> Vec<u8> {
        let m = if key.is_some() { 0x80 } else { 0 };
        let mut f = vec![b0];
        if payload.len() < 126 {
            f.push(m | payload.len() as u8);
        } else {
            f.push(m | 126);
            f.extend_from_slice(&(payload.len() as u16).to_be_bytes());
        }
        match key {
            Some(k) => {
                f.extend_from_slice(&k);
                f.extend(payload.iter().enumerate().map(|(i, b)| b ^ k[i % 4]));
            }
            None => f.extend_from_slice(payload),
        }
        f
    }

    /// `message()` after `next()` / `advance()` gives the same message,
    /// whichever path produced it, as kinds alternate and a general-path
    /// message sits between fast-path ones (both roles).
    #[test]
    fn message_after_next_on_both_paths() {
        let long: Vec<u8> = (0..300).map(|i| b'a' + (i % 26) as u8).collect();
        let bin: Vec<u8> = (0..130).map(|i| (i * 7) as u8 | 0x80).collect();
        for (role, key) in [(Role::Client, None), (Role::Server, Some([9, 8, 7, 6]))] {
            let mut wire = Vec::new();
            wire.extend(frame(0x81, b"one", key));
            wire.extend(frame(0x82, &bin, key));
            wire.extend(frame(0x82, b"\xff", key));
            wire.extend(frame(0x89, b"ping", key));
            wire.extend(frame(0x81, &long, key));
            wire.extend(frame(0x01, b"fr", key));
            wire.extend(frame(0x80, b"ag", key));
            wire.extend(frame(0x81, "é".as_bytes(), key));
            let want = [
                Message::Text("one"),
                Message::Binary(&bin),
                Message::Binary(b"\xff"),
                Message::Ping(b"ping"),
                Message::Text(core::str::from_utf8(&long).unwrap()),
                Message::Text("frag"),
                Message::Text("é"),
            ];
            let mut r = FrameReader::new(role, vec![0u8; 2048]);
            r.feed(&wire);
            for (i, w) in want.iter().enumerate() {
                if i % 2 == 0 {
                    assert_eq!(r.next(), Ok(Some(*w)), "{role:?} {i}");
                } else {
                    assert_eq!(r.advance(), Ok(true), "{role:?} {i}");
                }
                assert_eq!(r.message(), Some(*w), "{role:?} {i}");
                assert_eq!(r.message(), Some(*w), "{role:?} {i}");
            }
            assert_eq!(r.next(), Ok(None));
            assert_eq!(r.message(), None);
            assert_eq!(r.buffered(), 0);
        }
    }

    /// An extension's RSV bit takes the general path and is reported; the
    /// next plain frame reports 0 again, and the one after takes the fast path
    /// with `last_rsv` still 0.
    #[test]
    fn last_rsv_across_paths() {
        let cfg = Config {
            allowed_rsv: 0b100,
            ..Config::default()
        };
        let mut r = FrameReader::with_config(Role::Client, vec![0u8; 1024], cfg);
        let mut wire = frame(0xC1, b"x", None);
        wire.extend(frame(0x81, b"y", None));
        wire.extend(frame(0x82, b"z", None));
        wire.extend(frame(0xC2, b"w", None));
        r.feed(&wire);
        let raw = |text, payload| Compressed {
            text,
            rsv: 0b100,
            payload,
        };
        assert_eq!(r.next(), Ok(Some(Message::Binary(b"x"))));
        assert_eq!(r.last_rsv(), 0b100);
        assert_eq!(r.compressed(), Some(raw(true, b"x")));
        assert_eq!(r.next(), Ok(Some(Message::Text("y"))));
        assert_eq!(r.last_rsv(), 0);
        assert_eq!(r.compressed(), None);
        assert_eq!(r.next(), Ok(Some(Message::Binary(b"z"))));
        assert_eq!(r.last_rsv(), 0);
        assert_eq!(r.compressed(), None);
        assert_eq!(r.next(), Ok(Some(Message::Binary(b"w"))));
        assert_eq!(r.last_rsv(), 0b100);
        assert_eq!(r.compressed(), Some(raw(false, b"w")));
    }

    /// After a close the fast path is closed too: a whole data frame that it
    /// would otherwise take is `FrameAfterClose`.
    #[test]
    fn no_fast_frame_after_close() {
        let mut r = FrameReader::new(Role::Client, vec![0u8; 1024]);
        let mut wire = frame(0x88, b"\x03\xe8", None);
        wire.extend(frame(0x81, b"late", None));
        r.feed(&wire);
        assert!(matches!(r.next(), Ok(Some(Message::Close(Some(_))))));
        assert_eq!(r.next(), Err(Error::FrameAfterClose));
    }

    /// What `next` gives on `wire` (fed whole) and what is left buffered,
    /// and the same through the general path alone (`advance_general`,
    /// then `message`): the fast path must answer exactly as the general
    /// path would, errors included, for whatever the frame's first bytes.
    fn both_paths(role: Role, cfg: Config, wire: &[u8]) {
        let (mut fast_buf, mut slow_buf) = ([0u8; 512], [0u8; 512]);
        let mut fast = FrameReader::with_config(role, &mut fast_buf[..], cfg);
        let mut slow = FrameReader::with_config(role, &mut slow_buf[..], cfg);
        assert_eq!(fast.feed(wire), wire.len());
        assert_eq!(slow.feed(wire), wire.len());
        let want = match slow.advance_general() {
            Ok(true) => std::format!("{:?}", Ok::<_, Error>(slow.message())),
            Ok(false) => std::format!("{:?}", Ok::<_, Error>(None::<Message<'_>>)),
            Err(e) => std::format!("{:?}", Err::<Option<Message<'_>>, _>(e)),
        };
        let want = (want, slow.buffered());
        let got = (std::format!("{:?}", fast.next()), fast.buffered());
        assert_eq!(got, want, "{role:?} {:02x?}", &wire[..wire.len().min(8)]);
    }

    /// Every first and second header byte, in both roles, with lengths of
    /// every encoding (7-bit, minimal and non-minimal 16-bit, 64-bit), a
    /// frame cut short and a frame followed by the next one's first bytes:
    /// the fast path's arithmetic on the header takes exactly the frames it
    /// may and leaves the others to the general path.
    #[test]
    fn fast_path_header_bytes_match_general_path() {
        let cfg = Config {
            max_frame_size: 300,
            ..Config::default()
        };
        let key = [0x11, 0x80, 0xfe, 0x3c];
        let b0s: Vec<u8> = if cfg!(miri) {
            vec![
                0x00, 0x01, 0x02, 0x80, 0x81, 0x82, 0x83, 0x88, 0x89, 0xC1, 0xFF,
            ]
        } else {
            (0..=255).collect()
        };
        for role in [Role::Client, Role::Server] {
            for &b0 in &b0s {
                for b1 in 0..=255u8 {
                    if cfg!(miri) && !matches!(b1 & 0x7F, 0..=2 | 125..=127) {
                        continue;
                    }
                    let exts: &[&[u8]] = match b1 & 0x7F {
                        126 => &[
                            &[0, 0],
                            &[0, 125],
                            &[0, 126],
                            &[1, 0x2C],
                            &[1, 0x2D],
                            &[0xFF, 0xFF],
                        ],
                        127 => &[&[0, 0, 0, 0, 0, 0, 0, 0], &[0, 0, 0, 0, 0, 1, 0, 0]],
                        _ => &[&[]],
                    };
                    for ext in exts {
                        let mut head = vec![b0, b1];
                        head.extend_from_slice(ext);
                        let len = match b1 & 0x7F {
                            126 => usize::from(u16::from_be_bytes([ext[0], ext[1]])),
                            127 => usize::from(ext[5]) << 16,
                            n => usize::from(n),
                        };
                        if b1 & 0x80 != 0 {
                            head.extend_from_slice(&key);
                        }
                        // An ASCII payload, masked if the frame says so;
                        // the longest ones stay partial (buffer of 512).
                        let mut body: Vec<u8> =
                            (0..len.min(400)).map(|i| b'a' + (i % 26) as u8).collect();
                        if b1 & 0x80 != 0 {
                            for (i, b) in body.iter_mut().enumerate() {
                                *b ^= key[i % 4];
                            }
                        }
                        let mut wire = head.clone();
                        wire.extend_from_slice(&body);
                        both_paths(role, cfg, &wire);
                        // Followed by the next frame's first bytes.
                        wire.extend_from_slice(&[0x81, 0x00, 0x82]);
                        both_paths(role, cfg, &wire);
                        // Cut short (on the last byte, or inside the header).
                        both_paths(
                            role,
                            cfg,
                            &wire[..head.len() + body.len().saturating_sub(1)],
                        );
                        both_paths(role, cfg, &head[..head.len().min(3)]);
                    }
                }
            }
        }
    }

    /// Frames of every payload length up to 300 (7- and 16-bit lengths),
    /// text (ASCII, valid and invalid UTF-8 at either end) and binary, in
    /// both roles and at every start offset modulo 16: the fast path gives
    /// what the general path gives.
    #[test]
    fn fast_path_lengths_and_payloads_match_general_path() {
        let max = if cfg!(miri) { 40 } else { 300 };
        for role in [Role::Client, Role::Server] {
            let key = (role == Role::Server).then_some([0xA5, 0x01, 0x80, 0x7F]);
            for len in 0..=max {
                if cfg!(miri) && !matches!(len, 0..=4 | 15..=17 | 31..=33) {
                    continue;
                }
                let ascii: Vec<u8> = (0..len).map(|i| b' ' + (i * 7 % 95) as u8).collect();
                let mut payloads = vec![(0x81, ascii.clone()), (0x82, ascii.clone())];
                if len >= 2 {
                    for at in [0, len - 2] {
                        let mut p = ascii.clone();
                        p[at..at + 2].copy_from_slice("é".as_bytes());
                        payloads.push((0x81, p.clone()));
                        p[at + 1] = b'x'; // a lead byte without its continuation
                        payloads.push((0x81, p));
                    }
                }
                for (b0, p) in payloads {
                    for pad in 0..16 {
                        if cfg!(miri) && pad > 1 {
                            break;
                        }
                        // `pad` bytes of an earlier frame consumed first shift
                        // this frame's start.
                        let mut wire = Vec::new();
                        if pad >= 2 {
                            let filler = vec![b'-'; pad - 2];
                            wire.extend(frame(0x82, &filler, key));
                        }
                        let skip = wire.len();
                        wire.extend(frame(b0, &p, key));
                        let cfg = Config::default();
                        let (mut fast_buf, mut slow_buf) = ([0u8; 1024], [0u8; 1024]);
                        let mut fast = FrameReader::with_config(role, &mut fast_buf[..], cfg);
                        let mut slow = FrameReader::with_config(role, &mut slow_buf[..], cfg);
                        fast.feed(&wire);
                        slow.feed(&wire);
                        if skip > 0 {
                            assert!(matches!(fast.next(), Ok(Some(Message::Binary(_)))));
                            assert!(matches!(slow.next(), Ok(Some(Message::Binary(_)))));
                        }
                        let want = match slow.advance_general() {
                            Ok(true) => Ok(slow.message()),
                            Ok(false) => Ok(None),
                            Err(e) => Err(e),
                        };
                        let got = fast.next();
                        assert_eq!(got, want, "{role:?} len {len} pad {pad} b0 {b0:#x}");
                        assert_eq!(fast.buffered(), slow.buffered());
                        if let Ok(Some(m)) = want {
                            assert_eq!(fast.message(), Some(m));
                        }
                    }
                }
            }
        }
    }

    /// Invalid UTF-8 in a whole frame is an error on the fast path in both
    /// roles, and leaves no message to borrow.
    #[test]
    fn fast_path_invalid_utf8() {
        for (role, key) in [(Role::Client, None), (Role::Server, Some([1, 2, 3, 4]))] {
            let mut bad: Vec<u8> = vec![b'a'; 140];
            bad[77] = 0xC0;
            let mut r = FrameReader::new(role, vec![0u8; 1024]);
            r.feed(&frame(0x81, b"fine", key));
            r.feed(&frame(0x81, &bad, key));
            assert_eq!(r.next(), Ok(Some(Message::Text("fine"))));
            assert_eq!(r.next(), Err(Error::InvalidUtf8), "{role:?}");
            assert_eq!(r.message(), None);
        }
    }
}
