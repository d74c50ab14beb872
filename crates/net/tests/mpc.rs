//! MPC mode end to end over real loopback sockets: the rustls fixture as
//! the server, the verifier never connecting to it, the prover connecting
//! itself; the verifier's output is checked against the bytes the fixture
//! serves. The rest of MPC mode's two-party tests run on the simulated
//! pair (`crates/session/tests`).

mod common;
use common::*;
use webproof_net::Mode;
use webproof_proxy::TlsVersion;

fn mpc_options(addr: &str, port: u16, path: &str, ca: &str) -> webproof_net::ProveOptions {
    let mut o = options(addr, "localhost", port, path, ca);
    o.mode = Mode::Mpc;
    o
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

/// No chosen suite MPC mode runs for the chosen version (a TLS 1.2 suite
/// for a TLS 1.3 session): a clear error before any connection.
#[tokio::test]
async fn unsupported_options_fail_early() {
    let mut o = mpc_options("127.0.0.1:9", 443, "/", "");
    o.version = Some(TlsVersion::Tls13);
    o.suites = vec![webproof_proxy::CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256];
    let e = webproof_net::prove(&o).await.unwrap_err();
    assert!(e.to_string().contains("TLS 1.3 AES-GCM"), "{e}");
}
