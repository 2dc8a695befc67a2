//! The recommendation and its verdict: is the best candidate really better than the host as
//! found, or is the difference inside the noise?
//!
//! The best finalist is compared with the baseline by Welch's 95 % interval on the objective's
//! metric per run (99 % when the best was picked from several finalists). Only an interval
//! that excludes zero, on the right side, with a change of
//! at least the objective's minimum effect, is an improvement; otherwise the honest answer is "no significant difference" and the recommendation is to
//! keep the settings as found. Finalists whose difference from the best is itself not
//! significant are reported as ties, so a reader can pick the cheaper of equals.

use crate::objective::Objective;
use crate::observe::Observation;
use crate::stats::{welch, welch_at, Confidence, Difference};
use crate::summary::{objective_values, reference_of, Summary};
use serde::{Deserialize, Serialize};

/// What the measurements support.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// The recommended settings beat the baseline beyond run-to-run noise.
    Improvement,
    /// The best candidate differs from the baseline by less than the noise: keep as found.
    NoSignificantDifference,
    /// No candidate ranked above the settings as found.
    AsFoundIsBest,
}

impl Verdict {
    /// A short sentence for the report's headline.
    pub fn headline(self) -> &'static str {
        match self {
            Verdict::Improvement => "Improvement: the recommended settings beat the settings as found beyond run-to-run noise.",
            Verdict::NoSignificantDifference => "No significant difference: the best candidate is within run-to-run noise of the settings as found; keep them.",
            Verdict::AsFoundIsBest => "The settings as found are the best measured; keep them.",
        }
    }
}

/// The decision over the search's finalists.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// What the measurements support; decides whether `recommended` is the best or the baseline.
    pub verdict: Verdict,
    /// The recommended candidate (the baseline unless the verdict is an improvement).
    pub recommended: usize,
    /// The best measured candidate (may differ from `recommended`).
    pub best: usize,
    /// Best − baseline on the objective's metric, with its interval at `confidence`.
    pub difference: Option<Difference>,
    /// Finalists statistically tied with the best.
    pub ties: Vec<usize>,
    /// The confidence the comparison used.
    pub confidence: Confidence,
}

/// Decides between the best of `finalists` (ranked best first) and `baseline`.
///
/// `active[i]` is how many settings candidate `i` turns on (see
/// [`Candidate::active_settings`](crate::candidate::Candidate::active_settings)). Among the
/// best finalist and those statistically tied with it, the one that turns on the fewest
/// settings is recommended: what the measurements cannot tell apart, the simpler change wins.
pub fn decide(
    runs: &[Vec<Observation>],
    finalists: &[usize],
    baseline: usize,
    objective: &Objective,
    active: &[usize],
) -> Decision {
    let reference = reference_of(&runs[baseline]);
    let values = |i: usize| objective_values(&runs[i], objective, &reference);
    let summary = |i: usize| Summary::of(&runs[i], objective, &reference);
    let feasible: Vec<usize> = finalists
        .iter()
        .copied()
        .filter(|&i| summary(i).feasible)
        .collect();
    let top = feasible.first().copied().unwrap_or(baseline);
    let tied_with_top: Vec<usize> = feasible
        .iter()
        .copied()
        .filter(|&i| i != top && i != baseline)
        .filter(|&i| welch(&values(top), &values(i)).is_some_and(|d| !d.is_significant()))
        .collect();
    let best = std::iter::once(top)
        .chain(tied_with_top.iter().copied())
        .min_by_key(|&i| active.get(i).copied().unwrap_or(usize::MAX))
        .unwrap_or(top);
    // Picking the best of several finalists and then testing it is several tests at once:
    // test at 99 % when there was a choice.
    let confidence = if finalists.len() > 1 {
        Confidence::P99
    } else {
        Confidence::P95
    };
    let difference = welch_at(&values(baseline), &values(best), confidence);
    let base_metric = summary(baseline).objective.map(|e| e.mean);
    let best_metric = summary(best).objective.map(|e| e.mean);
    let beats = matches!((best_metric, base_metric), (Some(a), Some(b)) if objective.better(a, b));
    let large_enough = |d: &Difference| {
        base_metric.is_some_and(|b| d.delta.abs() >= objective.min_effect * b.abs())
    };
    let verdict = match difference {
        _ if best == baseline || !beats => Verdict::AsFoundIsBest,
        Some(d) if d.is_significant() && large_enough(&d) => Verdict::Improvement,
        _ => Verdict::NoSignificantDifference,
    };
    let recommended = if verdict == Verdict::Improvement {
        best
    } else {
        baseline
    };
    let ties = std::iter::once(top)
        .chain(tied_with_top)
        .filter(|&i| i != best && i != baseline)
        .collect();
    Decision {
        verdict,
        recommended,
        best,
        difference,
        ties,
        confidence,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objective::Goal;

    fn runs(p99s: &[f64]) -> Vec<Observation> {
        p99s.iter()
            .map(|&p| Observation {
                p50_us: None,
                p99_us: Some(p),
                rate: Some(10_000.0),
                cpu_us_per_unit: None,
                busy_cores: None,
                interrupts_per_sec: None,
            })
            .collect()
    }

    #[test]
    fn a_clear_gain_is_an_improvement() {
        let all = vec![runs(&[167.0, 180.0, 160.0]), runs(&[16.0, 18.0, 17.0])];
        let d = decide(&all, &[1], 0, &Objective::new(Goal::Latency), &[0, 1]);
        assert_eq!(d.verdict, Verdict::Improvement);
        assert_eq!(d.recommended, 1);
        assert!(d.difference.unwrap().high < 0.0);
    }

    #[test]
    fn a_gain_inside_the_noise_keeps_the_settings_as_found() {
        let all = vec![
            runs(&[167.0, 200.0, 150.0, 185.0]),
            runs(&[160.0, 190.0, 150.0, 170.0]),
            runs(&[165.0, 185.0, 155.0, 180.0]),
        ];
        let d = decide(&all, &[1, 2], 0, &Objective::new(Goal::Latency), &[0, 1, 1]);
        assert_eq!(d.verdict, Verdict::NoSignificantDifference);
        assert_eq!(d.recommended, 0);
        assert_eq!(d.best, 1);
        assert_eq!(d.ties, vec![2]);
    }

    #[test]
    fn among_ties_the_simplest_change_is_recommended() {
        let all = vec![
            runs(&[167.0, 180.0, 160.0]),
            runs(&[16.0, 17.0, 18.0]), // best measured, turns on three settings
            runs(&[16.5, 17.5, 18.0]), // tied, turns on one
            runs(&[40.0, 41.0, 42.0]), // clearly worse
        ];
        let d = decide(
            &all,
            &[1, 2, 3],
            0,
            &Objective::new(Goal::Latency),
            &[0, 3, 1, 1],
        );
        assert_eq!(d.verdict, Verdict::Improvement);
        assert_eq!(d.recommended, 2);
        assert_eq!(d.ties, vec![1]);
    }

    #[test]
    fn a_significant_but_tiny_gain_is_not_an_improvement() {
        // 2 % better, very consistently: significant, but under the 5 % minimum effect.
        let all = vec![runs(&[100.0, 100.1, 99.9]), runs(&[98.0, 98.1, 97.9])];
        let d = decide(&all, &[1], 0, &Objective::new(Goal::Latency), &[0, 1]);
        assert!(d.difference.unwrap().is_significant());
        assert_eq!(d.verdict, Verdict::NoSignificantDifference);
    }

    #[test]
    fn a_worse_best_finalist_means_the_baseline_wins() {
        let all = vec![runs(&[100.0, 101.0]), runs(&[150.0, 151.0])];
        let d = decide(&all, &[1], 0, &Objective::new(Goal::Latency), &[0, 1]);
        assert_eq!(d.verdict, Verdict::AsFoundIsBest);
        assert_eq!(d.recommended, 0);
    }
}
