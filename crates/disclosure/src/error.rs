//! The one error type of the disclosure layer.
//!
//! Its variants are `webproof_proxy::ProxyError`'s of the same names and
//! messages, into which each converts one to one: both modes report a
//! refused opening or a malformed reveal item alike.

use webproof_tls::Direction;

/// Why a reveal item, an opening, a verdict or an attestation was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DisclosureError {
    /// Bytes or text that do not parse as what is required here (an HTTP
    /// message, a JSON body, a reveal item, a proof plan's ranges...).
    #[error("malformed {what}: {detail}")]
    Malformed {
        /// What was being parsed.
        what: &'static str,
        /// Where or how it went wrong.
        detail: String,
    },
    /// The prover's openings do not match the authenticated plaintext or are out of range.
    #[error("opening rejected: {0}")]
    Opening(String),
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
}

/// Result with [`DisclosureError`].
pub type Result<T, E = DisclosureError> = core::result::Result<T, E>;

pub(crate) fn malformed(what: &'static str, detail: impl Into<String>) -> DisclosureError {
    DisclosureError::Malformed {
        what,
        detail: detail.into(),
    }
}
