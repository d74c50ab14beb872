//! WebAssembly SIMD128 kernels (compiled only for `wasm32` with the
//! `simd128` target feature).
//!
//! This module owns the browser's replacements for the x86_64 instructions
//! the hot paths rely on: a GF(2^128) carry-less product without a
//! carry-less multiply instruction. It must never be the only
//! implementation of anything: every kernel here has a portable twin that
//! the same inputs are checked against ([`crate::kernels::self_test`]), and
//! builds without `simd128` use the twin.
//!
//! All intrinsics used are plain register arithmetic, so no `unsafe`.

use core::arch::wasm32::*;

#[inline(always)]
fn from_u128(x: u128) -> v128 {
    u64x2(x as u64, (x >> 64) as u64)
}

#[inline(always)]
fn lane(v: v128, i: usize) -> u64 {
    match i {
        0 => u64x2_extract_lane::<0>(v),
        _ => u64x2_extract_lane::<1>(v),
    }
}

/// Four independent 32x32 carry-less products, lane by lane: `(lanes 0-1,
/// lanes 2-3)` as 64-bit results. With `HIGH = false` lanes 2-3 are not
/// computed (returned as zero).
///
/// Integer multiplies on operands with three-bit holes (see
/// `block::clmul::clmul32_imul`); `u64x2_extmul_*_u32x4` is one unsigned
/// 32x32->64 vector multiply (PMULUDQ on x86), which engines lower far
/// better than the full 64-bit lane multiply.
#[inline(always)]
fn clmul32x4<const HIGH: bool>(x: v128, y: v128) -> (v128, v128) {
    const M: [u32; 4] = [0x1111_1111, 0x2222_2222, 0x4444_4444, 0x8888_8888];
    let xs = M.map(|m| v128_and(x, u32x4_splat(m)));
    let ys = M.map(|m| v128_and(y, u32x4_splat(m)));
    let (mut lo, mut hi) = (u64x2_splat(0), u64x2_splat(0));
    for c in 0..4 {
        let (mut zl, mut zh) = (u64x2_splat(0), u64x2_splat(0));
        for i in 0..4 {
            let (a, b) = (xs[i], ys[(c + 4 - i) % 4]);
            zl = v128_xor(zl, u64x2_extmul_low_u32x4(a, b));
            if HIGH {
                zh = v128_xor(zh, u64x2_extmul_high_u32x4(a, b));
            }
        }
        let mask = u64x2_splat(0x1111_1111_1111_1111u64 << c);
        lo = v128_or(lo, v128_and(zl, mask));
        if HIGH {
            hi = v128_or(hi, v128_and(zh, mask));
        }
    }
    (lo, hi)
}

/// 128x128 carry-less product `(low, high)`, unreduced: two-level
/// Karatsuba (nine 32x32 products) packed into two full and one
/// half-used vector of four.
#[inline(always)]
pub fn clmul(a: u128, b: u128) -> (u128, u128) {
    // Operand vectors: [x0, x1, x2, x3]; [x0^x2, x1^x3, x0^x1, x2^x3];
    // [x0^x1^x2^x3, ..].
    let split = |x: u128| {
        let v = from_u128(x);
        let pairs = v128_xor(v, i32x4_shuffle::<1, 0, 3, 2>(v, v));
        let halves = v128_xor(v, i32x4_shuffle::<2, 3, 0, 1>(v, v));
        let mixed = i32x4_shuffle::<0, 1, 4, 6>(halves, pairs);
        let all = v128_xor(halves, i32x4_shuffle::<1, 0, 3, 2>(halves, halves));
        (v, mixed, all)
    };
    let (va, ma, aa) = split(a);
    let (vb, mb, ab) = split(b);
    let (p01, p23) = clmul32x4::<true>(va, vb);
    let (q01, q23) = clmul32x4::<true>(ma, mb);
    let (r, _) = clmul32x4::<false>(aa, ab);
    let (p0, p1, p2, p3) = (lane(p01, 0), lane(p01, 1), lane(p23, 0), lane(p23, 1));
    let (q0, q1, q2, q3) = (lane(q01, 0), lane(q01, 1), lane(q23, 0), lane(q23, 1));
    let r = lane(r, 0);
    // Inner Karatsuba: three 64-bit products from 32-bit ones.
    let join = |lo: u64, hi: u64, mid: u64| -> u128 {
        lo as u128 ^ (((mid ^ lo ^ hi) as u128) << 32) ^ ((hi as u128) << 64)
    };
    let low = join(p0, p1, q2);
    let high = join(p2, p3, q3);
    let mid = join(q0, q1, r) ^ low ^ high;
    (low ^ (mid << 64), high ^ (mid >> 64))
}
