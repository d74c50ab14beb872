//! The evaluator: consumes garbled chunks in order and holds one active
//! label per wire.
//!
//! Three-halves garbling (`docs/protocol/garbling.md` has the notation,
//! the garbler's equations, the chunk layout and the security argument;
//! [`crate::garble`] the garbler). Per AND gate
//! with active labels `A*, B*` of colours `i = lsb(A*)`, `j = lsb(B*)`,
//! table `G0 ‖ G1 ‖ G2` and control bits `z0..z4`, with three hashes:
//!
//! ```text
//! r1   = z0 ⊕ i·z2 ⊕ (i⊕j)·z4 ⊕ h'(A*) ⊕ h'(A*⊕B*)
//! r2   = z1 ⊕ j·z3 ⊕ (i⊕j)·z4 ⊕ h'(B*) ⊕ h'(A*⊕B*)
//! C*_L = h(A*) ⊕ h(A*⊕B*) ⊕ i·G0 ⊕ (i⊕j)·G2
//!        ⊕ r1·A*_L ⊕ (r1⊕r2)·A*_R ⊕ (r2⊕i)·B*_L ⊕ r1·B*_R
//! C*_R = h(B*) ⊕ h(A*⊕B*) ⊕ j·G1 ⊕ (i⊕j)·G2
//!        ⊕ r2·A*_L ⊕ (r1⊕j)·A*_R ⊕ (r1⊕r2)·B*_L ⊕ r2·B*_R
//! ```
//!
//! XOR is `A* ⊕ B*`, NOT copies the label, a constant's active label is the
//! all-zero block.
//!
//! # Why the four rows decode right
//! *Slicing*: each output half is computed separately, from 64-bit hash
//! halves and half-ciphertexts. *Hashes*: each `G` carries the XOR of the
//! two hashes the evaluator may hold at its position (`G0` at `A`, `G1` at
//! `B`, `G2` at `A ⊕ B`) and is added exactly in the rows where the
//! evaluator holds the other one, so in every row the hash part of `C*_L`
//! is `h(A₀) ⊕ h(X₀)` and that of `C*_R` is `h(B₀) ⊕ h(X₀)`, as in the
//! garbler's `C`. What is left is GF(2)-linear in the halves of `A₀`, `B₀`
//! and `Δ`, and the gate is correct when, in each row `(i, j)`, the
//! coefficients match those of `C ⊕ (i⊕α)(j⊕β)·Δ`. The product `ij` is
//! not reachable through the `G`s (added with coefficients `i`, `j`,
//! `i⊕j`), and half-gates pays a second full ciphertext for it; here it
//! comes from *dicing*: the evaluator also multiplies the halves of its own
//! labels `A* = A₀ ⊕ i·Δ`, `B* = B₀ ⊕ j·Δ` by a 2×4 bit matrix whose
//! entries depend on `i`, `j`, so products such as `(r2⊕i)·B*_L` contain
//! `ij·Δ_L` (and `(r1⊕j)·A*_R` contains `ij·Δ_R`). That matrix is fixed by
//! the two bits `r = (r1, r2)` decrypted from the control bits, which the
//! garbler sets, for all four rows at once, to
//! `r = (s1 ⊕ i·α ⊕ j·(α⊕β), s2 ⊕ i·(α⊕β) ⊕ j·β)`; solving the
//! coefficient equations with these (a small linear system over GF(2),
//! worked out once; the tests check every row over many garblings) gives
//! the garbler's `C`, `G0`, `G1`, `G2`. The control bits are garbled like
//! the halves: `z0, z1` the row-independent part of `r` under the pads
//! `h'(A₀) ⊕ h'(X₀)`, `h'(B₀) ⊕ h'(X₀)`, and `z2, z3, z4` its parts
//! linear in `i`, `j`, `i⊕j` under the XOR of the two hash bits at each
//! position. In every row `r` is uniform (one-time padded by the secret
//! `s1, s2`), so the evaluator's matrix says nothing about `α`, `β`.
//!
//! Owns: the active labels of all wires while evaluation runs, and afterwards
//! those of the inputs and outputs (kept for the consistency proof that makes
//! the session maliciously secure, see the crate docs). It checks the framing
//! of every chunk before touching its state, so a malformed, reordered,
//! truncated or oversized chunk, or one with nonzero padding bits, is
//! refused with an [`Error`] and leaves the evaluator as it was. Wrong table
//! *contents* cannot be seen per gate (any bytes are a table); they surface
//! as an output label that is neither valid label, which
//! [`Evaluator::decode`] reports.
//!
//! All input labels must be set before the first chunk is fed; a party that
//! receives tables before it knows its inputs (preprocessing) keeps the
//! chunks until then in [`ReceivedTables`], which checks their framing and
//! hashes them on arrival, so that evaluation, online, only evaluates.

use crate::error::{Error, Result};
use crate::garble::{bit, halves, lo, m, BATCH};
use crate::hash::{gate_tweak, sigma, Tccr};
use crate::output::Decoding;
use crate::plan::Plan;
use crate::{tables_bytes, CHUNK_HEADER, CONTROL_BITS, HALVES_BYTES, MAX_CHUNK_TABLES};
use sha2::{Digest, Sha256};
use std::sync::Arc;
use webproof_circuits::{Circuit, Gate};
use webproof_core::Block;

/// The digest of a circuit's tables, independent of the chunking: the
/// half-ciphertexts and the control bits (one byte per table) are hashed as
/// two streams, combined at the end.
#[derive(Clone)]
pub(crate) struct TablesDigest {
    halves: Sha256,
    control: Sha256,
}

impl TablesDigest {
    pub(crate) fn new() -> Self {
        TablesDigest {
            halves: Sha256::new_with_prefix(b"webproof-mpc/tables/v2/halves"),
            control: Sha256::new_with_prefix(b"webproof-mpc/tables/v2/control"),
        }
    }

    /// Tables in order: their half-ciphertexts and control bytes.
    pub(crate) fn update(&mut self, halves: &[u8], control: &[u8]) {
        self.halves.update(halves);
        self.control.update(control);
    }

    pub(crate) fn finish(&self) -> [u8; 32] {
        let mut h = Sha256::new_with_prefix(b"webproof-mpc/tables/v2");
        h.update(self.halves.clone().finalize());
        h.update(self.control.clone().finalize());
        h.finalize().into()
    }
}

/// Unpack `count` tables' control bits from a chunk's trailer (exactly
/// `tables_bytes(count) - count·24` bytes) into one byte per table; `None`
/// if a padding bit is set.
fn unpack_control(trailer: &[u8], count: usize, control: &mut Vec<u8>) -> Option<()> {
    let bits = count * CONTROL_BITS;
    debug_assert_eq!(trailer.len(), bits.div_ceil(8));
    if !bits.is_multiple_of(8) && trailer[trailer.len() - 1] >> (bits % 8) != 0 {
        return None;
    }
    control.clear();
    control.extend((0..count).map(|k| {
        let p = k * CONTROL_BITS;
        let lo = u16::from(trailer[p / 8]);
        let hi = trailer.get(p / 8 + 1).map_or(0, |&b| u16::from(b));
        (((hi << 8 | lo) >> (p % 8)) & 31) as u8
    }));
    Some(())
}

/// A circuit's garbled tables as the evaluator receives them ahead of its
/// inputs (preprocessing): the chunks, and the digest of their tables
/// ([`Evaluator::tables_digest`]) computed as they arrive, so that
/// evaluation, online, does not hash them (SHA-256 was a quarter of the
/// evaluator's time). The digest covers exactly the chunks held, in
/// order: [`Evaluator::feed_received`] evaluates those, and hashes any
/// chunk the digest does not cover yet as [`Evaluator::feed`] does.
#[derive(Clone)]
pub struct ReceivedTables {
    chunks: Vec<Vec<u8>>,
    /// The digest of `chunks[..digested]`.
    digest: TablesDigest,
    digested: usize,
    control: Vec<u8>,
}

impl Default for ReceivedTables {
    fn default() -> Self {
        ReceivedTables {
            chunks: Vec::new(),
            digest: TablesDigest::new(),
            digested: 0,
            control: Vec::new(),
        }
    }
}

impl core::fmt::Debug for ReceivedTables {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "ReceivedTables({} chunks)", self.chunks.len())
    }
}

impl ReceivedTables {
    /// Take the next chunk: its framing is checked (sequence number,
    /// table count, length, padding; what needs the circuit, the tables
    /// left, is checked when it is evaluated) and its tables hashed. A
    /// refused chunk is not kept.
    pub fn push(&mut self, chunk: Vec<u8>) -> Result<()> {
        if self.digested != self.chunks.len() {
            return Err(Error::Malformed("a chunk after a malformed one"));
        }
        self.absorb(&chunk)?;
        self.chunks.push(chunk);
        Ok(())
    }

    /// Check and hash the chunk after the digested ones.
    fn absorb(&mut self, chunk: &[u8]) -> Result<()> {
        let (halves, trailer, count) = chunk_parts(chunk, self.digested as u32)?;
        if unpack_control(trailer, count, &mut self.control).is_none() {
            return Err(Error::Malformed(
                "nonzero padding after a chunk's control bits",
            ));
        }
        self.digest.update(halves, &self.control);
        self.digested += 1;
        Ok(())
    }

    /// The chunks as received.
    pub fn chunks(&self) -> &[Vec<u8>] {
        &self.chunks
    }

    /// The chunks, for a caller that feeds them one by one.
    pub fn into_chunks(self) -> Vec<Vec<u8>> {
        self.chunks
    }
}

impl From<Vec<Vec<u8>>> for ReceivedTables {
    /// The chunks in order, hashed up to the first malformed one (which
    /// evaluation then refuses, as [`Evaluator::feed`] would).
    fn from(chunks: Vec<Vec<u8>>) -> Self {
        let mut t = ReceivedTables::default();
        for c in chunks {
            if t.digested == t.chunks.len() {
                // A malformed chunk stops the hashing; it is kept for
                // evaluation to refuse.
                let _refused = t.absorb(&c);
            }
            t.chunks.push(c);
        }
        t
    }
}

/// A chunk's half-ciphertexts, control trailer and table count, if its
/// header says it is chunk `seq` and its length matches its count.
fn chunk_parts(chunk: &[u8], seq: u32) -> Result<(&[u8], &[u8], usize)> {
    if chunk.len() < CHUNK_HEADER {
        return Err(Error::ChunkHeader(chunk.len()));
    }
    let got = u32::from_le_bytes(chunk[0..4].try_into().expect("4 bytes"));
    if got != seq {
        return Err(Error::ChunkOrder { expected: seq, got });
    }
    let count = u32::from_le_bytes(chunk[4..8].try_into().expect("4 bytes")) as usize;
    if count == 0 || count > MAX_CHUNK_TABLES {
        // (Against the tables the circuit has left: when it is evaluated.)
        return Err(Error::Malformed(
            "a chunk of no tables, or of more than a chunk may hold",
        ));
    }
    let expected = CHUNK_HEADER + tables_bytes(count);
    if chunk.len() != expected {
        return Err(Error::ChunkLength {
            expected,
            got: chunk.len(),
        });
    }
    let (halves, trailer) = chunk[CHUNK_HEADER..].split_at(count * HALVES_BYTES);
    Ok((halves, trailer, count))
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
    digest: TablesDigest,
    /// The control bits of the chunk being evaluated, one byte per table.
    control: Vec<u8>,
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
            digest: TablesDigest::new(),
            control: Vec::new(),
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
        self.digest.finish()
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
        self.feed_chunk(chunk, true)
    }

    /// Evaluate chunks received ahead ([`ReceivedTables`]): all of a
    /// circuit's that came so far, before any other chunk; their digest is
    /// the one computed on arrival.
    pub fn feed_received(&mut self, tables: &ReceivedTables) -> Result<()> {
        if self.seq != 0 {
            return Err(Error::ChunkOrder {
                expected: self.seq,
                got: 0,
            });
        }
        for (k, chunk) in tables.chunks.iter().enumerate() {
            let hashed = k < tables.digested;
            self.feed_chunk(chunk, !hashed)?;
            if k + 1 == tables.digested {
                // Every chunk so far is the received digest's.
                self.digest = tables.digest.clone();
            }
        }
        Ok(())
    }

    fn feed_chunk(&mut self, chunk: &[u8], hash: bool) -> Result<()> {
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
        let count = count as usize;
        let expected = CHUNK_HEADER + tables_bytes(count);
        if chunk.len() != expected {
            return Err(Error::ChunkLength {
                expected,
                got: chunk.len(),
            });
        }
        self.check_inputs()?;
        let (halves, trailer) = chunk[CHUNK_HEADER..].split_at(count * HALVES_BYTES);
        let mut control = std::mem::take(&mut self.control);
        if unpack_control(trailer, count, &mut control).is_none() {
            self.control = control;
            return Err(Error::Malformed(
                "nonzero padding after a chunk's control bits",
            ));
        }
        if hash {
            self.digest.update(halves, &control);
        }
        let used = self.run(halves, &control);
        self.control = control;
        debug_assert_eq!(used, count);
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
        self.run(&[], &[]);
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

    /// Decode every output group with the garbler's decoding information.
    /// Nothing here tells a wrong evaluation (altered tables, a wrong input
    /// label) from a right one: the audit after the `Δ` reveal does
    /// ([`crate::consistency`], and [`crate::output`] for why not online).
    pub fn decode(&self, decoding: &Decoding) -> Result<Vec<Vec<bool>>> {
        let out = self.outputs.as_ref().ok_or(Error::NotFinished)?;
        decoding.decode(out)
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

    /// Walk the schedule consuming `tables` (a whole number of 24-byte
    /// tables) with their control bits (one byte each), then the free gates
    /// up to the next AND gate; returns the tables used.
    fn run(&mut self, tables: &[u8], control: &[u8]) -> usize {
        let plan = Arc::clone(&self.plan);
        let gates = &plan.gates;
        let labels = &mut self.labels[..];
        let have = tables.len() / HALVES_BYTES;
        debug_assert_eq!(have, control.len());
        let mut used = 0;
        let mut pos = self.pos;
        let mut buf = [Block::ZERO; 3 * BATCH];
        let mut tweaks = [Block::ZERO; BATCH];
        let mut ins = [(Block::ZERO, Block::ZERO); BATCH];
        let half = |off: usize| u64::from_le_bytes(tables[off..off + 8].try_into().expect("8"));
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
                        let (sa, sb) = (sigma(la), sigma(lb));
                        buf[3 * n] = sa ^ t;
                        buf[3 * n + 1] = sb ^ Block(t.0 | 1);
                        buf[3 * n + 2] = sa ^ sb ^ Block(t.0 | 2);
                        tweaks[n] = t;
                        ins[n] = (la, lb);
                        n += 1;
                    }
                    self.hash.permute_masked(&mut buf[..3 * n]);
                    for k in 0..n {
                        let Gate::And { out, .. } = gates[pos + k].unpack() else {
                            unreachable!()
                        };
                        let t = tweaks[k];
                        let ha = buf[3 * k] ^ t;
                        let hb = buf[3 * k + 1] ^ Block(t.0 | 1);
                        let hx = buf[3 * k + 2] ^ Block(t.0 | 2);
                        let off = (used + k) * HALVES_BYTES;
                        let (g0, g1, g2) = (half(off), half(off + 8), half(off + 16));
                        let z = control[used + k];
                        let zb = |m: u8| (z >> m) & 1 == 1;
                        let (la, lb) = ins[k];
                        let (i, j) = (la.lsb(), lb.lsb());
                        let ij = i ^ j;
                        let r1 = zb(0) ^ (i & zb(2)) ^ (ij & zb(4)) ^ bit(ha) ^ bit(hx);
                        let r2 = zb(1) ^ (j & zb(3)) ^ (ij & zb(4)) ^ bit(hb) ^ bit(hx);
                        let (al, ar) = halves(la);
                        let (bl, br) = halves(lb);
                        let cl = lo(ha)
                            ^ lo(hx)
                            ^ (m(i) & g0)
                            ^ (m(ij) & g2)
                            ^ (m(r1) & al)
                            ^ (m(r1 ^ r2) & ar)
                            ^ (m(r2 ^ i) & bl)
                            ^ (m(r1) & br);
                        let cr = lo(hb)
                            ^ lo(hx)
                            ^ (m(j) & g1)
                            ^ (m(ij) & g2)
                            ^ (m(r2) & al)
                            ^ (m(r1 ^ j) & ar)
                            ^ (m(r1 ^ r2) & bl)
                            ^ (m(r2) & br);
                        labels[out as usize] = Block((cl as u128) | ((cr as u128) << 64));
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
