//! End-to-end proofs on sessions built with RustCrypto's AEADs and HKDF, and
//! cheating provers that must be caught.

use super::*;
use crate::testing::{tls12_session, tls13_session};
use futures::executor::block_on;
use rand::SeedableRng;
use webproof_core::cot::ideal;
use webproof_core::{memory_duplex, Channel};
use webproof_zk::{Config, Prover, Verifier};

/// Run a proof: the prover with its statement and witness, the verifier with its own statement.
fn run_pair(
    prover_stmt: &Statement,
    witness: &Witness,
    verifier_stmt: &Statement,
) -> (Result<Proven>, Result<Proven>) {
    let (a, b) = memory_duplex();
    let (cot_s, cot_r) = ideal::pair(42);
    let cfg = Config::default();
    block_on(async {
        let prover = async {
            let mut p = Prover::new(cot_r, Channel::new(a), cfg).await?;
            let out = run(&mut p, prover_stmt, Some(witness)).await;
            // Drop the prover on failure so the verifier sees a closed channel, not a hang.
            drop(p);
            out
        };
        let verifier = async {
            let mut rng = rand::rngs::StdRng::seed_from_u64(7);
            let mut v = Verifier::new(cot_s, Channel::new(b), cfg, &mut rng).await?;
            let out = run(&mut v, verifier_stmt, None).await;
            drop(v);
            out
        };
        futures::join!(prover, verifier)
    })
}

fn expect_bytes(
    out: &DirectionOutput,
    plain: &[Vec<u8>],
    ranges: &[(usize, core::ops::Range<usize>)],
) {
    let DirectionOutput::Bytes(recs) = out else {
        panic!("expected bytes")
    };
    for (i, rec) in recs.iter().enumerate() {
        for (pos, b) in rec.iter().enumerate() {
            let disclosed = ranges
                .iter()
                .any(|(r, range)| *r == i && range.contains(&pos));
            if disclosed {
                assert_eq!(*b, Some(plain[i][pos]), "record {i} byte {pos}");
            } else {
                assert_eq!(*b, None, "record {i} byte {pos} must stay hidden");
            }
        }
    }
}

const REQUEST: &[u8] =
    b"GET /account HTTP/1.1\r\nHost: bank.example\r\nCookie: secret=hunter2\r\n\r\n";
const RESPONSE1: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n";
const RESPONSE2: &[u8] =
    b"{\"name\":\"alice\",\"balance\":1234567,\"iban\":\"XX00 1234 5678 9999\"}";

#[test]
fn tls13_all_suites_selective_disclosure() {
    for (aead, seed) in [
        (Aead::Aes128Gcm, 1),
        (Aead::ChaCha20Poly1305, 2),
        (Aead::Aes256Gcm, 3),
    ] {
        let mut s = tls13_session(aead, seed, &[REQUEST], &[RESPONSE1, RESPONSE2]);
        let sent_ranges = vec![(0, 0..43)]; // request line and Host, not the cookie
        let recv_ranges = vec![
            (0, 0..RESPONSE1.len()),
            (1, 0..33),
            (1, 34..RESPONSE2.len()),
        ];
        s.statement.sent.disclosure = Disclosure::Ranges(sent_ranges.clone());
        s.statement.recv.disclosure = Disclosure::Ranges(recv_ranges.clone());
        let (p, v) = run_pair(&s.statement, &s.witness, &s.statement);
        let (p, v) = (p.unwrap(), v.unwrap());
        assert_eq!(p, v);
        expect_bytes(&v.sent.disclosed, &s.sent, &sent_ranges);
        expect_bytes(&v.recv.disclosed, &s.recv, &recv_ranges);
    }
}

/// Disclosed ranges may overlap, repeat, touch, be empty or come in any
/// order (the per-record ranges are merged): exactly their union is opened.
#[test]
fn overlapping_and_unordered_ranges_open_their_union() {
    for (aead, seed) in [(Aead::Aes128Gcm, 11), (Aead::ChaCha20Poly1305, 12)] {
        let mut s = tls13_session(aead, seed, &[REQUEST], &[RESPONSE1, RESPONSE2]);
        let recv_ranges = vec![
            (1, 40..50),
            (1, 0..5),
            (0, 3..3),
            (1, 15..25),
            (1, 10..20),
            (1, 5..7),
            (1, 0..5),
            (0, 30..RESPONSE1.len()),
            (1, 49..RESPONSE2.len()),
        ];
        s.statement.recv.disclosure = Disclosure::Ranges(recv_ranges.clone());
        let (p, v) = run_pair(&s.statement, &s.witness, &s.statement);
        let (p, v) = (p.unwrap(), v.unwrap());
        assert_eq!(p, v);
        expect_bytes(&v.recv.disclosed, &s.recv, &recv_ranges);
    }
}

#[test]
fn tls13_full_reveal_opens_the_derived_keys() {
    let s = tls13_session(Aead::Aes128Gcm, 4, &[REQUEST], &[RESPONSE1]);
    let (p, v) = run_pair(&s.statement, &s.witness, &s.statement);
    p.unwrap();
    let v = v.unwrap();
    assert!(
        matches!(&v.sent.disclosed, DirectionOutput::Key { key, iv } if *key == s.keys.0 && iv.len() == 12)
    );
    assert!(matches!(&v.recv.disclosed, DirectionOutput::Key { key, .. } if *key == s.keys.1));
}

#[test]
fn tls12_all_suites_bind_finished_and_disclose() {
    for (aead, seed) in [
        (Aead::Aes128Gcm, 11),
        (Aead::ChaCha20Poly1305, 12),
        (Aead::Aes256Gcm, 13),
    ] {
        let mut s = tls12_session(aead, seed, &[REQUEST], &[RESPONSE1, RESPONSE2]);
        let recv_ranges = vec![(1, 2..20)];
        s.statement.recv.disclosure = Disclosure::Ranges(recv_ranges.clone());
        let (p, v) = run_pair(&s.statement, &s.witness, &s.statement);
        p.unwrap();
        let v = v.unwrap();
        assert!(matches!(&v.sent.disclosed, DirectionOutput::Key { key, .. } if *key == s.keys.0));
        expect_bytes(&v.recv.disclosed, &s.recv, &recv_ranges);
    }
}

fn assert_caught(p: Result<Proven>, v: Result<Proven>) {
    assert!(v.is_err(), "verifier accepted a false statement: {v:?}");
    let _ = p;
}

#[test]
fn wrong_handshake_secret_is_caught() {
    let s = tls13_session(Aead::Aes128Gcm, 5, &[REQUEST], &[RESPONSE1]);
    let mut wrong = s.witness.clone();
    wrong.secret[0] ^= 1;
    let (p, v) = run_pair(&s.statement, &wrong, &s.statement);
    assert_caught(p, v);
}

#[test]
fn keys_of_another_handshake_are_caught() {
    // The prover holds a real session but claims it belongs to a handshake
    // with other transcript hashes (e.g. another server): the revealed
    // handshake secrets no longer follow from its HS.
    let s = tls13_session(Aead::Aes128Gcm, 6, &[REQUEST], &[RESPONSE1]);
    let mut other = s.statement.clone();
    if let Handshake::Tls13(h) = &mut other.handshake {
        h.finished_hash[3] ^= 0x40;
    }
    // Prover proves for `other` (consistent with its HS), verifier checks the real one.
    let mut ranges = other.clone();
    ranges.recv.disclosure = Disclosure::Ranges(vec![(0, 0..8)]);
    let mut real = s.statement.clone();
    real.recv.disclosure = Disclosure::Ranges(vec![(0, 0..8)]);
    let (p, v) = run_pair(&ranges, &s.witness, &real);
    assert_caught(p, v);
}

#[test]
fn dropped_reordered_replayed_records_are_caught() {
    let s = tls13_session(
        Aead::Aes128Gcm,
        7,
        &[REQUEST],
        &[RESPONSE1, RESPONSE2, RESPONSE1],
    );
    let all = |recs: &[Record]| {
        Disclosure::Ranges(
            recs.iter()
                .enumerate()
                .map(|(i, r)| (i, 0..r.ciphertext.len()))
                .collect(),
        )
    };
    let mut verifier_view = s.statement.clone();
    verifier_view.recv.disclosure = all(&verifier_view.recv.records);
    // Reordered: the prover swaps records 1 and 2 with their sequence numbers
    // kept, so each is decrypted with the other's nonce.
    let mut reordered = verifier_view.clone();
    let seqs: Vec<u64> = reordered.recv.records.iter().map(|r| r.seq).collect();
    reordered.recv.records.swap(1, 2);
    for (r, s) in reordered.recv.records.iter_mut().zip(seqs) {
        r.seq = s;
    }
    // Replayed: record 0 claimed again in place of record 2.
    let mut replayed = verifier_view.clone();
    replayed.recv.records[2] = Record {
        seq: 2,
        ..replayed.recv.records[0].clone()
    };
    // The verifier decrypts only what it recorded, in its order: a cheat
    // either breaks the proof or changes nothing the verifier outputs.
    let truth: Vec<Vec<u8>> = s.recv.clone();
    for (name, cheat) in [("reordered", reordered), ("replayed", replayed)] {
        let (_, v) = run_pair(&cheat, &s.witness, &verifier_view);
        if let Ok(v) = v {
            let DirectionOutput::Bytes(recs) = &v.recv.disclosed else {
                panic!("bytes")
            };
            for (i, rec) in recs.iter().enumerate() {
                let got: Vec<u8> = rec.iter().map(|b| b.expect("all disclosed")).collect();
                assert_eq!(
                    got, truth[i],
                    "{name}: verifier output differs from what it recorded"
                );
            }
        }
    }
    // Dropped: the prover's statement has fewer records than the verifier
    // recorded; the proofs desynchronise and the verifier rejects.
    let mut dropped = verifier_view.clone();
    dropped.recv.records.pop();
    dropped.recv.disclosure = all(&dropped.recv.records);
    let (p, v) = run_pair(&dropped, &s.witness, &verifier_view);
    assert_caught(p, v);
}

#[test]
fn tls12_wrong_master_secret_or_finished_is_caught() {
    let s = tls12_session(Aead::Aes128Gcm, 14, &[REQUEST], &[RESPONSE1]);
    let mut wrong = s.witness.clone();
    wrong.secret[47] ^= 0x80;
    let (p, v) = run_pair(&s.statement, &wrong, &s.statement);
    assert_caught(p, v);
    // A server Finished from another session does not decrypt to this master
    // secret's verify_data.
    let other = tls12_session(Aead::Aes128Gcm, 15, &[REQUEST], &[RESPONSE1]);
    let mut spliced = s.statement.clone();
    if let (Handshake::Tls12(h), Handshake::Tls12(o)) =
        (&mut spliced.handshake, &other.statement.handshake)
    {
        h.server_finished = o.server_finished.clone();
    }
    let (p, v) = run_pair(&spliced, &s.witness, &spliced);
    assert_caught(p, v);
}

#[test]
fn malformed_statements_are_rejected_before_proving() {
    let s = tls13_session(Aead::Aes128Gcm, 8, &[REQUEST], &[RESPONSE1]);
    let mut bad = s.statement.clone();
    bad.recv.disclosure = Disclosure::Ranges(vec![(0, 0..RESPONSE1.len() + 1)]);
    assert!(matches!(bad.validate(), Err(Error::Malformed(_))));
    let mut bad = s.statement.clone();
    bad.recv.disclosure = Disclosure::Ranges(vec![(5, 0..1)]);
    assert!(bad.validate().is_err());
    let mut bad = s.statement.clone();
    bad.recv.records[0].explicit_nonce = Some([0; 8]);
    assert!(bad.validate().is_err());
    let mut bad = s.statement.clone();
    bad.aead = Aead::Aes256Gcm;
    assert!(
        bad.validate().is_err(),
        "SHA-256 handshake with a SHA-384 suite"
    );
}

/// SHA-256(prefix || blinder || spans) in the clear.
fn commitment_digest(c: &Commitment, blinder: &[u8], plain: &[Vec<u8>]) -> [u8; 32] {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    h.update(&c.prefix);
    h.update(blinder);
    for (r, range) in &c.spans {
        h.update(&plain[*r][range.clone()]);
    }
    h.finalize().into()
}

fn leaf_commitments(records: &[Record], chunk: usize, prefix_tag: u8) -> Vec<Commitment> {
    // Fixed-size chunks over the direction's plaintext, crossing record boundaries.
    let mut out = Vec::new();
    let mut spans = Vec::new();
    let mut filled = 0;
    for (i, r) in records.iter().enumerate() {
        let mut at = 0;
        while at < r.ciphertext.len() {
            let take = (chunk - filled).min(r.ciphertext.len() - at);
            spans.push((i, at..at + take));
            at += take;
            filled += take;
            if filled == chunk {
                out.push(Commitment {
                    prefix: vec![prefix_tag; 16],
                    blinder_len: 16,
                    spans: std::mem::take(&mut spans),
                });
                filled = 0;
            }
        }
    }
    if !spans.is_empty() {
        out.push(Commitment {
            prefix: vec![prefix_tag; 16],
            blinder_len: 16,
            spans,
        });
    }
    out
}

#[test]
fn commitments_hash_the_plaintext_the_verifier_never_sees() {
    for (aead, seed, tls13) in [
        (Aead::Aes128Gcm, 21, true),
        (Aead::ChaCha20Poly1305, 22, false),
    ] {
        let mut s = if tls13 {
            tls13_session(aead, seed, &[REQUEST], &[RESPONSE1, RESPONSE2])
        } else {
            tls12_session(aead, seed, &[REQUEST], &[RESPONSE1, RESPONSE2])
        };
        s.statement.sent.disclosure = Disclosure::Ranges(vec![]);
        s.statement.recv.disclosure = Disclosure::Ranges(vec![(1, 0..5)]);
        s.statement.sent.commitments = leaf_commitments(&s.statement.sent.records, 40, 1);
        s.statement.recv.commitments = leaf_commitments(&s.statement.recv.records, 50, 2);
        let blinders = |n: usize, t: u8| (0..n).map(|i| vec![t ^ i as u8; 16]).collect::<Vec<_>>();
        s.witness.sent_blinders = blinders(s.statement.sent.commitments.len(), 0x11);
        s.witness.recv_blinders = blinders(s.statement.recv.commitments.len(), 0x22);
        let (p, v) = run_pair(&s.statement, &s.witness, &s.statement);
        let (p, v) = (p.unwrap(), v.unwrap());
        assert_eq!(p, v);
        for (d, plain, bl) in [
            (&v.sent, &s.sent, &s.witness.sent_blinders),
            (&v.recv, &s.recv, &s.witness.recv_blinders),
        ] {
            let coms = if std::ptr::eq(d, &v.sent) {
                &s.statement.sent.commitments
            } else {
                &s.statement.recv.commitments
            };
            assert_eq!(d.commitments.len(), coms.len());
            for ((digest, c), b) in d.commitments.iter().zip(coms).zip(bl) {
                assert_eq!(*digest, commitment_digest(c, b, plain));
            }
        }
        // Nothing of the sent direction was disclosed.
        let DirectionOutput::Bytes(recs) = &v.sent.disclosed else {
            panic!()
        };
        assert!(recs.iter().flatten().all(|b| b.is_none()));
    }
}

#[test]
fn commitment_to_other_plaintext_is_caught() {
    // The prover computes its commitments over a plaintext it made up (as if
    // the ciphertext were different); the verifier uses what it recorded.
    let mut s = tls13_session(Aead::Aes128Gcm, 23, &[REQUEST], &[RESPONSE1]);
    s.statement.sent.disclosure = Disclosure::Ranges(vec![]);
    s.statement.recv.disclosure = Disclosure::Ranges(vec![]);
    s.statement.recv.commitments = leaf_commitments(&s.statement.recv.records, 32, 3);
    s.witness.recv_blinders = vec![vec![9; 16]; s.statement.recv.commitments.len()];
    let mut forged = s.statement.clone();
    forged.recv.records[0].ciphertext[7] ^= 0x20;
    let (_, v) = run_pair(&forged, &s.witness, &s.statement);
    assert!(
        v.is_err(),
        "verifier accepted a commitment to another plaintext"
    );
}

#[test]
fn overlapping_or_unordered_commitments_are_rejected() {
    let s = tls13_session(Aead::Aes128Gcm, 24, &[REQUEST], &[RESPONSE1]);
    let mut bad = s.statement.clone();
    bad.recv.commitments = vec![
        Commitment {
            prefix: vec![],
            blinder_len: 16,
            spans: vec![(0, 10..20)],
        },
        Commitment {
            prefix: vec![],
            blinder_len: 16,
            spans: vec![(0, 15..25)],
        },
    ];
    assert!(bad.validate().is_err());
    bad.recv.commitments = vec![Commitment {
        prefix: vec![],
        blinder_len: 16,
        spans: vec![],
    }];
    assert!(bad.validate().is_err());
    bad.recv.commitments = vec![Commitment {
        prefix: vec![],
        blinder_len: 1000,
        spans: vec![(0, 0..1)],
    }];
    assert!(bad.validate().is_err());
}

#[test]
fn full_stack_session_with_silent_ot() {
    // Base OT + SoftSpokenOT + Ferret + QuickSilver, as in production, with
    // other traffic on the same connection between setup and proof.
    let mut s = tls13_session(Aead::Aes128Gcm, 31, &[REQUEST], &[RESPONSE1, RESPONSE2]);
    s.statement.recv.disclosure = Disclosure::Ranges(vec![(0, 0..15), (1, 0..RESPONSE2.len())]);
    let (a, b) = memory_duplex();
    let cfg = SessionConfig::default();
    let (p, v) = block_on(async {
        let prover = async {
            let mut rng = rand::rngs::StdRng::seed_from_u64(1);
            let mut ch = Channel::new(a);
            let pre = ProverPreprocessed::setup(&mut ch, cfg, &mut rng).await?;
            ch.send(b"relay traffic").await?;
            pre.prove(ch, &s.statement, &s.witness)
                .await
                .map(|(p, _)| p)
        };
        let verifier = async {
            let mut rng = rand::rngs::StdRng::seed_from_u64(2);
            let mut ch = Channel::new(b);
            let pre = VerifierPreprocessed::setup(&mut ch, cfg, &mut rng).await?;
            assert_eq!(ch.recv(100).await?, b"relay traffic");
            pre.verify(ch, &s.statement, &mut rng).await.map(|(p, _)| p)
        };
        futures::join!(prover, verifier)
    });
    let (p, v) = (p.unwrap(), v.unwrap());
    assert_eq!(p, v);
    expect_bytes(
        &v.recv.disclosed,
        &s.recv,
        &[(0, 0..15), (1, 0..RESPONSE2.len())],
    );
}
