//! Merkle tree over the transcript commitment leaves.
//!
//! The tree is the one of RFC 6962 / RFC 9162 (Certificate Transparency):
//! for `n > 1` leaves, `MTH(D[0..n]) = SHA-256(0x01 || MTH(D[0..k]) ||
//! MTH(D[k..n]))` with `k` the largest power of two below `n`; a one-leaf
//! tree's root is the leaf hash itself; the empty tree's root is
//! `SHA-256("")`. Leaf hashes are the commitment hashes of
//! [`crate::commit`], whose preimages start with the byte `0x00`, so a leaf
//! can never be mistaken for an interior node (second-preimage separation).
//!
//! Inclusion proofs are the RFC 9162 audit paths (siblings bottom-up) and are
//! verified with its algorithm (section 2.1.3.2), which also rejects paths of
//! the wrong length for the index and tree size.

use sha2::{Digest, Sha256};

/// A 32-byte SHA-256 output.
pub type Hash = [u8; 32];

/// Longest possible audit path: trees have at most 2^32 leaves.
pub const MAX_PROOF_LEN: usize = 32;

/// Interior node hash: `SHA-256(0x01 || left || right)`.
pub fn node_hash(left: &Hash, right: &Hash) -> Hash {
    let mut h = Sha256::new();
    h.update([0x01]);
    h.update(left);
    h.update(right);
    h.finalize().into()
}

/// A tree kept level by level so every audit path is read off in `O(log n)`.
///
/// Building level by level, pairing left to right and carrying an unpaired
/// last node up unchanged, gives exactly the RFC 6962 tree.
#[derive(Clone, Debug)]
pub struct MerkleTree {
    levels: Vec<Vec<Hash>>,
}

impl MerkleTree {
    pub fn new(leaves: Vec<Hash>) -> Self {
        let mut levels = vec![leaves];
        while levels.last().map_or(0, Vec::len) > 1 {
            let below = levels.last().expect("at least one level");
            let above = below
                .chunks(2)
                .map(|pair| match pair {
                    [l, r] => node_hash(l, r),
                    [single] => *single,
                    _ => unreachable!("chunks(2) yields one or two items"),
                })
                .collect();
            levels.push(above);
        }
        Self { levels }
    }

    pub fn leaf_count(&self) -> usize {
        self.levels[0].len()
    }

    pub fn leaves(&self) -> &[Hash] {
        &self.levels[0]
    }

    pub fn root(&self) -> Hash {
        match self.levels.last().and_then(|l| l.first()) {
            Some(root) if self.leaf_count() > 0 => *root,
            _ => Sha256::digest([]).into(),
        }
    }

    /// Audit path of leaf `index`, bottom-up. `None` if out of range.
    pub fn proof(&self, index: usize) -> Option<Vec<Hash>> {
        if index >= self.leaf_count() {
            return None;
        }
        let mut path = Vec::new();
        let mut i = index;
        for level in &self.levels[..self.levels.len() - 1] {
            let sibling = i ^ 1;
            if sibling < level.len() {
                path.push(level[sibling]);
            }
            i >>= 1;
        }
        Some(path)
    }
}

/// Checks that `leaf` is at `index` in a tree of `tree_size` leaves with the
/// given `root` (RFC 9162 section 2.1.3.2).
pub fn verify_inclusion(
    leaf: &Hash,
    index: u64,
    tree_size: u64,
    path: &[Hash],
    root: &Hash,
) -> bool {
    if index >= tree_size || path.len() > MAX_PROOF_LEN {
        return false;
    }
    let mut f_n = index;
    let mut s_n = tree_size - 1;
    let mut r = *leaf;
    for p in path {
        if s_n == 0 {
            return false;
        }
        if f_n & 1 == 1 || f_n == s_n {
            r = node_hash(p, &r);
            if f_n & 1 == 0 {
                while f_n & 1 == 0 && f_n != 0 {
                    f_n >>= 1;
                    s_n >>= 1;
                }
            }
        } else {
            r = node_hash(&r, p);
        }
        f_n >>= 1;
        s_n >>= 1;
    }
    s_n == 0 && r == *root
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The RFC 6962 definition, recursively, as the reference.
    fn reference_root(leaves: &[Hash]) -> Hash {
        match leaves.len() {
            0 => Sha256::digest([]).into(),
            1 => leaves[0],
            n => {
                let k = split_point(n);
                node_hash(&reference_root(&leaves[..k]), &reference_root(&leaves[k..]))
            }
        }
    }

    /// The largest power of two strictly below `n`.
    fn split_point(n: usize) -> usize {
        let mut k = 1;
        while k * 2 < n {
            k *= 2;
        }
        k
    }

    fn leaves(n: usize) -> Vec<Hash> {
        (0..n)
            .map(|i| Sha256::digest((i as u64).to_be_bytes()).into())
            .collect()
    }

    #[test]
    fn split_point_is_largest_power_of_two_below_n() {
        for n in 2usize..200 {
            let k = split_point(n);
            assert!(k.is_power_of_two() && k < n && n <= 2 * k, "n={n} k={k}");
        }
    }

    #[test]
    fn root_matches_rfc6962_definition() {
        for n in 0..70 {
            let l = leaves(n);
            assert_eq!(
                MerkleTree::new(l.clone()).root(),
                reference_root(&l),
                "n={n}"
            );
        }
    }

    #[test]
    fn known_answer_three_leaves() {
        let l = leaves(3);
        let expected = node_hash(&node_hash(&l[0], &l[1]), &l[2]);
        assert_eq!(MerkleTree::new(l).root(), expected);
    }

    #[test]
    fn every_proof_verifies_and_only_for_its_leaf() {
        for n in 1..40u64 {
            let l = leaves(n as usize);
            let tree = MerkleTree::new(l.clone());
            let root = tree.root();
            for i in 0..n {
                let path = tree.proof(i as usize).unwrap();
                assert!(
                    verify_inclusion(&l[i as usize], i, n, &path, &root),
                    "n={n} i={i}"
                );
                // Another leaf's hash, another index, a
                // shortened or lengthened path: all rejected.
                let other = l[((i + 1) % n) as usize];
                if n > 1 {
                    assert!(!verify_inclusion(&other, i, n, &path, &root));
                    assert!(!verify_inclusion(
                        &l[i as usize],
                        (i + 1) % n,
                        n,
                        &path,
                        &root
                    ));
                }
                if !path.is_empty() {
                    assert!(!verify_inclusion(
                        &l[i as usize],
                        i,
                        n,
                        &path[..path.len() - 1],
                        &root
                    ));
                }
                let mut longer = path.clone();
                longer.push([7; 32]);
                assert!(!verify_inclusion(&l[i as usize], i, n, &longer, &root));
            }
            assert!(tree.proof(n as usize).is_none());
            assert!(!verify_inclusion(&l[0], n, n, &[], &root));
        }
    }

    #[test]
    fn leaf_cannot_pose_as_interior_node() {
        // The root of a 2-leaf tree is H(0x01||a||b); presenting it as a
        // 1-leaf tree root with an empty path must not work for a or b.
        let l = leaves(2);
        let root = MerkleTree::new(l.clone()).root();
        assert!(!verify_inclusion(&l[0], 0, 1, &[], &root));
    }
}
