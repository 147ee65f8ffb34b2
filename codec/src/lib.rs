//! tickwire-codec: a sans-IO, `#![no_std]`, zero-copy WebSocket and HTTP/1.1 codec.
//!
//! Bytes in, events out. The codec never performs I/O, never allocates on the
//! hot path and never panics on input: every input ends in a value or a typed
//! error. Buffers belong to the caller (see [`buf`]).
//!
//! Features:
//! - `alloc`: owned message types ([`ws::OwnedMessage`]).
//! - `getrandom`: seed the masking-key generator from the operating system.
//! - `tls`: the TLS codec over rustls's unbuffered API ([`tls`]; implies `alloc`).
//! - `deflate`: permessage-deflate, RFC 7692 (`ws::deflate`; implies `alloc`; no std:
//!   zlib-rs allocates through the codec's `alloc::alloc` hooks).
//! - `deflate-std`: `deflate` with zlib-rs's run-time CPU detection (its AVX2 paths,
//!   `is_x86_feature_detected!`), which needs std; the transport's `deflate` turns it on.
#![no_std]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_debug_implementations)]

#[cfg(feature = "alloc")]
extern crate alloc;

#[cfg(test)]
extern crate std;

pub mod buf;
pub mod http;
pub mod rand;
pub mod simd;
pub mod time;
#[cfg(feature = "tls")]
pub mod tls;
pub mod ws;
