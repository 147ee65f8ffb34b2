//! `ws::Client`: connect, run the client opening handshake through the codec, then the
//! shared connection API in the client role (masked sends).

use std::io;
use std::time::{Duration, Instant};

use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};
use tickwire_codec::rand::MaskRng;
use tickwire_codec::ws::handshake::ClientHandshake;
use tickwire_codec::ws::{Connection, Message};

use super::api::{builder_options, connection_api};
use super::conn::Conn;
use super::error::{Error, Peer};
use super::options::Options;
use super::stream::Stream;
use super::url::Url;
use crate::clock;
use crate::net::{ClientTls, NetStream};
use crate::proxy::{ProxyRules, proxy_options};
use crate::socket::{dial, socket_options};
#[cfg(feature = "tls")]
use crate::tls::TlsConfig;

/// Settings for a [`Client`]; `connect` or `connect_with` to use them.
///
/// Defaults: 1 MiB read and write buffers (so a 1 MiB message limit: raise it with
/// `max_message_size`), 10 s connect and handshake timeouts, no read or write
/// timeout, pings answered automatically.
#[derive(Debug, Clone)]
pub struct ClientBuilder {
    pub(crate) opts: Options,
    pub(crate) connect_timeout: Duration,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) protocols: Vec<String>,
    pub(crate) tls: ClientTls,
    pub(crate) proxy: Option<ProxyRules>,
}

impl Default for ClientBuilder {
    fn default() -> Self {
        ClientBuilder {
            opts: Options::default(),
            connect_timeout: Duration::from_secs(10),
            headers: Vec::new(),
            protocols: Vec::new(),
            tls: ClientTls::default(),
            proxy: None,
        }
    }
}

builder_options!(ClientBuilder);
socket_options!(ClientBuilder, opts.socket);
proxy_options!(ClientBuilder, proxy);

impl ClientBuilder {
    /// Default settings.
    ///
    /// ```
    /// # let mut server = tickwire::ws::Server::bind("127.0.0.1:0")?;
    /// # let url = format!("ws://{}/feed", server.local_addr()?);
    /// # std::thread::spawn(move || -> Result<(), tickwire::ws::Error> {
    /// #     let mut conn = server.accept()?;
    /// #     conn.send_text("welcome")?;
    /// #     while conn.recv()?.is_some() {}
    /// #     Ok(())
    /// # });
    /// use tickwire::ws::ClientBuilder;
    ///
    /// let builder = ClientBuilder::new().max_message_size(4 << 20);
    /// let mut ws = builder.connect(&url)?; // one builder, many connections (`&self`)
    /// assert!(ws.recv()?.is_some());
    /// # Ok::<(), tickwire::ws::Error>(())
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Time allowed to establish the TCP connection (default 10 s).
    pub fn connect_timeout(mut self, t: Duration) -> Self {
        self.connect_timeout = t;
        self
    }

    /// Add a request header to the opening handshake (validated by the codec).
    ///
    /// ```
    /// # let mut server = tickwire::ws::Server::bind("127.0.0.1:0")?;
    /// # let url = format!("ws://{}/feed", server.local_addr()?);
    /// # std::thread::spawn(move || -> Result<(), tickwire::ws::Error> {
    /// #     let mut conn = server.accept()?;
    /// #     conn.send_text("welcome")?;
    /// #     while conn.recv()?.is_some() {}
    /// #     Ok(())
    /// # });
    /// let mut ws = tickwire::ws::Client::builder()
    ///     .header("Authorization", "Bearer token")
    ///     .connect(&url)?;
    /// assert!(ws.recv()?.is_some());
    /// # Ok::<(), tickwire::ws::Error>(())
    /// ```
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Offer a subprotocol (`Sec-WebSocket-Protocol`); call again for more, in order
    /// of preference.
    pub fn protocol(mut self, protocol: &str) -> Self {
        self.protocols.push(protocol.to_owned());
        self
    }

    /// TLS settings for `wss://` URLs (default: [`TlsConfig::shared_default`], the
    /// compiled-in roots). Build the config once and share it.
    ///
    /// ```
    /// # let ca = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()])?;
    /// # let ca_pem = ca.cert.pem();
    /// # let ca_pem = ca_pem.as_bytes();
    /// use tickwire::tls::TlsConfig;
    /// use tickwire::ws::Client;
    ///
    /// // Trust a private CA (PEM) beside the compiled-in roots; see the crate docs for a
    /// // complete wss:// example with a certificate made on the spot.
    /// let tls = TlsConfig::builder().add_ca_pem(ca_pem)?.build()?;
    /// let builder = Client::builder().tls(tls); // then .connect("wss://...")
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[cfg(feature = "tls")]
    pub fn tls(mut self, config: TlsConfig) -> Self {
        self.tls = Some(config);
        self
    }

    /// Resolve the `ws://` or `wss://` URL's host, connect (connect timeout, each address in turn,
    /// through the proxy if one is set) and handshake (handshake timeout). The client starts in
    /// blocking mode.
    ///
    /// ```
    /// # let mut server = tickwire::ws::Server::bind("127.0.0.1:0")?;
    /// # let url = format!("ws://{}/feed", server.local_addr()?);
    /// # std::thread::spawn(move || -> Result<(), tickwire::ws::Error> {
    /// #     let mut conn = server.accept()?;
    /// #     conn.send_text("welcome")?;
    /// #     while conn.recv()?.is_some() {}
    /// #     Ok(())
    /// # });
    /// use std::time::Duration;
    /// use tickwire::ws::{Client, Message};
    ///
    /// let builder = Client::builder().connect_timeout(Duration::from_secs(2));
    /// let mut ws = builder.connect(&url)?;
    /// assert_eq!(ws.recv()?, Some(Message::Text("welcome")));
    /// # Ok::<(), tickwire::ws::Error>(())
    /// ```
    pub fn connect(&self, url: &str) -> Result<Client, Error> {
        let url = parse_ws(url)?;
        let deadline = Instant::now().checked_add(self.connect_timeout);
        let (host, port, secure) = (url.host.as_str(), url.port, url.secure);
        let tcp = dial(
            host,
            port,
            secure,
            self.proxy.as_ref(),
            &self.opts.socket,
            deadline,
        )?;
        let r = tcp.set_nonblocking(true).map_err(Error::from);
        r.and_then(|()| self.handshake(TcpStream::from_std(tcp), &url))
            .map_err(|e| e.at_peer(|| url.display()))
    }

    /// Handshake over a stream the caller made (it may still be connecting, if it was
    /// made non-blocking; the connect timeout applies). `url` gives the Host header and
    /// request target.
    ///
    /// ```
    /// # let mut server = tickwire::ws::Server::bind("127.0.0.1:0")?;
    /// # let url = format!("ws://{}/feed", server.local_addr()?);
    /// # std::thread::spawn(move || -> Result<(), tickwire::ws::Error> {
    /// #     let mut conn = server.accept()?;
    /// #     conn.send_text("welcome")?;
    /// #     while conn.recv()?.is_some() {}
    /// #     Ok(())
    /// # });
    /// use tickwire::ws::{Client, Message};
    ///
    /// let addr = url.trim_start_matches("ws://").split('/').next().unwrap();
    /// let tcp = std::net::TcpStream::connect(addr)?;
    /// tcp.set_nodelay(true)?;
    /// let mut ws = Client::builder().connect_with(tcp, &url)?;
    /// assert_eq!(ws.recv()?, Some(Message::Text("welcome")));
    /// # Ok::<(), tickwire::ws::Error>(())
    /// ```
    pub fn connect_with(&self, stream: std::net::TcpStream, url: &str) -> Result<Client, Error> {
        stream.set_nonblocking(true)?;
        let mut stream = TcpStream::from_std(stream);
        let url = parse_ws(url)?;
        let deadline = Instant::now().checked_add(self.connect_timeout);
        wait_connected(&mut stream, deadline, &url)
            .and_then(|()| self.handshake(stream, &url))
            .map_err(|e| e.at_peer(|| url.display()))
    }

    /// The opening handshake over a connected `stream` (errors named by the caller:
    /// the connection is not made yet).
    fn handshake(&self, stream: TcpStream, url: &Url) -> Result<Client, Error> {
        self.opts.socket.apply(&stream)?;
        // `wss://`: TLS with SNI from the URL's host; its handshake runs inside the
        // first writes and reads below, under the same handshake timeout.
        let stream = NetStream::client(stream, url.secure, &self.tls, &url.host)?;
        let mut conn = self.start(stream, url, true)?;
        conn.handshake_blocking(|ws| ws.poll_handshake())?;
        Ok(Client { conn })
    }

    /// A client connection over `stream` with its opening request queued: the codec's
    /// [`Connection`] with this builder's settings, a fresh nonce and masking keys.
    /// Shared by the blocking and tokio clients.
    pub(crate) fn start<S: Stream>(
        &self,
        stream: S,
        url: &Url,
        blocking: bool,
    ) -> Result<Conn<S, MaskRng>, Error> {
        let mut rng = MaskRng::from_entropy().map_err(Error::Entropy)?;
        let mut key = [0u8; 16];
        rng.fill_bytes(&mut key);
        let host = url.host_header();
        let protocols: Vec<&str> = self.protocols.iter().map(String::as_str).collect();
        let headers: Vec<(&str, &str)> = self
            .headers
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        let hs = ClientHandshake::new(&host, &url.resource, key)
            .protocols(&protocols)
            .headers(&headers);
        let ws = Connection::client(
            &hs,
            self.opts.read_buffer(),
            self.opts.write_buffer(),
            rng,
            &self.opts.settings(),
            clock::now(),
        )?;
        let peer = Peer::Url(url.display());
        Ok(Conn::new(stream, ws, &self.opts, blocking, peer)?)
    }
}

fn parse_ws(url: &str) -> Result<Url, Error> {
    Ok(Url::parse(url)?)
}

/// Wait until a non-blocking connect finished (writable, no socket error, a peer); the
/// timeout names `url`'s host and port.
fn wait_connected(
    stream: &mut TcpStream,
    deadline: Option<Instant>,
    url: &Url,
) -> Result<(), Error> {
    let mut poll = Poll::new()?;
    poll.registry()
        .register(stream, Token(0), Interest::WRITABLE)?;
    let result = poll_connected(&mut poll, stream, deadline, url);
    poll.registry().deregister(stream)?;
    result
}

fn poll_connected(
    poll: &mut Poll,
    stream: &TcpStream,
    deadline: Option<Instant>,
    url: &Url,
) -> Result<(), Error> {
    let mut events = Events::with_capacity(4);
    loop {
        if let Some(e) = stream.take_error()? {
            return Err(e.into());
        }
        match stream.peer_addr() {
            Ok(_) => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotConnected => {}
            Err(e) => return Err(e.into()),
        }
        let timeout = match deadline {
            None => None,
            Some(d) => match d.checked_duration_since(Instant::now()) {
                Some(left) if !left.is_zero() => Some(left),
                _ => {
                    return Err(Error::ConnectTimeout {
                        target: crate::error::target(&url.host, url.port),
                    });
                }
            },
        };
        match poll.poll(&mut events, timeout) {
            Err(e) if e.kind() != io::ErrorKind::Interrupted => return Err(e.into()),
            _ => {}
        }
    }
}

/// A WebSocket client connection (client role: every frame sent is masked).
///
/// Two ways to drive it, one implementation:
/// - **blocking** (after `connect`): `recv` waits for a message, sends return once
///   written;
/// - **evented** (after `set_blocking(false)`): register it in your own
///   [`mio::Poll`] (`tickwire::mio`), and on readiness drain it with
///   [`try_recv`](Self::try_recv) until `Ok(None)` and [`flush`](Self::flush) while
///   [`wants_write`](Self::wants_write).
///
/// [`mio::Poll`]: https://docs.rs/mio/1/mio/struct.Poll.html
#[derive(Debug)]
pub struct Client {
    pub(crate) conn: Conn<NetStream, MaskRng>,
}

connection_api!(Client);

impl Client {
    /// Settings for a client.
    ///
    /// ```
    /// # let mut server = tickwire::ws::Server::bind("127.0.0.1:0")?;
    /// # let url = format!("ws://{}/feed", server.local_addr()?);
    /// # std::thread::spawn(move || -> Result<(), tickwire::ws::Error> {
    /// #     let mut conn = server.accept()?;
    /// #     conn.send_text("welcome")?;
    /// #     while conn.recv()?.is_some() {}
    /// #     Ok(())
    /// # });
    /// use std::time::Duration;
    /// use tickwire::ws::Client;
    ///
    /// let mut ws = Client::builder()
    ///     .read_timeout(Some(Duration::from_secs(30)))
    ///     .protocol("v1.feed")
    ///     .connect(&url)?; // e.g. "wss://stream.exchange.example/ws"
    /// assert!(ws.recv()?.is_some());
    /// # Ok::<(), tickwire::ws::Error>(())
    /// ```
    pub fn builder() -> ClientBuilder {
        ClientBuilder::new()
    }

    /// Connect to a `ws://host[:port]/path` or `wss://` URL with default settings
    /// (blocking mode).
    ///
    /// ```
    /// # let mut server = tickwire::ws::Server::bind("127.0.0.1:0")?;
    /// # let url = format!("ws://{}/feed", server.local_addr()?);
    /// # std::thread::spawn(move || -> Result<(), tickwire::ws::Error> {
    /// #     let mut conn = server.accept()?;
    /// #     conn.send_text("welcome")?;
    /// #     while conn.recv()?.is_some() {}
    /// #     Ok(())
    /// # });
    /// use tickwire::ws::{Client, Message};
    ///
    /// let mut ws = Client::connect(&url)?; // e.g. "wss://stream.exchange.example/ws"
    /// assert_eq!(ws.recv()?, Some(Message::Text("welcome")));
    /// # Ok::<(), tickwire::ws::Error>(())
    /// ```
    pub fn connect(url: &str) -> Result<Client, Error> {
        ClientBuilder::new().connect(url)
    }

    /// Handshake over a caller-made stream with default settings.
    ///
    /// ```
    /// # let mut server = tickwire::ws::Server::bind("127.0.0.1:0")?;
    /// # let url = format!("ws://{}/feed", server.local_addr()?);
    /// # std::thread::spawn(move || -> Result<(), tickwire::ws::Error> {
    /// #     let mut conn = server.accept()?;
    /// #     conn.send_text("welcome")?;
    /// #     while conn.recv()?.is_some() {}
    /// #     Ok(())
    /// # });
    /// use tickwire::ws::{Client, Message};
    ///
    /// // A socket made by the caller (here plainly; in practice with options of its own).
    /// let tcp = std::net::TcpStream::connect(url.trim_start_matches("ws://").split('/').next().unwrap())?;
    /// let mut ws = Client::connect_with(tcp, &url)?;
    /// assert_eq!(ws.recv()?, Some(Message::Text("welcome")));
    /// # Ok::<(), tickwire::ws::Error>(())
    /// ```
    pub fn connect_with(stream: std::net::TcpStream, url: &str) -> Result<Client, Error> {
        ClientBuilder::new().connect_with(stream, url)
    }

    /// The subprotocol the server chose.
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

    /// Blocking mode: wait for the next message (at most the read timeout).
    ///
    /// - `Ok(Some(msg))` for every message, control frames included: a `Ping` has
    ///   already been answered (unless auto-pong is off), a `Close` from the peer has
    ///   already been answered and the socket shut for writing.
    /// - `Ok(None)`: the close handshake is complete; every later call says the same.
    /// - `Err(_)`: the connection failed (a protocol error was answered with the
    ///   codec's close code), except `Error::ReadTimeout`, after which it is unchanged. The
    ///   error comes back at once, with the close frame written as far as the socket
    ///   takes it; calling `recv` again finishes the close (the peer's end of the
    ///   stream, or at most the close timeout) and then returns `Error::AlreadyClosed`.
    ///
    /// The message borrows the read buffer: drop it before the next call. In evented
    /// mode this is [`try_recv`](Self::try_recv).
    ///
    /// ```
    /// # let (mut client, mut server) = tickwire::ws::doc_pair()?;
    /// use tickwire::ws::Message;
    ///
    /// server.send_text("tick")?;
    /// match client.recv()? {
    ///     Some(Message::Text(t)) => assert_eq!(t, "tick"), // borrows the read buffer
    ///     Some(_) => {}                                     // binary, ping, pong, close
    ///     None => {}                                        // the close handshake is done
    /// }
    /// # Ok::<(), tickwire::ws::Error>(())
    /// ```
    pub fn recv(&mut self) -> Result<Option<Message<'_>>, Error> {
        self.conn.recv(true)
    }

    /// Never waits: the next complete message, or `Ok(None)` when none is complete and
    /// the socket has no more bytes now (evented: wait for the next readable event),
    /// or the connection is closed ([`is_closed`](Self::is_closed)).
    ///
    /// ```
    /// # let (mut client, mut server) = tickwire::ws::doc_pair()?;
    /// use tickwire::ws::Message;
    ///
    /// client.set_blocking(false)?; // evented: register it in your mio::Poll
    /// assert_eq!(client.try_recv()?, None); // nothing yet
    /// server.send_text("tick")?;
    /// let msg = loop {
    ///     // In a real loop this runs on each readable event.
    ///     if let Some(Message::Text(t)) = client.try_recv()? {
    ///         break t.to_owned();
    ///     }
    ///     std::thread::yield_now();
    /// };
    /// assert_eq!(msg, "tick");
    /// # Ok::<(), tickwire::ws::Error>(())
    /// ```
    pub fn try_recv(&mut self) -> Result<Option<Message<'_>>, Error> {
        self.conn.recv(false)
    }

    /// Messages flow (the client's handshake ran in `connect`).
    fn opened(&mut self) -> Result<bool, Error> {
        Ok(true)
    }

    fn ready(&mut self) -> Result<(), Error> {
        Ok(())
    }

    fn timeout_at_inner(&self) -> Option<Instant> {
        self.conn.timeout_at()
    }

    fn handle_timeout_inner(&mut self, now: Instant) -> Result<(), Error> {
        self.conn.handle_timeout(now)
    }
}
