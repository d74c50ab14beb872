//! Many seed streams advanced in lockstep: the PRG expansion of the
//! SoftSpokenOT leaf seeds.
//!
//! Stream `i` is the stream of [`webproof_core::Prg`] keyed by `seed_i`
//! (ChaCha12, see [`webproof_core::prg`]). All streams of one party are
//! consumed at the same pace, so one position serves them all; each stream
//! then costs one keystream read per step (the `chacha20` crate's AVX2 code
//! natively, four blocks per step of the SIMD128 kernel in the browser,
//! where AES counter mode had to be bitsliced and took a tenth of a
//! browser proof).

use webproof_core::chacha::ChaCha12Stream;
use webproof_core::prg::seed_stream;
use webproof_core::Block;

/// One AES block as the `aes` crate sees it (the layout the OT extension's
/// transposes work on).
pub type AesBlock = aes::Block;

/// Lockstep seed streams.
pub struct Streams {
    streams: Vec<ChaCha12Stream>,
    /// Position of every stream, in blocks.
    counter: u64,
    /// Positions prepared by [`Streams::begin`].
    prepared: usize,
}

impl Streams {
    /// One stream per seed, all at position 0.
    pub fn new(seeds: impl IntoIterator<Item = Block>) -> Self {
        Streams {
            streams: seeds.into_iter().map(seed_stream).collect(),
            counter: 0,
            prepared: 0,
        }
    }

    /// Number of streams.
    pub fn len(&self) -> usize {
        self.streams.len()
    }

    /// Whether there are no streams.
    pub fn is_empty(&self) -> bool {
        self.streams.is_empty()
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
        let mut bytes = vec![0u8; 16 * b];
        for (stream, dst) in self.streams[first..].iter().zip(out.chunks_exact_mut(b)) {
            stream.fill(16 * self.counter, &mut bytes);
            for (d, x) in dst.iter_mut().zip(bytes.chunks_exact(16)) {
                d.copy_from_slice(x);
            }
        }
    }

    /// Move every stream past the prepared positions.
    pub fn advance(&mut self) {
        self.counter += self.prepared as u64;
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
