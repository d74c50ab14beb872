//! Charts as SVG, written by hand (no fonts or system libraries needed), in
//! light and dark variants, and the Markdown report beside them.
//!
//! - one chart per sweep (`<axis>_{light,dark}.svg`): runtime against the
//!   swept value, one colour per series (see [`crate::report`]), the mean
//!   as a solid line, the min-max over samples as a band, the online phase
//!   as a dashed line when it differs from the total;
//! - three charts for the profiles, grouped bars per profile and series
//!   (native and browser side by side), min-max whiskers, the mean above
//!   each bar:
//!   - `profiles_*.svg`, runtime: preprocessing (a lighter, less saturated
//!     shade of the series colour, in both themes) under the rest;
//!   - `profiles_bytes_*.svg`: the prover's protocol bytes up and down, a
//!     panel each;
//!   - `profiles_memory_*.svg`: per-sample peaks of the prover's RSS, the
//!     verifier's RSS and, on the browser target, the WebAssembly memory;
//! - [`lines`]: stacked line-chart panels for other benchmarks (the
//!   attested-TLS workloads), sharing this module's escaping, ticks and
//!   themes.
//!
//! Where the values of a chart (of a panel) span more than [`LOG_SPAN`],
//! the value axis is a log one with ticks at 1, 2, 5 × 10^k (decades past
//! 2.5 decades), labelled with units; the stacked runtime bars instead get
//! one linear panel per mode, so their parts stay to scale. A note under the
//! chart, and in the report, says which. Legends show the mark the chart
//! uses: a filled rectangle per bar series and per stacked part, a line per
//! line, a band, a whisker.
//!
//! This module only reads samples; it never runs anything.

pub mod lines;

use crate::metrics::{read_csv, read_refused, Refused, Sample};
use crate::report::{aggregate, classify, markdown_with_refused, Agg, Axis, GroupKind, Stat};
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

/// Charts whose values span more than this ratio get a log axis (stacked
/// runtime bars get a panel per mode instead).
pub const LOG_SPAN: f64 = 10.0;

/// The ratio of the greatest to the least positive value (1 when none).
pub(crate) fn span(values: &[f64]) -> f64 {
    let (lo, hi) = values
        .iter()
        .copied()
        .filter(|v| *v > 0.0 && v.is_finite())
        .fold((f64::INFINITY, 0.0f64), |(a, b), v| (a.min(v), b.max(v)));
    if hi > 0.0 {
        hi / lo
    } else {
        1.0
    }
}

/// The 1, 2 or 5 × 10^k at or above `v` (`up`), or at or below it.
fn nice125(v: f64, up: bool) -> f64 {
    let mag = 10f64.powf(v.log10().floor());
    let c = [1.0, 2.0, 5.0, 10.0].map(|c| c * mag);
    if up {
        c.into_iter()
            .find(|x| *x >= v * (1.0 - 1e-9))
            .unwrap_or(10.0 * mag)
    } else {
        c.into_iter()
            .rev()
            .find(|x| *x <= v * (1.0 + 1e-9))
            .unwrap_or(mag)
    }
}

/// How the value axis maps numbers: linear from 0, or log between two
/// round bounds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Scale {
    Linear { top: f64 },
    Log { lo: f64, hi: f64 },
}

impl Scale {
    /// Linear unless the positive values span more than [`LOG_SPAN`];
    /// `headroom` above the greatest value for the labels.
    pub(crate) fn for_values(values: &[f64], headroom: f64) -> Scale {
        let hi = values
            .iter()
            .copied()
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max)
            .max(1e-9);
        if span(values) > LOG_SPAN {
            let lo = values
                .iter()
                .copied()
                .filter(|v| *v > 0.0 && v.is_finite())
                .fold(f64::INFINITY, f64::min);
            let (a, b) = (nice125(lo / 1.5, false), nice125(hi * headroom, true));
            if (b / a).log10() > 2.5 {
                // Decades only: round the bounds to decades too.
                Scale::Log {
                    lo: 10f64.powf((lo / 1.5).log10().floor()),
                    hi: 10f64.powf((hi * headroom).log10().ceil()),
                }
            } else {
                Scale::Log { lo: a, hi: b }
            }
        } else {
            let step = nice_step(hi * headroom, 5.0);
            Scale::Linear {
                top: (hi * headroom / step).ceil() * step,
            }
        }
    }

    pub(crate) fn is_log(&self) -> bool {
        matches!(self, Scale::Log { .. })
    }

    /// Where `v` falls: 0 at the bottom, 1 at the top.
    fn frac(&self, v: f64) -> f64 {
        let t = match *self {
            Scale::Linear { top } => v / top,
            Scale::Log { lo, hi } if v > 0.0 => (v / lo).ln() / (hi / lo).ln(),
            Scale::Log { .. } => 0.0,
        };
        t.clamp(0.0, 1.05)
    }

    /// Gridlines: nice steps from 0, or 1, 2, 5 × 10^k (decades alone
    /// past 2.5 decades).
    pub(crate) fn ticks(&self) -> Vec<f64> {
        match *self {
            Scale::Linear { top } => {
                let step = nice_step(top, 5.0);
                (0..)
                    .map(|i| i as f64 * step)
                    .take_while(|y| *y <= top + step * 1e-9)
                    .collect()
            }
            Scale::Log { lo, hi } => {
                let mants: &[f64] = if (hi / lo).log10() > 2.5 {
                    &[1.0]
                } else {
                    &[1.0, 2.0, 5.0]
                };
                let mut out = Vec::new();
                let mut e = lo.log10().floor() as i32;
                while 10f64.powi(e) <= hi * (1.0 + 1e-9) {
                    for m in mants {
                        let v = m * 10f64.powi(e);
                        if v >= lo * (1.0 - 1e-9) && v <= hi * (1.0 + 1e-9) {
                            out.push(v);
                        }
                    }
                    e += 1;
                }
                out
            }
        }
    }
}

/// What a chart's values are: seconds or bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Quantity {
    Seconds,
    Bytes,
}

/// An axis tick with its unit: `200 ms`, `2 s`, `10 KB`, `1 GB`.
fn fmt_qty(v: f64, q: Quantity) -> String {
    if v == 0.0 {
        return "0".into();
    }
    match q {
        Quantity::Seconds if v >= 1.0 => format!("{} s", fmt_tick(v)),
        Quantity::Seconds => format!("{} ms", fmt_tick(v * 1e3)),
        Quantity::Bytes => {
            let (d, u) = if v >= 1e9 {
                (1e9, "GB")
            } else if v >= 1e6 {
                (1e6, "MB")
            } else if v >= 1e3 {
                (1e3, "KB")
            } else {
                (1.0, "B")
            };
            format!("{} {u}", fmt_tick(v / d))
        }
    }
}

/// A ratio for a note: `55×`, `17,000×`.
fn fmt_times(v: f64) -> String {
    if v < 100.0 {
        return format!("{v:.0}×");
    }
    let mag = 10f64.powf(v.log10().floor() - 1.0);
    let r = ((v / mag).round() * mag) as u64;
    let digits = r.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    format!("{out}×")
}

/// A bar's label: `6.50 s`, `310 ms`, `18.2 MB`.
fn fmt_label(v: f64, q: Quantity) -> String {
    match q {
        Quantity::Seconds if v >= 1.0 => format!("{v:.2} s"),
        Quantity::Seconds => format!("{:.0} ms", v * 1e3),
        Quantity::Bytes if v >= 1e9 => format!("{:.2} GB", v / 1e9),
        Quantity::Bytes if v >= 1e6 => format!("{:.1} MB", v / 1e6),
        Quantity::Bytes if v >= 1e4 => format!("{:.0} KB", v / 1e3),
        Quantity::Bytes if v >= 1e3 => format!("{:.1} KB", v / 1e3),
        Quantity::Bytes => format!("{v:.0} B"),
    }
}

fn rgb(hex: &str) -> [f64; 3] {
    let h = hex.trim_start_matches('#');
    let c = |i: usize| u8::from_str_radix(h.get(i..i + 2).unwrap_or("00"), 16).unwrap_or(0);
    [c(0), c(2), c(4)].map(|x| x as f64 / 255.0)
}

/// The relative luminance of a `#rrggbb` colour (WCAG 2).
#[cfg(test)]
pub(crate) fn luminance(hex: &str) -> f64 {
    let lin = |c: f64| {
        if c <= 0.03928 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    };
    let [r, g, b] = rgb(hex).map(lin);
    0.2126 * r + 0.7152 * g + 0.0722 * b
}

/// The lighter, less saturated shade of a series colour that marks the
/// preprocessing part of a stacked bar: mixed half-way to white, an opaque
/// colour in both themes (a transparent fill over the dark background would
/// come out darker than the colour, not lighter).
pub(crate) fn lighter(hex: &str) -> String {
    let [r, g, b] = rgb(hex).map(|c| ((c + (1.0 - c) * 0.5) * 255.0).round() as u8);
    format!("#{r:02x}{g:02x}{b:02x}")
}

struct Frame {
    x0: f64,
    x1: f64,
    log_x: bool,
    y: Scale,
    /// The plot area's top and bottom in pixels.
    top: f64,
    bottom: f64,
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
        self.bottom - self.y.frac(y) * (self.bottom - self.top)
    }
}

fn header(svg: &mut String, t: &Theme, h: f64, title: &str, subtitle: &str) {
    let _ = write!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{h}\" viewBox=\"0 0 {W} {h}\" {FONT}>\n\
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

/// Gridlines and tick labels (with units) of `f`'s value axis, and the
/// axis title, which says when the axis is a log one.
fn y_axis(svg: &mut String, t: &Theme, f: &Frame, q: Quantity, label: &str) {
    let _ = writeln!(
        svg,
        "<g class=\"y-axis\" data-scale=\"{}\">",
        if f.y.is_log() { "log" } else { "linear" }
    );
    for y in f.y.ticks() {
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
            fmt_qty(y, q)
        );
    }
    let cy = (f.top + f.bottom) / 2.0;
    let _ = writeln!(
        svg,
        "<text x=\"16\" y=\"{cy:.1}\" font-size=\"12\" fill=\"{}\" text-anchor=\"middle\" transform=\"rotate(-90 16 {cy:.1})\">{}{}</text>\n</g>",
        t.fg,
        esc(label),
        if f.y.is_log() { ", log scale" } else { "" }
    );
}

/// How a legend entry is drawn: the mark the chart uses for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Swatch {
    Line,
    Dashed,
    /// A filled rectangle, for bars and bar parts.
    Bar,
    /// A translucent rectangle, for a min-max band.
    Band,
    /// A capped vertical line, for min-max whiskers.
    Whisker,
}

struct Entry {
    label: String,
    color: String,
    swatch: Swatch,
}

fn entry(label: impl Into<String>, color: &str, swatch: Swatch) -> Entry {
    Entry {
        label: label.into(),
        color: color.into(),
        swatch,
    }
}

fn legend(svg: &mut String, t: &Theme, entries: &[Entry]) {
    let x = W - MR + 18.0;
    let mut y = MT + 8.0;
    svg.push_str("<g class=\"legend\">\n");
    for e in entries {
        let c = &e.color;
        let mark = match e.swatch {
            Swatch::Line | Swatch::Dashed => format!(
                "<line x1=\"{x}\" x2=\"{}\" y1=\"{y}\" y2=\"{y}\" stroke=\"{c}\" stroke-width=\"2.5\"{}/>",
                x + 24.0,
                if e.swatch == Swatch::Dashed {
                    " stroke-dasharray=\"5 4\""
                } else {
                    ""
                }
            ),
            Swatch::Bar => format!(
                "<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"12\" fill=\"{c}\"/>",
                x + 5.0,
                y - 6.0
            ),
            Swatch::Band => format!(
                "<rect x=\"{x}\" y=\"{}\" width=\"24\" height=\"12\" fill=\"{c}\" fill-opacity=\"0.3\"/>",
                y - 6.0
            ),
            Swatch::Whisker => format!(
                "<path d=\"M{0},{1}H{2}M{3},{1}V{4}M{0},{4}H{2}\" stroke=\"{c}\" stroke-width=\"1.2\" fill=\"none\"/>",
                x + 8.0,
                y - 7.0,
                x + 16.0,
                x + 12.0,
                y + 7.0
            ),
        };
        let _ = writeln!(
            svg,
            "<g class=\"legend-entry\">{mark}<text x=\"{}\" y=\"{}\" font-size=\"12\" fill=\"{}\">{}</text></g>",
            x + 32.0,
            y + 4.0,
            t.fg,
            esc(&e.label)
        );
        y += 20.0;
    }
    svg.push_str("</g>\n");
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

/// The runtime axis of a sweep chart.
fn sweep_scale(aggs: &[&Agg]) -> Scale {
    Scale::for_values(&sweep_values(aggs), 1.08)
}

fn sweep_values(aggs: &[&Agg]) -> Vec<f64> {
    aggs.iter()
        .flat_map(|a| [a.total_min, a.total_max, a.online_mean])
        .map(|v| v / 1e3)
        .collect()
}

/// The note under a sweep chart: why its runtime axis is a log one.
fn sweep_note(aggs: &[&Agg]) -> Option<String> {
    sweep_scale(aggs).is_log().then(|| {
        format!(
            "Log runtime axis: runtimes span {}, more than {LOG_SPAN:.0}×.",
            fmt_times(span(&sweep_values(aggs)))
        )
    })
}

/// A sweep chart: runtime against `axis`, one line per series (a log
/// runtime axis when the runtimes span more than [`LOG_SPAN`]).
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
    let f = Frame {
        x0,
        x1,
        log_x,
        y: sweep_scale(aggs),
        top: MT,
        bottom: H - MB,
    };
    let mut svg = String::new();
    let title = format!(
        "Runtime vs {}",
        axis.label().split(" (").next().unwrap_or("")
    );
    header(
        &mut svg,
        t,
        H,
        &title,
        &format!("{group}: {}", subtitle_for(aggs, axis)),
    );
    y_axis(&mut svg, t, &f, Quantity::Seconds, "runtime");
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
        legend_entries.push(entry(format!("{m} total"), color, Swatch::Line));
        let phased = pts
            .iter()
            .any(|a| (a.total_mean - a.online_mean).abs() > 0.01 * a.total_mean.max(1.0));
        if phased {
            let _ = writeln!(
                svg,
                "<polyline points=\"{}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"1.8\" stroke-dasharray=\"5 4\"/>",
                line(|a| a.online_mean)
            );
            legend_entries.push(entry(format!("{m} online"), color, Swatch::Dashed));
        }
    }
    legend_entries.push(entry("min–max", t.muted, Swatch::Band));
    legend(&mut svg, t, &legend_entries);
    svg.push_str("</svg>\n");
    svg
}

/// One bar: a series' mean in one profile, its min-max over samples, and
/// the lower stacked part (preprocessing) where the chart stacks.
struct Bar {
    group: usize,
    series: usize,
    mean: f64,
    lo: f64,
    hi: f64,
    part: Option<f64>,
}

struct Panel {
    title: String,
    bars: Vec<Bar>,
}

/// Grouped bars by profile, in one or more panels stacked vertically, each
/// with its own value axis.
struct BarChart {
    title: String,
    subtitle: String,
    y_label: String,
    q: Quantity,
    /// Profile name and its network, as the x labels say.
    groups: Vec<(String, String)>,
    series: Vec<String>,
    panels: Vec<Panel>,
    /// The line under the chart (why a log axis or panels), if any.
    note: Option<String>,
}

impl BarChart {
    fn scale(p: &Panel) -> Scale {
        let vals: Vec<f64> = p.bars.iter().flat_map(|b| [b.mean, b.lo, b.hi]).collect();
        Scale::for_values(&vals, 1.15)
    }

    /// The note for panels on a log axis, if any.
    fn log_note(&self) -> Option<String> {
        let logs: Vec<(&str, f64)> = self
            .panels
            .iter()
            .filter(|p| Self::scale(p).is_log())
            .map(|p| {
                let vals: Vec<f64> = p.bars.iter().flat_map(|b| [b.mean, b.lo, b.hi]).collect();
                (p.title.as_str(), span(&vals))
            })
            .collect();
        if logs.is_empty() {
            return None;
        }
        let widest = logs.iter().map(|l| l.1).fold(0.0, f64::max);
        let which = if self.panels.len() == 1 {
            "Log axis".to_string()
        } else if logs.len() == self.panels.len() {
            "Log axes".to_string()
        } else {
            format!(
                "Log axis for {}",
                logs.iter().map(|l| l.0).collect::<Vec<_>>().join(", ")
            )
        };
        let decades = self
            .panels
            .iter()
            .map(Self::scale)
            .filter(|s| s.is_log())
            .map(|s| {
                s.ticks().len() >= 2 && {
                    let t = s.ticks();
                    (t[1] / t[0] - 10.0).abs() < 1e-6
                }
            })
            .collect::<Vec<_>>();
        let grid = if decades.iter().all(|d| *d) {
            "every 10×"
        } else if decades.iter().any(|d| *d) {
            "1, 2, 5 × 10ᵏ or every 10×"
        } else {
            "1, 2, 5 × 10ᵏ"
        };
        Some(format!(
            "{which}: values span {}, more than {LOG_SPAN:.0}×; gridlines at {grid}.",
            fmt_times(widest)
        ))
    }

    /// The width of a bar in a panel with `n` series per profile.
    fn bar_w(&self, n: usize) -> f64 {
        let slot = (W - ML - MR) / self.groups.len().max(1) as f64;
        (slot * 0.8 / n.max(1) as f64).min(48.0)
    }

    /// The series a panel has, in the chart's order.
    fn present(&self, p: &Panel) -> Vec<usize> {
        (0..self.series.len())
            .filter(|s| p.bars.iter().any(|b| b.series == *s))
            .collect()
    }

    /// Whether a panel's value labels are wider than its bars, and so
    /// drawn upright above them.
    fn upright_labels(&self, p: &Panel) -> bool {
        let n = self.present(p).len();
        // Room to the next label: the next bar's, or the next profile's.
        let w = if n == 1 {
            (W - ML - MR) / self.groups.len().max(1) as f64 * 0.9
        } else {
            self.bar_w(n)
        };
        p.bars
            .iter()
            .any(|b| fmt_label(b.mean, self.q).chars().count() as f64 * 5.8 > w - 2.0)
    }

    fn svg(&self, t: &Theme) -> String {
        let n = self.panels.len().max(1);
        let upright = self.panels.iter().any(|p| self.upright_labels(p));
        let panel_h = match (n, upright) {
            (1, _) => H - MT - 28.0,
            (_, false) => 215.0,
            (_, true) => 250.0,
        };
        let total_h = MT + n as f64 * panel_h + 28.0;
        let mut svg = String::new();
        header(&mut svg, t, total_h, &self.title, &self.subtitle);
        let mut stacked = false;
        let mut used: Vec<usize> = Vec::new();
        for (pi, p) in self.panels.iter().enumerate() {
            let y0 = MT + pi as f64 * panel_h;
            let up = self.upright_labels(p);
            let f = Frame {
                x0: 0.0,
                x1: 1.0,
                log_x: false,
                y: Self::scale(p),
                // Upright labels above the tallest bar need room.
                top: y0 + if n == 1 { 4.0 } else { 24.0 } + if up { 40.0 } else { 0.0 },
                bottom: y0 + panel_h - 40.0,
            };
            let _ = writeln!(svg, "<g class=\"panel\" data-title=\"{}\">", esc(&p.title));
            if n > 1 {
                let _ = writeln!(
                    svg,
                    "<text x=\"{ML}\" y=\"{:.1}\" font-size=\"13\" font-weight=\"600\" fill=\"{}\">{}</text>",
                    y0 + 12.0,
                    t.fg,
                    esc(&p.title)
                );
            }
            y_axis(&mut svg, t, &f, self.q, &self.y_label);
            let _ = writeln!(
                svg,
                "<line x1=\"{ML}\" x2=\"{}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"{}\"/>",
                W - MR,
                f.bottom,
                f.bottom,
                t.muted
            );
            let present = self.present(p);
            let slot = (W - ML - MR) / self.groups.len().max(1) as f64;
            let bar_w = self.bar_w(present.len());
            for (gi, (g, net)) in self.groups.iter().enumerate() {
                let cx = ML + slot * (gi as f64 + 0.5);
                let _ = writeln!(
                    svg,
                    "<text x=\"{cx:.1}\" y=\"{:.1}\" font-size=\"12\" text-anchor=\"middle\" fill=\"{}\">{}</text>\
                     <text x=\"{cx:.1}\" y=\"{:.1}\" font-size=\"10.5\" text-anchor=\"middle\" fill=\"{}\">{}</text>",
                    f.bottom + 16.0,
                    t.fg,
                    esc(g),
                    f.bottom + 30.0,
                    t.muted,
                    esc(net)
                );
                for (si, s) in present.iter().enumerate() {
                    let Some(b) = p.bars.iter().find(|b| b.group == gi && b.series == *s) else {
                        continue;
                    };
                    if !used.contains(s) {
                        used.push(*s);
                    }
                    let color = t.palette[s % t.palette.len()];
                    let x = cx - bar_w * present.len() as f64 / 2.0 + bar_w * si as f64 + 2.0;
                    let w = bar_w - 4.0;
                    let base = f.bottom;
                    let top = f.py(b.mean);
                    // On a log axis a stacked part's height would not be
                    // its share: the split is drawn on linear axes only.
                    match b.part.filter(|v| *v > 0.0 && !f.y.is_log()) {
                        Some(part) => {
                            stacked = true;
                            let mid = f.py(part.min(b.mean));
                            let _ = writeln!(
                                svg,
                                "<rect class=\"pre\" x=\"{x:.1}\" y=\"{mid:.1}\" width=\"{w:.1}\" height=\"{:.1}\" fill=\"{}\"/>\
                                 <rect class=\"online\" x=\"{x:.1}\" y=\"{top:.1}\" width=\"{w:.1}\" height=\"{:.1}\" fill=\"{color}\"/>",
                                (base - mid).max(0.0),
                                lighter(color),
                                (mid - top).max(0.0)
                            );
                        }
                        None => {
                            let _ = writeln!(
                                svg,
                                "<rect class=\"bar\" x=\"{x:.1}\" y=\"{top:.1}\" width=\"{w:.1}\" height=\"{:.1}\" fill=\"{color}\"/>",
                                (base - top).max(0.0)
                            );
                        }
                    }
                    let wx = x + w / 2.0;
                    let (ylo, yhi) = (f.py(b.lo), f.py(b.hi));
                    if b.hi > b.lo {
                        let _ = writeln!(
                            svg,
                            "<path class=\"whisker\" d=\"M{:.1},{ylo:.1}H{:.1}M{wx:.1},{ylo:.1}V{yhi:.1}M{:.1},{yhi:.1}H{:.1}\" stroke=\"{}\" stroke-width=\"1.2\" fill=\"none\"/>",
                            wx - 3.0,
                            wx + 3.0,
                            wx - 3.0,
                            wx + 3.0,
                            t.fg
                        );
                    }
                    let ly = yhi.min(top) - 5.0;
                    if up {
                        let lx = wx + 3.5;
                        let _ = writeln!(
                            svg,
                            "<text x=\"{lx:.1}\" y=\"{ly:.1}\" font-size=\"10\" transform=\"rotate(-90 {lx:.1} {ly:.1})\" fill=\"{}\">{}</text>",
                            t.fg,
                            fmt_label(b.mean, self.q)
                        );
                    } else {
                        let _ = writeln!(
                            svg,
                            "<text x=\"{wx:.1}\" y=\"{ly:.1}\" font-size=\"10\" text-anchor=\"middle\" fill=\"{}\">{}</text>",
                            t.fg,
                            fmt_label(b.mean, self.q)
                        );
                    }
                }
            }
            svg.push_str("</g>\n");
        }
        let mut entries: Vec<Entry> = used
            .iter()
            .map(|s| {
                entry(
                    self.series[*s].clone(),
                    t.palette[s % t.palette.len()],
                    Swatch::Bar,
                )
            })
            .collect();
        if stacked {
            entries.push(entry("online + finalize", t.muted, Swatch::Bar));
            entries.push(entry("preprocessing", &lighter(t.muted), Swatch::Bar));
        }
        entries.push(entry("min–max", t.fg, Swatch::Whisker));
        legend(&mut svg, t, &entries);
        if let Some(note) = &self.note {
            let _ = writeln!(
                svg,
                "<text class=\"note\" x=\"{ML}\" y=\"{:.1}\" font-size=\"11\" fill=\"{}\">{}</text>",
                total_h - 10.0,
                t.muted,
                esc(note)
            );
        }
        svg.push_str("</svg>\n");
        svg
    }
}

/// The profiles, series and x labels of a profile chart.
fn profile_axes(aggs: &[&Agg]) -> (Vec<(String, String)>, Vec<String>) {
    let mut groups: Vec<(String, String)> = Vec::new();
    let mut series: Vec<String> = Vec::new();
    for a in aggs {
        if !groups.iter().any(|g| g.0 == a.group) {
            groups.push((
                a.group.clone(),
                format!(
                    "{} Mbps / {} ms",
                    fmt_tick(a.bandwidth),
                    fmt_tick(a.latency)
                ),
            ));
        }
        if !series.contains(&a.series) {
            series.push(a.series.clone());
        }
    }
    (groups, series)
}

/// A panel of `stat` per profile and series, in `scale` units; aggregates
/// with nothing measured (0) have no bar.
fn stat_panel(
    title: &str,
    aggs: &[&Agg],
    groups: &[(String, String)],
    series: &[String],
    stat: fn(&Agg) -> Stat,
) -> Panel {
    let bars = aggs
        .iter()
        .filter(|a| stat(a).max > 0.0)
        .map(|a| {
            let s = stat(a);
            Bar {
                group: groups.iter().position(|g| g.0 == a.group).unwrap_or(0),
                series: series.iter().position(|x| *x == a.series).unwrap_or(0),
                mean: s.mean,
                lo: s.min,
                hi: s.max,
                part: None,
            }
        })
        .collect();
    Panel {
        title: title.into(),
        bars,
    }
}

/// The request and response sizes, when the profiles share them.
fn sizes(aggs: &[&Agg]) -> String {
    let a0 = aggs[0];
    if aggs
        .iter()
        .any(|a| a.upload_size != a0.upload_size || a.download_size != a0.download_size)
    {
        return "request and response sizes differ by profile".into();
    }
    format!(
        "request {} KB · response {} KB",
        fmt_tick(aggs[0].upload_size / 1024.0),
        fmt_tick(aggs[0].download_size / 1024.0)
    )
}

/// The runtime chart of the profiles: grouped bars, preprocessing (lighter)
/// under the rest, min-max whiskers. Runtimes spanning more than
/// [`LOG_SPAN`] across modes get one panel per mode, each on a linear axis,
/// so a 0.3 s mode is not flattened beside a 6.5 s one.
fn profile_runtime(aggs: &[&Agg]) -> BarChart {
    let (groups, series) = profile_axes(aggs);
    let bar = |a: &Agg| Bar {
        group: groups.iter().position(|g| g.0 == a.group).unwrap_or(0),
        series: series.iter().position(|x| *x == a.series).unwrap_or(0),
        mean: a.total_mean / 1e3,
        lo: a.total_min / 1e3,
        hi: a.total_max / 1e3,
        part: Some(a.preprocess_mean / 1e3),
    };
    let all: Vec<f64> = aggs
        .iter()
        .flat_map(|a| [a.total_mean, a.total_min, a.total_max])
        .map(|v| v / 1e3)
        .collect();
    let mut modes: Vec<&str> = Vec::new();
    for a in aggs {
        if !modes.contains(&a.mode.as_str()) {
            modes.push(&a.mode);
        }
    }
    let wide = span(&all);
    let (panels, note) = if wide > LOG_SPAN && modes.len() > 1 {
        let panels = modes
            .iter()
            .map(|m| Panel {
                title: m.to_string(),
                bars: aggs
                    .iter()
                    .filter(|a| a.mode == *m)
                    .map(|a| bar(a))
                    .collect(),
            })
            .collect();
        (
            panels,
            Some(format!(
                "Runtimes span {wide:.0}× across modes (more than {LOG_SPAN:.0}×): one panel per mode, each on its own linear axis."
            )),
        )
    } else {
        let p = Panel {
            title: "runtime".into(),
            bars: aggs.iter().map(|a| bar(a)).collect(),
        };
        (vec![p], None)
    };
    let mut c = BarChart {
        title: "Runtime by network profile".into(),
        subtitle: format!(
            "{} · bars: mean (lighter part = preprocessing) · whiskers: min–max",
            sizes(aggs)
        ),
        y_label: "runtime".into(),
        q: Quantity::Seconds,
        groups,
        series,
        panels,
        note,
    };
    if let Some(log) = c.log_note() {
        // A mode whose own runtimes span more than 10x: a log panel.
        c.note = Some(match c.note {
            Some(n) => format!("{n} {log}"),
            None => log,
        });
    }
    c
}

/// The bytes chart of the profiles: the prover's protocol bytes up and
/// down, a panel each.
fn profile_bytes(aggs: &[&Agg]) -> BarChart {
    let (groups, series) = profile_axes(aggs);
    let panels: Vec<Panel> = [
        stat_panel(
            "Prover upload (protocol bytes)",
            aggs,
            &groups,
            &series,
            |a| a.stats.uploaded,
        ),
        stat_panel(
            "Prover download (protocol bytes)",
            aggs,
            &groups,
            &series,
            |a| a.stats.downloaded,
        ),
    ]
    .into_iter()
    .filter(|p| !p.bars.is_empty())
    .collect();
    let mut c = BarChart {
        title: "Bytes by network profile".into(),
        subtitle: format!("{} · bars: mean · whiskers: min–max", sizes(aggs)),
        y_label: "bytes".into(),
        q: Quantity::Bytes,
        groups,
        series,
        panels,
        note: None,
    };
    c.note = c.log_note();
    c
}

/// The memory chart of the profiles: per-sample peaks of the prover's RSS,
/// the verifier's RSS and (browser target) the WebAssembly memory.
fn profile_memory(aggs: &[&Agg]) -> BarChart {
    let (groups, series) = profile_axes(aggs);
    let panels: Vec<Panel> = [
        stat_panel("Prover peak memory (RSS)", aggs, &groups, &series, |a| {
            a.stats.prover_mem
        }),
        stat_panel("Verifier peak memory (RSS)", aggs, &groups, &series, |a| {
            a.stats.verifier_mem
        }),
        stat_panel(
            "Prover WebAssembly memory (browser)",
            aggs,
            &groups,
            &series,
            |a| a.stats.wasm_mem,
        ),
    ]
    .into_iter()
    .filter(|p| !p.bars.is_empty())
    .collect();
    let mut c = BarChart {
        title: "Peak memory by network profile".into(),
        subtitle: format!(
            "{} · bars: mean of per-sample peaks · whiskers: min–max",
            sizes(aggs)
        ),
        y_label: "memory".into(),
        q: Quantity::Bytes,
        groups,
        series,
        panels,
        note: None,
    };
    c.note = c.log_note();
    c
}

/// The profiles' runtime chart: stacked bars, or a linear panel per mode
/// when the runtimes span more than [`LOG_SPAN`].
pub fn profiles_svg(aggs: &[&Agg], t: &Theme) -> String {
    profile_runtime(aggs).svg(t)
}

/// The profiles' bytes chart: the prover's upload and download.
pub fn profile_bytes_svg(aggs: &[&Agg], t: &Theme) -> String {
    profile_bytes(aggs).svg(t)
}

/// The profiles' memory chart: prover, verifier, WebAssembly peaks.
pub fn profile_memory_svg(aggs: &[&Agg], t: &Theme) -> String {
    profile_memory(aggs).svg(t)
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
    // Each chart's file stem, caption and note.
    let mut charts: Vec<(String, String, Option<String>)> = Vec::new();
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
        for (stem, caption, chart) in [
            ("profiles", "Runtime", profile_runtime(&profiles)),
            ("profiles_bytes", "Bytes", profile_bytes(&profiles)),
            ("profiles_memory", "Peak memory", profile_memory(&profiles)),
        ] {
            if chart.panels.is_empty() {
                continue;
            }
            for t in [LIGHT, DARK] {
                let p = dir.join(format!("{stem}_{}.svg", t.name));
                std::fs::write(&p, chart.svg(&t))?;
                files.push(p);
            }
            charts.push((stem.into(), caption.into(), chart.note));
        }
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
        charts.push((stem, format!("Sweep {g}: runtime"), sweep_note(&ga)));
    }
    let mut md = markdown_with_refused(samples, refused, title);
    if !charts.is_empty() {
        md.push_str("## Charts\n\n");
        for (c, caption, note) in charts {
            let _ = writeln!(
                md,
                "![{caption}](./{c}_light.svg#gh-light-mode-only)\n![{caption}](./{c}_dark.svg#gh-dark-mode-only)\n"
            );
            if let Some(note) = note {
                let _ = writeln!(md, "*{note}*\n");
            }
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
    use crate::report::Stat;

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

    fn agg(group: &str, series: &str, total: f64, pre: f64, up: f64) -> Agg {
        let st = |v: f64| Stat {
            mean: v,
            min: v * 0.9,
            max: v * 1.1,
        };
        Agg {
            group: group.into(),
            mode: series.split(' ').next().unwrap().into(),
            series: series.into(),
            n: 3,
            total_mean: total,
            total_min: total * 0.9,
            total_max: total * 1.1,
            preprocess_mean: pre,
            bandwidth: 20.0,
            latency: 20.0,
            stats: crate::report::Stats {
                uploaded: st(up),
                downloaded: st(up * 1.2),
                prover_mem: st(3e7),
                verifier_mem: st(4e7),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn a_log_axis_only_past_ten_times() {
        // Proxy alone: 0.3 to 0.6 s, 135 to 160 KB: linear, one panel, no note.
        let near = [
            agg("cable", "proxy · native", 300.0, 100.0, 135e3),
            agg("fiber", "proxy · native", 600.0, 150.0, 160e3),
        ];
        let near: Vec<&Agg> = near.iter().collect();
        for svg in [
            profiles_svg(&near, &LIGHT),
            profile_bytes_svg(&near, &LIGHT),
            profile_memory_svg(&near, &DARK),
        ] {
            assert!(!svg.contains("data-scale=\"log\""), "{svg}");
            assert!(svg.contains("data-scale=\"linear\""), "{svg}");
            assert!(!svg.contains("class=\"note\""), "{svg}");
        }
        assert_eq!(
            profiles_svg(&near, &LIGHT)
                .matches("class=\"panel\"")
                .count(),
            1
        );
        // With MPC: 6.5 s and 26 MB. Runtime: a linear panel per mode (the
        // stacked parts stay to scale); bytes: a log axis, decade ticks.
        let far = [
            agg("cable", "proxy · native", 300.0, 100.0, 135e3),
            agg("cable", "mpc · native", 6500.0, 4000.0, 26e6),
        ];
        let far: Vec<&Agg> = far.iter().collect();
        let rt = profiles_svg(&far, &DARK);
        assert_eq!(rt.matches("class=\"panel\"").count(), 2, "{rt}");
        assert!(!rt.contains("data-scale=\"log\""), "{rt}");
        assert!(rt.contains("one panel per mode"), "{rt}");
        let by = profile_bytes_svg(&far, &LIGHT);
        assert_eq!(by.matches("data-scale=\"log\"").count(), 2, "{by}");
        assert!(
            by.contains(">100 KB</text>") && by.contains(">10 MB</text>"),
            "{by}"
        );
        assert!(by.contains("bytes, log scale"), "{by}");
        assert!(by.contains("Log axes: values span"), "{by}");
    }

    #[test]
    fn a_mode_spanning_ten_times_alone_gets_a_log_panel_without_parts() {
        // MPC at 0.5 s on one profile and 9 s on another: its own panel is a
        // log one, where a stacked part would not be to scale, so none.
        let v = [
            agg("cable", "proxy · native", 300.0, 100.0, 135e3),
            agg("cable", "mpc · native", 500.0, 200.0, 26e6),
            agg("fiber", "mpc · native", 9000.0, 5000.0, 26e6),
        ];
        let v: Vec<&Agg> = v.iter().collect();
        let svg = profiles_svg(&v, &LIGHT);
        assert_eq!(svg.matches("data-scale=\"log\"").count(), 1, "{svg}");
        assert_eq!(svg.matches("data-scale=\"linear\"").count(), 1, "{svg}");
        assert!(svg.contains("Log axis for mpc"), "{svg}");
        let mpc = &svg[svg.find("data-title=\"mpc\"").unwrap()..];
        assert!(!mpc.contains("class=\"pre\"") && mpc.contains("class=\"bar\""));
    }

    #[test]
    fn log_ticks_are_round() {
        let s = Scale::for_values(&[0.3, 6.5], 1.15);
        assert_eq!(s, Scale::Log { lo: 0.2, hi: 10.0 });
        let t: Vec<String> = s
            .ticks()
            .iter()
            .map(|v| fmt_qty(*v, Quantity::Seconds))
            .collect();
        assert_eq!(t, ["200 ms", "500 ms", "1 s", "2 s", "5 s", "10 s"]);
        let s = Scale::for_values(&[1500.0, 26e6], 1.15);
        let t: Vec<String> = s
            .ticks()
            .iter()
            .map(|v| fmt_qty(*v, Quantity::Bytes))
            .collect();
        assert_eq!(t, ["1 KB", "10 KB", "100 KB", "1 MB", "10 MB", "100 MB"]);
        assert!(!Scale::for_values(&[1.0, 9.9], 1.0).is_log());
    }

    #[test]
    fn the_preprocessing_part_is_lighter_in_both_themes() {
        for t in [LIGHT, DARK] {
            for c in t.palette {
                assert!(luminance(&lighter(c)) > luminance(c), "{} {c}", t.name);
            }
            // And as drawn: each bar's "pre" rect against its "online" rect.
            let a = [agg("cable", "mpc · native", 6500.0, 4000.0, 26e6)];
            let a: Vec<&Agg> = a.iter().collect();
            let svg = profiles_svg(&a, &t);
            let fill = |class: &str| {
                let r = &svg[svg.find(&format!("<rect class=\"{class}\"")).unwrap()..];
                let f = &r[r.find("fill=\"").unwrap() + 6..];
                f[..7].to_string()
            };
            let (pre, online) = (fill("pre"), fill("online"));
            assert!(
                luminance(&pre) > luminance(&online),
                "{}: {pre} {online}",
                t.name
            );
            assert!(!svg.contains("fill-opacity=\"0.45\""));
        }
    }

    #[test]
    fn legends_show_the_mark_the_chart_uses() {
        let a = [agg("cable", "mpc · native", 6500.0, 4000.0, 26e6)];
        let a: Vec<&Agg> = a.iter().collect();
        let svg = profiles_svg(&a, &DARK);
        let legend = &svg[svg.find("<g class=\"legend\">").unwrap()..];
        let entry = |label: &str| {
            legend
                .lines()
                .find(|l| l.contains(&format!(">{label}</text>")))
                .unwrap_or_else(|| panic!("{label}: {legend}"))
                .to_string()
        };
        for l in ["mpc · native", "online + finalize", "preprocessing"] {
            assert!(
                entry(l).starts_with("<g class=\"legend-entry\"><rect"),
                "{l}"
            );
        }
        // The two parts have distinct swatches.
        assert_ne!(
            entry("online + finalize").split("fill").nth(1),
            entry("preprocessing").split("fill").nth(1)
        );
        assert!(entry("min–max").contains("<path"));
        assert!(!legend.contains("<line"), "{legend}");
    }
}
