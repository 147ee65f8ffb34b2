//! [`Stack`]: many client connections (WebSocket and REST, plain and TLS) on
//! one smoltcp interface over one device, driven by one poll loop.
//!
//! Memory is handed in once: the socket storage and one [`Slot`] per
//! connection, each over an arena the caller sized ([`SlotSizes`]). A slot
//! runs one connection at a time; a reconnect runs the next one in the same
//! memory. The clock is the caller's `now` (a [`TscClock`](crate::clock::TscClock)
//! reading, say), the randomness the caller's seed.
//!
//! The loop:
//!
//! 1. [`poll`](Stack::poll)`(now)`: queued frames and requests go into their
//!    sockets (through TLS where it runs), smoltcp moves packets, received bytes
//!    go through TLS into each connection's reader, every connection's timers
//!    run (TCP connect and TLS handshake, the WebSocket handshake, keepalive,
//!    dead peer, close; REST request deadlines).
//! 2. [`next_event`](Stack::next_event): which connection opened, has a message
//!    or response ready ([`recv`](Stack::recv), [`response`](Stack::response)),
//!    or closed or failed (with its [`ConnError`]).
//! 3. Send with [`sender`](Stack::sender) / [`request`](Stack::request), then
//!    wait (busy-poll, or sleep until [`poll_at`](Stack::poll_at)).
//!
//! One connection's failure ends that connection alone; the caller decides
//! when to [`reconnect`](Stack::reconnect) it (its backoff), or
//! [`remove`](Stack::remove) it and [`connect`](Stack::connect) another.
//!
//! Allocation: none in the loop for plain connections. TLS: rustls allocates
//! while it runs the handshake (its state, the certificate chain); once the
//! codec's records mode runs (TLS 1.3 with `enable_secret_extraction`),
//! receiving allocates nothing, and with the `std` feature (which turns on the
//! codec's `ring`) neither does sending: records are sealed in place in the
//! slot's output buffer. Without `std` (bare metal) each record sent is sealed
//! by the crypto provider's `MessageEncrypter`, which returns it in a `Vec`
//! (one allocation per record sent, freed at once). See the README's table.

mod error;
mod slot;

use smoltcp::iface::{Config, Interface, SocketSet, SocketStorage};
use smoltcp::phy::Device;
use smoltcp::socket::tcp;
use smoltcp::wire::{HardwareAddress, IpCidr, Ipv4Address, Ipv4Cidr};
use tickwire_codec::http::{Action, BuildError, ClientError, Request, RequestWriter, RestResponse};
use tickwire_codec::rand::MaskRng;
use tickwire_codec::time::Instant;
#[cfg(feature = "tls")]
use tickwire_codec::tls::{Status, TlsError};
use tickwire_codec::ws::{CloseCode, ConnectionError, Message, State};

pub use error::{ConnError, SetupError};
pub use slot::{
    MAX_HOST, MAX_PATH, Options, Remote, Scheme, Slot, SlotSizes, WsConnection, WsSender,
};

use crate::clock::to_smoltcp;
use crate::lease::Lease;
use slot::{Phase, Proto};

/// Plaintext handed to TLS per record at most.
#[cfg(feature = "tls")]
const TLS_CHUNK: usize = tickwire_codec::tls::MAX_PLAINTEXT;
/// First local port for outgoing connections (the IANA dynamic range).
const FIRST_PORT: u16 = 49152;

/// A device the stack drives. `commit` publishes what the last poll queued
/// (a TX ring's doorbell, a send kick); called once at the end of every poll.
pub trait Nic: Device {
    /// Publish queued packets. Failures are the device's to count (TCP
    /// retransmits what was lost).
    fn commit(&mut self) {}
}

impl<B: AsRef<[u8]> + AsMut<[u8]>, const SLOTS: usize> Nic for crate::device::RingDevice<B, SLOTS> {}

/// A connection's id: its slot and which connection of the slot
/// (a reconnect makes a new id; calls with an old one get
/// [`ConnError::NoSuchConnection`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ConnId {
    slot: u16,
    generation: u32,
}

impl ConnId {
    /// The slot's index (stable across reconnects).
    pub fn slot(&self) -> usize {
        usize::from(self.slot)
    }
}

/// What happened on a connection (from [`Stack::next_event`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// Open: a WebSocket past its upgrade, a REST connection past TCP (and TLS).
    Connected,
    /// A message ([`Stack::recv`]) or a response ([`Stack::response`]) is ready.
    Readable,
    /// The connection closed cleanly: the close handshake, [`Stack::close`] on
    /// REST, a response that did not keep the connection, or the server ending an
    /// idle REST connection (its keep-alive timeout).
    Closed,
    /// The connection failed; it is over (reconnect or remove it).
    Failed(ConnError),
}

/// The interface's network settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NetConfig {
    /// The device's hardware address ([`HardwareAddress::Ip`] for an IP-medium device).
    pub hardware: HardwareAddress,
    /// Our IPv4 address and prefix.
    pub addr: Ipv4Cidr,
    /// The default gateway, for servers outside the prefix.
    pub gateway: Option<Ipv4Address>,
}

/// Many client connections on one smoltcp interface and one device.
pub struct Stack<'s, D> {
    iface: Interface,
    device: D,
    sockets: SocketSet<'s>,
    slots: &'s mut [Slot<'s>],
    rng: MaskRng,
    next_port: u16,
    /// Where `next_event` looks first (round robin: no slot starves the others).
    cursor: usize,
}

impl<D> core::fmt::Debug for Stack<'_, D> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Stack")
            .field("slots", &self.slots)
            .finish_non_exhaustive()
    }
}

impl<'s, D: Nic> Stack<'s, D> {
    /// Bring the interface up on `device` with `net`, and one TCP socket per
    /// slot (`sockets` must have at least as many entries as `slots`). `seed`
    /// feeds smoltcp's generator (initial sequence numbers) and the WebSocket
    /// masking keys and handshake nonces: take it from a real entropy source.
    pub fn new(
        mut device: D,
        net: NetConfig,
        sockets: &'s mut [SocketStorage<'s>],
        slots: &'s mut [Slot<'s>],
        seed: [u8; 32],
        now: Instant,
    ) -> Result<Self, SetupError> {
        if sockets.len() < slots.len() {
            return Err(SetupError::TooFewSockets);
        }
        let mut rng = MaskRng::from_seed(seed);
        let mut config = Config::new(net.hardware);
        config.random_seed = u64::from(rng.next_u32()) << 32 | u64::from(rng.next_u32());
        let mut iface = Interface::new(config, &mut device, to_smoltcp(now));
        iface.update_ip_addrs(|addrs| {
            // The list has room for at least one address and starts empty.
            let _ = addrs.push(IpCidr::Ipv4(net.addr));
        });
        if let Some(gw) = net.gateway {
            // The route table has room for at least one route and starts empty.
            let _ = iface.routes_mut().add_default_ipv4_route(gw);
        }
        let mut set = SocketSet::new(sockets);
        for slot in slots.iter_mut() {
            let Some((rx, tx)) = slot.tcp.take() else {
                continue;
            };
            let mut s = tcp::Socket::new(tcp::SocketBuffer::new(rx), tcp::SocketBuffer::new(tx));
            // A trading loop sends each message as soon as it is written.
            s.set_nagle_enabled(false);
            s.set_ack_delay(None);
            slot.socket = Some(set.add(s));
        }
        Ok(Stack {
            iface,
            device,
            sockets: set,
            slots,
            rng,
            next_port: FIRST_PORT
                .wrapping_add((seed[0] as u16) << 4)
                .max(FIRST_PORT),
            cursor: 0,
        })
    }

    /// The device.
    pub fn device(&self) -> &D {
        &self.device
    }

    /// The device, mutable (to wait on it, read its counters).
    pub fn device_mut(&mut self) -> &mut D {
        &mut self.device
    }

    /// The smoltcp interface (addresses, routes, neighbour cache).
    pub fn iface_mut(&mut self) -> &mut Interface {
        &mut self.iface
    }

    /// Slots in the stack.
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// Open a connection to `remote` with `options` in a free slot (one with
    /// TLS buffers for `wss://` and `https://`); the TCP connect goes out with
    /// the next [`poll`](Self::poll).
    pub fn connect(
        &mut self,
        remote: Remote,
        options: Options,
        now: Instant,
    ) -> Result<ConnId, SetupError> {
        let tls = remote.scheme().is_tls();
        let i = self
            .slots
            .iter()
            .position(|s| s.phase == Phase::Idle && s.socket.is_some() && (!tls || s.has_tls()))
            .ok_or(
                if tls && self.slots.iter().any(|s| s.phase == Phase::Idle) {
                    SetupError::SlotWithoutTls
                } else {
                    SetupError::NoFreeSlot
                },
            )?;
        let slot = &mut self.slots[i];
        slot.remote = Some(remote);
        slot.options = options;
        self.start(i, now)
    }

    /// Connect slot `i` again to the same remote with the same options: after
    /// a failure or close, at the time the caller's backoff says. Whatever is
    /// left of the previous connection is reset. The old id stops working.
    pub fn reconnect(&mut self, id: ConnId, now: Instant) -> Result<ConnId, SetupError> {
        let i = id.slot();
        if i >= self.slots.len() || self.slots[i].remote.is_none() {
            return Err(SetupError::BadRemote);
        }
        self.start(i, now)
    }

    /// End connection `id` at once (a TCP reset if it is still open) and free its slot.
    pub fn remove(&mut self, id: ConnId) -> Result<(), ConnError> {
        let i = self.index(id)?;
        if let Some(h) = self.slots[i].socket {
            self.sockets.get_mut::<tcp::Socket>(h).abort();
        }
        let slot = &mut self.slots[i];
        slot.clear();
        slot.remote = None;
        slot.phase = Phase::Idle;
        Ok(())
    }

    fn start(&mut self, i: usize, now: Instant) -> Result<ConnId, SetupError> {
        let mut seed = [0u8; 32];
        self.rng.fill_bytes(&mut seed);
        let port = self.free_port();
        let slot = &mut self.slots[i];
        let h = slot.socket.ok_or(SetupError::TooFewSockets)?;
        let sock = self.sockets.get_mut::<tcp::Socket>(h);
        sock.abort();
        if let Err(e) = slot.rebuild(now, MaskRng::from_seed(seed)) {
            slot.clear();
            slot.phase = Phase::Idle;
            return Err(e);
        }
        sock.set_ack_delay(
            slot.options
                .tcp_ack_delay
                .map(|d| smoltcp::time::Duration::from_micros(d.as_micros() as u64)),
        );
        let remote = slot.remote.as_ref().ok_or(SetupError::BadRemote)?;
        if sock
            .connect(self.iface.context(), (remote.addr(), remote.port()), port)
            .is_err()
        {
            slot.clear();
            slot.phase = Phase::Idle;
            return Err(SetupError::BadRemote);
        }
        Ok(ConnId {
            slot: i as u16,
            generation: slot.generation,
        })
    }

    /// A local port no socket of ours uses.
    fn free_port(&mut self) -> u16 {
        loop {
            let p = self.next_port;
            self.next_port = if p == u16::MAX { FIRST_PORT } else { p + 1 };
            let used = self.sockets.iter().any(|(_, s)| match s {
                smoltcp::socket::Socket::Tcp(t) => t.local_endpoint().is_some_and(|e| e.port == p),
                #[allow(unreachable_patterns)]
                _ => false,
            });
            if !used {
                return p;
            }
        }
    }

    fn index(&self, id: ConnId) -> Result<usize, ConnError> {
        let i = id.slot();
        match self.slots.get(i) {
            Some(s) if s.generation == id.generation && s.phase != Phase::Idle => Ok(i),
            _ => Err(ConnError::NoSuchConnection),
        }
    }

    /// The id of the connection slot `i` runs now, if any.
    pub fn id(&self, i: usize) -> Option<ConnId> {
        let s = self.slots.get(i)?;
        (s.phase != Phase::Idle).then_some(ConnId {
            slot: i as u16,
            generation: s.generation,
        })
    }

    /// Whether connection `id` is open (messages or requests flow).
    pub fn is_open(&self, id: ConnId) -> bool {
        self.index(id)
            .is_ok_and(|i| self.slots[i].phase == Phase::Open)
    }

    /// One turn of the loop at `now` (see the [module docs](self)). Returns
    /// whether smoltcp moved anything.
    pub fn poll(&mut self, now: Instant) -> bool {
        let t = to_smoltcp(now);
        for i in 0..self.slots.len() {
            self.drive_out(i);
        }
        let moved = self.move_packets(t);
        for i in 0..self.slots.len() {
            self.drive_in(i, now);
            self.drive_out(i);
        }
        self.move_packets(t) || moved
    }

    fn move_packets(&mut self, t: smoltcp::time::Instant) -> bool {
        let changed = crate::link::settle(&mut self.iface, &mut self.device, &mut self.sockets, t);
        self.device.commit();
        changed
    }

    /// When [`poll`](Self::poll) next has a timer to run (smoltcp's and every
    /// connection's); `None` when nothing is timed. An instant in the past means now.
    pub fn poll_at(&mut self, now: Instant) -> Option<Instant> {
        let mut at = self
            .iface
            .poll_at(to_smoltcp(now), &self.sockets)
            .map(|t| Instant::from_nanos(t.total_micros().max(0) as u64 * 1000));
        let mut earliest = |t: Option<Instant>| {
            if let Some(t) = t {
                at = Some(at.map_or(t, |a| a.min(t)));
            }
        };
        for s in self.slots.iter() {
            if s.phase == Phase::Connecting {
                earliest(s.connect_deadline);
            }
            match &s.proto {
                Some(Proto::Ws(c)) => earliest(c.poll_timeout()),
                Some(Proto::Rest(r)) => earliest(r.client.poll_timeout()),
                None => {}
            }
        }
        at
    }

    /// The next event of any connection (round robin over the slots), or `None`.
    pub fn next_event(&mut self) -> Option<(ConnId, Event)> {
        let n = self.slots.len();
        for k in 0..n {
            let i = (self.cursor + k) % n;
            let s = &mut self.slots[i];
            let id = ConnId {
                slot: i as u16,
                generation: s.generation,
            };
            let ev = if core::mem::take(&mut s.pending.connected) {
                Some(Event::Connected)
            } else if core::mem::take(&mut s.pending.readable) {
                Some(Event::Readable)
            } else {
                s.pending.closed.take().map(|r| match r {
                    Ok(()) => Event::Closed,
                    Err(e) => Event::Failed(e),
                })
            };
            if let Some(ev) = ev {
                self.cursor = (i + 1) % n;
                return Some((id, ev));
            }
        }
        None
    }

    // ---- WebSocket ----

    /// The sending half of WebSocket connection `id` (`send_text`,
    /// `send_binary`, `send_ping`, `close`); what it queues goes out with the
    /// next [`poll`](Self::poll).
    pub fn sender(&mut self, id: ConnId) -> Result<&mut WsSender<'s>, ConnError> {
        let i = self.index(id)?;
        match &mut self.slots[i].proto {
            Some(Proto::Ws(c)) => Ok(c.sender()),
            Some(Proto::Rest(_)) => Err(ConnError::WrongKind),
            None => Err(ConnError::NotOpen),
        }
    }

    /// The WebSocket connection itself (state, subprotocol, buffer sizes).
    pub fn ws(&mut self, id: ConnId) -> Result<&mut WsConnection<'s>, ConnError> {
        let i = self.index(id)?;
        match &mut self.slots[i].proto {
            Some(Proto::Ws(c)) => Ok(c),
            Some(Proto::Rest(_)) => Err(ConnError::WrongKind),
            None => Err(ConnError::NotOpen),
        }
    }

    /// The next message of WebSocket connection `id`, with its sending half to
    /// answer it; `Ok(None)` when no whole message is there. Pings were
    /// answered and a close echoed already. An error is final for that
    /// connection (its [`Event::Failed`] follows).
    #[allow(clippy::type_complexity)]
    pub fn recv(
        &mut self,
        id: ConnId,
    ) -> Result<Option<(Message<'_>, &mut WsSender<'s>)>, ConnError> {
        let i = self.index(id)?;
        if !matches!(self.slots[i].proto, Some(Proto::Ws(_))) {
            return Err(ConnError::WrongKind);
        }
        if !core::mem::take(&mut self.slots[i].ready) {
            self.pull(i);
            if !self.advance(i) {
                return match &self.slots[i].pending.closed {
                    Some(Err(e)) => Err(e.clone()),
                    _ => Ok(None),
                };
            }
            self.slots[i].ready = false;
        }
        self.slots[i].pending.readable = false;
        match &mut self.slots[i].proto {
            Some(Proto::Ws(c)) => Ok(c.message_with_sender()),
            _ => Ok(None),
        }
    }

    /// Close WebSocket connection `id` with `code` and `reason` (the close
    /// handshake, then TLS close_notify, then FIN), or REST connection `id`
    /// (close_notify, FIN). [`Event::Closed`] when it is over.
    pub fn close(&mut self, id: ConnId, code: CloseCode, reason: &str) -> Result<(), ConnError> {
        let i = self.index(id)?;
        match &mut self.slots[i].proto {
            Some(Proto::Ws(c)) => Ok(c.close(Some(code), reason)?),
            Some(Proto::Rest(r)) => {
                r.closing = true;
                Ok(())
            }
            None => Err(ConnError::NotOpen),
        }
    }

    // ---- REST ----

    /// Build a request on REST connection `id` with `build` (the codec's
    /// [`RequestWriter`]: method, path, query, headers, body) and put it on
    /// the connection whole, or nothing: [`ConnError::Backpressure`] when the
    /// socket (or TLS) cannot take it now. One request at a time: the
    /// response comes with an [`Event::Readable`]; its deadline is
    /// [`Options::request_timeout`] from `now`.
    pub fn request<F>(&mut self, id: ConnId, now: Instant, build: F) -> Result<(), ConnError>
    where
        F: for<'w> FnOnce(&'w mut RequestWriter<Lease<'s>>) -> Result<Request<'w>, BuildError>,
    {
        let i = self.index(id)?;
        let slot = &mut self.slots[i];
        if slot.phase != Phase::Open {
            return Err(ConnError::NotOpen);
        }
        let timeout = slot.options.request_timeout;
        let Some(h) = slot.socket else {
            return Err(ConnError::NotOpen);
        };
        let sock = self.sockets.get_mut::<tcp::Socket>(h);
        let Some(Proto::Rest(rest)) = &mut slot.proto else {
            return Err(ConnError::WrongKind);
        };
        if rest.in_flight || slot.ready {
            return Err(ConnError::Busy);
        }
        if rest.closing || !sock.may_send() {
            return Err(ConnError::NotOpen);
        }
        #[cfg(feature = "tls")]
        let tls_bytes = slot
            .tls
            .as_ref()
            .is_some_and(|t| t.codec.incoming_len() > 0);
        #[cfg(not(feature = "tls"))]
        let tls_bytes = false;
        let found = slot.eof || sock.can_recv() || tls_bytes;
        let req = build(&mut rest.writer)?;
        // Whole or nothing: the room is checked before the client starts the request.
        #[cfg(feature = "tls")]
        let room = match &slot.tls {
            // Each record adds at most 32 bytes; 256 more for the codec's reserve
            // (a KeyUpdate answer and close_notify).
            Some(t) => {
                t.out.capacity() - t.out.len() >= req.len() + 32 * (req.len() / TLS_CHUNK + 1) + 256
            }
            None => sock.send_capacity() - sock.send_queue() >= req.len(),
        };
        #[cfg(not(feature = "tls"))]
        let room = sock.send_capacity() - sock.send_queue() >= req.len();
        if !room {
            return Err(ConnError::Backpressure);
        }
        rest.client.start(&req, Some(timeout), now);
        let outcome = loop {
            match rest.client.poll(&mut rest.reader) {
                // The idle check: anything that arrived while idle, or the server's
                // end of stream, means a new connection (RFC 9112 §6.3).
                Ok(Action::Probe) => rest.client.handle_probe(found),
                Ok(Action::Close) => {
                    rest.closing = true;
                    rest.client.handle_closed();
                }
                // The request goes on a new connection: the caller's reconnect.
                Ok(Action::Connect) => break Err(ConnError::Stale),
                Ok(Action::Write) => {
                    let data = rest.client.transmit(&req);
                    #[cfg(feature = "tls")]
                    if let Some(tls) = &mut slot.tls {
                        if let Err(e) = tls.codec.encrypt(data, &mut tls.out) {
                            break Err(ConnError::Tls(e));
                        }
                        let n = sock.send_slice(tls.out.data()).unwrap_or(0);
                        tls.out.consume(n);
                        rest.client.handle_written(data.len());
                        continue;
                    }
                    // Room was checked: the socket takes it all.
                    let n = sock.send_slice(data).unwrap_or(0);
                    rest.client.handle_written(n);
                }
                Ok(Action::Read | Action::Done) => {
                    rest.in_flight = true;
                    break Ok(());
                }
                Err(e) => break Err(client_error(e)),
            }
        };
        if let Err(e) = &outcome {
            self.finish(i, Err(e.clone()));
        }
        outcome
    }

    /// The response on REST connection `id`, once it arrived whole (it
    /// borrows the slot's read buffer until the next call); `Ok(None)` until
    /// then. An error is final for that connection.
    pub fn response(&mut self, id: ConnId) -> Result<Option<RestResponse<'_>>, ConnError> {
        let i = self.index(id)?;
        if !matches!(self.slots[i].proto, Some(Proto::Rest(_))) {
            return Err(ConnError::WrongKind);
        }
        if !core::mem::take(&mut self.slots[i].ready) {
            self.pull(i);
            if !self.advance(i) {
                return match &self.slots[i].pending.closed {
                    Some(Err(e)) => Err(e.clone()),
                    _ => Ok(None),
                };
            }
            self.slots[i].ready = false;
        }
        self.slots[i].pending.readable = false;
        match &mut self.slots[i].proto {
            Some(Proto::Rest(r)) => {
                r.in_flight = false;
                Ok(r.reader.response())
            }
            _ => Ok(None),
        }
    }

    /// The TLS codec of connection `id` (version, cipher suite, ALPN, the
    /// peer's certificates, whether records mode runs); `None` for plain ones.
    #[cfg(feature = "tls")]
    pub fn tls(&self, id: ConnId) -> Option<&tickwire_codec::tls::TlsCodec<Lease<'s>>> {
        let i = self.index(id).ok()?;
        self.slots[i].tls.as_ref().map(|t| &t.codec)
    }

    // ---- driving ----

    /// End slot `i`'s connection with `outcome`: reported once; what the codecs
    /// queued (a close frame, an alert) still goes out, then FIN.
    fn finish(&mut self, i: usize, outcome: Result<(), ConnError>) {
        let slot = &mut self.slots[i];
        if slot.phase == Phase::Done || slot.phase == Phase::Idle {
            return;
        }
        slot.phase = Phase::Done;
        slot.pending.readable = slot.ready;
        slot.pending.closed = Some(outcome);
    }

    /// Queued bytes into the socket: frames or requests through TLS, TLS
    /// records (handshake, data, alerts, close_notify), and FIN when due.
    fn drive_out(&mut self, i: usize) {
        let slot = &mut self.slots[i];
        if slot.phase == Phase::Idle || slot.shut {
            return;
        }
        let Some(h) = slot.socket else { return };
        let sock = self.sockets.get_mut::<tcp::Socket>(h);
        if !sock.may_send() {
            return;
        }
        let mut done_sending = false;
        #[cfg(feature = "tls")]
        if let Some(tls) = &mut slot.tls {
            let mut error = None;
            if !tls.codec.is_handshaking() && tls.codec.error().is_none() {
                // Plaintext the protocol queued, as records.
                if let Some(Proto::Ws(c)) = &mut slot.proto {
                    loop {
                        let data = c.transmit();
                        if data.is_empty() || tls.codec.is_close_sent() {
                            break;
                        }
                        let chunk = &data[..data.len().min(TLS_CHUNK)];
                        match tls.codec.encrypt(chunk, &mut tls.out) {
                            Ok(()) => {
                                let n = chunk.len();
                                c.handle_written(n);
                            }
                            Err(TlsError::OutputFull { .. }) => {
                                let n = sock.send_slice(tls.out.data()).unwrap_or(0);
                                tls.out.consume(n);
                                if n == 0 {
                                    break;
                                }
                            }
                            Err(e) => {
                                error = Some(ConnError::Tls(e));
                                break;
                            }
                        }
                    }
                }
                let wants_end = match &slot.proto {
                    Some(Proto::Ws(c)) => c.wants_shutdown() && c.transmit().is_empty(),
                    Some(Proto::Rest(r)) => r.closing,
                    None => false,
                };
                if wants_end && !tls.codec.is_close_sent() {
                    match tls.codec.close(&mut tls.out) {
                        Ok(()) | Err(TlsError::OutputFull { .. }) => {}
                        Err(_) => {} // failed already: its alert is queued
                    }
                }
                // Our close_notify is out, or the peer's ended the TLS stream
                // first (nothing more may be sent then).
                done_sending = wants_end && (tls.codec.is_close_sent() || tls.codec.is_closed());
            }
            if tls.codec.has_pending_output() {
                tls.codec.drain_pending_output(&mut tls.out);
            }
            let n = sock.send_slice(tls.out.data()).unwrap_or(0);
            tls.out.consume(n);
            let failed = tls.codec.error().is_some() || slot.phase == Phase::Done;
            if tls.out.is_empty()
                && !tls.codec.has_pending_output()
                && (done_sending || (failed && slot.phase == Phase::Done))
            {
                sock.close();
                slot.shut = true;
                if let Some(Proto::Ws(c)) = &mut slot.proto {
                    c.handle_shutdown();
                }
            }
            if let Some(e) = error {
                self.finish(i, Err(e));
            }
            return;
        }
        match &mut slot.proto {
            Some(Proto::Ws(c)) => {
                let data = c.transmit();
                if !data.is_empty() {
                    let n = sock.send_slice(data).unwrap_or(0);
                    c.handle_written(n);
                }
                if c.wants_shutdown() && c.transmit().is_empty() {
                    done_sending = true;
                    c.handle_shutdown();
                }
            }
            Some(Proto::Rest(r)) => done_sending = r.closing,
            None => {}
        }
        if done_sending || (slot.phase == Phase::Done && !matches!(slot.proto, Some(Proto::Ws(_))))
        {
            sock.close();
            slot.shut = true;
        }
    }

    /// Move received bytes from the socket through TLS into the protocol's
    /// reader, unless a message made ready waits to be handed out (reading on
    /// would move it). Passes the end of the peer's stream on.
    fn pull(&mut self, i: usize) {
        let slot = &mut self.slots[i];
        let Some(h) = slot.socket else { return };
        if slot.ready || slot.proto.is_none() {
            return;
        }
        let sock = self.sockets.get_mut::<tcp::Socket>(h);
        let ended = !sock.can_recv()
            && matches!(
                sock.state(),
                tcp::State::CloseWait
                    | tcp::State::LastAck
                    | tcp::State::Closing
                    | tcp::State::TimeWait
            );
        #[allow(unused_mut)]
        let mut outcome: Option<Result<(), ConnError>> = None;
        #[cfg(feature = "tls")]
        if let Some(tls) = &mut slot.tls {
            while sock.can_recv() {
                let spare = tls.codec.incoming_mut();
                if spare.is_empty() {
                    break;
                }
                match sock.recv_slice(spare) {
                    Ok(n) if n > 0 => tls.codec.commit_incoming(n),
                    _ => break,
                }
            }
            if ended && !slot.tls_eof {
                slot.tls_eof = true;
                tls.codec.handle_eof();
            }
            if tls.codec.is_handshaking() {
                match tls.codec.handshake(&mut tls.out) {
                    Ok(_) => {}
                    Err(e) => outcome = Some(Err(ConnError::Tls(e))),
                }
            }
            if outcome.is_none() && !tls.codec.is_handshaking() {
                loop {
                    let plain = match &mut slot.proto {
                        Some(Proto::Ws(c)) => c.read_buf(),
                        Some(Proto::Rest(r)) => r.reader.spare_mut(),
                        None => break,
                    };
                    if plain.is_empty() {
                        break;
                    }
                    match tls.codec.read(plain, &mut tls.out) {
                        Ok(Status::Data(n)) => match &mut slot.proto {
                            Some(Proto::Ws(c)) => c.handle_read(n),
                            Some(Proto::Rest(r)) => {
                                r.client.handle_read(&mut r.reader, n);
                                // Reading on would drop the response just completed.
                                if r.reader.response().is_some() {
                                    break;
                                }
                            }
                            None => break,
                        },
                        Ok(Status::PeerClosed) => {
                            if !slot.eof {
                                slot.eof = true;
                                peer_ended(&mut slot.proto);
                            }
                            break;
                        }
                        Ok(_) => break,
                        // A WebSocket frames its own end: a stream cut without
                        // close_notify is judged by the connection (clean after the
                        // close handshake, ConnectionLost before it) once every frame
                        // before it was read. REST keeps it an error: a body delimited
                        // by the close could be truncated.
                        Err(TlsError::UnexpectedEof)
                            if matches!(slot.proto, Some(Proto::Ws(_))) =>
                        {
                            if !slot.eof {
                                slot.eof = true;
                                peer_ended(&mut slot.proto);
                            }
                            break;
                        }
                        Err(e) => {
                            outcome = Some(Err(ConnError::Tls(e)));
                            break;
                        }
                    }
                }
            }
            if let Some(o) = outcome {
                self.finish_after(i, o);
            }
            return;
        }
        while sock.can_recv() {
            let spare = match &mut slot.proto {
                Some(Proto::Ws(c)) => c.read_buf(),
                Some(Proto::Rest(r)) => r.reader.spare_mut(),
                None => break,
            };
            if spare.is_empty() {
                break;
            }
            match sock.recv_slice(spare) {
                Ok(n) if n > 0 => match &mut slot.proto {
                    Some(Proto::Ws(c)) => c.handle_read(n),
                    Some(Proto::Rest(r)) => {
                        r.client.handle_read(&mut r.reader, n);
                        // Reading on would drop the response just completed.
                        if r.reader.response().is_some() {
                            break;
                        }
                    }
                    None => break,
                },
                _ => break,
            }
        }
        if ended && !sock.can_recv() && !slot.eof {
            slot.eof = true;
            peer_ended(&mut slot.proto);
        }
        if let Some(o) = outcome {
            self.finish_after(i, o);
        }
    }

    /// A failure found while reading: reported after whatever was read before it
    /// (an error comes after the messages that preceded it).
    fn finish_after(&mut self, i: usize, outcome: Result<(), ConnError>) {
        // For a WebSocket the end of the stream is handled by the codec
        // (`handle_eof`), whose verdict is already `outcome`.
        self.finish(i, outcome);
    }

    /// Make the next message or response ready; `true` when one is.
    fn advance(&mut self, i: usize) -> bool {
        let slot = &mut self.slots[i];
        if slot.ready {
            return true;
        }
        let r = match &mut slot.proto {
            Some(Proto::Ws(c)) => {
                let was = c.state();
                let r = c.advance().map_err(ConnError::Ws);
                if was == State::Handshake
                    && c.state() == State::Open
                    && slot.phase == Phase::Connecting
                {
                    slot.phase = Phase::Open;
                    slot.pending.connected = true;
                }
                r
            }
            Some(Proto::Rest(rest)) => loop {
                match rest.client.poll(&mut rest.reader) {
                    Ok(Action::Done) => break Ok(rest.in_flight),
                    // A response that does not keep the connection: it ends after it
                    // (close_notify, FIN), and `Event::Closed` follows.
                    Ok(Action::Close) => {
                        rest.closing = true;
                        rest.client.handle_closed();
                    }
                    // Retry on a new connection (the codec judged it safe).
                    Ok(Action::Connect) if rest.in_flight => break Err(ConnError::Stale),
                    Ok(_) => break Ok(false),
                    Err(e) if rest.in_flight => break Err(client_error(e)),
                    Err(_) => break Ok(false),
                }
            },
            None => Ok(false),
        };
        match r {
            Ok(true) => {
                slot.ready = true;
                slot.pending.readable = true;
                true
            }
            Ok(false) => false,
            Err(ConnError::Ws(ConnectionError::AlreadyClosed)) => false,
            Err(e) => {
                self.finish(i, Err(e));
                false
            }
        }
    }

    /// Everything that arrived and every timer of slot `i`.
    fn drive_in(&mut self, i: usize, now: Instant) {
        let phase = self.slots[i].phase;
        if phase == Phase::Idle {
            return;
        }
        let Some(h) = self.slots[i].socket else {
            return;
        };
        let state = self.sockets.get_mut::<tcp::Socket>(h).state();
        let slot = &mut self.slots[i];
        if !matches!(
            state,
            tcp::State::Closed | tcp::State::SynSent | tcp::State::Listen
        ) {
            slot.established = true;
        }
        if phase == Phase::Done {
            // Only the close is left: its timer, and what arrives (a close echo).
            if let Some(Proto::Ws(c)) = &mut slot.proto {
                let _ = c.handle_timeout(now);
            }
            self.pull(i);
            if !self.slots[i].ready {
                self.advance(i);
            }
            return;
        }
        self.pull(i);
        if self.slots[i].phase == Phase::Done {
            return;
        }
        let slot = &mut self.slots[i];
        // A REST connection opens with TCP (and TLS).
        if slot.phase == Phase::Connecting && matches!(slot.proto, Some(Proto::Rest(_))) {
            #[cfg(feature = "tls")]
            let tls_done = slot.tls.as_ref().is_none_or(|t| !t.codec.is_handshaking());
            #[cfg(not(feature = "tls"))]
            let tls_done = true;
            if state == tcp::State::Established
                && tls_done
                && let Some(Proto::Rest(r)) = &mut slot.proto
            {
                r.client.handle_connected(now);
                slot.phase = Phase::Open;
                slot.pending.connected = true;
            }
        }
        // Timers.
        let mut failed = None;
        match &mut slot.proto {
            Some(Proto::Ws(c)) => {
                if let Err(e) = c.handle_timeout(now) {
                    failed = Some(ConnError::Ws(e));
                }
            }
            // Deadlines and read/write timeouts fail through the client's `poll`.
            Some(Proto::Rest(r)) => r.client.handle_timeout(now),
            _ => {}
        }
        if failed.is_none()
            && slot.phase == Phase::Connecting
            && slot.connect_deadline.is_some_and(|d| now >= d)
            && !matches!(slot.proto, Some(Proto::Ws(_)))
        {
            failed = Some(ConnError::ConnectTimeout);
        }
        if failed.is_none() && state == tcp::State::Closed && !slot.shut {
            failed = Some(if slot.established {
                ConnError::Reset
            } else {
                ConnError::Refused
            });
        }
        if let Some(e) = failed {
            let hard = matches!(
                e,
                ConnError::Reset
                    | ConnError::Refused
                    | ConnError::ConnectTimeout
                    | ConnError::RequestTimeout
            );
            self.finish(i, Err(e));
            if hard {
                self.sockets.get_mut::<tcp::Socket>(h).abort();
                self.slots[i].shut = true;
            }
            return;
        }
        self.advance(i);
        // The peer ended its stream and every message before the end was handed out.
        let slot = &mut self.slots[i];
        if slot.eof && !slot.ready && slot.phase != Phase::Done {
            let outcome = match &mut slot.proto {
                Some(Proto::Ws(c)) => Some(c.handle_eof().map_err(ConnError::Ws)),
                // With nothing in flight (a response in flight is ended by its reader).
                // An idle connection the server ended (its keep-alive timeout, or
                // after a response that did not keep it): a clean end.
                Some(Proto::Rest(r)) if !r.in_flight => Some(Ok(())),
                _ => None,
            };
            if let Some(outcome) = outcome {
                self.finish(i, outcome);
                return;
            }
        }
        // A WebSocket whose close handshake is over.
        let slot = &mut self.slots[i];
        if let Some(Proto::Ws(c)) = &slot.proto
            && c.state() == State::Closed
            && slot.phase != Phase::Done
        {
            self.finish(i, Ok(()));
        }
        // A REST connection the application closed, once our FIN is out.
        let slot = &mut self.slots[i];
        if let Some(Proto::Rest(r)) = &slot.proto
            && r.closing
            && slot.shut
        {
            self.finish(i, Ok(()));
        }
    }
}

/// The codec's REST client error as the stack's.
fn client_error(e: ClientError) -> ConnError {
    match e {
        ClientError::Http(e) => ConnError::Http(e),
        ClientError::ConnectionLost => ConnError::ConnectionLost,
        ClientError::RequestTimeout => ConnError::RequestTimeout,
        e => ConnError::Client(e),
    }
}

/// The peer's stream ended (FIN, or TLS close_notify). A REST reader is told
/// at once (a close-delimited body ends there); the verdict (clean or
/// [`ConnError::ConnectionLost`]) waits until every message before the end
/// was handed out (`drive_in`).
fn peer_ended(proto: &mut Option<Proto<'_>>) {
    if let Some(Proto::Rest(r)) = proto {
        r.client.handle_eof(&mut r.reader);
    }
}

#[cfg(all(feature = "dpdk", target_os = "linux"))]
impl Nic for crate::dpdk::DpdkDevice {
    /// One `rte_eth_tx_burst` of what the poll queued.
    fn commit(&mut self) {
        crate::dpdk::DpdkDevice::commit(self);
    }
}

#[cfg(feature = "af-xdp")]
impl Nic for crate::xdp::XdpDevice<'_> {
    fn commit(&mut self) {
        // A failed kick leaves the frames queued for the next one; TCP
        // retransmits anything lost.
        let _ = crate::xdp::XdpDevice::commit(self);
    }
}
