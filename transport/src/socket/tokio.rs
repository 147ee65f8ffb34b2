//! The async connector: [`dial`] as the blocking one does it, awaited on tokio. The
//! proxy handshake is the same [`Tunnel`], driven with `try_read` / `try_write` on
//! readiness; the whole connect (resolution, proxy, tunnel) is bounded by the deadline.

use std::io;
use std::net::SocketAddr;
use std::time::Instant;

use ::tokio::net::{TcpSocket, TcpStream};

use super::SocketOptions;
use super::dial::{DialError, proxy_connect_error};
use crate::proxy::ProxyErrorKind;
use crate::proxy::ProxyRules;
use crate::proxy::tunnel::{Tunnel, Want};

/// Connect to `host:port` by `deadline` (`None`: no limit), through the proxy `rules`
/// give for it (`secure`: a `wss://` / `https://` target).
pub(crate) async fn dial(
    host: &str,
    port: u16,
    secure: bool,
    rules: Option<&ProxyRules>,
    opts: &SocketOptions,
    deadline: Option<Instant>,
) -> Result<TcpStream, DialError> {
    let Some(proxy) = rules.and_then(|r| r.for_target(host, port, secure)) else {
        return bounded(deadline, (host, port), connect_any(host, port, opts)).await;
    };
    // socks5://: the target's name is resolved here and each address asked for in turn.
    let resolved = match proxy.resolves_here(host) {
        true => {
            let lookup =
                async { DialError::resolved(host, ::tokio::net::lookup_host((host, port)).await) };
            Some(bounded(deadline, (host, port), lookup).await?)
        }
        false => None,
    };
    let mut refused = ProxyErrorKind::Closed;
    for target in proxy.tunnel_targets(host, resolved.as_deref()) {
        let at = (proxy.host(), proxy.port());
        let tcp = bounded(deadline, at, connect_any(at.0, at.1, opts))
            .await
            .map_err(|e| DialError::Proxy(proxy_connect_error(proxy, e, host, port)))?;
        let handshake = drive(&tcp, proxy.tunnel(&target, port));
        let result = match deadline {
            None => handshake.await,
            Some(d) => ::tokio::time::timeout_at(d.into(), handshake)
                .await
                .unwrap_or(Err(ProxyErrorKind::Timeout)),
        };
        match result {
            Ok(()) => return Ok(tcp),
            Err(k) if k.tries_next_address() => refused = k,
            Err(k) => return Err(DialError::Proxy(proxy.error(k, host, port))),
        }
    }
    Err(DialError::Proxy(proxy.error(refused, host, port)))
}

/// `fut` by `deadline` ([`DialError::Timeout`] for `target` after it).
async fn bounded<T>(
    deadline: Option<Instant>,
    target: (&str, u16),
    fut: impl Future<Output = Result<T, DialError>>,
) -> Result<T, DialError> {
    match deadline {
        None => fut.await,
        Some(d) => ::tokio::time::timeout_at(d.into(), fut)
            .await
            .unwrap_or_else(|_| Err(DialError::timeout(target.0, target.1))),
    }
}

/// Each resolved address in turn, the options set before the connect.
async fn connect_any(host: &str, port: u16, opts: &SocketOptions) -> Result<TcpStream, DialError> {
    let addrs = DialError::resolved(host, ::tokio::net::lookup_host((host, port)).await)?;
    let mut last = None;
    for addr in addrs {
        match connect_one(addr, opts).await {
            Ok(s) => return Ok(s),
            Err(source) => last = Some(DialError::Connect { addr, source }),
        }
    }
    // `resolved` returned at least one address, so `last` is set.
    Err(last.unwrap_or_else(|| DialError::Resolve {
        host: host.to_owned(),
        source: None,
    }))
}

async fn connect_one(addr: SocketAddr, opts: &SocketOptions) -> io::Result<TcpStream> {
    let socket = match addr {
        SocketAddr::V4(_) => TcpSocket::new_v4()?,
        SocketAddr::V6(_) => TcpSocket::new_v6()?,
    };
    opts.apply(&socket)?;
    socket.connect(addr).await
}

/// Run the proxy handshake on readiness.
async fn drive(tcp: &TcpStream, mut t: Tunnel) -> Result<(), ProxyErrorKind> {
    let io_err = |e: io::Error| ProxyErrorKind::from_io(&e);
    let mut buf = [0u8; 512];
    loop {
        match t.want() {
            Want::Done => return Ok(()),
            Want::Write(bytes) => match tcp.try_write(bytes) {
                Ok(0) => return Err(ProxyErrorKind::Closed),
                Ok(n) => t.wrote(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    tcp.writable().await.map_err(io_err)?
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(io_err(e)),
            },
            Want::Read(n) => {
                let n = n.min(buf.len());
                match tcp.try_read(&mut buf[..n]) {
                    Ok(got) => t.read(&buf[..got])?,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        tcp.readable().await.map_err(io_err)?
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(io_err(e)),
                }
            }
        }
    }
}
