//! End-to-end: a two-sample bench in plain mode and through the curl
//! adapter, over emulated links, with separate processes. Needs root.

use std::path::PathBuf;
use std::time::Duration;
use webproof_bench::metrics::Format;
use webproof_bench::runner::{links_path, run, Executables, RunOptions};
use webproof_bench::topology::Backend;
use webproof_bench_report::metrics::read_csv;

/// The runs share the host's namespace list (checked for leftovers), so
/// they take turns.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn plain_and_curl_two_samples() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !webproof_bench::netns::is_root() {
        eprintln!("SKIPPED: plain_and_curl_two_samples needs root (namespaces, TUN)");
        return;
    }
    let have_curl = std::process::Command::new("curl")
        .arg("--version")
        .output()
        .is_ok();
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("bench.toml");
    let mut text = String::from(
        r#"
[[group]]
name = "e2e"
protocol_latency = 20
app_latency = 10
bandwidth = 50
upload-size = 1024
download-size = 4096
samples = 2
warmup = 1

[[bench]]
group = "e2e"
name = "plain"
mode = "plain"
"#,
    );
    if have_curl {
        text.push_str(
            "\n[[bench]]\ngroup = \"e2e\"\nname = \"curl\"\nadapter = \"curl\"\nmode = \"plain\"\n",
        );
    } else {
        eprintln!("NOTE: curl not installed; the curl adapter part is skipped");
    }
    std::fs::write(&cfg, text).unwrap();
    let out = dir.path().join("metrics.csv");
    let opts = RunOptions {
        config: cfg,
        output: out.clone(),
        format: Format::Tlsn,
        samples: None,
        warmup: None,
        backend: Some(Backend::Userspace),
        filter: None,
        skip_unavailable: false,
        target: None,
        // The pipeline is under test, not the link (tests/link.rs checks
        // the emulator); a loaded CI host adds a millisecond to a 10 ms RTT.
        tolerance: 0.5,
        probe_time: Duration::from_millis(800),
        progress: false,
        exe: Executables {
            worker: PathBuf::from(env!("CARGO_BIN_EXE_webproof-bench-worker")),
            worker_prefix: vec![],
            webproof: None,
            web: None,
        },
    };
    let summary = run(&opts).expect("bench run");
    let rows = read_csv(&out).unwrap();
    assert_eq!(rows.len(), summary.samples.len());
    assert_eq!(rows.len(), if have_curl { 4 } else { 2 });
    for r in &rows {
        eprintln!("{r:?}");
        // A request needs at least TCP + TLS handshakes: >= 2 app RTTs.
        assert!(
            r.time_total >= 20.0,
            "{} ms is faster than the emulated network",
            r.time_total
        );
        assert!(r.time_total < 5_000.0);
        assert!(r.heap_max_bytes > 0);
        assert!(r.prover_cpu_ms > 0.0);
        // The response crossed the app link.
        assert!(
            r.app_link_from_server_bytes > 4096,
            "{}",
            r.app_link_from_server_bytes
        );
        assert!(r.app_link_to_server_bytes > 1024);
        assert_eq!(r.backend, "userspace");
        assert!((r.app_measured_rtt_ms - 10.0).abs() < 1.0);
        // No verifier: a no-proof baseline, labelled as such.
        assert_eq!((r.verdict.as_str(), r.topology.as_str()), ("none", "plain"));
        assert!(!r.proxy);
        // Both clients send the contract's request template exactly.
        assert_eq!(r.server_request_bytes, 1024, "{r:?}");
        assert!(r.tls == "1.2" || r.tls == "1.3", "{}", r.tls);
        assert_eq!(r.tls, r.server_tls);
    }
    let plain: Vec<_> = rows.iter().filter(|r| r.mode == "plain").collect();
    assert!(plain.iter().all(|r| r.phases_reported));
    // The client counted what it sent: the request padded to 1 KiB + TLS.
    assert!(plain[0].uploaded_total > 1024);
    assert!(plain[0].downloaded_total > 4096);
    assert!(links_path(&out).exists());
    // Only this process's own: a benchmark may be running beside the tests.
    let left = webproof_bench::netns::leftovers_of_this_process().unwrap();
    assert!(left.is_empty(), "leftovers: {left:?}");
}

/// The `webproof` binary next to this test's target dir, if the workspace
/// was built (as `cargo test --workspace` does).
fn webproof_bin() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("WEBPROOF_BIN") {
        return Some(PathBuf::from(p));
    }
    let exe = std::env::current_exe().ok()?;
    let p = exe.parent()?.parent()?.join("webproof");
    p.exists().then_some(p)
}

#[test]
fn proxy_mode_two_samples() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !webproof_bench::netns::is_root() {
        eprintln!("SKIPPED: proxy_mode_two_samples needs root (namespaces, TUN)");
        return;
    }
    let Some(bin) = webproof_bin() else {
        eprintln!("SKIPPED: proxy_mode_two_samples: no webproof binary built (set WEBPROOF_BIN)");
        return;
    };
    let has_prove = std::process::Command::new(&bin)
        .args(["prove", "--help"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !has_prove {
        eprintln!(
            "SKIPPED: proxy_mode_two_samples: {} has no `prove`",
            bin.display()
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("bench.toml");
    std::fs::write(
        &cfg,
        "[[bench]]\nname = \"proxy\"\nproxy = true\ntls = \"1.2\"\nprotocol_latency = 10\napp_latency = 10\nbandwidth = 50\nupload-size = 512\ndownload-size = 1024\nsamples = 2\nwarmup = 0\n",
    )
    .unwrap();
    let out = dir.path().join("metrics.csv");
    let opts = RunOptions {
        config: cfg,
        output: out.clone(),
        format: Format::Tlsn,
        samples: None,
        warmup: None,
        backend: Some(Backend::Userspace),
        filter: None,
        skip_unavailable: false,
        target: None,
        // The pipeline is under test, not the link (tests/link.rs checks
        // the emulator); a loaded CI host adds a millisecond to a 10 ms RTT.
        tolerance: 0.5,
        probe_time: Duration::from_millis(800),
        progress: false,
        exe: Executables {
            worker: PathBuf::from(env!("CARGO_BIN_EXE_webproof-bench-worker")),
            worker_prefix: vec![],
            webproof: Some(bin),
            web: None,
        },
    };
    run(&opts).expect("proxy bench run");
    let rows = read_csv(&out).unwrap();
    assert_eq!(rows.len(), 2);
    for r in &rows {
        eprintln!("{r:?}");
        assert!(r.proxy && r.phases_reported);
        assert_eq!(r.topology, "proxy");
        // `webproof serve --once` exits 0 only on a verified session.
        assert_eq!(
            (r.verdict.as_str(), r.verdict_by.as_str()),
            ("accepted", "exit")
        );
        assert!(r.time_total > 0.0 && r.time_total >= r.time_online);
        assert!(r.time_finalize > 0.0);
        assert_eq!(r.bytes_source, "reported", "{r:?}");
        assert_eq!(r.server_request_bytes, 512, "{r:?}");
        assert_eq!((r.tls.as_str(), r.server_tls.as_str()), ("1.2", "1.2"));
        // The prover's protocol traffic crossed the emulated pv link.
        assert!(r.link_uploaded_bytes >= r.uploaded_total, "{r:?}");
        assert!(r.verifier_peak_rss_bytes > 0 && r.heap_max_bytes > 0);
    }
}

/// The browser target: the WebAssembly prover in headless chromium in the
/// prover's namespace, `webproof serve --once` over WebSocket, one sample,
/// its TLS client restricted by `tls` and `suite`.
#[test]
fn browser_target_one_sample() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !webproof_bench::netns::is_root() {
        eprintln!("SKIPPED: browser_target_one_sample needs root (namespaces, TUN)");
        return;
    }
    let Some(bin) = webproof_bin() else {
        eprintln!(
            "SKIPPED: browser_target_one_sample: no webproof binary built (set WEBPROOF_BIN)"
        );
        return;
    };
    let chromium = std::env::var_os("CHROMIUM").map_or("/usr/bin/chromium".into(), PathBuf::from);
    if !chromium.is_file() {
        eprintln!(
            "SKIPPED: browser_target_one_sample: no chromium at {} (scripts/wasm-tools.sh installs it)",
            chromium.display()
        );
        return;
    }
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("bench.toml");
    std::fs::write(
        &cfg,
        "[[bench]]\nname = \"browser\"\nmode = \"proxy\"\ntarget = \"browser\"\ntls = \"1.2\"\n\
         suite = \"ECDHE_ECDSA_WITH_AES_128_GCM_SHA256\"\nprotocol_latency = 10\n\
         app_latency = 10\nbandwidth = 100\nupload-size = 1024\ndownload-size = 2048\nsamples = 1\nwarmup = 0\n",
    )
    .unwrap();
    let out = dir.path().join("metrics.csv");
    let opts = RunOptions {
        config: cfg,
        output: out.clone(),
        format: Format::Tlsn,
        samples: None,
        warmup: None,
        backend: Some(Backend::Userspace),
        filter: None,
        skip_unavailable: false,
        target: None,
        tolerance: 0.5,
        probe_time: Duration::from_millis(800),
        progress: false,
        exe: Executables {
            worker: PathBuf::from(env!("CARGO_BIN_EXE_webproof-bench-worker")),
            worker_prefix: vec![],
            webproof: Some(bin),
            web: Some(repo.join("web")),
        },
    };
    // A missing package fails here with the command that builds it.
    run(&opts).expect("browser bench run");
    let rows = read_csv(&out).unwrap();
    assert_eq!(rows.len(), 1);
    let r = &rows[0];
    eprintln!("{r:?}");
    assert_eq!(r.target, "browser");
    assert!(r.proxy && r.phases_reported, "{r:?}");
    assert_eq!(
        (r.verdict.as_str(), r.verdict_by.as_str()),
        ("accepted", "exit")
    );
    // The page said when the measured proof began: chromium's start-up and
    // the module's compilation are outside time_total.
    assert!(r.time_startup > 0.0 && r.time_total > 0.0, "{r:?}");
    assert!(r.time_tls > 0.0 && r.time_proof > 0.0, "{r:?}");
    assert_eq!(r.bytes_source, "reported", "{r:?}");
    assert!(r.link_uploaded_bytes >= r.uploaded_total, "{r:?}");
    // The same request as the native prover's.
    assert_eq!(r.server_request_bytes, 1024, "{r:?}");
    // `tls` and `suite` reached the page's prover: the server saw them
    // (the fixture's key is ECDSA P-256), the prover reported them.
    assert_eq!((r.tls.as_str(), r.server_tls.as_str()), ("1.2", "1.2"));
    assert_eq!(
        r.server_suite, "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
        "{r:?}"
    );
    assert_eq!(r.suite, r.server_suite, "{r:?}");
    // Memory: the wasm heap, inside the renderer's resident memory.
    assert!(r.prover_wasm_memory_bytes >= 1 << 20, "{r:?}");
    assert!(r.heap_max_bytes > r.prover_wasm_memory_bytes, "{r:?}");
    assert_eq!(r.prover_peak_rss_bytes, r.heap_max_bytes);
}
