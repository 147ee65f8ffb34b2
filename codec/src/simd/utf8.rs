//! UTF-8 validation on simdutf8: whole-buffer checks and the incremental check
//! used while a text message arrives in pieces.
//!
//! The frame reader assembles a text message contiguously in its buffer, so the
//! streaming state is just "how many leading bytes are known valid": an
//! unfinished multi-byte character at the end of what has arrived is carried
//! by re-validating from its first byte when more bytes come. An invalid
//! sequence is reported as soon as it is certain, even mid-character
//! (`F4 90` can never start a valid character), which is what Autobahn's
//! "fail fast" cases (6.4.x) check.
//!
//! Text that is not all ASCII goes to simdutf8's AVX2 or SSE4.2 validator,
//! picked at run time by the codec's own CPU detection (the proof tokens of
//! [`token`](super::token)), not by simdutf8's selection: without its `std`
//! feature (and the codec depends on it without, to stay `no_std`) simdutf8
//! picks at compile time, which on a generic x86_64 build is
//! `core::str::from_utf8`, 8 to 10 times slower on multi-byte text. With
//! no token the check is `core::str::from_utf8` on x86 (Miri without
//! `-C target-feature`, soft-float targets) and simdutf8's compile-time
//! choice elsewhere. Inputs under 64 bytes go to
//! `core::str::from_utf8`, as simdutf8 with `std` does: its block code
//! would first copy them into a padded 64-byte block.
//!
//! Both entry points first run an inlined ASCII prefilter: most market data
//! is JSON with ASCII symbols and numbers, and a short message is checked
//! with a few vector loads OR-ed together and one `movemask`, where a call
//! into simdutf8 would copy the tail of a length that is not a multiple of
//! 64 into a padded block. [`is_valid`] asks only "all ASCII?" ([`is_ascii`]:
//! straight-line loads up to 128 bytes, a loop beyond, AVX2 out of line over
//! 256 bytes) and hands a payload that is not to simdutf8 whole;
//! [`validate_prefix`] needs to know where the ASCII run ends
//! ([`ascii_prefix`]) and hands simdutf8 only the bytes from the first
//! 64-byte block that holds a non-ASCII byte.

#[cfg(all(
    any(target_arch = "x86", target_arch = "x86_64"),
    target_feature = "sse2"
))]
use simdutf8::basic::imp::{ChunkedUtf8Validator, x86 as imp};

#[cfg(all(
    any(target_arch = "x86", target_arch = "x86_64"),
    target_feature = "sse2"
))]
use super::token::{Avx2, Sse42};

#[cfg(all(target_arch = "x86", target_feature = "sse2"))]
use core::arch::x86::{__m128i, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128};
#[cfg(all(target_arch = "x86", target_feature = "sse2"))]
use core::arch::x86::{__m256i, _mm256_loadu_si256, _mm256_movemask_epi8, _mm256_or_si256};
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
use core::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128};
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
use core::arch::x86_64::{__m256i, _mm256_loadu_si256, _mm256_movemask_epi8, _mm256_or_si256};

/// Whether `bytes` is entirely valid UTF-8. The fast path for complete payloads:
/// an inlined ASCII check ([`is_ascii`]), then simdutf8 out of line.
#[inline(always)]
pub fn is_valid(bytes: &[u8]) -> bool {
    is_ascii(bytes) || is_valid_non_ascii(bytes)
}

/// Whether `bytes` is valid UTF-8, for a caller that already knows it is not
/// all ASCII (the reader after [`apply_mask_ascii`](super::mask_ascii::apply_mask_ascii)):
/// straight to the dispatched validator (`Validator`), out of line, so the
/// caller's hot path carries no second inlined scan.
#[cold]
#[inline(never)]
pub fn is_valid_non_ascii(bytes: &[u8]) -> bool {
    Validator::select().basic(bytes)
}

/// The UTF-8 validator the dispatch picks on this CPU, each holding the
/// token that proves its instructions run here.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Validator {
    /// simdutf8's AVX2 implementation.
    #[cfg(all(
        any(target_arch = "x86", target_arch = "x86_64"),
        target_feature = "sse2"
    ))]
    Avx2(Avx2),
    /// simdutf8's SSE4.2 implementation.
    #[cfg(all(
        any(target_arch = "x86", target_arch = "x86_64"),
        target_feature = "sse2"
    ))]
    Sse42(Sse42),
    /// `core::str::from_utf8` on x86; elsewhere simdutf8's compile-time
    /// choice (NEON or simd128 where those are enabled). Also
    /// on soft-float x86 targets (`x86_64-unknown-none`), where LLVM cannot
    /// build simdutf8's vector code.
    Portable,
}

/// Inputs shorter than this are checked by `core::str::from_utf8`, as
/// simdutf8 with `std` does (its block code pads them into 64 bytes first).
const SIMD_FROM: usize = 64;

impl Validator {
    /// The widest validator this CPU runs: AVX2, else SSE4.2, else portable.
    #[inline(always)]
    pub(crate) fn select() -> Validator {
        #[cfg(all(
            any(target_arch = "x86", target_arch = "x86_64"),
            target_feature = "sse2"
        ))]
        {
            if let Some(t) = Avx2::detect() {
                return Validator::Avx2(t);
            }
            if let Some(t) = Sse42::detect() {
                return Validator::Sse42(t);
            }
        }
        Validator::Portable
    }

    /// Whether `bytes` is valid UTF-8.
    ///
    /// The x86 validators are simdutf8's chunked ones (`finalize` over the
    /// whole input), not its one-shot `validate_utf8`: in simdutf8 0.1.5
    /// the one-shot AVX2 loops prefetch through `ptr.add` up to 128 bytes
    /// past the input, out-of-bounds pointer arithmetic that Miri reports
    /// as undefined behaviour (fixed upstream by simdutf8 PR #120,
    /// `wrapping_add`, not yet released); the chunked code is the same
    /// algorithm without the prefetch, as fast on these sizes (measured:
    /// 0.99-1.01x at 2 KiB).
    #[inline]
    fn basic(self, bytes: &[u8]) -> bool {
        if bytes.len() < SIMD_FROM {
            return core::str::from_utf8(bytes).is_ok();
        }
        match self {
            #[cfg(all(
                any(target_arch = "x86", target_arch = "x86_64"),
                target_feature = "sse2"
            ))]
            Validator::Avx2(_t) => {
                // SAFETY: `_t` exists, so the CPU has AVX2 (see `token`).
                unsafe { imp::avx2::ChunkedUtf8ValidatorImp::new().finalize(Some(bytes)) }.is_ok()
            }
            #[cfg(all(
                any(target_arch = "x86", target_arch = "x86_64"),
                target_feature = "sse2"
            ))]
            Validator::Sse42(_t) => {
                // SAFETY: `_t` exists, so the CPU has SSE4.2 (see `token`).
                unsafe { imp::sse42::ChunkedUtf8ValidatorImp::new().finalize(Some(bytes)) }.is_ok()
            }
            // On x86 the tokens above already stand for every SIMD
            // validator simdutf8 has (and its compile-time pick with AVX2
            // enabled is the prefetching one-shot loop).
            Validator::Portable if cfg!(any(target_arch = "x86", target_arch = "x86_64")) => {
                core::str::from_utf8(bytes).is_ok()
            }
            Validator::Portable => simdutf8::basic::from_utf8(bytes).is_ok(),
        }
    }

    /// How many leading bytes of `bytes` are complete, valid characters,
    /// the rest (at most 3 bytes) the valid start of one that more input may
    /// complete; `Err` when `bytes` cannot become valid UTF-8.
    ///
    /// The vector check runs up to the start of a last character cut short
    /// (the usual end of a fragment of multi-byte text), the few bytes after
    /// it byte-wise; only an invalid input is scanned again byte-wise
    /// (`core::str::from_utf8`), to tell a cut character from an error.
    #[inline]
    fn prefix(self, bytes: &[u8]) -> Result<usize, Utf8Invalid> {
        let cut = unfinished_tail(bytes);
        let (head, tail) = bytes.split_at(cut);
        let (base, exact) = if self.basic(head) {
            (cut, tail)
        } else {
            (0, bytes)
        };
        match core::str::from_utf8(exact) {
            Ok(_) => Ok(bytes.len()),
            Err(e) if e.error_len().is_none() => Ok(base + e.valid_up_to()),
            Err(_) => Err(Utf8Invalid),
        }
    }

    /// The path this validator is, for [`active_paths`](super::active_paths).
    pub(crate) fn path(self) -> super::Path {
        match self {
            #[cfg(all(
                any(target_arch = "x86", target_arch = "x86_64"),
                target_feature = "sse2"
            ))]
            Validator::Avx2(_) => super::Path::Avx2,
            #[cfg(all(
                any(target_arch = "x86", target_arch = "x86_64"),
                target_feature = "sse2"
            ))]
            Validator::Sse42(_) => super::Path::Sse42,
            Validator::Portable => super::Path::Scalar,
        }
    }
}

/// Whether every byte is below 0x80.
///
/// From 16 bytes on (with SSE2, baseline on x86_64) every 16-byte load is
/// ORed into one accumulator and the high bits are tested once, at the end:
/// one `movemask` and one branch, where [`ascii_prefix`] tests each 64-byte
/// block to say where the first non-ASCII byte is. Up to 128 bytes (most
/// market data messages) the loads are straight-line code chosen by size
/// class: the first and the last 16, 32 or 64 bytes, overlapping in the
/// middle; longer inputs loop over 64-byte blocks and end with the last 64
/// bytes the same way.
#[inline(always)]
pub fn is_ascii(bytes: &[u8]) -> bool {
    #[cfg(all(
        any(target_arch = "x86", target_arch = "x86_64"),
        target_feature = "sse2",
        not(miri)
    ))]
    if bytes.len() >= 16 {
        return is_ascii_sse2(bytes);
    }
    ascii_prefix_words(bytes) == bytes.len()
}

#[cfg(all(
    any(target_arch = "x86", target_arch = "x86_64"),
    target_feature = "sse2"
))]
/// The SSE2 body of [`is_ascii`] (see there); compiled only when SSE2 is
/// enabled for the whole target, so it is inlined into its callers.
#[inline(always)]
fn is_ascii_sse2(bytes: &[u8]) -> bool {
    let n = bytes.len();
    if n < 16 {
        return ascii_prefix_words(bytes) == n;
    }
    let p = bytes.as_ptr();
    // The 16 bytes at `at`, which the caller has checked are inside `bytes`.
    let load = |at: usize| {
        debug_assert!(at + 16 <= n);
        // SAFETY: every use below is at `at` with `at + 16 <= n` (by the
        // size class it sits in); SSE2 is enabled for the whole target (cfg
        // on this function).
        unsafe { _mm_loadu_si128(p.add(at).cast::<__m128i>()) }
    };
    // SAFETY: register-only SSE2 operation; SSE2 is enabled for the whole
    // target (cfg on this function).
    let or = |a: __m128i, b: __m128i| unsafe { _mm_or_si128(a, b) };
    // The 64 bytes at `at` (`at + 64 <= n`).
    let block = |at: usize| {
        or(
            or(load(at), load(at + 16)),
            or(load(at + 32), load(at + 48)),
        )
    };
    let acc = if n <= 32 {
        or(load(0), load(n - 16))
    } else if n <= 64 {
        or(or(load(0), load(16)), or(load(n - 32), load(n - 16)))
    } else if n <= 128 {
        or(block(0), block(n - 64))
    } else {
        if n > AVX2_FROM
            && let Some(t) = super::token::Avx2::detect()
        {
            // SAFETY: `t` exists, so the CPU has AVX2 (see `token`).
            return unsafe { is_ascii_avx2(t, bytes) };
        }
        let mut acc = block(n - 64);
        let mut i = 0;
        while i + 64 < n {
            acc = or(acc, block(i));
            i += 64;
        }
        acc
    };
    // SAFETY: register-only SSE2 operation, as above.
    unsafe { _mm_movemask_epi8(acc) == 0 }
}

/// Inputs longer than this take [`is_ascii_avx2`] when the CPU has AVX2.
/// It is a call (a `#[target_feature]` function cannot be inlined into code
/// built without the feature), so shorter inputs stay on the inlined SSE2
/// code, where the call and the caller's spills around it would cost more
/// than the wider loads save.
#[cfg(all(
    any(target_arch = "x86", target_arch = "x86_64"),
    target_feature = "sse2"
))]
const AVX2_FROM: usize = 256;

/// [`is_ascii`] with 32-byte loads: 128 bytes a loop step, then 32, the
/// last 32 bytes loaded first (overlapping the loop's last step if need be);
/// one accumulator, one `movemask` at the end, and one after the first step:
/// text that is not ASCII mostly shows it in its first 128 bytes, and then
/// goes to the UTF-8 validator after 128 bytes read instead of all of them
/// (a 2 KiB multi-byte text was read twice whole before). A test in every
/// step would cost all-ASCII text a `movemask` and a branch per 128 bytes.
///
/// The token proves the CPU has AVX2 (the call still needs `unsafe` from
/// code built without the feature, which the token's existence justifies).
#[cfg(all(
    any(target_arch = "x86", target_arch = "x86_64"),
    target_feature = "sse2"
))]
#[target_feature(enable = "avx2")]
#[inline(never)]
fn is_ascii_avx2(_: super::token::Avx2, bytes: &[u8]) -> bool {
    let n = bytes.len();
    let Some(last) = n.checked_sub(32) else {
        return ascii_prefix_words(bytes) == n;
    };
    let p = bytes.as_ptr();
    // SAFETY: in each use `at + 32 <= n` (`at <= last`, or the loop bounds).
    let load = |at: usize| unsafe { _mm256_loadu_si256(p.add(at).cast::<__m256i>()) };
    let mut acc = load(last);
    let mut i = 0;
    if n >= 128 {
        let a = _mm256_or_si256(load(0), load(32));
        let b = _mm256_or_si256(load(64), load(96));
        acc = _mm256_or_si256(acc, _mm256_or_si256(a, b));
        if _mm256_movemask_epi8(acc) != 0 {
            return false;
        }
        i = 128;
    }
    while i + 128 <= n {
        let a = _mm256_or_si256(load(i), load(i + 32));
        let b = _mm256_or_si256(load(i + 64), load(i + 96));
        acc = _mm256_or_si256(acc, _mm256_or_si256(a, b));
        i += 128;
    }
    while i + 32 <= n {
        acc = _mm256_or_si256(acc, load(i));
        i += 32;
    }
    _mm256_movemask_epi8(acc) == 0
}

/// A length `p` such that `bytes[..p]` is ASCII: `bytes.len()` when all of
/// it is, otherwise the start of the block (64 bytes, or the final block of
/// under 64) that holds the first non-ASCII byte. Each 64-byte block is
/// four 16-byte loads OR-ed together and one `movemask` (SSE2, baseline on
/// x86_64); the final partial block ORs the 16-byte loads that fit plus the
/// last 16 bytes of the buffer (overlapping what was already checked).
/// Under 16 bytes, or without SSE2, `u64`/`u32` words do the same (and
/// under Miri, whose tests call the SSE2 path directly).
#[inline(always)]
pub fn ascii_prefix(bytes: &[u8]) -> usize {
    #[cfg(all(
        any(target_arch = "x86", target_arch = "x86_64"),
        target_feature = "sse2",
        not(miri)
    ))]
    if bytes.len() >= 16 {
        return ascii_prefix_sse2(bytes);
    }
    ascii_prefix_words(bytes)
}

#[cfg(all(
    any(target_arch = "x86", target_arch = "x86_64"),
    target_feature = "sse2"
))]
/// The SSE2 body of [`ascii_prefix`]. Compiled only when SSE2 is enabled
/// for the whole target, so it needs no `#[target_feature]` and can be
/// inlined into every caller (a `#[target_feature]` function is a call).
#[inline(always)]
fn ascii_prefix_sse2(bytes: &[u8]) -> usize {
    let n = bytes.len();
    if n < 16 {
        return ascii_prefix_words(bytes);
    }
    let p = bytes.as_ptr();
    // The 16 bytes at `$at`, which the caller has checked are inside `bytes`.
    macro_rules! load {
        ($at:expr) => {
            // SAFETY: every use below is guarded by `$at + 16 <= n`; SSE2
            // is enabled for the whole target (cfg on this function).
            unsafe { _mm_loadu_si128(p.add($at).cast::<__m128i>()) }
        };
    }
    // SAFETY (the `unsafe` blocks of the two macros below): SSE2 is enabled
    // for the whole target (cfg on this function); they only compute on
    // registers.
    macro_rules! or {
        ($a:expr, $b:expr) => {{
            let (a, b) = ($a, $b);
            // SAFETY: SSE2 is enabled for the whole target; registers only.
            unsafe { _mm_or_si128(a, b) }
        }};
    }
    macro_rules! high_bits {
        ($v:expr) => {{
            let v = $v;
            // SAFETY: SSE2 is enabled for the whole target; registers only.
            unsafe { _mm_movemask_epi8(v) }
        }};
    }
    let mut i = 0;
    while i + 64 <= n {
        let v = or!(
            or!(load!(i), load!(i + 16)),
            or!(load!(i + 32), load!(i + 48))
        );
        if high_bits!(v) != 0 {
            return i;
        }
        i += 64;
    }
    if i == n {
        return n;
    }
    // n >= 16: the last 16 bytes (overlapping checked ones if need be).
    let mut v = load!(n - 16);
    if i + 16 <= n {
        v = or!(v, load!(i));
    }
    if i + 32 <= n {
        v = or!(v, load!(i + 16));
    }
    if i + 48 <= n {
        v = or!(v, load!(i + 32));
    }
    if high_bits!(v) == 0 { n } else { i }
}

/// [`ascii_prefix`] with `u64` words (every length; the block is 64 bytes
/// as on the vector path, the last word overlapping the one before).
#[inline(always)]
fn ascii_prefix_words(bytes: &[u8]) -> usize {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let n = bytes.len();
    let (blocks, rest) = bytes.as_chunks::<64>();
    for (b, block) in blocks.iter().enumerate() {
        let (words, _) = block.as_chunks::<8>();
        let acc = words.iter().fold(0, |a, w| a | u64::from_ne_bytes(*w));
        if acc & HIGH != 0 {
            return b * 64;
        }
    }
    let start = n - rest.len();
    let acc = if let Some(&last) = bytes.last_chunk::<8>() {
        let (words, _) = rest.as_chunks::<8>();
        words
            .iter()
            .fold(u64::from_ne_bytes(last), |a, w| a | u64::from_ne_bytes(*w))
    } else if let (Some(&a), Some(&b)) = (bytes.first_chunk::<4>(), bytes.last_chunk::<4>()) {
        u64::from(u32::from_ne_bytes(a) | u32::from_ne_bytes(b))
    } else {
        u64::from(rest.iter().fold(0u8, |a, b| a | b))
    };
    if acc & HIGH == 0 { n } else { start }
}

/// `bytes` as `&str` if it is valid UTF-8.
#[inline]
pub fn to_str(bytes: &[u8]) -> Option<&str> {
    if is_valid(bytes) {
        // SAFETY: `is_valid` just checked that `bytes` is UTF-8.
        Some(unsafe { core::str::from_utf8_unchecked(bytes) })
    } else {
        None
    }
}

/// Where a last character that `bytes` cuts short starts (a lead byte
/// among the last three whose sequence runs past the end), else
/// `bytes.len()`.
#[inline]
fn unfinished_tail(bytes: &[u8]) -> usize {
    let n = bytes.len();
    for i in (n.saturating_sub(3)..n).rev() {
        let b = bytes[i];
        if b & 0xC0 != 0x80 {
            let need = match b {
                0xF0.. => 4,
                0xE0.. => 3,
                0xC0.. => 2,
                _ => 1,
            };
            return if n - i < need { i } else { n };
        }
    }
    n
}

/// The byte sequence is not, and can never become, valid UTF-8.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Utf8Invalid;

/// Validate a prefix of a stream whose remaining bytes have not arrived yet.
///
/// Returns the number of leading bytes that form complete, valid characters;
/// the rest (at most 3 bytes) is the valid beginning of a character that more
/// input may complete. Fails as soon as the input is certain to be invalid.
#[inline]
pub fn validate_prefix(bytes: &[u8]) -> Result<usize, Utf8Invalid> {
    let done = ascii_prefix(bytes);
    if done == bytes.len() {
        return Ok(done);
    }
    validate_rest(bytes, done)
}

/// [`validate_prefix`] on `bytes[from..]`, where `bytes[..from]` is ASCII.
#[cold]
#[inline(never)]
fn validate_rest(bytes: &[u8], from: usize) -> Result<usize, Utf8Invalid> {
    let rest = bytes.get(from..).unwrap_or_default();
    Ok(from + Validator::select().prefix(rest)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    /// What [`ascii_prefix`] promises, checked against a plain byte scan.
    fn check_prefix(v: &[u8], what: &dyn Fn() -> std::string::String) {
        let n = v.len();
        let first = v.iter().position(|&b| b >= 0x80);
        for (name, p) in [
            ("dispatch", ascii_prefix(v)),
            ("words", ascii_prefix_words(v)),
            #[cfg(all(
                any(target_arch = "x86", target_arch = "x86_64"),
                target_feature = "sse2"
            ))]
            ("sse2", ascii_prefix_sse2(v)),
        ] {
            match first {
                None => assert_eq!(p, n, "{name}: {}", what()),
                Some(at) => {
                    // The start of the 64-byte block holding the first
                    // non-ASCII byte (the last block may be shorter).
                    assert_eq!(p, at / 64 * 64, "{name}: {}", what());
                }
            }
        }
        assert_eq!(is_ascii(v), first.is_none(), "{}", what());
        #[cfg(all(
            any(target_arch = "x86", target_arch = "x86_64"),
            target_feature = "sse2"
        ))]
        if let Some(t) = crate::simd::token::Avx2::detect() {
            // SAFETY: `t` exists, so the CPU has AVX2.
            let avx2 = unsafe { is_ascii_avx2(t, v) };
            assert_eq!(avx2, first.is_none(), "avx2: {}", what());
        }
        #[cfg(all(
            any(target_arch = "x86", target_arch = "x86_64"),
            target_feature = "sse2"
        ))]
        assert_eq!(is_ascii_sse2(v), first.is_none(), "sse2: {}", what());
    }

    #[test]
    fn ascii_scan_every_length_and_position() {
        let max = if cfg!(miri) { 80 } else { 300 };
        for n in 0..max {
            // Under Miri: every length to 34, then the 64-byte block edges.
            if cfg!(miri) && n > 34 && !matches!(n, 47..=49 | 63..=65 | 79) {
                continue;
            }
            let mut v: Vec<u8> = (0..n).map(|i| b'a' + (i % 26) as u8).collect();
            check_prefix(&v, &|| std::format!("all ASCII, len {n}"));
            assert!(is_valid(&v), "{n}");
            assert_eq!(validate_prefix(&v), Ok(n));
            let step = if cfg!(miri) { 7 } else { 1 };
            for at in (0..n).step_by(step) {
                for bad in [0x80, 0xC3, 0xFF] {
                    v[at] = bad;
                    check_prefix(&v, &|| std::format!("len {n}, {bad:#x} at {at}"));
                    assert_eq!(is_valid(&v), core::str::from_utf8(&v).is_ok(), "{n} {at}");
                    v[at] = b'x';
                }
            }
        }
    }

    /// Every size class of the whole-buffer ASCII check (16/32/64/128 bytes
    /// and the 64-byte loop beyond) at its edges, with one non-ASCII byte at
    /// each end and in the middle; few enough lengths to run under Miri.
    #[test]
    fn ascii_size_class_edges() {
        for n in [
            16usize, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 191, 192, 193, 255, 256, 257, 300,
        ] {
            let mut v: Vec<u8> = (0..n).map(|i| b'0' + (i % 64) as u8).collect();
            assert!(is_ascii(&v), "{n}");
            for at in [0, 15, n / 2, n.saturating_sub(17), n - 1] {
                v[at] = 0x80;
                assert!(!is_ascii(&v), "{n} {at}");
                #[cfg(all(
                    any(target_arch = "x86", target_arch = "x86_64"),
                    target_feature = "sse2"
                ))]
                assert!(!is_ascii_sse2(&v), "{n} {at}");
                v[at] = b'a';
            }
            #[cfg(all(
                any(target_arch = "x86", target_arch = "x86_64"),
                target_feature = "sse2"
            ))]
            assert!(is_ascii_sse2(&v), "{n}");
            #[cfg(all(
                any(target_arch = "x86", target_arch = "x86_64"),
                target_feature = "sse2"
            ))]
            if let Some(t) = crate::simd::token::Avx2::detect() {
                // SAFETY: `t` exists, so the CPU has AVX2.
                assert!(unsafe { is_ascii_avx2(t, &v) }, "avx2 {n}");
                for at in [0, n / 2, n - 1] {
                    v[at] = 0xC3;
                    // SAFETY: as above.
                    assert!(!unsafe { is_ascii_avx2(t, &v) }, "avx2 {n} {at}");
                    v[at] = b'a';
                }
            }
        }
    }

    /// Multi-byte characters at every position around the 16/64-byte block
    /// edges, valid and cut short, after an ASCII run of every length.
    #[test]
    fn non_ascii_after_ascii_runs() {
        let max = if cfg!(miri) { 70 } else { 200 };
        for lead in 0..max {
            for ch in ["é", "€", "𝄞"] {
                let mut v: Vec<u8> = std::vec![b'a'; lead];
                v.extend_from_slice(ch.as_bytes());
                v.extend_from_slice(b"tail");
                assert!(is_valid(&v), "{lead} {ch}");
                assert_eq!(validate_prefix(&v), Ok(v.len()), "{lead} {ch}");
                // Cut inside the character: a valid prefix that stops before it.
                let cut = lead + ch.len() - 1;
                assert!(!is_valid(&v[..cut]), "{lead} {ch}");
                assert_eq!(validate_prefix(&v[..cut]), Ok(lead), "{lead} {ch}");
                // A stray continuation byte instead of the lead byte.
                v[lead] = 0x80;
                assert!(!is_valid(&v), "{lead} {ch}");
                assert_eq!(validate_prefix(&v), Err(Utf8Invalid), "{lead} {ch}");
            }
        }
    }

    #[test]
    fn non_ascii_check_matches_std() {
        for v in [
            "κόσμε €𝄞".as_bytes(),
            b"ascii then \xc3\xa9",
            b"\xff",
            b"\xed\xa0\x80",
            b"ok\xf4\x90\x80\x80",
            b"",
        ] {
            assert_eq!(
                is_valid_non_ascii(v),
                core::str::from_utf8(v).is_ok(),
                "{v:?}"
            );
        }
    }

    /// Every validator the dispatch can pick on this machine (and the
    /// portable one) against `core::str::from_utf8`, whole and as a prefix
    /// (also cut short by 1 to 3 bytes),
    /// on multi-byte text around the 64-byte block edges with errors and
    /// cuts at every position.
    #[test]
    fn every_validator_matches_std() {
        let mut validators = std::vec![Validator::Portable];
        #[cfg(all(
            any(target_arch = "x86", target_arch = "x86_64"),
            target_feature = "sse2"
        ))]
        {
            validators.extend(crate::simd::token::Avx2::detect().map(Validator::Avx2));
            validators.extend(crate::simd::token::Sse42::detect().map(Validator::Sse42));
        }
        let text = "κόσμε €𝄞 \u{10FFFF} ascii run of some length ü".repeat(4);
        let text = text.as_bytes();
        let (step, lens): (usize, &[usize]) = if cfg!(miri) {
            (29, &[64, 65, 130])
        } else {
            (1, &[63, 64, 65, 127, 128, 129, 200])
        };
        for &n in lens {
            let mut v = text[..n].to_vec();
            for at in (0..n).step_by(step) {
                for bad in [None, Some(0x80u8), Some(0xF4), Some(0xC0)] {
                    let old = v[at];
                    if let Some(b) = bad {
                        v[at] = b;
                    }
                    let std = core::str::from_utf8(&v);
                    for val in &validators {
                        assert_eq!(val.basic(&v), std.is_ok(), "{val:?} {n} {at} {bad:?}");
                        // As a prefix, whole and cut short by 1 to 3 bytes.
                        for cut in 0..=3 {
                            let w = &v[..n - cut];
                            let want = match core::str::from_utf8(w) {
                                Ok(_) => Ok(w.len()),
                                Err(e) if e.error_len().is_none() => Ok(e.valid_up_to()),
                                Err(_) => Err(Utf8Invalid),
                            };
                            assert_eq!(val.prefix(w), want, "{val:?} {n}-{cut} {at} {bad:?}");
                        }
                    }
                    v[at] = old;
                }
            }
        }
    }

    #[test]
    fn whole_buffers() {
        assert!(is_valid(b""));
        assert!(is_valid("κόσμε €𝄞".as_bytes()));
        assert!(!is_valid(b"\xff"));
        assert!(!is_valid(b"\xed\xa0\x80")); // surrogate
        assert!(!is_valid(b"\xc0\xaf")); // overlong
        assert_eq!(to_str(b"abc"), Some("abc"));
    }

    #[test]
    fn prefix_carries_an_unfinished_character() {
        let s = "a€𝄞".as_bytes(); // 1 + 3 + 4 bytes
        assert_eq!(validate_prefix(&s[..2]), Ok(1));
        assert_eq!(validate_prefix(&s[..3]), Ok(1));
        assert_eq!(validate_prefix(&s[..4]), Ok(4));
        assert_eq!(validate_prefix(&s[..7]), Ok(4));
        assert_eq!(validate_prefix(s), Ok(8));
    }

    #[test]
    fn prefix_fails_fast() {
        // Autobahn 6.4.1: F4 90 80 80 is above U+10FFFF; certain after two bytes.
        assert_eq!(validate_prefix(b"ok\xf4\x90"), Err(Utf8Invalid));
        // A surrogate's first two bytes are already invalid.
        assert_eq!(validate_prefix(b"\xed\xa0"), Err(Utf8Invalid));
        // A lone continuation byte.
        assert_eq!(validate_prefix(b"\x80"), Err(Utf8Invalid));
        // A lead byte followed by a non-continuation.
        assert_eq!(validate_prefix(b"\xe2\x28"), Err(Utf8Invalid));
    }

    #[test]
    fn streaming_equals_whole_for_every_split() {
        let text = "Hello-µ@ßöäüàá-UTF-8!! κόσμε 𝄞 € \u{10FFFF}".as_bytes();
        let mut bad: Vec<u8> = text.to_vec();
        bad[20] = 0xff;
        for input in [text, &bad[..]] {
            let whole = is_valid(input);
            for cut in 0..=input.len() {
                // Validate the first piece as a prefix, then continue from the
                // carried position over the whole, as the frame reader does.
                let streamed = match validate_prefix(&input[..cut]) {
                    Ok(done) => is_valid(&input[done..]),
                    Err(_) => false,
                };
                assert_eq!(streamed, whole, "cut at {cut}");
            }
        }
    }
}
