//! HMAC with cached pads, HKDF (RFC 5869) with the TLS 1.3 labels (RFC 8446
//! §7.1), and the TLS 1.2 PRF (RFC 5246 §5), over SHA-256 or SHA-384.
//!
//! [`HmacKey::new`] runs the two compressions of `key ^ ipad` and
//! `key ^ opad` once; every MAC under that key then costs the compressions of
//! its inner message plus one outer compression (2 in total for a message of
//! up to 55 bytes with SHA-256, 111 with SHA-384). HKDF-Expand and the PRF
//! reuse one `HmacKey` for all their MACs. Labels, transcript hashes, randoms
//! and padding are public constants that fold into the circuit.

use crate::builder::{const_bytes, Bit, Builder};
use crate::sha2::{hash, hash_from_state, HashAlg};

/// A secret HMAC key with its inner and outer chaining states computed.
#[derive(Clone, Debug)]
pub struct HmacKey {
    alg: HashAlg,
    inner: Vec<Bit>,
    outer: Vec<Bit>,
}

impl HmacKey {
    /// Compute the pads of `key` (2 compressions; a key longer than a block
    /// is hashed first, as HMAC specifies).
    pub fn new(b: &mut Builder, alg: HashAlg, key: &[Bit]) -> Self {
        assert!(key.len() % 8 == 0, "key is not whole bytes");
        let bl = alg.block_len();
        let mut k = if key.len() / 8 > bl {
            hash(b, alg, key)
        } else {
            key.to_vec()
        };
        k.resize(8 * bl, Bit::ZERO);
        let iv = const_bytes(&alg.iv());
        let pad = |b: &mut Builder, byte: u8| -> Vec<Bit> {
            let p = const_bytes(&vec![byte; bl]);
            b.xor_words(&k, &p)
        };
        let ipad = pad(b, 0x36);
        let opad = pad(b, 0x5c);
        let inner = alg.compress(b, &iv, &ipad);
        let outer = alg.compress(b, &iv, &opad);
        HmacKey { alg, inner, outer }
    }

    /// A key given by its chaining states after `key ^ ipad` and `key ^ opad`
    /// (for instance computed once and committed separately).
    pub fn from_states(alg: HashAlg, inner: Vec<Bit>, outer: Vec<Bit>) -> Self {
        assert_eq!(inner.len(), 8 * alg.state_len(), "inner state length");
        assert_eq!(outer.len(), 8 * alg.state_len(), "outer state length");
        HmacKey { alg, inner, outer }
    }

    /// The chaining state after `key ^ ipad`.
    pub fn inner_state(&self) -> &[Bit] {
        &self.inner
    }

    /// The chaining state after `key ^ opad`.
    pub fn outer_state(&self) -> &[Bit] {
        &self.outer
    }

    /// The hash function.
    pub fn alg(&self) -> HashAlg {
        self.alg
    }

    /// HMAC of `msg` (bits of whole bytes; public bytes as constants).
    pub fn mac(&self, b: &mut Builder, msg: &[Bit]) -> Vec<Bit> {
        let bl = self.alg.block_len();
        let inner = hash_from_state(b, self.alg, &self.inner, bl, msg);
        hash_from_state(b, self.alg, &self.outer, bl, &inner)
    }
}

/// HMAC of `msg` under `key` without caching (4 or more compressions).
pub fn hmac(b: &mut Builder, alg: HashAlg, key: &[Bit], msg: &[Bit]) -> Vec<Bit> {
    HmacKey::new(b, alg, key).mac(b, msg)
}

/// HKDF-Extract(salt, ikm) = HMAC(salt, ikm).
pub fn hkdf_extract(b: &mut Builder, alg: HashAlg, salt: &[Bit], ikm: &[Bit]) -> Vec<Bit> {
    let salt = if salt.is_empty() {
        vec![Bit::ZERO; 8 * alg.output_len()]
    } else {
        salt.to_vec()
    };
    hmac(b, alg, &salt, ikm)
}

/// HKDF-Expand(prk, info, len) with the pads of `prk` already computed.
pub fn hkdf_expand(b: &mut Builder, prk: &HmacKey, info: &[Bit], len: usize) -> Vec<Bit> {
    let hl = prk.alg.output_len();
    assert!(len <= 255 * hl, "HKDF-Expand output too long");
    let mut out: Vec<Bit> = Vec::with_capacity(8 * len);
    let mut t: Vec<Bit> = Vec::new();
    let mut i: u8 = 1;
    while out.len() < 8 * len {
        let mut msg = t.clone();
        msg.extend_from_slice(info);
        msg.extend(const_bytes(&[i]));
        t = prk.mac(b, &msg);
        out.extend_from_slice(&t);
        i += 1;
    }
    out.truncate(8 * len);
    out
}

/// The public `HkdfLabel` structure of RFC 8446 §7.1 (with the "tls13 " prefix).
pub fn hkdf_label(label: &str, context: &[u8], len: usize) -> Vec<u8> {
    let full = [b"tls13 ".as_slice(), label.as_bytes()].concat();
    assert!(full.len() <= 255 && context.len() <= 255 && len <= 0xffff);
    let mut v = Vec::with_capacity(4 + full.len() + context.len());
    v.extend_from_slice(&(len as u16).to_be_bytes());
    v.push(full.len() as u8);
    v.extend_from_slice(&full);
    v.push(context.len() as u8);
    v.extend_from_slice(context);
    v
}

/// HKDF-Expand-Label(secret, label, context, len) of TLS 1.3; the label and
/// context (a transcript hash, or empty) are public constants.
pub fn hkdf_expand_label(
    b: &mut Builder,
    secret: &HmacKey,
    label: &str,
    context: &[u8],
    len: usize,
) -> Vec<Bit> {
    hkdf_expand_label_bits(b, secret, label, &const_bytes(context), len)
}

/// HKDF-Expand-Label with the context given as bits (whole bytes), e.g. a
/// transcript hash that is a public *input* of the circuit rather than a
/// constant, so that one circuit serves every session.
pub fn hkdf_expand_label_bits(
    b: &mut Builder,
    secret: &HmacKey,
    label: &str,
    context: &[Bit],
    len: usize,
) -> Vec<Bit> {
    assert!(context.len() % 8 == 0, "context is not whole bytes");
    let ctx_len = context.len() / 8;
    // HkdfLabel = length || label with prefix || context, both length-prefixed.
    let head = hkdf_label(label, &[], len);
    let mut info = const_bytes(&head[..head.len() - 1]);
    info.extend(const_bytes(&[ctx_len as u8]));
    info.extend_from_slice(context);
    assert!(ctx_len <= 255, "context too long");
    hkdf_expand(b, secret, &info, len)
}

/// TLS 1.2 PRF: P_hash(secret, label || seed) truncated to `len` bytes,
/// with the pads of the secret already computed (RFC 5246 §5). The label and
/// seed are public constants.
pub fn tls12_prf(
    b: &mut Builder,
    secret: &HmacKey,
    label: &str,
    seed: &[u8],
    len: usize,
) -> Vec<Bit> {
    tls12_prf_bits(b, secret, label, &const_bytes(seed), len)
}

/// TLS 1.2 PRF with the seed given as bits (constants or public inputs).
pub fn tls12_prf_bits(
    b: &mut Builder,
    secret: &HmacKey,
    label: &str,
    seed: &[Bit],
    len: usize,
) -> Vec<Bit> {
    let mut full_seed = const_bytes(label.as_bytes());
    full_seed.extend_from_slice(seed);
    let mut out = Vec::with_capacity(8 * len);
    // A(1) = HMAC(secret, seed), A(i) = HMAC(secret, A(i-1)).
    let mut a = secret.mac(b, &full_seed);
    while out.len() < 8 * len {
        let mut msg = a.clone();
        msg.extend_from_slice(&full_seed);
        out.extend(secret.mac(b, &msg));
        if out.len() < 8 * len {
            a = secret.mac(b, &a);
        }
    }
    out.truncate(8 * len);
    out
}
