//! MPC mode end to end over real loopback sockets: the rustls fixture as
//! the server, the verifier never connecting to it, the prover connecting
//! itself; the verifier's output is checked against the bytes the fixture
//! serves.

mod common;
use common::*;
use webproof_net::Mode;
use webproof_proxy::{CipherSuite, KxGroup, ProofKind, TlsVersion};

fn mpc_options(addr: &str, port: u16, path: &str, ca: &str) -> webproof_net::ProveOptions {
    let mut o = options(addr, "localhost", port, path, ca);
    o.mode = Mode::Mpc;
    o
}

/// The reference case (1 KB request, 2 KB response, one byte hidden) over
/// both AES-GCM suites and both groups: the verifier's output is the
/// prover's, and the revealed bytes are the fixture's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn suites_and_groups_verify_with_true_bytes() {
    let s = fixture().await;
    let port = s.fixture.addr.port();
    let ca = s.fixture.certs.ca_pem.clone();
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
    for (suite, group) in cases {
        let (addr, v) = verifier(quick_config(roots(&ca))).await;
        let mut o = mpc_options(&addr, port, "/bytes?size=2000", &ca);
        o.suites = vec![suite];
        o.groups = vec![group];
        o.padding = 900;
        o.reveal = vec!["all".parse().unwrap(), "hide-recv:100-101".parse().unwrap()];
        let out = webproof_net::prove(&o)
            .await
            .unwrap_or_else(|e| panic!("{suite} {group:?}: {e}"));
        let vout = v.await.unwrap().unwrap();
        assert_eq!(vout, out.output);
        assert_eq!(vout.proof, ProofKind::Mpc);
        assert_eq!(vout.tls_version, TlsVersion::Tls12);
        assert_eq!(vout.cipher_suite, suite);
        assert_eq!(vout.key_exchange_group, group);
        assert_eq!(vout.server_name, "localhost");
        // The verifier's view is the response with one byte hidden.
        assert_eq!(vout.received.len, out.response.len());
        assert_eq!(vout.received.hidden(), 1);
        let mut expect = out.response.clone();
        expect[100] = 0;
        assert_eq!(vout.received.bytes, expect);
        assert!(vout.received.text.starts_with("HTTP/1.1 200 OK\r\n"));
        // The request, proven too.
        assert_eq!(vout.sent.len, o.request().len());
        assert_eq!(vout.sent.hidden(), 0);
        assert_eq!(vout.sent.bytes, o.request());
        assert!(out.stats.time_proof_ms > 0.0 && out.stats.uploaded_online > 0);
    }
}

/// The fixture's bytes themselves: what the verifier shows is what the
/// server sent, checked against a direct fetch of the same path.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn revealed_json_is_the_fixtures() {
    let s = fixture().await;
    let ca = s.fixture.certs.ca_pem.clone();
    let (addr, v) = verifier(quick_config(roots(&ca))).await;
    let mut o = mpc_options(&addr, s.fixture.addr.port(), "/json", &ca);
    o.headers.push(("Cookie".into(), "sid=TOPSECRET".into()));
    o.reveal = vec!["all".parse().unwrap()];
    let secret = o
        .request()
        .windows(9)
        .position(|w| w == b"TOPSECRET")
        .unwrap();
    o.reveal.push(
        format!("hide-sent:{secret}-{}", secret + 9)
            .parse()
            .unwrap(),
    );
    let out = webproof_net::prove(&o).await.unwrap();
    let vout = v.await.unwrap().unwrap();
    // The cookie's value stays hidden; the rest of the request is shown.
    assert_eq!(vout.sent.hidden(), 9);
    assert!(vout.sent.text.starts_with("GET /json HTTP/1.1\r\n"));
    assert!(!vout.sent.text.contains("TOPSECRET") && vout.sent.text.contains("Cookie: sid="));
    assert_eq!(vout.received.hidden(), 0);
    assert_eq!(vout.received.bytes, out.response);
    let body = String::from_utf8_lossy(&out.response);
    assert!(body.contains("\"amount\":1234.56"), "{body}");
}

/// TLS 1.3 is not MPC mode's yet: a clear error before any connection.
#[tokio::test]
async fn unsupported_options_fail_early() {
    let mut o = mpc_options("127.0.0.1:9", 443, "/", "");
    o.version = Some(TlsVersion::Tls13);
    let e = webproof_net::prove(&o).await.unwrap_err();
    assert!(e.to_string().contains("TLS 1.2"), "{e}");
}

/// A POST with a body in MPC mode: the request's records carry the body
/// through the 2PC, the server echoes it, and the proof reveals both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn post_with_a_body_verifies() {
    let s = fixture().await;
    let ca = s.fixture.certs.ca_pem.clone();
    let (addr, v) = verifier(quick_config(roots(&ca))).await;
    let mut o = mpc_options(&addr, s.fixture.addr.port(), "/echo", &ca);
    o.method = "POST".into();
    o.body = b"amount=12.50&to=acct_7731".to_vec();
    o.reveal = vec!["all".parse().unwrap()];
    let out = webproof_net::prove(&o).await.unwrap();
    let vout = v.await.unwrap().unwrap();
    assert_eq!(vout, out.output);
    assert_eq!(vout.proof, ProofKind::Mpc);
    assert_eq!(vout.sent.bytes, o.request());
    assert!(vout
        .sent
        .bytes
        .ends_with(b"\r\n\r\namount=12.50&to=acct_7731"));
    assert!(
        vout.received.text.contains(r#""method":"POST""#),
        "{}",
        vout.received.text
    );
    assert!(vout
        .received
        .text
        .contains(r#""body":"amount=12.50&to=acct_7731""#));
}
