//! The prover's instrumented rustls `CryptoProvider` and the client
//! configuration built on it, shared by the native prover (`webproof-net`)
//! and the browser prover (`webproof-browser`). It owns which suites and
//! groups a prover offers and how secrets are captured; it does no I/O and
//! reads no clock (the caller passes a [`TimeProvider`]).
//!
//! It is rustls' *ring* provider restricted to the suites and groups proxy
//! mode supports, with every key-exchange group wrapped so that the (EC)DHE
//! shared secret is captured when the exchange completes. From it the prover
//! computes the session secret the proof is about (TLS 1.3 handshake
//! secret, TLS 1.2 master secret) with `webproof_tls`'s key schedule, and
//! cross-checks the result against what rustls itself logs through `KeyLog`.
//!
//! Why ring: it is rustls' best-tested provider, builds fast, and compiles
//! for wasm32 with clang (its randomness needs the `wasm32_unknown_unknown_js`
//! feature in a browser, where the prover has JavaScript anyway). The
//! RustCrypto provider (`rustls-rustcrypto`) is still an alpha release on
//! pre-release RustCrypto crates. The verifier side needs no provider at all:
//! `webproof_tls` verifies signatures with RustCrypto directly.
//!
//! Captured secrets are keyed by our public key share (which the prover
//! finds again in its ClientHello / ClientKeyExchange), so the groups can be
//! `'static` as rustls requires while sessions run concurrently.

use rustls::crypto::{ActiveKeyExchange, CryptoProvider, SharedSecret, SupportedKxGroup};
use rustls::time_provider::TimeProvider;
use rustls::{NamedGroup, SupportedCipherSuite};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use webproof_tls::{CipherSuite, KxGroup, TlsVersion};

/// Most captured secrets kept for sessions that never collected theirs.
const MAX_CAPTURED: usize = 256;

static CAPTURED: Mutex<VecDeque<(Vec<u8>, Vec<u8>)>> = Mutex::new(VecDeque::new());

/// Take the shared secret of the exchange in which we sent `our_public_key`.
pub fn take_shared_secret(our_public_key: &[u8]) -> Option<Vec<u8>> {
    let mut c = CAPTURED.lock().unwrap_or_else(|p| p.into_inner());
    let i = c.iter().position(|(k, _)| k == our_public_key)?;
    c.remove(i).map(|(_, s)| s)
}

fn store(pk: Vec<u8>, secret: Vec<u8>) {
    let mut c = CAPTURED.lock().unwrap_or_else(|p| p.into_inner());
    if c.len() >= MAX_CAPTURED {
        c.pop_front();
    }
    c.push_back((pk, secret));
}

#[derive(Debug)]
struct Capturing(KxGroup);

impl Capturing {
    fn inner(&self) -> &'static dyn SupportedKxGroup {
        match self.0 {
            KxGroup::X25519 => rustls::crypto::ring::kx_group::X25519,
            KxGroup::Secp256r1 => rustls::crypto::ring::kx_group::SECP256R1,
        }
    }
}

static X25519: Capturing = Capturing(KxGroup::X25519);
static SECP256R1: Capturing = Capturing(KxGroup::Secp256r1);

impl SupportedKxGroup for Capturing {
    fn start(&self) -> Result<Box<dyn ActiveKeyExchange>, rustls::Error> {
        Ok(Box::new(CapturingExchange(self.inner().start()?)))
    }
    fn name(&self) -> NamedGroup {
        self.inner().name()
    }
}

struct CapturingExchange(Box<dyn ActiveKeyExchange>);

impl ActiveKeyExchange for CapturingExchange {
    fn complete(self: Box<Self>, peer_pub_key: &[u8]) -> Result<SharedSecret, rustls::Error> {
        let pk = self.0.pub_key().to_vec();
        let secret = self.0.complete(peer_pub_key)?;
        store(pk, secret.secret_bytes().to_vec());
        Ok(secret)
    }
    fn pub_key(&self) -> &[u8] {
        self.0.pub_key()
    }
    fn group(&self) -> NamedGroup {
        self.0.group()
    }
}

fn rustls_suite(s: CipherSuite) -> SupportedCipherSuite {
    use rustls::crypto::ring::cipher_suite as cs;
    match s {
        CipherSuite::TLS13_AES_128_GCM_SHA256 => cs::TLS13_AES_128_GCM_SHA256,
        CipherSuite::TLS13_AES_256_GCM_SHA384 => cs::TLS13_AES_256_GCM_SHA384,
        CipherSuite::TLS13_CHACHA20_POLY1305_SHA256 => cs::TLS13_CHACHA20_POLY1305_SHA256,
        CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 => {
            cs::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256
        }
        CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384 => {
            cs::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384
        }
        CipherSuite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 => {
            cs::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256
        }
        CipherSuite::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384 => {
            cs::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384
        }
        CipherSuite::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256 => {
            cs::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256
        }
        CipherSuite::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256 => {
            cs::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256
        }
    }
}

/// The instrumented provider offering exactly `suites` (all supported if
/// empty) and `groups` (X25519 then P-256 if empty), in that order.
pub fn instrumented_provider(suites: &[CipherSuite], groups: &[KxGroup]) -> CryptoProvider {
    let suites: Vec<CipherSuite> = if suites.is_empty() {
        CipherSuite::ALL.to_vec()
    } else {
        suites.to_vec()
    };
    let groups: Vec<KxGroup> = if groups.is_empty() {
        vec![KxGroup::X25519, KxGroup::Secp256r1]
    } else {
        groups.to_vec()
    };
    let mut p = rustls::crypto::ring::default_provider();
    p.cipher_suites = suites.into_iter().map(rustls_suite).collect();
    p.kx_groups = groups
        .into_iter()
        .map(|g| -> &'static dyn SupportedKxGroup {
            match g {
                KxGroup::X25519 => &X25519,
                KxGroup::Secp256r1 => &SECP256R1,
            }
        })
        .collect();
    p
}

/// (label, client_random, secret)
type KeyLogEntry = (String, Vec<u8>, Vec<u8>);

/// A `KeyLog` that keeps what rustls logs, for the cross-check.
#[derive(Debug, Default)]
pub struct CollectingKeyLog {
    entries: Mutex<Vec<KeyLogEntry>>,
}

impl CollectingKeyLog {
    /// A fresh log.
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// The secret logged under `label` for `client_random`.
    pub fn get(&self, label: &str, client_random: &[u8]) -> Option<Vec<u8>> {
        let e = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        e.iter()
            .find(|(l, r, _)| l == label && r == client_random)
            .map(|(_, _, s)| s.clone())
    }
}

impl rustls::KeyLog for CollectingKeyLog {
    fn log(&self, label: &str, client_random: &[u8], secret: &[u8]) {
        let mut e = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        e.push((label.to_string(), client_random.to_vec(), secret.to_vec()));
    }
    fn will_log(&self, _label: &str) -> bool {
        true
    }
}

/// Why a prover's TLS client configuration could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// An extra trusted root is not a PEM certificate.
    #[error("CA certificate PEM: {0}")]
    CaPem(String),
    /// An extra trusted root is not a usable trust anchor.
    #[error("CA certificate: {0}")]
    CaCertificate(rustls::Error),
    /// Suites were chosen, but none of the chosen TLS version.
    #[error("none of the chosen suites belongs to the chosen TLS version")]
    NoSuiteForVersion,
    /// rustls refused the combination.
    #[error("TLS configuration: {0}")]
    Rustls(rustls::Error),
}

/// What a prover's TLS client offers and trusts.
#[derive(Clone, Debug, Default)]
pub struct ClientOptions<'a> {
    /// Restrict to one TLS version.
    pub version: Option<TlsVersion>,
    /// Suites to offer (empty: all supported).
    pub suites: &'a [CipherSuite],
    /// Groups to offer (empty: X25519, P-256).
    pub groups: &'a [KxGroup],
    /// Extra trusted roots (PEM), beside the webpki roots.
    pub ca_pems: &'a [Vec<u8>],
}

/// The prover's rustls client configuration: the instrumented provider,
/// webpki roots plus `opts.ca_pems`, no resumption or early data (the
/// proof covers one full handshake), secrets logged to `keylog`, and
/// certificate validity checked against `time` (a browser has no
/// `SystemTime`).
pub fn client_config(
    opts: &ClientOptions<'_>,
    keylog: Arc<CollectingKeyLog>,
    time: Arc<dyn TimeProvider>,
) -> Result<Arc<rustls::ClientConfig>, ConfigError> {
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    for pem in opts.ca_pems {
        for c in rustls::pki_types::CertificateDer::pem_slice_iter(pem) {
            let c = c.map_err(|e| ConfigError::CaPem(format!("{e:?}")))?;
            roots.add(c).map_err(ConfigError::CaCertificate)?;
        }
    }
    let versions: Vec<&'static rustls::SupportedProtocolVersion> = match opts.version {
        Some(TlsVersion::Tls12) => vec![&rustls::version::TLS12],
        Some(TlsVersion::Tls13) => vec![&rustls::version::TLS13],
        None => vec![&rustls::version::TLS13, &rustls::version::TLS12],
    };
    let suites: Vec<CipherSuite> = opts
        .suites
        .iter()
        .copied()
        .filter(|s| opts.version.is_none_or(|v| s.version() == v))
        .collect();
    if !opts.suites.is_empty() && suites.is_empty() {
        return Err(ConfigError::NoSuiteForVersion);
    }
    let provider = Arc::new(instrumented_provider(&suites, opts.groups));
    let mut cfg = rustls::ClientConfig::builder_with_details(provider, time)
        .with_protocol_versions(&versions)
        .map_err(ConfigError::Rustls)?
        .with_root_certificates(roots)
        .with_no_client_auth();
    cfg.resumption = rustls::client::Resumption::disabled();
    cfg.enable_early_data = false;
    cfg.key_log = keylog;
    Ok(Arc::new(cfg))
}
