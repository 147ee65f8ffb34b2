//! Runtime CPU feature detection for the SIMD paths, usable in `no_std`.
//!
//! `std::is_x86_feature_detected!` is not available without `std`, so the
//! codec asks the CPU itself: `cpuid` says what the processor implements and
//! `xgetbv` says whether the operating system saves the wider register state
//! (an AVX2 instruction on an OS that does not save YMM registers would
//! corrupt other threads or fault). The answer is computed once and cached in
//! a single atomic byte, so a dispatcher pays one relaxed load per call.
//!
//! Off x86, and under Miri (which cannot execute `cpuid`), every feature reads
//! as absent and callers take their portable paths.

use core::sync::atomic::{AtomicU8, Ordering};

/// The SIMD instruction sets the codec knows how to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuFeatures {
    /// SSE2 (128-bit integer vectors). Always present on x86_64.
    pub sse2: bool,
    /// SSE4.2 (and the SSE3/SSSE3/SSE4.1 it builds on, which every such CPU has).
    pub sse42: bool,
    /// AVX2 (256-bit integer vectors), supported by the CPU and enabled by the OS.
    pub avx2: bool,
}

/// Set once detection ran, so a CPU with no features still caches a non-zero value.
const DETECTED: u8 = 1 << 0;
const SSE2: u8 = 1 << 1;
const AVX2: u8 = 1 << 2;
const SSE42: u8 = 1 << 3;

/// 0 until the first [`features`] call; afterwards `DETECTED | ...feature bits`.
static CACHE: AtomicU8 = AtomicU8::new(0);

/// The features of the CPU this code runs on, detected on the first call and cached.
///
/// Thread-safe and cheap: after the first call it is one relaxed atomic load.
/// Concurrent first calls may both detect; they compute and store the same value.
#[inline]
pub fn features() -> CpuFeatures {
    let mut bits = CACHE.load(Ordering::Relaxed);
    if bits == 0 {
        bits = detect_and_cache();
    }
    CpuFeatures {
        sse2: bits & SSE2 != 0,
        sse42: bits & SSE42 != 0,
        avx2: bits & AVX2 != 0,
    }
}

/// Whether the CPU has AVX2 with YMM state saved by the OS: the same answer
/// as `features().avx2` in one load, one bit test and one branch once
/// detection ran. Dispatchers do not call it: they ask
/// [`token::Avx2::detect`](super::token::Avx2::detect), which does.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[inline]
pub(crate) fn has_avx2() -> bool {
    let bits = CACHE.load(Ordering::Relaxed);
    if bits & AVX2 != 0 {
        return true;
    }
    bits == 0 && detect_and_cache() & AVX2 != 0
}

#[cold]
#[inline(never)]
fn detect_and_cache() -> u8 {
    let bits = DETECTED | detect();
    CACHE.store(bits, Ordering::Relaxed);
    bits
}

#[cfg(all(
    any(target_arch = "x86", target_arch = "x86_64"),
    not(miri),
    not(target_env = "sgx")
))]
fn detect() -> u8 {
    #[cfg(target_arch = "x86")]
    use core::arch::x86::{__cpuid, __cpuid_count};
    #[cfg(target_arch = "x86_64")]
    use core::arch::x86_64::{__cpuid, __cpuid_count};

    // `cpuid` exists on every CPU Rust's x86 targets support (i586 and later).
    // The intrinsics are safe on current compilers but `unsafe` on the 1.88
    // MSRV, hence the `unsafe` blocks and `allow(unused_unsafe)`.
    #[allow(unused_unsafe)]
    // SAFETY: `cpuid` is implemented by every processor these targets run on;
    // it only reads identification registers.
    let max_leaf = unsafe { __cpuid(0) }.eax;
    if max_leaf < 1 {
        return 0;
    }
    #[allow(unused_unsafe)]
    // SAFETY: as above; leaf 1 is within `max_leaf`.
    let leaf1 = unsafe { __cpuid(1) };

    let mut bits = 0;
    // SSE2: CPUID.1:EDX[26]. Baseline on x86_64, so it is also set when the
    // target already compiles with SSE2.
    if cfg!(target_feature = "sse2") || leaf1.edx & (1 << 26) != 0 {
        bits |= SSE2;
    }
    // SSE4.2: CPUID.1:ECX[20] (no OS support needed: XMM state is baseline).
    if cfg!(target_feature = "sse4.2") || leaf1.ecx & (1 << 20) != 0 {
        bits |= SSE42;
    }

    // AVX2 needs, in order:
    // - OSXSAVE (CPUID.1:ECX[27]): the OS enabled XSAVE, so `xgetbv` is legal;
    // - AVX (CPUID.1:ECX[28]): AVX2 is VEX-encoded and built on AVX;
    // - XCR0 bits 1 and 2: the OS saves XMM and YMM state on context switch;
    // - AVX2 (CPUID.(EAX=7,ECX=0):EBX[5]).
    const OSXSAVE: u32 = 1 << 27;
    const AVX: u32 = 1 << 28;
    if leaf1.ecx & (OSXSAVE | AVX) == (OSXSAVE | AVX) && max_leaf >= 7 {
        // SAFETY: CPUID.1:ECX.OSXSAVE is set, so the CPU implements XSAVE and
        // the OS set CR4.OSXSAVE; `xgetbv` with ECX = 0 (XCR0) cannot fault.
        let xcr0 = unsafe { xcr0() };
        #[allow(unused_unsafe)]
        // SAFETY: `cpuid` as above; leaf 7 is within `max_leaf`.
        let leaf7 = unsafe { __cpuid_count(7, 0) };
        if xcr0 & 0b110 == 0b110 && leaf7.ebx & (1 << 5) != 0 {
            bits |= AVX2;
        }
    }
    bits
}

/// Reads XCR0, the register in which the OS declares which state components it saves.
///
/// # Safety
/// The CPU must report OSXSAVE (CPUID.1:ECX[27]).
#[cfg(all(
    any(target_arch = "x86", target_arch = "x86_64"),
    not(miri),
    not(target_env = "sgx")
))]
#[target_feature(enable = "xsave")]
unsafe fn xcr0() -> u64 {
    #[cfg(target_arch = "x86")]
    use core::arch::x86::_xgetbv;
    #[cfg(target_arch = "x86_64")]
    use core::arch::x86_64::_xgetbv;
    // SAFETY: the caller guarantees OSXSAVE, i.e. XSAVE is supported and
    // enabled by the OS, so `xgetbv` with ECX = 0 does not fault.
    unsafe { _xgetbv(0) }
}

/// No usable x86 SIMD: another architecture, Miri (no `cpuid`), or an SGX
/// enclave (where `cpuid` faults and its answer would be untrusted anyway).
#[cfg(not(all(
    any(target_arch = "x86", target_arch = "x86_64"),
    not(miri),
    not(target_env = "sgx")
)))]
fn detect() -> u8 {
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detection_is_cached_and_stable() {
        let first = features();
        assert_ne!(CACHE.load(Ordering::Relaxed), 0);
        assert_eq!(features(), first);
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        assert_eq!(has_avx2(), first.avx2);
        assert_eq!(DETECTED | detect(), CACHE.load(Ordering::Relaxed));
    }

    #[cfg(all(any(target_arch = "x86", target_arch = "x86_64"), not(miri)))]
    #[test]
    fn matches_std_detection() {
        let f = features();
        assert_eq!(f.sse2, std::is_x86_feature_detected!("sse2"));
        assert_eq!(f.sse42, std::is_x86_feature_detected!("sse4.2"));
        // std reports avx2 from CPUID leaf 7 plus OS YMM support; this module
        // additionally requires the AVX bit, which every AVX2 CPU sets.
        assert_eq!(
            f.avx2,
            std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("avx")
        );
        #[cfg(target_arch = "x86_64")]
        assert!(f.sse2);
    }

    #[cfg(any(miri, not(any(target_arch = "x86", target_arch = "x86_64"))))]
    #[test]
    fn portable_targets_report_nothing() {
        assert_eq!(
            features(),
            CpuFeatures {
                sse2: false,
                sse42: false,
                avx2: false
            }
        );
    }
}
