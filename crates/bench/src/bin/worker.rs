//! The harness's internal roles as a standalone binary, for this crate's
//! tests. `webproof bench fixture-server|plain-client` are the same roles;
//! `run` runs a config as `webproof bench` does (a harness the tests can
//! kill).
use clap::Parser;
use std::path::PathBuf;

#[derive(Parser)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(clap::Subcommand)]
enum Cmd {
    #[command(flatten)]
    Internal(webproof_bench::InternalCmd),
    /// Run a bench config (userspace links, no progress bars).
    Run {
        #[arg(long)]
        config: PathBuf,
        #[arg(long)]
        output: PathBuf,
        /// The `webproof` binary (verifier, fixture, native prover).
        #[arg(long)]
        webproof: PathBuf,
        /// The repository's `web/` directory (the browser target).
        #[arg(long)]
        web: Option<PathBuf>,
    },
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let result = match cli.cmd {
        Cmd::Internal(cmd) => tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .map_err(anyhow::Error::from)
            .and_then(|rt| rt.block_on(webproof_bench::run_internal(cmd))),
        Cmd::Run {
            config,
            output,
            webproof,
            web,
        } => run(config, output, webproof, web),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run(
    config: PathBuf,
    output: PathBuf,
    webproof: PathBuf,
    web: Option<PathBuf>,
) -> anyhow::Result<()> {
    use webproof_bench::runner::{Executables, RunOptions};
    let opts = RunOptions {
        config,
        output,
        format: webproof_bench::metrics::Format::Tlsn,
        samples: None,
        warmup: None,
        backend: Some(webproof_bench::topology::Backend::Userspace),
        filter: None,
        skip_unavailable: false,
        target: None,
        tolerance: 0.5,
        probe_time: std::time::Duration::from_millis(500),
        progress: false,
        exe: Executables {
            worker: std::env::current_exe()?,
            worker_prefix: vec![],
            webproof: Some(webproof),
            web,
        },
    };
    // A dedicated thread, as `webproof bench`: children are tied to the
    // thread that spawns them.
    std::thread::spawn(move || webproof_bench::runner::run(&opts))
        .join()
        .map_err(|_| anyhow::anyhow!("bench runner panicked"))??;
    Ok(())
}
