//! The differential soundness harness of MPC mode: an honest session
//! against a server whose bytes are known, then the same session with one
//! field of one message mutated, for every field of every message of the
//! party under test. Each mutated session must end in a refusal, or in a
//! verified response whose every revealed byte is the server's at its true
//! offset (for the prover as the party under test), or in a prover
//! outcome holding exactly the server's response (for the verifier), the
//! server having decrypted exactly the prover's request or nothing.
//!
//! Mutations per field: a flipped bit in the middle of a byte field, a
//! byte field one shorter and one longer, a number off by one; list
//! fields (the garbled tables) get the same on their first and last
//! element. The session runs in memory (the common driver), the response
//! proof over a memory channel, so every run is deterministic but for the
//! server's randomness.

#![allow(clippy::single_range_in_vec_init)] // one revealed range is a list of one

mod common;
use common::*;
use futures::executor::block_on;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use std::cell::RefCell;
use std::rc::Rc;
use webproof_attestation::{CommitPlan, CommitmentSeed, Transcript, TranscriptCommitment};
use webproof_core::{memory_duplex, Channel};
use webproof_mpc_tls::hello::*;
use webproof_mpc_tls::{prove_response, verify_response, ProverMsg, ResponseClaim, VerifierMsg};
use webproof_tls::CipherSuite;
use webproof_zk::Config;

const BODY: usize = 300;

fn response() -> Vec<u8> {
    let body: Vec<u8> = (0..BODY).map(|i| b'a' + (i * 7 % 26) as u8).collect();
    let mut r = format!("HTTP/1.1 200 OK\r\nContent-Length: {BODY}\r\n\r\n").into_bytes();
    r.extend(body);
    r
}

fn request() -> Vec<u8> {
    b"GET /known HTTP/1.1\r\nHost: webproof.test\r\nConnection: close\r\n\r\n".to_vec()
}

/// Mutants of a byte field: a flipped bit in the middle, one byte
/// shorter, one byte longer.
fn bytes_mutants(b: &[u8]) -> Vec<Vec<u8>> {
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

fn array_mutant<const N: usize>(a: &[u8; N]) -> [u8; N] {
    let mut f = *a;
    f[N / 2] ^= 1;
    f
}

/// Every mutant of a prover message, one field changed in each.
fn prover_mutants(m: &ProverMsg) -> Vec<ProverMsg> {
    use ProverMsg as P;
    let mut out = Vec::new();
    match m {
        P::Hello {
            commit_p256,
            commit_x25519,
            request_lens,
            terms,
            dual_ot,
        } => {
            let h = |a, b, c, t| P::Hello {
                commit_p256: a,
                commit_x25519: b,
                request_lens: c,
                terms: t,
                dual_ot: *dual_ot,
            };
            out.push(P::Hello {
                commit_p256: *commit_p256,
                commit_x25519: *commit_x25519,
                request_lens: request_lens.clone(),
                terms: *terms,
                dual_ot: array_mutant(dual_ot),
            });
            out.push(h(
                array_mutant(commit_p256),
                *commit_x25519,
                request_lens.clone(),
                *terms,
            ));
            out.push(h(
                *commit_p256,
                array_mutant(commit_x25519),
                request_lens.clone(),
                *terms,
            ));
            let mut l = request_lens.clone();
            l[0] += 1;
            out.push(h(*commit_p256, *commit_x25519, l, *terms));
            let mut l = request_lens.clone();
            l.push(1);
            out.push(h(*commit_p256, *commit_x25519, l, *terms));
            // The terms: the other suite family, a suite MPC mode does
            // not run, the other group, the other EMS offer. (A code of
            // no known suite or group is refused when the Hello is
            // decoded: `msg`'s unit tests, `cheating`.)
            let other_family = if terms.suite == ECDHE_ECDSA_AES128_GCM_SHA256 {
                ECDHE_ECDSA_AES256_GCM_SHA384
            } else {
                ECDHE_ECDSA_AES128_GCM_SHA256
            };
            let other_group = if terms.group == GROUP_P256 {
                GROUP_X25519
            } else {
                GROUP_P256
            };
            for t in [
                Terms {
                    suite: other_family,
                    ..*terms
                },
                Terms {
                    suite: CipherSuite::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
                    ..*terms
                },
                Terms {
                    group: other_group,
                    ..*terms
                },
                Terms {
                    ems: !terms.ems,
                    ..*terms
                },
            ] {
                out.push(h(*commit_p256, *commit_x25519, request_lens.clone(), t));
            }
        }
        P::DualLabels(b) => out.extend(bytes_mutants(b).into_iter().map(P::DualLabels)),
        P::DualTables { id, chunk } => {
            out.push(P::DualTables {
                id: id + 1,
                chunk: chunk.clone(),
            });
            for c in bytes_mutants(chunk) {
                out.push(P::DualTables { id: *id, chunk: c });
            }
        }
        P::DualEnd { id, end } => {
            out.push(P::DualEnd {
                id: id + 1,
                end: end.clone(),
            });
            for e in bytes_mutants(end) {
                out.push(P::DualEnd { id: *id, end: e });
            }
        }
        P::ToServer(b) => out.extend(bytes_mutants(b).into_iter().map(P::ToServer)),
        P::FromServer(b) => out.extend(bytes_mutants(b).into_iter().map(P::FromServer)),
        P::ServerClosed | P::Abort(_) => {}
        P::RecSent { id } => {
            out.push(P::RecSent { id: id + 1 });
            out.push(P::RecSent {
                id: id.wrapping_sub(1),
            });
        }
        P::KeyOpen {
            public,
            blind,
            flips,
        } => {
            for p in bytes_mutants(public) {
                out.push(P::KeyOpen {
                    public: p,
                    blind: *blind,
                    flips: flips.clone(),
                });
            }
            out.push(P::KeyOpen {
                public: public.clone(),
                blind: array_mutant(blind),
                flips: flips.clone(),
            });
            for f in bytes_mutants(flips) {
                out.push(P::KeyOpen {
                    public: public.clone(),
                    blind: *blind,
                    flips: f,
                });
            }
        }
        P::EctfCorrection(b) => out.extend(bytes_mutants(b).into_iter().map(P::EctfCorrection)),
        P::KdfFlips { step, flips } => {
            out.push(P::KdfFlips {
                step: step.wrapping_add(1),
                flips: flips.clone(),
            });
            for f in bytes_mutants(flips) {
                out.push(P::KdfFlips {
                    step: *step,
                    flips: f,
                });
            }
        }
        P::KdfLabels { step, labels } => {
            out.push(P::KdfLabels {
                step: step.wrapping_add(1),
                labels: labels.clone(),
            });
            for l in bytes_mutants(labels) {
                out.push(P::KdfLabels {
                    step: *step,
                    labels: l,
                });
            }
        }
        P::RecCiphertext {
            id,
            ct,
            offsets,
            labels,
        } => {
            let r = |id, ct, offsets, labels| P::RecCiphertext {
                id,
                ct,
                offsets,
                labels,
            };
            out.push(r(id + 1, ct.clone(), offsets.clone(), labels.clone()));
            for c in bytes_mutants(ct) {
                out.push(r(*id, c, offsets.clone(), labels.clone()));
            }
            for f in bytes_mutants(offsets) {
                out.push(r(*id, ct.clone(), f, labels.clone()));
            }
            for l in bytes_mutants(labels) {
                out.push(r(*id, ct.clone(), offsets.clone(), l));
            }
        }
        P::Close { sent, received } => {
            for (s, r) in [
                (sent + 1, *received),
                (sent.wrapping_sub(1), *received),
                (*sent, received + 1),
                (*sent, received.wrapping_sub(1)),
            ] {
                out.push(P::Close {
                    sent: s,
                    received: r,
                });
            }
        }
    }
    out
}

/// Every mutant of a verifier message, one field changed in each.
fn verifier_mutants(m: &VerifierMsg) -> Vec<VerifierMsg> {
    use VerifierMsg as V;
    let mut out = Vec::new();
    match m {
        V::Setup {
            client_random,
            q_p256,
            q_x25519,
            dual_ot,
        } => {
            let s = |client_random, q_p256, q_x25519, dual_ot| V::Setup {
                client_random,
                q_p256,
                q_x25519,
                dual_ot,
            };
            out.push(s(
                array_mutant(client_random),
                q_p256.clone(),
                *q_x25519,
                dual_ot.clone(),
            ));
            for q in bytes_mutants(q_p256) {
                out.push(s(*client_random, q, *q_x25519, dual_ot.clone()));
            }
            out.push(s(
                *client_random,
                q_p256.clone(),
                array_mutant(q_x25519),
                dual_ot.clone(),
            ));
            for d in bytes_mutants(dual_ot) {
                out.push(s(*client_random, q_p256.clone(), *q_x25519, d));
            }
        }
        V::EctfAnswer(b) => out.extend(bytes_mutants(b).into_iter().map(V::EctfAnswer)),
        V::Tables { circuit, chunk } => {
            out.push(V::Tables {
                circuit: circuit.wrapping_add(1),
                chunk: chunk.clone(),
            });
            for c in bytes_mutants(chunk) {
                out.push(V::Tables {
                    circuit: *circuit,
                    chunk: c,
                });
            }
        }
        V::Decoding {
            circuit,
            decoding,
            early,
        } => {
            out.push(V::Decoding {
                circuit: circuit.wrapping_add(1),
                decoding: decoding.clone(),
                early: early.clone(),
            });
            for d in bytes_mutants(decoding) {
                out.push(V::Decoding {
                    circuit: *circuit,
                    decoding: d,
                    early: early.clone(),
                });
            }
            for e in bytes_mutants(early) {
                out.push(V::Decoding {
                    circuit: *circuit,
                    decoding: decoding.clone(),
                    early: e,
                });
            }
        }
        V::KdfInputs { step, msg } => {
            out.push(V::KdfInputs {
                step: step.wrapping_add(1),
                msg: msg.clone(),
            });
            for b in bytes_mutants(msg) {
                out.push(V::KdfInputs {
                    step: *step,
                    msg: b,
                });
            }
        }
        V::KdfAdvance { step, msg } => {
            out.push(V::KdfAdvance {
                step: step.wrapping_add(1),
                msg: msg.clone(),
            });
            for b in bytes_mutants(msg) {
                out.push(V::KdfAdvance {
                    step: *step,
                    msg: b,
                });
            }
        }
        V::RecPowers { id, msg } => {
            out.push(V::RecPowers {
                id: id + 1,
                msg: msg.clone(),
            });
            for b in bytes_mutants(msg) {
                out.push(V::RecPowers { id: *id, msg: b });
            }
        }
        V::RecTagShare {
            id,
            tag,
            corrections,
            check,
        } => {
            let t = |id, tag, corrections, check| V::RecTagShare {
                id,
                tag,
                corrections,
                check,
            };
            out.push(t(id + 1, *tag, corrections.clone(), check.clone()));
            out.push(t(
                *id,
                array_mutant(tag),
                corrections.clone(),
                check.clone(),
            ));
            for c in bytes_mutants(corrections) {
                out.push(t(*id, *tag, c, check.clone()));
            }
            for c in bytes_mutants(check) {
                out.push(t(*id, *tag, corrections.clone(), c));
            }
        }
        V::CloseAck {
            server_key,
            server_iv,
            client_key,
            client_iv,
        } => {
            let fields = [server_key, server_iv, client_key, client_iv];
            for (f, field) in fields.iter().enumerate() {
                for m in bytes_mutants(field) {
                    let mut c: Vec<Vec<u8>> = fields.iter().map(|x| x.to_vec()).collect();
                    c[f] = m;
                    let [k, i, ck, ci]: [Vec<u8>; 4] = c.try_into().expect("four fields");
                    out.push(V::CloseAck {
                        server_key: k,
                        server_iv: i,
                        client_key: ck,
                        client_iv: ci,
                    });
                }
            }
        }
        V::Abort(_) => {}
    }
    out
}

/// Which message of which party to replace with which mutant.
#[derive(Clone, Copy, Debug)]
enum Target {
    Prover { index: usize, mutant: usize },
    Verifier { index: usize, mutant: usize },
}

/// What a run saw: the messages of both parties (names), the outcome.
struct Run {
    prover_msgs: Vec<ProverMsg>,
    verifier_msgs: Vec<VerifierMsg>,
    /// `None`: refused somewhere (session or proof).
    verified: Option<webproof_mpc_tls::VerifiedResponse>,
    /// The prover's decrypted response, if its session completed.
    prover_response: Option<Vec<u8>>,
    /// The mutation was applied (the target message existed and had a
    /// mutant of that index).
    applied: bool,
    /// What the server decrypted of the request, whatever the outcome.
    server_saw: Vec<u8>,
}

fn run_once(seed: u64, target: Option<Target>) -> Run {
    let c = certs(KeyKind::Ecdsa, &[NAME], false);
    let (p, hello, v, s, r) = sessions_ext(
        seed,
        prover_config(
            NAME,
            ECDHE_ECDSA_AES128_GCM_SHA256,
            GROUP_P256,
            true,
            &request(),
        ),
        verifier_config(&c.ca_der, NAME),
    );
    let pm = Rc::new(RefCell::new(Vec::new()));
    let vm = Rc::new(RefCell::new(Vec::new()));
    let applied = Rc::new(RefCell::new(false));
    let saw = Rc::new(RefCell::new(Vec::new()));
    let mut hooks = Hooks {
        server_saw: Some(saw.clone()),
        ..Hooks::default()
    };
    {
        let (pm, applied) = (pm.clone(), applied.clone());
        hooks.prover_to_verifier = Some(Box::new(move |m: &mut ProverMsg| {
            let i = pm.borrow().len();
            pm.borrow_mut().push(m.clone());
            if let Some(Target::Prover { index, mutant }) = target {
                if index == i {
                    if let Some(x) = prover_mutants(m).into_iter().nth(mutant) {
                        *m = x;
                        *applied.borrow_mut() = true;
                    }
                }
            }
        }));
    }
    {
        let (vm, applied) = (vm.clone(), applied.clone());
        hooks.verifier_to_prover = Some(Box::new(move |m: &mut VerifierMsg| {
            let i = vm.borrow().len();
            vm.borrow_mut().push(m.clone());
            if let Some(Target::Verifier { index, mutant }) = target {
                if index == i {
                    if let Some(x) = verifier_mutants(m).into_iter().nth(mutant) {
                        *m = x;
                        *applied.borrow_mut() = true;
                    }
                }
            }
        }));
    }
    let done = run(p, hello, v, server(&c), &response(), hooks);
    let mut out = Run {
        prover_msgs: pm.borrow().clone(),
        verifier_msgs: vm.borrow().clone(),
        verified: None,
        prover_response: None,
        applied: *applied.borrow(),
        server_saw: saw.borrow().clone(),
    };
    let Ok(d) = done else {
        return out;
    };
    out.prover_response = Some(d.prover.response.clone());
    // The prover reveals everything it holds, the request too, and
    // commits to both for an attestation.
    let req = request();
    let Ok(commitment) = commitment(&req, &d.prover.response) else {
        return out;
    };
    let Ok(claim) = ResponseClaim::new(&d.prover, &[0..d.prover.response.len()])
        .and_then(|c| c.with_request(&d.prover, &req, &[0..req.len()]))
        .map(|c| c.with_commitment(&d.prover, &commitment))
    else {
        return out;
    };
    let blinders = webproof_disclosure::attest::blinders(&commitment);
    let cfg = Config {
        cot_batch: 1 << 18,
        ..Config::default()
    };
    let (a, b) = memory_duplex();
    let mut r1 = ChaCha20Rng::seed_from_u64(seed + 100);
    let mut r2 = ChaCha20Rng::seed_from_u64(seed + 101);
    let (_, verified) = block_on(async {
        futures::join!(
            prove_response(
                r,
                Channel::new(a),
                cfg,
                &d.prover,
                &claim,
                &blinders,
                &mut r1
            ),
            verify_response(s, Channel::new(b), cfg, &d.verifier, true, &mut r2)
        )
    });
    out.verified = verified.ok();
    out
}

/// The prover's commitment to a session's request and response (a fixed
/// seed, so the true transcript's leaf hashes can be recomputed).
fn commitment(
    request: &[u8],
    response: &[u8],
) -> webproof_attestation::Result<TranscriptCommitment> {
    let t = Transcript::new(request.to_vec(), response.to_vec());
    let plan = CommitPlan::new().with_chunk_len(300)?;
    TranscriptCommitment::new(&t, &plan, CommitmentSeed::from_bytes([7; 32]))
}

/// The verifier's view holds only true bytes at true offsets, of the
/// response and of the request, and the leaf hashes of the true ones.
fn only_true_bytes(v: &webproof_mpc_tls::VerifiedResponse, truth: &[u8]) -> bool {
    let req = request();
    common::only_true_bytes(v, &req, truth, commitment(&req, truth).ok().as_ref())
}

#[test]
fn every_field_of_every_message_is_refused_or_true() {
    let truth = response();
    let honest = run_once(1, None);
    let v = honest
        .verified
        .as_ref()
        .expect("the honest session verifies");
    assert!(only_true_bytes(v, &truth));
    assert_eq!(
        v.ranges.iter().map(|r| r.bytes.len()).sum::<usize>(),
        truth.len()
    );
    assert_eq!(
        v.request_ranges
            .iter()
            .map(|r| r.bytes.len())
            .sum::<usize>(),
        request().len()
    );

    let (mut runs, mut refused, mut accepted) = (0, 0, 0);
    let mut seed = 10;
    // The prover as the party under test: every field of every message.
    for (index, m) in honest.prover_msgs.iter().enumerate() {
        for mutant in 0..prover_mutants(m).len() {
            seed += 1;
            let r = run_once(seed, Some(Target::Prover { index, mutant }));
            if !r.applied {
                continue; // the server's randomness changed the flight
            }
            runs += 1;
            match &r.verified {
                None => refused += 1,
                Some(v) => {
                    accepted += 1;
                    assert!(
                        only_true_bytes(v, &truth),
                        "prover message {index} ({}) mutant {mutant}: the verifier accepted bytes the server did not send",
                        m.name()
                    );
                }
            }
        }
    }
    // The verifier as the party under test: the prover ends refused or
    // holding exactly the server's response. Of the garbled tables'
    // chunks (about a hundred, alike), each circuit's first and the very
    // last are mutated; every other message, every circuit's decoding
    // included, is.
    let last_chunk = honest
        .verifier_msgs
        .iter()
        .rposition(|m| matches!(m, VerifierMsg::Tables { .. }));
    for (index, m) in honest.verifier_msgs.iter().enumerate() {
        let follows_a_chunk =
            index > 0 && matches!(honest.verifier_msgs[index - 1], VerifierMsg::Tables { .. });
        if matches!(m, VerifierMsg::Tables { .. }) && follows_a_chunk && Some(index) != last_chunk {
            continue;
        }
        for mutant in 0..verifier_mutants(m).len() {
            seed += 1;
            let r = run_once(seed, Some(Target::Verifier { index, mutant }));
            if !r.applied {
                continue;
            }
            runs += 1;
            // The request reaches the server exactly as the prover wrote
            // it, or not at all (dual execution).
            assert!(
                r.server_saw.is_empty() || r.server_saw == request(),
                "verifier message {index} ({}) mutant {mutant}: the server decrypted {:?}",
                m.name(),
                String::from_utf8_lossy(&r.server_saw)
            );
            match &r.prover_response {
                None => refused += 1,
                Some(p) => {
                    accepted += 1;
                    assert_eq!(
                        p,
                        &truth,
                        "verifier message {index} ({}) mutant {mutant}: the prover took a response the server did not send",
                        m.name()
                    );
                }
            }
        }
    }
    eprintln!(
        "differential: {} prover and {} verifier messages, {runs} mutated sessions: {refused} refused, {accepted} ended with true bytes only",
        honest.prover_msgs.len(),
        honest.verifier_msgs.len()
    );
    assert!(runs > 100, "too few mutated sessions ({runs})");
}
