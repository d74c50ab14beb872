//! MPC mode over TLS 1.3 on the simulated runtime (`webproof_session::sim`,
//! as `pair.rs`): an in-memory rustls server of the chosen versions and
//! suites, seeded randomness and virtual time; the version chosen without
//! flags; a cut link and flipped bytes in a TLS 1.3 session.

use futures::io::{AsyncReadExt, AsyncWriteExt};
use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use std::io::{Read, Write};
use std::sync::Arc;
use std::time::Duration;
use webproof_disclosure::http::RevealItem;
use webproof_proxy::protocol::SessionId;
use webproof_proxy::RootStore;
use webproof_proxy::{CipherSuite, TlsVersion};
use webproof_session::prover::ProveOutcome;
use webproof_session::sim::{Faults, LinkFaults, Sim, SimLink};
use webproof_session::verifier::{verify, Verified, VerifierConfig};
use webproof_session::{Connector, Error, Mode, Result, Runtime};

const HOST: &str = "server.test";
const BODY: &str = r#"{"account":{"id":"acct_42","balance":1234},"owner":"Ada"}"#;
/// 2026-12-01: inside the certificates' validity.
const UNIX_START: u64 = 1_796_083_200;

/// The server's certificate chain and key, and its CA's PEM.
struct Certs {
    ca_pem: String,
    chain: Vec<rustls::pki_types::CertificateDer<'static>>,
    key_der: Vec<u8>,
}

fn certs() -> Certs {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let key = KeyPair::generate().unwrap();
    let leaf = CertificateParams::new(vec![HOST.to_string()]).unwrap();
    let leaf_cert = leaf.signed_by(&key, &ca_cert, &ca_key).unwrap();
    Certs {
        ca_pem: ca_cert.pem(),
        chain: vec![leaf_cert.der().clone(), ca_cert.der().clone()],
        key_der: key.serialize_der(),
    }
}

/// How the in-memory server behaves.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Server {
    /// Answers the request with `BODY`.
    Answers,
    /// Completes the handshake, then never answers.
    #[allow(dead_code)]
    Silent,
    /// Answers a byte every 10 s, forever.
    #[allow(dead_code)]
    Trickles,
}

/// The server connector of both modes: each connection is a simulated
/// link to a rustls server task.
struct SimServer {
    sim: Sim,
    config: Arc<rustls::ServerConfig>,
    delay: Duration,
    behaviour: Server,
}

impl Connector for SimServer {
    type Conn = SimLink;

    async fn connect(&self, host: &str, _port: u16) -> Result<SimLink> {
        if host != HOST {
            return Err(Error::Setup(format!("no server {host} in this simulation")));
        }
        let (client, server) = self.sim.link(self.delay, LinkFaults::default());
        let (config, behaviour) = (self.config.clone(), self.behaviour);
        // Not a `Task`: the server runs on after this call, to its close.
        self.sim
            .spawn_boxed(Box::pin(serve(self.sim.clone(), server, config, behaviour)));
        Ok(client)
    }
}

/// One TLS connection of the in-memory server: rustls driven by hand.
async fn serve(sim: Sim, mut io: SimLink, config: Arc<rustls::ServerConfig>, behaviour: Server) {
    let mut tls = rustls::ServerConnection::new(config).unwrap();
    let mut buf = vec![0u8; 64 << 10];
    let mut request = Vec::new();
    let mut answered = false;
    loop {
        let mut out = Vec::new();
        while tls.wants_write() {
            tls.write_tls(&mut out).unwrap();
        }
        if !out.is_empty() && io.write_all(&out).await.is_err() {
            return;
        }
        let n = match io.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let mut rd = &buf[..n];
        while !rd.is_empty() {
            if tls.read_tls(&mut rd).is_err() || tls.process_new_packets().is_err() {
                let mut out = Vec::new();
                while tls.wants_write() {
                    let _ = tls.write_tls(&mut out);
                }
                let _ = io.write_all(&out).await;
                return;
            }
        }
        let mut chunk = [0u8; 4096];
        loop {
            match tls.reader().read(&mut chunk) {
                Ok(0) => return,
                Ok(k) => request.extend_from_slice(&chunk[..k]),
                Err(_) => break,
            }
        }
        let complete = request.windows(4).any(|w| w == b"\r\n\r\n");
        if complete && behaviour == Server::Trickles {
            tls.writer().write_all(b"HTTP/1.1 200 OK\r\n").unwrap();
            loop {
                let mut out = Vec::new();
                while tls.wants_write() {
                    tls.write_tls(&mut out).unwrap();
                }
                if io.write_all(&out).await.is_err() {
                    return;
                }
                sim.sleep(Duration::from_secs(10)).await;
                tls.writer().write_all(b"X").unwrap();
            }
        }
        if complete && !answered && behaviour == Server::Answers {
            let response = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{BODY}",
                BODY.len()
            );
            tls.writer().write_all(response.as_bytes()).unwrap();
            answered = true;
            // `Connection: close` (webproof's requests say it): the
            // response ends with the connection, as MPC mode expects.
            if String::from_utf8_lossy(&request)
                .to_ascii_lowercase()
                .contains("connection: close")
            {
                tls.send_close_notify();
                let mut out = Vec::new();
                while tls.wants_write() {
                    tls.write_tls(&mut out).unwrap();
                }
                let _ = io.write_all(&out).await;
                let _ = io.close().await;
                return;
            }
        }
    }
}

static TLS13_ONLY: &[&rustls::SupportedProtocolVersion] = &[&rustls::version::TLS13];
static TLS12_ONLY: &[&rustls::SupportedProtocolVersion] = &[&rustls::version::TLS12];

/// A prover and a verifier on one simulated link, with a server.
struct Pair {
    sim: Sim,
    certs: Certs,
    delay: Duration,
    faults: LinkFaults,
    verifier: VerifierConfig,
    limit: Duration,
    /// The server's versions.
    versions: &'static [&'static rustls::SupportedProtocolVersion],
    /// The server's TLS 1.3 suite, if only one.
    suite13: Option<rustls::CipherSuite>,
    /// The server's TLS 1.2 suite, if only one.
    suite12: Option<rustls::CipherSuite>,
    /// What the prover asks for.
    version: Option<TlsVersion>,
    suites: Vec<CipherSuite>,
}

impl Pair {
    fn new(seed: u64) -> Self {
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
            verifier,
            limit: Duration::from_secs(120),
            versions: TLS13_ONLY,
            suite13: None,
            suite12: None,
            version: None,
            suites: Vec::new(),
        }
    }

    fn server(&self) -> SimServer {
        let mut provider = rustls::crypto::ring::default_provider();
        if let Some(s) = self.suite13 {
            provider
                .cipher_suites
                .retain(|c| c.suite() == s || c.version() == &rustls::version::TLS12);
        }
        if let Some(s) = self.suite12 {
            provider
                .cipher_suites
                .retain(|c| c.suite() == s || c.version() == &rustls::version::TLS13);
        }
        let config = rustls::ServerConfig::builder_with_provider(Arc::new(provider))
            .with_protocol_versions(self.versions)
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
            behaviour: Server::Answers,
        }
    }

    fn request() -> Vec<u8> {
        webproof_disclosure::http::http_request("GET", HOST, 443, "/account", &[], &[], 0)
    }

    /// Run an MPC session: the prover's outcome and the verifier's.
    fn run(&self) -> (Result<ProveOutcome>, Result<Verified>) {
        let (p, v) = self.sim.link(self.delay, self.faults.clone());
        let server = self.server();
        let sim = &self.sim;
        let id = SessionId::random(&mut sim.rng());
        let verifier = verify(sim, v, &server, &self.verifier, id, None);
        let prover = async {
            use webproof_session::mpc::prover::{Prover, Request};
            let prover = Prover::new(
                Request {
                    host: HOST.into(),
                    port: 443,
                    request: Self::request(),
                    version: self.version,
                    suites: self.suites.clone(),
                    groups: Vec::new(),
                    api_key: None,
                    reveal: vec![RevealItem::All],
                    attest: None,
                },
                None,
            )?;
            prover
                .prove(
                    sim,
                    "verifier.test",
                    async { Ok(p) },
                    &server,
                    self.limit,
                    |_| String::new(),
                )
                .await
        };
        sim.block_on(futures::future::join(prover, verifier))
    }
}

fn roots(pem: &str) -> RootStore {
    let mut r = RootStore::empty();
    r.add_pem(pem.as_bytes()).unwrap();
    r
}

/// The honest session's facts: the whole request and `BODY` in the
/// response, on both sides, in the version `version`.
fn honest(pair: &Pair, version: TlsVersion) -> webproof_disclosure::VerifierOutput {
    let (p, v) = pair.run();
    let p = p.expect("the prover's run");
    let v = v.expect("the verifier's run");
    assert_eq!(v.mode, Mode::Mpc);
    assert_eq!(v.output.tls_version, version);
    assert_eq!(p.output.tls_version, version);
    assert_eq!(v.output.sent, p.output.sent);
    assert_eq!(v.output.received, p.output.received);
    let received = String::from_utf8_lossy(&p.response).to_string();
    assert!(received.ends_with(BODY), "{received}");
    v.output
}

/// An honest TLS 1.3 session with each suite verifies the server's true
/// bytes, the suite named explicitly.
#[test]
fn an_mpc_session_over_tls13_verifies() {
    for (i, (ours, theirs)) in [
        (
            CipherSuite::TLS13_AES_128_GCM_SHA256,
            rustls::CipherSuite::TLS13_AES_128_GCM_SHA256,
        ),
        (
            CipherSuite::TLS13_AES_256_GCM_SHA384,
            rustls::CipherSuite::TLS13_AES_256_GCM_SHA384,
        ),
        (
            CipherSuite::TLS13_CHACHA20_POLY1305_SHA256,
            rustls::CipherSuite::TLS13_CHACHA20_POLY1305_SHA256,
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let mut pair = Pair::new(40 + i as u64);
        pair.suite13 = Some(theirs);
        pair.version = Some(TlsVersion::Tls13);
        pair.suites = vec![ours];
        honest(&pair, TlsVersion::Tls13);
    }
}

/// Without a version: TLS 1.3 against a TLS 1.3-only server (with the
/// suite it picks), TLS 1.2 against a TLS 1.2-only one and against one of
/// both (its session proves more).
#[test]
fn the_version_follows_the_server_without_flags() {
    let mut pair = Pair::new(50);
    pair.suite13 = Some(rustls::CipherSuite::TLS13_AES_256_GCM_SHA384);
    honest(&pair, TlsVersion::Tls13);
    let mut pair = Pair::new(51);
    pair.versions = TLS12_ONLY;
    honest(&pair, TlsVersion::Tls12);
    let mut pair = Pair::new(52);
    pair.versions = rustls::DEFAULT_VERSIONS;
    honest(&pair, TlsVersion::Tls12);
}

/// A TLS 1.2 server of one suite outside the default family (AES-256-GCM
/// with SHA-384 or ChaCha20-Poly1305, whose full key derivation also
/// follows the server's EMS choice) is served without naming its suite,
/// with or without the version named.
#[test]
fn a_tls12_server_of_one_suite_needs_no_flags() {
    for (seed, version, suite) in [
        (
            56,
            None,
            rustls::CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
        ),
        (
            57,
            Some(TlsVersion::Tls12),
            rustls::CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
        ),
        (
            58,
            None,
            rustls::CipherSuite::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
        ),
    ] {
        let mut pair = Pair::new(seed);
        pair.versions = TLS12_ONLY;
        pair.suite12 = Some(suite);
        pair.version = version;
        let out = honest(&pair, TlsVersion::Tls12);
        assert_eq!(u16::from(suite), out.cipher_suite.code(), "{suite:?}");
    }
}

/// An explicit version the server does not run is refused, naming it.
#[test]
fn an_explicit_version_is_honoured() {
    let mut pair = Pair::new(53);
    pair.versions = TLS12_ONLY;
    pair.version = Some(TlsVersion::Tls13);
    let (p, _) = pair.run();
    assert!(p.is_err());
    let mut pair = Pair::new(54);
    pair.version = Some(TlsVersion::Tls12);
    let (p, _) = pair.run();
    let Err(e) = p else {
        panic!("a TLS 1.3-only server refuses a TLS 1.2 session")
    };
    assert!(e.to_string().contains("protocol_version"), "{e}");
}

/// A TLS 1.3 server of ChaCha20-Poly1305 alone (the suite MPC mode
/// offers last) is served without naming the suite or the version: the
/// probe offers every TLS 1.3 suite and the session runs the one the
/// server picks.
#[test]
fn a_tls13_server_of_one_suite_needs_no_flags() {
    let mut pair = Pair::new(59);
    pair.suite13 = Some(rustls::CipherSuite::TLS13_CHACHA20_POLY1305_SHA256);
    let out = honest(&pair, TlsVersion::Tls13);
    assert_eq!(
        out.cipher_suite,
        CipherSuite::TLS13_CHACHA20_POLY1305_SHA256
    );
}

/// A server that runs none of the suites the request names is refused
/// with a message naming what was offered (MPC mode runs every suite
/// rustls does, so here the request names TLS 1.3's AES-128-GCM alone
/// and the server runs ChaCha20-Poly1305 alone).
#[test]
fn a_server_of_another_suite_is_named() {
    let mut pair = Pair::new(55);
    pair.suite13 = Some(rustls::CipherSuite::TLS13_CHACHA20_POLY1305_SHA256);
    pair.suites = vec![CipherSuite::TLS13_AES_128_GCM_SHA256];
    let (p, _) = pair.run();
    let Err(e) = p else {
        panic!("a server of another suite was not refused")
    };
    let e = e.to_string();
    assert!(e.contains("MPC mode"), "{e}");
    assert!(e.contains("TLS13_AES_128_GCM_SHA256"), "{e}");
}

/// A cut link ends a TLS 1.3 session on both sides: the prover fails, the
/// verifier fails or states the true bytes.
#[test]
fn a_cut_tls13_link_ends_both_sides() {
    let honest_run = Pair::new(9).run().0.unwrap();
    let (truth, stats) = (honest_run.output, honest_run.stats);
    for to_verifier in [true, false] {
        let total = if to_verifier {
            stats.uploaded_preprocess + stats.uploaded_online
        } else {
            stats.downloaded_preprocess + stats.downloaded_online
        };
        for fraction in [0.001, 0.3, 0.9, 0.999] {
            let cut = (total as f64 * fraction) as u64;
            let mut pair = Pair::new(9);
            let f = Faults {
                cut_after: Some(cut),
                ..Faults::default()
            };
            pair.faults = LinkFaults::one_way(to_verifier, f);
            let (p, v) = pair.run();
            let what = format!("cut at {cut} of {total} (to the verifier: {to_verifier})");
            assert!(p.is_err(), "{what}");
            if let Ok(v) = v {
                assert_eq!(
                    (&v.output.sent, &v.output.received),
                    (&truth.sent, &truth.received),
                    "{what}"
                );
            }
        }
    }
}

/// One flipped byte in a TLS 1.3 session is refused, or the session
/// still states the server's true bytes; most are refused.
#[test]
fn a_flipped_tls13_byte_is_refused_or_harmless() {
    let seed = 30;
    let honest = Pair::new(seed).run().1.unwrap().output;
    let offsets = [0u64, 9, 200, 5_000, 100_000, 2_000_000];
    let mut refused = 0;
    for (i, &at) in offsets.iter().enumerate() {
        for to_verifier in [true, false] {
            let mut pair = Pair::new(seed);
            let f = Faults {
                flip: Some((at, 1 << (i % 8))),
                ..Faults::default()
            };
            pair.faults = LinkFaults::one_way(to_verifier, f);
            let (p, v) = pair.run();
            refused += usize::from(p.is_err() || v.is_err());
            if let Ok(v) = &v {
                assert_eq!(v.output.received, honest.received, "flip at {at}");
                assert_eq!(v.output.sent, honest.sent, "flip at {at}");
            }
            if let Ok(p) = &p {
                assert_eq!(p.output.received, honest.received, "flip at {at}");
            }
        }
    }
    let runs = 2 * offsets.len();
    assert!(2 * refused >= runs, "{refused} of {runs} refused");
}
