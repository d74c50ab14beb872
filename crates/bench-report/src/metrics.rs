//! Results as data: one [`Sample`] per accepted run, as CSV with
//! TLSNotary's columns first (in their order) and ours after; one
//! [`Refused`] row per run the harness did not count, in a file beside it
//! ([`refused_path`]). This module reads them; the runner writes them
//! (`webproof-bench`'s `metrics`). Reading accepts our files and plain
//! TLSNotary files (missing extra columns get defaults), so `plot` and
//! `compare` work on both.

use serde::{Deserialize, Serialize};
use std::path::Path;

/// One sample. Times in milliseconds, sizes in bytes.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Sample {
    // --- TLSNotary's columns, in their order ---
    pub group: String,
    pub name: String,
    /// Protocol-link round trip, ms.
    pub latency: f64,
    /// Mbit/s.
    pub bandwidth: f64,
    pub upload_size: u64,
    pub download_size: u64,
    pub defer_decryption: bool,
    pub proxy: bool,
    pub time_preprocess: f64,
    pub time_online: f64,
    pub time_total: f64,
    pub uploaded_preprocess: u64,
    pub downloaded_preprocess: u64,
    pub uploaded_online: u64,
    pub downloaded_online: u64,
    pub uploaded_total: u64,
    pub downloaded_total: u64,
    /// Peak resident memory of the prover process (TLSNotary leaves this
    /// empty; we fill it from outside: max of ru_maxrss and VmHWM).
    #[serde(deserialize_with = "empty_as_zero")]
    pub heap_max_bytes: u64,
    // --- webproof's columns ---
    #[serde(default)]
    pub mode: String,
    #[serde(default)]
    pub backend: String,
    #[serde(default)]
    pub sample: u32,
    #[serde(default)]
    pub app_latency: f64,
    #[serde(default)]
    pub app_bandwidth: f64,
    #[serde(default)]
    pub jitter: f64,
    #[serde(default)]
    pub loss: f64,
    #[serde(default)]
    pub tls: String,
    #[serde(default)]
    pub suite: String,
    #[serde(default)]
    pub reveal: String,
    /// Whether the prover reported its phases (else time_total is wall time
    /// measured from outside and time_online equals it).
    #[serde(default)]
    pub phases_reported: bool,
    #[serde(default)]
    pub prover_wall_ms: f64,
    #[serde(default)]
    pub prover_cpu_ms: f64,
    #[serde(default)]
    pub verifier_cpu_ms: f64,
    #[serde(default)]
    pub server_cpu_ms: f64,
    #[serde(default)]
    pub prover_peak_rss_bytes: u64,
    #[serde(default)]
    pub verifier_peak_rss_bytes: u64,
    /// IP bytes prover -> verifier / verifier -> prover at the emulated link.
    #[serde(default)]
    pub link_uploaded_bytes: u64,
    #[serde(default)]
    pub link_downloaded_bytes: u64,
    /// IP bytes towards / from the server on the application link.
    #[serde(default)]
    pub app_link_to_server_bytes: u64,
    #[serde(default)]
    pub app_link_from_server_bytes: u64,
    /// Link checks made before the bench (protocol link, application link).
    #[serde(default)]
    pub measured_rtt_ms: f64,
    #[serde(default)]
    pub measured_mbps: f64,
    #[serde(default)]
    pub app_measured_rtt_ms: f64,
    #[serde(default)]
    pub app_measured_mbps: f64,
    /// The online phase split as the prover reports it: the TLS session
    /// through the verifier (in MPC mode until the prover's `Close`, when
    /// it lets the server connection go), then the proof up to the verdict
    /// (ms; 0 when not reported).
    #[serde(default)]
    pub time_tls: f64,
    #[serde(default)]
    pub time_proof: f64,
    /// Who connects to the server: `proxy` (the verifier), `mpc` (the
    /// prover, with the verifier in the TLS client), `plain` (the prover,
    /// no proof). `proxy` above is `topology == "proxy"`.
    #[serde(default)]
    pub topology: String,
    /// `accepted` (the verifier accepted this session) or `none` (no
    /// verifier: a baseline with no proof).
    #[serde(default)]
    pub verdict: String,
    /// How the verdict came: `event` (a JSON event) or `exit` (the
    /// verifier's exit status); empty without a verifier.
    #[serde(default)]
    pub verdict_by: String,
    /// The proof / finalize phase: after the TLS session with the server,
    /// up to the verdict (ms, bytes).
    #[serde(default)]
    pub time_finalize: f64,
    #[serde(default)]
    pub uploaded_finalize: u64,
    #[serde(default)]
    pub downloaded_finalize: u64,
    /// From the prover's start to its `{"event":"start"}` line, excluded
    /// from time_total (0 when it prints none).
    #[serde(default)]
    pub time_startup: f64,
    /// Verdict time minus the prover's exit time, ms (negative when the
    /// verdict came first, as when the prover waits for it).
    #[serde(default)]
    pub verdict_after_prover_ms: f64,
    /// Where uploaded_total / downloaded_total come from: `reported` (the
    /// prover's counts, consistent with the link), `link` (no counts
    /// reported: IP bytes at the link) or `link-mismatch` (counts reported
    /// but inconsistent with the link, so IP bytes at the link).
    #[serde(default)]
    pub bytes_source: String,
    /// The session as the harness's fixture server saw it: negotiated
    /// version and suite, request and response bytes (head and body).
    #[serde(default)]
    pub server_tls: String,
    #[serde(default)]
    pub server_suite: String,
    #[serde(default)]
    pub server_request_bytes: u64,
    #[serde(default)]
    pub server_response_bytes: u64,
    /// Where the prover ran: `native` (a process) or `browser` (WebAssembly
    /// in headless chromium). Empty in files from before this column and in
    /// other harnesses' files: read as `native`.
    #[serde(default)]
    pub target: String,
    /// The browser prover's WebAssembly linear memory at the end of the
    /// proof (it only grows, so this is its peak); 0 for native provers.
    /// On the browser target `heap_max_bytes` and `prover_peak_rss_bytes`
    /// are the peak resident memory of chromium's renderer process that ran
    /// the page and its worker, as native ones are the prover process's.
    #[serde(default)]
    pub prover_wasm_memory_bytes: u64,
}

/// A run the harness did not count, with why.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Refused {
    pub group: String,
    pub name: String,
    pub mode: String,
    pub topology: String,
    pub sample: u32,
    /// `rejected` (the verifier said no), `missing` (no verdict within the
    /// grace), `prover-failed` (the prover exited non-zero).
    pub verdict: String,
    pub reason: String,
    pub prover_exit_code: i32,
    /// From the prover's start to the verdict or to the end of the wait, ms.
    pub time_total: f64,
}

/// `<stem>.refused.csv` beside the samples file.
pub fn refused_path(output: &Path) -> std::path::PathBuf {
    let stem = output
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("metrics");
    output.with_file_name(format!("{stem}.refused.csv"))
}

/// Read the refused runs written beside `csv`, if any.
pub fn read_refused(csv: &Path) -> anyhow::Result<Vec<Refused>> {
    let path = refused_path(csv);
    if !path.exists() {
        return Ok(Vec::new());
    }
    let mut r = csv::Reader::from_path(&path)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
    r.deserialize::<Refused>()
        .map(|x| x.map_err(|e| anyhow::anyhow!("{}: {e}", path.display())))
        .collect()
}

fn empty_as_zero<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    let s: Option<String> = Option::deserialize(d)?;
    match s.as_deref().map(str::trim) {
        None | Some("") => Ok(0),
        Some(v) => v
            .parse::<f64>()
            .map(|x| x as u64)
            .map_err(serde::de::Error::custom),
    }
}

/// Read a TLSNotary-layout CSV (ours or TLSNotary's own).
pub fn read_csv(path: &Path) -> anyhow::Result<Vec<Sample>> {
    let mut r = csv::Reader::from_path(path)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
    let mut out = Vec::new();
    for (i, rec) in r.deserialize::<Sample>().enumerate() {
        let mut s = rec.map_err(|e| anyhow::anyhow!("{}: row {}: {e}", path.display(), i + 2))?;
        if s.mode.is_empty() {
            s.mode = if s.proxy {
                "proxy".into()
            } else {
                "mpc".into()
            };
        }
        if s.topology.is_empty() {
            s.topology = if s.proxy { "proxy" } else { "mpc" }.into();
        }
        if s.target.is_empty() {
            s.target = "native".into();
        }
        // The empty placeholder row of a run that produced nothing.
        if s.group.is_empty() && s.name.is_empty() {
            continue;
        }
        out.push(s);
    }
    Ok(out)
}
