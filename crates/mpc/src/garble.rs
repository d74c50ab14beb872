//! The garbler: three-halves garbling with free-XOR, streamed in chunks.
//!
//! The scheme is that of Rosulek and Roy, "Three Halves Make a Whole?
//! Beating the Half-Gates Lower Bound for Garbled Circuits" (CRYPTO 2021):
//! an AND gate costs three *half*-ciphertexts of 64 bits and 5 control bits
//! (24.6 bytes) instead of the two 128-bit ciphertexts of half-gates, XOR
//! and NOT stay free, and labels keep the free-XOR form `W0`, `W0 ⊕ Δ` under
//! the one global `Δ` (lsb 1), so output labels are still IT-MACs under
//! `Δ` for [`crate::consistency`].
//!
//! The notation, the chunk layout, the per-gate random bits and the
//! security argument: `docs/protocol/garbling.md`.

use crate::error::{Error, Result};
use crate::evaluate::TablesDigest;
use crate::hash::{gate_tweak, random_tweak, sigma, Tccr};
use crate::output::Decoding;
use crate::plan::Plan;
use crate::{tables_bytes, CHUNK_HEADER, HALVES_BYTES, MAX_CHUNK_TABLES};
use rand_core::{CryptoRng, RngCore};
use std::sync::Arc;
use webproof_circuits::{Circuit, Gate};
use webproof_core::Block;

/// AND gates hashed per AES batch call.
pub(crate) const BATCH: usize = 32;

/// Default tables per chunk (~98 KiB of tables).
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
    digest: TablesDigest,
    /// The control bits of the chunk being made, one byte per table.
    control: Vec<u8>,
    /// The block of per-gate random bits last drawn: its index and bits.
    random: (u64, u128),
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
            digest: TablesDigest::new(),
            control: Vec::new(),
            random: (u64::MAX, 0),
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
        self.digest.finish()
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
    /// (sequence number and table count, little-endian `u32`s), up to the
    /// chunk size of 24-byte tables and their packed control bits (see the
    /// module docs). Returns `false`, with `out` empty, when no tables
    /// remain (a circuit without AND gates has no chunks).
    pub fn next_chunk(&mut self, out: &mut Vec<u8>) -> bool {
        out.clear();
        if self.output_zero.is_some() {
            return false;
        }
        let remaining = self.plan.and_count - self.tables;
        let budget = (self.chunk_tables as u64).min(remaining) as usize;
        out.reserve(CHUNK_HEADER + tables_bytes(budget));
        out.extend_from_slice(&self.seq.to_le_bytes());
        out.extend_from_slice(&(budget as u32).to_le_bytes());
        let mut control = std::mem::take(&mut self.control);
        control.clear();
        let made = self.run(budget, out, &mut control);
        debug_assert_eq!(made, budget);
        debug_assert_eq!(control.len(), made);
        self.digest.update(&out[CHUNK_HEADER..], &control);
        pack_control(&control, out);
        debug_assert_eq!(out.len(), CHUNK_HEADER + tables_bytes(made));
        self.control = control;
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

    /// Decoding information for every output group, once finished: the
    /// permute bit of each output wire.
    pub fn decoding(&self) -> Result<Decoding> {
        let out = self.output_zero.as_ref().ok_or(Error::NotFinished)?;
        Ok(Decoding::from_zero_labels(out))
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

    /// The two random bits `(s1, s2)` of AND gate `index` (module docs).
    fn random_bits(&mut self, index: u64) -> u8 {
        let block = index >> 6;
        if self.random.0 != block {
            let bits = self
                .hash
                .hash(self.delta, random_tweak(self.instance, block));
            self.random = (block, bits.0);
        }
        ((self.random.1 >> (2 * (index & 63))) & 3) as u8
    }

    /// Walk the schedule, producing exactly `budget` tables (fewer only at
    /// the end) into `out` and their control bits into `control` (one byte
    /// per table), and then the free gates up to the next AND gate.
    fn run(&mut self, budget: usize, out: &mut Vec<u8>, control: &mut Vec<u8>) -> usize {
        let plan = Arc::clone(&self.plan);
        let gates = &plan.gates;
        let delta = self.delta;
        let sd = sigma(delta);
        let (dl, dr) = halves(delta);
        let mut made = 0;
        let mut pos = self.pos;
        let mut buf = [Block::ZERO; 6 * BATCH];
        let mut ins = [(Block::ZERO, Block::ZERO); BATCH];
        let mut tweaks = [Block::ZERO; BATCH];
        let mut rand = [0u8; BATCH];
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
                        let index = self.tables + n as u64;
                        rand[n] = self.random_bits(index);
                        let labels = &self.labels;
                        let (za, zb) = (labels[a as usize], labels[b as usize]);
                        // The labels of colour 0.
                        let a0 = za ^ Block::select(za.lsb(), delta);
                        let b0 = zb ^ Block::select(zb.lsb(), delta);
                        let t = gate_tweak(self.instance, index, 0);
                        let (tb, tx) = (Block(t.0 | 1), Block(t.0 | 2));
                        let (sa, sb) = (sigma(a0), sigma(b0));
                        let sx = sa ^ sb;
                        buf[6 * n] = sa ^ t;
                        buf[6 * n + 1] = sa ^ sd ^ t;
                        buf[6 * n + 2] = sb ^ tb;
                        buf[6 * n + 3] = sb ^ sd ^ tb;
                        buf[6 * n + 4] = sx ^ tx;
                        buf[6 * n + 5] = sx ^ sd ^ tx;
                        ins[n] = (za, zb);
                        tweaks[n] = t;
                        n += 1;
                    }
                    self.hash.permute_masked(&mut buf[..6 * n]);
                    let labels = &mut self.labels[..];
                    for k in 0..n {
                        let t = tweaks[k];
                        let (tb, tx) = (Block(t.0 | 1), Block(t.0 | 2));
                        let h = &buf[6 * k..6 * k + 6];
                        let (ha0, ha1) = (h[0] ^ t, h[1] ^ t);
                        let (hb0, hb1) = (h[2] ^ tb, h[3] ^ tb);
                        let (hx0, hx1) = (h[4] ^ tx, h[5] ^ tx);
                        let (za, zb) = ins[k];
                        let (al, be) = (za.lsb(), zb.lsb());
                        let (a0, b0) =
                            (za ^ Block::select(al, delta), zb ^ Block::select(be, delta));
                        let (s1, s2) = (rand[k] & 1 == 1, rand[k] & 2 == 2);
                        let (al_, ar) = halves(a0);
                        let (bl, br) = halves(b0);
                        let (ab, axb) = (al & be, al ^ be);
                        let cl = lo(ha0)
                            ^ lo(hx0)
                            ^ (m(s1) & al_)
                            ^ (m(s1 ^ s2) & ar)
                            ^ (m(s2) & bl)
                            ^ (m(s1) & br)
                            ^ (m(ab) & dl);
                        let cr = lo(hb0)
                            ^ lo(hx0)
                            ^ (m(s2) & al_)
                            ^ (m(s1) & ar)
                            ^ (m(s1 ^ s2) & bl)
                            ^ (m(s2) & br)
                            ^ (m(ab) & dr);
                        let g0 = lo(ha0)
                            ^ lo(ha1)
                            ^ (m(be) & al_)
                            ^ (m(axb) & ar)
                            ^ (m(!al) & bl)
                            ^ (m(be) & br)
                            ^ (m(s1 ^ s2) & dl)
                            ^ (m(al ^ s2) & dr);
                        let g1 = lo(hb0)
                            ^ lo(hb1)
                            ^ (m(al) & al_)
                            ^ (m(!be) & ar)
                            ^ (m(axb) & bl)
                            ^ (m(al) & br)
                            ^ (m(be ^ s1) & dl)
                            ^ (m(s1 ^ s2) & dr);
                        let g2 = lo(hx0)
                            ^ lo(hx1)
                            ^ (m(axb) & al_)
                            ^ (m(al) & ar)
                            ^ (m(be) & bl)
                            ^ (m(axb) & br)
                            ^ (m(axb ^ s2) & dl)
                            ^ (m(axb ^ s1) & dr);
                        let z0 = s1 ^ bit(ha0) ^ bit(hx0);
                        let z1 = s2 ^ bit(hb0) ^ bit(hx0);
                        let z2 = be ^ bit(ha0) ^ bit(ha1);
                        let z3 = al ^ bit(hb0) ^ bit(hb1);
                        let z4 = axb ^ bit(hx0) ^ bit(hx1);
                        let Gate::And { out: c, .. } = gates[pos + k].unpack() else {
                            unreachable!()
                        };
                        labels[c as usize] = Block((cl as u128) | ((cr as u128) << 64));
                        let mut table = [0u8; HALVES_BYTES];
                        table[..8].copy_from_slice(&g0.to_le_bytes());
                        table[8..16].copy_from_slice(&g1.to_le_bytes());
                        table[16..].copy_from_slice(&g2.to_le_bytes());
                        out.extend_from_slice(&table);
                        control.push(
                            z0 as u8
                                | (z1 as u8) << 1
                                | (z2 as u8) << 2
                                | (z3 as u8) << 3
                                | (z4 as u8) << 4,
                        );
                    }
                    pos += n;
                    made += n;
                    self.tables += n as u64;
                }
                Gate::Xor { a, b, out } => {
                    let labels = &mut self.labels;
                    labels[out as usize] = labels[a as usize] ^ labels[b as usize];
                    pos += 1;
                }
                Gate::Inv { a, out } => {
                    let labels = &mut self.labels;
                    labels[out as usize] = labels[a as usize] ^ delta;
                    pos += 1;
                }
                Gate::Const { value, out } => {
                    self.labels[out as usize] = Block::select(value, delta);
                    pos += 1;
                }
                Gate::ByteInv { .. } => unreachable!("plans have no byte inversions"),
            }
        }
        self.pos = pos;
        made
    }
}

/// All ones if `b`, else zero.
#[inline(always)]
pub(crate) fn m(b: bool) -> u64 {
    (b as u64).wrapping_neg()
}

/// The low half of a hash output (the part that masks a half-label).
#[inline(always)]
pub(crate) fn lo(h: Block) -> u64 {
    h.0 as u64
}

/// Bit 64 of a hash output (the part that masks a control bit).
#[inline(always)]
pub(crate) fn bit(h: Block) -> bool {
    (h.0 >> 64) & 1 == 1
}

/// A label's halves `(X_L, X_R)`: its low and high 64 bits.
#[inline(always)]
pub(crate) fn halves(x: Block) -> (u64, u64) {
    (x.0 as u64, (x.0 >> 64) as u64)
}

/// Append the control bits (one byte of 5 bits per table) packed, 5 bits
/// per table from bit 0, padding the last byte with zeros.
pub(crate) fn pack_control(control: &[u8], out: &mut Vec<u8>) {
    let mut acc = 0u32;
    let mut have = 0;
    for &z in control {
        debug_assert!(z < 32);
        acc |= u32::from(z) << have;
        have += 5;
        while have >= 8 {
            out.push(acc as u8);
            acc >>= 8;
            have -= 8;
        }
    }
    if have > 0 {
        out.push(acc as u8);
    }
}
