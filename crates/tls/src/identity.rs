//! The server's identity: its certificate chain to the configured roots,
//! valid for the server name at the session's time, and the handshake
//! signature (TLS 1.3 CertificateVerify, TLS 1.2 ServerKeyExchange) under
//! the end-entity key. Proxy mode runs it on the recorded handshake, MPC
//! mode on the flight its verifier received itself.

use crate::error::{malformed, Result, TlsError};
use crate::handshake as hsk;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, ServerName, TrustAnchor, UnixTime};

/// The trust anchors the verifier accepts server chains to.
#[derive(Clone, Debug, Default)]
pub struct RootStore {
    anchors: Vec<TrustAnchor<'static>>,
}

impl RootStore {
    /// No roots.
    pub fn empty() -> Self {
        Self::default()
    }

    /// The Mozilla roots shipped by `webpki-roots`.
    pub fn webpki_roots() -> Self {
        RootStore {
            anchors: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        }
    }

    /// Add one DER certificate as a trust anchor.
    pub fn add_der(&mut self, der: &[u8]) -> Result<()> {
        let cert = CertificateDer::from(der);
        let anchor = webpki::anchor_from_trusted_cert(&cert)
            .map_err(|e| TlsError::Certificate(format!("unusable root certificate: {e}")))?;
        self.anchors.push(anchor.to_owned());
        Ok(())
    }

    /// Add every certificate in a PEM text; returns how many were added.
    pub fn add_pem(&mut self, pem: &[u8]) -> Result<usize> {
        let mut n = 0;
        for c in CertificateDer::pem_slice_iter(pem) {
            let c = c.map_err(|e| malformed("PEM root certificate", format!("{e:?}")))?;
            self.add_der(&c)?;
            n += 1;
        }
        if n == 0 {
            return Err(malformed("PEM root certificate", "no CERTIFICATE section"));
        }
        Ok(n)
    }

    /// Number of anchors.
    pub fn len(&self) -> usize {
        self.anchors.len()
    }

    /// Whether there are no anchors.
    pub fn is_empty(&self) -> bool {
        self.anchors.is_empty()
    }
}

/// What the verifier checks the session against.
#[derive(Clone, Debug)]
pub struct VerifyConfig {
    /// Trusted roots.
    pub roots: RootStore,
    /// The server name (DNS name or IP address) the prover asked to reach.
    pub server_name: String,
    /// The TCP port the verifier connected to.
    pub port: u16,
    /// Session time, seconds since the Unix epoch (the verifier's clock when it connected).
    pub time: u64,
}

/// The ClientHello's server name indication names `name` (none for an
/// IP address).
pub fn check_sni(ch: &hsk::ClientHello, name: &str) -> Result<()> {
    let is_ip = name.parse::<core::net::IpAddr>().is_ok();
    match (&ch.server_name, is_ip) {
        (Some(sni), false) if sni.eq_ignore_ascii_case(name) => Ok(()),
        (None, true) => Ok(()),
        (Some(sni), _) => Err(TlsError::Certificate(format!(
            "the ClientHello names {sni:?} but the prover asked for {name:?}"
        ))),
        (None, false) => Err(malformed("ClientHello", "no server name indication")),
    }
}

/// The TLS 1.2 server identity: the certificate `chain` (end entity first)
/// to the configured roots, valid for the configured name at `cfg.time`,
/// and the ServerKeyExchange signature over `client_random ‖
/// server_random ‖ params` under the end-entity key. Shared by proxy mode
/// and MPC mode (`webproof-mpc-tls`), whose verifier runs it on the flight
/// it received itself.
pub fn check_tls12_server(
    cfg: &VerifyConfig,
    chain: &[Vec<u8>],
    client_random: &[u8; 32],
    server_random: &[u8; 32],
    ske: &hsk::ServerKeyExchange,
) -> Result<()> {
    let first = chain
        .first()
        .ok_or_else(|| TlsError::Certificate("the server sent no certificate".into()))?;
    let ee_der = CertificateDer::from(first.as_slice());
    let ee_cert = check_chain(cfg, &ee_der, chain)?;
    let mut signed = client_random.to_vec();
    signed.extend_from_slice(server_random);
    signed.extend_from_slice(&ske.params);
    check_signature(
        &ee_cert,
        ske.signed.scheme,
        &signed,
        &ske.signed.signature,
        false,
    )
}

/// The end-entity certificate `ee_der` with the rest of `chain` to the
/// configured roots, valid for the configured name at `cfg.time`.
pub fn check_chain<'a>(
    cfg: &VerifyConfig,
    ee_der: &'a CertificateDer<'a>,
    chain: &[Vec<u8>],
) -> Result<webpki::EndEntityCert<'a>> {
    let ee = webpki::EndEntityCert::try_from(ee_der).map_err(|e| {
        TlsError::Certificate(format!("end-entity certificate does not parse: {e}"))
    })?;
    let inter: Vec<CertificateDer<'_>> = chain[1..]
        .iter()
        .map(|c| CertificateDer::from(c.as_slice()))
        .collect();
    let time = UnixTime::since_unix_epoch(core::time::Duration::from_secs(cfg.time));
    ee.verify_for_usage(
        crate::sigalg::ALL,
        &cfg.roots.anchors,
        &inter,
        time,
        webpki::KeyUsage::server_auth(),
        None,
        None,
    )
    .map_err(|e| TlsError::Certificate(format!("chain not trusted: {e}")))?;
    let name = ServerName::try_from(cfg.server_name.as_str()).map_err(|_| {
        TlsError::Certificate(format!("{:?} is not a valid server name", cfg.server_name))
    })?;
    ee.verify_is_valid_for_subject_name(&name)
        .map_err(|e| TlsError::Certificate(format!("not valid for {}: {e}", cfg.server_name)))?;
    Ok(ee)
}

/// `sig` over `msg` under the end-entity key, by the signature `scheme`
/// (the schemes TLS 1.3 allows when `tls13`).
pub fn check_signature(
    ee: &webpki::EndEntityCert<'_>,
    scheme: u16,
    msg: &[u8],
    sig: &[u8],
    tls13: bool,
) -> Result<()> {
    use crate::sigalg as alg;
    let algs: &[&dyn rustls_pki_types::SignatureVerificationAlgorithm] = match (scheme, tls13) {
        (0x0403, true) => &[alg::ECDSA_P256_SHA256],
        (0x0503, true) => &[alg::ECDSA_P384_SHA384],
        (0x0403, false) => &[alg::ECDSA_P256_SHA256, alg::ECDSA_P384_SHA256],
        (0x0503, false) => &[alg::ECDSA_P384_SHA384, alg::ECDSA_P256_SHA384],
        (0x0804, _) => &[alg::RSA_PSS_SHA256],
        (0x0805, _) => &[alg::RSA_PSS_SHA384],
        (0x0806, _) => &[alg::RSA_PSS_SHA512],
        (0x0807, _) => &[alg::ED25519],
        (0x0401, false) => &[alg::RSA_PKCS1_SHA256],
        (0x0501, false) => &[alg::RSA_PKCS1_SHA384],
        (0x0601, false) => &[alg::RSA_PKCS1_SHA512],
        (s, _) => {
            return Err(TlsError::Signature(format!(
                "signature scheme {s:#06x} not accepted"
            )))
        }
    };
    for a in algs {
        if ee
            .verify_signature(
                *a as &dyn rustls_pki_types::SignatureVerificationAlgorithm,
                msg,
                sig,
            )
            .is_ok()
        {
            return Ok(());
        }
    }
    Err(TlsError::Signature(format!(
        "{} signature (scheme {scheme:#06x}) does not verify under the server certificate",
        if tls13 {
            "CertificateVerify"
        } else {
            "ServerKeyExchange"
        }
    )))
}
