//! The error type shared by protocol cores.

use crate::channel::ChannelError;

/// Why a protocol run ended without a result.
///
/// `CheckFailed` is what an honest party reports when the peer cheated (or
/// the transcript was corrupted): it must never be retried with the same
/// correlations.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The transport failed, closed, or delivered a frame of the wrong size.
    #[error(transparent)]
    Channel(#[from] ChannelError),
    /// The peer sent a message that does not parse or is out of range.
    #[error("malformed message from peer: {0}")]
    Malformed(String),
    /// A consistency or soundness check failed: the peer cheated or the data was altered.
    #[error("check failed: {0}")]
    CheckFailed(String),
    /// The peer, or a local limit, ended the session.
    #[error("session aborted: {0}")]
    Aborted(String),
    /// The peer ended the session with a message of its own where a protocol
    /// message was expected (the payload, for the caller's layer to read).
    #[error("the peer ended the session ({} byte message)", .0.len())]
    PeerAbort(Vec<u8>),
    /// The caller used the API wrongly (e.g. asked for more than was set up).
    #[error("invalid use: {0}")]
    Usage(String),
}

/// Result with [`Error`].
pub type Result<T, E = Error> = core::result::Result<T, E>;
