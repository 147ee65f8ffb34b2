//! [`Connection`]: the one WebSocket state machine, sans-IO, for both roles.
//!
//! It owns everything RFC 6455 asks of a connection beyond framing: the opening handshake
//! (client request and answer check, server request parse and answer), automatic pongs,
//! the close handshake in every state (ours, theirs, both at once, a timeout), failing
//! with the right close code, discarding data after our close, and keepalive (a ping after
//! an idle interval, a dead-peer timeout). It does no I/O and reads no clock: bytes come
//! in through the caller, bytes go out through the caller, and time is an
//! [`Instant`] the caller passes. The same connection runs in a blocking std transport, in
//! tokio, and in a kernel-bypass poll loop reading its TSC.
//!
//! Its methods come in four kinds, as quinn-proto's `Connection`'s do:
//!
//! - **getters** on `&self`: [`state`](Connection::state), [`role`](Connection::role),
//!   [`protocol`](Connection::protocol), [`wants_write`](Connection::wants_write),
//!   [`poll_timeout`](Connection::poll_timeout) (when to call
//!   [`handle_timeout`](Connection::handle_timeout) next);
//! - **`handle_*`** for what arrives: bytes read into [`read_buf`](Connection::read_buf)
//!   ([`handle_read`](Connection::handle_read)), the end of the stream
//!   ([`handle_eof`](Connection::handle_eof)), bytes the socket took
//!   ([`handle_written`](Connection::handle_written)), the passing of time
//!   ([`handle_timeout`](Connection::handle_timeout)), a server's upgrade request
//!   ([`handle_upgrade`](Connection::handle_upgrade));
//! - **mutators** for what the application asks: [`send_text`](Connection::send_text),
//!   [`send_binary`](Connection::send_binary), [`send_ping`](Connection::send_ping),
//!   [`close`](Connection::close), on the connection or on the [`Sender`] handed out
//!   beside each message;
//! - **`poll_*`** for what must come out: [`poll_message`](Connection::poll_message)
//!   (the next message, borrowed from the read buffer, pongs and close echoes already
//!   queued), [`transmit`](Connection::transmit) (the bytes to write),
//!   [`wants_shutdown`](Connection::wants_shutdown) (shut the write half now).
//!
//! A driver's loop: read into `read_buf`, `handle_read`, drain `poll_message`, write
//! `transmit` and `handle_written`, shut the socket when `wants_shutdown`; before waiting,
//! `handle_timeout(now)` and wait at most until `poll_timeout()`. An instant from
//! `poll_timeout` that has already passed means "call `handle_timeout` now" (the
//! connection arms its close and keepalive timers from the `now` of that call, so it never
//! needs a clock between them). Bytes read since the last `handle_timeout` count as
//! received at its `now`.
//!
//! ```
//! use tickwire_codec::time::Instant;
//! use tickwire_codec::rand::{MaskRng, NoMask};
//! use tickwire_codec::ws::{Connection, Message, Settings};
//! use tickwire_codec::ws::handshake::ClientHandshake;
//!
//! let now = Instant::from_nanos(0);
//! let hs = ClientHandshake::new("example.com", "/feed", [7; 16]);
//! let settings = Settings::default();
//! let mut client = Connection::client(&hs, vec![0; 4096], vec![0; 4096],
//!     MaskRng::from_seed([1; 32]), &settings, now).unwrap();
//! let mut server = Connection::server(vec![0; 4096], vec![0; 4096], &settings, now);
//!
//! // Move bytes from one to the other (a socket would sit in between).
//! fn pump<A, B, C, D, E, F>(from: &mut Connection<A, B, C>, to: &mut Connection<D, E, F>)
//! where A: AsRef<[u8]> + AsMut<[u8]>, B: AsRef<[u8]> + AsMut<[u8]>, C: tickwire_codec::ws::Masking,
//!       D: AsRef<[u8]> + AsMut<[u8]>, E: AsRef<[u8]> + AsMut<[u8]>, F: tickwire_codec::ws::Masking {
//!     let out = from.transmit();
//!     let n = out.len().min(to.read_buf().len());
//!     to.read_buf()[..n].copy_from_slice(&from.transmit()[..n]);
//!     to.handle_read(n);
//!     from.handle_written(n);
//! }
//!
//! pump(&mut client, &mut server);
//! assert!(server.handle_upgrade(|_req| Default::default()).unwrap());
//! pump(&mut server, &mut client);
//! assert!(client.poll_message().unwrap().is_none()); // handshake done, no message yet
//! client.send_text("hello").unwrap();
//! pump(&mut client, &mut server);
//! assert_eq!(server.poll_message().unwrap(), Some(Message::Text("hello")));
//! ```

#[cfg(feature = "deflate")]
mod deflate;
mod doc_pair;
mod handshake;
mod sender;
mod storage;
#[cfg(test)]
mod tests;

use core::time::Duration;

#[doc(hidden)]
pub use doc_pair::{DocBuf, doc_pair, doc_pump};
pub use handshake::Answer;
use sender::Timers;
pub use sender::{CONTROL_ROOM, Sender};

use self::handshake::Hs;
use crate::rand::{MaskSource, NoMask};
use crate::time::Instant;
use crate::ws::handshake::{
    ClientHandshake, DEFAULT_MAX_HEAD_LEN, HandshakeError, MAX_OFFERED_PROTOCOLS_LEN,
};
use crate::ws::{CloseCode, Config, EncodeError, FrameReader, FrameWriter, Masking, Message, Role};

/// Where a connection stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// The opening handshake is under way.
    Handshake,
    /// Messages flow both ways.
    Open,
    /// A close frame was sent (by the application, or to fail the connection); input is
    /// discarded until the peer's close or the close timeout.
    Closing,
    /// The connection is over: both closes were exchanged, or it failed. The write half
    /// is shut once what is queued is written.
    Closed,
}

/// Settings of a [`Connection`]. Keepalive and the dead-peer timeout are off by default.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Frame and message size limits. A frame or message on the wire is held to what the
    /// read buffer holds as well; a compressed message, inflated into the connection's
    /// own buffer, to `limits.max_message_size` only (feature `deflate`).
    pub limits: Config,
    /// Answer pings automatically (default on).
    pub auto_pong: bool,
    /// Split outgoing data messages into frames of at most this many bytes (0: never).
    pub fragment_size: usize,
    /// Largest opening-handshake head accepted (default 8 KiB).
    pub max_head_len: usize,
    /// Time allowed for the opening handshake (default 10 s; `None`: no limit).
    pub handshake_timeout: Option<Duration>,
    /// Time the peer has to answer our close frame (default 5 s).
    pub close_timeout: Duration,
    /// Send a ping when nothing was received for this long (default: never).
    pub keepalive: Option<Duration>,
    /// Fail the connection (locally, as code 1006) when nothing was received for this
    /// long (default: never). Pair it with a shorter `keepalive`, so a live but quiet
    /// peer answers a ping in time.
    pub dead_peer_timeout: Option<Duration>,
    /// permessage-deflate (feature `deflate`; default off): a client offers it with
    /// these parameters, a server accepts a client's offer with them. Compression is
    /// on only when both sides agreed ([`Connection::deflate`]).
    #[cfg(feature = "deflate")]
    pub deflate: Option<crate::ws::deflate::DeflateConfig>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            limits: Config::default(),
            auto_pong: true,
            fragment_size: 0,
            max_head_len: DEFAULT_MAX_HEAD_LEN,
            handshake_timeout: Some(Duration::from_secs(10)),
            close_timeout: Duration::from_secs(5),
            keepalive: None,
            dead_peer_timeout: None,
            #[cfg(feature = "deflate")]
            deflate: None,
        }
    }
}

/// What a [`Connection`] can fail or refuse with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConnectionError {
    /// The opening handshake failed: a bad answer (client), or a bad or refused request
    /// (server; the HTTP refusal is queued).
    Handshake(HandshakeError),
    /// The opening handshake did not finish in time.
    HandshakeTimeout,
    /// The peer broke the protocol or a limit; a close frame with
    /// [`close_code`](crate::ws::Error::close_code) is queued.
    Protocol(crate::ws::Error),
    /// Our close frame was not answered within the close timeout.
    CloseTimeout,
    /// Nothing was received within the dead-peer timeout; the connection was closed
    /// locally (code 1006, no close frame).
    DeadPeer,
    /// The peer ended the stream without a close handshake (code 1006).
    ConnectionLost,
    /// The connection was closed or failed before this call.
    AlreadyClosed,
    /// The opening handshake is not over yet.
    HandshakeInProgress,
    /// The message cannot be encoded (nothing was queued).
    Encode(EncodeError),
    /// No room for the message now: write out what is queued, then try again.
    Backpressure,
    /// The message can never fit the output buffer.
    MessageTooLarge {
        /// Bytes the message takes on the wire.
        len: usize,
        /// Room the output buffer has for application messages.
        capacity: usize,
    },
}

impl From<EncodeError> for ConnectionError {
    fn from(e: EncodeError) -> Self {
        match e {
            EncodeError::BufferFull => ConnectionError::Backpressure,
            e => ConnectionError::Encode(e),
        }
    }
}

impl core::fmt::Display for ConnectionError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Handshake(_) => f.write_str("opening handshake failed"),
            Self::HandshakeTimeout => f.write_str("opening handshake timed out"),
            Self::Protocol(e) => write!(f, "protocol error (close {})", e.close_code().0),
            Self::CloseTimeout => f.write_str("peer did not answer the close in time"),
            Self::DeadPeer => f.write_str("nothing received within the dead-peer timeout"),
            Self::ConnectionLost => f.write_str("connection lost without a close handshake"),
            Self::AlreadyClosed => f.write_str("connection already closed"),
            Self::HandshakeInProgress => f.write_str("opening handshake still in progress"),
            Self::Encode(_) => f.write_str("cannot encode message"),
            Self::Backpressure => f.write_str("output buffer full; write out and retry"),
            Self::MessageTooLarge { len, capacity } => write!(
                f,
                "message of {len} bytes exceeds the {capacity} bytes the output buffer has for messages"
            ),
        }
    }
}

impl core::error::Error for ConnectionError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Self::Handshake(e) => Some(e),
            Self::Protocol(e) => Some(e),
            Self::Encode(e) => Some(e),
            _ => None,
        }
    }
}

/// A timer that is off, wants arming at the next `handle_timeout`, or runs to an instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Timer {
    Off,
    Due,
    At(Instant),
}

/// One WebSocket connection, client or server: see the [module docs](self).
#[derive(Debug)]
pub struct Connection<R, W, M> {
    reader: FrameReader<R>,
    tx: Sender<W, M>,
    hs: Hs,
    /// Handshake bytes read into the reader's free space (not committed).
    hs_got: usize,
    /// Handshake bytes arrived since the last look.
    hs_new: bool,
    max_head_len: usize,
    /// The subprotocol agreed on (empty: none).
    protocol: heapless::String<MAX_OFFERED_PROTOCOLS_LEN>,
    /// permessage-deflate as configured (offered by a client, accepted by a server).
    #[cfg(feature = "deflate")]
    deflate_config: Option<crate::ws::deflate::DeflateConfig>,
    /// permessage-deflate as negotiated.
    #[cfg(feature = "deflate")]
    negotiated: Option<crate::ws::deflate::Negotiated>,
    /// permessage-deflate's receiving stream and inflated message, once negotiated.
    #[cfg(feature = "deflate")]
    inflate: Option<alloc::boxed::Box<deflate::Recv>>,
}

impl<R, W, M> Connection<R, W, M>
where
    R: AsRef<[u8]> + AsMut<[u8]>,
    W: AsRef<[u8]> + AsMut<[u8]>,
    M: Masking,
{
    fn with(
        role: Role,
        hs: Hs,
        read: R,
        writer: FrameWriter<M>,
        write: W,
        settings: &Settings,
        now: Instant,
    ) -> Self {
        let writer = writer.with_fragment_size(settings.fragment_size);
        Connection {
            reader: FrameReader::with_config(role, read, settings.limits),
            tx: Sender::new(
                writer,
                write,
                settings.auto_pong,
                settings.close_timeout,
                Timers {
                    handshake: settings.handshake_timeout.map(|t| now + t),
                    rx: false,
                    ping: None,
                    dead: None,
                    keepalive: settings.keepalive,
                    dead_peer: settings.dead_peer_timeout,
                    last_now: now,
                },
            ),
            hs,
            hs_got: 0,
            hs_new: false,
            max_head_len: settings.max_head_len,
            protocol: heapless::String::new(),
            #[cfg(feature = "deflate")]
            deflate_config: settings.deflate,
            #[cfg(feature = "deflate")]
            negotiated: None,
            #[cfg(feature = "deflate")]
            inflate: None,
        }
    }
}

impl<R, W, M> Connection<R, W, M>
where
    R: AsRef<[u8]> + AsMut<[u8]>,
    W: AsRef<[u8]> + AsMut<[u8]>,
    M: MaskSource,
{
    /// A client whose opening request (`handshake`) is queued at once; frames are read
    /// into `read`, queued in `write` and masked with keys from `mask`. The handshake
    /// timeout runs from `now`.
    ///
    /// ```
    /// use tickwire_codec::rand::MaskRng;
    /// use tickwire_codec::time::Instant;
    /// use tickwire_codec::ws::handshake::ClientHandshake;
    /// use tickwire_codec::ws::connection::doc_pump;
    /// use tickwire_codec::ws::{Connection, Message, Settings};
    ///
    /// let (now, settings) = (Instant::from_nanos(0), Settings::default());
    /// let hs = ClientHandshake::new("example.com", "/feed", [7; 16]); // a random key
    /// let rng = MaskRng::from_seed([1; 32]);
    /// let mut client = Connection::client(&hs, [0u8; 4096], [0u8; 4096], rng, &settings, now).unwrap();
    /// let mut server = Connection::server([0u8; 4096], [0u8; 4096], &settings, now);
    /// doc_pump(&mut client, &mut server); // the upgrade request
    /// assert!(server.handle_upgrade(|_request| Default::default()).unwrap());
    /// doc_pump(&mut server, &mut client); // 101 Switching Protocols
    /// assert_eq!(client.poll_message().unwrap(), None); // open, no message yet
    /// server.send_text("welcome").unwrap();
    /// doc_pump(&mut server, &mut client);
    /// assert_eq!(client.poll_message().unwrap(), Some(Message::Text("welcome")));
    /// ```
    pub fn client(
        handshake: &ClientHandshake<'_>,
        read: R,
        write: W,
        mask: M,
        settings: &Settings,
        now: Instant,
    ) -> Result<Self, ConnectionError> {
        #[cfg(feature = "deflate")]
        let offered;
        #[cfg(feature = "deflate")]
        let handshake = match settings.deflate {
            Some(config) => {
                offered = handshake.deflate(config);
                &offered
            }
            None => handshake,
        };
        let check = handshake
            .response_check()
            .map_err(ConnectionError::Handshake)?;
        let mut conn = Self::with(
            Role::Client,
            Hs::Client(check),
            read,
            FrameWriter::client(mask),
            write,
            settings,
            now,
        );
        let out = conn.tx.out();
        let room = out.remaining();
        let buf = out
            .reserve(room)
            .map_err(|_| ConnectionError::Handshake(HandshakeError::BufferTooSmall))?;
        let n = handshake.encode(buf).map_err(ConnectionError::Handshake)?;
        out.commit(n);
        Ok(conn)
    }
}

impl<R, W> Connection<R, W, NoMask>
where
    R: AsRef<[u8]> + AsMut<[u8]>,
    W: AsRef<[u8]> + AsMut<[u8]>,
{
    /// A server waiting for an upgrade request (answer it with
    /// [`handle_upgrade`](Self::handle_upgrade); [`poll_message`](Self::poll_message)
    /// accepts it with no subprotocol). The handshake timeout runs from `now`.
    ///
    /// ```
    /// use tickwire_codec::rand::MaskRng;
    /// use tickwire_codec::time::Instant;
    /// use tickwire_codec::ws::handshake::ClientHandshake;
    /// use tickwire_codec::ws::connection::doc_pump;
    /// use tickwire_codec::ws::{Connection, Message, Settings};
    ///
    /// let (now, settings) = (Instant::from_nanos(0), Settings::default());
    /// let hs = ClientHandshake::new("example.com", "/feed", [7; 16]); // a random key
    /// let rng = MaskRng::from_seed([1; 32]);
    /// let mut client = Connection::client(&hs, [0u8; 4096], [0u8; 4096], rng, &settings, now).unwrap();
    /// let mut server = Connection::server([0u8; 4096], [0u8; 4096], &settings, now);
    /// doc_pump(&mut client, &mut server); // the upgrade request
    /// assert!(server.handle_upgrade(|_request| Default::default()).unwrap());
    /// doc_pump(&mut server, &mut client); // 101 Switching Protocols
    /// assert_eq!(client.poll_message().unwrap(), None); // open, no message yet
    /// server.send_text("welcome").unwrap();
    /// doc_pump(&mut server, &mut client);
    /// assert_eq!(client.poll_message().unwrap(), Some(Message::Text("welcome")));
    /// ```
    pub fn server(read: R, write: W, settings: &Settings, now: Instant) -> Self {
        Self::with(
            Role::Server,
            Hs::Server,
            read,
            FrameWriter::server(),
            write,
            settings,
            now,
        )
    }
}

impl<R, W, M> Connection<R, W, M>
where
    R: AsRef<[u8]> + AsMut<[u8]>,
    W: AsRef<[u8]> + AsMut<[u8]>,
    M: Masking,
{
    // ---- getters ----

    /// Where the connection stands.
    #[inline]
    pub fn state(&self) -> State {
        self.tx.state
    }

    /// This end's role.
    pub fn role(&self) -> Role {
        self.tx.writer_role()
    }

    /// Whether messages can be sent.
    pub fn is_open(&self) -> bool {
        self.tx.state == State::Open
    }

    /// Whether the connection failed (an error was reported), rather than closed cleanly.
    pub fn is_failed(&self) -> bool {
        self.tx.failed
    }

    /// The subprotocol agreed on in the opening handshake.
    pub fn protocol(&self) -> Option<&str> {
        (!self.protocol.is_empty()).then_some(self.protocol.as_str())
    }

    /// The permessage-deflate parameters agreed on in the opening handshake (feature
    /// `deflate`); `None` while it runs, or when compression is off.
    ///
    /// ```
    /// # use tickwire_codec::ws::connection::doc_pair;
    /// let (client, server) = doc_pair(); // no permessage-deflate offered
    /// assert!(client.deflate().is_none() && server.deflate().is_none());
    /// ```
    #[cfg(feature = "deflate")]
    pub fn deflate(&self) -> Option<crate::ws::deflate::Negotiated> {
        self.negotiated
    }

    /// Whether bytes wait to be written (or the write half waits to be shut).
    #[inline]
    pub fn wants_write(&self) -> bool {
        self.tx.wants_write()
    }

    /// Received bytes not yet turned into messages.
    pub fn buffered(&self) -> usize {
        if matches!(self.hs, Hs::Done) {
            self.reader.buffered()
        } else {
            self.hs_got
        }
    }

    /// When [`handle_timeout`](Self::handle_timeout) should run next (`None`: no timer
    /// runs). An instant that already passed means now.
    pub fn poll_timeout(&self) -> Option<Instant> {
        match self.tx.state {
            State::Handshake => self.tx.timers.handshake,
            _ => self.tx.poll_timeout(),
        }
    }

    /// The frame reader. Once the handshake is over a driver may swap it for another of
    /// the same role and limits (a split connection keeps its reader in the read half
    /// and lends it back for each step).
    pub fn reader_mut(&mut self) -> &mut FrameReader<R> {
        &mut self.reader
    }

    /// The sending half, to queue messages while a received one is borrowed.
    pub fn sender(&mut self) -> &mut Sender<W, M> {
        &mut self.tx
    }

    // ---- handle_*: what arrives ----

    /// Free space to read the peer's bytes into; then [`handle_read`](Self::handle_read).
    #[inline]
    pub fn read_buf(&mut self) -> &mut [u8] {
        let spare = self.reader.spare_mut();
        if matches!(self.hs, Hs::Done) {
            spare
        } else {
            let got = self.hs_got.min(spare.len());
            &mut spare[got..]
        }
    }

    /// `n` bytes were read into [`read_buf`](Self::read_buf). After the connection
    /// failed on a protocol error they are dropped unparsed: the stream can no longer be
    /// trusted to be framed, and only its end (or the close timeout) is waited for.
    #[inline]
    pub fn handle_read(&mut self, n: usize) {
        if self.tx.failed {
            self.tx.timers.rx = true;
            return;
        }
        if matches!(self.hs, Hs::Done) {
            self.reader.commit(n);
        } else {
            self.hs_got += n;
            self.hs_new = true;
        }
        self.tx.timers.rx = true;
    }

    /// Copy in as much of `bytes` as fits (for callers whose bytes are already in
    /// memory); returns how many were taken.
    pub fn feed(&mut self, bytes: &[u8]) -> usize {
        let buf = self.read_buf();
        let n = buf.len().min(bytes.len());
        buf[..n].copy_from_slice(&bytes[..n]);
        self.handle_read(n);
        n
    }

    /// The peer ended its stream (a read returned 0). Drain
    /// [`poll_message`](Self::poll_message) first: messages before the end still count.
    /// `Err(ConnectionLost)` unless the close handshake was over (or the connection had
    /// failed already, which was reported then).
    pub fn handle_eof(&mut self) -> Result<(), ConnectionError> {
        let clean = match self.tx.state {
            State::Closed => true,
            State::Closing => self.tx.failed,
            State::Handshake | State::Open => false,
        };
        self.hs = Hs::Done;
        self.tx.finish(!clean);
        if clean {
            Ok(())
        } else {
            Err(ConnectionError::ConnectionLost)
        }
    }

    /// `n` bytes of [`transmit`](Self::transmit) were written.
    #[inline]
    pub fn handle_written(&mut self, n: usize) {
        self.tx.handle_written(n);
    }

    /// The write half was shut (after [`wants_shutdown`](Self::wants_shutdown)).
    pub fn handle_shutdown(&mut self) {
        self.tx.handle_shutdown();
    }

    /// Time passed: enforce the handshake, close and dead-peer timeouts, send a keepalive
    /// ping when due. An error ends the connection (a handshake or close timeout, a dead
    /// peer); the write half then waits to be shut.
    pub fn handle_timeout(&mut self, now: Instant) -> Result<(), ConnectionError> {
        if self.tx.state == State::Handshake {
            let t = &mut self.tx.timers;
            t.last_now = t.last_now.max(now);
            if t.handshake.is_some_and(|at| now >= at) {
                t.handshake = None;
                self.hs = Hs::Done;
                self.tx.finish(true);
                return Err(ConnectionError::HandshakeTimeout);
            }
            return Ok(());
        }
        self.tx.handle_timeout(now)
    }

    // ---- mutators: what the application asks ----

    /// Queue a text message; see [`Sender::send_text`].
    ///
    /// ```
    /// # use tickwire_codec::ws::connection::{doc_pair, doc_pump};
    /// # let (mut client, mut server) = doc_pair();
    /// use tickwire_codec::ws::Message;
    ///
    /// client.send_text("hello")?; // queued in the write buffer
    /// doc_pump(&mut client, &mut server); // client.transmit() onto the socket, into server
    /// assert_eq!(server.poll_message()?, Some(Message::Text("hello")));
    /// # Ok::<(), tickwire_codec::ws::ConnectionError>(())
    /// ```
    #[inline]
    pub fn send_text(&mut self, text: &str) -> Result<(), ConnectionError> {
        self.tx.send_text(text)
    }

    /// Queue a binary message; see [`Sender::send_binary`].
    ///
    /// ```
    /// # use tickwire_codec::ws::connection::{doc_pair, doc_pump};
    /// # let (mut client, mut server) = doc_pair();
    /// use tickwire_codec::ws::Message;
    ///
    /// server.send_binary(&[1, 2, 3])?;
    /// doc_pump(&mut server, &mut client);
    /// assert_eq!(client.poll_message()?, Some(Message::Binary(&[1, 2, 3])));
    /// # Ok::<(), tickwire_codec::ws::ConnectionError>(())
    /// ```
    #[inline]
    pub fn send_binary(&mut self, data: &[u8]) -> Result<(), ConnectionError> {
        self.tx.send_binary(data)
    }

    /// Queue a ping; see [`Sender::send_ping`].
    ///
    /// ```
    /// # use tickwire_codec::ws::connection::{doc_pair, doc_pump};
    /// # let (mut client, mut server) = doc_pair();
    /// use tickwire_codec::ws::Message;
    ///
    /// client.send_ping(b"t1")?;
    /// doc_pump(&mut client, &mut server);
    /// assert_eq!(server.poll_message()?, Some(Message::Ping(b"t1"))); // its pong is queued
    /// doc_pump(&mut server, &mut client);
    /// assert_eq!(client.poll_message()?, Some(Message::Pong(b"t1")));
    /// # Ok::<(), tickwire_codec::ws::ConnectionError>(())
    /// ```
    pub fn send_ping(&mut self, payload: &[u8]) -> Result<(), ConnectionError> {
        self.tx.send_ping(payload)
    }

    /// Queue a pong; see [`Sender::send_pong`].
    ///
    /// ```
    /// # use tickwire_codec::ws::connection::{doc_pair, doc_pump};
    /// # let (mut client, mut server) = doc_pair();
    /// use tickwire_codec::ws::Message;
    ///
    /// client.send_pong(b"alive")?;
    /// doc_pump(&mut client, &mut server);
    /// assert_eq!(server.poll_message()?, Some(Message::Pong(b"alive")));
    /// # Ok::<(), tickwire_codec::ws::ConnectionError>(())
    /// ```
    pub fn send_pong(&mut self, payload: &[u8]) -> Result<(), ConnectionError> {
        self.tx.send_pong(payload)
    }

    /// Start the close handshake; see [`Sender::close`].
    ///
    /// ```
    /// # use tickwire_codec::ws::connection::{doc_pair, doc_pump};
    /// # let (mut client, mut server) = doc_pair();
    /// use tickwire_codec::ws::{CloseCode, Message, State};
    ///
    /// client.close(CloseCode::NORMAL, "bye")?; // the transport's signature: a code or None
    /// assert_eq!(client.state(), State::Closing);
    /// doc_pump(&mut client, &mut server);
    /// assert!(matches!(server.poll_message()?, Some(Message::Close(_)))); // answered
    /// doc_pump(&mut server, &mut client);
    /// assert!(matches!(client.poll_message()?, Some(Message::Close(_))));
    /// assert_eq!(client.state(), State::Closed);
    /// # Ok::<(), tickwire_codec::ws::ConnectionError>(())
    /// ```
    pub fn close(
        &mut self,
        code: impl Into<Option<CloseCode>>,
        reason: &str,
    ) -> Result<(), ConnectionError> {
        self.tx.close(code, reason)
    }

    // ---- poll_*: what must come out ----

    /// The bytes to write next (empty when none).
    #[inline]
    pub fn transmit(&self) -> &[u8] {
        self.tx.transmit()
    }

    /// Whether the write half should be shut now (the connection is over and everything
    /// queued is written); then [`handle_shutdown`](Self::handle_shutdown).
    #[inline]
    pub fn wants_shutdown(&self) -> bool {
        self.tx.wants_shutdown()
    }

    /// The next message, borrowed from the read buffer; `Ok(None)` when no whole message
    /// is buffered (read more), during the handshake, or once closed cleanly.
    ///
    /// Pings are answered (a pong queued) and a peer's close echoed before they are
    /// returned; after our close, data is discarded until the peer's close, which is
    /// returned. A protocol error is returned at once with its close frame queued (and
    /// the write half shut after it); later calls discard input until the end of the
    /// peer's stream ([`handle_eof`](Self::handle_eof)) or the close timeout, then say
    /// [`ConnectionError::AlreadyClosed`]. A server still in its handshake accepts the request
    /// with no subprotocol (use [`handle_upgrade`](Self::handle_upgrade) to decide).
    #[inline]
    pub fn poll_message(&mut self) -> Result<Option<Message<'_>>, ConnectionError> {
        Ok(self.poll_message_with_sender()?.map(|(m, _)| m))
    }

    /// [`poll_message`](Self::poll_message), with the sending half to answer while the
    /// message is borrowed.
    #[inline]
    #[allow(clippy::type_complexity)]
    pub fn poll_message_with_sender(
        &mut self,
    ) -> Result<Option<(Message<'_>, &mut Sender<W, M>)>, ConnectionError> {
        if self.advance()? {
            Ok(self.message_with_sender())
        } else {
            Ok(None)
        }
    }

    /// Process buffered input up to the next message for the application: `Ok(true)`
    /// when one is ready for [`message`](Self::message) (the two halves of
    /// [`poll_message`](Self::poll_message), for drivers that must go on using the
    /// connection when there is none).
    #[inline]
    pub fn advance(&mut self) -> Result<bool, ConnectionError> {
        if self.advance_data()? {
            return Ok(true);
        }
        // Open, nothing buffered (the last read ended on a message boundary): no frame
        // to find, no call.
        if self.tx.state == State::Open && self.reader.buffered() == 0 {
            return Ok(false);
        }
        self.advance_general()
    }

    /// The fast half of [`advance`](Self::advance), for a driver's hot path: `Ok(true)`
    /// when the next message is a whole unfragmented text or binary frame already
    /// buffered on an open connection, which is then ready for
    /// [`message`](Self::message) (such a message is delivered as it is: no answer, no
    /// state change); `Ok(false)`, with nothing changed, for everything else (no whole
    /// frame buffered, a control frame, fragments, the handshake, closing): call
    /// `advance`. An error is `advance`'s, with its close frame queued.
    #[inline(always)]
    pub fn advance_data(&mut self) -> Result<bool, ConnectionError> {
        if self.tx.state != State::Open {
            return Ok(false);
        }
        match self.reader.advance_fast() {
            Ok(ready) => Ok(ready),
            Err(e) => Err(self.protocol_error(e)),
        }
    }

    /// The peer broke the protocol: fail with its close code.
    #[cold]
    #[inline(never)]
    fn protocol_error(&mut self, e: crate::ws::Error) -> ConnectionError {
        self.tx.fail(Some(e.close_code()));
        ConnectionError::Protocol(e)
    }

    /// [`advance`](Self::advance) beyond its fast half.
    #[inline(never)]
    fn advance_general(&mut self) -> Result<bool, ConnectionError> {
        loop {
            match self.tx.state {
                State::Open => {}
                // After a failure nothing more is parsed (see `handle_read`).
                State::Closing if self.tx.failed => return Ok(false),
                State::Closing => {}
                State::Handshake => {
                    if !self.poll_handshake()? {
                        return Ok(false);
                    }
                    continue;
                }
                State::Closed => {
                    return if self.tx.failed {
                        Err(ConnectionError::AlreadyClosed)
                    } else {
                        Ok(false)
                    };
                }
            }
            // With no byte buffered there is no frame to find: the common case, the last
            // read ended on a message boundary, costs one compare.
            if self.reader.buffered() == 0 {
                return Ok(false);
            }
            match self.reader.advance() {
                Ok(true) => {}
                Ok(false) => return Ok(false),
                Err(e) => return Err(self.protocol_error(e)),
            }
            let deliver = match self.reader.message() {
                Some(msg) => self.tx.on_message(&msg),
                None => false,
            };
            if deliver {
                #[cfg(feature = "deflate")]
                if let Some(d) = self.inflate.as_deref_mut()
                    && let Some(c) = self.reader.compressed()
                    && let Err(e) = d.inflate(c, self.reader.max_decoded_size())
                {
                    return Err(self.protocol_error(e));
                }
                return Ok(true);
            }
        }
    }

    /// The message the last [`advance`](Self::advance) made ready.
    #[inline]
    pub fn message(&self) -> Option<Message<'_>> {
        #[cfg(feature = "deflate")]
        if let Some(d) = self.inflate.as_deref()
            && self.reader.compressed().is_some()
        {
            return Some(d.message());
        }
        self.reader.message()
    }

    /// [`message`](Self::message), with the sending half.
    #[inline]
    #[allow(clippy::type_complexity)]
    pub fn message_with_sender(&mut self) -> Option<(Message<'_>, &mut Sender<W, M>)> {
        let tx = &mut self.tx;
        #[cfg(feature = "deflate")]
        if let Some(d) = self.inflate.as_deref()
            && self.reader.compressed().is_some()
        {
            return Some((d.message(), tx));
        }
        self.reader.message().map(|m| (m, tx))
    }

    /// Drive the opening handshake with what was received: `Ok(true)` once messages
    /// flow. A client checks the server's answer; a server accepts the request with no
    /// subprotocol (use [`handle_upgrade`](Self::handle_upgrade) to decide).
    pub fn poll_handshake(&mut self) -> Result<bool, ConnectionError> {
        self.handle_upgrade(|_| Answer::default())
    }

    /// The opening handshake happened elsewhere (an HTTP server upgraded the stream, or
    /// a test): messages flow from now. A client's queued request is dropped. A no-op
    /// once the handshake is over.
    pub fn skip_handshake(&mut self) {
        if self.tx.state == State::Handshake {
            self.tx.discard_output();
            self.open(0);
        }
    }
}

#[cfg(feature = "deflate")]
impl<R, W, M> Connection<R, W, M>
where
    R: AsRef<[u8]> + AsMut<[u8]>,
    W: AsRef<[u8]> + AsMut<[u8]>,
    M: Masking,
{
    /// The handshake agreed on permessage-deflate with `n`: accept RSV1, and make the
    /// two streams.
    fn enable_deflate(&mut self, n: crate::ws::deflate::Negotiated) {
        use crate::ws::deflate::{Deflater, Inflater, RSV1};
        let role = self.role();
        let config = self.deflate_config.unwrap_or_default();
        self.reader.set_allowed_rsv(RSV1);
        self.inflate = Some(deflate::Recv::new(Inflater::for_role(&n, role)));
        let deflater = Deflater::for_role(&n, role, &config);
        self.tx.deflate_plan = Some(deflate::SendPlan::of(&deflater));
        self.tx.deflate = Some(deflate::Send::new(deflater));
        self.negotiated = Some(n);
    }
}
