//! [`Error::class`]: each REST error variant's meaning for the client's connection
//! (fatal, refused, setup), one exhaustive match.

use super::error::Error;
use crate::error::ErrorClass;

impl Error {
    /// What this error means for the client's connection: [`ErrorClass::Fatal`] (the
    /// connection was dropped; the client's next call connects again: `Io`, `Tls`,
    /// `ReadTimeout`, `WriteTimeout`, `ConnectionLost`, `Http`, `RequestTimeout`),
    /// [`ErrorClass::Refused`] (nothing was sent and the connection is unchanged:
    /// `Build`, `RequestTooLarge`, `PoolExhausted`) or [`ErrorClass::Setup`] (no
    /// connection was made: `Url`, `Resolve`, `Connect`, `ConnectTimeout`, `Proxy`,
    /// `TlsDisabled`).
    ///
    /// Whether a fatal error may be retried is the request's business: an idempotent
    /// request may be sent again; for a `POST` the server may or may not have acted on
    /// it (see [`Error::ConnectionLost`]).
    ///
    /// ```
    /// # let server = tickwire::rest::doc_server();
    /// use tickwire::rest::{Client, ErrorClass};
    ///
    /// let mut client = Client::builder().request_buffer(256).connect(&format!("http://{server}/"))?;
    /// // A request larger than the request buffer is refused before anything is sent.
    /// let e = client.post("/order").json_bytes(&[b' '; 1024]).send().unwrap_err();
    /// assert_eq!(e.class(), ErrorClass::Refused);
    /// assert_eq!(client.get("/time").send()?.status(), 200); // the connection goes on
    ///
    /// // Nothing listens on port 9.
    /// let e = Client::connect("http://127.0.0.1:9/").unwrap_err();
    /// assert_eq!(e.class(), ErrorClass::Setup);
    /// # Ok::<(), tickwire::rest::Error>(())
    /// ```
    pub fn class(&self) -> ErrorClass {
        match self {
            Error::Io { .. }
            | Error::ReadTimeout { .. }
            | Error::WriteTimeout { .. }
            | Error::ConnectionLost { .. }
            | Error::Http { .. }
            | Error::RequestTimeout { .. } => ErrorClass::Fatal,
            #[cfg(feature = "tls")]
            Error::Tls { .. } => ErrorClass::Fatal,
            Error::Build(_) | Error::RequestTooLarge { .. } | Error::PoolExhausted => {
                ErrorClass::Refused
            }
            Error::Url(_)
            | Error::Resolve { .. }
            | Error::Connect { .. }
            | Error::ConnectTimeout { .. }
            | Error::Proxy(_)
            | Error::TlsDisabled => ErrorClass::Setup,
        }
    }

    crate::error::class_predicates! {
        /// The connection was dropped ([`ErrorClass::Fatal`]); the client's next call
        /// connects again.
        ///
        /// ```
        /// use tickwire::rest::{Error, Method};
        ///
        /// let e = Error::ReadTimeout { method: Method::Get, url: "http://127.0.0.1/x".into() };
        /// assert!(e.is_fatal());
        /// ```
        fatal;
        /// The call was refused, nothing was sent and the connection is unchanged
        /// ([`ErrorClass::Refused`]).
        ///
        /// ```
        /// assert!(tickwire::rest::Error::PoolExhausted.is_refused());
        /// ```
        refused;
        /// No connection was made ([`ErrorClass::Setup`]): fix the setting it names, or try
        /// again later.
        ///
        /// ```
        /// let e = tickwire::rest::Client::connect("ftp://127.0.0.1/").unwrap_err();
        /// assert!(e.is_setup());
        /// ```
        setup;
    }
}

#[cfg(test)]
mod tests {
    use std::io;
    use std::time::Duration;

    use tickwire_codec::http::{BuildError, Error as HttpError, Method};

    use super::*;

    /// One value of every variant, with its class written out independently of
    /// [`Error::class`].
    fn every_variant() -> Vec<(Error, ErrorClass)> {
        let io = || io::Error::from(io::ErrorKind::ConnectionReset);
        let url = || "http://127.0.0.1/x".to_owned();
        let method = Method::Post;
        #[cfg_attr(not(feature = "tls"), allow(unused_mut))]
        let mut all = vec![
            (Error::io(io()), ErrorClass::Fatal),
            (Error::ReadTimeout { method, url: url() }, ErrorClass::Fatal),
            (
                Error::WriteTimeout { method, url: url() },
                ErrorClass::Fatal,
            ),
            (
                Error::ConnectionLost { method, url: url() },
                ErrorClass::Fatal,
            ),
            (
                Error::Http {
                    method,
                    url: url(),
                    error: HttpError::UnexpectedEof,
                },
                ErrorClass::Fatal,
            ),
            (
                Error::RequestTimeout {
                    method,
                    url: url(),
                    after: Duration::from_secs(1),
                },
                ErrorClass::Fatal,
            ),
            (Error::Build(BuildError::BufferFull), ErrorClass::Refused),
            (Error::RequestTooLarge { buffer: 64 }, ErrorClass::Refused),
            (Error::PoolExhausted, ErrorClass::Refused),
            (
                Error::Url(crate::rest::HttpUrl::parse("ftp://x/").unwrap_err()),
                ErrorClass::Setup,
            ),
            (
                Error::Resolve {
                    host: "h".into(),
                    source: None,
                },
                ErrorClass::Setup,
            ),
            (
                Error::Connect {
                    addr: "127.0.0.1:9".parse().unwrap(),
                    source: io(),
                },
                ErrorClass::Setup,
            ),
            (
                Error::ConnectTimeout {
                    target: "h:1".into(),
                },
                ErrorClass::Setup,
            ),
            (
                Error::Proxy(crate::proxy::ProxyError::new(
                    "127.0.0.1:3128".into(),
                    crate::proxy::ProxyKind::Http,
                    crate::proxy::ProxyErrorKind::Closed,
                )),
                ErrorClass::Setup,
            ),
            (Error::TlsDisabled, ErrorClass::Setup),
        ];
        #[cfg(feature = "tls")]
        all.push((
            Error::tls(crate::tls::TlsError::UnexpectedEof),
            ErrorClass::Fatal,
        ));
        all
    }

    #[test]
    fn every_variant_is_classified() {
        let all = every_variant();
        for (e, _) in &all {
            // Exhaustive: a new variant must be added to the list above.
            match e {
                Error::Io { .. }
                | Error::Url(_)
                | Error::TlsDisabled
                | Error::Resolve { .. }
                | Error::Connect { .. }
                | Error::Proxy(_)
                | Error::ConnectTimeout { .. }
                | Error::ReadTimeout { .. }
                | Error::WriteTimeout { .. }
                | Error::ConnectionLost { .. }
                | Error::Http { .. }
                | Error::Build(_)
                | Error::PoolExhausted
                | Error::RequestTimeout { .. }
                | Error::RequestTooLarge { .. } => {}
                #[cfg(feature = "tls")]
                Error::Tls { .. } => {}
            }
        }
        let variants = 15 + usize::from(cfg!(feature = "tls"));
        crate::error::assert_every_variant(&all, variants, |e| {
            (e.class(), [e.is_fatal(), e.is_refused(), e.is_setup()])
        });
    }
}
