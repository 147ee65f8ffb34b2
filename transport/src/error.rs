//! What the crate's error types share: `Display` prints one level, and the alternate
//! form (`{:#}`) walks the `source()` chain, each level's text once.

use std::error::Error;
use std::fmt;

/// In the alternate form (`{:#}`), append `": {source}"` for each source of `e`.
pub(crate) fn write_sources(f: &mut fmt::Formatter<'_>, e: &dyn Error) -> fmt::Result {
    if !f.alternate() {
        return Ok(());
    }
    let mut next = e.source();
    while let Some(s) = next {
        write!(f, ": {s}")?;
        next = s.source();
    }
    Ok(())
}

/// "cannot resolve `host`" (`empty`: it resolved to no address).
pub(crate) fn resolve_failed(f: &mut fmt::Formatter<'_>, host: &str, empty: bool) -> fmt::Result {
    if empty {
        write!(f, "host name {host} resolved to no address")
    } else {
        write!(f, "cannot resolve host name {host}")
    }
}

/// `host:port`, an IPv6 literal in brackets: the target a connect error names.
pub(crate) fn target(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// The target of a connected socket: `host` and the port it is connected to (the host
/// alone when the socket has no peer any more).
#[cfg(feature = "tls")]
pub(crate) fn peer_target(host: &str, peer: std::io::Result<std::net::SocketAddr>) -> String {
    match peer {
        Ok(a) => target(host, a.port()),
        Err(_) => host.to_owned(),
    }
}
