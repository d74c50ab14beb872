//! The evaluator: consumes garbled chunks in order and holds one active
//! label per wire.
//!
//! Per AND gate with active labels `A, B` and table `T_G ‖ T_E`:
//! `C = H(A, j) ⊕ lsb(A)·T_G ⊕ H(B, j') ⊕ lsb(B)·(T_E ⊕ A)` (two hashes);
//! XOR is `A ⊕ B`, NOT copies the label, a constant's active label is the
//! all-zero block. See [`crate::garble`] for the garbler's side.
//!
//! Owns: the active labels of all wires while evaluation runs, and afterwards
//! those of the inputs and outputs (kept for the consistency proof that makes
//! the session maliciously secure, see the crate docs). It checks the framing
//! of every chunk before touching its state, so a malformed, reordered,
//! truncated or oversized chunk is refused with an [`Error`] and leaves the
//! evaluator as it was. Wrong table *contents* cannot be seen per gate (any
//! 32 bytes are a table); they surface as an output label that is neither
//! valid label, which [`Evaluator::decode`] reports.
//!
//! All input labels must be set before the first chunk is fed; a party that
//! receives tables before it knows its inputs (preprocessing) keeps the
//! chunks until then.

use crate::error::{Error, Result};
use crate::garble::BATCH;
use crate::hash::{gate_tweak, sigma, Tccr};
use crate::output::Decoding;
use crate::plan::Plan;
use crate::{CHUNK_HEADER, MAX_CHUNK_TABLES, TABLE_BYTES};
use sha2::{Digest, Sha256};
use std::sync::Arc;
use webproof_circuits::{Circuit, Gate};
use webproof_core::Block;

/// The hasher of the tables stream, with its domain label.
pub(crate) fn tables_hasher() -> Sha256 {
    Sha256::new_with_prefix(b"webproof-mpc/tables/v1")
}

/// Evaluates one garbled circuit instance.
pub struct Evaluator {
    plan: Arc<Plan>,
    instance: u64,
    hash: Tccr,
    /// Active labels of all wires; emptied when evaluation ends.
    labels: Vec<Block>,
    inputs: Vec<Option<Vec<Block>>>,
    outputs: Option<Vec<Vec<Block>>>,
    pos: usize,
    /// Index into the plan's AND groups of the group at or after `pos`.
    group: usize,
    tables: u64,
    seq: u32,
    /// SHA-256 of every table consumed, for the audit after `Δ` is revealed.
    digest: Sha256,
}

impl Evaluator {
    /// An evaluator for `circuit`, instance 0.
    pub fn new(circuit: &Circuit) -> Result<Self> {
        Ok(Self::from_plan(Arc::new(Plan::new(circuit)?), 0))
    }

    /// An evaluator for a prepared plan and the garbler's `instance` number.
    pub fn from_plan(plan: Arc<Plan>, instance: u64) -> Self {
        Evaluator {
            labels: vec![Block::ZERO; plan.num_slots],
            inputs: vec![None; plan.inputs.len()],
            plan,
            instance,
            hash: Tccr::new(),
            outputs: None,
            pos: 0,
            group: 0,
            tables: 0,
            seq: 0,
            digest: tables_hasher(),
        }
    }

    /// The garbler's instance number.
    pub fn instance(&self) -> u64 {
        self.instance
    }

    /// SHA-256 of the tables consumed so far (headers excluded, so it does
    /// not depend on the chunk size): what an honest garbling under the
    /// revealed `Δ` must reproduce ([`crate::consistency`]).
    pub fn tables_digest(&self) -> [u8; 32] {
        self.digest.clone().finalize().into()
    }

    /// The plan being evaluated.
    pub fn plan(&self) -> &Arc<Plan> {
        &self.plan
    }

    /// Set the active labels of input group `group` (from the garbler's
    /// [`crate::Garbler::encode`] or from a label transfer), before the
    /// first chunk.
    pub fn set_input(&mut self, group: usize, labels: &[Block]) -> Result<()> {
        if self.pos > 0 || self.seq > 0 || self.outputs.is_some() {
            return Err(Error::AlreadyStarted);
        }
        let wires = self
            .plan
            .inputs
            .get(group)
            .ok_or(Error::NoSuchInput(group))?;
        if wires.len() != labels.len() {
            return Err(Error::Length {
                group,
                expected: wires.len(),
                got: labels.len(),
            });
        }
        for (&w, &l) in wires.iter().zip(labels) {
            self.labels[w as usize] = l;
        }
        self.inputs[group] = Some(labels.to_vec());
        Ok(())
    }

    /// Evaluate one chunk. Chunks must arrive in the garbler's order; a
    /// refused chunk changes nothing.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<()> {
        if chunk.len() < CHUNK_HEADER {
            return Err(Error::ChunkHeader(chunk.len()));
        }
        let seq = u32::from_le_bytes(chunk[0..4].try_into().expect("4 bytes"));
        let count = u32::from_le_bytes(chunk[4..8].try_into().expect("4 bytes")) as u64;
        if seq != self.seq || self.outputs.is_some() {
            return Err(Error::ChunkOrder {
                expected: self.seq,
                got: seq,
            });
        }
        let remaining = self.plan.and_count - self.tables;
        if count == 0 || count > remaining || count > MAX_CHUNK_TABLES as u64 {
            return Err(Error::ChunkCount {
                got: count,
                remaining,
                max: MAX_CHUNK_TABLES as u64,
            });
        }
        let expected = CHUNK_HEADER + count as usize * TABLE_BYTES;
        if chunk.len() != expected {
            return Err(Error::ChunkLength {
                expected,
                got: chunk.len(),
            });
        }
        self.check_inputs()?;
        self.digest.update(&chunk[CHUNK_HEADER..]);
        let used = self.run(&chunk[CHUNK_HEADER..]);
        debug_assert_eq!(used, count as usize);
        self.seq += 1;
        if self.pos == self.plan.gates.len() {
            self.finish_outputs();
        }
        Ok(())
    }

    /// End of the stream: evaluate the gates after the last table (all of
    /// them for a circuit without AND gates). Fails if tables are missing.
    pub fn finish(&mut self) -> Result<()> {
        if self.outputs.is_some() {
            return Ok(());
        }
        let missing = self.plan.and_count - self.tables;
        if missing > 0 {
            return Err(Error::Truncated { missing });
        }
        self.check_inputs()?;
        self.run(&[]);
        debug_assert_eq!(self.pos, self.plan.gates.len());
        self.finish_outputs();
        Ok(())
    }

    /// Every table has been consumed and every gate evaluated.
    pub fn is_finished(&self) -> bool {
        self.outputs.is_some()
    }

    /// Active labels of input group `group` as set.
    pub fn input_labels(&self, group: usize) -> Result<&[Block]> {
        self.inputs
            .get(group)
            .ok_or(Error::NoSuchInput(group))?
            .as_deref()
            .ok_or(Error::InputMissing(group))
    }

    /// Active labels of output group `group`, once finished (to decode, to
    /// send back to the garbler as authenticated output, or for the proof).
    pub fn output_labels(&self, group: usize) -> Result<&[Block]> {
        let out = self.outputs.as_ref().ok_or(Error::NotFinished)?;
        out.get(group)
            .map(Vec::as_slice)
            .ok_or(Error::NoSuchOutput(group))
    }

    /// Decode every output group with the garbler's decoding information,
    /// checking each label against its digest: an evaluation that went wrong
    /// (altered tables, a wrong input label) is an [`Error::OutputCheck`],
    /// not a wrong answer.
    pub fn decode(&self, decoding: &Decoding) -> Result<Vec<Vec<bool>>> {
        let out = self.outputs.as_ref().ok_or(Error::NotFinished)?;
        decoding.decode(&self.hash, self.instance, out)
    }

    fn check_inputs(&self) -> Result<()> {
        match self.inputs.iter().position(Option::is_none) {
            Some(g) => Err(Error::InputMissing(g)),
            None => Ok(()),
        }
    }

    fn finish_outputs(&mut self) {
        let out = self
            .plan
            .outputs
            .iter()
            .map(|g| g.iter().map(|&w| self.labels[w as usize]).collect())
            .collect();
        self.outputs = Some(out);
        self.labels = Vec::new();
    }

    /// Walk the schedule consuming `tables` (a whole number of 32-byte
    /// tables), then the free gates up to the next AND gate; returns the
    /// tables used.
    fn run(&mut self, tables: &[u8]) -> usize {
        let plan = Arc::clone(&self.plan);
        let gates = &plan.gates;
        let labels = &mut self.labels[..];
        let have = tables.len() / TABLE_BYTES;
        let mut used = 0;
        let mut pos = self.pos;
        let mut buf = [Block::ZERO; 2 * BATCH];
        let mut tweaks = [Block::ZERO; BATCH];
        let mut ins = [(Block::ZERO, Block::ZERO); BATCH];
        let block = |off: usize| Block::from_bytes(tables[off..off + 16].try_into().expect("16"));
        while pos < gates.len() {
            match gates[pos].unpack() {
                Gate::And { .. } => {
                    if used == have {
                        break;
                    }
                    while plan.group_ends[self.group] as usize <= pos {
                        self.group += 1;
                    }
                    let group_left = plan.group_ends[self.group] as usize - pos;
                    let max = BATCH.min(have - used).min(group_left);
                    let mut n = 0;
                    while n < max && pos + n < gates.len() {
                        let Gate::And { a, b, .. } = gates[pos + n].unpack() else {
                            break;
                        };
                        let t = gate_tweak(self.instance, self.tables + n as u64, 0);
                        let (la, lb) = (labels[a as usize], labels[b as usize]);
                        buf[2 * n] = sigma(la) ^ t;
                        buf[2 * n + 1] = sigma(lb) ^ Block(t.0 | 1);
                        tweaks[n] = t;
                        ins[n] = (la, lb);
                        n += 1;
                    }
                    self.hash.permute_masked(&mut buf[..2 * n]);
                    for k in 0..n {
                        let Gate::And { out, .. } = gates[pos + k].unpack() else {
                            unreachable!()
                        };
                        let t = tweaks[k];
                        let ha = buf[2 * k] ^ t;
                        let hb = buf[2 * k + 1] ^ Block(t.0 | 1);
                        let off = (used + k) * TABLE_BYTES;
                        let (tg, te) = (block(off), block(off + 16));
                        let (la, lb) = ins[k];
                        let wg = ha ^ Block::select(la.lsb(), tg);
                        let we = hb ^ Block::select(lb.lsb(), te ^ la);
                        labels[out as usize] = wg ^ we;
                    }
                    pos += n;
                    used += n;
                    self.tables += n as u64;
                }
                Gate::Xor { a, b, out } => {
                    labels[out as usize] = labels[a as usize] ^ labels[b as usize];
                    pos += 1;
                }
                Gate::Inv { a, out } => {
                    labels[out as usize] = labels[a as usize];
                    pos += 1;
                }
                Gate::Const { out, .. } => {
                    labels[out as usize] = Block::ZERO;
                    pos += 1;
                }
                Gate::ByteInv { .. } => unreachable!("plans have no byte inversions"),
            }
        }
        self.pos = pos;
        used
    }
}
