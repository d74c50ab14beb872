//! `webproof bench [-c bench.toml]` and the harness's own subcommands
//! (`plot`, `compare`, `clean`, and hidden worker roles). Thin: parse, call
//! `webproof-bench`, print.
use clap::{Args, Subcommand};
use std::path::PathBuf;
use webproof_bench::config::Target;
use webproof_bench::metrics::Format;
use webproof_bench::runner::{Executables, RunOptions};
use webproof_bench::topology::Backend;

fn parse_target(s: &str) -> Result<Target, String> {
    Target::parse(s).ok_or_else(|| format!("unknown target `{s}` (native or browser)"))
}

#[derive(Args)]
pub struct RunArgs {
    /// Benchmark configuration (TOML; TLSNotary's bench files work).
    /// Default: ./bench.toml, else bench/profiles.toml.
    #[arg(short = 'c', long = "config")]
    pub config: Option<PathBuf>,
    /// Where to write the samples (CSV).
    #[arg(short = 'o', long = "output", default_value = "metrics.csv")]
    pub output: PathBuf,
    /// Samples per bench (overrides the config).
    #[arg(long)]
    pub samples: Option<u32>,
    /// Warm-up samples per bench, not recorded (overrides the config).
    #[arg(long)]
    pub warmup: Option<u32>,
    /// CSV layout: TLSNotary's columns plus ours, or Primus'.
    #[arg(long, value_enum, default_value = "tlsn")]
    pub format: Format,
    /// Link emulation: auto (netem if the kernel has it), netem, userspace.
    #[arg(long, default_value = "auto")]
    pub backend: String,
    /// Run only benches whose `group/name` contains this.
    #[arg(long)]
    pub filter: Option<String>,
    /// Skip benches webproof cannot run here (a prover mode without the webproof binary) instead of failing.
    #[arg(long)]
    pub skip_unavailable: bool,
    /// Where proxy-mode provers run: native, or browser (the WebAssembly
    /// prover in headless chromium; needs node, chromium and
    /// scripts/browser-package.sh's build). Overrides the config's `target`;
    /// plain and MPC benches stay native.
    #[arg(long, value_parser = parse_target)]
    pub target: Option<Target>,
    /// The repository's web/ directory for the browser target (default:
    /// WEBPROOF_WEB_DIR, else found above the current directory or the binary).
    #[arg(long, value_name = "DIR")]
    pub web_dir: Option<PathBuf>,
    /// Largest accepted deviation of a measured link from its setting (%).
    #[arg(long, default_value_t = 10.0)]
    pub link_tolerance: f64,
    /// Duration of each link throughput check, ms.
    #[arg(long, default_value_t = 800)]
    pub probe_ms: u64,
    /// No progress bar.
    #[arg(long)]
    pub no_progress: bool,
}

#[derive(Subcommand)]
pub enum HarnessCmd {
    /// Draw charts (SVG, light and dark) and a Markdown report from a CSV.
    Plot(PlotArgs),
    /// Compare two CSVs: the report's tables with the change per cell in %.
    Compare(CompareArgs),
    /// Remove namespaces, links and processes left by an interrupted run.
    Clean,
    #[command(flatten)]
    Internal(webproof_bench::InternalCmd),
}

#[derive(Args)]
pub struct PlotArgs {
    /// Samples written by `webproof bench`.
    pub csv: PathBuf,
    /// Output directory.
    #[arg(short = 'o', long = "out", default_value = "bench-report")]
    pub out: PathBuf,
}

#[derive(Args)]
pub struct CompareArgs {
    pub base: PathBuf,
    pub new: PathBuf,
    /// Write the Markdown here instead of printing it.
    #[arg(short = 'o', long = "out")]
    pub out: Option<PathBuf>,
}

pub async fn run_bench(args: RunArgs) -> anyhow::Result<()> {
    let config = match args.config {
        Some(c) => c,
        None if std::path::Path::new("bench.toml").exists() => "bench.toml".into(),
        None => "bench/profiles.toml".into(),
    };
    let backend =
        match args.backend.as_str() {
            "auto" => None,
            b => Some(Backend::parse(b).ok_or_else(|| {
                anyhow::anyhow!("unknown backend `{b}` (auto, netem or userspace)")
            })?),
        };
    let me = std::env::current_exe()?;
    let opts = RunOptions {
        config,
        output: args.output.clone(),
        format: args.format,
        samples: args.samples,
        warmup: args.warmup,
        backend,
        filter: args.filter,
        skip_unavailable: args.skip_unavailable,
        target: args.target,
        tolerance: args.link_tolerance / 100.0,
        probe_time: std::time::Duration::from_millis(args.probe_ms),
        progress: !args.no_progress,
        exe: Executables {
            worker: me.clone(),
            worker_prefix: vec!["bench".into()],
            webproof: Some(me),
            web: args.web_dir,
        },
    };
    // A dedicated thread: children are tied to the thread that spawns them.
    let summary = std::thread::spawn(move || webproof_bench::runner::run(&opts))
        .join()
        .map_err(|_| anyhow::anyhow!("bench runner panicked"))??;
    outln!(
        "{} samples written to {} (links: {}), backend `{}`",
        summary.samples.len(),
        args.output.display(),
        webproof_bench::runner::links_path(&args.output).display(),
        summary.backend.as_str()
    );
    // Refused samples are not in the results; say so where the figures are.
    outln!(
        "{} samples refused{}",
        summary.refused.len(),
        if summary.refused.is_empty() {
            String::new()
        } else {
            format!(
                " (verdict missing or negative, or the prover failed): see {}",
                webproof_bench_report::metrics::refused_path(&args.output).display()
            )
        }
    );
    Ok(())
}

pub async fn run(cmd: HarnessCmd) -> anyhow::Result<()> {
    match cmd {
        HarnessCmd::Plot(a) => {
            let files = webproof_bench_report::plot::plot_csv(&a.csv, &a.out)?;
            for f in files {
                outln!("{}", f.display());
            }
            Ok(())
        }
        HarnessCmd::Compare(a) => {
            let md = webproof_bench_report::report::compare_files(&a.base, &a.new)?;
            match a.out {
                Some(p) => std::fs::write(&p, md)?,
                None => out!("{md}"),
            }
            Ok(())
        }
        HarnessCmd::Clean => {
            let r = webproof_bench::netns::clean_all()?;
            if r.namespaces.is_empty() && r.links.is_empty() {
                outln!("nothing to clean");
            }
            for n in r.namespaces {
                outln!("removed namespace {n}");
            }
            for l in r.links {
                outln!("removed link {l}");
            }
            Ok(())
        }
        HarnessCmd::Internal(c) => webproof_bench::run_internal(c).await,
    }
}
