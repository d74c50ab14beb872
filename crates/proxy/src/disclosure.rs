//! Selective disclosure: which byte ranges of each direction's application
//! data the prover opens, and the check of the prover's openings.

use crate::error::{ProxyError, Result};
use crate::record::{hex_bytes, Direction};
use serde::{Deserialize, Serialize};

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
                    return Err(ProxyError::Opening(format!(
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
                return Err(ProxyError::Opening(format!(
                    "range {}..{} is empty, past the end ({len} bytes) or does not match its bytes",
                    o.range.start, o.range.end
                )));
            }
            bytes[o.range.start..o.range.end].copy_from_slice(&o.bytes);
            ranges.push(o.range);
        }
        let revealed = normalize(ranges);
        let mut text = String::new();
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
        Ok(DisclosedData {
            len,
            revealed,
            text,
            bytes,
        })
    }

    /// Number of hidden bytes.
    pub fn hidden(&self) -> usize {
        self.len - self.revealed.iter().map(|r| r.len()).sum::<usize>()
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
            return Err(ProxyError::Opening(format!(
                "{} range {}..{} is empty or past the end ({} bytes)",
                o.direction,
                o.range.start,
                o.range.end,
                data.len()
            )));
        }
        if data[o.range.start..o.range.end] != o.bytes[..] {
            return Err(ProxyError::Opening(format!(
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
            Err(ProxyError::Opening(_))
        ));
        o[1].bytes = b"200".to_vec();
        o[1].range = Range::new(100, 103);
        assert!(check_openings(sent, recv, &o).is_err());
        o[1].range = Range::new(9, 11);
        assert!(check_openings(sent, recv, &o).is_err());
    }
}
