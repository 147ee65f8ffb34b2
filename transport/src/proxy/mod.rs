//! Proxies: reach the server through an HTTP `CONNECT` proxy (Basic auth) or a SOCKS5
//! proxy (no auth, or username/password), for `ws://`, `wss://`, `http://` and
//! `https://` alike. The tunnel is opened first; TLS and the WebSocket or HTTP
//! exchange then run through it exactly as over a direct connection.
//!
//! - [`Proxy`]: one proxy (`Proxy::http("http://user:pw@10.0.0.1:3128")?`,
//!   `Proxy::socks5("socks5://127.0.0.1:1080")?`), given to a builder's `.proxy(..)`.
//!   `socks5://` resolves the target's name here and sends the proxy its address;
//!   `socks5h://` sends the name for the proxy to resolve (curl's and reqwest's
//!   convention: DNS goes where the scheme says);
//! - [`ProxyRules`]: which proxy serves which target; a builder's `.proxy_from_env()`
//!   reads them from `HTTPS_PROXY` / `HTTP_PROXY` / `ALL_PROXY` / `NO_PROXY` (and the
//!   lowercase forms), never without being asked;
//! - [`ProxyError`]: a proxy that refused, answered garbage or closed mid-handshake,
//!   naming the proxy and what happened.
//!
//! The handshakes themselves are one sans-IO state machine (`proxy/tunnel.rs`): bytes to
//! write and how many to read next, no socket. The blocking and the tokio connectors
//! (`crate::socket`) both drive it, so each protocol rule is written once.

mod env;
mod error;
pub(crate) mod tunnel;

pub use env::{NoProxy, ProxyRules};
pub use error::{ProxyError, ProxyErrorKind};

use std::fmt;

/// The protocol spoken to a proxy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProxyKind {
    /// HTTP/1.1 `CONNECT host:port` (plain TCP to the proxy).
    Http,
    /// SOCKS5 (RFC 1928), `socks5://`: the target's name is resolved here and the
    /// proxy is sent its address (ATYP 1 or 4), as curl and reqwest do.
    Socks5,
    /// SOCKS5 with the name resolved by the proxy, `socks5h://`: the target's name is
    /// sent as it is (ATYP 3), and no DNS query leaves this host for it.
    Socks5h,
}

impl ProxyKind {
    /// SOCKS5, whoever resolves the name.
    pub fn is_socks5(self) -> bool {
        matches!(self, ProxyKind::Socks5 | ProxyKind::Socks5h)
    }
}

/// One proxy: its protocol, address and credentials.
#[derive(Clone, PartialEq, Eq)]
pub struct Proxy {
    kind: ProxyKind,
    host: String,
    port: u16,
    auth: Option<(String, String)>,
}

impl fmt::Debug for Proxy {
    /// Without the password.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Proxy")
            .field("kind", &self.kind)
            .field("addr", &self.addr())
            .field("user", &self.auth.as_ref().map(|(u, _)| u))
            .finish()
    }
}

/// Why a proxy URL was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProxyUrlError {
    /// A scheme this kind of proxy does not speak (`https://` proxies, TLS to the
    /// proxy itself, are not supported).
    Scheme(String),
    /// No host, a bad port, or a bad `%` escape in the credentials.
    Malformed(String),
}

impl fmt::Display for ProxyUrlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProxyUrlError::Scheme(s) => write!(f, "unsupported proxy scheme {s:?}"),
            ProxyUrlError::Malformed(s) => write!(f, "malformed proxy URL {s:?}"),
        }
    }
}

impl std::error::Error for ProxyUrlError {}

impl Proxy {
    /// An HTTP `CONNECT` proxy: `http://[user:password@]host[:port]` (port 80 by
    /// default; the scheme may be left out).
    /// Credentials are sent as Basic auth; `%` escapes in them are decoded.
    ///
    /// ```
    /// use tickwire::proxy::{Proxy, ProxyKind};
    ///
    /// let proxy = Proxy::http("http://user:secret@proxy.internal:3128")?;
    /// assert_eq!((proxy.kind(), proxy.host(), proxy.port()), (ProxyKind::Http, "proxy.internal", 3128));
    /// let ws = tickwire::ws::Client::builder().proxy(proxy); // then .connect("wss://...")
    /// # Ok::<(), tickwire::proxy::ProxyUrlError>(())
    /// ```
    pub fn http(url: &str) -> Result<Proxy, ProxyUrlError> {
        Self::parse_as(url, Some(ProxyKind::Http))
    }

    /// A SOCKS5 proxy: `socks5://[user:password@]host[:port]` or `socks5h://...`
    /// (port 1080 by default; the scheme may be left out, meaning `socks5://`).
    ///
    /// The scheme says who resolves the target's host name, as in curl and reqwest:
    /// with `socks5://` ([`ProxyKind::Socks5`]) it is resolved here and the proxy is
    /// sent the address (the first the resolver gives); with `socks5h://`
    /// ([`ProxyKind::Socks5h`]) the name goes to the proxy, which resolves it (use it
    /// when only the proxy's side can resolve the target, or DNS must not leave this
    /// host). An IP address target is sent as such either way.
    ///
    /// ```
    /// use tickwire::proxy::{Proxy, ProxyKind};
    ///
    /// let proxy = Proxy::socks5("socks5://127.0.0.1")?; // port 1080 by default
    /// assert_eq!((proxy.kind(), proxy.port()), (ProxyKind::Socks5, 1080)); // names resolved here
    /// let remote_dns = Proxy::socks5("socks5h://127.0.0.1:1080")?;
    /// assert_eq!(remote_dns.kind(), ProxyKind::Socks5h); // names resolved by the proxy
    /// let rest = tickwire::rest::Client::builder().proxy(proxy);
    /// # Ok::<(), tickwire::proxy::ProxyUrlError>(())
    /// ```
    pub fn socks5(url: &str) -> Result<Proxy, ProxyUrlError> {
        Self::parse_as(url, Some(ProxyKind::Socks5))
    }

    /// A proxy by its URL's scheme: `http://` for `CONNECT`, `socks5://` or
    /// `socks5h://` for SOCKS5 (a URL without a scheme is an HTTP proxy, as curl
    /// reads `HTTPS_PROXY=host:port`).
    ///
    /// ```
    /// use tickwire::proxy::{Proxy, ProxyKind};
    ///
    /// assert_eq!(Proxy::parse("socks5://10.0.0.1:1081")?.kind(), ProxyKind::Socks5);
    /// assert_eq!(Proxy::parse("socks5h://10.0.0.1:1081")?.kind(), ProxyKind::Socks5h);
    /// assert_eq!(Proxy::parse("proxy.internal:3128")?.kind(), ProxyKind::Http); // as curl reads it
    /// # Ok::<(), tickwire::proxy::ProxyUrlError>(())
    /// ```
    pub fn parse(url: &str) -> Result<Proxy, ProxyUrlError> {
        Self::parse_as(url, None)
    }

    fn parse_as(url: &str, want: Option<ProxyKind>) -> Result<Proxy, ProxyUrlError> {
        let url = url.trim();
        let malformed = || ProxyUrlError::Malformed(url.to_owned());
        let (kind, rest) = match url.split_once("://") {
            Some((scheme, rest)) => {
                let kind = match scheme.to_ascii_lowercase().as_str() {
                    "http" => ProxyKind::Http,
                    "socks5" => ProxyKind::Socks5,
                    "socks5h" => ProxyKind::Socks5h,
                    other => return Err(ProxyUrlError::Scheme(other.to_owned())),
                };
                if want.is_some_and(|w| w.is_socks5() != kind.is_socks5()) {
                    return Err(ProxyUrlError::Scheme(scheme.to_owned()));
                }
                (kind, rest)
            }
            None => (want.unwrap_or(ProxyKind::Http), url),
        };
        // The authority ends at the first '/' (a trailing slash is common in env vars).
        let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
        let (auth, hostport) = match authority.rsplit_once('@') {
            Some((userinfo, hp)) => {
                let (user, pass) = userinfo.split_once(':').unwrap_or((userinfo, ""));
                let user = percent_decode(user).ok_or_else(malformed)?;
                let pass = percent_decode(pass).ok_or_else(malformed)?;
                (Some((user, pass)), hp)
            }
            None => (None, authority),
        };
        let default_port = match kind {
            ProxyKind::Http => 80,
            ProxyKind::Socks5 | ProxyKind::Socks5h => 1080,
        };
        let (host, port) = split_host_port(hostport, default_port).ok_or_else(malformed)?;
        Ok(Proxy {
            kind,
            host,
            port,
            auth,
        })
    }

    /// The protocol.
    pub fn kind(&self) -> ProxyKind {
        self.kind
    }

    /// The proxy's host name or IP literal (IPv6 without brackets).
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The proxy's port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `host:port` (`[v6]:port`), as errors name the proxy.
    pub fn addr(&self) -> String {
        join_host_port(&self.host, self.port)
    }

    /// The credentials, if any.
    pub(crate) fn auth(&self) -> Option<(&str, &str)> {
        self.auth.as_ref().map(|(u, p)| (u.as_str(), p.as_str()))
    }

    /// Whether the connector must resolve `host` itself and give [`tunnel`](Self::tunnel)
    /// an address: a host name through a `socks5://` proxy.
    pub(crate) fn resolves_here(&self, host: &str) -> bool {
        self.kind == ProxyKind::Socks5 && bare_host(host).parse::<std::net::IpAddr>().is_err()
    }

    /// What to ask the proxy to connect to, in turn: `host` itself, or, when the name
    /// was resolved here ([`resolves_here`](Self::resolves_here)), each of `resolved`
    /// (their IP addresses, once each, in the resolver's order). A tunnel refused for
    /// one address ([`ProxyErrorKind::tries_next_address`]) goes on with the next, as a
    /// direct connection tries each address.
    pub(crate) fn tunnel_targets(
        &self,
        host: &str,
        resolved: Option<&[std::net::SocketAddr]>,
    ) -> Vec<String> {
        match resolved {
            Some(addrs) if !addrs.is_empty() => {
                let mut ips: Vec<std::net::IpAddr> = Vec::with_capacity(addrs.len());
                for a in addrs {
                    if !ips.contains(&a.ip()) {
                        ips.push(a.ip());
                    }
                }
                ips.iter().map(ToString::to_string).collect()
            }
            _ => vec![host.to_owned()],
        }
    }

    /// The handshake that opens a tunnel through this proxy to `host:port` (for a
    /// `socks5://` proxy, `host` is the address the connector resolved: see
    /// [`resolves_here`](Self::resolves_here)).
    pub(crate) fn tunnel(&self, host: &str, port: u16) -> tunnel::Tunnel {
        match self.kind {
            ProxyKind::Http => tunnel::Tunnel::http_connect(host, port, self.auth()),
            ProxyKind::Socks5 | ProxyKind::Socks5h => {
                tunnel::Tunnel::socks5(bare_host(host), port, self.auth())
            }
        }
    }

    /// A [`ProxyError`] naming this proxy and the target `host:port`.
    pub(crate) fn error(&self, kind: ProxyErrorKind, host: &str, port: u16) -> ProxyError {
        ProxyError::new(self.addr(), self.kind, kind).for_target(host, port)
    }
}

/// Builder setters for proxies (`self.$field: Option<ProxyRules>`), shared by the
/// client builders.
macro_rules! proxy_options {
    ($ty:ty, $($field:ident).+) => {
        impl $ty {
            /// Connect through `proxy` (HTTP `CONNECT` or SOCKS5), for every target
            /// (default: no proxy; the environment is not read unless
            /// [`proxy_from_env`](Self::proxy_from_env) says so).
            ///
            /// ```
            /// use tickwire::proxy::Proxy;
            ///
            /// // The same setter on every client builder (ws and rest, blocking and tokio):
            /// let ws = tickwire::ws::Client::builder().proxy(Proxy::http("http://proxy.internal:3128")?);
            /// let rest = tickwire::rest::Client::builder().proxy(Proxy::socks5("socks5://127.0.0.1:1080")?);
            /// # Ok::<(), Box<dyn std::error::Error>>(())
            /// ```
            pub fn proxy(mut self, proxy: $crate::proxy::Proxy) -> Self {
                self.$($field).+ = Some($crate::proxy::ProxyRules::all(proxy));
                self
            }

            /// Take the proxy from `HTTPS_PROXY` / `HTTP_PROXY` / `ALL_PROXY`, except
            /// for the targets of `NO_PROXY` (and the lowercase forms), read now
            /// ([`ProxyRules::from_env`](crate::proxy::ProxyRules::from_env)). Unset
            /// variables mean a direct connection; a value that is not a proxy URL is
            /// an error.
            pub fn proxy_from_env(mut self) -> Result<Self, $crate::proxy::ProxyUrlError> {
                self.$($field).+ = Some($crate::proxy::ProxyRules::from_env()?);
                Ok(self)
            }

            /// Which proxy serves which target, in full
            /// ([`ProxyRules`](crate::proxy::ProxyRules); `None`: connect directly).
            pub fn proxy_rules(mut self, rules: Option<$crate::proxy::ProxyRules>) -> Self {
                self.$($field).+ = rules;
                self
            }
        }
    };
}

pub(crate) use proxy_options;

/// A host without the brackets of an IPv6 literal.
fn bare_host(host: &str) -> &str {
    host.strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host)
}

/// `host:port`, IPv6 in brackets.
pub(crate) fn join_host_port(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// `host[:port]` or `[v6][:port]`; `None` for an empty host or a bad port.
pub(crate) fn split_host_port(s: &str, default_port: u16) -> Option<(String, u16)> {
    let (host, port) = if let Some(rest) = s.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        match after {
            "" => (host, None),
            p => (host, Some(p.strip_prefix(':')?)),
        }
    } else {
        match s.rsplit_once(':') {
            Some((h, p)) if !h.contains(':') => (h, Some(p)),
            Some(_) => return None,
            None => (s, None),
        }
    };
    if host.is_empty() {
        return None;
    }
    let port = match port {
        None => default_port,
        Some(p) => p.parse().ok()?,
    };
    Some((host.to_owned(), port))
}

/// Decode `%XX` escapes (the codec's decoder); `None` on a bad escape or bytes that are
/// not UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    let mut out = vec![0u8; s.len()];
    let n = tickwire_codec::http::percent::decode_into(s.as_bytes(), &mut out)?;
    out.truncate(n);
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tunnel_targets_are_each_address_once_or_the_name() {
        let local = Proxy::socks5("socks5://127.0.0.1:1080").unwrap();
        let addrs: Vec<std::net::SocketAddr> = ["[::1]:80", "127.0.0.1:80", "[::1]:80"]
            .iter()
            .map(|a| a.parse().unwrap())
            .collect();
        assert_eq!(
            local.tunnel_targets("localhost", Some(&addrs)),
            ["::1", "127.0.0.1"]
        );
        assert_eq!(local.tunnel_targets("h", None), ["h"]);
    }

    /// `socks5://` resolves names here (the connector hands the tunnel an address),
    /// `socks5h://` sends them; IP literals are sent as addresses by both.
    #[test]
    fn who_resolves_the_target() {
        let local = Proxy::socks5("socks5://127.0.0.1:1080").unwrap();
        let remote = Proxy::socks5("socks5h://127.0.0.1:1080").unwrap();
        assert!(local.resolves_here("example.com"));
        assert!(!local.resolves_here("10.0.0.1"));
        assert!(!local.resolves_here("[::1]"));
        assert!(!remote.resolves_here("example.com"));
        assert!(
            !Proxy::http("http://p:1")
                .unwrap()
                .resolves_here("example.com")
        );
    }

    #[test]
    fn parses_http_and_socks_urls() {
        let p = Proxy::http("http://user:p%40ss@127.0.0.1:8888/").unwrap();
        assert_eq!(p.kind(), ProxyKind::Http);
        assert_eq!(p.addr(), "127.0.0.1:8888");
        assert_eq!(p.auth(), Some(("user", "p@ss")));
        let p = Proxy::socks5("socks5h://[::1]").unwrap();
        assert_eq!(
            (p.kind(), p.host(), p.port()),
            (ProxyKind::Socks5h, "::1", 1080)
        );
        assert_eq!(p.addr(), "[::1]:1080");
        assert_eq!(p.auth(), None);
        let p = Proxy::parse("proxy.corp:3128").unwrap();
        assert_eq!((p.kind(), p.port()), (ProxyKind::Http, 3128));
        assert_eq!(
            Proxy::parse("SOCKS5://h:9").unwrap().kind(),
            ProxyKind::Socks5
        );
        assert_eq!(
            Proxy::parse("SOCKS5H://h:9").unwrap().kind(),
            ProxyKind::Socks5h
        );
        assert_eq!(Proxy::socks5("h:9").unwrap().kind(), ProxyKind::Socks5);
        assert!(Proxy::http("socks5h://h:1").is_err());
        assert!(Proxy::socks5("http://h:1").is_err());
        // The password never shows in Debug.
        let p = Proxy::http("http://u:secret@h:1").unwrap();
        assert!(!format!("{p:?}").contains("secret"));
    }

    #[test]
    fn refuses_bad_urls() {
        assert!(matches!(
            Proxy::http("socks5://h:1"),
            Err(ProxyUrlError::Scheme(_))
        ));
        assert!(matches!(
            Proxy::parse("https://h:1"),
            Err(ProxyUrlError::Scheme(_))
        ));
        for bad in [
            "http://",
            "http://h:x",
            "http://h:70000",
            "http://u:%zz@h",
            "::1:80",
        ] {
            assert!(
                matches!(Proxy::parse(bad), Err(ProxyUrlError::Malformed(_))),
                "{bad}"
            );
        }
    }
}
