//! HTTP/1.1 (RFC 9110, 9112): requests and responses over caller buffers.
//!
//! Client side:
//! - [`RequestWriter`]: configured once (host, base path, default headers),
//!   then a typestate builder per request; [`Request`] borrows the wire bytes.
//! - [`ResponseReader`]: responses in, [`RestResponse`] out, zero-copy, with
//!   Content-Length, chunked and close-delimited bodies.
//! - [`ClientConnection`]: the keep-alive client connection over both: which
//!   response answers which request, reuse, the stale-connection check, retries,
//!   the request deadline and read/write timeouts on the caller's `now`. Its head parser is
//!   our own (`response_head`, usual lines a 16- or 32-byte block at a time
//!   in `head_blocks`), held to httparse's answers by a differential test.
//!
//! Server side (our tests, users, the WebSocket handshake):
//! - [`RequestReader`]: requests in, [`ServerRequest`] out; its head parser
//!   (`request_head`) shares the block paths and the header loop with the
//!   response side, held to httparse's answers by a differential test.
//! - [`ResponseWriter`]: a response with a body from a slice, a writer, or chunks.
//!
//! [`ChunkedDecoder`] decodes the chunked coding in place on its own.
//! Readers say "need more bytes" with `Ok(None)`; everything else malformed
//! or hostile (the request-smuggling patterns included) is a typed [`Error`].

pub mod chunked;
pub mod client;
pub mod error;
pub mod head;
#[cfg(feature = "json")]
mod json;
// The block paths of the head parsers: x86 with SSE2 (under Miri too).
#[cfg(all(
    any(target_arch = "x86", target_arch = "x86_64"),
    target_feature = "sse2"
))]
mod head_blocks;
mod head_parse;
mod inbound;
pub mod method;
pub mod percent;
mod request_head;
pub mod request_reader;
pub mod request_writer;
mod response_head;
pub mod response_reader;
pub mod response_writer;
mod runs;
mod scan;
pub mod syntax;

#[cfg(test)]
mod tests;

/// The block path the head parsers take on this CPU (for
/// [`simd::active_paths`](crate::simd::active_paths)), by the same token
/// checks as their dispatch.
pub(crate) fn head_path() -> crate::simd::Path {
    #[cfg(all(
        any(target_arch = "x86", target_arch = "x86_64"),
        target_feature = "sse2"
    ))]
    {
        if head_blocks::Avx2::detect().is_some() {
            return crate::simd::Path::Avx2;
        }
        if head_blocks::Sse2::detect().is_some() {
            return crate::simd::Path::Sse2;
        }
    }
    crate::simd::Path::Scalar
}

pub use chunked::{ChunkedDecoder, Decoded};
pub use client::{Action, ClientConnection, ClientError, ClientSettings, ClientStats};
pub use error::{BuildError, Error};
pub use head::{HeaderIter, Headers, Trailers};
pub use inbound::{DEFAULT_MAX_BODY, DEFAULT_MAX_HEAD};
pub use method::Method;
pub use request_reader::{RequestReader, ServerRequest};
pub use request_writer::{
    BodyWriter, Complete, Fields, Line, Request, RequestBuilder, RequestWriter,
};
pub use response_reader::{ResponseReader, RestResponse};
pub use response_writer::{ChunkedWriter, ResponseWriter};
