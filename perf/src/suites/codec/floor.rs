//! Floor rows: the least work a library row's result needs, done by the
//! plainest code, so the distance of the library row from it is what the
//! library adds.
//!
//! - Beside every unmasked text parse (ASCII and not, each size): copy the
//!   batch's wire bytes into a buffer of the reader's size, as the reader's
//!   `feed` does, then validate each frame's payload as UTF-8 the way the
//!   reader does (`utf8::is_valid`: an all-ASCII check, simdutf8's AVX2 or
//!   SSE4.2 validator for the rest); frame headers are known, not parsed.
//! - Beside the server-role encode: write each frame into the output buffer
//!   with the least an encoder can do: store its header bytes (known: final
//!   text, the length) and copy its payload from the same texts the library
//!   row encodes, to the same places. (Copying pre-encoded frames instead
//!   read every payload from a 130-byte stride, unaligned as the library's
//!   sources are not, and came out slower than the library row.)
//!
//! Both copy with the codec's `simd::copy` (a 32-byte AVX2 loop here), as
//! the rows they bound do, not with `copy_from_slice`: glibc's `memcpy` runs
//! `rep movsb` from a few KiB up, which on the AMD Zen 3 here is 10 to 20
//! times slower for some placements of source and destination (see
//! `codec/src/simd/copy.rs`), and a call per short frame: floors built on it
//! came out slower than the library rows they were meant to bound. Likewise
//! simdutf8's own entry point checked ASCII text slower than the reader's
//! ASCII check. A floor that does more work, or the same work slower, than
//! the row it bounds is not a floor.

use std::hint::black_box;

use tickwire_codec::simd::{copy::copy, utf8};

use super::names::{ENCODE_SERVER, parse_text, parse_text_utf8};
use super::{Case, Inputs};
use crate::harness::{Measurement, RunConfig, bench_batch};
use crate::inputs::header_len;

const NOTE_PARSE: &str = "the floor: copy the batch's wire bytes into a buffer of the reader's size (simd::copy, as \
                          feed does), then utf8::is_valid (ASCII check, else simdutf8 AVX2) on each payload at its \
                          known offset";
const NOTE_ENCODE: &str = "the floor: per frame, store the header bytes (FIN + text, the length) and copy the \
                           payload from the same texts (simd::copy) into the output buffer";

/// A parse floor beside each [`parse_text`] and [`parse_text_utf8`] row
/// (one per set) and the encode floor beside the server-role encode of
/// `base`.
pub(super) fn cases<'a>(sets: &'a [Inputs], base: &'a Inputs, v: &mut Vec<Case<'a>>) {
    for inputs in sets {
        let name = if inputs.non_ascii {
            parse_text_utf8(inputs.payload)
        } else {
            parse_text(inputs.payload)
        };
        v.push(Case::new(
            name,
            "copy + validate (floor)",
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
    // The reader's buffer size in the parse rows (`parse::tickwire`).
    let mut buf = vec![0u8; (1 << 20).max(2 * wire.len() + 4096)];
    bench_batch(
        cfg,
        &mut buf,
        |_| {},
        |buf, n| {
            let wire = &wire[..black_box(wire.len())];
            copy(buf, wire);
            let mut ok = true;
            for &(a, b) in &ranges[..n] {
                ok &= utf8::is_valid(&buf[a..b]);
            }
            assert!(black_box(ok));
        },
    )
}

fn encode_floor(cfg: &RunConfig, inputs: &Inputs) -> Measurement {
    let mut out = vec![0u8; inputs.encode_capacity()];
    let texts = &inputs.texts[..];
    // The room every batch needs at most (a 4-byte header a frame), checked
    // once here: the library checks per frame, which is part of what it adds.
    let room: usize = texts.iter().map(|t| t.len() + 4).sum();
    assert!(out.len() >= room, "room for the batch");
    // Verify once: the frames laid end to end are the server's encoding.
    // SAFETY: `room` is the sum over `texts` computed just above.
    let at = unsafe { put_frames(&mut out, texts, room) };
    assert_eq!(&out[..at], &inputs.text_unmasked[..]);
    bench_batch(
        cfg,
        &mut out,
        |_| {},
        |out, n| {
            // SAFETY: the texts are a prefix of those `room` sums over.
            let at = unsafe { put_frames(out, black_box(&texts[..n]), room) };
            black_box(at);
            black_box(&*out);
        },
    )
}

/// Each text as a final unmasked text frame, back to back in `out` (16-bit
/// lengths at most); the bytes written. Each header is one store and each
/// payload one copy; the room is checked once for the batch.
///
/// # Safety
/// `room` must be at least the sum over `texts` of each length plus 4.
#[inline(always)]
unsafe fn put_frames(out: &mut [u8], texts: &[String], room: usize) -> usize {
    assert!(out.len() >= room, "room for the batch");
    let base = out.as_mut_ptr();
    let mut at = 0;
    for t in texts {
        let p = t.as_bytes();
        let n = p.len();
        // SAFETY: `at + 4 + n <= room <= out.len()` for every frame (by the
        // caller's contract `room` counts 4 header bytes a text, the most
        // written here; the assert above), so each header store and payload
        // slice lies inside `out`, and the payload slice does not overlap
        // `p` (a different allocation).
        at += unsafe {
            if n < 126 {
                let head = 0x81u16 | (n as u16) << 8;
                base.add(at)
                    .cast::<[u8; 2]>()
                    .write_unaligned(head.to_le_bytes());
                copy(std::slice::from_raw_parts_mut(base.add(at + 2), n), p);
                2 + n
            } else {
                let head = 0x7e81u32 | u32::from((n as u16).swap_bytes()) << 16;
                base.add(at)
                    .cast::<[u8; 4]>()
                    .write_unaligned(head.to_le_bytes());
                copy(std::slice::from_raw_parts_mut(base.add(at + 4), n), p);
                4 + n
            }
        };
    }
    at
}
