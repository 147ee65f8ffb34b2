//! `ws::Server`: accept TCP connections, run the server opening handshake through the
//! codec (refusing bad requests with its 4xx answer), then the shared connection API in
//! the server role (unmasked sends; the codec insists on masked receives).
//!
//! The handshake is a small state machine driven on readiness, so one thread can
//! serve many connections that are still handshaking.

use std::io;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::time::Instant;

use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token};
use tickwire_codec::buf::WriteBuf;
use tickwire_codec::rand::NoMask;
use tickwire_codec::ws::handshake::{self, HandshakeError};
use tickwire_codec::ws::{FrameWriter, Message, Role};

use super::api::{builder_options, connection_api};
use super::conn::{Conn, Options, ReadOutcome, read_once};
use super::error::Error;
use crate::net::{NetStream, ServerTls};
use crate::socket::socket_options;
#[cfg(feature = "tls")]
use crate::tls::TlsServerConfig;

/// Settings for a [`Server`] and the connections it accepts.
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

    /// Listen on the first address `addr` resolves to.
    pub fn bind(self, addr: impl ToSocketAddrs) -> Result<Server, Error> {
        let addr = addr.to_socket_addrs()?.next().ok_or(Error::NoAddress)?;
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

    /// Blocking: wait for a connection and complete its handshake (handshake timeout).
    /// The connection is in blocking mode. A refused or failed handshake is returned as
    /// an error (the peer got its 4xx); call again for the next connection.
    pub fn accept(&mut self) -> Result<ServerConnection, Error> {
        loop {
            match self.listener.accept() {
                Ok((stream, _)) => {
                    let mut conn = ServerConnection::new(stream, self.shared.clone(), true)?;
                    conn.handshake()?;
                    return Ok(conn);
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

/// Where the opening handshake stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hs {
    /// `got` request bytes read (into the reader's free space, not yet committed).
    Reading {
        got: usize,
    },
    /// The refusal is being written; then the handshake fails with this error.
    Rejecting(HandshakeError),
    Done,
    Failed,
}

/// An accepted WebSocket connection (server role: frames sent are not masked).
///
/// Same API as [`Client`](super::Client), plus the handshake: in evented mode
/// [`try_recv`](Self::try_recv) drives it (returning `Ok(None)` until messages flow),
/// or call [`handshake`](Self::handshake).
#[derive(Debug)]
pub struct ServerConnection {
    pub(crate) conn: Conn<NetStream, NoMask>,
    hs: Hs,
    hs_deadline: Instant,
    shared: Arc<ServerBuilder>,
    path: String,
    protocol: Option<usize>,
}

connection_api!(ServerConnection);

impl ServerConnection {
    fn new(stream: TcpStream, shared: Arc<ServerBuilder>, blocking: bool) -> Result<Self, Error> {
        shared.opts.socket.apply(&stream)?;
        let stream = NetStream::server(stream, &shared.tls)?;
        let conn = Conn::new(
            stream,
            Role::Server,
            FrameWriter::server(),
            &shared.opts,
            blocking,
        )?;
        let hs_deadline = Instant::now()
            .checked_add(shared.opts.handshake_timeout)
            .unwrap_or_else(Instant::now);
        Ok(ServerConnection {
            conn,
            hs: Hs::Reading { got: 0 },
            hs_deadline,
            shared,
            path: String::new(),
            protocol: None,
        })
    }

    /// The request target of the opening handshake (`/path?query`; empty before).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The subprotocol chosen in the handshake.
    pub fn protocol(&self) -> Option<&str> {
        self.protocol
            .and_then(|i| self.shared.protocols.get(i))
            .map(String::as_str)
    }

    /// Whether the opening handshake is still going on.
    pub fn is_handshaking(&self) -> bool {
        !matches!(self.hs, Hs::Done)
    }

    /// Drive the opening handshake. Blocking mode: finish it (handshake timeout; the
    /// `101` is flushed) and return `Ok(true)`. Evented mode: `Ok(true)` once done,
    /// `Ok(false)` to continue on the next event. A bad request is refused with the
    /// codec's answer (400, 426, ...) and reported as [`Error::Handshake`].
    pub fn handshake(&mut self) -> Result<bool, Error> {
        loop {
            if self.drive()? {
                if self.conn.io.is_blocking() {
                    self.conn
                        .io
                        .flush_until(self.hs_deadline, Error::HandshakeTimeout)?;
                }
                return Ok(true);
            }
            if !self.conn.io.is_blocking() {
                return Ok(false);
            }
            if !self.conn.io.wait(Some(self.hs_deadline))? {
                self.hs = Hs::Failed;
                self.conn.abort();
                return Err(Error::HandshakeTimeout);
            }
        }
    }

    /// One non-blocking step of the handshake; `Ok(true)` when done.
    fn drive(&mut self) -> Result<bool, Error> {
        loop {
            let got = match self.hs {
                Hs::Done => return Ok(true),
                Hs::Failed => return Err(Error::AlreadyClosed),
                Hs::Rejecting(e) => {
                    if !self.conn.io.write_some()? {
                        return Ok(false);
                    }
                    self.hs = Hs::Failed;
                    self.conn.abort_and_drain();
                    return Err(Error::Handshake(e));
                }
                Hs::Reading { got } => got,
            };
            let spare = self.conn.reader.spare_mut();
            let Some(free) = spare.get_mut(got..).filter(|s| !s.is_empty()) else {
                self.reject(HandshakeError::HeaderTooLarge);
                continue;
            };
            let n = match read_once(&mut self.conn.io.stream, free) {
                Ok(ReadOutcome::Data(n)) => n,
                Ok(ReadOutcome::WouldBlock) => return Ok(false),
                Ok(ReadOutcome::Eof) => {
                    self.hs = Hs::Failed;
                    self.conn.abort();
                    return Err(Error::ConnectionLost);
                }
                Err(e) => {
                    self.hs = Hs::Failed;
                    self.conn.abort();
                    return Err(e.into());
                }
            };
            let got = got + n;
            // The parsed request borrows the bytes (and drops late): finish with it here.
            let parsed = {
                match handshake::parse_request(&spare[..got]) {
                    Ok(None) => Ok(None),
                    Err(e) => Err(e),
                    Ok(Some(req)) => write_101(&self.shared, &mut self.conn.io.wbuf, &req)
                        .map(|protocol| Some((req.consumed, req.path.to_owned(), protocol))),
                }
            };
            match parsed {
                Ok(None) => self.hs = Hs::Reading { got },
                Ok(Some((consumed, path, protocol))) => {
                    self.path = path;
                    self.protocol = protocol;
                    self.conn.adopt_leftover(consumed, got);
                    self.hs = Hs::Done;
                    self.conn.io.write_some()?;
                    return Ok(true);
                }
                Err(e) => self.reject(e),
            }
        }
    }

    /// Queue the codec's refusal for `e` and go on writing it.
    fn reject(&mut self, e: HandshakeError) {
        self.conn.io.wbuf.clear();
        if let Ok(out) = self.conn.io.wbuf.reserve(0)
            && let Ok(n) = handshake::write_reject(e, out)
        {
            self.conn.io.wbuf.commit(n);
        }
        self.hs = Hs::Rejecting(e);
    }

    fn ready(&mut self) -> Result<(), Error> {
        match self.hs {
            Hs::Done => Ok(()),
            Hs::Failed => Err(Error::AlreadyClosed),
            _ if self.conn.io.is_blocking() => self.handshake().map(|_| ()),
            _ => Err(Error::HandshakeInProgress),
        }
    }

    /// Blocking mode: finish the handshake if needed, then wait for the next message.
    /// Same contract as [`Client::recv`](super::Client::recv).
    pub fn recv(&mut self) -> Result<Option<Message<'_>>, Error> {
        if !matches!(self.hs, Hs::Done) && !self.handshake()? {
            return Ok(None);
        }
        self.conn.recv(true)
    }

    /// Never waits: drives the handshake first, then the next complete message, or
    /// `Ok(None)` when nothing more is available now (or the connection is closed).
    pub fn try_recv(&mut self) -> Result<Option<Message<'_>>, Error> {
        if !matches!(self.hs, Hs::Done) && !self.drive()? {
            return Ok(None);
        }
        self.conn.recv(false)
    }

    fn timeout_at_inner(&self) -> Option<Instant> {
        match self.hs {
            Hs::Reading { .. } | Hs::Rejecting(_) => Some(self.hs_deadline),
            _ => self.conn.timeout_at(),
        }
    }

    fn handle_timeout_inner(&mut self, now: Instant) -> Result<(), Error> {
        match self.hs {
            Hs::Reading { .. } | Hs::Rejecting(_) if now >= self.hs_deadline => {
                self.hs = Hs::Failed;
                self.conn.abort();
                Err(Error::HandshakeTimeout)
            }
            _ => self.conn.handle_timeout(now),
        }
    }
}

/// Write the `101` answering `req` into `wbuf`; returns the chosen subprotocol's index.
/// An error means our own settings (extra headers) are invalid: the request is refused.
fn write_101(
    shared: &ServerBuilder,
    wbuf: &mut WriteBuf<Vec<u8>>,
    req: &handshake::UpgradeRequest<'_>,
) -> Result<Option<usize>, HandshakeError> {
    let protocol = shared
        .protocols
        .iter()
        .position(|p| req.protocols().any(|offered| offered == p));
    let headers: Vec<(&str, &str)> = shared
        .headers
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    let chosen = protocol
        .and_then(|i| shared.protocols.get(i))
        .map(String::as_str);
    let out = wbuf
        .reserve(0)
        .map_err(|_| HandshakeError::BufferTooSmall)?;
    let n = handshake::write_accept(req, chosen, &headers, out)?;
    wbuf.commit(n);
    Ok(protocol)
}
