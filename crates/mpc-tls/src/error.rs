//! The one error type of MPC-mode sessions.
//!
//! Every variant ends the session: nothing here is retried, since the 2PC
//! state (labels, OLE streams, COTs) of a refused step is spent. No bytes
//! from the server or the peer make a session panic; they give one of
//! these.

use webproof_disclosure::DisclosureError;
use webproof_tls::TlsError;

/// Why an MPC-mode session stopped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A 2PC step refused a message or failed a check (wrong tables or
    /// labels, a tag computed in 2PC that does not match).
    #[error("2PC: {0}")]
    Mpc(#[from] webproof_mpc::Error),
    /// The server's flight failed a check shared with proxy mode: record
    /// framing, a handshake message that does not parse, the certificate
    /// chain, the server name, validity, the handshake signature, a
    /// Finished or a record that does not decrypt.
    #[error(transparent)]
    Tls(#[from] TlsError),
    /// The disclosure layer, shared with proxy mode, refused an opening,
    /// a commitment layout or an attestation.
    #[error(transparent)]
    Disclosure(#[from] DisclosureError),
    /// A message from the peer does not parse (truncated, trailing bytes,
    /// a field of the wrong length, an unknown tag).
    #[error("malformed message from the peer: {0}")]
    Malformed(&'static str),
    /// A message from the peer is larger than the limit for its kind.
    #[error("message of {len} bytes exceeds the limit of {max}")]
    Oversized {
        /// Bytes received.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// The peer sent a message out of turn.
    #[error("expected {expected}, got {got}")]
    Unexpected {
        /// What this session waited for.
        expected: &'static str,
        /// What arrived.
        got: &'static str,
    },
    /// A method was called out of order by the caller.
    #[error("{0} called out of order")]
    OutOfOrder(&'static str),
    /// The server negotiated something this mode does not do (TLS 1.3, a
    /// suite or group that was not offered, no ECDHE).
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// The server sent an alert during the session.
    #[error("the server sent alert {description} (level {level})")]
    ServerAlert {
        /// Alert level (1 warning, 2 fatal).
        level: u8,
        /// Alert description.
        description: u8,
    },
    /// The server sent an encrypted alert (or other encrypted record)
    /// before its Finished was checked.
    #[error("the server sent an encrypted record of content type {0} before its Finished")]
    ServerEncrypted(u8),
    /// The server closed the connection before the handshake completed.
    #[error("the server closed the connection during the handshake")]
    ServerClosed,
    /// The server's Finished does not carry the `verify_data` computed in
    /// 2PC over the verifier's transcript.
    #[error("the server Finished does not match the handshake")]
    ServerFinished,
    /// The bytes the prover forwarded as sent to the server are not the
    /// records the 2PC produced or the verifier expects.
    #[error("client record mismatch: {0}")]
    ClientRecord(&'static str),
    /// The ClientHello breaks the session's terms (random, version, suites,
    /// groups, server name).
    #[error("ClientHello refused: {0}")]
    ClientHello(&'static str),
    /// A server record after the handshake does not decrypt under the
    /// server write key (deferred decryption).
    #[error("server record {index} does not decrypt")]
    Decrypt {
        /// Index among the server's application-phase records.
        index: usize,
    },
    /// The caller's supply of correlated OTs ran out.
    #[error("out of correlated OTs: {needed} more needed, {left} left")]
    CotsExhausted {
        /// COTs the step needs.
        needed: usize,
        /// COTs left in the pool.
        left: usize,
    },
    /// The peer ended the session.
    #[error("the peer aborted: {0}")]
    Aborted(String),
    /// The verifier's recording and the prover's count differ at the close.
    #[error("recording mismatch at the close: {0}")]
    Recording(String),
    /// The proof of the response failed: for the verifier, the prover's
    /// claim is refused; for the prover, the proof could not run.
    #[error("proof of the response: {0}")]
    Proof(String),
    /// The prover caught the verifier cheating after the reveal of `Δ`.
    #[error("the verifier cheated: {0}")]
    VerifierCheated(String),
    /// The caller used the API wrongly.
    #[error("usage: {0}")]
    Usage(String),
}

/// Result with [`Error`].
pub type Result<T, E = Error> = core::result::Result<T, E>;
