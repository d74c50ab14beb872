//! `webproof serve --results-db / --results-api-keys / --results-retention`:
//! stored results without a config file. A prover's session is stored
//! under the id it was given and served at `/v1/sessions/{id}` to the
//! results key only; the flags that need a backend refuse to run without
//! one.

mod common;
use common::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// `GET path` on `addr` with an optional bearer key: the status and body.
fn get(addr: &str, path: &str, key: Option<&str>) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let auth = key
        .map(|k| format!("Authorization: Bearer {k}\r\n"))
        .unwrap_or_default();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\n{auth}Connection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    let status = raw
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP answer: {raw:?}"));
    let body = raw.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or("");
    (status, body.to_string())
}

#[test]
fn results_flags_store_and_serve_a_session() {
    let s = Setup::new("results-flags");
    std::fs::write(s.path("app-keys"), "app-key-1\n").unwrap();
    let db = s.path("results.sqlite");
    let keys = s.path("app-keys");
    let (_serve, ready) = s.serve(
        &[
            "--listen-http",
            "127.0.0.1:0",
            "--results-db",
            &db,
            "--results-api-keys",
            &keys,
            "--results-retention",
            "1d",
        ],
        false,
    );
    let tcp = ready["tcp_addr"].as_str().unwrap().to_string();
    let http = ready["http_addr"].as_str().unwrap().to_string();
    let out = s.prove(&tcp, "/", &["--json", "--quiet"]);
    assert!(out.status.success(), "prove: {}", text(&out.stderr));
    let proved: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let id = proved["session_id"]
        .as_str()
        .expect("a session id with stored results")
        .to_string();
    assert!(std::path::Path::new(&db).exists(), "the SQLite file");

    let path = format!("/v1/sessions/{id}");
    let (status, body) = get(&http, &path, Some("app-key-1"));
    assert_eq!(status, 200, "{body}");
    let stored: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(stored["session_id"], id.as_str(), "{body}");
    assert_eq!(stored["server_name"], "localhost", "{body}");
    assert_eq!(get(&http, &path, None).0, 401, "no key");
    assert_eq!(get(&http, &path, Some("other")).0, 401, "another key");
}

#[test]
fn results_options_without_a_backend_are_refused() {
    for flags in [
        &["--results-retention", "1d"][..],
        &["--results-api-keys", "keys.txt"],
    ] {
        let mut args = vec!["serve", "--listen", "127.0.0.1:0"];
        args.extend(flags);
        let out = webproof(&args);
        assert!(!out.status.success(), "{flags:?} ran");
        let err = text(&out.stderr);
        assert!(err.contains("--results-db FILE"), "{flags:?}: {err}");
    }
    let out = webproof(&[
        "serve",
        "--results-db",
        "r.sqlite",
        "--results-database-url-env",
        "WEBPROOF_DATABASE_URL",
    ]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("cannot be used with"),
        "{}",
        text(&out.stderr)
    );
}
