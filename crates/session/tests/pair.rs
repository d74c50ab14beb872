//! Both parties' runs against each other on the simulated runtime
//! (`webproof_session::sim`): an in-memory link with a one-way delay and
//! fault hooks, an in-memory rustls server, seeded randomness and virtual
//! time, so timeouts are tested at their real lengths in no wall-clock
//! time and a run's figures do not depend on the machine's load.
//!
//! The same runs as `webproof serve` and `webproof prove` (tokio) and the
//! page (the browser); only the runtime differs.

use futures::io::{AsyncReadExt, AsyncWriteExt};
use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use std::io::{Read, Write};
use std::sync::Arc;
use std::time::Duration;
use webproof_disclosure::http::RevealItem;
use webproof_proxy::protocol::SessionId;
use webproof_proxy::session::prover::ProverConfig;
use webproof_proxy::RootStore;
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
    Silent,
    /// Answers a byte every 10 s, forever.
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

/// A prover and a verifier on one simulated link, with a server.
struct Pair {
    sim: Sim,
    certs: Certs,
    /// One-way delay of the prover-verifier link and of the server's.
    delay: Duration,
    faults: LinkFaults,
    server: Server,
    verifier: VerifierConfig,
    /// The prover's whole-run limit.
    limit: Duration,
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
            server: Server::Answers,
            verifier,
            limit: Duration::from_secs(120),
        }
    }

    fn server(&self, tls12_only: bool) -> SimServer {
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
        }
    }

    fn request() -> Vec<u8> {
        webproof_disclosure::http::http_request("GET", HOST, 443, "/account", &[], &[], 0)
    }

    /// Run a session in `mode`: the prover's outcome and the verifier's.
    fn run(&self, mode: Mode) -> (Result<ProveOutcome>, Result<Verified>) {
        let (p, v) = self.sim.link(self.delay, self.faults);
        let server = self.server(mode == Mode::Mpc);
        let sim = &self.sim;
        let id = SessionId::random(&mut sim.rng());
        let verifier = verify(sim, v, &server, &self.verifier, id, None);
        let reveal = vec![RevealItem::All];
        let prover = async {
            match mode {
                Mode::Proxy => {
                    let config = ProverConfig {
                        host: HOST.into(),
                        port: 443,
                        api_key: None,
                        request: Self::request(),
                        expect_response: 1 << 10,
                        version: None,
                        suites: Vec::new(),
                        reveal,
                        attest: None,
                        roots: roots(&self.certs.ca_pem),
                    };
                    let tls = webproof_session::proxy::prover::TlsOptions {
                        ca_pems: vec![self.certs.ca_pem.as_bytes().to_vec()],
                        ..Default::default()
                    };
                    webproof_session::proxy::prover::Prover::new(config, tls, None)
                        .prove(sim, "verifier.test", async { Ok(p) }, self.limit)
                        .await
                }
                Mode::Mpc => {
                    use webproof_session::mpc::prover::{Prover, Request};
                    let prover = Prover::new(
                        Request {
                            host: HOST.into(),
                            port: 443,
                            request: Self::request(),
                            version: None,
                            suites: Vec::new(),
                            groups: Vec::new(),
                            api_key: None,
                            reveal,
                            attest: None,
                        },
                        None,
                    )?;
                    // In MPC mode the verifier checks the server's identity.
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
                }
            }
        };
        sim.block_on(futures::future::join(prover, verifier))
    }
}

fn roots(pem: &str) -> RootStore {
    let mut r = RootStore::empty();
    r.add_pem(pem.as_bytes()).unwrap();
    r
}

/// An honest proxy-mode session verifies the server's true bytes, and
/// takes the same virtual time at every run of the same seed.
#[test]
fn a_proxy_session_verifies_in_virtual_time() {
    let pair = Pair::new(1);
    let (p, v) = pair.run(Mode::Proxy);
    let (p, v) = (p.unwrap(), v.unwrap());
    assert_eq!(p.output, v.output);
    assert!(String::from_utf8_lossy(&p.response).ends_with(BODY));
    assert_eq!(v.mode, Mode::Proxy);
    let took = pair.sim.now();
    // Hello, the server reached, the TLS handshake and request through the
    // relay, the proof and its verdict: several round trips of 40 ms.
    assert!(took >= Duration::from_millis(200), "{took:?}");
    assert!(took < Duration::from_secs(2), "{took:?}");
}

/// An honest MPC-mode session verifies too, on the same runtime.
#[test]
fn an_mpc_session_verifies_in_virtual_time() {
    let pair = Pair::new(2);
    let (p, v) = pair.run(Mode::Mpc);
    if p.is_err() || v.is_err() {
        panic!("prover: {:?}\nverifier: {:?}", p.map(|_| ()), v.map(|_| ()));
    }
    let (p, v) = (p.unwrap(), v.unwrap());
    assert_eq!(p.output, v.output);
    assert_eq!(v.mode, Mode::Mpc);
    assert!(String::from_utf8_lossy(&p.response).ends_with(BODY));
}

/// A verifier that never answers the hello is named as such once the
/// prover's limit has passed: two minutes, in no time.
#[test]
fn a_silent_verifier_is_named_after_the_whole_limit() {
    let pair = Pair::new(3);
    let (p, _v) = pair.sim.link(pair.delay, LinkFaults::default());
    let config = ProverConfig {
        host: HOST.into(),
        port: 443,
        api_key: None,
        request: Pair::request(),
        expect_response: 1 << 10,
        version: None,
        suites: Vec::new(),
        reveal: Vec::new(),
        attest: None,
        roots: roots(&pair.certs.ca_pem),
    };
    let wall = std::time::Instant::now();
    let r = pair.sim.block_on(
        webproof_session::proxy::prover::Prover::new(config, Default::default(), None).prove(
            &pair.sim,
            "verifier.test",
            async { Ok(p) },
            pair.limit,
        ),
    );
    assert!(
        matches!(r, Err(Error::VerifierSilent { secs: 120, .. })),
        "{r:?}"
    );
    assert_eq!(pair.sim.now(), pair.limit);
    assert!(wall.elapsed() < Duration::from_secs(30));
}

/// A server that never answers ends the relay at the verifier's idle
/// timeout, and the prover hears the verifier's reason.
#[test]
fn a_server_that_never_answers_ends_at_the_idle_timeout() {
    let mut pair = Pair::new(4);
    pair.server = Server::Silent;
    let (p, v) = pair.run(Mode::Proxy);
    assert!(matches!(v, Err(Error::Timeout(_))), "{v:?}");
    let p = p.unwrap_err();
    assert_eq!(p.decided_by(), "verifier", "{p:?}");
    assert!(p.to_string().contains("idle"), "{p}");
    let idle = pair.verifier.idle_timeout;
    assert!(pair.sim.now() >= idle && pair.sim.now() < idle + Duration::from_secs(2));
}

/// A link cut in either direction, at any point of an honest session's
/// bytes, ends the prover's run with an error, and never in a hang; the
/// verifier fails too, or (cut inside its verdict) has verified the true
/// bytes.
#[test]
fn a_cut_link_ends_both_sides() {
    cut_links(Mode::Proxy, &[0.0, 0.01, 0.1, 0.5, 0.9, 0.999]);
}

/// The same in MPC mode.
#[test]
fn a_cut_mpc_link_ends_both_sides() {
    cut_links(Mode::Mpc, &[0.001, 0.3, 0.9, 0.999]);
}

fn cut_links(mode: Mode, fractions: &[f64]) {
    let honest = Pair::new(9).run(mode).0.unwrap();
    let (truth, honest) = (honest.output, honest.stats);
    for to_verifier in [true, false] {
        let total = if to_verifier {
            honest.uploaded_preprocess + honest.uploaded_online
        } else {
            honest.downloaded_preprocess + honest.downloaded_online
        };
        for &fraction in fractions {
            let cut = (total as f64 * fraction) as u64;
            let mut pair = Pair::new(9);
            let f = Faults {
                cut_after: Some(cut),
                ..Faults::default()
            };
            pair.faults = LinkFaults::one_way(to_verifier, f);
            let (p, v) = pair.run(mode);
            let what =
                format!("{mode:?}: cut at {cut} of {total} (to the verifier: {to_verifier})");
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

/// One flipped byte anywhere in the link is refused, or the session
/// still verifies the server's true bytes (a flip in a field the
/// receiver ignores or checks later): never another output.
#[test]
fn a_flipped_byte_is_refused_or_harmless() {
    flips(
        Mode::Proxy,
        &[0, 3, 20, 90, 300, 2_000, 30_000, 150_000, 400_000],
    );
}

/// The same in MPC mode.
#[test]
fn a_flipped_mpc_byte_is_refused_or_harmless() {
    flips(
        Mode::Mpc,
        &[0, 9, 200, 5_000, 100_000, 2_000_000, 6_000_000],
    );
}

/// Flip one byte at each offset, each way: every session is refused or
/// yields the honest session's bytes, and most are refused (the flips
/// land).
fn flips(mode: Mode, offsets: &[u64]) {
    let seed = 30;
    let honest = Pair::new(seed).run(mode).1.unwrap().output;
    let mut refused = 0;
    for (i, &at) in offsets.iter().enumerate() {
        for to_verifier in [true, false] {
            let mut pair = Pair::new(seed);
            let f = Faults {
                flip: Some((at, 1 << (i % 8))),
                ..Faults::default()
            };
            pair.faults = LinkFaults::one_way(to_verifier, f);
            let (p, v) = pair.run(mode);
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
    assert!(2 * refused >= runs, "{mode:?}: {refused} of {runs} refused");
}

/// A prover that never sends its hello is let go at the verifier's
/// connect timeout.
#[test]
fn a_prover_without_a_hello_is_let_go_at_the_connect_timeout() {
    let pair = Pair::new(40);
    let (_p, v) = pair.sim.link(pair.delay, LinkFaults::default());
    let server = pair.server(false);
    let id = SessionId::random(&mut pair.sim.rng());
    let r = pair
        .sim
        .block_on(verify(&pair.sim, v, &server, &pair.verifier, id, None));
    assert!(matches!(r, Err(Error::Timeout(_))), "{:?}", r.map(|_| ()));
    assert_eq!(pair.sim.now(), pair.verifier.connect_timeout);
}

/// A server that keeps the relay busy past its limit (a byte every 10 s,
/// never idle long enough for the idle timeout) is cut at the relay's
/// limit, and the prover hears why.
#[test]
fn a_relay_past_its_limit_is_ended() {
    let mut pair = Pair::new(41);
    pair.server = Server::Trickles;
    let (p, v) = pair.run(Mode::Proxy);
    assert!(matches!(v, Err(Error::Timeout(_))), "{:?}", v.map(|_| ()));
    let p = p.unwrap_err();
    assert_eq!(p.decided_by(), "verifier", "{p:?}");
    let limit = pair.verifier.relay_timeout;
    assert!(pair.sim.now() >= limit && pair.sim.now() < limit + Duration::from_secs(2));
}
