//! [`Reconnecting`] on tokio: the blocking [`crate::ws::Reconnecting`] with the same
//! names, awaited. It connects, runs the `on_connect` hook on every (re)connection,
//! hands out what arrives, and on a lost connection reports the [`Cause`] and connects
//! again after a [`Backoff`] with jitter (a tokio timer, never a blocked thread).
//! [`Reconnecting::recv`] is cancellation-safe between connections as the client's
//! `recv` is within one: a dropped future loses no message, and a pending attempt keeps
//! its schedule.

use std::future::Future;
use std::pin::Pin;
use std::time::Instant;

use super::{Client, ClientBuilder};
use crate::ws::backoff::default_seed;
use crate::ws::{Backoff, Cause, CloseCode, Disconnect, Error, Event, Schedule};

/// The future a hook returns.
pub type HookFuture<'c> = Pin<Box<dyn Future<Output = Result<(), Error>> + Send + 'c>>;

/// The hook run on every new connection (tokio).
type Hook = Box<dyn for<'c> FnMut(&'c mut Client) -> HookFuture<'c> + Send>;

/// Settings of a [`Reconnecting`] client (tokio).
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
    /// use tickwire::tokio::ws::{Backoff, ClientBuilder, Reconnecting};
    ///
    /// let feed = Reconnecting::builder(ClientBuilder::new()).backoff(Backoff {
    ///     initial: Duration::from_millis(250),
    ///     ..Backoff::default()
    /// });
    /// ```
    pub fn backoff(mut self, backoff: Backoff) -> Self {
        self.backoff = backoff;
        self
    }

    /// Seed the jitter's random source (default: from the OS).
    ///
    /// ```
    /// use tickwire::tokio::ws::{ClientBuilder, Reconnecting};
    ///
    /// let feed = Reconnecting::builder(ClientBuilder::new()).seed(7);
    /// ```
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// Run `hook` on every new connection before any message is received (subscribe,
    /// log in); it returns a boxed future borrowing the client. Its error counts as a
    /// lost connection: reported, then retried.
    ///
    /// ```
    /// use tickwire::tokio::ws::{ClientBuilder, Reconnecting};
    ///
    /// let feed = Reconnecting::builder(ClientBuilder::new())
    ///     .on_connect(|c| Box::pin(async move { c.send_text("subscribe trades").await }));
    /// ```
    pub fn on_connect(
        mut self,
        hook: impl for<'c> FnMut(&'c mut Client) -> HookFuture<'c> + Send + 'static,
    ) -> Self {
        self.hook = Some(Box::new(hook));
        self
    }

    /// A client for `url` (checked now; a malformed URL is an error, never retried).
    /// The first connection is made by the first [`recv`](Reconnecting::recv).
    ///
    /// ```
    /// use tickwire::tokio::ws::{ClientBuilder, Reconnecting};
    ///
    /// let feed = Reconnecting::builder(ClientBuilder::new()).connect("wss://stream.example.com/ws")?;
    /// # Ok::<(), tickwire::ws::Error>(())
    /// ```
    pub fn connect(self, url: &str) -> Result<Reconnecting, Error> {
        crate::ws::Url::parse(url)?;
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

/// A WebSocket client that stays connected, on tokio: the blocking
/// [`crate::ws::Reconnecting`] with the same names, awaited (the backoff waits on a
/// tokio timer, never a blocked thread; `recv` is cancellation-safe).
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), tickwire::ws::Error> {
/// use std::time::Duration;
/// use tickwire::tokio::ws::{Backoff, Cause, ClientBuilder, Event, Reconnecting, Server};
/// use tickwire::ws::{CloseCode, Message};
///
/// let mut server = Server::bind("127.0.0.1:0").await?;
/// let url = format!("ws://{}/feed", server.local_addr()?);
/// tokio::spawn(async move {
///     for _ in 0..2 {
///         let mut conn = server.accept().await?;
///         if let Some(Message::Text(sub)) = conn.recv().await? {
///             let ack = format!("ok {sub}");
///             conn.send_text(&ack).await?;
///         }
///         conn.close(CloseCode::GOING_AWAY, "restart").await?;
///         while conn.recv().await?.is_some() {}
///     }
///     Ok::<(), tickwire::ws::Error>(())
/// });
/// let mut feed = Reconnecting::builder(ClientBuilder::new())
///     .backoff(Backoff { initial: Duration::from_millis(20), ..Backoff::default() })
///     .on_connect(|c| Box::pin(async move { c.send_text("trades").await }))
///     .connect(&url)?;
/// let mut acks = 0;
/// while acks < 2 {
///     match feed.recv().await? {
///         Event::Message(Message::Text(t)) => {
///             assert_eq!(t, "ok trades");
///             acks += 1;
///         }
///         Event::Disconnected(d) => assert!(matches!(d.cause, Cause::Closed), "{d:?}"),
///         _ => {}
///     }
/// }
/// # Ok(())
/// # }
/// ```
pub struct Reconnecting {
    builder: ClientBuilder,
    url: String,
    hook: Option<Hook>,
    schedule: Schedule,
    client: Option<Client>,
    up_since: Option<Instant>,
    next_at: Option<Instant>,
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
    /// Settings: `client`'s for every connection, plus the schedule and hook.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickwire::tokio::ws::{ClientBuilder, Reconnecting};
    ///
    /// let feed = Reconnecting::builder(
    ///     ClientBuilder::new()
    ///         .keepalive(Some(Duration::from_secs(5)))
    ///         .dead_peer_timeout(Some(Duration::from_secs(15))),
    /// )
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

    /// The next event: a message, a new connection, or a disconnect and its cause
    /// (as the blocking [`crate::ws::Reconnecting::recv`]); after a disconnect, the
    /// next call awaits the scheduled attempt, connects and runs the hook.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), tickwire::ws::Error> {
    /// # use tickwire::tokio::ws::{ClientBuilder, Event, Reconnecting, Server};
    /// # use tickwire::ws::Message;
    /// # let mut server = Server::bind("127.0.0.1:0").await?;
    /// # let url = format!("ws://{}/", server.local_addr()?);
    /// # tokio::spawn(async move {
    /// #     let mut c = server.accept().await?;
    /// #     c.send_text("tick").await?;
    /// #     while c.recv().await?.is_some() {}
    /// #     Ok::<(), tickwire::ws::Error>(())
    /// # });
    /// let mut feed = Reconnecting::builder(ClientBuilder::new()).connect(&url)?;
    /// assert!(matches!(feed.recv().await?, Event::Connected));
    /// assert!(matches!(feed.recv().await?, Event::Message(Message::Text("tick"))));
    /// feed.close().await?;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn recv(&mut self) -> Result<Event<'_>, Error> {
        let Some(client) = self.client.as_mut() else {
            return self.reconnect().await;
        };
        match client.recv_ready_crate().await {
            Ok(true) => {}
            Ok(false) => return Ok(self.lost(Cause::Closed)),
            Err(Error::ReadTimeout) => return Err(Error::ReadTimeout),
            Err(e) => return Ok(self.lost(Cause::Error(e))),
        }
        match self.client.as_ref().and_then(|c| c.ready_message()) {
            Some(m) => Ok(Event::Message(m)),
            None => Err(Error::AlreadyClosed),
        }
    }

    async fn reconnect(&mut self) -> Result<Event<'static>, Error> {
        if self.over {
            return Err(Error::AlreadyClosed);
        }
        if let Some(at) = self.next_at {
            ::tokio::time::sleep_until(at.into()).await;
            self.next_at = None;
        }
        let made = match self.builder.connect(&self.url).await {
            Ok(mut c) => match self.hook.as_mut() {
                Some(hook) => hook(&mut c).await.map(|()| c),
                None => Ok(c),
            },
            Err(e) => Err(e),
        };
        match made {
            Ok(c) => {
                self.client = Some(c);
                self.up_since = Some(Instant::now());
                Ok(Event::Connected)
            }
            Err(e) => Ok(self.lost(Cause::Error(e))),
        }
    }

    fn lost(&mut self, cause: Cause) -> Event<'static> {
        self.client = None;
        let retry_at = self
            .schedule
            .next_attempt(self.up_since.take(), Instant::now());
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
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), tickwire::ws::Error> {
    /// # use tickwire::tokio::ws::{ClientBuilder, Event, Reconnecting, Server};
    /// # use tickwire::ws::Message;
    /// # let mut server = Server::bind("127.0.0.1:0").await?;
    /// # let url = format!("ws://{}/", server.local_addr()?);
    /// # tokio::spawn(async move {
    /// #     let mut c = server.accept().await?;
    /// #     while let Some(m) = c.recv().await? { if let Message::Text(t) = m { let t = t.to_owned(); c.send_text(&t).await?; } }
    /// #     Ok::<(), tickwire::ws::Error>(())
    /// # });
    /// let mut feed = Reconnecting::builder(ClientBuilder::new()).connect(&url)?;
    /// assert!(matches!(feed.recv().await?, Event::Connected));
    /// feed.client().unwrap().send_text("order").await?;
    /// assert!(matches!(feed.recv().await?, Event::Message(Message::Text("order"))));
    /// # Ok(())
    /// # }
    /// ```
    pub fn client(&mut self) -> Option<&mut Client> {
        self.client.as_mut()
    }

    /// The schedule (failures in a row, the policy).
    ///
    /// ```
    /// use tickwire::tokio::ws::{ClientBuilder, Reconnecting};
    ///
    /// let feed = Reconnecting::builder(ClientBuilder::new()).connect("ws://127.0.0.1:9/")?;
    /// assert_eq!(feed.schedule().failures(), 0);
    /// # Ok::<(), tickwire::ws::Error>(())
    /// ```
    pub fn schedule(&self) -> &Schedule {
        &self.schedule
    }

    /// Stop: close the current connection (1000, awaiting the peer's close within the
    /// close timeout) and never reconnect.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), tickwire::ws::Error> {
    /// # use tickwire::tokio::ws::{ClientBuilder, Event, Reconnecting, Server};
    /// # let mut server = Server::bind("127.0.0.1:0").await?;
    /// # let url = format!("ws://{}/", server.local_addr()?);
    /// # tokio::spawn(async move {
    /// #     let mut c = server.accept().await?;
    /// #     while c.recv().await?.is_some() {}
    /// #     Ok::<(), tickwire::ws::Error>(())
    /// # });
    /// let mut feed = Reconnecting::builder(ClientBuilder::new()).connect(&url)?;
    /// assert!(matches!(feed.recv().await?, Event::Connected));
    /// feed.close().await?;
    /// assert!(matches!(feed.recv().await, Err(tickwire::ws::Error::AlreadyClosed)));
    /// # Ok(())
    /// # }
    /// ```
    pub async fn close(&mut self) -> Result<(), Error> {
        self.over = true;
        let Some(mut c) = self.client.take() else {
            return Ok(());
        };
        c.close(CloseCode::NORMAL, "").await?;
        while c.recv().await?.is_some() {}
        Ok(())
    }
}
