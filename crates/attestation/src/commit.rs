//! Transcript commitments: hiding, binding hash commitments to ranges of the
//! plaintext, gathered in a Merkle tree whose root the verifier signs.
//!
//! # Leaf-hash preimage (layout version 1)
//!
//! Each committed range of one direction's plaintext is one leaf:
//! `leaf = SHA-256(preimage)` with
//!
//! | offset | length | field |
//! |---|---|---|
//! | 0  | 1  | `0x00`, leaf marker (interior Merkle nodes hash `0x01 ‖ left ‖ right`) |
//! | 1  | 4  | ASCII `WPTC` (webproof transcript commitment), domain tag |
//! | 5  | 1  | `0x01`, layout version |
//! | 6  | 1  | direction: `0x00` sent (client to server), `0x01` received |
//! | 7  | 1  | `0x00`, reserved |
//! | 8  | 4  | `start`: offset of the range in that direction's plaintext, u32 big-endian |
//! | 12 | 4  | `end`: exclusive end offset, u32 big-endian; `1 <= end - start <=` [`MAX_LEAF_LEN`] |
//! | 16 | 16 | blinder (secret) |
//! | 32 | L  | plaintext bytes `start..end`, `L = end - start` |
//!
//! followed by standard SHA-256 padding. The first 16 bytes are public and
//! fixed by the range, the blinder sits at a fixed offset, and the padding
//! depends only on `L`, so a circuit for a leaf of a given length is fixed:
//! it costs `ceil((L + 41) / 64)` SHA-256 compressions (one for `L <= 23`,
//! [`DEFAULT_CHUNK_LEN`] = 215 fills exactly 4, [`MAX_LEAF_LEN`] = 471 exactly 8).
//!
//! # Blinders
//!
//! `blinder = HMAC-SHA256(seed, "webproof/blinder/v1" ‖ direction ‖ start ‖ end)[0..16]`
//! (direction one byte, offsets u32 big-endian) with a 32-byte per-session
//! [`CommitmentSeed`], so the prover stores only the seed. 128 secret bits per
//! leaf make a hidden leaf's plaintext, even a single byte, infeasible to
//! brute-force from its hash.
//!
//! # Layout
//!
//! The leaves of a session partition each direction: every byte is in exactly
//! one leaf. Leaves are ordered sent first, then received, each by offset.
//! The prover picks the boundaries when the attestation is made (fixed-size
//! chunks by default, or given ranges such as HTTP header lines or JSON
//! values), since a presentation can only reveal whole leaves. The leaf count
//! is public; which ranges a hidden leaf covers is not revealed by a
//! presentation.

use std::fmt;
use std::ops::Range;

use hmac::{Hmac, Mac};
use rand_core::{CryptoRng, RngCore};
use sha2::{Digest, Sha256};
use zeroize::{Zeroize, ZeroizeOnDrop};

use crate::error::{Error, Result};
use crate::merkle::{Hash, MerkleTree};
use crate::transcript::{Direction, Transcript};

/// Leaf preimage header length; the plaintext starts here.
pub const LEAF_HEADER_LEN: usize = 32;
/// Offset of the blinder in the leaf preimage.
pub const LEAF_BLINDER_OFFSET: usize = 16;
/// Blinder length in bytes.
pub const BLINDER_LEN: usize = 16;
/// The first five preimage bytes: leaf marker and domain tag.
pub const LEAF_TAG: [u8; 5] = [0x00, b'W', b'P', b'T', b'C'];
/// Version of the leaf layout above.
pub const LEAF_LAYOUT_VERSION: u8 = 1;
/// Default committed chunk: exactly 4 SHA-256 compressions per leaf.
pub const DEFAULT_CHUNK_LEN: usize = 215;
/// Longest leaf: exactly 8 SHA-256 compressions. Longer ranges are split.
pub const MAX_LEAF_LEN: usize = 471;
/// Offsets are u32 in the leaf layout.
pub const MAX_TRANSCRIPT_LEN: usize = u32::MAX as usize;

const BLINDER_LABEL: &[u8] = b"webproof/blinder/v1";

/// A leaf blinder.
pub type Blinder = [u8; BLINDER_LEN];

/// Number of SHA-256 compressions for a leaf of `len` plaintext bytes.
pub const fn leaf_compressions(len: usize) -> usize {
    (LEAF_HEADER_LEN + len + 9).div_ceil(64)
}

/// The 32-byte header of a leaf preimage (see the module docs).
pub fn leaf_header(
    direction: Direction,
    start: u32,
    end: u32,
    blinder: &Blinder,
) -> [u8; LEAF_HEADER_LEN] {
    let mut h = [0u8; LEAF_HEADER_LEN];
    h[0..5].copy_from_slice(&LEAF_TAG);
    h[5] = LEAF_LAYOUT_VERSION;
    h[6] = direction.to_byte();
    h[7] = 0;
    h[8..12].copy_from_slice(&start.to_be_bytes());
    h[12..16].copy_from_slice(&end.to_be_bytes());
    h[16..32].copy_from_slice(blinder);
    h
}

/// The leaf hash of `plaintext` at `start` in `direction`. The caller
/// guarantees `start + plaintext.len()` fits in u32.
pub fn leaf_hash(direction: Direction, start: u32, plaintext: &[u8], blinder: &Blinder) -> Hash {
    let end = start as u64 + plaintext.len() as u64;
    debug_assert!(end <= u32::MAX as u64);
    let mut h = Sha256::new();
    h.update(leaf_header(direction, start, end as u32, blinder));
    h.update(plaintext);
    h.finalize().into()
}

/// The per-session secret from which every blinder is derived. Zeroized on
/// drop; `Debug` never shows it.
///
/// Never reuse a seed for another session: a blinder revealed in one
/// session's presentation would unblind the leaf with the same range in the
/// other, making a short hidden range guessable.
#[derive(Clone, Zeroize, ZeroizeOnDrop, PartialEq, Eq)]
pub struct CommitmentSeed([u8; 32]);

impl CommitmentSeed {
    pub fn generate(rng: &mut (impl RngCore + CryptoRng)) -> Self {
        let mut s = [0u8; 32];
        rng.fill_bytes(&mut s);
        Self(s)
    }

    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    /// The secret bytes, for the prover's own storage.
    pub fn to_bytes(&self) -> [u8; 32] {
        self.0
    }

    /// The blinder of the leaf covering `start..end` of `direction`.
    pub fn blinder(&self, direction: Direction, start: u32, end: u32) -> Blinder {
        let mut mac =
            <Hmac<Sha256> as Mac>::new_from_slice(&self.0).expect("HMAC takes any key length");
        mac.update(BLINDER_LABEL);
        mac.update(&[direction.to_byte()]);
        mac.update(&start.to_be_bytes());
        mac.update(&end.to_be_bytes());
        let out = mac.finalize().into_bytes();
        let mut b = [0u8; BLINDER_LEN];
        b.copy_from_slice(&out[..BLINDER_LEN]);
        b
    }
}

impl fmt::Debug for CommitmentSeed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CommitmentSeed(<redacted>)")
    }
}

/// How the prover cuts the transcript into leaves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommitPlan {
    chunk_len: usize,
    ranges: [Vec<Range<usize>>; 2],
}

impl Default for CommitPlan {
    fn default() -> Self {
        Self {
            chunk_len: DEFAULT_CHUNK_LEN,
            ranges: [Vec::new(), Vec::new()],
        }
    }
}

impl CommitPlan {
    /// Fixed-size chunks of [`DEFAULT_CHUNK_LEN`] bytes.
    pub fn new() -> Self {
        Self::default()
    }

    /// Fixed-size chunks of `chunk_len` bytes (1..=[`MAX_LEAF_LEN`]) for
    /// every byte not in a given range.
    pub fn with_chunk_len(mut self, chunk_len: usize) -> Result<Self> {
        if chunk_len == 0 || chunk_len > MAX_LEAF_LEN {
            return Err(Error::InvalidChunkLen(chunk_len));
        }
        self.chunk_len = chunk_len;
        Ok(self)
    }

    /// Commit `range` of `direction` as its own leaf (split into pieces of
    /// [`MAX_LEAF_LEN`] if longer), so it can be revealed on its own. Given
    /// ranges must not overlap; order does not matter.
    pub fn range(mut self, direction: Direction, range: Range<usize>) -> Self {
        self.ranges[direction as usize].push(range);
        self
    }

    /// The leaves this plan gives for a transcript of these lengths.
    pub fn layout(&self, sent_len: usize, received_len: usize) -> Result<Vec<LeafRange>> {
        let mut out = Vec::new();
        for (direction, len) in [
            (Direction::Sent, sent_len),
            (Direction::Received, received_len),
        ] {
            // Lengths are u32 on the wire (on wasm32 usize is u32 already).
            if u32::try_from(len).is_err() {
                return Err(Error::TranscriptTooLong {
                    direction,
                    len,
                    max: MAX_TRANSCRIPT_LEN,
                });
            }
            let mut given = self.ranges[direction as usize].clone();
            given.sort_by_key(|r| (r.start, r.end));
            let mut pos = 0usize;
            for r in given {
                if r.start >= r.end || r.end > len {
                    return Err(Error::InvalidRange {
                        direction,
                        start: r.start,
                        end: r.end,
                        len,
                    });
                }
                if r.start < pos {
                    return Err(Error::UnsortedRanges {
                        direction,
                        start: r.start,
                    });
                }
                push_pieces(&mut out, direction, pos..r.start, self.chunk_len);
                push_pieces(&mut out, direction, r.clone(), MAX_LEAF_LEN);
                pos = r.end;
            }
            push_pieces(&mut out, direction, pos..len, self.chunk_len);
        }
        if out.len() > u32::MAX as usize {
            return Err(Error::TooMany("leaves"));
        }
        Ok(out)
    }
}

fn push_pieces(out: &mut Vec<LeafRange>, direction: Direction, range: Range<usize>, piece: usize) {
    let mut s = range.start;
    while s < range.end {
        let e = (s + piece).min(range.end);
        out.push(LeafRange {
            direction,
            start: s as u32,
            end: e as u32,
        });
        s = e;
    }
}

/// The public part of a leaf: which bytes it covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct LeafRange {
    pub direction: Direction,
    pub start: u32,
    pub end: u32,
}

impl LeafRange {
    /// Bytes covered; 0 for a malformed range with `end < start` (a
    /// prover's layout is checked by [`check_layout`]).
    pub fn len(&self) -> usize {
        self.end.saturating_sub(self.start) as usize
    }

    pub fn is_empty(&self) -> bool {
        self.end == self.start
    }

    pub fn range(&self) -> Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// Checks that `leaves` are a valid layout for a transcript of these
/// lengths: sent leaves then received leaves, each direction partitioned in
/// order without gaps or overlaps, every leaf 1..=[`MAX_LEAF_LEN`] bytes.
/// The verifier runs this on the layout the prover announces.
pub fn check_layout(leaves: &[LeafRange], sent_len: u32, received_len: u32) -> Result<()> {
    let mut iter = leaves.iter().peekable();
    for (direction, len) in [
        (Direction::Sent, sent_len),
        (Direction::Received, received_len),
    ] {
        let mut pos = 0u32;
        while let Some(l) = iter.next_if(|l| l.direction == direction) {
            let bad = || Error::InvalidRange {
                direction,
                start: l.start as usize,
                end: l.end as usize,
                len: len as usize,
            };
            if l.start != pos {
                return Err(Error::UnsortedRanges {
                    direction,
                    start: l.start as usize,
                });
            }
            if l.end <= l.start || l.end > len || l.len() > MAX_LEAF_LEN {
                return Err(bad());
            }
            pos = l.end;
        }
        if pos != len {
            return Err(Error::InvalidRange {
                direction,
                start: pos as usize,
                end: len as usize,
                len: len as usize,
            });
        }
    }
    if let Some(l) = iter.next() {
        return Err(Error::UnsortedRanges {
            direction: l.direction,
            start: l.start as usize,
        });
    }
    Ok(())
}

/// The verifier's side: checks the layout the prover announced and returns
/// the Merkle root over `leaf_hashes` (one per leaf, in layout order), i.e.
/// what goes into [`crate::AttestationFields::transcript_root`] once the ZK
/// proof has shown each hash is over the session's plaintext.
pub fn attested_root(
    leaves: &[LeafRange],
    leaf_hashes: &[Hash],
    sent_len: u32,
    received_len: u32,
) -> Result<Hash> {
    check_layout(leaves, sent_len, received_len)?;
    if leaves.len() != leaf_hashes.len() {
        return Err(Error::LeafCountMismatch {
            leaves: leaves.len(),
            hashes: leaf_hashes.len(),
        });
    }
    Ok(MerkleTree::new(leaf_hashes.to_vec()).root())
}

/// The prover's commitment to a transcript: the layout, the leaf hashes, the
/// tree and the seed. Holds a secret; `Debug` shows only public data.
#[derive(Clone)]
pub struct TranscriptCommitment {
    seed: CommitmentSeed,
    leaves: Vec<LeafRange>,
    tree: MerkleTree,
    sent_len: u32,
    received_len: u32,
}

impl TranscriptCommitment {
    /// Commits to `transcript` with the leaves `plan` gives.
    pub fn new(transcript: &Transcript, plan: &CommitPlan, seed: CommitmentSeed) -> Result<Self> {
        let leaves = plan.layout(transcript.sent().len(), transcript.received().len())?;
        Self::with_layout(transcript, leaves, seed)
    }

    /// Commits with an explicit layout (checked with [`check_layout`]).
    pub fn with_layout(
        transcript: &Transcript,
        leaves: Vec<LeafRange>,
        seed: CommitmentSeed,
    ) -> Result<Self> {
        let sent_len = transcript_len(transcript, Direction::Sent)?;
        let received_len = transcript_len(transcript, Direction::Received)?;
        check_layout(&leaves, sent_len, received_len)?;
        let hashes = leaves
            .iter()
            .map(|l| {
                let b = seed.blinder(l.direction, l.start, l.end);
                leaf_hash(
                    l.direction,
                    l.start,
                    &transcript.get(l.direction)[l.range()],
                    &b,
                )
            })
            .collect();
        Ok(Self {
            seed,
            leaves,
            tree: MerkleTree::new(hashes),
            sent_len,
            received_len,
        })
    }

    /// The Merkle root the verifier signs.
    pub fn root(&self) -> Hash {
        self.tree.root()
    }

    pub fn leaf_count(&self) -> u32 {
        self.leaves.len() as u32
    }

    pub fn leaves(&self) -> &[LeafRange] {
        &self.leaves
    }

    pub fn leaf_hashes(&self) -> &[Hash] {
        self.tree.leaves()
    }

    pub fn sent_len(&self) -> u32 {
        self.sent_len
    }

    pub fn received_len(&self) -> u32 {
        self.received_len
    }

    pub fn seed(&self) -> &CommitmentSeed {
        &self.seed
    }

    /// Blinder of leaf `index` (secret: for the prover's ZK witness and
    /// presentations only).
    pub fn blinder(&self, index: usize) -> Option<Blinder> {
        self.leaves
            .get(index)
            .map(|l| self.seed.blinder(l.direction, l.start, l.end))
    }

    pub(crate) fn proof(&self, index: usize) -> Option<Vec<Hash>> {
        self.tree.proof(index)
    }

    /// True if `transcript` is the one this commitment was made to.
    pub fn matches(&self, transcript: &Transcript) -> bool {
        transcript.sent().len() == self.sent_len as usize
            && transcript.received().len() == self.received_len as usize
            && self.leaves.iter().zip(self.tree.leaves()).all(|(l, h)| {
                let b = self.seed.blinder(l.direction, l.start, l.end);
                leaf_hash(
                    l.direction,
                    l.start,
                    &transcript.get(l.direction)[l.range()],
                    &b,
                ) == *h
            })
    }
}

impl fmt::Debug for TranscriptCommitment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TranscriptCommitment")
            .field("root", &hex::encode(self.root()))
            .field("leaf_count", &self.leaves.len())
            .field("sent_len", &self.sent_len)
            .field("received_len", &self.received_len)
            .finish_non_exhaustive()
    }
}

fn transcript_len(t: &Transcript, direction: Direction) -> Result<u32> {
    let len = t.get(direction).len();
    u32::try_from(len).map_err(|_| Error::TranscriptTooLong {
        direction,
        len,
        max: MAX_TRANSCRIPT_LEN,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leaf_preimage_layout_is_as_documented() {
        let b: Blinder = core::array::from_fn(|i| 0xa0 + i as u8);
        let h = leaf_header(Direction::Received, 0x0102_0304, 0x0102_0314, &b);
        let mut expected = vec![0x00, b'W', b'P', b'T', b'C', 0x01, 0x01, 0x00];
        expected.extend_from_slice(&[1, 2, 3, 4, 1, 2, 3, 0x14]);
        expected.extend_from_slice(&b);
        assert_eq!(h.to_vec(), expected);
        let pt = b"0123456789abcdef";
        let mut pre = expected.clone();
        pre.extend_from_slice(pt);
        assert_eq!(
            leaf_hash(Direction::Received, 0x0102_0304, pt, &b),
            <[u8; 32]>::from(Sha256::digest(&pre))
        );
    }

    #[test]
    fn leaf_hash_known_answer() {
        // Computed independently: printf '\x00WPTC\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x05'
        // followed by 16 zero bytes and "hello", piped to sha256sum.
        let h = leaf_hash(Direction::Sent, 0, b"hello", &[0; 16]);
        assert_eq!(
            hex::encode(h),
            include_str!("../tests/data/leaf_kat.txt").trim()
        );
    }

    #[test]
    fn compression_counts() {
        assert_eq!(leaf_compressions(0), 1);
        assert_eq!(leaf_compressions(23), 1);
        assert_eq!(leaf_compressions(24), 2);
        assert_eq!(leaf_compressions(DEFAULT_CHUNK_LEN), 4);
        assert_eq!(leaf_compressions(DEFAULT_CHUNK_LEN + 1), 5);
        assert_eq!(leaf_compressions(MAX_LEAF_LEN), 8);
    }

    #[test]
    fn blinders_differ_per_leaf_and_seed() {
        let s1 = CommitmentSeed::from_bytes([1; 32]);
        let s2 = CommitmentSeed::from_bytes([2; 32]);
        let a = s1.blinder(Direction::Sent, 0, 10);
        assert_ne!(a, s1.blinder(Direction::Received, 0, 10));
        assert_ne!(a, s1.blinder(Direction::Sent, 0, 11));
        assert_ne!(a, s1.blinder(Direction::Sent, 1, 10));
        assert_ne!(a, s2.blinder(Direction::Sent, 0, 10));
        assert_eq!(a, s1.blinder(Direction::Sent, 0, 10));
        assert!(!format!("{s1:?}").contains("01"));
    }

    #[test]
    fn plan_partitions_with_given_ranges() {
        let plan = CommitPlan::new()
            .with_chunk_len(10)
            .unwrap()
            .range(Direction::Received, 25..27)
            .range(Direction::Received, 3..5);
        let layout = plan.layout(12, 1000).unwrap();
        check_layout(&layout, 12, 1000).unwrap();
        let sent: Vec<_> = layout
            .iter()
            .filter(|l| l.direction == Direction::Sent)
            .map(|l| l.range())
            .collect();
        assert_eq!(sent, vec![0..10, 10..12]);
        let recv: Vec<_> = layout
            .iter()
            .filter(|l| l.direction == Direction::Received)
            .map(|l| l.range())
            .collect();
        assert_eq!(recv[..6], [0..3, 3..5, 5..15, 15..25, 25..27, 27..37]);
        assert!(layout
            .iter()
            .all(|l| l.len() <= 10 || l.range() == (25..27)));
        // A long given range is split at MAX_LEAF_LEN.
        let layout = CommitPlan::new()
            .range(Direction::Sent, 0..1000)
            .layout(1000, 0)
            .unwrap();
        assert_eq!(layout.len(), 3);
        assert_eq!(layout[0].len(), MAX_LEAF_LEN);
    }

    #[test]
    fn plan_rejects_bad_ranges() {
        let p = CommitPlan::new();
        assert!(p
            .clone()
            .range(Direction::Sent, 5..5)
            .layout(10, 0)
            .is_err());
        assert!(p
            .clone()
            .range(Direction::Sent, 5..11)
            .layout(10, 0)
            .is_err());
        assert!(p
            .clone()
            .range(Direction::Sent, 0..5)
            .range(Direction::Sent, 4..6)
            .layout(10, 0)
            .is_err());
        assert!(CommitPlan::new().with_chunk_len(0).is_err());
        assert!(CommitPlan::new().with_chunk_len(MAX_LEAF_LEN + 1).is_err());
        // Empty transcripts have no leaves.
        assert!(p.layout(0, 0).unwrap().is_empty());
    }

    #[test]
    fn check_layout_rejects_gaps_overlaps_and_order() {
        let l = |d, s, e| LeafRange {
            direction: d,
            start: s,
            end: e,
        };
        use Direction::*;
        assert!(check_layout(&[l(Sent, 0, 5), l(Sent, 5, 10), l(Received, 0, 3)], 10, 3).is_ok());
        assert!(check_layout(&[l(Sent, 0, 5), l(Sent, 6, 10), l(Received, 0, 3)], 10, 3).is_err());
        assert!(check_layout(&[l(Sent, 0, 5), l(Sent, 4, 10), l(Received, 0, 3)], 10, 3).is_err());
        assert!(check_layout(&[l(Received, 0, 3), l(Sent, 0, 10)], 10, 3).is_err());
        assert!(check_layout(&[l(Sent, 0, 10)], 10, 3).is_err());
        assert!(check_layout(
            &[l(Sent, 0, 10), l(Received, 0, 3), l(Received, 3, 3)],
            10,
            3
        )
        .is_err());
        assert!(check_layout(&[l(Sent, 0, 472)], 472, 0).is_err());
    }

    #[test]
    fn verifier_recomputes_the_provers_root() {
        let t = Transcript::new(vec![1u8; 300], vec![2u8; 40]);
        let c =
            TranscriptCommitment::new(&t, &CommitPlan::new(), CommitmentSeed::from_bytes([4; 32]))
                .unwrap();
        let root = attested_root(c.leaves(), c.leaf_hashes(), 300, 40).unwrap();
        assert_eq!(root, c.root());
        assert!(attested_root(c.leaves(), &c.leaf_hashes()[1..], 300, 40).is_err());
        assert!(attested_root(c.leaves(), c.leaf_hashes(), 301, 40).is_err());
    }

    #[test]
    fn commitment_binds_transcript() {
        let t = Transcript::new(b"GET / HTTP/1.1\r\n\r\n".to_vec(), vec![7u8; 500]);
        let c =
            TranscriptCommitment::new(&t, &CommitPlan::new(), CommitmentSeed::from_bytes([3; 32]))
                .unwrap();
        assert_eq!(c.leaf_count(), 1 + 3);
        assert!(c.matches(&t));
        let mut r = t.received().to_vec();
        r[499] ^= 1;
        assert!(!c.matches(&Transcript::new(t.sent().to_vec(), r)));
        let dbg = format!("{c:?}");
        assert!(dbg.contains("root") && !dbg.contains("seed"));
    }
}
