//! Shared by the integration tests: COTs from the workspace's SoftSpokenOT,
//! certificates from rcgen, a rustls TLS 1.2 server, and a one-thread
//! driver that moves every message (encoded and decoded, so the encodings
//! are exercised and counted) between the prover, the verifier and the
//! server.
#![allow(dead_code)] // each test file uses some of these

use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
    KeyUsagePurpose,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use std::collections::VecDeque;
use std::io::{Read, Write};
use std::sync::Arc;
use webproof_mpc_tls::{
    cots_needed, CotPool, Error, ProverConfig, ProverMsg, ProverOutcome, ProverSession,
    VerifierConfig, VerifierMsg, VerifierOutcome, VerifierSession,
};
use webproof_ot::{SoftSpokenReceiver, SoftSpokenSender};
use webproof_tls::{CipherSuite, KxGroup};
use webproof_tls::{RecorderLimits, RootStore, VerifyConfig};

pub mod tls13;

pub const NAME: &str = "webproof.test";

// Each test file uses some of these.
#[allow(unused_imports)]
pub use webproof_ferret::testing::cots as ferret_cots;
#[allow(unused_imports)]
pub use webproof_ot::testing::{cots, seeded_cots as cots_ext};

/// Key types of the server certificate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyKind {
    Ecdsa,
    Rsa,
}

/// A CA and a leaf for `names` (expired if `expired`): (CA DER, chain, key).
pub struct Certs {
    pub ca_der: Vec<u8>,
    pub ca_pem: String,
    pub chain: Vec<CertificateDer<'static>>,
    pub key_der: Vec<u8>,
    pub leaf_pem: String,
    pub key_pem: String,
}

pub fn certs(kind: KeyKind, names: &[&str], expired: bool) -> Certs {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(DnType::CommonName, "mpc-tls test CA");
    ca.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let key = match kind {
        KeyKind::Ecdsa => KeyPair::generate().unwrap(),
        KeyKind::Rsa => {
            use rsa::pkcs8::EncodePrivateKey;
            let mut rng = ChaCha20Rng::seed_from_u64(99);
            let k = rsa::RsaPrivateKey::new(&mut rng, 2048).unwrap();
            let der = k.to_pkcs8_der().unwrap();
            KeyPair::from_pkcs8_der_and_sign_algo(
                &PrivatePkcs8KeyDer::from(der.as_bytes().to_vec()),
                &rcgen::PKCS_RSA_SHA256,
            )
            .unwrap()
        }
    };
    let mut leaf =
        CertificateParams::new(names.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap();
    leaf.distinguished_name
        .push(DnType::CommonName, "mpc-tls test server");
    leaf.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    if expired {
        leaf.not_before = rcgen::date_time_ymd(2019, 1, 1);
        leaf.not_after = rcgen::date_time_ymd(2020, 1, 1);
    }
    let leaf_cert = leaf.signed_by(&key, &ca_cert, &ca_key).unwrap();
    Certs {
        ca_der: ca_cert.der().to_vec(),
        ca_pem: ca_cert.pem(),
        chain: vec![leaf_cert.der().clone(), ca_cert.der().clone()],
        key_der: key.serialize_der(),
        leaf_pem: leaf_cert.pem(),
        key_pem: key.serialize_pem(),
    }
}

/// A rustls TLS 1.2 server with every suite and group of the ring provider.
pub fn server(c: &Certs) -> rustls::ServerConnection {
    server_with_groups(c, &[])
}

/// [`server`] with only the named groups (empty: every group).
#[allow(dead_code)] // not every test binary restricts the groups
pub fn server_with_groups(c: &Certs, groups: &[KxGroup]) -> rustls::ServerConnection {
    let mut provider = rustls::crypto::ring::default_provider();
    if !groups.is_empty() {
        provider
            .kx_groups
            .retain(|g| groups.iter().any(|k| k.code() == u16::from(g.name())));
    }
    let provider = Arc::new(provider);
    let cfg = rustls::ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS12])
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            c.chain.clone(),
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(c.key_der.clone())),
        )
        .unwrap();
    rustls::ServerConnection::new(Arc::new(cfg)).unwrap()
}

pub fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

pub fn verifier_config(ca_der: &[u8], name: &str) -> VerifierConfig {
    let mut roots = RootStore::empty();
    roots.add_der(ca_der).unwrap();
    VerifierConfig {
        verify: VerifyConfig {
            roots,
            server_name: name.to_string(),
            port: 443,
            time: now(),
        },
        limits: RecorderLimits::default(),
    }
}

pub fn prover_config(
    name: &str,
    suite: CipherSuite,
    group: KxGroup,
    ems: bool,
    request: &[u8],
) -> ProverConfig {
    ProverConfig {
        server_name: name.to_string(),
        suites: vec![suite],
        groups: vec![group],
        ems,
        request: request.to_vec(),
        limits: RecorderLimits::default(),
    }
}

/// Both sessions, with COTs for `request_len`.
pub fn sessions(
    seed: u64,
    pcfg: ProverConfig,
    vcfg: VerifierConfig,
) -> (ProverSession, ProverMsg, VerifierSession) {
    let (p, hello, v, _, _) = sessions_ext(seed, pcfg, vcfg);
    (p, hello, v)
}

/// [`sessions`] on the default terms (AES-128-GCM, P-256, EMS) for
/// `request`, against a verifier trusting `ca_der` for [`NAME`].
pub fn default_terms(
    seed: u64,
    ca_der: &[u8],
    request: &[u8],
) -> (ProverSession, ProverMsg, VerifierSession) {
    sessions(
        seed,
        prover_config(
            NAME,
            webproof_mpc_tls::hello::ECDHE_ECDSA_AES128_GCM_SHA256,
            webproof_mpc_tls::hello::GROUP_P256,
            true,
            request,
        ),
        verifier_config(ca_der, NAME),
    )
}

/// [`sessions`], with the COT extensions for the proof of the response.
pub fn sessions_ext(
    seed: u64,
    pcfg: ProverConfig,
    vcfg: VerifierConfig,
) -> (
    ProverSession,
    ProverMsg,
    VerifierSession,
    SoftSpokenSender,
    SoftSpokenReceiver,
) {
    let (delta, keys, macs, s, r) = cots_ext(seed, cots_needed(pcfg.request.len()));
    let mut rng = ChaCha20Rng::seed_from_u64(seed + 10);
    let (p, hello) = ProverSession::new(pcfg, CotPool::new(macs), &mut rng).unwrap();
    let v = VerifierSession::new(vcfg, delta, CotPool::new(keys), &mut rng);
    (p, hello, v, s, r)
}

/// Who stopped a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    Prover(Error),
    Verifier(Error),
    Server(String),
    Stalled,
}

/// Alters the bytes of server flight `i`.
pub type FlightHook = Box<dyn FnMut(usize, &mut Vec<u8>)>;
/// Alters a message in flight.
pub type MsgHook<M> = Box<dyn FnMut(&mut M)>;

/// Hooks of a run.
#[derive(Default)]
pub struct Hooks {
    /// Alters bytes from the server before the prover sees them
    /// (argument: the index of the server flight).
    pub server_to_prover: Option<FlightHook>,
    /// Close the server's TCP side after this many server flights.
    pub close_after_flights: Option<usize>,
    /// Alters a prover message on its way to the verifier.
    pub prover_to_verifier: Option<MsgHook<ProverMsg>>,
    /// Alters a verifier message on its way to the prover.
    pub verifier_to_prover: Option<MsgHook<VerifierMsg>>,
    /// Where the server's decrypted request goes as it reads it, so that
    /// a failed run still tells what reached the server.
    pub server_saw: Option<std::rc::Rc<std::cell::RefCell<Vec<u8>>>>,
    /// Replaces the `i`-th encoded verifier message (after
    /// `verifier_to_prover`) by any number of frames: none drops it, two
    /// replay it, a held one released later reorders.
    pub verifier_wire: Option<WireHook>,
}

/// Maps the `i`-th encoded message to the frames delivered in its place.
pub type WireHook = Box<dyn FnMut(usize, Vec<u8>) -> Vec<Vec<u8>>>;

/// Figures of a run.
#[derive(Debug, Default, Clone, Copy)]
pub struct Stats {
    pub up: usize,
    pub down: usize,
    /// Prover → verifier batches (each a half round trip of the protocol).
    pub flights_up: usize,
}

pub struct Done {
    pub prover: ProverOutcome,
    pub verifier: VerifierOutcome,
    pub request_at_server: Vec<u8>,
    /// Every byte the server read and wrote.
    pub client_bytes: Vec<u8>,
    pub server_bytes: Vec<u8>,
    pub stats: Stats,
}

/// Run a whole session against `server`, which answers `response` to the
/// first complete request head and then closes with close_notify.
pub fn run(
    mut p: ProverSession,
    hello: ProverMsg,
    mut v: VerifierSession,
    mut server: rustls::ServerConnection,
    response: &[u8],
    mut hooks: Hooks,
) -> Result<Done, Stop> {
    let mut to_v: VecDeque<ProverMsg> = VecDeque::from([hello]);
    let mut to_server: Vec<u8> = Vec::new();
    let mut request = Vec::new();
    let mut responded = false;
    let mut closed = false;
    let mut flights = 0usize;
    let mut stats = Stats::default();
    let (mut client_bytes, mut server_bytes) = (Vec::new(), Vec::new());
    let mut verifier_index = 0usize;
    for _ in 0..10_000 {
        let mut progress = false;
        // The prover's upload (its garbling of the request's keystream)
        // goes whenever it has some, as a driver streams it beside the
        // verifier's tables.
        while let Some(m) = p.next_upload().map_err(Stop::Prover)? {
            to_v.push_back(m);
        }
        if !to_v.is_empty() {
            stats.flights_up += 1;
        }
        let mut to_p = VecDeque::new();
        while let Some(mut m) = to_v.pop_front() {
            progress = true;
            if let Some(f) = hooks.prover_to_verifier.as_mut() {
                f(&mut m);
            }
            let b = m.encode();
            stats.up += b.len();
            let out = v.on_bytes(&b).map_err(Stop::Verifier)?;
            to_p.extend(out);
            // The record schedules as the network driver gets them: built
            // off the session (here: in line) and handed back.
            for job in v.record_plan_jobs() {
                let plan = job.build().map_err(Stop::Verifier)?;
                v.provide_record_plan(plan).map_err(Stop::Verifier)?;
            }
            while let Some(t) = v.next_tables().map_err(Stop::Verifier)? {
                to_p.push_back(t);
            }
        }
        while let Some(mut m) = to_p.pop_front() {
            if let Some(f) = hooks.verifier_to_prover.as_mut() {
                f(&mut m);
            }
            let b: Vec<u8> = VerifierMsg::encode(&m);
            let frames = match hooks.verifier_wire.as_mut() {
                Some(f) => {
                    verifier_index += 1;
                    f(verifier_index - 1, b)
                }
                None => vec![b],
            };
            for b in frames {
                stats.down += b.len();
                let out = p.on_verifier_bytes(&b).map_err(Stop::Prover)?;
                to_v.extend(out.to_verifier);
                to_server.extend(out.to_server);
            }
        }
        if !to_server.is_empty() {
            progress = true;
            client_bytes.extend_from_slice(&to_server);
            let mut rd = &to_server[..];
            while !rd.is_empty() {
                server
                    .read_tls(&mut rd)
                    .map_err(|e| Stop::Server(e.to_string()))?;
                if let Err(e) = server.process_new_packets() {
                    // Flush the server's alert to the prover, then stop.
                    let mut buf = Vec::new();
                    let _ = server.write_tls(&mut buf);
                    if !buf.is_empty() {
                        // What the prover sent the verifier before comes first.
                        for m in to_v.drain(..) {
                            v.on_bytes(&m.encode()).map_err(Stop::Verifier)?;
                        }
                        let out = p.on_server_bytes(&buf).map_err(Stop::Prover)?;
                        for m in out.to_verifier {
                            v.on_bytes(&m.encode()).map_err(Stop::Verifier)?;
                        }
                    }
                    return Err(Stop::Server(e.to_string()));
                }
            }
            to_server.clear();
            let mut buf = [0u8; 4096];
            loop {
                match server.reader().read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        request.extend_from_slice(&buf[..n]);
                        if let Some(saw) = &hooks.server_saw {
                            saw.borrow_mut().extend_from_slice(&buf[..n]);
                        }
                    }
                    Err(_) => break,
                }
            }
            if !responded && request.windows(4).any(|w| w == b"\r\n\r\n") {
                server.writer().write_all(response).unwrap();
                server.send_close_notify();
                responded = true;
            }
        }
        let mut buf = Vec::new();
        while server.wants_write() {
            server.write_tls(&mut buf).unwrap();
        }
        if !buf.is_empty() && !closed {
            progress = true;
            if let Some(f) = hooks.server_to_prover.as_mut() {
                f(flights, &mut buf);
            }
            server_bytes.extend_from_slice(&buf);
            flights += 1;
            let out = p.on_server_bytes(&buf).map_err(Stop::Prover)?;
            to_v.extend(out.to_verifier);
            to_server.extend(out.to_server);
            if hooks.close_after_flights == Some(flights) {
                closed = true;
                let out = p.on_server_closed().map_err(Stop::Prover)?;
                to_v.extend(out.to_verifier);
            }
        }
        if p.server_done() && p.records_done() && to_v.is_empty() && p.outcome().is_none() {
            let m = p.close().map_err(Stop::Prover)?;
            to_v.push_back(m);
            progress = true;
        }
        if let Some(o) = p.outcome() {
            let prover = o.clone();
            let verifier = v.finish().map_err(Stop::Verifier)?;
            return Ok(Done {
                prover,
                verifier,
                request_at_server: request,
                client_bytes,
                server_bytes,
                stats,
            });
        }
        if !progress {
            return Err(Stop::Stalled);
        }
    }
    Err(Stop::Stalled)
}

/// The record layout of a byte stream: (content type, payload length).
pub fn records(bytes: &[u8]) -> Vec<(u8, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i + 5 <= bytes.len() {
        let len = u16::from_be_bytes([bytes[i + 3], bytes[i + 4]]) as usize;
        out.push((bytes[i], len));
        i += 5 + len;
    }
    out
}

/// The byte range of the first handshake message of type `typ` in a
/// flight (messages inside records, as rustls writes them).
pub fn find_message(flight: &[u8], typ: u8) -> Option<core::ops::Range<usize>> {
    let mut i = 0;
    while i + 5 <= flight.len() {
        let len = u16::from_be_bytes([flight[i + 3], flight[i + 4]]) as usize;
        if flight[i] == 22 {
            let mut j = i + 5;
            while j + 4 <= i + 5 + len {
                let l =
                    u32::from_be_bytes([0, flight[j + 1], flight[j + 2], flight[j + 3]]) as usize;
                if flight[j] == typ {
                    return Some(j..j + 4 + l);
                }
                j += 4 + l;
            }
        }
        i += 5 + len;
    }
    None
}

/// The payload range of the first record of content type `ct`.
pub fn find_record(flight: &[u8], ct: u8) -> Option<core::ops::Range<usize>> {
    let mut i = 0;
    while i + 5 <= flight.len() {
        let len = u16::from_be_bytes([flight[i + 3], flight[i + 4]]) as usize;
        if flight[i] == ct {
            return Some(i + 5..i + 5 + len);
        }
        i += 5 + len;
    }
    None
}

/// The verifier's answer to `m`, with the garbled tables it streams
/// after a `Hello` (`VerifierSession::next_tables`).
pub fn answer(
    v: &mut VerifierSession,
    m: ProverMsg,
) -> Result<Vec<VerifierMsg>, webproof_mpc_tls::Error> {
    let mut out = v.on_message(m)?;
    while let Some(t) = v.next_tables()? {
        out.push(t);
    }
    Ok(out)
}

/// The verifier's answer to `hello` (`Setup`, then the garbled tables)
/// handed to the prover: what the prover then sends (its ClientHello).
pub fn preprocess(
    p: &mut ProverSession,
    v: &mut VerifierSession,
    hello: ProverMsg,
) -> webproof_mpc_tls::ProverOutput {
    let mut all = webproof_mpc_tls::ProverOutput::default();
    for m in answer(v, hello).unwrap() {
        let out = p.on_verifier(m).unwrap();
        all.to_verifier.extend(out.to_verifier);
        all.to_server.extend(out.to_server);
    }
    all
}

/// The verifier's output holds only bytes of `request` and `response` at
/// their true offsets, and the leaves and leaf hashes of `truth`, the
/// commitment to the true transcript (or none, if it could not be made).
pub fn only_true_bytes(
    v: &webproof_mpc_tls::VerifiedResponse,
    request: &[u8],
    response: &[u8],
    truth: Option<&webproof_attestation::TranscriptCommitment>,
) -> bool {
    let placed = |ranges: &[webproof_mpc_tls::response::RevealedRange], data: &[u8]| {
        ranges.iter().all(|r| {
            r.offset
                .checked_add(r.bytes.len())
                .and_then(|end| data.get(r.offset..end))
                == Some(&r.bytes[..])
        })
    };
    let leaves_true =
        truth.is_some_and(|c| c.leaves() == v.leaves && c.leaf_hashes() == v.leaf_hashes);
    // Request ranges said free of line ends hold no CR or LF.
    let free_true = v.request_crlf_free.iter().all(|r| {
        request
            .get(r.clone())
            .is_some_and(|b| !b.iter().any(|&b| b == b'\r' || b == b'\n'))
    });
    v.response_len == response.len()
        && v.request_len == request.len()
        && placed(&v.ranges, response)
        && placed(&v.request_ranges, request)
        && free_true
        && leaves_true
}

/// [`only_true_bytes`] of a TLS 1.3 session's proof
/// (`webproof_mpc_tls::tls13::response::Verified13`).
pub fn only_true_bytes13(
    v: &webproof_mpc_tls::tls13::response::Verified13,
    request: &[u8],
    response: &[u8],
    truth: Option<&webproof_attestation::TranscriptCommitment>,
) -> bool {
    let placed = |ranges: &[(usize, Vec<u8>)], data: &[u8]| {
        ranges.iter().all(|(at, bytes)| {
            at.checked_add(bytes.len())
                .and_then(|end| data.get(*at..end))
                == Some(&bytes[..])
        })
    };
    let leaves_true = match truth {
        Some(c) => c.leaves() == v.leaves && c.leaf_hashes() == v.leaf_hashes,
        // No commitment asked for: none may be stated.
        None => v.leaves.is_empty(),
    };
    let free_true = v.request_crlf_free.iter().all(|r| {
        request
            .get(r.clone())
            .is_some_and(|b| !b.iter().any(|&b| b == b'\r' || b == b'\n'))
    });
    v.response_len == response.len()
        && v.request_len == request.len()
        && placed(&v.ranges, response)
        && placed(&v.request_ranges, request)
        && free_true
        && leaves_true
}

/// Mutants of a byte field: a flipped bit in the middle, one byte
/// shorter, one byte longer.
pub fn bytes_mutants(b: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    if !b.is_empty() {
        let mut f = b.to_vec();
        f[b.len() / 2] ^= 1;
        out.push(f);
        out.push(b[..b.len() - 1].to_vec());
    }
    let mut l = b.to_vec();
    l.push(0);
    out.push(l);
    out
}

/// A fixed-size field with a flipped bit in the middle.
pub fn array_mutant<const N: usize>(a: &[u8; N]) -> [u8; N] {
    let mut f = *a;
    f[N / 2] ^= 1;
    f
}
