//! `--predict`: rank candidates by a model before any of them is measured.
//!
//! A [`Predictor`] (the simulator, calibrated from the baseline's runs: base round-trip cost,
//! per-packet and per-interrupt CPU cost) predicts each candidate's metrics. The tune then
//! measures the most promising candidates first and, when the budget cannot cover the whole
//! space, only those; every measured point keeps its prediction so the report can show
//! predicted against measured.

use crate::candidate::Candidate;
use crate::objective::{Objective, Reference};
use crate::observe::{CpuScope, Observation, RateUnit};
use nictune_core::metrics::Metrics;

/// Why a prediction failed.
#[derive(Debug, thiserror::Error)]
#[error("predicting {what} failed: {reason}")]
pub struct PredictError {
    /// What was being predicted or calibrated.
    pub what: String,
    /// Why it failed.
    pub reason: String,
}

/// A model that predicts a candidate's metrics (the simulator implements it).
pub trait Predictor {
    /// Fits the model's free parameters to runs measured on the target (the baseline's).
    fn calibrate(&mut self, baseline: &Candidate, measured: &[Metrics])
        -> Result<(), PredictError>;
    /// The predicted metrics of `candidate` on the calibrated target.
    fn predict(&self, candidate: &Candidate) -> Result<Metrics, PredictError>;
}

/// Candidates ordered best-predicted first, with their predictions (by original index).
#[derive(Debug, Clone, PartialEq)]
pub struct Ranking {
    /// Candidate indices, best predicted first; the baseline is not in it.
    pub order: Vec<usize>,
    /// Prediction of each candidate, by index (`None` where the model failed for it).
    pub predicted: Vec<Option<Metrics>>,
}

impl Ranking {
    /// The `n` candidates to measure: the best predicted, then what the model could not
    /// predict (a model that cannot see a setting must not rule it out), then the rest by
    /// prediction; so pruning drops the worst-predicted candidates first.
    pub fn keep(&self, n: usize) -> Vec<usize> {
        let known = |i: &usize| self.predicted[*i].is_some();
        let mut predicted = self.order.iter().copied().filter(known);
        let mut out: Vec<usize> = predicted.next().into_iter().collect();
        out.extend(self.order.iter().copied().filter(|i| !known(i)));
        out.extend(predicted);
        out.truncate(n);
        out
    }
}

/// Predicts every candidate and orders all but `baseline` by the objective's metric.
pub fn rank_by_prediction(
    predictor: &dyn Predictor,
    candidates: &[Candidate],
    baseline: usize,
    objective: &Objective,
    unit: RateUnit,
    scope: CpuScope,
) -> Ranking {
    let predicted: Vec<Option<Metrics>> = candidates
        .iter()
        .map(|c| predictor.predict(c).ok())
        .collect();
    let metric = |i: usize, reference: &Reference| {
        predicted[i]
            .as_ref()
            .and_then(|m| objective.metric(&Observation::of(m, unit, scope), reference))
    };
    let reference = predicted[baseline]
        .as_ref()
        .map(|m| reference_of_one(&Observation::of(m, unit, scope)))
        .unwrap_or(Reference {
            p99_us: None,
            rate: None,
            cpu_us_per_unit: None,
        });
    let mut order: Vec<usize> = (0..candidates.len()).filter(|&i| i != baseline).collect();
    // Unpredictable candidates go last, in their original order.
    order.sort_by(
        |&a, &b| match (metric(a, &reference), metric(b, &reference)) {
            (Some(x), Some(y)) if objective.better(x, y) => std::cmp::Ordering::Less,
            (Some(x), Some(y)) if objective.better(y, x) => std::cmp::Ordering::Greater,
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            _ => std::cmp::Ordering::Equal,
        },
    );
    Ranking { order, predicted }
}

fn reference_of_one(o: &Observation) -> Reference {
    Reference {
        p99_us: o.p99_us,
        rate: o.rate,
        cpu_us_per_unit: o.cpu_us_per_unit,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::candidate::Placement;
    use crate::knob::{Knob, KnobValue, Setting};
    use crate::objective::Goal;
    use nictune_core::metrics::LatencySummary;

    /// Predicts p99 = 100 µs minus 10 µs per defer-hard-irqs step; fails for defer = 3.
    struct Linear;

    impl Predictor for Linear {
        fn calibrate(&mut self, _: &Candidate, _: &[Metrics]) -> Result<(), PredictError> {
            Ok(())
        }
        fn predict(&self, c: &Candidate) -> Result<Metrics, PredictError> {
            let defer = match c.value_of(Knob::DeferHardIrqs) {
                Some(KnobValue::Count(n)) => n,
                _ => 0,
            };
            if defer == 3 {
                return Err(PredictError {
                    what: c.id(),
                    reason: "outside the model".into(),
                });
            }
            Ok(Metrics {
                latency_us: Some(LatencySummary {
                    p99: 100.0 - 10.0 * defer as f64,
                    ..LatencySummary::default()
                }),
                ..Metrics::default()
            })
        }
    }

    #[test]
    fn best_predicted_first_and_unpredictable_last() {
        let c = |d| {
            Candidate::new(
                vec![Setting::new(Knob::DeferHardIrqs, KnobValue::Count(d))],
                Placement::Cross,
            )
        };
        let cands = vec![Candidate::baseline(Placement::Cross), c(3), c(1), c(2)];
        let obj = Objective::new(Goal::Latency);
        let r = rank_by_prediction(
            &Linear,
            &cands,
            0,
            &obj,
            RateUnit::Transactions,
            CpuScope::SharedMachine,
        );
        assert_eq!(r.order, vec![3, 2, 1]);
        assert!(r.predicted[1].is_none());
        assert_eq!(
            r.predicted[3].as_ref().unwrap().latency_us.unwrap().p99,
            80.0
        );
    }
}
