//! Error types: one enum per job (decoding, verifying, building), each with
//! precise variants, and [`Error`] wrapping them for callers that do several.

use crate::transcript::Direction;

/// Why bytes (binary or JSON) were rejected as an encoding.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("input ends inside {what}")]
    Truncated { what: &'static str },
    #[error("{count} trailing bytes after the encoding")]
    TrailingBytes { count: usize },
    #[error("not a webproof {expected} (bad magic)")]
    BadMagic { expected: &'static str },
    #[error("unsupported {what} format version {version}")]
    UnsupportedVersion { what: &'static str, version: u16 },
    #[error(
        "{what} format version {version} is no longer accepted: it lacks {lacks}; this build \
         reads version {current}, so have the verifier sign the session again with a current \
         webproof"
    )]
    OutdatedVersion {
        what: &'static str,
        version: u16,
        lacks: &'static str,
        current: u16,
    },
    #[error("{what} too large: {len} > {max}")]
    TooLarge {
        what: &'static str,
        len: usize,
        max: usize,
    },
    #[error("{what} must not be empty")]
    Empty { what: &'static str },
    #[error("invalid flag byte {value} for {what}")]
    InvalidFlag { what: &'static str, value: u8 },
    #[error("invalid server name")]
    InvalidServerName,
    #[error("unknown TLS version 0x{0:04x}")]
    UnknownTlsVersion(u16),
    #[error("unknown or unsupported cipher suite 0x{0:04x}")]
    UnknownCipherSuite(u16),
    #[error("cipher suite 0x{suite:04x} does not belong to TLS version 0x{version:04x}")]
    SuiteVersionMismatch { suite: u16, version: u16 },
    #[error("invalid direction byte {0}")]
    InvalidDirection(u8),
    #[error("unknown signature scheme {0}")]
    UnknownScheme(u8),
    #[error("invalid secp256k1 recovery byte {0} (expected 27 or 28)")]
    InvalidRecoveryByte(u8),
    #[error("openings are not in strictly increasing leaf order")]
    OpeningsNotSorted,
    #[error("range {start}+{len} overflows the 32-bit offset space")]
    RangeOverflow { start: u32, len: u32 },
    #[error("invalid response completeness byte {0} (expected 0, 1 or 2)")]
    InvalidCompleteness(u8),
    #[error("order span {index} is empty")]
    EmptyOrderSpan { index: usize },
    #[error("order span {index} has the same direction as the span before it")]
    OrderNotAlternating { index: usize },
    #[error(
        "order span {index} ({direction}) starts at {start}, not where the previous \
         {direction} span ended ({expected})"
    )]
    OrderSpanMisplaced {
        index: usize,
        direction: Direction,
        start: u32,
        expected: u32,
    },
    #[error("line-end-free span {index} ({start}..{end}) is empty, out of order or past the sent data ({sent_len} bytes)")]
    CrlfFreeSpanMisplaced {
        index: usize,
        start: u32,
        end: u32,
        sent_len: u32,
    },
    #[error("the {direction} order spans end at {end}, not at the {direction} length {len}")]
    OrderEnd {
        direction: Direction,
        end: u32,
        len: u32,
    },
    #[error("invalid JSON: {0}")]
    Json(String),
}

/// Why a presentation or attestation was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    #[error("attestation signed by key {key_id}, which is not trusted")]
    UntrustedKey { key_id: String },
    #[error("signature scheme does not match the trusted key")]
    SchemeMismatch,
    #[error("invalid attestation signature")]
    BadSignature,
    #[error("leaf index {index} out of range for a tree of {leaf_count} leaves")]
    LeafIndexOutOfRange { index: u32, leaf_count: u32 },
    #[error("Merkle proof of leaf {index} does not lead to the attested root")]
    BadInclusionProof { index: u32 },
    #[error("revealed {direction} range {start}..{end} exceeds the transcript length {len}")]
    RangeOutOfBounds {
        direction: Direction,
        start: u32,
        end: u32,
        len: u32,
    },
    #[error("revealed {direction} ranges overlap at byte {at}")]
    OverlappingRanges { direction: Direction, at: u32 },
    #[error("server identity data does not match the attested hash")]
    ServerIdentityMismatch,
}

/// Errors in building commitments, attestations and presentations, and in
/// parsing keys.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Decode(#[from] DecodeError),
    #[error(transparent)]
    Verify(#[from] VerifyError),
    #[error("{direction} transcript of {len} bytes exceeds the maximum of {max}")]
    TranscriptTooLong {
        direction: Direction,
        len: usize,
        max: usize,
    },
    #[error("chunk length {0} must be between 1 and the maximum leaf length")]
    InvalidChunkLen(usize),
    #[error("{direction} range {start}..{end} is empty or outside the transcript ({len} bytes)")]
    InvalidRange {
        direction: Direction,
        start: usize,
        end: usize,
        len: usize,
    },
    #[error("{direction} commitment ranges overlap or are not sorted at {start}")]
    UnsortedRanges { direction: Direction, start: usize },
    #[error("the transcript does not match the commitment it is presented with")]
    TranscriptMismatch,
    #[error("the attestation does not commit to this transcript commitment")]
    CommitmentMismatch,
    #[error(
        "{direction} range {start}..{end} does not fall on commitment boundaries \
         (reveal whole committed ranges, or use reveal_covering)"
    )]
    UnalignedReveal {
        direction: Direction,
        start: usize,
        end: usize,
    },
    #[error("invalid server name {0:?}")]
    InvalidServerName(String),
    #[error("invalid key: {0}")]
    InvalidKey(&'static str),
    #[error("{hashes} leaf hashes for a layout of {leaves} leaves")]
    LeafCountMismatch { leaves: usize, hashes: usize },
    #[error("too many leaves or certificates: {0}")]
    TooMany(&'static str),
}

pub type Result<T, E = Error> = core::result::Result<T, E>;
