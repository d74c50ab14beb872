//! Load on the verifier service: N real provers at once (zero-knowledge
//! path, over TCP) against one service process and the HTTPS fixture, all on
//! loopback. Prints throughput, p50/p95 session time and the service's peak
//! resident memory (VmHWM of the service process, which runs as a child so
//! that the provers' memory is not counted).
//!
//! `cargo run --release -p webproof-service --example load -- --provers 50 [--path /json] [--ws]`
//! (`--ws`: the provers use the WebSocket endpoint instead of TCP).

#[path = "../tests/common/load.rs"]
mod load;

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    if args.get(1).map(String::as_str) == Some("--service") {
        // Child: run the service until stdin closes.
        let ca = arg(&args, "--ca").expect("--ca");
        let n: usize = arg(&args, "--max-sessions")
            .expect("--max-sessions")
            .parse()?;
        return rt.block_on(async move {
            let cfg = load::service_config(std::path::Path::new(&ca), n);
            let service = webproof_service::Service::bind(cfg.build()?).await?;
            let a = service.addrs();
            println!("{} {}", a.tcp.unwrap(), a.http.unwrap());
            let metrics = service.metrics();
            service
                .run(async {
                    let _ = tokio::task::spawn_blocking(|| {
                        let mut sink = Vec::new();
                        let _ = std::io::stdin().read_to_end(&mut sink);
                    })
                    .await;
                })
                .await;
            eprintln!(
                "service: {} verified, {} failed, {} refused",
                metrics.sessions(webproof_service::Outcome::Verified),
                metrics.sessions(webproof_service::Outcome::Failed),
                metrics.sessions(webproof_service::Outcome::Refused)
            );
            Ok(())
        });
    }
    let provers: usize = arg(&args, "--provers")
        .unwrap_or_else(|| "50".into())
        .parse()?;
    let path = arg(&args, "--path").unwrap_or_else(|| "/json".into());
    let ws = args.iter().any(|a| a == "--ws");
    rt.block_on(async move {
        let dir = tempfile::tempdir()?;
        let fixture = webproof_net::Fixture::start("127.0.0.1:0", dir.path(), &[]).await?;
        let mut child = Command::new(std::env::current_exe()?)
            .args(["--service", "--ca"])
            .arg(&fixture.certs.ca_path)
            .args(["--max-sessions", &provers.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        let pid = child.id().to_string();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line)?;
        let (tcp, http) = line
            .trim()
            .split_once(' ')
            .ok_or_else(|| anyhow::anyhow!("service said {line:?}"))?;
        let addr = if ws {
            format!("ws://{http}/v1/session")
        } else {
            tcp.to_string()
        };
        let base = load::peak_rss_kib(&pid);
        let report = load::run_provers(&addr, &fixture, provers, &path).await;
        let peak = load::peak_rss_kib(&pid);
        drop(child.stdin.take());
        child.wait()?;
        println!(
            "over {}: {}",
            if ws { "WebSocket" } else { "TCP" },
            report.summary()
        );
        if let (Some(b), Some(p)) = (base, peak) {
            println!(
                "service peak RSS {:.1} MiB (idle {:.1} MiB)",
                p as f64 / 1024.0,
                b as f64 / 1024.0
            );
        }
        for e in report.errors.iter().take(5) {
            println!("error: {e}");
        }
        anyhow::ensure!(
            report.errors.is_empty(),
            "{} provers failed",
            report.errors.len()
        );
        Ok(())
    })
}
