//! TLS 1.2 ChaCha20-Poly1305 (RFC 7905) in MPC mode: whole sessions
//! against the in-process rustls server restricted to one ChaCha20 suite,
//! then the sealed proof of the response and the request; and the
//! verifier's cheats on the records' 2PC (a flipped keystream bit, a wrong
//! input of the tag circuit) refused before the record leaves.

#![allow(clippy::single_range_in_vec_init)] // one revealed range is a list of one

mod common;
use common::*;
use futures::executor::block_on;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use std::sync::Arc;
use webproof_core::{memory_duplex, Channel};
use webproof_mpc_tls::hello::*;
use webproof_mpc_tls::msg::{ProverMsg, VerifierMsg};
use webproof_mpc_tls::response::{prove_response, verify_response, ResponseClaim};
use webproof_tls::Direction;
use webproof_tls::{CipherSuite, KxGroup};
use webproof_zk::Config;

fn response(n: usize) -> Vec<u8> {
    let body: Vec<u8> = (0..n).map(|i| b'a' + (i * 7 % 26) as u8).collect();
    let mut r = format!("HTTP/1.1 200 OK\r\nContent-Length: {n}\r\n\r\n").into_bytes();
    r.extend(body);
    r
}

fn request(len: usize) -> Vec<u8> {
    let mut req = b"GET /bytes HTTP/1.1\r\nHost: webproof.test\r\nX-Padding: ".to_vec();
    req.resize(len - 4, b'p');
    req.extend(b"\r\n\r\n");
    req
}

/// A rustls TLS 1.2 server that runs `suite` alone.
fn server_with_suite(c: &Certs, suite: CipherSuite) -> rustls::ServerConnection {
    let mut provider = rustls::crypto::ring::default_provider();
    provider
        .cipher_suites
        .retain(|s| u16::from(s.suite()) == suite.code());
    assert_eq!(provider.cipher_suites.len(), 1);
    let cfg = rustls::ServerConfig::builder_with_provider(Arc::new(provider))
        .with_protocol_versions(&[&rustls::version::TLS12])
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            c.chain.clone(),
            rustls::pki_types::PrivateKeyDer::Pkcs8(rustls::pki_types::PrivatePkcs8KeyDer::from(
                c.key_der.clone(),
            )),
        )
        .unwrap();
    rustls::ServerConnection::new(Arc::new(cfg)).unwrap()
}

struct Session {
    d: Done,
    s: webproof_ot::SoftSpokenSender,
    r: webproof_ot::SoftSpokenReceiver,
}

#[allow(clippy::too_many_arguments)]
fn session_with(
    kind: KeyKind,
    suite: CipherSuite,
    group: KxGroup,
    ems: bool,
    req: &[u8],
    body: usize,
    seed: u64,
    hooks: Hooks,
) -> Result<Session, Stop> {
    let c = certs(kind, &[NAME], false);
    let (p, hello, v, s, r) = sessions_ext(
        seed,
        prover_config(NAME, suite, group, ems, req),
        verifier_config(&c.ca_der, NAME),
    );
    let d = run(
        p,
        hello,
        v,
        server_with_suite(&c, suite),
        &response(body),
        hooks,
    )?;
    Ok(Session { d, s, r })
}

/// An honest session: the request reaches the server byte-exact, the
/// response the prover; the recording has ChaCha20's layout (no explicit
/// nonce); both parties keep the same recording.
fn honest(
    kind: KeyKind,
    suite: CipherSuite,
    group: KxGroup,
    ems: bool,
    req: &[u8],
    seed: u64,
) -> Session {
    let t = std::time::Instant::now();
    let s = session_with(kind, suite, group, ems, req, 1500, seed, Hooks::default())
        .unwrap_or_else(|e| panic!("{suite} {group:?}: {e:?}"));
    let d = &s.d;
    assert_eq!(d.request_at_server, req);
    assert_eq!(d.prover.response, response(1500));
    assert!(d.prover.close_notify);
    assert_eq!(d.verifier.suite, suite);
    assert_eq!(d.verifier.group, group);
    let rec = &d.verifier.recording;
    let sent: Vec<(u8, usize)> = rec
        .records(Direction::Sent)
        .iter()
        .map(|r| (r.content_type, r.payload.len()))
        .collect();
    // ClientHello, ClientKeyExchange, CCS, Finished (16 + tag), the
    // request's records (ciphertext + tag: no explicit nonce).
    assert_eq!(sent[2..4], [(20, 1), (22, 32)]);
    let lens: Vec<usize> = sent[4..].iter().map(|&(_, l)| l - 16).collect();
    assert_eq!(lens.iter().sum::<usize>(), req.len());
    assert_eq!(records(&d.client_bytes)[..4], sent[..4]);
    assert_eq!(d.prover.recording.digest(), rec.digest());
    eprintln!(
        "{suite} {group:?}: {:.2} MB P->V, {:.2} MB V->P, {:.2} s",
        d.stats.up as f64 / 1e6,
        d.stats.down as f64 / 1e6,
        t.elapsed().as_secs_f64()
    );
    s
}

fn cfg() -> Config {
    Config {
        cot_batch: 1 << 18,
        ..Config::default()
    }
}

/// The sealed proof of `claim` on session `s`: the verifier's result.
fn prove(
    s: Session,
    claim: &ResponseClaim,
) -> (
    Result<webproof_mpc_tls::response::ProofStats, webproof_mpc_tls::Error>,
    Result<webproof_mpc_tls::VerifiedResponse, webproof_mpc_tls::Error>,
) {
    let (a, b) = memory_duplex();
    let mut r1 = ChaCha20Rng::seed_from_u64(100);
    let mut r2 = ChaCha20Rng::seed_from_u64(101);
    let outcome = s.d.prover.clone();
    block_on(async {
        futures::join!(
            async {
                prove_response(s.r, Channel::new(a), cfg(), &outcome, claim, &[], &mut r1)
                    .await
                    .map(|(st, _, _)| st)
            },
            verify_response(s.s, Channel::new(b), cfg(), &s.d.verifier, false, &mut r2)
        )
    })
}

/// Proves parts of the response and of the request: the verifier ends with
/// exactly the server's bytes and the request's.
fn proven(s: Session, req: &[u8]) {
    let resp = s.d.prover.response.clone();
    let ranges = [0..15, 100..900, resp.len() - 1..resp.len()];
    let outcome = s.d.prover.clone();
    let verifier = s.d.verifier.clone();
    let claim = ResponseClaim::new(&outcome, &ranges)
        .unwrap()
        .with_request(&outcome, req, &[0..10, 11..req.len()])
        .unwrap();
    let (p, v) = prove(s, &claim);
    p.unwrap();
    let v = v.unwrap();
    // The verifier's output counts the recording's application bytes by
    // the suite's record overhead (no explicit nonce here): it must find
    // the lengths the proof covers.
    let out = webproof_mpc_tls::verifier_output(&verifier, &v, NAME, 1_700_000_000).unwrap();
    assert_eq!(out.received.bytes.len(), resp.len());
    assert_eq!(out.sent.bytes.len(), req.len());
    assert_eq!(out.received.bytes[100..900], resp[100..900]);
    assert_eq!(v.response_len, resp.len());
    for (got, want) in v.ranges.iter().zip(&ranges) {
        assert_eq!(got.offset, want.start);
        assert_eq!(got.bytes, resp[want.clone()]);
    }
    assert_eq!(v.request_len, req.len());
    assert_eq!(v.request_ranges[0].bytes, req[..10]);
    assert_eq!(v.request_ranges[1].bytes, req[11..]);
}

#[test]
fn ecdsa_chacha20_x25519_proven() {
    let req = request(300);
    let s = honest(
        KeyKind::Ecdsa,
        ECDHE_ECDSA_CHACHA20_POLY1305_SHA256,
        GROUP_X25519,
        true,
        &req,
        1,
    );
    proven(s, &req);
}

#[test]
fn ecdsa_chacha20_p256_no_ems() {
    honest(
        KeyKind::Ecdsa,
        ECDHE_ECDSA_CHACHA20_POLY1305_SHA256,
        GROUP_P256,
        false,
        &request(100),
        2,
    );
}

/// RSA, and a request in two records (the second one shorter than a
/// Poly1305 block multiple), proven.
#[test]
fn rsa_chacha20_p256_two_records_proven() {
    let req = request(2048 + 37);
    let s = honest(
        KeyKind::Rsa,
        ECDHE_RSA_CHACHA20_POLY1305_SHA256,
        GROUP_P256,
        true,
        &req,
        3,
    );
    proven(s, &req);
}

/// What a cheating party's run ends in: an error (returned, to check who
/// stopped) and a server that never got the request.
fn refused(hooks: Hooks, seed: u64) -> Stop {
    let saw = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let hooks = Hooks {
        server_saw: Some(saw.clone()),
        ..hooks
    };
    let req = request(100);
    let r = session_with(
        KeyKind::Ecdsa,
        ECDHE_ECDSA_CHACHA20_POLY1305_SHA256,
        GROUP_X25519,
        true,
        &req,
        100,
        seed,
        hooks,
    );
    assert!(saw.borrow().is_empty(), "the request reached the server");
    match r {
        Ok(_) => panic!("a cheating party's session went through"),
        Err(stop) => stop,
    }
}

/// The verifier garbles the request record's circuit so that one
/// keystream bit decodes flipped (its decoding information for that bit
/// inverted): the dual execution's check fails and the prover refuses
/// before anything encrypted with that keystream leaves.
#[test]
fn verifier_flipping_a_keystream_bit_is_refused() {
    // Circuit numbering: the key derivation's three steps (the full PRF),
    // then per record its record circuit and its tag circuit; the
    // request's first record is record 1.
    let request_circuit = 3 + 2;
    let hooks = Hooks {
        verifier_to_prover: Some(Box::new(move |m: &mut VerifierMsg| {
            if let VerifierMsg::Decoding {
                circuit, decoding, ..
            } = m
            {
                if usize::from(*circuit) == request_circuit {
                    // Keystream bits are the first output group, whose
                    // permute bits start after the group count and its
                    // bit count (`webproof_mpc`'s `Decoding::to_bytes`):
                    // bit 28 decodes flipped.
                    decoding[8 + 3] ^= 0x10;
                }
            }
        })),
        ..Hooks::default()
    };
    // The prover's dual execution names the cheat.
    match refused(hooks, 11) {
        Stop::Prover(webproof_mpc_tls::Error::Mpc(e)) => {
            assert!(e.to_string().contains("keystream"), "{e}")
        }
        other => panic!("not the prover's keystream check: {other:?}"),
    }
}

/// The verifier answers the tag circuit's inputs with one label wrong (a
/// wrong share of the polynomial or pad): the prover's tag circuit
/// evaluation fails or decodes a wrong tag, so either the prover stops or
/// the server refuses the record; the request is never accepted.
#[test]
fn verifier_sending_a_wrong_tag_input_is_refused() {
    let hooks = Hooks {
        verifier_to_prover: Some(Box::new(|m: &mut VerifierMsg| {
            if let VerifierMsg::RecTagShare {
                id, corrections, ..
            } = m
            {
                if *id == 1 {
                    corrections[5] ^= 1;
                }
            }
        })),
        ..Hooks::default()
    };
    // The label decodes to neither value (the prover stops), or to a
    // wrong tag (the server refuses the record): either way no request.
    match refused(hooks, 12) {
        Stop::Prover(_) | Stop::Server(_) => {}
        other => panic!("{other:?}"),
    }
}

/// A prover message altered on its way (the tag request of the client
/// Finished carrying another ciphertext) makes the verifier's share of the
/// polynomial another record's: the server refuses the Finished.
#[test]
fn altered_finished_ciphertext_fails_the_session() {
    let hooks = Hooks {
        prover_to_verifier: Some(Box::new(|m: &mut ProverMsg| {
            if let ProverMsg::RecCiphertext { id: 0, ct, .. } = m {
                ct[0] ^= 1;
            }
        })),
        ..Hooks::default()
    };
    // The verifier refuses the forwarded Finished (another ciphertext than
    // the 2PC's), or the server its tag.
    match refused(hooks, 13) {
        Stop::Verifier(_) | Stop::Server(_) | Stop::Prover(_) => {}
        other => panic!("{other:?}"),
    }
}

/// A prover claiming request bytes other than those it sent, or holding
/// another second masked copy of the request's ciphertext than the one
/// the verifier received (so a ciphertext other than the one the 2PC
/// tagged), is refused by the proof.
#[test]
fn other_request_bytes_or_ciphertext_copies_are_refused() {
    let req = request(200);
    let fresh = |seed| {
        session_with(
            KeyKind::Ecdsa,
            ECDHE_ECDSA_CHACHA20_POLY1305_SHA256,
            GROUP_X25519,
            true,
            &req,
            300,
            seed,
            Hooks::default(),
        )
        .unwrap()
    };
    // Another byte claimed.
    let s = fresh(21);
    let outcome = s.d.prover.clone();
    let mut other = req.clone();
    other[5] ^= 1;
    let claim = ResponseClaim::new(&outcome, &[0..15])
        .unwrap()
        .with_request(&outcome, &other, &[0..req.len()])
        .unwrap();
    let (p, v) = prove(s, &claim);
    assert!(p.is_err() || v.is_err(), "another request byte was proven");
    assert!(v.is_err());
    // D² flipped in the prover's copy: the proof's tie of both copies to
    // the ciphertext fails.
    let mut s = fresh(22);
    let last = s.d.prover.hidden[0].masked2.len() - 1;
    s.d.prover.hidden[0].masked2[last] ^= 0x80;
    let outcome = s.d.prover.clone();
    let claim = ResponseClaim::new(&outcome, &[0..15])
        .unwrap()
        .with_request(&outcome, &req, &[0..req.len()])
        .unwrap();
    let (_, v) = prove(s, &claim);
    assert!(
        v.is_err(),
        "a request with another ciphertext copy was proven"
    );
}
