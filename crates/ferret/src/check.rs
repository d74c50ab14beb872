//! The consistency check that catches a sender who corrupts a tree.
//!
//! After the sender has sent every tree correction, the receiver (who holds
//! the noise positions and is the party a corrupt tree would hurt) picks a
//! random seed. It expands to `a ∈ F^t` and `β ∈ F` (F = GF(2^128)), and
//! the challenge on leaf `l` of tree `j` is `χ_{j,l} = a_j · β^l`. With
//! `w = v ⊕ e·Delta ⊕ E` (`E` what the sender's cheating changed), both sides
//! fold their leaves with `χ`; the receiver also needs `Σ_j χ_{j,alpha_j}`
//! times `Delta`, which it gets from 128 spare COTs packed into one field
//! element `x'` (`Y* = Z* ⊕ x'·Delta`) by sending `x'' = Σ_j χ_{j,alpha_j} ⊕ x'`:
//!
//! - receiver: `V_R = Σ χ·w ⊕ Y*`;
//! - sender: `V_S = Σ χ·v ⊕ Z* ⊕ x''·Delta`;
//! - `V_R ⊕ V_S = Σ_j a_j Σ_l β^l E_{j,l}`, a non-zero polynomial in
//!   `(a, β)` of degree at most `2^h` whenever `E ≠ 0`, so it vanishes
//!   with probability at most `2^h/2^128` (Schwartz–Zippel; `2^-115` with
//!   the default `h = 13`, `2^-104` at the largest `h` the parameters allow).
//!
//! The sender sends `SHA-256(V_S)`, the receiver compares. Roles: the
//! receiver challenges and decides (a sender who checked itself could ignore
//! a failure); the sender only sends a digest, so a receiver who lies in
//! `x''` gets `SHA-256(V_R ⊕ ε·Delta)` for an `ε` of its choice: a test of
//! one guess of `Delta` (2^-127), nothing more. `x'` is uniform to the
//! sender, so `x''` hides the noise positions.
//!
//! Leakage: a cheating sender can make the check's outcome depend on the
//! noise positions (selective failure) and so learn one predicate of them,
//! paying with abort when the guess is wrong: learning `m` bits is caught
//! except with probability `2^-m`. Ferret's security argument assumes LPN
//! with exactly this leakage; the session must end at the first failure
//! (the extension refuses to continue after one).
//!
//! The product form of `χ` makes the fold one carry-less multiply per leaf
//! plus one per tree, and powers of one `β` make it a polynomial evaluated
//! at `β` ([`PowerSum`]): where there is no carry-less multiply instruction
//! (WebAssembly) that is Horner's rule with a table-driven product by a
//! constant, several times cheaper than independent challenges. That
//! costs the factor `2^h` above, against the factor 2 of independent
//! `b_l`: leakage is unchanged (the check still passes for exactly the
//! noise positions whose `E` is zero, up to that probability).

use sha2::{Digest, Sha256};
use webproof_core::powers::PowerSum;
use webproof_core::{block::inner_product, Block, Prg};

/// Bytes of the receiver's challenge message: seed and `x''`.
pub(crate) const CHALLENGE_LEN: usize = 32;
/// Bytes of the sender's digest.
pub(crate) const DIGEST_LEN: usize = 32;

/// The challenges of one iteration: `a` per tree, `β`'s powers per leaf.
pub(crate) struct Challenge {
    a: Vec<Block>,
    b: PowerSum,
}

impl Challenge {
    pub(crate) fn expand(seed: Block, t: usize, bin: usize) -> Self {
        let mut prg = Prg::new(seed);
        let a = prg.blocks(t);
        let beta = prg.next_block();
        Challenge {
            a,
            b: PowerSum::new(beta, bin),
        }
    }

    /// `χ_{j,l}`.
    pub(crate) fn chi(&self, j: usize, l: usize) -> Block {
        self.a[j].gf_mul(self.b.powers()[l])
    }

    /// `a_j · Σ_l β^l · leaves[l]` for tree `j`.
    pub(crate) fn fold_tree(&self, j: usize, leaves: &[Block]) -> Block {
        self.a[j].gf_mul(self.b.eval(leaves))
    }
}

/// `Σ_i X^i · cots[i]`: 128 COTs as one correlation over GF(2^128).
pub(crate) fn pack_cots(cots: &[Block]) -> Block {
    debug_assert_eq!(cots.len(), 128);
    let powers: Vec<Block> = (0..128).map(Block::power_of_x).collect();
    inner_product(cots, &powers)
}

/// The receiver's packed choice bits `x' = Σ_i b_i X^i` (bit `i` is `lsb(M_i)`).
pub(crate) fn pack_bits(macs: &[Block]) -> Block {
    Block(
        macs.iter()
            .enumerate()
            .fold(0u128, |acc, (i, m)| acc | (m.lsb() as u128) << i),
    )
}

/// The digest the sender sends and the receiver compares.
pub(crate) fn digest(v: Block) -> [u8; DIGEST_LEN] {
    let mut h = Sha256::new();
    h.update(b"webproof-ferret/check/v1");
    h.update(v.to_bytes());
    h.finalize().into()
}

/// Constant-time equality of two digests.
pub(crate) fn digests_equal(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_cots_stay_correlated() {
        let mut prg = Prg::new(Block(9));
        let delta = prg.next_block().with_lsb(true);
        let keys: Vec<Block> = prg
            .blocks(128)
            .into_iter()
            .map(|k| k.with_lsb(false))
            .collect();
        let bits: Vec<bool> = prg.blocks(128).iter().map(|b| b.lsb()).collect();
        let macs: Vec<Block> = keys
            .iter()
            .zip(&bits)
            .map(|(k, b)| *k ^ Block::select(*b, delta))
            .collect();
        let x = pack_bits(&macs);
        assert_eq!(pack_cots(&macs), pack_cots(&keys) ^ x.gf_mul(delta));
    }
}
