//! The WebSocket frame header (RFC 6455 §5.2): a validated view for reading
//! and an encoder for writing.

use super::error::Error;

/// Which end of the connection we are. A client masks what it sends and
/// requires unmasked frames; a server the other way round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// Initiated the connection; masks outgoing frames.
    Client,
    /// Accepted the connection; requires masked incoming frames.
    Server,
}

/// A frame opcode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum OpCode {
    /// Continues a fragmented message.
    Continuation = 0x0,
    /// First frame of a UTF-8 text message.
    Text = 0x1,
    /// First frame of a binary message.
    Binary = 0x2,
    /// Connection close.
    Close = 0x8,
    /// Ping.
    Ping = 0x9,
    /// Pong.
    Pong = 0xA,
}

impl OpCode {
    /// The opcode for a 4-bit value, or `None` for the reserved ones.
    #[inline]
    pub const fn from_u8(v: u8) -> Option<OpCode> {
        Some(match v {
            0x0 => OpCode::Continuation,
            0x1 => OpCode::Text,
            0x2 => OpCode::Binary,
            0x8 => OpCode::Close,
            0x9 => OpCode::Ping,
            0xA => OpCode::Pong,
            _ => return None,
        })
    }

    /// Close, Ping and Pong.
    #[inline]
    pub const fn is_control(self) -> bool {
        (self as u8) & 0x8 != 0
    }
}

/// Largest payload of a control frame (RFC 6455 §5.5).
pub const MAX_CONTROL_PAYLOAD: usize = 125;
/// Largest frame header: 2 bytes, 8 bytes of extended length, 4 bytes of key.
pub const MAX_HEADER_LEN: usize = 14;

/// A frame header that passed every check that can be made from the header alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// FIN bit.
    pub fin: bool,
    /// RSV1..3 as the low three bits (RSV1 = 0b100).
    pub rsv: u8,
    /// The opcode.
    pub opcode: OpCode,
    /// The masking key, if the frame is masked.
    pub mask: Option<[u8; 4]>,
    /// Payload length.
    pub payload_len: u64,
    /// Header length in bytes (2 to 14).
    pub header_len: usize,
}

impl Header {
    /// Parse and validate a header at the start of `data`.
    ///
    /// `Ok(None)`: not enough bytes yet. Checks RSV bits against
    /// `allowed_rsv`, reserved opcodes, control frame rules, minimal length
    /// encoding, the 64-bit length's top bit and the masking rule for `role`
    /// (the role of the *receiver*).
    #[inline]
    pub fn parse(data: &[u8], role: Role, allowed_rsv: u8) -> Result<Option<Header>, Error> {
        let (b0, b1) = match data {
            [b0, b1, ..] => (*b0, *b1),
            _ => return Ok(None),
        };
        let fin = b0 & 0x80 != 0;
        let rsv = (b0 >> 4) & 0x7;
        if rsv & !allowed_rsv != 0 {
            return Err(Error::ReservedBits);
        }
        let opcode = match OpCode::from_u8(b0 & 0x0F) {
            Some(op) => op,
            None => return Err(Error::ReservedOpcode(b0 & 0x0F)),
        };
        let masked = b1 & 0x80 != 0;
        match (role, masked) {
            (Role::Server, false) => return Err(Error::UnmaskedFrame),
            (Role::Client, true) => return Err(Error::MaskedFrame),
            _ => {}
        }
        let len7 = b1 & 0x7F;
        if opcode.is_control() {
            if !fin {
                return Err(Error::FragmentedControlFrame);
            }
            if len7 > 125 {
                return Err(Error::ControlFrameTooLarge);
            }
        }
        let (payload_len, mut header_len) = match len7 {
            126 => {
                let [_, _, a, b, ..] = *data else {
                    return Ok(None);
                };
                let len = u16::from_be_bytes([a, b]);
                if len < 126 {
                    return Err(Error::NonMinimalLength);
                }
                (u64::from(len), 4)
            }
            127 => {
                let Some(ext) = data.get(2..10) else {
                    return Ok(None);
                };
                let mut be = [0u8; 8];
                be.copy_from_slice(ext);
                let len = u64::from_be_bytes(be);
                if len >> 63 != 0 {
                    return Err(Error::LengthOverflow);
                }
                if len <= 0xFFFF {
                    return Err(Error::NonMinimalLength);
                }
                (len, 10)
            }
            n => (u64::from(n), 2),
        };
        let mask = if masked {
            let Some(k) = data.get(header_len..header_len + 4) else {
                return Ok(None);
            };
            header_len += 4;
            Some([k[0], k[1], k[2], k[3]])
        } else {
            None
        };
        Ok(Some(Header {
            fin,
            rsv,
            opcode,
            mask,
            payload_len,
            header_len,
        }))
    }
}

/// Length of the header for a payload of `payload_len` bytes.
#[inline]
pub const fn header_len(payload_len: usize, masked: bool) -> usize {
    let base = if payload_len < 126 {
        2
    } else if payload_len <= 0xFFFF {
        4
    } else {
        10
    };
    if masked { base + 4 } else { base }
}

/// Write a header into `out`, which must hold `header_len(len, mask.is_some())`
/// bytes; returns the header length, or `None` if `out` is too short.
#[inline]
pub fn write_header(
    out: &mut [u8],
    fin: bool,
    rsv: u8,
    opcode: OpCode,
    payload_len: usize,
    mask: Option<[u8; 4]>,
) -> Option<usize> {
    let n = header_len(payload_len, mask.is_some());
    let out = out.get_mut(..n)?;
    out[0] = (u8::from(fin) << 7) | ((rsv & 7) << 4) | opcode as u8;
    let mbit = if mask.is_some() { 0x80 } else { 0 };
    let at = if payload_len < 126 {
        out[1] = mbit | payload_len as u8;
        2
    } else if payload_len <= 0xFFFF {
        out[1] = mbit | 126;
        out[2..4].copy_from_slice(&(payload_len as u16).to_be_bytes());
        4
    } else {
        out[1] = mbit | 127;
        out[2..10].copy_from_slice(&(payload_len as u64).to_be_bytes());
        10
    };
    if let Some(k) = mask {
        out[at..at + 4].copy_from_slice(&k);
    }
    Some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trip_all_length_forms() {
        for &len in &[0usize, 1, 125, 126, 127, 0xFFFF, 0x10000, 1 << 40] {
            for mask in [None, Some([1, 2, 3, 4])] {
                let mut out = [0u8; 14];
                let n = write_header(&mut out, true, 0, OpCode::Binary, len, mask).unwrap();
                assert_eq!(n, header_len(len, mask.is_some()));
                let role = if mask.is_some() {
                    Role::Server
                } else {
                    Role::Client
                };
                let h = Header::parse(&out[..n], role, 0).unwrap().unwrap();
                assert_eq!(h.payload_len, len as u64);
                assert_eq!(h.header_len, n);
                assert_eq!(h.mask, mask);
                assert!(h.fin);
                // Every strict prefix is "need more bytes".
                for cut in 0..n {
                    assert_eq!(Header::parse(&out[..cut], role, 0), Ok(None));
                }
            }
        }
    }

    #[test]
    fn header_rejections() {
        let c = Role::Client;
        assert_eq!(Header::parse(&[0xC1, 0x00], c, 0), Err(Error::ReservedBits));
        assert!(Header::parse(&[0xC1, 0x00], c, 0b100).unwrap().is_some());
        assert_eq!(
            Header::parse(&[0x83, 0x00], c, 0),
            Err(Error::ReservedOpcode(3))
        );
        assert_eq!(
            Header::parse(&[0x8B, 0x00], c, 0),
            Err(Error::ReservedOpcode(0xB))
        );
        assert_eq!(
            Header::parse(&[0x09, 0x00], c, 0),
            Err(Error::FragmentedControlFrame)
        );
        assert_eq!(
            Header::parse(&[0x89, 126, 0, 126], c, 0),
            Err(Error::ControlFrameTooLarge)
        );
        assert_eq!(
            Header::parse(&[0x82, 126, 0, 125], c, 0),
            Err(Error::NonMinimalLength)
        );
        let mut long = [0x82, 127, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF];
        assert_eq!(Header::parse(&long, c, 0), Err(Error::NonMinimalLength));
        long[2] = 0x80;
        assert_eq!(Header::parse(&long, c, 0), Err(Error::LengthOverflow));
        assert_eq!(
            Header::parse(&[0x82, 0x80, 1, 2, 3, 4], c, 0),
            Err(Error::MaskedFrame)
        );
        assert_eq!(
            Header::parse(&[0x82, 0x00], Role::Server, 0),
            Err(Error::UnmaskedFrame)
        );
    }
}
