//! WebAssembly SIMD128 kernels (compiled only for `wasm32` with the
//! `simd128` target feature).
//!
//! This module owns the browser's replacements for the x86_64 instructions
//! the hot paths rely on: a GF(2^128) carry-less product without a
//! carry-less multiply instruction, bitsliced AES, and four-way ChaCha8
//! (the `chacha20` crate has no SIMD128 code). It must never be the only
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

/// The operand vectors of one 128-bit value `x = [x0, x1, x2, x3]` (32-bit
/// limbs) for two-level Karatsuba: the limbs themselves, the middle-term
/// operands `[x0^x2, x1^x3, x0^x1, x2^x3]`, and `x0^x1^x2^x3` (in lane 0).
#[inline(always)]
fn split(x: u128) -> (v128, v128, v128) {
    let v = from_u128(x);
    let pairs = v128_xor(v, i32x4_shuffle::<1, 0, 3, 2>(v, v));
    let halves = v128_xor(v, i32x4_shuffle::<2, 3, 0, 1>(v, v));
    let mixed = i32x4_shuffle::<0, 1, 4, 6>(halves, pairs);
    let all = v128_xor(halves, i32x4_shuffle::<1, 0, 3, 2>(halves, halves));
    (v, mixed, all)
}

/// Assemble the 256-bit product from its nine 32x32 products: `p` the
/// limb products `x_i y_i`, `q` the products of the middle-term operands
/// (as [`split`] orders them), `r` the product of the limb sums.
#[inline(always)]
fn combine(p01: v128, p23: v128, q01: v128, q23: v128, r: u64) -> (u128, u128) {
    let (p0, p1, p2, p3) = (lane(p01, 0), lane(p01, 1), lane(p23, 0), lane(p23, 1));
    let (q0, q1, q2, q3) = (lane(q01, 0), lane(q01, 1), lane(q23, 0), lane(q23, 1));
    // Inner Karatsuba: three 64-bit products from 32-bit ones.
    let join = |lo: u64, hi: u64, mid: u64| -> u128 {
        lo as u128 ^ (((mid ^ lo ^ hi) as u128) << 32) ^ ((hi as u128) << 64)
    };
    let low = join(p0, p1, q2);
    let high = join(p2, p3, q3);
    let mid = join(q0, q1, r) ^ low ^ high;
    (low ^ (mid << 64), high ^ (mid >> 64))
}

/// 128x128 carry-less product `(low, high)`, unreduced: two-level
/// Karatsuba (nine 32x32 products) packed into two full and one
/// half-used vector of four.
#[inline(always)]
pub fn clmul(a: u128, b: u128) -> (u128, u128) {
    let (va, ma, aa) = split(a);
    let (vb, mb, ab) = split(b);
    let (p01, p23) = clmul32x4::<true>(va, vb);
    let (q01, q23) = clmul32x4::<true>(ma, mb);
    let (r, _) = clmul32x4::<false>(aa, ab);
    combine(p01, p23, q01, q23, lane(r, 0))
}

/// Four independent carry-less products: the four limb-sum products share
/// one vector, so 36 32x32 products take nine full vectors (four separate
/// [`clmul`]s take eight full and four half-used ones).
#[inline(always)]
pub fn clmul4(a: &[u128; 4], b: &[u128; 4]) -> [(u128, u128); 4] {
    let sa = a.map(split);
    let sb = b.map(split);
    let gather = |s: &[(v128, v128, v128); 4]| {
        u32x4(
            u32x4_extract_lane::<0>(s[0].2),
            u32x4_extract_lane::<0>(s[1].2),
            u32x4_extract_lane::<0>(s[2].2),
            u32x4_extract_lane::<0>(s[3].2),
        )
    };
    let (r01, r23) = clmul32x4::<true>(gather(&sa), gather(&sb));
    let r = [lane(r01, 0), lane(r01, 1), lane(r23, 0), lane(r23, 1)];
    core::array::from_fn(|k| {
        let (p01, p23) = clmul32x4::<true>(sa[k].0, sb[k].0);
        let (q01, q23) = clmul32x4::<true>(sa[k].1, sb[k].1);
        combine(p01, p23, q01, q23, r[k])
    })
}

/// Two linear combinations of the same rows, lane by lane, unreduced:
/// `(sum_j c[j] * x[j][l], sum_j d[j] * x[j][l])` for `l < 4`. As in
/// [`sum_of_products`] the Karatsuba combination runs once per sum, not
/// per product; each row is split once for both constants, and the
/// limb-sum products of four rows share one vector.
pub fn lincomb8_pair(c: &[u128; 8], d: &[u128; 8], x: &[[u128; 4]; 8]) -> [[(u128, u128); 4]; 2] {
    let sc = c.map(split);
    let sd = d.map(split);
    let sums = |s: &[(v128, v128, v128); 8], g: usize| {
        u32x4(
            u32x4_extract_lane::<0>(s[4 * g].2),
            u32x4_extract_lane::<0>(s[4 * g + 1].2),
            u32x4_extract_lane::<0>(s[4 * g + 2].2),
            u32x4_extract_lane::<0>(s[4 * g + 3].2),
        )
    };
    let (ca, da) = ([sums(&sc, 0), sums(&sc, 1)], [sums(&sd, 0), sums(&sd, 1)]);
    let zero = u64x2_splat(0);
    let mut out = [[(0u128, 0u128); 4]; 2];
    // Lane `l` of every row, and of both outputs.
    #[allow(clippy::needless_range_loop)]
    for l in 0..4 {
        let (mut pc01, mut pc23, mut qc01, mut qc23) = (zero, zero, zero, zero);
        let (mut pd01, mut pd23, mut qd01, mut qd23) = (zero, zero, zero, zero);
        let mut xs = [0u32; 8];
        for j in 0..8 {
            let (xv, xm, xa) = split(x[j][l]);
            xs[j] = u32x4_extract_lane::<0>(xa);
            let (lo, hi) = clmul32x4::<true>(sc[j].0, xv);
            pc01 = v128_xor(pc01, lo);
            pc23 = v128_xor(pc23, hi);
            let (lo, hi) = clmul32x4::<true>(sc[j].1, xm);
            qc01 = v128_xor(qc01, lo);
            qc23 = v128_xor(qc23, hi);
            let (lo, hi) = clmul32x4::<true>(sd[j].0, xv);
            pd01 = v128_xor(pd01, lo);
            pd23 = v128_xor(pd23, hi);
            let (lo, hi) = clmul32x4::<true>(sd[j].1, xm);
            qd01 = v128_xor(qd01, lo);
            qd23 = v128_xor(qd23, hi);
        }
        let xa = [
            u32x4(xs[0], xs[1], xs[2], xs[3]),
            u32x4(xs[4], xs[5], xs[6], xs[7]),
        ];
        // The four lanes of a limb-sum product belong to four rows of one sum.
        let limb_sums = |k: &[v128; 2]| {
            let (l0, h0) = clmul32x4::<true>(k[0], xa[0]);
            let (l1, h1) = clmul32x4::<true>(k[1], xa[1]);
            let v = v128_xor(v128_xor(l0, h0), v128_xor(l1, h1));
            lane(v, 0) ^ lane(v, 1)
        };
        out[0][l] = combine(pc01, pc23, qc01, qc23, limb_sums(&ca));
        out[1][l] = combine(pd01, pd23, qd01, qd23, limb_sums(&da));
    }
    out
}

/// `sum_i a[i] * b[i]`, unreduced. The Karatsuba combination is linear, so
/// the 32x32 partial products of all terms are summed in their vectors and
/// combined once at the end (per term only the multiplies remain); terms go
/// four at a time so their limb-sum products share one vector, as in
/// [`clmul4`].
pub fn sum_of_products(a: &[crate::Block], b: &[crate::Block]) -> (u128, u128) {
    let zero = u64x2_splat(0);
    let (mut p01, mut p23, mut q01, mut q23, mut r) = (zero, zero, zero, zero, zero);
    let mut add = |va: v128, ma: v128, vb: v128, mb: v128| {
        let (l, h) = clmul32x4::<true>(va, vb);
        p01 = v128_xor(p01, l);
        p23 = v128_xor(p23, h);
        let (l, h) = clmul32x4::<true>(ma, mb);
        q01 = v128_xor(q01, l);
        q23 = v128_xor(q23, h);
    };
    let n = a.len().min(b.len());
    let (a4, a1) = a[..n].split_at(n & !3);
    let (b4, b1) = b[..n].split_at(n & !3);
    for (x, y) in a4.chunks_exact(4).zip(b4.chunks_exact(4)) {
        let sa: [_; 4] = core::array::from_fn(|k| split(x[k].0));
        let sb: [_; 4] = core::array::from_fn(|k| split(y[k].0));
        let gather = |s: &[(v128, v128, v128); 4]| {
            u32x4(
                u32x4_extract_lane::<0>(s[0].2),
                u32x4_extract_lane::<0>(s[1].2),
                u32x4_extract_lane::<0>(s[2].2),
                u32x4_extract_lane::<0>(s[3].2),
            )
        };
        let (l, h) = clmul32x4::<true>(gather(&sa), gather(&sb));
        r = v128_xor(r, v128_xor(l, h));
        for (s, t) in sa.iter().zip(&sb) {
            add(s.0, s.1, t.0, t.1);
        }
    }
    // The last terms one at a time: only lane 0 of their limb-sum product
    // is theirs (lane 1 repeats it, see `split`).
    let mut r_rest = 0u64;
    for (x, y) in a1.iter().zip(b1) {
        let (va, ma, aa) = split(x.0);
        let (vb, mb, ab) = split(y.0);
        add(va, ma, vb, mb);
        r_rest ^= lane(clmul32x4::<false>(aa, ab).0, 0);
    }
    combine(p01, p23, q01, q23, lane(r, 0) ^ lane(r, 1) ^ r_rest)
}

/// The AES S-box, computed at compile time (inverse in GF(2^8) modulo
/// x^8 + x^4 + x^3 + x + 1, then the affine map).
const SBOX: [u8; 256] = {
    use crate::subfield::gf256_mul as mul;
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

/// The AES-128 key schedule, with SubWord done by vector swizzles: sixteen
/// 16-entry table lookups (a swizzle index of 16 or more yields zero, so
/// `x ^ 16t` selects exactly the bytes whose high nibble is `t`), no
/// data-dependent memory access. (The same S-box encrypting one block per
/// vector ran at a fifth of the bitsliced [`Aes128x8`] and below the `aes`
/// crate, so only the key schedule uses it.)
struct KeySchedule {
    rk: [v128; 11],
    tables: [v128; 16],
}

impl KeySchedule {
    /// Expand `key` (its little-endian bytes are the AES key).
    pub fn new(key: u128) -> Self {
        let tables: [v128; 16] = core::array::from_fn(|t| {
            let b: [u8; 16] = core::array::from_fn(|i| SBOX[16 * t + i]);
            from_u128(u128::from_le_bytes(b))
        });
        let mut aes = KeySchedule {
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
}

/// AES-128 on eight blocks at once, bitsliced: plane `i` holds bit `i` of
/// every state byte, byte lane `j` of a plane holds byte `j` of the eight
/// blocks (bit `k` = block `k`), so SubBytes is a Boolean circuit on whole
/// vectors and ShiftRows / MixColumns' rotations are byte shuffles (the
/// Käsper–Schwabe layout). Constant time: no table, no data-dependent
/// branch. About 180 vector operations per round for eight blocks.
#[derive(Clone)]
pub struct Aes128x8 {
    /// Round keys, bitsliced (each bit broadcast to all eight blocks).
    rk: [[v128; 8]; 11],
}

impl Aes128x8 {
    /// Expand `key` (its little-endian bytes are the AES key).
    pub fn new(key: u128) -> Self {
        let rk = KeySchedule::new(key).rk.map(|k| {
            core::array::from_fn(|i| {
                let bit = u8x16_splat(1 << i);
                i8x16_eq(v128_and(k, bit), bit)
            })
        });
        Aes128x8 { rk }
    }

    /// Encrypt eight blocks.
    #[inline(always)]
    pub fn encrypt(&self, blocks: [u128; 8]) -> [u128; 8] {
        let mut s = transpose8(blocks.map(from_u128));
        add(&mut s, &self.rk[0]);
        for rk in &self.rk[1..10] {
            s = sbox_planes(&s).map(shift_rows);
            s = mix_columns_planes(&s);
            add(&mut s, rk);
        }
        s = sbox_planes(&s).map(shift_rows);
        add(&mut s, &self.rk[10]);
        transpose8(s).map(|v| lane(v, 0) as u128 | (lane(v, 1) as u128) << 64)
    }
}

/// ShiftRows on one plane (state byte `r + 4c` is row `r`, column `c`).
#[inline(always)]
fn shift_rows(x: v128) -> v128 {
    i8x16_shuffle::<0, 5, 10, 15, 4, 9, 14, 3, 8, 13, 2, 7, 12, 1, 6, 11>(x, x)
}

#[inline(always)]
fn add(s: &mut [v128; 8], k: &[v128; 8]) {
    for (a, b) in s.iter_mut().zip(k) {
        *a = v128_xor(*a, *b);
    }
}

/// Exchange bits `i + n` of `a` with bits `i` of `b` for the positions `i`
/// in `mask` (within each byte: shifts never carry a bit across the mask).
#[inline(always)]
fn swap_move<const N: u32>(a: &mut v128, b: &mut v128, mask: u8) {
    let t = v128_and(v128_xor(u64x2_shr(*a, N), *b), u8x16_splat(mask));
    *b = v128_xor(*b, t);
    *a = v128_xor(*a, u64x2_shl(t, N));
}

/// Transpose the 8x8 bit matrix (register `k`, bit `i`) in every byte lane;
/// an involution, so it both packs blocks into planes and unpacks them.
#[inline(always)]
fn transpose8(mut r: [v128; 8]) -> [v128; 8] {
    macro_rules! stage {
        ($n:literal, $mask:literal, $($a:literal),*) => {
            $({
                let (lo, hi) = r.split_at_mut($a + $n);
                swap_move::<$n>(&mut lo[$a], &mut hi[0], $mask);
            })*
        };
    }
    stage!(1, 0x55, 0, 2, 4, 6);
    stage!(2, 0x33, 0, 1, 4, 5);
    stage!(4, 0x0f, 0, 1, 2, 3);
    r
}

/// MixColumns on planes: `out = 2(a + rot1 a) + rot1 a + rot2(a + rot1 a)`
/// per column, where doubling moves planes (x^8 = x^4 + x^3 + x + 1).
#[inline(always)]
fn mix_columns_planes(a: &[v128; 8]) -> [v128; 8] {
    let r1 = a.map(|p| i8x16_shuffle::<1, 2, 3, 0, 5, 6, 7, 4, 9, 10, 11, 8, 13, 14, 15, 12>(p, p));
    let t: [v128; 8] = core::array::from_fn(|i| v128_xor(a[i], r1[i]));
    let t2 = t.map(|p| i8x16_shuffle::<2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13>(p, p));
    let hi = t[7];
    let xt = [
        hi,
        v128_xor(t[0], hi),
        t[1],
        v128_xor(t[2], hi),
        v128_xor(t[3], hi),
        t[4],
        t[5],
        t[6],
    ];
    core::array::from_fn(|i| v128_xor(v128_xor(xt[i], r1[i]), t2[i]))
}

/// The AES S-box on planes: the Boyar–Peralta circuit (32 AND, 83 XOR,
/// 4 NOT), equation for equation the one `webproof-circuits` proves
/// (`aes::sbox`); `x0` is the most significant bit.
#[inline(always)]
fn sbox_planes(p: &[v128; 8]) -> [v128; 8] {
    let [x7, x6, x5, x4, x3, x2, x1, x0] = *p;
    // Top linear transformation.
    let y14 = v128_xor(x3, x5);
    let y13 = v128_xor(x0, x6);
    let y9 = v128_xor(x0, x3);
    let y8 = v128_xor(x0, x5);
    let t0 = v128_xor(x1, x2);
    let y1 = v128_xor(t0, x7);
    let y4 = v128_xor(y1, x3);
    let y12 = v128_xor(y13, y14);
    let y2 = v128_xor(y1, x0);
    let y5 = v128_xor(y1, x6);
    let y3 = v128_xor(y5, y8);
    let t1 = v128_xor(x4, y12);
    let y15 = v128_xor(t1, x5);
    let y20 = v128_xor(t1, x1);
    let y6 = v128_xor(y15, x7);
    let y10 = v128_xor(y15, t0);
    let y11 = v128_xor(y20, y9);
    let y7 = v128_xor(x7, y11);
    let y17 = v128_xor(y10, y11);
    let y19 = v128_xor(y10, y8);
    let y16 = v128_xor(t0, y11);
    let y21 = v128_xor(y13, y16);
    let y18 = v128_xor(x0, y16);
    // Middle non-linear part: 9 + 5 + 18 = 32 AND gates.
    let t2 = v128_and(y12, y15);
    let t3 = v128_and(y3, y6);
    let t4 = v128_xor(t3, t2);
    let t5 = v128_and(y4, x7);
    let t6 = v128_xor(t5, t2);
    let t7 = v128_and(y13, y16);
    let t8 = v128_and(y5, y1);
    let t9 = v128_xor(t8, t7);
    let t10 = v128_and(y2, y7);
    let t11 = v128_xor(t10, t7);
    let t12 = v128_and(y9, y11);
    let t13 = v128_and(y14, y17);
    let t14 = v128_xor(t13, t12);
    let t15 = v128_and(y8, y10);
    let t16 = v128_xor(t15, t12);
    let t17 = v128_xor(t4, t14);
    let t18 = v128_xor(t6, t16);
    let t19 = v128_xor(t9, t14);
    let t20 = v128_xor(t11, t16);
    let t21 = v128_xor(t17, y20);
    let t22 = v128_xor(t18, y19);
    let t23 = v128_xor(t19, y21);
    let t24 = v128_xor(t20, y18);
    let t25 = v128_xor(t21, t22);
    let t26 = v128_and(t21, t23);
    let t27 = v128_xor(t24, t26);
    let t28 = v128_and(t25, t27);
    let t29 = v128_xor(t28, t22);
    let t30 = v128_xor(t23, t24);
    let t31 = v128_xor(t22, t26);
    let t32 = v128_and(t31, t30);
    let t33 = v128_xor(t32, t24);
    let t34 = v128_xor(t23, t33);
    let t35 = v128_xor(t27, t33);
    let t36 = v128_and(t24, t35);
    let t37 = v128_xor(t36, t34);
    let t38 = v128_xor(t27, t36);
    let t39 = v128_and(t29, t38);
    let t40 = v128_xor(t25, t39);
    let t41 = v128_xor(t40, t37);
    let t42 = v128_xor(t29, t33);
    let t43 = v128_xor(t29, t40);
    let t44 = v128_xor(t33, t37);
    let t45 = v128_xor(t42, t41);
    let z0 = v128_and(t44, y15);
    let z1 = v128_and(t37, y6);
    let z2 = v128_and(t33, x7);
    let z3 = v128_and(t43, y16);
    let z4 = v128_and(t40, y1);
    let z5 = v128_and(t29, y7);
    let z6 = v128_and(t42, y11);
    let z7 = v128_and(t45, y17);
    let z8 = v128_and(t41, y10);
    let z9 = v128_and(t44, y12);
    let z10 = v128_and(t37, y3);
    let z11 = v128_and(t33, y4);
    let z12 = v128_and(t43, y13);
    let z13 = v128_and(t40, y5);
    let z14 = v128_and(t29, y2);
    let z15 = v128_and(t42, y9);
    let z16 = v128_and(t45, y14);
    let z17 = v128_and(t41, y8);
    // Bottom linear transformation (XNOR = XOR then a free NOT).
    let t46 = v128_xor(z15, z16);
    let t47 = v128_xor(z10, z11);
    let t48 = v128_xor(z5, z13);
    let t49 = v128_xor(z9, z10);
    let t50 = v128_xor(z2, z12);
    let t51 = v128_xor(z2, z5);
    let t52 = v128_xor(z7, z8);
    let t53 = v128_xor(z0, z3);
    let t54 = v128_xor(z6, z7);
    let t55 = v128_xor(z16, z17);
    let t56 = v128_xor(z12, t48);
    let t57 = v128_xor(t50, t53);
    let t58 = v128_xor(z4, t46);
    let t59 = v128_xor(z3, t54);
    let t60 = v128_xor(t46, t57);
    let t61 = v128_xor(z14, t57);
    let t62 = v128_xor(t52, t58);
    let t63 = v128_xor(t49, t58);
    let t64 = v128_xor(z4, t59);
    let t65 = v128_xor(t61, t62);
    let t66 = v128_xor(z1, t63);
    let s0 = v128_xor(t59, t63);
    let s6 = v128_not(v128_xor(t56, t62));
    let s7 = v128_not(v128_xor(t48, t60));
    let t67 = v128_xor(t64, t65);
    let s3 = v128_xor(t53, t66);
    let s4 = v128_xor(t51, t66);
    let s5 = v128_xor(t47, t65);
    let s1 = v128_not(v128_xor(t64, s3));
    let s2 = v128_not(v128_xor(t55, t67));
    [s7, s6, s5, s4, s3, s2, s1, s0]
}

/// `x <<< N` in each 32-bit lane.
#[inline(always)]
fn rotl<const N: u32>(x: v128) -> v128 {
    v128_or(u32x4_shl(x, N), u32x4_shr(x, 32 - N))
}

/// One ChaCha quarter round on four lanes (four blocks) at once.
#[inline(always)]
fn quarter(s: &mut [v128; 16], a: usize, b: usize, c: usize, d: usize) {
    s[a] = u32x4_add(s[a], s[b]);
    s[d] = rotl::<16>(v128_xor(s[d], s[a]));
    s[c] = u32x4_add(s[c], s[d]);
    s[b] = rotl::<12>(v128_xor(s[b], s[c]));
    s[a] = u32x4_add(s[a], s[b]);
    s[d] = rotl::<8>(v128_xor(s[d], s[a]));
    s[c] = u32x4_add(s[c], s[d]);
    s[b] = rotl::<7>(v128_xor(s[b], s[c]));
}

/// Four ChaCha blocks of `2 * DOUBLE_ROUNDS` rounds (IETF layout, nonce
/// zero) under `key`, blocks `counter .. counter + 4` (the counter wraps),
/// as 256 keystream bytes into `out`. Lane `j` of every state word is block
/// `counter + j`; the words are transposed back to block order on the way
/// out.
pub fn chacha_x4<const DOUBLE_ROUNDS: usize>(key: &[u32; 8], counter: u32, out: &mut [u8; 256]) {
    const SIGMA: [u32; 4] = [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574];
    let mut init = [u32x4_splat(0); 16];
    for i in 0..4 {
        init[i] = u32x4_splat(SIGMA[i]);
    }
    for i in 0..8 {
        init[4 + i] = u32x4_splat(key[i]);
    }
    init[12] = u32x4(
        counter,
        counter.wrapping_add(1),
        counter.wrapping_add(2),
        counter.wrapping_add(3),
    );
    let mut s = init;
    for _ in 0..DOUBLE_ROUNDS {
        quarter(&mut s, 0, 4, 8, 12);
        quarter(&mut s, 1, 5, 9, 13);
        quarter(&mut s, 2, 6, 10, 14);
        quarter(&mut s, 3, 7, 11, 15);
        quarter(&mut s, 0, 5, 10, 15);
        quarter(&mut s, 1, 6, 11, 12);
        quarter(&mut s, 2, 7, 8, 13);
        quarter(&mut s, 3, 4, 9, 14);
    }
    for w in (0..16).step_by(4) {
        let [a, b, c, d] = core::array::from_fn(|i| u32x4_add(s[w + i], init[w + i]));
        // 4x4 transpose: row `j` = words `w .. w + 4` of block `j`.
        let (t0, t1) = (
            i32x4_shuffle::<0, 4, 1, 5>(a, b),
            i32x4_shuffle::<2, 6, 3, 7>(a, b),
        );
        let (t2, t3) = (
            i32x4_shuffle::<0, 4, 1, 5>(c, d),
            i32x4_shuffle::<2, 6, 3, 7>(c, d),
        );
        let rows = [
            i32x4_shuffle::<0, 1, 4, 5>(t0, t2),
            i32x4_shuffle::<2, 3, 6, 7>(t0, t2),
            i32x4_shuffle::<0, 1, 4, 5>(t1, t3),
            i32x4_shuffle::<2, 3, 6, 7>(t1, t3),
        ];
        for (j, row) in rows.into_iter().enumerate() {
            let at = 64 * j + 4 * w;
            out[at..at + 8].copy_from_slice(&lane(row, 0).to_le_bytes());
            out[at + 8..at + 16].copy_from_slice(&lane(row, 1).to_le_bytes());
        }
    }
}

/// The coordinate maps of [`crate::subfield`] as vectors, for every byte
/// `c` the two 16-entry tables of `c * n` and `c * (n << 4)` in GF(2^8)
/// that [`u8x16_swizzle`] looks up nibble by nibble, and the squares.
struct CoordTables {
    to: Box<[[v128; 256]; 16]>,
    from: Box<[[v128; 256]; 16]>,
    scale: Box<[[v128; 2]; 256]>,
    square: [u8; 256],
}

fn coord_tables() -> &'static CoordTables {
    static CELL: std::sync::OnceLock<CoordTables> = std::sync::OnceLock::new();
    CELL.get_or_init(|| {
        use crate::subfield::gf256_mul;
        let s = crate::subfield::subfield();
        let vectors = |t: &crate::subfield::ByteTables| -> Box<[[v128; 256]; 16]> {
            let rows: Vec<[v128; 256]> = t.iter().map(|row| row.map(from_u128)).collect();
            rows.into_boxed_slice().try_into().expect("16 rows")
        };
        let nibbles = |c: u8, shift: u32| {
            let bytes: [u8; 16] = core::array::from_fn(|n| gf256_mul(c, (n as u8) << shift));
            from_u128(u128::from_le_bytes(bytes))
        };
        let scale: Vec<[v128; 2]> = (0..=255u8)
            .map(|c| [nibbles(c, 0), nibbles(c, 4)])
            .collect();
        CoordTables {
            to: vectors(s.to_coords_tables()),
            from: vectors(s.from_coords_tables()),
            scale: scale.into_boxed_slice().try_into().expect("256 rows"),
            square: core::array::from_fn(|b| gf256_mul(b as u8, b as u8)),
        }
    })
}

/// A byte-wise linear map (16 lookups, two independent sums).
#[inline(always)]
fn apply(t: &[[v128; 256]; 16], x: u128) -> v128 {
    let (lo, hi) = (x as u64, (x >> 64) as u64);
    let (mut a, mut b) = (u64x2_splat(0), u64x2_splat(0));
    for k in 0..4 {
        a = v128_xor(a, t[2 * k][(lo >> (16 * k)) as u8 as usize]);
        b = v128_xor(b, t[2 * k + 1][(lo >> (16 * k + 8)) as u8 as usize]);
        a = v128_xor(a, t[8 + 2 * k][(hi >> (16 * k)) as u8 as usize]);
        b = v128_xor(b, t[9 + 2 * k][(hi >> (16 * k + 8)) as u8 as usize]);
    }
    v128_xor(a, b)
}

#[inline(always)]
fn to_u128(v: v128) -> u128 {
    lane(v, 0) as u128 | (lane(v, 1) as u128) << 64
}

/// Coordinates `w` scaled byte by byte by a byte of GF(2^8) (its two
/// nibble tables).
#[inline(always)]
fn scale(s: &[v128; 2], w: v128) -> v128 {
    let (lo, hi) = (v128_and(w, u8x16_splat(0x0f)), u8x16_shr(w, 4));
    v128_xor(u8x16_swizzle(s[0], lo), u8x16_swizzle(s[1], hi))
}

/// Lane `l` of two linear combinations of the same 8 rows, in
/// coordinates: `(sum_j c[j] w_j, sum_j d[j] w_j)` with `w_j` the
/// coordinates of `x[j][l]` and `c`, `d` given by their scale tables.
#[inline(always)]
fn coords_pair(
    t: &CoordTables,
    c: &[[v128; 2]; 8],
    d: &[[v128; 2]; 8],
    x: &[[u128; 4]; 8],
    l: usize,
) -> (v128, v128) {
    let (mut ac, mut ad) = (u64x2_splat(0), u64x2_splat(0));
    for j in 0..8 {
        let w = apply(&t.to, x[j][l]);
        ac = v128_xor(ac, scale(&c[j], w));
        ad = v128_xor(ad, scale(&d[j], w));
    }
    (ac, ad)
}

/// [`crate::lanes::embed_lincomb8_pair`]: `(sum_j phi(c[j]) x[j][l],
/// sum_j phi(d[j]) x[j][l])` for `l < 4`, reduced. Each row goes to
/// coordinates over GF(2^8) once, is scaled byte by byte by both
/// constants (two nibble shuffles each), and each sum comes back once:
/// 8 + 2 table maps and 32 shuffles per lane, where [`lincomb8_pair`]
/// spends 64 32x32 carry-less products.
// Lanes index the inputs and the outputs in step.
#[allow(clippy::needless_range_loop)]
pub fn embed_lincomb8_pair(c: &[u8; 8], d: &[u8; 8], x: &[[u128; 4]; 8]) -> [[u128; 4]; 2] {
    let t = coord_tables();
    let (sc, sd) = (
        c.map(|b| t.scale[b as usize]),
        d.map(|b| t.scale[b as usize]),
    );
    let mut out = [[0u128; 4]; 2];
    for l in 0..4 {
        let (ac, ad) = coords_pair(t, &sc, &sd, x, l);
        out[0][l] = to_u128(apply(&t.from, to_u128(ac)));
        out[1][l] = to_u128(apply(&t.from, to_u128(ad)));
    }
    out
}

/// The linear part of the prover's terms for four byte inversions
/// (`webproof_zk`'s `byteinv`; lane `l` of every row is inversion `l`,
/// input bits `m`, output bits `n`, values `y[l]`, `t[l]`), reduced:
/// with `Y = sum_j phi(c[j]) m[j]`, `Y2 = sum_j phi(d[j]) m[j]` and `T`,
/// `T2` the same of `n`, returns `[Y, Y2, T, T2, E0, E1]` where
/// `E0 = phi(y^2) T + phi(t) Y2 + Y` and `E1 = phi(y) T2 + phi(t^2) Y + T`.
/// The products with `phi(y)` and `phi(t)` are byte-wise in coordinates,
/// so only the two products of MACs are left to carry-less arithmetic.
// Lanes index the inputs and the outputs in step.
#[allow(clippy::needless_range_loop)]
pub fn byteinv_prover_x4(
    c: &[u8; 8],
    d: &[u8; 8],
    m: &[[u128; 4]; 8],
    n: &[[u128; 4]; 8],
    y: [u8; 4],
    t: [u8; 4],
) -> [[u128; 4]; 6] {
    let tb = coord_tables();
    let (sc, sd) = (
        c.map(|b| tb.scale[b as usize]),
        d.map(|b| tb.scale[b as usize]),
    );
    let by = |b: u8| &tb.scale[b as usize];
    let mut out = [[0u128; 4]; 6];
    for l in 0..4 {
        let (wy, wy2) = coords_pair(tb, &sc, &sd, m, l);
        let (wt, wt2) = coords_pair(tb, &sc, &sd, n, l);
        let (y1, t1) = (y[l], t[l]);
        let (y2, t2) = (tb.square[y1 as usize], tb.square[t1 as usize]);
        let e0 = v128_xor(v128_xor(scale(by(y2), wt), scale(by(t1), wy2)), wy);
        let e1 = v128_xor(v128_xor(scale(by(y1), wt2), scale(by(t2), wy)), wt);
        for (i, w) in [wy, wy2, wt, wt2, e0, e1].into_iter().enumerate() {
            out[i][l] = to_u128(apply(&tb.from, to_u128(w)));
        }
    }
    out
}

/// Multiplication by a fixed element `c` as a byte-wise linear map (16
/// lookups in 64 KiB of tables), for long runs of products with one
/// constant ([`crate::powers::PowerSum`]).
pub struct ConstMul {
    t: Box<[[v128; 256]; 16]>,
}

impl ConstMul {
    pub fn new(c: u128) -> Self {
        // c x^s for s < 128, then every byte as a sum of its bits' images.
        let mut basis = [0u128; 128];
        let mut v = c;
        for b in basis.iter_mut() {
            *b = v;
            v = (v << 1) ^ ((v >> 127).wrapping_neg() & 0x87);
        }
        let rows: Vec<[v128; 256]> = (0..16)
            .map(|k| {
                let mut row = [0u128; 256];
                for b in 1..256usize {
                    row[b] = row[b & (b - 1)] ^ basis[8 * k + b.trailing_zeros() as usize];
                }
                row.map(from_u128)
            })
            .collect();
        ConstMul {
            t: rows.into_boxed_slice().try_into().expect("16 rows"),
        }
    }

    /// `sum_m c^m x[stride m + r]` for `r < 4` (`x.len()` a multiple of 4
    /// when `stride = 4`): four Horner chains side by side, so that their
    /// lookups overlap.
    pub fn horner4(&self, x: &[crate::Block]) -> [u128; 4] {
        debug_assert!(x.len().is_multiple_of(4));
        let mut acc = [0u128; 4];
        for chunk in x.chunks_exact(4).rev() {
            for r in 0..4 {
                acc[r] = to_u128(apply(&self.t, acc[r])) ^ chunk[r].0;
            }
        }
        acc
    }
}
