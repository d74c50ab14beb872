//! Tables from samples: the Markdown report of one run and the comparison
//! of two runs (change per cell in percent).
//!
//! A group whose benches all share the network and the sizes is a *profile*
//! (Cable, Fiber, ...): profiles are tabulated series x profiles, as the
//! field's posts do (runtime and its phases, bytes up and down, peak
//! memory, CPU), with the ratio to the plain (no-proof) baseline. A group
//! whose benches differ in a network setting or a size is a *sweep*:
//! tabulated by the value that varies (bandwidth, latency, response size,
//! ...) x series, for runtime, bytes up and down, and peak memory.
//!
//! A cell is the mean over the bench's samples, with the min-max over them
//! in brackets where they differ (`1.50 s (1.40–1.60)`); a comparison's
//! cells carry the change against the base instead.
//!
//! A *series* is what one line or one bar colour shows: the mode, plus each
//! setting (TLS version, suite, reveal, target) that tells two benches of
//! that mode apart, so TLS 1.2 and 1.3, or the native and the browser
//! prover, stay separate instead of being averaged together.

use crate::metrics::{read_csv, Refused, Sample};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

/// Mean, least and greatest value of one number over a bench's samples.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Stat {
    pub mean: f64,
    pub min: f64,
    pub max: f64,
}

impl Stat {
    fn of(v: impl Iterator<Item = f64> + Clone) -> Stat {
        let n = v.clone().count().max(1) as f64;
        Stat {
            mean: v.clone().sum::<f64>() / n,
            min: v.clone().fold(f64::INFINITY, f64::min),
            max: v.fold(f64::NEG_INFINITY, f64::max),
        }
    }
}

/// The spread of every number a report tabulates or charts.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stats {
    /// Runtimes in ms.
    pub total: Stat,
    pub preprocess: Stat,
    pub online: Stat,
    pub finalize: Stat,
    /// The prover's protocol bytes.
    pub uploaded: Stat,
    pub downloaded: Stat,
    /// Per-sample peaks: the prover's RSS (or heap), the verifier's RSS,
    /// the browser prover's WebAssembly memory.
    pub prover_mem: Stat,
    pub verifier_mem: Stat,
    pub wasm_mem: Stat,
    pub prover_cpu: Stat,
}

/// Aggregate of the samples of one bench in one mode.
#[derive(Clone, Debug, Default)]
pub struct Agg {
    pub group: String,
    pub name: String,
    pub mode: String,
    /// The series label (see the module docs).
    pub series: String,
    /// Offered / negotiated TLS version, suite, reveal and target.
    pub tls: String,
    pub suite: String,
    pub reveal: String,
    pub target: String,
    pub n: usize,
    pub total_mean: f64,
    pub total_min: f64,
    pub total_max: f64,
    pub preprocess_mean: f64,
    pub online_mean: f64,
    pub finalize_mean: f64,
    pub online_min: f64,
    pub online_max: f64,
    pub uploaded: f64,
    pub downloaded: f64,
    pub link_up: f64,
    pub link_down: f64,
    pub prover_rss_max: f64,
    /// The browser prover's WebAssembly memory (0 on the native target).
    pub prover_wasm_max: f64,
    pub verifier_rss_max: f64,
    pub prover_cpu: f64,
    pub verifier_cpu: f64,
    /// Parameters (equal across samples of a bench).
    pub latency: f64,
    pub bandwidth: f64,
    pub app_latency: f64,
    pub upload_size: f64,
    pub download_size: f64,
    pub phases_reported: bool,
    pub topology: String,
    /// Samples whose byte totals are the link's, not the prover's counts.
    pub bytes_from_link: usize,
    pub bytes_mismatched: usize,
    /// Mean and min-max of each number.
    pub stats: Stats,
}

/// Aggregate samples per (group, name, mode, target), in first-seen order.
pub fn aggregate(samples: &[Sample]) -> Vec<Agg> {
    type Key = (String, String, String, String);
    let mut order: Vec<Key> = Vec::new();
    let mut by: BTreeMap<Key, Vec<&Sample>> = BTreeMap::new();
    for s in samples {
        let target = if s.target.is_empty() {
            "native".to_string()
        } else {
            s.target.clone()
        };
        let k = (s.group.clone(), s.name.clone(), s.mode.clone(), target);
        if !by.contains_key(&k) {
            order.push(k.clone());
        }
        by.entry(k).or_default().push(s);
    }
    let mut aggs: Vec<Agg> = order
        .into_iter()
        .map(|k| {
            let v = &by[&k];
            let n = v.len() as f64;
            let mean = |f: fn(&Sample) -> f64| v.iter().map(|s| f(s)).sum::<f64>() / n;
            let min = |f: fn(&Sample) -> f64| v.iter().map(|s| f(s)).fold(f64::INFINITY, f64::min);
            let max =
                |f: fn(&Sample) -> f64| v.iter().map(|s| f(s)).fold(f64::NEG_INFINITY, f64::max);
            let stat = |f: fn(&Sample) -> f64| Stat::of(v.iter().map(move |s| f(s)));
            let stats = Stats {
                total: stat(|s| s.time_total),
                preprocess: stat(|s| s.time_preprocess),
                online: stat(|s| s.time_online),
                finalize: stat(|s| s.time_finalize),
                uploaded: stat(|s| s.uploaded_total as f64),
                downloaded: stat(|s| s.downloaded_total as f64),
                prover_mem: stat(|s| s.heap_max_bytes.max(s.prover_peak_rss_bytes) as f64),
                verifier_mem: stat(|s| s.verifier_peak_rss_bytes as f64),
                wasm_mem: stat(|s| s.prover_wasm_memory_bytes as f64),
                prover_cpu: stat(|s| s.prover_cpu_ms),
            };
            Agg {
                group: k.0.clone(),
                name: k.1.clone(),
                mode: k.2.clone(),
                series: String::new(),
                tls: v[0].tls.clone(),
                suite: v[0].suite.clone(),
                reveal: v[0].reveal.clone(),
                target: k.3.clone(),
                n: v.len(),
                total_mean: mean(|s| s.time_total),
                total_min: min(|s| s.time_total),
                total_max: max(|s| s.time_total),
                preprocess_mean: mean(|s| s.time_preprocess),
                online_mean: mean(|s| s.time_online),
                finalize_mean: mean(|s| s.time_finalize),
                online_min: min(|s| s.time_online),
                online_max: max(|s| s.time_online),
                uploaded: mean(|s| s.uploaded_total as f64),
                downloaded: mean(|s| s.downloaded_total as f64),
                link_up: mean(|s| s.link_uploaded_bytes as f64),
                link_down: mean(|s| s.link_downloaded_bytes as f64),
                prover_rss_max: max(|s| s.heap_max_bytes.max(s.prover_peak_rss_bytes) as f64),
                prover_wasm_max: max(|s| s.prover_wasm_memory_bytes as f64),
                verifier_rss_max: max(|s| s.verifier_peak_rss_bytes as f64),
                prover_cpu: mean(|s| s.prover_cpu_ms),
                verifier_cpu: mean(|s| s.verifier_cpu_ms),
                latency: v[0].latency,
                bandwidth: v[0].bandwidth,
                app_latency: v[0].app_latency,
                upload_size: v[0].upload_size as f64,
                download_size: v[0].download_size as f64,
                phases_reported: v.iter().all(|s| s.phases_reported),
                topology: v[0].topology.clone(),
                bytes_from_link: v.iter().filter(|s| s.bytes_source != "reported").count(),
                bytes_mismatched: v
                    .iter()
                    .filter(|s| s.bytes_source == "link-mismatch")
                    .count(),
                stats,
            }
        })
        .collect();
    label_series(&mut aggs);
    aggs
}

/// Name each aggregate's series: its mode, then every setting in which
/// benches of that mode differ across the run (so the labels agree across
/// groups, and a profile's columns line up).
fn label_series(aggs: &mut [Agg]) {
    type Setting = (&'static str, fn(&Agg) -> String);
    let settings: [Setting; 4] = [
        ("tls", |a| match a.tls.as_str() {
            "" | "any" => String::new(),
            v => format!("TLS {v}"),
        }),
        ("suite", |a| a.suite.clone()),
        ("reveal", |a| a.reveal.clone()),
        ("target", |a| a.target.clone()),
    ];
    let labels: Vec<String> = aggs
        .iter()
        .map(|a| {
            let same_mode: Vec<&Agg> = aggs.iter().filter(|b| b.mode == a.mode).collect();
            let mut parts = vec![a.mode.clone()];
            for (_, get) in &settings {
                let mut vals: Vec<String> = same_mode.iter().map(|b| get(b)).collect();
                vals.sort();
                vals.dedup();
                let mine = get(a);
                if vals.len() > 1 && !mine.is_empty() {
                    parts.push(mine);
                }
            }
            parts.join(" · ")
        })
        .collect();
    for (a, l) in aggs.iter_mut().zip(labels) {
        a.series = l;
    }
}

/// The parameter a sweep varies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Axis {
    Bandwidth,
    Latency,
    AppLatency,
    Download,
    Upload,
}

impl Axis {
    pub fn label(&self) -> &'static str {
        match self {
            Axis::Bandwidth => "bandwidth (Mbps)",
            Axis::Latency => "latency (ms RTT)",
            Axis::AppLatency => "app latency (ms RTT)",
            Axis::Download => "response size (KB)",
            Axis::Upload => "request size (KB)",
        }
    }
    pub fn value(&self, a: &Agg) -> f64 {
        match self {
            Axis::Bandwidth => a.bandwidth,
            Axis::Latency => a.latency,
            Axis::AppLatency => a.app_latency,
            Axis::Download => a.download_size / 1024.0,
            Axis::Upload => a.upload_size / 1024.0,
        }
    }
    /// File-name friendly name, as the field's charts are named.
    pub fn slug(&self) -> &'static str {
        match self {
            Axis::Bandwidth => "bandwidth",
            Axis::Latency => "latency",
            Axis::AppLatency => "app_latency",
            Axis::Download => "download",
            Axis::Upload => "upload",
        }
    }
}

/// A group of benches: a profile (each mode once) or a sweep along an axis.
#[derive(Clone, Debug)]
pub enum GroupKind {
    Profile,
    Sweep(Axis),
}

/// Groups in first-seen order with their kind.
pub fn classify(aggs: &[Agg]) -> Vec<(String, GroupKind)> {
    let mut groups: Vec<String> = Vec::new();
    for a in aggs {
        if !groups.contains(&a.group) {
            groups.push(a.group.clone());
        }
    }
    groups
        .into_iter()
        .map(|g| {
            let members: Vec<&Agg> = aggs.iter().filter(|a| a.group == g).collect();
            let distinct = |ax: &Axis| {
                let mut vals: Vec<u64> = members.iter().map(|a| ax.value(a).to_bits()).collect();
                vals.sort();
                vals.dedup();
                vals.len()
            };
            let axes = [
                Axis::Bandwidth,
                Axis::Latency,
                Axis::Download,
                Axis::Upload,
                Axis::AppLatency,
            ];
            // The setting that varies most; none varies: a profile, however
            // many benches of one mode it holds.
            let axis = axes
                .into_iter()
                .max_by_key(|ax| distinct(ax))
                .expect("non-empty");
            if distinct(&axis) < 2 {
                return (g, GroupKind::Profile);
            }
            (g, GroupKind::Sweep(axis))
        })
        .collect()
}

/// How a table's numbers are shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Stored in ms, shown in s.
    Seconds,
    Bytes,
    Ms,
    /// A ratio, shown as `3.9×`.
    Ratio,
}

fn fmt_value(v: f64, unit: Unit) -> String {
    match unit {
        Unit::Seconds => {
            if v < 10_000.0 {
                format!("{:.2} s", v / 1e3)
            } else {
                format!("{:.1} s", v / 1e3)
            }
        }
        Unit::Ms => format!("{v:.0} ms"),
        Unit::Ratio => format!("{v:.1}×"),
        Unit::Bytes => {
            if v >= 1e6 {
                format!("{:.2} MB", v / 1e6)
            } else if v >= 1e3 {
                format!("{:.1} KB", v / 1e3)
            } else {
                format!("{v:.0} B")
            }
        }
    }
}

/// `lo–hi` in the scale `fmt_value` picks for `like`, unit left off:
/// `1.40–1.60` beside `1.50 s`; `None` when both ends read the same.
fn fmt_range(lo: f64, hi: f64, like: f64, unit: Unit) -> Option<String> {
    let (div, prec) = match unit {
        Unit::Seconds if like < 10_000.0 => (1e3, 2),
        Unit::Seconds => (1e3, 1),
        Unit::Bytes if like >= 1e6 => (1e6, 2),
        Unit::Bytes if like >= 1e3 => (1e3, 1),
        Unit::Bytes | Unit::Ms => (1.0, 0),
        Unit::Ratio => (1.0, 1),
    };
    let (a, b) = (
        format!("{:.prec$}", lo / div),
        format!("{:.prec$}", hi / div),
    );
    (a != b).then(|| format!("{a}–{b}"))
}

/// A table whose 0 means "not measured" (the verifier of a no-proof
/// baseline): blank those cells.
fn blank_zeros(t: &mut Table) {
    for (r, row) in t.cells.iter_mut().enumerate() {
        for (c, cell) in row.iter_mut().enumerate() {
            if *cell == Some(0.0) {
                *cell = None;
                if let Some(x) = t.spread.get_mut(r).and_then(|x| x.get_mut(c)) {
                    *x = None;
                }
            }
        }
    }
}

/// A table: one number per (row, column).
#[derive(Clone, Debug)]
pub struct Table {
    pub title: String,
    pub corner: String,
    pub cols: Vec<String>,
    pub rows: Vec<String>,
    pub cells: Vec<Vec<Option<f64>>>,
    /// Min-max over samples per cell, where the table has it (empty for
    /// ratios); shown when the samples differ.
    pub spread: Vec<Vec<Option<(f64, f64)>>>,
    pub unit: Unit,
}

impl Table {
    fn get(&self, row: &str, col: &str) -> Option<f64> {
        let r = self.rows.iter().position(|x| x == row)?;
        let c = self.cols.iter().position(|x| x == col)?;
        self.cells[r][c]
    }
}

fn uniq<T: PartialEq + Clone>(it: impl Iterator<Item = T>) -> Vec<T> {
    let mut v = Vec::new();
    for x in it {
        if !v.contains(&x) {
            v.push(x);
        }
    }
    v
}

fn axis_label(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// One number of an aggregate, with its spread.
type Metric = fn(&Agg) -> Stat;

/// A table of `metric` per (row, column), `find` giving the aggregate of a
/// cell.
fn stat_table<'a>(
    title: String,
    corner: &str,
    rows: &[String],
    cols: Vec<String>,
    unit: Unit,
    metric: Metric,
    find: impl Fn(&str, &str) -> Option<&'a Agg>,
) -> Table {
    let stat = |r: &str, c: &str| find(r, c).map(metric);
    let cells = rows
        .iter()
        .map(|r| cols.iter().map(|c| stat(r, c).map(|s| s.mean)).collect())
        .collect();
    let spread = rows
        .iter()
        .map(|r| {
            cols.iter()
                .map(|c| stat(r, c).map(|s| (s.min, s.max)))
                .collect()
        })
        .collect();
    Table {
        title,
        corner: corner.into(),
        cols,
        rows: rows.to_vec(),
        cells,
        spread,
        unit,
    }
}

/// Keep the items of `v` whose flag in `keep` is set.
fn retain_by<T>(v: &mut Vec<T>, keep: &[bool]) {
    let mut k = keep.iter();
    v.retain(|_| *k.next().expect("a flag per item"));
}

/// Drop the rows of `t` with no positive cell (a browser-only metric).
fn drop_empty_rows(t: &mut Table) {
    let keep: Vec<bool> = t
        .cells
        .iter()
        .map(|r| r.iter().any(|c| c.is_some_and(|x| x > 0.0)))
        .collect();
    retain_by(&mut t.rows, &keep);
    retain_by(&mut t.cells, &keep);
    retain_by(&mut t.spread, &keep);
}

/// Every table of the report for these aggregates.
pub fn tables(aggs: &[Agg]) -> Vec<Table> {
    let kinds = classify(aggs);
    let mut out = Vec::new();
    let profiles: Vec<&String> = kinds
        .iter()
        .filter(|(_, k)| matches!(k, GroupKind::Profile))
        .map(|(g, _)| g)
        .collect();
    if !profiles.is_empty() {
        let pa: Vec<&Agg> = aggs
            .iter()
            .filter(|a| profiles.contains(&&a.group))
            .collect();
        let modes = uniq(pa.iter().map(|a| a.series.clone()));
        let cols: Vec<String> = profiles.iter().map(|s| s.to_string()).collect();
        let metric_tables: [(&str, Unit, Metric); 9] = [
            ("Runtime, total (mean)", Unit::Seconds, |a| a.stats.total),
            ("Runtime, preprocessing (mean)", Unit::Seconds, |a| {
                a.stats.preprocess
            }),
            ("Runtime, online (mean)", Unit::Seconds, |a| a.stats.online),
            ("Runtime, finalize / proof (mean)", Unit::Seconds, |a| {
                a.stats.finalize
            }),
            ("Prover upload (protocol bytes)", Unit::Bytes, |a| {
                a.stats.uploaded
            }),
            ("Prover download (protocol bytes)", Unit::Bytes, |a| {
                a.stats.downloaded
            }),
            ("Prover peak memory (RSS)", Unit::Bytes, |a| {
                a.stats.prover_mem
            }),
            ("Verifier peak memory (RSS)", Unit::Bytes, |a| {
                a.stats.verifier_mem
            }),
            ("Prover CPU time (mean)", Unit::Ms, |a| a.stats.prover_cpu),
        ];
        let wasm: Option<(&str, Unit, Metric)> = pa
            .iter()
            .any(|a| a.prover_wasm_max > 0.0)
            .then_some(("Prover WebAssembly memory (browser)", Unit::Bytes, |a| {
                a.stats.wasm_mem
            }));
        let has_wasm = wasm.is_some();
        for (title, unit, f) in metric_tables.into_iter().chain(wasm) {
            out.push(stat_table(
                format!("Profiles: {title}"),
                "series",
                &modes,
                cols.clone(),
                unit,
                f,
                |m, g| pa.iter().copied().find(|a| a.group == g && a.series == m),
            ));
        }
        if has_wasm {
            // Only the browser series has WebAssembly memory: no 0 B rows.
            drop_empty_rows(out.last_mut().expect("the wasm table was pushed"));
        }
        for t in out.iter_mut().filter(|t| t.title.contains("Verifier peak")) {
            blank_zeros(t);
        }
        // The field's headline: how much a proof costs over plain TLS, per
        // profile (the plain series of the same profile, same target; the
        // browser has no plain client of its own, so without one it is
        // compared with the native plain TLS over the same links).
        let plain = |g: &str, target: &str| {
            let find = |t: &str| {
                pa.iter()
                    .find(|a| a.group == g && a.mode == "plain" && a.target == t)
                    .map(|a| a.total_mean)
            };
            find(target).or_else(|| find("native"))
        };
        let proving: Vec<String> = uniq(
            pa.iter()
                .filter(|a| a.mode != "plain")
                .map(|a| a.series.clone()),
        );
        let cells: Vec<Vec<Option<f64>>> = proving
            .iter()
            .map(|m| {
                cols.iter()
                    .map(|g| {
                        let a = pa.iter().find(|a| &a.group == g && &a.series == m)?;
                        let base = plain(g, &a.target)?;
                        (base > 0.0).then(|| a.total_mean / base)
                    })
                    .collect()
            })
            .collect();
        if cells.iter().flatten().any(|c| c.is_some()) {
            // Right after total runtime: the table a reader looks for.
            out.insert(
                1.min(out.len()),
                Table {
                    title: "Profiles: Runtime, total, as a multiple of plain TLS".into(),
                    corner: "series".into(),
                    cols: cols.clone(),
                    rows: proving,
                    cells,
                    spread: Vec::new(),
                    unit: Unit::Ratio,
                },
            );
        }
        // Browser against native: the same mode and reveal on the same profile.
        let browser: Vec<String> = uniq(
            pa.iter()
                .filter(|a| a.target == "browser")
                .map(|a| a.series.clone()),
        );
        let cells: Vec<Vec<Option<f64>>> = browser
            .iter()
            .map(|m| {
                cols.iter()
                    .map(|g| {
                        let b = pa.iter().find(|a| &a.group == g && &a.series == m)?;
                        let n = pa.iter().find(|a| {
                            a.group == b.group
                                && a.mode == b.mode
                                && a.reveal == b.reveal
                                && a.target == "native"
                        })?;
                        (n.total_mean > 0.0).then(|| b.total_mean / n.total_mean)
                    })
                    .collect()
            })
            .collect();
        if cells.iter().flatten().any(|c| c.is_some()) {
            let at = out
                .iter()
                .position(|t| t.title.ends_with("as a multiple of plain TLS"))
                .map_or(1, |i| i + 1)
                .min(out.len());
            out.insert(
                at,
                Table {
                    title: "Profiles: Runtime, total, browser as a multiple of native".into(),
                    corner: "series".into(),
                    cols: cols.clone(),
                    rows: browser,
                    cells,
                    spread: Vec::new(),
                    unit: Unit::Ratio,
                },
            );
        }
    }
    for (g, k) in &kinds {
        let GroupKind::Sweep(axis) = k else { continue };
        let ga: Vec<&Agg> = aggs.iter().filter(|a| &a.group == g).collect();
        let modes = uniq(ga.iter().map(|a| a.series.clone()));
        let mut xs = uniq(ga.iter().map(|a| axis.value(a).to_bits()));
        xs.sort_by(|a, b| f64::from_bits(*a).total_cmp(&f64::from_bits(*b)));
        let xrows: Vec<String> = xs.iter().map(|x| axis_label(f64::from_bits(*x))).collect();
        let find = |x: &str, m: &str| {
            let bits = xs[xrows.iter().position(|r| r == x)?];
            ga.iter()
                .copied()
                .find(|a| a.series == m && axis.value(a).to_bits() == bits)
        };
        let mut metrics: Vec<(&str, Unit, Metric)> = vec![
            ("runtime, total (mean)", Unit::Seconds, |a| a.stats.total),
            ("runtime, online (mean)", Unit::Seconds, |a| a.stats.online),
            ("prover upload", Unit::Bytes, |a| a.stats.uploaded),
            ("prover download", Unit::Bytes, |a| a.stats.downloaded),
            ("prover peak memory (RSS)", Unit::Bytes, |a| {
                a.stats.prover_mem
            }),
        ];
        // No-proof baselines have no verifier; a run without one has no
        // verifier table.
        if ga.iter().any(|a| a.stats.verifier_mem.max > 0.0) {
            metrics.push(("verifier peak memory (RSS)", Unit::Bytes, |a| {
                a.stats.verifier_mem
            }));
        }
        let wasm = ga.iter().any(|a| a.stats.wasm_mem.max > 0.0);
        if wasm {
            metrics.push(("prover WebAssembly memory (browser)", Unit::Bytes, |a| {
                a.stats.wasm_mem
            }));
        }
        for (title, unit, f) in metrics {
            out.push(stat_table(
                format!("Sweep `{g}`: {title}"),
                axis.label(),
                &xrows,
                modes.clone(),
                unit,
                f,
                find,
            ));
        }
        for t in out
            .iter_mut()
            .filter(|t| t.title.starts_with(&format!("Sweep `{g}`: verifier")))
        {
            blank_zeros(t);
        }
        if wasm {
            // Columns, not rows, are series here: blank the native ones.
            let t = out.last_mut().expect("the wasm table was pushed");
            let keep: Vec<bool> = (0..t.cols.len())
                .map(|c| t.cells.iter().any(|r| r[c].is_some_and(|x| x > 0.0)))
                .collect();
            retain_by(&mut t.cols, &keep);
            for r in t.cells.iter_mut() {
                retain_by(r, &keep);
            }
            for r in t.spread.iter_mut() {
                retain_by(r, &keep);
            }
        }
    }
    out
}

fn render(t: &Table, base: Option<&Table>, out: &mut String) {
    let _ = writeln!(out, "### {}\n", t.title);
    let _ = writeln!(out, "| {} | {} |", t.corner, t.cols.join(" | "));
    let _ = writeln!(out, "|---|{}", "---|".repeat(t.cols.len()));
    for (r, row) in t.rows.iter().enumerate() {
        let cells: Vec<String> = t
            .cols
            .iter()
            .enumerate()
            .map(|(c, col)| match t.cells[r][c] {
                None => "–".into(),
                Some(v) => {
                    let mut s = fmt_value(v, t.unit);
                    // The spread over samples, in a one-run report (a
                    // comparison's cells carry the change instead).
                    if let (None, Some(Some((lo, hi)))) =
                        (base, t.spread.get(r).and_then(|x| x.get(c)))
                    {
                        // Only where the samples differ at the precision shown.
                        if let Some(range) = fmt_range(*lo, *hi, v, t.unit) {
                            let _ = write!(s, " ({range})");
                        }
                    }
                    match base.and_then(|b| b.get(row, col)) {
                        Some(b) if b > 0.0 => {
                            let pct = (v - b) / b * 100.0;
                            format!("{s} (**{pct:+.1}%**)")
                        }
                        Some(_) if base.is_some() => format!("{s} (n/a)"),
                        _ if base.is_some() => format!("{s} (new)"),
                        _ => s,
                    }
                }
            })
            .collect();
        let _ = writeln!(out, "| {row} | {} |", cells.join(" | "));
    }
    out.push('\n');
}

/// The Markdown report of one run.
pub fn markdown(samples: &[Sample], title: &str) -> String {
    markdown_with_refused(samples, &[], title)
}

/// The Markdown report of one run, with the samples the harness refused.
pub fn markdown_with_refused(samples: &[Sample], refused: &[Refused], title: &str) -> String {
    let aggs = aggregate(samples);
    let mut out = format!("# {title}\n\n");
    let backends = uniq(
        samples
            .iter()
            .map(|s| s.backend.clone())
            .filter(|b| !b.is_empty()),
    );
    let n = uniq(aggs.iter().map(|a| a.n));
    let _ = writeln!(
        out,
        "Means over {} accepted samples per row, with the min–max over them in \
         brackets where they differ; link emulation backend: {}. \
         `time_total` runs from the prover's start to the verifier's verdict \
         (to the prover's exit for no-proof baselines), on the harness's clock; \
         phase times are the prover's own where it reports them, else measured \
         from outside. Memory is each sample's peak RSS. See bench/ADAPTERS.md.\n",
        n.iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join("/"),
        if backends.is_empty() {
            "unknown".to_string()
        } else {
            backends.join(", ")
        }
    );
    counted(&aggs, refused, &mut out);
    for t in tables(&aggs) {
        render(&t, None, &mut out);
    }
    out
}

/// Per bench: how many samples counted, how many were refused and why,
/// the topology, and where the byte totals come from.
fn counted(aggs: &[Agg], refused: &[Refused], out: &mut String) {
    let mut rows: Vec<(String, String, String, String)> = aggs
        .iter()
        .map(|a| {
            (
                a.group.clone(),
                a.name.clone(),
                a.series.clone(),
                a.topology.clone(),
            )
        })
        .collect();
    // Refused runs of a bench that has no accepted sample get a row of their
    // own (under their mode: a refused run has no series).
    for r in refused {
        let k = (
            r.group.clone(),
            r.name.clone(),
            r.mode.clone(),
            r.topology.clone(),
        );
        let accepted = aggs
            .iter()
            .any(|a| a.group == k.0 && a.name == k.1 && a.mode == k.2);
        if !accepted && !rows.iter().any(|x| x.0 == k.0 && x.1 == k.1 && x.2 == k.2) {
            rows.push(k);
        }
    }
    let _ = writeln!(
        out,
        "### Samples counted\n\n{} accepted, {} refused (a sample counts only when its verifier \
         accepted; no-proof baselines have no verifier).\n",
        aggs.iter().map(|a| a.n).sum::<usize>(),
        refused.len()
    );
    let _ = writeln!(
        out,
        "| bench | series | topology | accepted | refused | byte totals |\n|---|---|---|---|---|---|"
    );
    for (g, n, m, t) in rows {
        let a = aggs
            .iter()
            .find(|a| a.group == g && a.name == n && a.series == m);
        let mode = a.map_or(m.as_str(), |a| a.mode.as_str());
        let mine: Vec<&Refused> = refused
            .iter()
            .filter(|r| r.group == g && r.name == n && r.mode == mode)
            .collect();
        let mut why: Vec<String> = Vec::new();
        for r in &mine {
            let first = r.reason.lines().next().unwrap_or("").to_string();
            let w = format!("{}: {}", r.verdict, first);
            if !why.contains(&w) {
                why.push(w);
            }
        }
        let refused_cell = if mine.is_empty() {
            "0".to_string()
        } else {
            format!(
                "**{}** ({})",
                mine.len(),
                why.join("; ").replace('|', "\\|")
            )
        };
        let bytes = match a {
            None => "–".to_string(),
            Some(a) if a.bytes_mismatched > 0 => format!(
                "link: the prover's counts did not add up in {} of {}",
                a.bytes_mismatched, a.n
            ),
            Some(a) if a.bytes_from_link == a.n => "link (not reported)".into(),
            Some(a) if a.bytes_from_link > 0 => {
                format!("reported; link in {} of {}", a.bytes_from_link, a.n)
            }
            Some(_) => "reported".into(),
        };
        let _ = writeln!(
            out,
            "| {g}/{n} | {m} | {t} | {} | {refused_cell} | {bytes} |",
            a.map_or(0, |a| a.n)
        );
    }
    out.push('\n');
}

/// Compare two runs: `new`'s tables with the change against `base` per cell.
pub fn compare(base: &[Sample], new: &[Sample]) -> String {
    let bt = tables(&aggregate(base));
    let nt = tables(&aggregate(new));
    let mut out = String::from("# Benchmark comparison\n\nEach cell: new value (change against base). Lower is better for every metric.\n\n");
    for t in &nt {
        let b = bt.iter().find(|b| b.title == t.title);
        render(t, b, &mut out);
    }
    out
}

pub fn compare_files(base: &Path, new: &Path) -> anyhow::Result<String> {
    Ok(compare(&read_csv(base)?, &read_csv(new)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(group: &str, name: &str, mode: &str, bw: f64, total: f64) -> Sample {
        Sample {
            group: group.into(),
            name: name.into(),
            mode: mode.into(),
            bandwidth: bw,
            latency: 25.0,
            time_total: total,
            time_online: total / 2.0,
            ..Default::default()
        }
    }

    #[test]
    fn profiles_and_sweeps_are_tabulated() {
        let v = vec![
            s("cable", "proxy", "proxy", 20.0, 1600.0),
            s("cable", "proxy", "proxy", 20.0, 1400.0),
            s("cable", "plain", "plain", 20.0, 100.0),
            s("bw", "p5", "proxy", 5.0, 4000.0),
            s("bw", "p100", "proxy", 100.0, 1000.0),
            s("bw", "c5", "plain", 5.0, 200.0),
            s("bw", "c100", "plain", 100.0, 90.0),
        ];
        let aggs = aggregate(&v);
        assert_eq!(aggs[0].total_mean, 1500.0);
        assert_eq!(aggs[0].total_min, 1400.0);
        let kinds = classify(&aggs);
        assert!(matches!(kinds[0].1, GroupKind::Profile));
        assert!(matches!(kinds[1].1, GroupKind::Sweep(Axis::Bandwidth)));
        let md = markdown(&v, "t");
        assert!(md.contains("| proxy | 1.50 s (1.40–1.60) |"), "{md}");
        assert!(md.contains("| 5 | 4.00 s | 0.20 s |"), "{md}");
    }

    fn tls(mut s: Sample, v: &str) -> Sample {
        s.tls = v.into();
        s
    }

    fn target(mut s: Sample, t: &str) -> Sample {
        s.target = t.into();
        s
    }

    #[test]
    fn settings_of_one_mode_stay_separate_series() {
        // A profile with TLS 1.2 and 1.3 benches of one mode is still a
        // profile (nothing on the network varies), with two rows.
        let v = vec![
            tls(s("cable", "proxy-13", "proxy", 20.0, 1500.0), "1.3"),
            tls(s("cable", "proxy-12", "proxy", 20.0, 1800.0), "1.2"),
            tls(s("cable", "plain", "plain", 20.0, 150.0), "1.3"),
            tls(s("fiber", "proxy-13", "proxy", 100.0, 1000.0), "1.3"),
            tls(s("fiber", "proxy-12", "proxy", 100.0, 1200.0), "1.2"),
            tls(s("fiber", "plain", "plain", 100.0, 100.0), "1.3"),
        ];
        let aggs = aggregate(&v);
        let kinds = classify(&aggs);
        assert!(kinds.iter().all(|(_, k)| matches!(k, GroupKind::Profile)));
        assert_eq!(aggs[0].series, "proxy · TLS 1.3");
        assert_eq!(aggs[1].series, "proxy · TLS 1.2");
        assert_eq!(aggs[2].series, "plain");
        let md = markdown(&v, "t");
        assert!(md.contains("| proxy · TLS 1.3 | 1.50 s | 1.00 s |"), "{md}");
        assert!(md.contains("| proxy · TLS 1.2 | 1.80 s | 1.20 s |"), "{md}");
        // The ratio to plain of the same profile.
        assert!(md.contains("| proxy · TLS 1.2 | 12.0× | 12.0× |"), "{md}");
        assert!(!md.contains("| plain | 1.0×"), "{md}");

        // In a sweep, too: one line per TLS version.
        let v = vec![
            tls(s("bw", "a", "proxy", 5.0, 4000.0), "1.3"),
            tls(s("bw", "b", "proxy", 100.0, 1000.0), "1.3"),
            tls(s("bw", "c", "proxy", 5.0, 5000.0), "1.2"),
            tls(s("bw", "d", "proxy", 100.0, 1100.0), "1.2"),
        ];
        let md = markdown(&v, "t");
        assert!(
            md.contains("| bandwidth (Mbps) | proxy · TLS 1.3 | proxy · TLS 1.2 |"),
            "{md}"
        );
        assert!(md.contains("| 5 | 4.00 s | 5.00 s |"), "{md}");
    }

    #[test]
    fn targets_are_series_and_compared_with_their_own_plain() {
        let v = vec![
            s("cable", "proxy", "proxy", 20.0, 1000.0),
            target(s("cable", "proxy", "proxy", 20.0, 1300.0), "browser"),
            s("cable", "plain", "plain", 20.0, 100.0),
            target(s("cable", "plain", "plain", 20.0, 200.0), "browser"),
        ];
        let aggs = aggregate(&v);
        assert_eq!(aggs.len(), 4);
        assert_eq!(aggs[0].series, "proxy · native");
        assert_eq!(aggs[1].series, "proxy · browser");
        let md = markdown(&v, "t");
        assert!(md.contains("| proxy · native | 10.0× |"), "{md}");
        assert!(md.contains("| proxy · browser | 6.5× |"), "{md}");
    }

    #[test]
    fn browser_is_compared_with_native_and_native_plain() {
        let mut b = target(
            s("cable", "proxy-browser", "proxy", 20.0, 1300.0),
            "browser",
        );
        b.prover_wasm_memory_bytes = 40_000_000;
        let v = vec![
            s("cable", "proxy", "proxy", 20.0, 1000.0),
            b,
            s("cable", "plain", "plain", 20.0, 100.0),
        ];
        let md = markdown(&v, "t");
        // No browser plain: the native plain of the profile is the floor.
        assert!(md.contains("| proxy · browser | 13.0× |"), "{md}");
        assert!(md.contains("browser as a multiple of native"), "{md}");
        assert!(md.contains("| proxy · browser | 1.3× |"), "{md}");
        assert!(md.contains("WebAssembly memory"), "{md}");
        assert!(md.contains("| proxy · browser | 40.00 MB |"), "{md}");
        let wasm = &md[md.find("WebAssembly memory").unwrap()..];
        let wasm = &wasm[..wasm.find("\n\n#").unwrap_or(wasm.len())];
        assert!(!wasm.contains("proxy · native"), "{wasm}");
        // Native only: neither table.
        let md = markdown(&v[..1], "t");
        assert!(
            !md.contains("browser as a multiple") && !md.contains("WebAssembly"),
            "{md}"
        );
    }

    #[test]
    fn refused_samples_are_counted_in_the_report() {
        let v = vec![s("cable", "peer", "adapter:peer", 20.0, 1600.0)];
        let r = vec![Refused {
            group: "cable".into(),
            name: "peer".into(),
            mode: "adapter:peer".into(),
            verdict: "rejected".into(),
            reason: "bad | proof".into(),
            ..Default::default()
        }];
        let md = markdown_with_refused(&v, &r, "t");
        assert!(md.contains("1 accepted, 1 refused"), "{md}");
        assert!(md.contains("**1** (rejected: bad \\| proof)"), "{md}");
        assert!(md.contains("finalize"), "{md}");
    }

    #[test]
    fn compare_shows_percent_change() {
        let base = vec![s("cable", "proxy", "proxy", 20.0, 2000.0)];
        let new = vec![s("cable", "proxy", "proxy", 20.0, 1500.0)];
        let md = compare(&base, &new);
        assert!(md.contains("1.50 s (**-25.0%**)"), "{md}");
    }
}
