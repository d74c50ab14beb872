//! Both parties of a proxy-mode session in one thread, driven flight by
//! flight through `webproof_proxy::session`: no sockets, no tokio, no
//! sleeps. The TLS session is a real rustls one (the prover's instrumented
//! client, the fixture's server) run through memory buffers; the proof runs
//! the production engine (base OT, SoftSpokenOT, Ferret, QuickSilver) over
//! `webproof_core::memory_duplex` with seeded generators; the parties'
//! clocks are values.
//!
//! Cases: honest sessions (TLS 1.3 and 1.2, with and without an
//! attestation) whose verified output is the true bytes, the cut at
//! `Close`, refused hellos, a wrong `CloseAck` digest, tampered plans and a
//! verdict tampered in transit, each with its reason code.

use futures::executor::block_on;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;
use std::io::{Read, Write};
use std::sync::Arc;
use webproof_core::{memory_duplex, Channel, MemoryIo};
use webproof_net::provider::{instrumented_provider, take_shared_secret, CollectingKeyLog};
use webproof_net::FixtureCerts;
use webproof_proxy::http::parse_items;
use webproof_proxy::protocol::{
    decode, encode, ProofPayload, ProverMsg, RejectKind, RelayFrame, VerifierMsg, PROTOCOL_VERSION,
};
use webproof_proxy::session::prover::{ProveStep, ProverConfig, ProverSession, TlsSecrets};
use webproof_proxy::session::verifier::{
    api_key_digest, AdmissionPolicy, OnProof, VerifierSession,
};
use webproof_proxy::session::SessionError;
use webproof_proxy::{
    CipherSuite, Direction, Recorder, RecorderLimits, Recording, RootStore, TlsVersion,
    VerifierOutput,
};
use webproof_tlsproof::session::{ProverOpening, ProverPreprocessed, VerifierPreprocessed};

/// The parties' clock (Unix seconds): 2026-01-01, inside the fixture
/// certificate's validity (rcgen's default, 1975 to 4096).
const NOW: u64 = 1_767_225_600;

const REQUEST: &[u8] =
    b"GET /account HTTP/1.1\r\nHost: localhost\r\nCookie: session=c00kie\r\nConnection: close\r\n\r\n";
const BODY: &[u8] = br#"{"account":{"balance":{"amount":1234}},"verified":true}"#;

fn response() -> Vec<u8> {
    let mut r = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        BODY.len()
    )
    .into_bytes();
    r.extend_from_slice(BODY);
    r
}

/// Fixture certificates (kept with their directory).
struct Certs {
    certs: FixtureCerts,
    _dir: tempfile::TempDir,
}

fn certs() -> Certs {
    let dir = tempfile::tempdir().unwrap();
    let certs = FixtureCerts::generate(dir.path(), &[]).unwrap();
    Certs { certs, _dir: dir }
}

fn roots(c: &Certs) -> RootStore {
    let mut r = RootStore::empty();
    r.add_pem(c.certs.ca_pem.as_bytes()).unwrap();
    r
}

/// The prover's TLS stack as the session asks about it: the shared
/// secrets the instrumented provider captured (taken once, so that one TLS
/// session can serve several proofs) and the key log.
#[derive(Clone)]
struct Captured {
    shared: Vec<(Vec<u8>, Vec<u8>)>,
    keylog: Arc<CollectingKeyLog>,
}

impl TlsSecrets for Captured {
    fn shared_secret(&self, public_key: &[u8]) -> Option<Vec<u8>> {
        self.shared
            .iter()
            .find(|(k, _)| k == public_key)
            .map(|(_, s)| s.clone())
    }
    fn logged(&self, label: &str, client_random: &[u8; 32]) -> Option<Vec<u8>> {
        self.keylog.get(label, client_random)
    }
}

/// The wire: every message crosses it encoded.
fn wire<T: serde::Serialize + serde::de::DeserializeOwned>(m: &T) -> T {
    decode(&encode(m)).unwrap()
}

fn prover_config(c: &Certs, suite: CipherSuite, reveal: &[&str]) -> ProverConfig {
    ProverConfig {
        host: "localhost".into(),
        port: 443,
        api_key: None,
        request: REQUEST.to_vec(),
        expect_response: 1 << 10,
        version: Some(suite.version()),
        suites: vec![suite],
        reveal: parse_items(reveal).unwrap(),
        attest: None,
        roots: roots(c),
    }
}

/// The relay as both parties record it: the TLS session between the
/// prover's client and the server, through memory. The verifier records
/// every byte it relays; the prover records what its client saw, which
/// ends before `late` (server records the verifier relayed after the
/// prover stopped reading).
struct Relayed {
    prover: Recording,
    verifier: Recording,
    response: Vec<u8>,
    secrets: Captured,
}

fn tls_session(c: &Certs, suite: CipherSuite, late: Option<&[u8]>) -> Relayed {
    let keylog = CollectingKeyLog::new();
    let versions: &[&rustls::SupportedProtocolVersion] = if suite.version() == TlsVersion::Tls13 {
        &[&rustls::version::TLS13]
    } else {
        &[&rustls::version::TLS12]
    };
    let mut rustls_roots = rustls::RootCertStore::empty();
    rustls_roots.add(c.certs.chain[1].clone()).unwrap();
    let mut cfg =
        rustls::ClientConfig::builder_with_provider(Arc::new(instrumented_provider(&[suite], &[])))
            .with_protocol_versions(versions)
            .unwrap()
            .with_root_certificates(rustls_roots)
            .with_no_client_auth();
    cfg.resumption = rustls::client::Resumption::disabled();
    cfg.key_log = keylog.clone();
    let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
    let mut client = rustls::ClientConnection::new(Arc::new(cfg), name).unwrap();
    let mut server = rustls::ServerConnection::new(c.certs.server_config().unwrap()).unwrap();
    let mut p_rec = ProverSession::recorder();
    let mut v_rec = Recorder::new(RecorderLimits::default());
    let mut received = Vec::new();
    let mut request_sent = false;
    let mut answered = false;
    // Move bytes both ways until neither side has anything to say.
    loop {
        let mut moved = false;
        let mut up = Vec::new();
        while client.wants_write() {
            client.write_tls(&mut up).unwrap();
        }
        if !up.is_empty() {
            moved = true;
            p_rec.feed(Direction::Sent, &up).unwrap();
            v_rec.feed(Direction::Sent, &up).unwrap();
            v_rec.mark_sent_delivered();
            server.read_tls(&mut &up[..]).unwrap();
            server.process_new_packets().unwrap();
        }
        let mut down = Vec::new();
        while server.wants_write() {
            server.write_tls(&mut down).unwrap();
        }
        if !down.is_empty() {
            moved = true;
            p_rec.feed(Direction::Received, &down).unwrap();
            v_rec.feed(Direction::Received, &down).unwrap();
            client.read_tls(&mut &down[..]).unwrap();
            client.process_new_packets().unwrap();
        }
        if !client.is_handshaking() && !request_sent {
            client.writer().write_all(REQUEST).unwrap();
            request_sent = true;
            moved = true;
        }
        let mut got = Vec::new();
        let _ = server.reader().read_to_end(&mut got);
        if got.len() == REQUEST.len() && !answered {
            assert_eq!(got, REQUEST);
            server.writer().write_all(&response()).unwrap();
            answered = true;
            moved = true;
        }
        let mut buf = [0u8; 4096];
        while let Ok(n) = client.reader().read(&mut buf) {
            if n == 0 {
                break;
            }
            received.extend_from_slice(&buf[..n]);
        }
        if !moved {
            break;
        }
    }
    assert_eq!(received, response());
    if let Some(late) = late {
        // The verifier relays more than the prover reads before its Close.
        server.writer().write_all(late).unwrap();
        let mut down = Vec::new();
        while server.wants_write() {
            server.write_tls(&mut down).unwrap();
        }
        v_rec.feed(Direction::Received, &down).unwrap();
    }
    let prover = p_rec.finish();
    let shared = webproof_proxy::verify::client_public_keys(&prover)
        .unwrap()
        .into_iter()
        .filter_map(|k| take_shared_secret(&k).map(|s| (k, s)))
        .collect();
    Relayed {
        prover,
        verifier: v_rec.finish(),
        response: received,
        secrets: Captured { shared, keylog },
    }
}

/// Both parties after the setup flights and the preprocessing.
struct Pair {
    prover: ProverSession,
    verifier: VerifierSession,
    pre_p: ProverPreprocessed,
    pre_v: VerifierPreprocessed,
    ch_p: Channel<MemoryIo>,
    ch_v: Channel<MemoryIo>,
    rng: ChaCha20Rng,
}

fn setup(cfg: ProverConfig, seed: u64) -> Pair {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let mut prover = ProverSession::new(cfg);
    let mut verifier = VerifierSession::new();
    let hello = wire(&prover.hello());
    let admitted = verifier
        .on_hello(hello, &AdmissionPolicy::default())
        .unwrap();
    assert_eq!(admitted.host, "localhost");
    // The prover's opening travels with its hello; the engine's bootstrap
    // and warm-up follow (in production, the warm-up beside the relay).
    let opening = ProverOpening::new(prover.engine_config(), &mut rng).unwrap();
    let (io_p, io_v) = memory_duplex();
    let (mut ch_p, mut ch_v) = (Channel::new(io_p), Channel::new(io_v));
    prover.on_hello_answer(wire(&verifier.accepted())).unwrap();
    let mut rng_v = ChaCha20Rng::seed_from_u64(seed ^ 1);
    let (pre_p, pre_v) = block_on(async {
        let p = async {
            ch_p.send(&opening.message()).await.unwrap();
            ch_p.flush().await.unwrap();
            let mut pre = opening.bootstrap(&mut ch_p, &mut rng).await.unwrap();
            pre.warm_up(&mut ch_p).await.unwrap();
            pre
        };
        let v = async {
            let mut pre = VerifierPreprocessed::bootstrap(&mut ch_v, admitted.engine, &mut rng_v)
                .await
                .unwrap();
            pre.warm_up(&mut ch_v).await.unwrap();
            pre
        };
        futures::join!(p, v)
    });
    prover
        .on_ready(wire(&verifier.ready(NOW, RecorderLimits::default())))
        .unwrap();
    Pair {
        prover,
        verifier,
        pre_p,
        pre_v,
        ch_p,
        ch_v,
        rng,
    }
}

/// The relay's end: the prover's `Close`, the verifier's cut and `CloseAck`.
fn close(pair: &mut Pair, relayed: &Relayed) -> [u8; 32] {
    let close = pair.prover.close(relayed.prover.clone()).unwrap();
    let RelayFrame::Close { sent, received } = RelayFrame::decode(&close.encode()).unwrap() else {
        panic!("not a Close");
    };
    let (ack, cut) = pair
        .verifier
        .on_close(relayed.verifier.clone(), sent, received);
    cut.unwrap();
    let ack = RelayFrame::decode(&ack.encode()).unwrap();
    ProverSession::on_late_relay_frame(ack).unwrap().unwrap()
}

/// The proof: the engine on both sides, then the verifier's conclusion.
/// `tamper` changes the `Proof` message in transit.
fn prove(
    pair: Pair,
    relayed: &Relayed,
    key: Option<&webproof_attestation::SigningKey>,
    tamper: impl FnOnce(&mut ProverMsg),
) -> (
    ProverSession,
    VerifierMsg,
    Result<VerifierOutput, webproof_proxy::ProxyError>,
) {
    let Pair {
        mut prover,
        mut verifier,
        pre_p,
        pre_v,
        ch_p,
        ch_v,
        mut rng,
    } = pair;
    let (msg, step) = prover
        .prepare_proof(&relayed.response, &relayed.secrets, NOW, &mut rng)
        .unwrap();
    let mut msg = wire(&msg);
    tamper(&mut msg);
    let roots = prover.config().roots.clone();
    match verifier.on_proof(msg, &roots, key.is_some()).unwrap() {
        OnProof::Verify => {}
        OnProof::Refuse(verdict, e) => return (prover, wire(&verdict), Err(e)),
    }
    let ProveStep {
        statement,
        witness,
        context,
    } = step;
    let v_context = verifier.proof_context().unwrap();
    let mut rng_v = ChaCha20Rng::seed_from_u64(7);
    let (p, v) = block_on(async {
        futures::join!(
            pre_p.prove(ch_p, &statement, &witness, &context),
            pre_v.verify(
                ch_v,
                verifier.zk_statement().unwrap(),
                &v_context,
                &mut rng_v
            )
        )
    });
    let proven = v.map(|(proven, _)| proven).map_err(|e| e.to_string());
    // A prover whose proof failed hears why from the verdict.
    let _ = p;
    let (verdict, out) = verifier.conclude(proven.as_ref().map_err(Clone::clone), key);
    (prover, wire(&verdict), out)
}

/// The revealed bytes of a verified direction are the true bytes.
fn assert_true_bytes(d: &webproof_proxy::disclosure::DisclosedData, truth: &[u8]) {
    assert_eq!(d.len, truth.len());
    for r in &d.revealed {
        assert_eq!(&d.bytes[r.start..r.end], &truth[r.start..r.end]);
    }
}

#[test]
fn honest_sessions_verify_the_true_bytes() {
    let c = certs();
    for (i, suite) in [
        CipherSuite::TLS13_AES_128_GCM_SHA256,
        CipherSuite::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
    ]
    .into_iter()
    .enumerate()
    {
        let relayed = tls_session(&c, suite, None);
        let mut pair = setup(prover_config(&c, suite, &["http"]), 10 + i as u64);
        let digest = close(&mut pair, &relayed);
        let (mut prover, verdict, out) = prove(pair, &relayed, None, |_| {});
        let out = out.unwrap();
        prover.on_close_ack(digest).unwrap();
        let got = prover.on_verdict(verdict).unwrap();
        assert_eq!(got.output, out, "{suite}");
        assert!(got.attestation.is_none());
        assert_eq!(out.server_name, "localhost");
        assert_eq!(out.cipher_suite, suite);
        assert_eq!(out.time, NOW);
        assert_true_bytes(&out.sent, REQUEST);
        assert_true_bytes(&out.received, &response());
        // The default HTTP policy: the cookie's value stays hidden.
        assert!(!out.sent.text.contains("c00kie"), "{}", out.sent.text);
        assert!(out.sent.text.contains("GET /account"));
        assert!(out.received.text.contains("1234"));
    }
}

#[test]
fn an_attested_session_carries_a_bundle_over_the_true_bytes() {
    let c = certs();
    let suite = CipherSuite::TLS13_CHACHA20_POLY1305_SHA256;
    let key = webproof_attestation::SigningKey::generate(
        webproof_attestation::Scheme::Ed25519,
        &mut ChaCha20Rng::seed_from_u64(3),
    );
    let relayed = tls_session(&c, suite, None);
    let mut cfg = prover_config(&c, suite, &["none"]);
    cfg.attest = Some(webproof_proxy::attest::AttestOptions {
        chunk_len: None,
        boundaries: parse_items(&["json:account.balance.amount"]).unwrap(),
    });
    let mut pair = setup(cfg, 20);
    let digest = close(&mut pair, &relayed);
    let (mut prover, verdict, out) = prove(pair, &relayed, Some(&key), |_| {});
    let out = out.unwrap();
    assert!(out.received.revealed.is_empty());
    prover.on_close_ack(digest).unwrap();
    let got = prover.on_verdict(verdict).unwrap();
    let bundle = got.attestation.expect("an attestation");
    assert_eq!(bundle.transcript.received(), &response()[..]);
    assert_eq!(bundle.transcript.sent(), REQUEST);
    let webproof_proxy::attest::Presented { revealed, .. } = bundle
        .present(
            &parse_items(&["json:account.balance.amount"]).unwrap(),
            false,
        )
        .unwrap();
    assert!(!revealed.is_empty());
}

/// The verifier relayed a server record after the prover stopped reading:
/// the prover's `Close` cuts it off, both hold the same transcript, and
/// the output says a record came after the cut.
#[test]
fn close_cuts_what_the_prover_did_not_read() {
    let c = certs();
    let suite = CipherSuite::TLS13_AES_256_GCM_SHA384;
    let relayed = tls_session(&c, suite, Some(b"late bytes"));
    assert_eq!(
        relayed.verifier.received.len(),
        relayed.prover.received.len() + 1
    );
    let mut pair = setup(prover_config(&c, suite, &["all"]), 30);
    let digest = close(&mut pair, &relayed);
    assert_eq!(digest, relayed.prover.digest());
    let (mut prover, verdict, out) = prove(pair, &relayed, None, |_| {});
    let out = out.unwrap();
    assert_eq!(out.server_records_after_cut, Some(1));
    assert_eq!(out.received.bytes, response());
    prover.on_close_ack(digest).unwrap();
    assert_eq!(prover.on_verdict(verdict).unwrap().output, out);

    // A Close naming a server record the verifier never relayed is
    // refused, and the prover hears why.
    let mut v = VerifierSession::new();
    v.ready(NOW, RecorderLimits::default());
    let n = relayed.prover.received.len() as u32;
    let (ack, cut) = v.on_close(relayed.prover.clone(), 1, n + 1);
    assert!(cut.is_err());
    match ProverSession::on_late_relay_frame(RelayFrame::decode(&ack.encode()).unwrap()) {
        Err(SessionError::Rejected(r)) => assert_eq!(r.kind, RejectKind::Protocol, "{r}"),
        other => panic!("{other:?}"),
    }
}

/// Hellos the verifier refuses, each with its reason code, and the prover
/// surfaces the code.
#[test]
fn refused_hellos_say_why() {
    let hello =
        |version: u16, host: &str, api_key: Option<&str>, expected_cots: u64| ProverMsg::Hello {
            version,
            host: host.into(),
            port: 443,
            api_key: api_key.map(Into::into),
            expected_cots,
            mpc: None,
        };
    let keyed = AdmissionPolicy {
        api_key_digests: vec![api_key_digest("right")],
    };
    let open = AdmissionPolicy::default();
    let cases = [
        (
            hello(PROTOCOL_VERSION - 1, "localhost", None, 1000),
            &open,
            RejectKind::Version,
        ),
        (
            hello(PROTOCOL_VERSION, "localhost", None, 0),
            &open,
            RejectKind::SessionSize,
        ),
        (
            hello(PROTOCOL_VERSION, "localhost", None, u64::MAX),
            &open,
            RejectKind::SessionSize,
        ),
        (
            hello(PROTOCOL_VERSION, "localhost", Some("wrong"), 1000),
            &keyed,
            RejectKind::Unauthorized,
        ),
        (
            hello(PROTOCOL_VERSION, "localhost", None, 1000),
            &keyed,
            RejectKind::Unauthorized,
        ),
        (
            hello(PROTOCOL_VERSION, "not a name!", None, 1000),
            &open,
            RejectKind::ServerName,
        ),
    ];
    for (msg, policy, kind) in cases {
        let mut v = VerifierSession::new();
        let r = v.on_hello(wire(&msg), policy).unwrap_err();
        assert_eq!(r.kind, kind, "{r}");
        if kind == RejectKind::Version {
            // The reason names both the peer's version and ours.
            for n in [PROTOCOL_VERSION - 1, PROTOCOL_VERSION] {
                assert!(r.detail.contains(&n.to_string()), "{r}");
            }
        }
        // What the prover makes of the refusal.
        let mut p = ProverSession::new(ProverConfig {
            host: "localhost".into(),
            port: 443,
            api_key: None,
            request: REQUEST.to_vec(),
            expect_response: 1 << 10,
            version: None,
            suites: Vec::new(),
            reveal: Vec::new(),
            attest: None,
            roots: RootStore::empty(),
        });
        p.hello();
        let refused = wire(&webproof_proxy::session::refusal(r.kind, r.detail.clone()));
        match p.on_hello_answer(refused) {
            Err(e @ SessionError::Refused(_)) => assert_eq!(e.kind(), kind),
            other => panic!("{other:?}"),
        }
    }
    // The right key, a trailing dot and upper case: admitted, normalised.
    let mut v = VerifierSession::new();
    let a = v
        .on_hello(
            hello(PROTOCOL_VERSION, "LocalHost.", Some("right"), 1000),
            &keyed,
        )
        .unwrap();
    assert_eq!(a.host, "localhost");
}

/// A `CloseAck` with another digest: the verdict is not about the
/// prover's transcript, and is not accepted.
#[test]
fn a_wrong_close_ack_digest_is_refused() {
    let c = certs();
    let suite = CipherSuite::TLS13_AES_128_GCM_SHA256;
    let relayed = tls_session(&c, suite, None);
    let mut pair = setup(prover_config(&c, suite, &["all"]), 40);
    let mut digest = close(&mut pair, &relayed);
    let (mut prover, verdict, out) = prove(pair, &relayed, None, |_| {});
    out.unwrap();
    digest[0] ^= 1;
    let e = prover.on_close_ack(digest).unwrap_err();
    assert_eq!(e.kind(), RejectKind::Protocol, "{e}");
    // Without a matching digest there is no verdict to accept.
    let e = prover.on_verdict(verdict).unwrap_err();
    assert_eq!(e.kind(), RejectKind::Protocol, "{e}");
}

/// Plans changed in transit: each is refused before or by the proof, with
/// its reason code, and the prover reads the code from the verdict.
#[test]
fn tampered_plans_are_refused() {
    let c = certs();
    let suite = CipherSuite::TLS13_AES_128_GCM_SHA256;
    let relayed = tls_session(&c, suite, None);
    type Tamper = fn(&mut ProverMsg);
    fn plan(m: &mut ProverMsg) -> &mut webproof_proxy::zk::ZkPlan {
        let ProverMsg::Proof {
            payload: ProofPayload::Zk { plan, .. },
        } = m
        else {
            panic!("not a proof")
        };
        plan
    }
    let cases: [(&str, Tamper, RejectKind); 4] = [
        (
            "a handshake secret",
            |m| {
                let ProverMsg::Proof {
                    payload:
                        ProofPayload::Zk {
                            handshake_secrets: Some(s),
                            ..
                        },
                } = m
                else {
                    panic!("no secrets")
                };
                s.server[0] ^= 1;
            },
            RejectKind::Decrypt,
        ),
        (
            "a disclosed range past the data",
            |m| {
                let p = plan(m);
                p.disclosure.received = vec![webproof_proxy::Range::new(0, 1 << 20)];
            },
            RejectKind::Malformed,
        ),
        (
            "commitments to a verifier without a key",
            |m| {
                let p = plan(m);
                // A well-formed layout: 100-byte leaves over both directions.
                use webproof_attestation::{Direction as D, LeafRange};
                p.commitments.clear();
                for (direction, len) in [(D::Sent, REQUEST.len()), (D::Received, response().len())]
                {
                    for start in (0..len as u32).step_by(100) {
                        let end = (start + 100).min(len as u32);
                        p.commitments.push(LeafRange {
                            direction,
                            start,
                            end,
                        });
                    }
                }
            },
            RejectKind::Attestation,
        ),
        (
            // Canonical and within the data, so the plan passes; the proof
            // is bound to the plan as the prover sent it and fails.
            "one more byte disclosed",
            |m| {
                let p = plan(m);
                let r = p.disclosure.sent[0];
                p.disclosure.sent = vec![webproof_proxy::Range::new(r.start, r.end + 1)];
            },
            RejectKind::Protocol,
        ),
    ];
    for (i, (what, tamper, kind)) in cases.into_iter().enumerate() {
        let mut pair = setup(prover_config(&c, suite, &["http"]), 50 + i as u64);
        let digest = close(&mut pair, &relayed);
        let (mut prover, verdict, out) = prove(pair, &relayed, None, tamper);
        let e = out.unwrap_err();
        assert_eq!(RejectKind::from(&e), kind, "{what}: {e}");
        prover.on_close_ack(digest).unwrap();
        match prover.on_verdict(verdict) {
            Err(SessionError::Rejected(r)) => assert_eq!(r.kind, kind, "{what}: {r}"),
            other => panic!("{what}: {other:?}"),
        }
    }
}

/// The virtual clock: a verifier whose session time is before the
/// certificate's validity refuses the plan, before any proof.
#[test]
fn the_verifiers_clock_decides_certificate_validity() {
    let c = certs();
    let suite = CipherSuite::TLS13_AES_128_GCM_SHA256;
    let relayed = tls_session(&c, suite, None);
    let mut pair = setup(prover_config(&c, suite, &["all"]), 60);
    // The verifier's clock as stated in its Ready (1970: before rcgen's 1975).
    pair.verifier.ready(0, RecorderLimits::default());
    let digest = close(&mut pair, &relayed);
    let (mut prover, verdict, out) = prove(pair, &relayed, None, |_| {});
    assert_eq!(RejectKind::from(&out.unwrap_err()), RejectKind::Certificate);
    prover.on_close_ack(digest).unwrap();
    assert_eq!(
        prover.on_verdict(verdict).unwrap_err().kind(),
        RejectKind::Certificate
    );
}

/// A verdict changed in transit (one more byte claimed, or another digest)
/// is refused by the prover: it is not about the prover's bytes.
#[test]
fn a_verdict_tampered_in_transit_is_refused() {
    let c = certs();
    let suite = CipherSuite::TLS13_AES_128_GCM_SHA256;
    let relayed = tls_session(&c, suite, None);
    for (i, tamper) in [
        (|d: &mut webproof_proxy::DigestedOutput| d.received.len += 1) as fn(&mut _),
        |d| d.sent.digest[0] ^= 1,
        |d| d.received.revealed.clear(),
        // Line-end-free ranges the proof did not show (the cookie's are).
        |d| {
            assert!(!d.sent_crlf_free.is_empty(), "the cookie is proven");
            d.sent_crlf_free.clear()
        },
    ]
    .into_iter()
    .enumerate()
    {
        let mut pair = setup(prover_config(&c, suite, &["http"]), 70 + i as u64);
        let digest = close(&mut pair, &relayed);
        let (mut prover, mut verdict, out) = prove(pair, &relayed, None, |_| {});
        out.unwrap();
        let VerifierMsg::Verdict { result: Ok(d), .. } = &mut verdict else {
            panic!("no verdict");
        };
        tamper(d);
        prover.on_close_ack(digest).unwrap();
        let e = prover.on_verdict(verdict).unwrap_err();
        assert_eq!(e.kind(), RejectKind::Verdict, "{e}");
    }
}
