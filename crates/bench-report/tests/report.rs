//! Reports and charts rendered from fixture samples (`fixtures/reports`:
//! plain, proxy (~0.3 s) and MPC (~6.5 s) on Cable, Fiber and Mobile 5G,
//! native and browser; and a bandwidth sweep). Set
//! `WEBPROOF_BENCH_PREVIEW=<dir>` to keep the output for a look.

use std::path::{Path, PathBuf};
use webproof_bench_report::plot::plot_csv;

fn render(csv: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let out = match std::env::var_os("WEBPROOF_BENCH_PREVIEW") {
        Some(d) => PathBuf::from(d).join(csv.trim_end_matches(".csv")),
        None => tmp.path().to_path_buf(),
    };
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/reports")
        .join(csv);
    plot_csv(&fixture, &out).unwrap();
    (tmp, out)
}

fn read(dir: &Path, f: &str) -> String {
    std::fs::read_to_string(dir.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"))
}

const SERIES: [&str; 5] = [
    "plain",
    "proxy · native",
    "proxy · browser",
    "mpc · native",
    "mpc · browser",
];

/// The legend entry of `label`: its swatch and text.
fn legend_entry<'a>(svg: &'a str, label: &str) -> &'a str {
    let legend = &svg[svg.find("<g class=\"legend\">").expect("a legend")..];
    legend
        .lines()
        .find(|l| l.ends_with(&format!(">{label}</text></g>")))
        .unwrap_or_else(|| panic!("no legend entry {label:?} in {legend}"))
}

#[test]
fn profile_charts_cover_runtime_bytes_and_memory() {
    let (_tmp, dir) = render("profiles.csv");
    for stem in ["profiles", "profiles_bytes", "profiles_memory"] {
        for theme in ["light", "dark"] {
            let svg = read(&dir, &format!("{stem}_{theme}.svg"));
            assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
            for s in SERIES {
                // Every series, with a bar swatch, not a line.
                let e = legend_entry(&svg, s);
                assert!(
                    e.starts_with("<g class=\"legend-entry\"><rect"),
                    "{stem}: {e}"
                );
            }
            assert!(legend_entry(&svg, "min–max").contains("<path"), "{stem}");
        }
    }
    // Runtime: 0.1 s to 9 s across modes, so a linear panel per mode.
    let rt = read(&dir, "profiles_light.svg");
    for m in ["plain", "proxy", "mpc"] {
        assert!(
            rt.contains(&format!("<g class=\"panel\" data-title=\"{m}\">")),
            "{m}"
        );
    }
    assert!(!rt.contains("data-scale=\"log\""));
    assert!(rt.contains("class=\"note\""), "the panels are explained");
    assert!(rt.contains("<rect class=\"pre\""));
    assert!(legend_entry(&rt, "preprocessing").contains("<rect"));
    // Bytes: kilobytes (plain, proxy) beside 26 MB (MPC): log axes, with
    // units on the ticks.
    let by = read(&dir, "profiles_bytes_dark.svg");
    assert_eq!(by.matches("data-scale=\"log\"").count(), 2, "{by}");
    assert!(
        by.contains(">10 MB</text>") && by.contains(">10 KB</text>"),
        "{by}"
    );
    assert!(by.contains("Prover upload") && by.contains("Prover download"));
    // Memory: the prover, the verifier and the browser's WebAssembly.
    let mem = read(&dir, "profiles_memory_light.svg");
    for p in ["Prover peak memory", "Verifier peak memory", "WebAssembly"] {
        assert!(mem.contains(p), "{p}");
    }
    // The report links every chart, with the notes, and has spreads.
    let md = read(&dir, "report.md");
    for c in ["profiles", "profiles_bytes", "profiles_memory"] {
        assert!(md.contains(&format!("](./{c}_light.svg")), "{c}");
        assert!(md.contains(&format!("](./{c}_dark.svg")), "{c}");
    }
    assert!(md.contains("*Runtimes span"), "{md}");
    let total = &md[md.find("### Profiles: Runtime, total (mean)").unwrap()..];
    let row = total
        .lines()
        .find(|l| l.starts_with("| mpc · native |"))
        .unwrap();
    assert!(row.contains("–") && row.contains(" s ("), "spread: {row}");
}

#[test]
fn sweep_report_has_download_and_memory_tables() {
    let (_tmp, dir) = render("sweep.csv");
    let md = read(&dir, "report.md");
    for t in [
        "Sweep `bandwidth`: runtime, total (mean)",
        "Sweep `bandwidth`: prover upload",
        "Sweep `bandwidth`: prover download",
        "Sweep `bandwidth`: prover peak memory (RSS)",
        "Sweep `bandwidth`: verifier peak memory (RSS)",
    ] {
        assert!(md.contains(&format!("### {t}\n")), "{t}: {md}");
    }
    let down = &md[md.find("prover download").unwrap()..];
    assert!(
        down.contains("| bandwidth (Mbps) | plain | proxy | mpc |"),
        "{down}"
    );
    assert!(down.contains("1.21 MB"), "{down}");
    // No verifier for plain TLS: no 0 B, and no spread where none shows.
    let ver = &md[md.find("verifier peak memory").unwrap()..];
    let row = ver.lines().find(|l| l.starts_with("| 5 |")).unwrap();
    assert!(row.starts_with("| 5 | – | "), "{row}");
    assert!(!md.contains("(1.21–1.21)"), "{md}");
    // Plain TLS at ~0.2 s beside MPC at several seconds: a log runtime axis.
    let svg = read(&dir, "bandwidth_dark.svg");
    assert!(svg.contains("data-scale=\"log\""));
    assert!(md.contains("*Log runtime axis: runtimes span"), "{md}");
    assert!(legend_entry(&svg, "mpc total").contains("<line"));
    assert!(legend_entry(&svg, "mpc online").contains("stroke-dasharray"));
}
