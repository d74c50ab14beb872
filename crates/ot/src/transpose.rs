//! Bit-matrix transposition for OT extension.
//!
//! The extension computes its output column by column (one bit of every COT
//! per column) and hands out rows (one 128-bit block per COT). This module
//! owns that change of layout and nothing else.

/// Transpose a 128x128 bit matrix in place: afterwards bit `c` of `m[r]`
/// is what bit `r` of `m[c]` was before.
///
/// Recursive block swapping (7 rounds of masked swaps), branch-free and
/// portable, so it also runs in WebAssembly.
pub fn transpose128(m: &mut [u128; 128]) {
    let mut width = 64usize;
    let mut mask: u128 = u64::MAX as u128;
    while width != 0 {
        let mut base = 0;
        while base < 128 {
            for r in base..base + width {
                let t = ((m[r] >> width) ^ m[r + width]) & mask;
                m[r + width] ^= t;
                m[r] ^= t << width;
            }
            base += 2 * width;
        }
        width >>= 1;
        mask ^= mask << width;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    #[test]
    #[allow(clippy::needless_range_loop)]
    fn matches_naive_transpose() {
        let mut rng = rand::thread_rng();
        for _ in 0..20 {
            let mut m = [0u128; 128];
            for r in m.iter_mut() {
                *r = rng.gen();
            }
            let orig = m;
            transpose128(&mut m);
            for r in 0..128 {
                for c in 0..128 {
                    assert_eq!((m[r] >> c) & 1, (orig[c] >> r) & 1, "r={r} c={c}");
                }
            }
            transpose128(&mut m);
            assert_eq!(m, orig);
        }
    }
}
