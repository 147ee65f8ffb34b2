//! Split halves: a [`ReadHalf`] that can `recv` in one task and a [`WriteHalf`] that
//! can send in another, over one futures-io connection.
//!
//! As the tokio halves: the read half owns the reader (a received [`Message`] borrows
//! it with no lock held); everything else (the stream, the writer, the write buffer,
//! the close state) is shared behind a mutex held only for non-blocking steps, never
//! across a `Pending`. Each step of the read half lends the reader back to the
//! connection, so the same evented receive runs: pongs are queued into the shared write
//! buffer and written by whichever half runs next. Each half has its own timer.
//!
//! Wake-ups: the stream is always polled with one waker that wakes both halves' tasks
//! (each half leaves its task's waker in its own slot before it polls), so a stream
//! that keeps a single waker per I/O object (the last task that polled it, for a read
//! or a write, as nexus-async-rt's `TcpStream` and many hand-written adapters do)
//! never leaves a half waiting for data or room the stream reported to the other.
//! A half woken for the other's event polls again and waits again, losing nothing.
//!
//! ```
//! # smol::block_on(async {
//! # let (client, mut server) = tickwire::futures_io::ws::doc_pair().await?;
//! use tickwire::ws::Message;
//!
//! let (mut rx, mut tx) = client.split(); // one task reads, another writes
//! let writer = smol::spawn(async move {
//!     tx.send_text("order").await?;
//!     Ok::<_, tickwire::ws::Error>(tx)
//! });
//! assert_eq!(server.recv().await?, Some(Message::Text("order")));
//! server.send_text("fill").await?;
//! assert_eq!(rx.recv().await?, Some(Message::Text("fill")));
//! let _tx = writer.await?;
//! # Ok::<(), tickwire::ws::Error>(())
//! # }).unwrap();
//! ```

use std::future::poll_fn;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Poll, Wake, Waker, ready};
use std::time::{Duration, Instant};

use futures_io::{AsyncRead, AsyncWrite};
use tickwire_codec::ws::{FrameReader, Masking, Role};

use super::driver::Driver;
use super::{Client, ServerConnection};
use crate::futures_io::Timer;
use crate::futures_io::io::{Alarm, Deadline, earliest};
use crate::ws::{CloseCode, Error, Message};

/// What both halves share.
#[derive(Debug)]
struct Shared<D> {
    conn: Mutex<D>,
    /// The halves' tasks: the stream is polled with a waker of this (set on it once,
    /// at split time), which wakes both.
    wakers: Arc<Wakers>,
    read_timeout: Option<Duration>,
    write_timeout: Option<Duration>,
    close_timeout: Duration,
}

impl<D> Shared<D> {
    /// The connection (a panic elsewhere cannot leave it half-updated: every step
    /// under the lock is a complete evented call).
    fn lock(&self) -> MutexGuard<'_, D> {
        self.conn.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The connection, for a step of the read half running in `waker`'s task.
    fn lock_to_read(&self, waker: &Waker) -> MutexGuard<'_, D> {
        Wakers::register(&self.wakers.read, waker);
        self.lock()
    }

    /// The connection, for a step of the write half running in `waker`'s task.
    fn lock_to_write(&self, waker: &Waker) -> MutexGuard<'_, D> {
        Wakers::register(&self.wakers.write, waker);
        self.lock()
    }
}

/// The tasks of the two halves, as they last waited on the stream: the stream's waker
/// wakes both (whichever half's poll the stream remembers, and for whichever event).
///
/// Apart from the connection's lock: a stream may wake inline, inside a poll made
/// under that lock. A slot is emptied when woken (a half that stopped waiting is
/// woken at most once more), and filled again by the half's next step.
#[derive(Debug, Default)]
struct Wakers {
    read: Mutex<Option<Waker>>,
    write: Mutex<Option<Waker>>,
}

impl Wakers {
    /// Leave `waker` in `slot` (no clone when the one there wakes the same task).
    fn register(slot: &Mutex<Option<Waker>>, waker: &Waker) {
        let mut slot = slot.lock().unwrap_or_else(|e| e.into_inner());
        match &mut *slot {
            Some(w) => w.clone_from(waker),
            None => *slot = Some(waker.clone()),
        }
    }

    fn take(slot: &Mutex<Option<Waker>>) -> Option<Waker> {
        slot.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

impl Wake for Wakers {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        // Taken out first: no slot's lock is held while a task is woken.
        let (read, write) = (Self::take(&self.read), Self::take(&self.write));
        if let Some(w) = read {
            w.wake();
        }
        if let Some(w) = write {
            w.wake();
        }
    }
}

/// The receiving half of a split connection (`C`: [`Client`] or
/// [`ServerConnection`]).
pub struct ReadHalf<C: Split> {
    reader: FrameReader<Vec<u8>>,
    shared: Arc<Shared<C::Driver>>,
    alarm: Alarm<C::Timer>,
    /// The last compressed message, inflated (feature `deflate`): the connection inflates
    /// it into its own buffer, behind the lock, so it is copied out here (is text, bytes).
    #[cfg(feature = "deflate")]
    inflated: (bool, Vec<u8>),
}

/// The sending half of a split connection.
pub struct WriteHalf<C: Split> {
    shared: Arc<Shared<C::Driver>>,
    alarm: Alarm<C::Timer>,
}

impl<C: Split> std::fmt::Debug for ReadHalf<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadHalf").finish_non_exhaustive()
    }
}

impl<C: Split> std::fmt::Debug for WriteHalf<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WriteHalf").finish_non_exhaustive()
    }
}

mod sealed {
    pub trait Sealed {}
}

/// A connection that splits: [`Client`] and [`ServerConnection`] (sealed).
pub trait Split: sealed::Sealed {
    /// The connection's driver.
    #[doc(hidden)]
    type Driver: Steps;
    /// The connection's timer.
    #[doc(hidden)]
    type Timer: Timer;
}

/// What the halves do with the shared driver.
#[doc(hidden)]
pub trait Steps {
    /// The driver's connection, for the halves' steps.
    #[doc(hidden)]
    fn reader(&mut self) -> &mut FrameReader<Vec<u8>>;
}

impl<T, M: Masking, Tm> Steps for Driver<T, M, Tm> {
    fn reader(&mut self) -> &mut FrameReader<Vec<u8>> {
        self.conn.ws.reader_mut()
    }
}

impl<T, Tm> sealed::Sealed for Client<T, Tm> {}
impl<T, Tm: Timer> Split for Client<T, Tm> {
    type Driver = Driver<T, tickwire_codec::rand::MaskRng, Tm>;
    type Timer = Tm;
}
impl<T, Tm> sealed::Sealed for ServerConnection<T, Tm> {}
impl<T, Tm: Timer> Split for ServerConnection<T, Tm> {
    type Driver = Driver<T, tickwire_codec::rand::NoMask, Tm>;
    type Timer = Tm;
}

fn split<C, T, M, Tm>(mut d: Driver<T, M, Tm>) -> (ReadHalf<C>, WriteHalf<C>)
where
    C: Split<Driver = Driver<T, M, Tm>, Timer = Tm>,
    T: AsyncRead + AsyncWrite + Unpin,
    M: Masking,
    Tm: Timer,
{
    // Take the reader out, leaving an empty one (never used: every use of the
    // connection's reader happens while the read half has lent it back).
    let reader = std::mem::replace(d.reader(), FrameReader::new(Role::Client, Vec::new()));
    // From now on the stream is polled with the waker of both halves only.
    let wakers = Arc::new(Wakers::default());
    d.conn
        .io
        .stream
        .compat()
        .set_waker(&Waker::from(wakers.clone()));
    let io = &d.conn.io;
    let shared = Arc::new(Shared {
        wakers,
        read_timeout: io.read_timeout,
        write_timeout: io.write_timeout,
        close_timeout: io.close_timeout,
        conn: Mutex::new(d),
    });
    (
        ReadHalf {
            reader,
            shared: shared.clone(),
            alarm: Alarm::default(),
            #[cfg(feature = "deflate")]
            inflated: (false, Vec::new()),
        },
        WriteHalf {
            shared,
            alarm: Alarm::default(),
        },
    )
}

impl<T, M, Tm, C> ReadHalf<C>
where
    T: AsyncRead + AsyncWrite + Unpin,
    M: Masking,
    Tm: Timer,
    C: Split<Driver = Driver<T, M, Tm>, Timer = Tm>,
{
    /// Wait for the next message: the contract of the unsplit `recv`
    /// (cancellation-safe; `Ok(None)` after the close handshake).
    ///
    /// ```
    /// # smol::block_on(async {
    /// # let (client, mut server) = tickwire::futures_io::ws::doc_pair().await?;
    /// use tickwire::ws::Message;
    ///
    /// let (mut rx, mut tx) = client.split();
    /// tx.send_ping(b"p").await?;
    /// assert_eq!(server.recv().await?, Some(Message::Ping(b"p"))); // answered already
    /// assert_eq!(rx.recv().await?, Some(Message::Pong(b"p")));
    /// # Ok::<(), tickwire::ws::Error>(())
    /// # }).unwrap();
    /// ```
    pub async fn recv(&mut self) -> Result<Option<Message<'_>>, Error> {
        let mut read = Deadline::After(self.shared.read_timeout);
        let (got, closed) = poll_fn(|cx| {
            loop {
                let (got, closed, timer_at) = {
                    let mut d = self.shared.lock_to_read(cx.waker());
                    std::mem::swap(d.reader(), &mut self.reader);
                    let got = d.conn.recv_polled();
                    #[cfg(feature = "deflate")]
                    if matches!(got, Ok(true)) && d.reader().compressed().is_some() {
                        copy_inflated(d.conn.ws.message(), &mut self.inflated);
                    }
                    std::mem::swap(d.reader(), &mut self.reader);
                    (got?, d.conn.is_closed(), d.conn.timeout_at())
                };
                if got || closed {
                    return Poll::Ready(Ok::<_, Error>((got, closed)));
                }
                let read_at = read.get();
                ready!(self.alarm.poll_until(earliest(read_at, timer_at), cx));
                let now = Instant::now();
                self.shared.lock().conn.handle_timeout(now)?;
                if read_at.is_some_and(|at| now >= at) {
                    return Poll::Ready(Err(Error::ReadTimeout));
                }
            }
        })
        .await?;
        if closed {
            // As unsplit: the close echo, TLS close_notify and the FIN go out within
            // the close timeout (best effort: the peer may be gone).
            let deadline = Instant::now().checked_add(self.shared.close_timeout);
            poll_fn(|cx| {
                let mut d = self.shared.lock_to_read(cx.waker());
                if !matches!(d.conn.flush(), Ok(false)) {
                    return Poll::Ready(());
                }
                drop(d);
                self.alarm.poll_until(deadline, cx)
            })
            .await;
        }
        if !got {
            return Ok(None);
        }
        #[cfg(feature = "deflate")]
        if self.reader.compressed().is_some() {
            let (text, bytes) = &self.inflated;
            return Ok(Some(if *text {
                // Checked as UTF-8 by the connection when it inflated it.
                Message::Text(std::str::from_utf8(bytes).unwrap_or_default())
            } else {
                Message::Binary(bytes)
            }));
        }
        Ok(self.reader.message())
    }

    /// Whether the connection is finished.
    ///
    /// ```
    /// # smol::block_on(async {
    /// # let (client, _server) = tickwire::futures_io::ws::doc_pair().await?;
    /// let (rx, _tx) = client.split();
    /// assert!(!rx.is_closed());
    /// # Ok::<(), tickwire::ws::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn is_closed(&self) -> bool {
        self.shared.lock().conn.is_closed()
    }
}

/// A compressed message's inflated form, copied out of the connection's buffer.
#[cfg(feature = "deflate")]
fn copy_inflated(msg: Option<Message<'_>>, (text, bytes): &mut (bool, Vec<u8>)) {
    bytes.clear();
    match msg {
        Some(Message::Text(t)) => {
            *text = true;
            bytes.extend_from_slice(t.as_bytes());
        }
        Some(Message::Binary(b)) => {
            *text = false;
            bytes.extend_from_slice(b);
        }
        _ => {}
    }
}

impl<T, M, Tm, C> WriteHalf<C>
where
    T: AsyncRead + AsyncWrite + Unpin,
    M: Masking,
    Tm: Timer,
    C: Split<Driver = Driver<T, M, Tm>, Timer = Tm>,
{
    async fn send_with(
        &mut self,
        mut op: impl FnMut(
            &mut crate::ws::conn::Conn<crate::futures_io::io::IoStream<T>, M>,
        ) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let mut deadline = Deadline::After(self.shared.write_timeout);
        let left = poll_fn(|cx| {
            let r = {
                let mut d = self.shared.lock_to_write(cx.waker());
                // Whether bytes are left, under the same lock (the evented op already
                // wrote what the stream took).
                op(&mut d.conn).map(|()| d.conn.wants_write())
            };
            match r {
                Err(Error::Backpressure) => {
                    ready!(self.alarm.poll_until(deadline.get(), cx));
                    Poll::Ready(Err(Error::WriteTimeout))
                }
                r => Poll::Ready(r),
            }
        })
        .await?;
        if left {
            self.flush_within(deadline).await
        } else {
            Ok(())
        }
    }

    async fn flush_within(&mut self, mut deadline: Deadline) -> Result<(), Error> {
        poll_fn(|cx| {
            {
                let mut d = self.shared.lock_to_write(cx.waker());
                if d.conn.flush()? {
                    return Poll::Ready(Ok(()));
                }
            }
            ready!(self.alarm.poll_until(deadline.get(), cx));
            Poll::Ready(Err(Error::WriteTimeout))
        })
        .await
    }

    /// Send a text message (see the unsplit `send_text`).
    ///
    /// ```
    /// # smol::block_on(async {
    /// # let (client, mut server) = tickwire::futures_io::ws::doc_pair().await?;
    /// use tickwire::ws::Message;
    ///
    /// let (_rx, mut tx) = client.split();
    /// tx.send_text("order").await?;
    /// assert_eq!(server.recv().await?, Some(Message::Text("order")));
    /// # Ok::<(), tickwire::ws::Error>(())
    /// # }).unwrap();
    /// ```
    pub async fn send_text(&mut self, text: &str) -> Result<(), Error> {
        self.send_with(|c| c.send_text(text)).await
    }

    /// Send a binary message.
    ///
    /// ```
    /// # smol::block_on(async {
    /// # let (client, mut server) = tickwire::futures_io::ws::doc_pair().await?;
    /// use tickwire::ws::Message;
    ///
    /// let (_rx, mut tx) = client.split();
    /// tx.send_binary(&[7]).await?;
    /// assert_eq!(server.recv().await?, Some(Message::Binary(&[7])));
    /// # Ok::<(), tickwire::ws::Error>(())
    /// # }).unwrap();
    /// ```
    pub async fn send_binary(&mut self, data: &[u8]) -> Result<(), Error> {
        self.send_with(|c| c.send_binary(data)).await
    }

    /// Send a ping (payload at most 125 bytes).
    ///
    /// ```
    /// # smol::block_on(async {
    /// # let (client, mut server) = tickwire::futures_io::ws::doc_pair().await?;
    /// use tickwire::ws::Message;
    ///
    /// let (_rx, mut tx) = client.split();
    /// tx.send_ping(b"p").await?;
    /// assert_eq!(server.recv().await?, Some(Message::Ping(b"p")));
    /// # Ok::<(), tickwire::ws::Error>(())
    /// # }).unwrap();
    /// ```
    pub async fn send_ping(&mut self, payload: &[u8]) -> Result<(), Error> {
        self.send_with(|c| c.send_ping(payload)).await
    }

    /// Send an unsolicited pong (payload at most 125 bytes).
    ///
    /// ```
    /// # smol::block_on(async {
    /// # let (client, mut server) = tickwire::futures_io::ws::doc_pair().await?;
    /// use tickwire::ws::Message;
    ///
    /// let (_rx, mut tx) = client.split();
    /// tx.send_pong(b"q").await?;
    /// assert_eq!(server.recv().await?, Some(Message::Pong(b"q")));
    /// # Ok::<(), tickwire::ws::Error>(())
    /// # }).unwrap();
    /// ```
    pub async fn send_pong(&mut self, payload: &[u8]) -> Result<(), Error> {
        self.send_with(|c| c.send_pong(payload)).await
    }

    /// Start the close handshake; the read half returns the peer's close, then
    /// `Ok(None)` (or `Error::CloseTimeout`).
    ///
    /// ```
    /// # smol::block_on(async {
    /// # let (client, mut server) = tickwire::futures_io::ws::doc_pair().await?;
    /// use tickwire::ws::{CloseCode, Message};
    ///
    /// let (mut rx, mut tx) = client.split();
    /// tx.close(CloseCode::NORMAL, "done").await?;
    /// assert!(matches!(server.recv().await?, Some(Message::Close(_)))); // echoed already
    /// assert!(matches!(rx.recv().await?, Some(Message::Close(_))));
    /// assert_eq!(rx.recv().await?, None);
    /// # Ok::<(), tickwire::ws::Error>(())
    /// # }).unwrap();
    /// ```
    pub async fn close(
        &mut self,
        code: impl Into<Option<CloseCode>>,
        reason: &str,
    ) -> Result<(), Error> {
        let code = code.into();
        self.send_with(|c| c.close(code, reason)).await
    }

    /// Write everything buffered, the read half's pongs included (write timeout).
    ///
    /// ```
    /// # smol::block_on(async {
    /// # let (client, _server) = tickwire::futures_io::ws::doc_pair().await?;
    /// let (_rx, mut tx) = client.split();
    /// tx.flush().await?;
    /// assert!(!tx.wants_write());
    /// # Ok::<(), tickwire::ws::Error>(())
    /// # }).unwrap();
    /// ```
    pub async fn flush(&mut self) -> Result<(), Error> {
        self.flush_within(Deadline::After(self.shared.write_timeout))
            .await
    }

    /// Whether bytes wait to be written.
    ///
    /// ```
    /// # smol::block_on(async {
    /// # let (client, _server) = tickwire::futures_io::ws::doc_pair().await?;
    /// let (_rx, tx) = client.split();
    /// assert!(!tx.wants_write());
    /// # Ok::<(), tickwire::ws::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn wants_write(&self) -> bool {
        self.shared.lock().conn.wants_write()
    }

    /// Whether the connection is finished.
    ///
    /// ```
    /// # smol::block_on(async {
    /// # let (client, _server) = tickwire::futures_io::ws::doc_pair().await?;
    /// let (_rx, tx) = client.split();
    /// assert!(!tx.is_closed());
    /// # Ok::<(), tickwire::ws::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn is_closed(&self) -> bool {
        self.shared.lock().conn.is_closed()
    }
}

impl<T: AsyncRead + AsyncWrite + Unpin, Tm: Timer> Client<T, Tm> {
    /// Split into a read half and a write half, to receive in one task and send in
    /// another (each half is `Send` when the stream and the timer are).
    ///
    /// ```
    /// # smol::block_on(async {
    /// # let (client, mut server) = tickwire::futures_io::ws::doc_pair().await?;
    /// use tickwire::ws::Message;
    ///
    /// let (mut rx, mut tx) = client.split();
    /// let writer = smol::spawn(async move { tx.send_text("order").await.map(|()| tx) });
    /// assert_eq!(server.recv().await?, Some(Message::Text("order")));
    /// server.send_text("fill").await?;
    /// assert_eq!(rx.recv().await?, Some(Message::Text("fill")));
    /// writer.await?;
    /// # Ok::<(), tickwire::ws::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn split(self) -> (ReadHalf<Self>, WriteHalf<Self>) {
        split(self.into_driver())
    }
}

impl<T: AsyncRead + AsyncWrite + Unpin, Tm: Timer> ServerConnection<T, Tm> {
    /// Finish the opening handshake if needed, then split like
    /// [`Client::split`].
    ///
    /// ```
    /// # smol::block_on(async {
    /// # let (mut client, server) = tickwire::futures_io::ws::doc_pair().await?;
    /// use tickwire::ws::Message;
    ///
    /// let (mut rx, mut tx) = server.split().await?;
    /// client.send_text("a").await?;
    /// assert_eq!(rx.recv().await?, Some(Message::Text("a")));
    /// tx.send_text("b").await?;
    /// assert_eq!(client.recv().await?, Some(Message::Text("b")));
    /// # Ok::<(), tickwire::ws::Error>(())
    /// # }).unwrap();
    /// ```
    pub async fn split(mut self) -> Result<(ReadHalf<Self>, WriteHalf<Self>), Error> {
        self.handshake().await?;
        Ok(split(self.into_driver()))
    }
}
