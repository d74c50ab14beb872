//! Stacked panels of line charts with optional error whiskers, for
//! benchmarks whose x axis is a setting (concurrency, message size): the
//! attested-TLS workloads draw with these. Same escaping, tick steps and
//! themes as the harness's charts ([`super`]): [`stack`] draws the light
//! variant, [`stack_themed`] either. The legend shows each series as a line
//! and, when a panel has error bars, a whisker. Drawn from result data only.

use super::{esc, nice_step, Theme, LIGHT};
use std::fmt::Write;

/// One line of a chart.
#[derive(Debug, Clone)]
pub struct Series {
    pub name: String,
    pub y: Vec<f64>,
    /// Optional error-bar half-widths, drawn as whiskers.
    pub err: Option<Vec<f64>>,
}

/// One panel: x values shared by all series; NaN points are skipped.
#[derive(Debug, Clone)]
pub struct Chart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub x: Vec<f64>,
    /// Space x values on a log2 axis (concurrency 1, 2, 4, ...).
    pub log2_x: bool,
    pub series: Vec<Series>,
}

const W: f64 = 720.0;
const H: f64 = 320.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 160.0;
const TOP: f64 = 36.0;
const BOTTOM: f64 = 52.0;

fn fmt_num(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v.abs() >= 1e5 || v.abs() < 1e-2 {
        format!("{v:.1e}")
    } else if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

fn panel(out: &mut String, c: &Chart, y0: f64, t: &Theme) {
    let pw = W - LEFT - RIGHT;
    let ph = H - TOP - BOTTOM;
    let tx = |x: f64| if c.log2_x { x.max(1e-9).log2() } else { x };
    let xs: Vec<f64> = c.x.iter().map(|&x| tx(x)).collect();
    let (mut xmin, mut xmax) = xs
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        });
    if !xmin.is_finite() {
        (xmin, xmax) = (0.0, 1.0);
    }
    if xmax - xmin < 1e-12 {
        xmin -= 0.5;
        xmax += 0.5;
    }
    let ymax = c
        .series
        .iter()
        .flat_map(|s| {
            s.y.iter().enumerate().map(|(i, &y)| {
                let e = s.err.as_ref().and_then(|e| e.get(i).copied());
                y + e.filter(|e| e.is_finite()).unwrap_or(0.0)
            })
        })
        .filter(|v| v.is_finite())
        .fold(0.0f64, f64::max);
    let step = nice_step(if ymax > 0.0 { ymax } else { 1.0 }, 5.0);
    let ytop = ((ymax / step).ceil().max(1.0)) * step;
    let px = |x: f64| LEFT + (x - xmin) / (xmax - xmin) * pw;
    let py = |y: f64| y0 + TOP + ph - y / ytop * ph;

    let _ = writeln!(
        out,
        r#"<text x="{:.1}" y="{:.1}" font-size="15" font-weight="bold" fill="{}">{}</text>"#,
        LEFT,
        y0 + 22.0,
        t.fg,
        esc(&c.title)
    );
    // Grid and y ticks.
    let mut v = 0.0;
    while v <= ytop + step * 1e-9 {
        let y = py(v);
        let _ = writeln!(
            out,
            r#"<line x1="{LEFT:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="{}"/><text x="{:.1}" y="{:.1}" font-size="11" text-anchor="end" fill="{}">{}</text>"#,
            LEFT + pw,
            t.grid,
            LEFT - 6.0,
            y + 4.0,
            t.muted,
            fmt_num(v)
        );
        v += step;
    }
    // X ticks at the data points.
    for (&x, &raw) in xs.iter().zip(&c.x) {
        let _ = writeln!(
            out,
            r#"<line x1="{0:.1}" y1="{1:.1}" x2="{0:.1}" y2="{2:.1}" stroke="{5}"/><text x="{0:.1}" y="{3:.1}" font-size="11" text-anchor="middle" fill="{6}">{4}</text>"#,
            px(x),
            y0 + TOP,
            y0 + TOP + ph,
            y0 + TOP + ph + 16.0,
            fmt_num(raw),
            t.grid,
            t.muted
        );
    }
    let _ = writeln!(
        out,
        r#"<rect x="{LEFT:.1}" y="{:.1}" width="{pw:.1}" height="{ph:.1}" fill="none" stroke="{}"/>"#,
        y0 + TOP,
        t.muted
    );
    let _ = writeln!(
        out,
        r#"<text x="{:.1}" y="{:.1}" font-size="12" text-anchor="middle" fill="{}">{}</text>"#,
        LEFT + pw / 2.0,
        y0 + H - 12.0,
        t.fg,
        esc(&c.x_label)
    );
    let _ = writeln!(
        out,
        r#"<text transform="translate({:.1},{:.1}) rotate(-90)" font-size="12" text-anchor="middle" fill="{}">{}</text>"#,
        18.0,
        y0 + TOP + ph / 2.0,
        t.fg,
        esc(&c.y_label)
    );
    for (i, s) in c.series.iter().enumerate() {
        let color = t.palette[i % t.palette.len()];
        let pts: Vec<(f64, f64)> = xs
            .iter()
            .zip(&s.y)
            .filter(|(_, y)| y.is_finite())
            .map(|(&x, &y)| (px(x), py(y)))
            .collect();
        let path: String = pts.iter().map(|(x, y)| format!("{x:.1},{y:.1} ")).collect();
        let _ = writeln!(
            out,
            r#"<polyline points="{}" fill="none" stroke="{color}" stroke-width="2"/>"#,
            path.trim_end()
        );
        for (x, y) in &pts {
            let _ = writeln!(
                out,
                r#"<circle cx="{x:.1}" cy="{y:.1}" r="3" fill="{color}"/>"#
            );
        }
        if let Some(err) = &s.err {
            for ((&x, &y), &e) in xs.iter().zip(&s.y).zip(err) {
                if y.is_finite() && e.is_finite() && e > 0.0 {
                    let (x, lo, hi) = (px(x), py((y - e).max(0.0)), py(y + e));
                    let _ = writeln!(
                        out,
                        r#"<path d="M{:.1},{lo:.1}H{:.1}M{x:.1},{lo:.1}V{hi:.1}M{:.1},{hi:.1}H{:.1}" stroke="{color}" fill="none"/>"#,
                        x - 4.0,
                        x + 4.0,
                        x - 4.0,
                        x + 4.0
                    );
                }
            }
        }
        let ly = y0 + TOP + 14.0 + 18.0 * i as f64;
        let lx = LEFT + pw + 12.0;
        let _ = writeln!(
            out,
            r#"<g class="legend-entry"><line x1="{lx:.1}" y1="{ly:.1}" x2="{:.1}" y2="{ly:.1}" stroke="{color}" stroke-width="2"/><text x="{:.1}" y="{:.1}" font-size="12" fill="{}">{}</text></g>"#,
            lx + 18.0,
            lx + 24.0,
            ly + 4.0,
            t.fg,
            esc(&s.name)
        );
    }
    // The whiskers' own entry, drawn as a whisker.
    if c.series.iter().any(|s| s.err.is_some()) {
        let ly = y0 + TOP + 14.0 + 18.0 * c.series.len() as f64;
        let (lx, x) = (LEFT + pw + 12.0, LEFT + pw + 21.0);
        let _ = writeln!(
            out,
            r#"<g class="legend-entry"><path d="M{:.1},{:.1}H{:.1}M{x:.1},{:.1}V{:.1}M{:.1},{:.1}H{:.1}" stroke="{}" fill="none"/><text x="{:.1}" y="{:.1}" font-size="12" fill="{}">error bars</text></g>"#,
            x - 4.0,
            ly - 6.0,
            x + 4.0,
            ly - 6.0,
            ly + 6.0,
            x - 4.0,
            ly + 6.0,
            x + 4.0,
            t.muted,
            lx + 24.0,
            ly + 4.0,
            t.fg
        );
    }
}

/// Render panels stacked vertically into one SVG document, light theme.
pub fn stack(charts: &[Chart]) -> String {
    stack_themed(charts, &LIGHT)
}

/// Render panels stacked vertically into one SVG document in theme `t`
/// ([`super::LIGHT`] or [`super::DARK`]).
pub fn stack_themed(charts: &[Chart], t: &Theme) -> String {
    let total_h = H * charts.len().max(1) as f64;
    let mut out = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{total_h}" viewBox="0 0 {W} {total_h}" font-family="DejaVu Sans, Arial, sans-serif">
<rect width="100%" height="100%" fill="{}"/>
"#,
        t.bg
    );
    for (i, c) in charts.iter().enumerate() {
        panel(&mut out, c, H * i as f64, t);
    }
    out += "</svg>\n";
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_points_and_escapes_text() {
        let c = Chart {
            title: "a < b & c".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            x: vec![1.0, 2.0, 4.0],
            log2_x: true,
            series: vec![Series {
                name: "s".into(),
                y: vec![1.0, f64::NAN, 3.0],
                err: Some(vec![0.5, 0.5, f64::NAN]),
            }],
        };
        let svg = stack(&[c.clone(), c.clone()]);
        assert!(svg.starts_with("<svg"));
        assert!(svg.contains("a &lt; b &amp; c"));
        // Two panels, two finite points each.
        assert_eq!(svg.matches("<circle").count(), 4);
        assert!(!svg.contains("NaN"));
        // One whisker per panel (the NaN point and NaN error draw none),
        // and a whisker in each panel's legend.
        assert_eq!(svg.matches("<path").count(), 4);
        assert_eq!(svg.matches("error bars</text>").count(), 2);
        // Dark: the dark background, and no text left in default black.
        let dark = stack_themed(&[c], &super::super::DARK);
        assert!(dark.contains("fill=\"#0d1117\""));
        assert!(dark.split("<text").skip(1).all(|t| t
            .split('>')
            .next()
            .unwrap()
            .contains("fill=")));
    }

    #[test]
    fn nice_steps() {
        assert_eq!(nice_step(10.0, 5.0), 2.0);
        assert_eq!(nice_step(1000.0, 5.0), 200.0);
        assert_eq!(nice_step(0.3, 5.0), 0.1);
    }
}
