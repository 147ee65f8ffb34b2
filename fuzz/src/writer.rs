//! [`PeerWriter`]: a frame writer whose role is picked at run time from a fuzz input. The
//! codec's `FrameWriter` has its role in its type (a client writer masks, a server writer
//! cannot); the fuzz scripts choose one from an input byte, so this holds either.

use tickwire_codec::rand::{MaskSource, NoMask};
use tickwire_codec::ws::frame::OpCode;
use tickwire_codec::ws::{CloseCode, EncodeError, FrameWriter, Role};

/// A client writer (masking with `M`) or a server writer.
#[derive(Debug, Clone)]
pub enum PeerWriter<M> {
    /// Masks every frame.
    Client(FrameWriter<M>),
    /// Never masks.
    Server(FrameWriter<NoMask>),
}

/// Run `$call` on the writer inside, whichever role it has.
macro_rules! with {
    ($self:expr, $w:ident => $call:expr) => {
        match $self {
            PeerWriter::Client($w) => $call,
            PeerWriter::Server($w) => $call,
        }
    };
}

impl<M: MaskSource> PeerWriter<M> {
    /// A writer for `role` (a client's masks with keys from `mask`) that splits messages
    /// into frames of at most `fragment` bytes (0: never).
    pub fn new(role: Role, mask: M, fragment: usize) -> Self {
        match role {
            Role::Client => {
                PeerWriter::Client(FrameWriter::client(mask).with_fragment_size(fragment))
            }
            Role::Server => PeerWriter::Server(FrameWriter::server().with_fragment_size(fragment)),
        }
    }

    /// Wire size of a data message of `n` bytes.
    pub fn message_len(&self, n: usize) -> usize {
        with!(self, w => w.message_len(n))
    }

    /// See `FrameWriter::encode_text`.
    pub fn encode_text(&mut self, t: &str, out: &mut [u8]) -> Result<usize, EncodeError> {
        with!(self, w => w.encode_text(t, out))
    }

    /// See `FrameWriter::encode_binary`.
    pub fn encode_binary(&mut self, d: &[u8], out: &mut [u8]) -> Result<usize, EncodeError> {
        with!(self, w => w.encode_binary(d, out))
    }

    /// See `FrameWriter::encode_frame`.
    pub fn encode_frame(
        &mut self,
        op: OpCode,
        fin: bool,
        p: &[u8],
        out: &mut [u8],
    ) -> Result<usize, EncodeError> {
        with!(self, w => w.encode_frame(op, fin, p, out))
    }

    /// See `FrameWriter::encode_close`.
    pub fn encode_close(
        &mut self,
        code: Option<CloseCode>,
        reason: &str,
        out: &mut [u8],
    ) -> Result<usize, EncodeError> {
        with!(self, w => w.encode_close(code, reason, out))
    }

    /// See `FrameWriter::encode_compressed`.
    pub fn encode_compressed(
        &mut self,
        text: bool,
        c: &[u8],
        out: &mut [u8],
    ) -> Result<usize, EncodeError> {
        with!(self, w => w.encode_compressed(text, c, out))
    }
}
