//! Proxy mode's prover run, written once for every runtime: the hello and
//! the proof's opening in one flight; a multiplexed section with the TLS
//! session through the verifier's relay (rustls driven by hand, every
//! record recorded) beside the proof's preprocessing; the `Close` that
//! cuts the transcript; the proof; the verdict.
//!
//! Every decision about a message is `webproof_proxy::session::prover`'s
//! ([`ProverSession`]); this run orders the flights and keeps the clocks.
//! What it takes from the verifier: the hello's answer and `Ready`
//! (checked by the session), the relay's frames (the server's bytes, which
//! rustls checks and the session records), the `CloseAck`'s transcript
//! digest (compared with this side's own recording before the verdict is
//! accepted), and the verdict, whose output the session rebuilds from this
//! side's own data.

use crate::frame::{recv_msg, recv_msg_limited, send_msg, write_frame, FrameReader};
use crate::prover::{Progress, ProveOutcome, ProveStats, Stage};
use crate::runtime::{spawn, timeout, Link, Runtime, Section};
use crate::{Error, Result};
use futures::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use webproof_core::Channel;
use webproof_proxy::protocol::{RelayFrame, MAX_RELAY_DATA, MAX_VERDICT_MSG};
use webproof_proxy::session::prover::{ProverConfig, ProverSession, TlsSecrets};
use webproof_proxy::{CipherSuite, Direction, KxGroup, Recorder, TlsVersion};
use webproof_tls_provider::{take_shared_secret, ClientOptions, CollectingKeyLog};
use webproof_tlsproof::session::ProverOpening;

/// The TLS client's options (the session's own config names what the
/// verifier is told; these say what rustls offers).
#[derive(Clone, Debug, Default)]
pub struct TlsOptions {
    /// Restrict to one TLS version.
    pub version: Option<TlsVersion>,
    /// Suites to offer (empty: all supported).
    pub suites: Vec<CipherSuite>,
    /// Groups to offer (empty: X25519, P-256).
    pub groups: Vec<KxGroup>,
    /// Extra trusted roots (PEM) for the prover's own check.
    pub ca_pems: Vec<Vec<u8>>,
}

/// The prover's proxy-mode run for its requests (one or more on one
/// connection).
pub struct Prover {
    config: ProverConfig,
    tls: TlsOptions,
    progress: Option<Progress>,
    /// While requests are queued behind a response: that response's
    /// number (from 1) and how many requests there are; `(0, 0)` otherwise.
    /// What a timeout names.
    waiting: (AtomicUsize, AtomicUsize),
}

impl Prover {
    /// A run of `config`'s session with a TLS client offering `tls`.
    pub fn new(config: ProverConfig, tls: TlsOptions, progress: Option<Progress>) -> Self {
        Prover {
            config,
            tls,
            progress,
            waiting: Default::default(),
        }
    }

    fn report(&self, stage: Stage) {
        crate::prover::report(&self.progress, stage)
    }

    /// The whole run within `limit`: a verifier that never answered the
    /// hello in that time is [`Error::VerifierSilent`] (nothing reached the
    /// server), a later stop a [`Error::Timeout`].
    pub async fn prove<R: Runtime, L: Link>(
        &self,
        rt: &R,
        verifier: &str,
        connect: impl std::future::Future<Output = Result<L>>,
        limit: Duration,
    ) -> Result<ProveOutcome> {
        let answered = AtomicBool::new(false);
        let ran = timeout(
            rt,
            limit,
            "the whole proving session",
            self.run(rt, connect, &answered),
        )
        .await;
        match ran {
            Err(Error::Timeout(_)) if !answered.load(Ordering::Relaxed) => {
                Err(Error::VerifierSilent {
                    verifier: verifier.to_string(),
                    secs: limit.as_secs(),
                })
            }
            Err(Error::Timeout(_)) => {
                let (k, n) = (
                    self.waiting.0.load(Ordering::Relaxed),
                    self.waiting.1.load(Ordering::Relaxed),
                );
                // A response that never completed held back the next request.
                let queued = if k > 0 {
                    format!(
                        ", waiting for response {k} of {n} to complete before request {}: a \
                         response without Content-Length or chunked framing ends only when \
                         the server closes",
                        k + 1
                    )
                } else {
                    String::new()
                };
                Err(Error::Timeout(format!(
                    "the whole proving session (after {} ms){queued}",
                    limit.as_millis()
                )))
            }
            other => other,
        }
    }

    /// The run, noting in `answered` when the verifier answered the hello.
    pub async fn run<R: Runtime, L: Link>(
        &self,
        rt: &R,
        connect: impl std::future::Future<Output = Result<L>>,
        answered: &AtomicBool,
    ) -> Result<ProveOutcome> {
        let t0 = rt.now_ms();
        let mut rng = rt.rng();
        let keylog = CollectingKeyLog::new();
        let clock = {
            let rt = rt.clone();
            RuntimeClock(Arc::new(move || rt.unix_time()))
        };
        let tls_config = webproof_tls_provider::client_config(
            &ClientOptions {
                version: self.tls.version,
                suites: &self.tls.suites,
                groups: &self.tls.groups,
                ca_pems: &self.tls.ca_pems,
            },
            keylog.clone(),
            Arc::new(clock),
        )
        .map_err(|e| Error::Setup(e.to_string()))?;
        let server_name = rustls::pki_types::ServerName::try_from(self.config.host.clone())
            .map_err(|_| {
                Error::Setup(format!("{:?} is not a valid server name", self.config.host))
            })?;
        let mut session = ProverSession::new(self.config.clone());
        let opening = ProverOpening::new(session.engine_config(), &mut rng)
            .map_err(|e| zk_error("the proof setup", e))?;
        let mut link = connect.await?;
        let counters = link.counters();
        self.report(Stage::Connected);
        // The hello and the preprocessing's first message (which needs no
        // answer from the verifier) in one flight: the verifier answers
        // with `Accepted` and its part of the base OT, saving a round trip.
        send_msg(&mut link, &session.hello())
            .await
            .map_err(lost_link)?;
        write_frame(&mut link, &opening.message())
            .await
            .map_err(lost_link)?;
        // A verifier that hangs up without reading the opening resets the
        // connection: that is a disconnection too.
        let answer = recv_msg(&mut link, "the verifier's answer to the hello")
            .await
            .map_err(lost_link)?;
        answered.store(true, Ordering::Relaxed);
        session.on_hello_answer(answer)?;
        self.report(Stage::Admitted);

        // From here the link carries two streams at once: the
        // preprocessing (base OT, SoftSpokenOT, Ferret's setup iteration
        // and its first main one) starts at once, and the relay stream
        // brings the verifier's `Ready` once it has reached the server;
        // the TLS session then runs beside the rest of the preprocessing.
        let (relay, preprocessing, section) = link.start_mux();
        // A task of its own: the preprocessing computes in long stretches,
        // which must not hold up the TLS session.
        let warm_rng = rt.rng();
        let warm = spawn(rt, async move {
            let mut rng = warm_rng;
            let mut ch = Channel::new(preprocessing);
            let mut pre = opening
                .bootstrap(&mut ch, &mut rng)
                .await
                .map_err(|e| zk_error("the proof setup", e))?;
            pre.warm_up(&mut ch)
                .await
                .map_err(|e| zk_error("the proof setup", e))?;
            let mut io = ch
                .into_inner()
                .await
                .map_err(|e| Error::Disconnected(format!("after the proof setup: {e}")))?;
            let _ = io.close().await;
            Ok::<_, Error>(pre)
        });
        let (mut relay_in, mut relay_out) = relay.split();
        let mut frames = FrameReader::new(MAX_RELAY_DATA + 1);
        let tls = async {
            let ready = recv_frame_msg(&mut relay_in, &mut frames, "the verifier's answer").await?;
            session.on_ready(ready)?;
            // From here the verifier's relay frames are read as they come,
            // by a task of their own up to its `CloseAck`, into a queue the
            // TLS client and then the close take them from: the link is
            // drained while the client decrypts, and the late frames are
            // read while the proof streams (or they back up through the
            // mux into the link).
            let (tx, rx) = futures::channel::mpsc::channel(16);
            let reader = spawn(rt, read_relay(relay_in, frames, tx));
            self.report(Stage::ServerReached);
            let t1 = rt.now_ms();
            let at_ready = counters.get();
            let mut rec = ProverSession::recorder();
            let mut rx = rx;
            let http = tls_session(
                tls_config,
                server_name,
                &session.config().request,
                (&mut rx, &mut relay_out),
                &mut rec,
                &self.waiting,
            )
            .await;
            if let Ok(r) = &http {
                self.report(Stage::Response(r.len()));
            }
            // The cut: the verifier's transcript ends where ours does.
            let close = session.close(rec.finish())?;
            write_frame(&mut relay_out, &close.encode()).await?;
            let _ = relay_out.close().await;
            Ok::<_, Error>((http, t1, at_ready, rt.now_ms(), rx, reader))
        };
        let tls = match tls.await {
            Ok(t) => t,
            Err(e) => {
                section.abandon().await;
                return Err(e);
            }
        };
        let (http, t1, (up0, down0), t2, rx, reader) = tls;
        // The verifier's remaining relay frames up to its `CloseAck`.
        let close_ack = spawn(rt, close_ack(rx, reader));
        let response = match http {
            Ok(r) => r,
            // The relay's failure itself (a request over max_sent_bytes):
            // the verifier has said why and closed; no CloseAck follows.
            Err(e) if e.decided_by() == "verifier" => {
                section.abandon().await;
                return Err(e);
            }
            // A failed relay (limits, the server refused) explains a
            // failed TLS session better: wait for its reason.
            Err(e) => {
                close_ack.await?;
                section.abandon().await;
                return Err(e);
            }
        };
        // The verifier's refusal or a relay failure explains a
        // preprocessing failure (its stream ended) better; both were
        // reported above.
        let pre = warm.await?;
        let mut link = section.early().await?;

        // Proof: the session derives the witness, checks the handshake and
        // builds the plan; the proof follows its announcement at once.
        let (announce, step) = session
            .prepare_proof(&response, &Captured(keylog), rt.unix_time(), &mut rng)
            .map_err(|e| Error::AfterResponse(Box::new(e.into())))?;
        self.report(Stage::Proving);
        send_msg(&mut link, &announce).await?;
        drop(announce);
        // A verifier that rejects the handshake (certificates,
        // signatures) answers with its verdict instead.
        let proof = pre
            .prove(
                Channel::new(link),
                &step.statement,
                &step.witness,
                &step.context,
            )
            .await
            .map_err(|e| zk_error("the proof", e));
        drop(step);
        // The verifier's record of the session, which it sent before
        // anything of the proof phase: a failed relay explains a failed
        // proof better, and a different transcript means its verdict is
        // not about ours.
        let digest = close_ack.await?;
        let (_, ch) = proof?;
        let mut link = ch
            .into_inner()
            .await
            .map_err(|e| Error::Disconnected(format!("after the proof: {e}")))?;
        session.on_close_ack(digest)?;
        let verdict = recv_msg_limited(&mut link, "the verdict", MAX_VERDICT_MSG).await?;
        self.report(Stage::Verdict);
        let outcome = session.on_verdict(verdict)?;
        let t3 = rt.now_ms();
        Ok(ProveOutcome {
            output: outcome.output,
            stats: ProveStats::of_run([t0, t1, t2, t3], (up0, down0), counters.get()),
            response,
            attestation: outcome.attestation,
            session_id: outcome.session_id,
        })
    }
}

/// The runtime's clock for rustls' certificate checks.
struct RuntimeClock(Arc<dyn Fn() -> u64 + Send + Sync>);

impl std::fmt::Debug for RuntimeClock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RuntimeClock")
    }
}

impl rustls::time_provider::TimeProvider for RuntimeClock {
    fn current_time(&self) -> Option<rustls::pki_types::UnixTime> {
        Some(rustls::pki_types::UnixTime::since_unix_epoch(
            Duration::from_secs((self.0)()),
        ))
    }
}

/// The prover's TLS stack, as the session asks about it.
struct Captured(Arc<CollectingKeyLog>);

impl TlsSecrets for Captured {
    fn shared_secret(&self, public_key: &[u8]) -> Option<Vec<u8>> {
        take_shared_secret(public_key)
    }
    fn logged(&self, label: &str, client_random: &[u8; 32]) -> Option<Vec<u8>> {
        self.0.get(label, client_random)
    }
}

/// A control message in one frame of the relay stream.
async fn recv_frame_msg<R: AsyncRead + Unpin>(
    rd: &mut R,
    frames: &mut FrameReader,
    what: &str,
) -> Result<webproof_proxy::protocol::VerifierMsg> {
    let f = frames
        .next(rd)
        .await?
        .ok_or_else(|| Error::Disconnected(format!("waiting for {what}")))?;
    Ok(webproof_proxy::protocol::decode(&f)?)
}

/// The next relay frame from the verifier.
async fn relay_frame<R: AsyncRead + Unpin>(
    rd: &mut R,
    frames: &mut FrameReader,
) -> Result<RelayFrame> {
    let f = frames
        .next(rd)
        .await?
        .ok_or_else(|| Error::Disconnected("verifier closed during the relay".into()))?;
    Ok(RelayFrame::decode(&f)?)
}

/// The relay's frames as they come, into `tx`, until the verifier's last
/// (`CloseAck`, its failure, or the end of the stream).
async fn read_relay<R: AsyncRead + Unpin>(
    mut rd: R,
    mut frames: FrameReader,
    mut tx: futures::channel::mpsc::Sender<Result<RelayFrame>>,
) {
    use futures::SinkExt;
    loop {
        let f = relay_frame(&mut rd, &mut frames).await;
        let last = !matches!(f, Ok(RelayFrame::Data(_)) | Ok(RelayFrame::ServerClosed(_)));
        if tx.send(f).await.is_err() || last {
            return;
        }
    }
}

/// The next relay frame from the reader's queue.
async fn next_relay(
    rx: &mut futures::channel::mpsc::Receiver<Result<RelayFrame>>,
) -> Result<RelayFrame> {
    use futures::StreamExt;
    rx.next()
        .await
        .unwrap_or_else(|| Err(Error::Disconnected("verifier reader ended".into())))
}

/// The verifier's remaining relay frames up to its `CloseAck`: the digest
/// of the transcript it recorded, or its reason for failing the relay.
async fn close_ack(
    mut rx: futures::channel::mpsc::Receiver<Result<RelayFrame>>,
    _reader: crate::runtime::Task<()>,
) -> Result<[u8; 32]> {
    loop {
        let f = next_relay(&mut rx).await?;
        if let Some(digest) = ProverSession::on_late_relay_frame(f)? {
            return Ok(digest);
        }
    }
}

/// The TLS session with the server through the relay: rustls driven by
/// hand, its records framed as `RelayFrame::Data` and recorded in both
/// directions. `request` holds one or more requests
/// ([`webproof_disclosure::exchange::split_requests`]), sent one at a
/// time on the one connection: request `k + 1` once response `k` is
/// complete by its framing, so the verifier's recorded order shows which
/// response answers which request. Ends when the last response is
/// complete or the server closes; returns every response, one after the
/// other.
async fn tls_session<W>(
    config: Arc<rustls::ClientConfig>,
    name: rustls::pki_types::ServerName<'static>,
    request: &[u8],
    (relay_in, relay_out): (
        &mut futures::channel::mpsc::Receiver<Result<RelayFrame>>,
        &mut W,
    ),
    rec: &mut Recorder,
    waiting: &(AtomicUsize, AtomicUsize),
) -> Result<Vec<u8>>
where
    W: AsyncWrite + Unpin,
{
    use webproof_disclosure::exchange::split_requests;
    use webproof_disclosure::http::{parse_message, response_end};
    let tls_err = |e: &dyn std::fmt::Display| Error::Tls(e.to_string());
    let requests = split_requests(request).map_err(|e| Error::Setup(e.to_string()))?;
    let mut conn = rustls::ClientConnection::new(config, name).map_err(|e| tls_err(&e))?;
    // The request being answered (from 0), and where its response starts.
    let (mut k, mut start) = (0, 0);
    let send = |conn: &mut rustls::ClientConnection, k: usize| {
        let r = requests[k];
        conn.writer()
            .write_all(&request[r.start..r.end])
            .map_err(|e| tls_err(&e))
    };
    send(&mut conn, 0)?;
    let wait_for = |k: usize| {
        let queued = k + 1 < requests.len();
        waiting
            .0
            .store(if queued { k + 1 } else { 0 }, Ordering::Relaxed);
        waiting.1.store(requests.len(), Ordering::Relaxed);
    };
    wait_for(0);
    let mut response = Vec::new();
    let mut buf = vec![0u8; 16 << 10];
    let mut out = Vec::new();
    loop {
        // Everything the client has to send, in as few relay frames as
        // fit: one flight (Finished and the request) in one frame, not a
        // frame per record.
        out.clear();
        while conn.wants_write() {
            conn.write_tls(&mut out).map_err(|e| tls_err(&e))?;
        }
        for piece in out.chunks(MAX_RELAY_DATA) {
            rec.feed(Direction::Sent, piece)?;
            write_frame(relay_out, &RelayFrame::Data(piece.to_vec()).encode()).await?;
        }
        if let Some(end) = response_end(&response[start..]) {
            if k + 1 == requests.len() {
                response.truncate(start + end);
                return Ok(response);
            }
            // The next request once this response is complete.
            (k, start) = (k + 1, start + end);
            send(&mut conn, k)?;
            wait_for(k);
            continue;
        }
        let frame = next_relay(relay_in).await?;
        let Some(data) = ProverSession::on_relay_frame(frame)? else {
            break; // the server side closed
        };
        rec.feed(Direction::Received, &data)?;
        let mut rd = &data[..];
        let mut notified = false;
        while !rd.is_empty() {
            conn.read_tls(&mut rd).map_err(|e| tls_err(&e))?;
            conn.process_new_packets().map_err(|e| tls_err(&e))?;
            // Drain after every read: a relay frame may carry more records
            // than rustls buffers plaintext for (16 KiB), and it refuses
            // the rest once that buffer is full.
            if drain_plaintext(&mut conn, &mut buf, &mut response)? {
                notified = true;
                break;
            }
        }
        // close_notify: the response ends here.
        if notified {
            break;
        }
    }
    // The server closed: the current response ends here.
    if response.len() == start && k == 0 {
        return Err(Error::Tls("the server sent no response".into()));
    }
    let answered = if response.len() == start {
        k
    } else {
        parse_message(&response[start..])?;
        k + 1
    };
    if answered < requests.len() {
        // The requests after it cannot be sent on this connection.
        return Err(Error::Tls(format!(
            "the server closed the connection after request {answered} of {}; it may not \
             allow several requests per connection (Connection: close)",
            requests.len()
        )));
    }
    Ok(response)
}

/// Move the plaintext rustls holds into `response`; true once the server's
/// close_notify has been read.
fn drain_plaintext(
    conn: &mut rustls::ClientConnection,
    buf: &mut [u8],
    response: &mut Vec<u8>,
) -> Result<bool> {
    use webproof_disclosure::http::MAX_RESPONSE;
    loop {
        match conn.reader().read(buf) {
            Ok(0) => return Ok(true),
            Ok(n) => {
                if response.len() + n > MAX_RESPONSE {
                    return Err(Error::Tls(format!(
                        "response larger than {} MiB",
                        MAX_RESPONSE >> 20
                    )));
                }
                response.extend_from_slice(&buf[..n]);
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(false),
            // A server that closes without close_notify after a complete
            // response: the response ends there.
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof && !response.is_empty() => {
                return Ok(true)
            }
            Err(e) => return Err(Error::Tls(format!("reading the response: {e}"))),
        }
    }
}

/// A reset, aborted or broken connection is the verifier going away.
fn lost_link(e: Error) -> Error {
    use std::io::ErrorKind::{BrokenPipe, ConnectionAborted, ConnectionReset, UnexpectedEof};
    match e {
        Error::Io { context, source }
            if matches!(
                source.kind(),
                BrokenPipe | ConnectionAborted | ConnectionReset | UnexpectedEof
            ) =>
        {
            Error::Disconnected(format!("{context}: {source}"))
        }
        e => e,
    }
}

/// A proof-phase error: the verifier's own message (a verdict in the
/// proof's place) as its rejection, a lost link as a disconnection,
/// anything else as the engine failing.
fn zk_error(phase: &str, e: webproof_core::Error) -> Error {
    if let Some(why) = ProverSession::on_proof_abort(&e) {
        return why.into();
    }
    crate::error::proof_step_error("the verifier", phase, e, |e| Error::Engine {
        phase: phase.to_string(),
        source: e,
    })
}
