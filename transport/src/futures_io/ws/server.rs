//! Async `Server` and `ServerConnection` over futures-io: accept with async-io's
//! reactor (or take a stream accepted elsewhere), run the server opening handshake of
//! the blocking server's rules (the codec's, with its 4xx refusals, the `on_upgrade`
//! hook) on first use, then the shared async API.

use std::io;
use std::marker::PhantomData;
use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::sync::Arc;

use async_io::Async;
use futures_io::{AsyncRead, AsyncWrite};
use tickwire_codec::rand::NoMask;

use super::api::async_api;
use super::driver::Driver;
use crate::futures_io::Timer;
use crate::futures_io::io::{Compat, IoStream};
use crate::ws::error::Peer;
use crate::ws::{self, Error};

/// Settings for an async [`Server`] and the [`ServerConnection`]s it accepts (or
/// [`accept_stream`](Self::accept_stream) takes): the blocking [`ws::ServerBuilder`]'s
/// settings (convert one with `From`), with the deadline timer `Tm`.
#[derive(Debug)]
pub struct ServerBuilder<Tm = async_io::Timer> {
    inner: Arc<ws::ServerBuilder>,
    timer: PhantomData<fn() -> Tm>,
}

impl<Tm> Clone for ServerBuilder<Tm> {
    fn clone(&self) -> Self {
        ServerBuilder {
            inner: self.inner.clone(),
            timer: PhantomData,
        }
    }
}

impl Default for ServerBuilder {
    fn default() -> Self {
        ServerBuilder::from(ws::ServerBuilder::default())
    }
}

impl<Tm> From<ws::ServerBuilder> for ServerBuilder<Tm> {
    /// The same settings, for futures-io connections.
    fn from(inner: ws::ServerBuilder) -> Self {
        ServerBuilder {
            inner: Arc::new(inner),
            timer: PhantomData,
        }
    }
}

super::forward_settings!(ServerBuilder);

impl<Tm> ServerBuilder<Tm> {
    fn map(self, f: impl FnOnce(ws::ServerBuilder) -> ws::ServerBuilder) -> Self {
        ServerBuilder::from(f(Arc::unwrap_or_clone(self.inner)))
    }

    /// Decide on each opening handshake (see the blocking builder's).
    ///
    /// ```
    /// use tickwire::ws::Decision;
    ///
    /// let settings = tickwire::futures_io::ws::ServerBuilder::new().on_upgrade(|req| {
    ///     if req.path == "/feed" { Decision::accept() } else { Decision::refuse(404, "no such feed") }
    /// });
    /// ```
    pub fn on_upgrade(
        self,
        hook: impl Fn(&ws::UpgradeRequest<'_>) -> ws::Decision + Send + Sync + 'static,
    ) -> Self {
        self.map(|b| b.on_upgrade(hook))
    }

    /// A connection's buffers start this size and grow on demand up to the configured
    /// sizes (see the blocking builder's).
    pub fn initial_buffer_size(self, bytes: usize) -> Self {
        self.map(|b| b.initial_buffer_size(bytes))
    }

    /// Accept TLS connections only (`wss://`), with this certificate and settings: the
    /// transport's TLS stream over each accepted stream, its handshake inside the
    /// opening handshake (under its timeout).
    #[cfg(feature = "tls")]
    pub fn tls(self, config: crate::tls::TlsServerConfig) -> Self {
        self.map(|b| b.tls(config))
    }
}

impl ServerBuilder {
    /// Default settings, async-io's timer.
    ///
    /// ```
    /// # smol::block_on(async {
    /// use tickwire::futures_io::ws::ServerBuilder;
    ///
    /// let settings = ServerBuilder::new().max_message_size(64 << 10);
    /// let a = settings.bind("127.0.0.1:0")?; // one builder, many listeners (`&self`)
    /// let b = settings.bind("127.0.0.1:0")?;
    /// assert_ne!(a.local_addr()?, b.local_addr()?);
    /// # Ok::<(), tickwire::ws::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn new() -> Self {
        Self::default()
    }
}

impl<Tm: Timer> ServerBuilder<Tm> {
    /// Use the timer `T2` for this builder's connections (see
    /// [`ClientBuilder::timer`](super::ClientBuilder::timer)).
    pub fn timer<T2: Timer>(self) -> ServerBuilder<T2> {
        ServerBuilder {
            inner: self.inner,
            timer: PhantomData,
        }
    }

    /// Listen on `addr` with async-io's reactor (any executor: smol's, or the
    /// `async-io` thread).
    ///
    /// ```
    /// # smol::block_on(async {
    /// let server = tickwire::futures_io::ws::ServerBuilder::new().bind("127.0.0.1:0")?;
    /// assert!(server.local_addr()?.port() > 0);
    /// # Ok::<(), tickwire::ws::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn bind(&self, addr: impl ToSocketAddrs) -> Result<Server<Tm>, Error> {
        self.listener(TcpListener::bind(addr)?)
    }

    /// Serve a listener of yours.
    ///
    /// ```
    /// # smol::block_on(async {
    /// let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    /// let server = tickwire::futures_io::ws::ServerBuilder::new().listener(listener)?;
    /// assert!(server.local_addr()?.port() > 0);
    /// # Ok::<(), tickwire::ws::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn listener(&self, listener: TcpListener) -> Result<Server<Tm>, Error> {
        Ok(Server {
            listener: Async::new(listener)?,
            shared: self.clone(),
        })
    }

    /// Take a stream accepted elsewhere (any futures-io stream): its opening handshake
    /// runs on first use, or in [`ServerConnection::handshake`].
    ///
    /// ```
    /// # smol::block_on(async {
    /// use async_io::Async;
    /// use tickwire::futures_io::ws::ServerBuilder;
    /// use tickwire::ws::Message;
    ///
    /// let listener = Async::<std::net::TcpListener>::bind(([127, 0, 0, 1], 0))?;
    /// # let url = format!("ws://{}/", listener.get_ref().local_addr()?);
    /// # std::thread::spawn(move || -> Result<(), tickwire::ws::Error> {
    /// #     let mut ws = tickwire::ws::Client::connect(&url)?;
    /// #     ws.send_text("hi")?;
    /// #     while ws.recv()?.is_some() {}
    /// #     Ok(())
    /// # });
    /// let (tcp, _) = listener.accept().await?;
    /// let mut conn = ServerBuilder::new().protocol("v1").accept_stream(tcp)?;
    /// assert_eq!(conn.recv().await?, Some(Message::Text("hi")));
    /// # Ok::<(), tickwire::ws::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn accept_stream<T>(&self, stream: T) -> Result<ServerConnection<T, Tm>, Error>
    where
        T: AsyncRead + AsyncWrite + Unpin,
    {
        self.accept_from(stream, Peer::Client(None))
    }

    fn accept_from<T>(&self, stream: T, peer: Peer) -> Result<ServerConnection<T, Tm>, Error>
    where
        T: AsyncRead + AsyncWrite + Unpin,
    {
        let stream = Compat::new(stream);
        #[cfg(feature = "tls")]
        let stream = match self.inner.tls_config() {
            Some(config) => IoStream::Tls(Box::new(
                crate::tls::TlsStream::server(stream, config)
                    .map_err(|e| peer.name_in(e.into()))?,
            )),
            None => IoStream::Plain(stream),
        };
        #[cfg(not(feature = "tls"))]
        let stream = IoStream::Plain(stream);
        let conn = self
            .inner
            .conn_over(stream, false, peer.clone())
            .map_err(|e| peer.name_in(e.into()))?;
        Ok(ServerConnection {
            d: Driver::new(conn),
            shared: self.inner.clone(),
            path: String::new(),
        })
    }
}

/// A WebSocket server on async-io's reactor: accepts TCP connections; each
/// [`ServerConnection`] runs its opening handshake on first use.
#[derive(Debug)]
pub struct Server<Tm = async_io::Timer> {
    listener: Async<TcpListener>,
    shared: ServerBuilder<Tm>,
}

impl Server {
    /// Listen on `addr` with default settings.
    ///
    /// ```
    /// # smol::block_on(async {
    /// use tickwire::futures_io::ws::{Client, Server};
    /// use tickwire::ws::Message;
    ///
    /// let mut server = Server::bind("127.0.0.1:0")?;
    /// let addr = server.local_addr()?;
    /// let echo = smol::spawn(async move {
    ///     let mut conn = server.accept().await?;
    ///     while let Some(()) = conn
    ///         .recv_with(|msg, tx| match msg {
    ///             Message::Text(t) => tx.send_text(t),
    ///             _ => Ok(()),
    ///         })
    ///         .await?
    ///     {}
    ///     Ok::<(), tickwire::ws::Error>(())
    /// });
    /// let tcp = tickwire::futures_io::TcpStream::connect(addr).await?;
    /// let mut client = Client::connect_with(tcp, &format!("ws://{addr}/")).await?;
    /// client.send_text("hello").await?;
    /// assert_eq!(client.recv().await?, Some(Message::Text("hello")));
    /// client.close(tickwire::ws::CloseCode::NORMAL, "").await?;
    /// while client.recv().await?.is_some() {}
    /// echo.await?;
    /// # Ok::<(), tickwire::ws::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn bind(addr: impl ToSocketAddrs) -> Result<Server, Error> {
        ServerBuilder::new().bind(addr)
    }

    /// Settings for a server.
    ///
    /// ```
    /// # smol::block_on(async {
    /// use std::time::Duration;
    ///
    /// let server = tickwire::futures_io::ws::Server::builder()
    ///     .handshake_timeout(Duration::from_secs(2))
    ///     .bind("127.0.0.1:0")?;
    /// # Ok::<(), tickwire::ws::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn builder() -> ServerBuilder {
        ServerBuilder::new()
    }
}

impl<Tm: Timer> Server<Tm> {
    /// Wait for the next TCP connection; its opening handshake runs on first use (so
    /// a slow client holds up only its own connection). `TCP_NODELAY` is set, as on
    /// every connection of this crate.
    ///
    /// ```
    /// # smol::block_on(async {
    /// use tickwire::futures_io::ws::Server;
    /// use tickwire::ws::Message;
    ///
    /// let mut server = Server::bind("127.0.0.1:0")?;
    /// # let url = format!("ws://{}/", server.local_addr()?);
    /// # std::thread::spawn(move || -> Result<(), tickwire::ws::Error> {
    /// #     let mut ws = tickwire::ws::Client::connect(&url)?;
    /// #     ws.send_text("hi")?;
    /// #     while ws.recv()?.is_some() {}
    /// #     Ok(())
    /// # });
    /// let mut conn = server.accept().await?;
    /// assert_eq!(conn.recv().await?, Some(Message::Text("hi")));
    /// # Ok::<(), tickwire::ws::Error>(())
    /// # }).unwrap();
    /// ```
    pub async fn accept(
        &mut self,
    ) -> Result<ServerConnection<crate::futures_io::TcpStream, Tm>, Error> {
        let (tcp, addr) = self.listener.accept().await?;
        tcp.get_ref().set_nodelay(true)?;
        let tcp = crate::futures_io::TcpStream::from(tcp);
        self.shared.accept_from(tcp, Peer::Client(Some(addr)))
    }

    /// The address the server listens on.
    ///
    /// ```
    /// # smol::block_on(async {
    /// let server = tickwire::futures_io::ws::Server::bind("127.0.0.1:0")?;
    /// assert!(server.local_addr()?.ip().is_loopback());
    /// # Ok::<(), tickwire::ws::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.get_ref().local_addr()
    }
}

/// An accepted async WebSocket connection over a futures-io stream (server role:
/// frames sent are not masked): the API of [`Client`](super::Client), plus the
/// opening handshake, which runs on first use (or in [`handshake`](Self::handshake)).
#[derive(Debug)]
pub struct ServerConnection<T = crate::futures_io::TcpStream, Tm = async_io::Timer> {
    d: Driver<T, NoMask, Tm>,
    shared: Arc<ws::ServerBuilder>,
    path: String,
}

async_api!(ServerConnection, NoMask);

impl<T, Tm> ServerConnection<T, Tm>
where
    T: AsyncRead + AsyncWrite + Unpin,
    Tm: Timer,
{
    /// Run the opening handshake to its end (handshake timeout; the `101` is written);
    /// a no-op once done. A bad request is refused with the codec's answer (400, 426,
    /// ...), a request the `on_upgrade` hook refuses with its status and body; both
    /// are reported as [`Error::Handshake`].
    ///
    /// ```
    /// # smol::block_on(async {
    /// # let (mut client, mut server) = tickwire::futures_io::ws::doc_pair().await?;
    /// server.handshake().await?; // now the request can be looked at
    /// assert_eq!(server.path(), "/feed");
    /// # Ok::<(), tickwire::ws::Error>(())
    /// # }).unwrap();
    /// ```
    pub async fn handshake(&mut self) -> Result<(), Error> {
        if !self.is_handshaking() {
            return Ok(());
        }
        let shared = &self.shared;
        let path = &mut self.path;
        self.d.handshake(|ws| shared.upgrade(ws, path)).await
    }

    /// The request target of the opening handshake (`/path?query`; empty before).
    ///
    /// ```
    /// # smol::block_on(async {
    /// # let (mut client, mut server) = tickwire::futures_io::ws::doc_pair().await?;
    /// server.handshake().await?;
    /// assert_eq!(server.path(), "/feed");
    /// # Ok::<(), tickwire::ws::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The subprotocol chosen in the handshake.
    ///
    /// ```
    /// # smol::block_on(async {
    /// # let (mut client, mut server) = tickwire::futures_io::ws::doc_pair().await?;
    /// server.handshake().await?;
    /// assert_eq!(server.protocol(), None);
    /// # Ok::<(), tickwire::ws::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn protocol(&self) -> Option<&str> {
        self.d.conn.ws.protocol()
    }

    /// The permessage-deflate parameters agreed on in the handshake (feature
    /// `deflate`); `None`: messages go uncompressed.
    ///
    /// ```
    /// # smol::block_on(async {
    /// # let (mut client, mut server) = tickwire::futures_io::ws::doc_pair().await?;
    /// server.handshake().await?;
    /// assert!(server.deflate().is_none()); // the client offered none
    /// # Ok::<(), tickwire::ws::Error>(())
    /// # }).unwrap();
    /// ```
    #[cfg(feature = "deflate")]
    pub fn deflate(&self) -> Option<tickwire_codec::ws::deflate::Negotiated> {
        self.d.conn.ws.deflate()
    }

    /// Whether the opening handshake is still going on.
    ///
    /// ```
    /// # smol::block_on(async {
    /// # let (mut client, mut server) = tickwire::futures_io::ws::doc_pair().await?;
    /// server.handshake().await?; // done already here: a no-op
    /// assert!(!server.is_handshaking());
    /// # Ok::<(), tickwire::ws::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn is_handshaking(&self) -> bool {
        self.d.conn.ws.state() == tickwire_codec::ws::State::Handshake
    }

    /// The sizes of the read and write buffers now, in bytes: they start at
    /// [`ServerBuilder::initial_buffer_size`] and grow on demand up to the configured
    /// sizes.
    ///
    /// ```
    /// # smol::block_on(async {
    /// # let (mut client, mut server) = tickwire::futures_io::ws::doc_pair().await?;
    /// let (read, write) = server.buffer_sizes();
    /// assert!(read > 0 && write > 0);
    /// # Ok::<(), tickwire::ws::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn buffer_sizes(&self) -> (usize, usize) {
        (
            self.d.conn.bufs.read_capacity(),
            self.d.conn.bufs.write_capacity(),
        )
    }

    /// Whether the opening handshake is still to run (`established` runs it).
    #[inline]
    fn handshaking(&self) -> bool {
        self.is_handshaking()
    }

    async fn established(&mut self) -> Result<(), Error> {
        self.handshake().await
    }

    pub(super) fn into_driver(self) -> Driver<T, NoMask, Tm> {
        self.d
    }
}
