//! UTF-8 validation of 128-byte ASCII JSON payloads.

use std::hint::black_box;

use tickwire_codec::simd::utf8;

use super::names::UTF8;
use super::{Case, Inputs};
use crate::harness::{Measurement, RunConfig, bench_batch};

pub(super) fn cases<'a>(inputs: &'a Inputs, v: &mut Vec<Case<'a>>) {
    add(
        v,
        inputs,
        "tickwire",
        true,
        "simd::utf8::is_valid: inlined SSE2 ASCII check, simdutf8 (basic) only if a byte is not ASCII",
        utf8::is_valid,
    );
    add(
        v,
        inputs,
        "std::str::from_utf8",
        false,
        "what tungstenite validates text with",
        |b: &[u8]| std::str::from_utf8(b).is_ok(),
    );
}

fn add<'a, F>(
    v: &mut Vec<Case<'a>>,
    inputs: &'a Inputs,
    lib: &'static str,
    base: bool,
    note: &'static str,
    f: F,
) where
    F: Fn(&[u8]) -> bool + Copy + Send + Sync + 'a,
{
    v.push(Case::new(UTF8, lib, base, note, move |cfg| {
        run(cfg, inputs, f)
    }));
}

fn run<F: Fn(&[u8]) -> bool>(cfg: &RunConfig, inputs: &Inputs, f: F) -> Measurement {
    for t in &inputs.texts {
        assert!(f(t.as_bytes()));
    }
    for b in &inputs.binaries {
        assert!(!f(b));
    }
    let texts = &inputs.texts[..];
    bench_batch(
        cfg,
        &mut (),
        |_| {},
        |_, n| {
            let mut ok = 0u32;
            for t in &texts[..n] {
                ok += u32::from(f(black_box(t).as_bytes()));
            }
            black_box(ok);
        },
    )
}
