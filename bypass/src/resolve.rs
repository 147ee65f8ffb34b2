//! Name resolution stays outside the loop (feature `std`): resolve each host
//! once, with the operating system's resolver, before the loop starts, and
//! hand the address in. The connection keeps the *name*: it goes into the
//! `Host` header, the TLS SNI and certificate check, and the WebSocket
//! handshake, exactly as if the loop had resolved it itself.
//!
//! ```
//! use tickwire_bypass::resolve::resolve;
//! use tickwire_bypass::{Remote, Scheme};
//!
//! // Before the loop (this may block on DNS):
//! let addr = resolve("localhost", 443)?;
//! let feed = Remote::new(Scheme::Wss, "localhost", addr, 443, "/ws/btcusdt@trade")?;
//! assert_eq!(feed.host(), "localhost"); // Host header and SNI
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::format;
use std::io;
use std::net::{Ipv4Addr, SocketAddr, ToSocketAddrs};

/// The first IPv4 address of `host` (a name or an IPv4 literal), resolved now
/// with the system resolver. The loop's interface speaks IPv4, so IPv6-only
/// names are an error that says so.
pub fn resolve(host: &str, port: u16) -> io::Result<Ipv4Addr> {
    let addrs = (host, port)
        .to_socket_addrs()
        .map_err(|e| io::Error::new(e.kind(), format!("cannot resolve {host}:{port}: {e}")))?;
    let mut saw_v6 = false;
    for a in addrs {
        match a {
            SocketAddr::V4(v4) => return Ok(*v4.ip()),
            SocketAddr::V6(_) => saw_v6 = true,
        }
    }
    Err(io::Error::new(
        io::ErrorKind::NotFound,
        if saw_v6 {
            format!("{host}:{port} has only IPv6 addresses; the bypass interface is IPv4")
        } else {
            format!("{host}:{port} resolved to no address")
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::ToString;

    #[test]
    fn literals_and_localhost_resolve_without_the_network() {
        assert_eq!(
            resolve("10.77.0.1", 443).unwrap(),
            Ipv4Addr::new(10, 77, 0, 1)
        );
        assert!(resolve("localhost", 80).unwrap().is_loopback());
    }

    #[test]
    fn a_bad_name_says_which() {
        let e = resolve("no such host.invalid", 443).unwrap_err();
        assert!(e.to_string().contains("no such host.invalid:443"), "{e}");
    }
}
