//! `webproof bench ...`: dispatch to the harness, the ZK engine bench and the
//! attested-TLS workloads.

use super::{attested, harness};
use clap::{Args, Subcommand};
use webproof_zk_bench::zkbench;

#[derive(Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct BenchArgs {
    #[command(subcommand)]
    pub command: Option<BenchCmd>,
    /// Run the network benchmark harness (when no subcommand is given).
    #[command(flatten)]
    pub run: harness::RunArgs,
}

#[derive(Subcommand)]
pub enum BenchCmd {
    /// Benchmark the ZK engine: silent COT and QuickSilver on AES/SHA circuits.
    Zk(zkbench::ZkBenchArgs),
    /// Benchmark Intel TDX DCAP quote verification and generation.
    Dcap(attested::DcapArgs),
    /// Benchmark TLS inside TLS against single TLS.
    NestedTls(attested::NestedTlsArgs),
    #[command(flatten)]
    Harness(harness::HarnessCmd),
}

pub async fn run(args: BenchArgs) -> anyhow::Result<()> {
    match args.command {
        None => harness::run_bench(args.run).await,
        Some(BenchCmd::Zk(a)) => zkbench::run(a).await,
        Some(BenchCmd::Dcap(a)) => attested::run_dcap(a).await,
        Some(BenchCmd::NestedTls(a)) => attested::run_nested_tls(a).await,
        Some(BenchCmd::Harness(c)) => harness::run(c).await,
    }
}
