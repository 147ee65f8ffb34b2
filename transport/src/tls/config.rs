//! [`TlsConfig`] (client) and [`TlsServerConfig`]: rustls configs built once at start-up
//! and shared by every connection (an `Arc` inside, so clones are cheap).
//!
//! Both set rustls's `enable_secret_extraction`: after a TLS 1.3 handshake the codec
//! takes the traffic keys and runs the record layer itself (records mode, see
//! `tickwire::codec::tls`), opening each record in place with no allocation. The keys
//! never leave the process; nothing exports or logs them.

use std::fmt;
use std::io;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::server::WebPkiClientVerifier;
use rustls::{
    ClientConfig, DigitallySignedStruct, RootCertStore, ServerConfig, SignatureScheme,
    SupportedProtocolVersion,
};
use tickwire_codec::tls::rustls;

/// The crypto provider of the std transport: *ring*.
///
/// Measured against aws-lc-rs with a scratch program (rustls 0.23.46 buffered
/// connections, both ends in one process, TLS 1.3 AES-256-GCM, ECDSA P-256
/// certificate; on the shared 2-core build machine under load, so rough; best of
/// three runs): full handshake, both sides, ring 261 µs vs aws-lc-rs 567 µs; one
/// 64-byte record encrypted and decrypted 0.59 µs vs 0.99 µs; one 16 KiB record 18.3 µs
/// (0.90 GB/s) vs 26.5 µs (0.62 GB/s). ring was ahead on the handshake and on 16 KiB
/// records in every run; on 64-byte records the two were within noise in two of the
/// three runs (rustls's own record handling dominates there). ring also builds in
/// seconds with only a C compiler, where aws-lc-rs needs cmake and took over 8 minutes
/// to build here. A caller who wants another provider builds its
/// rustls config itself and uses [`TlsConfig::from_client_config`] /
/// [`TlsServerConfig::from_server_config`].
pub fn provider() -> Arc<CryptoProvider> {
    static PROVIDER: OnceLock<Arc<CryptoProvider>> = OnceLock::new();
    PROVIDER
        .get_or_init(|| Arc::new(rustls::crypto::ring::default_provider()))
        .clone()
}

/// Why a TLS configuration could not be built.
#[derive(Debug)]
#[non_exhaustive]
pub enum ConfigError {
    /// A PEM file could not be read or parsed.
    Pem(rustls::pki_types::pem::Error),
    /// The PEM input held no certificate.
    NoCertificate,
    /// rustls refused the settings (a certificate, a key, a version set).
    Rustls(rustls::Error),
    /// The client-certificate verifier could not be built (e.g. no CA certificates).
    Verifier(rustls::client::VerifierBuilderError),
    /// A file could not be read.
    Io(io::Error),
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::Pem(e) => write!(f, "invalid PEM: {e}"),
            ConfigError::NoCertificate => f.write_str("no certificate in PEM input"),
            ConfigError::Rustls(e) => write!(f, "TLS configuration refused: {e}"),
            ConfigError::Verifier(e) => write!(f, "client certificate verifier: {e}"),
            ConfigError::Io(e) => write!(f, "cannot read file: {e}"),
        }
    }
}

impl std::error::Error for ConfigError {}

impl From<rustls::pki_types::pem::Error> for ConfigError {
    fn from(e: rustls::pki_types::pem::Error) -> Self {
        ConfigError::Pem(e)
    }
}

impl From<rustls::Error> for ConfigError {
    fn from(e: rustls::Error) -> Self {
        ConfigError::Rustls(e)
    }
}

/// Every certificate in a PEM input (at least one).
fn certs_from_pem(pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, ConfigError> {
    let certs = CertificateDer::pem_slice_iter(pem).collect::<Result<Vec<_>, _>>()?;
    if certs.is_empty() {
        return Err(ConfigError::NoCertificate);
    }
    Ok(certs)
}

fn read_file(path: &Path) -> Result<Vec<u8>, ConfigError> {
    std::fs::read(path).map_err(ConfigError::Io)
}

fn versions(tls13_only: bool) -> &'static [&'static SupportedProtocolVersion] {
    static TLS13_ONLY: [&SupportedProtocolVersion; 1] = [&rustls::version::TLS13];
    if tls13_only {
        &TLS13_ONLY
    } else {
        rustls::DEFAULT_VERSIONS
    }
}

/// Client TLS settings for `wss://` (and `https://`): trust roots, client certificate,
/// versions, ALPN. Build once, clone freely.
///
/// System roots are the Mozilla root program's, compiled in (webpki-roots): the same
/// set on every machine, no dependence on the host's CA files (often missing in
/// minimal containers), no file I/O at start-up. Private CAs are added with
/// [`add_ca_pem`](TlsConfigBuilder::add_ca_pem).
#[derive(Clone)]
pub struct TlsConfig {
    client: Arc<ClientConfig>,
}

impl fmt::Debug for TlsConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsConfig")
            .field("alpn", &self.client.alpn_protocols)
            .finish_non_exhaustive()
    }
}

impl TlsConfig {
    /// Settings to build a config.
    ///
    /// ```
    /// # use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
    /// # let mut ca = CertificateParams::new(Vec::<String>::new())?;
    /// # ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    /// # let ca = CertifiedIssuer::self_signed(ca, KeyPair::generate()?)?;
    /// # let key = KeyPair::generate()?;
    /// # let cert = CertificateParams::new(vec!["localhost".to_owned()])?.signed_by(&key, &ca)?;
    /// # let (chain_pem, key_pem, ca_pem) = (cert.pem(), key.serialize_pem(), ca.pem());
    /// use tickwire::rest::Client;
    /// use tickwire::tls::{TlsConfig, TlsServerConfig};
    ///
    /// // A server with a certificate for "localhost" issued by your own CA.
    /// let server_tls = TlsServerConfig::from_pem(chain_pem.as_bytes(), key_pem.as_bytes())?;
    /// let port = tickwire::rest::doc_server_tls(server_tls).port();
    ///
    /// // The client trusts that CA (beside the compiled-in roots).
    /// let tls = TlsConfig::builder().add_ca_pem(ca_pem.as_bytes())?.build()?;
    /// let mut client = Client::builder().tls(tls).connect(&format!("https://localhost:{port}/api"))?;
    /// assert_eq!(client.get("/time").send()?.body_str()?, "GET /api/time");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn builder() -> TlsConfigBuilder {
        TlsConfigBuilder::default()
    }

    /// The system roots, TLS 1.2 and 1.3, no ALPN, no client certificate.
    ///
    /// ```
    /// use tickwire::tls::TlsConfig;
    ///
    /// let tls = TlsConfig::new(); // the compiled-in Mozilla roots
    /// let builder = tickwire::ws::Client::builder().tls(tls); // then .connect("wss://...")
    /// ```
    pub fn new() -> TlsConfig {
        // `build` fails only for settings given to the builder (PEM, keys, an empty
        // root store); the defaults have none and the compiled-in roots are not empty.
        Self::builder()
            .build()
            .expect("the default TLS settings are valid")
    }

    /// The shared default config (built on first use), used for `wss://` when no
    /// config was given.
    ///
    /// ```
    /// use tickwire::tls::TlsConfig;
    ///
    /// // What `wss://` and `https://` use when no `.tls(..)` was given: built once, shared.
    /// let a = TlsConfig::shared_default();
    /// let b = TlsConfig::shared_default();
    /// assert!(std::sync::Arc::ptr_eq(a.client_config(), b.client_config()));
    /// ```
    pub fn shared_default() -> TlsConfig {
        static DEFAULT: OnceLock<TlsConfig> = OnceLock::new();
        DEFAULT.get_or_init(TlsConfig::new).clone()
    }

    /// **No certificate verification at all** (tests against self-signed servers only):
    /// any server is accepted, so anyone on the path can read and change the traffic.
    /// Handshake signatures are still checked, TLS 1.2 and 1.3.
    pub fn dangerous_no_verify() -> TlsConfig {
        Self::builder()
            .dangerous_no_verify()
            .build()
            .expect("the no-verification settings are valid")
    }

    /// Use a rustls config built elsewhere (its provider, verifier and settings).
    pub fn from_client_config(config: Arc<ClientConfig>) -> TlsConfig {
        TlsConfig { client: config }
    }

    /// The rustls config.
    pub fn client_config(&self) -> &Arc<ClientConfig> {
        &self.client
    }
}

impl Default for TlsConfig {
    /// [`TlsConfig::shared_default`].
    fn default() -> Self {
        TlsConfig::shared_default()
    }
}

/// Settings for a [`TlsConfig`].
#[derive(Debug)]
pub struct TlsConfigBuilder {
    system_roots: bool,
    roots: RootCertStore,
    client_auth: Option<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)>,
    tls13_only: bool,
    alpn: Vec<Vec<u8>>,
    no_verify: bool,
}

impl Default for TlsConfigBuilder {
    fn default() -> Self {
        TlsConfigBuilder {
            system_roots: true,
            roots: RootCertStore::empty(),
            client_auth: None,
            tls13_only: false,
            alpn: Vec::new(),
            no_verify: false,
        }
    }
}

impl TlsConfigBuilder {
    /// Trust the compiled-in Mozilla roots (default `true`). With `false` only the CA
    /// certificates added here are trusted.
    pub fn system_roots(mut self, on: bool) -> Self {
        self.system_roots = on;
        self
    }

    /// Trust the CA certificates in `pem` (one or more `CERTIFICATE` blocks).
    ///
    /// ```
    /// # use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
    /// # let mut ca = CertificateParams::new(Vec::<String>::new())?;
    /// # ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    /// # let ca = CertifiedIssuer::self_signed(ca, KeyPair::generate()?)?;
    /// # let key = KeyPair::generate()?;
    /// # let cert = CertificateParams::new(vec!["localhost".to_owned()])?.signed_by(&key, &ca)?;
    /// # let (chain_pem, key_pem, ca_pem) = (cert.pem(), key.serialize_pem(), ca.pem());
    /// use tickwire::rest::Client;
    /// use tickwire::tls::{TlsConfig, TlsServerConfig};
    ///
    /// // A server with a certificate for "localhost" issued by your own CA.
    /// let server_tls = TlsServerConfig::from_pem(chain_pem.as_bytes(), key_pem.as_bytes())?;
    /// let port = tickwire::rest::doc_server_tls(server_tls).port();
    ///
    /// // The client trusts that CA (beside the compiled-in roots).
    /// let tls = TlsConfig::builder().add_ca_pem(ca_pem.as_bytes())?.build()?;
    /// let mut client = Client::builder().tls(tls).connect(&format!("https://localhost:{port}/api"))?;
    /// assert_eq!(client.get("/time").send()?.body_str()?, "GET /api/time");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn add_ca_pem(mut self, pem: &[u8]) -> Result<Self, ConfigError> {
        for cert in certs_from_pem(pem)? {
            self.roots.add(cert)?;
        }
        Ok(self)
    }

    /// Trust the CA certificates in the PEM file at `path`.
    pub fn add_ca_pem_file(self, path: impl AsRef<Path>) -> Result<Self, ConfigError> {
        let pem = read_file(path.as_ref())?;
        self.add_ca_pem(&pem)
    }

    /// Trust one CA certificate (DER).
    pub fn add_ca_der(mut self, der: CertificateDer<'static>) -> Result<Self, ConfigError> {
        self.roots.add(der)?;
        Ok(self)
    }

    /// Present a client certificate (mTLS): the chain (leaf first) and its private key,
    /// both PEM (the key PKCS#8, PKCS#1 or SEC1).
    pub fn client_cert_pem(mut self, chain: &[u8], key: &[u8]) -> Result<Self, ConfigError> {
        let chain = certs_from_pem(chain)?;
        let key = PrivateKeyDer::from_pem_slice(key)?;
        self.client_auth = Some((chain, key));
        Ok(self)
    }

    /// Offer TLS 1.3 only: a server that cannot do it fails the handshake.
    pub fn tls13_only(mut self) -> Self {
        self.tls13_only = true;
        self
    }

    /// Offer these ALPN protocols, in order of preference (e.g. `b"http/1.1"`).
    pub fn alpn(mut self, protocols: &[&[u8]]) -> Self {
        self.alpn = protocols.iter().map(|p| p.to_vec()).collect();
        self
    }

    /// **Do not verify the server's certificate** (see [`TlsConfig::dangerous_no_verify`]).
    pub fn dangerous_no_verify(mut self) -> Self {
        self.no_verify = true;
        self
    }

    /// Build the config.
    ///
    /// ```
    /// # use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
    /// # let mut ca = CertificateParams::new(Vec::<String>::new())?;
    /// # ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    /// # let ca = CertifiedIssuer::self_signed(ca, KeyPair::generate()?)?;
    /// # let key = KeyPair::generate()?;
    /// # let cert = CertificateParams::new(vec!["localhost".to_owned()])?.signed_by(&key, &ca)?;
    /// # let (chain_pem, key_pem, ca_pem) = (cert.pem(), key.serialize_pem(), ca.pem());
    /// use tickwire::tls::TlsConfig;
    ///
    /// let tls = TlsConfig::builder()
    ///     .system_roots(false) // trust only this CA
    ///     .add_ca_pem(ca_pem.as_bytes())?
    ///     .tls13_only()
    ///     .alpn(&[b"http/1.1"])
    ///     .build()?;
    /// // Build once, share it: .tls(tls.clone()) on every client builder.
    /// let ws = tickwire::ws::Client::builder().tls(tls.clone());
    /// let rest = tickwire::rest::Client::builder().tls(tls);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn build(self) -> Result<TlsConfig, ConfigError> {
        let provider = provider();
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_protocol_versions(versions(self.tls13_only))?;
        let builder = if self.no_verify {
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(NoVerify(
                    provider.signature_verification_algorithms,
                )))
        } else {
            let mut roots = self.roots;
            if self.system_roots {
                roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
            }
            let verifier =
                WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                    .build()
                    .map_err(ConfigError::Verifier)?;
            builder.with_webpki_verifier(verifier)
        };
        let mut config = match self.client_auth {
            Some((chain, key)) => builder.with_client_auth_cert(chain, key)?,
            None => builder.with_no_client_auth(),
        };
        config.alpn_protocols = self.alpn;
        // The codec's TLS 1.3 record layer takes the traffic keys after the handshake
        // (rustls's kernel-connection API): records are opened in place, no rustls
        // state-machine pass and no allocation per record. The keys stay in-process.
        config.enable_secret_extraction = true;
        Ok(TlsConfig {
            client: Arc::new(config),
        })
    }
}

/// The verifier of [`TlsConfig::dangerous_no_verify`]: accepts every certificate, still
/// checks that the handshake was signed by the key in it.
#[derive(Debug)]
struct NoVerify(WebPkiSupportedAlgorithms);

impl ServerCertVerifier for NoVerify {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_schemes()
    }
}

/// Server TLS settings for our `wss://` server: certificate chain and key, optional
/// client-certificate requirement (mTLS), versions, ALPN. Build once, clone freely.
#[derive(Clone)]
pub struct TlsServerConfig {
    server: Arc<ServerConfig>,
}

impl fmt::Debug for TlsServerConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsServerConfig")
            .field("alpn", &self.server.alpn_protocols)
            .finish_non_exhaustive()
    }
}

impl TlsServerConfig {
    /// Settings for a server presenting `chain` (PEM, leaf first) with `key` (PEM).
    ///
    /// ```
    /// # use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
    /// # let mut ca = CertificateParams::new(Vec::<String>::new())?;
    /// # ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    /// # let ca = CertifiedIssuer::self_signed(ca, KeyPair::generate()?)?;
    /// # let key = KeyPair::generate()?;
    /// # let cert = CertificateParams::new(vec!["localhost".to_owned()])?.signed_by(&key, &ca)?;
    /// # let (chain_pem, key_pem, ca_pem) = (cert.pem(), key.serialize_pem(), ca.pem());
    /// use tickwire::tls::TlsServerConfig;
    ///
    /// let tls = TlsServerConfig::builder(chain_pem.as_bytes(), key_pem.as_bytes())?
    ///     .tls13_only()
    ///     .require_client_cert_pem(ca_pem.as_bytes())? // mTLS: clients of this CA only
    ///     .build()?;
    /// let server = tickwire::ws::Server::builder().tls(tls).bind("127.0.0.1:0")?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn builder(chain: &[u8], key: &[u8]) -> Result<TlsServerConfigBuilder, ConfigError> {
        Ok(TlsServerConfigBuilder {
            chain: certs_from_pem(chain)?,
            key: PrivateKeyDer::from_pem_slice(key)?,
            client_roots: None,
            tls13_only: false,
            alpn: Vec::new(),
        })
    }

    /// A server presenting `chain` with `key` (PEM), default settings.
    ///
    /// ```
    /// # use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
    /// # let mut ca = CertificateParams::new(Vec::<String>::new())?;
    /// # ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    /// # let ca = CertifiedIssuer::self_signed(ca, KeyPair::generate()?)?;
    /// # let key = KeyPair::generate()?;
    /// # let cert = CertificateParams::new(vec!["localhost".to_owned()])?.signed_by(&key, &ca)?;
    /// # let (chain_pem, key_pem, ca_pem) = (cert.pem(), key.serialize_pem(), ca.pem());
    /// use tickwire::tls::{TlsConfig, TlsServerConfig};
    /// use tickwire::ws::{Client, Message, Server};
    ///
    /// let tls = TlsServerConfig::from_pem(chain_pem.as_bytes(), key_pem.as_bytes())?;
    /// let mut server = Server::builder().tls(tls).bind("127.0.0.1:0")?;
    /// let port = server.local_addr()?.port();
    /// std::thread::spawn(move || -> Result<(), tickwire::ws::Error> {
    ///     server.accept()?.send_text("over TLS")?;
    ///     Ok(())
    /// });
    /// let trust = TlsConfig::builder().add_ca_pem(ca_pem.as_bytes())?.build()?;
    /// let mut ws = Client::builder().tls(trust).connect(&format!("wss://localhost:{port}/"))?;
    /// assert_eq!(ws.recv()?, Some(Message::Text("over TLS")));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_pem(chain: &[u8], key: &[u8]) -> Result<TlsServerConfig, ConfigError> {
        Self::builder(chain, key)?.build()
    }

    /// A server with the PEM files at `chain` and `key`.
    ///
    /// ```
    /// # let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()])?;
    /// # let dir = std::env::temp_dir().join(format!("tickwire-doc-{}", std::process::id()));
    /// # std::fs::create_dir_all(&dir)?;
    /// # std::fs::write(dir.join("server.pem"), cert.cert.pem())?;
    /// # std::fs::write(dir.join("server.key"), cert.signing_key.serialize_pem())?;
    /// # let (chain, key) = (dir.join("server.pem"), dir.join("server.key"));
    /// use tickwire::tls::TlsServerConfig;
    ///
    /// // The chain (leaf first) and the key, PEM files.
    /// let tls = TlsServerConfig::from_pem_files(&chain, &key)?; // e.g. "server.pem", "server.key"
    /// let server = tickwire::ws::Server::builder().tls(tls).bind("127.0.0.1:0")?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_pem_files(
        chain: impl AsRef<Path>,
        key: impl AsRef<Path>,
    ) -> Result<TlsServerConfig, ConfigError> {
        Self::from_pem(&read_file(chain.as_ref())?, &read_file(key.as_ref())?)
    }

    /// Use a rustls config built elsewhere.
    pub fn from_server_config(config: Arc<ServerConfig>) -> TlsServerConfig {
        TlsServerConfig { server: config }
    }

    /// The rustls config.
    pub fn server_config(&self) -> &Arc<ServerConfig> {
        &self.server
    }
}

/// Settings for a [`TlsServerConfig`].
#[derive(Debug)]
pub struct TlsServerConfigBuilder {
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
    client_roots: Option<RootCertStore>,
    tls13_only: bool,
    alpn: Vec<Vec<u8>>,
}

impl TlsServerConfigBuilder {
    /// Require a client certificate issued by one of the CAs in `pem` (mTLS).
    pub fn require_client_cert_pem(mut self, pem: &[u8]) -> Result<Self, ConfigError> {
        let roots = self.client_roots.get_or_insert_with(RootCertStore::empty);
        for cert in certs_from_pem(pem)? {
            roots.add(cert)?;
        }
        Ok(self)
    }

    /// Accept TLS 1.3 only.
    pub fn tls13_only(mut self) -> Self {
        self.tls13_only = true;
        self
    }

    /// Accept these ALPN protocols, in order of preference.
    pub fn alpn(mut self, protocols: &[&[u8]]) -> Self {
        self.alpn = protocols.iter().map(|p| p.to_vec()).collect();
        self
    }

    /// Build the config.
    ///
    /// ```
    /// # use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
    /// # let mut ca = CertificateParams::new(Vec::<String>::new())?;
    /// # ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    /// # let ca = CertifiedIssuer::self_signed(ca, KeyPair::generate()?)?;
    /// # let key = KeyPair::generate()?;
    /// # let cert = CertificateParams::new(vec!["localhost".to_owned()])?.signed_by(&key, &ca)?;
    /// # let (chain_pem, key_pem, ca_pem) = (cert.pem(), key.serialize_pem(), ca.pem());
    /// use tickwire::tls::TlsServerConfig;
    ///
    /// let tls = TlsServerConfig::builder(chain_pem.as_bytes(), key_pem.as_bytes())?
    ///     .alpn(&[b"http/1.1"])
    ///     .build()?;
    /// let server = tickwire::ws::Server::builder().tls(tls).bind("127.0.0.1:0")?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn build(self) -> Result<TlsServerConfig, ConfigError> {
        let provider = provider();
        let builder = ServerConfig::builder_with_provider(provider.clone())
            .with_protocol_versions(versions(self.tls13_only))?;
        let builder = match self.client_roots {
            Some(roots) => builder.with_client_cert_verifier(
                WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                    .build()
                    .map_err(ConfigError::Verifier)?,
            ),
            None => builder.with_no_client_auth(),
        };
        let mut config = builder.with_single_cert(self.chain, self.key)?;
        config.alpn_protocols = self.alpn;
        // As for the client: the codec's own TLS 1.3 record layer after the handshake.
        config.enable_secret_extraction = true;
        Ok(TlsServerConfig {
            server: Arc::new(config),
        })
    }
}
