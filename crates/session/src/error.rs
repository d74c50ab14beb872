//! The outward error: why a session failed, one variant per cause, the
//! same in every runtime. [`Error::outward`] gives the shape programs read
//! (`{kind, decided_by, detail}`); [`Error::request_reached_server`] tells a
//! user whether the request went out.

use serde::{Deserialize, Serialize};
use webproof_proxy::protocol::{RejectKind, Rejection};
use webproof_proxy::session::SessionError;

/// Why a session failed, as every runtime reports it: one variant per
/// cause, decided by this crate's code or the runtime's I/O.
#[derive(Debug, thiserror::Error)]
pub enum Error {
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
    AfterResponse(Box<Error>),
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
    /// escapes the audit (the prover's runtime records it).
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
    /// verifiers (kept by its runtime), and the user did not override it.
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

impl Error {
    /// A short, stable label for metrics and logs (`failures by reason`).
    pub fn kind(&self) -> &'static str {
        match self {
            Error::AfterResponse(e) => e.kind(),
            Error::Io { .. } => "io",
            Error::Timeout(_) | Error::VerifierSilent { .. } => "timeout",
            Error::Disconnected(_) => "disconnected",
            Error::Tls(_) => "tls",
            Error::Refused(_) => "refused",
            Error::Rejected(_) => "rejected",
            Error::Proxy(_) => "rejected",
            Error::Engine { .. } => "engine",
            Error::Unauthorized(_) => "unauthorized",
            Error::Forbidden(_) => "forbidden",
            Error::Setup(_) => "setup",
            Error::Channel(_) => "channel",
            Error::Mpc(_) => "mpc",
            Error::VerifierCheated { .. } => "verifier_cheated",
            Error::FlaggedVerifier { .. } => "flagged_verifier",
        }
    }

    /// Who ended the session, for a user deciding what to do next:
    /// `"verifier"` (it refused or rejected), `"server"` (its TLS or
    /// certificate), `"network"` (a link failed or timed out) or
    /// `"prover"` (this side's own check, proof or setup).
    pub fn decided_by(&self) -> &'static str {
        use webproof_proxy::ProxyError as P;
        match self {
            Error::AfterResponse(e) => e.decided_by(),
            Error::Refused(_)
            | Error::Rejected(_)
            | Error::Unauthorized(_)
            | Error::Forbidden(_)
            | Error::VerifierCheated { .. } => "verifier",
            Error::Tls(_)
            | Error::Proxy(P::Certificate(_) | P::Signature(_) | P::HandshakeAlert { .. }) => {
                "server"
            }
            Error::Io { .. }
            | Error::Timeout(_)
            | Error::VerifierSilent { .. }
            | Error::Disconnected(_)
            | Error::Channel(_) => "network",
            Error::Proxy(_)
            | Error::Engine { .. }
            | Error::Setup(_)
            | Error::Mpc(_)
            | Error::FlaggedVerifier { .. } => "prover",
        }
    }

    /// Whether the request reached the server, where the error tells:
    /// `Some(false)` for failures before the request went out (a refusal,
    /// the server's certificate or handshake), `None` when it may have.
    pub fn request_reached_server(&self) -> Option<bool> {
        use webproof_proxy::ProxyError as P;
        match self {
            Error::AfterResponse(_) => Some(true),
            Error::Refused(_)
            | Error::Unauthorized(_)
            | Error::Forbidden(_)
            | Error::Setup(_)
            | Error::FlaggedVerifier { .. }
            | Error::VerifierSilent { .. }
            | Error::Proxy(P::Certificate(_) | P::Signature(_) | P::HandshakeAlert { .. }) => {
                Some(false)
            }
            Error::Rejected(r)
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

    /// An I/O error's constructor, naming what was being done.
    pub fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> Error {
        let context = context.into();
        move |source| Error::Io { context, source }
    }
}

impl From<webproof_tls::TlsError> for Error {
    fn from(e: webproof_tls::TlsError) -> Self {
        Error::Proxy(e.into())
    }
}

/// The disclosure layer's errors (reveal items, openings, the verdict,
/// attestations) are this party's own checks, as proxy mode's.
impl From<webproof_disclosure::DisclosureError> for Error {
    fn from(e: webproof_disclosure::DisclosureError) -> Self {
        Error::Proxy(e.into())
    }
}

impl From<SessionError> for Error {
    fn from(e: SessionError) -> Self {
        match e {
            SessionError::Refused(r) => Error::Refused(r),
            SessionError::Rejected(r) => Error::Rejected(r),
            SessionError::Proxy(e) => Error::Proxy(e),
        }
    }
}

/// A proof-engine error in `phase`: a lost link (closed, reset, broken
/// pipe) is the peer (`who`) disconnecting; anything else goes to `other`.
pub fn proof_step_error(
    who: &str,
    phase: &str,
    e: webproof_core::Error,
    other: impl FnOnce(webproof_core::Error) -> Error,
) -> Error {
    use std::io::ErrorKind;
    use webproof_core::{ChannelError, Error as Engine};
    match &e {
        Engine::Channel(ChannelError::Closed) => {
            Error::Disconnected(format!("{who} closed the connection during {phase}"))
        }
        Engine::Channel(ChannelError::Io(io))
            if matches!(
                io.kind(),
                ErrorKind::ConnectionReset
                    | ErrorKind::BrokenPipe
                    | ErrorKind::ConnectionAborted
                    | ErrorKind::UnexpectedEof
            ) =>
        {
            Error::Disconnected(format!("{who} disconnected during {phase}: {io}"))
        }
        _ => other(e),
    }
}

/// Result with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// An error as programs read it (`webproof prove --json`, the page's
/// `ProveError`): the reason code to branch on, who decided (`verifier`,
/// `server`, `network`, `prover`) and the human detail.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outward {
    /// [`Error::reason`].
    pub kind: String,
    /// [`Error::decided_by`].
    pub decided_by: String,
    /// The whole message.
    pub detail: String,
    /// [`Error::request_reached_server`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_reached_server: Option<bool>,
}

impl Error {
    /// The reason code a program branches on, the same in every runtime:
    /// the verifier's reason code when it refused or rejected
    /// (`unauthorized`, `limit`, `certificate`, ...), this side's check's
    /// reason code when the verifier's messages or the server's handshake
    /// failed it, else `timeout`, `disconnected`, or [`Error::kind`]
    /// (`io`, `tls`, `setup`, `engine`, `mpc`, `verifier_cheated`, ...). Metrics keep
    /// the coarser [`Error::kind`].
    pub fn reason(&self) -> String {
        match self {
            Error::Refused(r) | Error::Rejected(r) => r.kind.to_string(),
            Error::Proxy(p) => RejectKind::from(p).to_string(),
            Error::AfterResponse(e) => e.reason(),
            Error::Unauthorized(_) => RejectKind::Unauthorized.to_string(),
            Error::Timeout(_) | Error::VerifierSilent { .. } => RejectKind::Timeout.to_string(),
            Error::Disconnected(_) | Error::Channel(_) => "disconnected".into(),
            other => other.kind().to_string(),
        }
    }

    /// This error in the shape programs read.
    pub fn outward(&self) -> Outward {
        Outward {
            kind: self.reason(),
            decided_by: self.decided_by().to_string(),
            detail: self.to_string(),
            request_reached_server: self.request_reached_server(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The outward shape names the reason a program branches on and who
    /// decided, the same whichever runtime ran the session.
    #[test]
    fn outward_errors_name_the_reason_and_who_decided() {
        let refused = Error::Refused(Rejection::new(RejectKind::Unauthorized, "no key"));
        let o = refused.outward();
        assert_eq!(
            (
                o.kind.as_str(),
                o.decided_by.as_str(),
                o.request_reached_server
            ),
            ("unauthorized", "verifier", Some(false))
        );
        assert_eq!(refused.kind(), "refused", "metrics keep the coarse label");
        let cert = Error::Proxy(webproof_proxy::ProxyError::Certificate("expired".into()));
        assert_eq!(
            (cert.reason(), cert.decided_by()),
            ("certificate".into(), "server")
        );
        let late = Error::AfterResponse(Box::new(Error::Rejected(Rejection::new(
            RejectKind::Limit,
            "too big",
        ))));
        assert_eq!(late.reason(), "limit");
        assert_eq!(late.request_reached_server(), Some(true));
        let silent = Error::VerifierSilent {
            verifier: "v:1".into(),
            secs: 2,
        };
        assert_eq!(
            (silent.reason(), silent.decided_by()),
            ("timeout".into(), "network")
        );
        let json = serde_json::to_value(silent.outward()).unwrap();
        assert_eq!(json["kind"], "timeout");
        assert!(json["detail"]
            .as_str()
            .unwrap()
            .contains("did not answer in 2 s"));
    }
}
