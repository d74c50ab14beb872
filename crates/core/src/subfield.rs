//! GF(2^8), in the AES representation, as a subfield of GF(2^128), and
//! GF(2^128) as a 16-dimensional vector space over it.
//!
//! This module owns the embedding the proof engine's byte inversions use
//! (`webproof_zk`'s `byteinv`) and a change of basis that makes products
//! with embedded bytes cheap where there is no carry-less multiply.
//!
//! - [`ALPHA`] is a root in GF(2^128) of the AES polynomial
//!   `x^8 + x^4 + x^3 + x + 1`, so `phi(sum_j b_j x^j) = sum_j b_j ALPHA^j`
//!   is a field embedding of GF(2^8) ([`Subfield::embed`]).
//! - GF(2^128) has degree 16 over the image of `phi`, and `1, x, ..., x^15`
//!   is a basis: `x` generates GF(2^128) over GF(2), hence over any
//!   subfield. So every element is `sum_k phi(w_k) x^k` for exactly one
//!   vector `w` of 16 bytes, its *coordinates* ([`Subfield::coords`],
//!   [`Subfield::from_coords`]).
//! - In coordinates the product with an embedded byte `c` is byte by byte:
//!   `phi(c) * sum_k phi(w_k) x^k = sum_k phi(c w_k) x^k`. That is how
//!   the SIMD128 kernel `crate::simd128::embed_lincomb8_pair` (wasm32 only)
//!   forms `sum_j phi(c_j) m_j`: two table-driven linear maps and byte
//!   shuffles instead of sixteen carry-less products. The values are the
//!   same as with the products, so which kernel a party runs is invisible
//!   to its peer.
//!
//! Both maps are GF(2)-linear and are applied byte by byte with 16 tables
//! of 256 entries each (64 KiB per map), built once per process. The
//! lookups are indexed by bytes of MACs; like the prover's table of
//! GF(2^8) inverses (`webproof_circuits::gf256::inv`, indexed by witness
//! bytes) they are not constant-time against an observer of the same
//! machine's caches. Nothing of them reaches the peer, and every MAC is
//! used once.

use crate::Block;
use std::sync::OnceLock;

/// A root of `x^8 + x^4 + x^3 + x + 1` in GF(2^128) (modulus
/// `x^128 + x^7 + x^2 + x + 1`, bit `i` the coefficient of `x^i`): the
/// smallest, as an integer, of its 8 conjugate roots. A test checks it.
pub const ALPHA: Block = Block(0x053d_8555_a997_9a1c_a13f_e8ac_5560_ce0d);

/// Product in GF(2^8), AES representation (modulus `0x11b`).
pub const fn gf256_mul(mut a: u8, mut b: u8) -> u8 {
    let mut p = 0u8;
    while b != 0 {
        if b & 1 == 1 {
            p ^= a;
        }
        a = (a << 1) ^ if a & 0x80 != 0 { 0x1b } else { 0 };
        b >>= 1;
    }
    p
}

/// One linear map of GF(2^128) applied byte by byte: entry `[k][b]` is the
/// image of byte `b` at position `k`.
pub type ByteTables = [[u128; 256]; 16];

/// The embedding and the coordinate maps, built once ([`subfield`]).
pub struct Subfield {
    value: [Block; 256],
    to_coords: Box<ByteTables>,
    from_coords: Box<ByteTables>,
}

/// The tables, built on first use.
pub fn subfield() -> &'static Subfield {
    static CELL: OnceLock<Subfield> = OnceLock::new();
    CELL.get_or_init(Subfield::build)
}

/// Apply a byte-wise linear map.
#[inline(always)]
fn apply(t: &ByteTables, x: u128) -> u128 {
    let mut acc = 0;
    for (k, row) in t.iter().enumerate() {
        acc ^= row[(x >> (8 * k)) as u8 as usize];
    }
    acc
}

impl Subfield {
    fn build() -> Subfield {
        let mut basis = [Block::ONE; 8];
        for j in 1..8 {
            basis[j] = basis[j - 1].gf_mul(ALPHA);
        }
        let mut value = [Block::ZERO; 256];
        for (b, v) in value.iter_mut().enumerate() {
            for (j, bj) in basis.iter().enumerate() {
                if (b >> j) & 1 == 1 {
                    *v ^= *bj;
                }
            }
        }
        // from_coords[k][b] = phi(b) x^k.
        let mut from_coords = Box::new([[0u128; 256]; 16]);
        for (k, row) in from_coords.iter_mut().enumerate() {
            let xk = Block::power_of_x(k);
            for (b, e) in row.iter_mut().enumerate() {
                *e = value[b].gf_mul(xk).0;
            }
        }
        // Invert the 128x128 matrix of from_coords over GF(2), Gauss-Jordan
        // on (image, preimage) pairs of the unit vectors.
        let mut rows: Vec<(u128, u128)> = (0..128)
            .map(|c| (from_coords[c / 8][1 << (c % 8)], 1u128 << c))
            .collect();
        for t in 0..128 {
            let p = (t..128)
                .find(|&r| (rows[r].0 >> t) & 1 == 1)
                .expect("1, x, ..., x^15 is a basis over the subfield");
            rows.swap(t, p);
            let pivot = rows[t];
            for (r, row) in rows.iter_mut().enumerate() {
                if r != t && (row.0 >> t) & 1 == 1 {
                    row.0 ^= pivot.0;
                    row.1 ^= pivot.1;
                }
            }
        }
        // rows[t] = (x^t, coords(x^t)).
        let mut to_coords = Box::new([[0u128; 256]; 16]);
        for (k, row) in to_coords.iter_mut().enumerate() {
            for (b, e) in row.iter_mut().enumerate() {
                for i in 0..8 {
                    if (b >> i) & 1 == 1 {
                        *e ^= rows[8 * k + i].1;
                    }
                }
            }
        }
        Subfield {
            value,
            to_coords,
            from_coords,
        }
    }

    /// `phi(b)`.
    #[inline(always)]
    pub fn embed(&self, b: u8) -> Block {
        self.value[b as usize]
    }

    /// The coordinates of `m`, byte `k` the coefficient of `x^k`.
    #[inline(always)]
    pub fn coords(&self, m: Block) -> u128 {
        apply(&self.to_coords, m.0)
    }

    /// The element with coordinates `w` (byte `k` the coefficient of `x^k`).
    #[inline(always)]
    pub fn from_coords(&self, w: u128) -> Block {
        Block(apply(&self.from_coords, w))
    }

    /// The tables of [`Self::coords`].
    pub fn to_coords_tables(&self) -> &ByteTables {
        &self.to_coords
    }

    /// The tables of [`Self::from_coords`].
    pub fn from_coords_tables(&self) -> &ByteTables {
        &self.from_coords
    }
}

/// `c * w` byte by byte in GF(2^8): the coordinates of `phi(c) * m` if `w`
/// are those of `m`.
pub fn scale_coords(c: u8, w: u128) -> u128 {
    let mut out = 0u128;
    for k in 0..16 {
        out |= (gf256_mul(c, (w >> (8 * k)) as u8) as u128) << (8 * k);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Prg;

    #[test]
    fn alpha_is_a_root_of_the_aes_polynomial() {
        let s = subfield();
        // phi(x)^8 + phi(x)^4 + phi(x)^3 + phi(x) + 1 = 0.
        let x = s.embed(2);
        assert_eq!(x, ALPHA);
        let x2 = x.gf_mul(x);
        let x4 = x2.gf_mul(x2);
        assert_eq!(
            x4.gf_mul(x4) ^ x4 ^ x2.gf_mul(x) ^ x ^ Block::ONE,
            Block::ZERO
        );
    }

    #[test]
    fn embedding_is_a_ring_homomorphism() {
        let s = subfield();
        for a in 0..=255u8 {
            for b in [0u8, 1, 2, 0x53, 0xca, 0xff, a.wrapping_mul(37)] {
                assert_eq!(s.embed(a).gf_mul(s.embed(b)), s.embed(gf256_mul(a, b)));
                assert_eq!(s.embed(a) ^ s.embed(b), s.embed(a ^ b));
            }
        }
    }

    #[test]
    fn coordinates_invert_and_make_subfield_products_bytewise() {
        let s = subfield();
        let mut prg = Prg::new(Block(11));
        for m in prg.blocks(500).into_iter().chain([Block::ZERO, Block::ONE]) {
            let w = s.coords(m);
            assert_eq!(s.from_coords(w), m);
            for c in [0u8, 1, 2, 0x8d, 0xff] {
                assert_eq!(s.coords(s.embed(c).gf_mul(m)), scale_coords(c, w));
            }
        }
        for k in 0..16 {
            assert_eq!(s.coords(Block::power_of_x(k)), 1u128 << (8 * k));
        }
    }
}
