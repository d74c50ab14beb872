//! Selective disclosure: which byte ranges of each direction's application
//! data the prover opens, the check of the prover's openings, the
//! canonical form a proof's disclosed ranges must have ([`check_ranges`]),
//! and the digest that binds a verdict to the revealed bytes.

use crate::error::{DisclosureError, Result};
use serde::{Deserialize, Serialize};
use webproof_tls::record::hex_bytes;
use webproof_tls::Direction;

/// A half-open byte range `[start, end)` of one direction's application data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Range {
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

impl Range {
    /// `[start, end)`.
    pub fn new(start: usize, end: usize) -> Self {
        Range { start, end }
    }
    /// Length.
    pub fn len(&self) -> usize {
        self.end.saturating_sub(self.start)
    }
    /// Whether empty.
    pub fn is_empty(&self) -> bool {
        self.end <= self.start
    }
}

/// Sort, drop empty ranges and merge overlapping or adjacent ones.
pub fn normalize(mut v: Vec<Range>) -> Vec<Range> {
    v.retain(|r| !r.is_empty());
    v.sort();
    let mut out: Vec<Range> = Vec::with_capacity(v.len());
    for r in v {
        match out.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => out.push(r),
        }
    }
    out
}

/// The complement of normalized `v` within `[0, len)`.
pub fn complement(v: &[Range], len: usize) -> Vec<Range> {
    let mut out = Vec::new();
    let mut pos = 0;
    for r in v {
        if r.start > pos {
            out.push(Range::new(pos, r.start.min(len)));
        }
        pos = pos.max(r.end);
    }
    if pos < len {
        out.push(Range::new(pos, len));
    }
    out
}

/// Ranges to reveal in each direction.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Disclosure {
    /// Ranges of the sent data.
    pub sent: Vec<Range>,
    /// Ranges of the received data.
    pub received: Vec<Range>,
}

impl Disclosure {
    /// Reveal everything.
    pub fn all(sent_len: usize, received_len: usize) -> Self {
        Disclosure {
            sent: normalize(vec![Range::new(0, sent_len)]),
            received: normalize(vec![Range::new(0, received_len)]),
        }
    }

    /// Ranges of one direction.
    pub fn ranges(&self, d: Direction) -> &[Range] {
        match d {
            Direction::Sent => &self.sent,
            Direction::Received => &self.received,
        }
    }

    /// Remove `hide` from direction `d`.
    pub fn hide(&mut self, d: Direction, hide: Range, len: usize) {
        let v = match d {
            Direction::Sent => &mut self.sent,
            Direction::Received => &mut self.received,
        };
        let hidden = complement(&normalize(v.clone()), len);
        let mut hidden = hidden;
        hidden.push(hide);
        *v = complement(&normalize(hidden), len);
    }

    /// Normalize both directions.
    pub fn normalized(self) -> Self {
        Disclosure {
            sent: normalize(self.sent),
            received: normalize(self.received),
        }
    }

    /// The prover's openings of this disclosure over its plaintexts.
    pub fn open(&self, sent: &[u8], received: &[u8]) -> Result<Vec<Opening>> {
        let mut out = Vec::new();
        for (d, data) in [(Direction::Sent, sent), (Direction::Received, received)] {
            for r in normalize(self.ranges(d).to_vec()) {
                if r.end > data.len() {
                    return Err(DisclosureError::Opening(format!(
                        "range {}..{} is past the end of the {} data ({} bytes)",
                        r.start,
                        r.end,
                        d,
                        data.len()
                    )));
                }
                out.push(Opening {
                    direction: d,
                    range: r,
                    bytes: data[r.start..r.end].to_vec(),
                });
            }
        }
        Ok(out)
    }

    /// Whether both directions are revealed completely.
    pub fn is_full(&self, sent_len: usize, received_len: usize) -> bool {
        complement(&normalize(self.sent.clone()), sent_len).is_empty()
            && complement(&normalize(self.received.clone()), received_len).is_empty()
    }
}

/// One opened range with the bytes the prover claims are there.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Opening {
    /// Direction.
    pub direction: Direction,
    /// Range.
    pub range: Range,
    /// Claimed bytes (hex in JSON).
    #[serde(with = "hex_bytes")]
    pub bytes: Vec<u8>,
}

/// One direction's data as the verifier attests it: only the opened bytes are known.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DisclosedData {
    /// Total length of the direction's application data.
    pub len: usize,
    /// The revealed ranges (sorted, disjoint).
    pub revealed: Vec<Range>,
    /// The data with every hidden byte replaced by [`HIDDEN_CHAR`] (`█`).
    /// Revealed bytes are escaped so that they can never look hidden: a
    /// revealed backslash is written `\\` and a revealed `█` is written
    /// `\u{2588}` (every backslash starts an escape); revealed bytes that are
    /// not UTF-8 appear as U+FFFD. `revealed` is authoritative.
    pub text: String,
    /// The data itself (hidden bytes zero), hex.
    #[serde(with = "hex_bytes")]
    pub bytes: Vec<u8>,
}

/// How a hidden byte is shown in [`DisclosedData::text`].
pub const HIDDEN_CHAR: char = '█';

impl DisclosedData {
    /// Build from authenticated openings of a `len`-byte direction.
    pub fn from_openings(len: usize, openings: &[&Opening]) -> Result<Self> {
        let mut bytes = vec![0u8; len];
        let mut ranges = Vec::new();
        for o in openings {
            if o.range.is_empty() || o.range.end > len || o.bytes.len() != o.range.len() {
                return Err(DisclosureError::Opening(format!(
                    "range {}..{} is empty, past the end ({len} bytes) or does not match its bytes",
                    o.range.start, o.range.end
                )));
            }
            bytes[o.range.start..o.range.end].copy_from_slice(&o.bytes);
            ranges.push(o.range);
        }
        Ok(Self::from_parts(normalize(ranges), bytes))
    }

    /// The disclosure of `revealed` (normalized: sorted, disjoint, not
    /// adjacent, not empty, within `data`) over a direction's whole data:
    /// what the prover rebuilds from its own plaintext.
    pub fn from_revealed(data: &[u8], revealed: Vec<Range>) -> Result<Self> {
        if !is_normalized(&revealed, data.len()) {
            return Err(DisclosureError::Opening(format!(
                "revealed ranges must be sorted, disjoint, not adjacent, not empty and within the {} bytes",
                data.len()
            )));
        }
        let mut bytes = vec![0u8; data.len()];
        for r in &revealed {
            bytes[r.start..r.end].copy_from_slice(&data[r.start..r.end]);
        }
        Ok(Self::from_parts(revealed, bytes))
    }

    /// From a view of a direction's data with hidden bytes as `None` (the
    /// verifier's view after a zero-knowledge proof): each run of known
    /// bytes is a revealed range.
    pub fn from_view(view: &[Option<u8>]) -> Self {
        let bytes: Vec<u8> = view.iter().map(|b| b.unwrap_or(0)).collect();
        let mut revealed = Vec::new();
        let mut pos = 0;
        while pos < view.len() {
            if view[pos].is_none() {
                pos += 1;
                continue;
            }
            let start = pos;
            while pos < view.len() && view[pos].is_some() {
                pos += 1;
            }
            revealed.push(Range::new(start, pos));
        }
        Self::from_parts(revealed, bytes)
    }

    /// The data with hidden bytes as `None` (the inverse of
    /// [`Self::from_view`]).
    pub fn view(&self) -> Vec<Option<u8>> {
        let mut v = vec![None; self.len];
        for r in &self.revealed {
            let end = r.end.min(self.len).min(self.bytes.len());
            let start = r.start.min(end);
            for (slot, b) in v[start..end].iter_mut().zip(&self.bytes[start..end]) {
                *slot = Some(*b);
            }
        }
        v
    }

    /// `bytes` with every hidden byte zero, `revealed` normalized within it.
    fn from_parts(revealed: Vec<Range>, bytes: Vec<u8>) -> Self {
        let len = bytes.len();
        let shown: usize = revealed.iter().map(|r| r.len()).sum();
        // A hidden byte is 3 bytes of UTF-8; a revealed one at least 1.
        let mut text = String::with_capacity(shown + 3 * (len - shown));
        let mut pos = 0;
        for r in &revealed {
            text.extend(core::iter::repeat_n(HIDDEN_CHAR, r.start - pos));
            text.push_str(&webproof_attestation::escape_revealed(
                &bytes[r.start..r.end],
                HIDDEN_CHAR,
            ));
            pos = r.end;
        }
        text.extend(core::iter::repeat_n(HIDDEN_CHAR, len - pos));
        DisclosedData {
            len,
            revealed,
            text,
            bytes,
        }
    }

    /// Number of hidden bytes.
    pub fn hidden(&self) -> usize {
        self.len - self.revealed.iter().map(|r| r.len()).sum::<usize>()
    }

    /// This direction without its data, bound by [`disclosure_digest`]:
    /// what the verifier's verdict carries (the prover holds the data).
    pub fn digested(&self, direction: Direction) -> DisclosedDigest {
        DisclosedDigest {
            len: self.len,
            revealed: self.revealed.clone(),
            digest: disclosure_digest(direction, self.len, &self.revealed, &self.bytes)
                .expect("revealed ranges lie within the data"),
        }
    }
}

/// Whether `v` is normalized (as [`normalize`] leaves it) and within `[0, len)`.
fn is_normalized(v: &[Range], len: usize) -> bool {
    v.iter().all(|r| r.start < r.end)
        && v.windows(2).all(|w| w[0].end < w[1].start)
        && v.last().is_none_or(|r| r.end <= len)
}

/// Domain separator of [`disclosure_digest`].
pub const DISCLOSURE_DIGEST_DOMAIN: &[u8] = b"webproof disclosed data v1\0";

/// The digest that binds one direction's disclosed bytes in the verdict:
///
/// ```text
/// SHA-256( "webproof disclosed data v1" || 0x00
///          || direction      (1 byte: 0 = sent by the client, 1 = received from the server)
///          || len            (u64 big-endian: the direction's application-data length)
///          || count          (u64 big-endian: number of revealed ranges)
///          || for each revealed range, in order:
///               start (u64 BE) || end (u64 BE) || data[start..end] )
/// ```
///
/// `revealed` is the verdict's list as it is (the prover checks it is
/// normalized separately); `data` holds the direction's data at least at
/// those ranges (the verifier's copy has hidden bytes zeroed, the prover's
/// is whole). Each range carries its own length, so the encoding is
/// unambiguous. Fails if a range is empty, reversed or past `data`.
pub fn disclosure_digest(
    direction: Direction,
    len: usize,
    revealed: &[Range],
    data: &[u8],
) -> Result<[u8; 32]> {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(DISCLOSURE_DIGEST_DOMAIN);
    h.update([match direction {
        Direction::Sent => 0u8,
        Direction::Received => 1,
    }]);
    h.update((len as u64).to_be_bytes());
    h.update((revealed.len() as u64).to_be_bytes());
    for r in revealed {
        let bytes = data
            .get(r.start..r.end)
            .filter(|_| r.start < r.end)
            .ok_or_else(|| {
                DisclosureError::Opening(format!(
                    "range {}..{} is empty or past the {} bytes of {direction} data",
                    r.start,
                    r.end,
                    data.len()
                ))
            })?;
        h.update((r.start as u64).to_be_bytes());
        h.update((r.end as u64).to_be_bytes());
        h.update(bytes);
    }
    Ok(h.finalize().into())
}

/// One direction's disclosure as the verifier's verdict carries it: the
/// revealed ranges and the length, and instead of the bytes (which the
/// prover holds) their [`disclosure_digest`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DisclosedDigest {
    /// Total length of the direction's application data.
    pub len: usize,
    /// The revealed ranges (sorted, disjoint).
    pub revealed: Vec<Range>,
    /// [`disclosure_digest`] of the revealed ranges and their bytes (hex).
    #[serde(with = "hex_digest")]
    pub digest: [u8; 32],
}

impl DisclosedDigest {
    /// The prover's side: rebuild the [`DisclosedData`] the verifier
    /// attested from the prover's own `data` of this direction, after
    /// checking that the verifier's length and ranges are the prover's
    /// (`asked`: the ranges it disclosed, normalized here) and that the
    /// digest matches its bytes. A verdict that disagrees is refused: it is
    /// not about the data the prover holds.
    pub fn expand(
        &self,
        direction: Direction,
        data: &[u8],
        asked: &[Range],
    ) -> Result<DisclosedData> {
        let disagree = |detail: String| DisclosureError::Verdict { direction, detail };
        if self.len != data.len() {
            return Err(disagree(format!(
                "it attests {} bytes, the prover holds {}",
                self.len,
                data.len()
            )));
        }
        if self.revealed != normalize(asked.to_vec()) {
            return Err(disagree(
                "it reveals other ranges than the prover disclosed".into(),
            ));
        }
        let out = DisclosedData::from_revealed(data, self.revealed.clone())
            .map_err(|e| disagree(e.to_string()))?;
        let digest = disclosure_digest(direction, self.len, &self.revealed, data)?;
        if digest != self.digest {
            return Err(disagree(
                "its digest of the revealed bytes is not the digest of the prover's bytes".into(),
            ));
        }
        Ok(out)
    }
}

/// Hex (de)serialisation of a 32-byte digest.
mod hex_digest {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(b: &[u8; 32], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&hex::encode(b))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<[u8; 32], D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        let mut out = [0u8; 32];
        hex::decode_to_slice(s.as_bytes(), &mut out).map_err(serde::de::Error::custom)?;
        Ok(out)
    }
}

/// Check the openings against the authenticated plaintexts (the clear path;
/// the ZK path checks them against commitments instead) and build what the
/// verifier attests to.
pub fn check_openings(
    sent: &[u8],
    received: &[u8],
    openings: &[Opening],
) -> Result<(DisclosedData, DisclosedData)> {
    for o in openings {
        let data = match o.direction {
            Direction::Sent => sent,
            Direction::Received => received,
        };
        if o.range.end > data.len() || o.range.is_empty() {
            return Err(DisclosureError::Opening(format!(
                "{} range {}..{} is empty or past the end ({} bytes)",
                o.direction,
                o.range.start,
                o.range.end,
                data.len()
            )));
        }
        if data[o.range.start..o.range.end] != o.bytes[..] {
            return Err(DisclosureError::Opening(format!(
                "{} range {}..{} claims bytes the records do not contain",
                o.direction, o.range.start, o.range.end
            )));
        }
    }
    let pick = |d| {
        openings
            .iter()
            .filter(|o| o.direction == d)
            .collect::<Vec<_>>()
    };
    Ok((
        DisclosedData::from_openings(sent.len(), &pick(Direction::Sent))?,
        DisclosedData::from_openings(received.len(), &pick(Direction::Received))?,
    ))
}

/// Limit on disclosed ranges per direction: enough for any reveal a person
/// writes (JSON paths, header lines), small enough that the verifier's
/// bookkeeping stays negligible beside the proof.
pub const MAX_RANGES: usize = 4096;

/// Check that `ranges` are canonical for a direction of `total` bytes:
/// non-empty, sorted, disjoint and not adjacent (adjacent ranges are one
/// range), within the data, and at most [`MAX_RANGES`]. The verifier refuses
/// anything else instead of normalising it, so its work stays linear and
/// the output shows exactly what the proof opened.
pub fn check_ranges(ranges: &[Range], total: usize) -> Result<()> {
    if ranges.len() > MAX_RANGES {
        return Err(plan_error(format!(
            "{} disclosed ranges in one direction (at most {MAX_RANGES})",
            ranges.len()
        )));
    }
    let mut prev_end: Option<usize> = None;
    for r in ranges {
        if r.start >= r.end {
            return Err(plan_error(format!(
                "disclosed range {}..{} is empty",
                r.start, r.end
            )));
        }
        if prev_end.is_some_and(|p| r.start <= p) {
            return Err(plan_error(
                "disclosed ranges must be sorted, disjoint and not adjacent",
            ));
        }
        if r.end > total {
            return Err(plan_error(format!(
                "disclosed range {}..{} goes past the application data ({total} bytes)",
                r.start, r.end
            )));
        }
        prev_end = Some(r.end);
    }
    Ok(())
}

fn plan_error(detail: impl Into<String>) -> DisclosureError {
    DisclosureError::Malformed {
        what: "proof plan",
        detail: detail.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_and_hide() {
        let v = normalize(vec![
            Range::new(5, 7),
            Range::new(0, 2),
            Range::new(2, 3),
            Range::new(6, 9),
            Range::new(4, 4),
        ]);
        assert_eq!(v, vec![Range::new(0, 3), Range::new(5, 9)]);
        assert_eq!(
            complement(&v, 10),
            vec![Range::new(3, 5), Range::new(9, 10)]
        );
        let mut d = Disclosure::all(10, 4);
        d.hide(Direction::Sent, Range::new(3, 4), 10);
        assert_eq!(d.sent, vec![Range::new(0, 3), Range::new(4, 10)]);
        assert!(!d.is_full(10, 4));
    }

    /// Revealed `█`, a revealed `[3 hidden bytes]` and a revealed backslash
    /// are escaped, so they never read as hidden bytes and the escaping
    /// stays unambiguous.
    #[test]
    fn revealed_block_characters_are_escaped_in_text() {
        let recv = "ab\u{2588}\u{2588}\u{2588}[3 hidden bytes]\\u{2588}xyz".as_bytes();
        let hidden_from = recv.len() - 3;
        let d = Disclosure {
            sent: vec![],
            received: vec![Range::new(0, hidden_from)],
        };
        let o = d.open(b"", recv).unwrap();
        let (_, r) = check_openings(b"", recv, &o).unwrap();
        assert_eq!(
            r.text,
            "ab\\u{2588}\\u{2588}\\u{2588}[3 hidden bytes]\\\\u{2588}███"
        );
        // Exactly the hidden bytes are drawn as blocks.
        assert_eq!(r.text.matches(HIDDEN_CHAR).count(), r.hidden());
        // The same bytes all hidden look different.
        let d = Disclosure {
            sent: vec![],
            received: vec![Range::new(0, 2), Range::new(11, recv.len())],
        };
        let (_, h) = check_openings(b"", recv, &d.open(b"", recv).unwrap()).unwrap();
        assert_ne!(h.text, r.text);
        assert!(
            h.text.starts_with("ab█████████[3 hidden bytes]"),
            "{}",
            h.text
        );
    }

    /// A view with hidden bytes as `None` gives what the openings of its
    /// known runs give.
    #[test]
    fn from_view_matches_the_openings_of_its_runs() {
        let data = b"HTTP/1.1 200 OK\r\nX: \xe2\x96\x88\r\n";
        for hidden in [
            vec![],
            vec![0],
            vec![3, 4, 9],
            vec![data.len() - 1],
            (0..data.len()).collect(),
        ] {
            let view: Vec<Option<u8>> = data
                .iter()
                .enumerate()
                .map(|(i, &b)| (!hidden.contains(&i)).then_some(b))
                .collect();
            let mut d = Disclosure::all(0, data.len());
            for &h in &hidden {
                d.hide(Direction::Received, Range::new(h, h + 1), data.len());
            }
            let (_, want) = check_openings(&[], data, &d.open(&[], data).unwrap()).unwrap();
            assert_eq!(DisclosedData::from_view(&view), want, "{hidden:?}");
        }
    }

    /// The digest's encoding, pinned by a value computed independently
    /// (Python's hashlib over the documented layout).
    #[test]
    fn disclosure_digest_known_answers() {
        let data = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n";
        let d = disclosure_digest(
            Direction::Sent,
            data.len(),
            &[Range::new(0, 3), Range::new(5, 14)],
            data,
        )
        .unwrap();
        assert_eq!(
            hex::encode(d),
            "5e749803b018f4af740407446d25ef0790542719bb85775c44226753a369d8cb"
        );
        let empty = disclosure_digest(Direction::Received, 0, &[], &[]).unwrap();
        assert_eq!(
            hex::encode(empty),
            "5e33a9c67060daa21873d79fbc42b4fa5864b307ffb4af51b7162ba6e3cbdced"
        );
        // Direction, length and range bounds are all bound.
        let base = |d, len, r: &[Range]| disclosure_digest(d, len, r, data).unwrap();
        let r = [Range::new(0, 3)];
        let all = [
            base(Direction::Sent, 27, &r),
            base(Direction::Received, 27, &r),
            base(Direction::Sent, 28, &r),
            base(Direction::Sent, 27, &[Range::new(0, 2), Range::new(2, 3)]),
            base(Direction::Sent, 27, &[Range::new(1, 4)]),
        ];
        for i in 0..all.len() {
            for j in 0..i {
                assert_ne!(all[i], all[j], "{i} {j}");
            }
        }
        // Ranges outside the data are refused, not hashed.
        assert!(disclosure_digest(Direction::Sent, 27, &[Range::new(20, 30)], data).is_err());
        assert!(disclosure_digest(Direction::Sent, 27, &[Range::new(3, 3)], data).is_err());
    }

    /// The verifier's view (hidden bytes zero) and the prover's whole data
    /// give the same digest; the prover rebuilds exactly what the verifier
    /// attests, and refuses a verdict with another digest, other ranges or
    /// another length.
    #[test]
    fn prover_rebuilds_the_verdict_and_refuses_disagreement() {
        let data = b"HTTP/1.1 200 OK\r\nSet-Cookie: s=SECRET\r\n\r\nbody \xff\x00";
        let asked = vec![Range::new(0, 17), Range::new(37, data.len())];
        let d = Disclosure {
            sent: Vec::new(),
            received: asked.clone(),
        };
        let (_, verifier_view) = check_openings(&[], data, &d.open(&[], data).unwrap()).unwrap();
        assert!(!verifier_view.bytes.windows(6).any(|w| w == b"SECRET"));
        let verdict = verifier_view.digested(Direction::Received);
        assert_eq!(verdict.revealed, asked);
        let rebuilt = verdict.expand(Direction::Received, data, &asked).unwrap();
        assert_eq!(rebuilt, verifier_view);
        // The digest is bound to the direction.
        assert!(verdict.expand(Direction::Sent, data, &asked).is_err());

        let refused = |v: &DisclosedDigest, data: &[u8], asked: &[Range]| match v.expand(
            Direction::Received,
            data,
            asked,
        ) {
            Err(DisclosureError::Verdict { direction, detail }) => {
                assert_eq!(direction, Direction::Received);
                detail
            }
            other => panic!("{other:?}"),
        };
        let mut wrong = verdict.clone();
        wrong.digest[0] ^= 1;
        assert!(refused(&wrong, data, &asked).contains("digest"));
        // Other bytes than the verifier saw (the prover's data differs).
        let mut other = data.to_vec();
        other[3] ^= 1;
        assert!(refused(&verdict, &other, &asked).contains("digest"));
        // Other ranges: more, fewer, shifted, unnormalized.
        for revealed in [
            vec![Range::new(0, data.len())],
            vec![Range::new(0, 17)],
            vec![Range::new(0, 18), Range::new(37, data.len())],
            vec![
                Range::new(0, 10),
                Range::new(10, 17),
                Range::new(37, data.len()),
            ],
        ] {
            let mut v = verdict.clone();
            v.revealed = revealed;
            assert!(refused(&v, data, &asked).contains("ranges"));
        }
        let mut v = verdict.clone();
        v.len += 1;
        assert!(refused(&v, data, &asked).contains("bytes"));
        // The prover's own ranges past its data are refused too.
        let past = [Range::new(0, data.len() + 1)];
        let mut v = verdict.clone();
        v.revealed = past.to_vec();
        assert!(refused(&v, data, &past).contains("within"));
    }

    #[test]
    fn altered_and_out_of_range_openings_rejected() {
        let sent = b"GET / HTTP/1.1\r\n";
        let recv = b"HTTP/1.1 200 OK\r\n";
        let d = Disclosure {
            sent: vec![Range::new(0, 3)],
            received: vec![Range::new(9, 12)],
        };
        let mut o = d.open(sent, recv).unwrap();
        let (s, r) = check_openings(sent, recv, &o).unwrap();
        assert_eq!(s.text, format!("GET{}", "█".repeat(13)));
        assert_eq!(r.hidden(), recv.len() - 3);
        o[1].bytes = b"404".to_vec();
        assert!(matches!(
            check_openings(sent, recv, &o),
            Err(DisclosureError::Opening(_))
        ));
        o[1].bytes = b"200".to_vec();
        o[1].range = Range::new(100, 103);
        assert!(check_openings(sent, recv, &o).is_err());
        o[1].range = Range::new(9, 11);
        assert!(check_openings(sent, recv, &o).is_err());
    }

    #[test]
    fn only_canonical_ranges_are_accepted() {
        let r = Range::new;
        check_ranges(&[], 0).unwrap();
        check_ranges(&[r(0, 3), r(5, 9)], 9).unwrap();
        for bad in [
            vec![r(0, 0)],
            vec![r(3, 2)],
            vec![r(0, 10)],
            vec![r(5, 7), r(0, 2)],
            vec![r(0, 3), r(3, 5)],
            vec![r(0, 4), r(2, 5)],
            vec![r(1, 2), r(1, 2)],
            vec![r(usize::MAX - 1, usize::MAX)],
        ] {
            assert!(check_ranges(&bad, 9).is_err(), "{bad:?}");
        }
        let many: Vec<Range> = (0..=MAX_RANGES).map(|i| r(2 * i, 2 * i + 1)).collect();
        assert!(check_ranges(&many, 4 * MAX_RANGES).is_err());
        assert!(check_ranges(&many[..MAX_RANGES], 4 * MAX_RANGES).is_ok());
    }
}
