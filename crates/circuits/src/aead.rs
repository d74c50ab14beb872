//! Record-layer keystream gadgets for the TLS AEADs: per-record nonces, the
//! AES-GCM counter-mode keystream with its hash key `H` and tag mask
//! `E_K(J0)`, and the ChaCha20-Poly1305 keystream with its one-time
//! Poly1305 key.
//!
//! The IV is secret (it comes from the key schedule) but the sequence number
//! is public, so a record nonce costs nothing (XOR with constants). The
//! key is one wire vector shared by every block, which is what binds all
//! records of a direction to the one key the handshake derived. Keystream
//! bytes past the requested length are never computed: with dead-gate
//! elimination a partial last AES block pays only for the S-boxes of the
//! bytes it uses in the last round.

use crate::aes::{encrypt_block, encrypt_blocks_with, SboxKind};
use crate::builder::{const_bytes, Bit, Builder};
use crate::chacha::chacha20_block;

/// The per-record nonce of TLS 1.3 (RFC 8446 §5.3) and of ChaCha20-Poly1305
/// in TLS 1.2 (RFC 7905): the 12-byte IV XOR the big-endian sequence number
/// padded to 12 bytes. Free.
pub fn tls_nonce(b: &mut Builder, iv: &[Bit], seq: u64) -> Vec<Bit> {
    assert_eq!(iv.len(), 96, "IV is 12 bytes");
    let mut pad = [0u8; 12];
    pad[4..].copy_from_slice(&seq.to_be_bytes());
    b.xor_words(iv, &const_bytes(&pad))
}

/// The AES-GCM nonce of TLS 1.2 (RFC 5288 §3): the 4-byte implicit salt
/// (`*_write_IV`, secret) followed by the 8-byte explicit nonce sent in the
/// record (public).
pub fn tls12_gcm_nonce(salt: &[Bit], explicit: &[u8; 8]) -> Vec<Bit> {
    assert_eq!(salt.len(), 32, "GCM salt is 4 bytes");
    let mut n = salt.to_vec();
    n.extend(const_bytes(explicit));
    n
}

/// The product of two GCM field elements (16-byte blocks in GCM's
/// bit-reflected convention: the first byte's most significant bit is the
/// coefficient of `x^0`), reduced modulo `x^128 + x^7 + x^2 + x + 1`:
/// what GHASH multiplies by `H`. Karatsuba down to single bits, 3^7 = 2,187
/// AND; the reduction is XOR only.
pub fn gcm_mul(b: &mut Builder, x: &[Bit], y: &[Bit]) -> Vec<Bit> {
    assert!(x.len() == 128 && y.len() == 128, "GCM blocks are 16 bytes");
    // Coefficient `i` is wire `8·(i/8) + 7 − i%8` (wires are LSB-first per
    // byte); the map is its own inverse.
    let coef = |w: &[Bit]| -> Vec<Bit> { (0..128).map(|i| w[8 * (i / 8) + 7 - i % 8]).collect() };
    let mut p = poly_mul(b, &coef(x), &coef(y));
    for i in (128..255).rev() {
        let c = p[i];
        for t in [7, 2, 1, 0] {
            p[i - 128 + t] = b.xor(p[i - 128 + t], c);
        }
    }
    coef(&p[..128])
}

/// The product of two polynomials over GF(2) of the same power-of-two
/// length `n` (coefficient vectors, lowest first): `2n − 1` coefficients.
fn poly_mul(b: &mut Builder, x: &[Bit], y: &[Bit]) -> Vec<Bit> {
    let n = x.len();
    if n == 1 {
        return vec![b.and(x[0], y[0])];
    }
    let h = n / 2;
    let (xl, xh) = x.split_at(h);
    let (yl, yh) = y.split_at(h);
    let lo = poly_mul(b, xl, yl);
    let hi = poly_mul(b, xh, yh);
    let xs = b.xor_words(xl, xh);
    let ys = b.xor_words(yl, yh);
    let mid = poly_mul(b, &xs, &ys);
    let mut out = vec![Bit::ZERO; 2 * n - 1];
    for (i, &c) in lo.iter().enumerate() {
        out[i] = b.xor(out[i], c);
        out[i + h] = b.xor(out[i + h], c);
    }
    for (i, &c) in hi.iter().enumerate() {
        out[i + 2 * h] = b.xor(out[i + 2 * h], c);
        out[i + h] = b.xor(out[i + h], c);
    }
    for (i, &c) in mid.iter().enumerate() {
        out[i + h] = b.xor(out[i + h], c);
    }
    out
}

/// The GHASH key `H = E_K(0^128)`.
pub fn gcm_hash_key(b: &mut Builder, round_keys: &[Vec<Bit>]) -> Vec<Bit> {
    encrypt_block(b, round_keys, &const_bytes(&[0u8; 16]))
}

/// AES-GCM with a 12-byte nonce: returns `(E_K(J0), keystream)` where
/// `J0 = nonce || 1` masks the tag and the keystream of `len` bytes is
/// `E_K(nonce || 2), E_K(nonce || 3), ...` truncated. The blocks share
/// their first rounds' common work ([`encrypt_blocks_with`]): 27 S-boxes
/// fewer per block after the first.
pub fn aes_gcm_keystream(
    b: &mut Builder,
    round_keys: &[Vec<Bit>],
    nonce: &[Bit],
    len: usize,
) -> (Vec<Bit>, Vec<Bit>) {
    assert_eq!(nonce.len(), 96, "GCM nonce is 12 bytes");
    assert!(
        (len as u64) <= 16 * ((1u64 << 32) - 2),
        "GCM message too long"
    );
    // J0 = nonce ‖ 1, then the keystream's counters from 2: blocks that
    // share the nonce share most of their first two rounds.
    let blocks: Vec<Vec<Bit>> = (1..=1 + len.div_ceil(16) as u32)
        .map(|ctr| [nonce, &const_bytes(&ctr.to_be_bytes())].concat())
        .collect();
    let mut out = encrypt_blocks_with(b, round_keys, &blocks, SboxKind::Boolean).into_iter();
    let tag_mask = out.next().expect("J0 is the first block");
    let mut ks: Vec<Bit> = out.flatten().collect();
    ks.truncate(8 * len);
    (tag_mask, ks)
}

/// ChaCha20-Poly1305 (RFC 8439 §2.8): returns `(poly1305_key, keystream)`:
/// the one-time Poly1305 key is the first 32 bytes of block 0, the
/// keystream of `len` bytes starts at block 1.
pub fn chacha20_poly1305_keystream(
    b: &mut Builder,
    key: &[Bit],
    nonce: &[Bit],
    len: usize,
) -> (Vec<Bit>, Vec<Bit>) {
    assert!(
        (len as u64) <= 64 * ((1u64 << 32) - 1),
        "ChaCha20 message too long"
    );
    let mut block = |ctr: u32| chacha20_block(b, key, &const_bytes(&ctr.to_le_bytes()), nonce);
    let mut otk = block(0);
    otk.truncate(256);
    let mut ks = Vec::with_capacity(8 * len.next_multiple_of(64));
    for i in 0..len.div_ceil(64) {
        ks.extend(block(1 + i as u32));
    }
    ks.truncate(8 * len);
    (otk, ks)
}
