//! The HTTP listener: `/health` (JSON), `/metrics` (Prometheus text) and
//! the WebSocket endpoint `/v1/session`, whose binary messages carry the
//! protocol byte stream (see `webproof_net::transport::WsStream`).
//!
//! HTTP/1.1 only (hyper); the WebSocket upgrade is answered here (RFC 6455
//! handshake) and the upgraded connection becomes a session like a TCP one.

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
        async move { Ok::<_, Infallible>(route(&sh, peer, ws_transport, req)) }
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

fn route(
    sh: &Arc<Shared>,
    peer: SocketAddr,
    ws_transport: Transport,
    req: Request<Incoming>,
) -> Response<Full<Bytes>> {
    let path = req.uri().path();
    match (req.method(), path) {
        (&Method::GET, "/health") => {
            let body = serde_json::json!({
                "ok": true,
                "sessions_active": sh.metrics.active(),
                "max_sessions": sh.max_sessions,
                "version": env!("CARGO_PKG_VERSION"),
            });
            text(StatusCode::OK, "application/json", body.to_string())
        }
        (&Method::GET, "/metrics") => text(
            StatusCode::OK,
            "text/plain; version=0.0.4; charset=utf-8",
            sh.metrics.render(),
        ),
        (&Method::GET, p) if p == WS_SESSION_PATH => upgrade(sh, peer, ws_transport, req),
        (_, "/health" | "/metrics") | (_, WS_SESSION_PATH) => text(
            StatusCode::METHOD_NOT_ALLOWED,
            "text/plain",
            "method not allowed\n",
        ),
        _ => text(
            StatusCode::NOT_FOUND,
            "text/plain",
            "not found: try /health, /metrics or the WebSocket endpoint /v1/session\n",
        ),
    }
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
