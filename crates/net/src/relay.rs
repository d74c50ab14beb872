//! `webproof relay`: a WebSocket-to-TCP relay, so that a prover in a web
//! page (which can open WebSockets but no TCP sockets) reaches an HTTPS
//! server itself, as MPC mode needs: the page's TLS runs end to end
//! through the relay, which sees only ciphertext.
//!
//! A client opens `ws[s]://relay/tcp?host=H&port=P`. Before the upgrade the
//! relay checks the path, the page's `Origin` (if origins are configured)
//! and the target against the allow-list, and answers 403 (or 503 at
//! capacity) with the reason; after it, it resolves the name and connects
//! under the service's address policy ([`crate::policy`], also checked on
//! the address reached), then moves binary messages one way and TCP bytes
//! the other until either side closes or a limit (bytes, idle time,
//! duration) ends it with a WebSocket close frame that says which. An
//! open relay would be a proxy to anything for any web page: the
//! allow-list is required, and private addresses need `allow_private`.
//!
//! Counters for Prometheus are in [`RelayMetrics`].

use crate::policy::ServerPolicy;
use futures::{SinkExt, StreamExt};
use std::collections::HashMap;
use std::fmt::{self, Write as _};
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::http::StatusCode;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::Message;

/// The path clients open.
pub const RELAY_PATH: &str = "/tcp";

/// A host (or `*.` a domain, or `*` any host) and a port a client may
/// reach.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    host: String,
    port: u16,
}

impl Target {
    /// Whether `host:port` is this target (names compared without case).
    pub fn matches(&self, host: &str, port: u16) -> bool {
        if port != self.port {
            return false;
        }
        let host = host.to_ascii_lowercase();
        match self.host.strip_prefix("*.") {
            _ if self.host == "*" => true,
            // `*.example.com` matches names under it, not the apex.
            Some(domain) => host
                .strip_suffix(domain)
                .is_some_and(|rest| rest.len() > 1 && rest.ends_with('.')),
            None => host == self.host,
        }
    }
}

impl FromStr for Target {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (host, port) = s
            .rsplit_once(':')
            .ok_or_else(|| format!("{s:?}: expected HOST:PORT, e.g. api.example.com:443"))?;
        let port = port
            .parse::<u16>()
            .ok()
            .filter(|&p| p != 0)
            .ok_or_else(|| format!("{s:?}: {port:?} is not a port"))?;
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let bare = host.strip_prefix("*.").unwrap_or(host);
        if host.is_empty() || (host != "*" && bare.contains('*')) {
            return Err(format!(
                "{s:?}: the host is a name, an address, *.DOMAIN or *"
            ));
        }
        Ok(Target {
            host: host.to_ascii_lowercase(),
            port,
        })
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.host, self.port)
    }
}

/// What the relay allows and how long a connection may last.
#[derive(Clone, Debug)]
pub struct RelayConfig {
    /// The targets clients may reach; none: every request is refused.
    pub targets: Vec<Target>,
    /// The address classes a target may resolve to.
    pub policy: ServerPolicy,
    /// Names pinned to addresses (trusted as configured, as the verifier's).
    pub resolve: HashMap<String, IpAddr>,
    /// The `Origin` headers accepted (`https://app.example`); empty: any
    /// (native clients send none).
    pub origins: Vec<String>,
    /// Connections relayed at once; more are answered 503.
    pub max_connections: usize,
    /// Bytes one connection may move, both directions together.
    pub max_bytes: u64,
    /// A connection with no bytes either way for this long is closed.
    pub idle_timeout: Duration,
    /// A connection is closed after this long, whatever it does.
    pub max_duration: Duration,
}

impl Default for RelayConfig {
    fn default() -> Self {
        RelayConfig {
            targets: Vec::new(),
            policy: ServerPolicy::public_only(),
            resolve: HashMap::new(),
            origins: Vec::new(),
            max_connections: 256,
            // An MPC session's server traffic is the request and the
            // response: well under this for the responses MPC mode proves.
            max_bytes: 64 << 20,
            idle_timeout: Duration::from_secs(60),
            max_duration: Duration::from_secs(600),
        }
    }
}

/// Why a connection was refused or ended, as the metrics name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Relayed until one side closed.
    Closed,
    /// Not the relay's path, or no valid `host`/`port`.
    BadRequest,
    /// The `Origin` is not one of the configured.
    Origin,
    /// The target is not on the allow-list.
    Target,
    /// Every address of the target is of a class the policy refuses.
    Address,
    /// The target could not be reached.
    Connect,
    /// The relay was at `max_connections`.
    Capacity,
    /// Closed at `max_bytes`.
    ByteLimit,
    /// Closed after `idle_timeout`.
    Idle,
    /// Closed after `max_duration`.
    Duration,
}

impl Outcome {
    const ALL: [Outcome; 10] = [
        Outcome::Closed,
        Outcome::BadRequest,
        Outcome::Origin,
        Outcome::Target,
        Outcome::Address,
        Outcome::Connect,
        Outcome::Capacity,
        Outcome::ByteLimit,
        Outcome::Idle,
        Outcome::Duration,
    ];

    /// The label value in the metrics.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Closed => "closed",
            Outcome::BadRequest => "bad_request",
            Outcome::Origin => "origin",
            Outcome::Target => "target",
            Outcome::Address => "address",
            Outcome::Connect => "connect",
            Outcome::Capacity => "capacity",
            Outcome::ByteLimit => "byte_limit",
            Outcome::Idle => "idle",
            Outcome::Duration => "duration",
        }
    }
}

/// The relay's counters.
#[derive(Debug, Default)]
pub struct RelayMetrics {
    outcomes: [AtomicU64; 10],
    active: AtomicU64,
    to_server: AtomicU64,
    to_client: AtomicU64,
}

impl RelayMetrics {
    fn count(&self, o: Outcome) {
        self.outcomes[o as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// Connections that ended with `o`.
    pub fn outcome(&self, o: Outcome) -> u64 {
        self.outcomes[o as usize].load(Ordering::Relaxed)
    }

    /// Connections being relayed now.
    pub fn active(&self) -> u64 {
        self.active.load(Ordering::Relaxed)
    }

    /// Bytes relayed to servers and to clients.
    pub fn bytes(&self) -> (u64, u64) {
        (
            self.to_server.load(Ordering::Relaxed),
            self.to_client.load(Ordering::Relaxed),
        )
    }

    /// The Prometheus text exposition.
    pub fn render(&self) -> String {
        let mut s = String::new();
        s.push_str("# HELP webproof_relay_connections_total Connections by how they ended.\n");
        s.push_str("# TYPE webproof_relay_connections_total counter\n");
        for o in Outcome::ALL {
            let _ = writeln!(
                s,
                "webproof_relay_connections_total{{outcome=\"{}\"}} {}",
                o.name(),
                self.outcome(o)
            );
        }
        s.push_str("# HELP webproof_relay_active Connections being relayed.\n");
        s.push_str("# TYPE webproof_relay_active gauge\n");
        let _ = writeln!(s, "webproof_relay_active {}", self.active());
        s.push_str("# HELP webproof_relay_bytes_total Bytes relayed.\n");
        s.push_str("# TYPE webproof_relay_bytes_total counter\n");
        let (up, down) = self.bytes();
        let _ = writeln!(
            s,
            "webproof_relay_bytes_total{{direction=\"to_server\"}} {up}"
        );
        let _ = writeln!(
            s,
            "webproof_relay_bytes_total{{direction=\"to_client\"}} {down}"
        );
        s
    }
}

/// A bound relay.
pub struct Relay {
    listener: TcpListener,
    metrics_listener: Option<TcpListener>,
    cfg: Arc<RelayConfig>,
    metrics: Arc<RelayMetrics>,
    slots: Arc<Semaphore>,
}

impl Relay {
    /// Bind the relay at `listen` and, if given, its metrics at
    /// `metrics_listen` (`GET /metrics`, for the operator's network only).
    pub async fn bind(
        listen: &str,
        metrics_listen: Option<&str>,
        cfg: RelayConfig,
    ) -> std::io::Result<Relay> {
        let listener = TcpListener::bind(listen).await?;
        let metrics_listener = match metrics_listen {
            Some(a) => Some(TcpListener::bind(a).await?),
            None => None,
        };
        Ok(Relay {
            listener,
            metrics_listener,
            slots: Arc::new(Semaphore::new(cfg.max_connections)),
            cfg: Arc::new(cfg),
            metrics: Arc::new(RelayMetrics::default()),
        })
    }

    /// Where clients connect.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Where the metrics are served, if they are.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics_listener
            .as_ref()
            .and_then(|l| l.local_addr().ok())
    }

    /// The counters.
    pub fn metrics(&self) -> Arc<RelayMetrics> {
        self.metrics.clone()
    }

    /// Relay until `shutdown` resolves; connections open then are left to
    /// finish on their own tasks.
    pub async fn run(self, shutdown: impl Future<Output = ()>) {
        if let Some(l) = self.metrics_listener {
            let m = self.metrics.clone();
            tokio::spawn(serve_metrics(l, m));
        }
        tokio::pin!(shutdown);
        loop {
            let (stream, peer) = tokio::select! {
                _ = &mut shutdown => return,
                r = self.listener.accept() => match r {
                    Ok(x) => x,
                    Err(e) => {
                        tracing::warn!("relay accept: {e}");
                        continue;
                    }
                },
            };
            let (cfg, metrics, slots) =
                (self.cfg.clone(), self.metrics.clone(), self.slots.clone());
            tokio::spawn(async move {
                let outcome = serve(stream, &cfg, &metrics, &slots).await;
                metrics.count(outcome);
                tracing::info!(%peer, outcome = outcome.name(), "relay connection ended");
            });
        }
    }
}

/// What the handshake's check decided.
enum Admission {
    Target(String, u16),
    Refused(Outcome),
}

/// Check a client's upgrade request (path, origin, target).
fn admit(req: &Request, cfg: &RelayConfig) -> Result<(String, u16), (Outcome, String)> {
    if req.uri().path() != RELAY_PATH {
        return Err((
            Outcome::BadRequest,
            format!("not found: the relay is at {RELAY_PATH}?host=HOST&port=PORT"),
        ));
    }
    if !cfg.origins.is_empty() {
        let origin = req
            .headers()
            .get("origin")
            .and_then(|o| o.to_str().ok())
            .unwrap_or("");
        if !cfg.origins.iter().any(|o| o.eq_ignore_ascii_case(origin)) {
            return Err((
                Outcome::Origin,
                format!("origin {origin:?} is not allowed to use this relay"),
            ));
        }
    }
    let (mut host, mut port) = (None, None);
    for pair in req.uri().query().unwrap_or("").split('&') {
        match pair.split_once('=') {
            Some(("host", h)) => host = Some(h.to_string()),
            Some(("port", p)) => port = p.parse::<u16>().ok().filter(|&p| p != 0),
            _ => {}
        }
    }
    let (Some(host), Some(port)) = (host, port) else {
        return Err((
            Outcome::BadRequest,
            format!("the request names no target: use {RELAY_PATH}?host=HOST&port=PORT"),
        ));
    };
    let valid = !host.is_empty()
        && host.len() <= 253
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._:".contains(&b));
    if !valid {
        return Err((Outcome::BadRequest, format!("{host:?} is not a host name")));
    }
    if !cfg.targets.iter().any(|t| t.matches(&host, port)) {
        return Err((
            Outcome::Target,
            format!("{host}:{port} is not a target of this relay"),
        ));
    }
    Ok((host, port))
}

async fn serve(
    stream: TcpStream,
    cfg: &RelayConfig,
    metrics: &RelayMetrics,
    slots: &Arc<Semaphore>,
) -> Outcome {
    let _ = stream.set_nodelay(true);
    let slot = slots.clone().try_acquire_owned().ok();
    let mut admission = Admission::Refused(Outcome::BadRequest);
    let full = slot.is_none();
    // tungstenite's callback type fixes the error response's size.
    #[allow(clippy::result_large_err)]
    let check = |req: &Request, resp: Response| {
        let refuse = |status, why: String| {
            let mut e = ErrorResponse::new(Some(format!("{why}\n")));
            *e.status_mut() = status;
            e
        };
        if full {
            admission = Admission::Refused(Outcome::Capacity);
            return Err(refuse(
                StatusCode::SERVICE_UNAVAILABLE,
                format!(
                    "the relay is at its limit of {} connections; try again shortly",
                    cfg.max_connections
                ),
            ));
        }
        match admit(req, cfg) {
            Ok((h, p)) => {
                admission = Admission::Target(h, p);
                Ok(resp)
            }
            Err((o, why)) => {
                admission = Admission::Refused(o);
                let status = if o == Outcome::BadRequest {
                    StatusCode::NOT_FOUND
                } else {
                    StatusCode::FORBIDDEN
                };
                Err(refuse(status, why))
            }
        }
    };
    let ws = tokio_tungstenite::accept_hdr_async_with_config(
        stream,
        check,
        Some(crate::transport::ws_config()),
    )
    .await;
    let (host, port) = match (ws.is_ok(), admission) {
        (_, Admission::Refused(o)) => return o,
        (true, Admission::Target(h, p)) => (h, p),
        (false, Admission::Target(..)) => return Outcome::BadRequest,
    };
    let mut ws = ws.expect("checked above");
    let server = match crate::policy::connect_checked(&cfg.policy, &cfg.resolve, &host, port).await
    {
        Ok(s) => s,
        Err(e) => {
            let (outcome, code) = match e {
                crate::NetError::Forbidden(_) => (Outcome::Address, CloseCode::Policy),
                _ => (Outcome::Connect, CloseCode::Error),
            };
            close(&mut ws, code, &e.to_string()).await;
            return outcome;
        }
    };
    metrics.active.fetch_add(1, Ordering::Relaxed);
    let outcome = pump(ws, server, cfg, metrics).await;
    metrics.active.fetch_sub(1, Ordering::Relaxed);
    drop(slot);
    outcome
}

/// Send a close frame with a reason (cut to the 123 bytes a close frame
/// holds), best effort.
async fn close<S>(ws: &mut S, code: CloseCode, reason: &str)
where
    S: futures::Sink<Message> + Unpin,
{
    let mut end = reason.len().min(123);
    while !reason.is_char_boundary(end) {
        end -= 1;
    }
    let frame = CloseFrame {
        code,
        reason: reason[..end].to_string().into(),
    };
    let _ = ws.send(Message::Close(Some(frame))).await;
}

async fn pump<S>(ws: S, server: TcpStream, cfg: &RelayConfig, metrics: &RelayMetrics) -> Outcome
where
    S: futures::Stream<Item = Result<Message, tokio_tungstenite::tungstenite::Error>>
        + futures::Sink<Message>
        + Unpin,
{
    let (mut ws_tx, mut ws_rx) = ws.split();
    let (mut tcp_rx, mut tcp_tx) = server.into_split();
    let deadline = Instant::now() + cfg.max_duration;
    let mut idle = Instant::now() + cfg.idle_timeout;
    let mut moved = 0u64;
    let mut buf = vec![0u8; 16 << 10];
    let over = |moved: u64| moved > cfg.max_bytes;
    let ended = loop {
        tokio::select! {
            m = ws_rx.next() => match m {
                Some(Ok(Message::Binary(b))) => {
                    moved += b.len() as u64;
                    if over(moved) {
                        break Outcome::ByteLimit;
                    }
                    metrics.to_server.fetch_add(b.len() as u64, Ordering::Relaxed);
                    idle = Instant::now() + cfg.idle_timeout;
                    if tcp_tx.write_all(&b).await.is_err() {
                        break Outcome::Closed;
                    }
                }
                // Text carries no TLS; pings are answered by tungstenite.
                Some(Ok(Message::Text(_))) => {
                    close(&mut ws_tx, CloseCode::Unsupported, "the relay carries binary messages only").await;
                    return Outcome::BadRequest;
                }
                Some(Ok(_)) => {}
                Some(Err(_)) | None => return Outcome::Closed,
            },
            n = tcp_rx.read(&mut buf) => match n {
                Ok(0) | Err(_) => {
                    let _ = tcp_tx.shutdown().await;
                    close(&mut ws_tx, CloseCode::Normal, "the server closed the connection").await;
                    return Outcome::Closed;
                }
                Ok(n) => {
                    moved += n as u64;
                    if over(moved) {
                        break Outcome::ByteLimit;
                    }
                    metrics.to_client.fetch_add(n as u64, Ordering::Relaxed);
                    idle = Instant::now() + cfg.idle_timeout;
                    if ws_tx.send(Message::Binary(buf[..n].to_vec().into())).await.is_err() {
                        return Outcome::Closed;
                    }
                }
            },
            _ = tokio::time::sleep_until(idle) => break Outcome::Idle,
            _ = tokio::time::sleep_until(deadline) => break Outcome::Duration,
        }
    };
    let why = match ended {
        Outcome::ByteLimit => format!(
            "the relay's limit of {} bytes per connection was reached",
            cfg.max_bytes
        ),
        Outcome::Idle => format!(
            "no bytes either way for {} s (the relay's idle timeout)",
            cfg.idle_timeout.as_secs()
        ),
        _ => format!(
            "the relay's limit of {} s per connection was reached",
            cfg.max_duration.as_secs()
        ),
    };
    close(&mut ws_tx, CloseCode::Policy, &why).await;
    ended
}

/// Serve `GET /metrics` (anything else: 404), one request per connection.
async fn serve_metrics(listener: TcpListener, metrics: Arc<RelayMetrics>) {
    loop {
        let Ok((mut s, _)) = listener.accept().await else {
            continue;
        };
        let metrics = metrics.clone();
        tokio::spawn(async move {
            let mut head = Vec::new();
            let mut b = [0u8; 1024];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 8192 {
                match tokio::time::timeout(Duration::from_secs(5), s.read(&mut b)).await {
                    Ok(Ok(n)) if n > 0 => head.extend_from_slice(&b[..n]),
                    _ => return,
                }
            }
            let (status, body) = if head.starts_with(b"GET /metrics ") {
                ("200 OK", metrics.render())
            } else {
                (
                    "404 Not Found",
                    "the relay's metrics are at /metrics\n".to_string(),
                )
            };
            let resp = format!(
                "HTTP/1.1 {status}\r\ncontent-type: text/plain; version=0.0.4\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = s.write_all(resp.as_bytes()).await;
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse_and_match() {
        let t: Target = "API.example.com:443".parse().unwrap();
        assert!(t.matches("api.example.com", 443));
        assert!(t.matches("Api.Example.Com", 443));
        assert!(!t.matches("api.example.com", 8443));
        assert!(!t.matches("evil-api.example.com", 443));
        let w: Target = "*.example.com:443".parse().unwrap();
        assert!(w.matches("a.example.com", 443));
        assert!(w.matches("a.b.example.com", 443));
        assert!(!w.matches("example.com", 443));
        assert!(!w.matches("aexample.com", 443));
        let any: Target = "*:443".parse().unwrap();
        assert!(any.matches("anything.test", 443));
        assert!(!any.matches("anything.test", 80));
        let v6: Target = "[::1]:443".parse().unwrap();
        assert!(v6.matches("::1", 443));
        for bad in [
            "example.com",
            "example.com:0",
            "example.com:x",
            "a*.example.com:1",
            ":443",
        ] {
            assert!(bad.parse::<Target>().is_err(), "{bad}");
        }
    }
}
