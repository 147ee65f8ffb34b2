//! The REST client's error type: what failed, and whether the connection survived.

use std::fmt;
use std::io;
use std::time::Duration;

use tickwire_codec::http::{BuildError, Error as HttpError, Method};

use super::url::UrlError;

use crate::proxy::ProxyError;
use crate::socket::DialError;
#[cfg(feature = "tls")]
use crate::tls::{TlsError, tls_error};

/// Everything a REST call can fail with. After any error but [`Error::Url`],
/// [`Error::Build`], [`Error::RequestTooLarge`] (found before anything is sent) and
/// [`Error::PoolExhausted`] the connection is dropped; the next call connects again.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A socket error (connect refused, reset, ...).
    Io(io::Error),
    /// The URL could not be parsed (or is not `http://` / `https://`).
    Url(UrlError),
    /// TLS failed (`https://`): the handshake (untrusted CA, wrong host name, expired
    /// certificate, no common version...), a record, or a stream cut without
    /// close_notify. [`TlsError::kind`] classifies it.
    #[cfg(feature = "tls")]
    Tls(TlsError),
    /// An `https://` URL in a build without the `tls` feature: enable it
    /// (`tickwire = { features = ["tls"] }`, on by default).
    TlsDisabled,
    /// The host name resolved to no address.
    NoAddress,
    /// The proxy could not be reached, refused the tunnel, answered garbage or closed
    /// mid-handshake; the error names the proxy.
    Proxy(ProxyError),
    /// The TCP connection was not established within the connect timeout.
    ConnectTimeout,
    /// No response byte (or no further response byte) arrived within the read timeout.
    ReadTimeout,
    /// The socket took no request bytes within the write timeout.
    WriteTimeout,
    /// The server closed the connection before the first byte of the response, and the
    /// request was not retried (its method is not idempotent, or it was the retry).
    /// The server may or may not have processed it.
    ConnectionClosed,
    /// The response broke HTTP/1.1 (or a size limit of the reader).
    Http(HttpError),
    /// The request could not be built (a [`tickwire_codec::http::RequestWriter`] error).
    Build(BuildError),
    /// Every connection of the pool is in use.
    PoolExhausted,
    /// The request's response (headers and body) was not complete within the request
    /// timeout, counted from the call that sent it ([`ClientBuilder::timeout`], or the
    /// per-request [`RequestBuilder::timeout`]); the connection is dropped.
    ///
    /// [`ClientBuilder::timeout`]: super::ClientBuilder::timeout
    /// [`RequestBuilder::timeout`]: super::RequestBuilder::timeout
    RequestTimeout {
        /// The request's method.
        method: Method,
        /// The URL it was sent to (`http://host[:port]/path?query`).
        url: String,
        /// The timeout that passed.
        after: Duration,
    },
    /// A request built with the client's own writer ([`Client::get`] and the other
    /// methods) did not fit its request buffer. Raise
    /// [`ClientBuilder::request_buffer`] (for a pool,
    /// [`PoolConfig::request_buffer`]), or build the request with your own
    /// [`RequestWriter`](super::RequestWriter) and [`Client::send`].
    ///
    /// [`Client::get`]: super::Client::get
    /// [`Client::send`]: super::Client::send
    /// [`ClientBuilder::request_buffer`]: super::ClientBuilder::request_buffer
    /// [`PoolConfig::request_buffer`]: super::PoolConfig::request_buffer
    RequestTooLarge {
        /// The request buffer's size in bytes (the client's configuration included).
        buffer: usize,
    },
}

impl Error {
    /// Classify an I/O error of a read or write on a connected stream (a TLS stream
    /// reports its errors inside `io::Error`).
    pub(crate) fn from_io(e: io::Error, write: bool) -> Error {
        #[cfg(feature = "tls")]
        if let Some(tls) = tls_error(&e) {
            return Error::Tls(tls.clone());
        }
        match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => {
                if write {
                    Error::WriteTimeout
                } else {
                    Error::ReadTimeout
                }
            }
            _ => Error::Io(e),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io(e) => write!(f, "I/O error: {e}"),
            Error::Url(e) => write!(f, "invalid URL: {e}"),
            #[cfg(feature = "tls")]
            Error::Tls(e) => write!(f, "TLS error: {e}"),
            Error::TlsDisabled => f.write_str(
                "https:// needs TLS, and tickwire was built without its `tls` feature: enable it",
            ),
            Error::NoAddress => f.write_str("host resolved to no address"),
            Error::Proxy(e) => e.fmt(f),
            Error::ConnectTimeout => f.write_str("connect timed out"),
            Error::ReadTimeout => f.write_str("read timed out"),
            Error::WriteTimeout => f.write_str("write timed out"),
            Error::ConnectionClosed => {
                f.write_str("server closed the connection before responding")
            }
            Error::Http(e) => write!(f, "HTTP error: {e}"),
            Error::Build(e) => write!(f, "request build error: {e}"),
            Error::PoolExhausted => f.write_str("all pooled connections are in use"),
            Error::RequestTimeout { method, url, after } => write!(
                f,
                "{} {url}: no complete response within the request timeout ({after:?})",
                method.as_str()
            ),
            Error::RequestTooLarge { buffer } => write!(
                f,
                "the request does not fit the client's {buffer}-byte request buffer: raise \
                 ClientBuilder::request_buffer (PoolConfig::request_buffer for a pool)"
            ),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io(e) => Some(e),
            Error::Url(e) => Some(e),
            Error::Http(e) => Some(e),
            Error::Build(e) => Some(e),
            #[cfg(feature = "tls")]
            Error::Tls(e) => Some(e),
            Error::Proxy(e) => Some(e),
            _ => None,
        }
    }
}

impl From<HttpError> for Error {
    fn from(e: HttpError) -> Self {
        Error::Http(e)
    }
}

impl From<BuildError> for Error {
    fn from(e: BuildError) -> Self {
        Error::Build(e)
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
