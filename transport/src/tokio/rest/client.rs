//! Async [`Client`]: one keep-alive HTTP/1.1 connection on tokio, driving the same
//! codec [`ClientConnection`] as the blocking [`crate::rest::Client`], so the same
//! reconnect, retry and stale-connection rules
//! ([`rest`](crate::rest#reconnects-retries-and-stale-connections)), and the
//! cancellation rule of [`super`]: the connection is in the `send`
//! future while a request is in flight, so dropping the future closes it. Like the
//! blocking client it owns a request writer and a response reader: `client.get(path)`
//! and the other methods start a [`RequestBuilder`], whose `send().await` returns the
//! response borrowed from the client's reader.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use tickwire_codec::http::{
    self as codec, Action, BuildError, ClientConnection, Method, Request, RequestWriter,
    ResponseReader, RestResponse,
};

use super::stream::AsyncStream;
use crate::net::ClientTls;
use crate::proxy::{ProxyRules, proxy_options};
use crate::rest::client::{methods, settings};
use crate::rest::drive::{Drive, Step, response};
use crate::rest::options::{RequestOptions, request_options, timeout_options, too_large};
use crate::rest::request::builder_methods;
use crate::rest::{Error, HttpUrl, Stats, Timeouts};
use crate::socket::tokio::dial;
use crate::socket::{RecvMode, SocketOptions, socket_options};
#[cfg(feature = "tls")]
use crate::tls::TlsConfig;

/// Settings of an async [`Client`] (and of each connection of a
/// [`ClientPool`](super::ClientPool)): the blocking
/// [`ClientBuilder`](crate::rest::ClientBuilder)'s settings and defaults.
#[derive(Debug, Clone)]
pub struct ClientBuilder {
    timeouts: Timeouts,
    socket: SocketOptions,
    proxy: Option<ProxyRules>,
    idle_probe: Option<Duration>,
    recv_mode: RecvMode,
    tls: ClientTls,
    options: RequestOptions,
}

impl Default for ClientBuilder {
    fn default() -> Self {
        ClientBuilder {
            timeouts: Timeouts::default(),
            socket: SocketOptions::default(),
            proxy: None,
            idle_probe: Some(Duration::ZERO),
            recv_mode: RecvMode::Sleep,
            tls: ClientTls::default(),
            options: RequestOptions::default(),
        }
    }
}

request_options!(impl[] ClientBuilder, tickwire::tokio::rest::Client);
timeout_options!(impl[] ClientBuilder, tickwire::tokio::rest::Client);
socket_options!(ClientBuilder, socket);
proxy_options!(ClientBuilder, proxy);

impl ClientBuilder {
    /// Default settings (as [`Client::builder`]).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), tickwire::rest::Error> {
    /// # let server = tickwire::rest::doc_server();
    /// # let url = format!("http://{server}/api/v3");
    /// use tickwire::tokio::rest::ClientBuilder;
    ///
    /// let builder = ClientBuilder::new().response_buffer(4 << 20);
    /// let mut a = builder.connect(&url).await?; // one builder, many clients (`&self`)
    /// let mut b = builder.build(&url)?; // connects on first use
    /// assert_eq!(a.get("/a").send().await?.status(), b.get("/b").send().await?.status());
    /// # Ok(())
    /// # }
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Before a request on a kept-alive connection idle at least this long, check
    /// without blocking whether the server closed it or sent something nobody asked for;
    /// if so the request goes on a new connection (default `Some(Duration::ZERO)`: before
    /// every reuse; `None`: never). The blocking client's setting: see
    /// [reconnects and retries](crate::rest#reconnects-retries-and-stale-connections).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), tickwire::rest::Error> {
    /// # let server = tickwire::rest::doc_server();
    /// use std::time::Duration;
    /// use tickwire::tokio::rest::Client;
    ///
    /// let mut client = Client::builder()
    ///     .idle_probe(Some(Duration::from_millis(100)))
    ///     .connect(&format!("http://{server}"))
    ///     .await?;
    /// client.get("/a").send().await?;
    /// client.get("/b").send().await?; // the same connection
    /// assert_eq!(client.stats().connects, 1);
    /// # Ok(())
    /// # }
    /// ```
    pub fn idle_probe(mut self, after: Option<Duration>) -> Self {
        self.idle_probe = after;
        self
    }

    /// How a request waits for its response (default [`RecvMode::Sleep`]: on the
    /// reactor). `Spin` / `SpinFor`: a read that finds nothing reads again at once,
    /// never yielding to the runtime (for a task alone on its core's runtime thread;
    /// other tasks there do not run while it spins), the read and request timeouts
    /// still holding; `SpinFor` waits on the reactor once its budget per response is
    /// spent.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), tickwire::rest::Error> {
    /// # let server = tickwire::rest::doc_server();
    /// # let url = format!("http://{server}/api/v3");
    /// use tickwire::socket::RecvMode;
    /// use tickwire::tokio::rest::Client;
    ///
    /// // The only task on this runtime thread: spin for each response.
    /// let mut client = Client::builder()
    ///     .recv_mode(RecvMode::Spin)
    ///     .connect(&url)
    ///     .await?;
    /// assert_eq!(client.get("/time").send().await?.status(), 200);
    /// # Ok(())
    /// # }
    /// ```
    pub fn recv_mode(mut self, mode: RecvMode) -> Self {
        self.recv_mode = mode;
        self
    }

    /// TLS settings for `https://` URLs (default: [`TlsConfig::shared_default`], the
    /// compiled-in Mozilla roots).
    #[cfg(feature = "tls")]
    pub fn tls(mut self, config: TlsConfig) -> Self {
        self.tls = Some(config);
        self
    }

    /// A client for `url` (`http://host[:port][/base]` or `https://...`, TLS with SNI
    /// and the certificate name from the URL's host) that connects on first use. Every
    /// request's path goes under the URL's base path. Takes `&self`, as every builder's
    /// finishing method: one builder makes many clients.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), tickwire::rest::Error> {
    /// # let server = tickwire::rest::doc_server();
    /// # let url = format!("http://{server}/api/v3");
    /// use tickwire::tokio::rest::Client;
    ///
    /// let mut client = Client::builder().build(&url)?; // no connection yet
    /// assert!(!client.is_connected());
    /// let resp = client.get("/time").send().await?; // connects here
    /// assert_eq!(resp.status(), 200);
    /// # Ok(())
    /// # }
    /// ```
    pub fn build(&self, url: &str) -> Result<Client, Error> {
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
            },
            writer,
            reader,
        })
    }

    /// A client for `url`, connected now.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), tickwire::rest::Error> {
    /// # let server = tickwire::rest::doc_server();
    /// # let url = format!("http://{server}/api/v3");
    /// use std::time::Duration;
    /// use tickwire::tokio::rest::Client;
    ///
    /// let builder = Client::builder().connect_timeout(Duration::from_secs(1));
    /// let mut client = builder.connect(&url).await?; // connected now
    /// assert!(client.is_connected());
    /// assert_eq!(client.get("/time").send().await?.status(), 200);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn connect(&self, url: &str) -> Result<Client, Error> {
        let mut c = self.build(url)?;
        c.ensure_connected().await?;
        Ok(c)
    }
}

/// One async keep-alive HTTP/1.1 connection to one server (see [`super`]), with its
/// own request writer and response reader. `Send`: use it on the multi-thread runtime
/// or on `current_thread`.
///
/// A GET, then a POST of JSON, each one expression:
///
/// ```
/// # let server = tickwire::rest::doc_server();
/// # let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
/// # rt.block_on(async {
/// use tickwire::tokio::rest::Client;
///
/// let mut client = Client::connect(&format!("http://{server}/api/v3")).await?;
/// let time = client.get("/time").query("symbol", "BTCUSDT").send().await?;
/// assert_eq!(time.status(), 200);
/// let order = client
///     .post("/order")
///     .header("X-MBX-APIKEY", "key")
///     .json_bytes(br#"{"symbol":"BTCUSDT","side":"BUY","qty":"0.01"}"#)
///     .send()
///     .await?;
/// assert_eq!(order.body_str()?, "POST /api/v3/order");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # })?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Client {
    core: Core,
    writer: RequestWriter<Vec<u8>>,
    reader: ResponseReader<Vec<u8>>,
}

/// Everything of a [`Client`] but its writer and reader, so a request builder can
/// borrow the writer while it holds the rest.
#[derive(Debug)]
pub(crate) struct Core {
    url: HttpUrl,
    host_header: String,
    builder: ClientBuilder,
    /// The protocol: pairing, reuse, the idle check, retries, deadlines.
    http: ClientConnection,
    /// The open connection: a non-blocking socket (TLS over it for `https://`) and its
    /// registration with the reactor. Out of the client while a request is in flight
    /// (in the `send` future: dropping the future closes it).
    stream: Option<AsyncStream>,
}

impl Client {
    /// Start a `method` request for `path` (which starts with `/`, is percent-encoded
    /// where needed, may carry a query, and goes under the URL's base path) on the
    /// client's own writer; `Host` is set. Finish it with
    /// [`send`](RequestBuilder::send)`.await`.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), tickwire::rest::Error> {
    /// # let server = tickwire::rest::doc_server();
    /// # let url = format!("http://{server}/api/v3");
    /// use tickwire::tokio::rest::{Client, Method};
    ///
    /// let mut client = Client::connect(&url).await?;
    /// let cancel = true;
    /// let method = if cancel { Method::Delete } else { Method::Get }; // chosen at run time
    /// let resp = client.request(method, "/order").send().await?;
    /// assert_eq!(resp.body_str()?, "DELETE /api/v3/order");
    /// # Ok(())
    /// # }
    /// ```
    #[inline]
    pub fn request(&mut self, method: Method, path: &str) -> RequestBuilder<'_> {
        RequestBuilder {
            timeout: self.core.builder.options.request_timeout,
            buffer: self.core.builder.options.request_buffer,
            req: self.writer.request(method, path),
            core: &mut self.core,
            reader: &mut self.reader,
        }
    }

    methods!(
        RequestBuilder<'_>,
        ".send().await?",
        "# #[tokio::main(flavor = \"current_thread\")]\n\
         # async fn main() -> Result<(), tickwire::rest::Error> {\n\
         # let server = tickwire::rest::doc_server();\n\
         let url = format!(\"http://{server}/api/v3\");\n\
         let mut client = tickwire::tokio::rest::Client::connect(&url).await?;\n",
        "# Ok(())\n# }\n"
    );

    /// Build a request with the client's own writer and send it; the response borrows
    /// the client's reader: `client.send_with(|w| w.get("/api/v3/time").finish()).await`.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), tickwire::rest::Error> {
    /// # let server = tickwire::rest::doc_server();
    /// # let url = format!("http://{server}/api/v3");
    /// use tickwire::tokio::rest::Client;
    ///
    /// let mut client = Client::connect(&url).await?;
    /// let resp = client.send_with(|w| w.get("/depth").query("limit", "5").finish()).await?;
    /// assert_eq!(resp.body_str()?, "GET /api/v3/depth");
    /// # Ok(())
    /// # }
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

    crate::rest::options::client_accessors!();

    /// Settings, starting from the defaults.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), tickwire::rest::Error> {
    /// # let server = tickwire::rest::doc_server();
    /// # let url = format!("http://{server}/api/v3");
    /// use std::time::Duration;
    /// use tickwire::tokio::rest::Client;
    ///
    /// let mut client = Client::builder()
    ///     .timeout(Duration::from_secs(2)) // the whole request
    ///     .default_header("X-MBX-APIKEY", "key")
    ///     .connect(&url).await?; // e.g. "https://api.exchange.example/api/v3"
    /// let resp = client.get("/time").send().await?;
    /// assert_eq!(resp.body_str()?, "GET /api/v3/time");
    /// # Ok(())
    /// # }
    /// ```
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }

    /// A client for `url` with default settings, connected now.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), tickwire::rest::Error> {
    /// # let server = tickwire::rest::doc_server();
    /// # let url = format!("http://{server}/api/v3");
    /// use tickwire::tokio::rest::Client;
    ///
    /// let mut client = Client::connect(&url).await?; // connected now; the base path is kept
    /// let resp = client.get("/ping").send().await?;
    /// assert_eq!((resp.status(), resp.body_str()?), (200, "GET /api/v3/ping"));
    /// # Ok(())
    /// # }
    /// ```
    pub async fn connect(url: &str) -> Result<Client, Error> {
        ClientBuilder::default().connect(url).await
    }

    /// Counters: connects, requests, retries, stale connections replaced.
    pub fn stats(&self) -> Stats {
        self.core.http.stats()
    }

    /// Whether a connection is open (it may still turn out stale). `false` after a
    /// `send` future was dropped mid-request.
    pub fn is_connected(&self) -> bool {
        self.core.stream.is_some()
    }

    /// The local address of the open connection.
    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.core.stream.as_ref().and_then(|s| s.local_addr().ok())
    }

    /// The server's address of the open connection (which of the host's addresses
    /// it reached); `None` when no connection is open.
    pub fn peer_addr(&self) -> Option<SocketAddr> {
        self.core.stream.as_ref().and_then(|s| s.peer_addr().ok())
    }

    /// What the TLS handshake of the open `https://` connection agreed on: protocol
    /// version, ALPN protocol, cipher suite, the server's certificates
    /// ([`TlsCodec`](crate::tls::TlsCodec)'s getters).
    #[cfg(feature = "tls")]
    pub fn tls(&self) -> Option<&crate::tls::TlsCodec<Vec<u8>>> {
        self.core.stream.as_ref().and_then(|s| s.tls())
    }

    /// Close the connection (the next `send` opens a new one); over TLS the server is
    /// sent close_notify first, after every byte written before it. Never waits: when
    /// the socket cannot take it now, a task on the runtime finishes the close within
    /// the close timeout ([`close`](Self::close) awaits it instead).
    pub fn disconnect(&mut self) {
        self.core.stream = None;
        self.core.http.handle_closed();
    }

    /// Close the connection as [`disconnect`](Self::disconnect) does, awaiting
    /// close_notify onto the socket (within the close timeout).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), tickwire::rest::Error> {
    /// # let server = tickwire::rest::doc_server();
    /// # let url = format!("http://{server}/api/v3");
    /// use tickwire::tokio::rest::Client;
    ///
    /// let mut client = Client::connect(&url).await?;
    /// client.close().await; // TLS close_notify written before it returns
    /// assert!(!client.is_connected());
    /// assert_eq!(client.get("/time").send().await?.status(), 200); // connects again
    /// # Ok(())
    /// # }
    /// ```
    pub async fn close(&mut self) {
        self.core.http.handle_closed();
        if let Some(stream) = self.core.stream.take() {
            stream.close().await;
        }
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

    /// Send `req` and read its response into `reader`; the response borrows the reader
    /// until the reader is used again. Each wait is bounded by the configured timeouts
    /// (the whole call by the request timeout); reconnects and retries follow the
    /// blocking client's policy. Dropping the future before it completes closes the
    /// connection (see [`super`]).
    ///
    /// Use one reader per client: on a new connection the client clears it.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), tickwire::rest::Error> {
    /// # let server = tickwire::rest::doc_server();
    /// # let url = format!("http://{server}/api/v3");
    /// use tickwire::tokio::rest::{Client, ResponseReader};
    ///
    /// let mut client = Client::connect(&url).await?;
    /// let mut writer = client.request_writer(vec![0u8; 4096])?; // Host and base path preset
    /// let mut reader: ResponseReader<Vec<u8>> = ResponseReader::new(vec![0u8; 64 << 10]);
    /// let req = writer.post("/order").body(b"qty=1").finish()?;
    /// let resp = client.send(&req, &mut reader).await?;
    /// assert_eq!(resp.body_str()?, "POST /api/v3/order");
    /// # Ok(())
    /// # }
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
}

impl Core {
    /// TCP connect (through the proxy, if any), then (for `https://`) the TLS
    /// handshake, all within the connect timeout.
    async fn open(&mut self) -> Result<AsyncStream, Error> {
        let b = &self.builder;
        let deadline = Instant::now().checked_add(b.timeouts.connect);
        let (host, port, secure) = (self.url.host.as_str(), self.url.port, self.url.secure);
        let tcp = dial(host, port, secure, b.proxy.as_ref(), &b.socket, deadline).await?;
        // Out of tokio (non-blocking stays on); readiness comes back through the
        // stream's registration.
        let tcp = tcp.into_std().map_err(Error::io)?;
        let (secure, host) = (self.url.secure, self.url.host.as_str());
        let mut stream =
            AsyncStream::open(tcp, secure, &b.tls, host, deadline, b.timeouts.close).await?;
        stream.set_recv(b.recv_mode, b.socket.quickack);
        Ok(stream)
    }

    /// [`Client::send`], bounded by `timeout` when there is one.
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

    /// Drive the codec's connection through one request, as the blocking client does,
    /// awaiting each wait (until `poll_timeout()`) on the reactor.
    async fn drive<B, const N: usize>(
        &mut self,
        req: &Request<'_>,
        reader: &mut ResponseReader<B, N>,
        timeout: Option<Duration>,
        stream: &mut Option<AsyncStream>,
    ) -> Result<(), Error>
    where
        B: AsRef<[u8]> + AsMut<[u8]>,
    {
        let mut d = Drive::start(&mut self.http, req, timeout);
        let mut reading = false;
        loop {
            let (action, s, until) = match d.step(&mut self.http, reader, stream)? {
                Step::Done => return Ok(()),
                Step::Connect => {
                    *stream = Some(self.open().await?);
                    d.connected(&mut self.http);
                    continue;
                }
                Step::Again => {
                    // A new connection's first read resets the spin budget.
                    reading &= stream.is_some();
                    continue;
                }
                Step::Io {
                    action,
                    stream,
                    until,
                } => (action, stream, until),
            };
            match action {
                Action::Probe => self.http.handle_probe(s.stale()),
                Action::Write => {
                    let r = s.write_some(self.http.transmit(req), until).await;
                    d.wrote(&mut self.http, r);
                    if self.http.transmit(req).is_empty()
                        && let Err(e) = s.flush(until).await
                    {
                        d.failed(&mut self.http, Error::from_io(e, true));
                    }
                }
                _ => {
                    if !std::mem::replace(&mut reading, true) {
                        s.spin_reset();
                    }
                    let r = s.read_some(reader.spare_mut(), until).await;
                    d.read(&mut self.http, reader, r);
                }
            }
        }
    }
}

/// A request being built on an async [`Client`]'s own writer: made by
/// [`Client::get`], [`post`](Client::post) and the other methods, sent by
/// [`send`](Self::send)`.await`, which returns the response borrowed from the client's
/// reader. The same methods as the blocking
/// [`RequestBuilder`](crate::rest::RequestBuilder): query pairs first, then headers,
/// then a body.
///
/// ```
/// # let server = tickwire::rest::doc_server();
/// # let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
/// # rt.block_on(async {
/// use std::time::Duration;
/// use tickwire::tokio::rest::Client;
///
/// let mut client = Client::connect(&format!("http://{server}")).await?;
/// let resp = client
///     .delete("/api/v3/order")
///     .query("symbol", "BTCUSDT")
///     .header("X-MBX-APIKEY", "key")
///     .timeout(Duration::from_secs(1))
///     .send()
///     .await?;
/// assert_eq!(resp.body(), b"DELETE /api/v3/order");
/// # Ok::<(), tickwire::rest::Error>(())
/// # })?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[must_use = "a request goes out only on send().await"]
pub struct RequestBuilder<'c, S = codec::Line> {
    req: codec::RequestBuilder<'c, S>,
    core: &'c mut Core,
    reader: &'c mut ResponseReader<Vec<u8>>,
    /// The writer's size, for [`Error::RequestTooLarge`].
    buffer: usize,
    timeout: Option<Duration>,
}

builder_methods!(impl[] RequestBuilder[]);

/// `send` for each state: the codec's `finish` exists on each.
macro_rules! send {
    ($($state:ty),*) => {$(
        impl<'c> RequestBuilder<'c, $state> {
            /// Send the request and read its response: each wait bounded by the
            /// client's timeouts (the whole call by the request timeout), with its
            /// reconnect and retry policy. The response borrows the client's reader
            /// until the client is used again. Dropping the future closes the
            /// connection (see [`super`]).
            ///
            /// ```
            /// # #[tokio::main(flavor = "current_thread")]
            /// # async fn main() -> Result<(), tickwire::rest::Error> {
            /// # let server = tickwire::rest::doc_server();
            /// # let mut client = tickwire::tokio::rest::Client::connect(&format!("http://{server}/api/v3")).await?;
            /// let resp = client
            ///     .post("/order")
            ///     .header("X-MBX-APIKEY", "key")
            ///     .json_bytes(br#"{"symbol":"BTCUSDT","qty":"0.01"}"#)
            ///     .send().await?; // borrows the client's response buffer
            /// assert_eq!((resp.status(), resp.body_str()?), (200, "POST /api/v3/order"));
            /// # Ok(())
            /// # }
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

#[cfg(all(test, unix))]
#[path = "socket_tests.rs"]
mod socket_tests;
