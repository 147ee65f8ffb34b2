//! Request methods the REST client sends and the request reader recognises.

/// An HTTP request method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    /// `GET`
    Get,
    /// `POST`
    Post,
    /// `PUT`
    Put,
    /// `DELETE`
    Delete,
    /// `PATCH`
    Patch,
    /// `HEAD`: the response never has a body.
    Head,
}

impl Method {
    /// The method as it appears on the wire.
    #[inline]
    pub const fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Delete => "DELETE",
            Method::Patch => "PATCH",
            Method::Head => "HEAD",
        }
    }

    /// The method named by `token` (case-sensitive, as RFC 9110 §9.1 says).
    #[inline]
    pub fn from_bytes(token: &[u8]) -> Option<Method> {
        Some(match token {
            b"GET" => Method::Get,
            b"POST" => Method::Post,
            b"PUT" => Method::Put,
            b"DELETE" => Method::Delete,
            b"PATCH" => Method::Patch,
            b"HEAD" => Method::Head,
            _ => return None,
        })
    }

    /// Whether the method is idempotent (RFC 9110 §9.2.2): sending the request twice has
    /// the effect of sending it once, so a client may send it again on a new connection
    /// when the first connection failed before any response (GET, HEAD, PUT, DELETE; not
    /// POST, PATCH).
    ///
    /// ```
    /// use tickwire_codec::http::Method;
    /// assert!(Method::Delete.is_idempotent() && !Method::Post.is_idempotent());
    /// ```
    #[inline]
    pub const fn is_idempotent(self) -> bool {
        matches!(
            self,
            Method::Get | Method::Head | Method::Put | Method::Delete
        )
    }

    /// Whether a request with this method and no body should still say
    /// `Content-Length: 0` (servers answer 411 otherwise).
    #[inline]
    pub const fn expects_body(self) -> bool {
        matches!(self, Method::Post | Method::Put | Method::Patch)
    }
}

impl core::fmt::Display for Method {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_bytes() {
        for m in [
            Method::Get,
            Method::Post,
            Method::Put,
            Method::Delete,
            Method::Patch,
            Method::Head,
        ] {
            assert_eq!(Method::from_bytes(m.as_str().as_bytes()), Some(m));
        }
        assert_eq!(Method::from_bytes(b"get"), None);
        assert_eq!(Method::from_bytes(b"OPTIONS"), None);
        assert!(Method::Post.expects_body() && !Method::Get.expects_body());
    }
}
