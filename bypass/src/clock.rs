//! The loop's clock without a system call: the CPU's time-stamp counter (TSC),
//! converted to nanoseconds with a frequency measured once.
//!
//! Every timer of the loop (smoltcp's retransmissions, the WebSocket handshake,
//! keepalive, dead-peer and close timeouts, REST request deadlines, reconnect
//! backoff) runs on the `now` the caller passes, so the clock only has to be
//! monotonic and accurate to well under a millisecond. [`TscClock::now`] is one
//! `rdtsc` and a multiply-shift (no `clock_gettime`, not even the vDSO's).
//!
//! - [`TscClock::from_frequency`] (no_std): the caller knows the TSC rate (from
//!   its platform, or measured against its own reference).
//! - [`TscClock::calibrate`] (feature `std`): measured once against the
//!   monotonic clock over a short window.
//! - [`LoopClock::new`] (feature `std`): the TSC when the CPU says it is
//!   invariant (constant rate in every P-/C-state, `cpuid` leaf `0x8000_0007`,
//!   EDX bit 8), otherwise the monotonic clock: the fallback.
//!
//! The conversion is pure: [`TscClock::at`] turns a counter value into an
//! [`Instant`], so tests pass counter values instead of reading the CPU.

use tickwire_codec::time::Instant;

/// Fractional bits of the ticks-to-nanoseconds factor.
const SHIFT: u32 = 32;

/// Read the time-stamp counter (0 on targets without one).
#[inline]
pub fn rdtsc() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // `_rdtsc` has no preconditions: the instruction exists on every x86_64 CPU.
        #[allow(unsafe_code)]
        // SAFETY: rdtsc reads a counter; it touches no memory.
        unsafe {
            core::arch::x86_64::_rdtsc()
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        0
    }
}

/// Whether the CPU's TSC runs at a constant rate in every power state and is
/// synchronised across cores ("invariant TSC", `cpuid` leaf `0x8000_0007`, EDX
/// bit 8). `false` on other architectures and when the leaf is missing.
pub fn tsc_is_invariant() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::__cpuid;
        // (`__cpuid` is a safe function from Rust 1.89 on; unsafe before.)
        #[allow(unsafe_code, unused_unsafe)]
        // SAFETY: cpuid exists on every x86_64 CPU; leaf 0x8000_0000 reports the
        // highest extended leaf, which is checked before 0x8000_0007 is read.
        unsafe {
            if __cpuid(0x8000_0000).eax < 0x8000_0007 {
                return false;
            }
            __cpuid(0x8000_0007).edx & (1 << 8) != 0
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// TSC ticks to nanoseconds: `now = base + (tsc - tsc0) * factor`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TscClock {
    /// The counter at the clock's zero.
    tsc0: u64,
    /// The instant at `tsc0`.
    base: Instant,
    /// Nanoseconds per tick, in fixed point (`SHIFT` fractional bits).
    factor: u64,
    /// Ticks per second (for display and [`frequency`](Self::frequency)).
    hz: u64,
}

/// Why a TSC clock cannot be made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockError {
    /// The frequency given or measured is below 1 MHz (no usable TSC).
    TooSlow(u64),
    /// The CPU does not report an invariant TSC (see [`tsc_is_invariant`]).
    NotInvariant,
}

impl core::fmt::Display for ClockError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            ClockError::TooSlow(hz) => {
                write!(f, "TSC frequency {hz} Hz is below 1 MHz: no usable TSC")
            }
            ClockError::NotInvariant => f.write_str(
                "the CPU does not report an invariant TSC (cpuid 0x80000007 EDX bit 8); \
                 use the monotonic clock (LoopClock falls back to it)",
            ),
        }
    }
}

impl core::error::Error for ClockError {}

impl TscClock {
    /// A clock whose counter runs at `hz` ticks per second and read `tsc0` at
    /// the instant `base`. At least 1 MHz.
    pub fn from_frequency(hz: u64, tsc0: u64, base: Instant) -> Result<Self, ClockError> {
        if hz < 1_000_000 {
            return Err(ClockError::TooSlow(hz));
        }
        // 1e9 / hz in 32.32 fixed point, rounded to nearest; below 1000 ns per
        // tick, so no overflow. The error is under 2^-33 ns per tick: 0.2 ns per
        // second at 1 GHz.
        let hz128 = u128::from(hz);
        let factor = (((1_000_000_000u128 << SHIFT) + hz128 / 2) / hz128) as u64;
        Ok(TscClock {
            tsc0,
            base,
            factor,
            hz,
        })
    }

    /// The clock from two readings of the counter and of a reference clock
    /// (nanoseconds) taken `ns1 - ns0` apart; zero is the first reading.
    pub fn from_samples(tsc0: u64, ns0: u64, tsc1: u64, ns1: u64) -> Result<Self, ClockError> {
        let ticks = tsc1.saturating_sub(tsc0);
        let ns = ns1.saturating_sub(ns0).max(1);
        let hz = (u128::from(ticks) * 1_000_000_000 / u128::from(ns)) as u64;
        Self::from_frequency(hz, tsc0, Instant::from_nanos(ns0))
    }

    /// Ticks per second.
    pub fn frequency(&self) -> u64 {
        self.hz
    }

    /// The instant at counter value `tsc` (a value before the clock's zero
    /// reads as its zero: the clock never goes back).
    #[inline]
    pub fn at(&self, tsc: u64) -> Instant {
        let ticks = tsc.saturating_sub(self.tsc0);
        let ns = (u128::from(ticks) * u128::from(self.factor) + (1 << (SHIFT - 1))) >> SHIFT;
        Instant::from_nanos(self.base.as_nanos().saturating_add(ns as u64))
    }

    /// Now: one `rdtsc`, no system call.
    #[inline]
    pub fn now(&self) -> Instant {
        self.at(rdtsc())
    }

    /// Now as smoltcp's instant (microseconds).
    #[inline]
    pub fn now_smoltcp(&self) -> smoltcp::time::Instant {
        to_smoltcp(self.now())
    }
}

/// The codec's instant as smoltcp's (microseconds).
#[inline]
pub fn to_smoltcp(t: Instant) -> smoltcp::time::Instant {
    smoltcp::time::Instant::from_micros((t.as_nanos() / 1000) as i64)
}

#[cfg(feature = "std")]
mod with_std {
    use super::{ClockError, TscClock, rdtsc, to_smoltcp, tsc_is_invariant};
    use std::time::Duration;
    use tickwire_codec::time::Instant;

    impl TscClock {
        /// Measure the TSC against the monotonic clock over `window` (10 ms is
        /// plenty: the error is about 50 ns / window, 5 ppm), busy-waiting on
        /// the monotonic clock meanwhile. The clock's zero is now.
        /// [`ClockError::NotInvariant`] when the CPU does not promise a
        /// constant rate (use [`LoopClock`], which falls back).
        pub fn calibrate(window: Duration) -> Result<Self, ClockError> {
            if !tsc_is_invariant() {
                return Err(ClockError::NotInvariant);
            }
            let start = std::time::Instant::now();
            let tsc0 = rdtsc();
            while start.elapsed() < window {
                core::hint::spin_loop();
            }
            let tsc1 = rdtsc();
            let ns = start.elapsed().as_nanos() as u64;
            TscClock::from_samples(tsc0, 0, tsc1, ns)
        }
    }

    /// The clock a std program's loop reads: the TSC when invariant, else the
    /// monotonic clock (`clock_gettime` through the vDSO).
    #[derive(Debug, Clone, Copy)]
    pub enum LoopClock {
        /// The calibrated TSC.
        Tsc(TscClock),
        /// The fallback: the monotonic clock, from this zero.
        Monotonic(std::time::Instant),
    }

    impl LoopClock {
        /// The TSC calibrated over 10 ms when it is invariant; otherwise the
        /// monotonic clock. Both start at zero now.
        ///
        /// ```
        /// let clock = tickwire_bypass::clock::LoopClock::new();
        /// let a = clock.now();
        /// let b = clock.now();
        /// assert!(b >= a);
        /// ```
        pub fn new() -> Self {
            match TscClock::calibrate(Duration::from_millis(10)) {
                Ok(tsc) => LoopClock::Tsc(tsc),
                Err(_) => LoopClock::Monotonic(std::time::Instant::now()),
            }
        }

        /// Whether the TSC is used (not the fallback).
        pub fn is_tsc(&self) -> bool {
            matches!(self, LoopClock::Tsc(_))
        }

        /// Now.
        #[inline]
        pub fn now(&self) -> Instant {
            match self {
                LoopClock::Tsc(c) => c.now(),
                LoopClock::Monotonic(zero) => Instant::from_nanos(zero.elapsed().as_nanos() as u64),
            }
        }

        /// Now as smoltcp's instant.
        #[inline]
        pub fn now_smoltcp(&self) -> smoltcp::time::Instant {
            to_smoltcp(self.now())
        }
    }

    impl Default for LoopClock {
        fn default() -> Self {
            Self::new()
        }
    }
}

#[cfg(feature = "std")]
pub use with_std::LoopClock;

#[cfg(test)]
mod tests {
    use super::*;

    const GHZ3: u64 = 3_000_000_000;

    #[test]
    fn ticks_become_nanoseconds() {
        let c = TscClock::from_frequency(GHZ3, 1_000, Instant::from_nanos(5)).unwrap();
        assert_eq!(c.at(1_000), Instant::from_nanos(5));
        assert_eq!(c.at(1_003), Instant::from_nanos(6));
        // One second, one hour, one year of ticks: within 1 ns per second.
        for secs in [1u64, 3_600, 365 * 86_400] {
            let got = c.at(1_000 + secs * GHZ3).as_nanos() - 5;
            let want = secs * 1_000_000_000;
            assert!(got.abs_diff(want) <= secs, "{secs} s: {got} ns");
        }
    }

    #[test]
    fn before_zero_reads_as_zero_and_never_goes_back() {
        let c = TscClock::from_frequency(GHZ3, 10_000, Instant::ZERO).unwrap();
        assert_eq!(c.at(0), Instant::ZERO);
        let mut last = Instant::ZERO;
        for tsc in (0..1_000_000u64).step_by(997) {
            let t = c.at(tsc);
            assert!(t >= last);
            last = t;
        }
    }

    #[test]
    fn frequency_from_two_samples() {
        // 2.5 GHz over 10 ms of the reference clock.
        let c = TscClock::from_samples(7, 1_000, 7 + 25_000_000, 1_000 + 10_000_000).unwrap();
        assert_eq!(c.frequency(), 2_500_000_000);
        assert_eq!(
            c.at(7 + 2_500_000_000),
            Instant::from_nanos(1_000 + 1_000_000_000)
        );
        assert_eq!(
            TscClock::from_samples(0, 0, 10, 1_000_000),
            Err(ClockError::TooSlow(10_000))
        );
    }

    #[test]
    fn smoltcp_instants_are_microseconds() {
        assert_eq!(
            to_smoltcp(Instant::from_nanos(12_345_678)),
            smoltcp::time::Instant::from_micros(12_345)
        );
    }

    #[cfg(feature = "std")]
    #[test]
    fn loop_clock_is_monotonic_whichever_it_picked() {
        let c = LoopClock::new();
        let mut last = c.now();
        for _ in 0..10_000 {
            let t = c.now();
            assert!(t >= last);
            last = t;
        }
        assert_eq!(c.is_tsc(), tsc_is_invariant());
    }
}
