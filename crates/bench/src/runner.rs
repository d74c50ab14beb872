//! Running a configuration: for each bench, build its network, check it,
//! then run warm-up and measured samples, each with a fresh server, verifier
//! and prover process in their namespaces.
//!
//! The server is always the harness's own fixture (see [`crate::plain`]), so
//! every implementation meets the same server and is labelled from the
//! server's side. Executors:
//! - proxy and MPC: `webproof serve --once` (its exit status is its
//!   verdict; it says it listens once warm, as a running service is, with
//!   the MPC plans built) and `webproof prove --json`; on the browser target the verifier serves
//!   its one session over WebSocket and the prover is the WebAssembly one
//!   in headless chromium ([`crate::browser`]), started as a process group
//!   (driver, chromium, its helpers) that dies with the sample however it
//!   ends, with its temporary files in a directory the harness removes;
//! - plain: the harness's plain TLS client;
//! - adapters: external commands (see `bench/ADAPTERS.md`), measured from
//!   outside.
//!
//! A sample counts only when its verifier has accepted (samples with no
//! verifier are no-proof baselines); others are refused, written beside the
//! results and counted. `time_total` runs from the prover's start to the
//! verdict, whichever of prover and verifier finishes last.

use crate::browser::{self, BrowserMemory, BrowserTools, PageArgs};
use crate::config::{
    AdapterSpec, BenchSpec, Config, Mode, OfferedVersion, PeerTopology, Target, VerdictRule,
    DEFAULT_VERDICT_TIMEOUT_SECS,
};
use crate::contract::{self, JsonScanner, Reported, ServerSession, Verdict};
use crate::metrics::{self, Format};
use crate::netns;
use crate::probe::{self, LinkMeasurement};
use crate::proc::{Proc, Usage};
use crate::topology::{Backend, Counters, LinkId, Topology};
use anyhow::{anyhow, bail, Context};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use webproof_bench_report::metrics::{refused_path, Refused, Sample};

/// Name the server certificate is issued for.
pub const SERVER_NAME: &str = "server.test";
const SERVER_PORT: u16 = 8443;
const VERIFIER_PORT: u16 = 7047;

/// How to start the harness's own roles and webproof's parties.
#[derive(Clone, Debug)]
pub struct Executables {
    /// Binary with the internal roles (`fixture-server`, `plain-client`).
    pub worker: PathBuf,
    /// Arguments before the role name (`["bench"]` for `webproof`).
    pub worker_prefix: Vec<String>,
    /// The `webproof` binary for proxy mode (`fixture`, `serve`, `prove`).
    pub webproof: Option<PathBuf>,
    /// The repository's `web/` directory for the browser target (else
    /// found as [`browser::find_web_dir`] says).
    pub web: Option<PathBuf>,
}

/// Options of one run.
#[derive(Clone, Debug)]
pub struct RunOptions {
    pub config: PathBuf,
    pub output: PathBuf,
    pub format: Format,
    /// Override samples / warm-up of every bench.
    pub samples: Option<u32>,
    pub warmup: Option<u32>,
    /// Force a backend instead of detecting one.
    pub backend: Option<Backend>,
    /// Only benches whose `group/name` contains this.
    pub filter: Option<String>,
    /// Skip benches whose mode is not available (MPC) instead of failing.
    pub skip_unavailable: bool,
    /// Run every proxy-mode bench's prover on this target (plain and MPC
    /// benches keep theirs).
    pub target: Option<Target>,
    /// Largest accepted relative error of a measured link.
    pub tolerance: f64,
    /// Duration of each link throughput check.
    pub probe_time: Duration,
    pub progress: bool,
    pub exe: Executables,
}

/// What a run produced.
#[derive(Debug)]
pub struct RunSummary {
    pub backend: Backend,
    /// Accepted samples (and no-proof baselines).
    pub samples: Vec<Sample>,
    /// Measured samples the harness did not count.
    pub refused: Vec<Refused>,
    pub links: Vec<(String, LinkMeasurement)>,
    pub warnings: Vec<String>,
}

/// The benches `opts` can run, refused before the network is built: a
/// prover mode without the webproof binary (skipped with a warning under
/// `skip_unavailable`). (The browser target takes `tls` and `suite` like
/// the native one, in proxy and MPC modes alike: MPC over TLS 1.3 runs in
/// the page too.)
fn runnable(
    opts: &RunOptions,
    benches: Vec<BenchSpec>,
    warnings: &mut Vec<String>,
) -> anyhow::Result<Vec<BenchSpec>> {
    let mut runnable = Vec::new();
    for b in benches {
        if b.adapter.is_none() && b.mode != Mode::Plain && opts.exe.webproof.is_none() {
            let msg = format!(
                "{}:{}: bench `{}/{}` needs the webproof binary for {} mode",
                opts.config.display(),
                b.line,
                b.group,
                b.name,
                b.mode.as_str()
            );
            if opts.skip_unavailable {
                eprintln!("warning: skipping: {msg}");
                warnings.push(msg);
                continue;
            }
            bail!(msg);
        }
        runnable.push(b);
    }
    Ok(runnable)
}

/// A directory removed (with its contents) on drop.
struct TempDir(PathBuf);

impl TempDir {
    /// `path`, emptied of any leftover of an earlier run.
    fn create(path: PathBuf) -> std::io::Result<TempDir> {
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path)?;
        Ok(TempDir(path))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Run a configuration file. Blocking; spawn it on a long-lived thread
/// (children die with the thread that spawned them).
pub fn run(opts: &RunOptions) -> anyhow::Result<RunSummary> {
    let config = Config::load(&opts.config)?;
    let mut warnings = config.warnings.clone();
    for w in &config.warnings {
        eprintln!("warning: {w}");
    }
    let mut benches: Vec<BenchSpec> = config
        .benches
        .iter()
        .filter(|b| {
            opts.filter
                .as_ref()
                .is_none_or(|f| format!("{}/{}", b.group, b.name).contains(f.as_str()))
        })
        .cloned()
        .collect();
    if benches.is_empty() {
        bail!("no bench in {} matches the filter", opts.config.display());
    }
    for b in &mut benches {
        if let Some(s) = opts.samples {
            b.samples = s;
        }
        if let Some(w) = opts.warmup {
            b.warmup = w;
        }
        if let (Some(t), Mode::Proxy, None) = (opts.target, &b.mode, &b.adapter) {
            b.target = t;
        }
    }
    // Refuse what cannot run before touching the network.
    let runnable = runnable(opts, benches, &mut warnings)?;
    if runnable.is_empty() {
        bail!("nothing to run");
    }
    // Checked before the network is built: a missing tool fails at once.
    let browser = if runnable.iter().any(|b| b.target == Target::Browser) {
        let web = browser::find_web_dir(opts.exe.web.as_deref(), opts.exe.webproof.as_deref());
        Some(BrowserTools::locate(web.as_deref())?)
    } else {
        None
    };
    if !netns::is_root() {
        bail!(netns::NetError::NotRoot);
    }
    let interrupt = netns::install_interrupt_handler();
    let backend = match opts.backend {
        Some(b) => b,
        None => Backend::detect()?,
    };
    eprintln!(
        "webproof bench: {} benches, backend `{}`{}, server fixture: harness fixture-server",
        runnable.len(),
        backend.as_str(),
        match backend {
            Backend::Userspace => " (TUN delay line; this kernel has no netem)",
            Backend::Netem => " (veth + tc netem/tbf)",
        },
    );

    let compensation_ns = match backend {
        Backend::Userspace => {
            let c =
                probe::calibrate_userspace(&format!("{:04x}", (std::process::id() * 89) & 0xffff))
                    .context("calibrating the userspace link emulator")?;
            eprintln!(
                "userspace path cost: {:.3} ms per direction, subtracted from the configured delays",
                c as f64 / 1e6
            );
            c
        }
        Backend::Netem => 0,
    };
    let total: u64 = runnable.iter().map(|b| (b.samples + b.warmup) as u64).sum();
    let pb = if opts.progress {
        indicatif::ProgressBar::new(total)
    } else {
        indicatif::ProgressBar::hidden()
    };
    pb.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} samples, ETA {eta}  {msg}",
        )
        .expect("valid template"),
    );
    pb.enable_steady_tick(Duration::from_millis(200));

    let mut samples = Vec::new();
    let mut refused: Vec<Refused> = Vec::new();
    let mut none_accepted: Vec<String> = Vec::new();
    let mut links = Vec::new();
    let adapters = &config.adapters;
    for (i, bench) in runnable.iter().enumerate() {
        if interrupt.load(Ordering::Relaxed) {
            bail!("interrupted");
        }
        let label = format!(
            "{}/{} [{}{}]",
            bench.group,
            bench.name,
            bench.mode_label(),
            match bench.target {
                Target::Native => "",
                Target::Browser => ", browser",
            }
        );
        pb.set_message(format!("{label}: setting up the network"));
        // Unique per bench, also across runs in one process (tests).
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let tag = format!("{:04x}", (std::process::id() as usize * 97 + n) & 0xffff);
        let topo = Topology::build(
            &tag,
            backend,
            bench.protocol,
            bench.app,
            i as u64 + 1,
            compensation_ns,
        )
        .with_context(|| format!("building the network for {label}"))?;
        let adapter = bench.adapter.as_ref().map(|a| &adapters[a]);
        let topology = adapter.map_or(bench.own_topology(), |a| a.topology);
        let verifier_connects = topology == PeerTopology::Proxy;
        let uses_verifier = topology != PeerTopology::Plain;
        let app_id = if verifier_connects {
            LinkId::VerifierServer
        } else {
            LinkId::ProverServer
        };

        pb.set_message(format!("{label}: measuring links"));
        let mut measured = BTreeMap::new();
        let mut to_check = vec![app_id];
        if uses_verifier {
            to_check.insert(0, LinkId::ProverVerifier);
        }
        for id in to_check {
            // A busy host can slow one check; measure up to three times.
            let mut m = probe::measure(&topo, topo.link(id), opts.probe_time)
                .with_context(|| format!("measuring link {} for {label}", id.short()))?;
            for _ in 0..2 {
                if m.within(opts.tolerance) {
                    break;
                }
                say(&pb, format!(
                    "  {label}: link {} measured {:.2} ms / {:.1} Mbps, off its setting; measuring again",
                    id.short(), m.rtt_ms, m.mbps
                ));
                m = probe::measure(&topo, topo.link(id), opts.probe_time)
                    .with_context(|| format!("measuring link {} for {label}", id.short()))?;
            }
            let (rtt_err, bw_err) = m.errors();
            say(&pb, format!(
                "  {label}: link {} set {} ms / {} Mbps, measured {:.2} ms / {:.1} Mbps ({:+.1}% / {:+.1}%){}",
                id.short(),
                m.set_rtt_ms,
                m.set_mbps,
                m.rtt_ms,
                m.mbps,
                100.0 * (m.rtt_ms - m.set_rtt_ms) / m.set_rtt_ms.max(1e-9) * f64::from(u8::from(m.set_rtt_ms > 0.0)),
                100.0 * (m.mbps - m.set_mbps) / m.set_mbps,
                if m.rate_checked { "" } else { "; rate not checked on a lossy link" },
            ));
            if !m.within(opts.tolerance) {
                bail!(
                    "link {} of {label} is off its setting by more than {:.0}% on backend `{}`: \
                     RTT {:.2} ms for {} ms ({:.1}% off), rate {:.1} Mbps for {} Mbps ({:.1}% off). \
                     Refusing to run: results would not describe the configured network. \
                     (Is the machine busy? Is a rate above what this host can forward?)",
                    id.short(),
                    opts.tolerance * 100.0,
                    backend.as_str(),
                    m.rtt_ms,
                    m.set_rtt_ms,
                    rtt_err * 100.0,
                    m.mbps,
                    m.set_mbps,
                    bw_err * 100.0
                );
            }
            links.push((format!("{}/{}", bench.group, bench.name), m.clone()));
            measured.insert(id.short(), m);
        }

        let mut notes = BenchNotes::default();
        for s in 0..bench.warmup + bench.samples {
            let warm = s < bench.warmup;
            pb.set_message(if warm {
                format!("{label}: warm-up {}/{}", s + 1, bench.warmup)
            } else {
                format!("{label}: sample {}/{}", s + 1 - bench.warmup, bench.samples)
            });
            let ctx = SampleCtx {
                bench,
                topo: &topo,
                adapter,
                topology,
                uses_verifier,
                app_id,
                exe: &opts.exe,
                browser: browser.as_ref(),
                interrupt: &interrupt,
            };
            let outcome = run_sample(&ctx).with_context(|| format!("{label}, sample {}", s + 1))?;
            pb.inc(1);
            let index = s.saturating_sub(bench.warmup);
            match outcome {
                Outcome::Refused(mut r) => {
                    say(
                        &pb,
                        format!(
                            "  {label}: {} {} refused: {}: {}",
                            if warm { "warm-up" } else { "sample" },
                            if warm { s + 1 } else { index + 1 },
                            r.verdict,
                            r.reason
                        ),
                    );
                    if !warm {
                        r.sample = index;
                        refused.push(r);
                    }
                }
                Outcome::Accepted(mut sample) => {
                    if warm {
                        continue;
                    }
                    sample.sample = index;
                    sample.backend = backend.as_str().into();
                    if let Some(m) = measured.get("pv") {
                        sample.measured_rtt_ms = m.rtt_ms;
                        sample.measured_mbps = m.mbps;
                    }
                    if let Some(m) = measured.get(app_id.short()) {
                        sample.app_measured_rtt_ms = m.rtt_ms;
                        sample.app_measured_mbps = m.mbps;
                    }
                    notes.add(&sample);
                    samples.push(sample);
                }
            }
        }
        let mine: Vec<&Sample> = samples
            .iter()
            .filter(|s| s.group == bench.group && s.name == bench.name)
            .collect();
        let n_refused = refused
            .iter()
            .filter(|r| r.group == bench.group && r.name == bench.name)
            .count();
        let mean = mine.iter().map(|s| s.time_total).sum::<f64>() / mine.len().max(1) as f64;
        say(
            &pb,
            if mine.is_empty() {
                format!("{label}: no accepted sample, {n_refused} refused")
            } else {
                format!(
                    "{label}: mean total {:.1} ms over {} accepted samples, {} refused",
                    mean,
                    mine.len(),
                    n_refused
                )
            },
        );
        if mine.is_empty() {
            none_accepted.push(format!("{}/{}", bench.group, bench.name));
        }
        for w in notes.finish(bench, &label) {
            say(&pb, format!("  warning: {w}"));
            warnings.push(w);
        }
        if let Some(late) = emulator_lateness(&topo) {
            say(&pb, format!("  {label}: {late}"));
        }
        // Results so far are kept even if a later bench fails.
        metrics::write_csv(&opts.output, &samples, opts.format)?;
        metrics::write_refused(&opts.output, &refused)?;
        write_links(&opts.output, &links)?;
        drop(topo);
    }
    pb.finish_and_clear();
    if !none_accepted.is_empty() {
        bail!(
            "every sample of {} was refused ({} refused in all; reasons in {}): \
             no result was counted for {}",
            none_accepted.join(", "),
            refused.len(),
            refused_path(&opts.output).display(),
            if none_accepted.len() == 1 {
                "this bench"
            } else {
                "these benches"
            }
        );
    }
    Ok(RunSummary {
        backend,
        samples,
        refused,
        links,
        warnings,
    })
}

/// Findings over a bench's accepted samples, reported once per bench.
#[derive(Default)]
struct BenchNotes {
    request_bytes: Vec<u64>,
    tls: Vec<String>,
    mismatched: Vec<String>,
}

impl BenchNotes {
    fn add(&mut self, s: &Sample) {
        if s.server_request_bytes > 0 {
            self.request_bytes.push(s.server_request_bytes);
        }
        if !s.server_tls.is_empty() {
            self.tls.push(s.server_tls.clone());
        }
        if s.bytes_source == "link-mismatch" {
            self.mismatched.push(format!(
                "sample {}: reported {} up / {} down, link {} / {} IP bytes",
                s.sample + 1,
                s.uploaded_preprocess + s.uploaded_online + s.uploaded_finalize,
                s.downloaded_preprocess + s.downloaded_online + s.downloaded_finalize,
                if s.topology == "plain" {
                    s.app_link_to_server_bytes
                } else {
                    s.link_uploaded_bytes
                },
                if s.topology == "plain" {
                    s.app_link_from_server_bytes
                } else {
                    s.link_downloaded_bytes
                },
            ));
        }
    }

    fn finish(self, b: &BenchSpec, label: &str) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(&max) = self.request_bytes.iter().max() {
            let min = *self.request_bytes.iter().min().expect("non-empty");
            let want = b.upload_size as u64;
            let off = |x: u64| x.abs_diff(want) > REQUEST_SLACK_BYTES.max(want / 10);
            if off(min) || off(max) {
                out.push(format!(
                    "{label}: the server received requests of {} bytes, configured \
                     upload-size is {want}: the request does not follow the template \
                     (see ADAPTERS.md, `{{request}}` / `{{padding}}`){}",
                    if min == max {
                        min.to_string()
                    } else {
                        format!("{min}-{max}")
                    },
                    if want < template_len(b.download_size, SERVER_PORT, 0) as u64 {
                        "; the template alone is longer than upload-size"
                    } else {
                        ""
                    }
                ));
            }
        }
        if b.tls != OfferedVersion::Any && self.tls.iter().any(|t| t != b.tls.as_str()) {
            out.push(format!(
                "{label}: configured TLS {}, the server negotiated {}",
                b.tls.as_str(),
                uniq_join(&self.tls)
            ));
        }
        if !self.mismatched.is_empty() {
            out.push(format!(
                "{label}: the prover's byte counts do not add up with the link's \
                 (totals taken from the link): {}",
                self.mismatched.join("; ")
            ));
        }
        out
    }
}

fn uniq_join(v: &[String]) -> String {
    let mut u: Vec<&String> = Vec::new();
    for x in v {
        if !u.contains(&x) {
            u.push(x);
        }
    }
    u.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
}

/// How far the request the server received may be from `upload_size`
/// before the run warns (or a tenth of it, whichever is larger).
const REQUEST_SLACK_BYTES: u64 = 64;

/// `<output>.links.csv`: the link checks beside the results.
pub fn links_path(output: &Path) -> PathBuf {
    let stem = output
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("metrics");
    output.with_file_name(format!("{stem}.links.csv"))
}

fn write_links(output: &Path, links: &[(String, LinkMeasurement)]) -> anyhow::Result<()> {
    let mut w = csv::Writer::from_path(links_path(output))?;
    w.write_record([
        "bench",
        "link",
        "backend",
        "set_rtt_ms",
        "set_mbps",
        "rtt_ms",
        "rtt_min_ms",
        "mbps",
        "goodput_mbps",
    ])?;
    for (b, m) in links {
        w.write_record([
            b.clone(),
            m.link.clone(),
            m.backend.clone(),
            m.set_rtt_ms.to_string(),
            m.set_mbps.to_string(),
            format!("{:.3}", m.rtt_ms),
            format!("{:.3}", m.rtt_min_ms),
            format!("{:.2}", m.mbps),
            format!("{:.2}", m.goodput_mbps),
        ])?;
    }
    w.flush()?;
    Ok(())
}

struct SampleCtx<'a> {
    bench: &'a BenchSpec,
    topo: &'a Topology,
    adapter: Option<&'a AdapterSpec>,
    topology: PeerTopology,
    uses_verifier: bool,
    app_id: LinkId,
    exe: &'a Executables,
    /// The browser target's tools (checked when a bench uses it).
    browser: Option<&'a BrowserTools>,
    interrupt: &'a Arc<AtomicBool>,
}

/// The request every client is asked to send (ADAPTERS.md, "The
/// request"), with `padding` bytes of `X-Padding` value.
pub fn request_template(download_size: usize, server_port: u16, padding: usize) -> String {
    format!(
        "GET /bytes?size={download_size} HTTP/1.1\r\nHost: {SERVER_NAME}:{server_port}\r\nX-Padding: {}\r\nConnection: close\r\n\r\n",
        "x".repeat(padding)
    )
}

fn template_len(download_size: usize, server_port: u16, padding: usize) -> usize {
    request_template(download_size, server_port, padding).len()
}

/// Length of the `X-Padding` value that makes the template `upload_size`
/// bytes (0 when the template alone is longer).
pub fn padding_len(upload_size: usize, download_size: usize, server_port: u16) -> usize {
    upload_size.saturating_sub(template_len(download_size, server_port, 0))
}

/// Half-open byte ranges `A-B` the default reveal hides: the last byte of
/// the request and the last byte of the response, as TLSNotary's harness
/// hides one byte each way. `None` when the bench reveals something else.
fn hidden_ranges(b: &BenchSpec, server_port: u16) -> Option<(String, String)> {
    if b.reveal.is_some() || b.reveal_all {
        return None;
    }
    let req = template_len(
        b.download_size,
        server_port,
        padding_len(b.upload_size, b.download_size, server_port),
    );
    let resp = crate::plain::response_head(b.download_size).len() + b.download_size;
    Some((format!("{}-{req}", req - 1), format!("{}-{resp}", resp - 1)))
}

/// Values substituted in adapter argv and exported as `WPB_*` variables.
fn placeholders(
    ctx: &SampleCtx<'_>,
    server_port: u16,
    ca_cert: &str,
    request_file: &Path,
) -> BTreeMap<&'static str, String> {
    let b = ctx.bench;
    let server_ip = ctx.topo.link(ctx.app_id).b.addr.to_string();
    let verifier_ip = ctx.topo.link(LinkId::ProverVerifier).b.addr.to_string();
    let padding = padding_len(b.upload_size, b.download_size, server_port);
    let request = request_template(b.download_size, server_port, padding);
    let (hide_sent, hide_recv) = hidden_ranges(b, server_port).unwrap_or_default();
    let mut m = BTreeMap::new();
    m.insert(
        "url",
        format!(
            "https://{SERVER_NAME}:{server_port}/bytes?size={}",
            b.download_size
        ),
    );
    m.insert("server_name", SERVER_NAME.to_string());
    m.insert("server_ip", server_ip.clone());
    m.insert("server_port", server_port.to_string());
    m.insert("server_addr", format!("{server_ip}:{server_port}"));
    m.insert("verifier_ip", verifier_ip.clone());
    m.insert("verifier_port", VERIFIER_PORT.to_string());
    m.insert("verifier_addr", format!("{verifier_ip}:{VERIFIER_PORT}"));
    m.insert("ca_cert", ca_cert.to_string());
    m.insert("upload_size", b.upload_size.to_string());
    m.insert("download_size", b.download_size.to_string());
    m.insert("padding", "x".repeat(padding));
    m.insert("request_len", request.len().to_string());
    m.insert(
        "response_len",
        (crate::plain::response_head(b.download_size).len() + b.download_size).to_string(),
    );
    m.insert("request", request);
    m.insert("request_file", request_file.display().to_string());
    m.insert("tls", b.tls.as_str().to_string());
    m.insert("suite", b.suite.clone().unwrap_or_default());
    m.insert("reveal", reveal_of(b));
    m.insert("hide_sent", hide_sent);
    m.insert("hide_recv", hide_recv);
    m
}

/// `--reveal` items for `webproof prove`: the configured list, everything
/// (`reveal-all`), or by default all but the last byte each way (see
/// [`hidden_ranges`]), so the zero-knowledge path is exercised as in the
/// field's benchmarks.
fn prove_reveal_args(b: &BenchSpec, server_port: u16) -> Vec<String> {
    match (&b.reveal, b.reveal_all) {
        (Some(r), _) => r
            .split(',')
            .map(|x| x.trim().to_string())
            .filter(|x| !x.is_empty())
            .collect(),
        (None, true) => vec!["all".into()],
        (None, false) => {
            let (sent, recv) = hidden_ranges(b, server_port).expect("default reveal");
            vec![
                "all".into(),
                format!("hide-sent:{sent}"),
                format!("hide-recv:{recv}"),
            ]
        }
    }
}

fn reveal_of(b: &BenchSpec) -> String {
    match (&b.reveal, b.reveal_all) {
        (Some(r), _) => r.clone(),
        (None, true) => "all".into(),
        (None, false) => "all-but-one-byte".into(),
    }
}

/// Substitute `{name}` placeholders; unknown ones are an error.
pub fn substitute(arg: &str, vals: &BTreeMap<&'static str, String>) -> anyhow::Result<String> {
    let mut out = String::new();
    let mut rest = arg;
    while let Some(i) = rest.find('{') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let j = after
            .find('}')
            .ok_or_else(|| anyhow!("unclosed `{{` in `{arg}`"))?;
        let key = &after[..j];
        let v = vals
            .get(key)
            .ok_or_else(|| anyhow!("unknown placeholder `{{{key}}}` in `{arg}`"))?;
        out.push_str(v);
        rest = &after[j + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

fn internal(ctx: &SampleCtx<'_>, ns: &str, role: &str) -> anyhow::Result<Command> {
    let mut c = ctx.topo.namespace(ns).command(&ctx.exe.worker)?;
    c.args(&ctx.exe.worker_prefix).arg(role);
    Ok(c)
}

fn webproof(ctx: &SampleCtx<'_>, ns: &str) -> anyhow::Result<Command> {
    let exe = ctx
        .exe
        .webproof
        .as_ref()
        .context("webproof binary not known")?;
    Ok(ctx.topo.namespace(ns).command(exe)?)
}

fn adapter_command(
    ctx: &SampleCtx<'_>,
    ns: &str,
    argv: &[String],
    vals: &BTreeMap<&'static str, String>,
) -> anyhow::Result<Command> {
    let mut c = ctx
        .topo
        .namespace(ns)
        .command(substitute(&argv[0], vals)?)?;
    for x in &argv[1..] {
        c.arg(substitute(x, vals)?);
    }
    Ok(c)
}

/// Bytes allowed for the fixture response's status line and headers when
/// telling the prover what response size to expect.
const RESPONSE_HEAD_ALLOWANCE: usize = 512;

const READY: Duration = Duration::from_secs(30);
const SAMPLE_TIMEOUT: Duration = Duration::from_secs(900);

/// A measured run: counted, or refused with why.
#[allow(clippy::large_enum_variant)]
enum Outcome {
    Accepted(Sample),
    Refused(Refused),
}

/// What the harness saw of one session, on its own clock.
struct Observed {
    /// Prover spawn, or its `{"event":"start"}` line.
    start: Instant,
    spawned: Instant,
    prover_exit: Instant,
    prover: Usage,
    prover_objects: Vec<serde_json::Value>,
    /// The verdict, when it was seen and how it came.
    verdict: Option<(Instant, Verdict, VerdictRule)>,
    /// Why there is no verdict, when there is none.
    no_verdict: String,
    /// Verifier usage up to its verdict (or its end).
    verifier: Usage,
    /// The prover was still running `verdict_timeout` after the verdict.
    killed_after_verdict: bool,
}

fn run_sample(ctx: &SampleCtx<'_>) -> anyhow::Result<Outcome> {
    let b = ctx.bench;
    let topo = ctx.topo;
    let server_ns = topo.server.name().to_string();
    let listen = format!("0.0.0.0:{SERVER_PORT}");
    let scratch = std::env::temp_dir().join(format!("wpb-run-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)?;

    // Server fixture: the harness's own, which reports each session.
    let mut cmd = internal(ctx, &server_ns, "fixture-server")?;
    cmd.args(["--listen", &listen, "--san", SERVER_NAME, "--dir"])
        .arg(&scratch);
    cmd.env("WPB_ROLE", "server");
    let mut server = Proc::spawn("server fixture", cmd)?;
    let ready = server.wait_ready(READY, ctx.interrupt)?;
    let server_port = ready["addr"]
        .as_str()
        .and_then(|a| a.rsplit_once(':'))
        .and_then(|(_, p)| p.parse::<u16>().ok())
        .context("server ready line has no addr")?;
    let ca_cert = ready["ca_cert"]
        .as_str()
        .context("server ready line has no ca_cert")?
        .to_string();
    let request_file = scratch.join("request.http");
    let vals = placeholders(ctx, server_port, &ca_cert, &request_file);
    std::fs::write(&request_file, &vals["request"])?;
    let envs: Vec<(String, String)> = vals
        .iter()
        .map(|(k, v)| (format!("WPB_{}", k.to_ascii_uppercase()), v.clone()))
        .chain([("WPB_MODE".to_string(), b.mode_label())])
        .chain([(
            "WPB_TOPOLOGY".to_string(),
            ctx.topology.as_str().to_string(),
        )])
        .collect();

    // Verifier.
    let verifier_ns = topo.verifier.name().to_string();
    let prover_ns = topo.prover.name().to_string();
    let mut verifier = None;
    let (rule, grace) = match ctx.adapter {
        Some(a) => (a.verdict, Duration::from_secs_f64(a.verdict_timeout_secs)),
        None => (
            VerdictRule::Exit,
            Duration::from_secs_f64(DEFAULT_VERDICT_TIMEOUT_SECS),
        ),
    };
    if ctx.uses_verifier {
        let mut cmd = match ctx.adapter {
            Some(a) => {
                let argv = a
                    .verifier
                    .as_ref()
                    .expect("uses_verifier implies a verifier command");
                adapter_command(ctx, &verifier_ns, argv, &vals)?
            }
            None => {
                // One session, then exit: the exit status is the verdict.
                // The browser speaks WebSocket (the HTTP listener's
                // /v1/session), the native prover TCP.
                let listener = match b.target {
                    Target::Native => "--listen",
                    Target::Browser => "--listen-http",
                };
                let mut c = webproof(ctx, &verifier_ns)?;
                c.args([
                    "serve",
                    "--once",
                    listener,
                    &vals["verifier_addr"],
                    "--ca-cert",
                    &ca_cert,
                    "--resolve",
                ])
                .arg(format!("{SERVER_NAME}={}", vals["server_ip"]));
                c
            }
        };
        cmd.envs(envs.iter().cloned()).env("WPB_ROLE", "verifier");
        let mut v = Proc::spawn("verifier", cmd)?;
        v.wait_ready(READY, ctx.interrupt)?;
        verifier = Some(v);
    }

    // MPC mode in the page: the page reaches the server through `webproof
    // relay`, run in the prover's namespace (loopback to the page, the app
    // link to the server), as the native MPC prover connects over the app
    // link itself.
    let mut relay = None;
    if ctx.adapter.is_none() && b.target == Target::Browser && b.mode == Mode::Mpc {
        let mut c = webproof(ctx, &prover_ns)?;
        c.args(["relay", "--listen", "127.0.0.1:0", "--allow"])
            .arg(format!("{SERVER_NAME}:{server_port}"))
            .arg("--resolve")
            .arg(format!("{SERVER_NAME}={}", vals["server_ip"]));
        let mut r = Proc::spawn("relay", c)?;
        let ready = r.wait_ready(READY, ctx.interrupt)?;
        let addr = ready["addr"]
            .as_str()
            .context("`webproof relay` named no address")?
            .to_string();
        relay = Some((r, format!("ws://{addr}/tcp")));
    }

    // Prover.
    let header = format!("X-Padding: {}", vals["padding"]);
    let mut cmd = match (ctx.adapter, &b.mode) {
        (Some(a), _) => adapter_command(ctx, &prover_ns, &a.prover, &vals)?,
        (None, Mode::Proxy | Mode::Mpc) if b.target == Target::Browser => {
            let tools = ctx.browser.context("browser tools not checked")?;
            // The service's session endpoint (webproof_net's WS_SESSION_PATH).
            let verifier = format!("ws://{}/v1/session", vals["verifier_addr"]);
            let ca_pem = std::fs::read_to_string(&ca_cert)
                .with_context(|| format!("reading the fixture's CA {ca_cert}"))?;
            let page = PageArgs {
                verifier: &verifier,
                url: &vals["url"],
                ca_pem: &ca_pem,
                headers: vec![header.clone()],
                reveal: prove_reveal_args(b, server_port),
                expect_response: b.download_size + RESPONSE_HEAD_ALLOWANCE,
                // As `--tls` and `--suite` natively (the page's options).
                tls: (b.tls != OfferedVersion::Any).then(|| b.tls.as_str()),
                suite: b.suite.as_deref(),
                mpc_relay: relay.as_ref().map(|(_, url)| url.as_str()),
            };
            let argv = tools.argv(&page, SAMPLE_TIMEOUT.as_secs());
            let mut c = topo.namespace(&prover_ns).command(&argv[0])?;
            c.args(&argv[1..]);
            c
        }
        (None, mode @ (Mode::Proxy | Mode::Mpc)) => {
            let mut c = webproof(ctx, &prover_ns)?;
            c.args([
                "prove",
                "--verifier",
                &vals["verifier_addr"],
                "--url",
                &vals["url"],
                "-H",
                &header,
            ]);
            if *mode == Mode::Mpc {
                // The prover reaches the server itself, over the app link.
                c.args(["--mode", "mpc", "--connect", &vals["server_addr"]]);
            }
            c.args(["--ca-cert", &ca_cert, "--json"]);
            if b.tls != OfferedVersion::Any {
                c.args(["--tls", b.tls.as_str()]);
            }
            if let Some(suite) = &b.suite {
                c.args(["--suite", suite]);
            }
            for item in prove_reveal_args(b, server_port) {
                c.args(["--reveal", &item]);
            }
            // The body's size is known; the status line and headers come on top.
            c.args([
                "--expect-response",
                &(b.download_size + RESPONSE_HEAD_ALLOWANCE).to_string(),
            ]);
            c
        }
        (None, Mode::Plain) => {
            let mut c = internal(ctx, &prover_ns, "plain-client")?;
            c.args([
                "--connect",
                &vals["server_addr"],
                "--url",
                &vals["url"],
                "-H",
                &header,
            ]);
            c.args(["--ca-cert", &ca_cert, "--tls", b.tls.as_str()]);
            c
        }
    };
    cmd.envs(envs.iter().cloned()).env("WPB_ROLE", "prover");
    let browser = ctx.adapter.is_none() && b.target == Target::Browser;
    // Chromium's profile and temporary files go in a directory the harness
    // removes, as a killed driver cannot; declared before the prover, so
    // dropped after its processes are dead.
    let _browser_tmp = if browser {
        let d = TempDir::create(scratch.join("browser"))?;
        cmd.env("TMPDIR", &d.0);
        Some(d)
    } else {
        None
    };
    let pv = topo.link(LinkId::ProverVerifier);
    let app = topo.link(ctx.app_id);
    let pv_before = pv.counters()?;
    let app_before = app.counters()?;
    // The driver starts chromium, which starts its own helpers: as a
    // process group they all die with the sample, however it ends.
    let mut prover = if browser {
        Proc::spawn_group("prover", cmd)?
    } else {
        Proc::spawn("prover", cmd)?
    };
    let obs = observe(ctx, &mut prover, verifier.as_mut(), rule, grace);
    let pv_delta = pv.counters()? - pv_before;
    let app_delta = app.counters()? - app_before;
    let obs = obs?;
    let vu = match verifier.as_mut() {
        Some(v) => {
            let end = v.terminate(Duration::from_secs(5));
            if obs.verdict.is_some() {
                obs.verifier.clone()
            } else {
                end
            }
        }
        None => Usage::default(),
    };
    if let Some((mut r, _)) = relay.take() {
        r.terminate(Duration::from_secs(5));
    }
    let su = server.terminate(Duration::from_secs(5));
    server.drain_lines();
    let session = server_session(&server.stdout);

    let topology = ctx.topology;
    let verdict_at = obs.verdict.as_ref().map(|v| v.0);
    // The session ends at the verdict; without a verifier, at the prover's exit.
    let end = verdict_at.unwrap_or(obs.prover_exit);
    let ms = |a: Instant, b: Instant| b.saturating_duration_since(a).as_secs_f64() * 1e3;
    let time_total = ms(obs.start, end);

    let refuse = |verdict: &str, reason: String| Refused {
        group: b.group.clone(),
        name: b.name.clone(),
        mode: b.mode_label(),
        topology: topology.as_str().into(),
        sample: 0,
        verdict: verdict.into(),
        reason,
        prover_exit_code: obs.prover.code,
        time_total,
    };
    if obs.prover.code != 0 {
        let tail = prover.stderr_tail();
        let why = if obs.killed_after_verdict {
            format!(
                "prover still running {:.0} s after the verdict; killed",
                grace.as_secs_f64()
            )
        } else {
            format!("prover exited with code {}", obs.prover.code)
        };
        return Ok(Outcome::Refused(refuse(
            "prover-failed",
            format!("{why}{tail}"),
        )));
    }
    if ctx.uses_verifier {
        match &obs.verdict {
            None => return Ok(Outcome::Refused(refuse("missing", obs.no_verdict.clone()))),
            Some((_, v, _)) if !v.accepted => {
                let reason = if v.reason.is_empty() {
                    "the verifier rejected the session (no reason given)".to_string()
                } else {
                    v.reason.clone()
                };
                return Ok(Outcome::Refused(refuse("rejected", reason)));
            }
            Some(_) => {}
        }
    }

    let mut s = Sample {
        group: b.group.clone(),
        name: b.name.clone(),
        latency: b.protocol.rtt_ms,
        bandwidth: b.protocol.bandwidth_mbps,
        upload_size: b.upload_size as u64,
        download_size: b.download_size as u64,
        defer_decryption: b.defer_decryption,
        proxy: topology == PeerTopology::Proxy,
        mode: b.mode_label(),
        app_latency: b.app.rtt_ms,
        app_bandwidth: b.app.bandwidth_mbps,
        jitter: b.protocol.jitter_ms,
        loss: b.protocol.loss_percent,
        tls: b.tls.as_str().into(),
        suite: b.suite.clone().unwrap_or_default(),
        reveal: reveal_of(b),
        topology: topology.as_str().into(),
        target: b.target.as_str().into(),
        time_total,
        time_startup: ms(obs.spawned, obs.start),
        verdict_after_prover_ms: match verdict_at {
            Some(v) if v >= obs.prover_exit => ms(obs.prover_exit, v),
            Some(v) => -ms(v, obs.prover_exit),
            None => 0.0,
        },
        ..Default::default()
    };
    match &obs.verdict {
        Some((_, _, by)) => {
            s.verdict = "accepted".into();
            s.verdict_by = by.as_str().into();
        }
        None => s.verdict = "none".into(),
    }
    fill_usage(&mut s, &obs.prover, &vu, &su);
    if b.target == Target::Browser {
        // The prover is chromium's renderer (page and worker), not the
        // driver process the harness started (whose usage misses the
        // renderers: they are not its children).
        let m = BrowserMemory::from_objects(&obs.prover_objects).unwrap_or_default();
        s.prover_cpu_ms = m.renderer_cpu_ms;
        s.prover_peak_rss_bytes = m.renderer_peak_rss_bytes;
        s.heap_max_bytes = m.renderer_peak_rss_bytes;
        s.prover_wasm_memory_bytes = m.wasm_memory_bytes;
    }
    // Link bytes: `a` is the prover's end of pv; on the app link `a` is the
    // prover (ps) or the verifier (vs), the client side in both cases.
    if ctx.uses_verifier {
        s.link_uploaded_bytes = pv_delta.tx_bytes;
        s.link_downloaded_bytes = pv_delta.rx_bytes;
    }
    s.app_link_to_server_bytes = app_delta.tx_bytes;
    s.app_link_from_server_bytes = app_delta.rx_bytes;
    if let Some(ss) = &session {
        s.server_tls = ss.tls_version.clone();
        s.server_suite = ss.suite.clone();
        s.server_request_bytes = ss.request_bytes;
        s.server_response_bytes = ss.response_bytes;
    }
    // The protocol's bytes cross pv when there is a verifier, else the app link.
    let (link, l2) = if ctx.uses_verifier {
        (pv_delta, pv.l2_header_bytes())
    } else {
        (app_delta, app.l2_header_bytes())
    };
    let online_end = verdict_at.map_or(obs.prover_exit, |v| v.min(obs.prover_exit));
    let tail_ms = verdict_at.map_or(0.0, |v| ms(obs.prover_exit, v));
    let phases = OutsidePhases {
        online_ms: ms(obs.start, online_end),
        tail_ms,
    };
    apply_reported(
        &mut s,
        Reported::from_objects(&obs.prover_objects).as_ref(),
        &phases,
        link,
        l2,
        session.as_ref(),
    );
    Ok(Outcome::Accepted(s))
}

/// Wait for the prover's exit and the verifier's verdict, whichever comes
/// last; the verdict gets `grace` after the prover's exit.
fn observe(
    ctx: &SampleCtx<'_>,
    prover: &mut Proc,
    mut verifier: Option<&mut Proc>,
    rule: VerdictRule,
    grace: Duration,
) -> anyhow::Result<Observed> {
    let spawned = prover.started();
    let deadline = spawned + SAMPLE_TIMEOUT;
    let mut start = None;
    let mut pscan = JsonScanner::default();
    let mut vscan = JsonScanner::default();
    let mut prover_objects = Vec::new();
    let mut exit: Option<(Instant, Usage)> = None;
    let mut verdict: Option<(Instant, Verdict, VerdictRule)> = None;
    let mut verifier_usage = Usage::default();
    let mut no_verdict = String::new();
    let mut verifier_done = verifier.is_none();
    let mut killed_after_verdict = false;
    loop {
        if ctx.interrupt.load(Ordering::Relaxed) {
            prover.kill();
            if let Some(v) = verifier.as_mut() {
                v.kill();
            }
            bail!(crate::proc::ProcError::Interrupted);
        }
        let mut take_prover = |lines: Vec<(Instant, String)>| {
            for (at, l) in lines {
                for o in pscan.push(&l) {
                    if start.is_none() && contract::is_start(&o) {
                        start = Some(at);
                    }
                    prover_objects.push(o);
                }
            }
        };
        if exit.is_none() {
            take_prover(prover.new_lines());
            if let Some(u) = prover.try_reap() {
                let at = Instant::now();
                take_prover(prover.drain_lines());
                exit = Some((at, u));
            }
        }
        if let (false, Some(v)) = (verifier_done, verifier.as_mut()) {
            let mut found = |lines: Vec<(Instant, String)>| {
                lines.into_iter().find_map(|(at, l)| {
                    vscan
                        .push(&l)
                        .iter()
                        .find_map(contract::verdict_of)
                        .map(|v| (at, v))
                })
            };
            if let Some((at, vd)) = found(v.new_lines()) {
                // CPU and memory up to the verdict, not to the SIGTERM.
                verifier_usage = v.usage_now().unwrap_or_default();
                verdict = Some((at, vd, VerdictRule::Event));
                verifier_done = true;
            } else if let Some(u) = v.try_reap() {
                let at = Instant::now();
                verifier_done = true;
                if let Some((line_at, vd)) = found(v.drain_lines()) {
                    verdict = Some((line_at, vd, VerdictRule::Event));
                } else if rule == VerdictRule::Exit {
                    let reason = if u.code == 0 {
                        String::new()
                    } else {
                        format!("verifier exited with code {}{}", u.code, v.stderr_tail())
                    };
                    verdict = Some((
                        at,
                        Verdict {
                            accepted: u.code == 0,
                            reason,
                        },
                        VerdictRule::Exit,
                    ));
                } else {
                    no_verdict = format!(
                        "verifier exited with code {} without a verdict event{}",
                        u.code,
                        v.stderr_tail()
                    );
                }
                verifier_usage = u;
            }
        }
        let now = Instant::now();
        // A prover that hangs once the verdict is in (say, after a
        // rejection) is stopped rather than holding the run for minutes.
        if let (None, Some((at, _, _))) = (&exit, &verdict) {
            if now > *at + grace && !killed_after_verdict {
                killed_after_verdict = true;
                prover.kill();
                continue;
            }
        }
        if let Some((at, _)) = &exit {
            if verifier_done {
                break;
            }
            if now > *at + grace {
                no_verdict = format!(
                    "no verdict within {:.0} s of the prover's exit (verdict_timeout)",
                    grace.as_secs_f64()
                );
                break;
            }
        }
        if now > deadline {
            prover.kill();
            bail!(crate::proc::ProcError::Timeout {
                role: "prover".into(),
                secs: SAMPLE_TIMEOUT.as_secs(),
                tail: prover.stderr_tail(),
            });
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let (prover_exit, prover_usage) = exit.expect("loop ends after the prover's exit");
    Ok(Observed {
        start: start.unwrap_or(spawned),
        spawned,
        prover_exit,
        prover: prover_usage,
        prover_objects,
        verdict,
        no_verdict,
        verifier: verifier_usage,
        killed_after_verdict,
    })
}

/// The fixture's view of the sample's sessions: the last negotiated
/// version and suite, and the bytes of all of them.
fn server_session(lines: &[(Instant, String)]) -> Option<ServerSession> {
    let all: Vec<ServerSession> = JsonScanner::scan(lines.iter().map(|(_, l)| l.as_str()))
        .iter()
        .filter_map(contract::server_session_of)
        .collect();
    let last = all.iter().rev().find(|s| !s.tls_version.is_empty())?;
    Some(ServerSession {
        tls_version: last.tls_version.clone(),
        suite: last.suite.clone(),
        request_bytes: all.iter().map(|s| s.request_bytes).sum(),
        response_bytes: all.iter().map(|s| s.response_bytes).sum(),
    })
}

fn fill_usage(s: &mut Sample, p: &Usage, v: &Usage, srv: &Usage) {
    s.prover_wall_ms = p.wall.as_secs_f64() * 1e3;
    s.prover_cpu_ms = p.cpu_ms();
    s.verifier_cpu_ms = v.cpu_ms();
    s.server_cpu_ms = srv.cpu_ms();
    s.prover_peak_rss_bytes = p.peak_rss;
    s.verifier_peak_rss_bytes = v.peak_rss;
    s.heap_max_bytes = p.peak_rss;
}

/// Phases as the harness sees them from outside.
#[derive(Clone, Copy, Debug, Default)]
pub struct OutsidePhases {
    /// From the start to the prover's exit or the verdict, whichever first.
    pub online_ms: f64,
    /// From the prover's exit to a later verdict (0 otherwise).
    pub tail_ms: f64,
}

/// IP and TCP headers per packet: 20 + 20 at least, 20 + 60 at most.
const MIN_HEADER: u64 = 40;
const MAX_HEADER: u64 = 80;

/// Whether `reported` payload bytes fit what the interface counted: between
/// the bytes less the largest headers and the bytes less the smallest, with
/// 2% + 1500 bytes of slack for stray packets (ARP, neighbour discovery).
pub fn adds_up(reported: u64, bytes: u64, packets: u64, l2: u64) -> bool {
    let lo = bytes.saturating_sub(packets * (MAX_HEADER + l2));
    let hi = bytes.saturating_sub(packets * (MIN_HEADER + l2));
    let slack = bytes / 50 + 1500;
    reported + slack >= lo && reported <= hi + slack
}

/// Fill phases, byte columns and labels from the prover's report, the
/// outside view, the link counters and the server's view.
pub fn apply_reported(
    s: &mut Sample,
    r: Option<&Reported>,
    outside: &OutsidePhases,
    link: Counters,
    l2: u64,
    server: Option<&ServerSession>,
) {
    match r {
        Some(r) => {
            s.phases_reported = true;
            s.time_preprocess = r.time_preprocess_ms.unwrap_or(0.0);
            s.time_tls = r.time_tls_ms.unwrap_or(0.0);
            s.time_proof = r.time_proof_ms.unwrap_or(0.0);
            let (online, finalize) = match (r.time_finalize_ms, r.time_tls_ms, r.time_proof_ms) {
                (Some(f), _, _) => (r.time_online_ms.unwrap_or(0.0), f),
                // webproof's layout: online = TLS session + proof.
                (None, Some(tls), Some(proof)) => (tls, proof),
                _ => (
                    r.time_online_ms.unwrap_or(outside.online_ms),
                    outside.tail_ms,
                ),
            };
            s.time_online = online;
            s.time_finalize = finalize;
            s.uploaded_preprocess = r.uploaded_preprocess.unwrap_or(0);
            s.downloaded_preprocess = r.downloaded_preprocess.unwrap_or(0);
            s.uploaded_online = r.uploaded_online.unwrap_or(0);
            s.downloaded_online = r.downloaded_online.unwrap_or(0);
            s.uploaded_finalize = r.uploaded_finalize.unwrap_or(0);
            s.downloaded_finalize = r.downloaded_finalize.unwrap_or(0);
            if let Some(t) = &r.tls_version {
                s.tls = t.clone();
            } else if let Some(ss) = server {
                s.tls = ss.tls_version.clone();
            }
            if let Some(t) = &r.suite {
                s.suite = t.clone();
            } else if let Some(ss) = server {
                s.suite = ss.suite.clone();
            }
        }
        None => {
            s.phases_reported = false;
            s.time_online = outside.online_ms;
            s.time_finalize = outside.tail_ms;
            if let Some(ss) = server {
                s.tls = ss.tls_version.clone();
                s.suite = ss.suite.clone();
            }
        }
    }
    let up = s.uploaded_preprocess + s.uploaded_online + s.uploaded_finalize;
    let down = s.downloaded_preprocess + s.downloaded_online + s.downloaded_finalize;
    let reported = r.is_some_and(|r| r.has_bytes());
    let consistent = adds_up(up, link.tx_bytes, link.tx_packets, l2)
        && adds_up(down, link.rx_bytes, link.rx_packets, l2);
    if reported && consistent {
        s.bytes_source = "reported".into();
        s.uploaded_total = up;
        s.downloaded_total = down;
    } else {
        s.bytes_source = if reported { "link-mismatch" } else { "link" }.into();
        s.uploaded_total = link.tx_bytes;
        s.downloaded_total = link.rx_bytes;
        if !reported {
            s.uploaded_online = link.tx_bytes;
            s.downloaded_online = link.rx_bytes;
        }
    }
}

/// Print above the progress bar, or plainly when there is none.
fn say(pb: &indicatif::ProgressBar, msg: String) {
    if pb.is_hidden() {
        eprintln!("{msg}");
    } else {
        pb.println(msg);
    }
}

/// How far from their scheduled times the userspace emulator delivered
/// packets during a bench.
fn emulator_lateness(topo: &Topology) -> Option<String> {
    let (mut n, mut late, mut late_max, mut early, mut early_max) = (0u64, 0u64, 0u64, 0u64, 0u64);
    for l in &topo.links {
        for st in l.tun.as_ref()?.stats.iter() {
            n += st.packets.load(Ordering::Relaxed);
            late += st.late_sum_ns.load(Ordering::Relaxed);
            late_max = late_max.max(st.late_max_ns.load(Ordering::Relaxed));
            early += st.early_sum_ns.load(Ordering::Relaxed);
            early_max = early_max.max(st.early_max_ns.load(Ordering::Relaxed));
        }
    }
    let us = |ns: u64| ns as f64 / 1e3;
    (n > 0).then(|| {
        format!(
            "emulator delivered {n} packets, {:.1} us late / {:.1} us early on average, \
             {:.0} us late / {:.0} us early at most",
            us(late) / n as f64,
            us(early) / n as f64,
            us(late_max),
            us(early_max)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(tx: u64, rx: u64, txp: u64, rxp: u64) -> Counters {
        Counters {
            tx_bytes: tx,
            rx_bytes: rx,
            tx_packets: txp,
            rx_packets: rxp,
        }
    }

    #[test]
    fn request_template_is_upload_size() {
        for (up, down) in [(1024, 2048), (300, 51200), (4096, 10)] {
            let pad = padding_len(up, down, 8443);
            assert_eq!(request_template(down, 8443, pad).len(), up);
        }
        // Too small to fit: no padding, and longer than asked.
        assert_eq!(padding_len(10, 2048, 8443), 0);
    }

    #[test]
    fn requests_far_from_upload_size_and_other_tls_are_warned() {
        let cfg =
            "[[bench]]\nname = \"x\"\nmode = \"plain\"\ntls = \"1.3\"\nprotocol_latency = 10\n\
                   bandwidth = 10\nupload-size = 1024\ndownload-size = 2048\n";
        let b = Config::parse(cfg, Path::new("t.toml")).unwrap().benches[0].clone();
        let sample = |req: u64, tls: &str| Sample {
            server_request_bytes: req,
            server_tls: tls.into(),
            ..Default::default()
        };
        let mut n = BenchNotes::default();
        n.add(&sample(1024, "1.3"));
        n.add(&sample(1070, "1.3"));
        assert!(n.finish(&b, "x").is_empty());
        let mut n = BenchNotes::default();
        n.add(&sample(1024, "1.3"));
        n.add(&sample(1400, "1.2"));
        let w = n.finish(&b, "x");
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w[0].contains("1024-1400 bytes"), "{}", w[0]);
        assert!(w[1].contains("negotiated 1.3, 1.2"), "{}", w[1]);
    }

    #[test]
    fn byte_counts_must_fit_the_link() {
        // 100 full packets of 1448 payload + 52 header.
        assert!(adds_up(144_800, 150_000, 100, 0));
        // A prover that forgot its proof phase (half the bytes).
        assert!(!adds_up(72_400, 150_000, 100, 0));
        // More than the link carried.
        assert!(!adds_up(300_000, 150_000, 100, 0));
        // ACK-only direction: small counts fit.
        assert!(adds_up(0, 5_200, 100, 0));
    }

    #[test]
    fn totals_come_from_the_link_when_counts_do_not_add_up() {
        let outside = OutsidePhases {
            online_ms: 100.0,
            tail_ms: 40.0,
        };
        let r = Reported {
            time_online_ms: Some(80.0),
            uploaded_online: Some(72_400),
            downloaded_online: Some(0),
            ..Default::default()
        };
        let mut s = Sample::default();
        apply_reported(
            &mut s,
            Some(&r),
            &outside,
            link(150_000, 5_200, 100, 100),
            0,
            None,
        );
        assert_eq!(s.bytes_source, "link-mismatch");
        assert_eq!((s.uploaded_total, s.downloaded_total), (150_000, 5_200));
        assert_eq!(s.uploaded_online, 72_400);
        // No finalize reported: the verdict's wait after the prover's exit.
        assert_eq!((s.time_online, s.time_finalize), (80.0, 40.0));

        let r = Reported {
            uploaded_online: Some(100_000),
            uploaded_finalize: Some(44_800),
            time_tls_ms: Some(30.0),
            time_proof_ms: Some(50.0),
            tls_version: Some("1.3".into()),
            ..Default::default()
        };
        let server = ServerSession {
            tls_version: "1.2".into(),
            suite: "S".into(),
            ..Default::default()
        };
        let mut s = Sample::default();
        apply_reported(
            &mut s,
            Some(&r),
            &outside,
            link(150_000, 5_200, 100, 100),
            0,
            Some(&server),
        );
        assert_eq!(s.bytes_source, "reported");
        assert_eq!(s.uploaded_total, 144_800);
        // webproof's layout: online is the TLS session, finalize the proof.
        assert_eq!((s.time_online, s.time_finalize), (30.0, 50.0));
        // The prover's version wins; the suite comes from the server.
        assert_eq!((s.tls.as_str(), s.suite.as_str()), ("1.3", "S"));

        let mut s = Sample::default();
        apply_reported(
            &mut s,
            None,
            &outside,
            link(9_000, 7_000, 10, 10),
            0,
            Some(&server),
        );
        assert_eq!(s.bytes_source, "link");
        assert_eq!((s.uploaded_online, s.uploaded_total), (9_000, 9_000));
        assert_eq!((s.time_online, s.time_finalize), (100.0, 40.0));
        assert_eq!(s.tls, "1.2");
    }

    /// `tls` and `suite` reach the browser prover as the native one's
    /// flags; MPC over TLS 1.3 runs, natively and in the browser.
    #[test]
    fn browser_benches_take_tls_and_suite() {
        let cfg =
            "[[bench]]\nname = \"b\"\nmode = \"proxy\"\ntarget = \"browser\"\ntls = \"1.2\"\n\
                   suite = \"ECDHE_ECDSA_WITH_AES_128_GCM_SHA256\"\nprotocol_latency = 10\n\
                   bandwidth = 10\nupload-size = 1024\ndownload-size = 2048\n\n\
                   [[bench]]\nname = \"m\"\nmode = \"mpc\"\ntls = \"1.3\"\nprotocol_latency = 10\n\
                   bandwidth = 10\nupload-size = 1024\ndownload-size = 2048\n\n\
                   [[bench]]\nname = \"mb\"\nmode = \"mpc\"\ntarget = \"browser\"\ntls = \"1.3\"\n\
                   protocol_latency = 10\nbandwidth = 10\nupload-size = 1024\ndownload-size = 2048\n";
        let benches = Config::parse(cfg, Path::new("t.toml")).unwrap().benches;
        let mut opts = RunOptions {
            config: "t.toml".into(),
            output: "out.csv".into(),
            format: Format::Tlsn,
            samples: None,
            warmup: None,
            backend: None,
            filter: None,
            skip_unavailable: true,
            target: None,
            tolerance: 0.1,
            probe_time: Duration::from_millis(100),
            progress: false,
            exe: Executables {
                worker: "worker".into(),
                worker_prefix: vec![],
                webproof: Some("webproof".into()),
                web: None,
            },
        };
        let mut warnings = Vec::new();
        // MPC over TLS 1.3 runs (issue 54), natively and in the browser,
        // beside the browser's proxy bench.
        let ok = runnable(&opts, benches.clone(), &mut warnings).unwrap();
        assert_eq!(ok.len(), 3);
        assert_eq!(
            (ok[0].target, ok[0].tls),
            (Target::Browser, OfferedVersion::V12)
        );
        assert_eq!((&ok[1].mode, ok[1].tls), (&Mode::Mpc, OfferedVersion::V13));
        assert_eq!(
            (ok[2].target, &ok[2].mode, ok[2].tls),
            (Target::Browser, &Mode::Mpc, OfferedVersion::V13)
        );
        assert!(warnings.is_empty(), "{warnings:?}");
        // Without the webproof binary, all are skipped, or refused.
        opts.exe.webproof = None;
        let ok = runnable(&opts, benches.clone(), &mut warnings).unwrap();
        assert!(ok.is_empty());
        assert!(
            warnings[0].contains("needs the webproof binary"),
            "{warnings:?}"
        );
        opts.skip_unavailable = false;
        let e = runnable(&opts, benches, &mut warnings).unwrap_err();
        assert!(e.to_string().contains("t.toml:"), "{e}");
    }
}
