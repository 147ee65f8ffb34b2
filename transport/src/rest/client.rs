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
//! # Reconnect policy
//!
//! The connection is opened on first use and kept while responses allow it
//! ([`RestResponse::keep_alive`]). After a response with `Connection: close`, a
//! close-delimited body, or any error, it is dropped and the next `send` connects again
//! (and clears the reader). A connection is always dropped the way
//! [`Client::disconnect`] does it: over TLS, close_notify after every byte written
//! before it (or the alert of a TLS failure), waiting at most the close timeout
//! ([`ClientBuilder::close_timeout`]) for a server that is not reading; then the FIN.
//!
//! A kept-alive connection can go stale: the server closes it when idle, and the client
//! learns it only when it uses it. So:
//!
//! - before a request on a connection idle for at least [`ClientBuilder::idle_probe`]
//!   (default 1 s), the client checks without blocking whether the server already closed
//!   it (or sent something unasked, like a 408), and if so reconnects before sending a
//!   byte. Busy connections skip the check: it costs three system calls. Unasked bytes
//!   already in the reader after the last response are checked for before every request;
//! - if a request on a **reused** connection fails before the first response byte (the
//!   write fails, or the server closes or resets it), an **idempotent** request (GET,
//!   HEAD, PUT, DELETE: RFC 9110 §9.2.2) is sent once more on a fresh connection. A
//!   non-idempotent one is not (the server may have acted on it): the call returns
//!   [`Error::ConnectionLost`] and the next call reconnects.
//!
//! A request on a fresh connection is never retried, and no request is retried twice.
//!
//! # Writes and reads
//!
//! The request is written whole: partial writes continue where they stopped, and the
//! stream is in blocking mode, so a `WouldBlock` can only mean the write timeout passed;
//! that fails the call with [`Error::WriteTimeout`] and drops the connection (a request
//! cut short is never resumed or retried). Response bytes are read straight into the
//! reader's buffer; the read timeout bounds each wait for more bytes, and the request
//! timeout ([`ClientBuilder::timeout`], off by default) the whole call: a server that
//! sends its answer a byte at a time is cut at that deadline with
//! [`Error::RequestTimeout`]. (Over TLS the deadline is checked whenever a socket read
//! returns, so a server dribbling one TLS record can hold the call past it until that
//! record is complete or the read timeout passes.)

use std::io::{self, Write};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use tickwire_codec::http::{
    BuildError, Method, Request, RequestWriter, ResponseReader, RestResponse,
};

use super::error::Error;
use super::https::HttpConnector;
use super::options::{RequestOptions, request_options, request_writer, too_large};
use super::request::RequestBuilder;
use super::stream::{Connector, Stream, TcpConnector, Timeouts};
use super::url::HttpUrl;
use crate::proxy::proxy_options;
use crate::socket::RecvMode;
use crate::socket::socket_options;
use crate::socket::spin::Spinner;
#[cfg(feature = "tls")]
use crate::tls::TlsError;

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
            idle_probe: Some(Duration::from_secs(1)),
            recv_mode: RecvMode::Sleep,
            options: RequestOptions::default(),
        }
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
socket_options!(ClientBuilder<TcpConnector>, connector.socket);
proxy_options!(ClientBuilder<TcpConnector>, connector.proxy);
socket_options!(ClientBuilder<HttpConnector>, connector.tcp.socket);
proxy_options!(ClientBuilder<HttpConnector>, connector.tcp.proxy);

impl<C: Connector> ClientBuilder<C> {
    /// The longest a connect may take (default 10 s): [`Error::ConnectTimeout`].
    pub fn connect_timeout(mut self, t: Duration) -> Self {
        self.timeouts.connect = t;
        self
    }

    /// The longest wait for the next bytes of a response (default 30 s; `None`:
    /// forever): [`Error::ReadTimeout`].
    pub fn read_timeout(mut self, t: Option<Duration>) -> Self {
        self.timeouts.read = t;
        self
    }

    /// The longest wait for the socket to take more request bytes (default 30 s;
    /// `None`: forever): [`Error::WriteTimeout`].
    pub fn write_timeout(mut self, t: Option<Duration>) -> Self {
        self.timeouts.write = t;
        self
    }

    /// The longest closing a connection waits for the socket to take the last bytes
    /// and TLS close_notify (default 5 s): a connection dropped, disconnected,
    /// replaced or failed while the server is not reading.
    pub fn close_timeout(mut self, t: Duration) -> Self {
        self.timeouts.close = t;
        self
    }

    /// Before a request on a connection idle at least this long, check that the server
    /// has not closed it (default 1 s; `None`: never check). See the module docs.
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
                idle_probe: self.idle_probe,
                request_timeout: self.options.request_timeout,
                request_buffer: self.options.request_buffer,
                recv: Recv {
                    spin: Spinner::new(self.recv_mode),
                    quickack,
                },
                conn: None,
                stats: Stats::default(),
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

/// Counters of a client's life, for tests and monitoring.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Connections opened.
    pub connects: u64,
    /// Requests written (a retried request counts twice).
    pub requests: u64,
    /// Requests sent again on a fresh connection after a stale one failed.
    pub retries: u64,
    /// Connections replaced before sending because they were found closed by the idle
    /// probe, or had received bytes nobody asked for.
    pub stale_probed: u64,
}

struct Conn<S> {
    stream: S,
    /// Responses received on it; `> 0` means it is a reused keep-alive connection.
    responses: u64,
    last_used: Instant,
    /// The stream's read timeout is not the configured one: a request deadline
    /// shortened it.
    shortened: bool,
}

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

    /// The wait ended with `result`: the socket back in blocking mode if it spun.
    #[inline]
    fn end<S: Stream>(
        stream: &mut S,
        spinning: bool,
        result: Result<bool, Error>,
    ) -> Result<bool, Error> {
        if spinning {
            let back = stream.set_nonblocking(false);
            if result.is_ok() {
                back.map_err(Error::io)?;
            }
        }
        result
    }
}

/// One keep-alive HTTP/1.1 connection to one server (see the module docs), with its
/// own request writer and response reader.
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
    idle_probe: Option<Duration>,
    request_timeout: Option<Duration>,
    /// Bytes of the client's own writer (named by [`Error::RequestTooLarge`]).
    request_buffer: usize,
    recv: Recv,
    conn: Option<Conn<C::Stream>>,
    stats: Stats,
}

impl<C: Connector> std::fmt::Debug for Client<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("url", &self.core.url)
            .field("timeouts", &self.core.timeouts)
            .field("request_timeout", &self.core.request_timeout)
            .field("connected", &self.core.conn.is_some())
            .field("stats", &self.core.stats)
            .finish_non_exhaustive()
    }
}

/// How one attempt failed.
pub(crate) enum Failure {
    /// Nothing of a response arrived and the connection is gone: retrying may be safe.
    BeforeResponse(Error),
    /// Anything else.
    Fatal(Error),
}

impl Failure {
    /// Writing the request failed with `e`.
    pub(crate) fn on_write(e: io::Error) -> Failure {
        match Error::from_io(e, true) {
            e if is_disconnect(&e) => Failure::BeforeResponse(e),
            e => Failure::Fatal(e),
        }
    }

    /// Reading the response failed with `e` after `received` bytes of it.
    pub(crate) fn on_read(e: Error, received: usize) -> Failure {
        if received != 0 {
            return Failure::Fatal(e);
        }
        match e {
            Error::ConnectionLost { .. } => Failure::BeforeResponse(e),
            e if is_disconnect(&e) => Failure::BeforeResponse(e),
            // TLS: the server closed without close_notify (nginx does on an idle
            // keep-alive connection).
            #[cfg(feature = "tls")]
            Error::Tls {
                error: TlsError::UnexpectedEof,
                ..
            } => Failure::BeforeResponse(e),
            e => Failure::Fatal(e),
        }
    }
}

/// Whether a request may be sent again after a failure before any response byte: every
/// method but POST and PATCH (not idempotent).
pub(crate) fn retryable(method: Method) -> bool {
    !matches!(method, Method::Post | Method::Patch)
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

    /// A request writer on `storage` for this server, with `Host` and the URL's base
    /// path preset: for requests sent with [`send`](Self::send) and a reader of your
    /// own.
    pub fn request_writer<B: AsRef<[u8]> + AsMut<[u8]>>(
        &self,
        storage: B,
    ) -> Result<RequestWriter<B>, BuildError> {
        request_writer(storage, &self.core.host_header, &self.core.url.path)
    }

    /// The `Host` header value for this server (what
    /// [`request_writer`](Self::request_writer) presets).
    pub fn host_header(&self) -> &str {
        &self.core.host_header
    }

    /// The base path of the URL the client was made for (`/` when none): every
    /// request's path goes under it.
    pub fn base_path(&self) -> &str {
        &self.core.url.path
    }

    /// Counters: connects, requests, retries.
    pub fn stats(&self) -> Stats {
        self.core.stats
    }

    /// Whether a connection is open (it may still turn out stale).
    pub fn is_connected(&self) -> bool {
        self.core.conn.is_some()
    }

    /// The local address of the open connection.
    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.core
            .conn
            .as_ref()
            .and_then(|c| c.stream.local_addr().ok())
    }

    /// The server's address of the open connection (which of the host's addresses
    /// it reached); `None` when no connection is open or the stream has no address.
    pub fn peer_addr(&self) -> Option<SocketAddr> {
        self.core
            .conn
            .as_ref()
            .and_then(|c| c.stream.peer_addr().ok())
    }

    /// The open connection's stream (for an `https://` client,
    /// [`HttpStream::tls`](super::HttpStream::tls) gives the TLS version and ALPN).
    pub fn stream(&self) -> Option<&C::Stream> {
        self.core.conn.as_ref().map(|c| &c.stream)
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
    /// request timeout too). See the module docs for reconnects and retries.
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
        if let Some(mut conn) = self.conn.take() {
            let deadline = Instant::now() + self.timeouts.close;
            conn.stream.close(deadline);
        }
    }

    fn ensure_connected(&mut self) -> Result<(), Error> {
        if self.conn.is_none() {
            let stream = self.connector.connect(&self.url, &self.timeouts)?;
            self.stats.connects += 1;
            self.conn = Some(Conn {
                stream,
                responses: 0,
                last_used: Instant::now(),
                shortened: false,
            });
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
        let deadline = timeout.and_then(|t| Instant::now().checked_add(t));
        let method = req.method();
        let idempotent = retryable(method);
        self.probe_if_idle();
        if let Some(conn) = &self.conn
            && conn.responses > 0
            && !reader.unparsed().is_empty()
        {
            // Bytes after the last response that nobody asked for (a 408 before a
            // close, garbage): the connection cannot carry this request.
            self.stats.stale_probed += 1;
            self.disconnect();
        }
        let reused = self.conn.as_ref().is_some_and(|c| c.responses > 0);
        // Errors get the request's name here, off the success path.
        let name = |c: &Self, e| name_error(e, req, &c.url, timeout);
        match self.attempt(req, reader, deadline) {
            Ok(()) => {}
            Err(Failure::BeforeResponse(_)) if reused && idempotent => {
                self.stats.retries += 1;
                if let Err(Failure::BeforeResponse(e) | Failure::Fatal(e)) =
                    self.attempt(req, reader, deadline)
                {
                    return Err(name(self, e));
                }
            }
            Err(Failure::BeforeResponse(e) | Failure::Fatal(e)) => return Err(name(self, e)),
        }
        // `attempt` returned Ok only after `advance` finished a response.
        let lost = || {
            name(
                self,
                Error::http(tickwire_codec::http::Error::UnexpectedEof),
            )
        };
        reader.response().ok_or_else(lost)
    }

    /// Replace the connection before sending when it was idle long enough and the server
    /// has closed it.
    fn probe_if_idle(&mut self) {
        let (Some(after), Some(conn)) = (self.idle_probe, self.conn.as_mut()) else {
            return;
        };
        if conn.responses == 0 || conn.last_used.elapsed() < after {
            return;
        }
        if conn.stream.stale().unwrap_or(true) {
            self.stats.stale_probed += 1;
            self.disconnect();
        }
    }

    /// One try: connect if needed, write the request, read one response (left in
    /// `reader`, ready for [`ResponseReader::response`]).
    fn attempt<B, const N: usize>(
        &mut self,
        req: &Request<'_>,
        reader: &mut ResponseReader<B, N>,
        deadline: Option<Instant>,
    ) -> Result<(), Failure>
    where
        B: AsRef<[u8]> + AsMut<[u8]>,
    {
        self.ensure_connected().map_err(Failure::Fatal)?;
        if deadline.is_some_and(|d| Instant::now() >= d) {
            self.disconnect();
            return Err(Failure::Fatal(timed_out()));
        }
        let Some(conn) = self.conn.as_mut() else {
            return Err(Failure::Fatal(Error::connection_lost()));
        };
        if conn.responses == 0 {
            // A new connection: whatever the reader holds came from an earlier one.
            reader.clear();
        }
        self.stats.requests += 1;
        reader.expect(req.method());
        // `flush`: a TLS stream may keep encrypted records the socket did not take.
        if let Err(e) = conn
            .stream
            .write_all(req.as_bytes())
            .and_then(|()| conn.stream.flush())
        {
            // Behind the bytes the socket did not take: the close waits for them.
            self.disconnect();
            return Err(Failure::on_write(e));
        }
        let mut received = 0usize;
        let read = self.timeouts.read;
        let recv = &mut self.recv;
        let outcome = recv.begin(&mut conn.stream).and_then(|spinning| {
            let r = read_response(conn, reader, &mut received, deadline, read, recv, spinning);
            Recv::end(&mut conn.stream, spinning, r)
        });
        match outcome {
            Ok(keep_alive) => {
                if keep_alive {
                    conn.responses += 1;
                    conn.last_used = Instant::now();
                } else {
                    // The server closes after this response: answer its close.
                    self.disconnect();
                }
                Ok(())
            }
            Err(e) => {
                self.disconnect();
                Err(Failure::on_read(e, received))
            }
        }
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

/// The longest the next wait for response bytes may take: the read timeout, or what is
/// left until `deadline` when that is shorter ([`timed_out`] when nothing is left).
pub(crate) fn wait_bound(
    deadline: Option<Instant>,
    read: Option<Duration>,
) -> Result<Option<Duration>, Error> {
    let Some(d) = deadline else {
        return Ok(read);
    };
    let left = d
        .checked_duration_since(Instant::now())
        .filter(|l| !l.is_zero())
        .ok_or_else(timed_out)?;
    Ok(Some(read.map_or(left, |r| r.min(left))))
}

/// A failed read of response bytes: a timeout at or after `deadline` is the request
/// timeout ([`timed_out`]), not the read timeout.
pub(crate) fn read_failed(e: io::Error, deadline: Option<Instant>) -> Error {
    match Error::from_io(e, false) {
        Error::ReadTimeout { .. } if deadline.is_some_and(|d| Instant::now() >= d) => timed_out(),
        e => e,
    }
}

/// Before a read: the socket's read timeout is the read timeout, or what is left until
/// `deadline` when that is shorter ([`timed_out`] when nothing is left). Without a
/// deadline, on a socket no deadline shortened, nothing to do: a client without a
/// request timeout makes no extra system call.
#[inline(always)]
fn bound_read<S: Stream>(
    conn: &mut Conn<S>,
    deadline: Option<Instant>,
    read: Option<Duration>,
) -> Result<(), Error> {
    if deadline.is_none() && !conn.shortened {
        return Ok(());
    }
    set_bound(conn, deadline, read)
}

/// [`bound_read`] with a deadline, or back to the read timeout after one.
#[inline(never)]
fn set_bound<S: Stream>(
    conn: &mut Conn<S>,
    deadline: Option<Instant>,
    read: Option<Duration>,
) -> Result<(), Error> {
    let want = wait_bound(deadline, read)?;
    match conn.stream.set_read_timeout(want) {
        Ok(()) => conn.shortened = deadline.is_some(),
        // Checked between reads only (see `Stream::set_read_timeout`).
        Err(e) if e.kind() == io::ErrorKind::Unsupported => {}
        Err(e) => return Err(Error::io(e)),
    }
    Ok(())
}

/// Read from the connection into `reader` until it has a response ready; returns
/// whether that response keeps the connection alive. `received` counts the bytes read.
/// The peer closing before any byte is [`Error::ConnectionLost`]; `deadline` passing
/// is [`timed_out`]. `spinning` ([`Recv::begin`]): the socket is non-blocking and a
/// read that finds nothing asks the spinner whether to read again at once.
fn read_response<S: Stream, B, const N: usize>(
    conn: &mut Conn<S>,
    r: &mut ResponseReader<B, N>,
    received: &mut usize,
    deadline: Option<Instant>,
    read: Option<Duration>,
    recv: &mut Recv,
    mut spinning: bool,
) -> Result<bool, Error>
where
    B: AsRef<[u8]> + AsMut<[u8]>,
{
    // Spinning: when the current wait for bytes ends (read timeout or deadline); set
    // at its first empty read, so no clock is read while bytes flow.
    let mut wait_until: Option<Option<Instant>> = None;
    loop {
        if r.advance().map_err(Error::http)? {
            return Ok(r.response().is_some_and(|resp| resp.keep_alive()));
        }
        if r.is_eof() {
            // `advance` after EOF either completes a close-delimited body or errors.
            return Err(Error::http(tickwire_codec::http::Error::UnexpectedEof));
        }
        if r.spare_mut().is_empty() {
            return Err(Error::http(tickwire_codec::http::Error::BodyTooLarge));
        }
        if !spinning {
            bound_read(conn, deadline, read)?;
        }
        match read_some(&mut conn.stream, r.spare_mut()) {
            Ok(0) => {
                if *received == 0 {
                    return Err(Error::connection_lost());
                }
                r.signal_eof();
            }
            Ok(n) => {
                *received += n;
                r.commit(n);
                wait_until = None;
                if recv.quickack {
                    conn.stream.rearm_quickack().map_err(Error::io)?;
                }
            }
            Err(e) if spinning && e.kind() == io::ErrorKind::WouldBlock => {
                let until = *wait_until.get_or_insert_with(|| earliest(deadline, read));
                match recv.spin.spin(until) {
                    Some(true) if recv.spin.active() => {}
                    Some(false) => {
                        return Err(read_failed(io::ErrorKind::TimedOut.into(), deadline));
                    }
                    // The budget is spent: blocking reads from here on.
                    _ => {
                        conn.stream.set_nonblocking(false).map_err(Error::io)?;
                        spinning = false;
                    }
                }
            }
            Err(e) => return Err(read_failed(e, deadline)),
        }
    }
}

/// The end of a wait for bytes that starts now: `deadline`, or the read timeout from
/// now when that comes first.
#[cold]
fn earliest(deadline: Option<Instant>, read: Option<Duration>) -> Option<Instant> {
    let by_read = read.and_then(|t| Instant::now().checked_add(t));
    match (deadline, by_read) {
        (Some(d), Some(r)) => Some(d.min(r)),
        (d, r) => d.or(r),
    }
}

fn read_some<S: Stream>(stream: &mut S, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        match stream.read(buf) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            r => return r,
        }
    }
}

/// Errors that mean the peer dropped the connection.
fn is_disconnect(e: &Error) -> bool {
    let Error::Io { error: e, .. } = e else {
        return false;
    };
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::BrokenPipe
            | io::ErrorKind::UnexpectedEof
    )
}
