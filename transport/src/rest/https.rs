//! `https://` by URL scheme: [`HttpConnector`], the REST client's default connector,
//! opens plain TCP for `http://` and runs TLS over that socket for `https://`, with SNI
//! and the certificate name from the URL's host. The TLS is the transport's
//! [`TlsStream`] (the codec's `TlsCodec`, as for `wss://`) over a blocking
//! `std::net::TcpStream`; its settings are a shared [`TlsConfig`] (custom CA, mTLS,
//! TLS 1.3 only, no-verify for tests).

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use super::error::Error;
use super::stream::{Connector, Stream, TcpConnector, Timeouts};
use super::url::HttpUrl;
use crate::socket::SocketOptions;
#[cfg(feature = "tls")]
use crate::tls::{TlsConfig, TlsStream};

/// Plain TCP for `http://`, TLS for `https://` (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct HttpConnector {
    /// The TCP side (socket options, proxy).
    pub tcp: TcpConnector,
    /// TLS settings for `https://`; `None`: [`TlsConfig::shared_default`] (the
    /// compiled-in Mozilla roots).
    #[cfg(feature = "tls")]
    pub tls: Option<TlsConfig>,
}

impl Connector for HttpConnector {
    type Stream = HttpStream;

    fn connect(&self, url: &HttpUrl, timeouts: &Timeouts) -> Result<HttpStream, Error> {
        let deadline = Instant::now() + timeouts.connect;
        let tcp = self.tcp.open(url, timeouts, deadline)?;
        if !url.secure {
            return Ok(HttpStream::Tcp(tcp));
        }
        #[cfg(feature = "tls")]
        {
            let config = self.tls.clone().unwrap_or_else(TlsConfig::shared_default);
            let tls = tls_handshake(tcp, &config, &url.host, timeouts, deadline)?;
            Ok(HttpStream::Tls(Box::new(tls)))
        }
        #[cfg(not(feature = "tls"))]
        {
            drop(tcp);
            Err(Error::TlsDisabled)
        }
    }

    fn socket_options(&self) -> Option<&SocketOptions> {
        Some(&self.tcp.socket)
    }
}

/// The TLS handshake on the connected socket, by the connect deadline; then the read
/// and write timeouts go (back) on the socket.
#[cfg(feature = "tls")]
fn tls_handshake(
    tcp: TcpStream,
    config: &TlsConfig,
    host: &str,
    timeouts: &Timeouts,
    deadline: Instant,
) -> Result<TlsStream<TcpStream>, Error> {
    let mut tls = TlsStream::client(tcp, config, host)?;
    loop {
        let left = match deadline.checked_duration_since(Instant::now()) {
            Some(left) if !left.is_zero() => left,
            _ => return Err(connect_timeout(&tls, host)),
        };
        let sock = tls.get_ref();
        sock.set_read_timeout(Some(left)).map_err(Error::io)?;
        sock.set_write_timeout(Some(left)).map_err(Error::io)?;
        // `Ok(false)`: the socket timed out (blocking mode); the deadline check above
        // turns that into ConnectTimeout.
        match tls.handshake() {
            Ok(true) => break,
            Ok(false) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                return Err(match Error::from_io(e, false) {
                    Error::ReadTimeout { .. } | Error::WriteTimeout { .. } => {
                        connect_timeout(&tls, host)
                    }
                    e => e,
                });
            }
        }
    }
    let sock = tls.get_ref();
    sock.set_read_timeout(timeouts.read).map_err(Error::io)?;
    sock.set_write_timeout(timeouts.write).map_err(Error::io)?;
    Ok(tls)
}

/// The connect timeout, naming `host` and the port `tls` is connected to.
#[cfg(feature = "tls")]
fn connect_timeout(tls: &TlsStream<TcpStream>, host: &str) -> Error {
    Error::ConnectTimeout {
        target: crate::error::peer_target(host, tls.get_ref().peer_addr()),
    }
}

/// The stream of an [`HttpConnector`]: plain TCP or TLS over it.
#[derive(Debug)]
pub enum HttpStream {
    /// `http://`.
    Tcp(TcpStream),
    /// `https://` (boxed: the TLS state is large).
    #[cfg(feature = "tls")]
    Tls(Box<TlsStream<TcpStream>>),
}

impl HttpStream {
    /// What the TLS handshake of an `https://` connection agreed on: protocol
    /// version, ALPN protocol, cipher suite, the server's certificates
    /// ([`TlsCodec`](crate::tls::TlsCodec)'s getters).
    #[cfg(feature = "tls")]
    pub fn tls(&self) -> Option<&crate::tls::TlsCodec<Vec<u8>>> {
        match self {
            HttpStream::Tcp(_) => None,
            HttpStream::Tls(s) => Some(s.codec()),
        }
    }
}

/// The same getter as the tokio client's and the WebSocket connections'.
#[cfg(feature = "tls")]
impl super::Client<HttpConnector> {
    /// What the TLS handshake of the open `https://` connection agreed on: protocol
    /// version, ALPN protocol, cipher suite, the server's certificates; `None` for
    /// `http://` or when no connection is open.
    pub fn tls(&self) -> Option<&crate::tls::TlsCodec<Vec<u8>>> {
        self.stream().and_then(HttpStream::tls)
    }
}

impl HttpStream {
    /// The TCP socket under it.
    fn tcp(&self) -> &TcpStream {
        match self {
            HttpStream::Tcp(s) => s,
            #[cfg(feature = "tls")]
            HttpStream::Tls(s) => s.get_ref(),
        }
    }
}

impl Read for HttpStream {
    #[inline]
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            HttpStream::Tcp(s) => s.read(buf),
            #[cfg(feature = "tls")]
            HttpStream::Tls(s) => s.read(buf),
        }
    }
}

impl Write for HttpStream {
    #[inline]
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            HttpStream::Tcp(s) => s.write(buf),
            #[cfg(feature = "tls")]
            HttpStream::Tls(s) => s.write(buf),
        }
    }

    /// TLS: write the records `write` encrypted but the socket did not take yet
    /// (`WouldBlock` when the write timeout passes first).
    #[inline]
    fn flush(&mut self) -> io::Result<()> {
        match self {
            HttpStream::Tcp(s) => s.flush(),
            #[cfg(feature = "tls")]
            HttpStream::Tls(s) => s.flush(),
        }
    }
}

impl Stream for HttpStream {
    fn stale(&mut self) -> io::Result<bool> {
        match self {
            HttpStream::Tcp(s) => s.stale(),
            #[cfg(feature = "tls")]
            HttpStream::Tls(s) => s.stale(),
        }
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        match self {
            HttpStream::Tcp(s) => s.local_addr(),
            #[cfg(feature = "tls")]
            HttpStream::Tls(s) => s.get_ref().local_addr(),
        }
    }

    fn peer_addr(&self) -> io::Result<SocketAddr> {
        match self {
            HttpStream::Tcp(s) => s.peer_addr(),
            #[cfg(feature = "tls")]
            HttpStream::Tls(s) => s.get_ref().peer_addr(),
        }
    }

    fn set_read_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        match self {
            HttpStream::Tcp(s) => s.set_read_timeout(timeout),
            #[cfg(feature = "tls")]
            HttpStream::Tls(s) => s.get_ref().set_read_timeout(timeout),
        }
    }

    fn set_nonblocking(&mut self, nonblocking: bool) -> io::Result<bool> {
        self.tcp().set_nonblocking(nonblocking)?;
        Ok(true)
    }

    fn rearm_quickack(&self) -> io::Result<()> {
        crate::socket::rearm_quickack(self.tcp())
    }

    fn close(&mut self, deadline: Instant) {
        #[cfg(feature = "tls")]
        if let HttpStream::Tls(s) = self {
            Stream::close(&mut **s, deadline);
        }
        #[cfg(not(feature = "tls"))]
        let _ = deadline;
    }
}

#[cfg(feature = "tls")]
impl Stream for TlsStream<TcpStream> {
    /// Reads what the socket holds without blocking: the peer's close_notify, a bare
    /// FIN (a truncation error), any TLS error or application data nobody asked for
    /// (a 408 before a close) make the connection stale; session tickets and other
    /// post-handshake messages are handled and do not.
    fn stale(&mut self) -> io::Result<bool> {
        self.get_ref().set_nonblocking(true)?;
        let r = self.read_available();
        self.get_ref().set_nonblocking(false)?;
        Ok(r.is_err() || self.codec().is_peer_closed() || self.codec().has_plaintext())
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.get_ref().local_addr()
    }

    fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.get_ref().peer_addr()
    }

    fn set_read_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        self.get_ref().set_read_timeout(timeout)
    }

    fn set_nonblocking(&mut self, nonblocking: bool) -> io::Result<bool> {
        self.get_ref().set_nonblocking(nonblocking)?;
        Ok(true)
    }

    fn rearm_quickack(&self) -> io::Result<()> {
        crate::socket::rearm_quickack(self.get_ref())
    }

    /// close_notify after everything written before it (or the pending fatal alert of
    /// a failed connection), waiting until `deadline` for a backed-up socket to take
    /// it; then the write half is shut ([`TlsStream::close_until`]). Errors are
    /// ignored: the connection is being dropped either way.
    fn close(&mut self, deadline: Instant) {
        let _ = self.close_until(deadline);
    }
}

/// TLS settings on the builder of a client with the default connector.
#[cfg(feature = "tls")]
impl super::ClientBuilder<HttpConnector> {
    /// TLS settings for `https://` URLs (default: [`TlsConfig::shared_default`]).
    pub fn tls(self, config: TlsConfig) -> Self {
        self.map_connector(|c| c.tls = Some(config))
    }
}
