//! MPC mode over TLS 1.3 against a real `rustls` TLS 1.3 server in one
//! thread: the handshake completes (the server accepts the client
//! Finished the 2PC made possible), the parties' key shares recombine to
//! the server's application keys, and what either party refuses it
//! refuses with a clear error.

mod common;
use common::tls13::*;
use common::*;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use webproof_mpc_tls::tls13::response::{prove_response13, verify_response13, Claim13, Verified13};
use webproof_mpc_tls::tls13::{
    attestation13, verifier_output13, Tls13ProverSession, Tls13VerifierSession, SUITE,
};
use webproof_mpc_tls::{cots_needed, CotPool, Error, ProverMsg, VerifierMsg};
use webproof_tls::KxGroup;

const REQUEST: &[u8] = b"GET /json HTTP/1.1\r\nHost: webproof.test\r\nConnection: close\r\n\r\n";

fn sessions13(
    seed: u64,
    group: KxGroup,
    ca_der: &[u8],
    name: &str,
) -> (Tls13ProverSession, ProverMsg, Tls13VerifierSession) {
    let (delta, keys, macs) = cots(seed, cots_needed(REQUEST.len()));
    let mut rng = ChaCha20Rng::seed_from_u64(seed + 10);
    let (p, hello) = Tls13ProverSession::new(
        prover_config(NAME, SUITE, group, false, REQUEST),
        CotPool::new(macs),
        &mut rng,
    )
    .unwrap();
    let v = Tls13VerifierSession::new(
        verifier_config(ca_der, name),
        delta,
        CotPool::new(keys),
        &mut rng,
    );
    (p, hello, v)
}

fn response(n: usize) -> Vec<u8> {
    let body: Vec<u8> = (0..n).map(|i| b'a' + (i % 26) as u8).collect();
    let mut r = format!("HTTP/1.1 200 OK\r\nContent-Length: {n}\r\n\r\n").into_bytes();
    r.extend(body);
    r
}

/// The request in 2PC: the server reads it byte-exact; both recordings
/// hold the same bytes (the request's records as their header and zeros).
fn check_request(kind: KeyKind, group: KxGroup, request: &[u8], seed: u64) {
    session_with_response(kind, group, request, seed);
}

/// A whole session with a 3,000-byte response, checked as
/// [`check_request`] says; the COT extensions go on into the proof.
fn session_with_response(
    kind: KeyKind,
    group: KxGroup,
    request: &[u8],
    seed: u64,
) -> (
    Done13,
    Vec<u8>,
    webproof_ot::SoftSpokenSender,
    webproof_ot::SoftSpokenReceiver,
) {
    session_with_suite(SUITE, kind, group, request, seed)
}

/// [`session_with_response`] under `suite`.
fn session_with_suite(
    suite: webproof_tls::CipherSuite,
    kind: KeyKind,
    group: KxGroup,
    request: &[u8],
    seed: u64,
) -> (
    Done13,
    Vec<u8>,
    webproof_ot::SoftSpokenSender,
    webproof_ot::SoftSpokenReceiver,
) {
    session_full(suite, kind, group, &[], request, seed)
}

/// [`session_with_suite`] against a server running only `server_groups`
/// (empty: every group).
fn session_full(
    suite: webproof_tls::CipherSuite,
    kind: KeyKind,
    group: KxGroup,
    server_groups: &[KxGroup],
    request: &[u8],
    seed: u64,
) -> (
    Done13,
    Vec<u8>,
    webproof_ot::SoftSpokenSender,
    webproof_ot::SoftSpokenReceiver,
) {
    let c = certs(kind, &[NAME], false);
    let (delta, keys, macs, cs, cr) = cots_ext(seed, cots_needed(request.len()));
    let mut rng = ChaCha20Rng::seed_from_u64(seed + 10);
    let (p, hello) = Tls13ProverSession::new(
        prover_config(NAME, suite, group, false, request),
        CotPool::new(macs),
        &mut rng,
    )
    .unwrap();
    let v = Tls13VerifierSession::new(
        verifier_config(&c.ca_der, NAME),
        delta,
        CotPool::new(keys),
        &mut rng,
    );
    let resp = response(3000);
    let t = std::time::Instant::now();
    let server = server13_groups(&c, false, server_groups);
    let d = run13(p, hello, v, server, Hooks13::default(), Some(&resp))
        .unwrap_or_else(|e| panic!("{kind:?} {group:?}: {e:?}"));
    eprintln!(
        "TLS 1.3 request of {} bytes, {kind:?} {group:?}: {:?}, {} bytes up, {} bytes down",
        request.len(),
        t.elapsed(),
        d.up,
        d.down
    );
    assert_eq!(d.request, request);
    assert_eq!(d.p.recording().digest(), d.v.recording().digest());
    // The client's records: ClientHello, Finished, then the request's,
    // each recorded as its header and zeros.
    let sent = &d.v.recording().sent;
    let lens = webproof_mpc_tls::cots::request_records(request.len());
    // A second ClientHello after a HelloRetryRequest.
    let hello = 1 + !server_groups.is_empty() as usize;
    assert_eq!(sent.len(), hello + 1 + lens.len());
    for (r, l) in sent[hello + 1..].iter().zip(&lens) {
        assert_eq!((r.content_type, r.payload.len()), (23, l + 1 + 16));
        assert!(r.payload.iter().all(|&b| b == 0));
    }
    assert!(!d.server_bytes.is_empty());
    // The response reaches the prover byte-exact, after the close.
    assert!(d.v.closed());
    let r = d.p.response().unwrap();
    assert_eq!(r.response, resp);
    assert!(r.close_notify);
    assert_eq!(r.server_alert, None);
    eprintln!("  {} NewSessionTicket skipped", r.tickets);
    (d, resp, cs, cr)
}

fn zk_cfg() -> webproof_zk::Config {
    webproof_zk::Config {
        cot_batch: 1 << 18,
        ..webproof_zk::Config::default()
    }
}

/// Both parties' runs of the proof of the response.
fn prove13(
    d: &Done13,
    cs: webproof_ot::SoftSpokenSender,
    cr: webproof_ot::SoftSpokenReceiver,
    claim: &Claim13,
) -> (Result<(), Error>, Result<Verified13, Error>) {
    prove13_with(d, cs, cr, claim, &[])
}

/// [`prove13`] with the blinders of the claim's committed leaves.
fn prove13_with(
    d: &Done13,
    cs: webproof_ot::SoftSpokenSender,
    cr: webproof_ot::SoftSpokenReceiver,
    claim: &Claim13,
    blinders: &[[u8; 16]],
) -> (Result<(), Error>, Result<Verified13, Error>) {
    let (a, b) = webproof_core::memory_duplex();
    let mut rng = ChaCha20Rng::seed_from_u64(77);
    futures::executor::block_on(async {
        futures::join!(
            async {
                let mut r = ChaCha20Rng::seed_from_u64(78);
                prove_response13(
                    cr,
                    webproof_core::Channel::new(a),
                    zk_cfg(),
                    &d.p,
                    claim,
                    blinders,
                    &mut r,
                )
                .await
                .map(|_| ())
            },
            verify_response13(
                cs,
                webproof_core::Channel::new(b),
                zk_cfg(),
                &d.v,
                !blinders.is_empty(),
                &mut rng
            )
        )
    })
}

#[test]
fn tls13_response_proven_with_only_true_facts() {
    let (d, resp, cs, cr) = session_with_response(KeyKind::Ecdsa, KxGroup::X25519, REQUEST, 41);
    let ranges = [0..17, 100..160, resp.len() - 5..resp.len()];
    // The request line too (the Host header stays hidden).
    let req = 0..18;
    let claim = Claim13::new(&d.p, &ranges)
        .unwrap()
        .with_request(&d.p, std::slice::from_ref(&req))
        .unwrap();
    let t = std::time::Instant::now();
    let (p, v) = prove13(&d, cs, cr, &claim);
    eprintln!(
        "TLS 1.3 proof of a {}-byte response: {:?}",
        resp.len(),
        t.elapsed()
    );
    p.unwrap();
    let v = v.unwrap();
    assert_eq!(v.response_len, resp.len());
    assert!(v.close_notify);
    assert_eq!(v.ranges.len(), 3);
    for ((at, bytes), r) in v.ranges.iter().zip(&ranges) {
        assert_eq!((*at, &bytes[..]), (r.start, &resp[r.clone()]));
    }
    assert_eq!(v.request_len, REQUEST.len());
    assert_eq!(v.request_ranges, vec![(0, REQUEST[req].to_vec())]);
    let out = verifier_output13(&d.v, &v, NAME, now()).unwrap();
    assert_eq!(out.sent.len, REQUEST.len());
    assert_eq!(out.sent.revealed.len(), 1);
    assert_eq!(&out.sent.bytes[..18], &REQUEST[..18]);
    assert_eq!(out.tls_version, webproof_tls::TlsVersion::Tls13);
    assert_eq!(out.cipher_suite, SUITE);
    assert_eq!(out.key_exchange_group, KxGroup::X25519);
    assert_eq!(out.received.len, resp.len());
    assert_eq!(out.server_close_notify, Some(true));
    assert_eq!(out.server_port, 0);
}

#[test]
fn tls13_false_response_claims_are_refused() {
    let (d, resp, cs, cr) = session_with_response(KeyKind::Ecdsa, KxGroup::Secp256r1, REQUEST, 42);
    // A revealed byte other than the response's.
    let mut claim = Claim13::new(&d.p, std::slice::from_ref(&(0..17))).unwrap();
    claim.ranges[0].1[9] = b'4';
    let (_, v) = prove13(&d, cs, cr, &claim);
    assert!(matches!(v, Err(Error::Proof(_))), "{v:?}");
    // Padding claimed where there is content: the response would be cut.
    let (d2, _, cs, cr) = session_with_response(KeyKind::Ecdsa, KxGroup::Secp256r1, REQUEST, 43);
    let mut claim = Claim13::new(&d2.p, std::slice::from_ref(&(0..4))).unwrap();
    let i = claim.records.iter().position(|r| r.0 == 23).unwrap();
    claim.records[i].1 -= 1;
    let (_, v) = prove13(&d2, cs, cr, &claim);
    assert!(matches!(v, Err(Error::Proof(_))), "{v:?}");
    // A request byte other than the one sent (the verifier never saw the
    // request: the proof under its masked ciphertext refuses it).
    let (d3, _, cs, cr) = session_with_response(KeyKind::Ecdsa, KxGroup::Secp256r1, REQUEST, 44);
    let mut claim = Claim13::new(&d3.p, &[])
        .unwrap()
        .with_request(&d3.p, std::slice::from_ref(&(0..3)))
        .unwrap();
    claim.request[0].1 = b"PUT".to_vec();
    let (_, v) = prove13(&d3, cs, cr, &claim);
    assert!(matches!(v, Err(Error::Proof(_))), "{v:?}");
    // Claims that do not fit the recording are refused before the proof.
    let claim = Claim13::new(&d.p, std::slice::from_ref(&(0..4))).unwrap();
    let mut c = claim.clone();
    c.records.pop();
    assert!(Claim13::decode(&c.encode()).is_ok());
    let mut c = claim.clone();
    c.ranges = vec![(resp.len(), vec![1])];
    let bytes = c.encode();
    assert!(Claim13::decode(&bytes[..bytes.len() - 1]).is_err());
    assert!(Claim13::decode(&[bytes.clone(), vec![0]].concat()).is_err());
}

#[test]
fn tls13_request_reaches_the_server() {
    check_request(KeyKind::Ecdsa, KxGroup::Secp256r1, REQUEST, 21);
}

#[test]
fn tls13_long_request_in_several_records() {
    // Three records (2048, 2048 and the rest): each its own sequence
    // number and nonce, all tags from one GHASH key's powers.
    let mut req =
        b"POST /upload HTTP/1.1\r\nHost: webproof.test\r\nContent-Length: 4500\r\n\r\n".to_vec();
    req.extend((0..4500).map(|i| b'A' + (i % 26) as u8));
    let head_end = req.len();
    assert!(head_end > 4096);
    check_request(KeyKind::Rsa, KxGroup::X25519, &req, 22);
}

fn check(kind: KeyKind, group: KxGroup, seed: u64) {
    let c = certs(kind, &[NAME], false);
    let (p, hello, v) = sessions13(seed, group, &c.ca_der, NAME);
    let t = std::time::Instant::now();
    let d = handshake(p, hello, v, server13(&c, false), Hooks13::default())
        .unwrap_or_else(|e| panic!("{kind:?} {group:?}: {e:?}"));
    eprintln!(
        "TLS 1.3 handshake {kind:?} {group:?}: {:?}, {} bytes up, {} bytes down",
        t.elapsed(),
        d.up,
        d.down
    );
    // The server accepted the client Finished.
    assert!(!d.server.is_handshaking());
    // The verifier checked the server it was configured for.
    let id = d.v.identity().unwrap();
    assert_eq!(id.server_name, NAME);
    assert_eq!(id.certificates[0], c.chain[0].to_vec());
    // Both recordings are the same bytes.
    assert_eq!(d.p.recording().digest(), d.v.recording().digest());
    // The shares recombine to the server's application keys, and neither
    // share alone is one.
    let keys = d.v.key_shares().unwrap().combine(d.p.key_shares().unwrap());
    let secrets = d.server.dangerous_extract_secrets().unwrap();
    let (rx_seq, rx) = secrets.rx;
    let (_, tx) = secrets.tx;
    // At most the request's one record is in (the prover runs it as soon
    // as the keys are shared).
    assert!(rx_seq <= 1);
    let (
        rustls::ConnectionTrafficSecrets::Aes128Gcm { key: ck, iv: civ },
        rustls::ConnectionTrafficSecrets::Aes128Gcm { key: sk, iv: siv },
    ) = (rx, tx)
    else {
        panic!("another suite")
    };
    assert_eq!(keys.client_key, ck.as_ref());
    assert_eq!(keys.client_iv, civ.as_ref());
    assert_eq!(keys.server_key, sk.as_ref());
    assert_eq!(keys.server_iv, siv.as_ref());
    assert_ne!(d.p.key_shares().unwrap().client_key, keys.client_key);
}

#[test]
fn tls13_handshake_ecdsa_p256() {
    check(KeyKind::Ecdsa, KxGroup::Secp256r1, 1);
}

#[test]
fn tls13_handshake_rsa_x25519() {
    check(KeyKind::Rsa, KxGroup::X25519, 2);
}

fn refused(hooks: Hooks13, name: &str, client_auth: bool, seed: u64) -> Stop {
    refused_by(
        hooks,
        certs(KeyKind::Ecdsa, &[NAME], false),
        name,
        client_auth,
        seed,
    )
}

fn refused_by(hooks: Hooks13, c: Certs, name: &str, client_auth: bool, seed: u64) -> Stop {
    let (p, hello, v) = sessions13(seed, KxGroup::Secp256r1, &c.ca_der, name);
    match handshake(p, hello, v, server13(&c, client_auth), hooks) {
        Ok(_) => panic!("the handshake completed"),
        Err(e) => e,
    }
}

#[test]
fn tls13_refuses_a_certificate_for_another_name() {
    // The server's certificate names another server: the verifier's name
    // check fails on the flight it decrypted itself, before the
    // application keys are derived.
    let c = certs(KeyKind::Ecdsa, &["other.test"], false);
    let e = refused_by(Hooks13::default(), c, NAME, false, 3);
    assert!(matches!(&e, Stop::Verifier(Error::Tls(_))), "{e:?}");
    assert!(format!("{e:?}").contains("not valid for"), "{e:?}");
}

#[test]
fn tls13_refuses_an_expired_certificate() {
    let c = certs(KeyKind::Ecdsa, &[NAME], true);
    let e = refused_by(Hooks13::default(), c, NAME, false, 11);
    assert!(matches!(&e, Stop::Verifier(Error::Tls(_))), "{e:?}");
}

#[test]
fn tls13_refuses_another_session_name() {
    // The verifier was asked for another server than the prover names.
    let e = refused(Hooks13::default(), "other.test", false, 12);
    assert!(matches!(e, Stop::Verifier(Error::ClientHello(_))), "{e:?}");
}

#[test]
fn tls13_refuses_client_certificates() {
    let e = refused(Hooks13::default(), NAME, true, 4);
    let msg = format!("{e:?}");
    assert!(matches!(&e, Stop::Prover(Error::Unsupported(_))), "{msg}");
    assert!(msg.contains("CertificateRequest"), "{msg}");
}

#[test]
fn tls13_refuses_a_tampered_client_hello() {
    // A ClientHello whose random is not the verifier's.
    let hooks = Hooks13 {
        prover_to_verifier: Some(Box::new(|m: &mut ProverMsg| {
            if let ProverMsg::ToServer(b) = m {
                if b[5] == 1 {
                    b[11] ^= 1;
                }
            }
        })),
        ..Default::default()
    };
    let e = refused(hooks, NAME, false, 5);
    assert!(matches!(e, Stop::Verifier(Error::ClientHello(_))), "{e:?}");
}

#[test]
fn tls13_refuses_a_wrong_opening() {
    // The prover opens another public share than it committed to.
    let hooks = Hooks13 {
        prover_to_verifier: Some(Box::new(|m: &mut ProverMsg| {
            if let ProverMsg::KeyOpen { blind, .. } = m {
                blind[0] ^= 1;
            }
        })),
        ..Default::default()
    };
    let e = refused(hooks, NAME, false, 6);
    assert!(matches!(e, Stop::Verifier(Error::Mpc(_))), "{e:?}");
}

#[test]
fn tls13_refuses_a_tampered_server_flight() {
    // A flipped bit in the server's encrypted flight: both parties read it
    // from their own copy and neither decrypts it.
    let hooks = Hooks13 {
        server_to_prover: Some(Box::new(|i, b: &mut Vec<u8>| {
            if i == 0 {
                let n = b.len();
                b[n - 20] ^= 1;
            }
        })),
        ..Default::default()
    };
    let e = refused(hooks, NAME, false, 7);
    assert!(matches!(e, Stop::Prover(Error::Decrypt { .. })), "{e:?}");
}

#[test]
fn tls13_verifier_refuses_tls12_terms_and_messages_out_of_order() {
    let c = certs(KeyKind::Ecdsa, &[NAME], false);
    // A TLS 1.2 suite in the terms of a TLS 1.3 session.
    let (_, hello, mut v) = sessions13(8, KxGroup::Secp256r1, &c.ca_der, NAME);
    let mut h = hello.clone();
    if let ProverMsg::Hello { terms, .. } = &mut h {
        terms.suite = webproof_mpc_tls::hello::ECDHE_ECDSA_AES128_GCM_SHA256;
    }
    assert!(matches!(v.on_message(h), Err(Error::Unsupported(_))));
    // Anything before the Hello.
    let (_, _, mut v) = sessions13(9, KxGroup::Secp256r1, &c.ca_der, NAME);
    assert!(matches!(
        v.on_message(ProverMsg::EctfCorrection(vec![0; 32])),
        Err(Error::Unexpected { .. })
    ));
    // While the tables stream, nothing but the prover's own upload: no
    // input label may go before every table is out.
    let (_, hello, mut v) = sessions13(10, KxGroup::Secp256r1, &c.ca_der, NAME);
    v.on_message(hello).unwrap();
    assert!(v.next_tables().unwrap().is_some());
    assert!(matches!(
        v.on_message(ProverMsg::ToServer(vec![22, 3, 1, 0, 0])),
        Err(Error::Unexpected { .. })
    ));
    while v.next_tables().unwrap().is_some() {}
    // Key-schedule labels before the ECtF.
    assert!(matches!(
        v.on_message(ProverMsg::KdfLabels {
            step: 0,
            labels: vec![0; 40]
        }),
        Err(Error::Unexpected { .. })
    ));
    // The server's bytes before the ClientHello.
    assert!(v
        .on_message(ProverMsg::FromServer(vec![22, 3, 3, 0, 0]))
        .is_err());
}

/// A run with `hooks` that must fail, and what the server read meanwhile.
fn refused_request(hooks: Hooks13, seed: u64) -> Stop {
    let c = certs(KeyKind::Ecdsa, &[NAME], false);
    let (p, hello, v) = sessions13(seed, KxGroup::Secp256r1, &c.ca_der, NAME);
    match run13(p, hello, v, server13(&c, false), hooks, Some(&response(10))) {
        Ok(d) => panic!("the session completed ({} request bytes)", d.request.len()),
        Err(e) => e,
    }
}

#[test]
fn tls13_a_wrong_keystream_check_sends_nothing() {
    // A verifier whose check value does not vouch for the keystream (as
    // when it garbled another one): the prover stops before the record
    // leaves, so the server never reads a request.
    let hooks = Hooks13 {
        verifier_to_prover: Some(Box::new(|m: &mut VerifierMsg| {
            if let VerifierMsg::RecTagShare { check, .. } = m {
                check[0] ^= 1;
            }
        })),
        ..Default::default()
    };
    let e = refused_request(hooks, 31);
    assert!(
        matches!(
            e,
            Stop::Prover(Error::Mpc(webproof_mpc::Error::VerifierCheated(_)))
        ),
        "{e:?}"
    );
}

#[test]
fn tls13_request_records_out_of_order_are_refused() {
    // A record announced as sent that has no tag share yet (or does not
    // exist), and client bytes forwarded after the Finished.
    let hooks = Hooks13 {
        prover_to_verifier: Some(Box::new(|m: &mut ProverMsg| {
            if let ProverMsg::RecSent { id } = m {
                *id += 1;
            }
        })),
        ..Default::default()
    };
    assert!(matches!(
        refused_request(hooks, 32),
        Stop::Verifier(Error::Unexpected { .. })
    ));
    let hooks = Hooks13 {
        prover_to_verifier: Some(Box::new(|m: &mut ProverMsg| {
            if let ProverMsg::RecSent { .. } = m {
                *m = ProverMsg::ToServer(vec![
                    23, 3, 3, 0, 17, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                ]);
            }
        })),
        ..Default::default()
    };
    assert!(matches!(
        refused_request(hooks, 33),
        Stop::Verifier(Error::ClientRecord(_))
    ));
}

#[test]
fn tls13_refuses_a_server_key_update() {
    // The 2PC derived one application key per direction: a KeyUpdate from
    // the server is refused, by name, when the response is decrypted.
    let hooks = Hooks13 {
        key_update: true,
        ..Default::default()
    };
    let e = refused_request(hooks, 34);
    assert!(
        matches!(&e, Stop::Prover(Error::Unsupported(m)) if m.contains("KeyUpdate")),
        "{e:?}"
    );
}

#[test]
fn tls13_aes256_gcm_sha384_whole_session() {
    // The SHA-384 key schedule (1,123,504 AND), AES-256 records, the
    // request in two records, the response proven under the AES-256 key.
    let suite = webproof_tls::CipherSuite::TLS13_AES_256_GCM_SHA384;
    let mut req =
        b"POST /x HTTP/1.1\r\nHost: webproof.test\r\nContent-Length: 2100\r\n\r\n".to_vec();
    req.extend((0..2100).map(|i| b'a' + (i % 26) as u8));
    let t = std::time::Instant::now();
    let (d, resp, cs, cr) = session_with_suite(suite, KeyKind::Rsa, KxGroup::Secp256r1, &req, 51);
    eprintln!(
        "TLS 1.3 AES-256-GCM-SHA384, {}-byte request: {:?}, {} bytes up, {} bytes down",
        req.len(),
        t.elapsed(),
        d.up,
        d.down
    );
    let range = 9..15;
    let claim = Claim13::new(&d.p, std::slice::from_ref(&range)).unwrap();
    let (p, v) = prove13(&d, cs, cr, &claim);
    p.unwrap();
    let v = v.unwrap();
    assert_eq!(v.response_len, resp.len());
    assert_eq!(v.ranges, vec![(9, resp[range].to_vec())]);
    let out = verifier_output13(&d.v, &v, NAME, now()).unwrap();
    assert_eq!(out.cipher_suite, suite);
    assert_eq!(out.sent.len, req.len());
}

#[test]
fn tls13_hello_retry_request_to_the_other_group() {
    // The terms offer a key share for one group; a server that runs only
    // the other asks for it by a HelloRetryRequest, and the session goes
    // on with the other group's committed share, both ways round.
    for (offered, server, seed) in [
        (KxGroup::Secp256r1, KxGroup::X25519, 61),
        (KxGroup::X25519, KxGroup::Secp256r1, 62),
    ] {
        let (d, resp, cs, cr) =
            session_full(SUITE, KeyKind::Ecdsa, offered, &[server], REQUEST, seed);
        assert_eq!(d.v.group(), Some(server));
        assert_eq!(
            d.v.recording().received[0].payload[6..38],
            webproof_tls::handshake::HRR_RANDOM
        );
        let claim = Claim13::new(&d.p, std::slice::from_ref(&(0..15))).unwrap();
        let (p, v) = prove13(&d, cs, cr, &claim);
        p.unwrap();
        let v = v.unwrap();
        assert_eq!(v.ranges, vec![(0, resp[..15].to_vec())]);
        let out = verifier_output13(&d.v, &v, NAME, now()).unwrap();
        assert_eq!(out.key_exchange_group, server);
        assert_eq!(out.sent.len, REQUEST.len());
    }
}

/// Flips bit 0 of byte `at` of what its writer sends (a verifier whose
/// messages on the proof's channel lie); `at == usize::MAX`: the last
/// byte of the first frame (its length is the stream's first 4 bytes).
struct Flip<T> {
    inner: T,
    at: usize,
    pos: usize,
}

impl<T: futures::AsyncWrite + Unpin> futures::AsyncWrite for Flip<T> {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        let mut b = buf.to_vec();
        if this.at == usize::MAX && this.pos == 0 && b.len() >= 4 {
            this.at = 4 + u32::from_le_bytes(b[..4].try_into().unwrap()) as usize - 1;
        }
        if (this.pos..this.pos + b.len()).contains(&this.at) {
            b[this.at - this.pos] ^= 1;
        }
        let r = std::pin::Pin::new(&mut this.inner).poll_write(cx, &b);
        if let std::task::Poll::Ready(Ok(n)) = r {
            this.pos += n;
        }
        r
    }
    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }
    fn poll_close(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.get_mut().inner).poll_close(cx)
    }
}

impl<T: futures::AsyncRead + Unpin> futures::AsyncRead for Flip<T> {
    fn poll_read(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut [u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

/// The proof with the verifier's stream flipped at `at` ([`Flip`]).
fn prove_flipped(seed: u64, at: usize) -> (Result<(), Error>, Result<Verified13, Error>) {
    let (d, _, cs, cr) = session_with_response(KeyKind::Ecdsa, KxGroup::Secp256r1, REQUEST, seed);
    let claim = Claim13::new(&d.p, std::slice::from_ref(&(0..17))).unwrap();
    let (a, b) = webproof_core::memory_duplex();
    let b = Flip {
        inner: b,
        at,
        pos: 0,
    };
    let mut rng = ChaCha20Rng::seed_from_u64(seed + 1);
    let mut r = ChaCha20Rng::seed_from_u64(seed + 2);
    futures::executor::block_on(async {
        futures::join!(
            async {
                let ch = webproof_core::Channel::new(a);
                prove_response13(cr, ch, zk_cfg(), &d.p, &claim, &[], &mut r)
                    .await
                    .map(|_| ())
            },
            verify_response13(
                cs,
                webproof_core::Channel::new(b),
                zk_cfg(),
                &d.v,
                false,
                &mut rng
            )
        )
    })
}

#[test]
fn tls13_audit_catches_a_lying_ole_reveal() {
    // The last revealed OLE input (the ECtF's) is not the one the
    // verifier answered with: the OLE audit catches it.
    let (p, v) = prove_flipped(72, usize::MAX);
    assert!(
        matches!(&p, Err(Error::VerifierCheated(m)) if m.contains("OLE")),
        "{p:?}"
    );
    assert!(v.is_err());
}

#[test]
fn tls13_audit_catches_a_lying_reveal() {
    // The verifier reveals another bit of its ECDHE share than it garbled
    // with (byte 12 of its first message: the frame's length, the group
    // count, the first group's length, then its bits). The prover's audit
    // catches it before it discloses anything, and the proof is not
    // opened.
    let (d, _, cs, cr) = session_with_response(KeyKind::Ecdsa, KxGroup::X25519, REQUEST, 71);
    let claim = Claim13::new(&d.p, std::slice::from_ref(&(0..17))).unwrap();
    let (a, b) = webproof_core::memory_duplex();
    let b = Flip {
        inner: b,
        at: 12,
        pos: 0,
    };
    let mut rng = ChaCha20Rng::seed_from_u64(79);
    let mut r = ChaCha20Rng::seed_from_u64(80);
    let (p, v) = futures::executor::block_on(async {
        futures::join!(
            async {
                let ch = webproof_core::Channel::new(a);
                let out = prove_response13(cr, ch, zk_cfg(), &d.p, &claim, &[], &mut r).await;
                // Hang up at once, as a prover that stops does.
                out.map(|_| ())
            },
            verify_response13(
                cs,
                webproof_core::Channel::new(b),
                zk_cfg(),
                &d.v,
                false,
                &mut rng
            )
        )
    });
    assert!(matches!(p, Err(Error::VerifierCheated(_))), "{p:?}");
    assert!(v.is_err());
}

#[test]
fn tls13_attestation_over_the_committed_transcript() {
    // The prover commits to the request and the response as proxy mode
    // does; the proof establishes every leaf's hash over the plaintext
    // (the request's under its masked ciphertext), and the verifier signs
    // the attestation over them.
    use webproof_attestation::{CommitPlan, CommitmentSeed, Transcript, TranscriptCommitment};
    let (d, resp, cs, cr) = session_with_response(KeyKind::Ecdsa, KxGroup::Secp256r1, REQUEST, 81);
    let t = Transcript::new(REQUEST.to_vec(), resp.clone());
    let plan = CommitPlan::new().with_chunk_len(64).unwrap();
    let commitment =
        TranscriptCommitment::new(&t, &plan, CommitmentSeed::from_bytes([7; 32])).unwrap();
    let blinders = webproof_disclosure::attest::blinders(&commitment);
    let claim = Claim13::new(&d.p, std::slice::from_ref(&(0..15)))
        .unwrap()
        .with_commitment(&commitment);
    let (p, v) = prove13_with(&d, cs, cr, &claim, &blinders);
    p.unwrap();
    let v = v.unwrap();
    assert_eq!(v.leaves, commitment.leaves());
    assert_eq!(v.leaf_hashes, commitment.leaf_hashes());
    let out = verifier_output13(&d.v, &v, NAME, now()).unwrap();
    let key = webproof_attestation::SigningKey::generate(
        webproof_attestation::Scheme::Ed25519,
        &mut ChaCha20Rng::seed_from_u64(6),
    );
    let reply = attestation13(&key, &d.v, &v, &out).unwrap();
    let bundle = webproof_disclosure::attest::AttestationBundle::accept(
        &reply,
        t,
        commitment,
        d.v.identity().unwrap().certificates.clone(),
    )
    .unwrap();
    assert_eq!(bundle.attestation.attestation().facts(), &out.facts());

    // A verifier without an attestation key refuses a commitment before
    // the proof.
    let (d3, _, cs, cr) = session_with_response(KeyKind::Ecdsa, KxGroup::Secp256r1, REQUEST, 83);
    let c3 = {
        let r3 = d3.p.response().unwrap().response.clone();
        let t3 = Transcript::new(REQUEST.to_vec(), r3);
        TranscriptCommitment::new(&t3, &plan, CommitmentSeed::from_bytes([7; 32])).unwrap()
    };
    let claim3 = Claim13::new(&d3.p, &[]).unwrap().with_commitment(&c3);
    let blinders3 = webproof_disclosure::attest::blinders(&c3);
    let (a, b) = webproof_core::memory_duplex();
    let mut r1 = ChaCha20Rng::seed_from_u64(84);
    let mut r2 = ChaCha20Rng::seed_from_u64(85);
    let (_, v3) = futures::executor::block_on(async {
        futures::join!(
            prove_response13(
                cr,
                webproof_core::Channel::new(a),
                zk_cfg(),
                &d3.p,
                &claim3,
                &blinders3,
                &mut r1
            ),
            verify_response13(
                cs,
                webproof_core::Channel::new(b),
                zk_cfg(),
                &d3.v,
                false,
                &mut r2
            )
        )
    });
    assert!(
        matches!(&v3, Err(e) if e.to_string().contains("attestation key")),
        "{v3:?}"
    );

    // A leaf hash of another transcript is refused by the proof.
    let (d2, resp2, cs, cr) =
        session_with_response(KeyKind::Ecdsa, KxGroup::Secp256r1, REQUEST, 82);
    let mut other = resp2.clone();
    other[3] ^= 1;
    let t2 = Transcript::new(REQUEST.to_vec(), other);
    let c2 = TranscriptCommitment::new(&t2, &plan, CommitmentSeed::from_bytes([7; 32])).unwrap();
    let claim = Claim13::new(&d2.p, &[]).unwrap().with_commitment(&c2);
    let (_, v) = prove13_with(
        &d2,
        cs,
        cr,
        &claim,
        &webproof_disclosure::attest::blinders(&c2),
    );
    assert!(v.is_err(), "{v:?}");
}

#[test]
fn tls13_refuses_a_key_share_other_than_the_sum() {
    // The ClientHello the verifier records carries a key share other than
    // the sum of the committed share and its own (its last bytes: the key
    // share is the last extension): the verifier refuses at the opening,
    // before it answers the ECtF.
    let hooks = Hooks13 {
        prover_to_verifier: Some(Box::new(|m: &mut ProverMsg| {
            if let ProverMsg::ToServer(b) = m {
                if b[5] == 1 {
                    let n = b.len();
                    b[n - 1] ^= 1;
                }
            }
        })),
        ..Default::default()
    };
    let e = refused(hooks, NAME, false, 13);
    assert!(
        matches!(&e, Stop::Verifier(Error::ClientHello(m)) if m.contains("key share")),
        "{e:?}"
    );
}

/// A request with a cookie of `n` bytes and the range of its value.
fn request_with_cookie(n: usize) -> (Vec<u8>, core::ops::Range<usize>) {
    let head = b"GET /json HTTP/1.1\r\nHost: webproof.test\r\nCookie: session=".to_vec();
    let value: Vec<u8> = (0..n).map(|i| b'a' + (i % 26) as u8).collect();
    let at = head.len();
    let req = [head, value, b"\r\nConnection: close\r\n\r\n".to_vec()].concat();
    (req, at..at + n)
}

/// The request's view with all but `hidden` revealed, the line-end-free
/// ranges the prover would claim for it
/// (`webproof_disclosure::exchange::hidden_head_bytes`, as the session
/// crate takes them) and the revealed ranges.
fn cookie_hidden(
    req: &[u8],
    hidden: &core::ops::Range<usize>,
) -> (Vec<core::ops::Range<usize>>, Vec<core::ops::Range<usize>>) {
    use webproof_disclosure::disclosure::Range;
    let shown = vec![0..hidden.start, hidden.end..req.len()];
    let revealed: Vec<Range> = shown.iter().map(|r| Range::new(r.start, r.end)).collect();
    let free = webproof_disclosure::exchange::hidden_head_bytes(req, &revealed)
        .iter()
        .map(|r| r.start..r.end)
        .collect();
    (free, shown)
}

/// As TLS 1.2's: a hidden cookie's bytes proven free of CR and LF over TLS
/// 1.3, here a cookie across the request's first record boundary (the
/// offsets are into the request, the records' inner content type bytes
/// between them): the verifier's output states the range and fixes where
/// the request ends; the attestation carries it too.
#[test]
fn tls13_hidden_request_head_bytes_are_proven_free_of_line_ends() {
    let (req, hidden) = request_with_cookie(2100);
    let lens = webproof_mpc_tls::cots::request_records(req.len());
    assert!(lens.len() >= 2 && hidden.start < lens[0] && hidden.end > lens[0]);
    let (free, shown) = cookie_hidden(&req, &hidden);
    assert_eq!(free, vec![hidden.clone()]);
    let (d, resp, cs, cr) = session_with_response(KeyKind::Ecdsa, KxGroup::X25519, &req, 91);
    use webproof_attestation::{CommitPlan, CommitmentSeed, Transcript, TranscriptCommitment};
    let t = Transcript::new(req.clone(), resp.clone());
    let plan = CommitPlan::new().with_chunk_len(128).unwrap();
    let commitment =
        TranscriptCommitment::new(&t, &plan, CommitmentSeed::from_bytes([9; 32])).unwrap();
    let blinders = webproof_disclosure::attest::blinders(&commitment);
    let claim = Claim13::new(&d.p, std::slice::from_ref(&(0..17)))
        .unwrap()
        .with_request(&d.p, &shown)
        .unwrap()
        .with_request_crlf_free(&free)
        .with_commitment(&commitment);
    assert_eq!(Claim13::decode(&claim.encode()).unwrap(), claim);
    let (p, v) = prove13_with(&d, cs, cr, &claim, &blinders);
    p.unwrap();
    let v = v.unwrap();
    assert_eq!(v.request_crlf_free, vec![hidden.clone()]);
    let out = verifier_output13(&d.v, &v, NAME, now()).unwrap();
    let proven = [webproof_disclosure::disclosure::Range::new(
        hidden.start,
        hidden.end,
    )];
    assert_eq!(out.sent_crlf_free, proven);
    assert!(!out.sent.text.contains("session=a") && out.sent.text.contains("session="));
    // The verifier's view fixes where the request ends, with the proven
    // range and only with it.
    let view: Vec<Option<u8>> = (0..req.len())
        .map(|i| (!hidden.contains(&i)).then_some(req[i]))
        .collect();
    assert_eq!(
        webproof_disclosure::exchange::framed_request_ends(&view, &out.sent_crlf_free),
        vec![req.len()]
    );
    assert!(webproof_disclosure::exchange::framed_request_ends(&view, &[]).is_empty());
    // The attestation states it as the output does.
    let key = webproof_attestation::SigningKey::generate(
        webproof_attestation::Scheme::Ed25519,
        &mut ChaCha20Rng::seed_from_u64(6),
    );
    let reply = attestation13(&key, &d.v, &v, &out).unwrap();
    let bundle = webproof_disclosure::attest::AttestationBundle::accept(
        &reply,
        t,
        commitment,
        d.v.identity().unwrap().certificates.clone(),
    )
    .unwrap();
    let facts = bundle.attestation.attestation().facts();
    assert_eq!(facts, &out.facts());
    // The facts state the line-end-free runs the verifier knows (the
    // revealed ones joined to the proven): the cookie's lies in one.
    let (a, b) = (hidden.start as u32, hidden.end as u32);
    assert!(
        facts
            .sent_crlf_free
            .iter()
            .any(|r| r.start <= a && b <= r.end),
        "{:?}",
        facts.sent_crlf_free
    );
}

/// A range called free of line ends that holds one (the cookie's value
/// and the CR after it) is refused by the proof.
#[test]
fn tls13_a_line_end_claimed_free_is_refused() {
    let (req, hidden) = request_with_cookie(40);
    let (_, shown) = cookie_hidden(&req, &hidden);
    let (d, _, cs, cr) = session_with_response(KeyKind::Ecdsa, KxGroup::X25519, &req, 92);
    let over = hidden.start..hidden.end + 1;
    assert_eq!(req[over.end - 1], b'\r');
    let claim = Claim13::new(&d.p, &[])
        .unwrap()
        .with_request(&d.p, &shown[..1])
        .unwrap()
        .with_request_crlf_free(&[over]);
    let (_, v) = prove13(&d, cs, cr, &claim);
    assert!(matches!(v, Err(Error::Proof(_))), "{v:?}");
}

/// The verifier's answer to a claim's shape alone, from a prover that
/// sends `shape` and stops: a COT sender of its own (the verifier must
/// refuse before the proof uses it).
fn verifier_on_shape(d: &Done13, shape: Vec<u8>) -> Result<Verified13, Error> {
    let (a, b) = webproof_core::memory_duplex();
    let (cs, _) = webproof_core::cot::ideal::pair(5);
    let mut rng = ChaCha20Rng::seed_from_u64(79);
    futures::executor::block_on(async {
        let prover = async {
            let mut ch = webproof_core::Channel::new(a);
            let _ = ch.recv(64 << 20).await;
            let _ = ch.send(&shape).await;
            let _ = ch.flush().await;
        };
        let (_, v) = futures::join!(
            prover,
            verify_response13(
                cs,
                webproof_core::Channel::new(b),
                zk_cfg(),
                &d.v,
                false,
                &mut rng
            )
        );
        v
    })
}

/// Ranges free of line ends that are unsorted, overlapping, empty, past
/// the request or too many are refused from the shape, before the proof
/// (a `Malformed` claim, not a failed proof); the prover's own run stops
/// on them the same way before it sends anything.
#[test]
#[allow(clippy::single_range_in_vec_init)] // a list of one range is a claim's list
fn tls13_malformed_line_end_free_ranges_are_refused_before_the_proof() {
    let (req, hidden) = request_with_cookie(40);
    let (d, _, _, _) = session_with_response(KeyKind::Ecdsa, KxGroup::X25519, &req, 93);
    let n = req.len();
    let base = Claim13::new(&d.p, &[]).unwrap();
    // The honest shape passes these checks (the proof then fails for want
    // of a prover).
    let ok = base
        .clone()
        .with_request_crlf_free(std::slice::from_ref(&hidden));
    let v = verifier_on_shape(&d, ok.shape(&[1; 32]));
    assert!(!matches!(v, Err(Error::Malformed(_))), "{v:?}");
    let mut too_many = base.clone();
    too_many.request_crlf_free = (0..4097).map(|i| (i % n, 0)).collect();
    let mut bad: Vec<(&str, Claim13)> = [
        ("unsorted", vec![20..30, 10..15]),
        ("overlapping", vec![10..20, 15..25]),
        ("empty", vec![hidden.start..hidden.start]),
        ("past the request", vec![hidden.start..n + 1]),
        ("far past", vec![n + 5..n + 6]),
    ]
    .into_iter()
    .map(|(what, r)| (what, base.clone().with_request_crlf_free(&r)))
    .collect();
    let mut wrap = base.clone();
    wrap.request_crlf_free = vec![(u32::MAX as usize, 2)];
    bad.push(("wrapping", wrap));
    for (what, claim) in &bad {
        let v = verifier_on_shape(&d, claim.shape(&[1; 32]));
        assert!(
            matches!(&v, Err(Error::Malformed(m)) if m.contains("line ends")),
            "{what}: {v:?}"
        );
    }
    // More ranges than a claim may hold: malformed at the decoding.
    let v = verifier_on_shape(&d, too_many.shape(&[1; 32]));
    assert!(matches!(&v, Err(Error::Malformed(_))), "{v:?}");
    assert!(Claim13::decode(&too_many.encode()).is_err());
    // A count past the message's bytes.
    let mut b = base.encode();
    let at = b.len() - 4 - 4;
    b[at..at + 4].copy_from_slice(&1000u32.to_be_bytes());
    assert!(Claim13::decode(&b).is_err());
    // The prover stops before it sends its shape.
    let (_, cr) = webproof_core::cot::ideal::pair(6);
    let (a, _b) = webproof_core::memory_duplex();
    let p = futures::executor::block_on(prove_response13(
        cr,
        webproof_core::Channel::new(a),
        zk_cfg(),
        &d.p,
        &bad[0].1,
        &[],
        &mut ChaCha20Rng::seed_from_u64(80),
    ));
    assert!(matches!(&p, Err(Error::Malformed(_))), "{:?}", p.err());
}
