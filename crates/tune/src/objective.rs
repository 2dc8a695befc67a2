//! What "best" means: the four objectives and their constraints.
//!
//! - `latency`: lowest p99 among candidates whose rate stays above a floor;
//! - `throughput`: highest rate (transactions/s, or bit/s for streams);
//! - `cpu`: lowest CPU per unit of work among candidates whose p99 stays under a ceiling;
//! - `balanced`: lowest geometric mean of p99, CPU per unit and 1/rate, each relative to the
//!   baseline (1.0 = as found; 0.5 = twice as good on average).
//!
//! Floors and ceilings are either absolute or relative to the baseline's mean, because a
//! person tuning a host usually means "no worse than now".

use crate::observe::Observation;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The objective's kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Goal {
    /// Lowest p99 latency among candidates whose rate stays at or above
    /// [`Objective::rate_floor`].
    Latency,
    /// Highest rate (transactions/s, or bit/s for streams); no constraint.
    Throughput,
    /// Lowest CPU per unit of work among candidates whose p99 stays under
    /// [`Objective::p99_ceiling`].
    Cpu,
    /// Lowest geometric mean of p99, CPU per unit and 1/rate, each relative to the baseline
    /// (1.0 = as found); no constraint.
    Balanced,
}

impl Goal {
    /// Every goal, in the order `--help` lists them.
    pub const ALL: [Goal; 4] = [Goal::Latency, Goal::Throughput, Goal::Cpu, Goal::Balanced];

    /// The name used on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Goal::Latency => "latency",
            Goal::Throughput => "throughput",
            Goal::Cpu => "cpu",
            Goal::Balanced => "balanced",
        }
    }

    /// The metric the goal ranks by, as labelled in the report.
    pub fn metric_name(self) -> &'static str {
        match self {
            Goal::Latency => "p99 latency (µs)",
            Goal::Throughput => "rate",
            Goal::Cpu => "CPU per unit of work (µs)",
            Goal::Balanced => "balanced score (1 = as found)",
        }
    }

    /// Whether a smaller metric is better.
    pub fn lower_is_better(self) -> bool {
        !matches!(self, Goal::Throughput)
    }
}

impl fmt::Display for Goal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A bound, absolute or as a fraction of the baseline's mean.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind", content = "value")]
pub enum Limit {
    /// `value` in the metric's own unit.
    Absolute(f64),
    /// `value` × the baseline's mean (0.9 = 90 % of the baseline).
    OfBaseline(f64),
}

impl Limit {
    /// The bound in the metric's unit, given the baseline's mean; `None` for a relative
    /// limit without a baseline value.
    pub fn bound(self, baseline: Option<f64>) -> Option<f64> {
        match self {
            Limit::Absolute(v) => Some(v),
            Limit::OfBaseline(f) => baseline.map(|b| f * b),
        }
    }
}

/// The baseline's means, the reference for relative limits and the balanced score.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Reference {
    /// Mean p99 latency, µs; `None` when no run measured latency.
    pub p99_us: Option<f64>,
    /// Mean rate in the workload's [`crate::observe::RateUnit`]; `None` when no run measured one.
    pub rate: Option<f64>,
    /// Mean busy CPU time per unit of work, µs; `None` without per-core CPU data or rate.
    pub cpu_us_per_unit: Option<f64>,
}

/// An objective: a goal and its constraint.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Objective {
    /// What to optimise; decides which of the limits below applies.
    pub goal: Goal,
    /// For `latency`: the lowest acceptable rate.
    pub rate_floor: Limit,
    /// For `cpu`: the highest acceptable p99.
    pub p99_ceiling: Limit,
    /// The smallest change of the metric, as a fraction of the baseline's mean, that counts
    /// as an improvement even when statistically significant.
    pub min_effect: f64,
}

impl Objective {
    /// `goal` with the default constraints: rate ≥ 90 % and p99 ≤ 110 % of the baseline, the
    /// ±10 % run-to-run band of testbed-notes §6; and a 5 % minimum effect, so that picking
    /// the luckiest of many look-alike candidates does not pass for an improvement (the
    /// winner's curse: without it, about 1 search in 10 over identical candidates claimed
    /// one, see tests/search.rs).
    pub fn new(goal: Goal) -> Objective {
        Objective {
            goal,
            rate_floor: Limit::OfBaseline(0.9),
            p99_ceiling: Limit::OfBaseline(1.1),
            min_effect: 0.05,
        }
    }

    /// The value this objective ranks one run by; `None` when the run lacks what it needs.
    pub fn metric(&self, obs: &Observation, reference: &Reference) -> Option<f64> {
        match self.goal {
            Goal::Latency => obs.p99_us,
            Goal::Throughput => obs.rate,
            Goal::Cpu => obs.cpu_us_per_unit,
            Goal::Balanced => balanced(obs, reference),
        }
    }

    /// Whether a candidate with these mean values meets the constraint. Missing values (e.g.
    /// no baseline rate) leave the constraint unchecked rather than rejecting everything.
    pub fn feasible(&self, mean: &Reference, reference: &Reference) -> bool {
        match self.goal {
            Goal::Latency => match (mean.rate, self.rate_floor.bound(reference.rate)) {
                (Some(rate), Some(floor)) => rate >= floor,
                _ => true,
            },
            Goal::Cpu => match (mean.p99_us, self.p99_ceiling.bound(reference.p99_us)) {
                (Some(p99), Some(ceiling)) => p99 <= ceiling,
                _ => true,
            },
            Goal::Throughput | Goal::Balanced => true,
        }
    }

    /// Whether metric `a` is better than metric `b`.
    pub fn better(&self, a: f64, b: f64) -> bool {
        if self.goal.lower_is_better() {
            a < b
        } else {
            a > b
        }
    }

    /// A one-line description, e.g. `lowest p99 with rate ≥ 90 % of baseline`.
    pub fn describe(&self) -> String {
        match self.goal {
            Goal::Latency => format!("lowest p99 with rate ≥ {}", limit_text(self.rate_floor)),
            Goal::Throughput => "highest rate".to_string(),
            Goal::Cpu => format!(
                "lowest CPU per unit of work with p99 ≤ {}",
                limit_text(self.p99_ceiling)
            ),
            Goal::Balanced => {
                "lowest geometric mean of p99, CPU per unit and 1/rate, relative to baseline"
                    .to_string()
            }
        }
    }
}

fn limit_text(l: Limit) -> String {
    match l {
        Limit::Absolute(v) => format!("{v}"),
        Limit::OfBaseline(f) => format!("{:.0} % of baseline", f * 100.0),
    }
}

/// (p99/p99₀ · cpu/cpu₀ · rate₀/rate)^(1/3); factors whose values are missing are left out.
fn balanced(obs: &Observation, r: &Reference) -> Option<f64> {
    let ratios = [
        ratio(obs.p99_us, r.p99_us),
        ratio(obs.cpu_us_per_unit, r.cpu_us_per_unit),
        ratio(r.rate, obs.rate),
    ];
    let present: Vec<f64> = ratios.into_iter().flatten().collect();
    if present.is_empty() {
        return None;
    }
    let log_mean = present.iter().map(|x| x.ln()).sum::<f64>() / present.len() as f64;
    Some(log_mean.exp())
}

fn ratio(num: Option<f64>, den: Option<f64>) -> Option<f64> {
    match (num, den) {
        (Some(n), Some(d)) if n > 0.0 && d > 0.0 => Some(n / d),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obs(p99: f64, rate: f64, cpu: f64) -> Observation {
        Observation {
            p50_us: None,
            p99_us: Some(p99),
            rate: Some(rate),
            cpu_us_per_unit: Some(cpu),
            busy_cores: None,
            interrupts_per_sec: None,
        }
    }

    fn reference(p99: f64, rate: f64, cpu: f64) -> Reference {
        Reference {
            p99_us: Some(p99),
            rate: Some(rate),
            cpu_us_per_unit: Some(cpu),
        }
    }

    #[test]
    fn balanced_is_one_at_the_baseline_and_halves_when_everything_halves() {
        let o = Objective::new(Goal::Balanced);
        let base = reference(100.0, 10_000.0, 50.0);
        assert!((o.metric(&obs(100.0, 10_000.0, 50.0), &base).unwrap() - 1.0).abs() < 1e-12);
        let twice = obs(50.0, 20_000.0, 25.0);
        assert!((o.metric(&twice, &base).unwrap() - 0.5).abs() < 1e-12);
    }

    #[test]
    fn latency_needs_the_rate_floor_and_cpu_the_p99_ceiling() {
        let base = reference(100.0, 10_000.0, 50.0);
        let lat = Objective::new(Goal::Latency);
        assert!(lat.feasible(&reference(80.0, 9_500.0, 0.0), &base));
        assert!(!lat.feasible(&reference(80.0, 8_000.0, 0.0), &base));
        let cpu = Objective {
            p99_ceiling: Limit::Absolute(120.0),
            ..Objective::new(Goal::Cpu)
        };
        assert!(cpu.feasible(&reference(119.0, 1.0, 0.0), &base));
        assert!(!cpu.feasible(&reference(121.0, 1.0, 0.0), &base));
        assert!(Objective::new(Goal::Throughput).feasible(&reference(1e9, 1.0, 0.0), &base));
    }

    #[test]
    fn direction_follows_the_goal() {
        assert!(Objective::new(Goal::Latency).better(10.0, 20.0));
        assert!(Objective::new(Goal::Throughput).better(20.0, 10.0));
    }
}
