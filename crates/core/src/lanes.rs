//! GF(2^128) arithmetic on four elements side by side ([`X4`]), for proof
//! work that repeats one computation over independent instances (the byte
//! inversions of a batch of AES blocks).
//!
//! On x86_64 with AVX-512 (F, BW) and VPCLMULQDQ (detected at run time) each
//! operation is a handful of 512-bit instructions: four carry-less products
//! per instruction, the reduction done lane-wise in the same registers, no
//! round trip through general registers. On wasm32 with SIMD128 the four
//! lanes share the vectors of `crate::simd128::clmul4` (wasm32 only). Elsewhere (older
//! CPUs, wasm32 without SIMD128) the portable [`Block`] arithmetic computes
//! the same values; tests (and [`crate::kernels::self_test`], in wasm)
//! compare them.

use crate::Block;

/// Four field elements, one per lane.
pub type X4 = [Block; 4];

/// `(sum_j c[j] * x[j], sum_j d[j] * x[j])` lane by lane: two linear
/// combinations, with constants shared by the lanes, of the same 8 rows.
#[allow(unsafe_code)]
pub fn lincomb8_pair(c: &[Block; 8], d: &[Block; 8], x: &[X4; 8]) -> (X4, X4) {
    #[cfg(target_arch = "x86_64")]
    if hw::available() {
        // SAFETY: the CPU features were detected.
        return unsafe { hw::lincomb8_pair(c, d, x) };
    }
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    return simd::lincomb8_pair(c, d, x);
    #[allow(unreachable_code)]
    portable::lincomb8_pair(c, d, x)
}

/// `(sum_j phi(c[j]) * x[j], sum_j phi(d[j]) * x[j])` lane by lane for
/// embedded bytes ([`crate::subfield`]): [`lincomb8_pair`] with constants
/// in GF(2^8), the same values. The SIMD128 build computes it in
/// coordinates over GF(2^8) (two byte-wise linear maps per row and byte
/// shuffles instead of carry-less products); elsewhere it is
/// [`lincomb8_pair`] with the embedded constants.
pub fn embed_lincomb8_pair(c: &[u8; 8], d: &[u8; 8], x: &[X4; 8]) -> (X4, X4) {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        let [p, q] = crate::simd128::embed_lincomb8_pair(c, d, &x.map(|r| r.map(|b| b.0)));
        return (p.map(Block), q.map(Block));
    }
    #[allow(unreachable_code)]
    {
        let s = crate::subfield::subfield();
        lincomb8_pair(&c.map(|b| s.embed(b)), &d.map(|b| s.embed(b)), x)
    }
}

/// `a * b` lane by lane.
#[allow(unsafe_code)]
pub fn mul(a: &X4, b: &X4) -> X4 {
    #[cfg(target_arch = "x86_64")]
    if hw::available() {
        // SAFETY: the CPU features were detected.
        return unsafe { hw::mul(a, b) };
    }
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    return simd::mul(a, b);
    #[allow(unreachable_code)]
    core::array::from_fn(|l| a[l].gf_mul(b[l]))
}

/// `a * b + c * d` lane by lane (one reduction).
#[allow(unsafe_code)]
pub fn mul_add(a: &X4, b: &X4, c: &X4, d: &X4) -> X4 {
    #[cfg(target_arch = "x86_64")]
    if hw::available() {
        // SAFETY: the CPU features were detected.
        return unsafe { hw::mul_add(a, b, c, d) };
    }
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    return simd::mul_add(a, b, c, d);
    #[allow(unreachable_code)]
    portable::mul_add(a, b, c, d)
}

/// WebAssembly SIMD128: the four lanes' products share vectors
/// (`crate::simd128::clmul4` (wasm32 only)), reductions stay scalar.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod simd {
    use super::X4;
    use crate::simd128::clmul4;
    use crate::Block;

    fn words(x: &X4) -> [u128; 4] {
        x.map(|b| b.0)
    }

    pub fn mul(a: &X4, b: &X4) -> X4 {
        clmul4(&words(a), &words(b)).map(|(lo, hi)| Block::reduce(lo, hi))
    }

    pub fn mul_add(a: &X4, b: &X4, c: &X4, d: &X4) -> X4 {
        let ab = clmul4(&words(a), &words(b));
        let cd = clmul4(&words(c), &words(d));
        core::array::from_fn(|l| Block::reduce(ab[l].0 ^ cd[l].0, ab[l].1 ^ cd[l].1))
    }

    pub fn lincomb8_pair(c: &[Block; 8], d: &[Block; 8], x: &[X4; 8]) -> (X4, X4) {
        let [acc_c, acc_d] =
            crate::simd128::lincomb8_pair(&c.map(|b| b.0), &d.map(|b| b.0), &x.map(|r| words(&r)));
        let red = |a: [(u128, u128); 4]| a.map(|(lo, hi)| Block::reduce(lo, hi));
        (red(acc_c), red(acc_d))
    }
}

// Lanes and terms index three arrays in step.
#[allow(clippy::needless_range_loop)]
mod portable {
    use super::X4;
    use crate::Block;

    pub fn lincomb8_pair(c: &[Block; 8], d: &[Block; 8], x: &[X4; 8]) -> (X4, X4) {
        let mut out = ([Block::ZERO; 4], [Block::ZERO; 4]);
        for l in 0..4 {
            let (mut lo_c, mut hi_c, mut lo_d, mut hi_d) = (0u128, 0u128, 0u128, 0u128);
            for ((cj, dj), xj) in c.iter().zip(d).zip(x) {
                let (lo, hi) = cj.clmul(xj[l]);
                lo_c ^= lo;
                hi_c ^= hi;
                let (lo, hi) = dj.clmul(xj[l]);
                lo_d ^= lo;
                hi_d ^= hi;
            }
            out.0[l] = Block::reduce(lo_c, hi_c);
            out.1[l] = Block::reduce(lo_d, hi_d);
        }
        out
    }

    pub fn mul_add(a: &X4, b: &X4, c: &X4, d: &X4) -> X4 {
        core::array::from_fn(|l| a[l].gf_mul(b[l]) ^ c[l].gf_mul(d[l]))
    }
}

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod hw {
    use super::X4;
    use crate::Block;
    use core::arch::x86_64::*;

    #[inline(always)]
    pub fn available() -> bool {
        std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512bw")
            && std::is_x86_feature_detected!("vpclmulqdq")
            && std::is_x86_feature_detected!("pclmulqdq")
    }

    #[inline(always)]
    unsafe fn load(x: &X4) -> __m512i {
        // SAFETY: X4 is 64 plain bytes; unaligned load.
        unsafe { _mm512_loadu_si512(x.as_ptr().cast()) }
    }

    #[inline(always)]
    unsafe fn store(v: __m512i) -> X4 {
        let mut out = [Block::ZERO; 4];
        // SAFETY: X4 is 64 plain bytes; unaligned store.
        unsafe { _mm512_storeu_si512(out.as_mut_ptr().cast(), v) };
        out
    }

    /// Add the four products `x * y` to the lane-wise accumulators (low,
    /// middle and high 128-bit parts of the 256-bit products).
    #[inline(always)]
    unsafe fn acc(x: __m512i, y: __m512i, lo: &mut __m512i, mid: &mut __m512i, hi: &mut __m512i) {
        *lo = _mm512_xor_si512(*lo, _mm512_clmulepi64_epi128(x, y, 0x00));
        *hi = _mm512_xor_si512(*hi, _mm512_clmulepi64_epi128(x, y, 0x11));
        *mid = _mm512_xor_si512(*mid, _mm512_clmulepi64_epi128(x, y, 0x01));
        *mid = _mm512_xor_si512(*mid, _mm512_clmulepi64_epi128(x, y, 0x10));
    }

    /// Reduce the 256-bit lane values `lo + mid x^64 + hi x^128` modulo
    /// `x^128 + x^7 + x^2 + x + 1`, as [`Block::gf_mul`] does in one lane:
    /// with `hi = H1 x^64 + H0` and `P = x^7 + x^2 + x + 1`, `u = H1 P`
    /// (at most 71 bits) and `hi x^128 = (H0 + u_hi) P + u_lo x^64`.
    #[inline(always)]
    unsafe fn reduce(lo: __m512i, mid: __m512i, hi: __m512i) -> __m512i {
        let lo = _mm512_xor_si512(lo, _mm512_bslli_epi128::<8>(mid));
        let hi = _mm512_xor_si512(hi, _mm512_bsrli_epi128::<8>(mid));
        let p = _mm512_set1_epi64(0x87);
        let u = _mm512_clmulepi64_epi128(hi, p, 0x01);
        let lo = _mm512_xor_si512(lo, _mm512_bslli_epi128::<8>(u));
        let hi = _mm512_xor_si512(hi, _mm512_bsrli_epi128::<8>(u));
        _mm512_xor_si512(lo, _mm512_clmulepi64_epi128(hi, p, 0x00))
    }

    #[target_feature(
        enable = "avx512f",
        enable = "avx512bw",
        enable = "vpclmulqdq",
        enable = "pclmulqdq"
    )]
    pub unsafe fn lincomb8_pair(c: &[Block; 8], d: &[Block; 8], x: &[X4; 8]) -> (X4, X4) {
        let z = _mm512_setzero_si512();
        let (mut lo_c, mut mid_c, mut hi_c) = (z, z, z);
        let (mut lo_d, mut mid_d, mut hi_d) = (z, z, z);
        for j in 0..8 {
            // SAFETY: in-bounds loads of plain data.
            let xv = unsafe { load(&x[j]) };
            let cv = unsafe { load(&[c[j]; 4]) };
            let dv = unsafe { load(&[d[j]; 4]) };
            unsafe {
                acc(xv, cv, &mut lo_c, &mut mid_c, &mut hi_c);
                acc(xv, dv, &mut lo_d, &mut mid_d, &mut hi_d);
            }
        }
        // SAFETY: register arithmetic and stores to locals.
        unsafe {
            (
                store(reduce(lo_c, mid_c, hi_c)),
                store(reduce(lo_d, mid_d, hi_d)),
            )
        }
    }

    #[target_feature(
        enable = "avx512f",
        enable = "avx512bw",
        enable = "vpclmulqdq",
        enable = "pclmulqdq"
    )]
    pub unsafe fn mul(a: &X4, b: &X4) -> X4 {
        let z = _mm512_setzero_si512();
        let (mut lo, mut mid, mut hi) = (z, z, z);
        // SAFETY: in-bounds loads, register arithmetic, stores to locals.
        unsafe {
            acc(load(a), load(b), &mut lo, &mut mid, &mut hi);
            store(reduce(lo, mid, hi))
        }
    }

    #[target_feature(
        enable = "avx512f",
        enable = "avx512bw",
        enable = "vpclmulqdq",
        enable = "pclmulqdq"
    )]
    pub unsafe fn mul_add(a: &X4, b: &X4, c: &X4, d: &X4) -> X4 {
        let z = _mm512_setzero_si512();
        let (mut lo, mut mid, mut hi) = (z, z, z);
        // SAFETY: in-bounds loads, register arithmetic, stores to locals.
        unsafe {
            acc(load(a), load(b), &mut lo, &mut mid, &mut hi);
            acc(load(c), load(d), &mut lo, &mut mid, &mut hi);
            store(reduce(lo, mid, hi))
        }
    }

    #[cfg(test)]
    pub fn hw_available() -> bool {
        available()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    fn random_x4(rng: &mut impl Rng) -> X4 {
        core::array::from_fn(|_| Block(rng.gen()))
    }

    #[test]
    fn lanes_match_scalar_arithmetic() {
        #[cfg(target_arch = "x86_64")]
        eprintln!("avx512 + vpclmulqdq: {}", hw::hw_available());
        let mut rng = rand::thread_rng();
        let edges = [0u128, 1, u64::MAX as u128, u128::MAX, 1 << 127, 1 << 64];
        for trial in 0..2000 {
            let (a, b, c, d) = if trial < 36 {
                let e = |i: usize| [Block(edges[i % 6]); 4];
                (e(trial), e(trial / 6), e(trial + 1), e(trial / 6 + 2))
            } else {
                (
                    random_x4(&mut rng),
                    random_x4(&mut rng),
                    random_x4(&mut rng),
                    random_x4(&mut rng),
                )
            };
            let want: X4 = core::array::from_fn(|l| a[l].gf_mul(b[l]) ^ c[l].gf_mul(d[l]));
            assert_eq!(mul_add(&a, &b, &c, &d), want);
            assert_eq!(portable::mul_add(&a, &b, &c, &d), want);
            let want: X4 = core::array::from_fn(|l| a[l].gf_mul(b[l]));
            assert_eq!(mul(&a, &b), want);

            let cs: [Block; 8] = core::array::from_fn(|_| Block(rng.gen()));
            let ds: [Block; 8] = core::array::from_fn(|_| Block(rng.gen()));
            let xs: [X4; 8] = core::array::from_fn(|_| random_x4(&mut rng));
            let want_c: X4 = core::array::from_fn(|l| {
                (0..8).fold(Block::ZERO, |s, j| s ^ cs[j].gf_mul(xs[j][l]))
            });
            let want_d: X4 = core::array::from_fn(|l| {
                (0..8).fold(Block::ZERO, |s, j| s ^ ds[j].gf_mul(xs[j][l]))
            });
            assert_eq!(lincomb8_pair(&cs, &ds, &xs), (want_c, want_d));
            assert_eq!(portable::lincomb8_pair(&cs, &ds, &xs), (want_c, want_d));

            let (cb, db): ([u8; 8], [u8; 8]) = (rng.gen(), rng.gen());
            let s = crate::subfield::subfield();
            assert_eq!(
                embed_lincomb8_pair(&cb, &db, &xs),
                lincomb8_pair(&cb.map(|b| s.embed(b)), &db.map(|b| s.embed(b)), &xs)
            );
        }
    }
}
