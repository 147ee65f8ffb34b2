//! apply_mask on 128-byte payloads, at the offsets they have in a batch of
//! masked frames (so alignment varies as it does in a real receive buffer).
//! Every call of a batch masks a different payload, so no call loads bytes
//! the previous one stored: the rows measure independent calls back to back
//! (what a reader unmasking frame after frame does), not a store-forwarding
//! chain through one buffer. Every row does exactly this, with the same
//! offsets, keys and `black_box`es.
//!
//! Where the payloads sit in memory moves these rows by half their cost,
//! for reasons that have nothing to do with the code under test: the batch
//! loop reloads a spilled pointer from the stack after each call, and a
//! reload whose address matches a just-stored payload byte in its low 12
//! bits waits on that store (4K aliasing). Stack and heap move with ASLR, so
//! one process measured tickwire's row at 6.5 ticks and the next at 10.1
//! with the same binary (constant with ASLR off). Every row therefore masks
//! [`LAYOUTS`] copies of the batch in turn, [`PER_LAYOUT`] batches on each,
//! the copies 64-byte aligned and 512 bytes apart within a page, so each row's
//! median is taken over the same spread of placements in every process. The
//! first batch on a copy finds it outside L1: 1 in [`PER_LAYOUT`] samples.
//!
//! tungstenite's `apply_mask` is private (only reachable inside its frame
//! parser), so its method is reimplemented here: XOR 4-byte words of the
//! aligned middle, bytes at the ends. A plain byte loop shows what the
//! compiler makes of the obvious code. tickwire's forced paths (scalar,
//! SSE2, AVX2) show what the runtime dispatch costs and picks.

use std::hint::black_box;

use tickwire_codec::simd::mask as tw;

use super::names::MASK;
use super::{Case, Inputs, PAYLOAD, nexus};
use crate::harness::{Measurement, RunConfig, bench_batch};

fn tickwire(buf: &mut [u8], key: [u8; 4]) {
    tw::apply_mask(buf, key, 0);
}

fn tickwire_scalar(buf: &mut [u8], key: [u8; 4]) {
    tw::apply_mask_scalar(buf, key, 0);
}

#[cfg(target_arch = "x86_64")]
fn tickwire_sse2(buf: &mut [u8], key: [u8; 4]) {
    // SAFETY: SSE2 is part of the x86_64 baseline.
    unsafe { tw::apply_mask_sse2(buf, key, 0) }
}

#[cfg(target_arch = "x86_64")]
fn tickwire_avx2(buf: &mut [u8], key: [u8; 4]) {
    assert!(std::arch::is_x86_feature_detected!("avx2"), "no AVX2 here");
    // SAFETY: checked just above; the benchmark only registers this case when AVX2 is present.
    unsafe { tw::apply_mask_avx2(buf, key, 0) }
}

fn fastwebsockets(buf: &mut [u8], key: [u8; 4]) {
    fastwebsockets::unmask(buf, key);
}

/// tungstenite's method: bytes up to 4-byte alignment, aligned `u32` words
/// with the key rotated to match, bytes after.
fn u32_words(buf: &mut [u8], key: [u8; 4]) {
    let head = buf.as_ptr().align_offset(4).min(buf.len());
    let (pre, rest) = buf.split_at_mut(head);
    for (i, b) in pre.iter_mut().enumerate() {
        *b ^= key[i & 3];
    }
    let k = u32::from_ne_bytes([
        key[head & 3],
        key[(head + 1) & 3],
        key[(head + 2) & 3],
        key[(head + 3) & 3],
    ]);
    let mut words = rest.chunks_exact_mut(4);
    for w in &mut words {
        let x = u32::from_ne_bytes([w[0], w[1], w[2], w[3]]) ^ k;
        w.copy_from_slice(&x.to_ne_bytes());
    }
    let tail = words.into_remainder();
    let k = k.to_ne_bytes();
    for (i, b) in tail.iter_mut().enumerate() {
        *b ^= k[i & 3];
    }
}

/// The obvious loop, as the compiler optimizes it.
fn byte_loop(buf: &mut [u8], key: [u8; 4]) {
    for (i, b) in buf.iter_mut().enumerate() {
        *b ^= key[i & 3];
    }
}

pub(super) fn cases<'a>(inputs: &'a Inputs, v: &mut Vec<Case<'a>>) {
    // Each implementation is passed as its own fn item, so `run` is
    // monomorphized per row and the call inlines as it would in real code.
    add(
        v,
        inputs,
        "tickwire",
        true,
        "simd::apply_mask: runtime dispatch to the widest path",
        tickwire,
    );
    add(
        v,
        inputs,
        "tickwire scalar (forced)",
        false,
        "apply_mask_scalar: u64 words",
        tickwire_scalar,
    );
    #[cfg(target_arch = "x86_64")]
    {
        add(
            v,
            inputs,
            "tickwire sse2 (forced)",
            false,
            "apply_mask_sse2",
            tickwire_sse2,
        );
        if std::arch::is_x86_feature_detected!("avx2") {
            add(
                v,
                inputs,
                "tickwire avx2 (forced)",
                false,
                "apply_mask_avx2",
                tickwire_avx2,
            );
        }
    }
    add(
        v,
        inputs,
        "fastwebsockets::unmask",
        false,
        "its public unmask",
        fastwebsockets,
    );
    add(
        v,
        inputs,
        nexus::LIB,
        false,
        nexus::NOTE_MASK,
        nexus::apply_mask,
    );
    add(
        v,
        inputs,
        "u32 word loop (tungstenite's method)",
        false,
        "tungstenite's apply_mask is private; its aligned-u32 method reimplemented here",
        u32_words,
    );
    add(
        v,
        inputs,
        "byte loop",
        false,
        "for (i, b) in buf { *b ^= key[i & 3] }, as rustc compiles it",
        byte_loop,
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
    F: Fn(&mut [u8], [u8; 4]) + Copy + Send + Sync + 'a,
{
    v.push(Case::new(MASK, lib, base, note, move |cfg| {
        run(cfg, inputs, f)
    }));
}

/// Copies of the batch the rows rotate through (see the module docs).
pub const LAYOUTS: usize = 8;

/// Timed batches on one copy before the next.
pub const PER_LAYOUT: u32 = 1024;

const PAGE: usize = 4096;

/// [`LAYOUTS`] copies of `bytes` in one allocation: copy `i` starts 64-byte
/// aligned at `i * 512` bytes past a page boundary (mod [`PAGE`]).
struct Layouts {
    arena: Vec<u8>,
    starts: [usize; LAYOUTS],
    len: usize,
}

impl Layouts {
    fn new(bytes: &[u8]) -> Self {
        let len = bytes.len();
        let stride = len.div_ceil(PAGE) * PAGE + PAGE / LAYOUTS;
        let mut arena = vec![0u8; PAGE + LAYOUTS * stride];
        let first = arena.as_ptr().align_offset(PAGE);
        let starts = std::array::from_fn(|i| first + i * stride);
        for &at in &starts {
            arena[at..at + len].copy_from_slice(bytes);
        }
        Layouts { arena, starts, len }
    }

    fn copy(&mut self, i: usize) -> &mut [u8] {
        let at = self.starts[i % LAYOUTS];
        &mut self.arena[at..at + self.len]
    }
}

fn run<F: Fn(&mut [u8], [u8; 4])>(cfg: &RunConfig, inputs: &Inputs, f: F) -> Measurement {
    let mut layouts = Layouts::new(&inputs.text_masked);
    let jobs: Vec<(usize, [u8; 4])> = (0..inputs.batch)
        .map(|i| (inputs.masked_payload_offset(i), inputs.keys[i]))
        .collect();
    // Verify against the plain definition at every offset used, in every
    // copy, then mask the copies back.
    for copy in 0..LAYOUTS {
        let buf = layouts.copy(copy);
        for (i, &(at, key)) in jobs.iter().enumerate() {
            f(&mut buf[at..at + PAYLOAD], key);
            assert_eq!(
                &buf[at..at + PAYLOAD],
                inputs.texts[i].as_bytes(),
                "unmask payload {i} in copy {copy}"
            );
            f(&mut buf[at..at + PAYLOAD], key);
        }
        assert_eq!(&buf[..], &inputs.text_masked[..], "copy {copy} masked back");
    }
    assert_eq!(
        cfg.batch, inputs.batch,
        "inputs are built for the run's batch size"
    );
    // (copies, jobs, batches left on this copy, current copy)
    let mut st = (layouts, jobs, PER_LAYOUT, 0usize);
    // The jobs (offsets and keys) and the length go through `black_box` once
    // per batch, as the encode rows' texts do, so no row gets a copy
    // specialized for a constant 128 bytes (LTO does that to a function with
    // a single call site) and none knows an offset or key ahead; within the
    // batch they reach each call in registers, as a frame reader's would.
    // (Passed one by one through `black_box`, each call also stored and
    // reloaded three scalars on the stack: a third of the stores of a
    // 128-byte unmask, and the harness's cost, not the unmask's.) The
    // buffer is observed once per batch through a thin reference, which
    // keeps every store.
    bench_batch(
        cfg,
        &mut st,
        |(_, _, left, copy)| {
            *left -= 1;
            if *left == 0 {
                *left = PER_LAYOUT;
                *copy = (*copy + 1) % LAYOUTS;
            }
        },
        |(layouts, jobs, _, copy), n| {
            let buf = layouts.copy(*copy);
            let len = black_box(PAYLOAD);
            // A thin reference to the Vec (see perf/README.md on slices).
            let jobs: &Vec<(usize, [u8; 4])> = black_box(&*jobs);
            for &(at, key) in &jobs[..n] {
                f(&mut buf[at..at + len], key);
            }
            black_box(&*buf);
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The copies hold the bytes, 64-byte aligned, one per 512-byte step of
    /// a page, without overlapping.
    #[test]
    fn layouts_spread_over_a_page() {
        let bytes: Vec<u8> = (0..9000u32).map(|i| i as u8).collect();
        let mut l = Layouts::new(&bytes);
        let mut seen = Vec::new();
        for i in 0..LAYOUTS {
            let c = l.copy(i);
            assert_eq!(&c[..], &bytes[..]);
            seen.push(c.as_ptr() as usize % PAGE);
        }
        let want: Vec<usize> = (0..LAYOUTS).map(|i| i * PAGE / LAYOUTS).collect();
        assert_eq!(seen, want);
        assert!(l.starts.windows(2).all(|w| w[1] - w[0] >= bytes.len()));
    }
}
