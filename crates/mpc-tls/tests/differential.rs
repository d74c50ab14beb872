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
//! element. The session runs in memory (the common drivers), the response
//! proof over a memory channel, so every run is deterministic but for the
//! server's randomness.
//!
//! Both versions: TLS 1.2 sessions (`ProverSession`, `VerifierSession`)
//! and TLS 1.3 sessions (`Tls13ProverSession`, `Tls13VerifierSession`,
//! whose messages are the same kinds with TLS 1.3's meanings: the Hello's
//! terms name a TLS 1.3 suite, `KeyOpen` and the key schedule's steps,
//! `RecCiphertext` of the client Finished, `Close` and `CloseAck`), each
//! proven with its own response proof (`ResponseClaim`, `Claim13`). The
//! TLS 1.2 sweep (AES-GCM) mutates every message; the TLS 1.3 sweeps
//! (AES-GCM, ChaCha20-Poly1305) and TLS 1.2's under ChaCha20-Poly1305 run
//! by default mutate the first and
//! the last message of each kind of either party with every mutant (so
//! every field of every kind), deterministic and small enough for the
//! debug-mode CI; their whole sweeps are `#[ignore]`d.

#![allow(clippy::single_range_in_vec_init)] // one revealed range is a list of one

mod common;
use common::tls13::{run13, server13, Hooks13};
use common::*;
use futures::executor::block_on;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use std::cell::RefCell;
use std::rc::Rc;
use webproof_attestation::{CommitPlan, CommitmentSeed, Transcript, TranscriptCommitment};
use webproof_core::{memory_duplex, Channel};
use webproof_mpc_tls::hello::*;
use webproof_mpc_tls::tls13::response::{prove_response13, verify_response13, Claim13};
use webproof_mpc_tls::tls13::{Tls13ProverSession, Tls13VerifierSession};
use webproof_mpc_tls::{
    cots_needed, prove_response, verify_response, CotPool, ProverMsg, ResponseClaim, VerifierMsg,
};
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
            // The terms: the other suite family of its version, a suite
            // of its version MPC mode does not run (ChaCha20), a suite of
            // the other version, the other group, the other EMS offer. (A
            // code of no known suite or group is refused when the Hello
            // is decoded: `msg`'s unit tests, `cheating`.)
            use CipherSuite as S;
            let (other_family, unrun, other_version) = match terms.suite {
                ECDHE_ECDSA_AES128_GCM_SHA256 => (
                    ECDHE_ECDSA_AES256_GCM_SHA384,
                    S::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
                    S::TLS13_AES_128_GCM_SHA256,
                ),
                S::TLS13_AES_128_GCM_SHA256 => (
                    S::TLS13_AES_256_GCM_SHA384,
                    S::TLS13_CHACHA20_POLY1305_SHA256,
                    ECDHE_ECDSA_AES128_GCM_SHA256,
                ),
                S::TLS13_AES_256_GCM_SHA384 | S::TLS13_CHACHA20_POLY1305_SHA256 => (
                    S::TLS13_AES_128_GCM_SHA256,
                    S::TLS13_CHACHA20_POLY1305_SHA256,
                    ECDHE_ECDSA_AES128_GCM_SHA256,
                ),
                _ => (
                    ECDHE_ECDSA_AES128_GCM_SHA256,
                    S::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
                    S::TLS13_AES_128_GCM_SHA256,
                ),
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
                    suite: unrun,
                    ..*terms
                },
                Terms {
                    suite: other_version,
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

/// The TLS version (and for TLS 1.2 the suite family) of the sessions
/// under test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Version {
    /// ECDHE-ECDSA-AES128-GCM-SHA256.
    Tls12,
    /// ECDHE-ECDSA-CHACHA20-POLY1305: the full PRF, two circuits per
    /// record, the Poly1305 tag by OLE, the bitwise OLEs of the hidden
    /// ciphertext, under the same message kinds.
    Tls12Chacha,
    Tls13,
    /// TLS 1.3 with ChaCha20-Poly1305 records.
    Tls13Chacha,
}

/// Which message of which party to replace with which mutant.
#[derive(Clone, Copy, Debug)]
enum Target {
    Prover { index: usize, mutant: usize },
    Verifier { index: usize, mutant: usize },
}

/// What the verifier established, in either version's form.
enum Verified {
    V12(webproof_mpc_tls::VerifiedResponse),
    V13(webproof_mpc_tls::tls13::response::Verified13),
}

/// What a run saw: the messages of both parties (names), the outcome.
struct Run {
    prover_msgs: Vec<ProverMsg>,
    verifier_msgs: Vec<VerifierMsg>,
    /// `None`: refused somewhere (session or proof).
    verified: Option<Verified>,
    /// The prover's decrypted response, if its session completed.
    prover_response: Option<Vec<u8>>,
    /// The mutation was applied (the target message existed and had a
    /// mutant of that index).
    applied: bool,
    /// What the server decrypted of the request, whatever the outcome.
    server_saw: Vec<u8>,
}

/// The message hooks of a run: each message recorded, the target one
/// replaced by its mutant. Shared by both versions' drivers.
struct Tap {
    pm: Rc<RefCell<Vec<ProverMsg>>>,
    vm: Rc<RefCell<Vec<VerifierMsg>>>,
    applied: Rc<RefCell<bool>>,
    saw: Rc<RefCell<Vec<u8>>>,
}

type Hooked = (MsgHook<ProverMsg>, MsgHook<VerifierMsg>);

impl Tap {
    fn new() -> Self {
        Tap {
            pm: Rc::default(),
            vm: Rc::default(),
            applied: Rc::default(),
            saw: Rc::default(),
        }
    }

    fn hooks(&self, target: Option<Target>) -> Hooked {
        let (pm, applied) = (self.pm.clone(), self.applied.clone());
        let p: MsgHook<ProverMsg> = Box::new(move |m: &mut ProverMsg| {
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
        });
        let (vm, applied) = (self.vm.clone(), self.applied.clone());
        let v: MsgHook<VerifierMsg> = Box::new(move |m: &mut VerifierMsg| {
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
        });
        (p, v)
    }

    fn run(&self) -> Run {
        Run {
            prover_msgs: self.pm.borrow().clone(),
            verifier_msgs: self.vm.borrow().clone(),
            verified: None,
            prover_response: None,
            applied: *self.applied.borrow(),
            server_saw: self.saw.borrow().clone(),
        }
    }
}

fn proof_config() -> Config {
    Config {
        cot_batch: 1 << 18,
        ..Config::default()
    }
}

fn run_once(version: Version, seed: u64, target: Option<Target>) -> Run {
    match version {
        Version::Tls12 => run_once12(ECDHE_ECDSA_AES128_GCM_SHA256, seed, target),
        Version::Tls12Chacha => run_once12(ECDHE_ECDSA_CHACHA20_POLY1305_SHA256, seed, target),
        Version::Tls13 => run_once13(seed, target, CipherSuite::TLS13_AES_128_GCM_SHA256),
        Version::Tls13Chacha => {
            run_once13(seed, target, CipherSuite::TLS13_CHACHA20_POLY1305_SHA256)
        }
    }
}

fn run_once12(suite: CipherSuite, seed: u64, target: Option<Target>) -> Run {
    let c = certs(KeyKind::Ecdsa, &[NAME], false);
    let (p, hello, v, s, r) = sessions_ext(
        seed,
        prover_config(NAME, suite, GROUP_P256, true, &request()),
        verifier_config(&c.ca_der, NAME),
    );
    let tap = Tap::new();
    let (ph, vh) = tap.hooks(target);
    let hooks = Hooks {
        server_saw: Some(tap.saw.clone()),
        prover_to_verifier: Some(ph),
        verifier_to_prover: Some(vh),
        ..Hooks::default()
    };
    let done = run(p, hello, v, server(&c), &response(), hooks);
    let mut out = tap.run();
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
    let cfg = proof_config();
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
    out.verified = verified.ok().map(Verified::V12);
    out
}

/// The TLS 1.3 session (AES-128-GCM-SHA256, X25519) on the TLS 1.3
/// driver, then its response proof revealing and committing to all of
/// both directions, as [`run_once12`].
fn run_once13(seed: u64, target: Option<Target>, suite: CipherSuite) -> Run {
    let c = certs(KeyKind::Ecdsa, &[NAME], false);
    let req = request();
    let (delta, keys, macs, s, r) = cots_ext(seed, cots_needed(req.len()));
    let mut rng = ChaCha20Rng::seed_from_u64(seed + 10);
    let (p, hello) = Tls13ProverSession::new(
        prover_config(NAME, suite, GROUP_X25519, false, &req),
        CotPool::new(macs),
        &mut rng,
    )
    .expect("the prover's session");
    let v = Tls13VerifierSession::new(
        verifier_config(&c.ca_der, NAME),
        delta,
        CotPool::new(keys),
        &mut rng,
    );
    let tap = Tap::new();
    let (ph, vh) = tap.hooks(target);
    let hooks = Hooks13 {
        server_saw: Some(tap.saw.clone()),
        prover_to_verifier: Some(ph),
        verifier_to_prover: Some(vh),
        ..Hooks13::default()
    };
    let done = run13(p, hello, v, server13(&c, false), hooks, Some(&response()));
    let mut out = tap.run();
    let Ok(d) = done else {
        return out;
    };
    let Some(resp) = d.p.response().map(|r| r.response.clone()) else {
        return out;
    };
    out.prover_response = Some(resp.clone());
    let Ok(commitment) = commitment(&req, &resp) else {
        return out;
    };
    let Ok(claim) = Claim13::new(&d.p, &[0..resp.len()])
        .and_then(|c| c.with_request(&d.p, &[0..req.len()]))
        .map(|c| c.with_commitment(&commitment))
    else {
        return out;
    };
    let blinders = webproof_disclosure::attest::blinders(&commitment);
    let cfg = proof_config();
    let (a, b) = memory_duplex();
    let mut r1 = ChaCha20Rng::seed_from_u64(seed + 100);
    let mut r2 = ChaCha20Rng::seed_from_u64(seed + 101);
    let (_, verified) = block_on(async {
        futures::join!(
            prove_response13(r, Channel::new(a), cfg, &d.p, &claim, &blinders, &mut r1),
            verify_response13(s, Channel::new(b), cfg, &d.v, true, &mut r2)
        )
    });
    out.verified = verified.ok().map(Verified::V13);
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
fn only_true_bytes(v: &Verified, truth: &[u8]) -> bool {
    let req = request();
    let c = commitment(&req, truth).ok();
    match v {
        Verified::V12(v) => common::only_true_bytes(v, &req, truth, c.as_ref()),
        Verified::V13(v) => common::only_true_bytes13(v, &req, truth, c.as_ref()),
    }
}

/// Bytes the verifier's view holds of the response and of the request.
fn revealed(v: &Verified) -> (usize, usize) {
    match v {
        Verified::V12(v) => (
            v.ranges.iter().map(|r| r.bytes.len()).sum(),
            v.request_ranges.iter().map(|r| r.bytes.len()).sum(),
        ),
        Verified::V13(v) => (
            v.ranges.iter().map(|r| r.1.len()).sum(),
            v.request_ranges.iter().map(|r| r.1.len()).sum(),
        ),
    }
}

#[test]
fn every_field_of_every_message_is_refused_or_true() {
    sweep(Version::Tls12, Sweep::All, 10);
}

/// TLS 1.2 under ChaCha20-Poly1305, CI-sized as the TLS 1.3 sample: the
/// first and the last message of each kind of either party.
#[test]
fn every_field_of_every_chacha12_message_kind_is_refused_or_true() {
    sweep(Version::Tls12Chacha, Sweep::KindEnds, 20_000);
}

/// TLS 1.2 under ChaCha20-Poly1305, every message.
#[test]
#[ignore]
fn every_field_of_every_chacha12_message_is_refused_or_true() {
    sweep(Version::Tls12Chacha, Sweep::All, 30_000);
}

/// TLS 1.3, CI-sized: the first and the last message of each kind of
/// either party, every mutant of each (every field of every kind).
#[test]
fn every_field_of_every_tls13_message_kind_is_refused_or_true() {
    sweep(Version::Tls13, Sweep::KindEnds, 5_000);
}

/// TLS 1.3 with ChaCha20-Poly1305 records, as
/// [`every_field_of_every_tls13_message_kind_is_refused_or_true`]: 142
/// mutated sessions, about 45 s of CPU in the test profile.
#[test]
fn every_field_of_every_tls13_chacha_message_kind_is_refused_or_true() {
    sweep(Version::Tls13Chacha, Sweep::KindEnds, 20_000);
}

/// TLS 1.3, every message as the TLS 1.2 sweep does (some times the
/// runs of the sample).
#[test]
#[ignore]
fn every_field_of_every_tls13_message_is_refused_or_true() {
    sweep(Version::Tls13, Sweep::All, 10_000);
}

/// Which messages a sweep mutates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sweep {
    /// Every prover message; every verifier message but the garbled
    /// tables' chunks past each circuit's first and the very last.
    All,
    /// The first and the last message of each kind (by name) of each
    /// party.
    KindEnds,
}

/// The indices of `names` a sweep mutates: every one, or the first and
/// the last of each name.
fn kind_ends(names: &[&'static str]) -> Vec<usize> {
    (0..names.len())
        .filter(|&i| {
            let n = names[i];
            names[..i].iter().all(|&m| m != n) || names[i + 1..].iter().all(|&m| m != n)
        })
        .collect()
}

fn sweep(version: Version, which: Sweep, first_seed: u64) {
    let started = std::time::Instant::now();
    let truth = response();
    let honest = run_once(version, 1, None);
    let v = honest
        .verified
        .as_ref()
        .expect("the honest session verifies");
    assert!(only_true_bytes(v, &truth));
    assert_eq!(revealed(v), (truth.len(), request().len()));
    if version == Version::Tls12Chacha {
        // ChaCha20-Poly1305's server IV is 12 bytes (AES-GCM's salt 4).
        assert!(
            matches!(v, Verified::V12(r) if r.server_iv.len() == 12),
            "the session ran another suite"
        );
    }

    let (mut runs, mut refused, mut accepted) = (0, 0, 0);
    // Each message kind of each party with a mutation applied.
    let mut kinds_hit = std::collections::BTreeSet::new();
    let mut seed = first_seed;
    // The prover as the party under test: every field of every message
    // (of every kind, for `KindEnds`).
    let pnames: Vec<_> = honest.prover_msgs.iter().map(|m| m.name()).collect();
    let prover_at: Vec<usize> = match which {
        Sweep::All => (0..pnames.len()).collect(),
        Sweep::KindEnds => kind_ends(&pnames),
    };
    for index in prover_at {
        let m = &honest.prover_msgs[index];
        for mutant in 0..prover_mutants(m).len() {
            seed += 1;
            let r = run_once(version, seed, Some(Target::Prover { index, mutant }));
            if !r.applied {
                continue; // the server's randomness changed the flight
            }
            runs += 1;
            kinds_hit.insert(("prover", m.name()));
            match &r.verified {
                None => refused += 1,
                Some(v) => {
                    accepted += 1;
                    assert!(
                        only_true_bytes(v, &truth),
                        "{version:?} prover message {index} ({}) mutant {mutant}: the verifier accepted bytes the server did not send",
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
    let vnames: Vec<_> = honest.verifier_msgs.iter().map(|m| m.name()).collect();
    let last_chunk = honest
        .verifier_msgs
        .iter()
        .rposition(|m| matches!(m, VerifierMsg::Tables { .. }));
    let verifier_at: Vec<usize> = match which {
        Sweep::All => (0..vnames.len())
            .filter(|&index| {
                let follows_a_chunk = index > 0
                    && matches!(honest.verifier_msgs[index - 1], VerifierMsg::Tables { .. });
                !(matches!(honest.verifier_msgs[index], VerifierMsg::Tables { .. })
                    && follows_a_chunk
                    && Some(index) != last_chunk)
            })
            .collect(),
        Sweep::KindEnds => kind_ends(&vnames),
    };
    for index in verifier_at {
        let m = &honest.verifier_msgs[index];
        for mutant in 0..verifier_mutants(m).len() {
            seed += 1;
            let r = run_once(version, seed, Some(Target::Verifier { index, mutant }));
            if !r.applied {
                continue;
            }
            runs += 1;
            kinds_hit.insert(("verifier", m.name()));
            // The request reaches the server exactly as the prover wrote
            // it, or not at all (dual execution).
            assert!(
                r.server_saw.is_empty() || r.server_saw == request(),
                "{version:?} verifier message {index} ({}) mutant {mutant}: the server decrypted {:?}",
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
                        "{version:?} verifier message {index} ({}) mutant {mutant}: the prover took a response the server did not send",
                        m.name()
                    );
                }
            }
        }
    }
    eprintln!(
        "differential ({version:?}, {which:?}): {} prover and {} verifier messages, {runs} mutated sessions: {refused} refused, {accepted} ended with true bytes only, in {:?}",
        honest.prover_msgs.len(),
        honest.verifier_msgs.len(),
        started.elapsed()
    );
    // Every kind of message either party sent, with a mutant (the
    // aborts have none), was mutated at least once.
    let mut sent: Vec<(&str, &str)> = honest
        .prover_msgs
        .iter()
        .filter(|m| !prover_mutants(m).is_empty())
        .map(|m| ("prover", m.name()))
        .chain(
            honest
                .verifier_msgs
                .iter()
                .filter(|m| !verifier_mutants(m).is_empty())
                .map(|m| ("verifier", m.name())),
        )
        .collect();
    sent.sort();
    sent.dedup();
    let missed: Vec<_> = sent.iter().filter(|k| !kinds_hit.contains(k)).collect();
    assert!(missed.is_empty(), "{version:?}: never mutated: {missed:?}");
    assert!(runs > 100, "too few mutated sessions ({runs})");
}
