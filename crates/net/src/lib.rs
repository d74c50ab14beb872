//! Networking of proxy mode: the drivers of the prover's and the verifier's
//! sessions over tokio, and the test fixture.
//!
//! - [`fixture`]: an HTTPS server (rustls) with its own test CA written to
//!   disk, serving `/bytes?size=N`, `/json` and `/html`;
//! - [`provider`]: the prover's instrumented rustls `CryptoProvider`, which
//!   captures the (EC)DHE shared secret so the prover can compute the
//!   session secret the proof is about;
//! - [`prover`]: connects to a verifier, runs the TLS client (rustls)
//!   through it and drives the proof engine;
//! - [`verifier`]: accepts provers, resolves and connects to the server
//!   they name (the address policy of [`policy`] on the address actually
//!   reached), relays and records within limits and timeouts, and drives
//!   the proof engine;
//! - [`mpc`]: MPC mode's sessions (`webproof_mpc_tls`) on the same link
//!   and service: the prover connects to the server itself;
//! - [`mux`]: the relay and the preprocessing on one link;
//! - [`relay`]: `webproof relay`, a WebSocket-to-TCP relay for provers in
//!   a web page;
//! - [`transport`]: TCP, TLS and WebSocket links to a verifier;
//! - [`frame`]: framing and byte counting on tokio streams.
//!
//! Every protocol decision (what to send, whether to admit, where to cut,
//! what to prove, whether to accept) is `webproof_proxy::session`'s; this
//! crate owns the sockets, the tasks, the clocks, the OS randomness and the
//! timeouts, and feeds the sessions what arrived.

pub mod fixture;
pub mod flagged;
pub mod frame;
pub mod mpc;
pub mod mux;
pub mod policy;
pub mod prover;
pub mod relay;
/// The instrumented crypto provider (its own crate, shared with the browser prover).
pub use webproof_tls_provider as provider;
pub mod transport;
pub mod verifier;

pub use fixture::{Fixture, FixtureCerts};
pub use policy::{IpNet, ServerPolicy};
pub use prover::{prove, Mode, Progress, ProveOptions, ProveOutcome, ProveStats, Stage};
pub use verifier::{Verifier, VerifierConfig};
pub use webproof_proxy::protocol::{RejectKind, Rejection};
use webproof_proxy::session::SessionError;

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
    /// A failure after the server's response arrived, while preparing the
    /// proof from it (a `json:` path the response lacks, a handshake
    /// check): the request did reach the server.
    #[error("the request reached the server and its response arrived, but then: {0}")]
    AfterResponse(Box<NetError>),
    /// The verifier accepted the connection and never answered the hello
    /// within the session's timeout: nothing was sent to the server.
    #[error(
        "timed out: the verifier at {verifier} accepted the connection but did not answer in \
         {secs} s; is it a webproof verifier (its TCP or ws:// address), and is it running?"
    )]
    VerifierSilent {
        /// The verifier's address.
        verifier: String,
        /// The session's timeout.
        secs: u64,
    },
    /// The peer closed the connection mid-protocol.
    #[error("peer disconnected: {0}")]
    Disconnected(String),
    /// The TLS session with the server failed.
    #[error("TLS: {0}")]
    Tls(String),
    /// The verifier refused the session (its reason code and detail).
    #[error("refused by the verifier: {0}")]
    Refused(Rejection),
    /// The verifier rejected the relay or the proof.
    #[error("rejected by the verifier: {0}")]
    Rejected(Rejection),
    /// This party's own protocol check failed (transcript, handshake,
    /// proof, verdict).
    #[error(transparent)]
    Proxy(#[from] webproof_proxy::ProxyError),
    /// The proof engine failed (not a lost link, not the peer's verdict).
    #[error("{phase} failed: {source}")]
    Engine {
        /// The proof phase.
        phase: String,
        /// The engine's error.
        source: webproof_core::Error,
    },
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
    /// MPC mode: this party's session or the proof of the response failed
    /// (a check on the server's flight, a 2PC step, the peer's abort).
    #[error("MPC session: {0}")]
    Mpc(#[from] webproof_mpc_tls::Error),
    /// MPC mode: the verifier stopped between the prover's `Close` and the
    /// audit of its garbling (it aborted, hung up or went silent), or
    /// failed that audit. Not a network error: a verifier that stops there
    /// escapes the audit ([`flagged`]).
    #[error(
        "the verifier {verifier} {what}. In MPC mode a verifier that does this escapes the \
         audit of its garbling: it may have tried to learn a bit of the session's keys. \
         Your request reached the server unaltered or not at all (dual execution). Do not \
         retry with the same credentials through this verifier; {recorded}"
    )]
    VerifierCheated {
        /// The verifier's address.
        verifier: String,
        /// What it did.
        what: String,
        /// Whether and where it was recorded.
        recorded: String,
    },
    /// MPC mode: the verifier is in the prover's record of cheating
    /// verifiers ([`flagged`]), and the user did not override it.
    #[error(
        "the verifier {verifier} is recorded as cheating in {path} ({reason}), so MPC mode \
         refuses it. Use another verifier; if you know why it stopped, remove its line from \
         that file or pass --allow-flagged-verifier"
    )]
    FlaggedVerifier {
        /// The verifier's address.
        verifier: String,
        /// The recorded reason.
        reason: String,
        /// The record file.
        path: String,
    },
}

impl NetError {
    /// A short, stable label for metrics and logs (`failures by reason`).
    pub fn kind(&self) -> &'static str {
        match self {
            NetError::AfterResponse(e) => e.kind(),
            NetError::Io { .. } => "io",
            NetError::Timeout(_) | NetError::VerifierSilent { .. } => "timeout",
            NetError::Disconnected(_) => "disconnected",
            NetError::Tls(_) => "tls",
            NetError::Refused(_) => "refused",
            NetError::Rejected(_) => "rejected",
            NetError::Proxy(_) => "rejected",
            NetError::Engine { .. } => "engine",
            NetError::Unauthorized(_) => "unauthorized",
            NetError::Forbidden(_) => "forbidden",
            NetError::Setup(_) => "setup",
            NetError::Channel(_) => "channel",
            NetError::Mpc(_) => "mpc",
            NetError::VerifierCheated { .. } => "verifier_cheated",
            NetError::FlaggedVerifier { .. } => "flagged_verifier",
        }
    }

    /// Who ended the session, for a user deciding what to do next:
    /// `"verifier"` (it refused or rejected), `"server"` (its TLS or
    /// certificate), `"network"` (a link failed or timed out) or
    /// `"prover"` (this side's own check, proof or setup).
    pub fn decided_by(&self) -> &'static str {
        use webproof_proxy::ProxyError as P;
        match self {
            NetError::AfterResponse(e) => e.decided_by(),
            NetError::Refused(_)
            | NetError::Rejected(_)
            | NetError::Unauthorized(_)
            | NetError::Forbidden(_)
            | NetError::VerifierCheated { .. } => "verifier",
            NetError::Tls(_)
            | NetError::Proxy(P::Certificate(_) | P::Signature(_) | P::HandshakeAlert { .. }) => {
                "server"
            }
            NetError::Io { .. }
            | NetError::Timeout(_)
            | NetError::VerifierSilent { .. }
            | NetError::Disconnected(_)
            | NetError::Channel(_) => "network",
            NetError::Proxy(_)
            | NetError::Engine { .. }
            | NetError::Setup(_)
            | NetError::Mpc(_)
            | NetError::FlaggedVerifier { .. } => "prover",
        }
    }

    /// Whether the request reached the server, where the error tells:
    /// `Some(false)` for failures before the request went out (a refusal,
    /// the server's certificate or handshake), `None` when it may have.
    pub fn request_reached_server(&self) -> Option<bool> {
        use webproof_proxy::ProxyError as P;
        match self {
            NetError::AfterResponse(_) => Some(true),
            NetError::Refused(_)
            | NetError::Unauthorized(_)
            | NetError::Forbidden(_)
            | NetError::Setup(_)
            | NetError::FlaggedVerifier { .. }
            | NetError::VerifierSilent { .. }
            | NetError::Proxy(P::Certificate(_) | P::Signature(_) | P::HandshakeAlert { .. }) => {
                Some(false)
            }
            NetError::Rejected(r)
                if matches!(
                    r.kind,
                    RejectKind::Certificate
                        | RejectKind::Signature
                        | RejectKind::HandshakeAlert
                        | RejectKind::Forbidden
                        | RejectKind::Unreachable
                ) =>
            {
                Some(false)
            }
            _ => None,
        }
    }

    pub(crate) fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> NetError {
        let context = context.into();
        move |source| NetError::Io { context, source }
    }
}

impl From<webproof_tls::TlsError> for NetError {
    fn from(e: webproof_tls::TlsError) -> Self {
        NetError::Proxy(e.into())
    }
}

/// The disclosure layer's errors (reveal items, openings, the verdict,
/// attestations) are this party's own checks, as proxy mode's.
impl From<webproof_disclosure::DisclosureError> for NetError {
    fn from(e: webproof_disclosure::DisclosureError) -> Self {
        NetError::Proxy(e.into())
    }
}

impl From<SessionError> for NetError {
    fn from(e: SessionError) -> Self {
        match e {
            SessionError::Refused(r) => NetError::Refused(r),
            SessionError::Rejected(r) => NetError::Rejected(r),
            SessionError::Proxy(e) => NetError::Proxy(e),
        }
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

/// A spawned task that is aborted when its handle is dropped (a session
/// that fails elsewhere does not leave it running).
pub(crate) struct AbortOnDrop<T>(pub(crate) tokio::task::JoinHandle<T>);

impl<T> AbortOnDrop<Result<T>> {
    /// The task's result; a task that panicked or was aborted is an error
    /// naming `what`.
    pub(crate) async fn join(mut self, what: &str) -> Result<T> {
        match (&mut self.0).await {
            Ok(r) => r,
            Err(e) => Err(NetError::Disconnected(format!("{what}: {e}"))),
        }
    }
}

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}
