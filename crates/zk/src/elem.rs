//! Authenticated GF(2^128) elements.
//!
//! An element packs up to 128 authenticated bits as `X = sum x^i b_i`, with
//! MAC `M_X = sum x^i M_i` and key `K_X = sum x^i K_i`, so `M_X = K_X + X Delta`
//! still holds. Sums and products with public constants are local; a
//! product of two elements commits the 128 bits of the result and adds one
//! term to the same batched check as AND gates (GHASH and polynomial
//! identities then cost 128 COTs per multiplication instead of a Boolean
//! multiplier circuit).

use core::ops::Add;
use webproof_core::Block;

/// An authenticated field element held by the prover.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProverElem {
    pub(crate) value: Block,
    pub(crate) mac: Block,
}

/// An authenticated field element held by the verifier (its key).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VerifierElem {
    pub(crate) key: Block,
}

impl ProverElem {
    /// The element's value.
    pub fn value(self) -> Block {
        self.value
    }
    /// `c * self` for a public constant `c` (free).
    pub fn scale(self, c: Block) -> ProverElem {
        ProverElem {
            value: self.value.gf_mul(c),
            mac: self.mac.gf_mul(c),
        }
    }
}

impl VerifierElem {
    /// `c * self` for a public constant `c` (free).
    pub fn scale(self, c: Block) -> VerifierElem {
        VerifierElem {
            key: self.key.gf_mul(c),
        }
    }
}

/// Field addition (free): XOR in characteristic 2.
#[allow(clippy::suspicious_arithmetic_impl)]
impl Add for ProverElem {
    type Output = ProverElem;
    fn add(self, other: ProverElem) -> ProverElem {
        ProverElem {
            value: self.value ^ other.value,
            mac: self.mac ^ other.mac,
        }
    }
}

/// Field addition (free): XOR in characteristic 2.
#[allow(clippy::suspicious_arithmetic_impl)]
impl Add for VerifierElem {
    type Output = VerifierElem;
    fn add(self, other: VerifierElem) -> VerifierElem {
        VerifierElem {
            key: self.key ^ other.key,
        }
    }
}
