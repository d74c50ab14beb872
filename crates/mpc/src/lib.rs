//! Two-party computation for webproof's MPC mode: garbled circuits over the
//! circuit IR of `webproof-circuits`, streamed in bounded memory, with the
//! evaluator's inputs from the correlated OT of `webproof-ot` /
//! `webproof-ferret`.
//!
//! # Roles
//! The **garbler** ([`Garbler`]) is the session's verifier: it holds the
//! global offset `Δ` (the same `Δ` as its COT sender, so COT outputs are
//! labels), garbles, and sends tables. The **evaluator** ([`Evaluator`]) is
//! the prover: it receives its input labels by COT ([`transfer`]) and the
//! garbler's by [`Garbler::encode`], consumes the tables in order, and reads
//! outputs with [`Decoding`] (or reveals them to the garbler with the
//! labels as evidence: [`Garbler::check_output_labels`], or the bits and
//! one digest of the labels, [`exec::VerifierCircuit::check_output`]).
//!
//! # Modules
//! - [`hash`]: the tweakable circular correlation-robust hash on fixed-key
//!   AES (`webproof_core::prg::AesBatch`).
//! - [`plan`]: the validated circuit in the gate order both parties walk,
//!   with independent AND gates grouped so hashing is batched.
//! - [`garble`], [`evaluate`]: three-halves garbling with free-XOR (Rosulek
//!   and Roy), 24 bytes and 5 control bits per AND (half-gates took 32).
//! - [`output`]: decoding information (permute bits).
//! - [`transfer`]: chosen-input labels from random COT with the same `Δ`.
//! - [`field`]: the base fields of P-256 and Curve25519, Poly1305's
//!   `2^130 - 5`, and GF(2^128).
//! - [`ole`]: Gilboa OLE from random COT (one COT per bit of the prover's
//!   input), batched, one round trip.
//! - [`convert`]: share conversions A2M and M2A over OLE.
//! - [`exec`]: one garbled circuit between the parties as messages
//!   (preprocessed tables, inputs by COT in one round trip, decoding,
//!   output labels returned).
//! - [`consistency`]: the malicious-security layer (garble-then-prove):
//!   labels and OLE inputs imported into a sealed QuickSilver proof as
//!   authenticated bits (the circuits chained consistently, the caller's
//!   statements on their outputs), then `Δ` revealed and the
//!   verifier's messages audited by the prover; the security argument and
//!   its costs.
//!
//! The TLS steps built on these (the key exchange and ECtF, the TLS 1.2
//! PRF and the TLS 1.3 key schedule, AES-GCM and ChaCha20-Poly1305
//! records, dual execution of the request's keystream) are
//! `webproof-mpc-tls`'s, in folders named for the step (`keyx`, `kdf`,
//! `rec`).
//!
//! Streaming and memory, the measured figures, the security of this layer
//! and how it is shaped for malicious security: `docs/protocol/mpc.md`.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod consistency;
pub mod convert;
pub mod error;
pub mod evaluate;
pub mod exec;
pub mod field;
pub mod garble;
pub mod hash;
pub mod ole;
pub mod output;
pub mod plan;
pub mod transfer;

pub use error::{Error, Result};
pub use evaluate::{Evaluator, ReceivedTables};
pub use garble::{Garbler, DEFAULT_CHUNK_TABLES};
pub use output::Decoding;
pub use plan::Plan;

/// Bytes of a chunk header: sequence number and table count (`u32` LE each).
pub const CHUNK_HEADER: usize = 8;
/// Bytes of the three half-ciphertexts of one garbled AND gate
/// (three-halves garbling, [`garble`]).
pub const HALVES_BYTES: usize = 24;
/// Control bits of one garbled AND gate, packed after a chunk's
/// half-ciphertexts.
pub const CONTROL_BITS: usize = 5;
/// Most tables one chunk may carry (~1.5 MiB of tables); the evaluator
/// refuses larger chunks.
pub const MAX_CHUNK_TABLES: usize = 1 << 16;

/// Bytes of the tables of `count` AND gates in one chunk, header excluded:
/// `count` times [`HALVES_BYTES`] of half-ciphertexts, then the
/// `CONTROL_BITS·count` control bits packed into whole bytes (zero padding).
/// A table is not a whole number of bytes, so a chunk's size is a function
/// of its table count rather than a multiple of a per-table size.
pub const fn tables_bytes(count: usize) -> usize {
    count * HALVES_BYTES + (count * CONTROL_BITS).div_ceil(8)
}

/// A bound on the bytes of all chunks (headers included) of a circuit with
/// `ands` AND gates, whatever the framing, with one chunk of slack: every
/// chunk the evaluator accepts carries at least one table, and splitting
/// tables over more chunks never makes them smaller, so one table per chunk
/// is the worst case. A receiver buffering chunks refuses more than this.
pub const fn max_stream_bytes(ands: usize) -> usize {
    ands.saturating_add(1)
        .saturating_mul(CHUNK_HEADER + tables_bytes(1))
}

/// Labels as bytes (16 bytes each, little-endian), e.g. the garbler's
/// encoded inputs on their way to the evaluator.
pub fn labels_to_bytes(labels: &[webproof_core::Block]) -> Vec<u8> {
    labels.iter().flat_map(|l| l.to_bytes()).collect()
}

/// Parse exactly `n` labels from `bytes`; any other length is refused.
pub fn labels_from_bytes(bytes: &[u8], n: usize) -> Result<Vec<webproof_core::Block>> {
    if Some(bytes.len()) != n.checked_mul(16) {
        return Err(Error::Malformed("label message of the wrong length"));
    }
    Ok(bytes
        .chunks(16)
        .map(|c| webproof_core::Block::from_bytes(c.try_into().expect("16 bytes")))
        .collect())
}
