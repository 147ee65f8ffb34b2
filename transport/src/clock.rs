//! The transport's clock: `std::time::Instant` turned into the codec's
//! [`Instant`](tickwire_codec::time::Instant) (nanoseconds since a process-wide epoch) and
//! back. The codec never reads a clock; the drivers read this one and pass `now` in.

use std::sync::OnceLock;
use std::time::{Duration, Instant as StdInstant};

use tickwire_codec::time::Instant;

fn epoch() -> StdInstant {
    static EPOCH: OnceLock<StdInstant> = OnceLock::new();
    *EPOCH.get_or_init(StdInstant::now)
}

/// A std instant as a codec instant (instants before the epoch clamp to it).
pub(crate) fn from_std(t: StdInstant) -> Instant {
    let nanos = t.saturating_duration_since(epoch()).as_nanos();
    Instant::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
}

/// A codec instant as a std instant.
pub(crate) fn to_std(t: Instant) -> StdInstant {
    let e = epoch();
    e.checked_add(Duration::from_nanos(t.as_nanos()))
        .unwrap_or(e + Duration::from_secs(1 << 40))
}

/// Now, for the codec.
pub(crate) fn now() -> Instant {
    from_std(StdInstant::now())
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
}
