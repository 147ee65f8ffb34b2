//! A WebSocket endpoint over one smoltcp TCP socket: the codec's
//! [`Connection`] with smoltcp's socket buffers as its byte source and sink.
//!
//! The endpoint owns no memory of its own: the connection's frame reader and
//! send buffer sit on caller storage (`R`, `W`), and a client's masking keys
//! come from the caller's [`MaskSource`]. It never touches the network by
//! itself: [`Endpoint::recv`] pulls bytes out of the socket's receive buffer
//! and [`Endpoint::flush`] pushes queued frames into its send buffer; moving
//! packets is the caller's `Interface::poll`. Every protocol rule (both
//! opening handshakes, pongs, the close handshake, close codes, timeouts) is
//! the codec's; this file only moves bytes and passes the caller's clock.

use smoltcp::socket::tcp;
use tickwire_codec::rand::{MaskSource, NoMask};
use tickwire_codec::time::Instant;
use tickwire_codec::ws::handshake::ClientHandshake;
use tickwire_codec::ws::{Connection, ConnectionError, Masking, Message, Settings};

/// The sending half of an endpoint (the codec's), handed out beside every
/// received message so a handler can answer while the message still borrows
/// the receive buffer.
pub use tickwire_codec::ws::Sender as Tx;
/// Where an endpoint is in the life of its connection (the codec's).
pub use tickwire_codec::ws::State;

/// What went wrong on an endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Error {
    /// The connection failed or refused (handshake, protocol, timeout, a full
    /// send buffer: flush, poll, retry), as the codec says.
    Ws(ConnectionError),
    /// smoltcp refused to hand out received bytes.
    Recv(tcp::RecvError),
    /// smoltcp refused to take bytes to send.
    Send(tcp::SendError),
}

impl From<ConnectionError> for Error {
    fn from(e: ConnectionError) -> Self {
        Error::Ws(e)
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
            Error::Ws(e) => write!(f, "websocket: {e}"),
            Error::Recv(e) => write!(f, "tcp recv: {e}"),
            Error::Send(e) => write!(f, "tcp send: {e}"),
        }
    }
}

/// The text says the codec error (`websocket: ...`), so the source is the codec
/// error's own source: each level is printed once.
impl core::error::Error for Error {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Error::Ws(e) => e.source(),
            _ => None,
        }
    }
}

/// A smoltcp instant as the codec's.
pub fn codec_instant(now: smoltcp::time::Instant) -> Instant {
    Instant::from_nanos(u64::try_from(now.total_micros()).unwrap_or(0) * 1000)
}

/// A WebSocket endpoint (client or server) over one smoltcp TCP socket.
#[derive(Debug)]
pub struct Endpoint<R, W, M> {
    conn: Connection<R, W, M>,
    tcp_closed: bool,
}

impl<R, W, M> Endpoint<R, W, M>
where
    R: AsRef<[u8]> + AsMut<[u8]>,
    W: AsRef<[u8]> + AsMut<[u8]>,
    M: MaskSource,
{
    /// A client: `handshake` is queued in the send buffer at once; messages
    /// are read into `read`, frames queued in `write`, masked with keys from
    /// `mask`. Timers run on the caller's clock from `now`.
    pub fn client(
        handshake: &ClientHandshake<'_>,
        read: R,
        write: W,
        mask: M,
        settings: &Settings,
        now: Instant,
    ) -> Result<Self, Error> {
        Ok(Endpoint {
            conn: Connection::client(handshake, read, write, mask, settings, now)?,
            tcp_closed: false,
        })
    }
}

impl<R, W> Endpoint<R, W, NoMask>
where
    R: AsRef<[u8]> + AsMut<[u8]>,
    W: AsRef<[u8]> + AsMut<[u8]>,
{
    /// A server: waits for an upgrade request, accepts it, then reads
    /// messages into `read` and queues frames in `write`.
    pub fn server(read: R, write: W, settings: &Settings, now: Instant) -> Self {
        Endpoint {
            conn: Connection::server(read, write, settings, now),
            tcp_closed: false,
        }
    }
}

impl<R, W, M> Endpoint<R, W, M>
where
    R: AsRef<[u8]> + AsMut<[u8]>,
    W: AsRef<[u8]> + AsMut<[u8]>,
    M: Masking,
{
    /// The connection state.
    pub fn state(&self) -> State {
        self.conn.state()
    }

    /// Whether messages can be sent.
    pub fn is_open(&self) -> bool {
        self.conn.is_open()
    }

    /// Whether bytes wait for [`flush`](Self::flush) (or the TCP connection
    /// waits to be closed).
    pub fn wants_write(&self) -> bool {
        self.conn.wants_write()
    }

    /// Whether the connection is over, everything was flushed and the TCP
    /// connection was asked to close.
    pub fn is_done(&self) -> bool {
        self.tcp_closed
    }

    /// The sending half.
    pub fn tx(&mut self) -> &mut Tx<W, M> {
        self.conn.sender()
    }

    /// The codec connection itself.
    pub fn connection(&mut self) -> &mut Connection<R, W, M> {
        &mut self.conn
    }

    /// Run the connection's timers (handshake, close, keepalive, dead peer)
    /// at the caller's `now`; an error ends the connection.
    pub fn handle_timeout(&mut self, now: Instant) -> Result<(), Error> {
        Ok(self.conn.handle_timeout(now)?)
    }

    /// When [`handle_timeout`](Self::handle_timeout) wants to run next.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.conn.poll_timeout()
    }

    /// Move queued frames into the socket's send buffer, as many as it takes
    /// now; returns how many bytes it took. When the connection is over and
    /// nothing is left to send, closes the TCP connection (FIN).
    pub fn flush(&mut self, sock: &mut tcp::Socket<'_>) -> Result<usize, Error> {
        let mut sent = 0;
        let data = self.conn.transmit();
        if !data.is_empty() && sock.may_send() {
            // `send_slice` fills the socket's ring across its wrap point.
            sent = sock.send_slice(data)?;
            self.conn.handle_written(sent);
        }
        if self.conn.wants_shutdown() && !self.tcp_closed {
            sock.close();
            self.conn.handle_shutdown();
            self.tcp_closed = true;
        }
        Ok(sent)
    }

    /// The next message, with the sending half to answer it; `Ok(None)` when
    /// no whole message has arrived yet (or the handshake is still going on).
    ///
    /// Pings are answered with a pong and a close frame with a close frame
    /// before they are returned (control frames never wait behind a full send
    /// buffer: see [`Connection`]). An error is final: a close frame (or a
    /// handshake refusal) was queued.
    #[allow(clippy::type_complexity)]
    pub fn recv(
        &mut self,
        sock: &mut tcp::Socket<'_>,
    ) -> Result<Option<(Message<'_>, &mut Tx<W, M>)>, Error> {
        if sock.can_recv() {
            let buf = self.conn.read_buf();
            if !buf.is_empty() {
                let n = sock.recv_slice(buf)?;
                self.conn.handle_read(n);
            }
        }
        if self.conn.advance()? {
            return Ok(self.conn.message_with_sender());
        }
        // The peer's FIN with nothing left to read: the end of its stream.
        let ended = matches!(
            sock.state(),
            tcp::State::CloseWait
                | tcp::State::LastAck
                | tcp::State::Closing
                | tcp::State::TimeWait
        );
        if ended && !sock.can_recv() && self.conn.state() != State::Closed {
            self.conn.handle_eof()?;
        }
        Ok(None)
    }
}
