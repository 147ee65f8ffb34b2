//! The sending half of a [`Connection`](super::Connection): the frame writer, the
//! bounded output buffer, the close state and the timers. Kept apart from the reader so a
//! handler can answer a message while that message still borrows the read buffer.
//!
//! Control frames the connection generates itself (pongs, close echoes, the close that
//! fails a connection, keepalive pings) never wait behind a full buffer: messages the
//! application queues always leave [`CONTROL_ROOM`] free, and a control frame that still
//! finds no room waits in a slot of its own and goes out first as soon as bytes leave.

use core::time::Duration;

use super::{ConnectionError, State, Timer};
use crate::buf::WriteBuf;
use crate::time::Instant;
use crate::ws::frame::{MAX_CONTROL_PAYLOAD, OpCode, Role, header_len};
use crate::ws::{CloseCode, FrameWriter, Masking, Message};

// Prepared messages: in a file of their own, a child of this module for the fields.
#[cfg(feature = "alloc")]
#[path = "send_prepared.rs"]
mod send_prepared;

/// Longest control frame on the wire: a 2-byte header, a 4-byte mask key, 125 bytes.
const MAX_CONTROL_FRAME: usize = 2 + 4 + MAX_CONTROL_PAYLOAD;

/// Output room application messages leave free: one pong and one close frame.
pub const CONTROL_ROOM: usize = 2 * MAX_CONTROL_FRAME;

/// A control payload kept aside until the output has room for it.
#[derive(Debug, Clone, Copy)]
struct Held {
    bytes: [u8; MAX_CONTROL_PAYLOAD],
    len: u8,
}

impl Held {
    fn new(payload: &[u8]) -> Held {
        let len = payload.len().min(MAX_CONTROL_PAYLOAD);
        let mut bytes = [0u8; MAX_CONTROL_PAYLOAD];
        bytes[..len].copy_from_slice(&payload[..len]);
        Held {
            bytes,
            len: len as u8,
        }
    }

    fn get(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }
}

/// A close frame kept aside: its code and reason.
#[derive(Debug, Clone, Copy)]
struct HeldClose {
    code: Option<CloseCode>,
    reason: Held,
}

/// The connection's clocks. They live in the sending half so that a send waiting for a
/// peer that stopped reading is bounded by them too (the transport lends only this half
/// while a received message borrows the reader).
#[derive(Debug, Clone, Copy)]
pub(super) struct Timers {
    /// The opening handshake's deadline.
    pub handshake: Option<Instant>,
    /// Bytes arrived since the last `handle_timeout` (keepalive and dead peer re-arm).
    pub rx: bool,
    /// The next keepalive ping.
    pub ping: Option<Instant>,
    /// The dead-peer deadline.
    pub dead: Option<Instant>,
    pub keepalive: Option<Duration>,
    pub dead_peer: Option<Duration>,
    /// The latest instant the caller passed.
    pub last_now: Instant,
}

/// Whether the write half should be shut once everything queued is out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shutdown {
    No,
    Wanted,
    Done,
}

/// The sending half of a connection (see the module docs).
#[derive(Debug)]
pub struct Sender<W, M> {
    writer: FrameWriter<M>,
    out: WriteBuf<W>,
    pub(super) state: State,
    /// The connection failed (the error was reported once).
    pub(super) failed: bool,
    pending_pong: Option<Held>,
    pending_close: Option<HeldClose>,
    shutdown: Shutdown,
    auto_pong: bool,
    pub(super) close_timeout: Duration,
    pub(super) close_timer: Timer,
    pub(super) timers: Timers,
    /// permessage-deflate's sending stream, once negotiated.
    #[cfg(feature = "deflate")]
    pub(super) deflate: Option<alloc::boxed::Box<super::deflate::Send>>,
    /// `deflate`'s parameters for prepared messages, set with it.
    #[cfg(feature = "deflate")]
    pub(super) deflate_plan: Option<super::deflate::SendPlan>,
}

impl<W: AsRef<[u8]> + AsMut<[u8]>, M: Masking> Sender<W, M> {
    pub(super) fn new(
        writer: FrameWriter<M>,
        out: W,
        auto_pong: bool,
        close: Duration,
        timers: Timers,
    ) -> Self {
        Sender {
            writer,
            out: WriteBuf::new(out),
            state: State::Handshake,
            failed: false,
            pending_pong: None,
            pending_close: None,
            shutdown: Shutdown::No,
            auto_pong,
            close_timeout: close,
            close_timer: Timer::Off,
            timers,
            #[cfg(feature = "deflate")]
            deflate: None,
            #[cfg(feature = "deflate")]
            deflate_plan: None,
        }
    }

    /// Where the connection stands.
    pub fn state(&self) -> State {
        self.state
    }

    /// When [`handle_timeout`](Self::handle_timeout) should run next (`None`: no timer
    /// runs); the same as the connection's
    /// [`poll_timeout`](super::Connection::poll_timeout) once the handshake is over. A
    /// driver whose send waits for the socket waits at most until then, so a peer that
    /// stopped reading cannot hold a send longer than the dead-peer timeout.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let t = &self.timers;
        match self.state {
            State::Handshake => t.handshake,
            State::Open => {
                if t.keepalive.is_none() && t.dead_peer.is_none() {
                    None
                } else if t.rx {
                    Some(t.last_now)
                } else {
                    earliest(t.ping, t.dead)
                }
            }
            State::Closing => match self.close_timer {
                Timer::Off => None,
                Timer::Due => Some(t.last_now),
                Timer::At(at) => Some(at),
            },
            State::Closed => None,
        }
    }

    /// Time passed: enforce the close and dead-peer timeouts and queue a keepalive ping
    /// when due (the opening handshake's timeout is the
    /// [`Connection`](super::Connection)'s: a sending half exists only once it is over).
    /// An error ends the connection; the write half then waits to be shut. A driver
    /// calls it from a send that waited until [`poll_timeout`](Self::poll_timeout), as
    /// [`Connection::handle_timeout`](super::Connection::handle_timeout) from a receive.
    pub fn handle_timeout(&mut self, now: Instant) -> Result<(), ConnectionError> {
        let t = &mut self.timers;
        t.last_now = t.last_now.max(now);
        match self.state {
            State::Handshake | State::Closed => {}
            State::Open => {
                if core::mem::take(&mut t.rx) {
                    t.ping = t.keepalive.map(|k| now + k);
                    t.dead = t.dead_peer.map(|d| now + d);
                }
                if t.dead.is_some_and(|at| now >= at) {
                    self.discard_output();
                    self.finish(true);
                    return Err(ConnectionError::DeadPeer);
                }
                if let (Some(at), Some(k)) = (t.ping, t.keepalive)
                    && now >= at
                {
                    t.ping = Some(now + k);
                    self.queue_keepalive();
                }
            }
            State::Closing => match self.close_timer {
                Timer::Due => self.close_timer = Timer::At(now + self.close_timeout),
                Timer::At(at) if now >= at => {
                    self.finish(true);
                    return Err(ConnectionError::CloseTimeout);
                }
                _ => {}
            },
        }
        Ok(())
    }

    /// Bytes queued for the peer and not yet written.
    pub fn pending(&self) -> usize {
        self.out.len()
    }

    /// Room for application messages now (on the wire, headers included).
    pub fn room(&self) -> usize {
        if self.has_held() {
            0
        } else {
            self.out.remaining().saturating_sub(CONTROL_ROOM)
        }
    }

    /// Whether bytes wait to be written, or the write half waits to be shut.
    #[inline]
    pub fn wants_write(&self) -> bool {
        !self.out.is_empty() || self.has_held() || self.shutdown == Shutdown::Wanted
    }

    #[inline]
    fn has_held(&self) -> bool {
        self.pending_pong.is_some() || self.pending_close.is_some()
    }

    pub(super) fn out(&mut self) -> &mut WriteBuf<W> {
        &mut self.out
    }

    /// Move the output buffer to `storage`, which must hold the bytes waiting to be
    /// written ([`pending`](Self::pending)); they are copied to its front. Returns the
    /// old storage, or `Err(storage)` (nothing changed) when it is too small. The same
    /// as [`Connection::replace_write_storage`](super::Connection::replace_write_storage),
    /// for a sending half used while a message borrows the reader.
    pub fn replace_write_storage(&mut self, storage: W) -> Result<W, W> {
        self.out.replace_storage(storage)
    }

    pub(super) fn writer_role(&self) -> Role {
        self.writer.role()
    }

    /// The bytes to write next (empty when none).
    #[inline]
    pub fn transmit(&self) -> &[u8] {
        self.out.data()
    }

    /// `n` bytes of [`transmit`](Self::transmit) were written.
    #[inline]
    pub fn handle_written(&mut self, n: usize) {
        self.out.consume(n);
        if self.has_held() {
            self.place_held();
        }
    }

    /// Whether the write half should be shut now: the connection is over and
    /// everything queued is written. Call [`handle_shutdown`](Self::handle_shutdown)
    /// once it is.
    #[inline]
    pub fn wants_shutdown(&self) -> bool {
        self.shutdown == Shutdown::Wanted && self.out.is_empty() && !self.has_held()
    }

    /// The write half was shut (or the transport gave up on it).
    pub fn handle_shutdown(&mut self) {
        self.shutdown = Shutdown::Done;
    }

    /// Drop everything queued: the peer is gone.
    pub(super) fn discard_output(&mut self) {
        self.out.clear();
        self.pending_pong = None;
        self.pending_close = None;
    }

    /// Check that an application message of `need` bytes on the wire can be queued now.
    #[inline]
    fn room_for(&self, need: usize) -> Result<(), ConnectionError> {
        // The common case in one branch: open, nothing held, room beside the control room.
        if self.state == State::Open
            && !self.has_held()
            && need.saturating_add(CONTROL_ROOM) <= self.out.remaining()
        {
            return Ok(());
        }
        self.no_room(need)
    }

    /// Why a message of `need` bytes cannot be queued now.
    #[cold]
    fn no_room(&self, need: usize) -> Result<(), ConnectionError> {
        match self.state {
            State::Open => {}
            State::Handshake => return Err(ConnectionError::HandshakeInProgress),
            State::Closing | State::Closed => return Err(ConnectionError::AlreadyClosed),
        }
        let capacity = self.out.capacity().saturating_sub(CONTROL_ROOM);
        if need > capacity {
            return Err(ConnectionError::MessageTooLarge {
                len: need,
                capacity,
            });
        }
        if need > self.room() {
            return Err(ConnectionError::Backpressure);
        }
        Ok(())
    }

    /// Queue a text message (split into frames if a fragment size is set).
    /// [`ConnectionError::Backpressure`]: write out what is queued, then try again.
    ///
    /// ```
    /// # use tickwire_codec::ws::connection::{doc_pair, doc_pump};
    /// # let (mut client, mut server) = doc_pair();
    /// use tickwire_codec::ws::Message;
    ///
    /// server.send_text("ping 7")?;
    /// doc_pump(&mut server, &mut client);
    /// // Answer while the message borrows the reader: the sender is the other half.
    /// if let Some((Message::Text(t), tx)) = client.poll_message_with_sender()? {
    ///     let n = t.strip_prefix("ping ").unwrap_or("?");
    ///     tx.send_text(n)?;
    /// }
    /// doc_pump(&mut client, &mut server);
    /// assert_eq!(server.poll_message()?, Some(Message::Text("7")));
    /// # Ok::<(), tickwire_codec::ws::ConnectionError>(())
    /// ```
    #[inline]
    pub fn send_text(&mut self, text: &str) -> Result<(), ConnectionError> {
        #[cfg(feature = "deflate")]
        if self.deflate.is_some() {
            return self.send_deflate(true, text.as_bytes(), None);
        }
        self.room_for(self.writer.message_len(text.len()))?;
        Ok(self.writer.write_text(text, &mut self.out)?)
    }

    /// Queue a binary message (see [`send_text`](Self::send_text)).
    ///
    /// ```
    /// # use tickwire_codec::ws::connection::{doc_pair, doc_pump};
    /// # let (mut client, mut server) = doc_pair();
    /// use tickwire_codec::ws::Message;
    ///
    /// server.send_text("ping 7")?;
    /// doc_pump(&mut server, &mut client);
    /// // Answer while the message borrows the reader: the sender is the other half.
    /// if let Some((Message::Text(t), tx)) = client.poll_message_with_sender()? {
    ///     let n = t.strip_prefix("ping ").unwrap_or("?");
    ///     tx.send_binary(n.as_bytes())?;
    /// }
    /// doc_pump(&mut client, &mut server);
    /// assert_eq!(server.poll_message()?, Some(Message::Binary(b"7")));
    /// # Ok::<(), tickwire_codec::ws::ConnectionError>(())
    /// ```
    #[inline]
    pub fn send_binary(&mut self, data: &[u8]) -> Result<(), ConnectionError> {
        #[cfg(feature = "deflate")]
        if self.deflate.is_some() {
            return self.send_deflate(false, data, None);
        }
        self.room_for(self.writer.message_len(data.len()))?;
        Ok(self.writer.write_binary(data, &mut self.out)?)
    }

    /// A data message on a connection that negotiated permessage-deflate (see
    /// [`super::deflate`]): at or above the threshold it is compressed once, then sent
    /// compressed (RSV1 on the first frame, RFC 7692 §6.1) only if that is smaller
    /// than the message as it is; otherwise, and below the threshold, it goes out
    /// uncompressed, which RFC 7692 allows for any message. Frames of at most
    /// `fragment` payload bytes (`None`: the configured fragment size).
    ///
    /// Whether it is compressed never depends on the output buffer's room now: the
    /// room is checked for what will be sent. A message refused for room after it was
    /// compressed keeps its compressed bytes: sent again (the caller grew the buffer,
    /// or wrote out, and retries), it goes out as compressed then, against the context
    /// it was compressed in, without compressing twice. Any other message first makes
    /// the compressor forget the refused one, as a message sent uncompressed does
    /// ([`Deflater::discard_last`]): the compressor never remembers what the peer did
    /// not inflate.
    #[cfg(feature = "deflate")]
    #[cold]
    #[inline(never)]
    fn send_deflate(
        &mut self,
        text: bool,
        data: &[u8],
        fragment: Option<usize>,
    ) -> Result<(), ConnectionError> {
        let f = fragment.unwrap_or(self.writer.fragment_size());
        let op = if text { OpCode::Text } else { OpCode::Binary };
        let compress = self
            .deflate
            .as_ref()
            .is_some_and(|d| d.deflater.should_compress(data.len()));
        if !compress {
            return self.send_plain(op, data, fragment);
        }
        if self.state != State::Open {
            // Refused before the compressor sees it.
            return self.no_room(0);
        }
        let Some(d) = self.deflate.as_deref_mut() else {
            return self.send_plain(op, data, fragment);
        };
        if !d.is_refused(text, data) {
            d.forget_refused();
            d.scratch.clear();
            d.deflater.compress(data, &mut d.scratch)?;
            if d.scratch.len() >= data.len() {
                // Not smaller: as it is, and the compressor forgets it.
                d.deflater.discard_last();
                return self.send_plain(op, data, fragment);
            }
        }
        let need = self.writer.fragmented_len(d.scratch.len(), f);
        if let Err(e) = self.room_for(need) {
            if let Some(d) = self.deflate.as_deref_mut() {
                match e {
                    ConnectionError::Backpressure | ConnectionError::MessageTooLarge { .. } => {
                        d.keep_refused(text, data)
                    }
                    _ => d.forget_refused(),
                }
            }
            return Err(e);
        }
        let Some(d) = self.deflate.as_deref_mut() else {
            return Err(ConnectionError::Encode(crate::ws::EncodeError::Compression));
        };
        d.sent();
        Ok(self
            .writer
            .write_compressed_fragmented(text, &d.scratch, f, &mut self.out)?)
    }

    /// A data message as it is, in frames of at most `fragment` bytes (`None`: the
    /// configured fragment size).
    #[cfg(feature = "deflate")]
    fn send_plain(
        &mut self,
        op: OpCode,
        data: &[u8],
        fragment: Option<usize>,
    ) -> Result<(), ConnectionError> {
        if let Some(f) = fragment {
            return self.send_fragmented_plain(op, data, f);
        }
        self.room_for(self.writer.message_len(data.len()))?;
        Ok(self.writer.write_data(op, data, &mut self.out)?)
    }

    /// Queue a ping (payload at most 125 bytes); the peer's pong arrives as a message.
    ///
    /// ```
    /// # use tickwire_codec::ws::connection::{doc_pair, doc_pump};
    /// # let (mut client, mut server) = doc_pair();
    /// use tickwire_codec::ws::Message;
    ///
    /// server.send_text("ping 7")?;
    /// doc_pump(&mut server, &mut client);
    /// // Answer while the message borrows the reader: the sender is the other half.
    /// if let Some((Message::Text(t), tx)) = client.poll_message_with_sender()? {
    ///     let n = t.strip_prefix("ping ").unwrap_or("?");
    ///     tx.send_ping(n.as_bytes())?;
    /// }
    /// doc_pump(&mut client, &mut server);
    /// assert_eq!(server.poll_message()?, Some(Message::Ping(b"7")));
    /// # Ok::<(), tickwire_codec::ws::ConnectionError>(())
    /// ```
    pub fn send_ping(&mut self, payload: &[u8]) -> Result<(), ConnectionError> {
        self.room_for(header_len(payload.len(), self.masked()) + payload.len())?;
        Ok(self.writer.write_ping(payload, &mut self.out)?)
    }

    /// Queue an unsolicited pong (payload at most 125 bytes).
    ///
    /// ```
    /// # use tickwire_codec::ws::connection::{doc_pair, doc_pump};
    /// # let (mut client, mut server) = doc_pair();
    /// use tickwire_codec::ws::Message;
    ///
    /// server.send_text("ping 7")?;
    /// doc_pump(&mut server, &mut client);
    /// // Answer while the message borrows the reader: the sender is the other half.
    /// if let Some((Message::Text(t), tx)) = client.poll_message_with_sender()? {
    ///     let n = t.strip_prefix("ping ").unwrap_or("?");
    ///     tx.send_pong(n.as_bytes())?;
    /// }
    /// doc_pump(&mut client, &mut server);
    /// assert_eq!(server.poll_message()?, Some(Message::Pong(b"7")));
    /// # Ok::<(), tickwire_codec::ws::ConnectionError>(())
    /// ```
    pub fn send_pong(&mut self, payload: &[u8]) -> Result<(), ConnectionError> {
        self.room_for(header_len(payload.len(), self.masked()) + payload.len())?;
        Ok(self.writer.write_pong(payload, &mut self.out)?)
    }

    /// Queue a text message split into frames of at most `fragment` payload bytes (cut
    /// anywhere, even inside a character: the peer validates UTF-8 across fragments).
    /// `fragment == 0` sends one frame. All frames are queued, or none. With
    /// permessage-deflate negotiated, a message at or above the threshold is compressed
    /// once and the compressed bytes are split (RSV1 on the first frame).
    ///
    /// ```
    /// # use tickwire_codec::ws::connection::{doc_pair, doc_pump};
    /// # let (mut client, mut server) = doc_pair();
    /// use tickwire_codec::ws::Message;
    ///
    /// server.send_text("ping 7")?;
    /// doc_pump(&mut server, &mut client);
    /// // Answer while the message borrows the reader: the sender is the other half.
    /// if let Some((Message::Text(t), tx)) = client.poll_message_with_sender()? {
    ///     let n = t.strip_prefix("ping ").unwrap_or("?");
    ///     tx.send_text_fragmented(&format!("pong {n}"), 4)?; // frames of 4 bytes
    /// }
    /// doc_pump(&mut client, &mut server);
    /// assert_eq!(server.poll_message()?, Some(Message::Text("pong 7")));
    /// # Ok::<(), tickwire_codec::ws::ConnectionError>(())
    /// ```
    pub fn send_text_fragmented(
        &mut self,
        text: &str,
        fragment: usize,
    ) -> Result<(), ConnectionError> {
        self.send_fragmented(OpCode::Text, text.as_bytes(), fragment)
    }

    /// Queue a binary message split into frames of at most `fragment` payload bytes.
    ///
    /// ```
    /// # use tickwire_codec::ws::connection::{doc_pair, doc_pump};
    /// # let (mut client, mut server) = doc_pair();
    /// use tickwire_codec::ws::Message;
    ///
    /// server.send_text("ping 7")?;
    /// doc_pump(&mut server, &mut client);
    /// // Answer while the message borrows the reader: the sender is the other half.
    /// if let Some((Message::Text(t), tx)) = client.poll_message_with_sender()? {
    ///     let n = t.strip_prefix("ping ").unwrap_or("?");
    ///     tx.send_binary_fragmented(format!("pong {n}").as_bytes(), 4)?;
    /// }
    /// doc_pump(&mut client, &mut server);
    /// assert_eq!(server.poll_message()?, Some(Message::Binary(b"pong 7")));
    /// # Ok::<(), tickwire_codec::ws::ConnectionError>(())
    /// ```
    pub fn send_binary_fragmented(
        &mut self,
        data: &[u8],
        fragment: usize,
    ) -> Result<(), ConnectionError> {
        self.send_fragmented(OpCode::Binary, data, fragment)
    }

    fn send_fragmented(
        &mut self,
        op: OpCode,
        data: &[u8],
        fragment: usize,
    ) -> Result<(), ConnectionError> {
        #[cfg(feature = "deflate")]
        if self.deflate.is_some() {
            return self.send_deflate(op == OpCode::Text, data, Some(fragment));
        }
        self.send_fragmented_plain(op, data, fragment)
    }

    /// [`send_fragmented`](Self::send_fragmented) without compression.
    fn send_fragmented_plain(
        &mut self,
        op: OpCode,
        data: &[u8],
        fragment: usize,
    ) -> Result<(), ConnectionError> {
        let fragment = if fragment == 0 {
            data.len().max(1)
        } else {
            fragment
        };
        let masked = self.masked();
        let frames = data.len().div_ceil(fragment).max(1);
        let rest = data.len() % fragment;
        let need = (data.len() / fragment) * (header_len(fragment, masked) + fragment)
            + if rest > 0 || data.is_empty() {
                header_len(rest, masked) + rest
            } else {
                0
            };
        self.room_for(need)?;
        if data.is_empty() {
            self.writer.write_frame(op, true, &[], &mut self.out)?;
            return Ok(());
        }
        let mut opcode = op;
        for (i, chunk) in data.chunks(fragment).enumerate() {
            self.writer
                .write_frame(opcode, i + 1 == frames, chunk, &mut self.out)?;
            opcode = OpCode::Continuation;
        }
        Ok(())
    }

    /// Start the close handshake with `code` (`None`: no status code, then `reason` must
    /// be empty) and a reason of at most 123 bytes. Data that still arrives is
    /// discarded until the peer's close; the close timeout runs from the next
    /// `handle_timeout`. A no-op once closing or closed.
    ///
    /// ```
    /// # use tickwire_codec::ws::connection::{doc_pair, doc_pump};
    /// # let (mut client, mut server) = doc_pair();
    /// use tickwire_codec::ws::CloseCode;
    /// use tickwire_codec::ws::Message;
    ///
    /// server.send_text("ping 7")?;
    /// doc_pump(&mut server, &mut client);
    /// // Answer while the message borrows the reader: the sender is the other half.
    /// if let Some((Message::Text(t), tx)) = client.poll_message_with_sender()? {
    ///     let n = t.strip_prefix("ping ").unwrap_or("?");
    ///     tx.close(CloseCode::NORMAL, n)?; // or `None`: no status code
    /// }
    /// doc_pump(&mut client, &mut server);
    /// assert!(matches!(server.poll_message()?, Some(Message::Close(Some(f))) if f.reason == "7"));
    /// # Ok::<(), tickwire_codec::ws::ConnectionError>(())
    /// ```
    pub fn close(
        &mut self,
        code: impl Into<Option<CloseCode>>,
        reason: &str,
    ) -> Result<(), ConnectionError> {
        let code = code.into();
        match self.state {
            State::Open => {}
            State::Handshake => return Err(ConnectionError::HandshakeInProgress),
            State::Closing | State::Closed => return Ok(()),
        }
        // Validate first (code, reason length), so an invalid close changes nothing.
        self.writer
            .encode_close(code, reason, &mut [0u8; MAX_CONTROL_FRAME])?;
        self.queue_close(code, reason.as_bytes());
        self.state = State::Closing;
        self.close_timer = Timer::Due;
        Ok(())
    }

    fn masked(&self) -> bool {
        self.writer.role() == Role::Client
    }

    /// Queue a pong answering `payload`: now if it fits, else in the held slot (a newer
    /// pong replaces an older one: RFC 6455 §5.5.3 asks only for the latest).
    fn queue_pong(&mut self, payload: &[u8]) {
        if !self.has_held() && self.writer.write_pong(payload, &mut self.out).is_ok() {
            return;
        }
        self.pending_pong = Some(Held::new(payload));
        self.place_held();
    }

    /// Queue a close frame (validated by the caller): now if it fits, else held.
    fn queue_close(&mut self, code: Option<CloseCode>, reason: &[u8]) {
        self.pending_close = Some(HeldClose {
            code,
            reason: Held::new(reason),
        });
        self.place_held();
    }

    /// Queue a keepalive ping if it fits (a peer that stopped reading is the dead-peer
    /// timeout's business).
    pub(super) fn queue_keepalive(&mut self) {
        if !self.has_held() && self.out.remaining() >= MAX_CONTROL_FRAME + CONTROL_ROOM / 2 {
            let _ = self.writer.write_ping(&[], &mut self.out);
        }
    }

    /// Move held control frames into the output, pong first, as far as they fit.
    fn place_held(&mut self) {
        if let Some(p) = self.pending_pong {
            if self.writer.write_pong(p.get(), &mut self.out).is_err() {
                return;
            }
            self.pending_pong = None;
        }
        if let Some(c) = self.pending_close {
            // The reason was validated as UTF-8 text of at most 123 bytes when queued.
            let reason = core::str::from_utf8(c.reason.get()).unwrap_or("");
            if self
                .writer
                .write_close(c.code, reason, &mut self.out)
                .is_ok()
            {
                self.pending_close = None;
            }
        }
    }

    /// Fail the connection: queue a close with `code` if frames may still be sent, then
    /// discard input until the peer's close (or the close timeout), and shut the write
    /// half once the close is out.
    pub(super) fn fail(&mut self, code: Option<CloseCode>) {
        self.failed = true;
        match (self.state, code) {
            (State::Open, Some(code)) => {
                self.queue_close(Some(code), &[]);
                self.state = State::Closing;
                self.close_timer = Timer::Due;
            }
            (State::Closing, _) => {}
            _ => self.state = State::Closed,
        }
        self.shutdown = Shutdown::Wanted;
    }

    /// The connection is over, cleanly or not: shut the write half once flushed.
    pub(super) fn finish(&mut self, failed: bool) {
        self.failed |= failed;
        self.state = State::Closed;
        self.close_timer = Timer::Off;
        if self.shutdown == Shutdown::No {
            self.shutdown = Shutdown::Wanted;
        }
    }

    /// React to a received message: answer pings and closes. `true`: deliver it to the
    /// application; `false`: discard it (data after our close, anything after failing).
    #[inline]
    pub(super) fn on_message(&mut self, msg: &Message<'_>) -> bool {
        if let Message::Text(_) | Message::Binary(_) = msg {
            return self.state == State::Open;
        }
        self.on_control(msg)
    }

    /// [`on_message`](Self::on_message) for control frames.
    #[inline(never)]
    fn on_control(&mut self, msg: &Message<'_>) -> bool {
        match (self.state, msg) {
            (State::Open, Message::Pong(_)) => true,
            (State::Open, Message::Ping(p)) => {
                if self.auto_pong {
                    self.queue_pong(p);
                }
                true
            }
            (State::Open, Message::Close(frame)) => {
                // Echo the peer's code (none if it sent none), then shut down.
                self.queue_close(frame.map(|f| f.code), &[]);
                self.finish(false);
                true
            }
            (State::Closing, Message::Close(_)) => {
                let deliver = !self.failed;
                self.finish(false);
                deliver
            }
            _ => false,
        }
    }
}

/// The earlier of two optional instants.
fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}
