//! Dual execution of the request's keystream: the prover garbles each
//! request record's keystream itself (AES-CTR, or ChaCha20), the verifier
//! evaluates that garbling, and a check on both executions' output labels
//! makes the keystream the prover decoded from the *verifier's* garbling
//! ([`crate::rec::gcm`], [`crate::rec::chacha`]) authentic before any byte it
//! encrypts leaves.
//!
//! Owns the AES keystream circuit the prover garbles, the record ciphers
//! ([`RecordCipher`]: which circuit, and the bound on its tables the
//! verifier holds the prover to), both parties' state for it (the
//! prover's `Δ_P` and 0-labels, the verifier's input labels by base OT
//! and its evaluation) and the equality check. The session
//! (`webproof-mpc-tls`) moves the messages.
//!
//! For ChaCha20-Poly1305 everything below holds with `G_V` the record
//! circuit [`crate::rec::chacha::chacha_circuit`], `G_P`
//! [`crate::rec::chacha::keystream_circuit`] and the record's sequence number
//! (8 bytes, big-endian, public) in place of the explicit nonce.
//!
//! # Why
//! The verifier garbles every circuit of the session; the prover decodes
//! outputs with the verifier's decoding bits. A verifier that flips the
//! decoding bits of the request's keystream (or garbles `KS ⊕ M`) makes the
//! server decrypt `request ⊕ M`: a request of its choice under the prover's
//! cookie, and, by the server's reaction, an oracle on hidden request bytes
//! across sessions. The audit after the session would catch it, but only if
//! the verifier lets the session get there.
//!
//! # Protocol (per request record of `len` bytes, `n = 8·len` bits)
//! `G_V` is the verifier's record circuit ([`crate::rec::gcm::gcm_circuit`]),
//! `A⁰_i` its keystream output 0-labels under `Δ_V`, `A_i` the active ones
//! the prover evaluated, `KS_i` the bits it decoded. `G_P` is
//! [`keystream_circuit`] garbled by the prover under its own `Δ_P`, `B⁰_i`
//! its output 0-labels.
//! 1. **Preprocessing.** The prover sends its base-OT message with its
//!    hello ([`DualProver::new`]); the verifier answers with its choice
//!    bits = its key ‖ IV share, the mask of the key block it fixed before
//!    the session ([`DualVerifier::new`]); the prover sends, per bit, both
//!    labels of that wire one-time padded by the two OT keys
//!    ([`DualProver::verifier_labels`]), and streams `G_P`'s tables with
//!    the labels of the public explicit nonce and the decoding bits
//!    `lsb(B⁰_i) ⊕ b_i` ([`RecordGarbling::finish`]). `b_i` are the choice
//!    bits of `n` fresh COTs of the session (`M_i = K_i ⊕ b_i·Δ_V`): a pad
//!    the verifier does not know.
//! 2. **Online**, once the key derivation gave the prover its key ‖ IV
//!    share: it sends that share's labels in `G_P`
//!    ([`DualProver::prover_labels`], with the masked ciphertext it sends
//!    anyway). The verifier evaluates `G_P`, decodes `v_i = KS'_i ⊕ b_i`
//!    (uniform to it) and answers, with its tag share,
//!    `Y = H(A⁰_i ⊕ K_i ⊕ v_i·Δ_V ⊕ B'_i)_i` ([`RecordEvaluation::check_value`],
//!    `B'_i` the labels it evaluated).
//! 3. The prover computes `X = H(A_i ⊕ M_i ⊕ B⁰_i ⊕ KS_i·Δ_P)_i` and sends
//!    the record to the server only if `X = Y` ([`KeystreamCheck::check`]).
//!
//! Honest parties agree: `A_i ⊕ M_i = A⁰_i ⊕ K_i ⊕ (KS_i ⊕ b_i)·Δ_V` and
//! `B'_i = B⁰_i ⊕ KS_i·Δ_P`. The pad costs no message and no circuit
//! gate: free-XOR of an output label with a COT MAC under the same `Δ_V`.
//!
//! # Where each value comes from
//! The prover takes from the verifier only `Y` and the OT answer, and
//! uses the keystream only after `Y` matched its own `X`. The verifier
//! takes from the prover the tables, the decoding bits and the labels of
//! the prover's share and of the explicit nonce (which the prover encodes:
//! the record's sequence number, public to both), none of them checked:
//! they feed nothing but `Y`, and a `Y` over wrong values only makes the
//! prover stop, which it may do anyway. Its own labels it computes from
//! the OT keys it holds.
//!
//! # What each party can still do
//! *A cheating verifier* knows every label of `G_V` but only the active
//! ones of `G_P`; for `Y = X` it needs `B⁰_i ⊕ KS_i·Δ_P` at every bit, so the
//! check passes only if the keystream it made the prover decode equals
//! `G_P`'s honest output on the key ‖ IV share it chose in the OT. Its
//! only freedom is that share: a keystream under a key it does not know
//! either (the prover's share is in it), so the server gets the request
//! or bytes one-time padded by a stream the verifier cannot compute,
//! never a request it chose or a function of the hidden bytes it can read.
//! Whether the check passes is one bit of the prover's ephemeral inputs
//! (its key ‖ IV share, the pads), per session; the request's bytes enter
//! neither circuit. The audit after the session still catches a wrong
//! garbling or share.
//!
//! *A cheating prover* garbles what it likes and may corrupt one of the two
//! labels of a verifier input wire: it learns whether `Y = X`, one bit about
//! the verifier's key ‖ IV mask (ephemeral, revealed after the session in
//! any case), and nothing else (`Y` is a hash under `Δ_V`, which it does not
//! know). The prover's soundness duties do not rest on `G_P`: the proof
//! after the session computes the request from the key derivation's
//! authenticated labels, not from this keystream.
use crate::rec::gcm::NonceForm;
use rand_core::{CryptoRng, RngCore};
use sha2::{Digest, Sha256};
use std::sync::Arc;
use webproof_circuits::aes::{
    aes128_key_schedule, aes256_key_schedule, encrypt_blocks_with, SboxKind,
};
use webproof_circuits::builder::const_bytes;
use webproof_circuits::{bytes_to_bits, Builder, Circuit};
use webproof_core::Block;
use webproof_mpc::error::{Error, Result};
use webproof_mpc::evaluate::{Evaluator, ReceivedTables};
use webproof_mpc::garble::Garbler;
use webproof_mpc::plan::Plan;
use webproof_mpc::{labels_from_bytes, labels_to_bytes};
use webproof_ot::base;

/// Input group of the prover's key ‖ IV share in [`keystream_circuit`].
pub const PROVER_GROUP: usize = 0;
/// Input group of the verifier's key ‖ IV share.
pub const VERIFIER_GROUP: usize = 1;
/// Input group of the record's explicit nonce (ChaCha20: its sequence
/// number; public, encoded by the prover).
pub const NONCE_GROUP: usize = 2;

/// Bytes of the prover's base-OT message ([`DualProver::new`]).
pub const OT_MESSAGE_LEN: usize = base::SENDER_MESSAGE_LEN;

/// Bytes of the check value `Y`.
pub const CHECK_LEN: usize = 32;

/// The keystream of a `len`-byte TLS 1.2 AES-GCM record: inputs
/// `[prover key ‖ IV share, verifier key ‖ IV share, explicit nonce]`
/// (`key_len + 4`, `key_len + 4` and 8 bytes), output the keystream
/// `E_K(salt ‖ explicit ‖ 2), …` (`8·len` bits), exactly the first output
/// of [`crate::rec::gcm::gcm_circuit`] without `E_K(J0)` and the GHASH key.
pub fn keystream_circuit(key_len: usize, len: usize) -> Circuit {
    keystream_circuit_with(NonceForm::Tls12, key_len, len)
}

/// [`keystream_circuit`] with the nonce formed as `form` says (TLS 1.3:
/// 12-byte IVs, the public input the sequence number): the first output
/// of [`crate::rec::gcm::gcm_circuit_with`] for the same form.
pub fn keystream_circuit_with(form: NonceForm, key_len: usize, len: usize) -> Circuit {
    assert!(key_len == 16 || key_len == 32, "AES-128 or AES-256");
    assert!(len > 0, "an empty record has no keystream");
    let mut b = Builder::new();
    let sp = b.input_bytes(key_len + form.iv_len());
    let sv = b.input_bytes(key_len + form.iv_len());
    let explicit = b.input_bytes(8);
    let s = b.xor_words(&sp, &sv);
    let (key, iv) = s.split_at(8 * key_len);
    let rk = if key_len == 16 {
        aes128_key_schedule(&mut b, key)
    } else {
        aes256_key_schedule(&mut b, key)
    };
    let nonce = form.nonce(&mut b, iv, &explicit);
    let blocks: Vec<Vec<_>> = (2..2 + len.div_ceil(16) as u32)
        .map(|ctr| [&nonce[..], &const_bytes(&ctr.to_be_bytes())].concat())
        .collect();
    let mut ks: Vec<_> = encrypt_blocks_with(&mut b, &rk, &blocks, SboxKind::Boolean)
        .into_iter()
        .flatten()
        .collect();
    ks.truncate(8 * len);
    b.output(&ks);
    b.finish()
}

fn random_block(rng: &mut (impl RngCore + CryptoRng)) -> Block {
    Block(((rng.next_u64() as u128) << 64) | rng.next_u64() as u128)
}

/// The check value over the per-bit combined labels `z` of record
/// circuit `instance`: SHA-256, so that a party missing one label of one
/// bit learns nothing of the others (an XOR of the labels would hand a
/// cheating prover `Δ_V` whenever an odd number of bits differ).
fn check_hash(instance: u64, z: impl Iterator<Item = Block>) -> [u8; CHECK_LEN] {
    let mut h = Sha256::new();
    h.update(b"webproof/mpc/dual-keystream/v1");
    h.update(instance.to_le_bytes());
    let mut n = 0u64;
    for l in z {
        h.update(l.to_bytes());
        n += 1;
    }
    h.update(n.to_le_bytes());
    h.finalize().into()
}

/// The prover's side for the whole session: its `Δ_P`, the base-OT
/// sender for the verifier's input wires, and the 0-labels of both key ‖
/// IV groups (the same in every record's circuit: one input transfer and
/// one online label message serve them all; distinct instance numbers
/// keep the hash tweaks distinct).
pub struct DualProver {
    delta: Block,
    ot: base::Sender,
    prover_zero: Vec<Block>,
    verifier_zero: Vec<Block>,
}

impl DualProver {
    /// The prover's state for records with a `key_iv_len`-byte key ‖ IV
    /// share, and its base-OT message (with the hello: it depends on
    /// nothing the verifier says).
    pub fn new(
        key_iv_len: usize,
        rng: &mut (impl RngCore + CryptoRng),
    ) -> (Self, [u8; OT_MESSAGE_LEN]) {
        let delta = Block(random_block(rng).0 | 1);
        let ot = base::Sender::new(rng);
        let msg = ot.message();
        let prover_zero = (0..8 * key_iv_len).map(|_| random_block(rng)).collect();
        let verifier_zero = (0..8 * key_iv_len).map(|_| random_block(rng)).collect();
        (
            DualProver {
                delta,
                ot,
                prover_zero,
                verifier_zero,
            },
            msg,
        )
    }

    /// The labels of the verifier's key ‖ IV wires for its OT answer
    /// `answer` ([`DualVerifier::new`]): per wire `L⁰ ⊕ k_0 ‖ L⁰ ⊕ Δ_P ⊕ k_1`
    /// (32 bytes), so the verifier opens the label of its choice bit only.
    pub fn verifier_labels(&self, answer: &[u8]) -> Result<Vec<u8>> {
        let keys = self
            .ot
            .keys(answer, self.verifier_zero.len())
            .map_err(|_| Error::Malformed("the verifier's base-OT answer"))?;
        let mut msg = Vec::with_capacity(32 * keys.len());
        for (z, [k0, k1]) in self.verifier_zero.iter().zip(keys) {
            msg.extend((*z ^ k0).to_bytes());
            msg.extend((*z ^ self.delta ^ k1).to_bytes());
        }
        Ok(msg)
    }

    /// The garbling of one record's keystream circuit (`plan`:
    /// [`keystream_circuit`] of the record's length) as instance
    /// `instance`, for explicit nonce `explicit` (ChaCha20: the record's
    /// sequence number, big-endian).
    pub fn record(
        &self,
        plan: Arc<Plan>,
        instance: u64,
        explicit: [u8; 8],
        rng: &mut (impl RngCore + CryptoRng),
    ) -> Result<RecordGarbling> {
        if plan.inputs().len() != 3 || plan.outputs().len() != 1 {
            return Err(Error::Malformed("a keystream circuit of another shape"));
        }
        let mut garbler = Garbler::from_plan(plan, self.delta, instance, rng)?;
        garbler.set_input_zero_labels(PROVER_GROUP, &self.prover_zero)?;
        garbler.set_input_zero_labels(VERIFIER_GROUP, &self.verifier_zero)?;
        Ok(RecordGarbling { garbler, explicit })
    }

    /// Online: the labels of the prover's key ‖ IV share `key_iv_share`
    /// in every record's circuit (16 bytes per bit).
    pub fn prover_labels(&self, key_iv_share: &[u8]) -> Result<Vec<u8>> {
        let bits = bytes_to_bits(key_iv_share);
        if bits.len() != self.prover_zero.len() {
            return Err(Error::Malformed("a key ‖ IV share of another length"));
        }
        Ok(labels_to_bytes(
            &self
                .prover_zero
                .iter()
                .zip(bits)
                .map(|(&z, b)| if b { z ^ self.delta } else { z })
                .collect::<Vec<_>>(),
        ))
    }
}

/// One record's keystream circuit as the prover garbles it.
pub struct RecordGarbling {
    garbler: Garbler,
    explicit: [u8; 8],
}

impl RecordGarbling {
    /// The next chunk of tables; `false` when none remain.
    pub fn next_chunk(&mut self, out: &mut Vec<u8>) -> bool {
        self.garbler.next_chunk(out)
    }

    /// Once every chunk is out: the message that ends the record's tables
    /// (the decoding bits `lsb(B⁰_i) ⊕ b_i`, packed, then the explicit
    /// nonce's labels) for the pads `b_i = lsb(M_i)` of the COT MACs
    /// `pad_macs` (one per keystream bit), and what the check needs.
    pub fn finish(self, pad_macs: &[Block]) -> Result<(Vec<u8>, KeystreamCheck)> {
        let out = self.garbler.output_zero_labels(0)?.to_vec();
        if pad_macs.len() != out.len() {
            return Err(Error::Malformed("pads for another record's keystream"));
        }
        let mut msg = vec![0u8; out.len().div_ceil(8)];
        for (i, (z, m)) in out.iter().zip(pad_macs).enumerate() {
            msg[i / 8] |= ((z.lsb() ^ m.lsb()) as u8) << (i % 8);
        }
        msg.extend(labels_to_bytes(
            &self
                .garbler
                .encode(NONCE_GROUP, &bytes_to_bits(&self.explicit))?,
        ));
        Ok((
            msg,
            KeystreamCheck {
                instance: self.garbler.instance(),
                delta: self.garbler.delta(),
                out_zero: out,
            },
        ))
    }
}

/// What the prover keeps of a record's garbling for the check.
#[derive(Clone, Debug)]
pub struct KeystreamCheck {
    instance: u64,
    delta: Block,
    out_zero: Vec<Block>,
}

impl KeystreamCheck {
    /// Whether the keystream `ks` (bits, as decoded from the verifier's
    /// garbling) with its active labels there `labels` and the pads' COT
    /// MACs `pad_macs` is the one the verifier's evaluation of the
    /// prover's garbling vouches for with `y`. An error means the
    /// verifier cheated (or the link corrupted its message): the keystream
    /// must not be used.
    pub fn check(&self, ks: &[bool], labels: &[Block], pad_macs: &[Block], y: &[u8]) -> Result<()> {
        let n = self.out_zero.len();
        if ks.len() != n || labels.len() != n || pad_macs.len() != n {
            return Err(Error::Malformed("a keystream check of another length"));
        }
        let x = check_hash(
            self.instance,
            (0..n).map(|i| {
                let b = if ks[i] {
                    self.out_zero[i] ^ self.delta
                } else {
                    self.out_zero[i]
                };
                labels[i] ^ pad_macs[i] ^ b
            }),
        );
        // A public value, but no reason to tell how much of it matched.
        let differs =
            y.len() != CHECK_LEN || x.iter().zip(y).fold(0, |acc, (a, b)| acc | (a ^ b)) != 0;
        if differs {
            return Err(Error::VerifierCheated(
                "the request's keystream differs between the two garblings (dual execution)",
            ));
        }
        Ok(())
    }
}

/// The verifier's side for the whole session: its labels of its key ‖ IV
/// share in the prover's circuits.
pub struct DualVerifier {
    bits: Vec<bool>,
    keys: Vec<Block>,
    labels: Option<Vec<Block>>,
}

impl DualVerifier {
    /// Answer the prover's base-OT message `ot` with the bits of its key ‖
    /// IV share `key_iv_share` as the choices; the answer goes with the
    /// verifier's next message.
    pub fn new(
        ot: &[u8],
        key_iv_share: &[u8],
        rng: &mut (impl RngCore + CryptoRng),
    ) -> Result<(Self, Vec<u8>)> {
        let ot: &[u8; OT_MESSAGE_LEN] = ot
            .try_into()
            .map_err(|_| Error::Malformed("a base-OT message of the wrong length"))?;
        let bits = bytes_to_bits(key_iv_share);
        let (answer, keys) = base::receiver_message(ot, &bits, rng)
            .map_err(|_| Error::Malformed("the prover's base-OT message"))?;
        Ok((
            DualVerifier {
                bits,
                keys,
                labels: None,
            },
            answer,
        ))
    }

    /// Open the labels of its bits from the prover's message
    /// ([`DualProver::verifier_labels`]).
    pub fn take_labels(&mut self, msg: &[u8]) -> Result<()> {
        if self.labels.is_some() {
            return Err(Error::Malformed("the verifier's input labels twice"));
        }
        let pairs = labels_from_bytes(msg, 2 * self.keys.len())?;
        self.labels = Some(
            pairs
                .chunks_exact(2)
                .zip(&self.keys)
                .zip(&self.bits)
                .map(|((p, &k), &b)| p[b as usize] ^ k)
                .collect(),
        );
        Ok(())
    }

    /// Whether its input labels are in.
    pub fn has_labels(&self) -> bool {
        self.labels.is_some()
    }
}

/// An upper bound on the AND gates of [`keystream_circuit`]`(key_len,
/// len)`, without building it: every S-box of every block and of the key
/// schedule at the most a Boolean S-box costs. The tables the verifier
/// buffers before it holds the schedule (built off its event loop) are
/// bounded by it.
pub fn keystream_max_ands(key_len: usize, len: usize) -> usize {
    // Rounds × 16 S-boxes per block; the key schedule's S-boxes.
    let (rounds, schedule) = if key_len == 16 { (10, 40) } else { (14, 52) };
    let sboxes = len.div_ceil(16) * rounds * 16 + schedule;
    sboxes * MAX_SBOX_ANDS
}

/// AND gates of one S-box of `webproof_circuits::aes` at most (checked
/// by a test against the circuits it bounds).
const MAX_SBOX_ANDS: usize = 36;

/// The AEAD of a record whose keystream the dual execution checks: it
/// fixes the key ‖ IV share's length, the keystream circuit the prover
/// garbles and the bound on that circuit's AND gates, the one thing the
/// verifier must know before it holds the schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordCipher {
    /// AES-128-GCM ([`keystream_circuit`]`(16, len)`).
    Aes128Gcm,
    /// AES-256-GCM ([`keystream_circuit`]`(32, len)`).
    Aes256Gcm,
    /// ChaCha20-Poly1305 ([`crate::rec::chacha::keystream_circuit`]`(len)`).
    Chacha20Poly1305,
    /// TLS 1.3's AES-128-GCM: 12-byte IVs, the nonce the IV XOR the
    /// sequence number ([`keystream_circuit_with`]`(NonceForm::Tls13, 16,
    /// len)`).
    Aes128GcmTls13,
    /// TLS 1.3's AES-256-GCM, likewise.
    Aes256GcmTls13,
}

impl RecordCipher {
    /// The AES-GCM suite of a `key_len`-byte key (16 or 32).
    pub fn aes(key_len: usize) -> Option<Self> {
        match key_len {
            16 => Some(RecordCipher::Aes128Gcm),
            32 => Some(RecordCipher::Aes256Gcm),
            _ => None,
        }
    }

    /// TLS 1.3's AES-GCM suite of a `key_len`-byte key (16 or 32).
    pub fn aes13(key_len: usize) -> Option<Self> {
        match key_len {
            16 => Some(RecordCipher::Aes128GcmTls13),
            32 => Some(RecordCipher::Aes256GcmTls13),
            _ => None,
        }
    }

    /// Bytes of a key ‖ IV share (AES: key and 4-byte salt; ChaCha20 and
    /// TLS 1.3's AES: key and 12-byte IV).
    pub fn key_iv_len(self) -> usize {
        match self {
            RecordCipher::Aes128Gcm => 16 + 4,
            RecordCipher::Aes256Gcm => 32 + 4,
            RecordCipher::Chacha20Poly1305 => crate::rec::chacha::KEY_IV_LEN,
            RecordCipher::Aes128GcmTls13 => 16 + 12,
            RecordCipher::Aes256GcmTls13 => 32 + 12,
        }
    }

    /// The keystream circuit of a `len`-byte record, the one
    /// [`DualProver::record`] garbles.
    pub fn keystream_circuit(self, len: usize) -> Circuit {
        match self {
            RecordCipher::Aes128Gcm => keystream_circuit(16, len),
            RecordCipher::Aes256Gcm => keystream_circuit(32, len),
            RecordCipher::Chacha20Poly1305 => crate::rec::chacha::keystream_circuit(len),
            RecordCipher::Aes128GcmTls13 => keystream_circuit_with(NonceForm::Tls13, 16, len),
            RecordCipher::Aes256GcmTls13 => keystream_circuit_with(NonceForm::Tls13, 32, len),
        }
    }

    /// An upper bound on the AND gates of [`Self::keystream_circuit`]
    /// without building it.
    pub fn max_ands(self, len: usize) -> usize {
        match self {
            // TLS 1.3's nonce is a free XOR: the same AND gates.
            RecordCipher::Aes128Gcm | RecordCipher::Aes128GcmTls13 => keystream_max_ands(16, len),
            RecordCipher::Aes256Gcm | RecordCipher::Aes256GcmTls13 => keystream_max_ands(32, len),
            // Only blocks 1, 2, … reach the output: block 0 (the Poly1305
            // key) is built and dropped as dead gates with the plan, so it
            // is not counted; a test holds the bound to the circuit.
            RecordCipher::Chacha20Poly1305 => len.div_ceil(64) * CHACHA_BLOCK_MAX_ANDS,
        }
    }
}

/// AND gates of one ChaCha20 block of `webproof_circuits::chacha` at
/// most: 20 rounds of 4 quarter rounds of 4 additions, and the 16 words
/// of the input added at the end, each a 32-bit ripple-carry adder of one
/// AND per carry (31: the top bit's carry is dropped). Additions of a
/// constant word cost less, hence "at most".
const CHACHA_BLOCK_MAX_ANDS: usize = (20 * 4 * 4 + 16) * 31;

/// One record's keystream circuit as the verifier receives and evaluates
/// it.
pub struct RecordEvaluation {
    /// Its schedule, once given ([`Self::set_plan`]).
    plan: Option<Arc<Plan>>,
    /// Bits of each key ‖ IV share, keystream bits, and the bound on its
    /// AND gates: all fixed by the record's cipher and length.
    key_iv_bits: usize,
    outputs: usize,
    max_ands: usize,
    instance: u64,
    chunks: ReceivedTables,
    bytes: usize,
    /// The decoding bits and the explicit nonce's labels, once the tables
    /// ended.
    end: Option<(Vec<bool>, Vec<Block>)>,
    checked: bool,
}

impl RecordEvaluation {
    /// The evaluation of [`keystream_circuit`]`(key_len, len)` as
    /// instance `instance`: it takes tables at once, its schedule may come
    /// later ([`Self::set_plan`], before [`Self::check_value`]).
    pub fn new(key_len: usize, len: usize, instance: u64) -> Result<Self> {
        let cipher = RecordCipher::aes(key_len)
            .ok_or(Error::Malformed("a keystream circuit of another shape"))?;
        Self::for_cipher(cipher, len, instance)
    }

    /// The evaluation of `cipher`'s keystream circuit
    /// ([`RecordCipher::keystream_circuit`]) of a `len`-byte record as
    /// instance `instance`; otherwise as [`Self::new`].
    pub fn for_cipher(cipher: RecordCipher, len: usize, instance: u64) -> Result<Self> {
        if len == 0 {
            return Err(Error::Malformed("a keystream circuit of another shape"));
        }
        Ok(RecordEvaluation {
            plan: None,
            key_iv_bits: 8 * cipher.key_iv_len(),
            outputs: 8 * len,
            max_ands: cipher.max_ands(len),
            instance,
            chunks: ReceivedTables::default(),
            bytes: 0,
            end: None,
            checked: false,
        })
    }

    /// The schedule ([`RecordCipher::keystream_circuit`] of the cipher and
    /// length given to [`Self::new`] or [`Self::for_cipher`], built off the
    /// caller's event loop).
    pub fn set_plan(&mut self, plan: Arc<Plan>) -> Result<()> {
        // The key ‖ IV groups' widths tell the ciphers apart where the
        // keystream's length and the bound might not (a ChaCha schedule in
        // an AES-256 evaluation).
        let fits = plan.inputs().len() == 3
            && plan.inputs()[PROVER_GROUP].len() == self.key_iv_bits
            && plan.inputs()[VERIFIER_GROUP].len() == self.key_iv_bits
            && plan.outputs().len() == 1
            && plan.outputs()[0].len() == self.outputs
            && plan.inputs()[NONCE_GROUP].len() == 64
            && plan.and_count() <= self.max_ands as u64;
        if !fits || self.plan.is_some() {
            return Err(Error::Malformed(
                "a keystream schedule of another shape, or twice",
            ));
        }
        self.plan = Some(plan);
        Ok(())
    }

    /// Whether its schedule is in.
    pub fn has_plan(&self) -> bool {
        self.plan.is_some()
    }

    /// Take a chunk of tables; more than the circuit can have is refused
    /// before it is stored.
    pub fn push_chunk(&mut self, chunk: Vec<u8>) -> Result<()> {
        let ands = match &self.plan {
            Some(plan) => usize::try_from(plan.and_count())
                .map_err(|_| Error::Malformed("circuit too large"))?,
            None => self.max_ands,
        };
        let bytes = self.bytes + chunk.len().max(webproof_mpc::CHUNK_HEADER);
        if self.end.is_some() || bytes > webproof_mpc::max_stream_bytes(ands) {
            return Err(Error::Malformed(
                "more of the prover's garbled tables than its circuit has",
            ));
        }
        self.chunks.push(chunk)?;
        self.bytes = bytes;
        Ok(())
    }

    /// The end of the tables ([`RecordGarbling::finish`]'s message).
    pub fn end(&mut self, msg: &[u8]) -> Result<()> {
        let n = self.outputs;
        let nonce = 64;
        let packed = n.div_ceil(8);
        if self.end.is_some() || msg.len() != packed + 16 * nonce {
            return Err(Error::Malformed("the end of the prover's tables"));
        }
        // `n = 8·len`: whole bytes, no padding bits to check.
        let bits = (0..n).map(|i| (msg[i / 8] >> (i % 8)) & 1 == 1).collect();
        self.end = Some((bits, labels_from_bytes(&msg[packed..], nonce)?));
        Ok(())
    }

    /// Whether its tables and their end are in.
    pub fn is_complete(&self) -> bool {
        self.end.is_some()
    }

    /// Online: evaluate on the prover's key ‖ IV labels `prover_labels`
    /// ([`DualProver::prover_labels`]) and the verifier's own (`dual`),
    /// and the check value `Y` over the verifier's garbling of the same
    /// keystream: its 0-labels `gv_zero` (the record circuit's first
    /// output group), the pads' COT keys `pad_keys` and `Δ_V`.
    pub fn check_value(
        &mut self,
        dual: &DualVerifier,
        prover_labels: &[u8],
        gv_zero: &[Block],
        pad_keys: &[Block],
        delta_v: Block,
    ) -> Result<[u8; CHECK_LEN]> {
        let (decoding, nonce) = match (&self.end, self.checked) {
            (Some(end), false) => end.clone(),
            _ => {
                return Err(Error::Malformed(
                    "a keystream check before the prover's tables, or twice",
                ))
            }
        };
        let own = dual.labels.as_ref().ok_or(Error::Malformed(
            "a keystream check before the input labels",
        ))?;
        let n = decoding.len();
        if gv_zero.len() != n || pad_keys.len() != n {
            return Err(Error::Malformed("a keystream check of another length"));
        }
        let plan = self
            .plan
            .clone()
            .ok_or(Error::Malformed("a keystream check before its schedule"))?;
        let p = labels_from_bytes(prover_labels, plan.inputs()[PROVER_GROUP].len())?;
        let mut ev = Evaluator::from_plan(plan, self.instance);
        ev.set_input(PROVER_GROUP, &p)?;
        ev.set_input(VERIFIER_GROUP, own)?;
        ev.set_input(NONCE_GROUP, &nonce)?;
        ev.feed_received(&core::mem::take(&mut self.chunks))?;
        ev.finish()?;
        self.checked = true;
        let out = ev.output_labels(0)?;
        Ok(check_hash(
            self.instance,
            (0..n).map(|i| {
                let v = out[i].lsb() ^ decoding[i];
                let a = if v {
                    gv_zero[i] ^ pad_keys[i] ^ delta_v
                } else {
                    gv_zero[i] ^ pad_keys[i]
                };
                a ^ out[i]
            }),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rec::gcm::gcm_circuit;
    use aes::cipher::{BlockEncrypt, KeyInit};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha20Rng;
    use webproof_circuits::bits_to_bytes;

    /// One record's two garblings, run honestly up to the check, with hooks
    /// for the verifier's cheating.
    struct Run {
        /// The prover's decoded keystream (bits) and active labels in `G_V`.
        ks: Vec<bool>,
        labels: Vec<Block>,
        pad_macs: Vec<Block>,
        check: KeystreamCheck,
        y: [u8; 32],
        /// The keystream in the clear, from the key and nonce.
        expected: Vec<u8>,
    }

    #[derive(Clone, Copy, Default)]
    struct Cheat {
        /// Flip this keystream bit in the decoding the verifier sends.
        flip_decoding: Option<usize>,
        /// Choose this bit of its key ‖ IV share flipped in the OT.
        flip_ot_choice: Option<usize>,
    }

    fn aes_ctr(key: &[u8], salt: &[u8], explicit: &[u8; 8], len: usize) -> Vec<u8> {
        let mut out = Vec::new();
        for ctr in 2..2 + len.div_ceil(16) as u32 {
            let mut block =
                aes::Block::clone_from_slice(&[salt, explicit, &ctr.to_be_bytes()].concat());
            match key.len() {
                16 => aes::Aes128::new_from_slice(key)
                    .unwrap()
                    .encrypt_block(&mut block),
                _ => aes::Aes256::new_from_slice(key)
                    .unwrap()
                    .encrypt_block(&mut block),
            }
            out.extend_from_slice(&block);
        }
        out.truncate(len);
        out
    }

    fn run(key_len: usize, len: usize, seed: u64, cheat: Cheat) -> Run {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let kiv = key_len + 4;
        let sp: Vec<u8> = (0..kiv).map(|_| rng.gen()).collect();
        let sv: Vec<u8> = (0..kiv).map(|_| rng.gen()).collect();
        let explicit: [u8; 8] = rng.gen();
        let masks: Vec<u8> = (0..16).map(|_| rng.gen()).collect();
        let key: Vec<u8> = sp.iter().zip(&sv).map(|(a, b)| a ^ b).collect();
        let expected = aes_ctr(&key[..key_len], &key[key_len..], &explicit, len);

        // G_V: the verifier's record circuit, evaluated by the prover.
        let delta_v = Block(rng.gen::<u128>() | 1);
        let gv = gcm_circuit(key_len, len, false);
        let mut g = Garbler::new(&gv, delta_v, &mut rng).unwrap();
        let inputs = [&sp[..], &sv, &explicit, &masks].map(bytes_to_bits);
        let mut e = Evaluator::new(&gv).unwrap();
        for (i, bits) in inputs.iter().enumerate() {
            e.set_input(i, &g.encode(i, bits).unwrap()).unwrap();
        }
        for c in g.garble_all() {
            e.feed(&c).unwrap();
        }
        e.finish().unwrap();
        let mut decoding = g.decoding().unwrap().to_bytes();
        if let Some(j) = cheat.flip_decoding {
            // u32 group count, u32 bit length, then the keystream's bits.
            decoding[8 + j / 8] ^= 1 << (j % 8);
        }
        let ks = e
            .decode(&webproof_mpc::Decoding::from_bytes(&decoding).unwrap())
            .unwrap()
            .remove(0);
        let labels = e.output_labels(0).unwrap().to_vec();
        let gv_zero = g.output_zero_labels(0).unwrap().to_vec();

        // The pads: fresh COTs under Δ_V.
        let n = 8 * len;
        let pad_keys: Vec<Block> = (0..n).map(|_| Block(rng.gen::<u128>() & !1)).collect();
        let pad_macs: Vec<Block> = pad_keys
            .iter()
            .map(|&k| if rng.gen() { k ^ delta_v } else { k })
            .collect();

        // G_P: the prover's garbling, evaluated by the verifier.
        let (dp, ot) = DualProver::new(kiv, &mut rng);
        let mut choice = sv.clone();
        if let Some(j) = cheat.flip_ot_choice {
            choice[j / 8] ^= 1 << (j % 8);
        }
        let (mut dv, answer) = DualVerifier::new(&ot, &choice, &mut rng).unwrap();
        dv.take_labels(&dp.verifier_labels(&answer).unwrap())
            .unwrap();
        let plan = Arc::new(Plan::new(&keystream_circuit(key_len, len)).unwrap());
        let mut rg = dp.record(plan.clone(), 7, explicit, &mut rng).unwrap();
        let mut ev = RecordEvaluation::new(key_len, len, 7).unwrap();
        let mut chunk = Vec::new();
        while rg.next_chunk(&mut chunk) {
            ev.push_chunk(core::mem::take(&mut chunk)).unwrap();
        }
        // The schedule may come after the tables.
        ev.set_plan(plan).unwrap();
        let (end, check) = rg.finish(&pad_macs).unwrap();
        ev.end(&end).unwrap();
        let y = ev
            .check_value(
                &dv,
                &dp.prover_labels(&sp).unwrap(),
                &gv_zero,
                &pad_keys,
                delta_v,
            )
            .unwrap();
        Run {
            ks,
            labels,
            pad_macs,
            check,
            y,
            expected,
        }
    }

    #[test]
    fn honest_runs_agree_on_the_true_keystream() {
        for (key_len, len, seed) in [(16, 1, 1), (16, 37, 2), (32, 100, 3)] {
            let r = run(key_len, len, seed, Cheat::default());
            assert_eq!(bits_to_bytes(&r.ks), r.expected);
            r.check.check(&r.ks, &r.labels, &r.pad_macs, &r.y).unwrap();
        }
    }

    /// The attack of the review: flipped decoding bits make the prover
    /// decode `KS ⊕ M`; the check refuses whichever bit is flipped.
    #[test]
    fn flipped_decoding_is_refused() {
        for j in [0, 5, 8 * 37 - 1] {
            let cheat = Cheat {
                flip_decoding: Some(j),
                ..Cheat::default()
            };
            let r = run(16, 37, 10 + j as u64, cheat);
            assert_ne!(bits_to_bytes(&r.ks), r.expected);
            let e = r
                .check
                .check(&r.ks, &r.labels, &r.pad_macs, &r.y)
                .unwrap_err();
            assert!(matches!(e, Error::VerifierCheated(_)), "{e:?}");
        }
    }

    /// A verifier that enters another key ‖ IV share in the prover's
    /// circuit than in its own is refused too (the two keystreams differ).
    #[test]
    fn another_share_in_the_prover_circuit_is_refused() {
        for j in [0, 130, 159] {
            let cheat = Cheat {
                flip_ot_choice: Some(j),
                ..Cheat::default()
            };
            let r = run(16, 20, 20 + j as u64, cheat);
            assert_eq!(bits_to_bytes(&r.ks), r.expected);
            assert!(r.check.check(&r.ks, &r.labels, &r.pad_macs, &r.y).is_err());
        }
    }

    /// The verifier cannot answer for a keystream the prover did not
    /// decode: the check binds every bit and the labels, and a forged or
    /// truncated `Y` is refused.
    #[test]
    fn check_binds_every_input() {
        let r = run(16, 16, 30, Cheat::default());
        let ok = |ks: &[bool], labels: &[Block], macs: &[Block], y: &[u8]| {
            r.check.check(ks, labels, macs, y).is_ok()
        };
        assert!(ok(&r.ks, &r.labels, &r.pad_macs, &r.y));
        let mut ks = r.ks.clone();
        ks[3] ^= true;
        assert!(!ok(&ks, &r.labels, &r.pad_macs, &r.y));
        let mut labels = r.labels.clone();
        labels[100] ^= Block(1 << 70);
        assert!(!ok(&r.ks, &labels, &r.pad_macs, &r.y));
        let mut y = r.y;
        y[31] ^= 1;
        assert!(!ok(&r.ks, &r.labels, &r.pad_macs, &y));
        assert!(!ok(&r.ks, &r.labels, &r.pad_macs, &r.y[..31]));
        assert!(!ok(&r.ks[1..], &r.labels, &r.pad_macs, &r.y));
    }

    /// Malformed messages from either side are refused before use.
    #[test]
    fn malformed_messages_are_refused() {
        let mut rng = ChaCha20Rng::seed_from_u64(40);
        let (dp, ot) = DualProver::new(20, &mut rng);
        assert!(DualVerifier::new(&ot[..31], &[0; 20], &mut rng).is_err());
        assert!(DualVerifier::new(&[0; 32], &[0; 20], &mut rng).is_err());
        let (mut dv, answer) = DualVerifier::new(&ot, &[0xa5; 20], &mut rng).unwrap();
        assert!(dp.verifier_labels(&answer[..answer.len() - 64]).is_err());
        let labels = dp.verifier_labels(&answer).unwrap();
        assert!(dv.take_labels(&labels[1..]).is_err());
        dv.take_labels(&labels).unwrap();
        assert!(dv.take_labels(&labels).is_err(), "labels twice");
        assert!(dp.prover_labels(&[0; 19]).is_err());

        let plan = Arc::new(Plan::new(&keystream_circuit(16, 3)).unwrap());
        let mut rg = dp.record(plan.clone(), 1, [0; 8], &mut rng).unwrap();
        let mut ev = RecordEvaluation::new(16, 3, 1).unwrap();
        // A schedule of another length is refused.
        let other = Arc::new(Plan::new(&keystream_circuit(16, 4)).unwrap());
        assert!(ev.set_plan(other).is_err());
        ev.set_plan(plan.clone()).unwrap();
        assert!(ev.set_plan(plan.clone()).is_err(), "a schedule twice");
        let mut chunk = Vec::new();
        let mut chunks = Vec::new();
        while rg.next_chunk(&mut chunk) {
            chunks.push(core::mem::take(&mut chunk));
        }
        let (end, _) = rg.finish(&vec![Block::ZERO; 24]).unwrap();
        // A keystream check before the tables' end is refused.
        assert!(ev
            .check_value(
                &dv,
                &[0; 320],
                &[Block::ZERO; 24],
                &[Block::ZERO; 24],
                Block(1)
            )
            .is_err());
        for c in &chunks {
            ev.push_chunk(c.clone()).unwrap();
        }
        assert!(ev.end(&end[..end.len() - 1]).is_err());
        ev.end(&end).unwrap();
        assert!(
            ev.push_chunk(chunks[0].clone()).is_err(),
            "tables after the end"
        );
        assert!(ev.end(&end).is_err(), "end twice");
        let check = |ev: &mut RecordEvaluation| {
            ev.check_value(
                &dv,
                &dp.prover_labels(&[1; 20]).unwrap(),
                &[Block::ZERO; 24],
                &[Block::ZERO; 24],
                Block(1),
            )
        };
        check(&mut ev).unwrap();
        assert!(check(&mut ev).is_err(), "a second check");

        // Tables beyond the circuit's size are refused before they are
        // stored, with the schedule and without it (the bound).
        let huge = vec![0u8; webproof_mpc::max_stream_bytes(keystream_max_ands(16, 3)) + 1];
        let mut ev = RecordEvaluation::new(16, 3, 1).unwrap();
        assert!(ev.push_chunk(huge.clone()).is_err());
        let mut ev = RecordEvaluation::new(16, 3, 1).unwrap();
        ev.set_plan(plan).unwrap();
        assert!(ev.push_chunk(huge).is_err());
    }

    /// The ChaCha20 bound holds on the circuit the prover garbles, on
    /// lengths within one block, at its edges and over many blocks; it is
    /// tight to within the constant words' savings (under 1%) on whole
    /// blocks. (The AES-256 bound the tests borrowed covered 1 to 16 bytes
    /// by 32 AND gates at 16 bytes: by accident.)
    #[test]
    fn chacha_and_bound_holds() {
        let c = RecordCipher::Chacha20Poly1305;
        for len in [1, 15, 16, 17, 63, 64, 65, 1000] {
            let ands = Plan::new(&c.keystream_circuit(len)).unwrap().and_count() as usize;
            let bound = c.max_ands(len);
            assert!(ands <= bound, "{len}: {ands} over {bound}");
            // Dead gates of a partial last block (words and round outputs
            // no keystream byte needs) are pruned: up to a tenth of a block.
            assert!(9 * bound < 10 * ands, "{len}: {ands} of {bound}");
            if len % 64 == 0 {
                assert!(100 * bound < 101 * ands, "{len}: {ands} of {bound}");
            }
        }
        assert_eq!(c.key_iv_len(), crate::rec::chacha::KEY_IV_LEN);
        assert_eq!(RecordCipher::aes(16), Some(RecordCipher::Aes128Gcm));
        assert_eq!(RecordCipher::aes(32), Some(RecordCipher::Aes256Gcm));
        assert_eq!(RecordCipher::aes(24), None);
        assert!(RecordEvaluation::new(24, 16, 1).is_err());
        assert!(RecordEvaluation::for_cipher(c, 0, 1).is_err());
    }

    /// A record's evaluation takes only its own cipher's schedule: a
    /// ChaCha20 keystream in an AES evaluation of the same length (or the
    /// reverse) is refused, whatever its AND count.
    #[test]
    fn schedules_of_another_cipher_are_refused() {
        let len = 100;
        let chacha = Arc::new(Plan::new(&crate::rec::chacha::keystream_circuit(len)).unwrap());
        let aes = Arc::new(Plan::new(&keystream_circuit(32, len)).unwrap());
        let mut ev = RecordEvaluation::new(32, len, 1).unwrap();
        assert!(ev.set_plan(Arc::clone(&chacha)).is_err());
        ev.set_plan(Arc::clone(&aes)).unwrap();
        let mut ev = RecordEvaluation::for_cipher(RecordCipher::Chacha20Poly1305, len, 1).unwrap();
        assert!(ev.set_plan(aes).is_err());
        ev.set_plan(chacha).unwrap();
    }

    /// The bound on a keystream circuit's AND gates holds, and is not
    /// loose by more than about a third.
    #[test]
    fn and_bound_holds() {
        for (key_len, len) in [(16, 1), (16, 100), (32, 1), (32, 2048), (16, 2048)] {
            let ands = Plan::new(&keystream_circuit(key_len, len))
                .unwrap()
                .and_count() as usize;
            let bound = keystream_max_ands(key_len, len);
            assert!(ands <= bound, "{key_len} {len}: {ands} over {bound}");
            assert!(
                3 * bound < 4 * ands + 100_000,
                "{key_len} {len}: {ands} of {bound}"
            );
        }
    }
}
