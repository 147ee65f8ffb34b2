//! [`RequestBuilder`]: one request on a [`Client`](super::Client)'s own writer, from
//! `client.get(path)` (or another method) to `.send()`, in the order HTTP writes it:
//! query pairs first, then headers, then a body. Nothing is allocated: the request is
//! serialized into the client's writer as it is built and the response parsed in the
//! client's reader.
//!
//! The methods come from [`builder_methods!`], shared with the tokio client's builder;
//! only `send` differs.

use std::time::Duration;

use tickwire_codec::http::{self, Complete, Fields, Line, Method, ResponseReader, RestResponse};

use super::client::Core;
use super::error::Error;
use super::https::HttpConnector;
use super::options::too_large;
use super::stream::Connector;

/// A request being built on a [`Client`](super::Client)'s own writer: made by
/// [`Client::get`](super::Client::get), [`post`](super::Client::post) and the other
/// methods, sent by [`send`](Self::send), which returns the response borrowed from the
/// client's reader.
///
/// The state `S` follows the request's wire order: [`query`](Self::query) only before
/// the first [`header`](Self::header), and nothing after the body.
///
/// ```
/// # let server = tickwire::rest::doc_server();
/// use std::time::Duration;
/// use tickwire::rest::Client;
///
/// let mut client = Client::connect(&format!("http://{server}"))?;
/// let resp = client
///     .delete("/api/v3/order")
///     .query("symbol", "BTCUSDT")
///     .query_u64("orderId", 28457)
///     .header("X-MBX-APIKEY", "key")
///     .timeout(Duration::from_secs(1))
///     .send()?;
/// assert_eq!(resp.body(), b"DELETE /api/v3/order");
/// # Ok::<(), tickwire::rest::Error>(())
/// ```
#[must_use = "a request goes out only on send()"]
pub struct RequestBuilder<'c, C: Connector = HttpConnector, S = Line> {
    req: http::RequestBuilder<'c, S>,
    core: &'c mut Core<C>,
    reader: &'c mut ResponseReader<Vec<u8>>,
    /// The writer's size, for [`Error::RequestTooLarge`].
    buffer: usize,
    timeout: Option<Duration>,
}

impl<'c, C: Connector> RequestBuilder<'c, C, Line> {
    /// A request on `core`'s connection, built by `req`, answered into `reader`.
    #[inline]
    pub(crate) fn new(
        req: http::RequestBuilder<'c, Line>,
        core: &'c mut Core<C>,
        reader: &'c mut ResponseReader<Vec<u8>>,
        buffer: usize,
    ) -> Self {
        let timeout = core.request_timeout();
        RequestBuilder {
            req,
            core,
            reader,
            buffer,
            timeout,
        }
    }
}

/// The builder methods of a client's request builder, for a type `$ty<'c, [$pre] S>`
/// with the fields `req` (the codec's builder), `core`, `reader`, `buffer` and
/// `timeout`: one definition for the blocking and the tokio builders (only `send`
/// differs).
macro_rules! builder_methods {
    (impl[$($g:tt)*] $ty:ident[$($pre:tt)*]) => {
        impl<S, $($g)*> ::std::fmt::Debug for $ty<'_, $($pre)* S> {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.debug_struct("RequestBuilder")
                    .field("method", &self.req.method())
                    .field("timeout", &self.timeout)
                    .finish_non_exhaustive()
            }
        }

        impl<'c, S, $($g)*> $ty<'c, $($pre)* S> {
            /// The same request with its codec builder changed by `f`.
            #[inline(always)]
            fn map<T>(
                self,
                f: impl FnOnce(
                    ::tickwire_codec::http::RequestBuilder<'c, S>,
                ) -> ::tickwire_codec::http::RequestBuilder<'c, T>,
            ) -> $ty<'c, $($pre)* T> {
                $ty {
                    req: f(self.req),
                    core: self.core,
                    reader: self.reader,
                    buffer: self.buffer,
                    timeout: self.timeout,
                }
            }
        }

        impl<'c, $($g)*> $ty<'c, $($pre)* ::tickwire_codec::http::Line> {
            /// Append `key=value` to the query, both percent-encoded (before any
            /// header): `.query("symbol", "BTCUSDT")`.
            #[inline]
            pub fn query(self, key: &str, value: &str) -> Self {
                self.map(|r| r.query(key, value))
            }

            /// [`query`](Self::query) with an integer value, formatted without
            /// `fmt`: `.query_u64("limit", 100)`.
            #[inline]
            pub fn query_u64(self, key: &str, value: u64) -> Self {
                self.map(|r| r.query_u64(key, value))
            }
        }

        $crate::rest::request::builder_methods!(@open [$($g)*] $ty [$($pre)*]
            ::tickwire_codec::http::Line);
        $crate::rest::request::builder_methods!(@open [$($g)*] $ty [$($pre)*]
            ::tickwire_codec::http::Fields);

        impl<'c, S, $($g)*> $ty<'c, $($pre)* S> {
            /// Bound this request (until the last byte of its response) by `t`
            /// instead of the client's request timeout: [`Error::RequestTimeout`]
            /// after it.
            ///
            /// [`Error::RequestTimeout`]: $crate::rest::Error::RequestTimeout
            #[inline]
            pub fn timeout(mut self, t: ::std::time::Duration) -> Self {
                self.timeout = Some(t);
                self
            }
        }
    };
    (@open [$($g:tt)*] $ty:ident [$($pre:tt)*] $state:ty) => {
        impl<'c, $($g)*> $ty<'c, $($pre)* $state> {
            /// Add a header: `.header("X-MBX-APIKEY", key)`. A name that is not a
            /// token, a value with CR, LF or another control byte, or a header the
            /// client writes itself (`Host`, `Content-Length`, `Transfer-Encoding`)
            /// fails the `send` with [`Error::Build`].
            ///
            /// [`Error::Build`]: $crate::rest::Error::Build
            #[inline]
            pub fn header(
                self,
                name: &str,
                value: &str,
            ) -> $ty<'c, $($pre)* ::tickwire_codec::http::Fields> {
                self.map(|r| r.header(name, value))
            }

            /// The body, with its `Content-Length`: `.body(bytes)`. It is copied into
            /// the client's request buffer; one that does not fit fails the `send`
            /// with [`Error::RequestTooLarge`], which names the setting to raise.
            ///
            /// [`Error::RequestTooLarge`]: $crate::rest::Error::RequestTooLarge
            #[inline]
            pub fn body(self, body: &[u8]) -> $ty<'c, $($pre)* ::tickwire_codec::http::Complete> {
                self.map(|r| r.body(body))
            }

            /// A JSON body: `Content-Type: application/json` and the bytes as they
            /// are (see [`body`](Self::body)): `.json_bytes(br#"{"side":"BUY"}"#)`.
            #[inline]
            pub fn json_bytes(
                self,
                json: &[u8],
            ) -> $ty<'c, $($pre)* ::tickwire_codec::http::Complete> {
                self.map(|r| r.json_bytes(json))
            }

            /// A body serialized by `write` straight into the request buffer
            /// (`core::fmt::Write` and byte writes), its `Content-Length` filled in
            /// afterwards: `.body_writer(|w| write!(w, "{{\"qty\":{qty}}}"))`.
            #[inline]
            pub fn body_writer(
                self,
                write: impl FnOnce(&mut ::tickwire_codec::http::BodyWriter<'_>) -> ::core::fmt::Result,
            ) -> $ty<'c, $($pre)* ::tickwire_codec::http::Complete> {
                self.map(|r| r.body_writer(write))
            }
        }
    };
}
pub(crate) use builder_methods;

builder_methods!(impl[C: Connector] RequestBuilder[C,]);

/// `send` for each state: the codec's `finish` exists on each.
macro_rules! send {
    ($($state:ty),*) => {$(
        impl<'c, C: Connector> RequestBuilder<'c, C, $state> {
            /// Send the request and read its response: blocks within the client's
            /// timeouts (and the request timeout), with its reconnect and retry policy
            /// (see [`Client`](super::Client)). The response borrows the client's
            /// reader until the client is used again.
            ///
            /// ```
            /// # let server = tickwire::rest::doc_server();
            /// # let mut client = tickwire::rest::Client::connect(&format!("http://{server}/api/v3"))?;
            /// let resp = client
            ///     .post("/order")
            ///     .header("X-MBX-APIKEY", "key")
            ///     .json_bytes(br#"{"symbol":"BTCUSDT","qty":"0.01"}"#)
            ///     .send()?; // borrows the client's response buffer
            /// assert_eq!((resp.status(), resp.body_str()?), (200, "POST /api/v3/order"));
            /// # Ok::<(), tickwire::rest::Error>(())
            /// ```
            #[inline]
            pub fn send(self) -> Result<RestResponse<'c>, Error> {
                let req = self.req.finish().map_err(|e| too_large(e, self.buffer))?;
                self.core.send(&req, self.reader, self.timeout)
            }

            /// The request's method.
            #[inline]
            pub fn method(&self) -> Method {
                self.req.method()
            }
        }
    )*};
}
send!(Line, Fields, Complete);
