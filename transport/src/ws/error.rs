//! The transport's error type: I/O, URL, handshake, protocol and flow-control failures.

use std::fmt;
use std::io;
use std::net::SocketAddr;

use tickwire_codec::ws::handshake::HandshakeError;
use tickwire_codec::ws::{EncodeError, Error as WsError};

use super::url::UrlError;
use crate::proxy::ProxyError;
use crate::socket::DialError;
#[cfg(feature = "tls")]
use crate::tls::{TlsError, tls_error};

/// Everything a WebSocket connection can fail with.
///
/// Errors fall in three groups, which [`Error::class`] (and `is_fatal`, `is_refused`,
/// `is_setup`) tells apart:
/// - the connection is gone: `Io`, `Tls`, `Protocol`, `ConnectionLost`, `DeadPeer`,
///   `CloseTimeout`, `Handshake`, `HandshakeTimeout`, `AlreadyClosed`, `Shutdown`; once a
///   connection failed, every later call on it (a split connection's other half
///   included) returns the error that failed it again, not `AlreadyClosed`;
/// - the call was refused and the connection is unchanged: `Backpressure`, `ReadTimeout`,
///   `WriteTimeout`, `Encode`, `MessageTooLarge`, `HandshakeInProgress`;
/// - setup, no connection was made: `Url`, `Resolve`, `Connect`, `ConnectTimeout`,
///   `Proxy`, `Entropy`, `TlsDisabled`.
///
/// `Display` (`{}`) says what failed and where, once (a socket, TLS or handshake error
/// names the URL or the client's address: `ws://127.0.0.1:9001/feed: opening handshake
/// failed: unexpected HTTP status 403`, `client 127.0.0.1:50312: Connection reset by
/// peer (os error 104)`); the variants that add context to
/// an underlying error (`Resolve`, `Connect`) return it from
/// [`source`](std::error::Error::source) and leave its text out. The alternate form
/// `{:#}` appends each source's text: `cannot connect to 127.0.0.1:9: Connection
/// refused (os error 111)`.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A socket error (reset, broken pipe, ...) on the connection to `peer`.
    Io {
        /// Who the connection is with: the URL (client) or `client ADDR` (server);
        /// empty when there is none (a listener's error).
        peer: String,
        /// The socket's error; its text is part of this error's text.
        error: io::Error,
    },
    /// The URL could not be parsed.
    Url(UrlError),
    /// TLS failed: certificate (untrusted, expired, wrong name), no common version,
    /// a garbled record, a fatal alert from the peer, or the stream cut before
    /// close_notify. [`TlsError::kind`] classifies it.
    #[cfg(feature = "tls")]
    Tls {
        /// Who the connection is with: the URL (client) or `client ADDR` (server).
        peer: String,
        /// What failed; its text (and what to change, for a certificate error) is
        /// part of this error's text.
        error: TlsError,
    },
    /// A `wss://` URL, or a TLS connection asked for, in a build without the `tls`
    /// feature: enable it (`tickwire = { features = ["tls"] }`, on by default).
    TlsDisabled,
    /// The host name could not be resolved: the resolver failed (`source`, for example
    /// "Name or service not known"), or the name has no address (`None`).
    Resolve {
        /// The name that was looked up.
        host: String,
        /// The resolver's error; `None` when it answered with no address.
        source: Option<io::Error>,
    },
    /// The TCP connection to this address failed (refused, unreachable, reset); when
    /// the host has several addresses, the last one tried.
    Connect {
        /// The address connected to.
        addr: SocketAddr,
        /// The socket's error.
        source: io::Error,
    },
    /// The proxy could not be reached, refused the tunnel, answered garbage or closed
    /// mid-handshake; the error names the proxy.
    Proxy(ProxyError),
    /// The OS entropy source failed (masking keys and the handshake nonce come from it).
    Entropy(getrandom::Error),
    /// The TCP connection (for `wss://`, with its TLS handshake) was not established
    /// within the connect timeout (`connect_timeout` in the builder).
    ConnectTimeout {
        /// `host:port` connected to.
        target: String,
    },
    /// The opening handshake did not finish within the handshake timeout
    /// (`handshake_timeout` in the builder).
    HandshakeTimeout {
        /// Who the handshake was with: the URL (client) or the client's address (server).
        peer: String,
    },
    /// The opening handshake failed: the server's answer was not a valid upgrade
    /// (client), or the request was refused with the codec's 4xx response (server).
    /// `error` says how; its text is part of this error's text.
    Handshake {
        /// Who the handshake was with: the URL (client) or the client's address (server).
        peer: String,
        /// What was wrong.
        error: HandshakeError,
    },
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
    /// sent; raise `write_buffer_size` in the builder (default 1 MiB).
    MessageTooLarge {
        /// Bytes the message takes on the wire.
        len: usize,
        /// Capacity of the write buffer.
        capacity: usize,
    },
    /// Evented mode: the write buffer has no room for this message. Nothing was queued;
    /// call `flush` when the socket is writable and send again.
    Backpressure,
    /// Nothing arrived within the read timeout (`read_timeout` in the builder). The
    /// connection is unchanged: call `recv` again.
    ReadTimeout,
    /// The socket took no bytes within the write timeout (`write_timeout` in the
    /// builder). What was queued stays queued; the connection is unchanged.
    WriteTimeout,
    /// Our close frame was not answered within the close timeout; the socket was shut.
    CloseTimeout,
    /// The peer closed the TCP connection without a close handshake (code 1006).
    ConnectionLost,
    /// Nothing arrived from the peer within the dead-peer timeout
    /// (`dead_peer_timeout` in the builder); the connection was closed locally as 1006.
    DeadPeer,
    /// The connection was closed (the close handshake, or a failure not reported
    /// otherwise) before this call; nothing more can be done. After a failure, later
    /// calls return the error that failed the connection instead.
    AlreadyClosed,
    /// The connection was ended from another thread by its
    /// [`ShutdownHandle`](super::ShutdownHandle) (no close handshake).
    Shutdown,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { peer, error } => {
                with_peer(f, peer)?;
                error.fmt(f)
            }
            Error::Url(e) => write!(f, "invalid WebSocket URL: {e}"),
            #[cfg(feature = "tls")]
            Error::Tls { peer, error } => {
                with_peer(f, peer)?;
                write!(f, "{error}{}", crate::tls::hint(error))
            }
            Error::TlsDisabled => f.write_str(
                "wss:// needs TLS, and tickwire was built without its `tls` feature: enable it",
            ),
            Error::Resolve { host, source } => {
                crate::error::resolve_failed(f, host, source.is_none())
            }
            Error::Connect { addr, .. } => write!(f, "cannot connect to {addr}"),
            Error::Proxy(e) => e.fmt(f),
            Error::Entropy(e) => write!(f, "OS entropy source failed: {e}"),
            Error::ConnectTimeout { target } => write!(
                f,
                "connect to {target} timed out (raise `connect_timeout` in the builder)"
            ),
            Error::HandshakeTimeout { peer } => {
                with_peer(f, peer)?;
                f.write_str(
                    "opening handshake timed out (raise `handshake_timeout` in the builder)",
                )
            }
            Error::Handshake { peer, error } => {
                with_peer(f, peer)?;
                write!(f, "opening handshake failed: {error}")
            }
            Error::HandshakeInProgress => f.write_str("opening handshake still in progress"),
            Error::Protocol(e) => {
                write!(f, "protocol error (close {}): {e}", e.close_code().0)?;
                match e {
                    WsError::MessageTooLarge => f.write_str(
                        "; raise `max_message_size` in the builder (default: what the \
                         1 MiB read buffer holds)",
                    ),
                    WsError::FrameTooLarge => f.write_str(
                        "; raise `max_frame_size` in the builder (default: the message limit)",
                    ),
                    _ => Ok(()),
                }
            }
            Error::Encode(e) => write!(f, "cannot encode message: {e}"),
            Error::MessageTooLarge { len, capacity } => write!(
                f,
                "message of {len} bytes exceeds the {capacity}-byte write buffer \
                 (raise `write_buffer_size` in the builder)"
            ),
            Error::Backpressure => f.write_str("write buffer full; flush and retry"),
            Error::ReadTimeout => f.write_str("read timed out (`read_timeout` in the builder)"),
            Error::WriteTimeout => f.write_str("write timed out (`write_timeout` in the builder)"),
            Error::CloseTimeout => f.write_str("peer did not answer the close in time"),
            Error::ConnectionLost => f.write_str("connection lost without a close handshake"),
            Error::DeadPeer => f.write_str(
                "no byte from the peer within the dead-peer timeout (raise `dead_peer_timeout`)",
            ),
            Error::AlreadyClosed => f.write_str("connection already closed"),
            Error::Shutdown => f.write_str("connection shut down by its ShutdownHandle"),
        }?;
        crate::error::write_sources(f, self)
    }
}

/// "`peer`: " before the text of an error that names who the connection is with
/// (nothing when it was never named).
fn with_peer(f: &mut fmt::Formatter<'_>, peer: &str) -> fmt::Result {
    if peer.is_empty() {
        return Ok(());
    }
    write!(f, "{peer}: ")
}

impl Error {
    /// [`Error::HandshakeTimeout`] before the peer is named ([`Error::at_peer`]);
    /// allocates nothing.
    pub(crate) fn handshake_timeout() -> Error {
        Error::HandshakeTimeout {
            peer: String::new(),
        }
    }

    /// [`Error::Io`] before the peer is named ([`Error::at_peer`]); allocates nothing.
    pub(crate) fn io(error: io::Error) -> Error {
        Error::Io {
            peer: String::new(),
            error,
        }
    }

    /// [`Error::Tls`] before the peer is named ([`Error::at_peer`]); allocates nothing.
    #[cfg(feature = "tls")]
    pub(crate) fn tls(error: TlsError) -> Error {
        Error::Tls {
            peer: String::new(),
            error,
        }
    }

    /// Name who the connection is with (the client's URL, the server's peer address)
    /// in an error that names it and was not named yet (socket, TLS and handshake
    /// errors); other errors pass unchanged. Only on the way out with an error: the
    /// text is built here.
    #[cold]
    #[inline(never)]
    pub(crate) fn at_peer(mut self, name: impl FnOnce() -> String) -> Error {
        let peer = match &mut self {
            Error::Handshake { peer, .. }
            | Error::HandshakeTimeout { peer }
            | Error::Io { peer, .. } => peer,
            #[cfg(feature = "tls")]
            Error::Tls { peer, .. } => peer,
            _ => return self,
        };
        if peer.is_empty() {
            *peer = name();
        }
        self
    }
}

impl std::error::Error for Error {
    /// The underlying error of `Resolve` and `Connect` (the others print theirs in
    /// their own text; `Io` passes on its own source).
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { error, .. } => error.source(),
            Error::Resolve {
                source: Some(e), ..
            } => Some(e),
            Error::Connect { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<io::Error> for Error {
    /// An I/O error, or the TLS error a TLS stream reported through `io::Error`.
    fn from(e: io::Error) -> Self {
        #[cfg(feature = "tls")]
        if let Some(tls) = tls_error(&e) {
            return Error::tls(tls.clone());
        }
        Error::io(e)
    }
}

impl From<DialError> for Error {
    fn from(e: DialError) -> Self {
        match e {
            DialError::Resolve { host, source } => Error::Resolve { host, source },
            DialError::Connect { addr, source } => Error::Connect { addr, source },
            DialError::Timeout { target } => Error::ConnectTimeout { target },
            DialError::Proxy(e) => Error::Proxy(e),
        }
    }
}

#[cfg(feature = "tls")]
impl From<TlsError> for Error {
    fn from(e: TlsError) -> Self {
        Error::tls(e)
    }
}

impl From<UrlError> for Error {
    fn from(e: UrlError) -> Self {
        Error::Url(e)
    }
}

impl From<HandshakeError> for Error {
    /// [`Error::Handshake`], its peer named when the connection returns it.
    fn from(error: HandshakeError) -> Self {
        Error::Handshake {
            peer: String::new(),
            error,
        }
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

/// Who a connection is with, for its errors: kept from the start (no text yet), turned
/// into text only when an error is returned ([`Peer::name_in`]).
#[derive(Debug, Clone)]
pub(crate) enum Peer {
    /// A client connection: its URL as errors show it.
    Url(String),
    /// A server connection: the client's address (`None`: the socket did not say).
    Client(Option<SocketAddr>),
}

impl Peer {
    /// A server connection's peer: the address of `stream`'s other end.
    pub(crate) fn client_of(stream: &mio::net::TcpStream) -> Peer {
        Peer::Client(stream.peer_addr().ok())
    }

    /// `e` naming this peer, if it is an error that names it ([`Error::at_peer`]).
    #[cold]
    #[inline(never)]
    pub(crate) fn name_in(&self, e: Error) -> Error {
        e.at_peer(|| match self {
            Peer::Url(url) => url.clone(),
            Peer::Client(Some(addr)) => format!("client {addr}"),
            Peer::Client(None) => "client (address unknown)".to_owned(),
        })
    }
}
