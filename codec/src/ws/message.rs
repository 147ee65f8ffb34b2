//! Messages as the reader delivers them: borrowed from its buffer, or owned.

use super::close::CloseFrame;

/// A complete message, borrowing the reader's buffer (no copy).
///
/// Drop it before the next call on the reader: the borrow checker enforces it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Message<'a> {
    /// A text message, UTF-8 validated (across fragments).
    Text(&'a str),
    /// A binary message.
    Binary(&'a [u8]),
    /// A ping; answer with a pong carrying the same payload.
    Ping(&'a [u8]),
    /// A pong.
    Pong(&'a [u8]),
    /// A close frame; `None` when it carried no status code.
    Close(Option<CloseFrame<'a>>),
}

impl<'a> Message<'a> {
    /// Text or binary payload bytes, control payload bytes, or the close reason's bytes.
    pub fn payload(&self) -> &'a [u8] {
        match *self {
            Message::Text(s) => s.as_bytes(),
            Message::Binary(b) | Message::Ping(b) | Message::Pong(b) => b,
            Message::Close(c) => c.map(|c| c.reason.as_bytes()).unwrap_or(&[]),
        }
    }

    /// Whether this is a Ping, Pong or Close.
    pub fn is_control(&self) -> bool {
        matches!(
            self,
            Message::Ping(_) | Message::Pong(_) | Message::Close(_)
        )
    }

    /// An owned copy.
    #[cfg(feature = "alloc")]
    pub fn to_owned(&self) -> OwnedMessage {
        use alloc::string::ToString;
        use alloc::vec::Vec;
        match *self {
            Message::Text(s) => OwnedMessage::Text(s.to_string()),
            Message::Binary(b) => OwnedMessage::Binary(Vec::from(b)),
            Message::Ping(b) => OwnedMessage::Ping(Vec::from(b)),
            Message::Pong(b) => OwnedMessage::Pong(Vec::from(b)),
            Message::Close(c) => OwnedMessage::Close(c.map(|c| (c.code, c.reason.to_string()))),
        }
    }
}

/// A message that owns its payload (feature `alloc`).
#[cfg(feature = "alloc")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OwnedMessage {
    /// Text.
    Text(alloc::string::String),
    /// Binary.
    Binary(alloc::vec::Vec<u8>),
    /// Ping.
    Ping(alloc::vec::Vec<u8>),
    /// Pong.
    Pong(alloc::vec::Vec<u8>),
    /// Close with an optional code and reason.
    Close(Option<(super::close::CloseCode, alloc::string::String)>),
}

#[cfg(feature = "alloc")]
impl OwnedMessage {
    /// Borrow as a [`Message`].
    pub fn as_message(&self) -> Message<'_> {
        match self {
            OwnedMessage::Text(s) => Message::Text(s),
            OwnedMessage::Binary(b) => Message::Binary(b),
            OwnedMessage::Ping(b) => Message::Ping(b),
            OwnedMessage::Pong(b) => Message::Pong(b),
            OwnedMessage::Close(c) => Message::Close(c.as_ref().map(|(code, reason)| CloseFrame {
                code: *code,
                reason,
            })),
        }
    }
}

#[cfg(feature = "alloc")]
impl From<Message<'_>> for OwnedMessage {
    fn from(m: Message<'_>) -> Self {
        m.to_owned()
    }
}
