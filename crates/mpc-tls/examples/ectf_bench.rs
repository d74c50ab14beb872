//! One 2PC key exchange per curve: each party's point on the server's key
//! (`s_i·S`) and the EC-to-field conversion to premaster shares. Prints
//! time per party role (both in this process, one thread, no network;
//! median of 5), bytes each way, round trips and COTs consumed. COTs come
//! from SoftSpokenOT beforehand and are not timed (their cost is the COT
//! extension's: ~31 bits per COT with SoftSpokenOT k=4, ~0.3 with Ferret).
//!
//! `cargo run --release -p webproof-mpc-tls --example ectf_bench`

use curve25519_dalek::montgomery::MontgomeryPoint;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use std::time::Instant;
use webproof_core::Block;
use webproof_mpc::field::{Curve25519Base, P256Base};
use webproof_mpc::ole::{OleField, OleReceiver, OleSender};
use webproof_mpc_tls::keyx::ectf::{self, ProverEctf, VerifierEctf};
use webproof_mpc_tls::keyx::keyshare::{self, P256Share, X25519Share};
use webproof_ot::testing::cots;

const RUNS: usize = 5;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).expect("no NaN"));
    v[v.len() / 2]
}

/// Seconds spent as (verifier, prover) and bytes (up, down) for one ECtF,
/// with the points computed inside the timed region by `points`.
fn run<F: OleField>(
    cot: &(Block, Vec<Block>, Vec<Block>),
    points: impl Fn() -> ((F, F), (F, F)),
    a: F,
    check: impl Fn(F, F),
) -> (f64, f64, usize, usize) {
    let (delta, keys, macs) = cot;
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let n = ectf::cots_needed::<F>();
    let mut sender = OleSender::new(*delta, 0);
    let mut receiver = OleReceiver::new(0);
    let (mut tv, mut tp) = (0.0, 0.0);
    let t = Instant::now();
    let (pv, pp) = points();
    // Each party computes one point; split the time evenly.
    let half = t.elapsed().as_secs_f64() / 2.0;
    tv += half;
    tp += half;
    let t = Instant::now();
    let (prover, f1) =
        ProverEctf::start(&mut receiver, &macs[..n], pp.0, pp.1, &mut rng).expect("start");
    tp += t.elapsed().as_secs_f64();
    let t = Instant::now();
    let (verifier, m1) = VerifierEctf::new(pv.0, pv.1, a)
        .respond(&mut sender, &keys[..n], &f1, &mut rng)
        .expect("respond");
    tv += t.elapsed().as_secs_f64();
    let t = Instant::now();
    let (sp, d) = prover.finish(&m1).expect("finish");
    tp += t.elapsed().as_secs_f64();
    let t = Instant::now();
    let sv = verifier.finish(&d).expect("finish");
    tv += t.elapsed().as_secs_f64();
    check(sv, sp);
    (tv, tp, f1.len() + d.len(), m1.len())
}

/// Key-share setup bytes (up, down): the prover's commitment and later its
/// opening (public share and blind), the verifier's public share.
fn setup_bytes(public: usize) -> (usize, usize) {
    (32 + public + 32, public)
}

fn report(name: &str, cots: usize, public: usize, rows: Vec<(f64, f64, usize, usize)>) {
    let (up, down) = (rows[0].2, rows[0].3);
    let v = median(rows.iter().map(|r| r.0).collect());
    let p = median(rows.iter().map(|r| r.1).collect());
    println!(
        "{name:<7} verifier {:>6.2} ms  prover {:>6.2} ms  up (P->V) {up} B  down (V->P) {down} B  \
         round trips {}  COTs {cots}",
        v * 1e3,
        p * 1e3,
        ectf::ROUND_TRIPS
    );
    let (su, sd) = setup_bytes(public);
    println!(
        "{name:<7} key-share setup before the ClientHello: up {su} B  down {sd} B  \
         (1 round trip; the opening rides with the first ECtF message)"
    );
}

fn main() {
    let mut rng = ChaCha20Rng::seed_from_u64(7);

    let n = ectf::cots_needed::<P256Base>();
    let mut rows = Vec::new();
    for i in 0..RUNS {
        let cot = cots(100 + i as u64, n);
        let (sv, sp) = (P256Share::random(&mut rng), P256Share::random(&mut rng));
        let server = p256::SecretKey::random(&mut rng);
        let server_pk = p256::EncodedPoint::from(server.public_key())
            .as_bytes()
            .to_vec();
        let client = keyshare::p256_client_share(&sp, &sv.public()).expect("client share");
        let client = p256::PublicKey::from_sec1_bytes(&client).expect("client key");
        let want = p256::ecdh::diffie_hellman(server.to_nonzero_scalar(), client.as_affine());
        rows.push(run(
            &cot,
            || {
                (
                    sv.point_on(&server_pk).expect("point"),
                    sp.point_on(&server_pk).expect("point"),
                )
            },
            keyshare::p256_a(),
            |a, b| {
                assert_eq!(
                    &keyshare::p256_premaster(a, b)[..],
                    &want.raw_secret_bytes()[..]
                )
            },
        ));
    }
    report("P-256", n, 65, rows);

    let n = ectf::cots_needed::<Curve25519Base>();
    let mut rows = Vec::new();
    for i in 0..RUNS {
        let cot = cots(200 + i as u64, n);
        let (tv, tp) = (X25519Share::random(&mut rng), X25519Share::random(&mut rng));
        let b: [u8; 32] = rng.gen();
        let server = MontgomeryPoint::mul_base_clamped(b);
        let client = keyshare::x25519_client_share(&tp, &tv.public()).expect("client share");
        let want = MontgomeryPoint(client).mul_clamped(b).0;
        rows.push(run(
            &cot,
            || {
                (
                    tv.point_on(&server.0).expect("point"),
                    tp.point_on(&server.0).expect("point"),
                )
            },
            keyshare::curve25519_a(),
            |a, c| assert_eq!(keyshare::x25519_premaster(a, c), want),
        ));
    }
    report("X25519", n, 32, rows);
}
