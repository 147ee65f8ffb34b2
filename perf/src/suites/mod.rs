//! Benchmark suites. A suite turns shared inputs into [`Case`]s: one
//! (scenario, library) row each, which checks its output against the inputs
//! once and then measures. [`run_scenario`] runs the rows of one scenario,
//! interleaved (taking turns on the measuring core) or one after another.

pub mod bypass;
pub mod codec;
pub mod loopback;
pub mod rest;
pub mod tls;
pub mod tokio_loopback;

use std::sync::Arc;
use std::time::Duration;

use crate::harness::{Measurement, RunConfig};
use crate::machine;
use crate::rotation::{self, Rotation};

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
    /// Whether the row can take turns with the others of its scenario (see
    /// [`run_scenario`]); false for rows whose peer keeps working while the
    /// row waits for its turn (a busy-polling echo spins on the peer core, a
    /// streaming writer builds a backlog), which would disturb the row
    /// sampling or flatter the row coming back. One such row makes its whole
    /// scenario run one row after another.
    pub interleave: bool,
    run: Box<dyn Fn(&RunConfig) -> Measurement + Send + Sync + 'a>,
}

impl<'a> Case<'a> {
    /// A case whose `run` verifies, then measures.
    pub fn new(
        scenario: impl Into<String>,
        library: impl Into<String>,
        baseline: bool,
        note: &'static str,
        run: impl Fn(&RunConfig) -> Measurement + Send + Sync + 'a,
    ) -> Self {
        Case {
            scenario: scenario.into(),
            library: library.into(),
            baseline,
            note,
            counts: true,
            interleave: true,
            run: Box::new(run),
        }
    }

    /// The same row with [`Case::interleave`] off.
    pub fn sequential(mut self) -> Self {
        self.interleave = false;
        self
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

/// The selected rows grouped by scenario, scenarios in order of first
/// appearance, rows in their order.
pub fn by_scenario<'c, 'a>(rows: &[&'c Case<'a>]) -> Vec<Vec<&'c Case<'a>>> {
    let mut out: Vec<Vec<&'c Case<'a>>> = Vec::new();
    for &c in rows {
        match out.iter_mut().find(|g| g[0].scenario == c.scenario) {
            Some(g) => g.push(c),
            None => out.push(vec![c]),
        }
    }
    out
}

/// The turn length `rows` (one scenario) run with when `slice` is asked
/// for: none for a single row, or if one row may not interleave.
pub fn turn_slice(rows: &[&Case<'_>], slice: Option<Duration>) -> Option<Duration> {
    slice.filter(|_| rows.len() > 1 && rows.iter().all(|c| c.interleave))
}

/// Run the rows of one scenario and return their measurements in row order.
///
/// With `slice` (and every row [`Case::interleave`]) the rows run at once,
/// each on its own thread pinned to `core`, and take turns of `slice`
/// sampling (see [`crate::rotation`]): setup and verification may overlap,
/// timed sampling never does, and each row gets its whole budget. Without,
/// they run one after another on the calling thread, as `--sequential` asks.
/// A row that panics (its output was wrong) panics the caller after the
/// others finish.
pub fn run_scenario(
    rows: &[&Case<'_>],
    cfg: &RunConfig,
    core: usize,
    slice: Option<Duration>,
) -> Vec<Measurement> {
    let Some(slice) = turn_slice(rows, slice) else {
        return rows.iter().map(|c| c.run(cfg)).collect();
    };
    let rot = Arc::new(Rotation::new(rows.len(), slice));
    std::thread::scope(|s| {
        let handles: Vec<_> = rows
            .iter()
            .enumerate()
            .map(|(id, c)| {
                let rot = rot.clone();
                std::thread::Builder::new()
                    .name(format!("bench-row-{id}"))
                    .spawn_scoped(s, move || {
                        machine::pin(core);
                        let _seat = rotation::sit(rot, id);
                        c.run(cfg)
                    })
                    .expect("spawn a row thread")
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::bench_op;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Three rows (one of another scenario) through the runner: grouped by
    /// scenario, results in row order, and interleaved rows never run an op
    /// at the same time.
    #[test]
    fn runner_groups_and_interleaves() {
        static BUSY: AtomicUsize = AtomicUsize::new(0);
        let row = |scenario: &str, library: &str, samples: u64| {
            Case::new(scenario, library, library == "a", "", move |cfg| {
                let cfg = RunConfig {
                    max_samples: samples,
                    ..*cfg
                };
                bench_op(
                    &cfg,
                    &mut (),
                    |_| {},
                    |_| {
                        assert_eq!(BUSY.fetch_add(1, Ordering::SeqCst), 0, "overlap");
                        BUSY.fetch_sub(1, Ordering::SeqCst);
                    },
                )
            })
        };
        let cases = [row("s", "a", 12), row("t", "x", 3), row("s", "b", 7)];
        let refs: Vec<&Case<'_>> = cases.iter().collect();
        let groups = by_scenario(&refs);
        assert_eq!(groups.len(), 2);
        assert_eq!(
            groups[0].iter().map(|c| &c.library[..]).collect::<Vec<_>>(),
            ["a", "b"]
        );
        let cfg = RunConfig {
            batch: 2,
            warmup: Duration::ZERO,
            measure: Duration::from_secs(600),
            max_samples: 0,
            count_rounds: 0,
        };
        let ms = run_scenario(&groups[0], &cfg, 0, Some(Duration::ZERO));
        assert_eq!((ms[0].samples(), ms[1].samples()), (12, 7));
        assert_eq!((ms[0].rounds.len(), ms[1].rounds.len()), (12, 7));
        let seq = run_scenario(&groups[0], &cfg, 0, None);
        assert!(seq[0].rounds.is_empty() && seq[1].rounds.is_empty());
        // A row that may not interleave makes its scenario sequential.
        let lone = [row("u", "a", 3), row("u", "b", 3).sequential()];
        let refs: Vec<&Case<'_>> = lone.iter().collect();
        let ms = run_scenario(&refs, &cfg, 0, Some(Duration::ZERO));
        assert!(ms.iter().all(|m| m.rounds.is_empty() && m.samples() > 0));
    }
}
