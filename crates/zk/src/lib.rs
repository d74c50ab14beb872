//! Designated-verifier interactive zero knowledge for Boolean circuits over
//! random correlated OT (the QuickSilver construction).
//!
//! This crate owns the proof engine that proxy mode (TLS record decryption
//! and key derivation) and MPC mode (consistency proofs) build on. It does no
//! I/O of its own beyond the [`Channel`](webproof_core::Channel) it is
//! handed, spawns no threads and builds for `wasm32-unknown-unknown`.
//!
//! # Objects
//! - [`Prover`] holds a COT *receiver* and a channel; [`Verifier`] holds a COT
//!   *sender* (the global `Delta`) and the other end of the channel.
//! - An authenticated bit is a [`ProverBit`] on the prover side (a MAC `M`,
//!   whose least significant bit is the value) and a [`VerifierBit`] on the
//!   verifier side (a key `K`, with `lsb(K) = 0`), with `M = K ^ x * Delta`.
//! - An authenticated GF(2^128) element ([`ProverElem`] / [`VerifierElem`])
//!   packs up to 128 bits as `sum x^i * bit_i`; additions and products with
//!   public constants are free, products of two elements are checked.
//!
//! Both parties call the same operations in the same order (the statement is
//! public; only the witness is private): `commit` (private inputs),
//! `constant`, `xor`, `not`, `and`, `eval` (a whole
//! [`Circuit`](webproof_circuits::Circuit)), `mul` (elements), `open`,
//! `assert_public` / `assert_zero`, `check` and `finish`.
//!
//! ```
//! use futures::executor::block_on;
//! use webproof_circuits::cache;
//! use webproof_core::{cot::ideal, memory_duplex, Channel, Prg, Block};
//! use webproof_zk::{Config, Prover, Verifier};
//!
//! // Statement: "I know a key k with AES_k(0) = c" for a public c.
//! let key = [7u8; 16];
//! let aes = cache::aes128();
//! let c = aes.eval_bytes(&[&key, &[0u8; 16]]).remove(0);
//! let c_bits = webproof_circuits::bytes_to_bits(&c);
//! let (a, b) = memory_duplex();
//! // Tests use the insecure dealer; real sessions use webproof-ferret.
//! let (cot_s, cot_r) = ideal::pair(1);
//! let prover = async {
//!     let mut p = Prover::new(cot_r, Channel::new(a), Config::default()).await?;
//!     let k = p.commit_bytes(&key).await?;
//!     let zero: Vec<_> = (0..128).map(|_| p.constant(false)).collect();
//!     let out = p.eval(aes, &[&k, &zero]).await?;
//!     p.assert_public(&out[0], &c_bits).await?;
//!     p.finish().await
//! };
//! let verifier = async {
//!     let mut rng = Prg::new(Block(42)); // use a real CSPRNG
//!     let mut v = Verifier::new(cot_s, Channel::new(b), Config::default(), &mut rng).await?;
//!     let k = v.commit_bytes(16).await?;
//!     let zero: Vec<_> = (0..128).map(|_| v.constant(false)).collect();
//!     let out = v.eval(aes, &[&k, &zero]).await?;
//!     v.assert_public(&out[0], &c_bits).await?;
//!     v.finish().await // Ok only if every AND gate and assertion checks out
//! };
//! let (p, v) = block_on(async { futures::join!(prover, verifier) });
//! assert!(p.is_ok() && v.is_ok());
//! ```
//!
//! # How it works
//! Every committed bit (a private input or an AND output) consumes one random
//! COT `(M_r, r)` / `K_r`: the prover sends the correction `d = x ^ r` and both
//! sides add `d` as a public constant, so `M_x = M_r ^ d`,
//! `K_x = K_r ^ d ^ d * Delta`. XOR and NOT are local. For an AND gate
//! `c = a & b` the relation
//! `K_a K_b + K_c Delta = A0 + A1 Delta + (ab + c) Delta^2` holds with
//! `A0 = M_a M_b`, `A1 = a M_b + b M_a + M_c`, so an honest prover can make the
//! `Delta^2` term vanish and a cheating one cannot without knowing `Delta`.
//! All gates are checked at once with weights `chi_i`, the prover
//! answers `U = sum chi_i A0_i + A0*`, `V = sum chi_i A1_i + A1*` where
//! `(A0*, A1*)` is a random VOLE built from 128 COTs, and the verifier checks
//! `sum chi_i B_i + B* = U + V Delta`.
//!
//! Within a segment the weights are the powers `chi, chi^2, chi^3, ...` of
//! one challenge (`check::ChiStream`): no pseudo-random block per gate, and
//! in the browser the sums are Horner's rule with table lookups instead of
//! software carry-less products.
//! The weights are public coins, so they are derived from the transcript
//! (Fiat–Shamir) instead of being sent: segment `j`'s seed is a SHA-256 hash
//! chain over a 32-byte context the caller supplies, the hello and every
//! correction segment up to and including `j` (`proto::ChallengeChain`).
//! The context ([`Prover::with_context`], [`Verifier::with_context`]) names
//! the session and the statement (proxy mode passes a digest of the TLS
//! transcript and of the prover's plan), so a proof answers the challenges of
//! that session and statement only; soundness does not rest on it (`Delta`
//! is fresh per session and the statement is fixed before the proof), it is
//! defence in depth. The errors a segment's weights multiply are
//! fixed by the corrections hashed into its seed, so for a cheating prover
//! the segment's weighted error sum is a nonzero polynomial in `chi` of
//! degree at most `n` (its terms, at most [`Config::segment_bits`]) and no
//! constant term, which takes any one value (in particular minus what
//! earlier segments left) with probability at most `n / 2^128` per hash
//! evaluation it tries (random-oracle model: `q` evaluations give
//! `q n / 2^128`: `q / 2^112` with the default 2^16-bit segments, `q /
//! 2^104` with the largest allowed), and a
//! nonzero sum leaves a degree-2 equation in `Delta`, which the prover's view
//! says nothing about (`lsb(Delta) = 1` is public, so `Delta` has 127 unknown
//! bits): about `q n / 2^128 + 2 / 2^127` in all. Deriving the weights costs no
//! message, so the proof streams one way with no round trip until the check.

//! # Byte inversions
//! A [`Gate::ByteInv`](webproof_circuits::Gate::ByteInv) (the non-linear
//! part of the AES S-box) costs 8 COTs: the prover commits the 8 bits of
//! `t = y^-1` in GF(2^8) and proves `Y^2 T = Y` and `Y T^2 = T` for the
//! embeddings `Y`, `T` of the bytes in GF(2^128), two terms of the same
//! batched check (see `byteinv`). The 8 bits of one inversion always lie in
//! one COT batch and one segment: both parties drop the tail of a batch
//! that is too short, and the prover sends a segment early rather than
//! split them.
//!
//! Openings send the values and a SHA-256 hash of the MACs; the verifier
//! recomputes the MACs `K ^ x Delta` for the claimed values. Claiming a wrong
//! value needs the MAC `M ^ Delta`, i.e. guessing `Delta`. Bits' MACs are
//! hashed 128 at a time, packed into one element `sum x^j M_j`: wrong bits
//! `e` move it by `pack(e) Delta` with `pack(e) != 0`, the same guess.
//!
//! # Why the verifier learns nothing beyond what is opened
//! - Corrections `d = x ^ r` are one-time-padded by the COT choice bits `r`,
//!   which are uniform and unknown to the verifier (it holds only `K_r` and
//!   `Delta`, independent of `r`).
//! - The check answer `(U, V)` is masked by the random VOLE `(A0*, A1*)`:
//!   `A1* = sum x^j r_j` is uniform to the verifier, and for an honest prover
//!   `U` is then determined by `V` and the verifier's own keys, so the pair is
//!   simulatable.
//! - An opening reveals the values (which it is meant to) and MACs that the
//!   verifier can compute itself from those values.
//!
//! # Streaming
//! COTs are drawn in batches of [`Config::cot_batch`] and corrections are
//! sent in segments of at most [`Config::segment_bits`] bits; the prover keeps
//! the check terms of one segment (folded as soon as the segment is sent;
//! the verifier folds each gate as it goes), so memory is bounded whatever
//! the circuit size.
//!
//! # Imported bits (garble-then-prove)
//! Bits authenticated elsewhere under the same `Delta` enter without any
//! message: [`Prover::import_label`] / [`Verifier::import_label`] take a
//! free-XOR garbled label `L = L0 ^ x Delta` (the garbler is the verifier
//! and its offset is the COT sender's `Delta`) and its 0-label `L0`, and
//! give MAC `L` with lsb set to `x` and key `L0` with lsb cleared, which is
//! the bit `lsb(L)` (MAC `L`, key `L0 ^ lsb(L0) Delta`) plus the public
//! constant `lsb(L0)`. A COT MAC that carries a chosen bit (`M` with flip
//! `d`, key `K ^ d Delta`) is such a label too. A prover that imports with
//! the wrong value holds a MAC off by `Delta ^ 1` and fails every later
//! check that depends on it except with probability about `2^-127`.
//!
//! # Sealed proofs
//! Imported keys are chosen by the verifier, not by the COT functionality:
//! a verifier that gave inconsistent ones could test guesses about the
//! prover's values against the hashes of openings and assertions and
//! solve for them from the check answer. [`Prover::defer`] /
//! [`Verifier::defer`] switch both sides to *sealed* mode: those messages
//! are held back, [`Prover::seal`] commits to them with
//! `SHA-256(label, salt, held)` (32 random salt bytes), after which the
//! verifier may reveal `Delta` ([`SealedVerifier::delta`]) so that the prover
//! can audit everything the verifier sent in the clear, and only then does
//! the prover open ([`SealedProver::open`], [`SealedVerifier::verify`]).
//! Soundness is unchanged: the held messages are fixed by the commitment
//! before `Delta` is known, so a cheating prover must still guess `Delta`
//! (or find a SHA-256 collision). The COT correlation is spent once `Delta`
//! is revealed: a sealed proof is the last proof of its session. Cost: 32
//! bytes of commitment, 32 of salt, one round trip (the reveal) before the
//! opening, which is as long as the held messages would have been.
//!
//! A sealed proof may also keep the values it asserts from the verifier
//! until the opening ([`Prover::defer_claims`], [`Prover::assert_claimed`]):
//! the claimed bits' MACs are folded into one held block, checked when the
//! caller discloses the values after the audit (module `claims` has the
//! argument). MPC mode sends the bytes it reveals that way, so a verifier
//! caught by the audit never sees them.
//!
//! # The verifier may abort
//! Where the prover expects the 1-byte verdict, any other frame (up to
//! 64 KiB) is the verifier ending the session with a message of the calling
//! layer; the prover reports it as `Error::PeerAbort` with the payload.
//!
//! # Sessions end on the first error
//! After any error (a failed check, a malformed message) the objects must be
//! dropped: COTs are one-time and the transcript is no longer in sync.
#![forbid(unsafe_code)]

mod byteinv;
mod check;
mod claims;
mod elem;
mod proto;
mod prover;
mod verifier;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_claims;
#[cfg(test)]
mod tests_import;

pub use elem::{ProverElem, VerifierElem};
pub use prover::{Prover, ProverBit, SealedProver, MAX_BATCH};
pub use verifier::{SealedVerifier, Verifier, VerifierBit};
pub use webproof_core::error::Result;
pub use webproof_core::Error;

/// Parameters both parties must agree on (checked in the opening hello).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// COTs drawn from the COT source at a time (memory: 16 bytes each, per party).
    pub cot_batch: usize,
    /// Most correction bits in one segment (one challenge per segment; the
    /// prover keeps 32 bytes per AND of two segments).
    pub segment_bits: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            cot_batch: 1 << 20,
            segment_bits: 1 << 16,
        }
    }
}

impl Config {
    /// Largest accepted values, so a peer's hello cannot make us allocate without bound.
    const MAX_COT_BATCH: usize = 1 << 26;
    const MAX_SEGMENT_BITS: usize = 1 << 24;

    fn validate(&self) -> Result<()> {
        if self.cot_batch < 256 || self.cot_batch > Self::MAX_COT_BATCH {
            return Err(Error::Usage(format!(
                "cot_batch must be in 256..={}",
                Self::MAX_COT_BATCH
            )));
        }
        if self.segment_bits < 64
            || self.segment_bits > Self::MAX_SEGMENT_BITS
            || self.segment_bits & 63 != 0
        {
            return Err(Error::Usage(format!(
                "segment_bits must be a multiple of 64 in 64..={}",
                Self::MAX_SEGMENT_BITS
            )));
        }
        Ok(())
    }
}

/// Counters of one party's work so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// AND gates proven.
    pub and_gates: u64,
    /// Private input bits committed (including element products).
    pub committed_bits: u64,
    /// COTs consumed (AND gates, commitments and check masks).
    pub cots_used: u64,
    /// Products of two GF(2^128) elements proven.
    pub elem_muls: u64,
    /// Byte inversions in GF(2^8) proven (8 COTs each).
    pub byte_invs: u64,
    /// Batched checks completed.
    pub checks: u64,
}
