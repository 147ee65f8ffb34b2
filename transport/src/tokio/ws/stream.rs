//! A `futures` [`Stream`] and [`Sink`] view of a connection, in owned messages
//! (feature `futures`), for those who want combinators.
//!
//! This is the slower path: every received message is copied into an
//! [`OwnedMessage`] (an allocation per message) and sends go through
//! `poll_ready`/`start_send`/`poll_flush`. The borrowed `recv().await` and
//! `send_*(&..).await` of [`Client`](super::Client) and
//! [`ServerConnection`](super::ServerConnection) allocate nothing. The same evented
//! connection does the work, so auto-pong, limits, close codes and the close and
//! handshake timeouts behave as there.

use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Instant;

use ::tokio::time::Sleep;
use futures_core::Stream;
use futures_sink::Sink;
use tickwire_codec::ws::OwnedMessage;

use super::readiness::Readiness;
use crate::ws::{self, CloseCode, Error};

/// A connection seen as a [`Stream`] of received [`OwnedMessage`]s and a [`Sink`] of
/// messages to send. Make one with `into_messages()`; `into_inner()` gives the
/// connection back.
///
/// The stream ends (`None`) after the close handshake; an error ends the connection
/// (as `recv` says). `poll_close` on the sink starts the close handshake (1000) and
/// flushes it; keep polling the stream for the peer's close.
#[derive(Debug)]
pub struct Messages<C> {
    conn: C,
    /// The close or handshake deadline being waited for, and its timer.
    timer: Timer,
}

impl<C> Messages<C> {
    /// The connection back.
    pub fn into_inner(self) -> C {
        self.conn
    }
}

impl<C> Messages<C> {
    pub(crate) fn new(conn: C) -> Self {
        Messages { conn, timer: None }
    }
}

/// What the poll functions need from a connection.
pub(crate) trait Parts {
    type Ws: Evented;
    fn parts(&mut self) -> (&Readiness, &mut Self::Ws);
}

/// The evented calls of [`ws::Client`] and [`ws::ServerConnection`].
pub(crate) trait Evented {
    fn try_recv_owned(&mut self) -> Result<Option<OwnedMessage>, Error>;
    fn send(&mut self, msg: &OwnedMessage) -> Result<(), Error>;
    fn close(&mut self, code: Option<CloseCode>, reason: &str) -> Result<(), Error>;
    fn flush(&mut self) -> Result<bool, Error>;
    fn wants_write(&self) -> bool;
    fn is_closed(&self) -> bool;
    fn timeout_at(&self) -> Option<Instant>;
    fn handle_timeout(&mut self, now: Instant) -> Result<(), Error>;
}

macro_rules! evented {
    ($ws:ty) => {
        impl Evented for $ws {
            fn try_recv_owned(&mut self) -> Result<Option<OwnedMessage>, Error> {
                Ok(self.try_recv()?.map(|m| m.to_owned()))
            }
            fn send(&mut self, msg: &OwnedMessage) -> Result<(), Error> {
                match msg {
                    OwnedMessage::Text(t) => self.send_text(t),
                    OwnedMessage::Binary(b) => self.send_binary(b),
                    OwnedMessage::Ping(p) => self.send_ping(p),
                    OwnedMessage::Pong(p) => self.send_pong(p),
                    OwnedMessage::Close(c) => match c {
                        Some((code, reason)) => <$ws>::close(self, *code, reason),
                        None => <$ws>::close(self, None, ""),
                    },
                }
            }
            fn close(&mut self, code: Option<CloseCode>, reason: &str) -> Result<(), Error> {
                <$ws>::close(self, code, reason)
            }
            fn flush(&mut self) -> Result<bool, Error> {
                <$ws>::flush_some(self)
            }
            fn wants_write(&self) -> bool {
                <$ws>::wants_write(self)
            }
            fn is_closed(&self) -> bool {
                <$ws>::is_closed(self)
            }
            fn timeout_at(&self) -> Option<Instant> {
                <$ws>::timeout_at(self)
            }
            fn handle_timeout(&mut self, now: Instant) -> Result<(), Error> {
                <$ws>::handle_timeout(self, now)
            }
        }
    };
}

evented!(ws::Client);
evented!(ws::ServerConnection);

/// Poll readiness for reading (and writing, with `write`); `Ready` once something
/// was reported (and cleared): retry the operation.
fn poll_ready(ready: &Readiness, write: bool, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
    if let Poll::Ready(r) = ready.poll_read(cx) {
        return Poll::Ready(r.map_err(Error::from));
    }
    if write && let Poll::Ready(r) = ready.poll_write(cx) {
        return Poll::Ready(r.map_err(Error::from));
    }
    Poll::Pending
}

/// A deadline's timer, armed for one instant at a time.
type Timer = Option<(Instant, Pin<Box<Sleep>>)>;

/// Arm `timer` for `at` (if any) and poll it; `Ready` when it fired.
fn poll_deadline(timer: &mut Timer, at: Option<Instant>, cx: &mut Context<'_>) -> Poll<()> {
    let Some(at) = at else {
        *timer = None;
        return Poll::Pending;
    };
    match timer {
        Some((armed, sleep)) if *armed == at => sleep.as_mut().poll(cx),
        _ => {
            let mut sleep = Box::pin(::tokio::time::sleep_until(at.into()));
            let fired = sleep.as_mut().poll(cx);
            *timer = Some((at, sleep));
            fired
        }
    }
}

/// Write everything buffered. The connection's timers bound the wait (a peer that
/// stopped reading ends it with `Error::DeadPeer`).
fn poll_flush_all<C: Parts>(
    conn: &mut C,
    timer: &mut Timer,
    cx: &mut Context<'_>,
) -> Poll<Result<(), Error>> {
    loop {
        let (ready, ws) = conn.parts();
        if ws.flush()? {
            return Poll::Ready(Ok(()));
        }
        if poll_ready(ready, true, cx)?.is_ready() {
            continue;
        }
        ready!(poll_deadline(timer, ws.timeout_at(), cx));
        ws.handle_timeout(Instant::now())?;
    }
}

impl<C: Parts + Unpin> Stream for Messages<C> {
    type Item = Result<OwnedMessage, Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            let (ready, ws) = this.conn.parts();
            match ws.try_recv_owned() {
                Ok(Some(msg)) => return Poll::Ready(Some(Ok(msg))),
                Err(e) => return Poll::Ready(Some(Err(e))),
                Ok(None) if ws.is_closed() => return Poll::Ready(None),
                Ok(None) => {}
            }
            let write = ws.wants_write();
            let at = ws.timeout_at();
            if poll_ready(ready, write, cx)?.is_ready() {
                continue;
            }
            if poll_deadline(&mut this.timer, at, cx).is_ready() {
                let (_, ws) = this.conn.parts();
                if let Err(e) = ws.handle_timeout(Instant::now()) {
                    return Poll::Ready(Some(Err(e)));
                }
                continue;
            }
            return Poll::Pending;
        }
    }
}

impl<C: Parts + Unpin> Sink<OwnedMessage> for Messages<C> {
    type Error = Error;

    /// Ready once the write buffer is flushed (so any message that fits the buffer
    /// can be queued).
    fn poll_ready(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        let this = self.get_mut();
        poll_flush_all(&mut this.conn, &mut this.timer, cx)
    }

    fn start_send(self: Pin<&mut Self>, item: OwnedMessage) -> Result<(), Error> {
        let (_, ws) = self.get_mut().conn.parts();
        ws.send(&item)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        let this = self.get_mut();
        poll_flush_all(&mut this.conn, &mut this.timer, cx)
    }

    /// Start the close handshake (1000, once) and flush it.
    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        let this = self.get_mut();
        ready!(poll_flush_all(&mut this.conn, &mut this.timer, cx))?;
        let (_, ws) = this.conn.parts();
        if !ws.is_closed() {
            // A no-op once closing.
            ws.close(Some(CloseCode::NORMAL), "")?;
        }
        poll_flush_all(&mut this.conn, &mut this.timer, cx)
    }
}

impl Parts for super::Client {
    type Ws = ws::Client;
    fn parts(&mut self) -> (&Readiness, &mut ws::Client) {
        self.parts_mut()
    }
}

impl Parts for super::ServerConnection {
    type Ws = ws::ServerConnection;
    fn parts(&mut self) -> (&Readiness, &mut ws::ServerConnection) {
        self.parts_mut()
    }
}

impl super::Client {
    /// The [`Stream`]/[`Sink`] view in owned messages (the slower path; see
    /// [`Messages`]).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), tickwire::ws::Error> {
    /// # let (client, mut server) = tickwire::tokio::ws::doc_pair().await?;
    /// use std::pin::Pin;
    /// use futures_core::Stream;
    /// use futures_sink::Sink;
    /// use tickwire::tokio::ws::OwnedMessage;
    ///
    /// let mut msgs = client.into_messages();
    /// // With futures' StreamExt and SinkExt: msgs.next().await, msgs.send(m).await.
    /// std::future::poll_fn(|cx| Pin::new(&mut msgs).poll_ready(cx)).await?;
    /// Pin::new(&mut msgs).start_send(OwnedMessage::Text("hi".into()))?;
    /// std::future::poll_fn(|cx| Pin::new(&mut msgs).poll_flush(cx)).await?;
    /// assert_eq!(server.recv().await?, Some(tickwire::ws::Message::Text("hi")));
    /// server.send_text("back").await?;
    /// let next = std::future::poll_fn(|cx| Pin::new(&mut msgs).poll_next(cx)).await;
    /// assert_eq!(next.transpose()?, Some(OwnedMessage::Text("back".into())));
    /// # Ok(())
    /// # }
    /// ```
    pub fn into_messages(self) -> Messages<super::Client> {
        Messages::new(self)
    }
}

impl super::ServerConnection {
    /// The [`Stream`]/[`Sink`] view in owned messages (the slower path; see
    /// [`Messages`]). The opening handshake, if pending, runs on the first poll.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), tickwire::ws::Error> {
    /// # let (mut client, server) = tickwire::tokio::ws::doc_pair().await?;
    /// use std::pin::Pin;
    /// use futures_core::Stream;
    /// use futures_sink::Sink;
    /// use tickwire::tokio::ws::OwnedMessage;
    ///
    /// let mut msgs = server.into_messages();
    /// // With futures' StreamExt and SinkExt: msgs.next().await, msgs.send(m).await.
    /// std::future::poll_fn(|cx| Pin::new(&mut msgs).poll_ready(cx)).await?;
    /// Pin::new(&mut msgs).start_send(OwnedMessage::Text("hi".into()))?;
    /// std::future::poll_fn(|cx| Pin::new(&mut msgs).poll_flush(cx)).await?;
    /// assert_eq!(client.recv().await?, Some(tickwire::ws::Message::Text("hi")));
    /// client.send_text("back").await?;
    /// let next = std::future::poll_fn(|cx| Pin::new(&mut msgs).poll_next(cx)).await;
    /// assert_eq!(next.transpose()?, Some(OwnedMessage::Text("back".into())));
    /// # Ok(())
    /// # }
    /// ```
    pub fn into_messages(self) -> Messages<super::ServerConnection> {
        Messages::new(self)
    }
}
