//! TLS 1.2 key derivation and Finished in 2PC with the "reduced" PRF:
//! only outer HMAC compressions are garbled (SHA-256 suites).
//!
//! Every circuit that computes the pads of a secret HMAC key (the premaster,
//! then the master secret) reveals the inner pad state `IS` to both parties
//! and keeps the outer state `OS` XOR-shared (the verifier's share is its
//! output mask). Both can then hash any public inner message from `IS`; the
//! **verifier** computes the inner digests `u` in the clear and encodes them
//! as public inputs, so the prover never holds an oracle `u ↦ F_OS(u)` it
//! could ask for a key-block output (see `docs/protocol/mpc-tls12-kdf.md`
//! for the argument: `A(i)` chain values and `IS` are revealed, secret outputs are
//! outer compressions on other inputs).
//!
//! The steps (one garbled circuit and one round trip each) and the
//! security argument: `docs/protocol/mpc-reduced-prf.md`.

use crate::kdf::tls12::{curve_bit, Curve, KeyShares, Randoms};
use rand_core::{CryptoRng, RngCore};
use std::sync::Arc;
use webproof_circuits::builder::const_bytes;
use webproof_circuits::hmac::HmacKey;
use webproof_circuits::sha2::{
    compress_public_schedule, hash_from_state, padding, public_schedule, HashAlg,
};
use webproof_circuits::tls::Tls12Suite;
use webproof_circuits::{bits_to_bytes, bytes_to_bits, Bit, Builder, Circuit};
use webproof_core::Block;
use webproof_mpc::error::{Error, Result};
use webproof_mpc::exec::{ProverCircuit, VerifierCircuit};
use webproof_mpc::plan::Plan;

const H: HashAlg = HashAlg::Sha256;
pub use webproof_mpc::exec::StepTables;

/// Steps of a session (circuits, garbling instances).
pub const STEPS: usize = 7;

/// Bytes of one outer compression's public input: the round addends
/// `K_t + W_t` of its block (`webproof_circuits::sha2::public_schedule`)
/// except rounds 8 to 15, whose words are the padding's and so constants
/// of the circuit.
pub(crate) const KW_BYTES: usize = 4 * 56;

/// The rounds whose addends are constants: the block's second half is the
/// padding of a 96-byte message.
const KW_CONST: core::ops::Range<usize> = 32..64;

/// `F(OS, u)`: the outer hash of HMAC from its state, with the block
/// `u ‖ padding` entered as its round addends `kw` ([`outer_schedule`]):
/// the message schedule is public, so the circuit has none (16,120 AND
/// instead of 21,362 per compression, for 1,792 bits the verifier encodes
/// instead of 256).
pub(crate) fn outer(b: &mut Builder, os: &[Bit], kw: &[Bit]) -> Vec<Bit> {
    let fixed = &public_schedule(H, &outer_block(&[0; 32]))[KW_CONST];
    let (head, tail) = kw.split_at(8 * KW_CONST.start);
    let all = [head, &const_bytes(fixed), tail].concat();
    compress_public_schedule(b, H, os, &all)
}

/// The outer hash's only block for the inner digest `u` (the key's block
/// came first).
fn outer_block(u: &[u8; 32]) -> Vec<u8> {
    [&u[..], &padding(H, 64 + 32)].concat()
}

/// The public input of [`outer`] for the inner digest `u`: the schedule
/// of [`outer_block`] without its constant rounds.
pub(crate) fn outer_schedule(u: &[u8; 32]) -> Vec<u8> {
    let mut kw = public_schedule(H, &outer_block(u));
    kw.drain(KW_CONST);
    kw
}

/// The public message of the server Finished's PRF: its label and the
/// hash of the handshake through the client Finished.
fn server_finished_seed(hash: &[u8]) -> Result<Vec<u8>> {
    if hash.len() != 32 {
        return Err(Error::Malformed("hash of the wrong length"));
    }
    Ok([&b"server finished"[..], hash].concat())
}

/// The server Finished's `verify_data` as a circuit for the proof after
/// the session (see the module docs): input group 0 is the prover's share
/// of `OS_ms`; `is_ms` (revealed during the session), the verifier's mask
/// `os_mask` (revealed after it) and the handshake `hash` are constants,
/// so everything public folds away. Output: the 12 bytes of `P(1)`, with
/// `A(1) = F(OS_ms, SHA-256(IS_ms ‖ seed))` and `P(1) = F(OS_ms,
/// SHA-256(IS_ms ‖ A(1) ‖ seed))` (`A(1)` stays inside the proof, so its
/// inner hash is computed there).
pub fn server_finished_circuit(
    is_ms: &[u8; 32],
    os_mask: &[u8; 32],
    hash: &[u8],
) -> Result<Circuit> {
    let seed = server_finished_seed(hash)?;
    let mut b = Builder::new();
    let share = b.input_bytes(32);
    let os = b.xor_words(&share, &const_bytes(os_mask));
    let u1 = inner_digest(is_ms, &seed);
    let a1 = outer(&mut b, &os, &const_bytes(&outer_schedule(&u1)));
    let msg = [a1, const_bytes(&seed)].concat();
    let u2 = hash_from_state(&mut b, H, &const_bytes(is_ms), 64, &msg);
    let p1 = hash_from_state(&mut b, H, &os, 64, &u2);
    b.output(&p1[..96]);
    Ok(b.finish())
}

/// [`server_finished_circuit`] in the clear, from the whole `OS_ms`: what
/// the prover checks the server's Finished against once the verifier's
/// mask is revealed, before it proves the same.
pub fn server_verify_data(os_ms: &[u8; 32], is_ms: &[u8; 32], hash: &[u8]) -> Result<[u8; 12]> {
    let seed = server_finished_seed(hash)?;
    let a1 = inner_digest(os_ms, &inner_digest(is_ms, &seed));
    let p1 = inner_digest(os_ms, &inner_digest(is_ms, &[&a1[..], &seed].concat()));
    Ok(p1[..12].try_into().expect("12 of 32 bytes"))
}

/// What a step's circuit takes and gives, in bytes.
struct Shape {
    /// Prover (and verifier) share.
    share: usize,
    /// Public inner digests known one step before the step's turn (its
    /// advance group, [`advance_groups`]), each entered as its outer
    /// block's schedule ([`KW_BYTES`] each).
    ahead: usize,
    /// Public inner digests known at the step's turn (the critical path).
    us: usize,
    /// Verifier masks.
    masks: usize,
}

fn shape(step: usize) -> Shape {
    let (share, ahead, us, masks) = match step {
        0 => (32, 0, 0, 32),
        1 | 2 | 5 => (32, 0, 1, 0),
        3 => (32, 1, 1, 32),
        4 => (32, 0, 2, 0),
        _ => (32, 2, 1, 40),
    };
    Shape {
        share,
        ahead,
        us,
        masks,
    }
}

/// The circuit of step `step` (0-based); step 0 serves either curve (its
/// last input group, one bit, selects: [`crate::kdf::tls12`]'s `premaster`).
/// Input groups: the prover's share, the verifier's, then the advance
/// digests, the critical digests and the masks where the step has them,
/// and the curve at step 0.
pub fn step_circuit(step: usize) -> Circuit {
    let s = shape(step);
    let mut b = Builder::new();
    let p = b.input_bytes(s.share);
    let v = b.input_bytes(s.share);
    let schedules = |b: &mut Builder, n: usize| -> Vec<Vec<Bit>> {
        if n == 0 {
            return Vec::new();
        }
        b.input_bytes(KW_BYTES * n)
            .chunks(8 * KW_BYTES)
            .map(<[Bit]>::to_vec)
            .collect()
    };
    let ahead = schedules(&mut b, s.ahead);
    let us = schedules(&mut b, s.us);
    let masks = if s.masks > 0 {
        b.input_bytes(s.masks)
    } else {
        Vec::new()
    };
    let pads = |b: &mut Builder, key: &[Bit], masks: &[Bit]| {
        let k = HmacKey::new(b, H, key);
        b.output(k.inner_state());
        let os = b.xor_words(k.outer_state(), masks);
        b.output(&os);
    };
    if step == 0 {
        let p256 = b.input(1)[0];
        let x = crate::kdf::tls12::premaster(&mut b, &p, &v, p256);
        pads(&mut b, &x, &masks);
        return b.finish();
    }
    let os = b.xor_words(&p, &v);
    let f: Vec<Vec<Bit>> = ahead
        .iter()
        .chain(&us)
        .map(|u| outer(&mut b, &os, u))
        .collect();
    match step {
        1 | 2 | 5 => b.output(&f[0]),
        3 => {
            let ms = [&f[0][..], &f[1][..128]].concat();
            pads(&mut b, &ms, &masks);
        }
        4 => b.output(&[&f[0][..], &f[1]].concat()),
        6 => {
            // f = [key block 1, client verify_data, key block 2].
            b.output(&f[1][..96]);
            let kb = [&f[0][..], &f[2][..64]].concat();
            let o = b.xor_words(&kb, &masks);
            b.output(&o);
        }
        _ => unreachable!("seven steps"),
    }
    b.finish()
}

/// Which output group a step reveals to both (every step reveals its
/// first; kept as a function so a step that reveals nothing stays
/// expressible).
fn revealed_group(step: usize) -> Option<usize> {
    (step < STEPS).then_some(0)
}

/// The plans of the seven steps (schedules only, shared by reference:
/// cloning is cheap).
#[derive(Clone)]
pub struct ReducedPlans {
    plans: Vec<Arc<Plan>>,
}

impl ReducedPlans {
    /// Build and plan the seven circuits (AES-128-GCM-SHA256 key block).
    pub fn new() -> Result<Self> {
        let plans = (0..STEPS)
            .map(|s| Plan::from_circuit(step_circuit(s)).map(Arc::new))
            .collect::<Result<_>>()?;
        Ok(ReducedPlans { plans })
    }

    /// The plans, built on the first call in this process and shared by
    /// every later one: they depend on nothing of a session, and building
    /// them (about 0.15 s here) would otherwise delay each session's first
    /// garbled table. A caller that comes while another builds them waits
    /// for that build instead of starting its own.
    pub fn shared() -> Result<Self> {
        static SHARED: std::sync::OnceLock<Result<ReducedPlans>> = std::sync::OnceLock::new();
        SHARED.get_or_init(Self::new).clone()
    }

    /// The plan of `step`.
    pub fn plan(&self, step: usize) -> Option<&Arc<Plan>> {
        self.plans.get(step)
    }

    /// AND gates per step.
    pub fn and_counts(&self) -> Vec<u64> {
        self.plans.iter().map(|p| p.and_count()).collect()
    }

    /// COTs the prover's share consumes at `step`.
    pub fn cots(&self, step: usize) -> usize {
        if chain_sources(step).is_empty() {
            8 * shape(step).share
        } else {
            0
        }
    }
}

/// Where the prover's share input of `step` was output, in input order:
/// (step, output group) pairs. From step 1 on the share is an earlier
/// step's output (`OS_pms` from step 0 at steps 1 to 3, `OS_ms` from step
/// 3 at steps 4 to 6), so the circuit is chained to it
/// (`webproof_mpc::exec`'s chained inputs): the prover feeds the labels it
/// evaluated there, with no COT and no correction, and the equality
/// between the steps holds by construction.
fn chain_sources(step: usize) -> &'static [(usize, usize)] {
    match step {
        0 => &[],
        1..=3 => &[(0, 1)],
        _ => &[(3, 1)],
    }
}

/// SHA-256 from the chaining state `state` after one block, over `msg`.
fn inner_digest(state: &[u8], msg: &[u8]) -> [u8; 32] {
    let mut st: [u32; 8] = core::array::from_fn(|i| {
        u32::from_be_bytes(state[4 * i..4 * i + 4].try_into().expect("4"))
    });
    let mut data = msg.to_vec();
    data.extend(webproof_circuits::sha2::padding(H, 64 + msg.len()));
    for blk in data.chunks(64) {
        sha2::compress256(
            &mut st,
            &[*sha2::digest::generic_array::GenericArray::from_slice(blk)],
        );
    }
    let mut out = [0u8; 32];
    for (i, w) in st.iter().enumerate() {
        out[4 * i..4 * i + 4].copy_from_slice(&w.to_be_bytes());
    }
    out
}

/// The public messages of a session's HMAC chains, `label ‖ seed` each:
/// the master secret's, the key expansion's, the client Finished's.
#[derive(Clone, Default)]
struct Seeds {
    ms: Vec<u8>,
    ke: Vec<u8>,
    cf: Vec<u8>,
}

impl Seeds {
    fn new(randoms: &Randoms<'_>, client_finished_hash: &[u8]) -> Result<Self> {
        if client_finished_hash.len() != 32 || randoms.session_hash.is_some_and(|h| h.len() != 32) {
            return Err(Error::Malformed("hash of the wrong length"));
        }
        let ms = match randoms.session_hash {
            Some(h) => [&b"extended master secret"[..], h].concat(),
            None => [
                &b"master secret"[..],
                &randoms.client[..],
                &randoms.server[..],
            ]
            .concat(),
        };
        Ok(Seeds {
            ms,
            ke: [
                &b"key expansion"[..],
                &randoms.server[..],
                &randoms.client[..],
            ]
            .concat(),
            cf: [&b"client finished"[..], client_finished_hash].concat(),
        })
    }
}

/// The values the steps revealed to both, by step: `IS_pms`, `A(1)`,
/// `A(2)` of the master secret, `IS_ms`, the key expansion's and the client
/// Finished's `A(1)`, the key expansion's `A(2)`, the client
/// `verify_data`. The inner digests are computed from them.
#[derive(Clone, Default)]
struct Chain {
    revealed: Vec<Vec<u8>>,
}

impl Chain {
    /// The inner digests of `step`'s advance group (`ahead`) or of its
    /// critical one (see the module docs' steps): the advance ones need
    /// the values revealed through step `step - 2`, the critical ones
    /// through `step - 1`.
    fn digests(&self, step: usize, s: &Seeds, ahead: bool) -> Result<Vec<[u8; 32]>> {
        let needed = match (step, ahead) {
            (0, _) => 0,
            (_, true) => step - 1,
            (_, false) => step,
        };
        if self.revealed.len() < needed {
            return Err(Error::Malformed("step out of order"));
        }
        let r = |i: usize| &self.revealed[i][..];
        let u = |is: &[u8], parts: &[&[u8]]| inner_digest(is, &parts.concat());
        Ok(match (step, ahead) {
            (1, false) => vec![u(r(0), &[&s.ms])],
            (2, false) => vec![u(r(0), &[r(1)])],
            (3, true) => vec![u(r(0), &[r(1), &s.ms])],
            (3, false) => vec![u(r(0), &[r(2), &s.ms])],
            (4, false) => vec![u(r(3), &[&s.ke]), u(r(3), &[&s.cf])],
            (5, false) => vec![u(r(3), &[&r(4)[..32]])],
            (6, true) => vec![
                u(r(3), &[&r(4)[..32], &s.ke]),
                u(r(3), &[&r(4)[32..], &s.cf]),
            ],
            (6, false) => vec![u(r(3), &[r(5), &s.ke])],
            (0..=6, _) => vec![],
            _ => return Err(Error::Malformed("no such step")),
        })
    }

    /// Take step `step`'s revealed output `v`; the `verify_data` it
    /// carries (step 6).
    fn absorb(&mut self, step: usize, v: Vec<u8>) -> Result<Option<[u8; 12]>> {
        if step != self.revealed.len() || step >= STEPS {
            return Err(Error::Malformed("step out of order"));
        }
        let want = match step {
            4 => 64,
            6 => 12,
            _ => 32,
        };
        if v.len() != want {
            return Err(Error::Malformed("revealed output of the wrong length"));
        }
        let vd = (step == 6).then(|| v.as_slice().try_into().expect("12 bytes"));
        self.revealed.push(v);
        Ok(vd)
    }
}

/// The verifier's masks: of `OS_pms`, of `OS_ms`, and of the key block
/// (its key shares, 40 bytes).
type Masks = [Vec<u8>; 3];

/// The verifier's share of `step`: its premaster share at step 0, then
/// the mask the shared `OS` was output under before (`OS_pms` at steps 1
/// to 3, `OS_ms` at 4 to 6).
fn own_share(step: usize, premaster: &[u8; 32], masks: &Masks) -> Vec<u8> {
    match step {
        0 => premaster.to_vec(),
        1..=3 => masks[0].clone(),
        _ => masks[1].clone(),
    }
}

/// The mask `step`'s shared output is under, if it has one.
fn out_mask(step: usize, masks: &Masks) -> Option<&[u8]> {
    match step {
        0 => Some(&masks[0]),
        3 => Some(&masks[1]),
        6 => Some(&masks[2]),
        _ => None,
    }
}

/// The verifier's input groups of `step` in circuit order after the
/// prover's share ([`step_circuit`]): its share, the advance digests
/// (`ahead`) and the critical ones (`us`) as their outer blocks'
/// schedules, the mask the step outputs under, the curve at step 0.
fn verifier_groups(
    step: usize,
    (share, curve): (&[u8; 32], Curve),
    masks: &Masks,
    ahead: &[[u8; 32]],
    us: &[[u8; 32]],
) -> Vec<Vec<bool>> {
    let kw = |us: &[[u8; 32]]| -> Vec<bool> {
        bytes_to_bits(&us.iter().flat_map(outer_schedule).collect::<Vec<u8>>())
    };
    let sh = shape(step);
    let mut groups = vec![bytes_to_bits(&own_share(step, share, masks))];
    if sh.ahead > 0 {
        groups.push(kw(ahead));
    }
    if sh.us > 0 {
        groups.push(kw(us));
    }
    if let Some(m) = out_mask(step, masks) {
        groups.push(bytes_to_bits(m));
    }
    if step == 0 {
        groups.push(curve_bit(curve));
    }
    groups
}

/// The circuit groups of `step` the verifier encodes in preprocessing:
/// its masks, drawn when it garbles (its share at steps 1 to 6 is the
/// mask an earlier step output under, `own_share`). Only the premaster
/// share, the inner digests and the curve wait for the session.
pub fn early_groups(step: usize) -> &'static [usize] {
    match step {
        0 => &[2],
        3 | 6 => &[1, 4],
        _ => &[1],
    }
}

/// The circuit group of `step` the verifier sends one step ahead, online
/// ([`ReducedVerifier::advance`]): the inner digests known once step
/// `step - 2` revealed its output (see the module docs' steps).
pub fn advance_groups(step: usize) -> &'static [usize] {
    match step {
        3 | 6 => &[2],
        _ => &[],
    }
}

/// The bits of [`early_groups`]`(step)`, in group order.
fn early_bits(step: usize, masks: &Masks) -> Vec<Vec<bool>> {
    let mut groups = Vec::new();
    if step > 0 {
        groups.push(bytes_to_bits(&own_share(step, &[0; 32], masks)));
    }
    if let Some(m) = out_mask(step, masks) {
        groups.push(bytes_to_bits(m));
    }
    groups
}

/// The prover's check, after the session, of the verifier's revealed
/// inputs of the seven steps against what they must be: the inner digests
/// `SHA-256(IS ‖ message)` of the revealed chain values (`revealed[s]`,
/// the prover's decoding of step `s`'s revealed output)
/// and the public messages, the negotiated `curve`, and each mask the
/// same wherever the protocol reuses it. `inputs[s]` are the verifier's
/// groups of step `s`, in group
/// order without the prover's. The audit separately checks that these
/// values are what the verifier garbled with; together, a verifier that
/// asked a step for another digest than the protocol's (e.g. a key-block
/// block where an `A(i)` is revealed) is caught. Returns the verifier's
/// key shares its masks fix.
pub fn check_verifier_inputs(
    curve: Curve,
    randoms: &Randoms<'_>,
    client_finished_hash: &[u8],
    inputs: &[Vec<Vec<bool>>],
    revealed: &[Vec<bool>],
) -> Result<KeyShares> {
    const WRONG: Error = Error::VerifierCheated(
        "a key-derivation input other than the protocol's (inner digests of the \
         revealed values, or its masks reused as the steps require)",
    );
    if inputs.len() != STEPS || revealed.len() != STEPS {
        return Err(Error::Malformed("inputs of another key derivation"));
    }
    let group = |s: usize, g: usize, bytes: usize| -> Result<Vec<u8>> {
        match inputs[s].get(g) {
            Some(b) if b.len() == 8 * bytes => Ok(bits_to_bytes(b)),
            _ => Err(Error::Malformed("inputs of another key derivation")),
        }
    };
    let share: [u8; 32] = group(0, 0, 32)?.try_into().expect("32 bytes");
    let masks: Masks = [group(0, 1, 32)?, group(3, 3, 32)?, group(6, 3, 40)?];
    let seeds = Seeds::new(randoms, client_finished_hash)?;
    let mut chain = Chain::default();
    for step in 0..STEPS {
        let ahead = chain.digests(step, &seeds, true)?;
        let us = chain.digests(step, &seeds, false)?;
        if verifier_groups(step, (&share, curve), &masks, &ahead, &us) != inputs[step] {
            return Err(WRONG);
        }
        if revealed_group(step).is_some() {
            chain.absorb(step, bits_to_bytes(&revealed[step]))?;
        }
    }
    Ok(KeyShares::split(Tls12Suite::AES_128_GCM_SHA256, &masks[2]))
}

/// The verifier of a reduced-PRF session.
pub struct ReducedVerifier {
    circuits: Vec<VerifierCircuit>,
    /// The premaster share and the negotiated curve, once bound.
    share: Option<([u8; 32], Curve)>,
    seeds: Seeds,
    masks: Masks,
    chain: Chain,
    client_vd: Option<[u8; 12]>,
    /// The step whose inputs (or revealed labels) are due.
    next: usize,
}

impl ReducedVerifier {
    /// The session's circuits under `delta`, before any input is known:
    /// [`Self::preprocess`] can garble them ahead of the handshake, and
    /// [`Self::bind`] supplies the inputs once the key exchange is done.
    pub fn garble(
        plans: &ReducedPlans,
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
        let masks = [mask(32), mask(32), mask(32 + 8)];
        Ok(ReducedVerifier {
            circuits,
            share: None,
            seeds: Seeds::default(),
            masks,
            chain: Chain::default(),
            client_vd: None,
            next: 0,
        })
    }

    /// The verifier's premaster share (little-endian) on the negotiated
    /// `curve`, the public randoms and the client Finished hash; once,
    /// before step 0's inputs.
    pub fn bind(
        &mut self,
        share_le: &[u8; 32],
        curve: Curve,
        randoms: &Randoms<'_>,
        client_finished_hash: &[u8],
    ) -> Result<()> {
        if self.share.is_some() {
            return Err(Error::Malformed("inputs bound twice"));
        }
        self.seeds = Seeds::new(randoms, client_finished_hash)?;
        self.share = Some((*share_le, curve));
        Ok(())
    }

    /// Preprocessing: chunks, decoding and early input labels of every
    /// step.
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

    /// Before garbling `step` (once the steps it takes the prover's share
    /// from are garbled): chain its prover input to their outputs (nothing
    /// to do at step 0).
    pub fn chain(&mut self, step: usize) -> Result<()> {
        let sources = chain_sources(step);
        if sources.is_empty() {
            return Ok(());
        }
        let mut zero = Vec::new();
        for &(s, g) in sources {
            zero.extend_from_slice(self.circuits[s].garbler().output_zero_labels(g)?);
        }
        self.circuits
            .get_mut(step)
            .ok_or(Error::Malformed("no such step"))?
            .chain_prover_input(&zero)
    }

    /// Preprocessing: the labels of `step`'s inputs known before the
    /// session (its masks), for [`ReducedProver::new`]; once per step.
    pub fn early_inputs(&mut self, step: usize) -> Result<Vec<u8>> {
        let bits = early_bits(step, &self.masks);
        self.circuits
            .get_mut(step)
            .ok_or(Error::Malformed("no such step"))?
            .early_inputs(early_groups(step), &bits)
    }

    /// The answer to the prover's flips at `step`.
    pub fn inputs(&mut self, step: usize, keys: &[Block], flips: &[u8]) -> Result<Vec<u8>> {
        if step != self.next || step >= STEPS {
            return Err(Error::Malformed("step out of order"));
        }
        let share = self
            .share
            .ok_or(Error::Malformed("inputs before the key exchange"))?;
        let ahead = self.chain.digests(step, &self.seeds, true)?;
        let us = self.chain.digests(step, &self.seeds, false)?;
        let sent = [early_groups(step), advance_groups(step)].concat();
        // Circuit group `g` is verifier group `g - 1` (the prover's is 0).
        let groups: Vec<Vec<bool>> =
            verifier_groups(step, (&share.0, share.1), &self.masks, &ahead, &us)
                .into_iter()
                .enumerate()
                .filter(|(i, _)| !sent.contains(&(i + 1)))
                .map(|(_, g)| g)
                .collect();
        let msg = self.circuits[step].inputs(keys, flips, &groups)?;
        if revealed_group(step).is_none() {
            self.next += 1;
        }
        Ok(msg)
    }

    /// The labels of `step`'s advance group ([`advance_groups`]), once the
    /// step before it has its inputs: sent right after them, so they cross
    /// the link while the prover evaluates that step. `None` for a step
    /// without one.
    pub fn advance(&mut self, step: usize) -> Result<Option<Vec<u8>>> {
        let groups = advance_groups(step);
        if groups.is_empty() {
            return Ok(None);
        }
        if step != self.next + 1 || step >= STEPS {
            return Err(Error::Malformed("step out of order"));
        }
        let ahead = self.chain.digests(step, &self.seeds, true)?;
        let kw: Vec<u8> = ahead.iter().flat_map(outer_schedule).collect();
        Ok(Some(
            self.circuits[step].early_inputs(groups, &[bytes_to_bits(&kw)])?,
        ))
    }

    /// The prover's labels of step `step`'s revealed output: checked, then
    /// taken into the verifier's state.
    pub fn receive(&mut self, step: usize, labels: &[u8]) -> Result<()> {
        if step != self.next {
            return Err(Error::Malformed("step out of order"));
        }
        let g = revealed_group(step).ok_or(Error::Malformed("nothing revealed at this step"))?;
        let c = self
            .circuits
            .get(step)
            .ok_or(Error::Malformed("no such step"))?;
        let v = bits_to_bytes(&c.check_output(g, labels)?);
        if let Some(vd) = self.chain.absorb(step, v)? {
            self.client_vd = Some(vd);
        }
        self.next += 1;
        Ok(())
    }

    /// The verifier's key shares (its masks).
    pub fn key_shares(&self) -> KeyShares {
        KeyShares::split(Tls12Suite::AES_128_GCM_SHA256, &self.masks[2])
    }

    /// The client `verify_data`, after step 6.
    pub fn client_verify_data(&self) -> Option<[u8; 12]> {
        self.client_vd
    }

    /// The master secret's inner pad state `IS_ms` (revealed at step 3)
    /// and the verifier's mask of its outer state `OS_ms`: with the
    /// prover's share of `OS_ms`, what [`server_finished_circuit`] needs.
    pub fn master_secret_pads(&self) -> Option<([u8; 32], [u8; 32])> {
        let is: [u8; 32] = self.chain.revealed.get(3)?.as_slice().try_into().ok()?;
        let mask: [u8; 32] = self.masks[1].as_slice().try_into().ok()?;
        Some((is, mask))
    }

    /// The step circuits (for the consistency proof: 0-labels, `Δ`).
    pub fn circuits(&self) -> &[VerifierCircuit] {
        &self.circuits
    }

    /// The step circuits, to garble chunk by chunk
    /// ([`VerifierCircuit::next_chunk`]) instead of [`Self::preprocess`].
    pub fn circuits_mut(&mut self) -> &mut [VerifierCircuit] {
        &mut self.circuits
    }
}

/// The prover of a reduced-PRF session.
pub struct ReducedProver {
    circuits: Vec<ProverCircuit>,
    tables: Vec<StepTables>,
    share: [u8; 32],
    os: Vec<u8>,
    kb: Vec<u8>,
    /// `IS_ms`, revealed at step 3.
    is_ms: Vec<u8>,
    client_vd: Option<[u8; 12]>,
    /// The step whose flips (or evaluation) are due.
    next: usize,
}

/// The prover's circuits of a session's steps, one per plan, each with
/// the early groups of its preprocessing (`tables`, one per step) taken.
pub(crate) fn prover_circuits(
    plans: &[Arc<Plan>],
    first_instance: u64,
    tables: &[StepTables],
    early_groups: fn(usize) -> &'static [usize],
) -> Result<Vec<ProverCircuit>> {
    if tables.len() != plans.len() {
        return Err(Error::Malformed("preprocessing for another session"));
    }
    plans
        .iter()
        .zip(tables)
        .enumerate()
        .map(|(i, (p, (_, _, early)))| {
            let mut c = ProverCircuit::new(Arc::clone(p), first_instance + i as u64, 0)?;
            c.receive_early(early_groups(i), early)?;
            Ok(c)
        })
        .collect()
}

impl ReducedProver {
    /// A session with the prover's premaster share and the preprocessing.
    pub fn new(
        plans: &ReducedPlans,
        first_instance: u64,
        share_le: &[u8; 32],
        tables: Vec<StepTables>,
    ) -> Result<Self> {
        let circuits = prover_circuits(&plans.plans, first_instance, &tables, early_groups)?;
        Ok(ReducedProver {
            circuits,
            tables,
            share: *share_le,
            os: Vec::new(),
            kb: Vec::new(),
            is_ms: Vec::new(),
            client_vd: None,
            next: 0,
        })
    }

    /// The flips of the prover's share for `step`: from step 1 on none
    /// (`macs` empty), the share being the labels this prover evaluated at
    /// the steps that output it (chained).
    pub fn flips(&mut self, step: usize, macs: &[Block]) -> Result<Vec<u8>> {
        if step != self.next || step >= STEPS {
            return Err(Error::Malformed("step out of order"));
        }
        let own = match step {
            0 => self.share.to_vec(),
            _ => self.os.clone(),
        };
        let c = self
            .circuits
            .get_mut(step)
            .ok_or(Error::Malformed("no such step"))?;
        if 8 * own.len() != c.input_len() {
            return Err(Error::Malformed("step out of order"));
        }
        let sources = chain_sources(step);
        if sources.is_empty() {
            return c.flips(macs, &bytes_to_bits(&own));
        }
        if !macs.is_empty() {
            return Err(Error::Malformed("COTs for a chained step"));
        }
        let mut labels = Vec::new();
        for &(s, g) in sources {
            labels.extend_from_slice(self.circuits[s].evaluator().output_labels(g)?);
        }
        self.circuits[step].chain_prover_input(&labels, &bytes_to_bits(&own))?;
        Ok(Vec::new())
    }

    /// Take the labels of `step`'s advance group
    /// ([`ReducedVerifier::advance`]), after the step before it was
    /// evaluated and before `step`'s inputs.
    pub fn receive_advance(&mut self, step: usize, msg: &[u8]) -> Result<()> {
        let groups = advance_groups(step);
        if step != self.next || groups.is_empty() {
            return Err(Error::Malformed("advance inputs out of order"));
        }
        self.circuits[step].receive_early(groups, msg)
    }

    /// Evaluate `step` with the verifier's input message; the labels of the
    /// revealed output to send back, if any.
    pub fn evaluate(&mut self, step: usize, msg: &[u8]) -> Result<Option<Vec<u8>>> {
        if step != self.next || step >= STEPS {
            return Err(Error::Malformed("step out of order"));
        }
        let c = self
            .circuits
            .get_mut(step)
            .ok_or(Error::Malformed("no such step"))?;
        c.receive_inputs(msg)?;
        let (chunks, decoding, _) = &self.tables[step];
        c.feed_received(chunks)?;
        c.finish()?;
        let out = c.decode(decoding)?;
        let bytes: Vec<Vec<u8>> = out.iter().map(|g| bits_to_bytes(g)).collect();
        match step {
            0 => self.os = bytes[1].clone(),
            3 => {
                self.is_ms = bytes[0].clone();
                self.os = bytes[1].clone();
            }
            6 => {
                self.client_vd = Some(bytes[0].as_slice().try_into().expect("12 bytes"));
                self.kb = bytes[1].clone();
            }
            _ => {}
        }
        self.next += 1;
        revealed_group(step)
            .map(|g| self.circuits[step].output_message(g))
            .transpose()
    }

    /// The prover's key shares, after step 6.
    pub fn key_shares(&self) -> Result<KeyShares> {
        if self.kb.len() != 40 {
            return Err(Error::NotFinished);
        }
        Ok(KeyShares::split(Tls12Suite::AES_128_GCM_SHA256, &self.kb))
    }

    /// The client `verify_data`, after step 6.
    pub fn client_verify_data(&self) -> Option<[u8; 12]> {
        self.client_vd
    }

    /// `IS_ms` and the prover's share of `OS_ms`, after step 4 (see
    /// [`ReducedVerifier::master_secret_pads`]).
    pub fn master_secret_pads(&self) -> Option<([u8; 32], [u8; 32])> {
        let is: [u8; 32] = self.is_ms.as_slice().try_into().ok()?;
        let os: [u8; 32] = self.os.as_slice().try_into().ok()?;
        (self.next > 3).then_some((is, os))
    }

    /// The step circuits (for the consistency proof: active labels).
    pub fn circuits(&self) -> &[ProverCircuit] {
        &self.circuits
    }
}
