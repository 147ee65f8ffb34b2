//! Async `Client` over the caller's stream: the client opening handshake through the
//! codec (as every client of this crate runs it), TLS for `wss://`, then the shared
//! async API.

use std::marker::PhantomData;

use futures_io::{AsyncRead, AsyncWrite};
use tickwire_codec::rand::MaskRng;

use super::api::async_api;
use super::driver::Driver;
use crate::futures_io::Timer;
use crate::futures_io::io::{Compat, IoStream};
use crate::ws::{self, Error, Url};

/// Settings for an async [`Client`]: the blocking [`ws::ClientBuilder`]'s settings
/// (convert one with `From`), with an async [`connect_with`](Self::connect_with) over
/// a stream of yours, and the deadline timer `Tm` ([`timer`](Self::timer)).
#[derive(Debug)]
pub struct ClientBuilder<Tm = async_io::Timer> {
    inner: ws::ClientBuilder,
    timer: PhantomData<fn() -> Tm>,
}

impl<Tm> Clone for ClientBuilder<Tm> {
    fn clone(&self) -> Self {
        ClientBuilder::from(self.inner.clone())
    }
}

impl Default for ClientBuilder {
    fn default() -> Self {
        ClientBuilder::from(ws::ClientBuilder::default())
    }
}

impl<Tm> From<ws::ClientBuilder> for ClientBuilder<Tm> {
    /// The same settings, for futures-io connections.
    fn from(inner: ws::ClientBuilder) -> Self {
        ClientBuilder {
            inner,
            timer: PhantomData,
        }
    }
}

super::forward_settings!(ClientBuilder);

impl<Tm> ClientBuilder<Tm> {
    fn map(self, f: impl FnOnce(ws::ClientBuilder) -> ws::ClientBuilder) -> Self {
        ClientBuilder::from(f(self.inner))
    }

    /// TLS settings for `wss://` URLs (default: the compiled-in roots).
    ///
    /// ```
    /// use tickwire::tls::TlsConfig;
    ///
    /// // Trust a private CA (PEM) beside the compiled-in roots.
    /// # let ca = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    /// # let ca_pem = ca.cert.pem();
    /// let tls = TlsConfig::builder().add_ca_pem(ca_pem.as_bytes()).unwrap().build().unwrap();
    /// let builder = tickwire::futures_io::ws::Client::builder().tls(tls); // then .connect_with(tcp, "wss://...")
    /// ```
    #[cfg(feature = "tls")]
    pub fn tls(self, config: crate::tls::TlsConfig) -> Self {
        self.map(|b| b.tls(config))
    }
}

impl ClientBuilder {
    /// Default settings, async-io's timer.
    ///
    /// ```
    /// # smol::block_on(async {
    /// # let (url, tcp) = tickwire::futures_io::ws::doc_server().await?;
    /// use tickwire::futures_io::ws::ClientBuilder;
    ///
    /// let builder = ClientBuilder::new().max_message_size(4 << 20);
    /// let mut ws = builder.connect_with(tcp, &url).await?; // one builder, many connections
    /// assert!(ws.recv().await?.is_some());
    /// # Ok::<(), tickwire::ws::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn new() -> Self {
        Self::default()
    }
}

impl<Tm: Timer> ClientBuilder<Tm> {
    /// Use the timer `T2` for this builder's connections (their read, write,
    /// handshake and close timeouts and keepalive): a runtime's own timer.
    ///
    /// ```
    /// use std::task::{Context, Poll};
    /// use std::time::Instant;
    /// use tickwire::futures_io::{Timer, ws::ClientBuilder};
    ///
    /// struct AsyncIo(async_io::Timer); // any runtime's sleep future, wrapped
    /// impl Timer for AsyncIo {
    ///     fn at(deadline: Instant) -> Self {
    ///         AsyncIo(async_io::Timer::at(deadline))
    ///     }
    ///     fn poll_expired(&mut self, cx: &mut Context<'_>) -> Poll<()> {
    ///         self.0.poll_expired(cx)
    ///     }
    /// }
    /// let builder: ClientBuilder<AsyncIo> = ClientBuilder::new().timer::<AsyncIo>();
    /// ```
    pub fn timer<T2: Timer>(self) -> ClientBuilder<T2> {
        ClientBuilder::from(self.inner)
    }

    /// Handshake over a connected stream the caller made (TCP, or any futures-io
    /// stream), within the handshake timeout. `url` gives the Host header and request
    /// target, and TLS (the transport's own, SNI and certificate name from the URL's
    /// host) for `wss://`.
    ///
    /// ```
    /// # smol::block_on(async {
    /// # let (url, _) = tickwire::futures_io::ws::doc_server().await?;
    /// use tickwire::futures_io::{TcpStream, ws::Client};
    /// use tickwire::ws::Message;
    ///
    /// let addr = url.trim_start_matches("ws://").split('/').next().unwrap();
    /// let tcp = TcpStream::connect(addr.parse().unwrap()).await?;
    /// let mut ws = Client::builder().connect_with(tcp, &url).await?;
    /// assert_eq!(ws.recv().await?, Some(Message::Text("welcome")));
    /// # Ok::<(), tickwire::ws::Error>(())
    /// # }).unwrap();
    /// ```
    pub async fn connect_with<T>(&self, stream: T, url: &str) -> Result<Client<T, Tm>, Error>
    where
        T: AsyncRead + AsyncWrite + Unpin,
    {
        let url = Url::parse(url)?;
        let r = self.handshake(stream, &url).await;
        r.map_err(|e| e.at_peer(|| url.display()))
    }

    async fn handshake<T>(&self, stream: T, url: &Url) -> Result<Client<T, Tm>, Error>
    where
        T: AsyncRead + AsyncWrite + Unpin,
    {
        let stream = Compat::new(stream);
        let stream = if url.secure {
            #[cfg(feature = "tls")]
            {
                let config = self
                    .inner
                    .tls
                    .clone()
                    .unwrap_or_else(crate::tls::TlsConfig::shared_default);
                IoStream::Tls(Box::new(crate::tls::TlsStream::client(
                    stream, &config, &url.host,
                )?))
            }
            #[cfg(not(feature = "tls"))]
            return Err(Error::TlsDisabled);
        } else {
            IoStream::Plain(stream)
        };
        let conn = self.inner.start(stream, url, false)?;
        let mut d = Driver::new(conn);
        d.handshake(|ws| ws.poll_handshake()).await?;
        Ok(Client { d })
    }
}

/// An async WebSocket client connection over a futures-io stream (client role: every
/// frame sent is masked), with the deadline timer `Tm`.
///
/// `Send` when the stream and the timer are (smol's `crate::futures_io::TcpStream` with async-io's
/// timer: yes; a thread-per-core runtime's stream and timer may not be).
#[derive(Debug)]
pub struct Client<T = crate::futures_io::TcpStream, Tm = async_io::Timer> {
    d: Driver<T, MaskRng, Tm>,
}

async_api!(Client, MaskRng);

impl<T, Tm> Client<T, Tm>
where
    T: AsyncRead + AsyncWrite + Unpin,
    Tm: Timer,
{
    /// The subprotocol the server chose.
    ///
    /// ```
    /// # smol::block_on(async {
    /// # let (url, tcp) = tickwire::futures_io::ws::doc_server().await?;
    /// let ws = tickwire::futures_io::ws::Client::connect_with(tcp, &url).await?;
    /// assert_eq!(ws.protocol(), None); // none offered
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
    /// # let (url, tcp) = tickwire::futures_io::ws::doc_server().await?;
    /// let ws = tickwire::futures_io::ws::Client::connect_with(tcp, &url).await?;
    /// assert!(ws.deflate().is_none()); // none offered
    /// # Ok::<(), tickwire::ws::Error>(())
    /// # }).unwrap();
    /// ```
    #[cfg(feature = "deflate")]
    pub fn deflate(&self) -> Option<tickwire_codec::ws::deflate::Negotiated> {
        self.d.conn.ws.deflate()
    }

    /// A client is open once connected.
    #[inline]
    fn handshaking(&self) -> bool {
        false
    }

    async fn established(&mut self) -> Result<(), Error> {
        Ok(())
    }

    pub(super) fn into_driver(self) -> Driver<T, MaskRng, Tm> {
        self.d
    }
}

impl Client {
    /// Settings for a client.
    ///
    /// ```
    /// # smol::block_on(async {
    /// # let (url, tcp) = tickwire::futures_io::ws::doc_server().await?;
    /// use std::time::Duration;
    /// use tickwire::futures_io::ws::Client;
    ///
    /// let mut ws = Client::builder()
    ///     .read_timeout(Some(Duration::from_secs(30)))
    ///     .connect_with(tcp, &url) // e.g. "wss://stream.exchange.example/ws"
    ///     .await?;
    /// assert!(ws.recv().await?.is_some());
    /// # Ok::<(), tickwire::ws::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn builder() -> ClientBuilder {
        ClientBuilder::new()
    }
}

impl<T: AsyncRead + AsyncWrite + Unpin> Client<T> {
    /// Handshake over a connected stream with default settings and async-io's timer.
    ///
    /// ```
    /// # smol::block_on(async {
    /// # let (url, tcp) = tickwire::futures_io::ws::doc_server().await?;
    /// use tickwire::futures_io::ws::Client;
    /// use tickwire::ws::Message;
    ///
    /// // `tcp`: a smol::net::TcpStream, an async_io::crate::futures_io::TcpStream, ...
    /// let mut ws = Client::connect_with(tcp, &url).await?;
    /// assert_eq!(ws.recv().await?, Some(Message::Text("welcome")));
    /// # Ok::<(), tickwire::ws::Error>(())
    /// # }).unwrap();
    /// ```
    pub async fn connect_with(stream: T, url: &str) -> Result<Client<T>, Error> {
        ClientBuilder::new().connect_with(stream, url).await
    }
}
