//! The public methods [`Client`](super::Client) and
//! [`ServerConnection`](super::ServerConnection) share, generated once over their
//! `conn` field so both forward to the one implementation in [`conn`](super::conn).
//! Each type provides `fn ready(&mut self) -> Result<(), Error>` (the opening
//! handshake is done, for sends), `fn opened(&mut self) -> Result<bool, Error>` (drive
//! it, for receives) and its own `recv` / `try_recv`.

macro_rules! connection_api {
    ($ty:ty) => {
        impl $ty {
            /// Send a text message. Blocking mode: returns once it is written to the
            /// socket. Evented mode: writes what the socket takes now and keeps the rest
            /// in the write buffer (finish it with [`flush`](Self::flush) on writable);
            /// [`Error::Backpressure`] when the buffer has no room (nothing queued).
            ///
            /// ```
            /// # let (mut client, mut server) = tickwire::ws::doc_pair()?;
            /// use tickwire::ws::Message;
            /// client.send_text("hello")?;
            /// assert_eq!(server.recv()?, Some(Message::Text("hello")));
            /// server.send_text("welcome")?;
            /// assert_eq!(client.recv()?, Some(Message::Text("welcome")));
            /// # Ok::<(), tickwire::ws::Error>(())
            /// ```
            pub fn send_text(&mut self, text: &str) -> Result<(), $crate::ws::Error> {
                self.ready()?;
                self.conn.send_text(text)
            }

            /// Send a binary message (see [`send_text`](Self::send_text)).
            ///
            /// ```
            /// # let (mut client, mut server) = tickwire::ws::doc_pair()?;
            /// use tickwire::ws::Message;
            /// client.send_binary(&[1, 2, 3])?;
            /// assert_eq!(server.recv()?, Some(Message::Binary(&[1, 2, 3])));
            /// # Ok::<(), tickwire::ws::Error>(())
            /// ```
            pub fn send_binary(&mut self, data: &[u8]) -> Result<(), $crate::ws::Error> {
                self.ready()?;
                self.conn.send_binary(data)
            }

            /// Send a ping (payload at most 125 bytes).
            ///
            /// ```
            /// # let (mut client, mut server) = tickwire::ws::doc_pair()?;
            /// use tickwire::ws::Message;
            /// client.send_ping(b"t1")?;
            /// assert_eq!(server.recv()?, Some(Message::Ping(b"t1"))); // answered already
            /// assert_eq!(client.recv()?, Some(Message::Pong(b"t1")));
            /// # Ok::<(), tickwire::ws::Error>(())
            /// ```
            pub fn send_ping(&mut self, payload: &[u8]) -> Result<(), $crate::ws::Error> {
                self.ready()?;
                self.conn.send_ping(payload)
            }

            /// Send an unsolicited pong (payload at most 125 bytes).
            ///
            /// ```
            /// # let (mut client, mut server) = tickwire::ws::doc_pair()?;
            /// use tickwire::ws::Message;
            /// client.send_pong(b"alive")?;
            /// assert_eq!(server.recv()?, Some(Message::Pong(b"alive")));
            /// # Ok::<(), tickwire::ws::Error>(())
            /// ```
            pub fn send_pong(&mut self, payload: &[u8]) -> Result<(), $crate::ws::Error> {
                self.ready()?;
                self.conn.send_pong(payload)
            }

            /// Start the close handshake with `code` (`None`: no status code, then the
            /// reason must be empty) and a reason of at most 123 bytes.
            ///
            /// This sends the close frame and returns; it does not wait for the
            /// answer. Keep receiving: data that still arrives is discarded, the peer's
            /// close is returned as `Message::Close`, then `recv` returns `Ok(None)`.
            /// Blocking `recv` waits for it at most the close timeout
            /// ([`Error::CloseTimeout`]); evented users call
            /// [`handle_timeout`](Self::handle_timeout). A no-op once closing.
            ///
            /// ```
            /// # let (mut client, mut server) = tickwire::ws::doc_pair()?;
            /// use tickwire::ws::Message;
            /// use tickwire::ws::{CloseCode, CloseFrame};
            ///
            /// client.close(CloseCode::NORMAL, "bye")?;
            /// let bye = CloseFrame { code: CloseCode::NORMAL, reason: "bye" };
            /// assert_eq!(server.recv()?, Some(Message::Close(Some(bye)))); // echoed already
            /// // The echo carries the code (the reason is the peer's to choose).
            /// assert!(matches!(client.recv()?, Some(Message::Close(Some(f))) if f.code == CloseCode::NORMAL));
            /// assert_eq!(client.recv()?, None); // the close handshake is complete
            /// # Ok::<(), tickwire::ws::Error>(())
            /// ```
            pub fn close(
                &mut self,
                code: impl Into<Option<$crate::ws::CloseCode>>,
                reason: &str,
            ) -> Result<(), $crate::ws::Error> {
                self.ready()?;
                self.conn.close(code.into(), reason)
            }

            /// Blocking mode: wait for the next message (as `recv`; a server finishes
            /// its handshake first) and hand it to `f` with a
            /// [`Sender`]($crate::ws::Sender) to answer it while it is borrowed: no copy
            /// of the message. `Ok(Some(r))` with what `f` returned, `Ok(None)` where
            /// `recv` says `Ok(None)`; `f`'s error is returned as it is. In evented mode
            /// this is [`try_recv_with`](Self::try_recv_with).
            ///
            /// ```
            /// use tickwire::ws::{Client, Message, Server};
            /// # let mut server = Server::bind("127.0.0.1:0")?;
            /// # let url = format!("ws://{}/", server.local_addr()?);
            /// let peer = std::thread::spawn(move || -> Result<(), tickwire::ws::Error> {
            ///     // A server echoing one message from its read buffer.
            ///     let mut conn = server.accept()?;
            ///     conn.recv_with(|msg, tx| match msg {
            ///         Message::Text(t) => tx.send_text(t),
            ///         Message::Binary(b) => tx.send_binary(b),
            ///         _ => Ok(()),
            ///     })?;
            ///     // Then answering "ping N" with "pong N".
            ///     conn.send_text("ping 1")?;
            ///     assert_eq!(conn.recv()?, Some(Message::Text("pong 1")));
            ///     Ok(())
            /// });
            /// let mut client = Client::connect(&url)?;
            /// client.send_binary(b"abc")?;
            /// assert_eq!(client.recv()?, Some(Message::Binary(b"abc")));
            /// client.recv_with(|msg, tx| match msg {
            ///     Message::Text(t) => match t.strip_prefix("ping ") {
            ///         Some(n) => tx.send_text(&format!("pong {n}")),
            ///         None => Ok(()),
            ///     },
            ///     _ => Ok(()),
            /// })?;
            /// peer.join().unwrap()?;
            /// # Ok::<(), tickwire::ws::Error>(())
            /// ```
            pub fn recv_with<R>(
                &mut self,
                f: impl FnOnce(
                    $crate::ws::Message<'_>,
                    &mut $crate::ws::Sender<'_>,
                ) -> Result<R, $crate::ws::Error>,
            ) -> Result<Option<R>, $crate::ws::Error> {
                if !self.opened()? {
                    return Ok(None);
                }
                self.conn
                    .recv_with(true, |msg, out| f(msg, &mut $crate::ws::Sender::from(out)))
            }

            /// Never waits: `try_recv` (a server drives its handshake first), with the
            /// message handed to `f` as in [`recv_with`](Self::recv_with).
            ///
            /// ```
            /// # let (mut client, mut server) = tickwire::ws::doc_pair()?;
            /// use tickwire::ws::Message;
            /// server.set_blocking(false)?; // evented: never waits
            /// assert_eq!(server.try_recv_with(|_, _| Ok(()))?, None); // nothing yet
            /// client.send_text("hi")?;
            /// // In a real loop this runs when the socket is readable (mio readiness).
            /// let echoed = loop {
            ///     let got = server.try_recv_with(|msg, tx| match msg {
            ///         Message::Text(t) => tx.send_text(t).map(|()| t.len()),
            ///         _ => Ok(0),
            ///     })?;
            ///     if let Some(n) = got {
            ///         break n;
            ///     }
            ///     std::thread::yield_now();
            /// };
            /// assert_eq!((echoed, client.recv()?), (2, Some(Message::Text("hi"))));
            /// # Ok::<(), tickwire::ws::Error>(())
            /// ```
            pub fn try_recv_with<R>(
                &mut self,
                f: impl FnOnce(
                    $crate::ws::Message<'_>,
                    &mut $crate::ws::Sender<'_>,
                ) -> Result<R, $crate::ws::Error>,
            ) -> Result<Option<R>, $crate::ws::Error> {
                if !self.opened()? {
                    return Ok(None);
                }
                self.conn
                    .recv_with(false, |msg, out| f(msg, &mut $crate::ws::Sender::from(out)))
            }

            /// The tokio connections' `recv_with`: `f` with the message `recv_ready`
            /// made ready and the sending half.
            #[cfg(feature = "tokio")]
            pub(crate) fn with_message<R>(
                &mut self,
                f: impl FnOnce(
                    $crate::ws::Message<'_>,
                    &mut $crate::ws::Sender<'_>,
                ) -> Result<R, $crate::ws::Error>,
            ) -> Result<Option<R>, $crate::ws::Error> {
                self.conn
                    .with_message(|msg, out| f(msg, &mut $crate::ws::Sender::from(out)))
            }

            /// Write buffered bytes. Blocking mode: all of them (write timeout). Evented
            /// mode: what the socket takes now; while [`wants_write`](Self::wants_write)
            /// still says so, continue on the next writable event.
            ///
            /// ```
            /// # let (mut client, mut server) = tickwire::ws::doc_pair()?;
            /// use tickwire::ws::Message;
            /// client.send_text("queued")?; // blocking mode: written already
            /// client.flush()?; // evented mode: continue the write on each writable event
            /// assert!(!client.wants_write());
            /// assert_eq!(server.recv()?, Some(Message::Text("queued")));
            /// # Ok::<(), tickwire::ws::Error>(())
            /// ```
            pub fn flush(&mut self) -> Result<(), $crate::ws::Error> {
                self.conn.flush().map(|_| ())
            }

            /// [`flush`](Self::flush), `Ok(true)` when nothing is left to write (the
            /// tokio adapter's).
            #[cfg(feature = "tokio")]
            pub(crate) fn flush_some(&mut self) -> Result<bool, $crate::ws::Error> {
                self.conn.flush()
            }

            /// Whether bytes wait to be written (register for writable and `flush`).
            pub fn wants_write(&self) -> bool {
                self.conn.wants_write()
            }

            /// Whether the connection is finished: the close handshake completed, or it
            /// failed.
            pub fn is_closed(&self) -> bool {
                self.conn.is_closed()
            }

            /// Whether calls wait (blocking mode) or return (evented mode).
            pub fn is_blocking(&self) -> bool {
                self.conn.io.is_blocking()
            }

            /// Switch modes. Evented (`false`): the connection leaves its private poll
            /// and can be registered in the caller's [`mio::Poll`] (`tickwire::mio`).
            /// Blocking (`true`): deregister it from the caller's poll first.
            ///
            /// [`mio::Poll`]: https://docs.rs/mio/1/mio/struct.Poll.html
            pub fn set_blocking(&mut self, blocking: bool) -> Result<(), $crate::ws::Error> {
                let r = self.conn.set_blocking(blocking);
                r.map_err(|e| self.conn.name(e.into()))
            }

            /// Evented mode: when [`handle_timeout`](Self::handle_timeout) should run next.
            pub fn timeout_at(&self) -> Option<std::time::Instant> {
                self.timeout_at_inner()
            }

            /// Evented mode: run the connection's timers at `now` (handshake and close
            /// timeouts, keepalive pings, the dead-peer timeout). An error means the
            /// connection is over (the socket is shut).
            pub fn handle_timeout(
                &mut self,
                now: std::time::Instant,
            ) -> Result<(), $crate::ws::Error> {
                self.handle_timeout_inner(now)
            }

            /// The socket's local address.
            pub fn local_addr(&self) -> std::io::Result<std::net::SocketAddr> {
                self.conn.io.stream.tcp().local_addr()
            }

            /// The peer's address.
            pub fn peer_addr(&self) -> std::io::Result<std::net::SocketAddr> {
                self.conn.io.stream.tcp().peer_addr()
            }

            /// The underlying mio socket (the evented driver's; not public: mio's
            /// types stay out of the API). The tokio server's readiness.
            #[allow(dead_code)]
            pub(crate) fn mio_stream(&self) -> &mio::net::TcpStream {
                self.conn.io.stream.tcp()
            }

            /// What the TLS handshake agreed on, for a TLS connection: protocol
            /// version, ALPN protocol, cipher suite, the peer's certificates
            /// ([`TlsCodec`]'s getters).
            ///
            /// [`TlsCodec`]: $crate::tls::TlsCodec
            #[cfg(feature = "tls")]
            pub fn tls(&self) -> Option<&$crate::tls::TlsCodec<Vec<u8>>> {
                self.conn.io.stream.tls().map(|t| t.codec())
            }
        }

        /// The connection's socket, to read (or set) socket options on it.
        impl std::os::fd::AsFd for $ty {
            fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
                self.conn.io.stream.tcp().as_fd()
            }
        }

        /// The connection's socket descriptor.
        impl std::os::fd::AsRawFd for $ty {
            fn as_raw_fd(&self) -> std::os::fd::RawFd {
                self.conn.io.stream.tcp().as_raw_fd()
            }
        }

        /// Evented mode: register the connection's socket in your own poll
        /// (readable and writable), then drain with `try_recv` and `flush` on events.
        impl mio::event::Source for $ty {
            fn register(
                &mut self,
                registry: &mio::Registry,
                token: mio::Token,
                interests: mio::Interest,
            ) -> std::io::Result<()> {
                self.conn.io.stream.register(registry, token, interests)
            }

            fn reregister(
                &mut self,
                registry: &mio::Registry,
                token: mio::Token,
                interests: mio::Interest,
            ) -> std::io::Result<()> {
                self.conn.io.stream.reregister(registry, token, interests)
            }

            fn deregister(&mut self, registry: &mio::Registry) -> std::io::Result<()> {
                self.conn.io.stream.deregister(registry)
            }
        }
    };
}

/// Builder setters for the options both roles share (`self.opts: Options`).
macro_rules! builder_options {
    ($ty:ty) => {
        impl $ty {
            /// Read buffer capacity in bytes (default 1 MiB). It bounds the largest
            /// message, so **the default message limit is 1 MiB**; it grows to fit
            /// [`max_message_size`](Self::max_message_size).
            pub fn read_buffer_size(mut self, bytes: usize) -> Self {
                self.opts.read_buffer_size = bytes;
                self
            }

            /// Write buffer capacity in bytes (default 1 MiB, at least 256). A message
            /// larger than this on the wire is refused with `Error::MessageTooLarge`
            /// (nothing sent, the connection unchanged).
            pub fn write_buffer_size(mut self, bytes: usize) -> Self {
                self.opts.write_buffer_size = bytes;
                self
            }

            /// Largest accepted frame payload (default: the message limit). Larger
            /// frames fail the connection with close code 1009.
            pub fn max_frame_size(mut self, bytes: usize) -> Self {
                self.opts.max_frame_size = Some(bytes);
                self
            }

            /// Largest accepted message (default: what the read buffer holds, 1 MiB
            /// unless [`read_buffer_size`](Self::read_buffer_size) is raised). The read
            /// buffer is grown to hold it. A larger message fails the connection with
            /// close code 1009 (`Error::Protocol(ProtocolError::MessageTooLarge)`); with
            /// permessage-deflate (`deflate`), a compressed message's inflated size counts
            /// (a decompression bomb stops at the limit).
            pub fn max_message_size(mut self, bytes: usize) -> Self {
                self.opts.max_message_size = Some(bytes);
                self
            }

            /// How blocking `recv` waits: sleep in the kernel (default), or busy-poll
            /// on non-blocking reads for a dedicated core, optionally for a limited time
            /// before sleeping ([`RecvMode`](crate::socket::RecvMode)).
            ///
            /// ```
            /// use std::time::Duration;
            /// use tickwire::socket::RecvMode;
            ///
            /// // A feed handler on a core of its own: spin instead of sleeping in the kernel.
            /// let ws = tickwire::ws::Client::builder().recv_mode(RecvMode::Spin);
            /// // Spin up to 50 µs per message, then sleep.
            /// let server = tickwire::ws::Server::builder().recv_mode(RecvMode::SpinFor(Duration::from_micros(50)));
            /// # Ok::<(), Box<dyn std::error::Error>>(())
            /// ```
            pub fn recv_mode(mut self, mode: $crate::socket::RecvMode) -> Self {
                self.opts.recv_mode = mode;
                self
            }

            /// Answer pings automatically (default on). The pong is queued and flushed
            /// before the ping is returned.
            pub fn auto_pong(mut self, on: bool) -> Self {
                self.opts.auto_pong = on;
                self
            }

            /// Split outgoing text and binary messages into frames of at most `bytes`
            /// payload bytes (default 0: never).
            pub fn fragment_size(mut self, bytes: usize) -> Self {
                self.opts.fragment_size = bytes;
                self
            }

            /// Time allowed for the opening handshake (default 10 s).
            pub fn handshake_timeout(mut self, t: std::time::Duration) -> Self {
                self.opts.handshake_timeout = t;
                self
            }

            /// Time the peer has to answer our close frame (default 5 s).
            pub fn close_timeout(mut self, t: std::time::Duration) -> Self {
                self.opts.close_timeout = t;
                self
            }

            /// Blocking mode: longest a `recv` waits (default: forever).
            pub fn read_timeout(mut self, t: Option<std::time::Duration>) -> Self {
                self.opts.read_timeout = t;
                self
            }

            /// Blocking mode: longest a send or flush waits for the socket (default:
            /// forever).
            pub fn write_timeout(mut self, t: Option<std::time::Duration>) -> Self {
                self.opts.write_timeout = t;
                self
            }

            /// Send a ping whenever nothing was received for `t` (default: never), so a
            /// quiet but live peer shows it is there. The codec's timer: blocking `recv`
            /// runs it while it waits; evented users call `handle_timeout` at
            /// `timeout_at`.
            ///
            /// ```
            /// # let mut server = tickwire::ws::Server::bind("127.0.0.1:0")?;
            /// # let url = format!("ws://{}/", server.local_addr()?);
            /// # std::thread::spawn(move || server.accept()?.recv().map(|_| ()));
            /// use std::time::Duration;
            /// use tickwire::ws::{Client, Server};
            ///
            /// // A quiet feed: ping after 15 s without a byte from the server, and give
            /// // up (`Error::DeadPeer`) after 45 s without one.
            /// let ws = Client::builder()
            ///     .keepalive(Some(Duration::from_secs(15)))
            ///     .dead_peer_timeout(Some(Duration::from_secs(45)))
            ///     .connect(&url)?;
            /// // A server pings its quiet clients the same way.
            /// let server = Server::builder().keepalive(Some(Duration::from_secs(20))).bind("127.0.0.1:0")?;
            /// # Ok::<(), tickwire::ws::Error>(())
            /// ```
            pub fn keepalive(mut self, t: Option<std::time::Duration>) -> Self {
                self.opts.keepalive = t;
                self
            }

            /// Fail the connection with `Error::DeadPeer` (closed locally as 1006, no
            /// close frame) when nothing was received for `t` (default: never). Pair it
            /// with a shorter [`keepalive`](Self::keepalive). It bounds every wait of
            /// the connection: a `recv`, and a send or flush stuck behind a peer that
            /// stopped reading, which ends with `Error::DeadPeer` even without a
            /// [`write_timeout`](Self::write_timeout). (What the peer sends while a
            /// send waits is read by the next receive: a peer that sends but reads
            /// nothing of ours for `t` counts as dead too.) Evented users call
            /// `handle_timeout` at `timeout_at`.
            ///
            /// ```
            /// # let mut server = tickwire::ws::Server::bind("127.0.0.1:0")?;
            /// # let url = format!("ws://{}/", server.local_addr()?);
            /// # let silent = std::thread::spawn(move || {
            /// #     let conn = server.accept().and_then(|mut c| c.handshake().map(|()| c));
            /// #     std::thread::sleep(std::time::Duration::from_secs(2));
            /// #     drop(conn);
            /// # });
            /// use std::time::Duration;
            /// use tickwire::ws::{Client, Error};
            ///
            /// // The server answers the handshake, then goes silent.
            /// let mut ws = Client::builder()
            ///     .keepalive(Some(Duration::from_millis(100)))
            ///     .dead_peer_timeout(Some(Duration::from_millis(300)))
            ///     .connect(&url)?;
            /// assert!(matches!(ws.recv(), Err(Error::DeadPeer)));
            /// # Ok::<(), tickwire::ws::Error>(())
            /// ```
            pub fn dead_peer_timeout(mut self, t: Option<std::time::Duration>) -> Self {
                self.opts.dead_peer_timeout = t;
                self
            }

            /// permessage-deflate (RFC 7692; feature `deflate`): a client offers it
            /// with `config`'s parameters, a server accepts a client's offer with them.
            /// Compression is on when both sides agreed (the connection's `deflate()`);
            /// messages from `config.threshold` bytes up then go out compressed when that
            /// makes them smaller (otherwise as they are: incompressible data costs no
            /// extra byte), whatever the write buffer's size at the time, and compressed
            /// messages are inflated within the message limit. A server that sends
            /// [`PreparedMessage`](crate::ws::PreparedMessage)s to many clients
            /// takes [`DeflateConfig::fan_out`](tickwire_codec::ws::deflate::DeflateConfig::fan_out),
            /// so that the frame compressed once goes to every connection (see
            /// [`crate::ws`], "Fan-out").
            ///
            /// ```
            /// use tickwire::ws::{Client, DeflateConfig, Message, Server};
            ///
            /// let mut server = Server::builder().deflate(DeflateConfig::fan_out()).bind("127.0.0.1:0")?;
            /// let url = format!("ws://{}/", server.local_addr()?);
            /// let echo = std::thread::spawn(move || -> Result<(), tickwire::ws::Error> {
            ///     let mut conn = server.accept()?;
            ///     while let Some(()) = conn.recv_with(|m, tx| match m {
            ///         Message::Text(t) => tx.send_text(t),
            ///         _ => Ok(()),
            ///     })? {}
            ///     Ok(())
            /// });
            /// let mut ws = Client::builder().deflate(DeflateConfig::default()).connect(&url)?;
            /// assert!(ws.deflate().is_some()); // both sides agreed
            /// let quote = r#"{"s":"BTCUSDT","b":"64123.10","a":"64123.20","ts":1732700000000}"#;
            /// ws.send_text(quote)?; // compressed on the wire (64 bytes and up)
            /// assert_eq!(ws.recv()?, Some(Message::Text(quote)));
            /// ws.close(tickwire::ws::CloseCode::NORMAL, "")?;
            /// while ws.recv()?.is_some() {}
            /// echo.join().unwrap()?;
            /// # Ok::<(), tickwire::ws::Error>(())
            /// ```
            #[cfg(feature = "deflate")]
            pub fn deflate(mut self, config: crate::ws::DeflateConfig) -> Self {
                self.opts.deflate = Some(config);
                self
            }
        }
    };
}

pub(crate) use {builder_options, connection_api};
