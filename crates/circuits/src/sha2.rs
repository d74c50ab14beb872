//! SHA-256 and SHA-512 compression functions, and SHA-256/384 hashing of
//! messages whose length is fixed when the circuit is built.
//!
//! States and blocks are byte strings in the crate bit order, with the state
//! words serialised big-endian, so a state is exactly the digest bytes (the
//! SHA-256 initial state is `IV256` serialised, the output of the last
//! compression is the digest).
//!
//! Cost of a SHA-256 compression with state and block both unknown: 22,271
//! AND, against 22,696 with chained ripple-carry adders (7 additions of 31
//! AND per round, 3 per schedule word, 8 for the feed-forward). The 425 saved
//! come from [`Builder::add_many`], which reduces multi-operand sums column by
//! column with full adders (one AND each) instead of chaining adders: the
//! five-operand `T1 = h + Σ1(e) + Ch + K + W` costs about 119 instead of 124
//! (part of that: a half adder with a constant bit of `K` is free),
//! the three-operand `a' = T1 + Σ0(a) + Maj` 61 instead of 62, the
//! four-operand schedule word 92 instead of 93; `T1` is shared by `a'` and
//! `e' = d + T1`. Ch and Maj cost one AND per bit, and Maj reuses the previous
//! round's `a ^ b` as `b ^ c`. Public parts (IVs, padding, public message words)
//! fold away: a block whose 16 words are all public has a free message
//! schedule and its `K + W` is one constant.

use crate::bits::{be_words, from_be_words};
use crate::builder::{const_bytes, const_word, rotr, shr, Bit, Builder};
use crate::Circuit;

/// A SHA-2 hash function used by TLS.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HashAlg {
    /// SHA-256 (32-bit words, 64-byte blocks, 32-byte digest).
    Sha256,
    /// SHA-384: the SHA-512 compression with its own IV, digest truncated to 48 bytes.
    Sha384,
}

impl HashAlg {
    /// Block length in bytes (64 or 128).
    pub fn block_len(self) -> usize {
        match self {
            HashAlg::Sha256 => 64,
            HashAlg::Sha384 => 128,
        }
    }

    /// Digest length in bytes (32 or 48).
    pub fn output_len(self) -> usize {
        match self {
            HashAlg::Sha256 => 32,
            HashAlg::Sha384 => 48,
        }
    }

    /// Chaining state length in bytes (32 or 64).
    pub fn state_len(self) -> usize {
        match self {
            HashAlg::Sha256 => 32,
            HashAlg::Sha384 => 64,
        }
    }

    /// The initial chaining state, serialised big-endian.
    pub fn iv(self) -> Vec<u8> {
        match self {
            HashAlg::Sha256 => IV256
                .iter()
                .flat_map(|&w| (w as u32).to_be_bytes())
                .collect(),
            HashAlg::Sha384 => IV384.iter().flat_map(|&w| w.to_be_bytes()).collect(),
        }
    }

    /// One compression: new chaining state from a state and a block.
    pub fn compress(self, b: &mut Builder, state: &[Bit], block: &[Bit]) -> Vec<Bit> {
        match self {
            HashAlg::Sha256 => sha256_compress(b, state, block),
            HashAlg::Sha384 => sha512_compress(b, state, block),
        }
    }

    /// Number of compressions to hash `len` bytes (with padding).
    pub fn blocks_for(self, len: usize) -> usize {
        let lenfield = if self == HashAlg::Sha256 { 8 } else { 16 };
        (len + 1 + lenfield).div_ceil(self.block_len())
    }
}

struct Params {
    w: usize,
    k: &'static [u64],
    big0: [usize; 3],
    big1: [usize; 3],
    small0: [usize; 3],
    small1: [usize; 3],
}

const P256: Params = Params {
    w: 32,
    k: &K256,
    big0: [2, 13, 22],
    big1: [6, 11, 25],
    small0: [7, 18, 3],
    small1: [17, 19, 10],
};

const P512: Params = Params {
    w: 64,
    k: &K512,
    big0: [28, 34, 39],
    big1: [14, 18, 41],
    small0: [1, 8, 7],
    small1: [19, 61, 6],
};

fn big_sigma(b: &mut Builder, x: &[Bit], r: [usize; 3]) -> Vec<Bit> {
    let t = b.xor_words(&rotr(x, r[0]), &rotr(x, r[1]));
    b.xor_words(&t, &rotr(x, r[2]))
}

fn small_sigma(b: &mut Builder, x: &[Bit], r: [usize; 3]) -> Vec<Bit> {
    let t = b.xor_words(&rotr(x, r[0]), &rotr(x, r[1]));
    b.xor_words(&t, &shr(x, r[2]))
}

fn compress(b: &mut Builder, p: &Params, state: &[Bit], block: &[Bit]) -> Vec<Bit> {
    assert_eq!(block.len(), 16 * p.w, "wrong SHA-2 block length");
    let mut w = be_words(block, p.w);
    for t in 16..p.k.len() {
        let s1 = small_sigma(b, &w[t - 2], p.small1);
        let s0 = small_sigma(b, &w[t - 15], p.small0);
        let next = b.add_many(&[&s1, &w[t - 7], &s0, &w[t - 16]]);
        w.push(next);
    }
    // K_t and W_t stay separate operands: add_many folds K_t (and W_t when
    // it is public) into one constant.
    rounds(b, p, state, |t| vec![const_word(p.k[t], p.w), w[t].clone()])
}

/// The rounds and the feed-forward; `addends(t)` gives the words added to
/// `T1` in round `t` besides `h`, `Σ1(e)` and `Ch(e, f, g)`.
fn rounds(
    b: &mut Builder,
    p: &Params,
    state: &[Bit],
    addends: impl Fn(usize) -> Vec<Vec<Bit>>,
) -> Vec<Bit> {
    assert_eq!(state.len(), 8 * p.w, "wrong SHA-2 state length");
    let h_in = be_words(state, p.w);
    let mut v = h_in.clone();
    // Maj(a, b, c) = ((a ^ b) & (b ^ c)) ^ b, and this round's a ^ b is the
    // next round's b ^ c: one XOR per bit saved.
    let mut prev_ab: Option<Vec<Bit>> = None;
    for t in 0..p.k.len() {
        let (a, bb, c, d, e, f, g, h) = (&v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
        let s1 = big_sigma(b, e, p.big1);
        let ch = b.ch(e, f, g);
        let extra = addends(t);
        let mut ops: Vec<&[Bit]> = vec![h, &s1, &ch];
        ops.extend(extra.iter().map(Vec::as_slice));
        let t1 = b.add_many(&ops);
        let s0 = big_sigma(b, a, p.big0);
        let ab = b.xor_words(a, bb);
        let bc = match prev_ab.take() {
            Some(x) => x,
            None => b.xor_words(bb, c),
        };
        let m = b.and_words(&ab, &bc);
        let maj = b.xor_words(&m, bb);
        prev_ab = Some(ab);
        let new_a = b.add_many(&[&t1, &s0, &maj]);
        let new_e = b.add(d, &t1);
        v.rotate_right(1);
        v[0] = new_a;
        v[4] = new_e;
    }
    let out: Vec<Vec<Bit>> = h_in.iter().zip(&v).map(|(x, y)| b.add(x, y)).collect();
    from_be_words(&out)
}

/// SHA-256 compression: 32-byte state, 64-byte block -> 32-byte state.
pub fn sha256_compress(b: &mut Builder, state: &[Bit], block: &[Bit]) -> Vec<Bit> {
    compress(b, &P256, state, block)
}

/// SHA-512 compression (also SHA-384's): 64-byte state, 128-byte block -> 64-byte state.
pub fn sha512_compress(b: &mut Builder, state: &[Bit], block: &[Bit]) -> Vec<Bit> {
    compress(b, &P512, state, block)
}

fn params(alg: HashAlg) -> &'static Params {
    match alg {
        HashAlg::Sha256 => &P256,
        HashAlg::Sha384 => &P512,
    }
}

/// For a *public* block: `K_t + W_t` for every round, computed in the clear
/// and serialised as big-endian words (64·4 bytes for SHA-256, 80·8 for
/// SHA-512). This is the second input of [`compress_public_schedule`].
pub fn public_schedule(alg: HashAlg, block: &[u8]) -> Vec<u8> {
    let p = params(alg);
    let wb = p.w / 8;
    assert_eq!(block.len(), 16 * wb, "wrong SHA-2 block length");
    let mask = if p.w == 64 {
        u64::MAX
    } else {
        (1u64 << p.w) - 1
    };
    let rot = |x: u64, r: usize| ((x >> r) | (x << (p.w - r))) & mask;
    let mut w: Vec<u64> = block
        .chunks(wb)
        .map(|c| c.iter().fold(0u64, |acc, &x| (acc << 8) | x as u64))
        .collect();
    for t in 16..p.k.len() {
        let (x, y) = (w[t - 2], w[t - 15]);
        let s1 = rot(x, p.small1[0]) ^ rot(x, p.small1[1]) ^ (x >> p.small1[2]);
        let s0 = rot(y, p.small0[0]) ^ rot(y, p.small0[1]) ^ (y >> p.small0[2]);
        w.push(
            s1.wrapping_add(w[t - 7])
                .wrapping_add(s0)
                .wrapping_add(w[t - 16])
                & mask,
        );
    }
    w.iter()
        .zip(p.k)
        .flat_map(|(&w, &k)| (w.wrapping_add(k) & mask).to_be_bytes()[8 - wb..].to_vec())
        .collect()
}

/// Compression of a public block given as its round addends `K_t + W_t`
/// ([`public_schedule`]) rather than as the block: the message schedule is
/// then free, so one fixed circuit serves every public block (labels,
/// transcript hashes, padding) while the state stays secret.
pub fn compress_public_schedule(
    b: &mut Builder,
    alg: HashAlg,
    state: &[Bit],
    kw: &[Bit],
) -> Vec<Bit> {
    let p = params(alg);
    assert_eq!(kw.len(), p.k.len() * p.w, "wrong schedule length");
    let words = be_words(kw, p.w);
    rounds(b, p, state, |t| vec![words[t].clone()])
}

/// [`compress_public_schedule`] as a circuit. Inputs: `[state, K+W
/// schedule]` (the second public); output: `[state]`. SHA-256: 16,120 AND.
pub fn compress_public_schedule_circuit(alg: HashAlg) -> Circuit {
    let p = params(alg);
    let mut b = Builder::new();
    let s = b.input(8 * p.w);
    let kw = b.input(p.k.len() * p.w);
    let out = compress_public_schedule(&mut b, alg, &s, &kw);
    b.output(&out);
    b.finish()
}

/// The padding appended to a message of `total_len` bytes (hashed from the IV).
pub fn padding(alg: HashAlg, total_len: usize) -> Vec<u8> {
    let lenfield = if alg == HashAlg::Sha256 { 8 } else { 16 };
    let bl = alg.block_len();
    let zeros = (bl - (total_len + 1 + lenfield) % bl) % bl;
    let mut pad = vec![0x80];
    pad.resize(1 + zeros, 0);
    let bits = (total_len as u128) * 8;
    pad.extend_from_slice(&bits.to_be_bytes()[16 - lenfield..]);
    pad
}

/// Continue a hash: `state` is the chaining state after `prefix_len` bytes
/// (a whole number of blocks) and `msg` the rest of the message; returns the
/// digest (truncated for SHA-384). Padding is public and folds away.
pub fn hash_from_state(
    b: &mut Builder,
    alg: HashAlg,
    state: &[Bit],
    prefix_len: usize,
    msg: &[Bit],
) -> Vec<Bit> {
    assert!(
        prefix_len % alg.block_len() == 0,
        "prefix is not whole blocks"
    );
    assert!(msg.len() % 8 == 0, "message is not whole bytes");
    let mut data = msg.to_vec();
    data.extend(const_bytes(&padding(alg, prefix_len + msg.len() / 8)));
    let mut st = state.to_vec();
    for block in data.chunks(8 * alg.block_len()) {
        st = alg.compress(b, &st, block);
    }
    st.truncate(8 * alg.output_len());
    st
}

/// Hash a message of fixed length from the standard IV.
pub fn hash(b: &mut Builder, alg: HashAlg, msg: &[Bit]) -> Vec<Bit> {
    let iv = const_bytes(&alg.iv());
    hash_from_state(b, alg, &iv, 0, msg)
}

/// Hash public bytes in the clear. The whole circuit folds to constants
/// while it is built, so this is the circuit evaluated at build time (used
/// for public values such as the hash of the empty string).
pub fn digest(alg: HashAlg, msg: &[u8]) -> Vec<u8> {
    let mut b = Builder::new();
    let out = hash(&mut b, alg, &const_bytes(msg));
    let bits: Vec<bool> = out
        .iter()
        .map(|bit| bit.as_const().expect("a hash of constants is constant"))
        .collect();
    crate::bits::bits_to_bytes(&bits)
}

/// The SHA-512 initial chaining state, serialised big-endian.
pub fn sha512_iv() -> Vec<u8> {
    IV512.iter().flat_map(|&w| w.to_be_bytes()).collect()
}

/// SHA-256 compression circuit. Inputs: `[state (32 B), block (64 B)]`;
/// output: `[state (32 B)]`.
pub fn sha256_compress_circuit() -> Circuit {
    let mut b = Builder::new();
    let s = b.input_bytes(32);
    let m = b.input_bytes(64);
    let out = sha256_compress(&mut b, &s, &m);
    b.output(&out);
    b.finish()
}

/// SHA-512 compression circuit. Inputs: `[state (64 B), block (128 B)]`;
/// output: `[state (64 B)]`.
pub fn sha512_compress_circuit() -> Circuit {
    let mut b = Builder::new();
    let s = b.input_bytes(64);
    let m = b.input_bytes(128);
    let out = sha512_compress(&mut b, &s, &m);
    b.output(&out);
    b.finish()
}

/// Hash of a secret message of exactly `len` bytes. Input: `[message]`;
/// output: `[digest]`.
pub fn hash_circuit(alg: HashAlg, len: usize) -> Circuit {
    let mut b = Builder::new();
    let m = b.input_bytes(len);
    let out = hash(&mut b, alg, &m);
    b.output(&out);
    b.finish()
}

// Round constants and initial states: fractional parts of cube and square
// roots of the first primes (FIPS 180-4 §4.2, §5.3), generated and checked
// against the reference implementation by the tests.
/// SHA-256 round constants (FIPS 180-4 §4.2.2), widened to `u64`.
pub const K256: [u64; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];
/// SHA-512 round constants (FIPS 180-4 §4.2.3).
pub const K512: [u64; 80] = [
    0x428a2f98d728ae22,
    0x7137449123ef65cd,
    0xb5c0fbcfec4d3b2f,
    0xe9b5dba58189dbbc,
    0x3956c25bf348b538,
    0x59f111f1b605d019,
    0x923f82a4af194f9b,
    0xab1c5ed5da6d8118,
    0xd807aa98a3030242,
    0x12835b0145706fbe,
    0x243185be4ee4b28c,
    0x550c7dc3d5ffb4e2,
    0x72be5d74f27b896f,
    0x80deb1fe3b1696b1,
    0x9bdc06a725c71235,
    0xc19bf174cf692694,
    0xe49b69c19ef14ad2,
    0xefbe4786384f25e3,
    0x0fc19dc68b8cd5b5,
    0x240ca1cc77ac9c65,
    0x2de92c6f592b0275,
    0x4a7484aa6ea6e483,
    0x5cb0a9dcbd41fbd4,
    0x76f988da831153b5,
    0x983e5152ee66dfab,
    0xa831c66d2db43210,
    0xb00327c898fb213f,
    0xbf597fc7beef0ee4,
    0xc6e00bf33da88fc2,
    0xd5a79147930aa725,
    0x06ca6351e003826f,
    0x142929670a0e6e70,
    0x27b70a8546d22ffc,
    0x2e1b21385c26c926,
    0x4d2c6dfc5ac42aed,
    0x53380d139d95b3df,
    0x650a73548baf63de,
    0x766a0abb3c77b2a8,
    0x81c2c92e47edaee6,
    0x92722c851482353b,
    0xa2bfe8a14cf10364,
    0xa81a664bbc423001,
    0xc24b8b70d0f89791,
    0xc76c51a30654be30,
    0xd192e819d6ef5218,
    0xd69906245565a910,
    0xf40e35855771202a,
    0x106aa07032bbd1b8,
    0x19a4c116b8d2d0c8,
    0x1e376c085141ab53,
    0x2748774cdf8eeb99,
    0x34b0bcb5e19b48a8,
    0x391c0cb3c5c95a63,
    0x4ed8aa4ae3418acb,
    0x5b9cca4f7763e373,
    0x682e6ff3d6b2b8a3,
    0x748f82ee5defb2fc,
    0x78a5636f43172f60,
    0x84c87814a1f0ab72,
    0x8cc702081a6439ec,
    0x90befffa23631e28,
    0xa4506cebde82bde9,
    0xbef9a3f7b2c67915,
    0xc67178f2e372532b,
    0xca273eceea26619c,
    0xd186b8c721c0c207,
    0xeada7dd6cde0eb1e,
    0xf57d4f7fee6ed178,
    0x06f067aa72176fba,
    0x0a637dc5a2c898a6,
    0x113f9804bef90dae,
    0x1b710b35131c471b,
    0x28db77f523047d84,
    0x32caab7b40c72493,
    0x3c9ebe0a15c9bebc,
    0x431d67c49c100d4c,
    0x4cc5d4becb3e42b6,
    0x597f299cfc657e2a,
    0x5fcb6fab3ad6faec,
    0x6c44198c4a475817,
];
const IV256: [u64; 8] = [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];
const IV512: [u64; 8] = [
    0x6a09e667f3bcc908,
    0xbb67ae8584caa73b,
    0x3c6ef372fe94f82b,
    0xa54ff53a5f1d36f1,
    0x510e527fade682d1,
    0x9b05688c2b3e6c1f,
    0x1f83d9abfb41bd6b,
    0x5be0cd19137e2179,
];
const IV384: [u64; 8] = [
    0xcbbb9d5dc1059ed8,
    0x629a292a367cd507,
    0x9159015a3070dd17,
    0x152fecd8f70e5939,
    0x67332667ffc00b31,
    0x8eb44a8768581511,
    0xdb0c2e0d64f98fa7,
    0x47b5481dbefa4fa4,
];
