//! Copies of small payloads without a call into `memcpy`.
//!
//! A 128-byte market-data message is copied in a few nanoseconds, so the call
//! into the C library's `memcpy` (a PLT jump, its size dispatch, `vzeroupper`)
//! is a large part of encoding one. [`copy`] handles up to 256 bytes with
//! straight-line fixed-size copies of the head and the tail, which overlap
//! (the bytes they share receive the same value twice), the way `memcpy`
//! implementations do it inside; the compiler turns each fixed-size copy
//! into a few vector moves. Longer payloads go to `copy_from_slice`.

/// Copy `src` into `dst[..src.len()]`; `dst` must be at least as long
/// (checked: a shorter `dst` panics like `copy_from_slice`, which callers
/// rule out by sizing `dst` first).
#[inline(always)]
pub fn copy(dst: &mut [u8], src: &[u8]) {
    let n = src.len();
    let dst = &mut dst[..n];
    match n {
        16..=32 => {
            block::<16>(dst, src, 0);
            block::<16>(dst, src, n - 16);
        }
        33..=64 => {
            block::<32>(dst, src, 0);
            block::<32>(dst, src, n - 32);
        }
        65..=128 => {
            block::<64>(dst, src, 0);
            block::<64>(dst, src, n - 64);
        }
        129..=256 => {
            block::<64>(dst, src, 0);
            block::<64>(dst, src, 64);
            block::<64>(dst, src, n - 128);
            block::<64>(dst, src, n - 64);
        }
        _ => dst.copy_from_slice(src),
    }
}

/// `dst[at..at + N] = src[at..at + N]`, a no-op if out of range (never, as
/// [`copy`] calls it).
#[inline(always)]
fn block<const N: usize>(dst: &mut [u8], src: &[u8], at: usize) {
    let s: Option<&[u8; N]> = src.get(at..).and_then(|s| s.first_chunk::<N>());
    let d: Option<&mut [u8; N]> = dst.get_mut(at..).and_then(|d| d.first_chunk_mut::<N>());
    if let (Some(d), Some(s)) = (d, s) {
        *d = *s;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec;
    use std::vec::Vec;

    #[test]
    fn every_length_and_offset_up_to_300() {
        let src: Vec<u8> = (0..400u32).map(|i| (i * 7 + 3) as u8).collect();
        for n in 0..=300 {
            for off in [0, 1, 7] {
                let mut dst = vec![0xAAu8; n + 20];
                copy(&mut dst[off..], &src[off..off + n]);
                assert_eq!(&dst[off..off + n], &src[off..off + n], "n {n} off {off}");
                assert!(dst[..off].iter().all(|&b| b == 0xAA), "before, n {n}");
                assert!(dst[off + n..].iter().all(|&b| b == 0xAA), "after, n {n}");
            }
        }
    }
}
