//! The transport's error type: I/O, URL, handshake, protocol and flow-control failures.

use std::fmt;
use std::io;

use tickwire_codec::ws::handshake::HandshakeError;
use tickwire_codec::ws::{EncodeError, Error as WsError};

use super::url::UrlError;
use crate::proxy::ProxyError;
use crate::socket::DialError;
#[cfg(feature = "tls")]
use crate::tls::{TlsError, tls_error};

/// Everything a WebSocket connection can fail with.
///
/// Errors fall in three groups:
/// - the connection is dead: `Io`, `Tls`, `Protocol`, `ConnectionLost`, `DeadPeer`, `CloseTimeout`,
///   `Handshake`, `ConnectTimeout`, `HandshakeTimeout`, `AlreadyClosed`;
/// - the call was refused and the connection is unchanged: `Backpressure`, `Timeout`,
///   `Encode`, `MessageTooLarge`, `HandshakeInProgress`;
/// - setup: `Url`, `NoAddress`, `Proxy`, `Entropy`, `TlsDisabled`.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A socket error.
    Io(io::Error),
    /// The URL could not be parsed.
    Url(UrlError),
    /// TLS failed: certificate (untrusted, expired, wrong name), no common version,
    /// a garbled record, a fatal alert from the peer, or the stream cut before
    /// close_notify. [`TlsError::kind`] classifies it.
    #[cfg(feature = "tls")]
    Tls(TlsError),
    /// A `wss://` URL, or a TLS connection asked for, in a build without the `tls`
    /// feature: enable it (`tickwire = { features = ["tls"] }`, on by default).
    TlsDisabled,
    /// The host name resolved to no address.
    NoAddress,
    /// The proxy could not be reached, refused the tunnel, answered garbage or closed
    /// mid-handshake; the error names the proxy.
    Proxy(ProxyError),
    /// The OS entropy source failed (masking keys and the handshake nonce come from it).
    Entropy(getrandom::Error),
    /// The TCP connection was not established within the connect timeout.
    ConnectTimeout,
    /// The opening handshake did not finish within the handshake timeout.
    HandshakeTimeout,
    /// The opening handshake failed: the server's answer was not a valid upgrade
    /// (client), or the request was refused with the codec's 4xx response (server).
    Handshake(HandshakeError),
    /// An evented server connection is still in its opening handshake; drive it with
    /// `try_recv` or `handshake` until it is done.
    HandshakeInProgress,
    /// The peer broke the protocol (or a size limit). A close frame carrying
    /// [`WsError::close_code`] was sent and the connection failed.
    Protocol(WsError),
    /// The message could not be encoded (control payload over 125 bytes, invalid close
    /// code, reason without code). Nothing was sent; the connection is unchanged.
    Encode(EncodeError),
    /// The message does not fit in the write buffer even when it is empty. Nothing was
    /// sent; raise the write buffer size.
    MessageTooLarge {
        /// Bytes the message takes on the wire.
        len: usize,
        /// Capacity of the write buffer.
        capacity: usize,
    },
    /// Evented mode: the write buffer has no room for this message. Nothing was queued;
    /// call `flush` when the socket is writable and send again.
    Backpressure,
    /// Blocking mode: the read or write timeout passed. The connection is unchanged.
    Timeout,
    /// Our close frame was not answered within the close timeout; the socket was shut.
    CloseTimeout,
    /// The peer closed the TCP connection without a close handshake (code 1006).
    ConnectionLost,
    /// Nothing arrived from the peer within the dead-peer timeout
    /// (`dead_peer_timeout` in the builder); the connection was closed locally as 1006.
    DeadPeer,
    /// The connection was closed or failed before this call; nothing more can be done.
    AlreadyClosed,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io(e) => write!(f, "I/O error: {e}"),
            Error::Url(e) => write!(f, "invalid URL: {e}"),
            #[cfg(feature = "tls")]
            Error::Tls(e) => e.fmt(f),
            Error::TlsDisabled => f.write_str(
                "wss:// needs TLS, and tickwire was built without its `tls` feature: enable it",
            ),
            Error::NoAddress => f.write_str("host name resolved to no address"),
            Error::Proxy(e) => e.fmt(f),
            Error::Entropy(e) => write!(f, "OS entropy source failed: {e}"),
            Error::ConnectTimeout => f.write_str("connect timed out"),
            Error::HandshakeTimeout => f.write_str("opening handshake timed out"),
            Error::Handshake(e) => write!(f, "opening handshake failed: {e}"),
            Error::HandshakeInProgress => f.write_str("opening handshake still in progress"),
            Error::Protocol(e) => write!(f, "protocol error (close {}): {e}", e.close_code().0),
            Error::Encode(e) => write!(f, "cannot encode message: {e}"),
            Error::MessageTooLarge { len, capacity } => {
                write!(
                    f,
                    "message of {len} bytes exceeds the {capacity}-byte write buffer"
                )
            }
            Error::Backpressure => f.write_str("write buffer full; flush and retry"),
            Error::Timeout => f.write_str("timed out"),
            Error::CloseTimeout => f.write_str("peer did not answer the close in time"),
            Error::ConnectionLost => f.write_str("connection lost without a close handshake"),
            Error::DeadPeer => f.write_str(
                "no byte from the peer within the dead-peer timeout (raise `dead_peer_timeout`)",
            ),
            Error::AlreadyClosed => f.write_str("connection already closed"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io(e) => Some(e),
            #[cfg(feature = "tls")]
            Error::Tls(e) => Some(e),
            Error::Url(e) => Some(e),
            Error::Handshake(e) => Some(e),
            Error::Protocol(e) => Some(e),
            Error::Encode(e) => Some(e),
            Error::Proxy(e) => Some(e),
            _ => None,
        }
    }
}

impl From<io::Error> for Error {
    /// An I/O error, or the TLS error a TLS stream reported through `io::Error`.
    fn from(e: io::Error) -> Self {
        #[cfg(feature = "tls")]
        if let Some(tls) = tls_error(&e) {
            return Error::Tls(tls.clone());
        }
        Error::Io(e)
    }
}

impl From<DialError> for Error {
    fn from(e: DialError) -> Self {
        match e {
            DialError::Io(e) => Error::Io(e),
            DialError::NoAddress => Error::NoAddress,
            DialError::Timeout => Error::ConnectTimeout,
            DialError::Proxy(e) => Error::Proxy(e),
        }
    }
}

#[cfg(feature = "tls")]
impl From<TlsError> for Error {
    fn from(e: TlsError) -> Self {
        Error::Tls(e)
    }
}

impl From<UrlError> for Error {
    fn from(e: UrlError) -> Self {
        Error::Url(e)
    }
}

impl From<HandshakeError> for Error {
    fn from(e: HandshakeError) -> Self {
        Error::Handshake(e)
    }
}

impl From<WsError> for Error {
    fn from(e: WsError) -> Self {
        Error::Protocol(e)
    }
}

impl From<EncodeError> for Error {
    fn from(e: EncodeError) -> Self {
        Error::Encode(e)
    }
}
