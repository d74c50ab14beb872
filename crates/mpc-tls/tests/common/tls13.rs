//! The TLS 1.3 parts shared by the integration tests: a rustls TLS 1.3
//! server and a one-thread driver of a TLS 1.3 session (every message
//! encoded and decoded on its way, with hooks on each), as `super::run`
//! is for TLS 1.2.

use super::{Certs, FlightHook, MsgHook, Stop};
use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;
use std::sync::Arc;
use webproof_mpc_tls::tls13::{Tls13ProverSession, Tls13VerifierSession};
use webproof_mpc_tls::{ProverMsg, VerifierMsg};
use webproof_tls::KxGroup;

/// A rustls TLS 1.3 server (every suite and group of the ring provider),
/// asking for a client certificate with `client_auth`.
pub fn server13(c: &Certs, client_auth: bool) -> rustls::ServerConnection {
    server13_groups(c, client_auth, &[])
}

/// [`server13`] running only `groups` (empty: every group).
pub fn server13_groups(
    c: &Certs,
    client_auth: bool,
    groups: &[KxGroup],
) -> rustls::ServerConnection {
    server13_with(c, client_auth, groups, &[])
}

/// [`server13_groups`] running only `suites` too (empty: every suite).
pub fn server13_with(
    c: &Certs,
    client_auth: bool,
    groups: &[KxGroup],
    suites: &[webproof_tls::CipherSuite],
) -> rustls::ServerConnection {
    let mut provider = rustls::crypto::ring::default_provider();
    if !suites.is_empty() {
        provider
            .cipher_suites
            .retain(|s| suites.iter().any(|k| k.code() == u16::from(s.suite())));
    }
    if !groups.is_empty() {
        provider
            .kx_groups
            .retain(|g| groups.iter().any(|k| k.code() == u16::from(g.name())));
    }
    let provider = Arc::new(provider);
    let b = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap();
    let b = if client_auth {
        let mut roots = rustls::RootCertStore::empty();
        roots.add(c.chain[1].clone()).unwrap();
        let v =
            rustls::server::WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                .allow_unauthenticated()
                .build()
                .unwrap();
        b.with_client_cert_verifier(v)
    } else {
        b.with_no_client_auth()
    };
    let mut cfg = b
        .with_single_cert(
            c.chain.clone(),
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(c.key_der.clone())),
        )
        .unwrap();
    // The test compares the parties' key shares with the server's keys.
    cfg.enable_secret_extraction = true;
    rustls::ServerConnection::new(Arc::new(cfg)).unwrap()
}

/// Hooks of a TLS 1.3 run.
#[derive(Default)]
pub struct Hooks13 {
    pub prover_to_verifier: Option<MsgHook<ProverMsg>>,
    pub verifier_to_prover: Option<MsgHook<VerifierMsg>>,
    pub server_to_prover: Option<FlightHook>,
    /// The server sends a KeyUpdate before its response.
    pub key_update: bool,
    /// Where the server's decrypted request goes as it reads it, so that
    /// a failed run still tells what reached the server.
    pub server_saw: Option<Rc<RefCell<Vec<u8>>>>,
}

pub struct Done13 {
    pub p: Tls13ProverSession,
    pub v: Tls13VerifierSession,
    pub server: rustls::ServerConnection,
    /// What the server read, decrypted.
    pub request: Vec<u8>,
    /// Every byte the server wrote after the handshake was done.
    pub server_bytes: Vec<u8>,
    /// Bytes each way: prover → verifier, verifier → prover.
    pub up: usize,
    pub down: usize,
}

/// Run the handshake: every message encoded and decoded on its way.
pub fn handshake(
    p: Tls13ProverSession,
    hello: ProverMsg,
    v: Tls13VerifierSession,
    server: rustls::ServerConnection,
    hooks: Hooks13,
) -> Result<Done13, Stop> {
    run13(p, hello, v, server, hooks, None)
}

/// Run a session: the handshake, and with `response` the request too,
/// which the server answers with `response` and close_notify once it has
/// read a whole request head.
pub fn run13(
    mut p: Tls13ProverSession,
    hello: ProverMsg,
    mut v: Tls13VerifierSession,
    mut server: rustls::ServerConnection,
    mut hooks: Hooks13,
    response: Option<&[u8]>,
) -> Result<Done13, Stop> {
    let (mut request, mut server_bytes, mut responded) = (Vec::new(), Vec::new(), false);
    let mut to_v: VecDeque<ProverMsg> = VecDeque::from([hello]);
    let mut to_server = Vec::new();
    let (mut up, mut down, mut flights) = (0, 0, 0);
    for _ in 0..1000 {
        let mut progress = false;
        // The prover's upload (its garbling of the request's keystream)
        // goes whenever it has some, as a driver streams it beside the
        // verifier's tables.
        while let Some(m) = p.next_upload().map_err(Stop::Prover)? {
            to_v.push_back(m);
        }
        let mut to_p = VecDeque::new();
        while let Some(mut m) = to_v.pop_front() {
            progress = true;
            if let Some(f) = hooks.prover_to_verifier.as_mut() {
                f(&mut m);
            }
            let b = m.encode();
            up += b.len();
            to_p.extend(v.on_bytes(&b).map_err(Stop::Verifier)?);
            while let Some(t) = v.next_tables().map_err(Stop::Verifier)? {
                to_p.push_back(t);
            }
        }
        while let Some(mut m) = to_p.pop_front() {
            progress = true;
            if let Some(f) = hooks.verifier_to_prover.as_mut() {
                f(&mut m);
            }
            let b = m.encode();
            down += b.len();
            let out = p.on_verifier_bytes(&b).map_err(Stop::Prover)?;
            to_v.extend(out.to_verifier);
            to_server.extend(out.to_server);
        }
        if !to_server.is_empty() {
            progress = true;
            let mut rd = &to_server[..];
            while !rd.is_empty() {
                server
                    .read_tls(&mut rd)
                    .map_err(|e| Stop::Server(e.to_string()))?;
                if let Err(e) = server.process_new_packets() {
                    return Err(Stop::Server(e.to_string()));
                }
            }
            to_server.clear();
            let mut chunk = [0u8; 4096];
            while let Ok(n) = std::io::Read::read(&mut server.reader(), &mut chunk) {
                if n == 0 {
                    break;
                }
                request.extend_from_slice(&chunk[..n]);
                if let Some(saw) = &hooks.server_saw {
                    saw.borrow_mut().extend_from_slice(&chunk[..n]);
                }
            }
            if let Some(resp) = response {
                if !responded && request.windows(4).any(|w| w == b"\r\n\r\n") {
                    if hooks.key_update {
                        server.refresh_traffic_keys().unwrap();
                    }
                    std::io::Write::write_all(&mut server.writer(), resp).unwrap();
                    server.send_close_notify();
                    responded = true;
                }
            }
        }
        let mut buf = Vec::new();
        while server.wants_write() {
            server.write_tls(&mut buf).unwrap();
        }
        if !buf.is_empty() {
            progress = true;
            if let Some(f) = hooks.server_to_prover.as_mut() {
                f(flights, &mut buf);
            }
            flights += 1;
            if p.handshake_done() {
                server_bytes.extend_from_slice(&buf);
            }
            let out = p.on_server_bytes(&buf).map_err(Stop::Prover)?;
            to_v.extend(out.to_verifier);
            to_server.extend(out.to_server);
        }
        let done = p.handshake_done() && v.handshake_done() && to_v.is_empty();
        let finished = match response {
            None => done && to_server.is_empty(),
            Some(_) => done && responded && p.request_sent() && v.request_recorded() && !progress,
        };
        if finished && response.is_some() {
            // The response is complete: `Close`, and the verifier's
            // `CloseAck` lets the prover decrypt it.
            // Both through the hooks, as every other message.
            let mut m = p.close().map_err(Stop::Prover)?;
            if let Some(f) = hooks.prover_to_verifier.as_mut() {
                f(&mut m);
            }
            let b = m.encode();
            up += b.len();
            for mut a in v.on_bytes(&b).map_err(Stop::Verifier)? {
                if let Some(f) = hooks.verifier_to_prover.as_mut() {
                    f(&mut a);
                }
                let b = a.encode();
                down += b.len();
                p.on_verifier_bytes(&b).map_err(Stop::Prover)?;
            }
        }
        if finished {
            return Ok(Done13 {
                p,
                v,
                server,
                request,
                server_bytes,
                up,
                down,
            });
        }
        if !progress && response.is_some() && done && !responded {
            return Err(Stop::Stalled);
        }
        if !progress {
            return Err(Stop::Stalled);
        }
    }
    Err(Stop::Stalled)
}
