//! OLE and the share conversions (A2M, M2A) over the workspace's real
//! COT extensions, run in-process: products and conversions over the
//! P-256 and Curve25519 fields and GF(2^128), edge inputs included.

use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;
use webproof_mpc::convert;
use webproof_mpc::field::{Curve25519Base, Gf128, P256Base};
use webproof_mpc::ole::{self, OleField, OleReceiver, OleSender};
use webproof_ot::testing::cots;

/// A2M and M2A over the P-256 field and GF(2^128) with real COTs.
#[test]
fn a2m_and_m2a() {
    let mut rng = ChaCha20Rng::seed_from_u64(14);
    fn check<F: OleField>(seed: u64, rng: &mut ChaCha20Rng, edge: &[F]) {
        let k = edge.len() + 3;
        let (delta, keys, macs) = cots(seed, 2 * k * F::BITS);
        let (mid, end) = (k * F::BITS, 2 * k * F::BITS);
        let mut s = OleSender::new(delta, 3);
        let mut r = OleReceiver::new(3);
        let av: Vec<F> = (0..k).map(|_| F::random(rng)).collect();
        let mut ap: Vec<F> = (0..k).map(|_| F::random(rng)).collect();
        for (i, e) in edge.iter().enumerate() {
            ap[i] = *e - av[i]; // the shared value is the edge value
        }
        let (pending, flips) = convert::a2m_choose(&mut r, &macs[..mid], &ap).unwrap();
        let (mv, msg) = convert::a2m_respond(&mut s, &keys[..mid], &av, &flips, rng).unwrap();
        let mp = pending.finish(&msg).unwrap();
        for i in 0..k {
            assert_eq!(mv[i] * mp[i], av[i] + ap[i]);
        }
        let (pending, flips) = convert::m2a_choose(&mut r, &macs[mid..end], &mp).unwrap();
        let (cv, msg) = convert::m2a_respond(&mut s, &keys[mid..end], &mv, &flips).unwrap();
        let cp = pending.finish(&msg).unwrap();
        for i in 0..k {
            assert_eq!(cv[i] + cp[i], av[i] + ap[i]);
        }
    }
    check::<P256Base>(
        15,
        &mut rng,
        &[P256Base::ZERO, P256Base::ONE, -P256Base::ONE],
    );
    check::<Curve25519Base>(
        16,
        &mut rng,
        &[
            Curve25519Base::ZERO,
            Curve25519Base::ONE,
            -Curve25519Base::ONE,
        ],
    );
    check::<Gf128>(17, &mut rng, &[Gf128::ZERO, Gf128::ONE]);
}

/// OLE products over real COTs, edge inputs on both sides.
#[test]
fn ole_products_with_edge_inputs() {
    let mut rng = ChaCha20Rng::seed_from_u64(18);
    let edge = [P256Base::ZERO, P256Base::ONE, -P256Base::ONE];
    let mut a = Vec::new();
    let mut b = Vec::new();
    for x in edge {
        for y in edge {
            a.push(x);
            b.push(y);
        }
    }
    for _ in 0..5 {
        a.push(P256Base::random(&mut rng));
        b.push(P256Base::random(&mut rng));
    }
    let (delta, keys, macs) = cots(19, ole::cots_needed::<P256Base>(a.len()));
    let mut s = OleSender::new(delta, 9);
    let mut r = OleReceiver::new(9);
    let (p, f) = r.choose(&macs, &b).unwrap();
    let (u, m) = s.respond(&keys, &a, &f).unwrap();
    let v = p.finish(&m).unwrap();
    for i in 0..a.len() {
        assert_eq!(u[i] + v[i], a[i] * b[i], "pair {i}");
    }
    // Mismatched tweak streams give garbage, not an error (the streams
    // are the caller's contract).
    let mut r2 = OleReceiver::new(10);
    let (p, f) = r2.choose(&macs, &b).unwrap();
    let (u, m) = OleSender::new(delta, 9).respond(&keys, &a, &f).unwrap();
    let v = p.finish(&m).unwrap();
    assert_ne!(u[12] + v[12], a[12] * b[12]);
}

/// Shares of the powers H, H^2, ..., H^k of a shared GHASH key: one A2M,
/// local powers, one M2A batch.
#[test]
fn gf128_shares_of_powers() {
    let mut rng = ChaCha20Rng::seed_from_u64(22);
    let k = 16;
    let (delta, keys, macs) = cots(23, (1 + k) * 128);
    let mut s = OleSender::new(delta, 5);
    let mut r = OleReceiver::new(5);
    let (hv, hp) = (Gf128::random(&mut rng), Gf128::random(&mut rng));
    let h = hv + hp;
    let (pending, flips) = convert::a2m_choose(&mut r, &macs[..128], &[hp]).unwrap();
    let (mv, msg) = convert::a2m_respond(&mut s, &keys[..128], &[hv], &flips, &mut rng).unwrap();
    let mp = pending.finish(&msg).unwrap();
    let powers = |m: Gf128| {
        let mut acc = Gf128::ONE;
        (0..k)
            .map(|_| {
                acc = acc * m;
                acc
            })
            .collect::<Vec<_>>()
    };
    let (pv, pp) = (powers(mv[0]), powers(mp[0]));
    let (pending, flips) = convert::m2a_choose(&mut r, &macs[128..], &pp).unwrap();
    let (cv, msg) = convert::m2a_respond(&mut s, &keys[128..], &pv, &flips).unwrap();
    assert_eq!(msg.len(), k * 2048);
    let cp = pending.finish(&msg).unwrap();
    let mut want = Gf128::ONE;
    for i in 0..k {
        want = want * h;
        assert_eq!(cv[i] + cp[i], want, "H^{}", i + 1);
    }
}
