//! nexus-net 0.4.2 in the codec rows (issue 24): its sans-IO `FrameReader`
//! and `FrameWriter` used as its own docs and benches use them, with the same
//! inputs, batches and `black_box`es as tickwire's rows.
//!
//! Build: nexus-net has no SIMD feature to switch on. Its `apply_mask` picks
//! AVX2 (else SSE2) at run time, or at compile time under
//! `-C target-feature=+avx2`, and it validates text with
//! `simdutf8::compat::from_utf8` with simdutf8's default features (std:
//! run-time CPU dispatch), which its own `Cargo.toml` turns on. Its default
//! build is therefore the fast one; only `-C target-cpu=native` (not used
//! here, it would change every row) would move it.

use std::hint::black_box;

use nexus_net::ws::{FrameReader as NxReader, Message as NxMessage};
use nexus_net::ws::{Role as NxRole, apply_mask as nx_apply_mask};
use tickwire_codec::ws::Role;

use super::Inputs;
use super::parse::Spec;
use crate::harness::{Measurement, RunConfig, bench_batch};
use crate::suites::{touch, unexpected};

/// The library column of every nexus-net row.
pub const LIB: &str = "nexus-net 0.4.2";

/// Note of the parse and batch rows.
pub const NOTE_PARSE: &str = "FrameReader::read copies the batch's wire bytes into its ReadBuf (buffer as large as \
                              tickwire's), then next() per message: header parse, unmask (server), \
                              simdutf8 (std, run-time dispatch) for text";
/// Note of the server-role encode row.
pub const NOTE_ENCODE_S: &str =
    "FrameWriter::encode_text into a caller slice: header + payload copy";
/// Note of the client-role encode row.
pub const NOTE_ENCODE_C: &str = "FrameWriter::encode_text into a caller slice: key from getrandom::fill per frame \
                                 (its only key source), header, payload copy, then apply_mask in place";
/// The library column of the nexus-net 0.7.2 rows (encode only: its parse,
/// mask and server-role encode code is 0.4.2's).
pub const LIB_07: &str = "nexus-net 0.7.2";
/// Note of the client-role encode row of 0.7.2.
pub const NOTE_ENCODE_C_07: &str = "FrameWriter::encode_text into a caller slice: key from its ChaCha8 generator \
                                    (seeded once from getrandom), header, payload copy, then apply_mask in place";
/// Note of the apply_mask row.
pub const NOTE_MASK: &str =
    "nexus_net::ws::apply_mask: run-time AVX2 check (is_x86_feature_detected), else SSE2";

fn role(r: Role) -> NxRole {
    match r {
        Role::Client => NxRole::Client,
        Role::Server => NxRole::Server,
    }
}

/// A reader for `spec` with a buffer of tickwire's size for the same wire bytes.
fn reader(spec: &Spec<'_>) -> NxReader {
    let cap = (1 << 20).max(2 * spec.wire.len() + 4096);
    NxReader::builder()
        .role(role(spec.role))
        .buffer_capacity(cap)
        .build()
}

/// Parse `n` messages; every one must be data of the expected kind.
#[inline(always)]
fn parse_n(r: &mut NxReader, n: usize) {
    let mut acc = 0u64;
    for _ in 0..n {
        match r.next() {
            Ok(Some(NxMessage::Text(s))) => acc = acc.wrapping_add(touch(s.as_bytes())),
            Ok(Some(NxMessage::Binary(b))) => acc = acc.wrapping_add(touch(b)),
            other => unexpected(&other),
        }
    }
    black_box(acc);
}

/// The parse (and batch) rows: copy the batch in, parse every message.
pub fn parse(cfg: &RunConfig, spec: Spec<'_>) -> Measurement {
    // A batch is the frames of `spec.wire`, whatever `--batch` says.
    let cfg = &RunConfig {
        batch: spec.expect.len(),
        ..*cfg
    };
    let mut r = reader(&spec);
    // Verify once.
    r.read(spec.wire).expect("room for the batch");
    for want in spec.expect {
        match r.next() {
            Ok(Some(NxMessage::Text(s))) if spec.text => assert_eq!(s.as_bytes(), *want),
            Ok(Some(NxMessage::Binary(b))) if !spec.text => assert_eq!(b, *want),
            other => unexpected(&other),
        }
    }
    assert!(matches!(r.next(), Ok(None)) && r.buffered() == 0);
    let wire = spec.wire;
    bench_batch(
        cfg,
        &mut r,
        |_| {},
        |r, n| {
            if let Err(e) = r.read(&wire[..black_box(wire.len())]) {
                unexpected(&e);
            }
            parse_n(r, n);
        },
    )
}

/// The encode rows' runner for one nexus-net version (`$nx`: its crate name
/// here); `FrameWriter` takes `&self` in 0.4.2 and `&mut self` (its key
/// generator) in 0.7.2, the calls are the same.
macro_rules! encode_rows {
    ($name:ident, $nx:ident) => {
        /// The encode rows: B texts into one output buffer.
        pub fn $name(cfg: &RunConfig, inputs: &Inputs, client: bool) -> Measurement {
            use $nx::ws::{FrameWriter, Role};
            #[allow(unused_mut)] // 0.4.2's writer is not mutated
            let mut w = FrameWriter::new(if client { Role::Client } else { Role::Server });
            let mut out = vec![0u8; inputs.encode_capacity()];
            let mut at = 0;
            for t in &inputs.texts {
                at += w.encode_text(t.as_bytes(), &mut out[at..]);
            }
            super::encode::verify(inputs, &out[..at], client);
            let texts = &inputs.texts[..];
            let mut st = (w, out);
            bench_batch(
                cfg,
                &mut st,
                |_| {},
                |(w, out), n| {
                    let mut at = 0;
                    for t in black_box(&texts[..n]) {
                        at += w.encode_text(t.as_bytes(), &mut out[at..]);
                    }
                    black_box(at);
                    black_box(&*out);
                },
            )
        }
    };
}

encode_rows!(encode, nexus_net);
encode_rows!(encode_07, nexus_net_07);

/// The apply_mask row's function.
pub fn apply_mask(buf: &mut [u8], key: [u8; 4]) {
    nx_apply_mask(buf, key);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// nexus-net's mask agrees with tickwire's at every alignment and length.
    #[test]
    fn masks_like_tickwire() {
        let src: Vec<u8> = (0..300u32).map(|i| (i * 7 + 3) as u8).collect();
        for start in 0..8 {
            for len in [0, 1, 5, 16, 31, 32, 33, 128, 200] {
                let key = [0x12, 0x34, 0x56, (start * 13 + len) as u8 | 1];
                let mut a = src[start..start + len].to_vec();
                let mut b = a.clone();
                apply_mask(&mut a, key);
                tickwire_codec::simd::mask::apply_mask(&mut b, key, 0);
                assert_eq!(a, b, "start {start} len {len}");
            }
        }
    }
}
