//! JSON response bodies (feature `json`): [`RestResponse::json`] deserializes the body
//! with serde_json straight from the reader's buffer. Fields typed `&str` or `&[u8]`
//! borrow from the body (no copy); serde_json allocates only where the value asks for it
//! (`String`, `Vec`, a string with escapes in a borrowed field fails instead).

use super::RestResponse;

impl<'a> RestResponse<'a> {
    /// The body as JSON, deserialized into `T`; `T` may borrow from the body for as
    /// long as the response is borrowed (`&'a str` fields: no copy, no allocation).
    ///
    /// ```
    /// use tickwire_codec::http::ResponseReader;
    ///
    /// #[derive(serde::Deserialize)]
    /// struct Ack<'a> {
    ///     #[serde(rename = "orderId")]
    ///     order_id: u64,
    ///     status: &'a str,
    /// }
    ///
    /// let mut r: ResponseReader<_> = ResponseReader::new([0u8; 256]);
    /// let wire = b"HTTP/1.1 200 OK\r\nContent-Length: 32\r\n\r\n{\"orderId\":28457,\"status\":\"NEW\"}";
    /// r.feed(wire);
    /// let resp = r.poll().unwrap().unwrap();
    /// let ack: Ack<'_> = resp.json().unwrap();
    /// assert_eq!((ack.order_id, ack.status), (28457, "NEW"));
    /// ```
    pub fn json<T: serde::Deserialize<'a>>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_slice(self.body())
    }
}
