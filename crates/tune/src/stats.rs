//! Statistics over repeated measurements: means with 95 % confidence intervals, Welch's
//! comparison of two candidates, and the interval of their ratio for relative changes.
//!
//! Repeats on a VM spread by about ±10 % (testbed-notes §6, "Noise band"), so one run decides
//! nothing. Intervals use Student's t because a tune repeats a candidate 2–10 times, not 30.

use serde::{Deserialize, Serialize};

/// Two-sided 95 % Student t quantiles for 1–30 degrees of freedom (standard table values).
const T95: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// Two-sided 99 % Student t quantiles for 1–30 degrees of freedom (standard table values).
const T99: [f64; 30] = [
    63.657, 9.925, 5.841, 4.604, 4.032, 3.707, 3.499, 3.355, 3.250, 3.169, 3.106, 3.055, 3.012,
    2.977, 2.947, 2.921, 2.898, 2.878, 2.861, 2.845, 2.831, 2.819, 2.807, 2.797, 2.787, 2.779,
    2.771, 2.763, 2.756, 2.750,
];

/// How sure an interval is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Confidence {
    /// 95 %: intervals of a single estimate.
    P95,
    /// 99 %: comparisons after picking the best of several, a Bonferroni-style correction
    /// (three finalists at 95 % each would give about 15 % false alarms).
    P99,
}

impl Confidence {
    /// The two-sided t quantile for `df` degrees of freedom (fractional df rounds down,
    /// which widens the interval; beyond 30 the normal quantile is used).
    pub fn t(self, df: f64) -> f64 {
        if df < 1.0 {
            return f64::INFINITY;
        }
        let (table, normal) = match self {
            Confidence::P95 => (&T95, 1.960),
            Confidence::P99 => (&T99, 2.576),
        };
        table
            .get(df.floor() as usize - 1)
            .copied()
            .unwrap_or(normal)
    }
}

/// The 95 % two-sided t quantile for `df` degrees of freedom.
pub fn t95(df: f64) -> f64 {
    Confidence::P95.t(df)
}

/// A mean with its 95 % confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    /// Sample mean.
    pub mean: f64,
    /// Lower end of the 95 % interval (the mean itself with one sample).
    pub low: f64,
    /// Upper end of the 95 % interval.
    pub high: f64,
    /// Sample standard deviation (0 with one sample).
    pub stddev: f64,
    /// Number of samples.
    pub n: usize,
}

impl Estimate {
    /// The estimate of `samples`; `None` when there are none.
    pub fn of(samples: &[f64]) -> Option<Estimate> {
        let n = samples.len();
        if n == 0 {
            return None;
        }
        let mean = samples.iter().sum::<f64>() / n as f64;
        let stddev = sample_stddev(samples, mean);
        let half = if n > 1 {
            t95((n - 1) as f64) * stddev / (n as f64).sqrt()
        } else {
            0.0
        };
        Some(Estimate {
            mean,
            low: mean - half,
            high: mean + half,
            stddev,
            n,
        })
    }

    /// Half-width of the interval relative to the mean (0.1 = ±10 %).
    pub fn relative_half_width(&self) -> f64 {
        if self.mean == 0.0 {
            return 0.0;
        }
        (self.high - self.mean) / self.mean.abs()
    }
}

fn sample_stddev(samples: &[f64], mean: f64) -> f64 {
    if samples.len() < 2 {
        return 0.0;
    }
    let ss: f64 = samples.iter().map(|x| (x - mean).powi(2)).sum();
    (ss / (samples.len() - 1) as f64).sqrt()
}

/// The difference `b − a` of two means with its 95 % interval (Welch: unequal variances).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Difference {
    /// `mean(b) − mean(a)`.
    pub delta: f64,
    /// Lower end of the 95 % interval of the difference.
    pub low: f64,
    /// Upper end.
    pub high: f64,
}

impl Difference {
    /// Whether the interval excludes zero.
    pub fn is_significant(&self) -> bool {
        self.low > 0.0 || self.high < 0.0
    }
}

/// Welch's 95 % interval for `mean(b) − mean(a)`; `None` unless each side has two samples or
/// more.
pub fn welch(a: &[f64], b: &[f64]) -> Option<Difference> {
    welch_at(a, b, Confidence::P95)
}

/// Welch's interval for `mean(b) − mean(a)` at `confidence`.
pub fn welch_at(a: &[f64], b: &[f64], confidence: Confidence) -> Option<Difference> {
    let (ea, eb) = (Estimate::of(a)?, Estimate::of(b)?);
    if ea.n < 2 || eb.n < 2 {
        return None;
    }
    let va = ea.stddev.powi(2) / ea.n as f64;
    let vb = eb.stddev.powi(2) / eb.n as f64;
    let delta = eb.mean - ea.mean;
    let half = welch_half_width([va, vb], [ea.n, eb.n], confidence);
    Some(Difference {
        delta,
        low: delta - half,
        high: delta + half,
    })
}

/// Half-width of Welch's interval from the two variances of the means `v` and the sample
/// counts `n` (each ≥ 2): the t quantile at the Welch–Satterthwaite degrees of freedom times
/// the combined standard error; 0 when both variances are 0.
fn welch_half_width(v: [f64; 2], n: [usize; 2], confidence: Confidence) -> f64 {
    let se = (v[0] + v[1]).sqrt();
    if se == 0.0 {
        return 0.0;
    }
    let df = (v[0] + v[1]).powi(2)
        / (v[0].powi(2) / (n[0] - 1) as f64 + v[1].powi(2) / (n[1] - 1) as f64);
    confidence.t(df) * se
}

/// The ratio `mean(b) / mean(a)` of two positive means with its interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Ratio {
    /// `mean(b) / mean(a)`.
    pub ratio: f64,
    /// Lower end of the interval of the ratio (always above 0).
    pub low: f64,
    /// Upper end.
    pub high: f64,
}

impl Ratio {
    /// Whether the interval excludes 1 (no change).
    pub fn is_significant(&self) -> bool {
        self.low > 1.0 || self.high < 1.0
    }
}

/// The interval of `mean(b) / mean(a)` at `confidence`, built on the log scale: the log of
/// each mean has standard error ≈ s / (mean·√n) (the delta method), the two combine as in
/// Welch's test (unequal variances, Welch–Satterthwaite degrees of freedom), and the ends are
/// exponentiated. Unlike a difference shown relative to `mean(a)`, the interval stays above
/// −100 % for skewed metrics such as p99 latency, and it is centred on the observed ratio on
/// the log scale. `None` unless each side has two samples or more and both means are positive.
pub fn ratio_at(a: &[f64], b: &[f64], confidence: Confidence) -> Option<Ratio> {
    let (ea, eb) = (Estimate::of(a)?, Estimate::of(b)?);
    if ea.n < 2 || eb.n < 2 || ea.mean <= 0.0 || eb.mean <= 0.0 {
        return None;
    }
    let ratio = eb.mean / ea.mean;
    let va = (ea.stddev / ea.mean).powi(2) / ea.n as f64;
    let vb = (eb.stddev / eb.mean).powi(2) / eb.n as f64;
    let half = welch_half_width([va, vb], [ea.n, eb.n], confidence);
    let centre = ratio.ln();
    Some(Ratio {
        ratio,
        low: (centre - half).exp(),
        high: (centre + half).exp(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimate_matches_a_hand_computation() {
        // mean 10, sample sd 2 (deviations -2, 0, 2 → ss 8 / 2 = 4), t(2) = 4.303.
        let e = Estimate::of(&[8.0, 10.0, 12.0]).unwrap();
        assert_eq!(e.mean, 10.0);
        assert!((e.stddev - 2.0).abs() < 1e-12);
        let half = 4.303 * 2.0 / 3f64.sqrt();
        assert!((e.high - (10.0 + half)).abs() < 1e-9);
        assert!((e.low - (10.0 - half)).abs() < 1e-9);
    }

    #[test]
    fn one_sample_has_a_point_interval_and_none_has_no_estimate() {
        let e = Estimate::of(&[5.0]).unwrap();
        assert_eq!((e.low, e.high, e.n), (5.0, 5.0, 1));
        assert!(Estimate::of(&[]).is_none());
    }

    #[test]
    fn welch_separates_clear_differences_and_not_noise() {
        let base = [9.5, 9.3, 10.2];
        let busy = [88.8, 80.3, 88.9];
        let noise = [8.3, 7.7, 8.9];
        assert!(welch(&base, &busy).unwrap().is_significant());
        // The no-op `gft=0, defer=2` cell of testbed-notes §6 vs the default: noise.
        assert!(!welch(&base, &noise).unwrap().is_significant());
        assert!(welch(&base, &[9.0]).is_none());
    }

    #[test]
    fn ratio_interval_matches_a_hand_computation() {
        // a: mean 10, sd 2, n 3 → relative variance of the mean (0.2)²/3; b: mean 20, sd 4,
        // n 3 → (0.2)²/3. se = √(2·0.04/3); df = 4 (equal parts); t(4) = 2.776.
        let r = ratio_at(&[8.0, 10.0, 12.0], &[16.0, 20.0, 24.0], Confidence::P95).unwrap();
        assert_eq!(r.ratio, 2.0);
        let half = 2.776 * (2.0 * 0.04 / 3.0f64).sqrt();
        assert!((r.low - 2.0 * (-half).exp()).abs() < 1e-9, "{r:?}");
        assert!((r.high - 2.0 * half.exp()).abs() < 1e-9, "{r:?}");
        assert!(r.is_significant());
    }

    #[test]
    fn a_skewed_metric_keeps_its_interval_above_minus_100_percent() {
        // p99 latency of an as-found setting with one slow repeat, against a fast candidate:
        // the Welch difference relative to the baseline reaches below −100 %, which no latency
        // can; the ratio interval cannot.
        let base = [120.0, 900.0, 150.0];
        let best = [20.0, 25.0, 22.0];
        let d = welch(&base, &best).unwrap();
        let mean_base = base.iter().sum::<f64>() / 3.0;
        assert!(
            d.low / mean_base < -1.0,
            "the old interval: {}",
            d.low / mean_base
        );
        let r = ratio_at(&base, &best, Confidence::P95).unwrap();
        assert!(r.low > 0.0 && r.low < r.ratio && r.ratio < r.high, "{r:?}");
        assert!(ratio_at(&base, &[0.0, 0.0], Confidence::P95).is_none());
        assert!(ratio_at(&base, &[22.0], Confidence::P95).is_none());
    }

    #[test]
    fn t_quantiles_fall_towards_the_normal() {
        assert_eq!(t95(1.0), 12.706);
        assert_eq!(t95(2.7), 4.303);
        assert_eq!(t95(100.0), 1.96);
        assert!(t95(0.5).is_infinite());
        assert_eq!(Confidence::P99.t(4.0), 4.604);
        assert_eq!(Confidence::P99.t(1e6), 2.576);
    }
}
