//! The connection core shared by client and server, blocking and evented mode.
//!
//! [`Conn`] moves bytes between a non-blocking socket and the codec: socket bytes go
//! into the [`FrameReader`]'s buffer, messages are encoded by the [`FrameWriter`] into
//! a bounded [`WriteBuf`] that is drained into the socket. Framing, validation and close
//! codes all come from the codec; this file only keeps the close state machine and
//! decides when to wait.
//!
//! Blocking mode is the same code with a private [`mio::Poll`] to wait on when the
//! socket would block; evented mode returns instead and lets the caller's own poll say
//! when to come back.
//!
//! Blocking mode without a deadline (no read or write timeout, no close under way)
//! puts the socket itself in blocking mode instead, so a `recv` that waits is one
//! `read(2)` that sleeps in the kernel, and a send is one `write(2)`, rather than a read
//! that fails with `EAGAIN`, an `epoll_wait` and a second read. Every other socket
//! operation (timeouts, `try_recv`, draining, evented mode) switches the socket back to
//! non-blocking first; the mode is cached, so the steady state makes no extra syscall.

use std::io::{self, Read, Write};
use std::net::Shutdown;
use std::time::{Duration, Instant};

use mio::event::Source;
use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};
use tickwire_codec::buf::WriteBuf;
use tickwire_codec::ws::frame::MAX_CONTROL_PAYLOAD;
use tickwire_codec::ws::reader::READER_OVERHEAD;
use tickwire_codec::ws::{
    CloseCode, Config, Error as WsError, FrameReader, FrameWriter, Masking, Message, Role,
};

use super::error::Error;
use crate::net::NetStream;

/// A byte stream the connection can run on: a mio socket, or TLS over one.
pub trait Stream: Read + Write + Source {
    /// Shut the write half down (a FIN after the bytes already written).
    fn shutdown_write(&mut self) -> io::Result<()>;

    /// Send the layer's own end of data (TLS close_notify) after everything written
    /// before it, ahead of a graceful shutdown: `Ok(true)` when it is on the socket,
    /// `Ok(false)` when the socket would block (call again once writable; a full
    /// buffer is never an error). Idempotent.
    fn close_notify(&mut self) -> io::Result<bool> {
        Ok(true)
    }

    /// Write bytes that `write` accepted but kept (TLS records waiting for the socket).
    /// `Ok(true)` when none are left, `Ok(false)` when the socket would block.
    fn flush_buffered(&mut self) -> io::Result<bool> {
        Ok(true)
    }

    /// Whether such bytes wait.
    fn has_buffered(&self) -> bool {
        false
    }

    /// Put the socket itself in blocking (`true`) or non-blocking mode. `Ok(false)`:
    /// not supported here (the connection then always waits on its poll).
    fn set_socket_blocking(&mut self, _blocking: bool) -> io::Result<bool> {
        Ok(false)
    }

    /// After a read that returned `got` of `asked` bytes: whether the stream surely has
    /// nothing more until the socket becomes readable again (a plain socket: the read
    /// was short; TLS: [`TlsStream::is_drained`](crate::tls::TlsStream::is_drained)).
    /// Then the next read waits for readiness first instead of trying and getting
    /// `WouldBlock`: one system call less per message. `false` is always safe.
    fn read_drained(&self, asked: usize, got: usize) -> bool {
        let _ = (asked, got);
        false
    }
}

/// Set `O_NONBLOCK` on a mio socket (mio sockets are non-blocking; a blocking-mode
/// connection clears it while it has no deadline).
pub(crate) fn set_tcp_blocking(tcp: &TcpStream, blocking: bool) -> io::Result<bool> {
    socket2::SockRef::from(tcp).set_nonblocking(!blocking)?;
    Ok(true)
}

impl Stream for TcpStream {
    fn shutdown_write(&mut self) -> io::Result<()> {
        self.shutdown(Shutdown::Write)
    }

    fn set_socket_blocking(&mut self, blocking: bool) -> io::Result<bool> {
        set_tcp_blocking(self, blocking)
    }

    fn read_drained(&self, asked: usize, got: usize) -> bool {
        got < asked
    }
}

impl Stream for NetStream {
    fn shutdown_write(&mut self) -> io::Result<()> {
        NetStream::shutdown_write(self)
    }

    fn close_notify(&mut self) -> io::Result<bool> {
        NetStream::close_notify(self)
    }

    #[inline]
    fn flush_buffered(&mut self) -> io::Result<bool> {
        NetStream::flush_buffered(self)
    }

    #[inline]
    fn has_buffered(&self) -> bool {
        NetStream::has_buffered(self)
    }

    fn set_socket_blocking(&mut self, blocking: bool) -> io::Result<bool> {
        set_tcp_blocking(self.tcp(), blocking)
    }

    #[inline]
    fn read_drained(&self, asked: usize, got: usize) -> bool {
        match self {
            NetStream::Tcp(_) => got < asked,
            NetStream::Tls(s) => s.is_drained(),
        }
    }
}

/// Settings shared by client and server builders.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    pub read_buffer_size: usize,
    pub write_buffer_size: usize,
    pub max_frame_size: Option<usize>,
    pub max_message_size: Option<usize>,
    pub nodelay: bool,
    pub auto_pong: bool,
    pub fragment_size: usize,
    pub handshake_timeout: Duration,
    pub close_timeout: Duration,
    pub read_timeout: Option<Duration>,
    pub write_timeout: Option<Duration>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            read_buffer_size: 1 << 20,
            write_buffer_size: 1 << 20,
            max_frame_size: None,
            max_message_size: None,
            nodelay: true,
            auto_pong: true,
            fragment_size: 0,
            handshake_timeout: Duration::from_secs(10),
            close_timeout: Duration::from_secs(5),
            read_timeout: None,
            write_timeout: None,
        }
    }
}

impl Options {
    /// Read buffer capacity: the configured size, grown to hold `max_message_size`.
    fn read_capacity(&self) -> usize {
        let need = self
            .max_message_size
            .map_or(0, |m| m.saturating_add(READER_OVERHEAD));
        self.read_buffer_size.max(need).max(READER_OVERHEAD + 1024)
    }

    fn reader(&self, role: Role) -> FrameReader<Vec<u8>> {
        let config = Config {
            max_frame_size: self.max_frame_size.unwrap_or(usize::MAX),
            max_message_size: self.max_message_size.unwrap_or(usize::MAX),
            allowed_rsv: 0,
        };
        FrameReader::with_config(role, vec![0u8; self.read_capacity()], config)
    }
}

/// Where the close handshake stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    /// Messages flow both ways.
    Open,
    /// We sent a close; incoming data is discarded until the peer's close or `deadline`.
    CloseSent { deadline: Instant },
    /// Both closes were exchanged; the write half is shut once the buffer is flushed.
    Closed,
    /// The connection failed (error already reported).
    Failed,
}

/// A control frame that found the write buffer full; it goes out first on the next flush.
#[derive(Debug, Clone, Copy)]
enum Pending {
    Pong {
        payload: [u8; MAX_CONTROL_PAYLOAD],
        len: usize,
    },
    Close(Option<CloseCode>),
}

/// The private poll of blocking mode. The socket is registered on the first wait, for
/// readable, plus writable only while output waits (edge-triggered: interest in
/// writable when nothing is to be written would wake the wait after every write).
struct Waiter {
    poll: Poll,
    events: Events,
    /// The interest registered now; `None` before the first wait.
    registered: Option<Interest>,
}

impl std::fmt::Debug for Waiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Waiter")
    }
}

impl Waiter {
    fn new() -> io::Result<Waiter> {
        Ok(Waiter {
            poll: Poll::new()?,
            events: Events::with_capacity(4),
            registered: None,
        })
    }

    /// Leave the poll (when switching to evented mode).
    fn deregister<S: Source>(&mut self, stream: &mut S) -> io::Result<()> {
        if self.registered.take().is_some() {
            self.poll.registry().deregister(stream)?;
        }
        Ok(())
    }

    /// Wait for a readiness edge of `interest` or `deadline`; `Ok(false)` when the
    /// deadline had passed.
    fn wait<S: Source>(
        &mut self,
        stream: &mut S,
        interest: Interest,
        deadline: Option<Instant>,
    ) -> io::Result<bool> {
        let timeout = match deadline {
            None => None,
            Some(d) => match d.checked_duration_since(Instant::now()) {
                Some(left) if !left.is_zero() => Some(left),
                _ => return Ok(false),
            },
        };
        match self.registered {
            None => self.poll.registry().register(stream, Token(0), interest)?,
            Some(i) if i != interest => {
                // Re-arming also reports a readiness that is already there.
                self.poll
                    .registry()
                    .reregister(stream, Token(0), interest)?
            }
            Some(_) => {}
        }
        self.registered = Some(interest);
        match self.poll.poll(&mut self.events, timeout) {
            Err(e) if e.kind() != io::ErrorKind::Interrupted => Err(e),
            _ => Ok(true),
        }
    }
}

/// Result of one read from the socket.
pub(crate) enum ReadOutcome {
    Data(usize),
    WouldBlock,
    Eof,
}

/// Read once into `buf` (non-empty), retrying on EINTR.
pub(crate) fn read_once<S: Read>(stream: &mut S, buf: &mut [u8]) -> io::Result<ReadOutcome> {
    loop {
        return match stream.read(buf) {
            Ok(0) => Ok(ReadOutcome::Eof),
            Ok(n) => Ok(ReadOutcome::Data(n)),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(ReadOutcome::WouldBlock),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => Err(e),
        };
    }
}

/// A deadline that starts when it is first needed, so the fast paths (data already
/// buffered, socket ready) never read the clock.
#[derive(Debug, Clone, Copy)]
enum Deadline {
    /// `timeout` from the first `get` (`None`: never).
    After(Option<Duration>),
    At(Option<Instant>),
}

impl Deadline {
    fn get(&mut self) -> Option<Instant> {
        if let Deadline::After(t) = *self {
            *self = Deadline::At(t.and_then(|t| Instant::now().checked_add(t)));
        }
        match *self {
            Deadline::At(at) => at,
            Deadline::After(_) => None,
        }
    }
}

/// Everything but the reader: the socket, the write side and the close state. Kept apart
/// from the reader so it can be used while a [`Message`] borrows the reader.
#[derive(Debug)]
pub(crate) struct Io<S, M> {
    pub stream: S,
    waiter: Option<Waiter>,
    /// The socket is in blocking mode now (see the module docs); only ever true in
    /// blocking mode.
    sock_blocking: bool,
    writer: FrameWriter<M>,
    pub wbuf: WriteBuf<Vec<u8>>,
    pending: Option<Pending>,
    pub state: State,
    /// The last read left the stream empty until the socket is readable again (see
    /// [`Stream::read_drained`]): the next read waits for readiness first, as
    /// tokio's own sockets do. Only where the wait remembers an arrival since the last
    /// wait (blocking mode's own poll, or [`Io::sticky_readiness`]): an evented
    /// caller's `try_recv` after its readable event always reads.
    drained: bool,
    /// The caller waits on readiness that stays set until it is seen (tokio's
    /// `AsyncFd`), so a `try_recv` right after a short read may skip reading.
    pub sticky_readiness: bool,
    /// Shut the write half once the buffer is empty.
    shutdown_pending: bool,
    shut: bool,
    auto_pong: bool,
    close_timeout: Duration,
    read_timeout: Option<Duration>,
    write_timeout: Option<Duration>,
}

impl<S: Stream, M: Masking> Io<S, M> {
    pub fn is_blocking(&self) -> bool {
        self.waiter.is_some()
    }

    /// Wait for readiness (blocking mode only): readable, and writable while output
    /// waits. `Ok(false)` when `deadline` passed. The socket is non-blocking after it.
    pub fn wait(&mut self, deadline: Option<Instant>) -> io::Result<bool> {
        self.sock_nonblocking()?;
        let interest = if self.wants_write() {
            Interest::READABLE | Interest::WRITABLE
        } else {
            Interest::READABLE
        };
        match &mut self.waiter {
            Some(w) => w.wait(&mut self.stream, interest, deadline),
            None => Ok(true),
        }
    }

    /// Blocking mode only: put the socket in blocking mode, so the next read or write
    /// sleeps in the kernel. `Ok(false)`: not in blocking mode, or not supported.
    fn sock_blocking(&mut self) -> io::Result<bool> {
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

    pub fn wants_write(&self) -> bool {
        !self.wbuf.is_empty() || self.pending.is_some() || self.stream.has_buffered()
    }

    /// Move a pending control frame into the buffer if it fits now.
    fn place_pending(&mut self) {
        let Some(p) = self.pending else { return };
        let placed = match p {
            Pending::Pong { payload, len } => {
                self.writer.write_pong(&payload[..len], &mut self.wbuf)
            }
            Pending::Close(code) => self.writer.write_close(code, "", &mut self.wbuf),
        };
        if placed.is_ok() {
            self.pending = None;
        }
    }

    /// Queue a control frame, keeping it aside when the buffer is full (a newer pong
    /// replaces an older one; a close is never replaced).
    fn queue_control(&mut self, p: Pending) {
        self.place_pending();
        if self.pending.is_some() {
            if matches!(p, Pending::Close(_)) || !matches!(self.pending, Some(Pending::Close(_))) {
                self.pending = Some(p);
            }
            return;
        }
        self.pending = Some(p);
        self.place_pending();
    }

    /// Write until the buffer is empty or the socket would block. `Ok(true)`: all written.
    /// Never waits.
    pub fn write_some(&mut self) -> io::Result<bool> {
        self.sock_nonblocking()?;
        self.write_out()
    }

    /// [`write_some`](Self::write_some) in the socket's current mode (a blocking
    /// socket: until everything is written).
    fn write_out(&mut self) -> io::Result<bool> {
        loop {
            self.place_pending();
            if self.wbuf.is_empty() {
                // (A pending frame always fits an empty buffer: it holds >= 256 bytes.)
                // TLS: close_notify goes after the last frame, before the FIN.
                if self.shutdown_pending && !self.shut && !self.stream.close_notify()? {
                    return Ok(false);
                }
                if !self.stream.flush_buffered()? {
                    return Ok(false);
                }
                if self.shutdown_pending && !self.shut {
                    self.shut = true;
                    // The peer may already be gone; nothing useful to report then.
                    let _ = self.stream.shutdown_write();
                }
                return Ok(true);
            }
            match self.stream.write(self.wbuf.data()) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => self.wbuf.consume(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Write everything, waiting for writability until `deadline`. `Ok(false)`: timed out.
    /// Without a deadline, in a blocking socket's `write(2)` (one syscall).
    fn write_all(&mut self, mut deadline: Deadline) -> io::Result<bool> {
        if matches!(deadline, Deadline::After(None)) && self.sock_blocking()? && self.write_out()? {
            return Ok(true);
        }
        loop {
            if self.write_some()? {
                return Ok(true);
            }
            if !self.wait(deadline.get())? {
                return Ok(false);
            }
        }
    }

    /// Blocking: write everything (write timeout). Evented: write what the socket takes.
    pub fn flush(&mut self) -> Result<bool, Error> {
        if !self.is_blocking() {
            return Ok(self.write_some()?);
        }
        if self.write_all(Deadline::After(self.write_timeout))? {
            Ok(true)
        } else {
            Err(Error::Timeout)
        }
    }

    /// The close handshake's flush (our close answered, or the peer's echoed, then TLS
    /// close_notify and the FIN): blocking, within the close timeout; evented, what the
    /// socket takes (the rest on the next flush).
    fn flush_closing(&mut self) -> Result<bool, Error> {
        if !self.is_blocking() {
            return Ok(self.write_some()?);
        }
        let deadline = Instant::now().checked_add(self.close_timeout);
        if self.write_all(Deadline::At(deadline))? {
            Ok(true)
        } else {
            Err(Error::CloseTimeout)
        }
    }

    /// Blocking flush bounded by `deadline`, mapping a timeout to `on_timeout`.
    pub fn flush_until(&mut self, deadline: Instant, on_timeout: Error) -> Result<(), Error> {
        if self.write_all(Deadline::At(Some(deadline)))? {
            Ok(())
        } else {
            Err(on_timeout)
        }
    }

    /// Make room for `need` bytes in the write buffer: flush, then wait (blocking) or
    /// report backpressure (evented).
    fn make_room(&mut self, need: usize) -> Result<(), Error> {
        let capacity = self.wbuf.capacity();
        if need > capacity {
            return Err(Error::MessageTooLarge {
                len: need,
                capacity,
            });
        }
        if self.pending.is_none() && self.wbuf.remaining() >= need {
            return Ok(());
        }
        if self.is_blocking() {
            // Everything out leaves the whole (empty) buffer, and `need` fits it.
            return if self.write_all(Deadline::After(self.write_timeout))? {
                Ok(())
            } else {
                Err(Error::Timeout)
            };
        }
        self.write_some()?;
        if self.pending.is_none() && self.wbuf.remaining() >= need {
            Ok(())
        } else {
            Err(Error::Backpressure)
        }
    }

    /// React to a received message. `Ok(true)`: deliver it; `Ok(false)`: discard it
    /// (data after our close).
    fn on_message(&mut self, msg: &Message<'_>) -> Result<bool, Error> {
        match (self.state, msg) {
            (State::Open, Message::Ping(p)) => {
                if self.auto_pong {
                    let mut payload = [0u8; MAX_CONTROL_PAYLOAD];
                    let len = p.len().min(MAX_CONTROL_PAYLOAD);
                    payload[..len].copy_from_slice(&p[..len]);
                    self.queue_control(Pending::Pong { payload, len });
                    self.flush()?;
                }
                Ok(true)
            }
            (State::Open, Message::Close(frame)) => {
                // Echo the peer's code (none if it sent none), then shut down.
                self.queue_control(Pending::Close(frame.map(|f| f.code)));
                self.state = State::Closed;
                self.shutdown_pending = true;
                // The close is delivered even if the echo cannot be written.
                let _ = self.flush_closing();
                Ok(true)
            }
            (State::Open, _) => Ok(true),
            (State::CloseSent { .. }, Message::Close(_)) => {
                self.state = State::Closed;
                self.shutdown_pending = true;
                let _ = self.flush_closing();
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// Encode one message with `f` after making room for `need` bytes, then send it.
    fn send_with(
        &mut self,
        need: usize,
        f: impl FnOnce(
            &mut FrameWriter<M>,
            &mut WriteBuf<Vec<u8>>,
        ) -> Result<(), tickwire_codec::ws::EncodeError>,
    ) -> Result<(), Error> {
        if self.state != State::Open {
            return Err(Error::AlreadyClosed);
        }
        self.make_room(need)?;
        f(&mut self.writer, &mut self.wbuf)?;
        self.flush().map(|_| ())
    }

    fn control_len(&self, payload: usize) -> usize {
        // 2-byte header, 4-byte key for a client; control payloads are at most 125.
        2 + 4 + payload.min(MAX_CONTROL_PAYLOAD)
    }
}

/// One WebSocket connection over `S`, writing with masking `M`.
#[derive(Debug)]
pub(crate) struct Conn<S, M> {
    pub reader: FrameReader<Vec<u8>>,
    pub io: Io<S, M>,
}

impl<S: Stream, M: Masking> Conn<S, M> {
    /// A connection in `role` over `stream`; blocking mode when `blocking`.
    pub fn new(
        stream: S,
        role: Role,
        writer: FrameWriter<M>,
        opts: &Options,
        blocking: bool,
    ) -> io::Result<Self> {
        let waiter = if blocking { Some(Waiter::new()?) } else { None };
        // Room for at least one control frame, so a pong or close always fits.
        let wcap = opts.write_buffer_size.max(256);
        Ok(Conn {
            reader: opts.reader(role),
            io: Io {
                stream,
                waiter,
                sock_blocking: false,
                writer: writer.with_fragment_size(opts.fragment_size),
                wbuf: WriteBuf::new(vec![0u8; wcap]),
                pending: None,
                state: State::Open,
                drained: false,
                sticky_readiness: false,
                shutdown_pending: false,
                shut: false,
                auto_pong: opts.auto_pong,
                close_timeout: opts.close_timeout,
                read_timeout: opts.read_timeout,
                write_timeout: opts.write_timeout,
            },
        })
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

    /// Bytes after an opening handshake's head (`got` bytes read into the reader's spare
    /// space, the head `consumed` of them) become the first frame bytes.
    pub fn adopt_leftover(&mut self, consumed: usize, got: usize) {
        let spare = self.reader.spare_mut();
        let got = got.min(spare.len());
        let consumed = consumed.min(got);
        spare.copy_within(consumed..got, 0);
        self.reader.commit(got - consumed);
    }

    /// Receive the next message. With `wait` in blocking mode: wait for one (read
    /// timeout; close timeout after our close). Otherwise `Ok(None)` when the socket has
    /// nothing more now. After the close handshake: `Ok(None)`.
    ///
    /// Pings are answered (queued and flushed) before they are returned; the peer's
    /// close is answered and then returned; after our close, data is discarded until the
    /// peer's close.
    pub fn recv<'a>(&'a mut self, wait: bool) -> Result<Option<Message<'a>>, Error> {
        let mut read_deadline = Deadline::After(self.io.read_timeout);
        loop {
            match self.io.state {
                State::Closed => {
                    // The handshake is complete; the echo is best effort (the peer may
                    // have gone already).
                    if self.io.wants_write() && self.io.flush_closing().is_err() {
                        self.io.wbuf.clear();
                    }
                    return Ok(None);
                }
                State::Failed => return Err(Error::AlreadyClosed),
                State::Open | State::CloseSent { .. } => {}
            }
            // Advance first, borrow after: the message is borrowed for `'a` only on the
            // path that returns it, so the loop can go on reading into the reader.
            // With no byte buffered there is no frame to find (a frame in progress
            // waits for more bytes), so the common case, the last read ended on a
            // message boundary, goes straight to the read.
            let advanced = if self.reader.buffered() == 0 {
                Ok(false)
            } else {
                self.reader.advance()
            };
            match advanced {
                Ok(true) => {
                    let deliver = match self.reader.message() {
                        Some(msg) => self.io.on_message(&msg)?,
                        None => false,
                    };
                    if deliver {
                        return Ok(self.reader.message());
                    }
                    continue;
                }
                Ok(false) => {}
                Err(e) => {
                    self.fail(e.close_code());
                    return Err(Error::Protocol(e));
                }
            }
            // Waiting with no deadline and nothing to write: sleep in the read itself.
            let block = wait
                && self.io.state == State::Open
                && self.io.read_timeout.is_none()
                && !self.io.wants_write();
            // After a read that drained the socket, a non-blocking read would only say
            // `WouldBlock`: wait for readiness first where the wait remembers an arrival
            // since the read (our own edge-triggered poll when we are about to wait on
            // it, tokio's readiness). A read that blocks by itself needs no such
            // shortcut, and `try_recv` in blocking mode always reads. Decided before
            // the reader's spare room is asked for: a skipped read needs none (with
            // tokio, "nothing now" after a draining read touches neither the reader's
            // buffer nor the socket; the flag is consumed, so the call after the
            // caller's wait reads).
            let drained = std::mem::take(&mut self.io.drained);
            let skip =
                drained && !block && (self.io.sticky_readiness || (wait && self.io.is_blocking()));
            let mut asked = 0;
            let outcome = if skip {
                Ok(ReadOutcome::WouldBlock)
            } else {
                let spare = self.reader.spare_mut();
                if spare.is_empty() {
                    // The limits keep a message plus overhead within the buffer; be safe anyway.
                    self.fail(CloseCode::TOO_BIG);
                    return Err(Error::Protocol(WsError::MessageTooLarge));
                }
                asked = spare.len();
                let mode = if block {
                    self.io.sock_blocking().map(|_| ())
                } else {
                    self.io.sock_nonblocking()
                };
                mode.and_then(|()| read_once(&mut self.io.stream, spare))
            };
            match outcome {
                Ok(ReadOutcome::Data(n)) => {
                    self.io.drained = self.io.stream.read_drained(asked, n);
                    self.reader.commit(n);
                }
                Ok(ReadOutcome::WouldBlock) => {
                    if !wait || !self.io.is_blocking() {
                        if self.io.wants_write() {
                            self.io.write_some()?;
                        }
                        return Ok(None);
                    }
                    let deadline = match (self.io.state, read_deadline.get()) {
                        (State::CloseSent { deadline }, r) => {
                            Some(r.map_or(deadline, |r| r.min(deadline)))
                        }
                        (_, r) => r,
                    };
                    if !self.io.wait(deadline)? {
                        return Err(self.timed_out(Instant::now()));
                    }
                }
                Ok(ReadOutcome::Eof) => {
                    self.io.state = State::Failed;
                    self.io.shut = true;
                    return Err(Error::ConnectionLost);
                }
                Err(e) => {
                    self.io.state = State::Failed;
                    return Err(e.into());
                }
            }
        }
    }

    /// A wait passed its deadline: the close timeout (socket shut) or the read timeout.
    fn timed_out(&mut self, now: Instant) -> Error {
        match self.io.state {
            State::CloseSent { deadline } if now >= deadline => {
                self.abort();
                Error::CloseTimeout
            }
            _ => Error::Timeout,
        }
    }

    /// Shut the write half (after what is buffered) and read what is left, so the peer
    /// sees our last bytes rather than a reset. Used after a refused handshake.
    pub fn abort_and_drain(&mut self) {
        self.abort();
        self.drain(None);
    }

    /// Shut the socket down for good.
    pub fn abort(&mut self) {
        // Never block in a TLS close_notify write (best effort).
        let _ = self.io.sock_nonblocking();
        self.io.state = State::Failed;
        if !self.io.shut {
            self.io.shut = true;
            let _ = self.io.stream.shutdown_write();
        }
    }

    /// When [`handle_timeout`](Self::handle_timeout) next wants to run.
    pub fn timeout_at(&self) -> Option<Instant> {
        match self.io.state {
            State::CloseSent { deadline } => Some(deadline),
            _ => None,
        }
    }

    /// Evented mode: enforce the close timeout at `now`.
    pub fn handle_timeout(&mut self, now: Instant) -> Result<(), Error> {
        match self.io.state {
            State::CloseSent { deadline } if now >= deadline => Err(self.timed_out(now)),
            _ => Ok(()),
        }
    }

    /// Fail the connection: send a close with `code`, shut down, drain what is readable.
    fn fail(&mut self, code: CloseCode) {
        let was_open = matches!(self.io.state, State::Open);
        self.io.state = State::Failed;
        if was_open {
            self.io.queue_control(Pending::Close(Some(code)));
        }
        self.io.shutdown_pending = true;
        let deadline = Instant::now().checked_add(self.io.close_timeout);
        let flushed = if self.io.is_blocking() {
            self.io.write_all(Deadline::At(deadline)).unwrap_or(false)
        } else {
            self.io.write_some().unwrap_or(false)
        };
        if flushed {
            // Read what the peer still sends (until its FIN or the close timeout when
            // blocking), so closing the socket does not turn into a reset that could
            // destroy our close frame in flight.
            self.drain(if self.io.is_blocking() {
                deadline
            } else {
                None
            });
        }
    }

    fn drain(&mut self, deadline: Option<Instant>) {
        if self.io.sock_nonblocking().is_err() {
            return;
        }
        loop {
            let spare = self.reader.spare_mut();
            if spare.is_empty() {
                return;
            }
            match read_once(&mut self.io.stream, spare) {
                Ok(ReadOutcome::Data(_)) => {}
                Ok(ReadOutcome::WouldBlock) if deadline.is_some() => {
                    if !matches!(self.io.wait(deadline), Ok(true)) {
                        return;
                    }
                }
                _ => return,
            }
        }
    }

    pub fn send_text(&mut self, text: &str) -> Result<(), Error> {
        let need = self.io.writer.message_len(text.len());
        self.io.send_with(need, |w, b| w.write_text(text, b))
    }

    pub fn send_binary(&mut self, data: &[u8]) -> Result<(), Error> {
        let need = self.io.writer.message_len(data.len());
        self.io.send_with(need, |w, b| w.write_binary(data, b))
    }

    pub fn send_ping(&mut self, payload: &[u8]) -> Result<(), Error> {
        let need = self.io.control_len(payload.len());
        self.io.send_with(need, |w, b| w.write_ping(payload, b))
    }

    pub fn send_pong(&mut self, payload: &[u8]) -> Result<(), Error> {
        let need = self.io.control_len(payload.len());
        self.io.send_with(need, |w, b| w.write_pong(payload, b))
    }

    /// Start the close handshake. A no-op once closing or closed.
    pub fn close(&mut self, code: Option<CloseCode>, reason: &str) -> Result<(), Error> {
        if self.io.state != State::Open {
            return Ok(());
        }
        let need = self.io.control_len(2 + reason.len());
        self.io.make_room(need)?;
        self.io
            .writer
            .write_close(code, reason, &mut self.io.wbuf)?;
        let deadline = Instant::now()
            .checked_add(self.io.close_timeout)
            .unwrap_or_else(Instant::now);
        self.io.state = State::CloseSent { deadline };
        self.io.flush().map(|_| ())
    }

    /// Whether the connection is finished: closed cleanly or failed.
    pub fn is_closed(&self) -> bool {
        matches!(self.io.state, State::Closed | State::Failed)
    }
}

#[cfg(test)]
#[path = "conn_tests.rs"]
mod tests;
