//! Both parties' runs against each other on the simulated runtime
//! (`webproof_session::sim`): an in-memory link with a one-way delay and
//! fault hooks, an in-memory rustls server, seeded randomness and virtual
//! time, so timeouts are tested at their real lengths in no wall-clock
//! time and a run's figures do not depend on the machine's load.
//!
//! The same runs as `webproof serve` and `webproof prove` (tokio) and the
//! page (the browser); only the runtime differs.

mod common;

use common::*;
use std::time::Duration;
use webproof_proxy::protocol::SessionId;
use webproof_session::sim::{Faults, LinkFaults};
use webproof_session::verifier::verify;
use webproof_session::{Error, Mode, Runtime};

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
    let wall = std::time::Instant::now();
    let r = pair
        .sim
        .block_on(pair.prove_proxy(p, pair.proxy_config(Vec::new())));
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
