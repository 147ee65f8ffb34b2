//! FrameWriter: messages to wire bytes, for either role.
//!
//! A writer encodes into a caller's `&mut [u8]` or appends to a
//! [`WriteBuf`]; either way a message is written whole or not at all, so a
//! full buffer never leaves half a frame behind. A client writer masks with a
//! fresh key from its [`MaskSource`] per frame, copying and masking in one
//! pass. A payload can also be serialized in place after
//! [`WriteBuf::payload_mut`]'s headroom and committed with
//! [`FrameWriter::commit_in_place`]: the header is written in front of it and
//! nothing is moved.

use super::close::CloseCode;
use super::error::EncodeError;
use super::frame::{MAX_CONTROL_PAYLOAD, OpCode, Role, header_len, write_header};
use crate::buf::{HEADROOM, WriteBuf};
use crate::rand::{MaskSource, NoMask};
use crate::simd::copy::copy;
use crate::simd::mask::{apply_mask, copy_masked};

/// How a writer gets masking keys: a server never masks; a client asks its
/// [`MaskSource`]. Implemented for [`NoMask`] and every `MaskSource`.
pub trait Masking {
    /// Whether this source can ever give a key: false lets a server writer's
    /// code drop every masking branch at compile time.
    const CAN_MASK: bool = true;

    /// The key for the next frame, or `None` when frames go unmasked.
    fn frame_key(&mut self) -> Option<[u8; 4]>;
}

impl Masking for NoMask {
    const CAN_MASK: bool = false;

    #[inline]
    fn frame_key(&mut self) -> Option<[u8; 4]> {
        None
    }
}

impl<M: MaskSource> Masking for M {
    #[inline]
    fn frame_key(&mut self) -> Option<[u8; 4]> {
        Some(self.next_key())
    }
}

/// Encodes frames. The type says the role, so role and masking cannot disagree:
/// [`FrameWriter::server`] makes a `FrameWriter<NoMask>`, which never masks;
/// [`FrameWriter::client`] a `FrameWriter<M: MaskSource>`, which masks every frame.
///
/// ```
/// use tickwire_codec::rand::MaskRng;
/// use tickwire_codec::ws::{FrameWriter, Role};
///
/// let mut out = [0u8; 16];
/// let n = FrameWriter::server().encode_text("hi", &mut out).unwrap();
/// assert_eq!(&out[..n], b"\x81\x02hi");
/// let mut client = FrameWriter::client(MaskRng::from_seed([7; 32]));
/// assert_eq!(client.role(), Role::Client);
/// let n = client.encode_text("hi", &mut out).unwrap();
/// assert_eq!((n, out[1] & 0x80), (8, 0x80)); // masked: a 4-byte key after the length
/// ```
#[derive(Debug, Clone)]
pub struct FrameWriter<M = NoMask> {
    mask: M,
    /// Split data messages into frames of at most this many payload bytes (0: never).
    fragment_size: usize,
    /// Longest data payload [`encode_data`](Self::encode_data) sends as one
    /// frame with a 7- or 16-bit length: 65,535 or the fragment size if smaller.
    fast_max: usize,
}

/// Largest payload with a 16-bit length.
const MAX_16: usize = 0xFFFF;

/// The mask bit of header byte 1, in a little-endian header word.
const MASK_BIT: u64 = 0x80 << 8;

/// [`FrameWriter::fast_max`] for a fragment size.
const fn fast_max(fragment_size: usize) -> usize {
    if fragment_size != 0 && fragment_size < MAX_16 {
        fragment_size
    } else {
        MAX_16
    }
}

impl FrameWriter<NoMask> {
    /// A server-role writer: frames are not masked.
    ///
    /// ```
    /// use tickwire_codec::buf::WriteBuf;
    /// use tickwire_codec::ws::FrameWriter;
    ///
    /// let mut writer = FrameWriter::server(); // server frames are never masked
    /// let mut out = WriteBuf::new([0u8; 64]);
    /// writer.write_text("hi", &mut out).unwrap();
    /// assert_eq!(out.data(), &[0x81, 0x02, b'h', b'i']);
    /// ```
    pub fn server() -> Self {
        FrameWriter {
            mask: NoMask,
            fragment_size: 0,
            fast_max: MAX_16,
        }
    }
}

impl<M: MaskSource> FrameWriter<M> {
    /// A client-role writer masking every frame with a key from `mask`.
    ///
    /// ```
    /// use tickwire_codec::buf::WriteBuf;
    /// use tickwire_codec::rand::MaskRng;
    /// use tickwire_codec::ws::FrameWriter;
    ///
    /// // Client frames are masked: the role and the mask source come together.
    /// let mut writer = FrameWriter::client(MaskRng::from_seed([7; 32]));
    /// let mut out = WriteBuf::new([0u8; 64]);
    /// writer.write_text("hi", &mut out).unwrap();
    /// assert_eq!(out.data()[1], 0x80 | 2); // the mask bit, 2 bytes
    /// assert_eq!(out.len(), 2 + 4 + 2); // header, key, payload
    /// ```
    pub fn client(mask: M) -> Self {
        FrameWriter {
            mask,
            fragment_size: 0,
            fast_max: MAX_16,
        }
    }

    /// The key source.
    pub fn mask_source(&mut self) -> &mut M {
        &mut self.mask
    }
}

impl<M: Masking> FrameWriter<M> {
    /// The role this writer encodes for.
    pub fn role(&self) -> Role {
        if M::CAN_MASK {
            Role::Client
        } else {
            Role::Server
        }
    }

    /// Whether frames are masked: a client writer's.
    const MASKED: bool = M::CAN_MASK;

    #[inline]
    fn key(&mut self) -> Option<[u8; 4]> {
        if Self::MASKED {
            self.mask.frame_key()
        } else {
            None
        }
    }

    /// Split text and binary messages longer than `n` bytes into fragments of
    /// `n` bytes (0 turns fragmentation off; control frames are never split).
    pub fn with_fragment_size(mut self, n: usize) -> Self {
        self.fragment_size = n;
        self.fast_max = fast_max(n);
        self
    }

    /// The current fragment size (0: off).
    pub fn fragment_size(&self) -> usize {
        self.fragment_size
    }

    /// Wire size of a text or binary message of `payload_len` bytes,
    /// fragmentation included.
    pub fn message_len(&self, payload_len: usize) -> usize {
        self.fragmented_len(payload_len, self.fragment_size)
    }

    /// Wire size of a text or binary message of `payload_len` bytes in frames
    /// of at most `f` payload bytes (0: one frame).
    pub fn fragmented_len(&self, payload_len: usize, f: usize) -> usize {
        let masked = Self::MASKED;
        if f == 0 || payload_len <= f {
            return header_len(payload_len, masked) + payload_len;
        }
        let full = payload_len / f;
        let rest = payload_len % f;
        let mut n = full * (header_len(f, masked) + f);
        if rest > 0 {
            n += header_len(rest, masked) + rest;
        }
        n
    }

    /// Encode one frame of `payload` into `out`; returns the bytes written.
    pub fn encode_frame(
        &mut self,
        opcode: OpCode,
        fin: bool,
        payload: &[u8],
        out: &mut [u8],
    ) -> Result<usize, EncodeError> {
        if opcode.is_control() && payload.len() > MAX_CONTROL_PAYLOAD {
            return Err(EncodeError::ControlPayloadTooLarge);
        }
        let masked = Self::MASKED;
        let total = header_len(payload.len(), masked) + payload.len();
        if out.len() < total {
            return Err(EncodeError::BufferFull);
        }
        Ok(self.put_frame(opcode, fin, 0, payload, out))
    }

    /// Write one frame with RSV bits `rsv`; `out` is known to be large enough.
    #[inline]
    fn put_frame(
        &mut self,
        opcode: OpCode,
        fin: bool,
        rsv: u8,
        payload: &[u8],
        out: &mut [u8],
    ) -> usize {
        let key = self.key();
        let h = write_header(out, fin, rsv, opcode, payload.len(), key).unwrap_or(0);
        let dst = &mut out[h..h + payload.len()];
        match key {
            Some(k) => copy_masked(dst, payload, k, 0),
            None => copy(dst, payload),
        }
        h + payload.len()
    }

    /// Encode a data message (fragmented if configured) into `out`.
    ///
    /// Inlined fast path for the common case, one frame with a 7- or 16-bit
    /// length: one branch picks the header size, which is then a constant,
    /// the header (with the masking key) is one little-endian word store,
    /// then the payload is copied (or copied and masked); everything else
    /// takes [`encode_data_general`](Self::encode_data_general).
    #[inline(always)]
    fn encode_data(
        &mut self,
        opcode: OpCode,
        payload: &[u8],
        out: &mut [u8],
    ) -> Result<usize, EncodeError> {
        let n = payload.len();
        if n > self.fast_max {
            return self.encode_data_general(opcode, payload, out);
        }
        // Byte 0: FIN + opcode; byte 1: the mask bit and the length or 126;
        // bytes 2 and 3 of a 16-bit length: the length, big-endian.
        let b0 = u64::from(0x80 | opcode as u8);
        let short = b0 | (n as u64) << 8;
        let long = b0 | 126 << 8 | u64::from((n as u16).swap_bytes()) << 16;
        let masked = Self::MASKED;
        match (masked, n < 126) {
            (true, true) => self.fast::<6>(short | MASK_BIT, payload, out),
            (true, false) => self.fast::<8>(long | MASK_BIT, payload, out),
            (false, true) => self.fast::<2>(short, payload, out),
            (false, false) => self.fast::<4>(long, payload, out),
        }
    }

    /// One frame with an `H`-byte header whose first bytes `header` holds
    /// (little-endian). `H` is 6 or 8 for a client: the key is taken (only
    /// once the frame is known to fit) and goes into the last 4 bytes, so the
    /// header is one store (two for `H` = 6) and the payload is masked
    /// while copied.
    #[inline(always)]
    fn fast<const H: usize>(
        &mut self,
        header: u64,
        payload: &[u8],
        out: &mut [u8],
    ) -> Result<usize, EncodeError> {
        let n = payload.len();
        let Some(out) = out.get_mut(..H + n) else {
            return Err(EncodeError::BufferFull);
        };
        let (head, body) = out.split_at_mut(H);
        // (A client's source always gives a key; were it not to, the frame
        // would go out masked with the zero key, which is still valid.)
        if H >= 6
            && let Some(k) = self.key()
        {
            let word = header | u64::from(u32::from_le_bytes(k)) << (8 * H.saturating_sub(4));
            head.copy_from_slice(&word.to_le_bytes()[..H]);
            copy_masked(body, payload, k, 0);
        } else {
            head.copy_from_slice(&header.to_le_bytes()[..H]);
            copy(body, payload);
        }
        Ok(H + n)
    }

    /// [`encode_data`](Self::encode_data) for fragmented and 64-bit-length messages.
    #[inline(never)]
    fn encode_data_general(
        &mut self,
        opcode: OpCode,
        payload: &[u8],
        out: &mut [u8],
    ) -> Result<usize, EncodeError> {
        self.encode_data_rsv(opcode, 0, payload, self.fragment_size, out)
    }

    /// A data message in frames of at most `f` payload bytes (0: one frame)
    /// whose first frame carries RSV bits `rsv`.
    #[inline]
    fn encode_data_rsv(
        &mut self,
        opcode: OpCode,
        rsv: u8,
        payload: &[u8],
        f: usize,
        out: &mut [u8],
    ) -> Result<usize, EncodeError> {
        let total = self.fragmented_len(payload.len(), f);
        if out.len() < total {
            return Err(EncodeError::BufferFull);
        }
        if f == 0 || payload.len() <= f {
            return Ok(self.put_frame(opcode, true, rsv, payload, out));
        }
        let mut at = 0;
        let mut op = opcode;
        let mut bits = rsv;
        let mut chunks = payload.chunks(f).peekable();
        while let Some(chunk) = chunks.next() {
            let fin = chunks.peek().is_none();
            at += self.put_frame(op, fin, bits, chunk, &mut out[at..]);
            op = OpCode::Continuation;
            bits = 0;
        }
        Ok(at)
    }

    /// Encode a message compressed by permessage-deflate (`payload` as a
    /// [`Deflater`](crate::ws::deflate::Deflater) made it, without the
    /// trailing `00 00 ff ff`): a text (`text`) or binary message with RSV1
    /// on its first frame only (RFC 7692 §6), fragmented if configured.
    /// Same size as an uncompressed message of that length
    /// ([`message_len`](Self::message_len)).
    #[cfg(feature = "deflate")]
    pub fn encode_compressed(
        &mut self,
        text: bool,
        payload: &[u8],
        out: &mut [u8],
    ) -> Result<usize, EncodeError> {
        let opcode = if text { OpCode::Text } else { OpCode::Binary };
        let f = self.fragment_size;
        self.encode_data_rsv(opcode, crate::ws::deflate::RSV1, payload, f, out)
    }

    /// Append a compressed message to `wb` (see
    /// [`encode_compressed`](Self::encode_compressed)).
    #[cfg(feature = "deflate")]
    pub fn write_compressed<B: AsRef<[u8]> + AsMut<[u8]>>(
        &mut self,
        text: bool,
        payload: &[u8],
        wb: &mut WriteBuf<B>,
    ) -> Result<(), EncodeError> {
        let out = wb.reserve(self.message_len(payload.len()))?;
        let n = self.encode_compressed(text, payload, out)?;
        wb.commit(n);
        Ok(())
    }

    /// [`write_compressed`](Self::write_compressed) in frames of at most
    /// `fragment` payload bytes (0: one frame) rather than the configured
    /// fragment size: RSV1 on the first frame, the compressed bytes split
    /// across it and its continuations (RFC 7692 §6.1).
    #[cfg(feature = "deflate")]
    pub fn write_compressed_fragmented<B: AsRef<[u8]> + AsMut<[u8]>>(
        &mut self,
        text: bool,
        payload: &[u8],
        fragment: usize,
        wb: &mut WriteBuf<B>,
    ) -> Result<(), EncodeError> {
        let opcode = if text { OpCode::Text } else { OpCode::Binary };
        let out = wb.reserve(self.fragmented_len(payload.len(), fragment))?;
        let rsv = crate::ws::deflate::RSV1;
        let n = self.encode_data_rsv(opcode, rsv, payload, fragment, out)?;
        wb.commit(n);
        Ok(())
    }

    /// Encode a text message into `out`.
    #[inline(always)]
    pub fn encode_text(&mut self, text: &str, out: &mut [u8]) -> Result<usize, EncodeError> {
        self.encode_data(OpCode::Text, text.as_bytes(), out)
    }

    /// Encode a binary message into `out`.
    #[inline(always)]
    pub fn encode_binary(&mut self, data: &[u8], out: &mut [u8]) -> Result<usize, EncodeError> {
        self.encode_data(OpCode::Binary, data, out)
    }

    /// Encode a ping (payload at most 125 bytes) into `out`.
    pub fn encode_ping(&mut self, payload: &[u8], out: &mut [u8]) -> Result<usize, EncodeError> {
        self.encode_frame(OpCode::Ping, true, payload, out)
    }

    /// Encode a pong (payload at most 125 bytes) into `out`.
    pub fn encode_pong(&mut self, payload: &[u8], out: &mut [u8]) -> Result<usize, EncodeError> {
        self.encode_frame(OpCode::Pong, true, payload, out)
    }

    /// Encode a close frame into `out`: no body when `code` is `None`,
    /// otherwise the code and a reason of at most 123 bytes.
    pub fn encode_close(
        &mut self,
        code: Option<CloseCode>,
        reason: &str,
        out: &mut [u8],
    ) -> Result<usize, EncodeError> {
        let mut body = [0u8; MAX_CONTROL_PAYLOAD];
        let n = close_body(code, reason, &mut body)?;
        self.encode_frame(OpCode::Close, true, &body[..n], out)
    }

    /// Append one frame to `wb`.
    pub fn write_frame<B: AsRef<[u8]> + AsMut<[u8]>>(
        &mut self,
        opcode: OpCode,
        fin: bool,
        payload: &[u8],
        wb: &mut WriteBuf<B>,
    ) -> Result<(), EncodeError> {
        let total = header_len(payload.len(), Self::MASKED) + payload.len();
        let out = wb.reserve(total)?;
        let n = self.encode_frame(opcode, fin, payload, out)?;
        wb.commit(n);
        Ok(())
    }

    pub(crate) fn write_data<B: AsRef<[u8]> + AsMut<[u8]>>(
        &mut self,
        opcode: OpCode,
        payload: &[u8],
        wb: &mut WriteBuf<B>,
    ) -> Result<(), EncodeError> {
        let out = wb.reserve(self.message_len(payload.len()))?;
        let n = self.encode_data(opcode, payload, out)?;
        wb.commit(n);
        Ok(())
    }

    /// Append a text message to `wb`.
    #[inline]
    pub fn write_text<B: AsRef<[u8]> + AsMut<[u8]>>(
        &mut self,
        text: &str,
        wb: &mut WriteBuf<B>,
    ) -> Result<(), EncodeError> {
        self.write_data(OpCode::Text, text.as_bytes(), wb)
    }

    /// Append a binary message to `wb`.
    #[inline]
    pub fn write_binary<B: AsRef<[u8]> + AsMut<[u8]>>(
        &mut self,
        data: &[u8],
        wb: &mut WriteBuf<B>,
    ) -> Result<(), EncodeError> {
        self.write_data(OpCode::Binary, data, wb)
    }

    /// Append a ping to `wb`.
    pub fn write_ping<B: AsRef<[u8]> + AsMut<[u8]>>(
        &mut self,
        payload: &[u8],
        wb: &mut WriteBuf<B>,
    ) -> Result<(), EncodeError> {
        self.write_frame(OpCode::Ping, true, payload, wb)
    }

    /// Append a pong to `wb`.
    pub fn write_pong<B: AsRef<[u8]> + AsMut<[u8]>>(
        &mut self,
        payload: &[u8],
        wb: &mut WriteBuf<B>,
    ) -> Result<(), EncodeError> {
        self.write_frame(OpCode::Pong, true, payload, wb)
    }

    /// Append a close frame to `wb` (see [`encode_close`](Self::encode_close)).
    pub fn write_close<B: AsRef<[u8]> + AsMut<[u8]>>(
        &mut self,
        code: Option<CloseCode>,
        reason: &str,
        wb: &mut WriteBuf<B>,
    ) -> Result<(), EncodeError> {
        let mut body = [0u8; MAX_CONTROL_PAYLOAD];
        let n = close_body(code, reason, &mut body)?;
        self.write_frame(OpCode::Close, true, &body[..n], wb)
    }

    /// Turn `payload_len` bytes written at [`WriteBuf::payload_mut`] into one
    /// frame: the header goes into the headroom in front of them and the
    /// payload is masked in place (client role). A text payload is checked
    /// for UTF-8 first. When `wb` held nothing else, nothing is moved;
    /// otherwise the frame is moved down to follow the waiting bytes.
    pub fn commit_in_place<B: AsRef<[u8]> + AsMut<[u8]>>(
        &mut self,
        opcode: OpCode,
        payload_len: usize,
        wb: &mut WriteBuf<B>,
    ) -> Result<(), EncodeError> {
        let was_empty = wb.is_empty();
        let (storage, end) = wb.raw_tail();
        let p0 = end + HEADROOM;
        let Some(payload) = storage.get_mut(p0..p0.saturating_add(payload_len)) else {
            return Err(EncodeError::BufferFull);
        };
        if opcode.is_control() && payload_len > MAX_CONTROL_PAYLOAD {
            return Err(EncodeError::ControlPayloadTooLarge);
        }
        if opcode == OpCode::Text && !crate::simd::utf8::is_valid(payload) {
            return Err(EncodeError::InvalidUtf8);
        }
        let key = self.key();
        if let Some(k) = key {
            apply_mask(payload, k, 0);
        }
        let h = header_len(payload_len, key.is_some());
        let h0 = p0 - h;
        write_header(&mut storage[h0..p0], true, 0, opcode, payload_len, key);
        let frame_end = p0 + payload_len;
        if h0 != end && !was_empty {
            storage.copy_within(h0..frame_end, end);
            wb.set_span(end, end + h + payload_len);
        } else {
            wb.set_span(h0, frame_end);
        }
        Ok(())
    }
}

/// The body of a close frame: 2-byte code and reason.
fn close_body(
    code: Option<CloseCode>,
    reason: &str,
    out: &mut [u8; MAX_CONTROL_PAYLOAD],
) -> Result<usize, EncodeError> {
    let Some(code) = code else {
        return if reason.is_empty() {
            Ok(0)
        } else {
            Err(EncodeError::ReasonWithoutCode)
        };
    };
    if !code.is_valid_on_wire() {
        return Err(EncodeError::InvalidCloseCode(code.0));
    }
    let r = reason.as_bytes();
    if r.len() > MAX_CONTROL_PAYLOAD - 2 {
        return Err(EncodeError::ControlPayloadTooLarge);
    }
    out[..2].copy_from_slice(&code.0.to_be_bytes());
    out[2..2 + r.len()].copy_from_slice(r);
    Ok(2 + r.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rand::MaskRng;
    use std::vec;
    use std::vec::Vec;

    /// A frame as RFC 6455 §5.2 spells it, built byte by byte.
    fn reference(opcode: OpCode, fin: bool, payload: &[u8], key: Option<[u8; 4]>) -> Vec<u8> {
        let mut f = vec![u8::from(fin) << 7 | opcode as u8];
        let m = if key.is_some() { 0x80 } else { 0 };
        let n = payload.len();
        if n < 126 {
            f.push(m | n as u8);
        } else if n <= 0xFFFF {
            f.push(m | 126);
            f.extend_from_slice(&(n as u16).to_be_bytes());
        } else {
            f.push(m | 127);
            f.extend_from_slice(&(n as u64).to_be_bytes());
        }
        let k = key.unwrap_or([0; 4]);
        if key.is_some() {
            f.extend_from_slice(&k);
        }
        f.extend(payload.iter().enumerate().map(|(i, b)| b ^ k[i % 4]));
        f
    }

    /// Every header size and its edges, both roles, with and without
    /// fragmentation: the inlined fast path writes exactly the RFC's bytes,
    /// and a buffer one byte short is refused without a byte written.
    #[test]
    fn data_frames_match_the_rfc_at_every_header_size() {
        let lens = [
            0, 1, 2, 3, 4, 5, 6, 7, 8, 15, 16, 31, 32, 33, 64, 65, 100, 125, 126, 127, 128, 200,
            255, 256, 257, 1000, 65_535, 65_536, 70_000,
        ];
        let seed = [0x5A; 32];
        for frag in [0, 1, 100, 126, 65_535, 65_536, 100_000] {
            let server = FrameWriter::server().with_fragment_size(frag);
            check_sizes(server, frag, None, &lens);
            let client = FrameWriter::client(MaskRng::from_seed(seed)).with_fragment_size(frag);
            check_sizes(client, frag, Some(MaskRng::from_seed(seed)), &lens);
        }
    }

    /// [`data_frames_match_the_rfc_at_every_header_size`] for one writer; a client
    /// writer's keys are those of `keys`.
    fn check_sizes<M: Masking>(
        mut w: FrameWriter<M>,
        frag: usize,
        mut keys: Option<MaskRng>,
        lens: &[usize],
    ) {
        let role = w.role();
        for &n in lens {
            // Miri is ~1000x slower: the long payloads only natively.
            if (frag == 1 || cfg!(miri)) && n > 300 {
                continue;
            }
            let payload: Vec<u8> = (0..n).map(|i| (i * 31 + 7) as u8).collect();
            let mut expected = Vec::new();
            let chunk = if frag == 0 { n.max(1) } else { frag };
            let mut chunks = payload.chunks(chunk).peekable();
            let mut op = OpCode::Binary;
            if n == 0 {
                let key = keys.as_mut().map(|k| k.next_key());
                expected = reference(op, true, &[], key);
            }
            while let Some(c) = chunks.next() {
                let key = keys.as_mut().map(|k| k.next_key());
                expected.extend(reference(op, chunks.peek().is_none(), c, key));
                op = OpCode::Continuation;
            }
            let what = std::format!("{role:?} frag {frag} len {n}");
            assert_eq!(w.message_len(n), expected.len(), "{what}");
            let mut short = vec![0xEE; expected.len() - 1];
            assert_eq!(
                w.encode_binary(&payload, &mut short),
                Err(EncodeError::BufferFull),
                "{what}"
            );
            assert!(short.iter().all(|&b| b == 0xEE), "{what}: wrote when short");
            let mut out = vec![0xEE; expected.len() + 9];
            assert_eq!(
                w.encode_binary(&payload, &mut out),
                Ok(expected.len()),
                "{what}"
            );
            assert!(out[..expected.len()] == expected[..], "{what}");
            assert!(
                out[expected.len()..].iter().all(|&b| b == 0xEE),
                "{what}: past the end"
            );
        }
    }
}
