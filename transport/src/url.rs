//! The one URL rule shared by WebSocket (`ws://`, `wss://`) and REST (`http://`,
//! `https://`) URLs: scheme, authority (host, IPv6 literal in brackets, port), path and
//! query. The two sides differ only in the scheme names they accept and in their error
//! types ([`crate::ws::UrlError`], [`crate::rest::UrlError`]), which say which schemes
//! they take.
//!
//! Why not the `url` crate (2.5.8): it parses every scheme the WHATWG URL standard
//! knows, and its host handling (IDNA) brings `idna` and ICU4X: 33 crates in all, 3 of
//! them proc-macros, for a std-only parse. Ours takes only the four schemes we speak,
//! ASCII host names, IP literals, a port, a path and a query, refuses user info and
//! fragments with a typed error that names what to change (the errors `url` gives are not
//! about WebSocket or REST URLs), and is ~190 lines: a URL is parsed once per connection
//! or client, so speed does not decide it; the dependency tree does.

use std::fmt::Write as _;
use std::net::Ipv6Addr;

/// A URL split by [`parse`].
#[derive(Debug)]
pub(crate) struct Parts {
    /// The secure scheme (`wss`, `https`) rather than the plain one.
    pub secure: bool,
    /// Host name or IP literal, IPv6 without its brackets.
    pub host: String,
    /// Port: explicit, or 80 (plain) / 443 (secure).
    pub port: u16,
    /// Path and query, `/` when the URL has none.
    pub resource: String,
}

/// What [`parse`] found wrong; each side's `UrlError` has a variant of the same name
/// that says it in its own words (documented there).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fault {
    Scheme,
    Host,
    Port,
    UserInfo,
    Fragment,
    Path,
}

/// `From<Fault>` for a side's `UrlError`: each fault is the variant of the same name.
macro_rules! url_error_from_fault {
    ($error:ty) => {
        impl From<$crate::url::Fault> for $error {
            fn from(f: $crate::url::Fault) -> Self {
                use $crate::url::Fault;
                match f {
                    Fault::Scheme => Self::Scheme,
                    Fault::Host => Self::Host,
                    Fault::Port => Self::Port,
                    Fault::UserInfo => Self::UserInfo,
                    Fault::Fragment => Self::Fragment,
                    Fault::Path => Self::Path,
                }
            }
        }
    };
}
pub(crate) use url_error_from_fault;

/// Parse `scheme://host[:port][/path][?query]`, where `scheme` is `plain` or `secure`
/// (ASCII case-insensitive).
pub(crate) fn parse(url: &str, plain: &str, secure: &str) -> Result<Parts, Fault> {
    let (scheme, rest) = url.split_once("://").ok_or(Fault::Scheme)?;
    let secure = if scheme.eq_ignore_ascii_case(plain) {
        false
    } else if scheme.eq_ignore_ascii_case(secure) {
        true
    } else {
        return Err(Fault::Scheme);
    };
    if rest.contains('#') {
        return Err(Fault::Fragment);
    }
    let split = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, resource) = rest.split_at(split);
    if authority.contains('@') {
        return Err(Fault::UserInfo);
    }
    if !resource.bytes().all(|b| b > b' ' && b != 0x7F) {
        return Err(Fault::Path);
    }
    let resource = match resource.as_bytes().first() {
        None => "/".to_owned(),
        Some(b'?') => format!("/{resource}"),
        Some(_) => resource.to_owned(),
    };
    let (host, port) = split_host_port(authority)?;
    let port = match port {
        None => default_port(secure),
        Some(p) => parse_port(p)?,
    };
    Ok(Parts {
        secure,
        host: host.to_owned(),
        port,
        resource,
    })
}

/// 443 for the secure scheme, 80 for the plain one.
fn default_port(secure: bool) -> u16 {
    if secure { 443 } else { 80 }
}

/// The `Host` header value for `host:port` (IPv6 in brackets), the port left out when
/// it is the scheme's default (443 when `secure`, else 80).
pub(crate) fn host_header(host: &str, port: u16, secure: bool) -> String {
    let mut out = String::with_capacity(host.len() + 8);
    push_authority(&mut out, host, port, secure);
    out
}

/// `scheme://authority` + `resource`: the URL an error names (built only when one is
/// returned).
pub(crate) fn display(scheme: &str, host: &str, port: u16, secure: bool, resource: &str) -> String {
    let mut out = String::with_capacity(scheme.len() + host.len() + resource.len() + 12);
    out.push_str(scheme);
    out.push_str("://");
    push_authority(&mut out, host, port, secure);
    out.push_str(resource);
    out
}

fn push_authority(out: &mut String, host: &str, port: u16, secure: bool) {
    if host.contains(':') {
        let _ = write!(out, "[{host}]");
    } else {
        out.push_str(host);
    }
    if port != default_port(secure) {
        let _ = write!(out, ":{port}");
    }
}

/// Split an authority into host and optional port text; check the host.
fn split_host_port(authority: &str) -> Result<(&str, Option<&str>), Fault> {
    if let Some(inner) = authority.strip_prefix('[') {
        let (v6, after) = inner.split_once(']').ok_or(Fault::Host)?;
        v6.parse::<Ipv6Addr>().map_err(|_| Fault::Host)?;
        return match after {
            "" => Ok((v6, None)),
            _ => match after.strip_prefix(':') {
                Some(p) => Ok((v6, Some(p))),
                None => Err(Fault::Host),
            },
        };
    }
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (authority, None),
    };
    let host_ok = !host.is_empty()
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'%'));
    if !host_ok {
        return Err(Fault::Host);
    }
    Ok((host, port))
}

fn parse_port(p: &str) -> Result<u16, Fault> {
    if p.is_empty() || p.len() > 5 || !p.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Fault::Port);
    }
    p.parse().map_err(|_| Fault::Port)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_rule_two_scheme_sets() {
        let ws = parse("WSS://[::1]:9/a?b", "ws", "wss").unwrap();
        let http = parse("HTTPS://[::1]:9/a?b", "http", "https").unwrap();
        assert_eq!(
            (ws.secure, ws.host, ws.port, ws.resource),
            (http.secure, http.host, http.port, http.resource)
        );
        assert_eq!(parse("http://h", "ws", "wss").unwrap_err(), Fault::Scheme);
        assert_eq!(parse("ws://h", "http", "https").unwrap_err(), Fault::Scheme);
    }

    #[test]
    fn display_names_the_url() {
        assert_eq!(
            display("ws", "::1", 9001, false, "/x?y"),
            "ws://[::1]:9001/x?y"
        );
        assert_eq!(display("https", "h", 443, true, "/"), "https://h/");
        assert_eq!(display("http", "h", 443, false, "/"), "http://h:443/");
    }
}
