//! Certificates and TLS configurations for the nested-TLS bench.
//!
//! Outer and inner TLS each get their own CA and server certificate
//! (generated with rcgen for every run). With an *attested* inner endpoint,
//! the inner server certificate is self-signed and carries a DCAP quote in
//! an X.509 extension whose report data must equal SHA-512 of the
//! certificate's SubjectPublicKeyInfo (DER): the quote, not a CA, vouches
//! for the key. The client checks, per handshake: the TLS signature with
//! that key, the quote with `dcap-qvl`, and the binding.
//!
//! Test mode: off a TDX host no quote over our key can be made, so the
//! server embeds the dcap-qvl sample quote. Its signature chain verifies but
//! its report data cannot match our key, so the binding check fails; in
//! test mode that failure is counted and reported instead of aborting the
//! handshake, so the per-handshake verification cost is still measured.

use crate::dcap::{DcapVerifier, SAMPLE_TDX_QUOTE, SAMPLE_VERIFY_NOW};
use der::{Decode, Encode};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::{ClientConfig, DigitallySignedStruct, ServerConfig, SignatureScheme};
use rustls_pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName, UnixTime};
use sha2::{Digest, Sha512};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Extension carrying the raw quote. The arc is the one Gramine's RA-TLS
/// uses for a raw SGX quote; note that our binding (SHA-512 of the SPKI DER
/// in all 64 bytes) is our own, so this is not Gramine-compatible.
pub const QUOTE_EXTENSION_OID: &[u64] = &[1, 2, 840, 113741, 1337, 6];
/// Server names of the two layers.
pub const OUTER_NAME: &str = "outer.webproof.test";
pub const INNER_NAME: &str = "inner.webproof.test";

#[derive(Debug, thiserror::Error)]
pub enum CertError {
    #[error("certificate generation: {0}")]
    Rcgen(#[from] rcgen::Error),
    #[error("TLS configuration: {0}")]
    Tls(#[from] rustls::Error),
    #[error("quote for the certificate key: {0}")]
    QuoteSource(String),
    #[error("encoding the quote extension: {0}")]
    Encoding(String),
}

/// The report data that binds a key: SHA-512 of its SubjectPublicKeyInfo.
pub fn binding_report_data(spki_der: &[u8]) -> [u8; 64] {
    Sha512::digest(spki_der).into()
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// One TLS layer: a server config and the matching client config.
pub struct Layer {
    pub server: Arc<ServerConfig>,
    pub client: Arc<ClientConfig>,
}

fn key_der(k: &rcgen::KeyPair) -> PrivateKeyDer<'static> {
    PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(k.serialize_der()))
}

/// A CA-issued layer for `name` (normal WebPKI validation on the client).
pub fn ca_layer(name: &str) -> Result<Layer, CertError> {
    let ca_key = rcgen::KeyPair::generate()?;
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new())?;
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params.distinguished_name.push(
        rcgen::DnType::CommonName,
        format!("webproof bench CA for {name}"),
    );
    let ca = ca_params.self_signed(&ca_key)?;
    let leaf_key = rcgen::KeyPair::generate()?;
    let leaf = rcgen::CertificateParams::new(vec![name.to_string()])?
        .signed_by(&leaf_key, &ca, &ca_key)?;
    let mut server = ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(vec![leaf.der().clone()], key_der(&leaf_key))?;
    // Clients never resume (see below), so tickets would be wasted work.
    server.send_tls13_tickets = 0;
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ca.der().clone())?;
    let mut client = ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots)
        .with_no_client_auth();
    // Every connection pays a full handshake: resumption would skip the
    // certificate (and quote) checks the bench is meant to measure.
    client.resumption = rustls::client::Resumption::disabled();
    Ok(Layer {
        server: Arc::new(server),
        client: Arc::new(client),
    })
}

/// Produces the quote an attested server embeds for its key.
pub trait QuoteSource {
    fn quote(&self, report_data: &[u8; 64]) -> Result<Vec<u8>, String>;
}

/// Test mode: the dcap-qvl sample quote, whatever the report data.
pub struct SampleQuote;
impl QuoteSource for SampleQuote {
    fn quote(&self, _report_data: &[u8; 64]) -> Result<Vec<u8>, String> {
        Ok(SAMPLE_TDX_QUOTE.to_vec())
    }
}

/// A real TDX guest: generate a quote over the binding.
pub struct TdxQuote(pub crate::tdx::TsmReport);
impl QuoteSource for TdxQuote {
    fn quote(&self, report_data: &[u8; 64]) -> Result<Vec<u8>, String> {
        let name = format!("webproof-cert-{}", std::process::id());
        self.0
            .generate(&name, report_data)
            .map_err(|e| e.to_string())
    }
}

/// A self-signed certificate for `name` with `quote` in the quote extension.
/// Returns the certificate, its key, and the binding of its key.
pub fn attested_cert(
    name: &str,
    source: &dyn QuoteSource,
) -> Result<(CertificateDer<'static>, rcgen::KeyPair, [u8; 64]), CertError> {
    let key = rcgen::KeyPair::generate()?;
    let binding = binding_report_data(&key.public_key_der());
    let quote = source.quote(&binding).map_err(CertError::QuoteSource)?;
    let mut params = rcgen::CertificateParams::new(vec![name.to_string()])?;
    params
        .custom_extensions
        .push(rcgen::CustomExtension::from_oid_content(
            QUOTE_EXTENSION_OID,
            der::asn1::OctetString::new(quote)
                .and_then(|o| o.to_der())
                .map_err(|e| CertError::Encoding(e.to_string()))?,
        ));
    let cert = params.self_signed(&key)?;
    Ok((cert.der().clone(), key, binding))
}

/// What an attested certificate's extension and key say.
#[derive(Debug)]
pub struct AttestedCertInfo {
    pub quote: Vec<u8>,
    pub spki_der: Vec<u8>,
}

/// Why an attested certificate was refused.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum AttestError {
    #[error("certificate does not parse: {0}")]
    BadCertificate(String),
    #[error("certificate has no quote extension")]
    NoQuote,
    #[error("certificate has more than one quote extension")]
    DuplicateQuote,
    #[error("quote extension is not an OCTET STRING: {0}")]
    BadExtension(String),
    #[error("quote rejected: {0}")]
    Quote(String),
    #[error("quote report data does not bind the certificate key")]
    KeyNotBound,
}

/// Extract the quote and SubjectPublicKeyInfo from a certificate.
pub fn parse_attested_cert(cert: &[u8]) -> Result<AttestedCertInfo, AttestError> {
    let c = x509_cert::Certificate::from_der(cert)
        .map_err(|e| AttestError::BadCertificate(e.to_string()))?;
    let tbs = &c.tbs_certificate();
    let oid = der::asn1::ObjectIdentifier::new(
        &QUOTE_EXTENSION_OID
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join("."),
    )
    .expect("constant OID");
    let mut found = None;
    for ext in tbs.extensions().into_iter().flatten() {
        if ext.extn_id == oid {
            if found.is_some() {
                return Err(AttestError::DuplicateQuote);
            }
            let inner = der::asn1::OctetString::from_der(ext.extn_value.as_bytes())
                .map_err(|e| AttestError::BadExtension(e.to_string()))?;
            found = Some(inner.into_bytes().into_vec());
        }
    }
    let quote = found.ok_or(AttestError::NoQuote)?;
    let spki_der = tbs
        .subject_public_key_info()
        .to_der()
        .map_err(|e| AttestError::BadCertificate(e.to_string()))?;
    Ok(AttestedCertInfo { quote, spki_der })
}

/// Counters of what attested handshakes established.
#[derive(Debug, Default)]
pub struct AttestCounters {
    pub quotes_verified: AtomicU64,
    pub quote_failures: AtomicU64,
    pub bindings_ok: AtomicU64,
    pub bindings_failed: AtomicU64,
    /// Nanoseconds spent in quote verification (all handshakes).
    pub verify_ns: AtomicU64,
}

/// Client-side verifier of attested certificates.
#[derive(Debug)]
pub struct AttestedVerifier {
    dcap: Arc<DcapVerifier>,
    now: u64,
    /// Test mode: count a binding failure instead of failing the handshake.
    allow_unbound: bool,
    pub counters: Arc<AttestCounters>,
    provider: Arc<CryptoProvider>,
}

impl AttestedVerifier {
    pub fn new(dcap: Arc<DcapVerifier>, now: u64, allow_unbound: bool) -> Self {
        Self {
            dcap,
            now,
            allow_unbound,
            counters: Arc::default(),
            provider: provider(),
        }
    }

    /// The checks behind `verify_server_cert`, usable without a handshake.
    pub fn check(&self, cert: &[u8]) -> Result<(), AttestError> {
        let info = parse_attested_cert(cert)?;
        let t = std::time::Instant::now();
        let verified = self.dcap.verify(&info.quote, self.now, None);
        self.counters
            .verify_ns
            .fetch_add(t.elapsed().as_nanos() as u64, Ordering::Relaxed);
        let verified = match verified {
            Ok(v) => {
                self.counters
                    .quotes_verified
                    .fetch_add(1, Ordering::Relaxed);
                v
            }
            Err(e) => {
                self.counters.quote_failures.fetch_add(1, Ordering::Relaxed);
                return Err(AttestError::Quote(e.to_string()));
            }
        };
        if verified.report_data == binding_report_data(&info.spki_der) {
            self.counters.bindings_ok.fetch_add(1, Ordering::Relaxed);
            Ok(())
        } else {
            self.counters
                .bindings_failed
                .fetch_add(1, Ordering::Relaxed);
            if self.allow_unbound {
                Ok(())
            } else {
                Err(AttestError::KeyNotBound)
            }
        }
    }
}

impl ServerCertVerifier for AttestedVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        self.check(end_entity)
            .map(|()| ServerCertVerified::assertion())
            .map_err(|e| rustls::Error::General(format!("attested certificate: {e}")))
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// An attested inner layer: server with a quote-carrying certificate,
/// client with [`AttestedVerifier`] over the sample collateral.
pub fn attested_layer(
    name: &str,
    source: &dyn QuoteSource,
    dcap: Arc<DcapVerifier>,
    now: u64,
    allow_unbound: bool,
) -> Result<(Layer, Arc<AttestCounters>), CertError> {
    let (cert, key, _binding) = attested_cert(name, source)?;
    let mut server = ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(vec![cert], key_der(&key))?;
    server.send_tls13_tickets = 0;
    let verifier = Arc::new(AttestedVerifier::new(dcap, now, allow_unbound));
    let counters = verifier.counters.clone();
    let mut client = ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    client.resumption = rustls::client::Resumption::disabled();
    Ok((
        Layer {
            server: Arc::new(server),
            client: Arc::new(client),
        },
        counters,
    ))
}

/// The test-mode attested layer: sample quote, sample collateral, pinned time.
pub fn sample_attested_layer(name: &str) -> Result<(Layer, Arc<AttestCounters>), CertError> {
    attested_layer(
        name,
        &SampleQuote,
        Arc::new(DcapVerifier::sample()),
        SAMPLE_VERIFY_NOW,
        true,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A source that returns the sample quote with its report data replaced
    /// by the binding: the binding then matches, but the quote's signature
    /// no longer covers its body.
    struct PatchedSample;
    impl QuoteSource for PatchedSample {
        fn quote(&self, rd: &[u8; 64]) -> Result<Vec<u8>, String> {
            let mut q = SAMPLE_TDX_QUOTE.to_vec();
            let off = crate::dcap::TDX_REPORT_DATA_OFFSET;
            q[off..off + 64].copy_from_slice(rd);
            Ok(q)
        }
    }

    fn strict() -> AttestedVerifier {
        AttestedVerifier::new(Arc::new(DcapVerifier::sample()), SAMPLE_VERIFY_NOW, false)
    }

    #[test]
    fn extension_round_trips_and_spki_matches_rcgen() {
        let (cert, key, binding) = attested_cert(INNER_NAME, &SampleQuote).unwrap();
        let info = parse_attested_cert(&cert).unwrap();
        assert_eq!(info.quote, SAMPLE_TDX_QUOTE);
        assert_eq!(info.spki_der, key.public_key_der());
        assert_eq!(binding_report_data(&info.spki_der), binding);
    }

    #[test]
    fn sample_quote_verifies_but_does_not_bind_our_key() {
        let (cert, _, _) = attested_cert(INNER_NAME, &SampleQuote).unwrap();
        let v = strict();
        assert_eq!(v.check(&cert), Err(AttestError::KeyNotBound));
        assert_eq!(v.counters.quotes_verified.load(Ordering::Relaxed), 1);
        assert_eq!(v.counters.bindings_failed.load(Ordering::Relaxed), 1);
        // Test mode lets it through but still counts the failed binding.
        let t = AttestedVerifier::new(Arc::new(DcapVerifier::sample()), SAMPLE_VERIFY_NOW, true);
        assert_eq!(t.check(&cert), Ok(()));
        assert_eq!(t.counters.bindings_failed.load(Ordering::Relaxed), 1);
        assert_eq!(t.counters.bindings_ok.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn forged_binding_breaks_the_quote_signature() {
        // A cheating server patches our key's binding into the sample quote:
        // the quote must then fail verification, even in test mode.
        let (cert, _, _) = attested_cert(INNER_NAME, &PatchedSample).unwrap();
        let t = AttestedVerifier::new(Arc::new(DcapVerifier::sample()), SAMPLE_VERIFY_NOW, true);
        assert!(matches!(t.check(&cert), Err(AttestError::Quote(_))));
        assert_eq!(t.counters.quote_failures.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn certificates_without_a_valid_quote_are_refused() {
        let plain = rcgen::generate_simple_self_signed(vec![INNER_NAME.to_string()]).unwrap();
        assert_eq!(strict().check(plain.cert.der()), Err(AttestError::NoQuote));
        assert!(matches!(
            strict().check(b"not a certificate"),
            Err(AttestError::BadCertificate(_))
        ));
        // A quote outside the collateral window is refused.
        let (cert, _, _) = attested_cert(INNER_NAME, &SampleQuote).unwrap();
        let late = AttestedVerifier::new(Arc::new(DcapVerifier::sample()), 2_000_000_000, true);
        assert!(matches!(late.check(&cert), Err(AttestError::Quote(_))));
    }
}
