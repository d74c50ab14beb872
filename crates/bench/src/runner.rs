//! Running a configuration: for each bench, build its network, check it,
//! then run warm-up and measured samples, each with a fresh server, verifier
//! and prover process in their namespaces.
//!
//! Executors:
//! - proxy: `webproof fixture`, `webproof serve`, `webproof prove --json`;
//! - plain: the harness's fixture and plain TLS client (see [`crate::plain`]);
//! - adapters: external commands (see `bench/ADAPTERS.md`), measured from
//!   outside.

use crate::config::{AdapterSpec, BenchSpec, Config, Mode, TlsVersion};
use crate::metrics::{self, Format, Sample};
use crate::netns;
use crate::probe::{self, LinkMeasurement};
use crate::proc::{Proc, Usage};
use crate::topology::{Backend, LinkId, Topology};
use anyhow::{anyhow, bail, Context};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

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
    pub samples: Vec<Sample>,
    pub links: Vec<(String, LinkMeasurement)>,
    pub warnings: Vec<String>,
}

/// Which server fixture the run uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ServerKind {
    Webproof,
    Internal,
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
    }
    // Refuse what cannot run before touching the network.
    let mut runnable = Vec::new();
    for b in benches {
        if b.adapter.is_none() && b.mode == Mode::Mpc {
            let msg = format!(
                "{}:{}: bench `{}/{}`: mode `mpc` is not available yet in webproof \
                 (set `mode = \"proxy\"` or `proxy = true`, or pass --skip-unavailable)",
                opts.config.display(),
                b.line,
                b.group,
                b.name
            );
            if opts.skip_unavailable {
                eprintln!("warning: skipping: {msg}");
                warnings.push(msg);
                continue;
            }
            bail!(msg);
        }
        if b.adapter.is_none() && b.mode == Mode::Proxy && opts.exe.webproof.is_none() {
            bail!(
                "bench `{}/{}` needs the webproof binary for proxy mode",
                b.group,
                b.name
            );
        }
        runnable.push(b);
    }
    if runnable.is_empty() {
        bail!("nothing to run");
    }
    if !netns::is_root() {
        bail!(netns::NetError::NotRoot);
    }
    let interrupt = netns::install_interrupt_handler();
    let backend = match opts.backend {
        Some(b) => b,
        None => Backend::detect()?,
    };
    let server_kind = match &opts.exe.webproof {
        Some(w) if has_subcommand(w, "fixture") => ServerKind::Webproof,
        _ => ServerKind::Internal,
    };
    eprintln!(
        "webproof bench: {} benches, backend `{}`{}, server fixture: {}",
        runnable.len(),
        backend.as_str(),
        match backend {
            Backend::Userspace => " (TUN delay line; this kernel has no netem)",
            Backend::Netem => " (veth + tc netem/tbf)",
        },
        match server_kind {
            ServerKind::Webproof => "webproof fixture",
            ServerKind::Internal => "harness fixture-server",
        }
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
    let mut links = Vec::new();
    let adapters = &config.adapters;
    for (i, bench) in runnable.iter().enumerate() {
        if interrupt.load(Ordering::Relaxed) {
            bail!("interrupted");
        }
        let label = format!("{}/{} [{}]", bench.group, bench.name, bench.mode_label());
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
        let verifier_connects = adapter.map_or(bench.verifier_connects(), |a| a.verifier_connects);
        let uses_verifier = adapter.map_or(bench.mode == Mode::Proxy, |a| a.verifier.is_some());
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
                uses_verifier,
                app_id,
                server_kind,
                exe: &opts.exe,
                interrupt: &interrupt,
            };
            let mut sample =
                run_sample(&ctx).with_context(|| format!("{label}, sample {}", s + 1))?;
            pb.inc(1);
            if warm {
                continue;
            }
            sample.sample = s - bench.warmup;
            sample.backend = backend.as_str().into();
            if let Some(m) = measured.get("pv") {
                sample.measured_rtt_ms = m.rtt_ms;
                sample.measured_mbps = m.mbps;
            }
            if let Some(m) = measured.get(app_id.short()) {
                sample.app_measured_rtt_ms = m.rtt_ms;
                sample.app_measured_mbps = m.mbps;
            }
            samples.push(sample);
        }
        let mine: Vec<&Sample> = samples
            .iter()
            .filter(|s| s.group == bench.group && s.name == bench.name)
            .collect();
        let mean = mine.iter().map(|s| s.time_total).sum::<f64>() / mine.len().max(1) as f64;
        say(
            &pb,
            format!(
                "{label}: mean total {:.1} ms over {} samples",
                mean,
                mine.len()
            ),
        );
        if let Some(late) = emulator_lateness(&topo) {
            say(&pb, format!("  {label}: {late}"));
        }
        // Results so far are kept even if a later bench fails.
        metrics::write_csv(&opts.output, &samples, opts.format)?;
        write_links(&opts.output, &links)?;
        drop(topo);
    }
    pb.finish_and_clear();
    Ok(RunSummary {
        backend,
        samples,
        links,
        warnings,
    })
}

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

fn has_subcommand(exe: &Path, sub: &str) -> bool {
    Command::new(exe)
        .args([sub, "--help"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

struct SampleCtx<'a> {
    bench: &'a BenchSpec,
    topo: &'a Topology,
    adapter: Option<&'a AdapterSpec>,
    uses_verifier: bool,
    app_id: LinkId,
    server_kind: ServerKind,
    exe: &'a Executables,
    interrupt: &'a Arc<AtomicBool>,
}

/// Length of the request line and headers the clients send besides the
/// padding value, so the whole request is `upload_size` bytes.
pub fn padding_len(upload_size: usize, download_size: usize) -> usize {
    let base = format!(
        "GET /bytes?size={download_size} HTTP/1.1\r\nHost: {SERVER_NAME}\r\nX-Padding: \r\nConnection: close\r\n\r\n"
    )
    .len();
    upload_size.saturating_sub(base)
}

/// Values substituted in adapter argv and exported as `WPB_*` variables.
fn placeholders(
    ctx: &SampleCtx,
    server_port: u16,
    ca_cert: &str,
) -> BTreeMap<&'static str, String> {
    let b = ctx.bench;
    let server_ip = ctx.topo.link(ctx.app_id).b.addr.to_string();
    let verifier_ip = ctx.topo.link(LinkId::ProverVerifier).b.addr.to_string();
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
    m.insert(
        "padding",
        "x".repeat(padding_len(b.upload_size, b.download_size)),
    );
    m.insert("tls", b.tls.as_str().to_string());
    m.insert("reveal", reveal_of(b));
    m
}

/// `--reveal` items for `webproof prove`: the configured list, everything
/// (`reveal-all`), or by default all but the first received byte, so the
/// zero-knowledge path is exercised as in the field's benchmarks.
fn prove_reveal_args(b: &BenchSpec) -> Vec<String> {
    match (&b.reveal, b.reveal_all) {
        (Some(r), _) => r
            .split(',')
            .map(|x| x.trim().to_string())
            .filter(|x| !x.is_empty())
            .collect(),
        (None, true) => vec!["all".into()],
        (None, false) => vec!["all".into(), "hide-recv:0-1".into()],
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

fn internal(ctx: &SampleCtx, ns: &str, role: &str) -> anyhow::Result<Command> {
    let mut c = ctx.topo.namespace(ns).command(&ctx.exe.worker)?;
    c.args(&ctx.exe.worker_prefix).arg(role);
    Ok(c)
}

fn webproof(ctx: &SampleCtx, ns: &str) -> anyhow::Result<Command> {
    let exe = ctx
        .exe
        .webproof
        .as_ref()
        .context("webproof binary not known")?;
    Ok(ctx.topo.namespace(ns).command(exe)?)
}

/// Bytes allowed for the fixture response's status line and headers when
/// telling the prover what response size to expect.
const RESPONSE_HEAD_ALLOWANCE: usize = 512;

const READY: Duration = Duration::from_secs(30);
const SAMPLE_TIMEOUT: Duration = Duration::from_secs(900);

fn run_sample(ctx: &SampleCtx) -> anyhow::Result<Sample> {
    let b = ctx.bench;
    let topo = ctx.topo;
    let server_ns = topo.server.name().to_string();
    let listen = format!("0.0.0.0:{SERVER_PORT}");
    let scratch = std::env::temp_dir().join(format!("wpb-run-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)?;

    // Server fixture.
    let mut cmd = match ctx.server_kind {
        ServerKind::Webproof => {
            let mut c = webproof(ctx, &server_ns)?;
            c.args(["fixture", "--listen", &listen, "--san", SERVER_NAME]);
            c
        }
        ServerKind::Internal => {
            let mut c = internal(ctx, &server_ns, "fixture-server")?;
            c.args(["--listen", &listen, "--san", SERVER_NAME, "--dir"])
                .arg(&scratch);
            c
        }
    };
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
    let vals = placeholders(ctx, server_port, &ca_cert);
    let envs: Vec<(String, String)> = vals
        .iter()
        .map(|(k, v)| (format!("WPB_{}", k.to_ascii_uppercase()), v.clone()))
        .chain([("WPB_MODE".to_string(), b.mode_label())])
        .collect();

    // Verifier.
    let verifier_ns = topo.verifier.name().to_string();
    let prover_ns = topo.prover.name().to_string();
    let mut verifier = None;
    if ctx.uses_verifier {
        let mut cmd = match ctx.adapter {
            Some(a) => {
                let argv = a
                    .verifier
                    .as_ref()
                    .expect("uses_verifier implies a verifier command");
                let mut c = topo
                    .namespace(&verifier_ns)
                    .command(substitute(&argv[0], &vals)?)?;
                for x in &argv[1..] {
                    c.arg(substitute(x, &vals)?);
                }
                c
            }
            None => {
                let mut c = webproof(ctx, &verifier_ns)?;
                c.args([
                    "serve",
                    "--listen",
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

    // Prover.
    let header = format!("X-Padding: {}", vals["padding"]);
    let mut cmd = match (ctx.adapter, &b.mode) {
        (Some(a), _) => {
            let mut c = topo
                .namespace(&prover_ns)
                .command(substitute(&a.prover[0], &vals)?)?;
            for x in &a.prover[1..] {
                c.arg(substitute(x, &vals)?);
            }
            c
        }
        (None, Mode::Proxy) => {
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
            c.args(["--ca-cert", &ca_cert, "--json"]);
            if b.tls != TlsVersion::Any {
                c.args(["--tls", b.tls.as_str()]);
            }
            if let Some(suite) = &b.suite {
                c.args(["--suite", suite]);
            }
            for item in prove_reveal_args(b) {
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
        (None, Mode::Mpc) => bail!("mode `mpc` is not available yet"),
    };
    cmd.envs(envs.iter().cloned()).env("WPB_ROLE", "prover");
    let pv = topo.link(LinkId::ProverVerifier);
    let app = topo.link(ctx.app_id);
    let pv_before = pv.bytes()?;
    let app_before = app.bytes()?;
    let mut prover = Proc::spawn("prover", cmd)?;
    let (pu, lines) = prover.wait(SAMPLE_TIMEOUT, ctx.interrupt)?;
    let pv_after = pv.bytes()?;
    let app_after = app.bytes()?;
    if pu.code != 0 {
        let tail = prover.stderr_tail();
        bail!("prover failed with exit code {}{tail}", pu.code);
    }
    let vu = verifier
        .as_mut()
        .map(|v| v.terminate(Duration::from_secs(5)))
        .unwrap_or_default();
    let su = server.terminate(Duration::from_secs(5));

    let mut s = Sample {
        group: b.group.clone(),
        name: b.name.clone(),
        latency: b.protocol.rtt_ms,
        bandwidth: b.protocol.bandwidth_mbps,
        upload_size: b.upload_size as u64,
        download_size: b.download_size as u64,
        defer_decryption: b.defer_decryption,
        proxy: b.mode == Mode::Proxy && b.adapter.is_none(),
        mode: b.mode_label(),
        app_latency: b.app.rtt_ms,
        app_bandwidth: b.app.bandwidth_mbps,
        jitter: b.protocol.jitter_ms,
        loss: b.protocol.loss_percent,
        tls: b.tls.as_str().into(),
        suite: b.suite.clone().unwrap_or_default(),
        reveal: reveal_of(b),
        ..Default::default()
    };
    fill_usage(&mut s, &pu, &vu, &su);
    // Link bytes: `a` is the prover's end of pv; on the app link `a` is the
    // prover (ps) or the verifier (vs), the client side in both cases.
    if ctx.uses_verifier {
        s.link_uploaded_bytes = pv_after.0 - pv_before.0;
        s.link_downloaded_bytes = pv_after.1 - pv_before.1;
    }
    s.app_link_to_server_bytes = app_after.0 - app_before.0;
    s.app_link_from_server_bytes = app_after.1 - app_before.1;
    apply_reported_stats(&mut s, &lines, &pu);
    Ok(s)
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

/// Take phases and protocol bytes from the prover's JSON stats object if it
/// printed one; otherwise time from outside and bytes from the link.
pub fn apply_reported_stats(s: &mut Sample, lines: &[String], p: &Usage) {
    let stats = lines
        .iter()
        .rev()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v.get("stats").is_some_and(|x| x.is_object()));
    let num = |v: &serde_json::Value, k: &str| v.get(k).and_then(|x| x.as_f64());
    match stats {
        Some(v) => {
            let st = &v["stats"];
            s.phases_reported = true;
            s.time_preprocess = num(st, "time_preprocess_ms").unwrap_or(0.0);
            s.time_online = num(st, "time_online_ms").unwrap_or(0.0);
            s.time_total = num(st, "time_total_ms").unwrap_or(s.time_preprocess + s.time_online);
            s.time_tls = num(st, "time_tls_ms").unwrap_or(0.0);
            s.time_proof = num(st, "time_proof_ms").unwrap_or(0.0);
            s.uploaded_preprocess = num(st, "uploaded_preprocess").unwrap_or(0.0) as u64;
            s.downloaded_preprocess = num(st, "downloaded_preprocess").unwrap_or(0.0) as u64;
            s.uploaded_online = num(st, "uploaded_online").unwrap_or(0.0) as u64;
            s.downloaded_online = num(st, "downloaded_online").unwrap_or(0.0) as u64;
            if let Some(t) = v.get("tls_version").and_then(|x| x.as_str()) {
                s.tls = t.to_string();
            }
            if let Some(t) = v.get("suite").and_then(|x| x.as_str()) {
                if !t.is_empty() {
                    s.suite = t.to_string();
                }
            }
        }
        None => {
            s.phases_reported = false;
            s.time_total = p.wall.as_secs_f64() * 1e3;
            s.time_online = s.time_total;
            // Measured at the link: the protocol link if there is one.
            let (up, down) = if s.link_uploaded_bytes + s.link_downloaded_bytes > 0 {
                (s.link_uploaded_bytes, s.link_downloaded_bytes)
            } else {
                (s.app_link_to_server_bytes, s.app_link_from_server_bytes)
            };
            s.uploaded_online = up;
            s.downloaded_online = down;
        }
    }
    s.uploaded_total = s.uploaded_preprocess + s.uploaded_online;
    s.downloaded_total = s.downloaded_preprocess + s.downloaded_online;
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
