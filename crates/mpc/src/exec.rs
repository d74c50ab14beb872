//! One garbled circuit between the verifier (garbler) and the prover
//! (evaluator), as messages: what `webproof_mpc_tls::kdf::tls12` runs for each of its
//! circuits.
//!
//! Owns the message formats of one execution and nothing of the session:
//! no keys, no transcript. Exactly one input group belongs to the prover
//! (`prover_group`); every other group is the verifier's, or public values
//! the verifier encodes.
//!
//! # Messages and rounds
//! 1. *Preprocessing* (verifier → prover, before any input is known): the
//!    chunks of [`VerifierCircuit::next_chunk`] and then the decoding
//!    information ([`VerifierCircuit::decoding`]); tables and decoding depend
//!    only on `Δ` and the random 0-labels. The prover stores them.
//!    Groups of the verifier's whose bits it knows before the session
//!    (its random masks, constants of the protocol) may go with them
//!    ([`VerifierCircuit::early_inputs`], [`ProverCircuit::receive_early`]):
//!    their labels then cost the session nothing online. Groups the
//!    session fixes before the circuit's turn may likewise go online,
//!    while the prover evaluates an earlier circuit (the same calls):
//!    their bytes then cross the link while it would idle.
//! 2. *Inputs* (one round trip): the prover sends the flips of its bits
//!    against its COT MACs ([`ProverCircuit::flips`], one bit per input
//!    bit); the verifier answers with one message
//!    ([`VerifierCircuit::inputs`]): 16-byte corrections for the prover's
//!    wires ([`crate::transfer`], after-garbling mode), then the active
//!    labels of its other groups in group order.
//! 3. The prover evaluates ([`ProverCircuit::feed`], [`ProverCircuit::finish`])
//!    and decodes ([`ProverCircuit::decode`]); altered tables or a wrong
//!    input label give wrong bits, found by the audit after the session
//!    (`crate::output` says why not here).
//! 4. Optionally (prover → verifier) an output group the verifier must
//!    learn ([`ProverCircuit::output_message`]): its bits and one SHA-256
//!    digest of the active labels, 32 bytes instead of 16 per bit. The
//!    verifier recomputes the digest from the labels those bits select
//!    ([`VerifierCircuit::check_output`]); a prover that claims another
//!    bit would need the label it never saw, so a wrong bit is refused
//!    except with the probability of a SHA-256 collision on unknown
//!    128-bit labels.
//!
//! # Security (semi-honest garbler)
//! The verifier's encoding of *public* groups is trusted here: a garbler
//! that encodes another transcript hash, or garbles another function, is
//! caught only by the later consistency proof (the crate docs), which must
//! fix the public groups to the values both parties computed. The prover's
//! corrections and flips are covered by [`crate::transfer`].
use crate::consistency::{EvaluatedCircuit, EvaluatedRun, GarbledCircuit, GarbledRun};
use crate::error::{Error, Result};
use crate::output::Decoding;
use crate::plan::Plan;
use crate::{labels_from_bytes, labels_to_bytes, transfer, Evaluator, Garbler, ReceivedTables};
use rand_core::{CryptoRng, RngCore};
use sha2::{Digest, Sha256};
use std::sync::{Arc, Mutex};
use webproof_core::Block;

/// The digest a revealed output group's labels are checked by.
fn output_digest(labels: &[Block]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"webproof/mpc/output-reveal/v1");
    h.update((labels.len() as u64).to_le_bytes());
    for l in labels {
        h.update(l.to_bytes());
    }
    h.finalize().into()
}

/// One circuit's preprocessing as the prover stores it: its chunks of
/// tables (hashed as they came), its decoding and the labels of the
/// verifier's early inputs ([`VerifierCircuit::early_inputs`]).
pub type StepTables = (ReceivedTables, Vec<u8>, Vec<u8>);

/// The verifier's side of one circuit execution.
pub struct VerifierCircuit {
    garbler: Garbler,
    prover_group: usize,
    /// The bits of the verifier's groups as last encoded: revealed after
    /// the session for the consistency proof. A lock, not `&mut self`, so
    /// that answering stays a read of the garbling.
    own: Mutex<Option<Vec<Vec<bool>>>>,
    /// The groups encoded ahead ([`Self::early_inputs`]) and their bits.
    early: Vec<(usize, Vec<bool>)>,
    /// Whether the prover's group takes another circuit's output labels
    /// ([`Self::chain_prover_input`]): then no COT input for it, ever.
    chained: bool,
}

/// Bytes of the early input labels of `groups` of `plan`
/// ([`VerifierCircuit::early_inputs`]): what a prover expects before it
/// stores them.
pub fn early_len(plan: &Plan, groups: &[usize]) -> usize {
    groups
        .iter()
        .map(|&g| 16 * plan.inputs().get(g).map_or(0, Vec::len))
        .sum()
}

/// Whether `groups` are distinct, ascending groups of `plan` other than
/// the prover's and the ones already `sent` early.
fn valid_early(plan: &Plan, prover_group: usize, sent: &[usize], groups: &[usize]) -> Result<()> {
    for (i, &g) in groups.iter().enumerate() {
        if g >= plan.inputs().len() {
            return Err(Error::NoSuchInput(g));
        }
        if g == prover_group || (i > 0 && g <= groups[i - 1]) {
            return Err(Error::Malformed(
                "early input groups must be the verifier's, ascending",
            ));
        }
        if sent.contains(&g) {
            return Err(Error::Malformed("early input group sent twice"));
        }
    }
    Ok(())
}

impl VerifierCircuit {
    /// Garbler for `plan` under the session's `delta` and a fresh
    /// `instance` number (distinct per circuit of the session).
    pub fn new(
        plan: Arc<Plan>,
        delta: Block,
        instance: u64,
        prover_group: usize,
        rng: &mut (impl RngCore + CryptoRng),
    ) -> Result<Self> {
        if prover_group >= plan.inputs().len() {
            return Err(Error::NoSuchInput(prover_group));
        }
        Ok(VerifierCircuit {
            garbler: Garbler::from_plan(plan, delta, instance, rng)?,
            prover_group,
            own: Mutex::new(None),
            early: Vec::new(),
            chained: false,
        })
    }

    /// Before garbling: the prover's group takes the output labels of
    /// another circuit of the session (same `Δ`), whose 0-labels are
    /// `zero`: the prover feeds the labels it evaluated there
    /// ([`ProverCircuit::chain_prover_input`]), so its input costs no COT
    /// and cannot differ from that output. The input message
    /// ([`Self::inputs`], with no keys and no flips) then carries only the
    /// verifier's late groups, none at all if every group went early:
    /// a correction for a chained group would hand the prover a second
    /// label of a wire it already holds one of.
    pub fn chain_prover_input(&mut self, zero: &[Block]) -> Result<()> {
        self.garbler
            .set_input_zero_labels(self.prover_group, zero)?;
        self.chained = true;
        Ok(())
    }

    /// The labels of verifier groups known before the inputs (`groups`,
    /// ascending, with their `bits`): in preprocessing, its masks and
    /// constants; online, groups the session fixed one round trip early
    /// (sent while the prover evaluates another circuit, off the critical
    /// path). Any number of calls with groups not sent before, all before
    /// [`Self::inputs`], which then encodes only the other groups.
    pub fn early_inputs(&mut self, groups: &[usize], bits: &[Vec<bool>]) -> Result<Vec<u8>> {
        let answered = self.own.lock().unwrap_or_else(|e| e.into_inner()).is_some();
        if answered {
            return Err(Error::Malformed("early inputs after the inputs"));
        }
        if groups.len() != bits.len() {
            return Err(Error::Malformed("early inputs: one bit list per group"));
        }
        let sent: Vec<usize> = self.early.iter().map(|(g, _)| *g).collect();
        valid_early(self.garbler.plan(), self.prover_group, &sent, groups)?;
        let mut msg = Vec::new();
        for (&g, b) in groups.iter().zip(bits) {
            msg.extend(labels_to_bytes(&self.garbler.encode(g, b)?));
        }
        self.early
            .extend(groups.iter().copied().zip(bits.iter().cloned()));
        // `inputs` walks them in group order.
        self.early.sort_by_key(|(g, _)| *g);
        Ok(msg)
    }

    /// The next chunk of tables (preprocessing); `false` when none remain.
    pub fn next_chunk(&mut self, out: &mut Vec<u8>) -> bool {
        self.garbler.next_chunk(out)
    }

    /// All remaining chunks.
    pub fn garble_all(&mut self) -> Vec<Vec<u8>> {
        self.garbler.garble_all()
    }

    /// The decoding information, once every chunk is out.
    pub fn decoding(&self) -> Result<Vec<u8>> {
        Ok(self.garbler.decoding()?.to_bytes())
    }

    /// The answer to the prover's `flips`: corrections for its wires from
    /// the verifier's COT `keys`, then the labels of `own` (the bits of
    /// every other input group not sent early, in group order).
    pub fn inputs(&self, keys: &[Block], flips: &[u8], own: &[Vec<bool>]) -> Result<Vec<u8>> {
        let groups = self.garbler.plan().inputs().len();
        if own.len() + 1 + self.early.len() != groups {
            return Err(Error::Malformed("verifier inputs for another circuit"));
        }
        let mut msg = if self.chained {
            if !keys.is_empty() || !flips.is_empty() {
                return Err(Error::Malformed(
                    "input labels for a group chained to another circuit",
                ));
            }
            Vec::new()
        } else {
            let zero = self.garbler.input_zero_labels(self.prover_group)?;
            if keys.len() != zero.len() {
                return Err(Error::Length {
                    group: self.prover_group,
                    expected: zero.len(),
                    got: keys.len(),
                });
            }
            transfer::corrections(zero, keys, self.garbler.delta(), flips)?
        };
        let mut bits = own.iter();
        let mut early = self.early.iter().peekable();
        let mut all = Vec::with_capacity(groups - 1);
        for g in (0..groups).filter(|&g| g != self.prover_group) {
            if let Some((_, b)) = early.next_if(|(e, _)| *e == g) {
                all.push(b.clone());
                continue;
            }
            let b = bits.next().expect("counted");
            msg.extend(labels_to_bytes(&self.garbler.encode(g, b)?));
            all.push(b.clone());
        }
        *self.own.lock().unwrap_or_else(|e| e.into_inner()) = Some(all);
        Ok(msg)
    }

    /// Check the prover's reveal of output `group` (its bits and the
    /// digest of its labels, [`ProverCircuit::output_message`]) and read
    /// the bits.
    pub fn check_output(&self, group: usize, msg: &[u8]) -> Result<Vec<bool>> {
        let zero = self.garbler.output_zero_labels(group)?;
        let n = zero.len();
        let packed = n.div_ceil(8);
        if msg.len() != packed + 32 {
            return Err(Error::Malformed("output reveal of the wrong length"));
        }
        if n % 8 != 0 && msg[packed - 1] >> (n % 8) != 0 {
            return Err(Error::Malformed("output reveal with padding bits set"));
        }
        let bits: Vec<bool> = (0..n).map(|i| (msg[i / 8] >> (i % 8)) & 1 == 1).collect();
        let delta = self.garbler.delta();
        let labels: Vec<Block> = zero
            .iter()
            .zip(&bits)
            .map(|(&z, &b)| if b { z ^ delta } else { z })
            .collect();
        if output_digest(&labels)[..] != msg[packed..] {
            return Err(Error::OutputCheck { group, bit: 0 });
        }
        Ok(bits)
    }

    /// The garbler (for `Δ` and the 0-labels the consistency proof needs).
    pub fn garbler(&self) -> &Garbler {
        &self.garbler
    }

    /// What the consistency proof needs of this execution once its inputs
    /// were answered: the 0-labels and the verifier's input bits.
    pub fn retain(&self) -> Result<GarbledRun> {
        let answered = self.own.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let own = match answered {
            Some(own) => own,
            // A chained circuit has no input message: its verifier groups
            // all went early.
            None if self.chained && self.early.len() + 1 == self.garbler.plan().inputs().len() => {
                self.early.iter().map(|(_, b)| b.clone()).collect()
            }
            None => return Err(Error::NotFinished),
        };
        Ok(GarbledRun {
            circuit: GarbledCircuit::from_garbler(&self.garbler)?,
            prover_group: self.prover_group,
            own,
        })
    }
}

/// The prover's side of one circuit execution.
pub struct ProverCircuit {
    evaluator: Evaluator,
    prover_group: usize,
    macs: Option<Vec<Block>>,
    /// The prover's input bits and, once decoded, the decoding information
    /// and the outputs: kept for the consistency proof.
    bits: Option<Vec<bool>>,
    decoded: Option<(Vec<u8>, Vec<Vec<bool>>)>,
    /// The groups whose labels came ahead of the inputs
    /// ([`Self::receive_early`]).
    early: Vec<usize>,
    /// Whether the verifier's input message was taken.
    inputs_set: bool,
    /// Whether the prover's group took another circuit's output labels.
    chained: bool,
}

impl ProverCircuit {
    /// Evaluator for `plan` and the garbler's `instance`.
    pub fn new(plan: Arc<Plan>, instance: u64, prover_group: usize) -> Result<Self> {
        if prover_group >= plan.inputs().len() {
            return Err(Error::NoSuchInput(prover_group));
        }
        Ok(ProverCircuit {
            evaluator: Evaluator::from_plan(plan, instance),
            prover_group,
            macs: None,
            bits: None,
            decoded: None,
            early: Vec::new(),
            inputs_set: false,
            chained: false,
        })
    }

    /// The prover's group from another circuit's output: its active
    /// `labels` there and their `bits` (see
    /// [`VerifierCircuit::chain_prover_input`]), instead of [`Self::flips`].
    /// The verifier's input message then has no corrections; with every
    /// verifier group early there is none, and the circuit is ready to
    /// evaluate.
    pub fn chain_prover_input(&mut self, labels: &[Block], bits: &[bool]) -> Result<()> {
        if self.macs.is_some() || self.chained || labels.len() != bits.len() {
            return Err(Error::Malformed("a chained input after the inputs"));
        }
        self.evaluator.set_input(self.prover_group, labels)?;
        self.bits = Some(bits.to_vec());
        self.chained = true;
        Ok(())
    }

    /// Take the labels of the verifier's `groups` sent ahead of the inputs
    /// ([`VerifierCircuit::early_inputs`]): any number of calls with
    /// groups not taken before, all before the inputs.
    pub fn receive_early(&mut self, groups: &[usize], msg: &[u8]) -> Result<()> {
        if self.macs.is_some() || self.inputs_set {
            return Err(Error::Malformed("early inputs after the inputs"));
        }
        let plan = Arc::clone(self.evaluator.plan());
        valid_early(&plan, self.prover_group, &self.early, groups)?;
        if msg.len() != early_len(&plan, groups) {
            return Err(Error::Malformed("early input labels of the wrong length"));
        }
        self.set_groups(groups.iter().copied(), msg)?;
        self.early.extend_from_slice(groups);
        Ok(())
    }

    /// Set `groups`' labels from `msg`, one after the other (the caller
    /// checked its length).
    fn set_groups(&mut self, groups: impl Iterator<Item = usize>, msg: &[u8]) -> Result<()> {
        let plan = Arc::clone(self.evaluator.plan());
        let mut off = 0;
        for g in groups {
            let n = plan.inputs()[g].len();
            let labels = labels_from_bytes(&msg[off..off + 16 * n], n)?;
            self.evaluator.set_input(g, &labels)?;
            off += 16 * n;
        }
        Ok(())
    }

    /// Bits of the prover's input group.
    pub fn input_len(&self) -> usize {
        self.evaluator.plan().inputs()[self.prover_group].len()
    }

    /// The flips of `bits` against COT `macs` (one each), to send.
    pub fn flips(&mut self, macs: &[Block], bits: &[bool]) -> Result<Vec<u8>> {
        if self.chained {
            return Err(Error::Malformed("flips for a chained input"));
        }
        if macs.len() != self.input_len() || bits.len() != macs.len() {
            return Err(Error::Length {
                group: self.prover_group,
                expected: self.input_len(),
                got: bits.len().min(macs.len()),
            });
        }
        let f = transfer::flips(macs, bits)?;
        self.macs = Some(macs.to_vec());
        self.bits = Some(bits.to_vec());
        Ok(f)
    }

    /// Bytes of the verifier's [`VerifierCircuit::inputs`] message.
    pub fn inputs_len(&self) -> usize {
        16 * self
            .evaluator
            .plan()
            .inputs()
            .iter()
            .enumerate()
            .filter(|(g, _)| !self.early.contains(g))
            .filter(|(g, _)| !(self.chained && *g == self.prover_group))
            .map(|(_, w)| w.len())
            .sum::<usize>()
    }

    /// Take the verifier's input message and set every input group.
    pub fn receive_inputs(&mut self, msg: &[u8]) -> Result<()> {
        if self.inputs_set {
            return Err(Error::Malformed("a second input message"));
        }
        if msg.len() != self.inputs_len() {
            return Err(Error::Malformed("input label message of the wrong length"));
        }
        let mut off = 0;
        if !self.chained {
            let macs = self
                .macs
                .as_ref()
                .ok_or(Error::Malformed("input labels before the flips"))?;
            let n = macs.len();
            let own = transfer::labels_from_corrections(macs, &msg[..16 * n])?;
            self.evaluator.set_input(self.prover_group, &own)?;
            off = 16 * n;
        }
        let (prover, early) = (self.prover_group, self.early.clone());
        let groups = self.evaluator.plan().inputs().len();
        let late = (0..groups).filter(|g| *g != prover && !early.contains(g));
        self.set_groups(late, &msg[off..])?;
        self.inputs_set = true;
        Ok(())
    }

    /// Evaluate one chunk (after the inputs are set).
    pub fn feed(&mut self, chunk: &[u8]) -> Result<()> {
        self.evaluator.feed(chunk)
    }

    /// Evaluate the chunks received ahead (after the inputs are set).
    pub fn feed_received(&mut self, tables: &ReceivedTables) -> Result<()> {
        self.evaluator.feed_received(tables)
    }

    /// End of the table stream.
    pub fn finish(&mut self) -> Result<()> {
        self.evaluator.finish()
    }

    /// Decode every output group with the verifier's decoding bytes.
    pub fn decode(&mut self, decoding: &[u8]) -> Result<Vec<Vec<bool>>> {
        let out = self.evaluator.decode(&Decoding::from_bytes(decoding)?)?;
        self.decoded = Some((decoding.to_vec(), out.clone()));
        Ok(out)
    }

    /// The reveal of output `group` to the verifier (after
    /// [`Self::decode`]): its bits, packed LSB first, and the SHA-256
    /// digest of its active labels ([`VerifierCircuit::check_output`]).
    pub fn output_message(&self, group: usize) -> Result<Vec<u8>> {
        let (_, outputs) = self.decoded.as_ref().ok_or(Error::NotFinished)?;
        let bits = outputs.get(group).ok_or(Error::NoSuchOutput(group))?;
        let mut msg = vec![0u8; bits.len().div_ceil(8)];
        for (i, &b) in bits.iter().enumerate() {
            msg[i / 8] |= (b as u8) << (i % 8);
        }
        msg.extend_from_slice(&output_digest(self.evaluator.output_labels(group)?));
        Ok(msg)
    }

    /// The evaluator (for the labels the consistency proof needs).
    pub fn evaluator(&self) -> &Evaluator {
        &self.evaluator
    }

    /// What the consistency proof and the audit need of this execution
    /// once decoded: labels, digest, decoding, the prover's bits and the
    /// outputs.
    pub fn retain(&self) -> Result<EvaluatedRun> {
        let (Some(bits), Some((decoding, outputs))) = (&self.bits, &self.decoded) else {
            return Err(Error::NotFinished);
        };
        Ok(EvaluatedRun {
            circuit: EvaluatedCircuit::from_evaluator(&self.evaluator, Some(decoding))?,
            prover_group: self.prover_group,
            own: bits.clone(),
            outputs: outputs.clone(),
        })
    }
}
