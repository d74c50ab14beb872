//! 128-bit blocks and GF(2^128) arithmetic.
//!
//! A [`Block`] is the unit of every VOLE/OT protocol here: a key, a MAC, a
//! global correlation `Delta`, or a field element. The field is
//! GF(2^128) = GF(2)[x] / (x^128 + x^7 + x^2 + x + 1); bit `i` of the `u128`
//! is the coefficient of `x^i`. Addition is XOR.
//!
//! Multiplication uses the carry-less multiply instruction (PCLMULQDQ) when the
//! CPU has it and a portable constant-time fallback otherwise (WebAssembly).

use core::ops::{BitAnd, BitXor, BitXorAssign};

/// A 128-bit value: field element of GF(2^128), key, MAC or seed.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct Block(pub u128);

impl core::fmt::Debug for Block {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Block({:032x})", self.0)
    }
}

impl Block {
    /// The additive identity.
    pub const ZERO: Block = Block(0);
    /// The multiplicative identity.
    pub const ONE: Block = Block(1);
    /// Bytes in a block.
    pub const LEN: usize = 16;

    /// Least significant bit. In COT outputs this carries the receiver's choice bit.
    #[inline(always)]
    pub fn lsb(self) -> bool {
        self.0 & 1 == 1
    }

    /// This block with its least significant bit set to `bit`.
    #[inline(always)]
    pub fn with_lsb(self, bit: bool) -> Block {
        Block((self.0 & !1) | bit as u128)
    }

    /// `Delta` if `bit`, else zero, without branching on `bit`.
    #[inline(always)]
    pub fn select(bit: bool, delta: Block) -> Block {
        Block(delta.0 & (bit as u128).wrapping_neg())
    }

    /// Little-endian bytes.
    #[inline(always)]
    pub fn to_bytes(self) -> [u8; 16] {
        self.0.to_le_bytes()
    }

    /// From little-endian bytes.
    #[inline(always)]
    pub fn from_bytes(b: [u8; 16]) -> Block {
        Block(u128::from_le_bytes(b))
    }

    /// Product in GF(2^128).
    #[inline(always)]
    pub fn gf_mul(self, rhs: Block) -> Block {
        let (lo, hi) = self.clmul(rhs);
        Block::reduce(lo, hi)
    }

    /// Carry-less 128x128 -> 256-bit product `(low, high)`, not reduced.
    ///
    /// Sums of unreduced products can be reduced once with [`Block::reduce`],
    /// which is how batched inner products should be computed.
    #[inline(always)]
    pub fn clmul(self, rhs: Block) -> (u128, u128) {
        clmul::clmul(self.0, rhs.0)
    }

    /// Reduce a 256-bit carry-less product modulo x^128 + x^7 + x^2 + x + 1.
    #[inline(always)]
    pub fn reduce(lo: u128, hi: u128) -> Block {
        // hi * x^128 == hi * (x^7 + x^2 + x + 1); the bits shifted out of the
        // top (at most 7) are folded once more.
        let t = hi ^ (hi << 1) ^ (hi << 2) ^ (hi << 7);
        let over = (hi >> 127) ^ (hi >> 126) ^ (hi >> 121);
        let u = over ^ (over << 1) ^ (over << 2) ^ (over << 7);
        Block(lo ^ t ^ u)
    }

    /// Multiplicative inverse (zero maps to zero), by exponentiation to 2^128 - 2.
    pub fn gf_inv(self) -> Block {
        // a^(2^128-2) = prod_{i=1}^{127} a^(2^i)
        let mut result = Block::ONE;
        let mut sq = self;
        for _ in 1..128 {
            sq = sq.gf_mul(sq);
            result = result.gf_mul(sq);
        }
        result
    }

    /// `x^i` for `i < 128`: the powers used to pack 128 bits into one field element.
    #[inline(always)]
    pub fn power_of_x(i: usize) -> Block {
        Block(1u128 << i)
    }
}

impl BitXor for Block {
    type Output = Block;
    #[inline(always)]
    fn bitxor(self, rhs: Block) -> Block {
        Block(self.0 ^ rhs.0)
    }
}

impl BitXorAssign for Block {
    #[inline(always)]
    fn bitxor_assign(&mut self, rhs: Block) {
        self.0 ^= rhs.0
    }
}

impl BitAnd for Block {
    type Output = Block;
    #[inline(always)]
    fn bitand(self, rhs: Block) -> Block {
        Block(self.0 & rhs.0)
    }
}

impl From<[u8; 16]> for Block {
    fn from(b: [u8; 16]) -> Block {
        Block::from_bytes(b)
    }
}

/// Inner product `sum_i a[i] * b[i]` in GF(2^128) with one reduction.
pub fn inner_product(a: &[Block], b: &[Block]) -> Block {
    assert_eq!(a.len(), b.len(), "inner product of unequal lengths");
    let (mut lo, mut hi) = (0u128, 0u128);
    for (x, y) in a.iter().zip(b) {
        let (l, h) = x.clmul(*y);
        lo ^= l;
        hi ^= h;
    }
    Block::reduce(lo, hi)
}

/// Carry-less multiplication: hardware where available, portable otherwise.
mod clmul {
    /// Portable 64x64 carry-less multiply, constant time (no secret-dependent branches).
    #[inline(always)]
    fn clmul64_soft(a: u64, b: u64) -> u128 {
        let a = a as u128;
        let mut r = 0u128;
        for i in 0..64 {
            let mask = (((b >> i) & 1) as u128).wrapping_neg();
            r ^= (a << i) & mask;
        }
        r
    }

    #[inline(always)]
    fn clmul_soft(a: u128, b: u128) -> (u128, u128) {
        let (a0, a1) = (a as u64, (a >> 64) as u64);
        let (b0, b1) = (b as u64, (b >> 64) as u64);
        let lo = clmul64_soft(a0, b0);
        let hi = clmul64_soft(a1, b1);
        let mid = clmul64_soft(a0 ^ a1, b0 ^ b1) ^ lo ^ hi;
        (lo ^ (mid << 64), hi ^ (mid >> 64))
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    pub fn clmul(a: u128, b: u128) -> (u128, u128) {
        #[cfg(target_feature = "pclmulqdq")]
        {
            hw::clmul(a, b)
        }
        #[cfg(not(target_feature = "pclmulqdq"))]
        {
            if std::is_x86_feature_detected!("pclmulqdq") {
                hw::clmul(a, b)
            } else {
                clmul_soft(a, b)
            }
        }
    }

    #[cfg(not(target_arch = "x86_64"))]
    #[inline(always)]
    pub fn clmul(a: u128, b: u128) -> (u128, u128) {
        clmul_soft(a, b)
    }

    #[cfg(target_arch = "x86_64")]
    #[allow(unsafe_code)]
    mod hw {
        use core::arch::x86_64::*;

        /// Safety: only called after PCLMULQDQ support is known (compile-time
        /// target feature or runtime detection); SSE2 is baseline on x86_64.
        #[inline(always)]
        pub fn clmul(a: u128, b: u128) -> (u128, u128) {
            unsafe { clmul_inner(a, b) }
        }

        #[target_feature(enable = "pclmulqdq", enable = "sse2")]
        unsafe fn clmul_inner(a: u128, b: u128) -> (u128, u128) {
            let x = _mm_set_epi64x((a >> 64) as i64, a as i64);
            let y = _mm_set_epi64x((b >> 64) as i64, b as i64);
            let lo = _mm_clmulepi64_si128(x, y, 0x00);
            let hi = _mm_clmulepi64_si128(x, y, 0x11);
            let m1 = _mm_clmulepi64_si128(x, y, 0x01);
            let m2 = _mm_clmulepi64_si128(x, y, 0x10);
            let mid = _mm_xor_si128(m1, m2);
            let lo: u128 = core::mem::transmute(lo);
            let hi: u128 = core::mem::transmute(hi);
            let mid: u128 = core::mem::transmute(mid);
            (lo ^ (mid << 64), hi ^ (mid >> 64))
        }
    }

    #[cfg(test)]
    pub fn soft(a: u128, b: u128) -> (u128, u128) {
        clmul_soft(a, b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    /// Schoolbook reference: bit by bit multiply with reduction.
    fn mul_ref(a: u128, b: u128) -> u128 {
        let mut r = 0u128;
        let mut a = a;
        for i in 0..128 {
            if (b >> i) & 1 == 1 {
                r ^= a;
            }
            let carry = a >> 127;
            a <<= 1;
            if carry == 1 {
                a ^= 0x87;
            }
        }
        r
    }

    #[test]
    fn mul_matches_reference_and_soft_path() {
        let mut rng = rand::thread_rng();
        for _ in 0..2000 {
            let (a, b): (u128, u128) = (rng.gen(), rng.gen());
            assert_eq!(Block(a).gf_mul(Block(b)).0, mul_ref(a, b));
            assert_eq!(clmul::soft(a, b), Block(a).clmul(Block(b)));
        }
    }

    #[test]
    fn field_laws() {
        let mut rng = rand::thread_rng();
        for _ in 0..50 {
            let a = Block(rng.gen());
            let b = Block(rng.gen());
            let c = Block(rng.gen());
            assert_eq!(a.gf_mul(b), b.gf_mul(a));
            assert_eq!(a.gf_mul(b ^ c), a.gf_mul(b) ^ a.gf_mul(c));
            assert_eq!(a.gf_mul(Block::ONE), a);
            if a != Block::ZERO {
                assert_eq!(a.gf_mul(a.gf_inv()), Block::ONE);
            }
        }
    }

    #[test]
    fn inner_product_matches_sum() {
        let mut rng = rand::thread_rng();
        let a: Vec<Block> = (0..100).map(|_| Block(rng.gen())).collect();
        let b: Vec<Block> = (0..100).map(|_| Block(rng.gen())).collect();
        let naive = a
            .iter()
            .zip(&b)
            .fold(Block::ZERO, |acc, (x, y)| acc ^ x.gf_mul(*y));
        assert_eq!(inner_product(&a, &b), naive);
    }

    #[test]
    fn select_and_lsb() {
        let d = Block(0xdead_beef_1);
        assert_eq!(Block::select(true, d), d);
        assert_eq!(Block::select(false, d), Block::ZERO);
        assert!(Block(3).lsb());
        assert_eq!(Block(3).with_lsb(false), Block(2));
    }
}
