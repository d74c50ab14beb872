//! The prover's session of MPC mode over TLS 1.3: the TLS client's wire
//! side (it writes the ClientHello and the client Finished, moves the
//! server's bytes) and the evaluator's half of the ECtF and the key
//! schedule.
//!
//! Flights (the table in `docs/protocol/mpc-tls13.md`): `Hello` →
//! (`Setup`, the key schedule's tables) → ClientHello to the server and
//! `ToServer` → the server's bytes, `FromServer`, and on its ServerHello
//! `KeyOpen` (the opening and the ECtF flips) → `EctfAnswer` →
//! `EctfCorrection`, `KdfFlips` of step 0 → per step `KdfInputs` /
//! `KdfLabels`; after step 1 the prover decrypts the server's flight
//! with the revealed server handshake key, checks the server Finished
//! and sends the client Finished (`ToServer`); after step 3 it holds its
//! shares of the application keys.

use super::hello::{
    check_server_hello, client_finished_record, client_hello, read_flight, server_hello,
};
use crate::cots::CotPool;
use crate::error::{Error, Result};
use crate::hello::{group_curve, record, Terms};
use crate::keyx::{ectf_cots, ProverKx, Shares, ECTF_STREAM};
use crate::msg::{ProverMsg, VerifierMsg};
use crate::prover::{ProverConfig, ProverOutput};
use rand_chacha::ChaCha20Rng;
use rand_core::{CryptoRng, RngCore, SeedableRng};
use webproof_mpc::exec::StepTables;
use webproof_mpc::keyshare;
use webproof_mpc::ole::OleReceiver;
use webproof_mpc::tls12::{Curve, KeyShares};
use webproof_mpc::tls13::{HandshakeSecrets, Tls13Plans, Tls13Prover, STEPS};
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
    group: KxGroup,
    curve: Curve,
    rng: ChaCha20Rng,
    cots: CotPool,
    ole: OleReceiver,
    plans: Tls13Plans,
    shares: Shares,
    blind: [u8; 32],
    /// The verifier's client random and its public share of the group.
    setup: Option<([u8; 32], Vec<u8>)>,
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
}

impl Tls13ProverSession {
    /// A session and its first message (`Hello`, with the commitments to
    /// both groups' public shares). `cfg.suites` must be
    /// [`super::SUITE`] alone (or empty); the group is `cfg.groups`' first
    /// (X25519 if none).
    pub fn new(
        cfg: ProverConfig,
        cots: CotPool,
        rng: &mut (impl RngCore + CryptoRng),
    ) -> Result<(Self, ProverMsg)> {
        if cfg.suites.iter().any(|s| *s != super::SUITE) {
            return Err(Error::Unsupported(format!(
                "suites other than {} in MPC mode over TLS 1.3",
                super::SUITE
            )));
        }
        if cfg.ems {
            return Err(Error::Usage(
                "TLS 1.3 has no extended master secret to offer".into(),
            ));
        }
        let group = cfg.groups.first().copied().unwrap_or(KxGroup::X25519);
        let curve = group_curve(group);
        let plans = Tls13Plans::shared(super::SCHEDULE)?;
        let mut rng = ChaCha20Rng::from_rng(rng).expect("ChaCha20 seeding from an RNG");
        let shares = Shares::random(&mut rng);
        let (c1, b1) = keyshare::commit(&shares.public(Curve::P256), &mut rng);
        let (c2, b2) = keyshare::commit(&shares.public(Curve::X25519), &mut rng);
        let blind = match curve {
            Curve::P256 => b1,
            Curve::X25519 => b2,
        };
        let hello = ProverMsg::Hello {
            commit_p256: c1,
            commit_x25519: c2,
            request_lens: crate::cots::request_records(cfg.request.len())
                .into_iter()
                .map(|l| l as u32)
                .collect(),
            terms: Terms {
                suite: super::SUITE,
                group,
                ems: false,
            },
            // No dual execution yet (the request's records are not run
            // over TLS 1.3 yet).
            dual_ot: [0; 32],
        };
        let recorder = Recorder::new(cfg.limits);
        Ok((
            Tls13ProverSession {
                cfg,
                group,
                curve,
                rng,
                cots,
                ole: OleReceiver::new(ECTF_STREAM),
                plans,
                shares,
                blind,
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
            },
            hello,
        ))
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
                ..
            } => {
                if self.setup.is_some() {
                    return Err(Error::Unexpected {
                        expected: "no second Setup",
                        got: "Setup",
                    });
                }
                let q = match self.curve {
                    Curve::P256 => q_p256,
                    Curve::X25519 => q_x25519.to_vec(),
                };
                self.setup = Some((client_random, q));
            }
            VerifierMsg::Tables { circuit, chunk } => {
                let i = self.table_slot(circuit)?;
                self.incoming[i].chunks.push(chunk);
            }
            VerifierMsg::Decoding {
                circuit,
                decoding,
                early,
            } => {
                let i = self.table_slot(circuit)?;
                self.incoming[i].end = Some((decoding, early));
                if i == STEPS - 1 {
                    self.send_client_hello(&mut out)?;
                }
            }
            VerifierMsg::EctfAnswer(m) => {
                let kx = self.kx.take().ok_or(Error::Unexpected {
                    expected: "no ECtF answer before KeyOpen",
                    got: "EctfAnswer",
                })?;
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
                let mut kdf = Tls13Prover::new(&self.plans, super::KDF_INSTANCE, &share, tables)?;
                let macs = self.cots.take(self.plans.cots(0))?;
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
                    3 => self.keys = Some(kdf.key_shares()?),
                    _ => {}
                }
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

    /// The index of `circuit`'s tables, which must come in order.
    fn table_slot(&self, circuit: u8) -> Result<usize> {
        let i = circuit as usize;
        let next = self.incoming.iter().position(|t| t.end.is_none());
        if self.setup.is_none() || next != Some(i) {
            return Err(Error::Unexpected {
                expected: "the key schedule's tables in order, after Setup",
                got: "tables of another circuit",
            });
        }
        Ok(i)
    }

    /// Preprocessing is done: the ClientHello with the joint key share
    /// (the prover's public share plus the verifier's, the verifier's
    /// known only now, after the prover committed to its own).
    fn send_client_hello(&mut self, out: &mut ProverOutput) -> Result<()> {
        let (random, q) = self.setup.clone().ok_or(Error::OutOfOrder("ClientHello"))?;
        let joint = self.shares.client_share(self.curve, &q)?;
        let name = &self.cfg.server_name;
        let sni = name
            .parse::<core::net::IpAddr>()
            .is_err()
            .then_some(name.as_str());
        let ch = client_hello(&random, sni, self.group, &joint);
        let bytes = record(content_type::HANDSHAKE, &ch);
        self.recorder.feed(Direction::Sent, &bytes)?;
        self.client_hello = Some(Message {
            typ: ch[0],
            bytes: ch,
        });
        out.to_server.extend_from_slice(&bytes);
        out.to_verifier.push(ProverMsg::ToServer(bytes));
        Ok(())
    }

    /// Bytes from the server, exactly as received.
    pub fn on_server_bytes(&mut self, bytes: &[u8]) -> Result<ProverOutput> {
        let mut out = ProverOutput::default();
        if self.client_hello.is_none() {
            return Err(Error::OutOfOrder("server bytes before the ClientHello"));
        }
        self.recorder.feed(Direction::Received, bytes)?;
        out.to_verifier.push(ProverMsg::FromServer(bytes.to_vec()));
        if self.server_hello.is_none() {
            let recs = &self.recorder.transcript().received;
            if let Some((sh, next)) = server_hello(recs)? {
                let server_key = check_server_hello(&sh, self.group)?;
                self.server_hello = Some((sh, next));
                let macs = self.cots.take(ectf_cots(self.curve))?;
                let (kx, flips) = ProverKx::start(
                    &self.shares,
                    self.curve,
                    &server_key,
                    &mut self.ole,
                    &macs,
                    &mut self.rng,
                )?;
                self.kx = Some(kx);
                out.to_verifier.push(ProverMsg::KeyOpen {
                    public: self.shares.public(self.curve),
                    blind: self.blind,
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
        let Some(flight) = read_flight(&self.recorder.transcript().received, *next, secrets)?
        else {
            return Ok(());
        };
        let h = super::SUITE.hash();
        let mut transcript = [&ch.bytes[..], &sh.bytes].concat();
        let [ee, cert, cv, fin] = &flight.messages;
        for m in [ee, cert, cv] {
            transcript.extend_from_slice(&m.bytes);
        }
        secrets
            .check_server_finished(&h.hash(&transcript), fin.body())
            .map_err(|_| Error::ServerFinished)?;
        transcript.extend_from_slice(&fin.bytes);
        let vd = secrets.client_verify_data(&h.hash(&transcript));
        let rec = client_finished_record(secrets, &vd)?;
        self.recorder.feed(Direction::Sent, &rec)?;
        out.to_server.extend_from_slice(&rec);
        out.to_verifier.push(ProverMsg::ToServer(rec));
        self.finished_sent = true;
        Ok(())
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

    /// The prover's recording of the session so far.
    pub fn recording(&self) -> &webproof_tls::Recording {
        self.recorder.transcript()
    }
}
