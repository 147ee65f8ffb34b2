//! Benchmark suites. A suite turns shared inputs into [`Case`]s: one
//! (scenario, library) row each, which checks its output against the inputs
//! once and then measures. [`run_scenario`] runs the rows of one scenario,
//! interleaved (taking turns on the measuring core), in rounds of whole runs
//! one after another, or (`--sequential`) once each one after another.

pub mod bypass;
#[cfg(feature = "dpdk")]
pub mod bypass_dpdk;
pub mod bypass_tls;
pub mod bypass_xdp;
pub mod codec;
pub mod executors;
pub mod fanout;
pub mod loopback;
pub mod rest;
pub mod tail;
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
    bypass_xdp::register(setup, &mut v);
    #[cfg(feature = "dpdk")]
    bypass_dpdk::register(setup, &mut v);
    bypass_tls::register(setup, &mut v);
    tokio_loopback::register(setup, &mut v);
    executors::register(setup, &mut v);
    fanout::register(setup, &mut v);
    tail::register(setup, &mut v);
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
    /// scenario run in rounds of whole runs instead.
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

/// Rounds of whole runs for a scenario whose rows may not take turns (see
/// [`run_scenario`]).
pub const WHOLE_RUN_ROUNDS: u32 = 6;

/// Whether `rows` (one scenario) run in [`WHOLE_RUN_ROUNDS`] rounds of whole
/// runs when `slice` is asked for: several rows, one of which may not take
/// turns, and timing (not `--instructions`).
pub fn whole_run_rounds(rows: &[&Case<'_>], cfg: &RunConfig, slice: Option<Duration>) -> bool {
    slice.is_some() && rows.len() > 1 && cfg.count_rounds == 0 && turn_slice(rows, slice).is_none()
}

/// The budget of one row's run in one of `rounds` rounds: the sampling time
/// and sample cap split between the rounds; the warm-up is the larger of its
/// share and 50 ms (never more than the whole), since every run sets up
/// afresh (a new connection that has to reach its steady state).
pub fn round_config(cfg: &RunConfig, rounds: u32) -> RunConfig {
    let r = rounds.max(1);
    RunConfig {
        warmup: (cfg.warmup / r).max(cfg.warmup.min(Duration::from_millis(50))),
        measure: cfg.measure / r,
        max_samples: cfg.max_samples.div_ceil(u64::from(r)),
        ..*cfg
    }
}

/// Run the rows of one scenario and return their measurements in row order.
///
/// With `slice` (and every row [`Case::interleave`]) the rows run at once,
/// each on its own thread pinned to `core`, and take turns of `slice`
/// sampling (see [`crate::rotation`]): setup and verification may overlap,
/// timed sampling never does, and each row gets its whole budget.
///
/// With `slice` but a row that may not take turns (its peer keeps working
/// while it waits), the rows run whole runs one after another, in
/// [`WHOLE_RUN_ROUNDS`] rounds with the budget split between them
/// ([`round_config`]), each round starting one row later in the order. Each
/// run sets up afresh (a streaming row's new connection starts without a
/// backlog), the runs' samples are merged and each run's p50 is that row's
/// entry for the round in [`Measurement::rounds`]. So a slow spell of the
/// machine falls on a run or two of every row, not on all of one row, and the
/// rows share the machine's conditions over the scenario's time. (Seen on the
/// receive stream: spells of about a second at ~230 ticks per message instead
/// of ~75, the raw floor as well, with every read returning about one sender
/// write: the receiver waited on a sender that had slowed down. Run once
/// each, one such spell put a whole row at 3x its floor.)
///
/// Without `slice` they run once each, one after another on the calling
/// thread, as `--sequential` asks. A row that panics (its output was wrong)
/// panics the caller after the others finish (rows in turns) or at once.
pub fn run_scenario(
    rows: &[&Case<'_>],
    cfg: &RunConfig,
    core: usize,
    slice: Option<Duration>,
) -> Vec<Measurement> {
    if whole_run_rounds(rows, cfg, slice) {
        return run_in_rounds(rows, cfg, WHOLE_RUN_ROUNDS);
    }
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

/// [`run_scenario`]'s rounds of whole runs, on the calling thread.
fn run_in_rounds(rows: &[&Case<'_>], cfg: &RunConfig, rounds: u32) -> Vec<Measurement> {
    let each = round_config(cfg, rounds);
    let n = rows.len();
    let mut out: Vec<Option<Measurement>> = (0..n).map(|_| None).collect();
    for round in 0..rounds {
        for k in 0..n {
            let i = (round as usize + k) % n;
            let m = rows[i].run(&each);
            let turn = (m.samples() > 0).then(|| (round, m.quantile(0.5)));
            let acc = match &mut out[i] {
                Some(acc) => {
                    acc.hist
                        .add(&m.hist)
                        .expect("the runs of a row share their histogram bounds");
                    acc
                }
                slot => slot.insert(Measurement {
                    rounds: Vec::new(),
                    ..m
                }),
            };
            acc.rounds.extend(turn);
        }
    }
    out.into_iter().map(|m| m.expect("every row ran")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::bench_op;
    use hdrhistogram::Histogram;
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
        // A row that may not interleave: no turns, whole runs in rounds (see
        // `whole_runs_rotate_and_merge`); `--sequential`: one run per row.
        let lone = [row("u", "a", 3), row("u", "b", 3).sequential()];
        let refs: Vec<&Case<'_>> = lone.iter().collect();
        assert!(turn_slice(&refs, Some(Duration::ZERO)).is_none());
        let once = run_scenario(&refs, &cfg, 0, None);
        assert!(once.iter().all(|m| m.rounds.is_empty() && m.samples() > 0));
        let ms = run_scenario(&refs, &cfg, 0, Some(Duration::ZERO));
        let rounds = u64::from(WHOLE_RUN_ROUNDS);
        for (m, one) in ms.iter().zip(&once) {
            assert_eq!(m.rounds.len() as u64, rounds);
            assert_eq!(m.samples(), rounds * one.samples());
        }
    }

    /// Rounds of whole runs: each round starts one row later, every run gets
    /// its share of the budget, the samples are merged and each run's p50 is
    /// its row's entry for that round.
    #[test]
    fn whole_runs_rotate_and_merge() {
        use std::sync::Mutex;
        let order = Mutex::new(Vec::new());
        let row = |library: &'static str, ticks: u64| {
            let order = &order;
            Case::new("s", library, library == "a", "", move |cfg| {
                order.lock().unwrap().push((library, *cfg));
                let mut hist = Histogram::new_with_bounds(1, 1 << 40, 3).unwrap();
                let run = order.lock().unwrap().len() as u64;
                for _ in 0..cfg.max_samples {
                    hist.record(10 * (ticks + run)).unwrap();
                }
                Measurement {
                    hist,
                    batch: cfg.batch,
                    rounds: Vec::new(),
                }
            })
            .sequential()
        };
        let cases = [row("a", 10), row("b", 20), row("c", 30)];
        let refs: Vec<&Case<'_>> = cases.iter().collect();
        let cfg = RunConfig {
            batch: 4,
            warmup: Duration::from_millis(600),
            measure: Duration::from_millis(1200),
            max_samples: 11,
            count_rounds: 0,
        };
        let ms = run_scenario(&refs, &cfg, 0, Some(Duration::from_millis(10)));
        let order = order.lock().unwrap().clone();
        let names: String = order.iter().map(|(l, _)| *l).collect();
        assert_eq!(names, "abcbcacababcbcacab");
        let each = RunConfig {
            warmup: Duration::from_millis(100),
            measure: Duration::from_millis(200),
            max_samples: 2,
            ..cfg
        };
        assert!(order.iter().all(|(_, c)| *c == each), "{order:?}");
        for (m, (base, runs)) in ms.iter().zip([
            (10, [1, 6, 8, 10, 15, 17]),
            (20, [2, 4, 9, 11, 13, 18]),
            (30, [3, 5, 7, 12, 14, 16]),
        ]) {
            assert_eq!(m.samples(), 2 * 6);
            let want: Vec<(u32, f64)> = (0..6)
                .map(|r| (r, (base + runs[r as usize]) as f64))
                .collect();
            assert_eq!(m.rounds, want);
        }
        // The warm-up share never drops below 50 ms unless the whole is less.
        let short = round_config(&cfg, 60);
        assert_eq!(short.warmup, Duration::from_millis(50));
        let tiny = RunConfig {
            warmup: Duration::from_millis(20),
            ..cfg
        };
        assert_eq!(round_config(&tiny, 6).warmup, Duration::from_millis(20));
        // Counting instructions: one run per row.
        let counting = RunConfig {
            count_rounds: 1,
            ..cfg
        };
        assert!(!whole_run_rounds(
            &refs,
            &counting,
            Some(Duration::from_millis(10))
        ));
    }
}
