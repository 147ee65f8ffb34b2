//! RequestReader (server side) with limits, chunking and EOF chosen by the input's first
//! bytes (see `tickwire_fuzz::http::HttpSetup`). Beyond "no panic": feeding whole, byte by
//! byte or in chunks (over differently pre-filled storage) gives the same requests and the
//! same ending; every body is within the limit and within its request, whose bytes are a
//! contiguous part of the input; `body_str` agrees with UTF-8 validity; and the smuggling
//! invariants: no request is accepted with both Content-Length and Transfer-Encoding, a
//! Content-Length body is exactly that long and ends its request (bytes after it are never
//! part of it), and a request without framing headers has no body; heads accepted and
//! refused agree with httparse (the parser ours replaced).
use crate::http::{HttpSetup, check_all_ways, check_request_heads_against_httparse, run_requests};

/// One input of the fuzz target `http_request_reader` (see the module docs).
pub fn run(input: &[u8]) {
    let Some((setup, data)) = HttpSetup::decode(input) else {
        return;
    };
    let run = check_all_ways(&setup, data, run_requests);
    check_request_heads_against_httparse(&setup, &run, data);
}
