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
//! **Copies, honestly.** During the handshake rustls's unbuffered API does the record
//! work. rustls 0.23 decrypts each record in place, in our incoming buffer, but its
//! `ReadTraffic` then moves the plaintext into a `Vec` of its own (one allocation and
//! one copy per record, inside rustls: `take_received_plaintext`), and it encrypts
//! each outgoing record into a `Vec` that is copied into the caller's output buffer.
//!
//! **Records mode (TLS 1.3).** So once a TLS 1.3 handshake is done, and if the config
//! sets `enable_secret_extraction` (the transport's configs do), the codec takes the
//! traffic keys through rustls's kernel-connection API (the one made for kTLS) and
//! runs the record layer itself with the AEAD of the config's own provider
//! (`records.rs`): each record is opened in place in the incoming buffer and its
//! plaintext copied once, straight into the slice the caller gives
//! [`TlsCodec::read`] (normally the FrameReader's or ResponseReader's free space): no
//! rustls state-machine pass, no allocation, no intermediate buffer per record. rustls
//! keeps the key schedule (KeyUpdate, both ways) and session tickets. With the `ring`
//! feature (the transport's `tls` and the bypass crate's `std` turn it on) outgoing
//! records are sealed in place too, straight into the caller's output buffer, with
//! ring's AEAD: no allocation per record sent. Without it (bare-metal builds), or for
//! a FIPS provider, they come from the provider's `MessageEncrypter`, which returns
//! each record in a `Vec` (copied into the caller's output buffer). The switch happens at
//! the first call after rustls reports it has nothing buffered and no ciphertext is
//! waiting, so no record is ever half-processed by both; [`TlsCodec::is_records_mode`]
//! says whether it happened. TLS 1.2, and configs without secret extraction, stay on
//! rustls's record layer throughout. Only when the caller's slice is full does
//! plaintext wait in a spill buffer for the next `read` (no allocation: it holds one
//! record). Handshake records that do not fit a full output buffer wait, in order, in
//! a small queue (handshake and key updates only).

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
