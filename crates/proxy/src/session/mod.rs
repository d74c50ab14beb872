//! The proxy-mode session as protocol code: who sends which message when,
//! and what each party decides on what it receives. No I/O: drivers
//! (`webproof-net` over tokio, a browser, the tests in one thread) move the
//! messages, keep the time and run the proof engine; this module holds every
//! protocol decision between them.
//!
//! The shape is rustls' and quinn-proto's: the caller feeds what arrived
//! (decoded [`ProverMsg`](crate::protocol::ProverMsg)s, [`VerifierMsg`]s and [`RelayFrame`]s, the
//! relayed bytes through a [`Recorder`](crate::Recorder)), time as a value
//! (Unix seconds) and randomness as a `RngCore + CryptoRng`, and gets back
//! what to send. One method per flight, per role:
//!
//! | flight | prover ([`prover::ProverSession`]) | verifier ([`verifier::VerifierSession`]) |
//! |---|---|---|
//! | setup | `hello` (then the engine's opening) | `on_hello` → `Accepted` or `Refused` |
//! | | `on_hello_answer`, `on_ready` | `ready` (after the server connection; first on the relay stream, see below) |
//! | relay | records through [`prover::ProverSession::recorder`]; `close` → `Close` | records within limits; `on_close` → `CloseAck` (the cut) |
//! | proof | `prepare_proof` → `Proof` + a [`prover::ProveStep`] | `on_proof` → run the proof, or refuse the plan |
//! | | `on_close_ack` (digest check), `on_verdict` | `conclude` → `Verdict` |
//!
//! On the link, the multiplexed section ([`crate::mux`]) starts right after
//! `Accepted`: its preprocessing stream carries the proof engine's whole
//! preprocessing, and its relay stream carries `Ready` (or the refusal)
//! as soon as the verifier has reached the server, then the relay frames.
//! So the TLS session starts while the preprocessing still runs.
//!
//! The zero-knowledge proof itself stays an executor-agnostic `async` run of
//! `webproof_tlsproof` over the driver's channel: the session hands the
//! driver a typed step (statement, witness or not, context) and takes back
//! the engine's result. Timeouts are the driver's: a party that gives up
//! sends the [`Rejection`] of kind [`RejectKind::Timeout`].
//!
//! Flights are per role, not per mode: another mode (MPC) adds its own
//! session types beside these, reusing the messages and rejections of
//! [`crate::protocol`].

use crate::error::ProxyError;
use crate::protocol::{RejectKind, Rejection, RelayFrame, VerifierMsg};

pub mod prover;
pub mod verifier;

/// Why a session ended without a result, as a party sees it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SessionError {
    /// The verifier refused the session (before or during setup).
    #[error("refused by the verifier: {0}")]
    Refused(Rejection),
    /// The verifier rejected the relay or the proof.
    #[error("rejected by the verifier: {0}")]
    Rejected(Rejection),
    /// This party's own check failed: the peer's message, or our data.
    #[error(transparent)]
    Proxy(#[from] ProxyError),
}

impl From<webproof_tls::TlsError> for SessionError {
    fn from(e: webproof_tls::TlsError) -> Self {
        SessionError::Proxy(e.into())
    }
}

impl From<webproof_disclosure::DisclosureError> for SessionError {
    fn from(e: webproof_disclosure::DisclosureError) -> Self {
        SessionError::Proxy(e.into())
    }
}

impl SessionError {
    /// The reason code, whoever decided.
    pub fn kind(&self) -> RejectKind {
        match self {
            SessionError::Refused(r) | SessionError::Rejected(r) => r.kind,
            SessionError::Proxy(e) => e.into(),
        }
    }
}

/// Result with [`SessionError`].
pub type Result<T, E = SessionError> = core::result::Result<T, E>;

/// A message out of turn.
fn unexpected(what: &str, got: &impl core::fmt::Debug) -> ProxyError {
    let mut got = format!("{got:?}");
    // A verdict or plan can be large; the kind of message is what matters.
    got.truncate(80);
    ProxyError::Protocol(format!("expected {what}, got {got}"))
}

/// A stage check: the session's methods must be called in flight order.
fn out_of_order(what: &str) -> ProxyError {
    ProxyError::Protocol(format!("{what} out of order"))
}

/// The message a verifier sends to refuse a session.
pub fn refusal(kind: RejectKind, detail: impl Into<String>) -> VerifierMsg {
    VerifierMsg::Refused(Rejection::new(kind, detail))
}

/// The `CloseAck` of a relay that failed (limits, a broken record, a timeout).
pub fn relay_failed(why: Rejection) -> RelayFrame {
    RelayFrame::CloseAck(Err(why))
}
