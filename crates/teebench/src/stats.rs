//! Summary statistics for benchmark samples: latency percentiles for the
//! DCAP workloads and mean / confidence interval / spread for the nested-TLS
//! rounds.
//!
//! Percentiles use the nearest-rank definition (the value at rank
//! `ceil(p * n)`), so every reported percentile is an observed sample.

/// Latency summary of one concurrency level, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct LatencySummary {
    pub mean_ms: f64,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

impl LatencySummary {
    /// Summarise latencies given in seconds. `None` when there are none.
    pub fn from_secs(samples: &[f64]) -> Option<Self> {
        if samples.is_empty() {
            return None;
        }
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        let ms = |s: f64| s * 1e3;
        Some(Self {
            mean_ms: ms(mean(&sorted)),
            p50_ms: ms(percentile_sorted(&sorted, 0.50)),
            p95_ms: ms(percentile_sorted(&sorted, 0.95)),
            p99_ms: ms(percentile_sorted(&sorted, 0.99)),
            max_ms: ms(*sorted.last().expect("non-empty")),
        })
    }
}

/// Arithmetic mean; NaN for an empty slice.
pub fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// Sample standard deviation (n - 1 denominator); NaN below two samples.
pub fn std_dev(xs: &[f64]) -> f64 {
    if xs.len() < 2 {
        return f64::NAN;
    }
    let m = mean(xs);
    let var = xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (xs.len() - 1) as f64;
    var.sqrt()
}

/// Nearest-rank percentile of an ascending slice, `p` in [0, 1].
pub fn percentile_sorted(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = (p * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Nearest-rank percentile of an unsorted slice.
pub fn percentile(xs: &[f64], p: f64) -> f64 {
    let mut sorted = xs.to_vec();
    sorted.sort_by(f64::total_cmp);
    percentile_sorted(&sorted, p)
}

/// Two-sided 97.5% quantile of Student's t with `df` degrees of freedom.
/// Tabulated up to 30, then interpolated in 1/df toward the normal 1.960
/// (error below 0.002 for df > 30).
pub fn t_975(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::NAN,
        1..=30 => TABLE[df - 1],
        _ => 1.960 + (2.042 - 1.960) * 30.0 / df as f64,
    }
}

/// Half-width of the 95% confidence interval of the mean (Student t).
pub fn ci95_half_width(xs: &[f64]) -> f64 {
    if xs.len() < 2 {
        return f64::NAN;
    }
    t_975(xs.len() - 1) * std_dev(xs) / (xs.len() as f64).sqrt()
}

/// Mean, spread and confidence of a set of per-round samples.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct SampleSummary {
    pub n: usize,
    pub mean: f64,
    pub p50: f64,
    pub p95: f64,
    pub std_dev: f64,
    /// Half-width of the 95% confidence interval of the mean.
    pub ci95: f64,
    /// `ci95 / mean`: the relative precision of the mean.
    pub ci95_rel: f64,
    /// Coefficient of variation, `std_dev / mean`.
    pub cv: f64,
}

impl SampleSummary {
    pub fn of(xs: &[f64]) -> Self {
        let m = mean(xs);
        let sd = std_dev(xs);
        let ci = ci95_half_width(xs);
        Self {
            n: xs.len(),
            mean: m,
            p50: percentile(xs, 0.50),
            p95: percentile(xs, 0.95),
            std_dev: sd,
            ci95: ci,
            ci95_rel: ci / m.abs(),
            cv: sd / m.abs(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let xs: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&xs, 0.5), 50.0);
        assert_eq!(percentile(&xs, 0.95), 95.0);
        assert_eq!(percentile(&xs, 0.99), 99.0);
        assert_eq!(percentile(&xs, 1.0), 100.0);
        assert_eq!(percentile(&[7.0], 0.99), 7.0);
        assert!(percentile(&[], 0.5).is_nan());
    }

    #[test]
    fn latency_summary_in_ms() {
        let s = LatencySummary::from_secs(&[0.001, 0.003, 0.002]).unwrap();
        assert!((s.mean_ms - 2.0).abs() < 1e-9);
        assert_eq!(s.p50_ms, 2.0);
        assert_eq!(s.max_ms, 3.0);
        assert!(LatencySummary::from_secs(&[]).is_none());
    }

    #[test]
    fn confidence_interval_matches_hand_computation() {
        // mean 5, sample sd = sqrt(2.5), n = 5, t(4) = 2.776.
        let xs = [3.0, 4.0, 5.0, 6.0, 7.0];
        let s = SampleSummary::of(&xs);
        assert_eq!(s.mean, 5.0);
        let expect = 2.776 * 2.5f64.sqrt() / 5f64.sqrt();
        assert!((s.ci95 - expect).abs() < 1e-9);
        assert!((s.ci95_rel - expect / 5.0).abs() < 1e-9);
        assert!(SampleSummary::of(&[1.0]).ci95.is_nan());
        assert!((t_975(1000) - 1.962).abs() < 0.002);
    }
}
