//! Character classes of RFC 9110 (tokens, field values) and the small
//! byte-level helpers the readers and writers share.

/// `tchar` of RFC 9110 §5.6.2, as a 256-entry table.
pub(super) static TCHAR: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        let c = i as u8;
        t[i] = c.is_ascii_alphanumeric()
            || matches!(
                c,
                b'!' | b'#'
                    | b'$'
                    | b'%'
                    | b'&'
                    | b'\''
                    | b'*'
                    | b'+'
                    | b'-'
                    | b'.'
                    | b'^'
                    | b'_'
                    | b'`'
                    | b'|'
                    | b'~'
            );
        i += 1;
    }
    t
};

/// Whether `s` is a non-empty token (a valid header name or method).
#[inline]
pub fn is_token(s: &[u8]) -> bool {
    !s.is_empty() && super::scan::token(s, is_tchar)
}

/// A `tchar`.
#[inline]
pub(crate) fn is_tchar(c: u8) -> bool {
    TCHAR[c as usize]
}

/// A field-value byte: HTAB, SP, VCHAR or obs-text.
#[inline]
pub(crate) fn is_value_byte(c: u8) -> bool {
    c == b'\t' || (c >= 0x20 && c != 0x7f)
}

/// Whether `v` may be sent as a field value: HTAB, SP, VCHAR and obs-text,
/// so never CR, LF, NUL or another control byte (header injection).
/// Checked a word or an SSE2 block at a time (`http::scan`).
#[inline]
pub fn is_field_value(v: &[u8]) -> bool {
    super::scan::field_value(v, is_value_byte)
}

/// ASCII case-insensitive equality (header names), a word at a time.
#[inline]
pub fn eq_ignore_case(a: &[u8], b: &[u8]) -> bool {
    super::scan::eq_ignore_case(a, b)
}

/// `v` without leading and trailing spaces and tabs (OWS).
#[inline]
pub fn trim_ows(v: &[u8]) -> &[u8] {
    let mut s = 0;
    let mut e = v.len();
    while s < e && matches!(v[s], b' ' | b'\t') {
        s += 1;
    }
    while e > s && matches!(v[e - 1], b' ' | b'\t') {
        e -= 1;
    }
    &v[s..e]
}

/// The comma-separated elements of a list-valued field, trimmed, empty
/// elements skipped (RFC 9110 §5.6.1).
#[inline]
pub fn list_items(v: &[u8]) -> impl Iterator<Item = &[u8]> {
    v.split(|&c| c == b',')
        .map(trim_ows)
        .filter(|s| !s.is_empty())
}

/// Whether a list-valued field contains `token` (case-insensitive).
#[inline]
pub fn list_contains(v: &[u8], token: &[u8]) -> bool {
    list_items(v).any(|t| eq_ignore_case(t, token))
}

/// Writes `n` in decimal at the end of `out`; returns where the digits start.
#[inline]
pub fn dec_digits(mut n: u64, out: &mut [u8; 20]) -> usize {
    let mut i = out.len();
    loop {
        i -= 1;
        out[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return i;
        }
    }
}

/// Writes `n` in lower-case hex at the end of `out`; returns where the digits start.
#[inline]
pub fn hex_digits(mut n: u64, out: &mut [u8; 16]) -> usize {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut i = out.len();
    loop {
        i -= 1;
        out[i] = HEX[(n & 0xf) as usize];
        n >>= 4;
        if n == 0 {
            return i;
        }
    }
}

/// Parses a Content-Length value: 1*DIGIT, no sign, no spaces inside,
/// no overflow of `u64`.
#[inline(always)]
pub fn parse_decimal(v: &[u8]) -> Option<u64> {
    if v.is_empty() || v.len() > 20 {
        return None;
    }
    if v.len() <= 19 {
        // 19 digits stay below 10^19 < 2^64: no overflow checks needed.
        let mut n: u64 = 0;
        for &c in v {
            let d = c.wrapping_sub(b'0');
            if d > 9 {
                return None;
            }
            n = n * 10 + u64::from(d);
        }
        return Some(n);
    }
    let mut n: u64 = 0;
    for &c in v {
        if !c.is_ascii_digit() {
            return None;
        }
        n = n.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
    }
    Some(n)
}

/// The value of a hex digit.
#[inline]
pub fn hex_val(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_and_values() {
        assert!(is_token(b"Content-Type"));
        assert!(is_token(b"x-api-key!#$%&'*+.^_`|~"));
        assert!(!is_token(b""));
        assert!(!is_token(b"Bad Name"));
        assert!(!is_token(b"Bad:Name"));
        assert!(!is_token(b"X\r\nInjected"));
        assert!(!is_token("é".as_bytes()));
        assert!(is_field_value(b"application/json; charset=utf-8\t"));
        assert!(is_field_value("caf\u{e9}".as_bytes()));
        assert!(is_field_value(b""));
        for bad in [&b"a\rb"[..], b"a\nb", b"a\0b", b"a\x7fb", b"a\x01"] {
            assert!(!is_field_value(bad), "{bad:?}");
        }
    }

    #[test]
    fn case_and_lists() {
        assert!(eq_ignore_case(b"Content-Length", b"content-length"));
        assert!(!eq_ignore_case(b"Content-Length", b"content-lengt"));
        assert_eq!(trim_ows(b" \t x y \t"), b"x y");
        assert_eq!(trim_ows(b"  "), b"");
        let items: std::vec::Vec<&[u8]> = list_items(b" gzip ,, chunked,").collect();
        assert_eq!(items, [&b"gzip"[..], b"chunked"]);
        assert!(list_contains(b"keep-alive, Close", b"close"));
        assert!(!list_contains(b"closed", b"close"));
    }

    #[test]
    fn numbers() {
        let mut d = [0u8; 20];
        for n in [
            0u64,
            7,
            10,
            99,
            100,
            12345,
            9_999_999_999_999_999_999,
            10u64.pow(19),
            u64::MAX,
        ] {
            let s = dec_digits(n, &mut d);
            assert_eq!(&d[s..], std::format!("{n}").as_bytes());
            assert_eq!(parse_decimal(&d[s..]), Some(n));
        }
        let mut h = [0u8; 16];
        for n in [0u64, 0xa, 0x10, 0xdead_beef, u64::MAX] {
            let s = hex_digits(n, &mut h);
            assert_eq!(&h[s..], std::format!("{n:x}").as_bytes());
        }
        for bad in [
            &b""[..],
            b"+1",
            b"-1",
            b"1 2",
            b"0x10",
            b"18446744073709551616",
            b" 1",
        ] {
            assert_eq!(parse_decimal(bad), None, "{bad:?}");
        }
        assert_eq!(hex_val(b'F'), Some(15));
        assert_eq!(hex_val(b'g'), None);
    }
}
