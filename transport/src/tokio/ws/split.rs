//! Split halves: a [`ReadHalf`] that can `recv` in one task and a [`WriteHalf`] that
//! can send in another, over one connection.
//!
//! The read half owns the reader (so a received [`Message`] borrows it with no lock
//! held); everything else (socket, writer, write buffer, close state) is shared behind
//! a mutex that is only held for non-blocking steps, never across an await. Each step of
//! the read half lends the reader back to the evented connection, so the same
//! `try_recv` runs: pongs the peer's pings call for are queued into the shared write
//! buffer and written by whichever half runs next (the writer's sends and
//! [`WriteHalf::flush`] write them out). Each half waits on its own readiness
//! (readable, writable), so neither steals the other's wake-up.
//!
//! A received message borrows only the read half, so the write half can answer it while
//! it is borrowed, with no copy (the split form of `recv_with`):
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), tickwire::ws::Error> {
//! use tickwire::tokio::ws::{Client, Server};
//! use tickwire::ws::Message;
//!
//! let mut server = Server::bind("127.0.0.1:0").await?;
//! let url = format!("ws://{}/", server.local_addr()?);
//! tokio::spawn(async move {
//!     let (mut rx, mut tx) = server.accept().await?.split().await?;
//!     while let Some(msg) = rx.recv().await? {
//!         if let Message::Text(t) = msg {
//!             tx.send_text(t).await?;
//!         }
//!     }
//!     Ok::<(), tickwire::ws::Error>(())
//! });
//! let mut client = Client::connect(&url).await?;
//! client.send_text("hello").await?;
//! assert_eq!(client.recv().await?, Some(Message::Text("hello")));
//! # Ok(())
//! # }
//! ```

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use ::tokio::io::Interest;
use tickwire_codec::ws::{FrameReader, Role};

use super::api::{Lazy, Timeouts, earliest};
use super::readiness::Readiness;
use crate::ws::{self, CloseCode, Error, Message, PreparedMessage};

/// What both halves share.
#[derive(Debug)]
struct Shared<C> {
    /// The registration of `conn`'s socket: declared first, so dropped first.
    ready: Readiness,
    conn: Mutex<C>,
    timeouts: Timeouts,
}

impl<C> Shared<C> {
    /// The connection (a panic elsewhere cannot leave it half-updated: every step
    /// under the lock is a complete evented call).
    fn lock(&self) -> MutexGuard<'_, C> {
        self.conn.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The receiving half of a split connection (`C`: [`ws::Client`] or
/// [`ws::ServerConnection`]).
#[derive(Debug)]
pub struct ReadHalf<C> {
    reader: FrameReader<Vec<u8>>,
    shared: Arc<Shared<C>>,
    /// The last compressed message, inflated (feature `deflate`): the connection inflates
    /// it into its own buffer, behind the lock, so it is copied out here (is text, bytes).
    #[cfg(feature = "deflate")]
    inflated: (bool, Vec<u8>),
}

/// The sending half of a split connection.
#[derive(Debug)]
pub struct WriteHalf<C> {
    shared: Arc<Shared<C>>,
}

/// Take the reader out of `conn`, leaving an empty one (never used: every use of the
/// connection's reader happens while the read half has lent it back).
fn take_reader<S: ws::stream::Stream, M: tickwire_codec::ws::Masking>(
    conn: &mut ws::conn::Conn<S, M>,
) -> FrameReader<Vec<u8>> {
    std::mem::replace(
        conn.ws.reader_mut(),
        FrameReader::new(Role::Client, Vec::new()),
    )
}

pub(crate) fn split<C>(
    reader: FrameReader<Vec<u8>>,
    ready: Readiness,
    conn: C,
    timeouts: Timeouts,
) -> (ReadHalf<C>, WriteHalf<C>) {
    let shared = Arc::new(Shared {
        ready,
        conn: Mutex::new(conn),
        timeouts,
    });
    (
        ReadHalf {
            reader,
            shared: shared.clone(),
            #[cfg(feature = "deflate")]
            inflated: (false, Vec::new()),
        },
        WriteHalf { shared },
    )
}

macro_rules! halves {
    ($ws:ty) => {
        impl ReadHalf<$ws> {
            /// Wait for the next message: the contract of the unsplit `recv`
            /// (cancellation-safe; `Ok(None)` after the close handshake).
            ///
            /// ```
            /// # #[tokio::main(flavor = "current_thread")]
            /// # async fn main() -> Result<(), tickwire::ws::Error> {
            /// # let (client, mut server) = tickwire::tokio::ws::doc_pair().await?;
            /// use tickwire::ws::Message;
            /// let (mut rx, _tx) = client.split();
            /// server.send_text("tick").await?;
            /// assert_eq!(rx.recv().await?, Some(Message::Text("tick")));
            /// # Ok(())
            /// # }
            /// ```
            pub async fn recv(&mut self) -> Result<Option<Message<'_>>, Error> {
                let mut read = Lazy::After(self.shared.timeouts.read);
                loop {
                    let (got, closed, close_at) = {
                        let mut conn = self.shared.lock();
                        std::mem::swap(conn.conn.ws.reader_mut(), &mut self.reader);
                        let got = conn.try_recv().map(|m| m.is_some());
                        #[cfg(feature = "deflate")]
                        if matches!(got, Ok(true))
                            && conn.conn.ws.reader_mut().compressed().is_some()
                        {
                            let (text, bytes) = &mut self.inflated;
                            bytes.clear();
                            match conn.conn.ws.message() {
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
                        std::mem::swap(conn.conn.ws.reader_mut(), &mut self.reader);
                        (got?, conn.is_closed(), conn.timeout_at())
                    };
                    if closed {
                        // As unsplit: the close echo, TLS close_notify and the FIN go
                        // out within the close timeout (best effort: the peer may be
                        // gone), before the peer's close (or the end) is returned.
                        let deadline = Instant::now().checked_add(self.shared.timeouts.close);
                        loop {
                            let flushed = self.shared.lock().flush_some();
                            if !matches!(flushed, Ok(false))
                                || !matches!(
                                    self.shared
                                        .ready
                                        .wait_for(Interest::WRITABLE, deadline)
                                        .await,
                                    Ok(true)
                                )
                            {
                                break;
                            }
                        }
                    }
                    if got {
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
                        return Ok(self.reader.message());
                    }
                    if closed {
                        return Ok(None);
                    }
                    let read_at = read.get();
                    let deadline = earliest(read_at, close_at);
                    if !self
                        .shared
                        .ready
                        .wait_for(Interest::READABLE, deadline)
                        .await?
                    {
                        let now = Instant::now();
                        self.shared.lock().handle_timeout(now)?;
                        if read_at.is_some_and(|at| now >= at) {
                            return Err(Error::ReadTimeout);
                        }
                    }
                }
            }

            /// Whether the connection is finished.
            pub fn is_closed(&self) -> bool {
                self.shared.lock().is_closed()
            }
        }

        impl WriteHalf<$ws> {
            async fn send_with(
                &mut self,
                mut op: impl FnMut(&mut $ws) -> Result<(), Error>,
            ) -> Result<(), Error> {
                let mut deadline = Lazy::After(self.shared.timeouts.write);
                loop {
                    // Whether bytes are left to write, under the same lock (the
                    // evented op already wrote what the socket took).
                    let r = {
                        let mut conn = self.shared.lock();
                        op(&mut conn).map(|()| conn.wants_write())
                    };
                    match r {
                        Err(Error::Backpressure) => self.wait_writable(&mut deadline).await?,
                        Err(e) => return Err(e),
                        Ok(false) => return Ok(()),
                        Ok(true) => return self.flush().await,
                    }
                }
            }

            /// Send a text message (see the unsplit `send_text`).
            ///
            /// ```
            /// # #[tokio::main(flavor = "current_thread")]
            /// # async fn main() -> Result<(), tickwire::ws::Error> {
            /// # let (client, mut server) = tickwire::tokio::ws::doc_pair().await?;
            /// use tickwire::ws::Message;
            /// let (_rx, mut tx) = client.split();
            /// tx.send_text("order").await?;
            /// assert_eq!(server.recv().await?, Some(Message::Text("order")));
            /// # Ok(())
            /// # }
            /// ```
            pub async fn send_text(&mut self, text: &str) -> Result<(), Error> {
                self.send_with(|c| c.send_text(text)).await
            }

            /// Send a binary message.
            ///
            /// ```
            /// # #[tokio::main(flavor = "current_thread")]
            /// # async fn main() -> Result<(), tickwire::ws::Error> {
            /// # let (client, mut server) = tickwire::tokio::ws::doc_pair().await?;
            /// use tickwire::ws::Message;
            /// let (_rx, mut tx) = client.split();
            /// tx.send_binary(&[7]).await?;
            /// assert_eq!(server.recv().await?, Some(Message::Binary(&[7])));
            /// # Ok(())
            /// # }
            /// ```
            pub async fn send_binary(&mut self, data: &[u8]) -> Result<(), Error> {
                self.send_with(|c| c.send_binary(data)).await
            }

            /// Send a ping (payload at most 125 bytes).
            ///
            /// ```
            /// # #[tokio::main(flavor = "current_thread")]
            /// # async fn main() -> Result<(), tickwire::ws::Error> {
            /// # let (client, mut server) = tickwire::tokio::ws::doc_pair().await?;
            /// use tickwire::ws::Message;
            /// let (mut rx, mut tx) = client.split();
            /// tx.send_ping(b"p").await?;
            /// assert_eq!(server.recv().await?, Some(Message::Ping(b"p"))); // answered already
            /// assert_eq!(rx.recv().await?, Some(Message::Pong(b"p")));
            /// # Ok(())
            /// # }
            /// ```
            pub async fn send_ping(&mut self, payload: &[u8]) -> Result<(), Error> {
                self.send_with(|c| c.send_ping(payload)).await
            }

            /// Send an unsolicited pong (payload at most 125 bytes).
            ///
            /// ```
            /// # #[tokio::main(flavor = "current_thread")]
            /// # async fn main() -> Result<(), tickwire::ws::Error> {
            /// # let (client, mut server) = tickwire::tokio::ws::doc_pair().await?;
            /// use tickwire::ws::Message;
            /// let (_rx, mut tx) = client.split();
            /// tx.send_pong(b"q").await?;
            /// assert_eq!(server.recv().await?, Some(Message::Pong(b"q")));
            /// # Ok(())
            /// # }
            /// ```
            pub async fn send_pong(&mut self, payload: &[u8]) -> Result<(), Error> {
                self.send_with(|c| c.send_pong(payload)).await
            }

            /// Start the close handshake; the read half returns the peer's close, then
            /// `Ok(None)` (or `Error::CloseTimeout`).
            ///
            /// ```
            /// # #[tokio::main(flavor = "current_thread")]
            /// # async fn main() -> Result<(), tickwire::ws::Error> {
            /// # let (client, mut server) = tickwire::tokio::ws::doc_pair().await?;
            /// use tickwire::ws::{CloseCode, Message};
            /// let (mut rx, mut tx) = client.split();
            /// tx.close(CloseCode::NORMAL, "done").await?;
            /// assert!(matches!(server.recv().await?, Some(Message::Close(_)))); // and echoed
            /// assert!(matches!(rx.recv().await?, Some(Message::Close(_))));
            /// assert_eq!(rx.recv().await?, None);
            /// # Ok(())
            /// # }
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
            /// # #[tokio::main(flavor = "current_thread")]
            /// # async fn main() -> Result<(), tickwire::ws::Error> {
            /// # let (client, _server) = tickwire::tokio::ws::doc_pair().await?;
            /// let (_rx, mut tx) = client.split();
            /// tx.flush().await?; // nothing queued: returns at once
            /// assert!(!tx.wants_write());
            /// # Ok(())
            /// # }
            /// ```
            pub async fn flush(&mut self) -> Result<(), Error> {
                let mut deadline = Lazy::After(self.shared.timeouts.write);
                while !self.shared.lock().flush_some()? {
                    self.wait_writable(&mut deadline).await?;
                }
                Ok(())
            }

            /// One wait for a writable socket within the write deadline and the
            /// connection's timers (a peer that stopped reading: `Error::DeadPeer`).
            async fn wait_writable(&self, deadline: &mut Lazy) -> Result<(), Error> {
                let at = self.shared.lock().timeout_at();
                super::api::wait_writable(&self.shared.ready, deadline, at, |now| {
                    self.shared.lock().handle_timeout(now)
                })
                .await
            }

            /// Whether bytes wait to be written.
            pub fn wants_write(&self) -> bool {
                self.shared.lock().wants_write()
            }

            /// Whether the connection is finished.
            pub fn is_closed(&self) -> bool {
                self.shared.lock().is_closed()
            }
        }
    };
}

halves!(ws::Client);
halves!(ws::ServerConnection);

impl WriteHalf<ws::ServerConnection> {
    /// Send a prepared message (encoded once, shared by every connection it goes to):
    /// the unsplit [`ServerConnection::send_prepared`](super::ServerConnection::send_prepared),
    /// awaiting room and the socket within the write timeout.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), tickwire::ws::Error> {
    /// # let (mut client, server) = tickwire::tokio::ws::doc_pair().await?;
    /// use tickwire::ws::{Message, PreparedMessage};
    ///
    /// let (_rx, mut tx) = server.split().await?;
    /// let tick = PreparedMessage::text(r#"{"px":"101.5"}"#); // encoded once
    /// for tx in [&mut tx] {
    ///     tx.send_prepared(&tick).await?; // ... sent to every subscriber
    /// }
    /// assert_eq!(client.recv().await?, Some(Message::Text(r#"{"px":"101.5"}"#)));
    /// # Ok(())
    /// # }
    /// ```
    pub async fn send_prepared(&mut self, msg: &PreparedMessage) -> Result<(), Error> {
        self.send_with(|c| c.send_prepared(msg)).await
    }

    /// Send a prepared message without waiting, as the unsplit
    /// [`ServerConnection::try_send_prepared`](super::ServerConnection::try_send_prepared):
    /// what the socket takes now is written, the rest stays in the write buffer
    /// ([`flush`](Self::flush) writes it); [`Error::Backpressure`] when the buffer has no
    /// room (nothing queued). One task can so feed many subscribers' write halves without
    /// waiting on the slowest, while each read half runs in a task of its own.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), tickwire::ws::Error> {
    /// # let (mut client, server) = tickwire::tokio::ws::doc_pair().await?;
    /// use tickwire::ws::{Error, Message, PreparedMessage};
    ///
    /// let (_rx, tx) = server.split().await?;
    /// let mut subscribers = vec![tx];
    /// let tick = PreparedMessage::binary(&[1, 2, 3]);
    /// for tx in &mut subscribers {
    ///     match tx.try_send_prepared(&tick) {
    ///         Ok(()) | Err(Error::Backpressure) => {} // a slow one skips this tick
    ///         Err(e) => return Err(e),
    ///     }
    /// }
    /// for tx in &mut subscribers {
    ///     tx.flush().await?; // the rest, where a socket was full
    /// }
    /// assert_eq!(client.recv().await?, Some(Message::Binary(&[1, 2, 3])));
    /// # Ok(())
    /// # }
    /// ```
    pub fn try_send_prepared(&mut self, msg: &PreparedMessage) -> Result<(), Error> {
        self.shared.lock().send_prepared(msg)
    }

    /// Whether [`send_prepared`](Self::send_prepared) sends `msg`'s shared frame; see the
    /// blocking [`shares_prepared`](crate::ws::ServerConnection::shares_prepared).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), tickwire::ws::Error> {
    /// # let (_client, server) = tickwire::tokio::ws::doc_pair().await?;
    /// let (_rx, tx) = server.split().await?;
    /// assert!(tx.shares_prepared(&tickwire::ws::PreparedMessage::text("tick")));
    /// # Ok(())
    /// # }
    /// ```
    pub fn shares_prepared(&self, msg: &PreparedMessage) -> bool {
        self.shared.lock().shares_prepared(msg)
    }
}

impl super::Client {
    /// Split into a read half and a write half, to receive in one task and send in
    /// another (each half is `Send`).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), tickwire::ws::Error> {
    /// # let (client, mut server) = tickwire::tokio::ws::doc_pair().await?;
    /// use tickwire::ws::{CloseCode, Message};
    ///
    /// let (mut rx, mut tx) = client.split(); // one task reads, another writes
    /// let writer = tokio::spawn(async move {
    ///     tx.send_text("order").await?;
    ///     tx.send_binary(&[7]).await?;
    ///     tx.send_ping(b"p").await?;
    ///     tx.send_pong(b"q").await?;
    ///     tx.flush().await?;
    ///     Ok::<_, tickwire::ws::Error>(tx)
    /// });
    /// assert_eq!(server.recv().await?, Some(Message::Text("order")));
    /// assert_eq!(server.recv().await?, Some(Message::Binary(&[7])));
    /// assert_eq!(server.recv().await?, Some(Message::Ping(b"p"))); // answered already
    /// assert_eq!(server.recv().await?, Some(Message::Pong(b"q")));
    /// server.send_text("fill").await?;
    /// assert_eq!(rx.recv().await?, Some(Message::Pong(b"p"))); // the answer to our ping
    /// assert_eq!(rx.recv().await?, Some(Message::Text("fill")));
    /// let mut tx = writer.await.unwrap()?;
    /// tx.close(CloseCode::NORMAL, "done").await?;
    /// assert!(matches!(server.recv().await?, Some(Message::Close(_))));
    /// # Ok(())
    /// # }
    /// ```
    pub fn split(self) -> (ReadHalf<ws::Client>, WriteHalf<ws::Client>) {
        // Nothing here can fail before `Shared` holds them again (its field order drops
        // the registration first).
        let (ready, mut conn, timeouts) = self.into_parts();
        let reader = take_reader(&mut conn.conn);
        split(reader, ready, conn, timeouts)
    }
}

impl super::ServerConnection {
    /// Finish the opening handshake if needed, then split like
    /// [`Client::split`](super::Client::split).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), tickwire::ws::Error> {
    /// # let (mut client, server) = tickwire::tokio::ws::doc_pair().await?;
    /// use tickwire::ws::Message;
    ///
    /// let (mut rx, mut tx) = server.split().await?;
    /// client.send_text("a").await?;
    /// assert_eq!(rx.recv().await?, Some(Message::Text("a")));
    /// tx.send_text("b").await?;
    /// assert_eq!(client.recv().await?, Some(Message::Text("b")));
    /// # Ok(())
    /// # }
    /// ```
    pub async fn split(
        mut self,
    ) -> Result<
        (
            ReadHalf<ws::ServerConnection>,
            WriteHalf<ws::ServerConnection>,
        ),
        Error,
    > {
        self.handshake().await?;
        // As in `Client::split`: nothing can fail before `Shared` holds them again.
        let (ready, mut conn, timeouts) = self.into_parts();
        let reader = take_reader(&mut conn.conn);
        Ok(split(reader, ready, conn, timeouts))
    }
}
