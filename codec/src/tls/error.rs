//! The TLS codec's error type: every failure of the TLS layer as a typed value, with a
//! coarse [`TlsErrorKind`] for callers that branch on the cause.

use core::fmt;

use rustls::pki_types::ServerName;
use rustls::{AlertDescription, CertificateError, Error as RustlsError};

/// Everything the TLS codec can fail with. After an error other than
/// [`OutputFull`](TlsError::OutputFull) the connection is dead: every later call
/// returns an error too.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum TlsError {
    /// rustls refused the connection (certificate, protocol, decryption, alert...).
    /// [`TlsError::kind`] classifies it.
    Rustls(RustlsError),
    /// The transport saw end-of-stream before the peer's close_notify: the data may
    /// have been truncated by an attacker, so it is an error (RFC 8446 §6.1).
    UnexpectedEof,
    /// The incoming buffer is full and holds no complete record: raise its capacity
    /// (it must hold the largest record, 16 KiB + 2 KiB + 5, and during the handshake
    /// the largest handshake message, typically the certificate chain).
    IncomingFull,
    /// The caller's output buffer has no room for `required` bytes. Nothing was
    /// written; send what is waiting and try again.
    OutputFull {
        /// Contiguous free bytes needed.
        required: usize,
    },
    /// The record sequence space is exhausted and the keys cannot be refreshed
    /// (TLS 1.2): the connection must be closed.
    EncryptExhausted,
    /// Application data cannot be sent now: the handshake is not complete, or we
    /// already sent close_notify.
    NotWritable,
    /// The peer sent 0-RTT early data, which the codec does not accept (it can be
    /// replayed); leave `ServerConfig::max_early_data_size` at 0.
    EarlyData,
    /// rustls reported a connection state this version of the codec does not know
    /// (rustls marks its state enum non-exhaustive).
    UnknownState,
}

/// The cause of a [`TlsError`], coarse enough to branch on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TlsErrorKind {
    /// The peer's certificate chains to no trusted root.
    UnknownIssuer,
    /// The peer's certificate is not valid for the name we asked for.
    NameMismatch,
    /// The peer's certificate has expired or is not valid yet.
    Expired,
    /// The peer presented a CA certificate as its own (end-entity) certificate: a
    /// server must present a leaf certificate issued by the CA, not the CA itself.
    CaUsedAsLeaf,
    /// Any other certificate problem (bad signature, encoding, revoked, ...).
    Certificate,
    /// No protocol version, cipher suite, group or signature scheme in common.
    Incompatible,
    /// The peer sent a malformed or out-of-place record or message.
    Corrupt,
    /// A record failed authentication (garbled ciphertext, wrong keys).
    Decrypt,
    /// The peer sent a fatal alert.
    AlertReceived,
    /// The stream ended without close_notify.
    Truncated,
    /// A buffer of ours is too small (incoming or output).
    Buffer,
    /// Anything else (configuration, exhausted keys, internal state).
    Other,
}

impl TlsError {
    /// What went wrong, in broad strokes.
    pub fn kind(&self) -> TlsErrorKind {
        match self {
            TlsError::Rustls(e) => rustls_kind(e),
            TlsError::UnexpectedEof => TlsErrorKind::Truncated,
            TlsError::IncomingFull | TlsError::OutputFull { .. } => TlsErrorKind::Buffer,
            TlsError::EncryptExhausted
            | TlsError::NotWritable
            | TlsError::EarlyData
            | TlsError::UnknownState => TlsErrorKind::Other,
        }
    }

    /// The alert the peer sent, if this is [`TlsErrorKind::AlertReceived`].
    pub fn alert(&self) -> Option<AlertDescription> {
        match self {
            TlsError::Rustls(RustlsError::AlertReceived(a)) => Some(*a),
            _ => None,
        }
    }
}

fn rustls_kind(e: &RustlsError) -> TlsErrorKind {
    match e {
        RustlsError::InvalidCertificate(c) => match c {
            CertificateError::UnknownIssuer => TlsErrorKind::UnknownIssuer,
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
                TlsErrorKind::NameMismatch
            }
            CertificateError::Expired
            | CertificateError::ExpiredContext { .. }
            | CertificateError::NotValidYet
            | CertificateError::NotValidYetContext { .. } => TlsErrorKind::Expired,
            c if ca_used_as_leaf(c) => TlsErrorKind::CaUsedAsLeaf,
            _ => TlsErrorKind::Certificate,
        },
        RustlsError::NoCertificatesPresented => TlsErrorKind::Certificate,
        RustlsError::PeerIncompatible(_) => TlsErrorKind::Incompatible,
        RustlsError::InvalidMessage(_)
        | RustlsError::InappropriateMessage { .. }
        | RustlsError::InappropriateHandshakeMessage { .. }
        | RustlsError::PeerMisbehaved(_)
        | RustlsError::PeerSentOversizedRecord => TlsErrorKind::Corrupt,
        RustlsError::DecryptError => TlsErrorKind::Decrypt,
        RustlsError::AlertReceived(AlertDescription::ProtocolVersion) => TlsErrorKind::Incompatible,
        RustlsError::AlertReceived(_) => TlsErrorKind::AlertReceived,
        _ => TlsErrorKind::Other,
    }
}

impl From<RustlsError> for TlsError {
    fn from(e: RustlsError) -> Self {
        TlsError::Rustls(e)
    }
}

/// webpki's `CaUsedAsEndEntity`, which rustls passes on as an opaque
/// `CertificateError::Other` (its text is only there when rustls has its `std` feature).
fn ca_used_as_leaf(c: &CertificateError) -> bool {
    match c {
        CertificateError::Other(o) => {
            let mut find = Find {
                needle: "CaUsedAsEndEntity",
                found: false,
            };
            let _ = fmt::write(&mut find, format_args!("{o}"));
            find.found
        }
        _ => false,
    }
}

/// A `fmt::Write` sink that only says whether `needle` appeared in one piece written.
struct Find {
    needle: &'static str,
    found: bool,
}

impl fmt::Write for Find {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.found |= s.contains(self.needle);
        Ok(())
    }
}

/// A certificate problem in words: what is wrong with the peer's certificate.
fn certificate(f: &mut fmt::Formatter<'_>, c: &CertificateError) -> fmt::Result {
    f.write_str("TLS: ")?;
    match c {
        CertificateError::UnknownIssuer => {
            f.write_str("the peer's certificate is not signed by a trusted CA (unknown issuer)")
        }
        CertificateError::NotValidForNameContext {
            expected,
            presented,
        } => {
            f.write_str("the peer's certificate is not valid for the name ")?;
            match expected {
                ServerName::DnsName(d) => f.write_str(d.as_ref())?,
                // An IP literal (its text form needs std; the debug form says it).
                other => write!(f, "{other:?}")?,
            }
            f.write_str(" (wrong name); it is valid for ")?;
            if presented.is_empty() {
                return f.write_str("no name");
            }
            for (i, name) in presented.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                f.write_str(bare_name(name))?;
            }
            Ok(())
        }
        CertificateError::NotValidForName => {
            f.write_str("the peer's certificate is not valid for the name asked for (wrong name)")
        }
        CertificateError::ExpiredContext { time, not_after } => {
            validity(f, "expired on", not_after.as_secs(), time.as_secs())
        }
        CertificateError::Expired => f.write_str("the peer's certificate has expired"),
        CertificateError::NotValidYetContext { time, not_before } => validity(
            f,
            "is not valid before",
            not_before.as_secs(),
            time.as_secs(),
        ),
        CertificateError::NotValidYet => f.write_str("the peer's certificate is not valid yet"),
        c if ca_used_as_leaf(c) => f.write_str(
            "the peer presented a CA certificate as its own (end-entity) certificate, \
             where a certificate issued by a CA belongs",
        ),
        c => write!(f, "invalid peer certificate: {c:?}"),
    }
}

/// "the peer's certificate {what} {at} (now {now})", both dates in UTC.
fn validity(f: &mut fmt::Formatter<'_>, what: &str, at: u64, now: u64) -> fmt::Result {
    write!(f, "the peer's certificate {what} ")?;
    date(f, at)?;
    f.write_str(" (now ")?;
    date(f, now)?;
    f.write_str(")")
}

/// A name as rustls lists it (`DnsName("a.example")`), without the wrapping.
fn bare_name(name: &str) -> &str {
    name.strip_prefix("DnsName(\"")
        .and_then(|n| n.strip_suffix("\")"))
        .unwrap_or(name)
}

/// `secs` since 1970 as a UTC date and time, `2024-03-01 12:00:00 UTC`.
fn date(f: &mut fmt::Formatter<'_>, secs: u64) -> fmt::Result {
    let days = secs / 86_400;
    let rem = secs % 86_400;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm), in u64.
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    write!(
        f,
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

impl fmt::Display for TlsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TlsError::Rustls(RustlsError::InvalidCertificate(c)) => certificate(f, c),
            TlsError::Rustls(e) => write!(f, "TLS: {e}"),
            TlsError::UnexpectedEof => f.write_str("TLS: stream ended without close_notify"),
            TlsError::IncomingFull => {
                f.write_str("TLS: incoming buffer full without a complete record")
            }
            TlsError::OutputFull { required } => {
                write!(f, "TLS: output buffer needs {required} free bytes")
            }
            TlsError::EncryptExhausted => f.write_str("TLS: record sequence space exhausted"),
            TlsError::NotWritable => {
                f.write_str("TLS: cannot send application data (handshaking or closed)")
            }
            TlsError::EarlyData => f.write_str("TLS: 0-RTT early data is not accepted"),
            TlsError::UnknownState => f.write_str("TLS: unknown rustls connection state"),
        }
    }
}

// rustls implements `std::error::Error` only with its `std` feature, which the codec does
// not enable, so the rustls error is not exposed as a `source`; it is in the message.
impl core::error::Error for TlsError {}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::string::ToString;
    use std::vec;

    use rustls::pki_types::UnixTime;

    use super::*;

    fn text(c: CertificateError) -> std::string::String {
        TlsError::Rustls(RustlsError::InvalidCertificate(c)).to_string()
    }

    #[test]
    fn certificate_errors_say_what_is_wrong_in_words() {
        assert_eq!(
            text(CertificateError::UnknownIssuer),
            "TLS: the peer's certificate is not signed by a trusted CA (unknown issuer)"
        );
        let wrong = CertificateError::NotValidForNameContext {
            expected: ServerName::try_from("api.example.com").unwrap(),
            presented: vec!["DnsName(\"localhost\")".into(), "127.0.0.1".into()],
        };
        let t = text(wrong);
        assert!(t.contains("not valid for the name api.example.com"), "{t}");
        assert!(t.contains("it is valid for localhost, 127.0.0.1"), "{t}");
        let expired = CertificateError::ExpiredContext {
            time: UnixTime::since_unix_epoch(core::time::Duration::from_secs(1_709_294_400)),
            not_after: UnixTime::since_unix_epoch(core::time::Duration::from_secs(86_399)),
        };
        assert_eq!(
            text(expired),
            "TLS: the peer's certificate expired on 1970-01-01 23:59:59 UTC \
             (now 2024-03-01 12:00:00 UTC)"
        );
    }

    #[test]
    fn dates_are_civil_utc() {
        struct D(u64);
        impl fmt::Display for D {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                date(f, self.0)
            }
        }
        assert_eq!(D(0).to_string(), "1970-01-01 00:00:00 UTC");
        // 2000-02-29 (a leap day of a century leap year) and 2100-03-01 (2100 is not).
        assert_eq!(D(951_782_400).to_string(), "2000-02-29 00:00:00 UTC");
        assert_eq!(D(4_107_542_400).to_string(), "2100-03-01 00:00:00 UTC");
        assert_eq!(D(1_700_000_000).to_string(), "2023-11-14 22:13:20 UTC");
    }
}
