//! The fixed-key AES hash that expands the half-trees.
//!
//! `H(x) = π(σ(x)) ⊕ σ(x)` with `π` AES-128 under a fixed public key and
//! `σ(x_hi ‖ x_lo) = (x_hi ⊕ x_lo) ‖ x_hi` a linear orthomorphism: the
//! circular correlation-robust hash of Guo, Katz, Wang and Yu ("Efficient and
//! secure multiparty computation from fixed-key block ciphers", S&P 2020),
//! which is the assumption the half-tree construction (Guo, Yang, Wang, Zhang,
//! Xie, Liu, Zhao, Eurocrypt 2023) needs: the receiver holds tree nodes that
//! are correlated with the secret `Delta`, and `H` must hide those
//! correlations. One AES block per tree node (the right child is derived
//! without one).

use webproof_core::prg::AesBatch;
use webproof_core::Block;

/// Blocks hashed per AES call.
pub(crate) const BATCH: usize = 64;

/// The public AES key of `π` (the ASCII text "webproof-ferret!").
const FIXED_KEY: [u8; 16] = *b"webproof-ferret!";

/// `σ`: linear, and `x ↦ σ(x) ⊕ x` is a bijection too.
#[inline(always)]
pub(crate) fn sigma(x: u128) -> u128 {
    let hi = x >> 64;
    let lo = x & (u64::MAX as u128);
    ((hi ^ lo) << 64) | hi
}

/// The correlation-robust hash `H`.
#[derive(Clone)]
pub(crate) struct Ccr {
    aes: AesBatch,
}

impl Ccr {
    pub(crate) fn new() -> Self {
        Ccr {
            aes: AesBatch::new(Block::from_bytes(FIXED_KEY)),
        }
    }

    /// `x ← H(x)` for every block of `x` (one batch AES call: the kernel
    /// keeps the key schedule in registers and pipelines 8–16 blocks).
    #[inline]
    pub(crate) fn hash_in_place(&self, x: &mut [Block]) {
        for b in x.iter_mut() {
            *b = Block(sigma(b.0));
        }
        // π(σ(x)) ⊕ σ(x).
        self.aes.hash_in_place(x);
    }

    /// `H` of each of `x[..len]`.
    #[cfg(test)]
    pub(crate) fn hash_batch(&self, x: &[Block; BATCH], len: usize) -> [Block; BATCH] {
        let mut out = *x;
        self.hash_in_place(&mut out[..len]);
        out
    }

    /// `H(x)` for one block.
    #[cfg(test)]
    pub(crate) fn hash(&self, x: Block) -> Block {
        self.hash_batch(&[x; BATCH], 1)[0]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sigma_is_orthomorphism_on_samples() {
        // σ linear; σ(x) ⊕ x = (x_lo ‖ x_hi ⊕ x_lo) is invertible: check both
        // maps are injective on the basis (so bijective, being linear).
        let mut img = Vec::new();
        let mut img2 = Vec::new();
        for i in 0..128 {
            let e = 1u128 << i;
            img.push(sigma(e));
            img2.push(sigma(e) ^ e);
        }
        assert_eq!(rank(img), 128);
        assert_eq!(rank(img2), 128);
    }

    fn rank(mut rows: Vec<u128>) -> usize {
        let mut r = 0;
        for bit in 0..128 {
            if let Some(p) = (r..rows.len()).find(|&i| rows[i] >> bit & 1 == 1) {
                rows.swap(r, p);
                for i in 0..rows.len() {
                    if i != r && rows[i] >> bit & 1 == 1 {
                        rows[i] ^= rows[r];
                    }
                }
                r += 1;
            }
        }
        r
    }

    #[test]
    fn batch_matches_single() {
        let c = Ccr::new();
        let xs: [Block; BATCH] =
            core::array::from_fn(|i| Block((i as u128 + 1) * 0x0123_4567_89ab_cdef));
        let h = c.hash_batch(&xs, BATCH);
        for i in 0..BATCH {
            assert_eq!(h[i], c.hash(xs[i]));
            assert_ne!(h[i], xs[i]);
        }
        // Known answers from the `aes` crate: σ(0) = 0, so H(0) = AES_k(0);
        // and H(x) = AES_k(σ(x)) ⊕ σ(x) on the sample inputs.
        use aes::cipher::{BlockEncrypt, KeyInit};
        let aes = aes::Aes128::new(&FIXED_KEY.into());
        let mut b = aes::Block::default();
        aes.encrypt_block(&mut b);
        assert_eq!(c.hash(Block::ZERO).0, u128::from_le_bytes(b.into()));
        for x in xs {
            let s = sigma(x.0);
            let mut b: aes::Block = s.to_le_bytes().into();
            aes.encrypt_block(&mut b);
            assert_eq!(c.hash(x).0, u128::from_le_bytes(b.into()) ^ s);
        }
    }
}
