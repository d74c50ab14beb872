//! The HTTP listener: `/health` (JSON liveness), `/ready` (readiness), `/metrics` (Prometheus text), the
//! WebSocket endpoint `/v1/session`, whose binary messages carry the
//! protocol byte stream (see `webproof_net::transport::WsStream`),
//! `/v1/sessions/{id}` (a stored result, for an application's backend with
//! a results API key) and `/v1/info` (what this verifier accepts and the
//! keys it signs with, from its configuration).
//!
//! HTTP/1.1 only (hyper); the WebSocket upgrade is answered here (RFC 6455
//! handshake) and the upgraded connection becomes a session like a TCP one.

use crate::config::ServiceConfig;
use crate::metrics::Transport;
use crate::server::{session, spawn_session, Shared};
use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::Role;
use tokio_tungstenite::WebSocketStream;
use webproof_net::transport::{ws_config, WsStream, WS_SESSION_PATH};

/// Serve one HTTP connection until it closes or the service stops;
/// WebSocket sessions on it are counted under `ws_transport`.
pub(crate) async fn connection<I>(sh: Arc<Shared>, io: I, peer: SocketAddr, ws_transport: Transport)
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let sh2 = sh.clone();
    let svc = hyper::service::service_fn(move |req| {
        let sh = sh2.clone();
        async move { Ok::<_, Infallible>(route(&sh, peer, ws_transport, req).await) }
    });
    let conn = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        // A client that never finishes its request head is dropped.
        .header_read_timeout(Duration::from_secs(10))
        .max_buf_size(64 << 10)
        .serve_connection(TokioIo::new(io), svc)
        .with_upgrades();
    tokio::select! {
        r = conn => if let Err(e) = r { tracing::debug!(%peer, "HTTP connection: {e}") },
        _ = sh.stopping.cancelled() => {}
    }
}

fn text(status: StatusCode, ctype: &'static str, body: impl Into<Bytes>) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(body.into()));
    *r.status_mut() = status;
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(ctype));
    r
}

async fn route(
    sh: &Arc<Shared>,
    peer: SocketAddr,
    ws_transport: Transport,
    req: Request<Incoming>,
) -> Response<Full<Bytes>> {
    let path = req.uri().path();
    if let Some(id) = path.strip_prefix(SESSIONS_PREFIX) {
        return if req.method() == Method::GET {
            let id = id.to_string();
            stored_session(sh, &req, &id).await
        } else {
            text(
                StatusCode::METHOD_NOT_ALLOWED,
                "text/plain",
                "method not allowed\n",
            )
        };
    }
    match (req.method(), path) {
        (&Method::GET, "/v1/info") => text(StatusCode::OK, "application/json", sh.info.to_string()),
        (&Method::GET, "/health") => {
            let body = serde_json::json!({
                "ok": true,
                "sessions_active": sh.metrics.active(),
                "max_sessions": sh.max_sessions,
                "version": env!("CARGO_PKG_VERSION"),
            });
            text(StatusCode::OK, "application/json", body.to_string())
        }
        (&Method::GET, "/ready") => {
            // Readiness, unlike liveness (`/health`): whether a load
            // balancer should send this replica new provers now.
            let active = sh.metrics.active();
            let db_down = sh.results.as_ref().and_then(|r| r.down());
            let why = if sh.draining.is_cancelled() || sh.stopping.is_cancelled() {
                Some("draining: shutting down".to_string())
            } else if let Some(e) = db_down {
                Some(format!("results database unavailable: {e}"))
            } else if active >= sh.max_sessions as u64 {
                Some("at capacity".to_string())
            } else {
                None
            };
            let body = serde_json::json!({
                "ready": why.is_none(),
                "reason": why,
                "sessions_active": active,
                "max_sessions": sh.max_sessions,
            });
            let status = if why.is_none() {
                StatusCode::OK
            } else {
                StatusCode::SERVICE_UNAVAILABLE
            };
            text(status, "application/json", body.to_string())
        }
        (&Method::GET, "/metrics") => text(
            StatusCode::OK,
            "text/plain; version=0.0.4; charset=utf-8",
            sh.metrics.render(),
        ),
        (&Method::GET, p) if p == WS_SESSION_PATH => upgrade(sh, peer, ws_transport, req),
        (_, "/health" | "/ready" | "/metrics" | "/v1/info") | (_, WS_SESSION_PATH) => text(
            StatusCode::METHOD_NOT_ALLOWED,
            "text/plain",
            "method not allowed\n",
        ),
        _ => text(
            StatusCode::NOT_FOUND,
            "text/plain",
            "not found: try /health, /ready, /metrics, /v1/info, /v1/sessions/{id} or the WebSocket \
             endpoint /v1/session\n",
        ),
    }
}

const SESSIONS_PREFIX: &str = "/v1/sessions/";

/// `GET /v1/sessions/{id}`: the stored result, to a results API key.
async fn stored_session(
    sh: &Arc<Shared>,
    req: &Request<Incoming>,
    id: &str,
) -> Response<Full<Bytes>> {
    let Some(r) = &sh.results else {
        return text(
            StatusCode::NOT_FOUND,
            "text/plain",
            "this verifier keeps no results ([results] is not configured)\n",
        );
    };
    let key = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    let allowed = key.is_some_and(|k| {
        r.api_key_digests
            .contains(&webproof_net::verifier::api_key_digest(k))
    });
    if !allowed {
        let mut resp = text(
            StatusCode::UNAUTHORIZED,
            "text/plain",
            "a results API key is required: Authorization: Bearer <key> ([results.api_keys])\n",
        );
        resp.headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        return resp;
    }
    // Ids are written one way only: anything else names no session.
    if id.parse::<webproof_net::verifier::SessionId>().is_err() {
        return text(
            StatusCode::NOT_FOUND,
            "text/plain",
            "no such session (ids are 32 lowercase hex digits)\n",
        );
    }
    match r.store.get(id).await {
        Ok(Some(res)) => text(
            StatusCode::OK,
            "application/json",
            serde_json::Value::Object(res.to_json()).to_string(),
        ),
        Ok(None) => text(
            StatusCode::NOT_FOUND,
            "text/plain",
            "no such session: never verified here, or past the retention\n",
        ),
        Err(e) => {
            tracing::error!("reading a stored result: {e}");
            text(
                StatusCode::SERVICE_UNAVAILABLE,
                "text/plain",
                "the results database failed; see the service's log\n",
            )
        }
    }
}

/// `/v1/info`'s document: what this verifier accepts, from its
/// configuration and the verifier's own lists.
pub(crate) fn info(cfg: &ServiceConfig) -> serde_json::Value {
    use webproof_proxy::CipherSuite;
    let v = &cfg.verifier;
    // The signing key first, then those it replaced: an application
    // trusts all of them, and an attestation names its key by id.
    let key = |vk: &webproof_attestation::VerifyingKey, status: &str| {
        serde_json::json!({
            "key_id": vk.key_id().to_string(),
            "scheme": vk.scheme(),
            "public_key": hex::encode(vk.to_bytes()),
            "status": status,
        })
    };
    let keys: Vec<_> = cfg
        .attestation_key
        .iter()
        .map(|k| key(&k.verifying_key(), "active"))
        .chain(
            cfg.retired_attestation_keys
                .iter()
                .map(|k| key(k, "retired")),
        )
        .collect();
    let names = |it: &mut dyn Iterator<Item = CipherSuite>| -> Vec<&'static str> {
        it.map(CipherSuite::name).collect()
    };
    let mut suites = serde_json::Map::new();
    for m in webproof_net::Mode::ALL {
        let list = match m {
            webproof_net::Mode::Proxy => names(&mut CipherSuite::ALL.into_iter()),
            webproof_net::Mode::Mpc => names(&mut webproof_mpc_tls::hello::SUITES.into_iter()),
        };
        suites.insert(m.name().into(), list.into());
    }
    serde_json::json!({
        "version": env!("CARGO_PKG_VERSION"),
        "protocol_version": webproof_proxy::protocol::PROTOCOL_VERSION,
        "attestation_keys": keys,
        "modes": webproof_net::Mode::ALL.map(|m| m.name()),
        "suites": suites,
        "api_key_required": !v.api_key_digests.is_empty(),
        "results_stored": cfg.results.is_some(),
        "limits": {
            "max_sessions": cfg.max_sessions,
            "max_sent_bytes": v.limits.max_sent_bytes,
            "max_recv_bytes": v.limits.max_recv_bytes,
            "max_sent_records": v.limits.max_sent_records,
            "max_recv_records": v.limits.max_recv_records,
            "max_message_bytes": v.max_message,
            "max_mpc_request_bytes": v.max_mpc_request,
            "session_timeout_secs": cfg.session_timeout.as_secs_f64(),
            "connect_timeout_secs": v.connect_timeout.as_secs_f64(),
            "relay_timeout_secs": v.relay_timeout.as_secs_f64(),
            "idle_timeout_secs": v.idle_timeout.as_secs_f64(),
            "proof_timeout_secs": v.proof_timeout.as_secs_f64(),
        },
    })
}

fn header_has_token(req: &Request<Incoming>, name: header::HeaderName, token: &str) -> bool {
    req.headers().get_all(name).iter().any(|v| {
        v.to_str()
            .map(|s| s.split(',').any(|t| t.trim().eq_ignore_ascii_case(token)))
            .unwrap_or(false)
    })
}

/// Answer a WebSocket upgrade and hand the connection to a session.
fn upgrade(
    sh: &Arc<Shared>,
    peer: SocketAddr,
    transport: Transport,
    mut req: Request<Incoming>,
) -> Response<Full<Bytes>> {
    let bad = |why: &'static str| text(StatusCode::BAD_REQUEST, "text/plain", why);
    if !header_has_token(&req, header::UPGRADE, "websocket")
        || !header_has_token(&req, header::CONNECTION, "upgrade")
    {
        return bad("this endpoint speaks WebSocket only\n");
    }
    if req
        .headers()
        .get(header::SEC_WEBSOCKET_VERSION)
        .map(|v| v.as_bytes())
        != Some(b"13")
    {
        let mut r = text(
            StatusCode::UPGRADE_REQUIRED,
            "text/plain",
            "WebSocket version 13 required\n",
        );
        r.headers_mut().insert(
            header::SEC_WEBSOCKET_VERSION,
            HeaderValue::from_static("13"),
        );
        return r;
    }
    let Some(key) = req.headers().get(header::SEC_WEBSOCKET_KEY) else {
        return bad("missing Sec-WebSocket-Key\n");
    };
    let accept = derive_accept_key(key.as_bytes());
    let on_upgrade = hyper::upgrade::on(&mut req);
    let sh2 = sh.clone();
    spawn_session(sh, async move {
        match on_upgrade.await {
            Ok(upgraded) => {
                let ws = WebSocketStream::from_raw_socket(
                    TokioIo::new(upgraded),
                    Role::Server,
                    Some(ws_config()),
                )
                .await;
                session(sh2, WsStream::new(ws), peer, transport).await
            }
            Err(e) => {
                sh2.metrics.transport_error(transport);
                tracing::debug!(%peer, "WebSocket upgrade failed: {e}");
            }
        }
    });
    let mut r = Response::new(Full::new(Bytes::new()));
    *r.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let h = r.headers_mut();
    h.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
    h.insert(header::CONNECTION, HeaderValue::from_static("Upgrade"));
    h.insert(
        header::SEC_WEBSOCKET_ACCEPT,
        HeaderValue::from_str(&accept).expect("base64 is a valid header value"),
    );
    r
}
