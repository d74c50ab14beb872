//! Shared helpers of the service tests: the HTTPS fixture, a service on
//! loopback with short timeouts, provers, raw clients.
#![allow(dead_code)]

pub mod pg;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use webproof_net::{Fixture, FixtureCerts, ProveOptions};
use webproof_service::config::{FileConfig, LimitsConfig, PolicyConfig, RootsConfig};
use webproof_service::{Addrs, Metrics, Service, ShutdownReport};

pub struct Env {
    pub fixture: Fixture,
    pub dir: tempfile::TempDir,
}

pub async fn env() -> Env {
    let dir = tempfile::tempdir().unwrap();
    let fixture = Fixture::start("127.0.0.1:0", &dir.path().join("fixture"), &[])
        .await
        .unwrap();
    Env { fixture, dir }
}

impl Env {
    /// A configuration for a service on loopback that trusts the fixture.
    pub fn config(&self) -> FileConfig {
        FileConfig {
            listen: Some("127.0.0.1:0".into()),
            listen_http: Some("127.0.0.1:0".into()),
            roots: RootsConfig {
                webpki: false,
                ca_certs: vec![self.fixture.certs.ca_path.clone()],
            },
            // The fixture runs on loopback, which the default policy refuses.
            policy: PolicyConfig {
                allow: vec!["127.0.0.0/8".parse().unwrap()],
                deny: vec![],
            },
            limits: LimitsConfig {
                connect_timeout_secs: Duration::from_secs(5),
                relay_timeout_secs: Duration::from_secs(20),
                idle_timeout_secs: Duration::from_secs(5),
                proof_timeout_secs: Duration::from_secs(30),
                session_timeout_secs: Duration::from_secs(60),
                shutdown_grace_secs: Duration::from_secs(20),
                ..LimitsConfig::default()
            },
            base_dir: self.dir.path().to_path_buf(),
            ..FileConfig::default()
        }
    }

    /// A certificate for the service's own TLS listeners (CA PEM returned).
    pub fn service_cert(&self, cfg: &mut FileConfig, addr: Option<&str>) -> String {
        let dir = self.dir.path().join("service-cert");
        let certs = FixtureCerts::generate(&dir, &[]).unwrap();
        cfg.listen_tls = Some(webproof_service::config::TlsListenConfig {
            addr: addr.map(String::from),
            cert: dir.join("cert.pem"),
            key: dir.join("key.pem"),
        });
        certs.ca_pem
    }

    /// Options to prove `path` on the fixture through `verifier`.
    pub fn prove_opts(&self, verifier: &str, path: &str) -> ProveOptions {
        let mut o = ProveOptions::new(
            verifier,
            &format!("https://localhost:{}{path}", self.fixture.addr.port()),
        )
        .unwrap();
        o.ca_pems
            .push(self.fixture.certs.ca_pem.as_bytes().to_vec());
        o.timeout = Duration::from_secs(60);
        o
    }
}

pub struct Running {
    pub addrs: Addrs,
    pub metrics: Arc<Metrics>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    pub done: tokio::task::JoinHandle<ShutdownReport>,
}

pub async fn start(cfg: &FileConfig) -> Running {
    let service = Service::bind(cfg.build().unwrap()).await.unwrap();
    let addrs = service.addrs();
    let metrics = service.metrics();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let done = tokio::spawn(service.run(async move {
        let _ = rx.await;
    }));
    Running {
        addrs,
        metrics,
        stop: Some(tx),
        done,
    }
}

impl Running {
    pub fn tcp(&self) -> String {
        self.addrs.tcp.unwrap().to_string()
    }
    pub fn ws(&self) -> String {
        format!("ws://{}/v1/session", self.addrs.http.unwrap())
    }
    /// Signal shutdown (the report comes from `done`).
    pub fn signal_stop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
    }
    pub async fn stop(mut self) -> ShutdownReport {
        self.signal_stop();
        tokio::time::timeout(Duration::from_secs(30), self.done)
            .await
            .expect("service stops")
            .unwrap()
    }
}

/// Wait until `f` holds, at most `limit`.
pub async fn wait_until(what: &str, limit: Duration, f: impl Fn() -> bool) {
    let start = Instant::now();
    while !f() {
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// `GET path` over HTTP/1.1; (status, body).
pub async fn http_get(addr: SocketAddr, path: &str) -> (u16, String) {
    http_request(
        addr,
        &format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
    )
    .await
}

pub async fn http_request(addr: SocketAddr, request: &str) -> (u16, String) {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(request.as_bytes()).await.unwrap();
    // Up to the end of the body (Content-Length) or of the stream.
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), async {
        let mut b = [0u8; 4096];
        loop {
            if let Some(p) = out.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&out[..p]).to_ascii_lowercase();
                let len = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .and_then(|v| v.trim().parse::<usize>().ok())
                    .unwrap_or(0);
                if out.len() >= p + 4 + len {
                    break;
                }
            }
            match s.read(&mut b).await {
                Ok(0) | Err(_) => break,
                Ok(n) => out.extend_from_slice(&b[..n]),
            }
        }
    })
    .await
    .expect("HTTP response in time");
    let text = String::from_utf8_lossy(&out).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

/// A frame: little-endian u32 length, then the payload.
pub fn frame(payload: &[u8]) -> Vec<u8> {
    let mut v = (payload.len() as u32).to_le_bytes().to_vec();
    v.extend_from_slice(payload);
    v
}

/// A valid hello for the fixture.
pub fn hello(env: &Env) -> Vec<u8> {
    frame(&webproof_proxy::protocol::encode(
        &webproof_proxy::protocol::ProverMsg::Hello {
            version: webproof_proxy::protocol::PROTOCOL_VERSION,
            host: "localhost".into(),
            port: env.fixture.addr.port(),
            api_key: None,
            expected_cots: 1_000_000,
            mpc: None,
        },
    ))
}

/// Read until EOF or error, at most `limit`; returns the bytes read.
pub async fn read_until_closed<S: tokio::io::AsyncRead + Unpin>(
    s: &mut S,
    limit: Duration,
) -> Vec<u8> {
    let mut out = Vec::new();
    let r = tokio::time::timeout(limit, async {
        let mut b = [0u8; 4096];
        loop {
            match s.read(&mut b).await {
                Ok(0) | Err(_) => break,
                Ok(n) => out.extend_from_slice(&b[..n]),
            }
        }
    })
    .await;
    assert!(r.is_ok(), "the service did not close the connection");
    out
}

/// Serve HTTP/1.1 on `l` until the test ends, each request answered by
/// `answer` (a webhook receiver's behaviour).
pub fn serve_http<F, Fut>(l: tokio::net::TcpListener, answer: F)
where
    F: Fn(hyper::Request<hyper::body::Incoming>) -> Fut + Clone + Send + Sync + 'static,
    Fut: std::future::Future<Output = hyper::Response<http_body_util::Full<hyper::body::Bytes>>>
        + Send
        + 'static,
{
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = l.accept().await else {
                return;
            };
            let answer = answer.clone();
            tokio::spawn(async move {
                let svc = hyper::service::service_fn(move |req| {
                    let answer = answer.clone();
                    async move { Ok::<_, std::convert::Infallible>(answer(req).await) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(tcp), svc)
                    .await;
            });
        }
    });
}
