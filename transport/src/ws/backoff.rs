//! The reconnect schedule of [`Reconnecting`](super::Reconnecting) (blocking and tokio):
//! [`Backoff`], the policy (exponential, capped, with jitter), and [`Schedule`], its
//! state. Time is a value here: the schedule is computed from the instants the caller
//! passes and a seeded random source, so it is the same on every machine and is tested
//! without sleeping.

use std::time::{Duration, Instant};

/// How long to wait before each reconnect attempt: `initial`, multiplied by `factor`
/// after every failed attempt in a row, capped at `max`, each delay shortened by a
/// random part of up to `jitter` of it (so clients that lost the same server do not
/// come back in step).
///
/// ```
/// use std::time::Duration;
/// use tickwire::ws::Backoff;
///
/// let b = Backoff {
///     initial: Duration::from_millis(100),
///     max: Duration::from_secs(5),
///     jitter: 0.0, // no randomness: the bare schedule
///     ..Backoff::default()
/// };
/// let delays: Vec<_> = (0..8).map(|n| b.delay(n, 0).as_millis()).collect();
/// assert_eq!(delays, [100, 200, 400, 800, 1600, 3200, 5000, 5000]);
/// // With jitter, a random part of the delay is taken off (`random`: any u64).
/// let j = Backoff { jitter: 0.5, ..b };
/// assert!(j.delay(3, u64::MAX) >= Duration::from_millis(400) && j.delay(3, 0) == Duration::from_millis(800));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Backoff {
    /// The delay before the first attempt after a loss (default 100 ms).
    pub initial: Duration,
    /// The longest delay (default 30 s).
    pub max: Duration,
    /// Growth of the delay per failed attempt in a row (default 2).
    pub factor: u32,
    /// The part of each delay drawn at random, 0.0 (none) to 1.0 ("full jitter": any
    /// delay from zero up); default 0.5.
    pub jitter: f64,
    /// A connection that stayed up this long counts as a success: the next loss starts
    /// the schedule again from `initial` (default 10 s).
    pub reset_after: Duration,
    /// Give up after this many failed attempts in a row (default `None`: never).
    pub max_attempts: Option<u32>,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff {
            initial: Duration::from_millis(100),
            max: Duration::from_secs(30),
            factor: 2,
            jitter: 0.5,
            reset_after: Duration::from_secs(10),
            max_attempts: None,
        }
    }
}

impl Backoff {
    /// The delay before attempt `n` of a series (0: the first after the loss), with
    /// `random` (uniform bits; the top 53 are used) choosing the jitter.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickwire::ws::Backoff;
    ///
    /// let b = Backoff { jitter: 1.0, ..Backoff::default() }; // full jitter
    /// assert_eq!(b.delay(0, 0), Duration::from_millis(100)); // random 0: the whole delay
    /// assert!(b.delay(0, u64::MAX) < Duration::from_millis(1)); // the most: nearly none
    /// ```
    pub fn delay(&self, n: u32, random: u64) -> Duration {
        let grow = u64::from(self.factor.max(1)).saturating_pow(n);
        let nanos = u64::try_from(self.initial.as_nanos())
            .unwrap_or(u64::MAX)
            .saturating_mul(grow);
        let full = Duration::from_nanos(nanos).min(self.max);
        let r = (random >> 11) as f64 / (1u64 << 53) as f64;
        let cut = self.jitter.clamp(0.0, 1.0) * r;
        full.mul_f64(1.0 - cut)
    }
}

/// A [`Backoff`]'s state over a connection's life: the failed attempts in a row and the
/// random source of the jitter (SplitMix64, seeded by the caller).
///
/// ```
/// use std::time::{Duration, Instant};
/// use tickwire::ws::{Backoff, Schedule};
///
/// let b = Backoff { jitter: 0.0, max_attempts: Some(3), ..Backoff::default() };
/// let mut s = Schedule::new(b, 7);
/// let t0 = Instant::now();
/// // Connected at t0, lost 1 s later (shorter than `reset_after`), then three failures.
/// assert_eq!(s.next_attempt(Some(t0), t0 + Duration::from_secs(1)), Some(t0 + Duration::from_millis(1100)));
/// let t1 = t0 + Duration::from_secs(2);
/// assert_eq!(s.next_attempt(None, t1), Some(t1 + Duration::from_millis(200)));
/// assert_eq!(s.next_attempt(None, t1), Some(t1 + Duration::from_millis(400)));
/// assert_eq!(s.next_attempt(None, t1), None); // a fourth attempt: given up
/// ```
#[derive(Debug, Clone)]
pub struct Schedule {
    backoff: Backoff,
    failures: u32,
    rng: u64,
}

impl Schedule {
    /// A schedule under `backoff`, its jitter drawn from a generator seeded with `seed`
    /// (the same seed gives the same delays).
    ///
    /// ```
    /// use std::time::Instant;
    /// use tickwire::ws::{Backoff, Schedule};
    ///
    /// let now = Instant::now();
    /// let mut a = Schedule::new(Backoff::default(), 42);
    /// let mut b = Schedule::new(Backoff::default(), 42);
    /// assert_eq!(a.next_attempt(None, now), b.next_attempt(None, now));
    /// ```
    pub fn new(backoff: Backoff, seed: u64) -> Schedule {
        Schedule {
            backoff,
            failures: 0,
            rng: seed,
        }
    }

    /// The policy.
    ///
    /// ```
    /// use tickwire::ws::{Backoff, Schedule};
    ///
    /// assert_eq!(Schedule::new(Backoff::default(), 1).backoff(), &Backoff::default());
    /// ```
    pub fn backoff(&self) -> &Backoff {
        &self.backoff
    }

    /// Attempts that failed (or connections that did not last `reset_after`) in a row.
    ///
    /// ```
    /// use std::time::Instant;
    /// use tickwire::ws::{Backoff, Schedule};
    ///
    /// let mut s = Schedule::new(Backoff::default(), 1);
    /// s.next_attempt(None, Instant::now());
    /// assert_eq!(s.failures(), 1);
    /// ```
    pub fn failures(&self) -> u32 {
        self.failures
    }

    /// A connection ended at `now`: it had been up since `up_since`, or (`None`) the
    /// attempt to make it failed. When to try again; `None` once `max_attempts` failed
    /// in a row (give up). A connection that lasted `reset_after` starts the series
    /// again.
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    /// use tickwire::ws::{Backoff, Schedule};
    ///
    /// let b = Backoff { jitter: 0.0, ..Backoff::default() };
    /// let mut s = Schedule::new(b, 1);
    /// let t0 = Instant::now();
    /// let first = s.next_attempt(None, t0).unwrap(); // 100 ms
    /// let second = s.next_attempt(None, first).unwrap(); // 200 ms later
    /// assert_eq!(second - first, Duration::from_millis(200));
    /// // Up for a minute: the next loss starts again from 100 ms.
    /// let lost = second + Duration::from_secs(60);
    /// assert_eq!(s.next_attempt(Some(second), lost), Some(lost + Duration::from_millis(100)));
    /// ```
    pub fn next_attempt(&mut self, up_since: Option<Instant>, now: Instant) -> Option<Instant> {
        if up_since.is_some_and(|t| now.saturating_duration_since(t) >= self.backoff.reset_after) {
            self.failures = 0;
        }
        if self
            .backoff
            .max_attempts
            .is_some_and(|m| self.failures >= m)
        {
            return None;
        }
        let random = self.next_random();
        let delay = self.backoff.delay(self.failures, random);
        self.failures = self.failures.saturating_add(1);
        now.checked_add(delay)
    }

    /// SplitMix64.
    fn next_random(&mut self) -> u64 {
        self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// A seed for the jitter when the caller gives none: the OS's randomness (through the
/// masking-key generator), else the clock.
pub(crate) fn default_seed() -> u64 {
    let mut b = [0u8; 8];
    match tickwire_codec::rand::MaskRng::from_entropy() {
        Ok(mut rng) => rng.fill_bytes(&mut b),
        Err(_) => {
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default();
            b = (t.as_nanos() as u64).to_le_bytes();
        }
    }
    u64::from_le_bytes(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn exponential_capped_and_jittered_within_bounds() {
        let b = Backoff {
            initial: ms(50),
            max: ms(1000),
            factor: 3,
            jitter: 0.25,
            ..Backoff::default()
        };
        let mut s = Schedule::new(b, 99);
        let t = Instant::now();
        let mut seen = Vec::new();
        for n in 0..12u32 {
            let full = ms(50).saturating_mul(3u32.saturating_pow(n)).min(ms(1000));
            let d = s.next_attempt(None, t).unwrap() - t;
            assert!(
                d <= full && d >= full.mul_f64(0.75),
                "{n}: {d:?} of {full:?}"
            );
            seen.push(d);
        }
        // Jitter: the capped delays are not all the same.
        assert!(seen[8..].windows(2).any(|w| w[0] != w[1]), "{seen:?}");
        // A huge attempt count saturates instead of overflowing.
        assert_eq!(Backoff { jitter: 0.0, ..b }.delay(u32::MAX, 0), ms(1000));
    }

    #[test]
    fn the_same_seed_gives_the_same_schedule_and_others_differ() {
        let t = Instant::now();
        let run = |seed| {
            let mut s = Schedule::new(Backoff::default(), seed);
            (0..6).map(|_| s.next_attempt(None, t)).collect::<Vec<_>>()
        };
        assert_eq!(run(5), run(5));
        assert_ne!(run(5), run(6));
    }

    #[test]
    fn a_lasting_connection_resets_and_max_attempts_gives_up() {
        let b = Backoff {
            jitter: 0.0,
            reset_after: Duration::from_secs(10),
            max_attempts: Some(2),
            ..Backoff::default()
        };
        let mut s = Schedule::new(b, 0);
        let t = Instant::now();
        assert_eq!(s.next_attempt(None, t), Some(t + ms(100)));
        assert_eq!(s.next_attempt(None, t), Some(t + ms(200)));
        assert_eq!(s.failures(), 2);
        assert_eq!(s.next_attempt(None, t), None);
        // Up 9 s: not long enough, still given up.
        assert_eq!(s.next_attempt(Some(t), t + Duration::from_secs(9)), None);
        // Up 10 s: a new series.
        let later = t + Duration::from_secs(10);
        assert_eq!(s.next_attempt(Some(t), later), Some(later + ms(100)));
        assert_eq!(s.failures(), 1);
    }
}
