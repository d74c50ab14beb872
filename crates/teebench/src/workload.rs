//! The `bench dcap` workloads and their concurrency runner.
//!
//! A workload is one operation repeated: verify a quote offline, generate a
//! TDX quote through configfs-tsm, or a file-system baseline (create, write,
//! fsync, read back, delete). For each concurrency level N the runner starts
//! N OS threads (the operations are CPU- or kernel-bound, so threads, not
//! async tasks), releases them together, and records every operation's
//! latency; throughput is successful operations over the level's wall time.

use crate::dcap::{DcapError, DcapVerifier};
use crate::stats::LatencySummary;
use crate::tdx::{TdxError, TsmReport};
use std::path::PathBuf;
use std::sync::Barrier;
use std::time::Instant;

/// One repeatable operation, shared by all worker threads.
pub trait Operation: Sync {
    /// Run once; `worker` and `iter` make per-call names unique.
    fn run_once(&self, worker: usize, iter: usize) -> Result<(), String>;
}

/// Offline verification of one quote against fixed collateral.
pub struct VerifyOp {
    pub verifier: DcapVerifier,
    pub quote: Vec<u8>,
    pub now: u64,
    pub expected_report_data: Option<[u8; 64]>,
}

impl VerifyOp {
    /// Run once and return the full result (used for the pre-flight check).
    pub fn check(&self) -> Result<crate::dcap::VerifiedQuote, DcapError> {
        self.verifier
            .verify(&self.quote, self.now, self.expected_report_data.as_ref())
    }
}

impl Operation for VerifyOp {
    fn run_once(&self, _worker: usize, _iter: usize) -> Result<(), String> {
        self.check().map(|_| ()).map_err(|e| e.to_string())
    }
}

/// File-system baseline: create, write, fsync, read back and compare, delete.
pub struct FsOp {
    pub dir: PathBuf,
    pub bytes: usize,
}

impl FsOp {
    /// Use (and create) a private directory under `base`.
    pub fn new(base: PathBuf, bytes: usize) -> std::io::Result<Self> {
        let dir = base.join(format!("webproof-dcap-fs-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        Ok(Self { dir, bytes })
    }
}

impl Drop for FsOp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Operation for FsOp {
    fn run_once(&self, worker: usize, iter: usize) -> Result<(), String> {
        use std::io::{Read, Write};
        let path = self.dir.join(format!("w{worker}-i{iter}"));
        let data: Vec<u8> = (0..self.bytes)
            .map(|i| (i as u8) ^ (worker as u8) ^ (iter as u8))
            .collect();
        let run = || -> std::io::Result<bool> {
            let mut f = std::fs::File::create(&path)?;
            f.write_all(&data)?;
            f.sync_all()?;
            drop(f);
            let mut back = Vec::with_capacity(data.len());
            std::fs::File::open(&path)?.read_to_end(&mut back)?;
            std::fs::remove_file(&path)?;
            Ok(back == data)
        };
        match run() {
            Ok(true) => Ok(()),
            Ok(false) => Err(format!("{} read back different bytes", path.display())),
            Err(e) => Err(format!("{}: {e}", path.display())),
        }
    }
}

/// TDX quote generation through configfs-tsm with fixed report data.
pub struct TdxOp {
    pub tsm: TsmReport,
    pub report_data: [u8; 64],
}

impl TdxOp {
    pub fn new(report_data: [u8; 64]) -> Result<Self, TdxError> {
        Ok(Self {
            tsm: TsmReport::open_default()?,
            report_data,
        })
    }
}

impl Operation for TdxOp {
    fn run_once(&self, worker: usize, iter: usize) -> Result<(), String> {
        let name = format!("webproof-{}-{worker}-{iter}", std::process::id());
        self.tsm
            .generate(&name, &self.report_data)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
}

/// Result of one concurrency level.
#[derive(Debug, Clone, serde::Serialize)]
pub struct LevelResult {
    pub concurrency: usize,
    /// Operations attempted.
    pub ops: usize,
    pub failures: usize,
    /// Successful operations per second of wall time.
    pub throughput_per_s: f64,
    pub wall_s: f64,
    /// Latency of successful operations; `None` if all failed.
    pub latency: Option<LatencySummary>,
    /// The first failure message, if any.
    pub first_error: Option<String>,
}

/// Run `op` with `concurrency` threads, `iters` operations each.
pub fn run_level(op: &dyn Operation, concurrency: usize, iters: usize) -> LevelResult {
    let barrier = Barrier::new(concurrency + 1);
    let (per_worker, wall) = std::thread::scope(|s| {
        let handles: Vec<_> = (0..concurrency)
            .map(|w| {
                let barrier = &barrier;
                s.spawn(move || {
                    let mut lat = Vec::with_capacity(iters);
                    let mut fails = 0usize;
                    let mut first_err = None;
                    barrier.wait();
                    for i in 0..iters {
                        let t = Instant::now();
                        match op.run_once(w, i) {
                            Ok(()) => lat.push(t.elapsed().as_secs_f64()),
                            Err(e) => {
                                fails += 1;
                                first_err.get_or_insert(e);
                            }
                        }
                    }
                    (lat, fails, first_err)
                })
            })
            .collect();
        barrier.wait();
        let start = Instant::now();
        let results: Vec<_> = handles
            .into_iter()
            .map(|h| h.join().expect("worker thread panicked"))
            .collect();
        (results, start.elapsed().as_secs_f64())
    });
    let mut lat = Vec::with_capacity(concurrency * iters);
    let mut failures = 0;
    let mut first_error = None;
    for (l, f, e) in per_worker {
        lat.extend(l);
        failures += f;
        if first_error.is_none() {
            first_error = e;
        }
    }
    LevelResult {
        concurrency,
        ops: concurrency * iters,
        failures,
        throughput_per_s: lat.len() as f64 / wall,
        wall_s: wall,
        latency: LatencySummary::from_secs(&lat),
        first_error,
    }
}

/// Header of the result table and CSV (the flashbots column set).
pub const COLUMNS: [&str; 9] = [
    "concurrency",
    "ops",
    "failures",
    "throughput/s",
    "mean_ms",
    "p50_ms",
    "p95_ms",
    "p99_ms",
    "max_ms",
];

fn cells(r: &LevelResult) -> [String; 9] {
    let l = r.latency;
    let f = |x: Option<f64>| x.map_or("NaN".to_string(), |v| format!("{v:.3}"));
    [
        r.concurrency.to_string(),
        r.ops.to_string(),
        r.failures.to_string(),
        format!("{:.3}", r.throughput_per_s),
        f(l.map(|l| l.mean_ms)),
        f(l.map(|l| l.p50_ms)),
        f(l.map(|l| l.p95_ms)),
        f(l.map(|l| l.p99_ms)),
        f(l.map(|l| l.max_ms)),
    ]
}

/// Fixed-width text table.
pub fn table(results: &[LevelResult]) -> String {
    let mut out = String::new();
    let row = |cols: &[String]| -> String {
        let mut s: String = cols.iter().map(|c| format!("{c:<14} ")).collect();
        s.truncate(s.trim_end().len());
        s + "\n"
    };
    out += &row(&COLUMNS.map(String::from));
    for r in results {
        out += &row(&cells(r));
    }
    out
}

/// The same as CSV.
pub fn csv(results: &[LevelResult]) -> String {
    let mut out = COLUMNS.join(",") + "\n";
    for r in results {
        out += &(cells(r).join(",") + "\n");
    }
    out
}

/// Chart of throughput and p50/p99 latency against concurrency.
pub fn chart(title: &str, results: &[LevelResult]) -> String {
    use webproof_bench_report::plot::lines::{Chart, Series};
    let xs: Vec<f64> = results.iter().map(|r| r.concurrency as f64).collect();
    let lat = |f: fn(&LatencySummary) -> f64| -> Vec<f64> {
        results
            .iter()
            .map(|r| r.latency.as_ref().map_or(f64::NAN, f))
            .collect()
    };
    let top = Chart {
        title: format!("{title}: throughput"),
        x_label: "concurrency (threads)".into(),
        y_label: "operations / s".into(),
        x: xs.clone(),
        log2_x: true,
        series: vec![Series {
            name: "throughput/s".into(),
            y: results.iter().map(|r| r.throughput_per_s).collect(),
            err: None,
        }],
    };
    let bottom = Chart {
        title: format!("{title}: latency"),
        x_label: "concurrency (threads)".into(),
        y_label: "ms".into(),
        x: xs,
        log2_x: true,
        series: vec![
            Series {
                name: "p50_ms".into(),
                y: lat(|l| l.p50_ms),
                err: None,
            },
            Series {
                name: "p99_ms".into(),
                y: lat(|l| l.p99_ms),
                err: None,
            },
        ],
    };
    webproof_bench_report::plot::lines::stack(&[top, bottom])
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    struct Counting(AtomicUsize);
    impl Operation for Counting {
        fn run_once(&self, _w: usize, i: usize) -> Result<(), String> {
            self.0.fetch_add(1, Ordering::Relaxed);
            if i % 4 == 3 {
                Err(format!("planned failure {i}"))
            } else {
                Ok(())
            }
        }
    }

    #[test]
    fn runner_counts_ops_and_failures() {
        let op = Counting(AtomicUsize::new(0));
        let r = run_level(&op, 3, 8);
        assert_eq!(op.0.load(Ordering::Relaxed), 24);
        assert_eq!(r.ops, 24);
        assert_eq!(r.failures, 6);
        assert_eq!(r.first_error.as_deref(), Some("planned failure 3"));
        assert!(r.throughput_per_s > 0.0);
        let t = table(std::slice::from_ref(&r));
        assert!(t.starts_with("concurrency"));
        let c = csv(&[r]);
        assert_eq!(c.lines().count(), 2);
        assert_eq!(c.lines().nth(1).unwrap().split(',').count(), 9);
    }

    #[test]
    fn verify_workload_runs_on_sample() {
        let op = VerifyOp {
            verifier: DcapVerifier::sample(),
            quote: crate::dcap::SAMPLE_TDX_QUOTE.to_vec(),
            now: crate::dcap::SAMPLE_VERIFY_NOW,
            expected_report_data: None,
        };
        let r = run_level(&op, 2, 2);
        assert_eq!((r.ops, r.failures), (4, 0));
        let bad = VerifyOp { now: 1, ..op };
        let r = run_level(&bad, 1, 1);
        assert_eq!(r.failures, 1);
        assert!(r.latency.is_none());
        assert!(r.first_error.unwrap().contains("outside"));
    }

    #[test]
    fn fs_workload_round_trips() {
        let op = FsOp::new(std::env::temp_dir(), 4096).unwrap();
        let dir = op.dir.clone();
        let r = run_level(&op, 2, 3);
        assert_eq!((r.ops, r.failures), (6, 0));
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
        drop(op);
        assert!(!dir.exists());
    }
}
