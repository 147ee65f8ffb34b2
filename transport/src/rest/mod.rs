//! REST over HTTP/1.1: [`Client`], one blocking keep-alive connection, and
//! [`ClientPool`], a set of pre-allocated ones behind RAII guards.
//!
//! Like [`ws`](crate::ws), the transport is thin: requests are built by the codec's
//! [`RequestWriter`] and responses parsed by its [`ResponseReader`]; the client writes
//! the one and fills the other, and owns the connection policy (keep-alive, reconnects,
//! timeouts). The stream under it is generic ([`Connector`], [`Stream`]); the default
//! [`HttpConnector`] picks plain TCP or TLS by the URL's scheme (`https://` runs the
//! same [`TlsStream`](crate::tls::TlsStream) as `wss://`, settings from a
//! [`TlsConfig`](crate::tls::TlsConfig) given to [`ClientBuilder::tls`]).
//!
//! ```no_run
//! use tickwire::rest::{Client, RequestWriter, ResponseReader};
//!
//! let mut client = Client::connect("http://127.0.0.1:8080")?;
//! let mut writer = RequestWriter::new(vec![0u8; 4096], client.host_header())?;
//! // (The const parameter, room for headers, has a default that inference does not pick.)
//! let mut reader: ResponseReader<Vec<u8>> = ResponseReader::new(vec![0u8; 64 << 10]);
//! let req = writer
//!     .post("/api/v3/order")
//!     .header("Content-Type", "application/json")
//!     .body(br#"{"symbol":"BTCUSDT","side":"BUY","qty":"0.01"}"#)
//!     .finish()?;
//! let resp = client.send(&req, &mut reader)?;
//! println!("{} {}", resp.status(), resp.body_str()?);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub(crate) mod client;
mod doc_server;
mod error;
mod https;
pub(crate) mod pool;
pub(crate) mod request;
mod stream;
mod url;

pub use client::{Client, ClientBuilder, Stats};
#[doc(hidden)]
pub use doc_server::doc_server;
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
