//! TLS 1.2 AES-GCM records in 2PC: the keystream of the prover's request
//! from the XOR-shared write key and IV ([`crate::kdf::tls12`]), and the tag from
//! shares of the powers of the GHASH key.
//!
//! Owns the record circuit and the GHASH arithmetic on shares; the
//! messages are [`webproof_mpc::exec`]'s (the circuit) and [`webproof_mpc::ole`]'s (the
//! M2A over GF(2^128)).
//!
//! Outputs the prover uses online: the request's keystream, made authentic
//! by [`crate::rec::dual`] before a byte leaves, and the verifier's tag share,
//! which only makes the server refuse the record if it is wrong. Public
//! inputs: the explicit nonce (the record's sequence number) and the
//! GHASH blocks (AAD, the ciphertext, lengths), which each party computes
//! itself. Each record's steps (the circuit, the powers of `H`, the tag),
//! the hidden ciphertext's M2A and the security argument:
//! `docs/protocol/mpc-records.md`.

use rand_core::{CryptoRng, RngCore};
use std::sync::Arc;
use webproof_circuits::aead::{aes_gcm_keystream, gcm_hash_key, gcm_mul, tls12_gcm_nonce};
use webproof_circuits::aes::{aes128_key_schedule, aes256_key_schedule};
use webproof_circuits::{bits_to_bytes, bytes_to_bits};
use webproof_circuits::{Bit, Builder, Circuit};
use webproof_core::Block;
use webproof_mpc::convert;
use webproof_mpc::error::{Error, Result};
use webproof_mpc::exec::{ProverCircuit, StepTables, VerifierCircuit};
use webproof_mpc::field::Gf128;
use webproof_mpc::ole::{OleField, OleReceiver, OleSender};
use webproof_mpc::plan::Plan;
use webproof_mpc::ReceivedTables;

/// How a record's 12-byte AES-GCM nonce is formed from the write IV and
/// the record's public 8-byte input (the circuit's "explicit" group).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NonceForm {
    /// TLS 1.2 (RFC 5288): the 4-byte salt ‖ the 8-byte explicit nonce
    /// (the record's sequence number, sent in the record).
    Tls12,
    /// TLS 1.3 (RFC 8446 §5.3): the 12-byte IV ⊕ the sequence number,
    /// big-endian, left-padded with zeros; the public input is the
    /// sequence number (nothing of it is sent).
    Tls13,
}

impl NonceForm {
    /// Bytes of the IV part of the key ‖ IV share.
    pub fn iv_len(self) -> usize {
        match self {
            NonceForm::Tls12 => 4,
            NonceForm::Tls13 => 12,
        }
    }

    /// The nonce's 96 bits from the IV's and the public input's: the
    /// XOR with a public input costs no gate.
    pub fn nonce(self, b: &mut Builder, iv: &[Bit], public: &[Bit]) -> Vec<Bit> {
        match self {
            NonceForm::Tls12 => [iv, public].concat(),
            NonceForm::Tls13 => {
                let (head, tail) = iv.split_at(32);
                let x = b.xor_words(tail, public);
                [head, &x].concat()
            }
        }
    }
}

/// The record circuit for a `key_len`-byte AES key (16 or 32) and `len`
/// bytes of keystream (see the module docs for its groups). With
/// `ghash_key`, it also outputs the prover's multiplicative share of the
/// GHASH key `H = E_K(0)` (its masks group is then 32 bytes, the
/// multiplier of `H` first); without, its masks group is the 16-byte mask
/// of `E_K(J0)` alone, and the record's tag takes the powers of `H` of the
/// record of its direction that computes it ([`RecordVerifier::new`]).
/// TLS 1.2's nonce ([`gcm_circuit_with`] for TLS 1.3's).
pub fn gcm_circuit(key_len: usize, len: usize, ghash_key: bool) -> Circuit {
    gcm_circuit_with(NonceForm::Tls12, key_len, len, ghash_key)
}

/// [`gcm_circuit`] with the nonce formed as `form` says: the key ‖ IV
/// groups are `key_len + form.iv_len()` bytes, the public group 8 bytes
/// (the explicit nonce, or TLS 1.3's sequence number); everything else
/// (outputs, masks, the GHASH key) is the same, so [`RecordVerifier`] and
/// [`RecordProver`] run either.
pub fn gcm_circuit_with(form: NonceForm, key_len: usize, len: usize, ghash_key: bool) -> Circuit {
    assert!(key_len == 16 || key_len == 32, "AES-128 or AES-256");
    let mut b = Builder::new();
    let sp = b.input_bytes(key_len + form.iv_len());
    let sv = b.input_bytes(key_len + form.iv_len());
    let explicit = b.input_bytes(8);
    let masks = b.input_bytes(masks_len(ghash_key));
    let s = b.xor_words(&sp, &sv);
    let (key, iv) = s.split_at(8 * key_len);
    let rk = if key_len == 16 {
        aes128_key_schedule(&mut b, key)
    } else {
        aes256_key_schedule(&mut b, key)
    };
    let nonce = form.nonce(&mut b, iv, &explicit);
    debug_assert_eq!(nonce.len(), tls12_gcm_nonce(&iv[..32], &[0; 8]).len());
    let (j0, ks) = aes_gcm_keystream(&mut b, &rk, &nonce, len);
    b.output(&ks);
    let j0_mask = if ghash_key {
        let h = gcm_hash_key(&mut b, &rk);
        let h = gcm_mul(&mut b, &h, &masks[..128]);
        b.output(&h);
        &masks[128..]
    } else {
        &masks[..]
    };
    let j0 = b.xor_words(&j0, j0_mask);
    b.output(&j0);
    b.finish()
}

/// The TLS 1.3 AEAD additional data (RFC 8446 §5.2): the record header of
/// an application-data record whose encrypted inner plaintext is
/// `inner_len` bytes (content, content type, padding), tag included in
/// the length.
pub fn tls13_aad(inner_len: usize) -> [u8; 5] {
    let n = (inner_len + 16) as u16;
    let [hi, lo] = n.to_be_bytes();
    [23, 3, 3, hi, lo]
}

/// Bytes of a record circuit's masks group: the multiplier of `H` (if
/// the record computes it) and the mask of `E_K(J0)`.
fn masks_len(ghash_key: bool) -> usize {
    if ghash_key {
        32
    } else {
        16
    }
}

/// The circuit groups the verifier encodes in preprocessing: all of its
/// own (its key ‖ IV share, the explicit nonce, its masks).
pub const EARLY_GROUPS: [usize; 3] = [1, 2, 3];

/// The verifier's input groups of a record circuit (after the prover's
/// share): its key ‖ IV share, the explicit nonce, its multiplier of `H`
/// and its mask of `E_K(J0)`.
fn verifier_groups(key_iv_share: &[u8], explicit: &[u8; 8], masks: &[u8]) -> Vec<Vec<bool>> {
    vec![
        bytes_to_bits(key_iv_share),
        bytes_to_bits(explicit),
        bytes_to_bits(masks),
    ]
}

/// The prover's check, after the session, of the verifier's revealed
/// inputs of one record circuit (`inputs`: its groups, without the
/// prover's; `ghash_key` as the circuit was built, [`gcm_circuit`]): its
/// key ‖ IV share must be the one the key derivation's masks fix for the
/// record's direction (`key_iv_share`), and the explicit nonce the
/// record's own. A verifier that encrypted a request record under another
/// nonce (say, an earlier record's, to learn the XOR of two plaintexts
/// from the ciphertexts) or another key is caught here; its masks are its
/// own choice, but for a zero multiplier of `H`.
pub fn check_verifier_inputs(
    key_iv_share: &[u8],
    explicit: &[u8; 8],
    inputs: &[Vec<bool>],
    ghash_key: bool,
) -> Result<()> {
    let masks = match inputs.last() {
        Some(m) if inputs.len() == 3 && m.len() == 8 * masks_len(ghash_key) => bits_to_bytes(m),
        _ => return Err(Error::Malformed("inputs of another record circuit")),
    };
    if verifier_groups(key_iv_share, explicit, &masks) != inputs {
        return Err(Error::VerifierCheated(
            "record inputs other than its key-derivation share and the record's explicit nonce",
        ));
    }
    if ghash_key && masks[..16] == [0; 16] {
        return Err(Error::VerifierCheated("a record's multiplier of H is zero"));
    }
    Ok(())
}

/// Powers of `H` the tag of a `len`-byte record needs (AAD block, data
/// blocks, length block).
pub fn powers_needed(len: usize) -> usize {
    2 + len.div_ceil(16)
}

/// OLEs of the M2A of `H^1..=H^k`: one per odd power (the even ones are
/// squares of shares).
pub fn oles_needed(k: usize) -> usize {
    k.div_ceil(2)
}

/// Additive shares of `H^1..=H^k` from shares of the odd powers
/// (`odd[j]` of `H^(2j+1)`): a share of `H^2i` is the square of a share of
/// `H^i`, since `(a + b)^2 = a^2 + b^2` in characteristic 2.
pub fn all_powers(odd: &[Gf128], k: usize) -> Option<Vec<Gf128>> {
    if odd.len() < k.div_ceil(2) {
        return None;
    }
    let mut out: Vec<Gf128> = Vec::with_capacity(k);
    for i in 1..=k {
        let s = if i % 2 == 1 {
            odd[i / 2]
        } else {
            let h = out[i / 2 - 1];
            h * h
        };
        out.push(s);
    }
    Some(out)
}

/// A GCM block as a field element.
pub fn gf_from_bytes(b: &[u8; 16]) -> Gf128 {
    Gf128(Block::from_gcm(b))
}

/// A field element as a GCM block.
pub fn gf_to_bytes(x: Gf128) -> [u8; 16] {
    x.0.to_gcm()
}

/// The GHASH input blocks of (`aad`, `ct`): both zero-padded, then the
/// bit lengths ([`webproof_core::block::ghash_blocks`]).
pub fn ghash_blocks(aad: &[u8], ct: &[u8]) -> Vec<Gf128> {
    webproof_core::block::ghash_blocks(aad, ct)
        .into_iter()
        .map(Gf128)
        .collect()
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

/// COTs the M2A of `H^1..=H^k` consumes (the record that computes `H`
/// answers it; a record's circuit input takes none, chained,
/// [`RecordVerifier::chain`], and its A2M none, in the circuit).
pub fn cots_needed(k: usize) -> usize {
    128 * oles_needed(k)
}

/// `x^1, x^3, …, x^(2m-1)`.
fn odd_powers(x: Gf128, m: usize) -> Vec<Gf128> {
    let sq = x * x;
    let mut acc = x;
    (0..m)
        .map(|_| {
            let p = acc;
            acc = acc * sq;
            p
        })
        .collect()
}

fn block16(bits: &[bool]) -> [u8; 16] {
    webproof_circuits::bits_to_bytes(bits)
        .try_into()
        .expect("16 bytes")
}

/// The verifier's side of one record (see the module docs for the order of
/// messages).
pub struct RecordVerifier {
    circuit: VerifierCircuit,
    len: usize,
    explicit: [u8; 8],
    /// Its key ‖ IV share, once chained ([`Self::chain`]).
    key_iv_share: Option<Vec<u8>>,
    /// Powers of `H` whose M2A it answers, if it computes `H`.
    powers: Option<usize>,
    /// Its multiplier `r` of `H` (nonzero: `h_V = r^{-1}`) if it computes
    /// `H`, then its mask of `E_K(J0)`.
    masks: Vec<u8>,
    /// From the M2A answered ahead: the verifier's shares `w_i` of
    /// `h_V^i·ρ_i` and its inputs `h_V^i`.
    ahead: Option<(Vec<Gf128>, Vec<Gf128>)>,
    /// From the M2A of the hidden ciphertext answered ahead
    /// ([`Self::hide_ahead`]): its shares `u_i` of `R_i·ρ_i` and its
    /// random inputs `R_i`, one per ciphertext block.
    hidden: Option<(Vec<Gf128>, Vec<Gf128>)>,
    /// Whether its tag share went out.
    tagged: bool,
}

impl RecordVerifier {
    /// A record of `len` bytes under the public `explicit` nonce, for the
    /// plan of [`gcm_circuit`]`(key_len, len, powers.is_some())`, garbling
    /// instance `instance`. With `powers = Some(k)` the record computes
    /// its direction's GHASH key and answers the M2A of `H^1..=H^k`
    /// (enough for every record of the direction that takes them, `k ≥`
    /// [`powers_needed`]`(len)`); with `None` its tag takes another
    /// record's ([`Self::tag_share`]).
    pub fn new(
        plan: Arc<Plan>,
        len: usize,
        explicit: [u8; 8],
        delta: Block,
        instance: u64,
        powers: Option<usize>,
        rng: &mut (impl RngCore + CryptoRng),
    ) -> Result<Self> {
        if powers.is_some_and(|k| k < powers_needed(len)) {
            return Err(Error::Malformed(
                "fewer powers of H than the record's tag needs",
            ));
        }
        let mut masks = vec![0u8; masks_len(powers.is_some())];
        let j0 = if powers.is_some() {
            masks[..16].copy_from_slice(&gf_to_bytes(convert::nonzero(rng)));
            16
        } else {
            0
        };
        rng.fill_bytes(&mut masks[j0..]);
        Ok(RecordVerifier {
            circuit: VerifierCircuit::new(plan, delta, instance, 0, rng)?,
            len,
            explicit,
            key_iv_share: None,
            powers,
            masks,
            ahead: None,
            hidden: None,
            tagged: false,
        })
    }

    /// Preprocessing: all chunks, the decoding information and the early
    /// input labels ([`Self::early_inputs`]).
    pub fn preprocess(&mut self) -> Result<StepTables> {
        let chunks = self.circuit.garble_all().into();
        let decoding = self.circuit.decoding()?;
        Ok((chunks, decoding, self.early_inputs()?))
    }

    /// Before garbling: chain the prover's key ‖ IV share to the key
    /// derivation's output, whose 0-labels are `key_iv_zero`, and take the
    /// verifier's own share `key_iv_share` (its masks of the same bits).
    pub fn chain(&mut self, key_iv_zero: &[Block], key_iv_share: &[u8]) -> Result<()> {
        if self.key_iv_share.is_some() || 8 * key_iv_share.len() != key_iv_zero.len() {
            return Err(Error::Malformed("a record chained twice or to another key"));
        }
        self.circuit.chain_prover_input(key_iv_zero)?;
        self.key_iv_share = Some(key_iv_share.to_vec());
        Ok(())
    }

    /// Preprocessing, after [`Self::chain`]: the labels of all the
    /// verifier's inputs (its key ‖ IV share, the explicit nonce, its
    /// masks), for [`RecordProver::new`]; once.
    pub fn early_inputs(&mut self) -> Result<Vec<u8>> {
        let share = self
            .key_iv_share
            .as_ref()
            .ok_or(Error::Malformed("a record's inputs before its chaining"))?;
        let own = verifier_groups(share, &self.explicit, &self.masks);
        self.circuit.early_inputs(&EARLY_GROUPS, &own)
    }

    /// Preprocessing, for the record that computes `H`: the M2A of its
    /// powers answered ahead, on `keys` ([`cots_needed`]`(k)` fresh COT
    /// keys, the first batch of this record's OLE stream): the message for
    /// [`RecordProver::powers_ahead`].
    pub fn powers_ahead(&mut self, ole: &mut OleSender, keys: &[Block]) -> Result<Vec<u8>> {
        let k = self.powers.ok_or(Error::Malformed(
            "powers of H from a record that takes them",
        ))?;
        if self.ahead.is_some() {
            return Err(Error::Malformed("the powers answered twice"));
        }
        let r = gf_from_bytes(&self.masks[..16].try_into().expect("16 bytes"));
        let hv = OleField::inverse(&r).expect("nonzero by construction");
        let inputs = odd_powers(hv, oles_needed(k));
        let (w, msg) = ole.respond_ahead(keys, &inputs)?;
        self.ahead = Some((w, inputs));
        Ok(msg)
    }

    /// The circuit execution (for what the consistency proof retains).
    pub fn circuit(&self) -> &VerifierCircuit {
        &self.circuit
    }

    /// The circuit, to garble chunk by chunk
    /// ([`VerifierCircuit::next_chunk`]) instead of [`Self::preprocess`].
    pub fn circuit_mut(&mut self) -> &mut VerifierCircuit {
        &mut self.circuit
    }

    /// For the record that computes `H`, once the prover evaluated: its
    /// offsets `d_i = h_P^i + ρ_i` (16 bytes per odd power) make the
    /// verifier's additive shares of `H^1..=H^k`, which every record of
    /// the direction takes for its tag ([`Self::tag_share`]); once.
    pub fn powers(&mut self, offsets: &[u8]) -> Result<Vec<Gf128>> {
        let k = self.powers.ok_or(Error::Malformed(
            "powers of H from a record that takes them",
        ))?;
        let (w, hv) = self.ahead.as_ref().ok_or(Error::Malformed(
            "powers' offsets before the powers' M2A, or twice",
        ))?;
        if offsets.len() != 16 * hv.len() {
            return Err(Error::Malformed("powers' offsets of the wrong length"));
        }
        let odd: Vec<Gf128> = offsets
            .chunks(16)
            .zip(w.iter().zip(hv))
            .map(|(d, (&w, &hv))| w + elem(d) * hv)
            .collect();
        self.ahead = None;
        Ok(all_powers(&odd, k).expect("one share per odd power"))
    }

    /// The verifier's tag share over the record's `aad` and ciphertext
    /// `ct` (sent to the prover for a client record), from its shares of
    /// the powers of its direction's `H` ([`Self::powers`]); once.
    pub fn tag_share(&mut self, powers: &[Gf128], aad: &[u8], ct: &[u8]) -> Result<[u8; 16]> {
        if ct.len() != self.len {
            return Err(Error::Malformed("ciphertext of the wrong length"));
        }
        if self.tagged {
            return Err(Error::Malformed("a record's tag share twice"));
        }
        let jv: [u8; 16] = self.masks[self.masks.len() - 16..]
            .try_into()
            .expect("16 bytes");
        let t = tag_share(&ghash_blocks(aad, ct), powers, &jv)
            .ok_or(Error::Malformed("fewer powers of H than the record needs"))?;
        self.tagged = true;
        Ok(t)
    }

    /// Preprocessing, for a record that takes `H` and whose ciphertext
    /// the verifier must not see (the request's): the M2A of its
    /// ciphertext blocks, answered ahead on the verifier's fresh random
    /// `R_i` (one per block) with `keys` ([`hide_cots`]`(len)` fresh COT
    /// keys on this record's OLE stream); the message for
    /// [`RecordProver::hide_ahead`]. See "Hidden ciphertext" in the module
    /// docs.
    pub fn hide_ahead(
        &mut self,
        ole: &mut OleSender,
        keys: &[Block],
        rng: &mut (impl RngCore + CryptoRng),
    ) -> Result<Vec<u8>> {
        if self.powers.is_some() {
            return Err(Error::Malformed(
                "a hidden ciphertext in the record that computes H",
            ));
        }
        if self.hidden.is_some() {
            return Err(Error::Malformed("the hidden ciphertext's M2A twice"));
        }
        let r: Vec<Gf128> = (0..ct_blocks(self.len))
            .map(|_| <Gf128 as OleField>::random(rng))
            .collect();
        let (u, msg) = ole.respond_ahead(keys, &r)?;
        self.hidden = Some((u, r));
        Ok(msg)
    }

    /// For a record whose ciphertext is hidden ([`Self::hide_ahead`]): the
    /// verifier's tag share over the record's `aad` and the *masked*
    /// ciphertext `masked` (`C_i ⊕ ρ_i`, 16 bytes per block, the last one
    /// whole), and the corrections `e_i = [H^{p_i}]_V + R_i` (16 bytes per
    /// block, `p_i` the power block `i` takes) the prover needs for its
    /// share ([`RecordProver::hidden_tag`]); once.
    pub fn hidden_tag_share(
        &mut self,
        powers: &[Gf128],
        aad: &[u8],
        masked: &[u8],
    ) -> Result<([u8; 16], Vec<u8>)> {
        let (u, r) = self.hidden.as_ref().ok_or(Error::Malformed(
            "a masked ciphertext for a record whose ciphertext is not hidden",
        ))?;
        if masked.len() != 16 * r.len() {
            return Err(Error::Malformed("masked ciphertext of the wrong length"));
        }
        if self.tagged {
            return Err(Error::Malformed("a record's tag share twice"));
        }
        let jv: [u8; 16] = self.masks[self.masks.len() - 16..]
            .try_into()
            .expect("16 bytes");
        // The AAD's and the lengths' terms: a zero ciphertext of the
        // record's length has those blocks and zero ciphertext blocks.
        let x = ghash_blocks(aad, &vec![0; self.len]);
        let zero_ct = tag_share(&x, powers, &jv)
            .ok_or(Error::Malformed("fewer powers of H than the record needs"))?;
        let first = aad.len().div_ceil(16);
        let mut acc = gf_from_bytes(&zero_ct);
        let mut corrections = Vec::with_capacity(16 * r.len());
        for (i, (d, (&u, &r))) in masked.chunks(16).zip(u.iter().zip(r)).enumerate() {
            let d = gf_from_bytes(d.try_into().expect("16 bytes"));
            acc = acc + u + r * d;
            let e = powers[x.len() - 1 - (first + i)] + r;
            corrections.extend_from_slice(&e.0 .0.to_le_bytes());
        }
        self.tagged = true;
        Ok((gf_to_bytes(acc), corrections))
    }
}

/// Ciphertext blocks of a `len`-byte record: one OLE each in the M2A that
/// keeps its ciphertext from the verifier.
pub fn ct_blocks(len: usize) -> usize {
    len.div_ceil(16)
}

/// COTs of the M2A that keeps a `len`-byte record's ciphertext from the
/// verifier ([`RecordVerifier::hide_ahead`]).
pub fn hide_cots(len: usize) -> usize {
    128 * ct_blocks(len)
}

/// Where bit `n` of a ciphertext block (in
/// [`webproof_circuits::bytes_to_bits`]'s order: byte by byte, least
/// significant bit first) lies in the block as a field element
/// ([`gf_from_bytes`]): the index of the COT whose choice bit pads it in
/// the masked ciphertext (`ρ_i`'s bit `m` is the choice bit of the
/// block's `m`-th COT, [`OleReceiver::choose_random`]).
pub fn masked_bit(n: usize) -> usize {
    // `from_gcm` reverses the bits of the big-endian integer: byte `t`,
    // bit `j` lands at `8t + 7 - j`.
    n ^ 7
}

/// A ciphertext block of at most 16 bytes, zero-padded as GHASH pads it.
fn padded(chunk: &[u8]) -> [u8; 16] {
    let mut c = [0u8; 16];
    c[..chunk.len()].copy_from_slice(chunk);
    c
}

/// A GF(2^128) element on the wire (16 bytes, little-endian: any string
/// is canonical).
fn elem(b: &[u8]) -> Gf128 {
    Gf128(Block(u128::from_le_bytes(b.try_into().expect("16 bytes"))))
}

/// The prover's half of the M2A answered ahead: its random inputs `ρ_i`
/// and its shares `u_i` of `h_V^i·ρ_i`, for `H^1..=H^k`.
#[derive(Clone, Debug)]
pub struct PowersAhead {
    k: usize,
    rho: Vec<Gf128>,
    u: Vec<Gf128>,
}

/// The prover's half of the M2A of a hidden ciphertext, answered ahead:
/// per ciphertext block its random input `ρ_i` (the COT choice bits) and
/// its share `v_i` of `R_i·ρ_i`.
#[derive(Clone, Debug)]
pub struct HiddenAhead {
    rho: Vec<Gf128>,
    v: Vec<Gf128>,
}

/// The prover's side of one record.
pub struct RecordProver {
    circuit: ProverCircuit,
    chunks: ReceivedTables,
    decoding: Vec<u8>,
    len: usize,
    /// Its share of `E_K(J0)`, once evaluated.
    j0: Option<[u8; 16]>,
    /// The M2A answered ahead, if it computes `H`.
    ahead: Option<PowersAhead>,
    /// Once evaluated, if it computes `H`: the prover's shares of
    /// `H^1..=H^k`.
    power_shares: Option<Vec<Gf128>>,
    /// The M2A of its hidden ciphertext, if the verifier must not see it.
    hidden: Option<HiddenAhead>,
    /// Whether its tag is done.
    tagged: bool,
}

impl RecordProver {
    /// Preprocessing, for the record that computes `H`: the M2A of
    /// `H^1..=H^k`, answered ahead by [`RecordVerifier::powers_ahead`] on
    /// the COTs of `macs` (the first batch of the record's OLE stream
    /// `ole`). Returns the state for [`Self::new`] and the (all-zero,
    /// unsent) flips the batch stands for.
    pub fn powers_ahead(
        k: usize,
        ole: &mut OleReceiver,
        macs: &[Block],
        msg: &[u8],
    ) -> Result<(PowersAhead, Vec<u8>)> {
        if macs.len() != cots_needed(k) {
            return Err(Error::Malformed("COTs for another record's powers"));
        }
        let (pending, flips, rho) = ole.choose_random(macs)?;
        let u = pending.finish(msg)?;
        Ok((PowersAhead { k, rho, u }, flips))
    }

    /// Preprocessing, for a `len`-byte record whose ciphertext the
    /// verifier must not see: the M2A of its blocks, answered ahead by
    /// [`RecordVerifier::hide_ahead`] on the COTs of `macs` (on the
    /// record's OLE stream `ole`). Returns the state for [`Self::new`] and
    /// the (all-zero, unsent) flips the batch stands for.
    pub fn hide_ahead(
        len: usize,
        ole: &mut OleReceiver,
        macs: &[Block],
        msg: &[u8],
    ) -> Result<(HiddenAhead, Vec<u8>)> {
        if macs.len() != hide_cots(len) {
            return Err(Error::Malformed("COTs for another record's ciphertext"));
        }
        let (pending, flips, rho) = ole.choose_random(macs)?;
        let v = pending.finish(msg)?;
        Ok((HiddenAhead { rho, v }, flips))
    }

    /// The prover of a `len`-byte record with the verifier's preprocessing
    /// (tables, decoding, early input labels) and, if the record computes
    /// `H` (its plan is [`gcm_circuit`]`(_, len, true)`), the M2A of its
    /// powers answered ahead.
    pub fn new(
        plan: Arc<Plan>,
        len: usize,
        instance: u64,
        (chunks, decoding, early): StepTables,
        ahead: Option<PowersAhead>,
        hidden: Option<HiddenAhead>,
    ) -> Result<Self> {
        if hidden
            .as_ref()
            .is_some_and(|h| ahead.is_some() || h.rho.len() != ct_blocks(len))
        {
            return Err(Error::Malformed(
                "a hidden ciphertext's M2A for another record",
            ));
        }
        if ahead
            .as_ref()
            .is_some_and(|a| a.k < powers_needed(len) || a.u.len() != oles_needed(a.k))
        {
            return Err(Error::Malformed("powers answered for another record"));
        }
        // Keystream, (H share,) E_K(J0) share.
        let outputs = if ahead.is_some() { 3 } else { 2 };
        if plan.outputs().len() != outputs {
            return Err(Error::Malformed("a record circuit of another shape"));
        }
        let mut circuit = ProverCircuit::new(plan, instance, 0)?;
        circuit.receive_early(&EARLY_GROUPS, &early)?;
        Ok(RecordProver {
            circuit,
            chunks,
            decoding,
            len,
            j0: None,
            ahead,
            power_shares: None,
            hidden,
            tagged: false,
        })
    }

    /// The circuit execution (for what the consistency proof retains).
    pub fn circuit(&self) -> &ProverCircuit {
        &self.circuit
    }

    /// Evaluate on the prover's key ‖ IV share `key_iv_share` and its
    /// labels from the key derivation's evaluation `key_iv_labels` (the
    /// chained input): the keystream, and, for the record that computes
    /// `H`, the offsets `d_i = h_P^i + ρ_i` of the powers' M2A (16 bytes
    /// per odd power; empty otherwise), to send with the ciphertext; the
    /// prover's shares of the powers are then the `u_i` of the batch
    /// answered ahead ([`Self::power_shares`]).
    pub fn keystream(
        &mut self,
        key_iv_labels: &[Block],
        key_iv_share: &[u8],
    ) -> Result<(Vec<u8>, Vec<u8>)> {
        if self.j0.is_some() {
            return Err(Error::Malformed("a record evaluated twice"));
        }
        self.circuit
            .chain_prover_input(key_iv_labels, &bytes_to_bits(key_iv_share))?;
        self.circuit.feed_received(&self.chunks)?;
        self.circuit.finish()?;
        let out = self.circuit.decode(&self.decoding)?;
        self.j0 = Some(block16(&out[out.len() - 1]));
        let mut offsets = Vec::new();
        if let Some(ahead) = &self.ahead {
            let hp = gf_from_bytes(&block16(&out[1]));
            for (p, rho) in odd_powers(hp, oles_needed(ahead.k))
                .into_iter()
                .zip(&ahead.rho)
            {
                offsets.extend_from_slice(&(p + *rho).0 .0.to_le_bytes());
            }
            self.power_shares =
                Some(all_powers(&ahead.u, ahead.k).expect("one share per odd power"));
        }
        Ok((webproof_circuits::bits_to_bytes(&out[0]), offsets))
    }

    /// For the record that computes `H`, once evaluated: the prover's
    /// additive shares of `H^1..=H^k`, which every record of the direction
    /// takes for its tag.
    pub fn power_shares(&self) -> Option<&[Gf128]> {
        self.power_shares.as_deref()
    }

    /// Whether the record is evaluated and its tag is next.
    pub fn awaits_tag_share(&self) -> bool {
        self.j0.is_some() && !self.tagged
    }

    /// The record's tag over `aad` and the ciphertext `ct` the prover
    /// sent, with the verifier's tag share and the prover's shares of the
    /// powers of its direction's `H` ([`Self::power_shares`] of the record
    /// that computes it).
    pub fn tag(
        &mut self,
        tag_v: &[u8; 16],
        powers: &[Gf128],
        aad: &[u8],
        ct: &[u8],
    ) -> Result<[u8; 16]> {
        let t = self.tag_share(powers, aad, ct)?;
        let mut out = [0u8; 16];
        for (o, (a, b)) in out.iter_mut().zip(t.iter().zip(tag_v)) {
            *o = a ^ b;
        }
        Ok(out)
    }

    /// The prover's own tag share over `aad` and `ct`, once evaluated. For
    /// a record *received* from the server the prover sends this share
    /// before it sees the verifier's, and the verifier checks the sum
    /// against the record's tag ([`check_tag`]).
    pub fn tag_share(&mut self, powers: &[Gf128], aad: &[u8], ct: &[u8]) -> Result<[u8; 16]> {
        if ct.len() != self.len {
            return Err(Error::Malformed("ciphertext of the wrong length"));
        }
        if !self.awaits_tag_share() {
            return Err(Error::Malformed("tag before the evaluation, or twice"));
        }
        let jp = self.j0.expect("evaluated");
        let t = tag_share(&ghash_blocks(aad, ct), powers, &jp)
            .ok_or(Error::Malformed("fewer powers of H than the record needs"))?;
        self.tagged = true;
        Ok(t)
    }

    /// For a record whose ciphertext is hidden: the masked ciphertext
    /// `C_i ⊕ ρ_i` to send in place of `ct` (16 bytes per block, the last
    /// block zero-padded before the mask).
    pub fn mask_ciphertext(&self, ct: &[u8]) -> Result<Vec<u8>> {
        let h = self.hidden.as_ref().ok_or(Error::Malformed(
            "a masked ciphertext for a record whose ciphertext is not hidden",
        ))?;
        if ct.len() != self.len {
            return Err(Error::Malformed("ciphertext of the wrong length"));
        }
        let mut out = Vec::with_capacity(16 * h.rho.len());
        for (chunk, rho) in ct.chunks(16).zip(&h.rho) {
            let pad = gf_to_bytes(*rho);
            out.extend(padded(chunk).iter().zip(pad).map(|(a, b)| a ^ b));
        }
        Ok(out)
    }

    /// For a record whose ciphertext is hidden: its tag over `aad` and the
    /// ciphertext `ct` the prover sends the server, from the verifier's
    /// tag share and corrections ([`RecordVerifier::hidden_tag_share`])
    /// and the prover's shares of the powers of its direction's `H`.
    pub fn hidden_tag(
        &mut self,
        tag_v: &[u8; 16],
        corrections: &[u8],
        powers: &[Gf128],
        aad: &[u8],
        ct: &[u8],
    ) -> Result<[u8; 16]> {
        let h = self.hidden.take().ok_or(Error::Malformed(
            "corrections for a record whose ciphertext is not hidden",
        ))?;
        if corrections.len() != 16 * h.v.len() {
            return Err(Error::Malformed("corrections of the wrong length"));
        }
        let own = self.tag_share(powers, aad, ct)?;
        let mut acc = gf_from_bytes(&own) + gf_from_bytes(tag_v);
        for ((chunk, e), v) in ct.chunks(16).zip(corrections.chunks(16)).zip(&h.v) {
            acc = acc + *v + gf_from_bytes(&padded(chunk)) * elem(e);
        }
        Ok(gf_to_bytes(acc))
    }
}

/// Check a received record's `tag` against the two shares computed in 2PC
/// over its ciphertext (a record whose integrity the parties check
/// jointly during the session).
pub fn check_tag(tag_v: &[u8; 16], tag_p: &[u8; 16], tag: &[u8]) -> Result<()> {
    let sum: Vec<u8> = tag_v.iter().zip(tag_p).map(|(a, b)| a ^ b).collect();
    if tag.len() != 16 || sum != tag {
        return Err(Error::RecordTag);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Shares of the odd powers, squared up: the sum of both parties'
    /// shares of every power is the power.
    #[test]
    fn even_powers_from_squared_shares() {
        let h = Gf128(Block(0x1234_5678_9abc_def0_0fed_cba9_8765_4321));
        let mask = Gf128(Block(0x5555_0000_ffff_1111_2222_3333_4444_7777));
        let k = 11;
        let odd = odd_powers(h, oles_needed(k));
        assert_eq!(odd.len(), 6);
        // Additive shares of each odd power: mask·i and its complement.
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let mut r = mask;
        for &x in &odd {
            a.push(r);
            b.push(x + r);
            r = r * mask + Gf128::ONE;
        }
        let (pa, pb) = (all_powers(&a, k).unwrap(), all_powers(&b, k).unwrap());
        let mut want = Gf128::ONE;
        for i in 0..k {
            want = want * h;
            assert_eq!(pa[i] + pb[i], want, "H^{}", i + 1);
        }
        assert!(all_powers(&a[..5], k).is_none());
        assert_eq!(oles_needed(powers_needed(16)), 2);
        assert_eq!(oles_needed(powers_needed(1024)), 33);
    }

    /// A ciphertext bit's place in its block as a field element: the bit
    /// the COT choice bit at [`masked_bit`] pads.
    #[test]
    fn masked_bits_are_the_field_elements_bits() {
        for n in 0..128 {
            let mut bits = [false; 128];
            bits[n] = true;
            let bytes: [u8; 16] = webproof_circuits::bits_to_bytes(&bits).try_into().unwrap();
            assert_eq!(
                gf_from_bytes(&bytes).0 .0,
                1u128 << masked_bit(n),
                "bit {n}"
            );
        }
    }

    /// The prover's check of a record circuit's revealed verifier inputs:
    /// the protocol's take passes; a zero multiplier of `H` (which would
    /// make the prover's share `H·r` zero and `h_V = r^{-1}` undefined), a
    /// nonce or key share other than the record's, and inputs of another
    /// shape (among them a record's that computes `H` where one that
    /// takes it is due, and the other way round) are each the verifier's
    /// cheat or a malformed reveal.
    #[test]
    fn verifier_inputs_are_checked() {
        let key_iv: Vec<u8> = (0..20).collect();
        let nonce = 7u64.to_be_bytes();
        let mut masks = [0x5au8; 32];
        let honest = verifier_groups(&key_iv, &nonce, &masks);
        check_verifier_inputs(&key_iv, &nonce, &honest, true).unwrap();

        let cheat = |inputs: &[Vec<bool>]| {
            matches!(
                check_verifier_inputs(&key_iv, &nonce, inputs, true),
                Err(Error::VerifierCheated(_))
            )
        };
        // A zero multiplier; the rest of the masks stays the verifier's own.
        masks[..16].fill(0);
        assert!(cheat(&verifier_groups(&key_iv, &nonce, &masks)));
        masks[15] = 1;
        check_verifier_inputs(
            &key_iv,
            &nonce,
            &verifier_groups(&key_iv, &nonce, &masks),
            true,
        )
        .unwrap();
        // Another record's nonce, another key share.
        assert!(cheat(&verifier_groups(
            &key_iv,
            &8u64.to_be_bytes(),
            &masks
        )));
        let mut other = key_iv.clone();
        other[3] ^= 0x10;
        assert!(cheat(&verifier_groups(&other, &nonce, &masks)));
        // A record that takes `H`: its one mask, any value (zero too).
        let taker = verifier_groups(&key_iv, &nonce, &[0; 16]);
        check_verifier_inputs(&key_iv, &nonce, &taker, false).unwrap();
        assert!(matches!(
            check_verifier_inputs(&key_iv, &nonce, &taker, true),
            Err(Error::Malformed(_))
        ));
        assert!(matches!(
            check_verifier_inputs(&key_iv, &nonce, &honest, false),
            Err(Error::Malformed(_))
        ));
        assert!(matches!(
            check_verifier_inputs(&other, &nonce, &taker, false),
            Err(Error::VerifierCheated(_))
        ));
        // Not a record circuit's groups.
        for bad in [
            &honest[..2],
            &[honest[0].clone(), honest[1].clone(), vec![true; 255]][..],
        ] {
            assert!(matches!(
                check_verifier_inputs(&key_iv, &nonce, bad, true),
                Err(Error::Malformed(_))
            ));
        }
    }
}
