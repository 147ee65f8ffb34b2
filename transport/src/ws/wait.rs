//! Waiting in blocking mode: a private edge-triggered poll per connection, reads that
//! retry on EINTR, and deadlines that start only when first needed.

use std::io::{self, Read};
use std::time::{Duration, Instant};

use mio::event::Source;
use mio::{Events, Interest, Poll, Token};

/// The private poll of blocking mode. The socket is registered on the first wait, for
/// readable, plus writable only while output waits (edge-triggered: interest in
/// writable when nothing is to be written would wake the wait after every write).
pub(crate) struct Waiter {
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
    pub(crate) fn new() -> io::Result<Waiter> {
        Ok(Waiter {
            poll: Poll::new()?,
            events: Events::with_capacity(4),
            registered: None,
        })
    }

    /// Leave the poll (when switching to evented mode).
    pub(crate) fn deregister<S: Source>(&mut self, stream: &mut S) -> io::Result<()> {
        if self.registered.take().is_some() {
            self.poll.registry().deregister(stream)?;
        }
        Ok(())
    }

    /// Wait for a readiness edge of `interest` or `deadline`; `Ok(false)` when the
    /// deadline had passed.
    pub(crate) fn wait<S: Source>(
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

/// Read once into `buf` (non-empty), retrying on EINTR. Inlined: on the receive path
/// a call costs more than its work (saving and restoring registers around `recv`).
#[inline(always)]
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
pub(crate) enum Deadline {
    /// `timeout` from the first `get` (`None`: never).
    After(Option<Duration>),
    At(Option<Instant>),
}

impl Deadline {
    pub(crate) fn get(&mut self) -> Option<Instant> {
        if let Deadline::After(t) = *self {
            *self = Deadline::At(t.and_then(|t| Instant::now().checked_add(t)));
        }
        match *self {
            Deadline::At(at) => at,
            Deadline::After(_) => None,
        }
    }
}
