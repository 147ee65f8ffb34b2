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
    /// the waker). `Ready` once it passed.
    #[inline]
    fn poll_deadline(&mut self, deadline: Option<Instant>, cx: &mut Context<'_>) -> Poll<()> {
        match deadline {
            Some(at) => self.alarm.poll(at, cx),
            None => Poll::Pending,
        }
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

    /// `recv` up to the message: `Ok(true)` when one is ready in the reader (the
    /// peer's close already answered, within the close timeout), `Ok(false)` once the
    /// close handshake is complete.
    pub(crate) async fn recv_ready(&mut self) -> Result<bool, Error> {
        let mut read = Deadline::After(self.conn.io.read_timeout);
        let got = poll_fn(|cx| self.poll_recv(&mut read, cx)).await?;
        if self.conn.is_closed() {
            // The peer's close (or the end of ours): its echo, TLS close_notify and
            // the FIN go out within the close timeout before it is returned.
            self.finish_close().await;
        }
        Ok(got)
    }

    /// Receive up to a message (`true`) or the end of the close handshake (`false`),
    /// running the codec's timers (keepalive, close timeout) and the read timeout.
    fn poll_recv(
        &mut self,
        read: &mut Deadline,
        cx: &mut Context<'_>,
    ) -> Poll<Result<bool, Error>> {
        self.enter(cx);
        loop {
            if self.conn.recv_ready(false)? {
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

    /// After the close handshake: write what is still buffered (the echo of the
    /// peer's close, TLS close_notify, the FIN), for at most the close timeout. Best
    /// effort: the peer may be gone.
    async fn finish_close(&mut self) {
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

    /// `f` with the message [`recv_ready`](Self::recv_ready) made ready and the
    /// connection's sending half (its sends go out as far as the stream takes them).
    pub(crate) fn with_message<R>(
        &mut self,
        f: impl FnOnce(Message<'_>, &mut Sender<'_>) -> Result<R, Error>,
    ) -> Result<Option<R>, Error> {
        self.conn
            .with_message(|msg, mut out| f(msg, &mut Sender::of(&mut out)))
    }

    /// Run the evented `op` until it is not refused for backpressure (write timeout),
    /// then write what it queued.
    pub(crate) async fn send_with(
        &mut self,
        mut op: impl FnMut(&mut Conn<IoStream<T>, M>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let mut deadline = Deadline::After(self.conn.io.write_timeout);
        poll_fn(|cx| {
            self.enter(cx);
            match op(&mut self.conn) {
                // No room: the write that would block left the waker with the stream.
                Err(Error::Backpressure) => {
                    ready!(self.poll_deadline(deadline.get(), cx));
                    Poll::Ready(Err(Error::WriteTimeout))
                }
                r => Poll::Ready(r),
            }
        })
        .await?;
        // The evented op already wrote what the stream took.
        if self.conn.wants_write() {
            self.flush_within(deadline).await
        } else {
            Ok(())
        }
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
