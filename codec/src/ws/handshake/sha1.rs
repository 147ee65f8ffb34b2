//! A small streaming SHA-1 (FIPS 180-1), used only to compute `Sec-WebSocket-Accept`.
//!
//! SHA-1 is broken for collision resistance; RFC 6455 uses it as a checksum, not for
//! security. Do not use this for anything else.

const BLOCK: usize = 64;

/// Streaming SHA-1 state: `Sha1::new().update(a).update(b).finalize()`.
#[derive(Clone, Debug)]
pub struct Sha1 {
    state: [u32; 5],
    buf: [u8; BLOCK],
    /// Bytes pending in `buf`; always `< BLOCK` between calls.
    buf_len: usize,
    /// Total message length in bytes (mod 2^64).
    len: u64,
}

impl Default for Sha1 {
    fn default() -> Self {
        Self::new()
    }
}

impl Sha1 {
    /// A fresh hasher.
    pub const fn new() -> Self {
        Self {
            state: [
                0x6745_2301,
                0xEFCD_AB89,
                0x98BA_DCFE,
                0x1032_5476,
                0xC3D2_E1F0,
            ],
            buf: [0; BLOCK],
            buf_len: 0,
            len: 0,
        }
    }

    /// SHA-1 of `data` in one call.
    pub fn digest(data: &[u8]) -> [u8; 20] {
        Self::new().update(data).finalize()
    }

    /// Feed more message bytes.
    pub fn update(&mut self, data: &[u8]) -> &mut Self {
        self.len = self.len.wrapping_add(data.len() as u64);
        let mut data = data;

        if self.buf_len > 0 {
            let pending = self.buf.get_mut(self.buf_len..).unwrap_or_default();
            let take = pending.len().min(data.len());
            let (head, rest) = data.split_at_checked(take).unwrap_or((data, &[]));
            if let Some(dst) = pending.get_mut(..take) {
                dst.copy_from_slice(head);
            }
            self.buf_len += take;
            data = rest;
            if self.buf_len < BLOCK {
                return self;
            }
            let block = self.buf;
            compress(&mut self.state, &block);
            self.buf_len = 0;
        }

        let mut blocks = data.chunks_exact(BLOCK);
        for block in &mut blocks {
            if let Ok(block) = <&[u8; BLOCK]>::try_from(block) {
                compress(&mut self.state, block);
            }
        }
        let tail = blocks.remainder();
        if let Some(dst) = self.buf.get_mut(..tail.len()) {
            dst.copy_from_slice(tail);
            self.buf_len = tail.len();
        }
        self
    }

    /// The digest of everything fed so far. Does not consume the hasher.
    pub fn finalize(&self) -> [u8; 20] {
        const PADDING: [u8; BLOCK] = {
            let mut p = [0u8; BLOCK];
            p[0] = 0x80;
            p
        };
        let mut h = self.clone();
        let bit_len = self.len.wrapping_mul(8);
        // Pad to 56 mod 64, leaving room for the 8-byte length.
        let pad = if h.buf_len < 56 {
            56 - h.buf_len
        } else {
            120 - h.buf_len
        };
        h.update(PADDING.get(..pad).unwrap_or(&PADDING));
        h.update(&bit_len.to_be_bytes());
        debug_assert_eq!(h.buf_len, 0);

        let mut out = [0u8; 20];
        for (dst, word) in out.chunks_exact_mut(4).zip(h.state) {
            dst.copy_from_slice(&word.to_be_bytes());
        }
        out
    }
}

fn compress(state: &mut [u32; 5], block: &[u8; BLOCK]) {
    let mut w = [0u32; 80];
    for (wt, bytes) in w.iter_mut().zip(block.chunks_exact(4)) {
        *wt = u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    }
    for t in 16..80 {
        w[t] = (w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16]).rotate_left(1);
    }

    let [mut a, mut b, mut c, mut d, mut e] = *state;
    for (t, &wt) in w.iter().enumerate() {
        let (f, k) = match t {
            0..=19 => ((b & c) | (!b & d), 0x5A82_7999),
            20..=39 => (b ^ c ^ d, 0x6ED9_EBA1),
            40..=59 => ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC),
            _ => (b ^ c ^ d, 0xCA62_C1D6),
        };
        let temp = a
            .rotate_left(5)
            .wrapping_add(f)
            .wrapping_add(e)
            .wrapping_add(k)
            .wrapping_add(wt);
        e = d;
        d = c;
        c = b.rotate_left(30);
        b = a;
        a = temp;
    }

    for (s, v) in state.iter_mut().zip([a, b, c, d, e]) {
        *s = s.wrapping_add(v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(d: [u8; 20]) -> std::string::String {
        use core::fmt::Write;
        let mut s = std::string::String::new();
        for b in d {
            let _ = write!(s, "{b:02x}");
        }
        s
    }

    #[test]
    fn fips_abc() {
        assert_eq!(
            hex(Sha1::digest(b"abc")),
            "a9993e364706816aba3e25717850c26c9cd0d89d"
        );
    }

    #[test]
    fn fips_448_bit() {
        assert_eq!(
            hex(Sha1::digest(
                b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
            )),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1"
        );
    }

    #[test]
    // A million bytes through the interpreter takes most of an hour; the other
    // vectors already cover multi-block input under Miri.
    #[cfg_attr(miri, ignore)]
    fn fips_million_a() {
        let chunk = [b'a'; 1000];
        let mut h = Sha1::new();
        for _ in 0..1000 {
            h.update(&chunk);
        }
        assert_eq!(
            hex(h.finalize()),
            "34aa973cd4c4daa4f61eeb2bdbad27316534016f"
        );
    }

    #[test]
    fn empty() {
        assert_eq!(
            hex(Sha1::new().finalize()),
            "da39a3ee5e6b4b0d3255bfef95601890afd80709"
        );
    }

    #[test]
    fn streaming_matches_one_shot_at_every_split() {
        let msg: std::vec::Vec<u8> = (0..=255u8).cycle().take(300).collect();
        let whole = Sha1::digest(&msg);
        // Every split natively; every 7th under Miri (each split hashes 300 bytes).
        for split in (0..msg.len()).step_by(if cfg!(miri) { 7 } else { 1 }) {
            let (a, b) = msg.split_at(split);
            assert_eq!(Sha1::new().update(a).update(b).finalize(), whole);
        }
        // Byte at a time, and lengths around the padding boundary.
        let mut h = Sha1::new();
        for &b in &msg {
            h.update(&[b]);
        }
        assert_eq!(h.finalize(), whole);
        for n in 50..70 {
            let one = Sha1::digest(&msg[..n]);
            let mut h = Sha1::new();
            for c in msg[..n].chunks(7) {
                h.update(c);
            }
            assert_eq!(h.finalize(), one);
        }
    }

    #[test]
    fn finalize_does_not_consume() {
        let mut h = Sha1::new();
        h.update(b"ab");
        let _ = h.finalize();
        h.update(b"c");
        assert_eq!(h.finalize(), Sha1::digest(b"abc"));
    }
}
