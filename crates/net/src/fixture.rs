//! The HTTPS test fixture: a rustls server with its own test CA.
//!
//! Routes: `/bytes?size=N` (N bytes, at most 16 MiB), `/json` (a JSON
//! document), `/html` (a page), `/` (an index), all GET; `/echo` (any
//! method: a JSON document with the method and the body it got, which is
//! read by its `Content-Length`, at most 1 MiB). Any request header is
//! accepted, so a padding header (`X-Padding: aaaa...`) can bring the
//! request to a chosen size (request head up to 1 MiB). TLS 1.2 and 1.3,
//! every suite of the ring provider; ECDSA P-256 certificate.

use crate::{NetError, Result};
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
    KeyUsagePurpose,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// Largest request head the fixture reads.
pub const MAX_REQUEST_HEAD: usize = 1 << 20;
/// Largest `/bytes` response.
pub const MAX_BYTES: usize = 16 << 20;

/// The fixture's certificates, also written to disk.
#[derive(Clone)]
pub struct FixtureCerts {
    /// The CA certificate (PEM) to trust.
    pub ca_pem: String,
    /// Where `ca.pem` was written.
    pub ca_path: PathBuf,
    /// Server chain (leaf, CA).
    pub chain: Vec<CertificateDer<'static>>,
    /// Server key (PKCS#8 DER).
    pub key_der: Vec<u8>,
}

impl FixtureCerts {
    /// Generate a CA and a server certificate for `localhost`, `webproof.test`,
    /// `127.0.0.1` and `extra_sans`; write `ca.pem`, `cert.pem`, `key.pem` to `dir`.
    pub fn generate(dir: &Path, extra_sans: &[String]) -> Result<Self> {
        let e = |e: rcgen::Error| NetError::Setup(format!("certificate generation: {e}"));
        let ca_key = KeyPair::generate().map_err(e)?;
        let mut ca = CertificateParams::new(Vec::<String>::new()).map_err(e)?;
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.distinguished_name
            .push(DnType::CommonName, "webproof test CA");
        ca.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let ca_cert = ca.self_signed(&ca_key).map_err(e)?;
        let mut sans = vec![
            "localhost".to_string(),
            "webproof.test".to_string(),
            "127.0.0.1".to_string(),
        ];
        sans.extend(extra_sans.iter().cloned());
        let key = KeyPair::generate().map_err(e)?;
        let mut leaf = CertificateParams::new(sans).map_err(e)?;
        leaf.distinguished_name
            .push(DnType::CommonName, "webproof fixture");
        leaf.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let leaf_cert = leaf.signed_by(&key, &ca_cert, &ca_key).map_err(e)?;
        std::fs::create_dir_all(dir)
            .map_err(NetError::io(format!("creating {}", dir.display())))?;
        let ca_path = dir.join("ca.pem");
        let write = |p: PathBuf, s: &str| {
            std::fs::write(&p, s).map_err(NetError::io(format!("writing {}", p.display())))
        };
        write(ca_path.clone(), &ca_cert.pem())?;
        write(dir.join("cert.pem"), &(leaf_cert.pem() + &ca_cert.pem()))?;
        write(dir.join("key.pem"), &key.serialize_pem())?;
        Ok(FixtureCerts {
            ca_pem: ca_cert.pem(),
            ca_path,
            chain: vec![leaf_cert.der().clone(), ca_cert.der().clone()],
            key_der: key.serialize_der(),
        })
    }

    /// A rustls server configuration offering TLS 1.2 and 1.3.
    pub fn server_config(&self) -> Result<Arc<rustls::ServerConfig>> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let cfg = rustls::ServerConfig::builder_with_provider(provider)
            .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
            .map_err(|e| NetError::Setup(e.to_string()))?
            .with_no_client_auth()
            .with_single_cert(
                self.chain.clone(),
                PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(self.key_der.clone())),
            )
            .map_err(|e| NetError::Setup(e.to_string()))?;
        Ok(Arc::new(cfg))
    }
}

/// A running fixture.
pub struct Fixture {
    /// Where it listens.
    pub addr: std::net::SocketAddr,
    /// Its certificates.
    pub certs: FixtureCerts,
    task: tokio::task::JoinHandle<()>,
}

impl Fixture {
    /// Generate certificates into `dir` and serve on `listen`.
    pub async fn start(listen: &str, dir: &Path, extra_sans: &[String]) -> Result<Fixture> {
        let certs = FixtureCerts::generate(dir, extra_sans)?;
        let listener = TcpListener::bind(listen)
            .await
            .map_err(NetError::io(format!("binding {listen}")))?;
        let addr = listener
            .local_addr()
            .map_err(NetError::io("local address"))?;
        let acceptor = tokio_rustls::TlsAcceptor::from(certs.server_config()?);
        let task = tokio::spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    continue;
                };
                let _ = tcp.set_nodelay(true);
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    let r = tokio::time::timeout(Duration::from_secs(30), async {
                        let mut tls = acceptor.accept(tcp).await?;
                        serve(&mut tls).await?;
                        tls.shutdown().await
                    })
                    .await;
                    if let Ok(Err(e)) = r {
                        tracing::debug!("fixture connection: {e}");
                    }
                });
            }
        });
        Ok(Fixture { addr, certs, task })
    }

    /// Stop serving.
    pub fn stop(self) {
        self.task.abort();
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Requests of one connection, answered in turn (HTTP/1.1 keep-alive):
/// until a request asks for `Connection: close`, asks for `/close`, or the
/// client stops.
async fn serve<S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin>(
    s: &mut S,
) -> std::io::Result<()> {
    // Bytes read past the request just answered: the next one's start.
    let mut pending = Vec::new();
    while serve_one(s, &mut pending).await? {}
    Ok(())
}

/// Answer the next request; `false`: the connection ends.
async fn serve_one<S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin>(
    s: &mut S,
    pending: &mut Vec<u8>,
) -> std::io::Result<bool> {
    let mut head = std::mem::take(pending);
    let mut buf = [0u8; 16 << 10];
    let end = loop {
        if let Some(p) = head.windows(4).position(|w| w == b"\r\n\r\n") {
            break p;
        }
        if head.len() > MAX_REQUEST_HEAD {
            respond(s, 431, "text/plain", b"request head too large\n", true).await?;
            return Ok(false);
        }
        let n = s.read(&mut buf).await?;
        if n == 0 {
            return Ok(false);
        }
        head.extend_from_slice(&buf[..n]);
    };
    let close =
        head_field(&head[..end], "connection").is_some_and(|v| v.eq_ignore_ascii_case("close"));
    // Whatever follows this request's body is the next request's.
    let body_len = head_field(&head[..end], "content-length")
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(0);
    if head.len() > end + 4 + body_len {
        *pending = head.split_off(end + 4 + body_len);
    }
    let answered = answer(s, &head, end, body_len, close).await?;
    Ok(answered && !close)
}

/// Answer the request whose head ends at `end` of `head`; `false`: the
/// connection ends.
async fn answer<S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin>(
    s: &mut S,
    head: &[u8],
    end: usize,
    body_len: usize,
    close: bool,
) -> std::io::Result<bool> {
    let mut buf = [0u8; 16 << 10];
    let line = head[..end].split(|&b| b == b'\r').next().unwrap_or(b"");
    let line = String::from_utf8_lossy(line);
    let mut parts = line.split(' ');
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    if body_len > MAX_ECHO_BODY {
        respond(s, 400, "text/plain", b"body over 1 MiB\n", true).await?;
        return Ok(false);
    }
    // The body, read whole whatever the path (the next request follows it).
    let mut body = head[end + 4..].to_vec();
    while body.len() < body_len {
        let n = s.read(&mut buf).await?;
        if n == 0 {
            return Ok(false);
        }
        body.extend_from_slice(&buf[..n]);
    }
    body.truncate(body_len);
    // Every answer below: the connection stays open unless asked to close.
    macro_rules! reply {
        ($($arg:expr),* $(,)?) => {
            respond(s, $($arg),*, close)
        };
    }
    if path == "/unframed" {
        // A response without framing on a connection left open: it never
        // completes until the client gives up.
        s.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nno length\n")
            .await?;
        s.flush().await?;
        let _ = s.read(&mut buf).await;
        return Ok(false);
    }
    if path == "/close" {
        // A server that allows one request per connection.
        let r = self::respond(s, 200, "text/plain", b"closing\n", true).await;
        return r.map(|()| false);
    }
    let answered: std::io::Result<()> = async {
    if path == "/echo" {
        let doc = serde_json::json!({
            "method": method,
            "length": body_len,
            "body": String::from_utf8_lossy(&body),
        });
        return reply!(200, "application/json", doc.to_string().as_bytes()).await;
    }
    if method != "GET" {
        return reply!(
            405,
            "text/plain",
            b"only GET (and any method on /echo)\n",
        )
        .await;
    }
    match path {
        "/bytes" => {
            let size = query
                .split('&')
                .find_map(|kv| kv.strip_prefix("size="))
                .and_then(|v| v.parse::<usize>().ok());
            match size {
                Some(n) if n <= MAX_BYTES => {
                    let body: Vec<u8> = (0..n).map(|i| b'a' + (i % 26) as u8).collect();
                    reply!(200, "application/octet-stream", &body).await
                }
                _ => reply!(400, "text/plain", b"size must be 0..=16777216\n").await,
            }
        }
        "/json" => {
            let body = br#"{"account":{"id":"acct_7731","owner":"Ada Lovelace","balance":{"currency":"EUR","amount":1234.56}},"transactions":[{"id":1,"amount":-20.0,"memo":"coffee"},{"id":2,"amount":2500.0,"memo":"salary"}],"verified":true}"#;
            reply!(200, "application/json", body).await
        }
        "/html" => {
            let body = b"<!doctype html><html><head><title>webproof fixture</title></head><body><h1>Hello from the fixture</h1><p>Balance: <b>1234.56 EUR</b></p></body></html>\n";
            reply!(200, "text/html; charset=utf-8", body).await
        }
        "/" => {
            reply!(
                200,
                "text/plain",
                b"webproof fixture: /bytes?size=N /json /html /echo /close /unframed\n",
            )
            .await
        }
        _ => reply!(404, "text/plain", b"not found\n").await,
    }
    }
    .await;
    answered.map(|()| true)
}

/// Largest body `/echo` reads.
const MAX_ECHO_BODY: usize = 1 << 20;

/// The value of header `name` (lower case) in a request head.
fn head_field(head: &[u8], name: &str) -> Option<String> {
    String::from_utf8_lossy(head).lines().skip(1).find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.trim()
            .eq_ignore_ascii_case(name)
            .then(|| v.trim().to_string())
    })
}

/// Write a response; `close`: it is the connection's last.
async fn respond<S: tokio::io::AsyncWrite + Unpin>(
    s: &mut S,
    status: u16,
    ctype: &str,
    body: &[u8],
    close: bool,
) -> std::io::Result<()> {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        _ => "Request Header Fields Too Large",
    };
    let mut msg = format!(
        "HTTP/1.1 {status} {reason}\r\nServer: webproof-fixture\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\n{}\r\n",
        body.len(),
        if close { "Connection: close\r\n" } else { "" }
    )
    .into_bytes();
    msg.extend_from_slice(body);
    s.write_all(&msg).await?;
    s.flush().await
}
