//! Arithmetic in GF(2^8) with the AES polynomial `x^8 + x^4 + x^3 + x + 1`:
//! the clear-text meaning of the byte-inversion gate
//! ([`Gate::ByteInv`](crate::Gate::ByteInv)) and of the AES S-box built on it.
//!
//! A byte `b` stands for `sum_j b_j x^j` (bit `j` is the coefficient of `x^j`),
//! as in FIPS-197. Everything here is `const` and table-free at run time
//! except [`INV`], a table built at compile time.

/// Product in GF(2^8).
pub const fn mul(a: u8, b: u8) -> u8 {
    let (mut a, mut b, mut r) = (a, b, 0u8);
    while b != 0 {
        if b & 1 != 0 {
            r ^= a;
        }
        a = xtime(a);
        b >>= 1;
    }
    r
}

/// `a * x`.
pub const fn xtime(a: u8) -> u8 {
    (a << 1) ^ if a & 0x80 != 0 { 0x1b } else { 0 }
}

/// `a^2` (a linear map over GF(2): squaring is the Frobenius automorphism).
pub const fn square(a: u8) -> u8 {
    mul(a, a)
}

const fn inv_slow(a: u8) -> u8 {
    // a^254 = a^-1 for a != 0 (the multiplicative group has order 255), and 0 -> 0.
    let mut r = 1u8;
    let mut i = 0;
    while i < 254 {
        r = mul(r, a);
        i += 1;
    }
    if a == 0 {
        0
    } else {
        r
    }
}

/// Inverses of all bytes (`INV[0] = 0`), computed at compile time.
pub const INV: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = inv_slow(i as u8);
        i += 1;
    }
    t
};

/// `a^-1`, with `0 -> 0` (the convention of the AES S-box).
#[inline(always)]
pub const fn inv(a: u8) -> u8 {
    INV[a as usize]
}

/// The S-box's affine map over GF(2): `b_i ^ b_{i+4} ^ b_{i+5} ^ b_{i+6} ^ b_{i+7}` (indices mod 8).
pub const fn affine(b: u8) -> u8 {
    b ^ b.rotate_left(1) ^ b.rotate_left(2) ^ b.rotate_left(3) ^ b.rotate_left(4)
}

/// The inverse of [`affine`]: `b_{i+2} ^ b_{i+5} ^ b_{i+7}` (indices mod 8).
pub const fn affine_inv(b: u8) -> u8 {
    b.rotate_left(1) ^ b.rotate_left(3) ^ b.rotate_left(6)
}

/// The constant added after the affine map.
pub const SBOX_CONST: u8 = 0x63;

/// The AES S-box: `affine(inv(x)) ^ 0x63`.
pub const fn sbox(x: u8) -> u8 {
    affine(inv(x)) ^ SBOX_CONST
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverses_and_sbox_match_fips197() {
        for a in 1..=255u8 {
            assert_eq!(mul(a, inv(a)), 1, "{a:#04x}");
        }
        assert_eq!(inv(0), 0);
        assert_eq!(mul(0x57, 0x83), 0xc1); // FIPS-197 §4.2
        assert_eq!(mul(0x57, 0x13), 0xfe);
        // FIPS-197 Fig. 7 samples.
        assert_eq!(sbox(0x00), 0x63);
        assert_eq!(sbox(0x53), 0xed);
        assert_eq!(sbox(0xff), 0x16);
        for b in 0..=255u8 {
            assert_eq!(affine_inv(affine(b)), b);
            assert_eq!(square(b), mul(b, b));
        }
    }
}
