//! One poll loop, two WebSocket endpoints: a tickwire client and a tickwire
//! server connected through smoltcp over one device, all in caller memory.
//!
//! [`Session::new`] cuts one caller arena into the four TCP buffers and the
//! four WebSocket buffers (see [`Sizes`]); [`Session::poll`] is one turn of
//! the loop: queued frames into the sockets, packets through the device,
//! after which [`Session::client_recv`] / [`Session::server_recv`] hand out
//! whatever messages arrived.

use smoltcp::iface::SocketStorage;
use smoltcp::phy::Device;
use smoltcp::socket::tcp;
use smoltcp::time::Instant;
use tickwire_codec::rand::{MaskSource, NoMask};
use tickwire_codec::ws::handshake::ClientHandshake;
use tickwire_codec::ws::{Config, Message, Settings};

use crate::link::{Link, LinkError, TcpBuffers};
use crate::ws::{Endpoint, Error, Tx, codec_instant};

/// How the arena is cut: four TCP buffers (rx and tx per socket) and four
/// WebSocket buffers (a frame reader and a send buffer per endpoint).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sizes {
    /// Each TCP socket buffer (receive window and send queue), in bytes.
    pub tcp: usize,
    /// Each WebSocket buffer. A reader holds a whole message plus
    /// [`READER_OVERHEAD`](tickwire_codec::ws::reader::READER_OVERHEAD); a
    /// send buffer holds the largest message with its frame headers, plus
    /// 139 bytes kept free for a pong or a close frame.
    pub ws: usize,
}

impl Sizes {
    /// The arena length these sizes need.
    pub const fn arena_len(&self) -> usize {
        4 * self.tcp + 4 * self.ws
    }
}

/// Why a session could not be set up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetupError {
    /// The arena is shorter than [`Sizes::arena_len`].
    ArenaTooSmall,
    /// The interface or the sockets could not be set up.
    Link(LinkError),
    /// The client's handshake did not fit its send buffer.
    Ws(Error),
}

impl core::fmt::Display for SetupError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            SetupError::ArenaTooSmall => f.write_str("arena shorter than Sizes::arena_len"),
            SetupError::Link(e) => write!(f, "link: {e}"),
            SetupError::Ws(e) => write!(f, "websocket: {e}"),
        }
    }
}

impl core::error::Error for SetupError {}

/// The client endpoint of a session.
pub type ClientEndpoint<'s, M> = Endpoint<&'s mut [u8], &'s mut [u8], M>;
/// The server endpoint of a session.
pub type ServerEndpoint<'s> = Endpoint<&'s mut [u8], &'s mut [u8], NoMask>;
/// What `*_recv` hands out: a message and the receiving side's sending half.
pub type Received<'a, 's, M> = (Message<'a>, &'a mut Tx<&'s mut [u8], M>);

/// A client and a server endpoint over one smoltcp link.
#[derive(Debug)]
pub struct Session<'s, D, M> {
    /// The interface, device and sockets.
    pub link: Link<'s, D>,
    /// The WebSocket client.
    pub client: ClientEndpoint<'s, M>,
    /// The WebSocket server.
    pub server: ServerEndpoint<'s>,
}

/// Take `n` bytes off the front of `rest`.
fn take<'s>(rest: &mut &'s mut [u8], n: usize) -> &'s mut [u8] {
    let (head, tail) = core::mem::take(rest).split_at_mut(n);
    *rest = tail;
    head
}

impl<'s, D: Device, M: MaskSource> Session<'s, D, M> {
    /// Set up the link on `device` and both endpoints; the client's upgrade
    /// request is queued at once. `seed` feeds smoltcp's generator; `mask`
    /// gives the client's masking keys; `config` holds both readers' limits.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        device: D,
        arena: &'s mut [u8],
        sizes: Sizes,
        slots: &'s mut [SocketStorage<'s>],
        handshake: ClientHandshake<'_>,
        mask: M,
        config: Config,
        seed: u64,
        now: Instant,
    ) -> Result<Self, SetupError> {
        if arena.len() < sizes.arena_len() {
            return Err(SetupError::ArenaTooSmall);
        }
        let mut rest = arena;
        let client_tcp = TcpBuffers {
            rx: take(&mut rest, sizes.tcp),
            tx: take(&mut rest, sizes.tcp),
        };
        let server_tcp = TcpBuffers {
            rx: take(&mut rest, sizes.tcp),
            tx: take(&mut rest, sizes.tcp),
        };
        let link = Link::new(device, slots, client_tcp, server_tcp, seed, now)
            .map_err(SetupError::Link)?;
        let settings = Settings {
            limits: config,
            ..Settings::default()
        };
        let t = codec_instant(now);
        let client = Endpoint::client(
            &handshake,
            take(&mut rest, sizes.ws),
            take(&mut rest, sizes.ws),
            mask,
            &settings,
            t,
        )
        .map_err(SetupError::Ws)?;
        let server = Endpoint::server(
            take(&mut rest, sizes.ws),
            take(&mut rest, sizes.ws),
            &settings,
            t,
        );
        Ok(Session {
            link,
            client,
            server,
        })
    }

    /// One turn of the loop at time `now`: the endpoints' timers, queued
    /// frames of both endpoints into their sockets, then smoltcp moves packets
    /// through the device, then, if frames are still waiting (ACKs may have
    /// freed send space, or the connection came up), frames again and packets
    /// again. Returns whether smoltcp did anything.
    pub fn poll(&mut self, now: Instant) -> Result<bool, Error> {
        let t = codec_instant(now);
        self.client.handle_timeout(t)?;
        self.server.handle_timeout(t)?;
        self.flush()?;
        let moved = self.link.poll(now);
        if moved && (self.client.wants_write() || self.server.wants_write()) {
            self.flush()?;
            self.link.poll(now);
        }
        Ok(moved)
    }

    fn flush(&mut self) -> Result<(), Error> {
        let sock = self.link.sockets.get_mut::<tcp::Socket>(self.link.client);
        self.client.flush(sock)?;
        let sock = self.link.sockets.get_mut::<tcp::Socket>(self.link.server);
        self.server.flush(sock)?;
        Ok(())
    }

    /// The client's next message (see [`Endpoint::recv`]).
    pub fn client_recv(&mut self) -> Result<Option<Received<'_, 's, M>>, Error> {
        let sock = self.link.sockets.get_mut::<tcp::Socket>(self.link.client);
        self.client.recv(sock)
    }

    /// The server's next message (see [`Endpoint::recv`]).
    pub fn server_recv(&mut self) -> Result<Option<Received<'_, 's, NoMask>>, Error> {
        let sock = self.link.sockets.get_mut::<tcp::Socket>(self.link.server);
        self.server.recv(sock)
    }

    /// Whether both endpoints finished the close handshake and both TCP
    /// connections have reached CLOSED or TIME-WAIT.
    pub fn is_closed(&mut self) -> bool {
        let done = |s: tcp::State| matches!(s, tcp::State::Closed | tcp::State::TimeWait);
        self.client.is_done()
            && self.server.is_done()
            && done(self.link.client_socket().state())
            && done(self.link.server_socket().state())
    }
}
