//! All-but-one OT ((N-1)-out-of-N, N = 2^k) from k random base OTs with a
//! GGM tree.
//!
//! This module owns the puncturable-PRF step of SoftSpokenOT and nothing
//! about correlations: the *tree owner* expands a random root into `2^k`
//! leaves; the *puncturer*, holding one key of each of `k` base OTs with
//! choice bits `!alpha_i`, reconstructs every leaf except leaf `alpha`.
//!
//! Layout: leaf `x` is reached from the root by taking, at level `i`
//! (`1..=k`), the branch `(x >> (k - i)) & 1` (most significant bit first).
//! Node `j` of level `i` has children `2j` and `2j+1`, computed as the first
//! two blocks of the [`Prg`] stream keyed by the node (ChaCha12, a
//! length-doubling PRG, so the tree is a GGM puncturable PRF).
//!
//! For every level the owner sends the XOR of all left children and of all
//! right children, each masked with the matching base-OT key. The puncturer
//! unmasks the sum on the side off its path and, knowing every other node
//! of that side, solves for the one node it lacks. It learns nothing about
//! leaf `alpha`: that leaf's value only enters sums masked by keys it does
//! not hold, and the PRG hides it given the siblings.

use webproof_core::{Block, Prg};

/// The two children of a node.
#[inline]
fn expand(node: Block) -> [Block; 2] {
    let mut out = [Block::ZERO; 2];
    Prg::new(node).fill_blocks(&mut out);
    out
}

/// Tree owner: expand `root` to `2^k` leaves and return them with the
/// per-level sums `[sum of left children, sum of right children]`.
pub fn expand_tree(root: Block, k: usize) -> (Vec<Block>, Vec<[Block; 2]>) {
    let mut level = vec![root];
    let mut sums = Vec::with_capacity(k);
    for _ in 0..k {
        let mut next = Vec::with_capacity(level.len() * 2);
        let mut s = [Block::ZERO; 2];
        for node in &level {
            let [l, r] = expand(*node);
            s[0] ^= l;
            s[1] ^= r;
            next.push(l);
            next.push(r);
        }
        sums.push(s);
        level = next;
    }
    (level, sums)
}

/// Tree owner: the message for the puncturer, `2k` blocks: for level `i`,
/// `sum_b ^ key_{i,b}` for `b = 0, 1`, with the base-OT key pairs of this tree.
pub fn mask_sums(sums: &[[Block; 2]], base_pairs: &[[Block; 2]]) -> Vec<Block> {
    assert_eq!(sums.len(), base_pairs.len(), "one base OT per tree level");
    sums.iter()
        .zip(base_pairs)
        .flat_map(|(s, p)| [s[0] ^ p[0], s[1] ^ p[1]])
        .collect()
}

/// The base-OT choice bit the puncturer uses at level `i` (1-based) to miss
/// leaf `alpha`: the branch off its path.
#[inline]
pub fn choice_bit(alpha: usize, k: usize, level: usize) -> bool {
    (alpha >> (k - level)) & 1 == 0
}

/// Puncturer: every leaf except `alpha` (whose slot is left as zero), from
/// the `k` base-OT keys received with [`choice_bit`]s and the owner's `2k`
/// masked sums.
///
/// `alpha` is secret (it is a chunk of the COT sender's `Delta`), so the
/// work and the memory accesses do not depend on it: every node is
/// expanded (the unknown one yields garbage that is masked away) and every
/// selection is a mask.
pub fn reconstruct(k: usize, alpha: usize, base_keys: &[Block], masked: &[Block]) -> Vec<Block> {
    assert_eq!(base_keys.len(), k);
    assert_eq!(masked.len(), 2 * k);
    assert!(alpha < 1 << k);
    let mut level = vec![Block::ZERO];
    let mut path = 0usize;
    for i in 1..=k {
        let mut next = Vec::with_capacity(level.len() * 2);
        for node in &level {
            next.extend(expand(*node));
        }
        let on_path = (alpha >> (k - i)) & 1;
        let off = 1 - on_path;
        let sibling = 2 * path + off;
        path = 2 * path + on_path;
        // Side sum (the side off the path), minus every other node of that side.
        let off_mask = mask(off == 1);
        let pair = [masked[2 * (i - 1)], masked[2 * (i - 1) + 1]];
        let mut v = Block((pair[0].0 & !off_mask) | (pair[1].0 & off_mask)) ^ base_keys[i - 1];
        for (idx, node) in next.iter().enumerate() {
            let take = eq(idx & 1, off) & !eq(idx, sibling);
            v.0 ^= node.0 & take;
        }
        for (idx, node) in next.iter_mut().enumerate() {
            let is_sib = eq(idx, sibling);
            node.0 = (node.0 & !is_sib) | (v.0 & is_sib);
            node.0 &= !eq(idx, path);
        }
        level = next;
    }
    level
}

/// All ones if `a == b`, else zero, without a data-dependent branch.
#[inline(always)]
fn eq(a: usize, b: usize) -> u128 {
    use subtle::ConstantTimeEq;
    mask((a as u64).ct_eq(&(b as u64)).into())
}

#[inline(always)]
fn mask(bit: bool) -> u128 {
    (bit as u128).wrapping_neg()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn puncturer_recovers_all_but_alpha() {
        let mut prg = Prg::new(Block(77));
        for k in 1..=8 {
            for alpha in [0usize, 1, (1 << k) - 1, 5 % (1 << k)] {
                let root = prg.next_block();
                let (leaves, sums) = expand_tree(root, k);
                let pairs: Vec<[Block; 2]> = (0..k)
                    .map(|_| [prg.next_block(), prg.next_block()])
                    .collect();
                let masked = mask_sums(&sums, &pairs);
                let keys: Vec<Block> = (1..=k)
                    .map(|i| pairs[i - 1][choice_bit(alpha, k, i) as usize])
                    .collect();
                let got = reconstruct(k, alpha, &keys, &masked);
                for x in 0..1 << k {
                    if x == alpha {
                        assert_eq!(got[x], Block::ZERO);
                    } else {
                        assert_eq!(got[x], leaves[x], "k={k} alpha={alpha} x={x}");
                    }
                }
            }
        }
    }
}
