//! The key shares and EC-to-field over the workspace's real COT
//! extensions (base OT + SoftSpokenOT, and Ferret), run in-process, checked
//! against `p256` ECDH and curve25519-dalek's X25519 (OLE and the share
//! conversions alone: `webproof-mpc`'s `tests/ole.rs`).

mod common;
use common::{cots, ferret_cots};
use curve25519_dalek::constants::EIGHT_TORSION;
use curve25519_dalek::montgomery::MontgomeryPoint;
use curve25519_dalek::scalar::Scalar as EdScalar;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use webproof_core::Block;
use webproof_mpc::field::{Curve25519Base, Gf128, P256Base};
use webproof_mpc::ole::{self, OleField, OleReceiver, OleSender};
use webproof_mpc::Error;
use webproof_mpc_tls::keyx::ectf::{self, ProverEctf, VerifierEctf};
use webproof_mpc_tls::keyx::keyshare::{self, P256Share, X25519Share};

/// HMAC-SHA256 for keys of at most 64 bytes (the premaster and master
/// secrets).
fn hmac(key: &[u8], msg: &[u8]) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    assert!(key.len() <= 64);
    let mut k = [0u8; 64];
    k[..key.len()].copy_from_slice(key);
    let pad = |b: u8| k.iter().map(|x| x ^ b).collect::<Vec<u8>>();
    let inner = Sha256::new()
        .chain_update(pad(0x36))
        .chain_update(msg)
        .finalize();
    Sha256::new()
        .chain_update(pad(0x5c))
        .chain_update(inner)
        .finalize()
        .into()
}

/// TLS 1.2 PRF with SHA-256 (RFC 5246 §5), `n` bytes.
fn prf(secret: &[u8], label: &[u8], seed: &[u8], n: usize) -> Vec<u8> {
    let ls = [label, seed].concat();
    let mut a = hmac(secret, &ls).to_vec();
    let mut out = Vec::new();
    while out.len() < n {
        out.extend_from_slice(&hmac(secret, &[&a[..], &ls].concat()));
        a = hmac(secret, &a).to_vec();
    }
    out.truncate(n);
    out
}

/// The client Finished verify_data a TLS 1.2 client derives from `pms`
/// (fixed randoms and transcript hash stand in for a handshake).
fn client_finished(pms: &[u8]) -> Vec<u8> {
    let master = prf(pms, b"master secret", &[7u8; 64], 48);
    prf(&master, b"client finished", &[9u8; 32], 12)
}

/// A tamper applied to a message of the run: (message index 0..3, byte, xor).
type Tamper = Option<(usize, usize, u8)>;

/// One ECtF between the verifier's point `v` and the prover's `p`:
/// (verifier share, prover share), or the first error.
fn run_ectf<F: OleField>(
    cot: &(Block, Vec<Block>, Vec<Block>),
    v: (F, F),
    p: (F, F),
    a: F,
    tamper: Tamper,
) -> Result<(F, F), Error> {
    let (delta, keys, macs) = cot;
    let mut rng = ChaCha20Rng::seed_from_u64(99);
    let mut sender = OleSender::new(*delta, 0);
    let mut receiver = OleReceiver::new(0);
    let t = |i: usize, mut m: Vec<u8>| {
        if let Some((j, byte, x)) = tamper {
            if i == j {
                let k = byte % m.len();
                m[k] ^= x;
            }
        }
        m
    };
    let n = ectf::cots_needed::<F>();
    let (prover, f1) = ProverEctf::start(&mut receiver, &macs[..n], p.0, p.1, &mut rng)?;
    let f1 = t(0, f1);
    let (verifier, m1) =
        VerifierEctf::new(v.0, v.1, a).respond(&mut sender, &keys[..n], &f1, &mut rng)?;
    let m1 = t(1, m1);
    let (sp, d) = prover.finish(&m1)?;
    let d = t(2, d);
    let sv = verifier.finish(&d)?;
    let (up, down) = ectf::traffic::<F>();
    assert_eq!(up, f1.len() + d.len());
    assert_eq!(down, m1.len());
    Ok((sv, sp))
}

fn p256_server(rng: &mut ChaCha20Rng) -> (p256::SecretKey, Vec<u8>) {
    let sk = p256::SecretKey::random(rng);
    let pk = p256::EncodedPoint::from(sk.public_key())
        .as_bytes()
        .to_vec();
    (sk, pk)
}

/// The full key exchange on P-256: setup with the commitment, ECtF, and
/// the premaster equal to what one TLS client with secret `s_P + s_V`
/// gets from `p256` ECDH, and to what the server computes.
#[test]
fn p256_premaster_matches_ecdh() {
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let cot = cots(2, 4 * ectf::cots_needed::<P256Base>());
    let n = ectf::cots_needed::<P256Base>();
    for trial in 0..4 {
        let sp = P256Share::random(&mut rng);
        let sv = P256Share::random(&mut rng);
        // Setup: P commits, V sends its point, P adds, P opens.
        let (com, blind) = keyshare::commit(&sp.public(), &mut rng);
        let client = keyshare::p256_client_share(&sp, &sv.public()).unwrap();
        keyshare::check_opening(&com, &sp.public(), &blind).unwrap();
        assert_eq!(
            keyshare::p256_client_share(&sv, &sp.public()).unwrap(),
            client
        );
        assert!(keyshare::check_opening(&com, &sv.public(), &blind).is_err());

        let total = (p256::NonZeroScalar::try_from(&sp.to_be_bytes()[..])
            .unwrap()
            .as_ref()
            + p256::NonZeroScalar::try_from(&sv.to_be_bytes()[..])
                .unwrap()
                .as_ref())
        .to_owned();
        let total = p256::SecretKey::from_bytes(&total.to_bytes()).unwrap();
        assert_eq!(
            client,
            p256::EncodedPoint::from(total.public_key()).as_bytes()
        );

        let (server_sk, server_pk) = p256_server(&mut rng);
        let pv = sv.point_on(&server_pk).unwrap();
        let pp = sp.point_on(&server_pk).unwrap();
        let slice = (
            cot.0,
            cot.1[trial * n..(trial + 1) * n].to_vec(),
            cot.2[trial * n..(trial + 1) * n].to_vec(),
        );
        let (a, b) = run_ectf(&slice, pv, pp, keyshare::p256_a(), None).unwrap();
        let premaster = keyshare::p256_premaster(a, b);
        let client_view = p256::ecdh::diffie_hellman(
            total.to_nonzero_scalar(),
            server_sk.public_key().as_affine(),
        );
        assert_eq!(&premaster[..], &client_view.raw_secret_bytes()[..]);
        let client_pk = p256::PublicKey::from_sec1_bytes(&client).unwrap();
        let server_view =
            p256::ecdh::diffie_hellman(server_sk.to_nonzero_scalar(), client_pk.as_affine());
        assert_eq!(&premaster[..], &server_view.raw_secret_bytes()[..]);
    }
}

/// X25519: the share sum acts as a clamped private key `k`; the premaster
/// equals `X25519(k, S)` and the server's `X25519(b, client share)`.
#[test]
fn x25519_premaster_matches_x25519() {
    let mut rng = ChaCha20Rng::seed_from_u64(3);
    let n = ectf::cots_needed::<Curve25519Base>();
    let cot = cots(4, 4 * n);
    for trial in 0..4 {
        let k: [u8; 32] = rng.gen();
        let t = keyshare::x25519_scalar_of(&k);
        let tv = X25519Share::random(&mut rng);
        let tp = X25519Share::from_scalar(t - tv.scalar()).unwrap();
        let client = keyshare::x25519_client_share(&tp, &tv.public()).unwrap();
        assert_eq!(client, MontgomeryPoint::mul_base_clamped(k).0);
        // The verifier's check after the opening: the same sum.
        assert_eq!(
            keyshare::x25519_client_share(&tv, &tp.public()).unwrap(),
            client
        );

        let b: [u8; 32] = rng.gen();
        let mut server = MontgomeryPoint::mul_base_clamped(b);
        if trial == 3 {
            // A server key with a torsion component: clamping kills it, and
            // so does the cofactor here.
            let e = server.to_edwards(0).unwrap() + EIGHT_TORSION[3];
            server = e.to_montgomery();
        }
        let pv = tv.point_on(&server.0).unwrap();
        let pp = tp.point_on(&server.0).unwrap();
        let slice = (
            cot.0,
            cot.1[trial * n..(trial + 1) * n].to_vec(),
            cot.2[trial * n..(trial + 1) * n].to_vec(),
        );
        let (a, c) = run_ectf(&slice, pv, pp, keyshare::curve25519_a(), None).unwrap();
        let premaster = keyshare::x25519_premaster(a, c);
        assert_eq!(premaster, server.mul_clamped(k).0);
        if trial < 3 {
            assert_eq!(premaster, MontgomeryPoint(client).mul_clamped(b).0);
        }
    }
}

/// The same over Ferret COTs.
#[test]
fn ectf_over_ferret() {
    let mut rng = ChaCha20Rng::seed_from_u64(5);
    let cot = ferret_cots(6, ectf::cots_needed::<P256Base>());
    let (sv, sp) = (P256Share::random(&mut rng), P256Share::random(&mut rng));
    let (server_sk, server_pk) = p256_server(&mut rng);
    let (a, b) = run_ectf(
        &cot,
        sv.point_on(&server_pk).unwrap(),
        sp.point_on(&server_pk).unwrap(),
        keyshare::p256_a(),
        None,
    )
    .unwrap();
    let client = keyshare::p256_client_share(&sp, &sv.public()).unwrap();
    let client_pk = p256::PublicKey::from_sec1_bytes(&client).unwrap();
    let want = p256::ecdh::diffie_hellman(server_sk.to_nonzero_scalar(), client_pk.as_affine());
    assert_eq!(
        &keyshare::p256_premaster(a, b)[..],
        &want.raw_secret_bytes()[..]
    );
}

/// Cheating that this layer does not catch still shows: a corrupted OLE
/// correction, A2M element or share, or a verifier using a point that is
/// not its share times S, leaves shares that no longer add to the
/// premaster, so the Finished messages (keyed from it) fail.
#[test]
fn corrupted_shares_give_a_wrong_premaster() {
    let mut rng = ChaCha20Rng::seed_from_u64(7);
    let n = ectf::cots_needed::<P256Base>();
    let cot = cots(8, n);
    let (sv, sp) = (P256Share::random(&mut rng), P256Share::random(&mut rng));
    let (server_sk, server_pk) = p256_server(&mut rng);
    let client = keyshare::p256_client_share(&sp, &sv.public()).unwrap();
    let client_pk = p256::PublicKey::from_sec1_bytes(&client).unwrap();
    let want = p256::ecdh::diffie_hellman(server_sk.to_nonzero_scalar(), client_pk.as_affine());
    let want = want.raw_secret_bytes().to_vec();
    let pv = sv.point_on(&server_pk).unwrap();
    let pp = sp.point_on(&server_pk).unwrap();
    let (a0, b0) = run_ectf(&cot, pv, pp, keyshare::p256_a(), None).unwrap();
    assert_eq!(keyshare::p256_premaster(a0, b0).to_vec(), want);

    // A wrong OLE correction for bit i of the prover's input changes its
    // share only if that bit is 1: the failure depends on the prover's
    // secret (selective failure), which is why the later consistency
    // check must cover these messages. Element i of the first answer
    // belongs to bit i of x_P, element 256 + i to bit i of y_P.
    use webproof_mpc::ole::OleField as _;
    let (xb, yb) = (pp.0.decompose(), pp.1.decompose());
    for i in [0usize, 1, 2, 3, 100, 254] {
        for (el, bit) in [(i, xb[i]), (256 + i, yb[i])] {
            let (a, b) =
                run_ectf(&cot, pv, pp, keyshare::p256_a(), Some((1, 32 * el + 31, 1))).unwrap();
            assert_eq!(
                keyshare::p256_premaster(a, b).to_vec() != want,
                bit,
                "element {el}"
            );
        }
    }
    // A wrong A2M element always spoils the premaster.
    let m1_ole = ole::response_len::<P256Base>(3);
    for k in [m1_ole + 31, m1_ole + 63] {
        let (a, b) = run_ectf(&cot, pv, pp, keyshare::p256_a(), Some((1, k, 2))).unwrap();
        assert_ne!(keyshare::p256_premaster(a, b).to_vec(), want);
    }
    // A wrong flip from the prover (changes its input bit), or a wrong
    // correction d.
    let (a, b) = run_ectf(&cot, pv, pp, keyshare::p256_a(), Some((0, 3, 1))).unwrap();
    assert_ne!(keyshare::p256_premaster(a, b).to_vec(), want);
    let (a, b) = run_ectf(&cot, pv, pp, keyshare::p256_a(), Some((2, 16, 1))).unwrap();
    assert_ne!(keyshare::p256_premaster(a, b).to_vec(), want);
    // The verifier inputs another point than s_V·S.
    let other = P256Share::random(&mut rng).point_on(&server_pk).unwrap();
    let (a, b) = run_ectf(&cot, other, pp, keyshare::p256_a(), None).unwrap();
    assert_ne!(keyshare::p256_premaster(a, b).to_vec(), want);
    // What the server checks: the Finished from the shares' premaster
    // differs from the one the server derives, so it aborts.
    let server_finished = client_finished(&want);
    assert_eq!(
        client_finished(&keyshare::p256_premaster(a0, b0)),
        server_finished
    );
    assert_ne!(
        client_finished(&keyshare::p256_premaster(a, b)),
        server_finished
    );
    // A corrupted output share.
    assert_ne!(
        keyshare::p256_premaster(a + P256Base::ONE, b).to_vec(),
        want
    );
}

/// Malformed, truncated and oversized messages are errors, never panics.
#[test]
fn malformed_messages_are_refused() {
    let mut rng = ChaCha20Rng::seed_from_u64(9);
    let n = ectf::cots_needed::<P256Base>();
    let (delta, keys, macs) = cots(10, n);
    let x = P256Base::random(&mut rng);
    let y = P256Base::random(&mut rng);
    let mk = || (OleSender::new(delta, 0), OleReceiver::new(0));

    // Flips: truncated, oversized, empty.
    let (mut s, mut r) = mk();
    let (_p, f1) = ProverEctf::start(&mut r, &macs[..n], x, y, &mut rng).unwrap();
    for bad in [
        &f1[..f1.len() - 1],
        &[f1.clone(), vec![0]].concat()[..],
        &[][..],
    ] {
        let v = VerifierEctf::new(x, y, P256Base::ZERO);
        assert!(matches!(
            v.respond(&mut s, &keys[..n], bad, &mut rng),
            Err(Error::Malformed(_))
        ));
    }
    // Wrong number of COTs given by the caller.
    assert!(matches!(
        ProverEctf::start(&mut r, &macs[..n - 1], x, y, &mut rng),
        Err(Error::Length { .. })
    ));

    // The verifier's answer: truncated, oversized, non-canonical.
    let (mut s, mut r) = mk();
    let (p, f1) = ProverEctf::start(&mut r, &macs[..n], x, y, &mut rng).unwrap();
    let v = VerifierEctf::new(P256Base::ONE, P256Base::ONE, P256Base::ZERO);
    let (v, m1) = v.respond(&mut s, &keys[..n], &f1, &mut rng).unwrap();
    assert_eq!(p.expected_len(), m1.len());
    for bad in [
        m1[..m1.len() - 1].to_vec(),
        [m1.clone(), vec![0; 32]].concat(),
        Vec::new(),
        {
            let mut m = m1.clone();
            m[..32].fill(0xff);
            m
        },
        {
            let mut m = m1.clone();
            let l = m.len();
            m[l - 32..].fill(0xff);
            m
        },
    ] {
        let mut rng2 = ChaCha20Rng::seed_from_u64(9);
        let (p2, _) =
            ProverEctf::start(&mut OleReceiver::new(0), &macs[..n], x, y, &mut rng2).unwrap();
        assert!(matches!(p2.finish(&bad), Err(Error::Malformed(_))));
    }
    // The prover's correction: truncated, oversized, empty, non-canonical.
    let (_, d) = p.finish(&m1).unwrap();
    assert_eq!(d.len(), ectf::correction_len::<P256Base>());
    for bad in [
        d[1..].to_vec(),
        [d.clone(), vec![0]].concat(),
        Vec::new(),
        vec![0xff; 32],
    ] {
        assert!(matches!(v.clone().finish(&bad), Err(Error::Malformed(_))));
    }
    v.finish(&d).unwrap();

    // GF(2^128) flips with padding bits cannot occur (128 bits per OLE);
    // an odd COT count for a prime field can: 1 OLE = 256 bits, fine too.
    // Direct OLE: padding bits are checked by the transfer layer.
    let (delta, keys, macs) = cots(11, 128);
    let mut s = OleSender::new(delta, 0);
    let a = [Gf128::ONE];
    assert!(s.respond(&keys[..127], &a, &[0; 16]).is_err());
    assert!(matches!(
        s.respond(&keys, &a, &[0; 17]),
        Err(Error::Malformed(_))
    ));
    let _ = macs;
}

/// Degenerate inputs: equal points (P_V = P_P) and bad curve points.
#[test]
fn degenerate_points_are_refused() {
    let mut rng = ChaCha20Rng::seed_from_u64(12);
    let cot = cots(13, ectf::cots_needed::<P256Base>());
    let s = P256Share::random(&mut rng);
    let (_, server_pk) = p256_server(&mut rng);
    let p = s.point_on(&server_pk).unwrap();
    assert!(matches!(
        run_ectf(&cot, p, p, keyshare::p256_a(), None),
        Err(Error::Malformed(_))
    ));
    // P_V = -P_P: the sum is the point at infinity.
    assert!(matches!(
        run_ectf(&cot, p, (p.0, -p.1), keyshare::p256_a(), None),
        Err(Error::Malformed(_))
    ));

    // P-256 points: wrong length, off the curve, infinity, compressed ok.
    assert!(s.point_on(&server_pk[..64]).is_err());
    let mut off = server_pk.clone();
    off[64] ^= 1;
    assert!(s.point_on(&off).is_err());
    assert!(s.point_on(&[0u8]).is_err());
    assert!(keyshare::p256_client_share(&s, &[4u8; 65]).is_err());
    assert!(P256Share::from_be_bytes(&[0; 32]).is_err());
    assert!(P256Share::from_be_bytes(&[0xff; 32]).is_err());

    // X25519: a twist point, small-order points, bad public shares.
    let t = X25519Share::random(&mut rng);
    let twist = (2u8..)
        .map(|i| {
            let mut u = [0u8; 32];
            u[0] = i;
            u
        })
        .find(|u| MontgomeryPoint(*u).to_edwards(0).is_none())
        .unwrap();
    assert!(t.point_on(&twist).is_err());
    assert!(t.point_on(&[0u8; 32]).is_err());
    assert!(t.point_on(&EIGHT_TORSION[1].to_montgomery().0).is_err());
    assert!(keyshare::x25519_client_share(&t, &[0u8; 31]).is_err());
    assert!(keyshare::x25519_client_share(&t, &EIGHT_TORSION[2].compress().0).is_err());
    let mut with_torsion = X25519Share::random(&mut rng).public();
    with_torsion = (curve25519_dalek::edwards::CompressedEdwardsY(with_torsion)
        .decompress()
        .unwrap()
        + EIGHT_TORSION[1])
        .compress()
        .0;
    assert!(keyshare::x25519_client_share(&t, &with_torsion).is_err());
    assert!(X25519Share::from_scalar(EdScalar::ZERO).is_err());
    // The shares cancel: the client key would be the identity.
    let neg = X25519Share::from_scalar(-t.scalar()).unwrap();
    assert!(keyshare::x25519_client_share(&t, &neg.public()).is_err());
}

/// Random bytes of random lengths in every message slot: errors or (for
/// messages of the right length) wrong shares, never a panic.
#[test]
fn random_messages_never_panic() {
    let mut rng = ChaCha20Rng::seed_from_u64(20);
    let n = ectf::cots_needed::<Curve25519Base>();
    let (delta, keys, macs) = cots(21, n);
    let x = Curve25519Base::random(&mut rng);
    let y = Curve25519Base::random(&mut rng);
    let a = keyshare::curve25519_a();
    let (_, good_f1) =
        ProverEctf::start(&mut OleReceiver::new(0), &macs[..n], x, y, &mut rng).unwrap();
    let (good_v, good_m1) = VerifierEctf::new(x, y, a)
        .respond(
            &mut OleSender::new(delta, 0),
            &keys[..n],
            &good_f1,
            &mut rng,
        )
        .unwrap();
    let t = X25519Share::random(&mut rng);
    let s = P256Share::random(&mut rng);
    for i in 0..200 {
        let len = match i % 5 {
            0 => rng.gen_range(0..100),
            1 => good_f1.len(),
            2 => good_m1.len(),
            3 => ectf::correction_len::<Curve25519Base>(),
            _ => rng.gen_range(0..good_m1.len() + 64),
        };
        let mut msg = vec![0u8; len];
        rng.fill(&mut msg[..]);
        if i % 8 == 2 {
            // Mostly canonical elements: clear the top byte of each.
            for c in msg.chunks_mut(32) {
                c[0] = 0;
            }
        }
        let _ = VerifierEctf::new(x, y, a).respond(
            &mut OleSender::new(delta, 0),
            &keys[..n],
            &msg,
            &mut rng,
        );
        let (p, _) =
            ProverEctf::start(&mut OleReceiver::new(0), &macs[..n], x, y, &mut rng).unwrap();
        let _ = p.finish(&msg);
        let _ = good_v.clone().finish(&msg);
        let _ = keyshare::x25519_client_share(&t, &msg);
        if let Ok(u) = <[u8; 32]>::try_from(&msg[..msg.len().min(32)]) {
            let _ = t.point_on(&u);
        }
        let _ = keyshare::p256_client_share(&s, &msg);
        let _ = s.point_on(&msg);
        let _ = keyshare::check_opening(&msg, &msg, &msg);
    }
}

/// X25519: a corrupted A2M element gives a wrong shared secret.
#[test]
fn x25519_corruption_gives_a_wrong_secret() {
    let mut rng = ChaCha20Rng::seed_from_u64(24);
    let n = ectf::cots_needed::<Curve25519Base>();
    let cot = cots(25, n);
    let (tv, tp) = (X25519Share::random(&mut rng), X25519Share::random(&mut rng));
    let b: [u8; 32] = rng.gen();
    let server = MontgomeryPoint::mul_base_clamped(b);
    let client = keyshare::x25519_client_share(&tp, &tv.public()).unwrap();
    let want = MontgomeryPoint(client).mul_clamped(b).0;
    let (pv, pp) = (
        tv.point_on(&server.0).unwrap(),
        tp.point_on(&server.0).unwrap(),
    );
    let a = keyshare::curve25519_a();
    let (x, y) = run_ectf(&cot, pv, pp, a, None).unwrap();
    assert_eq!(keyshare::x25519_premaster(x, y), want);
    let at = ole::response_len::<Curve25519Base>(3) + 31;
    let (x, y) = run_ectf(&cot, pv, pp, a, Some((1, at, 1))).unwrap();
    assert_ne!(keyshare::x25519_premaster(x, y), want);
    assert_ne!(
        client_finished(&keyshare::x25519_premaster(x, y)),
        client_finished(&want)
    );
}

/// The verifier's OLE inputs as it reveals them after the session are
/// `(r, s, (r/s)^2)`; the audit's check passes on them and refuses any
/// other `β^2`, a zero mask, or another count.
#[test]
fn revealed_verifier_inputs_are_checked() {
    let mut rng = ChaCha20Rng::seed_from_u64(40);
    let n = ectf::cots_needed::<P256Base>();
    let (delta, keys, macs) = cots(41, n);
    let (x, y) = (P256Base::random(&mut rng), P256Base::random(&mut rng));
    let mut sender = OleSender::new(delta, 0);
    let (p, f) = ProverEctf::start(&mut OleReceiver::new(0), &macs, x, y, &mut rng).unwrap();
    let (v, m) = VerifierEctf::new(P256Base::ONE, P256Base::ONE, P256Base::ZERO)
        .respond(&mut sender, &keys, &f, &mut rng)
        .unwrap();
    let (_, d) = p.finish(&m).unwrap();
    v.finish(&d).unwrap();
    let revealed: Vec<P256Base> = sender.inputs()[0]
        .chunks(32)
        .map(|c| <P256Base as OleField>::decode(c).unwrap())
        .collect();
    ectf::check_verifier_inputs(&revealed).unwrap();
    let [r, s, b2] = revealed[..] else {
        panic!("three inputs")
    };
    for bad in [
        vec![r, s, b2 + P256Base::ONE],
        vec![r, s, r * r],
        vec![P256Base::ZERO, s, P256Base::ZERO],
        vec![r, P256Base::ZERO, b2],
        vec![r, s],
        vec![r, s, b2, b2],
    ] {
        assert!(matches!(
            ectf::check_verifier_inputs(&bad),
            Err(Error::Malformed(_))
        ));
    }
}
