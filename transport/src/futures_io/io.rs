//! The caller's futures-io stream seen as the non-blocking socket the shared driver
//! ([`crate::ws::conn`]) reads and writes, and the deadline timer.
//!
//! The driver is written against `Read + Write` calls that return `WouldBlock`. A
//! futures-io stream answers `Pending` instead, after registering the waker of the
//! [`Context`] it was polled with. [`Compat`] keeps the waker of the task now running
//! the connection (split halves in two tasks: one waker that wakes both, see
//! `ws/split.rs`) and polls the stream with it: `Pending` becomes
//! `WouldBlock`, and the waker is already registered when the driver gives up. So a
//! call that would block is exactly a call whose wake-up is armed, and the async
//! methods return `Pending` only then (or with their timer armed).
//!
//! Storing the waker costs nothing per message: [`Waker::clone_from`] keeps the one it
//! has when it would wake the same task.

use std::io::{self, Read, Write};
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use futures_io::{AsyncRead, AsyncWrite};

#[cfg(feature = "tls")]
use crate::tls::TlsStream;
use crate::ws::stream::Stream;

/// A futures-io stream driven with the waker of the task that runs the connection.
pub(crate) struct Compat<T> {
    io: T,
    waker: Waker,
    /// Bytes were written since the last completed `poll_flush` (a stream that buffers
    /// writes gets them flushed before the driver calls the output done).
    unflushed: bool,
}

impl<T> std::fmt::Debug for Compat<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compat")
            .field("unflushed", &self.unflushed)
            .finish_non_exhaustive()
    }
}

impl<T> Compat<T> {
    pub fn new(io: T) -> Self {
        Compat {
            io,
            waker: Waker::noop().clone(),
            unflushed: false,
        }
    }

    /// Reads and writes from now on wake `waker`'s task.
    #[inline]
    pub fn set_waker(&mut self, waker: &Waker) {
        self.waker.clone_from(waker);
    }

    pub fn get_ref(&self) -> &T {
        &self.io
    }
}

/// `Pending` as the `WouldBlock` the driver understands.
#[inline]
fn ready<R>(p: Poll<io::Result<R>>) -> io::Result<R> {
    match p {
        Poll::Ready(r) => r,
        Poll::Pending => Err(io::ErrorKind::WouldBlock.into()),
    }
}

impl<T: AsyncRead + Unpin> Read for Compat<T> {
    #[inline]
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut cx = Context::from_waker(&self.waker);
        ready(Pin::new(&mut self.io).poll_read(&mut cx, buf))
    }
}

impl<T: AsyncWrite + Unpin> Write for Compat<T> {
    #[inline]
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut cx = Context::from_waker(&self.waker);
        let n = ready(Pin::new(&mut self.io).poll_write(&mut cx, buf))?;
        self.unflushed = true;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        let mut cx = Context::from_waker(&self.waker);
        ready(Pin::new(&mut self.io).poll_flush(&mut cx))?;
        self.unflushed = false;
        Ok(())
    }
}

impl<T: AsyncRead + AsyncWrite + Unpin> Compat<T> {
    /// `poll_flush` once bytes were written: `Ok(true)` when done.
    fn flush_written(&mut self) -> io::Result<bool> {
        if !self.unflushed {
            return Ok(true);
        }
        match self.flush() {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// `poll_close`: the stream's write half is shut (a TCP stream: a FIN).
    fn close(&mut self) -> io::Result<()> {
        let mut cx = Context::from_waker(&self.waker);
        ready(Pin::new(&mut self.io).poll_close(&mut cx))
    }
}

/// Never registered: a futures-io connection is always evented (the driver's blocking
/// mode, the only user of a `mio` registration, is never switched on), and waits
/// through the stream's own reactor.
impl<T> mio::event::Source for Compat<T> {
    fn register(&mut self, _: &mio::Registry, _: mio::Token, _: mio::Interest) -> io::Result<()> {
        Err(io::ErrorKind::Unsupported.into())
    }

    fn reregister(&mut self, _: &mio::Registry, _: mio::Token, _: mio::Interest) -> io::Result<()> {
        Err(io::ErrorKind::Unsupported.into())
    }

    fn deregister(&mut self, _: &mio::Registry) -> io::Result<()> {
        Err(io::ErrorKind::Unsupported.into())
    }
}

impl<T: AsyncRead + AsyncWrite + Unpin> Stream for Compat<T> {
    fn shutdown_write(&mut self) -> io::Result<()> {
        self.close()
    }

    #[inline]
    fn flush_buffered(&mut self) -> io::Result<bool> {
        self.flush_written()
    }

    #[inline]
    fn has_buffered(&self) -> bool {
        self.unflushed
    }
}

/// What a futures-io connection runs on: the caller's stream, or TLS over it (the
/// transport's own TLS stream, the codec's `TlsCodec`).
pub(crate) enum IoStream<T> {
    Plain(Compat<T>),
    /// Boxed: the TLS state is large and a plain connection should not carry its size.
    #[cfg(feature = "tls")]
    Tls(Box<TlsStream<Compat<T>>>),
}

impl<T> std::fmt::Debug for IoStream<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IoStream::Plain(c) => f.debug_tuple("Plain").field(c).finish(),
            #[cfg(feature = "tls")]
            IoStream::Tls(s) => f.debug_tuple("Tls").field(s).finish(),
        }
    }
}

impl<T: AsyncRead + AsyncWrite + Unpin> IoStream<T> {
    /// The caller's stream, with its wakers.
    #[inline]
    pub fn compat(&mut self) -> &mut Compat<T> {
        match self {
            IoStream::Plain(c) => c,
            #[cfg(feature = "tls")]
            IoStream::Tls(s) => s.get_mut(),
        }
    }

    /// The caller's stream.
    pub fn get_ref(&self) -> &T {
        match self {
            IoStream::Plain(c) => c.get_ref(),
            #[cfg(feature = "tls")]
            IoStream::Tls(s) => s.get_ref().get_ref(),
        }
    }

    /// What the TLS handshake agreed on, for a TLS connection.
    #[cfg(feature = "tls")]
    pub fn tls(&self) -> Option<&crate::tls::TlsCodec<Vec<u8>>> {
        match self {
            IoStream::Plain(_) => None,
            IoStream::Tls(s) => Some(s.codec()),
        }
    }
}

impl<T: AsyncRead + AsyncWrite + Unpin> Read for IoStream<T> {
    #[inline]
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            IoStream::Plain(c) => c.read(buf),
            #[cfg(feature = "tls")]
            IoStream::Tls(s) => s.read(buf),
        }
    }
}

impl<T: AsyncRead + AsyncWrite + Unpin> Write for IoStream<T> {
    #[inline]
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            IoStream::Plain(c) => c.write(buf),
            #[cfg(feature = "tls")]
            IoStream::Tls(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            IoStream::Plain(c) => c.flush(),
            #[cfg(feature = "tls")]
            IoStream::Tls(s) => s.flush(),
        }
    }
}

impl<T: AsyncRead + AsyncWrite + Unpin> mio::event::Source for IoStream<T> {
    fn register(&mut self, r: &mio::Registry, t: mio::Token, i: mio::Interest) -> io::Result<()> {
        self.compat().register(r, t, i)
    }

    fn reregister(&mut self, r: &mio::Registry, t: mio::Token, i: mio::Interest) -> io::Result<()> {
        self.compat().reregister(r, t, i)
    }

    fn deregister(&mut self, r: &mio::Registry) -> io::Result<()> {
        self.compat().deregister(r)
    }
}

impl<T: AsyncRead + AsyncWrite + Unpin> Stream for IoStream<T> {
    fn shutdown_write(&mut self) -> io::Result<()> {
        self.compat().close()
    }

    fn close_notify(&mut self) -> io::Result<bool> {
        match self {
            IoStream::Plain(_) => Ok(true),
            #[cfg(feature = "tls")]
            IoStream::Tls(s) => s.close_notify(),
        }
    }

    #[inline]
    fn flush_buffered(&mut self) -> io::Result<bool> {
        match self {
            IoStream::Plain(c) => c.flush_written(),
            #[cfg(feature = "tls")]
            IoStream::Tls(s) => Ok(s.flush_pending()? && s.get_mut().flush_written()?),
        }
    }

    #[inline]
    fn has_buffered(&self) -> bool {
        match self {
            IoStream::Plain(c) => c.unflushed,
            #[cfg(feature = "tls")]
            IoStream::Tls(s) => s.has_pending() || s.get_ref().unflushed,
        }
    }
}

/// A deadline timer of the caller's runtime, for read, write, handshake and close
/// timeouts and the connection's keepalive. Implemented for async-io's
/// [`Timer`](async_io::Timer) (the default: works on any executor, smol's included);
/// a runtime with timers of its own wraps its sleep future in a type of yours.
///
/// Every `Pending` must leave a wake-up armed: a connection waiting on its timer has
/// nothing else to wake it. A sleep future that can be woken before its deadline and
/// then answer `Pending` without arming a wake-up again loses it: nexus-async-rt 0.7's
/// `Sleep` does (its timer wheel fires an entry as soon as the clock reaches the
/// deadline's 1 ms tick, up to a tick early, and the `Sleep` polled then schedules
/// nothing). Its wheel cannot cancel an entry either: a dropped `Sleep`'s stays until
/// it fires, walked by every turn of the runtime (a 10 s handshake timeout's cost about
/// 350 instructions per round trip for those 10 s). Wrapped as below, an entry reaches
/// at most a short horizon ahead, one tick past the point it stands for, and the
/// deadline is read from the clock:
///
/// ```
/// use std::task::{Context, Poll};
/// use std::time::{Duration, Instant};
///
/// /// nexus-async-rt's timer wheel.
/// struct NexusTimer {
///     /// For `rearm` plus a tick (1 ms): the wheel fires it after `rearm`.
///     sleep: nexus_async_rt::Sleep,
///     /// The deadline, or the horizon before it: a dropped timer's entry leaves the
///     /// wheel within the horizon.
///     rearm: Instant,
///     deadline: Instant,
/// }
///
/// const TICK: Duration = Duration::from_millis(1);
/// const HORIZON: Duration = Duration::from_millis(20);
///
/// fn arm(deadline: Instant, now: Instant) -> (nexus_async_rt::Sleep, Instant) {
///     let rearm = deadline.min(now + HORIZON);
///     (nexus_async_rt::sleep_until(rearm + TICK), rearm)
/// }
///
/// impl tickwire::futures_io::Timer for NexusTimer {
///     fn at(deadline: Instant) -> Self {
///         let (sleep, rearm) = arm(deadline, Instant::now());
///         NexusTimer { sleep, rearm, deadline }
///     }
///     fn poll_expired(&mut self, cx: &mut Context<'_>) -> Poll<()> {
///         let now = Instant::now();
///         if now >= self.deadline {
///             return Poll::Ready(());
///         }
///         if now >= self.rearm {
///             (self.sleep, self.rearm) = arm(self.deadline, now);
///         }
///         std::pin::Pin::new(&mut self.sleep).poll(cx)
///     }
/// }
/// # use std::future::Future;
/// ```
pub trait Timer: Unpin + Sized {
    /// A timer that expires at `deadline`. Called (and [`reset`](Self::reset)) only
    /// from within a poll of the connection's futures, so inside the runtime.
    fn at(deadline: Instant) -> Self;

    /// Expire at `deadline` instead (default: a new timer).
    fn reset(&mut self, deadline: Instant) {
        *self = Self::at(deadline);
    }

    /// `Ready` once the deadline passed; `Pending` registers `cx`'s waker for it.
    fn poll_expired(&mut self, cx: &mut Context<'_>) -> Poll<()>;
}

impl Timer for async_io::Timer {
    fn at(deadline: Instant) -> Self {
        async_io::Timer::at(deadline)
    }

    fn reset(&mut self, deadline: Instant) {
        self.set_at(deadline);
    }

    fn poll_expired(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        std::future::Future::poll(Pin::new(self), cx).map(|_| ())
    }
}

/// One connection's (or half's) timer, armed for the deadline of the wait under way.
/// Nothing is allocated or registered until a wait has a deadline. A later deadline
/// keeps the timer armed for the earlier one (a read timeout moves forward with every
/// `recv`): when that fires, it is armed again for the deadline then waited for, so
/// steady traffic under a read timeout touches the runtime's timers about once per
/// timeout, not once per message.
#[derive(Debug)]
pub(crate) struct Alarm<Tm> {
    timer: Option<Tm>,
    /// The deadline the timer is armed for (`None`: it expired or was never armed).
    armed: Option<Instant>,
}

impl<Tm> Default for Alarm<Tm> {
    fn default() -> Self {
        Alarm {
            timer: None,
            armed: None,
        }
    }
}

impl<Tm: Timer> Alarm<Tm> {
    /// [`poll`](Self::poll) for a wait bounded by `deadline`; a wait without one is
    /// `Pending` (what it waits for holds the waker) and drops a timer still armed for
    /// an earlier wait (a handshake's or a connect's deadline): a registered timer
    /// costs the runtime work on every turn (async-io splits its timer map on each
    /// reactor turn, nexus-async-rt walks its wheel), for a wake-up nobody needs.
    #[inline]
    pub fn poll_until(&mut self, deadline: Option<Instant>, cx: &mut Context<'_>) -> Poll<()> {
        match deadline {
            Some(at) => self.poll(at, cx),
            None => {
                self.timer = None;
                self.armed = None;
                Poll::Pending
            }
        }
    }

    /// `Ready` once `deadline` passed (read from the clock: the timer may be armed for
    /// an earlier deadline, or wake early); `Pending` with the waker registered.
    fn poll(&mut self, deadline: Instant, cx: &mut Context<'_>) -> Poll<()> {
        loop {
            let t = match (&mut self.timer, self.armed) {
                (Some(t), Some(at)) if at <= deadline => t,
                (Some(t), _) => {
                    t.reset(deadline);
                    self.armed = Some(deadline);
                    t
                }
                (None, _) => {
                    self.armed = Some(deadline);
                    self.timer.insert(Tm::at(deadline))
                }
            };
            if t.poll_expired(cx).is_pending() {
                return Poll::Pending;
            }
            self.armed = None;
            if Instant::now() >= deadline {
                return Poll::Ready(());
            }
        }
    }
}

/// A deadline that starts when it is first needed, so the fast path never reads the
/// clock.
pub(crate) use crate::ws::wait::Deadline;

/// The earlier of two optional deadlines.
pub(crate) fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, None) => a,
        (None, b) => b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    /// Timers alive (registered with their runtime, for a real one).
    static LIVE: AtomicUsize = AtomicUsize::new(0);

    /// A timer that never expires and counts itself.
    struct Counted;

    impl Timer for Counted {
        fn at(_: Instant) -> Self {
            LIVE.fetch_add(1, Ordering::SeqCst);
            Counted
        }

        fn reset(&mut self, _: Instant) {}

        fn poll_expired(&mut self, _: &mut Context<'_>) -> Poll<()> {
            Poll::Pending
        }
    }

    impl Drop for Counted {
        fn drop(&mut self) {
            LIVE.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// A wait with no deadline drops the timer still armed for an earlier wait (the
    /// handshake's, a connect's): a registered timer costs its runtime work on every
    /// turn (async-io splits its timer map, about 500 instructions per round trip on
    /// smol). Later deadlines keep the one armed; a new deadline arms a new one.
    #[test]
    fn a_wait_without_a_deadline_drops_the_timer_of_an_earlier_wait() {
        let mut alarm = Alarm::<Counted>::default();
        let mut cx = Context::from_waker(Waker::noop());
        let at = Instant::now() + Duration::from_secs(10);
        assert!(alarm.poll_until(Some(at), &mut cx).is_pending());
        assert_eq!(LIVE.load(Ordering::SeqCst), 1);
        assert!(
            alarm
                .poll_until(Some(at + Duration::from_secs(1)), &mut cx)
                .is_pending()
        );
        assert_eq!(LIVE.load(Ordering::SeqCst), 1);
        assert!(alarm.poll_until(None, &mut cx).is_pending());
        assert_eq!(
            LIVE.load(Ordering::SeqCst),
            0,
            "the stale timer is still armed"
        );
        assert!(alarm.poll_until(None, &mut cx).is_pending());
        assert!(alarm.poll_until(Some(at), &mut cx).is_pending());
        assert_eq!(LIVE.load(Ordering::SeqCst), 1);
        drop(alarm);
        assert_eq!(LIVE.load(Ordering::SeqCst), 0);
    }
}
