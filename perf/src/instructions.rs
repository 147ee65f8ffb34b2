//! `--instructions`: instructions per operation under callgrind.
//!
//! [`parent`] re-runs this binary under `valgrind --tool=callgrind
//! --collect-atstart=no` with `--callgrind-child`; [`child`] runs every
//! selected in-memory case in count mode ([`RunConfig::count_rounds`]) and
//! dumps after each; the parent divides each dump's instructions by its
//! operations and prints a table (also `instructions.{md,json}`). Loopback
//! rows are left out: their cost is in the kernel and another thread.

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use crate::callgrind::{self, Dump};
use crate::harness::RunConfig;
use crate::suites::Case;

/// Rounds (batches) counted per case.
pub const ROUNDS: u32 = 16;

/// The child: count every selected case and dump after each.
pub fn child(cases: &[(usize, &Case<'_>)], run: &RunConfig) -> Result<(), String> {
    if !callgrind::running_on_valgrind() {
        return Err("--callgrind-child runs under valgrind only (use --instructions)".into());
    }
    let cfg = RunConfig {
        count_rounds: ROUNDS,
        ..*run
    };
    for &(i, c) in cases {
        let m = c.run(&cfg);
        callgrind::dump_stats_at(&callgrind::label(i, u64::from(ROUNDS) * m.batch as u64));
    }
    Ok(())
}

/// One result row.
#[derive(Debug, Clone)]
pub struct Counted {
    /// Scenario name.
    pub scenario: String,
    /// Library name.
    pub library: String,
    /// Whether this is the scenario's baseline.
    pub baseline: bool,
    /// Instructions per operation.
    pub per_op: f64,
    /// Total instructions and operations behind it.
    pub dump: Dump,
}

/// The parent: run the child under callgrind with `child_args`, read the
/// dumps from `dir`, and return a row per counted case.
pub fn parent(all: &[Case<'_>], child_args: &[String], dir: &Path) -> Result<Vec<Counted>, String> {
    let probe = Command::new("valgrind").arg("--version").output();
    if !probe.is_ok_and(|o| o.status.success()) {
        return Err("valgrind not found: install it (Debian: apt-get install valgrind)".into());
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    const STEM: &str = "callgrind.out.";
    for e in std::fs::read_dir(dir).map_err(|e| e.to_string())?.flatten() {
        if e.file_name().to_string_lossy().starts_with(STEM) {
            let _ = std::fs::remove_file(e.path());
        }
    }
    let exe = std::env::current_exe().map_err(|e| format!("current exe: {e}"))?;
    let status = Command::new("valgrind")
        .args([
            "--tool=callgrind",
            "--collect-atstart=no",
            "--dump-instr=no",
            "--compress-strings=no",
            // Threads take valgrind's lock in turn (a ticket lock): with the default
            // lock the rows with a peer thread (round trips) moved by up to 20% from
            // run to run with who got the lock after each system call (smol's round
            // trip 4640-5500); in turn, the tokio rows repeat to the instruction and
            // the futures-io rows within a few percent.
            "--fair-sched=yes",
        ])
        .arg(format!(
            "--callgrind-out-file={}",
            dir.join(format!("{STEM}%p")).display()
        ))
        // Callgrind counts every iteration of `rep movsb` / `rep stosb` as an
        // instruction, so glibc's memcpy/memset would cost one "instruction"
        // per byte above their ERMS thresholds: raise the thresholds so the
        // vector loops (what the counts should reflect) are used throughout.
        .env(
            "GLIBC_TUNABLES",
            "glibc.cpu.x86_rep_movsb_threshold=1073741824:glibc.cpu.x86_rep_stosb_threshold=1073741824",
        )
        .arg(&exe)
        .arg("--callgrind-child")
        .args(child_args)
        .status()
        .map_err(|e| format!("running valgrind: {e}"))?;
    if !status.success() {
        return Err(format!("valgrind run failed: {status}"));
    }
    let dumps = callgrind::read_dumps(dir, STEM).map_err(|e| e.to_string())?;
    let mut out: Vec<Counted> = dumps
        .into_iter()
        .filter_map(|d| {
            let c = all.get(d.index)?;
            Some(Counted {
                scenario: c.scenario.clone(),
                library: c.library.clone(),
                baseline: c.baseline,
                per_op: d.instructions as f64 / d.ops.max(1) as f64,
                dump: d,
            })
        })
        .collect();
    out.sort_by_key(|c| c.dump.index);
    Ok(out)
}

/// Each row's instructions per op over its scenario's baseline's.
pub fn ratios(rows: &[Counted]) -> Vec<Option<f64>> {
    rows.iter()
        .map(|r| {
            rows.iter()
                .find(|b| b.baseline && b.scenario == r.scenario && b.per_op > 0.0)
                .map(|b| r.per_op / b.per_op)
        })
        .collect()
}

/// The table for the terminal (and, with `markdown`, as Markdown).
pub fn table(rows: &[Counted], markdown: bool) -> String {
    let ratios = ratios(rows);
    let mut out = String::new();
    if markdown {
        out.push_str(
            "| scenario | library | instructions/op | vs tickwire |\n|---|---|---:|---:|\n",
        );
    }
    let w0 = rows.iter().map(|r| r.scenario.len()).max().unwrap_or(8);
    let w1 = rows.iter().map(|r| r.library.len()).max().unwrap_or(7);
    if !markdown {
        let _ = writeln!(
            out,
            "{:<w0$}  {:<w1$}  {:>15}  {:>11}",
            "scenario", "library", "instructions/op", "vs tickwire"
        );
    }
    let mut last = "";
    for (r, ratio) in rows.iter().zip(ratios) {
        let ratio = ratio.map_or_else(|| "-".into(), |x| format!("{x:.2}x"));
        if markdown {
            let _ = writeln!(
                out,
                "| {} | {} | {:.1} | {ratio} |",
                r.scenario, r.library, r.per_op
            );
        } else {
            let s = if r.scenario == last { "" } else { &r.scenario };
            if !s.is_empty() && !last.is_empty() {
                out.push('\n');
            }
            let _ = writeln!(
                out,
                "{s:<w0$}  {:<w1$}  {:>15.1}  {ratio:>11}",
                r.library, r.per_op
            );
            last = &r.scenario;
        }
    }
    out
}

/// The rows as JSON.
pub fn json(rows: &[Counted]) -> String {
    let ratios = ratios(rows);
    let mut out = String::from(
        "{\n  \"unit\": \"instructions per operation (callgrind Ir)\",\n  \"rows\": [",
    );
    for (i, (r, ratio)) in rows.iter().zip(ratios).enumerate() {
        let sep = if i == 0 { "" } else { "," };
        let _ = write!(
            out,
            "{sep}\n    {{\"scenario\": {:?}, \"library\": {:?}, \"instructions_per_op\": {:.2}, \
             \"instructions\": {}, \"ops\": {}, \"ratio_vs_tickwire\": {}}}",
            r.scenario,
            r.library,
            r.per_op,
            r.dump.instructions,
            r.dump.ops,
            ratio.map_or_else(|| "null".into(), |x| format!("{x:.4}"))
        );
    }
    out.push_str("\n  ]\n}\n");
    out
}
