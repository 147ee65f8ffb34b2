//! The `ws_handshake_client` fuzz target: its body and invariants are
//! [`tickwire_fuzz::targets::ws_handshake_client`], where the seed replay test runs them too.
#![no_main]

libfuzzer_sys::fuzz_target!(|input: &[u8]| tickwire_fuzz::targets::ws_handshake_client::run(input));
