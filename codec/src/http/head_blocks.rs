//! The usual status line and header line at a glance, a block of bytes at a
//! time: 16 with SSE2 (the x86_64 baseline), 32 with AVX2 when the CPU has it
//! (chosen once per head by the proof tokens of `simd::token`, in
//! [`head_parse`](super::head_parse), for responses and requests alike).
//! Compiled on x86 targets with SSE2, under Miri too (where the AVX2 token
//! exists only when `-C target-feature=+avx2` enables it).
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
use super::request_head::RequestLine;
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
    /// Bytes that end a request target: controls, SP and DEL (what
    /// httparse's URI class leaves out).
    fn not_uri(self, v: Self::V) -> u32;
    /// SP and HTAB.
    fn ows(self, v: Self::V) -> u32;
    /// `:`.
    fn colon(self, v: Self::V) -> u32;
    /// The LF bytes of the 64 bytes at `at` as bits.
    ///
    /// # Safety
    /// `at + 64 <= data.len()`.
    unsafe fn lf64(self, data: &[u8], at: usize) -> u64;
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

/// The request line in its usual form at the start of `data`: a method of
/// the block's name alphabet, SP, a target of visible ASCII, SP,
/// `HTTP/1.x`, CRLF. Its facts (`head_len` left 0) and where the headers
/// start; `None` leaves the line to the byte-wise parse (a target with
/// obs-text among them, whose UTF-8 check that parse does).
#[inline(always)]
pub(super) fn request_line<B: Blocks>(b: B, data: &[u8]) -> Option<(RequestLine, usize)> {
    // Method: the first byte out of the name alphabet must be SP, not first.
    let v = b.load(data, 0)?;
    let out = b.not_name(v);
    let m1 = out.trailing_zeros() as usize;
    if out == 0 || m1 == 0 || data.get(m1) != Some(&b' ') {
        return None;
    }
    // Target: visible ASCII up to the first control, SP or DEL, which must
    // be SP.
    let t0 = m1 + 1;
    let mut at = t0;
    let t1 = loop {
        let v = b.load(data, at)?;
        let end = b.not_uri(v);
        let before = if end == 0 {
            B::MASK
        } else {
            (end & end.wrapping_neg()).wrapping_sub(1)
        };
        if b.high(v) & before != 0 {
            return None;
        }
        if end != 0 {
            break at + end.trailing_zeros() as usize;
        }
        at += B::WIDTH;
    };
    if t1 == t0 || data.get(t1) != Some(&b' ') {
        return None;
    }
    let version = match data.get(t1 + 1..t1 + 11)? {
        b"HTTP/1.1\r\n" => 1,
        b"HTTP/1.0\r\n" => 0,
        _ => return None,
    };
    let line = RequestLine {
        version,
        method: (0, m1),
        target: (t0, t1),
        head_len: 0,
    };
    Some((line, t1 + 11))
}

/// The header line at `i` in its usual form: its spans and where the next
/// line starts (with a line-end walk of its own; a parse uses one
/// [`LineEnds`] for all its lines).
#[cfg(test)]
pub(super) fn header_line<B: Blocks>(b: B, data: &[u8], i: usize) -> Option<(HeaderSpan, usize)> {
    LineEnds::new().header_line(b, data, i)
}

/// The line feeds of a head as bits, 64 bytes at a time, found ahead of the
/// header walk.
///
/// Each line's end is the next bit: the next line's start follows from this
/// one's by a `tzcnt` and a bit clear, not by loading and classifying the
/// line's bytes (a load, five vector operations and a mask move, line after
/// line). The windows' loads do not depend on the lines, so they run ahead;
/// each line's bytes are checked beside the walk.
#[derive(Clone, Copy)]
pub(super) struct LineEnds {
    /// Bit k: an LF at `base + k` not taken yet (bits before the walk are clear).
    bits: u64,
    /// The window's start; before the first window, 64 before 0 (wrapping),
    /// so that the first one starts at the first line asked for.
    base: usize,
}

impl LineEnds {
    pub(super) const fn new() -> Self {
        LineEnds {
            bits: 0,
            base: 0usize.wrapping_sub(64),
        }
    }

    /// A walk whose first window is read now, from the start of `data`
    /// (the status line's LF is passed over by [`find`](Self::find)), so
    /// its loads do not wait for the status line's parse; like
    /// [`new`](Self::new) when `data` holds fewer than 64 bytes.
    #[inline(always)]
    pub(super) fn at_start<B: Blocks>(b: B, data: &[u8]) -> Self {
        let mut ends = LineEnds::new();
        // Fewer than 64 bytes: no window now; `find` tries again (and
        // leaves every line to the byte-wise parse).
        let _ = ends.fill(b, data, 0);
        ends
    }

    /// The first LF at or after `i`, where `i` is at or after every LF
    /// given out so far.
    ///
    /// Every line the parse accepts, on any path, ends just after the first
    /// LF from its start (no byte of a name, OWS or value is an LF, and a CR
    /// must be followed by one), so the LF given out for a line is that
    /// line's end whether or not the block path takes the line, and the
    /// walk stays with the parse; LFs before `i` (the status line's, and
    /// empty lines before it) are passed over. When no window can be read
    /// (fewer than 64 bytes in all, or none left) every later line is read
    /// byte-wise.
    #[inline(always)]
    fn find<B: Blocks>(&mut self, b: B, data: &[u8], i: usize) -> Option<usize> {
        loop {
            while self.bits == 0 {
                // The next window, or the first at `i`; LFs between `i` and
                // the next window's start were all given out.
                self.fill(b, data, self.base.wrapping_add(64).max(i))?;
            }
            let lf = self.base + self.bits.trailing_zeros() as usize;
            self.bits &= self.bits - 1;
            if lf >= i {
                return Some(lf);
            }
        }
    }

    /// The window holding `at` (the last 64 bytes of `data` when fewer
    /// remain), its bits before `at` cleared; `None` when `data` ends before
    /// `at` or holds fewer than 64 bytes.
    #[inline(always)]
    fn fill<B: Blocks>(&mut self, b: B, data: &[u8], at: usize) -> Option<()> {
        let base = at.min(data.len().checked_sub(64)?);
        let skip = at - base;
        if skip >= 64 {
            return None;
        }
        // SAFETY: `base <= len - 64`.
        self.bits = unsafe { b.lf64(data, base) } & (u64::MAX << skip);
        self.base = base;
        Some(())
    }

    /// The header line at `i` in its usual form: its spans and where the
    /// next line starts.
    ///
    /// The line ends at the first LF from `i` ([`find`](Self::find)),
    /// which must follow a CR, and that CR must be the first byte from `i`
    /// that is not a field-value byte; so the value needs no check of its
    /// own. The name, the colon and the OWS are checked in the first block.
    /// That check also means a wrong LF from the walk could only make this
    /// path leave a line to the byte-wise parse, never accept a wrong one.
    #[inline(always)]
    pub(super) fn header_line<B: Blocks>(
        &mut self,
        b: B,
        data: &[u8],
        i: usize,
    ) -> Option<(HeaderSpan, usize)> {
        let lf = self.find(b, data, i)?;
        let first = b.load(data, i)?;
        // The first byte from `i` that is not a field-value byte (a control
        // byte) must be a CR just before that LF.
        let e = {
            let mut at = i;
            let mut bad = b.not_value(first);
            while bad == 0 {
                at += B::WIDTH;
                bad = b.not_value(b.load(data, at)?);
            }
            at + bad.trailing_zeros() as usize
        };
        // SAFETY: read only when `e + 1 == lf`, and then `e < lf < data.len()`,
        // as `find` gives out LFs inside `data`.
        if e + 1 != lf || unsafe { *data.get_unchecked(e) } != b'\r' {
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
        Some((HeaderSpan::new((i, colon), (value0, end)), lf + 1))
    }
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

    // The codec's proof tokens (`simd::token`): a value exists only where
    // its instructions run (SSE2: the whole target has it, the cfg of this
    // module; AVX2: compiled in, or found by the codec's CPU detection).
    pub(in crate::http) use crate::simd::token::{Avx2, Sse2};

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
            // `at` are inside `data`; the load is unaligned; `self` exists
            // only on a CPU with SSE2.
            Some(unsafe { _mm_loadu_si128(data.as_ptr().add(at).cast()) })
        }
        #[inline(always)]
        fn not_name(self, x: __m128i) -> u32 {
            // SAFETY: `self` exists, so the CPU has SSE2 (and the whole
            // target has it: the cfg of this module).
            unsafe { sse2::not_name(x) }
        }
        #[inline(always)]
        fn not_value(self, x: __m128i) -> u32 {
            // SAFETY: as above.
            unsafe { sse2::not_value(x) }
        }
        #[inline(always)]
        fn not_uri(self, x: __m128i) -> u32 {
            // SAFETY: as above.
            unsafe { sse2::not_uri(x) }
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
        unsafe fn lf64(self, data: &[u8], at: usize) -> u64 {
            // SAFETY: the caller keeps the 64 bytes from `at` inside `data`
            // (the loads are unaligned); `self` exists only on a CPU with SSE2.
            unsafe { sse2::lf64(data.as_ptr().add(at)) }
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
        fn not_uri(self, x: __m256i) -> u32 {
            // SAFETY: as above.
            unsafe { avx2::not_uri(x) }
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
        unsafe fn lf64(self, data: &[u8], at: usize) -> u64 {
            // SAFETY: the caller keeps the 64 bytes from `at` inside `data`
            // (the loads are unaligned); `self` exists only on a CPU with AVX2.
            unsafe { avx2::lf64(data.as_ptr().add(at)) }
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
        pub(super) fn not_uri(x: __m128i) -> u32 {
            _mm_movemask_epi8(_mm_or_si128(le(x, 0x20), eq(x, 0x7f))) as u32
        }

        #[target_feature(enable = "sse2")]
        #[inline]
        pub(super) fn ows(x: __m128i) -> u32 {
            _mm_movemask_epi8(_mm_or_si128(eq(x, b' '), eq(x, b'\t'))) as u32
        }

        /// The LF bytes of the 64 bytes at `p` as bits.
        ///
        /// # Safety
        /// The 64 bytes from `p` are readable.
        #[target_feature(enable = "sse2")]
        #[inline]
        pub(super) unsafe fn lf64(p: *const u8) -> u64 {
            let mut bits = 0u64;
            for k in 0..4 {
                // SAFETY: the caller's; the loads are unaligned.
                let v = unsafe { _mm_loadu_si128(p.add(16 * k).cast()) };
                bits |= u64::from(_mm_movemask_epi8(eq(v, b'\n')) as u16) << (16 * k);
            }
            bits
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
        pub(super) fn not_uri(x: __m256i) -> u32 {
            _mm256_movemask_epi8(_mm256_or_si256(le(x, 0x20), eq(x, 0x7f))) as u32
        }

        #[target_feature(enable = "avx2")]
        #[inline]
        pub(super) fn ows(x: __m256i) -> u32 {
            _mm256_movemask_epi8(_mm256_or_si256(eq(x, b' '), eq(x, b'\t'))) as u32
        }

        /// The LF bytes of the 64 bytes at `p` as bits.
        ///
        /// # Safety
        /// The 64 bytes from `p` are readable.
        #[target_feature(enable = "avx2")]
        #[inline]
        pub(super) unsafe fn lf64(p: *const u8) -> u64 {
            let lf = _mm256_set1_epi8(b'\n' as i8);
            // SAFETY: the caller's; the loads are unaligned.
            let (a, b) = unsafe {
                (
                    _mm256_loadu_si256(p.cast()),
                    _mm256_loadu_si256(p.add(32).cast()),
                )
            };
            let lo = _mm256_movemask_epi8(_mm256_cmpeq_epi8(a, lf)) as u32;
            let hi = _mm256_movemask_epi8(_mm256_cmpeq_epi8(b, lf)) as u32;
            u64::from(lo) | u64::from(hi) << 32
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
        // Under Miri every byte value at the lane and block edges.
        let positions: &[usize] = if cfg!(miri) {
            &[0, 15, 16, 31]
        } else {
            &[
                0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22,
                23, 24, 25, 26, 27, 28, 29, 30, 31,
            ]
        };
        for c in 0..=255u8 {
            for &pos in positions {
                let mut block = [b'a'; 32];
                block[pos] = c;
                let want = |ok: bool| if ok { 0 } else { 1u32 << pos };
                if let Some(b) = Avx2::detect() {
                    let v = b.load(&block, 0).unwrap();
                    assert_eq!(b.not_name(v), want(is_tchar(c)), "{c:#x} at {pos}");
                }
                if pos < 16 {
                    let v = Sse2::detect().unwrap().load(&block, 0).unwrap();
                    assert_eq!(
                        Sse2::detect().unwrap().not_name(v),
                        want(is_name_fast(c)),
                        "{c:#x} at {pos}"
                    );
                }
            }
        }
    }
}

#[cfg(test)]
mod line_tests {
    use super::{Avx2, Blocks, Sse2, header_line};
    use crate::http::head::HeaderSpan;
    use crate::http::response_head::{StatusLine, parse_with};
    use std::vec::Vec;

    /// The byte-wise parse of the header line at `i` (after a status line).
    fn bytewise(data: &[u8]) -> Option<HeaderSpan> {
        let mut spans = heapless::Vec::<HeaderSpan, 4>::new();
        match parse_with::<StatusLine, 4>(data, &mut spans, |_| None, |_, _| None) {
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
        // Under Miri (which interprets every vector operation) the block
        // edges only.
        let miri = cfg!(miri);
        let name_lens: &[usize] = if miri {
            &[1, 16, 33]
        } else {
            &[1, 2, 7, 15, 16, 17, 30, 31, 32, 33]
        };
        let leads: &[&[u8]] = if miri {
            &[b"", b"  \t "]
        } else {
            &[b"", b" ", b"\t", b"  \t "]
        };
        let value_lens: &[usize] = if miri {
            &[0, 15, 32]
        } else {
            &[0, 1, 5, 14, 15, 16, 17, 31, 32, 33, 45, 64]
        };
        let trails: &[&[u8]] = if miri {
            &[b"", b"x "]
        } else {
            &[b"", b" ", b"\t ", b"x "]
        };
        let tails: &[usize] = if miri { &[0, 40] } else { &[0, 2, 40] };
        for pad in 0..if miri { 1 } else { 2 } {
            for &name_len in name_lens {
                for &lead in leads {
                    for &value_len in value_lens {
                        for &trail in trails {
                            let mut line = Vec::new();
                            line.extend(core::iter::repeat_n(b'a' + pad, name_len));
                            line.push(b':');
                            line.extend_from_slice(lead);
                            line.extend(core::iter::repeat_n(b'v', value_len));
                            line.extend_from_slice(trail);
                            line.extend_from_slice(b"\r\n");
                            for &tail in tails {
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
        let enough = if miri { 20 } else { 1000 };
        assert!(taken > enough, "the block path took only {taken} lines");
    }

    /// One walk over a head of usual lines takes each line a walk of its own
    /// would take (the walk gives each line its own LF, across windows and
    /// into the last one, clamped to the end), with the byte-wise spans.
    fn walk<B: Blocks>(b: B) {
        let lines: &[&[u8]] = &[
            b"Content-Type: application/json;charset=UTF-8\r\n",
            b"Content-Length: 243\r\n",
            b"Connection: keep-alive\r\n",
            b"Date: Mon, 23 Nov 2026 11:45:00 GMT\r\n",
            b"Server: nginx\r\n",
            b"x-mbx-uuid: 1f4c1c2e-6d2b-4f0e-9b8a-3c1e2f4a5b6c\r\n",
            b"x-mbx-used-weight-1m: 1\r\n",
        ];
        let bodies: &[usize] = if cfg!(miri) {
            &[1, 200]
        } else {
            &[0, 1, 40, 200]
        };
        for &body in bodies {
            let mut data = b"HTTP/1.1 200 OK\r\n".to_vec();
            let mut starts = Vec::new();
            for l in lines.iter().chain(lines) {
                starts.push(data.len());
                data.extend_from_slice(l);
            }
            data.extend_from_slice(b"\r\n");
            data.extend(core::iter::repeat_n(b'z', body));
            let mut spans = heapless::Vec::<HeaderSpan, 16>::new();
            assert!(matches!(
                parse_with(
                    &data,
                    &mut spans,
                    |_| None::<(StatusLine, usize)>,
                    |_, _| None
                ),
                Ok(Some(_))
            ));
            // From the first header line, and from the start of the bytes
            // (passing over the status line's LF), as the parse walks.
            for mut ends in [super::LineEnds::new(), super::LineEnds::at_start(b, &data)] {
                let mut taken = 0;
                for (k, &at) in starts.iter().enumerate() {
                    // Just what a walk of its own would take at that line (SSE2
                    // leaves `Content-Length: ` to the byte-wise parse: its OWS
                    // runs to the block end).
                    let got = ends.header_line(b, &data, at);
                    assert_eq!(got, header_line(b, &data, at), "line {k} of {body}");
                    let Some((span, next)) = got else { continue };
                    taken += 1;
                    assert_eq!(span, spans[k], "line {k}");
                    assert_eq!(next, at + lines[k % lines.len()].len());
                }
                assert!(taken >= 10, "{taken} lines taken of {}", starts.len());
            }
        }
    }

    #[test]
    fn one_walk_takes_every_usual_line() {
        walk(Sse2::detect().unwrap());
        if let Some(b) = Avx2::detect() {
            walk(b);
        }
    }

    #[test]
    fn block_lines_match_bytewise() {
        check(Sse2::detect().unwrap());
        if let Some(b) = Avx2::detect() {
            check(b);
        }
    }
}
