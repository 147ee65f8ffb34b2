//! The byte stream under an async REST connection: the non-blocking socket itself for
//! `http://`, or the transport's [`TlsStream`] over it for `https://` (the same TLS
//! stream, [`TlsConfig`] and errors as the blocking client's
//! [`HttpConnector`](crate::rest::HttpConnector)), with readiness from tokio's reactor.
//!
//! Every call tries the non-blocking step first and awaits readiness only when the
//! socket would block. A TLS stream may hold ciphertext the socket did not take yet
//! ([`TlsStream::has_pending`]): a write is done only when that is flushed, and a read
//! that waits also waits for writable while it is there.

use std::io::{self, Read, Write};
use std::mem::ManuallyDrop;
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use ::tokio::io::Interest;

use crate::net::ClientTls;
use crate::rest::Error;
use crate::socket::spin::Spinner;
use crate::socket::{RecvMode, rearm_quickack};
#[cfg(feature = "tls")]
use crate::tls::{TlsConfig, TlsStream};
use crate::tokio::ws::readiness::Readiness;

/// Plain TCP or TLS over it, both non-blocking.
#[derive(Debug)]
pub(super) enum ConnStream {
    /// `http://`.
    Tcp(TcpStream),
    /// `https://` (boxed: the TLS state is large).
    #[cfg(feature = "tls")]
    Tls(Box<TlsStream<TcpStream>>),
    /// Handed to a background task that finishes its close (only inside `drop`).
    #[cfg_attr(not(feature = "tls"), allow(dead_code))]
    Gone,
}

/// A connected stream and its registration with the reactor.
#[derive(Debug)]
pub(super) struct AsyncStream {
    stream: ConnStream,
    /// The registration of `stream`'s socket, dropped by hand in `drop` before the
    /// socket is closed or handed on (see [`Readiness`]'s "Drop order").
    ready: ManuallyDrop<Readiness>,
    /// The last read took all the socket held (a short read; for TLS
    /// [`TlsStream::is_drained`]): the next read waits for readiness first instead of
    /// reading into `WouldBlock`, as tokio's own sockets do (the reactor remembers an
    /// arrival until it is seen).
    drained: bool,
    /// Busy-poll receive mode ([`RecvMode`](crate::socket::RecvMode)): a read that
    /// finds nothing reads again at once instead of awaiting the reactor.
    spin: Spinner,
    /// `TCP_QUICKACK` is on: set it again after each read that got data.
    quickack: bool,
    /// The longest a close waits for a backed-up socket to take close_notify.
    #[cfg_attr(not(feature = "tls"), allow(dead_code))]
    close_timeout: Duration,
}

/// Dropping the stream closes it the way the protocol asks, whatever the reason (a
/// disconnect, a failed or cancelled request, a stale connection replaced): over TLS,
/// close_notify after every byte written before it, or the fatal alert of a failed
/// connection, then the FIN. When the socket cannot take it now, a task on the current
/// runtime finishes the close, waiting for writability within the close timeout.
impl Drop for AsyncStream {
    fn drop(&mut self) {
        // SAFETY: taken once, here; `self.ready` is not used again.
        drop(unsafe { ManuallyDrop::take(&mut self.ready) });
        // The socket is closed after this (with `self.stream`), or by the close task.
        #[cfg(feature = "tls")]
        {
            let ConnStream::Tls(tls) = std::mem::replace(&mut self.stream, ConnStream::Gone) else {
                return;
            };
            let mut tls = tls;
            if matches!(tls.close_notify(), Ok(false))
                && let Ok(runtime) = ::tokio::runtime::Handle::try_current()
            {
                let deadline = Instant::now().checked_add(self.close_timeout);
                runtime.spawn(finish_close(tls, deadline));
                return;
            }
            // Done (or failed, or no runtime to wait on): shut the write half and discard
            // unread bytes, without waiting.
            let _ = tls.close_until(Instant::now());
        }
    }
}

/// The rest of a TLS close the socket could not take at once: close_notify as the
/// socket becomes writable, until `deadline`; then the FIN. The socket is registered
/// again, on the runtime the task runs on.
#[cfg(feature = "tls")]
async fn finish_close(tls: Box<TlsStream<TcpStream>>, deadline: Option<Instant>) {
    /// The stream and its registration, dropped in that order whether the task ends
    /// or is dropped with its runtime.
    struct Closing {
        ready: Option<Readiness>,
        tls: Box<TlsStream<TcpStream>>,
    }
    let mut c = Closing { ready: None, tls };
    // SAFETY: `c` owns the socket and drops `ready` first (field order).
    c.ready = unsafe { Readiness::new(c.tls.get_ref()) }.ok();
    if let Some(ready) = &c.ready {
        while matches!(c.tls.close_notify(), Ok(false)) {
            if !matches!(ready.wait_for(Interest::WRITABLE, deadline).await, Ok(true)) {
                break;
            }
        }
    }
    c.ready = None;
    let _ = c.tls.close_until(Instant::now());
}

impl AsyncStream {
    /// Register the connected non-blocking `tcp`; when `secure` (`https://`), run the
    /// TLS handshake with the `tls` settings (SNI and the certificate name from `host`)
    /// by `deadline` ([`Error::ConnectTimeout`] after it, `Error::Tls` when it fails;
    /// [`Error::TlsDisabled`] without the `tls` feature).
    pub async fn open(
        tcp: TcpStream,
        secure: bool,
        tls: &ClientTls,
        host: &str,
        deadline: Option<Instant>,
        close_timeout: Duration,
    ) -> Result<AsyncStream, Error> {
        if !secure {
            // SAFETY: the stream takes the socket and `ready` at once, and drops
            // `ready` first (`AsyncStream`'s `Drop`).
            let ready = unsafe { Readiness::new(&tcp) }.map_err(Error::io)?;
            return Ok(AsyncStream {
                stream: ConnStream::Tcp(tcp),
                ready: ManuallyDrop::new(ready),
                drained: false,
                spin: Spinner::new(RecvMode::Sleep),
                quickack: false,
                close_timeout,
            });
        }
        #[cfg(not(feature = "tls"))]
        {
            let _ = (tls, host, deadline);
            Err(Error::TlsDisabled)
        }
        #[cfg(feature = "tls")]
        Self::tls_handshake(tcp, tls, host, deadline, close_timeout).await
    }

    #[cfg(feature = "tls")]
    async fn tls_handshake(
        tcp: TcpStream,
        tls: &ClientTls,
        host: &str,
        deadline: Option<Instant>,
        close_timeout: Duration,
    ) -> Result<AsyncStream, Error> {
        let config = tls.clone().unwrap_or_else(TlsConfig::shared_default);
        let mut tls = TlsStream::client(tcp, &config, host)?;
        // SAFETY: `tls` owns the socket; `ready`, declared after it, is dropped before
        // it on every early return, and moves with it into the stream, whose `Drop`
        // drops it first.
        let ready = unsafe { Readiness::new(tls.get_ref()) }.map_err(Error::io)?;
        loop {
            match tls.handshake() {
                Ok(true) => break,
                Ok(false) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    return Err(match Error::from_io(e, false) {
                        Error::ReadTimeout { .. } | Error::WriteTimeout { .. } => {
                            Error::ConnectTimeout {
                                target: crate::error::peer_target(host, tls.get_ref().peer_addr()),
                            }
                        }
                        e => e,
                    });
                }
            }
            let interest = if tls.has_pending() {
                Interest::READABLE | Interest::WRITABLE
            } else {
                Interest::READABLE
            };
            if !ready
                .wait_for(interest, deadline)
                .await
                .map_err(Error::io)?
            {
                return Err(Error::ConnectTimeout {
                    target: crate::error::peer_target(host, tls.get_ref().peer_addr()),
                });
            }
        }
        Ok(AsyncStream {
            stream: ConnStream::Tls(Box::new(tls)),
            ready: ManuallyDrop::new(ready),
            drained: false,
            spin: Spinner::new(RecvMode::Sleep),
            quickack: false,
            close_timeout,
        })
    }

    /// How reads wait (busy-poll or the reactor), and whether they set `TCP_QUICKACK`
    /// again after data.
    pub fn set_recv(&mut self, mode: RecvMode, quickack: bool) {
        self.spin = Spinner::new(mode);
        self.quickack = quickack;
    }

    /// A new wait for a response begins: a fresh spin budget.
    #[inline]
    pub fn spin_reset(&mut self) {
        self.spin.reset();
    }

    /// The TCP socket under the stream.
    pub fn tcp(&self) -> Option<&TcpStream> {
        match &self.stream {
            ConnStream::Tcp(s) => Some(s),
            #[cfg(feature = "tls")]
            ConnStream::Tls(s) => Some(s.get_ref()),
            ConnStream::Gone => None,
        }
    }

    /// What the TLS handshake of an `https://` connection agreed on.
    #[cfg(feature = "tls")]
    pub fn tls(&self) -> Option<&crate::tls::TlsCodec<Vec<u8>>> {
        match &self.stream {
            ConnStream::Tls(s) => Some(s.codec()),
            ConnStream::Tcp(_) | ConnStream::Gone => None,
        }
    }

    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        match &self.stream {
            ConnStream::Tcp(s) => s.local_addr(),
            #[cfg(feature = "tls")]
            ConnStream::Tls(s) => s.get_ref().local_addr(),
            ConnStream::Gone => Err(io::ErrorKind::NotConnected.into()),
        }
    }

    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        match &self.stream {
            ConnStream::Tcp(s) => s.peer_addr(),
            #[cfg(feature = "tls")]
            ConnStream::Tls(s) => s.get_ref().peer_addr(),
            ConnStream::Gone => Err(io::ErrorKind::NotConnected.into()),
        }
    }

    /// Close now, awaiting what dropping the stream would leave to a background task:
    /// over TLS close_notify after every byte written before it (RFC 8446 section
    /// 6.1), waiting for a backed-up socket within the close timeout (errors ignored:
    /// the connection is going either way); then the FIN (on drop).
    #[cfg_attr(not(feature = "tls"), allow(unused_mut))]
    pub async fn close(mut self) {
        #[cfg(feature = "tls")]
        if let ConnStream::Tls(s) = &mut self.stream {
            let deadline = Instant::now().checked_add(self.close_timeout);
            while matches!(s.close_notify(), Ok(false)) {
                if !matches!(
                    self.ready.wait_for(Interest::WRITABLE, deadline).await,
                    Ok(true)
                ) {
                    break;
                }
            }
        }
    }

    /// Without waiting, on a connection with no request outstanding: whether the peer
    /// closed it or sent bytes nobody asked for (the blocking `Stream::stale` rule; for
    /// TLS, session tickets and other post-handshake messages do not count).
    pub fn stale(&mut self) -> bool {
        match &mut self.stream {
            ConnStream::Tcp(s) => {
                let mut b = [0u8; 1];
                match s.peek(&mut b) {
                    Ok(_) => true,
                    Err(e) => !matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
                    ),
                }
            }
            ConnStream::Gone => true,
            #[cfg(feature = "tls")]
            ConnStream::Tls(s) => {
                let r = s.read_available();
                r.is_err() || s.codec().is_peer_closed() || s.codec().has_plaintext()
            }
        }
    }

    /// Write some of `buf`, waiting for room until `until` at the latest (`TimedOut`).
    pub async fn write_some(&mut self, buf: &[u8], until: Option<Instant>) -> io::Result<usize> {
        loop {
            match self.write(buf) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if !self.ready.wait_for(Interest::WRITABLE, until).await? {
                        return Err(io::ErrorKind::TimedOut.into());
                    }
                }
                r => return r,
            }
        }
    }

    /// After the last request byte: for TLS, write every record the socket has not
    /// taken yet, waiting for room until `until` at the latest (`TimedOut`).
    pub async fn flush(&mut self, until: Option<Instant>) -> io::Result<()> {
        #[cfg(feature = "tls")]
        if let ConnStream::Tls(s) = &mut self.stream {
            while !s.flush_pending()? {
                if !self.ready.wait_for(Interest::WRITABLE, until).await? {
                    return Err(io::ErrorKind::TimedOut.into());
                }
            }
        }
        #[cfg(not(feature = "tls"))]
        let _ = until;
        Ok(())
    }

    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.stream {
            ConnStream::Tcp(s) => s.write(buf),
            #[cfg(feature = "tls")]
            ConnStream::Tls(s) => s.write(buf),
            ConnStream::Gone => Err(io::ErrorKind::NotConnected.into()),
        }
    }

    /// Read some bytes (plaintext for TLS) into `buf`, waiting for them until
    /// `deadline` at the latest (`TimedOut`).
    pub async fn read_some(
        &mut self,
        buf: &mut [u8],
        deadline: Option<Instant>,
    ) -> io::Result<usize> {
        if std::mem::take(&mut self.drained) && !buf.is_empty() && !self.spin.active() {
            self.wait_readable(deadline).await?;
        }
        loop {
            let r = match &mut self.stream {
                ConnStream::Tcp(s) => s.read(buf),
                #[cfg(feature = "tls")]
                ConnStream::Tls(s) => s.read(buf),
                ConnStream::Gone => Err(io::ErrorKind::NotConnected.into()),
            };
            match r {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => match self.spin.spin(deadline) {
                    // Busy-poll: read again at once (TLS records the stream produced
                    // go out first, as a wait would send them).
                    Some(true) if self.spin.active() => self.flush_pending()?,
                    Some(false) => return Err(io::ErrorKind::TimedOut.into()),
                    _ => self.wait_readable(deadline).await?,
                },
                Ok(n) => {
                    if self.quickack
                        && n > 0
                        && let Some(tcp) = self.tcp()
                    {
                        rearm_quickack(tcp)?;
                    }
                    self.drained = match &self.stream {
                        ConnStream::Tcp(_) => n > 0 && n < buf.len(),
                        #[cfg(feature = "tls")]
                        ConnStream::Tls(s) => n > 0 && s.is_drained(),
                        ConnStream::Gone => false,
                    };
                    return Ok(n);
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Write the TLS records the stream produced (a key update) that the socket did not
    /// take yet, without waiting.
    #[inline]
    fn flush_pending(&mut self) -> io::Result<()> {
        #[cfg(feature = "tls")]
        if let ConnStream::Tls(s) = &mut self.stream
            && s.has_pending()
        {
            s.flush_pending()?;
        }
        Ok(())
    }

    /// Wait until readable; while TLS records the stream produced (a key update) wait
    /// for the socket, wait for room as well and write them.
    async fn wait_readable(&mut self, deadline: Option<Instant>) -> io::Result<()> {
        #[cfg(feature = "tls")]
        let pending = matches!(&self.stream, ConnStream::Tls(s) if s.has_pending());
        #[cfg(not(feature = "tls"))]
        let pending = false;
        let interest = if pending {
            Interest::READABLE | Interest::WRITABLE
        } else {
            Interest::READABLE
        };
        if !self.ready.wait_for(interest, deadline).await? {
            return Err(io::ErrorKind::TimedOut.into());
        }
        #[cfg(feature = "tls")]
        if let ConnStream::Tls(s) = &mut self.stream
            && pending
        {
            s.flush_pending()?;
        }
        Ok(())
    }
}
