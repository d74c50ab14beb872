//! `webproof demo | fixture | serve | prove`: proxy mode.
use clap::Subcommand;

#[derive(Subcommand)]
pub enum ProxyCmd {
    /// Run a local HTTPS server, a verifier and a prover, and show what was verified.
    Demo,
}

pub async fn run(_cmd: ProxyCmd) -> anyhow::Result<()> {
    anyhow::bail!("not built yet (issue 3)")
}
