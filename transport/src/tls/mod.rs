//! TLS for the transport: [`TlsConfig`] / [`TlsServerConfig`] (built once, shared) and
//! [`TlsStream`], the codec's sans-IO [`TlsCodec`] over
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
pub use tickwire_codec::tls::{TlsCodec, TlsError, TlsErrorKind, rustls};

/// What to change for a certificate error, in the transport's setting names: appended
/// to a [`TlsError`]'s text by [`ws::Error`](crate::ws::Error) and
/// [`rest::Error`](crate::rest::Error). Empty for errors a setting does not fix.
pub(crate) fn hint(e: &TlsError) -> &'static str {
    match e.kind() {
        TlsErrorKind::UnknownIssuer => {
            "; if the server uses a private CA, trust it with `TlsConfig::builder().add_ca_pem(..)` \
             (or `add_ca_pem_file`, `add_ca_der`) and pass the config to the builder's `tls`"
        }
        TlsErrorKind::CaUsedAsLeaf => {
            "; give the server a certificate issued by the CA (the server's \
             `TlsServerConfig::from_pem` takes that leaf first, then the chain), and trust \
             the CA with `TlsConfig::builder().add_ca_pem(..)`"
        }
        TlsErrorKind::NameMismatch => {
            "; connect with a host name the certificate lists, or issue the server a \
             certificate for this name"
        }
        TlsErrorKind::Expired => "; renew the server's certificate (or check this machine's clock)",
        _ => "",
    }
}
