//! The `tls_records` fuzz target: its body and invariants are
//! [`tickwire_fuzz::targets::tls_records`], where the seed replay test runs them too.
#![no_main]

libfuzzer_sys::fuzz_target!(|input: &[u8]| tickwire_fuzz::targets::tls_records::run(input));
