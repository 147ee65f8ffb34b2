//! REST over the same smoltcp loop: an HTTP/1.1 client (the codec's
//! `RequestWriter` out, `ResponseReader` in, driven by the codec's
//! [`ClientConnection`], as the std clients are) and a tiny server
//! (`RequestReader` in, `ResponseWriter` out), each over one smoltcp TCP
//! socket, like the WebSocket endpoints in [`ws`](crate::ws).
//!
//! The client follows the same keep-alive rules as `tickwire::rest::Client`:
//! a response is only ever read for the request just sent; the connection is
//! closed after a response that does not keep it (or any error), and when
//! anything arrived on it while idle; the request deadline and the read/write
//! timeouts run on the `now` passed to [`RestClient::handle_timeout`]. Opening
//! a TCP connection is the loop's business: when the client needs a new one
//! (after a close, or to retry an idempotent request the server dropped) it
//! says [`RestError::NotConnected`]; open one and send again.
//!
//! A request goes from the writer's storage straight into the socket's send
//! buffer (whole or not at all: the room is checked first), so it is copied
//! once. Responses are queued in a [`WriteBuf`] and flushed like WebSocket
//! frames. Readers are fed from the socket's receive buffer.

use core::time::Duration;
use smoltcp::socket::tcp;

use tickwire_codec::buf::{BufferFull, WriteBuf};
use tickwire_codec::http::{
    Action, BodyWriter, BuildError, ClientConnection, ClientError, ClientSettings, ClientStats,
    Error as HttpError, Request, RequestReader, RequestWriter, ResponseReader, ResponseWriter,
    RestResponse, ServerRequest,
};
use tickwire_codec::time::Instant;

/// What went wrong in a REST exchange.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RestError {
    /// A request or response could not be built (invalid header, buffer full).
    Build(BuildError),
    /// The peer sent something that is not valid HTTP/1.1 (final for the connection).
    Http(HttpError),
    /// The socket's send buffer has no room for the whole request now: poll, retry.
    SocketFull,
    /// The connection is not established (yet, or any more), or the client closed it
    /// (the response said so, something arrived while it was idle, an error) or wants a
    /// new one to retry the request on: open a new connection and send again.
    NotConnected,
    /// The request failed: the server closed before responding, a timeout or the
    /// request deadline passed (the connection is closed).
    Client(ClientError),
    /// The response queue has no room: flush, poll, retry.
    QueueFull,
    /// smoltcp refused to hand out received bytes.
    Recv(tcp::RecvError),
    /// smoltcp refused to take bytes to send.
    Send(tcp::SendError),
}

impl From<BuildError> for RestError {
    fn from(e: BuildError) -> Self {
        RestError::Build(e)
    }
}

impl From<HttpError> for RestError {
    fn from(e: HttpError) -> Self {
        RestError::Http(e)
    }
}

impl From<ClientError> for RestError {
    fn from(e: ClientError) -> Self {
        match e {
            ClientError::Http(e) => RestError::Http(e),
            e => RestError::Client(e),
        }
    }
}

impl From<BufferFull> for RestError {
    fn from(_: BufferFull) -> Self {
        RestError::QueueFull
    }
}

impl From<tcp::RecvError> for RestError {
    fn from(e: tcp::RecvError) -> Self {
        RestError::Recv(e)
    }
}

impl From<tcp::SendError> for RestError {
    fn from(e: tcp::SendError) -> Self {
        RestError::Send(e)
    }
}

impl core::fmt::Display for RestError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            RestError::Build(e) => write!(f, "build: {e}"),
            RestError::Http(e) => write!(f, "http: {e}"),
            RestError::SocketFull => f.write_str("socket send buffer full"),
            RestError::NotConnected => f.write_str("not connected"),
            RestError::Client(e) => write!(f, "request: {e}"),
            RestError::QueueFull => f.write_str("response queue full"),
            RestError::Recv(e) => write!(f, "tcp recv: {e}"),
            RestError::Send(e) => write!(f, "tcp send: {e}"),
        }
    }
}

impl core::error::Error for RestError {}

/// Whether the peer closed its half and every byte it sent was read.
fn peer_finished(sock: &tcp::Socket<'_>) -> bool {
    use tcp::State::*;
    !sock.can_recv()
        && matches!(
            sock.state(),
            CloseWait | LastAck | Closing | TimeWait | Closed
        )
}

/// An HTTP/1.1 client over one smoltcp TCP socket at a time, one request in flight:
/// see the [module docs](self).
#[derive(Debug)]
pub struct RestClient<Q, P> {
    writer: RequestWriter<Q>,
    reader: ResponseReader<P>,
    conn: ClientConnection,
    /// The latest `now` passed to [`handle_timeout`](Self::handle_timeout).
    now: Instant,
    /// The whole-request deadline of each request.
    timeout: Option<Duration>,
    /// A request was sent and its response not yet returned.
    in_flight: bool,
}

impl<Q, P> RestClient<Q, P>
where
    Q: AsRef<[u8]> + AsMut<[u8]>,
    P: AsRef<[u8]> + AsMut<[u8]>,
{
    /// A client writing requests with `writer` (host, base path and default
    /// headers already configured) and reading responses into `read`, with the
    /// default [`ClientSettings`] (30 s read and write timeouts, the idle check before
    /// every reuse).
    pub fn new(writer: RequestWriter<Q>, read: P) -> Self {
        Self::with_settings(writer, read, ClientSettings::default())
    }

    /// [`new`](Self::new) with `settings`.
    pub fn with_settings(writer: RequestWriter<Q>, read: P, settings: ClientSettings) -> Self {
        RestClient {
            writer,
            reader: ResponseReader::new(read),
            conn: ClientConnection::new(settings),
            now: Instant::ZERO,
            timeout: None,
            in_flight: false,
        }
    }

    /// Bound each request as a whole (send to response) by `timeout` (`None`: no
    /// bound, the default).
    pub fn set_timeout(&mut self, timeout: Option<Duration>) {
        self.timeout = timeout;
    }

    /// Time passed: it is `now` (the loop's clock, [`codec_instant`](crate::ws::codec_instant)).
    /// A request whose deadline or read/write timeout passed fails at the next
    /// [`recv`](Self::recv).
    pub fn handle_timeout(&mut self, now: Instant) {
        self.now = now;
        self.conn.handle_timeout(now);
    }

    /// When to call [`handle_timeout`](Self::handle_timeout) next (`None`: no timer).
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.conn.poll_timeout()
    }

    /// Counters: connects, requests, retries, stale connections replaced.
    pub fn stats(&self) -> ClientStats {
        self.conn.stats()
    }

    /// Build a request with `build` and put it into the socket's send buffer
    /// whole; returns its length. Nothing is sent when it does not fit. A socket
    /// the client does not know yet is taken as a new connection; one it closed (or
    /// must not reuse) is [`RestError::NotConnected`].
    pub fn send<'a>(
        &'a mut self,
        sock: &mut tcp::Socket<'_>,
        build: impl FnOnce(&'a mut RequestWriter<Q>) -> Result<Request<'a>, BuildError>,
    ) -> Result<usize, RestError> {
        if !sock.may_send() {
            return Err(RestError::NotConnected);
        }
        let req = build(&mut self.writer)?;
        if sock.send_capacity() - sock.send_queue() < req.len() {
            return Err(RestError::SocketFull);
        }
        self.conn.start(&req, self.timeout, self.now);
        loop {
            match self.conn.poll(&mut self.reader)? {
                Action::Connect if sock.may_send() => self.conn.handle_connected(self.now),
                Action::Connect => return Err(RestError::NotConnected),
                Action::Probe => self.conn.handle_probe(sock.can_recv() || !sock.may_recv()),
                Action::Close => {
                    sock.close();
                    self.conn.handle_closed();
                }
                Action::Write => {
                    let n = sock.send_slice(self.conn.transmit(&req))?;
                    self.conn.handle_written(n);
                }
                Action::Read | Action::Done => {
                    self.in_flight = true;
                    return Ok(req.len());
                }
            }
        }
    }

    /// The response, once it has arrived whole; `Ok(None)` until then. After a
    /// response that does not keep the connection, the socket is closed.
    pub fn recv(
        &mut self,
        sock: &mut tcp::Socket<'_>,
    ) -> Result<Option<RestResponse<'_>>, RestError> {
        if !self.in_flight {
            return Ok(None);
        }
        loop {
            match self.conn.poll(&mut self.reader) {
                Ok(Action::Read) => {
                    if sock.can_recv() {
                        let spare = self.reader.spare_mut();
                        let n = sock.recv_slice(spare)?;
                        if n == 0 {
                            return Ok(None);
                        }
                        self.conn.handle_read(&mut self.reader, n);
                    } else if peer_finished(sock) {
                        self.conn.handle_eof(&mut self.reader);
                    } else {
                        return Ok(None);
                    }
                }
                Ok(Action::Close) => {
                    sock.close();
                    self.conn.handle_closed();
                }
                Ok(Action::Done) => {
                    self.in_flight = false;
                    return Ok(self.reader.response());
                }
                // A retry on a new connection, which the loop opens.
                Ok(_) => {
                    self.in_flight = false;
                    return Err(RestError::NotConnected);
                }
                Err(e) => {
                    self.in_flight = false;
                    return Err(e.into());
                }
            }
        }
    }
}

/// Queues one response for a [`RestServer`]'s request.
#[derive(Debug)]
pub struct Responder<'a, W> {
    out: &'a mut WriteBuf<W>,
}

impl<W: AsRef<[u8]> + AsMut<[u8]>> Responder<'_, W> {
    /// Queue `status reason`, `headers` and `body` (with its Content-Length).
    pub fn respond(
        &mut self,
        status: u16,
        reason: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Result<(), RestError> {
        self.build(status, reason, headers, |w| w.body(body).finish())
    }

    /// Queue a response whose body `write` serializes in place (`write!` works).
    pub fn respond_with(
        &mut self,
        status: u16,
        reason: &str,
        headers: &[(&str, &str)],
        write: impl FnOnce(&mut BodyWriter<'_>) -> core::fmt::Result,
    ) -> Result<(), RestError> {
        self.build(status, reason, headers, |w| w.body_writer(write).finish())
    }

    fn build(
        &mut self,
        status: u16,
        reason: &str,
        headers: &[(&str, &str)],
        finish: impl FnOnce(
            ResponseWriter<'_, tickwire_codec::http::Fields>,
        ) -> Result<usize, BuildError>,
    ) -> Result<(), RestError> {
        let room = self.out.remaining();
        let buf = self.out.reserve(room)?;
        let mut w = ResponseWriter::new(buf, status, reason);
        for &(name, value) in headers {
            w = w.header(name, value);
        }
        let n = finish(w)?;
        self.out.commit(n);
        Ok(())
    }
}

/// A tiny HTTP/1.1 server over one smoltcp TCP socket: requests come out
/// of [`recv`](Self::recv) with a [`Responder`]; [`flush`](Self::flush)
/// sends the queued responses.
#[derive(Debug)]
pub struct RestServer<Q, W> {
    reader: RequestReader<Q>,
    out: WriteBuf<W>,
    closed: bool,
}

impl<Q, W> RestServer<Q, W>
where
    Q: AsRef<[u8]> + AsMut<[u8]>,
    W: AsRef<[u8]> + AsMut<[u8]>,
{
    /// A server reading requests into `read` and queueing responses in `write`.
    pub fn new(read: Q, write: W) -> Self {
        RestServer {
            reader: RequestReader::new(read),
            out: WriteBuf::new(write),
            closed: false,
        }
    }

    /// The next whole request and a responder for it; `Ok(None)` until one
    /// has arrived. When the client has closed its half and nothing is left,
    /// the server closes its own after the last response is flushed.
    #[allow(clippy::type_complexity)]
    pub fn recv(
        &mut self,
        sock: &mut tcp::Socket<'_>,
    ) -> Result<Option<(ServerRequest<'_>, Responder<'_, W>)>, RestError> {
        if sock.can_recv() {
            let spare = self.reader.spare_mut();
            if !spare.is_empty() {
                let n = sock.recv_slice(spare)?;
                self.reader.commit(n);
            }
        } else if peer_finished(sock) {
            self.closed = true;
        }
        match self.reader.poll()? {
            Some(req) => Ok(Some((req, Responder { out: &mut self.out }))),
            None => Ok(None),
        }
    }

    /// Move queued responses into the socket's send buffer; returns how many
    /// bytes it took. Closes the connection once the client has closed and
    /// everything is sent.
    pub fn flush(&mut self, sock: &mut tcp::Socket<'_>) -> Result<usize, RestError> {
        let mut sent = 0;
        if !self.out.is_empty() && sock.may_send() {
            sent = sock.send_slice(self.out.data())?;
            self.out.consume(sent);
        }
        if self.closed && self.out.is_empty() {
            sock.close();
        }
        Ok(sent)
    }
}
