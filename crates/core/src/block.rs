//! 128-bit blocks and GF(2^128) arithmetic.
//!
//! A [`Block`] is the unit of every VOLE/OT protocol here: a key, a MAC, a
//! global correlation `Delta`, or a field element. The field is
//! GF(2^128) = GF(2)\[x\] / (x^128 + x^7 + x^2 + x + 1); bit `i` of the `u128`
//! is the coefficient of `x^i`. Addition is XOR.
//!
//! Multiplication uses the carry-less multiply instruction (PCLMULQDQ) when the
//! CPU has it and a constant-time fallback otherwise: on WebAssembly, integer
//! multiplies with SIMD128 (`crate::simd128` (wasm32 only)) or without it, elsewhere the
//! portable bit loop. [`crate::kernels`] names every variant for tests and
//! benchmarks.

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
        Block(clmul::gf_mul(self.0, rhs.0))
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

    /// A GCM block as a field element of [`Block::gf_mul`]: GCM reads the
    /// big-endian 128-bit integer bit-reflected (its first bit is the
    /// coefficient of `x^0`), so the bits are reversed.
    pub fn from_gcm(b: &[u8; 16]) -> Block {
        Block(u128::from_be_bytes(*b).reverse_bits())
    }

    /// The GCM block of a field element ([`Block::from_gcm`]'s inverse).
    pub fn to_gcm(self) -> [u8; 16] {
        self.0.reverse_bits().to_be_bytes()
    }
}

/// GHASH's input blocks for additional data `aad` and ciphertext `ct`
/// (NIST SP 800-38D): each zero-padded to whole blocks, then their bit
/// lengths, as field elements ([`Block::from_gcm`]). The tag is
/// `Σ X_j·H^{k-j+1} ⊕ E_K(J0)` over these `k` blocks.
pub fn ghash_blocks(aad: &[u8], ct: &[u8]) -> Vec<Block> {
    let mut out = Vec::with_capacity(aad.len().div_ceil(16) + ct.len().div_ceil(16) + 1);
    for part in [aad, ct] {
        for chunk in part.chunks(16) {
            let mut b = [0u8; 16];
            b[..chunk.len()].copy_from_slice(chunk);
            out.push(Block::from_gcm(&b));
        }
    }
    let mut lens = [0u8; 16];
    lens[..8].copy_from_slice(&(8 * aad.len() as u64).to_be_bytes());
    lens[8..].copy_from_slice(&(8 * ct.len() as u64).to_be_bytes());
    out.push(Block::from_gcm(&lens));
    out
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
///
/// On x86_64 with PCLMULQDQ this runs a batch kernel compiled for that
/// instruction (detected once per call, not per product).
pub fn inner_product(a: &[Block], b: &[Block]) -> Block {
    assert_eq!(a.len(), b.len(), "inner product of unequal lengths");
    let (lo, hi) = clmul::sum_of_products(a, b);
    Block::reduce(lo, hi)
}

/// Carry-less multiplication: hardware where available, portable otherwise.
///
/// The single product [`clmul`](clmul::clmul) is called once per gate by the
/// proof engine, so it must inline into its caller: a `#[target_feature]`
/// function cannot (the caller is compiled without the feature), hence the
/// hardware path is a few instructions of inline assembly behind the
/// standard library's cached CPU-feature test (a load and a predictable
/// branch). Batch loops ([`sum_of_products`](clmul::sum_of_products)) use a
/// `#[target_feature]` kernel instead, which lets the compiler schedule the
/// whole loop.
pub(crate) mod clmul {
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

    /// The reference 128x128 carry-less multiply (bit loop, Karatsuba on
    /// 64-bit halves).
    #[inline(always)]
    pub fn clmul_soft(a: u128, b: u128) -> (u128, u128) {
        let (a0, a1) = (a as u64, (a >> 64) as u64);
        let (b0, b1) = (b as u64, (b >> 64) as u64);
        let lo = clmul64_soft(a0, b0);
        let hi = clmul64_soft(a1, b1);
        let mid = clmul64_soft(a0 ^ a1, b0 ^ b1) ^ lo ^ hi;
        (lo ^ (mid << 64), hi ^ (mid >> 64))
    }

    /// 32x32 carry-less multiply from four integer multiplies per output
    /// class: each operand is split into the bits of one residue class mod 4
    /// ("holes" of three zero bits), so the carries of an integer product
    /// land only in other classes, which the final masks drop. At most 8
    /// terms meet in one coefficient, below the 16 that would carry into the
    /// same class. Constant time wherever integer multiply is (x86, ARM,
    /// WebAssembly engines on them).
    #[inline(always)]
    fn clmul32_imul(x: u32, y: u32) -> u64 {
        const M: [u32; 4] = [0x1111_1111, 0x2222_2222, 0x4444_4444, 0x8888_8888];
        let xs = M.map(|m| (x & m) as u64);
        let ys = M.map(|m| (y & m) as u64);
        let mut r = 0u64;
        for c in 0..4 {
            let mut z = 0u64;
            for i in 0..4 {
                z ^= xs[i].wrapping_mul(ys[(c + 4 - i) % 4]);
            }
            r |= z & (0x1111_1111_1111_1111u64 << c);
        }
        r
    }

    #[inline(always)]
    fn clmul64_imul(x: u64, y: u64) -> u128 {
        let (x0, x1) = (x as u32, (x >> 32) as u32);
        let (y0, y1) = (y as u32, (y >> 32) as u32);
        let lo = clmul32_imul(x0, y0);
        let hi = clmul32_imul(x1, y1);
        let mid = clmul32_imul(x0 ^ x1, y0 ^ y1) ^ lo ^ hi;
        lo as u128 ^ ((mid as u128) << 32) ^ ((hi as u128) << 64)
    }

    /// Portable 128x128 carry-less multiply on integer multiplies
    /// (two-level Karatsuba, nine 32x32 products). Much faster than the
    /// bit loop where 64-bit multiply is cheap and there is no carry-less
    /// instruction: the path for WebAssembly without SIMD128.
    #[inline(always)]
    pub fn clmul_imul(a: u128, b: u128) -> (u128, u128) {
        let (a0, a1) = (a as u64, (a >> 64) as u64);
        let (b0, b1) = (b as u64, (b >> 64) as u64);
        let lo = clmul64_imul(a0, b0);
        let hi = clmul64_imul(a1, b1);
        let mid = clmul64_imul(a0 ^ a1, b0 ^ b1) ^ lo ^ hi;
        (lo ^ (mid << 64), hi ^ (mid >> 64))
    }

    /// The product used where there is no hardware carry-less multiply:
    /// SIMD128 on WebAssembly with it, integer multiplies on WebAssembly
    /// without it, the bit loop elsewhere (native fallbacks keep their
    /// behaviour).
    #[inline(always)]
    pub(super) fn clmul_portable(a: u128, b: u128) -> (u128, u128) {
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        {
            crate::simd128::clmul(a, b)
        }
        #[cfg(all(target_arch = "wasm32", not(target_feature = "simd128")))]
        {
            clmul_imul(a, b)
        }
        #[cfg(not(target_arch = "wasm32"))]
        {
            clmul_soft(a, b)
        }
    }

    /// Portable `sum_i a[i] * b[i]`, unreduced (SIMD128: partial products
    /// summed before they are combined, `crate::simd128::sum_of_products`).
    pub(super) fn sum_of_products_soft(a: &[super::Block], b: &[super::Block]) -> (u128, u128) {
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        return crate::simd128::sum_of_products(a, b);
        #[allow(unreachable_code)]
        let (mut lo, mut hi) = (0u128, 0u128);
        for (x, y) in a.iter().zip(b) {
            let (l, h) = clmul_portable(x.0, y.0);
            lo ^= l;
            hi ^= h;
        }
        (lo, hi)
    }

    /// Whether the CPU has PCLMULQDQ (a compile-time `true` when the build
    /// targets it; otherwise the standard library's cached detection).
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    pub(super) fn has_hw() -> bool {
        #[cfg(target_feature = "pclmulqdq")]
        {
            true
        }
        #[cfg(not(target_feature = "pclmulqdq"))]
        {
            std::is_x86_feature_detected!("pclmulqdq")
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    pub fn clmul(a: u128, b: u128) -> (u128, u128) {
        if has_hw() {
            hw::clmul(a, b)
        } else {
            clmul_soft(a, b)
        }
    }

    #[cfg(not(target_arch = "x86_64"))]
    #[inline(always)]
    pub fn clmul(a: u128, b: u128) -> (u128, u128) {
        clmul_portable(a, b)
    }

    /// Reduced product.
    #[inline(always)]
    pub fn gf_mul(a: u128, b: u128) -> u128 {
        #[cfg(target_arch = "x86_64")]
        if has_hw() {
            return hw::gf_mul(a, b);
        }
        let (lo, hi) = clmul_portable(a, b);
        super::Block::reduce(lo, hi).0
    }

    /// `sum_i a[i] * b[i]` without reduction (`a`, `b` of equal length).
    pub fn sum_of_products(a: &[super::Block], b: &[super::Block]) -> (u128, u128) {
        #[cfg(target_arch = "x86_64")]
        if has_hw() {
            return hw::sum_of_products(a, b);
        }
        sum_of_products_soft(a, b)
    }

    #[cfg(target_arch = "x86_64")]
    #[allow(unsafe_code)]
    mod hw {
        use core::arch::asm;
        use core::arch::x86_64::*;

        /// One 128x128 carry-less product in inline assembly (inlines into
        /// the caller whatever its target features).
        ///
        /// Only called after PCLMULQDQ support is known ([`super::has_hw`]);
        /// SSE2 is baseline on x86_64.
        #[inline(always)]
        pub fn clmul(a: u128, b: u128) -> (u128, u128) {
            // SAFETY: u128 and __m128i are both 16 plain bytes.
            let x: __m128i = unsafe { core::mem::transmute::<u128, __m128i>(a) };
            let y: __m128i = unsafe { core::mem::transmute::<u128, __m128i>(b) };
            let lo: __m128i;
            let hi: __m128i;
            // SAFETY: register-only arithmetic; the instruction exists
            // (checked by the caller). Karatsuba would save one multiply
            // for three more XORs: not worth it at one PCLMULQDQ per cycle.
            unsafe {
                asm!(
                    "movdqa {lo}, {x}",
                    "pclmulqdq {lo}, {y}, 0x00",
                    "movdqa {hi}, {x}",
                    "pclmulqdq {hi}, {y}, 0x11",
                    "movdqa {m}, {x}",
                    "pclmulqdq {m}, {y}, 0x01",
                    "pclmulqdq {x}, {y}, 0x10",
                    "pxor {x}, {m}",
                    "movdqa {m}, {x}",
                    "pslldq {m}, 8",
                    "psrldq {x}, 8",
                    "pxor {lo}, {m}",
                    "pxor {hi}, {x}",
                    x = inout(xmm_reg) x => _,
                    y = in(xmm_reg) y,
                    lo = out(xmm_reg) lo,
                    hi = out(xmm_reg) hi,
                    m = out(xmm_reg) _,
                    options(pure, nomem, nostack, preserves_flags),
                );
                (
                    core::mem::transmute::<__m128i, u128>(lo),
                    core::mem::transmute::<__m128i, u128>(hi),
                )
            }
        }

        /// Reduced product, multiply and reduction both in SSE registers.
        ///
        /// With `hi = H1·x^64 + H0` and `P = x^7 + x^2 + x + 1`:
        /// `hi·x^128 ≡ hi·P`, `H1·P = u` has at most 71 bits, so
        /// `hi·P = (H0 ⊕ u_hi)·P + u_lo·x^64` with `u = u_hi·x^64 + u_lo`,
        /// where the first product fits in 128 bits.
        #[inline(always)]
        pub fn gf_mul(a: u128, b: u128) -> u128 {
            // SAFETY: u128 and __m128i are both 16 plain bytes.
            let x: __m128i = unsafe { core::mem::transmute::<u128, __m128i>(a) };
            let y: __m128i = unsafe { core::mem::transmute::<u128, __m128i>(b) };
            let poly: __m128i = unsafe { core::mem::transmute::<u128, __m128i>(0x87) };
            let lo: __m128i;
            // SAFETY: register-only arithmetic; PCLMULQDQ checked by the caller.
            unsafe {
                asm!(
                    // 256-bit product: lo, hi, middle terms in m and x.
                    "movdqa {lo}, {x}",
                    "pclmulqdq {lo}, {y}, 0x00",
                    "movdqa {hi}, {x}",
                    "pclmulqdq {hi}, {y}, 0x11",
                    "movdqa {m}, {x}",
                    "pclmulqdq {m}, {y}, 0x01",
                    "pclmulqdq {x}, {y}, 0x10",
                    "pxor {x}, {m}",
                    "movdqa {m}, {x}",
                    "pslldq {m}, 8",
                    "psrldq {x}, 8",
                    "pxor {lo}, {m}",
                    "pxor {hi}, {x}",
                    // u = H1·P; lo ^= u_lo·x^64; H0 ^= u_hi.
                    "movdqa {m}, {hi}",
                    "pclmulqdq {m}, {p}, 0x01",
                    "movdqa {x}, {m}",
                    "pslldq {x}, 8",
                    "pxor {lo}, {x}",
                    "psrldq {m}, 8",
                    "pxor {hi}, {m}",
                    // lo ^= (H0 ^ u_hi)·P.
                    "pclmulqdq {hi}, {p}, 0x00",
                    "pxor {lo}, {hi}",
                    x = inout(xmm_reg) x => _,
                    y = in(xmm_reg) y,
                    p = in(xmm_reg) poly,
                    lo = out(xmm_reg) lo,
                    hi = out(xmm_reg) _,
                    m = out(xmm_reg) _,
                    options(pure, nomem, nostack, preserves_flags),
                );
                core::mem::transmute::<__m128i, u128>(lo)
            }
        }

        /// Batch `sum_i a[i] * b[i]`, unreduced.
        pub fn sum_of_products(
            a: &[super::super::Block],
            b: &[super::super::Block],
        ) -> (u128, u128) {
            let n = a.len().min(b.len());
            let mut done = 0;
            let (mut lo, mut hi) = (0u128, 0u128);
            if n >= 8
                && std::is_x86_feature_detected!("vpclmulqdq")
                && std::is_x86_feature_detected!("avx512f")
            {
                // SAFETY: both features were just detected.
                (lo, hi, done) = unsafe { sum_of_products_wide(&a[..n], &b[..n]) };
            }
            // SAFETY: only reached when PCLMULQDQ is present.
            let (l, h) = unsafe { sum_of_products_kernel(&a[done..n], &b[done..n]) };
            (lo ^ l, hi ^ h)
        }

        /// The SSE kernel alone (tests compare it with the portable code).
        #[cfg(test)]
        pub fn sum_of_products_narrow(
            a: &[super::super::Block],
            b: &[super::super::Block],
        ) -> (u128, u128) {
            // SAFETY: tests call this only when PCLMULQDQ is present.
            unsafe { sum_of_products_kernel(a, b) }
        }

        /// Four terms per step in 512-bit registers (VPCLMULQDQ): returns the
        /// unreduced sum of the first `4·⌊n/4⌋` terms and that count.
        #[target_feature(enable = "vpclmulqdq", enable = "avx512f", enable = "pclmulqdq")]
        unsafe fn sum_of_products_wide(
            a: &[super::super::Block],
            b: &[super::super::Block],
        ) -> (u128, u128, usize) {
            let n = a.len().min(b.len()) / 4 * 4;
            let mut lo = _mm512_setzero_si512();
            let mut hi = _mm512_setzero_si512();
            let mut mid = _mm512_setzero_si512();
            let (pa, pb) = (a.as_ptr(), b.as_ptr());
            let mut i = 0;
            while i < n {
                // SAFETY: blocks i..i+4 are in bounds of both slices.
                let x = unsafe { _mm512_loadu_si512(pa.add(i).cast()) };
                let y = unsafe { _mm512_loadu_si512(pb.add(i).cast()) };
                lo = _mm512_xor_si512(lo, _mm512_clmulepi64_epi128(x, y, 0x00));
                hi = _mm512_xor_si512(hi, _mm512_clmulepi64_epi128(x, y, 0x11));
                mid = _mm512_xor_si512(mid, _mm512_clmulepi64_epi128(x, y, 0x01));
                mid = _mm512_xor_si512(mid, _mm512_clmulepi64_epi128(x, y, 0x10));
                i += 4;
            }
            // Fold the four lanes, then the middle terms.
            let fold = |v: __m512i| -> __m128i {
                let a = _mm_xor_si128(
                    _mm512_extracti32x4_epi32::<0>(v),
                    _mm512_extracti32x4_epi32::<1>(v),
                );
                let b = _mm_xor_si128(
                    _mm512_extracti32x4_epi32::<2>(v),
                    _mm512_extracti32x4_epi32::<3>(v),
                );
                _mm_xor_si128(a, b)
            };
            let (lo, hi, mid) = (fold(lo), fold(hi), fold(mid));
            let lo = _mm_xor_si128(lo, _mm_slli_si128(mid, 8));
            let hi = _mm_xor_si128(hi, _mm_srli_si128(mid, 8));
            (
                core::mem::transmute::<__m128i, u128>(lo),
                core::mem::transmute::<__m128i, u128>(hi),
                n,
            )
        }

        /// Separate accumulators for the low, high and middle terms (the
        /// multiplies of one product are independent); the middle sum is
        /// folded into `lo`/`hi` once at the end.
        #[target_feature(enable = "pclmulqdq", enable = "sse2")]
        unsafe fn sum_of_products_kernel(
            a: &[super::super::Block],
            b: &[super::super::Block],
        ) -> (u128, u128) {
            let n = a.len().min(b.len());
            let mut lo = _mm_setzero_si128();
            let mut hi = _mm_setzero_si128();
            let mut mid = _mm_setzero_si128();
            let load = |s: &[super::super::Block], i: usize| -> __m128i {
                // SAFETY: in bounds (i < n <= len); unaligned load.
                unsafe { _mm_loadu_si128(s.as_ptr().add(i).cast::<__m128i>()) }
            };
            for i in 0..n {
                let x = load(a, i);
                let y = load(b, i);
                lo = _mm_xor_si128(lo, _mm_clmulepi64_si128(x, y, 0x00));
                hi = _mm_xor_si128(hi, _mm_clmulepi64_si128(x, y, 0x11));
                mid = _mm_xor_si128(mid, _mm_clmulepi64_si128(x, y, 0x01));
                mid = _mm_xor_si128(mid, _mm_clmulepi64_si128(x, y, 0x10));
            }
            lo = _mm_xor_si128(lo, _mm_slli_si128(mid, 8));
            hi = _mm_xor_si128(hi, _mm_srli_si128(mid, 8));
            (
                core::mem::transmute::<__m128i, u128>(lo),
                core::mem::transmute::<__m128i, u128>(hi),
            )
        }
    }

    #[cfg(test)]
    pub fn soft(a: u128, b: u128) -> (u128, u128) {
        clmul_soft(a, b)
    }

    #[cfg(all(test, target_arch = "x86_64"))]
    pub fn narrow(a: &[super::Block], b: &[super::Block]) -> (u128, u128) {
        hw::sum_of_products_narrow(a, b)
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
    fn hardware_kernels_match_portable_code() {
        let mut rng = rand::thread_rng();
        #[cfg(target_arch = "x86_64")]
        eprintln!("pclmulqdq detected: {}", clmul::has_hw());
        // Edge values exercise the carries between halves.
        let edges = [0u128, 1, u64::MAX as u128, u128::MAX, 1 << 127, 1 << 64];
        for &a in &edges {
            for &b in &edges {
                assert_eq!(Block(a).clmul(Block(b)), clmul::soft(a, b));
                let (l, h) = clmul::soft(a, b);
                assert_eq!(Block(a).gf_mul(Block(b)), Block::reduce(l, h));
            }
        }
        for _ in 0..10_000 {
            let (a, b): (u128, u128) = (rng.gen(), rng.gen());
            let (l, h) = clmul::soft(a, b);
            assert_eq!(Block(a).gf_mul(Block(b)), Block::reduce(l, h));
        }
        for len in [0usize, 1, 2, 3, 7, 8, 9, 12, 64, 513] {
            let a: Vec<Block> = (0..len).map(|_| Block(rng.gen())).collect();
            let b: Vec<Block> = (0..len).map(|_| Block(rng.gen())).collect();
            let expect = clmul::sum_of_products_soft(&a, &b);
            assert_eq!(clmul::sum_of_products(&a, &b), expect, "len {len}");
            #[cfg(target_arch = "x86_64")]
            if clmul::has_hw() {
                assert_eq!(clmul::narrow(&a, &b), expect, "len {len}");
            }
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
        let d = Block(0x1_dead_beef);
        assert_eq!(Block::select(true, d), d);
        assert_eq!(Block::select(false, d), Block::ZERO);
        assert!(Block(3).lsb());
        assert_eq!(Block(3).with_lsb(false), Block(2));
    }
}
