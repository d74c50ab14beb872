//! The verifier's session: it garbles, answers the prover's 2PC steps,
//! checks the server's identity on the flight it received, and records
//! every record in both directions.
//!
//! # Where each public value comes from
//! The verifier takes no public value from a field the prover declares on
//! its own; each is parsed from the TLS bytes the prover forwarded
//! (`ToServer` / `FromServer`, cut into records by the verifier's own
//! [`Recorder`]) or computed by the verifier:
//! - **client random**: the verifier's own (sent in `Setup`); the
//!   ClientHello it received must carry it, so the server's signature
//!   covers a value the verifier chose for this session;
//! - **offered suites, EMS offer, server name**: parsed from that
//!   ClientHello ([`crate::hello::check_client_hello`]); the offered
//!   suites must all be of the family of the prover's `Hello` terms, for
//!   which the verifier garbled before the ClientHello, and the server's
//!   choice of suite and EMS is checked against the terms
//!   ([`crate::hello::Terms::check_negotiated`]; the key derivation
//!   serves every group): the terms decide only which circuits exist,
//!   never a value the statement uses. Suite and group codes are typed
//!   where they are parsed (`hello::suite_from_wire`,
//!   `hello::group_from_wire`): an unknown one ends the session there;
//! - **server random, suite, EMS, certificate chain, group (the key
//!   derivation's curve bit), server key share**: parsed from the
//!   ServerHello, Certificate and
//!   ServerKeyExchange records received; the chain, name, validity and
//!   the signature over both randoms and the key share are checked here
//!   (`webproof_tls::identity::check_tls12_server`) before any 2PC step;
//! - **client key share**: computed by the verifier from its own share
//!   and the prover's opened commitment; the ClientKeyExchange record the
//!   prover forwards must be exactly the message the verifier computed;
//! - **transcript hashes** (session hash, both Finished hashes): over the
//!   handshake messages the verifier parsed or computed, the client
//!   Finished from the `verify_data` computed in 2PC;
//! - **record lengths**: the request's from the prover's `Hello` (they fix
//!   the circuits garbled ahead); the forwarded client Finished must have
//!   its length and the ciphertext the 2PC produced; server record
//!   lengths, content types and explicit nonces from the records received;
//! - **the request's records**: never forwarded, so the verifier never
//!   sees their ciphertext (`crate::rec::gcm`, "Hidden ciphertext");
//!   on the prover's `RecSent` it records each as the verifier builds it
//!   (`rec::hidden_record`: its type, length and explicit nonce,
//!   which the 2PC fixed, and zeros). The proof takes the masked
//!   ciphertext the 2PC gave the verifier and the mask as COT choice bits
//!   it authenticated ([`VerifierOutcome::hidden`]);
//! - **sequence numbers**: from the record's position in its direction;
//! - **the client Finished's tag**: the one part of a forwarded client
//!   record the verifier records as the prover gives it: the tag is the
//!   sum of both parties' shares and only the prover learns the sum.
//!   Type, length, explicit nonce and ciphertext are checked, so the tag
//!   cannot carry another record;
//! - **record order**: the order in which the records completed in the
//!   verifier's recorder ([`Recording::order`]);
//! - **ChaCha20-Poly1305** (`docs/protocol/mpc-chacha.md`, "In the TLS 1.2
//!   session"): no explicit nonce anywhere (the nonce is the IV XOR the
//!   sequence number the verifier counts and encodes itself in each record
//!   circuit); the client Finished's ciphertext in its tag request is
//!   checked against the forwarded record as AES-GCM's is; a request
//!   record's tag request carries its ciphertext masked twice (`D¹`, `D²`,
//!   one-time padded by COT choice bits), which the proof ties to the
//!   request it proves.
//!
//! # What the verifier checks of the server's Finished
//! The tag of the server's Finished record is computed in 2PC over the
//! ciphertext the verifier recorded and checked by the verifier: only a
//! party holding the server write key (so the master secret of this
//! handshake) made that record. The record's *plaintext* is seen only by
//! the prover, which compares it with the `verify_data` computed in 2PC
//! (the verifier learns that value too). A prover that skipped this
//! comparison gains nothing: the server computed its Finished after
//! accepting the client Finished, which was computed in 2PC over the
//! verifier's transcript, so the server saw the handshake the verifier
//! checked.
//!
//! # Deferred decryption
//! The verifier keeps its share of the server write key and IV until the
//! prover's `Close`, which names how many server records it received; the
//! verifier checks that it recorded exactly those, then reveals its share
//! (`CloseAck`). From then on the prover can decrypt the response, but
//! every record it could forge is after the recording ends. What it could
//! do before, flip bits of a record it relays (CTR mode is malleable), the
//! record's tag gives away: the proof of the response asserts every
//! recorded record's tag under the key ([`crate::response`]). The
//! verifier's share of the client write key is revealed at the close too
//! (for the proof of the request), when the request is out and tagged:
//! the prover could not encrypt another request than the one the 2PC
//! tagged (request binding).

use crate::consist::{FinishedCheck, FinishedVd, Shape, VerifierRetained};
use crate::cots::{CotPool, MAX_RECORD, MAX_REQUEST};
use crate::error::{Error, Result};
use crate::hello::{self, client_key_exchange, finished, group_curve, suite_params, Terms};
use crate::kdf::tls12::{Curve, KeyShares, Tls12Config};
use crate::kdf::{KdfPlans, KdfPublic, KdfVerifier, KeyLabels};
use crate::keyx::keyshare;
use crate::keyx::{ectf_cots, Shares, VerifierKx, VerifierKx2, ECTF_STREAM};
use crate::msg::{ProverMsg, VerifierMsg};
use crate::rec::answer;
use crate::rec::chacha::{self, ChachaVerifier};
use crate::rec::dual::{DualVerifier, RecordEvaluation};
use crate::rec::gcm::{self, RecordVerifier};
use crate::rec::{
    check_server_finished, ghash_powers, is_chacha, key_iv, key_iv_labels, server_alert,
    ChachaTables, HiddenRecord, RecSpec, AAD_LEN, CLIENT_FINISHED,
};
use rand_chacha::ChaCha20Rng;
use rand_core::{CryptoRng, RngCore, SeedableRng};
use std::sync::Arc;
use webproof_circuits::tls::Tls12Suite;
use webproof_core::Block;
use webproof_mpc::ole::OleSender;
use webproof_mpc::plan::Plan;
use webproof_tls::handshake::{self as hsk, msg_type, Reassembler};
use webproof_tls::record::{content_type, Record};
use webproof_tls::{
    CipherSuite, Direction, KxGroup, Recorder, RecorderLimits, Recording, VerifyConfig,
};

/// What the verifier accepts.
#[derive(Clone, Debug)]
pub struct VerifierConfig {
    /// Roots, the server name the prover must talk to, and the time of the
    /// session (Unix seconds) for the certificate's validity.
    pub verify: VerifyConfig,
    /// Recording limits.
    pub limits: RecorderLimits,
}

/// What the verifier holds at the end of a session.
#[derive(Clone, Debug)]
pub struct VerifierOutcome {
    /// Every record both ways, as received, and their order; the
    /// request's records as their header and nonce, zeros in place of the
    /// ciphertext and tag (the verifier never saw them,
    /// `rec::hidden_record`).
    pub recording: Recording,
    /// Per request record, its masked ciphertext and the keys of the COTs
    /// that mask it: what the proof of the request takes.
    pub hidden: Vec<HiddenRecord>,
    /// Negotiated suite.
    pub suite: CipherSuite,
    /// Negotiated group.
    pub group: KxGroup,
    /// Extended master secret negotiated.
    pub ems: bool,
    /// The server's certificate chain (checked).
    pub certificates: Vec<Vec<u8>>,
    /// ClientHello.random (the verifier's).
    pub client_random: [u8; 32],
    /// ServerHello.random.
    pub server_random: [u8; 32],
    /// The garbler's global offset (= its COT `Δ`).
    pub delta: Block,
    /// 0-labels of the prover's key-block share outputs.
    pub key_labels: Vec<KeyLabels>,
    /// The verifier's key-block shares (its masks).
    pub key_shares: KeyShares,
    /// The client `verify_data` computed in 2PC, and the server's where
    /// 2PC computed it (the full PRF; under the reduced PRF the proof of
    /// the response checks the server Finished instead).
    pub verify_data: ([u8; 12], Option<[u8; 12]>),
    /// Every garbled circuit's 0-labels and the verifier's input bits,
    /// for the consistency proof.
    pub retained: VerifierRetained,
}

/// Where the server's stream is.
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

/// Where the client's stream is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cli {
    Hello,
    KeyExchange,
    Ccs,
    Finished,
    /// Request record `k` (0-based) is due.
    App(usize),
}

/// Where the 2PC is.
enum Stage {
    AwaitHello,
    /// Setup sent; waiting for the server flight and the key opening.
    Handshake,
    AwaitEctfCorrection(VerifierKx2),
    /// Key derivation: the step due, and whether its labels are awaited.
    Kdf {
        step: usize,
        labels: bool,
    },
    /// Records in 2PC: the id due.
    Records,
    Closed,
    Failed,
}

/// A record's garbling, once set up ([`VRec::v`]).
fn garbled(v: &mut Option<RecordVerifier>) -> Result<&mut RecordVerifier> {
    v.as_mut()
        .ok_or(Error::OutOfOrder("a record before its tables"))
}

struct VRec {
    spec: RecSpec,
    /// AES key and IV (salt) bytes of the suite.
    key_len: usize,
    iv_len: usize,
    /// Its schedule, if the driver built it ahead
    /// ([`VerifierSession::record_plan_jobs`]); otherwise it is built when
    /// the record's turn to stream comes.
    plan: Option<Arc<Plan>>,
    /// Its garbling, set up when its turn to stream comes.
    v: Option<RecordVerifier>,
    ole: OleSender,
    /// Whether its tag share went out (its one round trip done).
    done: bool,
    /// The client Finished's ciphertext; a request record's masked
    /// ciphertext (`C ⊕ ρ`, whole blocks).
    ct: Vec<u8>,
    /// A request record's hidden M2A's COT keys, for the proof.
    hide_keys: Vec<Block>,
    /// A request record's keystream pads' COT keys (the dual execution's,
    /// `crate::rec::dual`), and its evaluation of the prover's garbling
    /// of the keystream.
    pad_keys: Vec<Block>,
    dual: Option<RecordEvaluation>,
    /// The keystream circuit's schedule, if the driver built it ahead
    /// with the record's ([`RecordPlanJob`]) before the evaluation began.
    dual_plan: Option<Arc<Plan>>,
    /// ChaCha20-Poly1305 records (`crate::rec::chacha`): the record's
    /// 2PC, set up when its turn to stream comes; both circuits' tables
    /// (garbled at once, streamed chunk by chunk: chunks left, decoding,
    /// early labels); the tag circuit's input COT keys, drawn with the
    /// powers'. A request record's `ct` is then its tag request (the
    /// masked copies `D¹`, `D²` the proof takes).
    chacha: bool,
    cc: Option<ChachaVerifier>,
    cc_tables: ChachaTables,
    tag_keys: Vec<Block>,
}

/// Parsed server flight.
#[derive(Default)]
struct Flight {
    suites: Vec<CipherSuite>,
    ems_offered: bool,
    server_random: [u8; 32],
    /// From the ServerHello on.
    suite: Option<CipherSuite>,
    ems: bool,
    chain: Vec<Vec<u8>>,
    /// From the ServerKeyExchange on.
    group: Option<KxGroup>,
    server_key: Vec<u8>,
}

/// The verifier's side of one MPC-mode session.
pub struct VerifierSession {
    cfg: VerifierConfig,
    rng: ChaCha20Rng,
    delta: Block,
    cots: CotPool,
    shares: Shares,
    client_random: [u8; 32],
    commits: ([u8; 32], [u8; 32]),
    request_lens: Vec<usize>,
    /// What the session was garbled for (the prover's `Hello`).
    terms: Option<Terms>,
    recorder: Recorder,
    srv: Srv,
    cli: Cli,
    srv_seen: usize,
    cli_seen: usize,
    srv_hs: Reassembler,
    cli_hs: Reassembler,
    flight: Flight,
    /// Handshake messages through the ClientKeyExchange.
    transcript: Vec<u8>,
    kx: Option<VerifierKx>,
    expected_cke: Option<Vec<u8>>,
    ectf_ole: OleSender,
    plans: Option<KdfPlans>,
    kdf: Option<KdfVerifier>,
    keys: Option<KeyShares>,
    /// The key derivation is past [`KdfPlans::records_after`]: records
    /// may run (beside its last steps).
    records_open: bool,
    recs: Vec<VRec>,
    /// The circuit whose tables [`VerifierSession::next_tables`] streams
    /// next, from the `Hello` until the last is out.
    garbling: Option<usize>,
    /// The records whose M2A is answered ahead next, last first
    /// (preprocessing, once every circuit's tables are out: each request
    /// record's hidden ciphertext's, then the powers of `H` of the one
    /// that computes it, which ends preprocessing).
    ahead_due: Vec<(usize, bool)>,
    /// The verifier's additive shares of the powers of the client's GHASH
    /// key, once the client Finished's offsets arrived: every client
    /// record's tag takes them.
    client_powers: Option<Vec<webproof_mpc::field::Gf128>>,
    server_finished: Option<Record>,
    /// Hash of the handshake through the client Finished, from this
    /// session's transcript and the client `verify_data` computed in 2PC.
    server_finished_hash: Option<Vec<u8>>,
    server_app_records: usize,
    server_closed: bool,
    /// Its labels in the prover's keystream circuits (dual execution),
    /// from the `Hello`.
    dual: Option<DualVerifier>,
    stage: Stage,
}

impl core::fmt::Debug for VerifierSession {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "VerifierSession({:?}, {:?})", self.srv, self.cli)
    }
}

/// The parameters of the negotiated suite (the ServerHello admitted only
/// a suite MPC mode runs).
fn suite_of(suite: Option<CipherSuite>) -> Result<Tls12Suite> {
    let suite = suite.ok_or(Error::OutOfOrder(
        "the key derivation before the ServerHello",
    ))?;
    suite_params(suite).ok_or_else(|| Error::Unsupported(format!("cipher suite {suite}")))
}

impl VerifierSession {
    /// A session under the verifier's COT offset `delta` (lsb 1) with its
    /// COT keys in `cots` (at least [`crate::cots_needed`] for the
    /// request's length).
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
        VerifierSession {
            cfg,
            rng,
            delta,
            cots,
            shares,
            client_random,
            commits: ([0; 32], [0; 32]),
            request_lens: Vec::new(),
            terms: None,
            recorder,
            srv: Srv::Hello,
            cli: Cli::Hello,
            srv_seen: 0,
            cli_seen: 0,
            srv_hs: Reassembler::default(),
            cli_hs: Reassembler::default(),
            flight: Flight::default(),
            transcript: Vec::new(),
            kx: None,
            expected_cke: None,
            ectf_ole: OleSender::new(delta, ECTF_STREAM),
            plans: None,
            kdf: None,
            keys: None,
            records_open: false,
            recs: Vec::new(),
            garbling: None,
            ahead_due: Vec::new(),
            client_powers: None,
            server_finished: None,
            server_finished_hash: None,
            server_app_records: 0,
            server_closed: false,
            dual: None,
            stage: Stage::AwaitHello,
        }
    }

    /// The records recorded so far.
    pub fn recording(&self) -> &Recording {
        self.recorder.transcript()
    }

    /// Whether the session ended with the prover's `Close` acknowledged.
    pub fn is_closed(&self) -> bool {
        matches!(self.stage, Stage::Closed)
    }

    /// Take one message from the prover; the messages to send back, in
    /// order. After an error the session is over (send
    /// [`VerifierMsg::Abort`] with the error's text).
    pub fn on_message(&mut self, msg: ProverMsg) -> Result<Vec<VerifierMsg>> {
        self.guarded(|v| v.handle(msg))
    }

    /// Run `step` unless the session failed before; a failing step fails
    /// the session for good.
    fn guarded<T>(&mut self, step: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        if matches!(self.stage, Stage::Failed) {
            return Err(Error::OutOfOrder("a failed session"));
        }
        let r = step(self);
        if r.is_err() {
            self.stage = Stage::Failed;
        }
        r
    }

    /// [`Self::on_message`] on an encoded message.
    pub fn on_bytes(&mut self, bytes: &[u8]) -> Result<Vec<VerifierMsg>> {
        match ProverMsg::decode(bytes) {
            Ok(m) => self.on_message(m),
            Err(e) => {
                self.stage = Stage::Failed;
                Err(e)
            }
        }
    }

    fn handle(&mut self, msg: ProverMsg) -> Result<Vec<VerifierMsg>> {
        let got = msg.name();
        match msg {
            ProverMsg::Abort(why) => Err(Error::Aborted(why)),
            ProverMsg::Hello {
                commit_p256,
                commit_x25519,
                request_lens,
                terms,
                dual_ot,
            } => {
                if !matches!(self.stage, Stage::AwaitHello) {
                    return Err(Error::Unexpected {
                        expected: "no second Hello",
                        got,
                    });
                }
                let lens: Vec<usize> = request_lens.iter().map(|&l| l as usize).collect();
                if lens.is_empty()
                    || lens.iter().any(|&l| l == 0 || l > MAX_RECORD)
                    || lens.iter().sum::<usize>() > MAX_REQUEST
                {
                    return Err(Error::Malformed("request record lengths out of bounds"));
                }
                self.commits = (commit_p256, commit_x25519);
                self.request_lens = lens;
                // The keystream pads come first out of both pools.
                let pads: Vec<Vec<Block>> = self
                    .request_lens
                    .iter()
                    .map(|&l| self.cots.take(8 * l))
                    .collect::<Result<_>>()?;
                self.garble(terms)?;
                for (r, keys) in self
                    .recs
                    .iter_mut()
                    .filter(|r| !r.spec.computes_h())
                    .zip(pads)
                {
                    r.pad_keys = keys;
                }
                // Its key ‖ IV share in the prover's keystream circuits is
                // the mask it garbles its own record circuits with.
                let kdf = self.kdf.as_ref().ok_or(Error::OutOfOrder("Hello"))?;
                let (dual, dual_ot) =
                    DualVerifier::new(&dual_ot, &key_iv(&kdf.key_shares()), &mut self.rng)?;
                self.dual = Some(dual);
                self.terms = Some(terms);
                self.stage = Stage::Handshake;
                Ok(vec![VerifierMsg::Setup {
                    client_random: self.client_random,
                    q_p256: self.shares.public(Curve::P256),
                    q_x25519: self
                        .shares
                        .public(Curve::X25519)
                        .try_into()
                        .expect("32 bytes"),
                    dual_ot,
                }])
            }
            // The prover's keystream garbling streams up while the
            // verifier's tables stream down.
            ProverMsg::DualLabels(msg)
                if !matches!(self.stage, Stage::AwaitHello | Stage::Closed) =>
            {
                let dual = self.dual.as_mut().ok_or(Error::OutOfOrder("DualLabels"))?;
                dual.take_labels(&msg)?;
                Ok(vec![])
            }
            ProverMsg::DualTables { id, chunk }
                if !matches!(self.stage, Stage::AwaitHello | Stage::Closed) =>
            {
                self.dual_record(id)?.push_chunk(chunk)?;
                Ok(vec![])
            }
            ProverMsg::DualEnd { id, end }
                if !matches!(self.stage, Stage::AwaitHello | Stage::Closed) =>
            {
                self.dual_record(id)?.end(&end)?;
                Ok(vec![])
            }
            _ if self.garbling.is_some() => Err(Error::Unexpected {
                expected: "nothing before the last garbled tables are out",
                got,
            }),
            _ if matches!(self.stage, Stage::AwaitHello | Stage::Closed) => {
                Err(Error::Unexpected {
                    expected: "Hello",
                    got,
                })
            }
            ProverMsg::ToServer(b) => {
                if matches!(self.cli, Cli::App(_)) {
                    // The request's records never come this way: the
                    // verifier must not see their ciphertext.
                    return Err(Error::ClientRecord(
                        "client bytes forwarded after the Finished (request records go as RecSent)",
                    ));
                }
                self.recorder.feed(Direction::Sent, &b)?;
                self.client_records()?;
                Ok(vec![])
            }
            ProverMsg::FromServer(b) => {
                if self.cli == Cli::Hello && !b.is_empty() {
                    return Err(Error::Unexpected {
                        expected: "the ClientHello before server bytes",
                        got,
                    });
                }
                self.recorder.feed(Direction::Received, &b)?;
                self.server_records()?;
                Ok(vec![])
            }
            ProverMsg::ServerClosed => {
                if self.server_finished.is_none() {
                    return Err(Error::ServerClosed);
                }
                self.server_closed = true;
                Ok(vec![])
            }
            ProverMsg::KeyOpen {
                public,
                blind,
                flips,
            } => self.on_key_open(&public, &blind, &flips),
            ProverMsg::EctfCorrection(d) => self.on_ectf_correction(&d),
            ProverMsg::KdfFlips { step, flips } => self.on_kdf_flips(step as usize, &flips),
            ProverMsg::KdfLabels { step, labels } => self.on_kdf_labels(step as usize, &labels),
            ProverMsg::RecCiphertext {
                id,
                ct,
                offsets,
                labels,
            } => self.on_rec_ciphertext(id, ct, &offsets, &labels),
            ProverMsg::DualLabels(_) | ProverMsg::DualTables { .. } | ProverMsg::DualEnd { .. } => {
                Err(Error::Unexpected {
                    expected: "the prover's keystream garbling between Hello and Close",
                    got,
                })
            }
            ProverMsg::RecSent { id } => {
                let (Cli::App(k), Some(r)) = (self.cli, self.recs.get(id as usize)) else {
                    return Err(Error::ClientRecord("a request record sent out of turn"));
                };
                if id as usize != k + 1 || !r.done {
                    return Err(Error::ClientRecord(
                        "a request record sent out of order or before its tag",
                    ));
                }
                let terms = self.terms.as_ref().ok_or(Error::OutOfOrder("RecSent"))?;
                let bytes = crate::rec::hidden_record(terms.params()?.0, &r.spec);
                self.recorder.feed(Direction::Sent, &bytes)?;
                self.client_records()?;
                Ok(vec![])
            }
            ProverMsg::Close { sent, received } => self.on_close(sent as usize, received as usize),
        }
    }

    fn client_records(&mut self) -> Result<()> {
        while self.cli_seen < self.recorder.transcript().sent.len() {
            let rec = self.recorder.transcript().sent[self.cli_seen].clone();
            self.cli_seen += 1;
            self.client_record(&rec)?;
        }
        Ok(())
    }

    fn client_record(&mut self, rec: &Record) -> Result<()> {
        match self.cli {
            Cli::Hello => {
                if rec.content_type != content_type::HANDSHAKE {
                    return Err(Error::ClientHello(
                        "the first client record is not a handshake",
                    ));
                }
                self.cli_hs.push(&rec.payload)?;
                let Some(m) = self.cli_hs.next_message()? else {
                    return Ok(());
                };
                if !self.cli_hs.is_empty() {
                    return Err(Error::ClientHello("more than a ClientHello"));
                }
                hello::check_client_hello(&m, &self.client_random, &self.cfg.verify.server_name)?;
                let ch = hsk::parse_client_hello(m.body())?;
                let terms = self
                    .terms
                    .ok_or(Error::OutOfOrder("a ClientHello before Hello"))?;
                // `check_client_hello` admitted only suites of `SUITES`:
                // none is unknown here.
                let suites = ch
                    .cipher_suites
                    .iter()
                    .map(|&c| hello::suite_from_wire(c))
                    .collect::<Result<Vec<_>>>()?;
                let family = suite_params(terms.suite);
                if suites.iter().any(|&s| suite_params(s) != family) {
                    return Err(Error::ClientHello(
                        "offers a suite outside the family the session was garbled for",
                    ));
                }
                self.flight.suites = suites;
                self.flight.ems_offered = ch.ems;
                self.transcript.extend_from_slice(&m.bytes);
                self.cli = Cli::KeyExchange;
            }
            Cli::KeyExchange => {
                let want = self.expected_cke.as_ref().ok_or(Error::ClientRecord(
                    "a ClientKeyExchange before the key-share opening",
                ))?;
                if rec.content_type != content_type::HANDSHAKE || &rec.payload != want {
                    return Err(Error::ClientRecord(
                        "the ClientKeyExchange is not the joint key share",
                    ));
                }
                self.cli = Cli::Ccs;
            }
            Cli::Ccs => {
                if rec.content_type != content_type::CHANGE_CIPHER_SPEC || rec.payload != [1] {
                    return Err(Error::ClientRecord(
                        "no ChangeCipherSpec after the key exchange",
                    ));
                }
                self.cli = Cli::Finished;
            }
            Cli::Finished => {
                self.check_client_record(rec, 0)?;
                self.cli = Cli::App(0);
            }
            Cli::App(k) => {
                self.check_client_record(rec, k + 1)?;
                self.cli = Cli::App(k + 1);
            }
        }
        Ok(())
    }

    /// A forwarded protected client record against record `idx` of the
    /// 2PC: its content type, length, explicit nonce (AES-GCM) and
    /// ciphertext.
    fn check_client_record(&self, rec: &Record, idx: usize) -> Result<()> {
        let r = self
            .recs
            .get(idx)
            .filter(|r| r.done)
            .ok_or(Error::ClientRecord(
                "a protected record the 2PC did not make",
            ))?;
        let spec = r.spec;
        let p = &rec.payload;
        // A request record's payload past its nonce is the verifier's own
        // zeros (`RecSent`): its ciphertext was never seen here.
        let ct = if spec.computes_h() {
            &r.ct[..]
        } else {
            &[][..]
        };
        // AES-GCM's explicit nonce is the sequence number; ChaCha20 has
        // none.
        let n = if r.chacha { 0 } else { 8 };
        if rec.content_type != spec.content_type()
            || p.len() != n + spec.len + 16
            || p[..n] != spec.seq().to_be_bytes()[..n]
            || (!ct.is_empty() && p[n..n + spec.len] != *ct)
        {
            return Err(Error::ClientRecord(
                "not the record encrypted in 2PC (type, length, nonce or ciphertext)",
            ));
        }
        Ok(())
    }

    fn server_records(&mut self) -> Result<()> {
        while self.srv_seen < self.recorder.transcript().received.len() {
            let rec = self.recorder.transcript().received[self.srv_seen].clone();
            self.srv_seen += 1;
            self.server_record(rec)?;
        }
        Ok(())
    }

    fn server_record(&mut self, rec: Record) -> Result<()> {
        let ct = rec.content_type;
        match self.srv {
            Srv::App => {
                if ct == content_type::CHANGE_CIPHER_SPEC {
                    return Err(Error::Unsupported("a second ChangeCipherSpec".into()));
                }
                let terms = self
                    .terms
                    .as_ref()
                    .ok_or(Error::OutOfOrder("server record"))?;
                if rec.payload.len() < crate::rec::overhead(terms.params()?.0) {
                    return Err(Error::Decrypt {
                        index: self.server_app_records,
                    });
                }
                self.server_app_records += 1;
                Ok(())
            }
            Srv::Finished => {
                let terms = self
                    .terms
                    .as_ref()
                    .ok_or(Error::OutOfOrder("server Finished"))?;
                check_server_finished(terms.params()?.0, &rec)?;
                self.server_finished = Some(rec);
                self.srv = Srv::App;
                Ok(())
            }
            _ if ct == content_type::ALERT => Err(server_alert(&rec.payload)),
            Srv::Ccs => {
                if ct == content_type::HANDSHAKE {
                    return Err(Error::Unsupported(
                        "a handshake message after ServerHelloDone (tickets, renegotiation)".into(),
                    ));
                }
                if ct != content_type::CHANGE_CIPHER_SPEC || rec.payload != [1] {
                    return Err(Error::Malformed("the server's ChangeCipherSpec"));
                }
                if !matches!(self.cli, Cli::App(_)) {
                    return Err(Error::Unexpected {
                        expected: "the client Finished before the server's",
                        got: "ChangeCipherSpec",
                    });
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
                    self.server_message(m)?;
                }
                Ok(())
            }
        }
    }

    fn server_message(&mut self, m: hsk::Message) -> Result<()> {
        let want = |t: u8, name: &'static str| {
            if m.typ == msg_type::CERTIFICATE_REQUEST {
                return Err(Error::Unsupported("client certificates".into()));
            }
            if m.typ != t {
                return Err(Error::Unexpected {
                    expected: name,
                    got: "another handshake message",
                });
            }
            Ok(())
        };
        match self.srv {
            Srv::Hello => {
                want(msg_type::SERVER_HELLO, "ServerHello")?;
                let sh = hsk::parse_server_hello(m.body())?;
                if sh.version != 0x0303 {
                    return Err(Error::Unsupported(format!(
                        "protocol version {:#06x}",
                        sh.version
                    )));
                }
                // Every offered suite is a known one: a code of no known
                // suite was not offered either.
                let suite = CipherSuite::from_code(sh.cipher_suite)
                    .filter(|s| self.flight.suites.contains(s))
                    .ok_or_else(|| {
                        Error::Unsupported(format!(
                            "suite {:#06x} was not offered",
                            sh.cipher_suite
                        ))
                    })?;
                suite_of(Some(suite))?;
                if sh.ems && !self.flight.ems_offered {
                    return Err(Error::Unsupported("EMS that was not offered".into()));
                }
                self.terms
                    .ok_or(Error::OutOfOrder("a ServerHello before Hello"))?
                    .check_negotiated(suite, sh.ems)?;
                self.flight.server_random = sh.random;
                self.flight.suite = Some(suite);
                self.flight.ems = sh.ems;
                self.srv = Srv::Certificate;
            }
            Srv::Certificate => {
                want(msg_type::CERTIFICATE, "Certificate")?;
                self.flight.chain = hsk::parse_certificate(m.body(), false)?;
                self.srv = Srv::KeyExchange;
            }
            Srv::KeyExchange => {
                want(msg_type::SERVER_KEY_EXCHANGE, "ServerKeyExchange")?;
                let ske = hsk::parse_server_key_exchange(m.body())?;
                // The suite and EMS were checked against the terms at the
                // ServerHello; the key derivation serves every group.
                let group = hello::group_from_wire(ske.group)?;
                let curve = group_curve(group);
                webproof_tls::identity::check_tls12_server(
                    &self.cfg.verify,
                    &self.flight.chain,
                    &self.client_random,
                    &self.flight.server_random,
                    &ske,
                )?;
                self.kx = Some(VerifierKx::new(&self.shares, curve, &ske.public)?);
                self.flight.group = Some(group);
                self.flight.server_key = ske.public;
                self.srv = Srv::HelloDone;
            }
            Srv::HelloDone => {
                want(msg_type::SERVER_HELLO_DONE, "ServerHelloDone")?;
                if !m.body().is_empty() {
                    return Err(Error::Malformed("a ServerHelloDone with a body"));
                }
                self.srv = Srv::Ccs;
            }
            _ => {
                return Err(Error::Unsupported(
                    "a handshake message out of place".into(),
                ))
            }
        }
        self.transcript.extend_from_slice(&m.bytes);
        Ok(())
    }

    fn curve(&self) -> Result<Curve> {
        self.flight
            .group
            .map(group_curve)
            .ok_or(Error::OutOfOrder("key exchange before the group"))
    }

    fn on_key_open(
        &mut self,
        public: &[u8],
        blind: &[u8; 32],
        flips: &[u8],
    ) -> Result<Vec<VerifierMsg>> {
        if !matches!(self.stage, Stage::Handshake) || self.srv != Srv::Ccs {
            return Err(Error::Unexpected {
                expected: "KeyOpen after the server's ServerHelloDone",
                got: "KeyOpen",
            });
        }
        let kx = self.kx.take().ok_or(Error::OutOfOrder("KeyOpen"))?;
        let curve = self.curve()?;
        let commit = match curve {
            Curve::P256 => self.commits.0,
            Curve::X25519 => self.commits.1,
        };
        keyshare::check_opening(&commit, public, blind)?;
        let client_pub = self.shares.client_share(curve, public)?;
        let cke = client_key_exchange(&client_pub);
        self.transcript.extend_from_slice(&cke);
        self.expected_cke = Some(cke);
        let keys = self.cots.take(ectf_cots(curve))?;
        let (kx2, m) = kx.respond(&mut self.ectf_ole, &keys, flips, &mut self.rng)?;
        self.stage = Stage::AwaitEctfCorrection(kx2);
        Ok(vec![VerifierMsg::EctfAnswer(m)])
    }

    fn on_ectf_correction(&mut self, correction: &[u8]) -> Result<Vec<VerifierMsg>> {
        let Stage::AwaitEctfCorrection(kx2) = core::mem::replace(&mut self.stage, Stage::Failed)
        else {
            return Err(Error::Unexpected {
                expected: "KeyOpen first",
                got: "EctfCorrection",
            });
        };
        let share = kx2.finish(correction)?;
        let suite = suite_of(self.flight.suite)?;
        let h = hello::transcript_hash(suite, &self.transcript);
        let public = KdfPublic {
            curve: self.curve()?,
            client_random: self.client_random,
            server_random: self.flight.server_random,
            session_hash: self.flight.ems.then(|| h.clone()),
            client_finished_hash: h,
        };
        self.kdf
            .as_mut()
            .ok_or(Error::OutOfOrder("key exchange before the tables"))?
            .bind(share, public)?;
        self.stage = Stage::Kdf {
            step: 0,
            labels: false,
        };
        Ok(vec![])
    }

    /// The record circuits' schedules this session will garble and has not
    /// been given, as jobs a driver may run on another thread
    /// ([`RecordPlanJob::build`]) and hand back with
    /// [`Self::provide_record_plan`]: a 1 KB request's schedule takes a
    /// couple of hundred ms of CPU, which would otherwise stall the stream
    /// of tables between the key derivation's and the record's. Empty
    /// before the `Hello` and once every record is garbled.
    pub fn record_plan_jobs(&self) -> Vec<RecordPlanJob> {
        self.recs
            .iter()
            .enumerate()
            // ChaCha20-Poly1305's circuits are built by the session (and
            // cached by the process, `RecSpec::chacha_plans`).
            .filter(|(_, r)| r.plan.is_none() && r.v.is_none() && !r.chacha)
            .map(|(index, r)| RecordPlanJob {
                index,
                spec: r.spec,
                key_len: r.key_len,
            })
            .collect()
    }

    /// Take a schedule built from [`Self::record_plan_jobs`]. One for a
    /// record already garbled, or built for another session's terms, is
    /// refused.
    pub fn provide_record_plan(&mut self, built: RecordPlan) -> Result<()> {
        match self.recs.get_mut(built.job.index) {
            Some(r)
                if r.v.is_none() && r.spec == built.job.spec && r.key_len == built.job.key_len =>
            {
                r.plan = Some(built.plan);
                if let Some(plan) = built.dual {
                    match r.dual.as_mut() {
                        Some(ev) if !ev.has_plan() => ev.set_plan(plan)?,
                        Some(_) => {}
                        None => r.dual_plan = Some(plan),
                    }
                }
                Ok(())
            }
            _ => Err(Error::OutOfOrder(
                "a record schedule this session did not ask for",
            )),
        }
    }

    /// Whether the next circuit [`Self::next_tables`] garbles is a record
    /// with no schedule given: a driver with a [`RecordPlanJob`] running
    /// should wait for it now (else this session builds the schedule
    /// itself, again).
    pub fn wants_record_plan(&self) -> bool {
        let steps = self.plans.as_ref().map_or(0, KdfPlans::steps);
        self.garbling
            .and_then(|i| i.checked_sub(steps))
            .and_then(|j| self.recs.get(j))
            .is_some_and(|r| r.plan.is_none() && r.v.is_none() && !r.chacha)
    }

    /// The next message of preprocessing, after the `Hello`'s `Setup`: a
    /// chunk of garbled tables (`Tables`), or the end of a circuit's
    /// (`Decoding`); `None` once every circuit is out. The caller sends
    /// each before asking for the next, so garbling overlaps the transfer
    /// and at most one chunk of tables is held at a time.
    pub fn next_tables(&mut self) -> Result<Option<VerifierMsg>> {
        self.guarded(Self::stream_tables)
    }

    fn stream_tables(&mut self) -> Result<Option<VerifierMsg>> {
        if let Some((j, hide)) = self.ahead_due.pop() {
            if self.recs[j].chacha {
                return self.chacha_ahead(j, hide).map(Some);
            }
            // After the last circuit, each request record's M2A of its
            // hidden ciphertext, then the powers' M2A of the record that
            // computes `H`, answered ahead on COTs drawn here (the prover
            // draws them when this message arrives, in the same order).
            let msg = if !hide {
                let k = ghash_powers(self.recs.iter().map(|r| r.spec));
                let keys = self.cots.take(gcm::cots_needed(k))?;
                let r = &mut self.recs[j];
                garbled(&mut r.v)?.powers_ahead(&mut r.ole, &keys)?
            } else {
                let keys = self.cots.take(gcm::hide_cots(self.recs[j].spec.len))?;
                let r = &mut self.recs[j];
                let msg = garbled(&mut r.v)?.hide_ahead(&mut r.ole, &keys, &mut self.rng)?;
                r.hide_keys = keys;
                msg
            };
            let id = self.recs[j].spec.id;
            return Ok(Some(VerifierMsg::RecPowers { id, msg }));
        }
        let Some(i) = self.garbling else {
            return Ok(None);
        };
        let steps = self.plans.as_ref().map_or(0, KdfPlans::steps);
        if i >= steps && self.recs.first().is_some_and(|r| r.chacha) {
            return self.chacha_tables(i, steps).map(Some);
        }
        let k = ghash_powers(self.recs.iter().map(|r| r.spec));
        if let Some(r) = i.checked_sub(steps).and_then(|j| self.recs.get_mut(j)) {
            if r.v.is_none() {
                let plan = match r.plan.take() {
                    Some(plan) => plan,
                    None => r.spec.plan(r.key_len)?,
                };
                let powers = r.spec.computes_h().then_some(k);
                let mut v = RecordVerifier::new(
                    plan,
                    r.spec.len,
                    r.spec.seq().to_be_bytes(),
                    self.delta,
                    r.spec.instance(),
                    powers,
                    &mut self.rng,
                )?;
                // Its key ‖ IV input is the key derivation's output,
                // garbled before it: chained, no COT and no round trip.
                let (Some(kdf), Some(plans)) = (&self.kdf, &self.plans) else {
                    return Err(Error::OutOfOrder("a record before the key derivation"));
                };
                let zero = key_iv_labels(kdf.key_labels(plans)?, r.key_len, r.iv_len)?;
                v.chain(&zero, &key_iv(&kdf.key_shares()))?;
                r.v = Some(v);
            }
        }
        let circuit = if i < steps {
            self.kdf.as_mut().and_then(|k| k.circuit_mut(i))
        } else {
            self.recs
                .get_mut(i - steps)
                .and_then(|r| r.v.as_mut())
                .map(|v| v.circuit_mut())
        }
        .ok_or(Error::OutOfOrder("tables of a circuit not garbled"))?;
        let tag = u8::try_from(i).map_err(|_| Error::Malformed("too many circuits"))?;
        let mut chunk = Vec::new();
        if circuit.next_chunk(&mut chunk) {
            return Ok(Some(VerifierMsg::Tables {
                circuit: tag,
                chunk,
            }));
        }
        let decoding = circuit.decoding()?;
        let early = if i < steps {
            let kdf = self
                .kdf
                .as_mut()
                .ok_or(Error::OutOfOrder("tables of a circuit not garbled"))?;
            if i + 1 < steps {
                // The next step takes the prover's share as labels output
                // here or before: chained before it is garbled.
                kdf.chain(i + 1)?;
            }
            kdf.early_inputs(i)?
        } else {
            garbled(&mut self.recs[i - steps].v)?.early_inputs()?
        };
        self.garbling = (i + 1 < steps + self.recs.len()).then_some(i + 1);
        if self.garbling.is_none() {
            // Popped from the back: the request records in order, then
            // the one that computes `H`.
            let (h, hidden): (Vec<usize>, Vec<usize>) =
                (0..self.recs.len()).partition(|&j| self.recs[j].spec.computes_h());
            self.ahead_due = h
                .into_iter()
                .map(|j| (j, false))
                .chain(hidden.into_iter().rev().map(|j| (j, true)))
                .collect();
        }
        Ok(Some(VerifierMsg::Decoding {
            circuit: tag,
            decoding,
            early,
        }))
    }

    /// The next message of circuit `i`'s tables under ChaCha20-Poly1305:
    /// record `j`'s record circuit is circuit `steps + 2j`, its tag
    /// circuit the next. Both are garbled at once when the record's turn
    /// comes (`ChachaVerifier::preprocess`), then streamed chunk by chunk.
    fn chacha_tables(&mut self, i: usize, steps: usize) -> Result<VerifierMsg> {
        let (j, c) = ((i - steps) / 2, (i - steps) % 2);
        let tag = u8::try_from(i).map_err(|_| Error::Malformed("too many circuits"))?;
        let (Some(kdf), Some(plans)) = (&self.kdf, &self.plans) else {
            return Err(Error::OutOfOrder("a record before the key derivation"));
        };
        let r = self
            .recs
            .get_mut(j)
            .ok_or(Error::OutOfOrder("tables of a circuit not garbled"))?;
        if r.cc.is_none() {
            let (plan, tag_plan) = r.spec.chacha_plans()?;
            let mut v = ChachaVerifier::new(
                plan,
                tag_plan,
                r.spec.len,
                AAD_LEN,
                r.spec.seq(),
                self.delta,
                r.spec.chacha_instances(),
                &mut self.rng,
            )?;
            // Its key ‖ IV input is the key derivation's output, garbled
            // before it: chained, no COT and no round trip.
            let zero = key_iv_labels(kdf.key_labels(plans)?, r.key_len, r.iv_len)?;
            v.chain(&zero, &key_iv(&kdf.key_shares()))?;
            r.cc_tables.set(v.preprocess()?);
            r.cc = Some(v);
        }
        let (msg, done) = r.cc_tables.next(c, tag)?;
        if !done {
            return Ok(msg);
        }
        self.garbling = (i + 1 < steps + 2 * self.recs.len()).then_some(i + 1);
        if self.garbling.is_none() {
            // Popped from the back: per request record in id order its
            // powers, then its hidden ciphertext's OLEs; the client
            // Finished's powers last.
            let mut due = vec![(CLIENT_FINISHED as usize, false)];
            for j in (1..self.recs.len()).rev() {
                due.push((j, true));
                due.push((j, false));
            }
            self.ahead_due = due;
        }
        Ok(msg)
    }

    /// ChaCha20-Poly1305's OLE answers of record `j`, ahead (the prover's
    /// `chacha_ahead` takes them in the same order): the M2A of its
    /// powers of `r` (then the tag circuit's input COT keys are drawn), or
    /// (`hide`) the bitwise OLEs that keep a request record's ciphertext
    /// from the verifier.
    fn chacha_ahead(&mut self, j: usize, hide: bool) -> Result<VerifierMsg> {
        let spec = self.recs[j].spec;
        let msg = if hide {
            let keys = self.cots.take(chacha::hide_cots(spec.len))?;
            let r = &mut self.recs[j];
            let v =
                r.cc.as_mut()
                    .ok_or(Error::OutOfOrder("a record before its tables"))?;
            let msg = v.hide_respond(&mut r.ole, &keys)?;
            r.hide_keys = keys;
            msg
        } else {
            let keys = self.cots.take(chacha::cots_needed(AAD_LEN, spec.len))?;
            let r = &mut self.recs[j];
            let v =
                r.cc.as_mut()
                    .ok_or(Error::OutOfOrder("a record before its tables"))?;
            let msg = v.powers_respond(&mut r.ole, &keys)?;
            r.tag_keys = self.cots.take(chacha::TAG_COTS)?;
            msg
        };
        Ok(VerifierMsg::RecPowers { id: spec.id, msg })
    }

    /// Set up the garbling of every circuit of a session on `terms`
    /// (preprocessing: no input is known yet, the server connection not
    /// open): the key derivation and every record in 2PC, streamed by
    /// [`Self::next_tables`].
    fn garble(&mut self, terms: Terms) -> Result<()> {
        let (suite, curve) = terms.params()?;
        let plans = KdfPlans::new(Tls12Config {
            curve,
            suite,
            ems: terms.ems,
        })?;
        let kdf = KdfVerifier::new(&plans, self.delta, &mut self.rng)?;
        for spec in RecSpec::all(&self.request_lens) {
            self.recs.push(VRec {
                spec,
                key_len: suite.key_len,
                iv_len: suite.iv_len,
                plan: None,
                v: None,
                ole: OleSender::new(self.delta, spec.stream()),
                done: false,
                ct: Vec::new(),
                hide_keys: Vec::new(),
                pad_keys: Vec::new(),
                dual: None,
                dual_plan: None,
                chacha: is_chacha(suite),
                cc: None,
                cc_tables: ChachaTables::default(),
                tag_keys: Vec::new(),
            });
        }
        self.plans = Some(plans);
        self.kdf = Some(kdf);
        self.garbling = Some(0);
        Ok(())
    }

    fn on_kdf_flips(&mut self, step: usize, flips: &[u8]) -> Result<Vec<VerifierMsg>> {
        let (
            Stage::Kdf {
                step: due,
                labels: false,
            },
            Some(plans),
            Some(kdf),
        ) = (&self.stage, &self.plans, &mut self.kdf)
        else {
            return Err(Error::Unexpected {
                expected: "the key derivation's turn",
                got: "KdfFlips",
            });
        };
        if step != *due {
            return Err(Error::OutOfOrder("key-derivation step"));
        }
        let keys = self.cots.take(plans.cots(step))?;
        let msg = kdf.inputs(step, &keys, flips)?;
        let mut out = vec![VerifierMsg::KdfInputs {
            step: step as u8,
            msg,
        }];
        // The next step's inputs this step's turn already fixed go now,
        // while the prover evaluates this one.
        if let Some(msg) = kdf.advance(step + 1)? {
            out.push(VerifierMsg::KdfAdvance {
                step: step as u8 + 1,
                msg,
            });
        }
        let reveals = plans.reveals(step);
        self.advance_kdf(step, reveals);
        Ok(out)
    }

    fn advance_kdf(&mut self, step: usize, labels: bool) {
        let steps = self.plans.as_ref().map_or(0, KdfPlans::steps);
        let after = self
            .plans
            .as_ref()
            .map_or(usize::MAX, KdfPlans::records_after);
        if !labels && step >= after && !self.records_open {
            self.keys = self.kdf.as_ref().map(KdfVerifier::key_shares);
            self.records_open = self.keys.is_some();
        }
        self.stage = if labels {
            Stage::Kdf { step, labels: true }
        } else if step + 1 < steps {
            Stage::Kdf {
                step: step + 1,
                labels: false,
            }
        } else {
            Stage::Records
        };
    }

    fn on_kdf_labels(&mut self, step: usize, labels: &[u8]) -> Result<Vec<VerifierMsg>> {
        let (
            Stage::Kdf {
                step: due,
                labels: true,
            },
            Some(plans),
            Some(kdf),
        ) = (&self.stage, &self.plans, &mut self.kdf)
        else {
            return Err(Error::Unexpected {
                expected: "labels of a revealing step",
                got: "KdfLabels",
            });
        };
        if step != *due {
            return Err(Error::OutOfOrder("key-derivation labels"));
        }
        kdf.receive(step, labels)?;
        if step == plans.client_vd_step() {
            let vd = kdf
                .client_vd()
                .ok_or(Error::OutOfOrder("client verify_data"))?;
            let mut t = self.transcript.clone();
            t.extend(finished(&vd));
            let suite = suite_of(self.flight.suite)?;
            let h = hello::transcript_hash(suite, &t);
            kdf.set_server_finished_hash(&h)?;
            self.server_finished_hash = Some(h);
        }
        self.advance_kdf(step, false);
        Ok(vec![])
    }

    fn rec(&mut self, id: u32, got: &'static str) -> Result<usize> {
        let i = id as usize;
        // Records run side by side (each its own circuit and OLE stream),
        // each once.
        if !self.records_open || i >= self.recs.len() {
            return Err(Error::Unexpected {
                expected: "a record in 2PC, once the key shares are known",
                got,
            });
        }
        if self.recs[i].done {
            return Err(Error::OutOfOrder("a record's ciphertext twice"));
        }
        Ok(i)
    }

    /// The evaluation of the prover's keystream garbling that record `id`'s
    /// chunk or end is for: request records in id order, one at a time.
    fn dual_record(&mut self, id: u32) -> Result<&mut RecordEvaluation> {
        let due = self.recs.iter().position(|r| {
            !r.spec.computes_h() && !r.dual.as_ref().is_some_and(|d| d.is_complete())
        });
        if due != Some(id as usize) {
            return Err(Error::OutOfOrder(
                "the prover's keystream tables out of record order, or after their end",
            ));
        }
        let r = &mut self.recs[id as usize];
        if r.dual.is_none() {
            // Its tables come at once; its schedule, built off the event
            // loop with the record's, may come later (a bound on its size
            // holds the tables meanwhile).
            let mut ev = if r.chacha {
                RecordEvaluation::for_cipher(
                    crate::rec::dual::RecordCipher::Chacha20Poly1305,
                    r.spec.len,
                    r.spec.instance(),
                )?
            } else {
                RecordEvaluation::new(r.key_len, r.spec.len, r.spec.instance())?
            };
            if let Some(plan) = r.dual_plan.take() {
                ev.set_plan(plan)?;
            }
            r.dual = Some(ev);
        }
        Ok(r.dual.as_mut().expect("set"))
    }

    fn on_rec_ciphertext(
        &mut self,
        id: u32,
        ct: Vec<u8>,
        offsets: &[u8],
        labels: &[u8],
    ) -> Result<Vec<VerifierMsg>> {
        let i = self.rec(id, "RecCiphertext")?;
        let spec = self.recs[i].spec;
        if self.recs[i].chacha {
            return self.on_chacha_request(i, ct, offsets, labels);
        }
        let want = if spec.computes_h() {
            spec.len
        } else {
            16 * gcm::ct_blocks(spec.len)
        };
        if ct.len() != want {
            return Err(Error::Malformed("ciphertext of the wrong length"));
        }
        let r = &mut self.recs[i];
        let v = garbled(&mut r.v)?;
        if spec.computes_h() {
            self.client_powers = Some(v.powers(offsets)?);
        } else if !offsets.is_empty() {
            return Err(Error::Malformed(
                "offsets of the GHASH key's powers from a record that takes them",
            ));
        }
        // The client Finished goes first (the prover sends the records in
        // their run order): its offsets make the powers every tag takes.
        let powers = self.client_powers.as_deref().ok_or(Error::OutOfOrder(
            "a request record before the client Finished",
        ))?;
        let (tag, corrections, check) = if spec.computes_h() {
            if !labels.is_empty() {
                return Err(Error::Malformed("keystream labels for the client Finished"));
            }
            (
                v.tag_share(powers, &spec.aad(), &ct)?,
                Vec::new(),
                Vec::new(),
            )
        } else {
            // The check value over both garblings of the keystream: the
            // prover sends the record to the server only if it matches.
            let key_len = r.key_len;
            let gv_zero = v.circuit().garbler().output_zero_labels(0)?;
            // The schedule, if no driver built it ahead: the process's
            // cached copy, or built now.
            let check = answer::check_value(
                r.dual.as_mut(),
                self.dual.as_ref(),
                || match r.dual_plan.take() {
                    Some(plan) => Ok(plan),
                    None => Ok(spec.keystream_plan(key_len)?),
                },
                labels,
                gv_zero,
                &r.pad_keys,
                self.delta,
            )?;
            let (tag, corrections) = v.hidden_tag_share(powers, &spec.aad(), &ct)?;
            (tag, corrections, check.to_vec())
        };
        r.ct = ct;
        r.done = true;
        Ok(vec![VerifierMsg::RecTagShare {
            id,
            tag,
            corrections,
            check,
        }])
    }

    /// A ChaCha20-Poly1305 record's tag request (`request`: the offsets of
    /// its powers, for a request record the ciphertext masked twice, the
    /// flips of the prover's tag-circuit input), with the client
    /// Finished's ciphertext `ct` (empty for a request record, whose
    /// ciphertext the verifier never sees) and a request record's labels
    /// for the dual execution: the tag circuit's input labels, sent in
    /// `RecTagShare`'s `corrections` (no tag share: the prover decodes
    /// the tag), with the keystream check value.
    fn on_chacha_request(
        &mut self,
        i: usize,
        ct: Vec<u8>,
        request: &[u8],
        labels: &[u8],
    ) -> Result<Vec<VerifierMsg>> {
        let spec = self.recs[i].spec;
        let r = &mut self.recs[i];
        let keys = core::mem::take(&mut r.tag_keys);
        let v =
            r.cc.as_mut()
                .ok_or(Error::OutOfOrder("a record before its tables"))?;
        let (answer, check) = if spec.computes_h() {
            if ct.len() != spec.len || !labels.is_empty() {
                return Err(Error::Malformed(
                    "the client Finished's ciphertext of the wrong length, or keystream labels",
                ));
            }
            let answer = v.tag_inputs(&spec.aad(), &ct, request, &keys)?;
            r.ct = ct;
            (answer, Vec::new())
        } else {
            if !ct.is_empty() {
                return Err(Error::Malformed(
                    "a request record's ciphertext in the clear",
                ));
            }
            let gv_zero = v.circuits().0.garbler().output_zero_labels(0)?;
            let check = answer::check_value(
                r.dual.as_mut(),
                self.dual.as_ref(),
                || match r.dual_plan.take() {
                    Some(plan) => Ok(plan),
                    None => Ok(spec.keystream_plan_for(Tls12Suite::CHACHA20_POLY1305_SHA256)?),
                },
                labels,
                gv_zero,
                &r.pad_keys,
                self.delta,
            )?;
            let answer = v.hidden_tag_inputs(&spec.aad(), request, &keys)?;
            r.ct = request.to_vec();
            (answer, check.to_vec())
        };
        r.done = true;
        Ok(vec![VerifierMsg::RecTagShare {
            id: spec.id,
            tag: [0; 16],
            corrections: answer,
            check,
        }])
    }

    fn on_close(&mut self, sent: usize, received: usize) -> Result<Vec<VerifierMsg>> {
        if self.server_finished.is_none() {
            return Err(Error::Unexpected {
                expected: "the server Finished before Close",
                got: "Close",
            });
        }
        if !matches!(self.stage, Stage::Records) || self.recs.iter().any(|r| !r.done) {
            return Err(Error::Unexpected {
                expected: "every record in 2PC before Close",
                got: "Close",
            });
        }
        let forwarded = match self.cli {
            Cli::App(k) => k,
            _ => 0,
        };
        if sent != self.request_lens.len() || forwarded != sent {
            return Err(Error::Recording(format!(
                "the prover names {sent} request records, {forwarded} were forwarded of {}",
                self.request_lens.len()
            )));
        }
        if received != self.server_app_records {
            return Err(Error::Recording(format!(
                "the prover names {received} server records, the verifier recorded {}",
                self.server_app_records
            )));
        }
        let keys = self.keys.clone().ok_or(Error::OutOfOrder("Close"))?;
        self.stage = Stage::Closed;
        Ok(vec![VerifierMsg::CloseAck {
            server_key: keys.server_key,
            server_iv: keys.server_iv,
            client_key: keys.client_key,
            client_iv: keys.client_iv,
        }])
    }

    /// The outcome, after the prover's `Close` was acknowledged.
    pub fn finish(self) -> Result<VerifierOutcome> {
        if !matches!(self.stage, Stage::Closed) {
            return Err(Error::OutOfOrder("finish before Close"));
        }
        let (Some(plans), Some(kdf), Some(keys)) = (&self.plans, &self.kdf, self.keys.clone())
        else {
            return Err(Error::OutOfOrder("finish"));
        };
        let vd = (
            kdf.client_vd().ok_or(Error::OutOfOrder("finish"))?,
            kdf.server_vd(),
        );
        // The proof checks the server Finished on values of this session:
        // its recording; under the reduced PRF its transcript, its own
        // mask and the IS_ms whose labels it checked; under the full PRF
        // the verify_data whose labels it checked.
        let fin = self
            .server_finished
            .as_ref()
            .ok_or(Error::OutOfOrder("finish before the server Finished"))?;
        let fvd = match (kdf.master_secret_pads(), vd.1) {
            (Some((is_ms, os_mask)), _) => FinishedVd::Reduced {
                is_ms,
                os_mask,
                hash: self
                    .server_finished_hash
                    .clone()
                    .ok_or(Error::OutOfOrder("finish before the client Finished"))?,
            },
            (None, Some(v)) => FinishedVd::Revealed(v),
            (None, None) => return Err(Error::OutOfOrder("finish before the server verify_data")),
        };
        let server_finished = Some(FinishedCheck {
            vd: fvd,
            record: fin.payload.clone(),
        });
        let mut runs = kdf.runs()?;
        for r in &self.recs {
            if let Some(cc) = &r.cc {
                let (record, tag) = cc.circuits();
                runs.push(record.retain()?);
                runs.push(tag.retain()?);
                continue;
            }
            let v =
                r.v.as_ref()
                    .ok_or(Error::OutOfOrder("a record before its tables"))?;
            runs.push(v.circuit().retain()?);
        }
        let retained = VerifierRetained {
            shape: Shape {
                cfg: Tls12Config {
                    curve: self.curve()?,
                    suite: suite_of(self.flight.suite)?,
                    ems: self.flight.ems,
                },
                request_lens: self.request_lens.clone(),
            },
            runs,
            ole_inputs: std::iter::once(&self.ectf_ole)
                .chain(self.recs.iter().map(|r| &r.ole))
                .zip(std::iter::once(ECTF_STREAM).chain(self.recs.iter().map(|r| r.spec.stream())))
                .zip(std::iter::once(false).chain(self.recs.iter().map(|r| r.chacha)))
                // A ChaCha20 record's OLE inputs are not revealed: the
                // prover recomputes them from its revealed multiplier `t`
                // (`crate::rec::chacha::audit_oles`).
                .map(|((ole, stream), chacha)| {
                    (
                        stream,
                        if chacha {
                            Vec::new()
                        } else {
                            ole.inputs().to_vec()
                        },
                    )
                })
                .collect(),
            server_finished,
        };
        Ok(VerifierOutcome {
            retained,
            key_labels: kdf.key_labels(plans)?,
            hidden: self
                .recs
                .iter()
                .filter(|r| !r.spec.computes_h())
                .map(|r| {
                    if r.chacha {
                        HiddenRecord::chacha(&r.spec, &r.ct, &r.hide_keys)
                    } else {
                        Ok(HiddenRecord::new(&r.spec, &r.ct, &r.hide_keys))
                    }
                })
                .collect::<Result<_>>()?,
            recording: self.recorder.finish(),
            suite: self
                .flight
                .suite
                .ok_or(Error::OutOfOrder("the outcome before the ServerHello"))?,
            group: self.flight.group.ok_or(Error::OutOfOrder(
                "the outcome before the ServerKeyExchange",
            ))?,
            ems: self.flight.ems,
            certificates: self.flight.chain,
            client_random: self.client_random,
            server_random: self.flight.server_random,
            delta: self.delta,
            key_shares: keys,
            verify_data: vd,
        })
    }

    /// Whether the prover reported the server's TCP close.
    pub fn server_closed(&self) -> bool {
        self.server_closed
    }
}

/// A record circuit's schedule to build off the session's thread
/// ([`VerifierSession::record_plan_jobs`]).
#[derive(Clone, Copy, Debug)]
pub struct RecordPlanJob {
    index: usize,
    spec: RecSpec,
    key_len: usize,
}

impl RecordPlanJob {
    /// Build the schedule (CPU only, no session state).
    pub fn build(self) -> Result<RecordPlan> {
        Ok(RecordPlan {
            plan: self.spec.plan(self.key_len)?,
            dual: (!self.spec.computes_h())
                .then(|| self.spec.keystream_plan(self.key_len))
                .transpose()?,
            job: self,
        })
    }
}

/// A built [`RecordPlanJob`], for [`VerifierSession::provide_record_plan`].
pub struct RecordPlan {
    job: RecordPlanJob,
    plan: Arc<Plan>,
    /// A request record's keystream circuit, which the prover garbles
    /// (dual execution).
    dual: Option<Arc<Plan>>,
}
