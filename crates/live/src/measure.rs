//! The live [`Measurer`]: each run is one bench-engine measurement on the testbed, with the
//! client and server threads pinned as the candidate's placement says.

use nictune_bench::result::SysctlsInForce;
use nictune_bench::{sysctls, BenchSpec, SpecRunner, TestKind};
use nictune_core::metrics::Metrics;
use nictune_core::progress::NoProgress;
use nictune_core::units::Nanos;
use nictune_tune::candidate::Candidate;
use nictune_tune::knob::End;
use nictune_tune::session::{MeasureError, Measurer};
use std::collections::BTreeSet;

/// Measures candidates with the bench engine, run by `live` (in this process against a
/// target, or inside a guest).
#[derive(Debug)]
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

impl<M: SpecRunner> BenchMeasurer<M> {
    /// A measurer running `test` through `live`, placing client and server threads on
    /// `cpus` (in the order placements index them); no pending warm-up, no warnings and no
    /// result check until `check` is set.
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

impl<M: SpecRunner> Measurer for BenchMeasurer<M> {
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
        let mut result = self
            .live
            .measure(&spec, &NoProgress)
            .map_err(|e| fail(nictune_core::error::chain(&e)))?;
        if let Some(w) = self.check.and_then(|check| check(candidate, &result)) {
            self.warnings.insert(w);
        }
        let own = own_caveats(candidate, &result.sysctls);
        let caveats = std::mem::take(&mut result.warnings)
            .into_iter()
            .filter(|w| !own.contains(w));
        self.warnings.extend(caveats);
        Ok(with_vectors(result))
    }
}

/// The bench's caveats about host-wide sysctls that `candidate` itself set for the run
/// (`net.core.busy_poll`), made again by the bench's own [`sysctls::warnings`] from the
/// values in force: "differs from the kernel default, results compare only with runs under
/// the same value" is about a host as found, not about a setting the tune made and puts
/// back. A local setting is this host's value, a `--both-ends` peer setting the peer's.
fn own_caveats(candidate: &Candidate, in_force: &SysctlsInForce) -> BTreeSet<String> {
    let mut own = BTreeSet::new();
    for s in &candidate.settings {
        let Some(key) = s.knob.key().strip_prefix("sysctl.") else {
            continue;
        };
        let (values, host) = match s.end {
            End::Local => (Some(&in_force.client), sysctls::THIS_HOST),
            End::Peer => (in_force.server.as_ref(), sysctls::THE_PEER),
        };
        if let Some(&value) = values.and_then(|v| v.get(key)) {
            let one = sysctls::Values::from([(key.to_string(), value)]);
            own.extend(sysctls::warnings(&one, host));
        }
    }
    own
}

/// `result`'s metrics with each host's NIC vectors, where it has several and one fired: what
/// tells which vector a setting moved (e1000e's NAPI deferral masks the RX vector only).
fn with_vectors(result: nictune_bench::BenchResult) -> Metrics {
    let mut metrics = result.metrics;
    for (name, host) in &mut metrics.hosts {
        let Some(acc) = result.accounting.get(name) else {
            continue;
        };
        let fired = acc.nic_vectors.iter().any(|v| v.per_sec > 0.0);
        if acc.nic_vectors.len() < 2 || !fired {
            continue;
        }
        host.vectors = acc.nic_vectors.clone();
    }
    metrics
}

#[cfg(test)]
mod tests {
    use super::*;
    use nictune_bench::{BenchError, FakeMeasurer};
    use nictune_tune::candidate::Placement;
    use std::sync::{Arc, Mutex};

    /// A fake bench engine that records every spec it is asked to run.
    fn recording() -> (FakeMeasurer, Arc<Mutex<Vec<BenchSpec>>>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&seen);
        let fake = FakeMeasurer::new(Box::new(move |spec, n| {
            log.lock().unwrap().push(spec.clone());
            if n == 2 {
                return Err(BenchError::Worker("the peer went away".into()));
            }
            Ok(Metrics {
                transactions_per_sec: Some(1000.0 * (n + 1) as f64),
                ..Metrics::default()
            })
        }));
        (fake, seen)
    }

    /// A bench engine whose every result carries the caveats of a host where busy_poll and
    /// netdev_budget differ from the kernel's defaults.
    struct Caveats;

    impl SpecRunner for Caveats {
        fn measure(
            &self,
            spec: &BenchSpec,
            _: &dyn nictune_core::progress::Progress,
        ) -> Result<nictune_bench::BenchResult, BenchError> {
            let mut r = nictune_bench::BenchResult::synthetic(spec, Metrics::default());
            r.sysctls.client = sysctls::Values::from([
                ("net.core.busy_poll".to_string(), 50),
                ("net.core.netdev_budget".to_string(), 600),
            ]);
            r.warnings = sysctls::warnings(&r.sysctls.client, sysctls::THIS_HOST);
            Ok(r)
        }
    }

    #[test]
    fn a_sysctl_the_candidate_set_is_not_a_caveat_about_the_host() {
        use nictune_tune::knob::{Knob, KnobValue, Setting};
        let mut m = BenchMeasurer::new(Caveats, TestKind::Rr, vec![0, 1]);
        let busy = Setting::new(Knob::BusyPoll, KnobValue::Duration(Nanos::from_micros(50)));
        let candidate = Candidate::new(vec![busy], Placement::Unpinned);
        m.measure(&candidate, Nanos::from_secs(1)).unwrap();
        let said: Vec<&str> = m.warnings.iter().map(String::as_str).collect();
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(
            said[0].starts_with("net.core.netdev_budget = 600"),
            "{said:?}"
        );
        // The settings as found set nothing: there the same value is the host's own.
        m.measure(
            &Candidate::baseline(Placement::Unpinned),
            Nanos::from_secs(1),
        )
        .unwrap();
        assert_eq!(m.warnings.len(), 2, "{:?}", m.warnings);
    }

    #[test]
    fn warm_up_joins_the_next_run_and_placements_pin_both_sides() {
        let (fake, seen) = recording();
        let mut m = BenchMeasurer::new(fake, TestKind::Rr, vec![2, 3]);
        let cross = Candidate::baseline(Placement::Cross);
        m.warm_up(&cross, Nanos::from_millis(300)).unwrap();
        let first = m.measure(&cross, Nanos::from_secs(1)).unwrap();
        assert_eq!(first.transactions_per_sec, Some(1000.0));
        let same = Candidate::baseline(Placement::Same);
        m.measure(&same, Nanos::from_secs(2)).unwrap();
        let specs = seen.lock().unwrap().clone();
        assert_eq!(specs[0].warmup, Nanos::from_millis(300));
        assert_eq!(
            (specs[0].client_cpu, specs[0].server_cpu),
            (Some(2), Some(3))
        );
        assert_eq!(specs[1].warmup, Nanos::ZERO, "a warm-up runs once");
        assert_eq!(
            (specs[1].client_cpu, specs[1].server_cpu),
            (Some(2), Some(2))
        );
        assert_eq!(specs[1].duration, Nanos::from_secs(2));
    }

    #[test]
    fn a_hosts_vectors_join_its_metrics_when_it_has_several() {
        use nictune_bench::accounting::{Accounting, IrqRate};
        use nictune_core::metrics::HostMetrics;
        let mut metrics = Metrics::default();
        for host in ["client", "server"] {
            metrics.hosts.insert(host.into(), HostMetrics::default());
        }
        let mut result =
            nictune_bench::BenchResult::synthetic(&BenchSpec::new(TestKind::Rr), metrics);
        let line = |irq, action: &str, per_sec| IrqRate {
            irq,
            action: action.into(),
            per_sec,
        };
        let server = Accounting {
            nic_vectors: vec![line(24, "eth0-rx-0", 990.0), line(25, "eth0-tx-0", 4800.0)],
            ..Accounting::default()
        };
        let client = Accounting {
            nic_vectors: vec![line(11, "eth0", 3000.0)],
            ..Accounting::default()
        };
        let idle = Accounting {
            nic_vectors: vec![
                line(30, "virtio2-input.0", 0.0),
                line(31, "virtio2-output.0", 0.0),
            ],
            ..Accounting::default()
        };
        result
            .metrics
            .hosts
            .insert("idle".into(), HostMetrics::default());
        result.accounting.insert("idle".into(), idle);
        result.accounting.insert("server".into(), server);
        result.accounting.insert("client".into(), client);
        let m = with_vectors(result);
        let v = &m.hosts["server"].vectors;
        assert_eq!(v.len(), 2);
        assert_eq!(
            (v[0].irq, v[0].action.as_str(), v[0].per_sec),
            (24, "eth0-rx-0", 990.0)
        );
        assert_eq!(v[1].per_sec, 4800.0);
        // One line is the total already, and lines that never fired say nothing: not added.
        assert!(m.hosts["client"].vectors.is_empty());
        assert!(m.hosts["idle"].vectors.is_empty());
    }

    #[test]
    fn a_failed_run_names_the_candidate_and_the_cause() {
        let (fake, _) = recording();
        let mut m = BenchMeasurer::new(fake, TestKind::Rr, vec![0, 1]);
        let c = Candidate::baseline(Placement::Unpinned);
        m.measure(&c, Nanos::from_secs(1)).unwrap();
        m.measure(&c, Nanos::from_secs(1)).unwrap();
        let e = m.measure(&c, Nanos::from_secs(1)).unwrap_err();
        assert_eq!(e.candidate, c.id());
        assert!(e.reason.contains("the peer went away"), "{}", e.reason);
    }

    #[test]
    fn a_pinned_placement_without_cpus_is_refused_before_running() {
        let (fake, seen) = recording();
        let mut m = BenchMeasurer::new(fake, TestKind::Rr, vec![0]);
        let e = m
            .measure(&Candidate::baseline(Placement::Cross), Nanos::from_secs(1))
            .unwrap_err();
        assert!(e.reason.contains("needs two CPUs"), "{}", e.reason);
        assert!(seen.lock().unwrap().is_empty());
    }
}
