//! The verifier's session of MPC mode over TLS 1.3: the garbler of the
//! ECtF, the key schedule and the request's records (and the evaluator of
//! the prover's garbling of their keystream), the party that checks the
//! server's identity on the bytes it recorded itself, and the recorder of
//! every record both ways.
//!
//! Where every public value it uses comes from:
//! - the client random: its own (`Setup`), found in the ClientHello;
//! - the client key share: the sum of its own public share and the
//!   prover's, opened (`KeyOpen`) against the commitment the prover sent
//!   before it saw the verifier's (the other group's after a
//!   HelloRetryRequest, in the second ClientHello);
//! - the ClientHello(s), the HelloRetryRequest if any and the
//!   ServerHello, the hash of the transcript through them (the key
//!   schedule's step 1 input), the server's key share (the ECtF's point):
//!   its recording of the bytes the prover forwarded both ways;
//! - the handshake traffic secrets: the key schedule's step 1, whose
//!   revealed labels it checks ([`crate::kdf::tls13::Tls13Verifier::receive`]);
//! - the certificate chain, the CertificateVerify, the server Finished,
//!   the hash of ClientHello..server Finished (the step 2 input) and the
//!   client Finished: its own decryption of its recording under those
//!   secrets, checked by proxy mode's TLS 1.3 verifier
//!   ([`webproof_tls::verify::check_handshake`]) against its roots, the
//!   session's server name and time;
//! - the request records' lengths (the prover's `Hello`), sequence
//!   numbers and headers: from the record ids (`super::rec`); their
//!   masked ciphertexts (ChaCha20-Poly1305: the two copies `D¹`, `D²`
//!   with the offsets and the tag circuit's flips): the prover's
//!   `RecCiphertext` (the verifier never sees a request's ciphertext);
//! - the server's records after its Finished: its recording.

use super::hello::{
    check_client_hello, check_hrr, check_server_hello, clear_messages, hello_transcript, is_hrr,
};
use super::rec::{check_lens, circuits_per_record, ghash_powers, hidden_record, Spec, AAD_LEN};
use crate::cots::CotPool;
use crate::error::{Error, Result};
use crate::hello::group_curve;
use crate::kdf::tls12::{Curve, KeyShares};
use crate::kdf::tls13::{HandshakeSecrets, Tls13Plans, Tls13Verifier, IV_LEN, KEY_OUTPUT, STEPS};
use crate::keyx::keyshare;
use crate::keyx::{ectf_cots, Shares, VerifierKx, VerifierKx2, ECTF_STREAM};
use crate::msg::{ProverMsg, VerifierMsg};
use crate::rec::answer;
use crate::rec::chacha::{self, ChachaVerifier};
use crate::rec::dual::{DualVerifier, RecordEvaluation};
use crate::rec::gcm::{self, RecordVerifier};
use crate::rec::{key_iv, key_iv_wires, ChachaTables};
use crate::verifier::VerifierConfig;
use rand_chacha::ChaCha20Rng;
use rand_core::{CryptoRng, RngCore, SeedableRng};
use webproof_core::Block;
use webproof_mpc::field::Gf128;
use webproof_mpc::ole::OleSender;
use webproof_tls::handshake::{Message, Reassembler};
use webproof_tls::record::content_type;
use webproof_tls::statement::PublicInputs;
use webproof_tls::verify::{self, SecretsSource, SessionInfo};
use webproof_tls::TlsError;
use webproof_tls::{Direction, KxGroup, Recorder};

/// Where the session is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Waiting for the prover's `Hello`.
    Hello,
    /// Preprocessed: waiting for the ClientHello, then the ServerHello and
    /// the opening.
    Handshake,
    /// The ECtF answered: waiting for its correction.
    Ectf,
    /// The key schedule runs, then the records and the response.
    Kdf,
    /// `CloseAck` sent: the recording is final.
    Closed,
}

/// The verifier of a TLS 1.3 session.
pub struct Tls13VerifierSession {
    cfg: VerifierConfig,
    /// The suite of the prover's terms (one of [`super::SUITES`]).
    suite: webproof_tls::CipherSuite,
    delta: Block,
    rng: ChaCha20Rng,
    cots: CotPool,
    ole: OleSender,
    shares: Shares,
    client_random: [u8; 32],
    stage: Stage,
    commits: ([u8; 32], [u8; 32]),
    /// The terms' group (the first ClientHello's key share).
    group: Option<(KxGroup, Curve)>,
    /// The group of the ServerHello (the terms', or the other after a
    /// HelloRetryRequest).
    shared: Option<(KxGroup, Curve)>,
    /// After a HelloRetryRequest, the second ClientHello.
    client_hello2: Option<Message>,
    recorder: Recorder,
    client_hello: Option<Message>,
    /// The ServerHello, the server's key share, the hash of
    /// ClientHello..ServerHello.
    server_hello: Option<(Vec<u8>, Vec<u8>)>,
    kx: Option<VerifierKx2>,
    kdf: Option<Tls13Verifier>,
    plans: Option<Tls13Plans>,
    secrets: Option<HandshakeSecrets>,
    identity: Option<SessionInfo>,
    keys_shared: bool,
    dual: Option<DualVerifier>,
    recs: Vec<VRec>,
    /// The circuit whose tables stream next ([`Self::next_tables`]): the
    /// key schedule's steps, then the records'.
    garbling: Option<usize>,
    /// The M2A answered ahead still to send (record, hidden ciphertext or
    /// powers), popped from the back.
    ahead_due: Vec<(usize, bool)>,
    /// The verifier's shares of the powers of the client's GHASH key.
    powers: Option<Vec<Gf128>>,
    /// Index of the first server record after its Finished.
    server_app_start: Option<usize>,
}

/// The verifier's side of one record in 2PC.
struct VRec {
    spec: Spec,
    v: VCircuits,
    ole: OleSender,
    /// The keystream pads' COT keys (dual execution).
    pad_keys: Vec<Block>,
    /// Its evaluation of the prover's garbling of the keystream.
    eval: Option<RecordEvaluation>,
    /// A request record's masked ciphertext as received and the keys of
    /// its hidden M2A's COTs: what the proof of the request takes.
    hidden: crate::rec::HiddenRecord,
    tagged: bool,
    sent: bool,
}

impl VRec {
    /// A request record's dual-execution check value
    /// ([`answer::check_value`]): its evaluation of the prover's garbling
    /// of the keystream against its own garbling's keystream 0-labels.
    /// The schedule was set with the evaluation; built again only if not.
    fn check_value(
        &mut self,
        dual: Option<&DualVerifier>,
        labels: &[u8],
        delta: Block,
    ) -> Result<[u8; crate::rec::dual::CHECK_LEN]> {
        let gv_zero = match &self.v {
            VCircuits::Gcm(v) => v.circuit().garbler().output_zero_labels(0)?,
            VCircuits::Chacha(cc) => cc.v.circuits().0.garbler().output_zero_labels(0)?,
        };
        let spec = self.spec;
        answer::check_value(
            self.eval.as_mut(),
            dual,
            || spec.keystream_plan(),
            labels,
            gv_zero,
            &self.pad_keys,
            delta,
        )
    }
}

/// A record's garbling: AES-GCM's one circuit, or ChaCha20-Poly1305's
/// two.
enum VCircuits {
    Gcm(Box<RecordVerifier>),
    Chacha(Box<VChacha>),
}

/// A ChaCha20-Poly1305 record (`crate::rec::chacha`): its 2PC, both
/// circuits' tables once garbled (garbled at once when the record's turn
/// to stream comes, then streamed chunk by chunk: chunks left, last
/// first; decoding; early labels), the tag circuit's input COT keys,
/// drawn with the powers'.
struct VChacha {
    v: ChachaVerifier,
    tables: ChachaTables,
    tag_keys: Vec<Block>,
}

impl VRec {
    /// AES-GCM's record verifier.
    fn gcm(&mut self) -> Result<&mut RecordVerifier> {
        match &mut self.v {
            VCircuits::Gcm(v) => Ok(v.as_mut()),
            VCircuits::Chacha(_) => Err(Error::Malformed("an AES-GCM step of a ChaCha20 record")),
        }
    }

    /// ChaCha20-Poly1305's.
    fn chacha(&mut self) -> Result<&mut VChacha> {
        match &mut self.v {
            VCircuits::Chacha(c) => Ok(c),
            VCircuits::Gcm(_) => Err(Error::Malformed("a ChaCha20 step of an AES-GCM record")),
        }
    }
}

impl Tls13VerifierSession {
    /// A session under the COT correlation `delta` with its COT keys.
    pub fn new(
        cfg: VerifierConfig,
        delta: Block,
        cots: CotPool,
        rng: &mut (impl RngCore + CryptoRng),
    ) -> Self {
        let mut rng = ChaCha20Rng::from_rng(rng).expect("ChaCha20 seeding from an RNG");
        let shares = Shares::random(&mut rng);
        let mut client_random = [0u8; 32];
        rng.fill_bytes(&mut client_random);
        let recorder = Recorder::new(cfg.limits);
        Tls13VerifierSession {
            cfg,
            suite: super::SUITE,
            delta,
            rng,
            cots,
            ole: OleSender::new(delta, ECTF_STREAM),
            shares,
            client_random,
            stage: Stage::Hello,
            commits: ([0; 32], [0; 32]),
            group: None,
            shared: None,
            client_hello2: None,
            recorder,
            client_hello: None,
            server_hello: None,
            kx: None,
            kdf: None,
            plans: None,
            secrets: None,
            identity: None,
            keys_shared: false,
            dual: None,
            recs: Vec::new(),
            garbling: None,
            ahead_due: Vec::new(),
            powers: None,
            server_app_start: None,
        }
    }

    /// A message from the prover, encoded.
    pub fn on_bytes(&mut self, bytes: &[u8]) -> Result<Vec<VerifierMsg>> {
        self.on_message(ProverMsg::decode(bytes)?)
    }

    /// A message from the prover; the answers to send, in order.
    pub fn on_message(&mut self, msg: ProverMsg) -> Result<Vec<VerifierMsg>> {
        let name = msg.name();
        let unexpected = |expected| Error::Unexpected {
            expected,
            got: name,
        };
        // Until every table is out, only the prover's own upload may come:
        // no input label of a circuit goes before all of its tables.
        if self.streaming()
            && !matches!(
                msg,
                ProverMsg::DualLabels(_) | ProverMsg::DualTables { .. } | ProverMsg::DualEnd { .. }
            )
        {
            return Err(unexpected(
                "only the prover's upload while the tables stream",
            ));
        }
        let mut out = Vec::new();
        match (msg, self.stage) {
            (
                ProverMsg::Hello {
                    commit_p256,
                    commit_x25519,
                    terms,
                    request_lens,
                    dual_ot,
                },
                Stage::Hello,
            ) => {
                out = self.preprocess(commit_p256, commit_x25519, terms, &request_lens, &dual_ot)?
            }
            (ProverMsg::DualLabels(m), s) if s != Stage::Hello => {
                self.dual.as_mut().expect("set at Hello").take_labels(&m)?
            }
            (ProverMsg::DualTables { id, chunk }, s) if s != Stage::Hello => {
                self.evaluation(id)?.push_chunk(chunk)?
            }
            (ProverMsg::DualEnd { id, end }, s) if s != Stage::Hello => {
                self.evaluation(id)?.end(&end)?
            }
            (
                ProverMsg::RecCiphertext {
                    id,
                    ct,
                    offsets,
                    labels,
                },
                Stage::Kdf,
            ) if self.keys_shared => out.extend(self.on_ciphertext(id, ct, &offsets, &labels)?),
            (ProverMsg::RecSent { id }, Stage::Kdf) => {
                let due = self
                    .recs
                    .iter()
                    .position(|r| !r.spec.computes_h() && !r.sent);
                let at = self.index(id);
                match at.and_then(|j| self.recs.get_mut(j)) {
                    Some(r) if due.is_some() && due == at && r.tagged => {
                        self.recorder
                            .feed(Direction::Sent, &hidden_record(&r.spec))?;
                        r.sent = true;
                    }
                    _ => {
                        return Err(unexpected(
                            "each request record sent once, in order, after its tag share",
                        ))
                    }
                }
            }
            (ProverMsg::ToServer(bytes), s) if s != Stage::Hello && s != Stage::Closed => {
                if self.identity.is_some() {
                    return Err(Error::ClientRecord(
                        "client bytes forwarded after the Finished (request records go as RecSent)",
                    ));
                }
                self.recorder.feed(Direction::Sent, &bytes)?;
                if self.client_hello.is_none() {
                    self.take_client_hello()?;
                } else {
                    // The second ClientHello, after a HelloRetryRequest.
                    if self.server_hello.is_none() {
                        self.take_server_hello()?;
                    }
                    self.try_check_handshake(&mut out)?;
                }
            }
            (ProverMsg::FromServer(bytes), s) if s != Stage::Hello && s != Stage::Closed => {
                if self.client_hello.is_none() {
                    return Err(unexpected("the ClientHello before the server's bytes"));
                }
                self.recorder.feed(Direction::Received, &bytes)?;
                if self.server_hello.is_none() {
                    self.take_server_hello()?;
                }
                self.try_check_handshake(&mut out)?;
            }
            (
                ProverMsg::KeyOpen {
                    public,
                    blind,
                    flips,
                },
                Stage::Handshake,
            ) => {
                let (preferred, _) = self.group.expect("set at Hello");
                let (group, curve) = self
                    .shared
                    .ok_or(unexpected("the ServerHello before the opening"))?;
                let (_, server_key) = self
                    .server_hello
                    .as_ref()
                    .ok_or(unexpected("the ServerHello before the opening"))?;
                let commit = match curve {
                    Curve::P256 => self.commits.0,
                    Curve::X25519 => self.commits.1,
                };
                keyshare::check_opening(&commit, &public, &blind)?;
                // The ClientHello's key share must be the sum of the
                // committed share and the verifier's own.
                let joint = self.shares.client_share(curve, &public)?;
                // The ClientHello whose key share the server took.
                let ch = self
                    .client_hello2
                    .as_ref()
                    .or(self.client_hello.as_ref())
                    .expect("before the ServerHello");
                check_client_hello(
                    ch,
                    &self.client_random,
                    &self.cfg.verify.server_name,
                    self.suite,
                    preferred,
                    group,
                    &joint,
                )?;
                let kx = VerifierKx::new(&self.shares, curve, server_key)?;
                let keys = self.cots.take(ectf_cots(curve))?;
                let (kx2, m) = kx.respond(&mut self.ole, &keys, &flips, &mut self.rng)?;
                self.kx = Some(kx2);
                out.push(VerifierMsg::EctfAnswer(m));
                self.stage = Stage::Ectf;
            }
            (ProverMsg::EctfCorrection(c), Stage::Ectf) => {
                let share = self.kx.take().expect("set with the answer").finish(&c)?;
                let (_, curve) = self.shared.expect("set with the ServerHello");
                let (hash, _) = self.server_hello.as_ref().expect("before the opening");
                self.kdf
                    .as_mut()
                    .expect("garbled at Hello")
                    .bind(&share, curve, hash)?;
                self.stage = Stage::Kdf;
            }
            (ProverMsg::KdfFlips { step: 0, flips }, Stage::Kdf) => {
                let n = self.plans.as_ref().expect("set at Hello").cots(0);
                let keys = self.cots.take(n)?;
                let msg = self.kdf_mut().inputs(0, &keys, &flips)?;
                out.push(VerifierMsg::KdfInputs { step: 0, msg });
            }
            (ProverMsg::KdfLabels { step, labels }, Stage::Kdf) => {
                self.kdf_mut().receive(step as usize, &labels)?;
                match step {
                    0 => {
                        let msg = self.kdf_mut().inputs(1, &[], &[])?;
                        out.push(VerifierMsg::KdfInputs { step: 1, msg });
                    }
                    1 => {
                        self.secrets = self.kdf_mut().handshake_secrets();
                        self.try_check_handshake(&mut out)?;
                    }
                    _ => {
                        let last = (STEPS - 1) as u8;
                        let msg = self.kdf_mut().inputs(last as usize, &[], &[])?;
                        out.push(VerifierMsg::KdfInputs { step: last, msg });
                        self.keys_shared = true;
                    }
                }
            }
            (ProverMsg::Close { sent, received }, Stage::Kdf) => {
                out.push(self.on_close(sent as usize, received as usize)?)
            }
            (ProverMsg::ServerClosed, Stage::Kdf) => {}
            (ProverMsg::Abort(reason), _) => return Err(Error::Aborted(reason)),
            (_, Stage::Hello) => return Err(unexpected("Hello")),
            _ => return Err(unexpected("a message of this stage of a TLS 1.3 session")),
        }
        Ok(out)
    }

    /// The `Hello`: the terms checked, then preprocessing: `Setup` (the
    /// answer), the rest streamed by [`Self::next_tables`].
    fn preprocess(
        &mut self,
        commit_p256: [u8; 32],
        commit_x25519: [u8; 32],
        terms: crate::hello::Terms,
        request_lens: &[u32],
        dual_ot: &[u8],
    ) -> Result<Vec<VerifierMsg>> {
        let schedule = super::schedule_of(terms.suite)?;
        if terms.ems {
            return Err(Error::Unsupported(
                "an extended master secret offer in TLS 1.3".into(),
            ));
        }
        let lens: Vec<usize> = request_lens.iter().map(|&l| l as usize).collect();
        check_lens(&lens)?;
        let chacha = super::is_chacha(terms.suite);
        let specs = Spec::all(&lens, schedule.key_len, chacha);
        self.suite = terms.suite;
        // The keystream pads come first out of both pools.
        let pads: Vec<Vec<Block>> = specs
            .iter()
            .map(|s| {
                if s.computes_h() {
                    Ok(Vec::new())
                } else {
                    self.cots.take(8 * s.len)
                }
            })
            .collect::<Result<_>>()?;
        self.commits = (commit_p256, commit_x25519);
        self.group = Some((terms.group, group_curve(terms.group)));
        let plans = Tls13Plans::shared(schedule)?;
        let kdf = Tls13Verifier::garble(&plans, self.delta, super::KDF_INSTANCE, &mut self.rng)?;
        // Its key ‖ IV share in the prover's keystream circuits is the
        // mask it garbles its own record circuits with.
        let share = key_iv(&kdf.key_shares());
        let (dual, dual_answer) = DualVerifier::new(dual_ot, &share, &mut self.rng)?;
        let k = ghash_powers(&specs);
        for (spec, pad_keys) in specs.into_iter().zip(pads) {
            let v = if spec.chacha {
                let (plan, tag_plan) = spec.chacha_plans()?;
                VCircuits::Chacha(Box::new(VChacha {
                    v: ChachaVerifier::new(
                        plan,
                        tag_plan,
                        spec.len,
                        AAD_LEN,
                        spec.seq(),
                        self.delta,
                        spec.chacha_instances(),
                        &mut self.rng,
                    )?,
                    tables: ChachaTables::default(),
                    tag_keys: Vec::new(),
                }))
            } else {
                VCircuits::Gcm(Box::new(RecordVerifier::new(
                    spec.plan()?,
                    spec.len,
                    spec.seq().to_be_bytes(),
                    self.delta,
                    spec.instance(),
                    spec.computes_h().then_some(k),
                    &mut self.rng,
                )?))
            };
            // Ready before the prover's garbling of its keystream comes
            // up, which may be before this record's tables go down.
            let eval = if spec.computes_h() {
                None
            } else {
                let mut e =
                    RecordEvaluation::for_cipher(spec.cipher()?, spec.len, spec.instance())?;
                e.set_plan(spec.keystream_plan()?)?;
                Some(e)
            };
            self.recs.push(VRec {
                spec,
                v,
                ole: OleSender::new(self.delta, spec.stream()),
                pad_keys,
                eval,
                hidden: Default::default(),
                tagged: false,
                sent: false,
            });
        }
        self.dual = Some(dual);
        self.plans = Some(plans);
        self.kdf = Some(kdf);
        self.garbling = Some(0);
        self.stage = Stage::Handshake;
        Ok(vec![VerifierMsg::Setup {
            client_random: self.client_random,
            q_p256: self.shares.public(Curve::P256),
            q_x25519: self
                .shares
                .public(Curve::X25519)
                .try_into()
                .expect("32 bytes"),
            dual_ot: dual_answer,
        }])
    }

    /// The next message of preprocessing after `Setup`, garbled as it
    /// goes (one chunk per call, while the prover's upload comes the
    /// other way): the key schedule's four steps, then every record's
    /// circuits (AES-GCM: the GHASH record, then the request's, one
    /// circuit each; ChaCha20-Poly1305: per request record its record
    /// circuit, then its tag circuit), each chained to the client key ‖ IV
    /// step 3 outputs, each as `Tables` chunks and its `Decoding`; then
    /// the OLEs answered ahead (`RecPowers`; AES-GCM: each request
    /// record's hidden ciphertext, then the powers of the GHASH key;
    /// ChaCha20-Poly1305: per request record its powers of `r`, then its
    /// hidden ciphertext's bitwise OLEs). `None` once all are out (or
    /// before the `Hello`).
    pub fn next_tables(&mut self) -> Result<Option<VerifierMsg>> {
        if let Some((j, hide)) = self.ahead_due.pop() {
            return self.answer_ahead(j, hide).map(Some);
        }
        let Some(i) = self.garbling else {
            return Ok(None);
        };
        if i >= STEPS && self.recs.first().is_some_and(|r| r.spec.chacha) {
            return self.chacha_tables(i).map(Some);
        }
        let kdf = self
            .kdf
            .as_mut()
            .ok_or(Error::OutOfOrder("tables before the Hello"))?;
        let circuit = match i.checked_sub(STEPS) {
            None => &mut kdf.circuits_mut()[i],
            Some(j) => self.recs[j].gcm()?.circuit_mut(),
        };
        let tag = u8::try_from(i).map_err(|_| Error::Malformed("too many circuits"))?;
        let mut chunk = Vec::new();
        if circuit.next_chunk(&mut chunk) {
            return Ok(Some(VerifierMsg::Tables {
                circuit: tag,
                chunk,
            }));
        }
        let decoding = circuit.decoding()?;
        let early = match i.checked_sub(STEPS) {
            None => kdf.early_inputs(i)?,
            Some(j) => self.recs[j].gcm()?.early_inputs()?,
        };
        let next = i + 1;
        if next < STEPS {
            // The next step takes the prover's share as labels output
            // here: chained before it is garbled.
            kdf.chain(next)?;
        } else if next == STEPS {
            // Every record's key ‖ IV input is the key schedule's output,
            // garbled now: chained, no COT and no round trip.
            let (step, group) = KEY_OUTPUT;
            let zero = kdf.circuits()[step]
                .garbler()
                .output_zero_labels(group)?
                .to_vec();
            let key_len = self.recs[0].spec.key_len;
            let zero = key_iv_wires(&zero, key_len, IV_LEN)?;
            let share = key_iv(&kdf.key_shares());
            for r in &mut self.recs {
                match &mut r.v {
                    VCircuits::Gcm(v) => v.chain(&zero, &share)?,
                    VCircuits::Chacha(c) => c.v.chain(&zero, &share)?,
                }
            }
        }
        self.advance(next);
        Ok(Some(VerifierMsg::Decoding {
            circuit: tag,
            decoding,
            early,
        }))
    }

    /// Circuit `next` streams next; after the last, the OLEs answered
    /// ahead are due.
    fn advance(&mut self, next: usize) {
        let k = circuits_per_record(self.recs.first().is_some_and(|r| r.spec.chacha));
        self.garbling = (next < STEPS + k * self.recs.len()).then_some(next);
        if self.garbling.is_some() {
            return;
        }
        // Popped from the back.
        self.ahead_due = if k == 2 {
            // Per request record in id order: its powers, then its hidden
            // ciphertext's OLEs.
            (0..self.recs.len())
                .rev()
                .flat_map(|j| [(j, true), (j, false)])
                .collect()
        } else {
            // The request records in order, then the one that computes
            // `H`.
            self.recs
                .iter()
                .enumerate()
                .filter(|(_, r)| r.spec.computes_h())
                .map(|(j, _)| (j, false))
                .chain(
                    (0..self.recs.len())
                        .rev()
                        .filter(|&j| !self.recs[j].spec.computes_h())
                        .map(|j| (j, true)),
                )
                .collect()
        };
    }

    /// The next message of circuit `i`'s tables under ChaCha20-Poly1305:
    /// record `j`'s record circuit is circuit `STEPS + 2j`, its tag
    /// circuit the next. Both are garbled at once when the record's turn
    /// comes (`ChachaVerifier::preprocess`, after the chaining at step
    /// 3's end), then streamed chunk by chunk, as TLS 1.2's.
    fn chacha_tables(&mut self, i: usize) -> Result<VerifierMsg> {
        let (j, c) = ((i - STEPS) / 2, (i - STEPS) % 2);
        let tag = u8::try_from(i).map_err(|_| Error::Malformed("too many circuits"))?;
        let cc = self
            .recs
            .get_mut(j)
            .ok_or(Error::OutOfOrder("tables of a circuit not garbled"))?
            .chacha()?;
        if !cc.tables.garbled() {
            cc.tables.set(cc.v.preprocess()?);
        }
        let (msg, done) = cc.tables.next(c, tag)?;
        if done {
            self.advance(i + 1);
        }
        Ok(msg)
    }

    /// The OLEs record `j` answers ahead, on COTs drawn here (the prover
    /// draws them when the message arrives, in the same order). AES-GCM:
    /// the M2A of its hidden ciphertext (`hide`), or the powers of the
    /// GHASH key. ChaCha20-Poly1305: the M2A of its powers of `r` (then
    /// the tag circuit's input COT keys are drawn), or (`hide`) the
    /// bitwise OLEs that keep its ciphertext from the verifier.
    fn answer_ahead(&mut self, j: usize, hide: bool) -> Result<VerifierMsg> {
        let spec = self.recs[j].spec;
        let msg = match (spec.chacha, hide) {
            (true, true) => {
                let keys = self.cots.take(chacha::hide_cots(spec.len))?;
                let r = &mut self.recs[j];
                let VCircuits::Chacha(cc) = &mut r.v else {
                    return Err(Error::Malformed("a ChaCha20 step of an AES-GCM record"));
                };
                let msg = cc.v.hide_respond(&mut r.ole, &keys)?;
                r.hidden.cots = keys;
                msg
            }
            (true, false) => {
                let keys = self.cots.take(chacha::cots_needed(AAD_LEN, spec.len))?;
                let r = &mut self.recs[j];
                let VCircuits::Chacha(cc) = &mut r.v else {
                    return Err(Error::Malformed("a ChaCha20 step of an AES-GCM record"));
                };
                let msg = cc.v.powers_respond(&mut r.ole, &keys)?;
                cc.tag_keys = self.cots.take(chacha::TAG_COTS)?;
                msg
            }
            (false, true) => {
                let keys = self.cots.take(gcm::hide_cots(spec.len))?;
                let r = &mut self.recs[j];
                let VCircuits::Gcm(v) = &mut r.v else {
                    return Err(Error::Malformed("an AES-GCM step of a ChaCha20 record"));
                };
                let msg = v.hide_ahead(&mut r.ole, &keys, &mut self.rng)?;
                r.hidden.cots = keys;
                msg
            }
            (false, false) => {
                let k = ghash_powers(&self.recs.iter().map(|r| r.spec).collect::<Vec<_>>());
                let keys = self.cots.take(gcm::cots_needed(k))?;
                let r = &mut self.recs[j];
                let VCircuits::Gcm(v) = &mut r.v else {
                    return Err(Error::Malformed("an AES-GCM step of a ChaCha20 record"));
                };
                v.powers_ahead(&mut r.ole, &keys)?
            }
        };
        Ok(VerifierMsg::RecPowers { id: spec.id, msg })
    }

    /// The index of record `id` among the session's (ChaCha20-Poly1305
    /// has no record 0).
    fn index(&self, id: u32) -> Option<usize> {
        self.recs.iter().position(|r| r.spec.id == id)
    }

    /// Whether preprocessing is still streaming.
    fn streaming(&self) -> bool {
        self.garbling.is_some() || !self.ahead_due.is_empty()
    }

    /// The evaluation of request record `id`'s keystream garbling.
    fn evaluation(&mut self, id: u32) -> Result<&mut RecordEvaluation> {
        let j = self.index(id);
        j.and_then(|j| self.recs.get_mut(j))
            .and_then(|r| r.eval.as_mut())
            .ok_or(Error::Malformed("keystream tables of no request record"))
    }

    /// Record `id` ran on the prover's side: the GHASH record's offsets
    /// make the verifier's shares of the powers; a request record's masked
    /// ciphertext and keystream labels make its tag share, the corrections
    /// of its hidden M2A and the dual execution's check value.
    fn on_ciphertext(
        &mut self,
        id: u32,
        ct: Vec<u8>,
        offsets: &[u8],
        labels: &[u8],
    ) -> Result<Vec<VerifierMsg>> {
        let delta = self.delta;
        let j = self
            .index(id)
            .ok_or(Error::Malformed("a ciphertext of no record"))?;
        if self.recs[j].spec.chacha {
            return self.on_chacha_request(j, ct, offsets, labels);
        }
        let r = &mut self.recs[j];
        if r.spec.computes_h() {
            if self.powers.is_some() || !ct.is_empty() || !labels.is_empty() {
                return Err(Error::Malformed(
                    "the GHASH record twice, or with a ciphertext",
                ));
            }
            self.powers = Some(r.gcm()?.powers(offsets)?);
            return Ok(Vec::new());
        }
        let powers = self.powers.as_deref().ok_or(Error::OutOfOrder(
            "a request record before the GHASH key's powers",
        ))?;
        if r.tagged || !offsets.is_empty() {
            return Err(Error::Malformed("a request record twice, or with offsets"));
        }
        let check = r.check_value(self.dual.as_ref(), labels, delta)?;
        let VCircuits::Gcm(v) = &mut r.v else {
            return Err(Error::Malformed("an AES-GCM step of a ChaCha20 record"));
        };
        let (tag, corrections) = v.hidden_tag_share(powers, &r.spec.aad(), &ct)?;
        r.hidden.masked = ct[..r.spec.len].to_vec();
        r.tagged = true;
        Ok(vec![VerifierMsg::RecTagShare {
            id,
            tag,
            corrections,
            check: check.to_vec(),
        }])
    }

    /// A ChaCha20-Poly1305 request record's tag request (`request`: the
    /// offsets of its powers, its ciphertext masked twice, the flips of
    /// the prover's tag-circuit input; `ct` empty: the verifier never sees
    /// the ciphertext) with its labels for the dual execution: the tag
    /// circuit's input labels in `RecTagShare`'s `corrections` (no tag
    /// share: the prover decodes the tag), with the keystream check
    /// value, as TLS 1.2's.
    fn on_chacha_request(
        &mut self,
        j: usize,
        ct: Vec<u8>,
        request: &[u8],
        labels: &[u8],
    ) -> Result<Vec<VerifierMsg>> {
        let delta = self.delta;
        let r = &mut self.recs[j];
        let spec = r.spec;
        if r.tagged || !ct.is_empty() {
            return Err(Error::Malformed(
                "a request record twice, or its ciphertext in the clear",
            ));
        }
        let check = r.check_value(self.dual.as_ref(), labels, delta)?;
        let VCircuits::Chacha(cc) = &mut r.v else {
            return Err(Error::Malformed("a ChaCha20 step of an AES-GCM record"));
        };
        let keys = core::mem::take(&mut cc.tag_keys);
        let answer = cc.v.hidden_tag_inputs(&spec.aad(), request, &keys)?;
        r.hidden = crate::rec::HiddenRecord::chacha_of(spec.len, AAD_LEN, request, &r.hidden.cots)?;
        r.tagged = true;
        Ok(vec![VerifierMsg::RecTagShare {
            id: spec.id,
            tag: [0; 16],
            corrections: answer,
            check: check.to_vec(),
        }])
    }

    /// The prover's `Close`: every request record went out and the
    /// prover names the records the verifier recorded; the recording is
    /// final from here, so the verifier reveals its key shares (the
    /// server's for the prover's deferred decryption and the proof, the
    /// client's for the proof of the request: no record either could
    /// make counts any more).
    fn on_close(&mut self, sent: usize, received: usize) -> Result<VerifierMsg> {
        let start = self.server_app_start.ok_or(Error::Unexpected {
            expected: "the handshake before Close",
            got: "Close",
        })?;
        let requests = self.recs.iter().filter(|r| !r.spec.computes_h()).count();
        if !self.request_recorded() || sent != requests {
            return Err(Error::Recording(format!(
                "the prover names {sent} request records of {requests}, not all sent"
            )));
        }
        let recorded = self.recorder.transcript().received.len() - start;
        if received != recorded {
            return Err(Error::Recording(format!(
                "the prover names {received} server records after its Finished, the \
                 verifier recorded {recorded}"
            )));
        }
        if self.recorder.pending(Direction::Received) != 0 {
            return Err(Error::Recording(
                "a partial server record at the close".into(),
            ));
        }
        let keys = self.key_shares().ok_or(Error::OutOfOrder("Close"))?;
        self.stage = Stage::Closed;
        Ok(VerifierMsg::CloseAck {
            server_key: keys.server_key,
            server_iv: keys.server_iv,
            client_key: keys.client_key,
            client_iv: keys.client_iv,
        })
    }

    /// Index of the first server record after its Finished, once the
    /// handshake is checked.
    pub fn server_app_start(&self) -> Option<usize> {
        self.server_app_start
    }

    /// For the proof of the response: the 0-labels of the key schedule's
    /// key-block output, its own shares of the key block (its masks) and
    /// `Δ`, once closed.
    pub(crate) fn key_block(&self) -> Result<(Vec<Block>, KeyShares, Block)> {
        let kdf = match (&self.kdf, self.stage) {
            (Some(k), Stage::Closed) => k,
            _ => return Err(Error::OutOfOrder("the proof before the close")),
        };
        let (step, group) = KEY_OUTPUT;
        let zero = kdf.circuits()[step]
            .garbler()
            .output_zero_labels(group)?
            .to_vec();
        Ok((zero, kdf.key_shares(), self.delta))
    }

    /// The session's suite (the prover's terms, which the ServerHello
    /// matched).
    pub fn suite(&self) -> webproof_tls::CipherSuite {
        self.suite
    }

    /// The negotiated group, once the ServerHello came.
    pub fn group(&self) -> Option<KxGroup> {
        self.shared.map(|(g, _)| g)
    }

    /// The request's records as the proof of the request takes them, in
    /// order: masked ciphertext and the keys of the COTs of their masks.
    pub(crate) fn hidden_records(&self) -> Vec<crate::rec::HiddenRecord> {
        self.recs
            .iter()
            .filter(|r| !r.spec.computes_h())
            .map(|r| r.hidden.clone())
            .collect()
    }

    /// The request's content length per record, in order.
    pub(crate) fn request_lens(&self) -> Vec<usize> {
        self.recs
            .iter()
            .filter(|r| !r.spec.computes_h())
            .map(|r| r.spec.len - 1)
            .collect()
    }

    /// What the audit needs of every garbled circuit, in order: the key
    /// schedule's steps, then the records by id.
    pub(crate) fn garbled_runs(&self) -> Result<Vec<webproof_mpc::consistency::GarbledRun>> {
        let kdf = self.kdf.as_ref().ok_or(Error::OutOfOrder("the audit"))?;
        let mut runs = Vec::new();
        for c in kdf.circuits() {
            runs.push(c.retain()?);
        }
        for r in &self.recs {
            match &r.v {
                VCircuits::Gcm(v) => runs.push(v.circuit().retain()?),
                VCircuits::Chacha(c) => {
                    let (record, tag) = c.v.circuits();
                    runs.push(record.retain()?);
                    runs.push(tag.retain()?);
                }
            }
        }
        Ok(runs)
    }

    /// Its OLE inputs, batch by batch, per stream in the order the
    /// streams started (the request records' hidden M2A by id, the GHASH
    /// record's powers, the ECtF): the order of the prover's log. A
    /// ChaCha20-Poly1305 record's are not revealed: the prover computes
    /// them from the record circuit's revealed `t`
    /// (`crate::rec::chacha::audit_oles`).
    pub(crate) fn ole_inputs(&self) -> Vec<u8> {
        let recs = self
            .recs
            .iter()
            .filter(|r| !r.spec.chacha && !r.spec.computes_h())
            .chain(self.recs.iter().filter(|r| r.spec.computes_h()))
            .map(|r| &r.ole);
        let mut out = Vec::new();
        for ole in recs.chain(std::iter::once(&self.ole)) {
            ole.inputs().iter().for_each(|b| out.extend_from_slice(b));
        }
        out
    }

    /// `CloseAck` went out: the recording is final.
    pub fn closed(&self) -> bool {
        self.stage == Stage::Closed
    }

    /// Every request record is recorded as sent.
    pub fn request_recorded(&self) -> bool {
        !self.recs.is_empty() && self.recs.iter().all(|r| r.spec.computes_h() || r.sent)
    }

    fn kdf_mut(&mut self) -> &mut Tls13Verifier {
        self.kdf.as_mut().expect("garbled at Hello")
    }

    /// Client record `index` as a ClientHello whole in it, once the
    /// record is.
    fn client_hello_at(&self, index: usize) -> Result<Option<Message>> {
        let Some(rec) = self.recorder.transcript().sent.get(index) else {
            return Ok(None);
        };
        if rec.content_type != content_type::HANDSHAKE {
            return Err(Error::ClientHello(
                "a client record in the clear that is no handshake",
            ));
        }
        let mut r = Reassembler::default();
        r.push(&rec.payload)?;
        let msg = r
            .next_message()?
            .ok_or(Error::ClientHello("not whole in its record"))?;
        if !r.is_empty() {
            return Err(Error::ClientHello("followed by more handshake bytes"));
        }
        Ok(Some(msg))
    }

    /// The key share a ClientHello carries (checked by
    /// [`check_client_hello`] against the sum once the prover opened its
    /// share).
    fn own_share(msg: &Message) -> Result<Vec<u8>> {
        let ch = webproof_tls::handshake::parse_client_hello(msg.body())?;
        Ok(ch
            .key_shares
            .first()
            .map(|(_, k)| k.clone())
            .unwrap_or_default())
    }

    /// The first client record: the ClientHello, whole in it. Checked at
    /// once for all but its key share (the prover's share is opened with
    /// the ECtF's flips; the check is run again then, whole).
    fn take_client_hello(&mut self) -> Result<()> {
        let Some(msg) = self.client_hello_at(0)? else {
            return Ok(());
        };
        let (group, _) = self.group.expect("set at Hello");
        check_client_hello(
            &msg,
            &self.client_random,
            &self.cfg.verify.server_name,
            self.suite,
            group,
            group,
            &Self::own_share(&msg)?,
        )?;
        self.client_hello = Some(msg);
        Ok(())
    }

    /// The ServerHello from the verifier's recording, once whole: checked
    /// (TLS 1.3, the suite, no PSK, the group), and the hash of the
    /// transcript through it taken from the bytes recorded. After a
    /// HelloRetryRequest (checked: the other group, nothing else asked
    /// for), the second ClientHello is checked as the first, with the key
    /// share of the other group, and the transcript starts with the first
    /// ClientHello's `message_hash`.
    fn take_server_hello(&mut self) -> Result<()> {
        let (msgs, _) = clear_messages(&self.recorder.transcript().received)?;
        let Some(first) = msgs.first() else {
            return Ok(());
        };
        let (preferred, _) = self.group.expect("set at Hello");
        let mut group = preferred;
        let mut sh = Some(first);
        let mut ch2 = None;
        if is_hrr(first) {
            group = check_hrr(first, self.suite, preferred)?;
            // The prover's second ClientHello, forwarded after the retry.
            let Some(m) = self.client_hello_at(1)? else {
                return Ok(());
            };
            check_client_hello(
                &m,
                &self.client_random,
                &self.cfg.verify.server_name,
                self.suite,
                preferred,
                group,
                &Self::own_share(&m)?,
            )?;
            ch2 = Some(m);
            sh = msgs.get(1);
        }
        let Some(sh) = sh else {
            return Ok(());
        };
        let key = check_server_hello(sh, self.suite, group)?;
        let ch = self.client_hello.as_ref().expect("checked before");
        let retry = ch2.as_ref().map(|c| (first, c));
        let hash = self
            .suite
            .hash()
            .hash(&hello_transcript(self.suite, ch, retry, sh));
        self.server_hello = Some((hash, key));
        self.shared = Some((group, group_curve(group)));
        self.client_hello2 = ch2;
        Ok(())
    }

    /// Once the handshake secrets are revealed and the recording holds the
    /// server's flight and the client Finished: proxy mode's TLS 1.3 check
    /// of the recording (chain, name, validity, CertificateVerify over the
    /// transcript, both Finished), then the key schedule's step 2 on the
    /// hash of ClientHello..server Finished it computed.
    fn try_check_handshake(&mut self, out: &mut Vec<VerifierMsg>) -> Result<()> {
        let Some(secrets) = &self.secrets else {
            return Ok(());
        };
        if self.identity.is_some() {
            // After the handshake: nothing is run on these records yet.
            return Ok(());
        }
        let revealed = verify::HandshakeSecrets {
            client: secrets.client.clone(),
            server: secrets.server.clone(),
        };
        let (info, statement) = match verify::check_handshake(
            self.recorder.transcript(),
            &self.cfg.verify,
            SecretsSource::Revealed(&revealed),
        ) {
            Ok(r) => r,
            // The server's flight or the client Finished is not all here.
            Err(TlsError::Incomplete(_)) => return Ok(()),
            Err(e) => return Err(e.into()),
        };
        let PublicInputs::Tls13 {
            th_hello,
            th_server_finished,
            ..
        } = statement.public
        else {
            return Err(Error::Unsupported(
                "a TLS 1.2 handshake in a TLS 1.3 session".into(),
            ));
        };
        let (hash, _) = self.server_hello.as_ref().expect("before the secrets");
        if th_hello != *hash {
            return Err(Error::Recording("the ServerHello hash changed".into()));
        }
        if statement
            .records
            .iter()
            .any(|r| r.record.direction == Direction::Sent)
        {
            return Err(Error::ClientRecord(
                "a client record after the Finished before the application keys",
            ));
        }
        let received = statement
            .records
            .iter()
            .filter(|r| r.record.direction == Direction::Received)
            .count();
        self.server_app_start = Some(self.recorder.transcript().received.len() - received);
        let kdf = self.kdf_mut();
        kdf.bind_finished_hash(&th_server_finished)?;
        let msg = kdf.inputs(2, &[], &[])?;
        out.push(VerifierMsg::KdfInputs { step: 2, msg });
        self.identity = Some(info);
        Ok(())
    }

    /// The server's identity, once the handshake is checked.
    pub fn identity(&self) -> Option<&SessionInfo> {
        self.identity.as_ref()
    }

    /// The handshake is checked and the application keys shared.
    pub fn handshake_done(&self) -> bool {
        self.identity.is_some() && self.keys_shared
    }

    /// The verifier's shares of the application keys and IVs (its masks:
    /// fixed from preprocessing, meaningful once the handshake is done).
    pub fn key_shares(&self) -> Option<KeyShares> {
        self.handshake_done()
            .then(|| self.kdf.as_ref().expect("garbled").key_shares())
    }

    /// The verifier's recording so far.
    pub fn recording(&self) -> &webproof_tls::Recording {
        self.recorder.transcript()
    }
}
