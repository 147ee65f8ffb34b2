//! A WebSocket endpoint over one smoltcp TCP socket: tickwire's codec with
//! smoltcp's socket buffers as its byte source and sink.
//!
//! The endpoint owns no memory of its own: its frame reader and its send
//! buffer sit on caller storage (`R`, `W`), and a client's masking keys come
//! from the caller's [`MaskSource`]. It never touches the network by itself:
//! [`Endpoint::recv`] pulls bytes out of the socket's receive buffer and
//! [`Endpoint::flush`] pushes queued frames into its send buffer; moving
//! packets is the caller's `Interface::poll`.
//!
//! Both halves of the opening handshake and of the close handshake happen
//! here; pings are answered with pongs as they are received.

use smoltcp::socket::tcp;
use tickwire_codec::buf::{BufferFull, WriteBuf};
use tickwire_codec::rand::{MaskSource, NoMask};
use tickwire_codec::ws::frame::{MAX_CONTROL_PAYLOAD, MAX_HEADER_LEN, header_len};
use tickwire_codec::ws::handshake::{self, ClientHandshake, HandshakeError};
use tickwire_codec::ws::{
    CloseCode, Config, EncodeError, FrameReader, FrameWriter, Masking, Message, OpCode, Role,
};

/// Room a control frame needs in the send buffer. Pongs and close echoes are
/// only generated when it is there, so they are never lost; and messages the
/// application queues (data and pings) always leave it free, so a full send
/// buffer never stops an endpoint from reading (two endpoints that both
/// stopped reading would wait on each other forever).
const CONTROL_ROOM: usize = MAX_HEADER_LEN + MAX_CONTROL_PAYLOAD;

/// Where an endpoint is in the life of its connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Waiting for the peer's half of the opening handshake.
    Handshake,
    /// Messages flow both ways.
    Open,
    /// We sent a close frame and wait for the peer's.
    CloseSent,
    /// Both close frames were exchanged, or the connection failed. Once the
    /// send buffer is flushed, [`Endpoint::flush`] closes the TCP connection.
    Closed,
}

/// What went wrong on an endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Error {
    /// The opening handshake failed (a refusal or a close was queued if possible).
    Handshake(HandshakeError),
    /// The peer broke the protocol; a close frame with the matching code was queued.
    Protocol(tickwire_codec::ws::Error),
    /// A message could not be encoded (e.g. the send buffer is full: flush, poll, retry).
    Encode(EncodeError),
    /// smoltcp refused to hand out received bytes.
    Recv(tcp::RecvError),
    /// smoltcp refused to take bytes to send.
    Send(tcp::SendError),
    /// The connection is not open for data (handshake pending, or closing).
    NotOpen,
}

impl From<HandshakeError> for Error {
    fn from(e: HandshakeError) -> Self {
        Error::Handshake(e)
    }
}

impl From<EncodeError> for Error {
    fn from(e: EncodeError) -> Self {
        Error::Encode(e)
    }
}

impl From<BufferFull> for Error {
    fn from(_: BufferFull) -> Self {
        Error::Encode(EncodeError::BufferFull)
    }
}

impl From<tcp::RecvError> for Error {
    fn from(e: tcp::RecvError) -> Self {
        Error::Recv(e)
    }
}

impl From<tcp::SendError> for Error {
    fn from(e: tcp::SendError) -> Self {
        Error::Send(e)
    }
}

impl core::fmt::Display for Error {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Error::Handshake(e) => write!(f, "handshake: {e}"),
            Error::Protocol(e) => write!(f, "protocol: {e}"),
            Error::Encode(e) => write!(f, "encode: {e}"),
            Error::Recv(e) => write!(f, "tcp recv: {e}"),
            Error::Send(e) => write!(f, "tcp send: {e}"),
            Error::NotOpen => f.write_str("connection not open"),
        }
    }
}

impl core::error::Error for Error {}

/// The sending half of an endpoint: its frame writer, its send buffer and
/// the connection state. Handed out beside every received message so a
/// handler can answer while the message still borrows the receive buffer.
#[derive(Debug)]
pub struct Tx<W, M> {
    writer: FrameWriter<M>,
    out: WriteBuf<W>,
    state: State,
}

impl<W: AsRef<[u8]> + AsMut<[u8]>, M: Masking> Tx<W, M> {
    /// The connection state.
    pub fn state(&self) -> State {
        self.state
    }

    /// Bytes queued and not yet taken by the socket.
    pub fn pending(&self) -> usize {
        self.out.len()
    }

    /// Free space in the send buffer.
    pub fn room(&self) -> usize {
        self.out.remaining()
    }

    fn check_open(&self) -> Result<(), Error> {
        if self.state == State::Open {
            Ok(())
        } else {
            Err(Error::NotOpen)
        }
    }

    /// Open, and room for `frames_len` bytes with [`CONTROL_ROOM`] to spare.
    fn check_room(&self, frames_len: usize) -> Result<(), Error> {
        self.check_open()?;
        if frames_len + CONTROL_ROOM > self.out.remaining() {
            return Err(Error::Encode(EncodeError::BufferFull));
        }
        Ok(())
    }

    fn masked(&self) -> bool {
        self.writer.role() == Role::Client
    }

    /// Queue a text message in one frame.
    pub fn send_text(&mut self, text: &str) -> Result<(), Error> {
        self.check_room(header_len(text.len(), self.masked()) + text.len())?;
        Ok(self.writer.write_text(text, &mut self.out)?)
    }

    /// Queue a binary message in one frame.
    pub fn send_binary(&mut self, data: &[u8]) -> Result<(), Error> {
        self.check_room(header_len(data.len(), self.masked()) + data.len())?;
        Ok(self.writer.write_binary(data, &mut self.out)?)
    }

    /// Queue a text message split into frames of at most `fragment` bytes
    /// (cut anywhere, even inside a character: the peer validates UTF-8 across
    /// fragments). `fragment == 0` sends one frame.
    pub fn send_text_fragmented(&mut self, text: &str, fragment: usize) -> Result<(), Error> {
        self.send_fragmented(OpCode::Text, text.as_bytes(), fragment)
    }

    /// Queue a binary message split into frames of at most `fragment` bytes.
    pub fn send_binary_fragmented(&mut self, data: &[u8], fragment: usize) -> Result<(), Error> {
        self.send_fragmented(OpCode::Binary, data, fragment)
    }

    /// All frames of the message are queued, or none (the room is checked first).
    fn send_fragmented(&mut self, op: OpCode, data: &[u8], fragment: usize) -> Result<(), Error> {
        let fragment = if fragment == 0 {
            data.len().max(1)
        } else {
            fragment
        };
        let masked = self.masked();
        let frames = data.len().div_ceil(fragment).max(1);
        let full = data.len() / fragment;
        let rest = data.len() % fragment;
        let need = full * (header_len(fragment, masked) + fragment)
            + if rest > 0 || data.is_empty() {
                header_len(rest, masked) + rest
            } else {
                0
            };
        self.check_room(need)?;
        let mut opcode = op;
        for (i, chunk) in data.chunks(fragment).enumerate() {
            let fin = i + 1 == frames;
            self.writer.write_frame(opcode, fin, chunk, &mut self.out)?;
            opcode = OpCode::Continuation;
        }
        if data.is_empty() {
            self.writer.write_frame(op, true, &[], &mut self.out)?;
        }
        Ok(())
    }

    /// Queue a ping (payload at most 125 bytes); the peer's pong arrives as a message.
    pub fn ping(&mut self, payload: &[u8]) -> Result<(), Error> {
        self.check_room(header_len(payload.len(), self.masked()) + payload.len())?;
        Ok(self.writer.write_ping(payload, &mut self.out)?)
    }

    /// Start the close handshake: queue a close frame; the connection is
    /// closed when the peer's close frame arrives.
    pub fn close(&mut self, code: CloseCode, reason: &str) -> Result<(), Error> {
        self.check_open()?;
        self.writer.write_close(Some(code), reason, &mut self.out)?;
        self.state = State::CloseSent;
        Ok(())
    }

    /// Fail the connection with `code` (if frames may still be sent).
    fn fail(&mut self, code: CloseCode) {
        if self.state == State::Open {
            // A close frame without a reason always fits: the caller checked
            // CONTROL_ROOM before reading, and a failed write only skips it.
            let _ = self.writer.write_close(Some(code), "", &mut self.out);
        }
        self.state = State::Closed;
    }
}

/// A WebSocket endpoint (client or server) over one smoltcp TCP socket.
#[derive(Debug)]
pub struct Endpoint<'h, R, W, M> {
    reader: FrameReader<R>,
    tx: Tx<W, M>,
    /// The client's handshake, kept to check the server's answer.
    client: Option<ClientHandshake<'h>>,
    tcp_closed: bool,
}

impl<'h, R, W, M> Endpoint<'h, R, W, M>
where
    R: AsRef<[u8]> + AsMut<[u8]>,
    W: AsRef<[u8]> + AsMut<[u8]>,
    M: MaskSource,
{
    /// A client: `handshake` is written into the send buffer at once;
    /// messages are read into `read`, frames queued in `write`, masked with
    /// keys from `mask`.
    pub fn client(
        handshake: ClientHandshake<'h>,
        read: R,
        write: W,
        mask: M,
        config: Config,
    ) -> Result<Self, Error> {
        let mut out = WriteBuf::new(write);
        let room = out.remaining();
        let n = handshake.encode(out.reserve(room)?)?;
        out.commit(n);
        Ok(Endpoint {
            reader: FrameReader::with_config(Role::Client, read, config),
            tx: Tx {
                writer: FrameWriter::client(mask),
                out,
                state: State::Handshake,
            },
            client: Some(handshake),
            tcp_closed: false,
        })
    }
}

impl<R, W> Endpoint<'static, R, W, NoMask>
where
    R: AsRef<[u8]> + AsMut<[u8]>,
    W: AsRef<[u8]> + AsMut<[u8]>,
{
    /// A server: waits for an upgrade request, answers it, then reads
    /// messages into `read` and queues frames in `write`.
    pub fn server(read: R, write: W, config: Config) -> Self {
        Endpoint {
            reader: FrameReader::with_config(Role::Server, read, config),
            tx: Tx {
                writer: FrameWriter::server(),
                out: WriteBuf::new(write),
                state: State::Handshake,
            },
            client: None,
            tcp_closed: false,
        }
    }
}

impl<R, W, M> Endpoint<'_, R, W, M>
where
    R: AsRef<[u8]> + AsMut<[u8]>,
    W: AsRef<[u8]> + AsMut<[u8]>,
    M: Masking,
{
    /// The connection state.
    pub fn state(&self) -> State {
        self.tx.state
    }

    /// Whether messages can be sent.
    pub fn is_open(&self) -> bool {
        self.tx.state == State::Open
    }

    /// Whether the close handshake is over, everything was flushed and the
    /// TCP connection was asked to close.
    pub fn is_done(&self) -> bool {
        self.tcp_closed
    }

    /// The sending half.
    pub fn tx(&mut self) -> &mut Tx<W, M> {
        &mut self.tx
    }

    /// Move queued frames into the socket's send buffer, as many as it takes
    /// now; returns how many bytes it took. When the connection is closed
    /// and nothing is left to send, closes the TCP connection (FIN).
    pub fn flush(&mut self, sock: &mut tcp::Socket<'_>) -> Result<usize, Error> {
        let mut sent = 0;
        if !self.tx.out.is_empty() && sock.may_send() {
            // `send_slice` fills the socket's ring across its wrap point.
            sent = sock.send_slice(self.tx.out.data())?;
            self.tx.out.consume(sent);
        }
        if self.tx.state == State::Closed && self.tx.out.is_empty() && !self.tcp_closed {
            sock.close();
            self.tcp_closed = true;
        }
        Ok(sent)
    }

    /// The next message, with the sending half to answer it; `Ok(None)` when
    /// no whole message has arrived yet (or the handshake is still going on).
    ///
    /// Pings are answered with a pong and a close frame with a close frame
    /// before they are returned. While the send buffer has less room than a
    /// control frame, nothing is read (flush first), so no answer is lost.
    /// An error is final: a close frame (or a handshake refusal) was queued.
    #[allow(clippy::type_complexity)]
    pub fn recv(
        &mut self,
        sock: &mut tcp::Socket<'_>,
    ) -> Result<Option<(Message<'_>, &mut Tx<W, M>)>, Error> {
        match self.tx.state {
            State::Handshake => {
                self.handshake(sock)?;
                if self.tx.state == State::Handshake {
                    return Ok(None);
                }
            }
            State::Closed => return Ok(None),
            State::Open | State::CloseSent => {}
        }
        if self.tx.out.remaining() < CONTROL_ROOM {
            return Ok(None);
        }
        if sock.can_recv() {
            let spare = self.reader.spare_mut();
            if !spare.is_empty() {
                let n = sock.recv_slice(spare)?;
                self.reader.commit(n);
            }
        }
        let tx = &mut self.tx;
        let msg = match self.reader.next() {
            Ok(Some(msg)) => msg,
            Ok(None) => return Ok(None),
            Err(e) => {
                tx.fail(e.close_code());
                return Err(Error::Protocol(e));
            }
        };
        match msg {
            Message::Ping(payload) if tx.state == State::Open => {
                tx.writer.write_pong(payload, &mut tx.out)?;
            }
            Message::Close(frame) => {
                if tx.state == State::Open {
                    // Echo the status code (RFC 6455 §5.5.1); no reason.
                    tx.writer
                        .write_close(frame.map(|f| f.code), "", &mut tx.out)?;
                }
                tx.state = State::Closed;
            }
            _ => {}
        }
        Ok(Some((msg, tx)))
    }

    /// Look at the bytes received so far (in place in the socket's buffer,
    /// copied into the reader's free space only to see them contiguously)
    /// and finish the opening handshake when the whole head is there. Only
    /// the head is taken out of the socket; frames behind it stay for `recv`.
    fn handshake(&mut self, sock: &mut tcp::Socket<'_>) -> Result<(), Error> {
        if !sock.can_recv() {
            return Ok(());
        }
        let spare = self.reader.spare_mut();
        let limit = spare.len().min(handshake::DEFAULT_MAX_HEAD_LEN);
        let n = sock.peek_slice(&mut spare[..limit])?;
        let head = &spare[..n];
        let tx = &mut self.tx;
        let outcome = match &self.client {
            Some(hs) => match hs.check_response(head) {
                Ok(Some(resp)) => Ok(Some(resp.consumed)),
                Ok(None) if n < limit => Ok(None),
                Ok(None) => Err(HandshakeError::HeaderTooLarge),
                Err(e) => Err(e),
            },
            None => match handshake::parse_request_with_limit(head, limit) {
                Ok(Some(req)) => {
                    let room = tx.out.remaining();
                    tx.out
                        .reserve(room)
                        .map_err(|_| HandshakeError::BufferTooSmall)
                        .and_then(|buf| handshake::write_accept(&req, None, &[], buf))
                        .map(|k| {
                            tx.out.commit(k);
                            Some(req.consumed)
                        })
                }
                Ok(None) => Ok(None),
                Err(e) => Err(e),
            },
        };
        let consumed = match outcome {
            Ok(Some(consumed)) => consumed,
            Ok(None) => return Ok(()),
            Err(e) => return Err(self.refuse(e)),
        };
        let mut left = consumed;
        while left > 0 {
            let k = sock.recv(|b| {
                let k = b.len().min(left);
                (k, k)
            })?;
            if k == 0 {
                break;
            }
            left -= k;
        }
        self.tx.state = State::Open;
        Ok(())
    }

    /// The handshake failed: a server queues the HTTP refusal; either side
    /// ends up closed.
    fn refuse(&mut self, e: HandshakeError) -> Error {
        if self.client.is_none() {
            let room = self.tx.out.remaining();
            if let Ok(buf) = self.tx.out.reserve(room)
                && let Ok(k) = handshake::write_reject(e, buf)
            {
                self.tx.out.commit(k);
            }
        }
        self.tx.state = State::Closed;
        Error::Handshake(e)
    }
}
