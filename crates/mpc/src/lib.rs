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
//! - [`field`]: the base fields of P-256 and Curve25519, and GF(2^128).
//! - [`ole`]: Gilboa OLE from random COT (one COT per bit of the prover's
//!   input), batched, one round trip.
//! - [`convert`]: share conversions A2M and M2A over OLE.
//! - [`dual`]: dual execution of the request's keystream: the prover's
//!   own garbling of it, evaluated by the verifier, and the check that
//!   makes the keystream the prover uses online authentic.
//! - [`ectf`]: EC to field, additive shares of the x-coordinate of the sum
//!   of two parties' points (one round trip and a message that rides with
//!   the next one, three OLEs).
//! - [`keyshare`]: the client's ECDHE key shared between the parties for
//!   P-256 and X25519: setup with a commitment, each party's point on the
//!   server's key, the premaster's encoding.
//! - [`exec`]: one garbled circuit between the parties as messages
//!   (preprocessed tables, inputs by COT in one round trip, decoding,
//!   output labels returned).
//! - [`tls12`]: TLS 1.2 key derivation in 2PC, from premaster shares to XOR
//!   shares of the write keys and IVs (master secret or extended master
//!   secret), and both Finished `verify_data`.
//! - [`reduced`]: the same with only outer HMAC compressions garbled
//!   (inner pad states revealed to both, inner digests encoded by the
//!   verifier, outer compressions on their public message schedule):
//!   14 compressions instead of 36, one round trip per step; the server
//!   Finished's `verify_data` is left to the proof after the session
//!   ([`reduced::server_finished_circuit`]).
//! - [`record`]: AES-GCM records in 2PC: the keystream to the prover, the
//!   tag from shares of the powers of the GHASH key.
//! - [`consistency`]: the malicious-security layer (garble-then-prove):
//!   labels and OLE inputs imported into a sealed QuickSilver proof as
//!   authenticated bits (the circuits chained consistently, the caller's
//!   statements on their outputs), then `Δ` revealed and the
//!   verifier's messages audited by the prover; the security argument and
//!   its costs.
//!
//! # Streaming and memory
//! Sans-I/O and caller-driven: [`Garbler::next_chunk`] fills a byte buffer
//! with the next chunk (an 8-byte header, sequence number and table count,
//! then up to [`MAX_CHUNK_TABLES`] tables); [`Evaluator::feed`] takes chunks
//! in the same order and checks their framing before it touches its state.
//! Each party keeps one label per wire of the circuit (16 bytes per wire)
//! and the schedule; no table is kept after it is sent or evaluated. Tables
//! do not depend on inputs, so they can be garbled and sent in
//! preprocessing; an evaluator that does not know its inputs yet stores the
//! chunks until it does. No sockets, threads, clocks or unsafe code: the
//! crate builds for `wasm32-unknown-unknown`.
//!
//! # Figures
//! `cargo run --release -p webproof-mpc --example garble_bench` (one thread,
//! this 2-core machine, median of 5, per CPU-second): with three-halves
//! garbling AES-128 is garbled at ~10 M AND/s and evaluated at ~11 M AND/s,
//! the TLS 1.2 PRF (master secret to keys and both Finished, 448,873 AND) at
//! ~10 / ~11 M AND/s, with 3,565 label slots and ~21 MB of state per party;
//! half-gates measured ~14 / ~18 and ~13 / ~15 M AND/s in the same (loaded)
//! conditions, interleaved (earlier, on a quiet machine, ~27 / ~41 and
//! ~24 / ~32). 24.625 bytes per AND on the wire (plus 8 bytes per chunk):
//! 11.05 MB for that PRF circuit, 14.36 MB with half-gates. Garbling is far
//! faster than any link the session will see (100 Mbps carries ~0.5 M
//! AND/s).
//!
//! `cargo run --release -p webproof-mpc --example ectf_bench` (same
//! conditions, wall time): one 2PC key exchange, both points `s_i·S` and
//! the ECtF, takes 0.3-0.5 ms of computation per party on either curve;
//! 128 bytes prover → verifier and 24,640 bytes verifier → prover in one
//! round trip (its last message rides with the next step's), 768 COTs
//! (plus the key-share setup: 129 / 65 bytes for P-256, 96 / 32 for
//! X25519, one round trip before the ClientHello).
//!
//! `cargo run --release -p webproof-mpc --example tls12_bench` (same
//! conditions, thread CPU time per party role, median of 5): the whole TLS 1.2
//! handshake in 2PC (key share, ECtF, key derivation, both Finished) for
//! P-256 or X25519 with AES-128-GCM-SHA256 is 775,947 AND (36 SHA-256
//! compressions), 19.11 MB of tables and decoding verifier → prover in
//! preprocessing, and online 505 bytes prover → verifier and 95 KB
//! verifier → prover in 4 round trips (ECtF, key derivation, each
//! Finished), plus the key-share setup before the ClientHello; 2,048
//! COTs; ~55 ms of garbling, the verifier's online part under 1 ms, the
//! prover's ~62 ms (evaluation and ECtF). With the extended master secret
//! 18.55 MB; with AES-256-GCM-SHA384 (SHA-512 compressions) 35.86 MB.
//! The reduced PRF ([`reduced`], SHA-256 suites) brings the key
//! derivation and the client Finished to 247,267 AND (its outer
//! compressions take their public message schedule as input; the server
//! Finished is checked in the proof after the session): the whole
//! handshake is 6.13 MB of preprocessing, 0.7 KB up and 320 KB down
//! online, 6.45 MB in total (99.99% verifier → prover), in 8 round trips
//! (the ECtF and 7 steps; each step's returned labels ride with the next
//! step's flips), ~22 ms of garbling and ~16 ms of prover CPU online.
//! A 1 KB request record (AES-128-GCM, the GHASH key from the client
//! Finished's circuit) adds 278,784 AND, 6.87 MB of tables, and its
//! hidden ciphertext's M2A, 128 KiB ([`record`]); the powers of `H` for
//! every client record, once per session, 66 KiB. All of it goes in
//! preprocessing.
//!
//! # Security of this layer (semi-honest garbling)
//! - *Privacy against the evaluator*, even a malicious one: it holds one
//!   label per wire and the tables, which hide the other label under the
//!   TCCR hash ([`hash`]); its OT inputs can only choose its own bits.
//! - *Privacy of the evaluator's input against the garbler*: the garbler
//!   sees only one-time-padded flips ([`transfer`]) and, if it is given
//!   them, output labels.
//! - *Authenticity*: the evaluator cannot produce a valid label for an
//!   output value other than the computed one (that would need `Δ`); the
//!   garbler checks returned labels against both valid ones.
//! - *Not covered here*: a malicious garbler may garble another function,
//!   give a wrong 0-label or correction for an input (flipping or spoiling
//!   the evaluator's bit: a selective failure if the spoiling depends on
//!   it), or send wrong permute bits. Nothing online tells the evaluator
//!   (see [`output`] for why decoding carries no digests):
//!   [`consistency`] makes the garbler honest (the prover's audit after
//!   `Δ` is revealed), and it also holds the prover to consistent inputs
//!   (the sealed proof); its docs say what can still leak during the
//!   session.
//!
//! # How this is shaped for malicious security (garble-then-prove)
//! [`consistency`] is that layer (its docs hold the argument). It proves, with the QuickSilver engine of
//! `webproof-zk` over the same COT correlation, that the evaluation was
//! consistent, once the garbler's (verifier's) secret inputs may be revealed
//! after the TLS session. What it needs from here is exposed:
//! - the garbler's `Δ` ([`Garbler::delta`]) equals its COT `Δ`, so with
//!   free-XOR every active label the evaluator holds is an IT-MAC
//!   `L0 ⊕ b·Δ` of the wire's bit, with key `L0` held by the garbler: the
//!   evaluator's input labels from [`transfer`] are exactly its COT MACs
//!   (chosen mode) or those plus a public offset (correction mode), and its
//!   output labels are MACs of the outputs under the garbler's output
//!   0-labels;
//! - the garbler exposes its input and output 0-labels
//!   ([`Garbler::input_zero_labels`], [`Garbler::output_zero_labels`]); the
//!   evaluator retains its active input and output labels
//!   ([`Evaluator::input_labels`], [`Evaluator::output_labels`]) after the
//!   wire array is freed;
//! - instances are numbered ([`Garbler::from_plan`]) so many circuits of one
//!   session share `Δ` without repeating a hash tweak.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod consistency;
pub mod convert;
pub mod dual;
pub mod ectf;
pub mod error;
pub mod evaluate;
pub mod exec;
pub mod field;
pub mod garble;
pub mod hash;
pub mod keyshare;
pub mod ole;
pub mod output;
pub mod plan;
pub mod record;
pub mod reduced;
pub mod tls12;
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
