//! [`TlsStream`]: a non-blocking byte stream that runs the codec's [`TlsCodec`] over a
//! socket. `Read` gives plaintext, `Write` takes plaintext; the TLS handshake runs
//! inside the first reads and writes, so code written for a plain socket (the
//! WebSocket connection, the REST client) runs over TLS unchanged, with one rule:
//! `write` may accept bytes that are not on the socket yet (they are encrypted into
//! the stream's own ciphertext buffer), so after the last write call
//! [`flush_pending`](TlsStream::flush_pending) until it returns `true`.
//!
//! Closing: [`close_notify`](TlsStream::close_notify) until it returns `true` (evented
//! and async use), or [`close_notify_until`](TlsStream::close_notify_until) /
//! [`close_until`](TlsStream::close_until) with the close timeout's deadline (blocking
//! use): close_notify goes out after every byte written before it, whatever the fill
//! of the buffers; only then is the socket shut.
//!
//! Readiness: every `WouldBlock` comes from the socket itself (after the handshake read
//! or wrote as far as it could), so edge-triggered polling never misses a wake-up.

use std::io::{self, Read, Write};
use std::net::Shutdown;
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use mio::{Interest, Registry, Token};
use socket2::SockRef;
use tickwire_codec::buf::WriteBuf;
use tickwire_codec::tls::rustls::pki_types::ServerName;
use tickwire_codec::tls::{Status, TlsCodec, TlsError};

use super::config::{TlsConfig, TlsServerConfig};

/// Incoming ciphertext buffer: a whole record plus the largest handshake message we
/// expect (certificate chains) split over records.
const INCOMING: usize = 64 * 1024;
/// Outgoing ciphertext buffer.
const OUTGOING: usize = 64 * 1024;
/// Plaintext encrypted per `write` call, so its records always fit `OUTGOING`.
const WRITE_CHUNK: usize = 32 * 1024;

/// A TLS error as an `io::Error` (kind `InvalidData`, or `UnexpectedEof` for a
/// truncated stream); the transport turns it back into its typed `Error::Tls`.
pub(crate) fn io_error(e: TlsError) -> io::Error {
    let kind = match e {
        TlsError::UnexpectedEof => io::ErrorKind::UnexpectedEof,
        _ => io::ErrorKind::InvalidData,
    };
    io::Error::new(kind, e)
}

/// The TLS error inside an `io::Error`, if it carries one.
pub fn tls_error(e: &io::Error) -> Option<&TlsError> {
    e.get_ref()
        .and_then(|inner| inner.downcast_ref::<TlsError>())
}

/// TLS over a socket `S`: `std::net::TcpStream` (blocking or not), mio's (the evented
/// driver's), or any `Read + Write` transport.
pub struct TlsStream<S> {
    sock: S,
    codec: TlsCodec<Vec<u8>>,
    out: WriteBuf<Vec<u8>>,
    /// The last socket read was short or would block: the socket had nothing more.
    sock_drained: bool,
}

impl<S> std::fmt::Debug for TlsStream<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsStream")
            .field("codec", &self.codec)
            .field("pending", &self.out.len())
            .finish_non_exhaustive()
    }
}

impl<S: Read + Write> TlsStream<S> {
    /// A client stream to `host` (SNI and the certificate's name; an IP literal is
    /// checked against the certificate's IP addresses and sends no SNI).
    ///
    /// ```
    /// # let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()])?;
    /// # let server_tls = tickwire::tls::TlsServerConfig::from_pem(cert.cert.pem().as_bytes(), cert.signing_key.serialize_pem().as_bytes())?;
    /// # let client_tls = tickwire::tls::TlsConfig::builder().add_ca_pem(cert.cert.pem().as_bytes())?.build()?;
    /// use std::io::{Read, Write};
    /// use std::net::{TcpListener, TcpStream};
    /// use tickwire::tls::{TlsConfig, TlsServerConfig, TlsStream};
    ///
    /// let listener = TcpListener::bind("127.0.0.1:0")?;
    /// let addr = listener.local_addr()?;
    /// let server = std::thread::spawn(move || -> std::io::Result<()> {
    ///     let (tcp, _) = listener.accept()?;
    ///     let mut tls = TlsStream::server(tcp, &server_tls).map_err(std::io::Error::other)?;
    ///     while !tls.handshake()? {} // a blocking socket: each step waits for bytes
    ///     let mut buf = [0u8; 4];
    ///     tls.read_exact(&mut buf)?;
    ///     tls.write_all(&buf)?; // echo
    ///     tls.flush()
    /// });
    /// let tcp = TcpStream::connect(addr)?;
    /// let mut tls = TlsStream::client(tcp, &client_tls, "localhost")?;
    /// while !tls.handshake()? {}
    /// tls.write_all(b"ping")?;
    /// tls.flush()?;
    /// let mut buf = [0u8; 4];
    /// tls.read_exact(&mut buf)?;
    /// assert_eq!(&buf, b"ping");
    /// server.join().unwrap()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn client(sock: S, config: &TlsConfig, host: &str) -> Result<Self, TlsError> {
        let name = ServerName::try_from(host.to_owned()).map_err(|_| {
            TlsError::Rustls(tickwire_codec::tls::rustls::Error::General(format!(
                "invalid server name {host:?}"
            )))
        })?;
        let codec = TlsCodec::client(config.client_config().clone(), name, vec![0; INCOMING])?;
        Ok(Self::with_codec(sock, codec))
    }

    /// A server stream.
    ///
    /// ```
    /// # let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()])?;
    /// # let server_tls = tickwire::tls::TlsServerConfig::from_pem(cert.cert.pem().as_bytes(), cert.signing_key.serialize_pem().as_bytes())?;
    /// # let client_tls = tickwire::tls::TlsConfig::builder().add_ca_pem(cert.cert.pem().as_bytes())?.build()?;
    /// use std::io::{Read, Write};
    /// use std::net::{TcpListener, TcpStream};
    /// use tickwire::tls::{TlsConfig, TlsServerConfig, TlsStream};
    ///
    /// let listener = TcpListener::bind("127.0.0.1:0")?;
    /// let addr = listener.local_addr()?;
    /// let server = std::thread::spawn(move || -> std::io::Result<()> {
    ///     let (tcp, _) = listener.accept()?;
    ///     let mut tls = TlsStream::server(tcp, &server_tls).map_err(std::io::Error::other)?;
    ///     while !tls.handshake()? {} // a blocking socket: each step waits for bytes
    ///     let mut buf = [0u8; 4];
    ///     tls.read_exact(&mut buf)?;
    ///     tls.write_all(&buf)?; // echo
    ///     tls.flush()
    /// });
    /// let tcp = TcpStream::connect(addr)?;
    /// let mut tls = TlsStream::client(tcp, &client_tls, "localhost")?;
    /// while !tls.handshake()? {}
    /// tls.write_all(b"ping")?;
    /// tls.flush()?;
    /// let mut buf = [0u8; 4];
    /// tls.read_exact(&mut buf)?;
    /// assert_eq!(&buf, b"ping");
    /// server.join().unwrap()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn server(sock: S, config: &TlsServerConfig) -> Result<Self, TlsError> {
        let codec = TlsCodec::server(config.server_config().clone(), vec![0; INCOMING])?;
        Ok(Self::with_codec(sock, codec))
    }

    fn with_codec(sock: S, codec: TlsCodec<Vec<u8>>) -> Self {
        TlsStream {
            sock,
            codec,
            out: WriteBuf::new(vec![0; OUTGOING]),
            sock_drained: false,
        }
    }

    /// The socket.
    pub fn get_ref(&self) -> &S {
        &self.sock
    }

    /// The socket, mutable (reading or writing it directly breaks the TLS stream).
    pub fn get_mut(&mut self) -> &mut S {
        &mut self.sock
    }

    /// The TLS codec: handshake state, ALPN protocol, version.
    pub fn codec(&self) -> &TlsCodec<Vec<u8>> {
        &self.codec
    }

    /// Whether ciphertext waits to be written to the socket.
    pub fn has_pending(&self) -> bool {
        !self.out.is_empty() || self.codec.has_pending_output()
    }

    /// Write waiting ciphertext to the socket. `Ok(true)` when none is left,
    /// `Ok(false)` when the socket would block (wait for writable).
    pub fn flush_pending(&mut self) -> io::Result<bool> {
        loop {
            if self.out.is_empty() {
                if !self.codec.has_pending_output() {
                    return Ok(true);
                }
                // Handshake records that did not fit the buffer before.
                self.codec.drain_pending_output(&mut self.out);
                if self.out.is_empty() {
                    return Ok(true);
                }
            }
            match self.sock.write(self.out.data()) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => self.out.consume(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Whether everything the socket held at the last read has been taken: that read
    /// was short (or would block), no ciphertext waits in the codec and no plaintext
    /// is left to read. Then nothing more can be read until the socket is readable
    /// again (edge-triggered readiness reports the next arrival).
    pub fn is_drained(&self) -> bool {
        self.sock_drained && self.codec.incoming_len() == 0 && !self.codec.has_plaintext()
    }

    /// Read ciphertext from the socket once. `Ok(false)`: it would block.
    fn fill(&mut self) -> io::Result<bool> {
        let spare = self.codec.incoming_mut();
        if spare.is_empty() {
            // The codec reports IncomingFull before this can happen.
            return Err(io_error(TlsError::IncomingFull));
        }
        let asked = spare.len();
        loop {
            return match self.sock.read(spare) {
                Ok(0) => {
                    self.sock_drained = false;
                    self.codec.handle_eof();
                    Ok(true)
                }
                Ok(n) => {
                    self.sock_drained = n < asked;
                    self.codec.commit_incoming(n);
                    Ok(true)
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.sock_drained = true;
                    Ok(false)
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => Err(e),
            };
        }
    }

    /// Drive the handshake as far as the socket allows. `Ok(true)`: complete;
    /// `Ok(false)`: the socket would block (wait for readable or writable).
    pub fn handshake(&mut self) -> io::Result<bool> {
        loop {
            let status = self.codec.handshake(&mut self.out);
            // Our records (or the alert for a failure) go out first.
            let flushed = self.flush_pending();
            match status {
                Ok(Status::Ready) => return flushed.map(|_| true),
                Ok(_) => {}
                Err(e) => return Err(io_error(e)),
            }
            flushed?;
            if !self.fill()? {
                return Ok(false);
            }
        }
    }

    /// Process the ciphertext the socket holds now, reading until it would block (a
    /// blocking socket must be switched to non-blocking first): handshake and
    /// post-handshake messages are handled, plaintext is kept for the next
    /// [`read`](Read::read), and the peer's close_notify is seen
    /// ([`TlsCodec::is_peer_closed`]). For an idle connection's liveness check.
    pub fn read_available(&mut self) -> io::Result<()> {
        loop {
            let status = self.codec.read(&mut [], &mut self.out);
            let flushed = self.flush_pending();
            match status {
                Ok(Status::PeerClosed) => return Ok(()),
                Ok(_) => {}
                Err(e) => return Err(io_error(e)),
            }
            flushed?;
            if !self.fill()? {
                return Ok(());
            }
        }
    }

    /// End our side of the TLS stream: queue close_notify behind everything written
    /// before it (once; later calls only flush) and write what the socket takes.
    ///
    /// `Ok(true)`: done, close_notify and every byte before it are on the socket.
    /// `Ok(false)`: not yet, the socket would block; call again when it is writable
    /// (evented and async use: on the next flush). A full ciphertext buffer is never an
    /// error: what it holds is written first and close_notify queued on a later call.
    /// Before the handshake completed, or after the connection failed (its fatal alert
    /// is queued then), there is no close_notify to send: only what waits is written.
    /// For blocking use, [`close_notify_until`](Self::close_notify_until).
    pub fn close_notify(&mut self) -> io::Result<bool> {
        // At most: the queue written out, then close_notify into the empty buffer.
        for _ in 0..3 {
            if self.codec.is_close_sent()
                || self.codec.is_handshaking()
                || self.codec.error().is_some()
            {
                return self.flush_pending();
            }
            match self.codec.close(&mut self.out) {
                Ok(()) => return self.flush_pending(),
                Err(TlsError::OutputFull { .. }) => {
                    if !self.flush_pending()? {
                        return Ok(false);
                    }
                }
                Err(e) => return Err(io_error(e)),
            }
        }
        // An empty buffer always takes an alert record.
        Err(io_error(TlsError::OutputFull { required: 0 }))
    }
}

/// Blocking closes, on any socket with a file descriptor (blocking or not).
impl<S: Read + Write + AsFd> TlsStream<S> {
    /// Send close_notify as far as the socket takes it now (never waits: a failed
    /// connection's last word) and shut the write half. A graceful close uses
    /// [`close_notify`](Self::close_notify) until it is done, then this.
    pub fn shutdown_write(&mut self) -> io::Result<()> {
        let _ = self.close_notify();
        SockRef::from(&self.sock).shutdown(Shutdown::Write)
    }

    /// [`close_notify`](Self::close_notify), waiting for the socket to take the bytes
    /// until `deadline` (the close timeout): `Ok(false)` when it passed first. The
    /// socket is left in the mode (and with the write timeout) it had.
    pub fn close_notify_until(&mut self, deadline: Instant) -> io::Result<bool> {
        if self.close_notify()? {
            return Ok(true);
        }
        let sock = SockRef::from(&self.sock);
        let nonblocking = sock.nonblocking()?;
        let timeout = sock.write_timeout()?;
        let done = loop {
            let left = match deadline.checked_duration_since(Instant::now()) {
                Some(left) if !left.is_zero() => left,
                _ => break Ok(false),
            };
            // A blocking write that waits at most until the deadline (a zero timeout
            // would mean forever).
            let sock = SockRef::from(&self.sock);
            let waits = sock
                .set_nonblocking(false)
                .and_then(|()| sock.set_write_timeout(Some(left.max(Duration::from_millis(1)))));
            if let Err(e) = waits {
                break Err(e);
            }
            match self.close_notify() {
                Ok(false) => {}
                done => break done,
            }
        };
        let sock = SockRef::from(&self.sock);
        let restored = sock
            .set_write_timeout(timeout)
            .and_then(|()| sock.set_nonblocking(nonblocking));
        let done = done?;
        restored.map(|()| done)
    }

    /// Close the connection from our side: close_notify after everything written
    /// before it ([`close_notify_until`](Self::close_notify_until) `deadline`), then
    /// the socket's write half is shut (FIN), then what the peer sent that nobody
    /// will read is discarded (without waiting), so that closing the socket does not
    /// turn into a reset that destroys our last bytes still in flight. `Ok(true)`: the
    /// close_notify went out. The caller drops the stream after it.
    pub fn close_until(&mut self, deadline: Instant) -> io::Result<bool> {
        let sent = self.close_notify_until(deadline);
        let sock = SockRef::from(&self.sock);
        // The peer may be gone already: nothing useful to report then.
        let _ = sock.shutdown(Shutdown::Write);
        if sock.set_nonblocking(true).is_ok() {
            let mut discard = [0u8; 4096];
            for _ in 0..64 {
                match self.sock.read(&mut discard) {
                    Ok(n) if n > 0 => {}
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    _ => break,
                }
            }
        }
        sent
    }
}

impl<S: Read + Write> Read for TlsStream<S> {
    /// Plaintext; `Ok(0)` only after the peer's close_notify. End-of-stream before it
    /// is an `UnexpectedEof` error carrying [`TlsError::UnexpectedEof`].
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            let status = self.codec.read(buf, &mut self.out);
            // Handshake records, key updates or an alert may have been queued.
            let flushed = self.flush_pending();
            match status {
                Ok(Status::Data(n)) => return Ok(n),
                Ok(Status::PeerClosed) => return Ok(0),
                Ok(Status::NeedMore | Status::Ready) => {}
                Err(e) => return Err(io_error(e)),
            }
            flushed?;
            if !self.fill()? {
                return Err(io::ErrorKind::WouldBlock.into());
            }
        }
    }
}

impl<S: Read + Write> Write for TlsStream<S> {
    /// Encrypt up to 32 KiB of `data` and write what the socket takes. The bytes
    /// accepted may still wait in the stream: see [`flush_pending`](Self::flush_pending).
    /// `WouldBlock` during the handshake until it completes, and when the ciphertext
    /// buffer is full.
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if data.is_empty() {
            return Ok(0);
        }
        if self.codec.is_handshaking() && !self.handshake()? {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let chunk = &data[..data.len().min(WRITE_CHUNK)];
        loop {
            match self.codec.encrypt(chunk, &mut self.out) {
                Ok(()) => {
                    self.flush_pending()?;
                    return Ok(chunk.len());
                }
                Err(TlsError::OutputFull { .. }) => {
                    if !self.flush_pending()? {
                        return Err(io::ErrorKind::WouldBlock.into());
                    }
                }
                Err(e) => return Err(io_error(e)),
            }
        }
    }

    /// Write all waiting ciphertext; `WouldBlock` if the socket cannot take it now.
    fn flush(&mut self) -> io::Result<()> {
        if self.flush_pending()? {
            self.sock.flush()
        } else {
            Err(io::ErrorKind::WouldBlock.into())
        }
    }
}

impl<S: mio::event::Source> mio::event::Source for TlsStream<S> {
    fn register(
        &mut self,
        registry: &Registry,
        token: Token,
        interests: Interest,
    ) -> io::Result<()> {
        self.sock.register(registry, token, interests)
    }

    fn reregister(
        &mut self,
        registry: &Registry,
        token: Token,
        interests: Interest,
    ) -> io::Result<()> {
        self.sock.reregister(registry, token, interests)
    }

    fn deregister(&mut self, registry: &Registry) -> io::Result<()> {
        self.sock.deregister(registry)
    }
}
