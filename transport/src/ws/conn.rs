//! The driver shared by client and server, blocking and evented mode: [`Conn`] moves
//! bytes between a non-blocking socket and the codec's [`Connection`], waits when the
//! socket would block (blocking mode), and reads the clock. Every protocol rule (the
//! opening handshake, pongs, the close handshake, close codes, keepalive, timeouts) lives
//! in the codec; this file decides only when to read, write and wait.
//!
//! Blocking mode is the same code with a private `mio::Poll` to wait on when the socket
//! would block; evented mode returns instead and lets the caller's own poll say when to
//! come back.
//!
//! Blocking mode with no codec timer running (no close under way, no keepalive) puts the
//! socket itself in blocking mode, so a `recv` that waits is one `read(2)` that sleeps in
//! the kernel, and a send is one `write(2)`, rather than a read that fails with `EAGAIN`,
//! an `epoll_wait` and a second read. A read timeout is then the socket's own receive
//! timeout (`SO_RCVTIMEO`), set only when it changes: the read stays one system call.
//! Every other socket operation switches the socket back to non-blocking first; both
//! settings are cached, so the steady state makes no extra system call.

use std::io;
use std::time::{Duration, Instant};

use tickwire_codec::ws::{
    Connection, ConnectionError, Error as WsError, Masking, Message, Sender, State,
};

use super::error::{Error, Peer};
use super::grow::Buffers;
use super::options::Options;
use super::stream::Stream;
use super::wait::{Deadline, ReadOutcome, Waiter, read_once};
use crate::clock;
use crate::socket::spin::Spinner;

/// The codec connection a transport connection drives.
pub(crate) type Ws<M> = Connection<Vec<u8>, Vec<u8>, M>;

/// The codec's sending half, as the driver writes it out.
pub(crate) type Tx<M> = Sender<Vec<u8>, M>;

impl From<ConnectionError> for Error {
    fn from(e: ConnectionError) -> Self {
        match e {
            ConnectionError::Handshake(e) => Error::from(e),
            ConnectionError::HandshakeTimeout => Error::handshake_timeout(),
            ConnectionError::Protocol(e) => Error::Protocol(e),
            ConnectionError::CloseTimeout => Error::CloseTimeout,
            ConnectionError::DeadPeer => Error::DeadPeer,
            ConnectionError::ConnectionLost => Error::ConnectionLost,
            ConnectionError::HandshakeInProgress => Error::HandshakeInProgress,
            ConnectionError::Encode(e) => Error::Encode(e),
            ConnectionError::Backpressure => Error::Backpressure,
            ConnectionError::MessageTooLarge { len, capacity } => {
                Error::MessageTooLarge { len, capacity }
            }
            _ => Error::AlreadyClosed,
        }
    }
}

/// The socket side of a connection: the stream, how to wait on it, and the I/O timeouts
/// the user set (they bound waits, not the protocol).
#[derive(Debug)]
pub(crate) struct Io<S> {
    pub stream: S,
    waiter: Option<Waiter>,
    /// The socket is in blocking mode now (see the module docs); only ever true in
    /// blocking mode.
    sock_blocking: bool,
    /// The socket's receive timeout as last set.
    rcvtimeo: Option<Duration>,
    /// The last read left the stream empty until the socket is readable again (see
    /// [`Stream::read_drained`]): the next read waits for readiness first, as tokio's
    /// own sockets do. Only where the wait remembers an arrival since the last wait
    /// (blocking mode's own poll, or [`Io::sticky_readiness`]).
    drained: bool,
    /// The caller waits on readiness that stays set until it is seen (tokio's
    /// `AsyncFd`), so a `try_recv` right after a short read may skip reading.
    pub sticky_readiness: bool,
    /// Busy-poll receive mode ([`RecvMode`](crate::socket::RecvMode)): spin instead of
    /// sleeping while active.
    spin: Spinner,
    /// `TCP_QUICKACK` is on: set it again after each read that got data.
    quickack: bool,
    shut: bool,
    pub read_timeout: Option<Duration>,
    pub write_timeout: Option<Duration>,
    pub close_timeout: Duration,
}

impl<S: Stream> Io<S> {
    pub fn is_blocking(&self) -> bool {
        self.waiter.is_some()
    }

    /// Wait for readiness (blocking mode only): readable, and writable with `write`.
    /// `Ok(false)` when `deadline` passed. The socket is non-blocking after it.
    pub fn wait(&mut self, deadline: Option<Instant>, write: bool) -> io::Result<bool> {
        self.sock_nonblocking()?;
        let interest = if write || self.stream.has_buffered() {
            mio::Interest::READABLE | mio::Interest::WRITABLE
        } else {
            mio::Interest::READABLE
        };
        match &mut self.waiter {
            Some(w) => match self.spin.spin(deadline) {
                Some(ready) => Ok(ready),
                None => w.wait(&mut self.stream, interest, deadline),
            },
            None => Ok(true),
        }
    }

    /// Blocking mode only: put the socket in blocking mode, so the next read or write
    /// sleeps in the kernel. `Ok(false)`: not in blocking mode, or not supported.
    #[inline]
    fn sock_blocking(&mut self) -> io::Result<bool> {
        // The steady state of blocking mode: blocking already, no call.
        if self.sock_blocking && !self.spin.active() {
            return Ok(true);
        }
        self.make_sock_blocking()
    }

    /// [`sock_blocking`](Self::sock_blocking) when the socket may have to change mode.
    #[inline(never)]
    fn make_sock_blocking(&mut self) -> io::Result<bool> {
        if self.spin.active() {
            self.sock_nonblocking()?;
            return Ok(false);
        }
        if self.sock_blocking {
            return Ok(true);
        }
        let Some(waiter) = &mut self.waiter else {
            return Ok(false);
        };
        if !self.stream.set_socket_blocking(true)? {
            return Ok(false);
        }
        self.sock_blocking = true;
        // Leave the private poll while the socket blocks by itself: no readiness
        // bookkeeping on every packet; the next deadline wait registers it again.
        waiter.deregister(&mut self.stream)?;
        Ok(true)
    }

    /// Put the socket back in non-blocking mode (a no-op when it is).
    pub fn sock_nonblocking(&mut self) -> io::Result<()> {
        if self.sock_blocking {
            self.stream.set_socket_blocking(false)?;
            self.sock_blocking = false;
        }
        Ok(())
    }

    /// Set the socket's receive timeout if it differs from the one set.
    fn set_rcvtimeo(&mut self, t: Option<Duration>) -> io::Result<bool> {
        if self.rcvtimeo == t {
            return Ok(true);
        }
        if !self.stream.set_receive_timeout(t)? {
            return Ok(false);
        }
        self.rcvtimeo = t;
        Ok(true)
    }

    /// Whether anything waits to be written: the codec's output, or bytes a layer kept.
    pub fn wants_write<M: Masking>(&self, tx: &Tx<M>) -> bool {
        tx.wants_write() || self.stream.has_buffered()
    }

    /// Write until the codec's output is empty (and the write half shut once the
    /// connection is over) or the socket would block. `Ok(true)`: all written. Never waits.
    pub fn write_some<M: Masking>(&mut self, tx: &mut Tx<M>) -> io::Result<bool> {
        self.sock_nonblocking()?;
        self.write_out(tx)
    }

    /// [`write_some`](Self::write_some) in the socket's current mode (a blocking socket:
    /// until everything is written).
    fn write_out<M: Masking>(&mut self, tx: &mut Tx<M>) -> io::Result<bool> {
        loop {
            let data = tx.transmit();
            if data.is_empty() {
                let shutdown = tx.wants_shutdown() && !self.shut;
                // TLS: close_notify goes after the last frame, before the FIN (not yet:
                // the socket is full; the next flush goes on).
                if shutdown && !self.stream.close_notify()? {
                    return Ok(false);
                }
                if !self.stream.flush_buffered()? {
                    return Ok(false);
                }
                if shutdown {
                    self.shut = true;
                    tx.handle_shutdown();
                    // The peer may already be gone; nothing useful to report then.
                    let _ = self.stream.shutdown_write();
                }
                return Ok(true);
            }
            match self.stream.write(data) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => tx.handle_written(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Write everything, waiting for writability until `deadline`. `Ok(false)`: timed
    /// out. Without a deadline and no codec timer running, in a blocking socket's
    /// `write(2)` (one syscall).
    ///
    /// Once the handshake is over the codec's timers bound every wait too: a wait that
    /// reaches [`Sender::poll_timeout`] runs [`Sender::handle_timeout`], so a keepalive
    /// ping is queued when due and a peer that stopped reading (nothing received within
    /// the dead-peer timeout) ends the send with [`Error::DeadPeer`] (the close
    /// timeout's [`Error::CloseTimeout`] likewise).
    pub fn write_all<M: Masking>(
        &mut self,
        tx: &mut Tx<M>,
        mut deadline: Deadline,
    ) -> Result<bool, Error> {
        let timers = tx.state() != State::Handshake;
        if matches!(deadline, Deadline::After(None))
            && !(timers && tx.poll_timeout().is_some())
            && self.sock_blocking()?
            && self.write_out(tx)?
        {
            return Ok(true);
        }
        loop {
            if self.write_some(tx)? {
                return Ok(true);
            }
            let mine = deadline.get();
            let timer = if timers {
                tx.poll_timeout().map(clock::to_std)
            } else {
                None
            };
            let until = match (mine, timer) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            if !self.wait(until, true)? {
                let now = Instant::now();
                if mine.is_some_and(|d| now >= d) {
                    return Ok(false);
                }
                if let Err(e) = tx.handle_timeout(clock::from_std(now)) {
                    // The codec dropped what was queued for a gone peer: shut the write
                    // half (best effort) and report why.
                    let _ = self.write_some(tx);
                    return Err(e.into());
                }
            }
        }
    }

    /// Blocking: write everything (write timeout). Evented: write what the socket takes.
    pub fn flush<M: Masking>(&mut self, tx: &mut Tx<M>) -> Result<bool, Error> {
        if !self.is_blocking() {
            return Ok(self.write_some(tx)?);
        }
        if self.write_all(tx, Deadline::After(self.write_timeout))? {
            Ok(true)
        } else {
            Err(Error::WriteTimeout)
        }
    }

    /// The close handshake's flush (our close answered, or the peer's echoed, then TLS
    /// close_notify and the FIN): blocking, within the close timeout; evented, what the
    /// socket takes (the rest on the next flush).
    fn flush_closing<M: Masking>(&mut self, tx: &mut Tx<M>) -> Result<bool, Error> {
        if !self.is_blocking() {
            return Ok(self.write_some(tx)?);
        }
        let deadline = Instant::now().checked_add(self.close_timeout);
        if self.write_all(tx, Deadline::At(deadline))? {
            Ok(true)
        } else {
            Err(Error::CloseTimeout)
        }
    }

    /// Busy-poll receive mode, for drivers that wait elsewhere (tokio): a new wait for
    /// a message begins (a fresh spin budget).
    #[cfg(feature = "tokio")]
    #[inline]
    pub fn spin_reset(&mut self) {
        self.spin.reset();
    }

    /// Busy-poll receive mode is on and its budget not spent.
    #[cfg(feature = "tokio")]
    #[inline]
    pub fn spinning(&self) -> bool {
        self.spin.active()
    }

    /// Busy-poll receive mode, for drivers that wait elsewhere (tokio): a read found
    /// nothing. `Some(true)`: read again now instead of waiting; `Some(false)`:
    /// `deadline` passed; `None`: not spinning (or the budget is spent): wait.
    #[cfg(feature = "tokio")]
    #[inline]
    pub fn spin(&mut self, deadline: Option<Instant>) -> Option<bool> {
        let r = self.spin.spin(deadline);
        // The budget just ran out: that next read would be the sleeping one here.
        if r == Some(true) && !self.spin.active() {
            return None;
        }
        r
    }

    /// After a read that got data: `TCP_QUICKACK` again when it is on (the kernel
    /// leaves quick-ACK mode by itself once data flowed both ways).
    #[inline]
    fn received(&mut self) -> io::Result<()> {
        if self.quickack {
            self.stream.rearm_quickack()?;
        }
        Ok(())
    }

    /// Read and drop what the peer still sends, without waiting, so closing the socket
    /// does not turn into a reset that could destroy our last bytes in flight.
    fn drain(&mut self, scratch: &mut [u8]) {
        if self.sock_nonblocking().is_err() || scratch.is_empty() {
            return;
        }
        while let Ok(ReadOutcome::Data(_)) = read_once(&mut self.stream, scratch) {}
    }
}

impl<S: Stream> Io<S> {
    /// Queue a message with `f`, then write it: blocking mode waits for room (write
    /// timeout); evented mode reports [`Error::Backpressure`] when there is none.
    #[inline]
    fn send_with<M: Masking>(
        &mut self,
        tx: &mut Tx<M>,
        bufs: &mut Buffers,
        mut f: impl FnMut(&mut Tx<M>) -> Result<(), ConnectionError>,
    ) -> Result<(), Error> {
        match f(tx) {
            Ok(()) => self.flush(tx).map(|_| ()),
            Err(e) => self.send_refused(tx, bufs, e, f),
        }
    }

    /// `f` found no room (or failed): grow the write buffer if it may (buffers that
    /// grow on demand), else write out what is queued (blocking: all of it) and try
    /// once more.
    #[cold]
    pub(super) fn send_refused<M: Masking>(
        &mut self,
        tx: &mut Tx<M>,
        bufs: &mut Buffers,
        e: ConnectionError,
        mut f: impl FnMut(&mut Tx<M>) -> Result<(), ConnectionError>,
    ) -> Result<(), Error> {
        let mut e = e;
        // Buffers that grow on demand: room for the message, within the write buffer
        // size (the limit a full-size buffer would set).
        while bufs.write_can_grow() {
            let need = match e {
                ConnectionError::Backpressure => 0,
                ConnectionError::MessageTooLarge { len, .. } if len <= bufs.write_limit() => len,
                ConnectionError::MessageTooLarge { len, .. } => {
                    return Err(Error::MessageTooLarge {
                        len,
                        capacity: bufs.write_limit(),
                    });
                }
                _ => break,
            };
            if !bufs.grow_write(tx, need) {
                break;
            }
            match f(tx) {
                Ok(()) => return self.flush(tx).map(|_| ()),
                Err(again) => e = again,
            }
        }
        if e != ConnectionError::Backpressure {
            return Err(e.into());
        }
        if self.is_blocking() {
            if !self.write_all(tx, Deadline::After(self.write_timeout))? {
                return Err(Error::WriteTimeout);
            }
        } else {
            self.write_some(tx)?;
        }
        f(tx)?;
        self.flush(tx).map(|_| ())
    }
}

/// The sending side of a connection while a received message borrows its reader: the
/// codec's sending half and the socket, for [`Conn::recv_with`]. Sends behave as the
/// connection's own (blocking: written, waiting within the write timeout; evented:
/// written as far as the socket takes, [`Error::Backpressure`] when no room).
#[derive(Debug)]
pub(crate) struct Outbox<'a, S, M> {
    tx: &'a mut Tx<M>,
    io: &'a mut Io<S>,
    bufs: &'a mut Buffers,
}

impl<S: Stream, M: Masking> Outbox<'_, S, M> {
    #[inline]
    pub fn send_text(&mut self, text: &str) -> Result<(), Error> {
        self.io
            .send_with(self.tx, self.bufs, |tx| tx.send_text(text))
    }

    #[inline]
    pub fn send_binary(&mut self, data: &[u8]) -> Result<(), Error> {
        self.io
            .send_with(self.tx, self.bufs, |tx| tx.send_binary(data))
    }

    pub fn send_ping(&mut self, payload: &[u8]) -> Result<(), Error> {
        self.io
            .send_with(self.tx, self.bufs, |tx| tx.send_ping(payload))
    }

    pub fn send_pong(&mut self, payload: &[u8]) -> Result<(), Error> {
        self.io
            .send_with(self.tx, self.bufs, |tx| tx.send_pong(payload))
    }

    /// Start the close handshake (its timer starts at the connection's next
    /// `handle_timeout`, as the codec arms it).
    pub fn close(
        &mut self,
        code: Option<tickwire_codec::ws::CloseCode>,
        reason: &str,
    ) -> Result<(), Error> {
        self.io
            .send_with(self.tx, self.bufs, |tx| tx.close(code, reason))
    }
}

/// One WebSocket connection over `S`, writing with masking `M`.
#[derive(Debug)]
pub(crate) struct Conn<S, M> {
    pub ws: Ws<M>,
    pub io: Io<S>,
    /// The buffers' sizes, when they grow on demand ([`super::grow`]).
    pub bufs: Buffers,
    /// Who the connection is with, named in its socket, TLS and handshake errors.
    pub peer: Peer,
    /// The error that failed the connection, returned again by every later call in
    /// place of `AlreadyClosed` (a split connection's write half learns why).
    failure: Option<Error>,
    /// Set by the connection's [`ShutdownHandle`](super::ShutdownHandle), if it has one.
    pub shutdown: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

impl<S: Stream, M: Masking> Conn<S, M> {
    /// Drive `ws` over `stream` with `peer`; blocking mode when `blocking`.
    pub fn new(
        stream: S,
        ws: Ws<M>,
        opts: &Options,
        blocking: bool,
        peer: Peer,
    ) -> io::Result<Self> {
        let waiter = if blocking { Some(Waiter::new()?) } else { None };
        Ok(Conn {
            ws,
            io: Io {
                stream,
                waiter,
                sock_blocking: false,
                rcvtimeo: None,
                drained: false,
                sticky_readiness: false,
                spin: Spinner::new(opts.recv_mode),
                quickack: opts.socket.quickack,
                shut: false,
                read_timeout: opts.read_timeout,
                write_timeout: opts.write_timeout,
                close_timeout: opts.close_timeout,
            },
            bufs: Buffers::fixed(),
            peer,
            failure: None,
            shutdown: None,
        })
    }

    /// `e` naming the peer (off the success path: only errors go through here). The
    /// first fatal error is kept; a later `AlreadyClosed` is that error again.
    #[cold]
    pub fn name(&mut self, e: Error) -> Error {
        if e.is_fatal() && super::shutdown::is_shut_down(&self.shutdown) {
            self.failure = Some(Error::Shutdown);
            return Error::Shutdown;
        }
        match e {
            Error::AlreadyClosed => match &self.failure {
                Some(f) => f.again(),
                None => e,
            },
            e => {
                let e = self.peer.name_in(e);
                if self.failure.is_none() && e.is_fatal() {
                    self.failure = Some(e.again());
                }
                e
            }
        }
    }

    /// Switch between blocking mode (private poll) and evented mode (the caller's poll).
    /// Before switching to blocking, deregister the connection from the caller's poll.
    pub fn set_blocking(&mut self, blocking: bool) -> io::Result<()> {
        if !blocking {
            self.io.sock_nonblocking()?;
        }
        match (blocking, self.io.waiter.take()) {
            (true, None) => self.io.waiter = Some(Waiter::new()?),
            (false, Some(mut w)) => w.deregister(&mut self.io.stream)?,
            (_, w) => self.io.waiter = w,
        }
        Ok(())
    }

    /// Whether bytes wait to be written.
    pub fn wants_write(&self) -> bool {
        self.ws.wants_write() || self.io.stream.has_buffered()
    }

    /// For drivers whose readiness remembers an arrival (tokio, [`Io::sticky_readiness`]):
    /// whether a non-blocking [`recv`](Self::recv) now would only answer "nothing now"
    /// without a read: open, nothing buffered, nothing to write, buffers at their
    /// initial size, and the last read drained the socket. Takes that "drained" as the
    /// `recv` would, so the driver waits for readiness and then receives; `false`
    /// changes nothing.
    #[cfg(feature = "tokio")]
    #[inline]
    pub fn idle_drained(&mut self) -> bool {
        if self.io.drained && self.io.sticky_readiness && self.idle() {
            self.io.drained = false;
            return true;
        }
        false
    }

    /// Nothing to do but read: open, nothing buffered, nothing to write, buffers at
    /// their initial size. A receive then has no frame to find (see
    /// `Connection::advance`), no output to flush and no buffer to shrink before its
    /// read, and the read buffer has all its room.
    #[cfg(any(feature = "tokio", feature = "futures-io"))]
    #[inline]
    fn idle(&self) -> bool {
        self.ws.state() == State::Open
            && self.ws.buffered() == 0
            && !self.wants_write()
            && !self.bufs.grown()
    }

    /// [`recv_ready(false)`](Self::recv_ready) for drivers whose read arms their
    /// wake-up (futures-io: `poll_read` registers the task's waker when it answers
    /// `Pending`, so the read that would block must be made). On a connection with
    /// nothing to do but read (`idle`), where `recv_ready(false)` would
    /// run the codec only to find nothing before its read: the read first, then
    /// (data) the same loop parses it. The same answers as `recv_ready(false)`.
    #[cfg(feature = "futures-io")]
    #[inline]
    pub fn recv_polled(&mut self) -> Result<bool, Error> {
        // A whole data message buffered (a stream's common case): as `recv_ready`.
        match self.ws.advance_data() {
            Ok(true) => return Ok(true),
            Ok(false) => {}
            Err(e) => return Err(self.failed(e)),
        }
        if self.idle() {
            let buf = self.ws.read_buf();
            let asked = buf.len();
            // No room at all (a zero-sized read buffer): the loop below says why.
            if asked > 0 {
                let outcome = read_once(&mut self.io.stream, buf);
                if let Some(r) = self.took(outcome, asked) {
                    return r.map_err(|e| self.name(e));
                }
            }
        }
        let r = self.read_message(false);
        r.map_err(|e| self.name(e))
    }

    /// Whether a codec timer runs (keepalive, dead peer, close, handshake): the test
    /// of [`timeout_at`](Self::timeout_at) without its clock conversion.
    #[cfg(feature = "tokio")]
    #[inline]
    pub fn has_timer(&self) -> bool {
        self.ws.poll_timeout().is_some()
    }

    /// Blocking: write everything (write timeout). Evented: what the socket takes.
    pub fn flush(&mut self) -> Result<bool, Error> {
        let r = self.io.flush(self.ws.sender());
        r.map_err(|e| self.name(e))
    }

    /// A connection error: the close frame (or the refusal) goes out as far as the socket
    /// takes it now, never waiting; the rest of the close happens in later calls.
    fn fail(&mut self, e: ConnectionError) -> Error {
        let _ = self.io.write_some(self.ws.sender());
        e.into()
    }

    /// One non-blocking step of the opening handshake: write what is queued, read what
    /// is there, let `advance` look at it. `Ok(true)` once messages flow (the last
    /// handshake bytes may still wait to be written: flush).
    pub fn handshake_step(
        &mut self,
        advance: impl FnMut(&mut Ws<M>) -> Result<bool, ConnectionError>,
    ) -> Result<bool, Error> {
        let r = self.step_handshake(advance);
        r.map_err(|e| self.name(e))
    }

    /// [`handshake_step`](Self::handshake_step), its error not named yet.
    fn step_handshake(
        &mut self,
        mut advance: impl FnMut(&mut Ws<M>) -> Result<bool, ConnectionError>,
    ) -> Result<bool, Error> {
        loop {
            match advance(&mut self.ws) {
                Ok(true) => {
                    self.io.write_some(self.ws.sender())?;
                    return Ok(true);
                }
                Ok(false) => {}
                Err(e) => return Err(self.fail(e)),
            }
            if self.io.wants_write(self.ws.sender()) {
                self.io.write_some(self.ws.sender())?;
            }
            let buf = self.ws.read_buf();
            let asked = buf.len();
            match read_once(&mut self.io.stream, buf)? {
                ReadOutcome::Data(n) => {
                    self.io.received()?;
                    self.ws.handle_read(n);
                    // A head bigger than the room so far: more room before the codec
                    // looks at it (it refuses a head that fills its buffer).
                    if n == asked && self.bufs.read_can_grow() {
                        self.bufs.grow_read(&mut self.ws);
                    }
                }
                ReadOutcome::WouldBlock => return Ok(false),
                ReadOutcome::Eof => {
                    let _ = self.ws.handle_eof();
                    return Err(Error::ConnectionLost);
                }
            }
        }
    }

    /// Blocking mode: run the opening handshake to its end (the handshake timeout is the
    /// codec's). A server's refusal is written out (close timeout) before the error.
    pub fn handshake_blocking(
        &mut self,
        advance: impl FnMut(&mut Ws<M>) -> Result<bool, ConnectionError>,
    ) -> Result<(), Error> {
        let r = self.run_handshake(advance);
        r.map_err(|e| self.name(e))
    }

    /// [`handshake_blocking`](Self::handshake_blocking), its error not named yet.
    fn run_handshake(
        &mut self,
        mut advance: impl FnMut(&mut Ws<M>) -> Result<bool, ConnectionError>,
    ) -> Result<(), Error> {
        loop {
            match self.step_handshake(&mut advance) {
                Ok(true) => {
                    // The last handshake bytes (a 101) are small: they go out now, or
                    // within the close timeout; the socket stays non-blocking.
                    if self.io.write_some(self.ws.sender())? {
                        return Ok(());
                    }
                    let deadline = Instant::now().checked_add(self.io.close_timeout);
                    return if self
                        .io
                        .write_all(self.ws.sender(), Deadline::At(deadline))?
                    {
                        Ok(())
                    } else {
                        Err(Error::handshake_timeout())
                    };
                }
                Ok(false) => {}
                Err(e) => {
                    if matches!(e, Error::Handshake { .. }) {
                        let deadline = Instant::now().checked_add(self.io.close_timeout);
                        let _ = self.io.write_all(self.ws.sender(), Deadline::At(deadline));
                        let mut scratch = [0u8; 512];
                        self.io.drain(&mut scratch);
                    }
                    return Err(e);
                }
            }
            let deadline = self.ws.poll_timeout().map(clock::to_std);
            let write = self.io.wants_write(self.ws.sender());
            if !self.io.wait(deadline, write)? {
                self.run_timers(Instant::now())?;
            }
        }
    }

    /// Receive the next message. With `wait` in blocking mode: wait for one (read
    /// timeout; the codec's timers). Otherwise `Ok(None)` when the socket has nothing
    /// more now. After the close handshake: `Ok(None)`.
    ///
    /// Pings are answered (queued and flushed) before they are returned; the peer's
    /// close is answered and then returned; after our close, data is discarded until the
    /// peer's close. A protocol error is returned at once (its close frame written as far
    /// as the socket takes it); later calls finish the close.
    pub fn recv(&mut self, wait: bool) -> Result<Option<Message<'_>>, Error> {
        if self.recv_ready(wait)? {
            Ok(self.ws.message())
        } else {
            Ok(None)
        }
    }

    /// [`recv`](Self::recv), then `f` with the message and a sending half that writes
    /// to this connection while the message is borrowed (no copy of the message).
    /// `Ok(None)` where `recv` says `Ok(None)`.
    pub fn recv_with<R>(
        &mut self,
        wait: bool,
        f: impl FnOnce(Message<'_>, Outbox<'_, S, M>) -> Result<R, Error>,
    ) -> Result<Option<R>, Error> {
        if !self.recv_ready(wait)? {
            return Ok(None);
        }
        self.with_message(f)
    }

    /// `f` with the message [`recv_ready`](Self::recv_ready) made ready and the sending
    /// half.
    pub fn with_message<R>(
        &mut self,
        f: impl FnOnce(Message<'_>, Outbox<'_, S, M>) -> Result<R, Error>,
    ) -> Result<Option<R>, Error> {
        let Some((msg, tx)) = self.ws.message_with_sender() else {
            return Err(Error::AlreadyClosed);
        };
        let out = Outbox {
            tx,
            io: &mut self.io,
            bufs: &mut self.bufs,
        };
        match f(msg, out) {
            Ok(r) => Ok(Some(r)),
            Err(e) => Err(self.name(e)),
        }
    }

    /// [`recv`](Self::recv) up to the message: `Ok(true)` when one is ready in the
    /// codec ([`Connection::message`]), `Ok(false)` where `recv` says `Ok(None)`.
    #[inline]
    pub fn recv_ready(&mut self, wait: bool) -> Result<bool, Error> {
        // The feed's common case, a whole data message already buffered: nothing to
        // read, wait for, answer or flush (the codec decides, in `advance_data`).
        match self.ws.advance_data() {
            Ok(true) => return Ok(true),
            Ok(false) => {}
            Err(e) => return Err(self.failed(e)),
        }
        let r = self.read_message(wait);
        r.map_err(|e| self.name(e))
    }

    /// [`fail`](Self::fail), the error named: off the hot path.
    #[cold]
    #[inline(never)]
    fn failed(&mut self, e: ConnectionError) -> Error {
        let e = self.fail(e);
        self.name(e)
    }

    /// [`recv_ready`](Self::recv_ready), its error not named yet.
    fn read_message(&mut self, wait: bool) -> Result<bool, Error> {
        let mut read_deadline = Deadline::After(self.io.read_timeout);
        self.io.spin.reset();
        loop {
            // A whole data message (after a read): returned as it is.
            match self.ws.advance_data() {
                Ok(true) => return Ok(true),
                Ok(false) => {}
                Err(e) => return Err(self.fail(e)),
            }
            match self.ws.advance() {
                Ok(true) => {
                    let Some((msg, tx)) = self.ws.message_with_sender() else {
                        return Err(Error::AlreadyClosed);
                    };
                    if msg.is_control() && self.io.wants_write(tx) {
                        // A pong goes out before the message is returned; so does a close
                        // echo with TLS close_notify and the FIN, within the close timeout
                        // (a close is delivered even if its echo cannot be written).
                        if let Message::Close(_) = msg {
                            let _ = self.io.flush_closing(tx);
                        } else {
                            self.io.flush(tx)?;
                        }
                    }
                    return Ok(true);
                }
                Ok(false) => {}
                Err(e) => return Err(self.fail(e)),
            }
            if self.ws.state() == State::Closed {
                // The close handshake is complete; the echo is best effort (the peer may
                // have gone already).
                if self.wants_write() {
                    let _ = self.io.flush_closing(self.ws.sender());
                }
                return Ok(false);
            }
            let timer = self.ws.poll_timeout();
            // Waiting with no codec timer and nothing to write: sleep in the read itself
            // (not in busy-poll mode), bounded by the socket's receive timeout when a read
            // timeout is set.
            let mut block = wait
                && timer.is_none()
                && self.ws.state() == State::Open
                && !self.wants_write()
                && self.io.is_blocking()
                && self.io.sock_blocking()?;
            if block {
                let left = match (self.io.read_timeout, read_deadline) {
                    (None, _) => None,
                    (Some(t), Deadline::After(_)) => Some(t),
                    (Some(_), Deadline::At(at)) => {
                        at.map(|at| at.saturating_duration_since(Instant::now()))
                    }
                };
                if left.is_some_and(|l| l.is_zero()) {
                    return Err(Error::ReadTimeout);
                }
                // Start the deadline (one clock read per waiting recv, not per message).
                read_deadline.get();
                // No read timeout, none set on the socket: nothing to do.
                if (left.is_some() || self.io.rcvtimeo.is_some()) && !self.io.set_rcvtimeo(left)? {
                    // No receive timeout here: wait on the poll instead.
                    block = left.is_none();
                }
            }
            // After a read that drained the socket, a non-blocking read would only say
            // `WouldBlock`: wait for readiness first where the wait remembers an arrival
            // since the read (our own edge-triggered poll when we are about to wait on
            // it, tokio's readiness). A read that blocks by itself needs no shortcut.
            let drained = std::mem::take(&mut self.io.drained);
            let skip =
                drained && !block && (self.io.sticky_readiness || (wait && self.io.is_blocking()));
            let mut asked = 0;
            let outcome = if skip {
                Ok(ReadOutcome::WouldBlock)
            } else {
                let buf = self.ws.read_buf();
                if buf.is_empty() {
                    // A frame that does not fit: a bigger buffer, if it may grow (the
                    // limits keep a message plus overhead within the largest one).
                    if self.bufs.grow_read(&mut self.ws) {
                        continue;
                    }
                    return Err(Error::Protocol(WsError::MessageTooLarge));
                }
                asked = buf.len();
                let mode = if block {
                    Ok(())
                } else {
                    self.io.sock_nonblocking()
                };
                mode.and_then(|()| read_once(&mut self.io.stream, buf))
            };
            match outcome {
                Ok(ReadOutcome::WouldBlock) if block => {
                    // The socket's receive timeout passed.
                    return Err(Error::ReadTimeout);
                }
                Ok(ReadOutcome::WouldBlock) => {
                    if !wait || !self.io.is_blocking() {
                        if self.wants_write() {
                            self.io.write_some(self.ws.sender())?;
                        }
                        if self.bufs.grown() {
                            self.bufs.shrink(&mut self.ws);
                        }
                        return Ok(false);
                    }
                    self.wait_blocking(timer, &mut read_deadline)?;
                }
                outcome => {
                    if let Some(r) = self.took(outcome, asked) {
                        return r;
                    }
                }
            }
        }
    }

    /// What a read of up to `asked` bytes brought, other than `WouldBlock`: data goes to
    /// the codec (`None`: parse it), the stream's end or an error ends the receive with
    /// its result.
    #[inline]
    fn took(
        &mut self,
        outcome: io::Result<ReadOutcome>,
        asked: usize,
    ) -> Option<Result<bool, Error>> {
        match outcome {
            Ok(ReadOutcome::Data(n)) => {
                self.io.drained = self.io.stream.read_drained(asked, n);
                if let Err(e) = self.io.received() {
                    return Some(Err(e.into()));
                }
                self.ws.handle_read(n);
                // The read took all the room: the socket has more (a stream).
                if n == asked && self.bufs.read_can_grow() {
                    self.bufs.grow_read(&mut self.ws);
                }
                None
            }
            Ok(ReadOutcome::WouldBlock) => Some(Ok(false)),
            Ok(ReadOutcome::Eof) => {
                self.io.shut = true;
                self.ws.handle_shutdown();
                Some(match self.ws.handle_eof() {
                    Ok(()) if self.ws.is_failed() => Err(Error::AlreadyClosed),
                    Ok(()) => Ok(false),
                    Err(e) => Err(e.into()),
                })
            }
            Err(e) => {
                let _ = self.ws.handle_eof();
                Some(Err(e.into()))
            }
        }
    }

    /// Blocking mode, nothing to read: run the codec's timers, write what they queued,
    /// then wait for the socket, the next timer or the read deadline.
    fn wait_blocking(
        &mut self,
        timer: Option<tickwire_codec::time::Instant>,
        read_deadline: &mut Deadline,
    ) -> Result<(), Error> {
        if timer.is_some() {
            self.run_timers(Instant::now())?;
        }
        let timer = self.ws.poll_timeout().map(clock::to_std);
        let read = read_deadline.get();
        let deadline = match (timer, read) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let write = self.wants_write();
        if !self.io.wait(deadline, write)? && read.is_some_and(|r| Instant::now() >= r) {
            return Err(Error::ReadTimeout);
        }
        Ok(())
    }

    /// When [`handle_timeout`](Self::handle_timeout) next wants to run.
    pub fn timeout_at(&self) -> Option<Instant> {
        self.ws.poll_timeout().map(clock::to_std)
    }

    /// Run the codec's timers at `now` and write what they queued (a keepalive ping, a
    /// shutdown). An error ends the connection.
    pub fn handle_timeout(&mut self, now: Instant) -> Result<(), Error> {
        let r = self.run_timers(now);
        r.map_err(|e| self.name(e))
    }

    /// [`handle_timeout`](Self::handle_timeout), its error not named yet.
    fn run_timers(&mut self, now: Instant) -> Result<(), Error> {
        let result = self.ws.handle_timeout(clock::from_std(now));
        if self.wants_write() {
            let _ = self.io.write_some(self.ws.sender());
        }
        Ok(result?)
    }

    #[inline]
    fn send_with(
        &mut self,
        f: impl FnMut(&mut Tx<M>) -> Result<(), ConnectionError>,
    ) -> Result<(), Error> {
        let r = self.io.send_with(self.ws.sender(), &mut self.bufs, f);
        r.map_err(|e| self.name(e))
    }

    /// `f` found no room (or failed): [`Io::send_refused`] on this connection.
    #[cold]
    pub(super) fn send_refused(
        &mut self,
        e: ConnectionError,
        f: impl FnMut(&mut Tx<M>) -> Result<(), ConnectionError>,
    ) -> Result<(), Error> {
        self.io.send_refused(self.ws.sender(), &mut self.bufs, e, f)
    }

    #[inline]
    pub fn send_text(&mut self, text: &str) -> Result<(), Error> {
        self.send_with(|tx| tx.send_text(text))
    }

    #[inline]
    pub fn send_binary(&mut self, data: &[u8]) -> Result<(), Error> {
        self.send_with(|tx| tx.send_binary(data))
    }

    pub fn send_ping(&mut self, payload: &[u8]) -> Result<(), Error> {
        self.send_with(|tx| tx.send_ping(payload))
    }

    pub fn send_pong(&mut self, payload: &[u8]) -> Result<(), Error> {
        self.send_with(|tx| tx.send_pong(payload))
    }

    /// Start the close handshake. A no-op once closing or closed.
    pub fn close(
        &mut self,
        code: Option<tickwire_codec::ws::CloseCode>,
        reason: &str,
    ) -> Result<(), Error> {
        self.ws.close(code, reason)?;
        // The close timeout runs from now.
        let _ = self.ws.handle_timeout(clock::now());
        self.flush().map(|_| ())
    }

    /// Whether the connection is finished: closed cleanly or failed.
    pub fn is_closed(&self) -> bool {
        self.ws.state() == State::Closed
    }
}

#[cfg(test)]
#[path = "conn_tests.rs"]
mod tests;
