//! What the crate's error types share: `Display` prints one level, and the alternate
//! form (`{:#}`) walks the `source()` chain, each level's text once.

use std::error::Error;
use std::fmt;

/// In the alternate form (`{:#}`), append `": {source}"` for each source of `e`.
pub(crate) fn write_sources(f: &mut fmt::Formatter<'_>, e: &dyn Error) -> fmt::Result {
    if !f.alternate() {
        return Ok(());
    }
    let mut next = e.source();
    while let Some(s) = next {
        write!(f, ": {s}")?;
        next = s.source();
    }
    Ok(())
}

/// "cannot resolve `host`" (`empty`: it resolved to no address).
pub(crate) fn resolve_failed(f: &mut fmt::Formatter<'_>, host: &str, empty: bool) -> fmt::Result {
    if empty {
        write!(f, "host name {host} resolved to no address")
    } else {
        write!(f, "cannot resolve host name {host}")
    }
}

/// `host:port`, an IPv6 literal in brackets: the target a connect error names.
pub(crate) fn target(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// The target of a connected socket: `host` and the port it is connected to (the host
/// alone when the socket has no peer any more).
#[cfg(feature = "tls")]
pub(crate) fn peer_target(host: &str, peer: std::io::Result<std::net::SocketAddr>) -> String {
    match peer {
        Ok(a) => target(host, a.port()),
        Err(_) => host.to_owned(),
    }
}

/// What an error means for the connection it came from: the classification of
/// [`ws::Error::class`](crate::ws::Error::class) and
/// [`rest::Error::class`](crate::rest::Error::class), so a caller decides what to do
/// without matching every variant.
///
/// ```
/// use tickwire::ws::{Client, ErrorClass};
///
/// // Nothing listens on port 9 of 127.0.0.1: the connection was never made.
/// let e = Client::connect("ws://127.0.0.1:9/").unwrap_err();
/// assert_eq!(e.class(), ErrorClass::Setup);
/// assert!(e.is_setup() && !e.is_fatal() && !e.is_refused());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorClass {
    /// The connection is gone (failed, cut, timed out or already closed): every later
    /// call on it fails. A WebSocket user connects again (a server drops the
    /// connection); a REST client has dropped its connection and its next call connects
    /// again.
    Fatal,
    /// This call was refused and the connection is unchanged: nothing was sent (or what
    /// was queued stays queued). Call again later (after a `flush`, or once the socket
    /// is writable), or with other arguments (a smaller message, a valid payload).
    Refused,
    /// No connection was made: the URL, the name, the TCP connect, the proxy, the
    /// build's features or the OS entropy source failed. Fix the setting the error
    /// names, or connect again later (a refused connect, a resolver outage).
    Setup,
}

/// `is_fatal`, `is_refused` and `is_setup` for an error type with a `class()` method:
/// each is `class() == ErrorClass::…`. Every error type's classification lives in its
/// own one exhaustive `class` match; this is the one home of the three predicates. The
/// doc comment (and example) of each predicate is given by the caller.
macro_rules! class_predicates {
    (
        $(#[$fatal:meta])* fatal;
        $(#[$refused:meta])* refused;
        $(#[$setup:meta])* setup;
    ) => {
        $(#[$fatal])*
        pub fn is_fatal(&self) -> bool {
            self.class() == $crate::error::ErrorClass::Fatal
        }

        $(#[$refused])*
        pub fn is_refused(&self) -> bool {
            self.class() == $crate::error::ErrorClass::Refused
        }

        $(#[$setup])*
        pub fn is_setup(&self) -> bool {
            self.class() == $crate::error::ErrorClass::Setup
        }
    };
}
pub(crate) use class_predicates;

/// For an error type's `every_variant_is_classified` test: each value in `all` has the
/// class written beside it (`check` returns its `class()` and its `is_fatal`,
/// `is_refused`, `is_setup`), the predicates agree with the class, and `all` holds one
/// value of each of the type's `variants` variants.
#[cfg(test)]
pub(crate) fn assert_every_variant<E: fmt::Debug>(
    all: &[(E, ErrorClass)],
    variants: usize,
    check: impl Fn(&E) -> (ErrorClass, [bool; 3]),
) {
    for (e, class) in all {
        let (got, [fatal, refused, setup]) = check(e);
        assert_eq!(got, *class, "{e:?}");
        assert_eq!(fatal, *class == ErrorClass::Fatal, "{e:?}");
        assert_eq!(refused, *class == ErrorClass::Refused, "{e:?}");
        assert_eq!(setup, *class == ErrorClass::Setup, "{e:?}");
    }
    let distinct: std::collections::HashSet<_> =
        all.iter().map(|(e, _)| std::mem::discriminant(e)).collect();
    assert_eq!(distinct.len(), variants, "one value of every variant");
    assert_eq!(all.len(), variants);
}
