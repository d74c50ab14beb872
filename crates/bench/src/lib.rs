//! webproof's benchmark harness.
//!
//! The harness owns everything around a benchmark run and nothing of the
//! protocol: it builds an emulated network ([`topology`], [`emu`]), checks it
//! ([`probe`]), runs the server fixture, the verifier and the prover as
//! separate processes in their namespaces ([`runner`], [`proc`]), and writes
//! the samples as CSV ([`metrics`]). Configs are data (TOML, [`config`]);
//! results are data too: their rows, charts and Markdown reports are
//! `webproof-bench-report`'s, made from the CSV only.
//!
//! The browser target (the WebAssembly prover in headless chromium) is
//! [`browser`].
//!
//! Its own small worker roles — a plain TLS client and an HTTPS fixture —
//! live in [`plain`]. The system probes every benchmark shares (memory,
//! thread CPU time, interface counters) are `webproof_zk_bench::sys`; the
//! benchmark of the ZK engine on its own (`webproof bench zk`) is that
//! crate's.

pub mod browser;
pub mod config;
pub mod contract;
pub mod emu;
pub mod metrics;
pub mod netns;
pub mod plain;
pub mod probe;
pub mod proc;
pub mod runner;
pub mod topology;

/// The harness's internal roles, run as separate processes. Hidden in the
/// CLI: users do not call them.
#[derive(clap::Subcommand, Debug, Clone)]
pub enum InternalCmd {
    /// HTTPS fixture: serves `GET /bytes?size=N` (internal).
    #[command(name = "fixture-server", hide = true)]
    FixtureServer(plain::FixtureArgs),
    /// Plain TLS client: one request, prints stats JSON (internal).
    #[command(name = "plain-client", hide = true)]
    PlainClient(plain::ClientArgs),
}

/// Run an internal role.
pub async fn run_internal(cmd: InternalCmd) -> anyhow::Result<()> {
    match cmd {
        InternalCmd::FixtureServer(a) => plain::fixture_main(a).await,
        InternalCmd::PlainClient(a) => plain::client_main(a).await,
    }
}
