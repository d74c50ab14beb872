//! Who may use a verifier and where it may connect: API keys and the
//! server address policy, over real sockets.

mod common;
use common::*;
use webproof_net::{NetError, ServerPolicy};

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_keys_are_required_when_configured() {
    let s = fixture().await;
    let ca = s.fixture.certs.ca_pem.clone();
    let port = s.fixture.addr.port();
    for (key, ok) in [
        (None, false),
        (Some("wrong-key"), false),
        (Some("s3cret-key-2"), true),
    ] {
        let mut cfg = quick_config(roots(&ca));
        cfg.require_api_key("s3cret-key-1");
        cfg.require_api_key("s3cret-key-2");
        let (addr, v) = verifier(cfg).await;
        let mut o = options(&addr, "localhost", port, "/html", &ca);
        o.api_key = key.map(String::from);
        let r = webproof_net::prove(&o).await;
        let vr = v.await.unwrap();
        if ok {
            r.unwrap();
            vr.unwrap();
        } else {
            let err = r.unwrap_err();
            assert!(err.to_string().contains("API key"), "{key:?}: {err}");
            // The prover reads the reason code, not only the text.
            assert!(
                matches!(&err, NetError::Refused(r) if r.kind == webproof_net::RejectKind::Unauthorized),
                "{err:?}"
            );
            assert!(matches!(vr, Err(NetError::Unauthorized(_))), "{vr:?}");
            // The key itself never appears in the error.
            assert!(!err.to_string().contains("wrong-key"));
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_hello_is_refused_cleanly() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let s = fixture().await;
    let mut cfg = quick_config(roots(&s.fixture.certs.ca_pem));
    cfg.max_message = 1024;
    let (addr, v) = verifier(cfg).await;
    let mut c = tokio::net::TcpStream::connect(&addr).await.unwrap();
    // A frame header announcing 1 MiB: refused from the header alone.
    c.write_all(&(1u32 << 20).to_le_bytes()).await.unwrap();
    let err = v.await.unwrap().unwrap_err();
    assert!(err.to_string().contains("1048576"), "{err}");
    let mut rest = Vec::new();
    let _ = c.read_to_end(&mut rest).await;
}
