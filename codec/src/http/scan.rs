//! Header bytes checked eight at a time (sixteen with SSE2): the field-value
//! check that refuses header injection, the token check of header names and
//! ASCII case-insensitive comparison. Each agrees with its byte-wise
//! definition in [`syntax`](super::syntax) for every input (the tests below
//! compare them exhaustively); a word that the fast test cannot clear is
//! looked at byte by byte, so the fast tests only need to be exact for the
//! common alphabet.

/// `0x01` in every byte of a word.
pub(super) const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
/// `0x80` in every byte of a word.
pub(super) const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);

/// The 8 bytes of `s` from `at` as a word.
#[inline(always)]
fn word(s: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&s[at..at + 8]);
    u64::from_ne_bytes(w)
}

/// `0x80` in each byte of `w` within `lo..=hi`, `0` elsewhere (exact per
/// byte: the sums stay below `0x100` in every lane, so nothing carries).
#[inline(always)]
pub(super) const fn in_range(w: u64, lo: u8, hi: u8) -> u64 {
    let l = w & (0x7f * ONES);
    let ge = l.wrapping_add((0x80 - lo as u64) * ONES);
    let gt = l.wrapping_add((0x80 - hi as u64 - 1) * ONES);
    ge & !gt & !w & HIGHS
}

/// `0x20` in each byte of `w` that is an ASCII letter, `0` elsewhere.
#[inline(always)]
const fn letter_bits(w: u64) -> u64 {
    // Folding to lower case keeps the high bit, so bytes >= 0x80 stay out.
    in_range(w | (0x20 * ONES), b'a', b'z') >> 2
}

/// `0x80` in each byte of `w` that is an ASCII letter, digit or `-` (the
/// usual alphabet of header names), `0` elsewhere (exact per byte).
#[inline(always)]
pub(super) const fn name_bits(w: u64) -> u64 {
    (letter_bits(w) << 2) | in_range(w, b'0', b'9') | in_range(w, b'-', b'-')
}

/// Whether every byte of `w` is an ASCII letter, digit or `-`.
#[inline(always)]
const fn word_is_name(w: u64) -> bool {
    name_bits(w) == HIGHS
}

/// `0x80` in the lowest-order byte of `w` that is below 0x20 or is 0x7f, and
/// maybe in higher-order ones (the borrows only run upwards); `0` when there
/// is none. Exact for the word as a whole and for its first such byte in a
/// little-endian load.
#[inline(always)]
pub(super) const fn control_bits(w: u64) -> u64 {
    let below = w.wrapping_sub(0x20 * ONES) & !w;
    let d = w ^ (0x7f * ONES);
    let del = d.wrapping_sub(ONES) & !d;
    (below | del) & HIGHS
}

/// Whether some byte of `w` is below 0x20 or is 0x7f.
#[inline(always)]
const fn word_has_control(w: u64) -> bool {
    control_bits(w) != 0
}

/// Whether all of `s` satisfies `ok`, eight bytes at a time: `fast` clears a
/// word at once, and a word it cannot clear is checked byte by byte. Inputs
/// of 8 bytes or more end on a word that overlaps the one before.
#[inline(always)]
fn all_by_words(s: &[u8], fast: impl Fn(u64) -> bool, ok: impl Fn(u8) -> bool) -> bool {
    let n = s.len();
    if n < 8 {
        return s.iter().all(|&c| ok(c));
    }
    let check = |at: usize| fast(word(s, at)) || s[at..at + 8].iter().all(|&c| ok(c));
    let mut i = 0;
    while i + 8 < n {
        if !check(i) {
            return false;
        }
        i += 8;
    }
    check(n - 8)
}

/// Whether every byte of `v` satisfies `ok` (a field-value byte: HTAB, SP,
/// VCHAR, obs-text).
#[inline]
pub(crate) fn field_value(v: &[u8], ok: impl Fn(u8) -> bool + Copy) -> bool {
    #[cfg(all(
        any(target_arch = "x86", target_arch = "x86_64"),
        target_feature = "sse2",
        not(miri)
    ))]
    if v.len() >= 16 {
        // SAFETY: SSE2 is enabled for the whole target (cfg above).
        return unsafe { sse2::field_value(v) };
    }
    all_by_words(v, |w| !word_has_control(w), ok)
}

/// Whether every byte of `s` satisfies `ok` (a `tchar`).
#[inline]
pub(crate) fn token(s: &[u8], ok: impl Fn(u8) -> bool + Copy) -> bool {
    #[cfg(all(
        any(target_arch = "x86", target_arch = "x86_64"),
        target_feature = "sse2",
        not(miri)
    ))]
    if s.len() >= 8 {
        // SAFETY: SSE2 is enabled for the whole target (cfg above).
        return unsafe { sse2::is_name(s) } || s.iter().all(|&c| ok(c));
    }
    all_by_words(s, word_is_name, ok)
}

/// Whether every byte of `p` may be sent in a request target (visible
/// ASCII other than `#`), and whether one of them is `?` (a query).
#[inline]
pub(crate) fn path(p: &[u8]) -> (bool, bool) {
    #[cfg(all(
        any(target_arch = "x86", target_arch = "x86_64"),
        target_feature = "sse2",
        not(miri)
    ))]
    if p.len() >= 8 {
        // SAFETY: SSE2 is enabled for the whole target (cfg above).
        return unsafe { sse2::path(p) };
    }
    let ok = p.iter().all(|&c| c > b' ' && c < 0x7f && c != b'#');
    (ok, p.contains(&b'?'))
}

/// Whether words `x` and `y` are equal ignoring ASCII case: bytes equal, or
/// differing in bit 5 only where `y` holds a letter (then `x` holds the
/// same letter in the other case). When `y` is a constant, so is its letter
/// mask: a word costs a load, a xor, an and and a test.
#[inline(always)]
const fn word_eq_ignore_case(x: u64, y: u64) -> bool {
    (x ^ y) & !letter_bits(y) == 0
}

/// ASCII case-insensitive equality of two slices of the same length; pass
/// a constant (a header name the codec looks for) as `b`.
#[inline]
pub(crate) fn eq_ignore_case(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n < 8 {
        return a.iter().zip(b).all(|(x, y)| x.eq_ignore_ascii_case(y));
    }
    let mut i = 0;
    while i + 8 < n {
        if !word_eq_ignore_case(word(a, i), word(b, i)) {
            return false;
        }
        i += 8;
    }
    word_eq_ignore_case(word(a, n - 8), word(b, n - 8))
}

#[cfg(all(
    any(target_arch = "x86", target_arch = "x86_64"),
    target_feature = "sse2",
    not(miri)
))]
mod sse2 {
    #[cfg(target_arch = "x86")]
    use core::arch::x86::{
        __m128i, _mm_andnot_si128, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_max_epu8, _mm_min_epu8,
        _mm_movemask_epi8, _mm_or_si128, _mm_set_epi64x, _mm_set1_epi8, _mm_sub_epi8,
    };
    #[cfg(target_arch = "x86_64")]
    use core::arch::x86_64::{
        __m128i, _mm_andnot_si128, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_max_epu8, _mm_min_epu8,
        _mm_movemask_epi8, _mm_or_si128, _mm_set_epi64x, _mm_set1_epi8, _mm_sub_epi8,
    };

    /// Whether every byte of `s` (8 bytes or more) is an ASCII letter, digit
    /// or `-`, 16 bytes at a time: two overlapping words for fewer than 16,
    /// else blocks, the last overlapping the one before.
    #[target_feature(enable = "sse2")]
    #[inline]
    pub(super) fn is_name(s: &[u8]) -> bool {
        let n = s.len();
        debug_assert!(n >= 8);
        let out = |x: __m128i| {
            // Folding to lower case maps exactly the letters into a..=z;
            // unsigned `a <= b` is `min(a, b) == a`.
            let le = |a: __m128i, b: i8| _mm_cmpeq_epi8(_mm_min_epu8(a, _mm_set1_epi8(b)), a);
            let lower = _mm_or_si128(x, _mm_set1_epi8(0x20));
            let letter = le(_mm_sub_epi8(lower, _mm_set1_epi8(b'a' as i8)), 25);
            let digit = le(_mm_sub_epi8(x, _mm_set1_epi8(b'0' as i8)), 9);
            let dash = _mm_cmpeq_epi8(x, _mm_set1_epi8(b'-' as i8));
            _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(letter, digit), dash)) != 0xffff
        };
        if n < 16 {
            let x = _mm_set_epi64x(super::word(s, n - 8) as i64, super::word(s, 0) as i64);
            return !out(x);
        }
        all_blocks(s, |x| !out(x))
    }

    /// [`path`](super::path) for 8 bytes or more: two overlapping words
    /// for fewer than 16, else blocks, the last overlapping the one before.
    #[target_feature(enable = "sse2")]
    #[inline]
    pub(super) fn path(p: &[u8]) -> (bool, bool) {
        let n = p.len();
        debug_assert!(n >= 8);
        // Bytes out of the target alphabet, and `?`.
        let classes = |x: __m128i| {
            let eq = |b: u8| _mm_cmpeq_epi8(x, _mm_set1_epi8(b as i8));
            // Unsigned `x <= 0x20` is `min(x, 0x20) == x`, `x >= 0x7f` is
            // `max(x, 0x7f) == x`.
            let low = _mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8(0x20)), x);
            let high = _mm_cmpeq_epi8(_mm_max_epu8(x, _mm_set1_epi8(0x7f)), x);
            let bad = _mm_or_si128(_mm_or_si128(low, high), eq(b'#'));
            (_mm_movemask_epi8(bad), _mm_movemask_epi8(eq(b'?')))
        };
        if n < 16 {
            let x = _mm_set_epi64x(super::word(p, n - 8) as i64, super::word(p, 0) as i64);
            let (bad, query) = classes(x);
            return (bad == 0, query != 0);
        }
        let ptr = p.as_ptr();
        // SAFETY: callers pass at + 16 <= n, so the 16 bytes are inside `p`.
        let block = |at: usize| unsafe { _mm_loadu_si128(ptr.add(at).cast::<__m128i>()) };
        let mut query = 0;
        let mut i = 0;
        while i + 16 < n {
            let (bad, q) = classes(block(i));
            if bad != 0 {
                return (false, false);
            }
            query |= q;
            i += 16;
        }
        let (bad, q) = classes(block(n - 16));
        (bad == 0, (query | q) != 0)
    }

    /// The field-value check, 16 bytes at a time, exact per byte; `v` has
    /// at least 16 bytes and ends on a block that overlaps the one before.
    #[target_feature(enable = "sse2")]
    #[inline]
    pub(super) fn field_value(v: &[u8]) -> bool {
        debug_assert!(v.len() >= 16);
        all_blocks(v, |x| {
            // Unsigned x <= 0x1f exactly when min(x, 0x1f) == x.
            let ctl = _mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8(0x1f)), x);
            let tab = _mm_cmpeq_epi8(x, _mm_set1_epi8(b'\t' as i8));
            let del = _mm_cmpeq_epi8(x, _mm_set1_epi8(0x7f));
            _mm_movemask_epi8(_mm_or_si128(_mm_andnot_si128(tab, ctl), del)) == 0
        })
    }

    /// Whether `ok` holds for every 16-byte block of `s` (16 bytes or more),
    /// the last block overlapping the one before: the block-wise twin of
    /// [`all_by_words`](super::all_by_words).
    #[target_feature(enable = "sse2")]
    #[inline]
    fn all_blocks(s: &[u8], ok: impl Fn(__m128i) -> bool) -> bool {
        let n = s.len();
        debug_assert!(n >= 16);
        let p = s.as_ptr();
        // SAFETY: every `at` below has at + 16 <= n, so the 16 bytes are inside `s`.
        let block = |at: usize| unsafe { _mm_loadu_si128(p.add(at).cast::<__m128i>()) };
        let mut i = 0;
        while i + 16 < n {
            if !ok(block(i)) {
                return false;
            }
            i += 16;
        }
        ok(block(n - 16))
    }
}

#[cfg(test)]
mod tests {
    use super::super::syntax::{is_tchar, is_value_byte};
    use super::*;

    /// Byte values to probe with: all of them, or under Miri (which
    /// interprets every step) one of each class the scans tell apart.
    fn bytes() -> std::vec::Vec<u8> {
        if cfg!(miri) {
            std::vec![
                0, 0x09, 0x0d, 0x20, 0x2d, 0x2f, 0x41, 0x5f, 0x7a, 0x7f, 0xff
            ]
        } else {
            (0..=255).collect()
        }
    }

    /// Every byte value at every position of every length up to three
    /// words (and two SSE2 blocks), with obs-text beside the probe.
    fn probes(mut f: impl FnMut(&[u8])) {
        let lens: std::vec::Vec<usize> = if cfg!(miri) {
            std::vec![1, 8, 9, 17]
        } else {
            (1..=40).collect()
        };
        let bytes = bytes();
        for len in lens {
            for pos in 0..len {
                for &c in &bytes {
                    let mut v = [b'a'; 40];
                    v[pos] = c;
                    if pos > 0 {
                        v[pos - 1] = 0xff;
                    }
                    f(&v[..len]);
                    // And in the usual alphabet around it.
                    let mut v = [b'A'; 40];
                    v[pos] = c;
                    f(&v[..len]);
                }
            }
        }
    }

    #[test]
    fn field_value_matches_bytewise() {
        probes(|v| {
            assert_eq!(
                field_value(v, is_value_byte),
                v.iter().all(|&c| is_value_byte(c)),
                "{v:x?}"
            );
            assert_eq!(
                all_by_words(v, |w| !word_has_control(w), is_value_byte),
                v.iter().all(|&c| is_value_byte(c)),
                "{v:x?}"
            );
        });
    }

    #[test]
    fn path_matches_bytewise() {
        let ok = |c: u8| c > b' ' && c < 0x7f && c != b'#';
        probes(|v| {
            let (valid, query) = path(v);
            assert_eq!(valid, v.iter().all(|&c| ok(c)), "{v:x?}");
            if valid {
                assert_eq!(query, v.contains(&b'?'), "{v:x?}");
            }
        });
        for len in 1..=40 {
            for at in 0..len {
                let mut v = [b'/'; 40];
                v[at] = b'?';
                assert_eq!(path(&v[..len]), (true, true), "{len} {at}");
            }
        }
    }

    #[test]
    fn token_matches_bytewise() {
        probes(|v| assert_eq!(token(v, is_tchar), v.iter().all(|&c| is_tchar(c)), "{v:x?}"));
        assert!(token(b"X-MBX-APIKEY", is_tchar));
        assert!(token(b"x_weird!name~", is_tchar));
        assert!(!token(b"Content-Type:", is_tchar));
    }

    /// The SSE2 name test alone (no byte-wise second look) is exact for
    /// letters, digits and `-` at every length from 8.
    #[cfg(all(
        any(target_arch = "x86", target_arch = "x86_64"),
        target_feature = "sse2",
        not(miri)
    ))]
    #[test]
    fn sse2_name_alphabet_is_exact() {
        let name = |c: u8| c.is_ascii_alphanumeric() || c == b'-';
        probes(|v| {
            if v.len() >= 8 {
                // SAFETY: SSE2 is enabled for the whole target (cfg above).
                let got = unsafe { sse2::is_name(v) };
                assert_eq!(got, v.iter().all(|&c| name(c)), "{v:x?}");
            }
        });
    }

    #[test]
    fn word_name_alphabet_is_exact() {
        for c in bytes() {
            let w = u64::from_ne_bytes([b'a', b'Z', b'0', b'-', c, b'9', b'z', b'A']);
            let want = c.is_ascii_alphanumeric() || c == b'-';
            assert_eq!(word_is_name(w), want, "{c:#x}");
        }
    }

    /// Every pair of byte values, at every position, with lengths that end
    /// on and between word boundaries.
    #[test]
    fn eq_ignore_case_matches_std() {
        let bytes = bytes();
        let lens: &[usize] = if cfg!(miri) {
            &[7, 9, 17]
        } else {
            &[1, 7, 8, 9, 10, 14, 16, 17, 23]
        };
        for &len in lens {
            for pos in [0, len / 2, len - 1] {
                for &x in &bytes {
                    for &y in &bytes {
                        let mut a = [b'k'; 23];
                        let mut b = [b'K'; 23];
                        a[pos] = x;
                        b[pos] = y;
                        let (a, b) = (&a[..len], &b[..len]);
                        assert_eq!(
                            eq_ignore_case(a, b),
                            a.eq_ignore_ascii_case(b),
                            "len {len} pos {pos} {x:#x} {y:#x}"
                        );
                    }
                }
            }
        }
        assert!(!eq_ignore_case(b"content-length", b"content-lengt"));
    }
}
