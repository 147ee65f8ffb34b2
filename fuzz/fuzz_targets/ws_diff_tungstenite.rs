//! The `ws_diff_tungstenite` fuzz target: its body and invariants are
//! [`tickwire_fuzz::targets::ws_diff_tungstenite`], where the seed replay test runs them too.
#![no_main]

libfuzzer_sys::fuzz_target!(|input: &[u8]| tickwire_fuzz::targets::ws_diff_tungstenite::run(input));
