//! The `simd_mask_utf8` fuzz target: its body and invariants are
//! [`tickwire_fuzz::targets::simd_mask_utf8`], where the seed replay test runs them too.
#![no_main]

libfuzzer_sys::fuzz_target!(|input: &[u8]| tickwire_fuzz::targets::simd_mask_utf8::run(input));
