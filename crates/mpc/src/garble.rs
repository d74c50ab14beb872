//! The garbler: half-gates garbling with free-XOR, streamed in chunks.
//!
//! Owns the global offset `Δ` (lsb 1: the point-and-permute bit of every
//! label pair differs), the 0-labels of every wire while garbling runs, and
//! afterwards the input and output 0-labels. Per AND gate `c = a ∧ b` with
//! 0-labels `A, B`, permute bits `pa = lsb(A)`, `pb = lsb(B)` and tweaks
//! `j, j'` (Zahur, Rosulek, Evans, "Two Halves Make a Whole", Eurocrypt 2015):
//!
//! ```text
//! T_G = H(A, j) ⊕ H(A ⊕ Δ, j) ⊕ pb·Δ          W_G = H(A, j) ⊕ pa·T_G
//! T_E = H(B, j') ⊕ H(B ⊕ Δ, j') ⊕ A           W_E = H(B, j') ⊕ pb·(T_E ⊕ A)
//! C   = W_G ⊕ W_E,   table = T_G ‖ T_E (32 bytes)
//! ```
//!
//! XOR is free (`C = A ⊕ B`), NOT is `C = A ⊕ Δ` on this side only, and a
//! constant `v` gets the 0-label `v·Δ`, so that its active label is the
//! public all-zero block the evaluator assumes. Four hashes per AND, batched
//! over runs of independent gates ([`crate::plan`]).
//!
//! The garbler never sees the evaluator's input: tables depend only on `Δ`
//! and the input 0-labels, so they can be made and sent before any input is
//! known. What it must never do: reuse `Δ` with a repeated `instance`
//! (tweaks would repeat), or reveal `Δ` or a 0-label of a wire whose active
//! label the evaluator holds.

use crate::error::{Error, Result};
use crate::hash::{gate_tweak, sigma, Tccr};
use crate::output::Decoding;
use crate::plan::Plan;
use crate::{CHUNK_HEADER, MAX_CHUNK_TABLES, TABLE_BYTES};
use rand_core::{CryptoRng, RngCore};
use std::sync::Arc;
use webproof_circuits::{Circuit, Gate};
use webproof_core::Block;

/// AND gates hashed per AES batch call.
pub(crate) const BATCH: usize = 32;

/// Default tables per chunk (128 KiB of tables).
pub const DEFAULT_CHUNK_TABLES: usize = 4096;

/// Garbles one circuit instance chunk by chunk.
pub struct Garbler {
    plan: Arc<Plan>,
    delta: Block,
    instance: u64,
    hash: Tccr,
    /// 0-labels of all wires; emptied when garbling ends.
    labels: Vec<Block>,
    input_zero: Vec<Vec<Block>>,
    output_zero: Option<Vec<Vec<Block>>>,
    pos: usize,
    /// Index into the plan's AND groups of the group at or after `pos`.
    group: usize,
    tables: u64,
    seq: u32,
    chunk_tables: usize,
    /// SHA-256 of the tables produced (see [`crate::Evaluator::tables_digest`]).
    digest: sha2::Sha256,
}

impl Garbler {
    /// A garbler for `circuit` (instance 0) under `delta`, with fresh random
    /// 0-labels for every input wire.
    pub fn new(
        circuit: &Circuit,
        delta: Block,
        rng: &mut (impl RngCore + CryptoRng),
    ) -> Result<Self> {
        Self::from_plan(Arc::new(Plan::new(circuit)?), delta, 0, rng)
    }

    /// A garbler for a prepared plan. `instance` numbers this garbling among
    /// all that use `delta`: it must differ between any two of them (the
    /// hash tweaks are `instance ‖ gate index`), and the evaluator must use
    /// the same number.
    pub fn from_plan(
        plan: Arc<Plan>,
        delta: Block,
        instance: u64,
        rng: &mut (impl RngCore + CryptoRng),
    ) -> Result<Self> {
        if !delta.lsb() {
            return Err(Error::DeltaLsb);
        }
        let mut labels = vec![Block::ZERO; plan.num_slots];
        let mut input_zero = Vec::with_capacity(plan.inputs.len());
        for group in &plan.inputs {
            let mut zs = Vec::with_capacity(group.len());
            for &w in group {
                let z = Block(((rng.next_u64() as u128) << 64) | rng.next_u64() as u128);
                labels[w as usize] = z;
                zs.push(z);
            }
            input_zero.push(zs);
        }
        Ok(Garbler {
            plan,
            delta,
            instance,
            hash: Tccr::new(),
            labels,
            input_zero,
            output_zero: None,
            pos: 0,
            group: 0,
            tables: 0,
            seq: 0,
            chunk_tables: DEFAULT_CHUNK_TABLES,
            digest: crate::evaluate::tables_hasher(),
        })
    }

    /// Tables per chunk from now on (clamped to `1..=MAX_CHUNK_TABLES`).
    pub fn set_chunk_tables(&mut self, n: usize) {
        self.chunk_tables = n.clamp(1, MAX_CHUNK_TABLES);
    }

    /// Replace the 0-labels of input group `group`, before the first chunk:
    /// this is how labels from correlated OT enter (see [`crate::transfer`]).
    pub fn set_input_zero_labels(&mut self, group: usize, zero: &[Block]) -> Result<()> {
        if self.pos > 0 || self.seq > 0 || self.output_zero.is_some() {
            return Err(Error::AlreadyStarted);
        }
        let wires = self
            .plan
            .inputs
            .get(group)
            .ok_or(Error::NoSuchInput(group))?;
        if wires.len() != zero.len() {
            return Err(Error::Length {
                group,
                expected: wires.len(),
                got: zero.len(),
            });
        }
        for (&w, &z) in wires.iter().zip(zero) {
            self.labels[w as usize] = z;
        }
        self.input_zero[group] = zero.to_vec();
        Ok(())
    }

    /// The global offset `Δ` (for the later consistency proof; never to the
    /// evaluator while its labels are live).
    pub fn delta(&self) -> Block {
        self.delta
    }

    /// The plan being garbled.
    pub fn plan(&self) -> &Arc<Plan> {
        &self.plan
    }

    /// 0-labels of input group `group`.
    pub fn input_zero_labels(&self, group: usize) -> Result<&[Block]> {
        self.input_zero
            .get(group)
            .map(Vec::as_slice)
            .ok_or(Error::NoSuchInput(group))
    }

    /// 0-labels of output group `group`, once garbling is finished.
    pub fn output_zero_labels(&self, group: usize) -> Result<&[Block]> {
        let out = self.output_zero.as_ref().ok_or(Error::NotFinished)?;
        out.get(group)
            .map(Vec::as_slice)
            .ok_or(Error::NoSuchOutput(group))
    }

    /// The active labels `L0 ⊕ x·Δ` of the garbler's own bits `bits` for
    /// input group `group`, to send to the evaluator.
    pub fn encode(&self, group: usize, bits: &[bool]) -> Result<Vec<Block>> {
        let zero = self.input_zero_labels(group)?;
        if zero.len() != bits.len() {
            return Err(Error::Length {
                group,
                expected: zero.len(),
                got: bits.len(),
            });
        }
        Ok(zero
            .iter()
            .zip(bits)
            .map(|(&z, &b)| z ^ Block::select(b, self.delta))
            .collect())
    }

    /// The instance number.
    pub fn instance(&self) -> u64 {
        self.instance
    }

    /// SHA-256 of the tables produced so far (headers excluded).
    pub fn tables_digest(&self) -> [u8; 32] {
        sha2::Digest::finalize(self.digest.clone()).into()
    }

    /// All tables have been produced.
    pub fn is_finished(&self) -> bool {
        self.output_zero.is_some()
    }

    /// Tables produced so far.
    pub fn tables_done(&self) -> u64 {
        self.tables
    }

    /// Write the next chunk into `out` (cleared first): an 8-byte header
    /// (sequence number and table count, little-endian `u32`s) and up to the
    /// chunk size of 32-byte tables. Returns `false`, with `out` empty, when
    /// no tables remain (a circuit without AND gates has no chunks).
    pub fn next_chunk(&mut self, out: &mut Vec<u8>) -> bool {
        out.clear();
        if self.output_zero.is_some() {
            return false;
        }
        let remaining = self.plan.and_count - self.tables;
        let budget = (self.chunk_tables as u64).min(remaining) as usize;
        out.reserve(CHUNK_HEADER + budget * TABLE_BYTES);
        out.extend_from_slice(&self.seq.to_le_bytes());
        out.extend_from_slice(&(budget as u32).to_le_bytes());
        let made = self.run(budget, out);
        debug_assert_eq!(made, budget);
        sha2::Digest::update(&mut self.digest, &out[CHUNK_HEADER..]);
        if self.pos == self.plan.gates.len() {
            self.finish();
        }
        if made == 0 {
            out.clear();
            return false;
        }
        self.seq += 1;
        true
    }

    /// Garble everything that remains into one buffer of concatenated chunks
    /// (tests and benchmarks; a session streams [`Self::next_chunk`]).
    pub fn garble_all(&mut self) -> Vec<Vec<u8>> {
        let mut chunks = Vec::new();
        let mut buf = Vec::new();
        while self.next_chunk(&mut buf) {
            chunks.push(std::mem::take(&mut buf));
        }
        chunks
    }

    /// Decoding information for every output group, once finished: permute
    /// bits and digests of both labels of each output wire.
    pub fn decoding(&self) -> Result<Decoding> {
        let out = self.output_zero.as_ref().ok_or(Error::NotFinished)?;
        Ok(Decoding::from_zero_labels(
            &self.hash,
            self.instance,
            self.delta,
            out,
        ))
    }

    /// Check output labels the evaluator sent back for group `group` and
    /// read their bits: the authenticity of garbled outputs (a label other
    /// than the two valid ones means the evaluator deviated).
    pub fn check_output_labels(&self, group: usize, labels: &[Block]) -> Result<Vec<bool>> {
        let zero = self.output_zero_labels(group)?;
        if zero.len() != labels.len() {
            return Err(Error::Length {
                group,
                expected: zero.len(),
                got: labels.len(),
            });
        }
        zero.iter()
            .zip(labels)
            .enumerate()
            .map(|(bit, (&z, &l))| {
                if l == z {
                    Ok(false)
                } else if l == z ^ self.delta {
                    Ok(true)
                } else {
                    Err(Error::OutputCheck { group, bit })
                }
            })
            .collect()
    }

    /// Keep the output 0-labels and free the wire array.
    fn finish(&mut self) {
        let out = self
            .plan
            .outputs
            .iter()
            .map(|g| g.iter().map(|&w| self.labels[w as usize]).collect())
            .collect();
        self.output_zero = Some(out);
        self.labels = Vec::new();
    }

    /// Walk the schedule, producing exactly `budget` tables (fewer only at
    /// the end), and then the free gates up to the next AND gate.
    fn run(&mut self, budget: usize, out: &mut Vec<u8>) -> usize {
        let plan = Arc::clone(&self.plan);
        let gates = &plan.gates;
        let delta = self.delta;
        let sd = sigma(delta);
        let labels = &mut self.labels[..];
        let mut made = 0;
        let mut pos = self.pos;
        let mut buf = [Block::ZERO; 4 * BATCH];
        let mut a0s = [Block::ZERO; BATCH];
        let mut bits = [(false, false); BATCH];
        let mut tweaks = [Block::ZERO; BATCH];
        while pos < gates.len() {
            match gates[pos].unpack() {
                Gate::And { .. } => {
                    if made == budget {
                        break;
                    }
                    while plan.group_ends[self.group] as usize <= pos {
                        self.group += 1;
                    }
                    let group_left = plan.group_ends[self.group] as usize - pos;
                    let max = BATCH.min(budget - made).min(group_left);
                    let mut n = 0;
                    while n < max && pos + n < gates.len() {
                        let Gate::And { a, b, .. } = gates[pos + n].unpack() else {
                            break;
                        };
                        let (a0, b0) = (labels[a as usize], labels[b as usize]);
                        let t = gate_tweak(self.instance, self.tables + n as u64, 0);
                        let t1 = Block(t.0 | 1);
                        let (sa, sb) = (sigma(a0), sigma(b0));
                        buf[4 * n] = sa ^ t;
                        buf[4 * n + 1] = sa ^ sd ^ t;
                        buf[4 * n + 2] = sb ^ t1;
                        buf[4 * n + 3] = sb ^ sd ^ t1;
                        a0s[n] = a0;
                        bits[n] = (a0.lsb(), b0.lsb());
                        tweaks[n] = t;
                        n += 1;
                    }
                    self.hash.permute_masked(&mut buf[..4 * n]);
                    for k in 0..n {
                        let t = tweaks[k];
                        let t1 = Block(t.0 | 1);
                        let (ha0, ha1) = (buf[4 * k] ^ t, buf[4 * k + 1] ^ t);
                        let (hb0, hb1) = (buf[4 * k + 2] ^ t1, buf[4 * k + 3] ^ t1);
                        let (pa, pb) = bits[k];
                        let a0 = a0s[k];
                        let tg = ha0 ^ ha1 ^ Block::select(pb, delta);
                        let wg = ha0 ^ Block::select(pa, tg);
                        let te = hb0 ^ hb1 ^ a0;
                        let we = hb0 ^ Block::select(pb, te ^ a0);
                        let Gate::And { out: c, .. } = gates[pos + k].unpack() else {
                            unreachable!()
                        };
                        labels[c as usize] = wg ^ we;
                        out.extend_from_slice(&tg.to_bytes());
                        out.extend_from_slice(&te.to_bytes());
                    }
                    pos += n;
                    made += n;
                    self.tables += n as u64;
                }
                Gate::Xor { a, b, out } => {
                    labels[out as usize] = labels[a as usize] ^ labels[b as usize];
                    pos += 1;
                }
                Gate::Inv { a, out } => {
                    labels[out as usize] = labels[a as usize] ^ delta;
                    pos += 1;
                }
                Gate::Const { value, out } => {
                    labels[out as usize] = Block::select(value, delta);
                    pos += 1;
                }
                Gate::ByteInv { .. } => unreachable!("plans have no byte inversions"),
            }
        }
        self.pos = pos;
        made
    }
}
