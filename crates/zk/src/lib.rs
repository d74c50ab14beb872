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
//! How the proof works and why it is sound and zero knowledge (the AND
//! check, Fiat–Shamir weights per segment, byte inversions, openings,
//! streaming, imported garbled labels, sealed proofs and deferred claims,
//! aborts): `docs/protocol/zk.md`.

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
