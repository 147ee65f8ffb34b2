//! The async loop of a futures-io WebSocket connection, shared by [`Client`] and
//! [`ServerConnection`]: the shared driver [`Conn`] (the blocking, evented and tokio
//! connections' own, doing every read, write and codec step) polled over the caller's
//! stream, with the waker of the task that polls it, and a [`Timer`] for deadlines.
//!
//! Every step is an evented call: try it; when it would block, the stream holds the
//! task's waker and the future returns `Pending` (with the timer armed when a deadline
//! bounds the wait). All state is in `conn`, never in a future, so dropping one loses
//! nothing.
//!
//! [`Client`]: super::Client
//! [`ServerConnection`]: super::ServerConnection

use std::future::poll_fn;
use std::task::{Context, Poll, ready};
use std::time::Instant;

use futures_io::{AsyncRead, AsyncWrite};
use tickwire_codec::ws::{ConnectionError, Masking};

use crate::futures_io::io::{Alarm, Deadline, IoStream, Timer, earliest};
use crate::ws::conn::{Conn, Ws};
use crate::ws::{Error, Message, Sender};

/// One connection: the shared driver over the caller's stream, and its timer.
///
/// `pub` only to be named by the [`Split`](super::split::Split) impls (the module is
/// private: not reachable from outside the crate).
#[derive(Debug)]
pub struct Driver<T, M, Tm> {
    pub(crate) conn: Conn<IoStream<T>, M>,
    pub(crate) alarm: Alarm<Tm>,
}

impl<T: AsyncRead + AsyncWrite + Unpin, M: Masking, Tm: Timer> Driver<T, M, Tm> {
    pub(crate) fn new(conn: Conn<IoStream<T>, M>) -> Self {
        Driver {
            conn,
            alarm: Alarm::default(),
        }
    }

    /// Reads and writes from now on wake the task `cx` belongs to.
    #[inline]
    fn enter(&mut self, cx: &Context<'_>) {
        self.conn.io.stream.compat().set_waker(cx.waker());
    }

    /// Wait until `deadline` when there is one; without, `Pending` (the stream holds
    /// the waker; a timer armed for an earlier wait is dropped). `Ready` once it
    /// passed.
    #[inline]
    fn poll_deadline(&mut self, deadline: Option<Instant>, cx: &mut Context<'_>) -> Poll<()> {
        self.alarm.poll_until(deadline, cx)
    }

    /// Run the opening handshake with `advance` (the codec's client or server step),
    /// within the handshake timeout (the codec's timer), and write its last bytes.
    pub(crate) async fn handshake(
        &mut self,
        mut advance: impl FnMut(&mut Ws<M>) -> Result<bool, ConnectionError>,
    ) -> Result<(), Error> {
        poll_fn(|cx| {
            self.enter(cx);
            loop {
                if self.conn.handshake_step(&mut advance)? {
                    return Poll::Ready(Ok::<(), Error>(()));
                }
                ready!(self.poll_deadline(self.conn.timeout_at(), cx));
                self.conn.handle_timeout(Instant::now())?;
            }
        })
        .await?;
        poll_fn(|cx| {
            self.enter(cx);
            loop {
                if self.conn.flush()? {
                    return Poll::Ready(Ok(()));
                }
                ready!(self.poll_deadline(self.conn.timeout_at(), cx));
                self.conn.handle_timeout(Instant::now())?;
            }
        })
        .await
    }

    /// The read deadline of one `recv` (it starts when the receive first waits).
    #[inline]
    pub(crate) fn read_deadline(&self) -> Deadline {
        Deadline::After(self.conn.io.read_timeout)
    }

    /// Receive up to a message (`true`) or the end of the close handshake (`false`),
    /// running the codec's timers (keepalive, close timeout) and the read timeout.
    /// After it, [`finish_close`](Self::finish_close) when the connection is closed.
    pub(crate) fn poll_recv(
        &mut self,
        read: &mut Deadline,
        cx: &mut Context<'_>,
    ) -> Poll<Result<bool, Error>> {
        self.enter(cx);
        loop {
            // Nothing to do but read (the common case, also the poll that finds the
            // socket empty and leaves the waker with it): the read alone.
            if self.conn.recv_polled()? {
                return Poll::Ready(Ok(true));
            }
            if self.conn.is_closed() {
                return Poll::Ready(Ok(false));
            }
            // Nothing now: the read that would block left the waker with the stream.
            let read_at = read.get();
            ready!(self.poll_deadline(earliest(read_at, self.conn.timeout_at()), cx));
            let now = Instant::now();
            self.conn.handle_timeout(now)?;
            if read_at.is_some_and(|at| now >= at) {
                return Poll::Ready(Err(Error::ReadTimeout));
            }
        }
    }

    /// After the close handshake (the peer's close, or the end of ours): write what is
    /// still buffered (the echo of the peer's close, TLS close_notify, the FIN), for at
    /// most the close timeout, before the close is returned. Best effort: the peer may
    /// be gone.
    pub(crate) async fn finish_close(&mut self) {
        if !self.conn.wants_write() {
            return;
        }
        let deadline = Instant::now().checked_add(self.conn.io.close_timeout);
        poll_fn(|cx| {
            self.enter(cx);
            if !matches!(self.conn.flush(), Ok(false)) {
                return Poll::Ready(());
            }
            self.poll_deadline(deadline, cx)
        })
        .await;
    }

    /// `f` with the message [`poll_recv`](Self::poll_recv) made ready and the
    /// connection's sending half (its sends go out as far as the stream takes them).
    pub(crate) fn with_message<R>(
        &mut self,
        f: impl FnOnce(Message<'_>, &mut Sender<'_>) -> Result<R, Error>,
    ) -> Result<Option<R>, Error> {
        self.conn
            .with_message(|msg, mut out| f(msg, &mut Sender::of(&mut out)))
    }

    /// The write deadline of one send (it starts when the send first waits).
    #[inline]
    pub(crate) fn write_deadline(&self) -> Deadline {
        Deadline::After(self.conn.io.write_timeout)
    }

    /// One poll of a send: run the evented `op` until it is not refused for
    /// backpressure (`deadline`: the write timeout), then write what it queued (the
    /// same deadline). `queued` says `op` ran: a send whose future is dropped after
    /// that leaves the rest to the next call; before, nothing was queued.
    #[inline]
    pub(crate) fn poll_send(
        &mut self,
        op: &mut impl FnMut(&mut Conn<IoStream<T>, M>) -> Result<(), Error>,
        queued: &mut bool,
        deadline: &mut Deadline,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), Error>> {
        self.enter(cx);
        if !*queued {
            match op(&mut self.conn) {
                // No room: the write that would block left the waker with the stream.
                Err(Error::Backpressure) => {
                    ready!(self.poll_deadline(deadline.get(), cx));
                    return Poll::Ready(Err(Error::WriteTimeout));
                }
                Err(e) => return Poll::Ready(Err(e)),
                Ok(()) => *queued = true,
            }
            // The evented op already wrote what the stream took.
            if !self.conn.wants_write() {
                return Poll::Ready(Ok(()));
            }
        }
        if self.conn.flush()? {
            return Poll::Ready(Ok(()));
        }
        ready!(self.poll_deadline(deadline.get(), cx));
        Poll::Ready(Err(Error::WriteTimeout))
    }

    /// Write everything buffered (write timeout).
    pub(crate) async fn flush(&mut self) -> Result<(), Error> {
        self.flush_within(Deadline::After(self.conn.io.write_timeout))
            .await
    }

    async fn flush_within(&mut self, mut deadline: Deadline) -> Result<(), Error> {
        poll_fn(|cx| {
            self.enter(cx);
            if self.conn.flush()? {
                return Poll::Ready(Ok(()));
            }
            ready!(self.poll_deadline(deadline.get(), cx));
            Poll::Ready(Err(Error::WriteTimeout))
        })
        .await
    }
}
