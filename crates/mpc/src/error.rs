//! The one error type of the crate.

use webproof_circuits::CircuitError;

/// Why garbling, evaluation, decoding or a label transfer stopped.
///
/// Every variant is a clean refusal: nothing in this crate panics on bytes
/// from the peer. A caller that gets [`Error::OutputCheck`] or any chunk
/// error from the peer's data must end the session (the peer cheated or the
/// data was altered); it must not retry with the same labels.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The circuit breaks an invariant of the IR.
    #[error("invalid circuit: {0}")]
    Circuit(#[from] CircuitError),
    /// The circuit has a gate the garbling scheme does not know; byte
    /// inversions must be expanded with `Circuit::lower` first.
    #[error("the circuit has a byte inversion gate: garble circuit.lower() instead")]
    UnsupportedGate,
    /// The circuit keeps more wires live at once than a plan can address
    /// (2^20); split it.
    #[error("the circuit needs {0} label slots at once; at most 2^20 are supported")]
    TooWide(usize),
    /// The global offset's point-and-permute bit (its lsb) must be 1.
    #[error("the global offset Delta must have lsb 1")]
    DeltaLsb,
    /// No input group with this index.
    #[error("no input group {0}")]
    NoSuchInput(usize),
    /// No output group with this index.
    #[error("no output group {0}")]
    NoSuchOutput(usize),
    /// A group was given the wrong number of bits or labels.
    #[error("group {group}: {got} values for {expected} wires")]
    Length {
        /// Group index.
        group: usize,
        /// Wires in the group.
        expected: usize,
        /// Values given.
        got: usize,
    },
    /// Input labels may only be replaced before the first chunk is made.
    #[error("garbling has started: input labels are fixed")]
    AlreadyStarted,
    /// The evaluator needs every input group's labels before it evaluates.
    #[error("the labels of input group {0} are not set")]
    InputMissing(usize),
    /// The garbling is not complete yet (output information is not ready).
    #[error("garbling or evaluation is not finished")]
    NotFinished,
    /// A chunk is shorter than its header.
    #[error("chunk of {0} bytes is shorter than its header")]
    ChunkHeader(usize),
    /// A chunk's sequence number is not the next one.
    #[error("chunk {got} arrived where chunk {expected} was due")]
    ChunkOrder {
        /// The sequence number due.
        expected: u32,
        /// The sequence number received.
        got: u32,
    },
    /// A chunk claims no tables, more than the limit, or more than remain.
    #[error("chunk claims {got} tables; {remaining} remain, at most {max} per chunk")]
    ChunkCount {
        /// Tables claimed.
        got: u64,
        /// Tables the circuit still needs.
        remaining: u64,
        /// The per-chunk limit.
        max: u64,
    },
    /// A chunk's length does not match its table count.
    #[error("chunk of {got} bytes where {expected} were due")]
    ChunkLength {
        /// Length its header implies.
        expected: usize,
        /// Length received.
        got: usize,
    },
    /// The stream ended before every table arrived.
    #[error("the garbled stream ended {missing} tables early")]
    Truncated {
        /// Tables still missing.
        missing: u64,
    },
    /// An output label the evaluator returned (or the digest of returned
    /// labels) is not the wire's valid label for the claimed bit.
    #[error("output group {group}, bit {bit}: the label is not a valid output label")]
    OutputCheck {
        /// Output group.
        group: usize,
        /// Bit within the group.
        bit: usize,
    },
    /// Decoding information or a label message does not parse.
    #[error("malformed {0}")]
    Malformed(&'static str),
    /// The server's Finished `verify_data` is not the one computed in 2PC.
    #[error("the server Finished verify_data does not match")]
    ServerFinished,
    /// A record's tag is not the one computed in 2PC.
    #[error("the record's tag does not match")]
    RecordTag,
    /// The correlated-OT layer refused a message.
    #[error("label transfer: {0}")]
    Transfer(String),
    /// The garbler's `Δ` is not the ZK verifier's (the COT sender's): the
    /// labels cannot be imported as authenticated bits.
    #[error("the garbling Delta differs from the proof's Delta")]
    DeltaMismatch,
    /// A consistency step was called outside a sealed proof (see
    /// [`crate::consistency`]): imported bits must only be asserted on
    /// in sealed mode.
    #[error("the consistency proof must run sealed (call defer first)")]
    NotSealed,
    /// The prover's consistency proof failed (verifier side): its claimed
    /// outputs do not follow from its inputs, an input differs between two
    /// circuits, or the opening does not match its commitment.
    #[error("consistency proof failed: {0}")]
    ConsistencyFailed(String),
    /// The prover's audit found that the verifier deviated (prover side):
    /// a revealed `Δ` that is not the COT's, tables or decoding
    /// information other than an honest garbling's, an OLE answer other
    /// than the honest one for the revealed inputs.
    #[error("the verifier deviated from the protocol: {0}")]
    VerifierCheated(&'static str),
    /// The proof engine or its transport failed (not a verdict on the peer).
    #[error("proof engine: {0}")]
    Proof(String),
}

impl Error {
    /// A proof-engine error: a failed check is the prover's consistency
    /// failure, anything else (transport, malformed frame, usage) is kept
    /// as [`Error::Proof`] or [`Error::Malformed`].
    pub fn from_zk(e: webproof_core::Error) -> Error {
        match e {
            webproof_core::Error::CheckFailed(m) => Error::ConsistencyFailed(m),
            other => Error::Proof(other.to_string()),
        }
    }
}

/// Result with [`Error`].
pub type Result<T, E = Error> = core::result::Result<T, E>;
