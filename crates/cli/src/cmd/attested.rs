//! `webproof bench dcap` and `webproof bench nested-tls`: parse, call
//! `webproof-teebench`, print.
use anyhow::{bail, Context};
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use std::time::Duration;
use webproof_teebench::workload::Operation;
use webproof_teebench::{dcap, nested, tdx, workload};

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Workload {
    /// Offline DCAP quote verification with fixed collateral (dcap-qvl).
    Verify,
    /// File-system baseline: create, write, fsync, read back, delete.
    Fs,
    /// TDX quote generation through configfs-tsm (TDX guests only).
    Tdx,
}

#[derive(Args)]
pub struct DcapArgs {
    #[arg(long, value_enum, default_value = "verify")]
    pub workload: Workload,
    /// Concurrency levels (worker threads), comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,2")]
    pub concurrency: Vec<usize>,
    /// Operations per worker at each level.
    #[arg(long, default_value_t = 50)]
    pub iters_per_worker: usize,
    /// Quote file (binary or hex). Default: dcap-qvl's sample TDX quote.
    #[arg(long, requires = "collateral")]
    pub quote: Option<PathBuf>,
    /// Collateral JSON (QuoteCollateralV3). Default: the sample's.
    #[arg(long, requires = "quote")]
    pub collateral: Option<PathBuf>,
    /// Verification time, unix seconds. Default: a time inside the sample
    /// collateral's window for the sample, the current time otherwise.
    #[arg(long)]
    pub verify_now: Option<u64>,
    /// Require this report data (hex, up to 64 bytes, zero-padded); for
    /// `tdx`, the report data to request.
    #[arg(long)]
    pub expected_report_data: Option<String>,
    /// Bytes written per `fs` operation.
    #[arg(long, default_value_t = 4096)]
    pub fs_bytes: usize,
    /// Directory for the `fs` workload (default: the temp directory).
    #[arg(long)]
    pub fs_dir: Option<PathBuf>,
    /// Also write the table as CSV here.
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// Write an SVG chart of throughput and p50/p99 latency here.
    #[arg(long)]
    pub chart: Option<PathBuf>,
    /// Print JSON instead of the table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct NestedTlsArgs {
    /// Modes to compare, comma-separated: single-tls, nested-tls.
    #[arg(long, value_delimiter = ',', default_value = "single-tls,nested-tls")]
    pub modes: Vec<String>,
    /// Payload sizes in bytes (suffixes K, M allowed), comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "64K,1M,16M")]
    pub payload_sizes: Vec<String>,
    /// Bytes per write call (suffixes K, M allowed), comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "16K")]
    pub chunk_bytes: Vec<String>,
    /// Concurrent connections per round, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1")]
    pub concurrency: Vec<usize>,
    /// Minimum measured rounds per configuration and mode.
    #[arg(long, default_value_t = 20)]
    pub rounds: usize,
    /// Rounds are added up to this many until the CI target is met
    /// (default: 5 x rounds).
    #[arg(long)]
    pub max_rounds: Option<usize>,
    /// Discarded warm-up rounds per configuration and mode.
    #[arg(long, default_value_t = 3)]
    pub warmup: usize,
    /// Emulated round-trip time added by a userspace relay (ms).
    #[arg(long)]
    pub latency_ms: Option<f64>,
    /// Emulated bandwidth of each direction (Mbit/s).
    #[arg(long)]
    pub bandwidth_mbps: Option<f64>,
    /// Inner certificate carries a DCAP quote verified by the client per
    /// handshake (test mode: the dcap-qvl sample quote, see the output).
    #[arg(long)]
    pub attested_inner: bool,
    /// Per-connection timeout (ms); a connection exceeding it is a failure.
    #[arg(long, default_value_t = 30_000)]
    pub timeout_ms: u64,
    /// Largest accepted 95% CI half-width of mean throughput, % of the mean.
    #[arg(long, default_value_t = 5.0)]
    pub max_ci_pct: f64,
    /// Report even unstable results (marked in the output).
    #[arg(long)]
    pub force: bool,
    /// Private network namespace for exact interface counters: auto, on, off.
    #[arg(long, default_value = "auto")]
    pub netns: String,
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// Write SVG charts (throughput, CPU/MiB, handshake time) here.
    #[arg(long)]
    pub chart: Option<PathBuf>,
    #[arg(long)]
    pub json: bool,
}

fn write_out(path: &Option<PathBuf>, text: &str) -> anyhow::Result<()> {
    if let Some(p) = path {
        std::fs::write(p, text).with_context(|| format!("writing {}", p.display()))?;
        eprintln!("wrote {}", p.display());
    }
    Ok(())
}

fn load_avg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

pub async fn run_dcap(args: DcapArgs) -> anyhow::Result<()> {
    tokio::task::spawn_blocking(move || run_dcap_blocking(args)).await?
}

fn run_dcap_blocking(args: DcapArgs) -> anyhow::Result<()> {
    if args.concurrency.is_empty() || args.concurrency.contains(&0) || args.iters_per_worker == 0 {
        bail!("concurrency levels and --iters-per-worker must be positive");
    }
    let report_data = args
        .expected_report_data
        .as_deref()
        .map(dcap::parse_report_data_hex)
        .transpose()
        .context("--expected-report-data")?;
    let (op, what): (Box<dyn workload::Operation>, String) = match args.workload {
        Workload::Verify => {
            let (verifier, quote, now, source) = match (&args.quote, &args.collateral) {
                (Some(q), Some(c)) => {
                    let now = args.verify_now.unwrap_or_else(|| {
                        std::time::SystemTime::now()
                            .duration_since(std::time::UNIX_EPOCH)
                            .map(|d| d.as_secs())
                            .unwrap_or(0)
                    });
                    (
                        dcap::DcapVerifier::new(dcap::read_collateral_file(c)?),
                        dcap::read_quote_file(q)?,
                        now,
                        format!("quote {} with collateral {}", q.display(), c.display()),
                    )
                }
                _ => (
                    dcap::DcapVerifier::sample(),
                    dcap::SAMPLE_TDX_QUOTE.to_vec(),
                    args.verify_now.unwrap_or(dcap::SAMPLE_VERIFY_NOW),
                    "dcap-qvl 0.7.1 sample TDX quote and collateral".to_string(),
                ),
            };
            let window = verifier
                .window()
                .map_or("unknown".into(), |(a, b)| format!("[{a}, {b}]"));
            let op = workload::VerifyOp {
                verifier,
                quote,
                now,
                expected_report_data: report_data,
            };
            let v = op
                .check()
                .context("pre-flight verification failed; not benchmarking")?;
            let what = format!(
                "verify: {source}; collateral window {window}; now {now}; TCB {}; report data {}{}",
                v.tcb_status,
                v.report_data[..16]
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect::<String>(),
                if report_data.is_some() {
                    " (matches expected)"
                } else {
                    "... (not checked)"
                }
            );
            (Box::new(op), what)
        }
        Workload::Fs => {
            let base = args.fs_dir.clone().unwrap_or_else(std::env::temp_dir);
            let op = workload::FsOp::new(base, args.fs_bytes)?;
            let what = format!(
                "fs: create/write {} B/fsync/read/delete in {}",
                args.fs_bytes,
                op.dir.display()
            );
            (Box::new(op), what)
        }
        Workload::Tdx => {
            let op = workload::TdxOp::new(report_data.unwrap_or([0u8; 64]))?;
            op.run_once(usize::MAX, 0)
                .map_err(anyhow::Error::msg)
                .context("pre-flight quote generation failed")?;
            (
                Box::new(op),
                format!("tdx: configfs-tsm at {}", tdx::DEFAULT_TSM_ROOT),
            )
        }
    };
    eprintln!("{what}");
    eprintln!(
        "{} iterations per worker; load average {} on {} CPUs",
        args.iters_per_worker,
        load_avg(),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    let mut results = Vec::new();
    for &c in &args.concurrency {
        let r = workload::run_level(op.as_ref(), c, args.iters_per_worker);
        if let Some(e) = &r.first_error {
            eprintln!("concurrency {c}: {} failures, first: {e}", r.failures);
        }
        results.push(r);
    }
    if args.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "workload": format!("{:?}", args.workload).to_lowercase(),
                "setup": what,
                "results": results,
            }))?
        );
    } else {
        out!("{}", workload::table(&results));
    }
    write_out(&args.csv, &workload::csv(&results))?;
    let title = format!("dcap {}", format!("{:?}", args.workload).to_lowercase());
    write_out(&args.chart, &workload::chart(&title, &results))?;
    let failures: usize = results.iter().map(|r| r.failures).sum();
    if failures > 0 {
        bail!("{failures} operations failed");
    }
    Ok(())
}

/// `65536`, `64K`, `16M`, `1G` (binary multiples).
fn parse_size(s: &str) -> anyhow::Result<usize> {
    let s = s.trim();
    let (num, mult) = match s.chars().last() {
        Some('K' | 'k') => (&s[..s.len() - 1], 1usize << 10),
        Some('M' | 'm') => (&s[..s.len() - 1], 1 << 20),
        Some('G' | 'g') => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    let n: usize = num.parse().with_context(|| format!("bad size {s:?}"))?;
    n.checked_mul(mult)
        .with_context(|| format!("size {s:?} overflows"))
}

pub async fn run_nested_tls(args: NestedTlsArgs) -> anyhow::Result<()> {
    tokio::task::spawn_blocking(move || run_nested_blocking(args)).await?
}

fn run_nested_blocking(args: NestedTlsArgs) -> anyhow::Result<()> {
    let modes = args
        .modes
        .iter()
        .map(|m| nested::Mode::parse(m).with_context(|| format!("unknown mode {m:?}")))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let sizes = |v: &[String]| {
        v.iter()
            .map(|s| parse_size(s))
            .collect::<anyhow::Result<Vec<_>>>()
    };
    let link = match (args.latency_ms, args.bandwidth_mbps) {
        (None, None) => None,
        (l, b) => {
            let rtt = l.unwrap_or(0.0);
            if !(0.0..=10_000.0).contains(&rtt) || b.is_some_and(|b| !(b > 0.0 && b.is_finite())) {
                bail!("--latency-ms must be in 0..=10000 and --bandwidth-mbps positive");
            }
            Some(nested::link::LinkSpec {
                rtt: Duration::from_secs_f64(rtt / 1e3),
                bits_per_s: b.map(|b| b * 1e6),
            })
        }
    };
    let netns = match args.netns.as_str() {
        "auto" => nested::NetnsMode::Auto,
        "on" => nested::NetnsMode::On,
        "off" => nested::NetnsMode::Off,
        other => bail!("--netns must be auto, on or off, not {other:?}"),
    };
    let cfg = nested::NestedConfig {
        modes,
        payload_sizes: sizes(&args.payload_sizes)?,
        chunk_bytes: sizes(&args.chunk_bytes)?,
        concurrency: args.concurrency.clone(),
        rounds: args.rounds,
        max_rounds: args.max_rounds.unwrap_or(args.rounds * 5),
        warmup: args.warmup,
        link,
        attested_inner: args.attested_inner,
        timeout: Duration::from_millis(args.timeout_ms),
        max_ci_rel: args.max_ci_pct / 100.0,
        netns,
        server_fault: None,
    };
    let load = load_avg();
    let rep = nested::run(&cfg)?;
    eprintln!("wire counters: {}", rep.wire_counter_source);
    if let Some(l) = &rep.link {
        eprintln!("link: {l} (wire/app is per hop)");
    }
    if let Some(a) = &rep.attested_inner {
        eprintln!("attested inner: {a}");
    }
    eprintln!(
        "load average at start {load}; target 95% CI ±{}% of mean",
        args.max_ci_pct
    );
    if let Some(e) = &rep.first_error {
        eprintln!("first server-side error: {e}");
    }
    if !rep.unstable.is_empty() {
        for u in &rep.unstable {
            eprintln!("unstable: {u}");
        }
        if !args.force {
            bail!(
                "refusing to report: {} of {} results are not stable enough (add rounds, \
                 quiet the machine, or pass --force to print them marked unstable)",
                rep.unstable.len(),
                rep.rows.len()
            );
        }
        eprintln!("--force: printing unstable results; do not quote them as figures");
    }
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&rep)?);
    } else {
        out!("{}", nested::table(&rep.rows));
    }
    write_out(&args.csv, &nested::csv(&rep.rows))?;
    write_out(&args.chart, &nested::chart(&rep.rows))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("65536").unwrap(), 65536);
        assert_eq!(parse_size("64K").unwrap(), 65536);
        assert_eq!(parse_size("16M").unwrap(), 16 << 20);
        assert!(parse_size("x").is_err());
        assert!(parse_size("99999999999999999G").is_err());
    }
}
