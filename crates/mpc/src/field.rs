//! The fields the arithmetic 2PC works in: the base fields of P-256 and of
//! Curve25519 (Montgomery arithmetic on `crypto-bigint`), Poly1305's
//! `2^130 - 5` (26-bit limbs), and GF(2^128) in GHASH's representation of
//! `webproof_core::Block`.
//!
//! This module owns element arithmetic and the canonical wire encoding
//! (32 bytes big-endian for the 256-bit prime fields and 17 bytes
//! little-endian for Poly1305's, values `< p` only; 16 bytes little-endian
//! for GF(2^128)). It knows nothing about parties or messages.
//! Arithmetic on secret values is constant time (`crypto-bigint`'s
//! `Residue`, carry-less multiplication); only the decoding of public wire
//! bytes and the exponent of a square root branch.

use core::fmt;
use core::ops::{Add, Mul, Neg, Sub};
use crypto_bigint::modular::constant_mod::{Residue, ResidueParams};
use crypto_bigint::{impl_modulus, Encoding, U256};
use rand_core::RngCore;
use webproof_core::Block;

const LIMBS: usize = U256::LIMBS;

/// The moduli as `crypto-bigint` parameter types (the macro writes no docs).
mod moduli {
    #![allow(missing_docs)]
    use super::*;
    impl_modulus!(
        P256Modulus,
        U256,
        "ffffffff00000001000000000000000000000000ffffffffffffffffffffffff"
    );
    impl_modulus!(
        Curve25519Modulus,
        U256,
        "7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffed"
    );
}
pub use moduli::{Curve25519Modulus, P256Modulus};

/// An element of the prime field `Z/p` for a modulus `M < 2^256`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Fp<M: ResidueParams<LIMBS>>(Residue<M, LIMBS>);

/// The base field of P-256, `p = 2^256 - 2^224 + 2^192 + 2^96 - 1`.
pub type P256Base = Fp<P256Modulus>;
/// The base field of Curve25519 (and of X25519's u-coordinates), `p = 2^255 - 19`.
pub type Curve25519Base = Fp<Curve25519Modulus>;

impl<M: ResidueParams<LIMBS>> fmt::Debug for Fp<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Fp({})", self.0.retrieve())
    }
}

impl<M: ResidueParams<LIMBS>> Fp<M> {
    /// Zero.
    pub const ZERO: Self = Fp(Residue::ZERO);
    /// One.
    pub const ONE: Self = Fp(Residue::ONE);

    /// The modulus.
    pub fn modulus() -> U256 {
        M::MODULUS
    }

    /// Bits of the modulus (256 for P-256, 255 for Curve25519): every
    /// canonical element has at most this many.
    pub fn modulus_bits() -> usize {
        M::MODULUS.bits()
    }

    /// `n mod p`.
    pub fn from_u64(n: u64) -> Self {
        Fp(Residue::new(&U256::from_u64(n)))
    }

    /// `x mod p` for any 256-bit `x` (Montgomery reduction handles inputs
    /// up to `2^256 > p`).
    pub fn from_uint_reduced(x: &U256) -> Self {
        Fp(Residue::new(x))
    }

    /// `(lo + 2^256·hi) mod p`: a 512-bit value reduced, so a uniform 512-bit
    /// input gives an element within `2^-256` of uniform.
    pub fn from_wide(lo: &U256, hi: &U256) -> Self {
        // 2^256 mod p = (2^256 - 1 mod p) + 1.
        let r = Fp::<M>::from_uint_reduced(&U256::MAX) + Fp::ONE;
        Fp::from_uint_reduced(lo) + Fp::from_uint_reduced(hi) * r
    }

    /// The canonical integer in `[0, p)`.
    pub fn to_uint(&self) -> U256 {
        self.0.retrieve()
    }

    /// Canonical big-endian bytes.
    pub fn to_be_bytes(&self) -> [u8; 32] {
        self.0.retrieve().to_be_bytes()
    }

    /// Parse big-endian bytes; `None` unless the value is `< p`.
    pub fn from_be_bytes(bytes: &[u8; 32]) -> Option<Self> {
        let x = U256::from_be_bytes(*bytes);
        if x < M::MODULUS {
            Some(Fp(Residue::new(&x)))
        } else {
            None
        }
    }

    /// Canonical little-endian bytes (X25519's encoding of u).
    pub fn to_le_bytes(&self) -> [u8; 32] {
        self.0.retrieve().to_le_bytes()
    }

    /// Parse little-endian bytes; `None` unless the value is `< p`.
    pub fn from_le_bytes(bytes: &[u8; 32]) -> Option<Self> {
        let mut be = *bytes;
        be.reverse();
        Self::from_be_bytes(&be)
    }

    /// Uniform element (512 random bits reduced).
    pub fn random<R: RngCore + ?Sized>(rng: &mut R) -> Self {
        let mut b = [0u8; 64];
        rng.fill_bytes(&mut b);
        Self::from_wide(
            &U256::from_le_slice(&b[..32]),
            &U256::from_le_slice(&b[32..]),
        )
    }

    /// Uniform nonzero element.
    pub fn random_nonzero<R: RngCore + ?Sized>(rng: &mut R) -> Self {
        loop {
            let x = Self::random(rng);
            if !x.is_zero() {
                return x;
            }
        }
    }

    /// Whether this is zero.
    pub fn is_zero(&self) -> bool {
        self.0.retrieve() == U256::ZERO
    }

    /// `self^2`.
    pub fn square(&self) -> Self {
        Fp(self.0.square())
    }

    /// `self^e`.
    pub fn pow(&self, e: &U256) -> Self {
        Fp(self.0.pow(e))
    }

    /// Multiplicative inverse; `None` for zero.
    pub fn invert(&self) -> Option<Self> {
        let (inv, ok) = self.0.invert();
        if bool::from(ok) {
            Some(Fp(inv))
        } else {
            None
        }
    }

    /// Bit `i` of the canonical integer (bit 0 least significant).
    pub fn bit(&self, i: usize) -> bool {
        bool::from(self.0.retrieve().bit(i))
    }

    /// Whether the canonical integer is odd (the "sign" of Ed25519 points).
    pub fn is_odd(&self) -> bool {
        self.bit(0)
    }
}

impl Curve25519Base {
    /// A square root, if there is one (either of the two), for
    /// `p = 2^255 - 19 ≡ 5 (mod 8)`: `r = a^((p+3)/8)`, times `sqrt(-1)`
    /// if `r^2 = -a`.
    pub fn sqrt(&self) -> Option<Self> {
        let p = Self::modulus();
        let e = p.wrapping_add(&U256::from_u64(3)).shr_vartime(3);
        let r = self.pow(&e);
        if r.square() == *self {
            return Some(r);
        }
        // sqrt(-1) = 2^((p-1)/4)
        let i = Self::from_u64(2).pow(&p.wrapping_sub(&U256::ONE).shr_vartime(2));
        let r = r * i;
        if r.square() == *self {
            Some(r)
        } else {
            None
        }
    }
}

impl<M: ResidueParams<LIMBS>> Add for Fp<M> {
    type Output = Self;
    #[inline]
    fn add(self, rhs: Self) -> Self {
        Fp(self.0.add(&rhs.0))
    }
}
impl<M: ResidueParams<LIMBS>> Sub for Fp<M> {
    type Output = Self;
    #[inline]
    fn sub(self, rhs: Self) -> Self {
        Fp(self.0.sub(&rhs.0))
    }
}
impl<M: ResidueParams<LIMBS>> Mul for Fp<M> {
    type Output = Self;
    #[inline]
    fn mul(self, rhs: Self) -> Self {
        Fp(self.0.mul(&rhs.0))
    }
}
impl<M: ResidueParams<LIMBS>> Neg for Fp<M> {
    type Output = Self;
    #[inline]
    fn neg(self) -> Self {
        Fp(self.0.neg())
    }
}

/// An element of Poly1305's field `Z/p`, `p = 2^130 - 5` (RFC 8439
/// §2.5): the tag of a ChaCha20-Poly1305 record is a polynomial over it
/// (`webproof_mpc_tls::rec::chacha`).
///
/// Five 26-bit limbs, always canonical (`< p`, each limb `< 2^26`), so
/// equality is limb equality; products of limbs fit a `u64` with room for
/// the `×5` of the fold `2^130 ≡ 5`. Not an [`Fp`]: `crypto-bigint`'s
/// `Residue` over `U256` gave wrong products for this modulus (a test
/// here computed `2^160 mod p` as `0x19·2^28` instead of `5·2^30`), and a
/// field of its own also sends 17 bytes an element and takes 130 COTs an
/// OLE instead of 32 and 256. Constant time: no branch or index depends
/// on a value; the final subtraction is a mask select.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Poly1305Field([u64; 5]);

const LIMB: u64 = (1 << 26) - 1;

impl fmt::Debug for Poly1305Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.to_le17();
        write!(f, "Poly1305Field(0x")?;
        for x in b.iter().rev() {
            write!(f, "{x:02x}")?;
        }
        write!(f, ")")
    }
}

impl Poly1305Field {
    /// Zero.
    pub const ZERO: Self = Poly1305Field([0; 5]);
    /// One.
    pub const ONE: Self = Poly1305Field([1, 0, 0, 0, 0]);
    /// Bytes of the canonical encoding (little-endian, `< p`).
    pub const BYTES: usize = 17;

    /// The canonical element of limbs each below `2^63` (any value): three
    /// carry passes leave every limb below `2^26` and the value below
    /// `2^130`, then `p` is subtracted if `v + 5` reaches `2^130`.
    fn freeze(mut l: [u64; 5]) -> Self {
        for _ in 0..3 {
            for i in 0..4 {
                l[i + 1] += l[i] >> 26;
                l[i] &= LIMB;
            }
            let c = l[4] >> 26;
            l[4] &= LIMB;
            l[0] += 5 * c;
        }
        let mut g = [0u64; 5];
        let mut c = 5;
        for i in 0..5 {
            g[i] = l[i] + c;
            c = g[i] >> 26;
            g[i] &= LIMB;
        }
        // c = 1 exactly when v ≥ p: take g = v + 5 - 2^130.
        let take_g = 0u64.wrapping_sub(c);
        for i in 0..5 {
            l[i] = (g[i] & take_g) | (l[i] & !take_g);
        }
        Poly1305Field(l)
    }

    /// `n mod p`.
    pub fn from_u64(n: u64) -> Self {
        Self::from_le_slice_reduced(&n.to_le_bytes())
    }

    /// The little-endian integer of at most 17 bytes (`< 2^136`), reduced:
    /// a Poly1305 block with its `2^(8·len)` bit, or a circuit's output.
    pub fn from_le_slice_reduced(bytes: &[u8]) -> Self {
        assert!(bytes.len() <= 17, "at most 17 bytes");
        let mut b = [0u8; 17];
        b[..bytes.len()].copy_from_slice(bytes);
        let lo = u128::from_le_bytes(b[..16].try_into().expect("16 bytes"));
        let hi = u64::from(b[16]);
        Self::freeze([
            (lo as u64) & LIMB,
            ((lo >> 26) as u64) & LIMB,
            ((lo >> 52) as u64) & LIMB,
            ((lo >> 78) as u64) & LIMB,
            ((lo >> 104) as u64) | (hi << 24),
        ])
    }

    /// The canonical value as 17 little-endian bytes (the top 6 bits
    /// zero): the wire encoding and the width a circuit takes it in.
    pub fn to_le17(&self) -> [u8; 17] {
        let l = self.0;
        let lo = u128::from(l[0])
            | u128::from(l[1]) << 26
            | u128::from(l[2]) << 52
            | u128::from(l[3]) << 78
            | u128::from(l[4]) << 104;
        let mut out = [0u8; 17];
        out[..16].copy_from_slice(&lo.to_le_bytes());
        out[16] = (l[4] >> 24) as u8;
        out
    }

    /// Parse 17 little-endian bytes; `None` unless the value is `< p`.
    pub fn from_le17(bytes: &[u8]) -> Option<Self> {
        let b: &[u8; 17] = bytes.try_into().ok()?;
        let x = Self::from_le_slice_reduced(b);
        (x.to_le17() == *b).then_some(x)
    }

    /// Uniform element: 384 random bits reduced (within `2^-254` of
    /// uniform).
    pub fn random<R: RngCore + ?Sized>(rng: &mut R) -> Self {
        let mut b = [0u8; 48];
        rng.fill_bytes(&mut b);
        Self::from_hash_bytes(&b)
    }

    /// `b_0 + 2^128·b_1 + 2^256·b_2 mod p` for three 16-byte
    /// little-endian words: `2^128 < p` and `2^256 ≡ 5·2^126`.
    pub(crate) fn from_hash_bytes(b: &[u8; 48]) -> Self {
        let w = |i: usize| Self::from_le_slice_reduced(&b[16 * i..16 * i + 16]);
        let mut t128 = [0u8; 17];
        t128[16] = 1;
        let mut t256 = [0u8; 17];
        t256[15] = 0x40; // 2^126
        let t256 = Self::from_le_slice_reduced(&t256) * Self::from_u64(5);
        w(0) + w(1) * Self::from_le_slice_reduced(&t128) + w(2) * t256
    }

    /// Uniform nonzero element.
    pub fn random_nonzero<R: RngCore + ?Sized>(rng: &mut R) -> Self {
        loop {
            let x = Self::random(rng);
            if !x.is_zero() {
                return x;
            }
        }
    }

    /// Whether this is zero.
    pub fn is_zero(&self) -> bool {
        self.0 == [0; 5]
    }

    /// Bit `i` of the canonical integer (bit 0 least significant).
    pub fn bit(&self, i: usize) -> bool {
        (self.0[i / 26] >> (i % 26)) & 1 == 1
    }

    /// Multiplicative inverse (`x^(p-2)`); `None` for zero.
    pub fn invert(&self) -> Option<Self> {
        if self.is_zero() {
            return None;
        }
        // p - 2 = 2^130 - 7: bits 0 and 3..130 set (…11111001).
        let mut acc = Self::ONE;
        for i in (0..130).rev() {
            acc = acc * acc;
            if i == 0 || i >= 3 {
                acc = acc * *self;
            }
        }
        Some(acc)
    }
}

impl Add for Poly1305Field {
    type Output = Self;
    #[inline]
    fn add(self, rhs: Self) -> Self {
        let mut l = self.0;
        for (a, b) in l.iter_mut().zip(rhs.0) {
            *a += b;
        }
        Self::freeze(l)
    }
}
impl Sub for Poly1305Field {
    type Output = Self;
    #[inline]
    fn sub(self, rhs: Self) -> Self {
        self + -rhs
    }
}
impl Neg for Poly1305Field {
    type Output = Self;
    #[inline]
    fn neg(self) -> Self {
        // 2p limb by limb (each at least 2^27 - 10, above any limb of a
        // canonical value), so no limb borrows.
        const TWO_P: [u64; 5] = [2 * 0x3ff_fffb, 2 * LIMB, 2 * LIMB, 2 * LIMB, 2 * LIMB];
        let mut l = TWO_P;
        for (a, b) in l.iter_mut().zip(self.0) {
            *a -= b;
        }
        Self::freeze(l)
    }
}
impl Mul for Poly1305Field {
    type Output = Self;
    #[inline]
    fn mul(self, rhs: Self) -> Self {
        let a = self.0;
        let b = rhs.0;
        // Limb products at or above 2^130 fold back times 5.
        let b5 = [0, 5 * b[1], 5 * b[2], 5 * b[3], 5 * b[4]];
        let d = [
            a[0] * b[0] + a[1] * b5[4] + a[2] * b5[3] + a[3] * b5[2] + a[4] * b5[1],
            a[0] * b[1] + a[1] * b[0] + a[2] * b5[4] + a[3] * b5[3] + a[4] * b5[2],
            a[0] * b[2] + a[1] * b[1] + a[2] * b[0] + a[3] * b5[4] + a[4] * b5[3],
            a[0] * b[3] + a[1] * b[2] + a[2] * b[1] + a[3] * b[0] + a[4] * b5[4],
            a[0] * b[4] + a[1] * b[3] + a[2] * b[2] + a[3] * b[1] + a[4] * b[0],
        ];
        Self::freeze(d)
    }
}

/// An element of GF(2^128) in `Block`'s representation (the one GHASH
/// uses in this workspace): addition is XOR, multiplication `Block::gf_mul`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Gf128(pub Block);

impl Gf128 {
    /// Zero.
    pub const ZERO: Self = Gf128(Block::ZERO);
    /// One.
    pub const ONE: Self = Gf128(Block::ONE);

    /// Uniform element.
    pub fn random<R: RngCore + ?Sized>(rng: &mut R) -> Self {
        let mut b = [0u8; 16];
        rng.fill_bytes(&mut b);
        Gf128(Block::from_bytes(b))
    }

    /// Multiplicative inverse; `None` for zero.
    pub fn invert(&self) -> Option<Self> {
        if self.0 == Block::ZERO {
            None
        } else {
            Some(Gf128(self.0.gf_inv()))
        }
    }
}

impl Add for Gf128 {
    type Output = Self;
    #[inline]
    #[allow(clippy::suspicious_arithmetic_impl)] // characteristic 2: + is XOR
    fn add(self, rhs: Self) -> Self {
        Gf128(self.0 ^ rhs.0)
    }
}
impl Sub for Gf128 {
    type Output = Self;
    #[inline]
    #[allow(clippy::suspicious_arithmetic_impl)] // characteristic 2: - is XOR
    fn sub(self, rhs: Self) -> Self {
        Gf128(self.0 ^ rhs.0)
    }
}
impl Mul for Gf128 {
    type Output = Self;
    #[inline]
    fn mul(self, rhs: Self) -> Self {
        Gf128(self.0.gf_mul(rhs.0))
    }
}
impl Neg for Gf128 {
    type Output = Self;
    #[inline]
    fn neg(self) -> Self {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn reduction_and_encoding() {
        // 2^256 - 1 reduces correctly for both moduli.
        let m = P256Base::from_uint_reduced(&U256::MAX);
        assert_eq!(m.to_uint(), U256::MAX.wrapping_sub(&P256Base::modulus()));
        let c = Curve25519Base::from_uint_reduced(&U256::MAX);
        // 2^256 - 1 - 2p = 37
        assert_eq!(c.to_uint(), U256::from_u64(37));
        assert_eq!(P256Base::modulus_bits(), 256);
        assert_eq!(Curve25519Base::modulus_bits(), 255);
        // p itself is not canonical; p - 1 is.
        let p = P256Base::modulus().to_be_bytes();
        assert!(P256Base::from_be_bytes(&p).is_none());
        let pm1 = P256Base::modulus().wrapping_sub(&U256::ONE).to_be_bytes();
        let x = P256Base::from_be_bytes(&pm1).unwrap();
        assert_eq!(x + P256Base::ONE, P256Base::ZERO);
        assert_eq!(x.to_be_bytes(), pm1);
        let mut le = pm1;
        le.reverse();
        assert_eq!(P256Base::from_le_bytes(&le).unwrap(), x);
    }

    /// Poly1305's field against big-integer arithmetic done by hand:
    /// folds, edge values, inverses, encodings.
    #[test]
    fn poly1305_field() {
        type F = Poly1305Field;
        // 2^160 = 2^30·2^130 ≡ 5·2^30.
        let a = F::from_u64(1 << 40);
        assert_eq!(a * a * a * a, F::from_u64(5 << 30));
        // 2^136 - 1 ≡ 64·5 - 1.
        assert_eq!(F::from_le_slice_reduced(&[0xff; 17]), F::from_u64(319));
        let mut pm1 = [0xffu8; 17];
        pm1[0] = 0xfa;
        pm1[16] = 3;
        let x = F::from_le17(&pm1).unwrap();
        assert_eq!(x + F::ONE, F::ZERO);
        assert_eq!(x * x, F::ONE);
        assert_eq!(-F::ONE, x);
        assert_eq!(F::ZERO - F::ONE, x);
        assert_eq!(x.to_le17(), pm1);
        pm1[0] = 0xfb;
        assert!(F::from_le17(&pm1).is_none());
        assert_eq!(F::from_le_slice_reduced(&pm1), F::ZERO);
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(2);
        for _ in 0..50 {
            let a = F::random_nonzero(&mut rng);
            let b = F::random(&mut rng);
            assert_eq!(a * a.invert().unwrap(), F::ONE);
            assert_eq!((a + b) - b, a);
            assert_eq!(a * (b + F::ONE), a * b + a);
            assert_eq!(F::from_le17(&a.to_le17()), Some(a));
            let bits: u128 = (0..128).map(|i| u128::from(a.bit(i)) << i).sum();
            assert_eq!(bits.to_le_bytes(), a.to_le17()[..16]);
        }
        assert!(F::ZERO.invert().is_none());
        // The hash reduction: 2^256 ≡ 5·2^126.
        let mut b = [0u8; 48];
        b[32] = 1;
        let two128 = F::from_le_slice_reduced(&[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
        assert_eq!(F::from_hash_bytes(&b), two128 * two128);
    }

    #[test]
    fn inverse_and_sqrt() {
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(1);
        for _ in 0..20 {
            let a = P256Base::random_nonzero(&mut rng);
            assert_eq!(a * a.invert().unwrap(), P256Base::ONE);
            let b = Curve25519Base::random_nonzero(&mut rng);
            assert_eq!(b * b.invert().unwrap(), Curve25519Base::ONE);
            let s = b.square();
            let r = s.sqrt().unwrap();
            assert!(r == b || r == -b);
            let g = Gf128::random(&mut rng);
            assert_eq!(g * g.invert().unwrap(), Gf128::ONE);
        }
        assert!(P256Base::ZERO.invert().is_none());
        assert!(Gf128::ZERO.invert().is_none());
        // 2 is not a square mod 2^255 - 19.
        assert!(Curve25519Base::from_u64(2).sqrt().is_none());
    }
}
