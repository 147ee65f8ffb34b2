//! [`Client`]: one keep-alive HTTP/1.1 connection, blocking, reconnected when needed.
//!
//! The client owns a request writer and a response reader (their sizes are builder
//! settings, allocated once when the client is built): [`Client::get`],
//! [`Client::post`] and the other methods start a [`RequestBuilder`] on them, with the
//! `Host` header and the URL's base path already in place, and its `send` returns the
//! [`RestResponse`] borrowed from the client's reader. No allocation per request.
//!
//! The explicit path stays: build a [`Request`] with a writer of your own
//! ([`Client::request_writer`] presets Host and base path) and pass a
//! [`ResponseReader`] of your own to [`Client::send`].
//!
//! Reconnects, retries, the stale-connection check and the timeouts are described in
//! the [`rest`](crate::rest#reconnects-retries-and-stale-connections) module docs; the
//! rules themselves are the codec's
//! [`ClientConnection`](tickwire_codec::http::ClientConnection), which this client drives
//! over a blocking stream (reading the clock once per wait).

use std::io::{self, Write};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use tickwire_codec::http::{
    Action, BuildError, ClientConnection, ClientSettings, Method, Request, RequestWriter,
    ResponseReader, RestResponse,
};

use super::drive::Drive;
use super::error::Error;
use super::https::HttpConnector;
use super::options::{RequestOptions, request_options, timeout_options, too_large};
use super::request::RequestBuilder;
use super::stream::{Connector, Stream, TcpConnector, Timeouts};
use super::url::HttpUrl;
use crate::proxy::proxy_options;
use crate::socket::RecvMode;
use crate::socket::socket_options;
use crate::socket::spin::Spinner;

/// Settings of a [`Client`] (and of each connection of a
/// [`ClientPool`](super::ClientPool)).
#[derive(Debug, Clone)]
pub struct ClientBuilder<C = HttpConnector> {
    connector: C,
    timeouts: Timeouts,
    idle_probe: Option<Duration>,
    recv_mode: RecvMode,
    pub(crate) options: RequestOptions,
}

impl Default for ClientBuilder<HttpConnector> {
    fn default() -> Self {
        ClientBuilder {
            connector: HttpConnector::default(),
            timeouts: Timeouts::default(),
            idle_probe: Some(Duration::ZERO),
            recv_mode: RecvMode::Sleep,
            options: RequestOptions::default(),
        }
    }
}

/// The codec connection's settings from a builder's.
pub(crate) fn settings(timeouts: &Timeouts, idle_probe: Option<Duration>) -> ClientSettings {
    ClientSettings {
        read_timeout: timeouts.read,
        write_timeout: timeouts.write,
        idle_probe,
    }
}

impl ClientBuilder<HttpConnector> {
    /// Default settings (as [`Client::builder`]).
    ///
    /// ```
    /// # let server = tickwire::rest::doc_server();
    /// # let url = format!("http://{server}/api/v3");
    /// use tickwire::rest::ClientBuilder;
    ///
    /// let builder = ClientBuilder::new().response_buffer(4 << 20);
    /// let mut a = builder.connect(&url)?; // one builder, many clients (`&self`)
    /// let mut b = builder.build(&url)?; // connects on first use
    /// assert_eq!(a.get("/a").send()?.status(), b.get("/b").send()?.status());
    /// # Ok::<(), tickwire::rest::Error>(())
    /// ```
    pub fn new() -> Self {
        Self::default()
    }
}

request_options!(impl[C: Connector] ClientBuilder<C>, tickwire::rest::Client);
timeout_options!(impl[C: Connector] ClientBuilder<C>, tickwire::rest::Client);
socket_options!(ClientBuilder<TcpConnector>, connector.socket);
proxy_options!(ClientBuilder<TcpConnector>, connector.proxy);
socket_options!(ClientBuilder<HttpConnector>, connector.tcp.socket);
proxy_options!(ClientBuilder<HttpConnector>, connector.tcp.proxy);

impl<C: Connector> ClientBuilder<C> {
    /// Before a request on a kept-alive connection idle at least this long, check
    /// without blocking whether the server closed it or sent something nobody asked for
    /// (a 408, a stray response); if so the request goes on a new connection, and the
    /// old one's bytes are never read as its answer. Default `Some(Duration::ZERO)`:
    /// before every reuse (one non-blocking peek; over TLS, a read of what arrived).
    /// `Some(t)`: only on connections idle for `t` or more; `None`: never (a closed
    /// connection is then found by the request itself and retried when that is safe:
    /// see [reconnects and retries](crate::rest#reconnects-retries-and-stale-connections)).
    ///
    /// ```
    /// # let server = tickwire::rest::doc_server();
    /// use std::time::Duration;
    /// use tickwire::rest::Client;
    ///
    /// // A busy order gateway: skip the check on connections used in the last 100 ms.
    /// let mut client = Client::builder()
    ///     .idle_probe(Some(Duration::from_millis(100)))
    ///     .connect(&format!("http://{server}"))?;
    /// client.get("/a").send()?;
    /// client.get("/b").send()?; // the same connection
    /// let stats = client.stats();
    /// assert_eq!((stats.connects, stats.stale_probed, stats.retries), (1, 0, 0));
    /// # Ok::<(), tickwire::rest::Error>(())
    /// ```
    pub fn idle_probe(mut self, after: Option<Duration>) -> Self {
        self.idle_probe = after;
        self
    }

    /// How a request waits for its response: sleep in the kernel (default), or
    /// busy-poll on non-blocking reads for a dedicated core, optionally for a limited
    /// time per response before sleeping ([`RecvMode`]). Spinning costs two system
    /// calls per request (the socket goes non-blocking for the response and back); the
    /// read timeout and the request timeout still hold. A connector whose streams
    /// cannot go non-blocking ([`Stream::set_nonblocking`]) waits in blocking reads.
    ///
    /// ```
    /// # let server = tickwire::rest::doc_server();
    /// # let url = format!("http://{server}/api/v3");
    /// use std::time::Duration;
    /// use tickwire::rest::Client;
    /// use tickwire::socket::RecvMode;
    ///
    /// // An order gateway on a core of its own: spin for the response, up to 200 µs,
    /// // then sleep in the kernel.
    /// let mut client = Client::builder()
    ///     .recv_mode(RecvMode::SpinFor(Duration::from_micros(200)))
    ///     .connect(&url)?;
    /// assert_eq!(client.get("/time").send()?.status(), 200);
    /// # Ok::<(), tickwire::rest::Error>(())
    /// ```
    pub fn recv_mode(mut self, mode: RecvMode) -> Self {
        self.recv_mode = mode;
        self
    }

    /// Change the connector's settings.
    #[cfg(feature = "tls")]
    pub(crate) fn map_connector(mut self, f: impl FnOnce(&mut C)) -> Self {
        f(&mut self.connector);
        self
    }

    /// Use another connector (the default, [`HttpConnector`], picks TCP or TLS by the
    /// URL's scheme).
    pub fn connector<C2: Connector>(self, connector: C2) -> ClientBuilder<C2> {
        ClientBuilder {
            connector,
            timeouts: self.timeouts,
            idle_probe: self.idle_probe,
            recv_mode: self.recv_mode,
            options: self.options,
        }
    }

    /// A client for `url` (`http://host[:port][/base]` or `https://...`) that connects
    /// on first use. Every request's path goes under the URL's base path. Like every
    /// builder's finishing method it takes `&self`: one builder makes many clients.
    ///
    /// ```
    /// # let server = tickwire::rest::doc_server();
    /// # let url = format!("http://{server}/api/v3");
    /// use tickwire::rest::Client;
    ///
    /// let mut client = Client::builder().build(&url)?; // no connection yet
    /// assert!(!client.is_connected());
    /// let resp = client.get("/time").send()?; // connects here
    /// assert_eq!(resp.status(), 200);
    /// # Ok::<(), tickwire::rest::Error>(())
    /// ```
    pub fn build(&self, url: &str) -> Result<Client<C>, Error>
    where
        C: Clone,
    {
        let url = HttpUrl::parse(url).map_err(Error::Url)?;
        let host_header = url.host_header();
        let (writer, reader) = self.options.buffers(&url, &host_header)?;
        let quickack = self.connector.socket_options().is_some_and(|o| o.quickack);
        Ok(Client {
            core: Core {
                host_header,
                url,
                connector: self.connector.clone(),
                timeouts: self.timeouts,
                request_timeout: self.options.request_timeout,
                request_buffer: self.options.request_buffer,
                recv: Recv {
                    spin: Spinner::new(self.recv_mode),
                    quickack,
                },
                http: ClientConnection::new(settings(&self.timeouts, self.idle_probe)),
                stream: None,
                shortened: false,
            },
            writer,
            reader,
        })
    }

    /// A client for `url`, connected now.
    ///
    /// ```
    /// # let server = tickwire::rest::doc_server();
    /// # let url = format!("http://{server}/api/v3");
    /// use std::time::Duration;
    /// use tickwire::rest::Client;
    ///
    /// let builder = Client::builder().connect_timeout(Duration::from_secs(1));
    /// let mut client = builder.connect(&url)?; // connected now
    /// assert!(client.is_connected());
    /// assert_eq!(client.get("/time").send()?.status(), 200);
    /// # Ok::<(), tickwire::rest::Error>(())
    /// ```
    pub fn connect(&self, url: &str) -> Result<Client<C>, Error>
    where
        C: Clone,
    {
        let mut c = self.build(url)?;
        c.ensure_connected()?;
        Ok(c)
    }
}

/// Counters of a client's life, for tests and monitoring: connects, requests written (a
/// retried request counts twice), retries, and stale connections replaced before a
/// request (the codec's [`ClientStats`](tickwire_codec::http::ClientStats)).
pub use tickwire_codec::http::ClientStats as Stats;

/// How a client reads responses: busy-poll or sleep ([`ClientBuilder::recv_mode`]), and
/// whether `TCP_QUICKACK` is set again after each read that got data.
#[derive(Debug, Clone, Copy)]
struct Recv {
    spin: Spinner,
    quickack: bool,
}

impl Recv {
    /// A wait for a response begins (a fresh spin budget). Busy-poll: the socket goes
    /// non-blocking for it (`true`; requests are written, and the idle probe runs, on
    /// a blocking socket).
    #[inline]
    fn begin<S: Stream>(&mut self, stream: &mut S) -> Result<bool, Error> {
        self.spin.reset();
        if !self.spin.active() {
            return Ok(false);
        }
        stream.set_nonblocking(true).map_err(Error::io)
    }
}

/// One keep-alive HTTP/1.1 connection to one server, with its own request writer and
/// response reader; reconnected, checked and retried as the
/// [`rest`](crate::rest#reconnects-retries-and-stale-connections) module docs say.
///
/// A GET, then a POST of JSON, each one expression:
///
/// ```
/// # let server = tickwire::rest::doc_server();
/// use tickwire::rest::Client;
///
/// let mut client = Client::connect(&format!("http://{server}/api/v3"))?;
/// let time = client.get("/time").query("symbol", "BTCUSDT").send()?;
/// assert_eq!(time.status(), 200);
/// let order = client
///     .post("/order")
///     .header("X-MBX-APIKEY", "key")
///     .json_bytes(br#"{"symbol":"BTCUSDT","side":"BUY","qty":"0.01"}"#)
///     .send()?;
/// assert_eq!(order.body_str()?, "POST /api/v3/order");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Client<C: Connector = HttpConnector> {
    core: Core<C>,
    writer: RequestWriter<Vec<u8>>,
    reader: ResponseReader<Vec<u8>>,
}

/// Everything of a [`Client`] but its writer and reader, so a request builder can
/// borrow the writer while it holds the rest.
pub(crate) struct Core<C: Connector> {
    url: HttpUrl,
    host_header: String,
    connector: C,
    timeouts: Timeouts,
    request_timeout: Option<Duration>,
    /// Bytes of the client's own writer (named by [`Error::RequestTooLarge`]).
    request_buffer: usize,
    recv: Recv,
    /// The protocol: pairing, reuse, the idle check, retries, deadlines.
    http: ClientConnection,
    stream: Option<C::Stream>,
    /// The stream's read timeout is not the configured one: a request deadline
    /// shortened it.
    shortened: bool,
}

impl<C: Connector> std::fmt::Debug for Client<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("url", &self.core.url)
            .field("timeouts", &self.core.timeouts)
            .field("request_timeout", &self.core.request_timeout)
            .field("connected", &self.core.stream.is_some())
            .field("stats", &self.core.http.stats())
            .finish_non_exhaustive()
    }
}

impl Client<HttpConnector> {
    /// Settings, starting from the defaults.
    ///
    /// ```
    /// # let server = tickwire::rest::doc_server();
    /// # let url = format!("http://{server}/api/v3");
    /// use std::time::Duration;
    /// use tickwire::rest::Client;
    ///
    /// let mut client = Client::builder()
    ///     .timeout(Duration::from_secs(2)) // the whole request
    ///     .default_header("X-MBX-APIKEY", "key")
    ///     .connect(&url)?; // e.g. "https://api.exchange.example/api/v3"
    /// let resp = client.get("/time").send()?;
    /// assert_eq!(resp.body_str()?, "GET /api/v3/time");
    /// # Ok::<(), tickwire::rest::Error>(())
    /// ```
    pub fn builder() -> ClientBuilder<HttpConnector> {
        ClientBuilder::default()
    }

    /// A client for `url` with default settings, connected now.
    ///
    /// ```
    /// # let server = tickwire::rest::doc_server();
    /// # let url = format!("http://{server}/api/v3");
    /// use tickwire::rest::Client;
    ///
    /// let mut client = Client::connect(&url)?; // connected now; the base path is kept
    /// let resp = client.get("/ping").send()?;
    /// assert_eq!((resp.status(), resp.body_str()?), (200, "GET /api/v3/ping"));
    /// # Ok::<(), tickwire::rest::Error>(())
    /// ```
    pub fn connect(url: &str) -> Result<Client, Error> {
        ClientBuilder::default().connect(url)
    }
}

/// Dropping the client closes its connection the way [`Client::disconnect`] does.
impl<C: Connector> Drop for Core<C> {
    fn drop(&mut self) {
        self.disconnect();
    }
}

/// The request methods on a client with a `request(method, path)`: `client.get(path)`
/// is `client.request(Method::Get, path)`. `$send` is how the docs end a request
/// (`.send()?` or `.send().await?`).
macro_rules! methods {
    ($builder:ty, $send:literal, $head:literal, $foot:literal) => {
        $crate::rest::client::methods!(@each $builder, $send, $head, $foot;
            get => Get, "GET", "/api/v3/time\"", "/time\")";
            post => Post, "POST", "/order\").json_bytes(json", "/order\").json_bytes(br#\"{\"qty\":\"1\"}\"#)";
            put => Put, "PUT", "/order/1\").body(bytes", "/order/1\").body(b\"qty=2\")";
            delete => Delete, "DELETE", "/order?id=1\"", "/order\").query(\"id\", \"1\")";
            patch => Patch, "PATCH", "/order/1\").json_bytes(json", "/order/1\").json_bytes(b\"{}\")";
            head => Head, "HEAD", "/status\"", "/status\")";
        );
    };
    (@each $builder:ty, $send:literal, $head:literal, $foot:literal;
        $($name:ident => $method:ident, $m:literal, $ex:literal, $call:literal;)*) => {$(
        #[doc = concat!("Start a `", $m, "` request (see [`request`](Self::request)): `client.",
            stringify!($name), "(\"", $ex, ")", $send, "`.")]
        ///
        #[doc = concat!("```\n", $head,
            "let resp = client.", stringify!($name), "(\"", $call, $send, ";\n",
            "assert_eq!(resp.status(), 200);\n", $foot, "```")]
        #[inline]
        pub fn $name(&mut self, path: &str) -> $builder {
            self.request(::tickwire_codec::http::Method::$method, path)
        }
    )*};
}
#[cfg_attr(not(feature = "tokio"), allow(unused_imports))]
pub(crate) use methods;

impl<C: Connector> Client<C> {
    /// Start a `method` request for `path` (which starts with `/`, is percent-encoded
    /// where needed, may carry a query, and goes under the URL's base path) on the
    /// client's own writer; `Host` is set. Finish it with
    /// [`send`](RequestBuilder::send).
    ///
    /// ```
    /// # let server = tickwire::rest::doc_server();
    /// # let url = format!("http://{server}/api/v3");
    /// use tickwire::rest::{Client, Method};
    ///
    /// let mut client = Client::connect(&url)?;
    /// let cancel = true;
    /// let method = if cancel { Method::Delete } else { Method::Get }; // chosen at run time
    /// let resp = client.request(method, "/order").send()?;
    /// assert_eq!(resp.body_str()?, "DELETE /api/v3/order");
    /// # Ok::<(), tickwire::rest::Error>(())
    /// ```
    #[inline]
    pub fn request(&mut self, method: Method, path: &str) -> RequestBuilder<'_, C> {
        let buffer = self.core.request_buffer;
        RequestBuilder::new(
            self.writer.request(method, path),
            &mut self.core,
            &mut self.reader,
            buffer,
        )
    }

    methods!(
        RequestBuilder<'_, C>,
        ".send()?",
        "# let server = tickwire::rest::doc_server();\n\
         let mut client = tickwire::rest::Client::connect(&format!(\"http://{server}/api/v3\"))?;\n",
        "# Ok::<(), tickwire::rest::Error>(())\n"
    );

    /// Build a request with the client's own writer and send it; the response borrows
    /// the client's reader: `client.send_with(|w| w.get("/api/v3/time").finish())`.
    /// (The request builder of [`get`](Self::get) and the others does the same.)
    ///
    /// ```
    /// # let server = tickwire::rest::doc_server();
    /// # let url = format!("http://{server}/api/v3");
    /// use tickwire::rest::Client;
    ///
    /// let mut client = Client::connect(&url)?;
    /// let resp = client.send_with(|w| w.get("/depth").query("limit", "5").finish())?;
    /// assert_eq!(resp.body_str()?, "GET /api/v3/depth");
    /// # Ok::<(), tickwire::rest::Error>(())
    /// ```
    pub fn send_with<F>(&mut self, build: F) -> Result<RestResponse<'_>, Error>
    where
        F: for<'w> FnOnce(&'w mut RequestWriter<Vec<u8>>) -> Result<Request<'w>, BuildError>,
    {
        let buffer = self.core.request_buffer;
        let req = build(&mut self.writer).map_err(|e| too_large(e, buffer))?;
        let timeout = self.core.request_timeout;
        self.core.send(&req, &mut self.reader, timeout)
    }

    crate::rest::options::client_accessors!();

    /// Counters: connects, requests, retries.
    pub fn stats(&self) -> Stats {
        self.core.http.stats()
    }

    /// Whether a connection is open (it may still turn out stale).
    pub fn is_connected(&self) -> bool {
        self.core.stream.is_some()
    }

    /// The local address of the open connection.
    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.core.stream.as_ref().and_then(|s| s.local_addr().ok())
    }

    /// The server's address of the open connection (which of the host's addresses
    /// it reached); `None` when no connection is open or the stream has no address.
    pub fn peer_addr(&self) -> Option<SocketAddr> {
        self.core.stream.as_ref().and_then(|s| s.peer_addr().ok())
    }

    /// The open connection's stream (for an `https://` client,
    /// [`HttpStream::tls`](super::HttpStream::tls) gives the TLS version and ALPN).
    pub fn stream(&self) -> Option<&C::Stream> {
        self.core.stream.as_ref()
    }

    /// Close the connection (the next `send` opens a new one); over TLS the server is
    /// sent close_notify first, after every byte written before it (waiting at most the
    /// close timeout for a server that is not reading), then the socket is shut. (The
    /// tokio client's `disconnect` never waits; its `close().await` is this call.)
    pub fn disconnect(&mut self) {
        self.core.disconnect();
    }

    /// Open a connection if none is open.
    pub fn ensure_connected(&mut self) -> Result<(), Error> {
        let r = self.core.ensure_connected();
        r.map_err(|e| e.at_url(|| self.core.url.display(&self.core.url.path)))
    }

    /// Send `req` and read its response into `reader`; the response borrows the reader
    /// until the reader is used again. Blocks within the configured timeouts (the
    /// request timeout too). Reconnects and retries:
    /// [`rest`](crate::rest#reconnects-retries-and-stale-connections).
    ///
    /// Use one reader per client: on a new connection the client clears it.
    ///
    /// ```
    /// # let server = tickwire::rest::doc_server();
    /// # let url = format!("http://{server}/api/v3");
    /// use tickwire::rest::{Client, ResponseReader};
    ///
    /// let mut client = Client::connect(&url)?;
    /// let mut writer = client.request_writer(vec![0u8; 4096])?; // Host and base path preset
    /// let mut reader: ResponseReader<Vec<u8>> = ResponseReader::new(vec![0u8; 64 << 10]);
    /// let req = writer.post("/order").body(b"qty=1").finish()?;
    /// let resp = client.send(&req, &mut reader)?;
    /// assert_eq!(resp.body_str()?, "POST /api/v3/order");
    /// # Ok::<(), tickwire::rest::Error>(())
    /// ```
    pub fn send<'r, B, const N: usize>(
        &mut self,
        req: &Request<'_>,
        reader: &'r mut ResponseReader<B, N>,
    ) -> Result<RestResponse<'r>, Error>
    where
        B: AsRef<[u8]> + AsMut<[u8]>,
    {
        let timeout = self.core.request_timeout;
        self.core.send(req, reader, timeout)
    }
}

impl<C: Connector> Core<C> {
    /// The client's request timeout ([`ClientBuilder::timeout`]).
    pub(crate) fn request_timeout(&self) -> Option<Duration> {
        self.request_timeout
    }

    fn disconnect(&mut self) {
        self.close_stream();
        self.http.handle_closed();
    }

    /// Close the stream, if any, within the close timeout (see [`Stream::close`]).
    fn close_stream(&mut self) {
        if let Some(mut stream) = self.stream.take() {
            stream.close(Instant::now() + self.timeouts.close);
        }
    }

    fn open(&mut self) -> Result<(), Error> {
        self.stream = Some(self.connector.connect(&self.url, &self.timeouts)?);
        self.shortened = false;
        Ok(())
    }

    fn ensure_connected(&mut self) -> Result<(), Error> {
        if self.stream.is_none() {
            self.open()?;
            self.http.handle_connected(crate::clock::now());
        }
        Ok(())
    }

    /// [`Client::send`], bounded by `timeout` when there is one.
    pub(crate) fn send<'r, B, const N: usize>(
        &mut self,
        req: &Request<'_>,
        reader: &'r mut ResponseReader<B, N>,
        timeout: Option<Duration>,
    ) -> Result<RestResponse<'r>, Error>
    where
        B: AsRef<[u8]> + AsMut<[u8]>,
    {
        if let Err(e) = self.drive(req, reader, timeout) {
            return Err(name_error(e, req, &self.url, timeout));
        }
        // `drive` returned Ok only on `Action::Done`: the response is in the reader.
        let lost = || Error::http(tickwire_codec::http::Error::UnexpectedEof);
        reader
            .response()
            .ok_or_else(|| name_error(lost(), req, &self.url, timeout))
    }

    /// Drive the codec's connection through one request: connect, probe, write, read,
    /// close as it asks; wait at most until its `poll_timeout()`.
    fn drive<B, const N: usize>(
        &mut self,
        req: &Request<'_>,
        reader: &mut ResponseReader<B, N>,
        timeout: Option<Duration>,
    ) -> Result<(), Error>
    where
        B: AsRef<[u8]> + AsMut<[u8]>,
    {
        let mut d = Drive::start_bounded(&mut self.http, req, timeout);
        // Busy-poll: whether the socket is non-blocking for this response (`None`: no
        // read yet on this connection).
        let mut spinning = None;
        loop {
            let action = match self.http.poll(reader) {
                Ok(a) => a,
                Err(e) => {
                    self.stop_spinning(&mut spinning)?;
                    return Err(d.error(e));
                }
            };
            match action {
                Action::Done => return self.stop_spinning(&mut spinning),
                Action::Read => self.read(&mut d, reader, &mut spinning, timeout.is_some())?,
                Action::Write => {
                    // The socket bounds each blocking write by the write timeout; the
                    // connection's timers matter once part of the request went out (the
                    // first write's were armed by this attempt's `now`).
                    if self.http.transmit(req).len() < req.len() && d.wait(&mut self.http).is_none()
                    {
                        continue;
                    }
                    let Some(stream) = self.stream.as_mut() else {
                        self.http.handle_closed();
                        continue;
                    };
                    let r = stream.write(self.http.transmit(req));
                    d.wrote(&mut self.http, r);
                    // All written: a TLS stream may keep records the socket did not take.
                    if self.http.transmit(req).is_empty()
                        && let Err(e) = stream.flush()
                    {
                        d.failed(&mut self.http, Error::from_io(e, true));
                    }
                }
                Action::Connect => {
                    self.open()?;
                    d.connected(&mut self.http);
                }
                Action::Probe => {
                    let stale = self
                        .stream
                        .as_mut()
                        .is_none_or(|s| s.stale().unwrap_or(true));
                    self.http.handle_probe(stale);
                }
                Action::Close => {
                    self.stop_spinning(&mut spinning)?;
                    spinning = None;
                    self.disconnect();
                }
            }
        }
    }

    /// One wait for response bytes: read into the reader, sleeping in the kernel (the
    /// socket's read timeout set to what is left until `poll_timeout()` when that is
    /// not the read timeout) or spinning on a non-blocking socket.
    #[inline]
    fn read<B, const N: usize>(
        &mut self,
        d: &mut Drive,
        reader: &mut ResponseReader<B, N>,
        spinning: &mut Option<bool>,
        deadline: bool,
    ) -> Result<(), Error>
    where
        B: AsRef<[u8]> + AsMut<[u8]>,
    {
        let Some(stream) = self.stream.as_mut() else {
            self.http.handle_closed();
            return Ok(());
        };
        let spin = match *spinning {
            Some(spin) => spin,
            None => *spinning.insert(self.recv.begin(stream)?),
        };
        // A sleeping read on a socket whose read timeout is the connection's, without a
        // request deadline: the socket bounds the wait by itself, no clock read before it
        // and no other bound to set (the common case: one call).
        if spin || self.shortened || !self.http.handle_bounded_wait(d.now()) {
            // Otherwise without a request deadline, a sleeping read is still bounded by
            // the socket's read timeout alone: no clock read (see `Drive::wait_from`).
            let Some(wake) = d.wait_from(&mut self.http, spin || deadline) else {
                return Ok(());
            };
            let read = self.timeouts.read;
            if !spin && (wake != read.map(|r| d.now() + r) || self.shortened) {
                let want = wake.map(|t| t.saturating_duration_since(d.now()));
                set_bound(stream, &mut self.shortened, want, read)?;
            }
        }
        let r = read_some(stream, reader.spare_mut());
        match &r {
            Ok(n) if *n > 0 && self.recv.quickack => stream.rearm_quickack().map_err(Error::io)?,
            Err(e) if spin && e.kind() == io::ErrorKind::WouldBlock => {
                match self.recv.spin.spin(d.until(&self.http)) {
                    Some(true) if self.recv.spin.active() => {}
                    Some(false) => d.tick(&mut self.http),
                    // The budget is spent: blocking reads from here on.
                    _ => {
                        stream.set_nonblocking(false).map_err(Error::io)?;
                        *spinning = Some(false);
                    }
                }
                return Ok(());
            }
            _ => {}
        }
        d.read(&mut self.http, reader, r);
        Ok(())
    }

    /// The socket back in blocking mode if it spun for this response.
    fn stop_spinning(&mut self, spinning: &mut Option<bool>) -> Result<(), Error> {
        if spinning.take() == Some(true)
            && let Some(stream) = self.stream.as_mut()
        {
            stream.set_nonblocking(false).map_err(Error::io)?;
        }
        Ok(())
    }
}

/// [`Error::RequestTimeout`] before the caller names the request
/// ([`name_timeout`]): no allocation on the way out.
pub(crate) fn timed_out() -> Error {
    Error::RequestTimeout {
        method: Method::Get,
        url: String::new(),
        after: Duration::ZERO,
    }
}

/// Name the request an error of [`Client::send`] failed: its method and URL (the
/// request target, between the method and " HTTP/1.1", under the client's URL), and for
/// a [`timed_out`] error the timeout. Only on the way out with an error.
#[cold]
#[inline(never)]
pub(crate) fn name_error(
    e: Error,
    req: &Request<'_>,
    url: &HttpUrl,
    timeout: Option<Duration>,
) -> Error {
    let e = match e {
        Error::RequestTimeout { method, url, .. } => Error::RequestTimeout {
            method,
            url,
            after: timeout.unwrap_or_default(),
        },
        e => e,
    };
    e.named(req.method(), || {
        let line = req.as_bytes().split(|&b| b == b'\r').next().unwrap_or(&[]);
        let target = line.split(|&b| b == b' ').nth(1).unwrap_or(&[]);
        url.display(&String::from_utf8_lossy(target))
    })
}

/// Set the socket's read timeout to `want` (what is left until the connection's next
/// timeout), remembering whether that is shorter than the configured `read`. A stream
/// that cannot change it is checked between reads only (see `Stream::set_read_timeout`).
#[cold]
#[inline(never)]
fn set_bound<S: Stream>(
    stream: &mut S,
    shortened: &mut bool,
    want: Option<Duration>,
    read: Option<Duration>,
) -> Result<(), Error> {
    match stream.set_read_timeout(want) {
        Ok(()) => *shortened = want != read,
        Err(e) if e.kind() == io::ErrorKind::Unsupported => {}
        Err(e) => return Err(Error::io(e)),
    }
    Ok(())
}

fn read_some<S: Stream>(stream: &mut S, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        match stream.read(buf) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            r => return r,
        }
    }
}
