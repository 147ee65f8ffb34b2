//! Sending a [`PreparedMessage`] (feature `alloc`): the encoded frame is queued as it is,
//! under the same rules as any application message (room beside
//! [`CONTROL_ROOM`](super::CONTROL_ROOM), refused during the handshake and after a close).
//! See [`crate::ws::prepared`] for when a connection encodes the payload itself instead.

use super::{ConnectionError, Sender};
use crate::ws::frame::{OpCode, Role};
use crate::ws::prepared::PreparedMessage;
use crate::ws::{Connection, Masking};

#[cfg(test)]
#[path = "prepared_tests.rs"]
mod tests;

/// What a connection sends for a prepared message.
enum Plan<'p> {
    /// These bytes, as they are.
    Frame(&'p [u8]),
    /// The payload, encoded (and compressed) by the connection, as `send_text` would.
    Encode,
}

impl<W: AsRef<[u8]> + AsMut<[u8]>, M: Masking> Sender<W, M> {
    /// Queue a prepared message: its frame is copied into the output as it is (see
    /// [`crate::ws::prepared`]). [`ConnectionError::Backpressure`]: write out what is queued, then
    /// try again; nothing was queued.
    ///
    /// ```
    /// # use tickwire_codec::ws::connection::{doc_pair, doc_pump};
    /// # let (mut client, mut server) = doc_pair();
    /// use tickwire_codec::ws::{Message, PreparedMessage};
    ///
    /// let tick = PreparedMessage::text("tick"); // encoded once, for every connection
    /// server.sender().send_prepared(&tick)?;
    /// doc_pump(&mut server, &mut client);
    /// assert_eq!(client.poll_message()?, Some(Message::Text("tick")));
    /// # Ok::<(), tickwire_codec::ws::ConnectionError>(())
    /// ```
    pub fn send_prepared(&mut self, msg: &PreparedMessage) -> Result<(), ConnectionError> {
        self.send_prepared_with(msg, |_| 0).map(|_| ())
    }

    /// [`send_prepared`](Self::send_prepared), offering the frame to `write` first when
    /// nothing is queued ahead of it: `write` puts what it can of the bytes on the wire
    /// (a socket write) and returns how many it took (0 when the socket would block);
    /// only the rest is copied into the output, to go out with the next
    /// [`transmit`](Self::transmit). Returns the bytes `write` took. `write` is called
    /// only after the message was accepted (room checked), so a refusal writes nothing;
    /// a connection that encodes the payload itself (see [`crate::ws::prepared`]) queues
    /// it without calling `write`.
    ///
    /// ```
    /// # use tickwire_codec::ws::connection::{doc_pair, doc_pump};
    /// # let (mut client, mut server) = doc_pair();
    /// use tickwire_codec::ws::{Message, PreparedMessage};
    ///
    /// let tick = PreparedMessage::text("tick"); // encoded once, for every connection
    /// server.sender().send_prepared_with(&tick, |frame| frame.len())?; // "written" whole
    /// assert!(server.transmit().is_empty()); // nothing left to queue
    /// server.send_text("tick")?; // (the pump below moves this one)
    /// doc_pump(&mut server, &mut client);
    /// assert_eq!(client.poll_message()?, Some(Message::Text("tick")));
    /// # Ok::<(), tickwire_codec::ws::ConnectionError>(())
    /// ```
    #[inline]
    pub fn send_prepared_with(
        &mut self,
        msg: &PreparedMessage,
        write: impl FnOnce(&[u8]) -> usize,
    ) -> Result<usize, ConnectionError> {
        let frame = match self.plan(msg) {
            Plan::Frame(frame) => frame,
            Plan::Encode => return self.send_encoded(msg).map(|()| 0),
        };
        self.room_for(frame.len())?;
        let n = if self.out.is_empty() {
            write(frame).min(frame.len())
        } else {
            0
        };
        // `room_for` made sure the whole frame fits.
        self.out
            .extend(&frame[n..])
            .map_err(|_| ConnectionError::Backpressure)?;
        Ok(n)
    }

    /// Whether [`send_prepared`](Self::send_prepared) sends `msg`'s shared frame as it
    /// is (encoded, and compressed, once for every connection); `false`: this connection
    /// encodes the payload itself (a client; a fragment size below the payload; with
    /// permessage-deflate, server context takeover or a smaller negotiated window, see
    /// [`crate::ws::prepared`]).
    ///
    /// ```
    /// # use tickwire_codec::ws::connection::doc_pair;
    /// # let (mut client, mut server) = doc_pair();
    /// use tickwire_codec::ws::PreparedMessage;
    ///
    /// let tick = PreparedMessage::text("tick");
    /// assert!(server.sender().shares_prepared(&tick)); // a server, no compression
    /// assert!(!client.sender().shares_prepared(&tick)); // a client masks its own
    /// ```
    pub fn shares_prepared(&self, msg: &PreparedMessage) -> bool {
        matches!(self.plan(msg), Plan::Frame(_))
    }

    /// Which bytes go out for `msg` on this connection.
    #[inline]
    fn plan<'p>(&self, msg: &'p PreparedMessage) -> Plan<'p> {
        if self.writer.role() == Role::Client {
            return Plan::Encode;
        }
        let fragment = self.writer.fragment_size();
        if fragment != 0 && msg.payload().len() > fragment {
            return Plan::Encode;
        }
        #[cfg(feature = "deflate")]
        if let Some(z) = self.deflate_plan
            && msg.payload().len() >= z.threshold
        {
            return match msg.compressed_for(z.window_bits, z.no_context_takeover) {
                Some(frame) => Plan::Frame(frame),
                None => Plan::Encode,
            };
        }
        Plan::Frame(msg.frame())
    }

    /// Send `msg`'s payload as an ordinary message (this connection's framing and
    /// compression).
    #[cold]
    fn send_encoded(&mut self, msg: &PreparedMessage) -> Result<(), ConnectionError> {
        let data = msg.payload();
        #[cfg(feature = "deflate")]
        if self.deflate.is_some() {
            return self.send_deflate(msg.is_text(), data, None);
        }
        self.room_for(self.writer.message_len(data.len()))?;
        let op = if msg.is_text() {
            OpCode::Text
        } else {
            OpCode::Binary
        };
        Ok(self.writer.write_data(op, data, &mut self.out)?)
    }
}

impl<R, W, M> Connection<R, W, M>
where
    R: AsRef<[u8]> + AsMut<[u8]>,
    W: AsRef<[u8]> + AsMut<[u8]>,
    M: Masking,
{
    /// Queue a prepared message; see [`Sender::send_prepared`].
    ///
    /// ```
    /// # use tickwire_codec::ws::connection::{doc_pair, doc_pump};
    /// # let (mut client, mut server) = doc_pair();
    /// use tickwire_codec::ws::{Message, PreparedMessage};
    ///
    /// let tick = PreparedMessage::text("tick"); // encoded once, for every connection
    /// server.send_prepared(&tick)?;
    /// doc_pump(&mut server, &mut client);
    /// assert_eq!(client.poll_message()?, Some(Message::Text("tick")));
    /// # Ok::<(), tickwire_codec::ws::ConnectionError>(())
    /// ```
    #[inline]
    pub fn send_prepared(&mut self, msg: &PreparedMessage) -> Result<(), ConnectionError> {
        self.tx.send_prepared(msg)
    }

    /// Whether [`send_prepared`](Self::send_prepared) sends `msg`'s shared frame; see
    /// [`Sender::shares_prepared`].
    ///
    /// ```
    /// # use tickwire_codec::ws::connection::doc_pair;
    /// # let (_client, server) = doc_pair();
    /// use tickwire_codec::ws::PreparedMessage;
    ///
    /// assert!(server.shares_prepared(&PreparedMessage::binary(&[1, 2])));
    /// ```
    pub fn shares_prepared(&self, msg: &PreparedMessage) -> bool {
        self.tx.shares_prepared(msg)
    }

    /// Queue a prepared message, writing it straight out when nothing is queued; see
    /// [`Sender::send_prepared_with`].
    ///
    /// ```
    /// # use tickwire_codec::ws::connection::{doc_pair, doc_pump};
    /// # let (mut client, mut server) = doc_pair();
    /// use tickwire_codec::ws::{Message, PreparedMessage};
    ///
    /// let tick = PreparedMessage::text("tick"); // encoded once, for every connection
    /// server.send_prepared_with(&tick, |_frame| 0)?; // the socket would block: all queued
    /// doc_pump(&mut server, &mut client);
    /// assert_eq!(client.poll_message()?, Some(Message::Text("tick")));
    /// # Ok::<(), tickwire_codec::ws::ConnectionError>(())
    /// ```
    #[inline]
    pub fn send_prepared_with(
        &mut self,
        msg: &PreparedMessage,
        write: impl FnOnce(&[u8]) -> usize,
    ) -> Result<usize, ConnectionError> {
        self.tx.send_prepared_with(msg, write)
    }
}
