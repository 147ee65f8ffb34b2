//! Errors of the HTTP/1.1 codec: [`Error`] for what arrives, [`BuildError`] for what is written.
//!
//! Every hostile or malformed input ends in one of these values; "need more
//! bytes" is never an error (readers return `Ok(None)`).

/// A received message that must not be accepted. After an error the
/// connection is unusable: close it (a server should answer 400 first).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The connection closed before the first byte of a message.
    Closed,
    /// The connection closed in the middle of a message.
    UnexpectedEof,
    /// Not `HTTP/1.0` or `HTTP/1.1` where the version belongs.
    InvalidVersion,
    /// A malformed status line (code not three digits, bad separator or reason).
    InvalidStatus,
    /// A malformed request line (method token or target).
    InvalidRequestLine,
    /// A byte that is not a token character in a header name.
    InvalidHeaderName,
    /// A control byte in a header value.
    InvalidHeaderValue,
    /// A NUL byte in the message head.
    NulByte,
    /// A header line continued on the next line (obs-fold, RFC 9112 §5.2).
    ObsFold,
    /// A line ending that is not CRLF (or LF) where one is expected.
    InvalidNewLine,
    /// More header lines than the reader has room for.
    TooManyHeaders,
    /// The head (start line + headers) is longer than the limit or the buffer.
    HeadTooLarge,
    /// A Content-Length that is not a plain decimal number, or overflows.
    InvalidContentLength,
    /// Content-Length given twice (or as a list) with the same value.
    DuplicateContentLength,
    /// Content-Length given twice (or as a list) with different values.
    ConflictingContentLength,
    /// Both Content-Length and Transfer-Encoding: the request-smuggling case.
    ContentLengthWithTransferEncoding,
    /// `chunked` appears in Transfer-Encoding but not (only once and) last.
    ChunkedNotLast,
    /// A transfer coding other than `chunked` (we do not decode gzip etc.).
    UnsupportedTransferEncoding,
    /// A chunk size line that does not start with a hex digit or has junk after it.
    InvalidChunkSize,
    /// A chunk size that does not fit in 64 bits.
    ChunkSizeOverflow,
    /// A chunk size or data line not ended by CRLF.
    InvalidChunkLineEnding,
    /// A chunk extension with a control byte, or a chunk line too long.
    InvalidChunkExtension,
    /// A malformed trailer field line.
    InvalidTrailer,
    /// The trailer section is longer than the head limit.
    TrailersTooLarge,
    /// The body is longer than the limit, or than the buffer can hold.
    BodyTooLarge,
    /// A body that is not valid UTF-8 was asked for as text.
    BodyNotUtf8,
}

impl Error {
    /// A short description.
    pub fn as_str(&self) -> &'static str {
        match self {
            Error::Closed => "connection closed before a message",
            Error::UnexpectedEof => "connection closed in the middle of a message",
            Error::InvalidVersion => "invalid HTTP version",
            Error::InvalidStatus => "invalid status line",
            Error::InvalidRequestLine => "invalid request line",
            Error::InvalidHeaderName => "invalid header name",
            Error::InvalidHeaderValue => "invalid header value",
            Error::NulByte => "NUL byte in message head",
            Error::ObsFold => "obsolete line folding in header",
            Error::InvalidNewLine => "invalid line ending",
            Error::TooManyHeaders => "too many headers",
            Error::HeadTooLarge => {
                "message head larger than the reader's limit (`max_head_size`) or buffer"
            }
            Error::InvalidContentLength => "invalid Content-Length",
            Error::DuplicateContentLength => "duplicate Content-Length",
            Error::ConflictingContentLength => "conflicting Content-Length",
            Error::ContentLengthWithTransferEncoding => {
                "Content-Length together with Transfer-Encoding"
            }
            Error::ChunkedNotLast => "chunked is not the final transfer coding",
            Error::UnsupportedTransferEncoding => "unsupported transfer coding",
            Error::InvalidChunkSize => "invalid chunk size",
            Error::ChunkSizeOverflow => "chunk size overflow",
            Error::InvalidChunkLineEnding => "chunk line not ended by CRLF",
            Error::InvalidChunkExtension => "invalid chunk extension",
            Error::InvalidTrailer => "invalid trailer field",
            Error::TrailersTooLarge => "trailer section too large",
            Error::BodyTooLarge => {
                "body larger than the reader's limit (`max_body_size`) or buffer"
            }
            Error::BodyNotUtf8 => "body is not valid UTF-8",
        }
    }
}

impl core::fmt::Display for Error {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl core::error::Error for Error {}

/// A message that cannot be written as asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum BuildError {
    /// The caller's buffer is too small for the message.
    BufferFull,
    /// A host with a control byte, space, `/`, `?`, `#` or `@`.
    InvalidHost,
    /// A path that does not start with `/` or contains a control byte,
    /// space, `#` or a non-ASCII byte.
    InvalidPath,
    /// A header name that is empty or has a byte that is not a token character.
    InvalidHeaderName,
    /// A header value with CR, LF, NUL or another control byte (header injection).
    InvalidHeaderValue,
    /// Content-Length, Transfer-Encoding or Host set by hand: the codec
    /// writes those itself (a second Content-Length is a smuggling vector).
    ReservedHeader,
    /// A reason phrase with a control byte.
    InvalidReason,
    /// A status code outside 100..=999.
    InvalidStatus,
    /// The body writer closure returned an error of its own.
    BodyWriter,
}

impl BuildError {
    /// A short description.
    pub fn as_str(&self) -> &'static str {
        match self {
            BuildError::BufferFull => "the writer's buffer is too small for the message",
            BuildError::InvalidHost => "invalid host",
            BuildError::InvalidPath => "invalid path",
            BuildError::InvalidHeaderName => "invalid header name",
            BuildError::InvalidHeaderValue => "invalid header value (CR, LF, NUL or control byte)",
            BuildError::ReservedHeader => "header is written by the codec",
            BuildError::InvalidReason => "invalid reason phrase",
            BuildError::InvalidStatus => "invalid status code",
            BuildError::BodyWriter => "body writer failed",
        }
    }
}

impl core::fmt::Display for BuildError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl core::error::Error for BuildError {}

impl From<crate::buf::BufferFull> for BuildError {
    fn from(_: crate::buf::BufferFull) -> Self {
        BuildError::BufferFull
    }
}
