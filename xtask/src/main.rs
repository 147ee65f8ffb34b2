//! `cargo xtask`: project automation for tickwire (Autobahn conformance runs, benchmarks, fuzzing,
//! CI).
//!
//! Invoked through the alias in `.cargo/config.toml`. Arguments are parsed by hand to keep
//! the dependency list short; every subcommand returns the exit code the process ends with.

mod autobahn;
mod bench;
mod ci;
mod doc_examples;
mod fuzz;
mod proc;
mod workspace;

use std::process::ExitCode;

const USAGE: &str = "\
usage: cargo xtask <command> [options]

commands:
  autobahn [--client|--server] [--podman] [--cases PATTERNS] [--tokio] [--deflate] [--timeout SECS]
        Run the Autobahn|Testsuite 0.8.2 against tickwire's WebSocket client (fuzzingserver
        on 127.0.0.1:9001 + example autobahn_client) and/or server (example echo_server on
        127.0.0.1:9002 + fuzzingclient). Both roles by default. Prints a summary per role and
        exits non-zero on any FAILED case, a missing report or missing cases.
          --client, --server  run only that role
          --podman            use the crossbario/autobahn-testsuite image with podman instead
                              of the native runner (conformance/autobahn/setup.sh, installed
                              into <target>/autobahn-py2 on first use)
          --cases PATTERNS    comma-separated Autobahn case patterns, e.g. \"1.*,5.*,9.1.1\"
          --tokio             build the examples with feature `tokio` and pass them --tokio
          --deflate           build the examples with feature `deflate` (permessage-deflate
                              on); then an UNIMPLEMENTED case (12.*, 13.*) fails the run
          --timeout SECS      limit for the test run of each role (default 600)
  bench [--full] [--filter NAME] [--cores A,B] [--instructions] [--readme] [--dpdk] [ARGS...]
        cargo run --release -p tickwire-perf --bin bench -- ARGS... (see perf/README.md):
        quick run by default, a table with ratios against each peer, Markdown, JSON and SVG
        plots under target/bench/. --instructions: instructions per op under callgrind.
        --readme: after the run, rewrite README.md's block between the bench markers
        (timed table plus the instruction counts of the same rows, and the tail suite's
        verdict when the run had it). --check-readme (alone or with --dpdk): fail if
        README.md's table names a row the bench no longer has (`--list` of a debug build;
        nothing is measured; a CI step). --dpdk: build the bench with perf's `dpdk` feature
        (needs DPDK 22.11, pkg-config libdpdk) so that its DPDK rows run and are listed.
  soak [--conns N] [--rounds R] [--messages M] [--margin-mib X]
        cargo run --release -p tickwire-perf --bin conn_memory -- ARGS...: resident memory
        per idle connection (10,000 on one server poll loop, tickwire beside
        tokio-tungstenite), then the soak (default 100 rounds: every connection sends and
        reads echoes, each checked; memory sampled per round). target/bench/conn_memory.md.
  ci
        The steps of .ci/run (without its tool installs): fmt check, clippy, tests, no_std
        builds, miri, fuzz (20 s per target), Autobahn (both roles); stops at the first
        failure.
  doc-examples [CRATE...]
        Every entry point of the public API (constructors, builders, connect / bind /
        accept, send / recv / close, REST methods, pools, proxies, TLS trust, socket
        options) has a code example in its rustdoc: reads the rustdoc JSON of each crate
        (default tickwire and tickwire-codec; needs nightly, TICKWIRE_DOC_TOOLCHAIN picks
        another), lists public functions without one and exits non-zero if an entry
        point is among them.
  fuzz [--time SECS] [TARGET...]
        Build the cargo-fuzz targets in fuzz/ and run each (default: all) for SECS seconds
        (default 30) over fuzz/corpus/TARGET and the committed seeds in fuzz/seeds/TARGET.
        Prints per target the inputs executed and whether anything was found; exits
        non-zero on a finding. Needs nightly and cargo-fuzz (`rustup toolchain install
        nightly`, `cargo install cargo-fuzz --locked`); TICKWIRE_FUZZ_TOOLCHAIN picks
        another nightly.
  help
        This text.
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rest = args.get(1..).unwrap_or_default();
    let result = match args.first().map(String::as_str) {
        None | Some("help" | "-h" | "--help") => {
            print!("{USAGE}");
            Ok(ExitCode::SUCCESS)
        }
        Some("autobahn") => autobahn::main(rest),
        Some("bench") => bench::main(rest),
        Some("ci") => ci::main(rest),
        Some("doc-examples") => doc_examples::main(rest),
        Some("fuzz") => fuzz::main(rest),
        Some("soak") => bench::soak(rest),
        Some(other) => Err(format!("unknown command `{other}`; see `cargo xtask help`")),
    };
    match result {
        Ok(code) => code,
        Err(message) => {
            eprintln!("xtask: error: {message}");
            ExitCode::FAILURE
        }
    }
}
