//! End-to-end proofs on sessions built with RustCrypto's AEADs and HKDF, and
//! cheating provers that must be caught.

use super::*;
use aes_gcm::aead::{Aead as _, KeyInit, Payload};
use futures::executor::block_on;

use hmac::{Hmac, Mac};
use rand::{Rng, SeedableRng};
use sha2::{Digest, Sha256, Sha384};
use webproof_core::cot::ideal;
use webproof_core::{memory_duplex, Channel};
use webproof_zk::{Config, Prover, Verifier};

fn expand_label<H>(secret: &[u8], label: &str, ctx: &[u8], len: usize) -> Vec<u8>
where
    H: Digest + hmac::digest::core_api::BlockSizeUser + Clone,
    hmac::SimpleHmac<H>: hmac::digest::KeyInit,
{
    let hk = hkdf::SimpleHkdf::<H>::from_prk(secret).expect("prk");
    let mut info = (len as u16).to_be_bytes().to_vec();
    let full = format!("tls13 {label}");
    info.push(full.len() as u8);
    info.extend_from_slice(full.as_bytes());
    info.push(ctx.len() as u8);
    info.extend_from_slice(ctx);
    let mut out = vec![0u8; len];
    hk.expand(&info, &mut out).expect("expand");
    out
}

/// What the TLS 1.3 key schedule gives for `hs` (reference, outside the circuit).
struct Keys13 {
    c_hs: Vec<u8>,
    s_hs: Vec<u8>,
    c_key: Vec<u8>,
    c_iv: Vec<u8>,
    s_key: Vec<u8>,
    s_iv: Vec<u8>,
}

fn schedule13(aead: Aead, hs: &[u8], hello: &[u8], fin: &[u8]) -> Keys13 {
    fn go<H>(aead: Aead, hs: &[u8], hello: &[u8], fin: &[u8]) -> Keys13
    where
        H: Digest + hmac::digest::core_api::BlockSizeUser + Clone,
        hmac::SimpleHmac<H>: hmac::digest::KeyInit,
    {
        let n = <H as Digest>::output_size();
        let c_hs = expand_label::<H>(hs, "c hs traffic", hello, n);
        let s_hs = expand_label::<H>(hs, "s hs traffic", hello, n);
        let derived = expand_label::<H>(hs, "derived", &H::digest(b""), n);
        let (ms, _) = hkdf::SimpleHkdf::<H>::extract(Some(&derived), &vec![0u8; n]);
        let c_ap = expand_label::<H>(&ms, "c ap traffic", fin, n);
        let s_ap = expand_label::<H>(&ms, "s ap traffic", fin, n);
        Keys13 {
            c_key: expand_label::<H>(&c_ap, "key", &[], aead.key_len()),
            c_iv: expand_label::<H>(&c_ap, "iv", &[], 12),
            s_key: expand_label::<H>(&s_ap, "key", &[], aead.key_len()),
            s_iv: expand_label::<H>(&s_ap, "iv", &[], 12),
            c_hs,
            s_hs,
        }
    }
    match aead {
        Aead::Aes256Gcm => go::<Sha384>(aead, hs, hello, fin),
        _ => go::<Sha256>(aead, hs, hello, fin),
    }
}

/// Encrypt `pt` as record `seq` (payload only; the tag is dropped, as in a statement).
fn seal(aead: Aead, key: &[u8], nonce: &[u8; 12], pt: &[u8]) -> Vec<u8> {
    let payload = Payload { msg: pt, aad: b"" };
    let mut ct = match aead {
        Aead::Aes128Gcm => aes_gcm::Aes128Gcm::new_from_slice(key)
            .unwrap()
            .encrypt(nonce.into(), payload),
        Aead::Aes256Gcm => aes_gcm::Aes256Gcm::new_from_slice(key)
            .unwrap()
            .encrypt(nonce.into(), payload),
        Aead::ChaCha20Poly1305 => chacha20poly1305::ChaCha20Poly1305::new_from_slice(key)
            .unwrap()
            .encrypt(nonce.into(), payload),
    }
    .unwrap();
    ct.truncate(pt.len());
    ct
}

fn nonce13(iv: &[u8], seq: u64) -> [u8; 12] {
    let mut n: [u8; 12] = iv.try_into().unwrap();
    for (b, s) in n[4..].iter_mut().zip(seq.to_be_bytes()) {
        *b ^= s;
    }
    n
}

struct Session {
    statement: Statement,
    witness: Vec<u8>,
    sent: Vec<Vec<u8>>,
    recv: Vec<Vec<u8>>,
    keys: (Vec<u8>, Vec<u8>),
}

fn tls13_session(aead: Aead, seed: u64, sent: &[&[u8]], recv: &[&[u8]]) -> Session {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let hash = if aead == Aead::Aes256Gcm {
        HashAlg::Sha384
    } else {
        HashAlg::Sha256
    };
    let n = hash.output_len();
    let rand_vec =
        |rng: &mut rand::rngs::StdRng, n: usize| (0..n).map(|_| rng.gen()).collect::<Vec<u8>>();
    let hs = rand_vec(&mut rng, n);
    let hello = rand_vec(&mut rng, n);
    let fin = rand_vec(&mut rng, n);
    let k = schedule13(aead, &hs, &hello, &fin);
    let records = |msgs: &[&[u8]], key: &[u8], iv: &[u8]| -> Vec<Record> {
        msgs.iter()
            .enumerate()
            .map(|(i, m)| Record {
                seq: i as u64,
                explicit_nonce: None,
                ciphertext: seal(aead, key, &nonce13(iv, i as u64), m),
            })
            .collect()
    };
    let statement = Statement {
        aead,
        handshake: Handshake::Tls13(Tls13Handshake {
            hash,
            hello_hash: hello,
            finished_hash: fin,
            client_handshake_secret: k.c_hs.clone(),
            server_handshake_secret: k.s_hs.clone(),
        }),
        sent: Direction {
            records: records(sent, &k.c_key, &k.c_iv),
            disclosure: Disclosure::Key,
        },
        recv: Direction {
            records: records(recv, &k.s_key, &k.s_iv),
            disclosure: Disclosure::Key,
        },
    };
    Session {
        statement,
        witness: hs,
        sent: sent.iter().map(|m| m.to_vec()).collect(),
        recv: recv.iter().map(|m| m.to_vec()).collect(),
        keys: (k.c_key, k.s_key),
    }
}

/// P_hash of RFC 5246 with HMAC-SHA256 or -SHA384.
fn prf12(hash: HashAlg, secret: &[u8], label: &str, seed: &[u8], len: usize) -> Vec<u8> {
    fn p<M: Mac + hmac::digest::KeyInit + Clone>(
        secret: &[u8],
        seed: &[u8],
        len: usize,
    ) -> Vec<u8> {
        let mac = |data: &[&[u8]]| {
            let mut m = <M as hmac::digest::KeyInit>::new_from_slice(secret).unwrap();
            for d in data {
                m.update(d);
            }
            m.finalize().into_bytes().to_vec()
        };
        let mut a = mac(&[seed]);
        let mut out = Vec::new();
        while out.len() < len {
            out.extend(mac(&[&a, seed]));
            a = mac(&[&a]);
        }
        out.truncate(len);
        out
    }
    let full = [label.as_bytes(), seed].concat();
    match hash {
        HashAlg::Sha256 => p::<Hmac<Sha256>>(secret, &full, len),
        _ => p::<Hmac<Sha384>>(secret, &full, len),
    }
}

fn tls12_session(aead: Aead, seed: u64, sent: &[&[u8]], recv: &[&[u8]]) -> Session {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let hash = if aead == Aead::Aes256Gcm {
        HashAlg::Sha384
    } else {
        HashAlg::Sha256
    };
    let n = hash.output_len();
    let ms: Vec<u8> = (0..48).map(|_| rng.gen()).collect();
    let cr: [u8; 32] = rng.gen();
    let sr: [u8; 32] = rng.gen();
    let ch: Vec<u8> = (0..n).map(|_| rng.gen()).collect();
    let sh: Vec<u8> = (0..n).map(|_| rng.gen()).collect();
    let (kl, il) = (aead.key_len(), aead.tls12_iv_len());
    let kb = prf12(
        hash,
        &ms,
        "key expansion",
        &[sr.as_slice(), cr.as_slice()].concat(),
        2 * kl + 2 * il,
    );
    let (c_key, s_key) = (kb[..kl].to_vec(), kb[kl..2 * kl].to_vec());
    let (c_iv, s_iv) = (kb[2 * kl..2 * kl + il].to_vec(), kb[2 * kl + il..].to_vec());
    let c_vd = prf12(hash, &ms, "client finished", &ch, 12);
    let s_vd = prf12(hash, &ms, "server finished", &sh, 12);
    let mut rng2 = rand::rngs::StdRng::seed_from_u64(seed ^ 1);
    let mut record = |key: &[u8], iv: &[u8], seq: u64, pt: &[u8]| -> Record {
        if il == 4 {
            let explicit: [u8; 8] = rng2.gen();
            let mut nonce = [0u8; 12];
            nonce[..4].copy_from_slice(iv);
            nonce[4..].copy_from_slice(&explicit);
            Record {
                seq,
                explicit_nonce: Some(explicit),
                ciphertext: seal(aead, key, &nonce, pt),
            }
        } else {
            Record {
                seq,
                explicit_nonce: None,
                ciphertext: seal(aead, key, &nonce13(iv, seq), pt),
            }
        }
    };
    let fin = |vd: &[u8]| [FINISHED_HEADER.as_slice(), vd].concat();
    let client_finished = record(&c_key, &c_iv, 0, &fin(&c_vd));
    let server_finished = record(&s_key, &s_iv, 0, &fin(&s_vd));
    let sent_records = sent
        .iter()
        .enumerate()
        .map(|(i, m)| record(&c_key, &c_iv, i as u64 + 1, m))
        .collect();
    let recv_records = recv
        .iter()
        .enumerate()
        .map(|(i, m)| record(&s_key, &s_iv, i as u64 + 1, m))
        .collect();
    let statement = Statement {
        aead,
        handshake: Handshake::Tls12(Tls12Handshake {
            hash,
            client_random: cr,
            server_random: sr,
            client_finished_hash: ch,
            server_finished_hash: sh,
            client_verify_data: c_vd.try_into().unwrap(),
            client_finished,
            server_finished,
        }),
        sent: Direction {
            records: sent_records,
            disclosure: Disclosure::Key,
        },
        recv: Direction {
            records: recv_records,
            disclosure: Disclosure::Key,
        },
    };
    Session {
        statement,
        witness: ms,
        sent: sent.iter().map(|m| m.to_vec()).collect(),
        recv: recv.iter().map(|m| m.to_vec()).collect(),
        keys: (c_key, s_key),
    }
}

/// Run a proof: the prover with its statement and witness, the verifier with its own statement.
fn run_pair(
    prover_stmt: &Statement,
    witness: &[u8],
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
        expect_bytes(&v.sent, &s.sent, &sent_ranges);
        expect_bytes(&v.recv, &s.recv, &recv_ranges);
    }
}

#[test]
fn tls13_full_reveal_opens_the_derived_keys() {
    let s = tls13_session(Aead::Aes128Gcm, 4, &[REQUEST], &[RESPONSE1]);
    let (p, v) = run_pair(&s.statement, &s.witness, &s.statement);
    p.unwrap();
    let v = v.unwrap();
    assert_eq!(
        v.sent,
        DirectionOutput::Key {
            key: s.keys.0.clone(),
            iv: match &v.sent {
                DirectionOutput::Key { iv, .. } => iv.clone(),
                _ => unreachable!(),
            }
        }
    );
    assert!(matches!(&v.recv, DirectionOutput::Key { key, .. } if *key == s.keys.1));
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
        assert!(matches!(&v.sent, DirectionOutput::Key { key, .. } if *key == s.keys.0));
        expect_bytes(&v.recv, &s.recv, &recv_ranges);
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
    wrong[0] ^= 1;
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
            let DirectionOutput::Bytes(recs) = &v.recv else {
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
    wrong[47] ^= 0x80;
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
