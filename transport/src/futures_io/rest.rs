//! Async REST over HTTP/1.1 on any executor: [`Client`], one keep-alive connection
//! over futures-io streams that a [`Connect`] makes (async-io's TCP by default). The
//! same codec [`ClientConnection`] as the blocking and tokio clients (so the same
//! reconnect, retry and stale-connection rules,
//! [`rest`](crate::rest#reconnects-retries-and-stale-connections)), the same request
//! builders, settings, errors and counters; the waits are the stream's (a read or
//! write that would block leaves the task's waker with it) and the [`Timer`]'s.
//!
//! Cancellation as in [`crate::tokio::rest`]: while a request is in flight the
//! connection is in the `send` future; dropping the future closes it, and the next
//! `send` connects again.
//!
//! ```
//! # smol::block_on(async {
//! # let server = tickwire::rest::doc_server();
//! use tickwire::futures_io::rest::Client;
//!
//! let mut client = Client::connect(&format!("http://{server}/api/v3")).await?;
//! let time = client.get("/time").query("symbol", "BTCUSDT").send().await?;
//! assert_eq!(time.status(), 200);
//! let order = client.post("/order").json_bytes(br#"{"qty":"0.01"}"#).send().await?;
//! assert_eq!(order.body_str()?, "POST /api/v3/order");
//! # Ok::<(), tickwire::rest::Error>(())
//! # }).unwrap();
//! ```

use std::future::{Future, poll_fn};
use std::io::{self, Read, Write};
use std::marker::PhantomData;
use std::net::{SocketAddr, ToSocketAddrs};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures_io::{AsyncRead, AsyncWrite};
use tickwire_codec::http::{
    self as codec, Action, BuildError, ClientConnection, Method, Request, RequestWriter,
    ResponseReader, RestResponse,
};

use super::io::{Alarm, Compat, IoStream};
use super::{TcpStream, Timer};
use crate::net::ClientTls;
use crate::rest::client::{methods, settings};
use crate::rest::drive::{Drive, Step, response};
use crate::rest::options::{RequestOptions, request_options, timeout_options, too_large};
use crate::rest::request::builder_methods;
pub use crate::rest::{Error, HttpUrl, Stats, Timeouts};

/// Opens a connection to a host and port: the stream a [`Client`] sends its requests
/// on (TLS for `https://` goes over it). [`TcpConnector`] by default; implement it to
/// connect with your runtime's own TCP stream and resolver.
///
/// ```
/// use std::future::Future;
///
/// /// smol's TCP stream and its resolver (async-net's, off the executor threads).
/// #[derive(Clone)]
/// struct Smol;
///
/// impl tickwire::futures_io::rest::Connect for Smol {
///     type Stream = smol::net::TcpStream;
///     fn connect(&self, host: &str, port: u16) -> impl Future<Output = std::io::Result<Self::Stream>> {
///         let target = format!("{host}:{port}");
///         async move {
///             let tcp = smol::net::TcpStream::connect(target).await?;
///             tcp.set_nodelay(true)?;
///             Ok(tcp)
///         }
///     }
/// }
/// # smol::block_on(async {
/// # let server = tickwire::rest::doc_server();
/// let mut client = tickwire::futures_io::rest::Client::builder()
///     .connector(Smol)
///     .connect(&format!("http://{server}"))
///     .await?;
/// assert_eq!(client.get("/time").send().await?.status(), 200);
/// # Ok::<(), tickwire::rest::Error>(())
/// # }).unwrap();
/// ```
pub trait Connect {
    /// The stream it makes.
    type Stream: AsyncRead + AsyncWrite + Unpin;

    /// Connect to `host` (a name or an IP address) and `port`. The client bounds it by
    /// its connect timeout.
    fn connect(&self, host: &str, port: u16) -> impl Future<Output = io::Result<Self::Stream>>;
}

/// TCP on async-io's reactor ([`TcpStream`], `TCP_NODELAY` on). A host name is
/// resolved with the system's resolver on the calling thread (it blocks while it
/// resolves; an IP address is not looked up): give the client an IP address, or a
/// [`Connect`] with an async resolver, where that matters.
#[derive(Debug, Clone, Copy, Default)]
pub struct TcpConnector;

impl Connect for TcpConnector {
    type Stream = TcpStream;

    async fn connect(&self, host: &str, port: u16) -> io::Result<TcpStream> {
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let addrs: Vec<SocketAddr> = (host, port).to_socket_addrs()?.collect();
        let mut last = io::Error::new(io::ErrorKind::NotFound, "no address");
        for addr in addrs {
            match TcpStream::connect(addr).await {
                Ok(s) => return Ok(s),
                Err(e) => last = e,
            }
        }
        Err(last)
    }
}

/// Settings of a futures-io [`Client`]: the blocking
/// [`ClientBuilder`](crate::rest::ClientBuilder)'s settings and defaults, the
/// connector `C` and the timer `Tm`.
#[derive(Debug)]
pub struct ClientBuilder<C = TcpConnector, Tm = async_io::Timer> {
    timeouts: Timeouts,
    idle_probe: Option<Duration>,
    tls: ClientTls,
    options: RequestOptions,
    connector: C,
    timer: PhantomData<fn() -> Tm>,
}

impl<C: Clone, Tm> Clone for ClientBuilder<C, Tm> {
    // Without feature `tls`, `ClientTls` is `()`.
    #[cfg_attr(not(feature = "tls"), allow(clippy::clone_on_copy, clippy::unit_arg))]
    fn clone(&self) -> Self {
        ClientBuilder {
            timeouts: self.timeouts,
            idle_probe: self.idle_probe,
            tls: self.tls.clone(),
            options: self.options.clone(),
            connector: self.connector.clone(),
            timer: PhantomData,
        }
    }
}

impl Default for ClientBuilder {
    fn default() -> Self {
        ClientBuilder {
            timeouts: Timeouts::default(),
            idle_probe: Some(Duration::ZERO),
            tls: ClientTls::default(),
            options: RequestOptions::default(),
            connector: TcpConnector,
            timer: PhantomData,
        }
    }
}

request_options!(impl[C, Tm] ClientBuilder<C, Tm>, tickwire::futures_io::rest::Client);
timeout_options!(impl[C, Tm] ClientBuilder<C, Tm>, tickwire::futures_io::rest::Client);

impl ClientBuilder {
    /// Default settings (as [`Client::builder`]).
    ///
    /// ```
    /// # smol::block_on(async {
    /// # let server = tickwire::rest::doc_server();
    /// use tickwire::futures_io::rest::ClientBuilder;
    ///
    /// let builder = ClientBuilder::new().response_buffer(4 << 20);
    /// let mut a = builder.connect(&format!("http://{server}")).await?;
    /// assert_eq!(a.get("/a").send().await?.status(), 200);
    /// # Ok::<(), tickwire::rest::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn new() -> Self {
        Self::default()
    }
}

impl<C: Connect + Clone, Tm: Timer> ClientBuilder<C, Tm> {
    /// Before a request on a kept-alive connection idle at least this long, check
    /// without waiting whether the server closed it or sent something nobody asked for;
    /// if so the request goes on a new connection (default `Some(Duration::ZERO)`:
    /// before every reuse; `None`: never). The blocking client's setting.
    pub fn idle_probe(mut self, after: Option<Duration>) -> Self {
        self.idle_probe = after;
        self
    }

    /// TLS settings for `https://` URLs (default: the compiled-in roots).
    #[cfg(feature = "tls")]
    pub fn tls(mut self, config: crate::tls::TlsConfig) -> Self {
        self.tls = Some(config);
        self
    }

    /// Connect with `connector` (see [`Connect`]).
    pub fn connector<C2: Connect + Clone>(self, connector: C2) -> ClientBuilder<C2, Tm> {
        ClientBuilder {
            timeouts: self.timeouts,
            idle_probe: self.idle_probe,
            tls: self.tls,
            options: self.options,
            connector,
            timer: PhantomData,
        }
    }

    /// Use the timer `T2` (see [`Timer`]).
    pub fn timer<T2: Timer>(self) -> ClientBuilder<C, T2> {
        ClientBuilder {
            timeouts: self.timeouts,
            idle_probe: self.idle_probe,
            tls: self.tls,
            options: self.options,
            connector: self.connector,
            timer: PhantomData,
        }
    }

    /// A client for `url` (`http://host[:port][/base]` or `https://...`) that connects
    /// on first use; every request's path goes under the URL's base path.
    ///
    /// ```
    /// # smol::block_on(async {
    /// # let server = tickwire::rest::doc_server();
    /// let mut client = tickwire::futures_io::rest::Client::builder().build(&format!("http://{server}"))?;
    /// assert!(!client.is_connected());
    /// assert_eq!(client.get("/time").send().await?.status(), 200); // connects here
    /// # Ok::<(), tickwire::rest::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn build(&self, url: &str) -> Result<Client<C, Tm>, Error> {
        let url = HttpUrl::parse(url).map_err(Error::Url)?;
        let host_header = url.host_header();
        let (writer, reader) = self.options.buffers(&url, &host_header)?;
        Ok(Client {
            core: Core {
                host_header,
                url,
                http: ClientConnection::new(settings(&self.timeouts, self.idle_probe)),
                builder: self.clone(),
                stream: None,
                alarm: Alarm::default(),
            },
            writer,
            reader,
        })
    }

    /// A client for `url`, connected now.
    ///
    /// ```
    /// # smol::block_on(async {
    /// # let server = tickwire::rest::doc_server();
    /// use std::time::Duration;
    ///
    /// let builder = tickwire::futures_io::rest::Client::builder().connect_timeout(Duration::from_secs(1));
    /// let mut client = builder.connect(&format!("http://{server}")).await?;
    /// assert!(client.is_connected());
    /// # Ok::<(), tickwire::rest::Error>(())
    /// # }).unwrap();
    /// ```
    pub async fn connect(&self, url: &str) -> Result<Client<C, Tm>, Error> {
        let mut c = self.build(url)?;
        c.ensure_connected().await?;
        Ok(c)
    }
}

/// One async keep-alive HTTP/1.1 connection to one server over futures-io streams,
/// with its own request writer and response reader (see the [module](self)).
#[derive(Debug)]
pub struct Client<C = TcpConnector, Tm = async_io::Timer>
where
    C: Connect,
{
    core: Core<C, Tm>,
    writer: RequestWriter<Vec<u8>>,
    reader: ResponseReader<Vec<u8>>,
}

/// Everything of a [`Client`] but its writer and reader.
struct Core<C: Connect, Tm> {
    url: HttpUrl,
    host_header: String,
    builder: ClientBuilder<C, Tm>,
    http: ClientConnection,
    /// The open connection; out of the client while a request is in flight.
    stream: Option<IoStream<C::Stream>>,
    alarm: Alarm<Tm>,
}

impl<C: Connect, Tm> std::fmt::Debug for Core<C, Tm> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("url", &self.url.display(&self.url.path))
            .field("connected", &self.stream.is_some())
            .field("stats", &self.http.stats())
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Settings, starting from the defaults.
    ///
    /// ```
    /// # smol::block_on(async {
    /// # let server = tickwire::rest::doc_server();
    /// use std::time::Duration;
    /// use tickwire::futures_io::rest::Client;
    ///
    /// let mut client = Client::builder()
    ///     .timeout(Duration::from_secs(2)) // the whole request
    ///     .default_header("X-MBX-APIKEY", "key")
    ///     .connect(&format!("http://{server}/api/v3"))
    ///     .await?;
    /// assert_eq!(client.get("/time").send().await?.body_str()?, "GET /api/v3/time");
    /// # Ok::<(), tickwire::rest::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }

    /// A client for `url` with default settings, connected now.
    ///
    /// ```
    /// # smol::block_on(async {
    /// # let server = tickwire::rest::doc_server();
    /// let mut client = tickwire::futures_io::rest::Client::connect(&format!("http://{server}/api/v3")).await?;
    /// let resp = client.get("/ping").send().await?;
    /// assert_eq!((resp.status(), resp.body_str()?), (200, "GET /api/v3/ping"));
    /// # Ok::<(), tickwire::rest::Error>(())
    /// # }).unwrap();
    /// ```
    pub async fn connect(url: &str) -> Result<Client, Error> {
        ClientBuilder::default().connect(url).await
    }
}

impl<C: Connect + Clone, Tm: Timer> Client<C, Tm> {
    /// Start a `method` request for `path` on the client's own writer; `Host` is set.
    /// Finish it with [`send`](RequestBuilder::send)`.await`.
    ///
    /// ```
    /// # smol::block_on(async {
    /// # let server = tickwire::rest::doc_server();
    /// use tickwire::futures_io::rest::Client;
    /// use tickwire::rest::Method;
    ///
    /// let mut client = Client::connect(&format!("http://{server}/api/v3")).await?;
    /// let resp = client.request(Method::Delete, "/order").send().await?;
    /// assert_eq!(resp.body_str()?, "DELETE /api/v3/order");
    /// # Ok::<(), tickwire::rest::Error>(())
    /// # }).unwrap();
    /// ```
    #[inline]
    pub fn request(&mut self, method: Method, path: &str) -> RequestBuilder<'_, C, Tm> {
        RequestBuilder {
            timeout: self.core.builder.options.request_timeout,
            buffer: self.core.builder.options.request_buffer,
            req: self.writer.request(method, path),
            core: &mut self.core,
            reader: &mut self.reader,
        }
    }

    methods!(
        RequestBuilder<'_, C, Tm>,
        ".send().await?",
        "# smol::block_on(async {\n\
         # let server = tickwire::rest::doc_server();\n\
         let url = format!(\"http://{server}/api/v3\");\n\
         let mut client = tickwire::futures_io::rest::Client::connect(&url).await?;\n",
        "# Ok::<(), tickwire::rest::Error>(())\n# }).unwrap();\n"
    );

    /// Build a request with the client's own writer and send it; the response borrows
    /// the client's reader.
    ///
    /// ```
    /// # smol::block_on(async {
    /// # let server = tickwire::rest::doc_server();
    /// let mut client = tickwire::futures_io::rest::Client::connect(&format!("http://{server}/api/v3")).await?;
    /// let resp = client.send_with(|w| w.get("/depth").query("limit", "5").finish()).await?;
    /// assert_eq!(resp.body_str()?, "GET /api/v3/depth");
    /// # Ok::<(), tickwire::rest::Error>(())
    /// # }).unwrap();
    /// ```
    pub async fn send_with<F>(&mut self, build: F) -> Result<RestResponse<'_>, Error>
    where
        F: for<'w> FnOnce(&'w mut RequestWriter<Vec<u8>>) -> Result<Request<'w>, BuildError>,
    {
        let o = &self.core.builder.options;
        let (buffer, timeout) = (o.request_buffer, o.request_timeout);
        let req = build(&mut self.writer).map_err(|e| too_large(e, buffer))?;
        self.core.send(&req, &mut self.reader, timeout).await
    }

    /// Send `req` and read its response into `reader` (see the tokio client's `send`).
    ///
    /// ```
    /// # smol::block_on(async {
    /// # let server = tickwire::rest::doc_server();
    /// use tickwire::rest::ResponseReader;
    ///
    /// let mut client = tickwire::futures_io::rest::Client::connect(&format!("http://{server}/api/v3")).await?;
    /// let mut writer = client.request_writer(vec![0u8; 4096])?; // Host and base path preset
    /// let mut reader: ResponseReader<Vec<u8>> = ResponseReader::new(vec![0u8; 64 << 10]);
    /// let req = writer.post("/order").body(b"qty=1").finish()?;
    /// let resp = client.send(&req, &mut reader).await?;
    /// assert_eq!(resp.body_str()?, "POST /api/v3/order");
    /// # Ok::<(), tickwire::rest::Error>(())
    /// # }).unwrap();
    /// ```
    pub async fn send<'r, B, const N: usize>(
        &mut self,
        req: &Request<'_>,
        reader: &'r mut ResponseReader<B, N>,
    ) -> Result<RestResponse<'r>, Error>
    where
        B: AsRef<[u8]> + AsMut<[u8]>,
    {
        let timeout = self.core.builder.options.request_timeout;
        self.core.send(req, reader, timeout).await
    }

    crate::rest::options::client_accessors!();

    /// Counters: connects, requests, retries, stale connections replaced.
    ///
    /// ```
    /// # smol::block_on(async {
    /// # let server = tickwire::rest::doc_server();
    /// let mut client = tickwire::futures_io::rest::Client::connect(&format!("http://{server}")).await?;
    /// client.get("/a").send().await?;
    /// client.get("/b").send().await?; // the same connection
    /// assert_eq!(client.stats().connects, 1);
    /// # Ok::<(), tickwire::rest::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn stats(&self) -> Stats {
        self.core.http.stats()
    }

    /// Whether a connection is open (it may still turn out stale).
    pub fn is_connected(&self) -> bool {
        self.core.stream.is_some()
    }

    /// The stream of the open connection.
    pub fn stream(&mut self) -> Option<&C::Stream> {
        self.core.stream.as_mut().map(|s| s.compat().get_ref())
    }

    /// What the TLS handshake of the open `https://` connection agreed on.
    #[cfg(feature = "tls")]
    pub fn tls(&mut self) -> Option<&crate::tls::TlsCodec<Vec<u8>>> {
        self.core.stream.as_ref().and_then(|s| s.tls())
    }

    /// Close the connection without waiting (the next `send` opens a new one); over
    /// TLS, close_notify goes out as far as the stream takes it now.
    pub fn disconnect(&mut self) {
        if let Some(mut s) = self.core.stream.take() {
            let _ = crate::ws::stream::Stream::close_notify(&mut s);
        }
        self.core.http.handle_closed();
    }

    /// Close the connection, awaiting TLS close_notify onto the stream (within the
    /// close timeout) and the stream's close.
    ///
    /// ```
    /// # smol::block_on(async {
    /// # let server = tickwire::rest::doc_server();
    /// let mut client = tickwire::futures_io::rest::Client::connect(&format!("http://{server}")).await?;
    /// client.close().await;
    /// assert!(!client.is_connected());
    /// assert_eq!(client.get("/time").send().await?.status(), 200); // connects again
    /// # Ok::<(), tickwire::rest::Error>(())
    /// # }).unwrap();
    /// ```
    pub async fn close(&mut self) {
        self.core.http.handle_closed();
        let Some(mut s) = self.core.stream.take() else {
            return;
        };
        let deadline = Instant::now().checked_add(self.core.builder.timeouts.close);
        let alarm = &mut self.core.alarm;
        poll_fn(|cx| {
            s.compat().set_waker(cx.waker());
            use crate::ws::stream::Stream as _;
            let done = match s.close_notify() {
                Ok(true) => !matches!(s.flush_buffered(), Ok(false)),
                Ok(false) => false,
                Err(_) => true,
            };
            if done {
                let _ = s.shutdown_write();
                return Poll::Ready(());
            }
            alarm.poll_until(deadline, cx)
        })
        .await;
    }

    /// Open a connection if none is open.
    pub async fn ensure_connected(&mut self) -> Result<(), Error> {
        if self.core.stream.is_none() {
            match self.core.open().await {
                Ok(stream) => {
                    self.core.stream = Some(stream);
                    self.core.http.handle_connected(crate::clock::now());
                }
                Err(e) => {
                    let url = &self.core.url;
                    return Err(e.at_url(|| url.display(&url.path)));
                }
            }
        }
        Ok(())
    }
}

/// Poll `op` on `s` with the task's waker until it does not block, or `until` passes
/// (`TimedOut`).
async fn wait_io<S, Tm: Timer, R>(
    s: &mut IoStream<S>,
    alarm: &mut Alarm<Tm>,
    until: Option<Instant>,
    mut op: impl FnMut(&mut IoStream<S>) -> io::Result<R>,
) -> io::Result<R>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    poll_fn(|cx: &mut Context<'_>| {
        s.compat().set_waker(cx.waker());
        loop {
            match op(s) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                r => return Poll::Ready(r),
            }
            return alarm
                .poll_until(until, cx)
                .map(|()| Err(io::ErrorKind::TimedOut.into()));
        }
    })
    .await
}

impl<C: Connect + Clone, Tm: Timer> Core<C, Tm> {
    /// Connect (the connector, within the connect timeout), then for `https://` the
    /// TLS handshake within the same deadline.
    async fn open(&mut self) -> Result<IoStream<C::Stream>, Error> {
        let b = &self.builder;
        let deadline = Instant::now().checked_add(b.timeouts.connect);
        let (host, port) = (self.url.host.as_str(), self.url.port);
        let timed_out = || Error::ConnectTimeout {
            target: crate::error::target(host, port),
        };
        let connect = std::pin::pin!(b.connector.connect(host, port));
        let mut connect = connect;
        let alarm = &mut self.alarm;
        let tcp = poll_fn(|cx| {
            if let Poll::Ready(r) = connect.as_mut().poll(cx) {
                return Poll::Ready(r.map_err(|e| Error::from_io(e, false)));
            }
            alarm.poll_until(deadline, cx).map(|()| Err(timed_out()))
        })
        .await?;
        let stream = Compat::new(tcp);
        if !self.url.secure {
            return Ok(IoStream::Plain(stream));
        }
        #[cfg(not(feature = "tls"))]
        {
            drop(stream);
            Err(Error::TlsDisabled)
        }
        #[cfg(feature = "tls")]
        {
            let config = b
                .tls
                .clone()
                .unwrap_or_else(crate::tls::TlsConfig::shared_default);
            let tls = crate::tls::TlsStream::client(stream, &config, host)?;
            let mut s = IoStream::Tls(Box::new(tls));
            let r = wait_io(&mut s, &mut self.alarm, deadline, |s| match s {
                IoStream::Tls(t) => match t.handshake() {
                    Ok(true) => Ok(()),
                    Ok(false) => Err(io::ErrorKind::WouldBlock.into()),
                    Err(e) => Err(e),
                },
                IoStream::Plain(_) => Ok(()),
            })
            .await;
            match r {
                Ok(()) => Ok(s),
                Err(e) if e.kind() == io::ErrorKind::TimedOut => Err(timed_out()),
                Err(e) => Err(Error::from_io(e, false)),
            }
        }
    }

    async fn send<'r, B, const N: usize>(
        &mut self,
        req: &Request<'_>,
        reader: &'r mut ResponseReader<B, N>,
        timeout: Option<Duration>,
    ) -> Result<RestResponse<'r>, Error>
    where
        B: AsRef<[u8]> + AsMut<[u8]>,
    {
        // The stream stays in this future while the request is in flight.
        let mut stream = self.stream.take();
        let r = self.drive(req, reader, timeout, &mut stream).await;
        if self.http.is_open() {
            self.stream = stream;
        }
        response(r, reader, req, &self.url, timeout)
    }

    /// Drive the codec's connection through one request, as the blocking and tokio
    /// clients do, each wait on the stream (until `poll_timeout()`, on the timer).
    async fn drive<B, const N: usize>(
        &mut self,
        req: &Request<'_>,
        reader: &mut ResponseReader<B, N>,
        timeout: Option<Duration>,
        stream: &mut Option<IoStream<C::Stream>>,
    ) -> Result<(), Error>
    where
        B: AsRef<[u8]> + AsMut<[u8]>,
    {
        let mut d = Drive::start(&mut self.http, req, timeout);
        loop {
            let (action, s, until) = match d.step(&mut self.http, reader, stream)? {
                Step::Done => return Ok(()),
                Step::Connect => {
                    *stream = Some(self.open().await?);
                    d.connected(&mut self.http);
                    continue;
                }
                Step::Again => continue,
                Step::Io {
                    action,
                    stream,
                    until,
                } => (action, stream, until),
            };
            match action {
                Action::Probe => self.http.handle_probe(stale(s)),
                Action::Write => {
                    let data = self.http.transmit(req);
                    let r = wait_io(s, &mut self.alarm, until, |s| s.write(data)).await;
                    d.wrote(&mut self.http, r);
                    if self.http.transmit(req).is_empty() {
                        use crate::ws::stream::Stream as _;
                        let r = wait_io(s, &mut self.alarm, until, |s| {
                            if s.flush_buffered()? {
                                Ok(())
                            } else {
                                Err(io::ErrorKind::WouldBlock.into())
                            }
                        })
                        .await;
                        if let Err(e) = r {
                            d.failed(&mut self.http, Error::from_io(e, true));
                        }
                    }
                }
                _ => {
                    let buf = reader.spare_mut();
                    let r = wait_io(s, &mut self.alarm, until, |s| s.read(buf)).await;
                    d.read(&mut self.http, reader, r);
                }
            }
        }
    }
}

/// Without waiting, on a connection with no request outstanding: whether the peer
/// closed it or sent bytes nobody asked for (one read: a stale connection is closed
/// either way, so what it read does not matter; for TLS, post-handshake messages are
/// the TLS stream's and do not count).
fn stale<S: AsyncRead + AsyncWrite + Unpin>(s: &mut IoStream<S>) -> bool {
    s.compat().set_waker(std::task::Waker::noop());
    let mut b = [0u8; 1];
    loop {
        return match s.read(&mut b) {
            Ok(_) => true,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => e.kind() != io::ErrorKind::WouldBlock,
        };
    }
}

/// A request being built on a futures-io [`Client`]'s own writer (see the blocking
/// [`RequestBuilder`](crate::rest::RequestBuilder)): query pairs first, then headers,
/// then a body; [`send`](Self::send)`.await` returns the response borrowed from the
/// client's reader.
#[must_use = "a request goes out only on send().await"]
pub struct RequestBuilder<'c, C: Connect, Tm, S = codec::Line> {
    req: codec::RequestBuilder<'c, S>,
    core: &'c mut Core<C, Tm>,
    reader: &'c mut ResponseReader<Vec<u8>>,
    buffer: usize,
    timeout: Option<Duration>,
}

builder_methods!(impl[C: Connect, Tm] RequestBuilder[C, Tm,]);

macro_rules! send {
    ($($state:ty),*) => {$(
        impl<'c, C: Connect + Clone, Tm: Timer> RequestBuilder<'c, C, Tm, $state> {
            /// Send the request and read its response: each wait bounded by the
            /// client's timeouts (the whole call by the request timeout), with its
            /// reconnect and retry policy. The response borrows the client's reader.
            /// Dropping the future closes the connection.
            ///
            /// ```
            /// # smol::block_on(async {
            /// # let server = tickwire::rest::doc_server();
            /// # let mut client = tickwire::futures_io::rest::Client::connect(&format!("http://{server}/api/v3")).await?;
            /// let resp = client
            ///     .post("/order")
            ///     .header("X-MBX-APIKEY", "key")
            ///     .json_bytes(br#"{"symbol":"BTCUSDT","qty":"0.01"}"#)
            ///     .send().await?;
            /// assert_eq!((resp.status(), resp.body_str()?), (200, "POST /api/v3/order"));
            /// # Ok::<(), tickwire::rest::Error>(())
            /// # }).unwrap();
            /// ```
            pub async fn send(self) -> Result<RestResponse<'c>, Error> {
                let req = self.req.finish().map_err(|e| too_large(e, self.buffer))?;
                self.core.send(&req, self.reader, self.timeout).await
            }

            /// The request's method.
            #[inline]
            pub fn method(&self) -> Method {
                self.req.method()
            }
        }
    )*};
}
send!(codec::Line, codec::Fields, codec::Complete);
