//! Several HTTP/1.1 requests on one TLS connection: what `prove()` checks
//! of them before any network work. The sessions themselves (both modes,
//! a server closing early, a response that never ends) run on the
//! simulated pair (`crates/session/tests/exchanges.rs`, `ends.rs`).

mod common;
use common::*;
use webproof_net::prover::HttpRequest;

/// Too many requests, or an item naming an exchange past the last: refused
/// before any network work (nothing listens at the verifier address).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limits_are_checked_before_the_session() {
    let mut o = options("127.0.0.1:9", "localhost", 443, "/", "");
    o.next = vec![HttpRequest::get("/"); webproof_net::prover::MAX_EXCHANGES];
    let err = webproof_net::prove(&o).await.unwrap_err().to_string();
    assert!(err.contains("at most 32"), "{err}");
    o.next.truncate(1);
    o.reveal = vec!["3/body".parse().unwrap()];
    let err = webproof_net::prove(&o).await.unwrap_err().to_string();
    assert!(err.contains("exchange 3 does not exist"), "{err}");
}
