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
    pub(crate) num_wires: usize,
    pub(crate) inputs: Vec<Vec<WireId>>,
    pub(crate) outputs: Vec<Vec<WireId>>,
    pub(crate) gates: Vec<Gate>,
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

    /// The schedule with windows of `window` gates (`0` and `1` keep the
    /// circuit's own order; `usize::MAX` sorts the whole circuit).
    pub fn with_window(circuit: &Circuit, window: usize) -> Result<Plan> {
        circuit.validate()?;
        if circuit.byte_inv_count() > 0 {
            return Err(Error::UnsupportedGate);
        }
        let n = circuit.num_wires as usize;
        let window = window.max(1);
        let mut gates = Vec::with_capacity(circuit.gates.len());
        // Level of each wire, valid only if written in the current window
        // (`born[w] == window index + 1`); older wires count as level 0.
        let mut level = vec![0u32; n];
        let mut born = vec![0u32; n];
        let mut keys: Vec<u32> = Vec::new();
        let mut counts: Vec<usize> = Vec::new();
        let mut group_ends = Vec::new();
        if circuit.gates.len() >= u32::MAX as usize {
            return Err(Error::Malformed("circuit with 2^32 gates or more"));
        }
        for (wi, win) in circuit.gates.chunks(window).enumerate() {
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
            for g in win {
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
            // Stable counting sort by key.
            counts.clear();
            counts.resize(max_key as usize + 2, 0);
            for &k in &keys {
                counts[k as usize + 1] += 1;
            }
            for i in 1..counts.len() {
                counts[i] += counts[i - 1];
            }
            let base = gates.len();
            for k in (0..=max_key as usize).step_by(2) {
                if counts[k + 1] > counts[k] {
                    group_ends.push((base + counts[k + 1]) as u32);
                }
            }
            gates.resize(
                base + win.len(),
                Gate::Const {
                    value: false,
                    out: 0,
                },
            );
            for (g, &k) in win.iter().zip(&keys) {
                gates[base + counts[k as usize]] = *g;
                counts[k as usize] += 1;
            }
        }
        Ok(Plan {
            num_wires: n,
            inputs: circuit.inputs.clone(),
            outputs: circuit.outputs.clone(),
            gates,
            group_ends,
            and_count: circuit.and_count() as u64,
        })
    }

    /// AND gates, hence garbled tables.
    pub fn and_count(&self) -> u64 {
        self.and_count
    }

    /// Wires (the size of each party's label array).
    pub fn num_wires(&self) -> usize {
        self.num_wires
    }

    /// Input groups (wire ids, as in the circuit).
    pub fn inputs(&self) -> &[Vec<WireId>] {
        &self.inputs
    }

    /// Output groups (wire ids, as in the circuit).
    pub fn outputs(&self) -> &[Vec<WireId>] {
        &self.outputs
    }

    /// Groups of independent AND gates in the schedule: the average group,
    /// `and_count / and_groups`, bounds the batch the hash kernels see.
    pub fn and_groups(&self) -> usize {
        self.group_ends.len()
    }

    /// The scheduled gates, for tests.
    #[cfg(test)]
    pub(crate) fn gates(&self) -> &[Gate] {
        &self.gates
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reordered circuit is still valid and computes the same function.
    #[test]
    fn schedule_is_topological_and_equivalent() {
        let c = webproof_circuits::aes::aes128_circuit();
        for window in [1usize, 7, 1000, DEFAULT_WINDOW, usize::MAX] {
            let p = Plan::with_window(&c, window).unwrap();
            let reordered = Circuit {
                num_wires: c.num_wires,
                inputs: c.inputs.clone(),
                outputs: c.outputs.clone(),
                gates: p.gates().to_vec(),
                byte_inv_inputs: Vec::new(),
            };
            reordered.validate().unwrap();
            // Within a group no AND gate reads another's output.
            let mut start = 0;
            for &end in &p.group_ends {
                let end = end as usize;
                let mut first = start;
                while !matches!(p.gates[first], Gate::And { .. }) {
                    first += 1;
                }
                let outs: Vec<u32> = p.gates[first..end]
                    .iter()
                    .map(|g| match *g {
                        Gate::And { out, .. } => out,
                        _ => panic!("a free gate inside an AND group"),
                    })
                    .collect();
                for g in &p.gates[first..end] {
                    if let Gate::And { a, b, .. } = *g {
                        assert!(!outs.contains(&a) && !outs.contains(&b));
                    }
                }
                start = end;
            }
            let key = [7u8; 16];
            let pt: Vec<u8> = (0..16).collect();
            assert_eq!(
                c.eval_bytes(&[&key, &pt]),
                reordered.eval_bytes(&[&key, &pt])
            );
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
