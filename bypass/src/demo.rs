//! The scripted exchange the example runs (and CI builds for a bare-metal
//! target): opening handshake, messages both ways (the server echoes every
//! data message and sends its own), pings both ways, then the close
//! handshake, all in one poll loop over a [`Session`].

use smoltcp::phy::Device;
use smoltcp::time::{Duration, Instant};
use tickwire_codec::rand::MaskSource;
use tickwire_codec::ws::{CloseCode, Message};

use crate::session::Session;
use crate::ws::{Error, State};

/// What the client sends; the server echoes each back.
pub const CLIENT_TEXT: &str = "hello from the client, über smoltcp";
/// A binary message: every byte value once.
pub const CLIENT_BINARY: [u8; 256] = {
    let mut b = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        b[i] = i as u8;
        i += 1;
    }
    b
};
/// Sent in fragments of [`FRAGMENT`] bytes (split inside multi-byte characters).
pub const CLIENT_FRAGMENTED: &str = "fragmented: ∀ε>0 ∃δ>0 — frames of seven bytes each";
/// The fragment size for [`CLIENT_FRAGMENTED`].
pub const FRAGMENT: usize = 7;
/// The server's own message.
pub const SERVER_TEXT: &str = "hello from the server";
/// The client's ping payload.
pub const CLIENT_PING: &[u8] = b"client ping";
/// The server's ping payload.
pub const SERVER_PING: &[u8] = b"server ping";
/// The close reason the client gives.
pub const CLOSE_REASON: &str = "done";

/// Most turns of the loop the script may take.
pub const MAX_TURNS: u32 = 10_000;

/// What happened, for the caller to print or check.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Report {
    /// Turns of the poll loop.
    pub turns: u32,
    /// Echoes the client received, each equal to what it sent.
    pub echoes: u32,
    /// The server's own message arrived intact at the client.
    pub server_text: bool,
    /// Pongs the client received (answering its ping).
    pub client_pongs: u32,
    /// Pongs the server received (answering its ping).
    pub server_pongs: u32,
    /// The close code the server received.
    pub server_saw_close: Option<u16>,
    /// The close code the client received in the echo.
    pub client_saw_close: Option<u16>,
    /// Time on the caller's clock from the first to the last turn.
    pub elapsed: Duration,
}

/// Why the script failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DemoError {
    /// An endpoint failed.
    Ws(Error),
    /// The REST exchange failed.
    Rest(crate::rest::RestError),
    /// A message arrived that the script did not send, or altered.
    Unexpected(&'static str),
    /// The script did not finish within [`MAX_TURNS`].
    Stalled,
}

impl From<Error> for DemoError {
    fn from(e: Error) -> Self {
        DemoError::Ws(e)
    }
}

impl From<tickwire_codec::ws::ConnectionError> for DemoError {
    fn from(e: tickwire_codec::ws::ConnectionError) -> Self {
        DemoError::Ws(Error::Ws(e))
    }
}

impl From<crate::rest::RestError> for DemoError {
    fn from(e: crate::rest::RestError) -> Self {
        DemoError::Rest(e)
    }
}

impl core::fmt::Display for DemoError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            DemoError::Ws(e) => write!(f, "{e}"),
            DemoError::Rest(e) => write!(f, "{e}"),
            DemoError::Unexpected(what) => write!(f, "unexpected message: {what}"),
            DemoError::Stalled => f.write_str("script did not finish"),
        }
    }
}

impl core::error::Error for DemoError {}

/// Run the script on `session`, reading the time from `clock` each turn.
pub fn run<D: Device, M: MaskSource>(
    session: &mut Session<'_, D, M>,
    mut clock: impl FnMut() -> Instant,
) -> Result<Report, DemoError> {
    let mut report = Report::default();
    let start = clock();
    let mut sent = false;
    let mut closing = false;
    while report.turns < MAX_TURNS {
        report.turns += 1;
        session.poll(clock())?;

        // Server: echo data, note pongs and the close.
        while let Some((msg, tx)) = session.server_recv()? {
            match msg {
                Message::Text(t) => tx.send_text(t)?,
                Message::Binary(b) => tx.send_binary(b)?,
                Message::Pong(p) if p == SERVER_PING => report.server_pongs += 1,
                Message::Ping(_) => {} // answered by the endpoint
                Message::Close(c) => report.server_saw_close = c.map(|c| c.code.0),
                Message::Pong(_) => return Err(DemoError::Unexpected("server: pong")),
            }
        }

        // Client: check echoes in order, note its pong and the close echo.
        while let Some((msg, _)) = session.client_recv()? {
            match msg {
                Message::Text(t) if t == SERVER_TEXT => report.server_text = true,
                Message::Text(t) if t == CLIENT_TEXT && report.echoes == 0 => report.echoes += 1,
                Message::Binary(b) if b == CLIENT_BINARY && report.echoes == 1 => {
                    report.echoes += 1
                }
                Message::Text(t) if t == CLIENT_FRAGMENTED && report.echoes == 2 => {
                    report.echoes += 1
                }
                Message::Pong(p) if p == CLIENT_PING => report.client_pongs += 1,
                Message::Ping(_) => {} // answered by the endpoint
                Message::Close(c) => report.client_saw_close = c.map(|c| c.code.0),
                _ => return Err(DemoError::Unexpected("client: not the next echo")),
            }
        }

        if !sent && session.client.is_open() && session.server.is_open() {
            let c = session.client.tx();
            c.send_text(CLIENT_TEXT)?;
            c.send_binary(&CLIENT_BINARY)?;
            c.send_text_fragmented(CLIENT_FRAGMENTED, FRAGMENT)?;
            c.send_ping(CLIENT_PING)?;
            let s = session.server.tx();
            s.send_text(SERVER_TEXT)?;
            s.send_ping(SERVER_PING)?;
            sent = true;
        }
        let all_in = report.echoes == 3
            && report.server_text
            && report.client_pongs == 1
            && report.server_pongs == 1;
        if all_in && !closing {
            session
                .client
                .tx()
                .close(Some(CloseCode::NORMAL), CLOSE_REASON)?;
            closing = true;
        }
        if closing && session.client.state() == State::Closed && session.is_closed() {
            report.elapsed = clock() - start;
            return Ok(report);
        }
    }
    Err(DemoError::Stalled)
}

/// The REST script's quote request: `GET {QUOTE_PATH}?symbol={SYMBOL}`.
pub const QUOTE_PATH: &str = "/quote";
/// The symbol asked for.
pub const SYMBOL: &str = "BTC-USD";
/// The handler's answer to the quote request.
pub const QUOTE_BODY: &str = r#"{"symbol":"BTC-USD","bid":"64000.50","ask":"64001.00"}"#;
/// The order the script posts.
pub const ORDER_BODY: &str = r#"{"side":"buy","qty":"0.25","px":"64000.00"}"#;
/// The handler's answer to the order: the id it assigned, then the order.
pub const ORDER_REPLY: &str = r#"{"id":1,"order":{"side":"buy","qty":"0.25","px":"64000.00"}}"#;

/// What the REST script saw.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RestReport {
    /// Turns of the poll loop.
    pub turns: u32,
    /// Status of the quote response (its body was [`QUOTE_BODY`]).
    pub quote: u16,
    /// Status of the order response (its body was [`ORDER_REPLY`]).
    pub order: u16,
    /// Status of the request for an unknown path.
    pub missing: u16,
    /// Requests the server handled.
    pub served: u32,
}

/// The tiny handler: `GET /quote?symbol=S`, `POST /order`, 404 otherwise.
fn handle<W: AsRef<[u8]> + AsMut<[u8]>>(
    req: &tickwire_codec::http::ServerRequest<'_>,
    resp: &mut crate::rest::Responder<'_, W>,
) -> Result<(), crate::rest::RestError> {
    use core::fmt::Write as _;
    use tickwire_codec::http::Method;
    const JSON: &[(&str, &str)] = &[("Content-Type", "application/json")];
    match (req.method(), req.path()) {
        (Some(Method::Get), QUOTE_PATH) => match req.query_pairs().find(|&(k, _)| k == "symbol") {
            Some((_, symbol)) => resp.respond_with(200, "OK", JSON, |w| {
                write!(
                    w,
                    r#"{{"symbol":"{symbol}","bid":"64000.50","ask":"64001.00"}}"#
                )
            }),
            None => resp.respond(400, "Bad Request", &[], b"symbol missing"),
        },
        (Some(Method::Post), "/order") => {
            let order = req.body();
            resp.respond_with(201, "Created", JSON, |w| {
                w.write_str(r#"{"id":1,"order":"#)?;
                w.write_bytes(order).map_err(|_| core::fmt::Error)?;
                w.write_str("}")
            })
        }
        _ => resp.respond(404, "Not Found", &[], b""),
    }
}

/// Put request `step` of the REST script into `sock` (0: the quote, 1: the
/// order, otherwise an unknown path); see [`RestClient::send`](crate::rest::RestClient::send).
pub fn send_rest_request<Q, P>(
    client: &mut crate::rest::RestClient<Q, P>,
    sock: &mut smoltcp::socket::tcp::Socket<'_>,
    step: usize,
) -> Result<usize, crate::rest::RestError>
where
    Q: AsRef<[u8]> + AsMut<[u8]>,
    P: AsRef<[u8]> + AsMut<[u8]>,
{
    match step {
        0 => client.send(sock, |w| w.get(QUOTE_PATH).query("symbol", SYMBOL).finish()),
        1 => client.send(sock, |w| {
            w.post("/order")
                .header("Content-Type", "application/json")
                .body(ORDER_BODY.as_bytes())
                .finish()
        }),
        _ => client.send(sock, |w| w.get("/missing").finish()),
    }
}

/// Run the REST script over connection `pair` of `session`'s link, in the
/// same loop as the WebSocket endpoints: a quote, an order, an unknown
/// path, one request at a time on one keep-alive connection, then the
/// client closes it.
pub fn run_rest<D, M, Q, P, R, W>(
    session: &mut Session<'_, D, M>,
    pair: crate::link::Pair,
    client: &mut crate::rest::RestClient<Q, P>,
    server: &mut crate::rest::RestServer<R, W>,
    mut clock: impl FnMut() -> Instant,
) -> Result<RestReport, DemoError>
where
    D: Device,
    M: MaskSource,
    Q: AsRef<[u8]> + AsMut<[u8]>,
    P: AsRef<[u8]> + AsMut<[u8]>,
    R: AsRef<[u8]> + AsMut<[u8]>,
    W: AsRef<[u8]> + AsMut<[u8]>,
{
    use smoltcp::socket::tcp;
    let mut report = RestReport::default();
    // 0: quote, 1: order, 2: missing, 3: done; `waiting` while one is in flight.
    let mut step = 0;
    let mut waiting = false;
    while report.turns < MAX_TURNS {
        report.turns += 1;
        let sock = session.link.sockets.get_mut::<tcp::Socket>(pair.server);
        server.flush(sock)?;
        session.poll(clock())?;

        let sock = session.link.sockets.get_mut::<tcp::Socket>(pair.server);
        while let Some((req, mut resp)) = server.recv(sock)? {
            handle(&req, &mut resp)?;
            report.served += 1;
        }

        let sock = session.link.sockets.get_mut::<tcp::Socket>(pair.client);
        if !waiting && step < 3 && sock.may_send() {
            match send_rest_request(client, sock, step) {
                Ok(_) => waiting = true,
                Err(crate::rest::RestError::SocketFull) => {}
                Err(e) => return Err(e.into()),
            }
        }
        let sock = session.link.sockets.get_mut::<tcp::Socket>(pair.client);
        if waiting && let Some(r) = client.recv(sock)? {
            let (status, body) = (r.status(), r.body());
            match step {
                0 if body == QUOTE_BODY.as_bytes() => report.quote = status,
                1 if body == ORDER_REPLY.as_bytes() => report.order = status,
                2 => report.missing = status,
                _ => return Err(DemoError::Unexpected("rest: response body")),
            }
            waiting = false;
            step += 1;
            if step == 3 {
                sock.close();
            }
        }
        let done = |s: tcp::State| matches!(s, tcp::State::Closed | tcp::State::TimeWait);
        if step == 3
            && done(session.link.sockets.get::<tcp::Socket>(pair.client).state())
            && done(session.link.sockets.get::<tcp::Socket>(pair.server).state())
        {
            return Ok(report);
        }
    }
    Err(DemoError::Stalled)
}
