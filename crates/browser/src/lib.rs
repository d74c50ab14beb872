//! webproof's proxy-mode prover in the browser.
//!
//! The exported API (`wasm-bindgen`, ES module):
//!
//! ```js
//! const { verified, stats } = await prove(
//!   { verifier: "wss://verifier.example/v1/session", url: "https://server/json",
//!     headers: { accept: "application/json" }, reveal: ["json:name"], ca: [pem] },
//!   (phase) => console.log(phase));
//! ```
//!
//! `verified` is the verifier's output (`webproof_proxy::VerifierOutput` as
//! JSON, what `webproof prove --json` prints), `stats` the timings and
//! traffic. A failed proof rejects with an `Error` carrying `kind` (a
//! `RejectKind` wire name such as `certificate`, `unauthorized` or
//! `timeout`, or `setup`, `tls`, `disconnected`, `engine`), `detail` and `decidedBy`
//! (`verifier` or `prover`).
//!
//! Modules: [`link`] owns the WebSocket byte stream and the multiplexed
//! section's demultiplexing; [`mod@prove`] drives the session core
//! (`webproof_proxy::session::prover`) and the proof engine over it;
//! [`error`] types the failures. This file only converts to and from
//! JavaScript values.

#![forbid(unsafe_code)]

pub mod error;
pub mod link;
pub mod prove;

use serde::Deserialize;
use wasm_bindgen::prelude::*;
use webproof_proxy::http::RevealItem;

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

/// The options object of `prove`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Options {
    verifier: String,
    url: String,
    #[serde(default)]
    headers: serde_json::Map<String, serde_json::Value>,
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
}

fn parse_options(v: &JsValue) -> Result<(prove::Request, Option<u32>), BrowserError> {
    let text = js_sys::JSON::stringify(v)
        .ok()
        .and_then(|s| s.as_string())
        .ok_or_else(|| BrowserError::Setup("options must be an object".into()))?;
    let o: Options =
        serde_json::from_str(&text).map_err(|e| BrowserError::Setup(format!("options: {e}")))?;
    let headers = o
        .headers
        .into_iter()
        .map(|(k, v)| match v {
            serde_json::Value::String(s) => Ok((k, s)),
            other => Err(BrowserError::Setup(format!(
                "header {k:?}: expected a string, got {other}"
            ))),
        })
        .collect::<Result<_, _>>()?;
    let reveal = o
        .reveal
        .map(OneOrMany::into_vec)
        .unwrap_or_default()
        .iter()
        .map(|r| r.parse::<RevealItem>())
        .collect::<Result<_, _>>()
        .map_err(|e| BrowserError::Setup(e.to_string()))?;
    let timeout = o.timeout_ms;
    let req = prove::Request {
        verifier: o.verifier,
        url: o.url,
        headers,
        reveal,
        ca_pems: o
            .ca
            .map(OneOrMany::into_vec)
            .unwrap_or_default()
            .into_iter()
            .map(String::into_bytes)
            .collect(),
        padding: o.padding,
        expect_response: o.expect_response.unwrap_or(16 << 10),
        api_key: o.api_key,
    };
    Ok((req, timeout))
}

/// Resolves after `ms` milliseconds, on the global `setTimeout` (a window
/// or a worker).
async fn sleep_ms(ms: u32) {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        let global = js_sys::global();
        if let Ok(f) = js_sys::Reflect::get(&global, &"setTimeout".into()) {
            let f: js_sys::Function = f.unchecked_into();
            let _ = f.call2(&global, &resolve, &ms.into());
        }
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
  /** What to reveal, as `webproof prove --reveal`: `all` (default), `none`, `http`, `headers`, `header:NAME`, `body`, `json:PATH`, `recv:A-B`, … */
  reveal?: string | string[];
  /** Extra trusted roots (PEM), for test servers. */
  ca?: string | string[];
  /** Bytes of X-Padding header to add. */
  padding?: number;
  /** Response size expected (sizes the preprocessing; default 16384). */
  expectResponse?: number;
  /** API key for verifiers that require one. */
  apiKey?: string;
  /** Give up after this many milliseconds (rejects with kind `timeout`; the service ends the session). */
  timeoutMs?: number;
}
/** The phases `progress` hears, in order. */
export type Phase = "connecting" | "preprocessing" | "tls" | "proving" | "verdict" | "done";
/** A verified session: the verifier's output (webproof_proxy::VerifierOutput) and measurements. */
export interface ProveResult {
  verified: {
    server_name: string; server_port: number; time: number;
    tls_version: string; cipher_suite: string; key_exchange_group: string;
    proof: "zk" | "full-reveal";
    sent: Disclosed; received: Disclosed;
    [more: string]: unknown;
  };
  stats: {
    time_preprocess_ms: number; time_online_ms: number; time_total_ms: number;
    time_tls_ms: number; time_proof_ms: number;
    uploaded_preprocess: number; downloaded_preprocess: number;
    uploaded_online: number; downloaded_online: number;
  };
}
/** One direction's data: `bytes` (hex) with hidden bytes zero, `revealed` ranges, `text` with hidden bytes as █. */
export interface Disclosed { len: number; revealed: { start: number; end: number }[]; text: string; bytes: string; }
/** How `prove` rejects. `kind`: a RejectKind wire name (`unauthorized`, `certificate`, `timeout`, …) or `setup`, `tls`, `disconnected`, `engine`. */
export interface ProveError extends Error { kind: string; detail: string; decidedBy: "verifier" | "prover"; }
/** Prove what `options.url` serves through the verifier; rejects with a `ProveError`. */
export function prove(options: ProveOptions, progress?: (phase: Phase) => void): Promise<ProveResult>;
"#;

/// Prove what `options.url` serves, through the verifier at
/// `options.verifier`; `progress(phase)` hears `connecting`,
/// `preprocessing`, `tls`, `proving`, `verdict` and `done`. Resolves to
/// `{verified, stats}`; rejects with an `Error` with `kind`, `detail` and
/// `decidedBy` (see the crate docs).
#[wasm_bindgen(skip_typescript)]
pub async fn prove(
    options: JsValue,
    progress: Option<js_sys::Function>,
) -> Result<JsValue, JsValue> {
    let (req, timeout) = parse_options(&options).map_err(|e| js_error(&e))?;
    let report = |phase: &str| {
        if let Some(f) = &progress {
            let _ = f.call1(&JsValue::NULL, &phase.into());
        }
    };
    let proof = prove::prove(&req, &report);
    // On timeout the proof's future is dropped, which closes the link: the
    // service ends the session.
    let outcome = match timeout {
        None => proof.await,
        Some(ms) => {
            let deadline = async {
                sleep_ms(ms).await;
                Err(BrowserError::Timeout(ms))
            };
            futures::pin_mut!(proof, deadline);
            futures::future::select(proof, deadline)
                .await
                .factor_first()
                .0
        }
    }
    .map_err(|e| js_error(&e))?;
    let json = serde_json::to_string(&outcome)
        .map_err(|e| js_error(&BrowserError::Setup(e.to_string())))?;
    js_sys::JSON::parse(&json)
}
