//! From one run's [`Metrics`] to the few numbers a tune compares: p99, rate, CPU per unit of
//! work, interrupts per second.
//!
//! CPU per transaction is the service demand of testbed-notes §9.4: busy CPU time (every
//! non-idle share, so busy polling counted under system time is not lost) divided by the work
//! done. When client and server share one machine (the testbed, loopback), both hosts report
//! the same CPUs, so adding them would count every core twice: [`CpuScope`] says which.

use nictune_core::metrics::{HostMetrics, Metrics};
use serde::{Deserialize, Serialize};

/// What "work" is for the workload: transactions (request/response) or bits (stream).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RateUnit {
    /// Rate in transactions/s; CPU cost in µs per transaction.
    Transactions,
    /// Rate in bit/s; CPU cost in µs per megabyte.
    Bits,
}

impl RateUnit {
    /// Unit label of the rate.
    pub fn rate_label(self) -> &'static str {
        match self {
            RateUnit::Transactions => "trans/s",
            RateUnit::Bits => "bit/s",
        }
    }

    /// Unit label of the CPU cost.
    pub fn cost_label(self) -> &'static str {
        match self {
            RateUnit::Transactions => "CPU µs/trans",
            RateUnit::Bits => "CPU µs/MB",
        }
    }

    /// Units of work per second at `rate` (transactions, or megabytes for bits).
    fn work_per_sec(self, rate: f64) -> f64 {
        match self {
            RateUnit::Transactions => rate,
            RateUnit::Bits => rate / 8.0 / 1e6,
        }
    }
}

/// Whether the hosts in a result are separate machines or views of one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CpuScope {
    /// Separate machines: CPU adds up.
    PerHost,
    /// One machine seen from both ends: count its CPUs once (the busiest view).
    SharedMachine,
}

/// The numbers of one run a tune compares.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Observation {
    /// p50 latency, µs.
    pub p50_us: Option<f64>,
    /// p99 latency, µs.
    pub p99_us: Option<f64>,
    /// Work rate in the workload's [`RateUnit`].
    pub rate: Option<f64>,
    /// Busy CPU time per unit of work, µs.
    pub cpu_us_per_unit: Option<f64>,
    /// Busy CPUs (sum of busy fractions): what busy polling costs even when the cost per
    /// unit of work falls.
    pub busy_cores: Option<f64>,
    /// Device interrupts per second, all hosts.
    pub interrupts_per_sec: Option<f64>,
}

impl Observation {
    /// The observation of `m` for work measured in `unit`.
    pub fn of(m: &Metrics, unit: RateUnit, scope: CpuScope) -> Observation {
        let rate = match unit {
            RateUnit::Transactions => m.transactions_per_sec,
            RateUnit::Bits => m.throughput_bps,
        };
        let busy = busy_cores(m, scope);
        let cpu_us_per_unit = match (busy, rate) {
            (Some(b), Some(r)) if r > 0.0 => Some(b * 1e6 / unit.work_per_sec(r)),
            _ => None,
        };
        Observation {
            p50_us: m.latency_us.map(|l| l.p50),
            p99_us: m.latency_us.map(|l| l.p99),
            rate,
            cpu_us_per_unit,
            busy_cores: busy,
            interrupts_per_sec: interrupts(m, scope),
        }
    }
}

/// Busy cores (sum of per-core busy fractions) of one host; `None` without per-core data.
fn host_busy_cores(h: &HostMetrics) -> Option<f64> {
    if h.cpu.per_core.is_empty() {
        return None;
    }
    Some(h.cpu.per_core.iter().map(|c| c.busy()).sum())
}

fn busy_cores(m: &Metrics, scope: CpuScope) -> Option<f64> {
    combine(m.hosts.values().filter_map(host_busy_cores), scope)
}

fn interrupts(m: &Metrics, scope: CpuScope) -> Option<f64> {
    combine(m.hosts.values().filter_map(|h| h.interrupts_per_sec), scope)
}

/// Sum for separate machines, maximum for one machine; `None` when nothing was reported.
fn combine(values: impl Iterator<Item = f64>, scope: CpuScope) -> Option<f64> {
    values.reduce(|a, b| match scope {
        CpuScope::PerHost => a + b,
        CpuScope::SharedMachine => a.max(b),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use nictune_core::metrics::{CoreSplit, CpuSplit, LatencySummary};

    fn host(idle: [f64; 2], irqs: f64) -> HostMetrics {
        let core = |idle| CoreSplit {
            irq: 0.0,
            softirq: 0.1,
            system: Some(0.9 - idle),
            user: 0.0,
            idle,
        };
        HostMetrics {
            interrupts_per_sec: Some(irqs),
            cpu: CpuSplit::from_cores(idle.iter().map(|&i| core(i)).collect()),
            ..HostMetrics::default()
        }
    }

    fn metrics() -> Metrics {
        let mut m = Metrics {
            transactions_per_sec: Some(10_000.0),
            latency_us: Some(LatencySummary {
                p50: 99.0,
                p99: 167.0,
                ..LatencySummary::default()
            }),
            ..Metrics::default()
        };
        m.hosts.insert("client".into(), host([0.7, 0.7], 100.0));
        m.hosts.insert("server".into(), host([0.7, 0.5], 50.0));
        m
    }

    #[test]
    fn cpu_per_transaction_counts_a_shared_machine_once() {
        let m = metrics();
        // Separate machines: 0.6 + 0.8 busy cores over 10 k trans/s = 140 µs per transaction.
        let sep = Observation::of(&m, RateUnit::Transactions, CpuScope::PerHost);
        assert!((sep.cpu_us_per_unit.unwrap() - 140.0).abs() < 1e-9);
        assert_eq!(sep.interrupts_per_sec, Some(150.0));
        // One machine: the busier view, 0.8 cores → 80 µs.
        let one = Observation::of(&m, RateUnit::Transactions, CpuScope::SharedMachine);
        assert!((one.cpu_us_per_unit.unwrap() - 80.0).abs() < 1e-9);
        assert_eq!(one.p99_us, Some(167.0));
    }

    #[test]
    fn stream_cost_is_per_megabyte_and_missing_data_stays_missing() {
        let mut m = metrics();
        m.throughput_bps = Some(8e9); // 1000 MB/s
        let obs = Observation::of(&m, RateUnit::Bits, CpuScope::SharedMachine);
        // 0.8 busy cores × 1e6 µs/s over 1000 MB/s = 800 µs per MB.
        assert!((obs.cpu_us_per_unit.unwrap() - 800.0).abs() < 1e-9);
        let empty = Observation::of(&Metrics::default(), RateUnit::Bits, CpuScope::PerHost);
        assert_eq!(empty.cpu_us_per_unit, None);
        assert_eq!(empty.rate, None);
    }
}
