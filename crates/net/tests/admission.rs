//! Where a verifier may connect: the server address policy, which
//! resolves names and connects over real sockets (the tokio runtime's
//! `PolicyConnector`). API keys and the hello's size limit are the
//! session's, tested on the simulated pair (`session/tests/ends.rs`).

mod common;
use common::*;
use webproof_net::ServerPolicy;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn default_policy_refuses_loopback_and_private_servers() {
    let s = fixture().await;
    let ca = s.fixture.certs.ca_pem.clone();
    let port = s.fixture.addr.port();
    // By name (resolved by DNS to loopback) and by address.
    for host in ["localhost", "127.0.0.1"] {
        let mut cfg = quick_config(roots(&ca));
        cfg.server_policy = ServerPolicy::public_only();
        let (addr, v) = verifier(cfg).await;
        let err = webproof_net::prove(&options(&addr, host, port, "/html", &ca))
            .await
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("only connects to public addresses"),
            "{host}: {err}"
        );
        let verr = v.await.unwrap().unwrap_err();
        assert!(verr.to_string().contains("loopback"), "{host}: {verr}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allow_list_and_pinned_names_reach_the_server() {
    let s = fixture().await;
    let ca = s.fixture.certs.ca_pem.clone();
    let port = s.fixture.addr.port();
    // A name the operator pinned with `resolve` is trusted as configured.
    let mut cfg = quick_config(roots(&ca));
    cfg.server_policy = ServerPolicy::public_only();
    cfg.resolve
        .insert("localhost".into(), "127.0.0.1".parse().unwrap());
    let (addr, v) = verifier(cfg).await;
    webproof_net::prove(&options(&addr, "localhost", port, "/html", &ca))
        .await
        .unwrap();
    v.await.unwrap().unwrap();
}
