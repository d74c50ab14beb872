//! The verified response: after a whole session against the in-memory
//! rustls server, the sealed proof that the recorded server records
//! decrypt, under the key imported from the prover's key-share labels, to
//! the revealed ranges. The honest run ends with the verifier holding
//! exactly the true bytes; claims of other bytes, offsets, key or IV are
//! refused; a verifier that reveals another `Δ` is caught by the prover.

#![allow(clippy::single_range_in_vec_init)] // one revealed range is a list of one

mod common;
use aes_gcm::aes::cipher::{generic_array::GenericArray, BlockEncrypt, KeyInit};
use common::*;
use futures::executor::block_on;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use webproof_core::cot::RandomCotSender;
use webproof_core::{memory_duplex, Block, Channel};
use webproof_mpc_tls::hello::*;
use webproof_mpc_tls::response::{
    context, prove_response, prove_statement, verify_response, verify_sealed, verify_statement,
    ClaimShape, ProofStats, ResponseClaim, VerifiedResponse,
};
use webproof_mpc_tls::{Error, ProverOutcome};
use webproof_ot::{SoftSpokenReceiver, SoftSpokenSender};
use webproof_tls::CipherSuite;
use webproof_zk::{Config, Prover, Verifier};

fn response(n: usize) -> Vec<u8> {
    let body: Vec<u8> = (0..n).map(|i| b'a' + (i * 7 % 26) as u8).collect();
    let mut r = format!("HTTP/1.1 200 OK\r\nContent-Length: {n}\r\n\r\n").into_bytes();
    r.extend(body);
    r
}

fn request() -> Vec<u8> {
    let mut req = b"GET /bytes?size=2000 HTTP/1.1\r\nHost: webproof.test\r\nX-Padding: ".to_vec();
    req.resize(1024 - 4, b'p');
    req.extend(b"\r\n\r\n");
    req
}

struct Session {
    d: Done,
    s: SoftSpokenSender,
    r: SoftSpokenReceiver,
}

fn session(seed: u64, suite: CipherSuite, body: usize) -> Session {
    let s = session_with(seed, suite, body, Hooks::default()).unwrap();
    assert_eq!(s.d.prover.response, response(body));
    s
}

fn session_with(seed: u64, suite: CipherSuite, body: usize, hooks: Hooks) -> Result<Session, Stop> {
    let c = certs(KeyKind::Ecdsa, &[NAME], false);
    let req = request();
    let (p, hello, v, s, r) = sessions_ext(
        seed,
        prover_config(NAME, suite, GROUP_P256, true, &req),
        verifier_config(&c.ca_der, NAME),
    );
    let d = run(p, hello, v, server(&c), &response(body), hooks)?;
    Ok(Session { d, s, r })
}

fn cfg() -> Config {
    Config {
        cot_batch: 1 << 18,
        ..Config::default()
    }
}

type Proved = (
    Result<ProofStats, Error>,
    Result<VerifiedResponse, Error>,
    Done,
);

/// Both parties' runs of the proof, each on its end of one channel.
fn prove(s: Session, outcome: &ProverOutcome, claim: &ResponseClaim) -> Proved {
    prove_with(s, outcome, claim, &[], false)
}

/// [`prove`] with the prover's leaf blinders, and a verifier that holds
/// an attestation key or not.
fn prove_with(
    s: Session,
    outcome: &ProverOutcome,
    claim: &ResponseClaim,
    blinders: &[[u8; 16]],
    can_attest: bool,
) -> Proved {
    let (a, b) = memory_duplex();
    let mut r1 = ChaCha20Rng::seed_from_u64(100);
    let mut r2 = ChaCha20Rng::seed_from_u64(101);
    let (p, v) = block_on(async {
        futures::join!(
            async {
                prove_response(
                    s.r,
                    Channel::new(a),
                    cfg(),
                    outcome,
                    claim,
                    blinders,
                    &mut r1,
                )
                .await
                .map(|(st, _, _)| st)
            },
            verify_response(
                s.s,
                Channel::new(b),
                cfg(),
                &s.d.verifier,
                can_attest,
                &mut r2
            )
        )
    });
    (p, v, s.d)
}

/// The server's application-data records after its Finished: (sequence
/// number, payload), from the recording.
fn app_records(d: &Done) -> Vec<(u64, Vec<u8>)> {
    let recv = &d.verifier.recording.received;
    let ccs = recv.iter().position(|r| r.content_type == 20).unwrap();
    recv[ccs + 2..]
        .iter()
        .enumerate()
        .filter(|(_, r)| r.content_type == 23)
        .map(|(i, r)| (i as u64 + 1, r.payload.clone()))
        .collect()
}

/// AES-GCM CTR decryption of a TLS 1.2 record payload (no tag check).
fn ctr_decrypt(key: &[u8], salt: &[u8], payload: &[u8]) -> Vec<u8> {
    let ct = &payload[8..payload.len() - 16];
    let mut out = Vec::with_capacity(ct.len());
    for (i, chunk) in ct.chunks(16).enumerate() {
        let mut block = [0u8; 16];
        block[..4].copy_from_slice(salt);
        block[4..12].copy_from_slice(&payload[..8]);
        block[12..].copy_from_slice(&(i as u32 + 2).to_be_bytes());
        let mut b = GenericArray::from(block);
        if key.len() == 16 {
            aes_gcm::aes::Aes128::new_from_slice(key)
                .unwrap()
                .encrypt_block(&mut b);
        } else {
            aes_gcm::aes::Aes256::new_from_slice(key)
                .unwrap()
                .encrypt_block(&mut b);
        }
        out.extend(chunk.iter().zip(b.iter()).map(|(c, k)| c ^ k));
    }
    out
}

fn server_key(o: &ProverOutcome) -> (Vec<u8>, Vec<u8>) {
    let x = |a: &[u8], b: &[u8]| -> Vec<u8> { a.iter().zip(b).map(|(p, q)| p ^ q).collect() };
    (
        x(&o.key_shares.server_key, &o.revealed_server_key),
        x(&o.key_shares.server_iv, &o.revealed_server_iv),
    )
}

/// The reference case: 1 KB request, 2 KB response, both AES-GCM suites;
/// the verifier ends with exactly the revealed bytes at their offsets.
#[test]
fn honest_one_kb_request_two_kb_response() {
    for (seed, suite) in [
        (20, ECDHE_ECDSA_AES128_GCM_SHA256),
        (21, ECDHE_ECDSA_AES256_GCM_SHA384),
    ] {
        let s = session(seed, suite, 2000);
        let resp = s.d.prover.response.clone();
        // The status line, a piece of the body, the last byte.
        let ranges = [0..15, 100..1337, resp.len() - 1..resp.len()];
        let outcome = s.d.prover.clone();
        let claim = ResponseClaim::new(&outcome, &ranges).unwrap();
        let t = std::time::Instant::now();
        let (p, v, d) = prove(s, &outcome, &claim);
        let st = p.unwrap();
        let v = v.unwrap();
        assert_eq!(v.response_len, resp.len());
        assert_eq!(v.server_iv, server_key(&d.prover).1);
        assert_eq!(v.ranges.len(), ranges.len());
        for (got, want) in v.ranges.iter().zip(&ranges) {
            assert_eq!(got.offset, want.start);
            assert_eq!(got.bytes, resp[want.clone()]);
        }
        assert_eq!(v.prover_bytes, st.sent);
        assert_eq!(v.verifier_bytes, st.received);
        let c = st.consistency;
        eprintln!(
            "suite {suite}: of which the consistency proof of {} circuits: {} AND, {} COTs, input reveal {} B",
            c.circuits, c.and_gates, c.cots_used, c.reveal
        );
        eprintln!(
            "suite {suite}: response proof of {} revealed bytes: {} AND, {} byte inversions, {} COTs; {:.1} KB P->V, {:.1} KB V->P (COT extension included), {:.2} s",
            ranges.iter().map(|r| r.len()).sum::<usize>(),
            st.zk.and_gates,
            st.zk.byte_invs,
            st.zk.cots_used,
            st.sent as f64 / 1e3,
            st.received as f64 / 1e3,
            t.elapsed().as_secs_f64()
        );
    }
}

/// The session is garbled before the server picks its group: a server
/// that takes the second group the prover offered (it runs only that one)
/// still gives a session whose response is proven, for either order.
#[test]
fn server_choosing_the_second_group() {
    for (seed, offered, only) in [
        (24, [GROUP_X25519, GROUP_P256], GROUP_P256),
        (25, [GROUP_P256, GROUP_X25519], GROUP_X25519),
    ] {
        let c = certs(KeyKind::Ecdsa, &[NAME], false);
        let mut pcfg = prover_config(
            NAME,
            ECDHE_ECDSA_AES128_GCM_SHA256,
            offered[0],
            true,
            &request(),
        );
        pcfg.groups = offered.to_vec();
        let (p, hello, v, snd, rcv) = sessions_ext(seed, pcfg, verifier_config(&c.ca_der, NAME));
        let srv = server_with_groups(&c, &[only]);
        let d = run(p, hello, v, srv, &response(2000), Hooks::default()).unwrap();
        assert_eq!(d.verifier.group, only);
        assert_eq!(d.prover.response, response(2000));
        let s = Session { d, s: snd, r: rcv };
        let outcome = s.d.prover.clone();
        let claim = ResponseClaim::new(&outcome, &[0..15, 100..200]).unwrap();
        let (p, v, _) = prove(s, &outcome, &claim);
        p.unwrap();
        let v = v.unwrap();
        assert_eq!(v.ranges[1].bytes, response(2000)[100..200]);
    }
}

/// A response over several records: a range across a record boundary is
/// placed by the verifier's recording.
#[test]
fn range_across_records() {
    let s = session(22, ECDHE_ECDSA_AES128_GCM_SHA256, 20_000);
    let recs = app_records(&s.d);
    assert!(recs.len() >= 2, "the response fits one record");
    let first = recs[0].1.len() - 24;
    let resp = s.d.prover.response.clone();
    let ranges = [first - 10..first + 10, resp.len() - 5..resp.len()];
    let outcome = s.d.prover.clone();
    let claim = ResponseClaim::new(&outcome, &ranges).unwrap();
    let (p, v, _) = prove(s, &outcome, &claim);
    p.unwrap();
    let v = v.unwrap();
    assert_eq!(v.response_len, resp.len());
    for (got, want) in v.ranges.iter().zip(&ranges) {
        assert_eq!(
            (got.offset, &got.bytes[..]),
            (want.start, &resp[want.clone()])
        );
    }
}

fn refused(s: Session, outcome: &ProverOutcome, claim: &ResponseClaim) {
    let (_, v, _) = prove(s, outcome, claim);
    match v {
        Err(Error::Proof(_)) => {}
        other => panic!("the verifier accepted or failed otherwise: {other:?}"),
    }
}

/// One flipped bit of one claimed byte.
#[test]
fn other_plaintext_is_refused() {
    let s = session(23, ECDHE_ECDSA_AES128_GCM_SHA256, 2000);
    let outcome = s.d.prover.clone();
    let mut claim = ResponseClaim::new(&outcome, &[9..12, 500..600]).unwrap();
    claim.ranges[1].1[42] ^= 0x20;
    refused(s, &outcome, &claim);
}

/// True bytes claimed at another offset.
#[test]
fn other_offset_is_refused() {
    let s = session(24, ECDHE_ECDSA_AES128_GCM_SHA256, 2000);
    let outcome = s.d.prover.clone();
    let mut claim = ResponseClaim::new(&outcome, &[700..760]).unwrap();
    claim.ranges[0].0 += 1;
    refused(s, &outcome, &claim);
}

/// Overlapping ranges are refused when the claim is made.
#[test]
fn overlapping_ranges_are_refused() {
    let s = session(30, ECDHE_ECDSA_AES128_GCM_SHA256, 100);
    let e = ResponseClaim::new(&s.d.prover, &[0..10, 20..30, 9..12]).unwrap_err();
    assert!(matches!(e, Error::Usage(_)), "{e:?}");
    ResponseClaim::new(&s.d.prover, &[0..10, 10..12]).unwrap();
}

/// A claim past the response's end is refused before the proof.
#[test]
fn range_outside_the_response_is_refused() {
    let s = session(25, ECDHE_ECDSA_AES128_GCM_SHA256, 2000);
    let outcome = s.d.prover.clone();
    let len = outcome.response.len();
    let mut claim = ResponseClaim::new(&outcome, &[len - 4..len]).unwrap();
    claim.ranges[0].1.push(b'!');
    let (_, v, _) = prove(s, &outcome, &claim);
    assert!(matches!(v, Err(Error::Malformed(_))), "{v:?}");
}

/// The prover proves with another key: its key share with one bit flipped
/// (so imported with values other than its labels carry), and claims the
/// plaintext that key gives, consistently.
#[test]
fn another_key_is_refused() {
    let s = session(26, ECDHE_ECDSA_AES128_GCM_SHA256, 2000);
    let mut outcome = s.d.prover.clone();
    outcome.key_shares.server_key[3] ^= 0x01;
    let (key, iv) = server_key(&outcome);
    let recs = app_records(&s.d);
    let pt = ctr_decrypt(&key, &iv, &recs[0].1);
    assert_ne!(pt[..100], s.d.prover.response[..100]);
    let claim = ResponseClaim {
        iv,
        ranges: vec![(0, pt[..100].to_vec())],
        request_iv: Vec::new(),
        request: Vec::new(),
        request_crlf_free: Vec::new(),
        leaves: Vec::new(),
        leaf_hashes: Vec::new(),
        close_notify: false,
    };
    refused(s, &outcome, &claim);
}

/// The helper decrypts as the server encrypted (so the test above claims
/// what the other key really gives).
#[test]
fn ctr_decrypt_matches_the_response() {
    let s = session(27, ECDHE_ECDSA_AES128_GCM_SHA256, 2000);
    let (key, iv) = server_key(&s.d.prover);
    let recs = app_records(&s.d);
    assert_eq!(
        ctr_decrypt(&key, &iv, &recs[0].1),
        s.d.prover.response[..recs[0].1.len() - 24]
    );
}

/// Another server IV (GCM salt) with the true bytes.
#[test]
fn another_iv_is_refused() {
    let s = session(28, ECDHE_ECDSA_AES128_GCM_SHA256, 2000);
    let outcome = s.d.prover.clone();
    let mut claim = ResponseClaim::new(&outcome, &[0..16]).unwrap();
    claim.iv[1] ^= 0x80;
    refused(s, &outcome, &claim);
}

/// The honest verifier's steps up to the seal: its input reveal, the
/// claim's shape taken, the sealed statement. Returns the sealed proof
/// (before the `Δ` reveal) and the claim message as received.
async fn verifier_to_the_seal(
    cot: SoftSpokenSender,
    mut ch: Channel<webproof_core::MemoryIo>,
    vo: &webproof_mpc_tls::VerifierOutcome,
    rng: &mut ChaCha20Rng,
) -> (
    webproof_zk::SealedVerifier<SoftSpokenSender, webproof_core::MemoryIo>,
    Vec<u8>,
) {
    ch.send(&vo.retained.reveal()).await.unwrap();
    ch.flush().await.unwrap();
    let msg = ch.recv(1 << 20).await.unwrap();
    let shape = ClaimShape::decode(&msg).unwrap();
    ch.send(&[0u8]).await.unwrap();
    ch.flush().await.unwrap();
    let ctx = context(&vo.recording, &shape);
    let mut zk = Verifier::with_context(cot, ch, cfg(), &ctx, rng)
        .await
        .unwrap();
    zk.defer();
    zk.defer_claims(shape.bytes_commitment).unwrap();
    verify_sealed(&mut zk, vo, &shape.placeholder())
        .await
        .unwrap();
    (zk.seal().await.unwrap(), msg.to_vec())
}

/// A verifier that reveals another `Δ` after the seal (to learn from the
/// opening) is caught by the prover, which then does not open.
#[test]
fn verifier_revealing_another_delta_is_caught() {
    let s = session(29, ECDHE_ECDSA_AES128_GCM_SHA256, 2000);
    let outcome = s.d.prover.clone();
    let claim = ResponseClaim::new(&outcome, &[0..40]).unwrap();
    let (a, b) = memory_duplex();
    let mut r1 = ChaCha20Rng::seed_from_u64(1);
    let mut r2 = ChaCha20Rng::seed_from_u64(2);
    let vo = s.d.verifier.clone();
    let (p, v) = block_on(async {
        futures::join!(
            prove_response(s.r, Channel::new(a), cfg(), &outcome, &claim, &[], &mut r1),
            async {
                let (mut sealed, _) =
                    verifier_to_the_seal(s.s, Channel::new(b), &vo, &mut r2).await;
                // The reveal, with Δ' = Δ ⊕ 2 (lsb still 1) and the true
                // COT keys: it passes a check of lsb(Δ') and of lsb(K).
                let delta = sealed.delta() ^ Block::from_bytes([2; 16]);
                let (cot, ch) = sealed.parts();
                let mut keys = Vec::new();
                cot.extend(ch, webproof_mpc::consistency::DELTA_CHECK_COTS, &mut keys)
                    .await
                    .unwrap();
                let mut msg = delta.to_bytes().to_vec();
                for k in &keys {
                    msg.extend_from_slice(&k.to_bytes());
                }
                ch.send(&msg).await.unwrap();
                ch.flush().await.unwrap();
                (delta, sealed.delta())
            }
        )
    });
    let (fake, real) = v;
    assert_ne!(fake, real);
    assert!(fake.lsb());
    match p {
        Err(Error::VerifierCheated(_)) => {}
        Err(e) => panic!("the prover failed otherwise: {e:?}"),
        Ok(_) => panic!("the prover did not catch the verifier"),
    }
}

/// The prover's verdict when it must catch the verifier: `VerifierCheated`
/// (from the audit after the `Δ` reveal), and the verifier never gets an
/// opening.
fn caught_verifier(p: Result<ProofStats, Error>, v: Result<VerifiedResponse, Error>) {
    match p {
        Err(Error::VerifierCheated(_)) => {}
        Err(e) => panic!("the prover failed otherwise: {e:?}"),
        Ok(_) => panic!("the prover did not catch the verifier"),
    }
    assert!(v.is_err(), "the verifier got an opening: {v:?}");
}

/// The prover's verdict when the verifier must catch it: the prover
/// opened (its audit passed) and the verifier refuses the proof.
fn caught_prover(p: Result<ProofStats, Error>, v: Result<VerifiedResponse, Error>) {
    if let Err(e) = p {
        panic!("the prover did not open: {e:?}");
    }
    match v {
        Err(Error::Proof(_)) => {}
        other => panic!("the verifier accepted or failed otherwise: {other:?}"),
    }
}

/// A garbler that alters one table of a key-derivation step in a row the
/// prover does not use (its half-ciphertext `G0` when the prover's colour
/// on the gate's first input is 0): the session completes, and only the prover's audit of the
/// garbling, after the `Δ` reveal and before it opens, sees it. A cheat
/// that hits a used row ends the session online, so the test tries gates
/// until one goes through.
#[test]
fn altered_kdf_table_is_caught_by_the_audit() {
    const STEP: usize = 4;
    let s = session_with_altered_table(STEP, 40);
    assert_eq!(s.d.prover.response, response(2000));
    let outcome = s.d.prover.clone();
    let claim = ResponseClaim::new(&outcome, &[0..15]).unwrap();
    let (p, v, _) = prove(s, &outcome, &claim);
    caught_verifier(p, v);
}

/// A session whose garbler altered one table of `circuit`'s first chunk
/// in a row the prover does not use (its half-ciphertext `G0` when the
/// prover's colour on the gate's first input is 0), so the session
/// completes: gates are tried in turn from seed `seed`, since a cheat
/// that hits a used row ends the session online.
fn session_with_altered_table(circuit: usize, seed: u64) -> Session {
    for gate in 0..16usize {
        let mut first = true;
        let hooks = Hooks {
            verifier_to_prover: Some(Box::new(move |m| {
                if let webproof_mpc_tls::VerifierMsg::Tables { circuit: c, chunk } = m {
                    if usize::from(*c) == circuit && first {
                        first = false;
                        let at = webproof_mpc::CHUNK_HEADER + webproof_mpc::HALVES_BYTES * gate;
                        chunk[at] ^= 0x01;
                    }
                }
            })),
            ..Hooks::default()
        };
        if let Ok(s) = session_with(
            seed + gate as u64,
            ECDHE_ECDSA_AES128_GCM_SHA256,
            2000,
            hooks,
        ) {
            return s;
        }
    }
    panic!("every altered row of circuit {circuit} was used online");
}

/// The prover's audit gives the same verdict on one thread and shared
/// out over several: an honest garbling passes on each, and a garbling
/// with one altered table (in a row the prover did not use, so the
/// session completed) is refused as the verifier's cheat on each.
#[test]
fn audit_on_threads_agrees_with_one_thread() {
    let audit = |d: &Done, threads: usize| {
        let values = d
            .prover
            .retained
            .input_values(&d.verifier.retained.reveal())
            .unwrap();
        d.prover
            .retained
            .audit_on(d.verifier.delta, &values, threads)
    };
    let honest = session(60, ECDHE_ECDSA_AES128_GCM_SHA256, 2000);
    for threads in [1, 2, 3, 64] {
        audit(&honest.d, threads).unwrap_or_else(|e| panic!("{threads} threads: {e}"));
    }
    // Another Δ fails every circuit: the first one's error is reported.
    let values = honest
        .d
        .prover
        .retained
        .input_values(&honest.d.verifier.retained.reveal())
        .unwrap();
    let other = honest.d.verifier.delta ^ Block(2);
    let one = honest.d.prover.retained.audit_on(other, &values, 1);
    let two = honest.d.prover.retained.audit_on(other, &values, 2);
    assert!(matches!(one, Err(Error::VerifierCheated(_))), "{one:?}");
    assert_eq!(format!("{one:?}"), format!("{two:?}"));
    // The request record's circuit: the largest, alone on its thread.
    let s = session_with_altered_table(8, 70);
    for threads in [1, 2] {
        match audit(&s.d, threads) {
            Err(Error::VerifierCheated(_)) => {}
            other => panic!("{threads} threads: the audit gave {other:?}"),
        }
    }
}

/// The prover's check, before the proof, of the verifier's revealed
/// inputs against what the protocol makes them (the audit checks
/// separately that they are the values garbled with). The honest reveal
/// passes and fixes the verifier's key shares (those it revealed at the
/// close); each of these is refused as the verifier's cheat: another inner
/// digest (reduced PRF) or other randoms, session hash or handshake hash
/// (full PRF), a mask not reused where the next step must reuse it,
/// another explicit nonce or key share in a record circuit.
#[test]
fn verifier_inputs_other_than_the_protocols_are_caught() {
    // (run, group, bit) of the verifier's reveal, the prover's group
    // included in the numbering (it is group 0 of every circuit).
    let reduced: &[(usize, usize, usize, &str)] = &[
        // The public groups are the outer blocks' schedules, 1,792 bits
        // each.
        (1, 2, 0, "step 1's schedule (A(1) of the master secret)"),
        (
            3,
            2,
            17,
            "step 3's advance schedule (the master secret's first block)",
        ),
        (5, 2, 900, "step 5's schedule (A(2) of the key expansion)"),
        (
            6,
            2,
            1791,
            "step 6's first advance schedule (the key block's first block)",
        ),
        (
            6,
            2,
            1792 + 300,
            "step 6's second advance schedule (the client verify_data)",
        ),
        (
            6,
            3,
            1791,
            "step 6's schedule (the key block's second block)",
        ),
        (2, 1, 5, "step 2's share of OS_pms: not step 0's mask"),
        (4, 1, 0, "step 4's share of OS_ms: not step 3's mask"),
    ];
    let full: &[(usize, usize, usize, &str)] = &[
        (0, 2, 9, "the randoms"),
        (0, 3, 100, "the session hash"),
        (1, 2, 0, "the client Finished's handshake hash"),
        (
            2,
            1,
            17,
            "the server Finished's pad-state share: not the key derivation's mask",
        ),
    ];
    for (seed, suite, cases) in [
        (36, ECDHE_ECDSA_AES128_GCM_SHA256, reduced),
        (37, ECDHE_ECDSA_AES256_GCM_SHA384, full),
    ] {
        let s = session(seed, suite, 2000);
        let prover = &s.d.prover;
        let reveal = s.d.verifier.retained.reveal();
        let values = prover.retained.input_values(&reveal).unwrap();
        let keys = prover.retained.check_inputs(&values).unwrap();
        assert_eq!(keys.server_key, prover.revealed_server_key);
        assert_eq!(keys.server_iv, prover.revealed_server_iv);
        assert_eq!(keys.client_key, prover.revealed_client_key);
        assert_eq!(keys.client_iv, prover.revealed_client_iv);
        let last = values.len() - 1; // the request's last record
        let records = [
            (last, 2, 63, "a request record's explicit nonce"),
            (last, 1, 0, "a request record's key share"),
        ];
        for &(run, group, bit, what) in cases.iter().chain(&records) {
            let mut v = values.clone();
            v[run][group][bit] ^= true;
            match prover.retained.check_inputs(&v) {
                Err(Error::VerifierCheated(_)) => {}
                other => panic!("suite {suite}: {what}: {other:?}"),
            }
        }
        // The server Finished's record circuit (run after the key
        // derivation's and the client Finished's): its explicit nonce.
        let steps = values.len() - prover.retained.shape.request_lens.len() - 2;
        let mut v = values.clone();
        v[steps + 1][2][0] ^= true;
        assert!(matches!(
            prover.retained.check_inputs(&v),
            Err(Error::VerifierCheated(_))
        ));
    }
}

/// A verifier that reveals at the close (`CloseAck`) another share of the
/// server write key than the one it input to the key derivation: the
/// prover refuses before the proof.
#[test]
fn verifier_revealing_another_key_share_at_the_close_is_caught() {
    let s = session(38, ECDHE_ECDSA_AES128_GCM_SHA256, 2000);
    let mut outcome = s.d.prover.clone();
    outcome.revealed_server_key[3] ^= 0x40;
    let claim = ResponseClaim::new(&outcome, &[0..15]).unwrap();
    let (p, v, _) = prove(s, &outcome, &claim);
    caught_verifier(p, v);
}

/// A prover that flips bits of a response record's ciphertext on its way
/// to the verifier (CTR mode is malleable: without the key, a flip of a
/// ciphertext bit flips the same plaintext bit) and claims the plaintext
/// it predicted: the status line `HTTP/1.1 200 OK` becomes `500`. The
/// record's tag no longer matches, and the verifier must refuse.
#[test]
fn prover_flipping_response_ciphertext_bits_is_refused() {
    let mut s = session(26, ECDHE_ECDSA_AES128_GCM_SHA256, 2000);
    let at =
        s.d.verifier
            .recording
            .received
            .iter()
            .position(|r| r.content_type == 23)
            .unwrap();
    let delta = b'2' ^ b'5';
    let mut outcome = s.d.prover.clone();
    assert_eq!(&outcome.response[..12], b"HTTP/1.1 200");
    // Plaintext byte 9 of the first record: the explicit nonce comes first.
    s.d.verifier.recording.received[at].payload[8 + 9] ^= delta;
    outcome.recording.received[at].payload[8 + 9] ^= delta;
    outcome.response[9] ^= delta;
    let claim = ResponseClaim::new(&outcome, &[0..15]).unwrap();
    let (_, v, _) = prove(s, &outcome, &claim);
    match v {
        Err(_) => {}
        Ok(v) => panic!(
            "the verifier accepted {:?}",
            String::from_utf8_lossy(&v.ranges[0].bytes)
        ),
    }
}

/// A verifier that reveals input bits other than those it garbled with
/// (one bit of its premaster share): the prover's audit re-garbles with
/// the revealed bits and catches it before opening.
#[test]
fn verifier_revealing_other_input_bits_is_caught() {
    let mut s = session(30, ECDHE_ECDSA_AES128_GCM_SHA256, 2000);
    s.d.verifier.retained.runs[0].own[0][3] ^= true;
    let outcome = s.d.prover.clone();
    let claim = ResponseClaim::new(&outcome, &[0..15]).unwrap();
    let (p, v, _) = prove(s, &outcome, &claim);
    caught_verifier(p, v);
}

/// A revealed input of a record circuit (the verifier's key ‖ IV share of
/// the request record): the same, for the record circuits.
#[test]
fn verifier_revealing_other_record_inputs_is_caught() {
    let mut s = session(31, ECDHE_ECDSA_AES128_GCM_SHA256, 2000);
    let last = s.d.verifier.retained.runs.len() - 1;
    s.d.verifier.retained.runs[last].own[0][0] ^= true;
    let outcome = s.d.prover.clone();
    let claim = ResponseClaim::new(&outcome, &[0..15]).unwrap();
    let (p, v, _) = prove(s, &outcome, &claim);
    caught_verifier(p, v);
}

/// A prover that claims another output of a key-derivation step than the
/// garbled circuit gave it: its label is the MAC of the true bit, so the
/// first check that uses the bit fails. One bit of its share of the client
/// IV (step 6's key block): the equality with the key bits the statement
/// imported; one bit of its `OS_pms` share (step 0): the equality with the
/// prover inputs of steps 1 to 3, chained to it. No circuit is proven
/// again (`docs/protocol/consistency.md`, "Why no circuit is proven again").
/// (A revealed output, such as `A(1)`, would not get that far: the honest
/// prover's own check of the verifier's inputs recomputes the next inner
/// digests from it.)
#[test]
fn prover_claiming_another_step_output_is_refused() {
    for (seed, run, group, bit) in [(32, 6, 1, 263), (31, 0, 1, 5)] {
        let s = session(seed, ECDHE_ECDSA_AES128_GCM_SHA256, 2000);
        let mut outcome = s.d.prover.clone();
        outcome.retained.runs[run].outputs[group][bit] ^= true;
        let claim = ResponseClaim::new(&outcome, &[0..15]).unwrap();
        let (p, v, _) = prove(s, &outcome, &claim);
        caught_prover(p, v);
    }
}

/// A prover that proves the response under its client-key share instead
/// of its server-key share: it swaps the two in its key-block labels and
/// shares, so every imported bit is a valid MAC of its value and the
/// claimed bytes are what that other key decrypts. Before the consistency
/// proof this passed; now the key bits of the statement must equal the
/// key derivation's outputs, and do not.
#[test]
fn prover_swapping_key_shares_is_refused() {
    let s = session(33, ECDHE_ECDSA_AES128_GCM_SHA256, 2000);
    let mut outcome = s.d.prover.clone();
    let kl = &mut outcome.key_labels[0].labels;
    assert_eq!(kl.len(), 320, "both keys, then both IVs");
    let (client, server) = kl[..256].split_at_mut(128);
    client.swap_with_slice(server);
    let ks = &mut outcome.key_shares;
    core::mem::swap(&mut ks.client_key, &mut ks.server_key);
    let (key, iv) = server_key(&outcome);
    let recs = app_records(&s.d);
    let pt = ctr_decrypt(&key, &iv, &recs[0].1);
    assert_ne!(pt[..100], s.d.prover.response[..100]);
    let claim = ResponseClaim {
        iv,
        ranges: vec![(0, pt[..100].to_vec())],
        request_iv: Vec::new(),
        request: Vec::new(),
        request_crlf_free: Vec::new(),
        leaves: Vec::new(),
        leaf_hashes: Vec::new(),
        close_notify: false,
    };
    let (p, v, _) = prove(s, &outcome, &claim);
    caught_prover(p, v);
}

/// The server Finished is checked in the proof (its record never ran in
/// 2PC): the verifier's public values of that check are each its own (its
/// recording's record: explicit nonce, ciphertext, tag; under the reduced
/// PRF its transcript's hash, the `IS_ms` it checked and its mask; under
/// the full PRF the `verify_data` its 2PC revealed), and a proof made for
/// other values than its own is refused. The honest prover proves against
/// its view; the verifier checks against one value altered.
#[test]
fn server_finished_is_checked_in_the_proof() {
    use webproof_mpc_tls::consist::FinishedVd;
    let fields = [
        "nonce",
        "ciphertext",
        "tag",
        "hash",
        "is_ms",
        "os_mask",
        "full: vd",
        "full: tag",
    ];
    for (i, field) in fields.iter().enumerate() {
        let suite = if i < 6 {
            ECDHE_ECDSA_AES128_GCM_SHA256
        } else {
            ECDHE_ECDSA_AES256_GCM_SHA384
        };
        let mut s = session(40 + i as u64, suite, 2000);
        let check = s.d.verifier.retained.server_finished.as_mut().unwrap();
        match (i, &mut check.vd) {
            (0, _) => check.record[3] ^= 1,
            (1, _) => check.record[8 + 9] ^= 1,
            (2 | 7, _) => check.record[30] ^= 1,
            (3, FinishedVd::Reduced { hash, .. }) => hash[5] ^= 1,
            (4, FinishedVd::Reduced { is_ms, .. }) => is_ms[0] ^= 0x80,
            (5, FinishedVd::Reduced { os_mask, .. }) => os_mask[31] ^= 1,
            (6, FinishedVd::Revealed(vd)) => vd[4] ^= 1,
            (_, vd) => panic!("{field}: {vd:?}"),
        }
        let outcome = s.d.prover.clone();
        let claim = ResponseClaim::new(&outcome, &[0..15]).unwrap();
        let (p, v, _) = prove(s, &outcome, &claim);
        match v {
            Err(Error::Proof(_)) => {}
            other => panic!("{field}: the verifier accepted or failed otherwise: {other:?}"),
        }
        // The record, the mask and a revealed verify_data are constants of
        // the assertions and of XORs: the proofs run in step and the
        // assertion fails. The hash and IS_ms fold into the circuit's
        // shape, so the verifier evaluates another circuit and the proof
        // fails out of step (the prover sees the verifier hang up).
        if !matches!(i, 3 | 4) {
            assert!(p.is_ok(), "{field}: the honest prover did not open: {p:?}");
        }
    }
}

/// A prover that sees a server Finished other than the handshake's (here:
/// it computed the handshake hash over another transcript) stops before
/// proving anything: its check in the clear, once the verifier's mask is
/// revealed.
#[test]
fn prover_checks_the_server_finished_before_proving() {
    let s = session(44, ECDHE_ECDSA_AES128_GCM_SHA256, 2000);
    let mut outcome = s.d.prover.clone();
    outcome.retained.publics.server_finished_hash[0] ^= 1;
    let claim = ResponseClaim::new(&outcome, &[0..15]).unwrap();
    let (p, v, _) = prove(s, &outcome, &claim);
    assert!(matches!(p, Err(Error::ServerFinished)), "{p:?}");
    assert!(v.is_err(), "the verifier got an opening: {v:?}");
}

/// Figures, not assertions: what the consistency proof adds on the 1 KB
/// request / 2 KB response case, against the statement alone (the proof
/// of the response as it ran before, sealed, with the `Δ` check), both
/// suites. Run with `--release -- --nocapture`.
#[test]
fn consistency_overhead_figures() {
    for (seed, suite) in [
        (34, ECDHE_ECDSA_AES128_GCM_SHA256),
        (35, ECDHE_ECDSA_AES256_GCM_SHA384),
    ] {
        let s = session(seed, suite, 2000);
        let o = s.d.prover.clone();
        let claim = ResponseClaim::new(&o, &[0..15, 100..1337]).unwrap();
        let t = std::time::Instant::now();
        let (a, b) = memory_duplex();
        let vo = s.d.verifier.clone();
        let (p, ()) = block_on(async {
            futures::join!(
                async {
                    let ctx = context(&o.recording, &claim.shape(&[0; 32]));
                    let mut zk = Prover::with_context(s.r, Channel::new(a), cfg(), &ctx)
                        .await
                        .unwrap();
                    zk.defer();
                    prove_statement(&mut zk, &o, &claim, &[]).await.unwrap();
                    let mut sealed = zk.seal([7; 32]).await.unwrap();
                    webproof_mpc::consistency::receive_delta(&mut sealed)
                        .await
                        .unwrap();
                    sealed.open().await.unwrap().1.stats()
                },
                async {
                    let ctx = context(&vo.recording, &claim.shape(&[0; 32]));
                    let mut r = ChaCha20Rng::seed_from_u64(3);
                    let mut zk = Verifier::with_context(s.s, Channel::new(b), cfg(), &ctx, &mut r)
                        .await
                        .unwrap();
                    zk.defer();
                    verify_statement(&mut zk, &vo, &claim).await.unwrap();
                    let mut sealed = zk.seal().await.unwrap();
                    webproof_mpc::consistency::reveal_delta(&mut sealed)
                        .await
                        .unwrap();
                    sealed.verify().await.unwrap();
                }
            )
        });
        let base = (p.sent(), p.received(), t.elapsed().as_secs_f64());
        // A fresh session: the COT correlation above is spent.
        let s = session(seed, suite, 2000);
        let o = s.d.prover.clone();
        let claim = ResponseClaim::new(&o, &[0..15, 100..1337]).unwrap();
        let t = std::time::Instant::now();
        let (p, v, _) = prove(s, &o, &claim);
        let full = p.unwrap();
        v.unwrap();
        let el = t.elapsed().as_secs_f64();
        eprintln!(
            "suite {suite}: statement alone {:.1} KB P->V, {:.1} KB V->P, {:.2} s; with the consistency proof of {} circuits ({} AND) {:.1} KB P->V, {:.1} KB V->P, {:.2} s: +{:.1} KB, +{:.1} KB, +{:.2} s",
            base.0 as f64 / 1e3,
            base.1 as f64 / 1e3,
            base.2,
            full.consistency.circuits,
            full.consistency.and_gates,
            full.sent as f64 / 1e3,
            full.received as f64 / 1e3,
            el,
            (full.sent as f64 - base.0 as f64) / 1e3,
            (full.received as f64 - base.1 as f64) / 1e3,
            el - base.2
        );
    }
}

/// A verifier that sends a wrong OLE answer (one element of the ECtF's
/// answers, P-256 field elements) at an OLE the prover's bit there ignores:
/// the session completes, and the prover's OLE audit catches it before
/// opening. A hit on a used element ends the session online (a wrong tag),
/// so the test tries elements until one goes through.
#[test]
fn wrong_ole_answer_is_caught_by_the_audit() {
    caught_by_the_audit(60, |elem, m| {
        if let webproof_mpc_tls::VerifierMsg::EctfAnswer(msg) = m {
            msg[32 * elem] ^= 0x01;
        }
    });
}

/// Alter element `elem` of one OLE answer with `alter` in sessions seeded
/// from `seed`, until one completes (the element was unused online), then
/// check that the prover's audit refuses before it opens.
fn caught_by_the_audit(seed: u64, alter: fn(usize, &mut webproof_mpc_tls::VerifierMsg)) {
    for elem in 0..16usize {
        let hooks = Hooks {
            verifier_to_prover: Some(Box::new(move |m| alter(elem, m))),
            ..Hooks::default()
        };
        let Ok(s) = session_with(
            seed + elem as u64,
            ECDHE_ECDSA_AES128_GCM_SHA256,
            2000,
            hooks,
        ) else {
            continue; // the altered element was used: caught online
        };
        assert_eq!(s.d.prover.response, response(2000));
        let outcome = s.d.prover.clone();
        let claim = ResponseClaim::new(&outcome, &[0..15]).unwrap();
        let (p, v, _) = prove(s, &outcome, &claim);
        caught_verifier(p, v);
        return;
    }
    panic!("every altered element was used online");
}

/// A verifier that answers the powers of the client's GHASH key ahead (in
/// preprocessing, for the client Finished, every client record's tag
/// taking them) with one wrong element, at a COT whose random choice
/// bit makes the prover ignore it: the session completes, and the
/// prover's OLE audit catches the answer before opening. A hit on a used
/// element makes the tag wrong and the server ends the session, so the
/// test tries elements until one goes through.
#[test]
fn wrong_powers_answered_ahead_are_caught_by_the_audit() {
    caught_by_the_audit(80, |elem, m| {
        if let webproof_mpc_tls::VerifierMsg::RecPowers { id: 0, msg } = m {
            msg[16 * elem + 5] ^= 0x80;
        }
    });
}

/// A verifier that reveals OLE inputs other than those it answered with
/// (its ECtF point): the prover's OLE audit catches it.
#[test]
fn verifier_revealing_other_ole_inputs_is_caught() {
    let mut s = session(36, ECDHE_ECDSA_AES128_GCM_SHA256, 2000);
    let (stream, batches) = &mut s.d.verifier.retained.ole_inputs[0];
    assert_eq!(*stream, 0);
    batches[0][31] ^= 0x01;
    let outcome = s.d.prover.clone();
    let claim = ResponseClaim::new(&outcome, &[0..15]).unwrap();
    let (p, v, _) = prove(s, &outcome, &claim);
    caught_verifier(p, v);
}

/// The request revealed too: the verifier ends with the request's true
/// bytes at their offsets (one byte hidden, as the field's benchmarks
/// do), and with its length from its own recording.
#[test]
fn request_ranges_are_proven() {
    let s = session(40, ECDHE_ECDSA_AES128_GCM_SHA256, 2000);
    let req = request();
    let resp = s.d.prover.response.clone();
    let outcome = s.d.prover.clone();
    let claim = ResponseClaim::new(&outcome, &[0..resp.len()])
        .unwrap()
        .with_request(&outcome, &req, &[0..10, 11..req.len()])
        .unwrap();
    let (p, v, _) = prove(s, &outcome, &claim);
    p.unwrap();
    let v = v.unwrap();
    assert_eq!(v.request_len, req.len());
    assert_eq!(v.request_ranges.len(), 2);
    assert_eq!(
        (v.request_ranges[0].offset, &v.request_ranges[0].bytes[..]),
        (0, &req[..10])
    );
    assert_eq!(
        (v.request_ranges[1].offset, &v.request_ranges[1].bytes[..]),
        (11, &req[11..])
    );
}

/// Hidden request-head bytes (the padding header's value) proven free of
/// CR and LF: the verifier ends with the ranges and fixes the request's
/// extent; a range over a line end is refused by the proof, and malformed
/// ranges before it.
#[test]
fn hidden_request_head_bytes_are_proven_free_of_line_ends() {
    let req = request();
    let value = req.windows(11).position(|w| w == b"X-Padding: ").unwrap() + 11;
    let hidden = value..req.len() - 4;
    let shown = [0..value, req.len() - 4..req.len()];
    let claim_of = |outcome: &ProverOutcome, free: &[core::ops::Range<usize>]| {
        ResponseClaim::new(outcome, &[0..15])
            .unwrap()
            .with_request(outcome, &req, &shown)
            .unwrap()
            .with_request_crlf_free(outcome, free)
            .unwrap()
    };
    let s = session(45, ECDHE_ECDSA_AES128_GCM_SHA256, 2000);
    let outcome = s.d.prover.clone();
    let (p, v, _) = prove(
        s,
        &outcome,
        &claim_of(&outcome, std::slice::from_ref(&hidden)),
    );
    p.unwrap();
    let v = v.unwrap();
    assert_eq!(v.request_crlf_free, vec![hidden.clone()]);
    // The verifier's view fixes where the request ends.
    let mut view: Vec<Option<u8>> = vec![None; req.len()];
    for r in &shown {
        for i in r.clone() {
            view[i] = Some(req[i]);
        }
    }
    let free = [webproof_disclosure::disclosure::Range::new(
        hidden.start,
        hidden.end,
    )];
    assert_eq!(
        webproof_disclosure::exchange::framed_request_ends(&view, &free),
        vec![req.len()]
    );
    // Over the head's last line end: the proof refuses it.
    let s = session(46, ECDHE_ECDSA_AES128_GCM_SHA256, 2000);
    let outcome = s.d.prover.clone();
    refused(
        s,
        &outcome,
        &claim_of(&outcome, &[hidden.start..req.len() - 2]),
    );
    // Out of order, or past the request: malformed, the statement stops
    // on both sides (the prover's first, so the verifier sees it leave).
    for bad in [vec![20..30, 10..15], vec![hidden.start..req.len() + 1]] {
        let s = session(47, ECDHE_ECDSA_AES128_GCM_SHA256, 2000);
        let outcome = s.d.prover.clone();
        let (p, v, _) = prove(s, &outcome, &claim_of(&outcome, &bad));
        assert!(matches!(p, Err(Error::Malformed(_))), "{bad:?}: {p:?}");
        assert!(v.is_err(), "{bad:?}");
    }
}

/// A request byte other than the one sent, or another client IV, is
/// refused.
#[test]
fn false_request_claims_are_refused() {
    for (seed, how) in [(41, "byte"), (42, "iv"), (43, "offset")] {
        let s = session(seed, ECDHE_ECDSA_AES128_GCM_SHA256, 2000);
        let req = request();
        let outcome = s.d.prover.clone();
        let mut claim = ResponseClaim::new(&outcome, &[0..15])
            .unwrap()
            .with_request(&outcome, &req, &[0..100])
            .unwrap();
        match how {
            "byte" => claim.request[0].1[4] ^= 0x20,
            "iv" => claim.request_iv[0] ^= 1,
            _ => claim.request[0].0 += 1,
        }
        refused(s, &outcome, &claim);
    }
}

/// The verifier never saw the request's ciphertext: the statement takes
/// the masked ciphertext it got in 2PC and the mask as the COT choice bits
/// it authenticated. A prover that claims a flipped request bit and flips
/// the choice bit of the COT that masks it (the lsb of its MAC), or
/// changes the masked ciphertext of its own view instead, is refused; the
/// verifier's recording holds zeros where the request's ciphertext would
/// be.
#[test]
fn request_masks_other_than_the_2pc_are_refused() {
    let (byte, bit) = (4usize, 3usize);
    let at = webproof_mpc_tls::rec::gcm::masked_bit(8 * byte + bit);
    for how in ["choice bit", "masked ciphertext"] {
        let s = session(44, ECDHE_ECDSA_AES128_GCM_SHA256, 2000);
        let req = request();
        let sent = &s.d.verifier.recording.sent;
        let last = sent.last().expect("a request record");
        assert!(
            last.payload[8..].iter().all(|&b| b == 0),
            "no request byte recorded"
        );
        let masked = |h: &[webproof_mpc_tls::HiddenRecord]| -> Vec<Vec<u8>> {
            h.iter().map(|h| h.masked.clone()).collect()
        };
        assert_eq!(masked(&s.d.verifier.hidden), masked(&s.d.prover.hidden));
        let mut outcome = s.d.prover.clone();
        let mut claim = ResponseClaim::new(&outcome, &[0..15])
            .unwrap()
            .with_request(&outcome, &req, &[0..100])
            .unwrap();
        claim.request[0].1[byte] ^= 1 << bit;
        match how {
            "choice bit" => outcome.hidden[0].cots[at] ^= Block(1),
            _ => outcome.hidden[0].masked[byte] ^= 1 << bit,
        }
        refused(s, &outcome, &claim);
    }
}

/// The prover's commitment to the session's request and response, as the
/// net driver makes it (leaves of at most 300 bytes, fresh seed).
fn commit_transcript(
    request: &[u8],
    response: &[u8],
) -> (
    webproof_attestation::Transcript,
    webproof_attestation::TranscriptCommitment,
) {
    let opts = webproof_disclosure::attest::AttestOptions {
        chunk_len: Some(300),
        boundaries: Vec::new(),
    };
    webproof_disclosure::attest::commit(
        &opts,
        request,
        response,
        &mut ChaCha20Rng::seed_from_u64(5),
    )
    .unwrap()
}

/// A session whose prover commits to `request` and `response` (the true
/// ones, or not): the session, the prover's outcome, the claim (revealing
/// nothing) and the blinders.
fn committed(
    seed: u64,
    request: impl FnOnce() -> Vec<u8>,
    response: impl FnOnce(&[u8]) -> Vec<u8>,
) -> (Session, ProverOutcome, ResponseClaim, Vec<[u8; 16]>) {
    let s = session(seed, ECDHE_ECDSA_AES128_GCM_SHA256, 2000);
    let outcome = s.d.prover.clone();
    let (_, commitment) = commit_transcript(&request(), &response(&outcome.response));
    let claim = ResponseClaim::new(&outcome, &[])
        .unwrap()
        .with_commitment(&outcome, &commitment);
    let blinders = webproof_disclosure::attest::blinders(&commitment);
    (s, outcome, claim, blinders)
}

/// MPC mode attests as proxy mode does: the proof establishes the leaf
/// hashes of the prover's commitment, the verifier signs their root with
/// the fields of its own output, and the prover's bundle presents chosen
/// leaves that a third party checks against the verifier's key.
#[test]
fn attested_session_presents_what_the_server_sent() {
    use webproof_attestation::{verify_presentation, Scheme, SigningKey};
    use webproof_disclosure::attest::AttestationBundle;
    use webproof_disclosure::http::RevealItem;
    use webproof_disclosure::Range as R;
    let s = session(40, ECDHE_ECDSA_AES128_GCM_SHA256, 2000);
    let outcome = s.d.prover.clone();
    let req = request();
    let resp = outcome.response.clone();
    let (transcript, commitment) = commit_transcript(&req, &resp);
    let claim = ResponseClaim::new(&outcome, &[0..15])
        .unwrap()
        .with_commitment(&outcome, &commitment);
    assert!(
        !claim.request_iv.is_empty(),
        "request leaves need the client IV"
    );
    let blinders = webproof_disclosure::attest::blinders(&commitment);
    let t = std::time::Instant::now();
    let (p, v, d) = prove_with(s, &outcome, &claim, &blinders, true);
    let st = p.unwrap();
    let v = v.unwrap();
    eprintln!(
        "attested: {} leaves over {} + {} bytes; proof {} AND, {:.1} KB P->V, {:.2} s",
        claim.leaves.len(),
        req.len(),
        resp.len(),
        st.zk.and_gates,
        st.sent as f64 / 1e3,
        t.elapsed().as_secs_f64()
    );
    assert_eq!(v.leaves, commitment.leaves());
    assert_eq!(v.leaf_hashes, commitment.leaf_hashes());
    assert!(v.request_ranges.is_empty(), "committing reveals nothing");

    let key = SigningKey::generate(Scheme::Ed25519, &mut ChaCha20Rng::seed_from_u64(6));
    let out = webproof_mpc_tls::verifier_output(&d.verifier, &v, NAME, 1_700_000_000).unwrap();
    let reply = webproof_mpc_tls::attestation(&key, &d.verifier, &v, &out).unwrap();
    let bundle =
        AttestationBundle::accept(&reply, transcript, commitment, outcome.certificates.clone())
            .unwrap();
    let signed = bundle.attestation.attestation();
    assert_eq!(signed.server_name(), NAME);
    assert_eq!(signed.received_len() as usize, resp.len());
    assert_eq!(signed.sent_len() as usize, req.len());

    // A presentation of the status line and a piece of the request.
    let webproof_disclosure::attest::Presented {
        presentation: pres,
        revealed,
        ..
    } = bundle
        .present(
            &[
                RevealItem::Recv(R { start: 0, end: 15 }),
                RevealItem::Sent(R { start: 0, end: 10 }),
            ],
            true,
        )
        .unwrap();
    assert_eq!(revealed.len(), 2);
    let checked = verify_presentation(&pres.to_bytes(), &[key.verifying_key()]).unwrap();
    let shown: Vec<u8> = (0..15).map(|i| checked.received.get(i).unwrap()).collect();
    assert_eq!(shown, resp[..15]);
    let shown: Vec<u8> = (0..10).map(|i| checked.sent.get(i).unwrap()).collect();
    assert_eq!(shown, req[..10]);
    assert!(checked.server_identity.is_some());
}

/// A commitment to a response the server did not send (one byte changed,
/// honest blinders and layout) is refused: the proof computes each leaf's
/// hash over the recorded records.
#[test]
fn commitment_to_another_response_is_refused() {
    let (s, outcome, claim, blinders) = committed(41, request, |r| {
        let mut r = r.to_vec();
        r[1500] ^= 0x01;
        r
    });
    let (p, v, _) = prove_with(s, &outcome, &claim, &blinders, true);
    caught_prover(p, v);
}

/// The same for the request: a leaf over a request the client did not send.
#[test]
fn commitment_to_another_request_is_refused() {
    let other_request = || {
        let mut req = request();
        req[5] = b'X';
        req
    };
    let (s, outcome, claim, blinders) = committed(42, other_request, <[u8]>::to_vec);
    let (p, v, _) = prove_with(s, &outcome, &claim, &blinders, true);
    caught_prover(p, v);
}

/// A claimed hash that is not its leaf's (another leaf's, so a valid hash
/// of true data), and blinders other than the hashes were made with, are
/// refused.
#[test]
fn swapped_leaf_hashes_and_other_blinders_are_refused() {
    let same = <[u8]>::to_vec;
    let (s, outcome, mut claim, blinders) = committed(43, request, same);
    let n = claim.leaf_hashes.len();
    claim.leaf_hashes.swap(n - 1, n - 2);
    let (p, v, _) = prove_with(s, &outcome, &claim, &blinders, true);
    caught_prover(p, v);

    let (s, outcome, claim, mut blinders) = committed(44, request, same);
    blinders[0][0] ^= 1;
    let (p, v, _) = prove_with(s, &outcome, &claim, &blinders, true);
    caught_prover(p, v);
}

/// Layouts that do not partition both directions of the recording, and a
/// commitment to a verifier without a key, are refused before the proof.
#[test]
fn bad_layouts_and_keyless_verifiers_are_refused_before_the_proof() {
    let before_proof = |v: Result<VerifiedResponse, Error>| match v {
        Err(Error::Disclosure(webproof_disclosure::DisclosureError::Attestation(_))) => {}
        other => panic!("expected a refusal of the attestation, got {other:?}"),
    };
    let same = <[u8]>::to_vec;
    // The last leaf of the response dropped (with its hash).
    let (s, outcome, mut claim, mut blinders) = committed(45, request, same);
    claim.leaves.pop();
    claim.leaf_hashes.pop();
    blinders.pop();
    let (_, v, _) = prove_with(s, &outcome, &claim, &blinders, true);
    before_proof(v);

    // A leaf claimed at other offsets (the first response leaf shifted by
    // one byte, overlapping the next).
    let (s, outcome, mut claim, blinders) = committed(46, request, same);
    let first_recv = claim
        .leaves
        .iter()
        .position(|l| l.direction == webproof_attestation::Direction::Received)
        .unwrap();
    claim.leaves[first_recv].end += 1;
    let (_, v, _) = prove_with(s, &outcome, &claim, &blinders, true);
    before_proof(v);

    // An honest commitment to a verifier that cannot sign.
    let (s, outcome, claim, blinders) = committed(47, request, same);
    let (_, v, _) = prove_with(s, &outcome, &claim, &blinders, false);
    before_proof(v);
}

/// The claim's shape survives encoding, leaves included; a count beyond
/// the message or an unknown direction is malformed; the disclosure opens
/// the shape's commitment to the claim, and other bytes or salt do not.
#[test]
fn claim_shape_round_trips_and_opens_only_to_its_bytes() {
    let s = session(48, ECDHE_ECDSA_AES128_GCM_SHA256, 200);
    let outcome = s.d.prover.clone();
    let (_, commitment) = commit_transcript(&request(), &outcome.response);
    let claim = ResponseClaim::new(&outcome, &[0..5, 30..42])
        .unwrap()
        .with_commitment(&outcome, &commitment);
    let salt = [5; 32];
    let shape = claim.shape(&salt);
    let bytes = shape.encode();
    assert_eq!(ClaimShape::decode(&bytes).unwrap(), shape);
    assert_eq!(shape.revealed_len(), 17);
    // Leaves, then the close_notify flag and the commitment.
    let leaves_at = bytes.len() - 32 - 1 - 4 - 41 * claim.leaves.len();
    let mut huge = bytes.clone();
    huge[leaves_at..leaves_at + 4].copy_from_slice(&u32::MAX.to_be_bytes());
    assert!(matches!(
        ClaimShape::decode(&huge),
        Err(Error::Malformed(_))
    ));
    let mut dir = bytes.clone();
    dir[leaves_at + 4] = 7;
    assert!(matches!(ClaimShape::decode(&dir), Err(Error::Malformed(_))));
    for cut in [1, 20, 41] {
        assert!(ClaimShape::decode(&bytes[..bytes.len() - cut]).is_err());
    }
    // The shape shows no revealed byte.
    assert!(!bytes.windows(12).any(|w| w == &outcome.response[30..42]));

    let disclosure = claim.disclosure(&salt);
    assert_eq!(shape.open(&disclosure).unwrap(), claim);
    let mut other = disclosure.clone();
    *other.last_mut().unwrap() ^= 1;
    assert!(matches!(shape.open(&other), Err(Error::Proof(_))));
    let mut other_salt = disclosure.clone();
    other_salt[0] ^= 1;
    assert!(matches!(shape.open(&other_salt), Err(Error::Proof(_))));
    assert!(matches!(
        shape.open(&disclosure[..disclosure.len() - 1]),
        Err(Error::Malformed(_))
    ));
}

/// A verifier that stops after the seal, before it reveals `Δ` (as one
/// that expects to fail the prover's audit would), has received none of
/// the bytes the claim reveals: they go out only after the audit.
#[test]
fn revealed_bytes_do_not_reach_a_verifier_that_stops_before_the_audit() {
    let s = session(49, ECDHE_ECDSA_AES128_GCM_SHA256, 2000);
    let outcome = s.d.prover.clone();
    // A stretch of the response no other message could carry by chance.
    let secret = outcome.response[100..164].to_vec();
    let claim = ResponseClaim::new(&outcome, &[100..164]).unwrap();
    let (a, b) = memory_duplex();
    let mut r1 = ChaCha20Rng::seed_from_u64(1);
    let mut r2 = ChaCha20Rng::seed_from_u64(2);
    let vo = s.d.verifier.clone();
    let (p, seen) = block_on(async {
        futures::join!(
            prove_response(s.r, Channel::new(a), cfg(), &outcome, &claim, &[], &mut r1),
            async {
                let (mut sealed, mut seen) =
                    verifier_to_the_seal(s.s, Channel::new(b), &vo, &mut r2).await;
                // Whatever the prover sent after its seal: nothing, it
                // waits for the reveal. (The proof's own messages between
                // are corrections padded by COT bits and hashes.)
                let (_, ch) = sealed.parts();
                while let Some(Ok(m)) = futures::FutureExt::now_or_never(ch.recv(1 << 26)) {
                    seen.extend_from_slice(&m);
                }
                seen
            }
        )
    });
    assert!(p.is_err(), "the prover went on without the Δ reveal");
    assert!(
        !seen.windows(secret.len()).any(|w| w == &secret[..]),
        "a revealed range reached the verifier before the audit"
    );
}

/// Figures, not assertions: garbled-table bytes verifier → prover over one
/// session (reduced PRF steps, both Finished, the 1 KB request record),
/// chunk headers included, and every message's encoded bytes by kind in
/// both directions. Run with `--release -- --nocapture`.
#[test]
fn table_bytes_figures() {
    use std::cell::RefCell;
    use std::collections::BTreeMap;
    use std::rc::Rc;
    type Tally = BTreeMap<(bool, &'static str), (usize, usize)>;
    let seen = Rc::new(RefCell::new((0usize, 0usize)));
    let kinds = Rc::new(RefCell::new(Tally::new()));
    let (tap, down) = (Rc::clone(&seen), Rc::clone(&kinds));
    let up = Rc::clone(&kinds);
    let count = |t: &RefCell<Tally>, to_verifier: bool, name: &'static str, n: usize| {
        let mut t = t.borrow_mut();
        let e = t.entry((to_verifier, name)).or_default();
        e.0 += n;
        e.1 += 1;
    };
    let hooks = Hooks {
        verifier_to_prover: Some(Box::new(move |m| {
            count(&down, false, m.name(), m.encode().len());
            if let webproof_mpc_tls::VerifierMsg::Tables { chunk, .. } = m {
                let mut t = tap.borrow_mut();
                t.0 += chunk.len();
                t.1 += 1;
            }
        })),
        prover_to_verifier: Some(Box::new(move |m| {
            count(&up, true, m.name(), m.encode().len())
        })),
        ..Hooks::default()
    };
    let s = session_with(36, ECDHE_ECDSA_AES128_GCM_SHA256, 2000, hooks).unwrap();
    assert_eq!(s.d.prover.response, response(2000));
    let (bytes, chunks) = *seen.borrow();
    eprintln!(
        "tables bytes per session (AES-128-GCM-SHA256, reduced PRF, 1 KB request): {bytes} in {chunks} chunks ({:.2} MB)",
        bytes as f64 / 1e6
    );
    for ((to_verifier, name), (n, count)) in kinds.borrow().iter() {
        let dir = if *to_verifier {
            "prover → verifier"
        } else {
            "verifier → prover"
        };
        eprintln!("  {dir} {name}: {n} bytes in {count} messages");
    }
}

/// The verifier's answer to the claim: a refusal reaches the prover with
/// its reason, an unknown tag or an empty answer is malformed. The prover
/// does not wait for the answer before it proves; it stops at its first
/// receive, which reads the answer before any message of the proof.
#[test]
fn refusals_and_malformed_answers_to_the_claim() {
    for (seed, answer) in [
        (49u64, b"\x01no key here".to_vec()),
        (50, vec![2u8, 0, 0]),
        (51, Vec::new()),
    ] {
        let s = session(seed, ECDHE_ECDSA_AES128_GCM_SHA256, 200);
        let outcome = s.d.prover.clone();
        let claim = ResponseClaim::new(&outcome, &[0..5]).unwrap();
        let (a, b) = memory_duplex();
        let mut r1 = ChaCha20Rng::seed_from_u64(1);
        let (p, ()) = block_on(async {
            futures::join!(
                prove_response(s.r, Channel::new(a), cfg(), &outcome, &claim, &[], &mut r1),
                async {
                    // The reveal, then the answer to the claim; the prover
                    // is proving meanwhile: take what it sends until it
                    // has read the answer and hung up.
                    let mut ch = Channel::new(b);
                    ch.send(&s.d.verifier.retained.reveal()).await.unwrap();
                    ch.recv(1 << 20).await.unwrap();
                    ch.send(&answer).await.unwrap();
                    ch.flush().await.unwrap();
                    while ch.recv(1 << 26).await.is_ok() {}
                }
            )
        });
        match (answer.first(), p) {
            (Some(1), Err(Error::Aborted(why))) => assert!(why.contains("no key here"), "{why}"),
            (_, Err(Error::Malformed(_))) if answer.first() != Some(&1) => {}
            (_, other) => panic!("answer {answer:?}: {:?}", other.map(|_| ())),
        }
    }
}
