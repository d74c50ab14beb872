//! End-to-end proxy mode over real loopback sockets with the rustls fixture.

mod common;
use common::*;
use tokio::io::AsyncWriteExt;
use webproof_proxy::{CipherSuite, KxGroup, ProofKind};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_suite_and_group_verifies() {
    let s = fixture().await;
    let port = s.fixture.addr.port();
    let ca = s.fixture.certs.ca_pem.clone();
    let ecdsa_suites = CipherSuite::ALL
        .iter()
        .copied()
        .filter(|c| !c.name().contains("RSA"));
    for suite in ecdsa_suites {
        for group in [KxGroup::X25519, KxGroup::Secp256r1] {
            let (addr, v) = verifier(quick_config(roots(&ca))).await;
            let mut o = options(&addr, "localhost", port, "/bytes?size=2000", &ca);
            o.suites = vec![suite];
            o.groups = vec![group];
            o.padding = 900;
            o.reveal = vec!["all".parse().unwrap(), "hide-recv:100-101".parse().unwrap()];
            let out = webproof_net::prove(&o)
                .await
                .unwrap_or_else(|e| panic!("{suite} {group:?}: {e}"));
            let vout = v.await.unwrap().unwrap();
            assert_eq!(vout, out.output);
            assert_eq!(out.output.cipher_suite, suite);
            assert_eq!(out.output.key_exchange_group, group);
            assert_eq!(out.output.tls_version, suite.version());
            assert_eq!(out.output.proof, ProofKind::Zk);
            assert_eq!(out.output.sent.hidden(), 0);
            assert_eq!(out.output.received.hidden(), 1);
            assert!(out.output.received.text.starts_with("HTTP/1.1 200 OK\r\n"));
            assert_eq!(out.output.received.len, out.response.len());
            assert!(out.output.sent.len > 900);
            assert!(out.stats.uploaded_online > 900 && out.stats.downloaded_online > 2000);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_reveal_hides_cookie_and_json_fields() {
    let s = fixture().await;
    let ca = s.fixture.certs.ca_pem.clone();
    let (addr, v) = verifier(quick_config(roots(&ca))).await;
    let mut o = options(&addr, "webproof.test", s.fixture.addr.port(), "/json", &ca);
    // The verifier connects webproof.test to the fixture.
    drop(v);
    let mut cfg = quick_config(roots(&ca));
    cfg.resolve
        .insert("webproof.test".into(), "127.0.0.1".parse().unwrap());
    let (addr, v) = verifier(cfg).await;
    o.verifier = addr.clone();
    o.headers.push(("Cookie".into(), "sid=TOPSECRET".into()));
    o.reveal = vec!["json:account.balance.amount".parse().unwrap()];
    let out = webproof_net::prove(&o).await.unwrap();
    let verified = v.await.unwrap().unwrap();
    // The path itself is proven: the verifier's own output says so.
    assert_eq!(verified.json.len(), 1, "{:?}", verified.json);
    assert_eq!(verified.json[0].path, "account.balance.amount");
    assert_eq!(verified.json[0].value_text, "1234.56");
    assert_eq!(out.output.json, verified.json);
    let sent = &out.output.sent.text;
    assert!(sent.starts_with("GET /json HTTP/1.1\r\n"));
    assert!(!sent.contains("TOPSECRET") && sent.contains("Cookie: "));
    let recv = &out.output.received.text;
    assert!(recv.contains("\"amount\":1234.56"));
    assert!(!recv.contains("Lovelace"));
    assert_eq!(out.output.server_name, "webproof.test");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreachable_server_is_refused() {
    let ca = fixture().await.fixture.certs.ca_pem.clone();
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let (addr, v) = verifier(quick_config(roots(&ca))).await;
    let err = webproof_net::prove(&options(&addr, "localhost", port, "/", &ca))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("refused"), "{err}");
    assert!(v.await.unwrap().is_err());
}

/// `Verifier::serve_one_ws` (`webproof serve --once --listen-http`): a
/// request for another path is refused and does not use up the one
/// session; a prover over WebSocket at /v1/session is then served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_websocket_session_after_a_refused_request() {
    use tokio::io::AsyncReadExt;
    let s = fixture().await;
    let ca = s.fixture.certs.ca_pem.clone();
    let v = webproof_net::Verifier::bind("127.0.0.1:0", quick_config(roots(&ca)))
        .await
        .unwrap();
    let addr = v.local_addr().unwrap().to_string();
    let served = tokio::spawn(v.serve_one_ws());

    let mut c = tokio::net::TcpStream::connect(&addr).await.unwrap();
    c.write_all(
        b"GET /health HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
          Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
    )
    .await
    .unwrap();
    let mut answer = Vec::new();
    c.read_to_end(&mut answer).await.unwrap();
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 404"), "{answer}");
    assert!(!served.is_finished());

    let mut o = options(
        &format!("ws://{addr}/v1/session"),
        "localhost",
        s.fixture.addr.port(),
        "/bytes?size=1000",
        &ca,
    );
    o.reveal = vec!["all".parse().unwrap(), "hide-recv:100-101".parse().unwrap()];
    let out = webproof_net::prove(&o).await.unwrap();
    let verified = served.await.unwrap().unwrap();
    assert_eq!(verified, out.output);
    assert_eq!(verified.proof, ProofKind::Zk);
}

/// Any HTTP/1.1 request, not only GET: a POST with a JSON body and a PUT
/// with none reach the fixture's `/echo`, which answers with the method
/// and the body it got; the verifier's output holds the request as sent
/// (method, `Content-Length`, body) and the echo.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn post_and_put_requests_verify() {
    let s = fixture().await;
    let port = s.fixture.addr.port();
    let ca = s.fixture.certs.ca_pem.clone();
    for (method, body) in [
        ("POST", &br#"{"query":"{ viewer { login } }"}"#[..]),
        ("PUT", &b""[..]),
    ] {
        let (addr, v) = verifier(quick_config(roots(&ca))).await;
        let mut o = options(&addr, "localhost", port, "/echo", &ca);
        o.method = method.into();
        o.body = body.to_vec();
        o.headers
            .push(("Content-Type".into(), "application/json".into()));
        o.reveal = vec!["all".parse().unwrap()];
        let out = webproof_net::prove(&o)
            .await
            .unwrap_or_else(|e| panic!("{method}: {e}"));
        let vout = v.await.unwrap().unwrap();
        assert_eq!(vout, out.output);
        let sent = String::from_utf8_lossy(&vout.sent.bytes).into_owned();
        assert!(
            sent.starts_with(&format!("{method} /echo HTTP/1.1\r\n")),
            "{sent}"
        );
        assert!(
            sent.contains(&format!("Content-Length: {}\r\n", body.len())),
            "{sent}"
        );
        assert!(vout.sent.bytes.ends_with(body));
        let echo: serde_json::Value = serde_json::from_slice(
            &out.response[out
                .response
                .windows(4)
                .position(|w| w == b"\r\n\r\n")
                .unwrap()
                + 4..],
        )
        .unwrap();
        assert_eq!(echo["method"], method);
        assert_eq!(echo["length"], body.len());
        assert_eq!(echo["body"], String::from_utf8_lossy(body).as_ref());
        assert!(vout.received.text.starts_with("HTTP/1.1 200 OK\r\n"));
    }
}
