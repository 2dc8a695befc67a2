//! The live [`Measurer`]: each run is one bench-engine measurement on the testbed, with the
//! client and server threads pinned as the candidate's placement says.

use nictune_bench::{BenchSpec, Measurer as BenchRun, TestKind};
use nictune_core::metrics::Metrics;
use nictune_core::progress::NoProgress;
use nictune_core::units::Nanos;
use nictune_tune::candidate::Candidate;
use nictune_tune::session::{MeasureError, Measurer};
use std::collections::BTreeSet;

/// Measures candidates with the bench engine, run by `live` (in this process against a
/// target, or inside a guest).
pub struct BenchMeasurer<M> {
    live: M,
    test: TestKind,
    /// The CPUs placements pick from, in order.
    cpus: Vec<u32>,
    /// Warm-up asked for and not yet run: it runs as the next measurement's warm-up, on the
    /// same connections, which is what warming up is for.
    warm_up: Nanos,
    /// Every distinct caveat the bench engine reported (NAPI mode, CPU accounting, ...).
    pub warnings: BTreeSet<String>,
    /// Checks each run's full result for the candidate (e.g. that a throttle rate shows in
    /// the measured interrupt rate); what it returns joins the warnings.
    pub check: Option<ResultCheck>,
}

/// A check of one run's result for its candidate.
pub type ResultCheck = fn(&Candidate, &nictune_bench::BenchResult) -> Option<String>;

impl<M: BenchRun> BenchMeasurer<M> {
    pub fn new(live: M, test: TestKind, cpus: Vec<u32>) -> Self {
        BenchMeasurer {
            live,
            test,
            cpus,
            warm_up: Nanos::ZERO,
            warnings: BTreeSet::new(),
            check: None,
        }
    }

    /// The spec for one run of `candidate`.
    pub fn spec(
        &self,
        candidate: &Candidate,
        duration: Nanos,
        warm_up: Nanos,
    ) -> Option<BenchSpec> {
        let (client_cpu, server_cpu) = candidate.placement.cpus(&self.cpus)?;
        let mut spec = BenchSpec::new(self.test);
        spec.duration = duration;
        spec.warmup = warm_up;
        spec.client_cpu = client_cpu;
        spec.server_cpu = server_cpu;
        Some(spec)
    }
}

impl<M: BenchRun> Measurer for BenchMeasurer<M> {
    fn warm_up(&mut self, _candidate: &Candidate, duration: Nanos) -> Result<(), MeasureError> {
        self.warm_up = duration;
        Ok(())
    }

    fn measure(&mut self, candidate: &Candidate, duration: Nanos) -> Result<Metrics, MeasureError> {
        let warm_up = std::mem::replace(&mut self.warm_up, Nanos::ZERO);
        let fail = |reason: String| MeasureError {
            candidate: candidate.id(),
            reason,
        };
        let spec = self
            .spec(candidate, duration, warm_up)
            .ok_or_else(|| fail(format!("placement {} needs two CPUs", candidate.placement)))?;
        let result = self
            .live
            .measure(&spec, &NoProgress)
            .map_err(|e| fail(format!("{:#}", anyhow::Error::new(e))))?;
        if let Some(w) = self.check.and_then(|check| check(candidate, &result)) {
            self.warnings.insert(w);
        }
        self.warnings.extend(result.warnings);
        Ok(result.metrics)
    }
}
