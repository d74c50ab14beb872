//! The TLS listener's server configuration: the service's own certificate.

use crate::error::{Result, ServiceError};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::sync::Arc;

/// A rustls server configuration (TLS 1.2 and 1.3) from a PEM certificate
/// chain (leaf first) and a PEM private key.
pub fn server_config(cert_pem: &[u8], key_pem: &[u8]) -> Result<Arc<rustls::ServerConfig>> {
    let chain = CertificateDer::pem_slice_iter(cert_pem)
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| ServiceError::invalid("listen_tls.cert", format!("PEM: {e:?}")))?;
    if chain.is_empty() {
        return Err(ServiceError::invalid(
            "listen_tls.cert",
            "no certificate in the file",
        ));
    }
    let key = PrivateKeyDer::from_pem_slice(key_pem)
        .map_err(|e| ServiceError::invalid("listen_tls.key", format!("PEM: {e:?}")))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let cfg = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| ServiceError::invalid("listen_tls", e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| ServiceError::invalid("listen_tls", format!("certificate and key: {e}")))?;
    Ok(Arc::new(cfg))
}
