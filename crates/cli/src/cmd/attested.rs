//! `webproof bench dcap` and `webproof bench nested-tls`.
use clap::Args;

#[derive(Args)]
pub struct DcapArgs {}

#[derive(Args)]
pub struct NestedTlsArgs {}

pub async fn run_dcap(_args: DcapArgs) -> anyhow::Result<()> {
    anyhow::bail!("not built yet (issue 5)")
}

pub async fn run_nested_tls(_args: NestedTlsArgs) -> anyhow::Result<()> {
    anyhow::bail!("not built yet (issue 5)")
}
