//! Which proxy serves which target: [`ProxyRules`] (one proxy for everything, or the
//! conventional environment variables) and [`NoProxy`] (the targets that go direct).

use std::net::IpAddr;

use super::{Proxy, ProxyUrlError};

/// Targets that bypass the proxy: the `NO_PROXY` list.
///
/// Comma- or space-separated entries: `*` (everything), a host name that matches
/// itself and its subdomains (`example.com` and `.example.com` both match
/// `api.example.com`; a leading `*.` is read as `.`), an IP address, or a CIDR block
/// (`127.0.0.0/8`, `::1/128`). Names compare without case; an entry may end in `:port`
/// to match that port only.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NoProxy {
    all: bool,
    entries: Vec<Entry>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Entry {
    Name(String, Option<u16>),
    Net(IpAddr, u8, Option<u16>),
}

impl NoProxy {
    /// Parse a `NO_PROXY` value (entries that are not understood are ignored).
    pub fn parse(list: &str) -> NoProxy {
        let mut np = NoProxy::default();
        for item in list.split([',', ' ', '\t']).map(str::trim) {
            if item.is_empty() {
                continue;
            }
            if item == "*" {
                np.all = true;
                continue;
            }
            if let Some(e) = Entry::parse(item) {
                np.entries.push(e);
            }
        }
        np
    }

    /// Whether `host:port` goes direct.
    pub fn matches(&self, host: &str, port: u16) -> bool {
        if self.all {
            return true;
        }
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let ip = host.parse::<IpAddr>().ok();
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        self.entries.iter().any(|e| match e {
            Entry::Name(name, p) => {
                p.is_none_or(|p| p == port)
                    && (host == *name
                        || host
                            .strip_suffix(name.as_str())
                            .is_some_and(|pre| pre.ends_with('.')))
            }
            Entry::Net(net, bits, p) => {
                p.is_none_or(|p| p == port) && ip.is_some_and(|ip| in_net(ip, *net, *bits))
            }
        })
    }
}

impl Entry {
    fn parse(item: &str) -> Option<Entry> {
        if let Some((net, bits)) = item.split_once('/') {
            let net: IpAddr = net
                .trim_start_matches('[')
                .trim_end_matches(']')
                .parse()
                .ok()?;
            let bits: u8 = bits.parse().ok()?;
            let max = if net.is_ipv4() { 32 } else { 128 };
            return (bits <= max).then_some(Entry::Net(net, bits, None));
        }
        if let Ok(ip) = item
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>()
        {
            let bits = if ip.is_ipv4() { 32 } else { 128 };
            return Some(Entry::Net(ip, bits, None));
        }
        let (host, port) = super::split_host_port(item, 0)?;
        let port = (port != 0).then_some(port);
        if let Ok(ip) = host.parse::<IpAddr>() {
            let bits = if ip.is_ipv4() { 32 } else { 128 };
            return Some(Entry::Net(ip, bits, port));
        }
        let name = host
            .trim_start_matches("*.")
            .trim_start_matches('.')
            .trim_end_matches('.')
            .to_ascii_lowercase();
        (!name.is_empty()).then_some(Entry::Name(name, port))
    }
}

fn in_net(ip: IpAddr, net: IpAddr, bits: u8) -> bool {
    match (ip, net) {
        (IpAddr::V4(a), IpAddr::V4(n)) => {
            let mask = u32::MAX.checked_shl(32 - u32::from(bits)).unwrap_or(0);
            u32::from(a) & mask == u32::from(n) & mask
        }
        (IpAddr::V6(a), IpAddr::V6(n)) => {
            let mask = u128::MAX.checked_shl(128 - u32::from(bits)).unwrap_or(0);
            u128::from(a) & mask == u128::from(n) & mask
        }
        _ => false,
    }
}

/// Which proxy, if any, carries a connection to a target.
///
/// Set on a builder with `.proxy(..)` (one proxy for every target) or
/// `.proxy_from_env()` ([`ProxyRules::from_env`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProxyRules {
    /// For `ws://` and `http://` targets.
    plain: Option<Proxy>,
    /// For `wss://` and `https://` targets.
    secure: Option<Proxy>,
    no_proxy: NoProxy,
}

impl ProxyRules {
    /// Every target through `proxy`.
    ///
    /// ```
    /// use tickwire::proxy::{NoProxy, Proxy, ProxyRules};
    ///
    /// let rules = ProxyRules::all(Proxy::http("proxy.internal:3128")?)
    ///     .no_proxy(NoProxy::parse("localhost,.internal"));
    /// assert!(rules.for_target("api.exchange.example", 443, true).is_some());
    /// assert!(rules.for_target("gateway.internal", 443, true).is_none()); // direct
    /// let ws = tickwire::ws::Client::builder().proxy_rules(Some(rules));
    /// # Ok::<(), tickwire::proxy::ProxyUrlError>(())
    /// ```
    pub fn all(proxy: Proxy) -> ProxyRules {
        ProxyRules {
            plain: Some(proxy.clone()),
            secure: Some(proxy),
            no_proxy: NoProxy::default(),
        }
    }

    /// The rules of the process environment, read now: `https_proxy` / `HTTPS_PROXY`
    /// for `wss://` and `https://`, `http_proxy` / `HTTP_PROXY` for `ws://` and
    /// `http://`, `all_proxy` / `ALL_PROXY` for either when its own is unset, and
    /// `no_proxy` / `NO_PROXY` for targets that go direct (the lowercase form wins when
    /// both are set, as with curl). A value that is not a proxy URL
    /// ([`Proxy::parse`]) is an error. Each value's scheme picks the protocol, as in
    /// curl: `http://` (or none) for `CONNECT`, `socks5://` for SOCKS5 with target
    /// names resolved here, `socks5h://` for SOCKS5 with names resolved by the proxy
    /// (`ALL_PROXY=socks5h://127.0.0.1:1080`).
    ///
    /// ```
    /// use tickwire::proxy::ProxyRules;
    ///
    /// // HTTPS_PROXY=http://proxy.internal:3128 NO_PROXY=localhost (or none: direct)
    /// let rules = ProxyRules::from_env()?;
    /// let rest = tickwire::rest::Client::builder().proxy_rules(Some(rules));
    /// // The same in one call on any client builder:
    /// let ws = tickwire::ws::Client::builder().proxy_from_env()?;
    /// # Ok::<(), tickwire::proxy::ProxyUrlError>(())
    /// ```
    pub fn from_env() -> Result<ProxyRules, ProxyUrlError> {
        Self::from_vars(|name| std::env::var(name).ok())
    }

    /// [`from_env`](Self::from_env) over any variable source (`var(name)` gives a
    /// variable's value).
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<ProxyRules, ProxyUrlError> {
        let get = |name: &str| {
            var(&name.to_ascii_lowercase())
                .or_else(|| var(name))
                .filter(|v| !v.trim().is_empty())
        };
        let proxy = |name: &str| get(name).map(|v| Proxy::parse(&v)).transpose();
        let all = proxy("ALL_PROXY")?;
        Ok(ProxyRules {
            plain: proxy("HTTP_PROXY")?.or_else(|| all.clone()),
            secure: proxy("HTTPS_PROXY")?.or(all),
            no_proxy: get("NO_PROXY")
                .map(|v| NoProxy::parse(&v))
                .unwrap_or_default(),
        })
    }

    /// Let the targets of `list` (a `NO_PROXY` value) go direct.
    pub fn no_proxy(mut self, list: NoProxy) -> ProxyRules {
        self.no_proxy = list;
        self
    }

    /// The proxy for a connection to `host:port` (`secure`: `wss://` / `https://`);
    /// `None`: connect directly.
    pub fn for_target(&self, host: &str, port: u16, secure: bool) -> Option<&Proxy> {
        let proxy = if secure { &self.secure } else { &self.plain };
        proxy
            .as_ref()
            .filter(|_| !self.no_proxy.matches(host, port))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proxy::ProxyKind;

    fn vars(list: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let list: Vec<(String, String)> = list
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| list.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }

    #[test]
    fn env_picks_by_scheme_with_all_proxy_fallback() {
        let r = ProxyRules::from_vars(vars(&[
            ("HTTPS_PROXY", "http://sec:3128"),
            ("ALL_PROXY", "socks5://all:1080"),
        ]))
        .unwrap();
        assert_eq!(r.for_target("h", 443, true).unwrap().host(), "sec");
        let plain = r.for_target("h", 80, false).unwrap();
        assert_eq!((plain.host(), plain.kind()), ("all", ProxyKind::Socks5));
        // socks5h:// in any of the variables: the proxy resolves the names.
        let r = ProxyRules::from_vars(vars(&[
            ("all_proxy", "socks5h://all:1080"),
            ("HTTPS_PROXY", "socks5://sec:1080"),
        ]))
        .unwrap();
        assert_eq!(
            r.for_target("h", 80, false).unwrap().kind(),
            ProxyKind::Socks5h
        );
        assert_eq!(
            r.for_target("h", 443, true).unwrap().kind(),
            ProxyKind::Socks5
        );
        // Lowercase wins over uppercase.
        let r = ProxyRules::from_vars(vars(&[
            ("http_proxy", "http://lower:1"),
            ("HTTP_PROXY", "http://upper:1"),
        ]))
        .unwrap();
        assert_eq!(r.for_target("h", 80, false).unwrap().host(), "lower");
        assert!(r.for_target("h", 443, true).is_none());
        assert_eq!(
            ProxyRules::from_vars(vars(&[])).unwrap(),
            ProxyRules::default()
        );
        assert!(ProxyRules::from_vars(vars(&[("HTTPS_PROXY", "ftp://x")])).is_err());
    }

    #[test]
    fn no_proxy_bypasses_names_ips_cidrs_ports() {
        let r = ProxyRules::from_vars(vars(&[
            ("ALL_PROXY", "http://p:3128"),
            (
                "no_proxy",
                "localhost, .internal.corp,*.svc, 10.0.0.0/8, ::1, example.org:8443",
            ),
        ]))
        .unwrap();
        for (host, port) in [
            ("localhost", 80),
            ("LOCALHOST.", 80),
            ("a.internal.corp", 443),
            ("internal.corp", 443),
            ("db.svc", 1),
            ("10.1.2.3", 80),
            ("::1", 80),
            ("[::1]", 80),
            ("example.org", 8443),
        ] {
            assert!(r.for_target(host, port, true).is_none(), "{host}:{port}");
        }
        for (host, port) in [
            ("notlocalhost", 80),
            ("internal.corp.evil", 80),
            ("11.0.0.1", 80),
            ("example.org", 443),
            ("127.0.0.1", 80),
        ] {
            assert!(r.for_target(host, port, true).is_some(), "{host}:{port}");
        }
        assert!(NoProxy::parse("*").matches("anything", 1));
    }
}
