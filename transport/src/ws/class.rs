//! [`Error::class`]: each WebSocket error variant's meaning for its connection
//! (fatal, refused, setup), one exhaustive match.

use super::error::Error;
use crate::error::ErrorClass;

impl Error {
    /// What this error means for the connection: [`ErrorClass::Fatal`] (the connection
    /// is gone: `Io`, `Tls`, `Protocol`, `ConnectionLost`, `DeadPeer`, `CloseTimeout`,
    /// `Handshake`, `HandshakeTimeout`, `AlreadyClosed`, `Shutdown`), [`ErrorClass::Refused`] (the
    /// call was refused, the connection is unchanged: `Backpressure`, `ReadTimeout`,
    /// `WriteTimeout`, `Encode`, `MessageTooLarge`, `HandshakeInProgress`) or
    /// [`ErrorClass::Setup`] (no connection was made: `Url`, `Resolve`, `Connect`,
    /// `ConnectTimeout`, `Proxy`, `Entropy`, `TlsDisabled`).
    ///
    /// ```
    /// # let (mut client, mut server) = tickwire::ws::doc_pair()?;
    /// use tickwire::ws::{CloseCode, Error, ErrorClass};
    ///
    /// // A ping payload over 125 bytes is refused; the connection goes on.
    /// let e = client.send_ping(&[0; 126]).unwrap_err();
    /// assert_eq!(e.class(), ErrorClass::Refused);
    /// client.send_text("still open")?;
    ///
    /// // The peer closes: after the close, a send is fatal.
    /// server.close(CloseCode::NORMAL, "")?;
    /// while client.recv()?.is_some() {}
    /// assert!(client.send_text("late").unwrap_err().is_fatal());
    /// # Ok::<(), tickwire::ws::Error>(())
    /// ```
    pub fn class(&self) -> ErrorClass {
        match self {
            Error::Io { .. }
            | Error::Protocol(_)
            | Error::ConnectionLost
            | Error::DeadPeer
            | Error::CloseTimeout
            | Error::Handshake { .. }
            | Error::HandshakeTimeout { .. }
            | Error::AlreadyClosed
            | Error::Shutdown => ErrorClass::Fatal,
            #[cfg(feature = "tls")]
            Error::Tls { .. } => ErrorClass::Fatal,
            Error::Backpressure
            | Error::ReadTimeout
            | Error::WriteTimeout
            | Error::Encode(_)
            | Error::MessageTooLarge { .. }
            | Error::HandshakeInProgress => ErrorClass::Refused,
            Error::Url(_)
            | Error::Resolve { .. }
            | Error::Connect { .. }
            | Error::ConnectTimeout { .. }
            | Error::Proxy(_)
            | Error::Entropy(_)
            | Error::TlsDisabled => ErrorClass::Setup,
        }
    }

    /// This error again, for a later call on the connection it failed (errors are not
    /// `Clone`: an I/O error is rebuilt from its kind and text).
    pub(crate) fn again(&self) -> Error {
        match self {
            Error::Io { peer, error } => Error::Io {
                peer: peer.clone(),
                error: std::io::Error::new(error.kind(), error.to_string()),
            },
            #[cfg(feature = "tls")]
            Error::Tls { peer, error } => Error::Tls {
                peer: peer.clone(),
                error: error.clone(),
            },
            Error::Protocol(e) => Error::Protocol(*e),
            Error::ConnectionLost => Error::ConnectionLost,
            Error::DeadPeer => Error::DeadPeer,
            Error::CloseTimeout => Error::CloseTimeout,
            Error::Handshake { peer, error } => Error::Handshake {
                peer: peer.clone(),
                error: *error,
            },
            Error::HandshakeTimeout { peer } => Error::HandshakeTimeout { peer: peer.clone() },
            Error::Shutdown => Error::Shutdown,
            _ => Error::AlreadyClosed,
        }
    }

    crate::error::class_predicates! {
        /// The connection is gone ([`ErrorClass::Fatal`]): connect again.
        ///
        /// ```
        /// # let (mut client, mut server) = tickwire::ws::doc_pair()?;
        /// drop(server); // the peer goes away without a close handshake
        /// let e = loop {
        ///     if let Err(e) = client.recv() {
        ///         break e;
        ///     }
        /// };
        /// assert!(e.is_fatal());
        /// # Ok::<(), tickwire::ws::Error>(())
        /// ```
        fatal;
        /// The call was refused and the connection is unchanged ([`ErrorClass::Refused`]):
        /// try again later or with other arguments.
        ///
        /// ```
        /// # let (mut client, _server) = tickwire::ws::doc_pair()?;
        /// assert!(client.send_pong(&[0; 200]).unwrap_err().is_refused()); // over 125 bytes
        /// # Ok::<(), tickwire::ws::Error>(())
        /// ```
        refused;
        /// No connection was made ([`ErrorClass::Setup`]): fix the setting it names, or
        /// connect again later.
        ///
        /// ```
        /// let e = tickwire::ws::Client::connect("http://not-a-websocket-url/").unwrap_err();
        /// assert!(e.is_setup());
        /// ```
        setup;
    }
}

#[cfg(test)]
mod tests {
    use std::io;

    use tickwire_codec::ws::Error as WsError;
    use tickwire_codec::ws::handshake::HandshakeError;

    use super::*;

    /// One value of every variant, with its class written out independently of
    /// [`Error::class`] (adding a variant fails to compile in `class` until it is
    /// classified, and this list should grow with it).
    fn every_variant() -> Vec<(Error, ErrorClass)> {
        let io = || io::Error::from(io::ErrorKind::ConnectionReset);
        #[cfg_attr(not(feature = "tls"), allow(unused_mut))]
        let mut all = vec![
            (Error::io(io()), ErrorClass::Fatal),
            (Error::Protocol(WsError::InvalidUtf8), ErrorClass::Fatal),
            (Error::ConnectionLost, ErrorClass::Fatal),
            (Error::DeadPeer, ErrorClass::Fatal),
            (Error::CloseTimeout, ErrorClass::Fatal),
            (
                Error::from(HandshakeError::MissingUpgrade),
                ErrorClass::Fatal,
            ),
            (Error::handshake_timeout(), ErrorClass::Fatal),
            (Error::AlreadyClosed, ErrorClass::Fatal),
            (Error::Shutdown, ErrorClass::Fatal),
            (Error::Backpressure, ErrorClass::Refused),
            (Error::ReadTimeout, ErrorClass::Refused),
            (Error::WriteTimeout, ErrorClass::Refused),
            (
                Error::Encode(tickwire_codec::ws::EncodeError::ControlPayloadTooLarge),
                ErrorClass::Refused,
            ),
            (
                Error::MessageTooLarge {
                    len: 2,
                    capacity: 1,
                },
                ErrorClass::Refused,
            ),
            (Error::HandshakeInProgress, ErrorClass::Refused),
            (
                Error::Url(crate::ws::Url::parse("http://x/").unwrap_err()),
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
                    "127.0.0.1:1080".into(),
                    crate::proxy::ProxyKind::Socks5,
                    crate::proxy::ProxyErrorKind::Closed,
                )),
                ErrorClass::Setup,
            ),
            (
                Error::Entropy(getrandom::Error::UNSUPPORTED),
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
                | Error::Entropy(_)
                | Error::ConnectTimeout { .. }
                | Error::HandshakeTimeout { .. }
                | Error::Handshake { .. }
                | Error::HandshakeInProgress
                | Error::Protocol(_)
                | Error::Encode(_)
                | Error::MessageTooLarge { .. }
                | Error::Backpressure
                | Error::ReadTimeout
                | Error::WriteTimeout
                | Error::CloseTimeout
                | Error::ConnectionLost
                | Error::DeadPeer
                | Error::AlreadyClosed
                | Error::Shutdown => {}
                #[cfg(feature = "tls")]
                Error::Tls { .. } => {}
            }
        }
        let variants = 22 + usize::from(cfg!(feature = "tls"));
        crate::error::assert_every_variant(&all, variants, |e| {
            (e.class(), [e.is_fatal(), e.is_refused(), e.is_setup()])
        });
    }
}
