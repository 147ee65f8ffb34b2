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
use tickwire_codec::ws::{Answer, Connection, Message, State};

use super::api::{builder_options, connection_api};
use super::conn::{Conn, Ws};
use super::error::Error;
use super::grow::Buffers;
use super::options::Options;
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
}

builder_options!(ServerBuilder);
socket_options!(ServerBuilder, opts.socket);

impl ServerBuilder {
    /// Default settings.
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

    /// Listen on the first address `addr` resolves to.
    pub fn bind(self, addr: impl ToSocketAddrs) -> Result<Server, Error> {
        let resolve = |source| Error::Resolve {
            host: "the listen address".to_owned(),
            source,
        };
        let addr = addr
            .to_socket_addrs()
            .map_err(|e| resolve(Some(e)))?
            .next()
            .ok_or_else(|| resolve(None))?;
        Ok(self.listener(TcpListener::bind(addr)?))
    }

    /// Serve on a listener the caller made.
    pub fn listener(self, listener: TcpListener) -> Server {
        Server {
            listener,
            shared: Arc::new(self),
            waiter: None,
        }
    }

    /// Take an accepted stream: an evented connection whose handshake is driven by
    /// `try_recv`/`handshake` on readiness (or call `set_blocking(true)` first).
    pub fn accept_stream(&self, stream: TcpStream) -> Result<ServerConnection, Error> {
        ServerConnection::new(stream, Arc::new(self.clone()), false)
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
    pub fn bind(addr: impl ToSocketAddrs) -> Result<Server, Error> {
        ServerBuilder::new().bind(addr)
    }

    /// Settings for a server.
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
    /// let mut server = tickwire::ws::Server::bind("127.0.0.1:9002")?;
    /// loop {
    ///     let mut conn = server.accept()?;
    ///     std::thread::spawn(move || {
    ///         // The handshake runs here; a refused one is an error (the peer got its 4xx).
    ///         loop {
    ///             let text = match conn.recv() {
    ///                 Ok(Some(tickwire::ws::Message::Text(t))) => t.to_owned(),
    ///                 Ok(Some(_)) => continue,
    ///                 _ => break,
    ///             };
    ///             if conn.send_text(&text).is_err() {
    ///                 break;
    ///             }
    ///         }
    ///     });
    /// }
    /// # Ok::<(), tickwire::ws::Error>(())
    /// ```
    pub fn accept(&mut self) -> Result<ServerConnection, Error> {
        loop {
            match self.listener.accept() {
                Ok((stream, _)) => {
                    return ServerConnection::new(stream, self.shared.clone(), true);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.wait()?,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Evented: accept one pending connection without waiting. It is in evented mode with
    /// its handshake pending: register it and drive it with `try_recv` on readiness.
    pub fn try_accept(&mut self) -> Result<Option<ServerConnection>, Error> {
        loop {
            return match self.listener.accept() {
                Ok((stream, _)) => Ok(Some(ServerConnection::new(
                    stream,
                    self.shared.clone(),
                    false,
                )?)),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(None),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => Err(e.into()),
            };
        }
    }

    /// Take a stream accepted elsewhere (see [`ServerBuilder::accept_stream`]).
    pub fn accept_stream(&self, stream: TcpStream) -> Result<ServerConnection, Error> {
        ServerConnection::new(stream, self.shared.clone(), false)
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
    fn new(stream: TcpStream, shared: Arc<ServerBuilder>, blocking: bool) -> Result<Self, Error> {
        shared.opts.socket.apply(&stream)?;
        let stream = NetStream::server(stream, &shared.tls)?;
        let opts = &shared.opts;
        // Small buffers first, growing on demand up to the configured sizes, with the
        // limits of the full-size ones (`super::grow`).
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
        let mut conn = Conn::new(stream, ws, opts, blocking)?;
        conn.bufs = Buffers::growing(read, write, read_max, write_max);
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

    /// Drive the opening handshake. Blocking mode: finish it (handshake timeout; the
    /// `101` is flushed) and return `Ok(true)`. Evented mode: `Ok(true)` once done,
    /// `Ok(false)` to continue on the next event. A bad request is refused with the
    /// codec's answer (400, 426, ...) and reported as [`Error::Handshake`].
    pub fn handshake(&mut self) -> Result<bool, Error> {
        let shared = &self.shared;
        let path = &mut self.path;
        let headers: Vec<(&str, &str)> = shared
            .headers
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        let advance = |ws: &mut Ws<NoMask>| {
            ws.handle_upgrade(|req| {
                *path = req.path.to_owned();
                let protocol = shared
                    .protocols
                    .iter()
                    .find(|p| req.protocols().any(|offered| offered == p.as_str()))
                    .map(String::as_str);
                Answer::Accept {
                    protocol,
                    headers: &headers,
                }
            })
        };
        if self.conn.io.is_blocking() {
            self.conn.handshake_blocking(advance)?;
            Ok(true)
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
            self.handshake().map(|_| ())
        } else {
            Err(Error::HandshakeInProgress)
        }
    }

    /// Blocking mode: finish the handshake if needed, then wait for the next message.
    /// Same contract as [`Client::recv`](super::Client::recv).
    pub fn recv(&mut self) -> Result<Option<Message<'_>>, Error> {
        if self.is_handshaking() && !self.handshake()? {
            return Ok(None);
        }
        self.conn.recv(true)
    }

    /// Never waits: drives the handshake first, then the next complete message, or
    /// `Ok(None)` when nothing more is available now (or the connection is closed).
    pub fn try_recv(&mut self) -> Result<Option<Message<'_>>, Error> {
        if self.is_handshaking() && !self.handshake()? {
            return Ok(None);
        }
        self.conn.recv(false)
    }

    fn timeout_at_inner(&self) -> Option<Instant> {
        self.conn.timeout_at()
    }

    fn handle_timeout_inner(&mut self, now: Instant) -> Result<(), Error> {
        self.conn.handle_timeout(now)
    }
}
