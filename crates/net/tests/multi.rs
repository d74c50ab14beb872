//! Several HTTP/1.1 requests on one TLS connection in proxy mode, end to
//! end over real sockets: the fixture (keep-alive), a verifier, the prover.

mod common;
use common::*;
use webproof_disclosure::exchange::exchange_of;
use webproof_net::prover::HttpRequest;
use webproof_proxy::Direction;

/// GET, POST with a body, GET on one connection; items per exchange; the
/// verifier's exchanges are split from its own record.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_requests_on_one_connection() {
    let s = fixture().await;
    let ca = s.fixture.certs.ca_pem.clone();
    let port = s.fixture.addr.port();
    for version in [
        webproof_proxy::TlsVersion::Tls13,
        webproof_proxy::TlsVersion::Tls12,
    ] {
        let (addr, v) = verifier(quick_config(roots(&ca))).await;
        let mut o = options(&addr, "localhost", port, "/json", &ca);
        o.version = Some(version);
        o.headers.push(("Cookie".into(), "session=secret-1".into()));
        o.next = vec![
            HttpRequest {
                method: "POST".into(),
                path: "/echo".into(),
                headers: vec![("Content-Type".into(), "text/plain".into())],
                body: b"hello twice".to_vec(),
            },
            HttpRequest {
                headers: vec![("Cookie".into(), "session=secret-3".into())],
                ..HttpRequest::get("/html")
            },
        ];
        o.reveal = [
            "1/json:account.balance.amount",
            "2/json:body",
            "3/header:content-type",
        ]
        .iter()
        .map(|i| i.parse().unwrap())
        .collect();
        let out = webproof_net::prove(&o).await.unwrap();
        let vout = v.await.unwrap().unwrap();
        assert_eq!(vout, out.output);
        let e = vout.exchanges();
        assert_eq!(e.len(), 3, "{e:?}");
        let lines: Vec<_> = e.iter().map(|e| e.request_line.as_deref()).collect();
        assert_eq!(
            lines,
            [
                Some("GET /json HTTP/1.1"),
                Some("POST /echo HTTP/1.1"),
                Some("GET /html HTTP/1.1")
            ]
        );
        assert!(e.iter().all(|e| e.status == Some(200)), "{e:?}");
        // The pairing past request 1 rests on its hidden cookie being
        // proven free of line ends; without that proof nothing after it is
        // paired.
        assert!(!vout.sent_crlf_free.is_empty());
        let mut unproven = vout.clone();
        unproven.sent_crlf_free.clear();
        assert!(unproven.exchanges()[1].response.is_none());
        // Each value is attributed to the exchange it came from.
        assert_eq!(vout.json.len(), 2);
        let at = |k: usize| exchange_of(&e, Direction::Received, vout.json[k].value);
        assert_eq!(
            (at(0), vout.json[0].value_text.as_str()),
            (Some(0), "1234.56")
        );
        assert_eq!(
            (at(1), vout.json[1].value_text.as_str()),
            (Some(1), "\"hello twice\"")
        );
        // Credentials hidden in every request; only the last asks to close.
        let sent = &vout.sent.text;
        assert!(
            !sent.contains("secret-1") && !sent.contains("secret-3"),
            "{sent}"
        );
        assert_eq!(sent.matches("Connection: close").count(), 1, "{sent}");
        // Response 1's body stays hidden beyond the proven value; its
        // framing is revealed so the verifier can find response 2.
        let r = &vout.received.text;
        assert!(!r.contains("Ada Lovelace"), "{r}");
        assert!(r.contains("text/html"), "{r}");
        assert!(!r.contains("Hello from the fixture"), "{r}");
    }
}

/// Too many requests, or an item naming an exchange past the last: refused
/// before any network work (nothing listens at the verifier address).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limits_are_checked_before_the_session() {
    let mut o = options("127.0.0.1:9", "localhost", 443, "/", "");
    o.next = vec![HttpRequest::get("/"); webproof_net::prover::MAX_EXCHANGES];
    let err = webproof_net::prove(&o).await.unwrap_err().to_string();
    assert!(err.contains("at most 32"), "{err}");
    o.next.truncate(1);
    o.reveal = vec!["3/body".parse().unwrap()];
    let err = webproof_net::prove(&o).await.unwrap_err().to_string();
    assert!(err.contains("exchange 3 does not exist"), "{err}");
}

/// MPC mode pipelines: every request in one flight (the prover cannot read
/// a response before the session ends), the responses read until the
/// server closes after the last. With the request heads revealed but a
/// cookie, whose bytes the proof shows free of line ends, the verifier
/// splits the one run of requests by their framing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mpc_mode_pipelines_the_requests() {
    let s = fixture().await;
    let ca = s.fixture.certs.ca_pem.clone();
    let (addr, v) = verifier(quick_config(roots(&ca))).await;
    let mut o = options(&addr, "localhost", s.fixture.addr.port(), "/json", &ca);
    o.mode = webproof_net::Mode::Mpc;
    o.headers.push(("Cookie".into(), "session=secret-1".into()));
    o.next = vec![
        HttpRequest {
            method: "POST".into(),
            path: "/echo".into(),
            headers: Vec::new(),
            body: b"piped".to_vec(),
        },
        HttpRequest::get("/html"),
    ];
    o.reveal = vec!["http".parse().unwrap()];
    let out = webproof_net::prove(&o).await.unwrap();
    let vout = v.await.unwrap().unwrap();
    assert_eq!(vout, out.output);
    let e = vout.exchanges();
    let seen: Vec<_> = e
        .iter()
        .map(|e| (e.request_line.as_deref(), e.status))
        .collect();
    assert_eq!(
        seen,
        [
            (Some("GET /json HTTP/1.1"), Some(200)),
            (Some("POST /echo HTTP/1.1"), Some(200)),
            (Some("GET /html HTTP/1.1"), Some(200))
        ]
    );
    assert!(vout.received.text.contains("\"body\":\"piped\""));
    assert!(vout.received.text.ends_with("</html>\n"));
    assert!(!vout.sent.text.contains("secret-1"));
    assert!(!vout.sent_crlf_free.is_empty());
}
