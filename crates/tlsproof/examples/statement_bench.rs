//! Cost of the proxy-mode statement on the field's reference workload:
//! 1 KB request, 2 KB response, all disclosed but one byte per direction (so
//! the ZK path runs), per cipher suite and TLS version.
//!
//! `cargo run --release -p webproof-tlsproof --features testing --example statement_bench`
//!
//! Rows marked `silent` run the production stack (base OT, SoftSpokenOT,
//! Ferret, QuickSilver) with its setup (preprocessing) timed apart; rows
//! marked `ideal` use a trusted dealer for COTs to isolate the statement.
//! Prover and verifier run on two threads over an in-memory pipe; figures are
//! medians of 5 runs; bytes are the prover's, sent (up) and received (down).

use futures::executor::block_on;
use rand::SeedableRng;
use std::time::Instant;
use webproof_core::cot::ideal;
use webproof_core::{memory_duplex, Channel};
use webproof_tlsproof::testing::{tls12_session, tls13_session};
use webproof_tlsproof::{
    run, Aead, Disclosure, ProverPreprocessed, SessionConfig, Statement, VerifierPreprocessed,
    Witness,
};
use webproof_zk::{Config, Prover, Verifier};

fn all_but_one(records: &[webproof_tlsproof::SealedRecord]) -> Disclosure {
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

struct Run {
    setup_ms: f64,
    prove_ms: f64,
    and_gates: u64,
    setup_up: u64,
    setup_down: u64,
    up: u64,
    down: u64,
}

fn once(stmt: &Statement, witness: &Witness, silent: bool) -> Run {
    let (a, b) = memory_duplex();
    let (stmt_p, stmt_v, w) = (stmt.clone(), stmt.clone(), witness.clone());
    let start = Instant::now();
    let prover = std::thread::spawn(move || {
        block_on(async {
            let mut rng = rand::rngs::StdRng::seed_from_u64(1);
            if silent {
                let mut ch = Channel::new(a);
                let pre = ProverPreprocessed::setup(&mut ch, session_config(), &mut rng)
                    .await
                    .unwrap();
                let setup_ms = start.elapsed().as_secs_f64() * 1e3;
                let st = ch.stats();
                let (su, sd) = (st.sent(), st.received());
                let (_, ch) = pre.prove(ch, &stmt_p, &w, &[0; 32]).await.unwrap();
                let st = ch.stats();
                (setup_ms, 0, su, sd, st.sent(), st.received())
            } else {
                let (_, cr) = ideal::pair(1);
                let mut p = Prover::new(cr, Channel::new(a), Config::default())
                    .await
                    .unwrap();
                run(&mut p, &stmt_p, Some(&w)).await.unwrap();
                let st = p.channel_stats();
                (0.0, p.stats().and_gates, 0, 0, st.sent(), st.received())
            }
        })
    });
    let verifier = std::thread::spawn(move || {
        block_on(async {
            let mut rng = rand::rngs::StdRng::seed_from_u64(3);
            if silent {
                let mut ch = Channel::new(b);
                let pre = VerifierPreprocessed::setup(&mut ch, session_config(), &mut rng)
                    .await
                    .unwrap();
                pre.verify(ch, &stmt_v, &[0; 32], &mut rng).await.unwrap();
            } else {
                let (cs, _) = ideal::pair(1);
                let mut v = Verifier::new(cs, Channel::new(b), Config::default(), &mut rng)
                    .await
                    .unwrap();
                run(&mut v, &stmt_v, None).await.unwrap();
            }
        })
    });
    let (setup_ms, and_gates, setup_up, setup_down, up, down) = prover.join().unwrap();
    verifier.join().unwrap();
    let total = start.elapsed().as_secs_f64() * 1e3;
    Run {
        setup_ms,
        prove_ms: total - setup_ms,
        and_gates,
        setup_up,
        setup_down,
        up: up - setup_up,
        down: down - setup_down,
    }
}

/// `WEBPROOF_FERRET=compact|balanced|throughput` picks the silent-OT parameters.
fn session_config() -> SessionConfig {
    let mut c = SessionConfig::default();
    c.ferret = match std::env::var("WEBPROOF_FERRET").as_deref() {
        Ok("compact") => webproof_ferret::FerretConfig::compact(),
        Ok("balanced") => webproof_ferret::FerretConfig::balanced(),
        Ok("throughput") => webproof_ferret::FerretConfig::throughput(),
        _ => c.ferret,
    };
    c
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() {
    // `WEBPROOF_RESPONSE=BYTES` (default 2048) sizes the response, cut
    // into 16 KiB records; `WEBPROOF_ROWS=ideal|silent` keeps one kind of row.
    let request = vec![b'a'; 1024];
    let response_len: usize = std::env::var("WEBPROOF_RESPONSE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2048);
    let response = vec![b'b'; response_len];
    let response_records: Vec<&[u8]> = response.chunks(16384).collect();
    let rows = std::env::var("WEBPROOF_ROWS").unwrap_or_default();
    println!(
        "{:<27} {:>6} {:>9} {:>9} {:>9} {:>8} {:>8} {:>9} {:>9}",
        "statement (1 KB request)",
        "COT",
        "AND",
        "setup ms",
        "prove ms",
        "setup up",
        "setup dn",
        "prove up",
        "prove dn"
    );
    let mut and_counts = std::collections::HashMap::new();
    for silent in [false, true] {
        if (rows == "ideal" && silent) || (rows == "silent" && !silent) {
            continue;
        }
        for (label, aead, tls13) in [
            ("TLS 1.3 AES-128-GCM", Aead::Aes128Gcm, true),
            ("TLS 1.3 CHACHA20-POLY1305", Aead::ChaCha20Poly1305, true),
            ("TLS 1.3 AES-256-GCM", Aead::Aes256Gcm, true),
            ("TLS 1.2 AES-128-GCM", Aead::Aes128Gcm, false),
        ] {
            let mut s = if tls13 {
                tls13_session(aead, 9, &[&request], &response_records)
            } else {
                tls12_session(aead, 9, &[&request], &response_records)
            };
            s.statement.sent.disclosure = all_but_one(&s.statement.sent.records);
            s.statement.recv.disclosure = all_but_one(&s.statement.recv.records);
            let runs: Vec<Run> = (0..5)
                .map(|_| once(&s.statement, &s.witness, silent))
                .collect();
            let ands = if silent {
                *and_counts.get(label).unwrap_or(&0)
            } else {
                runs[0].and_gates
            };
            and_counts.insert(label, ands);
            let kib = |x: u64| format!("{:.0} KiB", x as f64 / 1024.0);
            println!(
                "{:<27} {:>6} {:>9} {:>9.1} {:>9.1} {:>8} {:>8} {:>9} {:>9}",
                label,
                if silent { "silent" } else { "ideal" },
                ands,
                median(runs.iter().map(|r| r.setup_ms).collect()),
                median(runs.iter().map(|r| r.prove_ms).collect()),
                kib(runs[0].setup_up),
                kib(runs[0].setup_down),
                kib(runs[0].up),
                kib(runs[0].down),
            );
        }
    }
}
