//! `webproof bench zk`.
use clap::Args;

#[derive(Args)]
pub struct ZkBenchArgs {
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

pub async fn run(_args: ZkBenchArgs) -> anyhow::Result<()> {
    anyhow::bail!("the ZK engine benchmark is not built yet (issue 2)")
}
