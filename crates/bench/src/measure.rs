//! The seam `nictune tune` measures through: [`SpecRunner`] is "run this spec and give me a
//! result". [`LiveMeasurer`] runs the engines against a target; [`FakeMeasurer`] answers
//! from a function, so a search loop is testable without traffic or root.

use crate::cancel::Cancel;
use crate::error::Result;
use crate::result::BenchResult;
use crate::run::{run_cancellable, ServerSide};
use crate::spec::BenchSpec;
use nictune_core::metrics::Metrics;
use nictune_core::progress::Progress;
use std::sync::Mutex;

/// Runs one measurement.
pub trait SpecRunner {
    /// Runs `spec` once and returns its result; `progress` hears about the run as it goes.
    fn measure(&self, spec: &BenchSpec, progress: &dyn Progress) -> Result<BenchResult>;
}

/// Measures live traffic against one target (e.g. a testbed created once for a whole tune).
#[derive(Debug, Clone)]
pub struct LiveMeasurer<'a> {
    /// Where the server side runs: loopback, a testbed, or a peer.
    pub server: ServerSide<'a>,
    /// Set to stop the measurement (Ctrl-C, SIGTERM, SIGHUP).
    pub cancel: Cancel,
}

impl SpecRunner for LiveMeasurer<'_> {
    fn measure(&self, spec: &BenchSpec, progress: &dyn Progress) -> Result<BenchResult> {
        run_cancellable(spec, self.server, progress, &self.cancel)
    }
}

/// The function a [`FakeMeasurer`] answers with: the spec and the call number (0-based).
pub type FakeFn = Box<dyn FnMut(&BenchSpec, u64) -> Result<Metrics> + Send>;

/// Answers every measurement from a function (which may add noise or fail on purpose).
pub struct FakeMeasurer {
    answer: Mutex<(FakeFn, u64)>,
}

impl std::fmt::Debug for FakeMeasurer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FakeMeasurer")
    }
}

impl FakeMeasurer {
    /// A measurer whose results come from `answer`.
    pub fn new(answer: FakeFn) -> FakeMeasurer {
        FakeMeasurer {
            answer: Mutex::new((answer, 0)),
        }
    }

    /// Measurements made so far.
    pub fn calls(&self) -> u64 {
        self.answer.lock().map_or(0, |g| g.1)
    }
}

impl SpecRunner for FakeMeasurer {
    fn measure(&self, spec: &BenchSpec, _progress: &dyn Progress) -> Result<BenchResult> {
        spec.validate(&crate::spec::Limits::LOCAL)?;
        let mut guard = self
            .answer
            .lock()
            .map_err(|_| crate::BenchError::Worker("fake measurer".into()))?;
        let n = guard.1;
        guard.1 += 1;
        let metrics = (guard.0)(spec, n)?;
        Ok(BenchResult::synthetic(spec, metrics))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::TestKind;
    use nictune_core::progress::NoProgress;

    #[test]
    fn the_fake_answers_per_spec_and_counts_calls() {
        let fake = FakeMeasurer::new(Box::new(|spec, n| {
            Ok(Metrics {
                transactions_per_sec: Some(1000.0 * spec.connections as f64 + n as f64),
                ..Metrics::default()
            })
        }));
        let mut spec = BenchSpec::new(TestKind::Rr);
        spec.connections = 3;
        let r = fake.measure(&spec, &NoProgress).unwrap();
        assert_eq!(r.metrics.transactions_per_sec, Some(3000.0));
        assert_eq!(r.target, "synthetic");
        assert_eq!(
            fake.measure(&spec, &NoProgress)
                .unwrap()
                .metrics
                .transactions_per_sec,
            Some(3001.0)
        );
        assert_eq!(fake.calls(), 2);
        spec.connections = 0;
        assert!(fake.measure(&spec, &NoProgress).is_err());
    }
}
