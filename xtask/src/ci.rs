//! `cargo xtask ci`: the checks of .ci/run, in the same order, without its tool installs
//! (rustup targets/components, apt packages, the Autobahn runner: see .ci/run for those).
//! Keep the two lists in step.

use std::process::{Command, ExitCode};
use std::time::Instant;

use crate::workspace::Workspace;

struct Step {
    name: &'static str,
    program: &'static str,
    args: &'static [&'static str],
    env: &'static [(&'static str, &'static str)],
}

const fn cargo(name: &'static str, args: &'static [&'static str]) -> Step {
    Step {
        name,
        program: "cargo",
        args,
        env: &[],
    }
}

/// Unless the caller set them: strict provenance, isolated host calls (proptest asks for the
/// cwd to persist failures) return an error instead of aborting, few proptest cases (Miri
/// hides the host environment, so PROPTEST_CASES is forwarded explicitly).
const MIRI_ENV: &[(&str, &str)] = &[
    (
        "MIRIFLAGS",
        "-Zmiri-strict-provenance -Zmiri-isolation-error=warn-nobacktrace \
         -Zmiri-env-forward=PROPTEST_CASES",
    ),
    ("PROPTEST_CASES", "8"),
];

/// [`MIRI_ENV`] plus AVX2 and SSE4.2 compiled in, so that the codec's proof tokens exist under
/// Miri and its AVX2 paths run there.
const MIRI_AVX2_ENV: &[(&str, &str)] = &[
    (
        "MIRIFLAGS",
        "-Zmiri-strict-provenance -Zmiri-isolation-error=warn-nobacktrace \
         -Zmiri-env-forward=PROPTEST_CASES",
    ),
    ("PROPTEST_CASES", "8"),
    ("RUSTFLAGS", "-C target-feature=+avx2,+sse4.2"),
];

/// The user-build crate's own target directory, inside the workspace's (ignored by git).
const USER_BUILD_ENV: &[(&str, &str)] = &[("CARGO_TARGET_DIR", "target/user-build")];

const STEPS: &[Step] = &[
    cargo("fmt", &["fmt", "--all", "--", "--check"]),
    cargo(
        "clippy",
        &[
            "clippy",
            "--workspace",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ],
    ),
    cargo("test", &["test", "--workspace"]),
    // Runs this very binary: every row README.md's performance table names is still a row
    // of the bench (`bench --list` in a debug build with the DPDK rows; nothing is measured).
    Step {
        name: "bench rows named in README",
        program: "<self>",
        args: &["bench", "--check-readme", "--dpdk"],
        env: &[],
    },
    // Runs this very binary: every entry point has a code example in its rustdoc.
    Step {
        name: "doc examples",
        program: "<self>",
        args: &["doc-examples"],
        env: &[],
    },
    // DPDK (tickwire-bypass feature `dpdk`, off by default; needs Debian's dpdk-dev): the
    // device and the bench's DPDK rows linted, bypass/tests/dpdk.rs, the offload unit test,
    // the rows' own check.
    cargo(
        "clippy dpdk",
        &[
            "clippy",
            "-p",
            "tickwire-bypass",
            "-p",
            "tickwire-perf",
            "--all-targets",
            "--features",
            "tickwire-bypass/dpdk,tickwire-perf/dpdk",
            "--",
            "-D",
            "warnings",
        ],
    ),
    cargo(
        "test dpdk",
        &[
            "test",
            "-p",
            "tickwire-bypass",
            "--features",
            "dpdk",
            "--lib",
            "--test",
            "dpdk",
            "--",
            "dpdk",
        ],
    ),
    cargo(
        "test dpdk bench rows",
        &[
            "test",
            "-p",
            "tickwire-perf",
            "--features",
            "dpdk",
            "--lib",
            "bypass_dpdk",
        ],
    ),
    // Each published crate with no feature, then each feature alone (clippy of every
    // target, then its tests: library, integration tests, doctests): what feature unification hides.
    Step {
        name: "each feature",
        program: "bash",
        args: &["ci/each-feature.sh"],
        env: &[],
    },
    cargo(
        "no_std thumbv7em",
        &[
            "build",
            "-p",
            "tickwire-codec",
            "--target",
            "thumbv7em-none-eabihf",
        ],
    ),
    cargo(
        "no_std thumbv7em +alloc",
        &[
            "build",
            "-p",
            "tickwire-codec",
            "--target",
            "thumbv7em-none-eabihf",
            "--features",
            "alloc",
        ],
    ),
    // permessage-deflate without std (zlib-rs through the codec's alloc hooks). Not on
    // x86_64-unknown-none: LLVM cannot compile zlib-rs's x86 SIMD kernels for that
    // soft-float target ("Do not know how to split the result of this operator").
    cargo(
        "no_std thumbv7em +deflate",
        &[
            "build",
            "-p",
            "tickwire-codec",
            "--target",
            "thumbv7em-none-eabihf",
            "--features",
            "deflate",
        ],
    ),
    cargo(
        "no_std x86_64-none",
        &[
            "build",
            "-p",
            "tickwire-codec",
            "--target",
            "x86_64-unknown-none",
        ],
    ),
    cargo(
        "no_std x86_64-none +alloc",
        &[
            "build",
            "-p",
            "tickwire-codec",
            "--target",
            "x86_64-unknown-none",
            "--features",
            "alloc",
        ],
    ),
    cargo(
        "no_std bypass loop",
        &[
            "build",
            "-p",
            "tickwire-bypass",
            "--lib",
            "--target",
            "x86_64-unknown-none",
            "--no-default-features",
        ],
    ),
    cargo(
        "no_std bypass loop +tls",
        &[
            "build",
            "-p",
            "tickwire-bypass",
            "--lib",
            "--target",
            "x86_64-unknown-none",
            "--no-default-features",
            "--features",
            "tls",
        ],
    ),
    cargo(
        "cargo package bypass",
        &[
            "package",
            "-p",
            "tickwire-codec",
            "-p",
            "tickwire-bypass",
            "--allow-dirty",
        ],
    ),
    // The TLS codec (rustls without std or a provider) on both bare-metal targets.
    cargo(
        "no_std thumbv7em +tls",
        &[
            "build",
            "-p",
            "tickwire-codec",
            "--target",
            "thumbv7em-none-eabihf",
            "--features",
            "tls",
        ],
    ),
    cargo(
        "no_std x86_64-none +tls",
        &[
            "build",
            "-p",
            "tickwire-codec",
            "--target",
            "x86_64-unknown-none",
            "--features",
            "tls",
        ],
    ),
    // A crate outside the workspace, built as a user builds it: fails if a SIMD dispatcher
    // resolves to a narrower path than this CPU runs (see ci/user-build/src/main.rs).
    Step {
        name: "user build",
        program: "cargo",
        args: &[
            "run",
            "--release",
            "--locked",
            "--manifest-path",
            "ci/user-build/Cargo.toml",
        ],
        env: USER_BUILD_ENV,
    },
    Step {
        name: "user build (reference)",
        program: "cargo",
        args: &[
            "run",
            "--release",
            "--locked",
            "--manifest-path",
            "ci/user-build/Cargo.toml",
            "--features",
            "reference",
        ],
        env: USER_BUILD_ENV,
    },
    Step {
        name: "miri",
        program: "cargo",
        args: &["+nightly", "miri", "test", "-p", "tickwire-codec", "--lib"],
        env: MIRI_ENV,
    },
    // The simd and HTTP block modules' tests again, with AVX2 and SSE4.2 compiled in.
    Step {
        name: "miri avx2",
        program: "cargo",
        args: &[
            "+nightly",
            "miri",
            "test",
            "-p",
            "tickwire-codec",
            "--lib",
            "--target-dir",
            "target/miri-avx2",
            "--",
            "simd::",
            "http::head_blocks",
            "http::tests::head_differential",
            "http::tests::request_differential",
        ],
        env: MIRI_AVX2_ENV,
    },
    // Every committed seed through its target's invariants (fuzz/ is outside the workspace).
    Step {
        name: "fuzz seeds",
        program: "cargo",
        args: &["test", "--manifest-path", "fuzz/Cargo.toml", "--lib"],
        env: &[("CARGO_TARGET_DIR", "target")],
    },
    // The fuzz crate's own lints (it is outside the workspace, so the workspace's clippy
    // step does not see it).
    Step {
        name: "fuzz clippy",
        program: "cargo",
        args: &[
            "clippy",
            "--manifest-path",
            "fuzz/Cargo.toml",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ],
        env: &[("CARGO_TARGET_DIR", "target")],
    },
    // Runs this very binary: every cargo-fuzz target for 10 s.
    Step {
        name: "fuzz",
        program: "<self>",
        args: &["fuzz", "--time", "10"],
        env: &[],
    },
    // Runs this very binary; guarded below until the transport's example exists.
    Step {
        name: "autobahn",
        program: "<self>",
        args: &["autobahn", "--deflate", "--timeout", "1200"],
        env: &[],
    },
];

const AUTOBAHN_CLIENT_EXAMPLE: &str = "transport/examples/autobahn_client.rs";

pub fn main(args: &[String]) -> Result<ExitCode, String> {
    if let Some(arg) = args.first() {
        return Err(format!("ci takes no arguments (got {arg:?})"));
    }
    let ws = Workspace::locate()?;
    let started = Instant::now();
    let mut done: Vec<(&str, String)> = Vec::new();
    let mut failure = None;
    for step in STEPS {
        println!("\n==== ci: {} ====", step.name);
        if step.name == "autobahn" && !ws.root.join(AUTOBAHN_CLIENT_EXAMPLE).is_file() {
            println!("skipped: {AUTOBAHN_CLIENT_EXAMPLE} does not exist yet");
            done.push((step.name, "skipped".into()));
            continue;
        }
        let mut cmd = if step.program == "<self>" {
            Command::new(
                std::env::current_exe().map_err(|e| format!("cannot find own binary: {e}"))?,
            )
        } else {
            // The rustup proxy from PATH (not $CARGO), so that `+nightly` works.
            Command::new(step.program)
        };
        cmd.args(step.args).current_dir(&ws.root);
        for (key, value) in step.env {
            if std::env::var_os(key).is_none() {
                cmd.env(key, value);
            }
        }
        println!("$ {} {}", step.program, step.args.join(" "));
        let t = Instant::now();
        let status = cmd
            .status()
            .map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
        let secs = t.elapsed().as_secs();
        if status.success() {
            done.push((step.name, format!("ok ({secs} s)")));
        } else {
            done.push((step.name, format!("FAILED ({status}, {secs} s)")));
            failure = Some(step.name);
            break;
        }
    }
    println!("\n==== ci: summary ====");
    for (name, result) in &done {
        println!("  {name:<26} {result}");
    }
    for step in &STEPS[done.len()..] {
        println!("  {:<26} not run", step.name);
    }
    println!("  total {} s", started.elapsed().as_secs());
    match failure {
        None => Ok(ExitCode::SUCCESS),
        Some(name) => Err(format!("ci: step `{name}` failed")),
    }
}
