//! The TLS 1.3 key schedule in 2PC against RustCrypto's HKDF on random
//! shares and hashes (both curves, 16- and 32-byte keys) and against RFC
//! 8448 §3; the schedule in the clear against RFC 8448; the gate count;
//! the prover's check of the verifier's inputs; out-of-order calls.

mod common;
use common::cots;
use hkdf::Hkdf;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use sha2::{Digest, Sha256, Sha384};
use webproof_circuits::sha2::HashAlg;
use webproof_circuits::tls::Tls13Suite;
use webproof_mpc::field::{Curve25519Base, P256Base};
use webproof_mpc::Error;
use webproof_mpc_tls::kdf::tls12::Curve;
use webproof_mpc_tls::kdf::tls13::{
    check_verifier_inputs, finished_key, traffic_keys, verify_data, ClearSchedule, Tls13Plans,
    Tls13Prover, Tls13Verifier, STEPS,
};

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn h32(s: &str) -> [u8; 32] {
    hex(s).try_into().unwrap()
}

/// HKDF-Expand-Label (RFC 8446 §7.1) and the whole schedule with
/// RustCrypto's HKDF over `$h`, the `HkdfLabel` written out here.
macro_rules! reference_with {
    ($expand:ident, $schedule:ident, $h:ty) => {
        fn $expand(secret: &[u8], label: &str, ctx: &[u8], len: usize) -> Vec<u8> {
            let full = [b"tls13 ", label.as_bytes()].concat();
            let mut info = (len as u16).to_be_bytes().to_vec();
            info.push(full.len() as u8);
            info.extend(&full);
            info.push(ctx.len() as u8);
            info.extend(ctx);
            let mut out = vec![0; len];
            Hkdf::<$h>::from_prk(secret)
                .unwrap()
                .expand(&info, &mut out)
                .unwrap();
            out
        }

        /// (c_hs, s_hs, c_ap, s_ap).
        fn $schedule(z: &[u8], hello: &[u8], fin: &[u8]) -> [Vec<u8>; 4] {
            let hl = <$h>::output_size();
            let zeros = vec![0; hl];
            let (early, _) = Hkdf::<$h>::extract(Some(&zeros), &zeros);
            let empty = <$h>::digest([]);
            let derived = $expand(&early, "derived", &empty, hl);
            let (hs, _) = Hkdf::<$h>::extract(Some(&derived), z);
            let derived = $expand(&hs, "derived", &empty, hl);
            let (ms, _) = Hkdf::<$h>::extract(Some(&derived), &zeros);
            [
                $expand(&hs, "c hs traffic", hello, hl),
                $expand(&hs, "s hs traffic", hello, hl),
                $expand(&ms, "c ap traffic", fin, hl),
                $expand(&ms, "s ap traffic", fin, hl),
            ]
        }
    };
}
reference_with!(expand_label, reference, Sha256);
reference_with!(expand_label384, reference384, Sha384);

/// One of the two `expand_label`s.
type Expand = fn(&[u8], &str, &[u8], usize) -> Vec<u8>;

/// All four steps, both parties in this thread, in-memory messages as a
/// session would send them: (verifier, prover).
fn run(
    plans: &Tls13Plans,
    (vshare, curve): (&[u8; 32], Curve),
    pshare: &[u8; 32],
    hello: &[u8],
    fin: &[u8],
    seed: u64,
) -> Result<(Tls13Verifier, Tls13Prover), Error> {
    run_tampered(plans, (vshare, curve), pshare, hello, fin, seed, None).map(|(v, p, _)| (v, p))
}

/// [`run`] with the tables of step `tamper` altered on their way to the
/// prover; also the bytes it moved: (preprocessing verifier → prover,
/// online verifier → prover, online prover → verifier).
fn run_tampered(
    plans: &Tls13Plans,
    (vshare, curve): (&[u8; 32], Curve),
    pshare: &[u8; 32],
    hello: &[u8],
    fin: &[u8],
    seed: u64,
    tamper: Option<usize>,
) -> Result<(Tls13Verifier, Tls13Prover, [usize; 3]), Error> {
    let total: usize = (0..STEPS).map(|s| plans.cots(s)).sum();
    let (delta, keys, macs) = cots(seed, total);
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let mut v = Tls13Verifier::garble(plans, delta, 0, &mut rng)?;
    let mut tables = v.preprocess()?;
    let mut bytes = [0usize; 3];
    for (chunks, decoding, early) in &tables {
        bytes[0] +=
            chunks.chunks().iter().map(Vec::len).sum::<usize>() + decoding.len() + early.len();
    }
    if let Some(step) = tamper {
        let mut chunks = std::mem::take(&mut tables[step].0).into_chunks();
        for b in &mut chunks[0][8..] {
            *b ^= 1;
        }
        tables[step].0 = chunks.into();
    }
    let mut p = Tls13Prover::new(plans, 0, pshare, tables)?;
    v.bind(vshare, curve, hello)?;
    let mut off = 0;
    for step in 0..STEPS {
        if step == 2 {
            // The verifier has checked the server's flight by now.
            v.bind_finished_hash(fin)?;
        }
        let n = plans.cots(step);
        let f = p.flips(step, &macs[off..off + n])?;
        let msg = v.inputs(step, &keys[off..off + n], &f)?;
        off += n;
        bytes[1] += msg.len();
        bytes[2] += f.len();
        if let Some(labels) = p.evaluate(step, &msg)? {
            bytes[2] += labels.len();
            v.receive(step, &labels)?;
        }
    }
    Ok((v, p, bytes))
}

/// Random shares of a random ECDHE secret on `curve`: (prover share,
/// verifier share, the secret as TLS encodes it).
fn shares(curve: Curve, rng: &mut ChaCha20Rng) -> ([u8; 32], [u8; 32], [u8; 32]) {
    match curve {
        Curve::P256 => {
            let (a, b) = (P256Base::random(rng), P256Base::random(rng));
            (a.to_le_bytes(), b.to_le_bytes(), (a + b).to_be_bytes())
        }
        Curve::X25519 => {
            let (a, b) = (Curve25519Base::random(rng), Curve25519Base::random(rng));
            (a.to_le_bytes(), b.to_le_bytes(), (a + b).to_le_bytes())
        }
    }
}

fn check(curve: Curve, suite: Tls13Suite, seed: u64) {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let (ps, vs, z) = shares(curve, &mut rng);
    let hl = suite.hash.output_len();
    let hello: Vec<u8> = (0..hl).map(|_| rng.gen()).collect();
    let fin: Vec<u8> = (0..hl).map(|_| rng.gen()).collect();
    let plans = Tls13Plans::new(suite).unwrap();
    let (v, p) = run(&plans, (&vs, curve), &ps, &hello, &fin, seed).unwrap();
    let (expand, [c_hs, s_hs, c_ap, s_ap]): (Expand, _) = match suite.hash {
        HashAlg::Sha256 => (expand_label, reference(&z, &hello, &fin)),
        HashAlg::Sha384 => (expand_label384, reference384(&z, &hello, &fin)),
    };
    // Handshake traffic secrets: the same on both sides, the reference's.
    let hs = p.handshake_secrets().unwrap();
    assert_eq!(v.handshake_secrets().unwrap(), hs);
    assert_eq!((&hs.client, &hs.server), (&c_hs, &s_hs));
    // Application keys and IVs: shares that recombine to the reference's.
    let k = v.key_shares().combine(&p.key_shares().unwrap());
    let kl = suite.key_len;
    assert_eq!(k.client_key, expand(&c_ap, "key", &[], kl));
    assert_eq!(k.server_key, expand(&s_ap, "key", &[], kl));
    assert_eq!(k.client_iv, expand(&c_ap, "iv", &[], 12));
    assert_eq!(k.server_iv, expand(&s_ap, "iv", &[], 12));
    // Neither share alone is the key.
    assert_ne!(p.key_shares().unwrap().client_key, k.client_key);
    // The clear schedule agrees, and its keys.
    let clear = ClearSchedule::new(suite.hash, &z, &hello, &fin);
    assert_eq!(
        (&clear.client_application, &clear.server_application),
        (&c_ap, &s_ap)
    );
    assert_eq!(
        traffic_keys(suite, &clear.server_application).0,
        k.server_key
    );
    // The prover's check of the verifier's inputs passes on an honest run
    // and gives the verifier's key shares; another Finished hash fails it.
    let inputs: Vec<Vec<Vec<bool>>> = v
        .circuits()
        .iter()
        .map(|c| c.retain().unwrap().own)
        .collect();
    let got = check_verifier_inputs(suite, curve, &hello, &fin, &inputs, &p.revealed()).unwrap();
    assert_eq!(got, v.key_shares());
    // Digests of another transcript at step 1 or at step 2.
    for (h, f) in [(&fin, &fin), (&hello, &hello)] {
        assert!(matches!(
            check_verifier_inputs(suite, curve, h, f, &inputs, &p.revealed()),
            Err(Error::VerifierCheated(_))
        ));
    }
    let other = match curve {
        Curve::P256 => Curve::X25519,
        Curve::X25519 => Curve::P256,
    };
    assert!(check_verifier_inputs(suite, other, &hello, &fin, &inputs, &p.revealed()).is_err());
}

#[test]
fn tls13_p256_aes128_matches_hkdf() {
    check(Curve::P256, Tls13Suite::AES_128_GCM_SHA256, 1);
}

#[test]
fn tls13_x25519_chacha20_matches_hkdf() {
    check(Curve::X25519, Tls13Suite::CHACHA20_POLY1305_SHA256, 2);
}

#[test]
fn tls13_sha384_matches_hkdf() {
    check(Curve::P256, Tls13Suite::AES_256_GCM_SHA384, 3);
}

/// RFC 8448 §3 (Simple 1-RTT Handshake, X25519, AES-128-GCM-SHA256).
mod rfc8448 {
    pub const Z: &str = "8bd4054fb55b9d63fdfbacf9f04b9f0d35e6d63f537563efd46272900f89492d";
    pub const HELLO: &str = "860c06edc07858ee8e78f0e7428c58edd6b43f2ca3e6e95f02ed063cf0e1cad8";
    pub const FIN: &str = "9608102a0f1ccc6db6250b7b7e417b1a000eaada3daae4777a7686c9ff83df13";
    pub const HS: &str = "1dc826e93606aa6fdc0aadc12f741b01046aa6b99f691ed221a9f0ca043fbeac";
    pub const C_HS: &str = "b3eddb126e067f35a780b3abf45e2d8f3b1a950738f52e9600746a0e27a55a21";
    pub const S_HS: &str = "b67b7d690cc16c4e75e54213cb2d37b4e9c912bcded9105d42befd59d391ad38";
    pub const MS: &str = "18df06843d13a08bf2a449844c5f8a478001bc4d4c627984d5a41da8d0402919";
    pub const C_AP: &str = "9e40646ce79a7f9dc05af8889bce6552875afa0b06df0087f792ebb7c17504a5";
    pub const S_AP: &str = "a11af9f05531f856ad47116b45a950328204b4f44bfb6b3a4b4f1f3fcb631643";
    /// (key, IV) of: server handshake, client handshake, server
    /// application, client application.
    pub const KEYS: [(&str, &str); 4] = [
        (
            "3fce516009c21727d0f2e4e86ee403bc",
            "5d313eb2671276ee13000b30",
        ),
        (
            "dbfaa693d1762c5b666af5d950258d01",
            "5bd3c71b836e0b76bb73265f",
        ),
        (
            "9f02283b6c9c07efc26bb9f2ac92e356",
            "cf782b88dd83549aadf1e984",
        ),
        (
            "17422dda596ed5d9acd890e3c63f5051",
            "5b78923dee08579033e523d9",
        ),
    ];
    pub const S_FINISHED_KEY: &str =
        "008d3b66f816ea559f96b537e885c31fc068bf492c652f01f288a1d8cdc19fc8";
    pub const C_FINISHED_KEY: &str =
        "b80ad01015fb2f0bd65ff7d4da5d6bf83f84821d1f87fdc7d3c75b5a7b42d9c4";
}

#[test]
fn tls13_clear_schedule_matches_rfc8448() {
    use rfc8448::*;
    let s = ClearSchedule::new(HashAlg::Sha256, &h32(Z), &h32(HELLO), &h32(FIN));
    assert_eq!(s.handshake, hex(HS));
    assert_eq!(s.client_handshake, hex(C_HS));
    assert_eq!(s.server_handshake, hex(S_HS));
    assert_eq!(s.master, hex(MS));
    assert_eq!(s.client_application, hex(C_AP));
    assert_eq!(s.server_application, hex(S_AP));
    let secrets = [
        &s.server_handshake,
        &s.client_handshake,
        &s.server_application,
        &s.client_application,
    ];
    for (secret, (key, iv)) in secrets.iter().zip(KEYS) {
        let (k, i) = traffic_keys(Tls13Suite::AES_128_GCM_SHA256, secret);
        assert_eq!((k, i.to_vec()), (hex(key), hex(iv)));
    }
    let h = HashAlg::Sha256;
    assert_eq!(finished_key(h, &s.server_handshake), hex(S_FINISHED_KEY));
    assert_eq!(finished_key(h, &s.client_handshake), hex(C_FINISHED_KEY));
    // verify_data is HMAC under the finished key (RustCrypto's HMAC).
    use hmac::{Hmac, Mac};
    let mut m = Hmac::<Sha256>::new_from_slice(&h32(S_FINISHED_KEY)).unwrap();
    m.update(&h32(HELLO));
    assert_eq!(
        verify_data(h, &s.server_handshake, &h32(HELLO))[..],
        m.finalize().into_bytes()[..]
    );
}

/// The 2PC on shares of RFC 8448's X25519 secret gives its handshake
/// traffic secrets and application keys.
#[test]
fn tls13_2pc_matches_rfc8448() {
    use rfc8448::*;
    let mut rng = ChaCha20Rng::seed_from_u64(8448);
    let z = Curve25519Base::from_le_bytes(&h32(Z)).unwrap();
    let a = Curve25519Base::random(&mut rng);
    let b = z - a;
    let plans = Tls13Plans::new(Tls13Suite::AES_128_GCM_SHA256).unwrap();
    let (v, p) = run(
        &plans,
        (&a.to_le_bytes(), Curve::X25519),
        &b.to_le_bytes(),
        &hex(HELLO),
        &hex(FIN),
        5,
    )
    .unwrap();
    let hs = p.handshake_secrets().unwrap();
    assert_eq!((hs.client, hs.server), (hex(C_HS), hex(S_HS)));
    let k = v.key_shares().combine(&p.key_shares().unwrap());
    assert_eq!(
        [k.server_key, k.server_iv, k.client_key, k.client_iv],
        [KEYS[2].0, KEYS[2].1, KEYS[3].0, KEYS[3].1].map(hex)
    );
}

#[test]
fn tls13_gate_counts() {
    let plans = Tls13Plans::new(Tls13Suite::AES_128_GCM_SHA256).unwrap();
    let ands = plans.and_counts();
    let total: u64 = ands.iter().sum();
    let chacha = Tls13Plans::new(Tls13Suite::CHACHA20_POLY1305_SHA256).unwrap();
    eprintln!(
        "TLS 1.3 key schedule: {ands:?} = {total} AND; ChaCha20 {:?}",
        chacha.and_counts()
    );
    // 23 compressions, 9 of them outer ones on a public schedule.
    assert!(total < 440_000, "{total}");
    // The bytes of one session, as sent.
    for plans in [
        &plans,
        &Tls13Plans::shared(Tls13Suite::AES_256_GCM_SHA384).unwrap(),
    ] {
        let hl = plans.suite().hash.output_len();
        let go = (&[3; 32], Curve::P256);
        let (_, _, bytes) =
            run_tampered(plans, go, &[4; 32], &vec![1; hl], &vec![2; hl], 7, None).unwrap();
        eprintln!(
            "{:?}: bytes (preprocessing, online v->p, online p->v) = {bytes:?}",
            plans.suite()
        );
    }
    let sha384 = Tls13Plans::shared(Tls13Suite::AES_256_GCM_SHA384).unwrap();
    // Shared plans: built once per suite and process.
    let again = Tls13Plans::shared(Tls13Suite::AES_256_GCM_SHA384).unwrap();
    assert!(std::sync::Arc::ptr_eq(
        sha384.plan(0).unwrap(),
        again.plan(0).unwrap()
    ));
    assert!(!std::sync::Arc::ptr_eq(
        plans.plan(0).unwrap(),
        Tls13Plans::shared(Tls13Suite::AES_128_GCM_SHA256)
            .unwrap()
            .plan(0)
            .unwrap()
    ));
    let ands = sha384.and_counts();
    eprintln!("SHA-384: {ands:?} = {} AND", ands.iter().sum::<u64>());
}

/// Decoding has no digests: a corrupted step gives wrong values, which the
/// verifier's check of the revealed labels refuses, or secrets other than
/// the session's (the server's flight would fail its tags, or the server
/// the client's records).
#[test]
fn tls13_corrupted_tables() {
    let plans = Tls13Plans::new(Tls13Suite::AES_128_GCM_SHA256).unwrap();
    let go = |tamper| {
        run_tampered(
            &plans,
            (&[3; 32], Curve::P256),
            &[4; 32],
            &[1; 32],
            &[2; 32],
            9,
            tamper,
        )
    };
    let (v, p, _) = go(None).unwrap();
    let honest = (
        p.handshake_secrets().unwrap(),
        v.key_shares().combine(&p.key_shares().unwrap()),
    );
    for step in 0..STEPS {
        match go(Some(step)) {
            Err(e) => assert!(matches!(e, Error::OutputCheck { .. }), "{step}: {e:?}"),
            Ok((v, p, _)) => {
                let k = v.key_shares().combine(&p.key_shares().unwrap());
                assert!(
                    p.handshake_secrets().unwrap() != honest.0 || k != honest.1,
                    "{step}"
                );
            }
        }
    }
}

/// Out-of-order steps and malformed messages give errors, never panics.
#[test]
fn tls13_out_of_order_and_malformed() {
    let plans = Tls13Plans::new(Tls13Suite::AES_128_GCM_SHA256).unwrap();
    let (delta, keys, macs) = cots(90, 256);
    let mut rng = ChaCha20Rng::seed_from_u64(91);
    let mut v = Tls13Verifier::garble(&plans, delta, 0, &mut rng).unwrap();
    let tables = v.preprocess().unwrap();
    assert!(Tls13Prover::new(&plans, 0, &[8; 32], tables[1..].to_vec()).is_err());
    let mut p = Tls13Prover::new(&plans, 0, &[8; 32], tables).unwrap();
    // No inputs before the share is bound; hashes of the wrong length.
    assert!(v.inputs(0, &keys, &[0; 32]).is_err());
    assert!(v.bind(&[7; 32], Curve::P256, &[1; 31]).is_err());
    v.bind(&[7; 32], Curve::P256, &[1; 32]).unwrap();
    assert!(v.bind(&[7; 32], Curve::P256, &[1; 32]).is_err());
    assert!(p.flips(1, &[]).is_err());
    assert!(v.inputs(1, &[], &[]).is_err());
    let f = p.flips(0, &macs).unwrap();
    assert!(v.inputs(0, &keys, &f[1..]).is_err());
    let msg = v.inputs(0, &keys, &f).unwrap();
    assert!(p.evaluate(1, &msg).is_err());
    assert!(p.evaluate(0, &msg[1..]).is_err());
    let labels = p.evaluate(0, &msg).unwrap().unwrap();
    let mut bad = labels.clone();
    bad[0] ^= 1;
    assert!(v.receive(0, &bad).is_err());
    v.receive(0, &labels).unwrap();
    assert!(v.receive(0, &labels).is_err());
    assert!(p.flips(1, &macs[..1]).is_err());
    p.flips(1, &[]).unwrap();
    let msg = v.inputs(1, &[], &[]).unwrap();
    let labels = p.evaluate(1, &msg).unwrap().unwrap();
    v.receive(1, &labels).unwrap();
    assert!(v.handshake_secrets().is_some());
    // Step 2 needs the server Finished hash.
    p.flips(2, &[]).unwrap();
    assert!(v.inputs(2, &[], &[]).is_err());
    v.bind_finished_hash(&[2; 32]).unwrap();
    assert!(v.bind_finished_hash(&[2; 32]).is_err());
    assert!(p.key_shares().is_err());
}
