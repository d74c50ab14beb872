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

/// A relay between a prover and the verifier at `target` that passes
/// `cut_after` bytes from the verifier, then closes both connections at
/// once. Returns its address and, once cut, the bytes it passed.
pub async fn link_cutter(
    target: String,
    cut_after: usize,
) -> (String, tokio::task::JoinHandle<usize>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let cut = tokio::spawn(async move {
        let (p, _) = listener.accept().await.unwrap();
        let v = tokio::net::TcpStream::connect(target).await.unwrap();
        let ((mut pr, mut pw), (mut vr, mut vw)) = (p.into_split(), v.into_split());
        let up = tokio::spawn(async move {
            let _ = tokio::io::copy(&mut pr, &mut vw).await;
        });
        let mut buf = vec![0u8; 64 << 10];
        let mut moved = 0;
        while moved < cut_after {
            let n = match vr.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n.min(cut_after - moved),
            };
            if pw.write_all(&buf[..n]).await.is_err() {
                break;
            }
            moved += n;
        }
        up.abort();
        moved
    });
    (addr, cut)
}

/// One session through a [`link_cutter`] that cuts after `cut_after`
/// verifier → prover bytes, the prover's options made by `options` for
/// the cutter's address: both parties must end with an error, the prover
/// a disconnection, well before any of their timeouts (4 s).
pub async fn assert_cut_ends_both_sides(
    ca_pem: &str,
    cut_after: usize,
    options: impl FnOnce(&str) -> ProveOptions,
) {
    let (addr, v) = verifier(quick_config(roots(ca_pem))).await;
    let (cut_addr, cut) = link_cutter(addr, cut_after).await;
    let o = options(&cut_addr);
    let t = std::time::Instant::now();
    let e = webproof_net::prove(&o).await.unwrap_err();
    assert!(
        matches!(
            e,
            webproof_net::NetError::Disconnected(_)
                | webproof_net::NetError::Io { .. }
                // MPC mode: a verifier gone after the prover's Close.
                | webproof_net::NetError::VerifierCheated { .. }
        ),
        "cut after {cut_after}: {e}"
    );
    assert!(v.await.unwrap().is_err(), "cut after {cut_after}");
    assert_eq!(cut.await.unwrap(), cut_after, "the cut came where planned");
    assert!(
        t.elapsed() < Duration::from_secs(4),
        "cut after {cut_after}: {:?}",
        t.elapsed()
    );
}
