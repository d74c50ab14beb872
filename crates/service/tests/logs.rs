//! Structured logs: JSON lines, each session's in its span. In a test
//! binary of its own: `tracing` keeps per-callsite interest process-wide,
//! and concurrent tests that emit the same events without a subscriber can
//! leave them disabled for this one.

mod common;
use common::*;
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use webproof_service::Outcome;

const GAUGE_WAIT: Duration = Duration::from_secs(15);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_logs_carry_the_session_span() {
    use std::sync::{Arc, Mutex};
    use tracing::instrument::WithSubscriber;
    #[derive(Clone, Default)]
    struct Buf(Arc<Mutex<Vec<u8>>>);
    impl std::io::Write for Buf {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let env = env().await;
    let mut cfg = env.config();
    cfg.log.format = webproof_service::LogFormat::Json;
    let built = cfg.build().unwrap();
    let buf = Buf::default();
    let b2 = buf.clone();
    let dispatch = webproof_service::logging::dispatch_to(&built.log, move || b2.clone()).unwrap();
    let service = webproof_service::Service::bind(built).await.unwrap();
    let addr = service.addrs().tcp.unwrap();
    let m = service.metrics();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let done = tokio::spawn(
        service
            .run(async move {
                let _ = rx.await;
            })
            .with_subscriber(dispatch),
    );
    // One verified session, one garbage session.
    webproof_net::prove(&env.prove_opts(&addr.to_string(), "/json"))
        .await
        .unwrap();
    let mut c = TcpStream::connect(addr).await.unwrap();
    c.write_all(&frame(b"nonsense")).await.unwrap();
    read_until_closed(&mut c, GAUGE_WAIT).await;
    wait_until("two sessions booked", GAUGE_WAIT, || {
        m.sessions(Outcome::Verified) == 1 && m.sessions(Outcome::Failed) == 1
    })
    .await;
    let _ = tx.send(());
    done.await.unwrap();
    let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let find = |msg: &str| {
        lines
            .iter()
            .find(|v| {
                v["fields"]["message"]
                    .as_str()
                    .is_some_and(|m| m.starts_with(msg))
            })
            .unwrap_or_else(|| panic!("no {msg:?} line in\n{text}"))
            .clone()
    };
    let ok = find("session verified");
    assert_eq!(ok["span"]["name"], "session");
    assert_eq!(ok["span"]["transport"], "tcp");
    assert_eq!(ok["fields"]["server"], "localhost");
    let failed = find("session failed");
    assert_eq!(failed["fields"]["reason"], "rejected");
    assert_ne!(ok["span"]["id"], failed["span"]["id"]);
    find("verifier service stopped");
}
