//! tickwire: low-latency WebSocket and REST for trading systems.
//!
//! A thin std transport over the sans-IO `tickwire-codec`: see [`ws`] (`ws://` and
//! `wss://`), [`rest`] (HTTP/1.1 keep-alive client and pool) and `tls`; [`proxy`]
//! (HTTP CONNECT and SOCKS5 tunnels) and [`socket`] (socket options, busy-poll receive).
//!
//! Features: `tls` (on by default) brings `wss://`, `https://` and TLS servers with
//! rustls, ring and webpki-roots; without it the transport speaks `ws://` and `http://`
//! only and a TLS URL is the typed error `TlsDisabled`. `tokio`: the async adapter;
//! `futures`: Stream/Sink views of it. `futures-io`: the same async API over any
//! executor's futures-io streams (smol, async-io, nexus-async-rt, ...), in
//! `futures_io`. `deflate`: permessage-deflate. `json`: REST JSON with serde
//! (`.json(&value)` on a request, serialized straight into the request buffer;
//! `response.json::<T>()`, borrowing from the response).
//!
//! Limits: a connection's read buffer is 1 MiB by default and bounds the largest
//! message it accepts (`max_message_size` and `read_buffer_size` on the builders raise
//! it; a larger message fails the connection with close code 1009); a message to send
//! must fit the 1 MiB write buffer (`write_buffer_size`).
//!
//! # A WebSocket client and an echo server
//!
//! ```
//! use std::thread;
//! use tickwire::ws::{Client, CloseCode, Error, Message, Server};
//!
//! // The server: accept one connection and echo what it sends.
//! let mut server = Server::bind("127.0.0.1:0")?;
//! let addr = server.local_addr()?;
//! let echo = thread::spawn(move || -> Result<(), Error> {
//!     let mut conn = server.accept()?;
//!     // The reply goes out while the message still borrows the read buffer: no copy.
//!     while let Some(()) = conn.recv_with(|msg, tx| match msg {
//!         Message::Text(t) => tx.send_text(t),
//!         Message::Binary(b) => tx.send_binary(b),
//!         _ => Ok(()), // pings are answered, a close is echoed, by the library
//!     })? {}
//!     Ok(())
//! });
//!
//! // The client.
//! let mut ws = Client::connect(&format!("ws://{addr}/echo"))?;
//! ws.send_text("hello")?;
//! assert_eq!(ws.recv()?, Some(Message::Text("hello")));
//! ws.close(CloseCode::NORMAL, "done")?;
//! while ws.recv()?.is_some() {} // until the server's close arrives
//! echo.join().unwrap()?;
//! # Ok::<(), Error>(())
//! ```
//!
//! # REST: GET and POST JSON, one expression each
//!
//! [`rest::Client`] owns its request writer and response reader; the response borrows
//! the client's buffer (no allocation per request). `Host` and the base path come from
//! the URL. (The server here is a stand-in on 127.0.0.1 that answers `METHOD /path`.)
//!
//! ```
//! # let server = tickwire::rest::doc_server();
//! # let url = format!("http://{server}/api/v3");
//! use std::time::Duration;
//! use tickwire::rest::Client;
//!
//! let mut client = Client::builder()
//!     .timeout(Duration::from_secs(2)) // the whole request
//!     .connect(&url)?; // e.g. "https://api.exchange.example/api/v3"
//!
//! let time = client.get("/time").query("symbol", "BTCUSDT").send()?;
//! assert_eq!((time.status(), time.body_str()?), (200, "GET /api/v3/time"));
//!
//! let order = client.post("/order").json_bytes(br#"{"side":"BUY","qty":"0.01"}"#).send()?;
//! assert_eq!(order.body_str()?, "POST /api/v3/order");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # tokio
//!
//! The same API, awaited (feature `tokio`): `tokio::ws::Client` and `tokio::ws::Server`
//! (and `tokio::rest::Client`).
//!
//! ```
//! # #[cfg(all(feature = "tokio", unix))]
//! # fn main() -> Result<(), tickwire::ws::Error> {
//! use tickwire::tokio::ws::{Client, Server};
//! use tickwire::ws::{CloseCode, Message};
//!
//! # ::tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
//! let mut server = Server::bind("127.0.0.1:0").await?;
//! let addr = server.local_addr()?;
//! let echo = ::tokio::spawn(async move {
//!     let mut conn = server.accept().await?;
//!     while let Some(()) = conn
//!         .recv_with(|msg, tx| match msg {
//!             Message::Text(t) => tx.send_text(t),
//!             _ => Ok(()),
//!         })
//!         .await?
//!     {}
//!     Ok::<(), tickwire::ws::Error>(())
//! });
//!
//! let mut ws = Client::connect(&format!("ws://{addr}/")).await?;
//! ws.send_text("hello").await?;
//! assert_eq!(ws.recv().await?, Some(Message::Text("hello")));
//! ws.close(CloseCode::NORMAL, "done").await?;
//! while ws.recv().await?.is_some() {} // until the server's close arrives
//! echo.await.unwrap()?;
//! # Ok(())
//! # })
//! # }
//! # #[cfg(not(all(feature = "tokio", unix)))]
//! # fn main() {}
//! ```
//!
//! # wss:// and https:// with a private CA
//!
//! A server certificate issued by your own CA (made here with `rcgen`); the client
//! trusts that CA with [`TlsConfigBuilder::add_ca_pem`](tls::TlsConfigBuilder::add_ca_pem).
//! The same [`TlsConfig`](tls::TlsConfig) goes to `rest::Client::builder().tls(..)` for
//! `https://`.
//!
//! ```
//! # #[cfg(feature = "tls")]
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
//! use tickwire::tls::{TlsConfig, TlsServerConfig};
//! use tickwire::ws::{Client, Message, Server};
//!
//! // A CA, and a certificate for "localhost" issued by it.
//! let mut ca = CertificateParams::new(Vec::<String>::new())?;
//! ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
//! let ca = CertifiedIssuer::self_signed(ca, KeyPair::generate()?)?;
//! let key = KeyPair::generate()?;
//! let cert = CertificateParams::new(vec!["localhost".to_owned()])?.signed_by(&key, &ca)?;
//!
//! let tls = TlsServerConfig::from_pem(cert.pem().as_bytes(), key.serialize_pem().as_bytes())?;
//! let mut server = Server::builder().tls(tls).bind("127.0.0.1:0")?;
//! let port = server.local_addr()?.port();
//! let t = std::thread::spawn(move || -> Result<(), tickwire::ws::Error> {
//!     let mut conn = server.accept()?;
//!     conn.send_text("over TLS")?;
//!     while conn.recv()?.is_some() {}
//!     Ok(())
//! });
//!
//! let trust = TlsConfig::builder().add_ca_pem(ca.pem().as_bytes())?.build()?;
//! let mut ws = Client::builder().tls(trust).connect(&format!("wss://localhost:{port}/"))?;
//! assert_eq!(ws.recv()?, Some(Message::Text("over TLS")));
//! ws.close(tickwire::ws::CloseCode::NORMAL, "")?;
//! while ws.recv()?.is_some() {}
//! t.join().unwrap()?;
//! # Ok(())
//! # }
//! # #[cfg(not(feature = "tls"))]
//! # fn main() {}
//! ```
//!
//! `https://` the same way, with the same [`TlsConfig`](tls::TlsConfig) (a stand-in
//! HTTPS server on 127.0.0.1 with a certificate of that CA):
//!
//! ```
//! # #[cfg(feature = "tls")]
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
//! # let mut ca = CertificateParams::new(Vec::<String>::new())?;
//! # ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
//! # let ca = CertifiedIssuer::self_signed(ca, KeyPair::generate()?)?;
//! # let key = KeyPair::generate()?;
//! # let cert = CertificateParams::new(vec!["localhost".to_owned()])?.signed_by(&key, &ca)?;
//! # let tls = tickwire::tls::TlsServerConfig::from_pem(cert.pem().as_bytes(), key.serialize_pem().as_bytes())?;
//! # let port = tickwire::rest::doc_server_tls(tls).port();
//! use tickwire::rest::Client;
//! use tickwire::tls::TlsConfig;
//!
//! let trust = TlsConfig::builder().add_ca_pem(ca.pem().as_bytes())?.build()?;
//! let mut client = Client::builder().tls(trust).connect(&format!("https://localhost:{port}/api"))?;
//! assert_eq!(client.get("/time").send()?.body_str()?, "GET /api/time");
//! # Ok(())
//! # }
//! # #[cfg(not(feature = "tls"))]
//! # fn main() {}
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]

mod clock;
mod error;
#[cfg(feature = "futures-io")]
pub mod futures_io;
mod net;
pub mod proxy;
pub mod rest;
pub mod socket;
#[cfg(feature = "tls")]
pub mod tls;
#[cfg(all(feature = "tokio", unix))]
pub mod tokio;
mod url;
pub mod ws;

/// The sans-IO codec this transport runs on.
pub use tickwire_codec as codec;

/// The mio this transport is built on (evented mode: register connections and servers
/// in a [`mio::Poll`] of this version; `transport/examples/fanout_server.rs` is a whole
/// evented server).
pub use mio;
