//! `cargo xtask bench`: the benchmark table against peers, from the perf crate's `bench` binary.
//!
//! Every argument goes to the binary (`--full`, `--filter`, `--cores`, `--instructions`, ...)
//! except `--readme`, which runs it and then rewrites the README's performance block (between
//! `<!-- bench:start -->` and `<!-- bench:end -->`) from the run's `target/bench/bench-readme.md`
//! and the instruction counts of the same rows (`--instructions`, which needs valgrind).

use std::path::Path;
use std::process::{Command, ExitCode};

use crate::workspace::{self, Workspace};

const START: &str = "<!-- bench:start -->";
const END: &str = "<!-- bench:end -->";

pub fn main(args: &[String]) -> Result<ExitCode, String> {
    let ws = Workspace::locate()?;
    let readme = args.iter().any(|a| a == "--readme");
    let forward: Vec<&String> = args.iter().filter(|a| *a != "--readme").collect();
    if readme
        && forward
            .iter()
            .any(|a| *a == "--instructions" || *a == "--list")
    {
        return Err("--readme takes a timed run, not --instructions or --list".into());
    }
    let mut cmd = Command::new(workspace::cargo());
    cmd.args([
        "run",
        "--release",
        "-p",
        "tickwire-perf",
        "--bin",
        "bench",
        "--",
    ])
    .args(&forward)
    .current_dir(&ws.root);
    let status = cmd
        .status()
        .map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    // Forward the exit status; a signal death has no code and becomes a plain failure.
    let code = match status.code() {
        Some(0) => ExitCode::SUCCESS,
        Some(code) => return Ok(ExitCode::from(u8::try_from(code).unwrap_or(1))),
        None => return Ok(ExitCode::FAILURE),
    };
    if readme {
        let dir = ws.root.join("target").join("bench");
        let read = |name: &str| {
            let path = dir.join(name);
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))
        };
        let mut section = read("bench-readme.md")?;
        // The same rows counted under callgrind: the numbers that do not move with load.
        let status = Command::new(workspace::cargo())
            .args([
                "run",
                "--release",
                "-p",
                "tickwire-perf",
                "--bin",
                "bench",
                "--",
            ])
            .args(&forward)
            .arg("--instructions")
            .current_dir(&ws.root)
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
