//! Async REST over HTTP/1.1 on tokio: [`Client`], one keep-alive connection, and
//! [`ClientPool`], pre-built connections behind RAII guards. The same method names,
//! settings, errors ([`Error`]), counters ([`Stats`]) and reconnect/retry policy as the
//! blocking [`crate::rest`] client (see its module docs), awaited instead of blocking.
//!
//! As in [`crate::tokio::ws`], the socket is a non-blocking std socket read and written
//! directly, with readiness from tokio's reactor; requests are built by the codec's
//! [`RequestWriter`] and responses parsed by its [`ResponseReader`] in the caller's
//! buffer: no allocation per request. Each client owns a writer and a reader, so a
//! request is one expression: `client.get("/api/v3/time").send().await?` (see
//! [`Client`]).
//!
//! The names, receivers and return types are the blocking client's (checked by
//! `tests/vocabulary.rs`), awaited, with these deliberate differences:
//! [`Client::disconnect`] never waits (a task on the runtime finishes a TLS close) and
//! [`Client::close`]`.await` waits as the blocking `disconnect` does; `try_acquire` on
//! the pool is `async` (it may reconnect the connection it hands out); the client is not
//! generic over a connector (TCP or TLS by the URL's scheme only).
//!
//! `http://` and `https://` by the URL's scheme: `https://` runs the transport's
//! [`TlsStream`](crate::tls::TlsStream) (the codec's `TlsCodec`, as for `wss://` and the
//! blocking client) over the non-blocking socket, with SNI and the certificate name from
//! the URL's host, settings from a [`TlsConfig`](crate::tls::TlsConfig) given to
//! [`ClientBuilder::tls`], and the same typed [`Error::Tls`] failures. The handshake
//! runs within the connect timeout.
//!
//! # Cancellation
//!
//! While a request is in flight the connection lives in the `send` future, not in the
//! client. Dropping that future (a `tokio::time::timeout` or `select!` that gave up)
//! closes the connection: a request half-written or a response half-read is never
//! reused. The next `send` connects again and clears the reader.

mod client;
mod pool;
mod stream;

pub use crate::rest::{
    Error, HttpUrl, Method, PoolConfig, Request, RequestWriter, ResponseReader, RestResponse,
    Stats, UrlError,
};
pub use client::{Client, ClientBuilder, RequestBuilder};
pub use pool::{ClientPool, PoolGuard};
