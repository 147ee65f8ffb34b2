#!/usr/bin/env bash
# Each published crate's own targets (lib, tests, examples, benches) with each of its
# features on its own, and with none: what a user's build gets, without the feature
# unification of the workspace (where perf or conformance switch features on for
# everyone). Features are read from each crate's Cargo.toml [features] table. Every
# combination is linted with its tests, examples and benches (`cargo clippy --all-targets
# -- -D warnings`: they compile, without warnings), then its tests run: `cargo test` of
# the crate with that feature alone (library, integration tests and doctests; the codec's
# proptests with few cases). On 2026-11-28, warm, beside three other builds: tickwire
# 22-59 s a feature set (282-504 tests), the codec 9-21 s (271-331 tests).
# Used by .ci/run and `cargo xtask ci` (xtask/src/ci.rs).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

features_of() {
  # The keys of the [features] table, `default` excepted.
  sed -n '/^\[features\]/,/^\[/p' "$1" | grep -oE '^[A-Za-z0-9_-]+ *=' | tr -d ' =' | grep -vx default || true
}

run() {
  echo "\$ $*"
  "$@"
}

for entry in tickwire-codec:codec/Cargo.toml tickwire:transport/Cargo.toml; do
  crate=${entry%%:*}
  manifest=${entry#*:}
  for feature in "" $(features_of "$manifest"); do
    echo "==== $crate: --no-default-features --features '${feature}' ===="
    run cargo clippy -q -p "$crate" --all-targets --no-default-features --features "$feature" -- -D warnings
    # What each feature alone compiles and runs, not the fuzzing: few cases for the
    # proptests that take PROPTEST_CASES, and without the codec's two 4096-case HTTP
    # differentials (no feature touches the HTTP parsers; CI's `cargo test --workspace`
    # runs them, and every proptest at its full count).
    PROPTEST_CASES="${PROPTEST_CASES:-16}" \
      run cargo test -q -p "$crate" --no-default-features --features "$feature" -- \
      --skip http::tests::head_differential --skip http::tests::request_differential
  done
done
echo "each feature: all combinations build"
