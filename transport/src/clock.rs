//! The transport's clock: `std::time::Instant` turned into the codec's
//! [`Instant`](tickwire_codec::time::Instant) (nanoseconds since a process-wide epoch) and
//! back. The codec never reads a clock; the drivers read this one and pass `now` in.
//!
//! On Linux, `now` reads `CLOCK_MONOTONIC` (the clock under `std::time::Instant` there)
//! straight into nanoseconds: no `Instant` subtraction on the request path.

use std::sync::OnceLock;
use std::time::{Duration, Instant as StdInstant};

use tickwire_codec::time::Instant;

/// The epoch: a std instant and the monotonic nanoseconds read beside it.
struct Epoch {
    std: StdInstant,
    raw: u64,
}

fn epoch() -> &'static Epoch {
    static EPOCH: OnceLock<Epoch> = OnceLock::new();
    EPOCH.get_or_init(|| {
        let std = StdInstant::now();
        Epoch {
            std,
            raw: raw_now(std),
        }
    })
}

/// Monotonic nanoseconds (Linux: `CLOCK_MONOTONIC`, as `std::time::Instant`).
#[cfg(target_os = "linux")]
#[inline]
fn raw_now(_: StdInstant) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(ts.tv_nsec as u64)
}

/// Elsewhere: nanoseconds of `t` from a first std instant.
#[cfg(not(target_os = "linux"))]
fn raw_now(t: StdInstant) -> u64 {
    static BASE: OnceLock<StdInstant> = OnceLock::new();
    let base = *BASE.get_or_init(|| t);
    u64::try_from(t.saturating_duration_since(base).as_nanos()).unwrap_or(u64::MAX)
}

/// A std instant as a codec instant (instants before the epoch clamp to it).
pub(crate) fn from_std(t: StdInstant) -> Instant {
    let nanos = t.saturating_duration_since(epoch().std).as_nanos();
    Instant::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
}

/// A codec instant as a std instant.
pub(crate) fn to_std(t: Instant) -> StdInstant {
    let e = epoch().std;
    e.checked_add(Duration::from_nanos(t.as_nanos()))
        .unwrap_or(e + Duration::from_secs(1 << 40))
}

/// Now, for the codec.
#[inline]
pub(crate) fn now() -> Instant {
    let e = epoch();
    Instant::from_nanos(raw_now(e.std).saturating_sub(e.raw))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_within_a_nanosecond() {
        let t = StdInstant::now() + Duration::from_millis(1500);
        let back = to_std(from_std(t));
        let diff = if back > t { back - t } else { t - back };
        assert!(diff < Duration::from_nanos(2), "{diff:?}");
        assert!(from_std(t) > now());
    }

    #[test]
    fn now_agrees_with_the_std_clock() {
        let before = from_std(StdInstant::now());
        let n = now();
        let after = from_std(StdInstant::now());
        assert!(before <= n && n <= after, "{before:?} {n:?} {after:?}");
    }
}
