//! The `ws_handshake_server` fuzz target: its body and invariants are
//! [`tickwire_fuzz::targets::ws_handshake_server`], where the seed replay test runs them too.
#![no_main]

libfuzzer_sys::fuzz_target!(|input: &[u8]| tickwire_fuzz::targets::ws_handshake_server::run(input));
