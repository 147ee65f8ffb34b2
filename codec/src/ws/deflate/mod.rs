//! permessage-deflate (RFC 7692), feature `deflate`: the pieces a connection
//! puts together.
//!
//! - [`params`]: negotiation. [`DeflateConfig`] is what a user asks for; a
//!   client writes [`DeflateConfig::offer`] and checks the server's answer
//!   with [`DeflateConfig::check_response`]; a server picks an offer with
//!   [`DeflateConfig::accept`] and answers with [`Negotiated::response`]. The
//!   handshake does this when given a config (`ClientHandshake::deflate`,
//!   [`UpgradeRequest::deflate`](crate::ws::handshake::UpgradeRequest::deflate),
//!   `write_accept_deflate`).
//! - [`Inflater`] / [`Deflater`]: one raw DEFLATE stream per direction, with
//!   the negotiated window bits and context takeover.
//! - Frames: a [`FrameReader`](crate::ws::FrameReader) whose
//!   [`Config::allowed_rsv`](crate::ws::Config::allowed_rsv) has [`RSV1`]
//!   accepts RSV1 on the first frame of a data message only and reports such a
//!   message through [`FrameReader::compressed`](crate::ws::FrameReader::compressed)
//!   (its text is not UTF-8 checked before it is inflated);
//!   [`FrameWriter::encode_compressed`](crate::ws::FrameWriter::encode_compressed)
//!   writes a compressed message with RSV1 on its first frame.
//!
//! # How a connection puts them together
//!
//! [`Connection`](crate::ws::Connection) does all of this when its
//! [`Settings::deflate`](crate::ws::Settings::deflate) is set (see its
//! `deflate` module); the steps, for drivers of a bare reader and writer:
//!
//! 1. Handshake: a client builds its request with `ClientHandshake::deflate`
//!    and reads [`ClientResponse::deflate`](crate::ws::handshake::ClientResponse::deflate);
//!    a server calls [`UpgradeRequest::deflate`](crate::ws::handshake::UpgradeRequest::deflate)
//!    and answers with `write_accept_deflate`. `Some(negotiated)`: compression is on.
//! 2. Set [`Config::allowed_rsv`](crate::ws::Config::allowed_rsv) to [`RSV1`]
//!    (only then: without it RSV1 stays a protocol error), and make
//!    [`Inflater::for_role`] and [`Deflater::for_role`] from `negotiated`.
//! 3. Reading: after `advance`, [`FrameReader::compressed`](crate::ws::FrameReader::compressed)
//!    is `Some` for a compressed message: inflate its payload
//!    ([`Inflater::inflate_text`] for text) into the connection's buffer with
//!    the limit [`FrameReader::max_decoded_size`](crate::ws::FrameReader::max_decoded_size)
//!    (the configured message limit, not the read buffer's size), and deliver the
//!    inflated bytes; errors map to close
//!    codes through [`Error::close_code`](crate::ws::Error::close_code).
//!    Other messages are delivered as they are, zero-copy.
//! 4. Writing: when [`Deflater::should_compress`] says so, compress the
//!    payload and write it with `FrameWriter::encode_compressed`; otherwise
//!    write it as usual (RSV1 clear).
//!
//! No std needed: zlib-rs (through libz-rs-sys, its zlib API) allocates its
//! streams through `alloc::alloc` with the codec's own `zalloc`/`zfree`
//! (`zstream`), so the feature builds wherever `alloc` does. Feature
//! `deflate-std` adds zlib-rs's run-time CPU detection (its AVX2 paths), which
//! needs std; the transport turns it on.

mod compress;
mod inflate;
pub mod params;
mod zstream;

#[cfg(test)]
mod bfinal_tests;
#[cfg(test)]
pub(crate) mod tests;

pub use compress::Deflater;
pub use inflate::{Inflater, TAIL, check_utf8};
pub use params::{DeflateConfig, HeaderValue, Negotiated, NegotiationError};

/// The RSV bit permessage-deflate uses ("Per-Message Compressed"), as
/// [`Config::allowed_rsv`](crate::ws::Config::allowed_rsv) and
/// [`FrameReader::last_rsv`](crate::ws::FrameReader::last_rsv) count them.
pub const RSV1: u8 = 0b100;
