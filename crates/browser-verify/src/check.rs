//! Offline checking of presentations for the npm package's `verify`: the
//! check `webproof verify` makes (`webproof_attestation`), with the result
//! as a JSON value for JavaScript and failures sorted into kinds an
//! application can act on. Pure computation: no I/O, no clock.

use serde_json::{json, Value};
use webproof_attestation::{
    DecodeError, Error, Presentation, RedactedTranscript, VerifyError, VerifyingKey,
};

/// Why a presentation was not accepted.
#[derive(Debug, thiserror::Error)]
#[error("{detail}")]
pub struct VerifyFailure {
    /// `malformed` (not a presentation this build reads), `invalid-key` (a
    /// trusted key that does not parse, or none given), `untrusted-key`
    /// (signed by a key not among the trusted ones), `bad-signature` (the
    /// signature does not cover the attestation as given: it was altered),
    /// `bad-opening` (revealed data that the signed commitment does not
    /// hold: altered, or out of the transcript's bounds).
    pub kind: &'static str,
    /// What failed, for people.
    pub detail: String,
}

impl VerifyFailure {
    fn new(kind: &'static str, detail: impl std::fmt::Display) -> Self {
        VerifyFailure {
            kind,
            detail: detail.to_string(),
        }
    }
}

impl From<DecodeError> for VerifyFailure {
    fn from(e: DecodeError) -> Self {
        VerifyFailure::new("malformed", format!("not a valid presentation: {e}"))
    }
}

impl From<VerifyError> for VerifyFailure {
    fn from(e: VerifyError) -> Self {
        let kind = match &e {
            VerifyError::UntrustedKey { .. } => "untrusted-key",
            VerifyError::SchemeMismatch | VerifyError::BadSignature => "bad-signature",
            VerifyError::LeafIndexOutOfRange { .. }
            | VerifyError::BadInclusionProof { .. }
            | VerifyError::RangeOutOfBounds { .. }
            | VerifyError::OverlappingRanges { .. }
            | VerifyError::ServerIdentityMismatch => "bad-opening",
        };
        VerifyFailure::new(kind, e)
    }
}

/// Parses the trusted keys (`ed25519:HEX`, `secp256k1:HEX`, bare hex).
fn trusted_keys(specs: &[String]) -> Result<Vec<VerifyingKey>, VerifyFailure> {
    let keys = specs
        .iter()
        .enumerate()
        .map(|(i, s)| {
            // Never echo the key: it may be a secret key pasted by mistake.
            s.trim().parse::<VerifyingKey>().map_err(|e: Error| {
                VerifyFailure::new("invalid-key", format!("trusted key #{}: {e}", i + 1))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    if keys.is_empty() {
        return Err(VerifyFailure::new("invalid-key", "no trusted key given"));
    }
    Ok(keys)
}

/// One direction: lengths, the revealed and hidden runs, and the text
/// with hidden bytes as █ (revealed text escaped so that a █ always means
/// hidden, as `webproof verify` prints it).
fn direction(t: &RedactedTranscript) -> Value {
    let segments = t.segments();
    let hidden: Vec<Value> = segments
        .iter()
        .filter(|s| s.data.is_none())
        .map(|s| json!({"start": s.range.start, "end": s.range.end}))
        .collect();
    let revealed: Vec<Value> = segments
        .iter()
        .filter_map(|s| {
            s.data.map(|d| {
                json!({
                    "start": s.range.start,
                    "end": s.range.end,
                    "hex": hex_encode(d),
                    "text": std::str::from_utf8(d).ok(),
                })
            })
        })
        .collect();
    json!({
        "len": t.len(),
        "revealedLen": t.revealed_len(),
        "hiddenLen": t.len() - t.revealed_len(),
        "revealed": revealed,
        "hidden": hidden,
        "text": t.to_marked_string('\u{2588}'),
    })
}

fn hex_encode(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Decodes `presentation` (JSON or binary) and verifies it against
/// `trusted` keys: what it proves, or why it is refused.
pub fn verify(presentation: &[u8], trusted: &[String]) -> Result<Value, VerifyFailure> {
    let keys = trusted_keys(trusted)?;
    let p = Presentation::decode(presentation)?;
    let v = p.verify(&keys)?;
    let end = v.facts.ending();
    Ok(json!({
        "serverName": v.server_name,
        "time": v.time,
        "mode": v.facts.mode,
        "modeDescription": v.facts.mode.to_string(),
        "tlsVersion": v.tls_version.to_string(),
        "cipherSuite": v.cipher_suite.to_string(),
        "keyId": v.key_id().to_string(),
        "verifierKey": v.verifier_key.to_string(),
        "ethereumAddress": v.verifier_key.ethereum_address(),
        "sent": direction(&v.sent),
        "received": direction(&v.received),
        "responseEnd": end.to_string(),
        "possiblyTruncated": end.may_be_truncated(),
        "certificates": v.server_identity.as_ref().map(|id| id.cert_chain().len()),
        "facts": v.facts,
    }))
}

#[cfg(test)]
mod tests {
    use super::verify;
    use webproof_attestation::{
        Attestation, AttestationFields, CipherSuite, CommitPlan, CommitmentSeed, Completeness,
        Direction, OrderSpan, PresentationBuilder, ProofMode, Scheme, SessionFacts, SigningKey,
        Transcript, TranscriptCommitment,
    };

    /// A presentation of `GET /` and a response whose bytes 9..12 stay
    /// hidden, signed by a new key; the key as `verify` takes it.
    fn presentation() -> (String, String) {
        let mut rng = rand::rngs::OsRng;
        let received = b"HTTP/1.1 200 OK\r\n\r\nhello".to_vec();
        let t = Transcript::new(b"GET / HTTP/1.1\r\n\r\n".to_vec(), received.clone());
        let plan = CommitPlan::new().range(Direction::Received, 9..12);
        let c = TranscriptCommitment::new(&t, &plan, CommitmentSeed::generate(&mut rng)).unwrap();
        let key = SigningKey::generate(Scheme::Ed25519, &mut rng);
        let facts = SessionFacts {
            mode: ProofMode::Proxy,
            server_port: 443,
            server_close_notify: Some(true),
            server_records_after_cut: Some(0),
            response_complete: Completeness::Unknown,
            order: vec![
                OrderSpan {
                    direction: Direction::Sent,
                    start: 0,
                    end: 18,
                },
                OrderSpan {
                    direction: Direction::Received,
                    start: 0,
                    end: received.len() as u32,
                },
            ],
            sent_crlf_free: Vec::new(),
        };
        let fields = AttestationFields::for_commitment(
            "x.example",
            1_796_561_314,
            CipherSuite::TLS13_AES_128_GCM_SHA256,
            &c,
            [0; 32],
            facts,
        );
        let att = Attestation::sign(fields, &key).unwrap();
        let mut b = PresentationBuilder::new(&att, &t, &c).unwrap();
        b.reveal_all(Direction::Sent);
        b.reveal(Direction::Received, 0..9).unwrap();
        b.reveal(Direction::Received, 12..received.len()).unwrap();
        (b.build().to_json(), key.verifying_key().to_string())
    }

    fn kind(p: &str, key: &str) -> &'static str {
        verify(p.as_bytes(), &[key.to_string()]).unwrap_err().kind
    }

    #[test]
    fn verifies_and_sorts_failures_by_kind() {
        let (p, key) = presentation();
        let v = verify(p.as_bytes(), std::slice::from_ref(&key)).unwrap();
        assert_eq!(v["serverName"], "x.example");
        assert_eq!(
            v["received"]["hidden"],
            serde_json::json!([{"start": 9, "end": 12}])
        );
        assert_eq!(v["received"]["text"], "HTTP/1.1 ███ OK\r\n\r\nhello");
        assert_eq!(v["sent"]["hiddenLen"], 0);

        let (_, other) = presentation();
        assert_eq!(kind(&p, &other), "untrusted-key");
        assert_eq!(kind(&p, "ed25519:00"), "invalid-key");
        assert_eq!(verify(p.as_bytes(), &[]).unwrap_err().kind, "invalid-key");
        assert_eq!(kind("{}", &key), "malformed");
        // The signed server name changed: the signature no longer covers it.
        assert!(p.contains("x.example"));
        assert_eq!(
            kind(&p.replace("x.example", "y.example"), &key),
            "bad-signature"
        );
        // A revealed byte changed (the hex of "hello" → "jello").
        let hello = "68656c6c6f";
        assert!(p.contains(hello), "{p}");
        assert_eq!(kind(&p.replace(hello, "6a656c6c6f"), &key), "bad-opening");
    }
}
