//! Prepared messages on server connections: one frame, encoded once by
//! [`PreparedMessage`], sent to many connections (see
//! [`tickwire_codec::ws::prepared`] for the codec's rules: room, close, compression).
//!
//! [`ServerConnection::send_prepared`] offers the shared frame to the socket first when
//! nothing is queued on the connection: one `write(2)` straight from the frame, and only
//! the tail the socket did not take is copied into the connection's write buffer. With
//! bytes already queued the frame is appended behind them (that copy is the staging of the
//! next socket write). [`ServerConnection::queue_prepared`] only appends, for a caller that
//! queues a message on every connection first and flushes them afterwards.
//!
//! Backpressure is per connection, as for every send: a connection whose write buffer has
//! no room refuses the message whole ([`Error::Backpressure`] in evented mode; blocking
//! mode waits for room within the write timeout), and the other connections are not
//! affected.

use std::io::{self, Write};

use tickwire_codec::ws::{ConnectionError, Masking, PreparedMessage};

use super::conn::Conn;
use super::error::Error;
use super::server::ServerConnection;
use super::stream::Stream;

impl<S: Stream, M: Masking> Conn<S, M> {
    /// Send `msg`: straight to the socket when nothing is queued (non-blocking), the rest
    /// queued; then as [`flush`](Conn::flush) (blocking: all of it).
    pub fn send_prepared(&mut self, msg: &PreparedMessage) -> Result<(), Error> {
        let direct = !self.io.stream.has_buffered();
        if direct {
            self.io.sock_nonblocking()?;
        }
        let mut failed = None;
        let stream = &mut self.io.stream;
        let sent = self.ws.send_prepared_with(msg, |bytes| {
            if direct {
                write_now(stream, bytes, &mut failed)
            } else {
                0
            }
        });
        match sent {
            Ok(n) => {
                if let Some(e) = failed {
                    // The frame is queued whole; the connection is broken anyway.
                    return Err(e.into());
                }
                if !self.wants_write() {
                    return Ok(());
                }
                // The socket took part of the frame: it is full now, so evented mode
                // leaves the rest to the next writable event without trying again.
                if n > 0 && !self.io.is_blocking() {
                    return Ok(());
                }
                self.flush().map(|_| ())
            }
            Err(e) => self.send_refused(e, |tx| tx.send_prepared(msg)),
        }
    }

    /// Queue `msg` without writing: [`Error::Backpressure`] when the write buffer has no
    /// room (in both modes; nothing queued).
    pub fn queue_prepared(&mut self, msg: &PreparedMessage) -> Result<(), Error> {
        match self.ws.send_prepared(msg) {
            Ok(()) => Ok(()),
            Err(ConnectionError::Backpressure) => Err(Error::Backpressure),
            Err(e) => Err(e.into()),
        }
    }
}

/// One non-blocking write of `bytes`: how many the socket took (0 when it would block or
/// failed; the failure is kept in `failed`).
fn write_now<S: Write>(stream: &mut S, bytes: &[u8], failed: &mut Option<io::Error>) -> usize {
    loop {
        match stream.write(bytes) {
            Ok(n) => return n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return 0,
            Err(e) => {
                *failed = Some(e);
                return 0;
            }
        }
    }
}

impl ServerConnection {
    /// Send a prepared message (see [`PreparedMessage`] and the codec's
    /// [`prepared`](tickwire_codec::ws::prepared) module): encoded once, shared by every
    /// connection it goes to. Blocking mode: returns once it is written (write timeout;
    /// finishes the opening handshake first). Evented mode: writes what the socket takes
    /// now and keeps the rest in the write buffer (finish it with
    /// [`flush`](Self::flush) on writable); [`Error::Backpressure`] when the buffer has no
    /// room (nothing queued). Refused after the close like any message.
    ///
    /// ```
    /// # let (mut client, mut server) = tickwire::ws::doc_pair()?;
    /// use tickwire::ws::{Message, PreparedMessage};
    ///
    /// let tick = PreparedMessage::text(r#"{"px":"101.5"}"#); // encoded once
    /// for conn in [&mut server] {
    ///     // ... sent to every subscriber
    ///     conn.send_prepared(&tick)?;
    /// }
    /// assert_eq!(client.recv()?, Some(Message::Text(r#"{"px":"101.5"}"#)));
    /// # Ok::<(), tickwire::ws::Error>(())
    /// ```
    pub fn send_prepared(&mut self, msg: &PreparedMessage) -> Result<(), Error> {
        self.ready()?;
        let r = self.conn.send_prepared(msg);
        r.map_err(|e| self.conn.name(e))
    }

    /// Whether [`send_prepared`](Self::send_prepared) sends `msg`'s shared frame, encoded
    /// (and with [`PreparedMessage::with_deflate`], compressed) once for every
    /// connection; `false`: this connection encodes and compresses the payload itself,
    /// as `send_text` would. With permessage-deflate the frame compressed once fits only
    /// a connection that negotiated `server_no_context_takeover`: build the server with
    /// [`DeflateConfig::fan_out`](tickwire_codec::ws::deflate::DeflateConfig::fan_out)
    /// so that every compressed connection does (see [`crate::ws`], "Fan-out").
    ///
    /// ```
    /// # let (_client, server) = tickwire::ws::doc_pair()?;
    /// use tickwire::ws::PreparedMessage;
    ///
    /// assert!(server.shares_prepared(&PreparedMessage::text("tick")));
    /// # Ok::<(), tickwire::ws::Error>(())
    /// ```
    pub fn shares_prepared(&self, msg: &PreparedMessage) -> bool {
        self.conn.ws.shares_prepared(msg)
    }

    /// Queue a prepared message in the write buffer without writing it, in either mode:
    /// [`Error::Backpressure`] when there is no room (nothing queued). Write it with
    /// [`flush`](Self::flush), for instance after queueing it on every connection.
    ///
    /// ```
    /// # let (mut client, mut server) = tickwire::ws::doc_pair()?;
    /// use tickwire::ws::{Message, PreparedMessage};
    ///
    /// let tick = PreparedMessage::binary(&[1, 2, 3]);
    /// server.queue_prepared(&tick)?; // on every connection first, no write yet
    /// server.flush()?; // then written
    /// assert_eq!(client.recv()?, Some(Message::Binary(&[1, 2, 3])));
    /// # Ok::<(), tickwire::ws::Error>(())
    /// ```
    pub fn queue_prepared(&mut self, msg: &PreparedMessage) -> Result<(), Error> {
        self.ready()?;
        self.conn.queue_prepared(msg)
    }
}
