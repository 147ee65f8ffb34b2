//! A connection slot: the memory one connection runs in (handed in once, cut
//! by [`SlotSizes`]), where it connects to ([`Remote`]), its settings
//! ([`Options`]), and the connection itself while it runs.

use core::time::Duration;

use smoltcp::iface::SocketHandle;
use smoltcp::wire::Ipv4Address;
#[cfg(feature = "tls")]
use tickwire_codec::buf::WriteBuf;
use tickwire_codec::http::{ClientConnection, ClientSettings, RequestWriter, ResponseReader};
use tickwire_codec::rand::MaskRng;
use tickwire_codec::time::Instant;
#[cfg(feature = "tls")]
use tickwire_codec::tls::TlsCodec;
use tickwire_codec::ws::{Connection, Settings};

use super::error::{ConnError, SetupError};
use crate::lease::{Lease, Region};

/// Longest host name a slot keeps (DNS's limit).
pub const MAX_HOST: usize = 253;
/// Longest WebSocket path (with its query) or REST base path a slot keeps.
pub const MAX_PATH: usize = 1024;

/// Least TCP buffer (each way): a few full segments.
const MIN_TCP: usize = 4096;
/// Least read and write buffer: a handshake head.
const MIN_APP: usize = 1024;
/// Least TLS buffer (each way): one whole record and its overhead; the incoming one
/// also holds the server's certificate chain during the handshake (32 KiB is safe).
#[cfg(feature = "tls")]
const MIN_TLS: usize = tickwire_codec::tls::MAX_RECORD + 256;
#[cfg(not(feature = "tls"))]
const MIN_TLS: usize = 0;

/// How a slot's arena is cut. A connection costs [`arena_len`](Self::arena_len)
/// bytes of arena plus `size_of::<Slot>()`; a TLS connection also has what
/// rustls allocates for its handshake state (see the README).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlotSizes {
    /// Each TCP buffer (receive window; send queue), in bytes.
    pub tcp: usize,
    /// The read buffer: a WebSocket frame reader (the largest message plus
    /// [`READER_OVERHEAD`](tickwire_codec::ws::reader::READER_OVERHEAD)) or a
    /// REST response reader (the largest response).
    pub read: usize,
    /// The write buffer: WebSocket frames waiting to be sent (the largest message
    /// and its header, plus 139 bytes kept for a pong or a close) or a REST
    /// request being built (the largest request).
    pub write: usize,
    /// Each TLS buffer (ciphertext in; ciphertext out); 0 for a plain-only slot.
    /// At least one record (about 18.7 KiB); 32 KiB holds any usual certificate chain.
    pub tls: usize,
}

impl SlotSizes {
    /// Sizes for a plain (`ws://`, `http://`) connection.
    pub const fn plain(tcp: usize, read: usize, write: usize) -> Self {
        SlotSizes {
            tcp,
            read,
            write,
            tls: 0,
        }
    }

    /// Sizes for a connection of either kind, TLS or not (32 KiB TLS buffers).
    pub const fn with_tls(tcp: usize, read: usize, write: usize) -> Self {
        SlotSizes {
            tcp,
            read,
            write,
            tls: 32 * 1024,
        }
    }

    /// The arena bytes these sizes take.
    pub const fn arena_len(&self) -> usize {
        2 * self.tcp + self.read + self.write + 2 * self.tls
    }

    fn check(&self) -> Result<(), SetupError> {
        let small = |which, got: usize, min| {
            if got < min {
                Err(SetupError::BufferTooSmall { which, min })
            } else {
                Ok(())
            }
        };
        small("tcp", self.tcp, MIN_TCP)?;
        small("read", self.read, MIN_APP)?;
        small("write", self.write, MIN_APP)?;
        if self.tls != 0 {
            small("tls", self.tls, MIN_TLS.max(1))?;
        }
        Ok(())
    }
}

/// What a connection speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// WebSocket over TCP.
    Ws,
    /// WebSocket over TLS.
    Wss,
    /// HTTP/1.1 (REST) over TCP.
    Http,
    /// HTTP/1.1 (REST) over TLS.
    Https,
}

impl Scheme {
    /// Whether the connection runs TLS.
    pub fn is_tls(self) -> bool {
        matches!(self, Scheme::Wss | Scheme::Https)
    }

    /// Whether the connection is a WebSocket (else REST).
    pub fn is_ws(self) -> bool {
        matches!(self, Scheme::Ws | Scheme::Wss)
    }

    fn default_port(self) -> u16 {
        if self.is_tls() { 443 } else { 80 }
    }
}

/// Where a connection goes: the name (for the Host header, SNI and the
/// certificate check, the WebSocket handshake), the address it was resolved to
/// before the loop ([`resolve`](crate::resolve::resolve)), the port and the path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remote {
    scheme: Scheme,
    host: heapless::String<MAX_HOST>,
    addr: Ipv4Address,
    port: u16,
    path: heapless::String<MAX_PATH>,
}

impl Remote {
    /// `scheme://host:port/path` at `addr`. For REST, `path` is the base path
    /// every request's path is appended to (`""` for none); for a WebSocket,
    /// the request target (with its query).
    pub fn new(
        scheme: Scheme,
        host: &str,
        addr: Ipv4Address,
        port: u16,
        path: &str,
    ) -> Result<Self, SetupError> {
        let mut h = heapless::String::new();
        let mut p = heapless::String::new();
        if host.is_empty() || h.push_str(host).is_err() || p.push_str(path).is_err() {
            return Err(SetupError::BadRemote);
        }
        if scheme.is_ws() && p.is_empty() {
            p.push('/').map_err(|_| SetupError::BadRemote)?;
        }
        Ok(Remote {
            scheme,
            host: h,
            addr,
            port,
            path: p,
        })
    }

    /// The scheme.
    pub fn scheme(&self) -> Scheme {
        self.scheme
    }

    /// The host name.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The address the name was resolved to.
    pub fn addr(&self) -> Ipv4Address {
        self.addr
    }

    /// The port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The path.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The Host header's value: the name, with the port unless it is the scheme's default.
    pub(crate) fn host_header(&self) -> heapless::String<{ MAX_HOST + 6 }> {
        let mut s = heapless::String::new();
        // The name fits (MAX_HOST), and ":65535" the 6 bytes after it.
        let _ = s.push_str(&self.host);
        if self.port != self.scheme.default_port() {
            let _ = core::fmt::write(&mut s, format_args!(":{}", self.port));
        }
        s
    }
}

/// A connection's settings, kept for its reconnects.
#[derive(Debug, Clone)]
pub struct Options {
    /// The WebSocket connection's settings (limits, handshake, close, keepalive
    /// and dead-peer timeouts); unused by REST.
    pub ws: Settings,
    /// Time allowed for TCP's connect and the TLS handshake (REST; a WebSocket
    /// counts its whole opening in `ws.handshake_timeout` too). Default 10 s.
    pub connect_timeout: Duration,
    /// Time a REST request has as a whole (the codec's whole-request deadline).
    /// Default 10 s.
    pub request_timeout: Duration,
    /// The REST client's settings: read and write timeouts, the idle check before
    /// a reuse (the codec's [`ClientSettings`]).
    pub rest: ClientSettings,
    /// How long TCP may hold back an ACK for data received (`None`, the default:
    /// acknowledge at once). A request/response loop gains from a delay: the ACK
    /// rides on the next message instead of costing a packet (and, over AF_XDP in
    /// copy mode, a `sendto` kick) of its own.
    pub tcp_ack_delay: Option<Duration>,
    /// TLS settings for `wss://` and `https://`: a rustls client config (its
    /// crypto provider, the roots or the caller's CA; set
    /// `enable_secret_extraction` for the codec's allocation-free records mode).
    #[cfg(feature = "tls")]
    pub tls: Option<alloc::sync::Arc<tickwire_codec::tls::rustls::ClientConfig>>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            ws: Settings::default(),
            connect_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(10),
            rest: ClientSettings::default(),
            tcp_ack_delay: None,
            #[cfg(feature = "tls")]
            tls: None,
        }
    }
}

/// A WebSocket client connection in a slot.
pub type WsConnection<'s> = Connection<Lease<'s>, Lease<'s>, MaskRng>;
/// The sending half of a slot's WebSocket connection.
pub type WsSender<'s> = tickwire_codec::ws::Sender<Lease<'s>, MaskRng>;

/// A REST connection: one request at a time on a keep-alive connection, every
/// HTTP/1.1 client rule (pairing, reuse, the idle check, retries, the request
/// deadline and read/write timeouts) the codec's [`ClientConnection`]'s.
#[derive(Debug)]
pub(crate) struct RestConn<'s> {
    pub(crate) writer: RequestWriter<Lease<'s>>,
    pub(crate) reader: ResponseReader<Lease<'s>>,
    pub(crate) client: ClientConnection,
    /// A request was sent and its response not yet handed out.
    pub(crate) in_flight: bool,
    /// The connection is to end (the application asked, or the client decided).
    pub(crate) closing: bool,
}

/// What runs on the connection (kept inline, not boxed: a slot holds one or
/// the other, and the no-alloc core has no box).
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub(crate) enum Proto<'s> {
    Ws(WsConnection<'s>),
    Rest(RestConn<'s>),
}

/// TLS under the protocol: the codec and its ciphertext out-buffer.
#[cfg(feature = "tls")]
#[derive(Debug)]
pub(crate) struct Tls<'s> {
    pub(crate) codec: TlsCodec<Lease<'s>>,
    pub(crate) out: WriteBuf<Lease<'s>>,
}

/// Where a slot's connection stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// No connection (never used, or removed).
    Idle,
    /// TCP, TLS and the WebSocket upgrade under way.
    Connecting,
    /// Messages or requests flow.
    Open,
    /// Over: closed cleanly or failed; what the codecs still queued (a close frame,
    /// an alert) is written, then the TCP connection is closed.
    Done,
}

/// Events waiting to be reported for a slot.
#[derive(Debug, Default)]
pub(crate) struct Pending {
    pub(crate) connected: bool,
    pub(crate) readable: bool,
    pub(crate) closed: Option<Result<(), ConnError>>,
}

/// One connection's memory and state. Make them with [`Slot::new`], hand them
/// to [`Stack::new`](super::Stack::new); a slot runs one connection at a time,
/// and its next one (a reconnect) reuses the same memory.
pub struct Slot<'s> {
    pub(crate) tcp: Option<(&'s mut [u8], &'s mut [u8])>,
    pub(crate) socket: Option<SocketHandle>,
    read: Region<'s>,
    write: Region<'s>,
    #[cfg_attr(not(feature = "tls"), allow(dead_code))]
    tls_in: Region<'s>,
    #[cfg_attr(not(feature = "tls"), allow(dead_code))]
    tls_out: Region<'s>,
    pub(crate) remote: Option<Remote>,
    pub(crate) options: Options,
    pub(crate) proto: Option<Proto<'s>>,
    #[cfg(feature = "tls")]
    pub(crate) tls: Option<Tls<'s>>,
    pub(crate) phase: Phase,
    pub(crate) pending: Pending,
    /// A message or response was made ready and not handed out yet.
    pub(crate) ready: bool,
    /// TCP reached ESTABLISHED in this attempt.
    pub(crate) established: bool,
    /// The peer ended its stream (FIN; on TLS, close_notify).
    pub(crate) eof: bool,
    /// TLS: the TCP stream's end was passed to the codec.
    pub(crate) tls_eof: bool,
    /// Our FIN was asked for.
    pub(crate) shut: bool,
    pub(crate) connect_deadline: Option<Instant>,
    /// Incremented by every (re)connect: an id names one attempt.
    pub(crate) generation: u32,
}

impl core::fmt::Debug for Slot<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Slot")
            .field("remote", &self.remote)
            .field("phase", &self.phase)
            .field("established", &self.established)
            .field("eof", &self.eof)
            .field("shut", &self.shut)
            .field("ready", &self.ready)
            .field("pending", &self.pending)
            .field("generation", &self.generation)
            .field("read", &self.read.len())
            .field("write", &self.write.len())
            .field("tls", &self.tls_in.len())
            .finish_non_exhaustive()
    }
}

/// Take `n` bytes off the front of `rest`.
fn take<'s>(rest: &mut &'s mut [u8], n: usize) -> &'s mut [u8] {
    let (head, tail) = core::mem::take(rest).split_at_mut(n);
    *rest = tail;
    head
}

impl<'s> Slot<'s> {
    /// A slot over `arena`, cut by `sizes` (see [`SlotSizes::arena_len`]).
    pub fn new(arena: &'s mut [u8], sizes: SlotSizes) -> Result<Self, SetupError> {
        sizes.check()?;
        if arena.len() < sizes.arena_len() {
            return Err(SetupError::ArenaTooSmall {
                need: sizes.arena_len(),
                got: arena.len(),
            });
        }
        let mut rest = arena;
        let rx = take(&mut rest, sizes.tcp);
        let tx = take(&mut rest, sizes.tcp);
        Ok(Slot {
            tcp: Some((rx, tx)),
            socket: None,
            read: Region::new(take(&mut rest, sizes.read)),
            write: Region::new(take(&mut rest, sizes.write)),
            tls_in: Region::new(take(&mut rest, sizes.tls)),
            tls_out: Region::new(take(&mut rest, sizes.tls)),
            remote: None,
            options: Options::default(),
            proto: None,
            #[cfg(feature = "tls")]
            tls: None,
            phase: Phase::Idle,
            pending: Pending::default(),
            ready: false,
            established: false,
            eof: false,
            tls_eof: false,
            shut: false,
            connect_deadline: None,
            generation: 0,
        })
    }

    /// Whether the slot can run TLS connections.
    pub fn has_tls(&self) -> bool {
        self.tls_in.len() != 0
    }

    /// Drop the connection (and every lease it holds).
    pub(crate) fn clear(&mut self) {
        self.proto = None;
        #[cfg(feature = "tls")]
        {
            self.tls = None;
        }
        self.pending = Pending::default();
        self.ready = false;
        self.established = false;
        self.eof = false;
        self.tls_eof = false;
        self.shut = false;
        self.connect_deadline = None;
    }

    /// Build the connection for `self.remote` at `now`, on fresh leases of the
    /// slot's regions. `mask` gives the WebSocket masking keys and handshake nonce.
    #[allow(unsafe_code)]
    pub(crate) fn rebuild(&mut self, now: Instant, mut mask: MaskRng) -> Result<(), SetupError> {
        // The one place leases are made: the connection holding the previous
        // ones is dropped first.
        self.clear();
        let remote = self.remote.as_ref().ok_or(SetupError::BadRemote)?;
        let host = remote.host_header();
        // SAFETY: `clear` dropped the connection (and TLS codec) holding the
        // previous leases of these regions; nothing else holds one.
        let (read, write) = unsafe { (self.read.lease(), self.write.lease()) };
        let proto = if remote.scheme.is_ws() {
            let mut key = [0u8; 16];
            mask.fill_bytes(&mut key);
            let hs = tickwire_codec::ws::handshake::ClientHandshake::new(&host, &remote.path, key);
            let conn = Connection::client(&hs, read, write, mask, &self.options.ws, now).map_err(
                |_| SetupError::BufferTooSmall {
                    which: "write",
                    min: MIN_APP,
                },
            )?;
            Proto::Ws(conn)
        } else {
            let mut writer =
                RequestWriter::new(write, &host).map_err(|_| SetupError::BufferTooSmall {
                    which: "write",
                    min: MIN_APP,
                })?;
            if !remote.path.is_empty() {
                writer
                    .set_base_path(&remote.path)
                    .map_err(|_| SetupError::BadRemote)?;
            }
            Proto::Rest(RestConn {
                writer,
                reader: ResponseReader::new(read),
                client: ClientConnection::new(self.options.rest),
                in_flight: false,
                closing: false,
            })
        };
        if remote.scheme.is_tls() {
            #[cfg(feature = "tls")]
            {
                if !self.has_tls() {
                    return Err(SetupError::SlotWithoutTls);
                }
                let config = self.options.tls.clone().ok_or(SetupError::NoTls)?;
                let name = tickwire_codec::tls::rustls::pki_types::ServerName::try_from(
                    alloc::string::String::from(remote.host()),
                )
                .map_err(|_| SetupError::BadRemote)?;
                // SAFETY: as above: no lease of the TLS regions is alive.
                let (tin, tout) = unsafe { (self.tls_in.lease(), self.tls_out.lease()) };
                let codec = TlsCodec::client(config, name, tin).map_err(|_| SetupError::NoTls)?;
                self.tls = Some(Tls {
                    codec,
                    out: WriteBuf::new(tout),
                });
            }
            #[cfg(not(feature = "tls"))]
            return Err(SetupError::NoTls);
        }
        self.proto = Some(proto);
        self.connect_deadline = Some(now.saturating_add(self.options.connect_timeout));
        self.phase = Phase::Connecting;
        self.generation = self.generation.wrapping_add(1);
        Ok(())
    }
}
