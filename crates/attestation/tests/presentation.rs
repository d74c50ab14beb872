//! End-to-end tests: commit, attest, present, verify; and every way a
//! cheating prover or a corrupted file should be caught.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use webproof_attestation::attestation::normalize_server_name;
use webproof_attestation::commit::MAX_LEAF_LEN;
use webproof_attestation::*;

const REQUEST: &[u8] =
    b"GET /account HTTP/1.1\r\nHost: bank.example\r\nCookie: session=s3cr3t\r\n\r\n";
const RESPONSE: &[u8] =
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n{\"name\":\"alice\",\"balance\":1234,\"pin\":7}";

/// The facts of the test session: the request, the response in two parts
/// around a second request (so the order has four spans).
fn facts() -> SessionFacts {
    let (s, r) = (REQUEST.len() as u32, RESPONSE.len() as u32);
    SessionFacts {
        mode: webproof_attestation::ProofMode::Proxy,
        server_port: 8443,
        server_close_notify: Some(true),
        server_records_after_cut: Some(2),
        response_complete: Completeness::Complete,
        order: vec![
            span(Direction::Sent, 0, 20),
            span(Direction::Received, 0, 30),
            span(Direction::Sent, 20, s),
            span(Direction::Received, 30, r),
        ],
        sent_crlf_free: Vec::new(),
    }
}

fn span(direction: Direction, start: u32, end: u32) -> OrderSpan {
    OrderSpan {
        direction,
        start,
        end,
    }
}

struct Setup {
    transcript: Transcript,
    commitment: TranscriptCommitment,
    attestation: SignedAttestation,
    key: SigningKey,
    identity: ServerIdentity,
}

fn setup(scheme: Scheme, plan: CommitPlan) -> Setup {
    let mut rng = ChaCha20Rng::seed_from_u64(42);
    let transcript = Transcript::new(REQUEST, RESPONSE);
    let commitment =
        TranscriptCommitment::new(&transcript, &plan, CommitmentSeed::generate(&mut rng)).unwrap();
    let key = SigningKey::generate(scheme, &mut rng);
    let identity =
        ServerIdentity::new(vec![vec![0x30, 0x82, 1, 2, 3], vec![0x30, 0x82, 4, 5]]).unwrap();
    let fields = AttestationFields::for_commitment(
        "Bank.Example",
        1_763_771_400,
        CipherSuite::TLS13_AES_128_GCM_SHA256,
        &commitment,
        identity.hash(),
        facts(),
    );
    let attestation = Attestation::sign(fields, &key).unwrap();
    Setup {
        transcript,
        commitment,
        attestation,
        key,
        identity,
    }
}

fn find(hay: &[u8], needle: &[u8]) -> usize {
    hay.windows(needle.len()).position(|w| w == needle).unwrap()
}

/// A plan whose leaves let the prover reveal everything but the cookie value
/// and the pin digit.
fn http_plan() -> CommitPlan {
    let cookie = find(REQUEST, b"s3cr3t");
    let pin = find(RESPONSE, b"7}");
    CommitPlan::new()
        .with_chunk_len(16)
        .unwrap()
        .range(Direction::Sent, cookie..cookie + 6)
        .range(Direction::Received, pin..pin + 1)
}

/// Reveals all but the cookie value and the one-byte pin.
fn redacted(s: &Setup) -> Presentation {
    let cookie = find(REQUEST, b"s3cr3t");
    let pin = find(RESPONSE, b"7}");
    let mut b = PresentationBuilder::new(&s.attestation, &s.transcript, &s.commitment).unwrap();
    b.reveal(Direction::Sent, 0..cookie).unwrap();
    b.reveal(Direction::Sent, cookie + 6..REQUEST.len())
        .unwrap();
    b.reveal(Direction::Received, 0..pin).unwrap();
    b.reveal(Direction::Received, pin + 1..RESPONSE.len())
        .unwrap();
    b.server_identity(s.identity.clone()).unwrap();
    b.build()
}

#[test]
fn redacted_presentation_verifies_and_shows_only_revealed_bytes() {
    for scheme in [Scheme::Secp256k1, Scheme::Ed25519] {
        let s = setup(scheme, http_plan());
        let p = redacted(&s);
        let trusted = [s.key.verifying_key()];
        for bytes in [p.to_bytes(), p.to_json().into_bytes()] {
            let v = verify_presentation(&bytes, &trusted).unwrap();
            assert_eq!(v.server_name, "bank.example");
            assert_eq!(v.time, 1_763_771_400);
            assert_eq!(v.tls_version, TlsVersion::Tls13);
            assert_eq!(v.cipher_suite, CipherSuite::TLS13_AES_128_GCM_SHA256);
            assert_eq!(v.key_id(), s.key.key_id());
            assert_eq!(v.sent.len() as usize, REQUEST.len());
            assert_eq!(v.sent.revealed_len() as usize, REQUEST.len() - 6);
            assert_eq!(
                v.sent.to_marked_string('*'),
                String::from_utf8_lossy(REQUEST).replace("s3cr3t", "******")
            );
            assert_eq!(
                v.received.to_marked_string('*'),
                String::from_utf8_lossy(RESPONSE).replace("\"pin\":7", "\"pin\":*")
            );
            let pin = find(RESPONSE, b"7}") as u32;
            assert_eq!(v.received.get(pin), None);
            assert_eq!(v.received.get(pin + 1), Some(b'}'));
            assert_eq!(v.server_identity.as_ref(), Some(&s.identity));
            let json = v.to_json_value();
            assert_eq!(json["sent"]["segments"][1]["hidden"], true);
            // The mode and the response's end are shown, as signed: this
            // session's response is cut (two records left out).
            assert_eq!(json["mode"], "proxy");
            assert_eq!(json["facts"]["mode"], "proxy");
            assert_eq!(json["possibly_truncated"], true);
            assert_eq!(v.facts.ending(), ResponseEnd::Cut { records: 2 });
        }
    }
}

/// Revealed bytes that look like hidden ones (`█`, `[3 hidden bytes]`) are
/// escaped in the marked text, as is the escape character itself.
#[test]
fn revealed_block_characters_are_escaped_in_marked_text() {
    let sent = b"GET / HTTP/1.1\r\n\r\n".to_vec();
    let received = "ab\u{2588}\u{2588}\u{2588}[3 hidden bytes]\\u{2588}*SECRET*end"
        .as_bytes()
        .to_vec();
    let secret = find(&received, b"SECRET");
    let t = Transcript::new(sent.clone(), received.clone());
    let plan = CommitPlan::new()
        .with_chunk_len(8)
        .unwrap()
        .range(Direction::Received, secret..secret + 6);
    let mut rng = ChaCha20Rng::seed_from_u64(8);
    let c = TranscriptCommitment::new(&t, &plan, CommitmentSeed::generate(&mut rng)).unwrap();
    let key = SigningKey::generate(Scheme::Ed25519, &mut rng);
    let facts = SessionFacts {
        mode: webproof_attestation::ProofMode::Proxy,
        server_port: 443,
        server_close_notify: Some(true),
        server_records_after_cut: Some(0),
        response_complete: Completeness::Unknown,
        order: OrderSpan::sent_then_received(sent.len() as u32, received.len() as u32),
        sent_crlf_free: Vec::new(),
    };
    let att = Attestation::sign(
        AttestationFields::for_commitment(
            "x.example",
            0,
            CipherSuite::TLS13_AES_128_GCM_SHA256,
            &c,
            [0; 32],
            facts,
        ),
        &key,
    )
    .unwrap();
    let mut b = PresentationBuilder::new(&att, &t, &c).unwrap();
    b.reveal_all(Direction::Sent);
    b.reveal(Direction::Received, 0..secret).unwrap();
    b.reveal(Direction::Received, secret + 6..received.len())
        .unwrap();
    let v = b.build().verify(&[key.verifying_key()]).unwrap();
    let shown = v.received.to_marked_string('\u{2588}');
    assert_eq!(
        shown,
        "ab\\u{2588}\\u{2588}\\u{2588}[3 hidden bytes]\\\\u{2588}*\u{2588}\u{2588}\u{2588}\u{2588}\u{2588}\u{2588}*end"
    );
    // Exactly the hidden bytes are drawn as blocks.
    assert_eq!(shown.matches('\u{2588}').count(), 6);
    // Another marker is escaped too; the block stays escaped.
    assert_eq!(
        v.received.to_marked_string('*'),
        "ab\\u{2588}\\u{2588}\\u{2588}[3 hidden bytes]\\\\u{2588}\\u{002a}******\\u{002a}end"
    );
    assert_eq!(
        escape_revealed("a\\b\u{2588}c".as_bytes(), '#'),
        "a\\\\b\\u{2588}c"
    );
}

#[test]
fn full_and_empty_presentations() {
    let s = setup(Scheme::Ed25519, CommitPlan::new());
    let mut b = PresentationBuilder::new(&s.attestation, &s.transcript, &s.commitment).unwrap();
    b.reveal_all(Direction::Sent)
        .reveal_all(Direction::Received);
    let v = b.build().verify(&[s.key.verifying_key()]).unwrap();
    assert_eq!(v.sent.to_marked_string('*').as_bytes(), REQUEST);
    assert_eq!(v.received.to_marked_string('*').as_bytes(), RESPONSE);
    assert!(v.server_identity.is_none());

    // Nothing revealed: still proves server, time, lengths.
    let p = PresentationBuilder::new(&s.attestation, &s.transcript, &s.commitment)
        .unwrap()
        .build();
    let v = p.verify(&[s.key.verifying_key()]).unwrap();
    assert_eq!(v.sent.revealed_len(), 0);
    assert_eq!(v.received.segments().len(), 1);
}

#[test]
fn binary_and_json_round_trip() {
    let s = setup(Scheme::Secp256k1, http_plan());
    let p = redacted(&s);
    let bytes = p.to_bytes();
    assert_eq!(Presentation::from_bytes(&bytes).unwrap(), p);
    assert_eq!(Presentation::from_json(&p.to_json()).unwrap(), p);
    assert_eq!(
        Presentation::from_json(&p.to_json()).unwrap().to_bytes(),
        bytes
    );
    let a = &s.attestation;
    assert_eq!(&SignedAttestation::from_bytes(&a.to_bytes()).unwrap(), a);
    assert_eq!(&SignedAttestation::from_json(&a.to_json()).unwrap(), a);
    assert_eq!(
        Attestation::from_bytes(&a.attestation().to_bytes()).unwrap(),
        *a.attestation()
    );
}

#[test]
fn attestation_body_layout_is_as_documented() {
    let s = setup(Scheme::Secp256k1, http_plan());
    let a = s.attestation.attestation();
    let b = a.to_bytes();
    assert_eq!(&b[0..4], b"WPAT");
    assert_eq!(&b[4..6], &[0, 4]);
    assert_eq!(&b[6..8], &[3, 4]);
    assert_eq!(&b[8..10], &[0x13, 0x01]);
    assert_eq!(&b[10..18], &1_763_771_400u64.to_be_bytes());
    assert_eq!(&b[18..50], &s.key.key_id().0);
    assert_eq!(&b[50..54], &(REQUEST.len() as u32).to_be_bytes());
    assert_eq!(&b[54..58], &(RESPONSE.len() as u32).to_be_bytes());
    assert_eq!(&b[58..62], &s.commitment.leaf_count().to_be_bytes());
    assert_eq!(&b[62..94], &s.commitment.root());
    assert_eq!(&b[94..126], &s.identity.hash());
    assert_eq!(b[126] as usize, "bank.example".len());
    assert_eq!(&b[127..139], b"bank.example");
    // Session facts after the server name, the proof mode first.
    assert_eq!(b[139], 1);
    let f = &b[140..];
    assert_eq!(&f[0..2], &8443u16.to_be_bytes());
    assert_eq!(f[2], 1);
    assert_eq!(&f[3..7], &2u32.to_be_bytes());
    assert_eq!(f[7], 1);
    assert_eq!(&f[8..10], &4u16.to_be_bytes());
    let mut spans = Vec::new();
    for chunk in f[10..10 + 4 * 9].chunks(9) {
        spans.push(span(
            Direction::from_byte(chunk[0]).unwrap(),
            u32::from_be_bytes(chunk[1..5].try_into().unwrap()),
            u32::from_be_bytes(chunk[5..9].try_into().unwrap()),
        ));
    }
    assert_eq!(spans, facts().order);
    // Then the line-end-free spans of the sent data (none here).
    assert_eq!(&f[10 + 4 * 9..], &[0, 0]);
    assert_eq!(a.facts(), &facts());
    // Signed form: body, scheme byte, r||s||v.
    let signed = s.attestation.to_bytes();
    assert_eq!(&signed[..b.len()], &b[..]);
    assert_eq!(signed[b.len()], 1);
    assert_eq!(signed.len(), b.len() + 1 + 65);
}

#[test]
fn ecrecover_over_keccak_of_body_gives_the_key() {
    use k256::ecdsa::{RecoveryId, Signature as EcdsaSig, VerifyingKey as EcdsaKey};
    use sha3::{Digest, Keccak256};
    let s = setup(Scheme::Secp256k1, http_plan());
    let Signature::Secp256k1(sig) = *s.attestation.signature() else {
        panic!()
    };
    let digest = Keccak256::digest(s.attestation.attestation().to_bytes());
    let recovered = EcdsaKey::recover_from_prehash(
        &digest,
        &EcdsaSig::from_slice(&sig[..64]).unwrap(),
        RecoveryId::from_byte(sig[64] - 27).unwrap(),
    )
    .unwrap();
    assert_eq!(VerifyingKey::Secp256k1(recovered), s.key.verifying_key());
}

#[test]
fn every_flipped_byte_is_rejected() {
    for scheme in [Scheme::Secp256k1, Scheme::Ed25519] {
        let s = setup(scheme, http_plan());
        let trusted = [s.key.verifying_key()];
        let bytes = redacted(&s).to_bytes();
        verify_presentation(&bytes, &trusted).unwrap();
        for i in 0..bytes.len() {
            for mask in [0x01u8, 0x80, 0xff] {
                let mut t = bytes.clone();
                t[i] ^= mask;
                assert!(
                    verify_presentation(&t, &trusted).is_err(),
                    "{scheme} byte {i} mask {mask:#x} accepted"
                );
            }
        }
    }
}

#[test]
fn signature_from_another_key_is_rejected() {
    let s = setup(Scheme::Secp256k1, http_plan());
    let p = redacted(&s);
    let mut rng = ChaCha20Rng::seed_from_u64(99);
    let other = SigningKey::generate(Scheme::Secp256k1, &mut rng);
    // Not trusted at all.
    assert!(matches!(
        p.verify(&[other.verifying_key()]),
        Err(VerifyError::UntrustedKey { .. })
    ));
    // Re-signed by another key (which the verifier trusts) but claiming the
    // original key id: the signature does not verify under the named key.
    let a = s.attestation.attestation();
    let fields = AttestationFields {
        server_name: a.server_name().into(),
        time: a.time(),
        cipher_suite: a.cipher_suite(),
        sent_len: a.sent_len(),
        received_len: a.received_len(),
        leaf_count: a.leaf_count(),
        transcript_root: a.transcript_root(),
        handshake_hash: a.handshake_hash(),
        facts: a.facts().clone(),
    };
    let forged = Attestation::sign(fields, &other).unwrap();
    let mut bytes = p.to_bytes();
    let body_len = a.to_bytes().len();
    // Splice the forged signature over the original one.
    bytes[6 + body_len + 1..6 + body_len + 1 + 65].copy_from_slice(forged.signature().as_bytes());
    assert_eq!(
        verify_presentation(&bytes, &[s.key.verifying_key(), other.verifying_key()]).unwrap_err(),
        Error::Verify(VerifyError::BadSignature)
    );
    // Ed25519 signature under a secp256k1 key id.
    let ed = SigningKey::generate(Scheme::Ed25519, &mut rng);
    let mut json: serde_json::Value = serde_json::from_str(&p.to_json()).unwrap();
    json["attestation"]["signature"] =
        serde_json::json!({"scheme": "ed25519", "bytes": hex::encode([0u8; 64])});
    let err = verify_presentation(
        json.to_string().as_bytes(),
        &[s.key.verifying_key(), ed.verifying_key()],
    );
    assert_eq!(err.unwrap_err(), Error::Verify(VerifyError::SchemeMismatch));
}

/// Edits a presentation through its JSON form, as a cheating prover would.
fn tamper(p: &Presentation, f: impl FnOnce(&mut serde_json::Value)) -> Vec<u8> {
    let mut v: serde_json::Value = serde_json::from_str(&p.to_json()).unwrap();
    f(&mut v);
    v.to_string().into_bytes()
}

#[test]
fn cheating_prover_edits_are_rejected() {
    let s = setup(Scheme::Ed25519, http_plan());
    let p = redacted(&s);
    let trusted = [s.key.verifying_key()];
    let opening = 2; // some revealed received-or-sent leaf
    let reject = |bytes: Vec<u8>| verify_presentation(&bytes, &trusted).unwrap_err();

    // Altered plaintext (same length).
    let e = reject(tamper(&p, |v| {
        let pt = v["openings"][opening]["plaintext"]
            .as_str()
            .unwrap()
            .to_string();
        let mut b = hex::decode(pt).unwrap();
        b[0] ^= 0x20;
        v["openings"][opening]["plaintext"] = hex::encode(b).into();
    }));
    assert!(
        matches!(e, Error::Verify(VerifyError::BadInclusionProof { .. })),
        "{e}"
    );

    // Range moved by one byte.
    let e = reject(tamper(&p, |v| {
        let start = v["openings"][opening]["start"].as_u64().unwrap();
        v["openings"][opening]["start"] = (start + 1).into();
    }));
    assert!(
        matches!(e, Error::Verify(VerifyError::BadInclusionProof { .. })),
        "{e}"
    );

    // Direction switched.
    let e = reject(tamper(&p, |v| {
        let d = v["openings"][opening]["direction"].as_str().unwrap();
        v["openings"][opening]["direction"] = if d == "sent" { "received" } else { "sent" }.into();
    }));
    assert!(matches!(e, Error::Verify(_)), "{e}");

    // The Merkle proof of another leaf.
    let e = reject(tamper(&p, |v| {
        let other = v["openings"][opening + 1]["proof"].clone();
        v["openings"][opening]["proof"] = other;
    }));
    assert!(
        matches!(e, Error::Verify(VerifyError::BadInclusionProof { .. })),
        "{e}"
    );

    // An opening claimed at another leaf index.
    let e = reject(tamper(&p, |v| {
        let openings = v["openings"].as_array_mut().unwrap();
        let idx = openings[opening]["leaf_index"].as_u64().unwrap();
        let next = openings[opening + 1]["leaf_index"].as_u64().unwrap();
        if next > idx + 1 {
            openings[opening]["leaf_index"] = (idx + 1).into();
        } else {
            openings.remove(opening + 1);
            openings[opening]["leaf_index"] = next.into();
        }
    }));
    assert!(
        matches!(e, Error::Verify(VerifyError::BadInclusionProof { .. })),
        "{e}"
    );

    // Leaf index beyond the tree.
    let e = reject(tamper(&p, |v| {
        let openings = v["openings"].as_array_mut().unwrap();
        let last = openings.len() - 1;
        openings[last]["leaf_index"] = 1_000_000.into();
    }));
    assert!(
        matches!(e, Error::Verify(VerifyError::LeafIndexOutOfRange { .. })),
        "{e}"
    );

    // Wrong blinder.
    let e = reject(tamper(&p, |v| {
        v["openings"][0]["blinder"] = hex::encode([0u8; 16]).into()
    }));
    assert!(
        matches!(e, Error::Verify(VerifyError::BadInclusionProof { .. })),
        "{e}"
    );

    // Server identity swapped for another chain.
    let e = reject(tamper(&p, |v| {
        v["server_identity"]["cert_chain"][0] = "3082aa".into()
    }));
    assert_eq!(e, Error::Verify(VerifyError::ServerIdentityMismatch));

    // Any attested field changed: the signature fails.
    for (field, value) in [
        ("server_name", serde_json::json!("evil.example")),
        ("time", serde_json::json!(1)),
        ("leaf_count", serde_json::json!(3)),
        ("transcript_root", serde_json::json!(hex::encode([1u8; 32]))),
        (
            "cipher_suite",
            serde_json::json!("TLS13_CHACHA20_POLY1305_SHA256"),
        ),
    ] {
        let e = reject(tamper(&p, |v| {
            v["attestation"]["attestation"][field] = value
        }));
        assert_eq!(e, Error::Verify(VerifyError::BadSignature), "{field}");
    }
    // A length changed together with the order (so the facts still fit),
    // or any fact changed: the signature fails.
    let e = reject(tamper(&p, |v| {
        let a = &mut v["attestation"]["attestation"];
        a["received_len"] = (RESPONSE.len() - 1).into();
        a["facts"]["order"][3]["end"] = (RESPONSE.len() - 1).into();
    }));
    assert_eq!(e, Error::Verify(VerifyError::BadSignature));
    for (field, value) in [
        ("server_port", serde_json::json!(443)),
        ("server_close_notify", serde_json::json!(false)),
        ("server_records_after_cut", serde_json::json!(0)),
        ("response_complete", serde_json::json!("unknown")),
        (
            "order",
            serde_json::to_value(OrderSpan::sent_then_received(
                REQUEST.len() as u32,
                RESPONSE.len() as u32,
            ))
            .unwrap(),
        ),
    ] {
        let e = reject(tamper(&p, |v| {
            v["attestation"]["attestation"]["facts"][field] = value
        }));
        assert_eq!(e, Error::Verify(VerifyError::BadSignature), "{field}");
    }
    // A length changed alone no longer fits the order: refused on decoding.
    let e = reject(tamper(&p, |v| {
        v["attestation"]["attestation"]["received_len"] = (RESPONSE.len() - 1).into()
    }));
    assert!(matches!(e, Error::Decode(DecodeError::Json(_))), "{e}");

    // Duplicated opening (overlap) and unsorted openings are decode errors.
    let e = reject(tamper(&p, |v| {
        let o = v["openings"][0].clone();
        v["openings"].as_array_mut().unwrap().insert(0, o);
    }));
    assert_eq!(e, Error::Decode(DecodeError::OpeningsNotSorted));
}

#[test]
fn overlapping_leaves_from_a_bad_layout_are_rejected() {
    // A (faulty) verifier signed a layout with overlapping leaves; revealing
    // both must not produce an ambiguous transcript.
    let t = Transcript::new(b"abcdefgh".to_vec(), Vec::new());
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let seed = CommitmentSeed::generate(&mut rng);
    let leaves = [(0u32, 5u32), (3, 8)];
    let hashes: Vec<_> = leaves
        .iter()
        .map(|&(a, b)| {
            commit::leaf_hash(
                Direction::Sent,
                a,
                &t.sent()[a as usize..b as usize],
                &seed.blinder(Direction::Sent, a, b),
            )
        })
        .collect();
    let tree = merkle::MerkleTree::new(hashes);
    let key = SigningKey::generate(Scheme::Ed25519, &mut rng);
    let att = Attestation::sign(
        AttestationFields {
            server_name: "x.example".into(),
            time: 0,
            cipher_suite: CipherSuite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
            sent_len: 8,
            received_len: 0,
            leaf_count: 2,
            transcript_root: tree.root(),
            handshake_hash: [0; 32],
            facts: SessionFacts {
                mode: webproof_attestation::ProofMode::Proxy,
                server_port: 443,
                server_close_notify: Some(false),
                server_records_after_cut: Some(0),
                response_complete: Completeness::Unknown,
                order: OrderSpan::sent_then_received(8, 0),
                sent_crlf_free: Vec::new(),
            },
        },
        &key,
    )
    .unwrap();
    let opening = |i: usize, (a, b): (u32, u32)| {
        serde_json::json!({
            "leaf_index": i, "direction": "sent", "start": a,
            "plaintext": hex::encode(&t.sent()[a as usize..b as usize]),
            "blinder": hex::encode(seed.blinder(Direction::Sent, a, b)),
            "proof": tree.proof(i).unwrap().iter().map(hex::encode).collect::<Vec<_>>(),
        })
    };
    let json = serde_json::json!({
        "format": "webproof-presentation", "version": 1,
        "attestation": serde_json::from_str::<serde_json::Value>(&att.to_json()).unwrap(),
        "openings": [opening(0, leaves[0]), opening(1, leaves[1])],
    });
    let e = verify_presentation(json.to_string().as_bytes(), &[key.verifying_key()]).unwrap_err();
    assert_eq!(
        e,
        Error::Verify(VerifyError::OverlappingRanges {
            direction: Direction::Sent,
            at: 3
        })
    );
    // Each on its own is fine.
    let json1 = serde_json::json!({
        "format": "webproof-presentation", "version": 1,
        "attestation": serde_json::from_str::<serde_json::Value>(&att.to_json()).unwrap(),
        "openings": [opening(1, leaves[1])],
    });
    verify_presentation(json1.to_string().as_bytes(), &[key.verifying_key()]).unwrap();
}

#[test]
fn range_beyond_attested_length_is_rejected() {
    // Attestation claims a shorter sent length than the leaves cover.
    let mut rng = ChaCha20Rng::seed_from_u64(3);
    let seed = CommitmentSeed::generate(&mut rng);
    let h = commit::leaf_hash(
        Direction::Sent,
        4,
        b"tail",
        &seed.blinder(Direction::Sent, 4, 8),
    );
    let key = SigningKey::generate(Scheme::Secp256k1, &mut rng);
    let att = Attestation::sign(
        AttestationFields {
            server_name: "x.example".into(),
            time: 0,
            cipher_suite: CipherSuite::TLS13_AES_256_GCM_SHA384,
            sent_len: 6,
            received_len: 0,
            leaf_count: 1,
            transcript_root: h,
            handshake_hash: [0; 32],
            facts: SessionFacts {
                mode: webproof_attestation::ProofMode::Proxy,
                server_port: 443,
                server_close_notify: Some(false),
                server_records_after_cut: Some(0),
                response_complete: Completeness::Unknown,
                order: OrderSpan::sent_then_received(6, 0),
                sent_crlf_free: Vec::new(),
            },
        },
        &key,
    )
    .unwrap();
    let json = serde_json::json!({
        "format": "webproof-presentation", "version": 1,
        "attestation": serde_json::from_str::<serde_json::Value>(&att.to_json()).unwrap(),
        "openings": [{"leaf_index": 0, "direction": "sent", "start": 4, "plaintext": hex::encode(b"tail"),
            "blinder": hex::encode(seed.blinder(Direction::Sent, 4, 8)), "proof": []}],
    });
    let e = verify_presentation(json.to_string().as_bytes(), &[key.verifying_key()]).unwrap_err();
    assert!(
        matches!(e, Error::Verify(VerifyError::RangeOutOfBounds { .. })),
        "{e}"
    );
}

#[test]
fn hidden_leaves_never_appear_in_the_presentation() {
    let s = setup(Scheme::Secp256k1, http_plan());
    let p = redacted(&s);
    let bytes = p.to_bytes();
    let json = p.to_json();
    let pin = find(RESPONSE, b"7}");
    let cookie = find(REQUEST, b"s3cr3t");
    for (i, l) in s.commitment.leaves().iter().enumerate() {
        let hidden = (l.direction == Direction::Received && l.start as usize == pin)
            || (l.direction == Direction::Sent && l.start as usize == cookie);
        let blinder = s.commitment.blinder(i).unwrap();
        let present = bytes.windows(16).any(|w| w == blinder);
        assert_eq!(present, !hidden, "leaf {i}");
        assert_eq!(json.contains(&hex::encode(blinder)), !hidden, "leaf {i}");
    }
    assert!(!bytes.windows(6).any(|w| w == b"s3cr3t"));
    assert!(!json.contains(&hex::encode(b"s3cr3t")));
    // The seed itself never appears.
    let seed = s.commitment.seed().to_bytes();
    assert!(!bytes.windows(32).any(|w| w == seed));

    // Brute force of the hidden one-byte pin leaf: trying all 256 values with
    // any blinder the presentation contains never reproduces its hash.
    let pin_index = s
        .commitment
        .leaves()
        .iter()
        .position(|l| l.direction == Direction::Received && l.start as usize == pin)
        .unwrap();
    let target = s.commitment.leaf_hashes()[pin_index];
    let blinders: Vec<[u8; 16]> = p
        .openings()
        .iter()
        .map(|o| {
            let b = o.range();
            s.commitment.seed().blinder(o.direction(), b.start, b.end)
        })
        .chain([[0u8; 16]])
        .collect();
    for b in &blinders {
        for v in 0..=255u8 {
            assert_ne!(
                commit::leaf_hash(Direction::Received, pin as u32, &[v], b),
                target
            );
        }
    }
}

#[test]
fn reveal_must_align_unless_covering() {
    let s = setup(Scheme::Ed25519, http_plan());
    let mut b = PresentationBuilder::new(&s.attestation, &s.transcript, &s.commitment).unwrap();
    assert!(matches!(
        b.reveal(Direction::Sent, 1..5),
        Err(Error::UnalignedReveal { .. })
    ));
    assert!(b.reveal(Direction::Sent, 0..0).is_err());
    assert!(b.reveal(Direction::Sent, 0..REQUEST.len() + 1).is_err());
    let covered = b.reveal_covering(Direction::Sent, 1..5).unwrap();
    assert_eq!(covered, 0..16);
    let v = b.build().verify(&[s.key.verifying_key()]).unwrap();
    assert_eq!(v.sent.revealed_len(), 16);
    // Builder refuses mismatched secrets.
    let other = Transcript::new(b"other".to_vec(), RESPONSE.to_vec());
    assert!(PresentationBuilder::new(&s.attestation, &other, &s.commitment).is_err());
    let s2 = setup(Scheme::Ed25519, CommitPlan::new());
    assert_eq!(
        PresentationBuilder::new(&s.attestation, &s.transcript, &s2.commitment).err(),
        Some(Error::CommitmentMismatch)
    );
    let mut b = PresentationBuilder::new(&s.attestation, &s.transcript, &s.commitment).unwrap();
    assert!(b
        .server_identity(ServerIdentity::new(vec![vec![1]]).unwrap())
        .is_err());
}

#[test]
fn malformed_inputs_give_errors() {
    let s = setup(Scheme::Secp256k1, http_plan());
    let bytes = redacted(&s).to_bytes();
    // Every truncation.
    for n in 0..bytes.len() {
        assert!(
            Presentation::from_bytes(&bytes[..n]).is_err(),
            "truncated to {n}"
        );
    }
    // Trailing bytes.
    let mut t = bytes.clone();
    t.push(0);
    assert_eq!(
        Presentation::from_bytes(&t),
        Err(DecodeError::TrailingBytes { count: 1 })
    );
    // Oversized.
    let big = vec![0u8; presentation::MAX_PRESENTATION_LEN + 1];
    assert!(matches!(
        Presentation::decode(&big),
        Err(DecodeError::TooLarge { .. })
    ));
    // Huge counts with little data must not allocate or hang.
    let mut w = b"WPPR\x00\x01".to_vec();
    w.extend(s.attestation.to_bytes());
    w.push(0);
    w.extend(u32::MAX.to_be_bytes());
    assert!(matches!(
        Presentation::from_bytes(&w),
        Err(DecodeError::Truncated { .. })
    ));
    // Other version, other magic.
    let mut t = bytes.clone();
    t[5] = 2;
    assert!(matches!(
        Presentation::from_bytes(&t),
        Err(DecodeError::UnsupportedVersion { .. })
    ));
    assert!(Presentation::decode(b"not json").is_err());
    assert!(Presentation::decode(&[0xff, 0xfe]).is_err());
    // JSON strictness: unknown field, uppercase hex, wrong format tag.
    let p = redacted(&s);
    let mut v: serde_json::Value = serde_json::from_str(&p.to_json()).unwrap();
    v["extra"] = 1.into();
    assert!(Presentation::from_json(&v.to_string()).is_err());
    let upper = p.to_json().replace(
        &hex::encode(s.key.key_id().0),
        &hex::encode_upper(s.key.key_id().0),
    );
    assert!(Presentation::from_json(&upper).is_err());
    assert!(Presentation::from_json(&p.to_json().replace("webproof-presentation", "x")).is_err());
    // Oversized opening in JSON.
    let mut v: serde_json::Value = serde_json::from_str(&p.to_json()).unwrap();
    v["openings"][0]["plaintext"] = hex::encode(vec![0u8; MAX_LEAF_LEN + 1]).into();
    assert!(Presentation::from_json(&v.to_string()).is_err());
    // Attestation-level checks.
    let body = s.attestation.attestation().to_bytes();
    let mut t = body.clone();
    t[8..10].copy_from_slice(&0xc02fu16.to_be_bytes()); // a TLS 1.2 suite under TLS 1.3
    assert!(matches!(
        Attestation::from_bytes(&t),
        Err(DecodeError::SuiteVersionMismatch { .. })
    ));
    let mut t = body.clone();
    t[127] = b'A';
    assert_eq!(
        Attestation::from_bytes(&t),
        Err(DecodeError::InvalidServerName)
    );
    let mut t = body;
    t[126] = 0;
    assert!(Attestation::from_bytes(&t).is_err());
    assert!(normalize_server_name("").is_err());
    assert!(normalize_server_name("a b").is_err());
    assert_eq!(
        normalize_server_name("WWW.Example.COM").unwrap(),
        "www.example.com"
    );
}

/// Deterministic quick fuzz: random and mutated inputs to every decoder.
/// Nothing may panic; a mutated presentation must never verify unless it
/// decodes to the very same presentation.
#[test]
fn quick_fuzz_decoders() {
    let s = setup(Scheme::Ed25519, http_plan());
    let p = redacted(&s);
    let seeds = [
        p.to_bytes(),
        s.attestation.to_bytes(),
        p.to_json().into_bytes(),
    ];
    let trusted = [s.key.verifying_key()];
    let mut rng = ChaCha20Rng::seed_from_u64(0xf022);
    for iter in 0..4000 {
        let mut input = seeds[iter % seeds.len()].clone();
        match rng.gen_range(0..5) {
            0 => {
                let n = rng.gen_range(0..300);
                input = (0..n).map(|_| rng.gen()).collect();
            }
            1 => {
                for _ in 0..rng.gen_range(1..8) {
                    let i = rng.gen_range(0..input.len());
                    input[i] = rng.gen();
                }
            }
            2 => input.truncate(rng.gen_range(0..input.len())),
            3 => {
                let i = rng.gen_range(0..input.len());
                let extra: Vec<u8> = (0..rng.gen_range(1..40)).map(|_| rng.gen()).collect();
                input.splice(i..i, extra);
            }
            _ => {
                // Overwrite a 4-byte window with an extreme value (counts, lengths).
                if input.len() >= 4 {
                    let i = rng.gen_range(0..input.len() - 3);
                    let v = [0u32, 1, 0x7fff_ffff, u32::MAX][rng.gen_range(0..4)];
                    input[i..i + 4].copy_from_slice(&v.to_be_bytes());
                }
            }
        }
        // Binary decoding is canonical: whatever decodes re-encodes to the input.
        if let Ok(a) = SignedAttestation::from_bytes(&input) {
            assert_eq!(a.to_bytes(), input);
        }
        if let Ok(a) = Attestation::from_bytes(&input) {
            assert_eq!(a.to_bytes(), input);
        }
        if let Ok(d) = Presentation::from_bytes(&input) {
            assert_eq!(d.to_bytes(), input);
            assert_eq!(Presentation::from_json(&d.to_json()).unwrap(), d);
        }
        if let Ok(text) = std::str::from_utf8(&input) {
            let _ = SignedAttestation::from_json(text);
        }
        if let Ok(decoded) = Presentation::decode(&input) {
            if decoded.verify(&trusted).is_ok() {
                assert_eq!(
                    decoded, p,
                    "a mutated presentation verified as a different one"
                );
            }
        }
    }
}

#[test]
fn long_transcript_with_many_leaves() {
    let mut rng = ChaCha20Rng::seed_from_u64(5);
    let sent: Vec<u8> = (0..3000).map(|_| rng.gen()).collect();
    let received: Vec<u8> = (0..20_000).map(|_| rng.gen()).collect();
    let t = Transcript::new(sent, received.clone());
    let c = TranscriptCommitment::new(&t, &CommitPlan::new(), CommitmentSeed::generate(&mut rng))
        .unwrap();
    let key = SigningKey::generate(Scheme::Secp256k1, &mut rng);
    let att = Attestation::sign(
        AttestationFields::for_commitment(
            "example.com",
            7,
            CipherSuite::TLS13_CHACHA20_POLY1305_SHA256,
            &c,
            [9; 32],
            SessionFacts {
                mode: webproof_attestation::ProofMode::Proxy,
                server_port: 443,
                server_close_notify: Some(true),
                server_records_after_cut: Some(0),
                response_complete: Completeness::Truncated,
                order: OrderSpan::sent_then_received(3000, 20_000),
                sent_crlf_free: Vec::new(),
            },
        ),
        &key,
    )
    .unwrap();
    let mut b = PresentationBuilder::new(&att, &t, &c).unwrap();
    let covered = b.reveal_covering(Direction::Received, 5000..9000).unwrap();
    let p = b.build();
    let v = verify_presentation(&p.to_bytes(), &[key.verifying_key()]).unwrap();
    let (range, data) = v.received.revealed().next().unwrap();
    assert_eq!(range.start as usize..range.end as usize, covered);
    assert_eq!(data, &received[covered]);
    assert_eq!(v.sent.revealed_len(), 0);
}

/// Opening length fields at their limits (u32 max start, length and
/// count): errors, never a wrapped range, a panic or a large allocation.
#[test]
fn opening_lengths_at_their_limits() {
    let s = setup(Scheme::Ed25519, http_plan());
    let opening = |start: u32, len: u32, body: usize, path: u8| {
        let mut w = b"WPPR\x00\x01".to_vec();
        w.extend(s.attestation.to_bytes());
        w.push(0); // no server identity
        w.extend(1u32.to_be_bytes());
        w.extend(0u32.to_be_bytes()); // leaf index
        w.push(1); // received
        w.extend(start.to_be_bytes());
        w.extend(len.to_be_bytes());
        w.extend(vec![b'x'; body]);
        w.extend([0u8; 16]); // blinder
        w.push(path);
        w
    };
    // A well-formed shape decodes (and then fails verification).
    let ok = Presentation::from_bytes(&opening(0, 1, 1, 0)).unwrap();
    assert!(ok.verify(&[s.key.verifying_key()]).is_err());
    // start + len past u32.
    assert!(matches!(
        Presentation::from_bytes(&opening(u32::MAX, 1, 1, 0)),
        Err(DecodeError::RangeOverflow { .. })
    ));
    assert!(matches!(
        Presentation::from_bytes(&opening(u32::MAX - 2, 3, 3, 0)),
        Err(DecodeError::RangeOverflow { .. })
    ));
    // The largest start that fits decodes; verification refuses the range.
    let last = Presentation::from_bytes(&opening(u32::MAX - 1, 1, 1, 0)).unwrap();
    assert!(last.verify(&[s.key.verifying_key()]).is_err());
    // Length fields at u32 / u16 max, with and without the bytes.
    for len in [u32::MAX, u32::MAX - 1, 1 << 31, u16::MAX as u32 + 1] {
        assert!(
            Presentation::from_bytes(&opening(0, len, 0, 0)).is_err(),
            "{len}"
        );
    }
    assert!(Presentation::from_bytes(&opening(0, MAX_LEAF_LEN as u32, 10, 0)).is_err());
    // A proof longer than allowed, or longer than the input.
    assert!(Presentation::from_bytes(&opening(0, 1, 1, u8::MAX)).is_err());
    assert!(Presentation::from_bytes(&opening(0, 1, 1, 33)).is_err());
    // JSON: the same limits.
    let p = redacted(&s);
    for start in [
        u64::from(u32::MAX),
        u64::from(u32::MAX) - 1,
        u64::from(u32::MAX) + 1,
    ] {
        let mut v: serde_json::Value = serde_json::from_str(&p.to_json()).unwrap();
        v["openings"][0]["start"] = start.into();
        assert!(Presentation::from_json(&v.to_string()).is_err(), "{start}");
    }
    let mut v: serde_json::Value = serde_json::from_str(&p.to_json()).unwrap();
    let n = v["openings"][0]["plaintext"].as_str().unwrap().len() as u64 / 2;
    v["openings"][0]["start"] = (u64::from(u32::MAX) - n + 1).into();
    let p2 = Presentation::from_json(&v.to_string());
    assert!(
        matches!(p2, Err(DecodeError::RangeOverflow { .. })),
        "{p2:?}"
    );
}
