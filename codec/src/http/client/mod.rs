//! [`ClientConnection`]: the one HTTP/1.1 client state machine, sans-IO: a keep-alive
//! connection to one server, one request at a time, across the transport connections
//! that carry it.
//!
//! It owns every rule that makes a keep-alive client correct, so that the blocking,
//! tokio and kernel-bypass drivers only connect, move bytes, wait and read a clock:
//!
//! - **pairing**: a response is read only for the request just written, from bytes that
//!   arrived after it; bytes that arrived while the connection was idle (a response
//!   nobody asked for, a 408 before a close, garbage) or its end of stream mean the
//!   connection is not reused (RFC 9112 §6.3) and the request goes on a new one;
//! - **reuse** after each response: not after `Connection: close`, an HTTP/1.0 response
//!   without `Connection: keep-alive` or with Transfer-Encoding (RFC 9112 §6.1), a body
//!   delimited by the close (§6.3), a 101, bytes after the response that no request
//!   asked for, or any error;
//! - **the stale-connection check**: before a request on a connection that has carried
//!   one (and has been idle at least [`ClientSettings::idle_probe`]), the driver looks
//!   without blocking whether anything arrived or the server closed
//!   ([`Action::Probe`]); if so the connection is replaced before a byte is written;
//! - **retry**: a request that failed on a reused connection before any byte of its
//!   response is sent once more on a new connection when that is safe: its method is
//!   idempotent (RFC 9110 §9.2.2), or not a byte of it was written. Never after a
//!   response byte, never after a timeout, never twice;
//! - **time**: the whole-request deadline and the read and write timeouts are instants
//!   against the `now` the caller passes; [`poll_timeout`](ClientConnection::poll_timeout)
//!   says when to wake.
//!
//! It never allocates and never reads a clock: the request's bytes stay in the caller's
//! [`Request`], the response is read into the caller's [`ResponseReader`] (whose limits
//! bound the response: a full buffer is [`Error::BodyTooLarge`](super::Error)).
//!
//! Its methods come in the four kinds of [`ws::Connection`](crate::ws::Connection)'s:
//! getters ([`is_open`](ClientConnection::is_open), [`stats`](ClientConnection::stats),
//! [`poll_timeout`](ClientConnection::poll_timeout)), `handle_*` for what happened
//! (connected, probed, written, read, end of stream, an I/O failure, closed, time),
//! the mutator [`start`](ClientConnection::start) for a request, and `poll`
//! ([`poll`](ClientConnection::poll): the next [`Action`] the driver owes it;
//! [`transmit`](ClientConnection::transmit): the request bytes still to write).
//!
//! A driver's loop, per request:
//!
//! ```text
//! conn.start(&request, timeout, now)
//! loop match conn.poll(&mut reader)? {
//!     Connect => open a transport connection, handle_connected(now)
//!     Probe   => look without blocking for bytes or EOF, handle_probe(found)
//!     Write   => write transmit(&request) (wait at most until poll_timeout()), handle_written(n)
//!     Read    => read into reader.spare_mut() (wait at most until poll_timeout()),
//!                handle_read(&mut reader, n) / handle_eof(&mut reader)
//!     Close   => close the transport connection, handle_closed()
//!     Done    => return reader.response()
//! }
//! ```
//!
//! An I/O error is `handle_failure(dropped)` (`dropped`: the peer reset or closed the
//! connection); a wait that ended without progress is `handle_timeout(now)`. An instant
//! from `poll_timeout` at or before the latest `now` means "read the clock and call
//! `handle_timeout`": timers armed by progress start at the next `now` the caller
//! passes, so a driver reads the clock once per wait. A driver whose transport bounds
//! every wait by the read and write timeouts (a blocking socket) reads it less:
//! [`handle_bounded_wait`](ClientConnection::handle_bounded_wait) starts a timer at the
//! latest `now` before such a wait, and a request for which
//! [`start_needs_time`](ClientConnection::start_needs_time) is `false` may start at
//! [`now`](ClientConnection::now); the clock read after a wait the transport ended finds
//! the timer passed.
//!
//! ```
//! use core::time::Duration;
//! use tickwire_codec::http::client::{Action, ClientConnection, ClientSettings};
//! use tickwire_codec::http::{RequestWriter, ResponseReader};
//! use tickwire_codec::time::Instant;
//!
//! let mut writer = RequestWriter::new([0u8; 512], "api.example.com").unwrap();
//! let mut reader: ResponseReader<[u8; 1024]> = ResponseReader::new([0u8; 1024]);
//! let mut conn = ClientConnection::new(ClientSettings::default());
//! let now = Instant::from_nanos(0);
//!
//! let req = writer.get("/time").finish().unwrap();
//! conn.start(&req, Some(Duration::from_secs(2)), now);
//! assert_eq!(conn.poll(&mut reader), Ok(Action::Connect));
//! conn.handle_connected(now);
//! assert_eq!(conn.poll(&mut reader), Ok(Action::Write));
//! let n = conn.transmit(&req).len(); // the socket takes it all
//! conn.handle_written(n);
//! assert_eq!(conn.poll(&mut reader), Ok(Action::Read));
//! let answer = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}";
//! reader.spare_mut()[..answer.len()].copy_from_slice(answer);
//! conn.handle_read(&mut reader, answer.len());
//! assert_eq!(conn.poll(&mut reader), Ok(Action::Done));
//! assert_eq!(reader.response().unwrap().body(), b"{}");
//! assert!(conn.is_open()); // kept alive for the next request
//! ```

#[cfg(test)]
mod tests;

use core::time::Duration;

use super::error::Error;
use super::method::Method;
use super::request_writer::Request;
use super::response_reader::ResponseReader;
use crate::time::Instant;

/// Settings of a [`ClientConnection`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientSettings {
    /// The longest wait for the next bytes of a response (default 30 s; `None`:
    /// forever): [`ClientError::ReadTimeout`].
    pub read_timeout: Option<Duration>,
    /// The longest wait for the transport to take more request bytes (default 30 s;
    /// `None`: forever): [`ClientError::WriteTimeout`].
    pub write_timeout: Option<Duration>,
    /// Before a request on a connection that has carried one and has been idle at least
    /// this long, check it ([`Action::Probe`]) for bytes nobody asked for or the
    /// server's close. Default `Some(Duration::ZERO)`: before every reuse, so that
    /// nothing that arrived while idle is ever read as the next response (RFC 9112
    /// §6.3). `None`: never (a closed connection is then found by the request itself,
    /// and retried when that is safe; bytes already read are still checked).
    pub idle_probe: Option<Duration>,
}

impl Default for ClientSettings {
    fn default() -> Self {
        ClientSettings {
            read_timeout: Some(Duration::from_secs(30)),
            write_timeout: Some(Duration::from_secs(30)),
            idle_probe: Some(Duration::ZERO),
        }
    }
}

/// What the driver must do next for the request under way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Open a new transport connection, then
    /// [`handle_connected`](ClientConnection::handle_connected) (or return the connect
    /// error: the next [`start`](ClientConnection::start) connects again).
    Connect,
    /// Look without blocking whether the idle connection received anything or was
    /// closed by the server, then [`handle_probe`](ClientConnection::handle_probe).
    Probe,
    /// Write [`transmit`](ClientConnection::transmit), waiting at most until
    /// [`poll_timeout`](ClientConnection::poll_timeout), then
    /// [`handle_written`](ClientConnection::handle_written).
    Write,
    /// Read into the reader's [`spare_mut`](ResponseReader::spare_mut), waiting at most
    /// until [`poll_timeout`](ClientConnection::poll_timeout), then
    /// [`handle_read`](ClientConnection::handle_read) or
    /// [`handle_eof`](ClientConnection::handle_eof).
    Read,
    /// Close the transport connection (it cannot carry another request), then
    /// [`handle_closed`](ClientConnection::handle_closed).
    Close,
    /// The response is complete: [`ResponseReader::response`].
    Done,
}

/// Why a request failed. The connection is closed by then (the driver was asked to,
/// [`Action::Close`]), unless the error is [`NoRequest`](ClientError::NoRequest).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClientError {
    /// The response is not valid HTTP/1.1, or broke a limit of the reader.
    Http(Error),
    /// The server closed the connection before any byte of the response.
    ConnectionLost,
    /// No response byte arrived within the read timeout.
    ReadTimeout,
    /// The transport took no request byte within the write timeout.
    WriteTimeout,
    /// The whole-request deadline passed.
    RequestTimeout,
    /// The I/O error the driver reported ([`handle_failure`](ClientConnection::handle_failure));
    /// the driver holds its details.
    Io,
    /// No request was started, or its outcome was already returned.
    NoRequest,
}

impl core::fmt::Display for ClientError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Http(e) => write!(f, "invalid response: {e}"),
            Self::ConnectionLost => f.write_str("server closed the connection before responding"),
            Self::ReadTimeout => f.write_str("read timed out"),
            Self::WriteTimeout => f.write_str("write timed out"),
            Self::RequestTimeout => f.write_str("request timed out"),
            Self::Io => f.write_str("I/O error"),
            Self::NoRequest => f.write_str("no request under way"),
        }
    }
}

impl core::error::Error for ClientError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Self::Http(e) => Some(e),
            _ => None,
        }
    }
}

/// Counters of a connection's life, for tests and monitoring.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClientStats {
    /// Transport connections opened.
    pub connects: u64,
    /// Requests written (a retried request counts twice).
    pub requests: u64,
    /// Requests sent again on a new connection after a reused one failed.
    pub retries: u64,
    /// Connections replaced before a request because something arrived while they were
    /// idle (bytes nobody asked for, or the server's close).
    pub stale_probed: u64,
}

/// A timer in nanoseconds: off, started at the next `now`, or running to an instant
/// (plain integers: it is read before every wait).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Timer {
    /// When it runs out ([`NEVER`]: not started, or off).
    at: u64,
    /// How long it runs once started ([`NEVER`]: off).
    len: u64,
}

/// No instant (a timer off or not started, no deadline).
const NEVER: u64 = u64::MAX;

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(NEVER)
}

impl Timer {
    const OFF: Timer = Timer {
        at: NEVER,
        len: NEVER,
    };

    /// A timer of `t`, to start at the next `now` (off when `None`).
    fn new(t: Option<Duration>) -> Timer {
        Timer {
            at: NEVER,
            len: t.map_or(NEVER, nanos),
        }
    }

    /// A timer of `t` running from `now`.
    fn from(t: Option<Duration>, now: Instant) -> Timer {
        let mut timer = Timer::new(t);
        timer.start(now);
        timer
    }

    fn start(&mut self, now: Instant) {
        if self.len != NEVER {
            self.at = now.as_nanos().saturating_add(self.len).min(NEVER - 1);
        }
    }

    /// Progress: run again from the next `now`.
    #[inline]
    fn restart(&mut self) {
        self.at = NEVER;
    }

    /// Waiting to start at the next `now`.
    #[inline]
    fn due(&self) -> bool {
        self.at == NEVER && self.len != NEVER
    }
}

/// Where the request stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// No request under way.
    Idle,
    /// Started: decide whether the connection may carry it.
    Start,
    Connect,
    Probe,
    /// Writing; the reader is prepared on the first `poll`.
    Write,
    Read,
    /// The transport connection must close, then this.
    Closing(After),
    /// The response is in the reader.
    Done,
    Failed(ClientError),
}

/// What follows a close.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum After {
    Connect,
    Done,
    Fail(ClientError),
}

/// One HTTP/1.1 client connection: see the [module docs](self).
#[derive(Debug, Clone)]
pub struct ClientConnection {
    settings: ClientSettings,
    phase: Phase,
    /// A transport connection is open.
    open: bool,
    /// Responses received on the open transport connection.
    responses: u64,
    /// When the open connection became idle (the `now` before its last wait).
    idle_since: Instant,
    /// The server ended the stream while the connection was idle.
    eof_idle: bool,
    /// The reader wants `expect` (and `clear` on a new connection) before the write.
    prepare: bool,
    // The request under way.
    method: Method,
    len: usize,
    written: usize,
    received: usize,
    /// The attempt runs on a connection that carried a response before.
    reused: bool,
    retried: bool,
    /// The request's deadline in nanoseconds ([`NEVER`]: none).
    deadline: u64,
    io: Timer,
    last_now: Instant,
    stats: ClientStats,
}

impl ClientConnection {
    /// A connection with `settings`, not connected yet.
    ///
    /// ```
    /// use tickwire_codec::http::client::{ClientConnection, ClientSettings};
    /// let conn = ClientConnection::new(ClientSettings { idle_probe: None, ..Default::default() });
    /// assert!(!conn.is_open());
    /// ```
    pub const fn new(settings: ClientSettings) -> Self {
        ClientConnection {
            settings,
            phase: Phase::Idle,
            open: false,
            responses: 0,
            idle_since: Instant::ZERO,
            eof_idle: false,
            prepare: false,
            method: Method::Get,
            len: 0,
            written: 0,
            received: 0,
            reused: false,
            retried: false,
            deadline: NEVER,
            io: Timer::OFF,
            last_now: Instant::ZERO,
            stats: ClientStats {
                connects: 0,
                requests: 0,
                retries: 0,
                stale_probed: 0,
            },
        }
    }

    // ---- getters ----

    /// The settings.
    pub fn settings(&self) -> &ClientSettings {
        &self.settings
    }

    /// Change the settings (they apply from the next request).
    pub fn set_settings(&mut self, settings: ClientSettings) {
        self.settings = settings;
    }

    /// Whether a transport connection is open (it may still turn out stale).
    #[inline]
    pub fn is_open(&self) -> bool {
        self.open
    }

    /// Responses received on the open transport connection (`> 0`: a request on it
    /// reuses it).
    #[inline]
    pub fn responses(&self) -> u64 {
        self.responses
    }

    /// Counters: connects, requests, retries, stale connections replaced.
    #[inline]
    pub fn stats(&self) -> ClientStats {
        self.stats
    }

    /// The method of the request under way (or the last one).
    #[inline]
    pub fn method(&self) -> Method {
        self.method
    }

    /// When to call [`handle_timeout`](Self::handle_timeout) next while waiting for the
    /// transport (`None`: no limit). An instant at or before the last `now` passed means
    /// "read the clock and call it now".
    #[inline]
    pub fn poll_timeout(&self) -> Option<Instant> {
        let io = match self.phase {
            Phase::Write | Phase::Read if self.io.due() => self.last_now.as_nanos(),
            Phase::Write | Phase::Read => self.io.at,
            Phase::Connect | Phase::Probe => NEVER,
            _ => return None,
        };
        let at = io.min(self.deadline);
        (at != NEVER).then_some(Instant::from_nanos(at))
    }

    /// The latest `now` passed (by [`start`](Self::start), a `handle_*` that takes one).
    #[inline]
    pub fn now(&self) -> Instant {
        self.last_now
    }

    /// Whether [`start`](Self::start) of a request bounded by `timeout` needs the time:
    /// for its deadline, or for the idle interval before the stale-connection check (an
    /// [`idle_probe`](ClientSettings::idle_probe) of zero or `None` times nothing: the
    /// check runs before every reuse, or never). When it does not, a driver whose every
    /// wait the transport bounds by the read and write timeouts (a blocking socket, see
    /// [`handle_bounded_wait`](Self::handle_bounded_wait)) may start the request at
    /// [`now`](Self::now) instead of reading a clock: a timer that runs out is then
    /// found by the clock read after the transport's bound ended the wait.
    #[inline]
    pub fn start_needs_time(&self, timeout: Option<Duration>) -> bool {
        timeout.is_some() || self.settings.idle_probe.is_some_and(|p| !p.is_zero())
    }

    /// The request bytes still to write: the tail of `request`, the request passed to
    /// [`start`](Self::start).
    #[inline]
    pub fn transmit<'a>(&self, request: &'a Request<'_>) -> &'a [u8] {
        request.as_bytes().get(self.written..).unwrap_or_default()
    }

    // ---- mutators ----

    /// Start `request` at `now`, the whole of it (connect, retry and every wait) bounded
    /// by `timeout` when there is one. Whatever was under way before is abandoned: a
    /// connection left in the middle of an exchange is replaced.
    #[inline]
    pub fn start(&mut self, request: &Request<'_>, timeout: Option<Duration>, now: Instant) {
        let cut_short = !matches!(self.phase, Phase::Idle | Phase::Done | Phase::Failed(_));
        self.method = request.method();
        self.len = request.len();
        self.retried = false;
        self.io = Timer::OFF;
        self.deadline = timeout.map_or(NEVER, |t| {
            now.as_nanos().saturating_add(nanos(t)).min(NEVER - 1)
        });
        self.last_now = now;
        self.phase = if self.open && cut_short {
            // An exchange cut short (a dropped future): its bytes are in the way.
            Phase::Closing(After::Connect)
        } else {
            Phase::Start
        };
    }

    // ---- poll ----

    /// What the driver must do next; `Err` when the request failed (the connection was
    /// closed first). The reader is the one the response goes to: a request's bytes are
    /// only ever paired with what arrived after them.
    #[inline]
    pub fn poll<B, const N: usize>(
        &mut self,
        reader: &mut ResponseReader<B, N>,
    ) -> Result<Action, ClientError>
    where
        B: AsRef<[u8]> + AsMut<[u8]>,
    {
        // The states a request passes through on every exchange, without a call.
        match self.phase {
            Phase::Read => Ok(Action::Read),
            Phase::Write if !self.prepare => Ok(Action::Write),
            Phase::Done => Ok(Action::Done),
            _ => self.poll_other(reader),
        }
    }

    /// [`poll`](Self::poll) for a request that starts (once per request on a busy
    /// keep-alive connection), connects, probes, closes or fails.
    #[inline(never)]
    fn poll_other<B, const N: usize>(
        &mut self,
        reader: &mut ResponseReader<B, N>,
    ) -> Result<Action, ClientError>
    where
        B: AsRef<[u8]> + AsMut<[u8]>,
    {
        if self.phase == Phase::Start {
            self.choose(reader);
        }
        if self.phase == Phase::Write {
            self.prepare = false;
            if !self.reused {
                // A new connection: whatever the reader holds came from an earlier one.
                reader.clear();
            }
            reader.expect(self.method);
            return Ok(Action::Write);
        }
        self.poll_rare()
    }

    /// [`poll`](Self::poll) off the exchange: connect, probe, close, fail.
    #[cold]
    fn poll_rare(&mut self) -> Result<Action, ClientError> {
        Ok(match self.phase {
            Phase::Connect => Action::Connect,
            Phase::Probe => Action::Probe,
            Phase::Closing(_) => Action::Close,
            Phase::Read => Action::Read,
            Phase::Done => Action::Done,
            Phase::Write => Action::Write,
            Phase::Failed(e) => {
                self.phase = Phase::Idle;
                return Err(e);
            }
            Phase::Start | Phase::Idle => return Err(ClientError::NoRequest),
        })
    }

    /// May the open connection carry the request just started?
    #[inline]
    fn choose<B, const N: usize>(&mut self, reader: &mut ResponseReader<B, N>)
    where
        B: AsRef<[u8]> + AsMut<[u8]>,
    {
        if !self.open {
            self.phase = Phase::Connect;
            return;
        }
        if self.responses == 0 {
            // Opened ahead of the request (or left mid-exchange: replaced).
            if self.eof_idle {
                self.phase = Phase::Closing(After::Connect);
            } else {
                self.begin_write();
            }
            return;
        }
        if self.eof_idle || !reader.unparsed().is_empty() {
            // Arrived while idle: never the answer to this request (RFC 9112 §6.3).
            self.stats.stale_probed += 1;
            self.phase = Phase::Closing(After::Connect);
            return;
        }
        let idle = self.last_now.saturating_duration_since(self.idle_since);
        if self.settings.idle_probe.is_some_and(|p| idle >= p) {
            self.phase = Phase::Probe;
        } else {
            self.begin_write();
        }
    }

    fn begin_write(&mut self) {
        if self.last_now.as_nanos() >= self.deadline {
            self.phase = Phase::Closing(After::Fail(ClientError::RequestTimeout));
            return;
        }
        self.reused = self.responses > 0;
        self.written = 0;
        self.received = 0;
        self.prepare = true;
        self.stats.requests += 1;
        self.io = Timer::from(self.settings.write_timeout, self.last_now);
        self.phase = Phase::Write;
    }

    // ---- handle_* ----

    /// A transport connection was opened (at `now`) after [`Action::Connect`].
    pub fn handle_connected(&mut self, now: Instant) {
        self.open = true;
        self.responses = 0;
        self.eof_idle = false;
        self.stats.connects += 1;
        self.last_now = now;
        match self.phase {
            Phase::Connect => self.begin_write(),
            // Opened ahead of a request: an exchange cut short on an earlier
            // connection is over.
            Phase::Start | Phase::Idle | Phase::Done | Phase::Failed(_) => {}
            _ => self.phase = Phase::Idle,
        }
    }

    /// The result of [`Action::Probe`]: `true` when the idle connection received bytes
    /// or its end of stream, or failed.
    pub fn handle_probe(&mut self, found: bool) {
        if self.phase != Phase::Probe {
            return;
        }
        if found {
            self.stats.stale_probed += 1;
            self.phase = Phase::Closing(After::Connect);
        } else {
            self.begin_write();
        }
    }

    /// The transport took `n` more bytes of [`transmit`](Self::transmit).
    #[inline]
    pub fn handle_written(&mut self, n: usize) {
        if self.phase != Phase::Write {
            return;
        }
        self.written = (self.written + n).min(self.len);
        if self.written < self.len {
            self.io.restart();
            return;
        }
        self.phase = Phase::Read;
        self.io = Timer::new(self.settings.read_timeout);
    }

    /// `n` bytes were read into the reader's [`spare_mut`](ResponseReader::spare_mut).
    /// While no request is under way they are left for the next
    /// [`start`](Self::start) to find (the connection is then not reused).
    #[inline]
    pub fn handle_read<B, const N: usize>(&mut self, reader: &mut ResponseReader<B, N>, n: usize)
    where
        B: AsRef<[u8]> + AsMut<[u8]>,
    {
        reader.commit(n);
        if self.phase != Phase::Read || n == 0 {
            return;
        }
        self.received += n;
        self.io.restart();
        match reader.advance() {
            Ok(true) => self.complete(reader),
            Ok(false) => {
                if reader.spare_mut().is_empty() {
                    self.fail(ClientError::Http(Error::BodyTooLarge), false);
                }
            }
            Err(e) => self.fail(ClientError::Http(e), false),
        }
    }

    /// The server ended the stream. Before any byte of the response it is
    /// [`ClientError::ConnectionLost`] (retried when safe); a body delimited by the
    /// close ends here; on an idle connection the next request goes on a new one.
    pub fn handle_eof<B, const N: usize>(&mut self, reader: &mut ResponseReader<B, N>)
    where
        B: AsRef<[u8]> + AsMut<[u8]>,
    {
        match self.phase {
            Phase::Read => {}
            Phase::Write => return self.fail(ClientError::ConnectionLost, true),
            _ => {
                self.eof_idle = true;
                return;
            }
        }
        if self.received == 0 {
            return self.fail(ClientError::ConnectionLost, true);
        }
        reader.signal_eof();
        match reader.advance() {
            Ok(true) => self.complete(reader),
            Ok(false) => self.fail(ClientError::Http(Error::UnexpectedEof), false),
            Err(e) => self.fail(ClientError::Http(e), false),
        }
    }

    /// The driver's I/O failed (connect excepted: it just returns that error).
    /// `dropped`: the failure means the peer closed or reset the connection (a reset, a
    /// broken pipe, a TLS stream ended without close_notify), which a retry on a new
    /// connection may survive. The driver keeps the error: [`ClientError::Io`] says to
    /// return it.
    pub fn handle_failure(&mut self, dropped: bool) {
        match self.phase {
            Phase::Write | Phase::Read => self.fail(ClientError::Io, dropped),
            Phase::Probe => self.handle_probe(true),
            _ => {}
        }
    }

    /// The transport connection is closed (after [`Action::Close`], or because the
    /// application or the driver dropped it).
    pub fn handle_closed(&mut self) {
        self.open = false;
        self.responses = 0;
        self.eof_idle = false;
        self.phase = match self.phase {
            // The idle connection vanished before the request: a new one.
            Phase::Closing(After::Connect) | Phase::Probe => Phase::Connect,
            Phase::Closing(After::Done) => Phase::Done,
            Phase::Closing(After::Fail(e)) => Phase::Failed(e),
            Phase::Write | Phase::Read => Phase::Failed(ClientError::Io),
            p => p,
        };
    }

    /// Time passed: it is `now`. Fails the request when its deadline or the current
    /// read or write timeout has passed; starts the timers progress restarted.
    #[inline]
    pub fn handle_timeout(&mut self, now: Instant) {
        self.last_now = now;
        if !matches!(
            self.phase,
            Phase::Write | Phase::Read | Phase::Connect | Phase::Probe
        ) {
            return;
        }
        if now.as_nanos() >= self.deadline {
            return self.fail(ClientError::RequestTimeout, false);
        }
        if self.io.due() {
            self.io.start(now);
        } else if now.as_nanos() >= self.io.at {
            let e = if self.phase == Phase::Write {
                ClientError::WriteTimeout
            } else {
                ClientError::ReadTimeout
            };
            self.fail(e, false);
        }
    }

    /// A wait is about to start at `now` that the transport bounds by itself by the
    /// current read or write timeout counted from `now` (a blocking socket's
    /// `SO_RCVTIMEO`): the timer progress restarted starts at `now`, without a clock
    /// read. `true` when that timer alone ends the wait (no request deadline), so the
    /// transport's own bound is exactly [`poll_timeout`](Self::poll_timeout) and the
    /// wait needs no other limit; `false` changes nothing: wait as `poll_timeout` says.
    ///
    /// When the transport's bound ends the wait, the clock read after it and
    /// [`handle_timeout`](Self::handle_timeout) find the timer passed.
    #[inline]
    pub fn handle_bounded_wait(&mut self, now: Instant) -> bool {
        // Only the write and read phases arm a timer that starts at the next `now`.
        if !self.io.due() || self.deadline != NEVER {
            return false;
        }
        debug_assert!(matches!(self.phase, Phase::Write | Phase::Read));
        self.last_now = now;
        self.io.start(now);
        true
    }

    // ---- internal ----

    /// The response is complete: keep the connection or close it.
    fn complete<B, const N: usize>(&mut self, reader: &mut ResponseReader<B, N>)
    where
        B: AsRef<[u8]> + AsMut<[u8]>,
    {
        let keep = reader.reusable() && !reader.is_eof();
        self.io = Timer::OFF;
        if keep {
            self.responses += 1;
            self.idle_since = self.last_now;
            self.phase = Phase::Done;
        } else {
            self.phase = Phase::Closing(After::Done);
        }
    }

    /// The attempt failed with `e`; `dropped`: the peer closed or reset. Retry on a new
    /// connection when that is safe, else close and fail.
    #[cold]
    fn fail(&mut self, e: ClientError, dropped: bool) {
        self.io = Timer::OFF;
        let safe = self.method.is_idempotent() || self.written == 0;
        let in_time = self.last_now.as_nanos() < self.deadline;
        if dropped && self.reused && self.received == 0 && !self.retried && safe && in_time {
            self.retried = true;
            self.stats.retries += 1;
            self.phase = Phase::Closing(After::Connect);
        } else {
            self.phase = Phase::Closing(After::Fail(e));
        }
    }
}
