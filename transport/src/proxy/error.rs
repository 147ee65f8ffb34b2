//! [`ProxyError`]: a tunnel that could not be opened, naming the proxy and what it did.

use std::fmt;
use std::io;

use super::ProxyKind;

/// What went wrong with the proxy.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProxyErrorKind {
    /// The proxy could not be reached (resolution, connect refused or reset).
    Connect(io::ErrorKind, String),
    /// The proxy wants credentials, or refused the ones given: HTTP `407` (or `401`,
    /// which some proxies send for wrong credentials), or a SOCKS5 username/password
    /// answer other than success (`status` is then its status byte).
    AuthRejected {
        /// The HTTP status code (407), or the SOCKS5 auth status byte.
        status: u16,
    },
    /// SOCKS5: the proxy accepts none of the offered authentication methods (it wants
    /// credentials and none were given, or the reverse).
    NoAcceptableAuth,
    /// HTTP `CONNECT` answered with a status other than 2xx (and other than 401/407).
    Refused {
        /// The status code.
        status: u16,
        /// The reason phrase, as the proxy sent it (lossy UTF-8, at most 200 bytes).
        reason: String,
    },
    /// SOCKS5 `CONNECT` failed with this reply code (RFC 1928 section 6: 1 general
    /// failure, 2 not allowed by ruleset, 3 network unreachable, 4 host unreachable,
    /// 5 connection refused, 6 TTL expired, 7 command not supported, 8 address type
    /// not supported).
    SocksReply(u8),
    /// The answer does not follow the protocol; the text says how.
    Garbage(&'static str),
    /// The proxy closed the connection before the tunnel was open.
    Closed,
    /// The tunnel was not open within the connect timeout.
    Timeout,
    /// A socket error while talking to the proxy.
    Io(io::ErrorKind, String),
}

/// A tunnel through a proxy could not be opened: which proxy, to which target, and what
/// happened (`SOCKS5 proxy 127.0.0.1:1080 to example.com:443: refused the tunnel:
/// connection refused (reply 5)`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxyError {
    proxy: String,
    protocol: ProxyKind,
    kind: ProxyErrorKind,
    /// `host:port` the tunnel was for (empty when not known).
    target: String,
}

impl ProxyError {
    pub(crate) fn new(proxy: String, protocol: ProxyKind, kind: ProxyErrorKind) -> ProxyError {
        ProxyError {
            proxy,
            protocol,
            kind,
            target: String::new(),
        }
    }

    /// This error, naming the target `host:port` the tunnel was for.
    pub(crate) fn for_target(mut self, host: &str, port: u16) -> ProxyError {
        self.target = crate::error::target(host, port);
        self
    }

    /// The target the tunnel was for, `host:port` (empty when not known).
    pub fn target(&self) -> &str {
        &self.target
    }

    /// The proxy's address, `host:port`.
    pub fn proxy(&self) -> &str {
        &self.proxy
    }

    /// The protocol spoken to it.
    pub fn protocol(&self) -> ProxyKind {
        self.protocol
    }

    /// What happened.
    pub fn kind(&self) -> &ProxyErrorKind {
        &self.kind
    }
}

impl fmt::Display for ProxyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.protocol {
            ProxyKind::Http => "HTTP proxy",
            ProxyKind::Socks5 | ProxyKind::Socks5h => "SOCKS5 proxy",
        };
        write!(f, "{what} {}", self.proxy)?;
        if !self.target.is_empty() {
            write!(f, " to {}", self.target)?;
        }
        f.write_str(": ")?;
        match &self.kind {
            ProxyErrorKind::Connect(_, e) => write!(f, "cannot connect: {e}"),
            ProxyErrorKind::AuthRejected { status } => match self.protocol {
                ProxyKind::Http => write!(
                    f,
                    "{status} {} (credentials missing or refused)",
                    if *status == 401 {
                        "Unauthorized"
                    } else {
                        "Proxy Authentication Required"
                    }
                ),
                ProxyKind::Socks5 | ProxyKind::Socks5h => {
                    write!(f, "username/password refused (status {status})")
                }
            },
            ProxyErrorKind::NoAcceptableAuth => {
                f.write_str("accepts none of the offered authentication methods")
            }
            ProxyErrorKind::Refused { status, reason } => {
                write!(f, "refused the tunnel: {status} {reason}")
            }
            ProxyErrorKind::SocksReply(code) => {
                write!(
                    f,
                    "refused the tunnel: {} (reply {code})",
                    socks_reply(*code)
                )
            }
            ProxyErrorKind::Garbage(what) => write!(f, "answered garbage: {what}"),
            ProxyErrorKind::Closed => f.write_str("closed the connection mid-handshake"),
            ProxyErrorKind::Timeout => f.write_str("tunnel not open within the connect timeout"),
            ProxyErrorKind::Io(_, e) => write!(f, "I/O error: {e}"),
        }
    }
}

impl std::error::Error for ProxyError {}

/// RFC 1928's words for a SOCKS5 reply code.
fn socks_reply(code: u8) -> &'static str {
    match code {
        1 => "general SOCKS server failure",
        2 => "connection not allowed by ruleset",
        3 => "network unreachable",
        4 => "host unreachable",
        5 => "connection refused",
        6 => "TTL expired",
        7 => "command not supported",
        8 => "address type not supported",
        _ => "unassigned reply code",
    }
}

impl ProxyErrorKind {
    /// A SOCKS5 refusal that concerns the address asked for (network or host
    /// unreachable, connection refused, TTL expired): a target resolved here to several
    /// addresses goes on with the next one.
    pub(crate) fn tries_next_address(&self) -> bool {
        matches!(self, ProxyErrorKind::SocksReply(3..=6))
    }

    /// A socket error during the handshake (a reset is the proxy closing on us).
    pub(crate) fn from_io(e: &io::Error) -> ProxyErrorKind {
        match e.kind() {
            io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::BrokenPipe
            | io::ErrorKind::UnexpectedEof => ProxyErrorKind::Closed,
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => ProxyErrorKind::Timeout,
            k => ProxyErrorKind::Io(k, e.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_the_proxy_and_what_happened() {
        let e = ProxyError::new(
            "127.0.0.1:8888".into(),
            ProxyKind::Http,
            ProxyErrorKind::AuthRejected { status: 407 },
        );
        assert_eq!(
            e.to_string(),
            "HTTP proxy 127.0.0.1:8888: 407 Proxy Authentication Required (credentials missing or refused)"
        );
        let e = ProxyError::new(
            "[::1]:1080".into(),
            ProxyKind::Socks5,
            ProxyErrorKind::SocksReply(5),
        );
        assert_eq!(
            e.to_string(),
            "SOCKS5 proxy [::1]:1080: refused the tunnel: connection refused (reply 5)"
        );
        let e = e.for_target("example.com", 443);
        assert_eq!(e.target(), "example.com:443");
        assert_eq!(
            e.to_string(),
            "SOCKS5 proxy [::1]:1080 to example.com:443: refused the tunnel: connection refused (reply 5)"
        );
        let e = ProxyError::new("p:3128".into(), ProxyKind::Http, ProxyErrorKind::Closed)
            .for_target("::1", 8443);
        assert_eq!(
            e.to_string(),
            "HTTP proxy p:3128 to [::1]:8443: closed the connection mid-handshake"
        );
    }
}
