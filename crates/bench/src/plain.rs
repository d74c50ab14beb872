//! The harness's own worker roles: an HTTPS fixture server and a plain TLS
//! client, run as separate processes (hidden `webproof bench` subcommands).
//!
//! Plain mode sends the bench's request over ordinary TLS with no proof, so
//! every table has the floor that the network alone imposes. Both speak the
//! same process contract as `webproof fixture` / `webproof prove`: a JSON
//! ready line from the server, a JSON stats object from the client. The
//! server also prints one `{"event":"session",...}` line per connection with
//! what it negotiated and how many bytes it read and wrote, so the harness
//! labels every implementation from the server's side.

use anyhow::{bail, Context};
use clap::Args;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context as TaskCx, Poll};
use std::time::Instant;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};

/// Largest request head the fixture accepts.
const MAX_HEAD: usize = 64 * 1024;
/// Largest body the fixture serves.
pub const MAX_BODY: usize = 1 << 30;

/// Arguments of the fixture server.
#[derive(Args, Debug, Clone)]
pub struct FixtureArgs {
    /// Address to listen on.
    #[arg(long)]
    pub listen: SocketAddr,
    /// DNS name in the server certificate.
    #[arg(long, default_value = "server.test")]
    pub san: String,
    /// Directory for the CA certificate (default: a temp dir).
    #[arg(long)]
    pub dir: Option<PathBuf>,
}

/// Arguments of the plain client.
#[derive(Args, Debug, Clone)]
pub struct ClientArgs {
    /// URL to fetch (https://NAME:PORT/path).
    #[arg(long)]
    pub url: String,
    /// Connect to this address instead of resolving NAME.
    #[arg(long)]
    pub connect: SocketAddr,
    /// Extra request header, `Name: value` (repeatable).
    #[arg(short = 'H', long = "header")]
    pub headers: Vec<String>,
    /// PEM file with the CA certificate to trust.
    #[arg(long)]
    pub ca_cert: PathBuf,
    /// TLS version: 1.2, 1.3 or any.
    #[arg(long, default_value = "any")]
    pub tls: String,
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Serve `GET /bytes?size=N` until killed.
pub async fn fixture_main(args: FixtureArgs) -> anyhow::Result<()> {
    let ca_key = rcgen::KeyPair::generate()?;
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new())?;
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "webproof bench CA");
    let ca = ca_params.self_signed(&ca_key)?;
    let key = rcgen::KeyPair::generate()?;
    let params = rcgen::CertificateParams::new(vec![args.san.clone()])?;
    let cert = params.signed_by(&key, &ca, &ca_key)?;

    let dir = match args.dir {
        Some(d) => d,
        None => std::env::temp_dir().join(format!("wpb-fixture-{}", std::process::id())),
    };
    std::fs::create_dir_all(&dir).with_context(|| format!("create {}", dir.display()))?;
    let ca_path = dir.join("ca.pem");
    std::fs::write(&ca_path, ca.pem()).with_context(|| format!("write {}", ca_path.display()))?;

    let chain = vec![
        CertificateDer::from(cert.der().to_vec()),
        CertificateDer::from(ca.der().to_vec()),
    ];
    let key = PrivateKeyDer::try_from(key.serialize_der()).map_err(|e| anyhow::anyhow!(e))?;
    let config = rustls::ServerConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])?
        .with_no_client_auth()
        .with_single_cert(chain, key)?;
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("listen on {}", args.listen))?;
    let addr = listener.local_addr()?;
    println!(
        "{}",
        serde_json::json!({"event": "listening", "addr": addr.to_string(), "ca_cert": ca_path})
    );
    loop {
        let (tcp, _) = listener.accept().await?;
        let acceptor = acceptor.clone();
        tokio::spawn(async move {
            let _ = tcp.set_nodelay(true);
            match acceptor.accept(tcp).await {
                Ok(tls) => {
                    let (_, conn) = tls.get_ref();
                    let version = version_label(conn.protocol_version());
                    let suite = conn
                        .negotiated_cipher_suite()
                        .map(|s| format!("{:?}", s.suite()))
                        .unwrap_or_default();
                    let mut counts = (0, 0);
                    if let Err(e) = serve_one(tls, &mut counts).await {
                        tracing::debug!("fixture: {e:#}");
                    }
                    println!(
                        "{}",
                        serde_json::json!({
                            "event": "session",
                            "tls_version": version,
                            "suite": suite,
                            "request_bytes": counts.0,
                            "response_bytes": counts.1,
                        })
                    );
                }
                Err(e) => println!(
                    "{}",
                    serde_json::json!({"event": "session", "error": format!("handshake: {e}")})
                ),
            }
        });
    }
}

fn version_label(v: Option<rustls::ProtocolVersion>) -> String {
    match v {
        Some(rustls::ProtocolVersion::TLSv1_3) => "1.3".to_string(),
        Some(rustls::ProtocolVersion::TLSv1_2) => "1.2".to_string(),
        Some(v) => format!("{v:?}"),
        None => String::new(),
    }
}

/// Status line and headers the fixture sends before a `size`-byte body.
pub fn response_head(size: usize) -> String {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: {size}\r\nConnection: close\r\n\r\n"
    )
}

/// A parsed request head.
#[derive(Debug, PartialEq, Eq)]
pub struct RequestHead {
    pub method: String,
    pub path: String,
    pub size: Option<usize>,
}

/// Parse an HTTP/1.1 request head (up to the blank line). Bounded, never
/// panics on malformed input.
pub fn parse_request_head(head: &[u8]) -> anyhow::Result<RequestHead> {
    let text = std::str::from_utf8(head).context("request head is not UTF-8")?;
    let line = text.lines().next().context("empty request")?;
    let mut parts = line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        bail!("malformed request line");
    };
    if !version.starts_with("HTTP/1.") {
        bail!("unsupported HTTP version `{version}`");
    }
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let mut size = None;
    for kv in query.split('&') {
        if let Some(v) = kv.strip_prefix("size=") {
            let n: usize = v.parse().context("size is not a number")?;
            if n > MAX_BODY {
                bail!("size {n} exceeds {MAX_BODY}");
            }
            size = Some(n);
        }
    }
    Ok(RequestHead {
        method: method.to_string(),
        path: path.to_string(),
        size,
    })
}

/// Serve one request; `counts` gets the bytes read and written (plaintext).
async fn serve_one<S: AsyncRead + AsyncWrite + Unpin>(
    mut s: S,
    counts: &mut (usize, usize),
) -> anyhow::Result<()> {
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    let end = loop {
        let n = s.read(&mut buf).await?;
        if n == 0 {
            bail!("connection closed before the request head ended");
        }
        head.extend_from_slice(&buf[..n]);
        counts.0 = head.len();
        if let Some(p) = head.windows(4).position(|w| w == b"\r\n\r\n") {
            break p;
        }
        if head.len() > MAX_HEAD {
            s.write_all(b"HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\nContent-Length: 0\r\n\r\n").await?;
            bail!("request head over {MAX_HEAD} bytes");
        }
    };
    let req = match parse_request_head(&head[..end]) {
        Ok(r) if r.method == "GET" && r.path == "/bytes" => r,
        Ok(_) | Err(_) => {
            s.write_all(
                b"HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
            )
            .await?;
            s.shutdown().await?;
            return Ok(());
        }
    };
    let size = req.size.unwrap_or(0);
    let hdr = response_head(size);
    s.write_all(hdr.as_bytes()).await?;
    counts.1 = hdr.len();
    // A fixed, printable body; deterministic so runs are comparable.
    let chunk: Vec<u8> = (0..16 * 1024).map(|i| b'a' + (i % 26) as u8).collect();
    let mut left = size;
    while left > 0 {
        let n = left.min(chunk.len());
        s.write_all(&chunk[..n]).await?;
        counts.1 += n;
        left -= n;
    }
    s.flush().await?;
    s.shutdown().await?;
    Ok(())
}

/// A transport wrapper that counts bytes each way.
struct Counted<S> {
    inner: S,
    up: Arc<AtomicU64>,
    down: Arc<AtomicU64>,
}

impl<S: AsyncRead + Unpin> AsyncRead for Counted<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut TaskCx<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.inner).poll_read(cx, buf);
        let n = buf.filled().len() - before;
        self.down.fetch_add(n as u64, Ordering::Relaxed);
        r
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Counted<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut TaskCx<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = &r {
            self.up.fetch_add(*n as u64, Ordering::Relaxed);
        }
        r
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut TaskCx<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut TaskCx<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// Split `https://NAME:PORT/path?query` into (name, path-and-query).
pub fn split_url(url: &str) -> anyhow::Result<(String, String)> {
    let rest = url
        .strip_prefix("https://")
        .context("URL must start with https://")?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let host = authority
        .rsplit_once(':')
        .map(|(h, _)| h)
        .unwrap_or(authority);
    if host.is_empty() {
        bail!("URL has no host");
    }
    Ok((host.to_string(), path.to_string()))
}

/// Fetch the URL over plain TLS and print the stats object on stdout.
pub async fn client_main(args: ClientArgs) -> anyhow::Result<()> {
    let (host, path) = split_url(&args.url)?;
    let pem =
        std::fs::read(&args.ca_cert).with_context(|| format!("read {}", args.ca_cert.display()))?;
    let mut roots = rustls::RootCertStore::empty();
    for c in rustls_pki_types::pem::PemObject::pem_slice_iter(&pem) {
        let c: CertificateDer<'static> = c.context("parse CA PEM")?;
        roots.add(c)?;
    }
    let versions: &[&rustls::SupportedProtocolVersion] = match args.tls.as_str() {
        "1.2" => &[&rustls::version::TLS12],
        "1.3" => &[&rustls::version::TLS13],
        "any" => &[&rustls::version::TLS13, &rustls::version::TLS12],
        other => bail!("unknown TLS version `{other}`"),
    };
    let config = rustls::ClientConfig::builder_with_provider(provider())
        .with_protocol_versions(versions)?
        .with_root_certificates(roots)
        .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let name = ServerName::try_from(host.clone())?;

    // The Host header names the port, as HTTP clients do for a non-default
    // port: this is the contract's request template.
    let authority = args
        .url
        .trim_start_matches("https://")
        .split('/')
        .next()
        .unwrap_or(&host)
        .to_string();
    let mut request = format!("GET {path} HTTP/1.1\r\nHost: {authority}\r\n");
    for h in &args.headers {
        if h.contains('\r') || h.contains('\n') || !h.contains(':') {
            bail!("header `{h}` must be `Name: value` on one line");
        }
        request.push_str(h);
        request.push_str("\r\n");
    }
    request.push_str("Connection: close\r\n\r\n");

    let up = Arc::new(AtomicU64::new(0));
    let down = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let tcp = tokio::net::TcpStream::connect(args.connect)
        .await
        .with_context(|| format!("connect to {}", args.connect))?;
    tcp.set_nodelay(true)?;
    let counted = Counted {
        inner: tcp,
        up: up.clone(),
        down: down.clone(),
    };
    let mut tls = connector
        .connect(name, counted)
        .await
        .context("TLS handshake")?;
    tls.write_all(request.as_bytes()).await?;
    tls.flush().await?;
    let mut response = Vec::new();
    // rustls reports a missing close_notify as an error; the body length
    // check below is what matters.
    let _ = tls.read_to_end(&mut response).await;
    let elapsed = start.elapsed().as_secs_f64() * 1e3;
    let (_, conn) = tls.get_ref();
    let version = version_label(conn.protocol_version());
    let suite = conn
        .negotiated_cipher_suite()
        .map(|s| format!("{:?}", s.suite()))
        .unwrap_or_default();
    let head_end = response
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .context("response has no complete head")?;
    let head = std::str::from_utf8(&response[..head_end]).context("response head not UTF-8")?;
    if !head.starts_with("HTTP/1.1 200") {
        bail!("server answered `{}`", head.lines().next().unwrap_or(""));
    }
    let body_len = response.len() - head_end - 4;
    let expected = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-length:")
                .map(|v| v.trim().to_string())
        })
        .and_then(|v| v.parse::<usize>().ok());
    if let Some(n) = expected {
        if n != body_len {
            bail!("body truncated: {body_len} of {n} bytes");
        }
    }
    println!(
        "{}",
        serde_json::json!({
            "stats": {
                "time_preprocess_ms": 0.0,
                "time_online_ms": elapsed,
                "time_total_ms": elapsed,
                "uploaded_preprocess": 0,
                "downloaded_preprocess": 0,
                "uploaded_online": up.load(Ordering::Relaxed),
                "downloaded_online": down.load(Ordering::Relaxed),
            },
            "tls_version": version,
            "suite": suite,
            "request_bytes": request.len(),
            "response_body_bytes": body_len,
        })
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_heads_parse_or_fail_cleanly() {
        let r = parse_request_head(b"GET /bytes?size=2048 HTTP/1.1\r\nHost: x").unwrap();
        assert_eq!(r.size, Some(2048));
        assert_eq!(r.path, "/bytes");
        for bad in [
            &b""[..],
            b"GET",
            b"GET /bytes HTTP/2 extra",
            b"GET /bytes?size=abc HTTP/1.1",
            b"GET /bytes?size=99999999999999 HTTP/1.1",
            b"\xff\xfe HTTP/1.1",
            b"GET /bytes SPDY/3",
        ] {
            assert!(parse_request_head(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn urls_split() {
        assert_eq!(
            split_url("https://server.test:8443/bytes?size=1").unwrap(),
            ("server.test".into(), "/bytes?size=1".into())
        );
        assert!(split_url("http://x/").is_err());
        assert!(split_url("https://:1/").is_err());
    }
}
