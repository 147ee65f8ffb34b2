//! REST over HTTP/1.1: [`Client`], one blocking keep-alive connection with its own
//! request writer and response reader (a request is one expression:
//! `client.get(path).send()?`, see [`RequestBuilder`]), and [`ClientPool`], a set of
//! pre-allocated ones behind RAII guards.
//!
//! Like [`ws`](crate::ws), the transport is thin: requests are built by the codec's
//! [`RequestWriter`] and responses parsed by its [`ResponseReader`]; the client writes
//! the one and fills the other, and owns the connection policy (keep-alive, reconnects,
//! timeouts). The stream under it is generic ([`Connector`], [`Stream`]); the default
//! [`HttpConnector`] picks plain TCP or TLS by the URL's scheme (`https://` runs the
//! same [`TlsStream`](crate::tls::TlsStream) as `wss://`, settings from a
//! [`TlsConfig`](crate::tls::TlsConfig) given to [`ClientBuilder::tls`]).
//!
//! ```
//! # let server = tickwire::rest::doc_server();
//! # let url = format!("http://{server}/api/v3");
//! use std::time::Duration;
//! use tickwire::rest::Client;
//!
//! let mut client = Client::builder()
//!     .timeout(Duration::from_secs(2)) // the whole request, headers and body included
//!     .connect(&url)?; // e.g. "https://api.exchange.example/api/v3"
//!
//! let time = client.get("/time").query("symbol", "BTCUSDT").send()?;
//! assert_eq!(time.body_str()?, "GET /api/v3/time");
//!
//! let order = client
//!     .post("/order") // POST /api/v3/order
//!     .header("X-MBX-APIKEY", "key")
//!     .json_bytes(br#"{"symbol":"BTCUSDT","side":"BUY","qty":"0.01"}"#)
//!     .send()?;
//! assert_eq!((order.status(), order.body_str()?), (200, "POST /api/v3/order"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The explicit path, with a writer and a reader of your own:
//!
//! ```
//! # let server = tickwire::rest::doc_server();
//! use tickwire::rest::{Client, ResponseReader};
//!
//! let mut client = Client::connect(&format!("http://{server}/api/v3"))?;
//! let mut writer = client.request_writer(vec![0u8; 4096])?; // Host and base path preset
//! // (The const parameter, room for headers, has a default that inference does not pick.)
//! let mut reader: ResponseReader<Vec<u8>> = ResponseReader::new(vec![0u8; 64 << 10]);
//! let req = writer
//!     .post("/order")
//!     .header("Content-Type", "application/json")
//!     .body(br#"{"symbol":"BTCUSDT","side":"BUY","qty":"0.01"}"#)
//!     .finish()?;
//! let resp = client.send(&req, &mut reader)?;
//! assert_eq!(resp.body_str()?, "POST /api/v3/order");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Reconnects, retries and stale connections
//!
//! A client ([`Client`], a [`ClientPool`] connection, and the tokio ones alike) keeps one
//! keep-alive connection and follows HTTP/1.1's rules for it (RFC 9112 §6 and §9, RFC
//! 9110 §9.2.2), held in one place, the codec's
//! [`ClientConnection`](tickwire_codec::http::ClientConnection):
//!
//! - **Opened on first use, kept while responses allow it.** After a response with
//!   `Connection: close`, an HTTP/1.0 response without `Connection: keep-alive` or with
//!   `Transfer-Encoding`, a body delimited by the close, a `101`, or any error, the
//!   connection is closed and the next request opens a new one. Closing sends TLS
//!   close_notify after every byte written before it, waiting at most
//!   [`ClientBuilder::close_timeout`] for a server that is not reading.
//! - **A response always answers the request just sent.** Bytes that arrive on an idle
//!   connection (a `408` before the server closes, a stray response, garbage) are never
//!   read as the next request's answer: the connection is replaced before a byte of the
//!   request is written. So is a connection the server has closed: a POST goes out on a
//!   new connection, not into the dead one. The client checks for both before reusing a
//!   connection, without blocking ([`ClientBuilder::idle_probe`]: before every reuse by
//!   default; [`Stats::stale_probed`] counts the connections replaced).
//! - **Retried once when that is safe.** When a request on a *reused* connection fails
//!   before any byte of its response arrives (the server closed or reset it, as servers
//!   do with keep-alive connections they consider idle), it is sent again on a new
//!   connection if its method is idempotent (GET, HEAD, PUT, DELETE) or not a byte of it
//!   was written. A written POST or PATCH is not retried (the server may have acted on
//!   it): the call returns [`Error::ConnectionLost`]. Never after a response byte,
//!   never after a timeout, never twice, never on a fresh connection
//!   ([`Stats::retries`] counts them).
//! - **Timeouts.** [`ClientBuilder::read_timeout`] bounds each wait for response bytes,
//!   [`ClientBuilder::write_timeout`] each wait for the socket to take request bytes,
//!   and [`ClientBuilder::timeout`] (off by default) the whole call, connect and retry
//!   included: [`Error::ReadTimeout`], [`Error::WriteTimeout`],
//!   [`Error::RequestTimeout`]. A timed-out request is never retried, and its connection
//!   is closed. (Over TLS the read bound applies to whole records.)
//!
//! ```
//! # let server = tickwire::rest::doc_server();
//! use std::time::Duration;
//! use tickwire::rest::Client;
//!
//! let mut client = Client::builder()
//!     .timeout(Duration::from_secs(2)) // the whole call, a retry included
//!     .read_timeout(Some(Duration::from_secs(1))) // each wait for response bytes
//!     .idle_probe(Some(Duration::ZERO)) // check before every reuse (the default)
//!     .connect(&format!("http://{server}/api/v3"))?;
//! for _ in 0..3 {
//!     assert_eq!(client.get("/time").send()?.status(), 200);
//! }
//! let stats = client.stats();
//! // One connection carried all three; nothing was stale, nothing retried.
//! assert_eq!((stats.connects, stats.requests, stats.stale_probed, stats.retries), (1, 3, 0, 0));
//! # Ok::<(), tickwire::rest::Error>(())
//! ```

mod class;
pub(crate) mod client;
mod doc_server;
pub(crate) mod drive;
mod error;
mod https;
#[cfg(feature = "json")]
mod json;
pub(crate) mod options;
pub(crate) mod pool;
pub(crate) mod request;
mod stream;
mod url;

pub use crate::error::ErrorClass;
pub use client::{Client, ClientBuilder, Stats};
#[doc(hidden)]
pub use doc_server::doc_server;
#[cfg(feature = "tls")]
#[doc(hidden)]
pub use doc_server::doc_server_tls;
pub use error::Error;
pub use https::{HttpConnector, HttpStream};
pub use pool::{ClientPool, PoolConfig, PoolGuard};
pub use request::RequestBuilder;
pub use stream::{Connector, Stream, TcpConnector, Timeouts};
pub use tickwire_codec::http::{
    BuildError, Error as HttpError, Method, Request, RequestWriter, ResponseReader, RestResponse,
};
pub use url::{HttpUrl, UrlError};

#[cfg(test)]
mod client_tests;

#[cfg(test)]
mod pool_tests;
