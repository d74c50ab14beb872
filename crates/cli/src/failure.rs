//! How a failed command ends: its error said once in words (or, with
//! `--json`, as one JSON object on stdout) and an exit status per class,
//! so scripts can tell a usage mistake from a refusal, a lost link, a
//! server fault or a failed proof without parsing text.
//!
//! The class comes from the error itself ([`webproof_net::NetError::decided_by`]),
//! not from its wording.

use webproof_net::NetError;

/// Exit status: the command line was wrong or asked for something refused
/// before any network work.
pub const EXIT_USAGE: u8 = 2;
/// Exit status: the verifier refused or rejected the session.
pub const EXIT_VERIFIER: u8 = 3;
/// Exit status: a network link failed or timed out.
pub const EXIT_NETWORK: u8 = 4;
/// Exit status: the server's TLS or certificate failed.
pub const EXIT_SERVER: u8 = 5;
/// Exit status: a proof or a verification failed (this side's own check).
pub const EXIT_PROOF: u8 = 6;

/// A request of the user's that the command refuses before any network
/// work (a flag combination, revealing secrets unasked). Its text says
/// what to do instead.
#[derive(Debug)]
pub struct Usage(pub String);

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}

/// Mark `e` as a usage failure, keeping its words.
pub fn usage(e: anyhow::Error) -> anyhow::Error {
    anyhow::Error::new(Usage(message(&e)))
}

/// A failed command, classified.
pub struct Failure {
    /// The reason code (`usage`, or the session's `Error::reason`:
    /// `unauthorized`, `limit`, `timeout`, `tls`, ...; the page's kinds).
    pub kind: String,
    /// Who decided: `usage`, `prover`, `verifier`, `server` or `network`.
    pub decided_by: &'static str,
    /// The error in words, each cause once.
    pub detail: String,
    /// Whether the request reached the server, where known.
    pub request_reached_server: Option<bool>,
}

impl Failure {
    /// Classify `e` by the first error in its chain that says who decided.
    pub fn of(e: &anyhow::Error) -> Self {
        let detail = message(e);
        for cause in e.chain() {
            if cause.downcast_ref::<Usage>().is_some() {
                return Failure {
                    kind: "usage".into(),
                    decided_by: "usage",
                    detail,
                    request_reached_server: Some(false),
                };
            }
            if let Some(n) = cause.downcast_ref::<NetError>() {
                // Refusing a flagged verifier or a bad setup is the user's
                // to fix, before anything was sent.
                let decided_by = match n {
                    NetError::FlaggedVerifier { .. } | NetError::Setup(_) => "usage",
                    _ => n.decided_by(),
                };
                return Failure {
                    kind: n.reason(),
                    decided_by,
                    detail,
                    request_reached_server: n.request_reached_server(),
                };
            }
            if cause.downcast_ref::<webproof_proxy::ProxyError>().is_some()
                || cause
                    .downcast_ref::<webproof_disclosure::DisclosureError>()
                    .is_some()
                || cause
                    .downcast_ref::<webproof_attestation::Error>()
                    .is_some()
            {
                return Failure {
                    kind: "verification".into(),
                    decided_by: "prover",
                    detail,
                    request_reached_server: None,
                };
            }
        }
        // The command's own checks (`bail!`) and files it could not read:
        // the command line is what to fix.
        Failure {
            kind: "usage".into(),
            decided_by: "usage",
            detail,
            request_reached_server: Some(false),
        }
    }

    /// The exit status of this class of failure.
    pub fn exit_code(&self) -> u8 {
        match self.decided_by {
            "usage" => EXIT_USAGE,
            "verifier" => EXIT_VERIFIER,
            "network" => EXIT_NETWORK,
            "server" => EXIT_SERVER,
            _ => EXIT_PROOF,
        }
    }

    /// `{"error": {...}}`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "error": {
                "kind": self.kind,
                "decided_by": self.decided_by,
                "detail": self.detail,
                "request_reached_server": self.request_reached_server,
            }
        })
    }
}

/// The error and its causes in one line, each said once: a cause whose
/// text its parent already quotes (`{context}: {source}`) is left out.
pub fn message(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if text.is_empty() || out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn causes_are_said_once() {
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused (os 111)");
        let e = anyhow::Error::new(NetError::Io {
            context: "connecting to the verifier".into(),
            source: io,
        })
        .context("proving");
        assert_eq!(
            message(&e),
            "proving: connecting to the verifier: refused (os 111)"
        );
        let f = Failure::of(&e);
        assert_eq!((f.kind.as_str(), f.decided_by), ("io", "network"));
        assert_eq!(f.exit_code(), EXIT_NETWORK);
        let f = Failure::of(&usage(anyhow::anyhow!("bad flag")));
        assert_eq!((f.exit_code(), f.detail.as_str()), (EXIT_USAGE, "bad flag"));
    }
}
