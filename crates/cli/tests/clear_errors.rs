//! Errors that say what happened, end to end through the binary with the
//! fixture HTTPS server and real verifiers: a request over the verifier's
//! limit, a verifier that never answers, the service's HTTP port given as
//! its TCP address, a reveal item the response cannot satisfy; and
//! `present --secret-header`.

mod common;
use common::*;
use std::time::{Duration, Instant};

/// `prove --json` of `path` through `verifier`: the exit code and the
/// error object.
fn prove_fails(
    s: &Setup,
    verifier: &str,
    path: &str,
    extra: &[&str],
) -> (Option<i32>, serde_json::Value) {
    let out = s.prove(verifier, path, &[&["--json"], extra].concat());
    let stdout = text(&out.stdout);
    let v: serde_json::Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("{e}: {stdout:?} {}", text(&out.stderr)));
    assert!(v["error"].is_object(), "{v}");
    (out.status.code(), v["error"].clone())
}

#[test]
fn a_request_over_the_verifiers_limit_fails_at_once_naming_it() {
    let s = Setup::new("limit");
    let (_v, ready) = s.serve(&["--max-sent-bytes", "4096"], false);
    let t0 = Instant::now();
    let (code, e) = prove_fails(
        &s,
        ready["addr"].as_str().unwrap(),
        "/json",
        &["--padding", "8000"],
    );
    // Not the relay's idle timeout (15 s), and the limit by name.
    assert!(
        t0.elapsed() < Duration::from_secs(10),
        "took {:?}: {e}",
        t0.elapsed()
    );
    let detail = e["detail"].as_str().unwrap();
    assert!(
        detail.contains("max_sent_bytes") && detail.contains("4096"),
        "{e}"
    );
    assert!(!detail.contains("idle"), "{e}");
    assert_eq!(
        (code, e["decided_by"].as_str()),
        (Some(3), Some("verifier")),
        "{e}"
    );
}

#[test]
fn a_verifier_that_never_answers_times_out_in_words() {
    let s = Setup::new("silent");
    // Accepts connections and never answers.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for c in listener.incoming().flatten() {
            held.push(c);
        }
    });
    let (code, e) = prove_fails(&s, &addr, "/json", &["--timeout-secs", "2"]);
    let detail = e["detail"].as_str().unwrap();
    assert!(
        detail.contains(&addr) && detail.contains("did not answer"),
        "{e}"
    );
    assert!(!detail.contains("--expect-response"), "{e}");
    assert_eq!(e["kind"], "timeout", "{e}");
    assert_eq!(e["request_reached_server"], false, "{e}");
    assert_eq!(code, Some(4), "{e}");
}

#[test]
fn the_services_http_port_as_verifier_address_is_named() {
    let s = Setup::new("httpport");
    let (_v, ready) = s.serve(&["--listen-http", "127.0.0.1:0"], false);
    let http = ready["http_addr"].as_str().unwrap();
    let (code, e) = prove_fails(&s, http, "/json", &[]);
    let detail = e["detail"].as_str().unwrap();
    assert!(detail.contains("this is an HTTP port; use ws://"), "{e}");
    assert!(!detail.contains("-byte frame"), "{e}");
    assert_eq!(code, Some(2), "{e}");
}

#[test]
fn a_plan_error_says_the_request_reached_the_server() {
    let s = Setup::new("plan");
    let (_v, ready) = s.serve(&[], false);
    for mode in ["proxy", "mpc"] {
        let (code, e) = prove_fails(
            &s,
            ready["addr"].as_str().unwrap(),
            "/json",
            &["--mode", mode, "--reveal", "json:no.such.field"],
        );
        let detail = e["detail"].as_str().unwrap();
        assert!(
            detail.contains("the request reached the server"),
            "{mode}: {e}"
        );
        assert!(
            detail.contains("the path's key is not in its object"),
            "{mode}: {e}"
        );
        assert_eq!(e["request_reached_server"], true, "{mode}: {e}");
        assert_eq!(code, Some(6), "{mode}: {e}");
    }
}

#[test]
fn present_takes_secret_headers() {
    let s = Setup::new("present-secret");
    let key = s.path("v.key");
    assert!(webproof(&["keygen", "--scheme", "ed25519", "-o", &key])
        .status
        .success());
    let (_v, ready) = s.serve(&["--once", "--attestation-key", &key], false);
    let (url, ca, bundle) = (s.url("/json"), s.ca(), s.path("b.json"));
    // Named a secret when proving: the verifier never saw it, and it has
    // leaves of its own in the attestation.
    let out = webproof(&[
        "prove",
        "--verifier",
        ready["addr"].as_str().unwrap(),
        "--url",
        &url,
        "--ca-cert",
        &ca,
        "-H",
        "X-Custom: CUSTOMSECRET",
        "--secret-header",
        "X-Custom",
        "--attest",
        &bundle,
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let public = std::fs::read_to_string(format!("{key}.pub")).unwrap();
    let shows_secret = |extra: &[&str]| {
        let p = s.path("p.json");
        let mut args = vec!["present", &bundle, "--reveal", "all", "-o", &p];
        args.extend(extra);
        let out = webproof(&args);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let out = webproof(&["verify", &p, "--trusted-key", public.trim(), "--json"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let sent: String = v["sent"]["segments"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|s| s["text"].as_str())
            .collect();
        assert!(sent.contains("X-Custom: "), "{sent}");
        sent.contains("CUSTOMSECRET")
    };
    // Not a built-in secret name: `all` reveals it unless it is named.
    assert!(shows_secret(&[]));
    assert!(!shows_secret(&["--secret-header", "X-Custom"]));
}
