//! How a session ends when a party, the link or the server stops playing
//! along, on the simulated runtime: a party gone mid-protocol, a frame
//! larger than the verifier takes, a link cut in the middle, a server that
//! closes early or never finishes its response, a relay that changes the
//! verdict on its way, and in MPC mode a verifier that stops after the
//! prover's `Close`.
//!
//! These ran over loopback sockets in `webproof-net`'s tests, asserting
//! that each end came "well before any timeout" on the wall clock; here
//! the clock is virtual, so each asserts when the end came, exactly.

mod common;

use common::*;
use futures::io::{AsyncReadExt, AsyncWriteExt};
use std::time::Duration;
use webproof_disclosure::http::RevealItem;
use webproof_proxy::protocol::{ProverMsg, SessionId, PROTOCOL_VERSION};
use webproof_session::frame::{read_frame, send_msg};
use webproof_session::sim::{Edit, Faults, LinkFaults, SimLink};
use webproof_session::verifier::verify;
use webproof_session::{Error, Mode, Runtime};

/// An end that came from noticing it, not from a timeout: every timeout of
/// both parties is longer (the old tests' bound, on the wall clock).
const PROMPT: Duration = Duration::from_secs(4);

/// A proxy-mode hello for the pair's server, sent by hand.
async fn send_hello(p: &mut SimLink) {
    let hello = ProverMsg::Hello {
        version: PROTOCOL_VERSION,
        host: HOST.into(),
        port: 443,
        api_key: None,
        expected_cots: 1_000_000,
        mpc: None,
    };
    send_msg(p, &hello).await.unwrap();
}

/// A prover gone before its hello, after it, or halfway through a relay
/// frame: the verifier ends with an error as soon as the link ends.
#[test]
fn a_prover_gone_mid_protocol_ends_the_verifier_at_once() {
    for stage in 0..3 {
        let pair = Pair::new(100 + stage);
        let (mut p, v) = pair.sim.link(pair.delay, LinkFaults::default());
        let r = pair.sim.block_on(async {
            let prover = async move {
                if stage >= 1 {
                    send_hello(&mut p).await;
                }
                if stage >= 2 {
                    // Half a relay frame, then gone.
                    p.write_all(&[100, 0, 0, 0, 0, 22, 3]).await.unwrap();
                }
                drop(p);
            };
            futures::join!(prover, pair.verify(v)).1
        });
        assert!(r.is_err(), "stage {stage}");
        assert!(
            pair.sim.now() < PROMPT,
            "stage {stage}: {:?}",
            pair.sim.now()
        );
    }
}

/// A verifier that reads the hello and hangs up: the prover says the
/// link ended, at once.
#[test]
fn a_verifier_gone_mid_protocol_ends_the_prover_at_once() {
    let pair = Pair::new(110);
    let (p, mut v) = pair.sim.link(pair.delay, LinkFaults::default());
    let verifier = async move {
        let _ = read_frame(&mut v, 1 << 20).await;
        drop(v);
    };
    let prover = pair.prove_proxy(p, pair.proxy_config(Vec::new()));
    let (err, ()) = pair.sim.block_on(futures::future::join(prover, verifier));
    let err = err.unwrap_err().to_string();
    assert!(
        err.contains("disconnect") || err.contains("closed"),
        "{err}"
    );
    assert!(pair.sim.now() < PROMPT, "{:?}", pair.sim.now());
}

/// A hello frame announced larger than the verifier's `max_message` is
/// refused from its length prefix alone, and the link is closed.
#[test]
fn an_oversized_hello_is_refused_from_its_header() {
    let mut pair = Pair::new(120);
    pair.verifier.max_message = 1024;
    let (mut p, v) = pair.sim.link(pair.delay, LinkFaults::default());
    let err = pair.sim.block_on(async {
        // A frame header announcing 1 MiB, and nothing after it.
        p.write_all(&(1u32 << 20).to_le_bytes()).await.unwrap();
        pair.verify(v).await.map(|_| ()).unwrap_err()
    });
    assert!(err.to_string().contains("1048576"), "{err}");
    assert!(pair.sim.now() < PROMPT, "{:?}", pair.sim.now());
    // The verifier hung up: the prover's end reads to its end.
    let mut rest = Vec::new();
    pair.sim.block_on(p.read_to_end(&mut rest)).unwrap();
}

/// A first preprocessing message (after the hello, ahead of the
/// multiplexed section) larger than any honest one is refused at its
/// length prefix, without the verifier waiting for the bytes it announces:
/// the link stays open, so only the prefix can end the session.
#[test]
fn an_oversized_opening_message_is_refused_from_its_header() {
    let pair = Pair::new(130);
    let (mut p, v) = pair.sim.link(pair.delay, LinkFaults::default());
    let err = pair.sim.block_on(async {
        send_hello(&mut p).await;
        p.write_all(&(64u32 << 10).to_le_bytes()).await.unwrap();
        p.write_all(&[7; 100]).await.unwrap();
        pair.verify(v).await.map(|_| ()).unwrap_err()
    });
    assert!(err.to_string().contains("65536-byte frame"), "{err}");
    assert!(pair.sim.now() < PROMPT, "{:?}", pair.sim.now());
    drop(p);
}

/// The link cut, verifier to prover, at `fractions` of an honest session's
/// bytes that way: both parties end with an error, the prover a lost link
/// (or, in MPC mode after its `Close`, a verifier that escaped the audit),
/// long before any timeout.
fn cuts_end_both_sides_promptly(mode: Mode, seed: u64, cuts: impl Fn(u64, u64) -> Vec<u64>) {
    let honest = Pair::new(seed).run(mode).0.unwrap().stats;
    let (pre, online) = (honest.downloaded_preprocess, honest.downloaded_online);
    for cut in cuts(pre, online) {
        let mut pair = Pair::new(seed);
        let f = Faults {
            cut_after: Some(cut),
            ..Faults::default()
        };
        pair.faults = LinkFaults::one_way(false, f);
        let (p, v) = pair.run(mode);
        let e = p.unwrap_err();
        assert!(
            matches!(
                e,
                Error::Disconnected(_) | Error::Io { .. } | Error::VerifierCheated { .. }
            ),
            "{mode:?}: cut after {cut}: {e:?}"
        );
        assert!(v.is_err(), "{mode:?}: cut after {cut}");
        assert!(
            pair.sim.now() < PROMPT,
            "{mode:?}: cut after {cut}: {:?}",
            pair.sim.now()
        );
    }
}

/// Proxy mode: cuts at a tenth, half and nine tenths of the verifier's
/// bytes (in the multiplexed section with the TLS session and the
/// preprocessing, and in the proof).
#[test]
fn a_cut_link_ends_both_sides_promptly() {
    cuts_end_both_sides_promptly(Mode::Proxy, 150, |pre, online| {
        let total = pre + online;
        vec![total / 10, total / 2, total * 9 / 10]
    });
}

/// MPC mode: cuts halfway through the garbled tables and halfway through
/// the online phase (the server connection open, the proof's setup beside
/// the session).
#[test]
fn a_cut_mpc_link_ends_both_sides_promptly() {
    cuts_end_both_sides_promptly(Mode::Mpc, 160, |pre, online| {
        assert!(pre > 1 << 20 && online > 1 << 10, "{pre} {online}");
        vec![pre / 2, pre + online / 2]
    });
}

/// A response that never completes (no framing, the connection left open)
/// holds back the next request: the prover's limit names it, and comes at
/// its length exactly.
#[test]
fn a_response_that_never_completes_is_named_at_the_limit() {
    let mut pair = Pair::new(170);
    pair.server = Server::Unframed;
    pair.request = Pair::gets(&["/unframed", "/account"]);
    pair.limit = Duration::from_secs(3);
    let (p, _v) = pair.run(Mode::Proxy);
    let err = p.unwrap_err();
    assert!(matches!(err, Error::Timeout(_)), "{err:?}");
    assert!(
        err.to_string()
            .contains("waiting for response 1 of 2 to complete before request 2"),
        "{err}"
    );
    assert_eq!(pair.prover_done.get(), pair.limit);
}

/// A server that closes after the first of three queued requests: a clear
/// error naming how far it got, in both modes (MPC mode sends them all in
/// one flight, so it learns only from the responses).
#[test]
fn a_server_closing_after_the_first_response_says_how_far() {
    for (mode, seed) in [(Mode::Proxy, 180), (Mode::Mpc, 181)] {
        let mut pair = Pair::new(seed);
        pair.server = Server::ClosesAfterFirst;
        pair.request = Pair::gets(&["/close", "/json", "/html"]);
        let err = pair.run(mode).0.unwrap_err().to_string();
        assert!(
            err.contains("the server closed the connection after request 1 of 3"),
            "{mode:?}: {err}"
        );
        if mode == Mode::Proxy {
            assert!(err.contains("Connection: close"), "{err}");
        }
    }
}

/// MPC mode: a verifier that goes silent once the server has answered
/// (so no `CloseAck`, no `Δ` reveal, no audit) is a cheating verifier, not
/// a network failure: the prover says so, and where its runtime recorded
/// it. (The record itself, a file, is `webproof-net`'s and tested there.)
#[test]
fn an_mpc_verifier_stopping_at_close_is_reported_as_cheating() {
    let mut pair = Pair::new(190);
    pair.faults.to_prover.hold = Some(pair.server_closed.clone());
    let (p, v) = pair.sim.link(pair.delay, pair.faults.clone());
    let server = pair.server(true);
    let id = SessionId::random(&mut pair.sim.rng());
    let verifier = verify(&pair.sim, v, &server, &pair.verifier, id, None);
    let prover = pair.prove_mpc(p, &server, vec![RevealItem::All], |_| {
        "it is recorded in /tmp/flagged.jsonl".into()
    });
    let (e, _v) = pair.sim.block_on(futures::future::join(prover, verifier));
    let e = e.unwrap_err();
    assert!(
        matches!(&e, Error::VerifierCheated { what, .. } if what.contains("after the prover's Close")),
        "{e:?}"
    );
    assert_eq!(e.kind(), "verifier_cheated");
    assert_eq!(e.decided_by(), "verifier");
    let text = e.to_string();
    assert!(text.contains("escapes the audit"), "{text}");
    assert!(
        text.contains("Do not retry with the same credentials"),
        "{text}"
    );
    assert!(text.contains("recorded in /tmp/flagged.jsonl"), "{text}");
}

/// A relay between the parties that flips one hex digit of the first
/// `"digest":"` value the verifier sends (the verdict's digest of the
/// client's revealed bytes): the verifier verified, but the prover refuses
/// a verdict that is not about the bytes it holds.
#[test]
fn a_verdict_with_a_wrong_digest_is_refused() {
    const KEY: &[u8] = b"\"digest\":\"";
    let mut pair = Pair::new(200);
    let mut window = Vec::with_capacity(KEY.len() + 1);
    let mut flipped = false;
    let edit = Edit::new(move |_, chunk: &mut [u8]| {
        for b in chunk {
            if !flipped && window == KEY {
                *b = if *b == b'0' { b'1' } else { b'0' };
                flipped = true;
            }
            window.push(*b);
            if window.len() > KEY.len() {
                window.remove(0);
            }
        }
    });
    pair.faults.to_prover.edit = Some(edit);
    let (p, v) = pair.sim.link(pair.delay, pair.faults.clone());
    let reveal = webproof_disclosure::http::parse_items(&["all", "hide-recv:100-101"]).unwrap();
    let (p, v) = pair.sim.block_on(futures::future::join(
        pair.prove_proxy(p, pair.proxy_config(reveal)),
        pair.verify(v),
    ));
    match p {
        Err(Error::Proxy(webproof_proxy::ProxyError::Verdict { direction, detail })) => {
            assert_eq!(direction, webproof_proxy::Direction::Sent);
            assert!(detail.contains("digest"), "{detail}");
        }
        other => panic!("{:?}", other.map(|_| ())),
    }
    // The verifier itself verified the session.
    v.unwrap();
}
