//! Batched timing into HDR histograms.
//!
//! A sample times one batch of `B` operations between [`clock::start`] and
//! [`clock::stop`], so the timer's own cost is spread over `B`; the histogram
//! records per-op time = batch time / `B`, in tenths of a unit
//! ([`SCALE`]) so that results of a few ticks keep a decimal. Before each
//! batch an untimed `prep` step may reset state (rewind a stream, refill a
//! buffer). Nothing is subtracted: the timer's cost shows up as its own row
//! ([`timer_overhead`]) for readers to judge.
//!
//! Each run warms up for [`RunConfig::warmup`], then samples until
//! [`RunConfig::measure`] has elapsed or [`RunConfig::max_samples`] were taken.
//!
//! On a thread seated in a [`rotation`] (the rows of one scenario,
//! interleaved) the same budget is spent in turns: sampling only while the
//! row holds the baton, a slice at a time, with a short untimed re-warm-up
//! after every wait (the other rows evicted its caches and branch history),
//! and a p50 recorded per turn ([`Measurement::rounds`]) so that ratios can
//! be compared round by round.

use std::hint::black_box;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use crate::rotation::{self, Place};
use crate::{callgrind, clock};

/// Histogram values are per-op time multiplied by this (tenths of a unit).
pub const SCALE: u64 = 10;

/// Samples taken between looks at the wall clock.
const CHUNK: u64 = 256;

/// How long and how finely to measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunConfig {
    /// Operations per timed batch (B).
    pub batch: usize,
    /// Untimed warm-up before sampling.
    pub warmup: Duration,
    /// Sampling time per row.
    pub measure: Duration,
    /// Upper bound on samples per row.
    pub max_samples: u64,
    /// Instruction-count mode (`--instructions`, under callgrind) when not 0:
    /// no timing; a few untimed warm-up batches, then this many batches with
    /// callgrind's collection switched on around each one.
    pub count_rounds: u32,
}

impl RunConfig {
    /// About 0.6 s per row.
    pub fn quick() -> Self {
        RunConfig {
            batch: 64,
            warmup: Duration::from_millis(100),
            measure: Duration::from_millis(500),
            max_samples: 5_000_000,
            count_rounds: 0,
        }
    }

    /// About 6 s per row.
    pub fn full() -> Self {
        RunConfig {
            batch: 64,
            warmup: Duration::from_secs(1),
            measure: Duration::from_secs(5),
            max_samples: 50_000_000,
            count_rounds: 0,
        }
    }
}

/// The result of one scenario run.
#[derive(Debug, Clone)]
pub struct Measurement {
    /// Per-op time of each sample, scaled by [`SCALE`].
    pub hist: Histogram<u64>,
    /// Operations per sample.
    pub batch: usize,
    /// Interleaved runs: (round, p50 of that turn's samples in [`clock::UNIT`])
    /// per turn; empty for a run in one go.
    pub rounds: Vec<(u32, f64)>,
}

impl Measurement {
    /// Per-op time at quantile `q` (0..=1), in [`clock::UNIT`].
    pub fn quantile(&self, q: f64) -> f64 {
        self.hist.value_at_quantile(q) as f64 / SCALE as f64
    }

    /// Largest per-op time seen, in [`clock::UNIT`].
    pub fn max(&self) -> f64 {
        self.hist.max() as f64 / SCALE as f64
    }

    /// Number of samples (batches) taken.
    pub fn samples(&self) -> u64 {
        self.hist.len()
    }
}

/// Largest recordable value: 2^40 tenths of a tick (about a minute at 2 GHz);
/// larger ones are clamped to it.
const HIGHEST: u64 = 1 << 40;

fn new_histogram() -> Histogram<u64> {
    // Fixed range so that `saturating_record` clamps only absurd values
    // (it never auto-resizes); 3 significant digits.
    Histogram::new_with_bounds(1, HIGHEST, 3).expect("valid histogram bounds")
}

/// Time `batch(state, B)` after an untimed `prep(state)`, repeatedly.
///
/// `batch` must perform exactly `B` operations (its second argument) and feed
/// its results to [`black_box`]. It is generic and gets inlined between the
/// two clock reads.
pub fn bench_batch<S, P, F>(
    cfg: &RunConfig,
    state: &mut S,
    mut prep: P,
    mut batch: F,
) -> Measurement
where
    P: FnMut(&mut S),
    F: FnMut(&mut S, usize),
{
    let b = cfg.batch.max(1);
    let place = seat(cfg);
    let mut plan = Plan::new(cfg, place.as_ref());
    let counting = plan.counted;
    loop {
        match plan.next() {
            Phase::Warm(n) => {
                for _ in 0..n {
                    prep(state);
                    batch(state, b);
                }
            }
            Phase::Sample(n) => {
                for _ in 0..n {
                    prep(state);
                    // One loop for timing and counting, so that the counted
                    // batch is the very code the timed one runs (a separate
                    // counting loop got its own copy of the inlined batch,
                    // compiled differently: 51 instructions per apply_mask
                    // where the timed copy runs about 40). Opaque, so the
                    // loop is not split in two on it.
                    let count = black_box(counting);
                    let t0 = begin(count);
                    batch(state, black_box(b));
                    let t1 = end(count);
                    plan.record(t0, t1);
                }
            }
            Phase::Done => return plan.finish(),
        }
    }
}

/// The thread's seat in the rotation of its scenario's rows, if it has one;
/// none in count mode, where a row counts alone and nothing is timed.
fn seat(cfg: &RunConfig) -> Option<Place> {
    if cfg.count_rounds > 0 {
        return None;
    }
    rotation::current()
}

/// Start of a sampled batch: the clock, or in count mode collection on.
#[inline(always)]
fn begin(counting: bool) -> u64 {
    if counting {
        callgrind::set_counting(true);
        callgrind::toggle_collect();
        return 0;
    }
    clock::start()
}

/// End of a sampled batch: the clock, or in count mode collection off.
#[inline(always)]
fn end(counting: bool) -> u64 {
    if counting {
        callgrind::toggle_collect();
        callgrind::set_counting(false);
        return 0;
    }
    clock::stop()
}

/// [`bench_batch`] for async work: the whole run is one future, driven by one
/// `block_on`, so each batch is awaited inside a running task, as an
/// application's task awaits its messages, instead of entering the runtime
/// (`block_on`) for every batch. Same sampling (in turns on a seated
/// thread), and in count mode the same warm-up and collection around each
/// awaited batch (what the runtime does while the batch waits, parking and
/// waking included, is counted).
pub async fn bench_batch_async<S, F>(cfg: &RunConfig, state: &mut S, mut batch: F) -> Measurement
where
    F: AsyncFnMut(&mut S, usize),
{
    let b = cfg.batch.max(1);
    let place = seat(cfg);
    let mut plan = Plan::new(cfg, place.as_ref());
    let counting = plan.counted;
    loop {
        match plan.next() {
            Phase::Warm(n) => {
                for _ in 0..n {
                    batch(state, b).await;
                }
            }
            Phase::Sample(n) => {
                for _ in 0..n {
                    // As in bench_batch: one loop, timed or counted.
                    let count = black_box(counting);
                    let t0 = begin(count);
                    batch(state, black_box(b)).await;
                    let t1 = end(count);
                    plan.record(t0, t1);
                }
            }
            Phase::Done => return plan.finish(),
        }
    }
}

/// Batches between looks at the wall clock: starts at one (a slow row, a
/// round trip per sample, must not overrun its slice) and doubles up to
/// [`CHUNK`] while looks come faster than a 32nd of a slice.
struct Pacer {
    every: u64,
    last: Instant,
    fine: Duration,
}

impl Pacer {
    fn new(slice: Duration) -> Self {
        Pacer {
            every: 1,
            last: Instant::now(),
            fine: slice / 32,
        }
    }

    /// Look at the clock; returns now.
    fn look(&mut self) -> Instant {
        let now = Instant::now();
        if now - self.last < self.fine && self.every < CHUNK {
            self.every *= 2;
        }
        self.last = now;
        now
    }
}

/// What a driver loop does next: `n` untimed batches, `n` timed ones (each
/// passed to [`Plan::record`]), or stop.
enum Phase {
    Warm(u64),
    Sample(u64),
    Done,
}

enum Step {
    /// Untimed batches until `until`; `ran` once the first ones ran.
    Warm {
        until: Instant,
        ran: bool,
    },
    /// Sampling since `begin` (within this turn).
    Sample {
        begin: Instant,
    },
    /// Count mode: [`COUNT_WARMUP`] untimed batches, then `rounds` counted
    /// ones (`warmed` once the first were handed out).
    Count {
        rounds: u32,
        warmed: bool,
    },
    Done,
}

/// The sampling plan of one run, shared by the sync and async drivers: the
/// warm-up, then sampling until [`RunConfig::measure`] has elapsed or
/// [`RunConfig::max_samples`] were taken. On a thread seated in a
/// [`rotation`] (`place`) it samples only while holding the baton, a slice
/// at a time, with a re-warm-up of a tenth of a slice after each wait in
/// which other rows ran, and records a p50 per turn. The baton is kept at
/// the end: the row leaves the rotation when its whole run (teardown
/// included) is over.
struct Plan<'p> {
    place: Option<&'p Place>,
    batch: usize,
    slice: Duration,
    measure: Duration,
    max: u64,
    round: u32,
    pace: Pacer,
    step: Step,
    /// Batches handed out by the last [`Phase`].
    pending: u64,
    hist: Histogram<u64>,
    this_turn: Histogram<u64>,
    rounds: Vec<(u32, f64)>,
    sampled: Duration,
    taken: u64,
    /// Count mode (`--instructions`): the samples are counted, not timed.
    counted: bool,
}

impl<'p> Plan<'p> {
    fn new(cfg: &RunConfig, place: Option<&'p Place>) -> Self {
        let counted = cfg.count_rounds > 0;
        // Alone, the whole measurement is one slice.
        let slice = place.map_or(cfg.measure, |p| p.slice());
        let round = place.map_or(0, |p| p.acquire().round);
        Plan {
            place,
            batch: cfg.batch.max(1),
            slice,
            measure: cfg.measure,
            max: cfg.max_samples.max(1),
            round,
            pace: Pacer::new(slice),
            step: if counted {
                Step::Count {
                    rounds: cfg.count_rounds,
                    warmed: false,
                }
            } else {
                Step::Warm {
                    until: Instant::now() + cfg.warmup,
                    ran: false,
                }
            },
            pending: 0,
            hist: new_histogram(),
            this_turn: new_histogram(),
            rounds: Vec::new(),
            sampled: Duration::ZERO,
            taken: 0,
            counted,
        }
    }

    /// Record one timed batch.
    #[inline(always)]
    fn record(&mut self, t0: u64, t1: u64) {
        let per_op = t1.wrapping_sub(t0).saturating_mul(SCALE) / self.batch as u64;
        self.hist.saturating_record(per_op);
        self.this_turn.saturating_record(per_op);
    }

    fn hand_out(&mut self, phase: fn(u64) -> Phase) -> Phase {
        self.pending = self.pace.every;
        phase(self.pending)
    }

    fn start_sampling(&mut self) -> Phase {
        self.this_turn.reset();
        self.step = Step::Sample {
            begin: Instant::now(),
        };
        self.hand_out(Phase::Sample)
    }

    /// The next phase; called after the batches of the previous one ran.
    fn next(&mut self) -> Phase {
        match self.step {
            Step::Count { rounds, warmed } => {
                if warmed {
                    self.step = Step::Done;
                    return Phase::Sample(u64::from(rounds));
                }
                self.step = Step::Count {
                    rounds,
                    warmed: true,
                };
                Phase::Warm(u64::from(COUNT_WARMUP))
            }
            Step::Warm { until, ran } => {
                if ran && self.pace.look() >= until {
                    return self.start_sampling();
                }
                self.step = Step::Warm { until, ran: true };
                self.hand_out(Phase::Warm)
            }
            Step::Sample { begin } => {
                self.taken += self.pending;
                let now = self.pace.look();
                let spent = now - begin;
                if self.taken < self.max
                    && spent < self.slice
                    && self.sampled + spent < self.measure
                {
                    return self.hand_out(Phase::Sample);
                }
                self.sampled += spent;
                let p50 = self.this_turn.value_at_quantile(0.5) as f64 / SCALE as f64;
                self.rounds.push((self.round, p50));
                let place = match self.place {
                    Some(p) if self.taken < self.max && self.sampled < self.measure => p,
                    _ => {
                        self.step = Step::Done;
                        return Phase::Done;
                    }
                };
                let turn = place.pass();
                self.round = turn.round;
                if turn.others_ran {
                    let now = Instant::now();
                    self.pace.last = now;
                    self.step = Step::Warm {
                        until: now + self.slice / 10,
                        ran: true,
                    };
                    return self.hand_out(Phase::Warm);
                }
                self.start_sampling()
            }
            Step::Done => Phase::Done,
        }
    }

    fn finish(mut self) -> Measurement {
        if self.counted {
            // Count mode: the "times" were zeros; there are none.
            self.hist.reset();
        }
        if self.place.is_none() {
            // One run, no turns: nothing to compare round by round.
            self.rounds.clear();
        }
        Measurement {
            hist: self.hist,
            batch: self.batch,
            rounds: self.rounds,
        }
    }
}

/// Warm-up batches in instruction-count mode (first-call effects: lazy
/// initialization, buffer growth, branch history are not what we count).
const COUNT_WARMUP: u32 = 4;

/// [`bench_batch`] for the common case: `B` calls of `op` per batch.
#[inline]
pub fn bench_op<S, P, F>(cfg: &RunConfig, state: &mut S, prep: P, mut op: F) -> Measurement
where
    P: FnMut(&mut S),
    F: FnMut(&mut S),
{
    bench_batch(cfg, state, prep, |s, n| {
        for _ in 0..n {
            op(s);
        }
    })
}

/// The cost of an empty batch, per op (batch ticks / B): what every other
/// row carries on top of its work. Not subtracted anywhere.
pub fn timer_overhead(cfg: &RunConfig) -> Measurement {
    bench_batch(
        cfg,
        &mut (),
        |_| {},
        |_, n| {
            black_box(n);
        },
    )
}

/// The cost of an empty batch as a whole (B = 1): the raw price of one
/// start/stop pair.
pub fn timer_overhead_raw(cfg: &RunConfig) -> Measurement {
    let one = RunConfig { batch: 1, ..*cfg };
    timer_overhead(&one)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_per_op_time() {
        let cfg = RunConfig {
            batch: 8,
            warmup: Duration::from_millis(1),
            measure: Duration::from_millis(20),
            max_samples: 10_000,
            count_rounds: 0,
        };
        let mut calls = 0u64;
        let m = bench_op(&cfg, &mut calls, |_| {}, |c| *c += 1);
        assert!(m.samples() >= CHUNK);
        assert_eq!(calls % 8, 0);
        assert!(m.quantile(0.5) >= 0.0);
        assert!(m.max() >= m.quantile(0.5));
        assert!(m.rounds.is_empty());
    }

    /// Count mode runs the sampling loop itself: the warm-up batches, then
    /// the counted ones with collection (and the peers' flag) on around each
    /// batch only, and no times.
    /// (The async harness likewise, driven by one poll: its batches are
    /// ready at once.)
    #[test]
    fn count_mode_runs_the_same_loop() {
        let cfg = RunConfig {
            batch: 4,
            warmup: Duration::from_secs(600),
            measure: Duration::from_secs(600),
            max_samples: 1,
            count_rounds: 3,
        };
        let warm = COUNT_WARMUP as usize;
        let want: Vec<(usize, bool)> = (0..warm + 3).map(|i| (4, i >= warm)).collect();
        let check = |seen: Vec<(usize, bool)>, m: Measurement| {
            assert_eq!(seen, want);
            assert!(!callgrind::counting());
            assert_eq!(m.samples(), 0);
            assert!(m.rounds.is_empty());
        };
        let mut seen = Vec::new();
        let m = bench_batch(
            &cfg,
            &mut seen,
            |_| {},
            |seen, n| seen.push((n, callgrind::counting())),
        );
        check(seen, m);
        let mut seen = Vec::new();
        let m = crate::peers::poll_ready(bench_batch_async(
            &cfg,
            &mut seen,
            async |seen: &mut Vec<(usize, bool)>, n| seen.push((n, callgrind::counting())),
        ));
        check(seen, m);
    }

    /// Two seated rows with a zero slice: every turn is one sample, so the
    /// turns are counted, not timed. Row 1 stops after 5 samples and leaves;
    /// row 0 goes on alone. No op of one row may run while the other's does.
    #[test]
    fn seated_rows_sample_in_turns() {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicUsize, Ordering};

        let cfg = |max_samples| RunConfig {
            batch: 4,
            warmup: Duration::ZERO,
            measure: Duration::from_secs(600),
            max_samples,
            count_rounds: 0,
        };
        let rot = Arc::new(rotation::Rotation::new(2, Duration::ZERO));
        let busy = AtomicUsize::new(0);
        let ops = [AtomicUsize::new(0), AtomicUsize::new(0)];
        let ms: Vec<Measurement> = std::thread::scope(|s| {
            let handles: Vec<_> = [20u64, 5]
                .into_iter()
                .enumerate()
                .map(|(id, max)| {
                    let (rot, busy, ops) = (rot.clone(), &busy, &ops);
                    s.spawn(move || {
                        let _seat = rotation::sit(rot, id);
                        bench_op(
                            &cfg(max),
                            &mut (),
                            |_| {},
                            |_| {
                                assert_eq!(busy.fetch_add(1, Ordering::SeqCst), 0, "overlap");
                                ops[id].fetch_add(1, Ordering::SeqCst);
                                busy.fetch_sub(1, Ordering::SeqCst);
                            },
                        )
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let rounds = |m: &Measurement| m.rounds.iter().map(|r| r.0).collect::<Vec<_>>();
        assert_eq!(rounds(&ms[0]), (0..20).collect::<Vec<_>>());
        assert_eq!(rounds(&ms[1]), (0..5).collect::<Vec<_>>());
        assert_eq!((ms[0].samples(), ms[1].samples()), (20, 5));
        // Sampled ops plus warm-up batches (one at the start, one after each
        // turn another row had in between: 5 for row 0, 4 for row 1).
        assert_eq!(ops[0].load(Ordering::SeqCst), 4 * (20 + 1 + 5));
        assert_eq!(ops[1].load(Ordering::SeqCst), 4 * (5 + 1 + 4));
        assert_eq!(rot.holder(), None);
    }
}
