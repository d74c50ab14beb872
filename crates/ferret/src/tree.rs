//! Half-trees: the single-point COT behind each noisy LPN block.
//!
//! The sender's tree of depth `h` (Guo et al., "Half-Tree", Eurocrypt 2023)
//! has level 1 equal to `(s, s ⊕ Delta)` for a fresh random `s`, and every
//! node `x` has children `H(x)` (left) and `x ⊕ H(x)` (right), so every level
//! XORs to `Delta`. Per level `i` the sender reveals one block,
//! `c_i = K_i ⊕ (XOR of the left children at level i)`, where `K_i` is the
//! sender's key of one COT. The receiver's COT for that level carries the
//! random bit `b_i` and `M_i = K_i ⊕ b_i·Delta`, so `c_i ⊕ M_i` is the XOR of
//! the level's children on side `b_i`. The receiver's point is the path
//! `alpha` with bits `alpha_i = ¬b_i` (no derandomisation message): at each
//! level it knows every node but the one on the path, and the XOR of side
//! `b_i` gives it the path node's sibling. At the leaves it knows every leaf
//! but `alpha`, and since the leaves XOR to `Delta` it sets
//! `w[alpha] = XOR of the others = v[alpha] ⊕ Delta`: no extra message.
//!
//! Result: `w = v ⊕ unit(alpha)·Delta` for `h` blocks of traffic, half of
//! the GGM construction's `2h`.

use crate::ccr::{Ccr, BATCH};
use webproof_core::Block;

/// Expand the `width` parents in `buf[..width]` into their children in
/// `buf[..2·width]` (in place), returning the XOR of the left and of the
/// right children.
#[inline]
fn expand_level(ccr: &Ccr, buf: &mut [Block], width: usize) -> (Block, Block) {
    let (mut left, mut parents) = (Block::ZERO, Block::ZERO);
    // From the top down, so no parent is overwritten before it is read.
    let mut end = width;
    while end > 0 {
        let start = end.saturating_sub(BATCH);
        let len = end - start;
        let mut x = [Block::ZERO; BATCH];
        x[..len].copy_from_slice(&buf[start..end]);
        let mut hx = x;
        ccr.hash_in_place(&mut hx[..len]);
        for i in 0..len {
            let l = hx[i];
            buf[2 * (start + i)] = l;
            buf[2 * (start + i) + 1] = x[i] ^ l;
            left ^= l;
            parents ^= x[i];
        }
        end = start;
    }
    // Right child = parent ⊕ left child, so the right sum needs no pass.
    (left, left ^ parents)
}

/// The sender's leaves in `buf[..2^h]` from `seed`; `left_sums[i]` receives the
/// XOR of the left nodes of level `i + 1` (if given).
pub(crate) fn sender_tree(
    ccr: &Ccr,
    h: u32,
    seed: Block,
    delta: Block,
    buf: &mut [Block],
    mut left_sums: Option<&mut [Block]>,
) {
    debug_assert!(h >= 1 && buf.len() >= 1 << h);
    buf[0] = seed;
    buf[1] = seed ^ delta;
    if let Some(s) = left_sums.as_deref_mut() {
        s[0] = seed;
    }
    for level in 1..h {
        let (l, _) = expand_level(ccr, buf, 1 << level);
        if let Some(s) = left_sums.as_deref_mut() {
            s[level as usize] = l;
        }
    }
}

/// The sender's `left_sums` of [`sender_tree`] alone (what the corrections
/// need): the same expansion, except that the leaves are only summed, not
/// stored, so `buf` needs `2^(h-1)` blocks (at least 2).
pub(crate) fn sender_left_sums(
    ccr: &Ccr,
    h: u32,
    seed: Block,
    delta: Block,
    buf: &mut [Block],
    left_sums: &mut [Block],
) {
    debug_assert!(h >= 1 && buf.len() >= 2 && buf.len() >= 1 << (h - 1));
    buf[0] = seed;
    buf[1] = seed ^ delta;
    left_sums[0] = seed;
    for level in 1..h.saturating_sub(1) {
        let (l, _) = expand_level(ccr, buf, 1 << level);
        left_sums[level as usize] = l;
    }
    if h >= 2 {
        // Left leaves are H(parent).
        let mut sum = Block::ZERO;
        for parents in buf[..1 << (h - 1)].chunks(BATCH) {
            let mut hx = [Block::ZERO; BATCH];
            hx[..parents.len()].copy_from_slice(parents);
            ccr.hash_in_place(&mut hx[..parents.len()]);
            sum = hx[..parents.len()].iter().fold(sum, |a, x| a ^ *x);
        }
        left_sums[h as usize - 1] = sum;
    }
}

/// Bit `level` (0 = top) of a path of depth `h`.
#[inline(always)]
pub(crate) fn path_bit(alpha: usize, h: u32, level: u32) -> usize {
    (alpha >> (h - 1 - level)) & 1
}

/// The receiver's leaves in `buf[..2^h]`: `learned[i]` is the XOR of the
/// children at level `i + 1` on the side off the path `alpha`.
pub(crate) fn receiver_tree(ccr: &Ccr, h: u32, learned: &[Block], alpha: usize, buf: &mut [Block]) {
    debug_assert!(h >= 1 && buf.len() >= 1 << h && alpha < 1 << h);
    let a = path_bit(alpha, h, 0);
    buf[1 - a] = learned[0];
    buf[a] = Block::ZERO;
    let mut p = a;
    // XOR of the current level's nodes other than the path node.
    let mut rest = learned[0];
    for level in 1..h {
        // The path node holds a placeholder; its children are discarded below.
        let (mut l, mut r) = expand_level(ccr, buf, 1 << level);
        l ^= buf[2 * p];
        r ^= buf[2 * p + 1];
        let a = path_bit(alpha, h, level);
        let known = if a == 1 { l } else { r };
        let sibling = learned[level as usize] ^ known;
        buf[2 * p + (1 - a)] = sibling;
        buf[2 * p + a] = Block::ZERO;
        rest = l ^ r ^ sibling;
        p = 2 * p + a;
    }
    debug_assert_eq!(p, alpha);
    // The leaves XOR to Delta on the sender's side, so the missing one is
    // the XOR of the others: v[alpha] ⊕ Delta (no pass over the leaves).
    buf[alpha] = rest;
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// Naive reference: a full binary tree stored level by level.
    fn reference_leaves(ccr: &Ccr, h: u32, seed: Block, delta: Block) -> Vec<Vec<Block>> {
        let mut levels = vec![vec![seed, seed ^ delta]];
        for _ in 1..h {
            let prev = levels.last().unwrap();
            let mut next = Vec::new();
            for x in prev {
                let l = ccr.hash(*x);
                next.push(l);
                next.push(*x ^ l);
            }
            levels.push(next);
        }
        levels
    }

    #[test]
    fn sender_tree_matches_reference_and_sums_to_delta() {
        let ccr = Ccr::new();
        let mut rng = rand_chacha::ChaCha12Rng::seed_from_u64(1);
        for h in 1..=10u32 {
            let seed = Block(rng.gen());
            let delta = Block(rng.gen::<u128>() | 1);
            let mut buf = vec![Block::ZERO; 1 << h];
            let mut sums = vec![Block::ZERO; h as usize];
            sender_tree(&ccr, h, seed, delta, &mut buf, Some(&mut sums));
            let mut half = vec![Block::ZERO; (1 << (h - 1)).max(2)];
            let mut sums_only = vec![Block::ZERO; h as usize];
            sender_left_sums(&ccr, h, seed, delta, &mut half, &mut sums_only);
            assert_eq!(sums_only, sums, "h={h}");
            let r = reference_leaves(&ccr, h, seed, delta);
            assert_eq!(&buf, r.last().unwrap());
            for (i, level) in r.iter().enumerate() {
                let all = level.iter().fold(Block::ZERO, |a, x| a ^ *x);
                assert_eq!(all, delta);
                let left = level.iter().step_by(2).fold(Block::ZERO, |a, x| a ^ *x);
                assert_eq!(left, sums[i]);
            }
        }
    }

    #[test]
    fn receiver_learns_all_but_the_point() {
        let ccr = Ccr::new();
        let mut rng = rand_chacha::ChaCha12Rng::seed_from_u64(2);
        for h in 1..=9u32 {
            for _ in 0..20 {
                let seed = Block(rng.gen());
                let delta = Block(rng.gen::<u128>() | 1);
                let alpha = rng.gen_range(0..1usize << h);
                let mut v = vec![Block::ZERO; 1 << h];
                let mut sums = vec![Block::ZERO; h as usize];
                sender_tree(&ccr, h, seed, delta, &mut v, Some(&mut sums));
                // What the COTs give: the sum of side ¬alpha_i.
                let learned: Vec<Block> = (0..h)
                    .map(|i| sums[i as usize] ^ Block::select(path_bit(alpha, h, i) == 0, delta))
                    .collect();
                let mut w = vec![Block::ZERO; 1 << h];
                receiver_tree(&ccr, h, &learned, alpha, &mut w);
                for l in 0..1 << h {
                    let expect = v[l] ^ Block::select(l == alpha, delta);
                    assert_eq!(w[l], expect, "h={h} alpha={alpha} leaf={l}");
                }
            }
        }
    }
}
