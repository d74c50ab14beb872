//! The service over real sockets: every listener, the session cap, limits,
//! provers that vanish or send garbage, API keys, deadlines and shutdown.

mod common;
use common::*;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use webproof_net::transport::TransportOptions;
use webproof_service::Outcome;

const GAUGE_WAIT: Duration = Duration::from_secs(15);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_over_every_listener_and_the_http_endpoints() {
    let env = env().await;
    let mut cfg = env.config();
    let ca = env.service_cert(&mut cfg, Some("127.0.0.1:0"));
    cfg.listen_https = Some("127.0.0.1:0".into());
    let svc = start(&cfg).await;
    let a = svc.addrs;
    let tls_opts = TransportOptions {
        ca_pems: vec![ca.into_bytes()],
    };
    let verifiers = [
        svc.tcp(),
        format!("tls://localhost:{}", a.tls.unwrap().port()),
        svc.ws(),
        format!("wss://localhost:{}/v1/session", a.https.unwrap().port()),
    ];
    for v in &verifiers {
        let mut o = env.prove_opts(v, "/json");
        o.transport = tls_opts.clone();
        let out = webproof_net::prove(&o)
            .await
            .unwrap_or_else(|e| panic!("{v}: {e}"));
        assert!(String::from_utf8_lossy(&out.response).contains("Ada Lovelace"));
    }
    // Without the service's CA the prover refuses the verifier's certificate.
    let o = env.prove_opts(&verifiers[1], "/json");
    let e = webproof_net::prove(&o).await.unwrap_err().to_string();
    assert!(e.contains("TLS to the verifier"), "{e}");

    let m = &svc.metrics;
    // The prover has its verdict a moment before the service books the session.
    wait_until("4 verified, gauge at 0", GAUGE_WAIT, || {
        m.sessions(Outcome::Verified) == 4 && m.active() == 0
    })
    .await;
    let (status, body) = http_get(a.http.unwrap(), "/health").await;
    assert_eq!(status, 200);
    let h: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(h["ok"], true);
    assert_eq!(h["sessions_active"], 0);
    assert_eq!(h["version"], env!("CARGO_PKG_VERSION"));
    let (status, body) = http_get(a.http.unwrap(), "/metrics").await;
    assert_eq!(status, 200);
    for t in ["tcp", "tls", "ws", "wss"] {
        let line = format!("webproof_sessions_total{{transport=\"{t}\",outcome=\"verified\"}} 1");
        assert!(body.contains(&line), "{line} missing in\n{body}");
    }
    assert!(
        body.contains("webproof_transport_errors_total{transport=\"tls\"} 1"),
        "{body}"
    );
    assert!(
        body.contains("webproof_session_duration_seconds_count 4"),
        "{body}"
    );
    let (rx, tx) = m.bytes();
    assert!(rx > 100_000 && tx > 100_000, "{rx} {tx}");

    assert_eq!(http_get(a.http.unwrap(), "/nope").await.0, 404);
    let (s, _) = http_request(
        a.http.unwrap(),
        "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert_eq!(s, 405);
    // A plain GET on the WebSocket endpoint is not an upgrade.
    assert_eq!(http_get(a.http.unwrap(), "/v1/session").await.0, 400);
    let (s, _) = http_request(
        a.http.unwrap(),
        "GET /v1/session HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Version: 8\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
    )
    .await;
    assert_eq!(s, 426);
    let report = svc.stop().await;
    assert_eq!(report.dropped, 0);
}

/// MPC mode through the service, over TCP and WebSocket: the verifier
/// takes part in the TLS client and never connects to the server; the
/// sessions are booked as any other.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mpc_sessions_over_tcp_and_websocket() {
    let env = env().await;
    let svc = start(&env.config()).await;
    for v in [svc.tcp(), svc.ws()] {
        let mut o = env.prove_opts(&v, "/json");
        o.mode = webproof_net::Mode::Mpc;
        let out = webproof_net::prove(&o)
            .await
            .unwrap_or_else(|e| panic!("{v}: {e}"));
        assert_eq!(out.output.proof, webproof_proxy::ProofKind::Mpc);
        assert_eq!(out.output.received.bytes, out.response);
        assert!(String::from_utf8_lossy(&out.response).contains("Ada Lovelace"));
    }
    let m = &svc.metrics;
    wait_until("2 verified, gauge at 0", GAUGE_WAIT, || {
        m.sessions(Outcome::Verified) == 2 && m.active() == 0
    })
    .await;
    let report = svc.stop().await;
    assert_eq!(report.dropped, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_the_cap_provers_are_refused_and_the_others_carry_on() {
    let env = env().await;
    let mut cfg = env.config();
    cfg.limits.max_sessions = 2;
    cfg.limits.connect_timeout_secs = Duration::from_secs(30);
    let svc = start(&cfg).await;
    let m = svc.metrics.clone();
    // Two silent provers hold both slots.
    let hold1 = TcpStream::connect(svc.tcp()).await.unwrap();
    let hold2 = TcpStream::connect(svc.tcp()).await.unwrap();
    wait_until("two sessions", GAUGE_WAIT, || m.active() == 2).await;
    let e = webproof_net::prove(&env.prove_opts(&svc.tcp(), "/json"))
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("at capacity (2 sessions at once)"), "{e}");
    assert_eq!(m.failures("capacity"), 1);
    assert_eq!(m.sessions(Outcome::Refused), 1);
    // The refusal is over WebSocket too.
    let e = webproof_net::prove(&env.prove_opts(&svc.ws(), "/json"))
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("at capacity"), "{e}");
    // One slot frees up: the next prover gets it while the other holder stays.
    drop(hold1);
    wait_until("one session", GAUGE_WAIT, || m.active() == 1).await;
    webproof_net::prove(&env.prove_opts(&svc.tcp(), "/json"))
        .await
        .unwrap();
    wait_until("one verified", GAUGE_WAIT, || {
        m.sessions(Outcome::Verified) == 1
    })
    .await;
    drop(hold2);
    wait_until("no session", GAUGE_WAIT, || m.active() == 0).await;
    svc.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_limit_exceeded_ends_that_session_only() {
    let env = env().await;
    let mut cfg = env.config();
    cfg.limits.max_recv_bytes = 8192;
    let svc = start(&cfg).await;
    let big = env.prove_opts(&svc.tcp(), "/bytes?size=60000");
    let small = env.prove_opts(&svc.ws(), "/json");
    let (big, small) = tokio::join!(webproof_net::prove(&big), webproof_net::prove(&small));
    let e = big.unwrap_err().to_string();
    assert!(e.contains("8192"), "the prover is told which limit: {e}");
    small.unwrap();
    let m = &svc.metrics;
    wait_until("one verified, one failed, none running", GAUGE_WAIT, || {
        m.sessions(Outcome::Verified) == 1 && m.sessions(Outcome::Failed) == 1 && m.active() == 0
    })
    .await;
    svc.stop().await;
}

/// Forward one connection to `target`, and cut both sides once `cut_after`
/// bytes came back from the target.
async fn cutting_proxy(target: SocketAddr, cut_after: usize) -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(async move {
        let (c, _) = l.accept().await.unwrap();
        let s = TcpStream::connect(target).await.unwrap();
        let (mut cr, mut cw) = c.into_split();
        let (mut sr, mut sw) = s.into_split();
        let up = tokio::spawn(async move {
            let _ = tokio::io::copy(&mut cr, &mut sw).await;
        });
        let mut seen = 0;
        let mut b = vec![0u8; 4096];
        while seen < cut_after {
            let n = match sr.read(&mut b).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n.min(cut_after - seen),
            };
            if cw.write_all(&b[..n]).await.is_err() {
                break;
            }
            seen += n;
        }
        up.abort();
    });
    addr
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prover_that_vanishes_leaves_nothing_behind() {
    let env = env().await;
    // The gauge must come back within the timeouts: keep them short.
    let mut cfg = env.config();
    cfg.limits.idle_timeout_secs = Duration::from_secs(3);
    cfg.limits.proof_timeout_secs = Duration::from_secs(8);
    // The backstop if a phase misses the prover's departure.
    cfg.limits.session_timeout_secs = Duration::from_secs(12);
    let svc = start(&cfg).await;
    let m = svc.metrics.clone();

    // After the hello: the verifier accepted and starts the setup, the prover is gone.
    let mut c = TcpStream::connect(svc.tcp()).await.unwrap();
    c.write_all(&hello(&env)).await.unwrap();
    let mut len = [0u8; 4];
    c.read_exact(&mut len).await.unwrap();
    drop(c);
    wait_until("gauge back to 0 (after hello)", GAUGE_WAIT, || {
        m.active() == 0 && m.sessions(Outcome::Failed) == 1
    })
    .await;

    // Mid-setup: the link is cut after 20 kB of the verifier's setup messages.
    let proxy = cutting_proxy(svc.addrs.tcp.unwrap(), 20_000).await;
    let e = webproof_net::prove(&env.prove_opts(&proxy.to_string(), "/json"))
        .await
        .unwrap_err();
    wait_until("gauge back to 0 (mid-setup)", GAUGE_WAIT, || {
        m.active() == 0 && m.sessions(Outcome::Failed) == 2
    })
    .await;
    drop(e);

    // Mid-relay: a "server" that takes the ClientHello and never answers;
    // the prover disappears while the verifier relays.
    let server = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = server.local_addr().unwrap().port();
    let (got_hello, hello_seen) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let (mut s, _) = server.accept().await.unwrap();
        let mut b = [0u8; 1024];
        let _ = s.read(&mut b).await;
        let _ = got_hello.send(());
        // Hold the connection open without answering.
        let _ = s.read(&mut b).await;
    });
    let mut o = env.prove_opts(&svc.tcp(), "/json");
    o.port = port;
    let prover = tokio::spawn(async move { webproof_net::prove(&o).await });
    tokio::time::timeout(GAUGE_WAIT, hello_seen)
        .await
        .expect("the relay started")
        .unwrap();
    assert_eq!(m.active(), 1);
    prover.abort();
    wait_until(
        "gauge back to 0 (mid-relay)",
        Duration::from_secs(25),
        || m.active() == 0 && m.sessions(Outcome::Failed) == 3,
    )
    .await;
    assert_eq!(m.sessions(Outcome::Verified), 0);
    svc.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_truncated_and_oversized_frames_end_the_session_cleanly() {
    let env = env().await;
    let mut cfg = env.config();
    cfg.limits.max_message_bytes = 4096;
    let svc = start(&cfg).await;
    let m = svc.metrics.clone();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("garbage JSON", frame(b"{\"hello\": nonsense")),
        (
            "wrong message",
            frame(b"{\"proof\":{\"payload\":1,\"openings\":[]}}"),
        ),
        ("truncated header", vec![7, 0]),
        ("truncated payload", {
            let mut v = 100u32.to_le_bytes().to_vec();
            v.extend_from_slice(b"{\"hello\"");
            v
        }),
        ("oversized frame", (64u32 << 20).to_le_bytes().to_vec()),
        (
            "binary noise",
            (0..5000u32)
                .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
                .collect(),
        ),
    ];
    for (i, (what, bytes)) in cases.iter().enumerate() {
        let mut c = TcpStream::connect(svc.tcp()).await.unwrap();
        c.write_all(bytes).await.unwrap();
        // Half-close: the service sees the end of the input.
        c.shutdown().await.unwrap();
        read_until_closed(&mut c, GAUGE_WAIT).await;
        wait_until(what, GAUGE_WAIT, || {
            m.active() == 0 && m.sessions(Outcome::Failed) == i as u64 + 1
        })
        .await;
    }
    assert!(m.failures("rejected") >= 3, "{}", m.render());
    assert!(m.failures("disconnected") >= 2, "{}", m.render());

    // Over WebSocket: a text message, then garbage binary.
    use futures::SinkExt;
    use tokio_tungstenite::tungstenite::Message;
    for (i, msg) in [
        Message::text("{\"hello\":{}}"),
        Message::binary(vec![0xff; 3]),
    ]
    .into_iter()
    .enumerate()
    {
        let (mut ws, _) = tokio_tungstenite::connect_async(svc.ws()).await.unwrap();
        ws.send(msg).await.unwrap();
        let closed = tokio::time::timeout(GAUGE_WAIT, async {
            use futures::StreamExt;
            while let Some(Ok(_)) = ws.next().await {}
        })
        .await;
        assert!(closed.is_ok(), "the service closes the WebSocket");
        wait_until("ws garbage", GAUGE_WAIT, || {
            m.active() == 0 && m.sessions(Outcome::Failed) == cases.len() as u64 + i as u64 + 1
        })
        .await;
    }
    // The service still serves an honest prover.
    webproof_net::prove(&env.prove_opts(&svc.ws(), "/json"))
        .await
        .unwrap();
    svc.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_keys_are_checked_and_unauthorized_provers_counted() {
    let env = env().await;
    let mut cfg = env.config();
    cfg.api_keys.digests = vec![webproof_net::verifier::api_key_digest("k-123")
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()];
    let svc = start(&cfg).await;
    let m = svc.metrics.clone();
    for key in [None, Some("k-12")] {
        let mut o = env.prove_opts(&svc.tcp(), "/json");
        o.api_key = key.map(String::from);
        let e = webproof_net::prove(&o).await.unwrap_err().to_string();
        assert!(e.contains("API key"), "{e}");
    }
    wait_until("two unauthorized", GAUGE_WAIT, || {
        m.failures("unauthorized") == 2
    })
    .await;
    let mut o = env.prove_opts(&svc.ws(), "/json");
    o.api_key = Some("k-123".into());
    webproof_net::prove(&o).await.unwrap();
    let (_, body) = http_get(svc.addrs.http.unwrap(), "/metrics").await;
    assert!(
        body.contains("webproof_session_failures_total{reason=\"unauthorized\"} 2"),
        "{body}"
    );
    svc.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_session_deadline_ends_a_session_that_drags_on() {
    let env = env().await;
    let mut cfg = env.config();
    cfg.limits.connect_timeout_secs = Duration::from_secs(30);
    cfg.limits.session_timeout_secs = Duration::from_millis(300);
    let svc = start(&cfg).await;
    let m = svc.metrics.clone();
    let mut c = TcpStream::connect(svc.tcp()).await.unwrap();
    wait_until("session timed out", GAUGE_WAIT, || {
        m.failures("session_timeout") == 1 && m.active() == 0
    })
    .await;
    read_until_closed(&mut c, GAUGE_WAIT).await;
    svc.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_lets_running_sessions_finish_then_drops_the_rest() {
    let env = env().await;
    let mut svc = start(&env.config()).await;
    let m = svc.metrics.clone();
    let o = env.prove_opts(&svc.tcp(), "/json");
    let prover = tokio::spawn(async move { webproof_net::prove(&o).await });
    wait_until("a running session", GAUGE_WAIT, || m.active() == 1).await;
    let tcp = svc.tcp();
    svc.signal_stop();
    // The running session completes; new connections are refused.
    prover.await.unwrap().unwrap();
    let report = tokio::time::timeout(GAUGE_WAIT, &mut svc.done)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(report.running_at_signal, 1);
    assert_eq!(report.dropped, 0);
    assert!(TcpStream::connect(&tcp).await.is_err());

    // A session still running at the end of the grace period is dropped.
    let mut cfg = env.config();
    cfg.limits.connect_timeout_secs = Duration::from_secs(30);
    cfg.limits.shutdown_grace_secs = Duration::from_millis(300);
    let svc = start(&cfg).await;
    let m = svc.metrics.clone();
    let mut c = TcpStream::connect(svc.tcp()).await.unwrap();
    wait_until("a running session", GAUGE_WAIT, || m.active() == 1).await;
    let report = svc.stop().await;
    assert_eq!(report.dropped, 1);
    assert_eq!(m.failures("shutdown"), 1);
    assert_eq!(m.active(), 0);
    read_until_closed(&mut c, GAUGE_WAIT).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_http_listener_refuses_oversized_and_garbage_requests() {
    let env = env().await;
    let svc = start(&env.config()).await;
    let http = svc.addrs.http.unwrap();
    // A request head larger than the 64 KiB buffer.
    let big = format!(
        "GET /health HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\n\r\n",
        "a".repeat(200 << 10)
    );
    let mut c = TcpStream::connect(http).await.unwrap();
    let _ = c.write_all(big.as_bytes()).await;
    let reply = read_until_closed(&mut c, GAUGE_WAIT).await;
    let reply = String::from_utf8_lossy(&reply);
    assert!(
        reply.is_empty() || reply.starts_with("HTTP/1.1 431"),
        "{reply}"
    );
    // Not HTTP at all.
    let mut c = TcpStream::connect(http).await.unwrap();
    c.write_all(b"\x16\x03\x01\x02\x00garbage\r\n\r\n")
        .await
        .unwrap();
    let reply = read_until_closed(&mut c, GAUGE_WAIT).await;
    let reply = String::from_utf8_lossy(&reply);
    assert!(
        reply.is_empty() || reply.starts_with("HTTP/1.1 400"),
        "{reply}"
    );
    // The listener still answers.
    assert_eq!(http_get(http, "/health").await.0, 200);
    assert_eq!(svc.metrics.active(), 0);
    svc.stop().await;
}

/// Readiness is not liveness: `/ready` answers 200 while the replica takes
/// provers, 503 "draining" from the shutdown signal on, while `/health`
/// stays 200; during the drain delay a new prover is still served (a load
/// balancer that has not polled yet loses nothing), then the listeners
/// close.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readiness_fails_first_on_shutdown_and_the_drain_delay_still_serves() {
    let env = env().await;
    let mut cfg = env.config();
    cfg.limits.drain_delay_secs = Duration::from_secs(3);
    let mut svc = start(&cfg).await;
    let http = svc.addrs.http.unwrap();
    let (status, body) = http_get(http, "/ready").await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains(r#""ready":true"#), "{body}");
    svc.signal_stop();
    let mut failed = false;
    for _ in 0..50 {
        let (status, body) = http_get(http, "/ready").await;
        if status == 503 {
            assert!(body.contains("draining"), "{body}");
            failed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(failed, "/ready did not fail after the signal");
    let (status, _) = http_get(http, "/health").await;
    assert_eq!(status, 200, "liveness holds while draining");
    // Still accepting during the drain delay.
    let o = env.prove_opts(&svc.tcp(), "/json");
    webproof_net::prove(&o).await.unwrap();
    let tcp = svc.tcp();
    let report = tokio::time::timeout(Duration::from_secs(10), &mut svc.done)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(report.dropped, 0);
    assert!(TcpStream::connect(&tcp).await.is_err());
}
