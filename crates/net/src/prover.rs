//! The prover: runs an HTTPS request through a verifier and proves what the
//! server sent.

use crate::attest::{AttestOptions, AttestationBundle};
use crate::frame::{read_frame, recv_msg, recv_msg_limited, send_msg, write_frame, Counted};
use crate::provider::{instrumented_provider, take_shared_secret, CollectingKeyLog};
use crate::transport::{connect_verifier, TransportOptions};
use crate::{timeout, NetError, Result};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::compat::TokioAsyncReadCompatExt;
use webproof_core::Channel;
use webproof_proxy::protocol::{
    ProofPayload, ProverMsg, RelayFrame, VerifierMsg, MAX_RELAY_DATA, MAX_VERDICT_MSG,
    PROTOCOL_VERSION,
};
use webproof_proxy::zk;
use webproof_proxy::{
    CipherSuite, Direction, KxGroup, Recorder, RecorderLimits, TlsVersion, VerifierOutput,
};
use webproof_tlsproof::session::{expected_cots, ProverOpening, SessionConfig};
use webproof_tlsproof::Aead;

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
    /// Reveal items (see `webproof_proxy::http::disclosure_from_items`); empty: everything.
    pub reveal: Vec<String>,
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
}

/// Default of [`ProveOptions::expect_response`].
pub const DEFAULT_EXPECT_RESPONSE: usize = 16 << 10;

impl ProveOptions {
    /// Options for `url` (`https://host[:port]/path`) through `verifier`.
    pub fn new(verifier: &str, url: &str) -> Result<Self> {
        let rest = url
            .strip_prefix("https://")
            .ok_or_else(|| NetError::Setup(format!("{url:?}: only https:// URLs")))?;
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        let (host, port) = match authority.rsplit_once(':') {
            Some((h, p)) if !h.ends_with(']') || h.starts_with('[') => (
                h.trim_matches(|c| c == '[' || c == ']'),
                p.parse()
                    .map_err(|_| NetError::Setup(format!("bad port in {url:?}")))?,
            ),
            _ => (authority, 443),
        };
        if host.is_empty() {
            return Err(NetError::Setup(format!("{url:?}: no host")));
        }
        Ok(ProveOptions {
            verifier: verifier.to_string(),
            host: host.to_string(),
            port,
            path: path.to_string(),
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
        })
    }

    /// COTs the proof of this session is expected to draw (stated in the
    /// hello): the request's size, [`Self::expect_response`], and the
    /// record protection of the first suite offered (servers mostly follow
    /// the client's order; any other outcome costs at most an extra Ferret
    /// iteration during the proof).
    pub fn expected_cots(&self) -> u64 {
        // No suites chosen: every suite is offered, in `CipherSuite::ALL` order.
        let offered: &[CipherSuite] = if self.suites.is_empty() {
            &CipherSuite::ALL
        } else {
            &self.suites
        };
        let aeads: Vec<Aead> = offered
            .iter()
            .filter(|s| self.version.is_none_or(|v| s.version() == v))
            .map(|s| match s.aead() {
                webproof_proxy::suite::AeadAlg::Aes128Gcm => Aead::Aes128Gcm,
                webproof_proxy::suite::AeadAlg::Aes256Gcm => Aead::Aes256Gcm,
                webproof_proxy::suite::AeadAlg::ChaCha20Poly1305 => Aead::ChaCha20Poly1305,
            })
            .collect();
        let aead = aeads.first().copied();
        expected_cots(self.request().len(), self.expect_response, aead)
    }

    /// The HTTP request this will send.
    pub fn request(&self) -> Vec<u8> {
        let host = if self.port == 443 {
            self.host.clone()
        } else {
            format!("{}:{}", self.host, self.port)
        };
        let mut r = format!("GET {} HTTP/1.1\r\nHost: {host}\r\n", self.path);
        for (k, v) in &self.headers {
            r.push_str(&format!("{k}: {v}\r\n"));
        }
        if self.padding > 0 {
            r.push_str("X-Padding: ");
            r.push_str(&"a".repeat(self.padding));
            r.push_str("\r\n");
        }
        r.push_str("Connection: close\r\n\r\n");
        r.into_bytes()
    }
}

/// Timing and traffic on the prover/verifier link, as the prover counts them.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ProveStats {
    /// Setup before the server connection (hello; OT/VOLE preprocessing goes here).
    pub time_preprocess_ms: f64,
    /// From the server connection to the verdict.
    pub time_online_ms: f64,
    /// Everything.
    pub time_total_ms: f64,
    /// Bytes sent to the verifier during setup.
    pub uploaded_preprocess: u64,
    /// Bytes received from the verifier during setup.
    pub downloaded_preprocess: u64,
    /// Bytes sent to the verifier after setup.
    pub uploaded_online: u64,
    /// Bytes received from the verifier after setup.
    pub downloaded_online: u64,
    /// The TLS session with the server (relay phase).
    pub time_tls_ms: f64,
    /// The proof phase.
    pub time_proof_ms: f64,
}

/// A verified session.
#[derive(Clone, Debug)]
pub struct ProveOutcome {
    /// What the verifier attested.
    pub output: VerifierOutput,
    /// Measurements.
    pub stats: ProveStats,
    /// The full response as the prover received it.
    pub response: Vec<u8>,
    /// The attestation and the secrets to present it, if one was asked for.
    pub attestation: Option<AttestationBundle>,
}

/// Fetch the URL through the verifier and prove the response.
pub async fn prove(opts: &ProveOptions) -> Result<ProveOutcome> {
    timeout(opts.timeout, "the whole proving session", prove_inner(opts)).await
}

fn client_config(
    opts: &ProveOptions,
    keylog: Arc<CollectingKeyLog>,
) -> Result<Arc<rustls::ClientConfig>> {
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots_anchors());
    for pem in &opts.ca_pems {
        use rustls::pki_types::pem::PemObject;
        for c in rustls::pki_types::CertificateDer::pem_slice_iter(pem) {
            let c = c.map_err(|e| NetError::Setup(format!("CA certificate PEM: {e:?}")))?;
            roots
                .add(c)
                .map_err(|e| NetError::Setup(format!("CA certificate: {e}")))?;
        }
    }
    let versions: Vec<&'static rustls::SupportedProtocolVersion> = match opts.version {
        Some(TlsVersion::Tls12) => vec![&rustls::version::TLS12],
        Some(TlsVersion::Tls13) => vec![&rustls::version::TLS13],
        None => vec![&rustls::version::TLS13, &rustls::version::TLS12],
    };
    let suites: Vec<CipherSuite> = opts
        .suites
        .iter()
        .copied()
        .filter(|s| opts.version.is_none_or(|v| s.version() == v))
        .collect();
    if !opts.suites.is_empty() && suites.is_empty() {
        return Err(NetError::Setup(
            "none of the chosen suites belongs to the chosen TLS version".into(),
        ));
    }
    let provider = Arc::new(instrumented_provider(&suites, &opts.groups));
    let mut cfg = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&versions)
        .map_err(|e| NetError::Setup(e.to_string()))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    cfg.resumption = rustls::client::Resumption::disabled();
    cfg.enable_early_data = false;
    cfg.key_log = keylog;
    Ok(Arc::new(cfg))
}

fn webpki_roots_anchors() -> impl Iterator<Item = rustls::pki_types::TrustAnchor<'static>> {
    webpki_roots::TLS_SERVER_ROOTS.iter().cloned()
}

async fn prove_inner(opts: &ProveOptions) -> Result<ProveOutcome> {
    let t0 = Instant::now();
    let keylog = CollectingKeyLog::new();
    let config = client_config(opts, keylog.clone())?;
    let expected_cots = opts.expected_cots();
    let session = SessionConfig::sized(expected_cots);
    let opening = ProverOpening::new(session, &mut rand::rngs::OsRng)
        .map_err(|e| zk_error("the proof setup", e))?;
    let stream = connect_verifier(&opts.verifier, &opts.transport).await?;
    let mut link = Counted::new(stream);
    let counters = link.counters();
    // The hello and the preprocessing's first message (which needs no
    // answer from the verifier) in one flight: the verifier answers with
    // `Accepted` and its part of the base OT, saving a round trip.
    send_msg(
        &mut link,
        &ProverMsg::Hello {
            version: PROTOCOL_VERSION,
            host: opts.host.clone(),
            port: opts.port,
            api_key: opts.api_key.clone(),
            expected_cots,
        },
    )
    .await
    .map_err(lost_link)?;
    write_frame(&mut link, &opening.message())
        .await
        .map_err(lost_link)?;
    // A verifier that hangs up without reading the opening resets the
    // connection: that is a disconnection too.
    match recv_msg(&mut link, "the verifier's answer to the hello")
        .await
        .map_err(lost_link)?
    {
        VerifierMsg::Accepted => {}
        VerifierMsg::Refused { reason } => {
            return Err(NetError::Verifier(format!("refused: {reason}")))
        }
        other => return Err(NetError::Verifier(format!("unexpected message {other:?}"))),
    }
    // Preprocessing, first part (base OT, SoftSpokenOT, the tree
    // corrections of Ferret's setup iteration), before the server is
    // contacted; see `webproof_tlsproof::session` for its flights.
    let (mut pre, mut link) = {
        let mut ch = Channel::new(link.compat());
        let pre = opening
            .bootstrap(&mut ch, &mut rand::rngs::OsRng)
            .await
            .map_err(|e| zk_error("the proof setup", e))?;
        let link = ch
            .into_inner()
            .await
            .map_err(|e| NetError::Disconnected(format!("after proof setup: {e}")))?;
        (pre, link.into_inner())
    };
    let ready: VerifierMsg = recv_msg(&mut link, "the verifier's answer").await?;
    match ready {
        VerifierMsg::Ready { .. } => {}
        VerifierMsg::Refused { reason } => {
            return Err(NetError::Verifier(format!("refused: {reason}")))
        }
        other => return Err(NetError::Verifier(format!("unexpected message {other:?}"))),
    }
    let t1 = Instant::now();
    let (up0, down0) = (counters.sent(), counters.received());

    // Online: the TLS session through the relay and, beside it on the same
    // link, the rest of the preprocessing (the setup iteration's check and
    // LPN step, Ferret's first main iteration).
    let server_name = rustls::pki_types::ServerName::try_from(opts.host.clone())
        .map_err(|_| NetError::Setup(format!("{:?} is not a valid server name", opts.host)))?;
    let request = opts.request();
    // The mux ends for us once our `Close` is out: the proof follows at
    // once, while the verifier's `CloseAck` is still on its way.
    let ((http_result, relay_result, tls_done), mut link) = crate::mux::run_early(link, |s| {
        let pre = &mut pre;
        let request = &request;
        async move {
            let crate::mux::Streams {
                relay,
                preprocessing,
            } = s;
            let warm = async move {
                let mut ch = Channel::new(preprocessing.compat());
                pre.warm_up(&mut ch)
                    .await
                    .map_err(|e| zk_error("the proof setup", e))?;
                crate::mux::close_channel(ch).await
            };
            let tls = async move {
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
                    Ok::<_, NetError>(response)
                };
                let http_result = http.await;
                let _ = close_tx.send(());
                let relay_result = match relay_task.await {
                    Ok(Ok((transcript, ack))) if http_result.is_err() => {
                        // A failed relay (limits, the server refused) explains
                        // a failed TLS session better: wait for its reason.
                        close_ack(ack).await.map(|_| (transcript, None))
                    }
                    Ok(Ok((transcript, ack))) => Ok((transcript, Some(ack))),
                    Ok(Err(e)) => Err(e),
                    Err(e) => Err(NetError::Disconnected(format!("relay task: {e}"))),
                };
                (http_result, relay_result, Instant::now())
            };
            let (warm, tls) = tokio::join!(warm, tls);
            // A relay failure explains a preprocessing failure better.
            if tls.1.is_ok() {
                warm?;
            }
            Ok(tls)
        }
    })
    .await?;
    // A relay failure (verifier gone, limits) explains a TLS failure better
    // than the TLS error it caused, so it is reported first.
    let (transcript, close_ack_pending) = relay_result?;
    let response = http_result?;
    let Some(close_ack_pending) = close_ack_pending else {
        // Only a failed TLS session waits for the ack, and it returned above.
        return Err(NetError::Tls(
            "the TLS session ended without a response".into(),
        ));
    };
    let t2 = tls_done;

    // Proof: derive the witness and cross-check it against rustls' key log.
    let ecdhe = webproof_proxy::verify::client_public_keys(&transcript)?
        .iter()
        .find_map(|pk| take_shared_secret(pk))
        .ok_or_else(|| NetError::Tls("no captured key exchange for this session".into()))?;
    let derived = webproof_proxy::verify::derive_witness(&transcript, &ecdhe)?;
    let (label, value) = &derived.keylog_check;
    match keylog.get(label, &derived.client_random) {
        Some(logged) if &logged == value => {}
        Some(_) => {
            return Err(NetError::Tls(format!(
                "derived {label} differs from the TLS stack's"
            )))?
        }
        None => return Err(NetError::Tls(format!("the TLS stack logged no {label}"))),
    }
    let disclosure =
        webproof_proxy::http::disclosure_from_items(&opts.reveal, &request, &response)?;
    // Our own view of the statement: the same handshake checks the verifier runs.
    let vcfg = webproof_proxy::VerifyConfig {
        roots: {
            let mut roots = webproof_proxy::RootStore::webpki_roots();
            for pem in &opts.ca_pems {
                roots.add_pem(pem)?;
            }
            roots
        },
        server_name: opts.host.clone(),
        port: opts.port,
        time: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
    };
    let (info, statement) = webproof_proxy::verify::check_handshake(
        &transcript,
        &vcfg,
        webproof_proxy::verify::SecretsSource::FromWitness(&derived.witness),
    )?;
    // Memory: a large response is held once as the response, once as each
    // direction's data, and once as ciphertext in the proof's statement;
    // the rest goes as soon as it is used.
    let transcript_digest = transcript.digest();
    drop(transcript);
    let opened = statement.evaluate(&derived.witness)?;
    let mut plan = zk::plan(&statement, &opened, &disclosure, &derived.witness)?;
    // `json:PATH` items become proven path claims (checked here as the verifier will).
    plan.json = webproof_proxy::json::claims_from_items(
        &opts.reveal,
        &request,
        &response,
        &plan.disclosure,
    )?;
    // Each direction's application data: what the verdict's ranges and
    // digests are checked against, and what an attestation commits to.
    let app = |d: Direction| -> Vec<u8> {
        opened
            .iter()
            .filter(|r| {
                r.direction == d
                    && r.content_type == webproof_proxy::record::content_type::APPLICATION_DATA
            })
            .flat_map(|r| r.data.iter().copied())
            .collect()
    };
    let (app_sent, app_received) = (app(Direction::Sent), app(Direction::Received));
    drop(opened);
    // What we disclose, as the verdict must state it.
    let disclosed = plan.disclosure.clone();
    let mut zk_witness = zk::witness(&derived.witness);
    let committed = match &opts.attest {
        Some(a) => {
            let (transcript, commitment) =
                crate::attest::commit(a, &app_sent, &app_received, &mut rand::rngs::OsRng)?;
            plan.commitments = commitment.leaves().to_vec();
            zk_witness = zk::witness_with_blinders(
                &derived.witness,
                &plan,
                &crate::attest::blinders(&commitment),
            )?;
            Some((transcript, commitment))
        }
        None => None,
    };
    let zk_statement = zk::zk_statement(&statement, &plan)?;
    let handshake_secrets = match (&statement.public, &derived.witness) {
        (
            webproof_proxy::statement::PublicInputs::Tls13 {
                client_hs_traffic,
                server_hs_traffic,
                ..
            },
            _,
        ) => Some(webproof_proxy::verify::HandshakeSecrets {
            client: client_hs_traffic.clone(),
            server: server_hs_traffic.clone(),
        }),
        _ => None,
    };
    let context = zk::proof_context(&transcript_digest, &plan);
    drop(statement);
    let proof = async {
        send_msg(
            &mut link,
            &ProverMsg::Proof {
                payload: ProofPayload::Zk {
                    plan,
                    handshake_secrets,
                },
                openings: Vec::new(),
            },
        )
        .await?;
        // The proof follows at once; a verifier that rejects the handshake
        // (certificates, signatures) answers with its verdict instead.
        let ch = Channel::new(link.compat());
        let (_, ch) = pre
            .prove(ch, &zk_statement, &zk_witness, &context)
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
    drop((zk_statement, zk_witness));
    // The verifier's record of the session, which it sent before anything
    // of the proof phase: a failed relay explains a failed proof better,
    // and a different transcript means its verdict is not about ours.
    let verifier_digest = close_ack(close_ack_pending).await?;
    let mut link = proof?;
    if verifier_digest != transcript_digest {
        return Err(NetError::Verifier(
            "the verifier recorded a different transcript".into(),
        ));
    }
    let verdict: VerifierMsg = recv_msg_limited(&mut link, "the verdict", MAX_VERDICT_MSG).await?;
    let (digested, attestation) = match verdict {
        VerifierMsg::Verdict {
            result: Ok(o),
            attestation,
        } => (o, attestation),
        VerifierMsg::Verdict { result: Err(e), .. } => {
            return Err(NetError::Verifier(format!("proof rejected: {e}")))
        }
        other => return Err(NetError::Verifier(format!("unexpected message {other:?}"))),
    };
    // The verdict carries no data: the output is rebuilt from ours, and
    // refused unless the verifier's lengths, ranges and digests are ours.
    let output = digested.expand(&app_sent, &app_received, &disclosed)?;
    drop((app_sent, app_received));
    let attestation = match (committed, attestation) {
        (Some((transcript, commitment)), Some(reply)) => Some(AttestationBundle::accept(
            &reply,
            transcript,
            commitment,
            info.certificates.clone(),
        )?),
        (Some(_), None) => {
            return Err(NetError::Verifier(
                "the verifier sent no attestation".into(),
            ))
        }
        (None, _) => None,
    };
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
        output,
        stats,
        response,
        attestation,
    })
}

/// Read an HTTP/1.1 response: up to Content-Length, the last chunk, or EOF.
async fn read_response<S: tokio::io::AsyncRead + Unpin>(s: &mut S) -> Result<Vec<u8>> {
    let mut data = Vec::new();
    let mut buf = vec![0u8; 16 << 10];
    loop {
        if let Ok(m) = webproof_proxy::http::parse_message(&data) {
            let framed = m.header(&data, "content-length").is_some()
                || m.header(&data, "transfer-encoding")
                    .is_some_and(|v| v.to_ascii_lowercase().windows(7).any(|w| w == b"chunked"));
            if framed {
                data.truncate(m.body.end);
                return Ok(data);
            }
        }
        match s.read(&mut buf).await {
            Ok(0) => break,
            Ok(n) => {
                if data.len() + n > 64 << 20 {
                    return Err(NetError::Tls("response larger than 64 MiB".into()));
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
    webproof_proxy::http::parse_message(&data)?;
    Ok(data)
}

/// The verifier's `CloseAck`: the digest of the transcript it recorded, or
/// why its relay failed. Arrives about a round trip after the prover's
/// `Close`; the prover only needs it before it accepts the verdict.
type CloseAck = tokio::task::JoinHandle<Result<std::result::Result<[u8; 32], String>>>;

/// Pump TLS bytes between the local TLS client and the verifier, recording
/// the records, until the local side asks to close. Then send `Close` with
/// the record counts (the verifier cuts its transcript there), end the
/// relay stream, and return the transcript at once; a background task reads
/// the verifier's remaining frames (server bytes still in flight, dropped)
/// up to its `CloseAck`.
async fn prover_relay<S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static>(
    link: S,
    relay_end: tokio::io::DuplexStream,
    mut close_rx: tokio::sync::oneshot::Receiver<()>,
) -> Result<(webproof_proxy::Transcript, CloseAck)> {
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
    // The prover records generously; the verifier's limits are what count.
    let mut rec = Recorder::new(RecorderLimits {
        max_sent_bytes: usize::MAX / 2,
        max_recv_bytes: usize::MAX / 2,
        max_sent_records: usize::MAX / 2,
        max_recv_records: usize::MAX / 2,
    });
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
                Some(Ok(RelayFrame::Data(d))) => {
                    rec.feed(Direction::Received, &d)?;
                    // The TLS client may be gone already; the bytes are recorded regardless.
                    let _ = lw.write_all(&d).await;
                }
                Some(Ok(RelayFrame::ServerClosed(why))) => {
                    tracing::debug!("server side closed: {why}");
                    let _ = lw.shutdown().await;
                }
                Some(Ok(RelayFrame::CloseAck(Err(why)))) => {
                    return Err(NetError::Verifier(format!("relay failed: {why}")))
                }
                Some(Ok(other)) => {
                    return Err(NetError::Verifier(format!("unexpected relay frame {other:?} before Close")))
                }
                Some(Err(e)) => return Err(e),
                None => return Err(NetError::Disconnected("verifier reader ended".into())),
            },
            _ = &mut close_rx => break,
        }
    }
    let transcript = rec.finish();
    let count =
        |n: usize| u32::try_from(n).map_err(|_| NetError::Tls("more than 2^32 records".into()));
    let close = RelayFrame::Close {
        sent: count(transcript.sent.len())?,
        received: count(transcript.received.len())?,
    };
    write_frame(&mut vw, &close.encode()).await?;
    let _ = vw.shutdown().await;
    // A task, not a future awaited later: the verifier's late frames must
    // be read while the proof streams, or they back up through the mux into
    // the verifier's link and it never reaches the proof.
    let ack = tokio::spawn(async move {
        loop {
            match rx.recv().await {
                // Server bytes relayed before the verifier saw our Close:
                // outside the cut transcript.
                Some(Ok(RelayFrame::Data(_) | RelayFrame::ServerClosed(_))) => {}
                Some(Ok(RelayFrame::CloseAck(r))) => return Ok(r),
                Some(Ok(other)) => {
                    return Err(NetError::Verifier(format!(
                        "unexpected relay frame {other:?}"
                    )))
                }
                Some(Err(e)) => return Err(e),
                None => return Err(NetError::Disconnected("verifier reader ended".into())),
            }
        }
    });
    Ok((transcript, ack))
}

/// The verifier's answer to our `Close`: the digest of its transcript (a
/// failed relay is the verifier's error).
async fn close_ack(ack: CloseAck) -> Result<[u8; 32]> {
    ack.await
        .map_err(|e| NetError::Disconnected(format!("relay reader: {e}")))??
        .map_err(|e| NetError::Verifier(format!("relay failed: {e}")))
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

/// A proof-phase error: a lost link is reported as a disconnection (the
/// verifier went away), the verifier's own message as its verdict, anything
/// else as the verifier's side failing.
fn zk_error(phase: &str, e: webproof_core::Error) -> NetError {
    use webproof_core::Error;
    match &e {
        Error::PeerAbort(msg) => match webproof_proxy::protocol::decode::<VerifierMsg>(msg) {
            Ok(VerifierMsg::Verdict {
                result: Err(why), ..
            }) => NetError::Verifier(format!("proof rejected: {why}")),
            Ok(VerifierMsg::Refused { reason }) => NetError::Verifier(format!("refused: {reason}")),
            _ => NetError::Verifier(format!(
                "{phase} failed: the verifier ended it with an unexpected message"
            )),
        },
        _ => crate::proof_step_error("the verifier", phase, e, |e| {
            NetError::Verifier(format!("{phase} failed: {e}"))
        }),
    }
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
