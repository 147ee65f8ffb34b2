//! SIMD building blocks: CPU feature detection, payload masking and UTF-8 validation.
pub mod copy;
pub mod cpu;
pub mod mask;
pub mod mask_ascii;
pub mod utf8;

pub use mask::apply_mask;
