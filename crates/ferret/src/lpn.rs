//! The local linear code of the LPN step.
//!
//! Output `i` of an iteration is `e_i ⊕ XOR_{r < 10} u[idx(i, r)]`: column
//! `i` of the public `k × n` matrix `A` has ten ones at positions drawn from
//! the ChaCha8 keystream under a public per-iteration key (nonce zero, the
//! key from [`code_key`]):
//! the pair of columns `2q, 2q + 1` takes keystream words `20q .. 20q + 20`
//! (little-endian 32-bit words), the first ten for column `2q`. A word `w` maps
//! to `⌊w · k / 2^32⌋`, whose bias (below `k / 2^32`, i.e. < 2^-13 for the
//! largest `k`) does not matter for a random local code. A repeated index
//! simply cancels, as in the reference implementation; with `k ≥ 17,000` it
//! happens to about one column in 400.
//!
//! The matrix is never stored: columns are regenerated in batches as outputs
//! are produced, so the encoder's memory is the `k`-block secret only. The
//! same code serves both parties (the sender encodes its keys of `u`, the
//! receiver its MACs), which is what keeps the outputs correlated.
//!
//! # Where the code comes from
//! Every iteration of a session has its own code, keyed by SHA-256 of a
//! 32-byte session seed, the iteration's index and the set's shape. The
//! seed is chosen at random by the Ferret *receiver* (the ZK prover) and
//! sent to the sender in front of its first check challenge (no message
//! of its own, no round trip). Until protocol version 26 the key depended
//! on the set's shape only, so every session shared one public matrix and
//! an attacker could spread the code-only work of an attack (the linear
//! algebra of the hybrid and ISD attacks) over every webproof session.
//!
//! Why the receiver picks it, and why the sender takes it from its peer
//! although the project's rule is that nobody takes from a peer what it
//! can compute itself: the sender cannot compute this value itself. It
//! must be unpredictable before the session, and LPN protects only the
//! receiver's choice bits; the sender's `Delta` rests on the trees'
//! correlation robustness, not on LPN. A seed of the sender's, or one a
//! transcript hash the sender can grind, would let the party that LPN
//! guards against steer the code; a receiver that picks a weak code only
//! exposes its own bits. So the party whose secret is at stake chooses,
//! and the sender uses whatever it is sent.
//!
//! Why ChaCha8 and not AES: the matrix is public, so the generator needs
//! only to look random, and ChaCha's additions, rotations and XORs run at
//! full speed everywhere, while a browser has no AES instructions and its
//! bitsliced AES made these indices a fifth of a WebAssembly prover's time.
//! Natively the `chacha20` crate's vector code (AVX2 where the CPU has it)
//! keeps them a small part of the encoder.
//!
//! # Cost
//! For the large sets the secret (8 MiB for `K19_MAIN`) does not fit in a core's
//! L2, so each output costs ten cache misses to L3 and the encoder is bound
//! by how many misses a core keeps in flight, not by arithmetic: it issues
//! the loads of a column `PREFETCH` columns ahead and regenerates indices
//! in a two-batch ring so the misses never drain (each batch's keystream is
//! one call). Sorting the accesses by secret region was tried and
//! lost: with one tree's outputs per pass every line of the secret is used
//! less than once, and the bucketing costs as much as the misses it saves.

use crate::params::{LpnParams, ROW_WEIGHT};
use sha2::{Digest, Sha256};
use webproof_core::chacha::ChaCha8Stream;
use webproof_core::Block;

/// Bytes of the session's code seed (the receiver's choice, see the module docs).
pub(crate) const CODE_SEED_LEN: usize = 32;

/// The ChaCha8 key of iteration `index`'s code: SHA-256 of a domain tag,
/// the session's seed, the index and the shape of `params` (the set whose
/// columns the iteration uses, `FerretConfig::code_of`), so no two
/// iterations or sessions share a code.
pub(crate) fn code_key(seed: &[u8; CODE_SEED_LEN], index: usize, params: &LpnParams) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"webproof/ferret/lpn-code/v2");
    h.update(seed);
    h.update((index as u64).to_le_bytes());
    h.update((params.k as u64).to_le_bytes());
    h.update((params.n as u64).to_le_bytes());
    h.update(params.log_bin.to_le_bytes());
    h.finalize().into()
}

/// Columns whose indices are generated per keystream call (two batches are kept).
const BATCH: usize = 128;
/// How many columns ahead the encoder prefetches.
const PREFETCH: usize = 16;
const _: () = assert!(PREFETCH <= BATCH);
/// Keystream bytes per pair of columns (20 words for 2 × 10 indices).
const BYTES_PER_PAIR: usize = 4 * 2 * ROW_WEIGHT;

/// Encoder for one parameter set.
#[derive(Clone)]
pub(crate) struct LpnEncoder {
    /// The code's public ChaCha8 stream.
    stream: ChaCha8Stream,
    k: u64,
    /// The public key (kept for the reference definition in tests).
    #[cfg(test)]
    key: [u8; 32],
}

impl LpnEncoder {
    /// The code of iteration `index` of the session with code seed `seed`,
    /// with the columns of `params` (see [`code_key`]).
    pub(crate) fn new(seed: &[u8; CODE_SEED_LEN], index: usize, params: &LpnParams) -> Self {
        let key = code_key(seed, index, params);
        LpnEncoder {
            stream: ChaCha8Stream::new(key),
            k: params.k as u64,
            #[cfg(test)]
            key,
        }
    }

    /// The ten indices of columns `2q` and `2q + 1` for `q` in `q0..q0 + pairs`.
    #[inline]
    fn indices(&self, q0: usize, pairs: usize, idx: &mut [u32; BATCH * ROW_WEIGHT]) {
        let mut bytes = [0u8; BATCH / 2 * BYTES_PER_PAIR];
        let bytes = &mut bytes[..pairs * BYTES_PER_PAIR];
        self.stream.fill((q0 * BYTES_PER_PAIR) as u64, bytes);
        for (i, w) in bytes.chunks_exact(4).enumerate() {
            let word = u32::from_le_bytes(w.try_into().expect("4 bytes"));
            idx[i] = ((word as u64 * self.k) >> 32) as u32;
        }
    }

    /// `out[j] ^= (column start + j of A) · secret` for every `j`.
    ///
    /// `start` must be even (trees have an even number of leaves) and
    /// `secret.len()` must be `k`.
    pub(crate) fn encode(&self, start: usize, secret: &[Block], out: &mut [Block]) {
        self.encode_with(start, secret, out, None)
    }

    /// [`encode`](Self::encode), then, if `normalise` is `Some(Delta)`,
    /// `out[j] ^= lsb(out[j])·Delta` (the sender's move of the choice bit
    /// into the key), fused to save a pass over the outputs.
    ///
    /// The secret is larger than L2 for the big sets, so this is bound by
    /// how many cache misses are in flight: the loads of column `j +
    /// PREFETCH` are issued while column `j` is summed, and the indices come
    /// from a two-batch ring so that the prefetches run on across batch
    /// boundaries (the next batch's AES overlaps the current loads).
    pub(crate) fn encode_with(
        &self,
        start: usize,
        secret: &[Block],
        out: &mut [Block],
        normalise: Option<Block>,
    ) {
        assert!(start & 1 == 0, "columns are generated in pairs");
        assert_eq!(secret.len() as u64, self.k, "secret of the wrong length");
        let n = out.len();
        let batches = n.div_ceil(BATCH);
        // Ring of two batches of column indices: batch `c` in half `c & 1`.
        let mut idx = [[0u32; BATCH * ROW_WEIGHT]; 2];
        let fill = |c: usize, half: &mut [u32; BATCH * ROW_WEIGHT]| {
            let cols = (n - c * BATCH).min(BATCH);
            self.indices((start + c * BATCH) / 2, cols.div_ceil(2), half);
        };
        fill(0, &mut idx[0]);
        if batches > 1 {
            fill(1, &mut idx[1]);
        }
        let column = |idx: &[[u32; BATCH * ROW_WEIGHT]; 2], j: usize| -> [u32; ROW_WEIGHT] {
            let r = (j % BATCH) * ROW_WEIGHT;
            idx[(j / BATCH) & 1][r..r + ROW_WEIGHT]
                .try_into()
                .expect("row")
        };
        for j in 0..PREFETCH.min(n) {
            prefetch_column(secret, &column(&idx, j));
        }
        let (delta, fix) = match normalise {
            Some(d) => (d, true),
            None => (Block::ZERO, false),
        };
        // `j` also names the column and the prefetch distance, not only `out[j]`.
        #[allow(clippy::needless_range_loop)]
        for c in 0..batches {
            let lo = c * BATCH;
            let hi = (lo + BATCH).min(n);
            for j in lo..hi {
                if j + PREFETCH < n {
                    prefetch_column(secret, &column(&idx, j + PREFETCH));
                }
                let mut acc = out[j];
                for i in column(&idx, j) {
                    // SAFETY: `i = ⌊w·k / 2^32⌋ < k = secret.len()` for a
                    // 32-bit `w` (see `indices`; length asserted above).
                    #[allow(unsafe_code)]
                    let x = unsafe { *secret.get_unchecked(i as usize) };
                    acc ^= x;
                }
                if fix {
                    acc ^= Block::select(acc.lsb(), delta);
                }
                out[j] = acc;
            }
            // Batch `c` is done and prefetches reach at most into batch
            // `c + 1` (PREFETCH <= BATCH): its half takes batch `c + 2`.
            if c + 2 < batches {
                fill(c + 2, &mut idx[c & 1]);
            }
        }
    }

    /// The indices of one column, by the definition (for tests): the
    /// keystream is read from its start (no seek), in 64-byte blocks.
    #[cfg(test)]
    pub(crate) fn column(&self, col: usize) -> Vec<usize> {
        use chacha20::cipher::{KeyIvInit, StreamCipher};
        use chacha20::ChaCha8;
        let mut stream = ChaCha8::new(&self.key.into(), &[0u8; 12].into());
        let first = col * 4 * ROW_WEIGHT;
        let mut bytes = vec![0u8; (first + 4 * ROW_WEIGHT).div_ceil(64) * 64];
        for block in bytes.chunks_mut(64) {
            stream.apply_keystream(block);
        }
        bytes[first..first + 4 * ROW_WEIGHT]
            .chunks_exact(4)
            .map(|w| u32::from_le_bytes(w.try_into().unwrap()))
            .map(|w| ((w as u64 * self.k) >> 32) as usize)
            .collect()
    }
}

/// Hint the cache about the entries of one column (no-op off x86_64).
#[inline(always)]
fn prefetch_column(secret: &[Block], column: &[u32]) {
    #[cfg(target_arch = "x86_64")]
    for &i in column {
        if let Some(b) = secret.get(i as usize) {
            // SAFETY: `_mm_prefetch` only hints the cache and never faults;
            // the pointer comes from a live reference anyway. SSE is part of
            // the x86_64 baseline.
            #[allow(unsafe_code)]
            unsafe {
                use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
                _mm_prefetch::<_MM_HINT_T0>((b as *const Block).cast::<i8>());
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (secret, column);
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    #[test]
    fn encode_matches_column_definition() {
        let params = LpnParams::new(1 << 12, 1000, 16, 8);
        let enc = LpnEncoder::new(&[7; CODE_SEED_LEN], 0, &params);
        let mut rng = rand_chacha::ChaCha12Rng::seed_from_u64(3);
        let secret: Vec<Block> = (0..1000).map(|_| Block(rng.gen())).collect();
        let start = 256;
        let mut out: Vec<Block> = (0..300).map(|_| Block(rng.gen())).collect();
        let before = out.clone();
        enc.encode(start, &secret, &mut out);
        for j in 0..out.len() {
            let col = enc.column(start + j);
            assert_eq!(col.len(), ROW_WEIGHT);
            let expect = col.iter().fold(before[j], |a, &i| a ^ secret[i]);
            assert_eq!(out[j], expect);
        }
        // Chunked encoding gives the same as one call.
        let mut a = before.clone();
        enc.encode(start, &secret, &mut a[..100]);
        enc.encode(start + 100, &secret, &mut a[100..]);
        assert_eq!(a, out);
    }

    /// Lengths around the batch and prefetch boundaries (ring refills, a
    /// partial last batch, fewer columns than the prefetch distance), and
    /// the fused normalisation against a separate pass.
    #[test]
    fn ring_boundaries_and_normalisation() {
        let params = LpnParams::new(1 << 12, 777, 16, 8);
        let enc = LpnEncoder::new(&[7; CODE_SEED_LEN], 0, &params);
        let mut rng = rand_chacha::ChaCha12Rng::seed_from_u64(4);
        let secret: Vec<Block> = (0..777).map(|_| Block(rng.gen())).collect();
        let delta = Block(rng.gen::<u128>() | 1);
        for len in [0, 2, 10, 16, 18, 126, 128, 130, 256, 258, 383, 384, 1001] {
            let start = 2 * rng.gen_range(0..1000);
            let before: Vec<Block> = (0..len).map(|_| Block(rng.gen())).collect();
            let mut out = before.clone();
            enc.encode(start, &secret, &mut out);
            for j in 0..len {
                let expect = enc
                    .column(start + j)
                    .iter()
                    .fold(before[j], |a, &i| a ^ secret[i]);
                assert_eq!(out[j], expect, "len {len} column {j}");
            }
            let mut norm = before.clone();
            enc.encode_with(start, &secret, &mut norm, Some(delta));
            for j in 0..len {
                assert_eq!(norm[j], out[j] ^ Block::select(out[j].lsb(), delta));
                assert!(!norm[j].lsb());
            }
        }
    }

    /// Each session seed and each iteration gets its own code; the same
    /// inputs give the same code on both sides.
    #[test]
    fn codes_are_per_session_and_iteration() {
        let params = LpnParams::new(1 << 12, 1000, 16, 8);
        let col =
            |seed: u8, index| LpnEncoder::new(&[seed; CODE_SEED_LEN], index, &params).column(5);
        assert_eq!(col(1, 0), col(1, 0));
        assert_ne!(col(1, 0), col(2, 0));
        assert_ne!(col(1, 0), col(1, 1));
        let other = LpnParams::new(1 << 13, 1000, 32, 8);
        assert_ne!(
            code_key(&[1; 32], 0, &params),
            code_key(&[1; 32], 0, &other)
        );
    }

    #[test]
    fn indices_spread_over_the_secret() {
        let params = LpnParams::new(1 << 16, 5000, 256, 8);
        let enc = LpnEncoder::new(&[7; CODE_SEED_LEN], 0, &params);
        let mut hits = vec![0u32; 5000];
        for col in 0..20_000 {
            for i in enc.column(col) {
                assert!(i < 5000);
                hits[i] += 1;
            }
        }
        // 40 expected hits per index; a column generator stuck on part of the
        // range would leave many indices unused.
        let unused = hits.iter().filter(|&&h| h == 0).count();
        assert!(unused < 5, "{unused} indices never used");
        assert!(*hits.iter().max().unwrap() < 90);
    }
}
