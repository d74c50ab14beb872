//! What the two-party tests on the simulated runtime share: the `Pair` (a
//! prover and a verifier on one simulated link, with an in-memory rustls
//! server behind a connector) and the server's behaviours.
//!
//! Both parties run `webproof_session`'s real runs, as `webproof serve`
//! and `webproof prove` do on tokio; only the runtime differs.
#![allow(dead_code)]

use futures::io::{AsyncReadExt, AsyncWriteExt};
use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use std::io::{Read, Write};
use std::sync::Arc;
use std::time::Duration;
use webproof_disclosure::attest::AttestOptions;
use webproof_disclosure::http::RevealItem;
use webproof_proxy::protocol::SessionId;
use webproof_proxy::session::prover::ProverConfig;
use webproof_proxy::RootStore;
use webproof_session::prover::ProveOutcome;
use webproof_session::proxy::prover::TlsOptions;
use webproof_session::sim::{Hold, LinkFaults, Sim, SimLink};
use webproof_session::verifier::{verify, Verified, VerifierConfig};
use webproof_session::{Connector, Mode, Result, Runtime};

pub const HOST: &str = "server.test";
/// The server's address, a name its certificate holds too.
pub const IP: &str = "127.0.0.1";
pub const BODY: &str = r#"{"account":{"id":"acct_42","balance":1234},"owner":"Ada"}"#;
/// 2026-12-01: inside the certificates' validity.
pub const UNIX_START: u64 = 1_796_083_200;

/// The server's certificate chain and key, and its CA's PEM.
pub struct Certs {
    pub ca_pem: String,
    pub chain: Vec<rustls::pki_types::CertificateDer<'static>>,
    pub key_der: Vec<u8>,
}

pub fn certs() -> Certs {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let key = KeyPair::generate().unwrap();
    let leaf = CertificateParams::new(vec![HOST.to_string(), IP.to_string()]).unwrap();
    let leaf_cert = leaf.signed_by(&key, &ca_cert, &ca_key).unwrap();
    Certs {
        ca_pem: ca_cert.pem(),
        chain: vec![leaf_cert.der().clone(), ca_cert.der().clone()],
        key_der: key.serialize_der(),
    }
}

pub fn roots(pem: &str) -> RootStore {
    let mut r = RootStore::empty();
    r.add_pem(pem.as_bytes()).unwrap();
    r
}

/// How the in-memory server behaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Server {
    /// Answers each request with `BODY` (keep-alive), and closes after
    /// one that says `Connection: close`.
    Answers,
    /// Completes the handshake, then never answers.
    Silent,
    /// Answers a byte every 10 s, forever.
    Trickles,
    /// Answers the first request and closes, whatever is queued.
    ClosesAfterFirst,
    /// Answers the first request without framing (no `Content-Length`,
    /// not chunked) and leaves the connection open: the response never
    /// ends.
    Unframed,
    /// Answers each request with a body of this many bytes (`a` to `z`,
    /// over and over), as `Answers` otherwise.
    Bytes(usize),
    /// Not TLS: reads the client's first bytes, writes these and closes.
    Raw(&'static [u8]),
}

/// The server connector of both modes: each connection is a simulated
/// link to a rustls server task.
pub struct SimServer {
    sim: Sim,
    config: Arc<rustls::ServerConfig>,
    delay: Duration,
    behaviour: Server,
    /// Set when the server closes a connection that carried a request.
    closed: Hold,
}

impl Connector for SimServer {
    type Conn = SimLink;

    async fn connect(&self, host: &str, _port: u16) -> Result<SimLink> {
        // Every name leads to the one server, as a verifier's `resolve`
        // pin would: whether the name is the server's is for TLS to say.
        let _ = host;
        let (client, server) = self.sim.link(self.delay, LinkFaults::default());
        let (sim, config, behaviour) = (self.sim.clone(), self.config.clone(), self.behaviour);
        let closed = self.closed.clone();
        // Not a `Task`: the server runs on after this call, to its close.
        self.sim.spawn_boxed(Box::pin(async move {
            // A connection that carried no request (the MPC prover's probe
            // of the server's version) is not the session's close.
            if serve(sim, server, config, behaviour).await {
                closed.set();
            }
        }));
        Ok(client)
    }
}

/// The complete requests in `buf`, in order: each head (to the blank
/// line) and body (by its `Content-Length`; none without one).
fn requests(buf: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut rest = buf;
    while let Some(at) = rest.windows(4).position(|w| w == b"\r\n\r\n") {
        let head = String::from_utf8_lossy(&rest[..at + 4]).into_owned();
        let len = head
            .lines()
            .filter_map(|l| l.split_once(':'))
            .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
            .and_then(|(_, v)| v.trim().parse().ok())
            .unwrap_or(0);
        if rest.len() < at + 4 + len {
            break;
        }
        out.push((head, rest[at + 4..at + 4 + len].to_vec()));
        rest = &rest[at + 4 + len..];
    }
    out
}

/// Write what rustls has to say; false if the link is gone.
async fn flush(tls: &mut rustls::ServerConnection, io: &mut SimLink) -> bool {
    let mut out = Vec::new();
    while tls.wants_write() {
        let _ = tls.write_tls(&mut out);
    }
    out.is_empty() || io.write_all(&out).await.is_ok()
}

/// End the connection with a close_notify.
async fn close(tls: &mut rustls::ServerConnection, io: &mut SimLink) {
    tls.send_close_notify();
    flush(tls, io).await;
    let _ = io.close().await;
}

/// One TLS connection of the in-memory server: rustls driven by hand.
/// Serve one connection; whether it carried a request.
async fn serve(
    sim: Sim,
    mut io: SimLink,
    config: Arc<rustls::ServerConfig>,
    behaviour: Server,
) -> bool {
    if let Server::Raw(reply) = behaviour {
        let mut first = [0u8; 4096];
        let _ = io.read(&mut first).await;
        let _ = io.write_all(reply).await;
        let _ = io.close().await;
        return true;
    }
    let mut tls = rustls::ServerConnection::new(config).unwrap();
    let mut buf = vec![0u8; 64 << 10];
    let mut request = Vec::new();
    let mut answered = 0;
    loop {
        if !flush(&mut tls, &mut io).await {
            return answered > 0;
        }
        let n = match io.read(&mut buf).await {
            Ok(0) | Err(_) => return answered > 0,
            Ok(n) => n,
        };
        let mut rd = &buf[..n];
        while !rd.is_empty() {
            if tls.read_tls(&mut rd).is_err() || tls.process_new_packets().is_err() {
                flush(&mut tls, &mut io).await;
                return answered > 0;
            }
        }
        let mut chunk = [0u8; 4096];
        loop {
            match tls.reader().read(&mut chunk) {
                Ok(0) => return answered > 0,
                Ok(k) => request.extend_from_slice(&chunk[..k]),
                Err(_) => break,
            }
        }
        let requests = requests(&request);
        while answered < requests.len() {
            let (head, body) = &requests[answered];
            answered += 1;
            match behaviour {
                Server::Silent => {}
                Server::Trickles => {
                    tls.writer().write_all(b"HTTP/1.1 200 OK\r\n").unwrap();
                    loop {
                        if !flush(&mut tls, &mut io).await {
                            return answered > 0;
                        }
                        sim.sleep(Duration::from_secs(10)).await;
                        tls.writer().write_all(b"X").unwrap();
                    }
                }
                Server::Unframed if answered == 1 => {
                    let r = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nno framing";
                    tls.writer().write_all(r.as_bytes()).unwrap();
                }
                Server::Unframed | Server::Raw(_) => {}
                Server::Answers | Server::ClosesAfterFirst | Server::Bytes(_) => {
                    tls.writer()
                        .write_all(&response_to(behaviour, head, body))
                        .unwrap();
                    // `Connection: close` (webproof's last request says
                    // it): the response ends with the connection, as MPC
                    // mode expects.
                    let closing = head.to_ascii_lowercase().contains("connection: close");
                    if behaviour == Server::ClosesAfterFirst || closing {
                        close(&mut tls, &mut io).await;
                        return answered > 0;
                    }
                }
            }
        }
    }
}

/// The page at `/html`.
pub const HTML: &str =
    "<!doctype html>\n<html><body><p>A page of the pair's server.</p></body></html>\n";

/// The server's response to a request for `/account` (or any path
/// without a route of its own), as [`response_to`] makes it.
pub fn response(behaviour: Server) -> Vec<u8> {
    response_to(behaviour, "GET /account HTTP/1.1\r\n\r\n", b"")
}

/// The server's response to a request (`head`, `body`): with
/// [`Server::Bytes`], that many bytes; otherwise by path, `/html` the
/// page [`HTML`], `/echo` a JSON object of the request's method, body
/// length and body, and anything else [`BODY`].
pub fn response_to(behaviour: Server, head: &str, body: &[u8]) -> Vec<u8> {
    let mut words = head.split(' ');
    let (method, path) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    let (kind, body) = match (behaviour, path) {
        (Server::Bytes(n), _) => (
            "application/octet-stream",
            (0..n).map(|i| b'a' + (i % 26) as u8).collect(),
        ),
        (_, "/html") => ("text/html", HTML.as_bytes().to_vec()),
        (_, "/echo") => (
            "application/json",
            serde_json::json!({
                "method": method,
                "length": body.len(),
                "body": String::from_utf8_lossy(body),
            })
            .to_string()
            .into_bytes(),
        ),
        _ => ("application/json", BODY.as_bytes().to_vec()),
    };
    let mut r = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    r.extend_from_slice(&body);
    r
}

/// A prover and a verifier on one simulated link, with a server.
pub struct Pair {
    pub sim: Sim,
    pub certs: Certs,
    /// One-way delay of the prover-verifier link and of the server's.
    pub delay: Duration,
    pub faults: LinkFaults,
    pub server: Server,
    /// Set when the server closes a connection (hand it to a [`Hold`]
    /// fault to act on that).
    pub server_closed: Hold,
    pub verifier: VerifierConfig,
    /// The prover's requests, one or more on one connection.
    pub request: Vec<u8>,
    /// The server name the prover asks for (the certificate's are
    /// [`HOST`] and [`IP`]).
    pub host: &'static str,
    /// The prover's TLS client options (the CA is added); MPC mode takes
    /// its version, suites and groups.
    pub tls: TlsOptions,
    /// What [`Pair::run`]'s prover reveals.
    pub reveal: Vec<RevealItem>,
    /// The prover's attestation request.
    pub attest: Option<AttestOptions>,
    /// The prover's whole-run limit.
    pub limit: Duration,
    /// When the prover's last [`Pair::run`] ended, in virtual time (the
    /// verifier may end later).
    pub prover_done: std::cell::Cell<Duration>,
}

impl Pair {
    pub fn new(seed: u64) -> Self {
        let certs = certs();
        let verifier = VerifierConfig {
            roots: roots(&certs.ca_pem),
            ..VerifierConfig::default()
        };
        Pair {
            sim: Sim::new(seed, UNIX_START),
            certs,
            delay: Duration::from_millis(20),
            faults: LinkFaults::default(),
            server: Server::Answers,
            server_closed: Hold::default(),
            verifier,
            request: Self::get("/account"),
            host: HOST,
            tls: TlsOptions::default(),
            reveal: vec![RevealItem::All],
            attest: None,
            limit: Duration::from_secs(120),
            prover_done: Default::default(),
        }
    }

    pub fn server(&self, tls12_only: bool) -> SimServer {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let versions: &[&rustls::SupportedProtocolVersion] = if tls12_only {
            &[&rustls::version::TLS12]
        } else {
            rustls::DEFAULT_VERSIONS
        };
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_protocol_versions(versions)
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(
                self.certs.chain.clone(),
                PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(self.certs.key_der.clone())),
            )
            .unwrap();
        SimServer {
            sim: self.sim.clone(),
            config: Arc::new(config),
            delay: self.delay,
            behaviour: self.server,
            closed: self.server_closed.clone(),
        }
    }

    /// One GET of `path`, asking the server to close after it.
    pub fn get(path: &str) -> Vec<u8> {
        webproof_disclosure::http::http_request("GET", HOST, 443, path, &[], &[], 0)
    }

    /// GETs of `paths` on one connection, as `--next` sends them: only
    /// the last asks the server to close.
    pub fn gets(paths: &[&str]) -> Vec<u8> {
        let mut all = Vec::new();
        for (i, path) in paths.iter().enumerate() {
            let last = i + 1 == paths.len();
            all.extend(webproof_disclosure::http::http_request_on(
                "GET",
                HOST,
                443,
                path,
                &[],
                &[],
                0,
                last,
            ));
        }
        all
    }

    /// The proxy-mode prover's config.
    pub fn proxy_config(&self, reveal: Vec<RevealItem>) -> ProverConfig {
        ProverConfig {
            host: self.host.into(),
            port: 443,
            api_key: None,
            request: self.request.clone(),
            expect_response: 1 << 10,
            version: self.tls.version,
            suites: self.tls.suites.clone(),
            reveal,
            attest: self.attest.clone(),
            roots: roots(&self.certs.ca_pem),
        }
    }

    /// The proxy-mode prover's run on link end `p`.
    pub async fn prove_proxy(&self, p: SimLink, config: ProverConfig) -> Result<ProveOutcome> {
        let mut tls = self.tls.clone();
        tls.ca_pems.push(self.certs.ca_pem.as_bytes().to_vec());
        webproof_session::proxy::prover::Prover::new(config, tls, None)
            .prove(&self.sim, "verifier.test", async { Ok(p) }, self.limit)
            .await
    }

    /// The MPC-mode prover's run on link end `p`; `record` says where the
    /// runtime recorded a cheating verifier.
    pub async fn prove_mpc(
        &self,
        p: SimLink,
        server: &SimServer,
        reveal: Vec<RevealItem>,
        record: impl FnOnce(&str) -> String,
    ) -> Result<ProveOutcome> {
        use webproof_session::mpc::prover::{Prover, Request};
        let prover = Prover::new(
            Request {
                host: self.host.into(),
                port: 443,
                request: self.request.clone(),
                version: self.tls.version,
                suites: self.tls.suites.clone(),
                groups: self.tls.groups.clone(),
                api_key: None,
                reveal,
                attest: self.attest.clone(),
            },
            None,
        )?;
        // In MPC mode the verifier checks the server's identity.
        prover
            .prove(
                &self.sim,
                "verifier.test",
                async { Ok(p) },
                server,
                self.limit,
                record,
            )
            .await
    }

    /// Run a session in `mode`: the prover's outcome and the verifier's.
    pub fn run(&self, mode: Mode) -> (Result<ProveOutcome>, Result<Verified>) {
        let (p, v) = self.sim.link(self.delay, self.faults.clone());
        // MPC mode against a TLS 1.2 server unless the prover pins TLS
        // 1.3 (`mpc13.rs` has its own server of chosen versions).
        let pinned13 = self.tls.version == Some(webproof_proxy::TlsVersion::Tls13);
        let server = self.server(mode == Mode::Mpc && !pinned13);
        let sim = &self.sim;
        let id = SessionId::random(&mut sim.rng());
        let verifier = verify(sim, v, &server, &self.verifier, id, None);
        let reveal = self.reveal.clone();
        let prover = async {
            let r = match mode {
                Mode::Proxy => self.prove_proxy(p, self.proxy_config(reveal)).await,
                Mode::Mpc => self.prove_mpc(p, &server, reveal, |_| String::new()).await,
            };
            self.prover_done.set(sim.now());
            r
        };
        sim.block_on(futures::future::join(prover, verifier))
    }

    /// The verifier's run alone on link end `v`, against this pair's
    /// server.
    pub async fn verify(&self, v: SimLink) -> Result<Verified> {
        let server = self.server(false);
        let id = SessionId::random(&mut self.sim.rng());
        verify(&self.sim, v, &server, &self.verifier, id, None).await
    }
}
