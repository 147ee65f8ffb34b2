//! Prepared messages on async server connections: the blocking connection's
//! [`send_prepared`](crate::ws::ServerConnection::send_prepared) (the shared frame
//! straight to the socket when nothing is queued, only the tail copied), awaited.

use super::ServerConnection;
use crate::ws::{Error, PreparedMessage};

impl ServerConnection {
    /// Send a prepared message (encoded once, shared by every connection it goes to):
    /// awaits room in the write buffer (backpressure), then until it is written to the
    /// socket (write timeout). Same cancellation rules as
    /// [`send_text`](Self::send_text). To send to many connections from one task without
    /// waiting on the slowest, use [`try_send_prepared`](Self::try_send_prepared).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), tickwire::ws::Error> {
    /// # let (mut client, mut server) = tickwire::tokio::ws::doc_pair().await?;
    /// use tickwire::ws::{Message, PreparedMessage};
    ///
    /// let tick = PreparedMessage::text(r#"{"px":"101.5"}"#); // encoded once
    /// for conn in [&mut server] {
    ///     conn.send_prepared(&tick).await?; // ... sent to every subscriber
    /// }
    /// assert_eq!(client.recv().await?, Some(Message::Text(r#"{"px":"101.5"}"#)));
    /// # Ok(())
    /// # }
    /// ```
    pub async fn send_prepared(&mut self, msg: &PreparedMessage) -> Result<(), Error> {
        self.send_with(|c| c.ws.send_prepared(msg)).await
    }

    /// Send a prepared message without waiting: what the socket takes now is written, the
    /// rest stays in the write buffer ([`flush`](Self::flush) writes it);
    /// [`Error::Backpressure`] when the buffer has no room (nothing queued), and
    /// [`Error::HandshakeInProgress`] before the handshake is done.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), tickwire::ws::Error> {
    /// # let (mut client, mut server) = tickwire::tokio::ws::doc_pair().await?;
    /// use tickwire::ws::{Message, PreparedMessage};
    ///
    /// let tick = PreparedMessage::binary(&[1, 2, 3]);
    /// for conn in [&mut server] {
    ///     conn.try_send_prepared(&tick)?; // never waits on a slow subscriber
    /// }
    /// server.flush().await?; // the rest, if a socket was full
    /// assert_eq!(client.recv().await?, Some(Message::Binary(&[1, 2, 3])));
    /// # Ok(())
    /// # }
    /// ```
    pub fn try_send_prepared(&mut self, msg: &PreparedMessage) -> Result<(), Error> {
        self.ws.send_prepared(msg)
    }

    /// Whether [`send_prepared`](Self::send_prepared) sends `msg`'s shared frame (encoded
    /// and compressed once) rather than encoding it again; see the blocking
    /// [`shares_prepared`](crate::ws::ServerConnection::shares_prepared).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), tickwire::ws::Error> {
    /// # let (_client, server) = tickwire::tokio::ws::doc_pair().await?;
    /// use tickwire::ws::PreparedMessage;
    ///
    /// assert!(server.shares_prepared(&PreparedMessage::text("tick")));
    /// # Ok(())
    /// # }
    /// ```
    pub fn shares_prepared(&self, msg: &PreparedMessage) -> bool {
        self.ws.shares_prepared(msg)
    }
}
