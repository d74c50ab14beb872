//! Honest sessions of every kind on the simulated runtime: each suite and
//! group in both modes with a byte hidden, and attested sessions whose
//! presentation a third party checks. The verifier's output must be the
//! prover's, and every revealed byte the server's.
//!
//! These ran over loopback sockets against the HTTPS fixture in
//! `webproof-net`'s tests (`e2e.rs`, `mpc.rs`, `attest.rs`).

mod common;

use common::*;
use rand_chacha::rand_core::SeedableRng;
use std::sync::Arc;
use webproof_attestation::{Scheme, SigningKey};
use webproof_disclosure::attest::{AttestOptions, AttestationBundle};
use webproof_disclosure::http::{http_request, parse_items};
use webproof_proxy::{CipherSuite, KxGroup, ProofKind, TlsVersion};
use webproof_session::Mode;

/// A 2000-byte body and a 900-byte padded request, byte 100 of the
/// response hidden: both directions big enough to span records.
fn sized(pair: &mut Pair) {
    pair.server = Server::Bytes(2000);
    pair.request = http_request("GET", HOST, 443, "/bytes", &[], &[], 900);
    pair.reveal = parse_items(&["all", "hide-recv:100-101"]).unwrap();
}

/// Every ECDSA suite (the pair's certificate is ECDSA) with both groups,
/// in proxy mode.
#[test]
fn every_suite_and_group_verifies() {
    let suites = CipherSuite::ALL
        .iter()
        .copied()
        .filter(|c| !c.name().contains("RSA"));
    for (i, suite) in suites.enumerate() {
        for (j, group) in [KxGroup::X25519, KxGroup::Secp256r1]
            .into_iter()
            .enumerate()
        {
            let mut pair = Pair::new(400 + 2 * i as u64 + j as u64);
            sized(&mut pair);
            pair.tls.suites = vec![suite];
            pair.tls.groups = vec![group];
            let (p, v) = pair.run(Mode::Proxy);
            let out = p.unwrap_or_else(|e| panic!("{suite} {group:?}: {e}"));
            assert_eq!(v.unwrap().output, out.output);
            let o = &out.output;
            assert_eq!(o.cipher_suite, suite);
            assert_eq!(o.key_exchange_group, group);
            assert_eq!(o.tls_version, suite.version());
            assert_eq!(o.proof, ProofKind::Zk);
            assert_eq!(o.sent.hidden(), 0);
            assert_eq!(o.received.hidden(), 1);
            assert!(o.received.text.starts_with("HTTP/1.1 200 OK\r\n"));
            assert_eq!(o.received.len, out.response.len());
            assert_eq!(out.response, response(pair.server));
            assert!(o.sent.len > 900);
            assert!(out.stats.uploaded_online > 900 && out.stats.downloaded_online > 2000);
        }
    }
}

/// Both AES-GCM suites of MPC mode with both groups: the verifier's view
/// is the server's response with one byte hidden, and the request proven.
#[test]
fn mpc_suites_and_groups_verify_with_true_bytes() {
    let cases = [
        (
            CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
            KxGroup::Secp256r1,
        ),
        (
            CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
            KxGroup::X25519,
        ),
    ];
    for (i, (suite, group)) in cases.into_iter().enumerate() {
        let mut pair = Pair::new(420 + i as u64);
        sized(&mut pair);
        pair.tls.suites = vec![suite];
        pair.tls.groups = vec![group];
        let (p, v) = pair.run(Mode::Mpc);
        let out = p.unwrap_or_else(|e| panic!("{suite} {group:?}: {e}"));
        let v = v.unwrap().output;
        assert_eq!(v, out.output);
        assert_eq!(v.proof, ProofKind::Mpc);
        assert_eq!(v.tls_version, TlsVersion::Tls12);
        assert_eq!(v.cipher_suite, suite);
        assert_eq!(v.key_exchange_group, group);
        assert_eq!(v.server_name, HOST);
        assert_eq!(out.response, response(pair.server));
        assert_eq!(v.received.len, out.response.len());
        assert_eq!(v.received.hidden(), 1);
        let mut expect = out.response.clone();
        expect[100] = 0;
        assert_eq!(v.received.bytes, expect);
        assert!(v.received.text.starts_with("HTTP/1.1 200 OK\r\n"));
        assert_eq!(v.sent.len, pair.request.len());
        assert_eq!(v.sent.hidden(), 0);
        assert_eq!(v.sent.bytes, pair.request);
        assert!(out.stats.time_proof_ms > 0.0 && out.stats.uploaded_online > 0);
    }
}

/// An attested session in proxy mode (TLS 1.3 and 1.2) and MPC mode: the
/// verifier sees nothing of the plaintext and signs; a third party that
/// trusts its key checks a presentation revealing one JSON field, and
/// nothing else passes (another key, any flipped byte).
#[test]
fn attested_sessions_and_their_presentations() {
    let boundary = "json:account.balance";
    for (i, (scheme, version, mode)) in [
        (Scheme::Ed25519, TlsVersion::Tls13, Mode::Proxy),
        (Scheme::Secp256k1, TlsVersion::Tls12, Mode::Proxy),
        (Scheme::Ed25519, TlsVersion::Tls12, Mode::Mpc),
    ]
    .into_iter()
    .enumerate()
    {
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(440 + i as u64);
        let signer = Arc::new(SigningKey::generate(scheme, &mut rng));
        let mut pair = Pair::new(440 + i as u64);
        pair.verifier.attestation_key = Some(signer.clone());
        pair.tls.version = Some(version);
        let cookie = [(
            "Cookie".to_string(),
            "session=very-secret-token".to_string(),
        )];
        pair.request = http_request("GET", HOST, 443, "/account", &cookie, &[], 0);
        // The verifier sees nothing of the plaintext.
        pair.reveal = parse_items(&["none"]).unwrap();
        pair.attest = Some(AttestOptions {
            chunk_len: None,
            boundaries: parse_items(&[boundary]).unwrap(),
        });
        let (p, v) = pair.run(mode);
        let out = p.unwrap_or_else(|e| panic!("{scheme:?} {mode:?}: {e}"));
        let v = v.unwrap().output;
        assert_eq!(v.received.revealed.len(), 0, "{scheme:?} {mode:?}");
        assert_eq!(v.sent.revealed.len(), 0);
        let bundle = out.attestation.expect("an attestation");
        assert_eq!(bundle.verifying_key, signer.verifying_key());

        // The bundle survives its file form.
        let bundle = AttestationBundle::from_json(&bundle.to_json()).unwrap();
        let presented = bundle
            .present(&parse_items(&[boundary]).unwrap(), true)
            .unwrap();
        assert!(!presented.revealed.is_empty());
        // Offline check by a third party that trusts the verifier's key.
        let bytes = presented.presentation.to_bytes();
        let checked =
            webproof_attestation::verify_presentation(&bytes, &[signer.verifying_key()]).unwrap();
        assert_eq!(checked.server_name, HOST);
        // The signed session facts reach the third party; their order
        // covers both directions.
        assert_eq!(&checked.facts, bundle.attestation.attestation().facts());
        let ends = |d| {
            checked
                .facts
                .order
                .iter()
                .filter(|s| s.direction == d)
                .map(|s| s.end)
                .max()
        };
        assert_eq!(
            ends(webproof_attestation::Direction::Sent),
            Some(checked.sent.len())
        );
        assert_eq!(
            ends(webproof_attestation::Direction::Received),
            Some(checked.received.len())
        );
        let shown = checked.received.to_marked_string('X');
        assert!(shown.contains("1234"), "{shown}");
        assert!(
            !shown.contains("acct_42") && !shown.contains("Ada"),
            "{shown}"
        );
        let sent = checked.sent.to_marked_string('X');
        assert!(!sent.contains("very-secret-token"));
        // Another key is not trusted.
        let other = SigningKey::generate(scheme, &mut rng);
        assert!(
            webproof_attestation::verify_presentation(&bytes, &[other.verifying_key()]).is_err()
        );
        // A flipped byte anywhere in the presentation is rejected.
        for i in (0..bytes.len()).step_by(97) {
            let mut t = bytes.clone();
            t[i] ^= 0x01;
            assert!(
                webproof_attestation::verify_presentation(&t, &[signer.verifying_key()]).is_err(),
                "flip at {i}"
            );
        }
    }
}

/// A verifier without a signing key refuses a session that asks for an
/// attestation, in both modes.
#[test]
fn a_verifier_without_a_key_refuses_to_attest() {
    for (mode, seed) in [(Mode::Proxy, 450), (Mode::Mpc, 451)] {
        let mut pair = Pair::new(seed);
        pair.attest = Some(AttestOptions::default());
        let (p, v) = pair.run(mode);
        let err = p.map(|_| ()).unwrap_err();
        assert!(
            err.to_string().contains("does not sign attestations"),
            "{mode:?}: {err}"
        );
        assert!(v.is_err());
    }
}
