//! Boolean circuits: the IR that the ZK engine evaluates, a builder with
//! constant folding, Bristol Fashion import/export, and the cryptographic
//! circuits of TLS (AES, SHA-2, HMAC/HKDF/PRF, ChaCha20, key schedules).
//!
//! Wires are numbered `0..num_wires`; every wire is written exactly once, by
//! an input or by one gate, before it is read. Gates are in topological order.
//!
//! Bit order everywhere: byte `i`, bit `j` (LSB first) is bit `8i + j`; see
//! [`bits`]. Built circuits are cached per kind (see [`cache`]): build once,
//! evaluate or prove many times.
//!
//! | circuit | AND gates |
//! |---|---|
//! | AES-128 block with key schedule ([`aes`]) | 6,400 |
//! | AES-128 per block, schedule reused | 5,120 |
//! | AES-128 counter-mode block after the first of its nonce ([`aes::encrypt_blocks_with`]) | 4,256 |
//! | same with inversion S-boxes ([`aes::SboxKind::Inversion`]) | 0 AND, 160 byte inversions (1,280 ZK COTs) |
//! | AES-256 block with key schedule | 8,832 |
//! | SHA-256 compression ([`sha2`]) | 22,271 |
//! | SHA-256 compression of a public block ([`sha2::compress_public_schedule`]) | 16,120 |
//! | SHA-512 compression | 57,572 |
//! | ChaCha20 block ([`chacha`]) | 10,400 |
//! | TLS 1.3 HS -> hs/ap secrets, app keys+IVs, SHA-256, hashes folded ([`tls`]) | ~585,000 (30 compressions) |
//! | same, hashes as public inputs (cached) | 608,320 |
//! | TLS 1.2 MS -> key block + both verify_data, SHA-256, folded | ~449,000 (23 compressions) |
//! | same, randoms/hashes as public inputs (cached) | 494,903 |
//!
//! Besides AND, XOR, NOT and constants the IR has one gadget,
//! [`Gate::ByteInv`] (inversion in GF(2^8), [`gf256`]), which the ZK engine
//! proves natively; [`Circuit::lower`] expands it for Boolean-only back ends.
//!
//! Modules: [`builder`] (gadget composition, constant folding, dead-gate
//! elimination), [`bristol`] (Bristol Fashion text import/export), [`aes`],
//! [`sha2`], [`hmac`] (HMAC with cached pads, HKDF, TLS 1.2 PRF), [`chacha`],
//! [`aead`] (record nonces and keystreams), [`tls`] (key schedules).
//!
//! The crate does no I/O and has no dependencies, so it builds for
//! `wasm32-unknown-unknown`.
#![forbid(unsafe_code)]
// `usize::is_multiple_of` is newer than the workspace's minimum Rust version.
#![allow(clippy::manual_is_multiple_of)]

pub mod aead;
pub mod aes;
pub mod bits;
pub mod bristol;
pub mod builder;
pub mod cache;
pub mod chacha;
pub mod gf256;
pub mod hmac;
pub mod poly1305;
pub mod sha2;
pub mod tls;

pub use bits::{bits_to_bytes, bytes_to_bits};
pub use builder::{Bit, Builder};

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
    /// `out..out + 8 = y^-1` in GF(2^8) ([`gf256`], `0 -> 0`), where `y` is
    /// the byte whose bits (LSB first) are the wires
    /// [`Circuit::byte_inv_inputs`]`[inputs]`. The ZK engine proves it with
    /// 8 committed bits and two degree-2 constraints instead of 32 AND
    /// gates; [`Circuit::lower`] turns it into Boolean gates (32 AND) for
    /// back ends that only know AND and XOR.
    ByteInv { inputs: u32, out: WireId },
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
    /// The input bytes of the [`Gate::ByteInv`] gates, which refer to them by index.
    pub byte_inv_inputs: Vec<[WireId; 8]>,
}

impl Circuit {
    /// Number of AND gates: the cost of proving this circuit.
    pub fn and_count(&self) -> usize {
        self.gates
            .iter()
            .filter(|g| matches!(g, Gate::And { .. }))
            .count()
    }

    /// Number of [`Gate::ByteInv`] gates.
    pub fn byte_inv_count(&self) -> usize {
        self.gates
            .iter()
            .filter(|g| matches!(g, Gate::ByteInv { .. }))
            .count()
    }

    /// Committed bits (hence COTs) the ZK engine spends on this circuit: one
    /// per AND gate, eight per byte inversion.
    pub fn zk_cost(&self) -> usize {
        self.gates
            .iter()
            .map(|g| match g {
                Gate::And { .. } => 1,
                Gate::ByteInv { .. } => 8,
                _ => 0,
            })
            .sum()
    }

    /// The same function with every [`Gate::ByteInv`] replaced by Boolean
    /// gates (the Boyar–Peralta S-box followed by the inverse affine map,
    /// 32 AND each), for garbling and Bristol export. A circuit without
    /// byte inversions comes back unchanged in function and AND count.
    pub fn lower(&self) -> Circuit {
        let mut b = Builder::new();
        let mut w = vec![Bit::ZERO; self.num_wires as usize];
        for group in &self.inputs {
            let bits = b.input(group.len());
            for (&id, bit) in group.iter().zip(bits) {
                w[id as usize] = bit;
            }
        }
        for g in &self.gates {
            match *g {
                Gate::Xor { a, b: c, out } => w[out as usize] = b.xor(w[a as usize], w[c as usize]),
                Gate::And { a, b: c, out } => w[out as usize] = b.and(w[a as usize], w[c as usize]),
                Gate::Inv { a, out } => w[out as usize] = w[a as usize].not(),
                Gate::Const { value, out } => w[out as usize] = Bit::Const(value),
                Gate::ByteInv { inputs, out } => {
                    let x: Vec<Bit> = self.byte_inv_inputs[inputs as usize]
                        .iter()
                        .map(|&id| w[id as usize])
                        .collect();
                    let y = aes::byte_inverse_boolean(&mut b, &x);
                    for (k, bit) in y.into_iter().enumerate() {
                        w[out as usize + k] = bit;
                    }
                }
            }
        }
        for group in &self.outputs {
            let bits: Vec<Bit> = group.iter().map(|&id| w[id as usize]).collect();
            b.output(&bits);
        }
        b.finish()
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
                Gate::ByteInv { inputs, out } => {
                    let ids = &self.byte_inv_inputs[inputs as usize];
                    let x = (0..8).fold(0u8, |acc, k| acc | (w[ids[k] as usize] as u8) << k);
                    let y = gf256::inv(x);
                    for k in 0..8 {
                        w[out as usize + k] = (y >> k) & 1 == 1;
                    }
                }
            }
        }
        self.outputs
            .iter()
            .map(|g| g.iter().map(|&id| w[id as usize]).collect())
            .collect()
    }

    /// Evaluate 64 instances at once, bit-sliced: bit `k` of every word
    /// belongs to instance `k`. `inputs[i][j]` holds wire `j` of group `i`.
    ///
    /// Panics if the number or sizes of input groups do not match.
    pub fn eval_packed(&self, inputs: &[Vec<u64>]) -> Vec<Vec<u64>> {
        assert_eq!(inputs.len(), self.inputs.len(), "number of input groups");
        let mut w = vec![0u64; self.num_wires as usize];
        for (group, words) in self.inputs.iter().zip(inputs) {
            assert_eq!(group.len(), words.len(), "size of an input group");
            for (&id, &x) in group.iter().zip(words) {
                w[id as usize] = x;
            }
        }
        for g in &self.gates {
            match *g {
                Gate::Xor { a, b, out } => w[out as usize] = w[a as usize] ^ w[b as usize],
                Gate::And { a, b, out } => w[out as usize] = w[a as usize] & w[b as usize],
                Gate::Inv { a, out } => w[out as usize] = !w[a as usize],
                Gate::Const { value, out } => w[out as usize] = if value { !0 } else { 0 },
                Gate::ByteInv { inputs, out } => {
                    let ids = self.byte_inv_inputs[inputs as usize];
                    let mut y = [0u64; 8];
                    for lane in 0..64 {
                        let x = (0..8).fold(0u8, |acc, k| {
                            acc | (((w[ids[k] as usize] >> lane) & 1) as u8) << k
                        });
                        let inv = gf256::inv(x);
                        for (k, word) in y.iter_mut().enumerate() {
                            *word |= (((inv >> k) & 1) as u64) << lane;
                        }
                    }
                    w[out as usize..out as usize + 8].copy_from_slice(&y);
                }
            }
        }
        self.outputs
            .iter()
            .map(|g| g.iter().map(|&id| w[id as usize]).collect())
            .collect()
    }

    /// Evaluate on byte strings (crate bit order, see [`bits`]); every group
    /// must be a whole number of bytes.
    pub fn eval_bytes(&self, inputs: &[&[u8]]) -> Vec<Vec<u8>> {
        let bits: Vec<Vec<bool>> = inputs.iter().map(|b| bytes_to_bits(b)).collect();
        self.eval(&bits).iter().map(|b| bits_to_bytes(b)).collect()
    }

    /// Evaluate many instances on byte strings, 64 at a time bit-sliced.
    /// `instances[k][i]` is input group `i` of instance `k`; the result is
    /// indexed the same way by output group.
    pub fn eval_bytes_batch(&self, instances: &[Vec<Vec<u8>>]) -> Vec<Vec<Vec<u8>>> {
        let mut results = Vec::with_capacity(instances.len());
        for chunk in instances.chunks(64) {
            let packed: Vec<Vec<u64>> = (0..self.inputs.len())
                .map(|i| {
                    let mut words = vec![0u64; self.inputs[i].len()];
                    for (k, inst) in chunk.iter().enumerate() {
                        for (j, bit) in bytes_to_bits(&inst[i]).into_iter().enumerate() {
                            words[j] |= (bit as u64) << k;
                        }
                    }
                    words
                })
                .collect();
            let out = self.eval_packed(&packed);
            for k in 0..chunk.len() {
                results.push(
                    out.iter()
                        .map(|g| {
                            let bits: Vec<bool> = g.iter().map(|w| (w >> k) & 1 == 1).collect();
                            bits_to_bytes(&bits)
                        })
                        .collect(),
                );
            }
        }
        results
    }

    /// Total number of input bits.
    pub fn input_len(&self) -> usize {
        self.inputs.iter().map(Vec::len).sum()
    }

    /// Total number of output bits.
    pub fn output_len(&self) -> usize {
        self.outputs.iter().map(Vec::len).sum()
    }

    /// Check the structural invariants the ZK engine relies on: every wire id
    /// is below `num_wires`, every wire is written exactly once (by an input
    /// or a gate) before it is read, and outputs are written wires.
    pub fn validate(&self) -> Result<(), CircuitError> {
        let n = self.num_wires as usize;
        let mut written = vec![false; n];
        for &w in self.inputs.iter().flatten() {
            write_at(&mut written, w)?;
        }
        let read = |w: WireId, written: &[bool]| -> Result<(), CircuitError> {
            match written.get(w as usize) {
                None => Err(CircuitError::WireOutOfRange(w)),
                Some(false) => Err(CircuitError::ReadBeforeWrite(w)),
                Some(true) => Ok(()),
            }
        };
        for g in &self.gates {
            match *g {
                Gate::Xor { a, b, out } | Gate::And { a, b, out } => {
                    read(a, &written)?;
                    read(b, &written)?;
                    write_at(&mut written, out)?;
                }
                Gate::Inv { a, out } => {
                    read(a, &written)?;
                    write_at(&mut written, out)?;
                }
                Gate::Const { out, .. } => write_at(&mut written, out)?,
                Gate::ByteInv { inputs, out } => {
                    let ids = self
                        .byte_inv_inputs
                        .get(inputs as usize)
                        .ok_or(CircuitError::NoSuchByteInput(inputs))?;
                    for &id in ids {
                        read(id, &written)?;
                    }
                    let end = out
                        .checked_add(8)
                        .ok_or(CircuitError::WireOutOfRange(out))?;
                    for id in out..end {
                        write_at(&mut written, id)?;
                    }
                }
            }
        }
        for &w in self.outputs.iter().flatten() {
            read(w, &written)?;
        }
        Ok(())
    }
}

fn write_at(written: &mut [bool], w: WireId) -> Result<(), CircuitError> {
    let slot = written
        .get_mut(w as usize)
        .ok_or(CircuitError::WireOutOfRange(w))?;
    if *slot {
        return Err(CircuitError::WrittenTwice(w));
    }
    *slot = true;
    Ok(())
}

/// A structural defect found by [`Circuit::validate`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CircuitError {
    /// A wire id is not below `num_wires`.
    WireOutOfRange(WireId),
    /// A wire is written by more than one input or gate.
    WrittenTwice(WireId),
    /// A wire is read before anything writes it.
    ReadBeforeWrite(WireId),
    /// A byte inversion names an input byte that does not exist.
    NoSuchByteInput(u32),
}

impl std::fmt::Display for CircuitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CircuitError::WireOutOfRange(w) => write!(f, "wire {w} is out of range"),
            CircuitError::WrittenTwice(w) => write!(f, "wire {w} is written twice"),
            CircuitError::ReadBeforeWrite(w) => write!(f, "wire {w} is read before it is written"),
            CircuitError::NoSuchByteInput(i) => {
                write!(f, "byte inversion refers to missing input byte {i}")
            }
        }
    }
}

impl std::error::Error for CircuitError {}

#[cfg(test)]
mod tests {
    use super::*;

    fn circuit(gates: Vec<Gate>, num_wires: u32, outputs: Vec<WireId>) -> Circuit {
        Circuit {
            num_wires,
            inputs: vec![vec![0, 1]],
            outputs: vec![outputs],
            gates,
            byte_inv_inputs: Vec::new(),
        }
    }

    #[test]
    fn validate_rejects_malformed_circuits() {
        let ok = circuit(vec![Gate::And { a: 0, b: 1, out: 2 }], 3, vec![2]);
        assert_eq!(ok.validate(), Ok(()));
        let read_early = circuit(
            vec![Gate::And { a: 0, b: 3, out: 2 }, Gate::Inv { a: 0, out: 3 }],
            4,
            vec![2],
        );
        assert_eq!(read_early.validate(), Err(CircuitError::ReadBeforeWrite(3)));
        let twice = circuit(vec![Gate::Xor { a: 0, b: 1, out: 1 }], 3, vec![1]);
        assert_eq!(twice.validate(), Err(CircuitError::WrittenTwice(1)));
        let range = circuit(
            vec![Gate::Const {
                value: true,
                out: 9,
            }],
            3,
            vec![0],
        );
        assert_eq!(range.validate(), Err(CircuitError::WireOutOfRange(9)));
        let unset_out = circuit(vec![], 3, vec![2]);
        assert_eq!(unset_out.validate(), Err(CircuitError::ReadBeforeWrite(2)));
    }

    #[test]
    fn packed_and_plain_evaluation_agree() {
        let c = circuit(
            vec![
                Gate::And { a: 0, b: 1, out: 2 },
                Gate::Inv { a: 2, out: 3 },
                Gate::Const {
                    value: true,
                    out: 4,
                },
                Gate::Xor { a: 3, b: 4, out: 5 },
            ],
            6,
            vec![2, 3, 5],
        );
        let packed = c.eval_packed(&[vec![0b1100, 0b1010]]);
        for k in 0..4 {
            let plain = c.eval(&[vec![(0b1100 >> k) & 1 == 1, (0b1010 >> k) & 1 == 1]]);
            let bits: Vec<bool> = packed[0].iter().map(|w| (w >> k) & 1 == 1).collect();
            assert_eq!(plain[0], bits);
        }
    }
}
