//! The verifier on tokio: accepts provers over TCP or WebSocket and runs
//! `webproof_session`'s verifier run on each ([`verify_session`]), with
//! the server reached under the address policy ([`crate::policy`]).
//! Every protocol decision (admission, the relay's cut, the checks before
//! and after the proof, the verdict) is the session's.

use crate::runtime::{PolicyConnector, TokioLink, TokioRuntime};
use crate::{NetError, Result};
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::compat::TokioAsyncReadCompatExt;
use webproof_disclosure::VerifierOutput;
use webproof_proxy::protocol::Rejection;
pub use webproof_session::verifier::{
    api_key_digest, BeforeVerdict, SessionId, Verified, VerifierConfig,
};

/// A verifier listening for provers.
pub struct Verifier {
    listener: TcpListener,
    cfg: Arc<VerifierConfig>,
}

impl Verifier {
    /// Bind to `addr`.
    pub async fn bind(addr: &str, cfg: VerifierConfig) -> Result<Self> {
        let listener = TcpListener::bind(addr)
            .await
            .map_err(NetError::io(format!("binding {addr}")))?;
        Ok(Verifier {
            listener,
            cfg: Arc::new(cfg),
        })
    }

    /// The bound address.
    pub fn local_addr(&self) -> Result<SocketAddr> {
        self.listener
            .local_addr()
            .map_err(NetError::io("local address"))
    }

    /// Serve exactly one prover (tests and the demo).
    pub async fn serve_one(self) -> Result<VerifierOutput> {
        let (stream, _) = self
            .listener
            .accept()
            .await
            .map_err(NetError::io("accept"))?;
        handle_prover(stream, &self.cfg).await
    }

    /// Serve exactly one prover over WebSocket at `/v1/session` (the
    /// browser prover's transport; `webproof serve --once --listen-http`).
    /// Connections whose upgrade fails (another path, not a WebSocket) are
    /// answered with an error and do not count as the one session.
    pub async fn serve_one_ws(self) -> Result<VerifierOutput> {
        use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
        use tokio_tungstenite::tungstenite::http::StatusCode;
        loop {
            let (stream, peer) = self
                .listener
                .accept()
                .await
                .map_err(NetError::io("accept"))?;
            crate::transport::tune_link(&stream);
            // tungstenite's callback type fixes the error response's size.
            #[allow(clippy::result_large_err)]
            let check_path = |req: &Request, resp: Response| {
                if req.uri().path() == crate::transport::WS_SESSION_PATH {
                    Ok(resp)
                } else {
                    let mut e = ErrorResponse::new(Some(format!(
                        "not found: the session is at {}\n",
                        crate::transport::WS_SESSION_PATH
                    )));
                    *e.status_mut() = StatusCode::NOT_FOUND;
                    Err(e)
                }
            };
            match tokio_tungstenite::accept_hdr_async_with_config(
                stream,
                check_path,
                Some(crate::transport::ws_config()),
            )
            .await
            {
                Ok(ws) => {
                    return handle_prover_io(crate::transport::WsStream::new(ws), &self.cfg).await
                }
                Err(e) => tracing::debug!(%peer, "WebSocket upgrade refused: {e}"),
            }
        }
    }
}

/// Run one session with a connected prover.
pub async fn handle_prover(stream: TcpStream, cfg: &VerifierConfig) -> Result<VerifierOutput> {
    crate::transport::tune_link(&stream);
    handle_prover_io(stream, cfg).await
}

/// Run one session over any transport (TCP, WebSocket), under a fresh
/// session id; the verified output.
pub async fn handle_prover_io<S: AsyncRead + AsyncWrite + Unpin + Send + 'static>(
    prover: S,
    cfg: &VerifierConfig,
) -> Result<VerifierOutput> {
    let id = SessionId::random(&mut rand::rngs::OsRng);
    Ok(verify_session(prover, cfg, id, None).await?.output)
}

/// Run one session over any transport; every verdict it sends names the
/// session `session_id` (the caller draws it, so that it can log and keep
/// the session under the id the prover receives). `before_verdict` runs
/// with a verified session before its verdict goes out.
pub async fn verify_session<S: AsyncRead + AsyncWrite + Unpin + Send + 'static>(
    prover: S,
    cfg: &VerifierConfig,
    session_id: SessionId,
    before_verdict: Option<BeforeVerdict<'_>>,
) -> Result<Verified> {
    let rt = TokioRuntime::new();
    let server = PolicyConnector::of(cfg);
    // Boxed as `Send` here, where every type is concrete: the service
    // spawns sessions on tokio's pool, and the compiler cannot prove the
    // generic run `Send` for all lifetimes of its borrowed arguments.
    let run: futures::future::BoxFuture<'_, Result<Verified>> =
        Box::pin(webproof_session::verifier::verify(
            &rt,
            TokioLink::new(prover),
            &server,
            cfg,
            session_id,
            before_verdict,
        ));
    run.await
}

/// Tell a prover that its session is refused (the service uses this when
/// it is at capacity or shutting down). Best effort: the prover may be gone.
pub async fn refuse_session<S: AsyncRead + AsyncWrite + Unpin>(prover: &mut S, why: Rejection) {
    webproof_session::verifier::refuse_session(&mut prover.compat(), why).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::{recv_msg, write_frame};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use webproof_proxy::protocol::PROTOCOL_VERSION;
    use webproof_proxy::protocol::{RejectKind, RelayFrame, VerifierMsg, MAX_RELAY_DATA};
    use webproof_proxy::session::verifier::VerifierSession;
    use webproof_proxy::Direction;
    use webproof_tlsproof::session::MAX_EXPECTED_COTS;

    /// The relay of a session past its setup, with the default limits.
    async fn relay_session(
        prover: tokio::io::DuplexStream,
        server: TcpStream,
    ) -> (Result<()>, VerifierSession) {
        let cfg = VerifierConfig::default();
        let mut session = VerifierSession::new();
        session.ready(0, cfg.limits);
        let r = webproof_session::proxy::verifier::relay(
            &TokioRuntime::new(),
            prover.compat(),
            server.compat(),
            &cfg,
            &mut session,
        )
        .await;
        (r, session)
    }

    /// A hello whose expected size is missing, zero or absurd is refused
    /// with a reason, before any preprocessing or server connection; so is
    /// one that is not a hello at all.
    #[tokio::test]
    async fn hellos_with_unusable_sizes_are_refused() {
        let hello = |expected: &str| {
            format!(
                r#"{{"hello":{{"version":{PROTOCOL_VERSION},"host":"example.com","port":443{expected}}}}}"#
            )
        };
        let cases = [
            (hello(""), "expected_cots 0 outside"),
            (hello(r#","expected_cots":0"#), "expected_cots 0 outside"),
            (
                hello(&format!(r#","expected_cots":{}"#, MAX_EXPECTED_COTS + 1)),
                "outside 1..=",
            ),
            (
                hello(r#","expected_cots":18446744073709551615"#),
                "outside 1..=",
            ),
        ];
        for (msg, why) in cases {
            let (mut prover, verifier) = tokio::io::duplex(1 << 16);
            let cfg = VerifierConfig::default();
            let task = tokio::spawn(async move { handle_prover_io(verifier, &cfg).await });
            write_frame(&mut prover, msg.as_bytes()).await.unwrap();
            // The preprocessing's first message follows the hello, as an
            // honest prover sends it; the verifier reads it away.
            write_frame(&mut prover, &[7u8; 32]).await.unwrap();
            match recv_msg(&mut prover, "answer").await.unwrap() {
                VerifierMsg::Refused(r) => {
                    assert_eq!(r.kind, RejectKind::SessionSize);
                    assert!(r.detail.contains(why), "{r}");
                }
                other => panic!("{other:?}"),
            }
            drop(prover);
            let r = task.await.unwrap();
            assert!(matches!(r, Err(NetError::Refused(_))), "{r:?}");
        }
        // A size that does not parse as a u64 is not a hello at all.
        for bad in [r#","expected_cots":-1"#, r#","expected_cots":"many""#] {
            let (mut prover, verifier) = tokio::io::duplex(1 << 16);
            let cfg = VerifierConfig::default();
            let task = tokio::spawn(async move { handle_prover_io(verifier, &cfg).await });
            write_frame(&mut prover, hello(bad).as_bytes())
                .await
                .unwrap();
            let r = task.await.unwrap();
            assert!(matches!(r, Err(NetError::Proxy(_))), "{bad}: {r:?}");
        }
    }

    /// The relay ends at the prover's `Close`, cut at its record counts:
    /// server records relayed after the prover stopped reading are dropped
    /// (and the digest covers the cut transcript); a `Close` naming records
    /// the verifier never relayed, or other client records, is refused.
    #[tokio::test]
    async fn close_cuts_the_transcript_where_the_prover_stopped() {
        // Three server records, client record header then payload.
        let server_bytes: Vec<u8> = [1u8, 2, 3]
            .iter()
            .flat_map(|&b| [23u8, 3, 3, 0, 2, b, b])
            .collect();
        let client_record = [23u8, 3, 3, 0, 1, 9];
        for (sent, received, ok) in [
            (1, 1, true),
            (1, 3, true),
            (1, 0, true),
            (1, 4, false),
            (0, 1, false),
            (2, 1, false),
        ] {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            let bytes = server_bytes.clone();
            let server = tokio::spawn(async move {
                let (mut s, _) = listener.accept().await.unwrap();
                let mut got = [0u8; 6];
                s.read_exact(&mut got).await.unwrap();
                s.write_all(&bytes).await.unwrap();
                // Stay open until the verifier hangs up.
                let mut rest = Vec::new();
                let _ = s.read_to_end(&mut rest).await;
            });
            let server_conn = TcpStream::connect(addr).await.unwrap();
            let (mut prover, verifier_end) = tokio::io::duplex(1 << 16);
            let relay_task = tokio::spawn(relay_session(verifier_end, server_conn));
            write_frame(
                &mut prover,
                &RelayFrame::Data(client_record.to_vec()).encode(),
            )
            .await
            .unwrap();
            // Wait until all three server records were relayed.
            let mut relayed = Vec::new();
            while relayed.len() < server_bytes.len() {
                let f = crate::frame::read_frame(&mut prover, MAX_RELAY_DATA + 1)
                    .await
                    .unwrap()
                    .unwrap();
                match RelayFrame::decode(&f).unwrap() {
                    RelayFrame::Data(d) => relayed.extend_from_slice(&d),
                    other => panic!("{other:?}"),
                }
            }
            write_frame(&mut prover, &RelayFrame::Close { sent, received }.encode())
                .await
                .unwrap();
            let ack = crate::frame::read_frame(&mut prover, MAX_RELAY_DATA + 1)
                .await
                .unwrap()
                .unwrap();
            let result = relay_task.await.unwrap();
            server.abort();
            match (RelayFrame::decode(&ack).unwrap(), result) {
                (RelayFrame::CloseAck(Ok(digest)), (Ok(_), session)) if ok => {
                    let t = session.transcript().unwrap();
                    assert_eq!(t.sent.len(), 1);
                    assert_eq!(t.received.len(), received as usize);
                    let kept: Vec<u8> = t.received.iter().flat_map(|r| r.payload.clone()).collect();
                    let want: Vec<u8> = [1u8, 2, 3][..received as usize]
                        .iter()
                        .flat_map(|&b| [b, b])
                        .collect();
                    assert_eq!(kept, want);
                    assert_eq!(digest, t.digest());
                }
                (RelayFrame::CloseAck(Err(why)), (Err(NetError::Proxy(_)), _)) if !ok => {
                    assert!(why.detail.contains("the prover closed after"), "{why}");
                }
                (ack, (r, s)) => panic!(
                    "Close {{ {sent}, {received} }}: {ack:?} {:?} {:?}",
                    r.map(|_| ()),
                    s.transcript()
                ),
            }
        }
    }

    /// The review's "sent is not delivered": once the server has closed,
    /// a client record the prover still sends is recorded (both parties
    /// must hold the same transcript) but not forwarded, and counts as
    /// undelivered, so the conclusion refuses it if it carries data.
    #[tokio::test]
    async fn records_after_the_server_closed_are_not_delivered() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = tokio::spawn(async move {
            let (mut s, _) = listener.accept().await.unwrap();
            let mut got = [0u8; 6];
            s.read_exact(&mut got).await.unwrap();
            s.write_all(&[23u8, 3, 3, 0, 2, 1, 1]).await.unwrap();
            // Answer and hang up; whatever comes later is never read.
        });
        let server_conn = TcpStream::connect(addr).await.unwrap();
        let (mut prover, verifier_end) = tokio::io::duplex(1 << 16);
        let relay_task = tokio::spawn(relay_session(verifier_end, server_conn));
        let client_record = [23u8, 3, 3, 0, 1, 9];
        write_frame(
            &mut prover,
            &RelayFrame::Data(client_record.to_vec()).encode(),
        )
        .await
        .unwrap();
        loop {
            let f = crate::frame::read_frame(&mut prover, MAX_RELAY_DATA + 1)
                .await
                .unwrap()
                .unwrap();
            if let RelayFrame::ServerClosed(_) = RelayFrame::decode(&f).unwrap() {
                break;
            }
        }
        server.await.unwrap();
        write_frame(
            &mut prover,
            &RelayFrame::Data(client_record.to_vec()).encode(),
        )
        .await
        .unwrap();
        write_frame(
            &mut prover,
            &RelayFrame::Close {
                sent: 2,
                received: 1,
            }
            .encode(),
        )
        .await
        .unwrap();
        let (r, session) = relay_task.await.unwrap();
        r.unwrap();
        let t = session.transcript().unwrap();
        assert_eq!(t.sent.len(), 2);
        assert_eq!(t.sent_delivered, 1);
        assert_eq!(
            t.order,
            vec![Direction::Sent, Direction::Received, Direction::Sent]
        );
    }
}
