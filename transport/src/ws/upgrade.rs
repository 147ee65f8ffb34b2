//! Server-side handshake decisions: the hook a [`ServerBuilder`](super::ServerBuilder)
//! runs on each upgrade request ([`ServerBuilder::on_upgrade`](super::ServerBuilder::on_upgrade))
//! and the [`Decision`] it answers with. The codec writes the answer (the `101`, or the
//! refusal with its status and body); this file only turns an owned decision into the
//! codec's borrowed [`Answer`].

use std::fmt;
use std::sync::Arc;

use tickwire_codec::ws::Answer;
pub use tickwire_codec::ws::handshake::UpgradeRequest;

/// What a server's handshake hook answers an upgrade request with: accept (optionally
/// choosing a subprotocol and adding response headers), or refuse with a status, headers
/// and a body.
///
/// ```
/// use tickwire::ws::Decision;
///
/// let ok = Decision::accept().protocol("v2.feed").header("X-Session", "42");
/// let no = Decision::refuse(401, "missing token").header("WWW-Authenticate", "Bearer");
/// assert!(ok.is_accept() && !no.is_accept());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// `None`: accept; `Some((status, body))`: refuse.
    refuse: Option<(u16, Vec<u8>)>,
    protocol: Option<String>,
    headers: Vec<(String, String)>,
}

impl Decision {
    /// Accept the request: the builder's headers go out, and its subprotocol choice
    /// unless [`protocol`](Self::protocol) picks one.
    ///
    /// ```
    /// use tickwire::ws::{Client, Decision, Server};
    ///
    /// let mut server = Server::builder()
    ///     .on_upgrade(|req| match req.path {
    ///         "/feed" => Decision::accept().header("X-Session", "42"),
    ///         _ => Decision::refuse(404, "no such feed"),
    ///     })
    ///     .bind("127.0.0.1:0")?;
    /// let url = format!("ws://{}/feed", server.local_addr()?);
    /// std::thread::spawn(move || server.accept()?.handshake());
    /// let ws = Client::connect(&url)?;
    /// # Ok::<(), tickwire::ws::Error>(())
    /// ```
    pub fn accept() -> Self {
        Decision {
            refuse: None,
            protocol: None,
            headers: Vec::new(),
        }
    }

    /// Refuse the request with `status` (300 to 599) and `body` (sent with its
    /// `Content-Length`, then the connection closes). The server's connection fails with
    /// `Error::Handshake(HandshakeError::Refused(status))`; a client sees the status in
    /// its `HandshakeError::BadStatus`.
    pub fn refuse(status: u16, body: impl Into<Vec<u8>>) -> Self {
        Decision {
            refuse: Some((status, body.into())),
            protocol: None,
            headers: Vec::new(),
        }
    }

    /// Accept with this subprotocol; it must be one the client offered
    /// ([`UpgradeRequest::protocols`]), else the request is refused with a 400.
    pub fn protocol(mut self, protocol: &str) -> Self {
        self.protocol = Some(protocol.to_owned());
        self
    }

    /// Add a response header (to the `101`, or to the refusal). Names and values are
    /// validated by the codec; a bad one turns the answer into a 400.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Whether this accepts the request.
    pub fn is_accept(&self) -> bool {
        self.refuse.is_none()
    }
}

/// A server's handshake hook.
pub(crate) type Hook = Arc<dyn Fn(&UpgradeRequest<'_>) -> Decision + Send + Sync>;

/// The hook of a builder, with a `Debug` that says whether there is one.
#[derive(Clone, Default)]
pub(crate) struct OnUpgrade(pub Option<Hook>);

impl fmt::Debug for OnUpgrade {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() {
            "Some(hook)"
        } else {
            "None"
        })
    }
}

/// The codec's answer for `decision` (borrowing it and its header list), accepting with
/// `fallback` as the subprotocol when the decision picks none, and `builder_headers`
/// before the decision's own.
pub(crate) fn answer<'a>(
    decision: &'a Decision,
    fallback: Option<&'a str>,
    headers: &'a mut Vec<(&'a str, &'a str)>,
    builder_headers: &'a [(String, String)],
) -> Answer<'a> {
    match &decision.refuse {
        Some((status, body)) => {
            headers.extend(
                decision
                    .headers
                    .iter()
                    .map(|(n, v)| (n.as_str(), v.as_str())),
            );
            Answer::Refuse {
                status: *status,
                headers,
                body,
            }
        }
        None => {
            headers.extend(
                builder_headers
                    .iter()
                    .chain(&decision.headers)
                    .map(|(n, v)| (n.as_str(), v.as_str())),
            );
            Answer::Accept {
                protocol: decision.protocol.as_deref().or(fallback),
                headers,
            }
        }
    }
}
