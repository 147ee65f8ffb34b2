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

/// Why a connection could not be made: each names the host or address it is about.
#[derive(Debug)]
pub(crate) enum DialError {
    /// The host name could not be resolved (`source`: the resolver's error), or resolved
    /// to no address (`None`).
    Resolve {
        host: String,
        source: Option<io::Error>,
    },
    /// Connecting to this address failed (refused, unreachable, ...); the last address
    /// tried when the name had several.
    Connect { addr: SocketAddr, source: io::Error },
    /// `host:port` did not accept within the connect timeout.
    Timeout { target: String },
    /// The proxy could not be reached or refused the tunnel.
    Proxy(ProxyError),
}

impl DialError {
    /// The resolver's answer for `host:port`, as a list of addresses (not empty).
    pub(crate) fn resolved(
        host: &str,
        r: io::Result<impl Iterator<Item = SocketAddr>>,
    ) -> Result<Vec<SocketAddr>, DialError> {
        let resolve = |source| DialError::Resolve {
            host: host.to_owned(),
            source,
        };
        let addrs: Vec<SocketAddr> = r.map_err(|e| resolve(Some(e)))?.collect();
        if addrs.is_empty() {
            return Err(resolve(None));
        }
        Ok(addrs)
    }

    /// `host:port`, the target of a timeout, an IPv6 literal in brackets.
    pub(crate) fn timeout(host: &str, port: u16) -> DialError {
        DialError::Timeout {
            target: crate::error::target(host, port),
        }
    }
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
    // socks5://: the target's name is resolved here and each address asked for in turn.
    let resolved = match proxy.resolves_here(host) {
        true => Some(DialError::resolved(host, (host, port).to_socket_addrs())?),
        false => None,
    };
    let mut refused = ProxyErrorKind::Closed;
    for target in proxy.tunnel_targets(host, resolved.as_deref()) {
        let mut tcp = connect_any(proxy.host(), proxy.port(), opts, deadline)
            .map_err(|e| DialError::Proxy(proxy_connect_error(proxy, e, host, port)))?;
        match drive(&mut tcp, proxy.tunnel(&target, port), deadline) {
            Ok(()) => {
                let reset = |e: io::Error| {
                    DialError::Proxy(proxy.error(ProxyErrorKind::from_io(&e), host, port))
                };
                tcp.set_read_timeout(None).map_err(reset)?;
                tcp.set_write_timeout(None).map_err(reset)?;
                return Ok(tcp);
            }
            Err(k) if k.tries_next_address() => refused = k,
            Err(k) => return Err(DialError::Proxy(proxy.error(k, host, port))),
        }
    }
    Err(DialError::Proxy(proxy.error(refused, host, port)))
}

/// Failing to reach the proxy itself is a proxy error (it names the proxy, and the
/// target `host:port`).
pub(crate) fn proxy_connect_error(
    proxy: &Proxy,
    e: DialError,
    host: &str,
    port: u16,
) -> ProxyError {
    let kind = match e {
        // The error names the proxy already.
        DialError::Connect { source, .. } => {
            ProxyErrorKind::Connect(source.kind(), source.to_string())
        }
        DialError::Resolve { host, source } => match source {
            Some(e) => ProxyErrorKind::Connect(e.kind(), format!("cannot resolve {host}: {e}")),
            None => ProxyErrorKind::Connect(
                io::ErrorKind::NotFound,
                format!("{host} resolved to no address"),
            ),
        },
        DialError::Timeout { .. } => ProxyErrorKind::Timeout,
        DialError::Proxy(p) => return p,
    };
    proxy.error(kind, host, port)
}

/// Each resolved address in turn, the options set before the connect.
fn connect_any(
    host: &str,
    port: u16,
    opts: &SocketOptions,
    deadline: Option<Instant>,
) -> Result<TcpStream, DialError> {
    let addrs = DialError::resolved(host, (host, port).to_socket_addrs())?;
    let mut last = None;
    for addr in addrs {
        match connect_one(addr, opts, deadline) {
            Ok(s) => return Ok(s),
            Err(ConnectFailed::Timeout) => return Err(DialError::timeout(host, port)),
            Err(ConnectFailed::Io(source)) => last = Some(DialError::Connect { addr, source }),
        }
    }
    // `resolved` returned at least one address, so `last` is set.
    Err(last.unwrap_or_else(|| DialError::Resolve {
        host: host.to_owned(),
        source: None,
    }))
}

/// Why one address could not be connected.
enum ConnectFailed {
    Timeout,
    Io(io::Error),
}

fn connect_one(
    addr: SocketAddr,
    opts: &SocketOptions,
    deadline: Option<Instant>,
) -> Result<TcpStream, ConnectFailed> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))
        .map_err(ConnectFailed::Io)?;
    opts.apply(&socket).map_err(ConnectFailed::Io)?;
    let addr = SockAddr::from(addr);
    let r = match deadline {
        None => socket.connect(&addr),
        Some(d) => socket.connect_timeout(&addr, left(d).ok_or(ConnectFailed::Timeout)?),
    };
    match r {
        Ok(()) => Ok(socket.into()),
        Err(e) if e.kind() == io::ErrorKind::TimedOut => Err(ConnectFailed::Timeout),
        Err(e) => Err(ConnectFailed::Io(e)),
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
