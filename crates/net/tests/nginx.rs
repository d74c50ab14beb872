//! Interop with a server no one here wrote: Debian's nginx, started by the
//! test on a loopback port with certificates made by the openssl CLI, in a
//! TLS 1.3-only and a TLS 1.2-only configuration, every supported suite;
//! MPC mode without flags against servers of one version, one suite or
//! one group, and of both versions. Skipped, loudly, when nginx or openssl
//! is not installed.

mod common;
use common::*;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;
use webproof_net::Mode;
use webproof_proxy::{CipherSuite, KxGroup, ProofKind, TlsVersion};

fn have(cmd: &str) -> bool {
    Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {cmd}"))
        .stdout(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
        || Path::new(&format!("/usr/sbin/{cmd}")).exists()
}

fn sh(dir: &Path, script: &str) {
    let st = Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(st.success(), "failed: {script}");
}

fn certs(dir: &Path) {
    sh(dir, "openssl ecparam -name prime256v1 -genkey -noout -out ca.key && openssl req -x509 -new -key ca.key -subj '/CN=nginx test CA' -days 3 -out ca.pem -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign");
    for (name, gen) in [
        (
            "ec",
            "openssl ecparam -name prime256v1 -genkey -noout -out ec.key",
        ),
        ("rsa", "openssl genrsa -out rsa.key 2048"),
    ] {
        sh(dir, gen);
        sh(dir, &format!(
            "openssl req -new -key {name}.key -subj '/CN=localhost' -out {name}.csr && printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\nextendedKeyUsage=serverAuth\\nbasicConstraints=CA:FALSE\\n' > {name}.ext && openssl x509 -req -in {name}.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile {name}.ext -out {name}.pem"
        ));
    }
}

struct Nginx(Child);
impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_nginx(dir: &Path, protocols: &str) -> (Nginx, u16) {
    start_nginx_with(dir, protocols, "")
}

/// The TLS 1.2 suites nginx runs unless a test names others (OpenSSL's
/// names): every one webproof supports.
const CIPHERS12: &str = "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-CHACHA20-POLY1305";

fn start_nginx_with(dir: &Path, protocols: &str, extra: &str) -> (Nginx, u16) {
    start_nginx_conf(dir, protocols, CIPHERS12, extra)
}

/// nginx of the `protocols`, the TLS 1.2 suites `ciphers` and `extra`
/// directives in its server block.
fn start_nginx_conf(dir: &Path, protocols: &str, ciphers: &str, extra: &str) -> (Nginx, u16) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let d = dir.display();
    let conf = format!(
        "daemon off; master_process off; worker_processes 1; pid {d}/nginx-{port}.pid; error_log {d}/error.log;
events {{ worker_connections 64; }}
http {{
  access_log off; client_body_temp_path {d}; proxy_temp_path {d}; fastcgi_temp_path {d}; uwsgi_temp_path {d}; scgi_temp_path {d};
  server {{
    listen 127.0.0.1:{port} ssl;
    ssl_certificate {d}/ec.pem; ssl_certificate_key {d}/ec.key;
    ssl_certificate {d}/rsa.pem; ssl_certificate_key {d}/rsa.key;
    ssl_protocols {protocols};
    ssl_ciphers {ciphers};
    ssl_session_tickets off;
    {extra}
    location / {{ default_type application/json; return 200 '{{\"from\":\"nginx\",\"ok\":true}}'; }}
  }}
}}
"
    );
    let path = dir.join(format!("nginx-{port}.conf"));
    std::fs::write(&path, conf).unwrap();
    let nginx = if Path::new("/usr/sbin/nginx").exists() {
        "/usr/sbin/nginx"
    } else {
        "nginx"
    };
    let child = Command::new(nginx)
        .arg("-c")
        .arg(&path)
        .arg("-p")
        .arg(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let guard = Nginx(child);
    for _ in 0..100 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return (guard, port);
        }
        std::thread::sleep(Duration::from_millis(30));
    }
    panic!(
        "nginx did not start: {}",
        std::fs::read_to_string(dir.join("error.log")).unwrap_or_default()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nginx_every_suite() {
    if !have("nginx") || !have("openssl") {
        eprintln!("\n!!! SKIPPING nginx interop: nginx or openssl not installed (run scripts/setup.sh) !!!\n");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    certs(dir.path());
    let ca = std::fs::read_to_string(dir.path().join("ca.pem")).unwrap();
    for (protocols, version) in [
        ("TLSv1.3", TlsVersion::Tls13),
        ("TLSv1.2", TlsVersion::Tls12),
    ] {
        let (_nginx, port) = start_nginx(dir.path(), protocols);
        for suite in CipherSuite::ALL
            .into_iter()
            .filter(|s| s.version() == version)
        {
            let (addr, v) = verifier(quick_config(roots(&ca))).await;
            let mut o = options(&addr, "localhost", port, "/", &ca);
            o.suites = vec![suite];
            o.version = Some(version);
            o.reveal = webproof_proxy::http::parse_items(&["http", "hide-recv:0-1"]).unwrap();
            let out = webproof_net::prove(&o)
                .await
                .unwrap_or_else(|e| panic!("nginx {protocols} {suite}: {e}"));
            let vout = v.await.unwrap().unwrap();
            assert_eq!(vout, out.output);
            assert_eq!(out.output.cipher_suite, suite);
            assert!(
                out.output.received.text.contains("\"from\":\"nginx\""),
                "{}",
                out.output.received.text
            );
            assert_eq!(out.output.received.hidden(), 1);
        }
    }
}

/// A server that only takes P-256 answers the client's X25519 key share with
/// a HelloRetryRequest: the transcript then holds two ClientHellos, and the
/// proof and the verifier's handshake checks must follow it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nginx_hello_retry_request() {
    if !have("nginx") || !have("openssl") {
        eprintln!("\n!!! SKIPPING nginx interop: nginx or openssl not installed (run scripts/setup.sh) !!!\n");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    certs(dir.path());
    let ca = std::fs::read_to_string(dir.path().join("ca.pem")).unwrap();
    let (_nginx, port) = start_nginx_with(dir.path(), "TLSv1.3", "ssl_ecdh_curve prime256v1;");
    let (addr, v) = verifier(quick_config(roots(&ca))).await;
    let mut o = options(&addr, "localhost", port, "/", &ca);
    o.version = Some(TlsVersion::Tls13);
    // X25519 first: its key share is the one sent, and refused.
    o.groups = vec![KxGroup::X25519, KxGroup::Secp256r1];
    o.reveal = webproof_proxy::http::parse_items(&["http", "hide-recv:0-1"]).unwrap();
    let out = webproof_net::prove(&o)
        .await
        .unwrap_or_else(|e| panic!("HelloRetryRequest: {e}"));
    let vout = v.await.unwrap().unwrap();
    assert_eq!(vout, out.output);
    assert_eq!(out.output.key_exchange_group, KxGroup::Secp256r1);
}

/// One MPC session without a version or suite named against nginx: the
/// version, suite and group the verifier states, and the true bytes.
async fn mpc_no_flags(dir: &Path, port: u16) -> webproof_disclosure::VerifierOutput {
    let ca = std::fs::read_to_string(dir.join("ca.pem")).unwrap();
    let (addr, v) = verifier(quick_config(roots(&ca))).await;
    let mut o = options(&addr, "localhost", port, "/", &ca);
    o.mode = Mode::Mpc;
    o.reveal = webproof_proxy::http::parse_items(&["all"]).unwrap();
    let out = webproof_net::prove(&o)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let vout = v.await.unwrap().unwrap();
    assert_eq!(vout, out.output);
    assert_eq!(vout.proof, ProofKind::Mpc);
    assert!(
        vout.received.text.contains("\"from\":\"nginx\""),
        "{}",
        vout.received.text
    );
    vout
}

/// MPC mode needs no flags (issue 54): against a TLS 1.3-only nginx of
/// one suite and one group (each AES-GCM suite with each group, and
/// ChaCha20-Poly1305), it runs TLS 1.3 with them;
/// against one of both versions, TLS 1.2; against a TLS 1.2 nginx of
/// one suite outside the default family (AES-256-GCM or
/// ChaCha20-Poly1305, ECDSA or RSA), that suite.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nginx_mpc_follows_the_server_without_flags() {
    if !have("nginx") || !have("openssl") {
        eprintln!("\n!!! SKIPPING nginx interop: nginx or openssl not installed (run scripts/setup.sh) !!!\n");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    certs(dir.path());
    for (suite, name) in [
        (
            CipherSuite::TLS13_AES_128_GCM_SHA256,
            "TLS_AES_128_GCM_SHA256",
        ),
        (
            CipherSuite::TLS13_AES_256_GCM_SHA384,
            "TLS_AES_256_GCM_SHA384",
        ),
    ] {
        for (group, curve) in [
            (KxGroup::X25519, "X25519"),
            (KxGroup::Secp256r1, "prime256v1"),
        ] {
            let extra = format!("ssl_conf_command Ciphersuites {name}; ssl_ecdh_curve {curve};");
            let (_nginx, port) = start_nginx_with(dir.path(), "TLSv1.3", &extra);
            let out = mpc_no_flags(dir.path(), port).await;
            assert_eq!(out.tls_version, TlsVersion::Tls13, "{name} {curve}");
            assert_eq!(out.cipher_suite, suite, "{name} {curve}");
            assert_eq!(out.key_exchange_group, group, "{name} {curve}");
        }
    }
    // ChaCha20-Poly1305 alone (one group: its key schedule and key
    // exchange are the AES-128 suite's).
    let extra =
        "ssl_conf_command Ciphersuites TLS_CHACHA20_POLY1305_SHA256; ssl_ecdh_curve X25519;";
    let (_nginx, port) = start_nginx_with(dir.path(), "TLSv1.3", extra);
    let out = mpc_no_flags(dir.path(), port).await;
    assert_eq!(out.tls_version, TlsVersion::Tls13, "TLS 1.3 ChaCha20");
    assert_eq!(
        out.cipher_suite,
        CipherSuite::TLS13_CHACHA20_POLY1305_SHA256,
        "TLS 1.3 ChaCha20"
    );
    let (_nginx, port) = start_nginx(dir.path(), "TLSv1.2 TLSv1.3");
    let out = mpc_no_flags(dir.path(), port).await;
    assert_eq!(out.tls_version, TlsVersion::Tls12, "both versions");
    for (suite, name) in [
        (
            CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
            "ECDHE-ECDSA-AES256-GCM-SHA384",
        ),
        (
            CipherSuite::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
            "ECDHE-RSA-AES256-GCM-SHA384",
        ),
        (
            CipherSuite::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
            "ECDHE-ECDSA-CHACHA20-POLY1305",
        ),
        (
            CipherSuite::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
            "ECDHE-RSA-CHACHA20-POLY1305",
        ),
    ] {
        let (_nginx, port) = start_nginx_conf(dir.path(), "TLSv1.2", name, "");
        let out = mpc_no_flags(dir.path(), port).await;
        assert_eq!(out.tls_version, TlsVersion::Tls12, "{name}");
        assert_eq!(out.cipher_suite, suite, "{name}");
    }
}
