//! Attested sessions end to end, in proxy mode (TLS 1.3 and 1.2) and MPC
//! mode: the prover commits to its transcript and reveals nothing to the
//! verifier, the verifier signs, and a third party checks a presentation
//! that reveals one JSON field.

mod common;
use common::*;
use std::sync::Arc;
use webproof_attestation::{Scheme, SigningKey};
use webproof_net::Mode;
use webproof_proxy::attest::{AttestOptions, AttestationBundle};

fn key(scheme: Scheme) -> Arc<SigningKey> {
    Arc::new(SigningKey::generate(scheme, &mut rand::rngs::OsRng))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attested_session_and_presentation() {
    let s = fixture().await;
    let ca = s.fixture.certs.ca_pem.clone();
    let port = s.fixture.addr.port();
    for (scheme, version, mode) in [
        (
            Scheme::Ed25519,
            webproof_proxy::TlsVersion::Tls13,
            Mode::Proxy,
        ),
        (
            Scheme::Secp256k1,
            webproof_proxy::TlsVersion::Tls12,
            Mode::Proxy,
        ),
        (
            Scheme::Ed25519,
            webproof_proxy::TlsVersion::Tls12,
            Mode::Mpc,
        ),
    ] {
        let signer = key(scheme);
        let mut cfg = quick_config(roots(&ca));
        cfg.attestation_key = Some(signer.clone());
        let (addr, v) = verifier(cfg).await;
        let mut o = options(&addr, "localhost", port, "/json", &ca);
        o.version = Some(version);
        o.mode = mode;
        o.headers
            .push(("Cookie".into(), "session=very-secret-token".into()));
        // The verifier sees nothing of the plaintext.
        o.reveal = vec!["none".parse().unwrap()];
        o.attest = Some(AttestOptions {
            chunk_len: None,
            boundaries: vec!["json:account.balance.amount".parse().unwrap()],
        });
        let out = webproof_net::prove(&o).await.unwrap();
        let vout = v.await.unwrap().unwrap();
        assert_eq!(vout.received.revealed.len(), 0, "{scheme:?} {mode:?}");
        assert_eq!(vout.sent.revealed.len(), 0);
        let bundle = out.attestation.expect("an attestation");
        assert_eq!(bundle.verifying_key, signer.verifying_key());

        // The bundle survives its file form.
        let bundle = AttestationBundle::from_json(&bundle.to_json()).unwrap();
        let webproof_proxy::attest::Presented {
            presentation: p,
            revealed,
            ..
        } = bundle
            .present(&["json:account.balance.amount".parse().unwrap()], true)
            .unwrap();
        assert!(!revealed.is_empty());
        // Offline check by a third party that trusts the verifier's key.
        let bytes = p.to_bytes();
        let checked =
            webproof_attestation::verify_presentation(&bytes, &[signer.verifying_key()]).unwrap();
        assert_eq!(checked.server_name, "localhost");
        // The signed session facts reach the third party; their order
        // covers both directions (checked at signing and decoding).
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
        assert!(shown.contains("1234.56"), "{shown}");
        assert!(!shown.contains("Ada Lovelace"), "{shown}");
        let sent = checked.sent.to_marked_string('X');
        assert!(!sent.contains("very-secret-token"));
        // Another key is not trusted.
        let other = key(scheme);
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_verifier_without_key_refuses_to_attest() {
    let s = fixture().await;
    let ca = s.fixture.certs.ca_pem.clone();
    for mode in [Mode::Proxy, Mode::Mpc] {
        let (addr, v) = verifier(quick_config(roots(&ca))).await;
        let mut o = options(&addr, "localhost", s.fixture.addr.port(), "/json", &ca);
        o.mode = mode;
        o.attest = Some(AttestOptions::default());
        let err = webproof_net::prove(&o).await.unwrap_err();
        assert!(
            err.to_string().contains("does not sign attestations"),
            "{mode:?}: {err}"
        );
        assert!(v.await.unwrap().is_err());
    }
}
