//! The error of the TLS checks and parsers.

/// Why TLS bytes or a server's identity were refused.
///
/// Variants say what failed; the payload says where, for humans. The
/// modes' own errors take these one to one (`webproof_proxy::ProxyError`
/// has a variant of each name).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TlsError {
    /// Bytes that do not parse as what TLS requires here.
    #[error("malformed {what}: {detail}")]
    Malformed {
        /// What was being parsed (a record, a ClientHello, a message...).
        what: &'static str,
        /// Where or how it went wrong.
        detail: String,
    },
    /// Valid TLS that webproof does not handle (resumption, client certs...).
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// A configured limit (bytes, records, message size) was exceeded.
    #[error("limit exceeded: {0}")]
    Limit(String),
    /// The server's certificate chain is not trusted for this name and time.
    #[error("server certificate rejected: {0}")]
    Certificate(String),
    /// CertificateVerify (TLS 1.3) or ServerKeyExchange (TLS 1.2) signature is invalid.
    #[error("handshake signature invalid: {0}")]
    Signature(String),
    /// The prover's account of the transcript disagrees with the recording
    /// (a cut at more records than were relayed).
    #[error("protocol violation: {0}")]
    Protocol(String),
}

/// Result with [`TlsError`].
pub type Result<T, E = TlsError> = core::result::Result<T, E>;

pub(crate) fn malformed(what: &'static str, detail: impl Into<String>) -> TlsError {
    TlsError::Malformed {
        what,
        detail: detail.into(),
    }
}
