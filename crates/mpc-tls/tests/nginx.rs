//! Interop with a server no one here wrote: Debian's nginx over a real
//! loopback TCP socket, every suite and both groups, driven by a minimal
//! blocking loop. Skipped with a message when no nginx binary is
//! installed (`apt-get install nginx-light`).

mod common;
use common::*;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use webproof_mpc_tls::hello::*;
use webproof_mpc_tls::{ProverMsg, ProverSession, VerifierSession};
use webproof_tls::{CipherSuite, KxGroup};

const NGINX: &str = "/usr/sbin/nginx";
const BODY: &str = "hello from nginx, in MPC mode\n";

struct Nginx {
    child: Child,
    port: u16,
    _dir: std::path::PathBuf,
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self._dir);
    }
}

/// nginx on a free loopback port with both certificates, the groups
/// `curves` (OpenSSL's list) and, with `prefer_server`, its own order of
/// suites and groups instead of the client's.
fn start_nginx(ecdsa: &Certs, rsa: &Certs, curves: &str, prefer_server: bool) -> Nginx {
    let dir = std::env::temp_dir().join(format!(
        "mpc-tls-nginx-{}-{prefer_server}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let w = |n: &str, s: &str| std::fs::write(dir.join(n), s).unwrap();
    w("ec.pem", &(ecdsa.leaf_pem.clone() + &ecdsa.ca_pem));
    w("ec.key", &ecdsa.key_pem);
    w("rsa.pem", &(rsa.leaf_pem.clone() + &rsa.ca_pem));
    w("rsa.key", &rsa.key_pem);
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let d = dir.display();
    let prefer = if prefer_server { "on" } else { "off" };
    let conf = format!(
        "daemon off; master_process off; worker_processes 1; pid {d}/nginx.pid;
error_log {d}/error.log;
events {{ worker_connections 16; }}
http {{
  access_log off;
  client_body_temp_path {d}/body; proxy_temp_path {d}/proxy; fastcgi_temp_path {d}/fcgi;
  uwsgi_temp_path {d}/uwsgi; scgi_temp_path {d}/scgi;
  server {{
    listen 127.0.0.1:{port} ssl;
    server_name {NAME};
    ssl_certificate {d}/ec.pem; ssl_certificate_key {d}/ec.key;
    ssl_certificate {d}/rsa.pem; ssl_certificate_key {d}/rsa.key;
    ssl_protocols TLSv1.2;
    ssl_ciphers ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384;
    ssl_ecdh_curve {curves};
    ssl_session_tickets off;
    ssl_prefer_server_ciphers {prefer};
    location / {{ default_type text/plain; return 200 \"{}\"; }}
  }}
}}
",
        BODY.replace('\n', "\\n")
    );
    w("nginx.conf", &conf);
    let child = Command::new(NGINX)
        .args(["-e", &format!("{d}/error.log"), "-p", &d.to_string(), "-c"])
        .arg(dir.join("nginx.conf"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "nginx did not start: {}",
            std::fs::read_to_string(dir.join("error.log")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    Nginx {
        child,
        port,
        _dir: dir,
    }
}

/// One session over TCP: the verifier in memory, the prover's server
/// side on the socket.
fn session(
    port: u16,
    ca: &[u8],
    suite: CipherSuite,
    group: KxGroup,
    ems: bool,
    seed: u64,
) -> (Vec<u8>, KxGroup) {
    let request = format!("GET / HTTP/1.1\r\nHost: {NAME}\r\nConnection: close\r\n\r\n");
    let mut cfg = prover_config(NAME, suite, group, ems, request.as_bytes());
    // OpenSSL serves an ECDSA P-256 certificate only to clients that list
    // P-256 among their groups (RFC 4492); the first listed one is used.
    cfg.groups = match group {
        GROUP_X25519 => vec![GROUP_X25519, GROUP_P256],
        _ => vec![GROUP_P256, GROUP_X25519],
    };
    let (mut p, hello, mut v): (ProverSession, ProverMsg, VerifierSession) =
        sessions(seed, cfg, verifier_config(ca, NAME));
    let mut sock = TcpStream::connect(("127.0.0.1", port)).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut to_v = vec![hello];
    let mut eof = false;
    loop {
        while let Some(m) = p.next_upload().unwrap() {
            to_v.push(m);
        }
        while !to_v.is_empty() {
            let mut to_server = Vec::new();
            for m in std::mem::take(&mut to_v) {
                for r in answer(&mut v, m).unwrap() {
                    let out = p.on_verifier_bytes(&r.encode()).unwrap();
                    to_v.extend(out.to_verifier);
                    to_server.extend(out.to_server);
                }
            }
            sock.write_all(&to_server).unwrap();
        }
        if let Some(o) = p.outcome() {
            let response = o.response.clone();
            let out = v.finish().unwrap();
            assert_eq!(out.suite, suite);
            assert_eq!(out.ems, ems);
            return (response, out.group);
        }
        if p.records_done() && (p.server_done() || eof) {
            to_v.push(p.close().unwrap());
            continue;
        }
        assert!(!eof, "the server closed before the session ended");
        let mut buf = vec![0u8; 16 << 10];
        let n = sock.read(&mut buf).unwrap();
        let out = if n == 0 {
            eof = true;
            p.on_server_closed().unwrap()
        } else {
            p.on_server_bytes(&buf[..n]).unwrap()
        };
        to_v.extend(out.to_verifier);
        sock.write_all(&out.to_server).unwrap();
    }
}

#[test]
fn nginx_every_suite_and_group() {
    if !std::path::Path::new(NGINX).exists() {
        eprintln!("SKIPPED: no {NGINX} (apt-get install nginx-light) for the interop test");
        return;
    }
    let ec = certs(KeyKind::Ecdsa, &[NAME], false);
    // One CA for both leaves would be tidier; two roots work as well.
    let rsa = certs(KeyKind::Rsa, &[NAME], false);
    let server = start_nginx(&ec, &rsa, "X25519:prime256v1", false);
    let mut seed = 100;
    for (suite, ca) in [
        (ECDHE_ECDSA_AES128_GCM_SHA256, &ec.ca_der),
        (ECDHE_RSA_AES128_GCM_SHA256, &rsa.ca_der),
        (ECDHE_ECDSA_AES256_GCM_SHA384, &ec.ca_der),
        (ECDHE_RSA_AES256_GCM_SHA384, &rsa.ca_der),
    ] {
        for group in [GROUP_X25519, GROUP_P256] {
            seed += 1;
            let ems = seed % 2 == 0;
            let t = Instant::now();
            let (resp, negotiated) = session(server.port, ca, suite, group, ems, seed);
            assert_eq!(negotiated, group);
            let text = String::from_utf8_lossy(&resp);
            assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text}");
            assert!(text.ends_with(BODY), "{text}");
            eprintln!(
                "nginx {suite} {group:?} ems={ems}: {} bytes of response, {:.2} s",
                resp.len(),
                t.elapsed().as_secs_f64()
            );
        }
    }
}

/// A server that picks its own first group, not the client's: nginx with
/// `ssl_prefer_server_ciphers on` and P-256 first, a prover that offers
/// X25519 first. The key derivation serves either group, so the session
/// runs on P-256.
#[test]
fn nginx_preferring_another_group() {
    if !std::path::Path::new(NGINX).exists() {
        eprintln!("SKIPPED: no {NGINX} (apt-get install nginx-light) for the interop test");
        return;
    }
    let ec = certs(KeyKind::Ecdsa, &[NAME], false);
    let rsa = certs(KeyKind::Rsa, &[NAME], false);
    let server = start_nginx(&ec, &rsa, "prime256v1:X25519", true);
    let (resp, negotiated) = session(
        server.port,
        &ec.ca_der,
        ECDHE_ECDSA_AES128_GCM_SHA256,
        GROUP_X25519,
        true,
        200,
    );
    assert_eq!(negotiated, GROUP_P256);
    let text = String::from_utf8_lossy(&resp);
    assert!(text.ends_with(BODY), "{text}");
}
