//! Cost of the proxy-mode statement on the field's reference workload:
//! 1 KB request, 2 KB response, all disclosed but one byte per direction (so
//! the ZK path runs), per cipher suite and TLS version.
//!
//! `cargo run --release -p webproof-tlsproof --features testing --example statement_bench`
//!
//! The COT source is the trusted dealer (`cot::ideal`): this isolates the
//! statement (circuits + QuickSilver); `webproof bench zk` measures the COT
//! generator. Prover and verifier run on two threads over an in-memory pipe.

use futures::executor::block_on;
use rand::SeedableRng;
use std::time::Instant;
use webproof_core::cot::ideal;
use webproof_core::{memory_duplex, Channel};
use webproof_tlsproof::testing::{tls12_session, tls13_session};
use webproof_tlsproof::{run, Aead, Disclosure, Statement, Witness};
use webproof_zk::{Config, Prover, Verifier};

fn all_but_one(records: &[webproof_tlsproof::Record]) -> Disclosure {
    let mut ranges = Vec::new();
    for (i, r) in records.iter().enumerate() {
        let n = r.ciphertext.len();
        if i == 0 && n > 1 {
            ranges.push((i, 0..n / 2));
            ranges.push((i, n / 2 + 1..n));
        } else {
            ranges.push((i, 0..n));
        }
    }
    Disclosure::Ranges(ranges)
}

fn measure(name: &str, stmt: &Statement, witness: &Witness) {
    let mut times = Vec::new();
    let mut last = (0u64, 0u64, 0u64);
    for _ in 0..5 {
        let (a, b) = memory_duplex();
        let (cs, cr) = ideal::pair(1);
        let cfg = Config::default();
        let (stmt_p, stmt_v) = (stmt.clone(), stmt.clone());
        let w = witness.clone();
        let start = Instant::now();
        let prover = std::thread::spawn(move || {
            block_on(async {
                let mut p = Prover::new(cr, Channel::new(a), cfg).await.unwrap();
                run(&mut p, &stmt_p, Some(&w)).await.unwrap();
                let s = p.channel_stats();
                (p.stats().and_gates, s.sent(), s.received())
            })
        });
        let verifier = std::thread::spawn(move || {
            block_on(async {
                let mut rng = rand::rngs::StdRng::seed_from_u64(3);
                let mut v = Verifier::new(cs, Channel::new(b), cfg, &mut rng)
                    .await
                    .unwrap();
                run(&mut v, &stmt_v, None).await.unwrap();
            })
        });
        last = prover.join().unwrap();
        verifier.join().unwrap();
        times.push(start.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let (ands, up, down) = last;
    println!(
        "{name:<28} {:>9} {:>10.1} {:>10.1} {:>10.2} {:>10.0} {:>10.0}",
        ands,
        times[times.len() / 2],
        ands as f64 / times[times.len() / 2] / 1e3,
        up as f64 * 8.0 / ands as f64,
        up as f64 / 1024.0,
        down as f64 / 1024.0
    );
}

fn main() {
    let request = vec![b'a'; 1024];
    let response = vec![b'b'; 2048];
    println!(
        "{:<28} {:>9} {:>10} {:>10} {:>10} {:>10} {:>10}",
        "statement (1 KB / 2 KB)", "AND", "median ms", "M AND/s", "bits/AND", "up KiB", "down KiB"
    );
    for (label, aead, tls13) in [
        ("TLS 1.3 AES-128-GCM", Aead::Aes128Gcm, true),
        ("TLS 1.3 CHACHA20-POLY1305", Aead::ChaCha20Poly1305, true),
        ("TLS 1.3 AES-256-GCM", Aead::Aes256Gcm, true),
        ("TLS 1.2 AES-128-GCM", Aead::Aes128Gcm, false),
    ] {
        let mut s = if tls13 {
            tls13_session(aead, 9, &[&request], &[&response])
        } else {
            tls12_session(aead, 9, &[&request], &[&response])
        };
        s.statement.sent.disclosure = all_but_one(&s.statement.sent.records);
        s.statement.recv.disclosure = all_but_one(&s.statement.recv.records);
        measure(label, &s.statement, &s.witness);
    }
}
