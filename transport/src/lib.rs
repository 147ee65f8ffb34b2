//! tickwire: low-latency WebSocket and REST for trading systems.
//!
//! A thin std transport over the sans-IO `tickwire-codec`: see [`ws`] (`ws://` and
//! `wss://`), [`rest`] (HTTP/1.1 keep-alive client and pool) and `tls`; [`proxy`]
//! (HTTP CONNECT and SOCKS5 tunnels) and [`socket`] (socket options, busy-poll receive).
//!
//! Features: `tls` (on by default) brings `wss://`, `https://` and TLS servers with
//! rustls, ring and webpki-roots; without it the transport speaks `ws://` and `http://`
//! only and a TLS URL is the typed error `TlsDisabled`. `tokio`: the async adapter;
//! `futures`: Stream/Sink views of it.

mod clock;
mod error;
mod net;
pub mod proxy;
pub mod rest;
pub mod socket;
#[cfg(feature = "tls")]
pub mod tls;
#[cfg(all(feature = "tokio", unix))]
pub mod tokio;
pub mod ws;

/// The sans-IO codec this transport runs on.
pub use tickwire_codec as codec;
