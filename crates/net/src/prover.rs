//! The prover's driver: connects to a verifier, runs the TLS session with
//! the server through it, and runs the proof. Every protocol decision
//! (hello, the cut at `Close`, witness, plan, verdict) is
//! [`webproof_proxy::session::prover`]'s; this module moves bytes, keeps
//! time and enforces timeouts.

use crate::frame::{read_frame, recv_msg, recv_msg_limited, send_msg, write_frame, Counted};
use crate::provider::{self, take_shared_secret, ClientOptions, CollectingKeyLog};
use crate::transport::{connect_verifier, TransportOptions};
use crate::{NetError, Result};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::compat::TokioAsyncReadCompatExt;
use webproof_core::Channel;
use webproof_disclosure::attest::AttestOptions;
use webproof_disclosure::http::{HttpsUrl, RevealItem};
use webproof_proxy::protocol::{RelayFrame, MAX_RELAY_DATA, MAX_VERDICT_MSG};
use webproof_proxy::session::prover::{ProverConfig, ProverSession, TlsSecrets};
use webproof_proxy::{CipherSuite, Direction, KxGroup, Recorder, TlsVersion};
pub use webproof_session::prover::{Progress, ProveOutcome, ProveStats, Stage};
use webproof_tlsproof::session::ProverOpening;

/// What to fetch and how.
#[derive(Clone, Debug)]
pub struct ProveOptions {
    /// Verifier address (`host:port`).
    pub verifier: String,
    /// Server host name (or IP) for SNI, certificate and the verifier's connection.
    pub host: String,
    /// Server port.
    pub port: u16,
    /// Request target (path and query).
    pub path: String,
    /// Request method (`GET` by default).
    pub method: String,
    /// Request body (empty: none).
    pub body: Vec<u8>,
    /// Extra request headers.
    pub headers: Vec<(String, String)>,
    /// Bytes of `X-Padding` header value to add (0: none).
    pub padding: usize,
    /// Extra trusted roots (PEM) for the prover's own TLS check; webpki roots are always trusted.
    pub ca_pems: Vec<Vec<u8>>,
    /// Restrict to one TLS version.
    pub version: Option<TlsVersion>,
    /// Suites to offer (empty: all supported).
    pub suites: Vec<CipherSuite>,
    /// Groups to offer (empty: X25519, P-256).
    pub groups: Vec<KxGroup>,
    /// What to reveal (parsed where the user typed it); empty: the
    /// default, the request without its credentials and the whole response.
    pub reveal: Vec<RevealItem>,
    /// Overall timeout.
    pub timeout: Duration,
    /// API key for verifiers that require one.
    pub api_key: Option<String>,
    /// How to reach the verifier (roots for a TLS connection to it).
    pub transport: TransportOptions,
    /// Ask the verifier for a signed attestation over a commitment to the
    /// whole transcript (the verifier must have an attestation key).
    pub attest: Option<AttestOptions>,
    /// Response size (bytes) the prover expects: with the request's size
    /// it sizes the proof's preprocessing (see
    /// [`webproof_tlsproof::session::expected_cots`]). A larger response
    /// still proves, with more preprocessing during the proof.
    pub expect_response: usize,
    /// Proxy mode (the verifier relays) or MPC mode (the prover connects
    /// to the server and both parties act as the TLS client).
    pub mode: Mode,
    /// MPC mode: connect to this address instead of resolving `host`
    /// (the name is still the one sent and checked).
    pub server_addr: Option<std::net::SocketAddr>,
    /// MPC mode: the record of verifiers that cheated
    /// ([`crate::flagged`]): a verifier in it is refused, one that
    /// cheats is added. `None`: no record is kept or read.
    pub flagged_verifiers: Option<std::path::PathBuf>,
    /// MPC mode: run the session even with a verifier in the record.
    pub allow_flagged_verifier: bool,
    /// Told of each phase as it begins (none: nothing is reported).
    pub progress: Option<Progress>,
}

/// How the session reaches the server.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// The verifier relays the prover's TLS connection and records it;
    /// the prover proves the records in zero knowledge.
    #[default]
    Proxy,
    /// The prover connects to the server; the verifier takes part in the
    /// TLS client through two-party computation and never relays
    /// (TLS 1.2).
    Mpc,
}

impl Mode {
    /// Every mode this crate's verifier runs (a service publishes them).
    pub const ALL: [Mode; 2] = [Mode::Proxy, Mode::Mpc];

    /// The name on the command line and in CSVs.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Proxy => "proxy",
            Mode::Mpc => "mpc",
        }
    }
}

impl core::str::FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> core::result::Result<Self, String> {
        match s {
            "proxy" => Ok(Mode::Proxy),
            "mpc" => Ok(Mode::Mpc),
            _ => Err(format!("unknown mode {s:?} (proxy, mpc)")),
        }
    }
}

/// Default of [`ProveOptions::expect_response`].
pub const DEFAULT_EXPECT_RESPONSE: usize = 16 << 10;

impl ProveOptions {
    /// Options for `url` (`https://host[:port]/path`) through `verifier`.
    pub fn new(verifier: &str, url: &str) -> Result<Self> {
        let HttpsUrl { host, port, path } = url.parse()?;
        Ok(ProveOptions {
            verifier: verifier.to_string(),
            host,
            port,
            path,
            method: "GET".into(),
            body: Vec::new(),
            headers: Vec::new(),
            padding: 0,
            ca_pems: Vec::new(),
            version: None,
            suites: Vec::new(),
            groups: Vec::new(),
            reveal: Vec::new(),
            timeout: Duration::from_secs(60),
            api_key: None,
            transport: TransportOptions::default(),
            attest: None,
            expect_response: DEFAULT_EXPECT_RESPONSE,
            mode: Mode::Proxy,
            server_addr: None,
            flagged_verifiers: None,
            allow_flagged_verifier: false,
            progress: None,
        })
    }

    /// Report `stage` to [`Self::progress`], if set.
    pub(crate) fn report(&self, stage: Stage) {
        if let Some(p) = &self.progress {
            (p.0)(stage);
        }
    }

    /// COTs the proof of this session is expected to draw (stated in the
    /// hello; see [`webproof_proxy::session::prover::expected_cots`]).
    pub fn expected_cots(&self) -> u64 {
        webproof_proxy::session::prover::expected_cots(
            self.request().len(),
            self.expect_response,
            self.version,
            &self.suites,
        )
    }

    /// The HTTP request this will send.
    pub fn request(&self) -> Vec<u8> {
        webproof_disclosure::http::http_request(
            &self.method,
            &self.host,
            self.port,
            &self.path,
            &self.headers,
            &self.body,
            self.padding,
        )
    }

    /// The session's configuration.
    fn session_config(&self) -> Result<ProverConfig> {
        let mut roots = webproof_proxy::RootStore::webpki_roots();
        for pem in &self.ca_pems {
            roots.add_pem(pem)?;
        }
        Ok(ProverConfig {
            host: self.host.clone(),
            port: self.port,
            api_key: self.api_key.clone(),
            request: self.request(),
            expect_response: self.expect_response,
            version: self.version,
            suites: self.suites.clone(),
            reveal: self.reveal.clone(),
            attest: self.attest.clone(),
            roots,
        })
    }
}

/// Fetch the URL through the verifier and prove the response.
pub async fn prove(opts: &ProveOptions) -> Result<ProveOutcome> {
    match opts.mode {
        Mode::Proxy => {
            // Whether the verifier answered the hello: a timeout before
            // that is a verifier that is not there in all but the socket.
            let answered = std::sync::atomic::AtomicBool::new(false);
            match tokio::time::timeout(opts.timeout, prove_inner(opts, &answered)).await {
                Ok(r) => r,
                Err(_) if !answered.load(std::sync::atomic::Ordering::Relaxed) => {
                    Err(NetError::VerifierSilent {
                        verifier: opts.verifier.to_string(),
                        secs: opts.timeout.as_secs(),
                    })
                }
                Err(_) => Err(NetError::Timeout(format!(
                    "the whole proving session (after {} ms)",
                    opts.timeout.as_millis()
                ))),
            }
        }
        // The whole-session timeout is inside: where it fires decides
        // whether the verifier is to blame.
        Mode::Mpc => crate::mpc::prove(opts).await,
    }
}

fn client_config(
    opts: &ProveOptions,
    keylog: Arc<CollectingKeyLog>,
) -> Result<Arc<rustls::ClientConfig>> {
    let client = ClientOptions {
        version: opts.version,
        suites: &opts.suites,
        groups: &opts.groups,
        ca_pems: &opts.ca_pems,
    };
    let time = Arc::new(rustls::time_provider::DefaultTimeProvider);
    provider::client_config(&client, keylog, time).map_err(|e| NetError::Setup(e.to_string()))
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

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

async fn prove_inner(
    opts: &ProveOptions,
    answered: &std::sync::atomic::AtomicBool,
) -> Result<ProveOutcome> {
    let t0 = Instant::now();
    let keylog = CollectingKeyLog::new();
    let config = client_config(opts, keylog.clone())?;
    let mut session = ProverSession::new(opts.session_config()?);
    let opening = ProverOpening::new(session.engine_config(), &mut rand::rngs::OsRng)
        .map_err(|e| zk_error("the proof setup", e))?;
    let stream = connect_verifier(&opts.verifier, &opts.transport).await?;
    opts.report(Stage::Connected);
    let mut link = Counted::new(stream);
    let counters = link.counters();
    // The hello and the preprocessing's first message (which needs no
    // answer from the verifier) in one flight: the verifier answers with
    // `Accepted` and its part of the base OT, saving a round trip.
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
    answered.store(true, std::sync::atomic::Ordering::Relaxed);
    session.on_hello_answer(answer)?;
    opts.report(Stage::Admitted);

    // From here the link carries two streams at once: the preprocessing
    // (base OT, SoftSpokenOT, Ferret's setup iteration and its first main
    // one; see `webproof_tlsproof::session` for its flights) starts at
    // once, and the relay stream brings the verifier's `Ready` as soon as
    // it has reached the server; the TLS session then runs beside the rest
    // of the preprocessing. The mux ends for us once our `Close` is out:
    // the proof follows at once, while the verifier's `CloseAck` is still
    // on its way.
    let server_name = rustls::pki_types::ServerName::try_from(opts.host.clone())
        .map_err(|_| NetError::Setup(format!("{:?} is not a valid server name", opts.host)))?;
    let request = session.config().request.clone();
    let ((pre, (http_result, relay_result, online)), mut link) = crate::mux::run_early(link, |s| {
        let session = &mut session;
        let request = &request;
        let counters = &counters;
        async move {
            let crate::mux::Streams {
                mut relay,
                preprocessing,
            } = s;
            // A task of its own: the preprocessing computes in long
            // stretches, which must not hold up the TLS session.
            let warm = tokio::spawn(async move {
                let mut ch = Channel::new(preprocessing.compat());
                let mut pre = opening
                    .bootstrap(&mut ch, &mut rand::rngs::OsRng)
                    .await
                    .map_err(|e| zk_error("the proof setup", e))?;
                pre.warm_up(&mut ch)
                    .await
                    .map_err(|e| zk_error("the proof setup", e))?;
                crate::mux::close_channel(ch).await?;
                Ok::<_, NetError>(pre)
            });
            let warm = crate::AbortOnDrop(warm).join("the proof setup task");
            let tls = async move {
                let ready = recv_msg(&mut relay, "the verifier's answer").await?;
                session.on_ready(ready)?;
                opts.report(Stage::ServerReached);
                let t1 = Instant::now();
                let at_ready = (counters.sent(), counters.received());
                let (tls_end, relay_end) = tokio::io::duplex(1 << 16);
                let (close_tx, close_rx) = tokio::sync::oneshot::channel::<()>();
                let relay_task = tokio::spawn(prover_relay(relay, relay_end, close_rx));
                let http = async {
                    let connector = tokio_rustls::TlsConnector::from(config);
                    let mut tls = connector
                        .connect(server_name, tls_end)
                        .await
                        .map_err(|e| NetError::Tls(e.to_string()))?;
                    tls.write_all(request)
                        .await
                        .map_err(|e| NetError::Tls(e.to_string()))?;
                    tls.flush()
                        .await
                        .map_err(|e| NetError::Tls(e.to_string()))?;
                    let response = read_response(&mut tls).await?;
                    opts.report(Stage::Response(response.len()));
                    Ok::<_, NetError>(response)
                };
                let http_result = http.await;
                let _ = close_tx.send(());
                let relay_result = match relay_task.await {
                    Ok(Ok(end)) => match close(session, end).await {
                        // A failed relay (limits, the server refused)
                        // explains a failed TLS session better: wait for
                        // its reason.
                        Ok(ack) if http_result.is_err() => close_ack(ack).await.map(|_| None),
                        Ok(ack) => Ok(Some(ack)),
                        Err(e) => Err(e),
                    },
                    Ok(Err(e)) => Err(e),
                    Err(e) => Err(NetError::Disconnected(format!("relay task: {e}"))),
                };
                Ok::<_, NetError>((http_result, relay_result, (t1, at_ready, Instant::now())))
            };
            // The preprocessing runs in its task meanwhile. The verifier's
            // refusal or a relay failure explains a preprocessing failure
            // (its stream ended) better: a failed relay is reported below,
            // without the engine, and without waiting for a preprocessing
            // the verifier has abandoned with its relay (a request over
            // its max_sent_bytes would otherwise hang to the timeout).
            let tls = tls.await?;
            let pre = match tls.1 {
                Ok(_) => Some(warm.await?),
                Err(_) => None,
            };
            Ok((pre, tls))
        }
    })
    .await?;
    let (t1, (up0, down0), tls_done) = online;
    // A relay failure (verifier gone, limits) explains a TLS failure better
    // than the TLS error it caused, so it is reported first.
    let close_ack_pending = relay_result?;
    let response = http_result?;
    let Some(close_ack_pending) = close_ack_pending else {
        // Only a failed TLS session waits for the ack, and it returned above.
        return Err(NetError::Tls(
            "the TLS session ended without a response".into(),
        ));
    };
    let t2 = tls_done;
    let Some(pre) = pre else {
        // Only a failed relay leaves the preprocessing unfinished, and it
        // returned above.
        return Err(NetError::Disconnected(
            "the proof setup did not finish".into(),
        ));
    };

    // Proof: the session derives the witness, checks the handshake and
    // builds the plan; the proof follows its announcement at once.
    let (announce, step) = session
        .prepare_proof(
            &response,
            &Captured(keylog),
            unix_now(),
            &mut rand::rngs::OsRng,
        )
        .map_err(|e| NetError::AfterResponse(Box::new(e.into())))?;
    opts.report(Stage::Proving);
    let proof = async {
        send_msg(&mut link, &announce).await?;
        drop(announce);
        // A verifier that rejects the handshake (certificates, signatures)
        // answers with its verdict instead.
        let ch = Channel::new(link.compat());
        let (_, ch) = pre
            .prove(ch, &step.statement, &step.witness, &step.context)
            .await
            .map_err(|e| zk_error("the proof", e))?;
        Ok::<_, NetError>(
            ch.into_inner()
                .await
                .map_err(|e| NetError::Disconnected(format!("after the proof: {e}")))?
                .into_inner(),
        )
    };
    let proof = proof.await;
    drop(step);
    // The verifier's record of the session, which it sent before anything
    // of the proof phase: a failed relay explains a failed proof better,
    // and a different transcript means its verdict is not about ours.
    let verifier_digest = close_ack(close_ack_pending).await?;
    let mut link = proof?;
    session.on_close_ack(verifier_digest)?;
    let verdict = recv_msg_limited(&mut link, "the verdict", MAX_VERDICT_MSG).await?;
    opts.report(Stage::Verdict);
    let outcome = session.on_verdict(verdict)?;
    let t3 = Instant::now();
    let ms = |a: Instant, b: Instant| (b - a).as_secs_f64() * 1000.0;
    let stats = ProveStats {
        time_preprocess_ms: ms(t0, t1),
        time_online_ms: ms(t1, t3),
        time_total_ms: ms(t0, t3),
        uploaded_preprocess: up0,
        downloaded_preprocess: down0,
        uploaded_online: counters.sent() - up0,
        downloaded_online: counters.received() - down0,
        time_tls_ms: ms(t1, t2),
        time_proof_ms: ms(t2, t3),
    };
    Ok(ProveOutcome {
        output: outcome.output,
        stats,
        response,
        attestation: outcome.attestation,
        session_id: outcome.session_id,
    })
}

/// Read an HTTP/1.1 response: up to its framed end
/// ([`webproof_disclosure::http::response_end`]) or EOF.
async fn read_response<S: tokio::io::AsyncRead + Unpin>(s: &mut S) -> Result<Vec<u8>> {
    use webproof_disclosure::http::{parse_message, response_end, MAX_RESPONSE};
    let mut data = Vec::new();
    let mut buf = vec![0u8; 16 << 10];
    loop {
        if let Some(end) = response_end(&data) {
            data.truncate(end);
            return Ok(data);
        }
        match s.read(&mut buf).await {
            Ok(0) => break,
            Ok(n) => {
                if data.len() + n > MAX_RESPONSE {
                    return Err(NetError::Tls(format!(
                        "response larger than {} MiB",
                        MAX_RESPONSE >> 20
                    )));
                }
                data.extend_from_slice(&buf[..n]);
            }
            // A server that closes without close_notify after a complete response.
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof && !data.is_empty() => break,
            Err(e) => return Err(NetError::Tls(format!("reading the response: {e}"))),
        }
    }
    if data.is_empty() {
        return Err(NetError::Tls("the server sent no response".into()));
    }
    parse_message(&data)?;
    Ok(data)
}

/// The verifier's `CloseAck`: the digest of the transcript it recorded.
/// Arrives about a round trip after the prover's `Close`; the prover only
/// needs it before it accepts the verdict.
type CloseAck = tokio::task::JoinHandle<Result<[u8; 32]>>;

/// Where the relay pump stopped: the prover's recording, the relay
/// stream's write half and the verifier's frames still to come.
struct RelayEnd<W> {
    transcript: webproof_proxy::Recording,
    write: W,
    frames: tokio::sync::mpsc::Receiver<Result<RelayFrame>>,
}

/// Pump TLS bytes between the local TLS client and the verifier, recording
/// the records, until the local side asks to close.
async fn prover_relay<S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static>(
    link: S,
    relay_end: tokio::io::DuplexStream,
    mut close_rx: tokio::sync::oneshot::Receiver<()>,
) -> Result<RelayEnd<tokio::io::WriteHalf<S>>> {
    let (mut vr, mut vw) = tokio::io::split(link);
    let (mut lr, mut lw) = tokio::io::split(relay_end);
    let (tx, mut rx) = tokio::sync::mpsc::channel::<Result<RelayFrame>>(16);
    tokio::spawn(async move {
        loop {
            let f = match read_frame(&mut vr, MAX_RELAY_DATA + 1).await {
                Ok(Some(b)) => RelayFrame::decode(&b).map_err(NetError::from),
                Ok(None) => Err(NetError::Disconnected(
                    "verifier closed during the relay".into(),
                )),
                Err(e) => Err(e),
            };
            let stop = !matches!(f, Ok(RelayFrame::Data(_)) | Ok(RelayFrame::ServerClosed(_)));
            if tx.send(f).await.is_err() || stop {
                return;
            }
        }
    });
    let mut rec: Recorder = ProverSession::recorder();
    let mut buf = vec![0u8; MAX_RELAY_DATA];
    let mut local_open = true;
    loop {
        tokio::select! {
            n = lr.read(&mut buf), if local_open => match n {
                Ok(0) | Err(_) => local_open = false,
                Ok(n) => {
                    rec.feed(Direction::Sent, &buf[..n])?;
                    write_frame(&mut vw, &RelayFrame::Data(buf[..n].to_vec()).encode()).await?;
                }
            },
            f = rx.recv() => match f {
                Some(Ok(f)) => match ProverSession::on_relay_frame(f)? {
                    Some(d) => {
                        rec.feed(Direction::Received, &d)?;
                        // The TLS client may be gone already; the bytes are recorded regardless.
                        let _ = lw.write_all(&d).await;
                    }
                    None => {
                        tracing::debug!("server side closed");
                        let _ = lw.shutdown().await;
                    }
                },
                Some(Err(e)) => return Err(e),
                None => return Err(NetError::Disconnected("verifier reader ended".into())),
            },
            _ = &mut close_rx => break,
        }
    }
    Ok(RelayEnd {
        transcript: rec.finish(),
        write: vw,
        frames: rx,
    })
}

/// Send the session's `Close` (the verifier cuts its transcript there),
/// end the relay stream, and read the verifier's remaining frames up to its
/// `CloseAck` in a task.
async fn close<W: tokio::io::AsyncWrite + Unpin>(
    session: &mut ProverSession,
    end: RelayEnd<W>,
) -> Result<CloseAck> {
    let RelayEnd {
        transcript,
        mut write,
        mut frames,
    } = end;
    let close = session.close(transcript)?;
    write_frame(&mut write, &close.encode()).await?;
    let _ = write.shutdown().await;
    // A task, not a future awaited later: the verifier's late frames must
    // be read while the proof streams, or they back up through the mux into
    // the verifier's link and it never reaches the proof.
    Ok(tokio::spawn(async move {
        loop {
            match frames.recv().await {
                Some(Ok(f)) => {
                    if let Some(digest) = ProverSession::on_late_relay_frame(f)? {
                        return Ok(digest);
                    }
                }
                Some(Err(e)) => return Err(e),
                None => return Err(NetError::Disconnected("verifier reader ended".into())),
            }
        }
    }))
}

/// The verifier's answer to our `Close`.
async fn close_ack(ack: CloseAck) -> Result<[u8; 32]> {
    ack.await
        .map_err(|e| NetError::Disconnected(format!("relay reader: {e}")))?
}

/// A reset, aborted or broken connection is the verifier going away.
fn lost_link(e: NetError) -> NetError {
    use std::io::ErrorKind::{BrokenPipe, ConnectionAborted, ConnectionReset, UnexpectedEof};
    match e {
        NetError::Io { context, source }
            if matches!(
                source.kind(),
                BrokenPipe | ConnectionAborted | ConnectionReset | UnexpectedEof
            ) =>
        {
            NetError::Disconnected(format!("{context}: {source}"))
        }
        e => e,
    }
}

/// A proof-phase error: the verifier's own message (a verdict in the
/// proof's place) as its rejection, a lost link as a disconnection,
/// anything else as the engine failing.
fn zk_error(phase: &str, e: webproof_core::Error) -> NetError {
    if let Some(why) = ProverSession::on_proof_abort(&e) {
        return why.into();
    }
    crate::proof_step_error("the verifier", phase, e, |e| NetError::Engine {
        phase: phase.to_string(),
        source: e,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The expectation follows the first suite offered: all suites by
    /// default (AES-128-GCM first), or the caller's choice.
    #[test]
    fn expected_cots_follow_the_first_offered_suite() {
        let mut o = ProveOptions::new("127.0.0.1:1", "https://example.com/x").unwrap();
        o.expect_response = 51 << 10;
        let len = o.request().len();
        use webproof_tlsproof::{session::expected_cots, Aead};
        assert_eq!(
            o.expected_cots(),
            expected_cots(len, 51 << 10, Some(Aead::Aes128Gcm))
        );
        o.suites = vec![CipherSuite::TLS13_CHACHA20_POLY1305_SHA256];
        assert_eq!(
            o.expected_cots(),
            expected_cots(len, 51 << 10, Some(Aead::ChaCha20Poly1305))
        );
        o.suites = vec![
            CipherSuite::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
            CipherSuite::TLS13_CHACHA20_POLY1305_SHA256,
        ];
        o.version = Some(TlsVersion::Tls13);
        assert_eq!(
            o.expected_cots(),
            expected_cots(len, 51 << 10, Some(Aead::ChaCha20Poly1305))
        );
    }
}
