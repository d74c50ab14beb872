//! What the parties refuse, and say why, on the simulated runtime: a
//! prover without the verifier's API key, a server whose certificate the
//! verifier does not trust or that is not the named server, a transcript
//! over the verifier's limit, a server that does not speak TLS, an MPC
//! request over the verifier's cap. And what an honest session states
//! beside the bytes, per pinned TLS version.
//!
//! These ran over loopback sockets against the HTTPS fixture in
//! `webproof-net`'s tests; nothing in them is the tokio runtime's.

mod common;

use common::*;
use std::cell::Cell;
use std::time::Duration;
use webproof_disclosure::http::RevealItem;
use webproof_proxy::protocol::RejectKind;
use webproof_proxy::{RootStore, TlsVersion};
use webproof_session::sim::LinkFaults;
use webproof_session::{Error, Mode};

/// An end that came from noticing it, not from a timeout (the old tests'
/// wall-clock bound, here exact).
const PROMPT: Duration = Duration::from_secs(4);

/// A verifier that requires API keys refuses a prover without one or with
/// a wrong one, with the reason code and without echoing the key; the
/// right key (any of the configured ones) is admitted.
#[test]
fn api_keys_are_required_when_configured() {
    for (i, (key, ok)) in [
        (None, false),
        (Some("wrong-key"), false),
        (Some("s3cret-key-2"), true),
    ]
    .into_iter()
    .enumerate()
    {
        let mut pair = Pair::new(140 + i as u64);
        pair.verifier.require_api_key("s3cret-key-1");
        pair.verifier.require_api_key("s3cret-key-2");
        let (p, v) = pair.sim.link(pair.delay, LinkFaults::default());
        let mut config = pair.proxy_config(vec![RevealItem::All]);
        config.api_key = key.map(String::from);
        let (r, vr) = pair.sim.block_on(futures::future::join(
            pair.prove_proxy(p, config),
            pair.verify(v),
        ));
        if ok {
            assert_eq!(r.unwrap().output, vr.unwrap().output);
            continue;
        }
        let err = r.unwrap_err();
        assert!(err.to_string().contains("API key"), "{key:?}: {err}");
        // The prover reads the reason code, not only the text.
        assert!(
            matches!(&err, Error::Refused(r) if r.kind == RejectKind::Unauthorized),
            "{err:?}"
        );
        assert!(matches!(vr, Err(Error::Unauthorized(_))), "{vr:?}");
        // The key itself never appears in the error.
        assert!(!err.to_string().contains("wrong-key"));
    }
}

/// A server certificate the verifier does not trust ends a session of
/// either mode on both sides with the certificate's reason.
#[test]
fn an_untrusted_certificate_is_refused() {
    for (mode, seed) in [(Mode::Proxy, 300), (Mode::Mpc, 301)] {
        let mut pair = Pair::new(seed);
        // The verifier trusts the public roots only, not the pair's CA.
        pair.verifier.roots = if mode == Mode::Proxy {
            RootStore::webpki_roots()
        } else {
            RootStore::empty()
        };
        let (p, v) = pair.run(mode);
        let e = p.unwrap_err();
        let ve = v.map(|_| ()).unwrap_err();
        match mode {
            Mode::Proxy => assert!(e.to_string().contains("certificate"), "{e}"),
            Mode::Mpc => {
                assert!(
                    matches!(&e, Error::Mpc(webproof_mpc_tls::Error::Aborted(why)) if why.contains("certificate")),
                    "{e}"
                );
                assert!(
                    matches!(ve, Error::Mpc(webproof_mpc_tls::Error::Tls(_))),
                    "{ve}"
                );
            }
        }
    }
}

/// A name the server's certificate does not hold: the prover's TLS client
/// refuses it, and the verifier ends too.
#[test]
fn a_wrong_server_name_is_refused() {
    let mut pair = Pair::new(310);
    pair.host = "wrong.test";
    let (p, v) = pair.run(Mode::Proxy);
    let e = p.unwrap_err();
    assert!(matches!(e, Error::Tls(_)), "{e}");
    assert!(v.is_err());
}

/// A response past the verifier's limit on received bytes: both parties
/// name the limit.
#[test]
fn a_transcript_over_the_limit_is_refused() {
    let mut pair = Pair::new(320);
    pair.verifier.limits.max_recv_bytes = 4000;
    pair.server = Server::Bytes(20_000);
    let (p, v) = pair.sim.link(pair.delay, pair.faults.clone());
    let mut config = pair.proxy_config(vec![RevealItem::All]);
    config.expect_response = 20_000;
    let (p, v) = pair.sim.block_on(futures::future::join(
        pair.prove_proxy(p, config),
        pair.verify(v),
    ));
    let e = p.unwrap_err();
    assert!(e.to_string().contains("limit"), "{e}");
    let ve = v.map(|_| ()).unwrap_err();
    assert!(ve.to_string().contains("limit"), "{ve}");
}

/// Servers that close at once, answer with an alert or answer plain
/// HTTP: both parties end with an error, promptly.
#[test]
fn servers_that_do_not_speak_tls_end_both_sides_promptly() {
    for (i, (reply, what)) in [
        (&b""[..], "closes early"),
        (&[21u8, 3, 3, 0, 2, 2, 40][..], "alert"),
        (&b"HTTP/1.1 400 Bad Request\r\n\r\n"[..], "not TLS"),
    ]
    .into_iter()
    .enumerate()
    {
        let mut pair = Pair::new(330 + i as u64);
        pair.server = Server::Raw(reply);
        let (p, v) = pair.run(Mode::Proxy);
        assert!(p.is_err(), "{what}");
        assert!(v.is_err(), "{what}");
        assert!(pair.sim.now() < PROMPT, "{what}: {:?}", pair.sim.now());
    }
}

/// A hello stating a request MPC mode cannot run (over the protocol's
/// largest) is refused at admission.
#[test]
fn an_oversized_mpc_request_is_refused() {
    let mut pair = Pair::new(340);
    pair.request = webproof_disclosure::http::http_request("GET", HOST, 443, "/", &[], &[], 20_000);
    let (p, v) = pair.run(Mode::Mpc);
    let e = p.unwrap_err();
    assert!(
        matches!(&e, Error::Refused(r) if r.kind == RejectKind::SessionSize),
        "{e}"
    );
    assert!(v.is_err());
}

/// The verifier's own cap on the request a hello may ask tables for: a
/// request over it is refused before anything is garbled, naming the
/// limit and the setting that raises it, and the prover does not take
/// the refusal for cheating (its runtime records nothing).
#[test]
fn an_mpc_request_over_the_verifiers_cap_names_the_setting() {
    let mut pair = Pair::new(350);
    assert_eq!(pair.verifier.max_mpc_request, 4096, "the default");
    pair.verifier.max_mpc_request = 2048;
    pair.request = webproof_disclosure::http::http_request("GET", HOST, 443, "/", &[], &[], 3000);
    let (p, v) = pair.sim.link(pair.delay, pair.faults.clone());
    let server = pair.server(true);
    let recorded = Cell::new(false);
    let prover = pair.prove_mpc(p, &server, vec![RevealItem::All], |_| {
        recorded.set(true);
        String::new()
    });
    let (e, v) = pair
        .sim
        .block_on(futures::future::join(prover, pair.verify(v)));
    assert!(!recorded.get(), "a refusal is not cheating");
    match e.map(|_| ()).unwrap_err() {
        Error::Refused(r) => {
            assert_eq!(r.kind, RejectKind::SessionSize);
            assert!(r.detail.contains("1 to 2048 bytes"), "{}", r.detail);
            assert!(r.detail.contains("--max-mpc-request-bytes"), "{}", r.detail);
            assert!(r.detail.contains("max_mpc_request_bytes"), "{}", r.detail);
        }
        other => panic!("{other:?}"),
    }
    assert!(v.is_err());
}

/// A pinned TLS version is the session's, and the output states what the
/// verifier observed itself: the name (an IP address here) and port, the
/// server's close_notify, no records after the cut, a complete response,
/// the request then the response.
#[test]
fn a_pinned_tls_version_and_the_observed_facts() {
    for (i, version) in [TlsVersion::Tls12, TlsVersion::Tls13]
        .into_iter()
        .enumerate()
    {
        let mut pair = Pair::new(360 + i as u64);
        pair.host = IP;
        pair.tls.version = Some(version);
        let (p, v) = pair.run(Mode::Proxy);
        let (out, v) = (p.unwrap().output, v.unwrap().output);
        assert_eq!(out, v);
        assert_eq!(out.tls_version, version);
        assert_eq!(out.server_name, IP);
        assert_eq!(out.server_close_notify, Some(true));
        assert_eq!(out.server_port, 443);
        assert_eq!(out.server_records_after_cut, Some(0));
        assert_eq!(
            out.response_complete,
            webproof_attestation::Completeness::Complete
        );
        let dirs: Vec<_> = out.order.iter().map(|o| o.direction).collect();
        assert_eq!(
            dirs,
            [
                webproof_attestation::Direction::Sent,
                webproof_attestation::Direction::Received
            ]
        );
        assert_eq!(out.order[1].end as usize, out.received.len);
    }
}
