//! Results: a table on stdout, and the same as JSON and Markdown files.
//!
//! Each scenario has one baseline row (tickwire's); every row of the scenario
//! gets `ratio = its p50 / baseline p50`, so a peer at 3.0 is three times
//! slower than tickwire at the median. When the rows were interleaved, each
//! also gets the same ratio per round (its turn's p50 over the baseline's
//! turn's p50 in the same baton round) and their spread ([`RoundRatio`]):
//! how far the machine moved the ratio during the run. The table shows the
//! 10th percentile, median and 90th percentile of the rounds: a round in
//! which the machine changed state between two rows' turns gives an extreme
//! ratio that min and max (in the JSON) would show instead of the spread.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::clock;
use crate::harness::Measurement;

/// Columns of the table.
const COLS: usize = 11;

/// What the per-round column means, for the table's readers.
pub const ROUNDS_NOTE: &str = "per round p10/med/p90: the rows of a scenario took turns on the \
measuring core (a slice each per round, or a whole run each per round where the peer cannot sit idle \
between turns); each round gives a ratio (the row's p50 over tickwire's p50 in that round) and the \
column is their 10th percentile, median and 90th percentile over the rounds (min, max and an \
about-95% interval of the median in the JSON), so a narrow spread means a ratio the machine's noise did not move; \"-\" for baselines and \
for scenarios run once per row (--sequential)";

/// Fewest rounds for [`Report::ties`] to judge a row.
pub const TIE_ROUNDS: usize = 10;

/// The spread of a row's per-round ratios to its baseline.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RoundRatio {
    /// Smallest per-round ratio.
    pub min: f64,
    /// 10th percentile (nearest rank).
    pub p10: f64,
    /// Median per-round ratio.
    pub median: f64,
    /// 90th percentile (nearest rank).
    pub p90: f64,
    /// Largest per-round ratio.
    pub max: f64,
    /// A distribution-free confidence interval of about 95% for the median
    /// (order statistics at the sign test's ranks, n/2 -+ 0.98 sqrt(n); the
    /// whole range below 10 rounds): where the central ratio lies, not how
    /// far single rounds stray.
    pub median_lo: f64,
    /// The upper end of that interval (`median_lo` is the lower).
    pub median_hi: f64,
    /// Rounds in which both rows had a turn.
    pub rounds: usize,
}

impl RoundRatio {
    /// Ratios of `row`'s per-round p50s to `base`'s in the rounds both have;
    /// `None` without any.
    pub fn of(row: &[(u32, f64)], base: &[(u32, f64)]) -> Option<Self> {
        let mut v: Vec<f64> = row
            .iter()
            .filter_map(|(r, x)| {
                base.iter()
                    .find(|(rb, b)| rb == r && *b > 0.0)
                    .map(|(_, b)| x / b)
            })
            .collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        let rank = |q: f64| v[((n - 1) as f64 * q).round() as usize];
        // 1-based ranks j and k of the interval, clamped to the sample.
        let half = 0.98 * (n as f64).sqrt();
        let j = ((n as f64 / 2.0 - half).floor() as usize).max(1);
        let k = ((n as f64 / 2.0 + 1.0 + half).ceil() as usize).min(n);
        let (j, k) = if n < 10 { (1, n) } else { (j, k) };
        Some(RoundRatio {
            min: v[0],
            p10: rank(0.1),
            median,
            p90: rank(0.9),
            max: v[n - 1],
            median_lo: v[j - 1],
            median_hi: v[k - 1],
            rounds: n,
        })
    }
}

/// One measured (scenario, library) pair.
#[derive(Debug, Clone)]
pub struct Row {
    /// What is measured, e.g. "ws parse text 128B unmasked (client role)".
    pub scenario: String,
    /// Who does it, e.g. "tickwire" or "tungstenite WebSocket::read".
    pub library: String,
    /// The row other rows of the scenario are compared with.
    pub baseline: bool,
    /// What the timed region includes beyond the obvious.
    pub note: String,
    /// Per-op time quantiles in [`clock::UNIT`].
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    pub p999: f64,
    /// Largest sample.
    pub max: f64,
    /// Samples (batches) taken.
    pub samples: u64,
    /// Operations per sample.
    pub batch: usize,
    /// p50 / the scenario baseline's p50; filled by [`Report::finish`].
    pub ratio: Option<f64>,
    /// Interleaved runs: (round, p50 of the row's turn in it).
    pub rounds: Vec<(u32, f64)>,
    /// The per-round ratios to the baseline; filled by [`Report::finish`]
    /// for non-baseline rows of interleaved scenarios.
    pub round_ratio: Option<RoundRatio>,
    /// The percentile curve: (quantile, per-op time) from 0 up to the finest
    /// quantile the sample count resolves, then the max at quantile 1.
    pub curve: Vec<(f64, f64)>,
}

/// Quantiles of the curve: 1 - 10^(-k/10) for k = 0..=50 (0 to 99.999%).
fn curve(m: &Measurement) -> Vec<(f64, f64)> {
    let n = m.samples().max(1) as f64;
    let mut pts: Vec<(f64, f64)> = (0..=50)
        .map(|k| 1.0 - 10f64.powf(-f64::from(k) / 10.0))
        .take_while(|q| 1.0 / (1.0 - q) <= n)
        .map(|q| (q, m.quantile(q)))
        .collect();
    pts.push((1.0, m.max()));
    pts
}

impl Row {
    /// A row from a measurement.
    pub fn new(scenario: &str, library: &str, baseline: bool, note: &str, m: &Measurement) -> Self {
        Row {
            scenario: scenario.into(),
            library: library.into(),
            baseline,
            note: note.into(),
            p50: m.quantile(0.5),
            p90: m.quantile(0.9),
            p99: m.quantile(0.99),
            p999: m.quantile(0.999),
            max: m.max(),
            samples: m.samples(),
            batch: m.batch,
            ratio: None,
            rounds: m.rounds.clone(),
            round_ratio: None,
            curve: curve(m),
        }
    }
}

/// Everything a run produced, plus the context a reader needs.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Suite name; also the output file stem.
    pub suite: String,
    /// "key: value" lines describing machine and settings.
    pub context: Vec<(String, String)>,
    /// Measured rows in run order.
    pub rows: Vec<Row>,
    /// Clock readings per second (TSC frequency, or 1e9 for nanoseconds);
    /// 0 hides the ns and ops/s columns.
    pub ticks_per_sec: f64,
}

fn fmt_num(v: f64) -> String {
    if v >= 1000.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// Operations per second, compact: 1.2M, 34.5k, 950.
fn fmt_rate(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.1}k", v / 1e3)
    } else {
        format!("{v:.0}")
    }
}

fn fmt_ratio(r: Option<f64>) -> String {
    r.map_or_else(|| "-".into(), |r| format!("{r:.2}x"))
}

/// Per-round ratios as `p10/median/p90` (or `-`).
fn fmt_rounds(r: Option<RoundRatio>) -> String {
    r.map_or_else(
        || "-".into(),
        |r| format!("{:.2}/{:.2}/{:.2}x", r.p10, r.median, r.p90),
    )
}

impl Report {
    /// An empty report for `suite`.
    pub fn new(suite: &str) -> Self {
        Report {
            suite: suite.into(),
            ..Default::default()
        }
    }

    /// Add a context line.
    pub fn context(&mut self, key: &str, value: impl Into<String>) {
        self.context.push((key.into(), value.into()));
    }

    /// Compute ratios against each scenario's baseline row.
    pub fn finish(&mut self) {
        let bases: Vec<Row> = self.rows.iter().filter(|r| r.baseline).cloned().collect();
        for r in &mut self.rows {
            let base = bases.iter().find(|b| b.scenario == r.scenario);
            r.ratio = base.filter(|b| b.p50 > 0.0).map(|b| r.p50 / b.p50);
            r.round_ratio = base
                .filter(|_| !r.baseline)
                .and_then(|b| RoundRatio::of(&r.rounds, &b.rounds));
        }
    }

    /// `ticks` in nanoseconds and the matching operations per second.
    fn ns_rate(&self, ticks: f64) -> (String, String) {
        if self.ticks_per_sec <= 0.0 || ticks <= 0.0 {
            return ("-".into(), "-".into());
        }
        let ns = ticks * 1e9 / self.ticks_per_sec;
        (fmt_num(ns), fmt_rate(self.ticks_per_sec / ticks))
    }

    fn cells(&self, r: &Row) -> [String; COLS] {
        let (ns, rate) = self.ns_rate(r.p50);
        [
            r.scenario.clone(),
            r.library.clone(),
            fmt_num(r.p50),
            ns,
            rate,
            fmt_num(r.p90),
            fmt_num(r.p99),
            fmt_num(r.p999),
            fmt_num(r.max),
            fmt_ratio(r.ratio),
            fmt_rounds(r.round_ratio),
        ]
    }

    fn header() -> [String; COLS] {
        let u = clock::UNIT;
        [
            "scenario".into(),
            "library".into(),
            format!("p50 ({u})"),
            "p50 ns".into(),
            "ops/s".into(),
            "p90".into(),
            "p99".into(),
            "p99.9".into(),
            "max".into(),
            "vs tickwire p50".into(),
            "per round p10/med/p90".into(),
        ]
    }

    /// The plain-text table for the terminal.
    pub fn table(&self) -> String {
        let mut lines = vec![Self::header()];
        lines.extend(self.rows.iter().map(|r| self.cells(r)));
        let mut width = [0usize; COLS];
        for l in &lines {
            for (w, c) in width.iter_mut().zip(l) {
                *w = (*w).max(c.chars().count());
            }
        }
        let mut out = String::new();
        let mut last_scenario = String::new();
        for (i, l) in lines.iter().enumerate() {
            if i > 0 && l[0] != last_scenario && i > 1 {
                out.push('\n');
            }
            let shown_scenario = if i > 0 && l[0] == last_scenario {
                ""
            } else {
                l[0].as_str()
            };
            let _ = write!(
                out,
                "{:<w0$}  {:<w1$}",
                shown_scenario,
                l[1],
                w0 = width[0],
                w1 = width[1]
            );
            for (c, w) in l[2..].iter().zip(&width[2..]) {
                let _ = write!(out, "  {c:>w$}", w = *w);
            }
            out.push('\n');
            if i == 0 {
                out.push_str(&"-".repeat(width.iter().sum::<usize>() + 2 * (COLS - 1)));
                out.push('\n');
            } else {
                last_scenario.clone_from(&l[0]);
            }
        }
        out
    }

    /// The notes: what each row's timed region includes.
    pub fn notes(&self) -> String {
        let mut out = String::new();
        for r in self.rows.iter().filter(|r| !r.note.is_empty()) {
            let _ = writeln!(out, "- {} / {}: {}", r.scenario, r.library, r.note);
        }
        out
    }

    /// The report as Markdown.
    pub fn markdown(&self) -> String {
        let mut out = format!("# tickwire bench: {}\n\n", self.suite);
        for (k, v) in &self.context {
            let _ = writeln!(out, "- {k}: {v}");
        }
        out.push('\n');
        let h = Self::header();
        let _ = writeln!(out, "| {} |", h.join(" | "));
        let _ = writeln!(out, "|{}", "---|".repeat(2) + &"---:|".repeat(COLS - 2));
        for r in &self.rows {
            let c = self.cells(r);
            let _ = writeln!(out, "| {} |", c.join(" | "));
        }
        let _ = writeln!(out, "\n{ROUNDS_NOTE}.");
        out.push_str("\nWhat each timed region includes:\n\n");
        out.push_str(&self.notes());
        out.push_str("\nLatency plots (percentile curves, every library on one chart):\n\n");
        for (s, _) in self.scenarios() {
            let _ = writeln!(out, "- [{s}](plots/{}.svg)", crate::plot::slug(s));
        }
        out
    }

    /// The report as JSON (no dependency: the shape is flat).
    pub fn json(&self) -> String {
        let mut out = String::from("{\n");
        let _ = writeln!(out, "  \"suite\": {},", json_str(&self.suite));
        let _ = writeln!(out, "  \"unit\": {},", json_str(clock::UNIT));
        let _ = writeln!(out, "  \"ticks_per_sec\": {},", self.ticks_per_sec);
        out.push_str("  \"context\": {");
        for (i, (k, v)) in self.context.iter().enumerate() {
            let sep = if i == 0 { "" } else { "," };
            let _ = write!(out, "{sep}\n    {}: {}", json_str(k), json_str(v));
        }
        out.push_str("\n  },\n  \"rows\": [");
        for (i, r) in self.rows.iter().enumerate() {
            let sep = if i == 0 { "" } else { "," };
            let ratio = r.ratio.map_or_else(|| "null".into(), |x| format!("{x:.4}"));
            let round_ratio = r.round_ratio.map_or_else(
                || "null".into(),
                |x| {
                    format!(
                        "{{\"min\": {:.4}, \"p10\": {:.4}, \"median\": {:.4}, \"p90\": {:.4}, \
                         \"max\": {:.4}, \"median_ci95\": [{:.4}, {:.4}], \"rounds\": {}}}",
                        x.min, x.p10, x.median, x.p90, x.max, x.median_lo, x.median_hi, x.rounds
                    )
                },
            );
            let _ = write!(
                out,
                "{sep}\n    {{\"scenario\": {}, \"library\": {}, \"baseline\": {}, \"p50\": {}, \"p90\": {}, \
                 \"p99\": {}, \"p999\": {}, \"max\": {}, \"ratio_vs_tickwire_p50\": {}, \
                 \"ratio_per_round\": {}, \"samples\": {}, \"batch\": {}, \"note\": {}, \
                 \"round_p50\": [{}], \"curve\": [{}]}}",
                json_str(&r.scenario),
                json_str(&r.library),
                r.baseline,
                r.p50,
                r.p90,
                r.p99,
                r.p999,
                r.max,
                ratio,
                round_ratio,
                r.samples,
                r.batch,
                json_str(&r.note),
                r.rounds
                    .iter()
                    .map(|(k, v)| format!("[{k}, {v}]"))
                    .collect::<Vec<_>>()
                    .join(", "),
                r.curve
                    .iter()
                    .map(|(q, v)| format!("[{q:.6}, {v}]"))
                    .collect::<Vec<_>>()
                    .join(", "),
            );
        }
        out.push_str("\n  ]\n}\n");
        out
    }

    /// Write `<dir>/<suite>.json` and `<dir>/<suite>.md`; returns their paths.
    pub fn write_files(&self, dir: &Path) -> std::io::Result<[PathBuf; 2]> {
        std::fs::create_dir_all(dir)?;
        let json = dir.join(format!("{}.json", self.suite));
        let md = dir.join(format!("{}.md", self.suite));
        std::fs::write(&json, self.json())?;
        std::fs::write(&md, self.markdown())?;
        Ok([json, md])
    }

    /// The README's performance section: where and how it was measured, and
    /// p50 / p99 / ratio per row. `command` is what produced it.
    pub fn readme(&self, command: &str) -> String {
        let ctx = |k: &str| {
            self.context
                .iter()
                .find(|(key, _)| key == k)
                .map_or("?", |(_, v)| v.as_str())
        };
        let u = clock::UNIT;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "Generated by `{command}` on {} UTC. Machine: {} ({} logical CPUs, TSC {}; cpu flags: {}); \
             measuring core {}, loopback peer core {}; core clock at the end of the run: {}. \
             Machine load (load average over 1, 5 and 15 min, /proc/loadavg): {} at the start, \
             {} at the end of the run, which took {}. \
             Mode: {}. Sampling: {}. Values are {u} per operation (p50 and p99 over batches; nothing \
             subtracted); \"vs tickwire\" is the row's p50 over tickwire's p50 in the same scenario (above \
             1.00x: tickwire is faster); \"per round\" is the range (10th to 90th percentile) of that ratio computed \
             round by round (a turn of each row, or a whole run of each row, per round). The machine was shared with other work during the run, so tails are \
             noisy; `cargo xtask bench --instructions` gives counts that are not. Full table, notes on \
             what each timed region includes, JSON and one SVG latency plot per scenario: \
             `target/bench/`.",
            utc_now(),
            ctx("cpu"),
            ctx("logical cpus"),
            ctx("TSC").split(" (").next().unwrap_or("?"),
            ctx("cpu flags"),
            ctx("core"),
            ctx("second core").split(" (").next().unwrap_or("?"),
            ctx("core clock (end)"),
            ctx("load (start)"),
            ctx("load (end)"),
            ctx("duration"),
            ctx("mode"),
            ctx("sampling"),
        );
        out.push('\n');
        let _ = writeln!(
            out,
            "| scenario | library | p50 ({u}) | p99 | p50 ns | vs tickwire | per round |\n\
             |---|---|---:|---:|---:|---:|---:|"
        );
        for (scenario, rows) in self.scenarios() {
            for (i, r) in rows.iter().enumerate() {
                let shown = if i == 0 { scenario } else { "" };
                let (ns, _) = self.ns_rate(r.p50);
                let spread = r
                    .round_ratio
                    .map_or_else(|| "-".into(), |x| format!("{:.2}-{:.2}x", x.p10, x.p90));
                let _ = writeln!(
                    out,
                    "| {shown} | {} | {} | {} | {ns} | {} | {spread} |",
                    r.library,
                    fmt_num(r.p50),
                    fmt_num(r.p99),
                    fmt_ratio(r.ratio)
                );
            }
        }
        self.write_ties(&mut out);
        out
    }

    /// Peer rows the run cannot call either way: the confidence interval of
    /// their per-round median ratio includes 1.00x. Only rows with at least
    /// [`TIE_ROUNDS`] rounds: below that the interval is the whole range, and
    /// one slow spell in six whole runs (the streaming scenarios) would make
    /// a 2.9x row a "tie"; those are judged by their merged samples. Floors
    /// and tickwire's own variants are left out (they are references, not
    /// competitors).
    pub fn ties(&self) -> Vec<(&Row, RoundRatio)> {
        self.rows
            .iter()
            .filter(|r| !r.baseline && !r.library.starts_with("tickwire"))
            .filter(|r| !r.library.contains("(floor)"))
            .filter_map(|r| Some((r, r.round_ratio?)))
            .filter(|(_, x)| x.rounds >= TIE_ROUNDS && x.median_lo <= 1.0 && x.median_hi >= 1.0)
            .collect()
    }

    /// The README paragraph on [`ties`](Self::ties), if any.
    fn write_ties(&self, out: &mut String) {
        let ties = self.ties();
        if ties.is_empty() {
            return;
        }
        let list: Vec<String> = ties
            .iter()
            .map(|(r, x)| {
                format!(
                    "{} / {} ({}; per-round median {:.3}x, 95% interval {:.3}-{:.3}x)",
                    r.scenario,
                    r.library,
                    fmt_ratio(r.ratio),
                    x.median,
                    x.median_lo,
                    x.median_hi
                )
            })
            .collect();
        let _ = write!(
            out,
            "\nTies within the noise: in {} peer row(s) run in at least {TIE_ROUNDS} rounds the confidence \
             interval (about 95%, from the rounds' order statistics) of the per-round median ratio \
             includes 1.00x, so the run puts neither library ahead there: {}.",
            ties.len(),
            list.join("; ")
        );
        if ties.iter().all(|(r, _)| r.scenario.contains("round trip")) {
            out.push_str(
                " All of them are loopback round trips, where the kernel's wake-ups take nearly all of the \
                 time (compare each scenario's raw TCP floor, or tickwire's busy-poll rows); the work each \
                 library does per round trip shows in the instruction counts (tokio rows), and the codec's \
                 cost per message in the in-memory and receive-stream rows.",
            );
        }
        out.push('\n');
    }

    /// Scenarios in run order, each with its rows.
    pub fn scenarios(&self) -> Vec<(&str, Vec<&Row>)> {
        let mut out: Vec<(&str, Vec<&Row>)> = Vec::new();
        for r in &self.rows {
            match out.iter_mut().find(|(s, _)| *s == r.scenario) {
                Some((_, v)) => v.push(r),
                None => out.push((&r.scenario, vec![r])),
            }
        }
        out
    }

    /// Write one SVG latency plot per scenario to `<dir>/plots/<slug>.svg`;
    /// returns the directory.
    pub fn write_plots(&self, dir: &Path) -> std::io::Result<PathBuf> {
        let plots = dir.join("plots");
        std::fs::create_dir_all(&plots)?;
        for (scenario, rows) in self.scenarios() {
            let path = plots.join(format!("{}.svg", crate::plot::slug(scenario)));
            std::fs::write(path, crate::plot::svg(scenario, &rows, clock::UNIT))?;
        }
        Ok(plots)
    }
}

/// The current UTC date and time as `YYYY-MM-DD HH:MM`.
pub fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    utc(secs)
}

/// `secs` since the Unix epoch as `YYYY-MM-DD HH:MM` (proleptic Gregorian, UTC).
fn utc(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let (h, m) = ((secs % 86_400) / 3600, (secs % 3600) / 60);
    // Civil from days (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let mo = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(mo <= 2);
    format!("{y:04}-{mo:02}-{d:02} {h:02}:{m:02}")
}

/// A JSON string literal.
fn json_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `<workspace>/target/bench`: the workspace root is this crate's parent.
pub fn default_out_dir() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest
        .parent()
        .unwrap_or(manifest)
        .join("target")
        .join("bench")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(s: &str, l: &str, base: bool, p50: f64) -> Row {
        Row {
            scenario: s.into(),
            library: l.into(),
            baseline: base,
            note: String::new(),
            p50,
            p90: p50,
            p99: p50,
            p999: p50,
            max: p50,
            samples: 1,
            batch: 64,
            ratio: None,
            rounds: Vec::new(),
            round_ratio: None,
            curve: vec![(0.0, p50), (1.0, p50)],
        }
    }

    #[test]
    fn per_round_ratios() {
        let mut r = Report::new("t");
        r.rows.push(Row {
            rounds: vec![(0, 10.0), (1, 20.0), (2, 10.0), (3, 10.0)],
            ..row("a", "tickwire", true, 10.0)
        });
        r.rows.push(Row {
            // Round 4 has no baseline turn and is left out.
            rounds: vec![(0, 30.0), (1, 40.0), (2, 25.0), (4, 99.0)],
            ..row("a", "peer", false, 30.0)
        });
        r.finish();
        assert_eq!(r.rows[0].round_ratio, None);
        assert_eq!(
            r.rows[1].round_ratio,
            Some(RoundRatio {
                min: 2.0,
                p10: 2.0,
                median: 2.5,
                p90: 3.0,
                max: 3.0,
                median_lo: 2.0,
                median_hi: 3.0,
                rounds: 3
            })
        );
        assert!(r.table().contains("2.00/2.50/3.00x"), "{}", r.table());
        assert!(r.json().contains(
            "\"ratio_per_round\": {\"min\": 2.0000, \"p10\": 2.0000, \"median\": 2.5000, \"p90\": 3.0000, \"max\": 3.0000, \"median_ci95\": [2.0000, 3.0000], \"rounds\": 3}"
        ));
        assert!(
            r.json()
                .contains("\"round_p50\": [[0, 30], [1, 40], [2, 25], [4, 99]]")
        );
        assert!(r.readme("x").contains("| 3.00x | 2.00-3.00x |"));
        assert!(r.ties().is_empty());
        assert!(!r.readme("x").contains("Ties within the noise"));
        assert_eq!(RoundRatio::of(&[(0, 1.0)], &[(1, 1.0)]), None);
        // Eleven rounds with ratios 1..=11 (given out of order).
        let base: Vec<(u32, f64)> = (0..11).map(|k| (k, 2.0)).collect();
        let row: Vec<(u32, f64)> = (0..11)
            .map(|k| (k, f64::from((k * 7) % 11 + 1) * 2.0))
            .collect();
        let rr = RoundRatio::of(&row, &base).unwrap();
        assert_eq!(
            (rr.min, rr.p10, rr.median, rr.p90, rr.max, rr.rounds),
            (1.0, 2.0, 6.0, 10.0, 11.0, 11)
        );
        // Ranks 2 and 10 of 11 (5.5 -+ 3.25, the upper one past the median).
        assert_eq!((rr.median_lo, rr.median_hi), (2.0, 10.0));
    }

    /// A peer row whose median's interval spans 1.00x is listed as a tie; one
    /// clearly behind, one whose rounds spread across 1.00x but whose median
    /// is clearly above it, a floor and tickwire's own variant are not.
    #[test]
    fn ties_are_listed() {
        let mut r = Report::new("t");
        let rounds = |v: &[f64]| -> Vec<(u32, f64)> {
            v.iter().enumerate().map(|(k, &x)| (k as u32, x)).collect()
        };
        let base = rounds(&[100.0; 10]);
        let spread = rounds(&[
            95.0, 97.0, 99.0, 100.0, 101.0, 102.0, 103.0, 104.0, 105.0, 106.0,
        ]);
        r.rows.push(Row {
            rounds: base,
            ..row("rt round trip", "tickwire", true, 100.0)
        });
        for lib in ["peer", "raw TCP (floor)", "tickwire (blocking)"] {
            r.rows.push(Row {
                rounds: spread.clone(),
                ..row("rt round trip", lib, false, 101.0)
            });
        }
        r.rows.push(Row {
            rounds: rounds(&[150.0; 10]),
            ..row("rt round trip", "slow peer", false, 150.0)
        });
        // Six whole runs, one in a slow spell: the interval is the whole
        // range, too few rounds to judge.
        r.rows.push(Row {
            rounds: rounds(&[290.0, 287.0, 90.0, 291.0, 288.0, 286.0]),
            ..row("rt round trip", "streaming peer", false, 288.0)
        });
        // 50 rounds at 0.950, 0.954, ..., 1.146 (p10 0.97): the median's
        // interval is ranks 18 and 33, 1.018-1.078x.
        let wide: Vec<f64> = (0..50).map(|k| 95.0 + 0.4 * f64::from(k)).collect();
        r.rows[0].rounds = rounds(&[100.0; 50]);
        r.rows.push(Row {
            rounds: rounds(&wide),
            ..row("rt round trip", "wide peer", false, 104.0)
        });
        r.finish();
        let ties: Vec<&str> = r.ties().iter().map(|(t, _)| t.library.as_str()).collect();
        assert_eq!(ties, ["peer"]);
        let wide = r.rows[6].round_ratio.unwrap();
        assert!(
            wide.p10 < 1.0 && (wide.median_lo - 1.018).abs() < 1e-9,
            "{wide:?}"
        );
        assert!((wide.median_hi - 1.078).abs() < 1e-9, "{wide:?}");
        let md = r.readme("x");
        assert!(
            md.contains("in 1 peer row(s) run in at least 10 rounds")
                && md.contains("rt round trip / peer (1.01x; per-round median"),
            "{md}"
        );
        assert!(md.contains("All of them are loopback round trips"), "{md}");
    }

    #[test]
    fn ratios_and_formats() {
        let mut r = Report::new("t");
        r.rows.push(row("a", "tickwire", true, 10.0));
        r.rows.push(row("a", "peer", false, 25.0));
        r.rows.push(row("b \"q\"", "peer", false, 5.0));
        r.finish();
        assert_eq!(r.rows[1].ratio, Some(2.5));
        assert_eq!(r.rows[2].ratio, None);
        assert!(r.table().contains("2.50x"));
        assert!(r.json().contains("\"b \\\"q\\\"\""));
        assert!(r.markdown().contains("| a | peer | 25.0 |"));
        let readme = r.readme("cargo xtask bench");
        assert!(
            readme.contains("| a | tickwire | 10.0 | 10.0 | - | 1.00x | - |"),
            "{readme}"
        );
        assert!(
            readme.contains("|  | peer | 25.0 | 25.0 | - | 2.50x | - |"),
            "{readme}"
        );
    }

    #[test]
    fn utc_dates() {
        assert_eq!(utc(0), "1970-01-01 00:00");
        assert_eq!(utc(951_782_400), "2000-02-29 00:00");
        assert_eq!(utc(1_795_436_700), "2026-11-23 12:25");
    }
}
