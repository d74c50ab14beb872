//! The gate schedule both parties walk: a circuit checked once and its gates
//! reordered so that independent AND gates sit next to each other.
//!
//! Garbling hashes four blocks per AND gate and evaluation two; the AES
//! kernels only run at speed when they get many independent blocks per call.
//! The IR's topological order often alternates AND and XOR gates along one
//! dependency chain (an S-box, an adder), so the plan reorders the gates:
//! within each window of [`DEFAULT_WINDOW`] consecutive gates, gates are
//! sorted by their AND depth counted from the window's start, ANDs of a level
//! before the free gates of that level (which may read them). Every gate
//! still reads only wires written before it, so the schedule is a
//! topological order; the window keeps the wires a stretch of gates touches
//! close together in memory.
//!
//! Wires are then renamed to *slots*: a slot is reused once the wire in it
//! has been read for the last time (output wires keep theirs), so each
//! party's label array is as large as the most wires live at once, not the
//! whole circuit (for the TLS 1.2 key derivation, thousands of slots instead
//! of millions of wires: the labels stay in cache and memory stays bounded).
//!
//! Gates are stored packed, 8 bytes each (so at most 2^20 slots; a circuit
//! with more wires live at once is refused with [`Error::TooWide`]).
//!
//! The plan owns the reordered gate list; both parties must use the same
//! plan (it is a deterministic function of the circuit and the window), since
//! garbled tables are streamed in schedule order.

use crate::error::{Error, Result};
use webproof_circuits::{Circuit, Gate, WireId};

/// Gates per reordering window (a power of two is not required).
pub const DEFAULT_WINDOW: usize = 1 << 16;

/// A validated circuit in garbling order.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Label slots each party allocates.
    pub(crate) num_slots: usize,
    /// Wires of the circuit (for statistics).
    pub(crate) num_wires: usize,
    pub(crate) inputs: Vec<Vec<WireId>>,
    pub(crate) outputs: Vec<Vec<WireId>>,
    pub(crate) gates: Vec<Op>,
    /// End (exclusive) of each group of mutually independent AND gates, in
    /// schedule order: the hash batches never cross one.
    pub(crate) group_ends: Vec<u32>,
    pub(crate) and_count: u64,
}

impl Plan {
    /// The schedule of `circuit` with the default window. Refuses circuits
    /// that fail [`Circuit::validate`] or contain byte inversions (garble
    /// [`Circuit::lower`] instead).
    pub fn new(circuit: &Circuit) -> Result<Plan> {
        Self::with_window(circuit, DEFAULT_WINDOW)
    }

    /// [`Self::new`] on a circuit it may consume: the circuit's gate list
    /// becomes the schedule's, so building the plan of a large circuit
    /// (a long record's) does not hold a second copy of it.
    pub fn from_circuit(circuit: Circuit) -> Result<Plan> {
        Self::schedule(circuit, DEFAULT_WINDOW)
    }

    /// The schedule with windows of `window` gates (`0` and `1` keep the
    /// circuit's own order; `usize::MAX` sorts the whole circuit).
    pub fn with_window(circuit: &Circuit, window: usize) -> Result<Plan> {
        Self::schedule(circuit.clone(), window)
    }

    fn schedule(circuit: Circuit, window: usize) -> Result<Plan> {
        circuit.validate()?;
        if circuit.byte_inv_count() > 0 {
            return Err(Error::UnsupportedGate);
        }
        if circuit.gates.len() >= (u32::MAX - 4) as usize {
            return Err(Error::Malformed("circuit with 2^32 gates or more"));
        }
        let and_count = circuit.and_count() as u64;
        let n = circuit.num_wires as usize;
        let Circuit {
            inputs,
            outputs,
            mut gates,
            ..
        } = circuit;
        let window = window.max(1);
        let mut group_ends = Vec::new();
        {
            // Level of each wire, valid only if written in the current
            // window (`born[w] == window index + 1`); older wires count as
            // level 0.
            let mut level = vec![0u32; n];
            let mut born = vec![0u32; n];
            let mut keys: Vec<u32> = Vec::new();
            let mut counts: Vec<usize> = Vec::new();
            let mut sorted: Vec<Gate> = Vec::new();
            for (wi, win) in gates.chunks_mut(window).enumerate() {
                let stamp = wi as u32 + 1;
                let lv = |w: WireId, level: &[u32], born: &[u32]| -> u32 {
                    if born[w as usize] == stamp {
                        level[w as usize]
                    } else {
                        0
                    }
                };
                keys.clear();
                let mut max_key = 0;
                for g in win.iter() {
                    // Key 2L: an AND at level L; 2L + 1: a free gate at level L.
                    let (key, out) = match *g {
                        Gate::And { a, b, out } => {
                            let l = lv(a, &level, &born).max(lv(b, &level, &born)) + 1;
                            (2 * l, out)
                        }
                        Gate::Xor { a, b, out } => {
                            let l = lv(a, &level, &born).max(lv(b, &level, &born));
                            (2 * l + 1, out)
                        }
                        Gate::Inv { a, out } => (2 * lv(a, &level, &born) + 1, out),
                        Gate::Const { out, .. } => (1, out),
                        Gate::ByteInv { .. } => unreachable!("rejected above"),
                    };
                    level[out as usize] = key / 2;
                    born[out as usize] = stamp;
                    keys.push(key);
                    max_key = max_key.max(key);
                }
                // Stable counting sort by key, through a window-sized buffer.
                counts.clear();
                counts.resize(max_key as usize + 2, 0);
                for &k in &keys {
                    counts[k as usize + 1] += 1;
                }
                for i in 1..counts.len() {
                    counts[i] += counts[i - 1];
                }
                let base = wi * window;
                for k in (0..=max_key as usize).step_by(2) {
                    if counts[k + 1] > counts[k] {
                        group_ends.push((base + counts[k + 1]) as u32);
                    }
                }
                sorted.clear();
                sorted.resize(
                    win.len(),
                    Gate::Const {
                        value: false,
                        out: 0,
                    },
                );
                for (g, &k) in win.iter().zip(&keys) {
                    sorted[counts[k as usize]] = *g;
                    counts[k as usize] += 1;
                }
                win.copy_from_slice(&sorted);
            }
        }
        let (num_slots, inputs, outputs) = assign_slots(n, &inputs, &outputs, &mut gates);
        if num_slots > Op::MAX_SLOTS {
            return Err(Error::TooWide(num_slots));
        }
        let gates = gates.into_iter().map(Op::pack).collect();
        Ok(Plan {
            num_slots,
            num_wires: n,
            inputs,
            outputs,
            gates,
            group_ends,
            and_count,
        })
    }

    /// AND gates, hence garbled tables.
    pub fn and_count(&self) -> u64 {
        self.and_count
    }

    /// Wires of the circuit.
    pub fn num_wires(&self) -> usize {
        self.num_wires
    }

    /// Label slots: the size of each party's label array (16 bytes each).
    pub fn num_slots(&self) -> usize {
        self.num_slots
    }

    /// Input groups, as slots.
    pub fn inputs(&self) -> &[Vec<WireId>] {
        &self.inputs
    }

    /// Output groups, as slots.
    pub fn outputs(&self) -> &[Vec<WireId>] {
        &self.outputs
    }

    /// Bytes a party holds for this circuit while garbling or evaluating:
    /// the packed schedule and the label slots.
    pub fn state_bytes(&self) -> usize {
        self.gates.len() * 8 + self.group_ends.len() * 4 + self.num_slots * 16
    }

    /// Groups of independent AND gates in the schedule: the average group,
    /// `and_count / and_groups`, bounds the batch the hash kernels see.
    pub fn and_groups(&self) -> usize {
        self.group_ends.len()
    }
}

/// A scheduled gate in 8 bytes: kind (3 bits), then three 20-bit slots
/// (`a`, `b`, `out`; unused ones zero). Half the size of [`Gate`]: the
/// schedule is the one part of a party's state that grows with the circuit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Op(u64);

impl Op {
    /// Slots an [`Op`] can name.
    pub(crate) const MAX_SLOTS: usize = 1 << 20;
    const MASK: u64 = (1 << 20) - 1;

    fn pack(g: Gate) -> Op {
        let (kind, a, b, out) = match g {
            Gate::And { a, b, out } => (0u64, a, b, out),
            Gate::Xor { a, b, out } => (1, a, b, out),
            Gate::Inv { a, out } => (2, a, 0, out),
            Gate::Const { value, out } => (3 + value as u64, 0, 0, out),
            Gate::ByteInv { .. } => unreachable!("rejected before"),
        };
        Op(kind << 60 | (a as u64) << 40 | (b as u64) << 20 | out as u64)
    }

    /// The gate, with slots for wires.
    #[inline(always)]
    pub(crate) fn unpack(self) -> Gate {
        let a = ((self.0 >> 40) & Self::MASK) as u32;
        let b = ((self.0 >> 20) & Self::MASK) as u32;
        let out = (self.0 & Self::MASK) as u32;
        match self.0 >> 60 {
            0 => Gate::And { a, b, out },
            1 => Gate::Xor { a, b, out },
            2 => Gate::Inv { a, out },
            k => Gate::Const { value: k == 4, out },
        }
    }
}

/// Rename wires to slots in `gates` (already in schedule order), reusing a
/// slot after its wire's last read; output wires are never released. Returns
/// the slot count and the input and output groups as slots.
fn assign_slots(
    n: usize,
    inputs: &[Vec<WireId>],
    outputs: &[Vec<WireId>],
    gates: &mut [Gate],
) -> (usize, Vec<Vec<WireId>>, Vec<Vec<WireId>>) {
    const KEEP: u32 = u32::MAX;
    const UNREAD: u32 = u32::MAX - 1;
    let mut last = vec![UNREAD; n];
    for (i, g) in gates.iter().enumerate() {
        match *g {
            Gate::And { a, b, .. } | Gate::Xor { a, b, .. } => {
                last[a as usize] = i as u32;
                last[b as usize] = i as u32;
            }
            Gate::Inv { a, .. } => last[a as usize] = i as u32,
            Gate::Const { .. } | Gate::ByteInv { .. } => {}
        }
    }
    for &w in outputs.iter().flatten() {
        last[w as usize] = KEEP;
    }
    let mut slot = vec![0u32; n];
    let mut free: Vec<u32> = Vec::new();
    let mut count = 0u32;
    let mut alloc = |free: &mut Vec<u32>| {
        free.pop().unwrap_or_else(|| {
            count += 1;
            count - 1
        })
    };
    for &w in inputs.iter().flatten() {
        slot[w as usize] = alloc(&mut free);
    }
    // Inputs nobody reads give their slot back once all inputs have one.
    for &w in inputs.iter().flatten() {
        if last[w as usize] == UNREAD {
            free.push(slot[w as usize]);
        }
    }
    let inputs: Vec<Vec<WireId>> = inputs
        .iter()
        .map(|g| g.iter().map(|&w| slot[w as usize]).collect())
        .collect();
    for (i, g) in gates.iter_mut().enumerate() {
        let i = i as u32;
        let mut release = |w: WireId, free: &mut Vec<u32>| {
            if last[w as usize] == i {
                free.push(slot[w as usize]);
                // Release once even if the gate reads the wire twice.
                last[w as usize] = UNREAD - 1;
            }
        };
        let (ins, out): ([Option<WireId>; 2], WireId) = match *g {
            Gate::And { a, b, out } | Gate::Xor { a, b, out } => ([Some(a), Some(b)], out),
            Gate::Inv { a, out } => ([Some(a), None], out),
            Gate::Const { out, .. } => ([None, None], out),
            Gate::ByteInv { .. } => unreachable!("rejected before"),
        };
        let mapped = ins.map(|w| w.map(|w| slot[w as usize]));
        for w in ins.into_iter().flatten() {
            release(w, &mut free);
        }
        let s = alloc(&mut free);
        slot[out as usize] = s;
        if last[out as usize] == UNREAD {
            free.push(s);
        }
        *g = match *g {
            Gate::And { .. } => Gate::And {
                a: mapped[0].expect("a"),
                b: mapped[1].expect("b"),
                out: s,
            },
            Gate::Xor { .. } => Gate::Xor {
                a: mapped[0].expect("a"),
                b: mapped[1].expect("b"),
                out: s,
            },
            Gate::Inv { .. } => Gate::Inv {
                a: mapped[0].expect("a"),
                out: s,
            },
            Gate::Const { value, .. } => Gate::Const { value, out: s },
            Gate::ByteInv { .. } => unreachable!("rejected before"),
        };
    }
    let outputs = outputs
        .iter()
        .map(|g| g.iter().map(|&w| slot[w as usize]).collect())
        .collect();
    (count as usize, inputs, outputs)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Plaintext evaluation of a plan, slot by slot.
    fn eval_plan(p: &Plan, inputs: &[Vec<bool>]) -> Vec<Vec<bool>> {
        let mut v = vec![false; p.num_slots];
        for (g, bits) in p.inputs.iter().zip(inputs) {
            for (&s, &b) in g.iter().zip(bits) {
                v[s as usize] = b;
            }
        }
        for g in &p.gates {
            match g.unpack() {
                Gate::And { a, b, out } => v[out as usize] = v[a as usize] & v[b as usize],
                Gate::Xor { a, b, out } => v[out as usize] = v[a as usize] ^ v[b as usize],
                Gate::Inv { a, out } => v[out as usize] = !v[a as usize],
                Gate::Const { value, out } => v[out as usize] = value,
                Gate::ByteInv { .. } => unreachable!(),
            }
        }
        p.outputs
            .iter()
            .map(|g| g.iter().map(|&s| v[s as usize]).collect())
            .collect()
    }

    /// The reordered, slot-renamed schedule computes the same function, and
    /// no AND gate of a group reads what an earlier one wrote.
    #[test]
    fn schedule_is_equivalent_and_groups_independent() {
        let c = webproof_circuits::aes::aes128_circuit();
        let inputs = vec![
            webproof_circuits::bytes_to_bits(&[7u8; 16]),
            webproof_circuits::bytes_to_bits(&(0..16).collect::<Vec<u8>>()),
        ];
        for window in [1usize, 7, 1000, DEFAULT_WINDOW, usize::MAX] {
            let p = Plan::with_window(&c, window).unwrap();
            assert_eq!(eval_plan(&p, &inputs), c.eval(&inputs), "window {window}");
            assert!(p.num_slots < p.num_wires / 4, "{} slots", p.num_slots);
            let mut start = 0;
            for &end in &p.group_ends {
                let end = end as usize;
                let mut first = start;
                while !matches!(p.gates[first].unpack(), Gate::And { .. }) {
                    first += 1;
                }
                // Each AND reads nothing an earlier AND of its group wrote.
                let mut written = Vec::new();
                for g in &p.gates[first..end] {
                    let Gate::And { a, b, out } = g.unpack() else {
                        panic!("a free gate inside an AND group");
                    };
                    assert!(!written.contains(&a) && !written.contains(&b));
                    written.push(out);
                }
                start = end;
            }
            if window > 1000 {
                assert!(
                    p.and_groups() * 8 < p.and_count() as usize,
                    "batches too small"
                );
            }
        }
    }

    #[test]
    fn byte_inversions_are_refused() {
        let c = webproof_circuits::aes::aes_blocks_circuit_with(
            16,
            1,
            webproof_circuits::aes::SboxKind::Inversion,
        );
        assert_eq!(Plan::new(&c).unwrap_err(), Error::UnsupportedGate);
        assert!(Plan::new(&c.lower()).is_ok());
    }
}
