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
//! outputs with [`Decoding`] (or sends output labels back, checked by
//! [`Garbler::check_output_labels`]).
//!
//! # Modules
//! - [`hash`]: the tweakable circular correlation-robust hash on fixed-key
//!   AES (`webproof_core::prg::AesBatch`).
//! - [`plan`]: the validated circuit in the gate order both parties walk,
//!   with independent AND gates grouped so hashing is batched.
//! - [`garble`], [`evaluate`]: half-gates with free-XOR, 32 bytes per AND.
//! - [`output`]: decoding information with authenticity digests.
//! - [`transfer`]: chosen-input labels from random COT with the same `Δ`.
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
//!   it), or send wrong decoding digests. The output check turns accidental
//!   corruption into an error, not a wrong answer, but it does not make the
//!   garbler honest.
//!
//! # How this is shaped for malicious security (garble-then-prove)
//! The malicious layer comes next and proves, with the QuickSilver engine of
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

pub mod error;
pub mod evaluate;
pub mod garble;
pub mod hash;
pub mod output;
pub mod plan;
pub mod transfer;

pub use error::{Error, Result};
pub use evaluate::Evaluator;
pub use garble::{Garbler, DEFAULT_CHUNK_TABLES};
pub use output::Decoding;
pub use plan::Plan;

/// Bytes of a chunk header: sequence number and table count (`u32` LE each).
pub const CHUNK_HEADER: usize = 8;
/// Bytes per garbled AND gate (two ciphertexts).
pub const TABLE_BYTES: usize = 32;
/// Most tables one chunk may carry (2 MiB of tables); the evaluator refuses
/// larger chunks.
pub const MAX_CHUNK_TABLES: usize = 1 << 16;

#[cfg(test)]
mod tests;
