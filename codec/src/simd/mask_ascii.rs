//! Unmasking and the ASCII check of a text payload in one pass.
//!
//! A server reads masked text: every payload is XORed with its key, then
//! checked as UTF-8. Done separately, the check reloads every byte the
//! unmasking just stored (and a load that spans two stores waits for them to
//! reach the cache). [`apply_mask_ascii`] ORs each unmasked vector into an
//! accumulator while it is still in a register and tests the high bits once
//! at the end, so an ASCII payload (most market data) is unmasked and known
//! valid UTF-8 in a single pass; only a payload with a non-ASCII byte goes
//! on to a full UTF-8 check.
//!
//! Same semantics as [`apply_mask`](super::mask::apply_mask): any length,
//! alignment and key phase; the last vector is read first and stored last,
//! overlapping the loop's last step (the overlapping bytes are ORed twice,
//! which changes nothing).

#[cfg(target_arch = "x86")]
use core::arch::x86::{
    __m128i, __m256i, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi32,
    _mm_storeu_si128, _mm_xor_si128, _mm256_loadu_si256, _mm256_movemask_epi8, _mm256_or_si256,
    _mm256_set1_epi32, _mm256_storeu_si256, _mm256_xor_si256,
};
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::{
    __m128i, __m256i, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi32,
    _mm_storeu_si128, _mm_xor_si128, _mm256_loadu_si256, _mm256_movemask_epi8, _mm256_or_si256,
    _mm256_set1_epi32, _mm256_storeu_si256, _mm256_xor_si256,
};

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
use super::mask::{advance, head_tail_sse2};
use super::mask::{key_word, mask_scalar};
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
use super::token::{Avx2, Sse2};
use super::utf8::is_ascii;

/// XOR `buf` in place with `key` (`buf[0]` being byte number `phase` of the
/// payload, as for [`apply_mask`](super::mask::apply_mask)) and return
/// whether every byte of the result is ASCII (below 0x80).
///
/// Inputs of 16 to [`SMALL`](super::mask::SMALL) bytes take the inlined SSE2 path when the
/// target has SSE2; longer ones the widest path the CPU has.
#[inline(always)]
pub fn apply_mask_ascii(buf: &mut [u8], key: [u8; 4], phase: usize) -> bool {
    let k = key_word(key, phase);
    #[cfg(all(
        any(target_arch = "x86", target_arch = "x86_64"),
        target_feature = "sse2",
        not(miri)
    ))]
    if (16..=super::mask::SMALL).contains(&buf.len()) {
        // SAFETY: SSE2 is enabled for the whole target (cfg above).
        return unsafe { mask_ascii_sse2(buf, k) };
    }
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    if buf.len() >= 16 {
        return dispatch(buf, k);
    }
    mask_ascii_scalar(buf, k)
}

/// [`apply_mask_ascii`] on the portable path: `u64` words, then the check.
pub fn apply_mask_ascii_scalar(buf: &mut [u8], key: [u8; 4], phase: usize) -> bool {
    mask_ascii_scalar(buf, key_word(key, phase))
}

/// [`apply_mask_ascii`] on the SSE2 path: 64 bytes per loop step, then 32, then 16.
///
/// # Safety
/// The CPU must support SSE2 (always true on x86_64).
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[target_feature(enable = "sse2")]
pub unsafe fn apply_mask_ascii_sse2(buf: &mut [u8], key: [u8; 4], phase: usize) -> bool {
    // SAFETY: this function requires SSE2 of its caller.
    unsafe { mask_ascii_sse2(buf, key_word(key, phase)) }
}

/// [`apply_mask_ascii`] on the AVX2 path: 64 bytes per loop step, then 32,
/// then the SSE2 path for inputs under 32 bytes.
///
/// # Safety
/// The CPU must support AVX2 and the OS must save YMM state, as
/// [`cpu::features()`](super::cpu::features)`.avx2` reports.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[target_feature(enable = "avx2")]
pub unsafe fn apply_mask_ascii_avx2(buf: &mut [u8], key: [u8; 4], phase: usize) -> bool {
    // SAFETY: this function requires AVX2 of its caller.
    mask_ascii_avx2(unsafe { Avx2::new_unchecked() }, buf, key_word(key, phase))
}

/// The widest path whose token exists, as [`mask::path`](super::mask) reports.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[inline]
fn dispatch(buf: &mut [u8], k: u32) -> bool {
    if let Some(t) = Avx2::detect() {
        // SAFETY: `t` exists, so the CPU has AVX2 (see `token`).
        unsafe { mask_ascii_avx2(t, buf, k) }
    } else if let Some(_t) = Sse2::detect() {
        // SAFETY: `_t` exists, so the CPU has SSE2.
        unsafe { mask_ascii_sse2(buf, k) }
    } else {
        mask_ascii_scalar(buf, k)
    }
}

#[inline]
fn mask_ascii_scalar(buf: &mut [u8], k: u32) -> bool {
    mask_scalar(buf, k);
    is_ascii(buf)
}

/// The SSE2 path. When the whole target has SSE2 (x86_64) it carries no
/// `#[target_feature]` and is inlined into the caller (a `#[target_feature]`
/// function is a call, with the caller's registers spilled around it);
/// elsewhere it enables SSE2 itself. Either way the caller must know the
/// CPU has SSE2, hence `unsafe`; the intrinsic calls sit in `unsafe` blocks,
/// which the `#[target_feature]` build does not need (`unused_unsafe`).
///
/// Up to 128 bytes it is the straight-line code it shares with
/// `mask::mask_sse2` (`mask::head_tail_sse2`: the first and the last `m`
/// bytes, every load before any store), whose OR of the unmasked vectors it
/// tests for a high bit (bytes both halves cover are ORed twice, which
/// changes nothing). Longer inputs loop over 64 bytes per step.
///
/// # Safety
/// The CPU must support SSE2.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[cfg_attr(not(target_feature = "sse2"), target_feature(enable = "sse2"), inline)]
#[cfg_attr(target_feature = "sse2", inline(always))]
#[allow(unused_unsafe)]
unsafe fn mask_ascii_sse2(buf: &mut [u8], k: u32) -> bool {
    let len = buf.len();
    if len < 16 {
        return mask_ascii_scalar(buf, k);
    }
    let p = buf.as_mut_ptr();
    // SAFETY: register-only SSE2 operations; the caller guarantees SSE2.
    // `kt` is the key of every vector that ends at `len`: they start at
    // `len - 16 * j`, i.e. at phase `len % 4`.
    let (kv, kt) = unsafe {
        (
            _mm_set1_epi32(k as i32),
            _mm_set1_epi32(advance(k, len) as i32),
        )
    };
    // The 16 bytes at `$at`, XORed with `$k`; a store back; an OR.
    macro_rules! get {
        ($at:expr, $k:expr) => {
            _mm_xor_si128(_mm_loadu_si128(p.add($at).cast::<__m128i>()), $k)
        };
    }
    macro_rules! put {
        ($at:expr, $v:expr) => {
            _mm_storeu_si128(p.add($at).cast::<__m128i>(), $v)
        };
    }
    macro_rules! or {
        ($a:expr, $b:expr) => {
            _mm_or_si128($a, $b)
        };
    }
    let acc = if len <= 128 {
        // SAFETY: 16 <= len <= 128, `p` is `buf`'s start; the caller
        // guarantees SSE2.
        unsafe { head_tail_sse2(p, len, kv, kt) }
    } else {
        // SAFETY: len > 128: the 16 bytes at len - 16 are inside `buf`;
        // read before the loop may store to them.
        let tail = unsafe { get!(len - 16, kt) };
        let (mut acc, mut acc2) = (tail, tail);
        // 64 bytes per loop step, then at most 32 + 16.
        let mut i = 0;
        while i + 64 <= len {
            // SAFETY: i + 64 <= len, so the 64 bytes at i are inside `buf`.
            unsafe {
                let (a, b, c, d) = (
                    get!(i, kv),
                    get!(i + 16, kv),
                    get!(i + 32, kv),
                    get!(i + 48, kv),
                );
                put!(i, a);
                put!(i + 16, b);
                put!(i + 32, c);
                put!(i + 48, d);
                acc = or!(acc, or!(a, c));
                acc2 = or!(acc2, or!(b, d));
            }
            i += 64;
        }
        if i + 32 <= len {
            // SAFETY: i + 32 <= len, so the 32 bytes at i are inside `buf`.
            unsafe {
                let (a, b) = (get!(i, kv), get!(i + 16, kv));
                put!(i, a);
                put!(i + 16, b);
                acc = or!(acc, a);
                acc2 = or!(acc2, b);
            }
            i += 32;
        }
        if i + 16 <= len {
            // SAFETY: i + 16 <= len, so the 16 bytes at i are inside `buf`.
            unsafe {
                let a = get!(i, kv);
                put!(i, a);
                acc = or!(acc, a);
            }
        }
        // A multiple of 16 is done (the tail is the loop's last step again).
        if !len.is_multiple_of(16) {
            // SAFETY: as for the load of `tail`.
            unsafe { put!(len - 16, tail) };
        }
        // SAFETY: register-only SSE2 operation; the caller guarantees SSE2.
        unsafe { or!(acc, acc2) }
    };
    // SAFETY: register-only SSE2 operation; the caller guarantees SSE2.
    unsafe { _mm_movemask_epi8(acc) == 0 }
}

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[target_feature(enable = "avx2")]
#[inline]
fn mask_ascii_avx2(_: Avx2, buf: &mut [u8], k: u32) -> bool {
    let len = buf.len();
    if len < 32 {
        // SAFETY: AVX2 (this function's feature) implies SSE2.
        return unsafe { mask_ascii_sse2(buf, k) };
    }
    let p = buf.as_mut_ptr();
    let kv = _mm256_set1_epi32(k as i32);
    // SAFETY: len >= 32, so the 32 bytes at len - 32 are inside `buf`.
    let tail = unsafe { _mm256_loadu_si256(p.add(len - 32).cast::<__m256i>()) };
    // Those bytes start at phase (len - 32) % 4 == len % 4.
    let tail = _mm256_xor_si256(tail, _mm256_set1_epi32(advance(k, len) as i32));
    let (mut acc, mut acc2) = (tail, tail);
    let mut i = 0;
    while i + 64 <= len {
        // SAFETY: i + 64 <= len, so the 64 bytes at i are inside `buf`.
        unsafe {
            let q = p.add(i).cast::<__m256i>();
            let a = _mm256_xor_si256(_mm256_loadu_si256(q), kv);
            let b = _mm256_xor_si256(_mm256_loadu_si256(q.add(1)), kv);
            _mm256_storeu_si256(q, a);
            _mm256_storeu_si256(q.add(1), b);
            acc = _mm256_or_si256(acc, a);
            acc2 = _mm256_or_si256(acc2, b);
        }
        i += 64;
    }
    if i + 32 <= len {
        // SAFETY: i + 32 <= len, so the 32 bytes at i are inside `buf`.
        unsafe {
            let q = p.add(i).cast::<__m256i>();
            let a = _mm256_xor_si256(_mm256_loadu_si256(q), kv);
            _mm256_storeu_si256(q, a);
            acc = _mm256_or_si256(acc, a);
        }
    }
    // A multiple of 32 is done (the tail is the loop's last step again).
    if !len.is_multiple_of(32) {
        // SAFETY: as for the load of `tail`.
        unsafe { _mm256_storeu_si256(p.add(len - 32).cast::<__m256i>(), tail) };
    }
    _mm256_movemask_epi8(_mm256_or_si256(acc, acc2)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec;
    use std::vec::Vec;

    const MAX_LEN: usize = if cfg!(miri) { 200 } else { 1100 };
    const KEYS: [[u8; 4]; 2] = [[0x37, 0xfa, 0x21, 0x3d], [0x01, 0x80, 0xff, 0x7e]];
    const GUARD: usize = 32;
    const SENTINEL: u8 = 0xA5;

    type Path = fn(&mut [u8], [u8; 4], usize) -> bool;

    fn paths() -> Vec<(&'static str, Path)> {
        let mut v: Vec<(&'static str, Path)> = vec![
            ("dispatch", apply_mask_ascii),
            ("scalar", apply_mask_ascii_scalar),
        ];
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        {
            let (sse2, avx2) = (Sse2::detect().is_some(), Avx2::detect().is_some());
            if sse2 {
                // SAFETY: only used when SSE2 is available.
                v.push(("sse2", |b, k, p| unsafe { apply_mask_ascii_sse2(b, k, p) }));
            }
            if avx2 {
                // SAFETY: only used when AVX2 is available.
                v.push(("avx2", |b, k, p| unsafe { apply_mask_ascii_avx2(b, k, p) }));
            }
        }
        // Under Miri with AVX2 compiled in (CI's second Miri run) the
        // narrower paths were run by the first: the dispatch and AVX2 only.
        if cfg!(all(miri, target_feature = "avx2")) {
            v.retain(|(name, _)| matches!(*name, "dispatch" | "avx2"));
        }
        v
    }

    fn mask_ref(buf: &mut [u8], key: [u8; 4], phase: usize) {
        for (i, b) in buf.iter_mut().enumerate() {
            *b ^= key[(phase + i) % 4];
        }
    }

    fn lengths() -> Vec<usize> {
        if cfg!(miri) {
            // Every length up to two SSE2 vectors, then the block edges.
            (0..=33)
                .chain([47, 48, 63, 64, 65, 96, 97, 127, 128, 129, 144, 161, MAX_LEN])
                .collect()
        } else {
            (0..=MAX_LEN).collect()
        }
    }

    /// Every path leaves exactly the unmasked bytes (and nothing outside
    /// them) and reports ASCII-ness right, for ASCII payloads and payloads
    /// with one high byte at the start, the end and at rotating places.
    #[test]
    fn matches_reference() {
        let paths = paths();
        let mut storage = vec![SENTINEL; GUARD + 40 + MAX_LEN + GUARD];
        for len in lengths() {
            let plain: Vec<u8> = (0..len).map(|i| b' ' + (i * 7 % 90) as u8).collect();
            let mut highs = vec![None];
            if len > 0 {
                highs.extend([Some(0), Some(len - 1), Some(len / 2), Some(len * 5 / 7)]);
            }
            for high in highs {
                let mut text = plain.clone();
                if let Some(at) = high {
                    text[at] = 0x80 | (len as u8);
                }
                let key = KEYS[len % 2];
                for phase in 0..4 {
                    let mut wire = text.clone();
                    mask_ref(&mut wire, key, phase);
                    let off = (len * 3 + phase) % 40;
                    let start = GUARD + off;
                    for &(name, f) in &paths {
                        storage[start..start + len].copy_from_slice(&wire);
                        let ascii = f(&mut storage[start..start + len], key, phase);
                        let what = || std::format!("{name}: len {len} high {high:?} phase {phase}");
                        assert!(storage[start..start + len] == text[..], "{}", what());
                        assert_eq!(ascii, high.is_none(), "{}", what());
                        // A vector path can stray at most a vector (32 bytes) either side.
                        assert!(
                            storage[start - GUARD..start].iter().all(|&b| b == SENTINEL)
                                && storage[start + len..start + len + GUARD]
                                    .iter()
                                    .all(|&b| b == SENTINEL),
                            "{}: wrote outside the buffer",
                            what()
                        );
                        storage[start..start + len].fill(SENTINEL);
                    }
                }
            }
        }
    }

    /// A high byte at every position of short payloads, on every path.
    #[test]
    fn every_high_position() {
        let paths = paths();
        let max = if cfg!(miri) { 33 } else { 200 };
        for len in 1..=max {
            // Under Miri every position of the lengths around the vector edges only.
            if cfg!(miri) && !matches!(len, 1..=4 | 15..=17 | 31..=33) {
                continue;
            }
            for at in 0..len {
                let mut text: Vec<u8> = vec![b'a'; len];
                text[at] = 0xC3;
                let mut wire = text.clone();
                mask_ref(&mut wire, KEYS[1], 3);
                for &(name, f) in &paths {
                    let mut buf = wire.clone();
                    assert!(!f(&mut buf, KEYS[1], 3), "{name}: len {len} at {at}");
                    assert_eq!(buf, text, "{name}: len {len} at {at}");
                }
            }
        }
    }
}
