//! Every circuit against the RustCrypto implementation on random inputs.

use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use webproof_circuits::{aes, cache, sha2 as csha, Circuit};

fn rng(seed: u64) -> ChaCha20Rng {
    ChaCha20Rng::seed_from_u64(seed)
}

fn random_bytes(r: &mut impl RngCore, n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    r.fill_bytes(&mut v);
    v
}

/// Evaluate `c` on `n` random instances whose group sizes are `sizes` bytes
/// and compare output group 0 with `reference`.
fn check_random(
    c: &Circuit,
    n: usize,
    seed: u64,
    sizes: &[usize],
    reference: impl Fn(&[Vec<u8>]) -> Vec<u8>,
) {
    let mut r = rng(seed);
    let instances: Vec<Vec<Vec<u8>>> = (0..n)
        .map(|_| sizes.iter().map(|&s| random_bytes(&mut r, s)).collect())
        .collect();
    let got = c.eval_bytes_batch(&instances);
    for (inst, out) in instances.iter().zip(&got) {
        assert_eq!(out[0], reference(inst), "mismatch on input {inst:02x?}");
    }
    // The plain evaluator agrees with the bit-sliced one.
    let refs: Vec<&[u8]> = instances[0].iter().map(|v| v.as_slice()).collect();
    assert_eq!(c.eval_bytes(&refs), got[0]);
}

#[test]
fn aes128_2000_random() {
    use ::aes::cipher::{BlockEncrypt, KeyInit};
    let c = cache::aes128();
    assert_eq!(c.and_count(), 6400);
    c.validate().unwrap();
    check_random(c, 2000, 1, &[16, 16], |inp| {
        let cipher = ::aes::Aes128::new_from_slice(&inp[0]).unwrap();
        let mut block = ::aes::Block::clone_from_slice(&inp[1]);
        cipher.encrypt_block(&mut block);
        block.to_vec()
    });
}

#[test]
fn aes256_2000_random() {
    use ::aes::cipher::{BlockEncrypt, KeyInit};
    let c = cache::aes256();
    assert_eq!(c.and_count(), 8832);
    check_random(c, 2000, 2, &[32, 16], |inp| {
        let cipher = ::aes::Aes256::new_from_slice(&inp[0]).unwrap();
        let mut block = ::aes::Block::clone_from_slice(&inp[1]);
        cipher.encrypt_block(&mut block);
        block.to_vec()
    });
}

#[test]
fn aes128_schedule_reused_over_blocks() {
    use ::aes::cipher::{BlockEncrypt, KeyInit};
    let c = aes::aes128_blocks_circuit(3);
    // 1,280 for the schedule, 5,120 per block.
    assert_eq!(c.and_count(), 1280 + 3 * 5120);
    assert_eq!(aes::aes256_blocks_circuit(2).and_count(), 1664 + 2 * 7168);
    check_random(&c, 200, 3, &[16, 48], |inp| {
        let cipher = ::aes::Aes128::new_from_slice(&inp[0]).unwrap();
        inp[1]
            .chunks(16)
            .flat_map(|b| {
                let mut block = ::aes::Block::clone_from_slice(b);
                cipher.encrypt_block(&mut block);
                block.to_vec()
            })
            .collect()
    });
}

#[test]
fn sha256_compress_500_random() {
    let c = cache::sha256_compress();
    assert!(c.and_count() <= 22_600, "{}", c.and_count());
    assert_eq!(c.and_count(), 22_271);
    c.validate().unwrap();
    check_random(c, 500, 4, &[32, 64], |inp| {
        let mut st = [0u32; 8];
        for (w, b) in st.iter_mut().zip(inp[0].chunks(4)) {
            *w = u32::from_be_bytes(b.try_into().unwrap());
        }
        let block = sha2::digest::generic_array::GenericArray::clone_from_slice(&inp[1]);
        sha2::compress256(&mut st, &[block]);
        st.iter().flat_map(|w| w.to_be_bytes()).collect()
    });
}

#[test]
fn sha512_compress_500_random() {
    let c = cache::sha512_compress();
    assert_eq!(c.and_count(), 57_572);
    check_random(c, 500, 5, &[64, 128], |inp| {
        let mut st = [0u64; 8];
        for (w, b) in st.iter_mut().zip(inp[0].chunks(8)) {
            *w = u64::from_be_bytes(b.try_into().unwrap());
        }
        let block = sha2::digest::generic_array::GenericArray::clone_from_slice(&inp[1]);
        sha2::compress512(&mut st, &[block]);
        st.iter().flat_map(|w| w.to_be_bytes()).collect()
    });
}

#[test]
fn sha256_and_sha384_hashes_with_padding() {
    use sha2::Digest;
    // Lengths around the padding boundaries of both block sizes.
    for &len in &[0usize, 1, 55, 56, 63, 64, 111, 112, 128, 200] {
        let c = csha::hash_circuit(csha::HashAlg::Sha256, len);
        check_random(&c, 64, 6 + len as u64, &[len], |inp| {
            sha2::Sha256::digest(&inp[0]).to_vec()
        });
        let c = csha::hash_circuit(csha::HashAlg::Sha384, len);
        check_random(&c, 64, 7 + len as u64, &[len], |inp| {
            sha2::Sha384::digest(&inp[0]).to_vec()
        });
    }
}

#[test]
fn sha512_iv_gives_sha512() {
    use sha2::Digest;
    let mut b = webproof_circuits::Builder::new();
    let msg = b.input_bytes(3);
    let iv = webproof_circuits::builder::const_bytes(&csha::sha512_iv());
    let mut block = msg.clone();
    block.extend(webproof_circuits::builder::const_bytes(&csha::padding(
        csha::HashAlg::Sha384,
        3,
    )));
    let out = csha::sha512_compress(&mut b, &iv, &block);
    b.output(&out);
    let c = b.finish();
    assert_eq!(
        c.eval_bytes(&[b"abc"])[0],
        sha2::Sha512::digest(b"abc").to_vec()
    );
}

#[test]
fn chacha20_2000_random() {
    use chacha20::cipher::{KeyIvInit, StreamCipher, StreamCipherSeek};
    let c = cache::chacha20_block();
    assert!(c.and_count() <= 10_500, "{}", c.and_count());
    assert_eq!(c.and_count(), 10_400);
    c.validate().unwrap();
    check_random(c, 2000, 8, &[32, 4, 12], |inp| {
        let mut cipher = chacha20::ChaCha20::new_from_slices(&inp[0], &inp[2]).unwrap();
        let ctr = u32::from_le_bytes(inp[1].clone().try_into().unwrap());
        cipher.seek(ctr as u64 * 64);
        let mut ks = [0u8; 64];
        cipher.apply_keystream(&mut ks);
        ks.to_vec()
    });
}

#[test]
fn chacha20_rfc8439_vector() {
    // RFC 8439 §2.3.2.
    let key: Vec<u8> = (0u8..32).collect();
    let nonce = [0, 0, 0, 9, 0, 0, 0, 0x4a, 0, 0, 0, 0];
    let out = cache::chacha20_block().eval_bytes(&[&key, &1u32.to_le_bytes(), &nonce]);
    assert_eq!(
        &out[0][..8],
        &[0x10, 0xf1, 0xe7, 0xe4, 0xd1, 0x3b, 0x59, 0x15]
    );
}

#[test]
fn bristol_roundtrip_of_built_circuits() {
    use webproof_circuits::bristol;
    for (name, c) in [
        ("aes128", cache::aes128()),
        ("sha256", cache::sha256_compress()),
        ("chacha20", cache::chacha20_block()),
    ] {
        let text = bristol::write(c);
        let back = bristol::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        back.validate().unwrap();
        assert_eq!(back.and_count(), c.and_count(), "{name}");
        assert_eq!(
            back.inputs.iter().map(Vec::len).collect::<Vec<_>>(),
            c.inputs.iter().map(Vec::len).collect::<Vec<_>>()
        );
        let mut r = rng(20);
        let instances: Vec<Vec<Vec<u8>>> = (0..64)
            .map(|_| {
                c.inputs
                    .iter()
                    .map(|g| random_bytes(&mut r, g.len() / 8))
                    .collect()
            })
            .collect();
        assert_eq!(
            back.eval_bytes_batch(&instances),
            c.eval_bytes_batch(&instances),
            "{name}"
        );
        // Writing the parsed circuit again gives the same text.
        assert_eq!(bristol::write(&back), text, "{name}");
    }
}

#[test]
fn public_schedule_compression_matches_compress() {
    let mut r = rng(21);
    for (alg, c, wb) in [
        (
            csha::HashAlg::Sha256,
            cache::sha256_compress_public_schedule(),
            4,
        ),
        (
            csha::HashAlg::Sha384,
            cache::sha512_compress_public_schedule(),
            8,
        ),
    ] {
        let instances: Vec<Vec<Vec<u8>>> = (0..100)
            .map(|_| {
                let state = random_bytes(&mut r, 8 * wb);
                let block = random_bytes(&mut r, 16 * wb);
                vec![state, block]
            })
            .collect();
        let with_schedule: Vec<Vec<Vec<u8>>> = instances
            .iter()
            .map(|i| vec![i[0].clone(), csha::public_schedule(alg, &i[1])])
            .collect();
        let full = if wb == 4 {
            cache::sha256_compress()
        } else {
            cache::sha512_compress()
        };
        assert_eq!(
            c.eval_bytes_batch(&with_schedule),
            full.eval_bytes_batch(&instances)
        );
        assert!(c.and_count() < full.and_count());
    }
    assert_eq!(cache::sha256_compress_public_schedule().and_count(), 16_120);
}
