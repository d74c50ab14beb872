//! The consistency proof of the session's garbled circuits
//! (garble-then-prove, `webproof_mpc::consistency`), run inside the proof
//! of the response ([`crate::response`]): what the sessions retain of
//! every circuit, the verifier's reveal of its input bits, the import of
//! every circuit's input and output labels as authenticated bits, the
//! equalities between circuits, and the prover's audit of the garbling
//! once `Δ` is revealed. No circuit is evaluated again in the proof: an
//! output label authenticates the value the circuit computed, since the
//! label of another value and the one honest evaluation gives would add up
//! to `Δ`, which would break the proof anyway
//! (`docs/protocol/consistency.md`, "Why no circuit is proven again"). For a
//! 1 KB request that saves 0.21 s of the proof on the field's links, 69 KB
//! of the prover's upload and about 40 MiB of either party's peak memory.
//!
//! # What is retained
//! Per garbled circuit, in proof order (the key derivation's steps, then
//! the records by id, [`crate::rec`]): the prover keeps its active input
//! and output labels, its input bits, the decoded outputs, the digest of
//! the tables and the decoding information
//! (`webproof_mpc::consistency::EvaluatedRun`); the verifier keeps the
//! 0-labels of the same wires and the bits of its own input groups
//! (`GarbledRun`). Labels and digests, not tables: 16 bytes per input and
//! output wire (a record of `n` bytes has `8·n` keystream output wires:
//! 128 KB per KB of request per party). The prover's record also holds
//! its circuit's plan (shared with the session's for the key derivation,
//! one per record otherwise), which the audit garbles again; rebuilding
//! it at the audit instead would trade that memory for planning time.
//!
//! Per OLE batch (the ECtF's two; the client Finished's M2A of the GHASH
//! key's powers and each request record's M2A of its hidden ciphertext,
//! answered ahead, whose flips are all zero and never sent)
//! the prover logs its COT
//! MACs, its flips and the verifier's answer ([`OleLog`]);
//! the verifier keeps its inputs (`OleSender::inputs`), revealed with its
//! input bits and checked in the prover's audit.
//!
//! # What is tied together
//! - reduced PRF: the `OS_pms` share output by step 0 is the prover's
//!   input of steps 1 to 3; the
//!   `OS_ms` share output by step 3 the prover's input of steps 4 to 6
//!   (chained: those inputs are the outputs' labels, so an honest
//!   garbling makes each hold and the audit checks the garbling);
//! - full PRF: the pad-state share output by the key derivation is the
//!   prover's input of both Finished;
//! - every record's prover input (the client's key ‖ IV share) is the
//!   matching bits of the key-block share output by the key derivation:
//!   its labels are those outputs' (the record circuit is chained to
//!   them, `webproof_mpc::exec::VerifierCircuit::chain_prover_input`), so
//!   an honest garbling makes this hold and the audit checks the garbling;
//!   the proof asserts it all the same;
//! - the key-block labels the response statement imports are those
//!   outputs;
//! - the server Finished's record, recorded and never run in 2PC,
//!   decrypts under the statement's server key bits (the key derivation's
//!   outputs) to `14 00 00 0c` and the `verify_data`, and carries its
//!   AES-GCM tag under that key ([`FinishedCheck`],
//!   `webproof_tlsproof::assert_finished`); under the reduced PRF the
//!   `verify_data` is what `crate::kdf::reduced::server_finished_circuit`
//!   computes in the proof from step 3's `OS_ms` share, the revealed
//!   `IS_ms`, the verifier's mask and the handshake hash, under the full
//!   PRF the value its 2PC step revealed to both.
//!
//! Under ChaCha20-Poly1305 each record has two circuits (record, tag) in
//! proof order; the record circuit's key ‖ IV input is tied as above, the
//! verifier's revealed inputs of both are checked
//! (`crate::rec::chacha::check_verifier_inputs`, `check_tag_inputs`),
//! and its OLE streams (bitwise OLEs over `2^130 − 5`) reveal no input:
//! the prover replays them on the elements an honest verifier had, from
//! the record circuit's revealed `t` (`crate::rec::chacha::audit_oles`).
//!
//! The verifier's inputs are revealed (public in the proof), so the
//! statements fix them to what it garbled with. The prover checks them
//! against what the protocol makes them ([`ProverRetained::check_inputs`]:
//! public groups and inner digests from its own view of the session,
//! masks reused across steps, each record's key share and explicit nonce),
//! and its audit checks the garbling against them.
use crate::error::{Error, Result};
use crate::hello::finished;
use crate::kdf::reduced::{self, STEPS};
use crate::kdf::tls12::{self, Curve, KeyShares, Randoms, Tls12Config};
use crate::kdf::{is_reduced, key_outputs};
use crate::rec::{chacha, gcm};
use crate::rec::{key_iv, key_iv_wires, RecSpec};
use crate::response::{mpc_err, zk_err};
use webproof_circuits::tls::Tls12Suite;
use webproof_circuits::{bits_to_bytes, bytes_to_bits};
use webproof_core::cot::{RandomCotReceiver, RandomCotSender};
use webproof_core::{Block, Io};
use webproof_mpc::consistency::{self, EvaluatedRun, GarbledRun, OleTranscript};
use webproof_mpc::field::{Curve25519Base, Gf128, P256Base};
use webproof_mpc::ole::OleField;
use webproof_tls::record::content_type;
use webproof_tlsproof::ZkParty;
use webproof_zk::{Prover, ProverBit, Verifier, VerifierBit};

/// What both parties derive the list of circuits and their wiring from:
/// the negotiated configuration and the request's record lengths.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Group, suite, EMS.
    pub cfg: Tls12Config,
    /// Plaintext length of each request record.
    pub request_lens: Vec<usize>,
}

impl Shape {
    fn steps(&self) -> usize {
        if is_reduced(&self.cfg) {
            STEPS
        } else {
            3
        }
    }

    fn records(&self) -> Vec<RecSpec> {
        RecSpec::all(&self.request_lens)
    }

    /// Circuits of the session.
    pub fn len(&self) -> usize {
        self.steps() + self.per_record() * self.records().len()
    }

    /// Circuits per record: ChaCha20-Poly1305's record circuit and tag
    /// circuit, AES-GCM's one.
    fn per_record(&self) -> usize {
        crate::rec::circuits_per_record(self.cfg.suite)
    }

    /// Whether the records are ChaCha20-Poly1305's.
    fn chacha(&self) -> bool {
        crate::rec::is_chacha(self.cfg.suite)
    }

    /// The run of record `j`'s record circuit (its tag circuit's is next
    /// under ChaCha20-Poly1305).
    fn record_run(&self, j: usize) -> usize {
        self.steps() + self.per_record() * j
    }

    /// Whether the session has no circuit (never: kept for clippy's sake).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Prover shares that one step outputs and a later one takes.
    fn links(&self) -> Vec<(Wire, Wire)> {
        let mut v = Vec::new();
        if is_reduced(&self.cfg) {
            for s in 1..4 {
                v.push((Wire::output(0, 1), Wire::input(s, 0)));
            }
            for s in 4..STEPS {
                v.push((Wire::output(3, 1), Wire::input(s, 0)));
            }
        } else {
            for s in [1, 2] {
                v.push((Wire::output(0, 1), Wire::input(s, 0)));
            }
        }
        v
    }

    /// The key-block share's wires, in key-block order (`client_key ‖
    /// server_key ‖ client_iv ‖ server_iv`).
    fn key_block(&self) -> Vec<Wire> {
        key_outputs(is_reduced(&self.cfg))
            .iter()
            .map(|&(step, group)| Wire::output(step, group))
            .collect()
    }
}

/// A run of wires of one circuit's group.
#[derive(Clone, Debug)]
struct Wire {
    run: usize,
    output: bool,
    group: usize,
}

impl Wire {
    fn input(run: usize, group: usize) -> Self {
        Wire {
            run,
            output: false,
            group,
        }
    }

    fn output(run: usize, group: usize) -> Self {
        Wire {
            output: true,
            ..Wire::input(run, group)
        }
    }
}

/// One circuit's authenticated wires, on either side.
struct Wires<B> {
    inputs: Vec<Vec<B>>,
    outputs: Vec<Vec<B>>,
}

fn gather<B: Copy>(runs: &[Wires<B>], wires: &[Wire]) -> Result<Vec<B>> {
    const WHAT: &str = "wires of another session";
    let mut out = Vec::new();
    for w in wires {
        let run = runs.get(w.run).ok_or(Error::Malformed(WHAT))?;
        let groups = if w.output { &run.outputs } else { &run.inputs };
        let g = groups.get(w.group).ok_or(Error::Malformed(WHAT))?;
        out.extend_from_slice(g);
    }
    Ok(out)
}

/// Both sides of every equality the session implies, concatenated (one
/// assertion for all): the links between steps, each record's key ‖ IV
/// input against the key block, and the response statement's key-block
/// bits `key_bits` against the key derivation's outputs.
fn equalities<B: Copy>(
    shape: &Shape,
    runs: &[Wires<B>],
    key_bits: &[B],
) -> Result<(Vec<B>, Vec<B>)> {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    let mut tie = |x: Vec<B>, y: Vec<B>| {
        if x.len() != y.len() {
            return Err(Error::Malformed("equal wires of different lengths"));
        }
        a.extend(x);
        b.extend(y);
        Ok(())
    };
    for (x, y) in shape.links() {
        tie(gather(runs, &[x])?, gather(runs, &[y])?)?;
    }
    let kb = gather(runs, &shape.key_block())?;
    let client = key_iv_wires(&kb, shape.cfg.suite.key_len, shape.cfg.suite.iv_len)?;
    for j in 0..shape.records().len() {
        // The client key ‖ IV: every record in 2PC is the client's. Its
        // labels are the key derivation's (chained), so this holds by
        // construction for an honest garbling; the audit checks that.
        let own = gather(runs, &[Wire::input(shape.record_run(j), 0)])?;
        tie(own, client.clone())?;
    }
    tie(key_bits.to_vec(), kb)?;
    Ok((a, b))
}

/// The public values the verifier's inputs must be computed from, as the
/// prover computed them itself: the randoms from the ClientHello it wrote
/// and the ServerHello it received, the handshake hashes over the
/// messages it wrote and received (the client Finished from the
/// `verify_data` computed in 2PC); and the server Finished as the prover
/// received and decrypted it, for its own check and the proof's.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Publics {
    /// ClientHello.random.
    pub client_random: [u8; 32],
    /// ServerHello.random.
    pub server_random: [u8; 32],
    /// Hash of the handshake through the ClientKeyExchange: the client
    /// Finished's, and the session hash under EMS.
    pub client_finished_hash: Vec<u8>,
    /// Hash of the handshake through the client Finished.
    pub server_finished_hash: Vec<u8>,
    /// The server's Finished record as received: explicit nonce (AES-GCM),
    /// ciphertext, tag (40 bytes; 32 for ChaCha20-Poly1305).
    pub server_finished_record: Vec<u8>,
    /// Its plaintext, decrypted (tag checked) once the server key was
    /// known.
    pub server_finished_plaintext: Vec<u8>,
    /// The server `verify_data` the full PRF computed in 2PC (`None`
    /// under the reduced PRF, whose proof computes it).
    pub server_verify_data: Option<[u8; 12]>,
}

/// What the proof's check of the server Finished takes, each party from
/// its own view: the Finished record (the verifier's recording; the
/// prover's as received) and where its `verify_data` comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FinishedCheck {
    /// The `verify_data`.
    pub vd: FinishedVd,
    /// The record's payload: explicit nonce (AES-GCM), ciphertext, tag
    /// (40 bytes; 32 for ChaCha20-Poly1305).
    pub record: Vec<u8>,
}

/// The server Finished's `verify_data` in the proof.
///
/// Under the reduced PRF it is computed there from step 3's `OS_ms` share
/// with `IS_ms` (step 3's revealed output: the verifier checked its
/// labels, the prover decoded it), the verifier's mask of `OS_ms` (its own
/// input; the prover's copy from the reveal) and the hash of the handshake
/// through the client Finished (each from its own transcript, the client
/// Finished from the `verify_data` computed in 2PC). The hash and `IS_ms`
/// are constants the circuit folds, so a party holding other values
/// evaluates another circuit and the proof fails out of step, as it fails
/// the assertion for another record or mask. Under the full PRF it is
/// the value the session's 2PC step revealed to both (the verifier
/// checked its labels).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FinishedVd {
    /// Reduced PRF.
    Reduced {
        /// `IS_ms`.
        is_ms: [u8; 32],
        /// The verifier's mask of `OS_ms`.
        os_mask: [u8; 32],
        /// Hash of the handshake through the client Finished.
        hash: Vec<u8>,
    },
    /// Full PRF.
    Revealed([u8; 12]),
}

/// The server's key in the proof: its authenticated bits (the key
/// derivation's output XOR the verifier's revealed mask) and its public IV.
pub(crate) struct ServerKey<'a, B> {
    pub key: &'a [B],
    pub iv: &'a [u8],
}

/// The check, in the proof, that the server Finished record decrypts under
/// the server key to the header and the `verify_data` of [`FinishedVd`],
/// and carries the suite's AEAD tag under that key
/// (`webproof_tlsproof::assert_finished`).
async fn finished_statement<P: ZkParty<Bit = B>, B: Copy>(
    zk: &mut P,
    runs: &[Wires<B>],
    check: &FinishedCheck,
    server: &ServerKey<'_, B>,
) -> Result<()> {
    let r = &check.record;
    // The record layout follows from the key and IV lengths the key
    // derivation output (a 12-byte IV is ChaCha20-Poly1305's only).
    let suite = match (server.key.len(), server.iv.len()) {
        (128, 4) => Tls12Suite::AES_128_GCM_SHA256,
        (256, 4) => Tls12Suite::AES_256_GCM_SHA384,
        (256, 12) => Tls12Suite::CHACHA20_POLY1305_SHA256,
        _ => return Err(Error::Malformed("a server key of the wrong length")),
    };
    if r.len() != crate::rec::server_finished_len(suite) {
        return Err(Error::Malformed("a server Finished of the wrong length"));
    }
    let vd = match &check.vd {
        FinishedVd::Reduced {
            is_ms,
            os_mask,
            hash,
        } => {
            let circuit =
                reduced::server_finished_circuit(is_ms, os_mask, hash).map_err(mpc_err)?;
            let share = gather(runs, &[Wire::output(3, 1)])?;
            zk.eval(&circuit, &[&share])
                .await
                .map_err(zk_err)?
                .pop()
                .ok_or(Error::Malformed("the Finished circuit's output"))?
        }
        FinishedVd::Revealed(vd) => bytes_to_bits(vd)
            .into_iter()
            .map(|b| zk.constant(b))
            .collect(),
    };
    let aead = crate::rec::aead(suite);
    let (record, tag) = crate::rec::sealed(suite, 0, content_type::HANDSHAKE, r)
        .ok_or(Error::Malformed("a server Finished of the wrong length"))?;
    webproof_tlsproof::assert_finished(zk, aead, server.key, server.iv, &record, &tag, &vd)
        .await
        .map_err(zk_err)
}

/// The prover's records of the session's circuits, in proof order.
#[derive(Clone)]
pub struct ProverRetained {
    /// The circuits' list and wiring.
    pub shape: Shape,
    /// What the verifier's public inputs must be.
    pub publics: Publics,
    /// One per circuit.
    pub runs: Vec<EvaluatedRun>,
    /// The OLE batches as the prover saw them.
    pub oles: OleLog,
}

/// The verifier's records of the session's circuits, in proof order.
#[derive(Clone)]
pub struct VerifierRetained {
    /// The circuits' list and wiring.
    pub shape: Shape,
    /// One per circuit.
    pub runs: Vec<GarbledRun>,
    /// Per OLE stream (in the order the prover logged them): the
    /// verifier's encoded inputs of each batch.
    pub ole_inputs: Vec<(u64, Vec<Vec<u8>>)>,
    /// The server Finished's check in the proof (`None` only before the
    /// session saw the Finished, which the proof then refuses).
    pub server_finished: Option<FinishedCheck>,
}

impl core::fmt::Debug for ProverRetained {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "ProverRetained({:?}, {} runs)",
            self.shape,
            self.runs.len()
        )
    }
}

impl core::fmt::Debug for VerifierRetained {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "VerifierRetained({:?}, {} runs)",
            self.shape,
            self.runs.len()
        )
    }
}

impl VerifierRetained {
    /// The reveal of the verifier's inputs: every circuit's groups in
    /// proof order (`webproof_mpc::consistency::encode_bits`), then its
    /// OLE inputs, stream by stream and batch by batch, encoded (their
    /// lengths are the prover's to know).
    pub fn reveal(&self) -> Vec<u8> {
        let groups: Vec<Vec<bool>> = self.runs.iter().flat_map(|r| r.own.clone()).collect();
        let mut msg = consistency::encode_bits(&groups);
        for (_, batches) in &self.ole_inputs {
            batches.iter().for_each(|b| msg.extend_from_slice(b));
        }
        msg
    }
}

/// The prover's log of every OLE batch, per stream (the ECtF's, then each
/// record's), from the messages both ways.
#[derive(Clone, Debug, Default)]
pub struct OleLog {
    /// `(stream, batches)` in the order the streams started.
    pub streams: Vec<(u64, Vec<OleTranscript>)>,
}

impl OleLog {
    /// A batch started on `stream` with `macs`, sending `flips`.
    pub(crate) fn choose(&mut self, stream: u64, macs: Vec<Block>, flips: &[u8]) {
        let t = OleTranscript {
            macs,
            flips: flips.to_vec(),
            response: Vec::new(),
        };
        // Records run side by side, so their streams' batches interleave.
        match self.streams.iter_mut().find(|(s, _)| *s == stream) {
            Some((_, b)) => b.push(t),
            None => self.streams.push((stream, vec![t])),
        }
    }

    /// The verifier's answer to the last batch of `stream`.
    pub(crate) fn answer(&mut self, stream: u64, msg: &[u8]) {
        if let Some((_, b)) = self.streams.iter_mut().rev().find(|(s, _)| *s == stream) {
            if let Some(t) = b.last_mut() {
                t.response = msg.to_vec();
            }
        }
    }
}

/// The field of an OLE stream: the ECtF's is the curve's base field, the
/// records' GF(2^128).
#[derive(Clone, Copy)]
enum OleKind {
    P256,
    X25519,
    Gf128,
    /// A ChaCha20-Poly1305 record's bitwise OLEs over `2^130 − 5`: the
    /// verifier reveals no input of them, the prover recomputes them from
    /// the record circuit's revealed `t` (`chacha::audit_oles`).
    Poly1305,
}

impl OleKind {
    fn of(shape: &Shape, stream: u64) -> Self {
        match (stream == crate::keyx::ECTF_STREAM, shape.cfg.curve) {
            (true, Curve::P256) => OleKind::P256,
            (true, Curve::X25519) => OleKind::X25519,
            _ if shape.chacha() => OleKind::Poly1305,
            _ => OleKind::Gf128,
        }
    }

    /// Bits of a COT batch per OLE and bytes of the verifier's revealed
    /// input per OLE (none for the bitwise OLEs, whose inputs the prover
    /// recomputes).
    fn field_bits(self) -> (usize, usize) {
        match self {
            OleKind::P256 => (P256Base::BITS, P256Base::BYTES),
            OleKind::X25519 => (Curve25519Base::BITS, Curve25519Base::BYTES),
            OleKind::Gf128 => (Gf128::BITS, Gf128::BYTES),
            OleKind::Poly1305 => (1, 0),
        }
    }
}

fn decode_elems<F: OleField>(bytes: &[u8]) -> Result<Vec<F>> {
    bytes
        .chunks(F::BYTES)
        .map(|c| F::decode(c).ok_or(Error::Malformed("a revealed OLE input not canonical")))
        .collect()
}

/// The audit of one OLE stream in its field; on the ECtF's, also that the
/// verifier's inputs are the `(r, s, (r/s)^2)` the protocol makes them.
fn audit_stream<F: OleField>(
    delta: Block,
    stream: u64,
    batches: &[OleTranscript],
    inputs: &[&[u8]],
) -> Result<()> {
    let inputs = inputs
        .iter()
        .map(|b| decode_elems::<F>(b))
        .collect::<Result<Vec<_>>>()?;
    consistency::audit_ole_transcripts(delta, stream, batches, &inputs).map_err(mpc_err)?;
    if stream == crate::keyx::ECTF_STREAM {
        for batch in &inputs {
            crate::keyx::ectf::check_verifier_inputs(batch).map_err(mpc_err)?;
        }
    }
    Ok(())
}

impl ProverRetained {
    fn revealed_lens(&self) -> Vec<Vec<usize>> {
        self.runs.iter().map(EvaluatedRun::revealed_lens).collect()
    }

    fn bits_len(&self) -> usize {
        let lens = self.revealed_lens().concat();
        4 + lens.iter().map(|l| 4 + l.div_ceil(8)).sum::<usize>()
    }

    /// Bytes of the verifier's OLE inputs per stream and batch.
    fn ole_lens(&self) -> Vec<Vec<usize>> {
        self.oles
            .streams
            .iter()
            .map(|(stream, batches)| {
                let (bits, bytes) = OleKind::of(&self.shape, *stream).field_bits();
                batches
                    .iter()
                    .map(|b| b.macs.len() / bits * bytes)
                    .collect()
            })
            .collect()
    }

    /// Bytes the reveal for this session must have.
    pub fn reveal_len(&self) -> usize {
        self.bits_len() + self.ole_lens().concat().iter().sum::<usize>()
    }

    /// The OLE audit, once `Δ` is known: every batch answered again for
    /// the verifier's revealed inputs (the OLE part of `reveal`); a
    /// ChaCha20-Poly1305 record's bitwise batches for the inputs an honest
    /// verifier had, from its revealed `t` (`chacha::audit_oles`).
    pub fn audit_oles(&self, delta: Block, reveal: &[u8]) -> Result<()> {
        let values = if self.shape.chacha() {
            self.input_values(reveal)?
        } else {
            Vec::new()
        };
        let mut rest = reveal
            .get(self.bits_len()..)
            .ok_or(Error::Malformed("revealed inputs"))?;
        for ((stream, batches), lens) in self.oles.streams.iter().zip(self.ole_lens()) {
            let mut inputs = Vec::with_capacity(lens.len());
            for l in lens {
                if rest.len() < l {
                    return Err(Error::Malformed("revealed OLE inputs"));
                }
                let (a, b) = rest.split_at(l);
                inputs.push(a);
                rest = b;
            }
            match OleKind::of(&self.shape, *stream) {
                OleKind::P256 => audit_stream::<P256Base>(delta, *stream, batches, &inputs)?,
                OleKind::X25519 => {
                    audit_stream::<Curve25519Base>(delta, *stream, batches, &inputs)?
                }
                OleKind::Gf128 => audit_stream::<Gf128>(delta, *stream, batches, &inputs)?,
                OleKind::Poly1305 => self.audit_chacha_stream(delta, *stream, batches, &values)?,
            }
        }
        Ok(())
    }

    /// The audit of a ChaCha20-Poly1305 record's OLE stream (`stream`: the
    /// record's, [`RecSpec::stream`]): its powers' batch and, for a
    /// request record, its hidden ciphertext's, replayed on the elements
    /// an honest verifier had, computed from the record circuit's revealed
    /// inputs (`values`, checked by [`Self::check_inputs`] before).
    fn audit_chacha_stream(
        &self,
        delta: Block,
        stream: u64,
        batches: &[OleTranscript],
        values: &[Vec<Vec<bool>>],
    ) -> Result<()> {
        let records = self.shape.records();
        let (j, spec) = records
            .iter()
            .enumerate()
            .find(|(_, s)| s.stream() == stream)
            .ok_or(Error::Malformed("an OLE stream of no record"))?;
        let hidden = !spec.computes_h();
        if batches.len() != 1 + usize::from(hidden) {
            return Err(Error::Malformed("a record's OLE batches of another number"));
        }
        let bits = |t: &OleTranscript| consistency::OleBitsTranscript {
            macs: t.macs.clone(),
            response: t.response.clone(),
        };
        let run = self.shape.record_run(j);
        let mut inputs = values
            .get(run)
            .ok_or(Error::Malformed("revealed inputs"))?
            .clone();
        // The prover's group (its key ‖ IV share) is not the verifier's.
        if self.runs[run].prover_group < inputs.len() {
            inputs.remove(self.runs[run].prover_group);
        }
        let hide = hidden.then(|| bits(&batches[1]));
        chacha::audit_oles(
            &mut consistency::OleReplay::new(delta, stream),
            &inputs,
            crate::rec::AAD_LEN,
            spec.len,
            &bits(&batches[0]),
            hide.as_ref(),
        )
        .map_err(mpc_err)
    }

    /// Every circuit's input values from the verifier's reveal (anything
    /// but exactly the expected groups is refused).
    pub fn input_values(&self, reveal: &[u8]) -> Result<Vec<Vec<Vec<bool>>>> {
        if reveal.len() != self.reveal_len() {
            return Err(Error::Malformed("revealed inputs of the wrong length"));
        }
        let lens = self.revealed_lens();
        let flat = consistency::decode_bits(&reveal[..self.bits_len()], &lens.concat())
            .map_err(mpc_err)?;
        let mut it = flat.into_iter();
        self.runs
            .iter()
            .zip(&lens)
            .map(|(r, l)| {
                r.input_values(it.by_ref().take(l.len()).collect())
                    .map_err(mpc_err)
            })
            .collect()
    }

    /// The check of the verifier's revealed inputs (`values`, from
    /// [`Self::input_values`]) against what the protocol makes them: the
    /// key derivation's public groups and inner digests from
    /// [`Self::publics`] and the values revealed during the session, its
    /// masks reused where the steps require, and each record's key ‖ IV
    /// share and explicit nonce. With the audit (which checks that these
    /// are the values garbled with), a verifier that made a circuit
    /// compute something else than the session's function is caught,
    /// whether through its tables or through its inputs. Returns the
    /// verifier's key shares, as its masks fix them.
    pub fn check_inputs(&self, values: &[Vec<Vec<bool>>]) -> Result<KeyShares> {
        check_len(&self.shape, values.len())?;
        check_len(&self.shape, self.runs.len())?;
        let verifier_groups = |i: usize| -> Vec<Vec<bool>> {
            let mut v = values[i].clone();
            if self.runs[i].prover_group < v.len() {
                v.remove(self.runs[i].prover_group);
            }
            v
        };
        let p = &self.publics;
        let cfg = &self.shape.cfg;
        let randoms = Randoms {
            client: &p.client_random,
            server: &p.server_random,
            session_hash: cfg.ems.then_some(&p.client_finished_hash[..]),
        };
        let steps = self.shape.steps();
        let kdf: Vec<Vec<Vec<bool>>> = (0..steps).map(verifier_groups).collect();
        let keys = if is_reduced(cfg) {
            let revealed: Vec<Vec<bool>> = self.runs[..steps]
                .iter()
                .map(|r| r.outputs.first().cloned().unwrap_or_default())
                .collect();
            reduced::check_verifier_inputs(
                cfg.curve,
                &randoms,
                &p.client_finished_hash,
                &kdf,
                &revealed,
            )
        } else {
            tls12::check_verifier_inputs(
                cfg,
                &randoms,
                &p.client_finished_hash,
                &p.server_finished_hash,
                &kdf,
            )
        }
        .map_err(mpc_err)?;
        for (j, spec) in self.shape.records().iter().enumerate() {
            let run = self.shape.record_run(j);
            if self.shape.chacha() {
                // Its key ‖ IV share, the record's sequence number, a
                // canonical nonzero `t`; the tag circuit's pad of `s` the
                // record circuit's.
                let rec = verifier_groups(run);
                chacha::check_verifier_inputs(&key_iv(&keys), spec.seq(), &rec).map_err(mpc_err)?;
                chacha::check_tag_inputs(&rec, &verifier_groups(run + 1)).map_err(mpc_err)?;
                continue;
            }
            gcm::check_verifier_inputs(
                &key_iv(&keys),
                &spec.seq().to_be_bytes(),
                &verifier_groups(run),
                spec.computes_h(),
            )
            .map_err(mpc_err)?;
        }
        Ok(keys)
    }

    /// The server Finished's check as the prover sees it: the record from
    /// [`Self::publics`]; under the reduced PRF `IS_ms` from step 3's
    /// decoded outputs, the verifier's mask from its reveal (`values`) and
    /// the hash from [`Self::publics`], under the full PRF the
    /// `verify_data` its 2PC computed.
    fn finished_check(&self, values: &[Vec<Vec<bool>>]) -> Result<FinishedCheck> {
        let p = &self.publics;
        let vd = if is_reduced(&self.shape.cfg) {
            const WHAT: &str = "the master secret's pads";
            let is_ms = self.runs.get(3).and_then(|r| r.outputs.first());
            let mask = values.get(3).and_then(|v| v.last());
            let (Some(is_ms), Some(mask)) = (is_ms, mask) else {
                return Err(Error::Malformed(WHAT));
            };
            let bytes32 = |b: &[bool]| -> Result<[u8; 32]> {
                bits_to_bytes(b)
                    .try_into()
                    .map_err(|_| Error::Malformed(WHAT))
            };
            FinishedVd::Reduced {
                is_ms: bytes32(is_ms)?,
                os_mask: bytes32(mask)?,
                hash: p.server_finished_hash.clone(),
            }
        } else {
            FinishedVd::Revealed(
                p.server_verify_data
                    .ok_or(Error::Malformed("the server verify_data"))?,
            )
        };
        Ok(FinishedCheck {
            vd,
            record: p.server_finished_record.clone(),
        })
    }

    /// The server Finished checked in the clear once the verifier's
    /// inputs are revealed: its plaintext (decrypted, tag checked, at the
    /// close) against the `verify_data` (reduced PRF: of `OS_ms`, the
    /// prover's share XOR the revealed mask; full PRF: the 2PC's). The
    /// proof then asserts the same; a server whose Finished does not
    /// match the handshake is [`Error::ServerFinished`] here, before
    /// anything is proven.
    pub fn check_server_finished(&self, values: &[Vec<Vec<bool>>]) -> Result<()> {
        let check = self.finished_check(values)?;
        let vd = match &check.vd {
            FinishedVd::Reduced {
                is_ms,
                os_mask,
                hash,
            } => {
                let share = self
                    .runs
                    .get(3)
                    .and_then(|r| r.outputs.get(1))
                    .ok_or(Error::Malformed("the master secret's pads"))?;
                let os: Vec<u8> = bits_to_bytes(share)
                    .iter()
                    .zip(os_mask)
                    .map(|(a, b)| a ^ b)
                    .collect();
                let os: [u8; 32] = os
                    .try_into()
                    .map_err(|_| Error::Malformed("the master secret's pads"))?;
                reduced::server_verify_data(&os, is_ms, hash).map_err(mpc_err)?
            }
            FinishedVd::Revealed(vd) => *vd,
        };
        if self.publics.server_finished_plaintext != finished(&vd) {
            return Err(Error::ServerFinished);
        }
        Ok(())
    }

    /// The audit, once `Δ` is revealed and checked: every circuit garbled
    /// again from the labels the prover holds and the revealed values.
    ///
    /// With the `parallel` feature the circuits are shared out over up to
    /// [`AUDIT_THREADS`] threads (the verifier waits on this audit for the
    /// opening, so its wall time is the proof's); without it, or on one
    /// core, they run in turn. Either way the error reported is that of
    /// the first circuit, in session order, that fails.
    pub fn audit(&self, delta: Block, values: &[Vec<Vec<bool>>]) -> Result<()> {
        self.audit_on(delta, values, audit_threads())
    }

    /// [`Self::audit`] on `threads` threads (1: in turn, on this one).
    pub fn audit_on(&self, delta: Block, values: &[Vec<Vec<bool>>], threads: usize) -> Result<()> {
        if values.len() != self.runs.len() {
            return Err(Error::Malformed("input values for another session"));
        }
        let audit_one = |i: usize| self.runs[i].circuit.audit(delta, &values[i]);
        let results = run_shared(&self.runs, threads, audit_one);
        match results.into_iter().find_map(core::result::Result::err) {
            Some(e) => Err(mpc_err(e)),
            None => Ok(()),
        }
    }
}

/// Most threads the prover's audit uses: the request's record circuit is
/// about half of a session's AND gates (1 KB request), so more threads do
/// not shorten it.
pub const AUDIT_THREADS: usize = 2;

fn audit_threads() -> usize {
    #[cfg(feature = "parallel")]
    {
        std::thread::available_parallelism().map_or(1, |n| n.get().min(AUDIT_THREADS))
    }
    #[cfg(not(feature = "parallel"))]
    {
        1
    }
}

/// `f(i)` for every run `i`, in run order, on this thread.
#[cfg(not(feature = "parallel"))]
fn run_shared<R>(runs: &[EvaluatedRun], _threads: usize, f: impl Fn(usize) -> R) -> Vec<R> {
    (0..runs.len()).map(f).collect()
}

/// `f(i)` for every run `i`, in run order; with `threads > 1`, on scoped
/// threads that each take a share of the runs of about equal AND count
/// (largest first, each to the least loaded thread).
#[cfg(feature = "parallel")]
fn run_shared<R: Send>(
    runs: &[EvaluatedRun],
    threads: usize,
    f: impl Fn(usize) -> R + Sync,
) -> Vec<R> {
    let threads = threads.clamp(1, runs.len().max(1));
    if threads == 1 {
        return (0..runs.len()).map(f).collect();
    }
    let mut order: Vec<usize> = (0..runs.len()).collect();
    order.sort_by_key(|&i| core::cmp::Reverse(runs[i].circuit.and_count()));
    let mut shares = vec![(0u64, Vec::new()); threads];
    for i in order {
        let least = shares
            .iter_mut()
            .min_by_key(|(load, _)| *load)
            .expect("at least one thread");
        least.0 += runs[i].circuit.and_count();
        least.1.push(i);
    }
    let mut out: Vec<Option<R>> = (0..runs.len()).map(|_| None).collect();
    std::thread::scope(|scope| {
        let f = &f;
        let handles: Vec<_> = shares
            .into_iter()
            .map(|(_, share)| {
                scope.spawn(move || share.into_iter().map(|i| (i, f(i))).collect::<Vec<_>>())
            })
            .collect();
        for h in handles {
            // A panic in an audit thread is a bug: carry it over.
            for (i, r) in h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)) {
                out[i] = Some(r);
            }
        }
    });
    out.into_iter()
        .map(|r| r.expect("every run audited once"))
        .collect()
}

fn check_len(shape: &Shape, runs: usize) -> Result<()> {
    if runs != shape.len() {
        return Err(Error::Malformed("retained circuits of another session"));
    }
    Ok(())
}

/// The prover's consistency proof (sealed mode): every circuit's input
/// and output labels imported (no circuit proven again, see the module
/// docs), the server Finished's check, then every equality. `values` are
/// [`ProverRetained::input_values`], `key_bits` the key-block bits the
/// response statement imported, `server` its server key.
pub(crate) async fn prove<C: RandomCotReceiver, T: Io>(
    zk: &mut Prover<C, T>,
    r: &ProverRetained,
    values: &[Vec<Vec<bool>>],
    key_bits: &[ProverBit],
    server: &ServerKey<'_, ProverBit>,
) -> Result<()> {
    check_len(&r.shape, r.runs.len())?;
    let mut runs = Vec::with_capacity(r.runs.len());
    for (run, v) in r.runs.iter().zip(values) {
        let w = run.circuit.import(zk, v, &run.outputs).map_err(mpc_err)?;
        runs.push(Wires {
            inputs: w.inputs,
            outputs: w.outputs,
        });
    }
    finished_statement(zk, &runs, &r.finished_check(values)?, server).await?;
    let (a, b) = equalities(&r.shape, &runs, key_bits)?;
    consistency::prove_equal(zk, &a, &b).await.map_err(mpc_err)
}

/// The verifier's side of [`prove`].
pub(crate) async fn verify<C: RandomCotSender, T: Io>(
    zk: &mut Verifier<C, T>,
    r: &VerifierRetained,
    key_bits: &[VerifierBit],
    server: &ServerKey<'_, VerifierBit>,
) -> Result<()> {
    check_len(&r.shape, r.runs.len())?;
    let mut runs = Vec::with_capacity(r.runs.len());
    for run in &r.runs {
        let w = run.circuit.import(zk).map_err(mpc_err)?;
        runs.push(Wires {
            inputs: w.inputs,
            outputs: w.outputs,
        });
    }
    let check = r
        .server_finished
        .as_ref()
        .ok_or(Error::OutOfOrder("the server Finished's check"))?;
    finished_statement(zk, &runs, check, server).await?;
    let (a, b) = equalities(&r.shape, &runs, key_bits)?;
    consistency::verify_equal(zk, &a, &b).await.map_err(mpc_err)
}
