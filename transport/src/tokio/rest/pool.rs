//! Async [`ClientPool`]: N pre-built keep-alive connections to one server, handed out
//! LIFO (warmest first) behind an RAII [`PoolGuard`] that puts the connection back on
//! drop. `acquire().await` waits up to the pool's acquire timeout when all are out;
//! a closed connection is reconnected at acquire time at most
//! [`PoolConfig::reconnect_attempts`] times with a doubling backoff (as the blocking
//! [`crate::rest::ClientPool`]).
//!
//! Each pooled connection is a [`Client`] with its own writer and reader, allocated
//! when the pool is made; the guard derefs to it, so `guard.get(path).send().await` is
//! the client's request builder. The methods are the blocking pool's: `acquire`
//! (waits up to [`PoolConfig::acquire_timeout`]), `try_acquire`, `acquire_within`.
//!
//! A guard dropped while a `send` on it was cancelled returns a connection that is
//! already closed (see [`super`]): the next acquire of it reconnects.
//!
//! ```
//! # let server = tickwire::rest::doc_server();
//! # let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
//! # rt.block_on(async {
//! use tickwire::tokio::rest::{ClientPool, PoolConfig};
//!
//! let url = format!("http://{server}/api/v3");
//! let pool = ClientPool::new(&url, PoolConfig::default()).await?;
//! let mut conn = pool.acquire().await?;
//! let resp = conn.get("/time").send().await?;
//! assert_eq!(resp.body(), b"GET /api/v3/time");
//! # Ok::<(), tickwire::rest::Error>(())
//! # })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::ops::{Deref, DerefMut};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use ::tokio::sync::Notify;

use super::client::{Client, ClientBuilder};
use crate::rest::{Error, PoolConfig};

/// A pool of async keep-alive connections to one server; share it by reference or in
/// an `Arc` (it is `Sync`).
#[derive(Debug)]
pub struct ClientPool {
    idle: Mutex<Vec<Client>>,
    returned: Notify,
    config: PoolConfig,
}

impl ClientPool {
    /// A pool for `url` with default client settings.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), tickwire::rest::Error> {
    /// # let server = tickwire::rest::doc_server();
    /// # let url = format!("http://{server}/api/v3");
    /// use tickwire::tokio::rest::{ClientPool, PoolConfig};
    ///
    /// let pool = ClientPool::new(&url, PoolConfig { size: 2, ..PoolConfig::default() }).await?;
    /// let mut client = pool.acquire().await?; // back in the pool when dropped
    /// assert_eq!(client.get("/time").send().await?.status(), 200);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn new(url: &str, config: PoolConfig) -> Result<Self, Error> {
        Self::with_builder(ClientBuilder::default(), url, config).await
    }

    /// A pool for `url` whose connections use `builder`'s settings (all connected now
    /// when [`PoolConfig::connect_now`]).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), tickwire::rest::Error> {
    /// # let server = tickwire::rest::doc_server();
    /// # let url = format!("http://{server}/api/v3");
    /// use std::time::Duration;
    /// use tickwire::tokio::rest::{Client, ClientPool, PoolConfig};
    ///
    /// let builder = Client::builder().timeout(Duration::from_secs(2));
    /// let pool = ClientPool::with_builder(builder, &url, PoolConfig::default()).await?;
    /// let mut client = pool.acquire().await?;
    /// assert_eq!(client.post("/order").json_bytes(b"{}").send().await?.status(), 200);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn with_builder(
        builder: ClientBuilder,
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
                client.ensure_connected().await?;
            }
            idle.push(client);
        }
        Ok(ClientPool {
            idle: Mutex::new(idle),
            returned: Notify::new(),
            config,
        })
    }

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
    /// connection is reconnected first (bounded); if that fails the connection goes
    /// back to the pool and the error is returned. Cancel-safe: dropping the future
    /// loses no connection.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), tickwire::rest::Error> {
    /// # let server = tickwire::rest::doc_server();
    /// # let url = format!("http://{server}/api/v3");
    /// use tickwire::tokio::rest::{ClientPool, PoolConfig};
    ///
    /// let pool = ClientPool::new(&url, PoolConfig::default()).await?; // share it: &pool or an Arc
    /// let mut client = pool.acquire().await?; // waits up to the acquire timeout when all are out
    /// let resp = client.get("/time").send().await?;
    /// assert_eq!(resp.body_str()?, "GET /api/v3/time");
    /// # Ok(())
    /// # }
    /// ```
    pub async fn acquire(&self) -> Result<PoolGuard<'_>, Error> {
        self.acquire_within(self.config.acquire_timeout).await
    }

    /// The most recently returned connection, or [`Error::PoolExhausted`] at once when
    /// all are in use (reconnected first as by [`acquire`](Self::acquire)).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), tickwire::rest::Error> {
    /// # let server = tickwire::rest::doc_server();
    /// # let url = format!("http://{server}/api/v3");
    /// use tickwire::tokio::rest::{ClientPool, Error, PoolConfig};
    ///
    /// let pool = ClientPool::new(&url, PoolConfig { size: 1, ..PoolConfig::default() }).await?;
    /// let held = pool.try_acquire().await?;
    /// assert!(matches!(pool.try_acquire().await, Err(Error::PoolExhausted))); // never waits
    /// drop(held);
    /// assert!(pool.try_acquire().await.is_ok());
    /// # Ok(())
    /// # }
    /// ```
    pub async fn try_acquire(&self) -> Result<PoolGuard<'_>, Error> {
        let conn = self.lock().pop().ok_or(Error::PoolExhausted)?;
        self.ready(conn).await
    }

    /// Like [`acquire`](Self::acquire) with its own wait.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), tickwire::rest::Error> {
    /// # let server = tickwire::rest::doc_server();
    /// # let url = format!("http://{server}/api/v3");
    /// use std::time::Duration;
    /// use tickwire::tokio::rest::{ClientPool, PoolConfig};
    ///
    /// let pool = ClientPool::new(&url, PoolConfig::default()).await?;
    /// let mut client = pool.acquire_within(Duration::from_millis(50)).await?; // this once
    /// assert_eq!(client.get("/time").send().await?.status(), 200);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn acquire_within(&self, wait: Duration) -> Result<PoolGuard<'_>, Error> {
        let deadline = Instant::now().checked_add(wait);
        loop {
            let notified = self.returned.notified();
            ::tokio::pin!(notified);
            // Registered before the check, so a return between the two is not missed.
            notified.as_mut().enable();
            // (The lock is released before any await: the future stays `Send`.)
            let popped = self.lock().pop();
            if let Some(conn) = popped {
                return self.ready(conn).await;
            }
            match deadline {
                None => notified.await,
                Some(at) => {
                    if ::tokio::time::timeout_at(at.into(), notified)
                        .await
                        .is_err()
                    {
                        return Err(Error::PoolExhausted);
                    }
                }
            }
        }
    }

    /// Close every idle connection now, awaiting each one's TLS close_notify onto the
    /// socket (within the client's close timeout; see [`Client::close`]); they
    /// reconnect on their next acquire. Dropping the pool closes every connection too,
    /// finishing backed-up ones in tasks on the runtime.
    pub async fn shutdown(&self) {
        let mut idle = std::mem::take(&mut *self.lock());
        for conn in &mut idle {
            conn.close().await;
        }
        let n = idle.len();
        self.lock().extend(idle);
        for _ in 0..n {
            self.returned.notify_one();
        }
    }

    async fn ready(&self, conn: Client) -> Result<PoolGuard<'_>, Error> {
        // In the guard from here on: a cancelled reconnect still returns it.
        let mut guard = PoolGuard {
            pool: self,
            conn: Some(conn),
        };
        let mut backoff = self.config.reconnect_backoff;
        let mut attempt = 1;
        while let Err(e) = guard.ensure_connected().await {
            if attempt >= self.config.reconnect_attempts {
                return Err(e);
            }
            ::tokio::time::sleep(backoff).await;
            backoff = backoff.saturating_mul(2);
            attempt += 1;
        }
        Ok(guard)
    }

    fn put_back(&self, conn: Client) {
        self.lock().push(conn);
        self.returned.notify_one();
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Client>> {
        // A panic while holding the lock cannot leave the Vec half-updated (push/pop).
        self.idle.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A connection taken from a [`ClientPool`]; returned to it on drop. It derefs to the
/// [`Client`]: `guard.post(path).json_bytes(json).send().await`.
#[derive(Debug)]
pub struct PoolGuard<'p> {
    pool: &'p ClientPool,
    conn: Option<Client>,
}

impl Deref for PoolGuard<'_> {
    type Target = Client;

    fn deref(&self) -> &Client {
        // Always `Some` until drop.
        self.conn
            .as_ref()
            .expect("pooled connection present until drop")
    }
}

impl DerefMut for PoolGuard<'_> {
    fn deref_mut(&mut self) -> &mut Client {
        self.conn
            .as_mut()
            .expect("pooled connection present until drop")
    }
}

impl Drop for PoolGuard<'_> {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            self.pool.put_back(conn);
        }
    }
}
