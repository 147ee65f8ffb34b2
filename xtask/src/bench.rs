//! `cargo xtask bench`: the benchmark table against peers, from the perf crate's `bench` binary.

use std::process::{Command, ExitCode};

use crate::workspace::{self, Workspace};

pub fn main(args: &[String]) -> Result<ExitCode, String> {
    let ws = Workspace::locate()?;
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
    .args(args)
    .current_dir(&ws.root);
    let status = cmd
        .status()
        .map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    // Forward the exit status; a signal death has no code and becomes a plain failure.
    Ok(match status.code() {
        Some(0) => ExitCode::SUCCESS,
        Some(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        None => ExitCode::FAILURE,
    })
}
