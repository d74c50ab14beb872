//! `webproof keygen | verify`: attestations and presentations.
use clap::Subcommand;

#[derive(Subcommand)]
pub enum AttestationCmd {
    /// Generate a verifier signing key.
    Keygen,
}

pub async fn run(_cmd: AttestationCmd) -> anyhow::Result<()> {
    anyhow::bail!("not built yet (issue 6)")
}
