//! MPC mode against a verifier that stops after the prover's `Close`,
//! before the `Δ` reveal that its audit needs: the prover reports it as a
//! cheating verifier (not a network error), records it, and refuses it
//! next time unless told otherwise. The verifier is the real one behind a
//! relay that withholds everything it sends once the server has answered
//! (so no `CloseAck`), then hangs up once the prover's `Close` is through.
//!
//! What stays here is the runtime's part: the record file and the refusal
//! next time, over real sockets. The session's part (a verifier silent
//! after `Close` is cheating, a refusal before it is not) runs on the
//! simulated pair in virtual time (`session/tests/ends.rs`, `refusals.rs`).

mod common;
use common::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;
use webproof_net::flagged::FlaggedVerifiers;
use webproof_net::mpc::{blame, Stage};
use webproof_net::{Mode, NetError};

/// A relay in front of the server (the fixture) that notifies `served`
/// when the server ends the session's connection (the fixture closes
/// after its response). Every connection is relayed: the prover first
/// asks the server for its suite (`session::mpc::probe`) and hangs up
/// itself, so a connection the prover closed first is not the session's.
async fn server_relay(target: std::net::SocketAddr, served: Arc<Notify>) -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((p, _)) = listener.accept().await {
            let served = served.clone();
            tokio::spawn(async move {
                let s = TcpStream::connect(target).await.unwrap();
                let ((mut pr, mut pw), (mut sr, mut sw)) = (p.into_split(), s.into_split());
                let up = tokio::spawn(async move {
                    let _ = tokio::io::copy(&mut pr, &mut sw).await;
                });
                let _ = tokio::io::copy(&mut sr, &mut pw).await;
                if !up.is_finished() {
                    served.notify_one();
                }
                let _ = pw.shutdown().await;
            });
        }
    });
    addr
}

/// A relay in front of the verifier that passes both directions until
/// `served`, then drops whatever the verifier sends; once the prover has
/// been quiet for a while (its `Close` went through), it hangs up.
async fn stop_at_close(target: String, served: Arc<Notify>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    tokio::spawn(async move {
        let (p, _) = listener.accept().await.unwrap();
        let v = TcpStream::connect(target).await.unwrap();
        let ((mut pr, mut pw), (mut vr, mut vw)) = (p.into_split(), v.into_split());
        let withholding = Arc::new(AtomicBool::new(false));
        let flag = withholding.clone();
        let down = tokio::spawn(async move {
            let mut buf = vec![0u8; 64 << 10];
            let mut cut = false;
            loop {
                tokio::select! {
                    _ = served.notified(), if !cut => {
                        cut = true;
                        flag.store(true, Ordering::SeqCst);
                    }
                    n = vr.read(&mut buf) => match n {
                        Ok(0) | Err(_) => return,
                        Ok(n) if !cut => {
                            if pw.write_all(&buf[..n]).await.is_err() {
                                return;
                            }
                        }
                        // Withheld: the prover never sees the CloseAck.
                        Ok(_) => {}
                    },
                }
            }
        });
        let mut buf = vec![0u8; 64 << 10];
        loop {
            match tokio::time::timeout(Duration::from_secs(2), pr.read(&mut buf)).await {
                Ok(Ok(0)) | Ok(Err(_)) => break,
                Ok(Ok(n)) => {
                    if vw.write_all(&buf[..n]).await.is_err() {
                        break;
                    }
                }
                // Quiet after the server's answer: the prover waits for
                // the CloseAck. Hang up on it.
                Err(_) if withholding.load(Ordering::SeqCst) => break,
                Err(_) => {}
            }
        }
        down.abort();
    });
    addr
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verifier_stopping_at_close_is_reported_recorded_and_refused() {
    let s = fixture().await;
    let ca = s.fixture.certs.ca_pem.clone();
    let record = tempfile::tempdir().unwrap();
    let record_path = record.path().join("flagged.jsonl");
    let (vaddr, v) = verifier(quick_config(roots(&ca))).await;
    let served = Arc::new(Notify::new());
    let server = server_relay(s.fixture.addr, served.clone()).await;
    let at = stop_at_close(vaddr, served).await;

    let mut o = options(&at, "localhost", s.fixture.addr.port(), "/json", &ca);
    o.mode = Mode::Mpc;
    o.version = Some(webproof_proxy::TlsVersion::Tls12);
    o.server_addr = Some(server);
    o.flagged_verifiers = Some(record_path.clone());
    let t = std::time::Instant::now();
    let e = webproof_net::prove(&o).await.unwrap_err();
    eprintln!("after {:.1} s: {e}", t.elapsed().as_secs_f64());
    assert!(
        matches!(&e, NetError::VerifierCheated { what, .. } if what.contains("after the prover's Close")),
        "{e:?}"
    );
    assert_eq!(e.kind(), "verifier_cheated");
    let text = e.to_string();
    assert!(text.contains("escapes the audit"), "{text}");
    assert!(
        text.contains("Do not retry with the same credentials"),
        "{text}"
    );
    assert!(text.contains(&record_path.display().to_string()), "{text}");
    let _ = v.await;

    // Recorded, one JSON line naming the verifier's address.
    let rec = FlaggedVerifiers::at(&record_path);
    let all = rec.load().unwrap();
    assert_eq!(all.len(), 1, "{all:?}");
    assert_eq!(all[0].verifier, at);
    assert!(all[0].reason.contains("after the prover's Close"));

    // The next session with it is refused before any connection.
    let e = webproof_net::prove(&o).await.unwrap_err();
    assert!(matches!(e, NetError::FlaggedVerifier { .. }), "{e:?}");
    assert_eq!(e.kind(), "flagged_verifier");
    assert!(e.to_string().contains("--allow-flagged-verifier"), "{e}");
    // Told to go ahead, it tries (the relay is gone: a connection error).
    o.allow_flagged_verifier = true;
    let e = webproof_net::prove(&o).await.unwrap_err();
    assert!(
        !matches!(
            e,
            NetError::FlaggedVerifier { .. } | NetError::VerifierCheated { .. }
        ),
        "{e:?}"
    );
    assert_eq!(rec.load().unwrap().len(), 1, "nothing more recorded");
}

/// Who is blamed for what: a failed audit always; a stop after the
/// `Close` and before the audit; nothing before the `Close` (the network,
/// the server, a refusal) nor after the audit, nor this party's own checks.
#[test]
fn blame_by_stage() {
    use webproof_mpc_tls::Error as E;
    let gone = || NetError::Disconnected("the verifier hung up mid-session".into());
    let cheated = || NetError::Mpc(E::VerifierCheated("a table differs".into()));
    for stage in [Stage::BeforeClose, Stage::AwaitingAudit, Stage::Audited] {
        assert!(blame(stage, &cheated()).is_some(), "{stage:?}");
    }
    // Dual execution's check fails during the session, before `Close`.
    let keystream = || {
        NetError::Mpc(E::Mpc(webproof_mpc::Error::VerifierCheated(
            "the request's keystream differs between the two garblings (dual execution)",
        )))
    };
    for stage in [Stage::BeforeClose, Stage::AwaitingAudit, Stage::Audited] {
        assert!(blame(stage, &keystream()).is_some(), "{stage:?}");
    }
    assert_eq!(blame(Stage::BeforeClose, &gone()), None);
    assert_eq!(blame(Stage::Audited, &gone()), None);
    assert!(blame(Stage::AwaitingAudit, &gone()).is_some());
    assert!(blame(Stage::AwaitingAudit, &NetError::Timeout("x".into()))
        .unwrap()
        .contains("silent"));
    assert!(blame(
        Stage::AwaitingAudit,
        &NetError::Mpc(E::Aborted("no".into()))
    )
    .unwrap()
    .contains("aborted"));
    assert!(blame(
        Stage::AwaitingAudit,
        &NetError::Mpc(E::Proof("channel closed".into()))
    )
    .is_some());
    for own in [
        NetError::Setup("x".into()),
        NetError::Mpc(E::ServerClosed),
        NetError::Mpc(E::Usage("x".into())),
        NetError::Proxy(webproof_proxy::ProxyError::Protocol("x".into())),
    ] {
        assert_eq!(blame(Stage::AwaitingAudit, &own), None, "{own:?}");
    }
}
