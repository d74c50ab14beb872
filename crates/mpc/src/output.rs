//! Output decoding: what the garbler sends so that the evaluator reads its
//! outputs.
//!
//! For output bit `i` with 0-label `L0` the garbler sends the permute bit
//! `p = lsb(L0)`; the evaluator, holding `A`, reads `v = lsb(A) ⊕ p`. One
//! bit per output bit.
//!
//! No authenticity digests (`H(L0 ⊕ v·Δ)` per value, 32 bytes per output
//! bit, what this module sent before): in garble-then-prove they buy
//! nothing the audit does not give, and they cost about 0.39 MB of a
//! 1 KB MPC session's 16 MB. A check of the evaluator's label against
//! digests catches only *invalid* labels, and a cheating garbler need not
//! make any: it can garble another function with valid labels
//! throughout, and that is caught only when `Δ` is revealed and the
//! prover garbles every circuit again from its labels
//! ([`crate::consistency`]: tables, decoding and the labels of its own
//! inputs compared exactly). The audit catches wrong tables, wrong input
//! labels and wrong permute bits as surely as digests would, before the
//! prover opens its proof. And digests opened a selective-abort channel:
//! a garbler that spoils only `D_1` of one output learns, from whether
//! the evaluator aborts, that output bit, which for a masked output is a
//! bit of a secret. Without them a corrupted evaluation does not stop the
//! prover by itself; it goes on with wrong values, which the server or
//! the verifier's checks of revealed labels refuse, or the audit finds.
//!
//! Privacy: the evaluator learns its output bits (that is what decoding
//! is for) and nothing of `Δ`. Send decoding information only for outputs
//! the evaluator may learn; outputs meant for the garbler go the other
//! way, as labels checked by [`crate::Garbler::check_output_labels`] or
//! as bits with a digest of the labels ([`crate::exec`]).

use crate::error::{Error, Result};
use webproof_core::Block;

/// Decoding information for all output groups of one garbled circuit: the
/// permute bits of each group's output wires.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decoding {
    groups: Vec<Vec<bool>>,
}

impl Decoding {
    pub(crate) fn from_zero_labels(zero: &[Vec<Block>]) -> Decoding {
        Decoding {
            groups: zero
                .iter()
                .map(|g| g.iter().map(|z| z.lsb()).collect())
                .collect(),
        }
    }

    /// Read the evaluator's output labels.
    pub(crate) fn decode(&self, labels: &[Vec<Block>]) -> Result<Vec<Vec<bool>>> {
        if labels.len() != self.groups.len() {
            return Err(Error::Malformed("decoding information for another circuit"));
        }
        labels
            .iter()
            .zip(&self.groups)
            .enumerate()
            .map(|(group, (l, p))| {
                if l.len() != p.len() {
                    return Err(Error::Length {
                        group,
                        expected: l.len(),
                        got: p.len(),
                    });
                }
                Ok(l.iter().zip(p).map(|(a, &p)| a.lsb() ^ p).collect())
            })
            .collect()
    }

    /// Output groups covered.
    pub fn groups(&self) -> usize {
        self.groups.len()
    }

    /// Wire format: `u32` group count, then per group a `u32` bit count and
    /// the permute bits packed LSB first; integers little-endian.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&(self.groups.len() as u32).to_le_bytes());
        for g in &self.groups {
            out.extend_from_slice(&(g.len() as u32).to_le_bytes());
            let mut packed = vec![0u8; g.len().div_ceil(8)];
            for (i, &p) in g.iter().enumerate() {
                packed[i / 8] |= (p as u8) << (i % 8);
            }
            out.extend_from_slice(&packed);
        }
        out
    }

    /// Parse [`Self::to_bytes`]; refuses short, long or non-canonical input.
    pub fn from_bytes(bytes: &[u8]) -> Result<Decoding> {
        const WHAT: &str = "decoding information";
        let mut r = bytes;
        let mut take = |n: usize| -> Result<&[u8]> {
            if r.len() < n {
                return Err(Error::Malformed(WHAT));
            }
            let (a, b) = r.split_at(n);
            r = b;
            Ok(a)
        };
        let u32_at = |b: &[u8]| u32::from_le_bytes(b.try_into().expect("4 bytes")) as usize;
        let count = u32_at(take(4)?);
        let mut groups = Vec::new();
        for _ in 0..count {
            let len = u32_at(take(4)?);
            let packed = take(len.div_ceil(8))?;
            if len % 8 != 0 && packed[len / 8] >> (len % 8) != 0 {
                return Err(Error::Malformed(WHAT));
            }
            groups.push(
                (0..len)
                    .map(|i| (packed[i / 8] >> (i % 8)) & 1 == 1)
                    .collect(),
            );
        }
        if !r.is_empty() {
            return Err(Error::Malformed(WHAT));
        }
        Ok(Decoding { groups })
    }
}
