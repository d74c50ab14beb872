//! An AES-GCM record encrypted in 2PC (keystream in a garbled circuit, the
//! tag from shares of the powers of H over GF(2^128) OLE) equals what the
//! `aes-gcm` crate produces under the reconstructed key.

use aes_gcm::aead::{Aead, KeyInit, Payload};
use futures::executor::block_on;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use std::sync::Arc;
use webproof_circuits::{bits_to_bytes, bytes_to_bits};
use webproof_core::cot::{RandomCotReceiver, RandomCotSender};
use webproof_core::{memory_duplex, Block, Channel};
use webproof_mpc::exec::{ProverCircuit, VerifierCircuit};
use webproof_mpc::field::Gf128;
use webproof_mpc::ole::{OleReceiver, OleSender};
use webproof_mpc::record::{self, gf_from_bytes};
use webproof_mpc::{convert, Error, Plan};
use webproof_ot::{SoftSpokenReceiver, SoftSpokenSender};

fn cots(seed: u64, n: usize) -> (Block, Vec<Block>, Vec<Block>) {
    let (a, b) = memory_duplex();
    let (mut ca, mut cb) = (Channel::new(a), Channel::new(b));
    let mut r1 = ChaCha20Rng::seed_from_u64(seed);
    let mut r2 = ChaCha20Rng::seed_from_u64(seed + 1);
    block_on(async {
        let (s, r) = futures::join!(
            SoftSpokenSender::setup(&mut ca, &mut r1),
            SoftSpokenReceiver::setup(&mut cb, &mut r2)
        );
        let (mut s, mut r) = (s.unwrap(), r.unwrap());
        let (mut keys, mut macs) = (Vec::new(), Vec::new());
        let (x, y) = futures::join!(
            s.extend(&mut ca, n, &mut keys),
            r.extend(&mut cb, n, &mut macs)
        );
        x.unwrap();
        y.unwrap();
        (s.delta(), keys, macs)
    })
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
    let plan = Arc::new(Plan::new(&record::gcm_circuit(key_len, pt.len()))?);
    let k = record::powers_needed(pt.len());
    let n_in = 8 * (key_len + 4);
    let (delta, keys, macs) = cots(seq + 7, n_in + 128 + 128 * k);
    let mut rng = ChaCha20Rng::seed_from_u64(seq);
    let mut masks = [0u8; 32];
    rng.fill(&mut masks[..]);
    let explicit = seq.to_be_bytes();

    // Preprocessing.
    let mut v = VerifierCircuit::new(Arc::clone(&plan), delta, 1, 0, &mut rng)?;
    let mut chunks = v.garble_all();
    if tamper_table {
        for b in &mut chunks[0][8..] {
            *b ^= 1;
        }
    }
    let decoding = v.decoding()?;
    // Inputs; the prover decodes.
    let mut p = ProverCircuit::new(plan, 1, 0)?;
    let flips = p.flips(&macs[..n_in], &bytes_to_bits(pshare))?;
    let msg = v.inputs(
        &keys[..n_in],
        &flips,
        &[
            bytes_to_bits(vshare),
            bytes_to_bits(&explicit),
            bytes_to_bits(&masks),
        ],
    )?;
    p.receive_inputs(&msg)?;
    for ch in &chunks {
        p.feed(ch)?;
    }
    p.finish()?;
    let out = p.decode(&decoding)?;
    let ks = bits_to_bytes(&out[0]);
    let hp = gf_from_bytes(&bits_to_bytes(&out[1]).try_into().unwrap());
    let jp: [u8; 16] = bits_to_bytes(&out[2]).try_into().unwrap();
    let hv = gf_from_bytes(&masks[..16].try_into().unwrap());
    let jv: [u8; 16] = masks[16..].try_into().unwrap();
    let ct: Vec<u8> = pt.iter().zip(&ks).map(|(a, b)| a ^ b).collect();

    // Powers of H: A2M, local powers, M2A.
    let mut s = OleSender::new(delta, 9);
    let mut r = OleReceiver::new(9);
    let (pending, f) = convert::a2m_choose(&mut r, &macs[n_in..n_in + 128], &[hp])?;
    let (mv, m) = convert::a2m_respond(&mut s, &keys[n_in..n_in + 128], &[hv], &f, &mut rng)?;
    let mp = pending.finish(&m)?;
    let powers = |x: Gf128| {
        let mut acc = Gf128::ONE;
        (0..k)
            .map(|_| {
                acc = acc * x;
                acc
            })
            .collect::<Vec<_>>()
    };
    let (pending, f) = convert::m2a_choose(&mut r, &macs[n_in + 128..], &powers(mp[0]))?;
    let (cv, m) = convert::m2a_respond(&mut s, &keys[n_in + 128..], &powers(mv[0]), &f)?;
    let cp = pending.finish(&m)?;

    // Tag shares over the ciphertext both now know.
    let aad = record::tls12_aad(seq, 23, pt.len());
    let x = record::ghash_blocks(&aad, &ct);
    let tv = record::tag_share(&x, &cv, &jv).unwrap();
    let tp = record::tag_share(&x, &cp, &jp).unwrap();
    let tag: Vec<u8> = tv.iter().zip(&tp).map(|(a, b)| a ^ b).collect();
    Ok([&explicit[..], &ct, &tag].concat())
}

fn reference(key: &[u8], iv: &[u8], pt: &[u8], seq: u64) -> Vec<u8> {
    let nonce = [iv, &seq.to_be_bytes()[..]].concat();
    let aad = record::tls12_aad(seq, 23, pt.len());
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

#[test]
fn corrupted_record_tables_give_an_error() {
    let kv = [1u8; 20];
    let kp = [2u8; 20];
    let e = encrypt_2pc(16, &kv, &kp, b"GET / HTTP/1.1\r\n", 1, true).unwrap_err();
    assert!(matches!(e, Error::OutputCheck { .. }), "{e:?}");
}

/// The chain: premaster shares → TLS 1.2 key derivation in 2PC → the
/// client write key and IV shares encrypt a record in 2PC, equal to
/// aes-gcm's under the keys the shares reconstruct.
#[test]
fn record_from_derived_key_shares() {
    use webproof_circuits::tls::Tls12Suite;
    use webproof_mpc::field::P256Base;
    use webproof_mpc::tls12::{
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
        .key_derivation(&a.to_le_bytes(), &randoms, &keys, &f)
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
