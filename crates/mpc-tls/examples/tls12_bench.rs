//! The TLS 1.2 handshake in 2PC, end to end: key-share setup, each
//! party's point on the server's key, ECtF, key derivation and both
//! Finished. Prints, per curve and suite, the bytes each way split into
//! preprocessing (garbled tables and decoding, independent of inputs) and
//! online, the AND gates, the COTs consumed and the CPU time per party
//! (both in this process, one thread, no network; median of 5). COTs come from
//! SoftSpokenOT beforehand and are not timed or counted in the bytes (their
//! cost is the COT extension's: ~31 bits per COT with SoftSpokenOT k=4,
//! ~0.3 with Ferret).
//!
//! Per curve also the reduced PRF ([`webproof_mpc_tls::kdf::reduced`], EMS).
//! Last, the size of a 1 KB request record (circuit and GHASH powers).
//!
//! `cargo run --release -p webproof-mpc-tls --example tls12_bench`

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use webproof_circuits::tls::Tls12Suite;
use webproof_core::Block;
use webproof_mpc::field::{Curve25519Base, P256Base};
use webproof_mpc::ole::{OleField, OleReceiver, OleSender};
use webproof_mpc_tls::kdf::reduced::{ReducedPlans, ReducedProver, ReducedVerifier, STEPS};
use webproof_mpc_tls::kdf::tls12::{
    Curve, Randoms, Tls12Config, Tls12Plans, Tls12Prover, Tls12Verifier,
};
use webproof_mpc_tls::keyx::ectf::{self, ProverEctf, VerifierEctf};
use webproof_mpc_tls::keyx::keyshare::{self, P256Share, X25519Share};
use webproof_ot::testing::cots;

const RUNS: usize = 5;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).expect("no NaN"));
    v[v.len() / 2]
}

/// One run's figures.
#[derive(Default, Clone, Copy)]
struct Row {
    /// Verifier seconds: preprocessing, online.
    v_pre: f64,
    v_on: f64,
    /// Prover seconds online (its preprocessing is receiving).
    p_on: f64,
    /// Bytes: preprocessing down; online up (P->V) and down (V->P).
    pre_down: usize,
    on_up: usize,
    on_down: usize,
    round_trips: usize,
}

/// This thread's CPU seconds (the machine is shared: wall time misleads).
fn cpu_time() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime");
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// CPU time of `f`, added to `acc`.
fn timed<T>(acc: &mut f64, f: impl FnOnce() -> T) -> T {
    let t = cpu_time();
    let r = f();
    *acc += cpu_time() - t;
    r
}

/// The ECtF from the two points: (verifier share, prover share) as
/// little-endian bytes, with its bytes and time added to `row`.
fn run_ectf<F: OleField>(
    row: &mut Row,
    cot: &(Block, Vec<Block>, Vec<Block>),
    pv: (F, F),
    pp: (F, F),
    a: F,
    le: impl Fn(F) -> [u8; 32],
) -> ([u8; 32], [u8; 32]) {
    let (delta, keys, macs) = cot;
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let n = ectf::cots_needed::<F>();
    let mut sender = OleSender::new(*delta, 0);
    let mut receiver = OleReceiver::new(0);
    let (prover, f) = timed(&mut row.p_on, || {
        ProverEctf::start(&mut receiver, &macs[..n], pp.0, pp.1, &mut rng).expect("start")
    });
    let (verifier, m) = timed(&mut row.v_on, || {
        VerifierEctf::new(pv.0, pv.1, a)
            .respond(&mut sender, &keys[..n], &f, &mut rng)
            .expect("respond")
    });
    let (sp, d) = timed(&mut row.p_on, || prover.finish(&m).expect("finish"));
    let sv = timed(&mut row.v_on, || verifier.finish(&d).expect("finish"));
    row.on_up += f.len() + d.len();
    row.on_down += m.len();
    row.round_trips += ectf::ROUND_TRIPS;
    (le(sv), le(sp))
}

/// Key derivation and both Finished from premaster shares.
fn run_tls12(row: &mut Row, plans: &Tls12Plans, vshare: &[u8; 32], pshare: &[u8; 32], seed: u64) {
    let (n_kd, n_fin) = plans.cots();
    let (delta, keys, macs) = cots(seed, n_kd + 2 * n_fin);
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let (cr, sr): ([u8; 32], [u8; 32]) = (rng.gen(), rng.gen());
    let hl = plans.config().suite.hash.output_len();
    let hashes: Vec<Vec<u8>> = (0..3)
        .map(|_| (0..hl).map(|_| rng.gen()).collect())
        .collect();
    let randoms = Randoms {
        client: &cr,
        server: &sr,
        session_hash: plans.config().ems.then_some(&hashes[0][..]),
    };
    let mut v = Tls12Verifier::new(plans, delta, 0, &mut rng).expect("verifier");
    let tables = timed(&mut row.v_pre, || v.preprocess().expect("garble"));
    row.pre_down += tables.len();
    let mut p = Tls12Prover::new(plans, 0, tables).expect("prover");
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
    let f = timed(&mut row.p_on, || {
        p.key_derivation_flips(pshare, m0).expect("flips")
    });
    let (msg, _) = timed(&mut row.v_on, || {
        v.key_derivation(vshare, plans.config().curve, &randoms, k0, &f)
            .expect("kd")
    });
    timed(&mut row.p_on, || p.key_derivation_finish(&msg).expect("kd"));
    row.on_up += f.len();
    row.on_down += msg.len();
    // Client Finished: flips, inputs, labels back (the labels ride with the
    // next flips: 1 round trip and a half-trip).
    let f = timed(&mut row.p_on, || {
        p.client_finished_flips(m1).expect("flips")
    });
    let msg = timed(&mut row.v_on, || {
        v.client_finished(&hashes[1], k1, &f).expect("cf")
    });
    let (_, labels) = timed(&mut row.p_on, || {
        p.client_finished_finish(&msg).expect("cf")
    });
    timed(&mut row.v_on, || v.client_verify_data(&labels).expect("cf"));
    row.on_up += f.len() + labels.len();
    row.on_down += msg.len();
    // Server Finished: the expected value is the 2PC one (no server here).
    let f = timed(&mut row.p_on, || {
        p.server_finished_flips(m2).expect("flips")
    });
    let msg = timed(&mut row.v_on, || {
        v.server_finished(&hashes[2], k2, &f).expect("sf")
    });
    let (vd, labels) = timed(&mut row.p_on, || p.server_verify_data(&msg).expect("sf"));
    timed(&mut row.v_on, || {
        v.check_server_verify_data(&labels, &vd).expect("sf")
    });
    row.on_up += f.len() + labels.len();
    row.on_down += msg.len();
    row.round_trips += 3;
}

/// The reduced-PRF key derivation and both Finished (SHA-256 suites).
fn run_reduced(
    row: &mut Row,
    plans: &ReducedPlans,
    (vshare, curve): (&[u8; 32], Curve),
    pshare: &[u8; 32],
    seed: u64,
) {
    let total: usize = (0..STEPS).map(|s| plans.cots(s)).sum();
    let (delta, keys, macs) = cots(seed, total);
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let h: [[u8; 32]; 5] = core::array::from_fn(|_| rng.gen());
    let randoms = Randoms {
        client: &h[0],
        server: &h[1],
        session_hash: Some(&h[2]),
    };
    let mut v = ReducedVerifier::garble(plans, delta, 0, &mut rng).expect("verifier");
    v.bind(vshare, curve, &randoms, &h[3]).expect("bind");
    let tables = timed(&mut row.v_pre, || v.preprocess().expect("garble"));
    row.pre_down += tables
        .iter()
        .map(|(c, d, e)| c.chunks().iter().map(Vec::len).sum::<usize>() + d.len() + e.len())
        .sum::<usize>();
    let mut p = ReducedProver::new(plans, 0, pshare, tables).expect("prover");
    let mut off = 0;
    for step in 0..STEPS {
        let n = plans.cots(step);
        let f = timed(&mut row.p_on, || {
            p.flips(step, &macs[off..off + n]).expect("flips")
        });
        let msg = timed(&mut row.v_on, || {
            v.inputs(step, &keys[off..off + n], &f).expect("inputs")
        });
        off += n;
        // The next step's advance labels go right after, as in a session.
        let ahead = timed(&mut row.v_on, || v.advance(step + 1).expect("advance"));
        let labels = timed(&mut row.p_on, || p.evaluate(step, &msg).expect("evaluate"));
        row.on_up += f.len();
        row.on_down += msg.len();
        if let Some(l) = labels {
            timed(&mut row.v_on, || v.receive(step, &l).expect("receive"));
            row.on_up += l.len();
        }
        if let Some(a) = ahead {
            timed(&mut row.p_on, || {
                p.receive_advance(step + 1, &a).expect("advance")
            });
            row.on_down += a.len();
        }
        row.round_trips += 1;
    }
}

fn report(name: &str, plans: &Tls12Plans, ectf_cots: usize, setup: (usize, usize), rows: &[Row]) {
    let [kd, cf, sf] = plans.and_counts();
    let (n_kd, n_fin) = plans.cots();
    println!("{name}");
    println!(
        "  AND gates: key derivation {kd}, client Finished {cf}, server Finished {sf} (total {})",
        kd + cf + sf
    );
    println!(
        "  COTs {} (ECtF {ectf_cots}, key derivation {n_kd}, Finished 2 x {n_fin})",
        ectf_cots + n_kd + 2 * n_fin
    );
    report_rows(setup, rows);
}

fn report_rows(setup: (usize, usize), rows: &[Row]) {
    let r = rows[0];
    let med = |f: fn(&Row) -> f64| median(rows.iter().map(f).collect()) * 1e3;
    let up = r.on_up + setup.0;
    let down = r.on_down + setup.1;
    println!(
        "  preprocessing V->P {:.2} MB (tables + decoding)",
        r.pre_down as f64 / 1e6
    );
    println!(
        "  online P->V {up} B, V->P {down} B, round trips {} (+1 key-share setup before the ClientHello)",
        r.round_trips
    );
    println!(
        "  total {:.2} MB ({:.2}% V->P)",
        (r.pre_down + up + down) as f64 / 1e6,
        100.0 * (r.pre_down + down) as f64 / (r.pre_down + up + down) as f64
    );
    println!(
        "  verifier: preprocessing {:.1} ms, online {:.1} ms; prover online {:.1} ms (median of {RUNS})",
        med(|r| r.v_pre),
        med(|r| r.v_on),
        med(|r| r.p_on)
    );
}

/// Key exchange: each party's point on a fresh server key and the ECtF;
/// the premaster shares (little-endian).
fn exchange(
    curve: Curve,
    rng: &mut ChaCha20Rng,
    row: &mut Row,
    i: usize,
    ectf_cots: usize,
) -> ([u8; 32], [u8; 32]) {
    let cot = cots(100 + i as u64, ectf_cots);
    match curve {
        Curve::P256 => {
            let (sv, sp) = (P256Share::random(rng), P256Share::random(rng));
            let server = p256::SecretKey::random(rng);
            let pk = p256::EncodedPoint::from(server.public_key())
                .as_bytes()
                .to_vec();
            let (pv, pp) = timed(&mut row.v_on, || {
                (
                    sv.point_on(&pk).expect("point"),
                    sp.point_on(&pk).expect("point"),
                )
            });
            row.p_on = row.v_on / 2.0;
            row.v_on /= 2.0;
            run_ectf(row, &cot, pv, pp, keyshare::p256_a(), |x| x.to_le_bytes())
        }
        Curve::X25519 => {
            let (tv, tp) = (X25519Share::random(rng), X25519Share::random(rng));
            let b: [u8; 32] = rng.gen();
            let server = curve25519_dalek::montgomery::MontgomeryPoint::mul_base_clamped(b);
            let (pv, pp) = timed(&mut row.v_on, || {
                (
                    tv.point_on(&server.0).expect("point"),
                    tp.point_on(&server.0).expect("point"),
                )
            });
            row.p_on = row.v_on / 2.0;
            row.v_on /= 2.0;
            run_ectf(row, &cot, pv, pp, keyshare::curve25519_a(), |x| {
                x.to_le_bytes()
            })
        }
    }
}

fn main() {
    let mut rng = ChaCha20Rng::seed_from_u64(7);
    let suites = [
        ("AES-128-GCM-SHA256", Tls12Suite::AES_128_GCM_SHA256, false),
        (
            "AES-128-GCM-SHA256, EMS",
            Tls12Suite::AES_128_GCM_SHA256,
            true,
        ),
        (
            "AES-256-GCM-SHA384, EMS",
            Tls12Suite::AES_256_GCM_SHA384,
            true,
        ),
    ];
    for curve in [Curve::P256, Curve::X25519] {
        for (sname, suite, ems) in suites {
            let plans = Tls12Plans::new(Tls12Config { curve, suite, ems }).expect("plans");
            let mut rows = Vec::new();
            let (ectf_cots, setup) = match curve {
                Curve::P256 => (ectf::cots_needed::<P256Base>(), (32 + 65 + 32, 65)),
                Curve::X25519 => (ectf::cots_needed::<Curve25519Base>(), (32 + 32 + 32, 32)),
            };
            for i in 0..RUNS {
                let mut row = Row::default();
                let (vs, ps) = exchange(curve, &mut rng, &mut row, i, ectf_cots);
                run_tls12(&mut row, &plans, &vs, &ps, 200 + i as u64);
                rows.push(row);
            }
            let name = format!("{curve:?} {sname}");
            report(&name, &plans, ectf_cots, setup, &rows);
        }
        let plans = ReducedPlans::new().expect("plans");
        let (ectf_cots, setup) = match curve {
            Curve::P256 => (ectf::cots_needed::<P256Base>(), (32 + 65 + 32, 65)),
            Curve::X25519 => (ectf::cots_needed::<Curve25519Base>(), (32 + 32 + 32, 32)),
        };
        let mut rows = Vec::new();
        for i in 0..RUNS {
            let mut row = Row::default();
            let (vs, ps) = exchange(curve, &mut rng, &mut row, i, ectf_cots);
            run_reduced(&mut row, &plans, (&vs, curve), &ps, 300 + i as u64);
            rows.push(row);
        }
        let ands = plans.and_counts();
        let cots: usize = (0..STEPS).map(|s| plans.cots(s)).sum();
        println!("{curve:?} AES-128-GCM-SHA256, EMS, reduced PRF");
        println!(
            "  AND gates per step {ands:?} (total {})",
            ands.iter().sum::<u64>()
        );
        println!(
            "  COTs {} (ECtF {ectf_cots}, steps {cots})",
            ectf_cots + cots
        );
        report_rows(setup, &rows);
    }
    // The request record (not part of the handshake): one circuit per
    // record, the GHASH key taken from the client Finished's circuit,
    // which answers the powers' M2A (one per odd power, once per session);
    // the record's own M2A of its hidden ciphertext (one OLE per block).
    // Both M2As are answered ahead, with the tables.
    use webproof_mpc::{field::Gf128, ole};
    use webproof_mpc_tls::rec::gcm;
    for (name, kl) in [("AES-128-GCM", 16), ("AES-256-GCM", 32)] {
        let len = 1024;
        let c = gcm::gcm_circuit(kl, len, false);
        let powers = gcm::oles_needed(gcm::powers_needed(len));
        let hidden = gcm::ct_blocks(len);
        println!(
            "{name} request record of {len} B: {} AND, tables {:.2} MB V->P; hidden ciphertext: \
             {hidden} M2A, {} B V->P; GHASH powers (once per session): {powers} M2A, {} B V->P \
             (all preprocessing)",
            c.and_count(),
            webproof_mpc::tables_bytes(c.and_count()) as f64 / 1e6,
            ole::response_len::<Gf128>(hidden),
            ole::response_len::<Gf128>(powers),
        );
    }
}
