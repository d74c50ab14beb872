//! ChaCha8 keystream under a public key, read from any byte offset.
//!
//! This module owns public randomness that must be cheap on every target:
//! the columns of Ferret's LPN code (`webproof_ferret`'s `lpn` module) are
//! ChaCha8 keystream words under a key both parties derive from the
//! parameter set. Nothing secret goes through it.
//!
//! The stream is the IETF ChaCha8 of the `chacha20` crate with a zero
//! nonce: block `i` (32-bit counter) covers bytes `64 i .. 64 i + 64`.
//! Natively that crate computes it (AVX2 or SSE2, picked at run time); on
//! wasm32 with SIMD128, where the crate has only scalar code, four blocks
//! per step in the `simd128` module's kernel, which
//! [`crate::kernels::self_test`] checks against the crate.

use chacha20::cipher::{KeyIvInit, StreamCipher, StreamCipherSeek};
use chacha20::ChaCha8;

/// ChaCha8 with a public key and nonce zero.
#[derive(Clone, Debug)]
pub struct ChaCha8Stream {
    key: [u8; 32],
}

impl ChaCha8Stream {
    /// The stream of `key`.
    pub fn new(key: [u8; 32]) -> Self {
        ChaCha8Stream { key }
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
        let mut stream = ChaCha8::new(&self.key.into(), &[0u8; 12].into());
        stream.seek(offset);
        out.fill(0);
        stream.apply_keystream(out);
    }

    /// [`Self::fill`] four blocks at a time.
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    pub(crate) fn fill_simd128(&self, offset: u64, out: &mut [u8]) {
        let end = offset
            .checked_add(out.len() as u64)
            .filter(|&e| e.div_ceil(64) <= 1 << 32)
            .expect("ChaCha8 stream: range beyond the 32-bit block counter");
        let key: [u32; 8] = core::array::from_fn(|i| {
            u32::from_le_bytes(self.key[4 * i..4 * i + 4].try_into().unwrap())
        });
        let (mut pos, mut done) = (offset, 0usize);
        while pos < end {
            let block = pos / 64;
            let group = crate::simd128::chacha8x4(&key, block as u32);
            let skip = (pos - 64 * block) as usize;
            let n = (group.len() - skip).min((end - pos) as usize);
            out[done..done + n].copy_from_slice(&group[skip..skip + n]);
            done += n;
            pos += n as u64;
        }
    }
}
