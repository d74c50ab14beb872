//! `webproof relay` on real sockets: a TLS session with the HTTPS fixture
//! runs end to end through it; every refusal (path, origin, target,
//! address class, capacity) and every limit (bytes, idle time) ends with
//! the reason the client sees, and the metrics count it.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;
use webproof_net::relay::{Outcome, Relay, RelayConfig, RelayMetrics, Target};
use webproof_net::transport::WsStream;
use webproof_net::{Fixture, ServerPolicy};

/// A relay allowing `targets`, with the loopback fixture reachable when
/// `private` (the default policy refuses loopback).
async fn relay(
    targets: &[&str],
    private: bool,
    tune: impl FnOnce(&mut RelayConfig),
) -> (
    String,
    Option<String>,
    Arc<RelayMetrics>,
    tokio::sync::oneshot::Sender<()>,
) {
    let mut cfg = RelayConfig {
        targets: targets
            .iter()
            .map(|t| t.parse::<Target>().unwrap())
            .collect(),
        policy: if private {
            ServerPolicy::allow_all()
        } else {
            ServerPolicy::public_only()
        },
        resolve: HashMap::new(),
        ..RelayConfig::default()
    };
    tune(&mut cfg);
    let r = Relay::bind("127.0.0.1:0", Some("127.0.0.1:0"), cfg)
        .await
        .unwrap();
    let addr = r.local_addr().unwrap().to_string();
    let metrics_addr = r.metrics_addr().map(|a| a.to_string());
    let metrics = r.metrics();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(r.run(async move {
        let _ = stopped.await;
    }));
    (addr, metrics_addr, metrics, stop)
}

/// Open the relay's WebSocket to `query` with an optional `Origin`.
async fn open(
    relay: &str,
    path_and_query: &str,
    origin: Option<&str>,
) -> Result<WebSocketStream<TcpStream>, tokio_tungstenite::tungstenite::Error> {
    let s = TcpStream::connect(relay).await.unwrap();
    let mut req = format!("ws://{relay}{path_and_query}")
        .into_client_request()
        .unwrap();
    if let Some(o) = origin {
        req.headers_mut().insert("origin", o.parse().unwrap());
    }
    tokio_tungstenite::client_async(req, s)
        .await
        .map(|(ws, _)| ws)
}

/// The HTTP status and body of a refused upgrade.
fn refusal(e: tokio_tungstenite::tungstenite::Error) -> (u16, String) {
    match e {
        tokio_tungstenite::tungstenite::Error::Http(r) => (
            r.status().as_u16(),
            String::from_utf8_lossy(r.body().as_deref().unwrap_or_default()).into_owned(),
        ),
        other => panic!("expected an HTTP refusal, got {other}"),
    }
}

/// The reason of the close frame that ends `ws`.
async fn close_reason(ws: &mut WebSocketStream<TcpStream>) -> String {
    use futures::StreamExt;
    loop {
        match tokio::time::timeout(Duration::from_secs(10), ws.next())
            .await
            .expect("the relay closes the connection")
        {
            Some(Ok(Message::Close(Some(f)))) => return f.reason.to_string(),
            Some(Ok(Message::Close(None))) | None | Some(Err(_)) => return String::new(),
            Some(Ok(_)) => {}
        }
    }
}

use rustls::pki_types::pem::PemObject;

async fn metrics_text(addr: &str) -> String {
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).await.unwrap();
    out
}

async fn fixture() -> (Fixture, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let f = Fixture::start("127.0.0.1:0", dir.path(), &[])
        .await
        .unwrap();
    (f, dir)
}

#[tokio::test]
async fn tls_to_an_allowed_target_runs_end_to_end() {
    let (f, _dir) = fixture().await;
    let port = f.addr.port();
    let (relay, maddr, metrics, _stop) = relay(&[&format!("127.0.0.1:{port}")], true, |_| {}).await;
    let ws = open(&relay, &format!("/tcp?host=127.0.0.1&port={port}"), None)
        .await
        .unwrap();
    let resp = https_get(ws, &f, "/json").await;
    let text = String::from_utf8_lossy(&resp);
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    let (up, down) = metrics.bytes();
    assert!(up > 200 && down as usize >= resp.len(), "{up} {down}");
    for _ in 0..100 {
        if metrics.outcome(Outcome::Closed) == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(metrics.outcome(Outcome::Closed), 1);
    assert_eq!(metrics.active(), 0);
    let m = metrics_text(&maddr.unwrap()).await;
    assert!(
        m.contains("webproof_relay_connections_total{outcome=\"closed\"} 1"),
        "{m}"
    );
    assert!(m.contains(&format!(
        "webproof_relay_bytes_total{{direction=\"to_server\"}} {up}"
    )));
}

#[tokio::test]
async fn requests_outside_the_allow_list_are_refused_before_the_upgrade() {
    let (relay, _, metrics, _stop) = relay(&["api.example.com:443"], true, |c| {
        c.origins = vec!["https://app.example".into()];
    })
    .await;
    let ok_origin = Some("https://app.example");
    let (status, body) = refusal(
        open(&relay, "/tcp?host=other.example.com&port=443", ok_origin)
            .await
            .unwrap_err(),
    );
    assert_eq!(status, 403);
    assert!(
        body.contains("other.example.com:443 is not a target"),
        "{body}"
    );
    let (status, _) = refusal(
        open(&relay, "/tcp?host=api.example.com&port=8443", ok_origin)
            .await
            .unwrap_err(),
    );
    assert_eq!(status, 403);
    let (status, body) = refusal(
        open(
            &relay,
            "/tcp?host=api.example.com&port=443",
            Some("https://evil.example"),
        )
        .await
        .unwrap_err(),
    );
    assert_eq!(status, 403);
    assert!(body.contains("origin"), "{body}");
    let (status, body) = refusal(open(&relay, "/session", ok_origin).await.unwrap_err());
    assert_eq!(status, 404);
    assert!(body.contains("/tcp?host=HOST&port=PORT"), "{body}");
    let (status, _) = refusal(
        open(&relay, "/tcp?host=a%20b&port=443", ok_origin)
            .await
            .unwrap_err(),
    );
    assert_eq!(status, 404);
    assert_eq!(metrics.outcome(Outcome::Target), 2);
    assert_eq!(metrics.outcome(Outcome::Origin), 1);
    assert_eq!(metrics.outcome(Outcome::BadRequest), 2);
}

#[tokio::test]
async fn an_allowed_name_on_a_private_address_is_refused_by_the_policy() {
    let (f, _dir) = fixture().await;
    let port = f.addr.port();
    // The name is allowed, but it resolves to loopback, which the default
    // policy refuses (a relay is no way into the operator's network).
    let (relay, _, metrics, _stop) = relay(&[&format!("localhost:{port}")], false, |_| {}).await;
    let mut ws = open(&relay, &format!("/tcp?host=localhost&port={port}"), None)
        .await
        .unwrap();
    let why = close_reason(&mut ws).await;
    assert!(
        why.contains("127.0.0.1") || why.contains("loopback"),
        "{why}"
    );
    assert_eq!(metrics.outcome(Outcome::Address), 1);
    assert_eq!(metrics.bytes(), (0, 0));
}

#[tokio::test]
async fn limits_end_a_connection_with_their_reason() {
    let (f, _dir) = fixture().await;
    let port = f.addr.port();
    let target = format!("127.0.0.1:{port}");
    // Bytes: a TLS handshake alone is more than 1,000 bytes.
    let (relay1, _, m1, _s1) = relay(&[&target], true, |c| c.max_bytes = 1000).await;
    let ws = open(&relay1, &format!("/tcp?host=127.0.0.1&port={port}"), None)
        .await
        .unwrap();
    let resp = https_get(ws, &f, "/json").await;
    assert!(
        resp.is_empty(),
        "a response came through a 1,000-byte limit"
    );
    wait_for(&m1, Outcome::ByteLimit).await;
    // Idle: nobody says anything.
    let (relay2, _, m2, _s2) = relay(&[&target], true, |c| {
        c.idle_timeout = Duration::from_millis(300)
    })
    .await;
    let mut ws = open(&relay2, &format!("/tcp?host=127.0.0.1&port={port}"), None)
        .await
        .unwrap();
    let why = close_reason(&mut ws).await;
    assert!(why.contains("idle timeout"), "{why}");
    assert_eq!(m2.outcome(Outcome::Idle), 1);
    // Capacity: one connection at a time.
    let (relay3, _, m3, _s3) = relay(&[&target], true, |c| c.max_connections = 1).await;
    let _held = open(&relay3, &format!("/tcp?host=127.0.0.1&port={port}"), None)
        .await
        .unwrap();
    let (status, body) = refusal(
        open(&relay3, &format!("/tcp?host=127.0.0.1&port={port}"), None)
            .await
            .unwrap_err(),
    );
    assert_eq!(status, 503);
    assert!(body.contains("limit of 1 connections"), "{body}");
    assert_eq!(m3.outcome(Outcome::Capacity), 1);
}

/// GET `path` from the fixture over TLS through `ws`: what arrived before
/// the connection ended (nothing if the handshake did not finish).
async fn https_get(ws: WebSocketStream<TcpStream>, f: &Fixture, path: &str) -> Vec<u8> {
    let ca = f.certs.ca_pem.clone();
    let request =
        format!("GET {path} HTTP/1.1\r\nHost: webproof.test\r\nConnection: close\r\n\r\n");
    let h = tokio::spawn(async move {
        let mut roots = rustls::RootCertStore::empty();
        for c in rustls::pki_types::CertificateDer::pem_slice_iter(ca.as_bytes()) {
            roots.add(c.unwrap()).unwrap();
        }
        let cfg = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
        let connector = tokio_rustls::TlsConnector::from(Arc::new(cfg));
        let name = rustls::pki_types::ServerName::try_from("webproof.test").unwrap();
        let Ok(mut tls) = connector.connect(name, WsStream::new(ws)).await else {
            return Vec::new();
        };
        // The WebSocket sends what it holds on a flush, not on a write.
        let _ = tls.write_all(request.as_bytes()).await;
        let _ = tls.flush().await;
        let mut out = Vec::new();
        let _ = tls.read_to_end(&mut out).await;
        out
    });
    tokio::time::timeout(Duration::from_secs(10), h)
        .await
        .expect("the connection ends")
        .unwrap()
}

async fn wait_for(m: &RelayMetrics, o: Outcome) {
    for _ in 0..200 {
        if m.outcome(o) == 1 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("no connection ended with {o:?}");
}
