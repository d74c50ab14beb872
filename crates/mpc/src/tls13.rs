//! The TLS 1.3 key schedule (RFC 8446 §7.1) in 2PC, SHA-256 suites: from
//! the parties' additive shares of the ECDHE secret (the key exchange's
//! output, as [`crate::tls12`] and [`crate::reduced`] take it) to the
//! handshake traffic secrets, revealed, and XOR shares of the application
//! keys and IVs ([`KeyShares`], the form the record steps take).
//!
//! Owns four step circuits, their inputs and outputs, and the schedule's
//! public parts in the clear: the early secret and its `derived` secret are
//! constants, the handshake keys, IVs and Finished keys follow from the
//! revealed handshake traffic secrets ([`HandshakeSecrets`]). As in
//! [`crate::reduced`], every secret HMAC key has its inner pad state `IS`
//! revealed to both and its outer state `OS` XOR-shared (the verifier's
//! share is its mask); the **verifier** computes every inner digest in the
//! clear and enters it as the round addends of the outer block, so only
//! outer compressions on a public schedule are garbled for messages. Never
//! sees a socket, a record or a certificate.
//!
//! Steps (one garbled circuit and one round trip each; the prover's share
//! enters by COT at step 0, later steps are chained to the output before):
//! 0. ECDHE shares → `HS = HMAC(derived, Z)` → pads of `HS`: `IS_hs`
//!    revealed, `OS_hs` shared;
//! 1. `c hs traffic` and `s hs traffic` revealed; `derived` → `MS =
//!    HMAC(derived, 0)` → pads of `MS`: `IS_ms` revealed, `OS_ms` shared;
//! 2. `c ap traffic` and `s ap traffic` → their pads: both `IS` revealed,
//!    both `OS` shared;
//! 3. both directions' keys and IVs, shared.
//!
//! Cost with AES-128-GCM-SHA256 ([`Tls13Plans::and_counts`]): 23 SHA-256
//! compressions, 9 of them outer ones on a public schedule; 437,566 AND
//! (85,616 + 170,818 + 117,450 + 63,682), against 247,267 for the reduced
//! TLS 1.2 PRF (14 compressions) and 775,947 for the full one. Who learns
//! which secret, and why that is safe: `docs/protocol/mpc-tls13-kdf.md`.

use crate::error::{Error, Result};
use crate::exec::{ProverCircuit, StepTables, VerifierCircuit};
use crate::plan::Plan;
use crate::reduced::{inner_digest, outer, outer_schedule, KW_BYTES};
use crate::tls12::{curve_bit, premaster, Curve, KeyShares};
use rand_core::{CryptoRng, RngCore};
use sha2::Digest;
use std::sync::Arc;
use webproof_circuits::builder::const_bytes;
use webproof_circuits::hmac::{hkdf_label, HmacKey};
use webproof_circuits::sha2::{hash_from_state, HashAlg};
use webproof_circuits::tls::Tls13Suite;
use webproof_circuits::{bits_to_bytes, bytes_to_bits, Bit, Builder, Circuit};
use webproof_core::Block;

const H: HashAlg = HashAlg::Sha256;

/// Steps of a session (circuits, garbling instances).
pub const STEPS: usize = 4;

/// AEAD nonce (IV) length of every TLS 1.3 suite.
pub const IV_LEN: usize = 12;

/// Where the key shares are output: (step, output group). Their output
/// labels are what the record steps and the proof take, as the TLS 1.2
/// key block's.
pub const KEY_OUTPUT: (usize, usize) = (3, 0);

// ---------------------------------------------------------------------
// The schedule in the clear.

/// One SHA-256 compression of a whole `block` from `state`.
fn compress(state: &[u8], block: &[u8]) -> [u8; 32] {
    let mut st: [u32; 8] = core::array::from_fn(|i| {
        u32::from_be_bytes(state[4 * i..4 * i + 4].try_into().expect("4"))
    });
    sha2::compress256(
        &mut st,
        &[*sha2::digest::generic_array::GenericArray::from_slice(
            block,
        )],
    );
    let mut out = [0u8; 32];
    for (i, w) in st.iter().enumerate() {
        out[4 * i..4 * i + 4].copy_from_slice(&w.to_be_bytes());
    }
    out
}

/// HMAC-SHA256's pad states of `key` (at most a block): the chaining
/// states after `key ⊕ ipad` and after `key ⊕ opad`.
fn pads(key: &[u8]) -> ([u8; 32], [u8; 32]) {
    assert!(key.len() <= 64, "HMAC keys here are at most a block");
    let iv = H.iv();
    let pad = |byte: u8| {
        let mut block = [byte; 64];
        for (b, k) in block.iter_mut().zip(key) {
            *b ^= k;
        }
        compress(&iv, &block)
    };
    (pad(0x36), pad(0x5c))
}

fn hmac(key: &[u8], msg: &[u8]) -> [u8; 32] {
    let (is, os) = pads(key);
    inner_digest(&os, &inner_digest(&is, msg))
}

/// The HMAC message of `HKDF-Expand-Label(·, label, context, len)` for
/// `len` up to a hash: the `HkdfLabel` and the counter byte 1.
fn info(label: &str, context: &[u8], len: usize) -> Vec<u8> {
    [hkdf_label(label, context, len), vec![1]].concat()
}

/// `HKDF-Expand-Label(secret, label, context, len)` with SHA-256, `len` at
/// most 32 (one HMAC, as every output of the schedule).
pub fn expand_label(secret: &[u8; 32], label: &str, context: &[u8], len: usize) -> Vec<u8> {
    assert!(len <= 32, "one HMAC output");
    hmac(secret, &info(label, context, len))[..len].to_vec()
}

/// SHA-256 of the empty string: the context of `Derive-Secret(·,
/// "derived", "")`.
fn empty_hash() -> [u8; 32] {
    sha2::Sha256::digest([]).into()
}

/// `Derive-Secret(early_secret, "derived", "")` without a PSK: a public
/// constant, the HKDF salt of the handshake secret.
pub fn derived_early() -> [u8; 32] {
    let early = hmac(&[0; 32], &[0; 32]);
    expand_label(&early, "derived", &empty_hash(), 32)
        .try_into()
        .expect("32 bytes")
}

/// The secrets of the schedule in the clear, from the ECDHE secret `z`
/// (encoded as TLS does: P-256's x-coordinate big-endian, X25519's output
/// as is): the reference the 2PC is tested against, never run in a session
/// (no party holds `z`).
#[derive(Clone, PartialEq, Eq)]
pub struct ClearSchedule {
    /// Handshake secret.
    pub handshake: [u8; 32],
    /// client_handshake_traffic_secret.
    pub client_handshake: [u8; 32],
    /// server_handshake_traffic_secret.
    pub server_handshake: [u8; 32],
    /// Master secret.
    pub master: [u8; 32],
    /// client_application_traffic_secret_0.
    pub client_application: [u8; 32],
    /// server_application_traffic_secret_0.
    pub server_application: [u8; 32],
}

impl core::fmt::Debug for ClearSchedule {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("ClearSchedule(..)")
    }
}

impl ClearSchedule {
    /// The schedule for `z`, the hash of ClientHello..ServerHello
    /// (`hello_hash`) and of ClientHello..server Finished
    /// (`finished_hash`).
    pub fn new(z: &[u8; 32], hello_hash: &[u8; 32], finished_hash: &[u8; 32]) -> Self {
        let d = |s: &[u8; 32], label: &str, ctx: &[u8]| -> [u8; 32] {
            expand_label(s, label, ctx, 32).try_into().expect("32")
        };
        let hs = hmac(&derived_early(), z);
        let ms = hmac(&d(&hs, "derived", &empty_hash()), &[0; 32]);
        ClearSchedule {
            handshake: hs,
            client_handshake: d(&hs, "c hs traffic", hello_hash),
            server_handshake: d(&hs, "s hs traffic", hello_hash),
            master: ms,
            client_application: d(&ms, "c ap traffic", finished_hash),
            server_application: d(&ms, "s ap traffic", finished_hash),
        }
    }
}

/// A traffic secret's write key (`key_len` bytes) and IV.
pub fn traffic_keys(secret: &[u8; 32], key_len: usize) -> (Vec<u8>, [u8; IV_LEN]) {
    let iv = expand_label(secret, "iv", &[], IV_LEN);
    (
        expand_label(secret, "key", &[], key_len),
        iv.try_into().expect("12 bytes"),
    )
}

/// A handshake traffic secret's `finished_key`.
pub fn finished_key(secret: &[u8; 32]) -> [u8; 32] {
    expand_label(secret, "finished", &[], 32)
        .try_into()
        .expect("32 bytes")
}

/// The Finished `verify_data` under a handshake traffic secret, over the
/// transcript hash `hash` (through CertificateVerify for the server's,
/// through the server Finished for the client's).
pub fn verify_data(secret: &[u8; 32], hash: &[u8]) -> [u8; 32] {
    hmac(&finished_key(secret), hash)
}

/// Both handshake traffic secrets, revealed at step 1: what the prover
/// decrypts the server's flight and writes its Finished with.
#[derive(Clone, PartialEq, Eq)]
pub struct HandshakeSecrets {
    /// client_handshake_traffic_secret.
    pub client: [u8; 32],
    /// server_handshake_traffic_secret.
    pub server: [u8; 32],
}

impl core::fmt::Debug for HandshakeSecrets {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("HandshakeSecrets(..)")
    }
}

impl HandshakeSecrets {
    fn from_revealed(step1: &[u8]) -> Option<Self> {
        Some(HandshakeSecrets {
            client: step1.get(32..64)?.try_into().ok()?,
            server: step1.get(64..96)?.try_into().ok()?,
        })
    }

    /// Whether the server's Finished (`sent`) is the `verify_data` over
    /// the hash of ClientHello..CertificateVerify.
    pub fn check_server_finished(&self, hash: &[u8], sent: &[u8]) -> Result<()> {
        if verify_data(&self.server, hash)[..] != *sent {
            return Err(Error::ServerFinished);
        }
        Ok(())
    }

    /// The client's Finished `verify_data` over the hash of
    /// ClientHello..server Finished.
    pub fn client_verify_data(&self, hash: &[u8]) -> [u8; 32] {
        verify_data(&self.client, hash)
    }
}

// ---------------------------------------------------------------------
// The circuits.

/// Bytes of the key block with `key_len`-byte keys: both keys, then both
/// IVs (the order of [`KeyShares`]).
fn key_block_len(key_len: usize) -> usize {
    2 * key_len + 2 * IV_LEN
}

fn split_key_block(key_len: usize, kb: &[u8]) -> KeyShares {
    let k = key_len;
    KeyShares {
        client_key: kb[..k].to_vec(),
        server_key: kb[k..2 * k].to_vec(),
        client_iv: kb[2 * k..2 * k + IV_LEN].to_vec(),
        server_iv: kb[2 * k + IV_LEN..].to_vec(),
    }
}

/// What a step's circuit takes, in bytes: the share of each party, the
/// public inner digests (each entered as its outer block's schedule,
/// `KW_BYTES`), the mask the step outputs under.
struct Shape {
    share: usize,
    digests: usize,
    mask: usize,
}

fn shape(step: usize, key_len: usize) -> Shape {
    let (share, digests, mask) = match step {
        0 => (32, 0, 32),
        1 => (32, 3, 32),
        2 => (32, 2, 64),
        _ => (64, 4, key_block_len(key_len)),
    };
    Shape {
        share,
        digests,
        mask,
    }
}

/// Bytes a step reveals to both (`IS_hs`; `IS_ms ‖ c_hs ‖ s_hs`; `IS` of
/// both application secrets), `None` for the last.
fn revealed_len(step: usize) -> Option<usize> {
    match step {
        0 => Some(32),
        1 => Some(96),
        2 => Some(64),
        _ => None,
    }
}

/// The circuit of `step` for keys of `key_len` bytes (16 or 32). Input
/// groups: step 0 `[prover share, verifier share, mask, curve bit]` (the
/// ECDHE shares, 32 bytes little-endian below `p`, as
/// [`crate::tls12`]'s); later steps `[prover share, verifier share, inner
/// digests' schedules, mask]`, the shares being the `OS` the step before
/// output (the verifier's is its mask). Outputs: the revealed group (not at
/// step 3), then the shared one under the step's mask.
pub fn step_circuit(step: usize, key_len: usize) -> Circuit {
    assert!(step < STEPS, "four steps");
    let s = shape(step, key_len);
    let mut b = Builder::new();
    let p = b.input_bytes(s.share);
    let v = b.input_bytes(s.share);
    let pads_out = |b: &mut Builder, keys: &[&[Bit]], mask: &[Bit]| {
        let ks: Vec<HmacKey> = keys.iter().map(|k| HmacKey::new(b, H, k)).collect();
        let is: Vec<Bit> = ks.iter().flat_map(|k| k.inner_state().to_vec()).collect();
        let os: Vec<Bit> = ks.iter().flat_map(|k| k.outer_state().to_vec()).collect();
        b.output(&is);
        let o = b.xor_words(&os, mask);
        b.output(&o);
    };
    if step == 0 {
        let mask = b.input_bytes(s.mask);
        let p256 = b.input(1)[0];
        let z = premaster(&mut b, &p, &v, p256);
        // HKDF-Extract under the public salt: its pads are constants.
        let (is, os) = pads(&derived_early());
        let u = hash_from_state(&mut b, H, &const_bytes(&is), 64, &z);
        let hs = hash_from_state(&mut b, H, &const_bytes(&os), 64, &u);
        pads_out(&mut b, &[&hs], &mask);
        return b.finish();
    }
    let kw: Vec<Vec<Bit>> = b
        .input_bytes(KW_BYTES * s.digests)
        .chunks(8 * KW_BYTES)
        .map(<[Bit]>::to_vec)
        .collect();
    let mask = b.input_bytes(s.mask);
    let os = b.xor_words(&p, &v);
    match step {
        1 => {
            let c = outer(&mut b, &os, &kw[0]);
            let sv = outer(&mut b, &os, &kw[1]);
            let derived = outer(&mut b, &os, &kw[2]);
            // One HMAC under `derived` only: its pads stay inside.
            let dk = HmacKey::new(&mut b, H, &derived);
            let ms = dk.mac(&mut b, &const_bytes(&[0; 32]));
            let mk = HmacKey::new(&mut b, H, &ms);
            b.output(&[mk.inner_state(), &c, &sv].concat());
            let o = b.xor_words(mk.outer_state(), &mask);
            b.output(&o);
        }
        2 => {
            let c = outer(&mut b, &os, &kw[0]);
            let sv = outer(&mut b, &os, &kw[1]);
            pads_out(&mut b, &[&c, &sv], &mask);
        }
        _ => {
            let (oc, osv) = os.split_at(256);
            let ck = outer(&mut b, oc, &kw[0]);
            let sk = outer(&mut b, osv, &kw[1]);
            let civ = outer(&mut b, oc, &kw[2]);
            let siv = outer(&mut b, osv, &kw[3]);
            let kb = [
                &ck[..8 * key_len],
                &sk[..8 * key_len],
                &civ[..8 * IV_LEN],
                &siv[..8 * IV_LEN],
            ]
            .concat();
            let o = b.xor_words(&kb, &mask);
            b.output(&o);
        }
    }
    b.finish()
}

/// The plans of the four steps for one key length (schedules only, shared
/// by reference: cloning is cheap).
#[derive(Clone)]
pub struct Tls13Plans {
    key_len: usize,
    plans: Vec<Arc<Plan>>,
}

impl Tls13Plans {
    /// Build and plan the circuits of `suite`: the SHA-256 suites
    /// (AES-128-GCM, ChaCha20-Poly1305); SHA-384 is refused (not done).
    pub fn new(suite: Tls13Suite) -> Result<Self> {
        if suite.hash != H || !matches!(suite.key_len, 16 | 32) {
            return Err(Error::Malformed(
                "TLS 1.3 key schedule in 2PC: SHA-256 suites only",
            ));
        }
        let plans = (0..STEPS)
            .map(|s| Plan::from_circuit(step_circuit(s, suite.key_len)).map(Arc::new))
            .collect::<Result<_>>()?;
        Ok(Tls13Plans {
            key_len: suite.key_len,
            plans,
        })
    }

    /// The plan of `step`.
    pub fn plan(&self, step: usize) -> Option<&Arc<Plan>> {
        self.plans.get(step)
    }

    /// AND gates per step.
    pub fn and_counts(&self) -> Vec<u64> {
        self.plans.iter().map(|p| p.and_count()).collect()
    }

    /// COTs the prover's share consumes at `step` (its ECDHE share at
    /// step 0; later shares are chained).
    pub fn cots(&self, step: usize) -> usize {
        if step == 0 {
            256
        } else {
            0
        }
    }

    /// Bytes of each write key.
    pub fn key_len(&self) -> usize {
        self.key_len
    }
}

/// The circuit groups of `step` the verifier encodes in preprocessing:
/// its share from step 1 on (the mask of the `OS` it takes) and the mask
/// the step outputs under, both drawn when it garbles. Only the ECDHE
/// share, the curve and the inner digests wait for the session.
pub fn early_groups(step: usize) -> &'static [usize] {
    match step {
        0 => &[2],
        _ => &[1, 3],
    }
}

/// The verifier's masks: of `OS_hs`, `OS_ms`, both application secrets'
/// `OS`, and the key block (its key shares).
type Masks = [Vec<u8>; 4];

/// The verifier's groups of `step` in circuit order after the prover's:
/// step 0 its ECDHE share, mask and the curve; later its share (the mask
/// of the step before), the digests' schedules, its mask.
fn verifier_groups(
    step: usize,
    (share, curve): (&[u8; 32], Curve),
    masks: &Masks,
    us: &[[u8; 32]],
) -> Vec<Vec<bool>> {
    if step == 0 {
        return vec![
            bytes_to_bits(share),
            bytes_to_bits(&masks[0]),
            curve_bit(curve),
        ];
    }
    let kw: Vec<u8> = us.iter().flat_map(outer_schedule).collect();
    vec![
        bytes_to_bits(&masks[step - 1]),
        bytes_to_bits(&kw),
        bytes_to_bits(&masks[step]),
    ]
}

/// The bits of [`early_groups`]`(step)`, in group order.
fn early_bits(step: usize, masks: &Masks) -> Vec<Vec<bool>> {
    match step {
        0 => vec![bytes_to_bits(&masks[0])],
        _ => vec![bytes_to_bits(&masks[step - 1]), bytes_to_bits(&masks[step])],
    }
}

/// The public transcript hashes: of ClientHello..ServerHello (known at
/// step 0) and of ClientHello..server Finished (needed from step 2).
#[derive(Clone, Copy, Default)]
struct Hashes {
    hello: Option<[u8; 32]>,
    finished: Option<[u8; 32]>,
}

/// The inner digests `step` takes, from what the steps before revealed
/// (`revealed[s]`, see [`revealed_len`]) and the public hashes.
fn digests(
    step: usize,
    revealed: &[Vec<u8>],
    hashes: &Hashes,
    key_len: usize,
) -> Result<Vec<[u8; 32]>> {
    if revealed.len() < step {
        return Err(Error::Malformed("step out of order"));
    }
    let u =
        |is: &[u8], label: &str, ctx: &[u8], len: usize| inner_digest(is, &info(label, ctx, len));
    Ok(match step {
        0 => Vec::new(),
        1 => {
            let hello = hashes
                .hello
                .ok_or(Error::Malformed("no ServerHello hash"))?;
            let is = &revealed[0];
            vec![
                u(is, "c hs traffic", &hello, 32),
                u(is, "s hs traffic", &hello, 32),
                u(is, "derived", &empty_hash(), 32),
            ]
        }
        2 => {
            let fin = hashes
                .finished
                .ok_or(Error::Malformed("no server Finished hash"))?;
            let is = &revealed[1][..32];
            vec![
                u(is, "c ap traffic", &fin, 32),
                u(is, "s ap traffic", &fin, 32),
            ]
        }
        3 => {
            let (c, s) = revealed[2].split_at(32);
            vec![
                u(c, "key", &[], key_len),
                u(s, "key", &[], key_len),
                u(c, "iv", &[], IV_LEN),
                u(s, "iv", &[], IV_LEN),
            ]
        }
        _ => return Err(Error::Malformed("no such step")),
    })
}

fn hash32(h: &[u8]) -> Result<[u8; 32]> {
    h.try_into()
        .map_err(|_| Error::Malformed("hash of the wrong length"))
}

/// The prover's check, after the session, of the verifier's revealed
/// inputs of the four steps (`inputs[s]`: its groups of step `s` in group
/// order without the prover's) against what they must be: the inner
/// digests of the values the steps revealed (`revealed[s]` for steps 0 to
/// 2, the prover's decoding) and the public hashes, the negotiated
/// `curve`, each mask the same where a later step takes it as its share.
/// The audit separately checks that these are the values garbled with.
/// Returns the verifier's key shares its masks fix.
pub fn check_verifier_inputs(
    key_len: usize,
    curve: Curve,
    hello_hash: &[u8],
    finished_hash: &[u8],
    inputs: &[Vec<Vec<bool>>],
    revealed: &[Vec<bool>],
) -> Result<KeyShares> {
    const OTHER: Error = Error::Malformed("inputs of another key schedule");
    if inputs.len() != STEPS || revealed.len() != STEPS - 1 {
        return Err(OTHER);
    }
    let group = |s: usize, g: usize, bytes: usize| -> Result<Vec<u8>> {
        match inputs[s].get(g) {
            Some(b) if b.len() == 8 * bytes => Ok(bits_to_bytes(b)),
            _ => Err(OTHER),
        }
    };
    let share: [u8; 32] = group(0, 0, 32)?.try_into().expect("32 bytes");
    let masks: Masks = [
        group(0, 1, 32)?,
        group(1, 2, 32)?,
        group(2, 2, 64)?,
        group(3, 2, key_block_len(key_len))?,
    ];
    let hashes = Hashes {
        hello: Some(hash32(hello_hash)?),
        finished: Some(hash32(finished_hash)?),
    };
    let revealed: Vec<Vec<u8>> = revealed.iter().map(|r| bits_to_bytes(r)).collect();
    for (s, r) in revealed.iter().enumerate() {
        if Some(r.len()) != revealed_len(s) {
            return Err(OTHER);
        }
    }
    for (step, given) in inputs.iter().enumerate() {
        let us = digests(step, &revealed, &hashes, key_len)?;
        if verifier_groups(step, (&share, curve), &masks, &us) != *given {
            return Err(Error::VerifierCheated(
                "a key-schedule input other than the protocol's (inner digests of the \
                 revealed values and the transcript hashes, or its masks reused as the \
                 steps require)",
            ));
        }
    }
    Ok(split_key_block(key_len, &masks[3]))
}

// ---------------------------------------------------------------------
// The parties.

/// The verifier (garbler) of the TLS 1.3 key schedule.
pub struct Tls13Verifier {
    key_len: usize,
    circuits: Vec<VerifierCircuit>,
    /// The ECDHE share and the negotiated curve, once bound.
    share: Option<([u8; 32], Curve)>,
    hashes: Hashes,
    masks: Masks,
    revealed: Vec<Vec<u8>>,
    /// The step whose inputs (or revealed labels) are due.
    next: usize,
}

impl Tls13Verifier {
    /// The session's circuits under `delta` (instances `first_instance ..
    /// first_instance + 4`), before any input is known: they can be
    /// garbled ([`Self::preprocess`]) ahead of the handshake.
    pub fn garble(
        plans: &Tls13Plans,
        delta: Block,
        first_instance: u64,
        rng: &mut (impl RngCore + CryptoRng),
    ) -> Result<Self> {
        let circuits = plans
            .plans
            .iter()
            .enumerate()
            .map(|(i, p)| {
                VerifierCircuit::new(Arc::clone(p), delta, first_instance + i as u64, 0, rng)
            })
            .collect::<Result<_>>()?;
        let mut mask = |n: usize| {
            let mut m = vec![0u8; n];
            rng.fill_bytes(&mut m);
            m
        };
        let masks = [
            mask(32),
            mask(32),
            mask(64),
            mask(key_block_len(plans.key_len)),
        ];
        Ok(Tls13Verifier {
            key_len: plans.key_len,
            circuits,
            share: None,
            hashes: Hashes::default(),
            masks,
            revealed: Vec::new(),
            next: 0,
        })
    }

    /// Preprocessing: tables, decoding and early input labels of every
    /// step, each step chained to the one before.
    pub fn preprocess(&mut self) -> Result<Vec<StepTables>> {
        (0..STEPS)
            .map(|step| {
                self.chain(step)?;
                let chunks = self.circuits[step].garble_all().into();
                let decoding = self.circuits[step].decoding()?;
                let early = self.circuits[step]
                    .early_inputs(early_groups(step), &early_bits(step, &self.masks))?;
                Ok((chunks, decoding, early))
            })
            .collect()
    }

    /// Before garbling `step` (once the step before it is garbled): its
    /// prover input takes the `OS` output of the step before.
    pub fn chain(&mut self, step: usize) -> Result<()> {
        if step == 0 {
            return Ok(());
        }
        let zero = self.circuits[step - 1]
            .garbler()
            .output_zero_labels(1)?
            .to_vec();
        self.circuits
            .get_mut(step)
            .ok_or(Error::Malformed("no such step"))?
            .chain_prover_input(&zero)
    }

    /// The verifier's ECDHE share (little-endian) on the negotiated
    /// `curve` and the hash of ClientHello..ServerHello; once, before step
    /// 0's inputs.
    pub fn bind(&mut self, share_le: &[u8; 32], curve: Curve, hello_hash: &[u8]) -> Result<()> {
        if self.share.is_some() {
            return Err(Error::Malformed("inputs bound twice"));
        }
        self.hashes.hello = Some(hash32(hello_hash)?);
        self.share = Some((*share_le, curve));
        Ok(())
    }

    /// The hash of ClientHello..server Finished, from the server's flight
    /// the verifier checked (see the protocol doc); once, before step 2's
    /// inputs.
    pub fn bind_finished_hash(&mut self, hash: &[u8]) -> Result<()> {
        if self.hashes.finished.is_some() {
            return Err(Error::Malformed("server Finished hash bound twice"));
        }
        self.hashes.finished = Some(hash32(hash)?);
        Ok(())
    }

    /// The answer to the prover's flips at `step` (COT `keys` at step 0;
    /// none later).
    pub fn inputs(&mut self, step: usize, keys: &[Block], flips: &[u8]) -> Result<Vec<u8>> {
        if step != self.next || step >= STEPS {
            return Err(Error::Malformed("step out of order"));
        }
        let share = self
            .share
            .ok_or(Error::Malformed("inputs before the key exchange"))?;
        let us = digests(step, &self.revealed, &self.hashes, self.key_len)?;
        let early = early_groups(step);
        // Circuit group `g` is verifier group `g - 1` (the prover's is 0).
        let late: Vec<Vec<bool>> = verifier_groups(step, (&share.0, share.1), &self.masks, &us)
            .into_iter()
            .enumerate()
            .filter(|(i, _)| !early.contains(&(i + 1)))
            .map(|(_, g)| g)
            .collect();
        let msg = self.circuits[step].inputs(keys, flips, &late)?;
        if revealed_len(step).is_none() {
            self.next += 1;
        }
        Ok(msg)
    }

    /// The prover's labels of `step`'s revealed output: checked, then
    /// taken into the verifier's state.
    pub fn receive(&mut self, step: usize, labels: &[u8]) -> Result<()> {
        if step != self.next || revealed_len(step).is_none() {
            return Err(Error::Malformed("step out of order"));
        }
        let v = bits_to_bytes(&self.circuits[step].check_output(0, labels)?);
        if Some(v.len()) != revealed_len(step) {
            return Err(Error::Malformed("revealed output of the wrong length"));
        }
        self.revealed.push(v);
        self.next += 1;
        Ok(())
    }

    /// Both handshake traffic secrets, after step 1.
    pub fn handshake_secrets(&self) -> Option<HandshakeSecrets> {
        HandshakeSecrets::from_revealed(self.revealed.get(1)?)
    }

    /// The verifier's key shares (its masks of the key block).
    pub fn key_shares(&self) -> KeyShares {
        split_key_block(self.key_len, &self.masks[3])
    }

    /// The step circuits (for the consistency proof: 0-labels, `Δ`).
    pub fn circuits(&self) -> &[VerifierCircuit] {
        &self.circuits
    }

    /// The step circuits, to garble chunk by chunk instead of
    /// [`Self::preprocess`] (after [`Self::chain`]).
    pub fn circuits_mut(&mut self) -> &mut [VerifierCircuit] {
        &mut self.circuits
    }
}

/// The prover (evaluator) of the TLS 1.3 key schedule.
pub struct Tls13Prover {
    key_len: usize,
    circuits: Vec<ProverCircuit>,
    tables: Vec<StepTables>,
    share: [u8; 32],
    /// The prover's share of the `OS` the next step takes.
    os: Vec<u8>,
    revealed: Vec<Vec<u8>>,
    kb: Vec<u8>,
    /// The step whose flips (or evaluation) are due.
    next: usize,
}

impl Tls13Prover {
    /// A session with the prover's ECDHE share (little-endian) and the
    /// verifier's preprocessing.
    pub fn new(
        plans: &Tls13Plans,
        first_instance: u64,
        share_le: &[u8; 32],
        tables: Vec<StepTables>,
    ) -> Result<Self> {
        if tables.len() != STEPS {
            return Err(Error::Malformed("preprocessing for another session"));
        }
        let circuits = plans
            .plans
            .iter()
            .zip(&tables)
            .enumerate()
            .map(|(i, (p, (_, _, early)))| {
                let mut c = ProverCircuit::new(Arc::clone(p), first_instance + i as u64, 0)?;
                c.receive_early(early_groups(i), early)?;
                Ok(c)
            })
            .collect::<Result<_>>()?;
        Ok(Tls13Prover {
            key_len: plans.key_len,
            circuits,
            tables,
            share: *share_le,
            os: Vec::new(),
            revealed: Vec::new(),
            kb: Vec::new(),
            next: 0,
        })
    }

    /// The flips of the prover's share for `step`: its ECDHE share against
    /// `macs` at step 0; none later (`macs` empty), the share being the
    /// labels it evaluated where the step before output it.
    pub fn flips(&mut self, step: usize, macs: &[Block]) -> Result<Vec<u8>> {
        if step != self.next || step >= STEPS {
            return Err(Error::Malformed("step out of order"));
        }
        if step == 0 {
            return self.circuits[0].flips(macs, &bytes_to_bits(&self.share));
        }
        if !macs.is_empty() {
            return Err(Error::Malformed("COTs for a chained step"));
        }
        let labels = self.circuits[step - 1]
            .evaluator()
            .output_labels(1)?
            .to_vec();
        self.circuits[step].chain_prover_input(&labels, &bytes_to_bits(&self.os))?;
        Ok(Vec::new())
    }

    /// Evaluate `step` with the verifier's input message; the labels of
    /// its revealed output to send back (none at step 3).
    pub fn evaluate(&mut self, step: usize, msg: &[u8]) -> Result<Option<Vec<u8>>> {
        if step != self.next || step >= STEPS {
            return Err(Error::Malformed("step out of order"));
        }
        let c = &mut self.circuits[step];
        c.receive_inputs(msg)?;
        let (chunks, decoding, _) = &self.tables[step];
        c.feed_received(chunks)?;
        c.finish()?;
        let out: Vec<Vec<u8>> = c
            .decode(decoding)?
            .iter()
            .map(|g| bits_to_bytes(g))
            .collect();
        self.next += 1;
        if step == STEPS - 1 {
            self.kb = out[0].clone();
            return Ok(None);
        }
        self.revealed.push(out[0].clone());
        self.os = out[1].clone();
        self.circuits[step].output_message(0).map(Some)
    }

    /// Both handshake traffic secrets, after step 1.
    pub fn handshake_secrets(&self) -> Option<HandshakeSecrets> {
        HandshakeSecrets::from_revealed(self.revealed.get(1)?)
    }

    /// The prover's key shares, after step 3.
    pub fn key_shares(&self) -> Result<KeyShares> {
        if self.kb.len() != key_block_len(self.key_len) {
            return Err(Error::NotFinished);
        }
        Ok(split_key_block(self.key_len, &self.kb))
    }

    /// What steps 0 to 2 revealed, as decoded (for
    /// [`check_verifier_inputs`] after the session).
    pub fn revealed(&self) -> Vec<Vec<bool>> {
        self.revealed.iter().map(|r| bytes_to_bits(r)).collect()
    }

    /// The step circuits (for the consistency proof: active labels).
    pub fn circuits(&self) -> &[ProverCircuit] {
        &self.circuits
    }
}
