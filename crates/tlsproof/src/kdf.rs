//! TLS key derivation inside the proof, composed from small fixed circuits.
//!
//! A per-session circuit with the transcript hashes folded in would have to
//! be built for every session (hundreds of milliseconds) and held in memory
//! whole (millions of gates). Instead, HMAC, HKDF and the TLS 1.2 PRF are run
//! here compression by compression, on two circuits built once per process:
//!
//! - the full compression (`state`, `block` both authenticated), used where
//!   the block holds secret bits (the key pads);
//! - the *public-schedule* compression, whose round addends `K_t + W_t` are
//!   computed in the clear and enter as public constants, used where the
//!   whole block is public (the outer hashes' blocks, see below) — it skips
//!   the message schedule's additions (16,120 instead of 22,271 AND for
//!   SHA-256).
//!
//! # HMAC with the inner state opened
//! `HMAC(K, m) = F(OS, F*(IS, m))` with `IS = F(IV, K ⊕ ipad)` and `OS =
//! F(IV, K ⊕ opad)` (`F` the compression, `F*` the iterated hash with its
//! padding). Each key's two pads are compressed in the proof; `IS` is then
//! **opened** to the verifier, `OS` stays authenticated. Every message this
//! crate MACs is public, so both parties hash it from `IS` in the clear
//! and only the outer compression, on the public block `F*(IS, m) ‖
//! padding`, runs in the proof (public schedule). Per HMAC call that is one
//! compression of 16,120 AND instead of two (38,391 AND for a one-block
//! message).
//!
//! Where each public value comes from: `IS` is opened (the opening proves
//! it is the committed state, [`ZkParty::open`]); the messages are labels
//! fixed here and transcript hashes or randoms from the verifier's own
//! recording (the caller's [`crate::Statement`]); the TLS 1.2 PRF's chain
//! values `A(i)` are opened as they are computed ([`tls12_prf`]). The
//! verifier computes every inner digest itself; nothing here is taken from
//! the prover unproven.
//!
//! Why this keeps the keys secret: `OS` stays pseudorandom given `IS` (the
//! dual-PRF property of the compression under the two pads' related keys,
//! the assumption HMAC's own security proof rests on), and `F(OS, ·)` is a
//! PRF, so outputs at the distinct public inner digests of a session (one
//! per label, hash and chain value) are independent pseudorandom values:
//! knowing `IS`, the inputs and some outputs (the revealed handshake
//! secrets, `verify_data`, the chain values) says nothing about the others
//! (traffic keys, IVs before they are opened). The chain values `A(i)` are
//! such outputs: `A(1) = HMAC(K, label ‖ seed)`, `A(i+1) = HMAC(K, A(i))`,
//! each at an input no output block uses. The same argument is MPC mode's
//! (`webproof_mpc_tls::kdf::reduced`). Soundness is untouched: the statement still
//! fixes every HMAC output from the committed secret, only the inner hash
//! moves out of the proof because both sides can compute it.
//!
//! The outputs match `webproof_circuits::tls` bit for bit (tested).

use crate::party::ZkParty;
use crate::Result;
use webproof_circuits::bits::{bits_to_bytes, bytes_to_bits};
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

/// An HMAC key in the proof: the inner chaining state opened, the outer
/// one authenticated (see the module docs).
pub struct HmacKey<B> {
    alg: HashAlg,
    /// `IS = F(IV, key ⊕ ipad)`, opened: the chaining state, big-endian.
    inner: Vec<u8>,
    /// `OS = F(IV, key ⊕ opad)`, authenticated.
    outer: Vec<B>,
}

impl<B: Copy> HmacKey<B> {
    /// Pads of an authenticated key of at most one block: two
    /// compressions, then the inner state is opened.
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
        let inner = opened(party, inner).await?;
        Ok(HmacKey { alg, inner, outer })
    }

    /// HMAC of the public `msg`: the inner hash in the clear from the opened
    /// inner state, the outer compression in the proof. Returns the digest
    /// (hash length) as authenticated bits.
    pub async fn mac<P: ZkParty<Bit = B>>(&self, party: &mut P, msg: &[u8]) -> Result<Vec<B>> {
        let bl = self.alg.block_len();
        let inner = clear_hash_from(self.alg, &self.inner, bl, msg);
        hash_from(party, self.alg, &self.outer, bl, &public(&inner)).await
    }
}

/// `bits` opened to the verifier, as bytes.
async fn opened<P: ZkParty>(party: &mut P, bits: Vec<P::Bit>) -> Result<Vec<u8>> {
    Ok(bits_to_bytes(&party.open(&bits).await?))
}

/// `msg` hashed in the clear from the chaining `state` (big-endian), which
/// already absorbed `prefix` bytes: the digest, truncated to the hash's
/// output length.
fn clear_hash_from(alg: HashAlg, state: &[u8], prefix: usize, msg: &[u8]) -> Vec<u8> {
    use sha2::digest::generic_array::GenericArray;
    debug_assert_eq!(state.len(), alg.state_len());
    let mut data = msg.to_vec();
    data.extend(padding(alg, prefix + msg.len()));
    let mut out = match alg {
        HashAlg::Sha256 => {
            let mut st: [u32; 8] = core::array::from_fn(|i| {
                u32::from_be_bytes(state[4 * i..4 * i + 4].try_into().unwrap())
            });
            let blocks: Vec<_> = data
                .chunks_exact(64)
                .map(|b| *GenericArray::from_slice(b))
                .collect();
            sha2::compress256(&mut st, &blocks);
            st.iter().flat_map(|w| w.to_be_bytes()).collect::<Vec<u8>>()
        }
        HashAlg::Sha384 => {
            let mut st: [u64; 8] = core::array::from_fn(|i| {
                u64::from_be_bytes(state[8 * i..8 * i + 8].try_into().unwrap())
            });
            let blocks: Vec<_> = data
                .chunks_exact(128)
                .map(|b| *GenericArray::from_slice(b))
                .collect();
            sha2::compress512(&mut st, &blocks);
            st.iter().flat_map(|w| w.to_be_bytes()).collect::<Vec<u8>>()
        }
    };
    out.truncate(alg.output_len());
    out
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
    let mut t = key.mac(party, &info).await?;
    t.truncate(8 * len);
    Ok(t)
}

/// P_hash of the TLS 1.2 PRF (RFC 5246 §5): `len` bytes of
/// PRF(secret, label, seed). The chain values `A(i)` are opened as they are
/// computed (see the module docs): the next inner hashes need them.
pub async fn tls12_prf<P: ZkParty>(
    party: &mut P,
    key: &HmacKey<P::Bit>,
    label: &str,
    seed: &[u8],
    len: usize,
) -> Result<Vec<P::Bit>> {
    let label_seed = [label.as_bytes(), seed].concat();
    let a_bits = key.mac(party, &label_seed).await?;
    let mut a = opened(party, a_bits).await?;
    let mut out = Vec::with_capacity(8 * len);
    loop {
        out.extend(
            key.mac(party, &[a.as_slice(), &label_seed].concat())
                .await?,
        );
        if out.len() >= 8 * len {
            break;
        }
        let a_bits = key.mac(party, &a).await?;
        a = opened(party, a_bits).await?;
    }
    out.truncate(8 * len);
    Ok(out)
}
