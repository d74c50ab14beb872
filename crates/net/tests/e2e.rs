//! End-to-end proxy mode over real loopback sockets with the rustls
//! fixture, for what only the tokio runtime has: the verifier's `resolve`
//! pin, a refused TCP connect, the WebSocket listener. The protocol's
//! two-party tests run on the simulated pair (`crates/session/tests`).

mod common;
use common::*;
use tokio::io::AsyncWriteExt;
use webproof_proxy::ProofKind;

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
