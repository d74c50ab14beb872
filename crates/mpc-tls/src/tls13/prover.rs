//! The prover's session of MPC mode over TLS 1.3: the TLS client's wire
//! side (it writes the ClientHello and the client Finished, moves the
//! server's bytes) and the evaluator's half of the ECtF, the key
//! schedule and the request's records (and the garbler of their
//! keystream, dual execution).
//!
//! Flights (the table in `docs/protocol/mpc-tls13.md`): `Hello` →
//! (`Setup`, every circuit's tables, the M2A answered ahead; the prover
//! uploads its keystream garblings meanwhile) → ClientHello to the server and
//! `ToServer` → the server's bytes, `FromServer`, and on its ServerHello
//! `KeyOpen` (the opening and the ECtF flips) → `EctfAnswer` →
//! `EctfCorrection`, `KdfFlips` of step 0 → per step `KdfInputs` /
//! `KdfLabels`; after step 1 the prover decrypts the server's flight
//! with the revealed server handshake key, checks the server Finished
//! and sends the client Finished (`ToServer`); after step 3 it holds its
//! shares of the application keys and runs the records at once
//! (`RecCiphertext`); each request record goes to the server once the
//! verifier's `RecTagShare` vouches for its keystream (`RecSent`).

use super::hello::{
    check_hrr, check_server_hello, clear_messages, client_finished_record, client_hello,
    hello_transcript, is_hrr, read_flight,
};
use super::rec::{circuits_per_record, hidden_record, Spec, AAD_LEN};
use crate::cots::CotPool;
use crate::error::{Error, Result};
use crate::hello::{group_curve, record, Terms};
use crate::kdf::tls12::{Curve, KeyShares};
use crate::kdf::tls13::{HandshakeSecrets, Tls13Plans, Tls13Prover, IV_LEN, KEY_OUTPUT, STEPS};
use crate::keyx::keyshare;
use crate::keyx::{ectf_cots, ProverKx, Shares, ECTF_STREAM};
use crate::msg::{ProverMsg, VerifierMsg};
use crate::prover::{ProverConfig, ProverOutput};
use crate::rec::chacha::{self, ChachaProver};
use crate::rec::dual::DualProver;
use crate::rec::gcm::{self, HiddenAhead, PowersAhead, RecordProver};
use crate::rec::upload::{DualRecord, DualUpload};
use crate::rec::{key_iv, key_iv_wires};
use rand_chacha::ChaCha20Rng;
use rand_core::{CryptoRng, RngCore, SeedableRng};
use webproof_circuits::tls::Tls13Suite;
use webproof_core::Block;
use webproof_mpc::exec::StepTables;
use webproof_mpc::field::Gf128;
use webproof_mpc::ole::OleReceiver;
use webproof_tls::handshake::Message;
use webproof_tls::record::content_type;
use webproof_tls::{Direction, KxGroup, Recorder};

/// One step's tables as they come: chunks, then the decoding and early
/// labels.
#[derive(Default)]
struct Incoming {
    chunks: Vec<Vec<u8>>,
    end: Option<(Vec<u8>, Vec<u8>)>,
}

/// The prover of a TLS 1.3 session.
pub struct Tls13ProverSession {
    cfg: ProverConfig,
    suite: webproof_tls::CipherSuite,
    group: KxGroup,
    curve: Curve,
    rng: ChaCha20Rng,
    cots: CotPool,
    ole: OleReceiver,
    /// The key schedule's suite, and its steps' schedules once built
    /// ([`Self::prepare`], or when first needed).
    schedule: Tls13Suite,
    plans: Option<Tls13Plans>,
    shares: Shares,
    /// The commitments' blinds (P-256, X25519).
    blinds: ([u8; 32], [u8; 32]),
    /// The terms' group (the first ClientHello's key share).
    preferred: KxGroup,
    /// A HelloRetryRequest and the second ClientHello, if the server
    /// asked for the other group.
    retry: Option<(Message, Message)>,
    /// The verifier's client random and its public shares (P-256,
    /// X25519).
    setup: Option<([u8; 32], Vec<u8>, Vec<u8>)>,
    incoming: Vec<Incoming>,
    client_hello: Option<Message>,
    recorder: Recorder,
    /// The ServerHello and the index of the record after it.
    server_hello: Option<(Message, usize)>,
    kx: Option<ProverKx>,
    kdf: Option<Tls13Prover>,
    secrets: Option<HandshakeSecrets>,
    finished_sent: bool,
    keys: Option<KeyShares>,
    /// The prover's garbling of the request's keystream (dual execution)
    /// and its upload.
    dual: DualProver,
    upload: DualUpload,
    recs: Vec<PRec>,
    /// The prover's shares of the powers of the client's GHASH key.
    powers: Option<Vec<Gf128>>,
    /// Index of the first server record after its Finished.
    server_app_start: Option<usize>,
    /// The transcript hashes through the ServerHello and through the
    /// server Finished, as the prover computed them.
    hashes: Option<(Vec<u8>, Vec<u8>)>,
    /// Every OLE batch as the prover saw it, for the audit.
    oles: crate::consist::OleLog,
    /// The server closed its side, or sent an alert after the handshake.
    server_done: bool,
    closing: bool,
    response: Option<Response13>,
    /// The server's certificate chain from its flight (checked by the
    /// verifier; the prover holds it to accept the attestation).
    certificates: Vec<Vec<u8>>,
}

/// What the prover decrypted of the server's records after its Finished,
/// once the verifier revealed its share of the server key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response13 {
    /// The application data, in order.
    pub response: Vec<u8>,
    /// The server ended with close_notify.
    pub close_notify: bool,
    /// Another alert the server sent, if any.
    pub server_alert: Option<u8>,
    /// NewSessionTicket messages skipped (tickets are never used: this
    /// client resumes nothing).
    pub tickets: usize,
    /// The verifier's shares it revealed in `CloseAck`.
    pub revealed: KeyShares,
    /// Per server record after its Finished: its inner content type and
    /// the length of its content (before the type and the padding).
    pub records: Vec<(u8, usize)>,
    /// The alert's two bytes, if the server's last record is one.
    pub alert: Option<[u8; 2]>,
}

/// The prover's side of one record in 2PC.
struct PRec {
    spec: Spec,
    /// Its circuit's schedule, and a request record's keystream
    /// circuit's (dual execution), once built ([`Tls13ProverSession::prepare`]).
    plan: Option<std::sync::Arc<webproof_mpc::Plan>>,
    tables: Incoming,
    ole: OleReceiver,
    ahead: Option<PowersAhead>,
    hidden: Option<HiddenAhead>,
    p: Option<RecordProver>,
    /// A request record's dual execution (unused for the record that
    /// computes the GHASH key).
    dual: DualRecord,
    /// The request's bytes and the inner content type.
    inner: Vec<u8>,
    /// A request record's masked ciphertext as sent in `RecCiphertext`
    /// and the MACs of its hidden M2A's COTs (their choice bits mask it):
    /// what the proof of the request takes.
    hidden_record: crate::rec::HiddenRecord,
    ct: Vec<u8>,
    sent: bool,
    /// ChaCha20-Poly1305 (`crate::rec::chacha`): the tag circuit's
    /// schedule and tables, the powers' M2A and the bitwise OLEs of its
    /// hidden ciphertext (answered in preprocessing), the tag circuit's
    /// input COTs (drawn with the powers'), the record's 2PC once built.
    tag_plan: Option<std::sync::Arc<webproof_mpc::Plan>>,
    tag_tables: Incoming,
    cc_powers: Option<chacha::PowersAhead>,
    cc_hidden: Option<chacha::HiddenAhead>,
    tag_macs: Vec<Block>,
    cc: Option<ChachaProver>,
}

impl PRec {
    /// Both circuits' tables (the tag circuit's: ChaCha20-Poly1305 only)
    /// in circuit order.
    fn slots(&self) -> Vec<&Incoming> {
        let mut v = vec![&self.tables];
        if self.spec.chacha {
            v.push(&self.tag_tables);
        }
        v
    }
}

impl Tls13ProverSession {
    /// A session and its first message (`Hello`, with the commitments to
    /// both groups' public shares). `cfg.suites` is one suite of
    /// [`super::SUITES`] (none: [`super::SUITE`]); the group of the
    /// first key share is `cfg.groups`' first (X25519 if none), the other
    /// offered too, for a HelloRetryRequest.
    pub fn new(
        cfg: ProverConfig,
        cots: CotPool,
        rng: &mut (impl RngCore + CryptoRng),
    ) -> Result<(Self, ProverMsg)> {
        // One suite is offered: the verifier garbles for it before the
        // ClientHello (the key schedule's hash and the records' key length
        // depend on it).
        if cfg.suites.len() > 1 {
            return Err(Error::Usage(
                "one TLS 1.3 suite per session (the circuits are garbled for it ahead)".into(),
            ));
        }
        let suite = cfg.suites.first().copied().unwrap_or(super::SUITE);
        let schedule = super::schedule_of(suite)?;
        if cfg.ems {
            return Err(Error::Usage(
                "TLS 1.3 has no extended master secret to offer".into(),
            ));
        }
        let group = cfg.groups.first().copied().unwrap_or(KxGroup::X25519);
        let curve = group_curve(group);
        if cfg.request.is_empty() || cfg.request.len() > crate::cots::MAX_REQUEST {
            return Err(Error::Unsupported(format!(
                "a request of {} bytes (1 to {})",
                cfg.request.len(),
                crate::cots::MAX_REQUEST
            )));
        }
        let mut rng = ChaCha20Rng::from_rng(rng).expect("ChaCha20 seeding from an RNG");
        let (dual, dual_ot) = DualProver::new(schedule.key_len + IV_LEN, &mut rng);
        let lens = crate::cots::request_records(cfg.request.len());
        // The keystream pads come first out of both pools, in record order.
        let mut cots = cots;
        let mut at = 0;
        let chacha = super::is_chacha(suite);
        let recs = Spec::all(&lens, schedule.key_len, chacha)
            .into_iter()
            .map(|spec| {
                let pads = if spec.computes_h() {
                    Vec::new()
                } else {
                    cots.take(8 * spec.len)?
                };
                let mut inner = Vec::new();
                if !spec.computes_h() {
                    inner = cfg.request[at..at + spec.len - 1].to_vec();
                    inner.push(content_type::APPLICATION_DATA);
                    at += spec.len - 1;
                }
                Ok(PRec {
                    spec,
                    plan: None,
                    tag_plan: None,
                    tables: Incoming::default(),
                    ole: OleReceiver::new(spec.stream()),
                    ahead: None,
                    hidden: None,
                    p: None,
                    dual: DualRecord::new(spec.id, spec.instance(), spec.seq(), pads),
                    inner,
                    hidden_record: Default::default(),
                    ct: Vec::new(),
                    sent: false,
                    tag_tables: Incoming::default(),
                    cc_powers: None,
                    cc_hidden: None,
                    tag_macs: Vec::new(),
                    cc: None,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let shares = Shares::random(&mut rng);
        let (c1, b1) = keyshare::commit(&shares.public(Curve::P256), &mut rng);
        let (c2, b2) = keyshare::commit(&shares.public(Curve::X25519), &mut rng);
        let hello = ProverMsg::Hello {
            commit_p256: c1,
            commit_x25519: c2,
            request_lens: lens.iter().map(|&l| l as u32).collect(),
            terms: Terms {
                suite,
                group,
                ems: false,
            },
            dual_ot,
        };
        let recorder = Recorder::new(cfg.limits);
        Ok((
            Tls13ProverSession {
                cfg,
                suite,
                group,
                curve,
                rng,
                cots,
                ole: OleReceiver::new(ECTF_STREAM),
                schedule,
                plans: None,
                shares,
                blinds: (b1, b2),
                preferred: group,
                retry: None,
                setup: None,
                incoming: (0..STEPS).map(|_| Incoming::default()).collect(),
                client_hello: None,
                recorder,
                server_hello: None,
                kx: None,
                kdf: None,
                secrets: None,
                finished_sent: false,
                keys: None,
                dual,
                upload: DualUpload::default(),
                recs,
                powers: None,
                server_app_start: None,
                hashes: None,
                oles: Default::default(),
                server_done: false,
                closing: false,
                response: None,
                certificates: Vec::new(),
            },
            hello,
        ))
    }

    /// The circuits' schedules (about 200 ms of CPU for a 1 KB request in
    /// a process that has not built them before: the key schedule's steps,
    /// every record's circuit, every request record's keystream circuit):
    /// a driver calls this off the session's task while the verifier's
    /// first tables arrive, so neither the `Hello` nor the tables wait for
    /// them. Otherwise each is built when first needed.
    pub fn prepare(&mut self) -> Result<()> {
        self.kdf_plans()?;
        self.build_plans()?;
        for r in self.recs.iter_mut().filter(|r| !r.spec.computes_h()) {
            if r.dual.plan.is_none() && !r.dual.garbled() {
                r.dual.plan = Some(r.spec.keystream_plan()?);
            }
        }
        Ok(())
    }

    /// The key schedule's step schedules, built on first use.
    fn kdf_plans(&mut self) -> Result<&Tls13Plans> {
        if self.plans.is_none() {
            self.plans = Some(Tls13Plans::shared(self.schedule)?);
        }
        Ok(self.plans.as_ref().expect("set above"))
    }

    /// Every record circuit's schedule (and under ChaCha20-Poly1305 its
    /// tag circuit's), built on first use.
    fn build_plans(&mut self) -> Result<()> {
        for r in self.recs.iter_mut().filter(|r| r.plan.is_none()) {
            if r.spec.chacha {
                let (plan, tag) = r.spec.chacha_plans()?;
                r.plan = Some(plan);
                r.tag_plan = Some(tag);
            } else {
                r.plan = Some(r.spec.plan()?);
            }
        }
        Ok(())
    }

    /// Whether [`Self::next_upload`] has a message to give now: the
    /// labels once `Setup` came, or a request record's keystream
    /// garbling not all out. A driver sends uploads while this holds
    /// (beside reading the verifier's tables) and lets the request's
    /// records run only once it does not.
    pub fn upload_ready(&self) -> bool {
        let requests = self.recs.iter().filter(|r| !r.spec.computes_h());
        self.upload
            .ready(requests.map(|r| &r.dual), self.setup.is_some())
    }

    /// The next message of the prover's upload in preprocessing (dual
    /// execution): the labels of the verifier's key ‖ IV wires, then each
    /// request record's keystream garbling chunk by chunk (`DualTables`,
    /// then `DualEnd`), garbled as it goes; `None` when nothing is due.
    pub fn next_upload(&mut self) -> Result<Option<ProverMsg>> {
        if self.setup.is_none() {
            return Ok(None);
        }
        self.upload.next(
            &mut self.dual,
            &mut self.recs,
            |r| (!r.spec.computes_h()).then_some(&mut r.dual),
            |r| r.spec.keystream_plan(),
            &mut self.rng,
        )
    }

    /// A message from the verifier, encoded.
    pub fn on_verifier_bytes(&mut self, bytes: &[u8]) -> Result<ProverOutput> {
        self.on_verifier(VerifierMsg::decode(bytes)?)
    }

    /// A message from the verifier.
    pub fn on_verifier(&mut self, msg: VerifierMsg) -> Result<ProverOutput> {
        let mut out = ProverOutput::default();
        match msg {
            VerifierMsg::Setup {
                client_random,
                q_p256,
                q_x25519,
                dual_ot,
            } => {
                if self.setup.is_some() {
                    return Err(Error::Unexpected {
                        expected: "no second Setup",
                        got: "Setup",
                    });
                }
                self.setup = Some((client_random, q_p256, q_x25519.to_vec()));
                // Dual execution: the labels of the verifier's key ‖ IV
                // wires, then each request record's keystream garbled by
                // the prover, go up as uploads ([`Self::next_upload`])
                // while the verifier's tables come down.
                self.upload.set_labels(self.dual.verifier_labels(&dual_ot)?);
            }
            VerifierMsg::Tables { circuit, chunk } => {
                let limit = self.table_limit(circuit)?;
                let t = self.slot(circuit)?;
                let bytes: usize = t
                    .chunks
                    .iter()
                    .map(|c| c.len().max(webproof_mpc::CHUNK_HEADER))
                    .sum();
                if bytes + chunk.len().max(webproof_mpc::CHUNK_HEADER) > limit {
                    return Err(Error::Malformed("more garbled tables than the circuit has"));
                }
                t.chunks.push(chunk);
            }
            VerifierMsg::Decoding {
                circuit,
                decoding,
                early,
            } => {
                self.slot(circuit)?.end = Some((decoding, early));
            }
            VerifierMsg::RecPowers { id, msg } => {
                let done = if self.is_chacha() {
                    self.chacha_ahead(id, &msg)?
                } else {
                    self.answered_ahead(id, &msg)?;
                    id == super::rec::GHASH_RECORD
                };
                if done {
                    self.send_client_hello(&mut out)?;
                }
            }
            VerifierMsg::RecTagShare {
                id,
                tag,
                corrections,
                check,
            } => self.send_record(id, &tag, &corrections, &check, &mut out)?,
            VerifierMsg::EctfAnswer(m) => {
                let kx = self.kx.take().ok_or(Error::Unexpected {
                    expected: "no ECtF answer before KeyOpen",
                    got: "EctfAnswer",
                })?;
                self.oles.answer(ECTF_STREAM, &m);
                let (share, correction) = kx.finish(&m)?;
                let tables: Vec<StepTables> = std::mem::take(&mut self.incoming)
                    .into_iter()
                    .map(|t| {
                        let (d, e) = t
                            .end
                            .expect("every step's decoding came before the ClientHello");
                        (t.chunks.into(), d, e)
                    })
                    .collect();
                let plans = self.kdf_plans()?.clone();
                let mut kdf = Tls13Prover::new(&plans, super::KDF_INSTANCE, &share, tables)?;
                let macs = self.cots.take(plans.cots(0))?;
                let flips = kdf.flips(0, &macs)?;
                self.kdf = Some(kdf);
                out.to_verifier.push(ProverMsg::EctfCorrection(correction));
                out.to_verifier.push(ProverMsg::KdfFlips { step: 0, flips });
            }
            VerifierMsg::KdfInputs { step, msg } => {
                let kdf = self.kdf.as_mut().ok_or(Error::Unexpected {
                    expected: "no key-schedule inputs before the ECtF",
                    got: "KdfInputs",
                })?;
                let step = step as usize;
                if step > 0 {
                    // Chained to the step before's output: no COTs.
                    kdf.flips(step, &[])?;
                }
                if let Some(labels) = kdf.evaluate(step, &msg)? {
                    out.to_verifier.push(ProverMsg::KdfLabels {
                        step: step as u8,
                        labels,
                    });
                }
                match step {
                    1 => {
                        self.secrets = kdf.handshake_secrets();
                        self.try_finish_handshake(&mut out)?;
                    }
                    3 => {
                        self.keys = Some(kdf.key_shares()?);
                        self.run_records(&mut out)?;
                    }
                    _ => {}
                }
            }
            VerifierMsg::CloseAck {
                server_key,
                server_iv,
                client_key,
                client_iv,
            } => {
                if !self.closing || self.response.is_some() {
                    return Err(Error::Unexpected {
                        expected: "CloseAck once, after Close",
                        got: "CloseAck",
                    });
                }
                let revealed = KeyShares {
                    client_key,
                    server_key,
                    client_iv,
                    server_iv,
                };
                self.response = Some(self.decrypt_response(revealed)?);
            }
            VerifierMsg::Abort(reason) => return Err(Error::Aborted(reason)),
            m => {
                return Err(Error::Unexpected {
                    expected: "a message of a TLS 1.3 session",
                    got: m.name(),
                })
            }
        }
        Ok(out)
    }

    /// Circuit `circuit`'s tables, which must come in order after
    /// `Setup`: the key schedule's four steps, then the records by id.
    fn slot(&mut self, circuit: u8) -> Result<&mut Incoming> {
        let i = circuit as usize;
        let next = self
            .incoming
            .iter()
            .chain(self.recs.iter().flat_map(PRec::slots))
            .position(|t| t.end.is_none());
        if self.setup.is_none() || next != Some(i) {
            return Err(Error::Unexpected {
                expected: "the circuits' tables in order, after Setup",
                got: "tables of another circuit",
            });
        }
        let k = circuits_per_record(self.is_chacha());
        Ok(match i.checked_sub(STEPS) {
            None => &mut self.incoming[i],
            Some(j) if j % k == 1 => &mut self.recs[j / k].tag_tables,
            Some(j) => &mut self.recs[j / k].tables,
        })
    }

    /// Most bytes of chunks circuit `circuit` may take: its tables and, at
    /// worst, one chunk header per table (a verifier sending more is
    /// refused before the prover holds it).
    fn table_limit(&mut self, circuit: u8) -> Result<usize> {
        let i = circuit as usize;
        let k = circuits_per_record(self.is_chacha());
        let ands = match i.checked_sub(STEPS) {
            None => self.kdf_plans()?.and_counts()[i],
            Some(j) => {
                if j / k >= self.recs.len() {
                    return Err(Error::Malformed("tables of a circuit the session has not"));
                }
                self.build_plans()?;
                let r = &self.recs[j / k];
                match (j % k, &r.tag_plan) {
                    (1, Some(t)) => t.and_count(),
                    _ => r.plan.as_ref().expect("built").and_count(),
                }
            }
        };
        let ands = usize::try_from(ands).map_err(|_| Error::Malformed("circuit too large"))?;
        Ok(webproof_mpc::max_stream_bytes(ands))
    }

    /// The M2A answered ahead for record `id`, after every circuit's
    /// tables: each request record's hidden ciphertext in id order, then
    /// the powers of the GHASH key; the COTs are drawn here in the order
    /// the verifier drew its keys. After the last, the records' provers.
    fn answered_ahead(&mut self, id: u32, msg: &[u8]) -> Result<()> {
        let tables_done = self.recs.iter().all(|r| r.tables.end.is_some());
        let due = self
            .recs
            .iter()
            .position(|r| !r.spec.computes_h() && r.hidden.is_none())
            .map_or(super::rec::GHASH_RECORD, |i| i as u32);
        if !tables_done || id != due || self.recs.iter().any(|r| r.p.is_some()) {
            return Err(Error::Unexpected {
                expected: "each record's M2A once, in order, after every circuit's tables",
                got: "RecPowers",
            });
        }
        let i = id as usize;
        if self.recs[i].spec.computes_h() {
            let k = super::rec::ghash_powers(&self.recs.iter().map(|r| r.spec).collect::<Vec<_>>());
            let macs = self.cots.take(gcm::cots_needed(k))?;
            let r = &mut self.recs[i];
            let (ahead, flips) = RecordProver::powers_ahead(k, &mut r.ole, &macs, msg)?;
            r.ahead = Some(ahead);
            self.oles.choose(r.spec.stream(), macs, &flips);
            self.oles.answer(r.spec.stream(), msg);
            self.build_plans()?;
            for r in &mut self.recs {
                let t = core::mem::take(&mut r.tables);
                let (d, e) = t.end.expect("checked above");
                r.p = Some(RecordProver::new(
                    r.plan.clone().expect("built"),
                    r.spec.len,
                    r.spec.instance(),
                    (t.chunks.into(), d, e),
                    r.ahead.take(),
                    r.hidden.take(),
                )?);
            }
        } else {
            let macs = self.cots.take(gcm::hide_cots(self.recs[i].spec.len))?;
            let r = &mut self.recs[i];
            let (hidden, flips) = RecordProver::hide_ahead(r.spec.len, &mut r.ole, &macs, msg)?;
            r.hidden = Some(hidden);
            r.hidden_record.cots = macs.clone();
            self.oles.choose(r.spec.stream(), macs, &flips);
            self.oles.answer(r.spec.stream(), msg);
        }
        Ok(())
    }

    /// Whether the session's records are ChaCha20-Poly1305's.
    fn is_chacha(&self) -> bool {
        super::is_chacha(self.suite)
    }

    /// The index of record `id` among the session's (ChaCha20-Poly1305
    /// has no record 0).
    fn index(&self, id: u32) -> Option<usize> {
        self.recs.iter().position(|r| r.spec.id == id)
    }

    /// ChaCha20-Poly1305's OLEs answered ahead for record `id`, after
    /// every circuit's tables: per request record in id order the M2A of
    /// its powers of `r` (then the tag circuit's input COTs are drawn),
    /// then the bitwise OLEs that hide its ciphertext; the COTs drawn here
    /// in the order the verifier drew its keys. Returns whether
    /// preprocessing is over (the last record's hidden ciphertext): then
    /// every record's prover is built.
    fn chacha_ahead(&mut self, id: u32, msg: &[u8]) -> Result<bool> {
        let tables_done = self
            .recs
            .iter()
            .all(|r| r.tables.end.is_some() && r.tag_tables.end.is_some());
        let due = self
            .recs
            .iter()
            .position(|r| r.cc_powers.is_none() || r.cc_hidden.is_none());
        if !tables_done || due.is_none() || due != self.index(id) {
            return Err(Error::Unexpected {
                expected: "each record's OLEs once, in order, after every circuit's tables",
                got: "RecPowers",
            });
        }
        let i = due.expect("checked");
        let spec = self.recs[i].spec;
        if self.recs[i].cc_powers.is_none() {
            let macs = self.cots.take(chacha::cots_needed(AAD_LEN, spec.len))?;
            let r = &mut self.recs[i];
            let pending = ChachaProver::powers_choose(spec.len, AAD_LEN, &mut r.ole, &macs)?;
            r.cc_powers = Some(pending.finish(msg)?);
            // Bitwise OLEs: the choice bits are the inputs, no flips.
            self.oles.choose(spec.stream(), macs, &[]);
            self.oles.answer(spec.stream(), msg);
            self.recs[i].tag_macs = self.cots.take(chacha::TAG_COTS)?;
            return Ok(false);
        }
        let macs = self.cots.take(chacha::hide_cots(spec.len))?;
        let r = &mut self.recs[i];
        let pending = ChachaProver::hide_choose(spec.len, &mut r.ole, &macs)?;
        r.cc_hidden = Some(ChachaProver::hide_finish(pending, msg)?);
        r.hidden_record.cots = macs.clone();
        self.oles.choose(spec.stream(), macs, &[]);
        self.oles.answer(spec.stream(), msg);
        if i + 1 < self.recs.len() {
            return Ok(false);
        }
        self.build_plans()?;
        for r in &mut self.recs {
            let (t, tt) = (
                core::mem::take(&mut r.tables),
                core::mem::take(&mut r.tag_tables),
            );
            let ((d, e), (td, te)) = (
                t.end.expect("checked above"),
                tt.end.expect("checked above"),
            );
            let tag_plan = r.tag_plan.clone().expect("a ChaCha20 record's");
            r.cc = Some(ChachaProver::new(
                (r.plan.clone().expect("built"), tag_plan),
                r.spec.len,
                AAD_LEN,
                r.spec.chacha_instances(),
                ((t.chunks.into(), d, e), (tt.chunks.into(), td, te)),
                r.cc_powers.take().expect("answered"),
                r.cc_hidden.take(),
            )?);
        }
        Ok(true)
    }

    /// After the key schedule's last step: every record's circuit on the
    /// prover's client key ‖ IV share, chained to the labels step 3
    /// output. The GHASH record's offsets and each request record's
    /// masked ciphertext with its keystream labels go to the verifier;
    /// nothing goes to the server before the verifier's tag share and
    /// the keystream check.
    fn run_records(&mut self, out: &mut ProverOutput) -> Result<()> {
        let keys = self.keys.as_ref().expect("set before");
        let share = key_iv(keys);
        let kdf = self.kdf.as_ref().expect("set before");
        let (step, group) = KEY_OUTPUT;
        let kb = kdf.circuits()[step]
            .evaluator()
            .output_labels(group)?
            .to_vec();
        let labels = key_iv_wires(&kb, self.recs[0].spec.key_len, IV_LEN)?;
        // The verifier checks each record's keystream against the
        // prover's garbling: all of it must be out first.
        if self.upload_ready() {
            return Err(Error::OutOfOrder(
                "the records before the prover's keystream garblings were uploaded",
            ));
        }
        for r in &mut self.recs {
            if let Some(p) = r.cc.as_mut() {
                // ChaCha20-Poly1305: the tag request with the ciphertext
                // masked twice by COT choice bits (the verifier never sees
                // it); the tag waits for the dual execution's check.
                let ks = p.keystream(&labels, &share)?;
                r.ct = r.inner.iter().zip(&ks).map(|(a, b)| a ^ b).collect();
                let ks_labels = p.circuits().0.evaluator().output_labels(0)?.to_vec();
                r.dual.decoded(&ks, ks_labels)?;
                let macs = core::mem::take(&mut r.tag_macs);
                let request = p.hidden_tag_request(&r.spec.aad(), &r.ct, &macs)?;
                let cots = core::mem::take(&mut r.hidden_record.cots);
                r.hidden_record =
                    crate::rec::HiddenRecord::chacha_of(r.spec.len, AAD_LEN, &request, &cots)?;
                out.to_verifier.push(ProverMsg::RecCiphertext {
                    id: r.spec.id,
                    ct: Vec::new(),
                    offsets: request,
                    labels: self.dual.prover_labels(&share)?,
                });
                continue;
            }
            let p =
                r.p.as_mut()
                    .ok_or(Error::OutOfOrder("records before their tables"))?;
            let (ks, offsets) = p.keystream(&labels, &share)?;
            if r.spec.computes_h() {
                self.powers = Some(p.power_shares().expect("computes H").to_vec());
                out.to_verifier.push(ProverMsg::RecCiphertext {
                    id: r.spec.id,
                    ct: Vec::new(),
                    offsets,
                    labels: Vec::new(),
                });
                continue;
            }
            r.ct = r.inner.iter().zip(&ks).map(|(a, b)| a ^ b).collect();
            let ks_labels = p.circuit().evaluator().output_labels(0)?.to_vec();
            r.dual.decoded(&ks, ks_labels)?;
            let masked = p.mask_ciphertext(&r.ct)?;
            r.hidden_record.masked = masked[..r.spec.len].to_vec();
            out.to_verifier.push(ProverMsg::RecCiphertext {
                id: r.spec.id,
                ct: masked,
                offsets: Vec::new(),
                labels: self.dual.prover_labels(&share)?,
            });
        }
        Ok(())
    }

    /// The verifier's tag share of request record `id`: the keystream
    /// checked against the verifier's evaluation of the prover's own
    /// garbling first (dual execution), then the tag, then the record to
    /// the server.
    fn send_record(
        &mut self,
        id: u32,
        tag: &[u8; 16],
        corrections: &[u8],
        check: &[u8],
        out: &mut ProverOutput,
    ) -> Result<()> {
        let due = self
            .recs
            .iter()
            .position(|r| !r.spec.computes_h() && !r.sent);
        if due.is_none()
            || due != self.index(id)
            || !self.recs.iter().all(|r| r.ct.len() == r.inner.len())
        {
            return Err(Error::Unexpected {
                expected: "the tag shares of the request's records in order, after they ran",
                got: "RecTagShare",
            });
        }
        let powers = self.powers.as_deref();
        let r = &mut self.recs[due.expect("checked")];
        r.dual
            .check(check, "a tag share before the record's garbling")?;
        let aad = r.spec.aad();
        let t = match (r.cc.as_mut(), r.p.as_mut(), powers) {
            // ChaCha20-Poly1305: `corrections` carries the tag circuit's
            // input labels; there is no tag share.
            (Some(p), _, _) if *tag == [0; 16] => p.tag(corrections)?,
            (Some(_), _, _) => return Err(Error::Malformed("a tag share for a ChaCha20 record")),
            (None, Some(p), Some(powers)) => p.hidden_tag(tag, corrections, powers, &aad, &r.ct)?,
            _ => {
                return Err(Error::Unexpected {
                    expected: "no tag share before the records ran",
                    got: "RecTagShare",
                })
            }
        };
        out.to_server.extend_from_slice(&aad);
        out.to_server.extend_from_slice(&r.ct);
        out.to_server.extend_from_slice(&t);
        // Both recordings keep the record's place, type and length only.
        self.recorder
            .feed(Direction::Sent, &hidden_record(&r.spec))?;
        r.sent = true;
        out.to_verifier.push(ProverMsg::RecSent { id });
        Ok(())
    }

    /// Preprocessing is done: the ClientHello with the joint key share
    /// (the prover's public share plus the verifier's, the verifier's
    /// known only now, after the prover committed to its own).
    fn send_client_hello(&mut self, out: &mut ProverOutput) -> Result<()> {
        let ch = self.write_client_hello()?;
        self.client_hello = Some(ch.clone());
        self.send_handshake(ch, out)
    }

    /// The ClientHello with the joint key share of the current group (the
    /// terms', or after a HelloRetryRequest the other).
    fn write_client_hello(&self) -> Result<Message> {
        let (random, q256, q25519) = self.setup.clone().ok_or(Error::OutOfOrder("ClientHello"))?;
        let q = match self.curve {
            Curve::P256 => q256,
            Curve::X25519 => q25519,
        };
        let joint = self.shares.client_share(self.curve, &q)?;
        let name = &self.cfg.server_name;
        let sni = name
            .parse::<core::net::IpAddr>()
            .is_err()
            .then_some(name.as_str());
        let ch = client_hello(&random, sni, self.suite, self.preferred, self.group, &joint);
        Ok(Message {
            typ: ch[0],
            bytes: ch,
        })
    }

    /// A handshake message in the clear to the server and, as the bytes
    /// sent, to the verifier.
    fn send_handshake(&mut self, msg: Message, out: &mut ProverOutput) -> Result<()> {
        let bytes = record(content_type::HANDSHAKE, &msg.bytes);
        self.recorder.feed(Direction::Sent, &bytes)?;
        out.to_server.extend_from_slice(&bytes);
        out.to_verifier.push(ProverMsg::ToServer(bytes));
        Ok(())
    }

    /// Bytes from the server, exactly as received.
    pub fn on_server_bytes(&mut self, bytes: &[u8]) -> Result<ProverOutput> {
        let mut out = ProverOutput::default();
        if self.client_hello.is_none() || self.closing {
            return Err(Error::OutOfOrder(
                "server bytes before the ClientHello or after Close",
            ));
        }
        self.recorder.feed(Direction::Received, bytes)?;
        out.to_verifier.push(ProverMsg::FromServer(bytes.to_vec()));
        if self.server_hello.is_none() {
            let (msgs, next) = clear_messages(&self.recorder.transcript().received)?;
            let mut sh = msgs.first();
            if let Some(hrr) = sh.filter(|m| is_hrr(m)) {
                if self.retry.is_none() {
                    // The server runs only the other group: the second
                    // ClientHello, the same but for the key share.
                    let g = check_hrr(hrr, self.suite, self.preferred)?;
                    self.group = g;
                    self.curve = group_curve(g);
                    let ch2 = self.write_client_hello()?;
                    self.retry = Some((hrr.clone(), ch2.clone()));
                    self.send_handshake(ch2, &mut out)?;
                }
                sh = msgs.get(1);
            }
            if let Some(sh) = sh {
                let server_key = check_server_hello(sh, self.suite, self.group)?;
                self.server_hello = Some((sh.clone(), next));
                let macs = self.cots.take(ectf_cots(self.curve))?;
                let (kx, flips) = ProverKx::start(
                    &self.shares,
                    self.curve,
                    &server_key,
                    &mut self.ole,
                    &macs,
                    &mut self.rng,
                )?;
                self.oles.choose(ECTF_STREAM, macs, &flips);
                self.kx = Some(kx);
                let blind = match self.curve {
                    Curve::P256 => self.blinds.0,
                    Curve::X25519 => self.blinds.1,
                };
                out.to_verifier.push(ProverMsg::KeyOpen {
                    public: self.shares.public(self.curve),
                    blind,
                    flips,
                });
            }
        }
        self.try_finish_handshake(&mut out)?;
        Ok(out)
    }

    /// Once the handshake secrets are revealed and the server's flight is
    /// whole: check the server Finished over the transcript the prover
    /// saw, and send the client Finished (to the server, and to the
    /// verifier as `ToServer`, which checks it against its own).
    fn try_finish_handshake(&mut self, out: &mut ProverOutput) -> Result<()> {
        if self.finished_sent {
            return Ok(());
        }
        let (Some(secrets), Some((sh, next)), Some(ch)) =
            (&self.secrets, &self.server_hello, &self.client_hello)
        else {
            return Ok(());
        };
        let Some(flight) = read_flight(
            &self.recorder.transcript().received,
            *next,
            self.suite,
            secrets,
        )?
        else {
            return Ok(());
        };
        let h = self.suite.hash();
        let retry = self.retry.as_ref().map(|(h, c)| (h, c));
        let mut transcript = hello_transcript(self.suite, ch, retry, sh);
        let hello_hash = h.hash(&transcript);
        let [ee, cert, cv, fin] = &flight.messages;
        for m in [ee, cert, cv] {
            transcript.extend_from_slice(&m.bytes);
        }
        secrets
            .check_server_finished(&h.hash(&transcript), fin.body())
            .map_err(|_| Error::ServerFinished)?;
        transcript.extend_from_slice(&fin.bytes);
        let finished_hash = h.hash(&transcript);
        let vd = secrets.client_verify_data(&finished_hash);
        self.hashes = Some((hello_hash, finished_hash));
        self.certificates = webproof_tls::handshake::parse_certificate(cert.body(), true)?;
        let rec = client_finished_record(self.suite, secrets, &vd)?;
        self.recorder.feed(Direction::Sent, &rec)?;
        out.to_server.extend_from_slice(&rec);
        out.to_verifier.push(ProverMsg::ToServer(rec));
        self.finished_sent = true;
        self.server_app_start = Some(flight.records);
        Ok(())
    }

    /// The server closed the TCP connection.
    pub fn on_server_closed(&mut self) -> Result<ProverOutput> {
        self.server_done = true;
        Ok(ProverOutput {
            to_verifier: vec![ProverMsg::ServerClosed],
            to_server: Vec::new(),
        })
    }

    /// The prover ends the session (the caller decides when the response
    /// is complete): `Close` with the records it saw, after which the
    /// verifier's `CloseAck` reveals its key shares.
    pub fn close(&mut self) -> Result<ProverMsg> {
        let start = self.server_app_start.ok_or(Error::OutOfOrder("Close"))?;
        if !self.request_sent() || self.closing {
            return Err(Error::OutOfOrder("Close"));
        }
        self.closing = true;
        Ok(ProverMsg::Close {
            sent: self.recs.iter().filter(|r| !r.spec.computes_h()).count() as u32,
            received: (self.recorder.transcript().received.len() - start) as u32,
        })
    }

    /// The server's records after its Finished under the server
    /// application key, the prover's share XOR the verifier's revealed
    /// one: application data kept in order, NewSessionTicket messages
    /// skipped, a KeyUpdate refused (a key the 2PC did not derive), an
    /// alert the last record.
    fn decrypt_response(&self, revealed: KeyShares) -> Result<Response13> {
        use webproof_tls::aead::RecordCipher;
        use webproof_tls::handshake::{msg_type, Reassembler};
        use webproof_tls::keys::TrafficKeys;
        let own = self.keys.as_ref().ok_or(Error::OutOfOrder("CloseAck"))?;
        let full = revealed.combine(own);
        let cipher = RecordCipher::new(
            self.suite,
            TrafficKeys {
                key: full.server_key,
                iv: full.server_iv,
            },
        )?;
        let start = self.server_app_start.ok_or(Error::OutOfOrder("CloseAck"))?;
        let mut out = Response13 {
            response: Vec::new(),
            close_notify: false,
            server_alert: None,
            tickets: 0,
            revealed,
            records: Vec::new(),
            alert: None,
        };
        let mut hs = Reassembler::default();
        let recs = &self.recorder.transcript().received;
        for (seq, (i, rec)) in recs.iter().enumerate().skip(start).enumerate() {
            if out.close_notify || out.server_alert.is_some() {
                return Err(Error::Recording("a server record after its alert".into()));
            }
            let o = cipher
                .open(seq as u64, rec)
                .map_err(|_| Error::Decrypt { index: i })?;
            out.records.push((o.content_type, o.data.len()));
            match o.content_type {
                content_type::APPLICATION_DATA => out.response.extend_from_slice(&o.data),
                content_type::HANDSHAKE => {
                    hs.push(&o.data)?;
                    while let Some(m) = hs.next_message()? {
                        match m.typ {
                            msg_type::NEW_SESSION_TICKET => out.tickets += 1,
                            msg_type::KEY_UPDATE => {
                                return Err(Error::Unsupported(
                                    "a KeyUpdate from the server (the 2PC derived one \
                                     application key per direction)"
                                        .into(),
                                ))
                            }
                            _ => {
                                return Err(Error::Unexpected {
                                    expected: "NewSessionTicket after the handshake",
                                    got: "another handshake message",
                                })
                            }
                        }
                    }
                }
                content_type::ALERT => match o.data[..] {
                    [l, 0] => {
                        out.close_notify = true;
                        out.alert = Some([l, 0]);
                    }
                    [l, d] => {
                        out.server_alert = Some(d);
                        out.alert = Some([l, d]);
                    }
                    _ => return Err(Error::Malformed("a server alert that is not two bytes")),
                },
                t => return Err(Error::ServerEncrypted(t)),
            }
        }
        if !hs.is_empty() {
            return Err(Error::Recording(
                "a partial handshake message from the server".into(),
            ));
        }
        Ok(out)
    }

    /// What the prover decrypted after `CloseAck`.
    pub fn response(&self) -> Option<&Response13> {
        self.response.as_ref()
    }

    /// For the proof of the response: the active labels of the key
    /// schedule's key-block output (IT-MACs under the verifier's `Δ`) and
    /// the prover's shares of the key block, after `CloseAck`.
    pub(crate) fn key_block(&self) -> Result<(Vec<Block>, KeyShares)> {
        let (Some(kdf), Some(keys)) = (&self.kdf, &self.keys) else {
            return Err(Error::OutOfOrder("the proof before the key schedule"));
        };
        let (step, group) = KEY_OUTPUT;
        let labels = kdf.circuits()[step]
            .evaluator()
            .output_labels(group)?
            .to_vec();
        Ok((labels, keys.clone()))
    }

    /// What the audit needs of every circuit the prover evaluated, in
    /// order: the key schedule's steps, then the records by id.
    pub(crate) fn evaluated_runs(&self) -> Result<Vec<webproof_mpc::consistency::EvaluatedRun>> {
        let kdf = self.kdf.as_ref().ok_or(Error::OutOfOrder("the audit"))?;
        let mut runs = Vec::new();
        for c in kdf.circuits() {
            runs.push(c.retain()?);
        }
        for r in &self.recs {
            if let Some(p) = &r.cc {
                let (record, tag) = p.circuits();
                runs.push(record.retain()?);
                runs.push(tag.retain()?);
                continue;
            }
            let p = r.p.as_ref().ok_or(Error::OutOfOrder("the audit"))?;
            runs.push(p.circuit().retain()?);
        }
        Ok(runs)
    }

    /// The run (of [`Self::evaluated_runs`]) of the ChaCha20-Poly1305
    /// record circuit whose OLE stream is `stream`, and its length.
    pub(crate) fn chacha_stream(&self, stream: u64) -> Option<(usize, usize)> {
        let j = self
            .recs
            .iter()
            .position(|r| r.spec.chacha && r.spec.stream() == stream)?;
        Some((STEPS + 2 * j, self.recs[j].spec.len))
    }

    /// The OLE batches the prover logged, per stream in the order they
    /// started (the request records' hidden M2A, the GHASH record's
    /// powers, the ECtF), and the negotiated curve (the ECtF's field).
    pub(crate) fn ole_log(&self) -> (&crate::consist::OleLog, Curve) {
        (&self.oles, self.curve)
    }

    /// The verifier's revealed inputs (`revealed[i]`: its groups of run
    /// `i` of [`Self::evaluated_runs`]) against what the protocol makes
    /// them, and its key shares in `CloseAck` against its masks.
    pub(crate) fn check_revealed_inputs(&self, revealed: &[Vec<Vec<bool>>]) -> Result<()> {
        let kdf = self.kdf.as_ref().ok_or(Error::OutOfOrder("the audit"))?;
        let (hello, finished) = self.hashes.as_ref().ok_or(Error::OutOfOrder("the audit"))?;
        let r = self
            .response
            .as_ref()
            .ok_or(Error::OutOfOrder("the audit"))?;
        let k = circuits_per_record(self.is_chacha());
        if revealed.len() != STEPS + k * self.recs.len() {
            return Err(Error::Malformed("revealed inputs of another session"));
        }
        let masks = crate::kdf::tls13::check_verifier_inputs(
            super::schedule_of(self.suite)?,
            self.curve,
            hello,
            finished,
            &revealed[..STEPS],
            &kdf.revealed(),
        )
        .map_err(crate::response::mpc_err)?;
        if masks != r.revealed {
            return Err(Error::VerifierCheated(
                "its key shares in CloseAck are not its masks of the key block".into(),
            ));
        }
        let share = key_iv(&masks);
        for (rec, inputs) in self.recs.iter().zip(revealed[STEPS..].chunks(k)) {
            if rec.spec.chacha {
                // Its key ‖ IV share, the sequence number, `t` canonical
                // and nonzero; the tag circuit's pad of `s` the record
                // circuit's.
                chacha::check_verifier_inputs(&share, rec.spec.seq(), &inputs[0])
                    .map_err(crate::response::mpc_err)?;
                chacha::check_tag_inputs(&inputs[0], &inputs[1])
                    .map_err(crate::response::mpc_err)?;
                continue;
            }
            let inputs = &inputs[0];
            gcm::check_verifier_inputs(
                &share,
                &rec.spec.seq().to_be_bytes(),
                inputs,
                rec.spec.computes_h(),
            )
            .map_err(crate::response::mpc_err)?;
        }
        Ok(())
    }

    /// The request's records as the proof of the request takes them, in
    /// order: masked ciphertext and the COT MACs of their masks.
    pub(crate) fn hidden_records(&self) -> Vec<crate::rec::HiddenRecord> {
        self.recs
            .iter()
            .filter(|r| !r.spec.computes_h())
            .map(|r| r.hidden_record.clone())
            .collect()
    }

    /// The request, as the prover wrote it.
    pub(crate) fn request(&self) -> &[u8] {
        &self.cfg.request
    }

    /// Index of the first server record after its Finished.
    pub(crate) fn server_app_start(&self) -> Option<usize> {
        self.server_app_start
    }

    /// The server's certificate chain, leaf first, once its flight is
    /// read.
    pub fn certificates(&self) -> &[Vec<u8>] {
        &self.certificates
    }

    /// The server closed the connection.
    pub fn server_done(&self) -> bool {
        self.server_done
    }

    /// Every request record went to the server.
    pub fn request_sent(&self) -> bool {
        self.recs.iter().all(|r| r.spec.computes_h() || r.sent)
    }

    /// The handshake is done on the prover's side: the client Finished is
    /// sent and the application keys are shared.
    pub fn handshake_done(&self) -> bool {
        self.finished_sent && self.keys.is_some()
    }

    /// The prover's shares of the application keys and IVs, after the key
    /// schedule's last step.
    pub fn key_shares(&self) -> Option<&KeyShares> {
        self.keys.as_ref()
    }

    /// The handshake traffic secrets, once revealed.
    pub fn handshake_secrets(&self) -> Option<&HandshakeSecrets> {
        self.secrets.as_ref()
    }

    /// The session's suite.
    pub fn suite(&self) -> webproof_tls::CipherSuite {
        self.suite
    }

    /// The prover's recording of the session so far.
    pub fn recording(&self) -> &webproof_tls::Recording {
        self.recorder.transcript()
    }
}
