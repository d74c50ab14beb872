//! Facts about a session that the verifier established itself, beside the
//! transcript commitment: where it connected, how the server's stream
//! ended, and the order of the two directions.

use crate::transcript::Direction;

/// Whether the HTTP response was seen to be complete.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Completeness {
    /// The framing the verifier needed was hidden from it.
    Unknown,
    /// The response ends where its framing says (Content-Length, the last
    /// chunk, or close_notify for a close-delimited body).
    Complete,
    /// The response's framing says more was to come.
    Truncated,
}

/// A run of application data in the order the verifier recorded it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct OrderSpan {
    /// Which direction.
    pub direction: Direction,
    /// First byte of the run in that direction's application data.
    pub start: u32,
    /// One past its last byte.
    pub end: u32,
}

/// Facts about the session the verifier established itself.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SessionFacts {
    /// The TCP port the verifier connected to.
    pub server_port: u16,
    /// Whether the server's records end with close_notify.
    pub server_close_notify: bool,
    /// Server records the verifier relayed after the prover's cut (dropped
    /// from the transcript).
    pub server_records_after_cut: u32,
    /// Whether the HTTP response is complete.
    pub response_complete: Completeness,
    /// Application data of both directions in the order the verifier recorded it.
    pub order: Vec<OrderSpan>,
}
