//! TLS key derivation inside the proof, composed from small fixed circuits.
//!
//! A per-session circuit with the transcript hashes folded in would have to
//! be built for every session (hundreds of milliseconds) and held in memory
//! whole (millions of gates). Instead, HMAC, HKDF and the TLS 1.2 PRF are run
//! here compression by compression, on two circuits built once per process:
//!
//! - the full compression (`state`, `block` both authenticated), used where
//!   the block holds secret bits (key pads, outer hashes, PRF chaining);
//! - the *public-schedule* compression, whose round addends `K_t + W_t` are
//!   computed in the clear and enter as public constants, used where the
//!   whole block is public (labels, transcript hashes, padding) — it skips the
//!   message schedule's additions (16,120 instead of 22,271 AND for SHA-256).
//!
//! The outputs match `webproof_circuits::tls` bit for bit (tested).

use crate::party::ZkParty;
use crate::Result;
use webproof_circuits::bits::bytes_to_bits;
use webproof_circuits::hmac::hkdf_label;
use webproof_circuits::sha2::{padding, public_schedule, HashAlg};
use webproof_circuits::Circuit;

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

fn public_schedule_circuit(alg: HashAlg) -> &'static Circuit {
    match alg {
        HashAlg::Sha256 => webproof_circuits::cache::sha256_compress_public_schedule(),
        HashAlg::Sha384 => webproof_circuits::cache::sha512_compress_public_schedule(),
    }
}

fn full_circuit(alg: HashAlg) -> &'static Circuit {
    match alg {
        HashAlg::Sha256 => webproof_circuits::cache::sha256_compress(),
        HashAlg::Sha384 => webproof_circuits::cache::sha512_compress(),
    }
}

/// One compression of `block` into `state`.
pub(crate) async fn compress<P: ZkParty>(
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
            let kw_bytes = public_schedule(alg, &webproof_circuits::bits_to_bytes(&bits));
            let kw: Vec<P::Bit> = bytes_to_bits(&kw_bytes)
                .into_iter()
                .map(|b| party.constant(b))
                .collect();
            party
                .eval(public_schedule_circuit(alg), &[state, &kw])
                .await?
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
