//! `cargo xtask fuzz [--time SECS] [TARGET...]`: run the cargo-fuzz targets in `fuzz/`.
//!
//! Builds every target once, then runs each for SECS seconds (default 30) over its working
//! corpus (`fuzz/corpus/T`, not committed) and its committed seeds (`fuzz/seeds/T`), and
//! prints per target how many inputs libFuzzer executed and whether it found anything.
//! Installs nothing: cargo-fuzz and a nightly toolchain must be there (the error says how).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

use crate::workspace::Workspace;

/// The toolchain cargo-fuzz runs on (sanitizers need nightly).
fn toolchain() -> String {
    std::env::var("TICKWIRE_FUZZ_TOOLCHAIN").unwrap_or_else(|_| "nightly".into())
}

/// `cargo +<toolchain> fuzz ...` through the rustup proxy on PATH (the `CARGO` we were
/// started with is a toolchain's own binary, which does not understand `+toolchain`).
fn cargo_fuzz(fuzz_dir: &Path) -> Command {
    let mut cmd = Command::new("cargo");
    cmd.arg(format!("+{}", toolchain()))
        .arg("fuzz")
        .current_dir(fuzz_dir);
    cmd
}

struct Args {
    time: u64,
    targets: Vec<String>,
}

fn parse(args: &[String]) -> Result<Args, String> {
    let mut out = Args {
        time: 30,
        targets: Vec::new(),
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--time" => {
                let v = it.next().ok_or("--time needs a number of seconds")?;
                out.time = v
                    .parse()
                    .ok()
                    .filter(|&t| t > 0)
                    .ok_or_else(|| format!("--time: `{v}` is not a positive number"))?;
            }
            s if s.starts_with('-') => return Err(format!("fuzz: unknown option `{s}`")),
            t => out.targets.push(t.to_owned()),
        }
    }
    Ok(out)
}

/// The targets: one file per target in `fuzz/fuzz_targets/`, each with a `[[bin]]` entry.
fn targets(fuzz_dir: &Path) -> Result<Vec<String>, String> {
    let dir = fuzz_dir.join("fuzz_targets");
    let mut files: Vec<String> = fs::read_dir(&dir)
        .map_err(|e| format!("cannot list {}: {e}", dir.display()))?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            name.strip_suffix(".rs").map(str::to_owned)
        })
        .collect();
    files.sort();
    let manifest = fs::read_to_string(fuzz_dir.join("Cargo.toml"))
        .map_err(|e| format!("cannot read fuzz/Cargo.toml: {e}"))?;
    for f in &files {
        if !manifest.contains(&format!("name = \"{f}\"")) {
            return Err(format!(
                "fuzz/fuzz_targets/{f}.rs has no [[bin]] entry in fuzz/Cargo.toml (add one)"
            ));
        }
    }
    Ok(files)
}

/// What one run told us.
struct Outcome {
    executions: Option<u64>,
    artifact: Option<String>,
    success: bool,
}

/// libFuzzer's count of executed inputs (`-print_final_stats=1`, else "Done N runs") and
/// the path of a crash/timeout/OOM artifact if one was written.
fn read_log(log: &str, success: bool) -> Outcome {
    let stat = log.lines().find_map(|l| {
        l.strip_prefix("stat::number_of_executed_units:")
            .and_then(|v| v.trim().parse().ok())
    });
    let done = log.lines().find_map(|l| {
        let rest = l.strip_prefix("Done ")?;
        rest.split_whitespace().next()?.parse().ok()
    });
    let artifact = log.lines().find_map(|l| {
        l.split_once("Test unit written to ")
            .map(|(_, p)| p.trim().to_owned())
    });
    Outcome {
        executions: stat.or(done),
        artifact,
        success,
    }
}

pub fn main(args: &[String]) -> Result<ExitCode, String> {
    let args = parse(args)?;
    let ws = Workspace::locate()?;
    let fuzz_dir = ws.root.join("fuzz");
    let all = targets(&fuzz_dir)?;
    let chosen: Vec<String> = if args.targets.is_empty() {
        all.clone()
    } else {
        for t in &args.targets {
            if !all.contains(t) {
                return Err(format!(
                    "unknown fuzz target `{t}`; targets: {}",
                    all.join(", ")
                ));
            }
        }
        args.targets.clone()
    };

    let version = cargo_fuzz(&fuzz_dir).arg("--version").output();
    if !matches!(&version, Ok(o) if o.status.success()) {
        return Err(format!(
            "`cargo +{tc} fuzz` is not available. Install it with\n  \
             rustup toolchain install {tc}\n  cargo install cargo-fuzz --locked\n\
             (set TICKWIRE_FUZZ_TOOLCHAIN to use another nightly toolchain)",
            tc = toolchain()
        ));
    }

    println!("xtask fuzz: building {} target(s)", chosen.len());
    let mut build = cargo_fuzz(&fuzz_dir);
    build.arg("build");
    if args.targets.len() == 1 {
        build.arg(&args.targets[0]);
    }
    crate::proc::run(&mut build)?;

    let logs = ws.target.join("fuzz-logs");
    fs::create_dir_all(&logs).map_err(|e| format!("cannot create {}: {e}", logs.display()))?;
    let mut findings = 0;
    let mut report = Vec::new();
    for t in &chosen {
        let corpus = fuzz_dir.join("corpus").join(t);
        fs::create_dir_all(&corpus)
            .map_err(|e| format!("cannot create {}: {e}", corpus.display()))?;
        let seeds: PathBuf = fuzz_dir.join("seeds").join(t);
        let log_path = logs.join(format!("{t}.log"));
        let log_file = fs::File::create(&log_path)
            .map_err(|e| format!("cannot create {}: {e}", log_path.display()))?;
        let mut cmd = cargo_fuzz(&fuzz_dir);
        cmd.args(["run", t.as_str()]).arg(&corpus);
        if seeds.is_dir() {
            cmd.arg(&seeds);
        }
        cmd.arg("--")
            .arg(format!("-max_total_time={}", args.time))
            .args(["-print_final_stats=1", "-timeout=30"])
            .stdout(log_file.try_clone().map_err(|e| e.to_string())?)
            .stderr(log_file);
        println!(
            "xtask fuzz: {t} for {}s (log: {})",
            args.time,
            log_path.display()
        );
        let started = Instant::now();
        let status = cmd
            .status()
            .map_err(|e| format!("cannot run cargo fuzz: {e}"))?;
        let log = fs::read_to_string(&log_path).unwrap_or_default();
        let out = read_log(&log, status.success());
        let secs = started.elapsed().as_secs();
        let execs = out
            .executions
            .map_or_else(|| "? executions".to_owned(), |n| format!("{n} executions"));
        let line = match (&out.artifact, out.success) {
            (None, true) => format!("{t}: {execs} in {secs}s, no finding"),
            (Some(a), _) => {
                findings += 1;
                format!(
                    "{t}: FINDING after {execs}: {a}\n    reproduce: cd fuzz && cargo +{} fuzz run {t} {a}",
                    toolchain()
                )
            }
            (None, false) => {
                findings += 1;
                format!(
                    "{t}: FAILED ({status}) after {execs}; see {}",
                    log_path.display()
                )
            }
        };
        println!("{line}");
        report.push(line);
    }
    println!("\nxtask fuzz summary ({}s per target):", args.time);
    for line in &report {
        println!("  {line}");
    }
    Ok(if findings == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_libfuzzer_final_stats_and_artifacts() {
        let log = "#2\tINITED\nDone 64742 runs in 11 second(s)\n\
                   stat::number_of_executed_units: 64743\nstat::peak_rss_mb: 80\n";
        let o = read_log(log, true);
        assert_eq!(o.executions, Some(64743));
        assert_eq!(o.artifact, None);
        let o = read_log("Done 12 runs in 1 second(s)\n", true);
        assert_eq!(o.executions, Some(12));
        let log = "==1== ERROR: libFuzzer: deadly signal\nartifact_prefix='a/'; \
                   Test unit written to a/crash-abc\n";
        let o = read_log(log, false);
        assert_eq!(o.artifact.as_deref(), Some("a/crash-abc"));
        assert_eq!(o.executions, None);
    }

    #[test]
    fn parses_time_and_targets() {
        let a = parse(&["--time".into(), "20".into(), "ws_frame_reader".into()]).unwrap();
        assert_eq!(a.time, 20);
        assert_eq!(a.targets, ["ws_frame_reader"]);
        assert!(parse(&["--time".into(), "0".into()]).is_err());
        assert!(parse(&["--jobs".into()]).is_err());
    }
}
