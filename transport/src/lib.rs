//! tickwire: low-latency WebSocket for trading systems, on mio.
//!
//! A thin std transport over the sans-IO `tickwire-codec`: see [`ws`] (`ws://` and
//! `wss://`) and [`tls`].
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs, missing_debug_implementations)]

mod net;
pub mod tls;
pub mod ws;

/// The sans-IO codec this transport runs on.
pub use tickwire_codec as codec;
