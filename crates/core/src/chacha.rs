//! ChaCha keystreams read from any byte offset: ChaCha8 under a public
//! key, ChaCha12 under a secret one.
//!
//! This module owns the ChaCha streams that must be cheap on every target:
//!
//! - [`ChaCha8Stream`]: public randomness, the columns of Ferret's LPN code
//!   (`webproof_ferret`'s `lpn` module), ChaCha8 keystream words under a
//!   key both parties derive from the parameter set. Nothing secret goes
//!   through it.
//! - [`ChaCha12Stream`]: the pseudo-random generator behind
//!   [`crate::Prg`], keyed by secret seeds (OT extension rows, GGM trees,
//!   private randomness) or by challenge seeds. Twelve rounds, the margin
//!   the `rand` crates keep for their keyed generator, where eight suffice
//!   for a public matrix that only has to look random.
//!
//! A stream is the IETF ChaCha of the `chacha20` crate with a zero nonce:
//! block `i` (32-bit counter) covers bytes `64 i .. 64 i + 64`. Natively
//! that crate computes it (AVX2 or SSE2, picked at run time); on wasm32
//! with SIMD128, where the crate has only scalar code, four blocks per
//! step in the `simd128` module's kernel, which
//! [`crate::kernels::self_test`] checks against the crate.

use chacha20::cipher::{KeyIvInit, StreamCipher, StreamCipherSeek};
use chacha20::{ChaCha12, ChaCha8};

/// ChaCha with `2 * DOUBLE_ROUNDS` rounds (8 or 12), a key and nonce zero.
#[derive(Clone, Debug)]
pub struct ChaChaStream<const DOUBLE_ROUNDS: usize> {
    key: [u8; 32],
}

/// ChaCha8, for public keys.
pub type ChaCha8Stream = ChaChaStream<4>;
/// ChaCha12, for secret keys.
pub type ChaCha12Stream = ChaChaStream<6>;

impl<const DOUBLE_ROUNDS: usize> ChaChaStream<DOUBLE_ROUNDS> {
    /// The stream of `key`.
    pub fn new(key: [u8; 32]) -> Self {
        const { assert!(DOUBLE_ROUNDS == 4 || DOUBLE_ROUNDS == 6) };
        ChaChaStream { key }
    }

    /// `out` ← keystream bytes `offset .. offset + out.len()`.
    ///
    /// Panics if the range passes the 32-bit block counter (256 GiB).
    pub fn fill(&self, offset: u64, out: &mut [u8]) {
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        self.fill_simd128(offset, out);
        #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
        self.fill_crate(offset, out);
    }

    /// [`Self::fill`] by the `chacha20` crate (the reference).
    pub(crate) fn fill_crate(&self, offset: u64, out: &mut [u8]) {
        fn apply<C: KeyIvInit + StreamCipher + StreamCipherSeek>(
            key: &[u8; 32],
            offset: u64,
            out: &mut [u8],
        ) {
            let mut stream =
                C::new_from_slices(key, &[0u8; 12]).expect("ChaCha key and nonce sizes");
            stream.seek(offset);
            out.fill(0);
            stream.apply_keystream(out);
        }
        match DOUBLE_ROUNDS {
            4 => apply::<ChaCha8>(&self.key, offset, out),
            _ => apply::<ChaCha12>(&self.key, offset, out),
        }
    }

    /// [`Self::fill`] four blocks at a time.
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    pub(crate) fn fill_simd128(&self, offset: u64, out: &mut [u8]) {
        let end = offset
            .checked_add(out.len() as u64)
            .filter(|&e| e.div_ceil(64) <= 1 << 32)
            .expect("ChaCha stream: range beyond the 32-bit block counter");
        let key: [u32; 8] = core::array::from_fn(|i| {
            u32::from_le_bytes(self.key[4 * i..4 * i + 4].try_into().unwrap())
        });
        let (mut pos, mut done) = (offset, 0usize);
        while pos < end {
            let block = pos / 64;
            let skip = (pos - 64 * block) as usize;
            let n = (256 - skip).min((end - pos) as usize);
            if skip == 0 && n == 256 {
                // Whole groups straight into `out`.
                let dst: &mut [u8; 256] = (&mut out[done..done + 256]).try_into().unwrap();
                crate::simd128::chacha_x4::<DOUBLE_ROUNDS>(&key, block as u32, dst);
            } else {
                let mut group = [0u8; 256];
                crate::simd128::chacha_x4::<DOUBLE_ROUNDS>(&key, block as u32, &mut group);
                out[done..done + n].copy_from_slice(&group[skip..skip + n]);
            }
            done += n;
            pos += n as u64;
        }
    }
}
