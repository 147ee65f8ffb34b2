//! Build only: the POST of [`memory`](super::memory) (4 headers, 104 B JSON
//! body) built and nothing else, like for like with reqwest, which cannot
//! go further without I/O. tickwire and the hand-rolled `write!` produce
//! the wire bytes; reqwest produces its `Request` value (the bytes come
//! later, in hyper).

use std::hint::black_box;

use tickwire_codec::http::RequestWriter;

use super::check_request;
use super::memory::{HOST, hand_build, reqwest_build, tw_build};
use crate::harness::{Measurement, RunConfig, bench_op};
use crate::suites::{Case, touch};

/// Scenario name.
pub const SCENARIO: &str = "REST POST 4 headers + 104B JSON, build only";

const NOTE_TW: &str = "RequestWriter post().header() x4 .body().finish(): the wire bytes in the \
                       writer's buffer (headers checked for injection, Content-Length written)";
const NOTE_HAND: &str =
    "hand-rolled: write! the head and append the body into a reused Vec (no checks)";
const NOTE_REQWEST: &str = "reqwest::Client::post(url).headers(map.clone()).body(&'static str).build(): \
                            a Request value, no wire bytes";

pub(super) fn cases(v: &mut Vec<Case<'static>>) {
    v.push(Case::new(SCENARIO, "tickwire", true, NOTE_TW, tickwire));
    v.push(Case::new(
        SCENARIO,
        "write! (hand-rolled)",
        false,
        NOTE_HAND,
        hand_rolled,
    ));
    v.push(Case::new(
        SCENARIO,
        super::nexus::LIB,
        false,
        super::nexus::NOTE_BUILD,
        super::nexus::build_only,
    ));
    v.push(Case::new(
        SCENARIO,
        "reqwest 0.13",
        false,
        NOTE_REQWEST,
        reqwest_build,
    ));
}

fn tickwire(cfg: &RunConfig) -> Measurement {
    let mut w = RequestWriter::new(vec![0u8; 4096], HOST).expect("writer");
    check_request(tw_build(&mut w).as_bytes(), HOST);
    bench_op(
        cfg,
        &mut w,
        |_| {},
        |w| {
            black_box(touch(tw_build(w).as_bytes()));
        },
    )
}

fn hand_rolled(cfg: &RunConfig) -> Measurement {
    let mut buf = Vec::with_capacity(4096);
    hand_build(&mut buf);
    check_request(&buf, HOST);
    bench_op(
        cfg,
        &mut buf,
        |_| {},
        |buf| {
            hand_build(buf);
            black_box(touch(buf));
        },
    )
}
