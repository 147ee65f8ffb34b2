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
        super::Url::parse(url)?;
        let seed = self.seed.unwrap_or_else(default_seed);
        Ok(Reconnecting {
            builder: self.client,
            url: url.to_owned(),
            hook: self.hook,
            schedule: Schedule::new(self.backoff, seed),
            client: None,
            up_since: None,
            next_at: None,
            over: false,
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
    builder: ClientBuilder,
    url: String,
    hook: Option<Hook>,
    schedule: Schedule,
    client: Option<Client>,
    /// When the current connection was made.
    up_since: Option<Instant>,
    /// When the next attempt may start (`None`: now).
    next_at: Option<Instant>,
    /// Closed by the user, or given up.
    over: bool,
}

impl std::fmt::Debug for Reconnecting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reconnecting")
            .field("url", &self.url)
            .field("connected", &self.client.is_some())
            .field("schedule", &self.schedule)
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
        match client.conn.recv_ready(true) {
            Ok(true) => {}
            Ok(false) => return Ok(self.lost(Cause::Closed)),
            Err(Error::ReadTimeout) => return Err(Error::ReadTimeout),
            Err(e) => return Ok(self.lost(Cause::Error(e))),
        }
        match self.client.as_ref().and_then(|c| c.conn.ws.message()) {
            Some(m) => Ok(Event::Message(m)),
            None => Err(Error::AlreadyClosed),
        }
    }

    /// Not connected: wait for the scheduled attempt, connect, run the hook.
    fn reconnect(&mut self) -> Result<Event<'static>, Error> {
        if self.over {
            return Err(Error::AlreadyClosed);
        }
        if let Some(at) = self.next_at.take() {
            let left = at.saturating_duration_since(Instant::now());
            if !left.is_zero() {
                std::thread::sleep(left);
            }
        }
        let made = self.builder.connect(&self.url).and_then(|mut c| {
            if let Some(hook) = self.hook.as_mut() {
                hook(&mut c)?;
            }
            Ok(c)
        });
        match made {
            Ok(c) => {
                self.client = Some(c);
                self.up_since = Some(Instant::now());
                Ok(Event::Connected)
            }
            Err(e) => Ok(self.lost(Cause::Error(e))),
        }
    }

    /// The connection ended (or was not made) for `cause`: schedule the next attempt.
    fn lost(&mut self, cause: Cause) -> Event<'static> {
        self.client = None;
        let now = Instant::now();
        let retry_at = self.schedule.next_attempt(self.up_since.take(), now);
        self.next_at = retry_at;
        self.over = retry_at.is_none();
        Event::Disconnected(Disconnect {
            cause,
            failures: self.schedule.failures(),
            retry_at,
        })
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
        &self.schedule
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
        self.over = true;
        let Some(mut c) = self.client.take() else {
            return Ok(());
        };
        c.close(CloseCode::NORMAL, "")?;
        while c.recv()?.is_some() {}
        Ok(())
    }
}
