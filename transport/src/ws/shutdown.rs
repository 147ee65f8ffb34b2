//! [`ShutdownHandle`]: end a blocking connection from another thread. A thread blocked
//! in `recv` (sleeping in `read(2)` or in the connection's private poll) cannot be
//! reached otherwise; the handle shuts the socket down both ways (`shutdown(2)` on a
//! duplicate of its descriptor), which wakes that thread at once, and marks the
//! connection, so the call returns [`Error::Shutdown`] and so does every later one.

use std::io;
use std::net::Shutdown;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use socket2::{SockRef, Socket};

use super::client::Client;
use super::error::Error;
use super::server::ServerConnection;
use crate::net::NetStream;

/// Ends a connection from any thread ([`Client::shutdown_handle`],
/// [`ServerConnection::shutdown_handle`]); `Send + Sync`, cheap to share in an `Arc`.
///
/// [`shutdown`](Self::shutdown) is an abort, not a close handshake: nothing more is sent
/// (bytes still queued are dropped), and the blocked call, and every later call on the
/// connection, returns [`Error::Shutdown`]. For an orderly end, send a close from the
/// thread that owns the connection.
#[derive(Debug)]
pub struct ShutdownHandle {
    socket: Socket,
    flag: Arc<AtomicBool>,
}

impl ShutdownHandle {
    fn new(stream: &NetStream, flag: &mut Option<Arc<AtomicBool>>) -> Result<Self, Error> {
        let socket = SockRef::from(stream.tcp()).try_clone().map_err(Error::io)?;
        let flag = flag.get_or_insert_with(Default::default).clone();
        Ok(ShutdownHandle { socket, flag })
    }

    /// Shut the connection down: a thread blocked in its `recv` (or a send, or a
    /// flush) returns [`Error::Shutdown`] promptly, and so does every later call. Calling
    /// it again, or after the connection ended, does nothing.
    ///
    /// ```
    /// # let (mut client, _server) = tickwire::ws::doc_pair()?;
    /// use tickwire::ws::Error;
    ///
    /// let stop = client.shutdown_handle()?;
    /// let reader = std::thread::spawn(move || client.recv().map(|_| ())); // blocks: the server is silent
    /// stop.shutdown()?; // from this thread
    /// assert!(matches!(reader.join().unwrap(), Err(Error::Shutdown)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn shutdown(&self) -> io::Result<()> {
        self.flag.store(true, Ordering::Release);
        match self.socket.shutdown(Shutdown::Both) {
            // The peer is gone already: the connection ends anyway.
            Err(e) if e.kind() == io::ErrorKind::NotConnected => Ok(()),
            r => r,
        }
    }
}

/// Whether a connection's [`ShutdownHandle`] was used.
pub(crate) fn is_shut_down(flag: &Option<Arc<AtomicBool>>) -> bool {
    flag.as_ref().is_some_and(|f| f.load(Ordering::Acquire))
}

impl Client {
    /// A handle that ends this connection from another thread: a `recv` blocked in
    /// this thread returns [`Error::Shutdown`] when another calls
    /// [`ShutdownHandle::shutdown`] (the blocking API; in tokio, drop the future or
    /// `select!` on a cancellation instead). Duplicates the socket's descriptor.
    ///
    /// ```
    /// # let (mut client, _server) = tickwire::ws::doc_pair()?;
    /// use std::sync::Arc;
    /// use tickwire::ws::Error;
    ///
    /// let stop = Arc::new(client.shutdown_handle()?);
    /// let feed = std::thread::spawn(move || loop {
    ///     match client.recv() {
    ///         Ok(Some(_msg)) => {} // handle it
    ///         Ok(None) => return Ok(()),
    ///         Err(Error::Shutdown) => return Ok(()), // asked to stop
    ///         Err(e) => return Err(e),
    ///     }
    /// });
    /// stop.shutdown()?; // e.g. from a signal handler thread
    /// feed.join().unwrap()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn shutdown_handle(&mut self) -> Result<ShutdownHandle, Error> {
        ShutdownHandle::new(&self.conn.io.stream, &mut self.conn.shutdown)
    }
}

impl ServerConnection {
    /// A handle that ends this connection from another thread (see
    /// [`Client::shutdown_handle`]).
    ///
    /// ```
    /// # let (_client, mut server) = tickwire::ws::doc_pair()?;
    /// let stop = server.shutdown_handle()?;
    /// let t = std::thread::spawn(move || server.recv().map(|_| ()));
    /// stop.shutdown()?;
    /// assert!(matches!(t.join().unwrap(), Err(tickwire::ws::Error::Shutdown)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn shutdown_handle(&mut self) -> Result<ShutdownHandle, Error> {
        ShutdownHandle::new(&self.conn.io.stream, &mut self.conn.shutdown)
    }
}
