//! Inputs shared by every library in a scenario: market-data-like payloads
//! and their wire frames, built once, by code independent of the codec under
//! test (a frame encoder of a dozen lines, checked against RFC 6455 examples).

/// A deterministic generator for payload digits and masking keys (SplitMix64).
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator from `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// The next 64 bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A masking key.
    pub fn key(&mut self) -> [u8; 4] {
        (self.next_u64() as u32).to_le_bytes()
    }
}

/// An ASCII, JSON trade-tick-like text of exactly `len` bytes (`len >= 2`).
/// `rng` varies the numbers from one payload to the next.
pub fn quote_text(len: usize, rng: &mut SplitMix64) -> String {
    assert!(len >= 2, "a quote needs at least {{}}");
    let r = rng.next_u64();
    let mut s = format!(
        r#"{{"e":"trade","E":{},"s":"BTCUSDT","t":{},"p":"{}.{:02}","q":"0.{:08}","m":{}"#,
        1_718_000_000_000u64 + (r & 0xFFFF),
        3_200_000_000u64 + (r >> 40),
        60_000 + (r >> 16) % 10_000,
        (r >> 8) % 100,
        (r >> 24) % 100_000_000,
        r & 1 == 0,
    );
    // Pad with a filler field, or cut, to land exactly on `len` with a closing brace.
    const PAD: &str = r#","x":""#;
    if s.len() + PAD.len() + 2 <= len {
        s.push_str(PAD);
        while s.len() + 2 < len {
            s.push('z');
        }
        s.push('"');
    } else if s.len() >= len {
        s.truncate(len - 1);
    } else {
        // Too short for the filler field, too long to cut: JSON whitespace.
        while s.len() + 1 < len {
            s.push(' ');
        }
    }
    s.push('}');
    debug_assert_eq!(s.len(), len);
    s
}

/// A JSON-like text of exactly `len` bytes (`len >= 2`) whose characters are
/// mixed 1- to 4-byte UTF-8: Latin accents, Cyrillic, Greek (2 bytes), CJK,
/// the euro sign (3 bytes), emoji (4 bytes) and some ASCII, nine bytes in
/// ten non-ASCII, spread through the whole payload (a chat message or
/// a non-English instrument name; no ASCII run longer than a few bytes, so
/// an ASCII fast path cannot skip the real validation). `rng` varies it.
pub fn mixed_text(len: usize, rng: &mut SplitMix64) -> String {
    assert!(len >= 2, "a text needs at least {{}}");
    const POOL: [&str; 16] = [
        "é", "ü", "ñ", "Ж", "λ", "ß", "€", "日", "本", "語", "中", "😀", "🚀", "a", "7", " ",
    ];
    let mut s = String::with_capacity(len);
    s.push('{');
    while s.len() + 1 < len {
        let room = len - 1 - s.len();
        let c = POOL[(rng.next_u64() % POOL.len() as u64) as usize];
        if c.len() <= room {
            s.push_str(c);
        } else {
            // Fill the last byte or three with ASCII to land exactly on `len`.
            s.push('z');
        }
    }
    s.push('}');
    debug_assert_eq!(s.len(), len);
    s
}

/// WebSocket opcodes used by the inputs.
pub const OP_TEXT: u8 = 0x1;
/// Binary opcode.
pub const OP_BINARY: u8 = 0x2;

/// Append one final frame of `opcode` carrying `payload`, masked with `key`
/// if given (RFC 6455 §5.2 layout, shortest length encoding).
pub fn push_frame(out: &mut Vec<u8>, opcode: u8, payload: &[u8], key: Option<[u8; 4]>) {
    out.push(0x80 | (opcode & 0x0F));
    let mbit = if key.is_some() { 0x80 } else { 0 };
    let n = payload.len();
    if n < 126 {
        out.push(mbit | n as u8);
    } else if n <= 0xFFFF {
        out.push(mbit | 126);
        out.extend_from_slice(&(n as u16).to_be_bytes());
    } else {
        out.push(mbit | 127);
        out.extend_from_slice(&(n as u64).to_be_bytes());
    }
    match key {
        Some(k) => {
            out.extend_from_slice(&k);
            out.extend(payload.iter().enumerate().map(|(i, b)| b ^ k[i & 3]));
        }
        None => out.extend_from_slice(payload),
    }
}

/// `payloads` as back-to-back final frames; `keys[i]` masks frame `i` if given.
pub fn frames<P: AsRef<[u8]>>(opcode: u8, payloads: &[P], keys: Option<&[[u8; 4]]>) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, p) in payloads.iter().enumerate() {
        push_frame(&mut out, opcode, p.as_ref(), keys.map(|k| k[i % k.len()]));
    }
    out
}

/// Header length of a frame carrying `len` payload bytes.
pub fn header_len(len: usize, masked: bool) -> usize {
    let base = if len < 126 {
        2
    } else if len <= 0xFFFF {
        4
    } else {
        10
    };
    base + if masked { 4 } else { 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_have_the_asked_length() {
        let mut rng = SplitMix64::new(1);
        for len in (2..=300).chain([512, 2048]) {
            let q = quote_text(len, &mut rng);
            assert_eq!(q.len(), len);
            assert!(q.is_ascii() && q.starts_with('{') && q.ends_with('}'));
        }
    }

    #[test]
    fn mixed_texts_have_the_asked_length_and_are_mostly_multibyte() {
        let mut rng = SplitMix64::new(2);
        for len in (2..=300).chain([512, 2048]) {
            let t = mixed_text(len, &mut rng);
            assert_eq!(t.len(), len);
            assert!(t.starts_with('{') && t.ends_with('}'));
            if len >= 128 {
                let multi = t.bytes().filter(|b| *b >= 0x80).count();
                assert!(multi * 2 > len, "{multi} of {len} bytes non-ASCII");
                assert!(t.chars().any(|c| c.len_utf8() == 2));
                assert!(t.chars().any(|c| c.len_utf8() == 3));
                assert!(t.chars().any(|c| c.len_utf8() == 4));
            }
        }
    }

    #[test]
    fn rfc6455_examples() {
        // §5.7: a single-frame unmasked text message "Hello", and its masked form.
        let mut out = Vec::new();
        push_frame(&mut out, OP_TEXT, b"Hello", None);
        assert_eq!(out, [0x81, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f]);
        out.clear();
        push_frame(&mut out, OP_TEXT, b"Hello", Some([0x37, 0xfa, 0x21, 0x3d]));
        assert_eq!(
            out,
            [
                0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58
            ]
        );
        // 256 bytes of binary: 16-bit length.
        out.clear();
        push_frame(&mut out, OP_BINARY, &[0u8; 256], None);
        assert_eq!(&out[..4], &[0x82, 0x7E, 0x01, 0x00]);
        assert_eq!(out.len(), header_len(256, false) + 256);
    }
}
