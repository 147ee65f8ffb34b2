//! [`Sender`]: the sending half handed to a `recv_with` closure beside the message it
//! received, so a handler answers a message while it borrows the read buffer, without
//! copying it first.

use tickwire_codec::rand::{MaskRng, NoMask};

use super::CloseCode;
use super::conn::Outbox;
use super::error::Error;
use crate::net::NetStream;

/// The sending half of a connection, lent to the closure of `recv_with` together with the
/// received message (which borrows the connection's read buffer: no copy).
///
/// Its sends are the connection's own: in blocking mode they return once written
/// (within the write timeout); in evented mode (and in the tokio connections, which
/// write the rest after the closure returns) they write what the socket takes now and
/// keep the rest in the write buffer, or return [`Error::Backpressure`] when the buffer
/// has no room (nothing queued).
///
/// ```
/// use tickwire::ws::{Client, Message, Server};
/// # std::thread::scope(|s| -> Result<(), tickwire::ws::Error> {
/// let mut server = Server::bind("127.0.0.1:0")?;
/// let url = format!("ws://{}/", server.local_addr()?);
/// s.spawn(move || {
///     // The echo server: the reply is written from the received message itself.
///     let mut conn = server.accept()?;
///     while let Some(()) = conn.recv_with(|msg, tx| match msg {
///         Message::Text(t) => tx.send_text(t),
///         Message::Binary(b) => tx.send_binary(b),
///         _ => Ok(()),
///     })? {}
///     Ok::<(), tickwire::ws::Error>(())
/// });
/// let mut client = Client::connect(&url)?;
/// client.send_text("hello")?;
/// assert_eq!(client.recv()?, Some(Message::Text("hello")));
/// client.close(tickwire::ws::CloseCode::NORMAL, "")?;
/// while client.recv()?.is_some() {}
/// # Ok(())
/// # }).unwrap();
/// ```
#[derive(Debug)]
pub struct Sender<'a>(Half<'a>);

/// The two roles' sending halves (a client masks, a server does not).
#[derive(Debug)]
enum Half<'a> {
    Client(Outbox<'a, NetStream, MaskRng>),
    Server(Outbox<'a, NetStream, NoMask>),
    /// A driver generic over its stream (the futures-io connections).
    #[cfg(feature = "futures-io")]
    Dyn(&'a mut (dyn Outgoing + 'a)),
}

/// A sending half over any stream, for the [`Half::Dyn`] form.
#[cfg(feature = "futures-io")]
pub(crate) trait Outgoing {
    fn send_text(&mut self, text: &str) -> Result<(), Error>;
    fn send_binary(&mut self, data: &[u8]) -> Result<(), Error>;
    fn send_ping(&mut self, payload: &[u8]) -> Result<(), Error>;
    fn send_pong(&mut self, payload: &[u8]) -> Result<(), Error>;
    fn close(&mut self, code: Option<CloseCode>, reason: &str) -> Result<(), Error>;
}

#[cfg(feature = "futures-io")]
impl<S: super::stream::Stream, M: tickwire_codec::ws::Masking> Outgoing for Outbox<'_, S, M> {
    fn send_text(&mut self, text: &str) -> Result<(), Error> {
        Outbox::send_text(self, text)
    }
    fn send_binary(&mut self, data: &[u8]) -> Result<(), Error> {
        Outbox::send_binary(self, data)
    }
    fn send_ping(&mut self, payload: &[u8]) -> Result<(), Error> {
        Outbox::send_ping(self, payload)
    }
    fn send_pong(&mut self, payload: &[u8]) -> Result<(), Error> {
        Outbox::send_pong(self, payload)
    }
    fn close(&mut self, code: Option<CloseCode>, reason: &str) -> Result<(), Error> {
        Outbox::close(self, code, reason)
    }
}

#[cfg(feature = "futures-io")]
impl std::fmt::Debug for dyn Outgoing + '_ {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Outgoing")
    }
}

#[cfg(feature = "futures-io")]
impl<'a> Sender<'a> {
    /// The sending half of a driver generic over its stream.
    pub(crate) fn of(out: &'a mut (dyn Outgoing + 'a)) -> Self {
        Sender(Half::Dyn(out))
    }
}

impl<'a> From<Outbox<'a, NetStream, MaskRng>> for Sender<'a> {
    fn from(o: Outbox<'a, NetStream, MaskRng>) -> Self {
        Sender(Half::Client(o))
    }
}

impl<'a> From<Outbox<'a, NetStream, NoMask>> for Sender<'a> {
    fn from(o: Outbox<'a, NetStream, NoMask>) -> Self {
        Sender(Half::Server(o))
    }
}

/// Run `$call` on whichever role's half this is.
macro_rules! either {
    ($self:ident, $o:ident => $call:expr) => {
        match &mut $self.0 {
            Half::Client($o) => $call,
            Half::Server($o) => $call,
            #[cfg(feature = "futures-io")]
            Half::Dyn($o) => $call,
        }
    };
}

impl Sender<'_> {
    /// Send a text message (see the connection's `send_text`).
    ///
    /// ```
    /// # let (mut client, mut server) = tickwire::ws::doc_pair()?;
    /// use tickwire::ws::Message;
    ///
    /// client.send_text("ping 7")?;
    /// server.recv_with(|msg, tx| match msg {
    ///     // `tx` is the connection's sending half: the reply goes out while `msg`
    ///     // still borrows the read buffer.
    ///     Message::Text(t) => tx.send_text(&t.replace("ping", "pong")),
    ///     _ => Ok(()),
    /// })?;
    /// assert_eq!(client.recv()?, Some(Message::Text("pong 7")));
    /// # Ok::<(), tickwire::ws::Error>(())
    /// ```
    #[inline]
    pub fn send_text(&mut self, text: &str) -> Result<(), Error> {
        either!(self, o => o.send_text(text))
    }

    /// Send a binary message (see the connection's `send_binary`).
    ///
    /// ```
    /// # let (mut client, mut server) = tickwire::ws::doc_pair()?;
    /// use tickwire::ws::Message;
    ///
    /// client.send_text("ping 7")?;
    /// server.recv_with(|msg, tx| match msg {
    ///     // `tx` is the connection's sending half: the reply goes out while `msg`
    ///     // still borrows the read buffer.
    ///     Message::Text(t) => tx.send_binary(t.as_bytes()),
    ///     _ => Ok(()),
    /// })?;
    /// assert_eq!(client.recv()?, Some(Message::Binary(b"ping 7")));
    /// # Ok::<(), tickwire::ws::Error>(())
    /// ```
    #[inline]
    pub fn send_binary(&mut self, data: &[u8]) -> Result<(), Error> {
        either!(self, o => o.send_binary(data))
    }

    /// Send a ping (payload at most 125 bytes).
    ///
    /// ```
    /// # let (mut client, mut server) = tickwire::ws::doc_pair()?;
    /// use tickwire::ws::Message;
    ///
    /// client.send_text("ping 7")?;
    /// server.recv_with(|msg, tx| match msg {
    ///     // `tx` is the connection's sending half: the reply goes out while `msg`
    ///     // still borrows the read buffer.
    ///     Message::Text(t) => tx.send_ping(b"are you there"),
    ///     _ => Ok(()),
    /// })?;
    /// assert_eq!(client.recv()?, Some(Message::Ping(b"are you there")));
    /// # Ok::<(), tickwire::ws::Error>(())
    /// ```
    pub fn send_ping(&mut self, payload: &[u8]) -> Result<(), Error> {
        either!(self, o => o.send_ping(payload))
    }

    /// Send an unsolicited pong (payload at most 125 bytes).
    ///
    /// ```
    /// # let (mut client, mut server) = tickwire::ws::doc_pair()?;
    /// use tickwire::ws::Message;
    ///
    /// client.send_text("ping 7")?;
    /// server.recv_with(|msg, tx| match msg {
    ///     // `tx` is the connection's sending half: the reply goes out while `msg`
    ///     // still borrows the read buffer.
    ///     Message::Text(t) => tx.send_pong(t.as_bytes()),
    ///     _ => Ok(()),
    /// })?;
    /// assert_eq!(client.recv()?, Some(Message::Pong(b"ping 7")));
    /// # Ok::<(), tickwire::ws::Error>(())
    /// ```
    pub fn send_pong(&mut self, payload: &[u8]) -> Result<(), Error> {
        either!(self, o => o.send_pong(payload))
    }

    /// Start the close handshake (see the connection's `close`); keep receiving for the
    /// peer's close.
    ///
    /// ```
    /// # let (mut client, mut server) = tickwire::ws::doc_pair()?;
    /// use tickwire::ws::{CloseCode, Message};
    ///
    /// client.send_text("ping 7")?;
    /// server.recv_with(|msg, tx| match msg {
    ///     // `tx` is the connection's sending half: the reply goes out while `msg`
    ///     // still borrows the read buffer.
    ///     Message::Text(t) => tx.close(CloseCode::POLICY, "no pings here"),
    ///     _ => Ok(()),
    /// })?;
    /// assert!(matches!(client.recv()?, Some(Message::Close(Some(f))) if f.code == CloseCode::POLICY));
    /// # Ok::<(), tickwire::ws::Error>(())
    /// ```
    pub fn close(&mut self, code: impl Into<Option<CloseCode>>, reason: &str) -> Result<(), Error> {
        let code = code.into();
        either!(self, o => o.close(code, reason))
    }
}
