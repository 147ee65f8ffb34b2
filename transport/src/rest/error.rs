//! The REST client's error type: what failed, and whether the connection survived.

use std::fmt;
use std::io;
use std::net::SocketAddr;
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
///
/// `Display` (`{}`) says what failed and where, once: the errors of a request in flight
/// name it (`GET http://127.0.0.1:8080/api/x: read timed out (raise `read_timeout` in
/// the builder)`); the variants that add context to
/// an underlying error (`Resolve`, `Connect`) return it from
/// [`source`](std::error::Error::source) and leave its text out. The alternate form
/// `{:#}` appends each source's text: `cannot connect to 127.0.0.1:9: Connection
/// refused (os error 111)`.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A socket error (reset, broken pipe, ...) on the connection to `url`.
    Io {
        /// The URL of the request that met it (the client's URL when no request was
        /// in flight, as in [`Client::connect`](super::Client::connect)).
        url: String,
        /// The socket's error; its text is part of this error's text.
        error: io::Error,
    },
    /// The URL could not be parsed (or is not `http://` / `https://`).
    Url(UrlError),
    /// TLS failed (`https://`): the handshake (untrusted CA, wrong host name, expired
    /// certificate, no common version...), a record, or a stream cut without
    /// close_notify. [`TlsError::kind`] classifies it.
    #[cfg(feature = "tls")]
    Tls {
        /// The URL of the request that met it (the client's URL when no request was
        /// in flight).
        url: String,
        /// What failed; its text (and what to change, for a certificate error) is
        /// part of this error's text.
        error: TlsError,
    },
    /// An `https://` URL in a build without the `tls` feature: enable it
    /// (`tickwire = { features = ["tls"] }`, on by default).
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
    /// The TCP connection (for `https://`, with its TLS handshake) was not established
    /// within the connect timeout (`connect_timeout` in the builder).
    ConnectTimeout {
        /// `host:port` connected to.
        target: String,
    },
    /// No response byte (or no further response byte) arrived within the read timeout
    /// (`read_timeout` in the builder).
    ReadTimeout {
        /// The request's method.
        method: Method,
        /// The URL it was sent to (`http://host[:port]/path?query`).
        url: String,
    },
    /// The socket took no request bytes within the write timeout (`write_timeout` in
    /// the builder).
    WriteTimeout {
        /// The request's method.
        method: Method,
        /// The URL it was sent to.
        url: String,
    },
    /// The server closed the connection before the first byte of the response, and the
    /// request was not retried (its method is not idempotent, or it was the retry).
    /// The server may or may not have processed it.
    ConnectionLost {
        /// The request's method.
        method: Method,
        /// The URL it was sent to.
        url: String,
    },
    /// The response broke HTTP/1.1 (or a size limit of the reader). `error` says how;
    /// its text is part of this error's text.
    Http {
        /// The request's method.
        method: Method,
        /// The URL it was sent to.
        url: String,
        /// What was wrong with the response.
        error: HttpError,
    },
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
            return Error::tls(tls.clone());
        }
        match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => {
                if write {
                    Error::WriteTimeout {
                        method: Method::Get,
                        url: String::new(),
                    }
                } else {
                    Error::ReadTimeout {
                        method: Method::Get,
                        url: String::new(),
                    }
                }
            }
            _ => Error::io(e),
        }
    }

    /// [`Error::Io`] before the URL is named ([`Error::named`]); allocates nothing.
    pub(crate) fn io(error: io::Error) -> Error {
        Error::Io {
            url: String::new(),
            error,
        }
    }

    /// [`Error::Tls`] before the URL is named ([`Error::named`]); allocates nothing.
    #[cfg(feature = "tls")]
    pub(crate) fn tls(error: TlsError) -> Error {
        Error::Tls {
            url: String::new(),
            error,
        }
    }

    /// [`Error::ConnectionLost`] before the request is named
    /// ([`Error::named`]); allocates nothing.
    pub(crate) fn connection_lost() -> Error {
        Error::ConnectionLost {
            method: Method::Get,
            url: String::new(),
        }
    }

    /// [`Error::Http`] before the request is named ([`Error::named`]); allocates
    /// nothing.
    pub(crate) fn http(error: HttpError) -> Error {
        Error::Http {
            method: Method::Get,
            url: String::new(),
            error,
        }
    }

    /// Put `method` and `url` into the error when it is one of the variants that name
    /// the request they failed (off the success path: the URL is built here).
    #[cold]
    #[inline(never)]
    pub(crate) fn named(mut self, method: Method, url: impl FnOnce() -> String) -> Error {
        match &mut self {
            Error::ReadTimeout { method: m, url: u }
            | Error::WriteTimeout { method: m, url: u }
            | Error::ConnectionLost { method: m, url: u }
            | Error::Http {
                method: m, url: u, ..
            }
            | Error::RequestTimeout {
                method: m, url: u, ..
            } => {
                *m = method;
                *u = url();
            }
            _ => return self.at_url(url),
        }
        self
    }

    /// Put `url` into an [`Error::Io`] or [`Error::Tls`] not named yet (a failure
    /// while connecting, outside any request: the client's URL).
    #[cold]
    #[inline(never)]
    pub(crate) fn at_url(mut self, url: impl FnOnce() -> String) -> Error {
        match &mut self {
            Error::Io { url: u, .. } if u.is_empty() => *u = url(),
            #[cfg(feature = "tls")]
            Error::Tls { url: u, .. } if u.is_empty() => *u = url(),
            _ => {}
        }
        self
    }
}

/// "`url`: " before the text of an error that names where it happened (nothing when it
/// was never named).
fn at(f: &mut fmt::Formatter<'_>, url: &str) -> fmt::Result {
    if url.is_empty() {
        return Ok(());
    }
    write!(f, "{url}: ")
}

/// "`METHOD url`: " before the text of an error that names its request (nothing when
/// it was never named).
fn request(f: &mut fmt::Formatter<'_>, method: Method, url: &str) -> fmt::Result {
    if url.is_empty() {
        return Ok(());
    }
    write!(f, "{} {url}: ", method.as_str())
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { url, error } => {
                at(f, url)?;
                error.fmt(f)
            }
            Error::Url(e) => write!(f, "invalid URL: {e}"),
            #[cfg(feature = "tls")]
            Error::Tls { url, error } => {
                at(f, url)?;
                write!(f, "{error}{}", crate::tls::hint(error))
            }
            Error::TlsDisabled => f.write_str(
                "https:// needs TLS, and tickwire was built without its `tls` feature: enable it",
            ),
            Error::Resolve { host, source } => {
                crate::error::resolve_failed(f, host, source.is_none())
            }
            Error::Connect { addr, .. } => write!(f, "cannot connect to {addr}"),
            Error::Proxy(e) => e.fmt(f),
            Error::ConnectTimeout { target } => write!(
                f,
                "connect to {target} timed out (raise `connect_timeout` in the builder)"
            ),
            Error::ReadTimeout { method, url } => {
                request(f, *method, url)?;
                f.write_str("read timed out (raise `read_timeout` in the builder)")
            }
            Error::WriteTimeout { method, url } => {
                request(f, *method, url)?;
                f.write_str("write timed out (raise `write_timeout` in the builder)")
            }
            Error::ConnectionLost { method, url } => {
                request(f, *method, url)?;
                f.write_str("server closed the connection before responding")
            }
            Error::Http { method, url, error } => {
                request(f, *method, url)?;
                write!(f, "invalid HTTP response: {error}")
            }
            Error::Build(e) => write!(f, "cannot build the request: {e}"),
            Error::PoolExhausted => f.write_str("all pooled connections are in use"),
            Error::RequestTimeout { method, url, after } => {
                request(f, *method, url)?;
                write!(
                    f,
                    "no complete response within the request timeout ({after:?}; raise \
                     `timeout` in the builder or on the request)"
                )
            }
            Error::RequestTooLarge { buffer } => write!(
                f,
                "the request does not fit the client's {buffer}-byte request buffer: raise \
                 ClientBuilder::request_buffer (PoolConfig::request_buffer for a pool)"
            ),
        }?;
        crate::error::write_sources(f, self)
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

impl From<HttpError> for Error {
    /// [`Error::Http`], its request named when the client returns it.
    fn from(e: HttpError) -> Self {
        Error::http(e)
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
