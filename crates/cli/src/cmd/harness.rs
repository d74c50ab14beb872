//! `webproof bench [-c bench.toml]` and the harness's own subcommands.
use clap::{Args, Subcommand};

#[derive(Args)]
pub struct RunArgs {
    /// Benchmark configuration (TOML).
    #[arg(short = 'c', long = "config")]
    pub config: Option<std::path::PathBuf>,
}

#[derive(Subcommand)]
pub enum HarnessCmd {
    /// Remove namespaces, qdiscs and processes left by an interrupted run.
    Clean,
}

pub async fn run_bench(_args: RunArgs) -> anyhow::Result<()> {
    anyhow::bail!("not built yet (issue 4)")
}

pub async fn run(_cmd: HarnessCmd) -> anyhow::Result<()> {
    anyhow::bail!("not built yet (issue 4)")
}
