//! The TLS codec's error type: every failure of the TLS layer as a typed value, with a
//! coarse [`TlsErrorKind`] for callers that branch on the cause.

use core::fmt;

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

impl fmt::Display for TlsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
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
