//! Why a browser proof failed, typed for the page: the session's own
//! reasons keep their [`RejectKind`] (whoever decided: the verifier's
//! refusal or rejection, or the prover's own check), and the driver adds
//! the failures it sees itself (setup, TLS, a lost link, the engine).

use webproof_proxy::protocol::RejectKind;
use webproof_proxy::session::SessionError;

/// A failed proof.
#[derive(Debug, thiserror::Error)]
pub enum BrowserError {
    /// The session ended without a result: refused or rejected by the
    /// verifier, or our own check of its messages or our data failed.
    #[error(transparent)]
    Session(#[from] SessionError),
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
    /// The TLS session with the server failed.
    #[error("TLS: {0}")]
    Tls(String),
    /// The verifier closed the link, or it broke.
    #[error("disconnected: {0}")]
    Disconnected(String),
    /// The caller's deadline passed (the link is closed, which ends the
    /// session on the service).
    #[error("timeout: no verdict after {0} ms")]
    Timeout(u32),
    /// The page cancelled the proof (its `AbortSignal`); the link is
    /// closed, which ends the session on the service.
    #[error("cancelled by the page")]
    Cancelled,
    /// A run of `webproof_session` failed (MPC mode): its outward error,
    /// decided by the same code as natively.
    #[error(transparent)]
    Run(#[from] webproof_session::Error),
    /// The proof engine failed (not because of the link).
    #[error("proof engine during {phase}: {detail}")]
    Engine {
        /// The step that failed.
        phase: String,
        /// The engine's error.
        detail: String,
    },
}

impl BrowserError {
    /// A channel error in `phase`: the link ending or breaking.
    pub(crate) fn link(phase: &str, e: webproof_core::ChannelError) -> Self {
        BrowserError::Disconnected(format!("during {phase}: {e}"))
    }

    /// An engine error in `phase`.
    pub(crate) fn engine(phase: &str, e: webproof_core::Error) -> Self {
        BrowserError::Engine {
            phase: phase.to_string(),
            detail: e.to_string(),
        }
    }

    /// The reason code the page sees: a [`RejectKind`]'s wire name for
    /// session errors and `timeout`, else `setup`, `tls`, `disconnected`,
    /// `cancelled` or `engine`.
    pub fn kind(&self) -> String {
        match self {
            BrowserError::Session(e) => e.kind().to_string(),
            BrowserError::Run(e) => run_kind(e),
            BrowserError::Setup(_) | BrowserError::UnknownOption { .. } => "setup".into(),
            BrowserError::Tls(_) => "tls".into(),
            BrowserError::Disconnected(_) => "disconnected".into(),
            BrowserError::Timeout(_) => RejectKind::Timeout.to_string(),
            BrowserError::Cancelled => "cancelled".into(),
            BrowserError::Engine { .. } => "engine".into(),
        }
    }

    /// Who decided: `verifier` for its refusals and rejections, else `prover`.
    pub fn decided_by(&self) -> &'static str {
        match self {
            BrowserError::Session(SessionError::Refused(_) | SessionError::Rejected(_)) => {
                "verifier"
            }
            BrowserError::Run(e) => e.decided_by(),
            _ => "prover",
        }
    }

    /// The detail without the kind.
    pub fn detail(&self) -> String {
        match self {
            BrowserError::Session(SessionError::Refused(r) | SessionError::Rejected(r))
            | BrowserError::Run(
                webproof_session::Error::Refused(r) | webproof_session::Error::Rejected(r),
            ) => r.detail.clone(),
            e => e.to_string(),
        }
    }

    /// The session's reason code, if the session decided.
    pub fn reject_kind(&self) -> Option<RejectKind> {
        match self {
            BrowserError::Session(e) => Some(e.kind()),
            _ => None,
        }
    }
}

/// The page's kind for a run's error: the verifier's reason code when it
/// refused or rejected, and the driver's kinds for what they share with
/// proxy mode's page errors (`setup`, `tls`, `disconnected`, `timeout`,
/// `engine`); else the run's own kind (`mpc`, `verifier_cheated`, ...).
fn run_kind(e: &webproof_session::Error) -> String {
    use webproof_session::Error as E;
    match e {
        E::Refused(r) | E::Rejected(r) => r.kind.to_string(),
        E::AfterResponse(e) => run_kind(e),
        E::Unauthorized(_) => RejectKind::Unauthorized.to_string(),
        E::Timeout(_) | E::VerifierSilent { .. } => RejectKind::Timeout.to_string(),
        E::Disconnected(_) | E::Channel(_) | E::Io { .. } => "disconnected".into(),
        other => other.kind().to_string(),
    }
}
