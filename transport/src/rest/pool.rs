//! [`ClientPool`]: a fixed set of pre-allocated keep-alive connections to one server,
//! handed out LIFO (the most recently used, warmest connection first) behind an RAII
//! guard that puts the connection back when dropped.
//!
//! Each pooled connection ([`PooledConn`]) owns its client, a request writer and a
//! response reader, all allocated when the pool is made: a request costs no
//! allocation. A connection found closed at acquire time is reconnected at most
//! [`PoolConfig::reconnect_attempts`] times, with a doubling backoff.

use std::ops::{Deref, DerefMut};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tickwire_codec::http::{BuildError, Request, RequestWriter, ResponseReader, RestResponse};

use super::client::{Client, ClientBuilder};
use super::error::Error;
use super::https::HttpConnector;
use super::stream::Connector;

/// Size and behaviour of a [`ClientPool`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolConfig {
    /// Connections in the pool (at least 1).
    pub size: usize,
    /// Storage of each connection's request writer: the largest request it can build.
    pub request_buffer: usize,
    /// Storage of each connection's response reader: the largest response it can hold.
    pub response_buffer: usize,
    /// Open every connection when the pool is made (otherwise on first acquire).
    pub connect_now: bool,
    /// Connect attempts at acquire time for a connection that is closed (at least 1).
    pub reconnect_attempts: u32,
    /// Wait before the second attempt; doubled before each further one.
    pub reconnect_backoff: Duration,
}

impl Default for PoolConfig {
    fn default() -> Self {
        PoolConfig {
            size: 4,
            request_buffer: 64 << 10,
            response_buffer: 1 << 20,
            connect_now: true,
            reconnect_attempts: 3,
            reconnect_backoff: Duration::from_millis(10),
        }
    }
}

/// One pooled connection: a [`Client`] with its own writer and reader.
#[derive(Debug)]
pub struct PooledConn<C: Connector = HttpConnector> {
    /// The connection.
    pub client: Client<C>,
    /// Builds requests for this server (Host and base path preset).
    pub writer: RequestWriter<Vec<u8>>,
    /// Parses this connection's responses.
    pub reader: ResponseReader<Vec<u8>>,
}

impl<C: Connector> PooledConn<C> {
    /// Build a request with the connection's writer and send it; the response borrows
    /// the connection's reader:
    /// `conn.send_with(|w| w.get("/api/v3/time").finish())`.
    pub fn send_with<F>(&mut self, build: F) -> Result<RestResponse<'_>, Error>
    where
        F: for<'w> FnOnce(&'w mut RequestWriter<Vec<u8>>) -> Result<Request<'w>, BuildError>,
    {
        let req = build(&mut self.writer)?;
        self.client.send(&req, &mut self.reader)
    }
}

/// A pool of keep-alive connections to one server; share it by reference (it is `Sync`).
#[derive(Debug)]
pub struct ClientPool<C: Connector = HttpConnector> {
    idle: Mutex<Vec<PooledConn<C>>>,
    returned: Condvar,
    config: PoolConfig,
}

impl ClientPool<HttpConnector> {
    /// A pool for `url` with default client settings.
    pub fn new(url: &str, config: PoolConfig) -> Result<Self, Error> {
        Self::with_builder(ClientBuilder::default(), url, config)
    }
}

impl<C: Connector + Clone> ClientPool<C> {
    /// A pool for `url` whose connections use `builder`'s settings.
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
        let mut idle = Vec::with_capacity(config.size);
        for _ in 0..config.size {
            let mut client = builder.clone().build(url)?;
            if config.connect_now {
                client.ensure_connected()?;
            }
            let mut writer =
                RequestWriter::new(vec![0; config.request_buffer], client.host_header())?;
            if client.base_path() != "/" {
                writer.set_base_path(client.base_path())?;
            }
            let reader = ResponseReader::new(vec![0; config.response_buffer])
                .max_body_size(config.response_buffer);
            idle.push(PooledConn {
                client,
                writer,
                reader,
            });
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

    /// The most recently returned connection, or [`Error::PoolExhausted`] when all are in
    /// use. A closed connection is reconnected first (bounded, see [`PoolConfig`]); if
    /// that fails the connection goes back to the pool and the error is returned.
    pub fn acquire(&self) -> Result<PoolGuard<'_, C>, Error> {
        let conn = self.lock().pop().ok_or(Error::PoolExhausted)?;
        self.ready(conn)
    }

    /// Like [`acquire`](Self::acquire), but waits up to `wait` for a connection to come
    /// back when all are in use.
    pub fn acquire_timeout(&self, wait: Duration) -> Result<PoolGuard<'_, C>, Error> {
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
            conn.client.disconnect();
        }
        let n = idle.len();
        self.lock().extend(idle);
        for _ in 0..n {
            self.returned.notify_one();
        }
    }

    fn ready(&self, mut conn: PooledConn<C>) -> Result<PoolGuard<'_, C>, Error> {
        let mut backoff = self.config.reconnect_backoff;
        let mut attempt = 1;
        while let Err(e) = conn.client.ensure_connected() {
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

    fn put_back(&self, conn: PooledConn<C>) {
        self.lock().push(conn);
        self.returned.notify_one();
    }

    fn lock(&self) -> MutexGuard<'_, Vec<PooledConn<C>>> {
        // A panic while holding the lock cannot leave the Vec half-updated (push/pop).
        self.idle.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A connection taken from a [`ClientPool`]; returned to it on drop.
#[derive(Debug)]
pub struct PoolGuard<'p, C: Connector = HttpConnector> {
    pool: &'p ClientPool<C>,
    conn: Option<PooledConn<C>>,
}

impl<C: Connector> Deref for PoolGuard<'_, C> {
    type Target = PooledConn<C>;

    fn deref(&self) -> &PooledConn<C> {
        // Always `Some` until drop.
        self.conn
            .as_ref()
            .expect("pooled connection present until drop")
    }
}

impl<C: Connector> DerefMut for PoolGuard<'_, C> {
    fn deref_mut(&mut self) -> &mut PooledConn<C> {
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
