//! Session facts in attestations (format version 4): the proof mode,
//! "not established" facts, encoding, strict decoding, validation at
//! signing, and the signature over them.

use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use webproof_attestation::*;

const SENT: u32 = 240;
const RECEIVED: u32 = 4096;
const NAME: &str = "api.example";

fn span(direction: Direction, start: u32, end: u32) -> OrderSpan {
    OrderSpan {
        direction,
        start,
        end,
    }
}

/// Request, response, second request, rest of the response.
fn facts() -> SessionFacts {
    SessionFacts {
        mode: webproof_attestation::ProofMode::Proxy,
        server_port: 443,
        server_close_notify: Some(true),
        server_records_after_cut: Some(3),
        response_complete: Completeness::Truncated,
        order: vec![
            span(Direction::Sent, 0, 120),
            span(Direction::Received, 0, 2048),
            span(Direction::Sent, 120, SENT),
            span(Direction::Received, 2048, RECEIVED),
        ],
        sent_crlf_free: CRLF_FREE.to_vec(),
    }
}

/// The sent spans [`facts`] says hold no line end.
const CRLF_FREE: [core::ops::Range<u32>; 2] = [0..100, 130..SENT];

fn fields(sent_len: u32, received_len: u32, facts: SessionFacts) -> AttestationFields {
    AttestationFields {
        server_name: NAME.into(),
        time: 1_763_771_400,
        cipher_suite: CipherSuite::TLS13_AES_256_GCM_SHA384,
        sent_len,
        received_len,
        leaf_count: 7,
        transcript_root: [5; 32],
        handshake_hash: [6; 32],
        facts,
    }
}

fn key(scheme: Scheme) -> SigningKey {
    SigningKey::generate(scheme, &mut ChaCha20Rng::seed_from_u64(7))
}

fn signed() -> (SignedAttestation, SigningKey) {
    let key = key(Scheme::Ed25519);
    let a = Attestation::sign(fields(SENT, RECEIVED, facts()), &key).unwrap();
    (a, key)
}

/// Offset of the facts in a body for [`NAME`].
const FACTS_AT: usize = 127 + NAME.len();

/// A body whose facts part is `raw` (everything before it from a valid body).
fn body_with_facts(raw: &[u8]) -> Vec<u8> {
    let (a, _) = signed();
    let mut body = a.attestation().to_bytes()[..FACTS_AT].to_vec();
    body.extend_from_slice(raw);
    body
}

/// Raw facts encoding (proxy mode).
fn raw_facts(port: u16, close: u8, cut: u32, complete: u8, spans: &[(u8, u32, u32)]) -> Vec<u8> {
    let mut v = vec![1];
    v.extend(port.to_be_bytes());
    v.push(close);
    v.extend(cut.to_be_bytes());
    v.push(complete);
    v.extend((spans.len() as u16).to_be_bytes());
    for &(d, s, e) in spans {
        v.push(d);
        v.extend(s.to_be_bytes());
        v.extend(e.to_be_bytes());
    }
    v.extend((CRLF_FREE.len() as u16).to_be_bytes());
    for r in CRLF_FREE {
        v.extend(r.start.to_be_bytes());
        v.extend(r.end.to_be_bytes());
    }
    v
}

fn good_spans() -> Vec<(u8, u32, u32)> {
    vec![
        (0, 0, 120),
        (1, 0, 2048),
        (0, 120, SENT),
        (1, 2048, RECEIVED),
    ]
}

#[test]
fn facts_round_trip_in_both_encodings() {
    for scheme in [Scheme::Secp256k1, Scheme::Ed25519] {
        let key = key(scheme);
        let a = Attestation::sign(fields(SENT, RECEIVED, facts()), &key).unwrap();
        assert_eq!(a.attestation().facts(), &facts());
        let bytes = a.to_bytes();
        let back = SignedAttestation::from_bytes(&bytes).unwrap();
        assert_eq!(back, a);
        assert_eq!(back.attestation().facts(), &facts());
        assert_eq!(back.to_bytes(), bytes);
        let json = a.to_json();
        let back = SignedAttestation::from_json(&json).unwrap();
        assert_eq!(back, a);
        back.verify(&[key.verifying_key()]).unwrap();
        // The JSON form names the facts.
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        let f = &v["attestation"]["facts"];
        assert_eq!(f["mode"], "proxy");
        assert_eq!(f["server_port"], 443);
        assert_eq!(f["server_close_notify"], true);
        assert_eq!(f["server_records_after_cut"], 3);
        assert_eq!(f["response_complete"], "truncated");
        assert_eq!(
            f["order"][2],
            serde_json::json!({"direction": "sent", "start": 120, "end": SENT})
        );
        // The raw encoding is as documented.
        let body = a.attestation().to_bytes();
        assert_eq!(&body[4..6], &[0, 4]);
        assert_eq!(
            f["sent_crlf_free"][1],
            serde_json::json!({"start": 130, "end": SENT})
        );
        assert_eq!(
            &body[FACTS_AT..],
            &raw_facts(443, 1, 3, 2, &good_spans())[..]
        );
    }
}

#[test]
fn every_completeness_and_flag_round_trips() {
    let key = key(Scheme::Ed25519);
    for c in [
        Completeness::Unknown,
        Completeness::Complete,
        Completeness::Truncated,
    ] {
        for (close, cut) in [
            (Some(false), Some(0)),
            (Some(true), Some(u32::MAX - 1)),
            (None, None),
        ] {
            let mut f = facts();
            f.response_complete = c;
            f.server_close_notify = close;
            f.server_port = u16::MAX;
            f.server_records_after_cut = cut;
            let a = Attestation::sign(fields(SENT, RECEIVED, f.clone()), &key).unwrap();
            let back = SignedAttestation::from_bytes(&a.to_bytes()).unwrap();
            assert_eq!(back.attestation().facts(), &f);
            assert_eq!(SignedAttestation::from_json(&a.to_json()).unwrap(), a);
            assert_eq!(Completeness::from_byte(c.to_byte()), Some(c));
        }
    }
    assert_eq!(Completeness::from_byte(3), None);
}

#[test]
fn empty_order_only_for_an_empty_session() {
    let key = key(Scheme::Ed25519);
    let mut f = facts();
    f.order = Vec::new();
    f.sent_crlf_free = Vec::new();
    let a = Attestation::sign(fields(0, 0, f.clone()), &key).unwrap();
    assert_eq!(SignedAttestation::from_bytes(&a.to_bytes()).unwrap(), a);
    assert_eq!(OrderSpan::sent_then_received(0, 0), vec![]);
    assert_eq!(
        Attestation::sign(fields(0, 1, f.clone()), &key).unwrap_err(),
        Error::Decode(DecodeError::OrderEnd {
            direction: Direction::Received,
            end: 0,
            len: 1
        })
    );
    // One direction only.
    f.order = OrderSpan::sent_then_received(0, 9);
    assert_eq!(f.order, vec![span(Direction::Received, 0, 9)]);
    Attestation::sign(fields(0, 9, f), &key).unwrap();
}

#[test]
fn the_most_spans_are_accepted_and_one_more_is_refused() {
    let key = key(Scheme::Ed25519);
    let half = (MAX_ORDER_SPANS / 2) as u32;
    let order: Vec<OrderSpan> = (0..half)
        .flat_map(|i| {
            [
                span(Direction::Sent, i, i + 1),
                span(Direction::Received, 2 * i, 2 * i + 2),
            ]
        })
        .collect();
    assert_eq!(order.len(), MAX_ORDER_SPANS);
    let mut f = facts();
    f.order = order;
    let a = Attestation::sign(fields(half, 2 * half, f.clone()), &key).unwrap();
    assert_eq!(SignedAttestation::from_bytes(&a.to_bytes()).unwrap(), a);
    assert_eq!(SignedAttestation::from_json(&a.to_json()).unwrap(), a);

    f.order.push(span(Direction::Sent, half, half + 1));
    let too_many = DecodeError::TooLarge {
        what: "order spans",
        len: MAX_ORDER_SPANS + 1,
        max: MAX_ORDER_SPANS,
    };
    assert_eq!(
        Attestation::sign(fields(half + 1, 2 * half, f.clone()), &key).unwrap_err(),
        Error::Decode(too_many.clone())
    );
    // Encoded with a count over the maximum, with or without the spans.
    let mut spans: Vec<(u8, u32, u32)> = f
        .order
        .iter()
        .map(|s| (s.direction.to_byte(), s.start, s.end))
        .collect();
    assert_eq!(
        Attestation::from_bytes(&body_with_facts(&raw_facts(443, 1, 0, 0, &spans))),
        Err(too_many)
    );
    spans.truncate(1);
    let mut raw = raw_facts(443, 1, 0, 0, &spans);
    raw[9..11].copy_from_slice(&u16::MAX.to_be_bytes());
    assert!(matches!(
        Attestation::from_bytes(&body_with_facts(&raw)),
        Err(DecodeError::TooLarge { .. })
    ));
    // A count within the maximum but larger than the input: truncated, no
    // allocation of the claimed size.
    raw[9..11].copy_from_slice(&4000u16.to_be_bytes());
    assert!(matches!(
        Attestation::from_bytes(&body_with_facts(&raw)),
        Err(DecodeError::Truncated { .. })
    ));
}

/// Invalid orders: refused at signing, in the binary decoding and in JSON,
/// each with its own error.
#[test]
fn invalid_orders_are_refused_everywhere() {
    use Direction::{Received as R, Sent as S};
    let cases: Vec<(Vec<OrderSpan>, DecodeError)> = vec![
        (
            // A gap in the sent data.
            vec![
                span(S, 0, 120),
                span(R, 0, 2048),
                span(S, 121, SENT),
                span(R, 2048, RECEIVED),
            ],
            DecodeError::OrderSpanMisplaced {
                index: 2,
                direction: S,
                start: 121,
                expected: 120,
            },
        ),
        (
            // Overlap.
            vec![
                span(S, 0, 120),
                span(R, 0, 2048),
                span(S, 100, SENT),
                span(R, 2048, RECEIVED),
            ],
            DecodeError::OrderSpanMisplaced {
                index: 2,
                direction: S,
                start: 100,
                expected: 120,
            },
        ),
        (
            // Not starting at 0.
            vec![span(S, 1, SENT), span(R, 0, RECEIVED)],
            DecodeError::OrderSpanMisplaced {
                index: 0,
                direction: S,
                start: 1,
                expected: 0,
            },
        ),
        (
            // Out of order within a direction.
            vec![
                span(S, 120, SENT),
                span(R, 0, 2048),
                span(S, 0, 120),
                span(R, 2048, RECEIVED),
            ],
            DecodeError::OrderSpanMisplaced {
                index: 0,
                direction: S,
                start: 120,
                expected: 0,
            },
        ),
        (
            // Stops short of the received length.
            vec![span(S, 0, SENT), span(R, 0, RECEIVED - 1)],
            DecodeError::OrderEnd {
                direction: R,
                end: RECEIVED - 1,
                len: RECEIVED,
            },
        ),
        (
            // Runs past the sent length.
            vec![span(S, 0, SENT + 1), span(R, 0, RECEIVED)],
            DecodeError::OrderEnd {
                direction: S,
                end: SENT + 1,
                len: SENT,
            },
        ),
        (
            // A direction missing.
            vec![span(R, 0, RECEIVED)],
            DecodeError::OrderEnd {
                direction: S,
                end: 0,
                len: SENT,
            },
        ),
        (
            // Same-direction neighbours.
            vec![span(S, 0, 120), span(S, 120, SENT), span(R, 0, RECEIVED)],
            DecodeError::OrderNotAlternating { index: 1 },
        ),
        (
            // An empty span.
            vec![span(S, 0, SENT), span(R, 0, 0), span(S, SENT, SENT)],
            DecodeError::EmptyOrderSpan { index: 1 },
        ),
        (
            // A reversed span.
            vec![span(S, SENT, 0), span(R, 0, RECEIVED)],
            DecodeError::EmptyOrderSpan { index: 0 },
        ),
        (
            // Empty list for a non-empty session.
            vec![],
            DecodeError::OrderEnd {
                direction: S,
                end: 0,
                len: SENT,
            },
        ),
    ];
    let (good, key) = signed();
    for (order, err) in cases {
        let mut f = facts();
        f.order = order.clone();
        assert_eq!(f.validate(SENT, RECEIVED), Err(err.clone()), "{order:?}");
        assert_eq!(
            Attestation::sign(fields(SENT, RECEIVED, f.clone()), &key).unwrap_err(),
            Error::Decode(err.clone()),
            "{order:?}"
        );
        let spans: Vec<_> = order
            .iter()
            .map(|s| (s.direction.to_byte(), s.start, s.end))
            .collect();
        let body = body_with_facts(&raw_facts(443, 1, 3, 2, &spans));
        assert_eq!(
            Attestation::from_bytes(&body),
            Err(err.clone()),
            "{order:?}"
        );
        let mut signed = body;
        signed.push(Scheme::Ed25519.to_byte());
        signed.extend([0u8; 64]);
        assert_eq!(SignedAttestation::from_bytes(&signed), Err(err.clone()));
        let mut v: serde_json::Value = serde_json::from_str(&good.to_json()).unwrap();
        v["attestation"]["facts"]["order"] = serde_json::to_value(&order).unwrap();
        assert_eq!(
            SignedAttestation::from_json(&v.to_string()),
            Err(err),
            "{order:?}"
        );
    }
}

#[test]
fn malformed_fact_bytes_are_typed_errors() {
    let ok = raw_facts(443, 1, 3, 2, &good_spans());
    Attestation::from_bytes(&body_with_facts(&ok)).unwrap();
    let check = |raw: Vec<u8>, want: DecodeError| {
        assert_eq!(Attestation::from_bytes(&body_with_facts(&raw)), Err(want));
    };
    for bad in [3u8, 0x80, 0xff] {
        check(
            raw_facts(443, bad, 3, 2, &good_spans()),
            DecodeError::InvalidFlag {
                what: "server close_notify",
                value: bad,
            },
        );
        let bad_completeness = bad.max(3);
        check(
            raw_facts(443, 1, 3, bad_completeness, &good_spans()),
            DecodeError::InvalidCompleteness(bad_completeness),
        );
        let mut spans = good_spans();
        spans[1].0 = bad;
        check(
            raw_facts(443, 1, 3, 2, &spans),
            DecodeError::InvalidDirection(bad),
        );
    }
    // Trailing bytes after the spans.
    let mut raw = ok.clone();
    raw.push(0);
    check(raw, DecodeError::TrailingBytes { count: 1 });
    // A version 1 header on a v4 body.
    let mut body = body_with_facts(&ok);
    body[5] = 1;
    assert_eq!(
        Attestation::from_bytes(&body),
        Err(DecodeError::OutdatedVersion {
            what: "attestation",
            version: 1,
            lacks: "the session facts",
            current: 4
        })
    );
    body.truncate(FACTS_AT);
    assert!(matches!(
        Attestation::from_bytes(&body),
        Err(DecodeError::OutdatedVersion { version: 1, .. })
    ));
    let (a, _) = signed();
    let mut v: serde_json::Value = serde_json::from_str(&a.to_json()).unwrap();
    v["attestation"]["version"] = 1.into();
    assert!(matches!(
        SignedAttestation::from_json(&v.to_string()),
        Err(DecodeError::OutdatedVersion { version: 1, .. })
    ));
}

#[test]
fn truncation_at_every_byte_is_an_error() {
    let (a, _) = signed();
    let body = a.attestation().to_bytes();
    for n in 0..body.len() {
        assert!(
            Attestation::from_bytes(&body[..n]).is_err(),
            "body cut at {n}"
        );
    }
    let signed = a.to_bytes();
    for n in 0..signed.len() {
        let e = SignedAttestation::from_bytes(&signed[..n]).unwrap_err();
        if n >= FACTS_AT {
            // Inside the facts or the signature: the input ends early.
            assert!(
                matches!(e, DecodeError::Truncated { .. }),
                "cut at {n}: {e:?}"
            );
        }
    }
}

#[test]
fn json_facts_are_strict() {
    let (a, _) = signed();
    let base: serde_json::Value = serde_json::from_str(&a.to_json()).unwrap();
    type Edit = Box<dyn Fn(&mut serde_json::Value)>;
    let edits: Vec<Edit> = vec![
        Box::new(|v| v["attestation"]["facts"]["extra"] = 1.into()),
        Box::new(|v| v["attestation"]["facts"]["order"][0]["extra"] = 1.into()),
        Box::new(|v| v["attestation"]["facts"]["server_port"] = 65536.into()),
        Box::new(|v| v["attestation"]["facts"]["server_close_notify"] = 1.into()),
        Box::new(|v| v["attestation"]["facts"]["mode"] = "tee".into()),
        Box::new(|v| {
            v["attestation"]["facts"]
                .as_object_mut()
                .unwrap()
                .remove("mode");
        }),
        Box::new(|v| v["attestation"]["facts"]["response_complete"] = "Complete".into()),
        Box::new(|v| v["attestation"]["facts"]["response_complete"] = 1.into()),
        Box::new(|v| v["attestation"]["facts"]["order"][0]["direction"] = "both".into()),
        Box::new(|v| {
            v["attestation"]["facts"]
                .as_object_mut()
                .unwrap()
                .remove("order");
        }),
        Box::new(|v| {
            v["attestation"].as_object_mut().unwrap().remove("facts");
        }),
    ];
    for (i, edit) in edits.iter().enumerate() {
        let mut v = base.clone();
        edit(&mut v);
        assert!(
            matches!(
                SignedAttestation::from_json(&v.to_string()),
                Err(DecodeError::Json(_))
            ),
            "edit {i}"
        );
    }
}

/// Changing any fact of a signed attestation (to another valid value)
/// breaks the signature, in both encodings.
#[test]
fn a_tampered_fact_breaks_the_signature() {
    let (a, key) = signed();
    let trusted = [key.verifying_key()];
    a.verify(&trusted).unwrap();
    let bytes = a.to_bytes();
    // Binary: flip the mode (proxy to MPC), the port, the flag (to "not
    // established" too), the cut count, the completeness.
    for (offset, value) in [
        (FACTS_AT, 2u8),
        (FACTS_AT + 1, 0x02),
        (FACTS_AT + 3, 0),
        (FACTS_AT + 3, 2),
        (FACTS_AT + 7, 4),
        (FACTS_AT + 8, 1),
    ] {
        let mut t = bytes.clone();
        assert_ne!(t[offset], value);
        t[offset] = value;
        let forged = SignedAttestation::from_bytes(&t).expect("still a valid encoding");
        assert_eq!(
            forged.verify(&trusted).unwrap_err(),
            VerifyError::BadSignature,
            "offset {offset}"
        );
    }
    // JSON: each fact changed to another valid value.
    let base: serde_json::Value = serde_json::from_str(&a.to_json()).unwrap();
    let other_order = serde_json::to_value(OrderSpan::sent_then_received(SENT, RECEIVED)).unwrap();
    for (field, value) in [
        ("mode", serde_json::json!("mpc")),
        ("server_port", serde_json::json!(8443)),
        ("server_close_notify", serde_json::json!(false)),
        ("server_close_notify", serde_json::Value::Null),
        ("server_records_after_cut", serde_json::json!(0)),
        ("server_records_after_cut", serde_json::Value::Null),
        ("response_complete", serde_json::json!("complete")),
        ("order", other_order),
    ] {
        let mut v = base.clone();
        v["attestation"]["facts"][field] = value;
        let forged = SignedAttestation::from_json(&v.to_string()).expect("valid facts");
        assert_eq!(
            forged.verify(&trusted).unwrap_err(),
            VerifyError::BadSignature,
            "{field}"
        );
    }
}

/// A presentation shows the facts (and its JSON value for `webproof
/// verify --json` carries them).
#[test]
fn presentations_expose_the_facts() {
    let mut rng = ChaCha20Rng::seed_from_u64(11);
    let sent = vec![b'a'; SENT as usize];
    let received = vec![b'b'; RECEIVED as usize];
    let t = Transcript::new(sent, received);
    let c = TranscriptCommitment::new(&t, &CommitPlan::new(), CommitmentSeed::generate(&mut rng))
        .unwrap();
    let key = key(Scheme::Secp256k1);
    let a = Attestation::sign(
        AttestationFields::for_commitment(
            NAME,
            1,
            CipherSuite::TLS13_AES_128_GCM_SHA256,
            &c,
            [0; 32],
            facts(),
        ),
        &key,
    )
    .unwrap();
    let p = PresentationBuilder::new(&a, &t, &c).unwrap().build();
    for bytes in [p.to_bytes(), p.to_json().into_bytes()] {
        let v = verify_presentation(&bytes, &[key.verifying_key()]).unwrap();
        assert_eq!(v.facts, facts());
        assert_eq!(v.attestation.facts(), &facts());
        let j = v.to_json_value();
        assert_eq!(j["facts"], serde_json::to_value(facts()).unwrap());
        assert_eq!(j["facts"]["response_complete"], "truncated");
    }
    let shown: Vec<String> = facts().order.iter().map(|s| s.to_string()).collect();
    assert_eq!(
        shown.join(", "),
        format!("sent 0..120, received 0..2048, sent 120..{SENT}, received 2048..{RECEIVED}")
    );
}

/// MPC-mode facts: what the verifier cannot establish is encoded as "not
/// established" (close_notify byte 2, cut count 0xffffffff, port 0) and
/// decodes back to `None`, never to proxy mode's `false` / `0`.
#[test]
fn facts_not_established_round_trip_as_unknown() {
    let key = key(Scheme::Ed25519);
    let f = SessionFacts {
        mode: ProofMode::Mpc,
        server_port: 0,
        server_close_notify: None,
        server_records_after_cut: None,
        response_complete: Completeness::Unknown,
        order: OrderSpan::sent_then_received(SENT, RECEIVED),
        sent_crlf_free: Vec::new(),
    };
    let a = Attestation::sign(fields(SENT, RECEIVED, f.clone()), &key).unwrap();
    let body = a.attestation().to_bytes();
    assert_eq!(
        &body[FACTS_AT..FACTS_AT + 9],
        &[2, 0, 0, 2, 0xff, 0xff, 0xff, 0xff, 0]
    );
    let back = SignedAttestation::from_bytes(&a.to_bytes()).unwrap();
    assert_eq!(back.attestation().facts(), &f);
    let v: serde_json::Value = serde_json::from_str(&a.to_json()).unwrap();
    let j = &v["attestation"]["facts"];
    assert_eq!(j["mode"], "mpc");
    assert!(j["server_close_notify"].is_null());
    assert!(j["server_records_after_cut"].is_null());
    assert_eq!(SignedAttestation::from_json(&a.to_json()).unwrap(), a);
    assert_eq!(f.ending(), ResponseEnd::PossiblyTruncated);
    assert!(f.ending().may_be_truncated());
}

/// A count that would read as "not established" cannot be signed; bytes
/// outside the flags' ranges are refused.
#[test]
fn out_of_range_facts_are_refused() {
    let key = key(Scheme::Ed25519);
    let mut f = facts();
    f.server_records_after_cut = Some(u32::MAX);
    assert!(Attestation::sign(fields(SENT, RECEIVED, f), &key).is_err());
    let mut raw = raw_facts(443, 1, 0, 0, &good_spans());
    for (at, bad) in [(0usize, 0u8), (0, 3), (3, 3)] {
        let mut r = raw.clone();
        r[at] = bad;
        assert!(
            matches!(
                Attestation::from_bytes(&body_with_facts(&r)),
                Err(DecodeError::InvalidFlag { .. })
            ),
            "byte {at} = {bad}"
        );
    }
    raw[0] = 2;
    Attestation::from_bytes(&body_with_facts(&raw)).unwrap();
}

/// Version 2 bodies (no mode) are refused with an error that says why and
/// what to do; unknown versions with the plain one.
#[test]
fn version_2_is_refused_clearly() {
    let (a, _) = signed();
    let mut body = a.attestation().to_bytes();
    body[5] = 2;
    let e = Attestation::from_bytes(&body).unwrap_err();
    assert!(
        matches!(e, DecodeError::OutdatedVersion { version: 2, .. }),
        "{e:?}"
    );
    let text = e.to_string();
    assert!(
        text.contains("proof mode") && text.contains("sign the session again"),
        "{text}"
    );
    body[5] = 9;
    assert!(matches!(
        Attestation::from_bytes(&body),
        Err(DecodeError::UnsupportedVersion { version: 9, .. })
    ));
    let mut v: serde_json::Value = serde_json::from_str(&a.to_json()).unwrap();
    v["attestation"]["version"] = 2.into();
    assert!(matches!(
        SignedAttestation::from_json(&v.to_string()),
        Err(DecodeError::OutdatedVersion { .. })
    ));
}

/// Version 3 bodies (no request ends) are refused, saying what they lack.
#[test]
fn version_3_is_refused_clearly() {
    let (a, _) = signed();
    let mut body = a.attestation().to_bytes();
    body[5] = 3;
    let e = Attestation::from_bytes(&body).unwrap_err();
    assert!(
        matches!(e, DecodeError::OutdatedVersion { version: 3, .. }),
        "{e:?}"
    );
    assert!(e.to_string().contains("no line end"), "{e}");
}

/// Line-end-free spans empty, out of order, overlapping, past the sent
/// data or too many are refused at signing and in both decodings.
#[test]
fn misplaced_line_end_free_spans_are_refused_everywhere() {
    let key = key(Scheme::Ed25519);
    let good = Attestation::sign(fields(SENT, RECEIVED, facts()), &key).unwrap();
    let many: Vec<core::ops::Range<u32>> = (0..4097).map(|i| i..i + 1).collect();
    for spans in [
        vec![5..5, 10..20],
        vec![10..20, 15..30],
        vec![30..40, 10..20],
        vec![0..10, 20..SENT + 1],
        many,
    ] {
        let mut f = facts();
        f.sent_crlf_free = spans.clone();
        let what = format!("{:?}", &spans[..spans.len().min(3)]);
        assert!(
            f.validate(SENT + 5000, RECEIVED).is_err() || spans.len() < 4097,
            "{what}"
        );
        assert!(
            Attestation::sign(fields(SENT, RECEIVED, f), &key).is_err(),
            "{what}"
        );
        let mut v: serde_json::Value = serde_json::from_str(&good.to_json()).unwrap();
        v["attestation"]["facts"]["sent_crlf_free"] = serde_json::to_value(&spans).unwrap();
        assert!(
            SignedAttestation::from_json(&v.to_string()).is_err(),
            "{what}"
        );
        let mut raw = raw_facts(443, 1, 3, 2, &good_spans());
        raw.truncate(raw.len() - 2 - 8 * CRLF_FREE.len());
        raw.extend((spans.len() as u16).to_be_bytes());
        for r in &spans {
            raw.extend(r.start.to_be_bytes());
            raw.extend(r.end.to_be_bytes());
        }
        assert!(
            Attestation::from_bytes(&body_with_facts(&raw)).is_err(),
            "{what}"
        );
    }
    // No span at all is a valid attestation (no request's extent fixed).
    let mut f = facts();
    f.sent_crlf_free.clear();
    Attestation::sign(fields(SENT, RECEIVED, f), &key).unwrap();
}

/// How the response ended: only a proven close_notify with nothing cut,
/// or complete framing, is not "possibly truncated".
#[test]
fn response_end_from_the_facts() {
    let base = SessionFacts {
        mode: ProofMode::Proxy,
        server_port: 443,
        server_close_notify: Some(true),
        server_records_after_cut: Some(0),
        response_complete: Completeness::Unknown,
        order: Vec::new(),
        sent_crlf_free: Vec::new(),
    };
    let with = |edit: &dyn Fn(&mut SessionFacts)| {
        let mut f = base.clone();
        edit(&mut f);
        f.ending()
    };
    assert_eq!(base.ending(), ResponseEnd::ClosedByServer);
    assert_eq!(
        with(&|f| f.server_close_notify = Some(false)),
        ResponseEnd::PossiblyTruncated
    );
    assert_eq!(
        with(&|f| f.server_close_notify = None),
        ResponseEnd::PossiblyTruncated
    );
    assert_eq!(
        with(&|f| f.server_records_after_cut = None),
        ResponseEnd::PossiblyTruncated
    );
    assert_eq!(
        with(&|f| f.server_records_after_cut = Some(2)),
        ResponseEnd::Cut { records: 2 }
    );
    assert_eq!(
        with(&|f| {
            f.server_close_notify = None;
            f.response_complete = Completeness::Complete
        }),
        ResponseEnd::Complete
    );
    assert_eq!(
        with(&|f| f.response_complete = Completeness::Truncated),
        ResponseEnd::Truncated
    );
    for e in [ResponseEnd::PossiblyTruncated, ResponseEnd::Truncated] {
        assert!(e.may_be_truncated());
        assert!(e.to_string().contains("TRUNCATED"));
    }
}
