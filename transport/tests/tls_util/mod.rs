//! Test PKI made with rcgen at test time: a CA, server and client certificates (PEM),
//! expired ones, and the configs built from them.
#![allow(dead_code)]

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DistinguishedName, DnType,
    ExtendedKeyUsagePurpose, IsCa, KeyPair, KeyUsagePurpose,
};
use tickwire::tls::{TlsConfig, TlsServerConfig};

/// A certificate authority.
pub struct Ca {
    issuer: CertifiedIssuer<'static, KeyPair>,
}

/// A certificate and its key, PEM.
pub struct Leaf {
    pub cert: String,
    pub key: String,
}

impl Ca {
    pub fn new(name: &str) -> Ca {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.distinguished_name = DistinguishedName::new();
        params.distinguished_name.push(DnType::CommonName, name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let key = KeyPair::generate().unwrap();
        Ca {
            issuer: CertifiedIssuer::self_signed(params, key).unwrap(),
        }
    }

    pub fn pem(&self) -> String {
        self.issuer.pem()
    }

    fn issue(&self, names: &[&str], client: bool, expired: bool) -> Leaf {
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let mut params = CertificateParams::new(names).unwrap();
        params.distinguished_name = DistinguishedName::new();
        params
            .distinguished_name
            .push(DnType::CommonName, if client { "client" } else { "server" });
        params.extended_key_usages = vec![if client {
            ExtendedKeyUsagePurpose::ClientAuth
        } else {
            ExtendedKeyUsagePurpose::ServerAuth
        }];
        if expired {
            params.not_before = rcgen::date_time_ymd(2020, 1, 1);
            params.not_after = rcgen::date_time_ymd(2021, 1, 1);
        }
        let key = KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        Leaf {
            cert: cert.pem(),
            key: key.serialize_pem(),
        }
    }

    /// A server certificate for `names` (DNS names or IP literals).
    pub fn server(&self, names: &[&str]) -> Leaf {
        self.issue(names, false, false)
    }

    /// A server certificate for `names` that expired in 2021.
    pub fn expired_server(&self, names: &[&str]) -> Leaf {
        self.issue(names, false, true)
    }

    /// A client certificate (mTLS).
    pub fn client(&self) -> Leaf {
        self.issue(&["client.test"], true, false)
    }

    /// A client config trusting only this CA.
    pub fn client_config(&self) -> TlsConfig {
        TlsConfig::builder()
            .system_roots(false)
            .add_ca_pem(self.pem().as_bytes())
            .unwrap()
            .build()
            .unwrap()
    }
}

impl Leaf {
    pub fn server_config(&self) -> TlsServerConfig {
        TlsServerConfig::from_pem(self.cert.as_bytes(), self.key.as_bytes()).unwrap()
    }
}

/// A self-signed CA certificate for `names`, with its key: a server presenting it uses
/// a CA certificate as its own (the mistake webpki calls `CaUsedAsEndEntity`).
pub fn self_signed_ca_as_leaf(names: &[&str]) -> Leaf {
    let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    let mut params = CertificateParams::new(names).unwrap();
    params.distinguished_name = DistinguishedName::new();
    params
        .distinguished_name
        .push(DnType::CommonName, "CA used as leaf");
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let key = KeyPair::generate().unwrap();
    let cert = params.self_signed(&key).unwrap();
    Leaf {
        cert: cert.pem(),
        key: key.serialize_pem(),
    }
}

/// A client config trusting only the certificates in `pem`.
pub fn trusting(pem: &str) -> TlsConfig {
    TlsConfig::builder()
        .system_roots(false)
        .add_ca_pem(pem.as_bytes())
        .unwrap()
        .build()
        .unwrap()
}
