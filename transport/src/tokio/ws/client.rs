//! Async `Client`: connect with tokio, run the client opening handshake through the
//! codec (as the blocking client does), then the shared async API over an evented
//! [`crate::ws::Client`].

use std::time::{Duration, Instant};

use ::tokio::net::TcpStream;

use super::api::{Timeouts, async_api};
use super::builder::forward_options;
use super::readiness::Readiness;
use crate::net::NetStream;
use crate::proxy::{Proxy, ProxyRules, ProxyUrlError};
use crate::socket::tokio::dial;
#[cfg(feature = "tls")]
use crate::tls::TlsConfig;
use crate::ws::{self, Error, Url};

/// Settings for an async [`Client`]: the blocking [`ws::ClientBuilder`]'s settings
/// (convert one with `From`), with async `connect` and `connect_with`.
#[derive(Debug, Clone, Default)]
pub struct ClientBuilder {
    inner: ws::ClientBuilder,
}

forward_options!(ClientBuilder, ws::ClientBuilder);

impl ClientBuilder {
    /// Default settings.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), tickwire::ws::Error> {
    /// # let mut server = tickwire::tokio::ws::Server::bind("127.0.0.1:0").await?;
    /// # let url = format!("ws://{}/feed", server.local_addr()?);
    /// # tokio::spawn(async move {
    /// #     let mut conn = server.accept().await?;
    /// #     conn.send_text("welcome").await?;
    /// #     while conn.recv().await?.is_some() {}
    /// #     Ok::<(), tickwire::ws::Error>(())
    /// # });
    /// use tickwire::tokio::ws::ClientBuilder;
    ///
    /// let builder = ClientBuilder::new().max_message_size(4 << 20);
    /// let mut ws = builder.connect(&url).await?; // one builder, many connections (`&self`)
    /// assert!(ws.recv().await?.is_some());
    /// # Ok(())
    /// # }
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Time allowed to establish the TCP connection (default 10 s).
    pub fn connect_timeout(self, t: Duration) -> Self {
        Self {
            inner: self.inner.connect_timeout(t),
        }
    }

    /// TLS settings for `wss://` URLs (default: the compiled-in roots).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), tickwire::ws::Error> {
    /// # let mut server = tickwire::tokio::ws::Server::bind("127.0.0.1:0").await?;
    /// # let url = format!("ws://{}/feed", server.local_addr()?);
    /// # tokio::spawn(async move {
    /// #     let mut conn = server.accept().await?;
    /// #     conn.send_text("welcome").await?;
    /// #     while conn.recv().await?.is_some() {}
    /// #     Ok::<(), tickwire::ws::Error>(())
    /// # });
    /// use tickwire::tls::TlsConfig;
    ///
    /// // Trust a private CA (PEM) beside the compiled-in roots.
    /// # let ca = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    /// # let ca_pem = ca.cert.pem();
    /// let tls = TlsConfig::builder().add_ca_pem(ca_pem.as_bytes()).unwrap().build().unwrap();
    /// let builder = tickwire::tokio::ws::Client::builder().tls(tls); // then .connect("wss://...")
    /// # Ok(())
    /// # }
    /// ```
    #[cfg(feature = "tls")]
    pub fn tls(self, config: TlsConfig) -> Self {
        Self {
            inner: self.inner.tls(config),
        }
    }

    /// Connect through `proxy` for every target (see the blocking builder).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), tickwire::ws::Error> {
    /// # let mut server = tickwire::tokio::ws::Server::bind("127.0.0.1:0").await?;
    /// # let url = format!("ws://{}/feed", server.local_addr()?);
    /// # tokio::spawn(async move {
    /// #     let mut conn = server.accept().await?;
    /// #     conn.send_text("welcome").await?;
    /// #     while conn.recv().await?.is_some() {}
    /// #     Ok::<(), tickwire::ws::Error>(())
    /// # });
    /// use tickwire::proxy::Proxy;
    ///
    /// let builder = tickwire::tokio::ws::Client::builder()
    ///     .proxy(Proxy::http("http://proxy.internal:3128").unwrap());
    /// # Ok(())
    /// # }
    /// ```
    pub fn proxy(self, proxy: Proxy) -> Self {
        Self {
            inner: self.inner.proxy(proxy),
        }
    }

    /// Take the proxy from the environment, read now (see the blocking builder).
    pub fn proxy_from_env(self) -> Result<Self, ProxyUrlError> {
        Ok(Self {
            inner: self.inner.proxy_from_env()?,
        })
    }

    /// Which proxy serves which target (`None`: connect directly).
    pub fn proxy_rules(self, rules: Option<ProxyRules>) -> Self {
        Self {
            inner: self.inner.proxy_rules(rules),
        }
    }

    /// Resolve the `ws://` or `wss://` URL's host, connect (connect timeout, each
    /// address in turn, through the proxy if one is set) and handshake (handshake
    /// timeout).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), tickwire::ws::Error> {
    /// # let mut server = tickwire::tokio::ws::Server::bind("127.0.0.1:0").await?;
    /// # let url = format!("ws://{}/feed", server.local_addr()?);
    /// # tokio::spawn(async move {
    /// #     let mut conn = server.accept().await?;
    /// #     conn.send_text("welcome").await?;
    /// #     while conn.recv().await?.is_some() {}
    /// #     Ok::<(), tickwire::ws::Error>(())
    /// # });
    /// use std::time::Duration;
    /// use tickwire::tokio::ws::Client;
    /// use tickwire::ws::Message;
    ///
    /// let builder = Client::builder().connect_timeout(Duration::from_secs(2));
    /// let mut ws = builder.connect(&url).await?;
    /// assert_eq!(ws.recv().await?, Some(Message::Text("welcome")));
    /// # Ok(())
    /// # }
    /// ```
    pub async fn connect(&self, url: &str) -> Result<Client, Error> {
        let url = Url::parse(url)?;
        let deadline = Instant::now().checked_add(self.inner.connect_timeout);
        let (host, port, secure) = (url.host.as_str(), url.port, url.secure);
        let rules = self.inner.proxy.as_ref();
        let stream = dial(host, port, secure, rules, &self.inner.opts.socket, deadline).await?;
        self.handshake(stream, &url).await
    }

    /// Handshake over a connected stream the caller made. `url` gives the Host header
    /// and request target (and TLS with SNI for `wss://`).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), tickwire::ws::Error> {
    /// # let mut server = tickwire::tokio::ws::Server::bind("127.0.0.1:0").await?;
    /// # let url = format!("ws://{}/feed", server.local_addr()?);
    /// # tokio::spawn(async move {
    /// #     let mut conn = server.accept().await?;
    /// #     conn.send_text("welcome").await?;
    /// #     while conn.recv().await?.is_some() {}
    /// #     Ok::<(), tickwire::ws::Error>(())
    /// # });
    /// use tickwire::tokio::ws::Client;
    /// use tickwire::ws::Message;
    ///
    /// let addr = url.trim_start_matches("ws://").split('/').next().unwrap();
    /// let tcp = tokio::net::TcpStream::connect(addr).await?;
    /// let mut ws = Client::builder().connect_with(tcp, &url).await?;
    /// assert_eq!(ws.recv().await?, Some(Message::Text("welcome")));
    /// # Ok(())
    /// # }
    /// ```
    pub async fn connect_with(&self, stream: TcpStream, url: &str) -> Result<Client, Error> {
        let url = Url::parse(url)?;
        self.handshake(stream, &url).await
    }

    /// [`handshake_inner`](Self::handshake_inner); a handshake error names `url`.
    async fn handshake(&self, stream: TcpStream, url: &Url) -> Result<Client, Error> {
        let r = self.handshake_inner(stream, url).await;
        r.map_err(|e| e.at_peer(|| url.display()))
    }

    async fn handshake_inner(&self, stream: TcpStream, url: &Url) -> Result<Client, Error> {
        let opts = &self.inner.opts;
        // The socket moves out of tokio into the transport's stream; readiness comes
        // back from tokio's reactor through `Readiness`.
        let tcp = mio::net::TcpStream::from_std(stream.into_std()?);
        opts.socket.apply(&tcp)?;
        let stream = NetStream::client(tcp, url.secure, &self.inner.tls, &url.host)?;
        let mut conn = self.inner.start(stream, url, false)?;
        // tokio's readiness remembers an arrival until it is seen: after a short read
        // the next recv waits for it instead of reading into `WouldBlock`.
        conn.io.sticky_readiness = true;
        // SAFETY: `conn` owns the socket and outlives `ready` (declared after it, dropped
        // first), and so does the `Client` below (`ready` is its first field).
        let ready = unsafe { Readiness::new(conn.io.stream.tcp()) }?;
        // The codec runs the handshake; this loop only waits for the socket or its timer.
        while !conn.handshake_step(|ws| ws.poll_handshake())? {
            let deadline = conn.timeout_at();
            if !ready.wait(conn.wants_write(), deadline).await? {
                conn.handle_timeout(Instant::now())?;
            }
        }
        while !conn.flush()? {
            if !ready.wait(true, conn.timeout_at()).await? {
                conn.handle_timeout(Instant::now())?;
            }
        }
        Ok(Client {
            ready,
            ws: ws::Client { conn },
            timeouts: Timeouts {
                read: opts.read_timeout,
                write: opts.write_timeout,
                close: opts.close_timeout,
            },
        })
    }
}

/// An async WebSocket client connection (client role: every frame sent is masked).
///
/// `Send` (use it on the multi-thread runtime) and equally at home on a
/// `current_thread` runtime in a `LocalSet`.
#[derive(Debug)]
pub struct Client {
    /// The registration of `ws`'s socket: declared first, so dropped first.
    ready: Readiness,
    ws: ws::Client,
    timeouts: Timeouts,
}

async_api!(Client);

impl Client {
    /// Settings for a client.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), tickwire::ws::Error> {
    /// # let mut server = tickwire::tokio::ws::Server::bind("127.0.0.1:0").await?;
    /// # let url = format!("ws://{}/feed", server.local_addr()?);
    /// # tokio::spawn(async move {
    /// #     let mut conn = server.accept().await?;
    /// #     conn.send_text("welcome").await?;
    /// #     while conn.recv().await?.is_some() {}
    /// #     Ok::<(), tickwire::ws::Error>(())
    /// # });
    /// use std::time::Duration;
    /// use tickwire::tokio::ws::Client;
    ///
    /// let mut ws = Client::builder()
    ///     .read_timeout(Some(Duration::from_secs(30)))
    ///     .connect(&url) // e.g. "wss://stream.exchange.example/ws"
    ///     .await?;
    /// assert!(ws.recv().await?.is_some());
    /// # Ok(())
    /// # }
    /// ```
    pub fn builder() -> ClientBuilder {
        ClientBuilder::new()
    }

    /// Connect to a `ws://host[:port]/path` or `wss://` URL with default settings.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), tickwire::ws::Error> {
    /// # let mut server = tickwire::tokio::ws::Server::bind("127.0.0.1:0").await?;
    /// # let url = format!("ws://{}/feed", server.local_addr()?);
    /// # tokio::spawn(async move {
    /// #     let mut conn = server.accept().await?;
    /// #     conn.send_text("welcome").await?;
    /// #     while conn.recv().await?.is_some() {}
    /// #     Ok::<(), tickwire::ws::Error>(())
    /// # });
    /// use tickwire::tokio::ws::Client;
    /// use tickwire::ws::Message;
    ///
    /// let mut ws = Client::connect(&url).await?; // e.g. "wss://stream.exchange.example/ws"
    /// assert_eq!(ws.recv().await?, Some(Message::Text("welcome")));
    /// # Ok(())
    /// # }
    /// ```
    pub async fn connect(url: &str) -> Result<Client, Error> {
        ClientBuilder::new().connect(url).await
    }

    /// Handshake over a connected stream with default settings.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), tickwire::ws::Error> {
    /// # let mut server = tickwire::tokio::ws::Server::bind("127.0.0.1:0").await?;
    /// # let url = format!("ws://{}/feed", server.local_addr()?);
    /// # tokio::spawn(async move {
    /// #     let mut conn = server.accept().await?;
    /// #     conn.send_text("welcome").await?;
    /// #     while conn.recv().await?.is_some() {}
    /// #     Ok::<(), tickwire::ws::Error>(())
    /// # });
    /// use tickwire::tokio::ws::Client;
    /// use tickwire::ws::Message;
    ///
    /// let addr = url.trim_start_matches("ws://").split('/').next().unwrap();
    /// let tcp = tokio::net::TcpStream::connect(addr).await?; // a socket of your own
    /// let mut ws = Client::connect_with(tcp, &url).await?;
    /// assert_eq!(ws.recv().await?, Some(Message::Text("welcome")));
    /// # Ok(())
    /// # }
    /// ```
    pub async fn connect_with(stream: TcpStream, url: &str) -> Result<Client, Error> {
        ClientBuilder::new().connect_with(stream, url).await
    }

    /// The subprotocol the server chose.
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

    #[cfg(feature = "futures")]
    pub(crate) fn parts_mut(&mut self) -> (&Readiness, &mut ws::Client) {
        (&self.ready, &mut self.ws)
    }

    pub(crate) fn into_parts(self) -> (Readiness, ws::Client, Timeouts) {
        (self.ready, self.ws, self.timeouts)
    }

    async fn established(&mut self) -> Result<(), Error> {
        Ok(())
    }

    /// A client is open once connected (see `ServerConnection::handshaking`).
    #[inline]
    fn handshaking(&self) -> bool {
        false
    }
}

/// The connection's socket, to read (or set) socket options on it.
impl std::os::fd::AsFd for Client {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.ws.as_fd()
    }
}

/// The connection's socket descriptor (as the blocking connection's).
impl std::os::fd::AsRawFd for Client {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.ws.as_raw_fd()
    }
}

impl Client {
    /// `recv` up to the message, for [`Reconnecting`](super::Reconnecting): `Ok(true)`
    /// when one is ready ([`ready_message`](Self::ready_message)), `Ok(false)` where
    /// `recv` says `Ok(None)`.
    pub(crate) async fn recv_ready_crate(&mut self) -> Result<bool, Error> {
        self.recv_ready().await
    }

    /// The message [`recv_ready_crate`](Self::recv_ready_crate) made ready.
    pub(crate) fn ready_message(&self) -> Option<crate::ws::Message<'_>> {
        self.ws.conn.ws.message()
    }
}
