//! What a tail run says, and whether it can say it: the tail table (p50 to p99.99 and
//! max of the one-way latency, in microseconds), the sender's lateness and the floors'
//! spread beside each row, the run's quietness by the criteria below, the targets, and
//! a plot per row (`plots/tail-<row>.svg`: the row, its floor and the sender's lateness
//! during the row's runs).
//!
//! A run is **quiet**, and its tails are judged, when all of these hold:
//! - every row has at least [`MIN_MESSAGES`] recorded messages (p99.9 rests on 10 or
//!   more of them);
//! - the sender kept its schedule: during every row's runs its lateness (how late each
//!   write left against its due time) has p99.9 at most [`LATE_P999_US`] (a sender stall
//!   delays every message queued behind it, and lands on whichever row was running);
//! - the floors agree with themselves: for each floor, the largest p99.9 of its runs
//!   (one per round) is at most [`FLOOR_SPREAD`] times the smallest (the receiving core
//!   was not taken away in some rounds and not in others), and its merged p99.9 is at
//!   most [`FLOOR_P999_US`] (a floor whose own tail is a scheduling stall cannot bound
//!   anything).
//!
//! Otherwise the run is marked NOT QUIET and the p99.9 comparisons are printed as not
//! judged. The p50 and p90 targets are judged in every run: they are far from the stalls.
//!
//! After the rows, [`probe`] shows what the machine itself does to a thread that never
//! waits: a spin loop pinned to each of the two cores (nothing else of the bench running)
//! for [`PROBE`], every gap between two clock reads above [`STALL_US`] counted as a
//! stall. A measuring core that stalls for milliseconds on its own bounds every row's
//! tail from below, floors included, whatever library runs there.

use std::fmt::Write as _;
use std::path::Path;

use hdrhistogram::Histogram;

use super::rows::{self, floor_of};
use super::{BURST, BURST_EVERY_US, MEAN_GAP_US, Run, SIZE, take_runs, ticks_per_us};
use crate::harness::{Measurement, SCALE};
use crate::plot;
use crate::report::Row;

/// Fewest recorded messages per row for a quiet run.
pub const MIN_MESSAGES: u64 = 10_000;
/// Largest p99.9 of the sender's lateness, in any row's runs, for a quiet run (us).
pub const LATE_P999_US: f64 = 20.0;
/// Largest ratio between a floor's slowest and fastest per-run p99.9 for a quiet run.
pub const FLOOR_SPREAD: f64 = 2.0;
/// Largest merged p99.9 of a floor for a quiet run (us): above it, the floor's own tail
/// is a scheduling stall.
pub const FLOOR_P999_US: f64 = 100.0;
/// The p50 / p90 target: tickwire within this factor of its floor.
pub const FLOOR_FACTOR: f64 = 1.05;
/// How long the machine probe spins on each core.
pub const PROBE: std::time::Duration = std::time::Duration::from_secs(5);
/// A gap between two clock reads of the probe's spin loop longer than this is a stall (us).
pub const STALL_US: f64 = 20.0;

/// What a spin loop pinned to one core saw of the machine.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stalls {
    /// The core.
    pub core: usize,
    /// Gaps longer than [`STALL_US`].
    pub count: u64,
    /// Gaps longer than 1 ms.
    pub over_ms: u64,
    /// The longest gap (us).
    pub longest_us: f64,
    /// Time lost to stalls, per second of spinning (us).
    pub lost_us_per_s: f64,
}

/// Spin on `core` for `dur` and count the gaps between consecutive clock reads longer
/// than [`STALL_US`]: time the core was taken from a thread that never waits.
fn spin_probe(core: usize, dur: std::time::Duration) -> Stalls {
    crate::machine::pin(core);
    let tpu = super::ticks_per_us();
    scan(
        core,
        crate::clock::start,
        (dur.as_secs_f64() * 1e6 * tpu) as u64,
        tpu,
    )
}

/// Read `clock` (ticks, `tpu` per microsecond) until `span` ticks have passed; the gaps
/// between consecutive reads longer than [`STALL_US`] are stalls.
fn scan(core: usize, mut clock: impl FnMut() -> u64, span: u64, tpu: f64) -> Stalls {
    let limit = (STALL_US * tpu) as u64;
    let ms = (1000.0 * tpu) as u64;
    let start = clock();
    let end = start + span;
    let (mut last, mut count, mut over_ms, mut longest, mut lost) = (start, 0, 0, 0u64, 0u64);
    while last < end {
        let now = clock();
        let gap = now.saturating_sub(last);
        if gap > limit {
            count += 1;
            over_ms += u64::from(gap > ms);
            longest = longest.max(gap);
            lost += gap;
        }
        last = now;
    }
    let secs = (last - start) as f64 / tpu / 1e6;
    Stalls {
        core,
        count,
        over_ms,
        longest_us: longest as f64 / tpu,
        lost_us_per_s: lost as f64 / tpu / secs.max(1e-9),
    }
}

/// The machine probe: a spin loop on each of `cores` at once, for [`PROBE`].
pub fn probe(cores: [usize; 2]) -> [Stalls; 2] {
    let threads = cores.map(|c| std::thread::spawn(move || spin_probe(c, PROBE)));
    threads.map(|t| t.join().expect("probe thread"))
}

/// The probe's lines of the report.
fn probe_text(stalls: &[Stalls; 2], measuring: usize) -> String {
    let mut o = format!(
        "The machine alone (a spin loop pinned to each core at once, nothing else of the bench \
         running, {} s each; a stall is a gap of more than {STALL_US} us between two clock reads):",
        PROBE.as_secs()
    );
    for s in stalls {
        let _ = write!(
            o,
            "\n- core {}{}: {} stalls ({} over 1 ms), longest {:.0} us, {:.0} us lost per second",
            s.core,
            if s.core == measuring {
                " (measuring, the receivers')"
            } else {
                " (peer, the sender's)"
            },
            s.count,
            s.over_ms,
            s.longest_us,
            s.lost_us_per_s
        );
    }
    if let Some(m) = stalls.iter().find(|s| s.core == measuring)
        && m.longest_us > FLOOR_P999_US
    {
        let _ = write!(
            o,
            "\n\nThe measuring core itself stalls for up to {:.0} us with nothing running: \
             every row's tail beyond the quantile those stalls reach (floors included) is the \
             machine's, not a library's; judge tails on a machine whose measuring core is \
             isolated (isolcpus, nohz_full, no device interrupts).",
            m.longest_us
        );
    }
    o
}

/// One row's runs, merged.
struct Tail {
    library: String,
    latency: Histogram<u64>,
    lateness: Histogram<u64>,
    behind: Histogram<u64>,
    write: Histogram<u64>,
    /// p99.9 of each run (us).
    run_p999: Vec<f64>,
    early: u64,
}

impl Tail {
    /// Latency at quantile `q`, in microseconds.
    fn us(&self, q: f64) -> f64 {
        us(&self.latency, q)
    }
}

fn us(h: &Histogram<u64>, q: f64) -> f64 {
    h.value_at_quantile(q) as f64 / SCALE as f64 / ticks_per_us()
}

fn max_us(h: &Histogram<u64>) -> f64 {
    h.max() as f64 / SCALE as f64 / ticks_per_us()
}

fn merge(runs: Vec<Run>) -> Vec<Tail> {
    let mut out: Vec<Tail> = Vec::new();
    for r in runs {
        let p999 = us(&r.latency, 0.999);
        match out.iter_mut().find(|t| t.library == r.library) {
            Some(t) => {
                let _ = t.latency.add(&r.latency);
                let _ = t.lateness.add(&r.lateness);
                let _ = t.write.add(&r.write);
                let _ = t.behind.add(&r.behind);
                t.run_p999.push(p999);
                t.early += r.early;
            }
            None => out.push(Tail {
                library: r.library,
                latency: r.latency,
                lateness: r.lateness,
                write: r.write,
                behind: r.behind,
                run_p999: vec![p999],
                early: r.early,
            }),
        }
    }
    // Report order: the suite's row order.
    let order = |l: &str| {
        [
            rows::TW,
            rows::TW_SPIN,
            rows::TW_TOKIO,
            crate::suites::loopback::nexus::LIB,
            rows::TUNG,
            rows::TTUNG,
            rows::FWS,
            rows::FLOOR,
            rows::FLOOR_SPIN,
            rows::FLOOR_TOKIO,
        ]
        .iter()
        .position(|x| *x == l)
        .unwrap_or(usize::MAX)
    };
    out.sort_by_key(|t| order(&t.library));
    out
}

/// The quietness verdict: the failed criteria (empty: quiet).
fn loud_reasons(tails: &[Tail]) -> Vec<String> {
    let mut why = Vec::new();
    for t in tails {
        if t.latency.len() < MIN_MESSAGES {
            why.push(format!(
                "{}: {} messages recorded (< {MIN_MESSAGES}; run longer, e.g. --full)",
                t.library,
                t.latency.len()
            ));
        }
        let late = us(&t.lateness, 0.999);
        if late > LATE_P999_US {
            why.push(format!(
                "sender lateness during {}'s runs: p99.9 {late:.1} us (> {LATE_P999_US} us)",
                t.library
            ));
        }
    }
    for t in tails.iter().filter(|t| floor_of(&t.library) == t.library) {
        let lo = t.run_p999.iter().copied().fold(f64::MAX, f64::min);
        let hi = t.run_p999.iter().copied().fold(0.0, f64::max);
        if lo > 0.0 && hi / lo > FLOOR_SPREAD {
            why.push(format!(
                "{}: per-run p99.9 from {lo:.1} to {hi:.1} us ({:.1}x > {FLOOR_SPREAD}x)",
                t.library,
                hi / lo
            ));
        }
        let p = t.us(0.999);
        if p > FLOOR_P999_US {
            why.push(format!(
                "{}: p99.9 {p:.1} us (> {FLOOR_P999_US} us: a scheduling stall)",
                t.library
            ));
        }
    }
    why
}

/// Write `tail.md` and the per-row plots under `dir` for the tail runs recorded since
/// the last call, after the machine probe on `cores` (measuring, peer); returns the text
/// (None: no tail row ran).
pub fn report(dir: &Path, cores: [usize; 2]) -> std::io::Result<Option<String>> {
    let tails = merge(take_runs());
    if tails.is_empty() {
        return Ok(None);
    }
    let stalls = probe(cores);
    let find = |l: &str| tails.iter().find(|t| t.library == l);
    let why = loud_reasons(&tails);
    let quiet = why.is_empty();
    let mut o = String::new();
    let _ = writeln!(
        o,
        "## Tail: one-way latency of a paced feed ({SIZE} B binary over loopback; exponential gaps, \
         mean {MEAN_GAP_US} us; a {BURST}-message burst every {} ms)\n",
        BURST_EVERY_US / 1000.0
    );
    let _ = writeln!(
        o,
        "Run: **{}**{}\n",
        if quiet {
            "quiet (tails judged)"
        } else {
            "NOT QUIET (tails not judged)"
        },
        if quiet {
            String::new()
        } else {
            format!(": {}", why.join("; "))
        }
    );
    let _ = writeln!(
        o,
        "| library | messages | p50 | p90 | p99 | p99.9 | p99.99 | max | p50, p90 vs floor | \
         per-run p99.9 | sender late p50 / p99.9 / max | behind schedule p99.9 / max | sender write p50 / p99.9 |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|---|"
    );
    for t in &tails {
        let floor = find(floor_of(&t.library));
        let vs = match floor {
            Some(f) if f.library != t.library => format!(
                "{:.2}x, {:.2}x",
                t.us(0.5) / f.us(0.5),
                t.us(0.9) / f.us(0.9)
            ),
            _ => "(floor)".into(),
        };
        let runs: Vec<String> = t.run_p999.iter().map(|p| format!("{p:.0}")).collect();
        let _ = writeln!(
            o,
            "| {} | {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.0} | {vs} | {} | {:.2} / {:.1} / {:.0} | {:.1} / {:.0} | {:.1} / {:.1} |",
            t.library,
            t.latency.len(),
            t.us(0.5),
            t.us(0.9),
            t.us(0.99),
            t.us(0.999),
            t.us(0.9999),
            max_us(&t.latency),
            runs.join(", "),
            us(&t.lateness, 0.5),
            us(&t.lateness, 0.999),
            max_us(&t.lateness),
            us(&t.behind, 0.999),
            max_us(&t.behind),
            us(&t.write, 0.5),
            us(&t.write, 0.999)
        );
    }
    let _ = writeln!(
        o,
        "\nMicroseconds. \"sender late\": during that row's runs, how long after it could have \
         (the later of its due time and the previous write's return) each message left: a \
         stall of the sender's core delays every message due meanwhile, whichever row runs. \
         \"behind schedule\": against the due time alone (a burst's k-th message waits for k \
         writes). \
         \"sender write\": the time of each write(2) (the kernel's loopback path, the \
         receiver's wake-up included). \"per-run p99.9\": one per round (rows take rounds of \
         whole runs in turn, so a slow spell lands on a run of every row)."
    );
    let early: u64 = tails.iter().map(|t| t.early).sum();
    if early > 0 {
        let _ = writeln!(
            o,
            "{early} messages arrived before their stamp (the two cores' TSCs differ): recorded as 0."
        );
    }
    let _ = writeln!(
        o,
        "\nQuiet when: every row has >= {MIN_MESSAGES} messages; the sender's lateness p99.9 <= \
         {LATE_P999_US} us in every row's runs; each floor's slowest per-run p99.9 <= \
         {FLOOR_SPREAD}x its fastest, and its p99.9 <= {FLOOR_P999_US} us.\n"
    );
    let _ = writeln!(o, "{}\n", probe_text(&stalls, cores[0]));
    let _ = writeln!(o, "Targets:");
    for tw in [rows::TW, rows::TW_SPIN, rows::TW_TOKIO] {
        let (Some(t), Some(f)) = (find(tw), find(floor_of(tw))) else {
            continue;
        };
        let (r50, r90) = (t.us(0.5) / f.us(0.5), t.us(0.9) / f.us(0.9));
        let _ = writeln!(
            o,
            "- {tw} p50 / p90 within {FLOOR_FACTOR}x of {}: {r50:.3}x / {r90:.3}x: {}",
            f.library,
            if r50 <= FLOOR_FACTOR && r90 <= FLOOR_FACTOR {
                "met"
            } else {
                "MISSED"
            }
        );
    }
    for peer in tails
        .iter()
        .filter(|t| floor_of(&t.library) != t.library && !t.library.starts_with(rows::TW))
    {
        // Every peer against tickwire (blocking), and the tokio peers also against the
        // tickwire row that waits the same way.
        let mut against = vec![rows::TW];
        if floor_of(&peer.library) == rows::FLOOR_TOKIO {
            against.push(rows::TW_TOKIO);
        }
        for tw in against {
            let Some(t) = find(tw) else { continue };
            let (a, b) = (t.us(0.999), peer.us(0.999));
            let _ = writeln!(
                o,
                "- {tw} p99.9 at or below {}'s: {a:.1} vs {b:.1} us: {}",
                peer.library,
                if !quiet {
                    "not judged (run not quiet)"
                } else if a <= b {
                    "met"
                } else {
                    "MISSED"
                }
            );
        }
    }
    // Plots: each row, its floor and the sender's lateness, in nanoseconds.
    let plots = dir.join("plots");
    std::fs::create_dir_all(&plots)?;
    for t in &tails {
        let mut curves = vec![Row::new("tail", &t.library, true, "", &ns(&t.latency))];
        if let Some(f) = find(floor_of(&t.library)).filter(|f| f.library != t.library) {
            curves.push(Row::new("tail", &f.library, false, "", &ns(&f.latency)));
        }
        curves.push(Row::new(
            "tail",
            "sender lateness (same runs)",
            false,
            "",
            &ns(&t.lateness),
        ));
        let refs: Vec<&Row> = curves.iter().collect();
        let title = format!(
            "tail: {} one-way latency ({}, {} messages)",
            t.library,
            if quiet { "quiet run" } else { "NOT QUIET run" },
            t.latency.len()
        );
        let name = format!("tail-{}.svg", plot::slug(&t.library));
        std::fs::write(plots.join(name), plot::svg(&title, &refs, "ns"))?;
    }
    let _ = writeln!(
        o,
        "\nPlots: {}/tail-<row>.svg (the row, its floor, the sender's lateness).",
        plots.display()
    );
    std::fs::write(dir.join("tail.md"), &o)?;
    Ok(Some(o))
}

/// `h` (ticks x SCALE) in nanoseconds x SCALE, at least 1 ns (the plots' log scale).
fn ns(h: &Histogram<u64>) -> Measurement {
    let mut out = Histogram::new_with_bounds(1, 1 << 40, 3).expect("valid histogram bounds");
    let per = 1000.0 / ticks_per_us();
    for v in h.iter_recorded() {
        let x = ((v.value_iterated_to() as f64 * per) as u64).max(SCALE);
        out.saturating_record_n(x, v.count_at_value());
    }
    Measurement {
        hist: out,
        batch: 1,
        rounds: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A histogram of `n` values of `us` microseconds (ticks x SCALE).
    fn hist(n: u64, us: f64) -> Histogram<u64> {
        let mut h = Histogram::new_with_bounds(1, 1 << 40, 3).unwrap();
        h.record_n((us * ticks_per_us()) as u64 * SCALE, n).unwrap();
        h
    }

    fn tail(library: &str, p999: &[f64], late_us: f64) -> Tail {
        Tail {
            library: library.into(),
            latency: hist(20_000, 10.0),
            lateness: hist(20_000, late_us),
            write: hist(20_000, 1.0),
            behind: hist(20_000, 1.0),
            run_p999: p999.to_vec(),
            early: 0,
        }
    }

    fn stalls(core: usize, longest_us: f64) -> Stalls {
        Stalls {
            core,
            count: 3,
            over_ms: u64::from(longest_us > 1000.0),
            longest_us,
            lost_us_per_s: 3.0 * longest_us / 5.0,
        }
    }

    #[test]
    fn probe_blames_the_machine_only_when_the_measuring_core_stalls() {
        // A measuring core that stalls for milliseconds alone: said, with the figure.
        let loud = probe_text(&[stalls(0, 7600.0), stalls(1, 40.0)], 0);
        assert!(loud.contains(
            "core 0 (measuring, the receivers'): 3 stalls (1 over 1 ms), longest 7600 us"
        ));
        assert!(loud.contains("itself stalls for up to 7600 us"), "{loud}");
        // The same stalls on the peer core only: the sender's lateness covers them.
        let quiet = probe_text(&[stalls(0, 40.0), stalls(1, 7600.0)], 0);
        assert!(!quiet.contains("itself stalls"), "{quiet}");
        assert!(
            quiet.contains("core 1 (peer, the sender's): 3 stalls (1 over 1 ms), longest 7600 us")
        );
    }

    #[test]
    fn scan_counts_the_gaps_of_its_clock() {
        // A clock of 1 tick per us read every 1 us for 1 s, with three stalls: 30 us,
        // 2.5 ms and 15 us (not a stall: at most STALL_US).
        let mut t = 0u64;
        let clock = move || {
            t += match t {
                100 => 30,
                500_000 => 2_500,
                700_000 => 15,
                _ => 1,
            };
            t
        };
        let s = scan(3, clock, 1_000_000, 1.0);
        assert_eq!((s.core, s.count, s.over_ms), (3, 2, 1), "{s:?}");
        assert_eq!(s.longest_us, 2_500.0);
        assert!((s.lost_us_per_s - 2_530.0).abs() < 1.0, "{s:?}");
    }

    fn quiet_set() -> Vec<Tail> {
        vec![
            tail(rows::TW, &[12.0, 14.0], 0.1),
            tail(rows::TUNG, &[15.0, 16.0], 0.1),
            tail(rows::FLOOR, &[11.0, 13.0], 0.1),
            tail(rows::FLOOR_SPIN, &[5.0, 6.0], 0.1),
        ]
    }

    #[test]
    fn quiet_only_when_every_criterion_holds() {
        assert!(loud_reasons(&quiet_set()).is_empty());
        // The sender stalled during one row's runs.
        let mut t = quiet_set();
        t[1].lateness = hist(20_000, 50.0);
        let why = loud_reasons(&t);
        assert!(
            why.len() == 1 && why[0].contains("sender lateness during tungstenite"),
            "{why:?}"
        );
        // A floor's rounds disagree (a stall in some of them).
        let mut t = quiet_set();
        t[2].run_p999 = vec![11.0, 40.0];
        let why = loud_reasons(&t);
        assert!(
            why.len() == 1 && why[0].contains("per-run p99.9"),
            "{why:?}"
        );
        // A floor whose tail is a stall.
        let mut t = quiet_set();
        t[3].latency = hist(20_000, 500.0);
        let why = loud_reasons(&t);
        assert!(
            why.len() == 1 && why[0].contains("scheduling stall"),
            "{why:?}"
        );
        // Too few messages for p99.9.
        let mut t = quiet_set();
        t[0].latency = hist(500, 10.0);
        let why = loud_reasons(&t);
        assert!(
            why.len() == 1 && why[0].contains("messages recorded"),
            "{why:?}"
        );
    }
}
