//! Garbling throughput: AND gates per second garbled and evaluated, and
//! bytes per AND, for AES-128 and the TLS 1.2 PRF circuits (evaluation also
//! with the tables received ahead: hashed on arrival, as the MPC prover
//! holds them). Median of 5
//! runs, one thread per party, both parties in this process (no network).
//!
//! `cargo run --release -p webproof-mpc --example garble_bench`

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use std::sync::Arc;
use std::time::Instant;
use webproof_circuits::builder::Builder;
use webproof_circuits::tls::{self, Tls12Public, Tls12Suite};
use webproof_circuits::Circuit;
use webproof_core::Block;
use webproof_mpc::{Evaluator, Garbler, Plan, ReceivedTables};

const RUNS: usize = 5;

/// CPU time of this thread (the machine is shared: wall time depends on
/// what else runs, CPU time much less).
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

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// Garble `copies` instances streaming into one reused buffer (timed, as a
/// session would send them), then again keeping the chunks (untimed) and
/// evaluate those (timed), then evaluate them again as received ahead of
/// the inputs (`ReceivedTables`, hashed untimed, as in preprocessing; timed
/// evaluation). Returns CPU seconds (garble, eval, eval ahead), wall
/// seconds (garble, eval) and bytes.
fn one_run(plan: &Arc<Plan>, copies: usize, inputs: &[Vec<bool>], seed: u64) -> ([f64; 5], usize) {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let delta = Block(rng.gen::<u128>()).with_lsb(true);
    let mut bytes = 0;
    let mut buf = Vec::new();
    let (t, c) = (Instant::now(), cpu_time());
    for i in 0..copies {
        let mut g = Garbler::from_plan(plan.clone(), delta, i as u64, &mut rng).expect("garbler");
        while g.next_chunk(&mut buf) {
            bytes += buf.len();
        }
    }
    let (garble, garble_cpu) = (t.elapsed().as_secs_f64(), cpu_time() - c);
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let delta = Block(rng.gen::<u128>()).with_lsb(true);
    let mut all = Vec::with_capacity(copies);
    for i in 0..copies {
        let mut g = Garbler::from_plan(plan.clone(), delta, i as u64, &mut rng).expect("garbler");
        let chunks = g.garble_all();
        let labels: Vec<Vec<Block>> = (0..inputs.len())
            .map(|k| g.encode(k, &inputs[k]).expect("encode"))
            .collect();
        all.push((chunks, labels, g.decoding().expect("decoding")));
    }
    let (t, c) = (Instant::now(), cpu_time());
    for (i, (chunks, labels, decoding)) in all.iter().enumerate() {
        let mut e = Evaluator::from_plan(plan.clone(), i as u64);
        for (k, l) in labels.iter().enumerate() {
            e.set_input(k, l).expect("input");
        }
        for ch in chunks {
            e.feed(ch).expect("chunk");
        }
        e.finish().expect("finish");
        e.decode(decoding).expect("decode");
    }
    let (eval, eval_cpu) = (t.elapsed().as_secs_f64(), cpu_time() - c);
    let received: Vec<ReceivedTables> = all
        .iter()
        .map(|(chunks, _, _)| ReceivedTables::from(chunks.clone()))
        .collect();
    let c = cpu_time();
    for (i, ((_, labels, decoding), tables)) in all.iter().zip(&received).enumerate() {
        let mut e = Evaluator::from_plan(plan.clone(), i as u64);
        for (k, l) in labels.iter().enumerate() {
            e.set_input(k, l).expect("input");
        }
        e.feed_received(tables).expect("chunks");
        e.finish().expect("finish");
        e.decode(decoding).expect("decode");
    }
    let ahead_cpu = cpu_time() - c;
    ([garble_cpu, eval_cpu, ahead_cpu, garble, eval], bytes)
}

fn bench(name: &str, c: &Circuit, copies: usize) {
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let t = Instant::now();
    let plan = Arc::new(Plan::new(c).expect("plan"));
    let plan_ms = t.elapsed().as_secs_f64() * 1e3;
    let inputs: Vec<Vec<bool>> = c
        .inputs
        .iter()
        .map(|g| g.iter().map(|_| rng.gen()).collect())
        .collect();
    let ands = plan.and_count() as f64 * copies as f64;
    let mut rates: [Vec<f64>; 5] = Default::default();
    let mut bytes = 0;
    for run in 0..RUNS {
        let (secs, b) = one_run(&plan, copies, &inputs, run as u64);
        for (r, s) in rates.iter_mut().zip(secs) {
            r.push(ands / s / 1e6);
        }
        bytes = b;
    }
    let [gc, ec, ea, gw, ew] = rates.map(median);
    println!(
        "{name:<24} {:>7} AND x{copies:<3} garble {gc:>5.1} ({gw:>5.1}) M AND/s  eval {ec:>5.1} ({ew:>5.1}) M AND/s, {ea:>5.1} received ahead  {:.2} B/AND ({:.2} MB)  plan {plan_ms:.0} ms, {:.1} AND/group, {} slots for {} wires, state {:.1} MB/party",
        plan.and_count(),
        bytes as f64 / ands,
        bytes as f64 / 1e6,
        plan.and_count() as f64 / plan.and_groups().max(1) as f64,
        plan.num_slots(),
        plan.num_wires(),
        plan.state_bytes() as f64 / 1e6,
    );
}

fn main() {
    println!(
        "median of {RUNS} runs, one thread, both parties in-process; M AND/s per CPU-second \
         (per wall-second in brackets); bytes = tables + chunk headers"
    );
    bench(
        "AES-128 (with schedule)",
        webproof_circuits::cache::aes128(),
        200,
    );
    bench(
        "SHA-256 compression",
        webproof_circuits::cache::sha256_compress(),
        50,
    );
    let mut rng = ChaCha20Rng::seed_from_u64(2);
    let (cr, sr): ([u8; 32], [u8; 32]) = (rng.gen(), rng.gen());
    let (h1, h2): ([u8; 32], [u8; 32]) = (rng.gen(), rng.gen());
    let public = Tls12Public {
        client_random: &cr,
        server_random: &sr,
        client_finished_hash: &h1,
        server_finished_hash: &h2,
    };
    let suite = Tls12Suite::AES_128_GCM_SHA256;
    let ks = tls::tls12_key_schedule_circuit(suite, &public);
    bench("TLS1.2 PRF MS->keys+Fin", &ks, 1);
    // Pre-master secret to everything (master secret, key block, Finished).
    let mut b = Builder::new();
    let pms = b.input_bytes(32);
    let ms = tls::tls12_master_secret(&mut b, suite.hash, &pms, &cr, &sr, None);
    let k = tls::tls12_key_schedule(&mut b, suite, &ms, &public);
    for out in [&k.client_key, &k.server_key, &k.client_iv, &k.server_iv] {
        b.output(out);
    }
    b.output(&k.client_verify_data);
    b.output(&k.server_verify_data);
    let full = b.finish();
    bench("TLS1.2 PRF PMS->all", &full, 1);
}
