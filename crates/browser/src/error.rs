//! Why a browser proof failed, typed for the page: a run's outward error
//! ([`webproof_session::Error`], decided by the same code as natively),
//! or what the page itself decides (its options, a cancellation, the
//! engine's warm-up).

use webproof_proxy::protocol::RejectKind;
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
    /// The reason code the page sees: a [`RejectKind`]'s wire name when the
    /// verifier refused or rejected or this side's check failed, else
    /// `setup`, `tls`, `disconnected`, `timeout`, `cancelled`, `engine`,
    /// or a run's own kind (`mpc`, `verifier_cheated`).
    pub fn kind(&self) -> String {
        match self {
            BrowserError::Run(e) => run_kind(e),
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

/// The page's kind for a run's error: the verifier's reason code when it
/// refused or rejected, this side's check's reason code, and the kinds the
/// page has always used for the link, the server's TLS, timeouts, the
/// engine and setup; else the run's own kind (`mpc`, `verifier_cheated`).
fn run_kind(e: &RunError) -> String {
    use RunError as E;
    match e {
        E::Refused(r) | E::Rejected(r) => r.kind.to_string(),
        E::Proxy(p) => RejectKind::from(p).to_string(),
        E::AfterResponse(e) => run_kind(e),
        E::Unauthorized(_) => RejectKind::Unauthorized.to_string(),
        E::Timeout(_) | E::VerifierSilent { .. } => RejectKind::Timeout.to_string(),
        E::Disconnected(_) | E::Channel(_) | E::Io { .. } => "disconnected".into(),
        E::Tls(_) => "tls".into(),
        E::Setup(_) => "setup".into(),
        E::Engine { .. } => "engine".into(),
        other => other.kind().to_string(),
    }
}
