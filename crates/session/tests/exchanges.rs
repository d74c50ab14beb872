//! Requests beyond one GET on the simulated runtime: several HTTP/1.1
//! requests on one TLS connection (proxy mode sends each after the last
//! response, MPC mode pipelines them all), and requests with a method and
//! a body. The verifier's exchanges are split from its own record.
//!
//! These ran over loopback sockets against the HTTPS fixture in
//! `webproof-net`'s tests (`multi.rs`, `e2e.rs`, `mpc.rs`).

mod common;

use common::*;
use webproof_disclosure::exchange::exchange_of;
use webproof_disclosure::http::{parse_items, HttpRequest};
use webproof_proxy::{Direction, ProofKind, TlsVersion};
use webproof_session::Mode;

/// `requests` as the prover sends them on one connection.
fn encode(requests: &[HttpRequest]) -> Vec<u8> {
    HttpRequest::encode_all(requests, HOST, 443, 0)
}

fn header(k: &str, v: &str) -> (String, String) {
    (k.into(), v.into())
}

/// GET, POST with a body, GET on one connection, in proxy mode with both
/// TLS versions; reveal items per exchange; each value attributed to the
/// exchange it came from; the credentials of every request hidden.
#[test]
fn three_requests_on_one_connection() {
    for (i, version) in [TlsVersion::Tls13, TlsVersion::Tls12]
        .into_iter()
        .enumerate()
    {
        let mut pair = Pair::new(500 + i as u64);
        pair.tls.version = Some(version);
        pair.request = encode(&[
            HttpRequest {
                headers: vec![header("Cookie", "session=secret-1")],
                ..HttpRequest::get("/account")
            },
            HttpRequest {
                method: "POST".into(),
                path: "/echo".into(),
                headers: vec![header("Content-Type", "text/plain")],
                body: b"hello twice".to_vec(),
            },
            HttpRequest {
                headers: vec![header("Cookie", "session=secret-3")],
                ..HttpRequest::get("/html")
            },
        ]);
        pair.reveal = parse_items(&[
            "1/json:account.balance",
            "2/json:body",
            "3/header:content-type",
        ])
        .unwrap();
        let (p, v) = pair.run(Mode::Proxy);
        let out = p.unwrap_or_else(|e| panic!("{version:?}: {e}"));
        let vout = v.unwrap().output;
        assert_eq!(vout, out.output);
        let e = vout.exchanges();
        assert_eq!(e.len(), 3, "{e:?}");
        let lines: Vec<_> = e.iter().map(|e| e.request_line.as_deref()).collect();
        assert_eq!(
            lines,
            [
                Some("GET /account HTTP/1.1"),
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
        assert_eq!((at(0), vout.json[0].value_text.as_str()), (Some(0), "1234"));
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
        assert!(!r.contains("Ada"), "{r}");
        assert!(r.contains("text/html"), "{r}");
        assert!(!r.contains("A page of the pair's server"), "{r}");
    }
}

/// MPC mode pipelines: every request in one flight, the responses read
/// until the server closes after the last. With the request heads revealed
/// but a cookie, whose bytes the proof shows free of line ends, the
/// verifier splits the one run of requests by their framing and pairs
/// each response with its request; over TLS 1.2 and TLS 1.3 alike.
#[test]
fn mpc_mode_pipelines_the_requests() {
    for (i, version) in [TlsVersion::Tls12, TlsVersion::Tls13]
        .into_iter()
        .enumerate()
    {
        mpc_pipelined(510 + 5 * i as u64, version);
    }
}

fn mpc_pipelined(seed: u64, version: TlsVersion) {
    let mut pair = Pair::new(seed);
    pair.tls.version = Some(version);
    pair.request = encode(&[
        HttpRequest {
            headers: vec![header("Cookie", "session=secret-1")],
            ..HttpRequest::get("/account")
        },
        HttpRequest {
            method: "POST".into(),
            path: "/echo".into(),
            headers: Vec::new(),
            body: b"piped".to_vec(),
        },
        HttpRequest::get("/html"),
    ]);
    pair.reveal = parse_items(&["http"]).unwrap();
    let (p, v) = pair.run(Mode::Mpc);
    let out = p.unwrap_or_else(|e| panic!("{version:?}: {e}"));
    let vout = v.unwrap().output;
    assert_eq!(vout, out.output);
    assert_eq!(vout.tls_version, version);
    let seen: Vec<_> = vout
        .exchanges()
        .iter()
        .map(|e| (e.request_line.clone(), e.status))
        .collect();
    let line = |s: &str| Some(s.to_string());
    assert_eq!(
        seen,
        [
            (line("GET /account HTTP/1.1"), Some(200)),
            (line("POST /echo HTTP/1.1"), Some(200)),
            (line("GET /html HTTP/1.1"), Some(200))
        ]
    );
    assert!(vout.received.text.contains("\"body\":\"piped\""));
    assert!(vout.received.text.ends_with("</html>\n"));
    assert!(!vout.sent.text.contains("secret-1"));
    // The cookie's value is what the proof showed free of line ends: the
    // pairing past request 1 rests on it.
    let at = pair
        .request
        .windows(16)
        .position(|w| w == b"session=secret-1")
        .expect("the cookie");
    assert!(
        vout.sent_crlf_free
            .iter()
            .any(|r| r.start <= at + 8 && at + 16 <= r.end),
        "{version:?}: {:?}",
        vout.sent_crlf_free
    );
    let mut unproven = vout.clone();
    unproven.sent_crlf_free.clear();
    // (Without it the run of requests is not even split.)
    assert!(
        unproven
            .exchanges()
            .get(1)
            .is_none_or(|e| e.response.is_none()),
        "{version:?}: paired without the proof"
    );
}

/// Any HTTP/1.1 request, not only GET, in both modes: a POST with a body
/// and a PUT with none reach the server's `/echo`, which answers with the
/// method and the body it got; the verifier's output holds the request as
/// sent (method, `Content-Length`, body) and the echo.
#[test]
fn requests_with_a_method_and_a_body_verify() {
    for (i, (mode, method, body)) in [
        (
            Mode::Proxy,
            "POST",
            &br#"{"query":"{ viewer { login } }"}"#[..],
        ),
        (Mode::Proxy, "PUT", &b""[..]),
        (Mode::Mpc, "POST", &b"amount=12.50&to=acct_7731"[..]),
    ]
    .into_iter()
    .enumerate()
    {
        let mut pair = Pair::new(520 + i as u64);
        pair.request = encode(&[HttpRequest {
            method: method.into(),
            path: "/echo".into(),
            headers: vec![header("Content-Type", "application/json")],
            body: body.to_vec(),
        }]);
        let (p, v) = pair.run(mode);
        let out = p.unwrap_or_else(|e| panic!("{mode:?} {method}: {e}"));
        let vout = v.unwrap().output;
        assert_eq!(vout, out.output);
        let proof = if mode == Mode::Mpc {
            ProofKind::Mpc
        } else {
            ProofKind::Zk
        };
        assert_eq!(vout.proof, proof);
        assert_eq!(vout.sent.bytes, pair.request);
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
        let at = out
            .response
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .unwrap();
        let echo: serde_json::Value = serde_json::from_slice(&out.response[at + 4..]).unwrap();
        assert_eq!(echo["method"], method);
        assert_eq!(echo["length"], body.len());
        assert_eq!(echo["body"], String::from_utf8_lossy(body).as_ref());
        assert!(vout.received.text.starts_with("HTTP/1.1 200 OK\r\n"));
        assert_eq!(vout.received.bytes, out.response);
    }
}
