//! [`TlsCodec`]: one TLS connection, client or server, over rustls's unbuffered API.
//!
//! Ciphertext from the network goes into the codec's incoming buffer (caller storage,
//! [`incoming_mut`](TlsCodec::incoming_mut) + [`commit_incoming`](TlsCodec::commit_incoming));
//! [`read`](TlsCodec::read) writes the plaintext into a slice the caller gives (the free
//! space of a FrameReader or ResponseReader); [`encrypt`](TlsCodec::encrypt) writes records
//! into the caller's [`WriteBuf`]. Every call tells the caller what to do next with a
//! [`Status`], like rustls's own `ConnectionState`, and after every call the caller sends
//! whatever the output buffer holds.

use alloc::sync::Arc;
use alloc::vec::Vec;

use rustls::client::UnbufferedClientConnection;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::server::UnbufferedServerConnection;
use rustls::unbuffered::{
    ConnectionState, EncodeError, EncodeTlsData, EncryptError, InsufficientSizeError,
    UnbufferedStatus, WriteTraffic,
};
use rustls::{ClientConfig, ProtocolVersion, ServerConfig, SupportedCipherSuite};

use super::error::TlsError;
use crate::buf::{ReadBuf, WriteBuf};

#[path = "records.rs"]
mod records;
use records::{Kernel, ReadEnd, Records};

/// Largest plaintext in one record (RFC 8446 §5.1).
pub const MAX_PLAINTEXT: usize = 16 * 1024;
/// Largest record on the wire: header, plaintext and the TLS 1.2 expansion allowance.
pub const MAX_RECORD: usize = 5 + MAX_PLAINTEXT + 2048;
/// Ciphertext bytes a record adds to its plaintext, rounded up over the suites rustls
/// offers (TLS 1.3: 5 header + 1 type + 16 tag; TLS 1.2 GCM: 5 + 8 nonce + 16 tag).
const RECORD_OVERHEAD: usize = 32;
/// Room for one encrypted alert record (TLS 1.2 GCM, the largest: 5 + 8 + 2 + 16).
const ALERT_ROOM: usize = 64;

/// What the caller must do after [`TlsCodec::handshake`] or [`TlsCodec::read`]. In every
/// case, first send what the output buffer holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// `read` wrote this many plaintext bytes at the start of the caller's slice
    /// (never 0). Call again: more may be decrypted already.
    Data(usize),
    /// Read more ciphertext from the network into
    /// [`incoming_mut`](TlsCodec::incoming_mut), then call again.
    NeedMore,
    /// `handshake`: the handshake is complete; application data can flow.
    Ready,
    /// The peer sent close_notify and every byte before it was delivered: no more data
    /// will come. We may still send, then [`close`](TlsCodec::close).
    PeerClosed,
}

/// What a call wants from the rustls state machine.
#[derive(Clone, Copy)]
enum Want<'a> {
    Handshake,
    Read,
    Encrypt(&'a [u8]),
    Close,
}

/// The outcome of one `process_tls_records` round once its state was handled.
enum Step {
    /// Handled; ask rustls again.
    Again,
    /// No complete record and the handshake is not done: more ciphertext is needed.
    Blocked,
    /// Handshake done, no complete record left (the `Want` was done if it wanted a write).
    Idle,
    /// As `Idle`, for a read or handshake call that found rustls in its `WriteTraffic`
    /// state: nothing buffered in rustls, the moment records mode may take over.
    Writable,
    /// The peer's close_notify (edge).
    PeerClosed,
    /// Both sides sent close_notify.
    Closed,
}

/// Plaintext rustls handed over when the caller's slice had no room left; delivered
/// first by the next `read`.
#[derive(Debug, Default)]
struct Spill {
    buf: Vec<u8>,
    pos: usize,
}

impl Spill {
    fn is_empty(&self) -> bool {
        self.pos == self.buf.len()
    }

    /// Copy what fits into `dst`; returns the count.
    fn take(&mut self, dst: &mut [u8]) -> usize {
        let n = dst.len().min(self.buf.len() - self.pos);
        dst[..n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
        self.pos += n;
        if self.is_empty() {
            self.buf.clear();
            self.pos = 0;
        }
        n
    }
}

/// No complete record is left (either record layer): the plaintext delivered so far,
/// or, with none, `Ok(0)` (more ciphertext needed) unless the stream is over
/// ([`TlsError::UnexpectedEof`] before close_notify) or the incoming buffer is full
/// without a whole record ([`TlsError::IncomingFull`]); both errors are sticky (kept
/// in `failed`).
fn no_complete_record(
    peer_closed: bool,
    eof: bool,
    incoming_full: bool,
    failed: &mut Option<TlsError>,
    filled: usize,
) -> Result<usize, TlsError> {
    if peer_closed || filled > 0 {
        return Ok(filled);
    }
    let e = if eof {
        TlsError::UnexpectedEof
    } else if incoming_full {
        TlsError::IncomingFull
    } else {
        return Ok(0);
    };
    *failed = Some(e.clone());
    Err(e)
}

/// Where the plaintext of one call goes: the caller's slice, then the spill.
struct Sink<'a> {
    plain: &'a mut [u8],
    filled: usize,
    spill: &'a mut Spill,
}

impl Sink<'_> {
    fn deliver(&mut self, payload: &[u8]) {
        let room = &mut self.plain[self.filled..];
        let n = room.len().min(payload.len());
        room[..n].copy_from_slice(&payload[..n]);
        self.filled += n;
        // Only when the caller's slice is full, or while handshaking / writing (no
        // slice): at most what the incoming buffer held.
        self.spill.buf.extend_from_slice(&payload[n..]);
    }

    fn is_full(&self) -> bool {
        self.filled == self.plain.len()
    }
}

/// Handshake records that did not fit the caller's output buffer, sent before anything
/// else on the next call.
#[derive(Debug, Default)]
struct PendingOut(Vec<u8>);

impl PendingOut {
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Queue `bytes` behind what waits already.
    fn push(&mut self, bytes: &[u8]) {
        self.0.extend_from_slice(bytes);
    }

    /// Move what fits into `out`; `true` when nothing is left.
    fn drain_into<O: AsRef<[u8]> + AsMut<[u8]>>(&mut self, out: &mut WriteBuf<O>) -> bool {
        if self.0.is_empty() {
            return true;
        }
        let n = out.remaining().min(self.0.len());
        if n > 0 && out.extend(&self.0[..n]).is_ok() {
            self.0.drain(..n);
        }
        self.0.is_empty()
    }
}

/// The rustls connection, either side; after a TLS 1.3 handshake, the codec's own
/// record layer ([`records`]).
enum Side {
    Client(UnbufferedClientConnection),
    Server(UnbufferedServerConnection),
    Records(alloc::boxed::Box<Records>),
    /// Only while switching to records mode (or after that failed: `failed` is set).
    Gone,
}

/// One TLS connection over rustls's unbuffered API, with the ciphertext buffered in
/// caller storage `B` (see the [module docs](super) for the copies and the buffer size).
pub struct TlsCodec<B> {
    side: Side,
    /// The config allows records mode (`enable_secret_extraction`).
    extract: bool,
    /// rustls last reported `WriteTraffic`: records mode may take over.
    enter_pending: bool,
    incoming: ReadBuf<B>,
    spill: Spill,
    pending_out: PendingOut,
    peer_closed: bool,
    close_sent: bool,
    closed: bool,
    eof: bool,
    failed: Option<TlsError>,
}

impl<B> core::fmt::Debug for TlsCodec<B> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("TlsCodec")
            .field(
                "side",
                &match self.side {
                    Side::Client(_) => "client",
                    Side::Server(_) => "server",
                    Side::Records(_) => "records",
                    Side::Gone => "gone",
                },
            )
            .field("handshaking", &self.is_handshaking())
            .field("peer_closed", &self.peer_closed)
            .field("close_sent", &self.close_sent)
            .field("failed", &self.failed)
            .finish_non_exhaustive()
    }
}

impl<B: AsRef<[u8]> + AsMut<[u8]>> TlsCodec<B> {
    /// A client connection to `server_name` (SNI and certificate name check) with
    /// `config` (which carries the crypto provider and time source), buffering
    /// ciphertext in `incoming` (at least [`MAX_RECORD`] bytes; see the module docs).
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
    /// # use rustls::{ClientConfig, RootCertStore, ServerConfig};
    /// # use tickwire_codec::buf::WriteBuf;
    /// # use tickwire_codec::tls::{Status, TlsCodec};
    /// # let key = rcgen::KeyPair::generate().unwrap();
    /// # let cert = rcgen::CertificateParams::new(vec!["localhost".into()]).unwrap().self_signed(&key).unwrap();
    /// # let provider = Arc::new(rustls::crypto::ring::default_provider());
    /// # let server_config = ServerConfig::builder_with_provider(provider.clone())
    /// #     .with_safe_default_protocol_versions().unwrap().with_no_client_auth()
    /// #     .with_single_cert(vec![cert.der().clone()],
    /// #         PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()))).unwrap();
    /// # let mut roots = RootCertStore::empty();
    /// # roots.add(cert.der().clone()).unwrap();
    /// # let client_config = ClientConfig::builder_with_provider(provider)
    /// #     .with_safe_default_protocol_versions().unwrap()
    /// #     .with_root_certificates(roots).with_no_client_auth();
    /// # let name = ServerName::try_from("localhost").unwrap();
    /// let mut client = TlsCodec::client(Arc::new(client_config), name, vec![0u8; 1 << 15]).unwrap();
    /// let mut server = TlsCodec::server(Arc::new(server_config), vec![0u8; 1 << 15]).unwrap();
    /// # let (mut c_out, mut s_out) = (WriteBuf::new(vec![0u8; 1 << 15]), WriteBuf::new(vec![0u8; 1 << 15]));
    /// # // The socket, both ways.
    /// # fn deliver(out: &mut WriteBuf<Vec<u8>>, to: &mut TlsCodec<Vec<u8>>) {
    /// #     let n = to.handle_incoming(out.data());
    /// #     out.consume(n);
    /// # }
    ///
    /// // A client and a server codec, the socket played by `deliver`.
    /// while client.is_handshaking() || server.is_handshaking() {
    ///     client.handshake(&mut c_out).unwrap(); // records for the server, into c_out
    ///     deliver(&mut c_out, &mut server);
    ///     server.handshake(&mut s_out).unwrap();
    ///     deliver(&mut s_out, &mut client);
    /// }
    /// client.encrypt(b"hello", &mut c_out).unwrap();
    /// deliver(&mut c_out, &mut server);
    /// let mut plain = [0u8; 16];
    /// assert_eq!(server.read(&mut plain, &mut s_out).unwrap(), Status::Data(5));
    /// assert_eq!(&plain[..5], b"hello");
    /// ```
    pub fn client(
        config: Arc<ClientConfig>,
        server_name: ServerName<'static>,
        incoming: B,
    ) -> Result<Self, TlsError> {
        let extract = config.enable_secret_extraction;
        let conn = UnbufferedClientConnection::new(config, server_name)?;
        Ok(Self::with_side(Side::Client(conn), extract, incoming))
    }

    /// A server connection with `config`, buffering ciphertext in `incoming`.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
    /// # use rustls::{ClientConfig, RootCertStore, ServerConfig};
    /// # use tickwire_codec::buf::WriteBuf;
    /// # use tickwire_codec::tls::{Status, TlsCodec};
    /// # let key = rcgen::KeyPair::generate().unwrap();
    /// # let cert = rcgen::CertificateParams::new(vec!["localhost".into()]).unwrap().self_signed(&key).unwrap();
    /// # let provider = Arc::new(rustls::crypto::ring::default_provider());
    /// # let server_config = ServerConfig::builder_with_provider(provider.clone())
    /// #     .with_safe_default_protocol_versions().unwrap().with_no_client_auth()
    /// #     .with_single_cert(vec![cert.der().clone()],
    /// #         PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()))).unwrap();
    /// # let mut roots = RootCertStore::empty();
    /// # roots.add(cert.der().clone()).unwrap();
    /// # let client_config = ClientConfig::builder_with_provider(provider)
    /// #     .with_safe_default_protocol_versions().unwrap()
    /// #     .with_root_certificates(roots).with_no_client_auth();
    /// # let name = ServerName::try_from("localhost").unwrap();
    /// let mut client = TlsCodec::client(Arc::new(client_config), name, vec![0u8; 1 << 15]).unwrap();
    /// let mut server = TlsCodec::server(Arc::new(server_config), vec![0u8; 1 << 15]).unwrap();
    /// # let (mut c_out, mut s_out) = (WriteBuf::new(vec![0u8; 1 << 15]), WriteBuf::new(vec![0u8; 1 << 15]));
    /// # // The socket, both ways.
    /// # fn deliver(out: &mut WriteBuf<Vec<u8>>, to: &mut TlsCodec<Vec<u8>>) {
    /// #     let n = to.handle_incoming(out.data());
    /// #     out.consume(n);
    /// # }
    ///
    /// // A client and a server codec, the socket played by `deliver`.
    /// while client.is_handshaking() || server.is_handshaking() {
    ///     client.handshake(&mut c_out).unwrap(); // records for the server, into c_out
    ///     deliver(&mut c_out, &mut server);
    ///     server.handshake(&mut s_out).unwrap();
    ///     deliver(&mut s_out, &mut client);
    /// }
    /// client.encrypt(b"hello", &mut c_out).unwrap();
    /// deliver(&mut c_out, &mut server);
    /// let mut plain = [0u8; 16];
    /// assert_eq!(server.read(&mut plain, &mut s_out).unwrap(), Status::Data(5));
    /// assert_eq!(&plain[..5], b"hello");
    /// ```
    pub fn server(config: Arc<ServerConfig>, incoming: B) -> Result<Self, TlsError> {
        let extract = config.enable_secret_extraction;
        let conn = UnbufferedServerConnection::new(config)?;
        Ok(Self::with_side(Side::Server(conn), extract, incoming))
    }

    fn with_side(side: Side, extract: bool, incoming: B) -> Self {
        TlsCodec {
            side,
            extract,
            enter_pending: false,
            incoming: ReadBuf::new(incoming),
            // One record's plaintext: what a `read` into a full slice leaves over, so
            // that case does not allocate (only records decrypted during `encrypt`,
            // while the application is not reading, can make it grow).
            spill: Spill {
                buf: Vec::with_capacity(MAX_PLAINTEXT),
                pos: 0,
            },
            pending_out: PendingOut::default(),
            peer_closed: false,
            close_sent: false,
            closed: false,
            eof: false,
            failed: None,
        }
    }
}

impl<B> TlsCodec<B> {
    /// Whether the handshake is still going on.
    pub fn is_handshaking(&self) -> bool {
        match &self.side {
            Side::Client(c) => c.is_handshaking(),
            Side::Server(s) => s.is_handshaking(),
            Side::Records(_) | Side::Gone => false,
        }
    }

    /// The ALPN protocol both sides agreed on.
    pub fn alpn_protocol(&self) -> Option<&[u8]> {
        match &self.side {
            Side::Client(c) => c.alpn_protocol(),
            Side::Server(s) => s.alpn_protocol(),
            Side::Records(r) => r.alpn(),
            Side::Gone => None,
        }
    }

    /// The cipher suite the handshake agreed on (after the handshake).
    pub fn negotiated_cipher_suite(&self) -> Option<SupportedCipherSuite> {
        match &self.side {
            Side::Client(c) => c.negotiated_cipher_suite(),
            Side::Server(s) => s.negotiated_cipher_suite(),
            Side::Records(r) => Some(r.suite()),
            Side::Gone => None,
        }
    }

    /// The peer's certificate chain, end-entity certificate first (DER): the server's
    /// on a client; on a server, the client's when it presented one. `None` before the
    /// handshake got that far.
    pub fn peer_certificates(&self) -> Option<&[CertificateDer<'static>]> {
        match &self.side {
            Side::Client(c) => c.peer_certificates(),
            Side::Server(s) => s.peer_certificates(),
            Side::Records(r) => r.peer_certificates(),
            Side::Gone => None,
        }
    }

    /// The negotiated protocol version (after the handshake).
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        match &self.side {
            Side::Client(c) => c.protocol_version(),
            Side::Server(s) => s.protocol_version(),
            Side::Records(_) => Some(ProtocolVersion::TLSv1_3),
            Side::Gone => None,
        }
    }

    /// Whether the codec's own TLS 1.3 record layer runs the connection ("records
    /// mode": after the handshake, when the config sets `enable_secret_extraction`;
    /// see the module docs). Otherwise rustls's record layer does.
    pub fn is_records_mode(&self) -> bool {
        matches!(self.side, Side::Records(_))
    }

    /// Whether the peer's close_notify was received.
    pub fn is_peer_closed(&self) -> bool {
        self.peer_closed
    }

    /// Whether we sent close_notify.
    pub fn is_close_sent(&self) -> bool {
        self.close_sent
    }

    /// Whether both sides sent close_notify.
    pub fn is_closed(&self) -> bool {
        self.closed || (self.peer_closed && self.close_sent)
    }

    /// The error that ended the connection, if one did.
    pub fn error(&self) -> Option<&TlsError> {
        self.failed.as_ref()
    }

    /// Whether decrypted plaintext waits to be taken by [`read`](Self::read).
    pub fn has_plaintext(&self) -> bool {
        !self.spill.is_empty()
    }

    /// Whether handshake records wait to be moved into an output buffer (one that was
    /// full); the next call moves them first.
    pub fn has_pending_output(&self) -> bool {
        !self.pending_out.0.is_empty()
    }
}

impl<B: AsRef<[u8]> + AsMut<[u8]>> TlsCodec<B> {
    /// Free space to read ciphertext from the network into; then
    /// [`commit_incoming`](Self::commit_incoming). Empty when the buffer is full.
    pub fn incoming_mut(&mut self) -> &mut [u8] {
        self.incoming.spare_mut()
    }

    /// `n` bytes were written into [`incoming_mut`](Self::incoming_mut).
    pub fn commit_incoming(&mut self, n: usize) {
        self.incoming.commit(n);
    }

    /// Move handshake records queued behind a full output buffer into `out`;
    /// `true` when none are left.
    pub fn drain_pending_output<O: AsRef<[u8]> + AsMut<[u8]>>(
        &mut self,
        out: &mut WriteBuf<O>,
    ) -> bool {
        self.pending_out.drain_into(out)
    }

    /// Copy ciphertext in (for callers that already have it elsewhere); returns how many
    /// bytes were taken.
    pub fn handle_incoming(&mut self, ciphertext: &[u8]) -> usize {
        self.incoming.extend(ciphertext)
    }

    /// Ciphertext bytes buffered and not yet processed.
    pub fn incoming_len(&self) -> usize {
        self.incoming.len()
    }

    /// The network stream ended. After the peer's close_notify that is the normal
    /// end; before it, the next call fails with [`TlsError::UnexpectedEof`].
    pub fn handle_eof(&mut self) {
        self.eof = true;
    }

    /// Drive the handshake: process buffered ciphertext, write our handshake records
    /// into `out`. [`Status::Ready`] once done, else [`Status::NeedMore`].
    pub fn handshake<O: AsRef<[u8]> + AsMut<[u8]>>(
        &mut self,
        out: &mut WriteBuf<O>,
    ) -> Result<Status, TlsError> {
        if !self.is_handshaking() && self.failed.is_none() {
            self.pending_out.drain_into(out);
            return Ok(Status::Ready);
        }
        self.run(out, &mut [], Want::Handshake).map(|_| {
            if self.is_handshaking() {
                Status::NeedMore
            } else {
                Status::Ready
            }
        })
    }

    /// Decrypt buffered records into `plain` (the free space of the caller's reader;
    /// the handshake is driven too, its records going into `out`).
    ///
    /// [`Status::Data`] with the count written at the start of `plain`,
    /// [`Status::NeedMore`], or [`Status::PeerClosed`] once everything before the
    /// peer's close_notify was delivered. An empty `plain` only drives the connection.
    /// When a bad record follows good ones, the good ones' plaintext is delivered first
    /// (`Data`); the error comes with the next call, and every call after it.
    pub fn read<O: AsRef<[u8]> + AsMut<[u8]>>(
        &mut self,
        plain: &mut [u8],
        out: &mut WriteBuf<O>,
    ) -> Result<Status, TlsError> {
        let filled = self.spill.take(plain);
        if filled == plain.len() && filled > 0 {
            return Ok(Status::Data(filled));
        }
        let filled = match self.run(out, &mut plain[filled..], Want::Read) {
            Ok(n) => n + filled,
            // Plaintext of the records before the failure is delivered first (now, or by
            // the next call if the caller's slice was empty); the recorded error comes
            // after it.
            Err(_) if self.failed.is_some() && (filled > 0 || !self.spill.is_empty()) => filled,
            Err(e) => return Err(e),
        };
        if filled > 0 {
            Ok(Status::Data(filled))
        } else if self.peer_closed && self.spill.is_empty() {
            Ok(Status::PeerClosed)
        } else {
            Ok(Status::NeedMore)
        }
    }

    /// Encrypt `data` (all of it, in as many records as needed) into `out`.
    ///
    /// [`TlsError::OutputFull`] (nothing written, the connection unchanged) when `out`
    /// lacks room: send what it holds and try again. [`TlsError::NotWritable`] during
    /// the handshake or after [`close`](Self::close). Records that arrive meanwhile are
    /// decrypted and kept for the next [`read`](Self::read).
    pub fn encrypt<O: AsRef<[u8]> + AsMut<[u8]>>(
        &mut self,
        data: &[u8],
        out: &mut WriteBuf<O>,
    ) -> Result<(), TlsError> {
        if self.close_sent || self.closed {
            return Err(TlsError::NotWritable);
        }
        if data.is_empty() {
            return Ok(());
        }
        self.run(out, &mut [], Want::Encrypt(data)).map(|_| ())
    }

    /// Send close_notify (into `out`, behind everything queued before it): we send
    /// nothing more. Keep reading until [`Status::PeerClosed`] for the peer's. A no-op
    /// once sent.
    ///
    /// [`TlsError::OutputFull`] (nothing queued, the connection unchanged) when `out`
    /// lacks room, or records queued behind a full buffer before (a KeyUpdate answer)
    /// must go first: send what `out` holds, move the queue with
    /// [`drain_pending_output`](Self::drain_pending_output) and call again. In records
    /// mode every [`encrypt`](Self::encrypt) leaves room for an answer to the peer's
    /// KeyUpdate and close_notify together, so a caller that sent nothing since still
    /// finds room.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
    /// # use rustls::{ClientConfig, RootCertStore, ServerConfig};
    /// # use tickwire_codec::buf::WriteBuf;
    /// # use tickwire_codec::tls::{Status, TlsCodec};
    /// # let key = rcgen::KeyPair::generate().unwrap();
    /// # let cert = rcgen::CertificateParams::new(vec!["localhost".into()]).unwrap().self_signed(&key).unwrap();
    /// # let provider = Arc::new(rustls::crypto::ring::default_provider());
    /// # let server_config = ServerConfig::builder_with_provider(provider.clone())
    /// #     .with_safe_default_protocol_versions().unwrap().with_no_client_auth()
    /// #     .with_single_cert(vec![cert.der().clone()],
    /// #         PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()))).unwrap();
    /// # let mut roots = RootCertStore::empty();
    /// # roots.add(cert.der().clone()).unwrap();
    /// # let client_config = ClientConfig::builder_with_provider(provider)
    /// #     .with_safe_default_protocol_versions().unwrap()
    /// #     .with_root_certificates(roots).with_no_client_auth();
    /// # let name = ServerName::try_from("localhost").unwrap();
    /// # let mut client = TlsCodec::client(Arc::new(client_config), name, vec![0u8; 1 << 15]).unwrap();
    /// # let mut server = TlsCodec::server(Arc::new(server_config), vec![0u8; 1 << 15]).unwrap();
    /// # let (mut c_out, mut s_out) = (WriteBuf::new(vec![0u8; 1 << 15]), WriteBuf::new(vec![0u8; 1 << 15]));
    /// # // The socket, both ways.
    /// # fn deliver(out: &mut WriteBuf<Vec<u8>>, to: &mut TlsCodec<Vec<u8>>) {
    /// #     let n = to.handle_incoming(out.data());
    /// #     out.consume(n);
    /// # }
    /// # for _ in 0..10 {
    /// #     client.handshake(&mut c_out).unwrap();
    /// #     deliver(&mut c_out, &mut server);
    /// #     server.handshake(&mut s_out).unwrap();
    /// #     deliver(&mut s_out, &mut client);
    /// # }
    /// # assert!(!client.is_handshaking() && !server.is_handshaking());
    /// // (client and server: two TlsCodecs past their handshake; `deliver` plays the socket)
    /// client.encrypt(b"last order", &mut c_out).unwrap();
    /// client.close(&mut c_out).unwrap(); // close_notify, behind the data
    /// deliver(&mut c_out, &mut server);
    /// let mut plain = [0u8; 64];
    /// assert_eq!(server.read(&mut plain, &mut s_out).unwrap(), Status::Data(10));
    /// assert_eq!(&plain[..10], b"last order");
    /// assert_eq!(server.read(&mut plain, &mut s_out).unwrap(), Status::PeerClosed);
    /// assert!(server.is_peer_closed());
    /// ```
    pub fn close<O: AsRef<[u8]> + AsMut<[u8]>>(
        &mut self,
        out: &mut WriteBuf<O>,
    ) -> Result<(), TlsError> {
        if self.close_sent || self.closed {
            return Ok(());
        }
        self.run(out, &mut [], Want::Close).map(|_| ())
    }

    /// The state machine loop shared by every call; returns the plaintext count.
    fn run<O: AsRef<[u8]> + AsMut<[u8]>>(
        &mut self,
        out: &mut WriteBuf<O>,
        plain: &mut [u8],
        want: Want<'_>,
    ) -> Result<usize, TlsError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        if !self.pending_out.drain_into(out) && !matches!(want, Want::Handshake | Want::Read) {
            // Our handshake records must go first; keep the caller's data for later.
            return Err(TlsError::OutputFull {
                required: self.pending_out.0.len(),
            });
        }
        if core::mem::take(&mut self.enter_pending) && self.may_enter_records() {
            self.enter_records()?;
        }
        if matches!(self.side, Side::Records(_) | Side::Gone) {
            return self.run_records(out, plain, want);
        }
        let mut sink = Sink {
            plain,
            filled: 0,
            spill: &mut self.spill,
        };
        loop {
            if matches!(want, Want::Read) && sink.is_full() && sink.filled > 0 {
                return Ok(sink.filled);
            }
            let data = self.incoming.data_mut();
            let (discard, step) = match &mut self.side {
                Side::Client(c) => round(
                    c.process_tls_records(data),
                    &mut sink,
                    out,
                    &mut self.pending_out,
                    want,
                ),
                Side::Server(s) => round(
                    s.process_tls_records(data),
                    &mut sink,
                    out,
                    &mut self.pending_out,
                    want,
                ),
                Side::Records(_) | Side::Gone => return Err(TlsError::UnknownState),
            };
            self.incoming.consume(discard);
            let step = match step {
                Ok(step) => step,
                Err(e @ TlsError::OutputFull { .. }) => return Err(e),
                Err(e) => {
                    let filled = sink.filled;
                    self.failed = Some(e.clone());
                    self.send_alert(out);
                    if filled > 0 {
                        // Plaintext of the records before the bad one is delivered
                        // first; the next call returns the (recorded) error.
                        return Ok(filled);
                    }
                    return Err(e);
                }
            };
            if matches!(step, Step::Writable) {
                // Switch at the start of the next call, if nothing arrived meanwhile.
                self.enter_pending = true;
            }
            match step {
                Step::Again => {}
                Step::PeerClosed => self.peer_closed = true,
                Step::Closed => {
                    self.closed = true;
                    self.peer_closed = true;
                    return match want {
                        Want::Encrypt(_) => Err(TlsError::NotWritable),
                        _ => Ok(sink.filled),
                    };
                }
                Step::Blocked if matches!(want, Want::Encrypt(_) | Want::Close) => {
                    return Err(TlsError::NotWritable);
                }
                Step::Idle if matches!(want, Want::Encrypt(_) | Want::Close) => {
                    if matches!(want, Want::Close) {
                        self.close_sent = true;
                    }
                    return Ok(sink.filled);
                }
                Step::Idle if matches!(want, Want::Handshake) => return Ok(0),
                Step::Idle | Step::Blocked | Step::Writable => {
                    return no_complete_record(
                        self.peer_closed,
                        self.eof,
                        self.incoming.len() == self.incoming.capacity(),
                        &mut self.failed,
                        sink.filled,
                    );
                }
            }
        }
    }
}

impl<B: AsRef<[u8]> + AsMut<[u8]>> TlsCodec<B> {
    /// Whether records mode can take over now: TLS 1.3, the config allows it, rustls
    /// holds nothing (it just reported `WriteTraffic`), and no ciphertext is buffered
    /// (so no record is half-processed by rustls).
    fn may_enter_records(&self) -> bool {
        let (suite, version) = match &self.side {
            Side::Client(c) => (c.negotiated_cipher_suite(), c.protocol_version()),
            Side::Server(s) => (s.negotiated_cipher_suite(), s.protocol_version()),
            Side::Records(_) | Side::Gone => return false,
        };
        self.extract
            && records::supported(suite, version)
            && self.incoming.is_empty()
            && self.pending_out.is_empty()
            && !self.peer_closed
            && !self.close_sent
            && !self.closed
            && self.failed.is_none()
    }

    /// Hand the connection from rustls to the codec's record layer.
    fn enter_records(&mut self) -> Result<(), TlsError> {
        let side = core::mem::replace(&mut self.side, Side::Gone);
        let converted = match side {
            Side::Client(c) => {
                let kept = (
                    c.alpn_protocol().map(<[u8]>::to_vec),
                    c.peer_certificates().map(<[_]>::to_vec),
                );
                let suite = c.negotiated_cipher_suite();
                c.dangerous_into_kernel_connection()
                    .map(|(secrets, k)| (secrets, Kernel::Client(k), suite, kept))
            }
            Side::Server(s) => {
                let kept = (
                    s.alpn_protocol().map(<[u8]>::to_vec),
                    s.peer_certificates().map(<[_]>::to_vec),
                );
                let suite = s.negotiated_cipher_suite();
                s.dangerous_into_kernel_connection()
                    .map(|(secrets, k)| (secrets, Kernel::Server(k), suite, kept))
            }
            other => {
                self.side = other;
                return Ok(());
            }
        };
        let records = converted.and_then(|(secrets, kernel, suite, kept)| {
            let suite = suite.ok_or(rustls::Error::HandshakeNotComplete)?;
            Records::new(secrets, kernel, suite, kept)
        });
        match records {
            Ok(r) => {
                self.side = Side::Records(alloc::boxed::Box::new(r));
                Ok(())
            }
            Err(e) => {
                let e = TlsError::Rustls(e);
                self.failed = Some(e.clone());
                Err(e)
            }
        }
    }

    /// [`run`](Self::run) in records mode.
    fn run_records<O: AsRef<[u8]> + AsMut<[u8]>>(
        &mut self,
        out: &mut WriteBuf<O>,
        plain: &mut [u8],
        want: Want<'_>,
    ) -> Result<usize, TlsError> {
        let Side::Records(r) = &mut self.side else {
            return Err(self.failed.clone().unwrap_or(TlsError::UnknownState));
        };
        match want {
            Want::Handshake => Ok(0),
            Want::Encrypt(data) => match r.encrypt(data, out, &mut self.pending_out) {
                Ok(()) => Ok(0),
                // Checked before anything is written: the caller sends and retries.
                Err(e @ TlsError::OutputFull { .. }) => Err(e),
                // Sequence numbers may have been spent: the connection cannot go on.
                Err(e) => {
                    self.failed = Some(e.clone());
                    Err(e)
                }
            },
            Want::Close => {
                r.alert(rustls::AlertDescription::CloseNotify, out)?;
                self.close_sent = true;
                Ok(0)
            }
            Want::Read => {
                let mut sink = Sink {
                    plain,
                    filled: 0,
                    spill: &mut self.spill,
                };
                if !self.peer_closed {
                    match r.read(
                        &mut self.incoming,
                        &mut sink,
                        out,
                        &mut self.pending_out,
                        true,
                    ) {
                        Ok(ReadEnd::Done) => {}
                        Ok(ReadEnd::PeerClosed) => self.peer_closed = true,
                        Err((e, alert)) => {
                            if !matches!(e, TlsError::Rustls(rustls::Error::AlertReceived(_))) {
                                // Best effort: the error is what the caller gets. Behind
                                // records still queued (KeyUpdate answers: sealed before
                                // it, the peer opens them first).
                                if self.pending_out.is_empty() {
                                    let _ = r.alert(alert, out);
                                } else {
                                    let mut record = WriteBuf::new([0u8; ALERT_ROOM]);
                                    if r.alert(alert, &mut record).is_ok() {
                                        self.pending_out.push(record.data());
                                    }
                                }
                            }
                            self.failed = Some(e.clone());
                            if sink.filled > 0 {
                                // As in `run`: the records before the bad one first.
                                return Ok(sink.filled);
                            }
                            return Err(e);
                        }
                    }
                }
                no_complete_record(
                    self.peer_closed,
                    self.eof,
                    self.incoming.len() == self.incoming.capacity(),
                    &mut self.failed,
                    sink.filled,
                )
            }
        }
    }
}

impl<B: AsRef<[u8]> + AsMut<[u8]>> TlsCodec<B> {
    /// After rustls failed the connection: put the fatal alert it queued for the peer
    /// into `out` (best effort; the error is what the caller gets).
    ///
    /// Exactly one more `process_tls_records` call: a queued alert is returned before
    /// rustls looks at the input again. A second call would deframe the bad input again
    /// and queue a second alert (a `debug_assert!` in rustls).
    fn send_alert<O: AsRef<[u8]> + AsMut<[u8]>>(&mut self, out: &mut WriteBuf<O>) {
        let data = self.incoming.data_mut();
        // Behind records still queued, in order.
        let mut record = WriteBuf::new([0u8; ALERT_ROOM]);
        let queued = !self.pending_out.is_empty();
        let discard = match (&mut self.side, queued) {
            (Side::Client(c), false) => alert_round(c.process_tls_records(data), out),
            (Side::Server(s), false) => alert_round(s.process_tls_records(data), out),
            (Side::Client(c), true) => alert_round(c.process_tls_records(data), &mut record),
            (Side::Server(s), true) => alert_round(s.process_tls_records(data), &mut record),
            (Side::Records(_) | Side::Gone, _) => 0,
        };
        self.pending_out.push(record.data());
        self.incoming.consume(discard);
    }
}

/// The one round of [`TlsCodec::send_alert`]; returns the bytes to discard.
fn alert_round<Data, O: AsRef<[u8]> + AsMut<[u8]>>(
    status: UnbufferedStatus<'_, '_, Data>,
    out: &mut WriteBuf<O>,
) -> usize {
    if let Ok(ConnectionState::EncodeTlsData(mut encode)) = status.state {
        let free = out.reserve(0).map_or(0, |free| free.len());
        if let Ok(Ok(n)) = out.reserve(free).map(|dst| encode.encode(dst)) {
            out.commit(n);
        }
    }
    status.discard
}

/// Handle one `process_tls_records` answer; returns the bytes to discard from the front
/// of the incoming buffer and what happened.
fn round<Data, O: AsRef<[u8]> + AsMut<[u8]>>(
    status: UnbufferedStatus<'_, '_, Data>,
    sink: &mut Sink<'_>,
    out: &mut WriteBuf<O>,
    pending_out: &mut PendingOut,
    want: Want<'_>,
) -> (usize, Result<Step, TlsError>) {
    let mut discard = status.discard;
    let state = match status.state {
        Ok(state) => state,
        Err(e) => return (discard, Err(e.into())),
    };
    let step = match state {
        ConnectionState::ReadTraffic(mut traffic) => {
            while let Some(record) = traffic.next_record() {
                match record {
                    Ok(record) => {
                        discard += record.discard;
                        sink.deliver(record.payload);
                    }
                    Err(e) => return (discard, Err(e.into())),
                }
            }
            Ok(Step::Again)
        }
        ConnectionState::EncodeTlsData(mut encode) => {
            encode_handshake(&mut encode, out, pending_out).map(|()| Step::Again)
        }
        ConnectionState::TransmitTlsData(transmit) => {
            // The records are in `out` (or queued in order behind it), which the caller
            // sends in order before anything we write later: that is the transmission.
            transmit.done();
            Ok(Step::Again)
        }
        ConnectionState::BlockedHandshake => Ok(Step::Blocked),
        ConnectionState::WriteTraffic(mut traffic) => match want {
            Want::Encrypt(data) => encrypt_into(&mut traffic, data, out).map(|()| Step::Idle),
            Want::Close => close_into(&mut traffic, out).map(|()| Step::Idle),
            Want::Handshake | Want::Read => Ok(Step::Writable),
        },
        ConnectionState::PeerClosed => Ok(Step::PeerClosed),
        ConnectionState::Closed => Ok(Step::Closed),
        ConnectionState::ReadEarlyData(_) => Err(TlsError::EarlyData),
        _ => Err(TlsError::UnknownState),
    };
    (discard, step)
}

/// Put one handshake record into `out`, or behind it when it does not fit.
fn encode_handshake<Data, O: AsRef<[u8]> + AsMut<[u8]>>(
    encode: &mut EncodeTlsData<'_, Data>,
    out: &mut WriteBuf<O>,
    pending_out: &mut PendingOut,
) -> Result<(), TlsError> {
    if pending_out.0.is_empty() {
        let free = out.reserve(0).map_or(0, |free| free.len());
        let first = match out.reserve(free) {
            Ok(dst) => encode.encode(dst),
            Err(_) => encode.encode(&mut []),
        };
        let required = match first {
            Ok(n) => {
                out.commit(n);
                return Ok(());
            }
            Err(EncodeError::InsufficientSize(InsufficientSizeError { required_size })) => {
                required_size
            }
            Err(EncodeError::AlreadyEncoded) => return Ok(()),
        };
        if let Ok(dst) = out.reserve(required) {
            return match encode.encode(dst) {
                Ok(n) => {
                    out.commit(n);
                    Ok(())
                }
                Err(_) => Err(TlsError::UnknownState),
            };
        }
    }
    // Keep it in order behind what `out` holds (handshake only: rare, bounded by the
    // flight size).
    let at = pending_out.0.len();
    let mut size = 4096;
    loop {
        pending_out.0.resize(at + size, 0);
        match encode.encode(&mut pending_out.0[at..]) {
            Ok(n) => {
                pending_out.0.truncate(at + n);
                return Ok(());
            }
            Err(EncodeError::InsufficientSize(InsufficientSizeError { required_size }))
                if required_size > size =>
            {
                size = required_size;
            }
            Err(_) => {
                pending_out.0.truncate(at);
                return Err(TlsError::UnknownState);
            }
        }
    }
}

/// Encrypt `data` into `out`: one attempt with an estimate of the size, one with
/// the exact size rustls asks for.
fn encrypt_into<Data, O: AsRef<[u8]> + AsMut<[u8]>>(
    traffic: &mut WriteTraffic<'_, Data>,
    data: &[u8],
    out: &mut WriteBuf<O>,
) -> Result<(), TlsError> {
    let estimate = data.len() + (data.len() / MAX_PLAINTEXT + 1) * RECORD_OVERHEAD;
    let mut need = estimate;
    for _ in 0..2 {
        let dst = out
            .reserve(need)
            .map_err(|_| TlsError::OutputFull { required: need })?;
        match traffic.encrypt(data, dst) {
            Ok(n) => {
                out.commit(n);
                return Ok(());
            }
            Err(EncryptError::InsufficientSize(InsufficientSizeError { required_size })) => {
                need = required_size;
            }
            Err(EncryptError::EncryptExhausted) => return Err(TlsError::EncryptExhausted),
        }
    }
    Err(TlsError::OutputFull { required: need })
}

fn close_into<Data, O: AsRef<[u8]> + AsMut<[u8]>>(
    traffic: &mut WriteTraffic<'_, Data>,
    out: &mut WriteBuf<O>,
) -> Result<(), TlsError> {
    let mut need = 64;
    for _ in 0..2 {
        let dst = out
            .reserve(need)
            .map_err(|_| TlsError::OutputFull { required: need })?;
        match traffic.queue_close_notify(dst) {
            Ok(n) => {
                out.commit(n);
                return Ok(());
            }
            Err(EncryptError::InsufficientSize(InsufficientSizeError { required_size })) => {
                need = required_size;
            }
            Err(EncryptError::EncryptExhausted) => return Err(TlsError::EncryptExhausted),
        }
    }
    Err(TlsError::OutputFull { required: need })
}
