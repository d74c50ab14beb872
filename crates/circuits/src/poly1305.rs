//! Poly1305 arithmetic modulo `p = 2^130 − 5` as circuit gadgets (RFC
//! 8439 §2.5): the sum and the product mod `p`, the clamping of `r`, and
//! the tag of a whole message from a one-time key. Values are
//! little-endian bit vectors (bit `i` weighs `2^i`), as
//! [`crate::bytes_to_bits`] gives a little-endian integer's bytes.
//!
//! The 2PC of ChaCha20-Poly1305 records (`webproof_mpc_tls::rec::chacha`) and the
//! proof of a record's tag (`webproof_tlsproof`) build on these.

use crate::{Bit, Builder, Circuit};

/// `a + b` over `a.len()` bits; `b` zero-extended (wrapping, the caller
/// sizes the words so nothing wraps).
fn add_ext(b: &mut Builder, a: &[Bit], x: &[Bit]) -> Vec<Bit> {
    let mut y = x.to_vec();
    y.resize(a.len(), Bit::ZERO);
    b.add(a, &y)
}

/// `z mod p` for `z < 2p` (131 bits, the top ones possibly constant): `z`
/// or `z + 5 - 2^130`, whichever is below `p`; `z ≥ p` exactly when
/// `z + 5` reaches `2^130`. Returns 130 bits.
fn reduce_once(b: &mut Builder, z: &[Bit]) -> Vec<Bit> {
    let mut z = z.to_vec();
    z.resize(132, Bit::ZERO);
    let w = add_ext(b, &z, &[Bit::ONE, Bit::ZERO, Bit::ONE]);
    let ge = b.or(w[130], w[131]);
    (0..130).map(|i| b.mux(ge, z[i], w[i])).collect()
}

/// `a + b mod p` for `a, b < p` (130 bits each).
pub fn add_mod_p(b: &mut Builder, a: &[Bit], x: &[Bit]) -> Vec<Bit> {
    assert!(a.len() == 130 && x.len() == 130, "130-bit values");
    let mut a = a.to_vec();
    a.push(Bit::ZERO);
    let z = add_ext(b, &a, x);
    reduce_once(b, &z)
}

/// `r·t mod p` for a 128-bit `r` (its constant-zero bits cost nothing:
/// a clamped key has 106 live bits) and `t < p` (130 bits): schoolbook
/// rows, each added into the running sum at its offset (a 131-bit add: the
/// sum of the rows so far is below `2^(130+i)`), then `2^130 ≡ 5` folded
/// twice and one conditional subtraction.
pub fn mul_mod_p(b: &mut Builder, r: &[Bit], t: &[Bit]) -> Vec<Bit> {
    assert!(r.len() == 128 && t.len() == 130, "128- and 130-bit values");
    let mut acc = vec![Bit::ZERO; 259];
    for (i, &ri) in r.iter().enumerate() {
        if ri.as_const() == Some(false) {
            continue;
        }
        let row: Vec<Bit> = t.iter().map(|&tj| b.and(ri, tj)).collect();
        let sum = add_ext(b, &acc[i..i + 131], &row);
        acc[i..i + 131].copy_from_slice(&sum);
    }
    // x < 2^258: x = lo + 2^130·hi ≡ lo + 5·hi = lo + hi + 4·hi.
    let (lo, hi) = acc.split_at(130);
    let hi = &hi[..128];
    let mut lo = lo.to_vec();
    lo.resize(133, Bit::ZERO);
    let y = add_ext(b, &lo, hi);
    let mut hi4 = vec![Bit::ZERO, Bit::ZERO];
    hi4.extend_from_slice(hi);
    let y = add_ext(b, &y, &hi4);
    // y < 2^130 + 5·2^128 < 2^133: fold the top 3 bits again.
    let (lo, hi) = y.split_at(130);
    let mut lo = lo.to_vec();
    lo.resize(131, Bit::ZERO);
    let z = add_ext(b, &lo, hi);
    let mut hi4 = vec![Bit::ZERO, Bit::ZERO];
    hi4.extend_from_slice(hi);
    let z = add_ext(b, &z, &hi4);
    // z < 2^130 + 5·8 < 2p.
    reduce_once(b, &z)
}

/// The clamped `r` of a Poly1305 key's first 16 bytes (RFC 8439 §2.5.1):
/// the cleared bits become constants, so nothing downstream pays for them.
pub fn clamp(r: &[Bit]) -> Vec<Bit> {
    let mut r = r[..128].to_vec();
    for byte in [3, 7, 11, 15] {
        for bit in 4..8 {
            r[8 * byte + bit] = Bit::ZERO;
        }
    }
    for byte in [4, 8, 12] {
        for bit in 0..2 {
            r[8 * byte + bit] = Bit::ZERO;
        }
    }
    r
}

/// The Poly1305 tag circuit of a message of `q` blocks: inputs `[one-time
/// key (32 B: r ‖ s), blocks (q × 17 B: each 16-byte block little-endian
/// with its `2^128` bit set, or the shorter last block's `2^(8·len)`
/// bit)]`, output the tag `((Σ_j c_j·r^(q−j+1)) mod p + s) mod 2^128`
/// (16 B), by Horner's rule: one addition and one product mod `p` a
/// block.
pub fn poly1305_tag_circuit(q: usize) -> Circuit {
    let mut b = Builder::new();
    let otk = b.input_bytes(32);
    let blocks = b.input_bytes(17 * q);
    let r = clamp(&otk[..128]);
    let mut acc = vec![Bit::ZERO; 130];
    for c in blocks.chunks(136) {
        let sum = add_mod_p(&mut b, &acc, &c[..130]);
        acc = mul_mod_p(&mut b, &r, &sum);
    }
    let tag = b.add(&acc[..128], &otk[128..256]);
    b.output(&tag);
    b.finish()
}

/// The blocks [`poly1305_tag_circuit`] takes for the AEAD of RFC 8439
/// §2.8 over `aad` and `ct`: both zero-padded to 16 bytes, then their
/// lengths as 64-bit little-endian, each block with its `2^128` bit (17
/// bytes a block).
pub fn aead_blocks(aad: &[u8], ct: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut block = |bytes: &[u8]| {
        let mut blk = [0u8; 17];
        blk[..bytes.len()].copy_from_slice(bytes);
        blk[16] = 1;
        out.extend_from_slice(&blk);
    };
    for part in [aad, ct] {
        part.chunks(16).for_each(&mut block);
    }
    let mut lens = [0u8; 16];
    lens[..8].copy_from_slice(&(aad.len() as u64).to_le_bytes());
    lens[8..].copy_from_slice(&(ct.len() as u64).to_le_bytes());
    block(&lens);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{bits_to_bytes, bytes_to_bits};

    /// The tag circuit on RFC 8439 §2.8.2's AEAD vector's Poly1305 key,
    /// AAD and ciphertext gives its tag.
    #[test]
    fn aead_vector_tag() {
        let hex = |s: &str| -> Vec<u8> {
            (0..s.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
                .collect()
        };
        let otk = hex("7bac2b252db447af09b67a55a4e955840ae1d6731075d9eb2a9375783ed553ff");
        let aad = hex("50515253c0c1c2c3c4c5c6c7");
        let ct = hex(concat!(
            "d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d6",
            "3dbea45e8ca9671282fafb69da92728b1a71de0a9e060b2905d6a5b67ecd3b36",
            "92ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc",
            "3ff4def08e4b7a9de576d26586cec64b6116"
        ));
        let blocks = aead_blocks(&aad, &ct);
        let q = blocks.len() / 17;
        let out = poly1305_tag_circuit(q).eval(&[bytes_to_bits(&otk), bytes_to_bits(&blocks)]);
        assert_eq!(
            bits_to_bytes(&out[0]),
            hex("1ae10b594f09e26a7e902ecbd0600691")
        );
    }
}
