//! Close codes and close frames (RFC 6455 §5.5.1, §7.4).

use super::error::Error;

/// A close status code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CloseCode(pub u16);

impl CloseCode {
    /// 1000: normal closure.
    pub const NORMAL: CloseCode = CloseCode(1000);
    /// 1001: going away (server shutdown, page navigation).
    pub const GOING_AWAY: CloseCode = CloseCode(1001);
    /// 1002: protocol error.
    pub const PROTOCOL_ERROR: CloseCode = CloseCode(1002);
    /// 1003: a data type the endpoint cannot accept.
    pub const UNSUPPORTED: CloseCode = CloseCode(1003);
    /// 1005: no status code was present (never on the wire).
    pub const NO_STATUS: CloseCode = CloseCode(1005);
    /// 1006: closed without a close frame (never on the wire).
    pub const ABNORMAL: CloseCode = CloseCode(1006);
    /// 1007: payload inconsistent with the message type (invalid UTF-8).
    pub const INVALID_PAYLOAD: CloseCode = CloseCode(1007);
    /// 1008: policy violation.
    pub const POLICY: CloseCode = CloseCode(1008);
    /// 1009: message too big.
    pub const TOO_BIG: CloseCode = CloseCode(1009);
    /// 1010: the client expected an extension the server did not negotiate.
    pub const MANDATORY_EXTENSION: CloseCode = CloseCode(1010);
    /// 1011: unexpected condition on the server.
    pub const INTERNAL_ERROR: CloseCode = CloseCode(1011);
    /// 1012: service restart (IANA registry).
    pub const SERVICE_RESTART: CloseCode = CloseCode(1012);
    /// 1013: try again later (IANA registry).
    pub const TRY_AGAIN_LATER: CloseCode = CloseCode(1013);
    /// 1014: bad gateway (IANA registry).
    pub const BAD_GATEWAY: CloseCode = CloseCode(1014);
    /// 1015: TLS handshake failure (never on the wire).
    pub const TLS_HANDSHAKE: CloseCode = CloseCode(1015);

    /// Whether the code may appear in a close frame: 1000-1003, 1007-1014
    /// (the RFC's codes and the IANA registry's), and 3000-4999 (registered
    /// and private use). 1004-1006, 1015, 0-999, 1016-2999 and 5000+ are not.
    #[inline]
    pub const fn is_valid_on_wire(self) -> bool {
        matches!(self.0, 1000..=1003 | 1007..=1014 | 3000..=4999)
    }
}

impl From<u16> for CloseCode {
    fn from(v: u16) -> Self {
        CloseCode(v)
    }
}

impl From<CloseCode> for u16 {
    fn from(c: CloseCode) -> Self {
        c.0
    }
}

/// The body of a close frame that carried a status code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CloseFrame<'a> {
    /// The status code.
    pub code: CloseCode,
    /// The reason, valid UTF-8, at most 123 bytes.
    pub reason: &'a str,
}

/// Parse a close payload (already unmasked). An empty payload is `None`.
pub(crate) fn parse_close(payload: &[u8]) -> Result<Option<CloseFrame<'_>>, Error> {
    match payload {
        [] => Ok(None),
        [_] => Err(Error::InvalidClosePayload),
        [hi, lo, reason @ ..] => {
            let code = CloseCode(u16::from_be_bytes([*hi, *lo]));
            if !code.is_valid_on_wire() {
                return Err(Error::InvalidCloseCode(code.0));
            }
            let reason = crate::simd::utf8::to_str(reason).ok_or(Error::InvalidUtf8)?;
            Ok(Some(CloseFrame { code, reason }))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_validity_per_rfc_7_4() {
        for ok in [
            1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 3000, 3999,
            4000, 4999,
        ] {
            assert!(CloseCode(ok).is_valid_on_wire(), "{ok}");
        }
        for bad in [
            0, 999, 1004, 1005, 1006, 1015, 1016, 1100, 2000, 2999, 5000, 65535,
        ] {
            assert!(!CloseCode(bad).is_valid_on_wire(), "{bad}");
        }
    }

    #[test]
    fn close_payloads() {
        assert_eq!(parse_close(b""), Ok(None));
        assert_eq!(parse_close(b"\x03"), Err(Error::InvalidClosePayload));
        assert_eq!(
            parse_close(b"\x03\xe8bye"),
            Ok(Some(CloseFrame {
                code: CloseCode::NORMAL,
                reason: "bye"
            }))
        );
        assert_eq!(parse_close(b"\x03\xed"), Err(Error::InvalidCloseCode(1005)));
        assert_eq!(parse_close(b"\x03\xe8\xff"), Err(Error::InvalidUtf8));
    }
}
