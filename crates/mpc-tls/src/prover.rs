//! The prover's session: it talks to the server (the caller moves the
//! bytes), writes the ClientHello, forwards every byte both ways to the
//! verifier, and runs its half of each 2PC step.
//!
//! Where the prover's values come from: the server name, offered suites
//! and groups, the EMS offer and the request from the caller's
//! [`ProverConfig`]; the client random and the verifier's key shares from
//! the verifier's `Setup`; the server's random, suite and key share from
//! the bytes it received. It never holds a write key while the session
//! runs: the client write key stays XOR-shared to the end, and the
//! server's is completed only by the verifier's `CloseAck` (deferred
//! decryption, see [`crate::verifier`]). Until then the prover cannot
//! read the response; the caller decides when the response is complete
//! (the server's close_notify or TCP close: ask for `Connection: close`).

use crate::consist::{OleLog, ProverRetained, Publics, Shape};
use crate::cots::{request_records, CotPool, MAX_REQUEST};
use crate::error::{Error, Result};
use crate::hello::{
    self, client_key_exchange, finished, group_curve, record as wire_record, suite_params, Terms,
};
use crate::kdf::reduced::StepTables;
use crate::kdf::tls12::{Curve, KeyShares, Tls12Config};
use crate::kdf::{KdfPlans, KdfProver, KeyLabels};
use crate::keyx::keyshare;
use crate::keyx::{ectf_cots, ProverKx, Shares, ECTF_STREAM};
use crate::msg::{ProverMsg, VerifierMsg};
use crate::rec::chacha::{self, ChachaProver};
use crate::rec::dual::DualProver;
use crate::rec::gcm::{self, HiddenAhead, PowersAhead, RecordProver};
use crate::rec::upload::{DualRecord, DualUpload};
use crate::rec::{
    check_server_finished, circuits_per_record, ghash_powers, is_chacha, key_iv, key_iv_labels,
    open_record, run_order, server_alert, HiddenRecord, RecSpec, AAD_LEN, CLIENT_FINISHED,
};
use rand_chacha::ChaCha20Rng;
use rand_core::{CryptoRng, RngCore, SeedableRng};
use std::sync::Arc;
use webproof_circuits::tls::Tls12Suite;
use webproof_core::Block;
use webproof_mpc::consistency::EvaluatedRun;
use webproof_mpc::ole::OleReceiver;
use webproof_mpc::plan::Plan;
use webproof_mpc::ReceivedTables;
use webproof_tls::handshake::{self as hsk, msg_type, Reassembler};
use webproof_tls::record::{content_type, Record};
use webproof_tls::{CipherSuite, Direction, KxGroup, Recorder, RecorderLimits, Recording};

/// What the prover asks for.
#[derive(Clone, Debug)]
pub struct ProverConfig {
    /// The server's name (SNI; none is sent for an IP address).
    pub server_name: String,
    /// Suites to offer, in order (empty: [`hello::SUITES`]); each one
    /// MPC mode runs ([`crate::cots::runs_suite`]).
    pub suites: Vec<CipherSuite>,
    /// Groups to offer, in order (empty: X25519, P-256).
    pub groups: Vec<KxGroup>,
    /// Offer the extended master secret.
    pub ems: bool,
    /// The request (HTTP bytes), sent once the handshake is done.
    pub request: Vec<u8>,
    /// Limits of the prover's own recording.
    pub limits: RecorderLimits,
}

/// What one call gives the caller to send.
#[derive(Debug, Default)]
pub struct ProverOutput {
    /// Messages for the verifier, in order.
    pub to_verifier: Vec<ProverMsg>,
    /// Bytes for the server.
    pub to_server: Vec<u8>,
}

/// What the prover holds at the end of a session.
#[derive(Clone, Debug)]
pub struct ProverOutcome {
    /// The server's application data, decrypted.
    pub response: Vec<u8>,
    /// The server ended with close_notify.
    pub close_notify: bool,
    /// Another alert the server sent after the handshake, if any.
    pub server_alert: Option<u8>,
    /// The prover's own recording of both directions, the request's
    /// records as the verifier records them (header and nonce, zeros in
    /// place of ciphertext and tag, `rec::hidden_record`).
    pub recording: Recording,
    /// Per request record, its masked ciphertext and the MACs of the COTs
    /// that mask it: what the proof of the request takes.
    pub hidden: Vec<HiddenRecord>,
    /// The server's certificate chain, end entity first, as it sent it
    /// (the verifier checked it; an attestation names it).
    pub certificates: Vec<Vec<u8>>,
    /// Active output labels of the prover's key-block shares (IT-MACs
    /// under the verifier's `Δ`, for the proof of the response).
    pub key_labels: Vec<KeyLabels>,
    /// The prover's key-block shares.
    pub key_shares: KeyShares,
    /// The verifier's share of the server write key, revealed in `CloseAck`.
    pub revealed_server_key: Vec<u8>,
    /// The verifier's share of the server write IV, revealed in `CloseAck`.
    pub revealed_server_iv: Vec<u8>,
    /// The verifier's share of the client write key, revealed in
    /// `CloseAck` (for the proof of the request's bytes).
    pub revealed_client_key: Vec<u8>,
    /// The verifier's share of the client write IV, revealed in `CloseAck`.
    pub revealed_client_iv: Vec<u8>,
    /// Every garbled circuit's labels and values, for the consistency
    /// proof and the audit.
    pub retained: ProverRetained,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Srv {
    Hello,
    Certificate,
    KeyExchange,
    HelloDone,
    Ccs,
    Finished,
    App,
}

enum Stage {
    AwaitSetup,
    ServerFlight,
    AwaitEctf(ProverKx),
    /// Setup received (the client random kept): the tables are due.
    AwaitTables([u8; 32]),
    Kdf(usize),
    Records,
    AwaitCloseAck,
    Done(Box<ProverOutcome>),
    Failed,
}

struct PRec {
    spec: RecSpec,
    /// The record circuit's schedule, from [`ProverSession::prepare`]
    /// until the record starts.
    plan: Option<Arc<Plan>>,
    p: Option<RecordProver>,
    tables: Option<StepTables>,
    /// The M2A of the powers of its GHASH key, answered in preprocessing.
    ahead: Option<PowersAhead>,
    /// A request record's M2A of its hidden ciphertext, answered in
    /// preprocessing, and the MACs of its COTs (for the proof).
    hidden: Option<HiddenAhead>,
    hide_macs: Vec<Block>,
    ole: OleReceiver,
    /// Plaintext to encrypt, ciphertext, and (a request record) the
    /// masked ciphertext the verifier got in its place.
    pt: Vec<u8>,
    ct: Vec<u8>,
    masked: Vec<u8>,
    /// A request record's dual execution (unused for the client
    /// Finished, which computes the GHASH key).
    dual: DualRecord,
    /// ChaCha20-Poly1305 (`crate::rec::chacha`): the tag circuit's
    /// schedule and tables, the powers' M2A and (a request record) the
    /// bitwise OLEs of its hidden ciphertext, answered in preprocessing,
    /// the tag circuit's input COTs (drawn with the powers'), the record's
    /// 2PC once started, and (a request record) its tag request as sent,
    /// whose two masked copies of the ciphertext the proof takes.
    tag_plan: Option<Arc<Plan>>,
    tag_tables: Option<StepTables>,
    cc_powers: Option<chacha::PowersAhead>,
    cc_hidden: Option<chacha::HiddenAhead>,
    tag_macs: Vec<Block>,
    cc: Option<ChachaProver>,
    cc_request: Vec<u8>,
}

impl PRec {
    /// Started (its tables taken) and finished (its prover dropped).
    fn done(&self) -> bool {
        self.tables.is_none() && self.p.is_none() && self.cc.is_none()
    }
}

/// The prover's side of one MPC-mode session.
pub struct ProverSession {
    cfg: ProverConfig,
    cots: CotPool,
    shares: Shares,
    blinds: ([u8; 32], [u8; 32]),
    verifier_public: (Vec<u8>, Vec<u8>),
    recorder: Recorder,
    srv: Srv,
    srv_seen: usize,
    srv_hs: Reassembler,
    suite: Option<Tls12Suite>,
    curve: Option<Curve>,
    ems: bool,
    cke: Vec<u8>,
    ectf_ole: OleReceiver,
    /// The session's own randomness (the ECtF's pad), seeded at the start.
    rng: ChaCha20Rng,
    /// What the session is garbled for (sent in `Hello`).
    terms: Terms,
    plans: Option<KdfPlans>,
    /// The key derivation's tables, from preprocessing until the key
    /// exchange gives the prover its premaster share.
    kdf_tables: Option<Vec<StepTables>>,
    /// The circuit whose tables are streaming in.
    incoming: Incoming,
    kdf: Option<KdfProver>,
    keys: Option<KeyShares>,
    recs: Vec<PRec>,
    /// The records' retained executions, with their ids, as each ends
    /// (in [`run_order`]; the proof takes them in id order).
    rec_runs: Vec<(u32, EvaluatedRun)>,
    /// The prover's additive shares of the powers of the client's GHASH
    /// key, once the client Finished's circuit evaluated: every client
    /// record's tag takes them.
    client_powers: Option<Vec<webproof_mpc::field::Gf128>>,
    /// Every OLE batch's messages, for the audit.
    oles: OleLog,
    /// The records' ids in the order they start in 2PC and go out.
    rec_order: Vec<u32>,
    /// The key shares and client verify_data are known: records may run.
    records_open: bool,
    server_finished: Option<Record>,
    server_app: Vec<Record>,
    server_done: bool,
    /// The server's certificate chain, as sent.
    certificates: Vec<Vec<u8>>,
    /// The randoms and the handshake messages so far (through the
    /// ClientKeyExchange), for the publics the verifier's revealed inputs
    /// are checked against ([`Publics`]).
    publics: Publics,
    handshake: Vec<u8>,
    /// The prover's garbling of the request's keystream (dual execution)
    /// and its upload.
    dual: DualProver,
    upload: DualUpload,
    stage: Stage,
}

/// The circuit whose garbled tables are streaming in (circuits come in
/// order: key-derivation steps, then records by id).
#[derive(Default)]
struct Incoming {
    /// Its number.
    circuit: usize,
    /// Its chunks so far, hashed as they came (evaluation, online, then
    /// does not).
    chunks: ReceivedTables,
    /// Their bytes, each chunk counted at least as its header.
    bytes: usize,
}

impl core::fmt::Debug for ProverSession {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "ProverSession({:?})", self.srv)
    }
}

impl ProverSession {
    /// A session with the prover's COT MACs in `cots` (at least
    /// [`crate::cots_needed`] of the request's length); the `Hello` to
    /// send to the verifier first.
    pub fn new(
        cfg: ProverConfig,
        cots: CotPool,
        rng: &mut (impl RngCore + CryptoRng),
    ) -> Result<(Self, ProverMsg)> {
        if cfg.request.is_empty() || cfg.request.len() > MAX_REQUEST {
            return Err(Error::Unsupported(format!(
                "a request of {} bytes (1 to {MAX_REQUEST})",
                cfg.request.len()
            )));
        }
        // Every group runs (`group_curve`); a suite may not (TLS 1.3,
        // ChaCha20), and one offered could be what the server picks.
        if let Some(s) = cfg.suites.iter().find(|&&s| suite_params(s).is_none()) {
            return Err(Error::Unsupported(format!(
                "suite {s}: MPC mode does not run it"
            )));
        }
        let mut rng = ChaCha20Rng::from_rng(rng).expect("ChaCha20 seeding from an RNG");
        let (suite, _) = Terms::choose(&cfg.suites, &cfg.groups, cfg.ems)?.params()?;
        let (dual, dual_ot) = DualProver::new(suite.key_len + suite.iv_len, &mut rng);
        let shares = Shares::random(&mut rng);
        let (c1, b1) = keyshare::commit(&shares.public(Curve::P256), &mut rng);
        let (c2, b2) = keyshare::commit(&shares.public(Curve::X25519), &mut rng);
        let lens = request_records(cfg.request.len());
        let terms = Terms::choose(&cfg.suites, &cfg.groups, cfg.ems)?;
        let hello = ProverMsg::Hello {
            commit_p256: c1,
            commit_x25519: c2,
            request_lens: lens.iter().map(|&l| l as u32).collect(),
            terms,
            dual_ot,
        };
        // The keystream pads come first out of both pools, in record order.
        let mut cots = cots;
        let mut pads: Vec<Vec<Block>> = lens
            .iter()
            .map(|&l| cots.take(8 * l))
            .collect::<Result<_>>()?;
        pads.reverse();
        let recs = RecSpec::all(&lens)
            .into_iter()
            .map(|spec| PRec {
                spec,
                plan: None,
                p: None,
                tables: None,
                ahead: None,
                hidden: None,
                hide_macs: Vec::new(),
                ole: OleReceiver::new(spec.stream()),
                pt: Vec::new(),
                ct: Vec::new(),
                masked: Vec::new(),
                dual: DualRecord::new(
                    spec.id,
                    spec.instance(),
                    spec.seq(),
                    if spec.computes_h() {
                        Vec::new()
                    } else {
                        pads.pop().unwrap_or_default()
                    },
                ),
                tag_plan: None,
                tag_tables: None,
                cc_powers: None,
                cc_hidden: None,
                tag_macs: Vec::new(),
                cc: None,
                cc_request: Vec::new(),
            })
            .collect();
        let recorder = Recorder::new(cfg.limits);
        Ok((
            ProverSession {
                cfg,
                cots,
                shares,
                blinds: (b1, b2),
                verifier_public: (Vec::new(), Vec::new()),
                recorder,
                srv: Srv::Hello,
                srv_seen: 0,
                srv_hs: Reassembler::default(),
                suite: None,
                curve: None,
                ems: false,
                cke: Vec::new(),
                ectf_ole: OleReceiver::new(ECTF_STREAM),
                rng,
                terms,
                plans: None,
                kdf_tables: Some(Vec::new()),
                incoming: Incoming::default(),
                kdf: None,
                keys: None,
                recs,
                rec_runs: Vec::new(),
                client_powers: None,
                certificates: Vec::new(),
                publics: Publics::default(),
                handshake: Vec::new(),
                oles: OleLog::default(),
                rec_order: run_order(lens.len()),
                records_open: false,
                server_finished: None,
                server_app: Vec::new(),
                server_done: false,
                dual,
                upload: DualUpload::default(),
                stage: Stage::AwaitSetup,
            },
            hello,
        ))
    }

    /// Build the schedule of every circuit of the session (the key
    /// derivation's and every record's, for the terms of the `Hello`).
    /// Optional: without it, the key derivation's are built when the
    /// tables come and each record's when it starts, online. Call it
    /// after sending the `Hello`, while the verifier garbles: the
    /// schedules then cost neither the online phase nor memory beside
    /// the tables (building one takes several times its final size).
    /// Does nothing once the tables have come.
    pub fn prepare(&mut self) -> Result<()> {
        self.guard(|s| match s.stage {
            Stage::AwaitSetup | Stage::AwaitTables(_) => s.build_plans(),
            _ => Ok(()),
        })
    }

    /// Most bytes of chunks circuit `i` may take: its tables and, at
    /// worst, one chunk header per table (a verifier sending more is
    /// refused before the prover holds it).
    fn table_limit(&self, i: usize) -> Result<usize> {
        let steps = self.plans.as_ref().map_or(0, KdfPlans::steps);
        let k = self.per_record()?;
        let ands = if i < steps {
            self.plans.as_ref().map_or(0, |p| p.and_count(i))
        } else {
            let r = self.recs.get((i - steps) / k);
            if (i - steps) % k == 1 {
                r.and_then(|r| r.tag_plan.as_ref())
            } else {
                r.and_then(|r| r.plan.as_ref())
            }
            .map_or(0, |p| p.and_count())
        };
        let ands = usize::try_from(ands).map_err(|_| Error::Malformed("circuit too large"))?;
        Ok(webproof_mpc::max_stream_bytes(ands))
    }

    /// A chunk of circuit `circuit`'s tables (the circuits come in order).
    fn take_chunk(&mut self, circuit: u8, chunk: Vec<u8>) -> Result<()> {
        self.build_plans()?;
        let i = usize::from(circuit);
        if i != self.incoming.circuit {
            return Err(Error::Malformed("garbled tables out of order"));
        }
        // A chunk costs at least its header, so empty chunks cannot pile
        // up without limit either.
        let bytes = self.incoming.bytes + chunk.len().max(webproof_mpc::CHUNK_HEADER);
        if bytes > self.table_limit(i)? {
            return Err(Error::Malformed("more garbled tables than the circuit has"));
        }
        self.incoming.chunks.push(chunk)?;
        self.incoming.bytes = bytes;
        Ok(())
    }

    /// The end of circuit `circuit`'s tables; whether it was the last.
    fn end_circuit(&mut self, circuit: u8, decoding: Vec<u8>, early: Vec<u8>) -> Result<bool> {
        self.build_plans()?;
        let i = usize::from(circuit);
        let steps = self.plans.as_ref().map_or(0, KdfPlans::steps);
        let k = self.per_record()?;
        if i != self.incoming.circuit || i >= steps + k * self.recs.len() {
            return Err(Error::Malformed("garbled tables out of order"));
        }
        let early_of = |plan: &Option<Arc<Plan>>, groups: &[usize]| {
            plan.as_ref()
                .map_or(0, |p| webproof_mpc::exec::early_len(p, groups))
        };
        let expected = if i < steps {
            self.plans.as_ref().map_or(0, |p| p.early_len(i))
        } else {
            let r = &self.recs[(i - steps) / k];
            match (k, (i - steps) % k) {
                (1, _) => early_of(&r.plan, &crate::rec::gcm::EARLY_GROUPS),
                (_, 0) => early_of(&r.plan, &chacha::EARLY_GROUPS),
                _ => early_of(&r.tag_plan, &chacha::TAG_EARLY_GROUPS),
            }
        };
        if early.len() != expected {
            return Err(Error::Malformed("early input labels of the wrong length"));
        }
        let chunks = core::mem::take(&mut self.incoming).chunks;
        self.incoming.circuit = i + 1;
        if i < steps {
            self.kdf_tables
                .as_mut()
                .ok_or(Error::OutOfOrder("key-derivation tables"))?
                .push((chunks, decoding, early));
        } else if (i - steps) % k == 1 {
            self.recs[(i - steps) / k].tag_tables = Some((chunks, decoding, early));
        } else {
            self.recs[(i - steps) / k].tables = Some((chunks, decoding, early));
        }
        Ok(i + 1 == steps + k * self.recs.len())
    }

    /// Circuits per record in 2PC for the session's suite family.
    fn per_record(&self) -> Result<usize> {
        Ok(circuits_per_record(self.terms.params()?.0))
    }

    /// Whether the session runs ChaCha20-Poly1305 records.
    fn is_chacha(&self) -> Result<bool> {
        Ok(is_chacha(self.terms.params()?.0))
    }

    /// ChaCha20-Poly1305's preprocessing of record `id`, answered ahead
    /// after every circuit's tables: per request record in id order the
    /// M2A of its powers of `r`, then the bitwise OLEs that hide its
    /// ciphertext; the client Finished's powers last (which ends
    /// preprocessing, as the GHASH key's powers do for AES-GCM). The tag
    /// circuit's input COTs are drawn right after each record's powers
    /// (the verifier draws its keys at the same point). Returns whether
    /// preprocessing is over.
    fn chacha_ahead(&mut self, id: u32, msg: &[u8]) -> Result<bool> {
        let steps = self.plans.as_ref().map_or(0, KdfPlans::steps);
        if steps + 2 * self.recs.len() != self.incoming.circuit {
            return Err(Error::OutOfOrder(
                "a record's OLEs before every circuit's tables",
            ));
        }
        let order = (1..self.recs.len()).chain([CLIENT_FINISHED as usize]);
        let due = order
            .into_iter()
            .find(|&j| {
                let r = &self.recs[j];
                r.cc_powers.is_none() || (!r.spec.computes_h() && r.cc_hidden.is_none())
            })
            .ok_or(Error::OutOfOrder("a record's OLEs twice"))?;
        if due != id as usize {
            return Err(Error::OutOfOrder("a record's OLEs out of order"));
        }
        let spec = self.recs[due].spec;
        if self.recs[due].cc_powers.is_none() {
            let macs = self.cots.take(chacha::cots_needed(AAD_LEN, spec.len))?;
            let r = &mut self.recs[due];
            let pending = ChachaProver::powers_choose(spec.len, AAD_LEN, &mut r.ole, &macs)?;
            r.cc_powers = Some(pending.finish(msg)?);
            // Bitwise OLEs: the choice bits are the inputs, no flips.
            self.oles.choose(spec.stream(), macs, &[]);
            self.oles.answer(spec.stream(), msg);
            self.recs[due].tag_macs = self.cots.take(chacha::TAG_COTS)?;
        } else {
            let macs = self.cots.take(chacha::hide_cots(spec.len))?;
            let r = &mut self.recs[due];
            let pending = ChachaProver::hide_choose(spec.len, &mut r.ole, &macs)?;
            r.cc_hidden = Some(ChachaProver::hide_finish(pending, msg)?);
            self.oles.choose(spec.stream(), macs.clone(), &[]);
            self.oles.answer(spec.stream(), msg);
            self.recs[due].hide_macs = macs;
        }
        Ok(spec.id == CLIENT_FINISHED)
    }

    /// The M2A of the powers of the client's GHASH key, answered ahead for
    /// record `id` (the one that computes `H`): it follows every circuit's
    /// tables and ends preprocessing.
    fn powers_ahead(&mut self, id: u32, msg: &[u8]) -> Result<()> {
        let steps = self.plans.as_ref().map_or(0, KdfPlans::steps);
        let i = id as usize;
        match self.recs.get(i) {
            Some(r)
                if r.spec.computes_h()
                    && steps + self.recs.len() == self.incoming.circuit
                    && r.ahead.is_none()
                    && self
                        .recs
                        .iter()
                        .all(|r| r.spec.computes_h() || r.hidden.is_some()) => {}
            _ => return Err(Error::OutOfOrder(
                "the GHASH key's powers before every circuit's tables, for another record or twice",
            )),
        }
        let k = ghash_powers(self.recs.iter().map(|r| r.spec));
        let macs = self.cots.take(gcm::cots_needed(k))?;
        let r = &mut self.recs[i];
        let (ahead, flips) = RecordProver::powers_ahead(k, &mut r.ole, &macs, msg)?;
        self.oles.choose(r.spec.stream(), macs, &flips);
        self.oles.answer(r.spec.stream(), msg);
        r.ahead = Some(ahead);
        Ok(())
    }

    /// The M2A of request record `id`'s hidden ciphertext, answered ahead:
    /// after every circuit's tables, before the powers of `H`.
    fn hide_ahead(&mut self, id: u32, msg: &[u8]) -> Result<()> {
        let steps = self.plans.as_ref().map_or(0, KdfPlans::steps);
        let i = id as usize;
        // In id order, each once.
        let due = self
            .recs
            .iter()
            .position(|r| !r.spec.computes_h() && r.hidden.is_none());
        if steps + self.recs.len() != self.incoming.circuit || due != Some(i) {
            return Err(Error::OutOfOrder(
                "a hidden ciphertext's M2A before every circuit's tables, out of order or twice",
            ));
        }
        let macs = self.cots.take(gcm::hide_cots(self.recs[i].spec.len))?;
        let r = &mut self.recs[i];
        let (hidden, flips) = RecordProver::hide_ahead(r.spec.len, &mut r.ole, &macs, msg)?;
        self.oles.choose(r.spec.stream(), macs.clone(), &flips);
        self.oles.answer(r.spec.stream(), msg);
        r.hidden = Some(hidden);
        r.hide_macs = macs;
        Ok(())
    }

    fn build_plans(&mut self) -> Result<()> {
        let (suite, curve) = self.terms.params()?;
        if self.plans.is_none() {
            self.plans = Some(KdfPlans::new(Tls12Config {
                curve,
                suite,
                ems: self.terms.ems,
            })?);
        }
        for r in &mut self.recs {
            if r.plan.is_none() {
                if is_chacha(suite) {
                    let (plan, tag) = r.spec.chacha_plans()?;
                    r.plan = Some(plan);
                    r.tag_plan = Some(tag);
                } else {
                    r.plan = Some(r.spec.plan(suite.key_len)?);
                }
            }
            if !r.spec.computes_h() && r.dual.plan.is_none() && !r.dual.garbled() {
                r.dual.plan = Some(r.spec.keystream_plan_for(suite)?);
            }
        }
        Ok(())
    }

    /// The next message of the prover's upload in preprocessing (dual
    /// execution): the labels of the verifier's key ‖ IV wires once its
    /// `Setup` came, and each request record's keystream garbling, chunk
    /// by chunk (`DualTables`, then `DualEnd`), garbled as it goes; `None`
    /// once all are out (or, before `Setup`, once the tables are). The
    /// caller sends each while it keeps reading the verifier's tables:
    /// the two directions of the link carry the two garblings at once.
    /// Every request record's garbling must be out before it goes online.
    pub fn next_upload(&mut self) -> Result<Option<ProverMsg>> {
        self.guard(Self::upload)
    }

    /// Whether [`Self::next_upload`] has a message to give now (the
    /// labels once `Setup` came, or a keystream garbling not all out).
    /// A driver sends uploads while this holds and opens the server
    /// connection only once it does not.
    pub fn upload_ready(&self) -> bool {
        !matches!(self.stage, Stage::Failed) && self.upload.ready(self.request_duals(), true)
    }

    /// The dual execution of every request record, in order.
    fn request_duals(&self) -> impl Iterator<Item = &DualRecord> {
        self.recs
            .iter()
            .filter(|r| !r.spec.computes_h())
            .map(|r| &r.dual)
    }

    fn upload(&mut self) -> Result<Option<ProverMsg>> {
        let (suite, _) = self.terms.params()?;
        self.upload.next(
            &mut self.dual,
            &mut self.recs,
            |r| (!r.spec.computes_h()).then_some(&mut r.dual),
            |r| r.spec.keystream_plan_for(suite),
            &mut self.rng,
        )
    }

    /// The server's Finished record has arrived: the handshake is over on
    /// the wire (its contents are checked after the session).
    pub fn handshake_done(&self) -> bool {
        self.server_finished.is_some()
    }

    /// Every record in 2PC is done: the request went to the server (the
    /// prover may `Close` once the server's Finished has arrived and the
    /// response is complete too).
    pub fn records_done(&self) -> bool {
        matches!(self.stage, Stage::Records) && self.recs.iter().all(PRec::done)
    }

    /// The server sent an alert or closed after the handshake (the caller
    /// may then [`Self::close`]).
    pub fn server_done(&self) -> bool {
        self.server_done
    }

    /// The outcome, once the verifier's `CloseAck` came.
    pub fn outcome(&self) -> Option<&ProverOutcome> {
        match &self.stage {
            Stage::Done(o) => Some(o.as_ref()),
            _ => None,
        }
    }

    /// The outcome, once the verifier's `CloseAck` came, and nothing else
    /// of the session: what the proof of the response needs is in the
    /// outcome, so the tables and the state of the 2PC steps are freed
    /// before it runs.
    pub fn into_outcome(self) -> Option<ProverOutcome> {
        match self.stage {
            Stage::Done(o) => Some(*o),
            _ => None,
        }
    }

    fn guard<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        if matches!(self.stage, Stage::Failed) {
            return Err(Error::OutOfOrder("a failed session"));
        }
        let r = f(self);
        if r.is_err() {
            self.stage = Stage::Failed;
        }
        r
    }

    /// Take one message from the verifier. After an error the session is
    /// over (send [`ProverMsg::Abort`] with the error's text).
    pub fn on_verifier(&mut self, msg: VerifierMsg) -> Result<ProverOutput> {
        self.guard(|s| s.handle(msg))
    }

    /// [`Self::on_verifier`] on an encoded message.
    pub fn on_verifier_bytes(&mut self, bytes: &[u8]) -> Result<ProverOutput> {
        self.guard(|s| s.handle(VerifierMsg::decode(bytes)?))
    }

    /// Bytes from the server: forwarded to the verifier, and the 2PC steps
    /// they start.
    pub fn on_server_bytes(&mut self, bytes: &[u8]) -> Result<ProverOutput> {
        self.guard(|s| {
            if matches!(s.stage, Stage::AwaitSetup | Stage::AwaitTables(_)) {
                return Err(Error::OutOfOrder("server bytes before the ClientHello"));
            }
            let mut out = ProverOutput {
                to_verifier: vec![ProverMsg::FromServer(bytes.to_vec())],
                to_server: Vec::new(),
            };
            s.recorder.feed(Direction::Received, bytes)?;
            while s.srv_seen < s.recorder.transcript().received.len() {
                let rec = s.recorder.transcript().received[s.srv_seen].clone();
                s.srv_seen += 1;
                s.server_record(rec, &mut out)?;
            }
            Ok(out)
        })
    }

    /// The server closed its side of the TCP connection.
    pub fn on_server_closed(&mut self) -> Result<ProverOutput> {
        self.guard(|s| {
            if !s.handshake_done() {
                return Err(Error::ServerClosed);
            }
            s.server_done = true;
            Ok(ProverOutput {
                to_verifier: vec![ProverMsg::ServerClosed],
                to_server: Vec::new(),
            })
        })
    }

    /// End the session: the `Close` naming the records seen.
    pub fn close(&mut self) -> Result<ProverMsg> {
        self.guard(|s| {
            if !s.records_done() {
                return Err(Error::OutOfOrder("close before the request was sent"));
            }
            if !s.handshake_done() {
                return Err(Error::OutOfOrder("close before the server's Finished"));
            }
            s.stage = Stage::AwaitCloseAck;
            Ok(ProverMsg::Close {
                sent: (s.recs.len() - 1) as u32,
                received: s.server_app.len() as u32,
            })
        })
    }

    fn send_to_server(&mut self, out: &mut ProverOutput, bytes: Vec<u8>) -> Result<()> {
        self.recorder.feed(Direction::Sent, &bytes)?;
        out.to_verifier.push(ProverMsg::ToServer(bytes.clone()));
        out.to_server.extend_from_slice(&bytes);
        Ok(())
    }

    fn handle(&mut self, msg: VerifierMsg) -> Result<ProverOutput> {
        let got = msg.name();
        let mut out = ProverOutput::default();
        match (msg, core::mem::replace(&mut self.stage, Stage::Failed)) {
            (VerifierMsg::Abort(why), _) => return Err(Error::Aborted(why)),
            (
                VerifierMsg::Setup {
                    client_random,
                    q_p256,
                    q_x25519,
                    dual_ot,
                },
                Stage::AwaitSetup,
            ) => {
                self.upload.set_labels(self.dual.verifier_labels(&dual_ot)?);
                self.verifier_public = (q_p256, q_x25519.to_vec());
                self.stage = Stage::AwaitTables(client_random);
            }
            (VerifierMsg::Tables { circuit, chunk }, Stage::AwaitTables(client_random)) => {
                self.take_chunk(circuit, chunk)?;
                self.stage = Stage::AwaitTables(client_random);
            }
            (
                VerifierMsg::Decoding {
                    circuit,
                    decoding,
                    early,
                },
                Stage::AwaitTables(client_random),
            ) => {
                self.end_circuit(circuit, decoding, early)?;
                self.stage = Stage::AwaitTables(client_random);
            }
            (VerifierMsg::RecPowers { id, msg }, Stage::AwaitTables(client_random))
                if self.is_chacha()? && !self.chacha_ahead(id, &msg)? =>
            {
                self.stage = Stage::AwaitTables(client_random);
            }
            (VerifierMsg::RecPowers { id, msg }, Stage::AwaitTables(client_random))
                if !self.is_chacha()?
                    && self
                        .recs
                        .get(id as usize)
                        .is_some_and(|r| !r.spec.computes_h()) =>
            {
                self.hide_ahead(id, &msg)?;
                self.stage = Stage::AwaitTables(client_random);
            }
            (VerifierMsg::RecPowers { id, msg }, Stage::AwaitTables(client_random)) => {
                if !self.is_chacha()? {
                    self.powers_ahead(id, &msg)?;
                }
                // Preprocessing ends here, with the GHASH key's powers
                // after the last circuit: the ClientHello opens the server
                // connection.
                let is_ip = self.cfg.server_name.parse::<core::net::IpAddr>().is_ok();
                let ch = hello::client_hello(&hello::HelloParams {
                    random: client_random,
                    server_name: (!is_ip).then(|| self.cfg.server_name.clone()),
                    suites: self.terms.offered_suites(&self.cfg.suites),
                    // Every group, the terms' first: a server with an ECDSA
                    // certificate needs its curve among them (RFC 4492);
                    // the key derivation serves whichever the server picks.
                    groups: if self.cfg.groups.is_empty() {
                        vec![hello::GROUP_X25519, hello::GROUP_P256]
                    } else {
                        self.cfg.groups.clone()
                    },
                    ems: self.cfg.ems,
                });
                self.publics.client_random = client_random;
                self.handshake.extend_from_slice(&ch);
                self.send_to_server(&mut out, wire_record(content_type::HANDSHAKE, &ch))?;
                self.stage = Stage::ServerFlight;
            }
            (VerifierMsg::EctfAnswer(m), Stage::AwaitEctf(kx)) => {
                self.oles.answer(ECTF_STREAM, &m);
                let (share, correction) = kx.finish(&m)?;
                // The correction rides in the flight of the key
                // derivation's first flips: the ECtF's last message needs
                // no answer.
                out.to_verifier.push(ProverMsg::EctfCorrection(correction));
                let (Some(plans), Some(tables)) = (&self.plans, self.kdf_tables.take()) else {
                    return Err(Error::OutOfOrder("key derivation before the tables"));
                };
                let mut kp = KdfProver::new(plans, share, tables)?;
                let macs = self.cots.take(plans.cots(0))?;
                let flips = kp.flips(0, &macs)?;
                out.to_verifier.push(ProverMsg::KdfFlips { step: 0, flips });
                self.kdf = Some(kp);
                self.stage = Stage::Kdf(0);
            }
            (VerifierMsg::KdfInputs { step, msg }, Stage::Kdf(due)) => {
                let step = step as usize;
                if step != due {
                    return Err(Error::OutOfOrder("key-derivation step"));
                }
                let (Some(plans), Some(kdf)) = (&self.plans, &mut self.kdf) else {
                    return Err(Error::OutOfOrder("key derivation"));
                };
                if let Some(labels) = kdf.evaluate(step, &msg)? {
                    out.to_verifier.push(ProverMsg::KdfLabels {
                        step: step as u8,
                        labels,
                    });
                }
                let open = step == plans.records_after();
                if step + 1 < plans.steps() {
                    let macs = self.cots.take(plans.cots(step + 1))?;
                    let flips = kdf.flips(step + 1, &macs)?;
                    out.to_verifier.push(ProverMsg::KdfFlips {
                        step: step as u8 + 1,
                        flips,
                    });
                    self.stage = Stage::Kdf(step + 1);
                } else {
                    self.stage = Stage::Records;
                }
                if open {
                    // The key shares and the client verify_data are known:
                    // the records start beside the key derivation's last steps.
                    self.keys = kdf.key_shares();
                    let vd = kdf
                        .client_vd()
                        .ok_or(Error::OutOfOrder("client Finished"))?;
                    self.recs[CLIENT_FINISHED as usize].pt = finished(&vd);
                    self.records_open = true;
                }
                self.start_records(&mut out)?;
            }
            (VerifierMsg::KdfAdvance { step, msg }, Stage::Kdf(due)) => {
                // Comes right after the inputs of step `due - 1`, which
                // were evaluated: `due` is the step it is for.
                self.stage = Stage::Kdf(due);
                if step as usize != due {
                    return Err(Error::OutOfOrder("key-derivation advance labels"));
                }
                let kdf = self
                    .kdf
                    .as_mut()
                    .ok_or(Error::OutOfOrder("key derivation"))?;
                kdf.receive_advance(due, &msg)?;
            }
            (
                VerifierMsg::RecTagShare {
                    id,
                    tag,
                    corrections,
                    check,
                },
                st @ (Stage::Records | Stage::Kdf(_)),
            ) => {
                self.stage = st;
                let i = self.rec_due(id)?;
                let spec = self.recs[i].spec;
                // Client records go out in order: every one before
                // this one must be out already.
                let mut earlier = self.rec_order.iter().take_while(|&&j| j != id);
                if earlier.any(|&j| !self.recs[j as usize].done()) {
                    return Err(Error::OutOfOrder(
                        "a record's tag before an earlier record's",
                    ));
                }
                let r = &mut self.recs[i];
                if let Some(p) = r.cc.as_mut() {
                    // ChaCha20-Poly1305: `corrections` carries the tag
                    // circuit's input labels; there is no tag share.
                    if tag != [0; 16] {
                        return Err(Error::Malformed("a tag share for a ChaCha20 record"));
                    }
                    if spec.computes_h() {
                        if !check.is_empty() {
                            return Err(Error::Malformed(
                                "a keystream check for the client Finished",
                            ));
                        }
                    } else {
                        // Nothing computed from the keystream leaves for
                        // the server before both garblings agree on it.
                        r.dual
                            .check(&check, "a request record before its keystream garbling")?;
                    }
                    let t = p.tag(&corrections)?;
                    let (rc, tc) = p.circuits();
                    self.rec_runs.push((id, rc.retain()?));
                    self.rec_runs.push((id, tc.retain()?));
                    r.cc = None;
                    let payload = [&r.ct[..], &t].concat();
                    self.send_record(spec, payload, &mut out)?;
                    self.start_records(&mut out)?;
                    return Ok(out);
                }
                let p = r.p.as_mut().expect("running");
                if !p.awaits_tag_share() {
                    return Err(Error::OutOfOrder("a tag share before the offsets"));
                }
                let powers = self
                    .client_powers
                    .as_deref()
                    .ok_or(Error::OutOfOrder("a record's tag before the GHASH key"))?;
                let t = if spec.computes_h() {
                    if !corrections.is_empty() || !check.is_empty() {
                        return Err(Error::Malformed(
                            "corrections for a record whose ciphertext the verifier saw",
                        ));
                    }
                    p.tag(&tag, powers, &spec.aad(), &r.ct)?
                } else {
                    // Nothing computed from the keystream leaves for the
                    // server before both garblings agree on it.
                    r.dual
                        .check(&check, "a request record before its keystream garbling")?;
                    p.hidden_tag(&tag, &corrections, powers, &spec.aad(), &r.ct)?
                };
                self.rec_runs.push((id, p.circuit().retain()?));
                r.p = None;
                let payload = [&spec.seq().to_be_bytes()[..], &r.ct, &t].concat();
                self.send_record(spec, payload, &mut out)?;
                self.start_records(&mut out)?;
            }
            (
                VerifierMsg::CloseAck {
                    server_key,
                    server_iv,
                    client_key,
                    client_iv,
                },
                Stage::AwaitCloseAck,
            ) => {
                let mut o = self.decrypt(&server_key, &server_iv)?;
                if client_key.len() != o.key_shares.client_key.len()
                    || client_iv.len() != o.key_shares.client_iv.len()
                {
                    return Err(Error::Malformed("key share of the wrong length"));
                }
                o.revealed_client_key = client_key;
                o.revealed_client_iv = client_iv;
                self.stage = Stage::Done(Box::new(o));
            }
            (_, _) => {
                return Err(Error::Unexpected {
                    expected: "the verifier's answer to the current step",
                    got,
                })
            }
        }
        Ok(out)
    }

    /// A client record, tagged, out: the client Finished after the
    /// ClientKeyExchange and the ChangeCipherSpec, a request record to the
    /// server only.
    fn send_record(
        &mut self,
        spec: RecSpec,
        payload: Vec<u8>,
        out: &mut ProverOutput,
    ) -> Result<()> {
        let record = wire_record(spec.content_type(), &payload);
        if spec.id == CLIENT_FINISHED {
            let mut bytes = wire_record(content_type::HANDSHAKE, &self.cke);
            bytes.extend(wire_record(content_type::CHANGE_CIPHER_SPEC, &[1]));
            bytes.extend(record);
            self.send_to_server(out, bytes)
        } else {
            // The verifier never sees a request record: both recordings
            // hold its shape only.
            let suite = self.terms.params()?.0;
            self.recorder
                .feed(Direction::Sent, &crate::rec::hidden_record(suite, &spec))?;
            out.to_verifier.push(ProverMsg::RecSent { id: spec.id });
            out.to_server.extend_from_slice(&record);
            Ok(())
        }
    }

    /// The index of running record `id`.
    fn rec_due(&self, id: u32) -> Result<usize> {
        let i = id as usize;
        match self.recs.get(i) {
            Some(r) if r.p.is_some() || r.cc.is_some() => Ok(i),
            _ => Err(Error::OutOfOrder("record in 2PC")),
        }
    }

    /// Start every record whose inputs are there ([`run_order`]): the
    /// client Finished and the request's records together once the key
    /// derivation is done (their steps run side by side, each message
    /// carrying every running record's step). Each circuit's key ‖ IV
    /// input is chained to the key derivation's output (the labels this
    /// party evaluated there) and the verifier's inputs came with the
    /// tables, so each record evaluates at once and sends its ciphertext.
    fn start_records(&mut self, out: &mut ProverOutput) -> Result<()> {
        if !self.records_open || self.recs.iter().all(|r| r.tables.is_none()) {
            return Ok(());
        }
        let labels = match (&self.kdf, &self.plans, self.suite) {
            (Some(kdf), Some(plans), Some(suite)) => {
                key_iv_labels(kdf.key_labels(plans)?, suite.key_len, suite.iv_len)?
            }
            _ => return Err(Error::OutOfOrder("records before the key derivation")),
        };
        for id in self.rec_order.clone() {
            let i = id as usize;
            if self.recs[i].tables.is_none() {
                continue;
            }
            let spec = self.recs[i].spec;
            let suite = self.suite.expect("set");
            let keys = self.keys.clone().ok_or(Error::OutOfOrder("record"))?;
            if spec.id != CLIENT_FINISHED {
                let start = (spec.id as usize - 1) * crate::cots::MAX_RECORD;
                self.recs[i].pt = self.cfg.request[start..start + spec.len].to_vec();
            }
            if is_chacha(suite) {
                self.start_chacha(i, &labels, &keys, out)?;
                continue;
            }
            let tables = self.recs[i]
                .tables
                .take()
                .ok_or(Error::OutOfOrder("record tables"))?;
            let plan = match self.recs[i].plan.take() {
                Some(plan) => plan,
                None => spec.plan(suite.key_len)?,
            };
            let ahead = self.recs[i].ahead.take();
            let hidden = self.recs[i].hidden.take();
            if spec.computes_h() != ahead.is_some() || spec.computes_h() == hidden.is_some() {
                return Err(Error::OutOfOrder(
                    "a record before the GHASH key's powers or its ciphertext's M2A",
                ));
            }
            let mut p = RecordProver::new(plan, spec.len, spec.instance(), tables, ahead, hidden)?;
            let r = &mut self.recs[i];
            let (ks, offsets) = p.keystream(&labels, &key_iv(&keys))?;
            if let Some(powers) = p.power_shares() {
                self.client_powers = Some(powers.to_vec());
            }
            r.ct = r.pt.iter().zip(&ks).map(|(a, b)| a ^ b).collect();
            // The verifier gets the client Finished's ciphertext (its
            // plaintext is the verify_data both know) and a request
            // record's masked by the prover's COT choice bits only.
            let (sent, labels) = if spec.computes_h() {
                (r.ct.clone(), Vec::new())
            } else {
                // Kept for the check; the masked ciphertext says nothing
                // of the keystream (one-time padded by the COT choice bits).
                let labels = p.circuit().evaluator().output_labels(0)?.to_vec();
                r.dual.decoded(&ks, labels)?;
                r.masked = p.mask_ciphertext(&r.ct)?;
                (r.masked.clone(), self.dual.prover_labels(&key_iv(&keys))?)
            };
            r.p = Some(p);
            out.to_verifier.push(ProverMsg::RecCiphertext {
                id: spec.id,
                ct: sent,
                offsets,
                labels,
            });
        }
        Ok(())
    }

    /// Record `i`'s start under ChaCha20-Poly1305: its record circuit
    /// evaluated on the key derivation's labels (`labels`, chained) and the
    /// prover's key ‖ IV share, the plaintext encrypted, and the tag
    /// request sent: the client Finished's with its ciphertext (whose
    /// plaintext the verifier knows), a request record's with the
    /// ciphertext masked twice by COT choice bits (the verifier never sees
    /// it) and the labels for the dual execution of its keystream.
    fn start_chacha(
        &mut self,
        i: usize,
        labels: &[Block],
        keys: &KeyShares,
        out: &mut ProverOutput,
    ) -> Result<()> {
        let r = &mut self.recs[i];
        let spec = r.spec;
        let (Some(tables), Some(tag_tables)) = (r.tables.take(), r.tag_tables.take()) else {
            return Err(Error::OutOfOrder("record tables"));
        };
        let plans = match (r.plan.take(), r.tag_plan.take()) {
            (Some(p), Some(t)) => (p, t),
            _ => spec.chacha_plans()?,
        };
        let ahead = r.cc_powers.take();
        let hidden = r.cc_hidden.take();
        let Some(ahead) = ahead.filter(|_| spec.computes_h() != hidden.is_some()) else {
            return Err(Error::OutOfOrder(
                "a record before its powers' M2A or its ciphertext's OLEs",
            ));
        };
        let mut p = ChachaProver::new(
            plans,
            spec.len,
            AAD_LEN,
            spec.chacha_instances(),
            (tables, tag_tables),
            ahead,
            hidden,
        )?;
        let ks = p.keystream(labels, &key_iv(keys))?;
        r.ct = r.pt.iter().zip(&ks).map(|(a, b)| a ^ b).collect();
        let macs = core::mem::take(&mut r.tag_macs);
        let (sent, request, dual_labels) = if spec.computes_h() {
            let request = p.tag_request(&spec.aad(), &r.ct, &macs)?;
            (r.ct.clone(), request, Vec::new())
        } else {
            // Kept for the dual execution's check, which the record waits
            // for before its tag is computed.
            let labels = p.circuits().0.evaluator().output_labels(0)?.to_vec();
            r.dual.decoded(&ks, labels)?;
            let request = p.hidden_tag_request(&spec.aad(), &r.ct, &macs)?;
            r.cc_request = request.clone();
            (Vec::new(), request, self.dual.prover_labels(&key_iv(keys))?)
        };
        self.recs[i].cc = Some(p);
        out.to_verifier.push(ProverMsg::RecCiphertext {
            id: spec.id,
            ct: sent,
            offsets: request,
            labels: dual_labels,
        });
        Ok(())
    }

    fn server_record(&mut self, rec: Record, out: &mut ProverOutput) -> Result<()> {
        let ct = rec.content_type;
        match self.srv {
            Srv::App => {
                if ct == content_type::ALERT {
                    self.server_done = true;
                }
                self.server_app.push(rec);
                Ok(())
            }
            Srv::Finished => {
                check_server_finished(self.terms.params()?.0, &rec)?;
                self.server_finished = Some(rec);
                self.srv = Srv::App;
                Ok(())
            }
            _ if ct == content_type::ALERT => Err(server_alert(&rec.payload)),
            Srv::Ccs => {
                if ct != content_type::CHANGE_CIPHER_SPEC || rec.payload != [1] {
                    return Err(Error::Unsupported(
                        "a server record other than ChangeCipherSpec after ServerHelloDone".into(),
                    ));
                }
                self.srv = Srv::Finished;
                Ok(())
            }
            _ => {
                if ct != content_type::HANDSHAKE {
                    return Err(Error::Unexpected {
                        expected: "server handshake records",
                        got: "another content type",
                    });
                }
                self.srv_hs.push(&rec.payload)?;
                while let Some(m) = self.srv_hs.next_message()? {
                    self.server_message(m, out)?;
                }
                Ok(())
            }
        }
    }

    fn server_message(&mut self, m: hsk::Message, out: &mut ProverOutput) -> Result<()> {
        if m.typ == msg_type::CERTIFICATE_REQUEST {
            return Err(Error::Unsupported("client certificates".into()));
        }
        let (want, name) = match self.srv {
            Srv::Hello => (msg_type::SERVER_HELLO, "ServerHello"),
            Srv::Certificate => (msg_type::CERTIFICATE, "Certificate"),
            Srv::KeyExchange => (msg_type::SERVER_KEY_EXCHANGE, "ServerKeyExchange"),
            Srv::HelloDone => (msg_type::SERVER_HELLO_DONE, "ServerHelloDone"),
            _ => {
                return Err(Error::Unsupported(
                    "a handshake message out of place".into(),
                ))
            }
        };
        if m.typ != want {
            return Err(Error::Unexpected {
                expected: name,
                got: "another handshake message",
            });
        }
        self.handshake.extend_from_slice(&m.bytes);
        match self.srv {
            Srv::Hello => {
                let sh = hsk::parse_server_hello(m.body())?;
                self.publics.server_random = sh.random;
                if sh.version != 0x0303 {
                    return Err(Error::Unsupported(format!(
                        "protocol version {:#06x}",
                        sh.version
                    )));
                }
                // A code of no known suite was not offered either.
                let not_offered = || {
                    Error::Unsupported(format!("suite {:#06x} was not offered", sh.cipher_suite))
                };
                let suite = CipherSuite::from_code(sh.cipher_suite).ok_or_else(not_offered)?;
                let offered = self.cfg.suites.is_empty() || self.cfg.suites.contains(&suite);
                self.suite = suite_params(suite).filter(|_| offered);
                if self.suite.is_none() {
                    return Err(not_offered());
                }
                if sh.ems && !self.cfg.ems {
                    return Err(Error::Unsupported("EMS that was not offered".into()));
                }
                self.terms.check_negotiated(suite, sh.ems)?;
                self.ems = sh.ems;
                self.srv = Srv::Certificate;
            }
            Srv::Certificate => {
                self.certificates = hsk::parse_certificate(m.body(), false)?;
                self.srv = Srv::KeyExchange;
            }
            Srv::KeyExchange => {
                let ske = hsk::parse_server_key_exchange(m.body())?;
                let group = hello::group_from_wire(ske.group)?;
                let offered = self.cfg.groups.is_empty() || self.cfg.groups.contains(&group);
                if !offered {
                    return Err(Error::Unsupported(format!(
                        "group {:#06x} was not offered",
                        ske.group
                    )));
                }
                // The suite and EMS were checked against the terms at the
                // ServerHello; the key derivation serves every group.
                self.curve = Some(group_curve(group));
                // The server key is used at ServerHelloDone; keep it in
                // the client key exchange slot until then.
                self.cke = ske.public;
                self.srv = Srv::HelloDone;
            }
            _ => {
                if !m.body().is_empty() {
                    return Err(Error::Malformed("a ServerHelloDone with a body"));
                }
                self.srv = Srv::Ccs;
                self.start_key_exchange(out)?;
            }
        }
        Ok(())
    }

    fn start_key_exchange(&mut self, out: &mut ProverOutput) -> Result<()> {
        if !matches!(self.stage, Stage::ServerFlight) {
            return Err(Error::OutOfOrder("key exchange"));
        }
        let curve = self.curve.expect("set with the ServerKeyExchange");
        let server_key = core::mem::take(&mut self.cke);
        let (qv, blind) = match curve {
            Curve::P256 => (&self.verifier_public.0, self.blinds.0),
            Curve::X25519 => (&self.verifier_public.1, self.blinds.1),
        };
        let client_pub = self.shares.client_share(curve, qv)?;
        self.cke = client_key_exchange(&client_pub);
        self.handshake.extend_from_slice(&self.cke);
        let macs = self.cots.take(ectf_cots(curve))?;
        let (kx, flips) = ProverKx::start(
            &self.shares,
            curve,
            &server_key,
            &mut self.ectf_ole,
            &macs,
            &mut self.rng,
        )?;
        self.oles.choose(ECTF_STREAM, macs, &flips);
        out.to_verifier.push(ProverMsg::KeyOpen {
            public: self.shares.public(curve),
            blind,
            flips,
        });
        self.stage = Stage::AwaitEctf(kx);
        Ok(())
    }

    /// Deferred decryption with the verifier's share of the server key.
    fn decrypt(&mut self, server_key: &[u8], server_iv: &[u8]) -> Result<ProverOutcome> {
        let own = self.keys.clone().ok_or(Error::OutOfOrder("CloseAck"))?;
        let (Some(plans), Some(kdf), Some(curve), Some(suite)) =
            (&self.plans, &self.kdf, self.curve, self.suite)
        else {
            return Err(Error::OutOfOrder("CloseAck"));
        };
        if server_key.len() != own.server_key.len() || server_iv.len() != own.server_iv.len() {
            return Err(Error::Malformed("key share of the wrong length"));
        }
        let x = |a: &[u8], b: &[u8]| -> Vec<u8> { a.iter().zip(b).map(|(p, q)| p ^ q).collect() };
        let key = x(&own.server_key, server_key);
        let iv = x(&own.server_iv, server_iv);
        // The proof and the verifier's reveal take the records in id order
        // and the OLE streams by number (the ECtF's, then by record id);
        // the 2PC ran them in `run_order`.
        let mut runs = self.rec_runs.clone();
        runs.sort_by_key(|(id, _)| *id);
        let rec_runs: Vec<EvaluatedRun> = runs.into_iter().map(|(_, r)| r).collect();
        let mut oles = self.oles.clone();
        oles.streams.sort_by_key(|(stream, _)| *stream);
        let vd = kdf.client_vd().ok_or(Error::OutOfOrder("CloseAck"))?;
        let fin = self
            .server_finished
            .as_ref()
            .ok_or(Error::OutOfOrder("CloseAck"))?;
        // The server Finished, now that the server key is known: its tag,
        // and its plaintext against the verify_data the full PRF computed
        // in 2PC (the reduced PRF's once the verifier's mask is revealed,
        // `ProverRetained::check_server_finished`; its header here). The
        // proof asserts both (`consist::FinishedCheck`).
        let fin_pt = open_record(suite, &key, &iv, 0, content_type::HANDSHAKE, &fin.payload)
            .ok_or(Error::ServerFinished)?;
        let server_vd = kdf.server_vd();
        let want = match server_vd {
            Some(v) => finished(&v),
            None => finished(&[0; 12])[..4].to_vec(),
        };
        if fin_pt.get(..want.len()) != Some(&want[..]) {
            return Err(Error::ServerFinished);
        }
        let publics = Publics {
            client_finished_hash: hello::transcript_hash(suite, &self.handshake),
            server_finished_hash: hello::transcript_hash(
                suite,
                &[&self.handshake[..], &finished(&vd)].concat(),
            ),
            server_finished_record: fin.payload.clone(),
            server_finished_plaintext: fin_pt,
            server_verify_data: server_vd,
            ..self.publics.clone()
        };
        let mut o = ProverOutcome {
            response: Vec::new(),
            close_notify: false,
            server_alert: None,
            recording: self.recorder.transcript().clone(),
            hidden: self
                .recs
                .iter()
                .filter(|r| !r.spec.computes_h())
                .map(|r| {
                    if r.cc_request.is_empty() {
                        Ok(HiddenRecord::new(&r.spec, &r.masked, &r.hide_macs))
                    } else {
                        HiddenRecord::chacha(&r.spec, &r.cc_request, &r.hide_macs)
                    }
                })
                .collect::<Result<_>>()?,
            certificates: core::mem::take(&mut self.certificates),
            key_labels: kdf.key_labels(plans)?,
            key_shares: own,
            revealed_server_key: server_key.to_vec(),
            revealed_server_iv: server_iv.to_vec(),
            revealed_client_key: Vec::new(),
            revealed_client_iv: Vec::new(),
            retained: ProverRetained {
                shape: Shape {
                    cfg: Tls12Config {
                        curve,
                        suite,
                        ems: self.ems,
                    },
                    request_lens: self.recs[1..].iter().map(|r| r.spec.len).collect(),
                },
                publics,
                runs: [kdf.runs()?, rec_runs].concat(),
                oles,
            },
        };
        for (index, rec) in self.server_app.iter().enumerate() {
            let pt = open_record(
                suite,
                &key,
                &iv,
                index as u64 + 1,
                rec.content_type,
                &rec.payload,
            )
            .ok_or(Error::Decrypt { index })?;
            match rec.content_type {
                content_type::APPLICATION_DATA => o.response.extend_from_slice(&pt),
                content_type::ALERT => match pt[..] {
                    // A close_notify at level warning, as RFC 5246 sends it
                    // (the proof claims these exact bytes); another level
                    // is reported as an alert.
                    [1, 0] => o.close_notify = true,
                    [_, d] => o.server_alert = Some(d),
                    _ => return Err(Error::Decrypt { index }),
                },
                _ => {}
            }
        }
        Ok(o)
    }
}
