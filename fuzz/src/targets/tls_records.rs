//! The TLS codec's records mode (its own TLS 1.3 record layer after the handshake), fed
//! records sealed with the real traffic keys.
//!
//! Per input: two real in-memory handshakes (ring, a fixed certificate made once, TLS 1.3,
//! the cipher suite chosen by the input) between a client TlsCodec and a rustls
//! `UnbufferedServerConnection`: client A with `enable_secret_extraction` (it must end in
//! records mode) and client B without (rustls's own record layer, the reference). The
//! harness then takes the servers' traffic keys through rustls's kernel-connection API and
//! seals, for both clients alike, a record stream the input describes (see [`Op`]):
//! application data with padding, arbitrary inner content types, KeyUpdates (requested or
//! not, split over records, with trailing bytes; the harness switches its own key after
//! each), NewSessionTickets, alerts, raw garbage, bit flips and header tampering. The
//! stream is delivered in input-chosen pieces, read through input-chosen slice sizes, with
//! client writes in between, then EOF.
//!
//! Invariants (a violation panics):
//! - no panic anywhere; A is in records mode after the handshake, B is not;
//! - a model of the stream: while every record is one the RFC allows, A delivers exactly
//!   the application data sealed before the first bad record, in order; at a record the
//!   model calls bad A fails with a typed error, delivers nothing from it on, and stays
//!   failed; a close_notify ends A's stream cleanly after the data before it; the end of
//!   a stream without close_notify is `UnexpectedEof`;
//! - every byte A and B write decrypts, in order, with the server's receiving keys: the
//!   application data they were asked to send, exactly one KeyUpdate(update_not_requested)
//!   per KeyUpdate(update_requested) the model saw them accept (after which the harness
//!   moves to their next key), and alerts last;
//! - differential: A and B deliver the same bytes, both fail or neither, both see
//!   close_notify or neither.
//!
//! Deliberate differences: records mode rejects an empty handshake record (RFC 8446 §5.1
//! forbids sending one), rustls lets a few pass as empty fragments: after one, rustls may
//! deliver more than records mode (checked: only more, never other bytes). Not compared:
//! the kind of error (records mode reports some
//! framing faults with other `rustls::Error` values than rustls's deframer), and KeyUpdate
//! answers: records mode answers each KeyUpdate(update_requested) at once, rustls queues
//! one answer and sends it before its next application data (RFC 8446 §4.6.3 allows both).
//! Both clients' output is still opened and checked.
use std::sync::{Arc, OnceLock};

use rustls::client::Resumption;
use rustls::crypto::cipher::{
    InboundOpaqueMessage, MessageDecrypter, MessageEncrypter, OutboundChunks, OutboundPlainMessage,
};
use rustls::crypto::{CryptoProvider, ring};
use rustls::kernel::KernelConnection;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
use rustls::server::{ServerConnectionData, UnbufferedServerConnection};
use rustls::unbuffered::ConnectionState;
use rustls::{
    ClientConfig, ConnectionTrafficSecrets, ContentType, ProtocolVersion, RootCertStore,
    ServerConfig, SupportedCipherSuite, Tls13CipherSuite,
};
use tickwire_codec::buf::WriteBuf;
use tickwire_codec::tls::{MAX_RECORD, Status, TlsCodec, TlsError};

struct Configs {
    /// Client with and without secret extraction.
    client_records: Arc<ClientConfig>,
    client_rustls: Arc<ClientConfig>,
    /// One server config per TLS 1.3 suite, all with secret extraction.
    servers: Vec<Arc<ServerConfig>>,
}

fn configs() -> &'static Configs {
    static CONFIGS: OnceLock<Configs> = OnceLock::new();
    CONFIGS.get_or_init(|| {
        let params = rcgen::CertificateParams::new(vec!["localhost".into()]).expect("params");
        let key = rcgen::KeyPair::generate().expect("key");
        let cert: CertificateDer<'static> = params.self_signed(&key).expect("cert").der().clone();
        let key = PrivatePkcs8KeyDer::from(key.serialize_der());
        let provider = Arc::new(ring::default_provider());
        let mut roots = RootCertStore::empty();
        roots.add(cert.clone()).expect("root");
        let client = |extract: bool| {
            let mut c = ClientConfig::builder_with_provider(provider.clone())
                .with_protocol_versions(&[&rustls::version::TLS13])
                .expect("versions")
                .with_root_certificates(roots.clone())
                .with_no_client_auth();
            c.enable_secret_extraction = extract;
            // Every input starts with a full handshake (no state carried between inputs).
            c.resumption = Resumption::disabled();
            Arc::new(c)
        };
        let servers = [
            ring::cipher_suite::TLS13_AES_128_GCM_SHA256,
            ring::cipher_suite::TLS13_AES_256_GCM_SHA384,
            ring::cipher_suite::TLS13_CHACHA20_POLY1305_SHA256,
        ]
        .into_iter()
        .map(|suite| {
            let provider = CryptoProvider {
                cipher_suites: vec![suite],
                ..ring::default_provider()
            };
            let mut s = ServerConfig::builder_with_provider(Arc::new(provider))
                .with_protocol_versions(&[&rustls::version::TLS13])
                .expect("versions")
                .with_no_client_auth()
                .with_single_cert(vec![cert.clone()], PrivateKeyDer::Pkcs8(key.clone_key()))
                .expect("server config");
            s.enable_secret_extraction = true;
            Arc::new(s)
        })
        .collect();
        Configs {
            client_records: client(true),
            client_rustls: client(false),
            servers,
        }
    })
}

/// The input, read front to back; reads past the end give zeros.
struct Input<'a>(&'a [u8]);

impl<'a> Input<'a> {
    fn u8(&mut self) -> u8 {
        match self.0.split_first() {
            Some((b, rest)) => {
                self.0 = rest;
                *b
            }
            None => 0,
        }
    }
    fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.u8(), self.u8()])
    }
    fn bytes(&mut self, n: usize) -> &'a [u8] {
        let (a, b) = self.0.split_at(n.min(self.0.len()));
        self.0 = b;
        a
    }
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// `len` bytes: `head` (from the input) then a pattern seeded by `seed`.
fn filler(head: &[u8], len: usize, seed: u8) -> Vec<u8> {
    let mut v: Vec<u8> = head.iter().copied().take(len).collect();
    while v.len() < len {
        v.push((v.len() as u8).wrapping_mul(31) ^ seed);
    }
    v
}

fn key_iv(
    s: ConnectionTrafficSecrets,
) -> (rustls::crypto::cipher::AeadKey, rustls::crypto::cipher::Iv) {
    match s {
        ConnectionTrafficSecrets::Aes128Gcm { key, iv }
        | ConnectionTrafficSecrets::Aes256Gcm { key, iv }
        | ConnectionTrafficSecrets::Chacha20Poly1305 { key, iv } => (key, iv),
        _ => panic!("unexpected secret kind"),
    }
}

/// The server side after its handshake: rustls's kernel connection and our AEAD state.
struct Server {
    kernel: KernelConnection<ServerConnectionData>,
    suite: &'static Tls13CipherSuite,
    enc: Box<dyn MessageEncrypter>,
    tx_seq: u64,
    dec: Box<dyn MessageDecrypter>,
    rx_seq: u64,
}

impl Server {
    /// One record whose inner plaintext is `body || typ` (so `typ` 0 with a body ending in
    /// the real type and zeros is padding).
    fn seal_raw(&mut self, typ: u8, body: &[u8]) -> Vec<u8> {
        let msg = OutboundPlainMessage {
            typ: ContentType::from(typ),
            version: ProtocolVersion::TLSv1_2,
            payload: OutboundChunks::Single(body),
        };
        let rec = self.enc.encrypt(msg, self.tx_seq).expect("seal");
        self.tx_seq += 1;
        rec.encode()
    }

    /// A record of inner type `typ` holding `content` and `pad` zero bytes of padding.
    fn seal(&mut self, typ: u8, content: &[u8], pad: usize) -> Vec<u8> {
        if pad == 0 {
            return self.seal_raw(typ, content);
        }
        let mut body = content.to_vec();
        body.push(typ);
        body.resize(body.len() + pad - 1, 0);
        self.seal_raw(0, &body)
    }

    fn key_update_tx(&mut self) {
        let (seq, s) = self.kernel.update_tx_secret().expect("update tx");
        let (k, iv) = key_iv(s);
        self.enc = self.suite.aead_alg.encrypter(k, iv);
        self.tx_seq = seq;
    }

    fn key_update_rx(&mut self) {
        let (seq, s) = self.kernel.update_rx_secret().expect("update rx");
        let (k, iv) = key_iv(s);
        self.dec = self.suite.aead_alg.decrypter(k, iv);
        self.rx_seq = seq;
    }
}

/// Run the server's state machine over `inbuf`, its records into `out`; `true` once it
/// can send application data (handshake over, nothing buffered).
fn drive_server(
    s: &mut UnbufferedServerConnection,
    inbuf: &mut Vec<u8>,
    out: &mut Vec<u8>,
) -> bool {
    loop {
        let st = s.process_tls_records(inbuf);
        let discard = st.discard;
        let writable = match st.state.expect("server handshake") {
            ConnectionState::EncodeTlsData(mut e) => {
                let mut buf = vec![0u8; 32 * 1024];
                let n = e.encode(&mut buf).expect("encode");
                out.extend_from_slice(&buf[..n]);
                None
            }
            ConnectionState::TransmitTlsData(t) => {
                t.done();
                None
            }
            ConnectionState::BlockedHandshake => Some(false),
            ConnectionState::WriteTraffic(_) => Some(true),
            other => panic!("server in unexpected state {other:?}"),
        };
        inbuf.drain(..discard);
        if let Some(w) = writable {
            return w;
        }
    }
}

/// A handshake between a client codec and a rustls server; returns the client (after its
/// switch to records mode, if its config allows) and the server, with the server's
/// post-handshake records (its NewSessionTickets) not yet delivered.
fn connect(
    client_cfg: &Arc<ClientConfig>,
    server_cfg: &Arc<ServerConfig>,
    incoming: usize,
) -> (TlsCodec<Vec<u8>>, Server, Vec<u8>) {
    let mut c = TlsCodec::client(
        client_cfg.clone(),
        ServerName::try_from("localhost").expect("name"),
        vec![0u8; incoming],
    )
    .expect("client");
    let mut s = UnbufferedServerConnection::new(server_cfg.clone()).expect("server");
    let mut out = WriteBuf::new(vec![0u8; 64 * 1024]);
    let mut s_in = Vec::new();
    let mut s_out = Vec::new();
    for _ in 0..8 {
        let st = c.handshake(&mut out).expect("client handshake");
        s_in.extend_from_slice(out.data());
        out.clear();
        let writable = drive_server(&mut s, &mut s_in, &mut s_out);
        if st == Status::Ready && writable && s_in.is_empty() {
            // The server's NewSessionTickets wait in `s_out`: the client switches first.
            assert!(c.read(&mut [], &mut out).is_ok());
            assert!(out.is_empty() && !c.is_handshaking());
            let (secrets, kernel) = s.dangerous_into_kernel_connection().expect("kernel");
            let suite = match kernel.negotiated_cipher_suite() {
                SupportedCipherSuite::Tls13(s) => s,
                _ => panic!("TLS 1.2 negotiated"),
            };
            let (tk, tiv) = key_iv(secrets.tx.1);
            let (rk, riv) = key_iv(secrets.rx.1);
            let server = Server {
                kernel,
                suite,
                enc: suite.aead_alg.encrypter(tk, tiv),
                tx_seq: secrets.tx.0,
                dec: suite.aead_alg.decrypter(rk, riv),
                rx_seq: secrets.rx.0,
            };
            return (c, server, s_out);
        }
        assert_eq!(c.handle_incoming(&s_out), s_out.len());
        s_out.clear();
    }
    panic!("handshake did not finish");
}

/// What the model knows of the stream so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    /// Every record so far is one the RFC allows.
    Valid,
    /// A close_notify ended it (nothing after counts).
    Closed,
    /// A record the client must reject.
    Bad,
    /// A record the model does not judge (left to the differential check).
    Unknown,
}

struct Model {
    verdict: Verdict,
    /// Application data before the first record not `Valid`.
    data: Vec<u8>,
    /// KeyUpdate(update_requested) records before it.
    requested: usize,
    /// The client closes its side at some point: KeyUpdates after that (which depends on
    /// the piece sizes) are not answered.
    client_closes: bool,
    /// Records with an empty plaintext in a row (more than 32 is an error, as in rustls).
    empty_run: usize,
    /// The first bad record is one records mode rejects on purpose and rustls accepts.
    stricter: bool,
    /// KeyUpdates since the last application data record (more than 32 is an error, as
    /// in rustls and BoringSSL).
    key_update_run: usize,
}

impl Model {
    fn mark(&mut self, v: Verdict) {
        if self.verdict == Verdict::Valid {
            self.verdict = v;
        }
    }
    fn valid(&self) -> bool {
        self.verdict == Verdict::Valid
    }
    /// A record with `len` bytes of plaintext went out.
    fn record(&mut self, len: usize) {
        if len > 0 {
            self.empty_run = 0;
        } else {
            self.empty_run += 1;
            if self.empty_run > 32 {
                self.mark(Verdict::Bad);
            }
        }
    }
}

/// A client codec, its server and what it did.
struct Side {
    codec: TlsCodec<Vec<u8>>,
    server: Server,
    stream: Vec<u8>,
    delivered: Vec<u8>,
    error: Option<TlsError>,
    peer_closed: bool,
    written: Vec<u8>,
    sent: Vec<u8>,
}

/// Seal the same record for both sides (the bit flip / header tamper applied alike);
/// what the damage makes of the record, if any: a flipped ciphertext bit is `Bad`, a
/// rewritten header `Unknown`.
fn both(
    sides: &mut [Side; 2],
    flip: &mut Option<u16>,
    tamper: &mut Option<[u8; 3]>,
    f: impl Fn(&mut Server) -> Vec<u8>,
) -> Option<Verdict> {
    let taint = match (flip.is_some(), tamper.is_some()) {
        (false, false) => None,
        (true, false) => Some(Verdict::Bad),
        _ => Some(Verdict::Unknown),
    };
    for side in sides.iter_mut() {
        let mut rec = f(&mut side.server);
        if let Some(bit) = *flip {
            // Only the ciphertext and tag: the record still parses, the AEAD must fail.
            let body = rec.len() - 5;
            let bit = usize::from(bit) % (body * 8);
            rec[5 + bit / 8] ^= 1 << (bit % 8);
        }
        if let Some([t, v0, v1]) = *tamper {
            rec[0] = t;
            rec[1] = v0;
            rec[2] = v1;
        }
        side.stream.extend_from_slice(&rec);
    }
    *flip = None;
    *tamper = None;
    taint
}

/// Read until the codec needs more, fails or reports close_notify.
fn drive_reads(side: &mut Side, slices: &[u16], si: &mut usize, out: &mut WriteBuf<Vec<u8>>) {
    let mut plain = vec![0u8; 20 * 1024];
    let mut zero = false;
    for _ in 0..100_000 {
        let mut s = usize::from(slices[*si % slices.len()]) % (plain.len() + 1);
        *si += 1;
        if zero {
            // An empty slice only drives the connection; then read for real.
            s = s.max(1);
        }
        zero = s == 0;
        let r = side.codec.read(&mut plain[..s], out);
        side.written.extend_from_slice(out.data());
        out.clear();
        match r {
            Ok(Status::Data(n)) => {
                assert!(n > 0 && n <= s, "Data({n}) into a slice of {s}");
                side.delivered.extend_from_slice(&plain[..n]);
            }
            Ok(Status::NeedMore) if s == 0 => {}
            Ok(Status::NeedMore) => return,
            Ok(Status::PeerClosed) => {
                side.peer_closed = true;
                assert!(!side.codec.has_plaintext());
                let again = side.codec.read(&mut plain, out);
                assert_eq!(
                    again.ok(),
                    Some(Status::PeerClosed),
                    "close_notify not sticky"
                );
                return;
            }
            Ok(Status::Ready) => panic!("read returned Ready"),
            Err(e) => {
                assert!(side.codec.error().is_some(), "error {e:?} not recorded");
                assert!(
                    !side.codec.has_plaintext(),
                    "an error before all data was read"
                );
                for _ in 0..2 {
                    let again = side.codec.read(&mut plain, out);
                    assert!(again.is_err(), "a failed codec recovered: {again:?}");
                }
                side.written.extend_from_slice(out.data());
                out.clear();
                side.error = Some(e);
                return;
            }
        }
    }
    panic!("read loop did not settle");
}

/// Deliver the side's stream in pieces, with client writes at their stream offsets, then EOF.
fn feed(
    side: &mut Side,
    chunks: &[u16],
    slices: &[u16],
    out_cap: usize,
    sends: &[(usize, Option<Vec<u8>>)],
) {
    let mut out = WriteBuf::new(vec![0u8; out_cap]);
    let mut pos = 0;
    let mut ci = 0;
    let mut si = 0;
    let mut next_send = 0;
    let stream = std::mem::take(&mut side.stream);
    loop {
        while next_send < sends.len() && sends[next_send].0 <= pos {
            let data = &sends[next_send].1;
            next_send += 1;
            if side.error.is_some() {
                continue;
            }
            let Some(data) = data else {
                // The client closes its side (client A only: with rustls's record layer, a
                // bad record after our close_notify trips a debug assertion inside rustls,
                // rustls/rustls#959, in builds with debug assertions such as this one).
                if !side.codec.is_records_mode() {
                    continue;
                }
                loop {
                    match side.codec.close(&mut out) {
                        Ok(()) => break,
                        Err(TlsError::OutputFull { .. }) if !out.is_empty() => {
                            side.written.extend_from_slice(out.data());
                            out.clear();
                        }
                        Err(TlsError::OutputFull { required }) => {
                            assert!(required > out_cap, "OutputFull({required}) into {out_cap}");
                            break;
                        }
                        Err(e) => panic!("close on a live connection failed: {e:?}"),
                    }
                }
                side.written.extend_from_slice(out.data());
                out.clear();
                continue;
            };
            loop {
                match side.codec.encrypt(data, &mut out) {
                    Ok(()) => {
                        side.sent.extend_from_slice(data);
                        break;
                    }
                    Err(TlsError::OutputFull { required }) if !out.is_empty() => {
                        let _ = required;
                        side.written.extend_from_slice(out.data());
                        out.clear();
                    }
                    Err(TlsError::OutputFull { required }) => {
                        assert!(required > out_cap, "OutputFull({required}) into {out_cap}");
                        break;
                    }
                    Err(TlsError::NotWritable) if side.codec.is_close_sent() => break,
                    Err(e) => panic!("encrypt on a live connection failed: {e:?}"),
                }
            }
            side.written.extend_from_slice(out.data());
            out.clear();
        }
        if side.error.is_some() || side.peer_closed || pos == stream.len() {
            break;
        }
        let n = usize::from(chunks[ci % chunks.len()]).clamp(1, stream.len() - pos);
        ci += 1;
        let taken = side.codec.handle_incoming(&stream[pos..pos + n]);
        pos += taken;
        drive_reads(side, slices, &mut si, &mut out);
        assert!(
            taken > 0 || side.error.is_some() || side.peer_closed,
            "incoming buffer full and no error"
        );
    }
    if side.error.is_none() && !side.peer_closed {
        side.codec.handle_eof();
        drive_reads(side, slices, &mut si, &mut out);
    }
    while !side.codec.drain_pending_output(&mut out) {
        assert!(!out.is_empty(), "pending output does not move");
        side.written.extend_from_slice(out.data());
        out.clear();
    }
    side.written.extend_from_slice(out.data());
}

/// Open everything the client wrote with the server's receiving keys; returns the
/// KeyUpdates it sent.
fn check_written(side: &mut Side) -> usize {
    let mut rest = &mut side.written[..];
    let mut data = Vec::new();
    let mut key_updates = 0;
    let mut alert_seen = false;
    let mut close_sent = false;
    while !rest.is_empty() {
        assert!(
            rest.len() >= 5,
            "partial record header in the client's output"
        );
        assert_eq!(&rest[..3], &[0x17, 0x03, 0x03], "client record header");
        let len = usize::from(u16::from_be_bytes([rest[3], rest[4]]));
        assert!(
            rest.len() >= 5 + len,
            "partial record in the client's output"
        );
        let (rec, tail) = std::mem::take(&mut rest).split_at_mut(5 + len);
        rest = tail;
        assert!(!alert_seen, "a record after the client's fatal alert");
        let msg = InboundOpaqueMessage::new(
            ContentType::ApplicationData,
            ProtocolVersion::TLSv1_2,
            &mut rec[5..],
        );
        let plain = side
            .server
            .dec
            .decrypt(msg, side.server.rx_seq)
            .unwrap_or_else(|e| {
                panic!(
                    "the client's record does not decrypt with its key ({e:?}, records mode: {})",
                    side.codec.is_records_mode()
                )
            });
        side.server.rx_seq += 1;
        match plain.typ {
            // Nothing but an alert after our close_notify (RFC 8446 §6.1: it closes the
            // write side).
            typ if close_sent && typ != ContentType::Alert => {
                panic!("client sent {typ:?} after its close_notify")
            }
            ContentType::ApplicationData => data.extend_from_slice(plain.payload),
            ContentType::Handshake => {
                assert_eq!(plain.payload, &[24, 0, 0, 1, 0], "client handshake message");
                key_updates += 1;
                side.server.key_update_rx();
            }
            ContentType::Alert => {
                assert_eq!(plain.payload.len(), 2, "alert length");
                if plain.payload == [1, 0] {
                    assert!(!close_sent, "two close_notify alerts");
                    close_sent = true;
                } else {
                    alert_seen = true;
                }
            }
            other => panic!("client sent a record of type {other:?}"),
        }
    }
    assert!(
        data == side.sent,
        "the client's application data differs from what it was given"
    );
    key_updates
}

/// Records mode answers each accepted KeyUpdate(update_requested) with exactly one
/// KeyUpdate, until it closes its side.
fn assert_ku(answers: usize, model: &Model) {
    if model.client_closes {
        assert!(answers <= model.requested, "KeyUpdate answers");
    } else {
        assert_eq!(answers, model.requested, "KeyUpdate answers");
    }
}

/// One input of the fuzz target `tls_records` (see the module docs).
pub fn run(bytes: &[u8]) {
    let mut inp = Input(bytes);
    let c = configs();
    let head = inp.u8();
    let server_cfg = &c.servers[usize::from(head % 3)];
    let incoming = MAX_RECORD + usize::from(inp.u16() % 8192);
    let out_cap = 1 + usize::from(inp.u16() % 4096);

    let mk = |cfg: &Arc<ClientConfig>| {
        let (codec, server, tickets) = connect(cfg, server_cfg, incoming);
        Side {
            codec,
            server,
            stream: tickets,
            delivered: Vec::new(),
            error: None,
            peer_closed: false,
            written: Vec::new(),
            sent: Vec::new(),
        }
    };
    let mut sides = [mk(&c.client_records), mk(&c.client_rustls)];
    assert!(
        sides[0].codec.is_records_mode(),
        "client A not in records mode"
    );
    assert!(
        !sides[1].codec.is_records_mode(),
        "client B in records mode"
    );

    let mut model = Model {
        verdict: Verdict::Valid,
        data: Vec::new(),
        requested: 0,
        client_closes: false,
        empty_run: 0,
        stricter: false,
        key_update_run: 0,
    };
    let mut flip: Option<u16> = None;
    let mut tamper: Option<[u8; 3]> = None;
    // Client writes (or, for `None`, its close_notify) at stream offsets.
    let mut sends: Vec<(usize, Option<Vec<u8>>)> = Vec::new();
    let mut ops = 0;
    // The op list ends at a 0xFF byte (or the end of the input).
    while !inp.is_empty() && ops < 64 {
        ops += 1;
        let op = inp.u8();
        if op == 0xFF {
            break;
        }
        match op % 11 {
            // Application data: length, padding, head bytes from the input.
            0 => {
                let len = usize::from(inp.u16()) % 16_600;
                let pad = usize::from(inp.u16()) % 600;
                let n = usize::from(inp.u8());
                let payload = filler(inp.bytes(n), len, op);
                let bad = both(&mut sides, &mut flip, &mut tamper, |s| {
                    s.seal(23, &payload, pad)
                });
                model.record(len);
                model.key_update_run = 0;
                if let Some(v) = bad {
                    model.mark(v);
                } else if len + 1 + pad > 16_385 {
                    // RFC 8446 §5.2: TLSInnerPlaintext at most 2^14 + 1 bytes.
                    model.mark(Verdict::Bad);
                }
                if model.valid() {
                    model.data.extend_from_slice(&payload);
                }
            }
            // Any inner content type with arbitrary content and padding.
            1 => {
                let typ = inp.u8();
                let n = usize::from(inp.u8());
                let content = inp.bytes(n).to_vec();
                let pad = usize::from(inp.u8() % 8);
                let bad = both(&mut sides, &mut flip, &mut tamper, |s| {
                    s.seal(typ, &content, pad)
                });
                // Type 0: the real type is the last non-zero content byte, the payload
                // what comes before it (all zeros: no type at all).
                let (real, payload) = match typ {
                    0 => match content.iter().rposition(|b| *b != 0) {
                        Some(i) => (content[i], &content[..i]),
                        None => (0, &content[..0]),
                    },
                    _ => (typ, &content[..]),
                };
                model.record(payload.len());
                match (bad, real) {
                    (Some(v), _) => model.mark(v),
                    (None, 23) => {
                        model.key_update_run = 0;
                        if model.valid() {
                            model.data.extend_from_slice(payload);
                        }
                    }
                    // An empty handshake record (RFC 8446 §5.1: "MUST NOT send zero-length
                    // fragments of Handshake types"): records mode rejects it, rustls lets
                    // it pass as one of its empty fragments. Deliberately stricter.
                    (None, 22) if payload.is_empty() => {
                        if model.valid() {
                            model.stricter = true;
                        }
                        model.mark(Verdict::Bad);
                    }
                    (None, 21 | 22) => model.mark(Verdict::Unknown),
                    (None, _) => model.mark(Verdict::Bad),
                }
            }
            // KeyUpdate: requested or not, optional trailing bytes, optional split.
            2 => {
                let flags = inp.u8();
                let requested = flags & 1 == 1;
                let trailing = if flags & 2 != 0 {
                    filler(&[], 1 + usize::from(flags >> 4), 24)
                } else {
                    Vec::new()
                };
                let mut msg = vec![24, 0, 0, 1, u8::from(requested)];
                msg.extend_from_slice(&trailing);
                let split = usize::from(flags >> 2 & 3);
                let was_valid = model.valid();
                let bad = if split == 0 {
                    both(&mut sides, &mut flip, &mut tamper, |s| s.seal(22, &msg, 0))
                } else {
                    let (a, b) = msg.split_at(split.min(msg.len() - 1));
                    let first = both(&mut sides, &mut flip, &mut tamper, |s| s.seal(22, a, 0));
                    first.or(both(&mut sides, &mut flip, &mut tamper, |s| {
                        s.seal(22, b, 0)
                    }))
                };
                for side in sides.iter_mut() {
                    side.server.key_update_tx();
                }
                model.record(msg.len());
                model.key_update_run += 1;
                if let Some(v) = bad {
                    model.mark(v);
                } else if model.key_update_run > 32 {
                    model.mark(Verdict::Bad);
                } else if !trailing.is_empty() {
                    // RFC 8446 §5.1: a KeyUpdate must end its record.
                    model.mark(Verdict::Bad);
                } else if was_valid && requested {
                    model.requested += 1;
                }
            }
            // NewSessionTicket: well formed, or an arbitrary body.
            3 => {
                let kind = inp.u8();
                let body = if kind & 1 == 0 {
                    let nonce_len = usize::from(inp.u8() % 16);
                    let nonce = inp.bytes(nonce_len).to_vec();
                    let ticket = filler(inp.bytes(8), 1 + usize::from(inp.u8()), kind);
                    let mut b = Vec::new();
                    b.extend_from_slice(&3600u32.to_be_bytes());
                    b.extend_from_slice(&[1, 2, 3, 4]);
                    b.push(nonce.len() as u8);
                    b.extend_from_slice(&nonce);
                    b.extend_from_slice(&(ticket.len() as u16).to_be_bytes());
                    b.extend_from_slice(&ticket);
                    b.extend_from_slice(&[0, 0]);
                    b
                } else {
                    let n = usize::from(inp.u8());
                    inp.bytes(n).to_vec()
                };
                let mut msg = vec![4];
                msg.extend_from_slice(&(body.len() as u32).to_be_bytes()[1..]);
                msg.extend_from_slice(&body);
                let bad = both(&mut sides, &mut flip, &mut tamper, |s| s.seal(22, &msg, 0));
                model.record(msg.len());
                if let Some(v) = bad {
                    model.mark(v);
                } else if kind & 1 == 1 {
                    model.mark(Verdict::Unknown);
                }
            }
            // Raw bytes: garbage, a truncated record, an oversized length.
            4 => {
                let n = usize::from(inp.u8());
                let raw = inp.bytes(n).to_vec();
                if !raw.is_empty() {
                    for side in sides.iter_mut() {
                        side.stream.extend_from_slice(&raw);
                    }
                    // Raw bytes never pass the AEAD: a bad or truncated record.
                    model.mark(Verdict::Bad);
                }
            }
            // Flip a bit in the next sealed record's ciphertext.
            5 => flip = Some(inp.u16()),
            // Rewrite the next sealed record's type and version.
            6 => tamper = Some([inp.u8(), inp.u8(), inp.u8()]),
            // An alert.
            7 => {
                let level = inp.u8();
                let desc = inp.u8();
                let bad = both(&mut sides, &mut flip, &mut tamper, |s| {
                    s.seal(21, &[level, desc], 0)
                });
                model.record(2);
                if let Some(v) = bad {
                    model.mark(v);
                } else if level == 0 || level > 2 {
                    // RFC 8446 §6: warning (1) or fatal (2) only.
                    model.mark(Verdict::Bad);
                } else if desc == 0 {
                    model.mark(Verdict::Closed);
                } else if level == 1 && desc == 90 {
                    // user_canceled: ignored, a few times.
                    model.mark(Verdict::Unknown);
                } else {
                    model.mark(Verdict::Bad);
                }
            }
            // The client sends application data once the stream reaches this point.
            8 => {
                let len = usize::from(inp.u16() % 20_000);
                sends.push((sides[0].stream.len(), Some(filler(&[], len, op))));
            }
            // The client sends its close_notify once the stream reaches this point; after
            // it, it answers no KeyUpdate (`check_written`).
            10 => {
                sends.push((sides[0].stream.len(), None));
                model.client_closes = true;
            }
            // Several small application-data records (a burst of ticks).
            _ => {
                let count = 1 + usize::from(inp.u8() % 32);
                let len = usize::from(inp.u8());
                for i in 0..count {
                    let payload = filler(&[], len, i as u8);
                    let bad = both(&mut sides, &mut flip, &mut tamper, |s| {
                        s.seal(23, &payload, 0)
                    });
                    model.record(len);
                    model.key_update_run = 0;
                    if let Some(v) = bad {
                        model.mark(v);
                    }
                    if model.valid() {
                        model.data.extend_from_slice(&payload);
                    }
                }
            }
        }
    }
    assert_eq!(sides[0].stream.len(), sides[1].stream.len());

    // Piece sizes and slice sizes: the rest of the input, in u16 pairs.
    let mut chunks = Vec::new();
    let mut slices = Vec::new();
    while !inp.is_empty() && chunks.len() < 64 {
        chunks.push(inp.u16());
        slices.push(inp.u16());
    }
    if chunks.is_empty() {
        chunks.push(4096);
        slices.push(4096);
    }
    for side in sides.iter_mut() {
        feed(side, &chunks, &slices, out_cap, &sends);
    }
    let kus = [check_written(&mut sides[0]), check_written(&mut sides[1])];

    let a = &sides[0];
    let b = &sides[1];
    match model.verdict {
        Verdict::Valid => {
            assert_eq!(a.delivered, model.data, "delivered data ({:?})", a.error);
            assert!(
                matches!(a.error, Some(TlsError::UnexpectedEof)),
                "end without close_notify: {:?}",
                a.error
            );
            assert_ku(kus[0], &model);
        }
        Verdict::Closed => {
            assert_eq!(a.delivered, model.data, "delivered data ({:?})", a.error);
            assert!(
                a.peer_closed && a.error.is_none(),
                "close_notify: {:?}",
                a.error
            );
            assert_ku(kus[0], &model);
        }
        Verdict::Bad => {
            assert_eq!(a.delivered, model.data, "delivered data ({:?})", a.error);
            assert!(a.error.is_some() && !a.peer_closed, "a bad record accepted");
            assert_ku(kus[0], &model);
        }
        Verdict::Unknown => {
            assert!(a.delivered.starts_with(&model.data), "delivered data");
            assert!(
                model.client_closes || kus[0] >= model.requested,
                "KeyUpdate answers"
            );
        }
    }
    if model.stricter {
        // rustls may go on past the record records mode rejects on purpose.
        assert!(
            b.delivered.starts_with(&a.delivered),
            "rustls delivered other data"
        );
        return;
    }
    assert!(
        a.delivered == b.delivered,
        "records mode and rustls delivered different data: {} bytes ({:?}) vs {} ({:?})",
        a.delivered.len(),
        a.error,
        b.delivered.len(),
        b.error
    );
    assert_eq!(
        a.error.is_some(),
        b.error.is_some(),
        "records mode {:?} vs rustls {:?}",
        a.error,
        b.error
    );
    assert_eq!(
        a.peer_closed, b.peer_closed,
        "close_notify seen differently"
    );
    // Not compared: how many KeyUpdates each answered with. Records mode answers each
    // KeyUpdate(update_requested) at once; rustls queues one answer and sends it before
    // its next application data (RFC 8446 §4.6.3 allows both; a silent peer answers
    // several requests with one update). `check_written` verified both outputs.
    let _ = kus[1];
}
