//! Record keystream gadgets against the `aes-gcm` and `chacha20poly1305`
//! crates: keystream XOR plaintext must give their ciphertext, and the tag
//! recomputed from the circuit's `H`/`E_K(J0)` or Poly1305 key must match.

use aes_gcm::aead::{Aead, KeyInit, Payload};
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use webproof_circuits::aead::{
    aes_gcm_keystream, chacha20_poly1305_keystream, gcm_hash_key, tls12_gcm_nonce, tls_nonce,
};
use webproof_circuits::aes::{aes128_key_schedule, aes256_key_schedule};
use webproof_circuits::{Builder, Circuit};

fn random_bytes(r: &mut impl RngCore, n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    r.fill_bytes(&mut v);
    v
}

fn xor(a: &[u8], b: &[u8]) -> Vec<u8> {
    a.iter().zip(b).map(|(x, y)| x ^ y).collect()
}

fn ghash(h: &[u8], aad: &[u8], ct: &[u8]) -> Vec<u8> {
    use ghash::universal_hash::{KeyInit, UniversalHash};
    let mut g = ghash::GHash::new(ghash::Key::from_slice(h));
    g.update_padded(aad);
    g.update_padded(ct);
    let mut lens = [0u8; 16];
    lens[..8].copy_from_slice(&((aad.len() as u64) * 8).to_be_bytes());
    lens[8..].copy_from_slice(&((ct.len() as u64) * 8).to_be_bytes());
    g.update(&[lens.into()]);
    g.finalize().to_vec()
}

fn gcm_circuit(key_len: usize, seq: u64, len: usize) -> Circuit {
    let mut b = Builder::new();
    let key = b.input_bytes(key_len);
    let iv = b.input_bytes(12);
    let rks = if key_len == 16 {
        aes128_key_schedule(&mut b, &key)
    } else {
        aes256_key_schedule(&mut b, &key)
    };
    let nonce = tls_nonce(&mut b, &iv, seq);
    let h = gcm_hash_key(&mut b, &rks);
    let (mask, ks) = aes_gcm_keystream(&mut b, &rks, &nonce, len);
    b.output(&h);
    b.output(&mask);
    b.output(&ks);
    b.finish()
}

#[test]
fn tls13_aes_gcm_records() {
    let mut r = ChaCha20Rng::seed_from_u64(30);
    for (key_len, seq, len) in [
        (16usize, 0u64, 37usize),
        (16, 0x0102_0304_0506, 64),
        (32, 7, 5),
        // Counters past 255: the blocks' byte 14 changes too.
        (16, 3, 300 * 16 + 7),
        (32, 0x0a0b, 258 * 16),
    ] {
        let c = gcm_circuit(key_len, seq, len);
        for _ in 0..5 {
            let (key, iv) = (random_bytes(&mut r, key_len), random_bytes(&mut r, 12));
            let (pt, aad) = (random_bytes(&mut r, len), random_bytes(&mut r, 13));
            let mut nonce = iv.clone();
            for (n, s) in nonce[4..].iter_mut().zip(seq.to_be_bytes()) {
                *n ^= s;
            }
            let payload = Payload {
                msg: &pt,
                aad: &aad,
            };
            let sealed = if key_len == 16 {
                aes_gcm::Aes128Gcm::new_from_slice(&key)
                    .unwrap()
                    .encrypt(nonce.as_slice().into(), payload)
            } else {
                aes_gcm::Aes256Gcm::new_from_slice(&key)
                    .unwrap()
                    .encrypt(nonce.as_slice().into(), payload)
            }
            .unwrap();
            let (ct, tag) = sealed.split_at(len);
            let out = c.eval_bytes(&[&key, &iv]);
            assert_eq!(xor(&out[2], &pt), ct);
            assert_eq!(xor(&ghash(&out[0], &aad, ct), &out[1]), tag);
        }
    }
}

#[test]
fn partial_last_block_pays_only_for_used_bytes() {
    let full = gcm_circuit(16, 0, 32).and_count();
    let partial = gcm_circuit(16, 0, 20).and_count();
    // 12 unused bytes skip their last-round S-box.
    assert_eq!(full - partial, 12 * 32);
}

#[test]
fn counter_blocks_share_their_first_two_rounds() {
    // J0 and one block, then 64 blocks more: each pays 27 S-boxes fewer
    // than a block alone (the first round's bytes 0..15 and the second
    // round's columns 1..3 are the first block's).
    for (key_len, sboxes) in [(16usize, 160u64), (32, 224)] {
        let one = gcm_circuit(key_len, 0, 16).and_count() as u64;
        let more = gcm_circuit(key_len, 0, 65 * 16).and_count() as u64;
        assert_eq!(more - one, 64 * (sboxes - 27) * 32, "AES-{}", 8 * key_len);
    }
}

#[test]
fn tls12_gcm_nonce_layout() {
    let mut r = ChaCha20Rng::seed_from_u64(31);
    let explicit: [u8; 8] = random_bytes(&mut r, 8).try_into().unwrap();
    let mut b = Builder::new();
    let key = b.input_bytes(16);
    let salt = b.input_bytes(4);
    let rks = aes128_key_schedule(&mut b, &key);
    let nonce = tls12_gcm_nonce(&salt, &explicit);
    let (_, ks) = aes_gcm_keystream(&mut b, &rks, &nonce, 16);
    b.output(&ks);
    let c = b.finish();
    let (key, salt, pt) = (
        random_bytes(&mut r, 16),
        random_bytes(&mut r, 4),
        random_bytes(&mut r, 16),
    );
    let nonce = [salt.as_slice(), &explicit].concat();
    let sealed = aes_gcm::Aes128Gcm::new_from_slice(&key)
        .unwrap()
        .encrypt(nonce.as_slice().into(), pt.as_slice())
        .unwrap();
    assert_eq!(xor(&c.eval_bytes(&[&key, &salt])[0], &pt), &sealed[..16]);
}

#[test]
fn chacha20_poly1305_records() {
    use chacha20poly1305::ChaCha20Poly1305;
    use poly1305::universal_hash::KeyInit as _;
    let mut r = ChaCha20Rng::seed_from_u64(32);
    for (seq, len) in [(0u64, 100usize), (9, 64), (1 << 40, 3)] {
        let mut b = Builder::new();
        let key = b.input_bytes(32);
        let iv = b.input_bytes(12);
        let nonce = tls_nonce(&mut b, &iv, seq);
        let (otk, ks) = chacha20_poly1305_keystream(&mut b, &key, &nonce, len);
        b.output(&otk);
        b.output(&ks);
        let c = b.finish();
        for _ in 0..4 {
            let (key, iv) = (random_bytes(&mut r, 32), random_bytes(&mut r, 12));
            let (pt, aad) = (random_bytes(&mut r, len), random_bytes(&mut r, 5));
            let mut nonce = iv.clone();
            for (n, s) in nonce[4..].iter_mut().zip(seq.to_be_bytes()) {
                *n ^= s;
            }
            let sealed = ChaCha20Poly1305::new_from_slice(&key)
                .unwrap()
                .encrypt(
                    nonce.as_slice().into(),
                    Payload {
                        msg: &pt,
                        aad: &aad,
                    },
                )
                .unwrap();
            let (ct, tag) = sealed.split_at(len);
            let out = c.eval_bytes(&[&key, &iv]);
            assert_eq!(xor(&out[1], &pt), ct);
            let mut mac_data = aad.clone();
            mac_data.resize(aad.len().next_multiple_of(16), 0);
            mac_data.extend_from_slice(ct);
            mac_data.resize(mac_data.len().next_multiple_of(16), 0);
            mac_data.extend_from_slice(&(aad.len() as u64).to_le_bytes());
            mac_data.extend_from_slice(&(ct.len() as u64).to_le_bytes());
            let p = poly1305::Poly1305::new(poly1305::Key::from_slice(&out[0]));
            assert_eq!(p.compute_unpadded(&mac_data).as_slice(), tag);
        }
    }
}

/// `gcm_mul` against the `ghash` crate (one block: `GHASH_H(X) = X·H`),
/// on random elements and on the field's edge values, with its AND count.
#[test]
fn gcm_mul_matches_ghash() {
    use webproof_circuits::aead::gcm_mul;
    let mut b = Builder::new();
    let x = b.input_bytes(16);
    let y = b.input_bytes(16);
    let z = gcm_mul(&mut b, &x, &y);
    b.output(&z);
    let c = b.finish();
    assert_eq!(c.and_count(), 2187);
    let mut r = ChaCha20Rng::seed_from_u64(33);
    let one = {
        let mut o = [0u8; 16];
        o[0] = 0x80; // x^0
        o
    };
    let mut cases: Vec<(Vec<u8>, Vec<u8>)> = (0..20)
        .map(|_| (random_bytes(&mut r, 16), random_bytes(&mut r, 16)))
        .collect();
    cases.push((one.to_vec(), random_bytes(&mut r, 16)));
    cases.push((vec![0; 16], random_bytes(&mut r, 16)));
    cases.push((vec![0xff; 16], vec![0xff; 16]));
    for (x, y) in cases {
        use ghash::universal_hash::{KeyInit, UniversalHash};
        let mut g = ghash::GHash::new(ghash::Key::from_slice(&y));
        g.update(&[*ghash::Block::from_slice(&x)]);
        let want = g.finalize().to_vec();
        assert_eq!(c.eval_bytes(&[&x, &y])[0], want);
    }
}
