//! [`RecvMode`]: how a blocking connection waits for bytes. By default it sleeps in the
//! kernel (a blocking `read(2)`, or `epoll_wait` when a timeout is in play); on a core
//! dedicated to one connection it can instead spin on non-blocking reads, which saves
//! the wake-up (scheduler latency, a cold cache) at the price of a core at 100 %.
//!
//! [`Spinner`] is the waiting side of it: the connection asks it, each time a read
//! found nothing, whether to read again at once or to fall back to sleeping.

use std::time::{Duration, Instant};

/// How a blocking connection waits to receive (the builders' `recv_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RecvMode {
    /// Sleep in the kernel until bytes arrive (default).
    #[default]
    Sleep,
    /// Busy-poll: spin on non-blocking reads, never sleeping (read and close timeouts
    /// still hold). For a thread pinned to a core of its own.
    Spin,
    /// Spin for at most this long per wait for a message, then fall back to sleeping
    /// (until the next `recv`, which spins again).
    SpinFor(Duration),
}

/// The spin state of one connection (see the module docs).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Spinner {
    mode: RecvMode,
    /// `mode` is not [`RecvMode::Sleep`]: one flag for the receive path to test (an
    /// enum with a `Duration` inside compares in several instructions).
    spins: bool,
    /// `SpinFor`: when the current wait started spinning.
    since: Option<Instant>,
    /// The budget of the current wait is spent: sleep.
    spent: bool,
}

impl Spinner {
    pub fn new(mode: RecvMode) -> Spinner {
        Spinner {
            mode,
            spins: mode != RecvMode::Sleep,
            since: None,
            spent: false,
        }
    }

    /// A new wait for a message begins (a fresh budget).
    #[inline]
    pub fn reset(&mut self) {
        // Nothing to reset in the default mode: no stores on its receive path.
        if self.spins {
            self.since = None;
            self.spent = false;
        }
    }

    /// Whether reads should stay non-blocking now (spinning, budget left).
    #[inline]
    pub fn active(&self) -> bool {
        self.spins && !self.spent
    }

    /// A read found nothing. `Some(true)`: read again now (when the budget just ran
    /// out, that next read is already the usual sleeping one: a blocking `read(2)`, or
    /// a wait on the poll when a deadline is in play); `Some(false)`: `deadline`
    /// passed; `None`: not spinning: sleep.
    #[inline]
    pub fn spin(&mut self, deadline: Option<Instant>) -> Option<bool> {
        if !self.active() {
            return None;
        }
        let now = match (self.mode, deadline) {
            // No clock to read on the pure spin path.
            (RecvMode::Spin, None) => None,
            _ => Some(Instant::now()),
        };
        if let (Some(now), Some(d)) = (now, deadline)
            && now >= d
        {
            return Some(false);
        }
        if let (RecvMode::SpinFor(budget), Some(now)) = (self.mode, now) {
            let since = *self.since.get_or_insert(now);
            if now.duration_since(since) >= budget {
                self.spent = true;
                return Some(true);
            }
        }
        std::hint::spin_loop();
        Some(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sleep_mode_never_spins() {
        let mut s = Spinner::new(RecvMode::Sleep);
        assert!(!s.active());
        assert_eq!(s.spin(None), None);
    }

    #[test]
    fn spin_mode_spins_until_the_deadline() {
        let mut s = Spinner::new(RecvMode::Spin);
        for _ in 0..1000 {
            assert_eq!(s.spin(None), Some(true));
        }
        let past = Instant::now();
        assert_eq!(s.spin(Some(past)), Some(false));
        assert!(s.active());
    }

    #[test]
    fn spin_for_falls_back_to_sleep_after_the_budget_until_reset() {
        let mut s = Spinner::new(RecvMode::SpinFor(Duration::ZERO));
        assert!(s.active());
        assert_eq!(s.spin(None), Some(true));
        assert!(!s.active());
        assert_eq!(s.spin(None), None);
        s.reset();
        assert!(s.active());
        let mut s = Spinner::new(RecvMode::SpinFor(Duration::from_secs(3600)));
        assert_eq!(s.spin(None), Some(true));
        assert_eq!(s.spin(None), Some(true));
    }
}
