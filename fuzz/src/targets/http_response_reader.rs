//! ResponseReader with limits, HEAD-or-not, chunking and EOF chosen by the input's first
//! bytes (see `tickwire_fuzz::http::HttpSetup`). Beyond "no panic": feeding whole, byte by
//! byte or in chunks (over differently pre-filled storage) gives the same responses and the
//! same ending; every body is within the limit and within its response, whose bytes are a
//! contiguous part of the input; `body_str` agrees with UTF-8 validity; bodiless statuses
//! and HEAD answers carry no body; re-serializing each response with ResponseWriter parses
//! back to the same status, reason, headers and body; heads accepted and refused agree with
//! httparse (the parser ours replaced).
use crate::http::{
    HttpSetup, check_all_ways, check_response_heads_against_httparse, check_response_roundtrip,
    run_responses,
};

/// One input of the fuzz target `http_response_reader` (see the module docs).
pub fn run(input: &[u8]) {
    let Some((setup, data)) = HttpSetup::decode(input) else {
        return;
    };
    let run = check_all_ways(&setup, data, run_responses);
    check_response_heads_against_httparse(&setup, &run, data);
    for m in &run.msgs {
        check_response_roundtrip(m, setup.head);
    }
}
