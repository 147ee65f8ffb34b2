//! Base64, standard alphabet with padding (RFC 4648 §4), into caller buffers.
//!
//! Decoding is strict: the length must be a multiple of 4, `=` may only end the input,
//! and the unused bits before the padding must be zero (canonical encodings only).

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Why base64 encoding or decoding failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// `out` cannot hold the result.
    BufferTooSmall,
    /// Input length is not a multiple of 4.
    InvalidLength,
    /// A byte outside the alphabet, or `=` somewhere other than the end.
    InvalidByte,
    /// Non-zero bits before the padding (not a canonical encoding).
    InvalidPadding,
}

/// Length of the encoding of `n` bytes, or `None` on overflow.
pub const fn encoded_len(n: usize) -> Option<usize> {
    match n.checked_add(2) {
        Some(m) => (m / 3).checked_mul(4),
        None => None,
    }
}

/// Encode `input` into `out`; returns the number of bytes written.
pub fn encode(input: &[u8], out: &mut [u8]) -> Result<usize, Error> {
    let need = encoded_len(input.len()).ok_or(Error::BufferTooSmall)?;
    let out = out.get_mut(..need).ok_or(Error::BufferTooSmall)?;
    for (src, dst) in input.chunks(3).zip(out.chunks_exact_mut(4)) {
        let b0 = src.first().copied().unwrap_or(0);
        let b1 = src.get(1).copied().unwrap_or(0);
        let b2 = src.get(2).copied().unwrap_or(0);
        let n = (u32::from(b0) << 16) | (u32::from(b1) << 8) | u32::from(b2);
        let sym = |shift: u32| ALPHABET[((n >> shift) & 63) as usize];
        dst[0] = sym(18);
        dst[1] = sym(12);
        dst[2] = if src.len() > 1 { sym(6) } else { b'=' };
        dst[3] = if src.len() > 2 { sym(0) } else { b'=' };
    }
    Ok(need)
}

fn value(c: u8) -> Option<u32> {
    let v = match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => return None,
    };
    Some(u32::from(v))
}

/// Decode padded base64 `input` into `out`; returns the number of bytes written.
pub fn decode(input: &[u8], out: &mut [u8]) -> Result<usize, Error> {
    if !input.len().is_multiple_of(4) {
        return Err(Error::InvalidLength);
    }
    let pad = match input {
        [.., b'=', b'='] => 2,
        [.., b'='] => 1,
        _ => 0,
    };
    let need = input.len() / 4 * 3 - pad;
    let out = out.get_mut(..need).ok_or(Error::BufferTooSmall)?;

    let quads = input.len() / 4;
    let mut written = 0;
    for (i, q) in input.chunks_exact(4).enumerate() {
        let last = i + 1 == quads;
        let pad_here = if last { pad } else { 0 };
        let mut n = 0u32;
        for (j, &c) in q.iter().enumerate() {
            let v = if j >= 4 - pad_here {
                0 // a '=' the pad count already accounts for
            } else {
                value(c).ok_or(Error::InvalidByte)?
            };
            n = (n << 6) | v;
        }
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        let keep = 3 - pad_here;
        let low_bits_mask = match pad_here {
            2 => 0xFFFF,
            1 => 0xFF,
            _ => 0,
        };
        if n & low_bits_mask != 0 {
            return Err(Error::InvalidPadding);
        }
        let dst = out
            .get_mut(written..written + keep)
            .ok_or(Error::BufferTooSmall)?;
        dst.copy_from_slice(bytes.get(..keep).unwrap_or(&bytes));
        written += keep;
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    const VECTORS: &[(&str, &str)] = &[
        ("", ""),
        ("f", "Zg=="),
        ("fo", "Zm8="),
        ("foo", "Zm9v"),
        ("foob", "Zm9vYg=="),
        ("fooba", "Zm9vYmE="),
        ("foobar", "Zm9vYmFy"),
    ];

    #[test]
    fn rfc4648_encode() {
        for &(plain, enc) in VECTORS {
            let mut out = [0u8; 16];
            let n = encode(plain.as_bytes(), &mut out).unwrap();
            assert_eq!(&out[..n], enc.as_bytes(), "{plain:?}");
        }
    }

    #[test]
    fn rfc4648_decode() {
        for &(plain, enc) in VECTORS {
            let mut out = [0u8; 16];
            let n = decode(enc.as_bytes(), &mut out).unwrap();
            assert_eq!(&out[..n], plain.as_bytes(), "{enc:?}");
        }
    }

    #[test]
    fn encode_buffer_too_small() {
        let mut out = [0u8; 7];
        assert_eq!(encode(b"foobar", &mut out), Err(Error::BufferTooSmall));
        assert_eq!(encode(b"", &mut []), Ok(0));
    }

    #[test]
    fn decode_rejects() {
        let mut out = [0u8; 16];
        assert_eq!(decode(b"Zm9", &mut out), Err(Error::InvalidLength));
        assert_eq!(decode(b"Zm9vY", &mut out), Err(Error::InvalidLength));
        assert_eq!(decode(b"Zm9*", &mut out), Err(Error::InvalidByte));
        assert_eq!(decode(b"Z=9v", &mut out), Err(Error::InvalidByte));
        assert_eq!(decode(b"Zg==Zm9v", &mut out), Err(Error::InvalidByte));
        assert_eq!(decode(b"====", &mut out), Err(Error::InvalidByte));
        assert_eq!(decode(b"Z===", &mut out), Err(Error::InvalidByte));
        assert_eq!(decode(b"Zh==", &mut out), Err(Error::InvalidPadding));
        assert_eq!(decode(b"Zm9=", &mut out), Err(Error::InvalidPadding));
        assert_eq!(
            decode(b"Zm9vYmFy", &mut out[..5]),
            Err(Error::BufferTooSmall)
        );
    }

    #[test]
    fn round_trip_all_lengths() {
        let data: std::vec::Vec<u8> = (0..=255u8).collect();
        // Every length natively; under Miri every length up to 70 (all padding
        // cases, several full lines of quads) and then every 11th.
        let lengths = (0..data.len()).filter(|&n| !cfg!(miri) || n < 70 || n % 11 == 0);
        for n in lengths {
            let mut enc = [0u8; 344];
            let e = encode(&data[..n], &mut enc).unwrap();
            assert_eq!(Some(e), encoded_len(n));
            let mut dec = [0u8; 256];
            let d = decode(&enc[..e], &mut dec).unwrap();
            assert_eq!(&dec[..d], &data[..n]);
        }
    }

    proptest::proptest! {
        #[test]
        fn decode_never_panics(input in proptest::collection::vec(proptest::num::u8::ANY, 0..40),
                               cap in 0usize..40) {
            let mut out = [0u8; 40];
            let _ = decode(&input, &mut out[..cap]);
        }
    }
}
