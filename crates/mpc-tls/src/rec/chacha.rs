//! ChaCha20-Poly1305 records in 2PC (RFC 8439 as TLS 1.2 uses it, RFC
//! 7905, and TLS 1.3, RFC 8446): the keystream of a record from the
//! XOR-shared key and IV, and its Poly1305 tag from shares over
//! `p = 2^130 - 5`.
//!
//! Owns the two circuits of a record (the ChaCha20 record circuit and the
//! small tag circuit that finishes Poly1305), the arithmetic on shares of
//! the powers of the one-time key `r`, and both parties' state. The
//! messages are [`webproof_mpc::exec`]'s (the circuits) and [`webproof_mpc::ole`]'s (the
//! M2A of the powers of `r`, over [`Poly1305Field`]).
//!
//! # Where each public value comes from
//! - The sequence number: each party counts records itself (TLS never
//!   sends it); the verifier encodes it in the record circuit, and the
//!   prover checks that encoding on the verifier's reveal
//!   ([`check_verifier_inputs`]). The nonce is the IV XOR the sequence
//!   number left-padded to 12 bytes: the same in TLS 1.2 and 1.3.
//! - The AAD (TLS 1.2: sequence number, type, version, length; TLS 1.3:
//!   the 5-byte record header) and the ciphertext's length: each party
//!   builds them itself.
//! - The ciphertext: the prover's (it encrypts). In the plain variant
//!   the verifier takes it from the prover with the offsets and computes
//!   its own Poly1305 blocks from it ([`poly1305_blocks`]): a tag over
//!   another ciphertext than the one the verifier saw is simply wrong.
//!   In the hidden variant (the request's) it gets the ciphertext only
//!   masked by the prover's COT choice bits, twice (`D¹ = C ⊕ χ¹`,
//!   `D² = C ⊕ χ²`), and its share of the ciphertext's terms comes from
//!   bitwise OLEs answered in preprocessing
//!   ([`ChachaVerifier::hide_respond`]): the tag is over the ciphertext
//!   those choice bits fix.
//! - The offsets `d_e` of the powers' M2A: the prover's (it alone holds
//!   `r·t`); every other value each party computes itself.
//!
//! # Outputs the prover uses online, and why each is authentic
//! - The keystream: decoded from the verifier's garbling, so a verifier
//!   that garbled `KS ⊕ M` would make the server decrypt a request of its
//!   choice. As for AES-GCM it is checked by dual execution
//!   ([`crate::rec::dual`]) before a byte encrypted with it leaves: the prover
//!   garbles [`keystream_circuit`] ([`crate::rec::dual::DualProver::record`],
//!   the sequence number in the nonce group), the verifier evaluates it
//!   under ChaCha20's own bound
//!   ([`crate::rec::dual::RecordEvaluation::for_cipher`] with
//!   [`crate::rec::dual::RecordCipher::Chacha20Poly1305`]).
//! - The tag: decoded from the verifier's tag circuit. A wrong tag only
//!   makes the server refuse the record: it is computed after the
//!   ciphertext is fixed, over inputs that are the prover's random shares
//!   and a pad of `s`, so whether the server takes it is at most one bit
//!   of those ephemeral values, and says nothing of the request (one-time
//!   padded by a keystream the dual execution made authentic). The audit
//!   after the session catches the garbling.
//!
//! # After the session
//! Once the verifier revealed its inputs and `Δ`, the prover checks the
//! record circuit's inputs ([`check_verifier_inputs`]), the tag
//! circuit's pad ([`check_tag_inputs`]) and replays the record's bitwise
//! OLEs on the elements it computes itself from the revealed `t`
//! ([`audit_oles`]); the garbled circuits are audited as every other.
//!
//! What the proof of the request must still assert for a hidden
//! ciphertext: the tag binds the ciphertext the COT choice bits fix,
//! `D¹ ⊕ χ¹` in its `A` terms and `D² ⊕ χ²` in its `B` terms, not the `C`
//! the proof computes from the request and the key derivation's labels.
//! So it imports the choice bits of the [`hide_cots`] COTs as
//! authenticated bits (each MAC is a label of its choice bit under `Δ`:
//! no flip was sent), takes `D¹`, `D²` from the request as public
//! ([`masked_ciphertexts`]), and asserts `D¹ ⊕ χ¹ = D² ⊕ χ² = C` on every
//! bit of the zero-padded ciphertext ([`masked_cots`] names the two COTs
//! of a bit; the padding bits must be zero, since the tag counts them).
//! Without it a prover could prove a request other than the one the
//! server authenticated. [`prove_hidden_ciphertext`] and
//! [`verify_hidden_ciphertext`] make that statement on the caller's
//! authenticated `C`; the response proof of `webproof-mpc-tls` has to
//! call them (it does not yet).
//!
//! # Order of messages (one record)
//! Preprocessing: [`ChachaVerifier::chain`], then
//! [`ChachaVerifier::preprocess`] (V→P: both circuits' tables, decodings,
//! early labels) with [`ChachaVerifier::powers_respond`] (V→P: the
//! powers' M2A answered ahead; [`ChachaProver::powers_choose`] and
//! [`PendingPowers::finish`], nothing sent back); for a hidden ciphertext also
//! [`ChachaProver::hide_choose`] (nothing sent) and
//! [`ChachaVerifier::hide_respond`] (V→P, [`ChachaProver::hide_finish`]).
//! Online, once the key derivation is done: [`ChachaProver::keystream`]
//! (no message), then [`ChachaProver::tag_request`] or
//! [`ChachaProver::hidden_tag_request`] (P→V, with `C` in the plain
//! variant), [`ChachaVerifier::tag_inputs`] or
//! [`ChachaVerifier::hidden_tag_inputs`] (V→P), [`ChachaProver::tag`].
//! One round trip online. A refused message ends the record: the OLE and
//! garbling state is spent.
//!
//! The construction, the security argument and the costs:
//! `docs/protocol/mpc-chacha.md`.

use rand_core::{CryptoRng, RngCore};
use std::sync::Arc;
use webproof_circuits::aead::chacha20_poly1305_keystream;
pub use webproof_circuits::poly1305::{add_mod_p, clamp, mul_mod_p};
use webproof_circuits::{bits_to_bytes, bytes_to_bits, Bit, Builder, Circuit};
use webproof_core::cot::{RandomCotReceiver, RandomCotSender};
use webproof_core::{Block, Io};
use webproof_mpc::consistency::{self, OleBitsTranscript, OleReplay};
use webproof_mpc::error::{Error, Result};
use webproof_mpc::exec::{ProverCircuit, StepTables, VerifierCircuit};
use webproof_mpc::field::Poly1305Field;
use webproof_mpc::ole::{self, OleField, OleReceiver, OleSender, PendingBits};
use webproof_mpc::plan::Plan;
use webproof_zk::{Prover as ZkProver, ProverBit, Verifier as ZkVerifier, VerifierBit};

type F = Poly1305Field;

/// Bytes of a key ‖ IV share: the 32-byte ChaCha20 key, the 12-byte IV.
pub const KEY_IV_LEN: usize = 44;

/// Bytes of a Poly1305 value in a circuit (130 bits, little-endian, the
/// top 6 bits unused).
const ELEM_LEN: usize = 17;

/// Bytes of the verifier's masks in the record circuit: its multiplier
/// `t` of `r`, then its pad `m_s` of `s`.
const MASKS_LEN: usize = ELEM_LEN + 16;

/// Bytes of the prover's input to the tag circuit: its share of the
/// polynomial, then its share `s ⊕ m_s` of `s`.
pub const TAG_INPUT_LEN: usize = ELEM_LEN + 16;

/// COTs the prover's input to the tag circuit consumes (online).
pub const TAG_COTS: usize = 8 * TAG_INPUT_LEN;

/// The verifier's groups of the record circuit, all encoded in
/// preprocessing: its key ‖ IV share, the sequence number, its masks.
pub const EARLY_GROUPS: [usize; 3] = [1, 2, 3];

/// The verifier's group of the tag circuit known in preprocessing (its pad
/// `m_s`); its share of the polynomial (group 1) comes online.
pub const TAG_EARLY_GROUPS: [usize; 1] = [2];

// ---------------------------------------------------------------------
// Circuits.

/// The nonce of a record: the IV XOR the sequence number's input wires
/// (big-endian, left-padded to 12 bytes). Free.
fn nonce(b: &mut Builder, iv: &[Bit], seq: &[Bit]) -> Vec<Bit> {
    let mut n = iv[..32].to_vec();
    n.extend(b.xor_words(&iv[32..], seq));
    n
}

/// The record circuit of a `len`-byte record. Inputs `[prover key ‖ IV
/// share (44 B), verifier key ‖ IV share (44 B), sequence number (8 B,
/// big-endian, public), verifier masks (t: 17 B, m_s: 16 B)]`; outputs
/// `[keystream (len B, blocks 1, 2, …), r·t mod p (130 bits), s ⊕ m_s
/// (16 B)]`, `r` and `s` from block 0. `r` never leaves the circuit but
/// as the prover's multiplicative share `r·t` (the verifier's is
/// `t^{-1}`), `s` but one-time padded by the verifier's `m_s`.
pub fn chacha_circuit(len: usize) -> Circuit {
    let mut b = Builder::new();
    let sp = b.input_bytes(KEY_IV_LEN);
    let sv = b.input_bytes(KEY_IV_LEN);
    let seq = b.input_bytes(8);
    let masks = b.input_bytes(MASKS_LEN);
    let s = b.xor_words(&sp, &sv);
    let (key, iv) = s.split_at(256);
    let n = nonce(&mut b, iv, &seq);
    let (otk, ks) = chacha20_poly1305_keystream(&mut b, key, &n, len);
    b.output(&ks);
    let r = clamp(&otk[..128]);
    let h = mul_mod_p(&mut b, &r, &masks[..130]);
    b.output(&h);
    let s_p = b.xor_words(&otk[128..256], &masks[8 * ELEM_LEN..]);
    b.output(&s_p);
    b.finish()
}

/// The tag circuit: inputs `[prover (its share of the polynomial, 17 B;
/// s ⊕ m_s, 16 B), verifier's share of the polynomial (17 B), m_s
/// (16 B)]`; output the tag `((a_P + a_V) mod p + s) mod 2^128` (16 B).
/// Only the low 128 bits of the reduced sum are needed, so the
/// conditional subtraction selects 128 bits.
pub fn tag_circuit() -> Circuit {
    let mut b = Builder::new();
    let p = b.input_bytes(TAG_INPUT_LEN);
    let av = b.input_bytes(ELEM_LEN);
    let ms = b.input_bytes(16);
    let acc = add_mod_p(&mut b, &p[..130], &av[..130]);
    let s = b.xor_words(&p[8 * ELEM_LEN..], &ms);
    let tag = b.add(&acc[..128], &s);
    b.output(&tag);
    b.finish()
}

/// The keystream of a `len`-byte record alone (inputs `[prover key ‖ IV
/// share, verifier key ‖ IV share, sequence number (8 B)]`, output the
/// first output of [`chacha_circuit`]): the circuit the prover garbles for
/// the dual execution of [`crate::rec::dual`], which takes any circuit of
/// that shape ([`crate::rec::dual::DualProver::record`]).
pub fn keystream_circuit(len: usize) -> Circuit {
    assert!(len > 0, "an empty record has no keystream");
    let mut b = Builder::new();
    let sp = b.input_bytes(KEY_IV_LEN);
    let sv = b.input_bytes(KEY_IV_LEN);
    let seq = b.input_bytes(8);
    let s = b.xor_words(&sp, &sv);
    let (key, iv) = s.split_at(256);
    let n = nonce(&mut b, iv, &seq);
    let (_, ks) = chacha20_poly1305_keystream(&mut b, key, &n, len);
    b.output(&ks);
    b.finish()
}

// ---------------------------------------------------------------------
// Poly1305 on shares.

/// The Poly1305 input of the AEAD (RFC 8439 §2.8): the AAD and the
/// ciphertext, each zero-padded to 16 bytes, then both lengths as 64-bit
/// little-endian; each 16-byte block as a field element with its `2^128`
/// bit. Public to both parties: each computes it itself.
pub fn poly1305_blocks(aad: &[u8], ct: &[u8]) -> Vec<F> {
    let mut out = Vec::with_capacity(blocks_needed(aad.len(), ct.len()));
    for part in [aad, ct] {
        for chunk in part.chunks(16) {
            let mut b = [0u8; 17];
            b[..chunk.len()].copy_from_slice(chunk);
            b[16] = 1;
            out.push(F::from_le_slice_reduced(&b));
        }
    }
    let mut last = [0u8; 17];
    last[..8].copy_from_slice(&(aad.len() as u64).to_le_bytes());
    last[8..16].copy_from_slice(&(ct.len() as u64).to_le_bytes());
    last[16] = 1;
    out.push(F::from_le_slice_reduced(&last));
    out
}

/// Poly1305 blocks of a record with `aad_len` bytes of AAD and `len`
/// bytes of ciphertext: the powers of `r` its tag needs, one OLE each.
pub fn blocks_needed(aad_len: usize, len: usize) -> usize {
    aad_len.div_ceil(16) + len.div_ceil(16) + 1
}

/// COTs of the M2A of the powers of `r` of such a record (preprocessing).
pub fn cots_needed(aad_len: usize, len: usize) -> usize {
    ole::cots_needed::<F>(blocks_needed(aad_len, len))
}

/// One party's additive share of the polynomial `Σ c_j·r^(q-j)` (blocks
/// `c_0..c_{q-1}`, `powers[i]` a share of `r^(i+1)`): Poly1305's
/// accumulator before `s` is added, since Horner's `(acc + c)·r` unrolls
/// to it.
pub fn poly_share(c: &[F], powers: &[F]) -> Option<F> {
    let q = c.len();
    if powers.len() != q {
        return None;
    }
    Some(
        c.iter()
            .enumerate()
            .fold(F::ZERO, |acc, (j, &cj)| acc + cj * powers[q - 1 - j]),
    )
}

/// The sum of shares.
fn sum(xs: &[F]) -> F {
    xs.iter().fold(F::ZERO, |a, &x| a + x)
}

/// A circuit's 130-bit output as a field element (reduced).
fn elem_from_bits(bits: &[bool]) -> F {
    let mut b = bits.to_vec();
    b.resize(8 * ELEM_LEN, false);
    F::from_le_slice_reduced(&bits_to_bytes(&b))
}

/// `x^1, …, x^k`.
fn powers(x: F, k: usize) -> Vec<F> {
    let mut acc = F::ONE;
    (0..k)
        .map(|_| {
            acc = acc * x;
            acc
        })
        .collect()
}

/// A uniform nonzero element below `2^130` as the circuit takes it.
fn nonzero(rng: &mut (impl RngCore + CryptoRng)) -> F {
    F::random_nonzero(rng)
}

/// The verifier's groups of the record circuit after the prover's.
fn verifier_groups(key_iv_share: &[u8], seq: u64, t: &F, m_s: &[u8; 16]) -> Vec<Vec<bool>> {
    vec![
        bytes_to_bits(key_iv_share),
        bytes_to_bits(&seq.to_be_bytes()),
        bytes_to_bits(&[&t.to_le17()[..], m_s].concat()),
    ]
}

/// The prover's check, after the session, of the verifier's revealed
/// inputs of one record circuit (`inputs`: its groups, without the
/// prover's): its key ‖ IV share must be the one the key derivation fixes
/// for the direction and the sequence number the record's own (another
/// record's nonce would reuse a keystream), and its multiplier `t` a
/// nonzero canonical element (a zero `t` would zero the prover's share of
/// `r`, and the tag would not depend on the key).
pub fn check_verifier_inputs(key_iv_share: &[u8], seq: u64, inputs: &[Vec<bool>]) -> Result<()> {
    let t = verifier_multiplier(inputs)?;
    let masks = bits_to_bytes(&inputs[2]);
    let m_s: [u8; 16] = masks[ELEM_LEN..].try_into().expect("16 bytes");
    if verifier_groups(key_iv_share, seq, &t, &m_s) != inputs {
        return Err(Error::VerifierCheated(
            "record inputs other than its key-derivation share and the record's sequence number",
        ));
    }
    Ok(())
}

/// The verifier's multiplier `t` of `r` from its revealed record-circuit
/// inputs `inputs`: a canonical nonzero element, or it cheated.
fn verifier_multiplier(inputs: &[Vec<bool>]) -> Result<F> {
    let masks = match inputs {
        [_, _, m] if m.len() == 8 * MASKS_LEN => bits_to_bytes(m),
        _ => return Err(Error::Malformed("inputs of another record circuit")),
    };
    let t = F::from_le17(&masks[..ELEM_LEN]).ok_or(Error::VerifierCheated(
        "a record's multiplier of r is not below p",
    ))?;
    if t.is_zero() {
        return Err(Error::VerifierCheated("a record's multiplier of r is zero"));
    }
    Ok(t)
}

/// The prover's check, after the session, of the verifier's revealed
/// inputs of a record's tag circuit (`tag_inputs`: its share of the
/// polynomial, its pad of `s`) against those of the record circuit
/// (`record_inputs`, checked by [`check_verifier_inputs`]): the pad must
/// be the one the record circuit used, or the tag circuit added a value
/// other than `s`. Its share of the polynomial is the consistency proof's
/// to check (it follows from its OLE shares and the offsets).
pub fn check_tag_inputs(record_inputs: &[Vec<bool>], tag_inputs: &[Vec<bool>]) -> Result<()> {
    let (masks, pad) = match (record_inputs, tag_inputs) {
        ([_, _, m], [a, pad]) if m.len() == 8 * MASKS_LEN && a.len() == 8 * ELEM_LEN => (m, pad),
        _ => return Err(Error::Malformed("inputs of another record's circuits")),
    };
    if pad[..] != masks[8 * ELEM_LEN..] {
        return Err(Error::VerifierCheated(
            "a tag circuit's pad of s other than its record circuit's",
        ));
    }
    Ok(())
}

/// The preprocessing of one record as the prover stores it: the record
/// circuit's and the tag circuit's tables, decodings and early labels.
pub type ChachaTables = (StepTables, StepTables);

// ---------------------------------------------------------------------
// Verifier.

/// The verifier's side of one record.
pub struct ChachaVerifier {
    record: VerifierCircuit,
    tag: VerifierCircuit,
    len: usize,
    aad_len: usize,
    seq: u64,
    key_iv_share: Option<Vec<u8>>,
    /// Its multiplier of `r` (the prover's share is `r·t`, its own
    /// `t^{-1}`).
    t: F,
    /// Its pad of `s`.
    m_s: [u8; 16],
    /// From the M2A answered in preprocessing: its shares `u_e` of
    /// `t^{-e}·ρ_e` and its inputs `t^{-e}`, `e = 1..=q`.
    ahead: Option<(Vec<F>, Vec<F>)>,
    /// From the bitwise OLEs of a hidden ciphertext answered in
    /// preprocessing: per ciphertext block `i`, its inputs `A_i`, `B_i`
    /// (its `u_e` and `t^{-e}` for the power `e` the block takes) and its
    /// per-bit shares of `A_i·2^k·χ¹_k`, `B_i·2^k·χ²_k`.
    hidden: Option<HiddenVerifier>,
    /// Whether the tag circuit's inputs went out.
    answered: bool,
}

struct HiddenVerifier {
    a: Vec<F>,
    b: Vec<F>,
    ua: Vec<F>,
    ub: Vec<F>,
}

impl ChachaVerifier {
    /// A `len`-byte record with `aad_len` bytes of AAD under sequence
    /// number `seq`, for the plans of [`chacha_circuit`]`(len)` and
    /// [`tag_circuit`], garbling instances `instances` (distinct in the
    /// session).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        record_plan: Arc<Plan>,
        tag_plan: Arc<Plan>,
        len: usize,
        aad_len: usize,
        seq: u64,
        delta: Block,
        instances: [u64; 2],
        rng: &mut (impl RngCore + CryptoRng),
    ) -> Result<Self> {
        if record_plan.outputs().len() != 3
            || record_plan.outputs()[0].len() != 8 * len
            || tag_plan.outputs().len() != 1
        {
            return Err(Error::Malformed("circuits of another record"));
        }
        let mut m_s = [0u8; 16];
        rng.fill_bytes(&mut m_s);
        Ok(ChachaVerifier {
            record: VerifierCircuit::new(record_plan, delta, instances[0], 0, rng)?,
            tag: VerifierCircuit::new(tag_plan, delta, instances[1], 0, rng)?,
            len,
            aad_len,
            seq,
            key_iv_share: None,
            t: nonzero(rng),
            m_s,
            ahead: None,
            hidden: None,
            answered: false,
        })
    }

    /// Before garbling: chain the prover's key ‖ IV share to the key
    /// derivation's output, whose 0-labels are `key_iv_zero`, and take the
    /// verifier's own share `key_iv_share`.
    pub fn chain(&mut self, key_iv_zero: &[Block], key_iv_share: &[u8]) -> Result<()> {
        if self.key_iv_share.is_some()
            || key_iv_share.len() != KEY_IV_LEN
            || key_iv_zero.len() != 8 * KEY_IV_LEN
        {
            return Err(Error::Malformed("a record chained twice or to another key"));
        }
        self.record.chain_prover_input(key_iv_zero)?;
        self.key_iv_share = Some(key_iv_share.to_vec());
        Ok(())
    }

    /// Preprocessing, after [`Self::chain`]: both circuits' tables,
    /// decodings and the labels of the verifier's early inputs.
    pub fn preprocess(&mut self) -> Result<ChachaTables> {
        let share = self
            .key_iv_share
            .clone()
            .ok_or(Error::Malformed("a record's inputs before its chaining"))?;
        let own = verifier_groups(&share, self.seq, &self.t, &self.m_s);
        let early = self.record.early_inputs(&EARLY_GROUPS, &own)?;
        let record = (
            self.record.garble_all().into(),
            self.record.decoding()?,
            early,
        );
        let early = self
            .tag
            .early_inputs(&TAG_EARLY_GROUPS, &[bytes_to_bits(&self.m_s)])?;
        let tag = (self.tag.garble_all().into(), self.tag.decoding()?, early);
        Ok((record, tag))
    }

    /// Preprocessing: the M2A of `r^1..=r^q` answered ahead, with the
    /// tables, on `keys` ([`cots_needed`] fresh COT keys of the record's
    /// OLE stream): bitwise OLEs on the verifier's `t^{-e}·2^k`, `k < 130`,
    /// whose per-bit shares it sums, so the prover's input is
    /// `ρ_e = Σ_k χ_k·2^k mod p` of its choice bits and it sends nothing
    /// ([`ChachaProver::powers_choose`]).
    pub fn powers_respond(&mut self, ole: &mut OleSender, keys: &[Block]) -> Result<Vec<u8>> {
        if self.ahead.is_some() {
            return Err(Error::Malformed("the powers answered twice"));
        }
        let q = blocks_needed(self.aad_len, self.len);
        if keys.len() != 130 * q {
            return Err(Error::Malformed("COTs for another record's powers"));
        }
        let inputs = powers(self.t.invert().expect("nonzero by construction"), q);
        let (bits, msg) = ole.respond_bits_ahead(keys, &powers_multiples(&inputs))?;
        let u = bits.chunks(130).map(sum).collect();
        self.ahead = Some((u, inputs));
        Ok(msg)
    }

    /// The circuits (for what the consistency proof retains).
    pub fn circuits(&self) -> (&VerifierCircuit, &VerifierCircuit) {
        (&self.record, &self.tag)
    }

    /// Online: the prover's request ([`ChachaProver::tag_request`]: the
    /// offsets `d_e = (r·t)^e − ρ_e`, then its flips for the tag circuit)
    /// with the ciphertext `ct` and the record's `aad`, and the verifier's
    /// COT `keys` ([`TAG_COTS`]): its shares of `r^e` are `u_e +
    /// d_e·t^{-e}`, its share of the polynomial is over the blocks it
    /// computes from `aad` and `ct`, and the answer is the tag circuit's
    /// input labels; once.
    pub fn tag_inputs(
        &mut self,
        aad: &[u8],
        ct: &[u8],
        request: &[u8],
        keys: &[Block],
    ) -> Result<Vec<u8>> {
        if ct.len() != self.len || aad.len() != self.aad_len {
            return Err(Error::Malformed("AAD or ciphertext of the wrong length"));
        }
        if self.answered {
            return Err(Error::Malformed("a record's tag inputs twice"));
        }
        let (u, hv) = self
            .ahead
            .as_ref()
            .ok_or(Error::Malformed("a tag request before the powers' M2A"))?;
        let q = hv.len();
        if request.len() != request_len(q) {
            return Err(Error::Malformed("a tag request of the wrong length"));
        }
        let (offsets, flips) = request.split_at(q * F::BYTES);
        let mut shares = Vec::with_capacity(q);
        for ((d, &u), &hv) in offsets.chunks(F::BYTES).zip(u).zip(hv) {
            let d = <F as OleField>::decode(d)
                .ok_or(Error::Malformed("an offset that is not below p"))?;
            shares.push(u + d * hv);
        }
        let acc = poly_share(&poly1305_blocks(aad, ct), &shares).expect("q blocks");
        let msg = self
            .tag
            .inputs(keys, flips, &[bytes_to_bits(&acc.to_le17())])?;
        self.answered = true;
        Ok(msg)
    }
}

impl ChachaVerifier {
    /// Preprocessing, after [`Self::powers_respond`], for a record whose
    /// ciphertext the verifier must not see: the bitwise OLEs on its
    /// inputs `A_i·2^k` and `B_i·2^k` for ciphertext block `i` and bit `k`
    /// (`A_i = u_e`, `B_i = t^{-e}`, `e` the power of `r` block `i`
    /// takes), on `keys` ([`hide_cots`] fresh COT keys of the record's OLE
    /// stream: the `A`s', then the `B`s'); the message for
    /// [`ChachaProver::hide_finish`]. Online its share of `c_i·[r^e]_V =
    /// c_i·A_i + d_e·c_i·B_i` is then linear in what it holds.
    pub fn hide_respond(&mut self, ole: &mut OleSender, keys: &[Block]) -> Result<Vec<u8>> {
        let (u, hv) = self
            .ahead
            .as_ref()
            .ok_or(Error::Malformed("a hidden ciphertext before the powers"))?;
        if self.hidden.is_some() {
            return Err(Error::Malformed("the hidden ciphertext's OLEs twice"));
        }
        if keys.len() != hide_cots(self.len) {
            return Err(Error::Malformed("COTs for another record's ciphertext"));
        }
        let (a, b) = hide_inputs(u, hv, self.aad_len, self.len);
        let (mut ua, msg) = ole.respond_bits_ahead(keys, &hide_multiples(&a, &b))?;
        let ub = ua.split_off(128 * a.len());
        self.hidden = Some(HiddenVerifier { a, b, ua, ub });
        Ok(msg)
    }

    /// Online, for a hidden record: the prover's request
    /// ([`ChachaProver::hidden_tag_request`]: offsets, `D¹`, `D²`, flips)
    /// under the record's `aad`, and the verifier's COT `keys`
    /// ([`TAG_COTS`]): the tag circuit's input labels. The verifier never
    /// sees the ciphertext: its share of the polynomial is over the AAD,
    /// the lengths and the ciphertext blocks' `2^128` bits, plus
    /// `Σ_i c_i·[r^e]_V` from the bitwise OLEs; once.
    pub fn hidden_tag_inputs(
        &mut self,
        aad: &[u8],
        request: &[u8],
        keys: &[Block],
    ) -> Result<Vec<u8>> {
        if aad.len() != self.aad_len {
            return Err(Error::Malformed("AAD of the wrong length"));
        }
        if self.answered {
            return Err(Error::Malformed("a record's tag inputs twice"));
        }
        let (u, hv) = self
            .ahead
            .as_ref()
            .ok_or(Error::Malformed("a tag request before the powers' M2A"))?;
        let h = self.hidden.as_ref().ok_or(Error::Malformed(
            "a hidden tag request for a record whose ciphertext is not hidden",
        ))?;
        let q = hv.len();
        let n = ct_blocks(self.len);
        if request.len() != hidden_request_len(q, n) {
            return Err(Error::Malformed("a tag request of the wrong length"));
        }
        let (offsets, rest) = request.split_at(q * F::BYTES);
        let (d1, rest) = rest.split_at(16 * n);
        let (d2, flips) = rest.split_at(16 * n);
        let mut d = Vec::with_capacity(q);
        let mut shares = Vec::with_capacity(q);
        for ((off, &u), &hv) in offsets.chunks(F::BYTES).zip(u).zip(hv) {
            let de = <F as OleField>::decode(off)
                .ok_or(Error::Malformed("an offset that is not below p"))?;
            d.push(de);
            shares.push(u + de * hv);
        }
        // The public blocks, and each ciphertext block's 2^128 bit.
        let mut acc =
            poly_share(&poly1305_blocks(aad, &vec![0; self.len]), &shares).expect("q blocks");
        let first = self.aad_len.div_ceil(16);
        let pw = pow2(128);
        for i in 0..n {
            let e = q - 1 - (first + i);
            let r = 128 * i..128 * (i + 1);
            let ca = masked_product_share(
                &d1[16 * i..16 * i + 16],
                &h.ua[r.clone()],
                Some(h.a[i]),
                &pw,
            );
            let cb = masked_product_share(&d2[16 * i..16 * i + 16], &h.ub[r], Some(h.b[i]), &pw);
            acc = acc + ca + d[e] * cb;
        }
        let msg = self
            .tag
            .inputs(keys, flips, &[bytes_to_bits(&acc.to_le17())])?;
        self.answered = true;
        Ok(msg)
    }
}

/// The verifier's elements of the powers' bitwise OLEs for its inputs
/// `t^{-e}`, `e = 1..=q`: `t^{-e}·2^k`, `k < 130`, power after power.
fn powers_multiples(inputs: &[F]) -> Vec<F> {
    let pw = pow2(130);
    inputs
        .iter()
        .flat_map(|&x| pw.iter().map(move |&t| x * t))
        .collect()
}

/// The verifier's inputs of a hidden ciphertext's OLEs from its powers'
/// M2A (`u` its shares `u_e`, `hv` its `t^{-e}`): per ciphertext block
/// `i`, `A_i = u_e` and `B_i = t^{-e}` for the power `e` the block takes.
fn hide_inputs(u: &[F], hv: &[F], aad_len: usize, len: usize) -> (Vec<F>, Vec<F>) {
    let q = hv.len();
    let first = aad_len.div_ceil(16);
    let idx = |i: usize| q - 1 - (first + i);
    let n = ct_blocks(len);
    (
        (0..n).map(|i| u[idx(i)]).collect(),
        (0..n).map(|i| hv[idx(i)]).collect(),
    )
}

/// The elements of those OLEs: `A_i·2^k` for every block, then
/// `B_i·2^k`, `k < 128`.
fn hide_multiples(a: &[F], b: &[F]) -> Vec<F> {
    let pw = pow2(128);
    a.iter()
        .chain(b)
        .flat_map(|&x| pw.iter().map(move |&t| x * t))
        .collect()
}

/// The prover's audit, after the session and once `Δ` is revealed and
/// checked, of one record's bitwise OLEs on `replay` (the record's OLE
/// stream, at its first batch of the record): the powers' batch
/// `powers_batch` and, for a hidden ciphertext, the ciphertext's `hidden`,
/// each
/// replayed on the elements an honest verifier had. The prover computes
/// those itself: the powers' from the multiplier `t` of the verifier's
/// revealed record-circuit inputs `record_inputs` (checked by
/// [`check_verifier_inputs`]), the ciphertext's from them and the
/// verifier's shares of the powers' batch the replay gives. A verifier
/// that answered on other elements, or answered wrong (the selective
/// failure of the module docs), is [`Error::VerifierCheated`]; so is a
/// revealed `t` that is not canonical or is zero. The revealed OLE inputs
/// ([`webproof_mpc::ole::OleSender::inputs`]) are not needed: they would only
/// have to equal these.
pub fn audit_oles(
    replay: &mut OleReplay,
    record_inputs: &[Vec<bool>],
    aad_len: usize,
    len: usize,
    powers_batch: &OleBitsTranscript,
    hidden: Option<&OleBitsTranscript>,
) -> Result<()> {
    let t = verifier_multiplier(record_inputs)?;
    let hv = powers(
        t.invert().expect("nonzero, checked"),
        blocks_needed(aad_len, len),
    );
    let bits = replay.bits(powers_batch, &powers_multiples(&hv))?;
    if let Some(h) = hidden {
        let u: Vec<F> = bits.chunks(130).map(sum).collect();
        let (a, b) = hide_inputs(&u, &hv, aad_len, len);
        replay.bits(h, &hide_multiples(&a, &b))?;
    }
    Ok(())
}

/// Bytes of the prover's online request for `q` Poly1305 blocks: `q`
/// offsets and the flips of [`TAG_COTS`] COTs.
pub fn request_len(q: usize) -> usize {
    q * F::BYTES + TAG_COTS / 8
}

/// Ciphertext blocks of a `len`-byte record (16 bytes, the last one
/// zero-padded).
pub fn ct_blocks(len: usize) -> usize {
    len.div_ceil(16)
}

/// COTs of the bitwise OLEs that keep a `len`-byte record's ciphertext
/// from the verifier (preprocessing): two per ciphertext bit.
pub fn hide_cots(len: usize) -> usize {
    2 * 128 * ct_blocks(len)
}

/// Which of a hidden record's ciphertext COTs ([`hide_cots`]`(len)`, in
/// the order given to [`ChachaProver::hide_choose`]) mask bit `n` of its
/// zero-padded ciphertext (bit `n % 8` of byte `n / 8`, the order of
/// `bytes_to_bits`): the COT of `χ¹` in `D¹` and that of `χ²` in `D²`.
/// Each COT's MAC is a label of its choice bit under the verifier's `Δ`
/// (no flip was sent), so the proof of the request imports them as
/// authenticated bits and asserts, for every `n < 128·⌈len/16⌉`,
/// `D¹_n ⊕ χ¹_n = D²_n ⊕ χ²_n = C_n`, with `C_n = 0` on the padding.
pub fn masked_cots(len: usize, n: usize) -> [usize; 2] {
    let bits = 128 * ct_blocks(len);
    assert!(n < bits, "a bit of the padded ciphertext");
    [n, bits + n]
}

/// The two masked copies `D¹`, `D²` in a hidden record's request
/// ([`ChachaProver::hidden_tag_request`]) with `q` Poly1305 blocks, for a
/// `len`-byte record; `None` for a request of another length.
pub fn masked_ciphertexts(request: &[u8], q: usize, len: usize) -> Option<(&[u8], &[u8])> {
    let n = ct_blocks(len);
    if request.len() != hidden_request_len(q, n) {
        return None;
    }
    let d = &request[q * F::BYTES..q * F::BYTES + 32 * n];
    Some(d.split_at(16 * n))
}

/// The statement of the proof after the session on a hidden record,
/// prover's side (sealed mode): its ciphertext `ct` (`8·len`
/// authenticated bits, as the proof of the request computes them) is
/// what the COT choice bits fixed, `D¹ ⊕ χ¹ = D² ⊕ χ² = C` on every bit
/// of the zero-padded ciphertext, with `hide_macs` the MACs given to
/// [`ChachaProver::hide_choose`] (each the label of its choice bit: no
/// flip was sent) and `d1`, `d2` from the request ([`masked_ciphertexts`]).
pub async fn prove_hidden_ciphertext<C: RandomCotReceiver, T: Io>(
    zk: &mut ZkProver<C, T>,
    len: usize,
    hide_macs: &[Block],
    (d1, d2): (&[u8], &[u8]),
    ct: &[ProverBit],
) -> Result<()> {
    let n = ct_blocks(len);
    if hide_macs.len() != hide_cots(len)
        || d1.len() != 16 * n
        || d2.len() != 16 * n
        || ct.len() != 8 * len
    {
        return Err(Error::Malformed(
            "a hidden ciphertext's statement of another length",
        ));
    }
    let chi: Vec<bool> = hide_macs.iter().map(|m| m.lsb()).collect();
    let chi = zk.import_labels(hide_macs, &chi).map_err(Error::from_zk)?;
    let mut padded = ct.to_vec();
    padded.resize(128 * n, zk.constant(false));
    let (chi1, chi2) = chi.split_at(128 * n);
    for (chi, d) in [(chi1, d1), (chi2, d2)] {
        let c = consistency::xor_public_prover(zk, chi, &bytes_to_bits(d))?;
        consistency::prove_equal(zk, &c, &padded).await?;
    }
    Ok(())
}

/// The verifier's side of [`prove_hidden_ciphertext`]: `hide_keys` the
/// keys given to [`ChachaVerifier::hide_respond`] (the 0-labels of the
/// choice bits: their COTs must come from the proof's own COT source, so
/// that their `Δ` is the proof's), `d1`, `d2` from the request it
/// received.
pub async fn verify_hidden_ciphertext<C: RandomCotSender, T: Io>(
    zk: &mut ZkVerifier<C, T>,
    len: usize,
    hide_keys: &[Block],
    (d1, d2): (&[u8], &[u8]),
    ct: &[VerifierBit],
) -> Result<()> {
    let n = ct_blocks(len);
    if hide_keys.len() != hide_cots(len)
        || d1.len() != 16 * n
        || d2.len() != 16 * n
        || ct.len() != 8 * len
    {
        return Err(Error::Malformed(
            "a hidden ciphertext's statement of another length",
        ));
    }
    let chi = zk.import_labels(hide_keys);
    let mut padded = ct.to_vec();
    padded.resize(128 * n, zk.constant(false));
    let (chi1, chi2) = chi.split_at(128 * n);
    for (chi, d) in [(chi1, d1), (chi2, d2)] {
        let c = consistency::xor_public_verifier(zk, chi, &bytes_to_bits(d))?;
        consistency::verify_equal(zk, &c, &padded).await?;
    }
    Ok(())
}

/// Bytes of the prover's online request of a hidden record with `q`
/// Poly1305 blocks and `n` ciphertext blocks: the offsets, the ciphertext
/// masked twice (`D¹`, `D²`, 16 bytes a block each), the flips.
pub fn hidden_request_len(q: usize, n: usize) -> usize {
    request_len(q) + 32 * n
}

/// `2^k` for `k < n`.
fn pow2(n: usize) -> Vec<F> {
    let mut x = F::ONE;
    (0..n)
        .map(|_| {
            let p = x;
            x = x + x;
            p
        })
        .collect()
}

/// A share of `a·c` for the 128-bit `c = D ⊕ χ` from the per-bit shares
/// `share_k` of `a·2^k·χ_k` ([`OleSender::respond_bits_ahead`]): `c_k =
/// D_k + (1 − 2D_k)·χ_k`, so `a·c = Σ_k D_k·a·2^k + Σ_k (1 − 2D_k)·a·2^k·χ_k`.
/// The first sum is the sender's alone (`a` given), the second linear in
/// the shares with public coefficients.
fn masked_product_share(d: &[u8], shares: &[F], a: Option<F>, pow2: &[F]) -> F {
    let bits = bytes_to_bits(d);
    let mut acc = F::ZERO;
    for ((&dk, &sk), &tk) in bits.iter().zip(shares).zip(pow2) {
        if dk {
            acc = acc - sk;
            if let Some(a) = a {
                acc = acc + a * tk;
            }
        } else {
            acc = acc + sk;
        }
    }
    acc
}

// ---------------------------------------------------------------------
// Prover.

/// The prover's half of the powers' M2A, waiting for the verifier's
/// answer.
pub struct PendingPowers {
    rho: Vec<F>,
    pending: PendingBits<F>,
}

/// The prover's half of the powers' M2A: its random inputs `ρ_e` and its
/// shares `v_e` of `t^{-e}·ρ_e`, which are its shares of `r^e` once it
/// sends `d_e = (r·t)^e − ρ_e`.
#[derive(Clone, Debug)]
pub struct PowersAhead {
    rho: Vec<F>,
    v: Vec<F>,
}

impl PendingPowers {
    /// The prover's shares from the verifier's answer
    /// ([`ChachaVerifier::powers_respond`]).
    pub fn finish(self, msg: &[u8]) -> Result<PowersAhead> {
        let v = self.pending.finish(msg)?.chunks(130).map(sum).collect();
        Ok(PowersAhead { rho: self.rho, v })
    }
}

/// The prover's half of the bitwise OLEs of a hidden ciphertext: its
/// choice bits `χ¹ ‖ χ²` (128 a ciphertext block each) and its per-bit
/// shares.
#[derive(Clone, Debug)]
pub struct HiddenAhead {
    chi: Vec<bool>,
    v: Vec<F>,
}

/// The prover's side of one record.
pub struct ChachaProver {
    record: ProverCircuit,
    record_tables: StepTables,
    tag: ProverCircuit,
    tag_tables: StepTables,
    len: usize,
    aad_len: usize,
    ahead: PowersAhead,
    /// The bitwise OLEs of its hidden ciphertext, if the verifier must
    /// not see it.
    hidden: Option<HiddenAhead>,
    /// Once evaluated: its share `r·t` and `s ⊕ m_s`.
    evaluated: Option<(F, [u8; 16])>,
    /// Whether its tag request went out.
    requested: bool,
    tagged: bool,
}

impl ChachaProver {
    /// Preprocessing: the M2A of `r^1..=r^q` for a `len`-byte record with
    /// `aad_len` bytes of AAD, on `macs` ([`cots_needed`] fresh COT MACs
    /// of the record's OLE stream, 130 a power): the prover's inputs are
    /// its choice bits, `ρ_e = Σ_k χ_k·2^k mod p` (a uniform 130-bit
    /// integer reduced: within `2^-127` of uniform), so nothing is sent
    /// and the verifier answers with the tables
    /// ([`ChachaVerifier::powers_respond`]).
    pub fn powers_choose(
        len: usize,
        aad_len: usize,
        ole: &mut OleReceiver,
        macs: &[Block],
    ) -> Result<PendingPowers> {
        if macs.len() != cots_needed(aad_len, len) {
            return Err(Error::Malformed("COTs for another record's powers"));
        }
        let pending = ole.choose_bits_ahead(macs)?;
        let rho = pending.choices().chunks(130).map(elem_from_bits).collect();
        Ok(PendingPowers { rho, pending })
    }

    /// Preprocessing, for a `len`-byte record whose ciphertext the
    /// verifier must not see: the bitwise OLEs on `macs` ([`hide_cots`]
    /// fresh COT MACs of the record's OLE stream), whose choice bits mask
    /// the ciphertext online; nothing to send.
    pub fn hide_choose(
        len: usize,
        ole: &mut OleReceiver,
        macs: &[Block],
    ) -> Result<PendingBits<F>> {
        if macs.len() != hide_cots(len) {
            return Err(Error::Malformed("COTs for another record's ciphertext"));
        }
        ole.choose_bits_ahead(macs)
    }

    /// The prover's half of the hidden ciphertext's OLEs from the
    /// verifier's answer ([`ChachaVerifier::hide_respond`]).
    pub fn hide_finish(pending: PendingBits<F>, msg: &[u8]) -> Result<HiddenAhead> {
        let chi = pending.choices().to_vec();
        let v = pending.finish(msg)?;
        Ok(HiddenAhead { chi, v })
    }

    /// The prover of a record with the verifier's preprocessing, the
    /// powers' M2A and, if the verifier must not see its ciphertext, the
    /// bitwise OLEs of [`Self::hide_choose`].
    pub fn new(
        (record_plan, tag_plan): (Arc<Plan>, Arc<Plan>),
        len: usize,
        aad_len: usize,
        instances: [u64; 2],
        (record_tables, tag_tables): ChachaTables,
        ahead: PowersAhead,
        hidden: Option<HiddenAhead>,
    ) -> Result<Self> {
        if record_plan.outputs().len() != 3
            || record_plan.outputs()[0].len() != 8 * len
            || tag_plan.outputs().len() != 1
        {
            return Err(Error::Malformed("circuits of another record"));
        }
        if ahead.v.len() != blocks_needed(aad_len, len) {
            return Err(Error::Malformed("powers answered for another record"));
        }
        if hidden.as_ref().is_some_and(|h| h.v.len() != hide_cots(len)) {
            return Err(Error::Malformed(
                "a hidden ciphertext's OLEs for another record",
            ));
        }
        let mut record = ProverCircuit::new(record_plan, instances[0], 0)?;
        record.receive_early(&EARLY_GROUPS, &record_tables.2)?;
        let mut tag = ProverCircuit::new(tag_plan, instances[1], 0)?;
        tag.receive_early(&TAG_EARLY_GROUPS, &tag_tables.2)?;
        Ok(ChachaProver {
            record,
            record_tables,
            tag,
            tag_tables,
            len,
            aad_len,
            ahead,
            hidden,
            evaluated: None,
            requested: false,
            tagged: false,
        })
    }

    /// The circuits (for what the consistency proof retains).
    pub fn circuits(&self) -> (&ProverCircuit, &ProverCircuit) {
        (&self.record, &self.tag)
    }

    /// Evaluate the record circuit on the prover's key ‖ IV share and its
    /// labels from the key derivation (the chained input): the keystream
    /// (authentic only once the dual execution checked it, see the module
    /// docs).
    pub fn keystream(&mut self, key_iv_labels: &[Block], key_iv_share: &[u8]) -> Result<Vec<u8>> {
        if self.evaluated.is_some() {
            return Err(Error::Malformed("a record evaluated twice"));
        }
        self.record
            .chain_prover_input(key_iv_labels, &bytes_to_bits(key_iv_share))?;
        self.record.feed_received(&self.record_tables.0)?;
        self.record.finish()?;
        let out = self.record.decode(&self.record_tables.1)?;
        let s: [u8; 16] = bits_to_bytes(&out[2]).try_into().expect("16 bytes");
        // Below p by construction; a garbling that decodes to p or above
        // is reduced and only spoils the tag.
        self.evaluated = Some((elem_from_bits(&out[1]), s));
        Ok(bits_to_bytes(&out[0]))
    }

    /// Online, once evaluated: the request to send with the ciphertext
    /// `ct` (under `aad`): the offsets `d_e = (r·t)^e − ρ_e` of the powers'
    /// M2A, then the flips of the prover's tag-circuit input on `macs`
    /// ([`TAG_COTS`] fresh COT MACs). Its input is its share of the
    /// polynomial (from the `v_e` of preprocessing) and `s ⊕ m_s`.
    pub fn tag_request(&mut self, aad: &[u8], ct: &[u8], macs: &[Block]) -> Result<Vec<u8>> {
        if ct.len() != self.len || aad.len() != self.aad_len {
            return Err(Error::Malformed("AAD or ciphertext of the wrong length"));
        }
        let (h, s) = self
            .evaluated
            .ok_or(Error::Malformed("a tag request before the evaluation"))?;
        if self.requested {
            return Err(Error::Malformed("a record's tag request twice"));
        }
        let mut msg = Vec::with_capacity(request_len(self.ahead.rho.len()));
        for (p, rho) in powers(h, self.ahead.rho.len()).iter().zip(&self.ahead.rho) {
            (*p - *rho).encode(&mut msg);
        }
        let acc = poly_share(&poly1305_blocks(aad, ct), &self.ahead.v).expect("q blocks");
        let bits = bytes_to_bits(&[&acc.to_le17()[..], &s].concat());
        msg.extend(self.tag.flips(macs, &bits)?);
        self.requested = true;
        Ok(msg)
    }

    /// Online, once evaluated, for a record whose ciphertext is hidden:
    /// the request to send in place of the ciphertext: the offsets, the
    /// ciphertext masked by each batch's choice bits (`D¹ = C ⊕ χ¹`,
    /// `D² = C ⊕ χ²`, the last block zero-padded first), then the flips of
    /// its tag-circuit input on `macs` ([`TAG_COTS`]). Its share of the
    /// polynomial adds `c_i·[r^e]_P` (its own) and its shares of `c_i·A_i`
    /// and `d_e·c_i·B_i`, all computed before it sends.
    pub fn hidden_tag_request(&mut self, aad: &[u8], ct: &[u8], macs: &[Block]) -> Result<Vec<u8>> {
        let h = self.hidden.as_ref().ok_or(Error::Malformed(
            "a hidden tag request for a record whose ciphertext is not hidden",
        ))?;
        if ct.len() != self.len || aad.len() != self.aad_len {
            return Err(Error::Malformed("AAD or ciphertext of the wrong length"));
        }
        let (hp, s) = self
            .evaluated
            .ok_or(Error::Malformed("a tag request before the evaluation"))?;
        if self.requested {
            return Err(Error::Malformed("a record's tag request twice"));
        }
        let q = self.ahead.rho.len();
        let n = ct_blocks(self.len);
        let mut msg = Vec::with_capacity(hidden_request_len(q, n));
        let mut d = Vec::with_capacity(q);
        for (p, rho) in powers(hp, q).iter().zip(&self.ahead.rho) {
            d.push(*p - *rho);
            (*p - *rho).encode(&mut msg);
        }
        let chi_bytes = bits_to_bytes(&h.chi);
        let (chi1, chi2) = chi_bytes.split_at(16 * n);
        let mut d1 = Vec::with_capacity(16 * n);
        let mut d2 = Vec::with_capacity(16 * n);
        for (i, chunk) in ct.chunks(16).enumerate() {
            let mut c = [0u8; 16];
            c[..chunk.len()].copy_from_slice(chunk);
            for (k, &ck) in c.iter().enumerate() {
                d1.push(ck ^ chi1[16 * i + k]);
                d2.push(ck ^ chi2[16 * i + k]);
            }
        }
        let mut acc = poly_share(&poly1305_blocks(aad, ct), &self.ahead.v).expect("q blocks");
        let first = self.aad_len.div_ceil(16);
        let pw = pow2(128);
        let (va, vb) = h.v.split_at(128 * n);
        for i in 0..n {
            let e = q - 1 - (first + i);
            let r = 128 * i..128 * (i + 1);
            let ca = masked_product_share(&d1[16 * i..16 * i + 16], &va[r.clone()], None, &pw);
            let cb = masked_product_share(&d2[16 * i..16 * i + 16], &vb[r], None, &pw);
            acc = acc + ca + d[e] * cb;
        }
        msg.extend_from_slice(&d1);
        msg.extend_from_slice(&d2);
        let bits = bytes_to_bits(&[&acc.to_le17()[..], &s].concat());
        msg.extend(self.tag.flips(macs, &bits)?);
        self.requested = true;
        Ok(msg)
    }

    /// The tag, from the verifier's answer ([`ChachaVerifier::tag_inputs`]):
    /// the tag circuit evaluated and decoded.
    pub fn tag(&mut self, answer: &[u8]) -> Result<[u8; 16]> {
        if !self.requested || self.tagged {
            return Err(Error::Malformed("a tag before its request, or twice"));
        }
        self.tag.receive_inputs(answer)?;
        self.tag.feed_received(&self.tag_tables.0)?;
        self.tag.finish()?;
        let out = self.tag.decode(&self.tag_tables.1)?;
        self.tagged = true;
        Ok(bits_to_bytes(&out[0]).try_into().expect("16 bytes"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn le17(x: &F) -> Vec<u8> {
        x.to_le17().to_vec()
    }

    /// The modular gadgets against the field on random and edge values.
    #[test]
    fn modular_gadgets() {
        let mul = {
            let mut b = Builder::new();
            let r = b.input_bytes(16);
            let t = b.input_bytes(17);
            let h = mul_mod_p(&mut b, &r, &t[..130]);
            b.output(&h);
            b.finish()
        };
        let add = {
            let mut b = Builder::new();
            let x = b.input_bytes(17);
            let y = b.input_bytes(17);
            let z = add_mod_p(&mut b, &x[..130], &y[..130]);
            b.output(&z);
            b.finish()
        };
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(3);
        let pm1 = F::ZERO - F::ONE;
        let mut cases: Vec<(F, F)> = vec![(pm1, pm1), (pm1, F::ONE), (F::ZERO, pm1)];
        for _ in 0..20 {
            cases.push((F::random(&mut rng), F::random(&mut rng)));
        }
        let bits = |x: &[u8]| bytes_to_bits(x);
        for (x, y) in cases {
            let z = add.eval(&[bits(&le17(&x)), bits(&le17(&y))]);
            assert_eq!(elem_from_bits(&z[0]), x + y);
            assert_eq!(z[0].len(), 130);
            // r: any 128-bit value (the gadget is used on clamped ones).
            let r: [u8; 16] = if rng.gen() { [0xff; 16] } else { rng.gen() };
            let h = mul.eval(&[bits(&r), bits(&le17(&y))]);
            let want = F::from_le_slice_reduced(&r) * y;
            assert_eq!(elem_from_bits(&h[0]), want, "{r:?}");
            // Canonical: the circuit's bits are the value's own.
            assert_eq!(h[0], bits(&le17(&want))[..130]);
        }
    }

    /// Poly1305 of RFC 8439 §2.5.2 through the share arithmetic: the
    /// polynomial from any additive split of the powers, plus `s`.
    #[test]
    fn poly1305_vector_from_shares() {
        let key = hex("85d6be7857556d337f4452fe42d506a80103808afb0db2fd4abff6af4149f51b");
        let msg = b"Cryptographic Forum Research Group";
        let mut r = [0u8; 16];
        r.copy_from_slice(&key[..16]);
        for i in [3, 7, 11, 15] {
            r[i] &= 0x0f;
        }
        for i in [4, 8, 12] {
            r[i] &= 0xfc;
        }
        let r = F::from_le_slice_reduced(&r);
        let c: Vec<F> = msg
            .chunks(16)
            .map(|ch| {
                let mut b = ch.to_vec();
                b.push(1);
                F::from_le_slice_reduced(&b)
            })
            .collect();
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(4);
        let pw = powers(r, c.len());
        let a: Vec<F> = pw.iter().map(|_| F::random(&mut rng)).collect();
        let b: Vec<F> = pw.iter().zip(&a).map(|(p, a)| *p - *a).collect();
        let acc = poly_share(&c, &a).unwrap() + poly_share(&c, &b).unwrap();
        let mut s = [0u8; 17];
        s[..16].copy_from_slice(&key[16..]);
        let t = (u128::from_le_bytes(acc.to_le17()[..16].try_into().unwrap()))
            .wrapping_add(u128::from_le_bytes(s[..16].try_into().unwrap()));
        assert_eq!(
            t.to_le_bytes().to_vec(),
            hex("a8061dc1305136c6c22b8baf0c0127a9")
        );
    }

    /// The circuits' AND counts, as the cost doc quotes them.
    #[test]
    fn and_counts() {
        let block = chacha_circuit(64).and_count() - chacha_circuit(0).and_count();
        assert!((10_000..=10_400).contains(&block), "{block}");
        let tag = tag_circuit().and_count();
        let fixed = chacha_circuit(0).and_count();
        let mul = {
            let mut b = Builder::new();
            let r = b.input_bytes(16);
            let t = b.input_bytes(17);
            let h = mul_mod_p(&mut b, &clamp(&r), &t[..130]);
            b.output(&h);
            b.finish().and_count()
        };
        eprintln!(
            "record circuit per 64 B: {block}, block 0 and r·t: {fixed}, r·t: {mul}, tag: {tag}"
        );
        assert!(mul < 30_000, "{mul}");
        assert!(tag < 600, "{tag}");
    }

    /// The circuit the prover garbles for the dual execution outputs the
    /// record circuit's keystream on the same inputs, and
    /// [`crate::rec::dual::DualProver::record`] takes its shape.
    #[test]
    fn keystream_circuit_is_the_record_keystream() {
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(5);
        for len in [1, 64, 100] {
            let mut g = |n: usize| -> Vec<bool> { (0..8 * n).map(|_| rng.gen()).collect() };
            let (sp, sv, seq, masks) = (g(KEY_IV_LEN), g(KEY_IV_LEN), g(8), g(MASKS_LEN));
            let full = chacha_circuit(len).eval(&[sp.clone(), sv.clone(), seq.clone(), masks]);
            let ks = keystream_circuit(len).eval(&[sp, sv, seq]);
            assert_eq!(full[0], ks[0], "{len}");
        }
        let (dp, _) = crate::rec::dual::DualProver::new(KEY_IV_LEN, &mut rng);
        let plan = Arc::new(Plan::new(&keystream_circuit(64)).unwrap());
        assert!(dp.record(plan, 1, 7u64.to_be_bytes(), &mut rng).is_ok());
    }

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }
}
