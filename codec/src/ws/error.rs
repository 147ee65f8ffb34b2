//! Errors of the WebSocket codec, each mapped to the close code RFC 6455 asks for.

use super::close::CloseCode;

/// A protocol violation or limit breach in received frames.
///
/// After an error the connection must be failed: send a Close with
/// [`Error::close_code`] and stop reading (RFC 6455 §7.1.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// RSV1..3 set without an extension that defines them.
    ReservedBits,
    /// Opcode 3..7 or 0xB..0xF.
    ReservedOpcode(u8),
    /// A server received an unmasked frame.
    UnmaskedFrame,
    /// A client received a masked frame.
    MaskedFrame,
    /// A control frame without FIN.
    FragmentedControlFrame,
    /// A control frame with more than 125 bytes of payload.
    ControlFrameTooLarge,
    /// A length encoded in more bytes than needed.
    NonMinimalLength,
    /// A 64-bit length with its most significant bit set.
    LengthOverflow,
    /// A continuation frame with no message in progress.
    UnexpectedContinuation,
    /// A new text or binary frame while a fragmented message is in progress.
    ExpectedContinuation,
    /// A close frame with a one-byte payload.
    InvalidClosePayload,
    /// A close code that may not appear on the wire (RFC 6455 §7.4).
    InvalidCloseCode(u16),
    /// A frame after the peer's close frame.
    FrameAfterClose,
    /// Text (or a close reason) that is not valid UTF-8.
    InvalidUtf8,
    /// A frame longer than the configured maximum.
    FrameTooLarge,
    /// A message longer than the configured maximum (for a compressed
    /// message: once inflated).
    MessageTooLarge,
    /// A compressed message (permessage-deflate) whose payload is not a
    /// valid raw DEFLATE stream.
    InvalidCompressedData,
}

impl Error {
    /// The close code to fail the connection with.
    pub const fn close_code(self) -> CloseCode {
        match self {
            Error::InvalidUtf8 => CloseCode::INVALID_PAYLOAD,
            Error::FrameTooLarge | Error::MessageTooLarge => CloseCode::TOO_BIG,
            _ => CloseCode::PROTOCOL_ERROR,
        }
    }

    const fn text(self) -> &'static str {
        match self {
            Error::ReservedBits => "reserved bits set",
            Error::ReservedOpcode(_) => "reserved opcode",
            Error::UnmaskedFrame => "unmasked frame from client",
            Error::MaskedFrame => "masked frame from server",
            Error::FragmentedControlFrame => "fragmented control frame",
            Error::ControlFrameTooLarge => "control frame payload over 125 bytes",
            Error::NonMinimalLength => "non-minimal payload length",
            Error::LengthOverflow => "64-bit payload length with the top bit set",
            Error::UnexpectedContinuation => "continuation frame without a message",
            Error::ExpectedContinuation => "new message inside a fragmented message",
            Error::InvalidClosePayload => "close frame with a one-byte payload",
            Error::InvalidCloseCode(_) => "invalid close code",
            Error::FrameAfterClose => "frame after close",
            Error::InvalidUtf8 => "invalid UTF-8",
            Error::FrameTooLarge => "frame larger than the limit (`max_frame_size`)",
            Error::MessageTooLarge => {
                "message larger than the limit (`max_message_size`) or the read buffer"
            }
            Error::InvalidCompressedData => "invalid compressed data",
        }
    }
}

impl core::fmt::Display for Error {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Error::ReservedOpcode(op) => write!(f, "{} {op:#x}", self.text()),
            Error::InvalidCloseCode(c) => write!(f, "{} {c}", self.text()),
            _ => f.write_str(self.text()),
        }
    }
}

impl core::error::Error for Error {}

/// A frame could not be encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum EncodeError {
    /// The output has no room for the whole frame (nothing was written).
    BufferFull,
    /// A ping, pong or close payload over 125 bytes.
    ControlPayloadTooLarge,
    /// A close code that may not be sent (1005, 1006, 1015, reserved ranges).
    InvalidCloseCode(u16),
    /// A close reason without a close code.
    ReasonWithoutCode,
    /// An in-place text payload that is not valid UTF-8.
    InvalidUtf8,
    /// The compressor (permessage-deflate) failed; it is reset and the
    /// message was not sent.
    Compression,
}

impl core::fmt::Display for EncodeError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            EncodeError::BufferFull => f.write_str("output buffer full"),
            EncodeError::ControlPayloadTooLarge => f.write_str("control payload over 125 bytes"),
            EncodeError::InvalidCloseCode(c) => write!(f, "close code {c} may not be sent"),
            EncodeError::ReasonWithoutCode => f.write_str("close reason without a code"),
            EncodeError::InvalidUtf8 => f.write_str("text payload is not valid UTF-8"),
            EncodeError::Compression => f.write_str("compression failed"),
        }
    }
}

impl core::error::Error for EncodeError {}

impl From<crate::buf::BufferFull> for EncodeError {
    fn from(_: crate::buf::BufferFull) -> Self {
        EncodeError::BufferFull
    }
}
