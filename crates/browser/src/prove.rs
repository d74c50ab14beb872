//! The proxy-mode prover's driver in the page, over the browser's event
//! loop: the flights of `webproof_net::prover` in the same order, with the
//! WebSocket [`Link`], a rustls client driven by hand (no sockets: its TLS
//! bytes go into relay frames), time from `Date` and randomness from
//! `crypto.getRandomValues`. Every protocol decision is
//! [`ProverSession`]'s; this module moves bytes and reports progress.
//!
//! One thread: the TLS session and the preprocessing interleave at their
//! await points instead of running in parallel as natively; the link
//! yields to the event loop between stretches of preprocessing work, and
//! the TLS session is polled first.
//!
//! Why not a second worker for Ferret: handing each checked iteration's
//! trees and LPN step to a helper worker (a second instance of the module,
//! trees back by `postMessage`) was built and measured. On this project's
//! 2-core machine, where the verifier runs beside the browser, it made the
//! browser prover slower: Cable 549 to 689 ms, the 51 KB case 1.76 to 2.25
//! s (`scripts/browser-prover-test.sh --bench`), every engine function
//! slower in its profile, as three busy threads shared two cores. A page
//! on a machine with cores to spare may gain from it; that cannot be
//! measured here.

use crate::error::BrowserError;
use crate::link::{Link, StreamIo};
use futures::io::AsyncWriteExt;
use rand::rngs::OsRng;
use serde::Serialize;
use std::io::{Read, Write};
use std::sync::Arc;
use webproof_core::Channel;
use webproof_disclosure::http::RevealItem;
use webproof_disclosure::VerifierOutput;
use webproof_proxy::protocol::{
    self, ProverMsg, RelayFrame, VerifierMsg, MAX_CONTROL_MSG, MAX_RELAY_DATA, MAX_VERDICT_MSG,
};
use webproof_proxy::session::prover::{ProverConfig, ProverSession, TlsSecrets};
use webproof_proxy::Direction;
use webproof_tls_provider::{client_config, take_shared_secret, ClientOptions, CollectingKeyLog};
use webproof_tlsproof::session::ProverOpening;

/// What to prove.
#[derive(Clone, Debug)]
pub struct Request {
    /// The verifier's WebSocket URL (`ws://…/v1/session`, `wss://…`).
    pub verifier: String,
    /// `https://host[:port]/path`.
    pub url: String,
    /// The request method.
    pub method: String,
    /// The request body (empty: none).
    pub body: Vec<u8>,
    /// Extra request headers.
    pub headers: Vec<(String, String)>,
    /// What to reveal (empty: the default, the request without its
    /// credentials and the whole response; see [`RevealItem`]).
    pub reveal: Vec<RevealItem>,
    /// Extra trusted roots (PEM).
    pub ca_pems: Vec<Vec<u8>>,
    /// Bytes of `X-Padding` header value to add (0: none).
    pub padding: usize,
    /// Response size the prover expects (sizes the preprocessing).
    pub expect_response: usize,
    /// API key for verifiers that require one.
    pub api_key: Option<String>,
    /// Ask for a signed attestation over a commitment to the transcript.
    pub attest: Option<webproof_disclosure::attest::AttestOptions>,
    /// Offer only this TLS version (None: 1.3 and 1.2).
    pub version: Option<webproof_proxy::TlsVersion>,
    /// Offer only these suites (empty: all).
    pub suites: Vec<webproof_proxy::CipherSuite>,
    /// Let `all` (or a `sent:` range) reveal the request's credentials
    /// without naming them (`webproof prove --yes-reveal-secrets`).
    pub yes_reveal_secrets: bool,
    /// MPC mode: the prover reaches the server itself through `webproof
    /// relay` at this URL (`ws[s]://relay/tcp`), and the verifier takes
    /// part in the TLS client in 2PC. None: proxy mode.
    pub mpc_relay: Option<String>,
    /// MPC mode: the whole run's limit (a verifier that stops after the
    /// prover's `Close` and before the audit is reported as cheating).
    pub timeout_ms: Option<u32>,
}

/// Timing and traffic, as the prover counts them (the fields of
/// `webproof_net::ProveStats`).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Stats {
    /// Setup before the server connection (hello, OT bootstrap).
    pub time_preprocess_ms: f64,
    /// From the server connection to the verdict.
    pub time_online_ms: f64,
    /// Everything.
    pub time_total_ms: f64,
    /// The TLS session with the server (relay phase).
    pub time_tls_ms: f64,
    /// The proof phase.
    pub time_proof_ms: f64,
    /// Bytes sent to the verifier during setup.
    pub uploaded_preprocess: u64,
    /// Bytes received from the verifier during setup.
    pub downloaded_preprocess: u64,
    /// Bytes sent to the verifier after setup.
    pub uploaded_online: u64,
    /// Bytes received from the verifier after setup.
    pub downloaded_online: u64,
    /// The wasm module's linear memory after the proof (its peak so far).
    pub wasm_memory_bytes: u64,
}

/// A verified session.
#[derive(Clone, Debug, Serialize)]
pub struct Outcome {
    /// What the verifier attests.
    pub verified: VerifierOutput,
    /// Measurements.
    pub stats: Stats,
    /// The attestation bundle (`webproof prove --attest FILE`'s JSON, which
    /// `webproof present` reads; holds the commitment's secret seed), if
    /// one was asked for.
    pub attestation: Option<serde_json::Value>,
    /// The verifier's id for the session (32 lowercase hex digits), for
    /// the page's backend to fetch the stored result by; absent from a
    /// verifier that names no sessions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// What the verifier did not get.
    pub hidden: Hidden,
}

/// What was withheld from the verifier: the request's credentials by name
/// (the `hidden:` line of `webproof prove`) and the hidden byte counts.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Hidden {
    /// Credentials the verifier did not see (`Cookie value`, `query string`, …).
    pub secrets: Vec<String>,
    /// Credentials it did see, because the reveal items asked for them.
    pub revealed_secrets: Vec<String>,
    /// Hidden bytes of the request.
    pub sent_bytes: usize,
    /// Hidden bytes of the response.
    pub received_bytes: usize,
}

/// Refuse, before any network work, reveal items that would give the
/// verifier a credential the page did not name (as `webproof prove`
/// refuses without `--yes-reveal-secrets`).
pub fn refuse_unasked_secrets(reveal: &[RevealItem], request: &[u8]) -> Result<()> {
    let secrets = webproof_disclosure::http::unasked_secrets(reveal, request)
        .map_err(|e| BrowserError::Setup(e.to_string()))?;
    if secrets.is_empty() {
        return Ok(());
    }
    let by: Vec<String> = reveal
        .iter()
        .filter(|i| matches!(i, RevealItem::All | RevealItem::Sent(_)))
        .map(|i| format!("reveal {:?}", i.to_string()))
        .collect();
    let what: Vec<&str> = secrets.iter().map(|s| s.what.as_str()).collect();
    let names: Vec<String> = secrets
        .iter()
        .map(|s| format!("{:?}", s.item.to_string()))
        .collect();
    Err(BrowserError::Setup(format!(
        "{} would show the verifier the request's {}: leave reveal out (the default hides them), \
         name each one you mean to reveal ({}), or pass yesRevealSecrets: true",
        by.join(", "),
        what.join(", "),
        names.join(", ")
    )))
}

/// The request's credentials as the verifier's output shows them, and the
/// hidden byte counts.
pub fn hidden_summary(reveal: &[RevealItem], request: &[u8], out: &VerifierOutput) -> Hidden {
    let (secrets, revealed_secrets) =
        webproof_disclosure::http::secrets_by_visibility(reveal, request, &out.sent.revealed);
    Hidden {
        secrets,
        revealed_secrets,
        sent_bytes: out.sent.hidden(),
        received_bytes: out.received.hidden(),
    }
}

/// Milliseconds on the page's clock.
fn now_ms() -> f64 {
    js_sys::Date::now()
}

/// The page's clock for certificate validity (rustls reads no system clock here).
#[derive(Debug)]
struct PageClock;

impl rustls::time_provider::TimeProvider for PageClock {
    fn current_time(&self) -> Option<rustls::pki_types::UnixTime> {
        Some(rustls::pki_types::UnixTime::since_unix_epoch(
            std::time::Duration::from_millis(now_ms() as u64),
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

type Result<T, E = BrowserError> = std::result::Result<T, E>;

async fn send_msg(ch: &mut Channel<impl webproof_core::Io>, m: &ProverMsg) -> Result<()> {
    ch.send(&protocol::encode(m))
        .await
        .map_err(|e| BrowserError::link("sending a message", e))?;
    ch.flush()
        .await
        .map_err(|e| BrowserError::link("sending a message", e))
}

async fn recv_msg(
    ch: &mut Channel<impl webproof_core::Io>,
    what: &str,
    max: usize,
) -> Result<VerifierMsg> {
    let b = ch
        .recv(max)
        .await
        .map_err(|e| BrowserError::link(what, e))?;
    Ok(protocol::decode(&b).map_err(webproof_proxy::session::SessionError::from)?)
}

/// Fetch `req.url` through the verifier and prove the response;
/// `progress` hears the phase names as they start.
pub async fn prove(req: &Request, progress: &dyn Fn(&str)) -> Result<Outcome> {
    match &req.mpc_relay {
        Some(relay) => prove_mpc(req, relay, progress).await,
        None => prove_proxy(req, progress).await,
    }
}

/// Default of [`Request::timeout_ms`] in MPC mode.
const MPC_TIMEOUT_MS: u32 = 120_000;

/// MPC mode: `webproof_session::mpc::prover` on the page's runtime, the
/// server through the relay. The run and every decision in it are the
/// session crate's, as natively; this converts the request and the result.
async fn prove_mpc(req: &Request, relay: &str, progress: &dyn Fn(&str)) -> Result<Outcome> {
    use crate::runtime::{PageLink, PageRuntime, RelayConnector};
    use futures::StreamExt;
    use webproof_session::mpc::prover::{Prover, Request as MpcRequest};
    use webproof_session::prover::{Progress, Stage};
    let webproof_disclosure::http::HttpsUrl { host, port, path } = req
        .url
        .parse()
        .map_err(|e: webproof_disclosure::DisclosureError| BrowserError::Setup(e.to_string()))?;
    let request = webproof_disclosure::http::http_request(
        &req.method,
        &host,
        port,
        &path,
        &req.headers,
        &req.body,
        req.padding,
    );
    if !req.yes_reveal_secrets {
        refuse_unasked_secrets(&req.reveal, &request)?;
    }
    // The run reports its phases from wherever it is; the page hears them
    // here, on its own task.
    let (tx, mut phases) = futures::channel::mpsc::unbounded::<Stage>();
    let prover = Prover::new(
        MpcRequest {
            host,
            port,
            request: request.clone(),
            version: req.version,
            suites: req.suites.clone(),
            groups: Vec::new(),
            api_key: req.api_key.clone(),
            reveal: req.reveal.clone(),
            attest: req.attest.clone(),
        },
        Some(Progress(Arc::new(move |s| {
            let _ = tx.unbounded_send(s);
        }))),
    )?;
    let phase = |s: Stage| match s {
        Stage::Admitted => Some("preprocessing"),
        Stage::ServerReached => Some("tls"),
        Stage::Proving => Some("proving"),
        Stage::Verdict => Some("verdict"),
        Stage::Connected | Stage::Response(_) => None,
    };
    progress("connecting");
    let connect = async {
        Link::connect(&req.verifier)
            .await
            .map(PageLink::new)
            .map_err(webproof_session::Error::Disconnected)
    };
    let limit = std::time::Duration::from_millis(req.timeout_ms.unwrap_or(MPC_TIMEOUT_MS).into());
    let server = RelayConnector {
        url: relay.to_string(),
    };
    let run = prover.prove(&PageRuntime, &req.verifier, connect, &server, limit, |_| {
        "no record of cheating verifiers is kept in a page: do not use this verifier again".into()
    });
    let mut run = std::pin::pin!(run);
    let ran = loop {
        match futures::future::select(run.as_mut(), phases.next()).await {
            futures::future::Either::Left((ran, _)) => break ran,
            futures::future::Either::Right((Some(s), _)) => {
                if let Some(p) = phase(s) {
                    progress(p)
                }
            }
            futures::future::Either::Right((None, _)) => break run.as_mut().await,
        }
    };
    while let Ok(s) = phases.try_recv() {
        if let Some(p) = phase(s) {
            progress(p)
        }
    }
    let out = ran?;
    progress("done");
    let attestation = match &out.attestation {
        Some(b) => Some(
            serde_json::from_str(&b.to_json())
                .map_err(|e| BrowserError::Setup(format!("attestation bundle: {e}")))?,
        ),
        None => None,
    };
    let s = &out.stats;
    Ok(Outcome {
        hidden: hidden_summary(&req.reveal, &request, &out.output),
        attestation,
        session_id: out.session_id.map(|id| id.to_string()),
        verified: out.output,
        stats: Stats {
            time_preprocess_ms: s.time_preprocess_ms,
            time_online_ms: s.time_online_ms,
            time_total_ms: s.time_total_ms,
            time_tls_ms: s.time_tls_ms,
            time_proof_ms: s.time_proof_ms,
            uploaded_preprocess: s.uploaded_preprocess,
            downloaded_preprocess: s.downloaded_preprocess,
            uploaded_online: s.uploaded_online,
            downloaded_online: s.downloaded_online,
            wasm_memory_bytes: 0,
        },
    })
}

/// Proxy mode: the verifier relays the TLS session.
async fn prove_proxy(req: &Request, progress: &dyn Fn(&str)) -> Result<Outcome> {
    let t0 = now_ms();
    let webproof_disclosure::http::HttpsUrl { host, port, path } = req
        .url
        .parse()
        .map_err(|e: webproof_disclosure::DisclosureError| BrowserError::Setup(e.to_string()))?;
    let mut roots = webproof_proxy::RootStore::webpki_roots();
    for pem in &req.ca_pems {
        roots
            .add_pem(pem)
            .map_err(|e| BrowserError::Setup(e.to_string()))?;
    }
    let request = webproof_disclosure::http::http_request(
        &req.method,
        &host,
        port,
        &path,
        &req.headers,
        &req.body,
        req.padding,
    );
    if !req.yes_reveal_secrets {
        refuse_unasked_secrets(&req.reveal, &request)?;
    }
    let keylog = CollectingKeyLog::new();
    let config = client_config(
        // As natively (webproof_net's client_config): the same options
        // restrict the same provider.
        &ClientOptions {
            version: req.version,
            suites: &req.suites,
            ca_pems: &req.ca_pems,
            ..Default::default()
        },
        keylog.clone(),
        Arc::new(PageClock),
    )
    .map_err(|e| BrowserError::Setup(e.to_string()))?;
    let server_name = rustls::pki_types::ServerName::try_from(host.clone())
        .map_err(|_| BrowserError::Setup(format!("{host:?} is not a valid server name")))?;
    let mut session = ProverSession::new(ProverConfig {
        host,
        port,
        api_key: req.api_key.clone(),
        request: request.clone(),
        expect_response: req.expect_response,
        version: req.version,
        suites: req.suites.clone(),
        reveal: req.reveal.clone(),
        attest: req.attest.clone(),
        roots,
    });

    progress("connecting");
    let opening = ProverOpening::new(session.engine_config(), &mut OsRng)
        .map_err(|e| BrowserError::engine("the proof setup", e))?;
    let link = Link::connect(&req.verifier)
        .await
        .map_err(BrowserError::Disconnected)?;
    let mut ch = Channel::new(link.plain());
    // The hello and the engine's opening in one flight, as natively.
    ch.send(&protocol::encode(&session.hello()))
        .await
        .map_err(|e| BrowserError::link("sending the hello", e))?;
    ch.send(&opening.message())
        .await
        .map_err(|e| BrowserError::link("sending the hello", e))?;
    ch.flush()
        .await
        .map_err(|e| BrowserError::link("sending the hello", e))?;
    let answer = recv_msg(
        &mut ch,
        "the verifier's answer to the hello",
        MAX_CONTROL_MSG,
    )
    .await?;
    session.on_hello_answer(answer)?;

    // From here the link carries two streams at once: the preprocessing
    // starts at once, and the relay stream brings the verifier's `Ready` as
    // soon as it has reached the server; the TLS session then runs beside
    // the rest of the preprocessing (as natively).
    progress("preprocessing");
    let (relay, preprocessing) = link.start_mux();
    // Ferret's trees and the base OT let the relay's frames in between
    // them (see `link`).
    let pauses = link.pause_while_relaying();
    let warm = async {
        let mut pch = Channel::new(preprocessing);
        let mut pre = opening
            .bootstrap(&mut pch, &mut OsRng)
            .await
            .map_err(|e| zk_error("the proof setup", e))?;
        pre.warm_up(&mut pch)
            .await
            .map_err(|e| zk_error("the proof setup", e))?;
        let mut io = pch
            .into_inner()
            .await
            .map_err(|e| BrowserError::link("after the proof setup", e))?;
        io.close()
            .await
            .map_err(|e| BrowserError::Disconnected(e.to_string()))?;
        Ok::<_, BrowserError>(pre)
    };
    let mut relay_out = relay.clone();
    let mut relay_in = Channel::new(relay);
    let session = &mut session;
    let link_ref = &link;
    let tls = async {
        let ready = recv_msg(&mut relay_in, "the verifier's answer", MAX_CONTROL_MSG).await?;
        session.on_ready(ready)?;
        let t1 = now_ms();
        let at_ready = link_ref.counters();
        progress("tls");
        let mut rec = ProverSession::recorder();
        let http = tls_session(
            config,
            server_name,
            &request,
            (&mut relay_in, &mut relay_out),
            &mut rec,
        )
        .await;
        let close = session.close(rec.finish())?;
        write_frame(&mut relay_out, &close.encode()).await?;
        relay_out
            .close()
            .await
            .map_err(|e| BrowserError::Disconnected(e.to_string()))?;
        Ok::<_, BrowserError>((http, t1, at_ready, now_ms()))
    };
    // The TLS session first: whenever the task wakes, relay frames are
    // answered before the next stretch of preprocessing (see `link`).
    let (tls, warm) = futures::join!(tls, warm);
    drop(pauses);
    // The verifier's refusal explains a preprocessing failure (its stream
    // ended) better.
    let (http, t1, (up0, down0), t2) = tls?;
    let response = match http {
        Ok(r) => r,
        // The relay's failure itself (a request over max_sent_bytes): the
        // verifier has said why and closed; no CloseAck follows.
        Err(e) if e.decided_by() == "verifier" => return Err(e),
        // A failed relay (limits, the server refused) explains a failed
        // TLS session better: wait for its reason.
        Err(e) => {
            close_ack(&mut relay_in).await?;
            return Err(e);
        }
    };
    let pre = warm?;

    progress("proving");
    let (announce, step) = session.prepare_proof(
        &response,
        &Captured(keylog),
        (now_ms() / 1000.0) as u64,
        &mut OsRng,
    )?;
    send_msg(&mut ch, &announce).await?;
    drop(announce);
    let proof = pre
        .prove(ch, &step.statement, &step.witness, &step.context)
        .await
        .map_err(|e| zk_error("the proof", e));
    drop(step);
    // The verifier's record of the session came before anything of the
    // proof phase: a failed relay explains a failed proof better.
    let digest = close_ack(&mut relay_in).await?;
    let (_, mut ch) = proof?;
    session.on_close_ack(digest)?;
    progress("verdict");
    let verdict = recv_msg(&mut ch, "the verdict", MAX_VERDICT_MSG).await?;
    let outcome = session.on_verdict(verdict)?;
    let t3 = now_ms();
    let (up, down) = link.counters();
    progress("done");
    let attestation = match &outcome.attestation {
        Some(b) => Some(
            serde_json::from_str(&b.to_json())
                .map_err(|e| BrowserError::Setup(format!("attestation bundle: {e}")))?,
        ),
        None => None,
    };
    Ok(Outcome {
        hidden: hidden_summary(&req.reveal, &request, &outcome.output),
        attestation,
        session_id: outcome.session_id.map(|id| id.to_string()),
        verified: outcome.output,
        stats: Stats {
            time_preprocess_ms: t1 - t0,
            time_online_ms: t3 - t1,
            time_total_ms: t3 - t0,
            time_tls_ms: t2 - t1,
            time_proof_ms: t3 - t2,
            uploaded_preprocess: up0,
            downloaded_preprocess: down0,
            uploaded_online: up - up0,
            downloaded_online: down - down0,
            // Filled in by the bindings, which see the module's memory.
            wasm_memory_bytes: 0,
        },
    })
}

/// One length-prefixed frame (the `Channel` format) on a section stream.
async fn write_frame(io: &mut StreamIo, payload: &[u8]) -> Result<()> {
    let mut buf = Vec::with_capacity(payload.len() + 4);
    buf.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    buf.extend_from_slice(payload);
    io.write_all(&buf)
        .await
        .map_err(|e| BrowserError::Disconnected(format!("relay: {e}")))
}

/// The TLS session with the server through the relay: rustls driven by
/// hand, its records framed as `RelayFrame::Data` and recorded in both
/// directions, until the response is complete or the server closes.
async fn tls_session(
    config: Arc<rustls::ClientConfig>,
    name: rustls::pki_types::ServerName<'static>,
    request: &[u8],
    (relay, relay_out): (&mut Channel<StreamIo>, &mut StreamIo),
    rec: &mut webproof_proxy::Recorder,
) -> Result<Vec<u8>> {
    use webproof_disclosure::http::{parse_message, response_end};
    let tls_err = |e: &dyn std::fmt::Display| BrowserError::Tls(e.to_string());
    let mut conn = rustls::ClientConnection::new(config, name).map_err(|e| tls_err(&e))?;
    conn.writer().write_all(request).map_err(|e| tls_err(&e))?;
    let mut response = Vec::new();
    let mut buf = vec![0u8; 16 << 10];
    loop {
        while conn.wants_write() {
            let mut out = Vec::new();
            conn.write_tls(&mut out).map_err(|e| tls_err(&e))?;
            for piece in out.chunks(MAX_RELAY_DATA) {
                rec.feed(Direction::Sent, piece)
                    .map_err(webproof_proxy::session::SessionError::from)?;
                write_frame(relay_out, &RelayFrame::Data(piece.to_vec()).encode()).await?;
            }
        }
        if let Some(end) = response_end(&response) {
            response.truncate(end);
            return Ok(response);
        }
        let frame = relay
            .recv(MAX_RELAY_DATA + 1)
            .await
            .map_err(|e| BrowserError::link("the relay", e))?;
        let frame =
            RelayFrame::decode(&frame).map_err(webproof_proxy::session::SessionError::from)?;
        let Some(data) = ProverSession::on_relay_frame(frame)? else {
            break; // the server side closed
        };
        rec.feed(Direction::Received, &data)
            .map_err(webproof_proxy::session::SessionError::from)?;
        let mut rd = &data[..];
        while !rd.is_empty() {
            conn.read_tls(&mut rd).map_err(|e| tls_err(&e))?;
            conn.process_new_packets().map_err(|e| tls_err(&e))?;
            // Drain after every read: a relay frame may carry more records
            // than rustls buffers plaintext for (16 KiB), and it refuses
            // the rest once that buffer is full.
            if drain_plaintext(&mut conn, &mut buf, &mut response)? {
                // close_notify: the response ends here.
                if response.is_empty() {
                    return Err(BrowserError::Tls("the server sent no response".into()));
                }
                parse_message(&response).map_err(webproof_proxy::session::SessionError::from)?;
                return Ok(response);
            }
        }
    }
    if response.is_empty() {
        return Err(BrowserError::Tls("the server sent no response".into()));
    }
    parse_message(&response).map_err(webproof_proxy::session::SessionError::from)?;
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
                    return Err(BrowserError::Tls(format!(
                        "response larger than {} MiB",
                        MAX_RESPONSE >> 20
                    )));
                }
                response.extend_from_slice(&buf[..n]);
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(false),
            Err(e) => return Err(BrowserError::Tls(e.to_string())),
        }
    }
}

/// The verifier's remaining relay frames up to its `CloseAck`: the digest
/// of the transcript it recorded, or its reason for failing the relay.
async fn close_ack(relay: &mut Channel<StreamIo>) -> Result<[u8; 32]> {
    loop {
        let frame = relay
            .recv(MAX_RELAY_DATA + 1)
            .await
            .map_err(|e| BrowserError::link("waiting for the verifier's CloseAck", e))?;
        let frame =
            RelayFrame::decode(&frame).map_err(webproof_proxy::session::SessionError::from)?;
        if let Some(digest) = ProverSession::on_late_relay_frame(frame)? {
            return Ok(digest);
        }
    }
}

/// A proof-phase error: the verifier's own message (a verdict in the
/// proof's place) as its rejection, anything else as the engine's or the
/// link's failure.
fn zk_error(phase: &str, e: webproof_core::Error) -> BrowserError {
    if let Some(why) = ProverSession::on_proof_abort(&e) {
        return why.into();
    }
    match e {
        webproof_core::Error::Channel(c) => BrowserError::link(phase, c),
        e => BrowserError::engine(phase, e),
    }
}

#[cfg(test)]
mod tests {
    use super::refuse_unasked_secrets;
    use webproof_disclosure::http::RevealItem;

    #[test]
    fn all_over_credentials_is_refused_unless_named() {
        let req = b"GET /x HTTP/1.1\r\nHost: a\r\nCookie: s=CKSECRET\r\n\r\n";
        let e = refuse_unasked_secrets(&[RevealItem::All], req).unwrap_err();
        assert_eq!(e.kind(), "setup");
        let msg = e.to_string();
        assert!(msg.contains("Cookie value"), "{msg}");
        assert!(msg.contains("yesRevealSecrets"), "{msg}");
        // The default, or the Cookie named: nothing given away unasked.
        refuse_unasked_secrets(&[], req).unwrap();
        let named: RevealItem = "req-header:cookie".parse().unwrap();
        refuse_unasked_secrets(&[RevealItem::All, named], req).unwrap();
        // No credential in the request: `all` is fine.
        refuse_unasked_secrets(&[RevealItem::All], b"GET / HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    }
}
