//! SIMD building blocks: CPU feature detection, payload masking, copies and
//! UTF-8 validation, each dispatched at run time the same way (the proof
//! tokens of [`token`]), with or without `std`.
pub mod copy;
pub mod cpu;
pub mod mask;
pub mod mask_ascii;
pub mod token;
pub mod utf8;

pub use mask::apply_mask;

/// An implementation a dispatcher can pick.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Path {
    /// Portable code: `u64` words, `core::str::from_utf8`, byte-wise parsing.
    Scalar,
    /// 16-byte SSE2 vectors.
    Sse2,
    /// simdutf8's SSE4.2 validator.
    Sse42,
    /// 32-byte AVX2 vectors.
    Avx2,
}

/// What each dispatcher of the codec picks on this CPU (for inputs long
/// enough to take a vector path: 32 bytes for masking and copies, 64 for
/// UTF-8 text that is not all ASCII, a head of 64 bytes or more for HTTP).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ActivePaths {
    /// [`apply_mask`], [`mask::copy_masked`] and
    /// [`mask_ascii::apply_mask_ascii`] (over [`mask::SMALL`] bytes).
    pub mask: Path,
    /// [`copy::copy`].
    pub copy: Path,
    /// UTF-8 validation of text that is not all ASCII ([`utf8::is_valid`],
    /// [`utf8::validate_prefix`], [`utf8::to_str`]).
    pub utf8: Path,
    /// The HTTP request and response head parsers' block paths.
    pub http_head: Path,
}

/// What the dispatchers pick on this CPU, asked of the same selection
/// functions they call: a user's build can check that it runs the paths the
/// benchmarks measure (the CI's user-build check does).
pub fn active_paths() -> ActivePaths {
    ActivePaths {
        mask: mask::path(),
        copy: copy::path(),
        utf8: utf8::Validator::select().path(),
        http_head: crate::http::head_path(),
    }
}

#[cfg(all(test, any(target_arch = "x86", target_arch = "x86_64"), not(miri)))]
mod tests {
    use super::*;

    #[test]
    fn active_paths_follow_the_cpu() {
        let p = active_paths();
        let avx2 = std::is_x86_feature_detected!("avx2");
        let sse42 = std::is_x86_feature_detected!("sse4.2");
        let wide = if avx2 { Path::Avx2 } else { Path::Sse2 };
        assert_eq!(p.mask, wide);
        assert_eq!(p.http_head, wide);
        assert_eq!(p.copy, if avx2 { Path::Avx2 } else { Path::Scalar });
        let utf8 = match (avx2, sse42) {
            (true, _) => Path::Avx2,
            (false, true) => Path::Sse42,
            _ => Path::Scalar,
        };
        assert_eq!(p.utf8, utf8);
    }
}
