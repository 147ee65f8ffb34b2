//! `http://` and `https://` base URLs: scheme, host, port and base path. Parsed by the
//! same rule as WebSocket URLs (`crate::url`); the errors are REST's own ([`UrlError`]).

use std::fmt;

/// Why a REST URL was refused.
///
/// ```
/// use tickwire::rest::{Client, Error, UrlError};
///
/// let e = Client::builder().build("ftp://example.com").unwrap_err();
/// assert!(matches!(e, Error::Url(UrlError::Scheme)));
/// assert_eq!(UrlError::Scheme.to_string(), "scheme must be http:// or https://");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum UrlError {
    /// The scheme is not `http` or `https`.
    Scheme,
    /// No host, or a host with characters a host cannot have.
    Host,
    /// A port that is not a number from 0 to 65535.
    Port,
    /// User information (`user@host`) is not allowed.
    UserInfo,
    /// A fragment (`#...`) is not allowed.
    Fragment,
    /// The path contains whitespace or control characters.
    Path,
    /// A base URL carries no query: give query pairs to each request
    /// ([`RequestBuilder::query`](super::RequestBuilder::query)).
    Query,
}

impl fmt::Display for UrlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            UrlError::Scheme => "scheme must be http:// or https://",
            UrlError::Host => "missing or invalid host",
            UrlError::Port => "invalid port",
            UrlError::UserInfo => "user information is not allowed",
            UrlError::Fragment => "fragments are not allowed",
            UrlError::Path => "invalid characters in path",
            UrlError::Query => {
                "a base URL cannot carry a query: add query pairs to each request instead"
            }
        })
    }
}

impl std::error::Error for UrlError {}

crate::url::url_error_from_fault!(UrlError);

/// A parsed base URL of a REST endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpUrl {
    /// `https://` (TLS) rather than `http://`.
    pub secure: bool,
    /// Host name or IP literal, IPv6 without its brackets.
    pub host: String,
    /// Port: explicit, or 80 (`http`) / 443 (`https`).
    pub port: u16,
    /// The path after the authority, `/` when there is none: the base path every
    /// request's path is appended to.
    pub path: String,
}

impl HttpUrl {
    /// Parse `http://host[:port][/path]` or the `https://` form (no query, no fragment).
    pub fn parse(url: &str) -> Result<HttpUrl, UrlError> {
        let p = crate::url::parse(url, "http", "https").map_err(UrlError::from)?;
        if p.resource.contains('?') {
            return Err(UrlError::Query);
        }
        Ok(HttpUrl {
            secure: p.secure,
            host: p.host,
            port: p.port,
            path: p.resource,
        })
    }

    /// The `Host` header value: the host (IPv6 in brackets) and the port when it is not
    /// the scheme's default.
    pub fn host_header(&self) -> String {
        crate::url::host_header(&self.host, self.port, self.secure)
    }

    /// `http[s]://host[:port]` + `target` (a request target): the URL an error names.
    pub(crate) fn display(&self, target: &str) -> String {
        let scheme = if self.secure { "https" } else { "http" };
        crate::url::display(scheme, &self.host, self.port, self.secure, target)
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
        assert_eq!(
            HttpUrl::parse("http://h/a?x=1").unwrap_err(),
            UrlError::Query
        );
        assert_eq!(HttpUrl::parse("http://h?x").unwrap_err(), UrlError::Query);
        assert_eq!(
            HttpUrl::parse("http://h/#f").unwrap_err(),
            UrlError::Fragment
        );
    }

    /// REST says which schemes it takes (not WebSocket's).
    #[test]
    fn scheme_error_names_http() {
        for url in ["ftp://h", "ws://h", "h:80"] {
            let e = HttpUrl::parse(url).unwrap_err();
            assert_eq!(e, UrlError::Scheme, "{url}");
            assert_eq!(e.to_string(), "scheme must be http:// or https://");
        }
    }
}
