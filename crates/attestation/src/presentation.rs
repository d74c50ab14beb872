//! Presentations: an attestation plus the openings of the leaves the prover
//! chooses to reveal, checked offline by anyone who trusts the verifier key.
//!
//! # Binary encoding (format version 1)
//!
//! | field | encoding |
//! |---|---|
//! | magic | ASCII `WPPR` |
//! | version | u16, `1` |
//! | attestation | signed attestation ([`crate::attestation`]) |
//! | identity flag | u8, 0 or 1 |
//! | server identity | if the flag is 1 ([`ServerIdentity`]) |
//! | opening count | u32 |
//! | openings | in strictly increasing leaf index order, each: |
//! | - leaf index | u32 |
//! | - direction | u8, 0 sent / 1 received |
//! | - start | u32 |
//! | - length `L` | u32, 1..=[`MAX_LEAF_LEN`], `start + L` within u32 |
//! | - plaintext | `L` bytes |
//! | - blinder | 16 bytes |
//! | - proof length `p` | u8, at most 32 |
//! | - audit path | `p` × 32 bytes, bottom-up |
//!
//! Nothing may follow. Only revealed leaves' blinders and plaintext appear;
//! hidden leaves show up only as (blinded) hashes inside audit paths.

use std::collections::BTreeSet;
use std::ops::Range;

use crate::attestation::{
    Attestation, CipherSuite, ServerIdentity, SessionFacts, SignedAttestation, TlsVersion,
};
use crate::commit::{leaf_hash, Blinder, TranscriptCommitment, BLINDER_LEN, MAX_LEAF_LEN};
use crate::encoding::{hex_array, hex_bytes, Reader, Writer};
use crate::error::{DecodeError, Error, Result, VerifyError};
use crate::keys::{KeyId, VerifyingKey};
use crate::merkle::{verify_inclusion, Hash, MAX_PROOF_LEN};
use crate::transcript::{Direction, Transcript};

pub const PRESENTATION_MAGIC: [u8; 4] = *b"WPPR";
pub const PRESENTATION_VERSION: u16 = 1;
/// Largest presentation the decoders accept (binary or JSON).
pub const MAX_PRESENTATION_LEN: usize = 64 << 20;
/// Smallest encoded opening (one plaintext byte, empty path).
const MIN_OPENING_LEN: usize = 4 + 1 + 4 + 4 + 1 + BLINDER_LEN + 1;

/// One revealed leaf.
#[derive(Clone, PartialEq, Eq, Debug, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Opening {
    leaf_index: u32,
    direction: Direction,
    start: u32,
    #[serde(with = "hex_bytes")]
    plaintext: Vec<u8>,
    #[serde(with = "hex_array")]
    blinder: Blinder,
    proof: Vec<HexHash>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
struct HexHash(#[serde(with = "hex_array")] Hash);

impl Opening {
    pub fn leaf_index(&self) -> u32 {
        self.leaf_index
    }
    pub fn direction(&self) -> Direction {
        self.direction
    }
    pub fn range(&self) -> Range<u32> {
        self.start..self.end()
    }
    pub fn plaintext(&self) -> &[u8] {
        &self.plaintext
    }
    /// One past the last byte. Decoding ([`Self::check_shape`],
    /// [`Self::read`]) guarantees it fits in u32; it saturates otherwise so a
    /// malformed opening fails the range check instead of wrapping.
    fn end(&self) -> u32 {
        u32::try_from(self.plaintext.len())
            .ok()
            .and_then(|len| self.start.checked_add(len))
            .unwrap_or(u32::MAX)
    }

    fn check_shape(&self) -> Result<(), DecodeError> {
        let len = self.plaintext.len();
        if len == 0 {
            return Err(DecodeError::Empty { what: "opening" });
        }
        if len > MAX_LEAF_LEN {
            return Err(DecodeError::TooLarge {
                what: "opening",
                len,
                max: MAX_LEAF_LEN,
            });
        }
        // `len <= MAX_LEAF_LEN`, so it fits in u32.
        let len32 = u32::try_from(len).unwrap_or(u32::MAX);
        if self.start.checked_add(len32).is_none() {
            return Err(DecodeError::RangeOverflow {
                start: self.start,
                len: len32,
            });
        }
        if self.proof.len() > MAX_PROOF_LEN {
            return Err(DecodeError::TooLarge {
                what: "Merkle proof",
                len: self.proof.len(),
                max: MAX_PROOF_LEN,
            });
        }
        Ok(())
    }

    fn write(&self, w: &mut Writer) {
        w.u32(self.leaf_index);
        w.u8(self.direction.to_byte());
        w.u32(self.start);
        w.u32(self.plaintext.len() as u32);
        w.bytes(&self.plaintext);
        w.bytes(&self.blinder);
        w.u8(self.proof.len() as u8);
        for h in &self.proof {
            w.bytes(&h.0);
        }
    }

    fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let leaf_index = r.u32("leaf index")?;
        let d = r.u8("direction")?;
        let direction = Direction::from_byte(d).ok_or(DecodeError::InvalidDirection(d))?;
        let start = r.u32("range start")?;
        let len = r.u32("range length")?;
        if len == 0 {
            return Err(DecodeError::Empty { what: "opening" });
        }
        if len as usize > MAX_LEAF_LEN {
            return Err(DecodeError::TooLarge {
                what: "opening",
                len: len as usize,
                max: MAX_LEAF_LEN,
            });
        }
        if start.checked_add(len).is_none() {
            return Err(DecodeError::RangeOverflow { start, len });
        }
        let plaintext = r.take(len as usize, "plaintext")?.to_vec();
        let blinder = r.array("blinder")?;
        let p = r.u8("proof length")? as usize;
        let p = r.check_count(p, 32, MAX_PROOF_LEN, "Merkle proof")?;
        let mut proof = Vec::with_capacity(p);
        for _ in 0..p {
            proof.push(HexHash(r.array("Merkle proof")?));
        }
        Ok(Self {
            leaf_index,
            direction,
            start,
            plaintext,
            blinder,
            proof,
        })
    }
}

/// An attestation with selectively revealed transcript ranges.
#[derive(Clone, PartialEq, Eq, Debug, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "PresentationJson", into = "PresentationJson")]
pub struct Presentation {
    attestation: SignedAttestation,
    server_identity: Option<ServerIdentity>,
    openings: Vec<Opening>,
}

#[derive(serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct PresentationJson {
    format: String,
    version: u16,
    attestation: SignedAttestation,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    server_identity: Option<ServerIdentity>,
    openings: Vec<Opening>,
}

const JSON_FORMAT: &str = "webproof-presentation";

impl TryFrom<PresentationJson> for Presentation {
    type Error = DecodeError;
    fn try_from(j: PresentationJson) -> Result<Self, DecodeError> {
        if j.format != JSON_FORMAT {
            return Err(DecodeError::BadMagic {
                expected: "presentation",
            });
        }
        if j.version != PRESENTATION_VERSION {
            return Err(DecodeError::UnsupportedVersion {
                what: "presentation",
                version: j.version,
            });
        }
        for o in &j.openings {
            o.check_shape()?;
        }
        check_sorted(&j.openings)?;
        Ok(Presentation {
            attestation: j.attestation,
            server_identity: j.server_identity,
            openings: j.openings,
        })
    }
}

impl From<Presentation> for PresentationJson {
    fn from(p: Presentation) -> Self {
        PresentationJson {
            format: JSON_FORMAT.to_string(),
            version: PRESENTATION_VERSION,
            attestation: p.attestation,
            server_identity: p.server_identity,
            openings: p.openings,
        }
    }
}

fn check_sorted(openings: &[Opening]) -> Result<(), DecodeError> {
    if openings
        .windows(2)
        .all(|w| w[0].leaf_index < w[1].leaf_index)
    {
        Ok(())
    } else {
        Err(DecodeError::OpeningsNotSorted)
    }
}

impl Presentation {
    pub fn attestation(&self) -> &SignedAttestation {
        &self.attestation
    }

    pub fn server_identity(&self) -> Option<&ServerIdentity> {
        self.server_identity.as_ref()
    }

    pub fn openings(&self) -> &[Opening] {
        &self.openings
    }

    /// Binary encoding (see the module docs).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = Writer::new();
        w.bytes(&PRESENTATION_MAGIC);
        w.u16(PRESENTATION_VERSION);
        self.attestation.write(&mut w);
        match &self.server_identity {
            Some(id) => {
                w.u8(1);
                id.write(&mut w);
            }
            None => w.u8(0),
        }
        w.u32(self.openings.len() as u32);
        for o in &self.openings {
            o.write(&mut w);
        }
        w.into_bytes()
    }

    /// Strict decoding of [`Presentation::to_bytes`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        if bytes.len() > MAX_PRESENTATION_LEN {
            return Err(DecodeError::TooLarge {
                what: "presentation",
                len: bytes.len(),
                max: MAX_PRESENTATION_LEN,
            });
        }
        let mut r = Reader::new(bytes);
        if r.array::<4>("presentation magic")? != PRESENTATION_MAGIC {
            return Err(DecodeError::BadMagic {
                expected: "presentation",
            });
        }
        let version = r.u16("presentation version")?;
        if version != PRESENTATION_VERSION {
            return Err(DecodeError::UnsupportedVersion {
                what: "presentation",
                version,
            });
        }
        let attestation = SignedAttestation::read(&mut r)?;
        let server_identity = if r.bool("server identity flag")? {
            Some(ServerIdentity::read(&mut r)?)
        } else {
            None
        };
        let count = r.u32("opening count")? as usize;
        let count = r.check_count(count, MIN_OPENING_LEN, usize::MAX, "openings")?;
        let mut openings = Vec::with_capacity(count);
        for _ in 0..count {
            openings.push(Opening::read(&mut r)?);
        }
        check_sorted(&openings)?;
        r.finish()?;
        Ok(Self {
            attestation,
            server_identity,
            openings,
        })
    }

    /// The JSON form (pretty-printed).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("serializing plain data cannot fail")
    }

    /// Strict decoding of the JSON form: unknown fields, uppercase hex and
    /// anything the binary decoder would reject are errors.
    pub fn from_json(s: &str) -> Result<Self, DecodeError> {
        if s.len() > MAX_PRESENTATION_LEN {
            return Err(DecodeError::TooLarge {
                what: "presentation",
                len: s.len(),
                max: MAX_PRESENTATION_LEN,
            });
        }
        let j: PresentationJson =
            serde_json::from_str(s).map_err(|e| DecodeError::Json(e.to_string()))?;
        j.try_into()
    }

    /// Decodes the binary form (recognised by its magic) or else the JSON form.
    pub fn decode(bytes: &[u8]) -> Result<Self, DecodeError> {
        if bytes.starts_with(&PRESENTATION_MAGIC) {
            Self::from_bytes(bytes)
        } else {
            let s =
                std::str::from_utf8(bytes).map_err(|_| DecodeError::Json("not UTF-8".into()))?;
            Self::from_json(s)
        }
    }

    /// Checks everything a presentation claims against `trusted` verifier
    /// keys and returns what it proves.
    pub fn verify(&self, trusted: &[VerifyingKey]) -> Result<VerifiedPresentation, VerifyError> {
        let key = self.attestation.verify(trusted)?;
        let att = self.attestation.attestation();

        if let Some(id) = &self.server_identity {
            if id.hash() != att.handshake_hash() {
                return Err(VerifyError::ServerIdentityMismatch);
            }
        }

        let root = att.transcript_root();
        for o in &self.openings {
            if o.leaf_index >= att.leaf_count() {
                return Err(VerifyError::LeafIndexOutOfRange {
                    index: o.leaf_index,
                    leaf_count: att.leaf_count(),
                });
            }
            let len = match o.direction {
                Direction::Sent => att.sent_len(),
                Direction::Received => att.received_len(),
            };
            if o.end() > len {
                return Err(VerifyError::RangeOutOfBounds {
                    direction: o.direction,
                    start: o.start,
                    end: o.end(),
                    len,
                });
            }
            let leaf = leaf_hash(o.direction, o.start, &o.plaintext, &o.blinder);
            let path: Vec<Hash> = o.proof.iter().map(|h| h.0).collect();
            if !verify_inclusion(
                &leaf,
                o.leaf_index as u64,
                att.leaf_count() as u64,
                &path,
                &root,
            ) {
                return Err(VerifyError::BadInclusionProof {
                    index: o.leaf_index,
                });
            }
        }

        let mut parts = [Vec::new(), Vec::new()];
        for o in &self.openings {
            parts[o.direction as usize].push((o.start, o.plaintext.as_slice()));
        }
        let [sent, received] = parts;
        Ok(VerifiedPresentation {
            server_name: att.server_name().to_string(),
            time: att.time(),
            tls_version: att.tls_version(),
            cipher_suite: att.cipher_suite(),
            verifier_key: key.clone(),
            sent: RedactedTranscript::new(Direction::Sent, att.sent_len(), sent)?,
            received: RedactedTranscript::new(Direction::Received, att.received_len(), received)?,
            server_identity: self.server_identity.clone(),
            facts: att.facts().clone(),
            attestation: att.clone(),
        })
    }
}

/// Decodes a presentation (binary or JSON, see [`Presentation::decode`]) and
/// verifies it against `trusted` keys.
pub fn verify_presentation(bytes: &[u8], trusted: &[VerifyingKey]) -> Result<VerifiedPresentation> {
    let p = Presentation::decode(bytes)?;
    Ok(p.verify(trusted)?)
}

/// One direction of the transcript as a presentation proves it: its length
/// and the revealed ranges; every other byte is hidden.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct RedactedTranscript {
    len: u32,
    /// Revealed ranges, sorted, non-overlapping, adjacent ones merged.
    revealed: Vec<(u32, Vec<u8>)>,
}

/// A maximal run of revealed or hidden bytes.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Segment<'a> {
    pub range: Range<u32>,
    /// `None` for hidden bytes.
    pub data: Option<&'a [u8]>,
}

impl RedactedTranscript {
    fn new(
        direction: Direction,
        len: u32,
        mut parts: Vec<(u32, &[u8])>,
    ) -> Result<Self, VerifyError> {
        parts.sort_by_key(|p| p.0);
        let mut revealed: Vec<(u32, Vec<u8>)> = Vec::new();
        // Ends in u64: a run's end is at most `len` (checked below), but the
        // sums are computed before that is known.
        let end = |s: u32, n: usize| s as u64 + n as u64;
        for (start, data) in parts {
            if end(start, data.len()) > len as u64 {
                return Err(VerifyError::RangeOutOfBounds {
                    direction,
                    start,
                    end: u32::try_from(end(start, data.len())).unwrap_or(u32::MAX),
                    len,
                });
            }
            match revealed.last_mut() {
                Some((s, d)) if (start as u64) < end(*s, d.len()) => {
                    return Err(VerifyError::OverlappingRanges {
                        direction,
                        at: start,
                    });
                }
                Some((s, d)) if start as u64 == end(*s, d.len()) => d.extend_from_slice(data),
                _ => revealed.push((start, data.to_vec())),
            }
        }
        // Every run ends within `len`, a u32.
        Ok(Self { len, revealed })
    }

    /// Total length of this direction.
    pub fn len(&self) -> u32 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of revealed bytes.
    pub fn revealed_len(&self) -> u32 {
        // Disjoint runs within `len`: the sum fits in u32.
        self.revealed
            .iter()
            .map(|(_, d)| d.len() as u32)
            .fold(0u32, u32::saturating_add)
    }

    /// Revealed ranges and their bytes.
    pub fn revealed(&self) -> impl Iterator<Item = (Range<u32>, &[u8])> {
        self.revealed
            .iter()
            .map(|(s, d)| (*s..s.saturating_add(d.len() as u32), d.as_slice()))
    }

    /// The whole direction as alternating hidden and revealed runs.
    pub fn segments(&self) -> Vec<Segment<'_>> {
        let mut out = Vec::new();
        let mut pos = 0;
        for (range, data) in self.revealed() {
            if range.start > pos {
                out.push(Segment {
                    range: pos..range.start,
                    data: None,
                });
            }
            pos = range.end;
            out.push(Segment {
                range,
                data: Some(data),
            });
        }
        if pos < self.len {
            out.push(Segment {
                range: pos..self.len,
                data: None,
            });
        }
        out
    }

    /// The byte at `offset` if revealed.
    pub fn get(&self, offset: u32) -> Option<u8> {
        let i = self
            .revealed
            .partition_point(|(s, _)| *s <= offset)
            .checked_sub(1)?;
        let (s, d) = &self.revealed[i];
        d.get((offset - s) as usize).copied()
    }

    /// Text with every hidden byte replaced by `marker`, for display.
    /// Revealed bytes are escaped with [`escape_revealed`], so `marker`
    /// (and U+2588 `█`) in the text always stands for a hidden byte:
    /// revealed `\` is shown as `\\`, revealed `marker` or `█` as
    /// `\u{XXXX}`, bytes that are not UTF-8 as U+FFFD. `marker` should not
    /// be `\`.
    pub fn to_marked_string(&self, marker: char) -> String {
        let mut out = String::new();
        for seg in self.segments() {
            match seg.data {
                Some(d) => escape_revealed_into(&mut out, d, marker),
                None => out.extend(std::iter::repeat_n(marker, seg.range.len())),
            }
        }
        out
    }
}

/// The character conventionally drawn for a hidden byte (U+2588).
pub const HIDDEN_MARKER: char = '\u{2588}';

/// Revealed bytes as text for a rendering that draws hidden bytes as
/// `marker`, escaped so that the two can always be told apart: a backslash
/// becomes `\\`, `marker` and U+2588 (`█`) become `\u{XXXX}` (hex code
/// point, e.g. `\u{2588}`); everything else is lossy UTF-8. Every backslash
/// in the result starts an escape, so a reader (or a program) parsing left
/// to right recovers the revealed text exactly, up to invalid UTF-8.
pub fn escape_revealed(bytes: &[u8], marker: char) -> String {
    let mut out = String::with_capacity(bytes.len());
    escape_revealed_into(&mut out, bytes, marker);
    out
}

fn escape_revealed_into(out: &mut String, bytes: &[u8], marker: char) {
    for c in String::from_utf8_lossy(bytes).chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            c if c == marker || c == HIDDEN_MARKER => {
                out.push_str(&format!("\\u{{{:04x}}}", c as u32))
            }
            c => out.push(c),
        }
    }
}

/// What a valid presentation proves.
#[derive(Clone, Debug)]
pub struct VerifiedPresentation {
    pub server_name: String,
    /// Session time, Unix seconds.
    pub time: u64,
    pub tls_version: TlsVersion,
    pub cipher_suite: CipherSuite,
    /// The trusted key that signed the attestation.
    pub verifier_key: VerifyingKey,
    pub sent: RedactedTranscript,
    pub received: RedactedTranscript,
    /// Present if the presentation included it (checked against the
    /// attested handshake hash).
    pub server_identity: Option<ServerIdentity>,
    /// The mode that produced the attestation and what the verifier
    /// established of the session in it (port, close_notify, records
    /// dropped at the cut, response completeness, order of the two
    /// directions), as signed. [`SessionFacts::ending`] says whether the
    /// response may be truncated.
    pub facts: SessionFacts,
    pub attestation: Attestation,
}

impl VerifiedPresentation {
    pub fn key_id(&self) -> KeyId {
        self.attestation.key_id()
    }

    /// A JSON value for programs (`webproof verify --json`): hidden bytes are
    /// separate segments; revealed ones carry hex and, when valid UTF-8, text.
    pub fn to_json_value(&self) -> serde_json::Value {
        use serde_json::json;
        let dir = |t: &RedactedTranscript| {
            let segments: Vec<_> = t
                .segments()
                .into_iter()
                .map(|s| match s.data {
                    None => json!({"start": s.range.start, "end": s.range.end, "hidden": true}),
                    Some(d) => json!({
                        "start": s.range.start,
                        "end": s.range.end,
                        "hidden": false,
                        "hex": hex::encode(d),
                        "text": std::str::from_utf8(d).ok(),
                    }),
                })
                .collect();
            json!({"len": t.len(), "revealed_len": t.revealed_len(), "segments": segments})
        };
        json!({
            "server_name": self.server_name,
            "time": self.time,
            "tls_version": self.tls_version,
            "cipher_suite": self.cipher_suite,
            "verifier_key": self.verifier_key.to_string(),
            "verifier_key_id": self.key_id().to_string(),
            "verifier_ethereum_address": self.verifier_key.ethereum_address(),
            "sent": dir(&self.sent),
            "received": dir(&self.received),
            "server_identity": self.server_identity.as_ref().map(|id| json!({
                "cert_chain": id.cert_chain().iter().map(hex::encode).collect::<Vec<_>>(),
            })),
            "handshake_hash": hex::encode(self.attestation.handshake_hash()),
            "transcript_root": hex::encode(self.attestation.transcript_root()),
            "mode": self.facts.mode,
            "response_end": self.facts.ending().to_string(),
            "possibly_truncated": self.facts.ending().may_be_truncated(),
            "facts": self.facts,
        })
    }
}

/// Builds a presentation from the prover's secrets.
pub struct PresentationBuilder<'a> {
    attestation: &'a SignedAttestation,
    transcript: &'a Transcript,
    commitment: &'a TranscriptCommitment,
    reveal: BTreeSet<usize>,
    server_identity: Option<ServerIdentity>,
}

impl<'a> PresentationBuilder<'a> {
    /// Checks that the attestation commits to `commitment` and that
    /// `commitment` is over `transcript`.
    pub fn new(
        attestation: &'a SignedAttestation,
        transcript: &'a Transcript,
        commitment: &'a TranscriptCommitment,
    ) -> Result<Self> {
        let a = attestation.attestation();
        if a.transcript_root() != commitment.root()
            || a.leaf_count() != commitment.leaf_count()
            || a.sent_len() != commitment.sent_len()
            || a.received_len() != commitment.received_len()
        {
            return Err(Error::CommitmentMismatch);
        }
        if !commitment.matches(transcript) {
            return Err(Error::TranscriptMismatch);
        }
        Ok(Self {
            attestation,
            transcript,
            commitment,
            reveal: BTreeSet::new(),
            server_identity: None,
        })
    }

    fn leaves_in(
        &self,
        direction: Direction,
        range: &Range<usize>,
    ) -> impl Iterator<Item = (usize, Range<usize>)> + '_ {
        let range = range.clone();
        self.commitment
            .leaves()
            .iter()
            .enumerate()
            .filter(move |(_, l)| {
                l.direction == direction
                    && l.range().start < range.end
                    && range.start < l.range().end
            })
            .map(|(i, l)| (i, l.range()))
    }

    fn check_range(&self, direction: Direction, range: &Range<usize>) -> Result<()> {
        let len = self.transcript.get(direction).len();
        if range.start >= range.end || range.end > len {
            return Err(Error::InvalidRange {
                direction,
                start: range.start,
                end: range.end,
                len,
            });
        }
        Ok(())
    }

    /// Reveals exactly `range`, which must be a union of committed leaves
    /// (revealing a leaf reveals all of it, so nothing more is disclosed
    /// than asked).
    pub fn reveal(&mut self, direction: Direction, range: Range<usize>) -> Result<&mut Self> {
        self.check_range(direction, &range)?;
        let leaves: Vec<_> = self.leaves_in(direction, &range).collect();
        let aligned = leaves.first().is_some_and(|(_, l)| l.start == range.start)
            && leaves.last().is_some_and(|(_, l)| l.end == range.end);
        if !aligned {
            return Err(Error::UnalignedReveal {
                direction,
                start: range.start,
                end: range.end,
            });
        }
        self.reveal.extend(leaves.into_iter().map(|(i, _)| i));
        Ok(self)
    }

    /// Reveals every leaf that overlaps `range`; returns the range actually
    /// revealed, which may be larger.
    pub fn reveal_covering(
        &mut self,
        direction: Direction,
        range: Range<usize>,
    ) -> Result<Range<usize>> {
        self.check_range(direction, &range)?;
        let leaves: Vec<_> = self.leaves_in(direction, &range).collect();
        let covered = leaves.first().map_or(0, |l| l.1.start)..leaves.last().map_or(0, |l| l.1.end);
        self.reveal.extend(leaves.into_iter().map(|(i, _)| i));
        Ok(covered)
    }

    /// Reveals a whole direction.
    pub fn reveal_all(&mut self, direction: Direction) -> &mut Self {
        let idx = self
            .commitment
            .leaves()
            .iter()
            .enumerate()
            .filter(|(_, l)| l.direction == direction)
            .map(|(i, _)| i);
        self.reveal.extend(idx);
        self
    }

    /// Includes the server's certificate chain; it must be what the
    /// attestation's handshake hash commits to.
    pub fn server_identity(&mut self, identity: ServerIdentity) -> Result<&mut Self> {
        if identity.hash() != self.attestation.attestation().handshake_hash() {
            return Err(VerifyError::ServerIdentityMismatch.into());
        }
        self.server_identity = Some(identity);
        Ok(self)
    }

    pub fn build(&self) -> Presentation {
        let openings = self
            .reveal
            .iter()
            .map(|&i| {
                let l = self.commitment.leaves()[i];
                Opening {
                    leaf_index: i as u32,
                    direction: l.direction,
                    start: l.start,
                    plaintext: self.transcript.get(l.direction)[l.range()].to_vec(),
                    blinder: self.commitment.blinder(i).expect("index from the layout"),
                    proof: self
                        .commitment
                        .proof(i)
                        .expect("index from the layout")
                        .into_iter()
                        .map(HexHash)
                        .collect(),
                }
            })
            .collect();
        Presentation {
            attestation: self.attestation.clone(),
            server_identity: self.server_identity.clone(),
            openings,
        }
    }
}
