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

use crate::tls::{TlsConfig, TlsError, TlsServerConfig, TlsStream};

/// A plain or TLS socket.
#[derive(Debug)]
pub(crate) enum NetStream {
    Tcp(TcpStream),
    /// Boxed: the TLS state is large and a plain connection should not carry its size.
    Tls(Box<TlsStream<TcpStream>>),
}

impl NetStream {
    /// TLS client over `tcp` to `host` (SNI, certificate name).
    pub fn tls_client(tcp: TcpStream, config: &TlsConfig, host: &str) -> Result<Self, TlsError> {
        Ok(NetStream::Tls(Box::new(TlsStream::client(
            tcp, config, host,
        )?)))
    }

    /// TLS server over `tcp`.
    pub fn tls_server(tcp: TcpStream, config: &TlsServerConfig) -> Result<Self, TlsError> {
        Ok(NetStream::Tls(Box::new(TlsStream::server(tcp, config)?)))
    }

    /// Shut the write half (TLS: after sending close_notify as far as the socket takes it).
    pub fn shutdown_write(&mut self) -> io::Result<()> {
        match self {
            NetStream::Tcp(s) => s.shutdown(Shutdown::Write),
            NetStream::Tls(s) => s.shutdown_write(),
        }
    }

    /// TLS close_notify after everything written before it: `Ok(true)` once it is on
    /// the socket, `Ok(false)` while the socket would block
    /// ([`TlsStream::close_notify`]); nothing for TCP.
    pub fn close_notify(&mut self) -> io::Result<bool> {
        match self {
            NetStream::Tcp(_) => Ok(true),
            NetStream::Tls(s) => s.close_notify(),
        }
    }

    /// Write bytes `write` accepted but kept (TLS records): `Ok(true)` when none are
    /// left, `Ok(false)` when the socket would block.
    #[inline]
    pub fn flush_buffered(&mut self) -> io::Result<bool> {
        match self {
            NetStream::Tcp(_) => Ok(true),
            NetStream::Tls(s) => s.flush_pending(),
        }
    }

    /// Whether such bytes wait.
    #[inline]
    pub fn has_buffered(&self) -> bool {
        match self {
            NetStream::Tcp(_) => false,
            NetStream::Tls(s) => s.has_pending(),
        }
    }

    /// The TCP socket underneath.
    pub fn tcp(&self) -> &TcpStream {
        match self {
            NetStream::Tcp(s) => s,
            NetStream::Tls(s) => s.get_ref(),
        }
    }

    /// The TLS stream, for a TLS connection.
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
            NetStream::Tls(s) => s.read(buf),
        }
    }
}

impl Write for NetStream {
    #[inline]
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            NetStream::Tcp(s) => s.write(buf),
            NetStream::Tls(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            NetStream::Tcp(s) => s.flush(),
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
            NetStream::Tls(s) => s.reregister(registry, token, interests),
        }
    }

    fn deregister(&mut self, registry: &Registry) -> io::Result<()> {
        match self {
            NetStream::Tcp(s) => s.deregister(registry),
            NetStream::Tls(s) => s.deregister(registry),
        }
    }
}
