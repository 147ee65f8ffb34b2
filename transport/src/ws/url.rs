//! `ws://` and `wss://` URLs (RFC 6455 §3): scheme, host, port and resource name.

use std::fmt;

/// A parsed WebSocket URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Url {
    /// `wss://` (TLS) rather than `ws://`.
    pub secure: bool,
    /// Host name or IP literal, IPv6 without its brackets.
    pub host: String,
    /// Port: explicit, or 80 (`ws`) / 443 (`wss`).
    pub port: u16,
    /// Path and query, `/` when the URL has none (the request target).
    pub resource: String,
}

/// Why a URL was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum UrlError {
    /// The scheme is not `ws` or `wss`.
    Scheme,
    /// No host, or a host with characters a host cannot have.
    Host,
    /// A port that is not a number from 0 to 65535.
    Port,
    /// User information (`user@host`) is not allowed.
    UserInfo,
    /// A fragment (`#...`) is not allowed in a WebSocket URL.
    Fragment,
    /// The path or query contains whitespace or control characters.
    Path,
}

impl fmt::Display for UrlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            UrlError::Scheme => "scheme must be ws:// or wss://",
            UrlError::Host => "missing or invalid host",
            UrlError::Port => "invalid port",
            UrlError::UserInfo => "user information is not allowed",
            UrlError::Fragment => "fragments are not allowed",
            UrlError::Path => "invalid characters in path",
        })
    }
}

impl std::error::Error for UrlError {}

impl Url {
    /// Parse `ws://host[:port][/path][?query]` or the `wss://` form.
    pub fn parse(url: &str) -> Result<Url, UrlError> {
        let p = crate::url::parse(url, "ws", "wss").map_err(UrlError::from)?;
        Ok(Url {
            secure: p.secure,
            host: p.host,
            port: p.port,
            resource: p.resource,
        })
    }

    /// The `Host` header value: the host (IPv6 in brackets) and the port when it is
    /// not the scheme's default.
    pub fn host_header(&self) -> String {
        crate::url::host_header(&self.host, self.port, self.secure)
    }

    /// The URL as an error names it: `ws[s]://host[:port]/resource`.
    pub(crate) fn display(&self) -> String {
        let scheme = if self.secure { "wss" } else { "ws" };
        crate::url::display(scheme, &self.host, self.port, self.secure, &self.resource)
    }
}

crate::url::url_error_from_fault!(UrlError);

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(s: &str) -> (bool, String, u16, String) {
        let u = Url::parse(s).unwrap();
        (u.secure, u.host, u.port, u.resource)
    }

    #[test]
    fn defaults_and_explicit_parts() {
        assert_eq!(
            ok("ws://example.com"),
            (false, "example.com".into(), 80, "/".into())
        );
        assert_eq!(
            ok("wss://example.com"),
            (true, "example.com".into(), 443, "/".into())
        );
        assert_eq!(
            ok("WS://h:9001/a/b?c=d&e"),
            (false, "h".into(), 9001, "/a/b?c=d&e".into())
        );
        assert_eq!(ok("ws://h?x=1"), (false, "h".into(), 80, "/?x=1".into()));
        assert_eq!(
            ok("ws://127.0.0.1:0/"),
            (false, "127.0.0.1".into(), 0, "/".into())
        );
    }

    #[test]
    fn ipv6_literals() {
        assert_eq!(
            ok("ws://[::1]:9002/x"),
            (false, "::1".into(), 9002, "/x".into())
        );
        assert_eq!(
            ok("ws://[fe80::1]"),
            (false, "fe80::1".into(), 80, "/".into())
        );
        assert_eq!(
            Url::parse("ws://[::1]:9/").unwrap().host_header(),
            "[::1]:9"
        );
        assert_eq!(Url::parse("ws://[::1]").unwrap().host_header(), "[::1]");
        assert_eq!(Url::parse("ws://[::1").unwrap_err(), UrlError::Host);
        assert_eq!(Url::parse("ws://[zz]").unwrap_err(), UrlError::Host);
        assert_eq!(Url::parse("ws://[::1]x").unwrap_err(), UrlError::Host);
    }

    #[test]
    fn host_header_omits_default_port() {
        assert_eq!(Url::parse("ws://h:80").unwrap().host_header(), "h");
        assert_eq!(Url::parse("ws://h:81").unwrap().host_header(), "h:81");
        assert_eq!(Url::parse("wss://h:443").unwrap().host_header(), "h");
    }

    #[test]
    fn rejects() {
        assert_eq!(Url::parse("http://h").unwrap_err(), UrlError::Scheme);
        assert_eq!(Url::parse("h:80").unwrap_err(), UrlError::Scheme);
        assert_eq!(Url::parse("ws://").unwrap_err(), UrlError::Host);
        assert_eq!(Url::parse("ws://:80").unwrap_err(), UrlError::Host);
        assert_eq!(Url::parse("ws://h:").unwrap_err(), UrlError::Port);
        assert_eq!(Url::parse("ws://h:65536").unwrap_err(), UrlError::Port);
        assert_eq!(Url::parse("ws://h:+1").unwrap_err(), UrlError::Port);
        assert_eq!(Url::parse("ws://u:p@h").unwrap_err(), UrlError::UserInfo);
        assert_eq!(Url::parse("ws://h/#f").unwrap_err(), UrlError::Fragment);
        assert_eq!(Url::parse("ws://h/a b").unwrap_err(), UrlError::Path);
        assert_eq!(Url::parse("ws://h h/").unwrap_err(), UrlError::Host);
    }
}
