//! HMAC, HKDF, TLS 1.2 PRF and the TLS key schedules against RustCrypto
//! (`hmac`, `hkdf`), references written from the RFCs, and published vectors.

use hmac::{Hmac, Mac};
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use sha2::{Sha256, Sha384};
use webproof_circuits::hmac::{
    hkdf_expand, hkdf_expand_label, hkdf_extract, hkdf_label, hmac, tls12_prf, HmacKey,
};
use webproof_circuits::sha2::{digest, HashAlg};
use webproof_circuits::tls::{
    tls12_key_schedule_circuit, tls12_master_secret, tls13_key_schedule_circuit, Tls12Public,
    Tls12Suite, Tls13Suite,
};
use webproof_circuits::{cache, Builder, Circuit};

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn random_bytes(r: &mut impl RngCore, n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    r.fill_bytes(&mut v);
    v
}

fn ref_hmac(alg: HashAlg, key: &[u8], msg: &[u8]) -> Vec<u8> {
    match alg {
        HashAlg::Sha256 => {
            let mut m = <Hmac<Sha256> as Mac>::new_from_slice(key).unwrap();
            m.update(msg);
            m.finalize().into_bytes().to_vec()
        }
        HashAlg::Sha384 => {
            let mut m = <Hmac<Sha384> as Mac>::new_from_slice(key).unwrap();
            m.update(msg);
            m.finalize().into_bytes().to_vec()
        }
    }
}

/// P_hash of RFC 5246 §5, written with the `hmac` crate.
fn ref_prf(alg: HashAlg, secret: &[u8], label: &str, seed: &[u8], len: usize) -> Vec<u8> {
    let seed = [label.as_bytes(), seed].concat();
    let mut a = ref_hmac(alg, secret, &seed);
    let mut out = Vec::new();
    while out.len() < len {
        out.extend(ref_hmac(alg, secret, &[a.as_slice(), &seed].concat()));
        a = ref_hmac(alg, secret, &a);
    }
    out.truncate(len);
    out
}

fn ref_expand_label(alg: HashAlg, secret: &[u8], label: &str, ctx: &[u8], len: usize) -> Vec<u8> {
    let info = hkdf_label(label, ctx, len);
    let mut out = vec![0u8; len];
    match alg {
        HashAlg::Sha256 => hkdf::Hkdf::<Sha256>::from_prk(secret)
            .unwrap()
            .expand(&info, &mut out)
            .unwrap(),
        HashAlg::Sha384 => hkdf::Hkdf::<Sha384>::from_prk(secret)
            .unwrap()
            .expand(&info, &mut out)
            .unwrap(),
    }
    out
}

fn ref_extract(alg: HashAlg, salt: &[u8], ikm: &[u8]) -> Vec<u8> {
    match alg {
        HashAlg::Sha256 => hkdf::Hkdf::<Sha256>::extract(Some(salt), ikm).0.to_vec(),
        HashAlg::Sha384 => hkdf::Hkdf::<Sha384>::extract(Some(salt), ikm).0.to_vec(),
    }
}

fn check(c: &Circuit, instances: Vec<Vec<Vec<u8>>>, expect: impl Fn(&[Vec<u8>]) -> Vec<Vec<u8>>) {
    let got = c.eval_bytes_batch(&instances);
    for (inst, out) in instances.iter().zip(got) {
        assert_eq!(out, expect(inst), "input {inst:02x?}");
    }
}

#[test]
fn sha2_digest_of_constants() {
    use sha2::Digest;
    assert_eq!(digest(HashAlg::Sha256, b""), Sha256::digest(b"").to_vec());
    assert_eq!(
        digest(HashAlg::Sha384, b"abc"),
        Sha384::digest(b"abc").to_vec()
    );
}

#[test]
fn hmac_random_keys_and_messages() {
    let mut r = ChaCha20Rng::seed_from_u64(11);
    let cases = [
        (HashAlg::Sha256, 32, 0),
        (HashAlg::Sha256, 32, 55),
        (HashAlg::Sha256, 48, 100),
        (HashAlg::Sha256, 64, 64),
        (HashAlg::Sha256, 100, 20),
        (HashAlg::Sha384, 48, 0),
        (HashAlg::Sha384, 48, 111),
        (HashAlg::Sha384, 128, 48),
        (HashAlg::Sha384, 200, 10),
    ];
    for (alg, klen, mlen) in cases {
        let mut b = Builder::new();
        let k = b.input_bytes(klen);
        let m = b.input_bytes(mlen);
        let t = hmac(&mut b, alg, &k, &m);
        b.output(&t);
        let c = b.finish();
        let inst: Vec<Vec<Vec<u8>>> = (0..20)
            .map(|_| vec![random_bytes(&mut r, klen), random_bytes(&mut r, mlen)])
            .collect();
        check(&c, inst, |i| vec![ref_hmac(alg, &i[0], &i[1])]);
    }
}

/// Cached pads: with the inner and outer states given, a MAC of a short
/// message costs exactly two compressions (fewer ANDs than two full ones
/// because the padding and length words are public).
#[test]
fn cached_pads_cost_two_compressions_per_mac() {
    for (alg, full) in [
        (HashAlg::Sha256, cache::sha256_compress().and_count()),
        (HashAlg::Sha384, cache::sha512_compress().and_count()),
    ] {
        let mut b = Builder::new();
        let inner = b.input_bytes(alg.state_len());
        let outer = b.input_bytes(alg.state_len());
        let msg = b.input_bytes(32);
        let key = HmacKey::from_states(alg, inner, outer);
        let t = key.mac(&mut b, &msg);
        b.output(&t);
        let c = b.finish();
        assert!(c.and_count() <= 2 * full, "{alg:?}: {}", c.and_count());
        assert!(c.and_count() > full, "{alg:?}: {}", c.and_count());
    }
}

#[test]
fn hkdf_extract_and_expand_vs_hkdf_crate() {
    let mut r = ChaCha20Rng::seed_from_u64(12);
    for alg in [HashAlg::Sha256, HashAlg::Sha384] {
        let hl = alg.output_len();
        // Extract with a secret salt and a secret IKM.
        let mut b = Builder::new();
        let salt = b.input_bytes(hl);
        let ikm = b.input_bytes(hl);
        let prk = hkdf_extract(&mut b, alg, &salt, &ikm);
        b.output(&prk);
        let c = b.finish();
        let inst = (0..20)
            .map(|_| vec![random_bytes(&mut r, hl), random_bytes(&mut r, hl)])
            .collect();
        check(&c, inst, |i| vec![ref_extract(alg, &i[0], &i[1])]);

        // Expand-Label with public context, several lengths (multi-block too),
        // and plain Expand with a secret info.
        let ctx = random_bytes(&mut r, hl);
        let mut b = Builder::new();
        let secret = b.input_bytes(hl);
        let info = b.input_bytes(10);
        let key = HmacKey::new(&mut b, alg, &secret);
        for (label, len) in [
            ("key", 16),
            ("iv", 12),
            ("c hs traffic", hl),
            ("derived", 80),
        ] {
            let out = hkdf_expand_label(&mut b, &key, label, &ctx, len);
            b.output(&out);
        }
        let out = hkdf_expand(&mut b, &key, &info, 2 * hl + 5);
        b.output(&out);
        let c = b.finish();
        let inst = (0..30)
            .map(|_| vec![random_bytes(&mut r, hl), random_bytes(&mut r, 10)])
            .collect();
        check(&c, inst, |i| {
            let mut v: Vec<Vec<u8>> = [
                ("key", 16),
                ("iv", 12),
                ("c hs traffic", hl),
                ("derived", 80),
            ]
            .iter()
            .map(|&(l, n)| ref_expand_label(alg, &i[0], l, &ctx, n))
            .collect();
            let mut okm = vec![0u8; 2 * hl + 5];
            match alg {
                HashAlg::Sha256 => hkdf::Hkdf::<Sha256>::from_prk(&i[0])
                    .unwrap()
                    .expand(&i[1], &mut okm)
                    .unwrap(),
                HashAlg::Sha384 => hkdf::Hkdf::<Sha384>::from_prk(&i[0])
                    .unwrap()
                    .expand(&i[1], &mut okm)
                    .unwrap(),
            }
            v.push(okm);
            v
        });
    }
}

#[test]
fn tls12_prf_vs_reference() {
    let mut r = ChaCha20Rng::seed_from_u64(13);
    for alg in [HashAlg::Sha256, HashAlg::Sha384] {
        let seed = random_bytes(&mut r, 64);
        let mut b = Builder::new();
        let secret = b.input_bytes(48);
        let key = HmacKey::new(&mut b, alg, &secret);
        let out = tls12_prf(&mut b, &key, "key expansion", &seed, 72);
        b.output(&out);
        let out = tls12_prf(
            &mut b,
            &key,
            "client finished",
            &seed[..alg.output_len()],
            12,
        );
        b.output(&out);
        let c = b.finish();
        let inst = (0..50).map(|_| vec![random_bytes(&mut r, 48)]).collect();
        check(&c, inst, |i| {
            vec![
                ref_prf(alg, &i[0], "key expansion", &seed, 72),
                ref_prf(alg, &i[0], "client finished", &seed[..alg.output_len()], 12),
            ]
        });
    }
}

/// The TLS 1.2 PRF test vectors circulated on the IETF TLS working group list.
#[test]
fn tls12_prf_known_answers() {
    let vectors = [
        (
            HashAlg::Sha256,
            "9bbe436ba940f017b17652849a71db35",
            "a0ba9f936cda311827a6f796ffd5198c",
            "e3f229ba727be17b8d122620557cd453c2aab21d07c3d495329b52d4e61edb5a6b301791e90d35c9c9a46b4e14baf9af\
             0fa022f7077def17abfd3797c0564bab4fbc91666e9def9b97fce34f796789baa48082d122ee42c5a72e5a5110fff70187347b66",
        ),
        (
            HashAlg::Sha384,
            "b80b733d6ceefcdc71566ea48e5567df",
            "cd665cf6a8447dd6ff8b27555edb7465",
            "7b0c18e9ced410ed1804f2cfa34a336a1c14dffb4900bb5fd7942107e81c83cde9ca0faa60be9fe34f82b1233c9146a0\
             e534cb400fed2700884f9dc236f80edd8bfa961144c9e8d792eca722a7b32fc3d416d473ebc2c5fd4abfdad05d918425\
             9b5bf8cd4d90fa0d31e2dec479e4f1a26066f2eea9a69236a3e52655c9e9aee691c8f3a26854308d5eaa3be85e099070\
             3d73e56f",
        ),
    ];
    for (alg, secret, seed, want) in vectors {
        let want = hex(&want.replace(char::is_whitespace, ""));
        assert_eq!(
            ref_prf(alg, &hex(secret), "test label", &hex(seed), want.len()),
            want
        );
        let mut b = Builder::new();
        let s = b.input_bytes(16);
        let key = HmacKey::new(&mut b, alg, &s);
        let out = tls12_prf(&mut b, &key, "test label", &hex(seed), want.len());
        b.output(&out);
        assert_eq!(b.finish().eval_bytes(&[&hex(secret)])[0], want);
    }
}

/// The TLS 1.3 reference key schedule, written with the `hkdf` crate.
fn ref_tls13(suite: Tls13Suite, hs: &[u8], th1: &[u8], th2: &[u8]) -> Vec<Vec<u8>> {
    let h = suite.hash;
    let hl = h.output_len();
    let el = |s: &[u8], l: &str, c: &[u8], n: usize| ref_expand_label(h, s, l, c, n);
    let chts = el(hs, "c hs traffic", th1, hl);
    let shts = el(hs, "s hs traffic", th1, hl);
    let derived = el(hs, "derived", &digest(h, b""), hl);
    let ms = ref_extract(h, &derived, &vec![0u8; hl]);
    let cats = el(&ms, "c ap traffic", th2, hl);
    let sats = el(&ms, "s ap traffic", th2, hl);
    vec![
        chts,
        shts,
        cats.clone(),
        sats.clone(),
        el(&cats, "key", &[], suite.key_len),
        el(&cats, "iv", &[], 12),
        el(&sats, "key", &[], suite.key_len),
        el(&sats, "iv", &[], 12),
    ]
}

#[test]
fn tls13_key_schedule_rfc8448() {
    // RFC 8448 §3, simple 1-RTT handshake (TLS_AES_128_GCM_SHA256).
    let hs = hex("1dc826e93606aa6fdc0aadc12f741b01046aa6b99f691ed221a9f0ca043fbeac");
    let th1 = hex("860c06edc07858ee8e78f0e7428c58edd6b43f2ca3e6e95f02ed063cf0e1cad8");
    let th2 = hex("9608102a0f1ccc6db6250b7b7e417b1a000eaada3daae4777a7686c9ff83df13");
    let c = tls13_key_schedule_circuit(Tls13Suite::AES_128_GCM_SHA256, &th1, &th2);
    let out = c.eval_bytes(&[&hs]);
    let want = [
        "b3eddb126e067f35a780b3abf45e2d8f3b1a950738f52e9600746a0e27a55a21",
        "b67b7d690cc16c4e75e54213cb2d37b4e9c912bcded9105d42befd59d391ad38",
        "9e40646ce79a7f9dc05af8889bce6552875afa0b06df0087f792ebb7c17504a5",
        "a11af9f05531f856ad47116b45a950328204b4f44bfb6b3a4b4f1f3fcb631643",
        "17422dda596ed5d9acd890e3c63f5051",
        "5b78923dee08579033e523d9",
        "9f02283b6c9c07efc26bb9f2ac92e356",
        "cf782b88dd83549aadf1e984",
    ];
    for (got, want) in out.iter().zip(want) {
        assert_eq!(got, &hex(want));
    }
}

#[test]
fn tls13_key_schedule_random_vs_hkdf() {
    let mut r = ChaCha20Rng::seed_from_u64(14);
    for suite in [
        Tls13Suite::AES_128_GCM_SHA256,
        Tls13Suite::CHACHA20_POLY1305_SHA256,
        Tls13Suite::AES_256_GCM_SHA384,
    ] {
        let hl = suite.hash.output_len();
        let th1 = random_bytes(&mut r, hl);
        let th2 = random_bytes(&mut r, hl);
        let c = tls13_key_schedule_circuit(suite, &th1, &th2);
        let inst = (0..40).map(|_| vec![random_bytes(&mut r, hl)]).collect();
        check(&c, inst, |i| ref_tls13(suite, &i[0], &th1, &th2));
    }
}

#[test]
fn tls12_key_schedule_random_vs_reference() {
    let mut r = ChaCha20Rng::seed_from_u64(15);
    for suite in [
        Tls12Suite::AES_128_GCM_SHA256,
        Tls12Suite::AES_256_GCM_SHA384,
        Tls12Suite::CHACHA20_POLY1305_SHA256,
    ] {
        let hl = suite.hash.output_len();
        let cr: [u8; 32] = random_bytes(&mut r, 32).try_into().unwrap();
        let sr: [u8; 32] = random_bytes(&mut r, 32).try_into().unwrap();
        let (h1, h2) = (random_bytes(&mut r, hl), random_bytes(&mut r, hl));
        let public = Tls12Public {
            client_random: &cr,
            server_random: &sr,
            client_finished_hash: &h1,
            server_finished_hash: &h2,
        };
        let c = tls12_key_schedule_circuit(suite, &public);
        let inst = (0..40).map(|_| vec![random_bytes(&mut r, 48)]).collect();
        check(&c, inst, |i| {
            let (kl, il) = (suite.key_len, suite.iv_len);
            let kb = ref_prf(
                suite.hash,
                &i[0],
                "key expansion",
                &[sr, cr].concat(),
                2 * kl + 2 * il,
            );
            vec![
                kb[..kl].to_vec(),
                kb[kl..2 * kl].to_vec(),
                kb[2 * kl..2 * kl + il].to_vec(),
                kb[2 * kl + il..].to_vec(),
                ref_prf(suite.hash, &i[0], "client finished", &h1, 12),
                ref_prf(suite.hash, &i[0], "server finished", &h2, 12),
            ]
        });
    }
}

#[test]
fn tls12_master_secret_vs_reference() {
    let mut r = ChaCha20Rng::seed_from_u64(16);
    let cr: [u8; 32] = random_bytes(&mut r, 32).try_into().unwrap();
    let sr: [u8; 32] = random_bytes(&mut r, 32).try_into().unwrap();
    let sh = random_bytes(&mut r, 32);
    let mut b = Builder::new();
    let pms = b.input_bytes(32);
    let ms = tls12_master_secret(&mut b, HashAlg::Sha256, &pms, &cr, &sr, None);
    b.output(&ms);
    let ems = tls12_master_secret(&mut b, HashAlg::Sha256, &pms, &cr, &sr, Some(&sh));
    b.output(&ems);
    let c = b.finish();
    let inst = (0..20).map(|_| vec![random_bytes(&mut r, 32)]).collect();
    check(&c, inst, |i| {
        vec![
            ref_prf(
                HashAlg::Sha256,
                &i[0],
                "master secret",
                &[cr, sr].concat(),
                48,
            ),
            ref_prf(HashAlg::Sha256, &i[0], "extended master secret", &sh, 48),
        ]
    });
}

/// The cached, session-independent circuits (transcript hashes and randoms
/// as input groups) agree with the per-session folded ones.
#[test]
fn public_input_circuits_match_folded_ones() {
    let mut r = ChaCha20Rng::seed_from_u64(17);
    for suite in [
        Tls13Suite::AES_128_GCM_SHA256,
        Tls13Suite::AES_256_GCM_SHA384,
    ] {
        let hl = suite.hash.output_len();
        let c = cache::tls13_key_schedule(suite);
        assert!(std::ptr::eq(c, cache::tls13_key_schedule(suite)));
        let inst: Vec<Vec<Vec<u8>>> = (0..64)
            .map(|_| {
                vec![
                    random_bytes(&mut r, hl),
                    random_bytes(&mut r, hl),
                    random_bytes(&mut r, hl),
                ]
            })
            .collect();
        let got = c.eval_bytes_batch(&inst);
        for (i, out) in inst.iter().zip(got).take(64) {
            assert_eq!(out, ref_tls13(suite, &i[0], &i[1], &i[2]));
        }
        let folded = tls13_key_schedule_circuit(suite, &inst[0][1], &inst[0][2]);
        assert!(folded.and_count() < c.and_count());
    }
    for suite in [
        Tls12Suite::AES_128_GCM_SHA256,
        Tls12Suite::AES_256_GCM_SHA384,
    ] {
        let hl = suite.hash.output_len();
        let c = cache::tls12_key_schedule(suite);
        let inst: Vec<Vec<Vec<u8>>> = (0..64)
            .map(|_| {
                [48, 32, 32, hl, hl]
                    .iter()
                    .map(|&n| random_bytes(&mut r, n))
                    .collect()
            })
            .collect();
        let got = c.eval_bytes_batch(&inst);
        for (i, out) in inst.iter().zip(got) {
            let (cr, sr): ([u8; 32], [u8; 32]) = (
                i[1].clone().try_into().unwrap(),
                i[2].clone().try_into().unwrap(),
            );
            let (kl, il) = (suite.key_len, suite.iv_len);
            let kb = ref_prf(
                suite.hash,
                &i[0],
                "key expansion",
                &[sr, cr].concat(),
                2 * kl + 2 * il,
            );
            let want = vec![
                kb[..kl].to_vec(),
                kb[kl..2 * kl].to_vec(),
                kb[2 * kl..2 * kl + il].to_vec(),
                kb[2 * kl + il..].to_vec(),
                ref_prf(suite.hash, &i[0], "client finished", &i[3], 12),
                ref_prf(suite.hash, &i[0], "server finished", &i[4], 12),
            ];
            assert_eq!(out, want);
        }
    }
}

/// AND counts of the key schedules. The session-independent circuits are
/// fully deterministic; the folded ones depend slightly on the constant
/// values, so they are bounded by their number of compressions.
#[test]
fn key_schedule_and_counts() {
    let sha256 = cache::sha256_compress().and_count();
    cache::tls13_key_schedule(Tls13Suite::AES_128_GCM_SHA256)
        .validate()
        .unwrap();
    cache::tls12_key_schedule(Tls12Suite::AES_128_GCM_SHA256)
        .validate()
        .unwrap();
    assert_eq!(
        cache::tls13_key_schedule(Tls13Suite::AES_128_GCM_SHA256).and_count(),
        608_320
    );
    assert_eq!(
        cache::tls12_key_schedule(Tls12Suite::AES_128_GCM_SHA256).and_count(),
        494_903
    );
    // TLS 1.3: 30 compressions (26 without the handshake traffic secrets).
    let folded =
        tls13_key_schedule_circuit(Tls13Suite::AES_128_GCM_SHA256, &[0x5a; 32], &[0xa5; 32]);
    assert!(folded.and_count() <= 30 * sha256, "{}", folded.and_count());
    assert!(folded.and_count() > 25 * sha256, "{}", folded.and_count());
    // TLS 1.2: 23 compressions.
    let r = [3u8; 32];
    let public = Tls12Public {
        client_random: &r,
        server_random: &r,
        client_finished_hash: &[1; 32],
        server_finished_hash: &[2; 32],
    };
    let folded = tls12_key_schedule_circuit(Tls12Suite::AES_128_GCM_SHA256, &public);
    assert!(folded.and_count() <= 23 * sha256, "{}", folded.and_count());
    assert!(folded.and_count() > 19 * sha256, "{}", folded.and_count());
}
