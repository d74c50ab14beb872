//! TLS 1.2 AES-GCM records in 2PC: the keystream of the prover's request
//! from the XOR-shared write key and IV ([`crate::tls12`]), and the tag from
//! shares of the powers of the GHASH key.
//!
//! Owns the record circuit and the GHASH arithmetic on shares; the
//! messages are [`crate::exec`]'s (the circuit) and [`crate::convert`]'s
//! (A2M, M2A over GF(2^128)).
//!
//! # Protocol for one record of `len` bytes
//! 1. **Circuit** ([`gcm_circuit`], preprocessed like any other): inputs
//!    `[prover key ‖ IV share, verifier key ‖ IV share, explicit nonce
//!    (public, 8 bytes), verifier masks (32 bytes)]`; outputs `[keystream
//!    E_K(nonce‖2), …, E_K(0)⊕m_H, E_K(J0)⊕m_J]`. Only the prover decodes
//!    (the verifier gets no output labels back), so the keystream goes to
//!    the prover alone, and the GHASH key `H = E_K(0)` and the tag mask
//!    `E_K(J0)` end as XOR shares (`m_H`, `m_J` with the verifier). The
//!    prover encrypts locally: `C = P ⊕ keystream`, and sends `C` to the
//!    verifier with the flips of the next step.
//! 2. **Powers of H** (two round trips, [`crate::convert`]'s recipe): one
//!    A2M turns the XOR (= additive) shares of `H` into multiplicative ones
//!    `h_V·h_P = H`; each raises its share to the powers `1..=k` with
//!    `k = 2 + ⌈len/16⌉` ([`powers_needed`]); one M2A batch gives additive
//!    shares of `H, …, H^k`. 128 COTs for the A2M, `128·k` for the M2A.
//! 3. **Tag**: both parties know the GHASH blocks `X_1..X_k` (AAD, `C`,
//!    lengths; [`ghash_blocks`]), so each computes
//!    `t_i = Σ X_j·[H^{k-j+1}]_i ⊕ [E_K(J0)]_i` locally ([`tag_share`]);
//!    the verifier sends `t_V` and the prover sends `C ‖ t_V ⊕ t_P`.
//!
//! # Security
//! The prover learns the keystream of its own request (it knows the
//! plaintext anyway; AES is a PRP, so keystream blocks say nothing about
//! the key) and `E_K(0)⊕m_H`, `E_K(J0)⊕m_J` (uniform). It cannot send
//! another request than the one the verifier saw: the tag is computed
//! jointly over the `C` the verifier received. The A2M reveals to the
//! prover whether `H = 0` (probability 2^-128). Semi-honest as the rest:
//! the consistency proof must also show that the key and IV shares input
//! here are the key derivation's outputs, and that the verifier's tag share
//! and A2M/M2A answers were computed from its masks.
//!
//! GHASH field elements: GCM's bit-reflected convention, mapped to the
//! polynomial basis of [`crate::field::Gf128`] by reversing the bits of
//! the big-endian 128-bit integer ([`gf_from_bytes`]).
use crate::field::Gf128;
use webproof_circuits::aead::{aes_gcm_keystream, gcm_hash_key, tls12_gcm_nonce};
use webproof_circuits::aes::{aes128_key_schedule, aes256_key_schedule};
use webproof_circuits::{Builder, Circuit};
use webproof_core::Block;

/// The record circuit for a `key_len`-byte AES key (16 or 32) and `len`
/// bytes of keystream (see the module docs for its groups).
pub fn gcm_circuit(key_len: usize, len: usize) -> Circuit {
    assert!(key_len == 16 || key_len == 32, "AES-128 or AES-256");
    let mut b = Builder::new();
    let sp = b.input_bytes(key_len + 4);
    let sv = b.input_bytes(key_len + 4);
    let explicit = b.input_bytes(8);
    let masks = b.input_bytes(32);
    let s = b.xor_words(&sp, &sv);
    let (key, salt) = s.split_at(8 * key_len);
    let rk = if key_len == 16 {
        aes128_key_schedule(&mut b, key)
    } else {
        aes256_key_schedule(&mut b, key)
    };
    let mut nonce = salt.to_vec();
    nonce.extend_from_slice(&explicit);
    debug_assert_eq!(nonce.len(), tls12_gcm_nonce(salt, &[0; 8]).len());
    let (j0, ks) = aes_gcm_keystream(&mut b, &rk, &nonce, len);
    let h = gcm_hash_key(&mut b, &rk);
    b.output(&ks);
    let h = b.xor_words(&h, &masks[..128]);
    b.output(&h);
    let j0 = b.xor_words(&j0, &masks[128..]);
    b.output(&j0);
    b.finish()
}

/// Powers of `H` the tag of a `len`-byte record needs (AAD block, data
/// blocks, length block).
pub fn powers_needed(len: usize) -> usize {
    2 + len.div_ceil(16)
}

/// A GCM block as a field element.
pub fn gf_from_bytes(b: &[u8; 16]) -> Gf128 {
    Gf128(Block(u128::from_be_bytes(*b).reverse_bits()))
}

/// A field element as a GCM block.
pub fn gf_to_bytes(x: Gf128) -> [u8; 16] {
    x.0 .0.reverse_bits().to_be_bytes()
}

/// The GHASH input blocks of (`aad`, `ct`): both zero-padded, then the
/// bit lengths.
pub fn ghash_blocks(aad: &[u8], ct: &[u8]) -> Vec<Gf128> {
    let mut out = Vec::new();
    for part in [aad, ct] {
        for c in part.chunks(16) {
            let mut blk = [0u8; 16];
            blk[..c.len()].copy_from_slice(c);
            out.push(gf_from_bytes(&blk));
        }
    }
    let mut l = [0u8; 16];
    l[..8].copy_from_slice(&(8 * aad.len() as u64).to_be_bytes());
    l[8..].copy_from_slice(&(8 * ct.len() as u64).to_be_bytes());
    out.push(gf_from_bytes(&l));
    out
}

/// One party's share of the tag: `Σ X_j·[H^{k-j+1}] + [E_K(J0)]` for the
/// `k` blocks `x` and shares `powers[i] = [H^{i+1}]` (at least `k`).
pub fn tag_share(x: &[Gf128], powers: &[Gf128], j0_share: &[u8; 16]) -> Option<[u8; 16]> {
    let k = x.len();
    if powers.len() < k {
        return None;
    }
    let mut acc = gf_from_bytes(j0_share);
    for (j, &xj) in x.iter().enumerate() {
        acc = acc + xj * powers[k - 1 - j];
    }
    Some(gf_to_bytes(acc))
}

/// The TLS 1.2 AEAD additional data (RFC 5246 §6.2.3.3): sequence number,
/// content type, version 3.3, plaintext length.
pub fn tls12_aad(seq: u64, content_type: u8, len: usize) -> [u8; 13] {
    let mut a = [0u8; 13];
    a[..8].copy_from_slice(&seq.to_be_bytes());
    a[8] = content_type;
    a[9..11].copy_from_slice(&[3, 3]);
    a[11..].copy_from_slice(&(len as u16).to_be_bytes());
    a
}
