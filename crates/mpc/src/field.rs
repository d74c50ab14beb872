//! The fields the arithmetic 2PC works in: the base fields of P-256 and of
//! Curve25519 (Montgomery arithmetic on `crypto-bigint`), and GF(2^128) in
//! GHASH's representation of `webproof_core::Block`.
//!
//! This module owns element arithmetic and the canonical wire encoding
//! (32 bytes big-endian for the prime fields, values `< p` only; 16 bytes
//! little-endian for GF(2^128)). It knows nothing about parties or messages.
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
