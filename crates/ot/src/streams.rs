//! Many AES-CTR seed streams advanced in lockstep: the PRG expansion of the
//! SoftSpokenOT leaf seeds.
//!
//! Stream `i` is `AES_{seed_i}(0), AES_{seed_i}(1), ...`, the same stream as
//! [`webproof_core::Prg`] keyed by the seed. All streams of one party are
//! consumed at the same pace, so one counter serves them all; each stream
//! then costs one batch counter-mode call of
//! [`webproof_core::prg::AesBatch`] (pipelined AES-NI / VAES natively, the
//! bitsliced SIMD128 kernel in the browser, where the `aes` crate's
//! fixsliced software ran at a sixth of its speed and took a fifth of a
//! browser proof).

use webproof_core::prg::AesBatch;
use webproof_core::Block;

/// One AES block as the `aes` crate sees it.
pub type AesBlock = aes::Block;

/// Lockstep AES-CTR streams.
pub struct Streams {
    ciphers: Vec<AesBatch>,
    counter: u128,
    /// Positions prepared by [`Streams::begin`].
    prepared: usize,
}

impl Streams {
    /// One stream per seed, all at position 0.
    pub fn new(seeds: impl IntoIterator<Item = Block>) -> Self {
        Streams {
            ciphers: seeds.into_iter().map(AesBatch::new).collect(),
            counter: 0,
            prepared: 0,
        }
    }

    /// Number of streams.
    pub fn len(&self) -> usize {
        self.ciphers.len()
    }

    /// Whether there are no streams.
    pub fn is_empty(&self) -> bool {
        self.ciphers.is_empty()
    }

    /// Prepare the next `b` positions; call [`Streams::fill`] for any streams,
    /// then [`Streams::advance`].
    pub fn begin(&mut self, b: usize) {
        self.prepared = b;
    }

    /// Write the prepared `b` blocks of stream `first + i` to
    /// `out[i*b..(i+1)*b]` for every `i < out.len() / b`.
    pub fn fill(&self, first: usize, out: &mut [AesBlock]) {
        let b = self.prepared;
        if b == 0 {
            return;
        }
        let mut blocks = vec![Block::ZERO; b];
        for (c, dst) in self.ciphers[first..].iter().zip(out.chunks_exact_mut(b)) {
            c.encrypt_counter(self.counter, &mut blocks);
            for (d, x) in dst.iter_mut().zip(&blocks) {
                *d = AesBlock::from(x.to_bytes());
            }
        }
    }

    /// Move every stream past the prepared positions.
    pub fn advance(&mut self) {
        self.counter += self.prepared as u128;
        self.prepared = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use webproof_core::Prg;

    #[test]
    fn same_stream_as_prg() {
        let seeds = [Block(3), Block(1 << 100), Block(u128::MAX)];
        let mut s = Streams::new(seeds);
        let mut got = vec![Vec::new(); 3];
        for b in [5usize, 64, 1] {
            s.begin(b);
            let mut out = vec![AesBlock::default(); 3 * b];
            s.fill(0, &mut out);
            s.advance();
            for (i, chunk) in out.chunks(b).enumerate() {
                got[i].extend(chunk.iter().map(|x| Block::from_bytes((*x).into())));
            }
        }
        for (i, seed) in seeds.iter().enumerate() {
            assert_eq!(got[i], Prg::new(*seed).blocks(70));
        }
        // Filling from an offset picks the right streams.
        s.begin(2);
        let mut out = vec![AesBlock::default(); 4];
        s.fill(1, &mut out);
        let mut p = Prg::new(seeds[2]);
        p.blocks(70);
        assert_eq!(Block::from_bytes(out[2].into()), p.next_block());
    }
}
