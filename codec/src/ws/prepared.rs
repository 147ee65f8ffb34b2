//! [`PreparedMessage`]: a data message encoded once as a server frame, to send to many
//! server connections (feature `alloc`; the idea of gorilla/websocket's `PreparedMessage`).
//!
//! A market-data server sends the same tick to thousands of subscribers. Sent one by one,
//! every connection encodes its own frame: a header, and the payload copied into its
//! write buffer. A prepared message is encoded once; a connection then only moves its
//! bytes: [`Connection::send_prepared`](crate::ws::Connection::send_prepared) copies them
//! into the write buffer (one `memcpy`, no encoding), and
//! [`Sender::send_prepared_with`](crate::ws::Sender::send_prepared_with) offers them to
//! the caller's socket write first when nothing is queued, so only the tail the socket
//! did not take is copied. The frames sit behind an `Arc`, so a clone is a reference count
//! and connections driven by other threads can send the same message.
//!
//! The connection's rules hold as for any message: it is application data, so it is
//! refused during the handshake and after a close (`AlreadyClosed`), and it leaves
//! [`CONTROL_ROOM`](crate::ws::connection::CONTROL_ROOM) free for a pong and a close;
//! when the write buffer has no room it is refused with `Backpressure` and nothing is queued.
//!
//! Server frames are not masked, so one encoding fits every server connection. Where one
//! frame does not fit a connection, the connection encodes the payload itself (same
//! result on the wire as `send_text` / `send_binary`): a client connection (it masks
//! every frame with a fresh key), and a connection with a fragment size smaller than the
//! payload.
//!
//! # permessage-deflate (feature `deflate`)
//!
//! `PreparedMessage::with_deflate` also compresses the payload once, as
//! a message of its own (a fresh DEFLATE stream, reset after it). A connection that
//! negotiated compression sends that frame when it would compress the message (its
//! threshold) and one of these holds:
//!
//! - the server resets its compressor after every message (`server_no_context_takeover`
//!   negotiated): the peer then expects no reference to earlier messages, and the frame
//!   needs none; and the frame's window fits what was negotiated
//!   (`server_max_window_bits` at least the window it was compressed with, or a payload
//!   no longer than the negotiated window, since a match never reaches back past the
//!   start of its message).
//!
//! Otherwise (server context takeover, the default, or a smaller window) the connection
//! compresses the payload with its own stream, as `send_text` would: a frame compressed
//! apart from that stream would leave the connection's compressor and the peer's
//! decompressor with different histories. Compressing once is what pays most (a stream
//! without context takeover is reset for every message, about 10 µs here; see
//! `ws::deflate::Deflater`).

use alloc::sync::Arc;
use alloc::vec;

use crate::ws::frame::header_len;
use crate::ws::{FrameWriter, OpCode};

/// A text or binary message encoded once as an unmasked (server) frame, shared by every
/// connection it is sent on (see the [module docs](self)).
#[derive(Debug, Clone)]
pub struct PreparedMessage {
    /// The whole frame: header, then the payload as it is (server frames are not masked).
    frame: Arc<[u8]>,
    /// Header bytes at the start of `frame`.
    header: u8,
    text: bool,
    /// The payload compressed once, framed with RSV1.
    #[cfg(feature = "deflate")]
    compressed: Option<CompressedFrame>,
}

/// A prepared message's compressed frame and the window it was compressed with.
#[cfg(feature = "deflate")]
#[derive(Debug, Clone)]
pub(crate) struct CompressedFrame {
    pub(crate) frame: Arc<[u8]>,
    pub(crate) window_bits: u8,
    /// Compressing did not make the payload smaller: every connection sends the
    /// uncompressed frame (RFC 7692 allows it for any message, and it leaves each
    /// connection's compressor as it was).
    pub(crate) plain: bool,
}

impl PreparedMessage {
    /// A text message.
    pub fn text(text: &str) -> Self {
        Self::encode(true, text.as_bytes())
    }

    /// A binary message.
    pub fn binary(data: &[u8]) -> Self {
        Self::encode(false, data)
    }

    fn encode(text: bool, payload: &[u8]) -> Self {
        let header = header_len(payload.len(), false);
        let mut frame = vec![0u8; header + payload.len()];
        let op = if text { OpCode::Text } else { OpCode::Binary };
        // A data frame into a buffer of its exact size cannot fail (only control frames
        // have a payload limit); the length check below would catch a change.
        let n = FrameWriter::server()
            .encode_frame(op, true, payload, &mut frame)
            .unwrap_or(0);
        debug_assert_eq!(n, frame.len());
        PreparedMessage {
            frame: frame.into(),
            header: header as u8,
            text,
            #[cfg(feature = "deflate")]
            compressed: None,
        }
    }

    /// Whether it is a text message.
    pub fn is_text(&self) -> bool {
        self.text
    }

    /// The payload.
    pub fn payload(&self) -> &[u8] {
        &self.frame[usize::from(self.header)..]
    }

    /// The encoded frame (header and payload), as a server connection sends it
    /// uncompressed.
    pub fn frame(&self) -> &[u8] {
        &self.frame
    }

    /// Also compress the payload once, at `config`'s level with its
    /// `server_max_window_bits` window, for the connections that negotiated
    /// permessage-deflate without server context takeover (see the
    /// [module docs](self#permessage-deflate-feature-deflate)). Allocates a compressor
    /// for the call (about 64 KiB at 15 bits). A payload that does not get smaller
    /// keeps only its uncompressed frame, which every connection then sends as it is,
    /// whatever it negotiated ([`compressed_frame`](Self::compressed_frame) is `None`).
    #[cfg(feature = "deflate")]
    pub fn with_deflate(
        mut self,
        config: &crate::ws::deflate::DeflateConfig,
    ) -> Result<Self, crate::ws::EncodeError> {
        use crate::ws::deflate::Deflater;
        let mut z = Deflater::new(config.server_max_window_bits, true, config.level, 0);
        let mut payload = alloc::vec::Vec::new();
        z.compress(self.payload(), &mut payload)?;
        if payload.len() >= self.payload().len() {
            self.compressed = Some(CompressedFrame {
                frame: self.frame.clone(),
                window_bits: z.window_bits(),
                plain: true,
            });
            return Ok(self);
        }
        let mut frame = vec![0u8; header_len(payload.len(), false) + payload.len()];
        let n = FrameWriter::server().encode_compressed(self.text, &payload, &mut frame)?;
        frame.truncate(n);
        self.compressed = Some(CompressedFrame {
            frame: frame.into(),
            window_bits: z.window_bits(),
            plain: false,
        });
        Ok(self)
    }

    /// The compressed frame, if [`with_deflate`](Self::with_deflate) made one.
    #[cfg(feature = "deflate")]
    pub fn compressed_frame(&self) -> Option<&[u8]> {
        self.compressed
            .as_ref()
            .filter(|c| !c.plain)
            .map(|c| &*c.frame)
    }

    /// The compressed frame, if it is valid for a connection that sends with
    /// `window_bits` and resets its compressor after every message
    /// (`no_context_takeover`).
    #[cfg(feature = "deflate")]
    pub(crate) fn compressed_for(
        &self,
        window_bits: u8,
        no_context_takeover: bool,
    ) -> Option<&[u8]> {
        let c = self.compressed.as_ref()?;
        if c.plain {
            return Some(&self.frame);
        }
        let fits =
            c.window_bits <= window_bits || self.payload().len() <= 1usize << window_bits.min(15);
        (no_context_takeover && fits).then_some(&*c.frame)
    }
}
