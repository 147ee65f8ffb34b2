//! Async `Server` and `ServerConnection`: accept with tokio's reactor, run the server
//! opening handshake of an evented [`crate::ws::ServerConnection`] (the codec's, with
//! its 4xx refusals) on readiness, then the shared async API.

use std::io;
use std::time::Instant;

use ::tokio::net::{TcpListener, TcpStream, ToSocketAddrs};

use super::api::{Timeouts, async_api};
use super::builder::forward_options;
use super::readiness::Readiness;
#[cfg(feature = "tls")]
use crate::tls::TlsServerConfig;
use crate::ws::{self, Error};

// Prepared messages (one frame to many connections): a child module for the fields.
#[path = "prepared.rs"]
mod prepared;

/// Settings for an async [`Server`]: the blocking [`ws::ServerBuilder`]'s settings
/// (convert one with `From`).
#[derive(Debug, Clone, Default)]
pub struct ServerBuilder {
    inner: ws::ServerBuilder,
}

forward_options!(ServerBuilder, ws::ServerBuilder);

impl ServerBuilder {
    /// Default settings.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), tickwire::ws::Error> {
    /// use tickwire::tokio::ws::ServerBuilder;
    ///
    /// let settings = ServerBuilder::new().max_message_size(64 << 10);
    /// let a = settings.bind("127.0.0.1:0").await?; // one builder, many listeners (`&self`)
    /// let b = settings.bind("127.0.0.1:0").await?;
    /// assert_ne!(a.local_addr()?, b.local_addr()?);
    /// # Ok(())
    /// # }
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Decide each upgrade request (see the blocking
    /// [`ServerBuilder::on_upgrade`](ws::ServerBuilder::on_upgrade)). The hook runs
    /// inside the connection's handshake, on the task that drives it.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), tickwire::ws::Error> {
    /// use tickwire::tokio::ws::{Client, Server};
    /// use tickwire::ws::{Decision, Error, HandshakeError};
    ///
    /// let mut server = Server::builder()
    ///     .on_upgrade(|req| match req.header("origin") {
    ///         Some(b"https://app.example") => Decision::accept(),
    ///         _ => Decision::refuse(403, "origin not allowed"),
    ///     })
    ///     .bind("127.0.0.1:0")
    ///     .await?;
    /// let url = format!("ws://{}/", server.local_addr()?);
    /// tokio::spawn(async move {
    ///     while let Ok(mut conn) = server.accept().await {
    ///         let _ = conn.handshake().await;
    ///     }
    /// });
    /// let err = Client::connect(&url).await.unwrap_err();
    /// assert!(matches!(err, Error::Handshake { error: HandshakeError::BadStatus(403), .. }));
    /// Client::builder()
    ///     .header("Origin", "https://app.example")
    ///     .connect(&url)
    ///     .await?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn on_upgrade(
        self,
        hook: impl Fn(&ws::UpgradeRequest<'_>) -> ws::Decision + Send + Sync + 'static,
    ) -> Self {
        Self {
            inner: self.inner.on_upgrade(hook),
        }
    }

    /// The size connections' read and write buffers start at (default 4 KiB), as the
    /// blocking [`ServerBuilder::initial_buffer_size`](ws::ServerBuilder::initial_buffer_size):
    /// they grow on demand, doubling, up to the read and write buffer sizes (the limits
    /// are theirs), and go back to this size when a `recv` finds the connection idle
    /// with nothing buffered. `usize::MAX`: full-size buffers from the start.
    pub fn initial_buffer_size(self, bytes: usize) -> Self {
        Self {
            inner: self.inner.initial_buffer_size(bytes),
        }
    }

    /// Accept TLS connections only (`wss://`), with this certificate and settings.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), tickwire::ws::Error> {
    /// use tickwire::tls::TlsServerConfig;
    ///
    /// # let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    /// # let (chain, key) = (cert.cert.pem(), cert.signing_key.serialize_pem());
    /// let tls = TlsServerConfig::from_pem(chain.as_bytes(), key.as_bytes()).unwrap();
    /// let server = tickwire::tokio::ws::Server::builder().tls(tls).bind("127.0.0.1:0").await?;
    /// # Ok(())
    /// # }
    /// ```
    #[cfg(feature = "tls")]
    pub fn tls(self, config: TlsServerConfig) -> Self {
        Self {
            inner: self.inner.tls(config),
        }
    }

    /// Listen on the first address `addr` resolves to.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), tickwire::ws::Error> {
    /// use tickwire::tokio::ws::Server;
    /// use tickwire::ws::Message;
    ///
    /// let mut server = Server::builder().protocol("v1").bind("127.0.0.1:0").await?;
    /// # let url = format!("ws://{}/", server.local_addr()?);
    /// # tokio::spawn(async move {
    /// #     let mut ws = tickwire::tokio::ws::Client::connect(&url).await?;
    /// #     ws.send_text("hi").await?;
    /// #     while ws.recv().await?.is_some() {}
    /// #     Ok::<(), tickwire::ws::Error>(())
    /// # });
    /// let mut conn = server.accept().await?;
    /// assert_eq!(conn.recv().await?, Some(Message::Text("hi")));
    /// # Ok(())
    /// # }
    /// ```
    pub async fn bind(&self, addr: impl ToSocketAddrs) -> Result<Server, Error> {
        self.listener(TcpListener::bind(addr).await?)
    }

    /// Serve on a tokio listener the caller made (inside its runtime).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), tickwire::ws::Error> {
    /// use tickwire::tokio::ws::Server;
    /// use tickwire::ws::Message;
    ///
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?; // your own
    /// let mut server = Server::builder().listener(listener)?;
    /// # let url = format!("ws://{}/", server.local_addr()?);
    /// # tokio::spawn(async move {
    /// #     let mut ws = tickwire::tokio::ws::Client::connect(&url).await?;
    /// #     ws.send_text("hi").await?;
    /// #     while ws.recv().await?.is_some() {}
    /// #     Ok::<(), tickwire::ws::Error>(())
    /// # });
    /// let mut conn = server.accept().await?;
    /// assert_eq!(conn.recv().await?, Some(Message::Text("hi")));
    /// # Ok(())
    /// # }
    /// ```
    pub fn listener(&self, listener: TcpListener) -> Result<Server, Error> {
        let timeouts = timeouts(&self.inner);
        let ws = self.inner.listener(listener.into_std()?)?;
        // SAFETY: `ws` owns the listener, and `ready` is dropped before it (the
        // `Server`'s first field).
        let ready = unsafe { Readiness::new(ws.mio_listener()) }?;
        Ok(Server {
            ready,
            ws,
            timeouts,
        })
    }

    /// Take a stream accepted elsewhere; its handshake runs on the first
    /// [`ServerConnection::handshake`], `recv` or send.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), tickwire::ws::Error> {
    /// use tickwire::tokio::ws::ServerBuilder;
    /// use tickwire::ws::Message;
    ///
    /// let settings = ServerBuilder::new().protocol("v1");
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    /// # let url = format!("ws://{}/", listener.local_addr()?);
    /// # tokio::spawn(async move {
    /// #     let mut ws = tickwire::tokio::ws::Client::connect(&url).await?;
    /// #     ws.send_text("hi").await?;
    /// #     while ws.recv().await?.is_some() {}
    /// #     Ok::<(), tickwire::ws::Error>(())
    /// # });
    /// let (tcp, _) = listener.accept().await?;
    /// let mut conn = settings.accept_stream(tcp)?;
    /// assert_eq!(conn.recv().await?, Some(Message::Text("hi")));
    /// # Ok(())
    /// # }
    /// ```
    pub fn accept_stream(&self, stream: TcpStream) -> Result<ServerConnection, Error> {
        let tcp = mio::net::TcpStream::from_std(stream.into_std()?);
        ServerConnection::new(self.inner.accept_evented(tcp)?, timeouts(&self.inner))
    }
}

fn timeouts(b: &ws::ServerBuilder) -> Timeouts {
    Timeouts {
        read: b.opts.read_timeout,
        write: b.opts.write_timeout,
        close: b.opts.close_timeout,
    }
}

/// An async WebSocket server: a listener and the settings for its connections.
#[derive(Debug)]
pub struct Server {
    /// The registration of `ws`'s listener: declared first, so dropped first.
    ready: Readiness,
    ws: ws::Server,
    timeouts: Timeouts,
}

impl Server {
    /// Listen on `addr` with default settings.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), tickwire::ws::Error> {
    /// use tickwire::tokio::ws::Server;
    /// use tickwire::ws::Message;
    ///
    /// let mut server = Server::bind("127.0.0.1:0").await?; // port 0: any free port
    /// # let url = format!("ws://{}/", server.local_addr()?);
    /// # tokio::spawn(async move {
    /// #     let mut ws = tickwire::tokio::ws::Client::connect(&url).await?;
    /// #     ws.send_text("hi").await?;
    /// #     while ws.recv().await?.is_some() {}
    /// #     Ok::<(), tickwire::ws::Error>(())
    /// # });
    /// let mut conn = server.accept().await?;
    /// assert_eq!(conn.recv().await?, Some(Message::Text("hi")));
    /// # Ok(())
    /// # }
    /// ```
    pub async fn bind(addr: impl ToSocketAddrs) -> Result<Server, Error> {
        ServerBuilder::new().bind(addr).await
    }

    /// Settings for a server.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), tickwire::ws::Error> {
    /// use tickwire::tokio::ws::Server;
    /// use tickwire::ws::Message;
    ///
    /// let mut server = Server::builder().max_message_size(64 << 10).bind("127.0.0.1:0").await?;
    /// # let url = format!("ws://{}/", server.local_addr()?);
    /// # tokio::spawn(async move {
    /// #     let mut ws = tickwire::tokio::ws::Client::connect(&url).await?;
    /// #     ws.send_text("hi").await?;
    /// #     while ws.recv().await?.is_some() {}
    /// #     Ok::<(), tickwire::ws::Error>(())
    /// # });
    /// let mut conn = server.accept().await?;
    /// assert_eq!(conn.recv().await?, Some(Message::Text("hi")));
    /// # Ok(())
    /// # }
    /// ```
    pub fn builder() -> ServerBuilder {
        ServerBuilder::new()
    }

    /// The listening address.
    pub fn local_addr(&self) -> io::Result<std::net::SocketAddr> {
        self.ws.local_addr()
    }

    /// Wait for a TCP connection, as the blocking `accept`: its opening handshake runs
    /// on the first [`ServerConnection::handshake`], `recv` or send, in the task that
    /// uses it (spawn it, then await those), so a slow client never holds up `accept`.
    /// A refused or failed handshake is that call's error (the peer got its 4xx).
    ///
    /// There is no `try_accept` (the blocking server's evented form): the future is
    /// cancellation-safe, so `accept()` in a `select!` is the way not to wait.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), tickwire::ws::Error> {
    /// use tickwire::tokio::ws::Server;
    /// use tickwire::ws::Message;
    ///
    /// let mut server = Server::bind("127.0.0.1:0").await?;
    /// # let url = format!("ws://{}/", server.local_addr()?);
    /// # tokio::spawn(async move {
    /// #     let mut ws = tickwire::tokio::ws::Client::connect(&url).await?;
    /// #     ws.send_text("hi").await?;
    /// #     while ws.recv().await?.is_some() {}
    /// #     Ok::<(), tickwire::ws::Error>(())
    /// # });
    /// let mut conn = server.accept().await?;
    /// // One task per connection; the handshake runs there.
    /// let task = tokio::spawn(async move {
    ///     while let Some(()) = conn
    ///         .recv_with(|msg, tx| match msg {
    ///             Message::Text(t) => tx.send_text(t),
    ///             _ => Ok(()),
    ///         })
    ///         .await?
    ///     {}
    ///     Ok::<(), tickwire::ws::Error>(())
    /// });
    /// # Ok(())
    /// # }
    /// ```
    pub async fn accept(&mut self) -> Result<ServerConnection, Error> {
        loop {
            if let Some(conn) = self.ws.try_accept()? {
                return ServerConnection::new(conn, self.timeouts);
            }
            self.ready.wait(false, None).await?;
        }
    }

    /// Take a stream accepted elsewhere, with this server's settings (as the blocking
    /// [`ws::Server::accept_stream`]); its handshake runs on first use.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), tickwire::ws::Error> {
    /// use tickwire::tokio::ws::Server;
    /// use tickwire::ws::Message;
    ///
    /// let server = Server::builder().protocol("v1").bind("127.0.0.1:0").await?;
    /// // A socket accepted elsewhere, served with this server's settings.
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    /// # let url = format!("ws://{}/", listener.local_addr()?);
    /// # tokio::spawn(async move {
    /// #     let mut ws = tickwire::tokio::ws::Client::connect(&url).await?;
    /// #     ws.send_text("hi").await?;
    /// #     while ws.recv().await?.is_some() {}
    /// #     Ok::<(), tickwire::ws::Error>(())
    /// # });
    /// let (tcp, _) = listener.accept().await?;
    /// let mut conn = server.accept_stream(tcp)?;
    /// assert_eq!(conn.recv().await?, Some(Message::Text("hi")));
    /// # Ok(())
    /// # }
    /// ```
    pub fn accept_stream(&self, stream: TcpStream) -> Result<ServerConnection, Error> {
        let tcp = mio::net::TcpStream::from_std(stream.into_std()?);
        ServerConnection::new(self.ws.accept_evented(tcp)?, self.timeouts)
    }
}

/// An accepted async WebSocket connection (server role: frames sent are not masked).
#[derive(Debug)]
pub struct ServerConnection {
    /// The registration of `ws`'s socket: declared first, so dropped first.
    ready: Readiness,
    ws: ws::ServerConnection,
    timeouts: Timeouts,
}

async_api!(ServerConnection);

impl ServerConnection {
    fn new(mut ws: ws::ServerConnection, timeouts: Timeouts) -> Result<Self, Error> {
        // SAFETY: `ws` owns the socket, and `ready` is dropped before it (the
        // connection's first field).
        let ready = unsafe { Readiness::new(ws.mio_stream()) }?;
        // tokio's readiness remembers an arrival until it is seen: after a short read
        // the next recv waits for it instead of reading into `WouldBlock`.
        ws.conn.io.sticky_readiness = true;
        Ok(ServerConnection {
            ready,
            ws,
            timeouts,
        })
    }

    /// Finish the opening handshake (handshake timeout; the `101` is written). A bad
    /// request is refused with the codec's answer (400, 426, ...) and reported as
    /// [`Error::Handshake`]. Cancellation-safe; returns at once when done.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), tickwire::ws::Error> {
    /// use tickwire::tokio::ws::Server;
    /// use tickwire::ws::Message;
    ///
    /// let mut server = Server::bind("127.0.0.1:0").await?;
    /// # let url = format!("ws://{}/", server.local_addr()?);
    /// # tokio::spawn(async move {
    /// #     let mut ws = tickwire::tokio::ws::Client::connect(&url).await?;
    /// #     ws.send_text("hi").await?;
    /// #     while ws.recv().await?.is_some() {}
    /// #     Ok::<(), tickwire::ws::Error>(())
    /// # });
    /// let mut conn = server.accept().await?;
    /// conn.handshake().await?; // now the request can be looked at
    /// assert_eq!(conn.path(), "/");
    /// assert_eq!(conn.recv().await?, Some(Message::Text("hi")));
    /// # Ok(())
    /// # }
    /// ```
    pub async fn handshake(&mut self) -> Result<(), Error> {
        while !self.ws.try_handshake()? {
            let deadline = self.ws.timeout_at();
            if !self.ready.wait(self.ws.wants_write(), deadline).await? {
                self.ws.handle_timeout(Instant::now())?;
            }
        }
        self.flush().await
    }

    /// The request target of the opening handshake (`/path?query`; empty before).
    pub fn path(&self) -> &str {
        self.ws.path()
    }

    /// The subprotocol chosen in the handshake.
    pub fn protocol(&self) -> Option<&str> {
        self.ws.protocol()
    }

    /// The permessage-deflate parameters agreed on in the handshake (feature
    /// `deflate`); `None`: messages go uncompressed.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), tickwire::ws::Error> {
    /// # let (client, server) = tickwire::tokio::ws::doc_pair().await?;
    /// // The doc pair was built without `deflate` on the builders: no compression.
    /// assert!(client.deflate().is_none() && server.deflate().is_none());
    /// # Ok(())
    /// # }
    /// ```
    #[cfg(feature = "deflate")]
    pub fn deflate(&self) -> Option<tickwire_codec::ws::deflate::Negotiated> {
        self.ws.deflate()
    }

    /// Whether the opening handshake is still going on.
    pub fn is_handshaking(&self) -> bool {
        self.ws.is_handshaking()
    }

    /// The sizes of the read and write buffers now, in bytes: they start at
    /// [`ServerBuilder::initial_buffer_size`], grow on demand up to the configured
    /// sizes and shrink back when a `recv` finds the connection idle.
    pub fn buffer_sizes(&self) -> (usize, usize) {
        self.ws.buffer_sizes()
    }

    #[cfg(feature = "futures")]
    pub(crate) fn parts_mut(&mut self) -> (&Readiness, &mut ws::ServerConnection) {
        (&self.ready, &mut self.ws)
    }

    pub(crate) fn into_parts(self) -> (Readiness, ws::ServerConnection, Timeouts) {
        (self.ready, self.ws, self.timeouts)
    }

    async fn established(&mut self) -> Result<(), Error> {
        if self.ws.is_handshaking() {
            self.handshake().await?;
        }
        Ok(())
    }

    /// Whether [`established`](Self::established) has work to do: tested before it
    /// is awaited, so an open connection's calls await no future for it.
    #[inline]
    fn handshaking(&self) -> bool {
        self.ws.is_handshaking()
    }
}

/// The connection's socket, to read (or set) socket options on it.
impl std::os::fd::AsFd for ServerConnection {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.ws.as_fd()
    }
}

/// The connection's socket descriptor (as the blocking connection's).
impl std::os::fd::AsRawFd for ServerConnection {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.ws.as_raw_fd()
    }
}
