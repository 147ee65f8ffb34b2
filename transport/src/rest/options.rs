//! The settings of a REST client's own request writer and response reader, and its
//! request timeout: one struct and one set of builder setters
//! ([`request_options!`]) for the blocking and the tokio `ClientBuilder`.

use std::time::Duration;

use tickwire_codec::http::{BuildError, RequestWriter, ResponseReader};

use super::error::Error;
use super::url::HttpUrl;

/// Default size of a client's request buffer: 64 KiB.
pub(crate) const REQUEST_BUFFER: usize = 64 << 10;
/// Default size of a client's response buffer: 1 MiB.
pub(crate) const RESPONSE_BUFFER: usize = 1 << 20;

/// A client's own request writer and response reader.
pub(crate) type Buffers = (RequestWriter<Vec<u8>>, ResponseReader<Vec<u8>>);

/// What the builders' `timeout`, `request_buffer`, `response_buffer` and
/// `default_header` set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RequestOptions {
    /// Bound on a whole request (`ClientBuilder::timeout`).
    pub request_timeout: Option<Duration>,
    /// Bytes of the client's request writer.
    pub request_buffer: usize,
    /// Bytes of the client's response reader.
    pub response_buffer: usize,
    /// Headers serialized once into the writer, sent with every request.
    pub default_headers: Vec<(String, String)>,
}

impl Default for RequestOptions {
    fn default() -> Self {
        RequestOptions {
            request_timeout: None,
            request_buffer: REQUEST_BUFFER,
            response_buffer: RESPONSE_BUFFER,
            default_headers: Vec::new(),
        }
    }
}

impl RequestOptions {
    /// The client's own writer (Host, base path and default headers preset) and
    /// reader, allocated now.
    pub(crate) fn buffers(&self, url: &HttpUrl, host_header: &str) -> Result<Buffers, Error> {
        let too_large = |e| too_large(e, self.request_buffer);
        let mut writer = request_writer(vec![0; self.request_buffer], host_header, &url.path)
            .map_err(too_large)?;
        for (name, value) in &self.default_headers {
            writer.default_header(name, value).map_err(too_large)?;
        }
        let reader =
            ResponseReader::new(vec![0; self.response_buffer]).max_body_size(self.response_buffer);
        Ok((writer, reader))
    }
}

/// A writer on `storage` for requests to `host_header`, every path under `base`.
pub(crate) fn request_writer<B: AsRef<[u8]> + AsMut<[u8]>>(
    storage: B,
    host_header: &str,
    base: &str,
) -> Result<RequestWriter<B>, BuildError> {
    let mut w = RequestWriter::new(storage, host_header)?;
    if base != "/" {
        w.set_base_path(base)?;
    }
    Ok(w)
}

/// A build error of the client's own writer: running out of room names the setting.
pub(crate) fn too_large(e: BuildError, buffer: usize) -> Error {
    match e {
        BuildError::BufferFull => Error::RequestTooLarge { buffer },
        e => Error::Build(e),
    }
}

/// The setters of [`RequestOptions`] on a client builder with an `options` field;
/// `$client` is the client type the doc examples use.
macro_rules! request_options {
    (impl[$($g:tt)*] $ty:ty, $client:path) => {
        impl<$($g)*> $ty {
            /// The longest a whole request may take, from the call that sends it to the
            /// last byte of its response, headers included (default: no bound beyond
            /// the read and write timeouts): [`Error::RequestTimeout`]. Unlike the read
            /// timeout, which restarts with every byte, this cuts off a server that
            /// answers a byte at a time. The request builder's `timeout` overrides it
            /// for one request. The time a connect made by the call takes counts,
            /// though the connect timeout bounds the connect itself, and each wait for
            /// the socket to take request bytes is bounded by the write timeout; every
            /// wait for response bytes ends at the deadline.
            ///
            /// ```
            /// use std::time::Duration;
            #[doc = concat!("use ", stringify!($client), ";")]
            ///
            /// let client = Client::builder()
            ///     .timeout(Duration::from_secs(2))
            ///     .build("http://127.0.0.1:8080/api/v3")?;
            /// # Ok::<(), tickwire::rest::Error>(())
            /// ```
            ///
            /// [`Error::RequestTimeout`]: $crate::rest::Error::RequestTimeout
            pub fn timeout(mut self, t: ::std::time::Duration) -> Self {
                self.options.request_timeout = Some(t);
                self
            }

            /// Bytes of the client's own request writer (default 64 KiB): the largest
            /// request `client.get(path)` and the other methods can build, `Host`,
            /// headers and body together. A larger one is refused before anything is
            /// sent with [`Error::RequestTooLarge`]. Allocated when the client is
            /// built.
            ///
            /// ```
            #[doc = concat!("use ", stringify!($client), ";")]
            ///
            /// let client = Client::builder()
            ///     .request_buffer(4096)
            ///     .response_buffer(64 << 10)
            ///     .build("http://127.0.0.1:8080")?;
            /// # Ok::<(), tickwire::rest::Error>(())
            /// ```
            ///
            /// [`Error::RequestTooLarge`]: $crate::rest::Error::RequestTooLarge
            pub fn request_buffer(mut self, bytes: usize) -> Self {
                self.options.request_buffer = bytes;
                self
            }

            /// Bytes of the client's own response reader (default 1 MiB): the largest
            /// response, head and body, it can hold. Allocated when the client is built
            /// (the pages are touched only as responses fill them).
            pub fn response_buffer(mut self, bytes: usize) -> Self {
                self.options.response_buffer = bytes;
                self
            }

            /// A header sent with every request of the client's own writer (serialized
            /// once, when the client is built; a bad name or value fails the build with
            /// [`Error::Build`]).
            ///
            /// ```
            #[doc = concat!("use ", stringify!($client), ";")]
            ///
            /// let client = Client::builder()
            ///     .default_header("X-MBX-APIKEY", "key")
            ///     .build("http://127.0.0.1:8080")?;
            /// # Ok::<(), tickwire::rest::Error>(())
            /// ```
            ///
            /// [`Error::Build`]: $crate::rest::Error::Build
            pub fn default_header(mut self, name: &str, value: &str) -> Self {
                self.options
                    .default_headers
                    .push((name.to_owned(), value.to_owned()));
                self
            }
        }
    };
}
pub(crate) use request_options;

/// The accessors every REST client has on its `core` (`host_header`, `url`): the
/// request writer for its server, its `Host` header and base path. Expanded inside the
/// blocking, tokio and futures-io `Client` impls.
macro_rules! client_accessors {
    () => {
        /// A request writer on `storage` for this server, with `Host` and the URL's base
        /// path preset: for requests sent with [`send`](Self::send) and a reader of your
        /// own.
        pub fn request_writer<B: AsRef<[u8]> + AsMut<[u8]>>(
            &self,
            storage: B,
        ) -> Result<::tickwire_codec::http::RequestWriter<B>, ::tickwire_codec::http::BuildError> {
            $crate::rest::options::request_writer(
                storage,
                &self.core.host_header,
                &self.core.url.path,
            )
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
    };
}
pub(crate) use client_accessors;

/// The setters of [`Timeouts`](crate::rest::Timeouts) on a client builder with a
/// `timeouts` field; `$client` is the client type the doc example uses.
macro_rules! timeout_options {
    (impl[$($g:tt)*] $ty:ty, $client:path) => {
        impl<$($g)*> $ty {
            /// The longest a connect may take (default 10 s): [`Error::ConnectTimeout`].
            ///
            /// ```
            /// use std::time::Duration;
            #[doc = concat!("use ", stringify!($client), ";")]
            ///
            /// let client = Client::builder()
            ///     .connect_timeout(Duration::from_secs(2))
            ///     .read_timeout(Some(Duration::from_millis(500)))
            ///     .write_timeout(Some(Duration::from_millis(500)))
            ///     .close_timeout(Duration::from_secs(1))
            ///     .build("http://127.0.0.1:8080")?;
            /// # Ok::<(), tickwire::rest::Error>(())
            /// ```
            ///
            /// [`Error::ConnectTimeout`]: $crate::rest::Error::ConnectTimeout
            pub fn connect_timeout(mut self, t: ::std::time::Duration) -> Self {
                self.timeouts.connect = t;
                self
            }

            /// The longest wait for the next bytes of a response (default 30 s; `None`:
            /// forever): [`Error::ReadTimeout`].
            ///
            /// [`Error::ReadTimeout`]: $crate::rest::Error::ReadTimeout
            pub fn read_timeout(mut self, t: Option<::std::time::Duration>) -> Self {
                self.timeouts.read = t;
                self
            }

            /// The longest wait for the connection to take more request bytes (default
            /// 30 s; `None`: forever): [`Error::WriteTimeout`].
            ///
            /// [`Error::WriteTimeout`]: $crate::rest::Error::WriteTimeout
            pub fn write_timeout(mut self, t: Option<::std::time::Duration>) -> Self {
                self.timeouts.write = t;
                self
            }

            /// The longest closing a connection waits for it to take the last bytes and
            /// TLS close_notify (default 5 s): a connection dropped, disconnected,
            /// replaced or failed while the server is not reading (on tokio, a dropped
            /// connection finishes its close in a task on the runtime).
            pub fn close_timeout(mut self, t: ::std::time::Duration) -> Self {
                self.timeouts.close = t;
                self
            }
        }
    };
}
pub(crate) use timeout_options;
