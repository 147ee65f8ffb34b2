//! Zero heap allocations per message on an established wss:// connection (issue 34):
//! a blocking client sends 10,000 binary messages over 127.0.0.1 to a tickwire TLS
//! server that echoes them, and receives each echo, once per TLS 1.3 AEAD
//! (AES-128-GCM, AES-256-GCM, ChaCha20-Poly1305; the server offers only that one).
//! A per-thread counting allocator counts the client's thread only, after the first
//! round trip. Sending seals records in place in the client's output buffer (the
//! codec's records mode with the `ring` feature), so nothing is allocated per record;
//! the provider's encrypter would allocate its output once per record. Every echo is
//! compared with what was sent, so the records are also opened correctly by the
//! server (rustls's provider decrypter) under each suite.

#![cfg(feature = "tls")]

mod tls_util;
mod ws_util;

#[path = "../../codec/tests/common/mod.rs"]
mod common;

use std::sync::Arc;
use std::thread;
use std::time::Duration;

use common::allocs;
use rustls::crypto::ring::{cipher_suite, default_provider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::{CipherSuite, ProtocolVersion, SupportedCipherSuite};
use tickwire::tls::{TlsServerConfig, rustls};
use tickwire::ws::{Client, CloseCode, Message, Server};
use tls_util::Ca;
use ws_util::echo;

const T: Duration = Duration::from_secs(30);
const ROUNDS: u64 = 10_000;

/// A TLS 1.3 server config for `leaf` that offers `suite` only (ring provider), in
/// records mode (secret extraction on, as tickwire's own configs have it).
fn only(leaf: &tls_util::Leaf, suite: SupportedCipherSuite) -> TlsServerConfig {
    let chain = CertificateDer::pem_slice_iter(leaf.cert.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_slice(leaf.key.as_bytes()).unwrap();
    let provider = rustls::crypto::CryptoProvider {
        cipher_suites: vec![suite],
        ..default_provider()
    };
    let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(provider))
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .unwrap();
    config.enable_secret_extraction = true;
    TlsServerConfig::from_server_config(Arc::new(config))
}

/// 10,000 echoed messages under `suite`; returns the client's allocations after the
/// first round trip.
fn allocations_per_run(suite: SupportedCipherSuite) -> u64 {
    let ca = Ca::new("test CA");
    let leaf = ca.server(&["localhost"]);
    let mut server = Server::builder()
        .tls(only(&leaf, suite))
        .read_timeout(Some(T))
        .write_timeout(Some(T))
        .handshake_timeout(T)
        .bind("127.0.0.1:0")
        .unwrap();
    let port = server.local_addr().unwrap().port();
    let h = thread::spawn(move || {
        let mut c = server.accept().unwrap();
        c.handshake().unwrap();
        echo(c);
    });
    let mut c = Client::builder()
        .tls(ca.client_config())
        .read_timeout(Some(T))
        .write_timeout(Some(T))
        .handshake_timeout(T)
        .connect(&format!("wss://localhost:{port}/feed"))
        .unwrap();
    let tls = c.tls().unwrap();
    assert_eq!(
        tls.negotiated_cipher_suite().map(|s| s.suite()),
        Some(suite.suite())
    );
    assert_eq!(tls.protocol_version(), Some(ProtocolVersion::TLSv1_3));
    // A market-data sized message (an order book update).
    let mut msg = [0u8; 200];
    let mut before = 0;
    for i in 0..ROUNDS {
        if i == 1 {
            assert!(c.tls().unwrap().is_records_mode());
            before = allocs();
        }
        msg[..8].copy_from_slice(&i.to_le_bytes());
        c.send_binary(&msg).unwrap();
        assert_eq!(c.recv().unwrap(), Some(Message::Binary(&msg[..])));
    }
    let allocated = allocs() - before;
    c.close(CloseCode::NORMAL, "bye").unwrap();
    assert!(matches!(c.recv().unwrap(), Some(Message::Close(_))));
    assert_eq!(c.recv().unwrap(), None);
    h.join().unwrap();
    allocated
}

#[test]
fn wss_send_and_receive_do_not_allocate_per_message() {
    for suite in [
        cipher_suite::TLS13_AES_128_GCM_SHA256,
        cipher_suite::TLS13_AES_256_GCM_SHA384,
        cipher_suite::TLS13_CHACHA20_POLY1305_SHA256,
    ] {
        let name: CipherSuite = suite.suite();
        let n = allocations_per_run(suite);
        assert_eq!(n, 0, "{name:?}: allocations over {} messages", ROUNDS - 1);
    }
}
