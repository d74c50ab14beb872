//! Output decoding with authenticity: what the garbler sends so that the
//! evaluator reads its outputs and notices when they are not valid labels.
//!
//! For output bit `i` with 0-label `L0` the garbler sends the permute bit
//! `p = lsb(L0)` and the digests `D_v = H(L0 ⊕ v·Δ, t_i)` for `v = 0, 1`
//! (the garbling hash under an output tweak, disjoint from gate tweaks). The
//! evaluator, holding `A`, reads `v = lsb(A) ⊕ p` and accepts only if
//! `H(A, t_i) = D_v`. An honest evaluation always passes; an evaluation
//! whose tables or input labels were altered ends, except with negligible
//! probability, on a label that is neither valid one and is refused.
//!
//! Privacy: the evaluator learns its output bits (that is what decoding
//! is for) and `D_{1-v}`, the hash of the label it does not hold, which by
//! correlation robustness tells it nothing about `Δ`. Send decoding
//! information only for outputs the evaluator may learn; outputs meant for
//! the garbler go the other way, as labels checked by
//! [`crate::Garbler::check_output_labels`] or as bits with a digest of
//! the labels ([`crate::exec`]).
//!
//! Size: 1 bit + 32 bytes per output bit.

use crate::error::{Error, Result};
use crate::hash::{output_tweak, Tccr};
use webproof_core::Block;

/// Decoding information for all output groups of one garbled circuit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decoding {
    groups: Vec<GroupDecoding>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct GroupDecoding {
    permute: Vec<bool>,
    /// `[D_0, D_1]` per bit.
    digests: Vec<[Block; 2]>,
}

impl Decoding {
    pub(crate) fn from_zero_labels(
        hash: &Tccr,
        instance: u64,
        delta: Block,
        zero: &[Vec<Block>],
    ) -> Decoding {
        let mut index = 0u64;
        let groups = zero
            .iter()
            .map(|g| {
                let mut xs = Vec::with_capacity(2 * g.len());
                let mut ts = Vec::with_capacity(2 * g.len());
                for &z in g {
                    let t = output_tweak(instance, index);
                    index += 1;
                    xs.extend([z, z ^ delta]);
                    ts.extend([t, t]);
                }
                hash.hash_many(&mut xs, &ts);
                GroupDecoding {
                    permute: g.iter().map(|z| z.lsb()).collect(),
                    digests: xs.chunks(2).map(|d| [d[0], d[1]]).collect(),
                }
            })
            .collect();
        Decoding { groups }
    }

    /// Read and check the evaluator's output labels.
    pub(crate) fn decode(
        &self,
        hash: &Tccr,
        instance: u64,
        labels: &[Vec<Block>],
    ) -> Result<Vec<Vec<bool>>> {
        if labels.len() != self.groups.len() {
            return Err(Error::Malformed("decoding information for another circuit"));
        }
        let mut index = 0u64;
        let mut out = Vec::with_capacity(labels.len());
        for (group, (l, d)) in labels.iter().zip(&self.groups).enumerate() {
            if l.len() != d.permute.len() {
                return Err(Error::Length {
                    group,
                    expected: l.len(),
                    got: d.permute.len(),
                });
            }
            let mut hs = l.clone();
            let ts: Vec<Block> = (0..l.len() as u64)
                .map(|i| output_tweak(instance, index + i))
                .collect();
            index += l.len() as u64;
            hash.hash_many(&mut hs, &ts);
            let mut bits = Vec::with_capacity(l.len());
            for bit in 0..l.len() {
                let v = l[bit].lsb() ^ d.permute[bit];
                if hs[bit] != d.digests[bit][v as usize] {
                    return Err(Error::OutputCheck { group, bit });
                }
                bits.push(v);
            }
            out.push(bits);
        }
        Ok(out)
    }

    /// Output groups covered.
    pub fn groups(&self) -> usize {
        self.groups.len()
    }

    /// Wire format: `u32` group count, then per group a `u32` bit count, the
    /// permute bits packed LSB first, and the digests (`D_0 ‖ D_1`, 32 bytes
    /// per bit); integers little-endian.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&(self.groups.len() as u32).to_le_bytes());
        for g in &self.groups {
            out.extend_from_slice(&(g.permute.len() as u32).to_le_bytes());
            let mut packed = vec![0u8; g.permute.len().div_ceil(8)];
            for (i, &p) in g.permute.iter().enumerate() {
                packed[i / 8] |= (p as u8) << (i % 8);
            }
            out.extend_from_slice(&packed);
            for d in &g.digests {
                out.extend_from_slice(&d[0].to_bytes());
                out.extend_from_slice(&d[1].to_bytes());
            }
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
            let permute = (0..len)
                .map(|i| (packed[i / 8] >> (i % 8)) & 1 == 1)
                .collect();
            let raw = take(len.checked_mul(32).ok_or(Error::Malformed(WHAT))?)?;
            let block = |c: &[u8]| Block::from_bytes(c.try_into().expect("16 bytes"));
            let digests = raw
                .chunks(32)
                .map(|c| [block(&c[..16]), block(&c[16..])])
                .collect();
            groups.push(GroupDecoding { permute, digests });
        }
        if !r.is_empty() {
            return Err(Error::Malformed(WHAT));
        }
        Ok(Decoding { groups })
    }
}
