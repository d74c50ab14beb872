//! TLS 1.2 key derivation and Finished in 2PC against a TLS 1.2 PRF in the
//! clear (`hmac` + `sha2`), over SoftSpokenOT COTs: random premasters split
//! into shares, the chain key share → ECtF → keys → Finished on P-256 and
//! X25519, corrupted tables and labels, malformed messages.

mod common;
use common::cots;
use curve25519_dalek::montgomery::MontgomeryPoint;
use hmac::{Hmac, Mac};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use std::sync::Mutex;
use webproof_circuits::tls::Tls12Suite;
use webproof_mpc::field::{Curve25519Base, P256Base};
use webproof_mpc::ole::{OleField, OleReceiver, OleSender};
use webproof_mpc::Error;
use webproof_mpc_tls::kdf::tls12::{
    Curve, KeyShares, Randoms, Tables, Tls12Config, Tls12Plans, Tls12Prover, Tls12Verifier,
};
use webproof_mpc_tls::keyx::ectf::{self, ProverEctf, VerifierEctf};
use webproof_mpc_tls::keyx::keyshare::{self, P256Share, X25519Share};

fn hmac_ref(sha384: bool, key: &[u8], msg: &[u8]) -> Vec<u8> {
    if sha384 {
        let mut m = Hmac::<sha2::Sha384>::new_from_slice(key).unwrap();
        m.update(msg);
        m.finalize().into_bytes().to_vec()
    } else {
        let mut m = Hmac::<sha2::Sha256>::new_from_slice(key).unwrap();
        m.update(msg);
        m.finalize().into_bytes().to_vec()
    }
}

/// TLS 1.2 PRF (RFC 5246 §5), `n` bytes.
fn prf(sha384: bool, secret: &[u8], label: &str, seed: &[u8], n: usize) -> Vec<u8> {
    let ls = [label.as_bytes(), seed].concat();
    let mut a = hmac_ref(sha384, secret, &ls);
    let mut out = Vec::new();
    while out.len() < n {
        out.extend(hmac_ref(sha384, secret, &[&a[..], &ls].concat()));
        a = hmac_ref(sha384, secret, &a);
    }
    out.truncate(n);
    out
}

/// What one TLS 1.2 client derives from `pms` in the clear.
struct Reference {
    keys: KeyShares,
    client_vd: Vec<u8>,
    server_vd: Vec<u8>,
}

fn reference(cfg: Tls12Config, pms: &[u8], pubs: &Publics) -> Reference {
    let h = cfg.suite.hash == webproof_circuits::sha2::HashAlg::Sha384;
    let ms = match &pubs.session_hash {
        Some(sh) => prf(h, pms, "extended master secret", sh, 48),
        None => prf(h, pms, "master secret", &[pubs.cr, pubs.sr].concat(), 48),
    };
    let (kl, il) = (cfg.suite.key_len, cfg.suite.iv_len);
    let kb = prf(
        h,
        &ms,
        "key expansion",
        &[pubs.sr, pubs.cr].concat(),
        2 * kl + 2 * il,
    );
    Reference {
        keys: KeyShares {
            client_key: kb[..kl].to_vec(),
            server_key: kb[kl..2 * kl].to_vec(),
            client_iv: kb[2 * kl..2 * kl + il].to_vec(),
            server_iv: kb[2 * kl + il..].to_vec(),
        },
        client_vd: prf(h, &ms, "client finished", &pubs.cf_hash, 12),
        server_vd: prf(h, &ms, "server finished", &pubs.sf_hash, 12),
    }
}

struct Publics {
    cr: [u8; 32],
    sr: [u8; 32],
    session_hash: Option<Vec<u8>>,
    cf_hash: Vec<u8>,
    sf_hash: Vec<u8>,
}

fn publics(cfg: Tls12Config, rng: &mut ChaCha20Rng) -> Publics {
    let hl = cfg.suite.hash.output_len();
    let mut h = || (0..hl).map(|_| rng.gen()).collect::<Vec<u8>>();
    let (sh, cf, sf) = (h(), h(), h());
    Publics {
        cr: rng.gen(),
        sr: rng.gen(),
        session_hash: cfg.ems.then_some(sh),
        cf_hash: cf,
        sf_hash: sf,
    }
}

/// Where to spoil the run: (step, byte, xor), steps numbered in message
/// order: 0 tables, 1 KD flips, 2 KD inputs, 3 CF inputs, 4 CF labels,
/// 5 SF inputs, 6 SF labels.
type Tamper = Option<(usize, usize, u8)>;

/// The outcome of one session on both sides.
#[derive(Debug)]
struct Outcome {
    verifier: KeyShares,
    prover: KeyShares,
    client_vd_prover: [u8; 12],
    client_vd_verifier: [u8; 12],
}

fn plans(cfg: Tls12Config) -> &'static Tls12Plans {
    // One plan per whole configuration (curve, suite, EMS), built once
    // and shared by every test of the process: keyed by less (the hash
    // alone) a ChaCha20 test could get AES-128-GCM's plan, or the reverse,
    // depending on which test ran first. Built outside the lock, so tests
    // of other configurations do not wait; a rare second build is dropped.
    static PLANS: Mutex<Vec<&'static Tls12Plans>> = Mutex::new(Vec::new());
    let found = PLANS
        .lock()
        .unwrap()
        .iter()
        .copied()
        .find(|p| p.config() == cfg);
    if let Some(p) = found {
        return p;
    }
    let built = Tls12Plans::new(cfg).unwrap();
    let mut plans = PLANS.lock().unwrap();
    if let Some(p) = plans.iter().copied().find(|p| p.config() == cfg) {
        return p;
    }
    let p: &'static Tls12Plans = Box::leak(Box::new(built));
    plans.push(p);
    p
}

/// One session: shares of the premaster (little-endian) in, outcome out.
fn session(
    cfg: Tls12Config,
    vshare: &[u8; 32],
    pshare: &[u8; 32],
    pubs: &Publics,
    server_vd: &[u8],
    seed: u64,
    tamper: Tamper,
) -> Result<Outcome, Error> {
    let plans = plans(cfg);
    let (n_kd, n_fin) = plans.cots();
    let (delta, keys, macs) = cots(seed, n_kd + 2 * n_fin);
    let mut rng = ChaCha20Rng::seed_from_u64(seed ^ 0x55);
    let t = |i: usize, mut m: Vec<u8>| {
        if let Some((j, byte, x)) = tamper {
            if i == j && !m.is_empty() {
                let k = byte % m.len();
                m[k] ^= x;
            }
        }
        m
    };
    let mut v = Tls12Verifier::new(plans, delta, 10, &mut rng)?;
    let mut tables: Tables = v.preprocess()?;
    if let Some((0, byte, x)) = tamper {
        // Every table of one chunk of the key derivation (a single table
        // is used only if the permute bit of its input says so).
        let n = tables.chunks[0].len();
        for v in &mut tables.chunks[0][byte % n][8..] {
            *v ^= x;
        }
    }
    let mut p = Tls12Prover::new(plans, 10, tables)?;
    let (k0, k1, k2) = (
        &keys[..n_kd],
        &keys[n_kd..n_kd + n_fin],
        &keys[n_kd + n_fin..],
    );
    let (m0, m1, m2) = (
        &macs[..n_kd],
        &macs[n_kd..n_kd + n_fin],
        &macs[n_kd + n_fin..],
    );
    let randoms = Randoms {
        client: &pubs.cr,
        server: &pubs.sr,
        session_hash: pubs.session_hash.as_deref(),
    };
    let f = t(1, p.key_derivation_flips(pshare, m0)?);
    let (msg, vkeys) = v.key_derivation(vshare, plans.config().curve, &randoms, k0, &f)?;
    let pkeys = p.key_derivation_finish(&t(2, msg))?;

    let f = p.client_finished_flips(m1)?;
    let msg = t(3, v.client_finished(&pubs.cf_hash, k1, &f)?);
    let (vd_p, labels) = p.client_finished_finish(&msg)?;
    let vd_v = v.client_verify_data(&t(4, labels))?;

    let f = p.server_finished_flips(m2)?;
    let msg = t(5, v.server_finished(&pubs.sf_hash, k2, &f)?);
    let labels = p.server_finished_finish(&msg, server_vd)?;
    v.check_server_verify_data(&t(6, labels), server_vd)?;
    Ok(Outcome {
        verifier: vkeys,
        prover: pkeys,
        client_vd_prover: vd_p,
        client_vd_verifier: vd_v,
    })
}

/// Split `pms` (a field element) into random additive shares, run, and
/// compare with the reference.
fn check_against_reference(cfg: Tls12Config, pms_elem: [u8; 32], pms_bytes: &[u8], seed: u64) {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let (a, b) = match cfg.curve {
        Curve::P256 => {
            let x = P256Base::from_le_bytes(&pms_elem).unwrap();
            let a = P256Base::random(&mut rng);
            (a.to_le_bytes(), (x - a).to_le_bytes())
        }
        Curve::X25519 => {
            let x = Curve25519Base::from_le_bytes(&pms_elem).unwrap();
            let a = Curve25519Base::random(&mut rng);
            (a.to_le_bytes(), (x - a).to_le_bytes())
        }
    };
    let pubs = publics(cfg, &mut rng);
    let want = reference(cfg, pms_bytes, &pubs);
    let out = session(cfg, &a, &b, &pubs, &want.server_vd, seed, None).unwrap();
    assert_eq!(out.verifier.combine(&out.prover), want.keys);
    assert_ne!(out.verifier.client_key, want.keys.client_key);
    assert_ne!(out.prover.client_key, want.keys.client_key);
    assert_eq!(&out.client_vd_prover[..], &want.client_vd[..]);
    assert_eq!(out.client_vd_verifier, out.client_vd_prover);
}

const P256_AES128: Tls12Config = Tls12Config {
    curve: Curve::P256,
    suite: Tls12Suite::AES_128_GCM_SHA256,
    ems: false,
};

/// Random P-256 premasters, including ones whose shares wrap around `p`.
#[test]
fn p256_aes128_gcm_sha256_matches_reference() {
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    for trial in 0..2 {
        let x = P256Base::random(&mut rng);
        check_against_reference(P256_AES128, x.to_le_bytes(), &x.to_be_bytes(), trial);
    }
    // p - 1: the shares' sum always wraps.
    let x = P256Base::ZERO - P256Base::ONE;
    check_against_reference(P256_AES128, x.to_le_bytes(), &x.to_be_bytes(), 7);
}

#[test]
fn p256_extended_master_secret_matches_reference() {
    let cfg = Tls12Config {
        ems: true,
        ..P256_AES128
    };
    let x = P256Base::random(&mut ChaCha20Rng::seed_from_u64(2));
    check_against_reference(cfg, x.to_le_bytes(), &x.to_be_bytes(), 3);
}

#[test]
fn x25519_aes128_gcm_sha256_matches_reference() {
    let cfg = Tls12Config {
        curve: Curve::X25519,
        ..P256_AES128
    };
    let x = Curve25519Base::random(&mut ChaCha20Rng::seed_from_u64(4));
    check_against_reference(cfg, x.to_le_bytes(), &x.to_le_bytes(), 5);
}

/// AES-256-GCM-SHA384 (SHA-512 compressions: ~2x the gates).
#[test]
fn x25519_aes256_gcm_sha384_matches_reference() {
    let cfg = Tls12Config {
        curve: Curve::X25519,
        suite: Tls12Suite::AES_256_GCM_SHA384,
        ems: true,
    };
    let x = Curve25519Base::random(&mut ChaCha20Rng::seed_from_u64(6));
    check_against_reference(cfg, x.to_le_bytes(), &x.to_le_bytes(), 6);
}

/// ChaCha20-Poly1305-SHA256 through the full PRF (MPC mode runs it so:
/// the reduced PRF outputs AES-128-GCM's 40-byte key block only): the
/// 88-byte key block, 32-byte keys and 12-byte IVs, shared.
#[test]
fn p256_chacha20_poly1305_sha256_matches_reference() {
    for ems in [false, true] {
        let cfg = Tls12Config {
            curve: Curve::P256,
            suite: Tls12Suite::CHACHA20_POLY1305_SHA256,
            ems,
        };
        assert_eq!(cfg.key_block_len(), 88);
        let x = P256Base::random(&mut ChaCha20Rng::seed_from_u64(8 + u64::from(ems)));
        check_against_reference(cfg, x.to_le_bytes(), &x.to_be_bytes(), 8);
    }
}

/// One ECtF (as in the ECtF tests): (verifier share, prover share).
fn run_ectf<F: OleField>(seed: u64, v: (F, F), p: (F, F), a: F) -> (F, F) {
    let n = ectf::cots_needed::<F>();
    let (delta, keys, macs) = cots(seed, n);
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let mut sender = OleSender::new(delta, 0);
    let mut receiver = OleReceiver::new(0);
    let (prover, f) = ProverEctf::start(&mut receiver, &macs, p.0, p.1, &mut rng).unwrap();
    let (verifier, m) = VerifierEctf::new(v.0, v.1, a)
        .respond(&mut sender, &keys, &f, &mut rng)
        .unwrap();
    let (sp, d) = prover.finish(&m).unwrap();
    (verifier.finish(&d).unwrap(), sp)
}

/// Key share → ECtF → key derivation → both Finished on P-256, against
/// the premaster of `p256::ecdh` on the server's side.
#[test]
fn p256_chain_from_key_shares() {
    let mut rng = ChaCha20Rng::seed_from_u64(20);
    let sp = P256Share::random(&mut rng);
    let sv = P256Share::random(&mut rng);
    let client = keyshare::p256_client_share(&sp, &sv.public()).unwrap();
    let server_sk = p256::SecretKey::random(&mut rng);
    let server_pk = p256::EncodedPoint::from(server_sk.public_key())
        .as_bytes()
        .to_vec();
    let (a, b) = run_ectf(
        21,
        sv.point_on(&server_pk).unwrap(),
        sp.point_on(&server_pk).unwrap(),
        keyshare::p256_a(),
    );
    let client_pk = p256::PublicKey::from_sec1_bytes(&client).unwrap();
    let server_view =
        p256::ecdh::diffie_hellman(server_sk.to_nonzero_scalar(), client_pk.as_affine());
    let pms = server_view.raw_secret_bytes().to_vec();
    let pubs = publics(P256_AES128, &mut rng);
    let want = reference(P256_AES128, &pms, &pubs);
    let out = session(
        P256_AES128,
        &a.to_le_bytes(),
        &b.to_le_bytes(),
        &pubs,
        &want.server_vd,
        22,
        None,
    )
    .unwrap();
    assert_eq!(out.verifier.combine(&out.prover), want.keys);
    assert_eq!(&out.client_vd_verifier[..], &want.client_vd[..]);
}

/// The same on X25519, against the server's `X25519(b, client share)`.
#[test]
fn x25519_chain_from_key_shares() {
    let mut rng = ChaCha20Rng::seed_from_u64(30);
    let tv = X25519Share::random(&mut rng);
    let tp = X25519Share::random(&mut rng);
    let client = keyshare::x25519_client_share(&tp, &tv.public()).unwrap();
    let b: [u8; 32] = rng.gen();
    let server = MontgomeryPoint::mul_base_clamped(b);
    let (x, y) = run_ectf(
        31,
        tv.point_on(&server.0).unwrap(),
        tp.point_on(&server.0).unwrap(),
        keyshare::curve25519_a(),
    );
    let pms = MontgomeryPoint(client).mul_clamped(b).0;
    let cfg = Tls12Config {
        curve: Curve::X25519,
        ems: true,
        ..P256_AES128
    };
    let pubs = publics(cfg, &mut rng);
    let want = reference(cfg, &pms, &pubs);
    let out = session(
        cfg,
        &x.to_le_bytes(),
        &y.to_le_bytes(),
        &pubs,
        &want.server_vd,
        32,
        None,
    )
    .unwrap();
    assert_eq!(out.verifier.combine(&out.prover), want.keys);
    assert_eq!(&out.client_vd_verifier[..], &want.client_vd[..]);
}

/// A flipped bit in a table, an input label, a correction, a returned
/// output label, or the server's verify_data: an error or keys other than
/// the handshake's, never its keys (decoding has no digests, so a wrong
/// evaluation shows as wrong values: the server's Finished, or the
/// verifier's check of the labels returned to it, refuses them).
#[test]
fn corruption_gives_errors() {
    let mut rng = ChaCha20Rng::seed_from_u64(40);
    let x = P256Base::random(&mut rng);
    let a = P256Base::random(&mut rng);
    let (va, pb) = (a.to_le_bytes(), (x - a).to_le_bytes());
    let pubs = publics(P256_AES128, &mut rng);
    let want = reference(P256_AES128, &x.to_be_bytes(), &pubs);
    let run = |t: Tamper| session(P256_AES128, &va, &pb, &pubs, &want.server_vd, 41, t);
    for (step, byte) in [(0, 12345), (2, 17), (2, 4096 + 9000), (3, 5), (3, 16 * 600)] {
        match run(Some((step, byte, 1))) {
            Err(e) => assert!(
                matches!(e, Error::OutputCheck { .. } | Error::ServerFinished),
                "{step} {byte}: {e:?}"
            ),
            Ok(o) => assert_ne!(o.verifier.combine(&o.prover), want.keys, "{step} {byte}"),
        }
    }
    for step in [4, 6] {
        let e = run(Some((step, 33, 0x80))).unwrap_err();
        assert!(matches!(e, Error::OutputCheck { .. }), "{step}: {e:?}");
    }
    // A flipped flip changes the prover's input: a wrong premaster, so the
    // server's Finished no longer matches.
    assert_eq!(run(Some((1, 3, 1))).unwrap_err(), Error::ServerFinished);
    let mut wrong = want.server_vd.clone();
    wrong[0] ^= 1;
    let e = session(P256_AES128, &va, &pb, &pubs, &wrong, 41, None).unwrap_err();
    assert_eq!(e, Error::ServerFinished);
}

/// Truncated, extended and random messages at every slot give errors.
#[test]
fn malformed_messages_are_refused() {
    let plans = plans(P256_AES128);
    let (n_kd, n_fin) = plans.cots();
    let (delta, keys, macs) = cots(50, n_kd + n_fin);
    let mut rng = ChaCha20Rng::seed_from_u64(51);
    let mut v = Tls12Verifier::new(plans, delta, 0, &mut rng).unwrap();
    let tables = v.preprocess().unwrap();
    let pubs = publics(P256_AES128, &mut rng);
    let randoms = Randoms {
        client: &pubs.cr,
        server: &pubs.sr,
        session_hash: None,
    };
    let share = [1u8; 32];
    let p = || Tls12Prover::new(plans, 0, tables.clone()).unwrap();
    // Finished before key derivation.
    assert!(p().client_finished_flips(&macs[n_kd..]).is_err());
    // Wrong COT counts.
    assert!(p().key_derivation_flips(&share, &macs[..n_kd - 1]).is_err());
    let good = p().key_derivation_flips(&share, &macs[..n_kd]).unwrap();
    // Flips of the wrong length; a session hash without EMS.
    for len in [0, good.len() - 1, good.len() + 1] {
        assert!(v
            .key_derivation(
                &share,
                plans.config().curve,
                &randoms,
                &keys[..n_kd],
                &vec![0; len]
            )
            .is_err());
    }
    let ems = Randoms {
        session_hash: Some(&[0; 32]),
        ..randoms
    };
    assert!(v
        .key_derivation(&share, plans.config().curve, &ems, &keys[..n_kd], &good)
        .is_err());
    let (msg, _) = v
        .key_derivation(&share, plans.config().curve, &randoms, &keys[..n_kd], &good)
        .unwrap();
    // Input messages: truncated, extended, random of random lengths.
    for len in [0, 1, msg.len() - 1, msg.len() + 1, msg.len() + 16] {
        let mut m = msg.clone();
        m.resize(len, 7);
        let mut pr = p();
        pr.key_derivation_flips(&share, &macs[..n_kd]).unwrap();
        assert!(pr.key_derivation_finish(&m).is_err(), "len {len}");
    }
    for _ in 0..3 {
        let len = rng.gen_range(0..2 * msg.len());
        let m: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
        let mut pr = p();
        pr.key_derivation_flips(&share, &macs[..n_kd]).unwrap();
        assert!(pr.key_derivation_finish(&m).is_err());
    }
    // Input labels before flips.
    assert!(p().key_derivation_finish(&msg).is_err());
    // Truncated or reordered table streams, mangled decoding.
    let mut bad = tables.clone();
    bad.chunks[0].pop();
    let mut pr = Tls12Prover::new(plans, 0, bad).unwrap();
    pr.key_derivation_flips(&share, &macs[..n_kd]).unwrap();
    assert_eq!(
        pr.key_derivation_finish(&msg).unwrap_err(),
        Error::Truncated {
            missing: tables.chunks[0]
                .last()
                .map(|c| u64::from(u32::from_le_bytes(c[4..8].try_into().unwrap())))
                .unwrap()
        }
    );
    let mut bad = tables.clone();
    bad.chunks[0].swap(0, 1);
    let mut pr = Tls12Prover::new(plans, 0, bad).unwrap();
    pr.key_derivation_flips(&share, &macs[..n_kd]).unwrap();
    assert!(matches!(
        pr.key_derivation_finish(&msg).unwrap_err(),
        Error::ChunkOrder { .. }
    ));
    let mut bad = tables.clone();
    bad.decodings[0].truncate(10);
    let mut pr = Tls12Prover::new(plans, 0, bad).unwrap();
    pr.key_derivation_flips(&share, &macs[..n_kd]).unwrap();
    assert!(pr.key_derivation_finish(&msg).is_err());
    // Finished: a hash of the wrong length; output labels of the wrong length.
    let mut pr = p();
    pr.key_derivation_flips(&share, &macs[..n_kd]).unwrap();
    pr.key_derivation_finish(&msg).unwrap();
    let f = pr.client_finished_flips(&macs[n_kd..]).unwrap();
    assert!(v.client_finished(&[0; 31], &keys[n_kd..], &f).is_err());
    let m = v.client_finished(&[0; 32], &keys[n_kd..], &f).unwrap();
    let (_, labels) = pr.client_finished_finish(&m).unwrap();
    for len in [0, labels.len() - 1, labels.len() + 1] {
        let mut l = labels.clone();
        l.resize(len, 0);
        assert!(v.client_verify_data(&l).is_err());
    }
    v.client_verify_data(&labels).unwrap();
}

/// The gate counts the docs quote.
#[test]
fn gate_counts() {
    let [kd, cf, sf] = plans(P256_AES128).and_counts();
    eprintln!("P-256 AES-128-GCM-SHA256: key derivation {kd} AND, Finished {cf} + {sf}");
    assert!(cf.abs_diff(sf) < 100);
    // 26 compressions (some with constant padding blocks) and the mod-p sum.
    assert!(kd < 26 * 22_300 + 1_000, "{kd}");
    assert!(cf < 5 * 22_300, "{cf}");
}

/// Random and truncated messages in the Finished slots on both sides give
/// errors, never panics; a failed Finished does not leak a key share.
#[test]
fn malformed_finished_messages_are_refused() {
    let plans = plans(P256_AES128);
    let (n_kd, n_fin) = plans.cots();
    let (delta, keys, macs) = cots(60, n_kd + 2 * n_fin);
    let mut rng = ChaCha20Rng::seed_from_u64(61);
    let mut v = Tls12Verifier::new(plans, delta, 0, &mut rng).unwrap();
    let tables = v.preprocess().unwrap();
    let pubs = publics(P256_AES128, &mut rng);
    let randoms = Randoms {
        client: &pubs.cr,
        server: &pubs.sr,
        session_hash: None,
    };
    let share = [3u8; 32];
    let mut p = Tls12Prover::new(plans, 0, tables).unwrap();
    let f = p.key_derivation_flips(&share, &macs[..n_kd]).unwrap();
    let (msg, _) = v
        .key_derivation(&share, plans.config().curve, &randoms, &keys[..n_kd], &f)
        .unwrap();
    p.key_derivation_finish(&msg).unwrap();
    // A second key derivation on the same state is refused.
    assert!(p.key_derivation_finish(&msg).is_err());
    let (k1, m1) = (&keys[n_kd..n_kd + n_fin], &macs[n_kd..n_kd + n_fin]);
    let (k2, m2) = (&keys[n_kd + n_fin..], &macs[n_kd + n_fin..]);
    // Flips of random lengths at the verifier.
    for _ in 0..4 {
        let len = rng.gen_range(0..200);
        let f: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
        assert!(v.client_finished(&pubs.cf_hash, k1, &f).is_err() || len == n_fin / 8);
        assert!(v.server_finished(&pubs.sf_hash, k2, &f).is_err() || len == n_fin / 8);
    }
    // Input messages of random and off-by-one lengths at the prover.
    let f = p.client_finished_flips(m1).unwrap();
    let good = v.client_finished(&pubs.cf_hash, k1, &f).unwrap();
    for len in [0, 16, good.len() - 1, good.len() + 1, 2 * good.len()] {
        let m: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
        assert!(p.client_finished_finish(&m).is_err(), "len {len}");
    }
    let (vd, labels) = p.client_finished_finish(&good).unwrap();
    assert_eq!(v.client_verify_data(&labels).unwrap(), vd);
    let f = p.server_finished_flips(m2).unwrap();
    let good = v.server_finished(&pubs.sf_hash, k2, &f).unwrap();
    for len in [0, good.len() - 16, good.len() + 16] {
        let m: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
        assert!(p.server_finished_finish(&m, &vd).is_err(), "len {len}");
    }
    // Server labels of any wrong length or content.
    let (svd, labels) = p.server_verify_data(&good).unwrap();
    for len in [0, labels.len() - 1, labels.len() + 1] {
        let mut l = labels.clone();
        l.resize(len, 0);
        assert!(v.check_server_verify_data(&l, &svd).is_err());
    }
    let mut l = labels.clone();
    l[5] ^= 4;
    assert!(v.check_server_verify_data(&l, &svd).is_err());
    v.check_server_verify_data(&labels, &svd).unwrap();
    assert_eq!(
        v.check_server_verify_data(&labels, &[0; 12]),
        Err(Error::ServerFinished)
    );
}

/// The full PRF's shared plans: one build per configuration and process.
#[test]
fn shared_plans_per_configuration() {
    use webproof_circuits::tls::Tls12Suite;
    use webproof_mpc_tls::kdf::tls12::{Curve, Tls12Config, Tls12Plans};
    let cfg = |ems| Tls12Config {
        curve: Curve::P256,
        suite: Tls12Suite::AES_256_GCM_SHA384,
        ems,
    };
    let a = Tls12Plans::shared(cfg(true)).unwrap();
    let b = Tls12Plans::shared(cfg(true)).unwrap();
    let c = Tls12Plans::shared(cfg(false)).unwrap();
    assert_eq!(a.config(), cfg(true));
    assert_eq!(c.config(), cfg(false));
    assert_eq!(a.and_counts(), b.and_counts());
    assert_eq!(
        a.and_counts(),
        Tls12Plans::new(cfg(true)).unwrap().and_counts()
    );
    assert_ne!(a.and_counts(), c.and_counts());
}
