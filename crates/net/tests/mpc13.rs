//! MPC mode over TLS 1.3 end to end over real loopback sockets (tokio):
//! the rustls fixture, a verifier, the prover with `version: Tls13`.

mod common;
use common::*;
use webproof_net::Mode;
use webproof_proxy::{CipherSuite, ProofKind, TlsVersion};

/// Both AES-GCM suites: the verifier's output is the prover's, states
/// TLS 1.3 and the suite, and shows the fixture's bytes but the hidden one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls13_sessions_verify_with_true_bytes() {
    let s = fixture().await;
    let port = s.fixture.addr.port();
    let ca = s.fixture.certs.ca_pem.clone();
    for suite in [
        CipherSuite::TLS13_AES_128_GCM_SHA256,
        CipherSuite::TLS13_AES_256_GCM_SHA384,
    ] {
        let (addr, v) = verifier(quick_config(roots(&ca))).await;
        let mut o = options(&addr, "localhost", port, "/bytes?size=2000", &ca);
        o.mode = Mode::Mpc;
        o.version = Some(TlsVersion::Tls13);
        o.suites = vec![suite];
        o.reveal = vec!["all".parse().unwrap(), "hide-recv:100-101".parse().unwrap()];
        let out = webproof_net::prove(&o)
            .await
            .unwrap_or_else(|e| panic!("{suite}: {e}"));
        let vout = v.await.unwrap().unwrap();
        assert_eq!(vout, out.output);
        assert_eq!(vout.proof, ProofKind::Mpc);
        assert_eq!(vout.tls_version, TlsVersion::Tls13);
        assert_eq!(vout.cipher_suite, suite);
        assert_eq!(vout.received.hidden(), 1);
        let mut expect = out.response.clone();
        expect[100] = 0;
        assert_eq!(vout.received.bytes, expect);
        assert!(vout.received.text.starts_with("HTTP/1.1 200 OK\r\n"));
    }
}
