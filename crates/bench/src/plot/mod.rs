//! Charts as SVG, written by hand (no fonts or system libraries needed), in
//! light and dark variants, and the Markdown report beside them.
//!
//! - one chart per sweep: runtime against the swept value, one colour per
//!   series (see [`crate::report`]), the mean as a solid line, the min-max
//!   over samples as a band, the online phase as a dashed line when it
//!   differs from the total;
//! - one chart for the profiles: grouped bars per profile and series
//!   (native and browser side by side), preprocessing and online stacked,
//!   min-max whiskers;
//! - [`lines`]: stacked line-chart panels for other benchmarks (the
//!   attested-TLS workloads), sharing this module's escaping and ticks.
//!
//! This module only reads samples; it never runs anything.

pub mod lines;

use crate::metrics::{read_csv, read_refused, Refused, Sample};
use crate::report::{aggregate, classify, markdown_with_refused, Agg, Axis, GroupKind};
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// Colours of one variant.
#[derive(Clone, Copy)]
pub struct Theme {
    pub name: &'static str,
    bg: &'static str,
    fg: &'static str,
    muted: &'static str,
    grid: &'static str,
    palette: [&'static str; 6],
}

pub const LIGHT: Theme = Theme {
    name: "light",
    bg: "#ffffff",
    fg: "#1f2328",
    muted: "#59636e",
    grid: "#d8dee4",
    palette: [
        "#0969da", "#cf222e", "#1a7f37", "#8250df", "#bc4c00", "#1b7c83",
    ],
};

pub const DARK: Theme = Theme {
    name: "dark",
    bg: "#0d1117",
    fg: "#e6edf3",
    muted: "#9198a1",
    grid: "#30363d",
    palette: [
        "#58a6ff", "#ff7b72", "#3fb950", "#d2a8ff", "#ffa657", "#39c5cf",
    ],
};

const W: f64 = 760.0;
const H: f64 = 460.0;
const ML: f64 = 72.0;
const MR: f64 = 170.0;
const MT: f64 = 70.0;
const MB: f64 = 58.0;
const FONT: &str = "font-family=\"Inter, Helvetica, Arial, sans-serif\"";

pub(crate) fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A "nice" step for about `n` intervals over `range`.
pub(crate) fn nice_step(range: f64, n: f64) -> f64 {
    let raw = (range / n).max(1e-12);
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let nf = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 2.5 {
        2.5
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    nf * mag
}

fn fmt_tick(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v.abs() >= 100.0 || v.fract() == 0.0 {
        format!("{v:.0}")
    } else if v.abs() >= 1.0 {
        let s = format!("{v:.1}");
        s.trim_end_matches(".0").to_string()
    } else {
        let s = format!("{v:.2}");
        s.trim_end_matches('0').to_string()
    }
}

struct Frame {
    x0: f64,
    x1: f64,
    log_x: bool,
    y1: f64,
}

impl Frame {
    fn px(&self, x: f64) -> f64 {
        let t = if self.log_x {
            (x.ln() - self.x0.ln()) / (self.x1.ln() - self.x0.ln())
        } else {
            (x - self.x0) / (self.x1 - self.x0)
        };
        ML + t.clamp(-0.05, 1.05) * (W - ML - MR)
    }
    fn py(&self, y: f64) -> f64 {
        H - MB - (y / self.y1).clamp(0.0, 1.05) * (H - MT - MB)
    }
}

fn header(svg: &mut String, t: &Theme, title: &str, subtitle: &str) {
    let _ = write!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{H}\" viewBox=\"0 0 {W} {H}\" {FONT}>\n\
         <rect width=\"100%\" height=\"100%\" fill=\"{}\"/>\n\
         <text x=\"{ML}\" y=\"30\" font-size=\"18\" font-weight=\"600\" fill=\"{}\">{}</text>\n\
         <text x=\"{ML}\" y=\"50\" font-size=\"12\" fill=\"{}\">{}</text>\n",
        t.bg,
        t.fg,
        esc(title),
        t.muted,
        esc(subtitle)
    );
}

fn y_axis(svg: &mut String, t: &Theme, f: &Frame, label: &str) {
    let step = nice_step(f.y1, 5.0);
    let mut y = 0.0;
    while y <= f.y1 + step * 1e-9 {
        let py = f.py(y);
        let _ = writeln!(
            svg,
            "<line x1=\"{ML}\" x2=\"{}\" y1=\"{py:.1}\" y2=\"{py:.1}\" stroke=\"{}\" stroke-width=\"1\"/>\
             <text x=\"{}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"end\" fill=\"{}\">{}</text>",
            W - MR,
            t.grid,
            ML - 8.0,
            py + 4.0,
            t.muted,
            fmt_tick(y)
        );
        y += step;
    }
    let cy = (MT + H - MB) / 2.0;
    let _ = writeln!(
        svg,
        "<text x=\"18\" y=\"{cy}\" font-size=\"12\" fill=\"{}\" text-anchor=\"middle\" transform=\"rotate(-90 18 {cy})\">{}</text>",
        t.fg,
        esc(label)
    );
}

fn legend(svg: &mut String, t: &Theme, entries: &[(String, &str, bool)]) {
    let x = W - MR + 18.0;
    let mut y = MT + 8.0;
    for (label, color, dashed) in entries {
        let dash = if *dashed {
            " stroke-dasharray=\"5 4\""
        } else {
            ""
        };
        let _ = writeln!(
            svg,
            "<line x1=\"{x}\" x2=\"{}\" y1=\"{y}\" y2=\"{y}\" stroke=\"{color}\" stroke-width=\"2.5\"{dash}/>\
             <text x=\"{}\" y=\"{}\" font-size=\"12\" fill=\"{}\">{}</text>",
            x + 24.0,
            x + 32.0,
            y + 4.0,
            t.fg,
            esc(label)
        );
        y += 20.0;
    }
}

fn subtitle_for(aggs: &[&Agg], axis: Axis) -> String {
    let a = aggs[0];
    let mut parts = Vec::new();
    if axis != Axis::Bandwidth {
        parts.push(format!("bandwidth {} Mbps", fmt_tick(a.bandwidth)));
    }
    if axis != Axis::Latency {
        parts.push(format!("latency {} ms", fmt_tick(a.latency)));
    }
    if axis != Axis::Upload {
        parts.push(format!("request {} KB", fmt_tick(a.upload_size / 1024.0)));
    }
    if axis != Axis::Download {
        parts.push(format!(
            "response {} KB",
            fmt_tick(a.download_size / 1024.0)
        ));
    }
    let n = aggs.iter().map(|a| a.n).min().unwrap_or(0);
    parts.push(format!("{n}+ samples per point; band = min–max"));
    parts.join(" · ")
}

/// A sweep chart: runtime against `axis`, one line per series.
pub fn sweep_svg(group: &str, aggs: &[&Agg], axis: Axis, t: &Theme) -> String {
    let modes = {
        let mut m: Vec<&str> = Vec::new();
        for a in aggs {
            if !m.contains(&a.series.as_str()) {
                m.push(&a.series);
            }
        }
        m
    };
    let mut xs: Vec<f64> = aggs.iter().map(|a| axis.value(a)).collect();
    xs.sort_by(|a, b| a.total_cmp(b));
    xs.dedup();
    let (xmin, xmax) = (xs[0], *xs.last().expect("non-empty"));
    let log_x = xmin > 0.0 && xmax / xmin > 20.0;
    let (x0, x1) = if xmax > xmin {
        (xmin, xmax)
    } else {
        (xmin - 1.0, xmax + 1.0)
    };
    let ymax = aggs
        .iter()
        .map(|a| a.total_max / 1e3)
        .fold(0.0, f64::max)
        .max(1e-3);
    let y1 = {
        let step = nice_step(ymax * 1.08, 5.0);
        (ymax * 1.08 / step).ceil() * step
    };
    let f = Frame { x0, x1, log_x, y1 };
    let mut svg = String::new();
    let title = format!(
        "Runtime vs {}",
        axis.label().split(" (").next().unwrap_or("")
    );
    header(
        &mut svg,
        t,
        &title,
        &format!("{group}: {}", subtitle_for(aggs, axis)),
    );
    y_axis(&mut svg, t, &f, "runtime (s)");
    // x ticks at the measured values.
    let mut last_px = f64::NEG_INFINITY;
    for x in &xs {
        let px = f.px(*x);
        if px - last_px < 28.0 {
            continue;
        }
        last_px = px;
        let _ = writeln!(
            svg,
            "<line x1=\"{px:.1}\" x2=\"{px:.1}\" y1=\"{}\" y2=\"{}\" stroke=\"{}\"/>\
             <text x=\"{px:.1}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\" fill=\"{}\">{}</text>",
            H - MB,
            H - MB + 5.0,
            t.muted,
            H - MB + 19.0,
            t.muted,
            fmt_tick(*x)
        );
    }
    let _ = writeln!(
        svg,
        "<line x1=\"{ML}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" stroke=\"{}\"/>\
         <text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\" fill=\"{}\">{}{}</text>",
        W - MR,
        H - MB,
        H - MB,
        t.muted,
        (ML + W - MR) / 2.0,
        H - 14.0,
        t.fg,
        esc(axis.label()),
        if log_x { ", log scale" } else { "" }
    );
    let mut legend_entries = Vec::new();
    for (i, m) in modes.iter().enumerate() {
        let color = t.palette[i % t.palette.len()];
        let mut pts: Vec<&&Agg> = aggs.iter().filter(|a| a.series == *m).collect();
        pts.sort_by(|a, b| axis.value(a).total_cmp(&axis.value(b)));
        // Band: min along the top edge forwards, max backwards.
        let mut band = String::new();
        for a in &pts {
            let _ = write!(
                band,
                "{:.1},{:.1} ",
                f.px(axis.value(a)),
                f.py(a.total_max / 1e3)
            );
        }
        for a in pts.iter().rev() {
            let _ = write!(
                band,
                "{:.1},{:.1} ",
                f.px(axis.value(a)),
                f.py(a.total_min / 1e3)
            );
        }
        let _ = writeln!(
            svg,
            "<polygon points=\"{band}\" fill=\"{color}\" fill-opacity=\"0.18\" stroke=\"none\"/>"
        );
        let line = |get: fn(&Agg) -> f64| -> String {
            pts.iter()
                .map(|a| format!("{:.1},{:.1}", f.px(axis.value(a)), f.py(get(a) / 1e3)))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let _ = writeln!(
            svg,
            "<polyline points=\"{}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"2.5\" stroke-linejoin=\"round\"/>",
            line(|a| a.total_mean)
        );
        for a in &pts {
            let _ = writeln!(
                svg,
                "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3.5\" fill=\"{color}\" stroke=\"{}\" stroke-width=\"1\"/>",
                f.px(axis.value(a)),
                f.py(a.total_mean / 1e3),
                t.bg
            );
        }
        legend_entries.push((format!("{m} total"), color, false));
        let phased = pts
            .iter()
            .any(|a| (a.total_mean - a.online_mean).abs() > 0.01 * a.total_mean.max(1.0));
        if phased {
            let _ = writeln!(
                svg,
                "<polyline points=\"{}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"1.8\" stroke-dasharray=\"5 4\"/>",
                line(|a| a.online_mean)
            );
            legend_entries.push((format!("{m} online"), color, true));
        }
    }
    legend(&mut svg, t, &legend_entries);
    svg.push_str("</svg>\n");
    svg
}

/// The profiles chart: grouped bars, preprocessing + online stacked.
pub fn profiles_svg(aggs: &[&Agg], t: &Theme) -> String {
    let mut groups: Vec<&str> = Vec::new();
    let mut modes: Vec<&str> = Vec::new();
    for a in aggs {
        if !groups.contains(&a.group.as_str()) {
            groups.push(&a.group);
        }
        if !modes.contains(&a.series.as_str()) {
            modes.push(&a.series);
        }
    }
    let ymax = aggs
        .iter()
        .map(|a| a.total_max / 1e3)
        .fold(0.0, f64::max)
        .max(1e-3);
    let y1 = {
        let step = nice_step(ymax * 1.12, 5.0);
        (ymax * 1.12 / step).ceil() * step
    };
    let f = Frame {
        x0: 0.0,
        x1: 1.0,
        log_x: false,
        y1,
    };
    let mut svg = String::new();
    let a0 = aggs[0];
    header(
        &mut svg,
        t,
        "Runtime by network profile",
        &format!(
            "request {} KB · response {} KB · bars: mean (lighter part = preprocessing) · whiskers: min–max",
            fmt_tick(a0.upload_size / 1024.0),
            fmt_tick(a0.download_size / 1024.0)
        ),
    );
    y_axis(&mut svg, t, &f, "runtime (s)");
    let plot_w = W - ML - MR;
    let slot = plot_w / groups.len() as f64;
    let bar_w = (slot * 0.7 / modes.len() as f64).min(56.0);
    for (gi, g) in groups.iter().enumerate() {
        let cx = ML + slot * (gi as f64 + 0.5);
        let first = aggs
            .iter()
            .find(|a| a.group == *g)
            .expect("group has benches");
        let _ = writeln!(
            svg,
            "<text x=\"{cx:.1}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\" fill=\"{}\">{}</text>\
             <text x=\"{cx:.1}\" y=\"{}\" font-size=\"10.5\" text-anchor=\"middle\" fill=\"{}\">{} Mbps / {} ms</text>",
            H - MB + 18.0,
            t.fg,
            esc(g),
            H - MB + 33.0,
            t.muted,
            fmt_tick(first.bandwidth),
            fmt_tick(first.latency)
        );
        for (mi, m) in modes.iter().enumerate() {
            let Some(a) = aggs.iter().find(|a| a.group == *g && a.series == *m) else {
                continue;
            };
            let color = t.palette[mi % t.palette.len()];
            let x = cx - bar_w * modes.len() as f64 / 2.0 + bar_w * mi as f64 + 2.0;
            let w = bar_w - 4.0;
            let y_total = f.py(a.total_mean / 1e3);
            let y_pre = f.py(a.preprocess_mean / 1e3);
            let base = f.py(0.0);
            let _ = writeln!(
                svg,
                "<rect x=\"{x:.1}\" y=\"{y_pre:.1}\" width=\"{w:.1}\" height=\"{:.1}\" fill=\"{color}\" fill-opacity=\"0.45\"/>\
                 <rect x=\"{x:.1}\" y=\"{y_total:.1}\" width=\"{w:.1}\" height=\"{:.1}\" fill=\"{color}\"/>",
                (base - y_pre).max(0.0),
                (y_pre - y_total).max(0.0)
            );
            let wx = x + w / 2.0;
            let _ = writeln!(
                svg,
                "<line x1=\"{wx:.1}\" x2=\"{wx:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"{}\" stroke-width=\"1.2\"/>\
                 <text x=\"{wx:.1}\" y=\"{:.1}\" font-size=\"10.5\" text-anchor=\"middle\" fill=\"{}\">{}</text>",
                f.py(a.total_min / 1e3),
                f.py(a.total_max / 1e3),
                t.fg,
                f.py(a.total_max / 1e3) - 5.0,
                t.fg,
                if a.total_mean >= 1000.0 {
                    format!("{:.2} s", a.total_mean / 1e3)
                } else {
                    format!("{:.0} ms", a.total_mean)
                }
            );
        }
    }
    let entries: Vec<(String, &str, bool)> = modes
        .iter()
        .enumerate()
        .map(|(i, m)| (m.to_string(), t.palette[i % t.palette.len()], false))
        .collect();
    legend(&mut svg, t, &entries);
    svg.push_str("</svg>\n");
    svg
}

/// Write all charts for `samples` and `report.md` into `dir`.
pub fn plot_samples(
    samples: &[Sample],
    refused: &[Refused],
    dir: &Path,
    title: &str,
) -> anyhow::Result<Vec<PathBuf>> {
    anyhow::ensure!(
        !samples.is_empty(),
        "no samples to plot{}",
        if refused.is_empty() {
            String::new()
        } else {
            format!(" ({} refused)", refused.len())
        }
    );
    std::fs::create_dir_all(dir)?;
    let aggs = aggregate(samples);
    let mut files = Vec::new();
    let mut charts: Vec<String> = Vec::new();
    let kinds = classify(&aggs);
    let mut used = Vec::new();
    let profiles: Vec<&Agg> = aggs
        .iter()
        .filter(|a| {
            kinds
                .iter()
                .any(|(g, k)| g == &a.group && matches!(k, GroupKind::Profile))
        })
        .collect();
    if !profiles.is_empty() {
        for t in [LIGHT, DARK] {
            let p = dir.join(format!("profiles_{}.svg", t.name));
            std::fs::write(&p, profiles_svg(&profiles, &t))?;
            files.push(p);
        }
        charts.push("profiles".into());
    }
    for (g, k) in &kinds {
        let GroupKind::Sweep(axis) = k else { continue };
        let ga: Vec<&Agg> = aggs.iter().filter(|a| &a.group == g).collect();
        let mut stem = axis.slug().to_string();
        if used.contains(&stem) {
            stem = format!(
                "{}_{}",
                axis.slug(),
                g.replace(|c: char| !c.is_ascii_alphanumeric(), "-")
            );
        }
        used.push(stem.clone());
        for t in [LIGHT, DARK] {
            let p = dir.join(format!("{stem}_{}.svg", t.name));
            std::fs::write(&p, sweep_svg(g, &ga, *axis, &t))?;
            files.push(p);
        }
        charts.push(stem);
    }
    let mut md = markdown_with_refused(samples, refused, title);
    if !charts.is_empty() {
        md.push_str("## Charts\n\n");
        for c in charts {
            let _ = writeln!(
                md,
                "![{c}](./{c}_light.svg#gh-light-mode-only)\n![{c}](./{c}_dark.svg#gh-dark-mode-only)\n"
            );
        }
    }
    let p = dir.join("report.md");
    std::fs::write(&p, md)?;
    files.push(p);
    Ok(files)
}

/// `webproof bench plot`: read a CSV, write charts and report.
pub fn plot_csv(csv: &Path, dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let samples = read_csv(csv)?;
    let refused = read_refused(csv)?;
    plot_samples(
        &samples,
        &refused,
        dir,
        &format!("Benchmark report: {}", csv.display()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_steps() {
        assert_eq!(nice_step(10.0, 5.0), 2.0);
        assert_eq!(nice_step(1.0, 5.0), 0.2);
        assert_eq!(nice_step(70.0, 5.0), 20.0);
    }

    #[test]
    fn charts_are_written_for_profiles_and_sweeps() {
        let mk = |g: &str, n: &str, m: &str, bw: f64, t: f64| Sample {
            group: g.into(),
            name: n.into(),
            mode: m.into(),
            bandwidth: bw,
            latency: 25.0,
            download_size: 2048,
            upload_size: 1024,
            time_total: t,
            time_online: t * 0.6,
            time_preprocess: t * 0.4,
            ..Default::default()
        };
        let v = vec![
            mk("cable", "a", "proxy", 20.0, 1500.0),
            mk("cable", "b", "plain", 20.0, 80.0),
            mk("bandwidth", "p5", "proxy", 5.0, 4000.0),
            mk("bandwidth", "p1000", "proxy", 1000.0, 900.0),
        ];
        let dir = tempfile::tempdir().unwrap();
        let files = plot_samples(&v, &[], dir.path(), "t").unwrap();
        let names: Vec<String> = files
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        for n in [
            "profiles_light.svg",
            "profiles_dark.svg",
            "bandwidth_light.svg",
            "bandwidth_dark.svg",
            "report.md",
        ] {
            assert!(names.contains(&n.to_string()), "{names:?}");
        }
        let svg = std::fs::read_to_string(dir.path().join("bandwidth_dark.svg")).unwrap();
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("log scale"));
        assert!(svg.contains("proxy online"));
    }
}
