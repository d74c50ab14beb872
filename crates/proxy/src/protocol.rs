//! The prover/verifier protocol ([`PROTOCOL_VERSION`]): message types and the relay
//! framing, without I/O. The sequencing of these messages (who sends what
//! when, and what each party decides on receiving it) is in
//! [`crate::session`].
//!
//! A session has three phases on one byte stream:
//! 1. **setup** (framed JSON, [`ProverMsg::Hello`], [`VerifierMsg::Accepted`]
//!    or `Refused`, the first part of the proof's preprocessing, then
//!    [`VerifierMsg::Ready`]): the prover names the server; the verifier
//!    connects to it while the preprocessing runs;
//! 2. **relay**, multiplexed with the rest of the preprocessing (two streams
//!    in chunks, see `webproof_session::mux`; the relay's chunks go first).
//!    The relay stream carries [`RelayFrame`]s: TLS bytes both ways, the verifier records
//!    them; the verifier announces the end of the server's stream with
//!    `ServerClosed`, the prover ends with `Close`, naming how many records
//!    of each direction it holds: the transcript is cut there (the verifier
//!    drops server records it relayed after that point, which the prover
//!    could have excluded anyway by closing earlier). The verifier confirms
//!    with `CloseAck` carrying the digest of the cut transcript. The prover
//!    does not wait for it: its proof follows its `Close` at once, and it
//!    checks the digest before it accepts the verdict;
//! 3. **proof**: [`ProverMsg::Proof`] (framed JSON), at once followed by the
//!    zero-knowledge proof's stream, and the verifier's
//!    [`VerifierMsg::Verdict`]. A verifier that rejects the handshake sends
//!    the `Verdict` in place of the proof's 1-byte verdict (the proof
//!    engine hands it up as an abort) and reads the rest of the proof away.
//!    The verdict carries the verified output without the disclosed bytes
//!    (lengths, revealed ranges and a digest of their bytes per direction,
//!    see `disclosure::disclosure_digest`): the prover holds those bytes.
//!    The abort is part of this wire: `webproof_core::Error::PeerAbort`
//!    carries the encoded `Verdict` up from the engine.
//!
//! A verifier that refuses a session (`Refused`), rejects a proof (a
//! `Verdict` with an error) or fails its relay (`CloseAck` with an error)
//! says why with a [`Rejection`]: a [`RejectKind`] the prover can act on
//! and a detail for humans, as a TLS alert does.
//!
//! All frames are a little-endian `u32` length then the payload, the format
//! of `webproof_core::Channel`, so the same stream can be carried by TCP or
//! a WebSocket.

use crate::error::{ProxyError, Result};
use crate::output::DigestedOutput;
use crate::record::RecorderLimits;
use serde::{Deserialize, Serialize};

/// The protocol version spoken by this crate; a peer of another version is
/// refused at the hello. `docs/protocol/versions.md` says what each version
/// changed (30: proxy sessions expecting up to 1.44 M COTs run the small
/// LPN set).
pub const PROTOCOL_VERSION: u16 = 30;
/// Largest control message (JSON) accepted by default. The prover's
/// `Proof` is the largest: for a 16 MiB response its plan holds about
/// 1,000 record layouts (40 bytes each) and, with an attestation, one leaf
/// range per committed chunk (78,000 leaves of 215 bytes, 57 bytes each:
/// 4.4 MB).
pub const MAX_CONTROL_MSG: usize = 16 << 20;
/// Largest verdict a prover accepts. The verdict does not carry the data,
/// but its revealed ranges are as many as the prover disclosed, and the
/// prover's plan may be as large as the verifier's configured message
/// limit (at most 64 MiB in the service).
pub const MAX_VERDICT_MSG: usize = 64 << 20;
/// Largest relay frame payload.
pub const MAX_RELAY_DATA: usize = 1 << 16;

/// Messages from the prover.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProverMsg {
    /// Open a session to `host:port`.
    Hello {
        /// Protocol version the prover speaks.
        version: u16,
        /// The server host name (DNS name or IP) the TLS session is for.
        host: String,
        /// TCP port.
        port: u16,
        /// The prover's API key, if the verifier requires one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        api_key: Option<String>,
        /// COTs the prover expects its proof to draw (from the request size
        /// and the response size it expects): both parties size the first
        /// iteration of the proof's preprocessing from it. The verifier
        /// bounds it and refuses a hello without a usable value.
        #[serde(default)]
        expected_cots: u64,
        /// Present for an MPC-mode session (`webproof_mpc_tls`): the
        /// prover connects to the server itself and the parties act as the
        /// TLS client together; absent, the verifier relays (proxy mode).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mpc: Option<MpcHello>,
    },
    /// The proof's announcement; the proof's stream follows at once.
    Proof {
        /// How the statement is established.
        payload: ProofPayload,
    },
}

/// What an MPC-mode hello states beyond proxy mode's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MpcHello {
    /// Bytes of the HTTP request: its records are encrypted in 2PC, so
    /// both parties size the session's correlated OTs from it. The
    /// verifier bounds it.
    pub request_len: u64,
}

/// The proof of the statement. One kind today; an enum so that another
/// (MPC mode's) can sit beside it on the same wire.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProofPayload {
    /// A zero-knowledge proof, run over the link right after this message.
    Zk {
        /// The prover's announcement (record layout, disclosed ranges).
        plan: crate::zk::ZkPlan,
        /// TLS 1.3: the handshake traffic secrets, which the verifier uses to
        /// check the server's handshake flight and the proof binds to HS.
        handshake_secrets: Option<crate::verify::HandshakeSecrets>,
    },
}

/// Messages from the verifier.
// One message per flight, moved once: boxing the verdict saves nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VerifierMsg {
    /// The hello is accepted; the proof setup follows in the same flight.
    Accepted,
    /// Connected to the server; relay starts.
    Ready {
        /// Session time the certificate will be checked at (Unix seconds).
        time: u64,
        /// Limits the verifier enforces on the relay.
        limits: RecorderLimits,
    },
    /// The session was refused or failed before the relay.
    Refused(Rejection),
    /// The outcome of the proof phase.
    Verdict {
        /// The verified output without the data, or why it was rejected.
        /// The prover holds the data: it rebuilds the output from its own
        /// plaintext and the revealed ranges, and refuses a verdict whose
        /// lengths, ranges or digests are not those of its data
        /// ([`DigestedOutput::expand`]). So the verdict's size does not
        /// grow with the response.
        result: core::result::Result<DigestedOutput, Rejection>,
        /// The signed attestation, when the prover committed to its transcript.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        attestation: Option<AttestationReply>,
        /// The verifier's name for this session, which the prover hands to
        /// its application: the key under which a verifier service stores
        /// the result and announces it to webhooks. Absent from verifiers
        /// that keep nothing.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session_id: Option<SessionId>,
    },
}

/// A session's id: 128 random bits drawn by the verifier, written as 32
/// lowercase hex digits everywhere (wire, CLI, stored results, webhooks).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionId(pub [u8; 16]);

impl SessionId {
    /// A fresh id from `rng` (the verifier's OS generator).
    pub fn random(rng: &mut impl rand_core::RngCore) -> Self {
        let mut b = [0u8; 16];
        rng.fill_bytes(&mut b);
        SessionId(b)
    }
}

impl core::fmt::Display for SessionId {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(&hex::encode(self.0))
    }
}

impl core::fmt::Debug for SessionId {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "SessionId({self})")
    }
}

impl core::str::FromStr for SessionId {
    type Err = String;
    /// Exactly 32 lowercase hex digits: one spelling per id, so that an id
    /// compares equal as text wherever it is stored.
    fn from_str(s: &str) -> core::result::Result<Self, String> {
        let bad = || format!("session id {s:?}: expected 32 lowercase hex digits");
        if s.len() != 32
            || !s
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        {
            return Err(bad());
        }
        let v = hex::decode(s).map_err(|_| bad())?;
        Ok(SessionId(v.try_into().map_err(|_| bad())?))
    }
}

impl Serialize for SessionId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> core::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for SessionId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> core::result::Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// A signed attestation and the key that signed it (the disclosure layer's).
pub use webproof_disclosure::attest::AttestationReply;

/// Why a verifier refused a session, rejected a proof or failed its relay:
/// a reason code for programs and a detail for humans.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{kind}: {detail}")]
pub struct Rejection {
    /// The reason code.
    pub kind: RejectKind,
    /// What exactly, for humans (not to be parsed).
    pub detail: String,
}

impl Rejection {
    /// A rejection of `kind`.
    pub fn new(kind: RejectKind, detail: impl Into<String>) -> Self {
        Rejection {
            kind,
            detail: detail.into(),
        }
    }
}

impl From<&ProxyError> for Rejection {
    fn from(e: &ProxyError) -> Self {
        Rejection::new(RejectKind::from(e), e.to_string())
    }
}

/// The reason codes of a [`Rejection`]. Admission has its own codes; after
/// that they mirror [`ProxyError`]'s variants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RejectKind {
    /// The hello's protocol version is not this verifier's.
    Version,
    /// The hello's expected size is missing or out of bounds.
    SessionSize,
    /// No API key, or not one this verifier accepts.
    Unauthorized,
    /// The server name is not a valid DNS name or IP address.
    ServerName,
    /// The verifier's policy does not allow the server's address.
    Forbidden,
    /// The verifier could not reach the server.
    Unreachable,
    /// The verifier is at capacity or shutting down.
    Unavailable,
    /// A step took longer than the verifier allows.
    Timeout,
    /// [`ProxyError::Malformed`].
    Malformed,
    /// [`ProxyError::Unsupported`].
    Unsupported,
    /// [`ProxyError::Limit`].
    Limit,
    /// [`ProxyError::Incomplete`].
    Incomplete,
    /// [`ProxyError::Certificate`].
    Certificate,
    /// [`ProxyError::Signature`].
    Signature,
    /// [`ProxyError::Decrypt`].
    Decrypt,
    /// [`ProxyError::Tag`].
    Tag,
    /// [`ProxyError::Finished`].
    Finished,
    /// [`ProxyError::SecretMismatch`].
    SecretMismatch,
    /// [`ProxyError::HandshakeAlert`].
    HandshakeAlert,
    /// [`ProxyError::Opening`].
    Opening,
    /// [`ProxyError::Undelivered`].
    Undelivered,
    /// [`ProxyError::Attestation`].
    Attestation,
    /// [`ProxyError::Verdict`].
    Verdict,
    /// [`ProxyError::Protocol`], and a proof that did not verify.
    Protocol,
}

impl core::fmt::Display for RejectKind {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        // The wire name, so logs and JSON agree.
        let s = serde_json::to_string(self).expect("kinds serialize");
        f.write_str(s.trim_matches('"'))
    }
}

impl From<&ProxyError> for RejectKind {
    fn from(e: &ProxyError) -> Self {
        match e {
            ProxyError::Malformed { .. } => RejectKind::Malformed,
            ProxyError::Unsupported(_) => RejectKind::Unsupported,
            ProxyError::Limit(_) => RejectKind::Limit,
            ProxyError::Incomplete(_) => RejectKind::Incomplete,
            ProxyError::Certificate(_) => RejectKind::Certificate,
            ProxyError::Signature(_) => RejectKind::Signature,
            ProxyError::Decrypt { .. } => RejectKind::Decrypt,
            ProxyError::Tag { .. } => RejectKind::Tag,
            ProxyError::Finished(_) => RejectKind::Finished,
            ProxyError::SecretMismatch(_) => RejectKind::SecretMismatch,
            ProxyError::HandshakeAlert { .. } => RejectKind::HandshakeAlert,
            ProxyError::Opening(_) => RejectKind::Opening,
            ProxyError::Undelivered { .. } => RejectKind::Undelivered,
            ProxyError::Attestation(_) => RejectKind::Attestation,
            ProxyError::Verdict { .. } => RejectKind::Verdict,
            ProxyError::Protocol(_) => RejectKind::Protocol,
        }
    }
}

/// Encode a control message.
pub fn encode<T: Serialize>(m: &T) -> Vec<u8> {
    serde_json::to_vec(m).expect("protocol messages serialize")
}

/// Decode a control message.
pub fn decode<'a, T: Deserialize<'a>>(b: &'a [u8]) -> Result<T> {
    serde_json::from_slice(b).map_err(|e| ProxyError::Protocol(format!("undecodable message: {e}")))
}

/// One frame of the relay phase.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RelayFrame {
    /// TLS bytes (prover to verifier: for the server; verifier to prover: from the server).
    Data(Vec<u8>),
    /// Verifier to prover: the server's stream ended (reason for humans).
    ServerClosed(String),
    /// Prover to verifier: the prover is done with the TLS session; the
    /// transcript is its first `sent` client records and first `received`
    /// server records.
    Close {
        /// Client records the prover sent (all of them: the verifier must
        /// hold exactly this many).
        sent: u32,
        /// Server records the prover received before closing (the verifier
        /// must have relayed at least this many).
        received: u32,
    },
    /// Verifier to prover: relay over; the digest of the recorded transcript,
    /// or why recording failed.
    CloseAck(core::result::Result<[u8; 32], Rejection>),
}

impl RelayFrame {
    /// Encode as a frame payload (without the length prefix).
    pub fn encode(&self) -> Vec<u8> {
        match self {
            RelayFrame::Data(d) => {
                let mut v = Vec::with_capacity(d.len() + 1);
                v.push(0);
                v.extend_from_slice(d);
                v
            }
            RelayFrame::ServerClosed(r) => {
                let mut v = vec![1];
                v.extend_from_slice(r.as_bytes());
                v
            }
            RelayFrame::Close { sent, received } => {
                let mut v = vec![2];
                v.extend_from_slice(&sent.to_be_bytes());
                v.extend_from_slice(&received.to_be_bytes());
                v
            }
            RelayFrame::CloseAck(Ok(d)) => {
                let mut v = vec![3];
                v.extend_from_slice(d);
                v
            }
            RelayFrame::CloseAck(Err(e)) => {
                let mut v = vec![4];
                v.extend_from_slice(&encode(e));
                v
            }
        }
    }

    /// Decode a frame payload.
    pub fn decode(b: &[u8]) -> Result<Self> {
        let bad = |d: &str| ProxyError::Protocol(format!("relay frame: {d}"));
        let (&tag, rest) = b.split_first().ok_or_else(|| bad("empty"))?;
        match tag {
            0 if rest.len() <= MAX_RELAY_DATA => Ok(RelayFrame::Data(rest.to_vec())),
            0 => Err(bad("data frame too large")),
            1 => Ok(RelayFrame::ServerClosed(
                String::from_utf8_lossy(rest).into_owned(),
            )),
            2 if rest.len() == 8 => Ok(RelayFrame::Close {
                sent: u32::from_be_bytes(rest[..4].try_into().expect("4 bytes")),
                received: u32::from_be_bytes(rest[4..].try_into().expect("4 bytes")),
            }),
            2 => Err(bad("close frame length")),
            3 => Ok(RelayFrame::CloseAck(Ok(rest
                .try_into()
                .map_err(|_| bad("digest length"))?))),
            4 => Ok(RelayFrame::CloseAck(Err(decode(rest)?))),
            t => Err(bad(&format!("unknown tag {t}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relay_frames_round_trip_and_reject_garbage() {
        for f in [
            RelayFrame::Data(vec![1, 2, 3]),
            RelayFrame::ServerClosed("eof".into()),
            RelayFrame::Close {
                sent: 3,
                received: 0x0102_0304,
            },
            RelayFrame::CloseAck(Ok([7; 32])),
            RelayFrame::CloseAck(Err(Rejection::new(RejectKind::Limit, "limit"))),
        ] {
            assert_eq!(RelayFrame::decode(&f.encode()).unwrap(), f);
        }
        assert!(RelayFrame::decode(&[]).is_err());
        assert!(RelayFrame::decode(&[9]).is_err());
        assert!(RelayFrame::decode(&[3, 1, 2]).is_err());
        assert!(RelayFrame::decode(&[2, 0]).is_err());
        assert!(RelayFrame::decode(&[2]).is_err());
        assert!(RelayFrame::decode(&[2, 0, 0, 0, 1, 0, 0, 0, 1, 0]).is_err());
        assert!(decode::<ProverMsg>(b"{\"hello\":{}}").is_err());
    }

    /// Relay frames at their size limits and counts at u32 max.
    #[test]
    fn relay_frame_limits() {
        let mut data = vec![0u8];
        data.resize(1 + MAX_RELAY_DATA, 0x17);
        assert!(matches!(
            RelayFrame::decode(&data),
            Ok(RelayFrame::Data(d)) if d.len() == MAX_RELAY_DATA
        ));
        data.push(0);
        assert!(RelayFrame::decode(&data).is_err());
        let max = RelayFrame::Close {
            sent: u32::MAX,
            received: u32::MAX,
        };
        assert_eq!(RelayFrame::decode(&max.encode()).unwrap(), max);
        assert!(RelayFrame::decode(&[3; 34]).is_err());
        assert!(RelayFrame::decode(&[3; 32]).is_err());
        // Free text is kept whatever its bytes.
        assert!(matches!(
            RelayFrame::decode(&[1, 0xff, 0xfe]),
            Ok(RelayFrame::ServerClosed(_))
        ));
        // A transcript cut at u32 max counts is refused, not wrapped.
        let t = crate::record::Recording::default();
        assert!(t.clone().cut(u32::MAX as usize, 0).is_err());
        assert!(t.cut(0, u32::MAX as usize).is_err());
    }

    /// The verdict on a 1 MiB response is a few hundred bytes whatever is
    /// revealed, and the prover rebuilds the verifier's output from it.
    #[test]
    fn verdict_carries_no_data() {
        use crate::disclosure::{DisclosedData, Disclosure, Range};
        use crate::output::{ProofKind, VerifierOutput};
        use crate::suite::{CipherSuite, KxGroup, TlsVersion};
        let sent = b"GET /bytes?size=1048576 HTTP/1.1\r\nHost: x\r\n\r\n".to_vec();
        let received: Vec<u8> = (0..1 << 20).map(|i| (i * 7 % 251) as u8).collect();
        for hide in [None, Some(Range::new(100, 101))] {
            let mut d = Disclosure::all(sent.len(), received.len());
            if let Some(h) = hide {
                d.hide(crate::Direction::Received, h, received.len());
            }
            let out = VerifierOutput {
                server_name: "localhost".into(),
                server_port: 443,
                time: 1_700_000_000,
                tls_version: TlsVersion::Tls13,
                cipher_suite: CipherSuite::TLS13_AES_128_GCM_SHA256,
                key_exchange_group: KxGroup::X25519,
                server_certificate_sha256: "00".repeat(32),
                proof: ProofKind::Zk,
                sent: DisclosedData::from_revealed(&sent, d.sent.clone()).unwrap(),
                received: DisclosedData::from_revealed(&received, d.received.clone()).unwrap(),
                server_close_notify: Some(true),
                server_alert: None,
                server_records_after_cut: Some(0),
                response_complete: webproof_attestation::Completeness::Complete,
                order: Vec::new(),
                json: Vec::new(),
                sent_crlf_free: Vec::new(),
            };
            let verdict = encode(&VerifierMsg::Verdict {
                result: Ok(out.digested()),
                attestation: None,
                session_id: Some(SessionId([0xab; 16])),
            });
            assert!(verdict.len() < 1024, "{} bytes", verdict.len());
            let Ok(VerifierMsg::Verdict { result: Ok(v), .. }) = decode::<VerifierMsg>(&verdict)
            else {
                panic!("undecodable verdict");
            };
            assert_eq!(v.received.revealed, d.received);
            assert_eq!(v.expand(&sent, &received, &d).unwrap(), out);
        }
    }

    #[test]
    fn hello_carries_the_expected_size() {
        let hello = ProverMsg::Hello {
            version: PROTOCOL_VERSION,
            host: "example.com".into(),
            port: 443,
            api_key: None,
            expected_cots: 1_234_567,
            mpc: None,
        };
        match decode::<ProverMsg>(&encode(&hello)).unwrap() {
            ProverMsg::Hello { expected_cots, .. } => assert_eq!(expected_cots, 1_234_567),
            other => panic!("{other:?}"),
        }
        // Absent (an older prover): 0, which the verifier refuses.
        let old = br#"{"hello":{"version":2,"host":"a.b","port":443}}"#;
        match decode::<ProverMsg>(old).unwrap() {
            ProverMsg::Hello { expected_cots, .. } => assert_eq!(expected_cots, 0),
            other => panic!("{other:?}"),
        }
        // Not a u64: undecodable, never wrapped or truncated.
        for bad in [
            r#"-1"#,
            r#"1.5"#,
            r#""lots""#,
            r#"18446744073709551616"#,
            r#"1e30"#,
            r#"null"#,
        ] {
            let msg = format!(
                r#"{{"hello":{{"version":2,"host":"a.b","port":443,"expected_cots":{bad}}}}}"#
            );
            assert!(decode::<ProverMsg>(msg.as_bytes()).is_err(), "{bad}");
        }
    }

    /// The verdict's session id: 32 lowercase hex digits on the wire, and
    /// absent (not `null`) when a verifier draws none, so a verdict without
    /// one is the bytes it was before the field existed.
    #[test]
    fn verdict_session_id_golden() {
        let id = SessionId(*b"\x00\x11\x22\x33\x44\x55\x66\x77\x88\x99\xaa\xbb\xcc\xdd\xee\xff");
        let reject = |session_id| VerifierMsg::Verdict {
            result: Err(Rejection::new(RejectKind::Tag, "bad tag")),
            attestation: None,
            session_id,
        };
        assert_eq!(
            String::from_utf8(encode(&reject(Some(id)))).unwrap(),
            r#"{"verdict":{"result":{"Err":{"kind":"tag","detail":"bad tag"}},"session_id":"00112233445566778899aabbccddeeff"}}"#
        );
        assert_eq!(
            String::from_utf8(encode(&reject(None))).unwrap(),
            r#"{"verdict":{"result":{"Err":{"kind":"tag","detail":"bad tag"}}}}"#
        );
        let back = decode::<VerifierMsg>(&encode(&reject(Some(id)))).unwrap();
        assert!(matches!(back, VerifierMsg::Verdict { session_id: Some(s), .. } if s == id));
        assert_eq!(id.to_string().parse::<SessionId>().unwrap(), id);
        for bad in [
            "00112233445566778899AABBCCDDEEFF",
            "00112233445566778899aabbccddeef",
            "00112233445566778899aabbccddeeff0",
            "0011223344556677-899aabbccddeeff",
            "",
        ] {
            assert!(bad.parse::<SessionId>().is_err(), "{bad}");
            let msg = format!(
                r#"{{"verdict":{{"result":{{"Err":{{"kind":"tag","detail":""}}}},"session_id":"{bad}"}}}}"#
            );
            assert!(decode::<VerifierMsg>(msg.as_bytes()).is_err(), "{bad}");
        }
    }
}
