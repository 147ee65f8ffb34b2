//! `cargo xtask bench`: the benchmark table against peers, from the perf crate's `bench` binary.
//!
//! Every argument goes to the binary (`--full`, `--filter`, `--cores`, `--instructions`, ...)
//! except `--readme`, which runs it and then rewrites the README's performance block (between
//! `<!-- bench:start -->` and `<!-- bench:end -->`) from the run's `target/bench/bench-readme.md`
//! and the instruction counts of the same rows (`--instructions`, which needs valgrind).
//!
//! `--check-readme` runs nothing: it fails when the README's table names a row
//! (scenario and library) that the bench's `--list` no longer has (CI runs it).
//!
//! `--dpdk` builds the bench with perf's `dpdk` feature (DPDK 22.11 installed, pkg-config
//! `libdpdk`), so that its DPDK rows run, are counted and, with `--check-readme`, are listed.
//! With `--readme`, a run that includes the tail suite also puts its verdict (`tail.md`)
//! under the table.
//!
//! After every run (not `--list`) it also writes `target/bench/build-features.md`: the features
//! that the bench binary's build has on in tickwire's own dependency tree beyond a user's build of
//! `tickwire` (workspace feature unification), which `--readme` puts under the table.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Command, ExitCode};

use crate::workspace::{self, Workspace};

const START: &str = "<!-- bench:start -->";
const END: &str = "<!-- bench:end -->";

pub fn main(args: &[String]) -> Result<ExitCode, String> {
    let ws = Workspace::locate()?;
    let dpdk = args.iter().any(|a| a == "--dpdk");
    let args: Vec<&String> = args.iter().filter(|a| *a != "--dpdk").collect();
    if args.iter().any(|a| *a == "--check-readme") {
        if args.len() != 1 {
            return Err("--check-readme takes no other argument than --dpdk".into());
        }
        return check_readme(&ws, dpdk);
    }
    let readme = args.iter().any(|a| *a == "--readme");
    let forward: Vec<&String> = args.into_iter().filter(|a| *a != "--readme").collect();
    if readme
        && forward
            .iter()
            .any(|a| *a == "--instructions" || *a == "--list")
    {
        return Err("--readme takes a timed run, not --instructions or --list".into());
    }
    let started = std::time::SystemTime::now();
    let mut cmd = perf_bin(&ws, "bench", dpdk);
    cmd.args(&forward);
    let status = cmd
        .status()
        .map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    // Forward the exit status; a signal death has no code and becomes a plain failure.
    let code = match status.code() {
        Some(0) => ExitCode::SUCCESS,
        Some(code) => return Ok(ExitCode::from(u8::try_from(code).unwrap_or(1))),
        None => return Ok(ExitCode::FAILURE),
    };
    let listing = forward.iter().any(|a| *a == "--list");
    let build_note = if listing {
        None
    } else {
        let note = build_note(&ws.root)?;
        let dir = ws.root.join("target").join("bench");
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let path = dir.join("build-features.md");
        std::fs::write(&path, format!("{note}\n"))
            .map_err(|e| format!("{}: {e}", path.display()))?;
        println!("\n{note}");
        Some(note)
    };
    if readme {
        let dir = ws.root.join("target").join("bench");
        let read = |name: &str| {
            let path = dir.join(name);
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))
        };
        let mut section = read("bench-readme.md")?;
        // The tail suite's verdict, when this run wrote it (a filter may have left it out).
        let tail = dir.join("tail.md");
        let fresh = std::fs::metadata(&tail)
            .and_then(|m| m.modified())
            .is_ok_and(|t| t >= started);
        if fresh {
            section.push('\n');
            section.push_str(
                read("tail.md")?
                    .trim_end()
                    .replace("\n# ", "\n### ")
                    .as_str(),
            );
            section.push('\n');
        }
        if let Some(note) = &build_note {
            section.push('\n');
            section.push_str(note);
            section.push('\n');
        }
        // The same rows counted under callgrind: the numbers that do not move with load.
        let status = perf_bin(&ws, "bench", dpdk)
            .args(&forward)
            .arg("--instructions")
            .status()
            .map_err(|e| format!("cannot run the bench with --instructions: {e}"))?;
        if !status.success() {
            return Err(format!("bench --instructions failed: {status}"));
        }
        let counts = read("instructions.md")?;
        let table = counts.find("| scenario").map_or("", |i| &counts[i..]);
        section.push_str(
            "\nInstructions per operation for the in-memory rows of the same selection \
             (`cargo xtask bench --instructions`: valgrind's callgrind, identical from run to run):\n\n",
        );
        section.push_str(table);
        rewrite_readme(&ws.root.join("README.md"), &section)?;
        println!("rewrote the performance block of README.md");
    }
    Ok(code)
}

/// `cargo xtask bench --check-readme`: every row README.md's performance table names (a
/// scenario and a library, in the timed table and in the instruction counts under it) is
/// still a row of the bench, so the table never shows a row nobody can re-run. Cheap: the
/// bench binary's `--list` in a debug build (the rows do not depend on the profile), no
/// measurement. Rows the harness adds itself (the timer's overhead) are not cases.
fn check_readme(ws: &Workspace, dpdk: bool) -> Result<ExitCode, String> {
    let path = ws.root.join("README.md");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let named = readme_rows(&text)
        .ok_or_else(|| format!("{} has no {START} ... {END} block", path.display()))?;
    let mut cmd = Command::new(workspace::cargo());
    cmd.args(["run", "--quiet", "-p", "tickwire-perf", "--bin", "bench"]);
    if dpdk {
        cmd.args(["--features", "dpdk"]);
    }
    let out = cmd
        .args(["--", "--list"])
        .current_dir(&ws.root)
        .output()
        .map_err(|e| format!("cannot run the bench's --list: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "bench --list failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let listed = listed_rows(&String::from_utf8_lossy(&out.stdout));
    let missing: Vec<&(String, String)> = named
        .iter()
        .filter(|(scenario, library)| {
            scenario != HARNESS_SCENARIO && !listed.contains(&(scenario.clone(), library.clone()))
        })
        .collect();
    println!(
        "README.md's performance table names {} rows; the bench has {}",
        named.len(),
        listed.len()
    );
    if missing.is_empty() {
        println!("every row the README names is a row of the bench");
        return Ok(ExitCode::SUCCESS);
    }
    for (scenario, library) in &missing {
        eprintln!("  not in the bench: {scenario} | {library}");
    }
    eprintln!(
        "{} README row(s) are no longer in the bench (renamed or removed): regenerate the table \
         (`cargo xtask bench --full --readme`) or keep the rows",
        missing.len()
    );
    Ok(ExitCode::FAILURE)
}

/// The scenario of the rows the harness adds to every run (not cases of a suite).
const HARNESS_SCENARIO: &str = "timer overhead";

/// The (scenario, library) pairs of the Markdown tables between the bench markers: the
/// timed table (a blank scenario cell repeats the one above) and the instruction counts;
/// header and separator lines are skipped. `None` without the markers.
fn readme_rows(text: &str) -> Option<BTreeSet<(String, String)>> {
    let a = text.find(START)? + START.len();
    let b = a + text[a..].find(END)?;
    let mut rows = BTreeSet::new();
    let mut scenario = String::new();
    // Whether the table being read is one of rows (its header starts with "scenario"):
    // other tables (the tail verdict's, by library) name no rows.
    let mut row_table = false;
    let mut in_table = false;
    for line in text[a..b].lines() {
        let line = line.trim();
        if !line.starts_with('|') {
            scenario.clear();
            in_table = false;
            continue;
        }
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        if !in_table {
            in_table = true;
            row_table = cells.first() == Some(&"scenario");
        }
        if !row_table {
            continue;
        }
        let [first, library, ..] = cells[..] else {
            continue;
        };
        if first == "scenario" || first.starts_with("---") {
            continue;
        }
        if !first.is_empty() {
            scenario = first.to_string();
        }
        if !scenario.is_empty() && !library.is_empty() {
            rows.insert((scenario.clone(), library.to_string()));
        }
    }
    Some(rows)
}

/// `bench --list` lines (`scenario | library`, `  (baseline)` after a baseline) as pairs.
fn listed_rows(text: &str) -> BTreeSet<(String, String)> {
    text.lines()
        .filter_map(|line| {
            let (scenario, library) = line.rsplit_once(" | ")?;
            let library = library.trim_end().trim_end_matches("(baseline)").trim_end();
            Some((scenario.trim().to_string(), library.to_string()))
        })
        .collect()
}

/// The package the note compares against: what a user adds to their Cargo.toml.
const USER_PACKAGE: &str = "tickwire";

/// Which features of tickwire's own dependency tree the bench binary's build
/// switches on beyond a user's build of `tickwire` with default features. Inside
/// the workspace, cargo unifies the features every package of the build asks
/// for (perf's peers turn on simdutf8's and httparse's `std`, for example), and
/// `cargo tree -p` resolves features for the selected package alone, as a
/// user's build would.
/// `cargo xtask soak`: perf's `conn_memory` binary (memory per connection and the soak).
pub fn soak(args: &[String]) -> Result<ExitCode, String> {
    let ws = Workspace::locate()?;
    let mut cmd = perf_bin(&ws, "conn_memory", false);
    cmd.args(args);
    let status = cmd
        .status()
        .map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    Ok(if status.success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// `cargo run --release -p tickwire-perf --bin BIN [--features dpdk] --` in the workspace root.
fn perf_bin(ws: &Workspace, bin: &str, dpdk: bool) -> Command {
    let mut cmd = Command::new(workspace::cargo());
    cmd.args(["run", "--release", "-p", "tickwire-perf", "--bin", bin]);
    if dpdk {
        cmd.args(["--features", "dpdk"]);
    }
    cmd.arg("--").current_dir(&ws.root);
    cmd
}

fn build_note(root: &Path) -> Result<String, String> {
    let user = features(root, USER_PACKAGE)?;
    let bench = features(root, "tickwire-perf")?;
    let diff = feature_diff(&user, &bench);
    if diff.is_empty() {
        return Ok(format!(
            "Build: every package of `{USER_PACKAGE}`'s dependency tree has the same features in the bench \
             binary as in a user's build of `{USER_PACKAGE}` with default features \
             (`cargo tree -e normal -p {USER_PACKAGE}` against `-p tickwire-perf`)."
        ));
    }
    let mut note = format!(
        "Build: the bench binary is built inside the workspace, where cargo unifies features across \
         it and its peer libraries; compared with a user's build of `{USER_PACKAGE}` with default \
         features (`cargo tree -e normal -p {USER_PACKAGE}` against `-p tickwire-perf`), these \
         packages of `{USER_PACKAGE}`'s own tree have more features switched on in the measured \
         binary: {}.",
        diff.join("; ")
    );
    for (pkg, feature, effect) in SPEED_FEATURES {
        let on = |m: &BTreeMap<String, BTreeSet<String>>| {
            m.iter()
                .any(|(p, f)| p.split(' ').next() == Some(pkg) && f.contains(feature))
        };
        if on(&bench) && !on(&user) {
            note.push_str(&format!(" {pkg} `{feature}`: {effect}."));
        }
    }
    Ok(note)
}

/// Features known to change code tickwire runs, and what they change.
const SPEED_FEATURES: [(&str, &str, &str); 2] = [
    (
        "simdutf8",
        "std",
        "UTF-8 validation through simdutf8 picks its SIMD implementation by run-time CPU \
         detection; without it, by the compile-time target features (scalar on generic x86_64)",
    ),
    (
        "httparse",
        "std",
        "httparse's SSE4.2/AVX2 header scanning is compiled in (its build script leaves it out \
         without std)",
    ),
];

/// Package (name and version) to the features `cargo tree` shows for it in `package`'s build.
fn features(root: &Path, package: &str) -> Result<BTreeMap<String, BTreeSet<String>>, String> {
    let out = Command::new(workspace::cargo())
        .args([
            "tree", "-p", package, "-e", "normal", "--prefix", "none", "-f", "{p}|{f}",
        ])
        .current_dir(root)
        .output()
        .map_err(|e| format!("cannot run cargo tree: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cargo tree -p {package} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(parse_tree(&String::from_utf8_lossy(&out.stdout)))
}

/// `cargo tree --prefix none -f "{p}|{f}"` lines as package -> features. A
/// local package's path (` (/...)`) and the repeat mark (` (*)`) are dropped.
fn parse_tree(text: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut map: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in text.lines() {
        let Some((pkg, feats)) = line.split_once('|') else {
            continue;
        };
        let pkg = pkg.split(" (").next().unwrap_or(pkg).trim();
        let feats = feats.trim_end_matches(" (*)").trim();
        let set = map.entry(pkg.to_string()).or_default();
        set.extend(
            feats
                .split(',')
                .filter(|f| !f.is_empty())
                .map(str::to_string),
        );
    }
    map
}

/// For every package of `user`, the features `bench` has on beyond it, as
/// `name vX: +a, +b`.
fn feature_diff(
    user: &BTreeMap<String, BTreeSet<String>>,
    bench: &BTreeMap<String, BTreeSet<String>>,
) -> Vec<String> {
    user.iter()
        .filter_map(|(pkg, have)| {
            let extra: Vec<String> = bench
                .get(pkg)?
                .difference(have)
                .map(|f| format!("+{f}"))
                .collect();
            (!extra.is_empty()).then(|| format!("{pkg}: {}", extra.join(", ")))
        })
        .collect()
}

fn rewrite_readme(path: &Path, section: &str) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let new = splice(&text, section)
        .ok_or_else(|| format!("{} has no {START} ... {END} block", path.display()))?;
    std::fs::write(path, new).map_err(|e| format!("{}: {e}", path.display()))
}

/// `text` with everything between the markers replaced by `section`.
fn splice(text: &str, section: &str) -> Option<String> {
    let a = text.find(START)? + START.len();
    let b = a + text[a..].find(END)?;
    Some(format!(
        "{}\n{}\n{}",
        &text[..a],
        section.trim_end(),
        &text[b..]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feature_difference_names_only_extra_features_of_the_users_packages() {
        let user = parse_tree(
            "tickwire v0.1.0 (/w/transport)|\n\
             simdutf8 v0.1.5|\n\
             httparse v1.10.1|\n\
             mio v1.2.5|net,os-poll\n\
             simdutf8 v0.1.5| (*)\n",
        );
        let bench = parse_tree(
            "tickwire-perf v0.1.0 (/w/perf)|\n\
             tickwire v0.1.0 (/w/transport)|tokio\n\
             simdutf8 v0.1.5|default,std\n\
             httparse v1.10.1|default,std (*)\n\
             mio v1.2.5|net,os-poll\n\
             tokio v1.54.1|rt\n",
        );
        assert_eq!(
            feature_diff(&user, &bench),
            [
                "httparse v1.10.1: +default, +std",
                "simdutf8 v0.1.5: +default, +std",
                "tickwire v0.1.0: +tokio",
            ]
        );
        assert!(feature_diff(&user, &user).is_empty());
    }

    #[test]
    fn readme_rows_are_read_from_both_tables() {
        let t = "intro | not | a row\n<!-- bench:start -->\nGenerated ...\n\n\
                 | scenario | library | p50 (ticks) | p99 |\n|---|---|---:|---:|\n\
                 | timer overhead | empty batch, per op | 1.2 | 1.2 |\n\
                 | ws parse | tickwire | 11.3 | 21.9 |\n|  | nexus-net 0.4.2 | 30 | 31 |\n\
                 \n## Tail\n\n| library | messages | p50 |\n|---|---:|---:|\n| tickwire | 313555 | 15.6 |\n\
                 \nInstructions per operation:\n\n\
                 | scenario | library | instructions/op | vs tickwire |\n|---|---|---:|---:|\n\
                 | tcp stream (blocking) | raw TCP (floor) | 17.0 | 0.10x |\n\
                 <!-- bench:end -->\n| other | table |\n";
        let rows = readme_rows(t).unwrap();
        let want: BTreeSet<(String, String)> = [
            ("timer overhead", "empty batch, per op"),
            ("ws parse", "tickwire"),
            ("ws parse", "nexus-net 0.4.2"),
            ("tcp stream (blocking)", "raw TCP (floor)"),
        ]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
        assert_eq!(rows, want);
        assert_eq!(readme_rows("no markers"), None);
        let listed = listed_rows(
            "ws parse | tickwire  (baseline)\nws parse | nexus-net 0.4.2\n\
             REST a | b, c | tickwire (RequestWriter + Client::send)  (baseline)\n",
        );
        assert!(listed.contains(&("ws parse".into(), "tickwire".into())));
        assert!(listed.contains(&("ws parse".into(), "nexus-net 0.4.2".into())));
        assert!(listed.contains(&(
            "REST a | b, c".into(),
            "tickwire (RequestWriter + Client::send)".into()
        )));
    }

    #[test]
    fn splices_between_markers_only() {
        let t = "# x\n<!-- bench:start -->\nold\n<!-- bench:end -->\ntail\n";
        assert_eq!(
            splice(t, "new\n").unwrap(),
            "# x\n<!-- bench:start -->\nnew\n<!-- bench:end -->\ntail\n"
        );
        assert_eq!(splice("no markers", "x"), None);
        assert_eq!(splice("<!-- bench:end --> <!-- bench:start -->", "x"), None);
    }
}
