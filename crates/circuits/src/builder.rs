//! Circuit builder: composes gadgets into a [`Circuit`].
//!
//! Gadgets are plain functions that take `&mut Builder` and wire vectors
//! ([`Bit`] slices) and return wire vectors, so they compose freely (a key
//! schedule once, then many blocks under it).
//!
//! The builder folds public constants as it goes: a [`Bit`] is either a known
//! constant or a wire, possibly negated. XOR with a constant or NOT costs
//! nothing (the negation is carried in the `Bit` and only materialised as an
//! `Inv` gate when an AND or an output needs it), AND with a constant is
//! folded away, and `x ^ x`, `x & x`, `x & !x` are simplified. This is why
//! round constants, hash IVs, labels and padding cost no AND gates.
//!
//! [`Builder::finish`] drops every gate that does not contribute to an
//! output (dead-gate elimination, which is what makes truncated outputs such
//! as SHA-384 or a 12-byte IV cheaper) and renumbers wires densely: input
//! groups first, in order, then gate outputs in topological order.
//!
//! Words are `Vec<Bit>` with bit `k` of the value at index `k` (LSB first);
//! rotations and shifts only permute this vector and are free.

use crate::{Circuit, Gate, WireId};

/// A value in a circuit under construction: a public constant or a wire,
/// possibly negated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Bit {
    /// A public constant, known while building.
    Const(bool),
    /// The value of wire `id`, negated if `neg`.
    Wire {
        /// The wire.
        id: WireId,
        /// Whether the value is the negation of the wire.
        neg: bool,
    },
}

impl Bit {
    /// Constant 0.
    pub const ZERO: Bit = Bit::Const(false);
    /// Constant 1.
    pub const ONE: Bit = Bit::Const(true);

    /// The constant value, if this bit is a known constant.
    pub fn as_const(self) -> Option<bool> {
        match self {
            Bit::Const(v) => Some(v),
            Bit::Wire { .. } => None,
        }
    }

    /// Negation (free: no gate is emitted).
    #[allow(clippy::should_implement_trait)]
    pub fn not(self) -> Bit {
        match self {
            Bit::Const(v) => Bit::Const(!v),
            Bit::Wire { id, neg } => Bit::Wire { id, neg: !neg },
        }
    }
}

/// Constant bits of the low `n` bits of `value`, LSB first.
pub fn const_word(value: u64, n: usize) -> Vec<Bit> {
    (0..n).map(|k| Bit::Const((value >> k) & 1 == 1)).collect()
}

/// The value of a word (LSB first, at most 64 bits) if all its bits are constant.
pub fn const_value(word: &[Bit]) -> Option<u64> {
    word.iter().enumerate().try_fold(0u64, |acc, (k, b)| {
        b.as_const().map(|v| acc | ((v as u64) << k))
    })
}

/// Constant bits of `bytes` in the crate's bit order (see [`crate::bits`]).
pub fn const_bytes(bytes: &[u8]) -> Vec<Bit> {
    bytes
        .iter()
        .flat_map(|&byte| (0..8).map(move |j| Bit::Const((byte >> j) & 1 == 1)))
        .collect()
}

/// Builds a [`Circuit`] with constant folding; see the module docs.
#[derive(Debug, Default)]
pub struct Builder {
    num_wires: u32,
    inputs: Vec<Vec<WireId>>,
    outputs: Vec<Vec<Bit>>,
    gates: Vec<Gate>,
    /// `inverted[w]` is the wire holding `!w` once it has been materialised
    /// (`NONE` before).
    inverted: Vec<WireId>,
    /// Input bytes of the byte-inversion gates.
    byte_inv_inputs: Vec<[WireId; 8]>,
}

impl Builder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    fn fresh(&mut self) -> WireId {
        let id = self.num_wires;
        self.num_wires = self
            .num_wires
            .checked_add(1)
            .expect("circuit exceeds 2^32 wires");
        self.inverted.push(NONE);
        id
    }

    /// Declare a new input group of `n` bits and return its bits.
    pub fn input(&mut self, n: usize) -> Vec<Bit> {
        let ids: Vec<WireId> = (0..n).map(|_| self.fresh()).collect();
        let bits = ids.iter().map(|&id| Bit::Wire { id, neg: false }).collect();
        self.inputs.push(ids);
        bits
    }

    /// Declare a new input group of `n` bytes (8n bits, crate bit order).
    pub fn input_bytes(&mut self, n: usize) -> Vec<Bit> {
        self.input(8 * n)
    }

    /// Declare an output group.
    pub fn output(&mut self, bits: &[Bit]) {
        self.outputs.push(bits.to_vec());
    }

    /// Number of gates emitted so far (before dead-gate elimination).
    pub fn gate_count(&self) -> usize {
        self.gates.len()
    }

    /// Number of AND gates emitted so far (before dead-gate elimination).
    pub fn and_count(&self) -> usize {
        self.gates
            .iter()
            .filter(|g| matches!(g, Gate::And { .. }))
            .count()
    }

    /// A wire holding the value of `b` (emits an `Inv` or `Const` if needed).
    fn materialise(&mut self, b: Bit) -> WireId {
        match b {
            Bit::Wire { id, neg: false } => id,
            Bit::Wire { id, neg: true } => {
                let inv = self.inverted[id as usize];
                if inv != NONE {
                    return inv;
                }
                let out = self.fresh();
                self.gates.push(Gate::Inv { a: id, out });
                self.inverted[id as usize] = out;
                self.inverted[out as usize] = id;
                out
            }
            Bit::Const(value) => {
                let out = self.fresh();
                self.gates.push(Gate::Const { value, out });
                out
            }
        }
    }

    /// `a ^ b` (free).
    pub fn xor(&mut self, a: Bit, b: Bit) -> Bit {
        match (a, b) {
            (Bit::Const(x), o) | (o, Bit::Const(x)) => {
                if x {
                    o.not()
                } else {
                    o
                }
            }
            (Bit::Wire { id: ia, neg: na }, Bit::Wire { id: ib, neg: nb }) => {
                if ia == ib {
                    return Bit::Const(na != nb);
                }
                let out = self.fresh();
                self.gates.push(Gate::Xor { a: ia, b: ib, out });
                Bit::Wire {
                    id: out,
                    neg: na != nb,
                }
            }
        }
    }

    /// `a & b` (one AND gate unless folded).
    pub fn and(&mut self, a: Bit, b: Bit) -> Bit {
        match (a, b) {
            (Bit::Const(x), o) | (o, Bit::Const(x)) => {
                if x {
                    o
                } else {
                    Bit::ZERO
                }
            }
            (Bit::Wire { id: ia, neg: na }, Bit::Wire { id: ib, neg: nb }) if ia == ib => {
                if na == nb {
                    a
                } else {
                    Bit::ZERO
                }
            }
            _ => {
                let wa = self.materialise(a);
                let wb = self.materialise(b);
                let out = self.fresh();
                self.gates.push(Gate::And { a: wa, b: wb, out });
                Bit::Wire {
                    id: out,
                    neg: false,
                }
            }
        }
    }

    /// `y^-1` in GF(2^8) (`0 -> 0`) of the byte `y` (8 bits, LSB first) as
    /// one [`Gate::ByteInv`]: 8 committed bits in the ZK engine. A constant
    /// byte is folded.
    pub fn byte_inv(&mut self, byte: &[Bit]) -> Vec<Bit> {
        assert_eq!(byte.len(), 8, "byte_inv takes one byte");
        if let Some(v) = const_value(byte) {
            return const_word(crate::gf256::inv(v as u8) as u64, 8);
        }
        let mut ids = [0; 8];
        for (slot, &b) in ids.iter_mut().zip(byte) {
            *slot = self.materialise(b);
        }
        let inputs = u32::try_from(self.byte_inv_inputs.len()).expect("too many byte inversions");
        self.byte_inv_inputs.push(ids);
        let out = self.fresh();
        for _ in 1..8 {
            self.fresh();
        }
        self.gates.push(Gate::ByteInv { inputs, out });
        (out..out + 8)
            .map(|id| Bit::Wire { id, neg: false })
            .collect()
    }

    /// `a | b` (one AND gate unless folded).
    pub fn or(&mut self, a: Bit, b: Bit) -> Bit {
        self.and(a.not(), b.not()).not()
    }

    /// `s ? b : a` (one AND gate unless folded).
    pub fn mux(&mut self, s: Bit, a: Bit, b: Bit) -> Bit {
        let d = self.xor(a, b);
        let t = self.and(s, d);
        self.xor(a, t)
    }

    /// Majority of three bits with one AND: `((a^c) & (b^c)) ^ c`.
    pub fn maj(&mut self, a: Bit, b: Bit, c: Bit) -> Bit {
        let (u, v, p) = Self::pivot(a, b, c);
        let t1 = self.xor(u, p);
        let t2 = self.xor(v, p);
        let m = self.and(t1, t2);
        self.xor(m, p)
    }

    /// Order `(a, b, c)` as `(u, v, p)` so that in `((u^p) & (v^p)) ^ p` the
    /// two AND inputs are not both negated (at most one `Inv` is needed).
    fn pivot(a: Bit, b: Bit, c: Bit) -> (Bit, Bit, Bit) {
        let neg = |x: Bit| matches!(x, Bit::Wire { neg: true, .. });
        let majority = (neg(a) as u8 + neg(b) as u8 + neg(c) as u8) >= 2;
        if neg(c) == majority {
            (a, b, c)
        } else if neg(b) == majority {
            (a, c, b)
        } else {
            (b, c, a)
        }
    }

    /// Full adder: `(a ^ b ^ c, maj(a, b, c))` with one AND and four XORs.
    pub fn full_adder(&mut self, a: Bit, b: Bit, c: Bit) -> (Bit, Bit) {
        let (u, v, p) = Self::pivot(a, b, c);
        let t1 = self.xor(u, p);
        let t2 = self.xor(v, p);
        let m = self.and(t1, t2);
        let carry = self.xor(m, p);
        let sum = self.xor(t1, v);
        (sum, carry)
    }

    /// Bitwise XOR of two equal-length vectors.
    pub fn xor_words(&mut self, a: &[Bit], b: &[Bit]) -> Vec<Bit> {
        assert_eq!(a.len(), b.len(), "xor_words: lengths differ");
        a.iter().zip(b).map(|(&x, &y)| self.xor(x, y)).collect()
    }

    /// Bitwise AND of two equal-length vectors.
    pub fn and_words(&mut self, a: &[Bit], b: &[Bit]) -> Vec<Bit> {
        assert_eq!(a.len(), b.len(), "and_words: lengths differ");
        a.iter().zip(b).map(|(&x, &y)| self.and(x, y)).collect()
    }

    /// Bitwise NOT (free).
    pub fn not_word(&mut self, a: &[Bit]) -> Vec<Bit> {
        a.iter().map(|b| b.not()).collect()
    }

    /// SHA-2 `Ch(e, f, g) = (e & f) ^ (!e & g)` as `((f ^ g) & e) ^ g`: one AND per bit.
    pub fn ch(&mut self, e: &[Bit], f: &[Bit], g: &[Bit]) -> Vec<Bit> {
        (0..e.len())
            .map(|k| {
                let d = self.xor(f[k], g[k]);
                let t = self.and(d, e[k]);
                self.xor(t, g[k])
            })
            .collect()
    }

    /// SHA-2 `Maj(a, b, c)` bitwise: one AND per bit.
    pub fn maj_words(&mut self, a: &[Bit], b: &[Bit], c: &[Bit]) -> Vec<Bit> {
        (0..a.len()).map(|k| self.maj(a[k], b[k], c[k])).collect()
    }

    /// `a + b mod 2^n` with a ripple-carry adder: `n - 1` AND gates
    /// (fewer when an operand has known bits).
    pub fn add(&mut self, a: &[Bit], b: &[Bit]) -> Vec<Bit> {
        assert_eq!(a.len(), b.len(), "add: lengths differ");
        let n = a.len();
        let mut out = Vec::with_capacity(n);
        let mut carry = Bit::ZERO;
        for k in 0..n {
            if k + 1 < n {
                let (s, c) = self.full_adder(a[k], b[k], carry);
                out.push(s);
                carry = c;
            } else {
                let s = self.xor(a[k], b[k]);
                out.push(self.xor(s, carry));
            }
        }
        out
    }

    /// Sum of several `n`-bit words mod `2^n` by column compression (a
    /// Wallace/Dadda-style reduction with full adders of one AND each,
    /// finishing each column before moving to the next).
    ///
    /// Adding `m` words costs about `(m - 1)(n - 1) - (m - 2)` AND gates,
    /// a little less than chaining [`Builder::add`]; a constant operand costs
    /// less again because half adders with a constant input are free.
    pub fn add_many(&mut self, words: &[&[Bit]]) -> Vec<Bit> {
        let n = words.first().map_or(0, |w| w.len());
        assert!(
            words.iter().all(|w| w.len() == n),
            "add_many: lengths differ"
        );
        assert!(n <= 64, "add_many: words of at most 64 bits");
        // Fully constant operands are summed in the clear into one operand.
        let mut konst: u64 = 0;
        let mut vars: Vec<&[Bit]> = Vec::with_capacity(words.len() + 1);
        for w in words {
            match const_value(w) {
                Some(v) => konst = konst.wrapping_add(v),
                None => vars.push(w),
            }
        }
        let konst_word = const_word(konst, n);
        if konst != 0 || vars.is_empty() {
            vars.push(&konst_word);
        }
        let words = &vars[..];
        let mut out = Vec::with_capacity(n);
        // `carries` feeds column k from column k - 1; `column` is a queue
        // (read from `head`, appended at the back). Both buffers are reused.
        let mut carries: Vec<Bit> = Vec::with_capacity(words.len() + 2);
        let mut next: Vec<Bit> = Vec::with_capacity(words.len() + 2);
        let mut column: Vec<Bit> = Vec::with_capacity(2 * words.len() + 4);
        for k in 0..n {
            column.clear();
            let mut ones = 0usize;
            for b in words.iter().map(|w| w[k]).chain(carries.drain(..)) {
                match b {
                    Bit::Const(true) => ones += 1,
                    Bit::Const(false) => {}
                    wire => column.push(wire),
                }
            }
            let mut konst = ones % 2 == 1;
            if k + 1 == n {
                // Top column: carries leave the word, so the sum bit is a plain XOR.
                let mut s = Bit::Const(konst);
                for &b in &column {
                    s = self.xor(s, b);
                }
                out.push(s);
                break;
            }
            // Pairs of constant ones carry a constant one into the next column.
            next.clear();
            next.extend(std::iter::repeat_n(Bit::ONE, ones / 2));
            // Reduce the column to one bit. Each full adder removes two bits for
            // one AND; a half adder with the constant one is free (sum !x, carry x).
            let reductions_needed = (column.len() + konst as usize).saturating_sub(1);
            if reductions_needed % 2 == 1 && konst {
                if let Some(x) = column.pop() {
                    column.push(x.not());
                    next.push(x);
                    konst = false;
                }
            }
            if konst {
                column.push(Bit::ONE);
            }
            // Full adders on the front of the queue; results go to the back so
            // that fresh sums are consumed last (a shallower circuit).
            let mut head = 0;
            while column.len() - head >= 3 {
                let (a, b, c) = (column[head], column[head + 1], column[head + 2]);
                head += 3;
                let (s, carry) = self.full_adder(a, b, c);
                column.push(s);
                next.push(carry);
            }
            if column.len() - head == 2 {
                let (a, b) = (column[head], column[head + 1]);
                head += 2;
                next.push(self.and(a, b));
                column.push(self.xor(a, b));
            }
            out.push(column.get(head).copied().unwrap_or(Bit::ZERO));
            std::mem::swap(&mut carries, &mut next);
        }
        out
    }

    /// Finish: drop gates that do not reach an output, renumber wires densely
    /// (input groups first, in order) and return the circuit.
    pub fn finish(mut self) -> Circuit {
        // Outputs must be wires; negated or constant outputs get a gate.
        let outputs: Vec<Vec<WireId>> = std::mem::take(&mut self.outputs)
            .into_iter()
            .map(|group| group.into_iter().map(|b| self.materialise(b)).collect())
            .collect();

        self.inverted = Vec::new();
        let n = self.num_wires as usize;
        // Backward pass: a gate is kept iff its output is live (every wire
        // has exactly one writer, so no separate per-gate flag is needed).
        let mut live = vec![false; n];
        for &w in outputs.iter().flatten() {
            live[w as usize] = true;
        }
        for g in self.gates.iter().rev() {
            match *g {
                Gate::Xor { a, b, out } | Gate::And { a, b, out } => {
                    if live[out as usize] {
                        live[a as usize] = true;
                        live[b as usize] = true;
                    }
                }
                Gate::Inv { a, out } => {
                    if live[out as usize] {
                        live[a as usize] = true;
                    }
                }
                Gate::Const { .. } => {}
                Gate::ByteInv { inputs, out } => {
                    if live[out as usize..out as usize + 8].iter().any(|&l| l) {
                        for &id in &self.byte_inv_inputs[inputs as usize] {
                            live[id as usize] = true;
                        }
                    }
                }
            }
        }

        // Forward pass: renumber (inputs first) and compact the gates in place.
        let mut map = vec![NONE; n];
        let mut next: WireId = 0;
        for &w in self.inputs.iter().flatten() {
            map[w as usize] = next;
            next += 1;
        }
        let mut gates = std::mem::take(&mut self.gates);
        let mut byte_inv_inputs = Vec::new();
        let mut kept = 0;
        for i in 0..gates.len() {
            let g = gates[i];
            if let Gate::ByteInv { inputs, out } = g {
                let out = out as usize;
                if !live[out..out + 8].iter().any(|&l| l) {
                    continue;
                }
                let ids = self.byte_inv_inputs[inputs as usize].map(|id| map[id as usize]);
                gates[kept] = Gate::ByteInv {
                    inputs: byte_inv_inputs.len() as u32,
                    out: next,
                };
                byte_inv_inputs.push(ids);
                for k in 0..8 {
                    map[out + k] = next;
                    next += 1;
                }
                kept += 1;
                continue;
            }
            let out = gate_out(&g) as usize;
            if !live[out] {
                continue;
            }
            map[out] = next;
            next += 1;
            gates[kept] = match g {
                Gate::Xor { a, b, .. } => Gate::Xor {
                    a: map[a as usize],
                    b: map[b as usize],
                    out: map[out],
                },
                Gate::And { a, b, .. } => Gate::And {
                    a: map[a as usize],
                    b: map[b as usize],
                    out: map[out],
                },
                Gate::Inv { a, .. } => Gate::Inv {
                    a: map[a as usize],
                    out: map[out],
                },
                Gate::Const { value, .. } => Gate::Const {
                    value,
                    out: map[out],
                },
                Gate::ByteInv { .. } => unreachable!("handled above"),
            };
            kept += 1;
        }
        gates.truncate(kept);
        gates.shrink_to_fit();
        let remap =
            |ids: &[WireId]| -> Vec<WireId> { ids.iter().map(|&w| map[w as usize]).collect() };
        Circuit {
            num_wires: next,
            inputs: self.inputs.iter().map(|g| remap(g)).collect(),
            outputs: outputs.iter().map(|g| remap(g)).collect(),
            gates,
            byte_inv_inputs,
        }
    }
}

const NONE: WireId = WireId::MAX;

fn gate_out(g: &Gate) -> WireId {
    match *g {
        Gate::Xor { out, .. }
        | Gate::And { out, .. }
        | Gate::Inv { out, .. }
        | Gate::Const { out, .. }
        | Gate::ByteInv { out, .. } => out,
    }
}

/// Rotate a word right by `r` (free): bit `k` of the result is bit `k + r` of `a`.
pub fn rotr(a: &[Bit], r: usize) -> Vec<Bit> {
    let n = a.len();
    (0..n).map(|k| a[(k + r) % n]).collect()
}

/// Rotate a word left by `r` (free).
pub fn rotl(a: &[Bit], r: usize) -> Vec<Bit> {
    let n = a.len();
    rotr(a, (n - r % n) % n)
}

/// Logical shift right by `r` (free).
pub fn shr(a: &[Bit], r: usize) -> Vec<Bit> {
    let n = a.len();
    (0..n)
        .map(|k| if k + r < n { a[k + r] } else { Bit::ZERO })
        .collect()
}

/// Logical shift left by `r` (free).
pub fn shl(a: &[Bit], r: usize) -> Vec<Bit> {
    (0..a.len())
        .map(|k| if k >= r { a[k - r] } else { Bit::ZERO })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic pseudo-random numbers for the tests (SplitMix64).
    fn next(state: &mut u64) -> u64 {
        *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn word_bits(v: u64, n: usize) -> Vec<bool> {
        (0..n).map(|k| (v >> k) & 1 == 1).collect()
    }

    fn word_value(bits: &[bool]) -> u64 {
        bits.iter().enumerate().map(|(k, &b)| (b as u64) << k).sum()
    }

    #[test]
    fn constants_fold_without_gates() {
        let mut b = Builder::new();
        let x = b.input(4);
        assert_eq!(b.xor(x[0], Bit::ZERO), x[0]);
        assert_eq!(b.xor(x[0], Bit::ONE), x[0].not());
        assert_eq!(b.xor(x[0], x[0]), Bit::ZERO);
        assert_eq!(b.xor(x[0], x[0].not()), Bit::ONE);
        assert_eq!(b.and(x[1], Bit::ZERO), Bit::ZERO);
        assert_eq!(b.and(x[1], Bit::ONE), x[1]);
        assert_eq!(b.and(x[1], x[1]), x[1]);
        assert_eq!(b.and(x[1], x[1].not()), Bit::ZERO);
        assert_eq!(b.or(x[2], Bit::ONE), Bit::ONE);
        assert_eq!(b.gate_count(), 0);
        // Rotations and shifts are free.
        let _ = (rotr(&x, 1), rotl(&x, 3), shr(&x, 2), shl(&x, 1));
        assert_eq!(b.gate_count(), 0);
        // A negated input to an AND is materialised once and reused.
        let _ = b.and(x[0].not(), x[1]);
        let _ = b.and(x[0].not(), x[2]);
        assert_eq!(b.and_count(), 2);
        assert_eq!(b.gate_count(), 3);
    }

    #[test]
    fn adders_match_integer_arithmetic() {
        let mut st = 7u64;
        for n in [8usize, 32, 64] {
            let mask = if n == 64 { !0 } else { (1u64 << n) - 1 };
            let k = next(&mut st) & mask | 1;
            let mut b = Builder::new();
            let x = b.input(n);
            let y = b.input(n);
            let z = b.input(n);
            let kw = const_word(k, n);
            let s2 = b.add(&x, &y);
            let s3 = b.add_many(&[&x, &y, &z]);
            let s4 = b.add_many(&[&x, &kw, &y, &z, &kw]);
            let sk = b.add(&x, &kw);
            let skm = b.add_many(&[&x, &kw]);
            for o in [&s2, &s3, &s4, &sk, &skm] {
                b.output(o);
            }
            let c = b.finish();
            c.validate().unwrap();
            for _ in 0..200 {
                let (xv, yv, zv) = (
                    next(&mut st) & mask,
                    next(&mut st) & mask,
                    next(&mut st) & mask,
                );
                let out = c.eval(&[word_bits(xv, n), word_bits(yv, n), word_bits(zv, n)]);
                let want = [
                    xv.wrapping_add(yv),
                    xv.wrapping_add(yv).wrapping_add(zv),
                    xv.wrapping_add(yv)
                        .wrapping_add(zv)
                        .wrapping_add(k.wrapping_mul(2)),
                    xv.wrapping_add(k),
                    xv.wrapping_add(k),
                ];
                for (o, w) in out.iter().zip(want) {
                    assert_eq!(word_value(o), w & mask, "n={n}");
                }
            }
        }
    }

    #[test]
    fn adder_and_counts() {
        type Gadget = dyn Fn(&mut Builder, &[Bit], &[Bit], &[Bit]) -> Vec<Bit>;
        let count = |f: &Gadget| {
            let mut b = Builder::new();
            let x = b.input(32);
            let y = b.input(32);
            let z = b.input(32);
            let o = f(&mut b, &x, &y, &z);
            b.output(&o);
            b.finish().and_count()
        };
        assert_eq!(count(&|b, x, y, _| b.add(x, y)), 31);
        assert_eq!(count(&|b, x, y, _| b.add_many(&[x, y])), 31);
        assert_eq!(count(&|b, x, y, z| b.add_many(&[x, y, z])), 61);
        // Adding a constant: the first carry is free.
        assert_eq!(
            count(&|b, x, _, _| b.add(x, &const_word(0x428a_2f99, 32))),
            30
        );
        // Below and at the lowest set bit of a constant, carries are free:
        // carries out of bits 9..=30 remain.
        assert_eq!(count(&|b, x, _, _| b.add(x, &const_word(0x100, 32))), 22);
        assert_eq!(count(&|b, x, y, z| b.ch(x, y, z)), 32);
        assert_eq!(count(&|b, x, y, z| b.maj_words(x, y, z)), 32);
    }

    #[test]
    fn dead_gates_are_removed_and_wires_renumbered() {
        let mut b = Builder::new();
        let x = b.input(2);
        let dead = b.and(x[0], x[1]);
        let live = b.xor(x[0], x[1]);
        let _ = b.and(dead, live);
        let y = b.input(1);
        let out = b.and(live, y[0]);
        b.output(&[out]);
        let c = b.finish();
        c.validate().unwrap();
        assert_eq!(c.and_count(), 1);
        assert_eq!(c.gates.len(), 2);
        // Inputs come first, in declaration order.
        assert_eq!(c.inputs, vec![vec![0, 1], vec![2]]);
        assert_eq!(c.num_wires, 5);
    }

    #[test]
    fn byte_inversions_fold_constants_and_drop_dead_gates() {
        let mut b = Builder::new();
        let x = b.input(8);
        // A constant byte is folded; a negated input bit is materialised.
        assert_eq!(b.byte_inv(&const_word(0x53, 8)), const_word(0xca, 8));
        let mut xn = x.clone();
        xn[3] = xn[3].not();
        let dead = b.byte_inv(&x);
        let live = b.byte_inv(&xn);
        let _ = b.and(dead[0], live[1]);
        // Only the high bit of the live inversion is an output: the whole
        // gate stays (its 8 outputs are one unit), the dead one goes.
        b.output(&live[7..]);
        let c = b.finish();
        c.validate().unwrap();
        assert_eq!(c.byte_inv_count(), 1);
        assert_eq!(c.byte_inv_inputs.len(), 1);
        assert_eq!(c.and_count(), 0);
        for v in 0..=255u8 {
            let bits: Vec<bool> = (0..8).map(|k| (v >> k) & 1 == 1).collect();
            let want = crate::gf256::inv(v ^ 0x08) >> 7 == 1;
            assert_eq!(c.eval(&[bits]), vec![vec![want]], "{v:#04x}");
        }
    }

    #[test]
    fn constant_and_negated_outputs_get_gates() {
        let mut b = Builder::new();
        let x = b.input(1);
        b.output(&[Bit::ONE, Bit::ZERO, x[0].not(), x[0]]);
        let c = b.finish();
        c.validate().unwrap();
        assert_eq!(c.eval(&[vec![false]]), vec![vec![true, false, true, false]]);
        assert_eq!(c.eval(&[vec![true]]), vec![vec![true, false, false, true]]);
    }
}
