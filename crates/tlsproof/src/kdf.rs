//! TLS key derivation inside the proof, composed from small fixed circuits.
//!
//! A per-session circuit with the transcript hashes folded in would have to
//! be built for every session (hundreds of milliseconds) and held in memory
//! whole (millions of gates). Instead, HMAC, HKDF and the TLS 1.2 PRF are run
//! here compression by compression, on two circuits built once per process:
//!
//! - the full compression (`state`, `block` both authenticated), used where
//!   the block holds secret bits (key pads, outer hashes, PRF chaining);
//! - the *public-block* compression, whose message schedule `W_0..W_63` is
//!   computed in the clear and enters as public constants, used where the
//!   whole block is public (labels, transcript hashes, padding) — it skips the
//!   message schedule's additions (about a fifth of the AND gates).
//!
//! The outputs match `webproof_circuits::tls` bit for bit (tested).

use crate::party::ZkParty;
use crate::Result;
use std::sync::OnceLock;
use webproof_circuits::bits::{be_words, bytes_to_bits, from_be_words};
use webproof_circuits::builder::rotr;
use webproof_circuits::hmac::hkdf_label;
use webproof_circuits::sha2::{padding, HashAlg};
use webproof_circuits::{Bit, Builder, Circuit};

/// A message bit: public (known to both) or authenticated.
#[derive(Clone, Copy)]
pub enum MBit<B> {
    Pub(bool),
    Sec(B),
}

/// Public bytes as message bits.
pub fn public<B>(bytes: &[u8]) -> Vec<MBit<B>> {
    bytes_to_bits(bytes).into_iter().map(MBit::Pub).collect()
}

/// Authenticated bits as message bits.
pub fn secret<B: Copy>(bits: &[B]) -> Vec<MBit<B>> {
    bits.iter().map(|&b| MBit::Sec(b)).collect()
}

struct Sha {
    w: usize,
    rounds: usize,
    big0: [usize; 3],
    big1: [usize; 3],
    small0: [usize; 3],
    small1: [usize; 3],
}

const SHA256: Sha = Sha {
    w: 32,
    rounds: 64,
    big0: [2, 13, 22],
    big1: [6, 11, 25],
    small0: [7, 18, 3],
    small1: [17, 19, 10],
};
const SHA512: Sha = Sha {
    w: 64,
    rounds: 80,
    big0: [28, 34, 39],
    big1: [14, 18, 41],
    small0: [1, 8, 7],
    small1: [19, 61, 6],
};

fn params(alg: HashAlg) -> &'static Sha {
    match alg {
        HashAlg::Sha256 => &SHA256,
        HashAlg::Sha384 => &SHA512,
    }
}

/// The message schedule of a public block, in the clear.
fn schedule(alg: HashAlg, block: &[u8]) -> Vec<u64> {
    let p = params(alg);
    let bytes = p.w / 8;
    let mask = if p.w == 64 {
        u64::MAX
    } else {
        (1u64 << p.w) - 1
    };
    let rot = |x: u64, r: usize| ((x >> r) | (x << (p.w - r))) & mask;
    let mut w: Vec<u64> = block
        .chunks(bytes)
        .map(|c| c.iter().fold(0u64, |acc, &b| (acc << 8) | b as u64))
        .collect();
    for t in 16..p.rounds {
        let s0 =
            rot(w[t - 15], p.small0[0]) ^ rot(w[t - 15], p.small0[1]) ^ (w[t - 15] >> p.small0[2]);
        let s1 =
            rot(w[t - 2], p.small1[0]) ^ rot(w[t - 2], p.small1[1]) ^ (w[t - 2] >> p.small1[2]);
        w.push(
            s1.wrapping_add(w[t - 7])
                .wrapping_add(s0)
                .wrapping_add(w[t - 16])
                & mask,
        );
    }
    w
}

fn sigma3(b: &mut Builder, x: &[Bit], r: [usize; 3]) -> Vec<Bit> {
    let t = b.xor_words(&rotr(x, r[0]), &rotr(x, r[1]));
    b.xor_words(&t, &rotr(x, r[2]))
}

/// The round constants `K_t`, added to the public schedule in the clear.
fn round_constants(alg: HashAlg) -> &'static [u64] {
    match alg {
        HashAlg::Sha256 => &webproof_circuits::sha2::K256,
        HashAlg::Sha384 => &webproof_circuits::sha2::K512,
    }
}

/// Compression with a public block: inputs `[state, K_t + W_t for every round
/// (big-endian words)]`, output `[new state]`.
fn public_block_circuit(alg: HashAlg) -> &'static Circuit {
    static C256: OnceLock<Circuit> = OnceLock::new();
    static C512: OnceLock<Circuit> = OnceLock::new();
    let cell = if alg == HashAlg::Sha256 { &C256 } else { &C512 };
    cell.get_or_init(|| {
        let p = params(alg);
        let mut b = Builder::new();
        let state = b.input(8 * p.w);
        let kw_bits = b.input(p.rounds * p.w);
        let kw = be_words(&kw_bits, p.w);
        let h_in = be_words(&state, p.w);
        let mut v = h_in.clone();
        for kw_t in kw.iter() {
            let s1 = sigma3(&mut b, &v[4], p.big1);
            let ch = b.ch(&v[4], &v[5], &v[6]);
            let t1 = b.add_many(&[&v[7], &s1, &ch, kw_t]);
            let s0 = sigma3(&mut b, &v[0], p.big0);
            let maj = b.maj_words(&v[0], &v[1], &v[2]);
            let new_a = b.add_many(&[&t1, &s0, &maj]);
            let new_e = b.add(&v[3], &t1);
            v.rotate_right(1);
            v[0] = new_a;
            v[4] = new_e;
        }
        let out: Vec<Vec<Bit>> = h_in.iter().zip(&v).map(|(x, y)| b.add(x, y)).collect();
        b.output(&from_be_words(&out));
        b.finish()
    })
}

fn full_circuit(alg: HashAlg) -> &'static Circuit {
    match alg {
        HashAlg::Sha256 => webproof_circuits::cache::sha256_compress(),
        HashAlg::Sha384 => webproof_circuits::cache::sha512_compress(),
    }
}

/// One compression of `block` into `state`.
async fn compress<P: ZkParty>(
    party: &mut P,
    alg: HashAlg,
    state: &[P::Bit],
    block: &[MBit<P::Bit>],
) -> Result<Vec<P::Bit>> {
    let all_public: Option<Vec<bool>> = block
        .iter()
        .map(|b| match b {
            MBit::Pub(v) => Some(*v),
            MBit::Sec(_) => None,
        })
        .collect();
    let out = match all_public {
        Some(bits) => {
            let p = params(alg);
            let bytes = webproof_circuits::bits_to_bytes(&bits);
            let w = schedule(alg, &bytes);
            let mask = if p.w == 64 {
                u64::MAX
            } else {
                (1u64 << p.w) - 1
            };
            let kw_bytes: Vec<u8> = w
                .iter()
                .zip(round_constants(alg))
                .flat_map(|(w, k)| {
                    let v = w.wrapping_add(*k) & mask;
                    v.to_be_bytes()[8 - p.w / 8..].to_vec()
                })
                .collect();
            let kw: Vec<P::Bit> = bytes_to_bits(&kw_bytes)
                .into_iter()
                .map(|b| party.constant(b))
                .collect();
            party.eval(public_block_circuit(alg), &[state, &kw]).await?
        }
        None => {
            let bits: Vec<P::Bit> = block
                .iter()
                .map(|b| match b {
                    MBit::Pub(v) => party.constant(*v),
                    MBit::Sec(x) => *x,
                })
                .collect();
            party.eval(full_circuit(alg), &[state, &bits]).await?
        }
    };
    Ok(out.into_iter().next().expect("one output"))
}

/// An HMAC key with its inner and outer chaining states computed once.
pub struct HmacKey<B> {
    alg: HashAlg,
    inner: Vec<B>,
    outer: Vec<B>,
}

impl<B: Copy> HmacKey<B> {
    /// Pads of an authenticated key of at most one block: two compressions.
    pub async fn new<P: ZkParty<Bit = B>>(party: &mut P, alg: HashAlg, key: &[B]) -> Result<Self> {
        let bl = alg.block_len();
        assert!(key.len() <= 8 * bl, "HMAC keys here are at most one block");
        let iv: Vec<B> = bytes_to_bits(&alg.iv())
            .into_iter()
            .map(|b| party.constant(b))
            .collect();
        let mut states = Vec::with_capacity(2);
        for pad in [0x36u8, 0x5c] {
            let pad_bits = bytes_to_bits(&vec![pad; bl]);
            let block: Vec<MBit<B>> = (0..8 * bl)
                .map(|i| {
                    let k = key.get(i).copied().unwrap_or_else(|| party.constant(false));
                    MBit::Sec(if pad_bits[i] {
                        party.xor(k, party.constant(true))
                    } else {
                        k
                    })
                })
                .collect();
            states.push(compress(party, alg, &iv, &block).await?);
        }
        let outer = states.pop().expect("two");
        let inner = states.pop().expect("two");
        Ok(HmacKey { alg, inner, outer })
    }

    /// HMAC of `msg`: the digest (hash length) as authenticated bits.
    pub async fn mac<P: ZkParty<Bit = B>>(&self, party: &mut P, msg: &[MBit<B>]) -> Result<Vec<B>> {
        let alg = self.alg;
        let bl = alg.block_len();
        let inner = hash_from(party, alg, &self.inner, bl, msg).await?;
        hash_from(party, alg, &self.outer, bl, &secret(&inner)).await
    }
}

/// Hash `msg` continuing from `state`, which already absorbed `prefix` bytes.
async fn hash_from<P: ZkParty>(
    party: &mut P,
    alg: HashAlg,
    state: &[P::Bit],
    prefix: usize,
    msg: &[MBit<P::Bit>],
) -> Result<Vec<P::Bit>> {
    let mut data = msg.to_vec();
    data.extend(public(&padding(alg, prefix + msg.len() / 8)));
    let mut st = state.to_vec();
    for block in data.chunks(8 * alg.block_len()) {
        st = compress(party, alg, &st, block).await?;
    }
    st.truncate(8 * alg.output_len());
    Ok(st)
}

/// HKDF-Expand-Label of TLS 1.3 (RFC 8446 §7.1) for `len` <= hash length.
pub async fn expand_label<P: ZkParty>(
    party: &mut P,
    key: &HmacKey<P::Bit>,
    label: &str,
    context: &[u8],
    len: usize,
) -> Result<Vec<P::Bit>> {
    assert!(len <= key.alg.output_len());
    let mut info = hkdf_label(label, context, len);
    info.push(1);
    let mut t = key.mac(party, &public(&info)).await?;
    t.truncate(8 * len);
    Ok(t)
}

/// P_hash of the TLS 1.2 PRF (RFC 5246 §5): `len` bytes of
/// PRF(secret, label, seed).
pub async fn tls12_prf<P: ZkParty>(
    party: &mut P,
    key: &HmacKey<P::Bit>,
    label: &str,
    seed: &[u8],
    len: usize,
) -> Result<Vec<P::Bit>> {
    let label_seed = [label.as_bytes(), seed].concat();
    let mut a = key.mac(party, &public(&label_seed)).await?;
    let mut out = Vec::with_capacity(8 * len);
    loop {
        let mut msg = secret(&a);
        msg.extend(public(&label_seed));
        out.extend(key.mac(party, &msg).await?);
        if out.len() >= 8 * len {
            break;
        }
        a = key.mac(party, &secret(&a)).await?;
    }
    out.truncate(8 * len);
    Ok(out)
}
