//! Shared helpers of the net tests.
#![allow(dead_code)]

use std::time::Duration;
use webproof_net::{Fixture, ProveOptions, Verifier, VerifierConfig};
use webproof_proxy::RootStore;

pub struct Setup {
    pub fixture: Fixture,
    pub dir: tempfile::TempDir,
}

pub async fn fixture() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let fixture = Fixture::start("127.0.0.1:0", dir.path(), &[])
        .await
        .unwrap();
    Setup { fixture, dir }
}

pub fn roots(pem: &str) -> RootStore {
    let mut r = RootStore::empty();
    r.add_pem(pem.as_bytes()).unwrap();
    r
}

pub fn quick_config(roots: RootStore) -> VerifierConfig {
    VerifierConfig {
        roots,
        connect_timeout: Duration::from_secs(5),
        relay_timeout: Duration::from_secs(10),
        idle_timeout: Duration::from_secs(5),
        proof_timeout: Duration::from_secs(10),
        // The fixture runs on loopback, which the default policy refuses.
        server_policy: webproof_net::ServerPolicy::public_only()
            .allow(["127.0.0.0/8".parse().unwrap()]),
        ..VerifierConfig::default()
    }
}

/// Start a one-shot verifier; returns its address and its result.
pub async fn verifier(
    cfg: VerifierConfig,
) -> (
    String,
    tokio::task::JoinHandle<webproof_net::Result<webproof_proxy::VerifierOutput>>,
) {
    let v = Verifier::bind("127.0.0.1:0", cfg).await.unwrap();
    let addr = v.local_addr().unwrap().to_string();
    (addr, tokio::spawn(v.serve_one()))
}

pub fn options(verifier: &str, host: &str, port: u16, path: &str, ca_pem: &str) -> ProveOptions {
    let mut o = ProveOptions::new(verifier, &format!("https://{host}:{port}{path}")).unwrap();
    o.ca_pems.push(ca_pem.as_bytes().to_vec());
    o.timeout = Duration::from_secs(20);
    o
}
