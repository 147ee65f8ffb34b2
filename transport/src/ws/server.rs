//! `ws::Server`: accept TCP connections, run the server opening handshake through the
//! codec (refusing bad requests with its 4xx answer), then the shared connection API in
//! the server role (unmasked sends; the codec insists on masked receives).
//!
//! The handshake is the codec's, driven on readiness, so one thread can serve many
//! connections that are still handshaking; `accept` never runs it.

use std::io;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::time::Instant;

use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token};
use tickwire_codec::rand::NoMask;
use tickwire_codec::ws::connection::CONTROL_ROOM;
use tickwire_codec::ws::reader::READER_OVERHEAD;
use tickwire_codec::ws::{Connection, ConnectionError, Message, State};

use super::api::{builder_options, connection_api};
use super::conn::{Conn, Ws};
use super::error::{Error, Peer};
use super::grow::Buffers;
use super::options::Options;
use super::stream::Stream;
use super::upgrade::{self, Decision, OnUpgrade, UpgradeRequest};
use crate::clock;
use crate::net::{NetStream, ServerTls};
use crate::socket::socket_options;
#[cfg(feature = "tls")]
use crate::tls::TlsServerConfig;

/// Settings for a [`Server`] and the connections it accepts.
///
/// Defaults: 1 MiB read and write buffers per connection (so a 1 MiB message limit:
/// raise it with `max_message_size`), a 10 s handshake timeout, no read or write
/// timeout, pings answered automatically.
#[derive(Debug, Clone, Default)]
pub struct ServerBuilder {
    pub(crate) opts: Options,
    protocols: Vec<String>,
    headers: Vec<(String, String)>,
    tls: ServerTls,
    on_upgrade: OnUpgrade,
}

builder_options!(ServerBuilder);
socket_options!(ServerBuilder, opts.socket);

impl ServerBuilder {
    /// Default settings.
    ///
    /// ```
    /// use tickwire::ws::ServerBuilder;
    ///
    /// let settings = ServerBuilder::new().max_message_size(64 << 10);
    /// let a = settings.bind("127.0.0.1:0")?; // one builder, many listeners (`&self`)
    /// let b = settings.bind("127.0.0.1:0")?;
    /// assert_ne!(a.local_addr()?, b.local_addr()?);
    /// # Ok::<(), tickwire::ws::Error>(())
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Support a subprotocol. The first supported one (in the order they were added)
    /// that the client offers is chosen.
    pub fn protocol(mut self, protocol: &str) -> Self {
        self.protocols.push(protocol.to_owned());
        self
    }

    /// Add a header to every `101 Switching Protocols` answer.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Decide each upgrade request with `hook`: it sees the request (path and query,
    /// headers such as `Origin` and `Authorization`, the offered subprotocols) and
    /// answers with a [`Decision`]: accept (choosing a subprotocol, adding response
    /// headers to the builder's) or refuse with a status, headers and a body, which the
    /// codec writes before closing. It runs on the thread that drives the connection's
    /// handshake. Without a hook every valid request is accepted.
    ///
    /// ```
    /// use tickwire::ws::{Client, Decision, Error, HandshakeError, Server};
    ///
    /// let mut server = Server::builder()
    ///     .on_upgrade(|req| {
    ///         if req.header("authorization") != Some(b"Bearer s3cret") {
    ///             return Decision::refuse(401, "no entry");
    ///         }
    ///         match req.protocols().find(|p| *p == "v2.feed") {
    ///             Some(p) => Decision::accept().protocol(p),
    ///             None => Decision::accept(),
    ///         }
    ///     })
    ///     .bind("127.0.0.1:0")?;
    /// let url = format!("ws://{}/feed", server.local_addr()?);
    /// let peer = std::thread::spawn(move || {
    ///     let mut refused = server.accept()?;
    ///     assert!(matches!(
    ///         refused.handshake(),
    ///         Err(Error::Handshake { error: HandshakeError::Refused(401), .. })
    ///     ));
    ///     server.accept()?.handshake()
    /// });
    /// let err = Client::connect(&url).unwrap_err();
    /// assert!(matches!(err, Error::Handshake { error: HandshakeError::BadStatus(401), .. }));
    /// let client = Client::builder()
    ///     .header("Authorization", "Bearer s3cret")
    ///     .protocol("v2.feed")
    ///     .connect(&url)?;
    /// assert_eq!(client.protocol(), Some("v2.feed"));
    /// peer.join().unwrap()?;
    /// # Ok::<(), Error>(())
    /// ```
    pub fn on_upgrade(
        mut self,
        hook: impl Fn(&UpgradeRequest<'_>) -> Decision + Send + Sync + 'static,
    ) -> Self {
        self.on_upgrade = OnUpgrade(Some(Arc::new(hook)));
        self
    }

    /// Accept TLS connections only (`wss://`), with this certificate and settings.
    /// The TLS handshake runs inside the opening handshake, under its timeout.
    #[cfg(feature = "tls")]
    pub fn tls(mut self, config: TlsServerConfig) -> Self {
        self.tls = Some(config);
        self
    }

    /// The size connections' read and write buffers start at (default 4 KiB). They grow
    /// on demand, doubling, up to [`read_buffer_size`](Self::read_buffer_size) and
    /// [`write_buffer_size`](Self::write_buffer_size) (the limits are theirs): when a
    /// frame or a message does not fit, or a read fills all the room (a stream). An
    /// evented connection gives the growth back when a `try_recv` finds it idle, so an
    /// idle subscriber holds a few KiB. `usize::MAX`: full-size buffers from the start.
    pub fn initial_buffer_size(mut self, bytes: usize) -> Self {
        self.opts.initial_buffer_size = bytes;
        self
    }

    /// Listen on the first address `addr` resolves to. Takes `&self`, as every builder's
    /// finishing method (`connect`, `bind`, `listener`, `accept_stream`, `build`): one
    /// builder serves many listeners.
    ///
    /// ```
    /// use tickwire::ws::{Message, Server};
    ///
    /// let mut server = Server::builder().protocol("v1").bind("127.0.0.1:0")?;
    /// # let url = format!("ws://{}/", server.local_addr()?);
    /// # std::thread::spawn(move || -> Result<(), tickwire::ws::Error> {
    /// #     let mut ws = tickwire::ws::Client::connect(&url)?;
    /// #     ws.send_text("hi")?;
    /// #     while ws.recv()?.is_some() {}
    /// #     Ok(())
    /// # });
    /// let mut conn = server.accept()?;
    /// assert_eq!(conn.recv()?, Some(Message::Text("hi")));
    /// # Ok::<(), tickwire::ws::Error>(())
    /// ```
    pub fn bind(&self, addr: impl ToSocketAddrs) -> Result<Server, Error> {
        let resolve = |source| Error::Resolve {
            host: "the listen address".to_owned(),
            source,
        };
        let addr = addr
            .to_socket_addrs()
            .map_err(|e| resolve(Some(e)))?
            .next()
            .ok_or_else(|| resolve(None))?;
        Ok(self.serve(TcpListener::bind(addr)?))
    }

    /// Serve on a listener the caller made (it is put in non-blocking mode).
    ///
    /// ```
    /// use std::net::TcpListener;
    /// use tickwire::ws::{Message, Server};
    ///
    /// let listener = TcpListener::bind("127.0.0.1:0")?; // with options of your own
    /// let mut server = Server::builder().listener(listener)?;
    /// # let url = format!("ws://{}/", server.local_addr()?);
    /// # std::thread::spawn(move || -> Result<(), tickwire::ws::Error> {
    /// #     let mut ws = tickwire::ws::Client::connect(&url)?;
    /// #     ws.send_text("hi")?;
    /// #     while ws.recv()?.is_some() {}
    /// #     Ok(())
    /// # });
    /// let mut conn = server.accept()?;
    /// assert_eq!(conn.recv()?, Some(Message::Text("hi")));
    /// # Ok::<(), tickwire::ws::Error>(())
    /// ```
    pub fn listener(&self, listener: std::net::TcpListener) -> Result<Server, Error> {
        listener.set_nonblocking(true)?;
        Ok(self.serve(TcpListener::from_std(listener)))
    }

    /// The crate's own adapters (tokio): take a mio stream, in evented mode.
    #[cfg(feature = "tokio")]
    pub(crate) fn accept_evented(&self, stream: TcpStream) -> Result<ServerConnection, Error> {
        let peer = Peer::client_of(&stream);
        ServerConnection::new(stream, Arc::new(self.clone()), false, peer)
    }

    /// A server connection's driver over `stream`, its handshake to come: small buffers
    /// first, growing on demand up to the configured sizes, with the limits of the
    /// full-size ones (`super::grow`). Every driver of a server connection (blocking,
    /// evented, tokio, futures-io) starts here.
    pub(crate) fn conn_over<S: Stream>(
        &self,
        stream: S,
        blocking: bool,
        peer: Peer,
    ) -> io::Result<Conn<S, NoMask>> {
        let opts = &self.opts;
        let (read_max, write_max) = (opts.read_capacity(), opts.write_capacity());
        let read = opts
            .initial_buffer_size
            .clamp(READER_OVERHEAD + 1024, read_max);
        let write = opts
            .initial_buffer_size
            .clamp(256 + CONTROL_ROOM, write_max);
        let settings = opts.settings();
        let mut ws = Connection::server(vec![0u8; read], vec![0u8; write], &settings, clock::now());
        ws.reader_mut().set_limits(settings.limits, read_max);
        let mut conn = Conn::new(stream, ws, opts, blocking, peer)?;
        conn.bufs = Buffers::growing(read, write, read_max, write_max);
        Ok(conn)
    }

    /// One step of the server opening handshake with this builder's rules (the
    /// subprotocols, headers and `on_upgrade` hook): the codec's
    /// [`handle_upgrade`](Connection::handle_upgrade), the request target kept in `path`.
    pub(crate) fn upgrade(
        &self,
        ws: &mut Ws<NoMask>,
        path: &mut String,
    ) -> Result<bool, ConnectionError> {
        // The hook's decision and the header list the codec's answer borrows.
        let mut decision = None;
        let mut headers = Vec::new();
        ws.handle_upgrade(|req| {
            *path = req.path.to_owned();
            let fallback = self
                .protocols
                .iter()
                .find(|p| req.protocols().any(|offered| offered == p.as_str()))
                .map(String::as_str);
            let decision: &Decision = match &self.on_upgrade.0 {
                Some(hook) => decision.insert(hook(req)),
                None => decision.insert(Decision::accept()),
            };
            upgrade::answer(decision, fallback, &mut headers, &self.headers)
        })
    }

    /// TLS settings for accepted connections (`None`: plain TCP).
    #[cfg(all(feature = "futures-io", feature = "tls"))]
    pub(crate) fn tls_config(&self) -> Option<&TlsServerConfig> {
        self.tls.as_ref()
    }

    fn serve(&self, listener: TcpListener) -> Server {
        Server {
            listener,
            shared: Arc::new(self.clone()),
            waiter: None,
        }
    }

    /// Take a stream accepted elsewhere: a blocking-mode connection whose opening
    /// handshake runs on first use, as [`Server::accept`]'s (`set_blocking(false)` for
    /// evented mode, then [`try_handshake`](ServerConnection::try_handshake) or
    /// `try_recv` on readiness).
    ///
    /// ```
    /// use std::net::TcpListener;
    /// use tickwire::ws::{Message, ServerBuilder};
    ///
    /// let settings = ServerBuilder::new().protocol("v1");
    /// let listener = TcpListener::bind("127.0.0.1:0")?;
    /// # let url = format!("ws://{}/", listener.local_addr()?);
    /// # std::thread::spawn(move || -> Result<(), tickwire::ws::Error> {
    /// #     let mut ws = tickwire::ws::Client::connect(&url)?;
    /// #     ws.send_text("hi")?;
    /// #     while ws.recv()?.is_some() {}
    /// #     Ok(())
    /// # });
    /// let (tcp, _) = listener.accept()?;
    /// let mut conn = settings.accept_stream(tcp)?;
    /// assert_eq!(conn.recv()?, Some(Message::Text("hi")));
    /// # Ok::<(), tickwire::ws::Error>(())
    /// ```
    pub fn accept_stream(&self, stream: std::net::TcpStream) -> Result<ServerConnection, Error> {
        stream.set_nonblocking(true)?;
        let stream = TcpStream::from_std(stream);
        let peer = Peer::client_of(&stream);
        ServerConnection::new(stream, Arc::new(self.clone()), true, peer)
    }
}

/// A WebSocket server: a listener and the settings for its connections.
#[derive(Debug)]
pub struct Server {
    listener: TcpListener,
    shared: Arc<ServerBuilder>,
    waiter: Option<(Poll, Events)>,
}

impl Server {
    /// Listen on `addr` with default settings.
    ///
    /// ```
    /// use tickwire::ws::{Message, Server};
    ///
    /// let mut server = Server::bind("127.0.0.1:0")?; // port 0: any free port
    /// # let url = format!("ws://{}/", server.local_addr()?);
    /// # std::thread::spawn(move || -> Result<(), tickwire::ws::Error> {
    /// #     let mut ws = tickwire::ws::Client::connect(&url)?;
    /// #     ws.send_text("hi")?;
    /// #     while ws.recv()?.is_some() {}
    /// #     Ok(())
    /// # });
    /// let mut conn = server.accept()?;
    /// assert_eq!(conn.recv()?, Some(Message::Text("hi")));
    /// # Ok::<(), tickwire::ws::Error>(())
    /// ```
    pub fn bind(addr: impl ToSocketAddrs) -> Result<Server, Error> {
        ServerBuilder::new().bind(addr)
    }

    /// Settings for a server.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickwire::ws::{Message, Server};
    ///
    /// let mut server = Server::builder()
    ///     .max_message_size(64 << 10)
    ///     .read_timeout(Some(Duration::from_secs(60)))
    ///     .bind("127.0.0.1:0")?;
    /// # let url = format!("ws://{}/", server.local_addr()?);
    /// # std::thread::spawn(move || -> Result<(), tickwire::ws::Error> {
    /// #     let mut ws = tickwire::ws::Client::connect(&url)?;
    /// #     ws.send_text("hi")?;
    /// #     while ws.recv()?.is_some() {}
    /// #     Ok(())
    /// # });
    /// let mut conn = server.accept()?;
    /// assert_eq!(conn.recv()?, Some(Message::Text("hi")));
    /// # Ok::<(), tickwire::ws::Error>(())
    /// ```
    pub fn builder() -> ServerBuilder {
        ServerBuilder::new()
    }

    /// The listening address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Blocking: wait for a connection. It is in blocking mode with its opening
    /// handshake still to run: the first `recv` or send (or
    /// [`ServerConnection::handshake`]) runs it on the caller's thread, so a slow client
    /// never holds up `accept`. Hand each connection to its own thread:
    ///
    /// ```no_run
    /// use tickwire::ws::{Message, Server};
    ///
    /// let mut server = Server::bind("127.0.0.1:9002")?;
    /// loop {
    ///     let mut conn = server.accept()?;
    ///     std::thread::spawn(move || {
    ///         // The handshake runs here (a refused one is an error: the peer got its
    ///         // 4xx); each echo is written from the received message, no copy.
    ///         while let Ok(Some(())) = conn.recv_with(|msg, tx| match msg {
    ///             Message::Text(t) => tx.send_text(t),
    ///             Message::Binary(b) => tx.send_binary(b),
    ///             _ => Ok(()),
    ///         }) {}
    ///     });
    /// }
    /// # Ok::<(), tickwire::ws::Error>(())
    /// ```
    pub fn accept(&mut self) -> Result<ServerConnection, Error> {
        loop {
            match self.listener.accept() {
                Ok((stream, addr)) => {
                    let peer = Peer::Client(Some(addr));
                    return ServerConnection::new(stream, self.shared.clone(), true, peer);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.wait()?,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Evented: accept one pending connection without waiting. It is in evented mode with
    /// its handshake pending: register it and drive it with `try_handshake` or
    /// `try_recv` on readiness.
    ///
    /// ```
    /// use tickwire::ws::Server;
    ///
    /// let mut server = Server::bind("127.0.0.1:0")?;
    /// assert!(server.try_accept()?.is_none()); // nobody yet (register the server in a mio::Poll)
    /// # let url = format!("ws://{}/", server.local_addr()?);
    /// # std::thread::spawn(move || -> Result<(), tickwire::ws::Error> {
    /// #     let mut ws = tickwire::ws::Client::connect(&url)?;
    /// #     ws.send_text("hi")?;
    /// #     while ws.recv()?.is_some() {}
    /// #     Ok(())
    /// # });
    /// let mut conn = loop {
    ///     // In a real loop this runs on each readable event of the listener.
    ///     if let Some(conn) = server.try_accept()? {
    ///         break conn;
    ///     }
    ///     std::thread::yield_now();
    /// };
    /// while conn.try_recv()?.is_none() { std::thread::yield_now() } // handshake, then "hi"
    /// # Ok::<(), tickwire::ws::Error>(())
    /// ```
    pub fn try_accept(&mut self) -> Result<Option<ServerConnection>, Error> {
        loop {
            return match self.listener.accept() {
                Ok((stream, addr)) => Ok(Some(ServerConnection::new(
                    stream,
                    self.shared.clone(),
                    false,
                    Peer::Client(Some(addr)),
                )?)),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(None),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => Err(e.into()),
            };
        }
    }

    /// Take a stream accepted elsewhere (see [`ServerBuilder::accept_stream`]).
    ///
    /// ```
    /// use std::net::TcpListener;
    /// use tickwire::ws::{Message, Server};
    ///
    /// let server = Server::builder().max_message_size(64 << 10).bind("127.0.0.1:0")?;
    /// // A socket accepted elsewhere, served with this server's settings.
    /// let listener = TcpListener::bind("127.0.0.1:0")?;
    /// # let url = format!("ws://{}/", listener.local_addr()?);
    /// # std::thread::spawn(move || -> Result<(), tickwire::ws::Error> {
    /// #     let mut ws = tickwire::ws::Client::connect(&url)?;
    /// #     ws.send_text("hi")?;
    /// #     while ws.recv()?.is_some() {}
    /// #     Ok(())
    /// # });
    /// let (tcp, _) = listener.accept()?;
    /// let mut conn = server.accept_stream(tcp)?;
    /// assert_eq!(conn.recv()?, Some(Message::Text("hi")));
    /// # Ok::<(), tickwire::ws::Error>(())
    /// ```
    pub fn accept_stream(&self, stream: std::net::TcpStream) -> Result<ServerConnection, Error> {
        stream.set_nonblocking(true)?;
        let stream = TcpStream::from_std(stream);
        let peer = Peer::client_of(&stream);
        ServerConnection::new(stream, self.shared.clone(), true, peer)
    }

    /// The crate's own adapters (tokio): take a mio stream with this server's settings,
    /// in evented mode.
    #[cfg(feature = "tokio")]
    pub(crate) fn accept_evented(&self, stream: TcpStream) -> Result<ServerConnection, Error> {
        let peer = Peer::client_of(&stream);
        ServerConnection::new(stream, self.shared.clone(), false, peer)
    }

    /// The listener's mio socket (for the tokio adapter's readiness).
    #[cfg(feature = "tokio")]
    pub(crate) fn mio_listener(&self) -> &TcpListener {
        &self.listener
    }

    fn wait(&mut self) -> Result<(), Error> {
        if self.waiter.is_none() {
            let poll = Poll::new()?;
            poll.registry()
                .register(&mut self.listener, Token(0), Interest::READABLE)?;
            self.waiter = Some((poll, Events::with_capacity(8)));
        }
        if let Some((poll, events)) = &mut self.waiter {
            match poll.poll(events, None) {
                Err(e) if e.kind() != io::ErrorKind::Interrupted => return Err(e.into()),
                _ => {}
            }
        }
        Ok(())
    }
}

/// Evented mode: register the listener and call `try_accept` when it is readable.
/// (Do not mix with the blocking `accept`, which uses a poll of its own.)
impl mio::event::Source for Server {
    fn register(
        &mut self,
        registry: &mio::Registry,
        token: Token,
        interests: Interest,
    ) -> io::Result<()> {
        self.listener.register(registry, token, interests)
    }

    fn reregister(
        &mut self,
        registry: &mio::Registry,
        token: Token,
        interests: Interest,
    ) -> io::Result<()> {
        self.listener.reregister(registry, token, interests)
    }

    fn deregister(&mut self, registry: &mio::Registry) -> io::Result<()> {
        self.listener.deregister(registry)
    }
}

/// An accepted WebSocket connection (server role: frames sent are not masked).
///
/// Same API as [`Client`](super::Client), plus the opening handshake, which runs on the
/// thread that uses the connection, never in `accept`: blocking mode finishes it in the
/// first [`recv`](Self::recv) or send (or call [`handshake`](Self::handshake)); in evented
/// mode [`try_recv`](Self::try_recv) drives it (returning `Ok(None)` until messages flow).
#[derive(Debug)]
pub struct ServerConnection {
    pub(crate) conn: Conn<NetStream, NoMask>,
    shared: Arc<ServerBuilder>,
    path: String,
}

connection_api!(ServerConnection);

impl ServerConnection {
    /// A connection over `stream` from `peer`, its handshake to come.
    fn new(
        stream: TcpStream,
        shared: Arc<ServerBuilder>,
        blocking: bool,
        peer: Peer,
    ) -> Result<Self, Error> {
        Self::start(stream, shared, blocking, peer.clone()).map_err(|e| peer.name_in(e))
    }

    /// [`new`](Self::new), its error not named yet.
    fn start(
        stream: TcpStream,
        shared: Arc<ServerBuilder>,
        blocking: bool,
        peer: Peer,
    ) -> Result<Self, Error> {
        shared.opts.socket.apply(&stream)?;
        let stream = NetStream::server(stream, &shared.tls)?;
        let conn = shared.conn_over(stream, blocking, peer)?;
        Ok(ServerConnection {
            conn,
            shared,
            path: String::new(),
        })
    }

    /// The request target of the opening handshake (`/path?query`; empty before).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The subprotocol chosen in the handshake.
    pub fn protocol(&self) -> Option<&str> {
        self.conn.ws.protocol()
    }

    /// The permessage-deflate parameters agreed on in the handshake (feature
    /// `deflate`); `None`: messages go uncompressed.
    ///
    /// ```
    /// # let (client, server) = tickwire::ws::doc_pair()?;
    /// // The doc pair was built without `deflate` on the builders: no compression.
    /// assert!(client.deflate().is_none() && server.deflate().is_none());
    /// # Ok::<(), tickwire::ws::Error>(())
    /// ```
    #[cfg(feature = "deflate")]
    pub fn deflate(&self) -> Option<tickwire_codec::ws::deflate::Negotiated> {
        self.conn.ws.deflate()
    }

    /// The sizes of the read and write buffers now, in bytes: they start at
    /// [`ServerBuilder::initial_buffer_size`], grow on demand up to the configured
    /// sizes and, in evented mode, shrink back when the connection is idle.
    pub fn buffer_sizes(&self) -> (usize, usize) {
        (
            self.conn.bufs.read_capacity(),
            self.conn.bufs.write_capacity(),
        )
    }

    /// Whether the opening handshake is still going on.
    pub fn is_handshaking(&self) -> bool {
        self.conn.ws.state() == State::Handshake
    }

    /// Run the opening handshake to its end (handshake timeout; the `101` is written),
    /// in blocking mode; a no-op once done. A bad request is refused with the codec's
    /// answer (400, 426, ...), a request the [`on_upgrade`](ServerBuilder::on_upgrade)
    /// hook refuses with its status and body; both are reported as
    /// [`Error::Handshake`]. The first `recv` or send runs it too; call it to see the
    /// request ([`path`](Self::path), [`protocol`](Self::protocol)) first. In evented
    /// mode this is one step, [`Error::HandshakeInProgress`] until it is done: use
    /// [`try_handshake`](Self::try_handshake).
    ///
    /// ```
    /// use tickwire::ws::{Message, Server};
    ///
    /// let mut server = Server::bind("127.0.0.1:0")?;
    /// # let url = format!("ws://{}/", server.local_addr()?);
    /// # std::thread::spawn(move || -> Result<(), tickwire::ws::Error> {
    /// #     let mut ws = tickwire::ws::Client::connect(&url)?;
    /// #     ws.send_text("hi")?;
    /// #     while ws.recv()?.is_some() {}
    /// #     Ok(())
    /// # });
    /// let mut conn = server.accept()?;
    /// conn.handshake()?; // now the request can be looked at
    /// assert_eq!(conn.path(), "/");
    /// assert_eq!(conn.recv()?, Some(Message::Text("hi")));
    /// # Ok::<(), tickwire::ws::Error>(())
    /// ```
    pub fn handshake(&mut self) -> Result<(), Error> {
        if self.try_handshake()? {
            Ok(())
        } else {
            Err(Error::HandshakeInProgress)
        }
    }

    /// Never waits (evented mode): drive the opening handshake with what arrived;
    /// `Ok(true)` once done, `Ok(false)` to continue on the next readiness event. In
    /// blocking mode this is [`handshake`](Self::handshake).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickwire::ws::{Client, Message, Server};
    ///
    /// let mut server = Server::bind("127.0.0.1:0")?;
    /// let url = format!("ws://{}/", server.local_addr()?);
    /// let peer = std::thread::spawn(move || -> Result<(), tickwire::ws::Error> {
    ///     let mut c = Client::connect(&url)?;
    ///     c.send_text("hi")?;
    ///     assert_eq!(c.recv()?, Some(Message::Text("hi")));
    ///     Ok(())
    /// });
    /// let mut conn = server.accept()?;
    /// conn.set_blocking(false)?;
    /// // An evented loop waits for readiness in its own `mio::Poll`; a nap stands in.
    /// let nap = || std::thread::sleep(Duration::from_millis(1));
    /// while !conn.try_handshake()? {
    ///     nap();
    /// }
    /// // Echo one message from the read buffer, then write out what is left.
    /// while conn
    ///     .try_recv_with(|msg, tx| match msg {
    ///         Message::Text(t) => tx.send_text(t),
    ///         _ => Ok(()),
    ///     })?
    ///     .is_none()
    /// {
    ///     nap();
    /// }
    /// while conn.wants_write() {
    ///     conn.flush()?;
    /// }
    /// peer.join().unwrap()?;
    /// # Ok::<(), tickwire::ws::Error>(())
    /// ```
    pub fn try_handshake(&mut self) -> Result<bool, Error> {
        if !self.is_handshaking() {
            // Sends after the connection ended are refused by the codec.
            return Ok(true);
        }
        let shared = &self.shared;
        let path = &mut self.path;
        let advance = |ws: &mut Ws<NoMask>| shared.upgrade(ws, path);
        if self.conn.io.is_blocking() {
            self.conn.handshake_blocking(advance).map(|()| true)
        } else {
            self.conn.handshake_step(advance)
        }
    }

    pub(super) fn ready(&mut self) -> Result<(), Error> {
        if !self.is_handshaking() {
            // Sends after the connection ended are refused by the codec.
            return Ok(());
        }
        if self.conn.io.is_blocking() {
            self.handshake()
        } else {
            Err(Error::HandshakeInProgress)
        }
    }

    /// Blocking mode: finish the handshake if needed, then wait for the next message.
    /// Same contract as [`Client::recv`](super::Client::recv).
    ///
    /// ```
    /// # let (mut client, mut server) = tickwire::ws::doc_pair()?;
    /// use tickwire::ws::Message;
    ///
    /// client.send_text("order 1")?;
    /// if let Some(Message::Text(t)) = server.recv()? {
    ///     assert_eq!(t, "order 1"); // borrows the read buffer: no copy
    /// }
    /// # Ok::<(), tickwire::ws::Error>(())
    /// ```
    pub fn recv(&mut self) -> Result<Option<Message<'_>>, Error> {
        if !self.opened()? {
            return Ok(None);
        }
        self.conn.recv(true)
    }

    /// Never waits: drives the handshake first, then the next complete message, or
    /// `Ok(None)` when nothing more is available now (or the connection is closed).
    ///
    /// ```
    /// # let (mut client, mut server) = tickwire::ws::doc_pair()?;
    /// use tickwire::ws::Message;
    ///
    /// server.set_blocking(false)?; // evented: register it in your mio::Poll
    /// assert_eq!(server.try_recv()?, None);
    /// client.send_text("order 1")?;
    /// let got = loop {
    ///     // In a real loop this runs on each readable event.
    ///     if let Some(Message::Text(t)) = server.try_recv()? {
    ///         break t.len();
    ///     }
    ///     std::thread::yield_now();
    /// };
    /// assert_eq!(got, 7);
    /// # Ok::<(), tickwire::ws::Error>(())
    /// ```
    pub fn try_recv(&mut self) -> Result<Option<Message<'_>>, Error> {
        if !self.opened()? {
            return Ok(None);
        }
        self.conn.recv(false)
    }

    /// Whether messages flow: drives the handshake first (blocking mode: to its end).
    #[inline]
    fn opened(&mut self) -> Result<bool, Error> {
        // Open already (the common case): no call.
        if !self.is_handshaking() {
            return Ok(true);
        }
        self.try_handshake()
    }

    fn timeout_at_inner(&self) -> Option<Instant> {
        self.conn.timeout_at()
    }

    fn handle_timeout_inner(&mut self, now: Instant) -> Result<(), Error> {
        self.conn.handle_timeout(now)
    }
}
