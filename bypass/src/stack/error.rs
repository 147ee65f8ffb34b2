//! What can go wrong on one connection of a [`Stack`](super::Stack), and when
//! setting the stack up. A connection's error ends that connection alone.

use tickwire_codec::http::{BuildError, Error as HttpError};
#[cfg(feature = "tls")]
use tickwire_codec::tls::TlsError;
use tickwire_codec::ws::ConnectionError;

/// Why a connection failed, or why a call on it was refused.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ConnError {
    /// The server answered the TCP connection attempt with a reset (nothing listens).
    Refused,
    /// The peer reset the TCP connection after it was established.
    Reset,
    /// The TCP connection (and the TLS handshake) did not complete within
    /// [`Options::connect_timeout`](super::Options::connect_timeout).
    ConnectTimeout,
    /// The peer closed the TCP connection before the exchange was over
    /// (mid-handshake, or with a REST request unanswered).
    ConnectionLost,
    /// TLS failed: a bad certificate, garbage instead of a ServerHello, a
    /// truncated stream, an alert (the codec's error; its `kind()` classifies it).
    #[cfg(feature = "tls")]
    Tls(TlsError),
    /// The WebSocket connection failed or refused (handshake, protocol, the
    /// handshake, close or dead-peer timeouts; `Backpressure` is not final).
    Ws(ConnectionError),
    /// The response is not valid HTTP/1.1 (final for the connection).
    Http(HttpError),
    /// A request could not be built (invalid header, larger than the slot's write buffer).
    Build(BuildError),
    /// REST: the request must go on a new connection: bytes nobody asked for, or
    /// the server's end of stream, arrived while the connection was idle (RFC 9112
    /// §6.3; nothing was sent), or the server dropped a reused connection before
    /// answering a request the codec judges safe to repeat. Reconnect and send it again.
    Stale,
    /// The REST client's read or write timeout ([`Options::rest`](super::Options::rest)),
    /// or another failure of the codec's `ClientConnection`.
    Client(tickwire_codec::http::ClientError),
    /// No response within [`Options::request_timeout`](super::Options::request_timeout).
    RequestTimeout,
    /// No room for the request (or message) now: poll, then try again. Not final.
    Backpressure,
    /// The connection is not open (still connecting, closed, or failed).
    NotOpen,
    /// The call does not fit the connection's kind (a WebSocket call on a REST
    /// connection or the other way round).
    WrongKind,
    /// A REST request is already waiting for its response (one at a time per connection).
    Busy,
    /// No connection has this id.
    NoSuchConnection,
}

impl ConnError {
    /// Whether the connection is over (a refusal such as `Backpressure` is not).
    pub fn is_final(&self) -> bool {
        match self {
            ConnError::Backpressure
            | ConnError::NotOpen
            | ConnError::WrongKind
            | ConnError::Busy
            | ConnError::NoSuchConnection
            | ConnError::Build(_) => false,
            ConnError::Ws(e) => !matches!(
                e,
                ConnectionError::Backpressure
                    | ConnectionError::MessageTooLarge { .. }
                    | ConnectionError::Encode(_)
                    | ConnectionError::HandshakeInProgress
            ),
            _ => true,
        }
    }
}

impl From<ConnectionError> for ConnError {
    fn from(e: ConnectionError) -> Self {
        ConnError::Ws(e)
    }
}

impl From<HttpError> for ConnError {
    fn from(e: HttpError) -> Self {
        ConnError::Http(e)
    }
}

impl From<BuildError> for ConnError {
    fn from(e: BuildError) -> Self {
        ConnError::Build(e)
    }
}

#[cfg(feature = "tls")]
impl From<TlsError> for ConnError {
    fn from(e: TlsError) -> Self {
        ConnError::Tls(e)
    }
}

impl core::fmt::Display for ConnError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            ConnError::Refused => f.write_str("connection refused (TCP reset to our SYN)"),
            ConnError::Reset => f.write_str("connection reset by the peer"),
            ConnError::ConnectTimeout => {
                f.write_str("connect timed out (raise Options::connect_timeout)")
            }
            ConnError::ConnectionLost => f.write_str("the peer closed the connection early"),
            #[cfg(feature = "tls")]
            ConnError::Tls(e) => write!(f, "TLS: {e}"),
            ConnError::Ws(e) => write!(f, "websocket: {e}"),
            ConnError::Http(e) => write!(f, "http: {e}"),
            ConnError::Build(e) => write!(f, "request: {e}"),
            ConnError::Client(e) => write!(f, "request: {e}"),
            ConnError::Stale => f.write_str(
                "the server sent bytes or closed while the connection was idle; reconnect",
            ),
            ConnError::RequestTimeout => {
                f.write_str("no response in time (raise Options::request_timeout)")
            }
            ConnError::Backpressure => f.write_str("no room now: poll, then try again"),
            ConnError::NotOpen => f.write_str("the connection is not open"),
            ConnError::WrongKind => f.write_str("not a call for this kind of connection"),
            ConnError::Busy => f.write_str("a request is already waiting for its response"),
            ConnError::NoSuchConnection => f.write_str("no connection has this id"),
        }
    }
}

impl core::error::Error for ConnError {}

/// Why a [`Stack`](super::Stack) or one of its slots could not be set up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetupError {
    /// A slot's arena is shorter than [`SlotSizes::arena_len`](super::SlotSizes::arena_len).
    ArenaTooSmall {
        /// Bytes the sizes need.
        need: usize,
        /// Bytes given.
        got: usize,
    },
    /// A buffer is below its minimum (named, with the minimum).
    BufferTooSmall {
        /// Which buffer (`tcp`, `read`, `write`, `tls`).
        which: &'static str,
        /// The least it must hold.
        min: usize,
    },
    /// Fewer socket slots than connection slots.
    TooFewSockets,
    /// Every slot is in use.
    NoFreeSlot,
    /// The host name or path is longer than a slot keeps
    /// ([`MAX_HOST`](super::MAX_HOST), [`MAX_PATH`](super::MAX_PATH)), or empty.
    BadRemote,
    /// `wss://` or `https://` without TLS settings, or built without feature `tls`.
    NoTls,
    /// This slot has no TLS buffers (its `tls` size is 0).
    SlotWithoutTls,
}

impl core::fmt::Display for SetupError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            SetupError::ArenaTooSmall { need, got } => {
                write!(f, "slot arena holds {got} bytes, the sizes need {need}")
            }
            SetupError::BufferTooSmall { which, min } => {
                write!(f, "slot buffer `{which}` must hold at least {min} bytes")
            }
            SetupError::TooFewSockets => f.write_str("fewer socket slots than connection slots"),
            SetupError::NoFreeSlot => f.write_str("every connection slot is in use"),
            SetupError::BadRemote => f.write_str("host or path empty or too long for a slot"),
            SetupError::NoTls => f.write_str(
                "wss:// and https:// need Options::tls (a rustls ClientConfig) and feature `tls`",
            ),
            SetupError::SlotWithoutTls => {
                f.write_str("this slot has no TLS buffers (SlotSizes::tls is 0)")
            }
        }
    }
}

impl core::error::Error for SetupError {}
