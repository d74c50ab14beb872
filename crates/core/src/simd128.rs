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

/// The AES S-box, computed at compile time (inverse in GF(2^8) modulo
/// x^8 + x^4 + x^3 + x + 1, then the affine map).
const SBOX: [u8; 256] = {
    const fn mul(mut a: u8, mut b: u8) -> u8 {
        let mut r = 0u8;
        while b != 0 {
            if b & 1 == 1 {
                r ^= a;
            }
            a = (a << 1) ^ if a & 0x80 != 0 { 0x1b } else { 0 };
            b >>= 1;
        }
        r
    }
    let mut s = [0u8; 256];
    let mut x = 0usize;
    while x < 256 {
        // x^254 = x^-1 (and 0 -> 0).
        let (mut inv, mut i) = (1u8, 0);
        while i < 254 {
            inv = mul(inv, x as u8);
            i += 1;
        }
        let inv = if x == 0 { 0 } else { inv };
        s[x] = inv
            ^ inv.rotate_left(1)
            ^ inv.rotate_left(2)
            ^ inv.rotate_left(3)
            ^ inv.rotate_left(4)
            ^ 0x63;
        x += 1;
    }
    s
};

/// AES-128 encryption under one key, one block per vector.
///
/// SubBytes is sixteen 16-entry table lookups with `i8x16_swizzle` (a
/// swizzle index of 16 or more yields zero, so `x ^ 16t` selects exactly
/// the bytes whose high nibble is `t`): no data-dependent memory access,
/// unlike a 256-byte table. ShiftRows and the column rotations of
/// MixColumns are constant shuffles.
#[derive(Clone)]
pub struct Aes128 {
    rk: [v128; 11],
    tables: [v128; 16],
}

impl Aes128 {
    /// Expand `key` (its little-endian bytes are the AES key).
    pub fn new(key: u128) -> Self {
        let tables: [v128; 16] = core::array::from_fn(|t| {
            let b: [u8; 16] = core::array::from_fn(|i| SBOX[16 * t + i]);
            from_u128(u128::from_le_bytes(b))
        });
        let mut aes = Aes128 {
            rk: [u64x2_splat(0); 11],
            tables,
        };
        let mut w: [u32; 44] = [0; 44];
        for (i, c) in key.to_le_bytes().chunks(4).enumerate() {
            w[i] = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        }
        let mut rcon = 1u32;
        for i in 4..44 {
            let mut t = w[i - 1];
            if i % 4 == 0 {
                let sub = aes.sub_bytes(u32x4_splat(t.rotate_right(8)));
                t = u32x4_extract_lane::<0>(sub) ^ rcon;
                rcon = (rcon << 1) ^ if rcon & 0x80 != 0 { 0x11b } else { 0 };
            }
            w[i] = w[i - 4] ^ t;
        }
        for r in 0..11 {
            aes.rk[r] = u32x4(w[4 * r], w[4 * r + 1], w[4 * r + 2], w[4 * r + 3]);
        }
        aes
    }

    #[inline(always)]
    fn sub_bytes(&self, x: v128) -> v128 {
        let mut r = i8x16_swizzle(self.tables[0], x);
        for t in 1..16 {
            let idx = v128_xor(x, u8x16_splat((t as u8) << 4));
            r = v128_xor(r, i8x16_swizzle(self.tables[t], idx));
        }
        r
    }

    #[inline(always)]
    fn shift_rows(x: v128) -> v128 {
        i8x16_shuffle::<0, 5, 10, 15, 4, 9, 14, 3, 8, 13, 2, 7, 12, 1, 6, 11>(x, x)
    }

    #[inline(always)]
    fn mix_columns(a: v128) -> v128 {
        // out_r = 2(a_r + a_{r+1}) + a_{r+1} + a_{r+2} + a_{r+3} in each column.
        let r1 = i8x16_shuffle::<1, 2, 3, 0, 5, 6, 7, 4, 9, 10, 11, 8, 13, 14, 15, 12>(a, a);
        let t = v128_xor(a, r1);
        let t2 = i8x16_shuffle::<2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13>(t, t);
        let carry = v128_and(i8x16_lt(t, i8x16_splat(0)), u8x16_splat(0x1b));
        let xt = v128_xor(i8x16_add(t, t), carry);
        v128_xor(v128_xor(xt, r1), t2)
    }

    /// Encrypt `N` blocks side by side (independent chains hide latency).
    #[inline(always)]
    pub fn encrypt<const N: usize>(&self, blocks: [u128; N]) -> [u128; N] {
        let mut s = blocks.map(|b| v128_xor(from_u128(b), self.rk[0]));
        for rk in &self.rk[1..10] {
            for v in s.iter_mut() {
                *v = v128_xor(Self::mix_columns(Self::shift_rows(self.sub_bytes(*v))), *rk);
            }
        }
        s.map(|v| {
            let v = v128_xor(Self::shift_rows(self.sub_bytes(v)), self.rk[10]);
            lane(v, 0) as u128 | (lane(v, 1) as u128) << 64
        })
    }
}
