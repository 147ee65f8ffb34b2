//! JSON request bodies (feature `json`): `.json(&value)` on the request builders,
//! blocking and tokio. serde_json serializes straight into the client's request buffer
//! (through an `io::Write` over the codec's [`BodyWriter`]): no intermediate `Vec`, no
//! copy, no allocation beyond what the value's `Serialize` does. The response side is
//! the codec's [`RestResponse::json`](tickwire_codec::http::RestResponse::json).

use std::io;

use tickwire_codec::http::{BodyWriter, Complete, Fields, Line};

use super::request::RequestBuilder;
use super::stream::Connector;

/// `io::Write` into the request buffer: a write that does not fit fails (the request
/// then reports `BufferFull`, which the client turns into `Error::RequestTooLarge`).
struct Body<'w, 'b>(&'w mut BodyWriter<'b>);

impl io::Write for Body<'_, '_> {
    #[inline]
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0
            .write_bytes(buf)
            .map(|()| buf.len())
            .map_err(|_| io::ErrorKind::WriteZero.into())
    }

    #[inline]
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.write(buf).map(|_| ())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Serialize `value` into the body (`fmt::Error` when it cannot be serialized or does
/// not fit).
#[inline]
pub(crate) fn write_json<T: serde::Serialize + ?Sized>(
    w: &mut BodyWriter<'_>,
    value: &T,
) -> std::fmt::Result {
    serde_json::to_writer(Body(w), value).map_err(|_| std::fmt::Error)
}

/// `json` on a request builder type in the states before the body.
macro_rules! json_methods {
    (impl[$($g:tt)*] $ty:ident[$($pre:tt)*]) => {
        $crate::rest::json::json_methods!(@state [$($g)*] $ty [$($pre)*] Line);
        $crate::rest::json::json_methods!(@state [$($g)*] $ty [$($pre)*] Fields);
    };
    (@state [$($g:tt)*] $ty:ident [$($pre:tt)*] $state:ident) => {
        impl<'c, $($g)*> $ty<'c, $($pre)* $state> {
            /// A JSON body serialized by serde_json straight into the client's request
            /// buffer (no intermediate buffer, no allocation of its own), with
            /// `Content-Type: application/json` and its `Content-Length` (feature
            /// `json`). A body that does not fit fails the `send` with
            /// `Error::RequestTooLarge`; a value serde_json cannot serialize (a map
            /// with non-string keys) with `Error::Build(BuildError::BodyWriter)`.
            ///
            /// ```
            /// # let server = tickwire::rest::doc_server();
            /// use tickwire::rest::Client;
            ///
            /// #[derive(serde::Serialize)]
            /// struct Order<'a> {
            ///     symbol: &'a str,
            ///     side: &'a str,
            ///     qty: f64,
            /// }
            ///
            /// let mut client = Client::connect(&format!("http://{server}/api/v3"))?;
            /// let order = Order { symbol: "BTCUSDT", side: "BUY", qty: 0.01 };
            /// let resp = client.post("/order").json(&order).send()?;
            /// assert_eq!(resp.body_str()?, "POST /api/v3/order");
            /// # Ok::<(), tickwire::rest::Error>(())
            /// ```
            #[inline]
            pub fn json<T: ::serde::Serialize + ?Sized>(self, value: &T) -> $ty<'c, $($pre)* Complete> {
                self.header("Content-Type", "application/json")
                    .body_writer(|w| $crate::rest::json::write_json(w, value))
            }
        }
    };
}
pub(crate) use json_methods;

json_methods!(impl[C: Connector] RequestBuilder[C,]);
#[cfg(all(feature = "tokio", unix))]
json_methods!(impl[] TokioRequestBuilder[]);

#[cfg(all(feature = "tokio", unix))]
use crate::tokio::rest::RequestBuilder as TokioRequestBuilder;
