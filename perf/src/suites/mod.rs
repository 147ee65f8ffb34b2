//! Benchmark suites. A suite turns shared inputs into [`Case`]s: one
//! (scenario, library) row each, which checks its output against the inputs
//! once and then measures.

pub mod bypass;
pub mod codec;
pub mod loopback;
pub mod rest;
pub mod tls;
pub mod tokio_loopback;

use crate::harness::{Measurement, RunConfig};

/// What suites need to build their cases.
#[derive(Debug, Clone)]
pub struct Setup {
    /// Operations per timed batch for in-memory rows (`--batch`).
    pub batch: usize,
    /// Core of the measuring thread (first of `--cores`).
    pub core: usize,
    /// Core for a second thread (a loopback server), if one was given.
    pub peer_core: Option<usize>,
}

/// Every row of every suite, in report order. A suite registers itself with
/// one line here; within a scenario tickwire's row comes first and is the
/// baseline.
pub fn all(setup: &Setup) -> Vec<Case<'static>> {
    let mut v = Vec::new();
    codec::register(setup, &mut v);
    loopback::register(setup, &mut v);
    rest::register(setup, &mut v);
    tls::register(setup, &mut v);
    bypass::register(setup, &mut v);
    tokio_loopback::register(setup, &mut v);
    v
}

/// One runnable row of a suite.
pub struct Case<'a> {
    /// What is measured.
    pub scenario: String,
    /// Who does it.
    pub library: String,
    /// The row its scenario's ratios are computed against.
    pub baseline: bool,
    /// What the timed region includes beyond the obvious.
    pub note: &'static str,
    /// Whether `--instructions` runs it (false for rows whose cost is in the
    /// kernel or in another thread, which callgrind does not see as ours).
    pub counts: bool,
    run: Box<dyn Fn(&RunConfig) -> Measurement + 'a>,
}

impl<'a> Case<'a> {
    /// A case whose `run` verifies, then measures.
    pub fn new(
        scenario: impl Into<String>,
        library: impl Into<String>,
        baseline: bool,
        note: &'static str,
        run: impl Fn(&RunConfig) -> Measurement + 'a,
    ) -> Self {
        Case {
            scenario: scenario.into(),
            library: library.into(),
            baseline,
            note,
            counts: true,
            run: Box::new(run),
        }
    }

    /// Verify the library's output once, then measure.
    pub fn run(&self, cfg: &RunConfig) -> Measurement {
        (self.run)(cfg)
    }
}

impl std::fmt::Debug for Case<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Case")
            .field("scenario", &self.scenario)
            .field("library", &self.library)
            .field("baseline", &self.baseline)
            .finish_non_exhaustive()
    }
}

/// Consume a payload: its length goes through the optimizer barrier and its
/// last byte is loaded and returned, so the work that produced it cannot be
/// skipped and the bytes are touched.
///
/// Only the length (a scalar) is passed to `black_box`, never the slice: a
/// fat pointer given to `black_box` must sit in memory, and LLVM tends to
/// copy it there with one 16-byte load of the two 8-byte halves it has just
/// stored. That load cannot be store-forwarded and stalls for ~20 cycles,
/// which is the benchmark's cost, not the library's (measured: it tripled
/// tickwire's per-message parse time).
#[inline(always)]
pub fn touch(bytes: &[u8]) -> u64 {
    let n = std::hint::black_box(bytes.len());
    bytes.get(n.wrapping_sub(1)).map_or(0, |&x| u64::from(x))
}

/// A library returned something other than what the inputs hold.
#[cold]
#[inline(never)]
pub fn unexpected(what: &dyn std::fmt::Debug) -> ! {
    panic!("benchmark input decoded to something unexpected: {what:?}")
}
