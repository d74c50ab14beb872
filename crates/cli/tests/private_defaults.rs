//! Private by default, end to end through the binary: the fixture HTTPS
//! server, a one-shot verifier (`serve --once`) and `prove` / `present` /
//! `verify`. What the verifier got is read from the verifier's own output
//! (its revealed bytes), never from the prover's summary.

mod common;
use common::*;
use std::path::Path;

/// A one-shot verifier trusting the fixture (loopback allowed unless
/// `strict`), signing attestations with `key` if given; its address.
fn verifier(s: &Setup, key: Option<&str>, strict: bool) -> (Running, String) {
    let mut extra = vec!["--once"];
    if let Some(k) = key {
        extra.extend(["--attestation-key", k]);
    }
    let (v, ready) = s.serve(&extra, strict);
    let addr = ready["addr"].as_str().unwrap().to_string();
    (v, addr)
}

/// The bytes the verifier got in one direction: revealed bytes as they
/// are, hidden ones as `None`.
fn revealed(dir: &serde_json::Value) -> Vec<Option<u8>> {
    let bytes = hex_decode(dir["bytes"].as_str().unwrap());
    let mut out = vec![None; bytes.len()];
    for r in dir["revealed"].as_array().unwrap() {
        let (a, b) = (r["start"].as_u64().unwrap(), r["end"].as_u64().unwrap());
        for i in a as usize..b as usize {
            out[i] = Some(bytes[i]);
        }
    }
    out
}

fn hex_decode(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// Whether `needle` appears among the revealed bytes.
fn shows(view: &[Option<u8>], needle: &str) -> bool {
    let n = needle.as_bytes();
    view.windows(n.len())
        .any(|w| w.iter().zip(n).all(|(a, b)| *a == Some(*b)))
}

/// `YYYY-MM-DDTHH:MM:SSZ` right after `after` in `s`.
fn has_date_after(s: &str, after: &str) -> bool {
    s.split(after).skip(1).any(|rest| {
        let d = rest.as_bytes();
        d.len() >= 20
            && d[..20].iter().enumerate().all(|(i, &c)| match i {
                4 | 7 => c == b'-',
                10 => c == b'T',
                13 | 16 => c == b':',
                19 => c == b'Z',
                _ => c.is_ascii_digit(),
            })
    })
}

const SECRETS: [&str; 5] = ["CKSECRET", "AUSECRET", "KYSECRET", "CUSECRET", "QYSECRET"];

#[test]
fn default_prove_hides_the_request_credentials() {
    let s = Setup::new("private-default");
    let (mut v, vaddr) = verifier(&s, None, false);
    let out = s.prove(
        &vaddr,
        "/json?token=QYSECRET&page=2",
        &[
            "-H",
            "Cookie: s=CKSECRET",
            "-H",
            "Authorization: Bearer AUSECRET",
            "-H",
            "X-Api-Key: KYSECRET",
            "-H",
            "X-Custom: CUSECRET",
            "--secret-header",
            "X-Custom",
        ],
    );
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    let got = v.next_json();
    let sent = revealed(&got["sent"]);
    let received = revealed(&got["received"]);
    for secret in SECRETS {
        assert!(!shows(&sent, secret), "{secret} reached the verifier");
        assert!(!got.to_string().contains(secret), "{secret} in {got}");
    }
    // Method, path, host and every header name are revealed, and the
    // whole response.
    assert!(shows(&sent, "GET /json"));
    assert!(shows(&sent, " HTTP/1.1\r\nHost: localhost:"));
    assert!(shows(&sent, "\r\nCookie: "));
    assert!(shows(&sent, "\r\nX-Custom: "));
    assert!(received.iter().all(Option::is_some));
    assert!(shows(&received, "\"owner\":\"Ada Lovelace\""));
    // The summary says what was hidden; the time reads as a date.
    assert!(
        stdout.contains(
            "hidden: query string, Cookie value, Authorization value, X-Api-Key value, \
             X-Custom value"
        ),
        "{stdout}"
    );
    assert!(has_date_after(&stdout, "session time "), "{stdout}");
    assert!(stdout.contains("proof: zero-knowledge proof"), "{stdout}");
}

#[test]
fn revealing_a_credential_needs_consent() {
    let s = Setup::new("reveal-all");
    // Nothing may connect here: the refusal comes before any network work.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    silent.set_nonblocking(true).unwrap();
    let silent_addr = silent.local_addr().unwrap().to_string();
    let prove = |vaddr: &str, extra: &[&str]| {
        let args = [&["-H", "Cookie: s=CKSECRET", "--reveal", "all"], extra].concat();
        s.prove(vaddr, "/json", &args)
    };
    let out = prove(&silent_addr, &["--timeout-secs", "5"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--reveal all"), "{stderr}");
    assert!(stderr.contains("Cookie value"), "{stderr}");
    assert!(stderr.contains("--yes-reveal-secrets"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        silent.accept().is_err(),
        "the prover connected to the verifier"
    );

    // A query string alone is no reason to refuse `all` (`?page=2`): the
    // prover goes on to the network, here a verifier that never answers.
    let page = s.url("/json?page=2");
    let out = webproof(&[
        "prove",
        "--verifier",
        &silent_addr,
        "--url",
        &page,
        "--reveal",
        "all",
        "--timeout-secs",
        "1",
    ]);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));

    let (mut v, vaddr) = verifier(&s, None, false);
    let out = prove(&vaddr, &["--yes-reveal-secrets"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let got = v.next_json();
    assert!(shows(&revealed(&got["sent"]), "Cookie: s=CKSECRET"));
    assert!(
        text(&out.stdout).contains("REVEALED to the verifier: Cookie value"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn present_refuses_to_reveal_more_than_asked() {
    let s = Setup::new("present");
    let key = s.path("v.key");
    assert!(webproof(&["keygen", "-o", &key]).status.success());
    let field = "json:account.balance.amount";
    let attest = |bundle: &str, extra: &[&str]| {
        let (mut v, vaddr) = verifier(&s, Some(&key), false);
        let args = [&["-H", "Cookie: s=CKSECRET", "--attest", bundle], extra].concat();
        let out = s.prove(&vaddr, "/json", &args);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let got = v.next_json();
        assert!(!shows(&revealed(&got["sent"]), "CKSECRET"), "{got}");
    };
    let wide = s.path("wide.json");
    attest(&wide, &[]);
    let p = s.path("p.json");
    let out = webproof(&["present", &wide, "--reveal", field, "-o", &p]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(&format!("asked for {field} (")), "{stderr}");
    assert!(
        stderr.contains("the attestation's leaves would reveal "),
        "{stderr}"
    );
    assert!(stderr.contains(&format!("--commit-at {field}")), "{stderr}");
    assert!(!Path::new(&p).exists());
    let out = webproof(&[
        "present",
        &wide,
        "--reveal",
        field,
        "-o",
        &p,
        "--allow-wider-reveal",
    ]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // Each revealed range is said once.
    let lines: Vec<&str> = stdout.lines().filter(|l| l.contains("reveals")).collect();
    let mut unique = lines.clone();
    unique.dedup();
    assert_eq!(lines, unique, "{stdout}");
    assert!(has_date_after(&stdout, " at "), "{stdout}");

    // Revealing everything would give away the cookie: refused, unless
    // consented to.
    let out = webproof(&["present", &wide, "--reveal", "all", "-o", &p]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("Cookie value"), "{stderr}");
    let out = webproof(&[
        "present",
        &wide,
        "--reveal",
        "all",
        "-o",
        &p,
        "--yes-reveal-secrets",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));

    // With --commit-at the presentation reveals only what was asked.
    let exact = s.path("exact.json");
    attest(&exact, &["--commit-at", field]);
    let out = webproof(&["present", &exact, "--reveal", field, "-o", &p]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let pubkey = std::fs::read_to_string(format!("{key}.pub")).unwrap();
    let out = webproof(&["verify", &p, "--trusted-key", pubkey.trim(), "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let checked = text(&out.stdout);
    assert!(checked.contains("1234.56"), "{checked}");
    for hidden in ["Ada Lovelace", "acct_7731", "CKSECRET", "salary"] {
        assert!(!checked.contains(hidden), "{hidden}: {checked}");
    }
    let out = webproof(&["verify", &p, "--trusted-key", pubkey.trim()]);
    assert!(
        has_date_after(&text(&out.stdout), "time           "),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn failures_are_classified() {
    let s = Setup::new("failures");
    let run = |vaddr: &str, extra: &[&str]| {
        let out = s.prove(vaddr, "/json", &[&["--json"], extra].concat());
        let stdout = text(&out.stdout);
        let lines: Vec<&str> = stdout.lines().collect();
        assert_eq!(lines.len(), 1, "one JSON object: {stdout}");
        let v: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
        (out.status.code(), v["error"].clone())
    };
    // Usage: a typo, refused before any network work.
    let (code, e) = run("127.0.0.1:9", &["--reveal", "jsn:x"]);
    assert_eq!((code, e["kind"].as_str()), (Some(2), Some("usage")), "{e}");
    assert_eq!(e["decided_by"], "usage");
    assert_eq!(e["request_reached_server"], false);
    // Network: nothing listens at the verifier's address.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().to_string()
    };
    let (code, e) = run(&closed, &[]);
    assert_eq!(
        (code, e["decided_by"].as_str()),
        (Some(4), Some("network")),
        "{e}"
    );
    assert!(e["detail"].as_str().unwrap().contains(&closed), "{e}");
    // The verifier refuses: its policy forbids loopback servers.
    let (_v, vaddr) = verifier(&s, None, true);
    let (code, e) = run(&vaddr, &[]);
    assert_eq!(
        (code, e["decided_by"].as_str()),
        (Some(3), Some("verifier")),
        "{e}"
    );
    assert_eq!(e["request_reached_server"], false, "{e}");
    assert!(!e["kind"].as_str().unwrap().is_empty());
    // In words: once, no Rust debug text.
    let out = s.prove(&closed, "/json", &[]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(4));
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let detail = stderr.trim_start_matches("error: ");
    let first = detail.split(": ").last().unwrap();
    assert_eq!(detail.matches(first).count(), 1, "{stderr}");
}
