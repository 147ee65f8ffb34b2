//! The network half of the poll loop: one smoltcp interface on one device,
//! with a client TCP socket connected to a listening server socket over it.
//!
//! Everything is caller memory: the device (and its packet storage), the
//! socket slots and the four TCP buffers. The clock is the caller's `now`,
//! passed to every call; the TCP stack's randomness (initial sequence
//! numbers) is the caller's seed. Nothing here asks an operating system.

use smoltcp::iface::{
    Config, Interface, PollIngressSingleResult, PollResult, SocketHandle, SocketSet, SocketStorage,
};
use smoltcp::phy::Device;
use smoltcp::socket::tcp;
use smoltcp::time::Instant;
use smoltcp::wire::{HardwareAddress, IpAddress, IpCidr};

/// The interface's address; both sockets live on it.
pub const ADDR: IpAddress = IpAddress::v4(127, 0, 0, 1);
/// The server socket's port.
pub const SERVER_PORT: u16 = 9001;
/// The client socket's (local) port.
pub const CLIENT_PORT: u16 = 49152;

/// A TCP socket's receive and send buffers.
#[derive(Debug)]
pub struct TcpBuffers<'s> {
    /// Bytes received, waiting for the application.
    pub rx: &'s mut [u8],
    /// Bytes the application queued, waiting to be sent and acknowledged.
    pub tx: &'s mut [u8],
}

/// Why the link could not be set up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkError {
    /// No two free socket slots are left.
    NoSocketSlot,
    /// The server socket could not listen.
    Listen(tcp::ListenError),
    /// The client socket could not connect.
    Connect(tcp::ConnectError),
}

impl core::fmt::Display for LinkError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            LinkError::NoSocketSlot => f.write_str("no two free socket slots"),
            LinkError::Listen(e) => write!(f, "listen: {e}"),
            LinkError::Connect(e) => write!(f, "connect: {e}"),
        }
    }
}

impl core::error::Error for LinkError {}

/// An interface, its device and two connected TCP sockets.
pub struct Link<'s, D> {
    /// The smoltcp interface.
    pub iface: Interface,
    /// The device packets go through.
    pub device: D,
    /// The socket set holding [`client`](Self::client) and [`server`](Self::server).
    pub sockets: SocketSet<'s>,
    /// The client socket (connects from [`CLIENT_PORT`]).
    pub client: SocketHandle,
    /// The server socket (listens on [`SERVER_PORT`]).
    pub server: SocketHandle,
    /// Socket slots given.
    capacity: usize,
}

/// The two sockets of one connection in the loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pair {
    /// The connecting socket.
    pub client: SocketHandle,
    /// The listening (then accepted) socket.
    pub server: SocketHandle,
}

impl<'s, D: Device> Link<'s, D> {
    /// Bring up the interface on `device` at [`ADDR`], make the server
    /// listen and the client connect. `seed` feeds smoltcp's generator
    /// (initial sequence numbers): use a different one per run.
    ///
    /// Both sockets have Nagle's algorithm and delayed ACKs off: a trading
    /// loop sends each message as soon as it is written.
    pub fn new(
        mut device: D,
        slots: &'s mut [SocketStorage<'s>],
        client: TcpBuffers<'s>,
        server: TcpBuffers<'s>,
        seed: u64,
        now: Instant,
    ) -> Result<Self, LinkError> {
        if slots.len() < 2 {
            return Err(LinkError::NoSocketSlot);
        }
        let mut config = Config::new(HardwareAddress::Ip);
        config.random_seed = seed;
        let mut iface = Interface::new(config, &mut device, now);
        iface.update_ip_addrs(|addrs| {
            // Capacity is at least one address; the list starts empty.
            let _ = addrs.push(IpCidr::new(ADDR, 8));
        });
        let capacity = slots.len();
        let mut link = Link {
            iface,
            device,
            capacity,
            sockets: SocketSet::new(slots),
            client: SocketHandle::default(),
            server: SocketHandle::default(),
        };
        let pair = link.add_pair(client, server, SERVER_PORT, CLIENT_PORT)?;
        link.client = pair.client;
        link.server = pair.server;
        Ok(link)
    }

    /// Another connection in the same loop: a server socket listening on
    /// `port` and a client socket connecting to it from `client_port`. The
    /// socket slots given to [`new`](Self::new) must have room for two more.
    pub fn add_pair(
        &mut self,
        client: TcpBuffers<'s>,
        server: TcpBuffers<'s>,
        port: u16,
        client_port: u16,
    ) -> Result<Pair, LinkError> {
        // `SocketSet::add` panics when a borrowed slot list is full: check first.
        if self.sockets.iter().count() + 2 > self.capacity {
            return Err(LinkError::NoSocketSlot);
        }
        let mut server_sock = socket(server);
        server_sock.listen(port).map_err(LinkError::Listen)?;
        let mut client_sock = socket(client);
        client_sock
            .connect(self.iface.context(), (ADDR, port), client_port)
            .map_err(LinkError::Connect)?;
        Ok(Pair {
            server: self.sockets.add(server_sock),
            client: self.sockets.add(client_sock),
        })
    }

    /// Let smoltcp move packets until it has nothing more to do now (bounded);
    /// returns whether any socket's state may have changed. A turn ends with a
    /// pass of smoltcp whose sockets sent nothing: a data segment and its ACK
    /// take three passes (ingress, then egress, each), not four.
    pub fn poll(&mut self, now: Instant) -> bool {
        settle(&mut self.iface, &mut self.device, &mut self.sockets, now)
    }

    /// When smoltcp next wants to be polled (a timer), if at all.
    pub fn poll_at(&mut self, now: Instant) -> Option<Instant> {
        self.iface.poll_at(now, &self.sockets)
    }

    /// The client's socket.
    pub fn client_socket(&mut self) -> &mut tcp::Socket<'s> {
        self.sockets.get_mut::<tcp::Socket>(self.client)
    }

    /// The server's socket.
    pub fn server_socket(&mut self) -> &mut tcp::Socket<'s> {
        self.sockets.get_mut::<tcp::Socket>(self.server)
    }
}

impl<D> core::fmt::Debug for Link<'_, D> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Link")
            .field("client", &self.client)
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

/// Let smoltcp move packets through `device` until a pass sends nothing (at
/// most 64 passes); returns whether any socket's state may have changed. The
/// one loop of every interface here (`Link`, `EthLink`, `Stack`).
///
/// Each pass takes every packet waiting in the device, then lets each socket
/// send. A pass whose sockets sent nothing ends it: what they would send next
/// depends only on what arrives, and whatever arrives now is the next turn's
/// (on a loopback device nothing can arrive that was not sent). So a data
/// segment and its ACK take three passes, where `Interface::poll` until
/// `PollResult::None` took a fourth over every socket to see there was
/// nothing left.
pub(crate) fn settle<D: Device + ?Sized>(
    iface: &mut Interface,
    device: &mut D,
    sockets: &mut SocketSet<'_>,
    now: Instant,
) -> bool {
    let mut changed = false;
    for _ in 0..64 {
        loop {
            match iface.poll_ingress_single(now, device, sockets) {
                PollIngressSingleResult::None => break,
                PollIngressSingleResult::PacketProcessed => {}
                PollIngressSingleResult::SocketStateChanged => changed = true,
            }
        }
        match iface.poll_egress(now, device, sockets) {
            PollResult::SocketStateChanged => changed = true,
            PollResult::None => break,
        }
    }
    changed
}

fn socket(bufs: TcpBuffers<'_>) -> tcp::Socket<'_> {
    let mut s = tcp::Socket::new(
        tcp::SocketBuffer::new(bufs.rx),
        tcp::SocketBuffer::new(bufs.tx),
    );
    s.set_nagle_enabled(false);
    s.set_ack_delay(None);
    s
}
