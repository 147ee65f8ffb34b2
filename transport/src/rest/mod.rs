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

mod class;
pub(crate) mod client;
mod doc_server;
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
