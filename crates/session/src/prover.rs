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

/// Report `stage` to `progress`, if a run has one.
pub(crate) fn report(progress: &Option<Progress>, stage: Stage) {
    if let Some(p) = progress {
        p.report(stage);
    }
}

impl ProveStats {
    /// A run's figures from its clock, in milliseconds: `t` is its start,
    /// the server reached, the server's part over and the verdict; the
    /// link's byte counts (sent, received) when the server was reached and
    /// at the end.
    pub fn of_run(t: [f64; 4], at_server: (u64, u64), at_end: (u64, u64)) -> Self {
        let [t0, t1, t2, t3] = t;
        ProveStats {
            time_preprocess_ms: t1 - t0,
            time_online_ms: t3 - t1,
            time_total_ms: t3 - t0,
            uploaded_preprocess: at_server.0,
            downloaded_preprocess: at_server.1,
            uploaded_online: at_end.0 - at_server.0,
            downloaded_online: at_end.1 - at_server.1,
            time_tls_ms: t2 - t1,
            time_proof_ms: t3 - t2,
        }
    }
}
