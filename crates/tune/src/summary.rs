//! Per-candidate summaries of repeated runs, and ranking them under an objective.

use crate::objective::{Objective, Reference};
use crate::observe::Observation;
use crate::stats::Estimate;
use serde::{Deserialize, Serialize};

/// Means with 95 % intervals of what the runs of one candidate measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Median latency, µs; `None` when no run measured latency.
    pub p50_us: Option<Estimate>,
    /// p99 latency, µs; `None` when no run measured latency.
    pub p99_us: Option<Estimate>,
    /// Rate in the workload's [`crate::observe::RateUnit`] (transactions/s or bit/s).
    pub rate: Option<Estimate>,
    /// Busy CPU time per unit of work, µs (per transaction, or per megabyte for streams).
    pub cpu_us_per_unit: Option<Estimate>,
    /// Busy CPUs (sum of per-core busy fractions): what busy polling costs.
    pub busy_cores: Option<Estimate>,
    /// Device interrupts per second, summed over hosts (the busiest view on one machine).
    pub interrupts_per_sec: Option<Estimate>,
    /// The objective's metric per run, summarised.
    pub objective: Option<Estimate>,
    /// Whether the means meet the objective's constraint.
    pub feasible: bool,
}

impl Summary {
    /// Summarises `runs` under `objective`, relative to the baseline's `reference`.
    pub fn of(runs: &[Observation], objective: &Objective, reference: &Reference) -> Summary {
        let est = |f: fn(&Observation) -> Option<f64>| -> Option<Estimate> {
            Estimate::of(&runs.iter().filter_map(f).collect::<Vec<_>>())
        };
        let values = objective_values(runs, objective, reference);
        let mut s = Summary {
            p50_us: est(|o| o.p50_us),
            p99_us: est(|o| o.p99_us),
            rate: est(|o| o.rate),
            cpu_us_per_unit: est(|o| o.cpu_us_per_unit),
            busy_cores: est(|o| o.busy_cores),
            interrupts_per_sec: est(|o| o.interrupts_per_sec),
            objective: Estimate::of(&values),
            feasible: true,
        };
        s.feasible = objective.feasible(&s.means(), reference);
        s
    }

    /// The means as a [`Reference`] (what the Pareto front and constraints compare).
    pub fn means(&self) -> Reference {
        Reference {
            p99_us: self.p99_us.map(|e| e.mean),
            rate: self.rate.map(|e| e.mean),
            cpu_us_per_unit: self.cpu_us_per_unit.map(|e| e.mean),
        }
    }
}

/// The objective's metric of each run that has it.
pub fn objective_values(
    runs: &[Observation],
    objective: &Objective,
    reference: &Reference,
) -> Vec<f64> {
    runs.iter()
        .filter_map(|o| objective.metric(o, reference))
        .collect()
}

/// The baseline's means: the reference for relative limits and the balanced score.
pub fn reference_of(baseline_runs: &[Observation]) -> Reference {
    let mean = |f: fn(&Observation) -> Option<f64>| -> Option<f64> {
        Estimate::of(&baseline_runs.iter().filter_map(f).collect::<Vec<_>>()).map(|e| e.mean)
    };
    Reference {
        p99_us: mean(|o| o.p99_us),
        rate: mean(|o| o.rate),
        cpu_us_per_unit: mean(|o| o.cpu_us_per_unit),
    }
}

/// `ids` ordered best first: feasible before infeasible, then by mean objective metric;
/// candidates without a metric go last. Ties keep their given order.
pub fn rank(ids: &[usize], summaries: &[Summary], objective: &Objective) -> Vec<usize> {
    let mut out = ids.to_vec();
    out.sort_by(|&a, &b| {
        let (sa, sb) = (&summaries[a], &summaries[b]);
        let key = |s: &Summary| (!s.feasible, s.objective.is_none());
        key(sa).cmp(&key(sb)).then_with(|| {
            let (ma, mb) = (metric(sa), metric(sb));
            if objective.better(ma, mb) {
                std::cmp::Ordering::Less
            } else if objective.better(mb, ma) {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
    });
    out
}

fn metric(s: &Summary) -> f64 {
    s.objective.map(|e| e.mean).unwrap_or(f64::NAN)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objective::Goal;

    fn run(p99: f64, rate: f64) -> Observation {
        Observation {
            p50_us: Some(p99 / 2.0),
            p99_us: Some(p99),
            rate: Some(rate),
            cpu_us_per_unit: Some(1e6 / rate),
            busy_cores: None,
            interrupts_per_sec: None,
        }
    }

    #[test]
    fn infeasible_candidates_rank_after_feasible_ones() {
        let objective = Objective::new(Goal::Latency);
        let base = [run(100.0, 10_000.0), run(110.0, 10_000.0)];
        let reference = reference_of(&base);
        let summaries = vec![
            Summary::of(&base, &objective, &reference),
            // Lowest p99, but at half the baseline's rate: below the 90 % floor.
            Summary::of(&[run(20.0, 5_000.0)], &objective, &reference),
            Summary::of(&[run(60.0, 9_500.0)], &objective, &reference),
        ];
        assert!(!summaries[1].feasible);
        assert_eq!(rank(&[0, 1, 2], &summaries, &objective), vec![2, 0, 1]);
    }

    #[test]
    fn throughput_ranks_the_highest_rate_first() {
        let objective = Objective::new(Goal::Throughput);
        let reference = reference_of(&[run(100.0, 10_000.0)]);
        let summaries: Vec<Summary> = [5_000.0, 80_000.0, 10_000.0]
            .iter()
            .map(|&r| Summary::of(&[run(100.0, r)], &objective, &reference))
            .collect();
        assert_eq!(rank(&[0, 1, 2], &summaries, &objective), vec![1, 2, 0]);
    }
}
