//! [`ClientPool`]: a fixed set of pre-allocated keep-alive connections to one server,
//! handed out LIFO (the most recently used, warmest connection first) behind an RAII
//! guard that puts the connection back when dropped.
//!
//! Each pooled connection is a [`Client`] with its own request writer and response
//! reader, all allocated when the pool is made: a request costs no allocation. The
//! guard derefs to the client, so `guard.get(path).send()` is the client's request
//! builder. [`ClientPool::acquire`] waits up to the acquire timeout
//! ([`PoolConfig::acquire_timeout`], default 5 s) when all are in use,
//! [`ClientPool::try_acquire`] not at all (the tokio pool has the same methods). A
//! connection found closed at acquire time is reconnected at most
//! [`PoolConfig::reconnect_attempts`] times, with a doubling backoff.
//!
//! ```
//! # let server = tickwire::rest::doc_server();
//! use tickwire::rest::{ClientPool, PoolConfig};
//!
//! let pool = ClientPool::new(&format!("http://{server}/api/v3"), PoolConfig::default())?;
//! let mut conn = pool.acquire()?;
//! let resp = conn.get("/time").send()?;
//! assert_eq!(resp.body(), b"GET /api/v3/time");
//! # Ok::<(), tickwire::rest::Error>(())
//! ```

use std::ops::{Deref, DerefMut};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::client::{Client, ClientBuilder};
use super::error::Error;
use super::https::HttpConnector;
use super::options::{REQUEST_BUFFER, RESPONSE_BUFFER};
use super::stream::Connector;

/// Size and behaviour of a [`ClientPool`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolConfig {
    /// Connections in the pool (at least 1).
    pub size: usize,
    /// Storage of each connection's request writer: the largest request it can build
    /// (default 64 KiB, as [`ClientBuilder::request_buffer`]; this one wins).
    pub request_buffer: usize,
    /// Storage of each connection's response reader: the largest response it can hold
    /// (default 1 MiB, as [`ClientBuilder::response_buffer`]; this one wins).
    pub response_buffer: usize,
    /// Open every connection when the pool is made (otherwise on first acquire).
    pub connect_now: bool,
    /// Connect attempts at acquire time for a connection that is closed (at least 1).
    pub reconnect_attempts: u32,
    /// Wait before the second attempt; doubled before each further one.
    pub reconnect_backoff: Duration,
    /// How long [`ClientPool::acquire`] waits for a connection to come back when all
    /// are in use (default 5 s; [`ClientPool::acquire_within`] for one call).
    pub acquire_timeout: Duration,
}

impl Default for PoolConfig {
    fn default() -> Self {
        PoolConfig {
            size: 4,
            request_buffer: REQUEST_BUFFER,
            response_buffer: RESPONSE_BUFFER,
            connect_now: true,
            reconnect_attempts: 3,
            reconnect_backoff: Duration::from_millis(10),
            acquire_timeout: Duration::from_secs(5),
        }
    }
}

/// A pool of keep-alive connections to one server; share it by reference (it is `Sync`).
#[derive(Debug)]
pub struct ClientPool<C: Connector = HttpConnector> {
    idle: Mutex<Vec<Client<C>>>,
    returned: Condvar,
    config: PoolConfig,
}

impl ClientPool<HttpConnector> {
    /// A pool for `url` with default client settings.
    ///
    /// ```
    /// # let server = tickwire::rest::doc_server();
    /// # let url = format!("http://{server}/api/v3");
    /// use tickwire::rest::{ClientPool, PoolConfig};
    ///
    /// let pool = ClientPool::new(&url, PoolConfig { size: 2, ..PoolConfig::default() })?;
    /// let mut client = pool.acquire()?; // back in the pool when dropped
    /// assert_eq!(client.get("/time").send()?.status(), 200);
    /// # Ok::<(), tickwire::rest::Error>(())
    /// ```
    pub fn new(url: &str, config: PoolConfig) -> Result<Self, Error> {
        Self::with_builder(ClientBuilder::default(), url, config)
    }
}

impl<C: Connector + Clone> ClientPool<C> {
    /// A pool for `url` whose connections use `builder`'s settings.
    ///
    /// ```
    /// # let server = tickwire::rest::doc_server();
    /// # let url = format!("http://{server}/api/v3");
    /// use std::time::Duration;
    /// use tickwire::rest::{Client, ClientPool, PoolConfig};
    ///
    /// let builder = Client::builder().timeout(Duration::from_secs(2));
    /// let pool = ClientPool::with_builder(builder, &url, PoolConfig::default())?;
    /// let mut client = pool.acquire()?;
    /// assert_eq!(client.post("/order").json_bytes(b"{}").send()?.status(), 200);
    /// # Ok::<(), tickwire::rest::Error>(())
    /// ```
    pub fn with_builder(
        builder: ClientBuilder<C>,
        url: &str,
        config: PoolConfig,
    ) -> Result<Self, Error> {
        let config = PoolConfig {
            size: config.size.max(1),
            reconnect_attempts: config.reconnect_attempts.max(1),
            ..config
        };
        let builder = builder
            .request_buffer(config.request_buffer)
            .response_buffer(config.response_buffer);
        let mut idle = Vec::with_capacity(config.size);
        for _ in 0..config.size {
            let mut client = builder.build(url)?;
            if config.connect_now {
                client.ensure_connected()?;
            }
            idle.push(client);
        }
        Ok(ClientPool {
            idle: Mutex::new(idle),
            returned: Condvar::new(),
            config,
        })
    }
}

impl<C: Connector> ClientPool<C> {
    /// The pool's configuration.
    pub fn config(&self) -> &PoolConfig {
        &self.config
    }

    /// Connections not in use now.
    pub fn idle(&self) -> usize {
        self.lock().len()
    }

    /// The most recently returned connection, waiting up to the acquire timeout for
    /// one when all are in use ([`Error::PoolExhausted`] after it). A closed
    /// connection is reconnected first (bounded, see [`PoolConfig`]); if that fails the
    /// connection goes back to the pool and the error is returned.
    ///
    /// ```
    /// # let server = tickwire::rest::doc_server();
    /// # let url = format!("http://{server}/api/v3");
    /// use tickwire::rest::{ClientPool, PoolConfig};
    ///
    /// let pool = ClientPool::new(&url, PoolConfig::default())?; // share it: &pool or an Arc
    /// let mut client = pool.acquire()?; // waits up to the acquire timeout when all are out
    /// let resp = client.get("/time").send()?;
    /// assert_eq!(resp.body_str()?, "GET /api/v3/time");
    /// # Ok::<(), tickwire::rest::Error>(())
    /// ```
    pub fn acquire(&self) -> Result<PoolGuard<'_, C>, Error> {
        self.acquire_within(self.config.acquire_timeout)
    }

    /// The most recently returned connection, or [`Error::PoolExhausted`] at once when
    /// all are in use (reconnected first as by [`acquire`](Self::acquire)).
    ///
    /// ```
    /// # let server = tickwire::rest::doc_server();
    /// # let url = format!("http://{server}/api/v3");
    /// use tickwire::rest::{ClientPool, Error, PoolConfig};
    ///
    /// let pool = ClientPool::new(&url, PoolConfig { size: 1, ..PoolConfig::default() })?;
    /// let held = pool.try_acquire()?;
    /// assert!(matches!(pool.try_acquire(), Err(Error::PoolExhausted))); // never waits
    /// drop(held);
    /// assert!(pool.try_acquire().is_ok());
    /// # Ok::<(), tickwire::rest::Error>(())
    /// ```
    pub fn try_acquire(&self) -> Result<PoolGuard<'_, C>, Error> {
        let conn = self.lock().pop().ok_or(Error::PoolExhausted)?;
        self.ready(conn)
    }

    /// Like [`acquire`](Self::acquire) with its own wait.
    ///
    /// ```
    /// # let server = tickwire::rest::doc_server();
    /// # let url = format!("http://{server}/api/v3");
    /// use std::time::Duration;
    /// use tickwire::rest::{ClientPool, PoolConfig};
    ///
    /// let pool = ClientPool::new(&url, PoolConfig::default())?;
    /// let mut client = pool.acquire_within(Duration::from_millis(50))?; // this once
    /// assert_eq!(client.get("/time").send()?.status(), 200);
    /// # Ok::<(), tickwire::rest::Error>(())
    /// ```
    pub fn acquire_within(&self, wait: Duration) -> Result<PoolGuard<'_, C>, Error> {
        let deadline = Instant::now() + wait;
        let mut idle = self.lock();
        loop {
            if let Some(conn) = idle.pop() {
                drop(idle);
                return self.ready(conn);
            }
            let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                return Err(Error::PoolExhausted);
            };
            idle = self
                .returned
                .wait_timeout(idle, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// Close every idle connection now, each the way [`Client::disconnect`] does (TLS
    /// close_notify after the bytes before it, within the client's close timeout);
    /// they reconnect on their next acquire. Dropping the pool closes every connection
    /// the same way.
    pub fn shutdown(&self) {
        // Closed outside the lock: a backed-up one may wait its close timeout.
        let mut idle = std::mem::take(&mut *self.lock());
        for conn in &mut idle {
            conn.disconnect();
        }
        let n = idle.len();
        self.lock().extend(idle);
        for _ in 0..n {
            self.returned.notify_one();
        }
    }

    fn ready(&self, mut conn: Client<C>) -> Result<PoolGuard<'_, C>, Error> {
        let mut backoff = self.config.reconnect_backoff;
        let mut attempt = 1;
        while let Err(e) = conn.ensure_connected() {
            if attempt >= self.config.reconnect_attempts {
                self.put_back(conn);
                return Err(e);
            }
            std::thread::sleep(backoff);
            backoff = backoff.saturating_mul(2);
            attempt += 1;
        }
        Ok(PoolGuard {
            pool: self,
            conn: Some(conn),
        })
    }

    fn put_back(&self, conn: Client<C>) {
        self.lock().push(conn);
        self.returned.notify_one();
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Client<C>>> {
        // A panic while holding the lock cannot leave the Vec half-updated (push/pop).
        self.idle.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A connection taken from a [`ClientPool`]; returned to it on drop. It derefs to the
/// [`Client`]: `guard.post(path).json_bytes(json).send()`.
#[derive(Debug)]
pub struct PoolGuard<'p, C: Connector = HttpConnector> {
    pool: &'p ClientPool<C>,
    conn: Option<Client<C>>,
}

impl<C: Connector> Deref for PoolGuard<'_, C> {
    type Target = Client<C>;

    fn deref(&self) -> &Client<C> {
        // Always `Some` until drop.
        self.conn
            .as_ref()
            .expect("pooled connection present until drop")
    }
}

impl<C: Connector> DerefMut for PoolGuard<'_, C> {
    fn deref_mut(&mut self) -> &mut Client<C> {
        self.conn
            .as_mut()
            .expect("pooled connection present until drop")
    }
}

impl<C: Connector> Drop for PoolGuard<'_, C> {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            self.pool.put_back(conn);
        }
    }
}
