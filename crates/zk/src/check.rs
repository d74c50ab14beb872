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

/// The weights `chi^1, chi^2, chi^3, ...` of one segment's terms: powers of
/// one challenge `chi`, the first block the segment's seed expands to.
///
/// Powers instead of independent weights: the weighted error sum of a
/// segment is then a polynomial in `chi` of degree at most the segment's
/// term count `n`, nonzero if any error is, so it vanishes with
/// probability at most `n / 2^128` (Schwartz–Zippel). The first weight is
/// `chi`, not 1: a polynomial without constant term cannot cancel, at a
/// fresh `chi`, what earlier segments left in the sum, whatever the
/// prover learnt of their challenges. What it buys: no PRG block per term,
/// and where there is no carry-less multiply instruction the sums are
/// Horner's rule with `chi^4` as a table lookup ([`Self::fold_chunk`]).
pub struct ChiStream {
    /// `chi^4`: each of four interleaved chains steps by it, so the
    /// products of a refill do not wait on each other.
    step: Block,
    /// `chi^CHI_CHUNK`: a chunk's first weights from the previous chunk's.
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    leap: Block,
    /// The weights of the next chunk's first four terms.
    head: [Block; 4],
    /// `chi^4` as a byte-wise linear map, built on the first fold.
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    step_map: Option<webproof_core::simd128::ConstMul>,
    buf: [Block; CHI_CHUNK],
    pos: usize,
}

impl ChiStream {
    pub fn new(seed: Block) -> Self {
        let chi = Prg::new(seed).next_block();
        let mut head = [chi; 4];
        for r in 1..4 {
            head[r] = head[r - 1].gf_mul(chi);
        }
        let step = head[3];
        ChiStream {
            step,
            #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
            leap: {
                // chi^256 = (chi^4)^64: six squarings.
                const _: () = assert!(CHI_CHUNK == 256);
                (0..6).fold(step, |l, _| l.gf_mul(l))
            },
            head,
            #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
            step_map: None,
            buf: [Block::ZERO; CHI_CHUNK],
            pos: CHI_CHUNK,
        }
    }

    /// The next chunk's weights into `buf`.
    fn refill(&mut self) {
        self.buf[..4].copy_from_slice(&self.head);
        for i in 4..CHI_CHUNK {
            self.buf[i] = self.buf[i - 4].gf_mul(self.step);
        }
        for r in 0..4 {
            self.head[r] = self.buf[CHI_CHUNK - 4 + r].gf_mul(self.step);
        }
        self.pos = 0;
    }

    #[inline(always)]
    pub fn next_chi(&mut self) -> Block {
        if self.pos == CHI_CHUNK {
            self.refill();
        }
        let c = self.buf[self.pos];
        self.pos += 1;
        c
    }

    /// The next `n <= CHI_CHUNK` weights at once: the same values as `n`
    /// calls of [`Self::next_chi`]. Only at a chunk boundary (a fresh
    /// stream, then after every full chunk).
    pub fn next_chunk(&mut self, n: usize) -> &[Block] {
        assert!(
            n <= CHI_CHUNK && self.pos == CHI_CHUNK,
            "challenge chunks start at a chunk boundary"
        );
        self.refill();
        self.pos = n;
        &self.buf[..n]
    }

    /// `(sum w_i x0_i, sum w_i x1_i)` over the next `x0.len()` weights `w_i`
    /// (`x1` as long, at most `CHI_CHUNK`): what inner products with
    /// [`Self::next_chunk`] give, at a chunk boundary. Where there is no
    /// carry-less multiply instruction, four Horner chains in `chi^4`
    /// (16 table lookups per term instead of two software products and a
    /// weight per term). A chunk shorter than `CHI_CHUNK` is a segment's
    /// last: the stream is spent after it.
    pub fn fold_chunk(&mut self, x0: &[Block], x1: &[Block]) -> (Block, Block) {
        assert_eq!(x0.len(), x1.len(), "fold of unequal lengths");
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        if x0.len() >= 64 && x0.len().is_multiple_of(4) {
            assert!(
                x0.len() <= CHI_CHUNK && self.pos == CHI_CHUNK,
                "challenge chunks start at a chunk boundary"
            );
            let step = self.step;
            let map = self
                .step_map
                .get_or_insert_with(|| webproof_core::simd128::ConstMul::new(step.0));
            let (c0, c1) = (map.horner4(x0), map.horner4(x1));
            let mut s = (Block::ZERO, Block::ZERO);
            for r in 0..4 {
                s.0 ^= self.head[r].gf_mul(Block(c0[r]));
                s.1 ^= self.head[r].gf_mul(Block(c1[r]));
                self.head[r] = self.head[r].gf_mul(self.leap);
            }
            return s;
        }
        let w = self.next_chunk(x0.len());
        (
            webproof_core::block::inner_product(w, x0),
            webproof_core::block::inner_product(w, x1),
        )
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

    #[test]
    fn weights_are_the_powers_of_one_challenge() {
        let chi = Prg::new(Block(8)).next_block();
        let mut s = ChiStream::new(Block(8));
        let mut p = chi;
        for i in 0..3 * CHI_CHUNK + 5 {
            assert_eq!(s.next_chi(), p, "weight {i}");
            p = p.gf_mul(chi);
        }
    }

    #[test]
    fn folds_are_inner_products_with_the_weights() {
        let mut prg = Prg::new(Block(9));
        let x0 = prg.blocks(2 * CHI_CHUNK + 68);
        let x1 = prg.blocks(x0.len());
        let mut weights = ChiStream::new(Block(10));
        let mut folds = ChiStream::new(Block(10));
        for (a, b) in x0.chunks(CHI_CHUNK).zip(x1.chunks(CHI_CHUNK)) {
            let w = weights.next_chunk(a.len()).to_vec();
            let want = (
                webproof_core::block::inner_product(&w, a),
                webproof_core::block::inner_product(&w, b),
            );
            assert_eq!(folds.fold_chunk(a, b), want);
        }
    }
}
