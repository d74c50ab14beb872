//! An AES-GCM record encrypted in 2PC (keystream in a garbled circuit, the
//! tag from shares of the powers of H over GF(2^128) OLE) equals what the
//! `aes-gcm` crate produces under the reconstructed key.

mod common;
use aes_gcm::aead::{Aead, KeyInit, Payload};
use common::cots;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use std::sync::Arc;
use webproof_circuits::bytes_to_bits;
use webproof_core::Block;
use webproof_mpc::field::Gf128;
use webproof_mpc::ole::{OleReceiver, OleSender};
use webproof_mpc::{Error, Plan};
use webproof_mpc_tls::rec::gcm::{self, NonceForm, RecordProver, RecordVerifier};

/// Chain `v`'s key ‖ IV input to stand-in 0-labels (as if output by the
/// key derivation, under `delta`) with the verifier's share `vshare`;
/// returns the prover's labels of its share `pshare`.
fn chain(
    v: &mut RecordVerifier,
    delta: Block,
    vshare: &[u8],
    pshare: &[u8],
    rng: &mut ChaCha20Rng,
) -> Result<Vec<Block>, Error> {
    let zero: Vec<Block> = (0..8 * pshare.len())
        .map(|_| Block(rng.gen::<u128>()))
        .collect();
    v.chain(&zero, vshare)?;
    Ok(zero
        .iter()
        .zip(bytes_to_bits(pshare))
        .map(|(&z, b)| if b { z ^ delta } else { z })
        .collect())
}

/// One record in 2PC: (key ‖ IV) shares of both parties, the plaintext,
/// the sequence number; returns the record body (explicit nonce, C, tag).
fn encrypt_2pc(
    key_len: usize,
    vshare: &[u8],
    pshare: &[u8],
    pt: &[u8],
    seq: u64,
    tamper_table: bool,
) -> Result<Vec<u8>, Error> {
    let mut v = encrypt_direction(
        NonceForm::Tls12,
        key_len,
        vshare,
        pshare,
        &[(pt, seq)],
        tamper_table,
    )?;
    Ok(v.remove(0))
}

/// The records of one direction in 2PC, in order: the first computes the
/// GHASH key and answers the M2A of as many of its powers as the longest
/// record's tag needs; the others take its powers and keep their
/// ciphertext from the verifier (it gets `C ⊕ ρ` only, and the tag is
/// completed with one more M2A per block). Returns each record's body
/// (explicit nonce, C, tag; TLS 1.3: C, tag), the nonce and the
/// additional data formed as `form` says.
fn encrypt_direction(
    form: NonceForm,
    key_len: usize,
    vshare: &[u8],
    pshare: &[u8],
    records: &[(&[u8], u64)],
    tamper_table: bool,
) -> Result<Vec<Vec<u8>>, Error> {
    let k = records
        .iter()
        .map(|(pt, _)| gcm::powers_needed(pt.len()))
        .max()
        .expect("a record");
    let seed = records[0].1;
    let hides: usize = records[1..]
        .iter()
        .map(|(pt, _)| gcm::hide_cots(pt.len()))
        .sum();
    let (delta, mut k_m2a, mut m_m2a) = cots(seed.wrapping_add(7), gcm::cots_needed(k) + hides);
    let (mut k_hide, mut m_hide) = (
        k_m2a.split_off(gcm::cots_needed(k)),
        m_m2a.split_off(gcm::cots_needed(k)),
    );
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let (mut os, mut or) = (OleSender::new(delta, 9), OleReceiver::new(9));
    let mut out = Vec::new();
    let (mut v_powers, mut p_powers) = (None, None);
    for (i, &(pt, seq)) in records.iter().enumerate() {
        let len = pt.len();
        let first = i == 0;
        let plan = Arc::new(Plan::new(&gcm::gcm_circuit_with(
            form, key_len, len, first,
        ))?);
        let explicit = seq.to_be_bytes();
        let aad = match form {
            NonceForm::Tls12 => gcm::tls12_aad(seq, 23, len).to_vec(),
            NonceForm::Tls13 => gcm::tls13_aad(len).to_vec(),
        };
        // Preprocessing.
        let powers = first.then_some(k);
        let mut v = RecordVerifier::new(
            Arc::clone(&plan),
            len,
            explicit,
            delta,
            1 + i as u64,
            powers,
            &mut rng,
        )?;
        let labels = chain(&mut v, delta, vshare, pshare, &mut rng)?;
        let (chunks, decoding, early) = v.preprocess()?;
        let mut chunks = chunks.into_chunks();
        if tamper_table && first {
            for b in &mut chunks[0][8..] {
                *b ^= 1;
            }
        }
        let chunks = chunks.into();
        let (ahead, hidden) = if first {
            let msg = v.powers_ahead(&mut os, &k_m2a)?;
            (
                Some(RecordProver::powers_ahead(k, &mut or, &m_m2a, &msg)?.0),
                None,
            )
        } else {
            let n = gcm::hide_cots(len);
            let rest = (k_hide.split_off(n), m_hide.split_off(n));
            let (keys, macs) = (
                core::mem::replace(&mut k_hide, rest.0),
                core::mem::replace(&mut m_hide, rest.1),
            );
            let msg = v.hide_ahead(&mut os, &keys, &mut rng)?;
            let (h, flips) = RecordProver::hide_ahead(len, &mut or, &macs, &msg)?;
            assert!(flips.iter().all(|&b| b == 0));
            (None, Some(h))
        };
        let mut p = RecordProver::new(
            plan,
            len,
            1 + i as u64,
            (chunks, decoding, early),
            ahead,
            hidden,
        )?;
        // The prover evaluates on its chained share and encrypts.
        let (ks, d) = p.keystream(&labels, pshare)?;
        let ct: Vec<u8> = pt.iter().zip(&ks).map(|(a, b)| a ^ b).collect();
        // Powers of H (from the first record) and the tag.
        if first {
            v_powers = Some(v.powers(&d)?);
            p_powers = Some(p.power_shares().expect("computes H").to_vec());
        } else {
            assert!(d.is_empty() && p.power_shares().is_none());
        }
        let (vp, pp) = (v_powers.as_deref().unwrap(), p_powers.as_deref().unwrap());
        let tag = if first {
            let tv = v.tag_share(vp, &aad, &ct)?;
            p.tag(&tv, pp, &aad, &ct)?
        } else {
            // The verifier sees the masked ciphertext only: each block is
            // the ciphertext XOR the prover's random COT choice bits.
            let masked = p.mask_ciphertext(&ct)?;
            assert_eq!(masked.len(), 16 * gcm::ct_blocks(len));
            if len >= 16 {
                assert_ne!(&masked[..16], &ct[..16]);
            }
            let (tv, corrections) = v.hidden_tag_share(vp, &aad, &masked)?;
            p.hidden_tag(&tv, &corrections, pp, &aad, &ct)?
        };
        out.push(match form {
            NonceForm::Tls12 => [&explicit[..], &ct, &tag].concat(),
            NonceForm::Tls13 => [&ct[..], &tag].concat(),
        });
    }
    Ok(out)
}

fn reference(key: &[u8], iv: &[u8], pt: &[u8], seq: u64) -> Vec<u8> {
    let nonce = [iv, &seq.to_be_bytes()[..]].concat();
    let aad = gcm::tls12_aad(seq, 23, pt.len());
    let payload = Payload { msg: pt, aad: &aad };
    let ct = if key.len() == 16 {
        aes_gcm::Aes128Gcm::new_from_slice(key)
            .unwrap()
            .encrypt(nonce.as_slice().into(), payload)
    } else {
        aes_gcm::Aes256Gcm::new_from_slice(key)
            .unwrap()
            .encrypt(nonce.as_slice().into(), payload)
    };
    [&seq.to_be_bytes()[..], &ct.unwrap()].concat()
}

#[test]
fn record_matches_aes_gcm() {
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    for (key_len, len) in [(16, 1), (16, 100), (32, 37), (16, 0)] {
        let kv: Vec<u8> = (0..key_len + 4).map(|_| rng.gen()).collect();
        let kp: Vec<u8> = (0..key_len + 4).map(|_| rng.gen()).collect();
        let k: Vec<u8> = kv.iter().zip(&kp).map(|(a, b)| a ^ b).collect();
        let pt: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
        let seq = rng.gen_range(1..1000);
        let got = encrypt_2pc(key_len, &kv, &kp, &pt, seq, false).unwrap();
        assert_eq!(
            got,
            reference(&k[..key_len], &k[key_len..], &pt, seq),
            "{key_len} {len}"
        );
    }
}

/// A direction's records where only the first computes the GHASH key:
/// a Finished-sized record, then longer ones (their tags need more powers
/// than the first's own), each equal to aes-gcm's.
#[test]
fn records_taking_another_records_ghash_key_match_aes_gcm() {
    let mut rng = ChaCha20Rng::seed_from_u64(3);
    for key_len in [16, 32] {
        let kv: Vec<u8> = (0..key_len + 4).map(|_| rng.gen()).collect();
        let kp: Vec<u8> = (0..key_len + 4).map(|_| rng.gen()).collect();
        let k: Vec<u8> = kv.iter().zip(&kp).map(|(a, b)| a ^ b).collect();
        let pts: Vec<Vec<u8>> = [16, 300, 33]
            .iter()
            .map(|&n| (0..n).map(|_| rng.gen()).collect())
            .collect();
        let records: Vec<(&[u8], u64)> = pts
            .iter()
            .enumerate()
            .map(|(i, pt)| (pt.as_slice(), i as u64))
            .collect();
        let got = encrypt_direction(NonceForm::Tls12, key_len, &kv, &kp, &records, false).unwrap();
        for ((pt, seq), body) in records.iter().zip(&got) {
            assert_eq!(
                body,
                &reference(&k[..key_len], &k[key_len..], pt, *seq),
                "{key_len} {seq}"
            );
        }
    }
    // A record that computes H with fewer powers than its own tag needs.
    let plan = Arc::new(Plan::new(&gcm::gcm_circuit(16, 40, true)).unwrap());
    let mut rng = ChaCha20Rng::seed_from_u64(4);
    let r = RecordVerifier::new(
        plan,
        40,
        [0; 8],
        webproof_core::Block(3),
        0,
        Some(4),
        &mut rng,
    );
    assert!(r.is_err());
}

/// Corrupted tables: a refused chunk, or a record the server refuses (the
/// evaluator decodes whatever its labels say; the audit after the session
/// names the cheat, `webproof_mpc::consistency`).
#[test]
fn corrupted_record_tables_give_no_valid_record() {
    let kv = [1u8; 20];
    let kp = [2u8; 20];
    let pt = b"GET / HTTP/1.1\r\n";
    let k: Vec<u8> = kv.iter().zip(&kp).map(|(a, b)| a ^ b).collect();
    let want = reference(&k[..16], &k[16..], pt, 1);
    match encrypt_2pc(16, &kv, &kp, pt, 1, true) {
        Err(e) => assert!(matches!(e, Error::Malformed(_)), "{e:?}"),
        Ok(rec) => {
            assert_eq!(rec.len(), want.len());
            assert_ne!(rec, want);
            // Either the ciphertext or the tag is wrong: the server's
            // AES-GCM refuses the record.
            let aad = gcm::tls12_aad(1, 23, pt.len());
            let nonce = [&k[16..], &rec[..8]].concat();
            let body = Payload {
                msg: &rec[8..],
                aad: &aad,
            };
            assert!(aes_gcm::Aes128Gcm::new_from_slice(&k[..16])
                .unwrap()
                .decrypt(nonce.as_slice().into(), body)
                .is_err());
        }
    }
}

/// The chain: premaster shares → TLS 1.2 key derivation in 2PC → the
/// client write key and IV shares encrypt a record in 2PC, equal to
/// aes-gcm's under the keys the shares reconstruct.
#[test]
fn record_from_derived_key_shares() {
    use webproof_circuits::tls::Tls12Suite;
    use webproof_mpc::field::P256Base;
    use webproof_mpc_tls::kdf::tls12::{
        Curve, Randoms, Tls12Config, Tls12Plans, Tls12Prover, Tls12Verifier,
    };
    let cfg = Tls12Config {
        curve: Curve::P256,
        suite: Tls12Suite::AES_128_GCM_SHA256,
        ems: true,
    };
    let plans = Tls12Plans::new(cfg).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(5);
    let (a, b) = (P256Base::random(&mut rng), P256Base::random(&mut rng));
    let (delta, keys, macs) = cots(6, 256);
    let mut v = Tls12Verifier::new(&plans, delta, 0, &mut rng).unwrap();
    let tables = v.preprocess().unwrap();
    let mut p = Tls12Prover::new(&plans, 0, tables).unwrap();
    let (cr, sr, sh): ([u8; 32], [u8; 32], [u8; 32]) = (rng.gen(), rng.gen(), rng.gen());
    let randoms = Randoms {
        client: &cr,
        server: &sr,
        session_hash: Some(&sh),
    };
    let f = p.key_derivation_flips(&b.to_le_bytes(), &macs).unwrap();
    let (msg, vk) = v
        .key_derivation(&a.to_le_bytes(), cfg.curve, &randoms, &keys, &f)
        .unwrap();
    let pk = p.key_derivation_finish(&msg).unwrap();
    let k = vk.combine(&pk);
    let pt = b"GET /bytes?size=2048 HTTP/1.1\r\nHost: example\r\n\r\n";
    let got = encrypt_2pc(
        16,
        &[&vk.client_key[..], &vk.client_iv].concat(),
        &[&pk.client_key[..], &pk.client_iv].concat(),
        pt,
        1,
        false,
    )
    .unwrap();
    assert_eq!(got, reference(&k.client_key, &k.client_iv, pt, 1));
}

/// Out-of-order calls and messages of the wrong length at every step give
/// errors, never panics.
#[test]
fn malformed_record_messages_are_refused() {
    let len = 20;
    let k = gcm::powers_needed(len);
    let plan = Arc::new(Plan::new(&gcm::gcm_circuit(16, len, true)).unwrap());
    let (delta, k_m2a, m_m2a) = cots(70, gcm::cots_needed(k));
    let (k_m2a, m_m2a) = (&k_m2a[..], &m_m2a[..]);
    let mut rng = ChaCha20Rng::seed_from_u64(71);
    let mut v =
        RecordVerifier::new(Arc::clone(&plan), len, [0; 8], delta, 0, Some(k), &mut rng).unwrap();
    let share = [9u8; 20];
    // Its inputs before its chaining, a chaining to another key's wires.
    assert!(v.early_inputs().is_err());
    assert!(chain(&mut v, delta, &share[1..], &share, &mut rng).is_err());
    let labels = chain(&mut v, delta, &share, &share, &mut rng).unwrap();
    assert!(chain(&mut v, delta, &share, &share, &mut rng).is_err());
    let tables = v.preprocess().unwrap();
    let (mut os, mut or) = (OleSender::new(delta, 1), OleReceiver::new(1));
    let aad = gcm::tls12_aad(1, 23, len);
    // Out of order on the verifier's side: offsets before the powers
    // answered ahead.
    assert!(v.powers(&[0; 64]).is_err());
    let ahead_msg = v.powers_ahead(&mut os, k_m2a).unwrap();
    assert!(v.powers_ahead(&mut os, k_m2a).is_err());
    // The prover's half refuses another record's COTs or a short answer.
    let mut or2 = or.clone();
    assert!(RecordProver::powers_ahead(k + 2, &mut or2, m_m2a, &ahead_msg).is_err());
    let mut or2 = or.clone();
    assert!(RecordProver::powers_ahead(k, &mut or2, m_m2a, &ahead_msg[1..]).is_err());
    let (ahead, flips) = RecordProver::powers_ahead(k, &mut or, m_m2a, &ahead_msg).unwrap();
    assert!(flips.iter().all(|&b| b == 0));
    let mut bad = tables.clone();
    bad.2.pop();
    assert!(RecordProver::new(Arc::clone(&plan), len, 0, bad, Some(ahead.clone()), None).is_err());
    // A record that computes H without its powers' M2A, or with the M2A
    // of fewer powers than its tag needs (another record's).
    assert!(RecordProver::new(Arc::clone(&plan), len, 0, tables.clone(), None, None).is_err());
    let short = {
        let (d2, keys2, macs2) = cots(72, gcm::cots_needed(2));
        let mut os2 = OleSender::new(d2, 1);
        let mut v2 = RecordVerifier::new(
            Arc::new(Plan::new(&gcm::gcm_circuit(16, 0, true)).unwrap()),
            0,
            [0; 8],
            d2,
            0,
            Some(2),
            &mut rng,
        )
        .unwrap();
        let msg = v2.powers_ahead(&mut os2, &keys2).unwrap();
        RecordProver::powers_ahead(2, &mut OleReceiver::new(1), &macs2, &msg)
            .unwrap()
            .0
    };
    assert!(
        RecordProver::new(Arc::clone(&plan), len, 0, tables.clone(), Some(short), None).is_err()
    );
    let mut p = RecordProver::new(plan, len, 0, tables, Some(ahead), None).unwrap();
    // Out of order on the prover's side.
    assert!(p.tag(&[0; 16], &[], &aad, &[0; 20]).is_err());
    assert!(p.power_shares().is_none());
    // A chained share of another length, then the record evaluated twice.
    assert!(p.keystream(&labels[1..], &share).is_err());
    let (ks, d) = p.keystream(&labels, &share).unwrap();
    assert_eq!(ks.len(), len);
    assert_eq!(d.len(), 16 * gcm::oles_needed(k));
    assert!(p.keystream(&labels, &share).is_err());
    // Offsets of the wrong length; then the powers, once.
    assert!(v.powers(&d[1..]).is_err());
    let vp = v.powers(&d).unwrap();
    assert!(v.powers(&d).is_err());
    // Too few powers, a ciphertext of the wrong length, then the tag share
    // given twice.
    assert!(v.tag_share(&vp[..k - 1], &aad, &ks).is_err());
    assert!(v.tag_share(&vp, &aad, &ks[1..]).is_err());
    v.tag_share(&vp, &aad, &ks).unwrap();
    assert!(v.tag_share(&vp, &aad, &ks).is_err());
    let pp = p.power_shares().unwrap().to_vec();
    p.tag(&[0; 16], &pp, &aad, &ks).unwrap();
    assert!(p.tag(&[0; 16], &pp, &aad, &ks).is_err());
    // A record that takes H has no powers to answer or offsets to read.
    let plan = Arc::new(Plan::new(&gcm::gcm_circuit(16, len, false)).unwrap());
    let mut t = RecordVerifier::new(plan, len, [0; 8], delta, 1, None, &mut rng).unwrap();
    assert!(t.powers_ahead(&mut os, k_m2a).is_err());
    assert!(t.powers(&d).is_err());
}

/// A verifier that answers the powers ahead for other inputs than its
/// `h_V^i` makes the tag wrong (the server refuses the record; for a
/// server record the joint check fails), and the audit replays the answer
/// against its revealed inputs.
#[test]
fn powers_answered_ahead_for_other_inputs_break_the_tag() {
    let len = 16;
    let kp_ = gcm::powers_needed(len);
    let plan = Arc::new(Plan::new(&gcm::gcm_circuit(16, len, true)).unwrap());
    let (delta, keys, macs) = cots(90, gcm::cots_needed(kp_));
    // The verifier of seed 91 (built twice, for the same masks).
    let verifier = |rng: &mut ChaCha20Rng| {
        RecordVerifier::new(
            Arc::clone(&plan),
            len,
            1u64.to_be_bytes(),
            delta,
            0,
            Some(kp_),
            rng,
        )
        .unwrap()
    };
    let mut rng = ChaCha20Rng::seed_from_u64(91);
    let mut v = verifier(&mut rng);
    let (mut os, or) = (OleSender::new(delta, 1), OleReceiver::new(1));
    let (k_m2a, m_m2a) = (&keys[..], &macs[..]);
    // A verifier answering ahead for inputs of its own choice.
    let k = gcm::oles_needed(kp_);
    let other: Vec<Gf128> = (0..k).map(|_| Gf128::random(&mut rng)).collect();
    let (_, bad) = os.clone().respond_ahead(k_m2a, &other).unwrap();
    let good = v.powers_ahead(&mut os, k_m2a).unwrap();
    assert_ne!(bad, good);
    let run = |msg: &[u8]| {
        let mut or = or.clone();
        // The same verifier again (same seed), its OLE stream where `v`'s
        // answer ahead left it.
        let mut rng = ChaCha20Rng::seed_from_u64(91);
        let mut v2 = verifier(&mut rng);
        let (kp, kv) = ([3u8; 20], [5u8; 20]);
        let labels = chain(&mut v2, delta, &kv, &kp, &mut rng).unwrap();
        let tables = v2.preprocess().unwrap();
        v2.powers_ahead(&mut OleSender::new(delta, 1), k_m2a)
            .unwrap();
        let (ahead, _) = RecordProver::powers_ahead(kp_, &mut or, m_m2a, msg).unwrap();
        let mut p =
            RecordProver::new(Arc::clone(&plan), len, 0, tables, Some(ahead), None).unwrap();
        let (ks, d) = p.keystream(&labels, &kp).unwrap();
        let ct: Vec<u8> = ks.iter().map(|b| b ^ 0x41).collect();
        let aad = gcm::tls12_aad(1, 23, len);
        let vp = v2.powers(&d).unwrap();
        let tv = v2.tag_share(&vp, &aad, &ct).unwrap();
        let pp = p.power_shares().unwrap().to_vec();
        let tag = p.tag(&tv, &pp, &aad, &ct).unwrap();
        let key: Vec<u8> = kp.iter().zip(&kv).map(|(a, b)| a ^ b).collect();
        let want = reference(&key[..16], &key[16..], &vec![0x41; len], 1);
        (tag.to_vec(), want[8 + len..].to_vec())
    };
    let (tag, want) = run(&good);
    assert_eq!(tag, want);
    let (tag, want) = run(&bad);
    assert_ne!(tag, want);
}

/// The server Finished record checked in 2PC: keystream from the server
/// write key shares to the prover, which decrypts; the tag computed jointly
/// over the received ciphertext (the prover's share first) matches the
/// record's; a forged tag or ciphertext is refused.
#[test]
fn server_finished_record_checked_in_2pc() {
    let mut rng = ChaCha20Rng::seed_from_u64(80);
    let kv: Vec<u8> = (0..20).map(|_| rng.gen()).collect();
    let kp: Vec<u8> = (0..20).map(|_| rng.gen()).collect();
    let k: Vec<u8> = kv.iter().zip(&kp).map(|(a, b)| a ^ b).collect();
    let vd: [u8; 12] = rng.gen();
    let pt = [&[0x14, 0, 0, 12][..], &vd].concat();
    // The server's record under its write key: explicit nonce ‖ C ‖ tag
    // (content type 22, sequence number 0).
    let nonce = [&k[16..], &[0u8; 8][..]].concat();
    let aad = gcm::tls12_aad(0, 22, pt.len());
    let body = aes_gcm::Aes128Gcm::new_from_slice(&k[..16])
        .unwrap()
        .encrypt(
            nonce.as_slice().into(),
            Payload {
                msg: &pt,
                aad: &aad,
            },
        )
        .unwrap();
    let (ct, tag) = body.split_at(16);

    let check = |ct: &[u8], tag: &[u8]| -> Result<Vec<u8>, Error> {
        let len = ct.len();
        let k = gcm::powers_needed(len);
        let plan = Arc::new(Plan::new(&gcm::gcm_circuit(16, len, true))?);
        let (delta, keys, macs) = cots(81, gcm::cots_needed(k));
        let mut rng = ChaCha20Rng::seed_from_u64(82);
        let mut v =
            RecordVerifier::new(Arc::clone(&plan), len, [0; 8], delta, 3, Some(k), &mut rng)?;
        let labels = chain(&mut v, delta, &kv, &kp, &mut rng)?;
        let tables = v.preprocess()?;
        let (mut os, mut or) = (OleSender::new(delta, 2), OleReceiver::new(2));
        let msg = v.powers_ahead(&mut os, &keys)?;
        let (ahead, _) = RecordProver::powers_ahead(k, &mut or, &macs, &msg)?;
        let mut p = RecordProver::new(plan, len, 3, tables, Some(ahead), None)?;
        let (ks, d) = p.keystream(&labels, &kp)?;
        // The prover's share goes first; the verifier's follows.
        let pp = p.power_shares().expect("computes H").to_vec();
        let tp = p.tag_share(&pp, &aad, ct)?;
        let vp = v.powers(&d)?;
        let tv = v.tag_share(&vp, &aad, ct)?;
        gcm::check_tag(&tv, &tp, tag)?;
        Ok(ct.iter().zip(&ks).map(|(a, b)| a ^ b).collect())
    };
    assert_eq!(check(ct, tag).unwrap(), pt);
    let mut bad = tag.to_vec();
    bad[3] ^= 1;
    assert_eq!(check(ct, &bad).unwrap_err(), Error::RecordTag);
    let mut bad = ct.to_vec();
    bad[15] ^= 0x40;
    assert_eq!(check(&bad, tag).unwrap_err(), Error::RecordTag);
    assert_eq!(check(ct, &tag[..15]).unwrap_err(), Error::RecordTag);
}

/// An output revealed to the verifier (its bits and one digest of the
/// active labels): the honest reveal reads as the circuit's output; a
/// flipped bit, another digest, a short or padded message are refused.
#[test]
fn revealed_outputs_are_checked_by_their_labels() {
    use webproof_circuits::{bits_to_bytes, bytes_to_bits};
    use webproof_mpc::exec::{ProverCircuit, VerifierCircuit};
    let c = webproof_circuits::cache::aes128();
    let plan = Arc::new(Plan::new(c).unwrap());
    let (delta, keys, macs) = cots(120, 128);
    let mut rng = ChaCha20Rng::seed_from_u64(121);
    let mut v = VerifierCircuit::new(Arc::clone(&plan), delta, 5, 0, &mut rng).unwrap();
    let chunks = v.garble_all();
    let decoding = v.decoding().unwrap();
    let mut p = ProverCircuit::new(plan, 5, 0).unwrap();
    let f = p.flips(&macs, &bytes_to_bits(&[7u8; 16])).unwrap();
    let msg = v.inputs(&keys, &f, &[bytes_to_bits(&[9u8; 16])]).unwrap();
    p.receive_inputs(&msg).unwrap();
    for ch in &chunks {
        p.feed(ch).unwrap();
    }
    p.finish().unwrap();
    let out = p.decode(&decoding).unwrap();
    let reveal = p.output_message(0).unwrap();
    assert_eq!(reveal.len(), 16 + 32);
    let bits = v.check_output(0, &reveal).unwrap();
    assert_eq!(bits, out[0]);
    let want = aes_gcm::aes::Aes128::new_from_slice(&[7u8; 16]).unwrap();
    let mut blk = aes_gcm::aes::Block::from([9u8; 16]);
    aes_gcm::aes::cipher::BlockEncrypt::encrypt_block(&want, &mut blk);
    assert_eq!(bits_to_bytes(&bits), blk.to_vec());
    for i in [0usize, 5, 15, 16, 40, 47] {
        let mut bad = reveal.clone();
        bad[i] ^= 0x10;
        assert!(
            matches!(v.check_output(0, &bad), Err(Error::OutputCheck { .. })),
            "byte {i}"
        );
    }
    assert!(v.check_output(0, &reveal[1..]).is_err());
    assert!(v.check_output(0, &[&reveal[..], &[0]].concat()).is_err());
    assert!(v.check_output(1, &reveal).is_err());
}

/// TLS 1.3 records (RFC 8446 §5.2, §5.3): 12-byte IVs, the nonce the IV
/// XOR the padded sequence number, the record header as the additional
/// data. As a TLS 1.3 session runs them: a zero-length record that only
/// computes the GHASH key (its nonce never used by a record sent), then
/// the request's records with their inner content type appended, which
/// take its powers and keep their ciphertext from the verifier; each
/// equal to `aes-gcm`'s under the recombined key and IV.
#[test]
fn tls13_records_match_aes_gcm() {
    let mut rng = ChaCha20Rng::seed_from_u64(13);
    for key_len in [16, 32] {
        let kv: Vec<u8> = (0..key_len + 12).map(|_| rng.gen()).collect();
        let kp: Vec<u8> = (0..key_len + 12).map(|_| rng.gen()).collect();
        let k: Vec<u8> = kv.iter().zip(&kp).map(|(a, b)| a ^ b).collect();
        let (key, iv) = k.split_at(key_len);
        let pts: Vec<Vec<u8>> = [0usize, 61, 17, 1]
            .iter()
            .map(|&n| {
                let mut p: Vec<u8> = (0..n).map(|_| rng.gen()).collect();
                if n > 0 {
                    p.push(23);
                }
                p
            })
            .collect();
        let records: Vec<(&[u8], u64)> = pts
            .iter()
            .enumerate()
            .map(|(i, pt)| (pt.as_slice(), if i == 0 { u64::MAX } else { i as u64 - 1 }))
            .collect();
        let got = encrypt_direction(NonceForm::Tls13, key_len, &kv, &kp, &records, false).unwrap();
        for ((pt, seq), body) in records.iter().zip(&got).skip(1) {
            let mut nonce = iv.to_vec();
            for (n, s) in nonce[4..].iter_mut().zip(seq.to_be_bytes()) {
                *n ^= s;
            }
            let aad = gcm::tls13_aad(pt.len());
            let payload = Payload { msg: pt, aad: &aad };
            let want = if key_len == 16 {
                aes_gcm::Aes128Gcm::new_from_slice(key)
                    .unwrap()
                    .encrypt(nonce.as_slice().into(), payload)
            } else {
                aes_gcm::Aes256Gcm::new_from_slice(key)
                    .unwrap()
                    .encrypt(nonce.as_slice().into(), payload)
            };
            assert_eq!(body, &want.unwrap(), "{key_len} {seq}");
        }
    }
}
