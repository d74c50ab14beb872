//! `prove ... --next ...`: several requests on one connection through the
//! binary. Command lines that cannot work fail before any network work;
//! a session of three requests, and an attestation presented for one
//! exchange, end to end with the fixture and a one-shot verifier.

mod common;
use common::*;
use std::time::{Duration, Instant};

/// `prove` of `https://example.com/a` through a verifier that nothing
/// listens at, with `extra`: must fail at once with a usage error.
fn refused(extra: &[&str]) -> String {
    let t = Instant::now();
    let mut args = vec![
        "prove",
        "--verifier",
        "127.0.0.1:9",
        "--url",
        "https://example.com/a",
    ];
    args.extend(extra);
    let out = webproof(&args);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{extra:?}: {stderr}");
    assert!(t.elapsed() < Duration::from_secs(5));
    assert!(!stderr.contains("127.0.0.1:9"), "{stderr}");
    stderr
}

#[test]
fn next_command_lines_that_cannot_work_are_refused() {
    let e = refused(&["--next", "--url", "https://other.example/b"]);
    assert!(
        e.contains("request 2 (after --next) goes to https://other.example:443, the first to https://example.com:443"),
        "{e}"
    );
    let e = refused(&["--next", "--url", "https://example.com:8443/b"]);
    assert!(e.contains("https://example.com:8443"), "{e}");
    let e = refused(&[
        "--next",
        "--url",
        "https://example.com/b",
        "--reveal",
        "all",
    ]);
    assert!(
        e.contains("request 2 (after --next)") && e.contains("'--reveal'"),
        "{e}"
    );
    assert!(e.contains("only --url, -X/--method"), "{e}");
    let e = refused(&["--next", "-X", "post", "--url", "https://example.com/b"]);
    assert!(e.contains("not an HTTP method"), "{e}");
    let e = refused(&["--next", "-H", "Accept: x"]);
    assert!(
        e.contains("request 2 (after --next)") && e.contains("--url"),
        "{e}"
    );
    let e = refused(&["--next", "--url", "http://example.com/b"]);
    assert!(e.contains("only https://"), "{e}");
    let e = refused(&["--next", "--url", "https://example.com/b", "-H", "no colon"]);
    assert!(e.contains("expected 'Name: value'"), "{e}");
    let e = refused(&[
        "--reveal",
        "3/body",
        "--next",
        "--url",
        "https://example.com/b",
    ]);
    assert!(
        e.contains("exchange 3 does not exist (the session has 2 requests)"),
        "{e}"
    );
    let e = refused(&["--reveal", "2/sent:0-4"]);
    assert!(e.contains("takes no exchange"), "{e}");
    let mut many = Vec::new();
    for _ in 0..32 {
        many.extend(["--next", "--url", "https://example.com/b"]);
    }
    let e = refused(&many);
    assert!(
        e.contains("33 requests: a session carries at most 32"),
        "{e}"
    );
    // The first request's options stay before the first --next; the
    // verifier's options are not a request's.
    let e = refused(&[
        "--next",
        "--url",
        "https://example.com/b",
        "--verifier",
        "x:1",
    ]);
    assert!(e.contains("'--verifier'"), "{e}");
}

#[test]
fn help_documents_next() {
    let out = webproof(&["prove", "--help"]);
    let help = text(&out.stdout);
    assert!(help.contains("--next"), "{help}");
    assert!(help.contains("2/json:data.id"), "{help}");
}

/// The verifier's one output line, after `prove` ran.
fn verifier(s: &Setup, key: Option<&str>) -> (Running, String) {
    let mut extra = vec!["--once"];
    if let Some(k) = key {
        extra.extend(["--attestation-key", k]);
    }
    let (v, ready) = s.serve(&extra, false);
    let addr = ready["addr"].as_str().unwrap().to_string();
    (v, addr)
}

#[test]
fn three_requests_through_the_binary() {
    let s = Setup::new("next-three");
    let (mut v, vaddr) = verifier(&s, None);
    let (echo, html) = (s.url("/echo"), s.url("/html"));
    let out = s.prove(
        &vaddr,
        "/json",
        &[
            "-H",
            "Cookie: s=CKSECRET",
            "--json",
            "-q",
            "--next",
            "--url",
            &echo,
            "-d",
            "hello",
            "-H",
            "Content-Type: text/plain",
            "--next",
            "--url",
            &html,
            "-X",
            "GET",
        ],
    );
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    let got: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    let ex = got["exchanges"].as_array().unwrap();
    let lines: Vec<_> = ex.iter().map(|e| e["request_line"].as_str()).collect();
    assert_eq!(
        lines,
        [
            Some("GET /json HTTP/1.1"),
            Some("POST /echo HTTP/1.1"),
            Some("GET /html HTTP/1.1")
        ]
    );
    assert!(ex.iter().all(|e| e["status"] == 200), "{got}");
    assert!(!stdout.contains("CKSECRET"));
    // The verifier's own output is the same session.
    let vout = v.next_json();
    assert_eq!(vout["sent"]["len"], got["verified"]["sent"]["len"]);
    let text_out = vout["received"]["text"].as_str().unwrap();
    assert!(
        text_out.contains("\"method\":\"POST\"") && text_out.contains("Hello from the fixture")
    );

    // For people: the exchanges, and which one a proven value came from.
    let (_v, vaddr) = verifier(&s, None);
    let out = s.prove(
        &vaddr,
        "/json",
        &[
            "-q",
            "--reveal",
            "2/json:length",
            "--next",
            "--url",
            &echo,
            "-d",
            "abc",
        ],
    );
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("--- exchanges: 2 requests on one connection ---"),
        "{stdout}"
    );
    assert!(
        stdout.contains("1. (request line hidden) -> 200"),
        "{stdout}"
    );
    assert!(stdout.contains("2. POST /echo HTTP/1.1 -> 200"), "{stdout}");
    assert!(
        stdout.contains("exchange 2: received \"length\" = 3"),
        "{stdout}"
    );
}

#[test]
fn an_attestation_presents_one_exchange() {
    let s = Setup::new("next-attest");
    let key = s.path("v.key");
    assert!(webproof(&["keygen", "-o", &key]).status.success());
    let (_v, vaddr) = verifier(&s, Some(&key));
    let bundle = s.path("b.json");
    let echo = s.url("/echo");
    let out = s.prove(
        &vaddr,
        "/json",
        &[
            "--reveal",
            "none",
            "--attest",
            &bundle,
            "--commit-at",
            "2/json:body",
            "-q",
            "--next",
            "--url",
            &echo,
            "-d",
            "second exchange",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let p = s.path("p.json");
    let out = webproof(&["present", &bundle, "--reveal", "2/json:body", "-o", &p]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let pubkey = std::fs::read_to_string(format!("{key}.pub")).unwrap();
    let out = webproof(&["verify", &p, "--trusted-key", pubkey.trim()]);
    let shown = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        shown.contains("--- exchanges: 2 requests on one connection ---"),
        "{shown}"
    );
    assert!(shown.contains("2. POST /echo HTTP/1.1 -> 200"), "{shown}");
    assert!(shown.contains("second exchange"), "{shown}");
    assert!(!shown.contains("Ada Lovelace"), "{shown}");
    let out = webproof(&["verify", &p, "--trusted-key", pubkey.trim(), "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["exchanges"][1]["status"], 200, "{v}");
}
