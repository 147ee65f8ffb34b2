//! The compressed read path (permessage-deflate, [`crate::deflate`]): random RSV1 frames
//! and random DEFLATE streams read with random negotiated parameters (no panic; only the
//! reader's errors, `InvalidCompressedData`, `MessageTooLarge` or `InvalidUtf8`; inflated
//! messages within the limit, in memory too, and UTF-8 when text; whole and chunked feeding
//! agree), messages compressed by a Deflater and read back unchanged, and the negotiation
//! parsers over random header values (our own offer and answer agree).

/// One input of the fuzz target `ws_deflate` (see the module docs).
pub fn run(input: &[u8]) {
    crate::deflate::check_deflate(input);
}
