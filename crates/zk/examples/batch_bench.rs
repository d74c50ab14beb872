//! Time of proving AES-128 keystream blocks (inversion S-boxes, round keys
//! shared) with the blocks evaluated one at a time or in batches, ideal
//! COTs, prover and verifier on two threads. Batch sizes are interleaved
//! round by round so that machine noise hits all of them alike.
//!
//! `cargo run --release -p webproof-zk --example batch_bench [BLOCKS]`

use futures::executor::block_on;
use rand::SeedableRng;
use std::time::Instant;
use webproof_circuits::aes::{encrypt_block_with, key_schedule_with, SboxKind};
use webproof_circuits::{Builder, Circuit};
use webproof_core::cot::ideal;
use webproof_core::{memory_duplex, Channel};
use webproof_zk::{Config, Prover, Verifier};

fn circuits() -> (Circuit, Circuit) {
    let mut b = Builder::new();
    let key = b.input_bytes(16);
    let rks = key_schedule_with(&mut b, &key, SboxKind::Inversion);
    b.output(&rks.concat());
    let schedule = b.finish();
    let mut b = Builder::new();
    let rk = b.input(128 * 11);
    let block = b.input(128);
    let rks: Vec<Vec<_>> = rk.chunks(128).map(|c| c.to_vec()).collect();
    let out = encrypt_block_with(&mut b, &rks, &block, SboxKind::Inversion);
    b.output(&out);
    (schedule, b.finish())
}

/// CPU time of the calling thread in ms (Linux schedstat; 0 elsewhere).
fn thread_cpu_ms() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(0.0, |ns| ns / 1e6)
}

/// Wall time and the two threads' CPU time, in ms.
fn once(schedule: &Circuit, block: &Circuit, blocks: usize, batch: usize) -> (f64, f64) {
    let (a, b) = memory_duplex();
    let start = Instant::now();
    std::thread::scope(|s| {
        let p = s.spawn(|| {
            let cpu = thread_cpu_ms();
            block_on(async {
                let (_, cr) = ideal::pair(1);
                let mut p = Prover::new(cr, Channel::new(a), Config::default())
                    .await
                    .unwrap();
                let k = p.commit_bytes(&[7u8; 16]).await.unwrap();
                let rk = p.eval(schedule, &[&k]).await.unwrap().remove(0);
                let ctr: Vec<_> = (0..128 * batch).map(|i| p.constant(i % 3 == 0)).collect();
                for _ in 0..blocks / batch {
                    let ks = p.eval_batch(block, batch, &[&rk, &ctr]).await.unwrap();
                    p.open(&ks[0]).await.unwrap();
                }
                p.finish().await.unwrap();
            });
            thread_cpu_ms() - cpu
        });
        let v = s.spawn(|| {
            let cpu = thread_cpu_ms();
            block_on(async {
                let mut rng = rand::rngs::StdRng::seed_from_u64(3);
                let (cs, _) = ideal::pair(1);
                let mut v = Verifier::new(cs, Channel::new(b), Config::default(), &mut rng)
                    .await
                    .unwrap();
                let k = v.commit_bytes(16).await.unwrap();
                let rk = v.eval(schedule, &[&k]).await.unwrap().remove(0);
                let ctr: Vec<_> = (0..128 * batch).map(|i| v.constant(i % 3 == 0)).collect();
                for _ in 0..blocks / batch {
                    let ks = v.eval_batch(block, batch, &[&rk, &ctr]).await.unwrap();
                    v.open(&ks[0]).await.unwrap();
                }
                v.finish().await.unwrap();
            });
            thread_cpu_ms() - cpu
        });
        let cpu = p.join().unwrap() + v.join().unwrap();
        (start.elapsed().as_secs_f64() * 1e3, cpu)
    })
}

fn main() {
    let blocks: usize = std::env::args()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .unwrap_or(3264);
    let (schedule, block) = circuits();
    let batches: Vec<usize> = std::env::var("BATCHES")
        .ok()
        .map(|v| v.split(",").map(|x| x.parse().unwrap()).collect())
        .unwrap_or(vec![1, 4, 8, 16, 32]);
    let mut times = vec![Vec::new(); batches.len()];
    let mut cpus = vec![Vec::new(); batches.len()];
    for _ in 0..5 {
        for (i, &n) in batches.iter().enumerate() {
            let (wall, cpu) = once(&schedule, &block, blocks / n * n, n);
            times[i].push(wall);
            cpus[i].push(cpu);
        }
    }
    println!("AES-128 keystream blocks: {blocks} (160 byte inversions each), ideal COTs");
    for ((n, mut t), mut c) in batches.iter().zip(times).zip(cpus) {
        t.sort_by(|a, b| a.partial_cmp(b).unwrap());
        c.sort_by(|a, b| a.partial_cmp(b).unwrap());
        println!(
            "batch {n:>2}: wall median {:7.1} ms (min {:7.1}), CPU of both parties median {:7.1} ms",
            t[t.len() / 2],
            t[0],
            c[c.len() / 2]
        );
    }
}
