//! Suite "tls" (issue 5): WebSocket over TLS 1.3, tickwire (its TLS codec:
//! rustls's unbuffered API for the handshake, then the codec's own TLS 1.3
//! record layer on the provider's AEAD, checked by each row) against
//! tungstenite over rustls's `StreamOwned`, both with the same rustls configs:
//! the *ring* provider, TLS 1.3 only (checked), so the same cipher suite;
//! certificates made by rcgen at start-up for `localhost`.
//!
//! nexus-net 0.4.2 ([`nexus`], client only: it has no TLS server) is a peer
//! in both, over its own provider (aws-lc-rs).
//!
//! - [`echo`]: loopback round trip of 40 B and 128 B binary messages, one
//!   connection, the echo server (same library) on the other core.
//! - [`tick`]: in memory, a 77 B JSON quote tick per TLS record, as an
//!   exchange sends it: decrypt + WebSocket parse + serde_json deserialize
//!   (the same struct for both). The records are made by a rustls server
//!   connection before each batch (untimed).

mod echo;
mod nexus;
mod tick;

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DistinguishedName, DnType, IsCa, KeyPair,
    KeyUsagePurpose,
};
use tickwire::tls::{TlsConfig, TlsServerConfig};

use super::{Case, Setup};

/// Client and server settings sharing one test CA; TLS 1.3 only.
pub fn configs() -> (TlsConfig, TlsServerConfig) {
    let (client, server, _) = configs_with_ca();
    (client, server)
}

/// [`configs`], and the CA certificate (DER) for clients configured elsewhere.
pub fn configs_with_ca() -> (TlsConfig, TlsServerConfig, Vec<u8>) {
    let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
    params.distinguished_name = DistinguishedName::new();
    params
        .distinguished_name
        .push(DnType::CommonName, "tickwire bench CA");
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca = CertifiedIssuer::self_signed(params, KeyPair::generate().expect("key"))
        .expect("CA certificate");
    let key = KeyPair::generate().expect("key");
    let leaf = CertificateParams::new(vec!["localhost".to_string()])
        .expect("leaf params")
        .signed_by(&key, &ca)
        .expect("leaf certificate");
    let client = TlsConfig::builder()
        .system_roots(false)
        .add_ca_pem(ca.pem().as_bytes())
        .expect("CA PEM")
        .tls13_only()
        .build()
        .expect("client config");
    let server = TlsServerConfig::builder(leaf.pem().as_bytes(), key.serialize_pem().as_bytes())
        .expect("server PEM")
        .tls13_only()
        .build()
        .expect("server config");
    (client, server, ca.der().to_vec())
}

/// Register the suite's rows.
pub fn register(setup: &Setup, v: &mut Vec<Case<'static>>) {
    tick::cases(v);
    let first = v.len();
    echo::cases(super::loopback::peer_core(setup), v);
    for c in &mut v[first..] {
        c.counts = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::RunConfig;
    use std::time::Duration;

    /// Every row of the suite verifies its output and measures briefly.
    #[test]
    fn every_case_verifies_and_measures() {
        let mut v = Vec::new();
        register(
            &Setup {
                batch: 8,
                core: 0,
                peer_core: None,
            },
            &mut v,
        );
        assert!(v.len() >= 5);
        let cfg = RunConfig {
            batch: 8,
            warmup: Duration::ZERO,
            measure: Duration::from_millis(5),
            max_samples: 64,
            count_rounds: 0,
        };
        for case in &v {
            let m = case.run(&cfg);
            assert!(m.samples() > 0, "{case:?}");
        }
    }
}
