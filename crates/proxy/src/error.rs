//! The one error type of proxy mode's protocol core.

use crate::record::Direction;

/// Why a transcript, a message or a proof was rejected.
///
/// Variants say what failed; the payload says where, for humans.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProxyError {
    /// Bytes that do not parse as what the protocol requires here.
    #[error("malformed {what}: {detail}")]
    Malformed {
        /// What was being parsed (a record, a ClientHello, a message...).
        what: &'static str,
        /// Where or how it went wrong.
        detail: String,
    },
    /// Valid TLS that proxy mode does not handle (resumption, client certs...).
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// A configured limit (bytes, records, message size) was exceeded.
    #[error("limit exceeded: {0}")]
    Limit(String),
    /// The transcript ended before the handshake or a record was complete.
    #[error("transcript incomplete: {0}")]
    Incomplete(String),
    /// The server's certificate chain is not trusted for this name and time.
    #[error("server certificate rejected: {0}")]
    Certificate(String),
    /// CertificateVerify (TLS 1.3) or ServerKeyExchange (TLS 1.2) signature is invalid.
    #[error("handshake signature invalid: {0}")]
    Signature(String),
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
    /// A record's AEAD tag does not verify under the key of its direction at
    /// its position: the peer would have rejected it. On the ZK path this is
    /// how a client record the prover forged or altered is refused.
    #[error("record {index} sent by the {} has an AEAD tag that does not verify (sequence number {seq}): the peer would have rejected it", direction.sender())]
    Tag {
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
    /// The prover's openings do not match the authenticated plaintext or are out of range.
    #[error("opening rejected: {0}")]
    Opening(String),
    /// A client record with application data that the verifier recorded
    /// but never forwarded to the server (it had closed, or a write failed).
    #[error("client record {index} carries application data the server never received (the server side had closed)")]
    Undelivered {
        /// The record's position among the client's records.
        index: usize,
    },
    /// An attestation could not be issued or is not what was asked for.
    #[error("attestation: {0}")]
    Attestation(String),
    /// The verifier's verdict disagrees with the prover's own data: another
    /// length, other revealed ranges or a digest of other bytes (see
    /// `disclosure::disclosure_digest`). The verdict is not about this session.
    #[error("the verifier's verdict does not match the prover's {direction} data: {detail}")]
    Verdict {
        /// The direction whose disclosure disagrees.
        direction: Direction,
        /// How.
        detail: String,
    },
    /// The peer violated the prover/verifier protocol.
    #[error("protocol violation: {0}")]
    Protocol(String),
}

/// The TLS checks' errors are proxy mode's of the same names.
impl From<webproof_tls::TlsError> for ProxyError {
    fn from(e: webproof_tls::TlsError) -> Self {
        use webproof_tls::TlsError as T;
        match e {
            T::Malformed { what, detail } => ProxyError::Malformed { what, detail },
            T::Unsupported(s) => ProxyError::Unsupported(s),
            T::Limit(s) => ProxyError::Limit(s),
            T::Certificate(s) => ProxyError::Certificate(s),
            T::Signature(s) => ProxyError::Signature(s),
            T::Incomplete(s) => ProxyError::Incomplete(s),
            T::Decrypt {
                direction,
                index,
                seq,
            } => ProxyError::Decrypt {
                direction,
                index,
                seq,
            },
            T::Finished(d) => ProxyError::Finished(d),
            T::SecretMismatch(s) => ProxyError::SecretMismatch(s),
            T::HandshakeAlert {
                direction,
                description,
            } => ProxyError::HandshakeAlert {
                direction,
                description,
            },
            T::Protocol(s) => ProxyError::Protocol(s),
        }
    }
}

/// The disclosure layer's errors are proxy mode's of the same names.
impl From<webproof_disclosure::DisclosureError> for ProxyError {
    fn from(e: webproof_disclosure::DisclosureError) -> Self {
        use webproof_disclosure::DisclosureError as D;
        match e {
            D::Malformed { what, detail } => ProxyError::Malformed { what, detail },
            D::Opening(s) => ProxyError::Opening(s),
            D::Attestation(s) => ProxyError::Attestation(s),
            D::Verdict { direction, detail } => ProxyError::Verdict { direction, detail },
        }
    }
}

/// Result with [`ProxyError`].
pub type Result<T, E = ProxyError> = core::result::Result<T, E>;

pub(crate) fn malformed(what: &'static str, detail: impl Into<String>) -> ProxyError {
    ProxyError::Malformed {
        what,
        detail: detail.into(),
    }
}
