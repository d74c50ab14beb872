//! The session's key derivation in 2PC as numbered steps: the reduced PRF
//! of `crate::kdf::reduced` (seven steps) for the SHA-256 suites, the
//! full PRF of `crate::kdf::tls12` (three circuits) for the SHA-384
//! suites, with the extended master secret when negotiated. The reduced
//! PRF has no server Finished step: the proof checks it
//! ([`crate::consist::FinishedCheck`]); the full PRF's third circuit
//! computes it in 2PC.
//!
//! Owns the dispatch and the step bookkeeping both parties share (which
//! step reveals an output, when the client `verify_data` and the key
//! shares are known) and the labels the
//! later proofs need: the prover's active output labels of its key-block
//! shares and the verifier's 0-labels of the same wires.
//!
//! The steps themselves: [`tls12`] (the TLS 1.2 PRF in 2PC), [`reduced`]
//! (the same with only outer HMAC compressions garbled) and [`tls13`]
//! (the TLS 1.3 key schedule, which `crate::tls13`'s sessions run).

pub mod reduced;
pub mod tls12;
pub mod tls13;

use crate::error::{Error, Result};
use crate::kdf::reduced::{ReducedPlans, ReducedProver, ReducedVerifier, StepTables, STEPS};
use crate::kdf::tls12::{
    Curve, Randoms, Tables, Tls12Config, Tls12Plans, Tls12Prover, Tls12Verifier,
};
use rand_core::{CryptoRng, RngCore};
use webproof_circuits::bits_to_bytes;
use webproof_core::Block;
use webproof_mpc::consistency::{EvaluatedRun, GarbledRun};
use webproof_mpc::exec::VerifierCircuit;

/// Output labels (prover: active; verifier: 0-labels) of one output group
/// of one garbled circuit: with the verifier's `Δ` they are IT-MACs of the
/// prover's key-block share bits (see `webproof_mpc`'s "How this is shaped
/// for malicious security").
#[derive(Clone, PartialEq, Eq)]
pub struct KeyLabels {
    /// Garbling instance of the circuit.
    pub instance: u64,
    /// Output group.
    pub group: usize,
    /// One label per output bit.
    pub labels: Vec<Block>,
}

impl core::fmt::Debug for KeyLabels {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "KeyLabels(instance {}, group {}, {} labels)",
            self.instance,
            self.group,
            self.labels.len()
        )
    }
}

/// First garbling instance of the key derivation (records use
/// [`RECORD_INSTANCE`]` + id`).
pub(crate) const KDF_INSTANCE: u64 = 0;
/// First garbling instance of the records.
pub(crate) const RECORD_INSTANCE: u64 = 16;

/// Build the key derivation's plans of the SHA-256 suites (the reduced
/// PRF's seven steps, whatever the group and EMS) for this process, so that
/// no session pays for them: a verifier service calls this once at start,
/// off its request path. Other configurations are built on first use and
/// kept likewise.
pub fn warm_plans() -> Result<()> {
    ReducedPlans::shared().map(drop).map_err(Error::from)
}

/// The circuits of one session's key derivation.
pub(crate) enum KdfPlans {
    Reduced(ReducedPlans),
    Full(Tls12Plans),
}

impl KdfPlans {
    pub(crate) fn new(cfg: Tls12Config) -> Result<Self> {
        // Shared across the process's sessions ([`warm_plans`]).
        Ok(if is_reduced(&cfg) {
            KdfPlans::Reduced(ReducedPlans::shared()?)
        } else {
            KdfPlans::Full(Tls12Plans::shared(cfg)?)
        })
    }

    pub(crate) fn steps(&self) -> usize {
        match self {
            KdfPlans::Reduced(_) => STEPS,
            KdfPlans::Full(_) => 3,
        }
    }

    /// AND gates (garbled tables) of `step`'s circuit.
    pub(crate) fn and_count(&self, step: usize) -> u64 {
        match self {
            KdfPlans::Reduced(p) => p.and_counts().get(step).copied().unwrap_or(0),
            KdfPlans::Full(p) => p.and_counts().get(step).copied().unwrap_or(0),
        }
    }

    /// Bytes of `step`'s early input labels (its `Decoding`'s `early`).
    pub(crate) fn early_len(&self, step: usize) -> usize {
        match self {
            KdfPlans::Reduced(p) => p.plan(step).map_or(0, |plan| {
                webproof_mpc::exec::early_len(plan, crate::kdf::reduced::early_groups(step))
            }),
            KdfPlans::Full(_) => 0,
        }
    }

    /// COTs of the prover's share at `step`.
    pub(crate) fn cots(&self, step: usize) -> usize {
        match self {
            KdfPlans::Reduced(p) => p.cots(step),
            KdfPlans::Full(p) => {
                let (kd, fin) = p.cots();
                if step == 0 {
                    kd
                } else {
                    fin
                }
            }
        }
    }

    /// Whether the prover returns output labels after `step`.
    pub(crate) fn reveals(&self, step: usize) -> bool {
        match self {
            KdfPlans::Reduced(_) => step < STEPS,
            KdfPlans::Full(_) => step != 0,
        }
    }

    /// The step after which both know the client `verify_data` (the
    /// verifier then sets the server Finished hash).
    pub(crate) fn client_vd_step(&self) -> usize {
        match self {
            KdfPlans::Reduced(_) => 6,
            KdfPlans::Full(_) => 1,
        }
    }

    /// The step after which both know the key-block shares and the client
    /// `verify_data`: the records run from then on, beside the server
    /// Finished's steps.
    pub(crate) fn records_after(&self) -> usize {
        let key_step = self
            .key_outputs()
            .iter()
            .map(|&(s, _)| s)
            .max()
            .unwrap_or(0);
        key_step.max(self.client_vd_step())
    }

    /// Where the key-block shares are output: (step, group) pairs.
    fn key_outputs(&self) -> &'static [(usize, usize)] {
        key_outputs(self.is_reduced())
    }

    fn is_reduced(&self) -> bool {
        matches!(self, KdfPlans::Reduced(_))
    }
}

/// Whether `cfg` runs the reduced PRF (the SHA-256 suites).
pub(crate) fn is_reduced(cfg: &Tls12Config) -> bool {
    reduced_suite(cfg.suite)
}

/// Whether `suite` runs the reduced PRF: AES-128-GCM-SHA256's. The
/// reduced PRF's circuits output that suite's 40-byte key block (two
/// SHA-256 blocks of the key expansion); ChaCha20-Poly1305-SHA256's is 88
/// bytes (a third block), so it runs the full PRF, whose circuits take the
/// key block's length from the suite, as the SHA-384 suites do.
pub(crate) fn reduced_suite(suite: webproof_circuits::tls::Tls12Suite) -> bool {
    suite == webproof_circuits::tls::Tls12Suite::AES_128_GCM_SHA256
}

/// Where the key-block shares are output, in key-block order: (step,
/// group) pairs.
pub(crate) fn key_outputs(reduced: bool) -> &'static [(usize, usize)] {
    if reduced {
        &[(6, 1)]
    } else {
        &[(0, 0)]
    }
}

fn steps_to_tables(mut s: Vec<StepTables>) -> Result<Tables> {
    if s.len() != 3 {
        return Err(Error::Malformed("tables for another key derivation"));
    }
    // The full PRF's circuits have no early inputs.
    if s.iter().any(|(_, _, early)| !early.is_empty()) {
        return Err(Error::Malformed("early input labels for the full PRF"));
    }
    let (c2, d2, _) = s.pop().expect("3");
    let (c1, d1, _) = s.pop().expect("3");
    let (c0, d0, _) = s.pop().expect("3");
    // The full PRF (SHA-384 suites) feeds its chunks one by one, hashing
    // them then.
    let (c0, c1, c2) = (c0.into_chunks(), c1.into_chunks(), c2.into_chunks());
    Ok(Tables {
        chunks: [c0, c1, c2],
        decodings: [d0, d1, d2],
    })
}

/// Public inputs of the key derivation, as the verifier parsed them.
pub(crate) struct KdfPublic {
    /// The group the server chose (the circuits serve either).
    pub curve: Curve,
    pub client_random: [u8; 32],
    pub server_random: [u8; 32],
    /// RFC 7627 session hash (EMS only).
    pub session_hash: Option<Vec<u8>>,
    /// Hash of the handshake through the ClientKeyExchange.
    pub client_finished_hash: Vec<u8>,
}

/// The verifier's side.
// One per session, never moved in a hot path: the variants' sizes differ
// by a few hundred bytes, not worth another box.
#[allow(clippy::large_enum_variant)]
pub(crate) enum KdfVerifier {
    Reduced(Box<ReducedVerifier>),
    Full {
        v: Box<Tls12Verifier>,
        /// The premaster share and the public inputs, once bound.
        inputs: Option<Box<([u8; 32], KdfPublic)>>,
        sf_hash: Option<Vec<u8>>,
        keys: Option<crate::kdf::tls12::KeyShares>,
        client_vd: Option<[u8; 12]>,
        server_vd: Option<[u8; 12]>,
        next: usize,
    },
}

impl KdfVerifier {
    /// The key derivation's circuits under `delta`, ready to garble
    /// ([`Self::preprocess`]) before any input is known.
    pub(crate) fn new(
        plans: &KdfPlans,
        delta: Block,
        rng: &mut (impl RngCore + CryptoRng),
    ) -> Result<Self> {
        Ok(match plans {
            KdfPlans::Reduced(p) => KdfVerifier::Reduced(Box::new(ReducedVerifier::garble(
                p,
                delta,
                KDF_INSTANCE,
                rng,
            )?)),
            KdfPlans::Full(p) => KdfVerifier::Full {
                v: Box::new(Tls12Verifier::new(p, delta, KDF_INSTANCE, rng)?),
                inputs: None,
                sf_hash: None,
                keys: None,
                client_vd: None,
                server_vd: None,
                next: 0,
            },
        })
    }

    /// The verifier's premaster share and the public inputs, once the
    /// key exchange is done (before step 0's inputs).
    pub(crate) fn bind(&mut self, share: [u8; 32], public: KdfPublic) -> Result<()> {
        match self {
            KdfVerifier::Reduced(v) => {
                let randoms = Randoms {
                    client: &public.client_random,
                    server: &public.server_random,
                    session_hash: public.session_hash.as_deref(),
                };
                v.bind(&share, public.curve, &randoms, &public.client_finished_hash)?;
            }
            KdfVerifier::Full { inputs, .. } => {
                if inputs.is_some() {
                    return Err(Error::OutOfOrder("a second key exchange"));
                }
                *inputs = Some(Box::new((share, public)));
            }
        }
        Ok(())
    }

    /// Circuit `i` (a step, or the full PRF's circuit), to garble.
    pub(crate) fn circuit_mut(&mut self, i: usize) -> Option<&mut VerifierCircuit> {
        match self {
            KdfVerifier::Reduced(v) => v.circuits_mut().get_mut(i),
            KdfVerifier::Full { v, .. } => v.circuits_mut().get_mut(i),
        }
    }

    /// The labels of step `i`'s inputs known before the session (its
    /// masks), sent with its decoding: the reduced PRF's; the full PRF
    /// sends none.
    pub(crate) fn early_inputs(&mut self, i: usize) -> Result<Vec<u8>> {
        match self {
            KdfVerifier::Reduced(v) => Ok(v.early_inputs(i)?),
            KdfVerifier::Full { .. } => Ok(Vec::new()),
        }
    }

    /// Before garbling step `i`: chain its prover input to the outputs of
    /// the earlier steps it takes the share from (reduced PRF; the full
    /// PRF's steps take theirs by COT).
    pub(crate) fn chain(&mut self, i: usize) -> Result<()> {
        match self {
            KdfVerifier::Reduced(v) => Ok(v.chain(i)?),
            KdfVerifier::Full { .. } => Ok(()),
        }
    }

    /// The hash of the handshake through the client Finished, for the
    /// full PRF's server Finished circuit (the reduced PRF's is checked in
    /// the proof, which takes the hash from the session).
    pub(crate) fn set_server_finished_hash(&mut self, h: &[u8]) -> Result<()> {
        if let KdfVerifier::Full { sf_hash, .. } = self {
            *sf_hash = Some(h.to_vec());
        }
        Ok(())
    }

    /// `IS_ms` and the verifier's mask of `OS_ms` (reduced PRF, after the
    /// master secret's step).
    pub(crate) fn master_secret_pads(&self) -> Option<([u8; 32], [u8; 32])> {
        match self {
            KdfVerifier::Reduced(v) => v.master_secret_pads(),
            KdfVerifier::Full { .. } => None,
        }
    }

    pub(crate) fn inputs(&mut self, step: usize, keys: &[Block], flips: &[u8]) -> Result<Vec<u8>> {
        match self {
            KdfVerifier::Reduced(v) => Ok(v.inputs(step, keys, flips)?),
            KdfVerifier::Full {
                v,
                inputs,
                sf_hash,
                keys: ks,
                next,
                ..
            } => {
                if step != *next {
                    return Err(Error::OutOfOrder("key-derivation step"));
                }
                let (share, public) = inputs
                    .as_deref()
                    .map(|(s, p)| (s, p))
                    .ok_or(Error::OutOfOrder("key derivation before the key exchange"))?;
                let msg = match step {
                    0 => {
                        let randoms = Randoms {
                            client: &public.client_random,
                            server: &public.server_random,
                            session_hash: public.session_hash.as_deref(),
                        };
                        let (msg, k) =
                            v.key_derivation(share, public.curve, &randoms, keys, flips)?;
                        *ks = Some(k);
                        msg
                    }
                    1 => v.client_finished(&public.client_finished_hash, keys, flips)?,
                    2 => {
                        let h = sf_hash
                            .as_deref()
                            .ok_or(Error::OutOfOrder("server Finished step"))?;
                        v.server_finished(h, keys, flips)?
                    }
                    _ => return Err(Error::Malformed("no such key-derivation step")),
                };
                if step == 0 {
                    *next = 1;
                }
                Ok(msg)
            }
        }
    }

    /// The labels of `step`'s advance group, sent right after the inputs
    /// of the step before (`None` where it has none).
    pub(crate) fn advance(&mut self, step: usize) -> Result<Option<Vec<u8>>> {
        match self {
            KdfVerifier::Reduced(v) => Ok(v.advance(step)?),
            KdfVerifier::Full { .. } => Ok(None),
        }
    }

    pub(crate) fn receive(&mut self, step: usize, labels: &[u8]) -> Result<()> {
        match self {
            KdfVerifier::Reduced(v) => Ok(v.receive(step, labels)?),
            KdfVerifier::Full {
                v,
                client_vd,
                server_vd,
                next,
                ..
            } => {
                if step != *next || step == 0 {
                    return Err(Error::OutOfOrder("key-derivation labels"));
                }
                if step == 1 {
                    *client_vd = Some(v.client_verify_data(labels)?);
                } else {
                    let bits = v.circuits()[2].check_output(0, labels)?;
                    let vd: [u8; 12] = bits_to_bytes(&bits)
                        .try_into()
                        .map_err(|_| Error::Malformed("verify_data of the wrong length"))?;
                    *server_vd = Some(vd);
                }
                *next += 1;
                Ok(())
            }
        }
    }

    pub(crate) fn client_vd(&self) -> Option<[u8; 12]> {
        match self {
            KdfVerifier::Reduced(v) => v.client_verify_data(),
            KdfVerifier::Full { client_vd, .. } => *client_vd,
        }
    }

    /// The server `verify_data` computed in 2PC (full PRF only).
    pub(crate) fn server_vd(&self) -> Option<[u8; 12]> {
        match self {
            KdfVerifier::Reduced(_) => None,
            KdfVerifier::Full { server_vd, .. } => *server_vd,
        }
    }

    /// The verifier's key shares (its masks, drawn when it garbles).
    pub(crate) fn key_shares(&self) -> crate::kdf::tls12::KeyShares {
        match self {
            KdfVerifier::Reduced(v) => v.key_shares(),
            KdfVerifier::Full { v, .. } => v.key_shares(),
        }
    }

    /// Every step's record for the consistency proof, in step order.
    pub(crate) fn runs(&self) -> Result<Vec<GarbledRun>> {
        let circuits = match self {
            KdfVerifier::Reduced(v) => v.circuits(),
            KdfVerifier::Full { v, .. } => &v.circuits()[..],
        };
        Ok(circuits
            .iter()
            .map(|c| c.retain())
            .collect::<webproof_mpc::Result<_>>()?)
    }

    /// The 0-labels of the key-block output wires.
    pub(crate) fn key_labels(&self, plans: &KdfPlans) -> Result<Vec<KeyLabels>> {
        plans
            .key_outputs()
            .iter()
            .map(|&(step, group)| {
                let c = match self {
                    KdfVerifier::Reduced(v) => &v.circuits()[step],
                    KdfVerifier::Full { v, .. } => &v.circuits()[step],
                };
                Ok(KeyLabels {
                    instance: KDF_INSTANCE + step as u64,
                    group,
                    labels: c.garbler().output_zero_labels(group)?.to_vec(),
                })
            })
            .collect()
    }
}

/// The prover's side.
#[allow(clippy::large_enum_variant)] // as KdfVerifier
pub(crate) enum KdfProver {
    Reduced(Box<ReducedProver>),
    Full {
        p: Box<Tls12Prover>,
        share: [u8; 32],
        keys: Option<crate::kdf::tls12::KeyShares>,
        client_vd: Option<[u8; 12]>,
        server_vd: Option<[u8; 12]>,
        next: usize,
    },
}

impl KdfProver {
    pub(crate) fn new(plans: &KdfPlans, share: [u8; 32], tables: Vec<StepTables>) -> Result<Self> {
        Ok(match plans {
            KdfPlans::Reduced(p) => KdfProver::Reduced(Box::new(ReducedProver::new(
                p,
                KDF_INSTANCE,
                &share,
                tables,
            )?)),
            KdfPlans::Full(p) => KdfProver::Full {
                p: Box::new(Tls12Prover::new(p, KDF_INSTANCE, steps_to_tables(tables)?)?),
                share,
                keys: None,
                client_vd: None,
                server_vd: None,
                next: 0,
            },
        })
    }

    pub(crate) fn flips(&mut self, step: usize, macs: &[Block]) -> Result<Vec<u8>> {
        match self {
            KdfProver::Reduced(p) => Ok(p.flips(step, macs)?),
            KdfProver::Full { p, share, next, .. } => {
                if step != *next {
                    return Err(Error::OutOfOrder("key-derivation step"));
                }
                Ok(match step {
                    0 => p.key_derivation_flips(share, macs)?,
                    1 => p.client_finished_flips(macs)?,
                    2 => p.server_finished_flips(macs)?,
                    _ => return Err(Error::OutOfOrder("key-derivation step")),
                })
            }
        }
    }

    /// Take `step`'s advance labels (reduced PRF; the full PRF has none).
    pub(crate) fn receive_advance(&mut self, step: usize, msg: &[u8]) -> Result<()> {
        match self {
            KdfProver::Reduced(p) => Ok(p.receive_advance(step, msg)?),
            KdfProver::Full { .. } => Err(Error::Unexpected {
                expected: "no advance labels under the full PRF",
                got: "KdfAdvance",
            }),
        }
    }

    pub(crate) fn evaluate(&mut self, step: usize, msg: &[u8]) -> Result<Option<Vec<u8>>> {
        match self {
            KdfProver::Reduced(p) => Ok(p.evaluate(step, msg)?),
            KdfProver::Full {
                p,
                keys,
                client_vd,
                server_vd,
                next,
                ..
            } => {
                if step != *next {
                    return Err(Error::OutOfOrder("key-derivation step"));
                }
                let out = match step {
                    0 => {
                        *keys = Some(p.key_derivation_finish(msg)?);
                        None
                    }
                    1 => {
                        let (vd, labels) = p.client_finished_finish(msg)?;
                        *client_vd = Some(vd);
                        Some(labels)
                    }
                    2 => {
                        let (vd, labels) = p.server_verify_data(msg)?;
                        *server_vd = Some(vd);
                        Some(labels)
                    }
                    _ => return Err(Error::OutOfOrder("key-derivation step")),
                };
                *next += 1;
                Ok(out)
            }
        }
    }

    pub(crate) fn client_vd(&self) -> Option<[u8; 12]> {
        match self {
            KdfProver::Reduced(p) => p.client_verify_data(),
            KdfProver::Full { client_vd, .. } => *client_vd,
        }
    }

    /// The server `verify_data` computed in 2PC (full PRF only: the
    /// reduced PRF's is checked in the proof).
    pub(crate) fn server_vd(&self) -> Option<[u8; 12]> {
        match self {
            KdfProver::Reduced(_) => None,
            KdfProver::Full { server_vd, .. } => *server_vd,
        }
    }

    pub(crate) fn key_shares(&self) -> Option<crate::kdf::tls12::KeyShares> {
        match self {
            KdfProver::Reduced(p) => p.key_shares().ok(),
            KdfProver::Full { keys, .. } => keys.clone(),
        }
    }

    /// Every step's record for the consistency proof, in step order.
    pub(crate) fn runs(&self) -> Result<Vec<EvaluatedRun>> {
        let circuits = match self {
            KdfProver::Reduced(p) => p.circuits(),
            KdfProver::Full { p, .. } => &p.circuits()[..],
        };
        Ok(circuits
            .iter()
            .map(|c| c.retain())
            .collect::<webproof_mpc::Result<_>>()?)
    }

    /// The active labels of the prover's key-block share wires.
    pub(crate) fn key_labels(&self, plans: &KdfPlans) -> Result<Vec<KeyLabels>> {
        plans
            .key_outputs()
            .iter()
            .map(|&(step, group)| {
                let c = match self {
                    KdfProver::Reduced(p) => &p.circuits()[step],
                    KdfProver::Full { p, .. } => &p.circuits()[step],
                };
                Ok(KeyLabels {
                    instance: KDF_INSTANCE + step as u64,
                    group,
                    labels: c.evaluator().output_labels(group)?.to_vec(),
                })
            })
            .collect()
    }
}
