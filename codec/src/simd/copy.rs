//! Copies without a call into `memcpy`.
//!
//! A 128-byte market-data message is copied in a few nanoseconds, so the call
//! into the C library's `memcpy` (a PLT jump, its size dispatch, `vzeroupper`)
//! is a large part of encoding one. [`copy`] handles up to 256 bytes with
//! straight-line fixed-size copies of the head and the tail, which overlap
//! (the bytes they share receive the same value twice), the way `memcpy`
//! implementations do it inside. From 32 bytes, on a CPU with AVX2, the
//! copies are 32-byte loads and stores: a frame's payload starts 2 or 4
//! bytes after a header, so its stores are unaligned, and unaligned 16-byte
//! stores that cross cache lines cost far more than 32-byte ones (measured on
//! the AMD Zen 3 here: 13.4 against 6.9 ticks per 128-byte copy at a 130-byte
//! stride). Without AVX2 the compiler turns each fixed-size copy into SSE2
//! moves. Under 16 bytes, two overlapping 4- or 8-byte moves (or up to three
//! single bytes): the short pieces of an HTTP request (header names and
//! values, paths) and of control frames.
//!
//! Longer copies (a batch fed to a reader, a large payload) stay on the AVX2
//! loop too, because `memcpy` has a cliff: glibc picks `rep movsb` from a few
//! KiB up to about 1 MiB, and on the AMD Zen 3 here that runs at 1.35 bytes
//! per tick instead of about 19-40 when the destination sits 1 to 15 bytes
//! past the source modulo 4 KiB (an 8 KiB copy: 6,123 ticks against 217;
//! 512 KiB: 388,183 against 27,166). Which placement a buffer gets is up to
//! the allocator, so a reader fed from a kernel-bypass ring could land on
//! it for good. The AVX2 loop measured 198-292 ticks for that 8 KiB in every
//! placement, never slower than `memcpy` from 512 B to 2 MiB (within 3%
//! above 1 MiB, where both are bound by the caches). Without AVX2, longer
//! copies go to `copy_from_slice`.

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
use super::token::Avx2;
#[cfg(target_arch = "x86")]
use core::arch::x86::{__m256i, _mm256_loadu_si256, _mm256_storeu_si256};
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::{__m256i, _mm256_loadu_si256, _mm256_storeu_si256};

/// Copy `src` into `dst[..src.len()]`; `dst` must be at least as long
/// (checked: a shorter `dst` panics like `copy_from_slice`, which callers
/// rule out by sizing `dst` first).
#[inline(always)]
pub fn copy(dst: &mut [u8], src: &[u8]) {
    let n = src.len();
    let dst = &mut dst[..n];
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    if n >= 32
        && let Some(t) = Avx2::detect()
    {
        // SAFETY: `t` exists, so the CPU has AVX2 (see `token`); 32 <= n,
        // `src` is `n` long and so is `dst` (sliced above), and `&mut`
        // rules out overlap.
        return unsafe { copy_avx2(t, dst.as_mut_ptr(), src.as_ptr(), n) };
    }
    match n {
        0 => {}
        1..=3 => {
            dst[0] = src[0];
            dst[n / 2] = src[n / 2];
            dst[n - 1] = src[n - 1];
        }
        4..=7 => head_tail::<4>(dst, src),
        8..=15 => head_tail::<8>(dst, src),
        16..=32 => head_tail::<16>(dst, src),
        33..=64 => head_tail::<32>(dst, src),
        65..=128 => head_tail::<64>(dst, src),
        129..=256 => {
            block::<64>(dst, src, 0);
            block::<64>(dst, src, 64);
            block::<64>(dst, src, n - 128);
            block::<64>(dst, src, n - 64);
        }
        _ => dst.copy_from_slice(src),
    }
}

/// [`copy`] from 32 bytes with 32-byte moves: up to 256 bytes the head and
/// the tail blocks, overlapping as in [`copy`], longer a loop. Raw pointers
/// and no checks: the caller has them all, and this is a call (a
/// `#[target_feature]` function does not inline into code built without
/// AVX2), so every instruction here is paid per message.
///
/// # Safety
/// `32 <= n`; `s` is valid for `n` bytes of reads and `d` for `n` bytes of
/// writes, and the two ranges do not overlap (the token proves AVX2).
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn copy_avx2(_: Avx2, d: *mut u8, s: *const u8, n: usize) {
    if n > 256 {
        // SAFETY: the caller's contract is this one's, and 256 < n.
        return unsafe { copy_long_avx2(d, s, n) };
    }
    // SAFETY: the caller's contract is this one's.
    unsafe { head_tail_avx2(d, s, n, |v| v, |v| v) }
}

/// [`copy_avx2`] over 256 bytes: one unaligned block at the start, then
/// blocks stored at 32-byte aligned addresses of `d` (a reader's buffer or
/// a frame's payload rarely starts aligned, and every other unaligned
/// 32-byte store would then cross a cache line), then one unaligned block
/// ending at `n`. The blocks overlap where they meet; the loads stay
/// unaligned.
///
/// # Safety
/// As [`copy_avx2`], with `256 < n`.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[target_feature(enable = "avx2")]
unsafe fn copy_long_avx2(d: *mut u8, s: *const u8, n: usize) {
    // SAFETY: for every load and store below, the block at `at` has
    // `at + 32 <= n` (0 and n - 32 as 32 < n; in the loops by their
    // conditions), so it lies inside both ranges of the caller's contract.
    unsafe {
        let first = _mm256_loadu_si256(s.cast::<__m256i>());
        _mm256_storeu_si256(d.cast::<__m256i>(), first);
        // The first aligned address past `d`: 1 to 32 bytes in, so the
        // first block already covers what lies before it.
        let mut at = 32 - (d as usize & 31);
        while at + 64 <= n {
            let a = _mm256_loadu_si256(s.add(at).cast::<__m256i>());
            let b = _mm256_loadu_si256(s.add(at + 32).cast::<__m256i>());
            _mm256_storeu_si256(d.add(at).cast::<__m256i>(), a);
            _mm256_storeu_si256(d.add(at + 32).cast::<__m256i>(), b);
            at += 64;
        }
        if at + 32 <= n {
            let a = _mm256_loadu_si256(s.add(at).cast::<__m256i>());
            _mm256_storeu_si256(d.add(at).cast::<__m256i>(), a);
        }
        // Less than 32 bytes are left past the blocks: the last block
        // covers them.
        let last = _mm256_loadu_si256(s.add(n - 32).cast::<__m256i>());
        _mm256_storeu_si256(d.add(n - 32).cast::<__m256i>(), last);
    }
}

/// `n` bytes (32 or more) from `s` to `d` as 32-byte blocks from the start
/// and, up to 256 bytes, from the end (overlapping in the middle); longer,
/// whole blocks from the start and one last block at `n - 32`. Each block
/// counted from the start passes through `head` on its way, each from the
/// end through `tail`: the plain copy ([`copy`], up to 256 bytes) and the
/// masked copy (`simd::mask`, a key for each) share it.
///
/// Every block is loaded before the first store: the pointers are raw, so
/// the compiler keeps source order, and a load issued after a store to an
/// address the CPU cannot yet tell apart waits on its disambiguation
/// (measured: the first load after a store was the hot spot of encode).
///
/// # Safety
/// AVX2 with YMM state; `32 <= n`; `s` valid for `n` bytes of reads, `d`
/// for `n` bytes of writes, not overlapping.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[target_feature(enable = "avx2")]
#[inline]
pub(super) unsafe fn head_tail_avx2(
    d: *mut u8,
    s: *const u8,
    n: usize,
    head: impl Fn(__m256i) -> __m256i,
    tail: impl Fn(__m256i) -> __m256i,
) {
    // The 32 bytes at `$at` of `s`, and a store of one to `d` at `$at`.
    macro_rules! load {
        ($at:expr) => {
            // SAFETY: every use below has `$at + 32 <= n` (32 <= n, the
            // branches bound n from below, the loop `at` from above), inside
            // `s` by the caller's contract.
            unsafe { _mm256_loadu_si256(s.add($at).cast::<__m256i>()) }
        };
    }
    macro_rules! store {
        ($at:expr, $v:expr) => {
            // SAFETY: as for `load!`, inside `d`.
            unsafe { _mm256_storeu_si256(d.add($at).cast::<__m256i>(), $v) }
        };
    }
    if n <= 64 {
        let (a, b) = (load!(0), load!(n - 32));
        store!(0, head(a));
        store!(n - 32, tail(b));
    } else if n <= 128 {
        let (a, b, c, e) = (load!(0), load!(32), load!(n - 64), load!(n - 32));
        store!(0, head(a));
        store!(32, head(b));
        store!(n - 64, tail(c));
        store!(n - 32, tail(e));
    } else if n <= 256 {
        let (a, b, c, e) = (load!(0), load!(32), load!(64), load!(96));
        let (f, g, h, i) = (load!(n - 128), load!(n - 96), load!(n - 64), load!(n - 32));
        store!(0, head(a));
        store!(32, head(b));
        store!(64, head(c));
        store!(96, head(e));
        store!(n - 128, tail(f));
        store!(n - 96, tail(g));
        store!(n - 64, tail(h));
        store!(n - 32, tail(i));
    } else {
        // Longer: whole blocks from the start (two per step), then the last
        // 32 bytes as a tail block, overlapping the one before.
        let mut at = 0;
        while at + 64 <= n {
            let (a, b) = (load!(at), load!(at + 32));
            store!(at, head(a));
            store!(at + 32, head(b));
            at += 64;
        }
        if at + 32 <= n {
            let a = load!(at);
            store!(at, head(a));
            at += 32;
        }
        if at < n {
            let t = load!(n - 32);
            store!(n - 32, tail(t));
        }
    }
}

/// The first and the last `N` bytes of `src` into `dst` (overlapping when
/// `src` is shorter than `2 * N`): all of `src` when `N <= len <= 2 * N`.
#[inline(always)]
fn head_tail<const N: usize>(dst: &mut [u8], src: &[u8]) {
    block::<N>(dst, src, 0);
    block::<N>(dst, src, src.len().wrapping_sub(N));
}

/// `dst[at..at + N] = src[at..at + N]`, a no-op if out of range (never, as
/// [`copy`] calls it).
#[inline(always)]
fn block<const N: usize>(dst: &mut [u8], src: &[u8], at: usize) {
    let s: Option<&[u8; N]> = src.get(at..).and_then(|s| s.first_chunk::<N>());
    let d: Option<&mut [u8; N]> = dst.get_mut(at..).and_then(|d| d.first_chunk_mut::<N>());
    if let (Some(d), Some(s)) = (d, s) {
        *d = *s;
    }
}

/// The path [`copy`] takes from 32 bytes, by the same token check.
pub(super) fn path() -> super::Path {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    if Avx2::detect().is_some() {
        return super::Path::Avx2;
    }
    super::Path::Scalar
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::format;
    use std::vec;
    use std::vec::Vec;

    /// Long copies at every destination offset modulo 32 (the aligned
    /// loop's first step is 1 to 32 bytes) and a few source offsets.
    #[test]
    fn long_copies_at_every_alignment() {
        let src: Vec<u8> = (0..9000u32).map(|i| (i * 13 + 5 + i / 241) as u8).collect();
        for n in [257, 288, 289, 320, 1000, 4133] {
            for d_off in 0..32 {
                for s_off in [0, 3, 32] {
                    let mut dst = vec![0x55u8; n + 64];
                    copy(&mut dst[d_off..], &src[s_off..s_off + n]);
                    let what = format!("n {n} dst +{d_off} src +{s_off}");
                    assert_eq!(&dst[d_off..d_off + n], &src[s_off..s_off + n], "{what}");
                    assert!(dst[..d_off].iter().all(|&b| b == 0x55), "before, {what}");
                    assert!(dst[d_off + n..].iter().all(|&b| b == 0x55), "after, {what}");
                }
            }
        }
    }

    /// Every length to 300 and a spread of longer ones (the AVX2 loop, its
    /// 32-byte step and its tail), at several offsets.
    #[test]
    fn every_length_and_offset_up_to_300() {
        let src: Vec<u8> = (0..9000u32).map(|i| (i * 7 + 3 + i / 251) as u8).collect();
        let long = [
            301, 319, 320, 321, 351, 352, 383, 384, 385, 1000, 4095, 4096, 4097, 8448,
        ];
        for n in (0..=300).chain(long) {
            for off in [0, 1, 7] {
                let mut dst = vec![0xAAu8; n + 20];
                copy(&mut dst[off..], &src[off..off + n]);
                assert_eq!(&dst[off..off + n], &src[off..off + n], "n {n} off {off}");
                assert!(dst[..off].iter().all(|&b| b == 0xAA), "before, n {n}");
                assert!(dst[off + n..].iter().all(|&b| b == 0xAA), "after, n {n}");
                #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
                if let Some(t) = Avx2::detect()
                    && n >= 32
                {
                    let mut dst = vec![0xAAu8; n + 20];
                    // SAFETY: `t` proves AVX2; 32 <= n and both ranges are
                    // n bytes inside their own vectors.
                    unsafe { copy_avx2(t, dst[off..].as_mut_ptr(), src[off..].as_ptr(), n) };
                    assert_eq!(
                        &dst[off..off + n],
                        &src[off..off + n],
                        "avx2 n {n} off {off}"
                    );
                    assert!(dst[..off].iter().all(|&b| b == 0xAA), "avx2 before, n {n}");
                    assert!(
                        dst[off + n..].iter().all(|&b| b == 0xAA),
                        "avx2 after, n {n}"
                    );
                }
            }
        }
    }
}
