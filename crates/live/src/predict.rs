//! `--predict` on the veth testbed: the simulator's veth TCP_RR model behind the tune's
//! [`Predictor`] hook.
//!
//! Calibration takes the baseline's runs (the host as found, client and server on different
//! CPUs): their mean transactions/s and busy cores. Candidates that set a knob the model has
//! no mechanism for (hardware coalescing, channels) are not predicted, so the search never
//! rules them out on the model's word.

use nictune_core::metrics::{CoreSplit, CpuSplit, HostMetrics, LatencySummary, Metrics};
use nictune_sim::cases::veth_rr::{self, VethCosts, VethSettings};
use nictune_tune::candidate::{Candidate, Placement};
use nictune_tune::knob::{Knob, KnobValue};
use nictune_tune::observe::{CpuScope, Observation, RateUnit};
use nictune_tune::predict::{PredictError, Predictor};

/// The veth testbed model, uncalibrated until the baseline has been measured.
#[derive(Debug, Default)]
pub struct VethPredictor {
    costs: Option<VethCosts>,
}

impl Predictor for VethPredictor {
    fn calibrate(
        &mut self,
        baseline: &Candidate,
        measured: &[Metrics],
    ) -> Result<(), PredictError> {
        let fail = |reason: String| PredictError {
            what: format!("the veth model from {}", baseline.id()),
            reason,
        };
        if baseline.placement != Placement::Cross || !baseline.is_baseline() {
            return Err(fail(
                "the model calibrates from the host as found with client and server on different CPUs".into(),
            ));
        }
        let obs: Vec<Observation> = measured
            .iter()
            .map(|m| Observation::of(m, RateUnit::Transactions, CpuScope::SharedMachine))
            .collect();
        let rate = mean(obs.iter().map(|o| o.rate));
        let busy = mean(obs.iter().map(|o| o.busy_cores));
        let (Some(rate), Some(busy)) = (rate, busy) else {
            return Err(fail(
                "the baseline runs report no transaction rate or no CPU use".into(),
            ));
        };
        self.costs = Some(VethCosts::calibrate(rate, busy).map_err(|e| fail(e.to_string()))?);
        Ok(())
    }

    fn predict(&self, candidate: &Candidate) -> Result<Metrics, PredictError> {
        let fail = |reason: &str| PredictError {
            what: candidate.id(),
            reason: reason.into(),
        };
        let costs = self
            .costs
            .as_ref()
            .ok_or_else(|| fail("the model is not calibrated"))?;
        let settings = settings_of(candidate).map_err(|r| fail(&r))?;
        Ok(metrics_of(&veth_rr::predict(costs, &settings)))
    }
}

/// The model's view of a candidate, or why it has none.
fn settings_of(c: &Candidate) -> Result<VethSettings, String> {
    let same_cpu = match c.placement {
        Placement::Same => true,
        Placement::Cross => false,
        Placement::Unpinned => return Err("the model needs a pinned placement".into()),
    };
    let mut s = VethSettings {
        same_cpu,
        ..VethSettings::default()
    };
    for setting in &c.settings {
        match (setting.knob, setting.value) {
            (Knob::DeferHardIrqs, KnobValue::Count(n)) => {
                s.defer_hard_irqs = u32::try_from(n).map_err(|_| "defer-hard-irqs out of range")?;
            }
            (Knob::GroFlushTimeout, KnobValue::Duration(d)) => s.gro_flush_timeout = d,
            (Knob::IrqSuspendTimeout, KnobValue::Duration(d)) => s.irq_suspend_timeout = d,
            (Knob::BusyRead, KnobValue::Duration(d)) => s.busy_read = d,
            // The bench client and server block in recv(), which busy_read governs;
            // busy_poll only acts in poll/select/epoll.
            (Knob::BusyPoll, KnobValue::Duration(_)) => {}
            (knob, _) => {
                return Err(format!(
                    "the veth model has no mechanism for {}",
                    knob.key()
                ))
            }
        }
    }
    Ok(s)
}

/// The prediction in the measurement's shape: one `testbed` host with its CPUs.
fn metrics_of(p: &veth_rr::VethPrediction) -> Metrics {
    let busy = |b: f64| CoreSplit {
        system: Some(b),
        idle: 1.0 - b,
        ..CoreSplit::default()
    };
    let per_core: Vec<CoreSplit> = p.busy.iter().map(|&b| busy(b)).collect();
    let n = per_core.len().max(1) as f64;
    let total: f64 = p.busy.iter().sum();
    let host = HostMetrics {
        cpu: CpuSplit {
            system: Some(total / n),
            idle: 1.0 - total / n,
            per_core,
            ..CpuSplit::default()
        },
        ..HostMetrics::default()
    };
    Metrics {
        transactions_per_sec: Some(p.transactions_per_sec),
        latency_us: Some(latency(&p.round_trips_us)),
        hosts: [("testbed".to_string(), host)].into_iter().collect(),
        ..Metrics::default()
    }
}

/// Summary of the simulated round trips (sorted ascending, never empty).
fn latency(sorted: &[f64]) -> LatencySummary {
    let at = |q: f64| sorted[((sorted.len() - 1) as f64 * q).round() as usize];
    let mean = sorted.iter().sum::<f64>() / sorted.len() as f64;
    let var = sorted.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / sorted.len() as f64;
    LatencySummary {
        min: sorted[0],
        mean,
        p50: at(0.5),
        p90: at(0.9),
        p99: at(0.99),
        p999: at(0.999),
        max: sorted[sorted.len() - 1],
        stddev: var.sqrt(),
    }
}

fn mean(values: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    let v: Vec<f64> = values.flatten().collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use nictune_core::units::Nanos;
    use nictune_tune::knob::Setting;

    fn baseline_run() -> Metrics {
        // 9.5 k trans/s with 0.6 of two CPUs busy (testbed-notes §6's cross-CPU baseline).
        metrics_of(&veth_rr::VethPrediction {
            transactions_per_sec: 9_520.0,
            round_trips_us: vec![105.0],
            busy: vec![0.304, 0.304],
            timer_interrupts_per_sec: 0.0,
        })
    }

    fn calibrated() -> VethPredictor {
        let mut p = VethPredictor::default();
        p.calibrate(
            &Candidate::baseline(Placement::Cross),
            &[baseline_run(), baseline_run()],
        )
        .unwrap();
        p
    }

    fn rate(p: &VethPredictor, c: &Candidate) -> f64 {
        p.predict(c).unwrap().transactions_per_sec.unwrap()
    }

    #[test]
    fn busy_read_ranks_by_placement() {
        let p = calibrated();
        let bp = |pl| {
            Candidate::new(
                vec![
                    Setting::new(Knob::BusyRead, KnobValue::Duration(Nanos::from_micros(50))),
                    Setting::new(Knob::BusyPoll, KnobValue::Duration(Nanos::from_micros(50))),
                ],
                pl,
            )
        };
        let base = rate(&p, &Candidate::baseline(Placement::Cross));
        assert!(rate(&p, &bp(Placement::Cross)) > 5.0 * base);
        assert!(rate(&p, &bp(Placement::Same)) < rate(&p, &Candidate::baseline(Placement::Same)));
        let o = Observation::of(
            &p.predict(&bp(Placement::Cross)).unwrap(),
            RateUnit::Transactions,
            CpuScope::SharedMachine,
        );
        assert!(
            o.busy_cores.unwrap() > 1.8,
            "busy polling keeps both CPUs busy"
        );
    }

    #[test]
    fn what_the_model_cannot_see_is_not_predicted() {
        let p = calibrated();
        let coalesce = Candidate::new(
            vec![Setting::new(
                Knob::RxUsecs,
                KnobValue::Duration(Nanos::from_micros(8)),
            )],
            Placement::Cross,
        );
        let e = p.predict(&coalesce).unwrap_err();
        assert!(e.reason.contains("coalesce.rx-usecs"), "{e}");
        assert!(VethPredictor::default()
            .predict(&Candidate::baseline(Placement::Cross))
            .is_err());
    }

    #[test]
    fn calibration_needs_the_cross_cpu_baseline() {
        let mut p = VethPredictor::default();
        let e = p
            .calibrate(&Candidate::baseline(Placement::Same), &[baseline_run()])
            .unwrap_err();
        assert!(e.reason.contains("different CPUs"), "{e}");
        assert!(p
            .calibrate(&Candidate::baseline(Placement::Cross), &[])
            .is_err());
    }
}
