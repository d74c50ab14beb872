//! A cheating verifier against the request (the review of protocol 26,
//! finding 1): it garbles the request's keystream, so before dual
//! execution it could make the server decrypt `request ⊕ M` for an `M` of
//! its choice (a request it wrote, under the prover's cookie) and read
//! hidden request bytes from the server's reaction across sessions. Now
//! the prover checks the keystream against its own garbling
//! (`webproof_mpc_tls::rec::dual`) before the record leaves: these tests run both
//! attacks against the real sessions and a rustls server in memory.

mod common;
use common::*;
use std::cell::RefCell;
use std::rc::Rc;
use webproof_mpc_tls::{Error, VerifierMsg};

const COOKIE: &[u8] = b"7f3a9c";

fn request() -> Vec<u8> {
    let mut r = b"GET /api/balance HTTP/1.1\r\nHost: webproof.test\r\nCookie: session=".to_vec();
    r.extend_from_slice(COOKIE);
    r.extend_from_slice(b"\r\n\r\n");
    r
}

/// The last circuit's `Decoding`, the request record's (one record here):
/// XOR `mask` into the keystream bytes at `at`, as the review's hook did
/// (after the `u32` group count and bit length, the keystream's bits, LSB
/// first).
fn flip_keystream(m: &mut VerifierMsg, last_circuit: u8, at: usize, mask: &[u8]) {
    if let VerifierMsg::Decoding {
        circuit, decoding, ..
    } = m
    {
        if *circuit == last_circuit {
            for (j, x) in mask.iter().enumerate() {
                decoding[8 + at + j] ^= x;
            }
        }
    }
}

/// The number of the request record's circuit: the last one garbled.
fn last_circuit(seed: u64, c: &Certs) -> u8 {
    let (_, hello, mut v) = default_terms(seed, &c.ca_der, &request());
    answer(&mut v, hello)
        .unwrap()
        .iter()
        .filter_map(|m| match m {
            VerifierMsg::Decoding { circuit, .. } => Some(*circuit),
            _ => None,
        })
        .max()
        .unwrap()
}

/// What a session with the verifier's `hook` ended in, and what the
/// server decrypted meanwhile.
fn attacked(seed: u64, c: &Certs, hook: MsgHook<VerifierMsg>) -> (Result<(), Stop>, Vec<u8>) {
    let (p, hello, v) = default_terms(seed, &c.ca_der, &request());
    let saw = Rc::new(RefCell::new(Vec::new()));
    let hooks = Hooks {
        verifier_to_prover: Some(hook),
        server_saw: Some(saw.clone()),
        ..Hooks::default()
    };
    let r = run(p, hello, v, server(c), b"HTTP/1.1 200 OK\r\n\r\n", hooks).map(|_| ());
    let saw = saw.borrow().clone();
    (r, saw)
}

fn refused_as_cheating(r: &Result<(), Stop>) -> bool {
    matches!(
        r,
        Err(Stop::Prover(Error::Mpc(
            webproof_mpc::Error::VerifierCheated(_)
        )))
    )
}

/// Attack 1a: the verifier rewrites `/api/balance` into `/api/logout!`
/// in the keystream's decoding. The prover refuses before the record
/// leaves: the server decrypts nothing.
#[test]
fn a_rewritten_request_never_reaches_the_server() {
    let c = certs(KeyKind::Ecdsa, &[NAME], false);
    let last = last_circuit(3, &c);
    let mask: Vec<u8> = b"balance"
        .iter()
        .zip(b"logout!")
        .map(|(a, b)| a ^ b)
        .collect();
    let at = b"GET /api/".len();
    let (r, saw) = attacked(3, &c, Box::new(move |m| flip_keystream(m, last, at, &mask)));
    assert!(refused_as_cheating(&r), "{r:?}");
    assert!(saw.is_empty(), "the server decrypted {saw:?}");
    // The same session unaltered delivers the prover's request.
    let (r, saw) = attacked(3, &c, Box::new(|_| {}));
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(saw, request());
}

/// Attack 1b, the selective-abort oracle: per session the verifier XORs
/// `g ⊕ 0x7f` into one cookie byte, so that a right guess `g` would turn
/// it into DEL and make a strict server answer 400. Whatever the guess,
/// the prover stops before the record leaves, with the same error, and
/// the server sees nothing: every guess gives the verifier the same view,
/// so no number of sessions recovers the byte. (Before dual execution the
/// cookie "c0de" fell in 43 sessions.)
#[test]
fn the_server_reaction_oracle_tells_nothing() {
    let c = certs(KeyKind::Ecdsa, &[NAME], false);
    let last = last_circuit(5, &c);
    let at = request().len() - 4 - COOKIE.len();
    let mut views = Vec::new();
    // The true byte, and three wrong guesses.
    for (k, g) in [COOKIE[0], b'0', b'a', b'z'].into_iter().enumerate() {
        let mask = [g ^ 0x7f];
        let (r, saw) = attacked(
            5 + k as u64,
            &c,
            Box::new(move |m| flip_keystream(m, last, at, &mask)),
        );
        assert!(refused_as_cheating(&r), "guess {g}: {r:?}");
        assert!(saw.is_empty(), "guess {g}: the server decrypted {saw:?}");
        views.push(format!("{r:?}"));
    }
    assert!(
        views.windows(2).all(|w| w[0] == w[1]),
        "the outcome depends on the guess: {views:?}"
    );
}
