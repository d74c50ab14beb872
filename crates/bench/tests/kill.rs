//! A harness killed while a browser sample runs leaves no chromium behind:
//! the real runner (the worker binary's `run`, what `webproof bench` runs)
//! on a one-sample browser bench, killed with SIGTERM (its handler tears
//! the sample down) and with SIGKILL (nothing of the harness runs: the
//! children's death signals must do it) once chromium is up. Needs root,
//! node, chromium, the built package and the webproof binary.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Pids of live processes whose command line mentions `dir` (chromium's
/// `--user-data-dir` lies below it; zombies have no command line).
fn processes_under(dir: &Path) -> Vec<(i32, String)> {
    let needle = dir.to_string_lossy().into_owned();
    let me = std::process::id() as i32;
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in entries.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if pid != me && cmdline.contains(&needle) {
            out.push((pid, cmdline));
        }
    }
    out
}

fn webproof_bin() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("WEBPROOF_BIN") {
        return Some(PathBuf::from(p));
    }
    let exe = std::env::current_exe().ok()?;
    let p = exe.parent()?.parent()?.join("webproof");
    p.exists().then_some(p)
}

fn wait_exit(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let deadline = Instant::now() + limit;
    loop {
        if let Ok(Some(s)) = child.try_wait() {
            return Some(s);
        }
        if Instant::now() > deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The namespaces and links a SIGKILLed harness of pid `pid` left (the
/// runner's tags: see `runner::run` and `probe::calibrate_userspace`).
fn clean_after(pid: u32) {
    let tags = [
        format!("wpb-{:04x}", (pid as usize * 97) & 0xffff),
        format!("wpb-{:04x}", (pid * 89) & 0xffff),
        format!("wpb-probe-{pid}"),
    ];
    let ours = |n: &str| tags.iter().any(|t| n.starts_with(t.as_str()));
    if let Ok(list) = webproof_bench::netns::ip(&["netns", "list"]) {
        for n in list.lines().filter_map(|l| l.split_whitespace().next()) {
            if ours(n) {
                let _ = webproof_bench::netns::delete_namespace(n);
            }
        }
    }
    if let Ok(links) = webproof_bench::netns::ip(&["-o", "link", "show"]) {
        for l in links.lines() {
            let name = l.split(':').nth(1).unwrap_or("").trim();
            let name = name.split('@').next().unwrap_or("");
            if ours(name) {
                let _ = webproof_bench::netns::ip(&["link", "delete", name]);
            }
        }
    }
}

#[test]
fn killed_harness_leaves_no_chromium() {
    let skip = |why: &str| eprintln!("SKIPPED: killed_harness_leaves_no_chromium: {why}");
    if !webproof_bench::netns::is_root() {
        return skip("needs root (namespaces, TUN)");
    }
    let Some(bin) = webproof_bin() else {
        return skip("no webproof binary built (set WEBPROOF_BIN)");
    };
    let web = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../web");
    if let Err(e) = webproof_bench::browser::BrowserTools::locate(Some(&web)) {
        return skip(&format!("{e:#}"));
    }
    for signal in [libc::SIGTERM, libc::SIGKILL] {
        let dir = tempfile::tempdir().unwrap();
        let tmp = dir.path().join("tmp");
        std::fs::create_dir(&tmp).unwrap();
        let cfg = dir.path().join("bench.toml");
        // A slow link: the proof takes seconds, so the kill lands mid-sample.
        std::fs::write(
            &cfg,
            "[[bench]]\nname = \"browser\"\nmode = \"proxy\"\ntarget = \"browser\"\n\
             protocol_latency = 200\napp_latency = 10\nbandwidth = 100\nupload-size = 1024\n\
             download-size = 2048\nsamples = 1\nwarmup = 0\n",
        )
        .unwrap();
        let mut harness = Command::new(env!("CARGO_BIN_EXE_webproof-bench-worker"))
            .arg("run")
            .arg("--config")
            .arg(&cfg)
            .arg("--output")
            .arg(dir.path().join("out.csv"))
            .arg("--webproof")
            .arg(&bin)
            .arg("--web")
            .arg(&web)
            // Everything of the run, chromium's profile included, goes here.
            .env("TMPDIR", &tmp)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let pid = harness.id();
        // Wait for chromium (its processes name their profile, under `tmp`).
        let deadline = Instant::now() + Duration::from_secs(120);
        let up = loop {
            let ps = processes_under(&tmp);
            // A renderer: the page is loaded (its proof is starting).
            if ps.iter().any(|(_, c)| c.contains("--type=renderer")) {
                break ps;
            }
            if let Ok(Some(s)) = harness.try_wait() {
                panic!("the harness ended ({s}) before chromium started");
            }
            if Instant::now() > deadline {
                let _ = harness.kill();
                panic!("no chromium under {} after 120 s", tmp.display());
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        eprintln!(
            "signal {signal}: {} processes under the run's TMPDIR",
            up.len()
        );
        // SAFETY: signalling our own unreaped child.
        unsafe { libc::kill(pid as i32, signal) };
        let status = wait_exit(&mut harness, Duration::from_secs(30));
        if status.is_none() {
            let _ = harness.kill();
        }
        // Chromium's processes end at once, but not within the same instant.
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut left = processes_under(&tmp);
        while !left.is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
            left = processes_under(&tmp);
        }
        if signal == libc::SIGKILL {
            clean_after(pid);
        }
        assert!(
            status.is_some(),
            "the harness did not exit after signal {signal}"
        );
        assert!(
            left.is_empty(),
            "left running after signal {signal}: {left:#?}"
        );
        if signal == libc::SIGTERM {
            // The harness removed chromium's profile (its driver was killed).
            let profiles: Vec<_> = walk(&tmp)
                .into_iter()
                .filter(|p| {
                    p.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with("webproof-chromium-"))
                })
                .collect();
            assert!(profiles.is_empty(), "profiles left: {profiles:?}");
        }
    }
}

/// Every path below `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            }
            out.push(p);
        }
    }
    out
}
