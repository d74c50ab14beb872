//! TLS records and the transcript the verifier records while relaying.
//!
//! The [`Recorder`] is fed the raw bytes of each direction as they pass
//! through the relay and cuts them into records, enforcing the configured
//! limits as it goes. It only frames records: nothing here decides what a
//! record means (that is the modes' verifiers).

use crate::error::{Result, TlsError};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The two directions of a TLS connection, seen from the prover (the TLS
/// client): one type with the attestation's, so a recorded record, a
/// statement record and an attested range name a direction the same way.
pub use crate::suite::Direction;

/// TLS record content types.
pub mod content_type {
    /// change_cipher_spec
    pub const CHANGE_CIPHER_SPEC: u8 = 20;
    /// alert
    pub const ALERT: u8 = 21;
    /// handshake
    pub const HANDSHAKE: u8 = 22;
    /// application_data
    pub const APPLICATION_DATA: u8 = 23;
}

/// Length of a record header.
pub const HEADER_LEN: usize = 5;
/// Largest record payload accepted: 2^14 plaintext plus the TLS 1.2 allowance
/// for expansion (RFC 5246 section 6.2.3); TLS 1.3 allows less (2^14 + 256).
pub const MAX_PAYLOAD: usize = (1 << 14) + 2048;

/// One TLS record as it crossed the wire.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    /// Which way it travelled.
    pub direction: Direction,
    /// Outer content type.
    pub content_type: u8,
    /// Legacy record version field.
    pub version: u16,
    /// The record's payload (ciphertext once protection is on).
    #[serde(with = "hex_bytes")]
    pub payload: Vec<u8>,
}

impl Record {
    /// The 5-byte record header (the TLS 1.3 additional data).
    pub fn header(&self) -> [u8; HEADER_LEN] {
        let len = self.payload.len() as u16;
        let v = self.version.to_be_bytes();
        let l = len.to_be_bytes();
        [self.content_type, v[0], v[1], l[0], l[1]]
    }
}

/// Every record of one TLS connection in the order each direction carried
/// them, the order in which the recorder completed them across directions,
/// and how many client records reached the server.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Recording {
    /// Records sent by the client, in order.
    pub sent: Vec<Record>,
    /// Records sent by the server, in order.
    pub received: Vec<Record>,
    /// The direction of every record, in the order the recorder completed
    /// them: a client record when its last byte came from the prover, a
    /// server record when its last byte came from the server. Where the
    /// verifier records, a server record listed before a client record
    /// reached the verifier before that client record was forwarded, so it
    /// cannot answer it.
    pub order: Vec<Direction>,
    /// How many of the client records (a prefix) were forwarded to the
    /// server whole. The verifier's relay stops forwarding once the server
    /// side closed or a write to it failed; records after that were
    /// recorded (so both parties hold the same transcript) but never
    /// delivered.
    pub sent_delivered: usize,
    /// Server records relayed after the point where the prover's `Close`
    /// cut the transcript (dropped from it; see [`Recording::cut`]).
    pub received_after_cut: usize,
}

impl Recording {
    /// Records of one direction.
    pub fn records(&self, d: Direction) -> &[Record] {
        match d {
            Direction::Sent => &self.sent,
            Direction::Received => &self.received,
        }
    }

    /// A digest of the records, so prover and verifier can confirm they
    /// hold the same records before the proof phase. It covers neither
    /// `order` nor `sent_delivered`: those are the verifier's observations,
    /// which the prover cannot know.
    pub fn digest(&self) -> [u8; 32] {
        let mut h = Sha256::new();
        for (tag, recs) in [(0u8, &self.sent), (1u8, &self.received)] {
            h.update([tag]);
            h.update((recs.len() as u64).to_be_bytes());
            for r in recs {
                h.update(r.header());
                h.update(&r.payload);
            }
        }
        h.finalize().into()
    }

    /// The transcript cut to its first `sent` client records and first
    /// `received` server records, as the prover's `Close` names them: all
    /// client records must be there (they all came from the prover before
    /// its `Close`), and at most the server records relayed.
    pub fn cut(mut self, sent: usize, received: usize) -> Result<Recording> {
        if sent != self.sent.len() {
            return Err(TlsError::Protocol(format!(
                "the prover closed after {sent} client records, the verifier relayed {}",
                self.sent.len()
            )));
        }
        if received > self.received.len() {
            return Err(TlsError::Protocol(format!(
                "the prover closed after {received} server records, the verifier relayed only {}",
                self.received.len()
            )));
        }
        self.received_after_cut = self.received.len() - received;
        self.received.truncate(received);
        let mut kept = 0usize;
        self.order.retain(|&d| {
            d == Direction::Sent || {
                kept += 1;
                kept <= received
            }
        });
        Ok(self)
    }

    /// Total payload bytes in one direction.
    pub fn payload_bytes(&self, d: Direction) -> usize {
        self.records(d).iter().map(|r| r.payload.len()).sum()
    }
}

/// Limits the verifier enforces while recording.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecorderLimits {
    /// Most bytes (record headers included) the client may send.
    pub max_sent_bytes: usize,
    /// Most bytes (record headers included) the server may send.
    pub max_recv_bytes: usize,
    /// Most records the client may send.
    pub max_sent_records: usize,
    /// Most records the server may send.
    pub max_recv_records: usize,
}

impl Default for RecorderLimits {
    /// Room for a 16 MiB response: its records' headers, nonces and tags,
    /// the handshake and tickets add well under 1 MiB; the records may
    /// average 512 bytes (a proof costs about 130 COTs per record, a few
    /// percent of the data's cost at that size).
    fn default() -> Self {
        RecorderLimits {
            max_sent_bytes: 64 << 10,
            max_recv_bytes: 17 << 20,
            max_sent_records: 256,
            max_recv_records: 32 << 10,
        }
    }
}

/// Cuts each direction's byte stream into records, within limits.
#[derive(Debug)]
pub struct Recorder {
    limits: RecorderLimits,
    transcript: Recording,
    pending: [Vec<u8>; 2],
    bytes: [usize; 2],
}

impl Recorder {
    /// A recorder enforcing `limits`.
    pub fn new(limits: RecorderLimits) -> Self {
        Recorder {
            limits,
            transcript: Recording::default(),
            pending: [Vec::new(), Vec::new()],
            bytes: [0, 0],
        }
    }

    /// Feed bytes that travelled in direction `d`. Returns the number of
    /// complete records seen so far in that direction.
    ///
    /// Fails (and the relay must stop) when the bytes are not TLS records or
    /// exceed a limit.
    pub fn feed(&mut self, d: Direction, bytes: &[u8]) -> Result<usize> {
        let i = d as usize;
        let (max_bytes, max_records) = match d {
            Direction::Sent => (self.limits.max_sent_bytes, self.limits.max_sent_records),
            Direction::Received => (self.limits.max_recv_bytes, self.limits.max_recv_records),
        };
        // Named as the verifier's configuration names them.
        let which = match d {
            Direction::Sent => "sent",
            Direction::Received => "recv",
        };
        self.bytes[i] = self.bytes[i].saturating_add(bytes.len());
        if self.bytes[i] > max_bytes {
            return Err(TlsError::Limit(format!(
                "the {} sent more than {max_bytes} bytes (the verifier's limit max_{which}_bytes)",
                d.sender()
            )));
        }
        self.pending[i].extend_from_slice(bytes);
        let mut used = 0;
        loop {
            let buf = &self.pending[i][used..];
            let Some((record, len)) = parse_record(d, buf)? else {
                break;
            };
            used += len;
            let recs = match d {
                Direction::Sent => &mut self.transcript.sent,
                Direction::Received => &mut self.transcript.received,
            };
            if recs.len() >= max_records {
                return Err(TlsError::Limit(format!(
                    "the {} sent more than {max_records} records (the verifier's limit max_{which}_records)",
                    d.sender()
                )));
            }
            recs.push(record);
            self.transcript.order.push(d);
        }
        self.pending[i].drain(..used);
        Ok(self.transcript.records(d).len())
    }

    /// Bytes of an incomplete record waiting in direction `d`.
    pub fn pending(&self, d: Direction) -> usize {
        self.pending[d as usize].len()
    }

    /// Every client record completed so far has been forwarded to the
    /// server whole (the relay calls this after a successful write).
    pub fn mark_sent_delivered(&mut self) {
        self.transcript.sent_delivered = self.transcript.sent.len();
    }

    /// The records so far.
    pub fn transcript(&self) -> &Recording {
        &self.transcript
    }

    /// The finished transcript; a trailing partial record is dropped (it was
    /// never complete on the wire, so nobody could have decrypted it).
    pub fn finish(self) -> Recording {
        self.transcript
    }
}

/// Parse one record from the front of `buf`: `Ok(None)` if more bytes are needed.
pub fn parse_record(d: Direction, buf: &[u8]) -> Result<Option<(Record, usize)>> {
    if buf.is_empty() {
        return Ok(None);
    }
    let ct = buf[0];
    if !(content_type::CHANGE_CIPHER_SPEC..=content_type::APPLICATION_DATA).contains(&ct) {
        return Err(TlsError::Malformed {
            what: "TLS record",
            detail: format!("the {} sent content type {ct}: not TLS", d.sender()),
        });
    }
    if buf.len() >= 3 {
        let version = u16::from_be_bytes([buf[1], buf[2]]);
        if !(0x0300..=0x0304).contains(&version) {
            return Err(TlsError::Malformed {
                what: "TLS record",
                detail: format!(
                    "the {} sent record version {version:#06x}: not TLS",
                    d.sender()
                ),
            });
        }
    }
    if buf.len() < HEADER_LEN {
        return Ok(None);
    }
    let len = u16::from_be_bytes([buf[3], buf[4]]) as usize;
    if len > MAX_PAYLOAD {
        return Err(TlsError::Malformed {
            what: "TLS record",
            detail: format!(
                "the {} sent a {len}-byte record (max {MAX_PAYLOAD})",
                d.sender()
            ),
        });
    }
    if buf.len() < HEADER_LEN + len {
        return Ok(None);
    }
    Ok(Some((
        Record {
            direction: d,
            content_type: ct,
            version: u16::from_be_bytes([buf[1], buf[2]]),
            payload: buf[HEADER_LEN..HEADER_LEN + len].to_vec(),
        },
        HEADER_LEN + len,
    )))
}

/// Hex (de)serialisation of byte vectors.
pub mod hex_bytes {
    use serde::{Deserialize, Deserializer, Serializer};

    /// Serialize as a hex string.
    pub fn serialize<S: Serializer>(b: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&hex::encode(b))
    }

    /// Deserialize from a hex string.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        hex::decode(s.as_bytes()).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_split_across_feeds() {
        let mut r = Recorder::new(RecorderLimits::default());
        let bytes = [22u8, 3, 1, 0, 3, 1, 2, 3, 23, 3, 3, 0, 1, 9];
        assert_eq!(r.feed(Direction::Sent, &bytes[..4]).unwrap(), 0);
        assert_eq!(r.feed(Direction::Sent, &bytes[4..10]).unwrap(), 1);
        assert_eq!(r.pending(Direction::Sent), 2);
        assert_eq!(r.feed(Direction::Sent, &bytes[10..]).unwrap(), 2);
        r.feed(Direction::Received, &[23, 3, 3, 0, 1, 7]).unwrap();
        let t = r.finish();
        assert_eq!(t.sent[0].payload, vec![1, 2, 3]);
        assert_eq!(
            t.order,
            vec![Direction::Sent, Direction::Sent, Direction::Received]
        );
        assert_eq!(t.sent_delivered, 0);
        assert_eq!(t.sent[1].header(), [23, 3, 3, 0, 1]);
    }

    /// The prover's `Close` cuts the server records it had not received;
    /// it cannot name client records the verifier did not relay, nor more
    /// server records than were relayed.
    #[test]
    fn cut_keeps_a_prefix_of_server_records_only() {
        let rec = |d, b: u8| Record {
            direction: d,
            content_type: 23,
            version: 0x0303,
            payload: vec![b],
        };
        use Direction::{Received as R, Sent as S};
        let t = Recording {
            sent: vec![rec(Direction::Sent, 1), rec(Direction::Sent, 2)],
            received: vec![
                rec(Direction::Received, 3),
                rec(Direction::Received, 4),
                rec(Direction::Received, 5),
            ],
            order: vec![S, R, S, R, R],
            sent_delivered: 2,
            received_after_cut: 0,
        };
        let cut = t.clone().cut(2, 2).unwrap();
        assert_eq!(cut.sent, t.sent);
        assert_eq!(cut.received, t.received[..2]);
        assert_eq!(cut.order, vec![S, R, S, R]);
        assert_eq!(cut.received_after_cut, 1);
        assert_eq!(t.clone().cut(2, 0).unwrap().order, vec![S, S]);
        assert_ne!(cut.digest(), t.digest());
        assert_eq!(t.clone().cut(2, 3).unwrap(), t);
        assert!(t.clone().cut(1, 3).is_err());
        assert!(t.clone().cut(3, 3).is_err());
        assert!(t.clone().cut(2, 4).is_err());
    }

    #[test]
    fn non_tls_and_oversized_rejected() {
        let mut r = Recorder::new(RecorderLimits::default());
        assert!(matches!(
            r.feed(Direction::Received, b"HTTP/1.1 200 OK\r\n"),
            Err(TlsError::Malformed { .. })
        ));
        let mut r = Recorder::new(RecorderLimits::default());
        assert!(r
            .feed(Direction::Received, &[23, 3, 3, 0xff, 0xff])
            .is_err());
        let mut r = Recorder::new(RecorderLimits::default());
        assert!(r.feed(Direction::Received, &[23, 0x7f, 3]).is_err());
    }

    /// Record lengths at the limit, one past it and at u16 max; limits at
    /// usize max do not overflow the byte counter.
    #[test]
    fn record_lengths_at_their_limits() {
        let unlimited = RecorderLimits {
            max_sent_bytes: usize::MAX,
            max_recv_bytes: usize::MAX,
            max_sent_records: usize::MAX,
            max_recv_records: usize::MAX,
        };
        let record = |len: usize| {
            let mut v = vec![23u8, 3, 3, (len >> 8) as u8, len as u8];
            v.resize(HEADER_LEN + len, 0xab);
            v
        };
        let mut r = Recorder::new(unlimited);
        assert_eq!(
            r.feed(Direction::Received, &record(MAX_PAYLOAD)).unwrap(),
            1
        );
        assert_eq!(r.feed(Direction::Received, &record(0)).unwrap(), 2);
        for _ in 0..3 {
            r.feed(Direction::Received, &record(100)).unwrap();
        }
        for len in [MAX_PAYLOAD + 1, 0xffff] {
            let mut r = Recorder::new(unlimited);
            // The header alone is refused: nothing waits for 64 KiB.
            assert!(r.feed(Direction::Received, &record(len)[..5]).is_err());
        }
        // Header cut anywhere: waits, no error, nothing recorded.
        let mut r = Recorder::new(unlimited);
        let full = record(10);
        for i in 0..full.len() {
            assert_eq!(
                r.feed(Direction::Sent, &full[i..i + 1]).unwrap(),
                (i + 1 == full.len()) as usize
            );
        }
        // A truncated record at the end is dropped from the transcript.
        let mut r = Recorder::new(unlimited);
        r.feed(Direction::Sent, &record(10)[..9]).unwrap();
        assert!(r.finish().sent.is_empty());
    }

    #[test]
    fn limits_enforced() {
        let limits = RecorderLimits {
            max_sent_bytes: 20,
            max_recv_bytes: 100,
            max_sent_records: 10,
            max_recv_records: 2,
        };
        let mut r = Recorder::new(limits);
        assert!(matches!(
            r.feed(Direction::Sent, &[0u8; 21]),
            Err(TlsError::Limit(_))
        ));
        let mut r = Recorder::new(limits);
        let rec = [23u8, 3, 3, 0, 1, 0];
        r.feed(Direction::Received, &rec).unwrap();
        r.feed(Direction::Received, &rec).unwrap();
        assert!(matches!(
            r.feed(Direction::Received, &rec),
            Err(TlsError::Limit(_))
        ));
    }
}
