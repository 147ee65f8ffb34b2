//! The compressed read path (permessage-deflate, `tickwire_fuzz::deflate`): random RSV1
//! frames and random DEFLATE streams read with random negotiated parameters (no panic;
//! only the reader's errors, `InvalidCompressedData`, `MessageTooLarge` or `InvalidUtf8`;
//! inflated messages within the limit, in memory too, and UTF-8 when text; whole and
//! chunked feeding agree), messages compressed by a Deflater and read back unchanged, and
//! the negotiation parsers over random header values (our own offer and answer agree).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    tickwire_fuzz::deflate::check_deflate(input);
});
