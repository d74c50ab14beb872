//! TLS 1.3 ChaCha20-Poly1305 (TLS_CHACHA20_POLY1305_SHA256) in MPC mode
//! against a rustls TLS 1.3 server that runs that suite alone: the
//! server reads the request byte-exact (one record or several), the
//! parties' shares recombine to the server's keys, the response and the
//! request are proven after the session (true facts pass, a false one is
//! refused); and the verifier's cheats on the records' 2PC (a check value
//! that does not vouch for the keystream, a wrong tag-circuit input) are
//! refused before the request is accepted.

mod common;
use common::tls13::*;
use common::*;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use webproof_mpc_tls::tls13::response::{prove_response13, verify_response13, Claim13, Verified13};
use webproof_mpc_tls::tls13::{verifier_output13, Tls13ProverSession, Tls13VerifierSession};
use webproof_mpc_tls::{cots_needed, CotPool, Error, VerifierMsg};
use webproof_tls::{CipherSuite, KxGroup};

const SUITE: CipherSuite = CipherSuite::TLS13_CHACHA20_POLY1305_SHA256;
const REQUEST: &[u8] = b"GET /json HTTP/1.1\r\nHost: webproof.test\r\nConnection: close\r\n\r\n";

fn response(n: usize) -> Vec<u8> {
    let body: Vec<u8> = (0..n).map(|i| b'a' + (i * 7 % 26) as u8).collect();
    let mut r = format!("HTTP/1.1 200 OK\r\nContent-Length: {n}\r\n\r\n").into_bytes();
    r.extend(body);
    r
}

struct Session {
    d: Done13,
    resp: Vec<u8>,
    cs: webproof_ot::SoftSpokenSender,
    cr: webproof_ot::SoftSpokenReceiver,
}

/// A session against a ChaCha20-only TLS 1.3 server with `hooks`, which
/// answers a 3,000-byte response.
fn run(
    kind: KeyKind,
    group: KxGroup,
    request: &[u8],
    seed: u64,
    hooks: Hooks13,
) -> Result<Session, Stop> {
    let c = certs(kind, &[NAME], false);
    let (delta, keys, macs, cs, cr) = cots_ext(seed, cots_needed(request.len()));
    let mut rng = ChaCha20Rng::seed_from_u64(seed + 10);
    let (p, hello) = Tls13ProverSession::new(
        prover_config(NAME, SUITE, group, false, request),
        CotPool::new(macs),
        &mut rng,
    )
    .unwrap();
    let v = Tls13VerifierSession::new(
        verifier_config(&c.ca_der, NAME),
        delta,
        CotPool::new(keys),
        &mut rng,
    );
    let resp = response(3000);
    let server = server13_with(&c, false, &[], &[SUITE]);
    let t = std::time::Instant::now();
    let d = run13(p, hello, v, server, hooks, Some(&resp))?;
    eprintln!(
        "TLS 1.3 ChaCha20-Poly1305, {}-byte request, {kind:?} {group:?}: {:?}, {} bytes up, \
         {} bytes down",
        request.len(),
        t.elapsed(),
        d.up,
        d.down
    );
    Ok(Session { d, resp, cs, cr })
}

/// An honest session: the request byte-exact at the server, both
/// recordings the same bytes (the request's records as header and
/// zeros), the shares recombining to the server's ChaCha20 keys, the
/// response byte-exact at the prover with close_notify.
fn honest(kind: KeyKind, group: KxGroup, request: &[u8], seed: u64) -> Session {
    let s = run(kind, group, request, seed, Hooks13::default())
        .unwrap_or_else(|e| panic!("{kind:?} {group:?}: {e:?}"));
    let d = &s.d;
    assert_eq!(d.request, request);
    assert_eq!(d.p.recording().digest(), d.v.recording().digest());
    let sent = &d.v.recording().sent;
    let lens = webproof_mpc_tls::cots::request_records(request.len());
    // ClientHello, Finished, then the request's records.
    assert_eq!(sent.len(), 2 + lens.len());
    for (r, l) in sent[2..].iter().zip(&lens) {
        // Content, inner type, the 16-byte tag; no explicit nonce.
        assert_eq!((r.content_type, r.payload.len()), (23, l + 1 + 16));
        assert!(r.payload.iter().all(|&b| b == 0));
    }
    let r = d.p.response().unwrap();
    assert_eq!(r.response, s.resp);
    assert!(r.close_notify);
    assert_eq!(d.v.suite(), SUITE);
    assert_eq!(d.p.suite(), SUITE);
    s
}

/// The parties' shares recombine to the server's application keys (and
/// the prover's alone is not the key).
fn check_keys(d: Done13) {
    let keys = d.v.key_shares().unwrap().combine(d.p.key_shares().unwrap());
    assert_ne!(d.p.key_shares().unwrap().client_key, keys.client_key);
    let secrets = d.server.dangerous_extract_secrets().unwrap();
    let (
        rustls::ConnectionTrafficSecrets::Chacha20Poly1305 { key: ck, iv: civ },
        rustls::ConnectionTrafficSecrets::Chacha20Poly1305 { key: sk, iv: siv },
    ) = (secrets.rx.1, secrets.tx.1)
    else {
        panic!("another suite")
    };
    assert_eq!(keys.client_key, ck.as_ref());
    assert_eq!(keys.client_iv, civ.as_ref());
    assert_eq!(keys.server_key, sk.as_ref());
    assert_eq!(keys.server_iv, siv.as_ref());
}

fn zk_cfg() -> webproof_zk::Config {
    webproof_zk::Config {
        cot_batch: 1 << 18,
        ..webproof_zk::Config::default()
    }
}

/// Both parties' runs of the proof of the response.
fn prove(
    d: &Done13,
    cs: webproof_ot::SoftSpokenSender,
    cr: webproof_ot::SoftSpokenReceiver,
    claim: &Claim13,
) -> (Result<(), Error>, Result<Verified13, Error>) {
    let (a, b) = webproof_core::memory_duplex();
    let mut rng = ChaCha20Rng::seed_from_u64(77);
    futures::executor::block_on(async {
        futures::join!(
            async {
                let mut r = ChaCha20Rng::seed_from_u64(78);
                prove_response13(
                    cr,
                    webproof_core::Channel::new(a),
                    zk_cfg(),
                    &d.p,
                    claim,
                    &[],
                    &mut r,
                )
                .await
                .map(|_| ())
            },
            verify_response13(
                cs,
                webproof_core::Channel::new(b),
                zk_cfg(),
                &d.v,
                false,
                &mut rng
            )
        )
    })
}

#[test]
fn chacha13_x25519_session_and_proof() {
    let Session { d, resp, cs, cr } = honest(KeyKind::Ecdsa, KxGroup::X25519, REQUEST, 41);
    let ranges = [0..17, 100..160, resp.len() - 5..resp.len()];
    // The request line too (the Host header stays hidden).
    let req = 0..18;
    let claim = Claim13::new(&d.p, &ranges)
        .unwrap()
        .with_request(&d.p, std::slice::from_ref(&req))
        .unwrap();
    let t = std::time::Instant::now();
    let (p, v) = prove(&d, cs, cr, &claim);
    eprintln!(
        "TLS 1.3 ChaCha20-Poly1305 proof of a {}-byte response: {:?}",
        resp.len(),
        t.elapsed()
    );
    p.unwrap();
    let v = v.unwrap();
    assert_eq!(v.response_len, resp.len());
    assert!(v.close_notify);
    for ((at, bytes), r) in v.ranges.iter().zip(&ranges) {
        assert_eq!((*at, &bytes[..]), (r.start, &resp[r.clone()]));
    }
    assert_eq!(v.request_len, REQUEST.len());
    assert_eq!(v.request_ranges, vec![(0, REQUEST[req].to_vec())]);
    let out = verifier_output13(&d.v, &v, NAME, now()).unwrap();
    assert_eq!(out.tls_version, webproof_tls::TlsVersion::Tls13);
    assert_eq!(out.cipher_suite, SUITE);
    assert_eq!(out.key_exchange_group, KxGroup::X25519);
    assert_eq!(out.sent.len, REQUEST.len());
    assert_eq!(out.server_close_notify, Some(true));
    check_keys(d);
}

#[test]
fn chacha13_p256_request_in_several_records() {
    // Two records (2,048 bytes and the rest): each its own sequence
    // number, nonce, Poly1305 key and tag.
    let mut req =
        b"POST /upload HTTP/1.1\r\nHost: webproof.test\r\nContent-Length: 2100\r\n\r\n".to_vec();
    req.extend((0..2100).map(|i| b'A' + (i % 26) as u8));
    let Session { d, resp, cs, cr } = honest(KeyKind::Rsa, KxGroup::Secp256r1, &req, 22);
    // Bytes of both records proven, one range across the boundary.
    let claim = Claim13::new(&d.p, std::slice::from_ref(&(9..15)))
        .unwrap()
        .with_request(&d.p, &[0..4, 2040..2060])
        .unwrap();
    let (p, v) = prove(&d, cs, cr, &claim);
    p.unwrap();
    let v = v.unwrap();
    assert_eq!(v.ranges, vec![(9, resp[9..15].to_vec())]);
    assert_eq!(v.request_len, req.len());
    assert_eq!(
        v.request_ranges,
        vec![(0, req[0..4].to_vec()), (2040, req[2040..2060].to_vec())]
    );
    check_keys(d);
}

#[test]
fn chacha13_false_claims_are_refused() {
    // A revealed response byte other than the server's.
    let Session { d, cs, cr, .. } = honest(KeyKind::Ecdsa, KxGroup::Secp256r1, REQUEST, 43);
    let mut claim = Claim13::new(&d.p, std::slice::from_ref(&(0..17))).unwrap();
    claim.ranges[0].1[9] = b'4';
    let (_, v) = prove(&d, cs, cr, &claim);
    assert!(matches!(v, Err(Error::Proof(_))), "{v:?}");
    // A request byte other than the one the server authenticated (the
    // verifier never saw the request: the proof under its masked
    // ciphertexts refuses it).
    let Session { d, cs, cr, .. } = honest(KeyKind::Ecdsa, KxGroup::Secp256r1, REQUEST, 44);
    let mut claim = Claim13::new(&d.p, &[])
        .unwrap()
        .with_request(&d.p, std::slice::from_ref(&(0..3)))
        .unwrap();
    claim.request[0].1 = b"PUT".to_vec();
    let (_, v) = prove(&d, cs, cr, &claim);
    assert!(matches!(v, Err(Error::Proof(_))), "{v:?}");
}

/// A session a cheating verifier runs: the server must not have read a
/// byte of the request.
fn refused(hooks: Hooks13, seed: u64) -> Stop {
    let saw = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let hooks = Hooks13 {
        server_saw: Some(saw.clone()),
        ..hooks
    };
    let r = run(KeyKind::Ecdsa, KxGroup::X25519, REQUEST, seed, hooks);
    assert!(saw.borrow().is_empty(), "the request reached the server");
    match r {
        Ok(_) => panic!("a cheating verifier's session went through"),
        Err(stop) => stop,
    }
}

#[test]
fn chacha13_a_wrong_keystream_check_sends_nothing() {
    // A check value that does not vouch for the keystream (as when the
    // verifier garbled another one): the prover stops before the record
    // leaves.
    let hooks = Hooks13 {
        verifier_to_prover: Some(Box::new(|m: &mut VerifierMsg| {
            if let VerifierMsg::RecTagShare { check, .. } = m {
                check[0] ^= 1;
            }
        })),
        ..Default::default()
    };
    let e = refused(hooks, 31);
    assert!(
        matches!(
            e,
            Stop::Prover(Error::Mpc(webproof_mpc::Error::VerifierCheated(_)))
        ),
        "{e:?}"
    );
}

#[test]
fn chacha13_a_flipped_keystream_bit_is_refused() {
    // The verifier's record circuit decodes one keystream bit flipped:
    // the dual execution's check names it before the record leaves.
    // Circuits: the key schedule's four steps, then per request record
    // its record circuit and its tag circuit.
    let hooks = Hooks13 {
        verifier_to_prover: Some(Box::new(|m: &mut VerifierMsg| {
            if let VerifierMsg::Decoding {
                circuit, decoding, ..
            } = m
            {
                if *circuit == 4 {
                    // The first output group's permute bits follow the
                    // group count and its bit count.
                    decoding[8 + 3] ^= 0x10;
                }
            }
        })),
        ..Default::default()
    };
    match refused(hooks, 32) {
        Stop::Prover(Error::Mpc(e)) => assert!(e.to_string().contains("keystream"), "{e}"),
        other => panic!("not the prover's keystream check: {other:?}"),
    }
}

#[test]
fn chacha13_a_wrong_tag_input_is_refused() {
    // One label of the tag circuit's inputs wrong: the prover's
    // evaluation fails or decodes a wrong tag, which the server refuses;
    // the request is never accepted.
    let hooks = Hooks13 {
        verifier_to_prover: Some(Box::new(|m: &mut VerifierMsg| {
            if let VerifierMsg::RecTagShare { corrections, .. } = m {
                corrections[5] ^= 1;
            }
        })),
        ..Default::default()
    };
    let saw = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let hooks = Hooks13 {
        server_saw: Some(saw.clone()),
        ..hooks
    };
    match run(KeyKind::Ecdsa, KxGroup::X25519, REQUEST, 33, hooks) {
        Ok(_) => panic!("a wrong tag went through"),
        Err(Stop::Prover(_) | Stop::Server(_)) => {}
        Err(other) => panic!("{other:?}"),
    }
    assert!(saw.borrow().is_empty(), "the server read the request");
}

/// Flips bit 0 of byte `at` of what its writer sends: a verifier whose
/// reveal on the proof's channel lies.
struct Flip<T> {
    inner: T,
    at: usize,
    pos: usize,
}

impl<T: futures::AsyncWrite + Unpin> futures::AsyncWrite for Flip<T> {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        let mut b = buf.to_vec();
        if (this.pos..this.pos + b.len()).contains(&this.at) {
            b[this.at - this.pos] ^= 1;
        }
        let r = std::pin::Pin::new(&mut this.inner).poll_write(cx, &b);
        if let std::task::Poll::Ready(Ok(n)) = r {
            this.pos += n;
        }
        r
    }
    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }
    fn poll_close(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.get_mut().inner).poll_close(cx)
    }
}

impl<T: futures::AsyncRead + Unpin> futures::AsyncRead for Flip<T> {
    fn poll_read(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut [u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

#[test]
fn chacha13_audit_catches_a_lying_reveal_of_t() {
    // The verifier reveals another multiplier `t` of the request record's
    // `r` than it garbled and answered the OLEs with (bit 0 of the record
    // circuit's masks group: the third group from the end, before the
    // tag circuit's two). The prover's audit catches it before it
    // discloses anything, and the proof is not opened.
    let Session { d, cs, cr, .. } = honest(KeyKind::Ecdsa, KxGroup::X25519, REQUEST, 45);
    let reveal = webproof_mpc_tls::tls13::audit::reveal_bits(&d.v).unwrap();
    let u32_at = |i: usize| u32::from_le_bytes(reveal[i..i + 4].try_into().unwrap()) as usize;
    let n = u32_at(0);
    let (mut at, mut starts) = (4, Vec::new());
    for _ in 0..n {
        let len = u32_at(at);
        starts.push(at + 4);
        at += 4 + len.div_ceil(8);
    }
    let claim = Claim13::new(&d.p, std::slice::from_ref(&(0..17))).unwrap();
    let (a, b) = webproof_core::memory_duplex();
    // The frame's 4-byte length first.
    let b = Flip {
        inner: b,
        at: 4 + starts[n - 3],
        pos: 0,
    };
    let mut rng = ChaCha20Rng::seed_from_u64(79);
    let mut r = ChaCha20Rng::seed_from_u64(80);
    let (p, v) = futures::executor::block_on(async {
        futures::join!(
            async {
                let ch = webproof_core::Channel::new(a);
                prove_response13(cr, ch, zk_cfg(), &d.p, &claim, &[], &mut r)
                    .await
                    .map(|_| ())
            },
            verify_response13(
                cs,
                webproof_core::Channel::new(b),
                zk_cfg(),
                &d.v,
                false,
                &mut rng
            )
        )
    });
    assert!(matches!(p, Err(Error::VerifierCheated(_))), "{p:?}");
    assert!(v.is_err());
}
