//! Masking keys: where they come from.
//!
//! RFC 6455 §5.3 and §10.3 ask a client for a fresh, unpredictable masking
//! key per frame. `no_std` has no OS randomness, so the caller supplies a
//! [`MaskSource`]. [`MaskRng`] is the default: the ChaCha12 stream cipher used
//! as a CSPRNG (the construction `rand`'s `StdRng` uses), seeded once with 32
//! bytes and buffered eight blocks (128 keys) at a time, computed side by
//! side in 8-lane AVX2 vectors when the CPU has them (else two passes of 4
//! lanes in SSE2): a key costs a few cycles instead of a system call per
//! frame. With the `getrandom` feature, [`MaskRng::from_entropy`] seeds it
//! from the operating system.

/// A source of WebSocket masking keys.
pub trait MaskSource {
    /// The next masking key. Keys must not be predictable by the peer or by
    /// anything on the path (RFC 6455 §10.3).
    fn next_key(&mut self) -> [u8; 4];
}

impl<M: MaskSource + ?Sized> MaskSource for &mut M {
    #[inline]
    fn next_key(&mut self) -> [u8; 4] {
        (**self).next_key()
    }
}

/// The mask source of a server-role writer: server frames are never masked,
/// so this type deliberately does not implement [`MaskSource`] and cannot be
/// used to build a client writer.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoMask;

/// ChaCha12 keystream generator: a CSPRNG for masking keys and handshake nonces.
#[derive(Clone)]
pub struct MaskRng {
    state: [u32; 16],
    /// Eight consecutive keystream blocks.
    block: [u32; BUFFERED],
    /// Next unused word of `block`; `BUFFERED` means the blocks are spent.
    next: usize,
}

/// Keystream words buffered: eight 16-word blocks.
const BUFFERED: usize = 128;

/// Keystream words of four blocks (one SSE2 pass).
const FOUR: usize = 64;

impl core::fmt::Debug for MaskRng {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        // Never print key material.
        f.write_str("MaskRng { .. }")
    }
}

const SIGMA: [u32; 4] = [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574];

/// ChaCha's `$n` double rounds (a column round, then a diagonal round) on
/// `$x`: 16 words, or 16 vectors holding a word of several blocks each, with
/// the `quarter` of that representation in scope where it is used.
macro_rules! double_rounds {
    ($x:expr, $n:expr) => {
        for _ in 0..$n {
            quarter($x, 0, 4, 8, 12);
            quarter($x, 1, 5, 9, 13);
            quarter($x, 2, 6, 10, 14);
            quarter($x, 3, 7, 11, 15);
            quarter($x, 0, 5, 10, 15);
            quarter($x, 1, 6, 11, 12);
            quarter($x, 2, 7, 8, 13);
            quarter($x, 3, 4, 9, 14);
        }
    };
}

#[cfg_attr(
    all(target_arch = "x86_64", target_feature = "sse2", not(miri)),
    cfg(test)
)]
#[inline(always)]
fn quarter(x: &mut [u32; 16], a: usize, b: usize, c: usize, d: usize) {
    x[a] = x[a].wrapping_add(x[b]);
    x[d] = (x[d] ^ x[a]).rotate_left(16);
    x[c] = x[c].wrapping_add(x[d]);
    x[b] = (x[b] ^ x[c]).rotate_left(12);
    x[a] = x[a].wrapping_add(x[b]);
    x[d] = (x[d] ^ x[a]).rotate_left(8);
    x[c] = x[c].wrapping_add(x[d]);
    x[b] = (x[b] ^ x[c]).rotate_left(7);
}

/// The four ChaCha blocks with block counters `n, n+1, n+2, n+3` (words 12
/// and 13 of `input` hold `n`, 64 bits) and `double_rounds` double rounds:
/// the same words as four calls of the one-block function, in order.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2", not(miri)))]
fn chacha_blocks4(input: &[u32; 16], double_rounds: usize) -> [u32; FOUR] {
    // SAFETY: this function is compiled only when SSE2 is enabled for the
    // whole target (`target_feature = "sse2"`), so the CPU has it.
    unsafe { sse2::blocks4(input, double_rounds) }
}

/// The four ChaCha blocks with block counters `n, n+1, n+2, n+3` (words 12
/// and 13 of `input` hold `n`, 64 bits): four one-block calls.
#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2", not(miri))))]
fn chacha_blocks4(input: &[u32; 16], double_rounds: usize) -> [u32; FOUR] {
    let n = u64::from(input[13]) << 32 | u64::from(input[12]);
    let mut out = [0u32; FOUR];
    for (l, chunk) in out.chunks_exact_mut(16).enumerate() {
        let mut one = *input;
        let c = n.wrapping_add(l as u64);
        one[12] = c as u32;
        one[13] = (c >> 32) as u32;
        chunk.copy_from_slice(&chacha_block(&one, double_rounds));
    }
    out
}

/// Four blocks side by side in SSE2 registers (part of the x86_64 baseline):
/// vector `w` holds word `w` of the four blocks, so every step of the
/// quarter round is one 4-lane instruction.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2", not(miri)))]
mod sse2 {
    use super::FOUR;
    use core::arch::x86_64::{
        __m128i, _mm_add_epi32, _mm_or_si128, _mm_set_epi32, _mm_set1_epi32, _mm_slli_epi32,
        _mm_srli_epi32, _mm_storeu_si128, _mm_xor_si128,
    };

    #[target_feature(enable = "sse2")]
    #[inline]
    fn rotl<const L: i32, const R: i32>(v: __m128i) -> __m128i {
        _mm_or_si128(_mm_slli_epi32::<L>(v), _mm_srli_epi32::<R>(v))
    }

    #[target_feature(enable = "sse2")]
    #[inline]
    fn quarter(x: &mut [__m128i; 16], a: usize, b: usize, c: usize, d: usize) {
        x[a] = _mm_add_epi32(x[a], x[b]);
        x[d] = rotl::<16, 16>(_mm_xor_si128(x[d], x[a]));
        x[c] = _mm_add_epi32(x[c], x[d]);
        x[b] = rotl::<12, 20>(_mm_xor_si128(x[b], x[c]));
        x[a] = _mm_add_epi32(x[a], x[b]);
        x[d] = rotl::<8, 24>(_mm_xor_si128(x[d], x[a]));
        x[c] = _mm_add_epi32(x[c], x[d]);
        x[b] = rotl::<7, 25>(_mm_xor_si128(x[b], x[c]));
    }

    #[target_feature(enable = "sse2")]
    pub(super) fn blocks4(input: &[u32; 16], double_rounds: usize) -> [u32; FOUR] {
        let n = u64::from(input[13]) << 32 | u64::from(input[12]);
        let c: [u64; 4] = [n, n.wrapping_add(1), n.wrapping_add(2), n.wrapping_add(3)];
        let mut init = [_mm_set1_epi32(0); 16];
        for (v, w) in init.iter_mut().zip(input) {
            *v = _mm_set1_epi32(*w as i32);
        }
        init[12] = _mm_set_epi32(c[3] as i32, c[2] as i32, c[1] as i32, c[0] as i32);
        init[13] = _mm_set_epi32(
            (c[3] >> 32) as i32,
            (c[2] >> 32) as i32,
            (c[1] >> 32) as i32,
            (c[0] >> 32) as i32,
        );
        let mut x = init;
        double_rounds!(&mut x, double_rounds);
        let mut lanes = [[0u32; 4]; 16];
        for ((l, v), i) in lanes.iter_mut().zip(x).zip(init) {
            // SAFETY: `l` is 16 writable bytes; the store is unaligned.
            unsafe { _mm_storeu_si128(l.as_mut_ptr().cast::<__m128i>(), _mm_add_epi32(v, i)) };
        }
        let mut out = [0u32; FOUR];
        for (w, l) in lanes.iter().enumerate() {
            for (b, word) in l.iter().enumerate() {
                out[16 * b + w] = *word;
            }
        }
        out
    }
}

/// The eight ChaCha blocks with block counters `n..n+8` (words 12 and 13 of
/// `input` hold `n`, 64 bits) into `out`, in order: one AVX2 pass when the
/// CPU has it, else two four-block passes.
fn chacha_blocks8(input: &[u32; 16], double_rounds: usize, out: &mut [u32; BUFFERED]) {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2", not(miri)))]
    if let Some(t) = crate::simd::token::Avx2::detect() {
        // SAFETY: `t` exists, so the CPU has AVX2 (see `simd::token`).
        unsafe { avx2::blocks8(t, input, double_rounds, out) };
        return;
    }
    let (lo, hi) = out.split_at_mut(FOUR);
    lo.copy_from_slice(&chacha_blocks4(input, double_rounds));
    let mut next = *input;
    let n = (u64::from(input[13]) << 32 | u64::from(input[12])).wrapping_add(4);
    next[12] = n as u32;
    next[13] = (n >> 32) as u32;
    hi.copy_from_slice(&chacha_blocks4(&next, double_rounds));
}

/// Eight blocks side by side in AVX2 registers: vector `w` holds word `w` of
/// the eight blocks, as in [`sse2`] with twice the lanes; the rotations by
/// 16 and 8 bits move whole bytes, so each is one byte shuffle.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2", not(miri)))]
mod avx2 {
    use super::BUFFERED;
    use core::arch::x86_64::{
        __m256i, _mm256_add_epi32, _mm256_or_si256, _mm256_set1_epi32, _mm256_setr_epi8,
        _mm256_setr_epi32, _mm256_shuffle_epi8, _mm256_slli_epi32, _mm256_srli_epi32,
        _mm256_storeu_si256, _mm256_xor_si256,
    };

    #[target_feature(enable = "avx2")]
    #[inline]
    fn rotl<const L: i32, const R: i32>(v: __m256i) -> __m256i {
        _mm256_or_si256(_mm256_slli_epi32::<L>(v), _mm256_srli_epi32::<R>(v))
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    #[rustfmt::skip]
    fn rotl16(v: __m256i) -> __m256i {
        // Little-endian word bytes [b0 b1 b2 b3] become [b2 b3 b0 b1].
        _mm256_shuffle_epi8(v, _mm256_setr_epi8(
            2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13,
            2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13,
        ))
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    #[rustfmt::skip]
    fn rotl8(v: __m256i) -> __m256i {
        // Little-endian word bytes [b0 b1 b2 b3] become [b3 b0 b1 b2].
        _mm256_shuffle_epi8(v, _mm256_setr_epi8(
            3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14,
            3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14,
        ))
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    fn quarter(x: &mut [__m256i; 16], a: usize, b: usize, c: usize, d: usize) {
        x[a] = _mm256_add_epi32(x[a], x[b]);
        x[d] = rotl16(_mm256_xor_si256(x[d], x[a]));
        x[c] = _mm256_add_epi32(x[c], x[d]);
        x[b] = rotl::<12, 20>(_mm256_xor_si256(x[b], x[c]));
        x[a] = _mm256_add_epi32(x[a], x[b]);
        x[d] = rotl8(_mm256_xor_si256(x[d], x[a]));
        x[c] = _mm256_add_epi32(x[c], x[d]);
        x[b] = rotl::<7, 25>(_mm256_xor_si256(x[b], x[c]));
    }

    /// The eight blocks; the token proves the CPU has AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) fn blocks8(
        _: crate::simd::token::Avx2,
        input: &[u32; 16],
        double_rounds: usize,
        out: &mut [u32; BUFFERED],
    ) {
        let n = u64::from(input[13]) << 32 | u64::from(input[12]);
        let c: [u64; 8] = core::array::from_fn(|i| n.wrapping_add(i as u64));
        let mut init = [_mm256_set1_epi32(0); 16];
        for (v, w) in init.iter_mut().zip(input) {
            *v = _mm256_set1_epi32(*w as i32);
        }
        init[12] = _mm256_setr_epi32(
            c[0] as i32,
            c[1] as i32,
            c[2] as i32,
            c[3] as i32,
            c[4] as i32,
            c[5] as i32,
            c[6] as i32,
            c[7] as i32,
        );
        init[13] = _mm256_setr_epi32(
            (c[0] >> 32) as i32,
            (c[1] >> 32) as i32,
            (c[2] >> 32) as i32,
            (c[3] >> 32) as i32,
            (c[4] >> 32) as i32,
            (c[5] >> 32) as i32,
            (c[6] >> 32) as i32,
            (c[7] >> 32) as i32,
        );
        let mut x = init;
        double_rounds!(&mut x, double_rounds);
        let mut lanes = [[0u32; 8]; 16];
        for ((l, v), i) in lanes.iter_mut().zip(x).zip(init) {
            // SAFETY: `l` is 32 writable bytes; the store is unaligned.
            unsafe {
                _mm256_storeu_si256(l.as_mut_ptr().cast::<__m256i>(), _mm256_add_epi32(v, i))
            };
        }
        for (w, l) in lanes.iter().enumerate() {
            for (b, word) in l.iter().enumerate() {
                out[16 * b + w] = *word;
            }
        }
    }
}

/// One ChaCha block with `double_rounds` double rounds (6 for ChaCha12, 10 for ChaCha20).
#[cfg_attr(
    all(target_arch = "x86_64", target_feature = "sse2", not(miri)),
    cfg(test)
)]
fn chacha_block(input: &[u32; 16], double_rounds: usize) -> [u32; 16] {
    let mut x = *input;
    double_rounds!(&mut x, double_rounds);
    for (o, i) in x.iter_mut().zip(input.iter()) {
        *o = o.wrapping_add(*i);
    }
    x
}

impl MaskRng {
    /// A generator seeded with 32 bytes. The seed must itself be unpredictable
    /// (from the OS, a hardware RNG, ...); the same seed gives the same keys.
    pub fn from_seed(seed: [u8; 32]) -> Self {
        let mut state = [0u32; 16];
        state[..4].copy_from_slice(&SIGMA);
        for (i, w) in seed.chunks_exact(4).enumerate() {
            state[4 + i] = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
        }
        // Words 12..16: 64-bit block counter and 64-bit stream id, all zero.
        MaskRng {
            state,
            block: [0; BUFFERED],
            next: BUFFERED,
        }
    }

    /// A generator seeded from the operating system's entropy source.
    #[cfg(feature = "getrandom")]
    pub fn from_entropy() -> Result<Self, getrandom::Error> {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed)?;
        Ok(Self::from_seed(seed))
    }

    #[cold]
    #[inline(never)]
    fn refill(&mut self) {
        chacha_blocks8(&self.state, 6, &mut self.block);
        let counter = (u64::from(self.state[13]) << 32 | u64::from(self.state[12])).wrapping_add(8);
        self.state[12] = counter as u32;
        self.state[13] = (counter >> 32) as u32;
        self.next = 0;
    }

    /// The next 32 random bits.
    #[inline]
    pub fn next_u32(&mut self) -> u32 {
        if self.next >= BUFFERED {
            self.refill();
        }
        let w = self.block[self.next % BUFFERED];
        self.next += 1;
        w
    }

    /// Fill `out` with random bytes (handshake nonces and the like).
    pub fn fill_bytes(&mut self, out: &mut [u8]) {
        for chunk in out.chunks_mut(4) {
            let w = self.next_u32().to_le_bytes();
            chunk.copy_from_slice(&w[..chunk.len()]);
        }
    }
}

impl MaskSource for MaskRng {
    #[inline]
    fn next_key(&mut self) -> [u8; 4] {
        self.next_u32().to_le_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chacha20_block_matches_rfc8439() {
        // RFC 8439 §2.3.2: key 00..1f, counter 1, nonce 00000009 0000004a 00000000.
        let mut input = [0u32; 16];
        input[..4].copy_from_slice(&SIGMA);
        for i in 0..8 {
            let b = (4 * i) as u32;
            input[4 + i] = b | (b + 1) << 8 | (b + 2) << 16 | (b + 3) << 24;
        }
        input[12] = 1;
        input[13] = 0x0900_0000;
        input[14] = 0x4a00_0000;
        input[15] = 0;
        let out = chacha_block(&input, 10);
        assert_eq!(out[0], 0xe4e7_f110);
        assert_eq!(out[1], 0x1559_3bd1);
        assert_eq!(out[15], 0x4e3c_50a2);
    }

    #[test]
    fn chacha12_stream_matches_reference() {
        // ChaCha12 with an all-zero key and nonce, block 0 (the rand_chacha /
        // eSTREAM test vector): first bytes 9b f4 9a 6a 07 55 f9 53 81 1f ce 12 5f 26 83 d5.
        let mut rng = MaskRng::from_seed([0; 32]);
        let mut out = [0u8; 16];
        rng.fill_bytes(&mut out);
        assert_eq!(
            out,
            [
                0x9b, 0xf4, 0x9a, 0x6a, 0x07, 0x55, 0xf9, 0x53, 0x81, 0x1f, 0xce, 0x12, 0x5f, 0x26,
                0x83, 0xd5
            ]
        );
    }

    #[test]
    fn four_blocks_side_by_side_equal_four_blocks_in_turn() {
        for (seed, counter) in [(3u32, 0u64), (9, 0xFFFF_FFFE), (1, u64::MAX - 1)] {
            let mut input = [0u32; 16];
            input[..4].copy_from_slice(&SIGMA);
            for (i, w) in input[4..].iter_mut().enumerate() {
                *w = seed.wrapping_mul(0x9E37_79B9).rotate_left(i as u32);
            }
            input[12] = counter as u32;
            input[13] = (counter >> 32) as u32;
            let four = chacha_blocks4(&input, 6);
            for l in 0..4u64 {
                let mut one = input;
                let c = counter.wrapping_add(l);
                one[12] = c as u32;
                one[13] = (c >> 32) as u32;
                let l = l as usize;
                assert_eq!(
                    &four[16 * l..16 * l + 16],
                    &chacha_block(&one, 6)[..],
                    "{l}"
                );
            }
        }
    }

    /// The buffered keystream is ChaCha12's blocks 0, 1, 2, ... in order,
    /// across refills, whichever path (AVX2 or SSE2/portable) computed it.
    #[test]
    fn keystream_is_consecutive_blocks_across_refills() {
        let seed: [u8; 32] = core::array::from_fn(|i| (i * 29 + 7) as u8);
        let mut rng = MaskRng::from_seed(seed);
        let input = rng.state;
        for block in 0..(3 * BUFFERED / 16) as u64 {
            let mut one = input;
            one[12] = block as u32;
            one[13] = (block >> 32) as u32;
            for (w, &want) in chacha_block(&one, 6).iter().enumerate() {
                assert_eq!(rng.next_u32(), want, "block {block} word {w}");
            }
        }
        // Near the end of the 32-bit low counter word the carry reaches word 13.
        let mut input = input;
        input[12] = u32::MAX - 3;
        let mut eight = [0u32; BUFFERED];
        chacha_blocks8(&input, 6, &mut eight);
        let start = u64::from(u32::MAX - 3);
        for l in 0..8u64 {
            let mut one = input;
            let c = start + l;
            one[12] = c as u32;
            one[13] = (c >> 32) as u32;
            let l = l as usize;
            assert_eq!(
                &eight[16 * l..16 * l + 16],
                &chacha_block(&one, 6)[..],
                "{l}"
            );
        }
    }

    #[test]
    fn keys_do_not_repeat_across_blocks() {
        let mut rng = MaskRng::from_seed([7; 32]);
        let keys: std::vec::Vec<[u8; 4]> = (0..200).map(|_| rng.next_key()).collect();
        let mut sorted = keys.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), keys.len());
        let mut other = MaskRng::from_seed([8; 32]);
        assert_ne!(other.next_key(), keys[0]);
    }
}
