//! Proof tokens: the one way the codec chooses a SIMD path at run time.
//!
//! A token is a zero-sized value with a private field, so only its
//! `detect` can make one, and `detect` makes one only when the instructions
//! can run here: enabled for the whole build (`-C target-feature`, which is
//! also how Miri is given them), or reported by the codec's own CPU
//! detection ([`cpu`](super::cpu): `cpuid` and `xgetbv`, cached in one
//! atomic byte, usable in `no_std`). Every dispatcher in the codec (masking,
//! copy, ASCII and UTF-8 checks, the HTTP head block parsers, the ChaCha
//! key generator) asks the same `detect` and passes the token on to the
//! `#[target_feature]` function it calls, whose `// SAFETY:` is then one
//! line: "`t` exists, so the CPU has the feature".
//!
//! Why this design (and not a `std` feature that the transport turns on, or
//! bare `has_avx2()` checks): the same detection serves `std` and `no_std`
//! users alike, so a user who depends on the codec with default features (or
//! on an embedded x86 target) gets the SIMD paths the benchmark measures,
//! with no feature to forget; and the token, unlike a boolean, cannot be
//! checked in one place and assumed in another, so the unsafe call sites
//! cannot drift from the checks. [`active_paths`](super::active_paths)
//! reports what the dispatchers pick, from these same `detect` calls.
//!
//! `detect` costs one relaxed load and a bit test once detection ran (or
//! nothing, when the feature is enabled at compile time), so dispatchers
//! call it per operation rather than caching function pointers.

/// Proof that the CPU has AVX2 and the OS saves YMM state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Avx2(());

/// Proof that the CPU has SSE4.2 (with SSSE3 and SSE4.1 below it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sse42(());

/// Proof that the CPU has SSE2 (always, on x86_64).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sse2(());

impl Avx2 {
    /// An `Avx2` without asking the CPU, for the `unsafe fn ..._avx2`
    /// entry points whose callers promise AVX2 themselves.
    ///
    /// # Safety
    /// The CPU must support AVX2 and the OS must save YMM state.
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    #[inline(always)]
    pub(crate) unsafe fn new_unchecked() -> Avx2 {
        Avx2(())
    }

    /// An `Avx2` when AVX2 is enabled at compile time or found by
    /// [`cpu`](super::cpu) detection; never off x86.
    #[inline(always)]
    pub fn detect() -> Option<Avx2> {
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        if cfg!(target_feature = "avx2") || super::cpu::has_avx2() {
            return Some(Avx2(()));
        }
        None
    }
}

impl Sse42 {
    /// An `Sse42` when SSE4.2 is enabled at compile time or found by
    /// [`cpu`](super::cpu) detection; never off x86.
    #[inline(always)]
    pub fn detect() -> Option<Sse42> {
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        if cfg!(target_feature = "sse4.2") || super::cpu::features().sse42 {
            return Some(Sse42(()));
        }
        None
    }
}

impl Sse2 {
    /// An `Sse2` when SSE2 is enabled at compile time (every x86_64 target
    /// with vector registers: no load at all) or found by detection.
    #[inline(always)]
    pub fn detect() -> Option<Sse2> {
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        if cfg!(target_feature = "sse2") || super::cpu::features().sse2 {
            return Some(Sse2(()));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_follow_detection() {
        let f = crate::simd::cpu::features();
        let x86 = cfg!(any(target_arch = "x86", target_arch = "x86_64"));
        assert_eq!(
            Avx2::detect().is_some(),
            x86 && (cfg!(target_feature = "avx2") || f.avx2)
        );
        assert_eq!(
            Sse42::detect().is_some(),
            x86 && (cfg!(target_feature = "sse4.2") || f.sse42)
        );
        assert_eq!(
            Sse2::detect().is_some(),
            x86 && (cfg!(target_feature = "sse2") || f.sse2)
        );
        // AVX2 implies the narrower sets on every CPU that has it.
        if Avx2::detect().is_some() {
            assert!(Sse42::detect().is_some() && Sse2::detect().is_some());
        }
    }
}
