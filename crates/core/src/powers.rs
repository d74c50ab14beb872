//! Sums `sum_l beta^l x_l` in GF(2^128) for one `beta` and many vectors
//! `x`: a polynomial evaluated at a fixed point.
//!
//! This module owns the fold of Ferret's consistency check (`webproof_ferret`'s
//! `check`), whose per-leaf challenges are powers of one random element.
//! With a carry-less multiply instruction it is an inner product with the
//! precomputed powers. In the SIMD128 build, where each product costs
//! dozens of integer multiplies, it is Horner's rule with `beta^4` as a
//! byte-wise linear map (`crate::simd128::ConstMul`, wasm32 only): four
//! chains, 16 table lookups per term. Either way the value is the same.
//!
//! The table lookups are indexed by bytes of the summed values. Like the
//! prover's other tables (the GF(2^8) inverses of `webproof_circuits`), they
//! are not constant-time against an observer of the same machine's caches;
//! nothing of them reaches the peer.

use crate::block::inner_product;
use crate::Block;

/// `beta^0, ..., beta^(n-1)` and what [`Self::eval`] needs.
pub struct PowerSum {
    powers: Vec<Block>,
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    fourth: crate::simd128::ConstMul,
}

impl PowerSum {
    /// The powers of `beta` up to `beta^(n-1)`.
    pub fn new(beta: Block, n: usize) -> Self {
        let mut powers = Vec::with_capacity(n);
        let mut p = Block::ONE;
        for _ in 0..n {
            powers.push(p);
            p = p.gf_mul(beta);
        }
        PowerSum {
            #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
            fourth: crate::simd128::ConstMul::new(if n > 4 {
                powers[4].0
            } else {
                beta.gf_mul(beta).gf_mul(beta.gf_mul(beta)).0
            }),
            powers,
        }
    }

    /// `beta^l` for `l < n`.
    pub fn powers(&self) -> &[Block] {
        &self.powers
    }

    /// `sum_l beta^l x[l]`; `x` at most `n` long.
    pub fn eval(&self, x: &[Block]) -> Block {
        assert!(x.len() <= self.powers.len(), "more terms than powers");
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        if x.len() >= 64 && x.len().is_multiple_of(4) {
            let c = self.fourth.horner4(x);
            return (0..4).fold(Block::ZERO, |s, r| s ^ self.powers[r].gf_mul(Block(c[r])));
        }
        inner_product(&self.powers[..x.len()], x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Prg;

    #[test]
    fn eval_is_the_polynomial_at_beta() {
        let mut prg = Prg::new(Block(3));
        let beta = prg.next_block();
        let ps = PowerSum::new(beta, 256);
        for len in [0, 1, 4, 63, 64, 68, 256] {
            let x = prg.blocks(len);
            let horner = x
                .iter()
                .rev()
                .fold(Block::ZERO, |acc, v| acc.gf_mul(beta) ^ *v);
            assert_eq!(ps.eval(&x), horner, "length {len}");
        }
        assert_eq!(ps.powers()[3], beta.gf_mul(beta).gf_mul(beta));
    }
}
