//! The TLS 1.3 record layer after the handshake ("records mode").
//!
//! rustls 0.23's unbuffered API runs every application-data record through its state
//! machine and hands the plaintext over in a `Vec` of its own (one allocation and one
//! copy per record). Once the handshake is over and the config allows it
//! (`enable_secret_extraction`), the codec instead takes the traffic keys with
//! rustls's kernel-connection API (made for kTLS) and protects records itself with
//! the AEAD of the config's own crypto provider: each record is opened in place in
//! the incoming buffer and its plaintext copied once into the caller's slice. rustls
//! keeps what only it can do: new traffic secrets for key updates, and session
//! tickets. The codec still picks no provider.
//!
//! RFC 8446 rules enforced here: records are `application_data` on the outside, at
//! most 2^14 + 256 bytes of ciphertext and 2^14 of plaintext; inner types are
//! application data, alerts (close_notify ends the stream, any other alert is an
//! error) and post-handshake handshake messages (NewSessionTicket to a client,
//! KeyUpdate, which must end its record); anything else fails the connection with a
//! fatal alert. Sequence numbers never wrap, and the sending key is updated before the
//! suite's confidentiality limit.
//!
//! Sending is in place too, with the `ring` feature (the transport's `tls` and the
//! bypass crate's `std` turn it on): a record's header, plaintext and inner content
//! type are written straight into the tail of the caller's `WriteBuf`, sealed there
//! with the negotiated TLS 1.3 AEAD (AES-128-GCM, AES-256-GCM or ChaCha20-Poly1305:
//! nonce = IV xor sequence number as RFC 8446 §5.3 has it, through rustls's own
//! `Nonce::new`; AAD = the record header) and the tag appended: no allocation per
//! record sent. Why ring: it is already in every std build (rustls's ring provider,
//! the transport's default), its AES-GCM and ChaCha20-Poly1305 are the same
//! assembly rustls's ring provider seals with, and it picks AES-NI/CLMUL/AVX at run
//! time. Its C/assembly needs a C toolchain for the target, so the bare-metal builds
//! (thumbv7em-none-eabihf, x86_64-unknown-none) leave the feature off; there, and for
//! a suite ring does not know or a provider that claims FIPS (the provider's own
//! module must then do the sealing), records are sealed through the provider's
//! `MessageEncrypter` as before, which allocates its output once per record.

use alloc::boxed::Box;
use alloc::vec::Vec;

use rustls::client::ClientConnectionData;
use rustls::crypto::cipher::{
    InboundOpaqueMessage, MessageDecrypter, MessageEncrypter, OutboundChunks, OutboundPlainMessage,
};
use rustls::kernel::KernelConnection;
use rustls::pki_types::CertificateDer;
use rustls::server::ServerConnectionData;
use rustls::{
    AlertDescription, ConnectionTrafficSecrets, ContentType, Error, HandshakeType, InvalidMessage,
    PeerMisbehaved, ProtocolVersion, SupportedCipherSuite, Tls13CipherSuite,
};

use super::{MAX_PLAINTEXT, PendingOut, Sink, TlsError};
use crate::buf::{ReadBuf, WriteBuf};

/// Largest TLS 1.3 ciphertext in one record (RFC 8446 §5.2).
const MAX_CIPHERTEXT: usize = MAX_PLAINTEXT + 256;
/// Record header: type, legacy version, length.
const HEADER: usize = 5;
/// Largest post-handshake handshake message we buffer (a NewSessionTicket is a few
/// hundred bytes; rustls itself caps handshake messages at 64 KiB).
const MAX_HANDSHAKE: usize = 64 * 1024;
/// KeyUpdates accepted in a row with no application data between them (rustls's and
/// BoringSSL's limit).
const MAX_KEY_UPDATES: u8 = 32;
/// Warning alerts (user_canceled) accepted over the connection (rustls's limit).
const MAX_WARNINGS: u8 = 4;
/// Records with an empty plaintext accepted in a row (rustls's limit).
const MAX_EMPTY: u8 = 32;

/// rustls's side of a converted connection.
pub(super) enum Kernel {
    Client(KernelConnection<ClientConnectionData>),
    Server(KernelConnection<ServerConnectionData>),
}

impl Kernel {
    fn update_rx(&mut self) -> Result<(u64, ConnectionTrafficSecrets), Error> {
        match self {
            Kernel::Client(k) => k.update_rx_secret(),
            Kernel::Server(k) => k.update_rx_secret(),
        }
    }

    fn update_tx(&mut self) -> Result<(u64, ConnectionTrafficSecrets), Error> {
        match self {
            Kernel::Client(k) => k.update_tx_secret(),
            Kernel::Server(k) => k.update_tx_secret(),
        }
    }
}

/// What the handshake agreed on that records mode keeps: the ALPN protocol and the
/// peer's certificate chain.
pub(super) type Negotiated = (Option<Vec<u8>>, Option<Vec<CertificateDer<'static>>>);

/// The record layer state of one connection in records mode.
pub(super) struct Records {
    kernel: Kernel,
    suite: &'static Tls13CipherSuite,
    dec: Box<dyn MessageDecrypter>,
    rx_seq: u64,
    enc: Sealer,
    tx_seq: u64,
    /// A post-handshake handshake message split over records (rare; bounded).
    hs: Vec<u8>,
    /// KeyUpdates still allowed before the next application data record, and warning
    /// alerts (user_canceled) still allowed: rustls's limits, so a peer cannot keep the
    /// connection busy (and make us write) with an endless run of either.
    key_updates_left: u8,
    warnings_left: u8,
    /// Records with an empty plaintext in a row (also rustls's limit: each costs an
    /// AEAD open and moves nothing).
    empty_run: u8,
    /// Our close_notify went out: we write nothing more (no KeyUpdate answer either).
    tx_closed: bool,
    alpn: Option<Vec<u8>>,
    /// The peer's certificate chain as the handshake presented it (rustls's state is
    /// gone in records mode).
    peer_certs: Option<Vec<CertificateDer<'static>>>,
}

/// What one [`Records::read`] call ended with.
pub(super) enum ReadEnd {
    /// No complete record left, or the caller's slice is full.
    Done,
    /// The peer's close_notify.
    PeerClosed,
}

/// AEAD tag length of every TLS 1.3 suite.
#[cfg(feature = "ring")]
const TAG: usize = 16;

/// The sending direction's AEAD.
// One per connection; ring's expanded key stays inline (no pointer chase per record).
#[allow(clippy::large_enum_variant)]
enum Sealer {
    /// Sealed in place with ring (the `ring` feature, a suite it knows).
    #[cfg(feature = "ring")]
    InPlace {
        key: ring::aead::LessSafeKey,
        iv: rustls::crypto::cipher::Iv,
    },
    /// The config provider's encrypter (one allocation per record).
    Provider(Box<dyn MessageEncrypter>),
}

impl Sealer {
    /// The sealer for `secrets` (a fresh key: at the start and after each KeyUpdate).
    fn new(
        suite: &'static Tls13CipherSuite,
        secrets: ConnectionTrafficSecrets,
    ) -> Result<Self, Error> {
        #[cfg(feature = "ring")]
        if !suite.fips() {
            use ring::aead;
            let alg = match &secrets {
                ConnectionTrafficSecrets::Aes128Gcm { .. } => Some(&aead::AES_128_GCM),
                ConnectionTrafficSecrets::Aes256Gcm { .. } => Some(&aead::AES_256_GCM),
                ConnectionTrafficSecrets::Chacha20Poly1305 { .. } => Some(&aead::CHACHA20_POLY1305),
                _ => None,
            };
            if let Some(alg) = alg {
                let (key, iv) = key_iv(secrets)?;
                let key = aead::UnboundKey::new(alg, key.as_ref())
                    .map_err(|_| Error::General("bad traffic key length".into()))?;
                return Ok(Sealer::InPlace {
                    key: aead::LessSafeKey::new(key),
                    iv,
                });
            }
        }
        let (key, iv) = key_iv(secrets)?;
        Ok(Sealer::Provider(suite.aead_alg.encrypter(key, iv)))
    }

    /// Encrypted payload length (inner content type and tag included) for `n` bytes.
    fn payload_len(&self, n: usize) -> usize {
        match self {
            #[cfg(feature = "ring")]
            Sealer::InPlace { .. } => n + 1 + TAG,
            Sealer::Provider(enc) => enc.encrypted_payload_len(n),
        }
    }

    /// Seal one record of `typ` holding `data` with sequence number `seq` into the front
    /// of `dst` (at least `HEADER + payload_len(data.len())` bytes); returns its length.
    fn seal(
        &mut self,
        typ: ContentType,
        data: &[u8],
        seq: u64,
        dst: &mut [u8],
    ) -> Result<usize, Error> {
        match self {
            #[cfg(feature = "ring")]
            Sealer::InPlace { key, iv } => {
                use ring::aead;
                let len = data.len() + 1 + TAG;
                let (header, body) = dst[..HEADER + len].split_at_mut(HEADER);
                // Outer type application_data, legacy version TLS 1.2 (RFC 8446 §5.2);
                // len <= 2^14 + 17 fits the u16.
                let [hi, lo] = (len as u16).to_be_bytes();
                header.copy_from_slice(&[u8::from(ContentType::ApplicationData), 3, 3, hi, lo]);
                let (inner, tag_out) = body.split_at_mut(data.len() + 1);
                inner[..data.len()].copy_from_slice(data);
                inner[data.len()] = u8::from(typ);
                let nonce = aead::Nonce::assume_unique_for_key(
                    rustls::crypto::cipher::Nonce::new(iv, seq).0,
                );
                let tag = key
                    .seal_in_place_separate_tag(nonce, aead::Aad::from(&*header), inner)
                    .map_err(|_| Error::EncryptError)?;
                tag_out.copy_from_slice(tag.as_ref());
                Ok(HEADER + len)
            }
            Sealer::Provider(enc) => {
                let msg = OutboundPlainMessage {
                    typ,
                    version: ProtocolVersion::TLSv1_2,
                    payload: OutboundChunks::Single(data),
                };
                let record = enc.encrypt(msg, seq)?.encode();
                dst.get_mut(..record.len())
                    .ok_or(Error::EncryptError)?
                    .copy_from_slice(&record);
                Ok(record.len())
            }
        }
    }
}

/// One direction's AEAD state from extracted secrets.
fn key_iv(
    secrets: ConnectionTrafficSecrets,
) -> Result<(rustls::crypto::cipher::AeadKey, rustls::crypto::cipher::Iv), Error> {
    match secrets {
        ConnectionTrafficSecrets::Aes128Gcm { key, iv }
        | ConnectionTrafficSecrets::Aes256Gcm { key, iv }
        | ConnectionTrafficSecrets::Chacha20Poly1305 { key, iv } => Ok((key, iv)),
        _ => Err(Error::General("unsupported traffic secret kind".into())),
    }
}

/// Whether records mode can take over a connection that negotiated `suite` and
/// `version` (TLS 1.3 only: TLS 1.2 stays on rustls's own record layer).
pub(super) fn supported(
    suite: Option<SupportedCipherSuite>,
    version: Option<ProtocolVersion>,
) -> bool {
    matches!(
        (suite, version),
        (
            Some(SupportedCipherSuite::Tls13(_)),
            Some(ProtocolVersion::TLSv1_3)
        )
    )
}

/// A fatal protocol error: the error and the alert we send for it.
fn fatal(e: Error) -> (TlsError, AlertDescription) {
    let alert = match &e {
        Error::DecryptError => AlertDescription::BadRecordMac,
        Error::PeerSentOversizedRecord => AlertDescription::RecordOverflow,
        Error::InvalidMessage(_) => AlertDescription::DecodeError,
        Error::AlertReceived(_) => AlertDescription::CloseNotify,
        _ => AlertDescription::UnexpectedMessage,
    };
    (TlsError::Rustls(e), alert)
}

impl Records {
    /// Take over from rustls: `secrets` and `kernel` from `dangerous_into_kernel_connection`.
    pub(super) fn new(
        secrets: rustls::ExtractedSecrets,
        kernel: Kernel,
        suite: SupportedCipherSuite,
        (alpn, peer_certs): Negotiated,
    ) -> Result<Self, Error> {
        #[allow(unreachable_patterns)] // TLS 1.2 suites exist only with rustls's `tls12`
        let suite = match suite {
            SupportedCipherSuite::Tls13(suite) => suite,
            _ => return Err(Error::General("records mode is TLS 1.3 only".into())),
        };
        let (tx_seq, tx) = secrets.tx;
        let (rx_seq, rx) = secrets.rx;
        let (rk, riv) = key_iv(rx)?;
        Ok(Records {
            kernel,
            suite,
            enc: Sealer::new(suite, tx)?,
            tx_seq,
            dec: suite.aead_alg.decrypter(rk, riv),
            rx_seq,
            hs: Vec::new(),
            key_updates_left: MAX_KEY_UPDATES,
            warnings_left: MAX_WARNINGS,
            empty_run: 0,
            tx_closed: false,
            alpn,
            peer_certs,
        })
    }

    /// The ALPN protocol the handshake agreed on.
    pub(super) fn alpn(&self) -> Option<&[u8]> {
        self.alpn.as_deref()
    }

    /// The cipher suite the handshake agreed on.
    pub(super) fn suite(&self) -> SupportedCipherSuite {
        SupportedCipherSuite::Tls13(self.suite)
    }

    /// The peer's certificate chain, end-entity first.
    pub(super) fn peer_certificates(&self) -> Option<&[CertificateDer<'static>]> {
        self.peer_certs.as_deref()
    }

    /// Open every complete record in `incoming` (until the caller's slice is full),
    /// delivering application data into `sink`; a KeyUpdate answer goes into `out`
    /// (or `pending` when `out` is full). A failure returns the error and the alert to
    /// send.
    pub(super) fn read<B: AsRef<[u8]> + AsMut<[u8]>, O: AsRef<[u8]> + AsMut<[u8]>>(
        &mut self,
        incoming: &mut ReadBuf<B>,
        sink: &mut Sink<'_>,
        out: &mut WriteBuf<O>,
        pending: &mut PendingOut,
        reading: bool,
    ) -> Result<ReadEnd, (TlsError, AlertDescription)> {
        loop {
            if reading && sink.is_full() && sink.filled > 0 {
                return Ok(ReadEnd::Done);
            }
            let data = incoming.data_mut();
            let Some(header) = data.get(..HEADER) else {
                return Ok(ReadEnd::Done);
            };
            let typ = ContentType::from(header[0]);
            let len = usize::from(u16::from_be_bytes([header[3], header[4]]));
            if header[1] != 0x03 {
                return Err(fatal(Error::InvalidMessage(
                    InvalidMessage::InvalidContentType,
                )));
            }
            if typ != ContentType::ApplicationData {
                return Err(fatal(Error::InappropriateMessage {
                    expect_types: alloc::vec![ContentType::ApplicationData],
                    got_type: typ,
                }));
            }
            if len > MAX_CIPHERTEXT {
                return Err(fatal(Error::PeerSentOversizedRecord));
            }
            let Some(record) = data.get_mut(HEADER..HEADER + len) else {
                return Ok(ReadEnd::Done);
            };
            if self.rx_seq == u64::MAX {
                return Err(fatal(Error::DecryptError));
            }
            let msg = InboundOpaqueMessage::new(typ, ProtocolVersion::TLSv1_2, record);
            let plain = self.dec.decrypt(msg, self.rx_seq).map_err(fatal)?;
            self.rx_seq += 1;
            if plain.payload.len() > MAX_PLAINTEXT {
                return Err(fatal(Error::PeerSentOversizedRecord));
            }
            if plain.payload.is_empty() {
                if self.empty_run == MAX_EMPTY {
                    return Err(fatal(Error::PeerMisbehaved(
                        PeerMisbehaved::TooManyEmptyFragments,
                    )));
                }
                self.empty_run += 1;
            } else {
                self.empty_run = 0;
            }
            if plain.typ != ContentType::Handshake && !self.hs.is_empty() {
                // A split handshake message may not be interleaved with other records.
                return Err(fatal(Error::PeerMisbehaved(
                    PeerMisbehaved::KeyEpochWithPendingFragment,
                )));
            }
            let end = match plain.typ {
                ContentType::ApplicationData => {
                    self.key_updates_left = MAX_KEY_UPDATES;
                    sink.deliver(plain.payload);
                    None
                }
                ContentType::Alert => alert(plain.payload, &mut self.warnings_left)?,
                ContentType::Handshake => {
                    let payload = plain.payload;
                    self.handshake(payload, out, pending)?;
                    None
                }
                other => {
                    return Err(fatal(Error::InappropriateMessage {
                        expect_types: alloc::vec![
                            ContentType::ApplicationData,
                            ContentType::Alert,
                            ContentType::Handshake
                        ],
                        got_type: other,
                    }));
                }
            };
            incoming.consume(HEADER + len);
            if let Some(end) = end {
                return Ok(end);
            }
        }
    }

    /// Post-handshake handshake messages in one record's plaintext.
    fn handshake<O: AsRef<[u8]> + AsMut<[u8]>>(
        &mut self,
        payload: &[u8],
        out: &mut WriteBuf<O>,
        pending: &mut PendingOut,
    ) -> Result<(), (TlsError, AlertDescription)> {
        if payload.is_empty() {
            return Err(fatal(Error::InvalidMessage(
                InvalidMessage::InvalidEmptyPayload,
            )));
        }
        if self.hs.len() + payload.len() > MAX_HANDSHAKE + 4 {
            return Err(fatal(Error::InvalidMessage(
                InvalidMessage::HandshakePayloadTooLarge,
            )));
        }
        // Whole messages straight from the record; a split one is gathered in `hs`.
        let joined;
        let bytes: &[u8] = if self.hs.is_empty() {
            payload
        } else {
            self.hs.extend_from_slice(payload);
            joined = core::mem::take(&mut self.hs);
            &joined
        };
        let mut rest = bytes;
        while rest.len() >= 4 {
            let typ = HandshakeType::from(rest[0]);
            let len =
                (usize::from(rest[1]) << 16) | (usize::from(rest[2]) << 8) | usize::from(rest[3]);
            if len > MAX_HANDSHAKE {
                return Err(fatal(Error::InvalidMessage(
                    InvalidMessage::HandshakePayloadTooLarge,
                )));
            }
            let Some(body) = rest.get(4..4 + len) else {
                break;
            };
            let after = &rest[4 + len..];
            match (typ, &mut self.kernel) {
                (HandshakeType::NewSessionTicket, Kernel::Client(k)) => {
                    k.handle_new_session_ticket(body).map_err(fatal)?;
                }
                (HandshakeType::KeyUpdate, _) => {
                    // RFC 8446 §5.1: a KeyUpdate must end its record.
                    if !after.is_empty() {
                        return Err(fatal(Error::PeerMisbehaved(
                            PeerMisbehaved::KeyEpochWithPendingFragment,
                        )));
                    }
                    self.key_updates_left =
                        self.key_updates_left.checked_sub(1).ok_or_else(|| {
                            fatal(Error::PeerMisbehaved(
                                PeerMisbehaved::TooManyKeyUpdateRequests,
                            ))
                        })?;
                    let requested = match body {
                        [0] => false,
                        [1] => true,
                        _ => {
                            return Err(fatal(Error::InvalidMessage(
                                InvalidMessage::InvalidKeyUpdate,
                            )));
                        }
                    };
                    let (seq, secrets) = self.kernel.update_rx().map_err(fatal)?;
                    let (key, iv) = key_iv(secrets).map_err(fatal)?;
                    self.dec = self.suite.aead_alg.decrypter(key, iv);
                    self.rx_seq = seq;
                    // After our close_notify we send nothing, so there is nothing to
                    // protect with a new key (RFC 8446 §6.1: it closes our write side).
                    if requested && !self.tx_closed {
                        self.update_tx(out, pending).map_err(fatal)?;
                    }
                }
                (other, _) => {
                    return Err(fatal(Error::InappropriateHandshakeMessage {
                        expect_types: alloc::vec![
                            HandshakeType::NewSessionTicket,
                            HandshakeType::KeyUpdate
                        ],
                        got_type: other,
                    }));
                }
            }
            rest = after;
        }
        if !rest.is_empty() {
            self.hs = rest.to_vec();
        }
        Ok(())
    }

    /// Send KeyUpdate(update_not_requested) under the current key, then switch to the
    /// next one.
    fn update_tx<O: AsRef<[u8]> + AsMut<[u8]>>(
        &mut self,
        out: &mut WriteBuf<O>,
        pending: &mut PendingOut,
    ) -> Result<(), Error> {
        let msg = [u8::from(HandshakeType::KeyUpdate), 0, 0, 1, 0];
        let mut record = [0; HEADER + 5 + 1 + 255];
        let n = self.seal(ContentType::Handshake, &msg, &mut record)?;
        if !pending.is_empty() || out.extend(&record[..n]).is_err() {
            pending.push(&record[..n]);
        }
        let (seq, secrets) = self.kernel.update_tx()?;
        self.enc = Sealer::new(self.suite, secrets)?;
        self.tx_seq = seq;
        Ok(())
    }

    /// One record of `typ` holding `data` (at most [`MAX_PLAINTEXT`] bytes), sealed into
    /// the front of `dst` (room for `HEADER + payload_len`); returns its length.
    fn seal(&mut self, typ: ContentType, data: &[u8], dst: &mut [u8]) -> Result<usize, Error> {
        if self.tx_seq == u64::MAX {
            return Err(Error::EncryptError);
        }
        let n = self.enc.seal(typ, data, self.tx_seq, dst)?;
        self.tx_seq += 1;
        Ok(n)
    }

    /// One record sealed straight into the tail of `out` (the caller checked the room).
    fn seal_into<O: AsRef<[u8]> + AsMut<[u8]>>(
        &mut self,
        typ: ContentType,
        data: &[u8],
        out: &mut WriteBuf<O>,
    ) -> Result<(), TlsError> {
        let required = HEADER + self.enc.payload_len(data.len());
        let dst = out
            .reserve(required)
            .map_err(|_| TlsError::OutputFull { required })?;
        let n = self.seal(typ, data, dst)?;
        out.commit(n);
        Ok(())
    }

    /// Bytes on the wire for `n` (at least 1) bytes of application data.
    fn sealed_len(&self, n: usize) -> usize {
        let full = n / MAX_PLAINTEXT;
        let last = n % MAX_PLAINTEXT;
        let mut total = full * (HEADER + self.enc.payload_len(MAX_PLAINTEXT));
        if last > 0 {
            total += HEADER + self.enc.payload_len(last);
        }
        total
    }

    /// Bytes on the wire of one alert record (close_notify).
    fn alert_len(&self) -> usize {
        HEADER + self.enc.payload_len(2)
    }

    /// Encrypt `data` into `out`, all or nothing ([`TlsError::OutputFull`]). The sending
    /// key is updated first when it nears the suite's confidentiality limit.
    pub(super) fn encrypt<O: AsRef<[u8]> + AsMut<[u8]>>(
        &mut self,
        data: &[u8],
        out: &mut WriteBuf<O>,
        pending: &mut PendingOut,
    ) -> Result<(), TlsError> {
        // Room for a KeyUpdate record too, so the update never splits a write; and what
        // stays free after the write holds our answer to a KeyUpdate the peer requests
        // plus our close_notify, so closing never finds the buffer full because of them.
        let key_update = HEADER + self.enc.payload_len(5);
        let need = self.sealed_len(data.len()) + 2 * key_update + self.alert_len();
        if out.remaining() < need {
            return Err(TlsError::OutputFull { required: need });
        }
        let records = data.len().div_ceil(MAX_PLAINTEXT) as u64;
        let limit = self.suite.common.confidentiality_limit;
        if self.tx_seq.saturating_add(records) >= limit {
            self.update_tx(out, pending)?;
        }
        for chunk in data.chunks(MAX_PLAINTEXT) {
            self.seal_into(ContentType::ApplicationData, chunk, out)?;
        }
        Ok(())
    }

    /// Our close_notify, or a fatal `alert`, into `out` (best effort for an alert).
    pub(super) fn alert<O: AsRef<[u8]> + AsMut<[u8]>>(
        &mut self,
        desc: AlertDescription,
        out: &mut WriteBuf<O>,
    ) -> Result<(), TlsError> {
        let level = if desc == AlertDescription::CloseNotify {
            1
        } else {
            2
        };
        // Room first: a sealed record spends a sequence number, so it must not be lost.
        let need = self.alert_len();
        if out.remaining() < need {
            return Err(TlsError::OutputFull { required: need });
        }
        self.seal_into(ContentType::Alert, &[level, u8::from(desc)], out)?;
        if desc == AlertDescription::CloseNotify {
            self.tx_closed = true;
        }
        Ok(())
    }
}

/// An alert record's plaintext: close_notify ends the stream; user_canceled (a
/// warning) is ignored, at most `warnings_left` times; anything else, and a level
/// other than warning (1) or fatal (2), is the peer's error (as rustls has it).
fn alert(
    payload: &[u8],
    warnings_left: &mut u8,
) -> Result<Option<ReadEnd>, (TlsError, AlertDescription)> {
    let [level, desc] = payload else {
        return Err(fatal(Error::InvalidMessage(
            InvalidMessage::MessageTooShort,
        )));
    };
    let desc = AlertDescription::from(*desc);
    match (*level, desc) {
        (1 | 2, AlertDescription::CloseNotify) => Ok(Some(ReadEnd::PeerClosed)),
        (1, AlertDescription::UserCanceled) => {
            *warnings_left = warnings_left.checked_sub(1).ok_or_else(|| {
                fatal(Error::PeerMisbehaved(
                    PeerMisbehaved::TooManyWarningAlertsReceived,
                ))
            })?;
            Ok(None)
        }
        _ => Err(fatal(Error::AlertReceived(desc))),
    }
}

/// The in-place sealer against the provider's encrypter: the same key, IV and sequence
/// numbers give the same bytes on the wire (header, ciphertext, inner type, tag), for
/// every record size up to a full one. (AES-128-GCM too is covered end to end, by the
/// transport's tls_no_alloc test: rustls's `AeadKey` makes only 32-byte keys here.)
#[cfg(all(test, feature = "ring"))]
mod in_place_tests {
    use super::*;
    use alloc::vec;
    use rustls::crypto::cipher::{AeadKey, Iv};
    use rustls::crypto::ring::cipher_suite;

    fn secrets(suite: &Tls13CipherSuite, key: [u8; 32], iv: [u8; 12]) -> ConnectionTrafficSecrets {
        let (key, iv) = (AeadKey::from(key), Iv::new(iv));
        match suite.common.suite {
            rustls::CipherSuite::TLS13_AES_256_GCM_SHA384 => {
                ConnectionTrafficSecrets::Aes256Gcm { key, iv }
            }
            _ => ConnectionTrafficSecrets::Chacha20Poly1305 { key, iv },
        }
    }

    #[test]
    fn in_place_records_equal_the_providers() {
        for suite in [
            cipher_suite::TLS13_AES_256_GCM_SHA384,
            cipher_suite::TLS13_CHACHA20_POLY1305_SHA256,
        ] {
            let SupportedCipherSuite::Tls13(suite) = suite else {
                unreachable!()
            };
            let (key, iv) = ([7u8; 32], [0x5a; 12]);
            let mut ours = Sealer::new(suite, secrets(suite, key, iv)).unwrap();
            assert!(matches!(ours, Sealer::InPlace { .. }));
            let mut theirs =
                Sealer::Provider(suite.aead_alg.encrypter(AeadKey::from(key), Iv::new(iv)));
            let data: Vec<u8> = (0..MAX_PLAINTEXT).map(|i| (i * 31) as u8).collect();
            let mut a = vec![0u8; MAX_CIPHERTEXT + HEADER];
            let mut b = vec![0u8; MAX_CIPHERTEXT + HEADER];
            for (seq, n) in [0usize, 1, 2, 40, 128, 1000, MAX_PLAINTEXT]
                .into_iter()
                .enumerate()
            {
                let seq = seq as u64 * 0x0101_0101_0101 + 3;
                for typ in [
                    ContentType::ApplicationData,
                    ContentType::Alert,
                    ContentType::Handshake,
                ] {
                    assert_eq!(ours.payload_len(n), theirs.payload_len(n));
                    let la = ours.seal(typ, &data[..n], seq, &mut a).unwrap();
                    let lb = theirs.seal(typ, &data[..n], seq, &mut b).unwrap();
                    assert_eq!(a[..la], b[..lb], "{:?} {n} bytes", suite.common.suite);
                }
            }
            // Too small a destination is an error, not a panic (provider path).
            assert!(
                theirs
                    .seal(ContentType::Alert, &[1, 0], 9, &mut [0; 8])
                    .is_err()
            );
        }
    }
}
