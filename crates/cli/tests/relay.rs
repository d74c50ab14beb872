//! `webproof relay` as a user runs it: it says where it listens, refuses a
//! bad allow-list as a usage error, and stops on SIGTERM.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_webproof");

#[test]
fn a_bad_target_is_a_usage_error() {
    let out = Command::new(BIN)
        .args(["relay", "--listen", "127.0.0.1:0", "--allow", "example.com"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("expected HOST:PORT"), "{err}");
    // A pinned name needs an IP address.
    let out = Command::new(BIN)
        .args([
            "relay",
            "--listen",
            "127.0.0.1:0",
            "--allow",
            "server.test:443",
            "--resolve",
            "server.test=not-an-ip",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("is not an IP address"), "{err}");
    // No target at all: clap's usage error.
    let out = Command::new(BIN)
        .args(["relay", "--listen", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[cfg(unix)]
#[test]
fn it_prints_where_it_listens_and_stops_on_sigterm() {
    let mut child = Command::new(BIN)
        .args([
            "relay",
            "--listen",
            "127.0.0.1:0",
            "--metrics-listen",
            "127.0.0.1:0",
            "--allow",
            "api.example.com:443",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(v["event"], "listening");
    assert_eq!(v["path"], "/tcp");
    let addr: std::net::SocketAddr = v["addr"].as_str().unwrap().parse().unwrap();
    assert_ne!(addr.port(), 0);
    assert!(v["metrics_addr"].as_str().is_some());
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    assert!(child.wait().unwrap().success());
}
