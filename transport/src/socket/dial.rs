//! The blocking connector: resolve, connect each address in turn with the socket
//! options set before the connect, and, when a proxy carries the target, open the
//! tunnel by driving [`Tunnel`] over the blocking socket. Returns a connected std
//! socket in blocking mode with no timeouts set.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use socket2::{Domain, Protocol, SockAddr, Socket, Type};

use super::SocketOptions;
use crate::proxy::tunnel::{Tunnel, Want};
use crate::proxy::{Proxy, ProxyError, ProxyErrorKind, ProxyRules};

/// Why a connection could not be made.
#[derive(Debug)]
pub(crate) enum DialError {
    /// Connecting to the target failed.
    Io(io::Error),
    /// The target's name resolved to no address.
    NoAddress,
    /// The target did not accept within the connect timeout.
    Timeout,
    /// The proxy could not be reached or refused the tunnel.
    Proxy(ProxyError),
}

/// Connect to `host:port` by `deadline` (`None`: no limit), through the proxy `rules`
/// give for it (`secure`: a `wss://` / `https://` target).
pub(crate) fn dial(
    host: &str,
    port: u16,
    secure: bool,
    rules: Option<&ProxyRules>,
    opts: &SocketOptions,
    deadline: Option<Instant>,
) -> Result<TcpStream, DialError> {
    let Some(proxy) = rules.and_then(|r| r.for_target(host, port, secure)) else {
        return connect_any(host, port, opts, deadline);
    };
    let mut tcp = connect_any(proxy.host(), proxy.port(), opts, deadline)
        .map_err(|e| DialError::Proxy(proxy_connect_error(proxy, e)))?;
    let result = drive(&mut tcp, proxy.tunnel(host, port), deadline);
    result.map_err(|k| DialError::Proxy(proxy.error(k)))?;
    tcp.set_read_timeout(None).map_err(DialError::Io)?;
    tcp.set_write_timeout(None).map_err(DialError::Io)?;
    Ok(tcp)
}

/// Failing to reach the proxy itself is a proxy error (it names the proxy).
pub(crate) fn proxy_connect_error(proxy: &Proxy, e: DialError) -> ProxyError {
    proxy.error(match e {
        DialError::Io(e) => ProxyErrorKind::Connect(e.kind(), e.to_string()),
        DialError::NoAddress => ProxyErrorKind::Connect(
            io::ErrorKind::NotFound,
            "host resolved to no address".into(),
        ),
        DialError::Timeout => ProxyErrorKind::Timeout,
        DialError::Proxy(p) => return p,
    })
}

/// Each resolved address in turn, the options set before the connect.
fn connect_any(
    host: &str,
    port: u16,
    opts: &SocketOptions,
    deadline: Option<Instant>,
) -> Result<TcpStream, DialError> {
    let mut last = DialError::NoAddress;
    for addr in (host, port).to_socket_addrs().map_err(DialError::Io)? {
        match connect_one(addr, opts, deadline) {
            Ok(s) => return Ok(s),
            Err(e) => last = e,
        }
    }
    Err(last)
}

fn connect_one(
    addr: SocketAddr,
    opts: &SocketOptions,
    deadline: Option<Instant>,
) -> Result<TcpStream, DialError> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))
        .map_err(DialError::Io)?;
    opts.apply(&socket).map_err(DialError::Io)?;
    let addr = SockAddr::from(addr);
    let r = match deadline {
        None => socket.connect(&addr),
        Some(d) => socket.connect_timeout(&addr, left(d).ok_or(DialError::Timeout)?),
    };
    match r {
        Ok(()) => Ok(socket.into()),
        Err(e) if e.kind() == io::ErrorKind::TimedOut => Err(DialError::Timeout),
        Err(e) => Err(DialError::Io(e)),
    }
}

/// Time left until `deadline`, `None` once it passed.
fn left(deadline: Instant) -> Option<Duration> {
    deadline
        .checked_duration_since(Instant::now())
        .filter(|d| !d.is_zero())
}

/// Run the proxy handshake on the blocking socket, each read and write bounded by the
/// time left.
fn drive(
    tcp: &mut TcpStream,
    mut t: Tunnel,
    deadline: Option<Instant>,
) -> Result<(), ProxyErrorKind> {
    let io_err = |e: io::Error| ProxyErrorKind::from_io(&e);
    let mut buf = [0u8; 512];
    loop {
        let timeout = match deadline {
            None => None,
            Some(d) => Some(left(d).ok_or(ProxyErrorKind::Timeout)?),
        };
        match t.want() {
            Want::Done => return Ok(()),
            Want::Write(bytes) => {
                tcp.set_write_timeout(timeout).map_err(io_err)?;
                match tcp.write(bytes) {
                    Ok(0) => return Err(ProxyErrorKind::Closed),
                    Ok(n) => t.wrote(n),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(io_err(e)),
                }
            }
            Want::Read(n) => {
                tcp.set_read_timeout(timeout).map_err(io_err)?;
                let n = n.min(buf.len());
                match tcp.read(&mut buf[..n]) {
                    Ok(got) => t.read(&buf[..got])?,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(io_err(e)),
                }
            }
        }
    }
}
