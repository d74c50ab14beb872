//! What a prover's run reports, in every runtime and mode: its phases as
//! they begin ([`Stage`], [`Progress`]), its figures ([`ProveStats`]) and
//! its result ([`ProveOutcome`]).

use serde::{Deserialize, Serialize};
use std::sync::Arc;
use webproof_disclosure::attest::AttestationBundle;
use webproof_disclosure::VerifierOutput;

/// The prover's phases, reported as each begins, for progress lines
/// (`webproof_net::ProveOptions::progress`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Connected to the verifier; the hello is out.
    Connected,
    /// The verifier admitted the session (it preprocesses from here).
    Admitted,
    /// The TLS session with the server opens (through the verifier in
    /// proxy mode, directly in MPC mode).
    ServerReached,
    /// The response arrived: this many bytes.
    Response(usize),
    /// The proof runs.
    Proving,
    /// The verifier's verdict arrived.
    Verdict,
}

impl std::fmt::Display for Stage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stage::Connected => f.write_str("connected to the verifier"),
            Stage::Admitted => f.write_str("admitted by the verifier; preprocessing"),
            Stage::ServerReached => f.write_str("TLS session with the server"),
            Stage::Response(n) => write!(f, "response received ({n} bytes)"),
            Stage::Proving => f.write_str("proving"),
            Stage::Verdict => f.write_str("verdict received"),
        }
    }
}

/// Called with each [`Stage`] as it begins (from the session's tasks: keep
/// it short).
#[derive(Clone)]
pub struct Progress(pub Arc<dyn Fn(Stage) + Send + Sync>);

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Progress(..)")
    }
}

/// Timing and traffic on the prover/verifier link, as the prover counts them.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ProveStats {
    /// From the start until the verifier's `Ready` (it has reached the
    /// server): the hello, and the start of the OT/VOLE preprocessing,
    /// which goes on beside the TLS session.
    pub time_preprocess_ms: f64,
    /// From the server connection to the verdict.
    pub time_online_ms: f64,
    /// Everything.
    pub time_total_ms: f64,
    /// Bytes sent to the verifier during setup.
    pub uploaded_preprocess: u64,
    /// Bytes received from the verifier during setup.
    pub downloaded_preprocess: u64,
    /// Bytes sent to the verifier after setup.
    pub uploaded_online: u64,
    /// Bytes received from the verifier after setup.
    pub downloaded_online: u64,
    /// The TLS session with the server (relay phase): from the connection
    /// to the end of the server's part (in MPC mode the prover's `Close`,
    /// after which it lets the server connection go; the verifier's
    /// `CloseAck` counts in the proof phase).
    pub time_tls_ms: f64,
    /// The proof phase.
    pub time_proof_ms: f64,
}

/// A verified session.
#[derive(Clone, Debug)]
pub struct ProveOutcome {
    /// What the verifier attested.
    pub output: VerifierOutput,
    /// Measurements.
    pub stats: ProveStats,
    /// The full response as the prover received it.
    pub response: Vec<u8>,
    /// The attestation and the secrets to present it, if one was asked for.
    pub attestation: Option<AttestationBundle>,
    /// The verifier's id for the session (32 lowercase hex digits when
    /// shown), for the application to fetch the stored result by; none
    /// from a verifier that names no sessions.
    pub session_id: Option<webproof_proxy::protocol::SessionId>,
}

impl Progress {
    /// Report `stage`.
    pub fn report(&self, stage: Stage) {
        (self.0)(stage)
    }
}
