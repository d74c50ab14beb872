//! Warming the engine before a page's first proof.
//!
//! V8 first runs a WebAssembly function as baseline code (Liftoff) and
//! compiles it with its optimising compiler (TurboFan), in the background,
//! only once it has run for a while; calls after that run the optimised
//! code. A freshly loaded module therefore runs its first proof's hot
//! kernels (Ferret's tree expansion and LPN step, the proof engine's gate
//! evaluation and checks, the base OTs' curve arithmetic) mostly
//! unoptimised: on the Cable profile a page's first proof took about 190
//! ms longer than its later ones.
//!
//! [`warm`] runs the whole proxy-mode engine once, in memory, on a
//! synthetic session: base OT, SoftSpokenOT and Ferret (on small sets,
//! `WARM_FERRET`, so its code runs in several short iterations), then
//! the QuickSilver proof of a TLS 1.2 AES-128-GCM session (its PRF from
//! the premaster secret, a request and a response record) with one byte
//! of each record hidden, as the zero-knowledge path runs it. TLS 1.3's
//! key schedule runs the same compression circuits and kernels, at about
//! twice the cost; a warm-up on it measured no faster first proof.
//! Measured in chromium on this project's 2-core machine: the warm-up
//! takes about 0.43 s, and a page's first proof on the Cable profile
//! about 0.68 s instead of 0.86 s (`webproof bench -c bench/browser.toml`,
//! whose page preloads).
//!
//! It then runs the sessions' TLS client (rustls with the instrumented
//! provider, the configuration a proof uses) through a TLS 1.3 handshake,
//! a request and a 2 KB response against a rustls server in memory, whose
//! self-signed identity (`warm/identity.crt`, made for this and public) the
//! client trusts for this handshake only. The first session's handshake,
//! certificate path and record layer then run warm: the TLS phase of a
//! page's first proof was 11 to 25 ms shorter in the harness (Cable 182 to
//! 166 ms, Fiber 157 to 146, Mobile 5G 196 to 182, the 51 KB case 305 to
//! 280; medians of 10 to 20 samples, old and new package alternated),
//! for 149 KB more module (59 KB gzip) and a few milliseconds of warm-up.
//!
//! The prover and the verifier both run here and the verifier's result
//! must be the prover's, so the warm-up is also a self-test of this
//! browser's kernels (SIMD128 included) before any network traffic. The
//! session is made by `webproof_tlsproof::testing` (RustCrypto's AEAD and
//! HMAC outside any circuit); nothing of it is secret.
//!
//! The proof runs over a pair of links in memory ([`Link::memory_pair`]),
//! with each party's flights on the transport types a session uses: the
//! plain link, then the preprocessing stream of a multiplexed section for
//! Ferret's warm-up, then the plain link for the proof. The engine's
//! generic async functions (Ferret's check loop, the proof's gate
//! evaluation and segment closing) are compiled once per transport type;
//! over `MemoryIo`, as before, the warm-up ran copies no session runs. In
//! the harness (`bench/browser.toml`'s browser benches, old and new
//! package alternated, 12 samples each) the proof phase of a page's first
//! proof became 7 to 17 ms shorter (Cable 224 to 217 ms, Fiber 209 to
//! 197, Mobile 5G 244 to 228, the 51 KB case 1,325 to 1,312). An earlier
//! attempt put both on one boxed transport type (`dyn` calls on the hot
//! path) and lost 70 to 100 ms at 51 KB; here the types are the
//! session's own, and nothing is called through a pointer.
//!
//! What is still slower in a page's first proof than in later ones is not
//! the compiler catching up: starting the measured proof 1.5 s after the
//! warm-up, not at once, changed nothing (Cable and Mobile 5G, 8 samples
//! each). Code the warm-up does not run stays cold (the session core's own
//! checks of the handshake and of the transcript).

use crate::link::{Link, StreamIo};
use futures::io::AsyncWriteExt;
use rand::rngs::OsRng;
use webproof_core::{Channel, ChannelError, Error};
use webproof_ferret::params::{FerretConfig, LpnParams};
use webproof_tlsproof::session::{ProverOpening, SessionConfig, VerifierPreprocessed};
use webproof_tlsproof::testing::tls12_session;
use webproof_tlsproof::{Aead, Disclosure, Proven, Statement, Witness};

/// Plaintext bytes per record of the synthetic session: enough blocks that
/// every kernel runs its batched path, few enough that the warm-up stays
/// short.
const RECORD_LEN: usize = 256;

/// Ferret's sets for the warm-up: the sessions' code on small iterations
/// (a few thousand outputs per tree level instead of hundreds of
/// thousands), so the warm-up's COTs come in several short iterations.
/// Not a secure set, and needing none: nothing of the warm-up is secret
/// (a synthetic session between two parties in one browser tab, whose
/// COTs prove a made-up transcript and are thrown away). It is exempt from
/// the 128-bit bar that `webproof_ferret::params` holds every named set to,
/// so it is deliberately not one of them.
const WARM_FERRET: FerretConfig = FerretConfig {
    main: LpnParams::new(1 << 16, 8_192, 64, 10),
    setup: Some(LpnParams::new(1 << 14, 2_048, 16, 10)),
    first_main_trees: None,
};

/// What a page that will prove in MPC mode can do ahead, beside [`warm`].
///
/// First, build the MPC key derivation's garbling plans (the reduced PRF's
/// steps of the TLS 1.2 SHA-256 suites, whatever the group and EMS;
/// `webproof_mpc_tls::warm_plans`), which the engine keeps for every
/// later session of the module. A page's first MPC proof otherwise builds
/// them while the verifier's tables arrive, on the same thread: in
/// chromium the first proof's preprocessing took about 390 ms longer than
/// the next ones', 220 ms of it these plans (DevTools profile, loopback).
///
/// Then run the garbling kernels that [`warm`]'s proof does not: garble a
/// few AES-128 blocks chunk by chunk (the prover's dual-execution upload
/// and its audit of the verifier garble so), evaluate them from their
/// chunks and check the result against the circuit in the clear, so V8
/// has optimised them before a session needs them. Nothing of it is
/// secret: a made-up key and blocks, both sides in this tab.
pub fn warm_mpc() -> Result<(), String> {
    webproof_mpc_tls::warm_plans()
        .map_err(|e| format!("building the MPC key derivation's plans failed: {e}"))?;
    garbling()
}

/// AES-128 blocks garbled, evaluated and decoded in memory; `Err` if the
/// decoded output is not the circuit's output in the clear.
fn garbling() -> Result<(), String> {
    use webproof_mpc::evaluate::Evaluator;
    use webproof_mpc::garble::Garbler;
    let fail = |e: webproof_mpc::Error| format!("the garbling warm-up failed: {e}");
    let circuit = webproof_circuits::aes::aes128_blocks_circuit(GARBLED_BLOCKS);
    let inputs: Vec<Vec<bool>> = circuit
        .inputs
        .iter()
        .enumerate()
        .map(|(g, wires)| (0..wires.len()).map(|i| (i * 7 + g) % 3 == 0).collect())
        .collect();
    let mut rng = OsRng;
    let delta = webproof_core::Block(rand::Rng::gen::<u128>(&mut rng)).with_lsb(true);
    let mut garbler = Garbler::new(&circuit, delta, &mut rng).map_err(fail)?;
    // Small chunks: the kernels run in many calls, as a session's do.
    garbler.set_chunk_tables(1 << 10);
    let chunks = garbler.garble_all();
    let mut evaluator = Evaluator::new(&circuit).map_err(fail)?;
    for (group, bits) in inputs.iter().enumerate() {
        let labels = garbler.encode(group, bits).map_err(fail)?;
        evaluator.set_input(group, &labels).map_err(fail)?;
    }
    for chunk in &chunks {
        evaluator.feed(chunk).map_err(fail)?;
    }
    evaluator.finish().map_err(fail)?;
    let decoded = evaluator
        .decode(&garbler.decoding().map_err(fail)?)
        .map_err(fail)?;
    if decoded != circuit.eval(&inputs) {
        return Err("the garbling warm-up decoded another output than the circuit's".into());
    }
    Ok(())
}

/// AES-128 blocks of [`garbling`]: about 40 K AND gates, a few tens of
/// chunks.
const GARBLED_BLOCKS: usize = 6;

/// Run the engine once on a synthetic session, prover and verifier in
/// memory; `Err` names the step that failed (a broken kernel in this
/// browser, never the network).
pub fn warm() -> Result<(), String> {
    let request: Vec<u8> = (0..RECORD_LEN).map(|i| b'a' + (i % 26) as u8).collect();
    let response: Vec<u8> = (0..RECORD_LEN).map(|i| b'A' + (i % 26) as u8).collect();
    let mut session = tls12_session(Aead::Aes128Gcm, 1, &[&request], &[&response]);
    // All but the last byte of each record opened: the keystream of every
    // block is proven, as for a redacted response.
    session.statement.sent.disclosure = Disclosure::Ranges(vec![(0, 0..RECORD_LEN - 1)]);
    session.statement.recv.disclosure = Disclosure::Ranges(vec![(0, 0..RECORD_LEN - 1)]);
    let config = SessionConfig {
        ferret: WARM_FERRET,
        ..SessionConfig::default()
    };
    let (proved, verified) = futures::executor::block_on(prove_over_links(
        &session.statement,
        &session.witness,
        config,
    ));
    let proved =
        proved.map_err(|e| format!("the warm-up proof failed on the prover's side: {e}"))?;
    let verified =
        verified.map_err(|e| format!("the warm-up proof was refused by its verifier: {e}"))?;
    if proved != verified {
        return Err("the warm-up proof's prover and verifier disagree on what was proven".into());
    }
    handshake()
}

/// The proof of `statement` between a prover and a verifier joined by a
/// pair of links in memory, each side's flight in the order and over the
/// transport types of a session (`crate::prove`): the opening and the
/// bootstrap on the plain link, Ferret's warm-up on the preprocessing stream
/// of a multiplexed section (whose relay stream carries nothing), the proof
/// on the plain link again. The engine's generic functions are compiled
/// per transport type, so this runs the very copies a session runs, and
/// leaves them optimised for its first proof.
async fn prove_over_links(
    statement: &Statement,
    witness: &Witness,
    config: SessionConfig,
) -> (Result<Proven, String>, Result<Proven, String>) {
    let (prover_link, verifier_link) = Link::memory_pair();
    let prover = async {
        let opening = ProverOpening::new(config, &mut OsRng)?;
        let mut ch = Channel::new(prover_link.plain());
        ch.send(&opening.message()).await?;
        ch.flush().await?;
        let mut pre = opening.bootstrap(&mut ch, &mut OsRng).await?;
        let mut pch = section(&prover_link)?;
        pre.warm_up(&mut pch).await?;
        end_section(pch).await?;
        let (proven, _) = pre.prove(ch, statement, witness, &CONTEXT).await?;
        Ok::<_, Error>(proven)
    };
    let verifier = async {
        let mut ch = Channel::new(verifier_link.plain());
        let mut pre = VerifierPreprocessed::bootstrap(&mut ch, config, &mut OsRng).await?;
        ch.flush().await?;
        let mut pch = section(&verifier_link)?;
        pre.warm_up(&mut pch).await?;
        end_section(pch).await?;
        let (proven, _) = pre.verify(ch, statement, &CONTEXT, &mut OsRng).await?;
        Ok::<_, Error>(proven)
    };
    let (proved, verified) = futures::join!(prover, verifier);
    (
        proved.map_err(|e| e.to_string()),
        verified.map_err(|e| e.to_string()),
    )
}

/// The proof's session context (any 32 bytes both sides share).
const CONTEXT: [u8; 32] = [0; 32];

/// A multiplexed section on `link` whose relay stream is finished at once:
/// its preprocessing stream, on which the link never yields to an event
/// loop (it does so only while the relay is open).
fn section(link: &Link) -> Result<Channel<StreamIo>, ChannelError> {
    let (relay, preprocessing) = link.start_mux();
    relay.finish()?;
    Ok(Channel::new(preprocessing))
}

/// Close a section's preprocessing stream, as a session does after
/// Ferret's warm-up: the end marker goes out and the link is plain again.
async fn end_section(ch: Channel<StreamIo>) -> Result<(), Error> {
    let mut io = ch.into_inner().await?;
    io.close().await.map_err(ChannelError::from)?;
    Ok(())
}

/// The warm-up server's certificate and key: a self-signed P-256
/// identity for `warm-up.webproof.invalid` made for this purpose and
/// public (it is in the source); the client trusts it only in
/// [`handshake`].
const IDENTITY_CERT: &[u8] = include_bytes!("warm/identity.crt");
const IDENTITY_KEY: &[u8] = include_bytes!("warm/identity.key");

/// The warm-up client's clock: a day into the identity's validity, so
/// that a page whose clock is wrong still warms up (a session checks
/// certificates against the page's clock).
#[derive(Debug)]
struct IdentityClock;

impl rustls::time_provider::TimeProvider for IdentityClock {
    fn current_time(&self) -> Option<rustls::pki_types::UnixTime> {
        // notBefore 2026-11-28T06:09:05Z, plus a day.
        const SECS: u64 = 1_795_846_145 + 86_400;
        Some(rustls::pki_types::UnixTime::since_unix_epoch(
            std::time::Duration::from_secs(SECS),
        ))
    }
}

/// A TLS 1.3 handshake, a request and a response in memory between the
/// sessions' rustls client (the same configuration as a proof's, with the
/// warm-up identity as an extra root) and a rustls server: the client's
/// handshake, certificate path and record layer run before the first
/// session does.
fn handshake() -> Result<(), String> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
    use std::io::Write;
    use webproof_tls_provider::{client_config, ClientOptions, CollectingKeyLog};
    let fail =
        |what: &str, e: &dyn std::fmt::Display| format!("the warm-up handshake: {what}: {e}");
    let time = std::sync::Arc::new(IdentityClock);
    let client_cfg = client_config(
        &ClientOptions {
            ca_pems: &[IDENTITY_CERT.to_vec()],
            ..Default::default()
        },
        CollectingKeyLog::new(),
        time,
    )
    .map_err(|e| fail("client", &e))?;
    let cert = CertificateDer::from_pem_slice(IDENTITY_CERT)
        .map_err(|e| fail("certificate", &format!("{e:?}")))?;
    let key =
        PrivateKeyDer::from_pem_slice(IDENTITY_KEY).map_err(|e| fail("key", &format!("{e:?}")))?;
    let server_cfg = rustls::ServerConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_protocol_versions(&[&rustls::version::TLS13])
    .map_err(|e| fail("server", &e))?
    .with_no_client_auth()
    .with_single_cert(vec![cert], key)
    .map_err(|e| fail("server", &e))?;
    let name = ServerName::try_from("warm-up.webproof.invalid").map_err(|e| fail("name", &e))?;
    let mut client: rustls::Connection = rustls::ClientConnection::new(client_cfg, name)
        .map_err(|e| fail("client", &e))?
        .into();
    let mut server: rustls::Connection =
        rustls::ServerConnection::new(std::sync::Arc::new(server_cfg))
            .map_err(|e| fail("server", &e))?
            .into();
    let request = b"GET / HTTP/1.1\r\nhost: warm-up.webproof.invalid\r\n\r\n";
    let response = [b'x'; 2048];
    client
        .writer()
        .write_all(request)
        .map_err(|e| fail("request", &e))?;
    let (mut got_request, mut got_response, mut responded) = (Vec::new(), Vec::new(), false);
    // Each round moves what either side has to send; a handful suffice.
    for _ in 0..16 {
        deliver(&mut client, &mut server, &mut got_request)
            .map_err(|e| fail("to the server", &e))?;
        if !responded && got_request.len() == request.len() && !server.is_handshaking() {
            server
                .writer()
                .write_all(&response)
                .map_err(|e| fail("response", &e))?;
            responded = true;
        }
        deliver(&mut server, &mut client, &mut got_response)
            .map_err(|e| fail("to the client", &e))?;
        if got_response.len() == response.len() {
            break;
        }
    }
    if got_request != request || got_response != response {
        return Err("the warm-up handshake did not carry its request and response".into());
    }
    Ok(())
}

/// Move what `from` has to send into `to`, and the plaintext `to` then
/// holds into `got`.
fn deliver(
    from: &mut rustls::Connection,
    to: &mut rustls::Connection,
    got: &mut Vec<u8>,
) -> Result<(), Box<dyn std::error::Error>> {
    use std::io::Read;
    let mut wire = Vec::new();
    while from.wants_write() {
        from.write_tls(&mut wire)?;
    }
    let mut rd = &wire[..];
    while !rd.is_empty() {
        to.read_tls(&mut rd)?;
        to.process_new_packets()?;
    }
    let mut buf = [0u8; 4096];
    while let Ok(n) = to.reader().read(&mut buf) {
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The warm-up proves and verifies natively too (the kernels' native
    /// paths); the browser test runs it in chromium (`preload=1`).
    #[test]
    fn warm_up_verifies() {
        warm().unwrap();
    }

    #[test]
    fn mpc_warm_up_garbles_and_evaluates_aes() {
        warm_mpc().unwrap();
        assert!(webproof_circuits::aes::aes128_blocks_circuit(GARBLED_BLOCKS).and_count() > 30_000);
    }
}
