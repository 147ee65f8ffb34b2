//! Where a run of header bytes ends, sixteen bytes at a time with SSE2
//! (x86, not under Miri), eight at a time with SWAR elsewhere: the response
//! head parser ([`response_head`](super::response_head)) skips header names
//! and field values with these.
//!
//! Each returns the length of the longest prefix of `s` in its class, exact
//! per byte (the tests compare them with byte-wise loops for every byte value
//! at every position).

use super::syntax::is_value_byte;

/// A byte of the usual header-name alphabet: ASCII letter, digit or `-`.
#[inline(always)]
pub(crate) const fn is_name_fast(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'-'
}

/// Length of the prefix of `s` made of field-value bytes ([`is_value_byte`]).
#[inline]
pub(crate) fn value_run(s: &[u8]) -> usize {
    #[cfg(all(
        any(target_arch = "x86", target_arch = "x86_64"),
        target_feature = "sse2",
        not(miri)
    ))]
    {
        // SAFETY: SSE2 is enabled for the whole target (cfg above).
        unsafe { sse2::run::<false>(s) }
    }
    #[cfg(not(all(
        any(target_arch = "x86", target_arch = "x86_64"),
        target_feature = "sse2",
        not(miri)
    )))]
    {
        swar::run(s, swar::bad_value, is_value_byte)
    }
}

/// Length of the prefix of `s` made of letters, digits and `-` ([`is_name_fast`]).
#[inline]
pub(crate) fn name_run(s: &[u8]) -> usize {
    #[cfg(all(
        any(target_arch = "x86", target_arch = "x86_64"),
        target_feature = "sse2",
        not(miri)
    ))]
    {
        // SAFETY: SSE2 is enabled for the whole target (cfg above).
        unsafe { sse2::run::<true>(s) }
    }
    #[cfg(not(all(
        any(target_arch = "x86", target_arch = "x86_64"),
        target_feature = "sse2",
        not(miri)
    )))]
    {
        swar::run(s, swar::bad_name, is_name_fast)
    }
}

/// Eight bytes at a time in a `u64` (little-endian order, so the lowest
/// flagged byte is the first in memory).
#[cfg_attr(
    all(
        any(target_arch = "x86", target_arch = "x86_64"),
        target_feature = "sse2",
        not(miri)
    ),
    allow(dead_code)
)]
mod swar {
    use crate::http::scan::{HIGHS, control_bits, name_bits};

    /// `0x80` in each byte of `w` that is not a letter, digit or `-` (exact per byte).
    #[inline(always)]
    pub(super) const fn bad_name(w: u64) -> u64 {
        !name_bits(w) & HIGHS
    }

    /// `0x80` in the first byte of `w` that is not a field-value byte, and
    /// maybe in later ones; 0 when all are. HTAB is flagged: the caller looks
    /// at a flagged byte itself.
    #[inline(always)]
    pub(super) const fn bad_value(w: u64) -> u64 {
        control_bits(w)
    }

    /// The prefix of `s` in the class: `bad` finds a word's first byte
    /// that may be out of it, `ok` decides that byte and the tail.
    #[inline(always)]
    pub(super) fn run(s: &[u8], bad: impl Fn(u64) -> u64, ok: impl Fn(u8) -> bool) -> usize {
        let mut i = 0;
        while let Some(chunk) = s.get(i..i + 8) {
            let mut w = [0u8; 8];
            w.copy_from_slice(chunk);
            let flags = bad(u64::from_le_bytes(w));
            if flags == 0 {
                i += 8;
                continue;
            }
            let at = i + (flags.trailing_zeros() / 8) as usize;
            if !ok(s[at]) {
                return at;
            }
            // A byte in the class the word test flags (HTAB in a value).
            i = at + 1;
        }
        while i < s.len() && ok(s[i]) {
            i += 1;
        }
        i
    }
}

#[cfg(all(
    any(target_arch = "x86", target_arch = "x86_64"),
    target_feature = "sse2",
    not(miri)
))]
mod sse2 {
    #[cfg(target_arch = "x86")]
    use core::arch::x86::{
        __m128i, _mm_andnot_si128, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8,
        _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8, _mm_sub_epi8,
    };
    #[cfg(target_arch = "x86_64")]
    use core::arch::x86_64::{
        __m128i, _mm_andnot_si128, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8,
        _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8, _mm_sub_epi8,
    };

    use super::{is_name_fast, is_value_byte};

    /// Bit i set when byte i of `x` is out of the class (exact per byte).
    #[target_feature(enable = "sse2")]
    #[inline]
    fn out_of_class<const NAME: bool>(x: __m128i) -> u32 {
        // Unsigned `a <= b` is `min(a, b) == a`.
        let le = |a: __m128i, b: i8| _mm_cmpeq_epi8(_mm_min_epu8(a, _mm_set1_epi8(b)), a);
        let eq = |a: __m128i, b: u8| _mm_cmpeq_epi8(a, _mm_set1_epi8(b as i8));
        if NAME {
            // Folding to lower case maps exactly the letters into a..=z.
            let lower = _mm_or_si128(x, _mm_set1_epi8(0x20));
            let letter = le(_mm_sub_epi8(lower, _mm_set1_epi8(b'a' as i8)), 25);
            let digit = le(_mm_sub_epi8(x, _mm_set1_epi8(b'0' as i8)), 9);
            let ok = _mm_or_si128(_mm_or_si128(letter, digit), eq(x, b'-'));
            !(_mm_movemask_epi8(ok) as u32) & 0xffff
        } else {
            let ctl = _mm_andnot_si128(eq(x, b'\t'), le(x, 0x1f));
            _mm_movemask_epi8(_mm_or_si128(ctl, eq(x, 0x7f))) as u32
        }
    }

    /// The prefix of `s` in the class (names when `NAME`, else values).
    #[target_feature(enable = "sse2")]
    #[inline]
    pub(super) fn run<const NAME: bool>(s: &[u8]) -> usize {
        let n = s.len();
        let p = s.as_ptr();
        let mut i = 0;
        while i + 16 <= n {
            // SAFETY: i + 16 <= n, so the 16 bytes are inside `s`.
            let x = unsafe { _mm_loadu_si128(p.add(i).cast::<__m128i>()) };
            let bad = out_of_class::<NAME>(x);
            if bad != 0 {
                return i + bad.trailing_zeros() as usize;
            }
            i += 16;
        }
        let ok = if NAME { is_name_fast } else { is_value_byte };
        while i < n && ok(s[i]) {
            i += 1;
        }
        i
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Byte values to probe with: all, or under Miri one of each class.
    fn bytes() -> std::vec::Vec<u8> {
        if cfg!(miri) {
            std::vec![
                0, 0x09, 0x0a, 0x0d, 0x1f, 0x20, 0x2d, 0x2f, 0x30, 0x39, 0x3a, 0x40, 0x41, 0x5a,
                0x5b, 0x60, 0x61, 0x7a, 0x7b, 0x7f, 0x80, 0xc1, 0xff
            ]
        } else {
            (0..=255).collect()
        }
    }

    fn check(run: fn(&[u8]) -> usize, ok: fn(u8) -> bool, fill: u8) {
        let lens: std::vec::Vec<usize> = if cfg!(miri) {
            std::vec![0, 1, 8, 9, 17, 33]
        } else {
            (0..=40).collect()
        };
        let bytes = bytes();
        for len in lens {
            let mut v = [fill; 40];
            let v = &mut v[..len];
            assert_eq!(run(v), len);
            for pos in 0..len {
                for &c in &bytes {
                    v.fill(fill);
                    v[pos] = c;
                    let want = v.iter().position(|&b| !ok(b)).unwrap_or(len);
                    assert_eq!(run(v), want, "{v:x?}");
                    // A second odd byte after the first.
                    if pos + 1 < len {
                        v[pos + 1] = 0;
                        let want = v.iter().position(|&b| !ok(b)).unwrap_or(len);
                        assert_eq!(run(v), want, "{v:x?}");
                    }
                }
            }
        }
    }

    #[test]
    fn value_run_is_exact() {
        check(value_run, is_value_byte, b'v');
        check(value_run, is_value_byte, b'\t');
        check(value_run, is_value_byte, 0x80);
    }

    #[test]
    fn name_run_is_exact() {
        check(name_run, is_name_fast, b'N');
        check(name_run, is_name_fast, b'-');
    }

    #[test]
    fn swar_is_exact() {
        check(
            |s| swar::run(s, swar::bad_value, is_value_byte),
            is_value_byte,
            b'v',
        );
        check(
            |s| swar::run(s, swar::bad_value, is_value_byte),
            is_value_byte,
            b'\t',
        );
        check(
            |s| swar::run(s, swar::bad_name, is_name_fast),
            is_name_fast,
            b'x',
        );
    }
}
