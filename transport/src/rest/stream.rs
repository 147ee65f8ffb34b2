//! The byte streams a REST connection runs on, and how they are made: [`Connector`]
//! opens a [`Stream`] to a host and port. [`TcpConnector`] gives plain TCP with
//! TCP_NODELAY; [`HttpConnector`](super::HttpConnector), the default, uses it for
//! `http://` and runs TLS over it for `https://`; the client code is the same for all.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use super::error::Error;
use super::url::HttpUrl;
use super::url::UrlError;
use crate::proxy::ProxyRules;
use crate::socket::{SocketOptions, dial};

/// A connected byte stream in blocking mode, with the read and write timeouts of its
/// connector already applied (a read or write that waits longer fails with
/// `WouldBlock` or `TimedOut`).
pub trait Stream: Read + Write {
    /// Without blocking, on a connection with no request outstanding: whether it can no
    /// longer carry a request. That is when the peer closed or reset it (as servers do
    /// with idle keep-alive connections), or sent bytes nobody asked for (such as a 408
    /// before closing). `Ok(false)`: nothing is pending, the connection looks usable.
    fn stale(&mut self) -> io::Result<bool>;

    /// The local address, when there is one (for tests and logs).
    fn local_addr(&self) -> io::Result<SocketAddr>;

    /// The server's address, when there is one (for tests and logs); by default
    /// none (`Unsupported`).
    fn peer_addr(&self) -> io::Result<SocketAddr> {
        Err(io::ErrorKind::Unsupported.into())
    }

    /// Called once before the client drops a connection
    /// ([`Client::disconnect`](super::Client::disconnect), a `Connection: close`
    /// response, the client dropped, a stale connection replaced, a request that
    /// failed): say goodbye the way the protocol asks, after the bytes written before,
    /// waiting at most until `deadline` (the close timeout) for the socket to take
    /// them, never for the peer's answer. TLS sends close_notify (RFC 8446 section
    /// 6.1), or the alert of the error that failed it, then shuts the socket; plain TCP
    /// has nothing to say (the default).
    fn close(&mut self, deadline: Instant) {
        let _ = deadline;
    }

    /// Change the timeout of each wait for bytes to read (`None`: forever): the client
    /// shortens it to what is left of a request's deadline
    /// ([`ClientBuilder::timeout`](super::ClientBuilder::timeout)). The default says
    /// `Unsupported`: the client then checks the deadline only between reads, so a
    /// server that sends nothing holds it for the read timeout.
    fn set_read_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        let _ = timeout;
        Err(io::ErrorKind::Unsupported.into())
    }

    /// Busy-poll receive mode ([`ClientBuilder::recv_mode`](super::ClientBuilder::recv_mode)):
    /// put the socket in non-blocking mode (`true`) for the spinning reads of a
    /// response, or back in blocking mode. `Ok(false)`: not supported (the default);
    /// the client then waits in blocking reads.
    fn set_nonblocking(&mut self, nonblocking: bool) -> io::Result<bool> {
        let _ = nonblocking;
        Ok(false)
    }

    /// After a read that got data, on a socket with
    /// [`SocketOptions::quickack`](crate::socket::SocketOptions::quickack): set
    /// `TCP_QUICKACK` again (the kernel leaves quick-ACK mode by itself once data flowed
    /// both ways). The default does nothing.
    fn rearm_quickack(&self) -> io::Result<()> {
        Ok(())
    }
}

impl Stream for TcpStream {
    fn stale(&mut self) -> io::Result<bool> {
        // One system call: a non-blocking peek on the blocking socket (it runs before
        // every reuse by default).
        let r = peek_now(self);
        match r {
            // End of stream, or unsolicited bytes.
            Ok(_) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(false),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(false),
            Err(_) => Ok(true),
        }
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        TcpStream::local_addr(self)
    }

    fn peer_addr(&self) -> io::Result<SocketAddr> {
        TcpStream::peer_addr(self)
    }

    fn set_read_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        TcpStream::set_read_timeout(self, timeout)
    }

    fn set_nonblocking(&mut self, nonblocking: bool) -> io::Result<bool> {
        TcpStream::set_nonblocking(self, nonblocking)?;
        Ok(true)
    }

    fn rearm_quickack(&self) -> io::Result<()> {
        crate::socket::rearm_quickack(self)
    }
}

/// Peek at one byte without blocking (`MSG_PEEK | MSG_DONTWAIT`): `Ok(0)` at end of
/// stream, `WouldBlock` when nothing arrived.
#[cfg(unix)]
fn peek_now(s: &TcpStream) -> io::Result<usize> {
    use std::os::fd::AsRawFd;
    let mut b = [0u8; 1];
    // SAFETY: `b` is a valid, writable one-byte buffer for the duration of the call, and
    // the descriptor is the open socket `s` borrows.
    let n = unsafe {
        libc::recv(
            s.as_raw_fd(),
            b.as_mut_ptr().cast(),
            1,
            libc::MSG_PEEK | libc::MSG_DONTWAIT,
        )
    };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(n as usize)
}

/// Elsewhere: the socket goes non-blocking for the peek.
#[cfg(not(unix))]
fn peek_now(s: &TcpStream) -> io::Result<usize> {
    s.set_nonblocking(true)?;
    let r = s.peek(&mut [0u8; 1]);
    s.set_nonblocking(false)?;
    r
}

/// Opens streams to the server of a URL, with the timeouts given.
pub trait Connector {
    /// The stream it makes.
    type Stream: Stream;

    /// Connect to `url`'s host and port (TLS for `https://`, if the connector does TLS)
    /// within `timeouts.connect` (resolution and TLS handshake included), then apply the
    /// read and write timeouts. A connect that takes too long is
    /// [`Error::ConnectTimeout`].
    fn connect(&self, url: &HttpUrl, timeouts: &Timeouts) -> Result<Self::Stream, Error>;

    /// The options it sets on each socket, if it makes TCP sockets (the client reads
    /// [`quickack`](SocketOptions::quickack) to set it again after reads). The default:
    /// `None`.
    fn socket_options(&self) -> Option<&SocketOptions> {
        None
    }
}

/// The timeouts a connector applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// The longest a TCP connect may take (for all resolved addresses together).
    pub connect: Duration,
    /// The longest wait for the next bytes of a response (`None`: forever).
    pub read: Option<Duration>,
    /// The longest wait for the socket to take more request bytes (`None`: forever).
    pub write: Option<Duration>,
    /// The longest a close waits for the socket to take the last bytes and TLS
    /// close_notify (a backed-up connection dropped, disconnected or failed).
    pub close: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            connect: Duration::from_secs(10),
            read: Some(Duration::from_secs(30)),
            write: Some(Duration::from_secs(30)),
            close: Duration::from_secs(5),
        }
    }
}

/// Plain TCP only (`http://`; an `https://` URL is [`Error::Url`]): tries each resolved
/// address in turn, with the socket options set (TCP_NODELAY on by default: a request
/// goes out in one segment without waiting for the previous one's ACK), through a proxy
/// when the rules give one for the target.
#[derive(Debug, Clone, Default)]
pub struct TcpConnector {
    /// Options set on the socket before it connects.
    pub socket: SocketOptions,
    /// Which proxy carries which target (`None`: connect directly).
    pub proxy: Option<ProxyRules>,
}

impl Connector for TcpConnector {
    type Stream = TcpStream;

    fn connect(&self, url: &HttpUrl, timeouts: &Timeouts) -> Result<TcpStream, Error> {
        if url.secure {
            return Err(Error::Url(UrlError::Scheme));
        }
        self.open(url, timeouts, Instant::now() + timeouts.connect)
    }

    fn socket_options(&self) -> Option<&SocketOptions> {
        Some(&self.socket)
    }
}

impl TcpConnector {
    /// Connect to `url`'s host and port (through the proxy, if any) by `deadline`,
    /// then apply the timeouts.
    pub(crate) fn open(
        &self,
        url: &HttpUrl,
        timeouts: &Timeouts,
        deadline: Instant,
    ) -> Result<TcpStream, Error> {
        let (host, port, secure) = (url.host.as_str(), url.port, url.secure);
        let s = dial(
            host,
            port,
            secure,
            self.proxy.as_ref(),
            &self.socket,
            Some(deadline),
        )?;
        s.set_read_timeout(timeouts.read).map_err(Error::io)?;
        s.set_write_timeout(timeouts.write).map_err(Error::io)?;
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    fn url(host: &str, port: u16) -> HttpUrl {
        HttpUrl::parse(&format!("http://{host}:{port}")).unwrap()
    }

    /// Poll `stale` until it says so (the tests' event wait, with its deadline).
    fn wait_stale(c: &mut TcpStream) {
        super::super::client_tests::net_events::wait_for("stale", || c.stale().unwrap());
    }

    #[test]
    fn tcp_connector_sets_nodelay_and_timeouts() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let t = Timeouts {
            read: Some(Duration::from_millis(1500)),
            ..Timeouts::default()
        };
        let s = TcpConnector::default()
            .connect(&url("127.0.0.1", port), &t)
            .unwrap();
        assert!(s.nodelay().unwrap());
        assert_eq!(s.read_timeout().unwrap(), Some(Duration::from_millis(1500)));
        let mut no_delay = TcpConnector::default();
        no_delay.socket.nodelay = false;
        let s = no_delay.connect(&url("localhost", port), &t).unwrap();
        assert!(!s.nodelay().unwrap());
    }

    #[test]
    fn refused_is_io_error() {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        match TcpConnector::default().connect(&url("127.0.0.1", port), &Timeouts::default()) {
            Err(Error::Connect { source, .. }) => {
                assert_eq!(source.kind(), io::ErrorKind::ConnectionRefused)
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn stale_on_fin_or_unsolicited_bytes_not_when_idle() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let mut c = TcpConnector::default()
            .connect(&url("127.0.0.1", port), &Timeouts::default())
            .unwrap();
        let (mut srv, _) = l.accept().unwrap();
        assert!(!c.stale().unwrap());
        srv.write_all(b"x").unwrap();
        // Stale once the byte arrives (polled: an event, not a guess of how long).
        wait_stale(&mut c);
        let mut b = [0u8; 1];
        c.read_exact(&mut b).unwrap();
        assert!(!c.stale().unwrap());
        drop(srv);
        // Stale once the FIN arrives.
        wait_stale(&mut c);
        // Still blocking afterwards.
        c.set_read_timeout(Some(Duration::from_millis(10))).unwrap();
        assert_eq!(c.read(&mut b).unwrap(), 0);
    }
}
