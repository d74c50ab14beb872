//! The adapter contract's verdict handling, end to end: toy adapters
//! (`fixtures/adapters/`, a bash prover and a Python verifier) run as real
//! processes through the real harness path over emulated links. Needs root
//! (namespaces), curl and python3; skipped otherwise.

use std::path::{Path, PathBuf};
use std::time::Duration;
use webproof_bench::metrics::Format;
use webproof_bench::runner::{run, Executables, RunOptions};
use webproof_bench::topology::Backend;
use webproof_bench_report::metrics::{read_csv, read_refused, refused_path};

/// Runs share the host's namespace list, so they take turns.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/adapters")
}

/// The real interpreter (not a version manager's shim), or None.
fn python() -> Option<String> {
    let out = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .ok()?;
    let p = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !p.is_empty()).then_some(p)
}

/// Why this host cannot run these tests, if it cannot.
fn unavailable() -> Option<&'static str> {
    if !webproof_bench::netns::is_root() {
        return Some("needs root (namespaces, TUN)");
    }
    if std::process::Command::new("curl")
        .arg("--version")
        .output()
        .is_err()
    {
        return Some("needs curl");
    }
    if python().is_none() {
        return Some("needs python3");
    }
    None
}

fn options(cfg: PathBuf, out: PathBuf) -> RunOptions {
    RunOptions {
        config: cfg,
        output: out,
        format: Format::Tlsn,
        samples: None,
        warmup: None,
        backend: Some(Backend::Userspace),
        filter: None,
        skip_unavailable: false,
        target: None,
        // These tests are about verdicts, not link accuracy: a host busy
        // with parallel builds must not fail them at the link check.
        tolerance: 0.5,
        probe_time: Duration::from_millis(800),
        progress: false,
        exe: Executables {
            worker: PathBuf::from(env!("CARGO_BIN_EXE_webproof-bench-worker")),
            worker_prefix: vec![],
            webproof: None,
            web: None,
        },
    }
}

/// A config with one toy adapter per verifier mode and one bench each.
fn config(dir: &Path, benches: &[(&str, &str, &str)]) -> PathBuf {
    config_with_prover_args(dir, benches, "")
}

fn config_with_prover_args(
    dir: &Path,
    benches: &[(&str, &str, &str)],
    prover_args: &str,
) -> PathBuf {
    let py = python().expect("python3");
    let f = fixtures();
    let mut text = String::from(
        "[[group]]\nname = \"toy\"\nprotocol_latency = 10\napp_latency = 10\nbandwidth = 50\n\
         upload-size = 1024\ndownload-size = 2048\nsamples = 2\nwarmup = 0\n\n",
    );
    for (name, args, extra) in benches {
        let args: Vec<String> = args.split(' ').map(|a| format!("{a:?}")).collect();
        text.push_str(&format!(
            "[adapter.{name}]\nprover = [\"/bin/bash\", {:?}{prover_args}]\n\
             verifier = [{py:?}, {:?}, {}]\n{extra}\n\n\
             [[bench]]\ngroup = \"toy\"\nname = \"{name}\"\nadapter = \"{name}\"\n\n",
            f.join("toy_prover.sh").display().to_string(),
            f.join("toy_verifier.py").display().to_string(),
            args.join(", "),
        ));
    }
    let p = dir.join("bench.toml");
    std::fs::write(&p, text).unwrap();
    p
}

fn no_leftovers() {
    // Only this process's own: a benchmark may be running beside the tests.
    let left = webproof_bench::netns::leftovers_of_this_process().unwrap();
    assert!(left.is_empty(), "leftovers: {left:?}");
}

#[test]
fn rejected_and_missing_verdicts_are_refused() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(why) = unavailable() {
        eprintln!("SKIPPED: rejected_and_missing_verdicts_are_refused {why}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("alternate.count");
    let cfg = config(
        dir.path(),
        &[
            ("rejects", "reject", ""),
            ("silent", "silent", "verdict_timeout = 1"),
            (
                "alternate",
                &format!("alternate {}", state.display()),
                "verdict = \"exit\"",
            ),
        ],
    );
    let out = dir.path().join("metrics.csv");
    let mut opts = options(cfg, out.clone());
    opts.samples = Some(4);
    let err = run(&opts).expect_err("a bench whose every sample is refused must fail the run");
    let msg = format!("{err:#}");
    eprintln!("{msg}");
    assert!(msg.contains("every sample of"), "{msg}");
    assert!(
        msg.contains("toy/rejects") && msg.contains("toy/silent"),
        "{msg}"
    );
    assert!(!msg.contains("toy/alternate"), "{msg}");

    // Only the accepted sessions are results.
    let rows = read_csv(&out).unwrap();
    assert_eq!(rows.len(), 2, "{rows:?}");
    for r in &rows {
        assert_eq!(r.name, "alternate");
        assert_eq!(r.verdict, "accepted");
        assert_eq!(r.verdict_by, "exit");
        assert_eq!(r.topology, "mpc");
        assert!(!r.proxy);
    }
    let refused = read_refused(&out).unwrap();
    assert!(refused_path(&out).exists());
    let count = |name: &str, verdict: &str| {
        refused
            .iter()
            .filter(|r| r.name == name && r.verdict == verdict)
            .count()
    };
    assert_eq!(count("rejects", "rejected"), 4, "{refused:?}");
    assert_eq!(count("silent", "missing"), 4, "{refused:?}");
    assert_eq!(count("alternate", "rejected"), 2, "{refused:?}");
    assert_eq!(refused.len(), 10);
    let r = refused.iter().find(|r| r.name == "rejects").unwrap();
    assert_eq!(r.reason, "toy: proof rejected");
    assert_eq!(r.prover_exit_code, 0);
    let r = refused.iter().find(|r| r.name == "alternate").unwrap();
    assert!(r.reason.contains("exited with code 1"), "{}", r.reason);
    assert!(r.reason.contains("rejecting this one"), "{}", r.reason);
    no_leftovers();
}

#[test]
fn time_total_ends_at_a_verdict_that_comes_after_the_prover() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(why) = unavailable() {
        eprintln!("SKIPPED: time_total_ends_at_a_verdict_that_comes_after_the_prover {why}");
        return;
    }
    const DELAY_MS: f64 = 1000.0;
    const STARTUP_MS: f64 = 300.0;
    let dir = tempfile::tempdir().unwrap();
    // The prover also marks the end of its start-up, which time_total skips.
    let cfg = config_with_prover_args(
        dir.path(),
        &[("late", &format!("late {}", DELAY_MS / 1e3), "")],
        &format!(", \"startup\", \"{}\"", STARTUP_MS / 1e3),
    );
    let out = dir.path().join("metrics.csv");
    let summary = run(&options(cfg, out.clone())).expect("bench run");
    assert!(summary.refused.is_empty(), "{:?}", summary.refused);
    let rows = read_csv(&out).unwrap();
    assert_eq!(rows.len(), 2);
    for r in &rows {
        eprintln!("{r:?}");
        assert_eq!(r.verdict, "accepted");
        assert_eq!(r.verdict_by, "event");
        // The verifier decides DELAY after the prover hung up: the sample
        // must include that wait, and the prover's exit comes before it.
        assert!(r.time_total >= DELAY_MS, "{} < {DELAY_MS}", r.time_total);
        assert!(r.time_total + r.time_startup > r.prover_wall_ms, "{r:?}");
        assert!(r.time_startup >= STARTUP_MS, "{r:?}");
        assert!(r.verdict_after_prover_ms > 0.0, "{r:?}");
        assert!(r.time_finalize > 0.0, "{r:?}");
        // Pretty-printed stats were read.
        assert!(r.phases_reported);
        assert_eq!(r.uploaded_online, 6);
        assert_eq!(r.bytes_source, "reported");
        assert!(
            r.verifier_peak_rss_bytes > 0 && r.verifier_cpu_ms > 0.0,
            "{r:?}"
        );
        // Labelled from the server's side: the adapter reported no TLS.
        assert_eq!(r.server_tls, "1.3");
        assert_eq!(r.tls, "1.3");
        assert!(r.suite.starts_with("TLS13_"), "{}", r.suite);
        // curl followed the request template exactly.
        assert_eq!(r.server_request_bytes, 1024);
        assert!(r.server_response_bytes > 2048);
    }
    no_leftovers();
}
