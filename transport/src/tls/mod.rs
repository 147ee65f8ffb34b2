//! TLS for the transport: [`TlsConfig`] / [`TlsServerConfig`] (built once, shared) and
//! [`TlsStream`], the codec's sans-IO [`TlsCodec`](tickwire_codec::tls::TlsCodec) over
//! a mio socket. `wss://` in [`ws::Client`](crate::ws::Client) and TLS on
//! [`ws::Server`](crate::ws::Server) run on it.
//!
//! rustls 0.23 (its unbuffered API, through the codec) with the *ring* provider (see
//! [`provider`] for the measured reason); roots compiled in from webpki-roots.

mod config;
mod stream;

pub use config::{
    ConfigError, TlsConfig, TlsConfigBuilder, TlsServerConfig, TlsServerConfigBuilder, provider,
};
pub use stream::{TlsStream, tls_error};
pub use tickwire_codec::tls::{TlsError, TlsErrorKind, rustls};
