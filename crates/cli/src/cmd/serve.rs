//! `webproof serve`: the verifier service.
//!
//! Thin layer: parse arguments, run `webproof-net`'s verifier, print. Prints
//! exactly one JSON line on stdout when ready
//! (`{"event":"listening","addr":"IP:PORT"}`) and runs until SIGINT/SIGTERM;
//! session logs go to stderr.
use super::proxy::{load_roots, shutdown_signal};
use anyhow::Context;
use clap::Args;
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;
use webproof_net::{IpNet, ServerPolicy, Verifier, VerifierConfig};
use webproof_proxy::RecorderLimits;

#[derive(Args)]
pub struct ServeArgs {
    /// Address to listen on for provers (port 0: any free port).
    #[arg(long, default_value = "127.0.0.1:7047")]
    listen: String,
    /// Extra trusted root certificate (PEM file); repeatable.
    #[arg(long = "ca-cert")]
    ca_certs: Vec<PathBuf>,
    /// Trust only --ca-cert roots, not the built-in webpki roots.
    #[arg(long)]
    no_webpki_roots: bool,
    /// Connect NAME to IP instead of resolving it; repeatable.
    #[arg(long = "resolve", value_name = "NAME=IP")]
    resolve: Vec<String>,
    /// Most bytes the client may send in one session.
    #[arg(long, default_value_t = RecorderLimits::default().max_sent_bytes)]
    max_sent_bytes: usize,
    /// Most bytes the server may send in one session.
    #[arg(long, default_value_t = RecorderLimits::default().max_recv_bytes)]
    max_recv_bytes: usize,
    /// Longest a relayed TLS session may last, in seconds.
    #[arg(long, default_value_t = 60)]
    relay_timeout_secs: u64,
    /// Also allow connecting to servers in this network (CIDR or address),
    /// which the default policy refuses (loopback, private, link-local,
    /// metadata); repeatable. Names pinned with --resolve are always allowed.
    #[arg(long = "allow-net", value_name = "CIDR")]
    allow_nets: Vec<IpNet>,
    /// File with the API keys provers must present, one per line.
    #[arg(long, value_name = "FILE")]
    api_keys: Option<PathBuf>,
    /// Serve one prover, print its verified output as JSON, and exit.
    #[arg(long)]
    once: bool,
}

pub async fn run(a: ServeArgs) -> anyhow::Result<()> {
    let mut resolve = HashMap::new();
    for r in &a.resolve {
        let (name, ip) = r
            .split_once('=')
            .with_context(|| format!("--resolve {r:?}: expected NAME=IP"))?;
        resolve.insert(
            name.to_ascii_lowercase(),
            ip.parse()
                .with_context(|| format!("--resolve {r:?}: bad IP"))?,
        );
    }
    let mut cfg = VerifierConfig {
        roots: load_roots(&a.ca_certs, !a.no_webpki_roots)?,
        resolve,
        limits: RecorderLimits {
            max_sent_bytes: a.max_sent_bytes,
            max_recv_bytes: a.max_recv_bytes,
            ..RecorderLimits::default()
        },
        relay_timeout: Duration::from_secs(a.relay_timeout_secs),
        server_policy: ServerPolicy::public_only().allow(a.allow_nets.iter().copied()),
        ..VerifierConfig::default()
    };
    if let Some(path) = &a.api_keys {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading API keys from {}", path.display()))?;
        let mut cfg_keys = 0;
        for line in text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
        {
            cfg.require_api_key(line);
            cfg_keys += 1;
        }
        anyhow::ensure!(cfg_keys > 0, "{} holds no API key", path.display());
    }
    let v = Verifier::bind(&a.listen, cfg).await?;
    println!(
        "{}",
        serde_json::json!({"event": "listening", "addr": v.local_addr()?.to_string()})
    );
    if a.once {
        let out = v.serve_one().await?;
        println!("{}", serde_json::to_string(&out)?);
        return Ok(());
    }
    tokio::select! {
        _ = v.run(|peer, r| match r {
            Ok(o) => eprintln!("verified session from {peer}: {} {} {} bytes sent, {} received", o.server_name, o.cipher_suite, o.sent.len, o.received.len),
            Err(e) => eprintln!("session from {peer} failed: {e}"),
        }) => {}
        _ = shutdown_signal() => {}
    }
    Ok(())
}
