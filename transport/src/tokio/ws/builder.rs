//! Builder setters of the async builders, forwarded to the blocking builders they wrap
//! (one set of options, one set of defaults).

macro_rules! forward_options {
    ($ty:ty, $inner:ty) => {
        impl $ty {
            /// Read buffer capacity in bytes (default 1 MiB, which is also the default
            /// message limit; see the blocking builder).
            pub fn read_buffer_size(self, bytes: usize) -> Self {
                Self {
                    inner: self.inner.read_buffer_size(bytes),
                }
            }

            /// Write buffer capacity in bytes: the bound of the send backpressure.
            pub fn write_buffer_size(self, bytes: usize) -> Self {
                Self {
                    inner: self.inner.write_buffer_size(bytes),
                }
            }

            /// Largest accepted frame payload (close code 1009 beyond).
            pub fn max_frame_size(self, bytes: usize) -> Self {
                Self {
                    inner: self.inner.max_frame_size(bytes),
                }
            }

            /// Largest accepted message (default: what the 1 MiB read buffer holds; close
            /// code 1009 beyond; with permessage-deflate, its inflated size). The read
            /// buffer grows to hold it.
            pub fn max_message_size(self, bytes: usize) -> Self {
                Self {
                    inner: self.inner.max_message_size(bytes),
                }
            }

            /// `TCP_NODELAY` (default on).
            pub fn nodelay(self, on: bool) -> Self {
                Self {
                    inner: self.inner.nodelay(on),
                }
            }

            /// `SO_RCVBUF` in bytes (see the blocking builder).
            pub fn so_rcvbuf(self, bytes: usize) -> Self {
                Self {
                    inner: self.inner.so_rcvbuf(bytes),
                }
            }

            /// `SO_SNDBUF` in bytes (see the blocking builder).
            pub fn so_sndbuf(self, bytes: usize) -> Self {
                Self {
                    inner: self.inner.so_sndbuf(bytes),
                }
            }

            /// `TCP_QUICKACK` where the OS has it (default off).
            pub fn quickack(self, on: bool) -> Self {
                Self {
                    inner: self.inner.quickack(on),
                }
            }

            /// `SO_BUSY_POLL` in microseconds (Linux; default: not set).
            pub fn so_busy_poll(self, micros: u32) -> Self {
                Self {
                    inner: self.inner.so_busy_poll(micros),
                }
            }

            /// All socket options at once.
            ///
            /// ```
            /// use tickwire::socket::SocketOptions;
            ///
            /// let mut options = SocketOptions::default(); // TCP_NODELAY on
            /// options.quickack = true;
            /// options.recv_buffer = Some(4 << 20);
            /// // The same setter on every builder (ws and rest, blocking and tokio):
            /// let ws = tickwire::ws::Client::builder().socket_options(options);
            /// let server = tickwire::ws::Server::builder().socket_options(options);
            /// let rest = tickwire::rest::Client::builder().socket_options(options);
            /// # Ok::<(), Box<dyn std::error::Error>>(())
            /// ```
            pub fn socket_options(self, options: $crate::socket::SocketOptions) -> Self {
                Self {
                    inner: self.inner.socket_options(options),
                }
            }

            /// How `recv` waits for bytes (default [`RecvMode::Sleep`](crate::socket::RecvMode::Sleep):
            /// on the reactor). `Spin` / `SpinFor`: read again at once while nothing
            /// arrived, never yielding to the runtime (for a task alone on its core's
            /// runtime thread; other tasks there do not run while it spins), read and
            /// close timeouts still holding; `SpinFor` waits on the reactor once its
            /// budget per `recv` is spent.
            ///
            /// ```
            /// use std::time::Duration;
            /// use tickwire::socket::RecvMode;
            ///
            /// // A feed handler on a core of its own: spin instead of sleeping in the kernel.
            /// let ws = tickwire::tokio::ws::Client::builder().recv_mode(RecvMode::Spin);
            /// // Spin up to 50 µs per message, then sleep.
            /// let server = tickwire::tokio::ws::Server::builder().recv_mode(RecvMode::SpinFor(Duration::from_micros(50)));
            /// # Ok::<(), Box<dyn std::error::Error>>(())
            /// ```
            pub fn recv_mode(self, mode: $crate::socket::RecvMode) -> Self {
                Self {
                    inner: self.inner.recv_mode(mode),
                }
            }

            /// Answer pings automatically (default on).
            pub fn auto_pong(self, on: bool) -> Self {
                Self {
                    inner: self.inner.auto_pong(on),
                }
            }

            /// Split outgoing messages into frames of at most `bytes` (default 0: never).
            pub fn fragment_size(self, bytes: usize) -> Self {
                Self {
                    inner: self.inner.fragment_size(bytes),
                }
            }

            /// Time allowed for the opening handshake (default 10 s).
            pub fn handshake_timeout(self, t: std::time::Duration) -> Self {
                Self {
                    inner: self.inner.handshake_timeout(t),
                }
            }

            /// Time the peer has to answer our close frame (default 5 s).
            pub fn close_timeout(self, t: std::time::Duration) -> Self {
                Self {
                    inner: self.inner.close_timeout(t),
                }
            }

            /// Longest a `recv` waits (default: forever; `Error::ReadTimeout`, connection
            /// unchanged). `tokio::time::timeout` around `recv` works as well.
            pub fn read_timeout(self, t: Option<std::time::Duration>) -> Self {
                Self {
                    inner: self.inner.read_timeout(t),
                }
            }

            /// Longest a send or flush waits for the socket (default: forever).
            pub fn write_timeout(self, t: Option<std::time::Duration>) -> Self {
                Self {
                    inner: self.inner.write_timeout(t),
                }
            }

            /// Send a ping whenever nothing was received for `t` (default: never; see
            /// the blocking builder). The connection's own timer, run while `recv`
            /// waits.
            ///
            /// ```
            /// # #[tokio::main(flavor = "current_thread")]
            /// # async fn main() -> Result<(), tickwire::ws::Error> {
            /// # let mut server = tickwire::tokio::ws::Server::bind("127.0.0.1:0").await?;
            /// # let url = format!("ws://{}/", server.local_addr()?);
            /// # tokio::spawn(async move { server.accept().await?.recv().await.map(|_| ()) });
            /// use std::time::Duration;
            /// use tickwire::tokio::ws::Client;
            ///
            /// // Ping after 15 s without a byte from the server, give up after 45 s.
            /// let ws = Client::builder()
            ///     .keepalive(Some(Duration::from_secs(15)))
            ///     .dead_peer_timeout(Some(Duration::from_secs(45)))
            ///     .connect(&url)
            ///     .await?;
            /// # Ok(())
            /// # }
            /// ```
            pub fn keepalive(self, t: Option<std::time::Duration>) -> Self {
                Self {
                    inner: self.inner.keepalive(t),
                }
            }

            /// Fail the connection with `Error::DeadPeer` when nothing was received for
            /// `t` (default: never; see the blocking builder). It bounds sends and
            /// flushes too: one stuck behind a peer that stopped reading ends with
            /// `Error::DeadPeer`, with or without a write timeout.
            ///
            /// ```
            /// # #[tokio::main(flavor = "current_thread")]
            /// # async fn main() -> Result<(), tickwire::ws::Error> {
            /// # let mut server = tickwire::tokio::ws::Server::bind("127.0.0.1:0").await?;
            /// # let url = format!("ws://{}/", server.local_addr()?);
            /// # tokio::spawn(async move {
            /// #     let mut conn = server.accept().await?;
            /// #     conn.handshake().await?;
            /// #     tokio::time::sleep(std::time::Duration::from_secs(2)).await;
            /// #     Ok::<_, tickwire::ws::Error>(conn)
            /// # });
            /// use std::time::Duration;
            /// use tickwire::tokio::ws::Client;
            /// use tickwire::ws::Error;
            ///
            /// // The server answers the handshake, then goes silent.
            /// let mut ws = Client::builder()
            ///     .dead_peer_timeout(Some(Duration::from_millis(300)))
            ///     .connect(&url)
            ///     .await?;
            /// assert!(matches!(ws.recv().await, Err(Error::DeadPeer)));
            /// # Ok(())
            /// # }
            /// ```
            pub fn dead_peer_timeout(self, t: Option<std::time::Duration>) -> Self {
                Self {
                    inner: self.inner.dead_peer_timeout(t),
                }
            }

            /// Add a header (client: to the request; server: to every `101`).
            pub fn header(self, name: &str, value: &str) -> Self {
                Self {
                    inner: self.inner.header(name, value),
                }
            }

            /// permessage-deflate (see the blocking builder; feature `deflate`): a
            /// fan-out server takes [`DeflateConfig::fan_out`](crate::ws::DeflateConfig::fan_out).
            ///
            /// ```
            /// # #[tokio::main(flavor = "current_thread")]
            /// # async fn main() -> Result<(), tickwire::ws::Error> {
            /// use tickwire::tokio::ws::{Client, Server};
            /// use tickwire::ws::{DeflateConfig, Message, PreparedMessage};
            ///
            /// let config = DeflateConfig::fan_out();
            /// let mut server = Server::builder().deflate(config).bind("127.0.0.1:0").await?;
            /// let url = format!("ws://{}/", server.local_addr()?);
            /// let tick = r#"{"s":"BTCUSDT","b":"64123.10","a":"64123.20","ts":1732700000000}"#;
            /// let msg = PreparedMessage::text(tick).with_deflate(&config)?; // compressed once
            /// let feed = tokio::spawn(async move {
            ///     let mut conn = server.accept().await?;
            ///     conn.handshake().await?;
            ///     assert!(conn.shares_prepared(&msg)); // the frame compressed once goes out
            ///     conn.send_prepared(&msg).await?;
            ///     while conn.recv().await?.is_some() {}
            ///     Ok::<(), tickwire::ws::Error>(())
            /// });
            /// let mut ws = Client::builder().deflate(DeflateConfig::default()).connect(&url).await?;
            /// assert_eq!(ws.recv().await?, Some(Message::Text(tick)));
            /// ws.close(tickwire::ws::CloseCode::NORMAL, "").await?;
            /// while ws.recv().await?.is_some() {}
            /// feed.await.unwrap()?;
            /// # Ok(())
            /// # }
            /// ```
            #[cfg(feature = "deflate")]
            pub fn deflate(self, config: crate::ws::DeflateConfig) -> Self {
                Self {
                    inner: self.inner.deflate(config),
                }
            }

            /// Offer (client) or support (server) a subprotocol.
            pub fn protocol(self, protocol: &str) -> Self {
                Self {
                    inner: self.inner.protocol(protocol),
                }
            }
        }

        impl From<$inner> for $ty {
            /// The same settings, for async connections.
            fn from(inner: $inner) -> Self {
                Self { inner }
            }
        }
    };
}

pub(crate) use forward_options;
