//! UTF-8 validation on simdutf8: whole-buffer checks and the incremental check
//! used while a text message arrives in pieces.
//!
//! The frame reader assembles a text message contiguously in its buffer, so the
//! streaming state is just "how many leading bytes are known valid": an
//! unfinished multi-byte character at the end of what has arrived is carried
//! by re-validating from its first byte when more bytes come. An invalid
//! sequence is reported as soon as it is certain, even mid-character
//! (`F4 90` can never start a valid character), which is what Autobahn's
//! "fail fast" cases (6.4.x) check.

/// Whether `bytes` is entirely valid UTF-8. The fast path for complete payloads.
///
/// ASCII (most market data: JSON with ASCII symbols and numbers) is checked
/// first with a plain word scan, which stops at the first non-ASCII word:
/// simdutf8 handles a length that is not a multiple of 64 by copying the
/// tail into a padded block, which dominated the cost of short messages of
/// varying size. Anything else goes to simdutf8.
#[inline]
pub fn is_valid(bytes: &[u8]) -> bool {
    is_ascii(bytes) || simdutf8::basic::from_utf8(bytes).is_ok()
}

/// Whether every byte is below 0x80: the OR of all 8-byte words (the last
/// one overlapping the one before) has no high bit set. A reduction the
/// compiler vectorizes; no early exit, so no branch per word.
#[inline(always)]
fn is_ascii(bytes: &[u8]) -> bool {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    match bytes.last_chunk::<8>() {
        Some(&last) => {
            let (words, _) = bytes.as_chunks::<8>();
            let acc = words
                .iter()
                .fold(u64::from_ne_bytes(last), |a, w| a | u64::from_ne_bytes(*w));
            acc & HIGH == 0
        }
        None => bytes.iter().fold(0u8, |a, b| a | b) < 0x80,
    }
}

/// `bytes` as `&str` if it is valid UTF-8.
#[inline]
pub fn to_str(bytes: &[u8]) -> Option<&str> {
    simdutf8::basic::from_utf8(bytes).ok()
}

/// The byte sequence is not, and can never become, valid UTF-8.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Utf8Invalid;

/// Validate a prefix of a stream whose remaining bytes have not arrived yet.
///
/// Returns the number of leading bytes that form complete, valid characters;
/// the rest (at most 3 bytes) is the valid beginning of a character that more
/// input may complete. Fails as soon as the input is certain to be invalid.
#[inline]
pub fn validate_prefix(bytes: &[u8]) -> Result<usize, Utf8Invalid> {
    match simdutf8::compat::from_utf8(bytes) {
        Ok(_) => Ok(bytes.len()),
        Err(e) if e.error_len().is_none() => Ok(e.valid_up_to()),
        Err(_) => Err(Utf8Invalid),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    #[test]
    fn ascii_scan_every_length_and_position() {
        for n in 0..80 {
            let mut v: Vec<u8> = (0..n).map(|i| b'a' + (i % 26) as u8).collect();
            assert!(is_ascii(&v) && is_valid(&v), "{n}");
            for at in 0..n {
                v[at] = 0xC3;
                assert!(!is_ascii(&v), "{n} {at}");
                assert_eq!(is_valid(&v), core::str::from_utf8(&v).is_ok(), "{n} {at}");
                v[at] = b'x';
            }
        }
    }

    #[test]
    fn whole_buffers() {
        assert!(is_valid(b""));
        assert!(is_valid("κόσμε €𝄞".as_bytes()));
        assert!(!is_valid(b"\xff"));
        assert!(!is_valid(b"\xed\xa0\x80")); // surrogate
        assert!(!is_valid(b"\xc0\xaf")); // overlong
        assert_eq!(to_str(b"abc"), Some("abc"));
    }

    #[test]
    fn prefix_carries_an_unfinished_character() {
        let s = "a€𝄞".as_bytes(); // 1 + 3 + 4 bytes
        assert_eq!(validate_prefix(&s[..2]), Ok(1));
        assert_eq!(validate_prefix(&s[..3]), Ok(1));
        assert_eq!(validate_prefix(&s[..4]), Ok(4));
        assert_eq!(validate_prefix(&s[..7]), Ok(4));
        assert_eq!(validate_prefix(s), Ok(8));
    }

    #[test]
    fn prefix_fails_fast() {
        // Autobahn 6.4.1: F4 90 80 80 is above U+10FFFF; certain after two bytes.
        assert_eq!(validate_prefix(b"ok\xf4\x90"), Err(Utf8Invalid));
        // A surrogate's first two bytes are already invalid.
        assert_eq!(validate_prefix(b"\xed\xa0"), Err(Utf8Invalid));
        // A lone continuation byte.
        assert_eq!(validate_prefix(b"\x80"), Err(Utf8Invalid));
        // A lead byte followed by a non-continuation.
        assert_eq!(validate_prefix(b"\xe2\x28"), Err(Utf8Invalid));
    }

    #[test]
    fn streaming_equals_whole_for_every_split() {
        let text = "Hello-µ@ßöäüàá-UTF-8!! κόσμε 𝄞 € \u{10FFFF}".as_bytes();
        let mut bad: Vec<u8> = text.to_vec();
        bad[20] = 0xff;
        for input in [text, &bad[..]] {
            let whole = is_valid(input);
            for cut in 0..=input.len() {
                // Validate the first piece as a prefix, then continue from the
                // carried position over the whole, as the frame reader does.
                let streamed = match validate_prefix(&input[..cut]) {
                    Ok(done) => is_valid(&input[done..]),
                    Err(_) => false,
                };
                assert_eq!(streamed, whole, "cut at {cut}");
            }
        }
    }
}
