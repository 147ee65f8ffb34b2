//! [`NetStream`]: what a connection runs on, a plain TCP socket or TLS over one
//! (`wss://` / `https://`, or a server with a TLS config). One branch per call; the
//! protocol code above it is the same for both.
//!
//! The one rule TLS adds for code written against a socket: `write` may accept bytes
//! that still wait in the TLS layer, so once its own write buffer is empty the caller
//! calls [`flush_buffered`](NetStream::flush_buffered) (until `Ok(true)`) and counts
//! [`has_buffered`](NetStream::has_buffered) in its "wants write".

use std::io::{self, Read, Write};
use std::net::Shutdown;

use mio::net::TcpStream;
use mio::{Interest, Registry, Token};

#[cfg(feature = "tls")]
use crate::tls::{TlsConfig, TlsServerConfig, TlsStream};
use crate::ws::Error;

/// A client builder's TLS settings (`None`: [`TlsConfig::shared_default`]); nothing to
/// set without the `tls` feature.
#[cfg(feature = "tls")]
pub(crate) type ClientTls = Option<TlsConfig>;
#[cfg(not(feature = "tls"))]
pub(crate) type ClientTls = ();

/// A server builder's TLS settings (`None`: plain TCP).
#[cfg(feature = "tls")]
pub(crate) type ServerTls = Option<TlsServerConfig>;
#[cfg(not(feature = "tls"))]
pub(crate) type ServerTls = ();

/// A plain or TLS socket.
#[derive(Debug)]
pub(crate) enum NetStream {
    Tcp(TcpStream),
    /// Boxed: the TLS state is large and a plain connection should not carry its size.
    #[cfg(feature = "tls")]
    Tls(Box<TlsStream<TcpStream>>),
}

impl NetStream {
    /// The client's stream over `tcp`: TLS to `host` (SNI, certificate name) when
    /// `secure` (`wss://`), with the builder's settings; [`Error::TlsDisabled`] for that
    /// without the `tls` feature.
    pub fn client(
        tcp: TcpStream,
        secure: bool,
        tls: &ClientTls,
        host: &str,
    ) -> Result<Self, Error> {
        if !secure {
            return Ok(NetStream::Tcp(tcp));
        }
        #[cfg(feature = "tls")]
        {
            let config = tls.clone().unwrap_or_else(TlsConfig::shared_default);
            Ok(NetStream::Tls(Box::new(TlsStream::client(
                tcp, &config, host,
            )?)))
        }
        #[cfg(not(feature = "tls"))]
        {
            let _ = (tcp, tls, host);
            Err(Error::TlsDisabled)
        }
    }

    /// The server's stream over an accepted `tcp`: TLS when the builder has settings.
    pub fn server(tcp: TcpStream, tls: &ServerTls) -> Result<Self, Error> {
        #[cfg(feature = "tls")]
        if let Some(config) = tls {
            return Ok(NetStream::Tls(Box::new(TlsStream::server(tcp, config)?)));
        }
        let _ = tls;
        Ok(NetStream::Tcp(tcp))
    }

    /// Shut the write half (TLS: after sending close_notify as far as the socket takes it).
    pub fn shutdown_write(&mut self) -> io::Result<()> {
        match self {
            NetStream::Tcp(s) => s.shutdown(Shutdown::Write),
            #[cfg(feature = "tls")]
            NetStream::Tls(s) => s.shutdown_write(),
        }
    }

    /// TLS close_notify after everything written before it: `Ok(true)` once it is on
    /// the socket, `Ok(false)` while the socket would block
    /// ([`TlsStream::close_notify`]); nothing for TCP.
    pub fn close_notify(&mut self) -> io::Result<bool> {
        match self {
            NetStream::Tcp(_) => Ok(true),
            #[cfg(feature = "tls")]
            NetStream::Tls(s) => s.close_notify(),
        }
    }

    /// Write bytes `write` accepted but kept (TLS records): `Ok(true)` when none are
    /// left, `Ok(false)` when the socket would block.
    #[inline]
    pub fn flush_buffered(&mut self) -> io::Result<bool> {
        match self {
            NetStream::Tcp(_) => Ok(true),
            #[cfg(feature = "tls")]
            NetStream::Tls(s) => s.flush_pending(),
        }
    }

    /// Whether such bytes wait.
    #[inline]
    pub fn has_buffered(&self) -> bool {
        match self {
            NetStream::Tcp(_) => false,
            #[cfg(feature = "tls")]
            NetStream::Tls(s) => s.has_pending(),
        }
    }

    /// The TCP socket underneath.
    pub fn tcp(&self) -> &TcpStream {
        match self {
            NetStream::Tcp(s) => s,
            #[cfg(feature = "tls")]
            NetStream::Tls(s) => s.get_ref(),
        }
    }

    /// The TLS stream, for a TLS connection.
    #[cfg(feature = "tls")]
    pub fn tls(&self) -> Option<&TlsStream<TcpStream>> {
        match self {
            NetStream::Tcp(_) => None,
            NetStream::Tls(s) => Some(s),
        }
    }
}

impl Read for NetStream {
    #[inline]
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            NetStream::Tcp(s) => s.read(buf),
            #[cfg(feature = "tls")]
            NetStream::Tls(s) => s.read(buf),
        }
    }
}

impl Write for NetStream {
    #[inline]
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            NetStream::Tcp(s) => s.write(buf),
            #[cfg(feature = "tls")]
            NetStream::Tls(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            NetStream::Tcp(s) => s.flush(),
            #[cfg(feature = "tls")]
            NetStream::Tls(s) => s.flush(),
        }
    }
}

impl mio::event::Source for NetStream {
    fn register(
        &mut self,
        registry: &Registry,
        token: Token,
        interests: Interest,
    ) -> io::Result<()> {
        match self {
            NetStream::Tcp(s) => s.register(registry, token, interests),
            #[cfg(feature = "tls")]
            NetStream::Tls(s) => s.register(registry, token, interests),
        }
    }

    fn reregister(
        &mut self,
        registry: &Registry,
        token: Token,
        interests: Interest,
    ) -> io::Result<()> {
        match self {
            NetStream::Tcp(s) => s.reregister(registry, token, interests),
            #[cfg(feature = "tls")]
            NetStream::Tls(s) => s.reregister(registry, token, interests),
        }
    }

    fn deregister(&mut self, registry: &Registry) -> io::Result<()> {
        match self {
            NetStream::Tcp(s) => s.deregister(registry),
            #[cfg(feature = "tls")]
            NetStream::Tls(s) => s.deregister(registry),
        }
    }
}
