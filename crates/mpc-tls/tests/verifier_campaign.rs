//! The verifier as the party under test, at scale: every message it sends
//! (tables, decodings, the OT and OLE answers, tag shares, the check of
//! the dual execution, key shares, reveals) mutated at a random bit,
//! truncated, extended, dropped, replayed or delivered after the next
//! one, one fault per session, in thousands of sessions. Each session must
//! end in one of two ways:
//! - the prover refuses (or the server does) and the server decrypted
//!   nothing of the request; or
//! - the server decrypted exactly the prover's request (and, if the
//!   session completed, the prover holds exactly the server's response);
//!
//! and the outcome must not depend on the prover's hidden request bytes.
//! Each faulty session runs with a cookie `A` twice and with a cookie `B`
//! once, every seed of both parties the same. The server in memory
//! (rustls) draws its own randomness, so a fault whose outcome hangs on
//! an ephemeral value (a selective failure on a bit of the prover's ECtF
//! input, say) may end differently from run to run: when the three runs
//! disagree, nine more of each cookie run, and the fault fails the test
//! if every run with `A` ends one way and every run with `B` another
//! (a chance of about 2^-16 for a fault decided by a fair coin). Every
//! other fault ends with `B` exactly as with `A` (the same error, or
//! both done). A verifier able to make
//! the outcome depend on a cookie would have the selective-abort oracle
//! of the review of protocol 26.
//!
//! `cargo test` runs a CI-sized campaign ([`CI_SESSIONS`]); the full one,
//! `cargo test --release -p webproof-mpc-tls --test verifier_campaign --
//! --ignored`, runs [`FULL_SESSIONS`] faulty sessions (three runs each).
//! A session runs on one thread: `WEBPROOF_CAMPAIGN_SHARD=i/n` runs the
//! sessions `k` with `k % n == i` of the same sequence, so `n` processes
//! cover the campaign on `n` cores.

mod common;
use common::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use std::cell::RefCell;
use std::rc::Rc;
use webproof_mpc_tls::VerifierMsg;

/// Faulty sessions in `cargo test`.
const CI_SESSIONS: usize = 120;
/// Faulty sessions in the full campaign (`--ignored`).
const FULL_SESSIONS: usize = 10_000;

const RESPONSE: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";

fn request(cookie: &[u8]) -> Vec<u8> {
    let mut r = b"GET /api/balance HTTP/1.1\r\nHost: webproof.test\r\nCookie: session=".to_vec();
    r.extend_from_slice(cookie);
    r.extend_from_slice(b"\r\n\r\n");
    r
}

/// One fault on the verifier's `index`-th message.
#[derive(Clone, Copy, Debug)]
enum Fault {
    /// Flip bit `bit` (modulo the message's bit length) of its encoding.
    Flip {
        bit: usize,
    },
    /// Keep the first `keep` bytes (modulo its length).
    Truncate {
        keep: usize,
    },
    /// Append a byte.
    Extend,
    Drop,
    Replay,
    /// Deliver it after the next message.
    Swap,
}

/// How a session ended, as the verifier could observe it: done, or the
/// error (whose text names no secret).
fn run_faulty(
    seed: u64,
    cookie: &[u8],
    index: usize,
    fault: Fault,
) -> (String, Vec<u8>, Option<Vec<u8>>) {
    let c = certs(KeyKind::Ecdsa, &[NAME], false);
    let (p, hello, v) = default_terms(seed, &c.ca_der, &request(cookie));
    let saw = Rc::new(RefCell::new(Vec::new()));
    let mut held: Option<Vec<u8>> = None;
    let hooks = Hooks {
        server_saw: Some(saw.clone()),
        verifier_wire: Some(Box::new(move |i, mut b| {
            if let Some(h) = held.take() {
                return vec![b, h];
            }
            if i != index {
                return vec![b];
            }
            match fault {
                Fault::Flip { bit } => {
                    let bit = bit % (8 * b.len());
                    b[bit / 8] ^= 1 << (bit % 8);
                    vec![b]
                }
                Fault::Truncate { keep } => {
                    b.truncate(keep % b.len());
                    vec![b]
                }
                Fault::Extend => {
                    b.push(0);
                    vec![b]
                }
                Fault::Drop => vec![],
                Fault::Replay => vec![b.clone(), b],
                Fault::Swap => {
                    held = Some(b);
                    vec![]
                }
            }
        })),
        ..Hooks::default()
    };
    let r = run(p, hello, v, server(&c), RESPONSE, hooks);
    let saw = saw.borrow().clone();
    match r {
        Ok(d) => ("done".into(), saw, Some(d.prover.response)),
        // The server's own error text may hold bytes it parsed: the
        // class of the stop is what the verifier sees.
        Err(Stop::Server(_)) => ("server refused".into(), saw, None),
        Err(e) => (format!("{e:?}"), saw, None),
    }
}

/// The verifier's messages of an honest session (their names).
fn honest_messages(seed: u64) -> Vec<&'static str> {
    let c = certs(KeyKind::Ecdsa, &[NAME], false);
    let (p, hello, v) = default_terms(seed, &c.ca_der, &request(b"7f3a9c"));
    let names = Rc::new(RefCell::new(Vec::new()));
    let n = names.clone();
    let hooks = Hooks {
        verifier_to_prover: Some(Box::new(move |m: &mut VerifierMsg| {
            n.borrow_mut().push(m.name())
        })),
        ..Hooks::default()
    };
    let d = run(p, hello, v, server(&c), RESPONSE, hooks).expect("the honest session");
    assert_eq!(d.request_at_server, request(b"7f3a9c"));
    let out = names.borrow().clone();
    out
}

/// `(i, n)` from `WEBPROOF_CAMPAIGN_SHARD=i/n`; `(0, 1)` without it.
fn shard() -> (usize, usize) {
    let Ok(v) = std::env::var("WEBPROOF_CAMPAIGN_SHARD") else {
        return (0, 1);
    };
    let parsed = v
        .split_once('/')
        .and_then(|(i, n)| Some((i.parse().ok()?, n.parse().ok()?)));
    match parsed {
        Some((i, n)) if i < n => (i, n),
        _ => panic!("WEBPROOF_CAMPAIGN_SHARD={v:?}: expected i/n with i < n, e.g. 0/2"),
    }
}

fn campaign(sessions: usize) {
    const SEED: u64 = 2;
    let (shard, shards) = shard();
    let names = honest_messages(SEED);
    // Every message kind gets faults, not only the many table chunks:
    // pick a kind round-robin, then one of its messages at random.
    let mut kinds: Vec<&str> = names.clone();
    kinds.sort_unstable();
    kinds.dedup();
    let mut rng = ChaCha20Rng::seed_from_u64(0xfa17);
    let (mut refused, mut delivered, mut ephemeral) = (0usize, 0usize, 0usize);
    for k in 0..sessions {
        let kind = kinds[k % kinds.len()];
        let of_kind: Vec<usize> = (0..names.len()).filter(|&i| names[i] == kind).collect();
        let index = of_kind[rng.gen_range(0..of_kind.len())];
        let fault = match rng.gen_range(0..6) {
            0 => Fault::Flip { bit: rng.gen() },
            1 => Fault::Truncate { keep: rng.gen() },
            2 => Fault::Extend,
            3 => Fault::Drop,
            4 => Fault::Replay,
            _ => Fault::Swap,
        };
        // Every shard draws the whole sequence, so shards split one campaign.
        if k % shards != shard {
            continue;
        }
        let a = run_faulty(SEED, b"7f3a9c", index, fault);
        let a2 = run_faulty(SEED, b"7f3a9c", index, fault);
        let b = run_faulty(SEED, b"c0ffee", index, fault);
        for (cookie, (_, saw, response)) in
            [(&b"7f3a9c"[..], &a), (b"7f3a9c", &a2), (b"c0ffee", &b)]
        {
            assert!(
                saw.is_empty() || *saw == request(cookie),
                "{kind} #{index} {fault:?}: the server decrypted {:?}",
                String::from_utf8_lossy(saw)
            );
            if let Some(r) = response {
                assert_eq!(
                    r, RESPONSE,
                    "{kind} #{index} {fault:?}: a response the server did not send"
                );
            }
        }
        let outcome = |r: &(String, Vec<u8>, Option<Vec<u8>>)| (r.0.clone(), r.1.is_empty());
        if outcome(&a) != outcome(&a2) || outcome(&a) != outcome(&b) {
            // Ephemeral values decide this fault's outcome, or the cookie
            // does: more runs of each tell which. A cookie that decides
            // it gives one outcome with `A` and another with `B` every
            // time; a fault that hangs on the server's randomness does not.
            let mut with_a = vec![outcome(&a), outcome(&a2)];
            let mut with_b = vec![outcome(&b)];
            for _ in 0..7 {
                with_a.push(outcome(&run_faulty(SEED, b"7f3a9c", index, fault)));
                with_b.push(outcome(&run_faulty(SEED, b"c0ffee", index, fault)));
            }
            let one = |v: &[(String, bool)]| v.windows(2).all(|w| w[0] == w[1]);
            assert!(
                !(one(&with_a) && one(&with_b) && with_a[0] != with_b[0]),
                "{kind} #{index} {fault:?}: the outcome depends on the hidden cookie: \
                 {:?} with one, {:?} with the other",
                with_a[0],
                with_b[0]
            );
            ephemeral += 1;
        }
        if a.1.is_empty() {
            refused += 1;
        } else {
            delivered += 1;
        }
        if (refused + delivered) % 500 == 0 {
            eprintln!(
                "verifier campaign (shard {shard}/{shards}): {} faulty sessions so far: \
                 {refused} refused before the server, {delivered} delivered intact, \
                 {ephemeral} ephemeral",
                refused + delivered
            );
        }
    }
    let sessions = refused + delivered;
    eprintln!(
        "verifier campaign (shard {shard}/{shards}): {} messages of {} kinds, {sessions} faulty sessions (each run with two cookies): \
         {refused} ended before the request reached the server, {delivered} delivered it intact; \
         {ephemeral} with an outcome that hung on ephemeral values (compared over 9 more runs each)",
        names.len(),
        kinds.len()
    );
    assert!(
        ephemeral * 4 < sessions,
        "too few faults compared ({ephemeral} of {sessions} not)"
    );
    assert!(refused > 0 && delivered > 0, "a campaign that cannot tell");
}

#[test]
fn verifier_faults_ci_sized() {
    campaign(CI_SESSIONS);
}

#[test]
#[ignore = "10,000 faulty sessions: run in release"]
fn verifier_faults_full() {
    campaign(FULL_SESSIONS);
}
