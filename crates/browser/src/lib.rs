//! webproof's prover in the browser: proxy mode, and MPC mode through
//! `webproof relay`.
//!
//! The exported API (`wasm-bindgen`, ES module):
//!
//! ```js
//! const { verified, stats, attestation } = await prove(
//!   { verifier: "wss://verifier.example/v1/session", url: "https://server/json",
//!     headers: { accept: "application/json" }, reveal: ["json:name"], ca: [pem],
//!     tls: "1.2", suite: ["ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"] },
//!   (phase) => console.log(phase), abortController.signal);
//! ```
//!
//! `verified` is the verifier's output (`webproof_disclosure::VerifierOutput` as
//! JSON, what `webproof prove --json` prints), `stats` the timings and
//! traffic, `attestation` the bundle if `attest` asked for one. A failed
//! proof rejects with an `Error` carrying `kind` (a `RejectKind` wire name
//! such as `certificate`, `unauthorized` or `timeout`, or `setup`, `tls`,
//! `disconnected`, `cancelled`, `engine`), `detail` and `decidedBy`
//! (`verifier` or `prover`). Pages use it through the npm package
//! (`web/package`), which runs it in a Web Worker.
//!
//! Modules: [`link`] owns the WebSocket byte stream and the multiplexed
//! section's demultiplexing; [`mod@prove`] drives the session core
//! (`webproof_proxy::session::prover`) and the proof engine over it;
//! [`mod@warm`] runs the engine once in memory before a page's first
//! proof (the package's `preload`); [`error`] types the failures.
//! Presentations are checked by a module of their own
//! (`webproof-browser-verify`). This file only converts to and from JavaScript values.

#![forbid(unsafe_code)]

pub mod error;
pub mod link;
pub mod prove;
pub mod runtime;
pub mod warm;

use serde::Deserialize;
use wasm_bindgen::prelude::*;
use webproof_disclosure::attest::AttestOptions;
use webproof_disclosure::http::RevealItem;
use webproof_proxy::{CipherSuite, TlsVersion};

pub use error::BrowserError;

/// One string or several.
#[derive(Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    fn into_vec(self) -> Vec<String> {
        match self {
            OneOrMany::One(s) => vec![s],
            OneOrMany::Many(v) => v,
        }
    }
}

/// `attest`: `true`, or how to cut the committed transcript.
#[derive(Deserialize)]
#[serde(untagged)]
enum Attest {
    Flag(bool),
    With(AttestWith),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct AttestWith {
    /// Reveal items that get leaves of their own (`prove --commit-at`).
    #[serde(default)]
    commit_at: Vec<String>,
    /// Leaf size in bytes.
    chunk_len: Option<usize>,
}

/// The options object of `prove`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Options {
    verifier: String,
    url: String,
    #[serde(default)]
    headers: serde_json::Map<String, serde_json::Value>,
    /// The request method (default `GET`, `POST` with a body).
    method: Option<String>,
    /// The request body (UTF-8).
    #[serde(default)]
    body: String,
    /// Requests after the first, on the same connection.
    #[serde(default)]
    requests: Vec<NextRequest>,
    /// Reveal items as on the command line (`all`, `body`, `json:PATH`, …).
    reveal: Option<OneOrMany>,
    /// Extra trusted roots, PEM.
    ca: Option<OneOrMany>,
    /// Bytes of `X-Padding` header value to add (benchmarks' request sizes).
    #[serde(default)]
    padding: usize,
    expect_response: Option<usize>,
    api_key: Option<String>,
    /// Give up after this many milliseconds (default: none).
    timeout_ms: Option<u32>,
    /// Ask the verifier for a signed attestation.
    attest: Option<Attest>,
    /// The TLS version to offer, as `webproof prove --tls` (default: both).
    tls: Option<String>,
    /// Cipher suites to offer, as `webproof prove --suite` (default: all).
    suite: Option<OneOrMany>,
    /// Let `all` or a `sent:` range reveal the request's credentials
    /// (`webproof prove --yes-reveal-secrets`).
    #[serde(default)]
    yes_reveal_secrets: bool,
    /// `proxy` (default) or `mpc`.
    mode: Option<String>,
    /// MPC mode: the `webproof relay` endpoint that reaches the server.
    relay: Option<String>,
}

/// One of `requests`: a request after the first, to the same server.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NextRequest {
    /// Request target (path and query), e.g. `/api/items?page=2`.
    path: String,
    /// Default `GET`, `POST` with a body.
    method: Option<String>,
    #[serde(default)]
    headers: serde_json::Map<String, serde_json::Value>,
    /// UTF-8.
    #[serde(default)]
    body: String,
}

/// Header values of an options object, which must be strings.
fn header_pairs(
    headers: serde_json::Map<String, serde_json::Value>,
) -> Result<Vec<(String, String)>, BrowserError> {
    headers
        .into_iter()
        .map(|(k, v)| match v {
            serde_json::Value::String(s) => Ok((k, s)),
            other => Err(BrowserError::Setup(format!(
                "header {k:?}: expected a string, got {other}"
            ))),
        })
        .collect()
}

/// `method`, checked, or GET without a body and POST with one.
fn method_or_default(method: Option<String>, body: &str) -> Result<String, BrowserError> {
    match method {
        Some(m) if webproof_disclosure::http::valid_method(&m) => Ok(m),
        Some(m) => Err(BrowserError::UnknownOption {
            option: "method",
            value: m,
            expected: "an upper-case HTTP method (GET, POST, PUT, ...)".into(),
        }),
        None if body.is_empty() => Ok("GET".into()),
        None => Ok("POST".into()),
    }
}

fn parse_items(items: Vec<String>) -> Result<Vec<RevealItem>, BrowserError> {
    items
        .iter()
        .map(|r| r.parse::<RevealItem>())
        .collect::<Result<_, _>>()
        .map_err(|e| BrowserError::Setup(e.to_string()))
}

/// `tls`: the values of `webproof prove --tls`, and the harness's `any`.
fn parse_version(v: &str) -> Result<Option<TlsVersion>, BrowserError> {
    match v {
        "1.2" => Ok(Some(TlsVersion::Tls12)),
        "1.3" => Ok(Some(TlsVersion::Tls13)),
        "any" => Ok(None),
        _ => Err(BrowserError::UnknownOption {
            option: "tls",
            value: v.to_string(),
            expected: "1.2, 1.3 or any".into(),
        }),
    }
}

/// `suite`: names as `webproof prove --suite` takes them.
fn parse_suites(names: Vec<String>) -> Result<Vec<CipherSuite>, BrowserError> {
    names
        .into_iter()
        .map(|n| {
            CipherSuite::from_name(&n).ok_or_else(|| BrowserError::UnknownOption {
                option: "suite",
                value: n,
                expected: CipherSuite::ALL.map(CipherSuite::name).join(", "),
            })
        })
        .collect()
}

fn parse_options(v: &JsValue) -> Result<prove::Request, BrowserError> {
    let text = js_sys::JSON::stringify(v)
        .ok()
        .and_then(|s| s.as_string())
        .ok_or_else(|| BrowserError::Setup("options must be an object".into()))?;
    let o: Options =
        serde_json::from_str(&text).map_err(|e| BrowserError::Setup(format!("options: {e}")))?;
    let headers = header_pairs(o.headers)?;
    let next = o
        .requests
        .into_iter()
        .map(|r| {
            if !r.path.starts_with('/') {
                return Err(BrowserError::Setup(format!(
                    "requests: path {:?} must start with / (the server is url's)",
                    r.path
                )));
            }
            Ok(webproof_disclosure::http::HttpRequest {
                method: method_or_default(r.method, &r.body)?,
                path: r.path,
                headers: header_pairs(r.headers)?,
                body: r.body.into_bytes(),
            })
        })
        .collect::<Result<_, _>>()?;
    let reveal = parse_items(o.reveal.map(OneOrMany::into_vec).unwrap_or_default())?;
    let attest = match o.attest {
        None | Some(Attest::Flag(false)) => None,
        Some(Attest::Flag(true)) => Some(AttestOptions::default()),
        Some(Attest::With(a)) => Some(AttestOptions {
            chunk_len: a.chunk_len,
            boundaries: parse_items(a.commit_at)?,
        }),
    };
    let version = match &o.tls {
        Some(v) => parse_version(v)?,
        None => None,
    };
    let suites = parse_suites(o.suite.map(OneOrMany::into_vec).unwrap_or_default())?;
    let method = method_or_default(o.method, &o.body)?;
    let mpc_relay = match (o.mode.as_deref(), o.relay) {
        (None | Some("proxy"), None) => None,
        (None | Some("proxy"), Some(_)) => {
            return Err(BrowserError::Setup(
                "`relay` is for MPC mode: add mode: \"mpc\", or leave the relay out".into(),
            ))
        }
        (Some("mpc"), Some(r)) => Some(r),
        (Some("mpc"), None) => {
            return Err(BrowserError::Setup(
                "MPC mode needs `relay`: the URL of a `webproof relay` that reaches the \
                 server (ws://HOST:PORT/tcp); a page cannot open TCP connections itself"
                    .into(),
            ))
        }
        (Some(m), _) => {
            return Err(BrowserError::UnknownOption {
                option: "mode",
                value: m.to_string(),
                expected: "proxy or mpc".into(),
            })
        }
    };
    let req = prove::Request {
        verifier: o.verifier,
        url: o.url,
        method,
        body: o.body.into_bytes(),
        headers,
        next,
        reveal,
        ca_pems: o
            .ca
            .map(OneOrMany::into_vec)
            .unwrap_or_default()
            .into_iter()
            .map(String::into_bytes)
            .collect(),
        padding: o.padding,
        expect_response: o
            .expect_response
            .unwrap_or(webproof_proxy::session::prover::DEFAULT_EXPECT_RESPONSE),
        api_key: o.api_key,
        attest,
        version,
        suites,
        yes_reveal_secrets: o.yes_reveal_secrets,
        timeout_ms: o.timeout_ms,
        mpc_relay,
    };
    Ok(req)
}

/// Resolves after `ms` milliseconds, on the global `setTimeout` (a window
/// or a worker).
pub(crate) async fn sleep_ms(ms: u32) {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        let global = js_sys::global();
        if let Ok(f) = js_sys::Reflect::get(&global, &"setTimeout".into()) {
            let f: js_sys::Function = f.unchecked_into();
            let _ = f.call2(&global, &resolve, &ms.into());
        }
    });
    let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
}

thread_local! {
    /// The message of the last panic (the engine traps after it).
    static LAST_PANIC: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Keep panic messages for [`last_panic`] and the console: a panic traps
/// the module, and the trap itself says only `unreachable`.
fn keep_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            let msg = info.to_string();
            web_sys::console::error_1(&format!("webproof engine panic: {msg}").into());
            LAST_PANIC.with(|p| *p.borrow_mut() = Some(msg));
        }))
    });
}

/// The message of the panic that trapped the module, if one did (the
/// instance must not be used after a trap).
#[wasm_bindgen(js_name = lastPanic, skip_typescript)]
pub fn last_panic() -> Option<String> {
    LAST_PANIC.with(|p| p.borrow().clone())
}

/// Resolves when `signal` aborts (at once if it has).
async fn aborted(signal: &web_sys::AbortSignal) {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        if signal.aborted() {
            let _ = resolve.call0(&JsValue::NULL);
            return;
        }
        let once = web_sys::AddEventListenerOptions::new();
        once.set_once(true);
        let _ = signal.add_event_listener_with_callback_and_add_event_listener_options(
            "abort", &resolve, &once,
        );
    });
    let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
}

fn js_error(e: &BrowserError) -> JsValue {
    let err = js_sys::Error::new(&e.to_string());
    let set = |k: &str, v: &str| {
        let _ = js_sys::Reflect::set(&err, &k.into(), &v.into());
    };
    set("kind", &e.kind());
    set("detail", &e.detail());
    set("decidedBy", e.decided_by());
    err.into()
}

#[wasm_bindgen(typescript_custom_section)]
const TS_API: &'static str = r#"
/** Options of `prove`. */
export interface ProveOptions {
  /** The verifier's WebSocket endpoint: `ws://host:port/v1/session` or `wss://…`. */
  verifier: string;
  /** `https://host[:port]/path` to fetch. */
  url: string;
  /** Extra request headers. */
  headers?: Record<string, string>;
  /** The request method, upper case (default `GET`, or `POST` when a body is given). */
  method?: string;
  /** The request body (UTF-8), sent with its `Content-Length`. */
  body?: string;
  /** Further requests on the same TLS connection, after the one `url`, `method`, `headers` and `body` describe (at most 32 in all). In proxy mode each goes once the response before it is complete; in MPC mode all go in one flight (HTTP/1.1 pipelining: the page cannot read a response before the session ends), the responses read until the server closes. Only the last asks for `Connection: close`. Reveal items apply to every exchange; prefix one with `N/` for exchange N only (`2/json:data.id`). The verified output's `received` holds every response in order. */
  requests?: { path: string; method?: string; headers?: Record<string, string>; body?: string }[];
  /** What to reveal, as `webproof prove --reveal`: by default the whole request except its credentials (secret header values, the query string) and the whole response; `all` (credentials included), `none`, `http`, `headers`, `header:NAME`, `body`, `json:PATH`, `recv:A-B`, `secret-header:NAME`, …; with `requests`, `N/ITEM` for exchange N only. */
  reveal?: string | string[];
  /** Extra trusted roots (PEM), for test servers. */
  ca?: string | string[];
  /** Bytes of X-Padding header to add. */
  padding?: number;
  /** Response size expected (sizes the preprocessing; default 8192). */
  expectResponse?: number;
  /** API key for verifiers that require one. */
  apiKey?: string;
  /** Give up after this many milliseconds (rejects with kind `timeout`; the service ends the session). */
  timeoutMs?: number;
  /** Ask the verifier for a signed attestation over a commitment to the transcript: `true`, or the reveal items that get leaves of their own and the leaf size. */
  attest?: boolean | { commitAt?: string[]; chunkLen?: number };
  /** The TLS version to offer, as `webproof prove --tls`: `1.2`, `1.3` or `any` (default). Another value rejects with kind `setup`. */
  tls?: "1.2" | "1.3" | "any";
  /** Cipher suites to offer, as `webproof prove --suite` (e.g. `TLS13_AES_128_GCM_SHA256`, `ECDHE_ECDSA_WITH_AES_128_GCM_SHA256`; default: all). An unknown name rejects with kind `setup`. */
  suite?: string | string[];
  /** Let `reveal: "all"` (or a `sent:` range) show the verifier the request's credentials (Cookie, Authorization, secret headers); without it such a proof rejects with kind `setup` before any network work. */
  yesRevealSecrets?: boolean;
  /** `proxy` (default: the verifier relays the TLS session) or `mpc` (the page reaches the server itself through `relay` and the verifier takes part in the TLS client in two-party computation; TLS 1.2, or TLS 1.3 with `tls: "1.3"`). */
  mode?: "proxy" | "mpc";
  /** MPC mode: a `webproof relay` endpoint that reaches the server (`ws://HOST:PORT/tcp`, `wss://…`). */
  relay?: string;
}
/** The phases `progress` hears, in order. */
export type Phase = "connecting" | "preprocessing" | "tls" | "proving" | "verdict" | "done";
/** A verified session: the verifier's output (webproof_disclosure::VerifierOutput) and measurements. */
export interface ProveResult {
  verified: {
    server_name: string; server_port: number; time: number;
    tls_version: string; cipher_suite: string; key_exchange_group: string;
    proof: "zk" | "full-reveal" | "mpc";
    sent: Disclosed; received: Disclosed;
    /** null: not established (MPC mode); false/0 with no complete framing: the response may be truncated. */
    server_close_notify: boolean | null; server_records_after_cut: number | null;
    [more: string]: unknown;
  };
  stats: {
    time_preprocess_ms: number; time_online_ms: number; time_total_ms: number;
    time_tls_ms: number; time_proof_ms: number;
    uploaded_preprocess: number; downloaded_preprocess: number;
    uploaded_online: number; downloaded_online: number;
    /** The wasm module's linear memory after the proof (its peak so far). */
    wasm_memory_bytes: number;
  };
  /** The attestation bundle (`webproof prove --attest FILE`'s JSON, read by `webproof present`), if `attest` asked for one. It holds the commitment's secret seed. */
  attestation: Record<string, unknown> | null;
  /** What the verifier did not get: the request's credentials by name (`Cookie value`, `query string`, …), those it did get, and the hidden byte counts. */
  hidden: { secrets: string[]; revealed_secrets: string[]; sent_bytes: number; received_bytes: number };
}
/** One direction's data: `bytes` (hex) with hidden bytes zero, `revealed` ranges, `text` with hidden bytes as █. */
export interface Disclosed { len: number; revealed: { start: number; end: number }[]; text: string; bytes: string; }
/** How `prove` rejects. `kind`: a RejectKind wire name (`unauthorized`, `certificate`, `timeout`, …) or `setup`, `tls`, `disconnected`, `cancelled`, `engine`. */
export interface ProveError extends Error { kind: string; detail: string; decidedBy: "verifier" | "server" | "network" | "prover"; }
/** Prove what `options.url` serves through the verifier; an abort of `signal` cancels (kind `cancelled`, the service ends the session); rejects with a `ProveError`. */
export function prove(options: ProveOptions, progress?: ((phase: Phase) => void) | null, signal?: AbortSignal | null): Promise<ProveResult>;
/** Run the engine once on a synthetic session in memory (prover and verifier), and the TLS client through a handshake with a server in memory, so that the first proof runs optimised code; returns the milliseconds it took; throws a `ProveError` of kind `engine` if that proof does not verify. */
export function warm(): number;
/** Build the MPC key derivation's garbling plans ahead (kept for every later MPC proof of this module) and run the garbling kernels once in memory; returns the milliseconds it took; throws a `ProveError` of kind `engine` if that fails. */
export function warmMpc(): number;
/** The message of the panic that trapped the module, if one did (the instance must not be used after a trap). */
export function lastPanic(): string | undefined;
"#;

/// Prove what `options.url` serves, through the verifier at
/// `options.verifier`; `progress(phase)` hears `connecting`,
/// `preprocessing`, `tls`, `proving`, `verdict` and `done`; an abort of
/// `signal` cancels the proof (kind `cancelled`). Resolves to
/// `{verified, stats, attestation}`; rejects with an `Error` with `kind`,
/// `detail` and `decidedBy` (see the crate docs).
#[wasm_bindgen(skip_typescript)]
pub async fn prove(
    options: JsValue,
    progress: Option<js_sys::Function>,
    signal: Option<web_sys::AbortSignal>,
) -> Result<JsValue, JsValue> {
    keep_panics();
    let req = parse_options(&options).map_err(|e| js_error(&e))?;
    let report = |phase: &str| {
        if let Some(f) = &progress {
            let _ = f.call1(&JsValue::NULL, &phase.into());
        }
    };
    // The run keeps its own limit (`timeoutMs`). On cancellation the
    // proof's future is dropped, which closes the link: the service ends
    // the session.
    let proof = prove::prove(&req, &report);
    let stop = async {
        match &signal {
            Some(s) => aborted(s).await,
            None => futures::future::pending().await,
        }
        Err::<prove::Outcome, _>(BrowserError::Cancelled)
    };
    futures::pin_mut!(proof, stop);
    let mut outcome = futures::future::select(proof, stop)
        .await
        .factor_first()
        .0
        .map_err(|e| js_error(&e))?;
    outcome.stats.wasm_memory_bytes = wasm_memory_bytes();
    let json = serde_json::to_string(&outcome)
        .map_err(|e| js_error(&BrowserError::Setup(e.to_string())))?;
    js_sys::JSON::parse(&json)
}

/// Run the engine once on a synthetic session, prover and verifier in
/// memory ([`mod@warm`]), so that a page's first proof runs optimised code;
/// returns the milliseconds it took. Rejects with kind `engine` if the
/// proof does not verify (a kernel broken in this browser).
#[wasm_bindgen(js_name = warm, skip_typescript)]
pub fn warm_engine() -> Result<f64, JsValue> {
    timed_warm_up("the warm-up", warm::warm)
}

/// Build what MPC mode's first session would otherwise build on its
/// critical path and run its garbling kernels once ([`warm::warm_mpc`]);
/// returns the milliseconds it took. Rejects with kind `engine` if that
/// fails.
#[wasm_bindgen(js_name = warmMpc, skip_typescript)]
pub fn warm_mpc() -> Result<f64, JsValue> {
    timed_warm_up("the MPC warm-up", warm::warm_mpc)
}

/// Run a warm-up step: its milliseconds, or its failure as an `engine`
/// error of `phase`.
fn timed_warm_up(phase: &str, step: fn() -> Result<(), String>) -> Result<f64, JsValue> {
    keep_panics();
    let t0 = js_sys::Date::now();
    step().map_err(|detail| {
        js_error(&BrowserError::Engine {
            phase: phase.into(),
            detail,
        })
    })?;
    Ok(js_sys::Date::now() - t0)
}

/// The module's linear memory now (it never shrinks: the peak so far).
fn wasm_memory_bytes() -> u64 {
    #[cfg(target_arch = "wasm32")]
    {
        core::arch::wasm32::memory_size(0) as u64 * 65536
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tls_and_suite_take_the_cli_values() {
        assert_eq!(parse_version("1.2").unwrap(), Some(TlsVersion::Tls12));
        assert_eq!(parse_version("1.3").unwrap(), Some(TlsVersion::Tls13));
        assert_eq!(parse_version("any").unwrap(), None);
        let e = parse_version("1.1").unwrap_err();
        assert_eq!(e.kind(), "setup");
        assert!(
            matches!(&e, BrowserError::UnknownOption { option: "tls", value, .. } if value == "1.1"),
            "{e}"
        );
        assert_eq!(
            parse_suites(vec![
                "TLS13_AES_128_GCM_SHA256".into(),
                "ecdhe_ecdsa_with_aes_256_gcm_sha384".into()
            ])
            .unwrap(),
            [
                CipherSuite::TLS13_AES_128_GCM_SHA256,
                CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384
            ]
        );
        let e = parse_suites(vec!["TLS_RSA_WITH_RC4_128_MD5".into()]).unwrap_err();
        assert_eq!(e.kind(), "setup");
        let msg = e.to_string();
        assert!(
            msg.contains("suite: unknown value \"TLS_RSA_WITH_RC4_128_MD5\""),
            "{msg}"
        );
        assert!(msg.contains("TLS13_CHACHA20_POLY1305_SHA256"), "{msg}");
    }
}
