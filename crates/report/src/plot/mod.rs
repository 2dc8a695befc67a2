//! The report's plots, each a pure function from the results to an `<svg>` element.
//!
//! - [`latency`]: p50 / p90 / p99 (with its 95 % interval) / p99.9 per setting;
//! - [`tradeoff`]: CPU per unit of work against rate, the Pareto front marked;
//! - [`interrupts`]: interrupts per second per setting;
//! - [`predicted`]: predicted against measured p99 (with `--predict`).

pub mod axis;
pub mod interrupts;
pub mod latency;
pub mod predicted;
pub mod tradeoff;

use nictune_tune::results::{Point, TuneResults};

/// Points in the order the per-setting plots list them: lowest p99 first, points without a
/// p99 last.
pub fn rows(results: &TuneResults) -> Vec<&Point> {
    let mut rows: Vec<&Point> = results.points.iter().collect();
    let p99 = |p: &Point| p.summary.p99_us.map_or(f64::INFINITY, |e| e.mean);
    rows.sort_by(|a, b| p99(a).total_cmp(&p99(b)));
    rows
}

/// The left margin of a plot with one row label per point in `rows`: room for the longest
/// label (a both-ends candidate names each setting twice) at ≈ 6.8 px a character of the
/// plots' 11.5 px text (bold for the baseline and the recommendation), at least the 300 px
/// the labels of one end's settings need, at most 600.
pub fn label_margin(rows: &[&Point]) -> f64 {
    let longest = rows
        .iter()
        .map(|p| crate::format::label(p).chars().count())
        .max()
        .unwrap_or(0);
    (16.0 + 6.8 * longest as f64).clamp(300.0, 600.0)
}

/// CSS classes marking the baseline and the recommended point.
pub fn role_class(results: &TuneResults, p: &Point) -> &'static str {
    if p.id == results.recommendation.id && !p.baseline {
        "recommended"
    } else if p.baseline {
        "baseline"
    } else {
        ""
    }
}

/// The mean over a point's runs of one latency percentile.
pub fn mean_latency(
    p: &Point,
    pick: fn(&nictune_core::metrics::LatencySummary) -> f64,
) -> Option<f64> {
    let v: Vec<f64> = p
        .runs
        .iter()
        .filter_map(|m| m.latency_us.as_ref().map(pick))
        .collect();
    if v.is_empty() {
        None
    } else {
        Some(v.iter().sum::<f64>() / v.len() as f64)
    }
}
