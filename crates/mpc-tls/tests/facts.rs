//! What an MPC-mode output and attestation state about the session: the
//! mode, and nothing the verifier did not establish. The verifier never
//! sees the wire, so a prover that stops forwarding the server's records
//! at a record boundary (dropping the rest of the response and the
//! close_notify) must get an attestation that reads "possibly truncated",
//! never proxy mode's "nothing was cut" (`server_records_after_cut = 0`).

#![allow(clippy::single_range_in_vec_init)] // one revealed range is a list of one

mod common;
use common::*;
use futures::executor::block_on;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use std::cell::Cell;
use std::rc::Rc;
use webproof_attestation::{
    verify_presentation, Completeness, ProofMode, ResponseEnd, Scheme, SigningKey,
};
use webproof_core::{memory_duplex, Channel};
use webproof_disclosure::attest::AttestationBundle;
use webproof_disclosure::http::RevealItem;
use webproof_mpc_tls::hello::*;
use webproof_mpc_tls::response::{
    prove_response, verify_response, ProofStats, ResponseClaim, VerifiedResponse,
};
use webproof_mpc_tls::ProverOutcome;
use webproof_ot::{SoftSpokenReceiver, SoftSpokenSender};
use webproof_zk::Config;

/// A response of several TLS records (rustls writes at most 16 KiB each).
fn response(n: usize) -> Vec<u8> {
    let body: Vec<u8> = (0..n).map(|i| b'a' + (i * 7 % 26) as u8).collect();
    let mut r = format!("HTTP/1.1 200 OK\r\nContent-Length: {n}\r\n\r\n").into_bytes();
    r.extend(body);
    r
}

const REQUEST: &[u8] = b"GET /statement HTTP/1.1\r\nHost: webproof.test\r\nCookie: s=1\r\n\r\n";

/// One MPC session of `seed` against the rustls server of `c` sending
/// `body`, with `hooks`; its outcome and the COT parties the proof goes on
/// with.
fn session(
    seed: u64,
    c: &Certs,
    body: &[u8],
    hooks: Hooks,
) -> (Done, SoftSpokenSender, SoftSpokenReceiver) {
    let (p, hello, v, sender, receiver) = sessions_ext(
        seed,
        prover_config(
            NAME,
            ECDHE_ECDSA_AES128_GCM_SHA256,
            GROUP_P256,
            true,
            REQUEST,
        ),
        verifier_config(&c.ca_der, NAME),
    );
    (
        run(p, hello, v, server(c), body, hooks).unwrap(),
        sender,
        receiver,
    )
}

/// The proof of the response: `outcome` (the prover's, possibly altered)
/// claims `claim` with `blinders`, the verifier of `d` checks it.
fn prove(
    d: &Done,
    outcome: &ProverOutcome,
    claim: &ResponseClaim,
    blinders: &[[u8; 16]],
    sender: SoftSpokenSender,
    receiver: SoftSpokenReceiver,
) -> (
    Result<ProofStats, webproof_mpc_tls::Error>,
    Result<VerifiedResponse, webproof_mpc_tls::Error>,
) {
    let cfg = Config {
        cot_batch: 1 << 18,
        ..Config::default()
    };
    let (a, b) = memory_duplex();
    let mut r1 = ChaCha20Rng::seed_from_u64(100);
    let mut r2 = ChaCha20Rng::seed_from_u64(101);
    let (p, v) = block_on(async {
        futures::join!(
            prove_response(
                receiver,
                Channel::new(a),
                cfg,
                outcome,
                claim,
                blinders,
                &mut r1
            ),
            verify_response(sender, Channel::new(b), cfg, &d.verifier, true, &mut r2)
        )
    });
    (p.map(|(stats, _, _)| stats), v)
}

/// Keeps a server flight only up to the end of its first application-data
/// record (the rest of the response and the close_notify are dropped);
/// notes the flight's index.
fn cut_after_first_app_record(cut_at: Rc<Cell<Option<usize>>>) -> FlightHook {
    Box::new(move |i, buf: &mut Vec<u8>| {
        if cut_at.get().is_some() {
            return;
        }
        let mut at = 0;
        for (ct, len) in records(buf) {
            at += 5 + len;
            if ct == 23 {
                // The first application-data record after the handshake.
                buf.truncate(at);
                cut_at.set(Some(i));
                return;
            }
        }
    })
}

/// The prover forwards the first record of a 40 KB response, drops the
/// rest and the server's close_notify, and reports the server's close.
/// The proof passes (every forwarded record is genuine), and the verifier
/// signs: mode MPC, port 0 ("not recorded"), close_notify and records
/// after the cut "not established", and the response end reads "possibly
/// truncated" in the output, the attestation and the checked
/// presentation.
#[test]
fn truncated_response_is_not_attested_as_uncut() {
    let c = certs(KeyKind::Ecdsa, &[NAME], false);
    let full = response(40_000);
    let cut_at = Rc::new(Cell::new(None));
    let hooks = Hooks {
        server_to_prover: Some(cut_after_first_app_record(cut_at.clone())),
        close_after_flights: Some(2),
        ..Hooks::default()
    };
    let (d, sender, receiver) = session(30, &c, &full, hooks);
    assert_eq!(cut_at.get(), Some(1), "the response came in flight 1");
    let outcome = d.prover.clone();
    let got = outcome.response.clone();
    assert!(got.len() < full.len() && full.starts_with(&got));
    eprintln!(
        "the server sent {} response bytes and close_notify; the prover forwarded {}",
        full.len(),
        got.len()
    );

    // Commit to both directions, reveal the status line only.
    let opts = webproof_disclosure::attest::AttestOptions {
        chunk_len: Some(300),
        boundaries: Vec::new(),
    };
    let (transcript, commitment) = webproof_disclosure::attest::commit(
        &opts,
        REQUEST,
        &got,
        &mut ChaCha20Rng::seed_from_u64(5),
    )
    .unwrap();
    let claim = ResponseClaim::new(&outcome, &[0..15])
        .unwrap()
        .with_commitment(&outcome, &commitment);
    let blinders = webproof_disclosure::attest::blinders(&commitment);
    let (p, v) = prove(&d, &outcome, &claim, &blinders, sender, receiver);
    p.unwrap();
    let v = v.unwrap();

    // The output: nothing of proxy mode's meaning.
    let out = webproof_mpc_tls::verifier_output(&d.verifier, &v, NAME, 1_700_000_000).unwrap();
    assert_eq!(out.proof, webproof_disclosure::ProofKind::Mpc);
    assert_eq!(out.server_port, 0);
    assert_eq!(out.server_close_notify, None);
    assert_eq!(out.server_records_after_cut, None);
    assert_eq!(out.received.len, got.len());
    let facts = out.facts();
    assert_eq!(facts.mode, ProofMode::Mpc);
    assert_eq!(facts.ending(), ResponseEnd::PossiblyTruncated);

    // The attestation signs the same, and the presentation shows it.
    let key = SigningKey::generate(Scheme::Ed25519, &mut ChaCha20Rng::seed_from_u64(6));
    let reply = webproof_mpc_tls::attestation(&key, &d.verifier, &v, &out).unwrap();
    let bundle =
        AttestationBundle::accept(&reply, transcript, commitment, outcome.certificates.clone())
            .unwrap();
    let signed = bundle.attestation.attestation().facts();
    assert_eq!(signed, &facts);
    assert_eq!(
        signed.server_records_after_cut, None,
        "not attested as uncut"
    );
    assert_eq!(signed.response_complete, Completeness::Unknown);
    eprintln!(
        "signed facts: mode {:?}, port {}, close_notify {:?}, records after cut {:?}: {}",
        signed.mode,
        signed.server_port,
        signed.server_close_notify,
        signed.server_records_after_cut,
        signed.ending()
    );
    let webproof_disclosure::attest::Presented {
        presentation: pres, ..
    } = bundle
        .present(
            &[RevealItem::Recv(webproof_disclosure::Range {
                start: 0,
                end: 15,
            })],
            false,
        )
        .unwrap();
    let checked = verify_presentation(&pres.to_bytes(), &[key.verifying_key()]).unwrap();
    assert_eq!(checked.facts.mode, ProofMode::Mpc);
    assert!(checked.facts.ending().may_be_truncated());
    let json = checked.to_json_value();
    assert_eq!(json["mode"], "mpc");
    assert_eq!(json["possibly_truncated"], true);
}

/// An honest session to a server that ends with close_notify, proven by
/// MPC mode's proof of the response: the claim says the last record is
/// a close_notify, the proof shows it, the output and the attestation
/// state it (close_notify `true`, nothing after the cut), and the
/// response does not read "possibly truncated". The same claim on the
/// truncated session of the test above (whose last forwarded record is
/// application data) is refused before the proof.
#[test]
fn close_notify_is_proven_and_attested() {
    let c = certs(KeyKind::Ecdsa, &[NAME], false);
    let full = response(3_000);
    let (d, sender, receiver) = session(31, &c, &full, Hooks::default());
    let outcome = d.prover.clone();
    assert_eq!(outcome.response, full);
    assert!(outcome.close_notify, "the server ended with close_notify");
    let opts = webproof_disclosure::attest::AttestOptions {
        chunk_len: Some(300),
        boundaries: Vec::new(),
    };
    let (transcript, commitment) = webproof_disclosure::attest::commit(
        &opts,
        REQUEST,
        &outcome.response,
        &mut ChaCha20Rng::seed_from_u64(5),
    )
    .unwrap();
    let claim = ResponseClaim::new(&outcome, &[0..15])
        .unwrap()
        .with_commitment(&outcome, &commitment);
    assert!(claim.close_notify);
    let blinders = webproof_disclosure::attest::blinders(&commitment);
    let (p, v) = prove(&d, &outcome, &claim, &blinders, sender, receiver);
    p.unwrap();
    let v = v.unwrap();
    assert!(v.close_notify);
    let out = webproof_mpc_tls::verifier_output(&d.verifier, &v, NAME, 1_700_000_000).unwrap();
    assert_eq!(out.server_close_notify, Some(true));
    assert_eq!(out.server_records_after_cut, Some(0));
    let facts = out.facts();
    assert!(!facts.ending().may_be_truncated(), "{}", facts.ending());
    let key = SigningKey::generate(Scheme::Ed25519, &mut ChaCha20Rng::seed_from_u64(6));
    let reply = webproof_mpc_tls::attestation(&key, &d.verifier, &v, &out).unwrap();
    let bundle =
        AttestationBundle::accept(&reply, transcript, commitment, outcome.certificates.clone())
            .unwrap();
    assert_eq!(bundle.attestation.attestation().facts(), &facts);
}

/// A prover that claims a close_notify the recording does not end with
/// (the truncated session: its last forwarded record is application
/// data) is refused before the proof.
#[test]
fn close_notify_claim_without_the_alert_is_refused() {
    let c = certs(KeyKind::Ecdsa, &[NAME], false);
    let cut_at = Rc::new(Cell::new(None));
    let hooks = Hooks {
        server_to_prover: Some(cut_after_first_app_record(cut_at.clone())),
        close_after_flights: Some(2),
        ..Hooks::default()
    };
    let (d, sender, receiver) = session(32, &c, &response(40_000), hooks);
    let mut claim = ResponseClaim::new(&d.prover, &[0..15]).unwrap();
    assert!(!claim.close_notify);
    claim.close_notify = true;
    let (_, v) = prove(&d, &d.prover, &claim, &[], sender, receiver);
    match v {
        Err(webproof_mpc_tls::Error::Malformed(why)) => {
            assert!(why.contains("close_notify"), "{why}")
        }
        other => panic!("a close_notify claim without the alert: {other:?}"),
    }
}
