//! The harness's internal roles as a standalone binary, for this crate's
//! tests. `webproof bench fixture-server|plain-client` are the same roles.
use clap::Parser;

#[derive(Parser)]
struct Cli {
    #[command(subcommand)]
    cmd: webproof_bench::InternalCmd,
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("start the async runtime");
    match rt.block_on(webproof_bench::run_internal(cli.cmd)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
