//! Attestations and presentations: what a webproof verifier signs after a
//! session, and what a prover later shows a third party.
//!
//! - [`commit`]: hiding, binding commitments to ranges of the transcript
//!   (one SHA-256 per range with a secret blinder; the exact preimage layout
//!   is documented there for the ZK circuit) gathered in a [`merkle`] tree.
//! - [`attestation`]: the signed statement (server name, time, TLS version
//!   and suite, key id, transcript lengths, commitment root, handshake hash,
//!   and the [`SessionFacts`]: the [`ProofMode`] that produced it and what
//!   the verifier could establish in that mode of the port, close_notify,
//!   records dropped at the cut, response completeness and order of the two
//!   directions) and its canonical binary encoding.
//! - [`keys`]: secp256k1 ECDSA (EVM `ecrecover` compatible) and Ed25519
//!   verifier keys and key ids.
//! - [`presentation`]: revealed ranges with their openings and inclusion
//!   proofs, and [`verify_presentation`].
//!
//! Flow: the prover commits ([`TranscriptCommitment`]); the verifier checks
//! the ZK proof that the leaves are over the session's plaintext (outside
//! this crate), then signs [`AttestationFields`] with
//! [`Attestation::sign`]; the prover builds a [`Presentation`] with
//! [`PresentationBuilder`]; anyone checks it with [`verify_presentation`].
//!
//! The crate does no I/O except the optional key-file helpers in
//! `keyfile` (feature `fs`), takes randomness from the caller, and builds
//! for `wasm32-unknown-unknown`.
#![forbid(unsafe_code)]

pub mod attestation;
pub mod commit;
mod encoding;
pub mod error;
#[cfg(feature = "fs")]
pub mod keyfile;
pub mod keys;
pub mod merkle;
pub mod presentation;
pub mod transcript;

pub use attestation::{
    Attestation, AttestationFields, CipherSuite, Completeness, OrderSpan, ProofMode, ResponseEnd,
    ServerIdentity, SessionFacts, SignedAttestation, TlsVersion, MAX_CRLF_FREE_SPANS,
    MAX_ORDER_SPANS,
};
pub use commit::{CommitPlan, CommitmentSeed, LeafRange, TranscriptCommitment};
pub use error::{DecodeError, Error, Result, VerifyError};
pub use keys::{KeyId, Scheme, Signature, SigningKey, VerifyingKey};
pub use presentation::{
    escape_revealed, verify_presentation, Presentation, PresentationBuilder, RedactedTranscript,
    Segment, VerifiedPresentation,
};
pub use transcript::{Direction, Transcript};

impl AttestationFields {
    /// Fields for a session whose transcript commitment is `commitment` and
    /// which the verifier observed as `facts`.
    pub fn for_commitment(
        server_name: impl Into<String>,
        time: u64,
        cipher_suite: CipherSuite,
        commitment: &TranscriptCommitment,
        handshake_hash: merkle::Hash,
        facts: SessionFacts,
    ) -> Self {
        AttestationFields {
            server_name: server_name.into(),
            time,
            cipher_suite,
            sent_len: commitment.sent_len(),
            received_len: commitment.received_len(),
            leaf_count: commitment.leaf_count(),
            transcript_root: commitment.root(),
            handshake_hash,
            facts,
        }
    }
}
