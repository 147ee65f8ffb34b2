//! `http://` and `https://` base URLs: scheme, host, port and base path. Host and port
//! are checked by the same rules as WebSocket URLs ([`crate::ws::Url`]).

use crate::ws::{Url as WsUrl, UrlError};

/// A parsed base URL of a REST endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpUrl {
    /// `https://` (TLS) rather than `http://`.
    pub secure: bool,
    /// Host name or IP literal, IPv6 without its brackets.
    pub host: String,
    /// Port: explicit, or 80 (`http`) / 443 (`https`).
    pub port: u16,
    /// The path (and query) after the authority, `/` when there is none: a base path
    /// for the request writer.
    pub path: String,
}

impl HttpUrl {
    /// Parse `http://host[:port][/path]` or the `https://` form.
    pub fn parse(url: &str) -> Result<HttpUrl, UrlError> {
        let (scheme, rest) = url.split_once("://").ok_or(UrlError::Scheme)?;
        let secure = if scheme.eq_ignore_ascii_case("http") {
            false
        } else if scheme.eq_ignore_ascii_case("https") {
            true
        } else {
            return Err(UrlError::Scheme);
        };
        // Same authority and path rules as ws:// (80) and wss:// (443).
        let ws = WsUrl::parse(&format!("{}://{rest}", if secure { "wss" } else { "ws" }))?;
        Ok(HttpUrl {
            secure,
            host: ws.host,
            port: ws.port,
            path: ws.resource,
        })
    }

    /// The `Host` header value: the host (IPv6 in brackets) and the port when it is not
    /// the scheme's default.
    pub fn host_header(&self) -> String {
        crate::ws::url::host_header(&self.host, self.port, self.secure)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_http_and_https() {
        let u = HttpUrl::parse("http://127.0.0.1:8080/api/v3").unwrap();
        assert_eq!(
            (u.secure, u.host.as_str(), u.port, u.path.as_str()),
            (false, "127.0.0.1", 8080, "/api/v3")
        );
        assert_eq!(u.host_header(), "127.0.0.1:8080");
        let u = HttpUrl::parse("HTTPS://api.example.com").unwrap();
        assert_eq!((u.secure, u.port, u.path.as_str()), (true, 443, "/"));
        assert_eq!(u.host_header(), "api.example.com");
        let u = HttpUrl::parse("http://[::1]/").unwrap();
        assert_eq!((u.host.as_str(), u.port), ("::1", 80));
        assert_eq!(u.host_header(), "[::1]");
    }

    #[test]
    fn rejects() {
        assert_eq!(HttpUrl::parse("ws://h").unwrap_err(), UrlError::Scheme);
        assert_eq!(HttpUrl::parse("h:80").unwrap_err(), UrlError::Scheme);
        assert_eq!(HttpUrl::parse("http://").unwrap_err(), UrlError::Host);
        assert_eq!(
            HttpUrl::parse("http://h:99999").unwrap_err(),
            UrlError::Port
        );
        assert_eq!(
            HttpUrl::parse("http://u@h").unwrap_err(),
            UrlError::UserInfo
        );
        assert_eq!(HttpUrl::parse("http://h/a b").unwrap_err(), UrlError::Path);
    }
}
