//! Attestations: what the verifier (notary) signs after a session.
//!
//! # Binary encoding of the attestation body (format version 4)
//!
//! All integers big-endian. This exact byte string is what is signed
//! (Ed25519 over the bytes, secp256k1 over their Keccak-256; see
//! [`crate::keys`]).
//!
//! | offset | length | field |
//! |---|---|---|
//! | 0   | 4  | magic, ASCII `WPAT` |
//! | 4   | 2  | format version, `4` (older versions are refused: version 3 does not say which sent bytes hold no line end, version 2 which mode produced it, version 1 has no session facts) |
//! | 6   | 2  | TLS version: `0x0303` (1.2) or `0x0304` (1.3) |
//! | 8   | 2  | cipher suite, IANA code (one of [`CipherSuite`], matching the version) |
//! | 10  | 8  | session time, Unix seconds |
//! | 18  | 32 | key id of the signing key |
//! | 50  | 4  | sent (client to server) plaintext length |
//! | 54  | 4  | received plaintext length |
//! | 58  | 4  | number of commitment leaves |
//! | 62  | 32 | Merkle root of the commitment leaves ([`crate::commit`], [`crate::merkle`]) |
//! | 94  | 32 | handshake hash: [`ServerIdentity::hash`] of the server identity data checked |
//! | 126 | 1  | server name length `n`, 1..=253 |
//! | 127 | n  | server name: lowercase ASCII `[a-z0-9.:-]` (DNS name or IP literal) |
//! | 127+n | 1 | proof mode ([`ProofMode`]): `1` proxy, `2` MPC |
//! | 128+n | 2 | server TCP port the verifier connected to (`0`: not recorded) |
//! | 130+n | 1 | server close_notify: `0` none seen, `1` the server closed with close_notify, `2` not established |
//! | 131+n | 4 | server records the verifier relayed after the prover's cut (dropped from the transcript); `0xffffffff`: not established |
//! | 135+n | 1 | response completeness: `0` unknown, `1` complete, `2` truncated |
//! | 136+n | 2 | order span count `m`, at most [`MAX_ORDER_SPANS`] |
//! | 138+n | 9m | order spans, each: direction u8 (`0` sent, `1` received), start u32, end u32 |
//! | 138+n+9m | 2 | line-end-free span count `r`, at most [`MAX_CRLF_FREE_SPANS`] |
//! | 140+n+9m | 8r | line-end-free spans of the sent data, each: start u32, end u32; non-empty, sorted, disjoint, within the sent length |
//!
//! Bytes 127+n.. are the [`SessionFacts`]: the mode, and what the verifier
//! observed of the session itself. What each fact means depends on the
//! mode (`SECURITY.md`, "What an attestation states"): in MPC mode the
//! verifier never sees the wire, so the port, the close_notify and the
//! records after the cut are "not established", and the order is the
//! prover's report. Any other mode, flag, completeness or direction byte
//! is refused.
//! The order spans describe both directions' application data in the order
//! the verifier recorded it: every span is non-empty, consecutive spans have
//! different directions, and per direction the spans are consecutive
//! (the first starts at 0, each starts where the previous one of its
//! direction ended) and the last ends at the direction's length. The list is
//! empty only if both lengths are 0. Signing and decoding (binary and JSON)
//! both check this.
//! The line-end-free spans are sent bytes the verifier knows to hold no CR
//! or LF: bytes it saw, and hidden request-head bytes the proof showed
//! free of both. With the framing a presentation reveals, they let a
//! relying party fix where each request ends and so pair each response
//! with the request it answers (`webproof_disclosure::exchange`), however
//! little of the requests' lines and values the presentation shows.
//!
//! # Signed attestation
//!
//! `body ‖ scheme (1 byte: 1 secp256k1, 2 Ed25519) ‖ signature` (65 bytes
//! `r ‖ s ‖ v` or 64 bytes), nothing after.
//!
//! # Server identity data
//!
//! `count (1 byte, 1..=16) ‖ count × (length u32, 1..=65536 ‖ DER certificate)`,
//! leaf certificate first; its hash is `SHA-256("webproof/server-identity/v1" ‖ encoding)`.

use std::fmt;

use sha2::{Digest, Sha256};

use crate::encoding::{hex_array, hex_bytes, Reader, Writer};
use crate::error::{DecodeError, Error, Result, VerifyError};
use crate::keys::{KeyId, Scheme, Signature, SigningKey, VerifyingKey};
use crate::merkle::Hash;
use crate::transcript::Direction;

pub const ATTESTATION_MAGIC: [u8; 4] = *b"WPAT";
pub const ATTESTATION_VERSION: u16 = 4;
pub const MAX_SERVER_NAME_LEN: usize = 253;
pub const MAX_CERTS: usize = 16;
pub const MAX_CERT_LEN: usize = 65536;
/// Most spans [`SessionFacts::order`] may hold.
pub const MAX_ORDER_SPANS: usize = 4096;
/// Most spans [`SessionFacts::sent_crlf_free`] may hold (a verifier lists
/// the first this many).
pub const MAX_CRLF_FREE_SPANS: usize = 4096;
/// Fixed part of the body, before the server name.
const BODY_FIXED_LEN: usize = 127;
/// Fixed part of the session facts: the fields before the order spans,
/// and the line-end-free span count.
const FACTS_FIXED_LEN: usize = 1 + 2 + 1 + 4 + 1 + 2 + 2;
/// Encoded length of one order span.
const ORDER_SPAN_LEN: usize = 1 + 4 + 4;

/// Whether the HTTP response was seen to be complete.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Completeness {
    /// The verifier did not establish it (a relying party must check the
    /// framing itself, for example a revealed `Content-Length`).
    Unknown,
    /// The response was seen to end where its HTTP framing says it ends.
    Complete,
    /// The response was cut before its end.
    Truncated,
}

impl Completeness {
    /// The byte that encodes it.
    pub const fn to_byte(self) -> u8 {
        match self {
            Completeness::Unknown => 0,
            Completeness::Complete => 1,
            Completeness::Truncated => 2,
        }
    }

    pub const fn from_byte(b: u8) -> Option<Self> {
        match b {
            0 => Some(Completeness::Unknown),
            1 => Some(Completeness::Complete),
            2 => Some(Completeness::Truncated),
            _ => None,
        }
    }
}

impl fmt::Display for Completeness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Completeness::Unknown => "unknown",
            Completeness::Complete => "complete",
            Completeness::Truncated => "truncated",
        })
    }
}

/// A run of application data in the order the verifier recorded it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OrderSpan {
    pub direction: Direction,
    /// First byte of the run, an offset in its direction's stream.
    pub start: u32,
    /// One past the last byte of the run.
    pub end: u32,
}

impl OrderSpan {
    /// The order of a session in which all sent data came before all
    /// received data: one span per non-empty direction, sent first.
    pub fn sent_then_received(sent_len: u32, received_len: u32) -> Vec<OrderSpan> {
        [
            (Direction::Sent, sent_len),
            (Direction::Received, received_len),
        ]
        .into_iter()
        .filter(|&(_, len)| len > 0)
        .map(|(direction, end)| OrderSpan {
            direction,
            start: 0,
            end,
        })
        .collect()
    }
}

impl fmt::Display for OrderSpan {
    /// `sent 0..120`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}..{}", self.direction, self.start, self.end)
    }
}

/// Which of webproof's modes produced an attestation: it decides what the
/// [`SessionFacts`] mean (`SECURITY.md` has the table, field by field).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProofMode {
    /// The verifier relayed the TLS connection and recorded every record
    /// on the wire; a zero-knowledge proof showed what they decrypt to.
    Proxy,
    /// The verifier was one party of a two-party TLS client and never saw
    /// the wire: the prover moved the server's bytes. Facts about the
    /// connection itself are the prover's report or not established.
    Mpc,
}

impl ProofMode {
    /// The byte that encodes it.
    pub const fn to_byte(self) -> u8 {
        match self {
            ProofMode::Proxy => 1,
            ProofMode::Mpc => 2,
        }
    }

    pub const fn from_byte(b: u8) -> Option<Self> {
        match b {
            1 => Some(ProofMode::Proxy),
            2 => Some(ProofMode::Mpc),
            _ => None,
        }
    }
}

impl fmt::Display for ProofMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ProofMode::Proxy => "proxy mode (the verifier relayed the connection)",
            ProofMode::Mpc => "MPC mode (the verifier was one half of the TLS client)",
        })
    }
}

/// How the attested response ended, as far as the signed facts show
/// ([`SessionFacts::ending`]). Anything but [`ResponseEnd::Complete`] and
/// [`ResponseEnd::ClosedByServer`] means the server may have sent more
/// than the transcript holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResponseEnd {
    /// The HTTP framing the verifier checked says the response is whole.
    Complete,
    /// The server closed with close_notify and nothing it sent was left out.
    ClosedByServer,
    /// The HTTP framing says the response was cut before its end.
    Truncated,
    /// The prover cut the transcript: this many server records were left out.
    Cut { records: u32 },
    /// Neither a close_notify nor the framing shows the end: the server
    /// may have sent more (always so in MPC mode unless the framing is
    /// revealed).
    PossiblyTruncated,
}

impl ResponseEnd {
    /// Whether the server may have sent more than the transcript holds.
    pub fn may_be_truncated(self) -> bool {
        !matches!(self, ResponseEnd::Complete | ResponseEnd::ClosedByServer)
    }
}

impl fmt::Display for ResponseEnd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResponseEnd::Complete => f.write_str("complete (its HTTP framing ends where it ends)"),
            ResponseEnd::ClosedByServer => f.write_str("ended by the server's close_notify"),
            ResponseEnd::Truncated => {
                f.write_str("TRUNCATED (its HTTP framing says there is more)")
            }
            ResponseEnd::Cut { records } => write!(
                f,
                "TRUNCATED: {records} server record(s) after the prover's cut are left out"
            ),
            ResponseEnd::PossiblyTruncated => f.write_str(
                "POSSIBLY TRUNCATED: no close_notify was proven and the framing does not show \
                 the end; the server may have sent more",
            ),
        }
    }
}

/// Facts about the session, as the verifier could establish them in the
/// attestation's [`ProofMode`]. `None` means "not established": a relying
/// party must not read it as `false` or `0`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionFacts {
    /// Which mode produced the attestation; it decides what the other
    /// facts mean.
    pub mode: ProofMode,
    /// The server's TCP port the verifier connected to (0: not recorded;
    /// always 0 in MPC mode, where the verifier connects to no server).
    pub server_port: u16,
    /// Whether the server closed the TLS session with close_notify. Without
    /// it, the server may have had more to send. `None`: not established
    /// (MPC mode: the closing alert is encrypted and not proven).
    pub server_close_notify: Option<bool>,
    /// Server records the verifier relayed after the prover's cut (dropped
    /// from the transcript). `None`: not established (MPC mode: the prover
    /// may stop forwarding at any record boundary unseen).
    pub server_records_after_cut: Option<u32>,
    /// Whether the HTTP response was seen to be complete.
    pub response_complete: Completeness,
    /// Application data of both directions in the order the verifier
    /// recorded it (MPC mode: the order of the prover's reports).
    pub order: Vec<OrderSpan>,
    /// Spans of the sent data the verifier knows to hold no CR or LF (see
    /// the module docs): sorted, disjoint, non-empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sent_crlf_free: Vec<core::ops::Range<u32>>,
}

/// Encodes "not established" for the records after the cut.
const AFTER_CUT_UNKNOWN: u32 = u32::MAX;
/// Encodes "not established" for the close_notify.
const CLOSE_NOTIFY_UNKNOWN: u8 = 2;

impl SessionFacts {
    /// Checks the order against the transcript lengths (see the module
    /// docs): non-empty spans alternating in direction, each direction
    /// covered from 0 to its length in consecutive spans, at most
    /// [`MAX_ORDER_SPANS`] spans.
    pub fn validate(&self, sent_len: u32, received_len: u32) -> Result<(), DecodeError> {
        if self.server_records_after_cut == Some(AFTER_CUT_UNKNOWN) {
            return Err(DecodeError::TooLarge {
                what: "server records after the cut",
                len: AFTER_CUT_UNKNOWN as usize,
                max: AFTER_CUT_UNKNOWN as usize - 1,
            });
        }
        if self.order.len() > MAX_ORDER_SPANS {
            return Err(DecodeError::TooLarge {
                what: "order spans",
                len: self.order.len(),
                max: MAX_ORDER_SPANS,
            });
        }
        let mut next = [0u32; 2];
        let mut previous: Option<Direction> = None;
        for (index, span) in self.order.iter().enumerate() {
            if span.start >= span.end {
                return Err(DecodeError::EmptyOrderSpan { index });
            }
            if previous == Some(span.direction) {
                return Err(DecodeError::OrderNotAlternating { index });
            }
            previous = Some(span.direction);
            let expected = &mut next[span.direction.to_byte() as usize];
            if span.start != *expected {
                return Err(DecodeError::OrderSpanMisplaced {
                    index,
                    direction: span.direction,
                    start: span.start,
                    expected: *expected,
                });
            }
            *expected = span.end;
        }
        if self.sent_crlf_free.len() > MAX_CRLF_FREE_SPANS {
            return Err(DecodeError::TooLarge {
                what: "line-end-free spans",
                len: self.sent_crlf_free.len(),
                max: MAX_CRLF_FREE_SPANS,
            });
        }
        let mut after = 0;
        for (index, r) in self.sent_crlf_free.iter().enumerate() {
            if r.start < after || r.end <= r.start || r.end > sent_len {
                return Err(DecodeError::CrlfFreeSpanMisplaced {
                    index,
                    start: r.start,
                    end: r.end,
                    sent_len,
                });
            }
            after = r.end;
        }
        for (direction, len) in [
            (Direction::Sent, sent_len),
            (Direction::Received, received_len),
        ] {
            let end = next[direction.to_byte() as usize];
            if end != len {
                return Err(DecodeError::OrderEnd {
                    direction,
                    end,
                    len,
                });
            }
        }
        Ok(())
    }

    /// How the response ended, judged on these facts alone.
    pub fn ending(&self) -> ResponseEnd {
        match (
            self.response_complete,
            self.server_records_after_cut,
            self.server_close_notify,
        ) {
            (Completeness::Truncated, _, _) => ResponseEnd::Truncated,
            (_, Some(records), _) if records > 0 => ResponseEnd::Cut { records },
            (Completeness::Complete, _, _) => ResponseEnd::Complete,
            (_, Some(0), Some(true)) => ResponseEnd::ClosedByServer,
            _ => ResponseEnd::PossiblyTruncated,
        }
    }

    fn write(&self, w: &mut Writer) {
        w.u8(self.mode.to_byte());
        w.u16(self.server_port);
        w.u8(match self.server_close_notify {
            Some(b) => u8::from(b),
            None => CLOSE_NOTIFY_UNKNOWN,
        });
        w.u32(self.server_records_after_cut.unwrap_or(AFTER_CUT_UNKNOWN));
        w.u8(self.response_complete.to_byte());
        w.u16(self.order.len() as u16);
        for span in &self.order {
            w.u8(span.direction.to_byte());
            w.u32(span.start);
            w.u32(span.end);
        }
        w.u16(self.sent_crlf_free.len() as u16);
        for r in &self.sent_crlf_free {
            w.u32(r.start);
            w.u32(r.end);
        }
    }

    /// Reads the facts; the caller validates them against the lengths.
    fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let m = r.u8("proof mode")?;
        let mode = ProofMode::from_byte(m).ok_or(DecodeError::InvalidFlag {
            what: "proof mode",
            value: m,
        })?;
        let server_port = r.u16("server port")?;
        let server_close_notify = match r.u8("server close_notify")? {
            0 => Some(false),
            1 => Some(true),
            CLOSE_NOTIFY_UNKNOWN => None,
            value => {
                return Err(DecodeError::InvalidFlag {
                    what: "server close_notify",
                    value,
                })
            }
        };
        let server_records_after_cut = match r.u32("server records after the cut")? {
            AFTER_CUT_UNKNOWN => None,
            n => Some(n),
        };
        let c = r.u8("response completeness")?;
        let response_complete =
            Completeness::from_byte(c).ok_or(DecodeError::InvalidCompleteness(c))?;
        let count = r.u16("order span count")? as usize;
        let count = r.check_count(count, ORDER_SPAN_LEN, MAX_ORDER_SPANS, "order spans")?;
        let mut order = Vec::with_capacity(count);
        for _ in 0..count {
            let d = r.u8("order span direction")?;
            let direction = Direction::from_byte(d).ok_or(DecodeError::InvalidDirection(d))?;
            let start = r.u32("order span start")?;
            let end = r.u32("order span end")?;
            order.push(OrderSpan {
                direction,
                start,
                end,
            });
        }
        let count = r.u16("line-end-free span count")? as usize;
        let count = r.check_count(count, 8, MAX_CRLF_FREE_SPANS, "line-end-free spans")?;
        let mut sent_crlf_free = Vec::with_capacity(count);
        for _ in 0..count {
            let start = r.u32("line-end-free span start")?;
            sent_crlf_free.push(start..r.u32("line-end-free span end")?);
        }
        Ok(Self {
            mode,
            server_port,
            server_close_notify,
            server_records_after_cut,
            response_complete,
            order,
            sent_crlf_free,
        })
    }
}

// The TLS vocabulary (`TlsVersion`, `CipherSuite`) is `webproof_tls`'s,
// which every crate uses.
pub use webproof_tls::suite::{CipherSuite, TlsVersion};

/// Lowercases and checks a server name for an attestation.
pub fn normalize_server_name(name: &str) -> Result<String> {
    let lower = name.to_ascii_lowercase();
    if valid_server_name(lower.as_bytes()) {
        Ok(lower)
    } else {
        Err(Error::InvalidServerName(name.to_string()))
    }
}

fn valid_server_name(b: &[u8]) -> bool {
    !b.is_empty()
        && b.len() <= MAX_SERVER_NAME_LEN
        && b.iter()
            .all(|c| matches!(c, b'a'..=b'z' | b'0'..=b'9' | b'.' | b'-' | b':'))
}

/// The server's certificate chain as the verifier saw it (DER, leaf first).
#[derive(Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "ServerIdentityJson", into = "ServerIdentityJson")]
pub struct ServerIdentity {
    cert_chain: Vec<Vec<u8>>,
}

#[derive(serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ServerIdentityJson {
    cert_chain: Vec<HexBytes>,
}

#[derive(serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub(crate) struct HexBytes(#[serde(with = "hex_bytes")] pub(crate) Vec<u8>);

impl TryFrom<ServerIdentityJson> for ServerIdentity {
    type Error = Error;
    fn try_from(j: ServerIdentityJson) -> Result<Self> {
        ServerIdentity::new(j.cert_chain.into_iter().map(|c| c.0).collect())
    }
}

impl From<ServerIdentity> for ServerIdentityJson {
    fn from(s: ServerIdentity) -> Self {
        ServerIdentityJson {
            cert_chain: s.cert_chain.into_iter().map(HexBytes).collect(),
        }
    }
}

impl ServerIdentity {
    pub fn new(cert_chain: Vec<Vec<u8>>) -> Result<Self> {
        if cert_chain.is_empty() {
            return Err(DecodeError::Empty {
                what: "certificate chain",
            }
            .into());
        }
        if cert_chain.len() > MAX_CERTS {
            return Err(DecodeError::TooLarge {
                what: "certificate chain",
                len: cert_chain.len(),
                max: MAX_CERTS,
            }
            .into());
        }
        for c in &cert_chain {
            if c.is_empty() {
                return Err(DecodeError::Empty {
                    what: "certificate",
                }
                .into());
            }
            if c.len() > MAX_CERT_LEN {
                return Err(DecodeError::TooLarge {
                    what: "certificate",
                    len: c.len(),
                    max: MAX_CERT_LEN,
                }
                .into());
            }
        }
        Ok(Self { cert_chain })
    }

    pub fn cert_chain(&self) -> &[Vec<u8>] {
        &self.cert_chain
    }

    pub(crate) fn write(&self, w: &mut Writer) {
        w.u8(self.cert_chain.len() as u8);
        for c in &self.cert_chain {
            w.u32(c.len() as u32);
            w.bytes(c);
        }
    }

    pub(crate) fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let count = r.u8("certificate count")? as usize;
        if count == 0 {
            return Err(DecodeError::Empty {
                what: "certificate chain",
            });
        }
        let count = r.check_count(count, 5, MAX_CERTS, "certificate chain")?;
        let mut chain = Vec::with_capacity(count);
        for _ in 0..count {
            let len = r.u32("certificate length")? as usize;
            if len == 0 {
                return Err(DecodeError::Empty {
                    what: "certificate",
                });
            }
            if len > MAX_CERT_LEN {
                return Err(DecodeError::TooLarge {
                    what: "certificate",
                    len,
                    max: MAX_CERT_LEN,
                });
            }
            chain.push(r.take(len, "certificate")?.to_vec());
        }
        Ok(Self { cert_chain: chain })
    }

    /// The value an attestation's `handshake_hash` holds for this identity.
    pub fn hash(&self) -> Hash {
        let mut w = Writer::new();
        self.write(&mut w);
        let mut h = Sha256::new();
        h.update(b"webproof/server-identity/v1");
        h.update(w.into_bytes());
        h.finalize().into()
    }
}

impl fmt::Debug for ServerIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerIdentity")
            .field("certificates", &self.cert_chain.len())
            .field("hash", &hex::encode(self.hash()))
            .finish()
    }
}

/// Refuses any format version but this build's, naming what an old one
/// lacks.
fn check_version(version: u16) -> Result<(), DecodeError> {
    match version {
        ATTESTATION_VERSION => Ok(()),
        3 => Err(DecodeError::OutdatedVersion {
            what: "attestation",
            version,
            lacks:
                "the sent bytes known to hold no line end, which pair a response with its request",
            current: ATTESTATION_VERSION,
        }),
        2 => Err(DecodeError::OutdatedVersion {
            what: "attestation",
            version,
            lacks: "the proof mode (proxy or MPC) that decides what its session facts mean",
            current: ATTESTATION_VERSION,
        }),
        1 => Err(DecodeError::OutdatedVersion {
            what: "attestation",
            version,
            lacks: "the session facts",
            current: ATTESTATION_VERSION,
        }),
        version => Err(DecodeError::UnsupportedVersion {
            what: "attestation",
            version,
        }),
    }
}

/// What the verifier fills in to make an attestation (the key id comes from
/// the signing key).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttestationFields {
    /// DNS name (or IP literal) the verifier checked the certificate for.
    pub server_name: String,
    /// Session time, Unix seconds.
    pub time: u64,
    pub cipher_suite: CipherSuite,
    pub sent_len: u32,
    pub received_len: u32,
    pub leaf_count: u32,
    pub transcript_root: Hash,
    pub handshake_hash: Hash,
    /// What the verifier observed of the session; its order must cover
    /// `sent_len` and `received_len` exactly ([`SessionFacts::validate`]).
    pub facts: SessionFacts,
}

/// An attestation body: validated, immutable.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Attestation {
    server_name: String,
    time: u64,
    cipher_suite: CipherSuite,
    key_id: KeyId,
    sent_len: u32,
    received_len: u32,
    leaf_count: u32,
    transcript_root: Hash,
    handshake_hash: Hash,
    facts: SessionFacts,
}

impl Attestation {
    pub fn server_name(&self) -> &str {
        &self.server_name
    }
    pub fn time(&self) -> u64 {
        self.time
    }
    pub fn tls_version(&self) -> TlsVersion {
        self.cipher_suite.version()
    }
    pub fn cipher_suite(&self) -> CipherSuite {
        self.cipher_suite
    }
    pub fn key_id(&self) -> KeyId {
        self.key_id
    }
    pub fn sent_len(&self) -> u32 {
        self.sent_len
    }
    pub fn received_len(&self) -> u32 {
        self.received_len
    }
    pub fn leaf_count(&self) -> u32 {
        self.leaf_count
    }
    pub fn transcript_root(&self) -> Hash {
        self.transcript_root
    }
    pub fn handshake_hash(&self) -> Hash {
        self.handshake_hash
    }
    /// What the verifier observed of the session.
    pub fn facts(&self) -> &SessionFacts {
        &self.facts
    }

    /// The canonical encoding (what is signed).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = Writer::new();
        w.bytes(&ATTESTATION_MAGIC);
        w.u16(ATTESTATION_VERSION);
        w.u16(self.tls_version().code());
        w.u16(self.cipher_suite.code());
        w.u64(self.time);
        w.bytes(&self.key_id.0);
        w.u32(self.sent_len);
        w.u32(self.received_len);
        w.u32(self.leaf_count);
        w.bytes(&self.transcript_root);
        w.bytes(&self.handshake_hash);
        w.u8(self.server_name.len() as u8);
        w.bytes(self.server_name.as_bytes());
        self.facts.write(&mut w);
        let out = w.into_bytes();
        debug_assert_eq!(
            out.len(),
            BODY_FIXED_LEN
                + self.server_name.len()
                + FACTS_FIXED_LEN
                + ORDER_SPAN_LEN * self.facts.order.len()
                + 8 * self.facts.sent_crlf_free.len()
        );
        out
    }

    pub(crate) fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        if r.array::<4>("attestation magic")? != ATTESTATION_MAGIC {
            return Err(DecodeError::BadMagic {
                expected: "attestation",
            });
        }
        check_version(r.u16("attestation version")?)?;
        let tls = r.u16("TLS version")?;
        let tls_version = TlsVersion::from_code(tls).ok_or(DecodeError::UnknownTlsVersion(tls))?;
        let suite = r.u16("cipher suite")?;
        let cipher_suite =
            CipherSuite::from_code(suite).ok_or(DecodeError::UnknownCipherSuite(suite))?;
        if cipher_suite.version() != tls_version {
            return Err(DecodeError::SuiteVersionMismatch {
                suite,
                version: tls,
            });
        }
        let time = r.u64("time")?;
        let key_id = KeyId(r.array("key id")?);
        let sent_len = r.u32("sent length")?;
        let received_len = r.u32("received length")?;
        let leaf_count = r.u32("leaf count")?;
        let transcript_root = r.array("transcript root")?;
        let handshake_hash = r.array("handshake hash")?;
        let name_len = r.u8("server name length")? as usize;
        let name = r.take(name_len, "server name")?;
        if !valid_server_name(name) {
            return Err(DecodeError::InvalidServerName);
        }
        let server_name =
            String::from_utf8(name.to_vec()).map_err(|_| DecodeError::InvalidServerName)?;
        let facts = SessionFacts::read(r)?;
        facts.validate(sent_len, received_len)?;
        Ok(Self {
            server_name,
            time,
            cipher_suite,
            key_id,
            sent_len,
            received_len,
            leaf_count,
            transcript_root,
            handshake_hash,
            facts,
        })
    }

    /// Decodes a body on its own (strict: no trailing bytes).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        let mut r = Reader::new(bytes);
        let a = Self::read(&mut r)?;
        r.finish()?;
        Ok(a)
    }

    /// Fills in `fields` with `key`'s id and signs the result. Refuses
    /// facts whose order does not fit the lengths ([`SessionFacts::validate`]).
    pub fn sign(fields: AttestationFields, key: &SigningKey) -> Result<SignedAttestation> {
        fields
            .facts
            .validate(fields.sent_len, fields.received_len)?;
        let attestation = Attestation {
            server_name: normalize_server_name(&fields.server_name)?,
            time: fields.time,
            cipher_suite: fields.cipher_suite,
            key_id: key.key_id(),
            sent_len: fields.sent_len,
            received_len: fields.received_len,
            leaf_count: fields.leaf_count,
            transcript_root: fields.transcript_root,
            handshake_hash: fields.handshake_hash,
            facts: fields.facts,
        };
        let signature = key.sign(&attestation.to_bytes())?;
        Ok(SignedAttestation {
            attestation,
            signature,
        })
    }
}

/// An attestation with the verifier's signature.
#[derive(Clone, PartialEq, Eq, Debug, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "SignedAttestationJson", into = "SignedAttestationJson")]
pub struct SignedAttestation {
    attestation: Attestation,
    signature: Signature,
}

impl SignedAttestation {
    pub fn attestation(&self) -> &Attestation {
        &self.attestation
    }

    pub fn signature(&self) -> &Signature {
        &self.signature
    }

    /// Checks the signature with the trusted key whose id the attestation
    /// names; returns that key.
    pub fn verify<'k>(&self, trusted: &'k [VerifyingKey]) -> Result<&'k VerifyingKey, VerifyError> {
        let key_id = self.attestation.key_id;
        let key = trusted
            .iter()
            .find(|k| k.key_id() == key_id)
            .ok_or_else(|| VerifyError::UntrustedKey {
                key_id: key_id.to_string(),
            })?;
        key.verify(&self.attestation.to_bytes(), &self.signature)?;
        Ok(key)
    }

    pub(crate) fn write(&self, w: &mut Writer) {
        w.bytes(&self.attestation.to_bytes());
        w.u8(self.signature.scheme().to_byte());
        w.bytes(self.signature.as_bytes());
    }

    pub(crate) fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let attestation = Attestation::read(r)?;
        let scheme_byte = r.u8("signature scheme")?;
        let scheme =
            Scheme::from_byte(scheme_byte).ok_or(DecodeError::UnknownScheme(scheme_byte))?;
        let sig = r.take(scheme.signature_len(), "signature")?;
        Ok(Self {
            attestation,
            signature: Signature::from_parts(scheme, sig)?,
        })
    }

    /// Binary encoding (see the module docs).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = Writer::new();
        self.write(&mut w);
        w.into_bytes()
    }

    /// Strict decoding of [`SignedAttestation::to_bytes`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        let mut r = Reader::new(bytes);
        let a = Self::read(&mut r)?;
        r.finish()?;
        Ok(a)
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("serializing plain data cannot fail")
    }

    pub fn from_json(s: &str) -> Result<Self, DecodeError> {
        let j: SignedAttestationJson =
            serde_json::from_str(s).map_err(|e| DecodeError::Json(e.to_string()))?;
        j.try_into()
    }
}

/// JSON form of an attestation body.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AttestationJson {
    version: u16,
    server_name: String,
    time: u64,
    tls_version: TlsVersion,
    cipher_suite: CipherSuite,
    #[serde(with = "hex_array")]
    key_id: [u8; 32],
    sent_len: u32,
    received_len: u32,
    leaf_count: u32,
    #[serde(with = "hex_array")]
    transcript_root: [u8; 32],
    #[serde(with = "hex_array")]
    handshake_hash: [u8; 32],
    facts: SessionFacts,
}

#[derive(serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SignatureJson {
    scheme: Scheme,
    #[serde(with = "hex_bytes")]
    bytes: Vec<u8>,
}

#[derive(serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SignedAttestationJson {
    attestation: AttestationJson,
    signature: SignatureJson,
}

impl TryFrom<AttestationJson> for Attestation {
    type Error = DecodeError;
    fn try_from(j: AttestationJson) -> Result<Self, DecodeError> {
        check_version(j.version)?;
        if j.cipher_suite.version() != j.tls_version {
            return Err(DecodeError::SuiteVersionMismatch {
                suite: j.cipher_suite.code(),
                version: j.tls_version.code(),
            });
        }
        if !valid_server_name(j.server_name.as_bytes()) {
            return Err(DecodeError::InvalidServerName);
        }
        j.facts.validate(j.sent_len, j.received_len)?;
        Ok(Attestation {
            server_name: j.server_name,
            time: j.time,
            cipher_suite: j.cipher_suite,
            key_id: KeyId(j.key_id),
            sent_len: j.sent_len,
            received_len: j.received_len,
            leaf_count: j.leaf_count,
            transcript_root: j.transcript_root,
            handshake_hash: j.handshake_hash,
            facts: j.facts,
        })
    }
}

impl From<&Attestation> for AttestationJson {
    fn from(a: &Attestation) -> Self {
        AttestationJson {
            version: ATTESTATION_VERSION,
            server_name: a.server_name.clone(),
            time: a.time,
            tls_version: a.tls_version(),
            cipher_suite: a.cipher_suite,
            key_id: a.key_id.0,
            sent_len: a.sent_len,
            received_len: a.received_len,
            leaf_count: a.leaf_count,
            transcript_root: a.transcript_root,
            handshake_hash: a.handshake_hash,
            facts: a.facts.clone(),
        }
    }
}

impl TryFrom<SignedAttestationJson> for SignedAttestation {
    type Error = DecodeError;
    fn try_from(j: SignedAttestationJson) -> Result<Self, DecodeError> {
        Ok(SignedAttestation {
            attestation: j.attestation.try_into()?,
            signature: Signature::from_parts(j.signature.scheme, &j.signature.bytes)?,
        })
    }
}

impl From<SignedAttestation> for SignedAttestationJson {
    fn from(s: SignedAttestation) -> Self {
        SignedAttestationJson {
            attestation: (&s.attestation).into(),
            signature: SignatureJson {
                scheme: s.signature.scheme(),
                bytes: s.signature.as_bytes().to_vec(),
            },
        }
    }
}
