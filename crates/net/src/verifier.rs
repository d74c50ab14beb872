//! The verifier's driver: accepts provers, resolves and connects to the
//! server they name (checking the address it reached against the server
//! policy), relays and records within limits and timeouts, and runs the
//! proof engine. Every protocol decision (admission, the cut at `Close`,
//! the checks before and after the proof, the verdict) is
//! [`webproof_proxy::session::verifier`]'s.

use crate::frame::{read_frame, read_raw_frame, recv_msg_limited, send_msg, write_frame};
use crate::policy::ServerPolicy;
use crate::{timeout, NetError, Result};
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::compat::TokioAsyncReadCompatExt;
use webproof_core::Channel;
use webproof_disclosure::VerifierOutput;
pub use webproof_proxy::protocol::SessionId;
use webproof_proxy::protocol::{
    AttestationReply, ProverMsg, RejectKind, Rejection, RelayFrame, VerifierMsg, MAX_CONTROL_MSG,
    MAX_RELAY_DATA,
};
use webproof_proxy::session::relay_failed;
pub use webproof_proxy::session::verifier::api_key_digest;
use webproof_proxy::session::verifier::{
    verdict, AdmissionPolicy, Admitted, OnProof, VerifierSession,
};
use webproof_proxy::{Direction, Recorder, RecorderLimits, RootStore};
use webproof_tlsproof::session::VerifierPreprocessed;

/// How the verifier runs.
#[derive(Clone, Debug)]
pub struct VerifierConfig {
    /// Trusted roots for server certificates.
    pub roots: RootStore,
    /// Host names connected to a fixed address instead of resolving them.
    pub resolve: HashMap<String, IpAddr>,
    /// Relay limits.
    pub limits: RecorderLimits,
    /// Time allowed for the prover's hello and for connecting to the server.
    pub connect_timeout: Duration,
    /// Longest the relay phase may last.
    pub relay_timeout: Duration,
    /// Longest the relay may sit idle (no byte either way).
    pub idle_timeout: Duration,
    /// Time allowed for the proof phase.
    pub proof_timeout: Duration,
    /// Which server addresses may be contacted (default: public addresses only).
    pub server_policy: ServerPolicy,
    /// SHA-256 digests of the API keys provers must present; empty: no key needed.
    pub api_key_digests: Vec<[u8; 32]>,
    /// Largest control message accepted from a prover (bytes).
    pub max_message: usize,
    /// The key that signs attestations; `None`: this verifier attests nothing.
    pub attestation_key: Option<Arc<webproof_attestation::SigningKey>>,
    /// MPC mode: the largest request (bytes) a hello may ask this verifier
    /// to garble for. It bounds the work a prover gets for free before
    /// touching any server (about 7 MB of tables per KB of request with
    /// AES-128, more with AES-256); at most [`crate::mpc::MAX_REQUEST_LIMIT`].
    pub max_mpc_request: usize,
}

impl Default for VerifierConfig {
    fn default() -> Self {
        VerifierConfig {
            roots: RootStore::webpki_roots(),
            resolve: HashMap::new(),
            limits: RecorderLimits::default(),
            connect_timeout: Duration::from_secs(10),
            relay_timeout: Duration::from_secs(60),
            idle_timeout: Duration::from_secs(15),
            // A 16 MiB response with hidden bytes takes about 3 minutes of
            // one core per party (measured on a shared 2-core machine, see
            // tests/large.rs); small sessions take well under a second.
            proof_timeout: Duration::from_secs(600),
            server_policy: ServerPolicy::public_only(),
            api_key_digests: Vec::new(),
            max_message: MAX_CONTROL_MSG,
            attestation_key: None,
            max_mpc_request: crate::mpc::DEFAULT_MAX_REQUEST,
        }
    }
}

impl VerifierConfig {
    /// Require provers to present `key` (may be called for several keys).
    pub fn require_api_key(&mut self, key: &str) {
        self.api_key_digests.push(api_key_digest(key));
    }
}

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

/// Largest first preprocessing message a prover may send with its hello
/// (the engine checks its exact size: the base OT sender's point).
const MAX_OPENING: usize = 1024;

/// Run one session over any transport (TCP now, WebSocket later), under
/// a fresh session id; the verified output.
pub async fn handle_prover_io<S: AsyncRead + AsyncWrite + Unpin + Send + 'static>(
    prover: S,
    cfg: &VerifierConfig,
) -> Result<VerifierOutput> {
    let id = SessionId::random(&mut rand::rngs::OsRng);
    Ok(verify_session(prover, cfg, id, None).await?.output)
}

/// What runs with a verified session before its verdict is sent (a service
/// stores the result there, so that the id the prover receives already
/// names a stored result). It delays the verdict: keep it short.
pub type BeforeVerdict<'a> = Box<
    dyn FnOnce(Verified) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + 'a>>
        + Send
        + 'a,
>;

/// What a verified session established, as a service keeps it.
#[derive(Clone, Debug)]
pub struct Verified {
    /// The id the verdict gave the prover.
    pub session_id: SessionId,
    /// How the session ran.
    pub mode: crate::Mode,
    /// The verified output (with the disclosed bytes).
    pub output: VerifierOutput,
    /// The attestation sent with the verdict, if the prover asked for one.
    pub attestation: Option<AttestationReply>,
}

/// Run one session over any transport; every verdict it sends names the
/// session `session_id` (the caller draws it, so that it can log and keep
/// the session under the id the prover receives). `before_verdict` runs
/// with a verified session before its verdict goes out.
pub async fn verify_session<S: AsyncRead + AsyncWrite + Unpin + Send + 'static>(
    mut prover: S,
    cfg: &VerifierConfig,
    session_id: SessionId,
    before_verdict: Option<BeforeVerdict<'_>>,
) -> Result<Verified> {
    let mut session = VerifierSession::new();
    // Setup.
    let hello: ProverMsg = timeout(
        cfg.connect_timeout,
        "waiting for the prover's hello",
        recv_msg_limited(&mut prover, "hello", cfg.max_message),
    )
    .await?;
    let policy = AdmissionPolicy {
        api_key_digests: cfg.api_key_digests.clone(),
    };
    let Admitted {
        host,
        port,
        engine,
        mpc,
    } = match session.on_hello(hello, &policy) {
        Ok(a) => a,
        Err(r) => return Err(refuse(&mut prover, r).await),
    };
    if let Some(terms) = mpc {
        return crate::mpc::verify(prover, host, port, terms, cfg, session_id, before_verdict)
            .await;
    }
    // Accepted. The prover's first preprocessing message came with its
    // hello, ahead of the multiplexed section: take it off the link now
    // and give it back to the engine in front of the preprocessing stream.
    send_msg(&mut prover, &session.accepted()).await?;
    let opening_frame = timeout(
        cfg.connect_timeout,
        "waiting for the prover's first preprocessing message",
        read_raw_frame(&mut prover, MAX_OPENING),
    )
    .await?
    .ok_or_else(|| NetError::Disconnected("before the proof setup".into()))?;

    // From here the link carries two streams at once. Preprocessing (the
    // whole of it: base OT, SoftSpokenOT, Ferret's setup iteration and its
    // first main one) starts at once, while the server's address is
    // resolved and its TCP connection opened; the relay stream carries
    // `Ready` (or the refusal) as soon as the server is reachable, and then
    // the TLS session, which runs beside the rest of the preprocessing:
    // the TLS session mostly waits on round trips, the preprocessing mostly
    // computes, and neither waits for the other.
    let (pre, mut prover) = crate::mux::run(prover, |s| {
        let session = &mut session;
        let host = &host;
        async move {
            let crate::mux::Streams {
                relay: mut relay_stream,
                preprocessing,
            } = s;
            // A task of its own: the preprocessing computes in long
            // stretches, which must not hold up the relay.
            let warm = tokio::spawn(timeout(cfg.proof_timeout, "the proof setup", async move {
                let io = crate::frame::Prefixed::new(opening_frame, preprocessing);
                let mut ch = Channel::new(io.compat());
                let mut pre =
                    VerifierPreprocessed::bootstrap(&mut ch, engine, &mut rand::rngs::OsRng)
                        .await
                        .map_err(|e| engine_error("the proof setup", e))?;
                pre.warm_up(&mut ch)
                    .await
                    .map_err(|e| engine_error("the proof setup", e))?;
                crate::mux::close_channel(ch).await?;
                Ok::<_, NetError>(pre)
            }));
            // Dropped (the relay failed first), the task ends too.
            let warm = crate::AbortOnDrop(warm).join("the proof setup task");
            let tls = async move {
                let server = timeout(
                    cfg.connect_timeout,
                    "connecting to the server",
                    connect(cfg, host, port),
                )
                .await;
                let server = match server {
                    Ok(s) => s,
                    Err(e) => {
                        let kind = match e {
                            NetError::Forbidden(_) => RejectKind::Forbidden,
                            NetError::Timeout(_) => RejectKind::Timeout,
                            _ => RejectKind::Unreachable,
                        };
                        let why = Rejection::new(kind, format!("cannot reach {host}:{port}: {e}"));
                        refuse_session(&mut relay_stream, why.clone()).await;
                        return Err(NetError::Refused(why));
                    }
                };
                let ready = session.ready(unix_now(), cfg.limits);
                send_msg(&mut relay_stream, &ready).await?;
                let mut stream = relay(relay_stream, server, cfg, session).await?;
                let _ = stream.shutdown().await;
                Ok::<_, NetError>(())
            };
            // A relay that fails (the server unreachable, limits) ends the
            // preprocessing too: the prover's stream then ends, and it
            // reports the relay's reason.
            let ((), pre) = tokio::try_join!(tls, warm)?;
            Ok(pre)
        }
    })
    .await?;

    // Proof.
    let msg: ProverMsg = timeout(
        cfg.proof_timeout,
        "waiting for the proof",
        recv_msg_limited(&mut prover, "proof", cfg.max_message),
    )
    .await?;
    match session.on_proof(msg, &cfg.roots, cfg.attestation_key.is_some())? {
        OnProof::Verify => {}
        OnProof::Refuse(mut verdict, e) => {
            // The prover is already streaming its proof: send the verdict
            // now (it reads it where it expects the proof's verdict), then
            // read the proof away so that closing does not reset the link
            // before the verdict is read.
            name_session(&mut verdict, session_id);
            let _ = send_msg(&mut prover, &verdict).await;
            drain(&mut prover, cfg.proof_timeout).await;
            return Err(e.into());
        }
    }
    let (mut verdict, result, back) = verify_zk(pre, prover, session, cfg).await;
    name_session(&mut verdict, session_id);
    let attestation = match &verdict {
        VerifierMsg::Verdict { attestation, .. } => attestation.clone(),
        _ => None,
    };
    match back {
        Ok(mut prover) => {
            let verified = result.map(|output| Verified {
                session_id,
                mode: crate::Mode::Proxy,
                output,
                attestation,
            });
            if let (Ok(v), Some(f)) = (&verified, before_verdict) {
                f(v.clone()).await;
            }
            // The prover may already be gone; the verdict stands either way.
            let _ = send_msg(&mut prover, &verdict).await;
            let _ = prover.shutdown().await;
            Ok(verified?)
        }
        // The link is done (lost, or the engine failed on it): the
        // outcome stands.
        Err(link) => Err(match result {
            Err(e) => NetError::Proxy(e),
            Ok(_) => link,
        }),
    }
}

/// Put the session's id on a verdict.
fn name_session(verdict: &mut VerifierMsg, id: SessionId) {
    if let VerifierMsg::Verdict { session_id, .. } = verdict {
        *session_id = Some(id);
    }
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// An engine error on the verifier's side: a lost link is the prover
/// disconnecting.
fn engine_error(phase: &str, e: webproof_core::Error) -> NetError {
    crate::proof_step_error("the prover", phase, e, |e| NetError::Engine {
        phase: phase.to_string(),
        source: e,
    })
}

/// Read and discard what the prover still sends, up to its close, a time
/// limit, or 256 MiB.
async fn drain<S: AsyncRead + AsyncWrite + Unpin>(prover: &mut S, limit: Duration) {
    let mut buf = vec![0u8; 64 << 10];
    let mut total = 0usize;
    let _ = tokio::time::timeout(limit, async {
        while total < 256 << 20 {
            match prover.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => total += n,
            }
        }
    })
    .await;
    let _ = prover.shutdown().await;
}

/// Refuse the session with `why`; the error the verifier reports.
pub(crate) async fn refuse<S: AsyncRead + AsyncWrite + Unpin>(
    prover: &mut S,
    why: Rejection,
) -> NetError {
    refuse_session(prover, why.clone()).await;
    linger(prover).await;
    match why.kind {
        RejectKind::Unauthorized => NetError::Unauthorized(why.detail),
        _ => NetError::Refused(why),
    }
}

/// After a refusal: read away what the prover sent with its hello (its
/// first preprocessing message) until it hangs up, briefly, so that
/// closing with unread input does not reset the connection before the
/// prover has read why.
async fn linger<S: AsyncRead + AsyncWrite + Unpin>(prover: &mut S) {
    drain(prover, Duration::from_millis(500)).await;
}

/// Tell a prover that its session is refused (the service uses this when
/// it is at capacity or shutting down). Best effort: the prover may be gone.
pub async fn refuse_session<S: AsyncRead + AsyncWrite + Unpin>(prover: &mut S, why: Rejection) {
    let _ = send_msg(prover, &VerifierMsg::Refused(why)).await;
    let _ = prover.flush().await;
}

async fn connect(cfg: &VerifierConfig, host: &str, port: u16) -> Result<TcpStream> {
    crate::policy::connect_checked(&cfg.server_policy, &cfg.resolve, host, port).await
}

/// Relay between prover (framed) and server (raw), recording records, until
/// the prover sends `Close`; the session cuts the transcript there and
/// answers with `CloseAck`. Returns the prover stream.
async fn relay<S: AsyncRead + AsyncWrite + Unpin + Send + 'static>(
    prover: S,
    server: TcpStream,
    cfg: &VerifierConfig,
    session: &mut VerifierSession,
) -> Result<S> {
    let (mut pr, mut pw) = tokio::io::split(prover);
    let (mut sr, mut sw) = server.into_split();
    // Frame reads are not cancel-safe: a task reads the prover's frames.
    let (tx, mut rx) = tokio::sync::mpsc::channel::<Result<RelayFrame>>(16);
    let reader = tokio::spawn(async move {
        loop {
            let f = match read_frame(&mut pr, MAX_RELAY_DATA + 1).await {
                Ok(Some(b)) => RelayFrame::decode(&b).map_err(NetError::from),
                Ok(None) => Err(NetError::Disconnected(
                    "prover closed during the relay".into(),
                )),
                Err(e) => Err(e),
            };
            let stop = !matches!(f, Ok(RelayFrame::Data(_)));
            if tx.send(f).await.is_err() || stop {
                return pr;
            }
        }
    });
    let mut rec = Recorder::new(cfg.limits);
    let deadline = tokio::time::Instant::now() + cfg.relay_timeout;
    let mut buf = vec![0u8; MAX_RELAY_DATA];
    let mut server_open = true;
    let mut failure: Option<webproof_proxy::ProxyError> = None;
    let (sent_records, received_records) = loop {
        let idle = tokio::time::sleep(cfg.idle_timeout);
        tokio::select! {
            f = rx.recv() => match f {
                Some(Ok(RelayFrame::Data(d))) => {
                    if failure.is_some() { continue; }
                    if let Err(e) = rec.feed(Direction::Sent, &d) {
                        // Say so now: nothing more reaches the server, so
                        // no answer would come and the prover would wait
                        // for the idle timeout, which names no limit.
                        let e = webproof_proxy::ProxyError::from(e);
                        let _ = write_frame(&mut pw, &relay_failed((&e).into()).encode()).await;
                        return Err(NetError::Proxy(e));
                    }
                    // Once the server side is closed nothing more is
                    // forwarded: the records stay in the transcript (both
                    // parties must hold the same one) but count as not
                    // delivered, and may carry no application data.
                    if server_open {
                        if sw.write_all(&d).await.is_err() {
                            server_open = false;
                            write_frame(&mut pw, &RelayFrame::ServerClosed("server connection failed while writing".into()).encode()).await?;
                        } else {
                            rec.mark_sent_delivered();
                        }
                    }
                }
                Some(Ok(RelayFrame::Close { sent, received })) => break (sent, received),
                Some(Ok(other)) => return Err(NetError::Proxy(webproof_proxy::ProxyError::Protocol(format!("unexpected relay frame from the prover: {other:?}")))),
                Some(Err(e)) => return Err(e),
                None => return Err(NetError::Disconnected("prover reader ended".into())),
            },
            n = sr.read(&mut buf), if server_open => {
                match n {
                    Ok(0) | Err(_) => {
                        server_open = false;
                        let why = if matches!(n, Ok(0)) { "server closed the connection" } else { "server connection failed" };
                        write_frame(&mut pw, &RelayFrame::ServerClosed(why.into()).encode()).await?;
                    }
                    Ok(n) => {
                        if let Err(e) = rec.feed(Direction::Received, &buf[..n]) {
                            server_open = false;
                            write_frame(&mut pw, &RelayFrame::ServerClosed(format!("relay stopped: {e}")).encode()).await?;
                            failure = Some(e.into());
                            continue;
                        }
                        write_frame(&mut pw, &RelayFrame::Data(buf[..n].to_vec()).encode()).await?;
                    }
                }
            },
            _ = idle => {
                let why = Rejection::new(RejectKind::Timeout, "relay idle timeout");
                let _ = write_frame(&mut pw, &relay_failed(why).encode()).await;
                return Err(NetError::Timeout(format!("relay idle for {} ms", cfg.idle_timeout.as_millis())));
            },
            _ = tokio::time::sleep_until(deadline) => {
                let why = Rejection::new(RejectKind::Timeout, "relay took too long");
                let _ = write_frame(&mut pw, &relay_failed(why).encode()).await;
                return Err(NetError::Timeout(format!("relay longer than {} ms", cfg.relay_timeout.as_millis())));
            },
        }
    };
    drop(sw);
    drop(sr);
    let pr = reader
        .await
        .map_err(|e| NetError::Disconnected(format!("prover reader: {e}")))?;
    let prover = pr.unsplit(pw);
    let mut prover = prover;
    if let Some(f) = failure {
        let _ = write_frame(&mut prover, &relay_failed((&f).into()).encode()).await;
        return Err(NetError::Proxy(f));
    }
    let (ack, cut) = session.on_close(rec.finish(), sent_records, received_records);
    if let Err(e) = cut {
        let _ = write_frame(&mut prover, &ack.encode()).await;
        return Err(NetError::Proxy(e));
    }
    write_frame(&mut prover, &ack.encode()).await?;
    Ok(prover)
}

/// The proof: run the engine on the session's statement and context over
/// the link, and let the session conclude from its result (off the async
/// workers, within the proof deadline). Returns the verdict to send, the
/// outcome, and the link (unless the link itself failed).
async fn verify_zk<S: AsyncRead + AsyncWrite + Unpin + Send + 'static>(
    pre: VerifierPreprocessed,
    prover: S,
    mut session: VerifierSession,
    cfg: &VerifierConfig,
) -> (
    VerifierMsg,
    webproof_proxy::error::Result<VerifierOutput>,
    Result<S>,
) {
    let deadline = tokio::time::Instant::now() + cfg.proof_timeout;
    let (Some(statement), Some(context)) = (session.zk_statement(), session.proof_context()) else {
        let (verdict, out) = session.conclude(Err("no proof to run".into()), None);
        return (verdict, out, Ok(prover));
    };
    let ch = Channel::new(prover.compat());
    let run = timeout(
        cfg.proof_timeout,
        "the proof (limit proof_timeout)",
        async {
            Ok(pre
                .verify(ch, statement, &context, &mut rand::rngs::OsRng)
                .await)
        },
    )
    .await;
    match run {
        Ok(Ok((proven, ch))) => {
            let key = cfg.attestation_key.clone();
            let conclude =
                tokio::task::spawn_blocking(move || session.conclude(Ok(&proven), key.as_deref()));
            let (verdict, out) = match tokio::time::timeout_at(deadline, conclude).await {
                Ok(Ok(r)) => r,
                Ok(Err(e)) => failed(webproof_proxy::ProxyError::Protocol(format!(
                    "concluding the proof failed: {e}"
                ))),
                Err(_) => failed(webproof_proxy::ProxyError::Limit(format!(
                    "the proof phase took longer than {} ms",
                    cfg.proof_timeout.as_millis()
                ))),
            };
            let link = ch
                .into_inner()
                .await
                .map(|c| c.into_inner())
                .map_err(|e| NetError::Disconnected(format!("after the proof: {e}")));
            (verdict, out, link)
        }
        Ok(Err(e)) => {
            let (verdict, out) = session.conclude(Err(e.to_string()), None);
            (
                verdict,
                out,
                Err(NetError::Disconnected("proof rejected".into())),
            )
        }
        Err(e) => {
            let out = Err(webproof_proxy::ProxyError::Protocol(e.to_string()));
            (verdict(&out, None), out, Err(e))
        }
    }
}

/// A verdict and outcome for a failure outside the session's conclusion.
fn failed(
    e: webproof_proxy::ProxyError,
) -> (VerifierMsg, webproof_proxy::error::Result<VerifierOutput>) {
    let out = Err(e);
    (verdict(&out, None), out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::recv_msg;
    use webproof_proxy::protocol::PROTOCOL_VERSION;
    use webproof_tlsproof::session::MAX_EXPECTED_COTS;

    /// The relay of a session past its setup, with the default limits.
    async fn relay_session(
        prover: tokio::io::DuplexStream,
        server: TcpStream,
    ) -> (Result<tokio::io::DuplexStream>, VerifierSession) {
        let cfg = VerifierConfig::default();
        let mut session = VerifierSession::new();
        session.ready(0, cfg.limits);
        let r = relay(prover, server, &cfg, &mut session).await;
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
