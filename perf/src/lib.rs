//! tickwire-perf: the benchmark harness and suites.
//!
//! - [`callgrind`]: Valgrind client requests and dump parsing for `--instructions`.
//! - [`clock`]: fenced `rdtsc` timestamps (OS clock nanoseconds off x86_64).
//! - [`harness`]: batched timing into HDR histograms, warm-up, sample budget.
//! - [`machine`]: CPU model, TSC frequency, thread pinning.
//! - [`report`]: the result table on stdout, as JSON and as Markdown.
//! - [`rotation`]: turn-taking of a scenario's rows for interleaved sampling.
//! - [`plot`]: SVG latency plots (percentile curves per scenario).
//! - [`cli`]: command-line options shared by the bench binaries.
//! - [`instructions`]: `--instructions`, instructions per operation under callgrind.
//! - [`inputs`]: payloads and wire frames, built once and shared by every library.
//! - [`peers`]: in-memory streams and a poll-once executor for peer libraries.
//! - [`suites`]: the scenarios, one module per suite.

pub mod callgrind;
pub mod cli;
pub mod clock;
pub mod harness;
pub mod inputs;
pub mod instructions;
pub mod machine;
pub mod peers;
pub mod plot;
pub mod report;
pub mod rotation;
pub mod suites;
