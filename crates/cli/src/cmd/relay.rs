//! `webproof relay`: the WebSocket-to-TCP relay a prover in a web page uses
//! to reach a server itself (`webproof_net::relay`).
//!
//! Prints one JSON line on stdout when ready
//! (`{"event":"listening","addr":"IP:PORT","metrics_addr":...}`) and runs
//! until SIGINT/SIGTERM; one log line per connection goes to stderr.
use super::proxy::shutdown_signal;
use anyhow::Context;
use clap::Args;
use std::time::Duration;
use webproof_net::relay::{Relay, RelayConfig, Target, RELAY_PATH};
use webproof_net::ServerPolicy;

use crate::failure::usage;

#[derive(Args)]
pub struct RelayArgs {
    /// Address to listen on for WebSocket clients (port 0: any free port).
    #[arg(long, default_value = "127.0.0.1:7048")]
    listen: String,
    /// Address for GET /metrics (Prometheus); keep it on the operator's
    /// network.
    #[arg(long, value_name = "ADDR")]
    metrics_listen: Option<String>,
    /// A target clients may reach: HOST:PORT, *.DOMAIN:PORT, or *:PORT
    /// (any public host); repeatable, at least one.
    #[arg(long = "allow", value_name = "HOST:PORT", required = true)]
    allow: Vec<String>,
    /// Also reach loopback, private and other special-purpose addresses
    /// (tests and local setups; a public relay must not).
    #[arg(long)]
    allow_private: bool,
    /// A web origin allowed to open the relay (`https://app.example`);
    /// repeatable. None: any page may (and native clients, which send no
    /// Origin).
    #[arg(long = "origin", value_name = "ORIGIN")]
    origins: Vec<String>,
    /// Connections relayed at once; more are answered 503.
    #[arg(long, default_value_t = 256)]
    max_connections: usize,
    /// Bytes one connection may move, both directions together.
    #[arg(long, default_value_t = 64 << 20)]
    max_bytes: u64,
    /// Close a connection with no bytes either way for this many seconds.
    #[arg(long, default_value_t = 60)]
    idle_timeout_secs: u64,
    /// Close a connection after this many seconds, whatever it does.
    #[arg(long, default_value_t = 600)]
    max_duration_secs: u64,
    /// Connect NAME to IP instead of resolving it; repeatable. A name
    /// pinned here is trusted as configured (the address policy is not
    /// applied to it), as `webproof serve --resolve`.
    #[arg(long = "resolve", value_name = "NAME=IP")]
    resolve: Vec<String>,
}

pub async fn run(a: RelayArgs) -> anyhow::Result<()> {
    let targets = a
        .allow
        .iter()
        .map(|t| {
            t.parse::<Target>()
                .map_err(|e| usage(anyhow::anyhow!("--allow {e}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    if a.max_connections == 0 {
        return Err(usage(anyhow::anyhow!(
            "--max-connections must be at least 1"
        )));
    }
    let mut resolve = std::collections::HashMap::new();
    for r in &a.resolve {
        let (name, ip) = r
            .split_once('=')
            .ok_or_else(|| usage(anyhow::anyhow!("--resolve {r:?}: expected NAME=IP")))?;
        let ip = ip.parse().map_err(|_| {
            usage(anyhow::anyhow!(
                "--resolve {r:?}: {ip:?} is not an IP address"
            ))
        })?;
        resolve.insert(name.to_ascii_lowercase(), ip);
    }
    let cfg = RelayConfig {
        targets,
        resolve,
        policy: if a.allow_private {
            ServerPolicy::allow_all()
        } else {
            ServerPolicy::public_only()
        },
        origins: a.origins,
        max_connections: a.max_connections,
        max_bytes: a.max_bytes,
        idle_timeout: Duration::from_secs(a.idle_timeout_secs.max(1)),
        max_duration: Duration::from_secs(a.max_duration_secs.max(1)),
    };
    let relay = Relay::bind(&a.listen, a.metrics_listen.as_deref(), cfg)
        .await
        .with_context(|| format!("binding the relay at {}", a.listen))?;
    let addr = relay.local_addr()?;
    let stop = shutdown_signal();
    outln!(
        "{}",
        serde_json::json!({
            "event": "listening",
            "addr": addr.to_string(),
            "path": RELAY_PATH,
            "metrics_addr": relay.metrics_addr().map(|m| m.to_string()),
        })
    );
    relay.run(stop).await;
    Ok(())
}
