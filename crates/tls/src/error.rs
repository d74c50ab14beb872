//! The error of the TLS checks and parsers.

use crate::record::Direction;

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
    /// The transcript ended before the handshake or a record was complete.
    #[error("transcript incomplete: {0}")]
    Incomplete(String),
    /// A record did not authenticate under the key derived for its direction
    /// and its position (wrong secret, altered, dropped, reordered or replayed record).
    #[error("record {index} sent by the {} does not decrypt (sequence number {seq}): wrong key or altered/dropped/reordered record", direction.sender())]
    Decrypt {
        /// Which direction the record travelled.
        direction: Direction,
        /// The record's position among that direction's records in the transcript.
        index: usize,
        /// The TLS sequence number it was checked under.
        seq: u64,
    },
    /// A Finished message does not match the handshake.
    #[error("{0} Finished does not match the handshake")]
    Finished(Direction),
    /// A revealed secret does not follow from the witness.
    #[error("secret mismatch: {0}")]
    SecretMismatch(String),
    /// The peer sent a fatal alert during the handshake.
    #[error("{direction} sent alert {description} during the handshake")]
    HandshakeAlert {
        /// Who sent it.
        direction: Direction,
        /// The alert description code (RFC 8446 section 6).
        description: u8,
    },
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
