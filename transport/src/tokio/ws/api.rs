//! The async methods [`Client`](super::Client) and
//! [`ServerConnection`](super::ServerConnection) share, generated once over their
//! fields `ready` ([`Readiness`](super::readiness::Readiness)), `ws` (the evented
//! [`crate::ws`] connection doing all the work) and `timeouts` ([`Timeouts`]). Each
//! type provides `async fn established(&mut self)` (its opening handshake is done).
//!
//! Every method is the evented call in a loop: try it, and only when the socket would
//! block await readiness. All state stays in `ws`, so a dropped future loses nothing.

use std::time::{Duration, Instant};

/// The timeouts an async connection enforces itself (the close and handshake timeouts
/// are the evented connection's own deadlines).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timeouts {
    /// Longest a `recv` waits (`Error::ReadTimeout`).
    pub read: Option<Duration>,
    /// Longest a send or flush waits for the socket (`Error::WriteTimeout`).
    pub write: Option<Duration>,
    /// Longest the last flush after a completed close handshake waits.
    pub close: Duration,
}

/// A deadline that starts when it is first needed, so the fast path never reads the
/// clock.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Lazy {
    After(Option<Duration>),
    At(Option<Instant>),
}

impl Lazy {
    pub fn get(&mut self) -> Option<Instant> {
        if let Lazy::After(t) = *self {
            *self = Lazy::At(t.and_then(|t| Instant::now().checked_add(t)));
        }
        match *self {
            Lazy::At(at) => at,
            Lazy::After(_) => None,
        }
    }
}

/// Where a `recv` poll stopped.
pub(crate) enum RecvStep {
    /// A message is ready in the reader.
    Message,
    /// The close handshake is complete.
    Closed,
    /// The wait needs a deadline: wait under it, then poll again.
    Deadline,
}

/// The earlier of two optional deadlines.
pub(crate) fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, None) => a,
        (None, b) => b,
    }
}

/// One wait of a send (or flush) for a writable socket, bounded by the write deadline
/// `write` and by the codec's next timer `timer_at` (keepalive, dead peer, close): `Ok`
/// to try the write again; [`Error::WriteTimeout`](crate::ws::Error::WriteTimeout) once
/// the write deadline passed; when the timer is due, `handle_timeout(now)` runs it and
/// its error ends the wait (a peer that stopped reading: `Error::DeadPeer` within the
/// dead-peer timeout).
pub(crate) async fn wait_writable(
    ready: &super::readiness::Readiness,
    write: &mut Lazy,
    timer_at: Option<Instant>,
    handle_timeout: impl FnOnce(Instant) -> Result<(), crate::ws::Error>,
) -> Result<(), crate::ws::Error> {
    let write_at = write.get();
    let interest = ::tokio::io::Interest::WRITABLE;
    if !ready
        .wait_for(interest, earliest(write_at, timer_at))
        .await?
    {
        let now = Instant::now();
        if write_at.is_some_and(|at| now >= at) {
            return Err(crate::ws::Error::WriteTimeout);
        }
        handle_timeout(now)?;
    }
    Ok(())
}

/// The body of `recv_ready` (see [`async_api`]), an expression of type `bool` inside an
/// async fn returning `Result<_, Error>` (errors leave through `?`): `true` when a
/// message is ready in the reader, `false` where `recv` says `Ok(None)`. Expanded in
/// place by `recv` and `recv_with`, so each is one state machine, not one awaiting
/// another (the nesting cost tens of instructions per call).
macro_rules! recv_ready {
    ($this:ident) => {
        'ready: {
            use $crate::tokio::ws::api::RecvStep;
            if $this.handshaking() {
                $this.established().await?;
            }
            // The read deadline, started by the first wait that needs it.
            let mut read = None;
            let mut waiting = false;
            $this.ws.conn.io.spin_reset();
            loop {
                // Without a deadline everything happens in this one poll function (no
                // timer, no nested future); with one it says so and the wait below
                // runs under the deadline.
                let step = std::future::poll_fn(|cx| $this.poll_recv(&mut waiting, &mut read, cx));
                match step.await? {
                    // The peer's close: its echo, TLS close_notify and the FIN go out
                    // (within the close timeout) before it is returned.
                    RecvStep::Message if $this.ws.is_closed() => {
                        $this.finish_close().await;
                        break 'ready true;
                    }
                    RecvStep::Message => break 'ready true,
                    RecvStep::Closed => {
                        $this.finish_close().await;
                        break 'ready false;
                    }
                    RecvStep::Deadline => {}
                }
                let read_at = read
                    .get_or_insert($crate::tokio::ws::api::Lazy::After($this.timeouts.read))
                    .get();
                let deadline = $crate::tokio::ws::api::earliest(read_at, $this.ws.timeout_at());
                if !$this.ready.wait($this.ws.wants_write(), deadline).await? {
                    let now = std::time::Instant::now();
                    $this.ws.handle_timeout(now)?;
                    if read_at.is_some_and(|at| now >= at) {
                        return Err($crate::ws::Error::ReadTimeout);
                    }
                }
            }
        }
    };
}

pub(crate) use recv_ready;

macro_rules! async_api {
    ($ty:ty) => {
        impl $ty {
            /// Wait for the next message.
            ///
            /// - `Ok(Some(msg))` for every message, control frames included: a `Ping`
            ///   has already been answered (unless auto-pong is off), a `Close` from the
            ///   peer has already been answered and the socket shut for writing.
            /// - `Ok(None)`: the close handshake is complete; every later call says the
            ///   same.
            /// - `Err(_)`: the connection failed (a protocol error was answered with the
            ///   codec's close code; [`Error::CloseTimeout`] when our close was not
            ///   answered in time), except `Error::ReadTimeout`, after which
            ///   it is unchanged.
            ///
            /// The message borrows the read buffer: drop it before the next call.
            ///
            /// **Cancellation-safe**: received bytes go into the connection's read
            /// buffer before any await, so dropping this future (in `tokio::select!`)
            /// loses no message and no byte; the next `recv` continues. (One exception:
            /// dropped while the peer's close is being answered (its echo, TLS
            /// close_notify and the FIN written, within the close timeout), the next
            /// call returns `Ok(None)` instead of that `Close`.)
            ///
            /// ```
            /// # #[tokio::main(flavor = "current_thread")]
            /// # async fn main() -> Result<(), tickwire::ws::Error> {
            /// # let (mut client, mut server) = tickwire::tokio::ws::doc_pair().await?;
            /// use tickwire::ws::Message;
            ///
            /// client.send_text("tick").await?;
            /// match server.recv().await? {
            ///     Some(Message::Text(t)) => assert_eq!(t, "tick"), // borrows the read buffer
            ///     Some(_) => {}                                     // binary, ping, pong, close
            ///     None => {}                                        // the close handshake is done
            /// }
            /// # Ok(())
            /// # }
            /// ```
            pub async fn recv(
                &mut self,
            ) -> Result<Option<$crate::ws::Message<'_>>, $crate::ws::Error> {
                // The body of `recv_ready` expanded here: one future, not two nested.
                if $crate::tokio::ws::api::recv_ready!(self) {
                    // Decide first, borrow after: the message is fetched again from the
                    // reader (it stays current until the next call).
                    Ok(self.ws.conn.ws.message())
                } else {
                    Ok(None)
                }
            }

            /// Wait for the next message (as [`recv`](Self::recv)) and hand it to `f`
            /// with a [`Sender`]($crate::ws::Sender) to answer it while it is borrowed:
            /// no copy of the message. `f` runs synchronously: its sends are queued in
            /// the write buffer and written as far as the socket takes them now
            /// ([`Error::Backpressure`]($crate::ws::Error::Backpressure) when the buffer
            /// has no room; nothing queued), the rest is written (write timeout) before
            /// this returns. `Ok(Some(r))` with what `f` returned; `Ok(None)` where
            /// `recv` says `Ok(None)`. Cancellation-safe as `recv` is until `f` runs;
            /// dropped after it, the rest of its replies goes out with the next call.
            ///
            /// ```
            /// # #[tokio::main(flavor = "current_thread")]
            /// # async fn main() -> Result<(), tickwire::ws::Error> {
            /// use tickwire::tokio::ws::{Client, Server};
            /// use tickwire::ws::Message;
            ///
            /// let mut server = Server::bind("127.0.0.1:0").await?;
            /// let url = format!("ws://{}/", server.local_addr()?);
            /// tokio::spawn(async move {
            ///     let mut conn = server.accept().await?;
            ///     // Echo, straight from the read buffer.
            ///     while let Some(()) = conn
            ///         .recv_with(|msg, tx| match msg {
            ///             Message::Text(t) => tx.send_text(t),
            ///             Message::Binary(b) => tx.send_binary(b),
            ///             _ => Ok(()),
            ///         })
            ///         .await?
            ///     {}
            ///     Ok::<(), tickwire::ws::Error>(())
            /// });
            /// let mut client = Client::connect(&url).await?;
            /// client.send_text("hello").await?;
            /// assert_eq!(client.recv().await?, Some(Message::Text("hello")));
            /// # Ok(())
            /// # }
            /// ```
            pub async fn recv_with<R>(
                &mut self,
                f: impl FnOnce(
                    $crate::ws::Message<'_>,
                    &mut $crate::ws::Sender<'_>,
                ) -> Result<R, $crate::ws::Error>,
            ) -> Result<Option<R>, $crate::ws::Error> {
                if !$crate::tokio::ws::api::recv_ready!(self) {
                    return Ok(None);
                }
                let r = self.ws.with_message(f)?;
                if self.ws.wants_write() {
                    self.flush().await?;
                }
                Ok(r)
            }

            /// `recv` up to the message: `Ok(true)` when one is ready in the reader,
            /// `Ok(false)` where `recv` says `Ok(None)`.
            #[allow(dead_code)] // The reconnecting client's; `recv` expands the same body.
            async fn recv_ready(&mut self) -> Result<bool, $crate::ws::Error> {
                Ok($crate::tokio::ws::api::recv_ready!(self))
            }

            /// `recv` up to a message, the end of the close handshake or a wait that
            /// needs a deadline (read timeout, or our close awaiting the peer's),
            /// waiting for readiness in between. After `Pending`, `waiting` says the
            /// next poll takes the readiness first (clearing it) and then retries.
            /// In busy-poll receive mode ([`RecvMode`](crate::socket::RecvMode)) a read
            /// that finds nothing is tried again at once, never yielding to the
            /// reactor, until data, the deadline `read` (or the codec's), or the spin
            /// budget's end.
            fn poll_recv(
                &mut self,
                waiting: &mut bool,
                read: &mut Option<$crate::tokio::ws::api::Lazy>,
                cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<Result<$crate::tokio::ws::api::RecvStep, $crate::ws::Error>> {
                use std::task::Poll;
                use $crate::tokio::ws::api::RecvStep;
                loop {
                    // After a read that drained the socket with nothing left to do, the
                    // read would only say `WouldBlock`: straight to the wait.
                    let idle = if *waiting {
                        match self.ready.poll_wait(self.ws.wants_write(), cx) {
                            Poll::Ready(r) => r?,
                            Poll::Pending => return Poll::Pending,
                        }
                        *waiting = false;
                        false
                    } else {
                        self.ws.conn.idle_drained()
                    };
                    if !idle {
                        // `try_recv` without building the message (the caller fetches
                        // it) nor the handshake test (`established` ran).
                        if self.ws.conn.recv_ready(false)? {
                            return Poll::Ready(Ok(RecvStep::Message));
                        }
                        if self.ws.is_closed() {
                            return Poll::Ready(Ok(RecvStep::Closed));
                        }
                    }
                    if self.ws.conn.io.spinning() {
                        let read = read
                            .get_or_insert($crate::tokio::ws::api::Lazy::After(self.timeouts.read));
                        let deadline =
                            $crate::tokio::ws::api::earliest(read.get(), self.ws.timeout_at());
                        match self.ws.conn.io.spin(deadline) {
                            Some(true) => continue,
                            Some(false) => return Poll::Ready(Ok(RecvStep::Deadline)),
                            None => {}
                        }
                    }
                    if self.timeouts.read.is_some() || self.ws.conn.has_timer() {
                        return Poll::Ready(Ok(RecvStep::Deadline));
                    }
                    *waiting = true;
                }
            }

            /// After the close handshake: write what is still buffered (the echo of the
            /// peer's close), for at most the close timeout. Best effort: the peer may be
            /// gone.
            async fn finish_close(&mut self) {
                if !self.ws.wants_write() {
                    return;
                }
                let deadline = std::time::Instant::now().checked_add(self.timeouts.close);
                // Writable only: a wait that took the readable readiness would leave a
                // later `recv` (which skips the read after a draining one) waiting for
                // the next arrival.
                let writable = ::tokio::io::Interest::WRITABLE;
                while matches!(self.ws.flush_some(), Ok(false)) {
                    if !matches!(self.ready.wait_for(writable, deadline).await, Ok(true)) {
                        return;
                    }
                }
            }

            /// Run the evented `op` until it is not refused for backpressure, awaiting
            /// the socket in between (write timeout), then flush. The sends return this
            /// future as it is (not an `async fn` awaiting it: a state machine less per
            /// send).
            async fn send_with(
                &mut self,
                mut op: impl FnMut(&mut Self) -> Result<(), $crate::ws::Error>,
            ) -> Result<(), $crate::ws::Error> {
                if self.handshaking() {
                    self.established().await?;
                }
                // Started at the first wait (nothing to set up for a send that waits
                // for nothing).
                let mut deadline = None;
                loop {
                    match op(self) {
                        Err($crate::ws::Error::Backpressure) => {
                            // Writable only (see `finish_close`); the codec's timers
                            // bound the wait too (a dead peer).
                            let at = self.ws.timeout_at();
                            let ws = &mut self.ws;
                            $crate::tokio::ws::api::wait_writable(
                                &self.ready,
                                deadline.get_or_insert($crate::tokio::ws::api::Lazy::After(
                                    self.timeouts.write,
                                )),
                                at,
                                |now| ws.handle_timeout(now),
                            )
                            .await?;
                        }
                        Err(e) => return Err(e),
                        // The evented op already wrote what the socket took.
                        Ok(()) if !self.ws.wants_write() => return Ok(()),
                        Ok(()) => return self.flush().await,
                    }
                }
            }

            /// Send a text message: awaits room in the write buffer (backpressure),
            /// then until it is written to the socket (write timeout). Cancellation:
            /// once queued, a message is sent whole (dropping the future while it is
            /// written leaves the rest to the next call); before, nothing was queued.
            ///
            /// ```
            /// # #[tokio::main(flavor = "current_thread")]
            /// # async fn main() -> Result<(), tickwire::ws::Error> {
            /// # let (mut client, mut server) = tickwire::tokio::ws::doc_pair().await?;
            /// use tickwire::ws::Message;
            ///
            /// client.send_text("hello").await?;
            /// assert_eq!(server.recv().await?, Some(Message::Text("hello")));
            /// server.send_text("welcome").await?;
            /// assert_eq!(client.recv().await?, Some(Message::Text("welcome")));
            /// # Ok(())
            /// # }
            /// ```
            pub fn send_text(
                &mut self,
                text: &str,
            ) -> impl Future<Output = Result<(), $crate::ws::Error>> {
                // `send_with`'s future itself (see there).
                self.send_with(move |c| c.ws.send_text(text))
            }

            /// Send a binary message (see [`send_text`](Self::send_text)).
            ///
            /// ```
            /// # #[tokio::main(flavor = "current_thread")]
            /// # async fn main() -> Result<(), tickwire::ws::Error> {
            /// # let (mut client, mut server) = tickwire::tokio::ws::doc_pair().await?;
            /// use tickwire::ws::Message;
            ///
            /// client.send_binary(&[1, 2, 3]).await?;
            /// assert_eq!(server.recv().await?, Some(Message::Binary(&[1, 2, 3])));
            /// # Ok(())
            /// # }
            /// ```
            pub fn send_binary(
                &mut self,
                data: &[u8],
            ) -> impl Future<Output = Result<(), $crate::ws::Error>> {
                // `send_with`'s future itself (see there).
                self.send_with(move |c| c.ws.send_binary(data))
            }

            /// Send a ping (payload at most 125 bytes).
            ///
            /// ```
            /// # #[tokio::main(flavor = "current_thread")]
            /// # async fn main() -> Result<(), tickwire::ws::Error> {
            /// # let (mut client, mut server) = tickwire::tokio::ws::doc_pair().await?;
            /// use tickwire::ws::Message;
            ///
            /// client.send_ping(b"t1").await?;
            /// assert_eq!(server.recv().await?, Some(Message::Ping(b"t1"))); // answered already
            /// assert_eq!(client.recv().await?, Some(Message::Pong(b"t1")));
            /// # Ok(())
            /// # }
            /// ```
            pub fn send_ping(
                &mut self,
                payload: &[u8],
            ) -> impl Future<Output = Result<(), $crate::ws::Error>> {
                // `send_with`'s future itself (see there).
                self.send_with(move |c| c.ws.send_ping(payload))
            }

            /// Send an unsolicited pong (payload at most 125 bytes).
            ///
            /// ```
            /// # #[tokio::main(flavor = "current_thread")]
            /// # async fn main() -> Result<(), tickwire::ws::Error> {
            /// # let (mut client, mut server) = tickwire::tokio::ws::doc_pair().await?;
            /// use tickwire::ws::Message;
            ///
            /// client.send_pong(b"alive").await?;
            /// assert_eq!(server.recv().await?, Some(Message::Pong(b"alive")));
            /// # Ok(())
            /// # }
            /// ```
            pub fn send_pong(
                &mut self,
                payload: &[u8],
            ) -> impl Future<Output = Result<(), $crate::ws::Error>> {
                // `send_with`'s future itself (see there).
                self.send_with(move |c| c.ws.send_pong(payload))
            }

            /// Start the close handshake with `code` (`None`: no status code, then the
            /// reason must be empty) and a reason of at most 123 bytes. Sends the close
            /// frame and returns; keep calling [`recv`](Self::recv): it returns the
            /// peer's close, then `Ok(None)`, or [`Error::CloseTimeout`] when the peer
            /// does not answer within the close timeout. A no-op once closing.
            ///
            /// ```
            /// # #[tokio::main(flavor = "current_thread")]
            /// # async fn main() -> Result<(), tickwire::ws::Error> {
            /// # let (mut client, mut server) = tickwire::tokio::ws::doc_pair().await?;
            /// use tickwire::ws::{CloseCode, CloseFrame, Message};
            ///
            /// client.close(CloseCode::NORMAL, "bye").await?;
            /// let bye = CloseFrame { code: CloseCode::NORMAL, reason: "bye" };
            /// assert_eq!(server.recv().await?, Some(Message::Close(Some(bye)))); // echoed already
            /// assert!(matches!(client.recv().await?, Some(Message::Close(Some(f))) if f.code == CloseCode::NORMAL));
            /// assert_eq!(client.recv().await?, None); // the close handshake is complete
            /// # Ok(())
            /// # }
            /// ```
            pub async fn close(
                &mut self,
                code: impl Into<Option<$crate::ws::CloseCode>>,
                reason: &str,
            ) -> Result<(), $crate::ws::Error> {
                let code = code.into();
                self.send_with(|c| c.ws.close(code, reason)).await
            }

            /// Write everything buffered (write timeout).
            ///
            /// ```
            /// # #[tokio::main(flavor = "current_thread")]
            /// # async fn main() -> Result<(), tickwire::ws::Error> {
            /// # let (mut client, mut server) = tickwire::tokio::ws::doc_pair().await?;
            /// use tickwire::ws::Message;
            ///
            /// // A send whose future was dropped (a select! branch that lost) may leave bytes
            /// // queued; flush writes them.
            /// client.send_text("queued").await?;
            /// client.flush().await?;
            /// assert!(!client.wants_write());
            /// assert_eq!(server.recv().await?, Some(Message::Text("queued")));
            /// # Ok(())
            /// # }
            /// ```
            pub async fn flush(&mut self) -> Result<(), $crate::ws::Error> {
                let mut deadline = $crate::tokio::ws::api::Lazy::After(self.timeouts.write);
                // Writable only (see `finish_close`); the codec's timers bound the
                // wait too (a peer that stopped reading: `Error::DeadPeer`).
                while !self.ws.flush_some()? {
                    let at = self.ws.timeout_at();
                    let ws = &mut self.ws;
                    $crate::tokio::ws::api::wait_writable(&self.ready, &mut deadline, at, |now| {
                        ws.handle_timeout(now)
                    })
                    .await?;
                }
                Ok(())
            }

            /// Whether bytes wait to be written (a cancelled send; [`flush`](Self::flush)
            /// or any later call writes them).
            pub fn wants_write(&self) -> bool {
                self.ws.wants_write()
            }

            /// Whether the connection is finished: the close handshake completed, or it
            /// failed.
            pub fn is_closed(&self) -> bool {
                self.ws.is_closed()
            }

            /// The socket's local address.
            pub fn local_addr(&self) -> std::io::Result<std::net::SocketAddr> {
                self.ws.local_addr()
            }

            /// The peer's address.
            pub fn peer_addr(&self) -> std::io::Result<std::net::SocketAddr> {
                self.ws.peer_addr()
            }

            /// What the TLS handshake agreed on, for a TLS connection: protocol
            /// version, ALPN protocol, cipher suite, the peer's certificates
            /// ([`TlsCodec`]'s getters).
            ///
            /// [`TlsCodec`]: $crate::tls::TlsCodec
            #[cfg(feature = "tls")]
            pub fn tls(&self) -> Option<&$crate::tls::TlsCodec<Vec<u8>>> {
                self.ws.tls()
            }
        }
    };
}

pub(crate) use async_api;
