//! Floor rows: the least work a library row's result needs, done by the
//! plainest code, so the distance of the library row from it is what the
//! library adds.
//!
//! - Beside the 2 KiB unmasked text parse: copy the batch's wire bytes into
//!   a buffer as the reader's `feed` does (one `copy_from_slice`, like a
//!   `recv`), then validate each frame's payload as UTF-8 with simdutf8 (its
//!   `std` runtime dispatch: AVX2 here); frame headers are known, not parsed.
//! - Beside the server-role encode: copy each frame's bytes (header and
//!   payload, as encoded) into the output buffer, one `copy_from_slice` per
//!   frame.

use std::hint::black_box;

use super::names::{ENCODE_SERVER, parse_text};
use super::{Case, Inputs};
use crate::harness::{Measurement, RunConfig, bench_batch};
use crate::inputs::header_len;

const NOTE_PARSE: &str = "the floor: copy the batch's wire bytes into a buffer (one copy_from_slice, like feed), then \
                          simdutf8::basic::from_utf8 (std, runtime dispatch) on each payload at its known offset";
const NOTE_ENCODE: &str = "the floor: copy each frame's encoded bytes (header + payload) into the output buffer, \
                           one copy_from_slice per frame";

/// Payload size of the parse floor row.
pub(super) const PARSE_FLOOR: usize = 2048;

/// The parse floor beside [`parse_text`]`(2048)` (when that set is present)
/// and the encode floor beside the server-role encode of `base`.
pub(super) fn cases<'a>(sets: &'a [Inputs], base: &'a Inputs, v: &mut Vec<Case<'a>>) {
    if let Some(inputs) = sets.iter().find(|i| i.payload == PARSE_FLOOR) {
        v.push(Case::new(
            parse_text(PARSE_FLOOR),
            "copy + simdutf8 (floor)",
            false,
            NOTE_PARSE,
            move |cfg| parse_floor(cfg, inputs),
        ));
    }
    v.push(Case::new(
        ENCODE_SERVER,
        "copy frame bytes (floor)",
        false,
        NOTE_ENCODE,
        move |cfg| encode_floor(cfg, base),
    ));
}

fn parse_floor(cfg: &RunConfig, inputs: &Inputs) -> Measurement {
    let cfg = &RunConfig {
        batch: inputs.batch,
        ..*cfg
    };
    let wire = &inputs.text_unmasked[..];
    let h = header_len(inputs.payload, false);
    let ranges: Vec<(usize, usize)> = (0..inputs.batch)
        .map(|i| {
            let at = i * (h + inputs.payload) + h;
            (at, at + inputs.payload)
        })
        .collect();
    // Verify once: the ranges are the payloads.
    for (t, &(a, b)) in inputs.texts.iter().zip(&ranges) {
        assert_eq!(&wire[a..b], t.as_bytes());
    }
    let mut buf = vec![0u8; wire.len()];
    bench_batch(
        cfg,
        &mut buf,
        |_| {},
        |buf, n| {
            let wire = &wire[..black_box(wire.len())];
            buf.copy_from_slice(wire);
            let mut ok = true;
            for &(a, b) in &ranges[..n] {
                ok &= simdutf8::basic::from_utf8(&buf[a..b]).is_ok();
            }
            assert!(black_box(ok));
        },
    )
}

fn encode_floor(cfg: &RunConfig, inputs: &Inputs) -> Measurement {
    let wire = &inputs.text_unmasked[..];
    let frame = header_len(inputs.payload, false) + inputs.payload;
    assert_eq!(wire.len(), inputs.batch * frame);
    let frames: Vec<&[u8]> = wire.chunks_exact(frame).collect();
    let mut out = vec![0u8; inputs.encode_capacity()];
    // Verify once: the frames laid end to end are the server's encoding.
    let mut at = 0;
    for f in &frames {
        out[at..at + f.len()].copy_from_slice(f);
        at += f.len();
    }
    assert_eq!(&out[..at], wire);
    bench_batch(
        cfg,
        &mut out,
        |_| {},
        |out, n| {
            let frames = black_box(&frames[..n]);
            let mut at = 0;
            for f in frames {
                out[at..at + f.len()].copy_from_slice(f);
                at += f.len();
            }
            black_box(at);
            black_box(&*out);
        },
    )
}
