//! Byte inversions in GF(2^8), proven inside GF(2^128) (the gate
//! [`Gate::ByteInv`](webproof_circuits::Gate::ByteInv); the AES S-box is one
//! of them plus free linear maps).
//!
//! GF(2^128) contains GF(2^8) as its subfield `{z : z^256 = z}`. [`ALPHA`]
//! is a root in GF(2^128) of the AES polynomial `x^8 + x^4 + x^3 + x + 1`,
//! so `phi(sum_j y_j x^j) = sum_j y_j ALPHA^j` is a field embedding of
//! GF(2^8) (AES representation) into GF(2^128). For a byte `y` made of
//! authenticated bits `y_j` (MACs `M_j = K_j + y_j Delta`) both
//!
//! - `Y = phi(y)`, MAC `sum_j ALPHA^j M_j`, and
//! - `Y^2 = phi(y^2) = sum_j y_j ALPHA^(2j)` (squaring is additive in
//!   characteristic 2, so this is linear in the bits too), MAC
//!   `sum_j ALPHA^(2j) M_j`,
//!
//! are authenticated field elements at no cost. The prover commits the 8
//! bits of `t = y^-1` (`0 -> 0`) and proves the two degree-2 relations
//!
//! ```text
//!   Y^2 * T = Y        and        Y * T^2 = T
//! ```
//!
//! as two terms of the batched QuickSilver check, exactly like an AND gate
//! (`a * b = c` with `a = Y^2, b = T, c = Y`, then `a = Y, b = T^2, c = T`).
//! They pin `t` down: if `y = 0` the second forces `T = 0`; if `y != 0` the
//! first gives `Y T = 1`, so `T = Y^-1`, and `phi` is injective. Both sides
//! lie in the image of `phi` because they are built from bits, and the
//! check's soundness (about `2^-127` per check, see the crate docs) is that
//! of any degree-2 QuickSilver relation. Cost: 8 COTs and 8 sent bits per
//! inversion, against 32 AND gates for the Boolean S-box.
//!
//! The embedding's constants are bytes of GF(2^8) (`ALPHA^j` is the byte
//! `x^j`), so the combinations and the products with `phi(y)`, `phi(t)`
//! can be computed in coordinates over GF(2^8), byte by byte
//! ([`webproof_core::subfield`]); the SIMD128 build does that, where a
//! carry-less product costs dozens of integer multiplies. The values are
//! the same whichever way they are computed, so the peer cannot tell.

use crate::check::Acc;
use std::sync::OnceLock;
use webproof_core::lanes::{self, X4};
use webproof_core::Block;

pub use webproof_core::subfield::ALPHA;

/// The embedding's constants as bytes of GF(2^8): `x^j` (bit `j`) and
/// `x^(2j)` (bit `j` of the square), for [`lanes::embed_lincomb8_pair`].
const BASIS_BYTES: [u8; 8] = [1, 2, 4, 8, 16, 32, 64, 128];
const BASIS_SQ_BYTES: [u8; 8] = [0x01, 0x04, 0x10, 0x40, 0x1b, 0x6c, 0xab, 0x9a];

/// Constants of the embedding, built once.
pub(crate) struct Embedding {
    /// `ALPHA^j`: the embedding of bit `j`.
    pub basis: [Block; 8],
    /// `ALPHA^(2j)`: the embedding of bit `j` of the square.
    pub basis_sq: [Block; 8],
    /// `phi(y)` for every byte.
    pub value: [Block; 256],
    /// `phi(y)^2` for every byte.
    pub value_sq: [Block; 256],
}

pub(crate) fn embedding() -> &'static Embedding {
    static CELL: OnceLock<Embedding> = OnceLock::new();
    CELL.get_or_init(|| {
        let mut basis = [Block::ONE; 8];
        for j in 1..8 {
            basis[j] = basis[j - 1].gf_mul(ALPHA);
        }
        let basis_sq = basis.map(|b| b.gf_mul(b));
        let mut value = [Block::ZERO; 256];
        let mut value_sq = [Block::ZERO; 256];
        for y in 0..256 {
            for j in 0..8 {
                if (y >> j) & 1 == 1 {
                    value[y] ^= basis[j];
                    value_sq[y] ^= basis_sq[j];
                }
            }
        }
        Embedding {
            basis,
            basis_sq,
            value,
            value_sq,
        }
    })
}

/// `sum_j c[j] * m[j]`: the MAC (or key) of an embedded byte from those of its bits.
#[inline(always)]
pub(crate) fn combine(c: &[Block; 8], m: &[Block; 8]) -> Block {
    let mut acc = Acc::default();
    for j in 0..8 {
        acc.add_mul(c[j], m[j]);
    }
    acc.value()
}

/// The byte whose bits are the values (lsbs) of the prover's MACs.
#[inline(always)]
pub(crate) fn byte_of(m: &[Block; 8]) -> u8 {
    (0..8).fold(0u8, |acc, j| acc | ((m[j].lsb() as u8) << j))
}

/// The prover's two check terms `(A0, A1)` for input MACs `m` (value `y`)
/// and output MACs `n` (value `t`).
#[inline(always)]
pub(crate) fn prover_terms(m: &[Block; 8], n: &[Block; 8], y: u8, t: u8) -> [[Block; 2]; 2] {
    let e = embedding();
    let my = combine(&e.basis, m);
    let my2 = combine(&e.basis_sq, m);
    let mt = combine(&e.basis, n);
    let mt2 = combine(&e.basis_sq, n);
    let (vy, vy2) = (e.value[y as usize], e.value_sq[y as usize]);
    let (vt, vt2) = (e.value[t as usize], e.value_sq[t as usize]);
    [
        // Y^2 * T = Y
        [my2.gf_mul(mt), vy2.gf_mul(mt) ^ vt.gf_mul(my2) ^ my],
        // Y * T^2 = T
        [my.gf_mul(mt2), vy.gf_mul(mt2) ^ vt2.gf_mul(my) ^ mt],
    ]
}

/// The verifier's two check terms `(K_a K_b, K_c)` for input keys `k` and
/// output keys `l`.
#[inline(always)]
pub(crate) fn verifier_terms(k: &[Block; 8], l: &[Block; 8]) -> [[Block; 2]; 2] {
    let e = embedding();
    let ky = combine(&e.basis, k);
    let ky2 = combine(&e.basis_sq, k);
    let kt = combine(&e.basis, l);
    let kt2 = combine(&e.basis_sq, l);
    [[ky2.gf_mul(kt), ky], [ky.gf_mul(kt2), kt]]
}

/// [`prover_terms`] of four inversions at once (lane `l` of every row is
/// inversion `l`), in the order lane 0's two terms, lane 1's, ...
#[inline(always)]
pub(crate) fn prover_terms_x4(m: &[X4; 8], n: &[X4; 8], y: [u8; 4], t: [u8; 4]) -> [[Block; 2]; 8] {
    let ([my, my2, mt, mt2], a1) = linear_terms_x4(m, n, y, t);
    let a0 = [lanes::mul(&my2, &mt), lanes::mul(&my, &mt2)];
    core::array::from_fn(|i| {
        let (l, r) = (i / 2, i % 2);
        [a0[r][l], a1[r][l]]
    })
}

/// The MACs `[Y, Y^2, T, T^2]` of four inversions and their two `A1`
/// terms, `phi(y^2) T + phi(t) Y^2 + Y` and `phi(y) T^2 + phi(t^2) Y + T`.
/// In SIMD128 all of it is computed in coordinates over GF(2^8)
/// (`webproof_core::subfield`), where the products with the byte values
/// are byte-wise.
#[inline(always)]
fn linear_terms_x4(m: &[X4; 8], n: &[X4; 8], y: [u8; 4], t: [u8; 4]) -> ([X4; 4], [X4; 2]) {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        let words = |r: &[X4; 8]| r.map(|x| x.map(|b| b.0));
        let [my, my2, mt, mt2, e0, e1] = webproof_core::simd128::byteinv_prover_x4(
            &BASIS_BYTES,
            &BASIS_SQ_BYTES,
            &words(m),
            &words(n),
            y,
            t,
        )
        .map(|x| x.map(Block));
        return ([my, my2, mt, mt2], [e0, e1]);
    }
    #[allow(unreachable_code)]
    {
        let e = embedding();
        let (my, my2) = lanes::embed_lincomb8_pair(&BASIS_BYTES, &BASIS_SQ_BYTES, m);
        let (mt, mt2) = lanes::embed_lincomb8_pair(&BASIS_BYTES, &BASIS_SQ_BYTES, n);
        let vy: X4 = y.map(|b| e.value[b as usize]);
        let vy2: X4 = y.map(|b| e.value_sq[b as usize]);
        let vt: X4 = t.map(|b| e.value[b as usize]);
        let vt2: X4 = t.map(|b| e.value_sq[b as usize]);
        let a1 = [
            lanes::mul_add(&vy2, &mt, &vt, &my2),
            lanes::mul_add(&vy, &mt2, &vt2, &my),
        ];
        let plus = |a: X4, c: X4| -> X4 { core::array::from_fn(|l| a[l] ^ c[l]) };
        ([my, my2, mt, mt2], [plus(a1[0], my), plus(a1[1], mt)])
    }
}

/// [`verifier_terms`] of four inversions at once, ordered as [`prover_terms_x4`].
#[inline(always)]
pub(crate) fn verifier_terms_x4(k: &[X4; 8], l: &[X4; 8]) -> [[Block; 2]; 8] {
    let (ky, ky2) = lanes::embed_lincomb8_pair(&BASIS_BYTES, &BASIS_SQ_BYTES, k);
    let (kt, kt2) = lanes::embed_lincomb8_pair(&BASIS_BYTES, &BASIS_SQ_BYTES, l);
    let b = [lanes::mul(&ky2, &kt), lanes::mul(&ky, &kt2)];
    core::array::from_fn(|i| {
        let (lane, r) = (i / 2, i % 2);
        let c = if r == 0 { ky[lane] } else { kt[lane] };
        [b[r][lane], c]
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use webproof_circuits::gf256;

    #[test]
    fn alpha_is_a_root_of_the_aes_polynomial() {
        let p = |x: Block| {
            let x2 = x.gf_mul(x);
            let x4 = x2.gf_mul(x2);
            let x8 = x4.gf_mul(x4);
            let x3 = x2.gf_mul(x);
            x8 ^ x4 ^ x3 ^ x ^ Block::ONE
        };
        assert_eq!(p(ALPHA), Block::ZERO);
        assert_ne!(ALPHA, Block::ONE);
    }

    #[test]
    fn basis_bytes_are_the_embedding_constants() {
        let e = embedding();
        let s = webproof_core::subfield::subfield();
        for j in 0..8 {
            assert_eq!(s.embed(BASIS_BYTES[j]), e.basis[j]);
            assert_eq!(s.embed(BASIS_SQ_BYTES[j]), e.basis_sq[j]);
            assert_eq!(BASIS_SQ_BYTES[j], gf256::square(BASIS_BYTES[j]));
        }
    }

    #[test]
    fn embedding_is_a_ring_homomorphism_on_all_bytes() {
        let e = embedding();
        for a in 0..=255u8 {
            assert_eq!(e.value_sq[a as usize], e.value[gf256::square(a) as usize]);
            for b in [0u8, 1, 2, 0x53, 0xca, 0xff, a.wrapping_mul(37)] {
                assert_eq!(
                    e.value[a as usize].gf_mul(e.value[b as usize]),
                    e.value[gf256::mul(a, b) as usize],
                    "{a:#04x} * {b:#04x}"
                );
            }
        }
        // Injective: 256 distinct images.
        let mut v: Vec<u128> = e.value.iter().map(|b| b.0).collect();
        v.sort_unstable();
        v.dedup();
        assert_eq!(v.len(), 256);
    }

    /// The four-lane terms are the one-lane terms, lane by lane.
    #[test]
    fn four_lane_terms_match_one_lane_terms() {
        use rand::Rng;
        let mut rng = rand::thread_rng();
        for _ in 0..200 {
            let m: [X4; 8] = core::array::from_fn(|_| core::array::from_fn(|_| Block(rng.gen())));
            let n: [X4; 8] = core::array::from_fn(|_| core::array::from_fn(|_| Block(rng.gen())));
            let y: [u8; 4] = rng.gen();
            let t: [u8; 4] = rng.gen();
            let p4 = prover_terms_x4(&m, &n, y, t);
            let v4 = verifier_terms_x4(&m, &n);
            for l in 0..4 {
                let ml: [Block; 8] = core::array::from_fn(|j| m[j][l]);
                let nl: [Block; 8] = core::array::from_fn(|j| n[j][l]);
                let p1 = prover_terms(&ml, &nl, y[l], t[l]);
                let v1 = verifier_terms(&ml, &nl);
                assert_eq!([p4[2 * l], p4[2 * l + 1]], p1);
                assert_eq!([v4[2 * l], v4[2 * l + 1]], v1);
            }
        }
    }

    /// The two relations hold for `t = inv(y)` and for no other `t`.
    #[test]
    fn relations_single_out_the_inverse() {
        let e = embedding();
        for y in 0..=255u8 {
            for t in 0..=255u8 {
                let (vy, vt) = (e.value[y as usize], e.value[t as usize]);
                let ok = e.value_sq[y as usize].gf_mul(vt) == vy
                    && vy.gf_mul(e.value_sq[t as usize]) == vt;
                assert_eq!(ok, t == gf256::inv(y), "y={y:#04x} t={t:#04x}");
            }
        }
    }
}
