//! Arithmetic shared by both sides of the batched multiplication check:
//! unreduced GF(2^128) accumulators, challenge expansion and packing of
//! bits into field elements.

use webproof_core::{Block, Prg};

/// Challenges expanded at a time from a segment's seed.
pub const CHI_CHUNK: usize = 256;

/// A sum of carry-less products, reduced only when read.
#[derive(Clone, Copy, Debug, Default)]
pub struct Acc {
    lo: u128,
    hi: u128,
}

impl Acc {
    /// Add `a * b`.
    #[inline(always)]
    pub fn add_mul(&mut self, a: Block, b: Block) {
        let (l, h) = a.clmul(b);
        self.lo ^= l;
        self.hi ^= h;
    }

    /// Add another accumulator.
    #[inline(always)]
    pub fn add(&mut self, other: Acc) {
        self.lo ^= other.lo;
        self.hi ^= other.hi;
    }

    /// The reduced sum.
    pub fn value(self) -> Block {
        Block::reduce(self.lo, self.hi)
    }
}

/// A stream of challenges `chi_0, chi_1, ...` expanded from a seed.
pub struct ChiStream {
    prg: Prg,
    buf: [Block; CHI_CHUNK],
    pos: usize,
}

impl ChiStream {
    pub fn new(seed: Block) -> Self {
        ChiStream {
            prg: Prg::new(seed),
            buf: [Block::ZERO; CHI_CHUNK],
            pos: CHI_CHUNK,
        }
    }

    #[inline(always)]
    pub fn next_chi(&mut self) -> Block {
        if self.pos == CHI_CHUNK {
            self.prg.fill_blocks(&mut self.buf);
            self.pos = 0;
        }
        let c = self.buf[self.pos];
        self.pos += 1;
        c
    }
}

/// Multiply by `x` in GF(2^128).
#[inline(always)]
pub fn mul_x(a: Block) -> Block {
    let carry = a.0 >> 127;
    Block((a.0 << 1) ^ (carry.wrapping_neg() & 0x87))
}

/// `sum_i x^i * v_i` for `v.len() <= 128`, by Horner's rule.
pub fn pack(v: impl DoubleEndedIterator<Item = Block>) -> Block {
    v.rev().fold(Block::ZERO, |acc, b| mul_x(acc) ^ b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack_matches_powers_of_x() {
        let mut prg = Prg::new(Block(5));
        let v = prg.blocks(128);
        let direct = v.iter().enumerate().fold(Block::ZERO, |acc, (i, b)| {
            acc ^ b.gf_mul(Block::power_of_x(i))
        });
        assert_eq!(pack(v.iter().copied()), direct);
        let mut acc = Acc::default();
        acc.add_mul(v[0], v[1]);
        acc.add_mul(v[2], v[3]);
        assert_eq!(acc.value(), v[0].gf_mul(v[1]) ^ v[2].gf_mul(v[3]));
    }
}
