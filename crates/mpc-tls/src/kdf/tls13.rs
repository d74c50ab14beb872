//! The TLS 1.3 key schedule (RFC 8446 §7.1) in 2PC: from the parties'
//! additive shares of the ECDHE secret (the key exchange's output, as
//! [`crate::kdf::tls12`] and [`crate::kdf::reduced`] take it) to the handshake
//! traffic secrets, revealed, and XOR shares of the application keys and
//! IVs ([`KeyShares`], the form the record steps take). Every TLS 1.3
//! suite: SHA-256 (AES-128-GCM, ChaCha20-Poly1305) and SHA-384
//! (AES-256-GCM).
//!
//! Owns four step circuits, their inputs and outputs, and the schedule's
//! public parts in the clear: the early secret and its `derived` secret are
//! constants, the handshake keys, IVs and Finished keys follow from the
//! revealed handshake traffic secrets ([`HandshakeSecrets`]). As in
//! [`crate::kdf::reduced`], every secret HMAC key has its inner pad state `IS`
//! revealed to both and its outer state `OS` XOR-shared (the verifier's
//! share is its mask); the **verifier** computes every inner digest in the
//! clear and enters it as the round addends of the outer block, so HMAC on
//! a public message costs one garbled compression without a message
//! schedule. Never sees a socket, a record
//! or a certificate.
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
//! Cost ([`Tls13Plans::and_counts`]): with AES-128-GCM-SHA256 23 SHA-256
//! compressions, 9 of them outer ones on a public schedule, 437,566 AND
//! (85,616 + 170,818 + 117,450 + 63,682; 437,876 with ChaCha20's 32-byte
//! keys), against 247,267 for the reduced TLS 1.2 PRF (14 compressions)
//! and 775,947 for the full one; with AES-256-GCM-SHA384 the same 23 as
//! SHA-512 compressions, 1,123,504 AND. Who learns which secret, and why
//! that is safe: `docs/protocol/mpc-tls13-kdf.md`.

use crate::kdf::reduced::{outer, outer_schedule, prover_circuits, KW_BYTES};
use crate::kdf::tls12::{curve_bit, premaster, Curve, KeyShares};
use rand_core::{CryptoRng, RngCore};
use sha2::Digest;
use std::sync::Arc;
use webproof_circuits::builder::const_bytes;
use webproof_circuits::hmac::{hkdf_label, HmacKey};
use webproof_circuits::sha2::{
    compress_public_schedule, hash_from_state, padding, public_schedule, HashAlg,
};
use webproof_circuits::tls::Tls13Suite;
use webproof_circuits::{bits_to_bytes, bytes_to_bits, Bit, Builder, Circuit};
use webproof_core::Block;
use webproof_mpc::error::{Error, Result};
use webproof_mpc::exec::{ProverCircuit, StepTables, VerifierCircuit};
use webproof_mpc::plan::Plan;

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

/// One compression of a whole `block` from `state` (both serialised
/// big-endian, as in `webproof_circuits::sha2`).
fn compress(alg: HashAlg, state: &[u8], block: &[u8]) -> Vec<u8> {
    use sha2::digest::generic_array::GenericArray;
    match alg {
        HashAlg::Sha256 => {
            let mut st: [u32; 8] = core::array::from_fn(|i| {
                u32::from_be_bytes(state[4 * i..4 * i + 4].try_into().expect("4"))
            });
            sha2::compress256(&mut st, &[*GenericArray::from_slice(block)]);
            st.iter().flat_map(|w| w.to_be_bytes()).collect()
        }
        HashAlg::Sha384 => {
            let mut st: [u64; 8] = core::array::from_fn(|i| {
                u64::from_be_bytes(state[8 * i..8 * i + 8].try_into().expect("8"))
            });
            sha2::compress512(&mut st, &[*GenericArray::from_slice(block)]);
            st.iter().flat_map(|w| w.to_be_bytes()).collect()
        }
    }
}

/// The hash of `msg` after one block that left the chaining state
/// `state` (an HMAC pad): an inner digest, or the outer hash.
fn digest_after_block(alg: HashAlg, state: &[u8], msg: &[u8]) -> Vec<u8> {
    let bl = alg.block_len();
    let data = [msg, &padding(alg, bl + msg.len())].concat();
    let mut st = state.to_vec();
    for block in data.chunks(bl) {
        st = compress(alg, &st, block);
    }
    st.truncate(alg.output_len());
    st
}

/// HMAC's pad states of `key` (at most a block): the chaining states after
/// `key ⊕ ipad` and after `key ⊕ opad`.
fn pads(alg: HashAlg, key: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let bl = alg.block_len();
    assert!(key.len() <= bl, "HMAC keys here are at most a block");
    let iv = alg.iv();
    let pad = |byte: u8| {
        let mut block = vec![byte; bl];
        for (b, k) in block.iter_mut().zip(key) {
            *b ^= k;
        }
        compress(alg, &iv, &block)
    };
    (pad(0x36), pad(0x5c))
}

fn hmac(alg: HashAlg, key: &[u8], msg: &[u8]) -> Vec<u8> {
    let (is, os) = pads(alg, key);
    digest_after_block(alg, &os, &digest_after_block(alg, &is, msg))
}

/// The HMAC message of `HKDF-Expand-Label(·, label, context, len)` for
/// `len` up to a hash: the `HkdfLabel` and the counter byte 1.
fn info(label: &str, context: &[u8], len: usize) -> Vec<u8> {
    [hkdf_label(label, context, len), vec![1]].concat()
}

/// `HKDF-Expand-Label(secret, label, context, len)` under `alg`, `len` at
/// most a hash (one HMAC, as every output of the schedule).
pub fn expand_label(
    alg: HashAlg,
    secret: &[u8],
    label: &str,
    context: &[u8],
    len: usize,
) -> Vec<u8> {
    assert!(len <= alg.output_len(), "one HMAC output");
    let mut out = hmac(alg, secret, &info(label, context, len));
    out.truncate(len);
    out
}

/// The hash of the empty string: the context of `Derive-Secret(·,
/// "derived", "")`.
fn empty_hash(alg: HashAlg) -> Vec<u8> {
    match alg {
        HashAlg::Sha256 => sha2::Sha256::digest([]).to_vec(),
        HashAlg::Sha384 => sha2::Sha384::digest([]).to_vec(),
    }
}

/// `Derive-Secret(early_secret, "derived", "")` without a PSK: a public
/// constant, the HKDF salt of the handshake secret.
pub fn derived_early(alg: HashAlg) -> Vec<u8> {
    let zeros = vec![0; alg.output_len()];
    let early = hmac(alg, &zeros, &zeros);
    expand_label(alg, &early, "derived", &empty_hash(alg), alg.output_len())
}

/// The secrets of the schedule in the clear, from the ECDHE secret `z`
/// (encoded as TLS does: P-256's x-coordinate big-endian, X25519's output
/// as is): the reference the 2PC is tested against, never run in a session
/// (no party holds `z`). Each is a hash long.
#[derive(Clone, PartialEq, Eq)]
pub struct ClearSchedule {
    /// Handshake secret.
    pub handshake: Vec<u8>,
    /// client_handshake_traffic_secret.
    pub client_handshake: Vec<u8>,
    /// server_handshake_traffic_secret.
    pub server_handshake: Vec<u8>,
    /// Master secret.
    pub master: Vec<u8>,
    /// client_application_traffic_secret_0.
    pub client_application: Vec<u8>,
    /// server_application_traffic_secret_0.
    pub server_application: Vec<u8>,
}

impl core::fmt::Debug for ClearSchedule {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("ClearSchedule(..)")
    }
}

impl ClearSchedule {
    /// The schedule under `alg` for `z`, the hash of
    /// ClientHello..ServerHello (`hello_hash`) and of ClientHello..server
    /// Finished (`finished_hash`).
    pub fn new(alg: HashAlg, z: &[u8; 32], hello_hash: &[u8], finished_hash: &[u8]) -> Self {
        let hl = alg.output_len();
        let d = |s: &[u8], label: &str, ctx: &[u8]| expand_label(alg, s, label, ctx, hl);
        let hs = hmac(alg, &derived_early(alg), z);
        let ms = hmac(alg, &d(&hs, "derived", &empty_hash(alg)), &vec![0; hl]);
        ClearSchedule {
            client_handshake: d(&hs, "c hs traffic", hello_hash),
            server_handshake: d(&hs, "s hs traffic", hello_hash),
            handshake: hs,
            client_application: d(&ms, "c ap traffic", finished_hash),
            server_application: d(&ms, "s ap traffic", finished_hash),
            master: ms,
        }
    }
}

/// A traffic secret's write key and IV under `suite`.
pub fn traffic_keys(suite: Tls13Suite, secret: &[u8]) -> (Vec<u8>, [u8; IV_LEN]) {
    let iv = expand_label(suite.hash, secret, "iv", &[], IV_LEN);
    (
        expand_label(suite.hash, secret, "key", &[], suite.key_len),
        iv.try_into().expect("12 bytes"),
    )
}

/// A handshake traffic secret's `finished_key`.
pub fn finished_key(alg: HashAlg, secret: &[u8]) -> Vec<u8> {
    expand_label(alg, secret, "finished", &[], alg.output_len())
}

/// The Finished `verify_data` under a handshake traffic secret, over the
/// transcript hash `hash` (through CertificateVerify for the server's,
/// through the server Finished for the client's).
pub fn verify_data(alg: HashAlg, secret: &[u8], hash: &[u8]) -> Vec<u8> {
    hmac(alg, &finished_key(alg, secret), hash)
}

/// Both handshake traffic secrets, revealed at step 1: what the prover
/// decrypts the server's flight and writes its Finished with.
#[derive(Clone, PartialEq, Eq)]
pub struct HandshakeSecrets {
    /// The suite's hash.
    pub alg: HashAlg,
    /// client_handshake_traffic_secret.
    pub client: Vec<u8>,
    /// server_handshake_traffic_secret.
    pub server: Vec<u8>,
}

impl core::fmt::Debug for HandshakeSecrets {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("HandshakeSecrets(..)")
    }
}

impl HandshakeSecrets {
    /// From step 1's revealed output (`IS_ms ‖ c_hs ‖ s_hs`).
    fn from_revealed(alg: HashAlg, step1: &[u8]) -> Option<Self> {
        let (sl, hl) = (alg.state_len(), alg.output_len());
        Some(HandshakeSecrets {
            alg,
            client: step1.get(sl..sl + hl)?.to_vec(),
            server: step1.get(sl + hl..sl + 2 * hl)?.to_vec(),
        })
    }

    /// Whether the server's Finished (`sent`) is the `verify_data` over
    /// the hash of ClientHello..CertificateVerify.
    pub fn check_server_finished(&self, hash: &[u8], sent: &[u8]) -> Result<()> {
        if verify_data(self.alg, &self.server, hash) != sent {
            return Err(Error::ServerFinished);
        }
        Ok(())
    }

    /// The client's Finished `verify_data` over the hash of
    /// ClientHello..server Finished.
    pub fn client_verify_data(&self, hash: &[u8]) -> Vec<u8> {
        verify_data(self.alg, &self.client, hash)
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

/// SHA-384's outer block for the inner digest `u` (48 bytes): `u`, then
/// the padding of a 176-byte message (the key's block came first).
fn outer_block384(u: &[u8]) -> Vec<u8> {
    [u, &padding(HashAlg::Sha384, 128 + 48)].concat()
}

/// The rounds of SHA-384's outer block whose addends are constants (words
/// 6 to 15 are the padding's), as bytes of its schedule.
const KW384_CONST: core::ops::Range<usize> = 48..128;

/// Bytes of the public input that enters one inner digest `u`: the round
/// addends of its outer block without the constant ones (`outer_schedule`
/// for SHA-256, 224 bytes; 560 for SHA-384), so the outer compression has
/// no message schedule.
fn digest_input_len(alg: HashAlg) -> usize {
    match alg {
        HashAlg::Sha256 => KW_BYTES,
        HashAlg::Sha384 => 8 * 80 - KW384_CONST.len(),
    }
}

/// [`digest_input_len`]'s bytes for `u`.
fn digest_input(alg: HashAlg, u: &[u8]) -> Vec<u8> {
    match alg {
        HashAlg::Sha256 => outer_schedule(u.try_into().expect("a SHA-256 digest")),
        HashAlg::Sha384 => {
            let mut kw = public_schedule(alg, &outer_block384(u));
            kw.drain(KW384_CONST);
            kw
        }
    }
}

/// `F(OS, u)`, the outer hash of HMAC from its state `os`, with `u` entered
/// as [`digest_input`].
fn outer_hash(b: &mut Builder, alg: HashAlg, os: &[Bit], kw: &[Bit]) -> Vec<Bit> {
    match alg {
        HashAlg::Sha256 => outer(b, os, kw),
        HashAlg::Sha384 => {
            let fixed = &public_schedule(alg, &outer_block384(&[0; 48]))[KW384_CONST];
            let (head, tail) = kw.split_at(8 * KW384_CONST.start);
            let all = [head, &const_bytes(fixed), tail].concat();
            let mut out = compress_public_schedule(b, alg, os, &all);
            out.truncate(8 * alg.output_len());
            out
        }
    }
}

/// What a step's circuit takes, in bytes: the share of each party, the
/// public inner digests (each [`digest_input_len`]), the mask the step
/// outputs under.
struct Shape {
    share: usize,
    digests: usize,
    mask: usize,
}

fn shape(suite: Tls13Suite, step: usize) -> Shape {
    let sl = suite.hash.state_len();
    let (share, digests, mask) = match step {
        0 => (32, 0, sl),
        1 => (sl, 3, sl),
        2 => (sl, 2, 2 * sl),
        _ => (2 * sl, 4, key_block_len(suite.key_len)),
    };
    Shape {
        share,
        digests,
        mask,
    }
}

/// Bytes a step reveals to both (`IS_hs`; `IS_ms ‖ c_hs ‖ s_hs`; `IS` of
/// both application secrets), `None` for the last.
fn revealed_len(alg: HashAlg, step: usize) -> Option<usize> {
    let (sl, hl) = (alg.state_len(), alg.output_len());
    match step {
        0 => Some(sl),
        1 => Some(sl + 2 * hl),
        2 => Some(2 * sl),
        _ => None,
    }
}

/// The circuit of `step` for `suite`. Input groups: step 0 `[prover
/// share, verifier share, mask, curve bit]` (the ECDHE shares, 32 bytes
/// little-endian below `p`, as [`crate::kdf::tls12`]'s); later steps
/// `[prover share, verifier share, inner digests, mask]`, the shares
/// being the `OS` the step before output (the verifier's is its mask).
/// Outputs: the revealed group (not at step 3), then the shared one under
/// the step's mask.
pub fn step_circuit(suite: Tls13Suite, step: usize) -> Circuit {
    assert!(step < STEPS, "four steps");
    let alg = suite.hash;
    let (sl, hl) = (alg.state_len(), alg.output_len());
    let s = shape(suite, step);
    let mut b = Builder::new();
    let p = b.input_bytes(s.share);
    let v = b.input_bytes(s.share);
    let pads_out = |b: &mut Builder, keys: &[&[Bit]], mask: &[Bit]| {
        let ks: Vec<HmacKey> = keys.iter().map(|k| HmacKey::new(b, alg, k)).collect();
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
        let (is, os) = pads(alg, &derived_early(alg));
        let bl = alg.block_len();
        let u = hash_from_state(&mut b, alg, &const_bytes(&is), bl, &z);
        let hs = hash_from_state(&mut b, alg, &const_bytes(&os), bl, &u);
        pads_out(&mut b, &[&hs], &mask);
        return b.finish();
    }
    let len = digest_input_len(alg);
    let us: Vec<Vec<Bit>> = b
        .input_bytes(len * s.digests)
        .chunks(8 * len)
        .map(<[Bit]>::to_vec)
        .collect();
    let mask = b.input_bytes(s.mask);
    let os = b.xor_words(&p, &v);
    match step {
        1 => {
            let c = outer_hash(&mut b, alg, &os, &us[0]);
            let sv = outer_hash(&mut b, alg, &os, &us[1]);
            let derived = outer_hash(&mut b, alg, &os, &us[2]);
            // One HMAC under `derived` only: its pads stay inside.
            let dk = HmacKey::new(&mut b, alg, &derived);
            let ms = dk.mac(&mut b, &const_bytes(&vec![0; hl]));
            let mk = HmacKey::new(&mut b, alg, &ms);
            b.output(&[mk.inner_state(), &c, &sv].concat());
            let o = b.xor_words(mk.outer_state(), &mask);
            b.output(&o);
        }
        2 => {
            let c = outer_hash(&mut b, alg, &os, &us[0]);
            let sv = outer_hash(&mut b, alg, &os, &us[1]);
            pads_out(&mut b, &[&c, &sv], &mask);
        }
        _ => {
            let (oc, osv) = os.split_at(8 * sl);
            let ck = outer_hash(&mut b, alg, oc, &us[0]);
            let sk = outer_hash(&mut b, alg, osv, &us[1]);
            let civ = outer_hash(&mut b, alg, oc, &us[2]);
            let siv = outer_hash(&mut b, alg, osv, &us[3]);
            let kl = suite.key_len;
            let kb = [
                &ck[..8 * kl],
                &sk[..8 * kl],
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

/// The plans of the four steps for one suite (schedules only, shared by
/// reference: cloning is cheap).
#[derive(Clone)]
pub struct Tls13Plans {
    suite: Tls13Suite,
    plans: Vec<Arc<Plan>>,
}

impl Tls13Plans {
    /// Build and plan the circuits of `suite` (AES-128-GCM-SHA256,
    /// ChaCha20-Poly1305-SHA256, AES-256-GCM-SHA384).
    pub fn new(suite: Tls13Suite) -> Result<Self> {
        if suite.key_len > suite.hash.output_len() || suite.key_len == 0 {
            return Err(Error::Malformed("a TLS 1.3 suite with another key length"));
        }
        let plans = (0..STEPS)
            .map(|s| Plan::from_circuit(step_circuit(suite, s)).map(Arc::new))
            .collect::<Result<_>>()?;
        Ok(Tls13Plans { suite, plans })
    }

    /// The plans of `suite`, built on the first call for it in this process
    /// and shared by every later one (they depend on nothing of a session).
    pub fn shared(suite: Tls13Suite) -> Result<Self> {
        static SHARED: std::sync::Mutex<Vec<Tls13Plans>> = std::sync::Mutex::new(Vec::new());
        let cached = |v: &[Tls13Plans]| v.iter().find(|p| p.suite == suite).cloned();
        if let Some(p) = cached(&SHARED.lock().unwrap_or_else(|e| e.into_inner())) {
            return Ok(p);
        }
        // Built outside the lock: another suite's session need not wait.
        let p = Self::new(suite)?;
        let mut v = SHARED.lock().unwrap_or_else(|e| e.into_inner());
        Ok(match cached(&v) {
            Some(q) => q,
            None => {
                v.push(p.clone());
                p
            }
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

    /// The suite.
    pub fn suite(&self) -> Tls13Suite {
        self.suite
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
/// of the step before), the digests' inputs, its mask.
fn verifier_groups(
    alg: HashAlg,
    step: usize,
    (share, curve): (&[u8; 32], Curve),
    masks: &Masks,
    us: &[Vec<u8>],
) -> Vec<Vec<bool>> {
    if step == 0 {
        return vec![
            bytes_to_bits(share),
            bytes_to_bits(&masks[0]),
            curve_bit(curve),
        ];
    }
    let inputs: Vec<u8> = us.iter().flat_map(|u| digest_input(alg, u)).collect();
    vec![
        bytes_to_bits(&masks[step - 1]),
        bytes_to_bits(&inputs),
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
#[derive(Clone, Default)]
struct Hashes {
    hello: Option<Vec<u8>>,
    finished: Option<Vec<u8>>,
}

/// The inner digests `step` takes, from what the steps before revealed
/// (`revealed[s]`, see [`revealed_len`]) and the public hashes.
fn digests(
    suite: Tls13Suite,
    step: usize,
    revealed: &[Vec<u8>],
    hashes: &Hashes,
) -> Result<Vec<Vec<u8>>> {
    if revealed.len() < step {
        return Err(Error::Malformed("step out of order"));
    }
    let alg = suite.hash;
    let (sl, hl) = (alg.state_len(), alg.output_len());
    let u = |is: &[u8], label: &str, ctx: &[u8], len: usize| {
        digest_after_block(alg, is, &info(label, ctx, len))
    };
    Ok(match step {
        0 => Vec::new(),
        1 => {
            let hello = hashes
                .hello
                .as_ref()
                .ok_or(Error::Malformed("no ServerHello hash"))?;
            let is = &revealed[0];
            vec![
                u(is, "c hs traffic", hello, hl),
                u(is, "s hs traffic", hello, hl),
                u(is, "derived", &empty_hash(alg), hl),
            ]
        }
        2 => {
            let fin = hashes
                .finished
                .as_ref()
                .ok_or(Error::Malformed("no server Finished hash"))?;
            let is = &revealed[1][..sl];
            vec![
                u(is, "c ap traffic", fin, hl),
                u(is, "s ap traffic", fin, hl),
            ]
        }
        3 => {
            let (c, s) = revealed[2].split_at(sl);
            let kl = suite.key_len;
            vec![
                u(c, "key", &[], kl),
                u(s, "key", &[], kl),
                u(c, "iv", &[], IV_LEN),
                u(s, "iv", &[], IV_LEN),
            ]
        }
        _ => return Err(Error::Malformed("no such step")),
    })
}

fn check_hash(alg: HashAlg, h: &[u8]) -> Result<Vec<u8>> {
    if h.len() != alg.output_len() {
        return Err(Error::Malformed("hash of the wrong length"));
    }
    Ok(h.to_vec())
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
    suite: Tls13Suite,
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
    let alg = suite.hash;
    let group = |s: usize, g: usize, bytes: usize| -> Result<Vec<u8>> {
        match inputs[s].get(g) {
            Some(b) if b.len() == 8 * bytes => Ok(bits_to_bytes(b)),
            _ => Err(OTHER),
        }
    };
    let share: [u8; 32] = group(0, 0, 32)?.try_into().expect("32 bytes");
    let masks: Masks = [
        group(0, 1, shape(suite, 0).mask)?,
        group(1, 2, shape(suite, 1).mask)?,
        group(2, 2, shape(suite, 2).mask)?,
        group(3, 2, shape(suite, 3).mask)?,
    ];
    let hashes = Hashes {
        hello: Some(check_hash(alg, hello_hash)?),
        finished: Some(check_hash(alg, finished_hash)?),
    };
    let revealed: Vec<Vec<u8>> = revealed.iter().map(|r| bits_to_bytes(r)).collect();
    for (s, r) in revealed.iter().enumerate() {
        if Some(r.len()) != revealed_len(alg, s) {
            return Err(OTHER);
        }
    }
    for (step, given) in inputs.iter().enumerate() {
        let us = digests(suite, step, &revealed, &hashes)?;
        if verifier_groups(alg, step, (&share, curve), &masks, &us) != *given {
            return Err(Error::VerifierCheated(
                "a key-schedule input other than the protocol's (inner digests of the \
                 revealed values and the transcript hashes, or its masks reused as the \
                 steps require)",
            ));
        }
    }
    Ok(split_key_block(suite.key_len, &masks[3]))
}

// ---------------------------------------------------------------------
// The parties.

/// The verifier (garbler) of the TLS 1.3 key schedule.
pub struct Tls13Verifier {
    suite: Tls13Suite,
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
        let masks = [0, 1, 2, 3].map(|s| mask(shape(plans.suite, s).mask));
        Ok(Tls13Verifier {
            suite: plans.suite,
            circuits,
            share: None,
            hashes: Hashes::default(),
            masks,
            revealed: Vec::new(),
            next: 0,
        })
    }

    /// Preprocessing: tables, decoding and early input labels of every
    /// step, each step chained to the one before. A session that streams
    /// garbles chunk by chunk instead ([`Self::chain`], then
    /// [`VerifierCircuit::next_chunk`] on [`Self::circuits_mut`], then
    /// [`Self::early_inputs`]).
    pub fn preprocess(&mut self) -> Result<Vec<StepTables>> {
        (0..STEPS)
            .map(|step| {
                self.chain(step)?;
                let chunks = self.circuits[step].garble_all().into();
                let decoding = self.circuits[step].decoding()?;
                Ok((chunks, decoding, self.early_inputs(step)?))
            })
            .collect()
    }

    /// Preprocessing, once `step` is garbled: the labels of its verifier
    /// groups known ahead (its masks and constants); once per step.
    pub fn early_inputs(&mut self, step: usize) -> Result<Vec<u8>> {
        let bits = early_bits(step, &self.masks);
        self.circuits
            .get_mut(step)
            .ok_or(Error::Malformed("no such step"))?
            .early_inputs(early_groups(step), &bits)
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
        self.hashes.hello = Some(check_hash(self.suite.hash, hello_hash)?);
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
        self.hashes.finished = Some(check_hash(self.suite.hash, hash)?);
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
        let us = digests(self.suite, step, &self.revealed, &self.hashes)?;
        let early = early_groups(step);
        // Circuit group `g` is verifier group `g - 1` (the prover's is 0).
        let late: Vec<Vec<bool>> =
            verifier_groups(self.suite.hash, step, (&share.0, share.1), &self.masks, &us)
                .into_iter()
                .enumerate()
                .filter(|(i, _)| !early.contains(&(i + 1)))
                .map(|(_, g)| g)
                .collect();
        let msg = self.circuits[step].inputs(keys, flips, &late)?;
        if revealed_len(self.suite.hash, step).is_none() {
            self.next += 1;
        }
        Ok(msg)
    }

    /// The prover's labels of `step`'s revealed output: checked, then
    /// taken into the verifier's state.
    pub fn receive(&mut self, step: usize, labels: &[u8]) -> Result<()> {
        if step != self.next || revealed_len(self.suite.hash, step).is_none() {
            return Err(Error::Malformed("step out of order"));
        }
        let v = bits_to_bytes(&self.circuits[step].check_output(0, labels)?);
        if Some(v.len()) != revealed_len(self.suite.hash, step) {
            return Err(Error::Malformed("revealed output of the wrong length"));
        }
        self.revealed.push(v);
        self.next += 1;
        Ok(())
    }

    /// Both handshake traffic secrets, after step 1.
    pub fn handshake_secrets(&self) -> Option<HandshakeSecrets> {
        HandshakeSecrets::from_revealed(self.suite.hash, self.revealed.get(1)?)
    }

    /// The verifier's key shares (its masks of the key block).
    pub fn key_shares(&self) -> KeyShares {
        split_key_block(self.suite.key_len, &self.masks[3])
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
    suite: Tls13Suite,
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
        let circuits = prover_circuits(&plans.plans, first_instance, &tables, early_groups)?;
        Ok(Tls13Prover {
            suite: plans.suite,
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
        HandshakeSecrets::from_revealed(self.suite.hash, self.revealed.get(1)?)
    }

    /// The prover's key shares, after step 3.
    pub fn key_shares(&self) -> Result<KeyShares> {
        if self.kb.len() != key_block_len(self.suite.key_len) {
            return Err(Error::NotFinished);
        }
        Ok(split_key_block(self.suite.key_len, &self.kb))
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
