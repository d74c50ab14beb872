//! The load driver shared by `tests/load.rs` and `examples/load.rs`: N real
//! provers (`webproof_net::prove` over TCP, zero-knowledge path) at once
//! against one service and the HTTPS fixture, all on loopback.

use std::time::{Duration, Instant};
use webproof_net::{Fixture, ProveOptions};
use webproof_service::config::{FileConfig, LimitsConfig, PolicyConfig, RootsConfig};

/// What a load run measured.
pub struct LoadReport {
    pub provers: usize,
    pub ok: usize,
    pub errors: Vec<String>,
    pub wall: Duration,
    /// Per-session times as the provers saw them, sorted.
    pub times: Vec<Duration>,
}

impl LoadReport {
    pub fn percentile(&self, p: f64) -> Duration {
        if self.times.is_empty() {
            return Duration::ZERO;
        }
        let i = ((self.times.len() as f64 - 1.0) * p).round() as usize;
        self.times[i]
    }
    pub fn throughput(&self) -> f64 {
        self.ok as f64 / self.wall.as_secs_f64()
    }
    pub fn summary(&self) -> String {
        format!(
            "{} provers: {} verified, {} failed in {:.2} s; {:.2} sessions/s; session time p50 {:.0} ms, p95 {:.0} ms, max {:.0} ms",
            self.provers,
            self.ok,
            self.errors.len(),
            self.wall.as_secs_f64(),
            self.throughput(),
            self.percentile(0.5).as_secs_f64() * 1e3,
            self.percentile(0.95).as_secs_f64() * 1e3,
            self.times.last().copied().unwrap_or_default().as_secs_f64() * 1e3,
        )
    }
}

/// A service configuration for a load run: room for every prover, generous
/// timeouts (everything shares two cores), loopback allowed.
pub fn service_config(fixture_ca: &std::path::Path, provers: usize) -> FileConfig {
    FileConfig {
        listen: Some("127.0.0.1:0".into()),
        listen_http: Some("127.0.0.1:0".into()),
        roots: RootsConfig {
            webpki: false,
            ca_certs: vec![fixture_ca.to_path_buf()],
        },
        policy: PolicyConfig {
            allow: vec!["127.0.0.0/8".parse().unwrap()],
            deny: vec![],
        },
        limits: LimitsConfig {
            max_sessions: provers.max(1),
            connect_timeout_secs: Duration::from_secs(60),
            proof_timeout_secs: Duration::from_secs(300),
            relay_timeout_secs: Duration::from_secs(120),
            idle_timeout_secs: Duration::from_secs(60),
            session_timeout_secs: Duration::from_secs(600),
            ..LimitsConfig::default()
        },
        base_dir: std::path::PathBuf::from("."),
        ..FileConfig::default()
    }
}

/// Run `provers` provers at once against the verifier at `verifier`.
pub async fn run_provers(
    verifier: &str,
    fixture: &Fixture,
    provers: usize,
    path: &str,
) -> LoadReport {
    let start = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..provers {
        let mut o = ProveOptions::new(
            verifier,
            &format!("https://localhost:{}{path}", fixture.addr.port()),
        )
        .unwrap();
        o.ca_pems.push(fixture.certs.ca_pem.as_bytes().to_vec());
        o.timeout = Duration::from_secs(600);
        tasks.push(tokio::spawn(async move {
            let t = Instant::now();
            webproof_net::prove(&o).await.map(|_| t.elapsed())
        }));
    }
    let mut times = Vec::new();
    let mut errors = Vec::new();
    for t in tasks {
        match t.await {
            Ok(Ok(d)) => times.push(d),
            Ok(Err(e)) => errors.push(e.to_string()),
            Err(e) => errors.push(format!("prover task: {e}")),
        }
    }
    let wall = start.elapsed();
    times.sort();
    LoadReport {
        provers,
        ok: times.len(),
        errors,
        wall,
        times,
    }
}

/// Peak resident memory (VmHWM, KiB) of a process, from /proc.
pub fn peak_rss_kib(pid: &str) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    s.lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}
