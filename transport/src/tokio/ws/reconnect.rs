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
use crate::ws::{Backoff, CloseCode, Error, Event, Reconnector, Schedule};

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
        Ok(Reconnecting {
            core: Reconnector::new(url, self.backoff, self.seed)?,
            builder: self.client,
            hook: self.hook,
            client: None,
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
        let ready = client.recv_ready_crate().await;
        if let Some(lost) = self.core.ready(ready, Instant::now())? {
            self.client = None;
            return Ok(lost);
        }
        match self.client.as_ref().and_then(|c| c.ready_message()) {
            Some(m) => Ok(Event::Message(m)),
            None => Err(Error::AlreadyClosed),
        }
    }

    /// Not connected: await the scheduled attempt, connect, run the hook.
    async fn reconnect(&mut self) -> Result<Event<'static>, Error> {
        if let Some(at) = self.core.due()? {
            ::tokio::time::sleep_until(at.into()).await;
        }
        let made = match self.builder.connect(&self.core.url).await {
            Ok(mut c) => match self.hook.as_mut() {
                Some(hook) => hook(&mut c).await.map(|()| c),
                None => Ok(c),
            },
            Err(e) => Err(e),
        };
        let made = made.map(|c| self.client = Some(c));
        Ok(self.core.attempted(made, Instant::now()))
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
        &self.core.schedule
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
        self.core.close();
        let Some(mut c) = self.client.take() else {
            return Ok(());
        };
        c.close(CloseCode::NORMAL, "").await?;
        while c.recv().await?.is_some() {}
        Ok(())
    }
}
