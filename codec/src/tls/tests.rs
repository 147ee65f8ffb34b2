//! TLS codec tests: a client and a server codec talking in memory, with certificates
//! made by rcgen and rustls's `ring` provider.

use std::borrow::ToOwned;
use std::cell::Cell;
use std::sync::Arc;
use std::vec;
use std::vec::Vec;

use proptest::prelude::*;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
use rustls::{ClientConfig, RootCertStore, ServerConfig};

use super::{Status, TlsCodec, TlsError, TlsErrorKind};
use crate::buf::WriteBuf;

type Codec = TlsCodec<Vec<u8>>;
type Out = WriteBuf<Vec<u8>>;

struct Pki {
    cert: CertificateDer<'static>,
    key: PrivatePkcs8KeyDer<'static>,
}

/// A self-signed certificate for `name`, its subject (and issuer) named `cn`.
fn pki_cn(name: &str, cn: &str) -> Pki {
    let mut params = rcgen::CertificateParams::new(vec![name.into()]).unwrap();
    params.distinguished_name = rcgen::DistinguishedName::new();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, cn);
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = params.self_signed(&key).unwrap();
    Pki {
        cert: cert.der().clone(),
        key: PrivatePkcs8KeyDer::from(key.serialize_der()),
    }
}

fn pki(name: &str) -> Pki {
    pki_cn(name, "tickwire test")
}

std::thread_local! {
    /// Whether the configs this thread builds allow records mode.
    static RECORDS: Cell<bool> = const { Cell::new(false) };
}

/// Run `f` with rustls's record layer throughout, then with records mode (the codec's
/// own TLS 1.3 record layer after the handshake).
fn both(f: impl Fn()) {
    for records in [false, true] {
        RECORDS.with(|r| r.set(records));
        f();
    }
    RECORDS.with(|r| r.set(false));
}

fn records_mode() -> bool {
    RECORDS.with(Cell::get)
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn server_config(p: &Pki) -> Arc<ServerConfig> {
    let mut config = ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![p.cert.clone()],
            PrivateKeyDer::Pkcs8(p.key.clone_key()),
        )
        .unwrap();
    config.enable_secret_extraction = records_mode();
    Arc::new(config)
}

fn client_config(trusted: &Pki) -> Arc<ClientConfig> {
    let mut roots = RootCertStore::empty();
    roots.add(trusted.cert.clone()).unwrap();
    let mut config = ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.enable_secret_extraction = records_mode();
    Arc::new(config)
}

fn pair_with(trusted: &Pki, served: &Pki, name: &str) -> (Codec, Codec) {
    let client = TlsCodec::client(
        client_config(trusted),
        ServerName::try_from(name.to_owned()).unwrap(),
        vec![0u8; 64 * 1024],
    )
    .unwrap();
    let server = TlsCodec::server(server_config(served), vec![0u8; 64 * 1024]).unwrap();
    (client, server)
}

fn out() -> Out {
    WriteBuf::new(vec![0u8; 64 * 1024])
}

/// Move everything `out` holds into `to`'s incoming buffer.
fn deliver(out: &mut Out, to: &mut Codec) {
    let n = to.handle_incoming(out.data());
    assert_eq!(n, out.len(), "incoming buffer full");
    out.consume(n);
}

/// Run both handshakes to completion (or the first error).
fn handshake(c: &mut Codec, co: &mut Out, s: &mut Codec, so: &mut Out) -> Result<(), TlsError> {
    for _ in 0..20 {
        let cs = c.handshake(co)?;
        deliver(co, s);
        let ss = s.handshake(so)?;
        deliver(so, c);
        if cs == Status::Ready && ss == Status::Ready && co.is_empty() && so.is_empty() {
            return Ok(());
        }
    }
    panic!("handshake did not finish");
}

/// Read everything available into a Vec, `chunk` bytes of room at a time.
fn read_all(codec: &mut Codec, o: &mut Out, chunk: usize) -> Result<(Vec<u8>, Status), TlsError> {
    let mut got = Vec::new();
    let mut buf = vec![0u8; chunk];
    loop {
        match codec.read(&mut buf, o)? {
            Status::Data(n) => got.extend_from_slice(&buf[..n]),
            other => return Ok((got, other)),
        }
    }
}

fn connected() -> (Codec, Out, Codec, Out) {
    let p = pki("localhost");
    let (mut c, mut s) = pair_with(&p, &p, "localhost");
    let (mut co, mut so) = (out(), out());
    handshake(&mut c, &mut co, &mut s, &mut so).unwrap();
    if records_mode() {
        // The client takes the server's session tickets; then both switch on their
        // next call.
        for _ in 0..2 {
            assert_eq!(read_all(&mut c, &mut co, 64).unwrap().1, Status::NeedMore);
            assert_eq!(read_all(&mut s, &mut so, 64).unwrap().1, Status::NeedMore);
        }
        assert!(c.is_records_mode() && s.is_records_mode());
        assert!(co.is_empty() && so.is_empty());
    }
    assert!(!records_mode() || c.is_records_mode());
    (c, co, s, so)
}

#[test]
fn echo_both_directions_small_and_multi_record() {
    both(|| {
        let (mut c, mut co, mut s, mut so) = connected();
        assert!(!c.is_handshaking() && !s.is_handshaking());
        assert_eq!(c.protocol_version(), Some(rustls::ProtocolVersion::TLSv1_3));

        c.encrypt(b"hello server", &mut co).unwrap();
        deliver(&mut co, &mut s);
        let (got, st) = read_all(&mut s, &mut so, 4096).unwrap();
        assert_eq!(got, b"hello server");
        assert_eq!(st, Status::NeedMore);

        // 100 000 bytes: several records; read through a 1000-byte slice (spill used).
        let big: Vec<u8> = (0..100_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut got = Vec::new();
        for part in big.chunks(30_000) {
            s.encrypt(part, &mut so).unwrap();
            deliver(&mut so, &mut c);
            got.extend(read_all(&mut c, &mut co, 1000).unwrap().0);
        }
        assert_eq!(got, big);
    });
}

#[test]
fn records_arriving_during_encrypt_are_kept_for_read() {
    both(|| {
        let (mut c, mut co, mut s, mut so) = connected();
        s.encrypt(b"first", &mut so).unwrap();
        deliver(&mut so, &mut c);
        // The client sends before reading: rustls decrypts the record and the codec
        // keeps it; records mode leaves it encrypted in the incoming buffer.
        c.encrypt(b"ping", &mut co).unwrap();
        assert_eq!(c.has_plaintext(), !records_mode());
        let (got, _) = read_all(&mut c, &mut co, 64).unwrap();
        assert_eq!(got, b"first");
        deliver(&mut co, &mut s);
        assert_eq!(read_all(&mut s, &mut so, 64).unwrap().0, b"ping");
    });
}

#[test]
fn records_split_byte_by_byte() {
    both(|| {
        let (mut c, mut co, mut s, mut so) = connected();
        c.encrypt(b"split me", &mut co).unwrap();
        let wire = co.data().to_vec();
        co.clear();
        let mut got = Vec::new();
        let mut buf = [0u8; 64];
        for b in wire {
            s.handle_incoming(&[b]);
            if let Status::Data(n) = s.read(&mut buf, &mut so).unwrap() {
                got.extend_from_slice(&buf[..n]);
            }
        }
        assert_eq!(got, b"split me");
    });
}

#[test]
fn close_notify_both_ways() {
    both(|| {
        let (mut c, mut co, mut s, mut so) = connected();
        c.encrypt(b"last words", &mut co).unwrap();
        c.close(&mut co).unwrap();
        assert!(c.is_close_sent());
        assert_eq!(c.encrypt(b"more", &mut co), Err(TlsError::NotWritable));
        deliver(&mut co, &mut s);
        let (got, st) = read_all(&mut s, &mut so, 64).unwrap();
        assert_eq!(got, b"last words");
        assert_eq!(st, Status::PeerClosed);
        // Half-closed: the server may still send, then closes.
        s.encrypt(b"bye", &mut so).unwrap();
        s.close(&mut so).unwrap();
        assert!(s.is_closed());
        deliver(&mut so, &mut c);
        let (got, st) = read_all(&mut c, &mut co, 64).unwrap();
        assert_eq!(got, b"bye");
        assert_eq!(st, Status::PeerClosed);
        assert!(c.is_closed());
        // A TCP end after close_notify is the normal end.
        c.handle_eof();
        assert_eq!(c.read(&mut [0u8; 8], &mut co), Ok(Status::PeerClosed));
    });
}

#[test]
fn eof_without_close_notify_is_truncation() {
    both(|| {
        let (mut c, mut co, mut s, mut so) = connected();
        c.encrypt(b"cut short", &mut co).unwrap();
        // Half a record, then the stream ends.
        let half = co.len() / 2;
        s.handle_incoming(&co.data()[..half]);
        s.handle_eof();
        let err = s.read(&mut [0u8; 64], &mut so).unwrap_err();
        assert_eq!(err, TlsError::UnexpectedEof);
        assert_eq!(err.kind(), TlsErrorKind::Truncated);
        // The error sticks.
        assert_eq!(
            s.read(&mut [0u8; 64], &mut so),
            Err(TlsError::UnexpectedEof)
        );
    });
}

#[test]
fn garbled_record_is_a_decrypt_error() {
    both(|| {
        let (mut c, mut co, mut s, mut so) = connected();
        c.encrypt(b"integrity matters", &mut co).unwrap();
        let mut wire = co.data().to_vec();
        let last = wire.len() - 3;
        wire[last] ^= 0x40;
        s.handle_incoming(&wire);
        let err = s.read(&mut [0u8; 64], &mut so).unwrap_err();
        assert_eq!(err.kind(), TlsErrorKind::Decrypt, "{err:?}");
        // The server told the client with an alert.
        deliver(&mut so, &mut c);
        let err = c.read(&mut [0u8; 64], &mut co).unwrap_err();
        assert_eq!(err.kind(), TlsErrorKind::AlertReceived, "{err:?}");
    });
}

#[test]
fn garbage_instead_of_a_client_hello() {
    let p = pki("localhost");
    let mut s = TlsCodec::server(server_config(&p), vec![0u8; 4096]).unwrap();
    let mut so = out();
    s.handle_incoming(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    let err = s.handshake(&mut so).unwrap_err();
    assert_eq!(err.kind(), TlsErrorKind::Corrupt, "{err:?}");
}

#[test]
fn untrusted_certificate_and_wrong_name() {
    let served = pki("localhost");
    let other = pki_cn("localhost", "someone else");
    let (mut c, mut s) = pair_with(&other, &served, "localhost");
    let err = handshake(&mut c, &mut out(), &mut s, &mut out()).unwrap_err();
    assert_eq!(err.kind(), TlsErrorKind::UnknownIssuer, "{err:?}");

    let (mut c, mut s) = pair_with(&served, &served, "example.com");
    let err = handshake(&mut c, &mut out(), &mut s, &mut out()).unwrap_err();
    assert_eq!(err.kind(), TlsErrorKind::NameMismatch, "{err:?}");
}

#[test]
fn no_application_data_before_the_handshake() {
    let p = pki("localhost");
    let (mut c, _s) = pair_with(&p, &p, "localhost");
    let mut co = out();
    assert_eq!(c.encrypt(b"early", &mut co), Err(TlsError::NotWritable));
    // The attempt started the handshake: the ClientHello is out.
    assert!(!co.is_empty());
    assert_eq!(c.handshake(&mut co), Ok(Status::NeedMore));
}

#[test]
fn small_output_buffers() {
    both(|| {
        let p = pki("localhost");
        let (mut c, mut s) = pair_with(&p, &p, "localhost");
        // 128-byte output buffers: handshake records queue behind them, in order. (A
        // write in records mode needs room for its record, a KeyUpdate answer and
        // close_notify: about 100 bytes for a short one.)
        let (mut co, mut so) = (WriteBuf::new(vec![0u8; 128]), WriteBuf::new(vec![0u8; 128]));
        for _ in 0..2000 {
            let cs = c.handshake(&mut co).unwrap();
            deliver(&mut co, &mut s);
            let ss = s.handshake(&mut so).unwrap();
            deliver(&mut so, &mut c);
            if cs == Status::Ready && ss == Status::Ready && !c.has_pending_output() {
                break;
            }
        }
        assert!(!c.is_handshaking() && !s.is_handshaking());
        // Application data that does not fit is refused whole, the connection unchanged.
        let err = c.encrypt(&[1u8; 100], &mut co).unwrap_err();
        assert!(matches!(err, TlsError::OutputFull { .. }), "{err:?}");
        c.encrypt(b"fits", &mut co).unwrap();
        deliver(&mut co, &mut s);
        assert_eq!(read_all(&mut s, &mut so, 64).unwrap().0, b"fits");
    });
}

#[test]
fn incoming_buffer_too_small_is_an_error() {
    both(|| {
        let p = pki("localhost");
        let mut c = TlsCodec::client(
            client_config(&p),
            ServerName::try_from("localhost").unwrap(),
            vec![0u8; 256],
        )
        .unwrap();
        let mut s = TlsCodec::server(server_config(&p), vec![0u8; 64 * 1024]).unwrap();
        let (mut co, mut so) = (out(), out());
        c.handshake(&mut co).unwrap();
        deliver(&mut co, &mut s);
        s.handshake(&mut so).unwrap();
        // The server's flight is larger than 256 bytes: feed what fits.
        let mut result = Ok(Status::NeedMore);
        while !so.is_empty() && result.is_ok() {
            let n = c.handle_incoming(so.data());
            so.consume(n);
            result = c.handshake(&mut co);
        }
        assert_eq!(result, Err(TlsError::IncomingFull));
    });
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Arbitrary bytes, in arbitrary pieces, into a server and into a connected client:
    /// a value or a typed error every time, never a panic.
    #[test]
    fn arbitrary_input_never_panics(
        data in proptest::collection::vec(any::<u8>(), 0..3000),
        cut in 1usize..200,
        header in any::<bool>(),
        records in any::<bool>(),
    ) {
        RECORDS.with(|r| r.set(records));
        let p = pki("localhost");
        let mut s = TlsCodec::server(server_config(&p), vec![0u8; 32 * 1024]).unwrap();
        let (mut c, mut co, _, _) = connected();
        let mut so = out();
        let mut input = Vec::new();
        if header {
            // A plausible record header, so the record layer gets past the framing.
            input.extend_from_slice(&[0x17, 0x03, 0x03, (data.len() >> 8) as u8, data.len() as u8]);
        }
        input.extend_from_slice(&data);
        let mut buf = [0u8; 512];
        for piece in input.chunks(cut) {
            s.handle_incoming(piece);
            let _ = s.handshake(&mut so);
            c.handle_incoming(piece);
            let _ = c.read(&mut buf, &mut co);
            so.clear();
            co.clear();
        }
        s.handle_eof();
        c.handle_eof();
        prop_assert!(s.handshake(&mut so).is_err());
        prop_assert!(c.read(&mut buf, &mut co).is_err());
        RECORDS.with(|r| r.set(false));
    }
}

/// The time source comes with the caller's config (as it must without std): a clock
/// that says 1970 makes the certificate not valid yet; no clock at all is an error.
#[test]
fn time_comes_from_the_config() {
    use rustls::pki_types::UnixTime;
    use rustls::time_provider::TimeProvider;

    #[derive(Debug)]
    struct Clock(Option<UnixTime>);
    impl TimeProvider for Clock {
        fn current_time(&self) -> Option<UnixTime> {
            self.0
        }
    }

    let p = pki("localhost");
    for (clock, expected) in [
        (
            Some(UnixTime::since_unix_epoch(core::time::Duration::from_secs(
                86_400,
            ))),
            TlsErrorKind::Expired,
        ),
        (None, TlsErrorKind::Other),
    ] {
        let mut roots = RootCertStore::empty();
        roots.add(p.cert.clone()).unwrap();
        let config = ClientConfig::builder_with_details(provider(), Arc::new(Clock(clock)))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
        let mut c = TlsCodec::client(
            Arc::new(config),
            ServerName::try_from("localhost").unwrap(),
            vec![0u8; 64 * 1024],
        )
        .unwrap();
        let mut s = TlsCodec::server(server_config(&p), vec![0u8; 64 * 1024]).unwrap();
        let err = handshake(&mut c, &mut out(), &mut s, &mut out()).unwrap_err();
        assert_eq!(err.kind(), expected, "{err:?}");
        if clock.is_none() {
            assert_eq!(err, TlsError::Rustls(rustls::Error::FailedToGetCurrentTime));
        }
    }
}

/// Records mode against rustls's own (buffered) server: session tickets arriving after
/// the switch, and key updates both ways, many times (the server asks for ours each
/// time), with data before and after each one.
#[test]
fn records_mode_key_updates_and_tickets_against_rustls() {
    use std::io::{Read, Write};
    RECORDS.with(|r| r.set(true));
    let p = pki("localhost");
    let mut server = rustls::ServerConnection::new(server_config(&p)).unwrap();
    let mut c = TlsCodec::client(
        client_config(&p),
        ServerName::try_from("localhost").unwrap(),
        vec![0u8; 64 * 1024],
    )
    .unwrap();
    let mut co = out();
    // Bytes from the rustls server to the client codec.
    let to_client = |server: &mut rustls::ServerConnection, c: &mut Codec| {
        let mut wire = Vec::new();
        while server.wants_write() {
            server.write_tls(&mut wire).unwrap();
        }
        assert_eq!(c.handle_incoming(&wire), wire.len());
    };
    let to_server = |co: &mut Out, server: &mut rustls::ServerConnection| {
        let mut data = co.data();
        while !data.is_empty() {
            server.read_tls(&mut data).unwrap();
            server.process_new_packets().unwrap();
        }
        co.clear();
    };
    // Handshake; the client switches before the server's tickets reach it.
    for _ in 0..10 {
        c.handshake(&mut co).unwrap();
        to_server(&mut co, &mut server);
        if !server.is_handshaking() && !c.is_handshaking() {
            break;
        }
        to_client(&mut server, &mut c);
    }
    assert!(!server.is_handshaking() && !c.is_handshaking());
    assert_eq!(read_all(&mut c, &mut co, 64).unwrap().1, Status::NeedMore);
    assert!(c.is_records_mode());
    // The tickets (and a first message) arrive in records mode.
    server.writer().write_all(b"welcome").unwrap();
    to_client(&mut server, &mut c);
    assert_eq!(read_all(&mut c, &mut co, 64).unwrap().0, b"welcome");
    for round in 0..20u8 {
        server.writer().write_all(&[b'a', round]).unwrap();
        server.refresh_traffic_keys().unwrap();
        server.writer().write_all(&[b'b', round]).unwrap();
        to_client(&mut server, &mut c);
        let (got, _) = read_all(&mut c, &mut co, 3).unwrap();
        assert_eq!(got, [b'a', round, b'b', round]);
        // Our KeyUpdate answer went out; what we send next is under the new key.
        assert!(!co.is_empty());
        c.encrypt(&[b'c', round], &mut co).unwrap();
        to_server(&mut co, &mut server);
        let mut got = [0u8; 2];
        server.reader().read_exact(&mut got).unwrap();
        assert_eq!(got, [b'c', round]);
    }
    // close_notify both ways.
    c.close(&mut co).unwrap();
    to_server(&mut co, &mut server);
    server.send_close_notify();
    to_client(&mut server, &mut c);
    assert_eq!(read_all(&mut c, &mut co, 64).unwrap().1, Status::PeerClosed);
    assert!(c.is_closed());
    RECORDS.with(|r| r.set(false));
}

/// In records mode, framing violations are typed errors: an oversized record, a
/// plaintext alert or handshake record after the handshake, a bad legacy version.
#[test]
fn records_mode_rejects_bad_framing() {
    RECORDS.with(|r| r.set(true));
    let headers: [&[u8]; 4] = [
        &[0x17, 0x03, 0x03, 0x41, 0x01],
        &[0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x28],
        &[0x16, 0x03, 0x03, 0x00, 0x04, 0x18, 0x00, 0x00, 0x00],
        &[0x17, 0x07, 0x03, 0x00, 0x20],
    ];
    for bad in headers {
        let (mut c, mut co, _, _) = connected();
        c.handle_incoming(bad);
        let err = c.read(&mut [0u8; 64], &mut co).unwrap_err();
        assert_eq!(err.kind(), TlsErrorKind::Corrupt, "{bad:?}: {err:?}");
        // A fatal alert went out, and the error sticks.
        assert!(!co.is_empty());
        assert!(c.read(&mut [0u8; 64], &mut co).is_err());
    }
    RECORDS.with(|r| r.set(false));
}

/// A close_notify that meets a full output buffer is refused whole and goes out
/// intact on the retry (its sequence number is not spent on a record that was lost).
#[test]
fn close_notify_into_a_full_buffer_is_retried_intact() {
    both(|| {
        let (mut c, mut co, mut s, mut so) = connected();
        let mut tiny: Out = WriteBuf::new(vec![0u8; 8]);
        assert!(matches!(
            c.close(&mut tiny),
            Err(TlsError::OutputFull { .. })
        ));
        assert!(!c.is_close_sent());
        c.close(&mut co).unwrap();
        deliver(&mut co, &mut s);
        assert_eq!(read_all(&mut s, &mut so, 64).unwrap().1, Status::PeerClosed);
    });
}

/// Plaintext of good records that arrive together with a bad one is delivered before
/// the error (found by the `tls_records` fuzz target: the read that met the bad record
/// returned only the error, and the good records' bytes already copied were lost). With
/// an empty slice the good bytes wait (`has_plaintext`) and the error still comes last.
#[test]
fn good_records_before_a_bad_one_are_delivered_first() {
    both(|| {
        for empty_first in [false, true] {
            let (mut c, mut co, mut s, mut so) = connected();
            s.encrypt(b"before", &mut so).unwrap();
            let good = so.len();
            s.encrypt(b"after", &mut so).unwrap();
            let mut wire = so.data().to_vec();
            wire[good + 7] ^= 1;
            c.handle_incoming(&wire);
            let mut buf = [0u8; 64];
            if empty_first {
                assert_eq!(c.read(&mut [], &mut co), Ok(Status::NeedMore));
                assert!(c.has_plaintext());
            }
            assert_eq!(c.read(&mut buf, &mut co), Ok(Status::Data(6)));
            assert_eq!(&buf[..6], b"before");
            let err = c.read(&mut buf, &mut co).unwrap_err();
            assert_eq!(err.kind(), TlsErrorKind::Decrypt, "{err:?}");
            assert!(c.read(&mut buf, &mut co).is_err());
            assert!(c.error().is_some() && !c.has_plaintext());
        }
    });
}

/// A client codec connected to a rustls server whose traffic keys the test holds, so
/// it can seal any record (inner type, content) the peer could send.
struct Sealer {
    kernel: rustls::kernel::KernelConnection<rustls::server::ServerConnectionData>,
    suite: &'static rustls::Tls13CipherSuite,
    enc: std::boxed::Box<dyn rustls::crypto::cipher::MessageEncrypter>,
    seq: u64,
    dec: std::boxed::Box<dyn rustls::crypto::cipher::MessageDecrypter>,
    rx_seq: u64,
}

impl Sealer {
    fn seal(&mut self, typ: rustls::ContentType, body: &[u8]) -> Vec<u8> {
        let msg = rustls::crypto::cipher::OutboundPlainMessage {
            typ,
            version: rustls::ProtocolVersion::TLSv1_2,
            payload: rustls::crypto::cipher::OutboundChunks::Single(body),
        };
        let rec = self.enc.encrypt(msg, self.seq).unwrap();
        self.seq += 1;
        rec.encode()
    }

    /// Open one record's ciphertext from the client; its inner type.
    fn open(&mut self, ciphertext: &mut [u8]) -> rustls::ContentType {
        let msg = rustls::crypto::cipher::InboundOpaqueMessage::new(
            rustls::ContentType::ApplicationData,
            rustls::ProtocolVersion::TLSv1_2,
            ciphertext,
        );
        let typ = self.dec.decrypt(msg, self.rx_seq).unwrap().typ;
        self.rx_seq += 1;
        typ
    }

    /// Open every record of `wire` (the client's output) in turn, switching to the next
    /// key after each KeyUpdate; their inner types.
    fn open_all(&mut self, wire: &mut [u8]) -> Vec<rustls::ContentType> {
        let mut types = Vec::new();
        let mut rest = wire;
        while !rest.is_empty() {
            let len = usize::from(u16::from_be_bytes([rest[3], rest[4]]));
            let (rec, tail) = core::mem::take(&mut rest).split_at_mut(5 + len);
            rest = tail;
            let typ = self.open(&mut rec[5..]);
            types.push(typ);
            if typ == rustls::ContentType::Handshake {
                self.update_rx();
            }
        }
        types
    }

    fn update_rx(&mut self) {
        use rustls::ConnectionTrafficSecrets as S;
        let (seq, secrets) = self.kernel.update_rx_secret().unwrap();
        self.dec = match secrets {
            S::Aes128Gcm { key, iv }
            | S::Aes256Gcm { key, iv }
            | S::Chacha20Poly1305 { key, iv } => self.suite.aead_alg.decrypter(key, iv),
            _ => panic!("unexpected suite"),
        };
        self.rx_seq = seq;
    }

    fn update_tx(&mut self) {
        let (seq, secrets) = self.kernel.update_tx_secret().unwrap();
        self.enc = sealer_enc(self.suite, secrets);
        self.seq = seq;
    }
}

fn sealer_enc(
    suite: &'static rustls::Tls13CipherSuite,
    secrets: rustls::ConnectionTrafficSecrets,
) -> std::boxed::Box<dyn rustls::crypto::cipher::MessageEncrypter> {
    use rustls::ConnectionTrafficSecrets as S;
    match secrets {
        S::Aes128Gcm { key, iv } | S::Aes256Gcm { key, iv } | S::Chacha20Poly1305 { key, iv } => {
            suite.aead_alg.encrypter(key, iv)
        }
        _ => panic!("unexpected suite"),
    }
}

/// A client codec (records mode or not, as `both` says) and a [`Sealer`] for its server.
fn sealed_peer() -> (Codec, Out, Sealer) {
    use rustls::unbuffered::ConnectionState;
    let p = pki("localhost");
    let mut config = ServerConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![p.cert.clone()],
            PrivateKeyDer::Pkcs8(p.key.clone_key()),
        )
        .unwrap();
    config.enable_secret_extraction = true;
    config.send_tls13_tickets = 0;
    let mut s = rustls::server::UnbufferedServerConnection::new(Arc::new(config)).unwrap();
    let mut c = TlsCodec::client(
        client_config(&p),
        ServerName::try_from("localhost").unwrap(),
        vec![0u8; 64 * 1024],
    )
    .unwrap();
    let mut co = out();
    let mut wire = Vec::new();
    for _ in 0..10 {
        let st = c.handshake(&mut co).unwrap();
        let mut s_in = co.data().to_vec();
        co.clear();
        let writable = loop {
            let status = s.process_tls_records(&mut s_in);
            let discard = status.discard;
            let done = match status.state.unwrap() {
                ConnectionState::EncodeTlsData(mut e) => {
                    let mut buf = vec![0u8; 16 * 1024];
                    let n = e.encode(&mut buf).unwrap();
                    wire.extend_from_slice(&buf[..n]);
                    None
                }
                ConnectionState::TransmitTlsData(t) => {
                    t.done();
                    None
                }
                ConnectionState::BlockedHandshake => Some(false),
                ConnectionState::WriteTraffic(_) => Some(true),
                other => panic!("{other:?}"),
            };
            s_in.drain(..discard);
            if let Some(w) = done {
                break w;
            }
        };
        if st == Status::Ready && writable {
            break;
        }
        c.handle_incoming(&wire);
        wire.clear();
    }
    assert_eq!(c.read(&mut [], &mut co), Ok(Status::NeedMore));
    assert_eq!(c.is_records_mode(), records_mode());
    let (secrets, kernel) = s.dangerous_into_kernel_connection().unwrap();
    let rustls::SupportedCipherSuite::Tls13(suite) = kernel.negotiated_cipher_suite() else {
        panic!("TLS 1.2");
    };
    let (rx_seq, rx) = secrets.rx;
    let dec = match rx {
        rustls::ConnectionTrafficSecrets::Aes128Gcm { key, iv }
        | rustls::ConnectionTrafficSecrets::Aes256Gcm { key, iv }
        | rustls::ConnectionTrafficSecrets::Chacha20Poly1305 { key, iv } => {
            suite.aead_alg.decrypter(key, iv)
        }
        _ => panic!("unexpected suite"),
    };
    let sealer = Sealer {
        kernel,
        suite,
        enc: sealer_enc(suite, secrets.tx.1),
        seq: secrets.tx.0,
        dec,
        rx_seq,
    };
    (c, co, sealer)
}

/// Alerts as rustls has them (found by the `tls_records` differential): a close_notify
/// with an unknown level (not warning or fatal) is an error, and user_canceled warnings
/// are ignored at most four times.
#[test]
fn alert_levels_and_warning_limit() {
    use rustls::ContentType::{Alert, ApplicationData};
    both(|| {
        let (mut c, mut co, mut seal) = sealed_peer();
        c.handle_incoming(&seal.seal(ApplicationData, b"x"));
        c.handle_incoming(&seal.seal(Alert, &[0, 0]));
        assert_eq!(c.read(&mut [0u8; 8], &mut co), Ok(Status::Data(1)));
        let err = c.read(&mut [0u8; 8], &mut co).unwrap_err();
        assert_eq!(err.kind(), TlsErrorKind::AlertReceived, "{err:?}");
        assert!(!c.is_peer_closed());

        let (mut c, mut co, mut seal) = sealed_peer();
        for _ in 0..4 {
            c.handle_incoming(&seal.seal(Alert, &[1, 90]));
        }
        c.handle_incoming(&seal.seal(Alert, &[1, 0]));
        assert_eq!(c.read(&mut [0u8; 8], &mut co), Ok(Status::PeerClosed));

        let (mut c, mut co, mut seal) = sealed_peer();
        for _ in 0..5 {
            c.handle_incoming(&seal.seal(Alert, &[1, 90]));
        }
        let err = c.read(&mut [0u8; 8], &mut co).unwrap_err();
        assert_eq!(
            err,
            TlsError::Rustls(rustls::Error::PeerMisbehaved(
                rustls::PeerMisbehaved::TooManyWarningAlertsReceived
            ))
        );
    });
}

/// At most 32 KeyUpdates in a row without application data between them (rustls's and
/// BoringSSL's limit; records mode had none and answered every one).
#[test]
fn key_updates_without_data_are_limited() {
    use rustls::ContentType::{ApplicationData, Handshake};
    both(|| {
        for (with_data, limit_hit) in [(true, false), (false, true)] {
            let (mut c, mut co, mut seal) = sealed_peer();
            for _ in 0..33 {
                if with_data {
                    c.handle_incoming(&seal.seal(ApplicationData, b"d"));
                }
                c.handle_incoming(&seal.seal(Handshake, &[24, 0, 0, 1, 0]));
                seal.update_tx();
            }
            c.handle_incoming(&seal.seal(ApplicationData, b"end"));
            let got = read_all(&mut c, &mut co, 64);
            if limit_hit {
                assert_eq!(
                    got.unwrap_err(),
                    TlsError::Rustls(rustls::Error::PeerMisbehaved(
                        rustls::PeerMisbehaved::TooManyKeyUpdateRequests
                    ))
                );
            } else {
                let (data, _) = got.unwrap();
                assert_eq!(data.len(), 36);
            }
        }
    });
}

/// At most 32 records with an empty plaintext in a row (found by the `tls_records`
/// differential: rustls stops there, records mode had no limit).
#[test]
fn empty_records_in_a_row_are_limited() {
    use rustls::ContentType::ApplicationData;
    both(|| {
        for (empties, ok) in [(32, true), (33, false)] {
            let (mut c, mut co, mut seal) = sealed_peer();
            c.handle_incoming(&seal.seal(ApplicationData, b"a"));
            for _ in 0..empties {
                c.handle_incoming(&seal.seal(ApplicationData, b""));
            }
            c.handle_incoming(&seal.seal(ApplicationData, b"b"));
            if ok {
                assert_eq!(read_all(&mut c, &mut co, 64).unwrap().0, b"ab");
            } else {
                // The data before the run is delivered, then the error.
                let mut buf = [0u8; 8];
                assert_eq!(c.read(&mut buf, &mut co), Ok(Status::Data(1)));
                assert_eq!(
                    c.read(&mut buf, &mut co),
                    Err(TlsError::Rustls(rustls::Error::PeerMisbehaved(
                        rustls::PeerMisbehaved::TooManyEmptyFragments
                    )))
                );
            }
        }
    });
}

/// After our close_notify nothing more goes out, not even the KeyUpdate a peer asks for
/// (found by the `tls_records` fuzz target: records mode answered it after closing).
#[test]
fn no_key_update_answer_after_our_close_notify() {
    use rustls::ContentType::{ApplicationData, Handshake};
    both(|| {
        let (mut c, mut co, mut seal) = sealed_peer();
        c.close(&mut co).unwrap();
        let closed = co.len();
        assert!(closed > 0);
        c.handle_incoming(&seal.seal(Handshake, &[24, 0, 0, 1, 1]));
        seal.update_tx();
        c.handle_incoming(&seal.seal(ApplicationData, b"still reading"));
        assert_eq!(read_all(&mut c, &mut co, 64).unwrap().0, b"still reading");
        assert_eq!(co.len(), closed, "a record after our close_notify");
    });
}

/// A fatal alert goes out behind the records still queued for a full output buffer (found
/// by the `tls_records` fuzz target: records mode put it in front of KeyUpdate answers
/// sealed before it, so the peer could not open it, nor them).
#[test]
fn fatal_alert_queues_behind_pending_key_update_answers() {
    use rustls::ContentType::{ApplicationData, Handshake};
    RECORDS.with(|r| r.set(true));
    let (mut c, _, mut seal) = sealed_peer();
    let mut tiny: Out = WriteBuf::new(vec![0u8; 30]);
    // Three answers: one fits the 30 bytes, two wait in the queue.
    for _ in 0..3 {
        c.handle_incoming(&seal.seal(Handshake, &[24, 0, 0, 1, 1]));
        seal.update_tx();
    }
    c.handle_incoming(&seal.seal(ApplicationData, b""));
    // A bad record: the fatal alert.
    c.handle_incoming(&[0x17, 0x03, 0x03, 0x00, 0x20]);
    c.handle_incoming(&[0u8; 0x20]);
    assert!(c.read(&mut [0u8; 16], &mut tiny).is_err());
    let mut wire = tiny.data().to_vec();
    tiny.clear();
    while !c.drain_pending_output(&mut tiny) {
        wire.extend_from_slice(tiny.data());
        tiny.clear();
    }
    wire.extend_from_slice(tiny.data());
    // Three KeyUpdates, then the alert, each record opening under the key in turn.
    let types = seal.open_all(&mut wire);
    assert_eq!(
        types,
        [Handshake, Handshake, Handshake, rustls::ContentType::Alert]
    );
    RECORDS.with(|r| r.set(false));
}

/// Records mode: every write leaves room for the answer to a KeyUpdate the peer requests
/// and for close_notify together (issue 29: the answer used the room of the close, which
/// then failed with `OutputFull` although the caller had written nothing since).
#[test]
fn key_update_answer_and_close_notify_fit_after_any_write() {
    use rustls::ContentType::Handshake;
    RECORDS.with(|r| r.set(true));
    for fill in [1usize, 100, 1000] {
        let (mut c, _, mut seal) = sealed_peer();
        assert!(c.is_records_mode());
        let mut small: Out = WriteBuf::new(vec![0u8; 4096]);
        // Write until the buffer refuses: what stays free is the least any write leaves.
        while c.encrypt(&vec![b'x'; fill], &mut small).is_ok() {}
        let before = small.len();
        c.handle_incoming(&seal.seal(Handshake, &[24, 0, 0, 1, 1]));
        seal.update_tx();
        assert_eq!(c.read(&mut [0u8; 16], &mut small), Ok(Status::NeedMore));
        assert!(small.len() > before, "the KeyUpdate answer went elsewhere");
        assert!(!c.has_pending_output(), "the answer did not fit ({fill})");
        c.close(&mut small).unwrap();
        assert!(c.is_close_sent());
        // The last two records: the answer (under the old key), then close_notify.
        let types = seal.open_all(&mut small.data().to_vec());
        assert_eq!(
            types[types.len() - 2..],
            [Handshake, rustls::ContentType::Alert]
        );
    }
    RECORDS.with(|r| r.set(false));
}
