//! What the blocking and tokio REST clients share when they drive the codec's
//! [`ClientConnection`]: the clock (read once when a request starts, unless a blocking
//! request has nothing to time then, and once per wait),
//! what each read or write result tells the connection, and the error a
//! [`ClientError`] becomes. The protocol rules (pairing, reuse, the idle check,
//! retries, the deadline and the read/write timeouts) are the connection's; a driver
//! only connects, moves bytes and waits until `poll_timeout()`.

use std::io;
use std::time::Duration;

#[cfg(any(feature = "tokio", feature = "futures-io"))]
use tickwire_codec::http::Action;
use tickwire_codec::http::{ClientConnection, ClientError, Request, ResponseReader};
use tickwire_codec::time::Instant;

use super::error::Error;
use crate::clock;
#[cfg(feature = "tls")]
use crate::tls::TlsError;

/// One request being driven: the latest `now` and the I/O error the connection was told
/// about (returned when it fails with [`ClientError::Io`]).
pub(crate) struct Drive {
    now: Instant,
    failure: Option<Error>,
}

impl Drive {
    /// Start `req` on `http` now (the clock's first read for this request).
    #[cfg(any(all(feature = "tokio", unix), feature = "futures-io"))]
    #[inline]
    pub(crate) fn start(
        http: &mut ClientConnection,
        req: &Request<'_>,
        t: Option<Duration>,
    ) -> Drive {
        Self::start_at(http, req, t, clock::now())
    }

    /// [`start`](Self::start) for a driver whose every wait the transport bounds by the
    /// read and write timeouts (a blocking [`Stream`](super::Stream)): when the request
    /// has nothing to time at its start (no deadline, no idle interval), it starts at the
    /// connection's latest `now`, without a clock read.
    #[inline]
    pub(crate) fn start_bounded(
        http: &mut ClientConnection,
        req: &Request<'_>,
        t: Option<Duration>,
    ) -> Drive {
        let now = if http.start_needs_time(t) {
            clock::now()
        } else {
            http.now()
        };
        Self::start_at(http, req, t, now)
    }

    #[inline]
    fn start_at(
        http: &mut ClientConnection,
        req: &Request<'_>,
        t: Option<Duration>,
        now: Instant,
    ) -> Drive {
        http.start(req, t, now);
        Drive { now, failure: None }
    }

    /// Before a wait: when it must end (`Some(None)`: never). When the connection's next
    /// timeout is due (a timer that progress restarted, or one that ran out), the clock
    /// is read and passed on first; `None` means "poll again" (the request failed).
    #[inline]
    pub(crate) fn wait(&mut self, http: &mut ClientConnection) -> Option<Option<Instant>> {
        self.wait_from(http, true)
    }

    /// [`wait`](Self::wait) for a wait the socket bounds by itself (a blocking read with
    /// the read timeout as `SO_RCVTIMEO`): `fresh == false` starts a due timer from the
    /// latest `now` instead of reading the clock. The timer then ends no later than the
    /// socket's, so when the socket's read timeout ends the wait, the clock read after it
    /// ([`read`](Self::read)) finds the connection's timer passed.
    #[inline]
    pub(crate) fn wait_from(
        &mut self,
        http: &mut ClientConnection,
        fresh: bool,
    ) -> Option<Option<Instant>> {
        let mut t = http.poll_timeout();
        if t.is_some_and(|t| t <= self.now) {
            if fresh {
                self.tick(http);
            } else {
                http.handle_timeout(self.now);
            }
            // A timer that was due is running now, unless the request failed.
            t = http.poll_timeout();
            if t.is_none_or(|t| t <= self.now) {
                return None;
            }
        }
        Some(t)
    }

    /// The latest `now`.
    #[inline]
    pub(crate) fn now(&self) -> Instant {
        self.now
    }

    /// When the next wait ends, on the std clock (`None`: never).
    #[inline]
    pub(crate) fn until(&self, http: &ClientConnection) -> Option<std::time::Instant> {
        http.poll_timeout().map(clock::to_std)
    }

    /// A wait ended without progress, or a timer is due: the clock, then the
    /// connection's timers.
    #[inline]
    pub(crate) fn tick(&mut self, http: &mut ClientConnection) {
        self.now = clock::now();
        http.handle_timeout(self.now);
    }

    /// A transport connection is open: the clock once more (the connect was a wait).
    pub(crate) fn connected(&mut self, http: &mut ClientConnection) {
        self.now = clock::now();
        http.handle_connected(self.now);
    }

    /// The result of one write of `http.transmit(req)`.
    #[inline]
    pub(crate) fn wrote(&mut self, http: &mut ClientConnection, r: io::Result<usize>) {
        match r {
            Ok(0) => self.failed(http, Error::io(io::ErrorKind::WriteZero.into())),
            Ok(n) => http.handle_written(n),
            Err(e) => match e.kind() {
                io::ErrorKind::Interrupted => {}
                io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => self.tick(http),
                _ => self.failed(http, Error::from_io(e, true)),
            },
        }
    }

    /// The result of one read into `reader.spare_mut()`.
    #[inline]
    pub(crate) fn read<B, const N: usize>(
        &mut self,
        http: &mut ClientConnection,
        reader: &mut ResponseReader<B, N>,
        r: io::Result<usize>,
    ) where
        B: AsRef<[u8]> + AsMut<[u8]>,
    {
        match r {
            Ok(0) => http.handle_eof(reader),
            Ok(n) => http.handle_read(reader, n),
            Err(e) => match e.kind() {
                io::ErrorKind::Interrupted => {}
                io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => self.tick(http),
                _ => self.failed(http, Error::from_io(e, false)),
            },
        }
    }

    /// An I/O error of the open connection (or of a flush, a TLS record).
    #[cold]
    pub(crate) fn failed(&mut self, http: &mut ClientConnection, e: Error) {
        http.handle_failure(dropped(&e));
        self.failure = Some(e);
    }

    /// The error a failed request returns (named by the caller).
    #[cold]
    pub(crate) fn error(&mut self, e: ClientError) -> Error {
        match e {
            ClientError::Http(e) => Error::http(e),
            ClientError::ReadTimeout => Error::from_io(io::ErrorKind::TimedOut.into(), false),
            ClientError::WriteTimeout => Error::from_io(io::ErrorKind::TimedOut.into(), true),
            ClientError::RequestTimeout => super::client::timed_out(),
            ClientError::Io => self.failure.take().unwrap_or_else(Error::connection_lost),
            _ => Error::connection_lost(),
        }
    }
}

/// How an async driver's request ends, once `r` says how its drive went: the response
/// in `reader`, or the error named with the request and `url` (and the `timeout` that
/// bounded it).
#[cfg(any(feature = "tokio", feature = "futures-io"))]
pub(crate) fn response<'r, B, const N: usize>(
    r: Result<(), Error>,
    reader: &'r mut ResponseReader<B, N>,
    req: &Request<'_>,
    url: &super::HttpUrl,
    timeout: Option<Duration>,
) -> Result<tickwire_codec::http::RestResponse<'r>, Error>
where
    B: AsRef<[u8]> + AsMut<[u8]>,
{
    match r {
        Ok(()) => reader
            .response()
            .ok_or_else(|| Error::http(tickwire_codec::http::Error::UnexpectedEof)),
        Err(e) => Err(super::client::name_error(e, req, url, timeout)),
    }
}

/// What an async driver does next ([`Drive::step`]).
#[cfg(any(feature = "tokio", feature = "futures-io"))]
pub(crate) enum Step<'s, S> {
    /// The response is complete.
    Done,
    /// Open a connection, then [`Drive::connected`].
    Connect,
    /// Poll again (a timer ran, the request failed, or the connection was closed).
    Again,
    /// Probe, write or read on the open stream, waiting at most `until`.
    Io {
        action: Action,
        stream: &'s mut S,
        until: Option<std::time::Instant>,
    },
}

#[cfg(any(feature = "tokio", feature = "futures-io"))]
impl Drive {
    /// One turn of the tokio and futures-io drivers' loop: poll the connection, run a
    /// due timer, and close the stream when it says so (or when it has none to use);
    /// what is left for the driver is to connect or to move bytes on `stream`.
    pub(crate) fn step<'s, S, B, const N: usize>(
        &mut self,
        http: &mut ClientConnection,
        reader: &mut ResponseReader<B, N>,
        stream: &'s mut Option<S>,
    ) -> Result<Step<'s, S>, Error>
    where
        B: AsRef<[u8]> + AsMut<[u8]>,
    {
        let action = http.poll(reader).map_err(|e| self.error(e))?;
        if matches!(action, Action::Write | Action::Read) && self.wait(http).is_none() {
            return Ok(Step::Again);
        }
        let until = self.until(http);
        Ok(match (action, stream) {
            (Action::Done, _) => Step::Done,
            (Action::Connect, _) => Step::Connect,
            (Action::Close, stream) | (_, stream @ None) => {
                *stream = None;
                http.handle_closed();
                Step::Again
            }
            (action, Some(stream)) => Step::Io {
                action,
                stream,
                until,
            },
        })
    }
}

/// Whether an I/O error means the peer dropped the connection (a retry on a new one
/// may work): a reset, an abort, a broken pipe, an unexpected end, a TLS stream ended
/// without close_notify (nginx does that to an idle keep-alive connection).
fn dropped(e: &Error) -> bool {
    match e {
        Error::Io { error, .. } => matches!(
            error.kind(),
            io::ErrorKind::ConnectionReset
                | io::ErrorKind::ConnectionAborted
                | io::ErrorKind::BrokenPipe
                | io::ErrorKind::UnexpectedEof
        ),
        #[cfg(feature = "tls")]
        Error::Tls {
            error: TlsError::UnexpectedEof,
            ..
        } => true,
        _ => false,
    }
}
