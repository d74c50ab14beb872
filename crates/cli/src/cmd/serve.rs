//! `webproof serve`: the verifier service.
//!
//! Thin layer over `webproof-service`: read `--config FILE` (optional),
//! apply the flags over it, run. Prints exactly one JSON line on stdout when
//! ready (`{"event":"listening","addr":"IP:PORT",...}`: `addr` is the TCP
//! listener, else the TLS, HTTP or HTTPS one; `tcp_addr`, `tls_addr`,
//! `http_addr`, `https_addr` name each) and runs until SIGINT/SIGTERM, then stops
//! accepting and lets running sessions finish within the grace period;
//! logs go to stderr.
use super::proxy::shutdown_signal;
use anyhow::Context;
use clap::Args;
use std::path::PathBuf;
use std::str::FromStr;
use tracing::instrument::WithSubscriber;
use webproof_net::{IpNet, Verifier};
use webproof_service::config::{FileConfig, TlsListenConfig};
use webproof_service::{LogFormat, Service};

/// Used when neither the config file nor the flags name a listener.
const DEFAULT_LISTEN: &str = "127.0.0.1:7047";

#[derive(Args)]
pub struct ServeArgs {
    /// Configuration file (TOML; see crates/service/verifier.example.toml).
    /// Flags override it.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Address to listen on for provers over TCP (port 0: any free port)
    /// [default without --config: 127.0.0.1:7047].
    #[arg(long)]
    listen: Option<String>,
    /// Address for the TLS listener (tls://; needs --tls-cert and --tls-key).
    #[arg(long, value_name = "ADDR")]
    listen_tls: Option<String>,
    /// Address for the HTTPS listener (wss://; needs --tls-cert and --tls-key).
    #[arg(long, value_name = "ADDR")]
    listen_https: Option<String>,
    /// The service's certificate chain (PEM, leaf first).
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The service's private key (PEM).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Address for the HTTP listener: /health, /ready, /metrics, /v1/info,
    /// /v1/sessions/{id} (with a results table in the config), WebSocket
    /// /v1/session.
    #[arg(long, value_name = "ADDR")]
    listen_http: Option<String>,
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
    #[arg(long)]
    max_sent_bytes: Option<usize>,
    /// Most bytes the server may send in one session.
    #[arg(long)]
    max_recv_bytes: Option<usize>,
    /// Longest a relayed TLS session may last, in seconds.
    #[arg(long)]
    relay_timeout_secs: Option<f64>,
    /// Longest a whole session may last, in seconds.
    #[arg(long)]
    session_timeout_secs: Option<f64>,
    /// Sessions served at once; more provers are refused with a message.
    #[arg(long)]
    max_sessions: Option<usize>,
    /// MPC mode: the largest request (bytes) a prover may ask this verifier
    /// to garble tables for (default 4096, at most 16384).
    #[arg(long)]
    max_mpc_request_bytes: Option<usize>,
    /// On SIGINT/SIGTERM, how long running sessions may go on (seconds).
    #[arg(long)]
    shutdown_grace_secs: Option<f64>,
    /// On SIGINT/SIGTERM, how long /ready fails while new sessions are
    /// still accepted, before the listeners close (seconds; default 0):
    /// set it above the load balancer's health-check interval.
    #[arg(long)]
    drain_delay_secs: Option<f64>,
    /// Also allow connecting to servers in this network (CIDR or address),
    /// which the default policy refuses (loopback, private, link-local,
    /// metadata); repeatable. Names pinned with --resolve are always allowed.
    #[arg(long = "allow-net", value_name = "CIDR")]
    allow_nets: Vec<IpNet>,
    /// Refuse servers in this network even if public; repeatable.
    #[arg(long = "deny-net", value_name = "CIDR")]
    deny_nets: Vec<IpNet>,
    /// File with the API keys provers must present, one per line.
    #[arg(long, value_name = "FILE")]
    api_keys: Option<PathBuf>,
    /// Signing key for attestations (else WEBPROOF_SIGNING_KEY if set).
    #[arg(long, value_name = "FILE")]
    attestation_key: Option<PathBuf>,
    /// Keep verified sessions in this SQLite file (one replica; created if
    /// missing), for GET /v1/sessions/{id} and webhooks. Replaces the
    /// file's `[results]` backend.
    #[arg(long, value_name = "FILE", conflicts_with = "results_database_url_env")]
    results_db: Option<PathBuf>,
    /// Keep verified sessions in PostgreSQL (a fleet of replicas sharing
    /// it), at the URL this environment variable holds. The URL itself is
    /// not a flag: it carries a password, and flags show in `ps`.
    #[arg(long, value_name = "VAR")]
    results_database_url_env: Option<String>,
    /// How long stored results are kept: a number then s, m, h or d, e.g.
    /// 7d (the default).
    #[arg(long, value_name = "DURATION")]
    results_retention: Option<String>,
    /// File with the keys an application's backend presents to read
    /// /v1/sessions/{id}, one per line (not the provers' --api-keys).
    #[arg(long, value_name = "FILE")]
    results_api_keys: Option<PathBuf>,
    /// Log format on stderr: text or json.
    #[arg(long, value_name = "FORMAT", value_parser = LogFormat::from_str)]
    log_format: Option<LogFormat>,
    /// Read an API key on stdin, print the digest to put in
    /// `[api_keys] digests`, and exit.
    #[arg(long)]
    hash_api_key: bool,
    /// Serve one prover, print its verified output as JSON, and exit: over
    /// TCP (--listen), or over WebSocket at /v1/session when only
    /// --listen-http is given (the harness's browser target). It prints
    /// its `listening` line once it is ready to serve (the MPC plans built).
    #[arg(long)]
    once: bool,
}

fn secs(field: &str, v: f64) -> anyhow::Result<std::time::Duration> {
    anyhow::ensure!(
        v > 0.0 && v <= 7.0 * 86_400.0,
        "--{field} {v}: expected more than 0 and at most a week"
    );
    Ok(std::time::Duration::from_secs_f64(v))
}

/// The file (or defaults) with the flags applied.
fn file_config(a: &ServeArgs) -> anyhow::Result<FileConfig> {
    let mut c = match &a.config {
        Some(p) => FileConfig::load(p)?,
        None => FileConfig {
            base_dir: PathBuf::from("."),
            ..FileConfig::default()
        },
    };
    if let Some(l) = &a.listen {
        c.listen = Some(l.clone());
    }
    let cwd = std::env::current_dir()?;
    if let (Some(cert), Some(key)) = (&a.tls_cert, &a.tls_key) {
        let addr = a
            .listen_tls
            .clone()
            .or_else(|| c.listen_tls.as_ref().and_then(|t| t.addr.clone()));
        c.listen_tls = Some(TlsListenConfig {
            addr,
            cert: cwd.join(cert),
            key: cwd.join(key),
        });
    } else if let Some(addr) = &a.listen_tls {
        let t = c
            .listen_tls
            .as_mut()
            .context("--listen-tls needs --tls-cert and --tls-key (or [listen_tls] in the file)")?;
        t.addr = Some(addr.clone());
    }
    if let Some(l) = &a.listen_http {
        c.listen_http = Some(l.clone());
    }
    if let Some(l) = &a.listen_https {
        c.listen_https = Some(l.clone());
    }
    if a.config.is_none()
        && c.listen.is_none()
        && c.listen_tls
            .as_ref()
            .and_then(|t| t.addr.as_ref())
            .is_none()
        && c.listen_http.is_none()
        && c.listen_https.is_none()
    {
        c.listen = Some(DEFAULT_LISTEN.into());
    }
    if a.no_webpki_roots {
        c.roots.webpki = false;
    }
    c.roots
        .ca_certs
        .extend(a.ca_certs.iter().map(|p| cwd.join(p)));
    for r in &a.resolve {
        let (name, ip) = r
            .split_once('=')
            .with_context(|| format!("--resolve {r:?}: expected NAME=IP"))?;
        c.resolve.insert(
            name.to_ascii_lowercase(),
            ip.parse()
                .with_context(|| format!("--resolve {r:?}: bad IP"))?,
        );
    }
    let l = &mut c.limits;
    if let Some(v) = a.max_sent_bytes {
        l.max_sent_bytes = v;
    }
    if let Some(v) = a.max_recv_bytes {
        l.max_recv_bytes = v;
    }
    if let Some(v) = a.relay_timeout_secs {
        l.relay_timeout_secs = secs("relay-timeout-secs", v)?;
    }
    if let Some(v) = a.session_timeout_secs {
        l.session_timeout_secs = secs("session-timeout-secs", v)?;
    }
    if let Some(v) = a.shutdown_grace_secs {
        l.shutdown_grace_secs = secs("shutdown-grace-secs", v)?;
    }
    if let Some(v) = a.drain_delay_secs {
        l.drain_delay_secs = secs("drain-delay-secs", v)?;
    }
    if let Some(v) = a.max_sessions {
        l.max_sessions = v;
    }
    if let Some(v) = a.max_mpc_request_bytes {
        l.max_mpc_request_bytes = v;
    }
    c.policy.allow.extend(a.allow_nets.iter().copied());
    c.policy.deny.extend(a.deny_nets.iter().copied());
    if let Some(p) = &a.api_keys {
        c.api_keys.file = Some(cwd.join(p));
    }
    if let Some(p) = &a.attestation_key {
        c.attestation_key = Some(cwd.join(p));
    }
    if let Some(f) = a.log_format {
        c.log.format = f;
    }
    results_flags(a, &cwd, &mut c)?;
    Ok(c)
}

/// The `--results-*` flags over the file's `[results]`.
fn results_flags(a: &ServeArgs, cwd: &std::path::Path, c: &mut FileConfig) -> anyhow::Result<()> {
    let backend = a.results_db.is_some() || a.results_database_url_env.is_some();
    if !backend && c.results.is_none() {
        anyhow::ensure!(
            a.results_retention.is_none() && a.results_api_keys.is_none(),
            "--results-retention and --results-api-keys need somewhere to keep results: \
             --results-db FILE, --results-database-url-env VAR, or [results] in --config"
        );
        return Ok(());
    }
    let r = c.results.get_or_insert_with(Default::default);
    if backend {
        // Exactly one backend: the flag's replaces the file's.
        r.path = a.results_db.as_ref().map(|p| cwd.join(p));
        r.database_url = None;
        r.database_url_env = a.results_database_url_env.clone();
    }
    if let Some(v) = &a.results_retention {
        r.retention = v.clone();
    }
    if let Some(p) = &a.results_api_keys {
        r.api_keys.file = Some(cwd.join(p));
    }
    Ok(())
}

pub async fn run(a: ServeArgs) -> anyhow::Result<()> {
    if a.hash_api_key {
        let mut key = String::new();
        std::io::stdin().read_line(&mut key)?;
        let key = key.trim_end_matches(['\r', '\n']);
        anyhow::ensure!(!key.is_empty(), "no API key on stdin");
        let d = webproof_net::verifier::api_key_digest(key);
        outln!(
            "{}",
            d.iter().map(|b| format!("{b:02x}")).collect::<String>()
        );
        return Ok(());
    }
    let cfg = file_config(&a)?.build()?;
    let dispatch = webproof_service::logging::dispatch(&cfg.log)?;
    if a.once {
        // TCP when a TCP listener is named, else WebSocket on the HTTP one.
        let (listen, ws) = match (&cfg.listen, &cfg.listen_http) {
            (Some(l), _) => (l.clone(), false),
            (None, Some(h)) => (h.clone(), true),
            (None, None) => anyhow::bail!(
                "--once serves over TCP (--listen) or WebSocket (--listen-http): set one"
            ),
        };
        let v = Verifier::bind(&listen, cfg.verifier).await?;
        // The MPC key derivation's plans are built before the listening
        // line, so the session does not wait for them (about 0.1 s of its
        // preprocessing otherwise; the harness starts its prover on that
        // line), as `Service::bind` does for a service.
        tokio::task::spawn_blocking(webproof_net::mpc::warm_plans).await?;
        let addr = v.local_addr()?.to_string();
        let mut ready = serde_json::json!({"event": "listening", "addr": addr});
        if ws {
            ready["http_addr"] = addr.into();
        }
        outln!("{ready}");
        let out = if ws {
            v.serve_one_ws().with_subscriber(dispatch).await?
        } else {
            v.serve_one().with_subscriber(dispatch).await?
        };
        outln!("{}", serde_json::to_string(&out)?);
        return Ok(());
    }
    let service = Service::bind(cfg).with_subscriber(dispatch.clone()).await?;
    let addrs = service.addrs();
    let main = addrs
        .tcp
        .or(addrs.tls)
        .or(addrs.http)
        .or(addrs.https)
        .context("no listener")?;
    let mut ready = serde_json::json!({"event": "listening", "addr": main.to_string()});
    for (k, v) in [
        ("tcp_addr", addrs.tcp),
        ("tls_addr", addrs.tls),
        ("http_addr", addrs.http),
        ("https_addr", addrs.https),
    ] {
        if let Some(v) = v {
            ready[k] = v.to_string().into();
        }
    }
    let stop = shutdown_signal();
    outln!("{ready}");
    let report = service.run(stop).with_subscriber(dispatch).await;
    if report.dropped > 0 {
        eprintln!(
            "stopped: {} session(s) dropped at the end of the grace period",
            report.dropped
        );
    }
    Ok(())
}
