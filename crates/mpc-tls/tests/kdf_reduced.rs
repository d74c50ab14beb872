//! The reduced-PRF key derivation (only outer compressions garbled)
//! against the TLS 1.2 PRF in the clear, on both curves, with and without
//! the extended master secret; the server Finished's check from the
//! master secret's pads (in the clear and as the proof's circuit); its
//! gate count; a corrupted table.

mod common;
use common::cots;
use hmac::{Hmac, Mac};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use webproof_mpc::field::{Curve25519Base, P256Base};
use webproof_mpc::Error;
use webproof_mpc_tls::kdf::reduced::{
    server_finished_circuit, server_verify_data, ReducedPlans, ReducedProver, ReducedVerifier,
    STEPS,
};
use webproof_mpc_tls::kdf::tls12::{Curve, Randoms};

fn hmac(key: &[u8], msg: &[u8]) -> Vec<u8> {
    let mut m = Hmac::<sha2::Sha256>::new_from_slice(key).unwrap();
    m.update(msg);
    m.finalize().into_bytes().to_vec()
}

fn prf(secret: &[u8], label: &str, seed: &[u8], n: usize) -> Vec<u8> {
    let ls = [label.as_bytes(), seed].concat();
    let mut a = hmac(secret, &ls);
    let mut out = Vec::new();
    while out.len() < n {
        out.extend(hmac(secret, &[&a[..], &ls].concat()));
        a = hmac(secret, &a);
    }
    out.truncate(n);
    out
}

/// Run all seven steps; (verifier, prover) at the end, or the first error.
fn run(
    plans: &ReducedPlans,
    (vshare, curve): (&[u8; 32], Curve),
    pshare: &[u8; 32],
    randoms: &Randoms<'_>,
    cf: &[u8],
    seed: u64,
    tamper: Option<usize>,
) -> Result<(ReducedVerifier, ReducedProver), Error> {
    let total: usize = (0..STEPS).map(|s| plans.cots(s)).sum();
    let (delta, keys, macs) = cots(seed, total);
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let mut v = ReducedVerifier::garble(plans, delta, 0, &mut rng)?;
    v.bind(vshare, curve, randoms, cf)?;
    let mut tables = v.preprocess()?;
    if let Some(step) = tamper {
        // As sent by the verifier: the prover hashes what it received.
        let mut chunks = std::mem::take(&mut tables[step].0).into_chunks();
        for b in &mut chunks[0][8..] {
            *b ^= 1;
        }
        tables[step].0 = chunks.into();
    }
    let mut p = ReducedProver::new(plans, 0, pshare, tables)?;
    let mut off = 0;
    for step in 0..STEPS {
        let n = plans.cots(step);
        let f = p.flips(step, &macs[off..off + n])?;
        let msg = v.inputs(step, &keys[off..off + n], &f)?;
        off += n;
        // The next step's advance labels go right after, as in a session.
        let ahead = v.advance(step + 1)?;
        if let Some(labels) = p.evaluate(step, &msg)? {
            v.receive(step, &labels)?;
        }
        if let Some(a) = ahead {
            p.receive_advance(step + 1, &a)?;
        }
    }
    Ok((v, p))
}

fn check(curve: Curve, ems: bool, seed: u64) {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let (a, b, pms) = match curve {
        Curve::P256 => {
            let (a, b) = (P256Base::random(&mut rng), P256Base::random(&mut rng));
            (a.to_le_bytes(), b.to_le_bytes(), (a + b).to_be_bytes())
        }
        Curve::X25519 => {
            let (a, b) = (
                Curve25519Base::random(&mut rng),
                Curve25519Base::random(&mut rng),
            );
            (a.to_le_bytes(), b.to_le_bytes(), (a + b).to_le_bytes())
        }
    };
    let [cr, sr, sh, cf, sf]: [[u8; 32]; 5] = core::array::from_fn(|_| rng.gen());
    let randoms = Randoms {
        client: &cr,
        server: &sr,
        session_hash: ems.then_some(&sh[..]),
    };
    let plans = ReducedPlans::new().unwrap();
    let (v, p) = run(&plans, (&a, curve), &b, &randoms, &cf, seed, None).unwrap();
    let ms = if ems {
        prf(&pms, "extended master secret", &sh, 48)
    } else {
        prf(&pms, "master secret", &[cr, sr].concat(), 48)
    };
    let kb = prf(&ms, "key expansion", &[sr, cr].concat(), 40);
    let k = v.key_shares().combine(&p.key_shares().unwrap());
    assert_eq!(
        [k.client_key, k.server_key, k.client_iv, k.server_iv].concat(),
        kb
    );
    let want_cf = prf(&ms, "client finished", &cf, 12);
    assert_eq!(&v.client_verify_data().unwrap()[..], &want_cf[..]);
    assert_eq!(v.client_verify_data(), p.client_verify_data());
    let want_sf = prf(&ms, "server finished", &sf, 12);
    let (is_ms, mask) = v.master_secret_pads().unwrap();
    let (is_p, share) = p.master_secret_pads().unwrap();
    assert_eq!(is_ms, is_p);
    let os: [u8; 32] = core::array::from_fn(|i| mask[i] ^ share[i]);
    assert_eq!(
        server_verify_data(&os, &is_ms, &sf).unwrap()[..],
        want_sf[..]
    );
    let c = server_finished_circuit(&is_ms, &mask, &sf).unwrap();
    assert_eq!(c.eval_bytes(&[&share]), vec![want_sf.clone()]);
    // Another hash, another verify_data; a hash of another length refused.
    assert_ne!(
        server_verify_data(&os, &is_ms, &cf).unwrap()[..],
        want_sf[..]
    );
    assert!(server_finished_circuit(&is_ms, &mask, &sf[1..]).is_err());
}

#[test]
fn reduced_p256_matches_reference() {
    check(Curve::P256, false, 1);
    check(Curve::P256, true, 2);
}

#[test]
fn reduced_x25519_matches_reference() {
    check(Curve::X25519, true, 3);
}

#[test]
fn reduced_gate_count_and_corruption() {
    let plans = ReducedPlans::new().unwrap();
    let ands = plans.and_counts();
    let total: u64 = ands.iter().sum();
    eprintln!("reduced PRF: {ands:?} = {total} AND");
    // 247,267: four pad compressions with their schedules, ten outer
    // ones on a public schedule.
    assert!(total < 248_000, "{total}");
    let randoms = Randoms {
        client: &[1; 32],
        server: &[2; 32],
        session_hash: None,
    };
    let go = |tamper| {
        run(
            &plans,
            (&[3; 32], Curve::P256),
            &[4; 32],
            &randoms,
            &[5; 32],
            9,
            tamper,
        )
    };
    let (v, p) = go(None).unwrap();
    let honest = v.key_shares().combine(&p.key_shares().unwrap());
    // Decoding has no digests: a corrupted step gives wrong values, which
    // the verifier's check of the revealed labels refuses, or keys other
    // than the handshake's (the server would refuse its Finished).
    for step in [0, 3, 5, 6] {
        match go(Some(step)) {
            Err(e) => assert!(matches!(e, Error::OutputCheck { .. }), "{step}: {e:?}"),
            Ok((v, p)) => {
                let k = p.key_shares().unwrap();
                assert_ne!(v.key_shares().combine(&k), honest, "{step}");
            }
        }
    }
}

/// Out-of-order steps and messages of the wrong length give errors, never
/// panics.
#[test]
fn reduced_malformed_and_out_of_order() {
    let plans = ReducedPlans::new().unwrap();
    let total: usize = (0..STEPS).map(|s| plans.cots(s)).sum();
    let (delta, keys, macs) = cots(90, total);
    let mut rng = ChaCha20Rng::seed_from_u64(91);
    let randoms = Randoms {
        client: &[1; 32],
        server: &[2; 32],
        session_hash: None,
    };
    // Garbled ahead of the key exchange: no inputs before the share and
    // the public values are bound, and they are bound once.
    let mut v = ReducedVerifier::garble(&plans, delta, 0, &mut rng).unwrap();
    let tables = v.preprocess().unwrap();
    assert!(v.inputs(0, &keys[..plans.cots(0)], &[0; 32]).is_err());
    assert!(v.bind(&[7; 32], Curve::P256, &randoms, &[5; 31]).is_err());
    v.bind(&[7; 32], Curve::P256, &randoms, &[5; 32]).unwrap();
    assert!(v.bind(&[7; 32], Curve::P256, &randoms, &[5; 32]).is_err());
    assert!(ReducedProver::new(&plans, 0, &[8; 32], tables[1..].to_vec()).is_err());
    let mut p = ReducedProver::new(&plans, 0, &[8; 32], tables).unwrap();
    let n0 = plans.cots(0);
    // Steps out of order on both sides.
    assert!(p.flips(1, &macs[..256]).is_err());
    assert!(p.flips(STEPS, &macs[..256]).is_err());
    assert!(v.inputs(2, &keys[..256], &[0; 32]).is_err());
    assert!(v.receive(0, &[0; 16]).is_err());
    let f = p.flips(0, &macs[..n0]).unwrap();
    assert!(v.inputs(0, &keys[..n0], &f[1..]).is_err());
    let msg = v.inputs(0, &keys[..n0], &f).unwrap();
    assert!(p.evaluate(1, &msg).is_err());
    assert!(p.evaluate(0, &msg[..msg.len() - 1]).is_err());
    let labels = p.evaluate(0, &msg).unwrap().unwrap();
    assert!(v.receive(0, &labels[1..]).is_err());
    assert!(v.receive(0, &[labels.as_slice(), &[0]].concat()).is_err());
    let mut bad = labels.clone();
    bad[40] ^= 1;
    assert!(v.receive(0, &bad).is_err());
    v.receive(0, &labels).unwrap();
    assert!(v.receive(0, &labels).is_err());
    // Advance labels: only for a step that has them, one step ahead, once,
    // and before that step's inputs.
    assert_eq!(v.advance(1).unwrap(), None);
    assert!(v.advance(3).is_err());
    assert!(p.receive_advance(3, &[0; 16]).is_err());
    let (n1, m1) = (plans.cots(1), &macs[n0..]);
    let f = p.flips(1, &m1[..n1]).unwrap();
    let msg = v.inputs(1, &keys[n0..n0 + n1], &f).unwrap();
    let l1 = p.evaluate(1, &msg).unwrap().unwrap();
    v.receive(1, &l1).unwrap();
    let f = p.flips(2, &[]).unwrap();
    let msg = v.inputs(2, &[], &f).unwrap();
    let ahead = v.advance(3).unwrap().unwrap();
    assert!(v.advance(3).is_err(), "advance labels sent twice");
    p.evaluate(2, &msg).unwrap();
    assert!(p.receive_advance(3, &ahead[1..]).is_err());
    p.receive_advance(3, &ahead).unwrap();
    assert!(p.receive_advance(3, &ahead).is_err());
    // The master secret's pads come out at step 3.
    assert!(v.master_secret_pads().is_none() && p.master_secret_pads().is_none());
    assert!(p.key_shares().is_err());
    assert!(v.client_verify_data().is_none());
}

/// The shared plans are built once per process: every call hands out the
/// same schedules, equal to freshly built ones.
#[test]
fn shared_plans_are_built_once() {
    use webproof_mpc_tls::kdf::reduced::{ReducedPlans, STEPS};
    let a = ReducedPlans::shared().unwrap();
    let b = ReducedPlans::shared().unwrap();
    let fresh = ReducedPlans::new().unwrap();
    assert_eq!(a.and_counts(), fresh.and_counts());
    for s in 0..STEPS {
        assert!(std::sync::Arc::ptr_eq(
            a.plan(s).unwrap(),
            b.plan(s).unwrap()
        ));
        assert!(!std::sync::Arc::ptr_eq(
            a.plan(s).unwrap(),
            fresh.plan(s).unwrap()
        ));
    }
    assert!(a.plan(STEPS).is_none());
}
