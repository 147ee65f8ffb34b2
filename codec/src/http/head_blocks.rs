//! The usual status line and header line at a glance, a block of bytes at a
//! time: 16 with SSE2 (the x86_64 baseline), 32 with AVX2 when the CPU has it
//! (chosen once per head by [`response_head`](super::response_head)). Compiled
//! on x86 targets with SSE2, not under Miri (which reads every line byte-wise).
//!
//! Each byte class the grammar needs (header-name alphabet, colon, OWS,
//! field-value byte, high bit) is a compare or two per block and a bit mask,
//! so a header line costs a few blocks and no byte loop. Only the usual form
//! is taken here: a status line `HTTP/1.x NNN reason` CRLF at the start, and
//! header lines `name: value` CRLF whose name is letters, digits and `-`
//! (with AVX2: any token).
//! Anything else, and a line too near the end of the bytes for whole blocks,
//! returns `None` and is left to the byte-wise parse, which decides every
//! case; what is accepted here is exactly what that would accept, with the
//! same spans (the differential test against httparse covers both).

use super::head::HeaderSpan;
use super::response_head::StatusLine;

/// Byte classes of one block as bit masks (bit i for byte i). A value of
/// the type proves the CPU has the instructions (see the implementations).
pub(super) trait Blocks: Copy {
    /// Block width in bytes (16 or 32).
    const WIDTH: usize;
    /// A bit for each byte of a block.
    const MASK: u32;
    type V: Copy;
    /// The block at `at`, if `data` holds `WIDTH` bytes from there.
    fn load(self, data: &[u8], at: usize) -> Option<Self::V>;
    /// Bytes out of the header-name alphabet taken here: letters, digits
    /// and `-` (SSE2), or every `tchar` (AVX2); either way only bytes the
    /// byte-wise parse accepts in a name.
    fn not_name(self, v: Self::V) -> u32;
    /// Bytes that are not field-value bytes (controls but HTAB, and DEL).
    fn not_value(self, v: Self::V) -> u32;
    /// SP and HTAB.
    fn ows(self, v: Self::V) -> u32;
    /// `:`.
    fn colon(self, v: Self::V) -> u32;
    /// Bytes with the high bit set (obs-text).
    fn high(self, v: Self::V) -> u32;
}

/// The status line in its usual form at the start of `data`: its facts
/// (`head_len` left 0) and where the headers start.
#[inline(always)]
pub(super) fn status_line<B: Blocks>(b: B, data: &[u8]) -> Option<(StatusLine, usize)> {
    // `HTTP/1.` and the minor digit as one word, then the space.
    let word = u64::from_le_bytes(*data.first_chunk::<8>()?);
    let version = match word {
        w if w == u64::from_le_bytes(*b"HTTP/1.1") => 1,
        w if w == u64::from_le_bytes(*b"HTTP/1.0") => 0,
        _ => return None,
    };
    if data.get(8) != Some(&b' ') {
        return None;
    }
    let &[d0, d1, d2, b' '] = data.get(9..13)? else {
        return None;
    };
    let digit = |d: u8| d.wrapping_sub(b'0') < 10;
    if !(digit(d0) && digit(d1) && digit(d2)) {
        return None;
    }
    let status = u16::from(d0 - b'0') * 100 + u16::from(d1 - b'0') * 10 + u16::from(d2 - b'0');
    // The reason: field-value bytes up to CRLF; obs-text (a high bit)
    // makes it read as empty.
    let mut at = 13;
    let mut high = 0;
    let e = loop {
        let v = b.load(data, at)?;
        let bad = b.not_value(v);
        if bad != 0 {
            high |= b.high(v) & (bad & bad.wrapping_neg()).wrapping_sub(1);
            break at + bad.trailing_zeros() as usize;
        }
        high |= b.high(v);
        at += B::WIDTH;
    };
    if data.get(e..e + 2) != Some(b"\r\n") {
        return None;
    }
    let reason = if high == 0 { (13, e) } else { (0, 0) };
    let line = StatusLine {
        version,
        status,
        reason,
        head_len: 0,
    };
    Some((line, e + 2))
}

/// The header line at `i` in its usual form: its spans and where the next
/// line starts.
///
/// The line end is found from the line start alone (the first byte that is
/// not a field-value byte), so the next line's start depends on one block
/// classification per block of the line and nothing else; the name, the
/// colon, the OWS and the CRLF are checked beside that chain, and the CPU
/// runs those checks while it goes on to the next lines (they only branch,
/// and the branches are predicted). Bytes before the end are all field-value
/// bytes, so the value needs no check of its own.
#[inline(always)]
pub(super) fn header_line<B: Blocks>(b: B, data: &[u8], i: usize) -> Option<(HeaderSpan, usize)> {
    let first = b.load(data, i)?;
    // The line end: the first byte out of the value alphabet (a control byte).
    let e = {
        let mut at = i;
        let mut bad = b.not_value(first);
        while bad == 0 {
            at += B::WIDTH;
            bad = b.not_value(b.load(data, at)?);
        }
        at + bad.trailing_zeros() as usize
    };
    // As in `load`: a bound without an overflow check.
    if data.len() < 2 || e > data.len() - 2 || data[e..e + 2] != *b"\r\n" {
        return None;
    }
    // Name: whole blocks of the alphabet, then one whose first byte out of
    // it (at `k`) must be the colon. A control byte is out of the alphabet,
    // so the colon found is before `e` or there is none.
    let mut c = i;
    let mut v = first;
    let (k, out) = loop {
        let out = b.not_name(v);
        if out != 0 {
            break (out.trailing_zeros(), out);
        }
        c += B::WIDTH;
        v = b.load(data, c)?;
    };
    let colon = c + k as usize;
    // The first byte out of the name alphabet (its lowest bit) must be the
    // colon.
    if b.colon(v) & out & out.wrapping_neg() == 0 || colon == i {
        return None;
    }
    // OWS after the colon, within its block: the bytes above the colon's
    // bit (none if it is the last one). OWS running to the block end is
    // rare: byte-wise.
    let after = !(out ^ out.wrapping_sub(1));
    let lead = !b.ows(v) & after & B::MASK;
    if lead == 0 {
        return None;
    }
    // Not past `e`: the byte there is a control byte, not OWS.
    let value0 = c + lead.trailing_zeros() as usize;
    // Trailing OWS. Every byte before `e` is a field-value byte (HTAB, SP,
    // VCHAR, obs-text), so one at or below SP is SP or HTAB: one compare.
    let mut end = e;
    if end > value0 && data[end - 1] <= b' ' {
        end = trim_end(data, value0, end);
    }
    Some((HeaderSpan::new((i, colon), (value0, end)), e + 2))
}

/// `end` moved back over the trailing OWS of `data[value0..end]`, out of
/// line: most values have none (one compare in [`header_line`]).
#[cold]
#[inline(never)]
fn trim_end(data: &[u8], value0: usize, mut end: usize) -> usize {
    while end > value0 && matches!(data.get(end - 1), Some(b' ' | b'\t')) {
        end -= 1;
    }
    end
}

pub(super) use x86::{Avx2, Sse2};

mod x86 {
    #[cfg(target_arch = "x86")]
    use core::arch::x86::*;
    #[cfg(target_arch = "x86_64")]
    use core::arch::x86_64::*;

    use super::Blocks;

    /// SSE2, which the whole target has (the cfg of this module).
    #[derive(Clone, Copy)]
    pub(in crate::http) struct Sse2;

    /// AVX2: only [`Avx2::detect`] makes one, on a CPU that has it.
    #[derive(Clone, Copy)]
    pub(in crate::http) struct Avx2(());

    impl Avx2 {
        /// An `Avx2` when the CPU (and OS) support AVX2.
        #[inline]
        pub(in crate::http) fn detect() -> Option<Avx2> {
            crate::simd::cpu::features().avx2.then_some(Avx2(()))
        }
    }

    impl Blocks for Sse2 {
        const WIDTH: usize = 16;
        const MASK: u32 = 0xffff;
        type V = __m128i;

        #[inline(always)]
        fn load(self, data: &[u8], at: usize) -> Option<__m128i> {
            // `at > len - 16` rather than `at + 16 > len`: one compare with a
            // bound the loops hoist, and no overflow check.
            if data.len() < 16 || at > data.len() - 16 {
                return None;
            }
            // SAFETY: `at <= len - 16` (checked above), so the 16 bytes from
            // `at` are inside `data`; the load is unaligned.
            Some(unsafe { _mm_loadu_si128(data.as_ptr().add(at).cast()) })
        }
        #[inline(always)]
        fn not_name(self, x: __m128i) -> u32 {
            // SAFETY: the whole target has SSE2 (the cfg of this module).
            unsafe { sse2::not_name(x) }
        }
        #[inline(always)]
        fn not_value(self, x: __m128i) -> u32 {
            // SAFETY: as above.
            unsafe { sse2::not_value(x) }
        }
        #[inline(always)]
        fn ows(self, x: __m128i) -> u32 {
            // SAFETY: as above.
            unsafe { sse2::ows(x) }
        }
        #[inline(always)]
        fn colon(self, x: __m128i) -> u32 {
            // SAFETY: as above.
            unsafe { sse2::colon(x) }
        }
        #[inline(always)]
        fn high(self, x: __m128i) -> u32 {
            // SAFETY: as above.
            unsafe { _mm_movemask_epi8(x) as u32 }
        }
    }

    impl Blocks for Avx2 {
        const WIDTH: usize = 32;
        const MASK: u32 = u32::MAX;
        type V = __m256i;

        #[inline(always)]
        fn load(self, data: &[u8], at: usize) -> Option<__m256i> {
            // `at > len - 32` rather than `at + 32 > len`: one compare with a
            // bound the loops hoist, and no overflow check.
            if data.len() < 32 || at > data.len() - 32 {
                return None;
            }
            // SAFETY: `at <= len - 32` (checked above), so the 32 bytes from
            // `at` are inside `data`; the load is unaligned; `self` exists
            // only on a CPU with AVX2.
            Some(unsafe { _mm256_loadu_si256(data.as_ptr().add(at).cast()) })
        }
        #[inline(always)]
        fn not_name(self, x: __m256i) -> u32 {
            // SAFETY: `self` exists only on a CPU with AVX2.
            unsafe { avx2::not_name(x) }
        }
        #[inline(always)]
        fn not_value(self, x: __m256i) -> u32 {
            // SAFETY: as above.
            unsafe { avx2::not_value(x) }
        }
        #[inline(always)]
        fn ows(self, x: __m256i) -> u32 {
            // SAFETY: as above.
            unsafe { avx2::ows(x) }
        }
        #[inline(always)]
        fn colon(self, x: __m256i) -> u32 {
            // SAFETY: as above.
            unsafe { avx2::colon(x) }
        }
        #[inline(always)]
        fn high(self, x: __m256i) -> u32 {
            // SAFETY: as above.
            unsafe { _mm256_movemask_epi8(x) as u32 }
        }
    }

    /// The SSE2 classes: unsigned `a <= n` is `min(a, n) == a`; folding to
    /// lower case maps exactly the letters into a..=z.
    mod sse2 {
        #[cfg(target_arch = "x86")]
        use core::arch::x86::*;
        #[cfg(target_arch = "x86_64")]
        use core::arch::x86_64::*;

        #[target_feature(enable = "sse2")]
        #[inline]
        fn le(a: __m128i, n: i8) -> __m128i {
            _mm_cmpeq_epi8(_mm_min_epu8(a, _mm_set1_epi8(n)), a)
        }

        #[target_feature(enable = "sse2")]
        #[inline]
        fn eq(a: __m128i, n: u8) -> __m128i {
            _mm_cmpeq_epi8(a, _mm_set1_epi8(n as i8))
        }

        #[target_feature(enable = "sse2")]
        #[inline]
        pub(super) fn not_name(x: __m128i) -> u32 {
            let lower = _mm_or_si128(x, _mm_set1_epi8(0x20));
            let letter = le(_mm_sub_epi8(lower, _mm_set1_epi8(b'a' as i8)), 25);
            let digit = le(_mm_sub_epi8(x, _mm_set1_epi8(b'0' as i8)), 9);
            let ok = _mm_or_si128(_mm_or_si128(letter, digit), eq(x, b'-'));
            !(_mm_movemask_epi8(ok) as u32) & 0xffff
        }

        #[target_feature(enable = "sse2")]
        #[inline]
        pub(super) fn not_value(x: __m128i) -> u32 {
            let ctl = _mm_andnot_si128(eq(x, b'\t'), le(x, 0x1f));
            _mm_movemask_epi8(_mm_or_si128(ctl, eq(x, 0x7f))) as u32
        }

        #[target_feature(enable = "sse2")]
        #[inline]
        pub(super) fn ows(x: __m128i) -> u32 {
            _mm_movemask_epi8(_mm_or_si128(eq(x, b' '), eq(x, b'\t'))) as u32
        }

        #[target_feature(enable = "sse2")]
        #[inline]
        pub(super) fn colon(x: __m128i) -> u32 {
            _mm_movemask_epi8(eq(x, b':')) as u32
        }
    }

    /// The AVX2 classes, the same compares as SSE2's on 32 bytes.
    mod avx2 {
        #[cfg(target_arch = "x86")]
        use core::arch::x86::*;
        #[cfg(target_arch = "x86_64")]
        use core::arch::x86_64::*;

        #[target_feature(enable = "avx2")]
        #[inline]
        fn le(a: __m256i, n: i8) -> __m256i {
            _mm256_cmpeq_epi8(_mm256_min_epu8(a, _mm256_set1_epi8(n)), a)
        }

        #[target_feature(enable = "avx2")]
        #[inline]
        fn eq(a: __m256i, n: u8) -> __m256i {
            _mm256_cmpeq_epi8(a, _mm256_set1_epi8(n as i8))
        }

        /// `tchar` as two nibble tables: bit `h` of `BY_LOW[l]` is set when
        /// the byte `h << 4 | l` is a tchar (all are below 0x80), and
        /// `BY_HIGH[h]` is that bit for `h` < 8, 0 above.
        const BY_LOW: [u8; 16] = {
            let mut t = [0u8; 16];
            let mut c = 0;
            while c < 0x80 {
                if crate::http::syntax::TCHAR[c] {
                    t[c & 15] |= 1 << (c >> 4);
                }
                c += 1;
            }
            t
        };
        const BY_HIGH: [u8; 16] = [1, 2, 4, 8, 16, 32, 64, 128, 0, 0, 0, 0, 0, 0, 0, 0];

        /// A 16-byte table in both lanes.
        const fn lanes(t: [u8; 16]) -> __m256i {
            let mut w = [0u8; 32];
            let mut i = 0;
            while i < 32 {
                w[i] = t[i & 15];
                i += 1;
            }
            // SAFETY: `__m256i` is 32 plain bytes; every bit pattern is valid.
            unsafe { core::mem::transmute::<[u8; 32], __m256i>(w) }
        }

        /// Bytes that are not `tchar`: a table lookup by each nibble
        /// (`vpshufb` gives 0 for a byte with the high bit set, so
        /// obs-text is out too).
        #[target_feature(enable = "avx2")]
        #[inline]
        pub(super) fn not_name(x: __m256i) -> u32 {
            let high = _mm256_and_si256(_mm256_srli_epi16(x, 4), _mm256_set1_epi8(0x0f));
            let bits = _mm256_and_si256(
                _mm256_shuffle_epi8(lanes(BY_LOW), x),
                _mm256_shuffle_epi8(lanes(BY_HIGH), high),
            );
            _mm256_movemask_epi8(_mm256_cmpeq_epi8(bits, _mm256_setzero_si256())) as u32
        }

        #[target_feature(enable = "avx2")]
        #[inline]
        pub(super) fn not_value(x: __m256i) -> u32 {
            let ctl = _mm256_andnot_si256(eq(x, b'\t'), le(x, 0x1f));
            _mm256_movemask_epi8(_mm256_or_si256(ctl, eq(x, 0x7f))) as u32
        }

        #[target_feature(enable = "avx2")]
        #[inline]
        pub(super) fn ows(x: __m256i) -> u32 {
            _mm256_movemask_epi8(_mm256_or_si256(eq(x, b' '), eq(x, b'\t'))) as u32
        }

        #[target_feature(enable = "avx2")]
        #[inline]
        pub(super) fn colon(x: __m256i) -> u32 {
            _mm256_movemask_epi8(eq(x, b':')) as u32
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Avx2, Blocks, Sse2};
    use crate::http::runs::is_name_fast;
    use crate::http::syntax::is_tchar;

    /// Every byte value at every position of a block: the name classes are
    /// exactly tchar (AVX2) and letters, digits, `-` (SSE2).
    #[test]
    fn name_classes_are_exact() {
        for c in 0..=255u8 {
            for pos in 0..32 {
                let mut block = [b'a'; 32];
                block[pos] = c;
                let want = |ok: bool| if ok { 0 } else { 1u32 << pos };
                if let Some(b) = Avx2::detect() {
                    let v = b.load(&block, 0).unwrap();
                    assert_eq!(b.not_name(v), want(is_tchar(c)), "{c:#x} at {pos}");
                }
                if pos < 16 {
                    let v = Sse2.load(&block, 0).unwrap();
                    assert_eq!(Sse2.not_name(v), want(is_name_fast(c)), "{c:#x} at {pos}");
                }
            }
        }
    }
}

#[cfg(test)]
mod line_tests {
    use super::{Avx2, Blocks, Sse2, header_line};
    use crate::http::head::HeaderSpan;
    use crate::http::response_head::parse_with;
    use std::vec::Vec;

    /// The byte-wise parse of the header line at `i` (after a status line).
    fn bytewise(data: &[u8]) -> Option<HeaderSpan> {
        let mut spans = heapless::Vec::<HeaderSpan, 4>::new();
        match parse_with(data, &mut spans, |_| None, |_, _| None) {
            Ok(Some(_)) => spans.first().copied(),
            _ => None,
        }
    }

    /// Whatever a block path accepts, the byte-wise parse accepts with the
    /// same spans and line end: names, OWS, values and trailing OWS of every
    /// length around the block widths, at every offset of the line.
    fn check<B: Blocks>(b: B) {
        const STATUS: &[u8] = b"HTTP/1.1 200 OK\r\n";
        let mut taken = 0;
        for pad in 0..2 {
            for name_len in [1, 2, 7, 15, 16, 17, 30, 31, 32, 33] {
                for lead in [&b""[..], b" ", b"\t", b"  \t "] {
                    for value_len in [0, 1, 5, 14, 15, 16, 17, 31, 32, 33, 45, 64] {
                        for trail in [&b""[..], b" ", b"\t ", b"x "] {
                            let mut line = Vec::new();
                            line.extend(core::iter::repeat_n(b'a' + pad, name_len));
                            line.push(b':');
                            line.extend_from_slice(lead);
                            line.extend(core::iter::repeat_n(b'v', value_len));
                            line.extend_from_slice(trail);
                            line.extend_from_slice(b"\r\n");
                            for tail in [0usize, 2, 40] {
                                let mut data = STATUS.to_vec();
                                data.extend_from_slice(&line);
                                data.extend_from_slice(b"\r\n");
                                data.extend(core::iter::repeat_n(b'z', tail));
                                let want = bytewise(&data);
                                if let Some((span, next)) = header_line(b, &data, STATUS.len()) {
                                    taken += 1;
                                    assert_eq!(Some(span), want, "{:?}", line);
                                    assert_eq!(next, STATUS.len() + line.len());
                                }
                            }
                        }
                    }
                }
            }
        }
        assert!(taken > 1000, "the block path took only {taken} lines");
    }

    #[test]
    fn block_lines_match_bytewise() {
        check(Sse2);
        if let Some(b) = Avx2::detect() {
            check(b);
        }
    }
}
