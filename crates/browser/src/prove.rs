//! The prover in the page: what the page asks for ([`Request`]), what it
//! gets back ([`Outcome`]), and [`prove`], which runs
//! `webproof_session`'s run for the mode on the page's runtime
//! ([`crate::runtime`]): the same code, and the same decisions, as
//! `webproof prove`. The credentials check before any network work
//! ([`refuse_unasked_secrets`]) and the summary of what was withheld
//! ([`hidden_summary`]) are the page's.
//!
//! One thread: the TLS session (or the 2PC session) and the preprocessing
//! interleave at their await points instead of running in parallel as
//! natively; the link yields to the event loop between stretches of
//! preprocessing work, and the TLS session is polled first.
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
use crate::link::Link;
use futures::StreamExt;
use serde::Serialize;
use std::sync::Arc;
use webproof_disclosure::http::RevealItem;
use webproof_disclosure::VerifierOutput;
use webproof_proxy::session::prover::ProverConfig;

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
    /// Requests after the first, on the same connection (proxy mode; the
    /// options' `requests`).
    pub next: Vec<webproof_disclosure::http::HttpRequest>,
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
    /// The whole run's limit (kind `timeout`; in MPC mode a verifier that
    /// stops after the prover's `Close` and before the audit is reported as
    /// cheating instead).
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

type Result<T, E = BrowserError> = std::result::Result<T, E>;

/// Default of [`Request::timeout_ms`] in MPC mode (a verifier that goes
/// silent after the page's `Close` is reported as cheating when it fires).
const MPC_TIMEOUT_MS: u32 = 120_000;
/// Default of [`Request::timeout_ms`] in proxy mode: long enough for the
/// largest response the prover takes.
const PROXY_TIMEOUT_MS: u32 = 3_600_000;

/// Prove what `req.url` serves: `webproof_session`'s run for the mode on
/// the page's runtime ([`crate::runtime`]), the same code as natively.
/// This converts the request and the result and relays the run's phases.
pub async fn prove(req: &Request, progress: &dyn Fn(&str)) -> Result<Outcome> {
    use crate::runtime::{PageLink, PageRuntime, RelayConnector};
    use webproof_session::prover::{Progress, Stage};
    let webproof_disclosure::http::HttpsUrl { host, port, path } = req
        .url
        .parse()
        .map_err(|e: webproof_disclosure::DisclosureError| BrowserError::Setup(e.to_string()))?;
    use webproof_disclosure::http::HttpRequest;
    let first = HttpRequest {
        method: req.method.clone(),
        path,
        headers: req.headers.clone(),
        body: req.body.clone(),
    };
    let requests: Vec<HttpRequest> = std::iter::once(first)
        .chain(req.next.iter().cloned())
        .collect();
    let max = webproof_disclosure::exchange::MAX_EXCHANGES;
    if requests.len() > max {
        return Err(BrowserError::Setup(format!(
            "{} requests: a session carries at most {max}",
            requests.len()
        )));
    }
    webproof_disclosure::http::check_exchange_targets(&req.reveal, requests.len())
        .map_err(|e| BrowserError::Setup(e.to_string()))?;
    let request = HttpRequest::encode_all(&requests, &host, port, req.padding);
    if !req.yes_reveal_secrets {
        refuse_unasked_secrets(&req.reveal, &request)?;
    }
    // The run reports its phases from wherever it is; the page hears them
    // here, on its own task.
    let (tx, mut phases) = futures::channel::mpsc::unbounded::<Stage>();
    let reports = Some(Progress(Arc::new(move |s| {
        let _ = tx.unbounded_send(s);
    })));
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
    let limit =
        |default: u32| std::time::Duration::from_millis(req.timeout_ms.unwrap_or(default).into());
    let run: futures::future::LocalBoxFuture<'_, webproof_session::Result<_>> = match &req.mpc_relay
    {
        Some(relay) => {
            let prover = webproof_session::mpc::prover::Prover::new(
                webproof_session::mpc::prover::Request {
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
                reports,
            )?;
            let server = RelayConnector {
                url: relay.to_string(),
            };
            Box::pin(async move {
                prover
                    .prove(
                        &PageRuntime,
                        &req.verifier,
                        connect,
                        &server,
                        limit(MPC_TIMEOUT_MS),
                        |_| {
                            "no record of cheating verifiers is kept in a page: do not use this \
                             verifier again"
                                .into()
                        },
                    )
                    .await
            })
        }
        None => {
            let mut roots = webproof_proxy::RootStore::webpki_roots();
            for pem in &req.ca_pems {
                roots
                    .add_pem(pem)
                    .map_err(|e| BrowserError::Setup(e.to_string()))?;
            }
            let prover = webproof_session::proxy::prover::Prover::new(
                ProverConfig {
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
                },
                webproof_session::proxy::prover::TlsOptions {
                    version: req.version,
                    suites: req.suites.clone(),
                    groups: Vec::new(),
                    ca_pems: req.ca_pems.clone(),
                },
                reports,
            );
            Box::pin(async move {
                prover
                    .prove(
                        &PageRuntime,
                        &req.verifier,
                        connect,
                        limit(PROXY_TIMEOUT_MS),
                    )
                    .await
            })
        }
    };
    let mut run = run;
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
            // Filled in by the bindings, which see the module's memory.
            wasm_memory_bytes: 0,
        },
    })
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
