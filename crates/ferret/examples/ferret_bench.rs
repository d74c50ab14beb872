//! Throughput of the silent COT extension: sender and receiver on two
//! threads over an in-memory duplex.
//!
//! ```text
//! cargo run --release -p webproof-ferret --example ferret_bench -- \
//!     [--config throughput|balanced|compact|k17] [--cots N] [--batch N] \
//!     [--bootstrap softspoken|ideal] [--first-trees N]
//! ```
//!
//! `--first-trees N` cuts the first main iteration to its first N noise
//! blocks, as `webproof_tlsproof::SessionConfig::sized` does for a session.
//!
//! Prints setup time and bytes (bootstrap + setup iteration), steady-state
//! M COT/s (wall clock of the slower party), bits per COT each way, and the
//! peak resident memory of the process (both parties; VmHWM).

use futures::executor::block_on;
use rand::SeedableRng;
use rand_chacha::ChaCha12Rng;
use std::time::Instant;
use webproof_core::cot::ideal::pair;
use webproof_core::cot::{RandomCotReceiver, RandomCotSender};
use webproof_core::{memory_duplex, Block, Channel, Io};
use webproof_ferret::{
    FerretConfig, FerretReceiver, FerretSender, SilentCotReceiver, SilentCotSender,
};

struct Args {
    config: FerretConfig,
    name: String,
    cots: usize,
    batch: usize,
    ideal: bool,
}

fn parse() -> Args {
    let mut a = Args {
        config: FerretConfig::throughput(),
        name: "throughput".into(),
        cots: 50_000_000,
        batch: 1 << 20,
        ideal: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let val = it.next().unwrap_or_else(|| panic!("{flag} needs a value"));
        match flag.as_str() {
            "--config" => {
                a.config = match val.as_str() {
                    "throughput" => FerretConfig::throughput(),
                    "balanced" => FerretConfig::balanced(),
                    "compact" => FerretConfig::compact(),
                    "k17" => FerretConfig {
                        main: webproof_ferret::params::K17_MAIN,
                        setup: Some(webproof_ferret::params::S20_SETUP),
                        first_main_trees: None,
                    },
                    other => panic!("unknown config {other}"),
                };
                a.name = val;
            }
            "--first-trees" => {
                a.config.first_main_trees = Some(val.parse().expect("--first-trees N"))
            }
            "--cots" => a.cots = val.parse().expect("--cots N"),
            "--batch" => a.batch = val.parse().expect("--batch N"),
            "--bootstrap" => {
                a.ideal = match val.as_str() {
                    "ideal" => true,
                    "softspoken" => false,
                    other => panic!("unknown bootstrap {other}"),
                }
            }
            other => panic!("unknown flag {other}"),
        }
    }
    a
}

/// CPU time of the calling thread in ms (from the scheduler's accounting),
/// so that a loaded machine does not distort the per-party figures.
fn thread_cpu_ms() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(f64::NAN, |ns| ns / 1e6)
}

fn vm_hwm_kib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

struct Report {
    setup_ms: f64,
    setup_cpu_ms: f64,
    setup_sent: u64,
    run_ms: f64,
    run_cpu_ms: f64,
    run_sent: u64,
    checksum: u128,
}

/// Draw `cots` keys in batches; returns (wall ms, thread CPU ms, checksum).
async fn drain_sender<S: RandomCotSender, T: Io>(
    s: &mut S,
    ch: &mut Channel<T>,
    cots: usize,
    batch: usize,
) -> (f64, f64, u128) {
    let t1 = Instant::now();
    let c1 = thread_cpu_ms();
    let mut out = Vec::with_capacity(batch);
    let (mut acc, mut left) = (0u128, cots);
    while left > 0 {
        let n = left.min(batch);
        out.clear();
        s.extend(ch, n, &mut out).await.expect("extend");
        acc ^= out.iter().fold(0, |a, b: &Block| a ^ b.0);
        left -= n;
    }
    (t1.elapsed().as_secs_f64() * 1e3, thread_cpu_ms() - c1, acc)
}

/// Draw `cots` MACs in batches; returns (wall ms, thread CPU ms, checksum).
async fn drain_receiver<R: RandomCotReceiver, T: Io>(
    r: &mut R,
    ch: &mut Channel<T>,
    cots: usize,
    batch: usize,
) -> (f64, f64, u128) {
    let t1 = Instant::now();
    let c1 = thread_cpu_ms();
    let mut out = Vec::with_capacity(batch);
    let (mut acc, mut left) = (0u128, cots);
    while left > 0 {
        let n = left.min(batch);
        out.clear();
        r.extend(ch, n, &mut out).await.expect("extend");
        acc ^= out.iter().fold(0, |a, b: &Block| a ^ b.0);
        left -= n;
    }
    (t1.elapsed().as_secs_f64() * 1e3, thread_cpu_ms() - c1, acc)
}

fn main() {
    let args = parse();
    let (io_s, io_r) = memory_duplex();
    let (bs, br) = pair(42);
    let (cfg, ideal) = (args.config, args.ideal);
    let (cots, batch) = (args.cots, args.batch);

    let sender = std::thread::spawn(move || {
        let mut rng = ChaCha12Rng::seed_from_u64(1);
        let mut ch = Channel::new(io_s);
        block_on(async {
            let t0 = Instant::now();
            let c0 = thread_cpu_ms();
            let (setup_ms, setup_sent, (run_ms, run_cpu_ms, checksum), setup_cpu_ms) = if ideal {
                let mut s = FerretSender::new(cfg, bs, &mut rng).expect("config");
                s.setup(&mut ch).await.expect("setup");
                let (ms, sent) = (t0.elapsed().as_secs_f64() * 1e3, ch.stats().sent());
                let setup_cpu_ms = thread_cpu_ms() - c0;
                let r = drain_sender(&mut s, &mut ch, cots, batch).await;
                (ms, sent, r, setup_cpu_ms)
            } else {
                let mut s = SilentCotSender::connect(cfg, &mut ch, &mut rng)
                    .await
                    .expect("setup");
                let (ms, sent) = (t0.elapsed().as_secs_f64() * 1e3, ch.stats().sent());
                let setup_cpu_ms = thread_cpu_ms() - c0;
                let r = drain_sender(&mut s, &mut ch, cots, batch).await;
                (ms, sent, r, setup_cpu_ms)
            };
            Report {
                setup_ms,
                setup_cpu_ms,
                setup_sent,
                run_ms,
                run_cpu_ms,
                run_sent: ch.stats().sent() - setup_sent,
                checksum,
            }
        })
    });
    let receiver = std::thread::spawn(move || {
        let mut rng = ChaCha12Rng::seed_from_u64(2);
        let mut ch = Channel::new(io_r);
        block_on(async {
            let t0 = Instant::now();
            let c0 = thread_cpu_ms();
            let (setup_ms, setup_sent, (run_ms, run_cpu_ms, checksum), setup_cpu_ms) = if ideal {
                let mut r = FerretReceiver::new(cfg, br, &mut rng).expect("config");
                r.setup(&mut ch).await.expect("setup");
                let (ms, sent) = (t0.elapsed().as_secs_f64() * 1e3, ch.stats().sent());
                let setup_cpu_ms = thread_cpu_ms() - c0;
                let res = drain_receiver(&mut r, &mut ch, cots, batch).await;
                (ms, sent, res, setup_cpu_ms)
            } else {
                let mut r = SilentCotReceiver::connect(cfg, &mut ch, &mut rng)
                    .await
                    .expect("setup");
                let (ms, sent) = (t0.elapsed().as_secs_f64() * 1e3, ch.stats().sent());
                let setup_cpu_ms = thread_cpu_ms() - c0;
                let res = drain_receiver(&mut r, &mut ch, cots, batch).await;
                (ms, sent, res, setup_cpu_ms)
            };
            Report {
                setup_ms,
                setup_cpu_ms,
                setup_sent,
                run_ms,
                run_cpu_ms,
                run_sent: ch.stats().sent() - setup_sent,
                checksum,
            }
        })
    });
    let s = sender.join().expect("sender thread");
    let r = receiver.join().expect("receiver thread");
    // Keep the outputs observable so the work is not optimised away.
    let _ = (s.checksum, r.checksum);

    let run_ms = s.run_ms.max(r.run_ms);
    println!(
        "ferret config={} bootstrap={} main={:?}",
        args.name,
        if ideal { "ideal" } else { "softspoken" },
        cfg.main
    );
    println!(
        "setup (bootstrap + setup iteration): {:.1} ms, sender->receiver {} B, receiver->sender {} B, total {} B",
        s.setup_ms.max(r.setup_ms),
        s.setup_sent,
        r.setup_sent,
        s.setup_sent + r.setup_sent
    );
    println!(
        "setup CPU time: sender {:.1} ms, receiver {:.1} ms",
        s.setup_cpu_ms, r.setup_cpu_ms
    );
    println!(
        "steady state: {} COTs in {:.1} ms = {:.2} M COT/s (sender {:.1} ms, receiver {:.1} ms)",
        cots,
        run_ms,
        cots as f64 / run_ms / 1e3,
        s.run_ms,
        r.run_ms
    );
    println!(
        "traffic: sender->receiver {:.4} bits/COT ({} B), receiver->sender {:.6} bits/COT ({} B)",
        s.run_sent as f64 * 8.0 / cots as f64,
        s.run_sent,
        r.run_sent as f64 * 8.0 / cots as f64,
        r.run_sent
    );
    println!(
        "per-party CPU time: sender {:.1} ms = {:.2} M COT/s per core, receiver {:.1} ms = {:.2} M COT/s per core",
        s.run_cpu_ms,
        cots as f64 / s.run_cpu_ms / 1e3,
        r.run_cpu_ms,
        cots as f64 / r.run_cpu_ms / 1e3
    );
    if let Some(kib) = vm_hwm_kib() {
        println!(
            "peak RSS of the process (both parties, VmHWM): {:.1} MiB",
            kib as f64 / 1024.0
        );
    }
}
