//! Cost of the malicious-security layer ([`webproof_mpc::consistency`]) for
//! the circuits of a TLS 1.2 session: per circuit, the sealed QuickSilver
//! proof that the garbled evaluation was consistent, the reveal of `Δ` and
//! the prover's audit (re-garbling). Prints the bytes each way of the
//! proof phase (corrections, commitment, reveal, opening; the verifier's
//! input reveal is counted separately: one bit per verifier input bit),
//! its round trips, and the CPU time of each step (one thread, both parties
//! in this process, no network; median of 3). COTs come from the insecure
//! ideal dealer and are not counted (Ferret adds ~0.3 bits per COT).
//!
//! `cargo run --release -p webproof-mpc-tls --example consistency_bench`

use futures::executor::block_on;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::sync::Arc;
use std::time::{Duration, Instant};
use webproof_circuits::Circuit;
use webproof_core::cot::ideal::pair;
use webproof_core::cot::{RandomCotReceiver, RandomCotSender};
use webproof_core::{memory_duplex, Channel};
use webproof_mpc::consistency::{self, EvaluatedCircuit, GarbledCircuit};
use webproof_mpc::exec::{ProverCircuit, VerifierCircuit};
use webproof_mpc::Plan;
use webproof_mpc_tls::kdf::reduced::{self, STEPS};
use webproof_zk::{Config, Prover, Verifier};

const RUNS: usize = 3;

struct Figures {
    ands: u64,
    up: u64,
    down: u64,
    prove: Duration,
    verify: Duration,
    audit: Duration,
}

fn run(c: &Circuit, seed: u64) -> Figures {
    let mut rng = StdRng::seed_from_u64(seed);
    let lowered = c.lower();
    let plan = Arc::new(Plan::new(&lowered).unwrap());
    let (mut s, mut r) = pair(seed);
    let delta = s.delta();
    let values: Vec<Vec<bool>> = c
        .inputs
        .iter()
        .map(|g| (0..g.len()).map(|_| rng.gen()).collect())
        .collect();
    // The garbled execution (not timed here: tls12_bench has it).
    let mut vc = VerifierCircuit::new(Arc::clone(&plan), delta, 1, 0, &mut rng).unwrap();
    let chunks = vc.garble_all();
    let dec = vc.decoding().unwrap();
    let (a, b) = memory_duplex();
    let (mut ca, mut cb) = (Channel::new(a), Channel::new(b));
    let n = values[0].len();
    let (mut keys, mut macs) = (Vec::new(), Vec::new());
    block_on(async {
        s.extend(&mut ca, n, &mut keys).await.unwrap();
        r.extend(&mut cb, n, &mut macs).await.unwrap();
    });
    let mut pc = ProverCircuit::new(plan, 1, 0).unwrap();
    let flips = pc.flips(&macs, &values[0]).unwrap();
    let msg = vc.inputs(&keys, &flips, &values[1..]).unwrap();
    pc.receive_inputs(&msg).unwrap();
    for ch in &chunks {
        pc.feed(ch).unwrap();
    }
    pc.finish().unwrap();
    let outputs = pc.decode(&dec).unwrap();
    let ev = EvaluatedCircuit::from_evaluator(pc.evaluator(), Some(&dec)).unwrap();
    let gc = GarbledCircuit::from_garbler(vc.garbler()).unwrap();

    let (a, b) = memory_duplex();
    let cfg = Config::default();
    let mut vrng = StdRng::seed_from_u64(seed ^ 1);
    let ((prove, audit, up, down), verify) = block_on(async {
        let prover = async {
            let t = Instant::now();
            let mut p = Prover::new(r, Channel::new(a), cfg).await.unwrap();
            p.defer();
            let w = ev.import(&p, &values, &outputs).unwrap();
            consistency::prove_circuit(&mut p, c, &w).await.unwrap();
            let mut sealed = p.seal([9; 32]).await.unwrap();
            let prove = t.elapsed();
            let d = consistency::receive_delta(&mut sealed).await.unwrap();
            let t = Instant::now();
            ev.audit(d, &values).unwrap();
            let audit = t.elapsed();
            let (_, ch) = sealed.open().await.unwrap();
            let st = ch.stats();
            (prove, audit, st.sent(), st.received())
        };
        let verifier = async {
            let t = Instant::now();
            let mut v = Verifier::new(s, Channel::new(b), cfg, &mut vrng)
                .await
                .unwrap();
            v.defer();
            let w = gc.import(&v).unwrap();
            consistency::verify_circuit(&mut v, c, &w).await.unwrap();
            let mut sealed = v.seal().await.unwrap();
            consistency::reveal_delta(&mut sealed).await.unwrap();
            sealed.verify().await.unwrap();
            t.elapsed()
        };
        futures::join!(prover, verifier)
    });
    Figures {
        ands: lowered.and_count() as u64,
        up,
        down,
        prove,
        verify,
        audit,
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let mut circuits: Vec<(String, Circuit)> = (0..STEPS)
        .map(|i| (format!("reduced PRF step {i}"), reduced::step_circuit(i)))
        .collect();
    circuits.push((
        "AES-128-GCM record, 1 KB".into(),
        webproof_mpc_tls::rec::gcm::gcm_circuit(16, 1024, true),
    ));
    println!(
        "{:<32} {:>9} {:>10} {:>10} {:>9} {:>9} {:>9}",
        "circuit", "AND", "P->V B", "V->P B", "prove", "verify", "audit"
    );
    let (mut ands, mut up, mut down) = (0, 0, 0);
    let (mut tp, mut tv, mut ta) = (Duration::ZERO, Duration::ZERO, Duration::ZERO);
    for (name, c) in &circuits {
        let runs: Vec<Figures> = (0..RUNS).map(|i| run(c, i as u64)).collect();
        let f = &runs[0];
        let prove = median(runs.iter().map(|f| f.prove).collect());
        let verify = median(runs.iter().map(|f| f.verify).collect());
        let audit = median(runs.iter().map(|f| f.audit).collect());
        println!(
            "{name:<32} {:>9} {:>10} {:>10} {:>7.1}ms {:>7.1}ms {:>7.1}ms",
            f.ands,
            f.up,
            f.down,
            prove.as_secs_f64() * 1e3,
            verify.as_secs_f64() * 1e3,
            audit.as_secs_f64() * 1e3
        );
        ands += f.ands;
        up += f.up;
        down += f.down;
        tp += prove;
        tv += verify;
        ta += audit;
    }
    println!(
        "{:<32} {:>9} {:>10} {:>10} {:>7.1}ms {:>7.1}ms {:>7.1}ms",
        "total (one proof per circuit)",
        ands,
        up,
        down,
        tp.as_secs_f64() * 1e3,
        tv.as_secs_f64() * 1e3,
        ta.as_secs_f64() * 1e3
    );
    println!(
        "(each proof here is its own session with its own hello, seal and Delta reveal; \
         one session proving all circuits pays those once: {} B of reveal, 64 B of seal)",
        consistency::DELTA_REVEAL_LEN
    );
}
