//! Tests of the HTTP codec that span several modules: whole responses and
//! requests, hostile inputs, and write-then-parse round trips.

mod differential;
mod head_differential;
mod hostile;
mod no_panic;
mod request;
mod request_differential;
mod response;
mod roundtrip;

/// Proptest settings: `cases` natively; a handful under Miri, without the
/// failure file (Miri isolates the file system).
pub(crate) fn proptest_config(cases: u32) -> proptest::test_runner::Config {
    proptest::test_runner::Config {
        cases: if cfg!(miri) { 3 } else { cases },
        failure_persistence: if cfg!(miri) {
            None
        } else {
            proptest::test_runner::Config::default().failure_persistence
        },
        ..proptest::test_runner::Config::default()
    }
}
