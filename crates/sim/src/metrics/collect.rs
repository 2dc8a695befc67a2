//! A finished run → the shared [`Metrics`] shape of `nictune.sim/v1`.

use super::core_ns::CoreNs;
use crate::engine::sim::{HostReport, SimOutput};
use nictune_core::metrics::{CpuSplit, HostMetrics, Metrics};
use std::collections::BTreeMap;

/// Drop causes always reported (zero when none happened).
pub const DROP_CAUSES: [&str; 3] = ["card_overflow", "ring_full", "pool_exhausted"];

/// The metrics of a run.
pub fn metrics(out: &SimOutput) -> Metrics {
    let secs = out.sim_ns as f64 / 1e9;
    let rec = &out.recorder;
    Metrics {
        transactions_per_sec: out.transactions.then(|| rec.transactions as f64 / secs),
        interim_transactions_per_sec: if out.transactions {
            rec.interim_rates()
        } else {
            Vec::new()
        },
        latency_us: rec.latency.summary_us(),
        throughput_bps: Some(rec.payload_bytes as f64 * 8.0 / secs),
        hosts: out
            .hosts
            .iter()
            .map(|h| (h.name.clone(), host_metrics(h, out.sim_ns)))
            .collect(),
    }
}

fn host_metrics(h: &HostReport, sim_ns: u64) -> HostMetrics {
    let secs = sim_ns as f64 / 1e9;
    let interrupts = h.stats.interrupts;
    let per_core = h
        .cores
        .iter()
        .map(|c| {
            CoreNs {
                irq: c.irq,
                softirq: c.softirq,
                user: c.user,
                system: 0,
            }
            .split(sim_ns)
        })
        .collect();
    let counts = [h.counters.drop_card_overflow, h.counters.drop_ring_full, 0];
    let drops: BTreeMap<String, u64> = DROP_CAUSES
        .iter()
        .zip(counts)
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    HostMetrics {
        interrupts_per_sec: Some(interrupts as f64 / secs),
        packets_per_interrupt: (interrupts > 0)
            .then(|| h.stats.rx_processed as f64 / interrupts as f64),
        cpu: CpuSplit::from_cores(per_core),
        drops,
        time_squeeze: Some(h.stats.time_squeeze),
        // The simulator models interrupts, not the softirq raises between them.
        net_rx_softirqs_per_sec: None,
        vectors: Vec::new(),
    }
}
