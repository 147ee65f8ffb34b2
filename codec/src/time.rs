//! Time as a value: the codec never reads a clock. Callers pass an [`Instant`] they made
//! from whatever clock they have (a TSC, `std::time::Instant`, a test counter), and the
//! codec's timers (handshake, close, keepalive, dead peer) compare against it.

use core::time::Duration;

/// A point in time: nanoseconds since an epoch the caller chose. Only differences
/// matter, so any monotonic source works, as long as one connection is always given
/// instants from the same source.
///
/// ```
/// use core::time::Duration;
/// use tickwire_codec::time::Instant;
///
/// let t0 = Instant::from_nanos(1_000);
/// let t1 = t0 + Duration::from_micros(5);
/// assert_eq!(t1.saturating_duration_since(t0), Duration::from_micros(5));
/// assert_eq!(t0.saturating_duration_since(t1), Duration::ZERO);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Instant(u64);

impl Instant {
    /// The epoch itself.
    pub const ZERO: Instant = Instant(0);

    /// `nanos` nanoseconds after the epoch.
    #[inline]
    pub const fn from_nanos(nanos: u64) -> Instant {
        Instant(nanos)
    }

    /// Nanoseconds since the epoch.
    #[inline]
    pub const fn as_nanos(self) -> u64 {
        self.0
    }

    /// Time from `earlier` to `self`; zero if `earlier` is later.
    #[inline]
    pub fn saturating_duration_since(self, earlier: Instant) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }

    /// `self + d`, saturating at the end of time (a deadline that never comes).
    #[inline]
    pub fn saturating_add(self, d: Duration) -> Instant {
        let nanos = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        Instant(self.0.saturating_add(nanos))
    }
}

impl core::ops::Add<Duration> for Instant {
    type Output = Instant;

    /// Saturating, as [`Instant::saturating_add`].
    #[inline]
    fn add(self, d: Duration) -> Instant {
        self.saturating_add(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_saturates() {
        let t = Instant::from_nanos(u64::MAX - 1);
        assert_eq!(t + Duration::from_secs(1), Instant::from_nanos(u64::MAX));
        assert_eq!(t + Duration::MAX, Instant::from_nanos(u64::MAX));
        assert_eq!(
            Instant::from_nanos(5).saturating_duration_since(Instant::from_nanos(2)),
            Duration::from_nanos(3)
        );
    }
}
