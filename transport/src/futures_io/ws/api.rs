//! The async methods [`Client`](super::Client) and
//! [`ServerConnection`](super::ServerConnection) share, generated once over their
//! field `d` (the [`Driver`](super::driver::Driver) doing all the work), with the
//! type's masking (`async_api!(Type, Masking)`). Each type provides `async fn
//! established(&mut self)` (its opening handshake is done) and `fn handshaking(&self)`
//! (whether there is one to run: only then is `established` awaited).

/// The body `recv` and `recv_with` share, expanded in each (one future per call, not
/// one awaiting another): an expression of type `bool` inside an async fn returning
/// `Result<_, Error>`, `true` when a message is ready in the reader (the peer's close
/// already answered, within the close timeout), `false` once the close handshake is
/// complete.
macro_rules! recv_ready {
    ($this:ident) => {{
        if $this.handshaking() {
            $this.established().await?;
        }
        let mut read = $this.d.read_deadline();
        let got = std::future::poll_fn(|cx| $this.d.poll_recv(&mut read, cx)).await?;
        if $this.d.conn.is_closed() {
            // The peer's close (or the end of ours): its echo, TLS close_notify and
            // the FIN go out within the close timeout before it is returned.
            $this.d.finish_close().await;
        }
        got
    }};
}

pub(crate) use recv_ready;

macro_rules! async_api {
    ($ty:ident, $mask:ty) => {
        impl<T, Tm> $ty<T, Tm>
        where
            T: futures_io::AsyncRead + futures_io::AsyncWrite + Unpin,
            Tm: $crate::futures_io::Timer,
        {
            /// Wait for the next message: the tokio connections' `recv`.
            ///
            /// - `Ok(Some(msg))` for every message, control frames included: a `Ping`
            ///   has already been answered (unless auto-pong is off), a `Close` from the
            ///   peer has already been answered and the stream shut for writing.
            /// - `Ok(None)`: the close handshake is complete; every later call says the
            ///   same.
            /// - `Err(_)`: the connection failed (a protocol error was answered with the
            ///   codec's close code; [`Error::CloseTimeout`]($crate::ws::Error::CloseTimeout)
            ///   when our close was not answered in time), except
            ///   `Error::ReadTimeout`, after which it is unchanged.
            ///
            /// The message borrows the read buffer: drop it before the next call.
            ///
            /// **Cancellation-safe**: received bytes go into the connection's read
            /// buffer before the future returns `Pending`, so dropping it (a `select`
            /// branch that lost, a timeout) loses no message and no byte; the next
            /// `recv` continues.
            ///
            /// ```
            /// # smol::block_on(async {
            /// # let (mut client, mut server) = tickwire::futures_io::ws::doc_pair().await?;
            /// use tickwire::ws::Message;
            ///
            /// client.send_text("tick").await?;
            /// match server.recv().await? {
            ///     Some(Message::Text(t)) => assert_eq!(t, "tick"), // borrows the read buffer
            ///     Some(_) => {}                                     // binary, ping, pong, close
            ///     None => {}                                        // the close handshake is done
            /// }
            /// # Ok::<(), tickwire::ws::Error>(())
            /// # }).unwrap();
            /// ```
            pub async fn recv(
                &mut self,
            ) -> Result<Option<$crate::ws::Message<'_>>, $crate::ws::Error> {
                if $crate::futures_io::ws::api::recv_ready!(self) {
                    Ok(self.d.conn.ws.message())
                } else {
                    Ok(None)
                }
            }

            /// Wait for the next message (as [`recv`](Self::recv)) and hand it to `f`
            /// with a [`Sender`]($crate::ws::Sender) to answer it while it is borrowed:
            /// no copy of the message. `f` runs synchronously: its sends are queued and
            /// written as far as the stream takes them now
            /// ([`Error::Backpressure`]($crate::ws::Error::Backpressure) when the buffer
            /// has no room; nothing queued), the rest is written (write timeout) before
            /// this returns. `Ok(None)` where `recv` says `Ok(None)`.
            ///
            /// ```
            /// # smol::block_on(async {
            /// # let (mut client, mut server) = tickwire::futures_io::ws::doc_pair().await?;
            /// use tickwire::ws::Message;
            ///
            /// client.send_text("hello").await?;
            /// // Echo, straight from the read buffer.
            /// server
            ///     .recv_with(|msg, tx| match msg {
            ///         Message::Text(t) => tx.send_text(t),
            ///         _ => Ok(()),
            ///     })
            ///     .await?;
            /// assert_eq!(client.recv().await?, Some(Message::Text("hello")));
            /// # Ok::<(), tickwire::ws::Error>(())
            /// # }).unwrap();
            /// ```
            pub async fn recv_with<R>(
                &mut self,
                f: impl FnOnce(
                    $crate::ws::Message<'_>,
                    &mut $crate::ws::Sender<'_>,
                ) -> Result<R, $crate::ws::Error>,
            ) -> Result<Option<R>, $crate::ws::Error> {
                if !$crate::futures_io::ws::api::recv_ready!(self) {
                    return Ok(None);
                }
                let r = self.d.with_message(f)?;
                if self.d.conn.wants_write() {
                    self.d.flush().await?;
                }
                Ok(r)
            }

            /// Send a text message: awaits room in the write buffer (backpressure),
            /// then until it is written to the stream (write timeout). Cancellation:
            /// once queued, a message is sent whole (dropping the future while it is
            /// written leaves the rest to the next call); before, nothing was queued.
            ///
            /// ```
            /// # smol::block_on(async {
            /// # let (mut client, mut server) = tickwire::futures_io::ws::doc_pair().await?;
            /// use tickwire::ws::Message;
            ///
            /// client.send_text("hello").await?;
            /// assert_eq!(server.recv().await?, Some(Message::Text("hello")));
            /// server.send_text("welcome").await?;
            /// assert_eq!(client.recv().await?, Some(Message::Text("welcome")));
            /// # Ok::<(), tickwire::ws::Error>(())
            /// # }).unwrap();
            /// ```
            pub fn send_text(
                &mut self,
                text: &str,
            ) -> impl Future<Output = Result<(), $crate::ws::Error>> {
                // `send_with`'s future itself: one state machine per send.
                self.send_with(move |c| c.send_text(text))
            }

            /// Send a binary message (see [`send_text`](Self::send_text)).
            ///
            /// ```
            /// # smol::block_on(async {
            /// # let (mut client, mut server) = tickwire::futures_io::ws::doc_pair().await?;
            /// use tickwire::ws::Message;
            ///
            /// client.send_binary(&[1, 2, 3]).await?;
            /// assert_eq!(server.recv().await?, Some(Message::Binary(&[1, 2, 3])));
            /// # Ok::<(), tickwire::ws::Error>(())
            /// # }).unwrap();
            /// ```
            pub fn send_binary(
                &mut self,
                data: &[u8],
            ) -> impl Future<Output = Result<(), $crate::ws::Error>> {
                // `send_with`'s future itself: one state machine per send.
                self.send_with(move |c| c.send_binary(data))
            }

            /// Send a ping (payload at most 125 bytes).
            ///
            /// ```
            /// # smol::block_on(async {
            /// # let (mut client, mut server) = tickwire::futures_io::ws::doc_pair().await?;
            /// use tickwire::ws::Message;
            ///
            /// client.send_ping(b"t1").await?;
            /// assert_eq!(server.recv().await?, Some(Message::Ping(b"t1"))); // answered already
            /// assert_eq!(client.recv().await?, Some(Message::Pong(b"t1")));
            /// # Ok::<(), tickwire::ws::Error>(())
            /// # }).unwrap();
            /// ```
            pub fn send_ping(
                &mut self,
                payload: &[u8],
            ) -> impl Future<Output = Result<(), $crate::ws::Error>> {
                // `send_with`'s future itself: one state machine per send.
                self.send_with(move |c| c.send_ping(payload))
            }

            /// Send an unsolicited pong (payload at most 125 bytes).
            ///
            /// ```
            /// # smol::block_on(async {
            /// # let (mut client, mut server) = tickwire::futures_io::ws::doc_pair().await?;
            /// use tickwire::ws::Message;
            ///
            /// client.send_pong(b"alive").await?;
            /// assert_eq!(server.recv().await?, Some(Message::Pong(b"alive")));
            /// # Ok::<(), tickwire::ws::Error>(())
            /// # }).unwrap();
            /// ```
            pub fn send_pong(
                &mut self,
                payload: &[u8],
            ) -> impl Future<Output = Result<(), $crate::ws::Error>> {
                // `send_with`'s future itself: one state machine per send.
                self.send_with(move |c| c.send_pong(payload))
            }

            /// Start the close handshake with `code` (`None`: no status code, then the
            /// reason must be empty) and a reason of at most 123 bytes. Sends the close
            /// frame and returns; keep calling [`recv`](Self::recv): it returns the
            /// peer's close, then `Ok(None)`, or `Error::CloseTimeout` when the peer
            /// does not answer within the close timeout. A no-op once closing.
            ///
            /// ```
            /// # smol::block_on(async {
            /// # let (mut client, mut server) = tickwire::futures_io::ws::doc_pair().await?;
            /// use tickwire::ws::{CloseCode, CloseFrame, Message};
            ///
            /// client.close(CloseCode::NORMAL, "bye").await?;
            /// let bye = CloseFrame { code: CloseCode::NORMAL, reason: "bye" };
            /// assert_eq!(server.recv().await?, Some(Message::Close(Some(bye)))); // echoed already
            /// assert!(matches!(client.recv().await?, Some(Message::Close(Some(f))) if f.code == CloseCode::NORMAL));
            /// assert_eq!(client.recv().await?, None); // the close handshake is complete
            /// # Ok::<(), tickwire::ws::Error>(())
            /// # }).unwrap();
            /// ```
            pub async fn close(
                &mut self,
                code: impl Into<Option<$crate::ws::CloseCode>>,
                reason: &str,
            ) -> Result<(), $crate::ws::Error> {
                let code = code.into();
                self.send_with(|c| c.close(code, reason)).await
            }

            /// Run the evented `op` (a send) after the opening handshake, until it is
            /// not refused for backpressure, then write what it queued, all within the
            /// write timeout: the sends return this future as it is.
            async fn send_with(
                &mut self,
                mut op: impl FnMut(
                    &mut $crate::ws::conn::Conn<$crate::futures_io::io::IoStream<T>, $mask>,
                ) -> Result<(), $crate::ws::Error>,
            ) -> Result<(), $crate::ws::Error> {
                if self.handshaking() {
                    self.established().await?;
                }
                let mut deadline = self.d.write_deadline();
                let mut queued = false;
                std::future::poll_fn(|cx| self.d.poll_send(&mut op, &mut queued, &mut deadline, cx))
                    .await
            }

            /// Write everything buffered (write timeout).
            ///
            /// ```
            /// # smol::block_on(async {
            /// # let (mut client, mut server) = tickwire::futures_io::ws::doc_pair().await?;
            /// use tickwire::ws::Message;
            ///
            /// // A send whose future was dropped (a select branch that lost) may leave
            /// // bytes queued; flush writes them.
            /// client.send_text("queued").await?;
            /// client.flush().await?;
            /// assert!(!client.wants_write());
            /// assert_eq!(server.recv().await?, Some(Message::Text("queued")));
            /// # Ok::<(), tickwire::ws::Error>(())
            /// # }).unwrap();
            /// ```
            pub async fn flush(&mut self) -> Result<(), $crate::ws::Error> {
                self.d.flush().await
            }

            /// Whether bytes wait to be written (a cancelled send; [`flush`](Self::flush)
            /// or any later call writes them).
            ///
            /// ```
            /// # smol::block_on(async {
            /// # let (mut client, _server) = tickwire::futures_io::ws::doc_pair().await?;
            /// client.send_text("written").await?;
            /// assert!(!client.wants_write());
            /// # Ok::<(), tickwire::ws::Error>(())
            /// # }).unwrap();
            /// ```
            pub fn wants_write(&self) -> bool {
                self.d.conn.wants_write()
            }

            /// Whether the connection is finished: the close handshake completed, or it
            /// failed.
            ///
            /// ```
            /// # smol::block_on(async {
            /// # let (mut client, mut server) = tickwire::futures_io::ws::doc_pair().await?;
            /// client.close(tickwire::ws::CloseCode::NORMAL, "").await?;
            /// while server.recv().await?.is_some() {}
            /// assert!(server.is_closed());
            /// # Ok::<(), tickwire::ws::Error>(())
            /// # }).unwrap();
            /// ```
            pub fn is_closed(&self) -> bool {
                self.d.conn.is_closed()
            }

            /// The stream the connection runs on (to read its addresses or options).
            ///
            /// ```
            /// # smol::block_on(async {
            /// # let (client, _server) = tickwire::futures_io::ws::doc_pair().await?;
            /// let tcp: &tickwire::futures_io::TcpStream = client.get_ref();
            /// assert!(tcp.get_ref().peer_addr()?.ip().is_loopback());
            /// # Ok::<(), tickwire::ws::Error>(())
            /// # }).unwrap();
            /// ```
            pub fn get_ref(&self) -> &T {
                self.d.conn.io.stream.get_ref()
            }

            /// What the TLS handshake agreed on, for a TLS connection: protocol
            /// version, ALPN protocol, cipher suite, the peer's certificates
            /// ([`TlsCodec`]'s getters). `None` over a plain stream.
            ///
            /// ```
            /// # smol::block_on(async {
            /// # let (client, _server) = tickwire::futures_io::ws::doc_pair().await?;
            /// assert!(client.tls().is_none()); // ws://
            /// # Ok::<(), tickwire::ws::Error>(())
            /// # }).unwrap();
            /// ```
            ///
            /// [`TlsCodec`]: $crate::tls::TlsCodec
            #[cfg(feature = "tls")]
            pub fn tls(&self) -> Option<&$crate::tls::TlsCodec<Vec<u8>>> {
                self.d.conn.io.stream.tls()
            }
        }
    };
}

pub(crate) use async_api;
