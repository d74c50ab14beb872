//! Attestations, in either mode: what the prover commits to, what the
//! verifier signs, and the bundle the prover keeps to build presentations
//! later.
//!
//! The prover cuts each direction's application data into leaves
//! (`webproof_attestation::commit`, layout v1): fixed-size chunks, with
//! extra boundaries at the ranges it expects to reveal later (HTTP header
//! lines, JSON values), because a presentation reveals whole leaves. The
//! proof outputs each leaf's blinded hash, computed in zero knowledge over
//! the decrypted records, so the verifier signs a Merkle root over data it
//! may never have seen ([`issue`]), with the session's identity and the
//! facts it observed itself (lengths, port, close_notify, truncation,
//! order), taken from the verified output, never from the prover.
//!
//! The [`AttestationBundle`] holds the signed attestation, the verifier's
//! key, the transcript and the commitment seed. The seed is a secret: with
//! it anyone can open every leaf. The bundle is the prover's own file.

use crate::disclosure::{normalize, Range};
use crate::error::{malformed, DisclosureError, Result};
use crate::http::{disclosure_from_items, RevealItem};
use crate::output::VerifierOutput;
use rand_core::{CryptoRng, RngCore};
use serde::{Deserialize, Serialize};
use webproof_attestation::commit::{leaf_header, BLINDER_LEN, LEAF_BLINDER_OFFSET};
use webproof_attestation::{
    commit::attested_root, AttestationFields, CommitPlan, CommitmentSeed, Direction, LeafRange,
    Presentation, PresentationBuilder, Scheme, ServerIdentity, SignedAttestation, SigningKey,
    Transcript, TranscriptCommitment, VerifyingKey,
};
use webproof_tlsproof::Commitment;

/// Limit on commitment leaves per session (each costs the proof a SHA-256
/// over its plaintext, and the attestation a Merkle leaf).
pub const MAX_LEAVES: usize = 1 << 16;

/// A signed attestation and the key that signed it (the verifier's reply
/// in both modes' protocols, re-exported by `webproof_proxy::protocol`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttestationReply {
    /// Signature scheme of the verifier's key.
    pub scheme: webproof_attestation::Scheme,
    /// The verifier's public key (SEC1 compressed or Ed25519 bytes).
    #[serde(with = "webproof_tls::record::hex_bytes")]
    pub verifying_key: Vec<u8>,
    /// The signed attestation, binary encoding.
    #[serde(with = "webproof_tls::record::hex_bytes")]
    pub signed: Vec<u8>,
}

/// Sign the attestation for a session whose proof established
/// `leaf_hashes` over the leaves `leaves` of the application data that
/// `output` describes. The server name, time and suite are `output`'s,
/// the server identity is `certificates` (the chain the verifier checked,
/// end entity first): every field is the verifier's own, none the prover's.
pub fn issue(
    key: &SigningKey,
    certificates: &[Vec<u8>],
    leaves: &[LeafRange],
    leaf_hashes: &[[u8; 32]],
    output: &VerifierOutput,
) -> Result<AttestationReply> {
    let len = |n: usize| {
        u32::try_from(n)
            .map_err(|_| DisclosureError::Attestation("transcript too long to attest".into()))
    };
    let (sent_len, received_len) = (len(output.sent.len)?, len(output.received.len)?);
    let root =
        attested_root(leaves, leaf_hashes, sent_len, received_len).map_err(attestation_error)?;
    let identity = ServerIdentity::new(certificates.to_vec()).map_err(attestation_error)?;
    let fields = AttestationFields {
        server_name: output.server_name.clone(),
        time: output.time,
        cipher_suite: output.cipher_suite,
        sent_len,
        received_len,
        leaf_count: u32::try_from(leaves.len())
            .map_err(|_| DisclosureError::Attestation("too many leaves".into()))?,
        transcript_root: root,
        handshake_hash: identity.hash(),
        facts: output.facts(),
    };
    let signed = webproof_attestation::Attestation::sign(fields, key).map_err(attestation_error)?;
    Ok(AttestationReply {
        scheme: key.scheme(),
        verifying_key: key.verifying_key().to_bytes(),
        signed: signed.to_bytes(),
    })
}

fn attestation_error(e: webproof_attestation::Error) -> DisclosureError {
    DisclosureError::Attestation(e.to_string())
}

/// Version of the bundle's JSON form.
pub const BUNDLE_VERSION: u32 = 1;

/// How the prover cuts its transcript into leaves.
#[derive(Clone, Debug, Default)]
pub struct AttestOptions {
    /// Leaf size in bytes (default: the layout's default chunk).
    pub chunk_len: Option<usize>,
    /// Reveal items whose ranges get leaves of their own, so that a
    /// presentation can reveal exactly them later.
    pub boundaries: Vec<RevealItem>,
}

/// Prover side: commit to the application data with leaves per `opts`.
pub fn commit(
    opts: &AttestOptions,
    sent: &[u8],
    received: &[u8],
    rng: &mut (impl RngCore + CryptoRng),
) -> Result<(Transcript, TranscriptCommitment)> {
    let mut plan = CommitPlan::new();
    if let Some(n) = opts.chunk_len {
        plan = plan.with_chunk_len(n).map_err(attestation_error)?;
    }
    // The default selection's request ranges always get leaves of their
    // own, so that the request's credentials sit in leaves apart and a
    // presentation reveals none of them unasked.
    let hides: Vec<RevealItem> = opts
        .boundaries
        .iter()
        .filter(|i| matches!(i, RevealItem::SecretHeader(_)))
        .cloned()
        .collect();
    let mut wanted = disclosure_from_items(&hides, sent, received)?;
    wanted.received.clear();
    if opts.boundaries.len() > hides.len() {
        let d = disclosure_from_items(&opts.boundaries, sent, received)?;
        wanted.sent.extend(d.sent);
        wanted.received.extend(d.received);
    }
    for (dir, ranges) in [
        (Direction::Sent, &wanted.sent),
        (Direction::Received, &wanted.received),
    ] {
        for r in split_at_edges(ranges) {
            plan = plan.range(dir, r.start..r.end);
        }
    }
    let transcript = Transcript::new(sent.to_vec(), received.to_vec());
    let commitment = TranscriptCommitment::new(&transcript, &plan, CommitmentSeed::generate(rng))
        .map_err(attestation_error)?;
    Ok((transcript, commitment))
}

/// Overlapping ranges cut at every range's edges into disjoint pieces
/// (a plan's ranges must not overlap), each inside one of the ranges.
fn split_at_edges(ranges: &[Range]) -> Vec<Range> {
    let mut edges: Vec<usize> = ranges.iter().flat_map(|r| [r.start, r.end]).collect();
    edges.sort_unstable();
    edges.dedup();
    edges
        .windows(2)
        .map(|w| Range::new(w[0], w[1]))
        .filter(|p| ranges.iter().any(|r| r.start <= p.start && p.end <= r.end))
        .collect()
}

/// The blinders of every leaf, in layout order (for the ZK witness).
pub fn blinders(commitment: &TranscriptCommitment) -> Vec<[u8; 16]> {
    (0..commitment.leaves().len())
        .map(|i| commitment.blinder(i).expect("index within the layout"))
        .collect()
}

/// A range a presentation reveals: whole leaves, so possibly wider than asked.
pub type RevealedRange = (Direction, core::ops::Range<usize>);

/// What the prover keeps after an attested session (secret: holds the seed).
#[derive(Clone)]
pub struct AttestationBundle {
    /// The verifier's signed attestation.
    pub attestation: SignedAttestation,
    /// The key that signed it (whether to trust it is the reader's choice).
    pub verifying_key: VerifyingKey,
    /// The application data both ways.
    pub transcript: Transcript,
    /// The commitment: layout and seed.
    pub commitment: TranscriptCommitment,
    /// The server's certificate chain, end entity first.
    pub certificates: Vec<Vec<u8>>,
}

impl core::fmt::Debug for AttestationBundle {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("AttestationBundle")
            .field("attestation", &self.attestation.attestation())
            .finish_non_exhaustive()
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct BundleJson {
    version: u32,
    attestation: String,
    scheme: Scheme,
    verifying_key: String,
    seed: String,
    leaves: Vec<LeafRange>,
    sent: String,
    received: String,
    certificates: Vec<String>,
}

impl AttestationBundle {
    /// Prover side: check the verifier's reply against our own commitment
    /// and the session we saw, and keep it.
    pub fn accept(
        reply: &AttestationReply,
        transcript: Transcript,
        commitment: TranscriptCommitment,
        certificates: Vec<Vec<u8>>,
    ) -> Result<Self> {
        let bad = |what: String| {
            DisclosureError::Attestation(format!("the verifier's attestation {what}"))
        };
        let key = VerifyingKey::from_bytes(reply.scheme, &reply.verifying_key)
            .map_err(|e| bad(format!("has an unusable key: {e}")))?;
        let attestation = SignedAttestation::from_bytes(&reply.signed)
            .map_err(|e| bad(format!("does not decode: {e}")))?;
        attestation
            .verify(core::slice::from_ref(&key))
            .map_err(|e| bad(format!("is not signed by its key: {e}")))?;
        PresentationBuilder::new(&attestation, &transcript, &commitment)
            .map_err(|e| bad(format!("is not over our transcript: {e}")))?;
        let identity = ServerIdentity::new(certificates.clone())
            .map_err(|e| bad(format!("server identity: {e}")))?;
        if identity.hash() != attestation.attestation().handshake_hash() {
            return Err(bad("names another server identity".into()));
        }
        Ok(AttestationBundle {
            attestation,
            verifying_key: key,
            transcript,
            commitment,
            certificates,
        })
    }

    /// The bundle as JSON (contains the secret seed).
    pub fn to_json(&self) -> String {
        let j = BundleJson {
            version: BUNDLE_VERSION,
            attestation: hex::encode(self.attestation.to_bytes()),
            scheme: self.verifying_key.scheme(),
            verifying_key: hex::encode(self.verifying_key.to_bytes()),
            seed: hex::encode(self.commitment.seed().to_bytes()),
            leaves: self.commitment.leaves().to_vec(),
            sent: hex::encode(self.transcript.sent()),
            received: hex::encode(self.transcript.received()),
            certificates: self.certificates.iter().map(hex::encode).collect(),
        };
        serde_json::to_string_pretty(&j).expect("bundle serializes")
    }

    /// Read a bundle written by [`Self::to_json`]; checks it is consistent.
    pub fn from_json(s: &str) -> Result<Self> {
        let bad = |what: String| malformed("attestation bundle", what);
        let j: BundleJson = serde_json::from_str(s).map_err(|e| bad(e.to_string()))?;
        if j.version != BUNDLE_VERSION {
            return Err(bad(format!(
                "version {} (this build reads {BUNDLE_VERSION})",
                j.version
            )));
        }
        let hex = |what: &str, v: &str| hex::decode(v).map_err(|e| bad(format!("{what}: {e}")));
        let seed: [u8; 32] = hex("seed", &j.seed)?
            .try_into()
            .map_err(|_| bad("the seed is not 32 bytes".into()))?;
        let transcript = Transcript::new(hex("sent", &j.sent)?, hex("received", &j.received)?);
        let commitment = TranscriptCommitment::with_layout(
            &transcript,
            j.leaves,
            CommitmentSeed::from_bytes(seed),
        )
        .map_err(|e| bad(e.to_string()))?;
        let certificates = j
            .certificates
            .iter()
            .map(|c| hex("certificate", c))
            .collect::<Result<Vec<_>>>()?;
        let reply = AttestationReply {
            scheme: j.scheme,
            verifying_key: hex("verifying key", &j.verifying_key)?,
            signed: hex("attestation", &j.attestation)?,
        };
        Self::accept(&reply, transcript, commitment, certificates).map_err(|e| bad(e.to_string()))
    }

    /// A presentation revealing the leaves that cover `items` (`none`
    /// reveals nothing), with what was asked and what the leaves reveal:
    /// whole leaves, so possibly wider than asked where no leaf boundary
    /// was placed at the item's edges (`prove --commit-at`).
    pub fn present(&self, items: &[RevealItem], include_certificates: bool) -> Result<Presented> {
        let bad = |e: webproof_attestation::Error| {
            DisclosureError::Attestation(format!("presentation: {e}"))
        };
        let d = disclosure_from_items(items, self.transcript.sent(), self.transcript.received())?;
        let mut b = PresentationBuilder::new(&self.attestation, &self.transcript, &self.commitment)
            .map_err(bad)?;
        let mut revealed = Vec::new();
        let mut asked = Vec::new();
        for (dir, ranges) in [
            (Direction::Sent, &d.sent),
            (Direction::Received, &d.received),
        ] {
            let mut got = Vec::new();
            for r in ranges {
                let leaves = b.reveal_covering(dir, r.start..r.end).map_err(bad)?;
                got.push(Range::new(leaves.start, leaves.end));
            }
            // Neighbouring items often share a leaf: say each range once.
            revealed.extend(normalize(got).into_iter().map(|r| (dir, r.start..r.end)));
            asked.extend(ranges.iter().map(|r| (dir, r.start..r.end)));
        }
        if include_certificates {
            let identity = ServerIdentity::new(self.certificates.clone()).map_err(bad)?;
            b.server_identity(identity).map_err(bad)?;
        }
        Ok(Presented {
            presentation: b.build(),
            asked,
            revealed,
        })
    }
}

/// A presentation with what it reveals, beside what was asked.
#[derive(Debug)]
pub struct Presented {
    /// The presentation.
    pub presentation: Presentation,
    /// The ranges the reveal items select (sorted, disjoint per direction).
    pub asked: Vec<RevealedRange>,
    /// The ranges the presentation reveals: whole leaves covering `asked`
    /// (sorted, disjoint per direction).
    pub revealed: Vec<RevealedRange>,
}

impl Presented {
    /// Bytes the reveal items select.
    pub fn asked_len(&self) -> usize {
        self.asked.iter().map(|(_, r)| r.len()).sum()
    }

    /// Bytes the presentation reveals: more than [`Self::asked_len`] when
    /// leaves stick out of the items.
    pub fn revealed_len(&self) -> usize {
        self.revealed.iter().map(|(_, r)| r.len()).sum()
    }
}

/// One direction's leaves as ZK commitments: the public part of each leaf
/// header, the blinder, then the leaf's application data mapped onto the
/// records (`record_data[k]` = application-data bytes of the direction's
/// k-th record, 0 for other records). Linear in leaves plus records.
pub fn leaf_commitments(
    leaves: &[LeafRange],
    direction: Direction,
    record_data: &[usize],
) -> Result<Vec<Commitment>> {
    let total: usize = record_data.iter().sum();
    let mut out = Vec::new();
    let mut expect = 0usize;
    // The first record that may hold the next leaf, and where it starts.
    let (mut first, mut first_offset) = (0usize, 0usize);
    for leaf in leaves.iter().filter(|l| l.direction == direction) {
        let (start, end) = (leaf.start as usize, leaf.end as usize);
        if start != expect || end <= start || end > total {
            return Err(malformed(
                "proof plan",
                "committed leaves must partition each direction's application data in order",
            ));
        }
        expect = end;
        while first < record_data.len() && first_offset + record_data[first] <= start {
            first_offset += record_data[first];
            first += 1;
        }
        let header = leaf_header(direction, leaf.start, leaf.end, &[0; BLINDER_LEN]);
        let mut spans = Vec::new();
        let mut offset = first_offset;
        for (k, &len) in record_data.iter().enumerate().skip(first) {
            if offset >= end {
                break;
            }
            let lo = start.max(offset);
            let hi = end.min(offset + len);
            if lo < hi {
                spans.push((k, lo - offset..hi - offset));
            }
            offset += len;
        }
        out.push(Commitment {
            prefix: header[..LEAF_BLINDER_OFFSET].to_vec(),
            blinder_len: BLINDER_LEN,
            spans,
        });
    }
    if expect != total && !out.is_empty() {
        return Err(malformed(
            "proof plan",
            "committed leaves must cover all application data",
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use Direction as D;

    fn leaf(direction: D, start: u32, end: u32) -> LeafRange {
        LeafRange {
            direction,
            start,
            end,
        }
    }

    /// Leaves map onto the records' application data (a non-data record in
    /// between is skipped), with the public header of their range.
    #[test]
    fn leaves_map_onto_records() {
        let data = [5, 0, 7];
        let c = leaf_commitments(
            &[leaf(D::Received, 0, 4), leaf(D::Received, 4, 12)],
            D::Received,
            &data,
        )
        .unwrap();
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].spans, vec![(0, 0..4)]);
        assert_eq!(c[1].spans, vec![(0, 4..5), (2, 0..7)]);
        assert_eq!(c[1].blinder_len, BLINDER_LEN);
        let header = leaf_header(D::Received, 4, 12, &[0; BLINDER_LEN]);
        assert_eq!(c[1].prefix, header[..LEAF_BLINDER_OFFSET].to_vec());
        // Leaves of the other direction are not this direction's.
        assert!(
            leaf_commitments(&[leaf(D::Sent, 0, 12)], D::Received, &data)
                .unwrap()
                .is_empty()
        );
    }

    /// A prover may not commit to a layout that skips, repeats or invents
    /// bytes: every leaf set must partition the direction in order.
    #[test]
    fn layouts_that_do_not_partition_are_refused() {
        let data = [5, 7];
        for bad in [
            vec![leaf(D::Sent, 1, 12)],                      // skips the first byte
            vec![leaf(D::Sent, 0, 6), leaf(D::Sent, 5, 12)], // overlap
            vec![leaf(D::Sent, 6, 12), leaf(D::Sent, 0, 6)], // out of order
            vec![leaf(D::Sent, 0, 13)],                      // past the end
            vec![leaf(D::Sent, 0, 6)],                       // leaves bytes out
            vec![leaf(D::Sent, 0, 0), leaf(D::Sent, 0, 12)], // empty leaf
        ] {
            assert!(leaf_commitments(&bad, D::Sent, &data).is_err(), "{bad:?}");
        }
    }
}
