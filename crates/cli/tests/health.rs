//! `webproof health` is what the container image's HEALTHCHECK runs: exit
//! 0 on a 2xx answer, 1 on anything else (another status, nothing
//! listening, not HTTP, no answer in time), with a line saying which.
//! Each case answers from a one-shot server on loopback.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::{Command, Output};
use std::thread;
use std::time::{Duration, Instant};

/// A server that answers one connection with `answer` (after reading the
/// request head), or holds it open without answering when `None`. It
/// gives up waiting for the connection after 20 s (the request is then
/// empty), so a command that never connects fails its test instead of
/// hanging it.
fn one_shot(answer: Option<&'static [u8]>) -> (String, thread::JoinHandle<String>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap().to_string();
    l.set_nonblocking(true).unwrap();
    let h = thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut s = loop {
            match l.accept() {
                Ok((s, _)) => break s,
                Err(e)
                    if e.kind() == std::io::ErrorKind::WouldBlock && Instant::now() < deadline =>
                {
                    thread::sleep(Duration::from_millis(10))
                }
                Err(_) => return String::new(),
            }
        };
        s.set_nonblocking(false).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let mut req = Vec::new();
        let mut buf = [0u8; 1024];
        while !req.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = s.read(&mut buf).unwrap_or(0);
            if n == 0 {
                break;
            }
            req.extend_from_slice(&buf[..n]);
        }
        match answer {
            Some(a) => s.write_all(a).unwrap(),
            None => thread::sleep(Duration::from_secs(3)),
        }
        String::from_utf8_lossy(&req).into_owned()
    });
    (addr, h)
}

fn health(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_webproof"))
        .arg("health")
        .args(args)
        .output()
        .expect("the binary runs")
}

#[test]
fn a_2xx_answer_is_healthy() {
    let (addr, h) = one_shot(Some(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{\"ok\":true}",
    ));
    let out = health(&["--url", &format!("http://{addr}/health")]);
    let req = h.join().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("healthy") && stdout.contains("200"),
        "{stdout}"
    );
    assert!(req.starts_with("GET /health HTTP/1.1\r\n"), "{req}");
    assert!(req.contains(&format!("Host: {addr}\r\n")), "{req}");
}

#[test]
fn a_503_is_unhealthy() {
    // What /ready answers while draining.
    let (addr, h) = one_shot(Some(
        b"HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\n\r\n{\"ready\":false,\"reason\":\"draining: shutting down\"}",
    ));
    let out = health(&["--url", &format!("http://{addr}/ready")]);
    h.join().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("unhealthy") && stderr.contains("503") && stderr.contains("draining"),
        "{stderr}"
    );
}

#[test]
fn nothing_listening_is_unhealthy() {
    // A port that was just free: bound, then closed.
    let addr = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let out = health(&["--url", &format!("http://{addr}/health")]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("unhealthy") && stderr.contains("connect"),
        "{stderr}"
    );
}

#[test]
fn no_answer_in_time_is_unhealthy() {
    let (addr, h) = one_shot(None);
    let out = health(&[
        "--url",
        &format!("http://{addr}/health"),
        "--timeout-secs",
        "0.5",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("no answer within"), "{stderr}");
    h.join().unwrap();
}

#[test]
fn not_http_is_unhealthy() {
    let (addr, h) = one_shot(Some(b"SSH-2.0-OpenSSH_9.2\r\n\r\n"));
    let out = health(&["--url", &format!("http://{addr}/health")]);
    h.join().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("not an HTTP answer"), "{stderr}");
}

#[test]
fn https_urls_are_refused_plainly() {
    let out = health(&["--url", "https://127.0.0.1:1/health"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("http:// URL"), "{stderr}");
}
