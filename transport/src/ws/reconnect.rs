//! [`Reconnecting`]: a WebSocket client that stays connected, the loop a market-data
//! user otherwise writes every time. It connects, runs a hook on every (re)connection
//! (to subscribe), hands out what arrives, and when the connection is lost (a dead peer,
//! a reset, a close, a failed connect) reports why and connects again after a
//! [`Backoff`] with jitter. Every disconnect is an [`Event::Disconnected`] with its
//! [`Cause`]; nothing is retried silently.
//!
//! The blocking client is this one; `tickwire::tokio::ws::Reconnecting` is the same on
//! tokio, with the same names. The schedule itself ([`Schedule`](super::Schedule)) is
//! computed from instants and a seeded random source: tested without sleeping.

use std::time::Instant;

use super::backoff::{Backoff, Schedule, default_seed};
use super::{Client, ClientBuilder, CloseCode, Error, Message};

/// What [`Reconnecting::recv`] returns.
#[derive(Debug)]
pub enum Event<'a> {
    /// A connection was made and the `on_connect` hook ran on it.
    Connected,
    /// A message of the current connection (control frames included; a `Close` from
    /// the peer is followed by `Disconnected` with [`Cause::Closed`]).
    Message(Message<'a>),
    /// The connection was lost, or an attempt to make one failed.
    Disconnected(Disconnect),
}

/// Why and when: the cause of a disconnect and the schedule after it.
#[derive(Debug)]
pub struct Disconnect {
    /// Why the connection ended (or could not be made).
    pub cause: Cause,
    /// Failed attempts in a row, this one included.
    pub failures: u32,
    /// When the next attempt starts; `None`: the backoff's `max_attempts` were spent,
    /// and the client has given up (`recv` then says `Error::AlreadyClosed`).
    pub retry_at: Option<Instant>,
}

/// Why a connection ended.
#[derive(Debug)]
#[non_exhaustive]
pub enum Cause {
    /// The peer closed it with a close handshake (its `Close` was delivered first).
    Closed,
    /// It failed, or could not be made: `Error::DeadPeer`, `Error::ConnectionLost`, a
    /// protocol error, a refused connect, the hook's own error, ...
    Error(Error),
}

/// The reconnecting client's state machine, sans I/O: the one home of what a disconnect
/// does to the schedule, when the next attempt is due, and the events that say so. The
/// blocking and tokio [`Reconnecting`] drivers only connect, wait and sleep; they hand
/// it the instants (`now`) and what happened.
#[derive(Debug)]
pub(crate) struct Reconnector {
    pub(crate) url: String,
    pub(crate) schedule: Schedule,
    /// When the current connection was made.
    up_since: Option<Instant>,
    /// When the next attempt may start (`None`: now).
    next_at: Option<Instant>,
    /// Closed by the user, or given up.
    over: bool,
}

impl Reconnector {
    /// For `url` (checked now: a malformed URL is an error, never retried), with the
    /// schedule `backoff` and the jitter's `seed` (`None`: from the OS).
    pub(crate) fn new(url: &str, backoff: Backoff, seed: Option<u64>) -> Result<Self, Error> {
        super::Url::parse(url)?;
        Ok(Reconnector {
            url: url.to_owned(),
            schedule: Schedule::new(backoff, seed.unwrap_or_else(default_seed)),
            up_since: None,
            next_at: None,
            over: false,
        })
    }

    /// Not connected: when the next attempt may start (`None`: now); the driver waits
    /// until then, then connects and runs the hook. `Error::AlreadyClosed` once closed
    /// or given up. The instant stays until [`connected`](Self::connected) or
    /// [`lost`](Self::lost), so a dropped (cancelled) wait keeps its schedule.
    pub(crate) fn due(&self) -> Result<Option<Instant>, Error> {
        if self.over {
            return Err(Error::AlreadyClosed);
        }
        Ok(self.next_at)
    }

    /// An attempt ended: connected (and the hook ran) at `now`, or failed with `e`.
    pub(crate) fn attempted(&mut self, made: Result<(), Error>, now: Instant) -> Event<'static> {
        match made {
            Ok(()) => {
                self.up_since = Some(now);
                self.next_at = None;
                Event::Connected
            }
            Err(e) => self.lost(Cause::Error(e), now),
        }
    }

    /// What the current connection's "wait for a message" said (`Ok(true)`: a message is
    /// ready): `Ok(None)` to hand the message out, `Ok(Some(event))` when the connection
    /// ended (the driver drops it), or the read timeout's `Error::ReadTimeout`, which
    /// changes nothing.
    pub(crate) fn ready(
        &mut self,
        ready: Result<bool, Error>,
        now: Instant,
    ) -> Result<Option<Event<'static>>, Error> {
        match ready {
            Ok(true) => Ok(None),
            Ok(false) => Ok(Some(self.lost(Cause::Closed, now))),
            Err(Error::ReadTimeout) => Err(Error::ReadTimeout),
            Err(e) => Ok(Some(self.lost(Cause::Error(e), now))),
        }
    }

    /// The connection ended (or was not made) for `cause` at `now`: schedule the next
    /// attempt, or give up.
    fn lost(&mut self, cause: Cause, now: Instant) -> Event<'static> {
        let retry_at = self.schedule.next_attempt(self.up_since.take(), now);
        self.next_at = retry_at;
        self.over = retry_at.is_none();
        Event::Disconnected(Disconnect {
            cause,
            failures: self.schedule.failures(),
            retry_at,
        })
    }

    /// Closed by the user: never reconnect.
    pub(crate) fn close(&mut self) {
        self.over = true;
    }
}

/// The hook run on every new connection (blocking).
type Hook = Box<dyn FnMut(&mut Client) -> Result<(), Error> + Send>;

/// Settings of a [`Reconnecting`] client.
pub struct ReconnectingBuilder {
    client: ClientBuilder,
    backoff: Backoff,
    seed: Option<u64>,
    hook: Option<Hook>,
}

impl std::fmt::Debug for ReconnectingBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReconnectingBuilder")
            .field("client", &self.client)
            .field("backoff", &self.backoff)
            .finish_non_exhaustive()
    }
}

impl ReconnectingBuilder {
    /// The reconnect schedule (default [`Backoff::default`]).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickwire::ws::{Backoff, ClientBuilder, Reconnecting};
    ///
    /// let feed = Reconnecting::builder(ClientBuilder::new()).backoff(Backoff {
    ///     initial: Duration::from_millis(250),
    ///     max: Duration::from_secs(10),
    ///     ..Backoff::default()
    /// });
    /// ```
    pub fn backoff(mut self, backoff: Backoff) -> Self {
        self.backoff = backoff;
        self
    }

    /// Seed the jitter's random source (default: from the OS), for a reproducible
    /// schedule.
    ///
    /// ```
    /// use tickwire::ws::{ClientBuilder, Reconnecting};
    ///
    /// let feed = Reconnecting::builder(ClientBuilder::new()).seed(7);
    /// ```
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// Run `hook` on every new connection before any message is received (subscribe,
    /// log in). Its error counts as a lost connection: reported, then retried.
    ///
    /// ```
    /// use tickwire::ws::{ClientBuilder, Reconnecting};
    ///
    /// let feed = Reconnecting::builder(ClientBuilder::new())
    ///     .on_connect(|c| c.send_text(r#"{"op":"subscribe","args":["trades.BTCUSDT"]}"#));
    /// ```
    pub fn on_connect(
        mut self,
        hook: impl FnMut(&mut Client) -> Result<(), Error> + Send + 'static,
    ) -> Self {
        self.hook = Some(Box::new(hook));
        self
    }

    /// A client for `url` (checked now: a malformed URL is an error, never retried).
    /// The first connection is made by the first [`recv`](Reconnecting::recv), which
    /// says [`Event::Connected`] (or why it could not connect, then tries again).
    ///
    /// ```
    /// use tickwire::ws::{ClientBuilder, Reconnecting};
    ///
    /// let feed = Reconnecting::builder(ClientBuilder::new()).connect("wss://stream.example.com/ws")?;
    /// assert!(Reconnecting::builder(ClientBuilder::new()).connect("ftp://x").is_err());
    /// # Ok::<(), tickwire::ws::Error>(())
    /// ```
    pub fn connect(self, url: &str) -> Result<Reconnecting, Error> {
        Ok(Reconnecting {
            core: Reconnector::new(url, self.backoff, self.seed)?,
            builder: self.client,
            hook: self.hook,
            client: None,
        })
    }
}

/// A WebSocket client that stays connected: it connects, runs the `on_connect` hook on
/// every (re)connection (to subscribe), hands out what arrives, and when the connection
/// is lost (a dead peer, a reset, a close, a failed connect) reports why
/// ([`Event::Disconnected`] with its [`Cause`]) and connects again after a [`Backoff`]
/// with jitter. Nothing is retried silently. `tickwire::tokio::ws::Reconnecting` is the
/// same on tokio.
///
/// ```
/// use std::time::Duration;
/// use tickwire::ws::{Backoff, Cause, ClientBuilder, Event, Message, Reconnecting, Server};
///
/// # std::thread::scope(|s| -> Result<(), tickwire::ws::Error> {
/// let mut server = Server::bind("127.0.0.1:0")?;
/// let url = format!("ws://{}/feed", server.local_addr()?);
/// s.spawn(move || -> Result<(), tickwire::ws::Error> {
///     let mut conn = server.accept()?; // the first connection: answers the subscription
///     if let Some(Message::Text(sub)) = conn.recv()? {
///         let ack = format!("ok {sub}");
///         conn.send_text(&ack)?;
///     }
///     conn.close(tickwire::ws::CloseCode::GOING_AWAY, "restart")?;
///     while conn.recv()?.is_some() {}
///     let mut conn = server.accept()?; // the client is back, subscribed again
///     if let Some(Message::Text(sub)) = conn.recv()? {
///         let ack = format!("ok {sub}");
///         conn.send_text(&ack)?;
///     }
///     Ok(())
/// });
/// let client = ClientBuilder::new()
///     .keepalive(Some(Duration::from_secs(5)))
///     .dead_peer_timeout(Some(Duration::from_secs(15)));
/// let mut feed = Reconnecting::builder(client)
///     .backoff(Backoff { initial: Duration::from_millis(20), ..Backoff::default() })
///     .on_connect(|c| c.send_text("trades"))
///     .connect(&url)?;
/// let mut acks = 0;
/// while acks < 2 {
///     match feed.recv()? {
///         Event::Connected => {}
///         Event::Message(Message::Text(t)) => {
///             assert_eq!(t, "ok trades");
///             acks += 1;
///         }
///         Event::Message(_) => {} // the server's Close, then:
///         Event::Disconnected(d) => assert!(matches!(d.cause, Cause::Closed), "{d:?}"),
///     }
/// }
/// # Ok(())
/// # }).unwrap();
/// ```
pub struct Reconnecting {
    core: Reconnector,
    builder: ClientBuilder,
    hook: Option<Hook>,
    client: Option<Client>,
}

impl std::fmt::Debug for Reconnecting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reconnecting")
            .field("url", &self.core.url)
            .field("connected", &self.client.is_some())
            .field("schedule", &self.core.schedule)
            .finish_non_exhaustive()
    }
}

impl Reconnecting {
    /// Settings: `client`'s (timeouts, keepalive and dead-peer timeout, TLS, proxy) for
    /// every connection, plus the reconnect schedule and hook.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickwire::ws::{ClientBuilder, Reconnecting};
    ///
    /// let feed = Reconnecting::builder(
    ///     ClientBuilder::new()
    ///         .keepalive(Some(Duration::from_secs(5))) // a quiet link is pinged
    ///         .dead_peer_timeout(Some(Duration::from_secs(15))), // a silent one is dropped
    /// )
    /// .on_connect(|c| c.send_text("subscribe"))
    /// .connect("ws://127.0.0.1:9001/feed")?;
    /// # Ok::<(), tickwire::ws::Error>(())
    /// ```
    pub fn builder(client: ClientBuilder) -> ReconnectingBuilder {
        ReconnectingBuilder {
            client,
            backoff: Backoff::default(),
            seed: None,
            hook: None,
        }
    }

    /// The next event: a message, a new connection, or a disconnect and its cause.
    /// Waits for messages as the client's `recv` does (its read timeout's
    /// `Error::ReadTimeout` is returned and changes nothing); after a disconnect, the
    /// next call sleeps until the scheduled attempt, connects and runs the hook.
    /// `Err(Error::AlreadyClosed)` once closed or given up.
    ///
    /// ```
    /// # use tickwire::ws::{ClientBuilder, Event, Message, Reconnecting, Server};
    /// # std::thread::scope(|s| -> Result<(), tickwire::ws::Error> {
    /// # let mut server = Server::bind("127.0.0.1:0")?;
    /// # let url = format!("ws://{}/", server.local_addr()?);
    /// # s.spawn(move || -> Result<(), tickwire::ws::Error> {
    /// #     let mut c = server.accept()?;
    /// #     c.send_text("tick")?;
    /// #     while c.recv()?.is_some() {}
    /// #     Ok(())
    /// # });
    /// let mut feed = Reconnecting::builder(ClientBuilder::new()).connect(&url)?;
    /// assert!(matches!(feed.recv()?, Event::Connected));
    /// match feed.recv()? {
    ///     Event::Message(Message::Text(t)) => assert_eq!(t, "tick"),
    ///     other => panic!("{other:?}"),
    /// }
    /// feed.close()?;
    /// # Ok(())
    /// # }).unwrap();
    /// ```
    pub fn recv(&mut self) -> Result<Event<'_>, Error> {
        let Some(client) = self.client.as_mut() else {
            return self.reconnect();
        };
        let ready = client.conn.recv_ready(true);
        if let Some(lost) = self.core.ready(ready, Instant::now())? {
            self.client = None;
            return Ok(lost);
        }
        match self.client.as_ref().and_then(|c| c.conn.ws.message()) {
            Some(m) => Ok(Event::Message(m)),
            None => Err(Error::AlreadyClosed),
        }
    }

    /// Not connected: wait for the scheduled attempt, connect, run the hook.
    fn reconnect(&mut self) -> Result<Event<'static>, Error> {
        if let Some(at) = self.core.due()? {
            let left = at.saturating_duration_since(Instant::now());
            if !left.is_zero() {
                // The backoff the caller configured: a blocking client has nothing else
                // to wait on until the attempt the schedule (computed from instants, in
                // `Reconnector`) made due. The tokio driver waits with `sleep_until`.
                std::thread::sleep(left);
            }
        }
        let made = self.builder.connect(&self.core.url).and_then(|mut c| {
            if let Some(hook) = self.hook.as_mut() {
                hook(&mut c)?;
            }
            Ok(c)
        });
        let made = made.map(|c| self.client = Some(c));
        Ok(self.core.attempted(made, Instant::now()))
    }

    /// The current connection, to send on it (`None` between connections).
    ///
    /// ```
    /// # use tickwire::ws::{ClientBuilder, Event, Message, Reconnecting, Server};
    /// # std::thread::scope(|s| -> Result<(), tickwire::ws::Error> {
    /// # let mut server = Server::bind("127.0.0.1:0")?;
    /// # let url = format!("ws://{}/", server.local_addr()?);
    /// # s.spawn(move || -> Result<(), tickwire::ws::Error> {
    /// #     let mut c = server.accept()?;
    /// #     while let Some(m) = c.recv()? { if let Message::Text(t) = m { let t = t.to_owned(); c.send_text(&t)?; } }
    /// #     Ok(())
    /// # });
    /// let mut feed = Reconnecting::builder(ClientBuilder::new()).connect(&url)?;
    /// assert!(feed.client().is_none()); // not connected before the first recv
    /// assert!(matches!(feed.recv()?, Event::Connected));
    /// feed.client().unwrap().send_text("order")?;
    /// assert!(matches!(feed.recv()?, Event::Message(Message::Text("order"))));
    /// feed.close()?;
    /// # Ok(())
    /// # }).unwrap();
    /// ```
    pub fn client(&mut self) -> Option<&mut Client> {
        self.client.as_mut()
    }

    /// The schedule (failures in a row, the policy).
    ///
    /// ```
    /// use tickwire::ws::{ClientBuilder, Reconnecting};
    ///
    /// let feed = Reconnecting::builder(ClientBuilder::new()).connect("ws://127.0.0.1:9/")?;
    /// assert_eq!(feed.schedule().failures(), 0);
    /// # Ok::<(), tickwire::ws::Error>(())
    /// ```
    pub fn schedule(&self) -> &Schedule {
        &self.core.schedule
    }

    /// Stop: close the current connection (1000, waiting for the peer's close within
    /// the close timeout) and never reconnect; `recv` then says `Error::AlreadyClosed`.
    ///
    /// ```
    /// # use tickwire::ws::{ClientBuilder, Event, Reconnecting, Server};
    /// # std::thread::scope(|s| -> Result<(), tickwire::ws::Error> {
    /// # let mut server = Server::bind("127.0.0.1:0")?;
    /// # let url = format!("ws://{}/", server.local_addr()?);
    /// # s.spawn(move || -> Result<(), tickwire::ws::Error> {
    /// #     let mut c = server.accept()?;
    /// #     while c.recv()?.is_some() {}
    /// #     Ok(())
    /// # });
    /// let mut feed = Reconnecting::builder(ClientBuilder::new()).connect(&url)?;
    /// assert!(matches!(feed.recv()?, Event::Connected));
    /// feed.close()?;
    /// assert!(matches!(feed.recv(), Err(tickwire::ws::Error::AlreadyClosed)));
    /// # Ok(())
    /// # }).unwrap();
    /// ```
    pub fn close(&mut self) -> Result<(), Error> {
        self.core.close();
        let Some(mut c) = self.client.take() else {
            return Ok(());
        };
        c.close(CloseCode::NORMAL, "")?;
        while c.recv()?.is_some() {}
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn core(max_attempts: Option<u32>) -> Reconnector {
        let backoff = Backoff {
            initial: Duration::from_millis(100),
            jitter: 0.0,
            reset_after: Duration::from_secs(10),
            max_attempts,
            ..Backoff::default()
        };
        Reconnector::new("ws://127.0.0.1:9/", backoff, Some(1)).unwrap()
    }

    fn retry_at(e: &Event<'_>) -> Option<Instant> {
        match e {
            Event::Disconnected(d) => d.retry_at,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn reconnector_schedules_reports_and_gives_up() {
        assert!(Reconnector::new("ftp://x/", Backoff::default(), None).is_err());
        let t0 = Instant::now();
        let mut c = core(Some(1));
        assert_eq!(c.due().unwrap(), None, "the first attempt is due now");
        let lost = c.attempted(Err(Error::ConnectionLost), t0);
        let at = retry_at(&lost).expect("a retry");
        assert_eq!(at, t0 + Duration::from_millis(100));
        assert_eq!(
            c.due().unwrap(),
            Some(at),
            "kept until the next attempt ends"
        );
        assert!(matches!(c.attempted(Ok(()), at), Event::Connected));
        assert_eq!(c.due().unwrap(), None);
        // A read timeout changes nothing; a message is handed out.
        assert!(matches!(
            c.ready(Err(Error::ReadTimeout), at),
            Err(Error::ReadTimeout)
        ));
        assert!(c.ready(Ok(true), at).unwrap().is_none());
        // A short-lived connection does not reset the series: one failure was the limit.
        let closed = c.ready(Ok(false), at).unwrap().expect("lost");
        match &closed {
            Event::Disconnected(d) => {
                assert!(matches!(d.cause, Cause::Closed));
                assert_eq!(d.failures, 1);
                assert_eq!(d.retry_at, None, "max_attempts spent");
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(c.due(), Err(Error::AlreadyClosed)));
    }

    #[test]
    fn reconnector_resets_after_a_long_connection_and_closes() {
        let t0 = Instant::now();
        let mut c = core(None);
        c.attempted(Err(Error::ConnectionLost), t0);
        assert!(matches!(c.attempted(Ok(()), t0), Event::Connected));
        let later = t0 + Duration::from_secs(60);
        let lost = c.ready(Err(Error::DeadPeer), later).unwrap().expect("lost");
        assert_eq!(retry_at(&lost), Some(later + Duration::from_millis(100)));
        assert_eq!(c.schedule.failures(), 1, "the schedule started again");
        c.close();
        assert!(matches!(c.due(), Err(Error::AlreadyClosed)));
    }
}
