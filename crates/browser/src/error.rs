//! Why a browser proof failed, typed for the page: a run's outward error
//! ([`webproof_session::Error`], decided by the same code as natively),
//! or what the page itself decides (its options, a cancellation, the
//! engine's warm-up).

use webproof_session::Error as RunError;

/// A failed proof.
#[derive(Debug, thiserror::Error)]
pub enum BrowserError {
    /// The run failed: refused or rejected by the verifier, the server's
    /// TLS, the link, or this side's own check of the verifier's messages
    /// and its data.
    #[error(transparent)]
    Run(#[from] RunError),
    /// The options cannot make a session (URL, roots, names).
    #[error("setup: {0}")]
    Setup(String),
    /// An option's value is not one the prover knows (`tls`, `suite`).
    #[error("setup: {option}: unknown value {value:?}; expected {expected}")]
    UnknownOption {
        /// The option's name, as the page passes it.
        option: &'static str,
        /// The value given.
        value: String,
        /// What the option accepts.
        expected: String,
    },
    /// The page cancelled the proof (its `AbortSignal`); the link is
    /// closed, which ends the session on the service.
    #[error("cancelled by the page")]
    Cancelled,
    /// The proof engine failed (the warm-up).
    #[error("proof engine during {phase}: {detail}")]
    Engine {
        /// The step that failed.
        phase: String,
        /// The engine's error.
        detail: String,
    },
}

impl From<webproof_proxy::session::SessionError> for BrowserError {
    fn from(e: webproof_proxy::session::SessionError) -> Self {
        BrowserError::Run(e.into())
    }
}

impl BrowserError {
    /// The reason code the page sees: a run's [`RunError::reason`] (the
    /// same as `webproof prove --json`'s), else `setup`, `cancelled` or
    /// `engine`.
    pub fn kind(&self) -> String {
        match self {
            BrowserError::Run(e) => e.reason(),
            BrowserError::Setup(_) | BrowserError::UnknownOption { .. } => "setup".into(),
            BrowserError::Cancelled => "cancelled".into(),
            BrowserError::Engine { .. } => "engine".into(),
        }
    }

    /// Who decided: `verifier`, `server`, `network` or `prover` (a run's
    /// [`RunError::decided_by`]; the page's own errors are the prover's).
    pub fn decided_by(&self) -> &'static str {
        match self {
            BrowserError::Run(e) => e.decided_by(),
            _ => "prover",
        }
    }

    /// The detail without the kind.
    pub fn detail(&self) -> String {
        match self {
            BrowserError::Run(RunError::Refused(r) | RunError::Rejected(r)) => r.detail.clone(),
            e => e.to_string(),
        }
    }
}
