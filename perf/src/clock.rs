//! Timestamps for the harness: fenced `rdtsc` on x86_64, OS clock elsewhere.
//!
//! On x86_64 a reading is a TSC tick count. [`start`] is `lfence; rdtsc;
//! lfence`: the first fence keeps earlier instructions (the untimed batch
//! preparation) from finishing after the read, the second keeps the timed
//! work from starting before it. [`stop`] is `rdtscp; lfence`: `rdtscp` waits
//! for every earlier instruction to execute, the fence keeps later ones from
//! starting first. Elsewhere a reading is nanoseconds from a process-wide
//! `Instant`, and [`UNIT`] says so.

/// Unit of a reading and of every number the harness reports.
#[cfg(target_arch = "x86_64")]
pub const UNIT: &str = "ticks";
/// Unit of a reading and of every number the harness reports.
#[cfg(not(target_arch = "x86_64"))]
pub const UNIT: &str = "ns";

/// Whether readings are TSC ticks (as opposed to nanoseconds).
pub const IS_TSC: bool = cfg!(target_arch = "x86_64");

/// Timestamp at the start of a timed region.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub fn start() -> u64 {
    use core::arch::x86_64::{_mm_lfence, _rdtsc};
    // SAFETY: lfence (SSE2) and rdtsc are part of the x86_64 baseline.
    unsafe {
        _mm_lfence();
        let t = _rdtsc();
        _mm_lfence();
        t
    }
}

/// Timestamp at the end of a timed region.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub fn stop() -> u64 {
    use core::arch::x86_64::{__rdtscp, _mm_lfence};
    let mut aux = 0u32;
    // SAFETY: rdtscp is present on every x86_64 CPU this harness targets
    // (checked by `machine::has_rdtscp` before a run); lfence is baseline.
    unsafe {
        let t = __rdtscp(&mut aux);
        _mm_lfence();
        t
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn epoch() -> std::time::Instant {
    static EPOCH: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    *EPOCH.get_or_init(std::time::Instant::now)
}

/// Timestamp at the start of a timed region (nanoseconds).
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
pub fn start() -> u64 {
    let t = epoch().elapsed().as_nanos() as u64;
    std::sync::atomic::compiler_fence(std::sync::atomic::Ordering::SeqCst);
    t
}

/// Timestamp at the end of a timed region (nanoseconds).
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
pub fn stop() -> u64 {
    std::sync::atomic::compiler_fence(std::sync::atomic::Ordering::SeqCst);
    epoch().elapsed().as_nanos() as u64
}

/// Readings per second, measured against the OS clock over `over`.
/// For the TSC this is its frequency; for the fallback it is 1e9.
pub fn calibrate(over: std::time::Duration) -> f64 {
    if !IS_TSC {
        return 1e9;
    }
    let (i0, t0) = (std::time::Instant::now(), start());
    while i0.elapsed() < over {
        std::hint::spin_loop();
    }
    let (t1, i1) = (stop(), std::time::Instant::now());
    (t1.wrapping_sub(t0)) as f64 / (i1 - i0).as_secs_f64()
}
