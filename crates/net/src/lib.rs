//! Networking of proxy mode: the test fixture, the prover and the verifier.
//!
//! - [`fixture`]: an HTTPS server (rustls) with its own test CA written to
//!   disk, serving `/bytes?size=N`, `/json` and `/html`;
//! - [`provider`]: the prover's instrumented rustls `CryptoProvider`, which
//!   captures the (EC)DHE shared secret so the prover can compute the
//!   session secret the proof is about;
//! - [`prover`]: connects to a verifier, runs an HTTPS request through it and
//!   proves what it received;
//! - [`verifier`]: accepts provers, connects to the server they name, relays
//!   and records the TLS records within limits, then verifies the proof;
//! - [`frame`]: framing and byte counting on tokio streams.
//!
//! The protocol logic lives in `webproof-proxy` (no I/O); this crate only
//! moves bytes, keeps time and enforces timeouts.

pub mod attest;
pub mod fixture;
pub mod frame;
pub mod mux;
pub mod policy;
pub mod prover;
pub mod provider;
pub mod transport;
pub mod verifier;

pub use fixture::{Fixture, FixtureCerts};
pub use policy::{IpNet, ServerPolicy};
pub use prover::{prove, ProveOptions, ProveOutcome, ProveStats};
pub use verifier::{Verifier, VerifierConfig};

/// Errors of the networking layer.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    /// Socket or file I/O failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A step took longer than its timeout.
    #[error("timed out: {0}")]
    Timeout(String),
    /// The peer closed the connection mid-protocol.
    #[error("peer disconnected: {0}")]
    Disconnected(String),
    /// The TLS session with the server failed.
    #[error("TLS: {0}")]
    Tls(String),
    /// The verifier refused the session or rejected the proof.
    #[error("verifier: {0}")]
    Verifier(String),
    /// A protocol-level rejection (transcript, handshake, proof, openings).
    #[error(transparent)]
    Proxy(#[from] webproof_proxy::ProxyError),
    /// The prover did not present a valid API key.
    #[error("unauthorized: {0}")]
    Unauthorized(String),
    /// The server address is not allowed by the verifier's policy.
    #[error("forbidden server address: {0}")]
    Forbidden(String),
    /// Certificate generation or configuration failed.
    #[error("setup: {0}")]
    Setup(String),
    /// The prover/verifier channel failed.
    #[error(transparent)]
    Channel(#[from] webproof_core::ChannelError),
}

impl NetError {
    /// A short, stable label for metrics and logs (`failures by reason`).
    pub fn kind(&self) -> &'static str {
        match self {
            NetError::Io { .. } => "io",
            NetError::Timeout(_) => "timeout",
            NetError::Disconnected(_) => "disconnected",
            NetError::Tls(_) => "tls",
            NetError::Verifier(_) => "refused",
            NetError::Proxy(_) => "rejected",
            NetError::Unauthorized(_) => "unauthorized",
            NetError::Forbidden(_) => "forbidden",
            NetError::Setup(_) => "setup",
            NetError::Channel(_) => "channel",
        }
    }

    pub(crate) fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> NetError {
        let context = context.into();
        move |source| NetError::Io { context, source }
    }
}

/// A proof-engine error in `phase`: a lost link (closed, reset, broken
/// pipe) is the peer (`who`) disconnecting; anything else goes to `other`.
pub(crate) fn proof_step_error(
    who: &str,
    phase: &str,
    e: webproof_core::Error,
    other: impl FnOnce(webproof_core::Error) -> NetError,
) -> NetError {
    use std::io::ErrorKind;
    use webproof_core::{ChannelError, Error};
    match &e {
        Error::Channel(ChannelError::Closed) => {
            NetError::Disconnected(format!("{who} closed the connection during {phase}"))
        }
        Error::Channel(ChannelError::Io(io))
            if matches!(
                io.kind(),
                ErrorKind::ConnectionReset
                    | ErrorKind::BrokenPipe
                    | ErrorKind::ConnectionAborted
                    | ErrorKind::UnexpectedEof
            ) =>
        {
            NetError::Disconnected(format!("{who} disconnected during {phase}: {io}"))
        }
        _ => other(e),
    }
}

/// Result with [`NetError`].
pub type Result<T, E = NetError> = std::result::Result<T, E>;

/// Run `f` with a timeout, naming the step in the error.
pub async fn timeout<T>(
    d: std::time::Duration,
    what: &str,
    f: impl std::future::Future<Output = Result<T>>,
) -> Result<T> {
    match tokio::time::timeout(d, f).await {
        Ok(r) => r,
        Err(_) => Err(NetError::Timeout(format!(
            "{what} (after {} ms)",
            d.as_millis()
        ))),
    }
}
