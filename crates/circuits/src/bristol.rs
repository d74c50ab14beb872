//! Bristol Fashion import and export.
//!
//! The text format: a header `num_gates num_wires`, a line with the number of
//! input groups and their sizes, a line with the number of output groups and
//! their sizes, then one gate per line: `2 1 a b out XOR|AND`,
//! `1 1 a out INV|EQW`, `1 1 v out EQ` (constant `v`), and
//! `2k k a_1..a_k b_1..b_k out_1..out_k MAND`. Input groups occupy wires
//! `0..` in order; outputs are the last wires.
//!
//! The parser treats the text as untrusted: every malformed, truncated or
//! inconsistent file is a [`BristolError`], never a panic, and memory is
//! bounded by the text length and a wire limit, not by header claims. It also
//! checks what the IR promises (each wire written once, before it is read).
//! `EQW` copies become aliases. Wire bits are read in Bristol's order (wire
//! `i` of a group is bit `i`), which for circuits written by [`write()`] is the
//! crate's order.

use std::fmt;

use crate::{Circuit, Gate, WireId};

/// Default bound on the number of wires a parsed file may declare.
pub const DEFAULT_MAX_WIRES: u32 = 1 << 26;

/// Why a Bristol Fashion text was rejected. Line numbers start at 1.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BristolError {
    /// The text ended before the header or all gates were read.
    Truncated,
    /// A token is not a number where one was expected.
    BadNumber { line: usize, token: String },
    /// A header line is inconsistent (counts that do not add up).
    BadHeader { line: usize, reason: &'static str },
    /// The file declares more wires than allowed.
    TooManyWires { declared: u64, limit: u32 },
    /// A gate line is malformed (wrong arity or token count).
    BadGate { line: usize, reason: &'static str },
    /// A gate name that is not part of Bristol Fashion.
    UnknownGate { line: usize, name: String },
    /// A wire index is not below the declared number of wires.
    WireOutOfRange { line: usize, wire: u64 },
    /// A wire is read before any input or gate writes it.
    ReadBeforeWrite { line: usize, wire: u64 },
    /// A wire is written twice (or an input wire is written by a gate).
    WrittenTwice { line: usize, wire: u64 },
    /// An output wire is never written.
    OutputUnset { wire: u64 },
    /// Non-empty text after the last declared gate.
    TrailingData { line: usize },
}

impl fmt::Display for BristolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BristolError::Truncated => write!(f, "Bristol circuit is truncated"),
            BristolError::BadNumber { line, token } => {
                write!(f, "line {line}: `{token}` is not a number")
            }
            BristolError::BadHeader { line, reason } => {
                write!(f, "line {line}: bad header: {reason}")
            }
            BristolError::TooManyWires { declared, limit } => {
                write!(f, "circuit declares {declared} wires, limit is {limit}")
            }
            BristolError::BadGate { line, reason } => write!(f, "line {line}: bad gate: {reason}"),
            BristolError::UnknownGate { line, name } => {
                write!(f, "line {line}: unknown gate `{name}`")
            }
            BristolError::WireOutOfRange { line, wire } => {
                write!(f, "line {line}: wire {wire} out of range")
            }
            BristolError::ReadBeforeWrite { line, wire } => {
                write!(f, "line {line}: wire {wire} is read before it is written")
            }
            BristolError::WrittenTwice { line, wire } => {
                write!(f, "line {line}: wire {wire} is written twice")
            }
            BristolError::OutputUnset { wire } => write!(f, "output wire {wire} is never written"),
            BristolError::TrailingData { line } => {
                write!(f, "line {line}: data after the last gate")
            }
        }
    }
}

impl std::error::Error for BristolError {}

/// Parse a Bristol Fashion circuit with [`DEFAULT_MAX_WIRES`].
pub fn parse(text: &str) -> Result<Circuit, BristolError> {
    parse_with_limit(text, DEFAULT_MAX_WIRES)
}

const UNSET: WireId = WireId::MAX;

struct Lines<'a> {
    inner: std::iter::Enumerate<std::str::Lines<'a>>,
    line: usize,
}

impl<'a> Lines<'a> {
    /// The next non-blank line, split into tokens.
    fn next_tokens(&mut self) -> Option<Vec<&'a str>> {
        for (i, l) in self.inner.by_ref() {
            let toks: Vec<&str> = l.split_whitespace().collect();
            if !toks.is_empty() {
                self.line = i + 1;
                return Some(toks);
            }
        }
        None
    }
}

fn num(line: usize, tok: &str) -> Result<u64, BristolError> {
    tok.parse::<u64>().map_err(|_| BristolError::BadNumber {
        line,
        token: tok.chars().take(32).collect(),
    })
}

/// Parse a group-size line: `n s_1 ... s_n`.
fn groups(lines: &mut Lines<'_>, limit: u32) -> Result<Vec<u64>, BristolError> {
    let toks = lines.next_tokens().ok_or(BristolError::Truncated)?;
    let line = lines.line;
    let n = num(line, toks[0])?;
    if n != (toks.len() - 1) as u64 {
        return Err(BristolError::BadHeader {
            line,
            reason: "group count does not match the sizes given",
        });
    }
    let sizes = toks[1..]
        .iter()
        .map(|t| num(line, t))
        .collect::<Result<Vec<_>, _>>()?;
    if sizes
        .iter()
        .try_fold(0u64, |acc, &s| acc.checked_add(s))
        .is_none_or(|t| t > limit as u64)
    {
        return Err(BristolError::BadHeader {
            line,
            reason: "group sizes exceed the wire count limit",
        });
    }
    Ok(sizes)
}

/// Parse a Bristol Fashion circuit, rejecting files that declare more than
/// `max_wires` wires.
pub fn parse_with_limit(text: &str, max_wires: u32) -> Result<Circuit, BristolError> {
    let mut lines = Lines {
        inner: text.lines().enumerate(),
        line: 0,
    };
    let head = lines.next_tokens().ok_or(BristolError::Truncated)?;
    let line = lines.line;
    if head.len() != 2 {
        return Err(BristolError::BadHeader {
            line,
            reason: "expected `num_gates num_wires`",
        });
    }
    let num_gates = num(line, head[0])?;
    let num_wires = num(line, head[1])?;
    if num_wires > max_wires as u64 {
        return Err(BristolError::TooManyWires {
            declared: num_wires,
            limit: max_wires,
        });
    }
    let in_sizes = groups(&mut lines, max_wires)?;
    let out_sizes = groups(&mut lines, max_wires)?;
    let n_in: u64 = in_sizes.iter().sum();
    let n_out: u64 = out_sizes.iter().sum();
    if n_in > num_wires || n_out > num_wires {
        return Err(BristolError::BadHeader {
            line: lines.line,
            reason: "more input or output wires than wires",
        });
    }

    // map[bristol wire] = our wire, UNSET until written. Sized by the
    // declared wire count, which is bounded by `max_wires`.
    let mut map: Vec<WireId> = vec![UNSET; num_wires as usize];
    let mut next: WireId = 0;
    let mut inputs = Vec::with_capacity(in_sizes.len());
    for &s in &in_sizes {
        let group: Vec<WireId> = (0..s as u32).map(|k| next + k).collect();
        for &w in &group {
            map[w as usize] = w;
        }
        next += s as u32;
        inputs.push(group);
    }
    // Each gate line holds at least one character, so the text bounds this.
    let mut gates: Vec<Gate> = Vec::with_capacity((num_gates as usize).min(text.len() / 8));

    for _ in 0..num_gates {
        let toks = lines.next_tokens().ok_or(BristolError::Truncated)?;
        let line = lines.line;
        if toks.len() < 4 {
            return Err(BristolError::BadGate {
                line,
                reason: "too few tokens",
            });
        }
        let n_gin = num(line, toks[0])?;
        let n_gout = num(line, toks[1])?;
        let name = toks[toks.len() - 1];
        let wires = &toks[2..toks.len() - 1];
        if n_gin.checked_add(n_gout) != Some(wires.len() as u64) {
            return Err(BristolError::BadGate {
                line,
                reason: "wire count does not match the declared arity",
            });
        }
        let w = |i: usize| -> Result<u64, BristolError> {
            let v = num(line, wires[i])?;
            if v >= num_wires {
                return Err(BristolError::WireOutOfRange { line, wire: v });
            }
            Ok(v)
        };
        let read = |v: u64, map: &[WireId]| -> Result<WireId, BristolError> {
            match map[v as usize] {
                UNSET => Err(BristolError::ReadBeforeWrite { line, wire: v }),
                id => Ok(id),
            }
        };
        let write = |v: u64, map: &mut [WireId], id: WireId| -> Result<(), BristolError> {
            if map[v as usize] != UNSET {
                return Err(BristolError::WrittenTwice { line, wire: v });
            }
            map[v as usize] = id;
            Ok(())
        };
        let arity = |i: u64, o: u64| -> Result<(), BristolError> {
            if (n_gin, n_gout) != (i, o) {
                return Err(BristolError::BadGate {
                    line,
                    reason: "wrong arity for this gate",
                });
            }
            Ok(())
        };
        match name {
            "XOR" | "AND" => {
                arity(2, 1)?;
                let a = read(w(0)?, &map)?;
                let b = read(w(1)?, &map)?;
                write(w(2)?, &mut map, next)?;
                gates.push(if name == "XOR" {
                    Gate::Xor { a, b, out: next }
                } else {
                    Gate::And { a, b, out: next }
                });
                next += 1;
            }
            "INV" => {
                arity(1, 1)?;
                let a = read(w(0)?, &map)?;
                write(w(1)?, &mut map, next)?;
                gates.push(Gate::Inv { a, out: next });
                next += 1;
            }
            "EQW" => {
                arity(1, 1)?;
                let a = read(w(0)?, &map)?;
                write(w(1)?, &mut map, a)?;
            }
            "EQ" => {
                arity(1, 1)?;
                let value = match num(line, wires[0])? {
                    0 => false,
                    1 => true,
                    _ => {
                        return Err(BristolError::BadGate {
                            line,
                            reason: "EQ constant must be 0 or 1",
                        })
                    }
                };
                write(w(1)?, &mut map, next)?;
                gates.push(Gate::Const { value, out: next });
                next += 1;
            }
            "MAND" => {
                if n_gin != 2 * n_gout || n_gout == 0 {
                    return Err(BristolError::BadGate {
                        line,
                        reason: "MAND takes 2k inputs and k outputs",
                    });
                }
                let k = n_gout as usize;
                let ins = (0..2 * k)
                    .map(|i| read(w(i)?, &map))
                    .collect::<Result<Vec<_>, _>>()?;
                for j in 0..k {
                    write(w(2 * k + j)?, &mut map, next)?;
                    gates.push(Gate::And {
                        a: ins[j],
                        b: ins[k + j],
                        out: next,
                    });
                    next += 1;
                }
            }
            other => {
                return Err(BristolError::UnknownGate {
                    line,
                    name: other.chars().take(32).collect(),
                })
            }
        }
    }
    if lines.next_tokens().is_some() {
        return Err(BristolError::TrailingData { line: lines.line });
    }

    let mut outputs = Vec::with_capacity(out_sizes.len());
    let mut first = num_wires - n_out;
    for &s in &out_sizes {
        let mut group = Vec::with_capacity(s as usize);
        for v in first..first + s {
            match map[v as usize] {
                UNSET => return Err(BristolError::OutputUnset { wire: v }),
                id => group.push(id),
            }
        }
        first += s;
        outputs.push(group);
    }
    Ok(Circuit {
        num_wires: next,
        inputs,
        outputs,
        gates,
        byte_inv_inputs: Vec::new(),
    })
}

/// Write a circuit in Bristol Fashion. Input groups become wires `0..` in
/// order and outputs the last wires; an output that is an input, a repeated
/// wire, or not written by a gate is produced by an `EQW` copy. Byte
/// inversions, which Bristol Fashion has no gate for, are written as their
/// Boolean lowering ([`Circuit::lower`]).
pub fn write(c: &Circuit) -> String {
    if c.byte_inv_count() > 0 {
        return write(&c.lower());
    }
    use std::fmt::Write as _;
    let n = c.num_wires as usize;
    let n_in: usize = c.input_len();
    let n_out: usize = c.output_len();
    let mut is_gate_out = vec![false; n];
    for g in &c.gates {
        is_gate_out[gate_out(g) as usize] = true;
    }
    // Output slots: gate outputs renamed to their slot when possible.
    let mut slot_of = vec![UNSET; n];
    let mut copies: Vec<(WireId, usize)> = Vec::new(); // (our wire, output index)
    for (k, &w) in c.outputs.iter().flatten().enumerate() {
        if is_gate_out[w as usize] && slot_of[w as usize] == UNSET {
            slot_of[w as usize] = k as WireId;
        } else {
            copies.push((w, k));
        }
    }
    let internal = c.gates.len()
        - c.gates
            .iter()
            .filter(|g| slot_of[gate_out(g) as usize] != UNSET)
            .count();
    let total_wires = n_in + internal + n_out;
    let out_base = n_in + internal;
    let mut map = vec![UNSET; n];
    for (i, &w) in c.inputs.iter().flatten().enumerate() {
        map[w as usize] = i as WireId;
    }
    let mut next = n_in as WireId;
    let mut body = String::new();
    for g in &c.gates {
        let o = gate_out(g) as usize;
        map[o] = if slot_of[o] != UNSET {
            (out_base as WireId) + slot_of[o]
        } else {
            next += 1;
            next - 1
        };
        let _ = match *g {
            Gate::Xor { a, b, out } => {
                writeln!(
                    body,
                    "2 1 {} {} {} XOR",
                    map[a as usize], map[b as usize], map[out as usize]
                )
            }
            Gate::And { a, b, out } => {
                writeln!(
                    body,
                    "2 1 {} {} {} AND",
                    map[a as usize], map[b as usize], map[out as usize]
                )
            }
            Gate::Inv { a, out } => {
                writeln!(body, "1 1 {} {} INV", map[a as usize], map[out as usize])
            }
            Gate::Const { value, out } => {
                writeln!(body, "1 1 {} {} EQ", value as u8, map[out as usize])
            }
            Gate::ByteInv { .. } => unreachable!("lowered above"),
        };
    }
    for &(w, k) in &copies {
        let _ = writeln!(body, "1 1 {} {} EQW", map[w as usize], out_base + k);
    }
    let sizes = |groups: &[Vec<WireId>]| -> String {
        let mut s = groups.len().to_string();
        for g in groups {
            let _ = write!(s, " {}", g.len());
        }
        s
    };
    format!(
        "{} {}\n{}\n{}\n\n{}",
        c.gates.len() + copies.len(),
        total_wires,
        sizes(&c.inputs),
        sizes(&c.outputs),
        body
    )
}

fn gate_out(g: &Gate) -> WireId {
    match *g {
        Gate::Xor { out, .. }
        | Gate::And { out, .. }
        | Gate::Inv { out, .. }
        | Gate::Const { out, .. } => out,
        Gate::ByteInv { .. } => unreachable!("lowered before writing"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::{Bit, Builder};

    /// A full adder written by hand: inputs a, b, c (three groups of 1 bit),
    /// outputs sum and carry (one group of 2 bits).
    const FULL_ADDER: &str = "\
7 10
3 1 1 1
1 2

2 1 0 2 3 XOR
2 1 1 2 4 XOR
2 1 3 4 5 AND
2 1 5 2 6 XOR
1 1 6 9 EQW
2 1 3 1 8 XOR
1 1 0 7 EQ
";

    #[test]
    fn hand_written_full_adder() {
        // Wire 7 is a constant nobody reads; outputs are wires 8 (sum), 9 (carry).
        let c = parse(FULL_ADDER).unwrap();
        c.validate().unwrap();
        assert_eq!(c.and_count(), 1);
        for v in 0..8u8 {
            let bits: Vec<Vec<bool>> = (0..3).map(|i| vec![(v >> i) & 1 == 1]).collect();
            let out = c.eval(&bits);
            let s = (v & 1) + ((v >> 1) & 1) + ((v >> 2) & 1);
            assert_eq!(out[0], vec![s & 1 == 1, s >= 2], "inputs {v:03b}");
        }
        // And it survives a round trip through the writer.
        let again = parse(&write(&c)).unwrap();
        assert_eq!(
            again.eval(&[vec![true], vec![true], vec![false]]),
            vec![vec![false, true]]
        );
    }

    #[test]
    fn mand_gate() {
        let text = "1 6\n2 2 2\n1 2\n4 2 0 1 2 3 4 5 MAND\n";
        let c = parse(text).unwrap();
        assert_eq!(c.and_count(), 2);
        assert_eq!(
            c.eval(&[vec![true, true], vec![true, false]]),
            vec![vec![true, false]]
        );
    }

    #[test]
    fn outputs_that_are_inputs_or_repeated() {
        let mut b = Builder::new();
        let x = b.input(2);
        let y = b.and(x[0], x[1]);
        b.output(&[x[0], y, y, x[1].not()]);
        let c = b.finish();
        let text = write(&c);
        let back = parse(&text).unwrap();
        back.validate().unwrap();
        for v in 0..4u8 {
            let inp = vec![vec![v & 1 == 1, v & 2 == 2]];
            assert_eq!(back.eval(&inp), c.eval(&inp));
        }
    }

    #[test]
    fn malformed_inputs_are_errors() {
        let cases: &[(&str, &str)] = &[
            ("", "empty"),
            ("1", "short header"),
            ("1 3\n2 1 1\n1 1\n", "missing gate"),
            (
                "1 3\n2 1 1\n1 1\n2 1 0 1 2 XOR\n2 1 0 1 2 XOR\n",
                "trailing gate",
            ),
            ("1 3\n2 1 1\n1 1\n2 1 0 1 2 NAND\n", "unknown gate"),
            ("1 3\n2 1 1\n1 1\n2 1 0 1 7 XOR\n", "wire out of range"),
            ("1 3\n2 1 1\n1 1\n2 1 0 2 2 XOR\n", "read before write"),
            ("1 3\n2 1 1\n1 1\n2 1 0 1 1 XOR\n", "input written"),
            ("1 3\n2 1 1\n1 1\n1 1 0 1 2 XOR\n", "arity mismatch"),
            ("1 3\n2 1 1\n1 1\n1 1 0 2 XOR\n", "arity for XOR"),
            ("1 3\n2 1 1\n1 1\n1 1 5 2 EQ\n", "bad constant"),
            ("1 3\n3 1 1\n1 1\n2 1 0 1 2 XOR\n", "group count"),
            ("1 3\n2 2 2\n1 1\n2 1 0 1 2 XOR\n", "inputs exceed wires"),
            ("1 x\n2 1 1\n1 1\n2 1 0 1 2 XOR\n", "not a number"),
            ("1 3\n2 1 1\n1 1\n2 1 0 -1 2 XOR\n", "negative"),
            (
                "1 3\n2 1 1\n1 1\n2 1 0 99999999999999999999999 2 XOR\n",
                "overflow",
            ),
            ("0 3\n2 1 1\n1 1\n", "output never written"),
            (
                "1 4000000000\n2 1 1\n1 1\n2 1 0 1 2 XOR\n",
                "too many wires",
            ),
            ("1 3\n2 4000000000 4000000000\n1 1\n", "huge groups"),
            (
                "18446744073709551615 3\n2 1 1\n1 1\n2 1 0 1 2 XOR\n",
                "huge gate count",
            ),
            ("1 6\n2 2 2\n1 2\n3 2 0 1 2 3 4 MAND\n", "odd MAND"),
            ("1 3\n2 1 1\n1 1\n2 1 0 1 XOR\n", "too few wires"),
        ];
        for (text, what) in cases {
            assert!(parse(text).is_err(), "{what} was accepted");
        }
        // The limit is enforced before any allocation by the header.
        assert!(matches!(
            parse_with_limit("1 100\n2 1 1\n1 1\n2 1 0 1 99 XOR\n", 10),
            Err(BristolError::TooManyWires {
                declared: 100,
                limit: 10
            })
        ));
    }

    /// Random token mutations of a valid file: never a panic, and whatever
    /// is accepted satisfies the IR invariants.
    #[test]
    fn mutated_files_never_panic_and_accepted_ones_validate() {
        let mut b = Builder::new();
        let x = b.input(4);
        let y = b.input(4);
        let s = b.add(&x, &y);
        let t = b.and_words(&s, &x);
        b.output(&t);
        b.output(&[s[0].not(), Bit::ONE]);
        let text = write(&b.finish());
        let tokens: Vec<&str> = text.split(' ').collect();
        let replacements = [
            "0",
            "1",
            "2",
            "3",
            "7",
            "40",
            "4294967295",
            "XOR",
            "AND",
            "INV",
            "EQ",
            "EQW",
            "MAND",
            "",
            "\n",
            "-1",
        ];
        let mut state = 0x1234_5678_9abc_def0u64;
        let mut rand = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        let mut accepted = 0;
        for _ in 0..3000 {
            let mut toks = tokens.clone();
            for _ in 0..1 + rand(3) {
                let i = rand(toks.len());
                toks[i] = replacements[rand(replacements.len())];
            }
            let mutated = toks.join(" ").replace("\\n", "\n");
            if let Ok(c) = parse(&mutated) {
                c.validate().expect("accepted circuit must be well formed");
                let inputs: Vec<Vec<bool>> = c.inputs.iter().map(|g| vec![true; g.len()]).collect();
                let _ = c.eval(&inputs);
                accepted += 1;
            }
        }
        // Some mutations are harmless (e.g. swapping XOR for AND).
        assert!(accepted > 0);
    }

    #[test]
    fn every_prefix_of_a_valid_file_is_handled() {
        let text = write(&crate::aes::aes128_circuit());
        // Cut at many points: an error or (at a line boundary past the last
        // gate) success, never a panic.
        for cut in (0..text.len()).step_by(text.len() / 40 + 1) {
            let _ = parse(&text[..cut]);
        }
    }
}
