//! `conn_memory`: resident memory per idle WebSocket connection, 10,000 connections on
//! one server poll loop, tickwire (mio, and its tokio server idle) beside
//! tokio-tungstenite (issue 27), then the soak:
//! every connection sends and reads echoes for many rounds, each checked, the server's
//! resident set sampled after every round. The harness is the test's
//! (`conformance/tests/conn_memory/`): each server and the clients run in processes of
//! their own (this binary started again).
//!
//! `cargo run --release -p tickwire-perf --bin conn_memory -- [--conns N] [--rounds R]
//! [--messages M] [--margin-mib X] [--out DIR]` (defaults 10,000, 100, 4, 4 MiB,
//! `target/bench`); `cargo xtask soak` runs it. Exits non-zero when a check fails: a
//! connection lost, an echo missing, tickwire above 16 KiB per idle connection or not
//! below tokio-tungstenite, or the resident set after the last round more than the
//! margin above the one after the first.

#[path = "../../../conformance/tests/conn_memory/mod.rs"]
mod conn_memory;

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use conn_memory::{Peer, Plan};

const USAGE: &str =
    "usage: conn_memory [--conns N] [--rounds R] [--messages M] [--margin-mib X] [--out DIR]";

fn main() -> ExitCode {
    conn_memory::child();
    let mut plan = Plan {
        conns: 10_000,
        rounds: 100,
        messages: 4,
    };
    let mut margin_mib = 4u64;
    let mut out = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/bench");
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let value = args.next();
        let num = || value.as_deref().and_then(|v| v.parse::<usize>().ok());
        let ok = match a.as_str() {
            "--conns" => num().map(|n| plan.conns = n),
            "--rounds" => num().map(|n| plan.rounds = n),
            "--messages" => num().map(|n| plan.messages = n.max(1)),
            "--margin-mib" => num().map(|n| margin_mib = n as u64),
            "--out" => value.as_ref().map(|v| out = PathBuf::from(v)),
            _ => None,
        };
        if ok.is_none() {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    }
    eprintln!(
        "conn_memory: {} connections, {} soak rounds of {} messages each",
        plan.conns, plan.rounds, plan.messages
    );
    let tw = conn_memory::run(&[], Peer::Tickwire, plan);
    let idle = Plan { rounds: 0, ..plan };
    let tt = conn_memory::run(&[], Peer::TokioTungstenite, idle);
    let full = conn_memory::run(&[], Peer::TickwireFullBuffers, plan);
    // tickwire's tokio server, idle: one descriptor a connection, as the mio server.
    let tk_idle = idle;
    let tk = conn_memory::run(&[], Peer::TickwireTokio, tk_idle);
    let mut md = String::new();
    let _ = writeln!(
        md,
        "| scenario | library | resident per idle connection | ratio | virtual per idle \
         connection | resident per connection after the soak |\n|---|---|---:|---:|---:|---:|"
    );
    for r in [&tw, &tk, &tt, &full] {
        let _ = writeln!(
            md,
            "| {} idle WebSocket connections, one server poll loop (default settings) | {} | {:.0} B ({:.1} KiB) | {:.2}x | {:.1} KiB | {} |",
            r.conns,
            r.peer.name(),
            r.per_conn(),
            r.per_conn() / 1024.0,
            r.per_conn() / tw.per_conn(),
            r.vm_per_conn() / 1024.0,
            r.after_soak_per_conn()
                .map_or("-".to_owned(), |b| format!("{:.1} KiB", b / 1024.0))
        );
    }
    let mut failures = Vec::new();
    let sent = (plan.conns * plan.rounds * plan.messages) as u64;
    let first = tw.samples.first().map_or(0, |s| s.0);
    let last = tw.samples.last().map_or(0, |s| s.0);
    let max = tw.samples.iter().map(|s| s.0).max().unwrap_or(0);
    let min_open = tw.samples.iter().map(|s| s.1).min().unwrap_or(tw.conns);
    let _ = writeln!(
        md,
        "\nSoak (tickwire): {} rounds, {} echoes checked of {sent} sent, {} connections \
         open at the end of every round (least: {min_open}); resident set after round 1 \
         {:.1} MiB, after the last {:.1} MiB, highest {:.1} MiB (idle before the soak \
         {:.1} MiB); open {:?}, soak {:?}.",
        plan.rounds,
        tw.echoes,
        tw.conns,
        first as f64 / 1048576.0,
        last as f64 / 1048576.0,
        max as f64 / 1048576.0,
        tw.rss_idle as f64 / 1048576.0,
        tw.open_time,
        tw.soak_time
    );
    if tw.conns != plan.conns || tt.conns != plan.conns {
        failures.push("not every connection opened".to_owned());
    }
    if tk.conns != tk_idle.conns {
        failures.push("not every tokio connection opened".to_owned());
    }
    for r in [&tw, &tk] {
        if r.per_conn() > 16384.0 || r.per_conn() >= tt.per_conn() {
            failures.push(format!(
                "{}: {:.0} B per idle connection",
                r.peer.name(),
                r.per_conn()
            ));
        }
    }
    if tw.echoes != sent {
        failures.push(format!("{} echoes of {sent}", tw.echoes));
    }
    if min_open != plan.conns {
        failures.push(format!("connections lost: {} open", min_open));
    }
    if last > first + (margin_mib << 20) {
        failures.push(format!("resident set grew {first} -> {last} B"));
    }
    print!("{md}");
    let _ = std::fs::create_dir_all(&out);
    let path = out.join("conn_memory.md");
    match std::fs::write(&path, &md) {
        Ok(()) => eprintln!("wrote {}", path.display()),
        Err(e) => eprintln!("cannot write {}: {e}", path.display()),
    }
    if failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        eprintln!("conn_memory: FAILED: {}", failures.join("; "));
        ExitCode::FAILURE
    }
}
