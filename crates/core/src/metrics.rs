//! The metrics both the simulator (predicted) and the bench engine (measured) produce.
//!
//! The JSON shape is part of `nictune.sim/v2` and `nictune.bench/v2`: field names are stable,
//! and a field that does not apply is `null`, never missing. CPU shares are fractions 0–1.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Results of one run (simulated or measured).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    /// Completed transactions per second over the measured interval (request/response work).
    pub transactions_per_sec: Option<f64>,
    /// Transactions per second for each interim interval (≈1 s, like `netperf -D`).
    pub interim_transactions_per_sec: Vec<f64>,
    /// Latency summary in microseconds (transaction or probe round trip).
    pub latency_us: Option<LatencySummary>,
    /// Application payload delivered, both directions summed, in bits per second (the router:
    /// whole forwarded frames); docs/simulator.md, "What the figures mean".
    pub throughput_bps: Option<f64>,
    /// Per-host accounting, keyed by host name (`client`, `server`, `router`, ...).
    pub hosts: BTreeMap<String, HostMetrics>,
}

/// Latency distribution summary, all in microseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    /// Fastest sample, µs.
    pub min: f64,
    /// Arithmetic mean, µs.
    pub mean: f64,
    /// Median (50th percentile), µs.
    pub p50: f64,
    /// 90th percentile, µs.
    pub p90: f64,
    /// 99th percentile, µs.
    pub p99: f64,
    /// 99.9th percentile, µs (JSON key `p999`).
    pub p999: f64,
    /// Slowest sample, µs.
    pub max: f64,
    /// Population standard deviation, µs.
    pub stddev: f64,
}

/// What one host spent and lost.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostMetrics {
    /// Device interrupts per second (all of this host's NIC vectors).
    pub interrupts_per_sec: Option<f64>,
    /// Received packets per interrupt.
    pub packets_per_interrupt: Option<f64>,
    /// CPU time split, averaged over cores and per core.
    pub cpu: CpuSplit,
    /// Dropped packets by cause (`card_overflow`, `ring_full`, `pool_exhausted`, `backlog`, ...).
    pub drops: BTreeMap<String, u64>,
    /// NAPI polls that ended on budget or time with work left (softnet `time_squeeze`).
    pub time_squeeze: Option<u64>,
    /// NET_RX softirqs per second (`/proc/softirqs`): the receive path's wake-ups, which stand
    /// in for device interrupts where there are none (veth, loopback). `None` where not
    /// measured (the simulator, results from before it was recorded).
    #[serde(default)]
    pub net_rx_softirqs_per_sec: Option<f64>,
    /// The NIC's interrupt lines one by one when it has several (MSI-X: e1000e's RX, TX and
    /// other-causes vectors; a multi-queue NIC's queues), from `/proc/interrupts`: the split
    /// of `interrupts_per_sec`, as a tune records it. Empty (and left out of JSON) where the
    /// NIC has one line, none fired, or none was counted (veth, the simulator, the bench's
    /// own document, which lists them as `nic_vectors`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub vectors: Vec<IrqRate>,
}

/// One interrupt line's rate over an interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IrqRate {
    /// The IRQ number in `/proc/interrupts`.
    pub irq: u32,
    /// Its handlers' names, comma-separated (`eth0-rx-0`; `virtio0-input.0`).
    pub action: String,
    /// Interrupts per second on this line, all CPUs summed.
    pub per_sec: f64,
}

impl IrqRate {
    /// `<irq>:<action>`, as warnings and the text output name a vector.
    pub fn label(&self) -> String {
        format!("{}:{}", self.irq, self.action)
    }
}

/// CPU time as fractions 0–1 that sum to 1 for each core.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuSplit {
    /// Hard interrupt time (`/proc/stat` `irq` when measured), mean over cores.
    pub irq: f64,
    /// Softirq time (`/proc/stat` `softirq`; NAPI polling runs here), mean over cores.
    pub softirq: f64,
    /// Kernel time outside interrupt context (syscalls, busy polling). `null` where the
    /// source does not separate it (the simulator counts it under `user` unless modelled).
    pub system: Option<f64>,
    /// User time (`/proc/stat` `user` + `nice` when measured), mean over cores.
    pub user: f64,
    /// Idle time (`/proc/stat` `idle` + `iowait` when measured), mean over cores.
    pub idle: f64,
    /// The same split for each core, in core order.
    pub per_core: Vec<CoreSplit>,
}

/// One core's CPU time as fractions 0–1.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CoreSplit {
    /// Hard interrupt time (`/proc/stat` `irq` when measured).
    pub irq: f64,
    /// Softirq time (`/proc/stat` `softirq`).
    pub softirq: f64,
    /// Kernel time outside interrupt context; `None` where the source does not separate it.
    pub system: Option<f64>,
    /// User time (`/proc/stat` `user` + `nice` when measured).
    pub user: f64,
    /// Idle time (`/proc/stat` `idle` + `iowait` when measured; a core no tick landed on
    /// counts as fully idle).
    pub idle: f64,
}

impl CoreSplit {
    /// The busy fraction: everything but idle.
    pub fn busy(&self) -> f64 {
        1.0 - self.idle
    }
}

impl CpuSplit {
    /// Averages `per_core` into the host-wide split and keeps the per-core rows.
    pub fn from_cores(per_core: Vec<CoreSplit>) -> CpuSplit {
        let n = per_core.len().max(1) as f64;
        let sum = |f: fn(&CoreSplit) -> f64| per_core.iter().map(f).sum::<f64>() / n;
        let system = if per_core.iter().any(|c| c.system.is_some()) {
            Some(sum(|c| c.system.unwrap_or(0.0)))
        } else {
            None
        };
        CpuSplit {
            irq: sum(|c| c.irq),
            softirq: sum(|c| c.softirq),
            system,
            user: sum(|c| c.user),
            idle: sum(|c| c.idle),
            per_core,
        }
    }

    /// The busiest core's busy fraction (0 when there are no cores).
    pub fn busiest_core(&self) -> f64 {
        self.per_core
            .iter()
            .map(CoreSplit::busy)
            .fold(0.0, f64::max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_values_serialise_as_null() {
        let json = serde_json::to_value(Metrics::default()).unwrap();
        assert!(json["transactions_per_sec"].is_null());
        assert!(json["latency_us"].is_null());
        assert!(json["throughput_bps"].is_null());
        assert_eq!(json["interim_transactions_per_sec"], serde_json::json!([]));
    }

    #[test]
    fn cpu_split_averages_cores() {
        let a = CoreSplit {
            irq: 0.1,
            softirq: 0.3,
            system: None,
            user: 0.2,
            idle: 0.4,
        };
        let b = CoreSplit {
            irq: 0.0,
            softirq: 0.1,
            system: None,
            user: 0.1,
            idle: 0.8,
        };
        let split = CpuSplit::from_cores(vec![a, b]);
        assert!((split.softirq - 0.2).abs() < 1e-12);
        assert!((split.idle - 0.6).abs() < 1e-12);
        assert_eq!(split.system, None);
        assert!((split.busiest_core() - 0.6).abs() < 1e-12);
    }
}
