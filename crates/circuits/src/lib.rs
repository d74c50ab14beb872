//! Boolean circuits: the IR that the ZK engine evaluates, and (to come) the
//! builder and the cryptographic circuits.
//!
//! Wires are numbered `0..num_wires`; every wire is written exactly once, by
//! an input or by one gate, before it is read. Gates are in topological order.
#![forbid(unsafe_code)]

/// Index of a wire.
pub type WireId = u32;

/// One gate. XOR, NOT and constants are free in the ZK engine; AND costs one COT.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gate {
    /// `out = a ^ b`
    Xor { a: WireId, b: WireId, out: WireId },
    /// `out = a & b`
    And { a: WireId, b: WireId, out: WireId },
    /// `out = !a`
    Inv { a: WireId, out: WireId },
    /// `out = value` (a public constant)
    Const { value: bool, out: WireId },
}

/// A Boolean circuit with grouped inputs and outputs.
#[derive(Clone, Debug, Default)]
pub struct Circuit {
    /// Number of wires.
    pub num_wires: u32,
    /// Input groups (e.g. key, message); each lists its wires in bit order.
    pub inputs: Vec<Vec<WireId>>,
    /// Output groups, each listing its wires in bit order.
    pub outputs: Vec<Vec<WireId>>,
    /// Gates in topological order.
    pub gates: Vec<Gate>,
}

impl Circuit {
    /// Number of AND gates: the cost of proving this circuit.
    pub fn and_count(&self) -> usize {
        self.gates
            .iter()
            .filter(|g| matches!(g, Gate::And { .. }))
            .count()
    }

    /// Evaluate in the clear. `inputs[i]` gives the bits of input group `i`.
    ///
    /// Panics if the number or sizes of input groups do not match.
    pub fn eval(&self, inputs: &[Vec<bool>]) -> Vec<Vec<bool>> {
        assert_eq!(inputs.len(), self.inputs.len(), "number of input groups");
        let mut w = vec![false; self.num_wires as usize];
        for (group, bits) in self.inputs.iter().zip(inputs) {
            assert_eq!(group.len(), bits.len(), "size of an input group");
            for (&id, &b) in group.iter().zip(bits) {
                w[id as usize] = b;
            }
        }
        for g in &self.gates {
            match *g {
                Gate::Xor { a, b, out } => w[out as usize] = w[a as usize] ^ w[b as usize],
                Gate::And { a, b, out } => w[out as usize] = w[a as usize] & w[b as usize],
                Gate::Inv { a, out } => w[out as usize] = !w[a as usize],
                Gate::Const { value, out } => w[out as usize] = value,
            }
        }
        self.outputs
            .iter()
            .map(|g| g.iter().map(|&id| w[id as usize]).collect())
            .collect()
    }
}
