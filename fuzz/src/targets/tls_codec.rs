//! TlsCodec (rustls with ring, a fixed self-signed certificate made once) fed arbitrary
//! bytes as the peer's records. Input: byte 0 bit 0 picks the client or server side, bit 1
//! signals EOF at the end; byte 1 seeds the feed sizes; the rest is the peer's stream.
//! Checks: every call ends in a typed error or need-more, never a panic; the handshake
//! never completes (nobody holds the keys); `read` never yields plaintext before the
//! handshake completes; after an error the codec stays failed.
use std::sync::{Arc, OnceLock};

use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
use rustls::{ClientConfig, RootCertStore, ServerConfig};
use tickwire_codec::buf::WriteBuf;
use tickwire_codec::tls::{Status, TlsCodec};

struct Configs {
    client: Arc<ClientConfig>,
    server: Arc<ServerConfig>,
}

fn configs() -> &'static Configs {
    static CONFIGS: OnceLock<Configs> = OnceLock::new();
    CONFIGS.get_or_init(|| {
        let params = rcgen::CertificateParams::new(vec!["localhost".into()]).expect("params");
        let key = rcgen::KeyPair::generate().expect("key");
        let cert: CertificateDer<'static> = params.self_signed(&key).expect("cert").der().clone();
        let key = PrivatePkcs8KeyDer::from(key.serialize_der());
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut roots = RootCertStore::empty();
        roots.add(cert.clone()).expect("root");
        Configs {
            client: Arc::new(
                ClientConfig::builder_with_provider(provider.clone())
                    .with_safe_default_protocol_versions()
                    .expect("versions")
                    .with_root_certificates(roots)
                    .with_no_client_auth(),
            ),
            server: Arc::new(
                ServerConfig::builder_with_provider(provider)
                    .with_safe_default_protocol_versions()
                    .expect("versions")
                    .with_no_client_auth()
                    .with_single_cert(vec![cert], PrivateKeyDer::Pkcs8(key))
                    .expect("server config"),
            ),
        }
    })
}

/// One input of the fuzz target `tls_codec` (see the module docs).
pub fn run(input: &[u8]) {
    let Some(([flags, seed], data)) = input.split_first_chunk::<2>().map(|(h, d)| (*h, d)) else {
        return;
    };
    let c = configs();
    let mut codec = if flags & 1 == 0 {
        TlsCodec::client(
            c.client.clone(),
            ServerName::try_from("localhost").expect("name"),
            vec![0u8; 20 * 1024],
        )
    } else {
        TlsCodec::server(c.server.clone(), vec![0u8; 20 * 1024])
    }
    .expect("a fresh codec");
    let mut out = WriteBuf::new(vec![0u8; 64 * 1024]);
    let mut plain = vec![0u8; 4096];
    let mut state = u32::from(seed) | 0x100;
    let mut rest = data;
    let mut eof_sent = false;
    loop {
        // Drive: the handshake, then a read attempt; both must say need-more or fail.
        let hs = codec.handshake(&mut out);
        out.clear();
        match hs {
            Ok(Status::NeedMore) => {}
            Ok(s) => panic!("handshake with a peer that has no keys ended in {s:?}"),
            Err(_) => {
                assert!(
                    codec.handshake(&mut out).is_err(),
                    "a failed codec recovered"
                );
                return;
            }
        }
        match codec.read(&mut plain, &mut out) {
            Ok(Status::NeedMore) => {}
            Ok(s) => panic!("read before the handshake completed gave {s:?}"),
            Err(_) => {
                out.clear();
                assert!(
                    codec.read(&mut plain, &mut out).is_err(),
                    "a failed codec recovered"
                );
                return;
            }
        }
        out.clear();
        assert!(codec.is_handshaking());
        assert!(
            !codec.has_plaintext(),
            "plaintext before the handshake completed"
        );
        if rest.is_empty() {
            if flags & 2 != 0 && !eof_sent {
                codec.handle_eof();
                eof_sent = true;
                continue;
            }
            return;
        }
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        let want = ((state % 512) as usize + 1).min(rest.len());
        let n = codec.handle_incoming(&rest[..want]);
        if n == 0 {
            // The buffer is full and the codec still needs more: it must have failed.
            assert!(
                codec.handshake(&mut out).is_err(),
                "incoming buffer full without an error"
            );
            return;
        }
        rest = &rest[n..];
    }
}
