//! The `http_response_reader` fuzz target: its body and invariants are
//! [`tickwire_fuzz::targets::http_response_reader`], where the seed replay test runs them too.
#![no_main]

libfuzzer_sys::fuzz_target!(
    |input: &[u8]| tickwire_fuzz::targets::http_response_reader::run(input)
);
