//! `webproof health`: probe a running service's `/health` (or `/ready`)
//! over plain HTTP and exit 0 when it answers 2xx, 1 otherwise.
//!
//! For container health checks: the runtime image carries no curl or wget,
//! so the binary probes itself. Plain `http://` only, which is what a
//! probe on the container's own loopback needs; the one request is written
//! by hand (HTTP/1.1, `Connection: close`) so the command pulls in no HTTP
//! client. Exit 1, not the other commands' classes: Docker reads any status
//! but 0 and 1 as reserved.

use anyhow::{bail, Context};
use clap::Args;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[derive(Args)]
pub struct HealthArgs {
    /// The endpoint to probe: http://HOST:PORT/PATH (/health for liveness,
    /// /ready for readiness).
    #[arg(long, default_value = "http://127.0.0.1:7080/health")]
    url: String,
    /// Give up after this many seconds (connect, request and answer).
    #[arg(long, default_value_t = 5.0)]
    timeout_secs: f64,
}

/// The most of the answer read: `/health`'s body is one short JSON object.
const MAX_ANSWER: u64 = 64 << 10;

/// Probe; print one line saying what was seen; 0 for 2xx, else 1.
pub async fn run(a: HealthArgs) -> std::process::ExitCode {
    let limit = if a.timeout_secs.is_finite() && a.timeout_secs > 0.0 {
        Duration::from_secs_f64(a.timeout_secs.min(3600.0))
    } else {
        eprintln!(
            "unhealthy: --timeout-secs {}: expected more than 0",
            a.timeout_secs
        );
        return std::process::ExitCode::from(1);
    };
    let outcome = match tokio::time::timeout(limit, probe(&a.url)).await {
        Ok(r) => r,
        Err(_) => Err(anyhow::anyhow!("{}: no answer within {:?}", a.url, limit)),
    };
    match outcome {
        Ok((status, body)) if (200..300).contains(&status) => {
            outln!("healthy: {} answered {status} {}", a.url, body.trim());
            std::process::ExitCode::SUCCESS
        }
        Ok((status, body)) => {
            eprintln!("unhealthy: {} answered {status} {}", a.url, body.trim());
            std::process::ExitCode::from(1)
        }
        Err(e) => {
            eprintln!("unhealthy: {e:#}");
            std::process::ExitCode::from(1)
        }
    }
}

/// `http://host[:port][/path]` split into the address to dial, the `Host`
/// header and the request target.
fn parse_url(url: &str) -> anyhow::Result<(String, String, String)> {
    let Some(rest) = url.strip_prefix("http://") else {
        bail!("{url}: expected an http:// URL (the probe speaks plain HTTP only)");
    };
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/health"),
    };
    if authority.is_empty() || authority.contains('@') {
        bail!("{url}: expected http://HOST:PORT/PATH");
    }
    // A bracketed IPv6 literal keeps its colons; the port follows `]`.
    let has_port = match authority.rfind(']') {
        Some(i) => authority[i..].contains(':'),
        None => authority.contains(':'),
    };
    let addr = if has_port {
        authority.to_string()
    } else {
        format!("{authority}:80")
    };
    if path.chars().any(|c| c.is_ascii_control() || c == ' ') {
        bail!("{url}: the path has spaces or control characters");
    }
    Ok((addr, authority.to_string(), path.to_string()))
}

/// One GET; the status code and the body as text.
async fn probe(url: &str) -> anyhow::Result<(u16, String)> {
    let (addr, host, path) = parse_url(url)?;
    let mut s = tokio::net::TcpStream::connect(addr.as_str())
        .await
        .with_context(|| format!("{url}: connect"))?;
    let req = format!(
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: webproof-health\r\nConnection: close\r\n\r\n"
    );
    s.write_all(req.as_bytes())
        .await
        .with_context(|| format!("{url}: send"))?;
    let mut answer = Vec::new();
    (&mut s)
        .take(MAX_ANSWER)
        .read_to_end(&mut answer)
        .await
        .with_context(|| format!("{url}: read"))?;
    parse_answer(&answer).with_context(|| format!("{url}: not an HTTP answer"))
}

/// The status code of an HTTP/1.x answer and its body (lossy text).
fn parse_answer(answer: &[u8]) -> anyhow::Result<(u16, String)> {
    let text = String::from_utf8_lossy(answer);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status_line = head.lines().next().unwrap_or("");
    let mut parts = status_line.split(' ');
    let version = parts.next().unwrap_or("");
    if !version.starts_with("HTTP/1.") {
        bail!("status line {status_line:?}");
    }
    let code = parts
        .next()
        .and_then(|c| c.parse::<u16>().ok())
        .filter(|c| (100..600).contains(c))
        .with_context(|| format!("status line {status_line:?}"))?;
    Ok((code, body.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_split_into_address_host_and_path() {
        assert_eq!(
            parse_url("http://127.0.0.1:7080/health").unwrap(),
            (
                "127.0.0.1:7080".into(),
                "127.0.0.1:7080".into(),
                "/health".into()
            )
        );
        assert_eq!(
            parse_url("http://localhost").unwrap(),
            ("localhost:80".into(), "localhost".into(), "/health".into())
        );
        assert_eq!(
            parse_url("http://[::1]:7080/ready").unwrap().0,
            "[::1]:7080"
        );
        assert_eq!(parse_url("http://[::1]/ready").unwrap().0, "[::1]:80");
        assert!(parse_url("https://127.0.0.1:7080/health").is_err());
        assert!(parse_url("127.0.0.1:7080").is_err());
        assert!(parse_url("http:///health").is_err());
        assert!(parse_url("http://a/he alth").is_err());
    }

    #[test]
    fn answers_give_their_status() {
        let (c, b) =
            parse_answer(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n{\"ok\":1}\n").unwrap();
        assert_eq!((c, b.as_str()), (200, "{\"ok\":1}\n"));
        assert_eq!(
            parse_answer(b"HTTP/1.1 503 Service Unavailable\r\n\r\n")
                .unwrap()
                .0,
            503
        );
        assert!(parse_answer(b"SSH-2.0-OpenSSH\r\n").is_err());
        assert!(parse_answer(b"HTTP/1.1 abc\r\n\r\n").is_err());
        assert!(parse_answer(b"").is_err());
    }
}
