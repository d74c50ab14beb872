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

    /// Add a reduced value.
    #[inline(always)]
    pub fn add_block(&mut self, b: Block) {
        self.lo ^= b.0;
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

    /// The next `n <= CHI_CHUNK` challenges at once: the same values as
    /// `n` calls of [`Self::next_chi`]. Only at a chunk boundary (a fresh
    /// stream, then after every full chunk).
    pub fn next_chunk(&mut self, n: usize) -> &[Block] {
        assert!(
            n <= CHI_CHUNK && self.pos == CHI_CHUNK,
            "challenge chunks start at a chunk boundary"
        );
        self.prg.fill_blocks(&mut self.buf);
        self.pos = n;
        &self.buf[..n]
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
        acc.add_block(v[4]);
        assert_eq!(acc.value(), v[0].gf_mul(v[1]) ^ v[2].gf_mul(v[3]) ^ v[4]);
    }

    #[test]
    fn chunks_are_the_stream() {
        let mut one = ChiStream::new(Block(8));
        let mut chunks = ChiStream::new(Block(8));
        let singles: Vec<Block> = (0..CHI_CHUNK + 10).map(|_| one.next_chi()).collect();
        let mut got = chunks.next_chunk(CHI_CHUNK).to_vec();
        got.extend_from_slice(chunks.next_chunk(10));
        assert_eq!(got, singles);
    }
}
