//! TLS as a sans-IO codec: [`TlsCodec`] over rustls's unbuffered connection API
//! (feature `tls`, which implies `alloc`; `no_std`).
//!
//! **rustls version.** We track rustls **0.23** (0.23.46 at the time of writing), whose
//! `rustls::unbuffered` API this is built on; the 0.24 pre-releases remove that API.
//! Nothing of rustls's connection types leaks through our API: callers see
//! [`TlsCodec`], [`Status`] and [`TlsError`] (the configs and [`TlsError::Rustls`] are
//! rustls's own), so moving to another rustls API is a change to `codec.rs` alone.
//!
//! **Driving it.** The caller reads ciphertext from the network into
//! [`TlsCodec::incoming_mut`] and commits it, then calls [`TlsCodec::handshake`] until
//! [`Status::Ready`], then [`TlsCodec::read`] (plaintext into its reader's free space)
//! and [`TlsCodec::encrypt`] (records into its [`WriteBuf`](crate::buf::WriteBuf)).
//! After every call it sends what the output buffer holds, in order. End-of-stream is
//! [`TlsCodec::handle_eof`]; before the peer's close_notify that is
//! [`TlsError::UnexpectedEof`] (a possible truncation attack), after it the clean
//! [`Status::PeerClosed`]. [`TlsCodec::close`] sends our close_notify. Every failure is
//! a [`TlsError`] value: garbage or truncated records never panic.
//!
//! **Copies, honestly.** rustls 0.23 decrypts each record in place, in our incoming
//! buffer (no copy there), but its unbuffered `ReadTraffic` then moves the plaintext
//! into a `Vec` of its own (one allocation and one copy per record, inside rustls:
//! `take_received_plaintext`). The codec copies that plaintext once, straight into
//! the slice the caller gives [`TlsCodec::read`], normally the FrameReader's or
//! ResponseReader's free space, so no intermediate buffer of ours sits between
//! decryption and parsing. Only when the caller's slice is full does the rest wait in a
//! spill buffer for the next `read`. On the way out, rustls encrypts each record into a
//! `Vec` and copies it into the caller's output buffer (again inside rustls); the codec
//! adds no copy: application data goes from the caller's slice to rustls to the output
//! buffer. Handshake records that do not fit a full output buffer wait, in order, in a
//! small queue (handshake only). Dropping rustls's two per-record copies needs an
//! in-place rustls API, which 0.23 does not have.
//!
//! **Buffer size.** The incoming buffer must hold one whole record ([`MAX_RECORD`],
//! about 18 KiB) and, during the handshake, the largest handshake message split over
//! records (the peer's certificate chain); 32 to 64 KiB is a safe choice. A full buffer
//! without a complete record is [`TlsError::IncomingFull`], not a hang.
//!
//! **Crypto provider and time.** The codec picks neither: the caller's
//! `Arc<ClientConfig>` / `Arc<ServerConfig>` carries the
//! [`CryptoProvider`](rustls::crypto::CryptoProvider) and, without `std`, a
//! [`TimeProvider`](rustls::time_provider::TimeProvider) for certificate validity
//! (build the config with `ClientConfig::builder_with_details(provider, time)`; with no
//! time source certificate checks fail with `FailedToGetCurrentTime`). rustls's two
//! providers need more than `core` + `alloc`: `ring` takes its randomness from
//! `getrandom` (which on `x86_64-unknown-none` needs a custom backend registered by the
//! application) and `aws-lc-rs` needs a C library and libc. On bare metal, use a pure-Rust
//! provider (the third-party `rustls-rustcrypto`, or your own `CryptoProvider`) fed by
//! your platform's RNG, and a `TimeProvider` reading its clock (RTC, GPS, PTP). The
//! codec itself (rustls with `default-features = false`: no std, no provider) builds
//! for `x86_64-unknown-none` and `thumbv7em-none-eabihf`, which CI checks. The std
//! transport uses *ring* (`tickwire::tls::provider`).

mod codec;
mod error;

pub use codec::{MAX_PLAINTEXT, MAX_RECORD, Status, TlsCodec};
pub use error::{TlsError, TlsErrorKind};
/// rustls, as the codec uses it: configs, server names, the crypto provider.
pub use rustls;

#[cfg(test)]
mod tests;
