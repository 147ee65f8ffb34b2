//! WebSocket payload masking (RFC 6455 §5.3): XOR with a 4-byte key, in place
//! ([`apply_mask`]) or while copying ([`copy_masked`]).
//!
//! Every entry point takes the key *phase*, the index in the payload of the
//! first byte passed, so a payload that arrives in pieces is unmasked piece by
//! piece. The key is rotated by the phase once, into a word whose
//! native-endian bytes line up with the buffer; every path then XORs whole
//! words or vectors (scalar: 8 bytes, SSE2: 16, AVX2: 32), all with
//! unaligned loads and stores and no alignment prologue.
//!
//! No byte loops and, up to 128 bytes (SSE2) or 256 (AVX2), no loops at
//! all: the first and the last `m` bytes are done as `m / 16` or `m / 32`
//! vectors each, with `m` the smallest step (16, 32, 64, ...) with
//! `2m >= len`. The last vectors end at `len`, so they start at phase
//! `len % 4` and take the key rotated once more; every load comes before any
//! store, so the bytes both halves cover receive the same value twice. A
//! 128-byte payload is four 32-byte XORs with AVX2. Longer inputs loop over
//! 64 bytes per step and finish with one vector ending at `len`, read before
//! the loop.
//!
//! [`apply_mask`] and [`copy_masked`] take the AVX2 path from 32 bytes when
//! [`token::Avx2::detect`](super::token::Avx2::detect) finds it (one load
//! and one bit test of the cached detection; the path is a call, since a
//! `#[target_feature]` function cannot inline into baseline code), else the
//! SSE2 path, inlined when the target has SSE2; inputs under 16 bytes go to
//! the scalar path without looking. Under Miri the tokens exist for what
//! `-C target-feature` enables (SSE2 on x86_64; AVX2 in CI's second Miri
//! job), so the same dispatch runs there.
//!
//! On soft-float targets such as `x86_64-unknown-none` the compiler keeps
//! vector registers out of all code, so the "SSE2"/"AVX2" paths compile to
//! general-purpose-register code there: still correct, no FPU state touched.

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
use super::token::{Avx2, Sse2};
#[cfg(target_arch = "x86")]
use core::arch::x86::{
    __m128i, __m256i, _mm_loadu_si128, _mm_or_si128, _mm_set1_epi32, _mm_storeu_si128,
    _mm_xor_si128, _mm256_loadu_si256, _mm256_set1_epi32, _mm256_storeu_si256, _mm256_xor_si256,
};
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::{
    __m128i, __m256i, _mm_loadu_si128, _mm_or_si128, _mm_set1_epi32, _mm_storeu_si128,
    _mm_xor_si128, _mm256_loadu_si256, _mm256_set1_epi32, _mm256_storeu_si256, _mm256_xor_si256,
};

// ---------------------------------------------------------------------------
// Public API
// ---------------------------------------------------------------------------

/// XOR `buf` in place with `key`, where `buf[0]` is byte number `phase` of the
/// masked payload (so a payload that arrives in pieces is unmasked piece by
/// piece: call with `phase` = bytes already done). Only `phase % 4` matters.
///
/// Masking and unmasking are the same operation. Uses AVX2 from 32 bytes and
/// SSE2 from 16 when the CPU has them (see [`cpu::features()`](super::cpu::features)).
#[inline]
pub fn apply_mask(buf: &mut [u8], key: [u8; 4], phase: usize) {
    let k = key_word(key, phase);
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    if buf.len() >= 16 {
        return dispatch_mask(buf, k);
    }
    mask_scalar(buf, k);
}

/// [`apply_mask`], for a reader that validates the unmasked bytes right
/// after: the widest path the CPU has at every length from 16 bytes
/// (simdutf8 loads 32 bytes at a time with AVX2, and a load forwards from
/// one store of the same width but stalls until two narrower ones reach the
/// cache: measured, 31 against 42 ticks for a 128-byte masked text frame).
/// [`apply_mask`] now takes the same paths; this name stays for the reader.
#[inline]
pub fn apply_mask_widest(buf: &mut [u8], key: [u8; 4], phase: usize) {
    apply_mask(buf, key, phase);
}

/// `dst[i] = src[i] ^ key[(phase + i) % 4]`: mask or unmask while copying.
///
/// `dst.len()` must equal `src.len()`; this is checked in debug builds. In
/// release builds only the first `min(dst.len(), src.len())` bytes are
/// written and the rest of `dst` is left as it was.
#[inline(always)]
pub fn copy_masked(dst: &mut [u8], src: &[u8], key: [u8; 4], phase: usize) {
    debug_assert_eq!(
        dst.len(),
        src.len(),
        "copy_masked: dst and src lengths differ"
    );
    let k = key_word(key, phase);
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    if dst.len() >= 16 && src.len() >= 16 {
        return dispatch_copy(dst, src, k);
    }
    copy_scalar(dst, src, k);
}

/// Up to this many bytes, [`apply_mask_ascii`](super::mask_ascii::apply_mask_ascii)
/// uses its SSE2 path inline when the target has SSE2 (every x86_64 target
/// with vector registers): no dispatch, no call, no `vzeroupper`.
pub const SMALL: usize = 256;

/// [`apply_mask`] on the portable path: 8 bytes at a time with `u64` XORs.
pub fn apply_mask_scalar(buf: &mut [u8], key: [u8; 4], phase: usize) {
    mask_scalar(buf, key_word(key, phase));
}

/// [`copy_masked`] on the portable path: 8 bytes at a time with `u64` XORs.
pub fn copy_masked_scalar(dst: &mut [u8], src: &[u8], key: [u8; 4], phase: usize) {
    debug_assert_eq!(
        dst.len(),
        src.len(),
        "copy_masked: dst and src lengths differ"
    );
    copy_scalar(dst, src, key_word(key, phase));
}

/// [`apply_mask`] on the SSE2 path: straight-line up to 128 bytes, then 64 bytes per loop step.
///
/// # Safety
/// The CPU must support SSE2 (always true on x86_64; see
/// [`cpu::features()`](super::cpu::features)).
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[target_feature(enable = "sse2")]
pub unsafe fn apply_mask_sse2(buf: &mut [u8], key: [u8; 4], phase: usize) {
    // SAFETY: this function requires SSE2 of its caller.
    unsafe { mask_sse2(buf, key_word(key, phase)) };
}

/// [`copy_masked`] on the SSE2 path: straight-line up to 128 bytes, then 64 bytes per loop step.
///
/// # Safety
/// The CPU must support SSE2 (always true on x86_64; see
/// [`cpu::features()`](super::cpu::features)).
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[target_feature(enable = "sse2")]
pub unsafe fn copy_masked_sse2(dst: &mut [u8], src: &[u8], key: [u8; 4], phase: usize) {
    debug_assert_eq!(
        dst.len(),
        src.len(),
        "copy_masked: dst and src lengths differ"
    );
    // SAFETY: this function requires SSE2 of its caller.
    unsafe { copy_sse2(dst, src, key_word(key, phase)) };
}

/// [`apply_mask`] on the AVX2 path: straight-line up to 256 bytes, then 64
/// bytes per loop step; the SSE2 path for inputs under 32 bytes.
///
/// # Safety
/// The CPU must support AVX2 and the OS must save YMM state, as
/// [`cpu::features()`](super::cpu::features)`.avx2` reports.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[target_feature(enable = "avx2")]
pub unsafe fn apply_mask_avx2(buf: &mut [u8], key: [u8; 4], phase: usize) {
    // SAFETY: this function requires AVX2 of its caller.
    mask_avx2(unsafe { Avx2::new_unchecked() }, buf, key_word(key, phase));
}

/// [`copy_masked`] on the AVX2 path: straight-line up to 256 bytes, then 64
/// bytes per loop step; the SSE2 path for inputs under 32 bytes.
///
/// # Safety
/// The CPU must support AVX2 and the OS must save YMM state, as
/// [`cpu::features()`](super::cpu::features)`.avx2` reports.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[target_feature(enable = "avx2")]
pub unsafe fn copy_masked_avx2(dst: &mut [u8], src: &[u8], key: [u8; 4], phase: usize) {
    debug_assert_eq!(
        dst.len(),
        src.len(),
        "copy_masked: dst and src lengths differ"
    );
    // SAFETY: this function requires AVX2 of its caller.
    copy_avx2(
        unsafe { Avx2::new_unchecked() },
        dst,
        src,
        key_word(key, phase),
    );
}

// ---------------------------------------------------------------------------
// Key words
// ---------------------------------------------------------------------------

/// The key as it applies to memory starting at payload byte `phase`:
/// `key_word(key, phase).to_ne_bytes()[j] == key[(phase + j) % 4]`.
#[inline(always)]
pub(super) fn key_word(key: [u8; 4], phase: usize) -> u32 {
    advance(u32::from_ne_bytes(key), phase)
}

/// The key word for a position `n` bytes further on:
/// `advance(k, n).to_ne_bytes()[j] == k.to_ne_bytes()[(j + n) % 4]`.
#[inline(always)]
pub(super) fn advance(k: u32, n: usize) -> u32 {
    let bits = ((n & 3) * 8) as u32;
    if cfg!(target_endian = "little") {
        k.rotate_right(bits)
    } else {
        k.rotate_left(bits)
    }
}

/// The key word repeated over 8 bytes (the same in either byte order).
#[inline(always)]
fn wide(k: u32) -> u64 {
    u64::from(k) | (u64::from(k) << 32)
}

// ---------------------------------------------------------------------------
// Dispatch
// ---------------------------------------------------------------------------

/// AVX2 from 32 bytes when the CPU has it (one load and test of the cached
/// CPU byte, then a call: a `#[target_feature]` function does not inline
/// into code built without it), otherwise SSE2, inlined when the target has
/// it. The caller passes 16 bytes or more.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[inline(always)]
fn dispatch_mask(buf: &mut [u8], k: u32) {
    if buf.len() >= 32
        && let Some(t) = Avx2::detect()
    {
        // SAFETY: `t` exists, so the CPU has AVX2 (see `token`).
        unsafe { mask_avx2(t, buf, k) }
    } else if let Some(_t) = Sse2::detect() {
        // SAFETY: `_t` exists, so the CPU has SSE2.
        unsafe { mask_sse2(buf, k) }
    } else {
        mask_scalar(buf, k);
    }
}

/// [`dispatch_mask`] for [`copy_masked`].
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[inline(always)]
fn dispatch_copy(dst: &mut [u8], src: &[u8], k: u32) {
    if dst.len() >= 32
        && src.len() >= 32
        && let Some(t) = Avx2::detect()
    {
        // SAFETY: `t` exists, so the CPU has AVX2 (see `token`).
        unsafe { copy_avx2(t, dst, src, k) }
    } else if let Some(_t) = Sse2::detect() {
        // SAFETY: `_t` exists, so the CPU has SSE2.
        unsafe { copy_sse2(dst, src, k) }
    } else {
        copy_scalar(dst, src, k);
    }
}

/// The path [`apply_mask`] and [`copy_masked`] take from 32 bytes (and
/// [`apply_mask_ascii`](super::mask_ascii::apply_mask_ascii) over
/// [`SMALL`]), by the same token checks as their dispatch.
pub(super) fn path() -> super::Path {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    {
        if Avx2::detect().is_some() {
            return super::Path::Avx2;
        }
        if Sse2::detect().is_some() {
            return super::Path::Sse2;
        }
    }
    super::Path::Scalar
}

// ---------------------------------------------------------------------------
// Scalar
// ---------------------------------------------------------------------------

#[inline]
pub(super) fn mask_scalar(buf: &mut [u8], k: u32) {
    let len = buf.len();
    if let Some(&last) = buf.last_chunk::<8>() {
        // The last 8 bytes start at len - 8, i.e. at phase len % 4.
        let tail = u64::from_ne_bytes(last) ^ wide(advance(k, len));
        let k64 = wide(k);
        for w in buf.as_chunks_mut::<8>().0 {
            *w = (u64::from_ne_bytes(*w) ^ k64).to_ne_bytes();
        }
        if let Some(last) = buf.last_chunk_mut::<8>() {
            *last = tail.to_ne_bytes();
        }
    } else if let (Some(&head), Some(&last)) = (buf.first_chunk::<4>(), buf.last_chunk::<4>()) {
        // 4..=7 bytes: two overlapping words, both read before either is written.
        let head = u32::from_ne_bytes(head) ^ k;
        let tail = u32::from_ne_bytes(last) ^ advance(k, len);
        if let Some(w) = buf.first_chunk_mut::<4>() {
            *w = head.to_ne_bytes();
        }
        if let Some(w) = buf.last_chunk_mut::<4>() {
            *w = tail.to_ne_bytes();
        }
    } else {
        for (b, m) in buf.iter_mut().zip(k.to_ne_bytes()) {
            *b ^= m;
        }
    }
}

#[inline]
fn copy_scalar(dst: &mut [u8], src: &[u8], k: u32) {
    let n = dst.len().min(src.len());
    let (dst, src) = (&mut dst[..n], &src[..n]);
    if let (Some(d), Some(&s)) = (dst.last_chunk_mut::<8>(), src.last_chunk::<8>()) {
        // The last 8 bytes start at n - 8, i.e. at phase n % 4.
        *d = (u64::from_ne_bytes(s) ^ wide(advance(k, n))).to_ne_bytes();
        let k64 = wide(k);
        for (d, s) in dst
            .as_chunks_mut::<8>()
            .0
            .iter_mut()
            .zip(src.as_chunks::<8>().0)
        {
            *d = (u64::from_ne_bytes(*s) ^ k64).to_ne_bytes();
        }
    } else if let (Some(&head), Some(&last)) = (src.first_chunk::<4>(), src.last_chunk::<4>()) {
        // 4..=7 bytes: two overlapping words.
        if let Some(d) = dst.last_chunk_mut::<4>() {
            *d = (u32::from_ne_bytes(last) ^ advance(k, n)).to_ne_bytes();
        }
        if let Some(d) = dst.first_chunk_mut::<4>() {
            *d = (u32::from_ne_bytes(head) ^ k).to_ne_bytes();
        }
    } else {
        for ((d, s), m) in dst.iter_mut().zip(src).zip(k.to_ne_bytes()) {
            *d = s ^ m;
        }
    }
}

// ---------------------------------------------------------------------------
// SSE2
// ---------------------------------------------------------------------------

/// The SSE2 masking path. Up to 128 bytes it is straight-line code
/// ([`head_tail_sse2`], shared with `mask_ascii`): the first and the last
/// `m` bytes (m = 16, 32 or 64, the smallest with `2m >= len`) are loaded,
/// XORed with the key at their phase and stored, every load before any
/// store, so the bytes both halves cover are masked once. Longer inputs
/// loop over 64 bytes per step. Inlined when the whole
/// target has SSE2, as `mask_ascii::mask_ascii_sse2` explains.
///
/// # Safety
/// The CPU must support SSE2.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[cfg_attr(not(target_feature = "sse2"), target_feature(enable = "sse2"), inline)]
#[cfg_attr(target_feature = "sse2", inline(always))]
#[allow(unused_unsafe)]
unsafe fn mask_sse2(buf: &mut [u8], k: u32) {
    let len = buf.len();
    if len < 16 {
        return mask_scalar(buf, k);
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
    // The 16 bytes at `$at`, XORed with `$k`; and a store back.
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
    if len <= 128 {
        // SAFETY: 16 <= len <= 128, `p` is `buf`'s start; the caller
        // guarantees SSE2. The OR of the masked bytes is not needed here
        // (dead code once inlined).
        unsafe { head_tail_sse2(p, len, kv, kt) };
    } else {
        // SAFETY: len > 128: the 16 bytes at len - 16 are inside `buf`;
        // read before the loop may store to them.
        let tail = unsafe { get!(len - 16, kt) };
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
            }
            i += 64;
        }
        while i + 16 <= len {
            // SAFETY: i + 16 <= len, so the 16 bytes at i are inside `buf`.
            unsafe { put!(i, get!(i, kv)) };
            i += 16;
        }
        if i < len {
            // SAFETY: as for the load of `tail`.
            unsafe { put!(len - 16, tail) };
        }
    }
}

/// Masks 16 to 128 bytes at `p` in straight-line code: the first and the
/// last `m` bytes (m = 16, 32 or 64, the smallest with `2m >= len`), every
/// load before any store, so the bytes both halves cover are masked once.
/// `kv` is the key of a vector at phase 0, `kt` that of the vectors ending
/// at `len`. Returns the OR of the masked vectors, which covers every byte:
/// `mask_ascii` tests its high bits, [`mask_sse2`] drops it (the ORs are then
/// dead code, as the function is always inlined).
///
/// # Safety
/// The CPU must support SSE2; `16 <= len <= 128` and `p` is valid for `len`
/// bytes of reads and writes.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[inline(always)]
#[allow(unused_unsafe)]
pub(super) unsafe fn head_tail_sse2(p: *mut u8, len: usize, kv: __m128i, kt: __m128i) -> __m128i {
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
    if len <= 32 {
        // SAFETY: 16 <= len: the 16 bytes at 0 and at len - 16 are inside
        // the caller's `len` bytes; both are loaded before either is stored.
        unsafe {
            let (a, t) = (get!(0, kv), get!(len - 16, kt));
            put!(0, a);
            put!(len - 16, t);
            or!(a, t)
        }
    } else if len <= 64 {
        // SAFETY: 32 < len: the 32 bytes at 0 and at len - 32 are inside.
        unsafe {
            let (a, b) = (get!(0, kv), get!(16, kv));
            let (s, t) = (get!(len - 32, kt), get!(len - 16, kt));
            put!(0, a);
            put!(16, b);
            put!(len - 32, s);
            put!(len - 16, t);
            or!(or!(a, b), or!(s, t))
        }
    } else {
        // SAFETY: 64 < len <= 128: the 64 bytes at 0 and at len - 64 are inside.
        unsafe {
            let (a, b, c, d) = (get!(0, kv), get!(16, kv), get!(32, kv), get!(48, kv));
            let (q, r) = (get!(len - 64, kt), get!(len - 48, kt));
            let (s, t) = (get!(len - 32, kt), get!(len - 16, kt));
            put!(0, a);
            put!(16, b);
            put!(32, c);
            put!(48, d);
            put!(len - 64, q);
            put!(len - 48, r);
            put!(len - 32, s);
            put!(len - 16, t);
            or!(or!(or!(a, b), or!(c, d)), or!(or!(q, r), or!(s, t)))
        }
    }
}

/// The SSE2 copy path, shaped as [`mask_sse2`] (no ordering constraint:
/// `dst` and `src` cannot overlap).
///
/// # Safety
/// The CPU must support SSE2.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[cfg_attr(not(target_feature = "sse2"), target_feature(enable = "sse2"), inline)]
#[cfg_attr(target_feature = "sse2", inline(always))]
#[allow(unused_unsafe)]
unsafe fn copy_sse2(dst: &mut [u8], src: &[u8], k: u32) {
    let n = dst.len().min(src.len());
    if n < 16 {
        return copy_scalar(dst, src, k);
    }
    let (d, s) = (dst.as_mut_ptr(), src.as_ptr());
    // SAFETY: register-only SSE2 operations; the caller guarantees SSE2.
    let (kv, kt) = unsafe {
        (
            _mm_set1_epi32(k as i32),
            _mm_set1_epi32(advance(k, n) as i32),
        )
    };
    // `dst[at..at + 16] = src[at..at + 16] ^ key`.
    macro_rules! mv {
        ($at:expr, $k:expr) => {{
            let v = _mm_loadu_si128(s.add($at).cast::<__m128i>());
            _mm_storeu_si128(d.add($at).cast::<__m128i>(), _mm_xor_si128(v, $k));
        }};
    }
    // Every block below: each `mv!(at, _)` has 16 <= n and
    // at + 16 <= n <= both lengths, so it reads inside `src` and writes
    // inside `dst` (which cannot overlap `src`: it is `&mut`).
    if n <= 32 {
        // SAFETY: `16 <= n <= 32`: the blocks at 0 and n - 16 end by n.
        unsafe {
            mv!(0, kv);
            mv!(n - 16, kt);
        }
    } else if n <= 64 {
        // SAFETY: `32 < n <= 64`: the blocks at 0, 16, n - 32 and n - 16 end by n.
        unsafe {
            mv!(0, kv);
            mv!(16, kv);
            mv!(n - 32, kt);
            mv!(n - 16, kt);
        }
    } else if n <= 128 {
        // SAFETY: `64 < n <= 128`: the blocks at 0 to 48 and n - 64 to n - 16 end by n.
        unsafe {
            mv!(0, kv);
            mv!(16, kv);
            mv!(32, kv);
            mv!(48, kv);
            mv!(n - 64, kt);
            mv!(n - 48, kt);
            mv!(n - 32, kt);
            mv!(n - 16, kt);
        }
    } else {
        let mut i = 0;
        while i + 64 <= n {
            // SAFETY: `i + 64 <= n`: the four blocks from i end by n.
            unsafe {
                mv!(i, kv);
                mv!(i + 16, kv);
                mv!(i + 32, kv);
                mv!(i + 48, kv);
            }
            i += 64;
        }
        while i + 16 <= n {
            // SAFETY: `i + 16 <= n`.
            unsafe { mv!(i, kv) };
            i += 16;
        }
        if i < n {
            // SAFETY: `16 <= n`: the block at n - 16 ends at n.
            unsafe { mv!(n - 16, kt) };
        }
    }
}

// ---------------------------------------------------------------------------
// AVX2
// ---------------------------------------------------------------------------

/// The AVX2 masking path: [`mask_sse2`]'s shape with 32-byte vectors,
/// straight-line up to 256 bytes, a 64-byte loop beyond; under 32 bytes the
/// SSE2 path.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[target_feature(enable = "avx2")]
#[inline]
fn mask_avx2(_: Avx2, buf: &mut [u8], k: u32) {
    let len = buf.len();
    if len < 32 {
        // SAFETY: AVX2 (this function's feature) implies SSE2.
        return unsafe { mask_sse2(buf, k) };
    }
    let p = buf.as_mut_ptr();
    let kv = _mm256_set1_epi32(k as i32);
    // Vectors that end at `len` start at phase `len % 4`.
    let kt = _mm256_set1_epi32(advance(k, len) as i32);
    macro_rules! get {
        ($at:expr, $k:expr) => {
            _mm256_xor_si256(_mm256_loadu_si256(p.add($at).cast::<__m256i>()), $k)
        };
    }
    macro_rules! put {
        ($at:expr, $v:expr) => {
            _mm256_storeu_si256(p.add($at).cast::<__m256i>(), $v)
        };
    }
    if len <= 64 {
        // SAFETY: 32 <= len: the 32 bytes at 0 and at len - 32 are inside
        // `buf`; both are loaded before either is stored.
        unsafe {
            let (a, t) = (get!(0, kv), get!(len - 32, kt));
            put!(0, a);
            put!(len - 32, t);
        }
    } else if len <= 128 {
        // SAFETY: 64 < len: the 64 bytes at 0 and at len - 64 are inside `buf`.
        unsafe {
            let (a, b) = (get!(0, kv), get!(32, kv));
            let (s, t) = (get!(len - 64, kt), get!(len - 32, kt));
            put!(0, a);
            put!(32, b);
            put!(len - 64, s);
            put!(len - 32, t);
        }
    } else if len <= 256 {
        // SAFETY: 128 < len: the 128 bytes at 0 and at len - 128 are inside `buf`.
        unsafe {
            let (a, b, c, e) = (get!(0, kv), get!(32, kv), get!(64, kv), get!(96, kv));
            let (q, r) = (get!(len - 128, kt), get!(len - 96, kt));
            let (s, t) = (get!(len - 64, kt), get!(len - 32, kt));
            put!(0, a);
            put!(32, b);
            put!(64, c);
            put!(96, e);
            put!(len - 128, q);
            put!(len - 96, r);
            put!(len - 64, s);
            put!(len - 32, t);
        }
    } else {
        // SAFETY: len > 256: the 32 bytes at len - 32 are inside `buf`;
        // read before the loop may store to them.
        let tail = unsafe { get!(len - 32, kt) };
        let mut i = 0;
        while i + 64 <= len {
            // SAFETY: i + 64 <= len, so the 64 bytes at i are inside `buf`.
            unsafe {
                let (a, b) = (get!(i, kv), get!(i + 32, kv));
                put!(i, a);
                put!(i + 32, b);
            }
            i += 64;
        }
        if i + 32 <= len {
            // SAFETY: i + 32 <= len, so the 32 bytes at i are inside `buf`.
            unsafe { put!(i, get!(i, kv)) };
            i += 32;
        }
        if i < len {
            // SAFETY: as for the load of `tail`.
            unsafe { put!(len - 32, tail) };
        }
    }
}

/// The AVX2 copy path, shaped as [`mask_avx2`].
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[target_feature(enable = "avx2")]
#[inline]
fn copy_avx2(_: Avx2, dst: &mut [u8], src: &[u8], k: u32) {
    let n = dst.len().min(src.len());
    if n < 32 {
        // SAFETY: AVX2 (this function's feature) implies SSE2.
        return unsafe { copy_sse2(dst, src, k) };
    }
    let (d, s) = (dst.as_mut_ptr(), src.as_ptr());
    let kv = _mm256_set1_epi32(k as i32);
    let kt = _mm256_set1_epi32(advance(k, n) as i32);
    // SAFETY: AVX2 is this function's feature; 32 <= n and n is at most
    // both lengths, so `src` has n bytes to read and `dst` n to write (not
    // overlapping `src`: it is `&mut`). The blocks from the start take the
    // key at the start, the block(s) from the end the key at n - 32 and on.
    unsafe {
        crate::simd::copy::head_tail_avx2(
            d,
            s,
            n,
            |v| _mm256_xor_si256(v, kv),
            |v| _mm256_xor_si256(v, kt),
        );
    }
}

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec;
    use std::vec::Vec;

    /// Miri is ~1000x slower: it gets the same loops over smaller ranges.
    const MAX_LEN: usize = if cfg!(miri) { 131 } else { 4096 };
    const MAX_SPLIT_LEN: usize = if cfg!(miri) { 24 } else { 300 };
    /// Guard bytes checked on either side of the buffer under test.
    const GUARD: usize = 32;
    const SENTINEL: u8 = 0xA5;
    const MAX_OFFSET: usize = 33;
    const KEYS: [[u8; 4]; 2] = [[0x37, 0xfa, 0x21, 0x3d], [0x01, 0x80, 0xff, 0x7e]];

    type ApplyFn = fn(&mut [u8], [u8; 4], usize);
    type CopyFn = fn(&mut [u8], &[u8], [u8; 4], usize);

    fn reference(buf: &mut [u8], key: [u8; 4], phase: usize) {
        for (i, b) in buf.iter_mut().enumerate() {
            *b ^= key[(phase % 4 + i) % 4];
        }
    }

    /// Deterministic pseudo-random bytes (an LCG's high bits).
    fn data(len: usize, seed: u64) -> Vec<u8> {
        let mut s = seed;
        (0..len)
            .map(|_| {
                s = s
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                (s >> 56) as u8
            })
            .collect()
    }

    /// Whether a SIMD path may run here (a token exists). Under Miri (no
    /// `cpuid`) only when the feature is enabled at compile time, e.g. SSE2
    /// on x86_64.
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    fn have_sse2() -> bool {
        Sse2::detect().is_some()
    }

    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    fn have_avx2() -> bool {
        Avx2::detect().is_some()
    }

    fn apply_paths() -> Vec<(&'static str, ApplyFn)> {
        let mut paths: Vec<(&'static str, ApplyFn)> = vec![
            ("dispatch", apply_mask),
            ("widest", apply_mask_widest),
            ("scalar", apply_mask_scalar),
        ];
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        {
            if have_sse2() {
                // SAFETY: only used when SSE2 is available (`have_sse2`).
                paths.push(("sse2", |b, k, p| unsafe { apply_mask_sse2(b, k, p) }));
            }
            if have_avx2() {
                // SAFETY: only used when AVX2 is available (`have_avx2`).
                paths.push(("avx2", |b, k, p| unsafe { apply_mask_avx2(b, k, p) }));
            }
        }
        // Under Miri with AVX2 compiled in (CI's second Miri run) the
        // narrower paths were run by the first: the dispatch and AVX2 only.
        if cfg!(all(miri, target_feature = "avx2")) {
            paths.retain(|(name, _)| matches!(*name, "dispatch" | "avx2"));
        }
        paths
    }

    fn copy_paths() -> Vec<(&'static str, CopyFn)> {
        let mut paths: Vec<(&'static str, CopyFn)> =
            vec![("dispatch", copy_masked), ("scalar", copy_masked_scalar)];
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        {
            if have_sse2() {
                // SAFETY: only used when SSE2 is available (`have_sse2`).
                paths.push(("sse2", |d, s, k, p| unsafe { copy_masked_sse2(d, s, k, p) }));
            }
            if have_avx2() {
                // SAFETY: only used when AVX2 is available (`have_avx2`).
                paths.push(("avx2", |d, s, k, p| unsafe { copy_masked_avx2(d, s, k, p) }));
            }
        }
        // Under Miri with AVX2 compiled in (CI's second Miri run) the
        // narrower paths were run by the first: the dispatch and AVX2 only.
        if cfg!(all(miri, target_feature = "avx2")) {
            paths.retain(|(name, _)| matches!(*name, "dispatch" | "avx2"));
        }
        paths
    }

    #[test]
    fn paths_present() {
        let names: Vec<_> = apply_paths().iter().map(|p| p.0).collect();
        std::eprintln!("mask paths under test: {names:?}");
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        assert!(names.contains(&"sse2"));
    }

    /// Lengths to try: every one up to `MAX_LEN`; under Miri the short ones
    /// and those at the edges of the 16/32/64-byte steps.
    fn lengths() -> Vec<usize> {
        if cfg!(miri) {
            (0..=40)
                .chain([47, 48, 63, 64, 65, 95, 96, 97, 127, 128, 129, MAX_LEN])
                .collect()
        } else {
            (0..=MAX_LEN).collect()
        }
    }

    /// Misalignments to try for a given length: all of 0..=33 for short
    /// inputs, a rotating handful for long ones (the loops are the same).
    fn offsets(len: usize) -> Vec<usize> {
        if len <= 256 {
            (0..=MAX_OFFSET)
                .step_by(if cfg!(miri) { 11 } else { 1 })
                .collect()
        } else {
            vec![0, 1 + len % 32, MAX_OFFSET - len % 7]
        }
    }

    fn check_guards(
        storage: &[u8],
        start: usize,
        len: usize,
        what: &dyn Fn() -> std::string::String,
    ) {
        let before = &storage[start - GUARD..start];
        let after = &storage[start + len..start + len + GUARD];
        assert!(
            before.iter().chain(after).all(|&b| b == SENTINEL),
            "{}: wrote outside the buffer",
            what()
        );
    }

    #[test]
    fn apply_matches_reference_and_is_involutive() {
        let src_all = data(MAX_LEN + 8, 1);
        let mut storage = vec![SENTINEL; GUARD + MAX_OFFSET + MAX_LEN + GUARD];
        let paths = apply_paths();
        for len in lengths() {
            let src = &src_all[len % 8..][..len];
            let key = KEYS[len % 2];
            for phase in 0..4 {
                let mut expected = src.to_vec();
                reference(&mut expected, key, phase);
                for off in offsets(len) {
                    let start = GUARD + off;
                    for &(name, f) in &paths {
                        let what = || std::format!("{name}: len {len} offset {off} phase {phase}");
                        storage[start..start + len].copy_from_slice(src);
                        f(&mut storage[start..start + len], key, phase);
                        assert!(storage[start..start + len] == expected[..], "{}", what());
                        check_guards(&storage, start, len, &what);
                        f(&mut storage[start..start + len], key, phase);
                        assert!(storage[start..start + len] == *src, "{}: twice", what());
                        storage[start..start + len].fill(SENTINEL);
                    }
                }
            }
        }
    }

    #[test]
    fn copy_matches_reference() {
        let src_all = data(MAX_LEN + MAX_OFFSET, 2);
        let mut storage = vec![SENTINEL; GUARD + MAX_OFFSET + MAX_LEN + GUARD];
        let paths = copy_paths();
        for len in lengths() {
            let key = KEYS[len % 2];
            for phase in 0..4 {
                for off in offsets(len) {
                    // Misalign the source differently from the destination.
                    let src = &src_all[(off * 7) % (MAX_OFFSET + 1)..][..len];
                    let mut expected = src.to_vec();
                    reference(&mut expected, key, phase);
                    let start = GUARD + off;
                    for &(name, f) in &paths {
                        let what = || std::format!("{name}: len {len} offset {off} phase {phase}");
                        f(&mut storage[start..start + len], src, key, phase);
                        assert!(storage[start..start + len] == expected[..], "{}", what());
                        check_guards(&storage, start, len, &what);
                        storage[start..start + len].fill(SENTINEL);
                    }
                }
            }
        }
    }

    #[test]
    fn phase_counts_modulo_4() {
        let src = data(200, 3);
        let key = KEYS[0];
        for &phase in &[4, 5, 6, 7, 1_000_003, usize::MAX - 1, usize::MAX] {
            for len in (0..=200).step_by(if cfg!(miri) { 13 } else { 1 }) {
                let mut expected = src[..len].to_vec();
                reference(&mut expected, key, phase % 4);
                for &(name, f) in &apply_paths() {
                    let mut buf = src[..len].to_vec();
                    f(&mut buf, key, phase);
                    assert_eq!(buf, expected, "{name}: len {len} phase {phase}");
                }
                for &(name, f) in &copy_paths() {
                    let mut buf = vec![0; len];
                    f(&mut buf, &src[..len], key, phase);
                    assert_eq!(buf, expected, "{name} copy: len {len} phase {phase}");
                }
            }
        }
    }

    #[test]
    fn pieces_with_phase_continuation_match_whole() {
        let src_all = data(MAX_SPLIT_LEN, 4);
        let mut buf = vec![0u8; MAX_SPLIT_LEN];
        let apply = apply_paths();
        let copy = copy_paths();
        for len in 0..=MAX_SPLIT_LEN {
            let src = &src_all[..len];
            let key = KEYS[len % 2];
            for phase in 0..4 {
                let mut expected = src.to_vec();
                reference(&mut expected, key, phase);
                for split in 0..=len {
                    for &(name, f) in &apply {
                        let buf = &mut buf[..len];
                        buf.copy_from_slice(src);
                        let (a, b) = buf.split_at_mut(split);
                        f(a, key, phase);
                        f(b, key, phase + split);
                        assert!(
                            *buf == expected[..],
                            "{name}: len {len} split {split} phase {phase}"
                        );
                    }
                    for &(name, f) in &copy {
                        let buf = &mut buf[..len];
                        let (a, b) = buf.split_at_mut(split);
                        f(a, &src[..split], key, phase);
                        f(b, &src[split..], key, phase + split);
                        assert!(
                            *buf == expected[..],
                            "{name} copy: len {len} split {split} phase {phase}"
                        );
                    }
                }
            }
        }
    }

    /// Lengths that differ: a debug assertion, and in release only the
    /// common prefix is written. The inner paths must stay in bounds either way.
    #[test]
    fn copy_with_unequal_lengths_writes_common_prefix() {
        type Inner = fn(&mut [u8], &[u8], u32);
        let mut inner: Vec<(&str, Inner)> = vec![("scalar", copy_scalar)];
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        {
            if have_sse2() {
                // SAFETY: only used when SSE2 is available (`have_sse2`).
                inner.push(("sse2", |d, s, k| unsafe { copy_sse2(d, s, k) }));
            }
            if have_avx2() {
                // SAFETY: only used when AVX2 is available (`have_avx2`).
                inner.push(("avx2", |d, s, k| unsafe {
                    copy_avx2(Avx2::new_unchecked(), d, s, k)
                }));
            }
        }
        let key = KEYS[1];
        let src_all = data(130, 5);
        let step = if cfg!(miri) { 13 } else { 1 };
        for dlen in (0..=130).step_by(step) {
            for slen in (0..=130).step_by(step) {
                let n = dlen.min(slen);
                let mut expected = vec![SENTINEL; dlen];
                expected[..n].copy_from_slice(&src_all[..n]);
                reference(&mut expected[..n], key, 3);
                for &(name, f) in &inner {
                    let mut dst = vec![SENTINEL; dlen];
                    f(&mut dst, &src_all[..slen], key_word(key, 3));
                    assert_eq!(dst, expected, "{name}: dst {dlen} src {slen}");
                }
            }
        }
    }

    #[test]
    #[cfg_attr(debug_assertions, should_panic(expected = "lengths differ"))]
    fn copy_masked_unequal_lengths() {
        let mut dst = [0u8; 40];
        copy_masked(&mut dst, &[0xff; 20], [1, 2, 3, 4], 0);
        assert_eq!(dst[..4], [0xfe, 0xfd, 0xfc, 0xfb]);
        assert!(dst[20..].iter().all(|&b| b == 0));
    }

    #[test]
    fn rfc6455_example() {
        // RFC 6455 §5.7: a masked "Hello" from a client.
        let mut payload = *b"\x7f\x9f\x4d\x51\x58";
        apply_mask(&mut payload, [0x37, 0xfa, 0x21, 0x3d], 0);
        assert_eq!(&payload, b"Hello");
    }
}
