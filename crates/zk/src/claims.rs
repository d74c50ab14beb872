//! Claimed values of a sealed proof: bits the prover asserts equal values
//! it discloses only when the proof opens ([`crate::Prover::assert_claimed`]).
//!
//! Why: in MPC mode the verifier may have cheated in the garbling, which
//! the prover learns only from its audit after the seal. Values the prover
//! reveals (the claimed bytes of a response) should not reach such a
//! verifier; with claims they go out with the opening, after the audit.
//!
//! How: the prover binds itself to the values before the proof starts (the
//! caller's `binding`, a hiding commitment sent in the clear). Both sides
//! fold the claimed bits' MACs / keys with weights `chi^1, chi^2, ...`
//! ([`ChiStream`]) seeded by that binding: the prover holds `B = sum chi^i
//! M_i` back with its sealed messages, the verifier keeps `A = sum chi^i
//! K_i`. At the opening the verifier gets the values `v_i`, checks them
//! against the binding (the caller's job) and checks `B = A + (sum chi^i
//! v_i) Delta`. A prover whose bits hold other values `v_i + e_i` must send
//! `B` off by `(sum chi^i e_i) Delta`, which it cannot compute without
//! `Delta` (still secret when `B` is committed by the seal), unless `sum
//! chi^i e_i = 0`: a nonzero polynomial of degree at most `n` in `chi`,
//! which vanishes with probability at most `n / 2^128` per binding the
//! prover tries, since `chi` is a hash of the binding and the binding fixes
//! the claimed values. `B` reveals nothing the values do not: it is `A +
//! (sum chi^i v_i) Delta`.

use crate::check::{Acc, ChiStream};
use sha2::{Digest, Sha256};
use webproof_core::Block;

/// One side's running sum of weighted MACs (prover) or keys (verifier).
pub(crate) struct ClaimSum {
    binding: [u8; 32],
    chi: ChiStream,
    sum: Acc,
    count: usize,
}

impl ClaimSum {
    pub(crate) fn new(binding: [u8; 32]) -> Self {
        ClaimSum {
            binding,
            chi: ChiStream::new(seed(&binding)),
            sum: Acc::default(),
            count: 0,
        }
    }

    /// Fold the next claimed bit's MAC or key.
    pub(crate) fn add(&mut self, x: Block) {
        self.sum.add_mul(self.chi.next_chi(), x);
        self.count += 1;
    }

    /// Claimed bits folded so far.
    pub(crate) fn count(&self) -> usize {
        self.count
    }

    /// The sum so far.
    pub(crate) fn value(&self) -> Block {
        self.sum.value()
    }

    /// `sum chi^i v_i` over the claimed values, in the order they were
    /// claimed.
    pub(crate) fn weigh(&self, values: &[bool]) -> Block {
        let mut chi = ChiStream::new(seed(&self.binding));
        let mut s = Block::ZERO;
        for &v in values {
            let c = chi.next_chi();
            if v {
                s ^= c;
            }
        }
        s
    }
}

/// The weights' seed: a hash of the binding (domain-separated from the
/// segment challenges).
fn seed(binding: &[u8; 32]) -> Block {
    let mut h = Sha256::new();
    h.update(b"webproof-zk/claims/v1");
    h.update(binding);
    let d: [u8; 32] = h.finalize().into();
    Block::from_bytes(d[..16].try_into().expect("16 bytes"))
}
