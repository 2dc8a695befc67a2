//! `mbuf-clusters`: the 2 KB cluster zone (kern.ipc.nmbclusters) must hold one cluster per
//! receive descriptor of every queue of every port, plus transmit, socket and in-flight
//! clusters; otherwise `*_setup_receive_structures` fails at init ("could not setup receive
//! structures") or allocations are denied under load (moderation-algorithms.md §8.1).

use super::{driver_of, queue_vectors, QueueVector};
use crate::doctor::{Finding, Severity};
use crate::freebsd::FreeBsdSnapshot;
use std::collections::BTreeMap;

/// Headroom over the receive rings for transmit, sockets and packets in flight: 25 %, the
/// margin that turns Case 5's 10 ports × 4 queues × 4096 rxd = 163840 into its 204800.
const HEADROOM: f64 = 1.25;
/// Clusters in use above this share of the limit is "near the limit".
const NEAR_LIMIT: f64 = 0.9;
/// Driver default receive descriptors when `hw.<drv>.rxd` is not set (igb/em: 1024).
const DEFAULT_RXD: u64 = 1024;

pub fn clusters(snap: &FreeBsdSnapshot) -> Vec<Finding> {
    let Some(limit) = cluster_limit(snap) else {
        return Vec::new();
    };
    let need = ring_clusters(snap);
    // Saturating: the counts come from captured text (a mutated `hw.igb.rxd` once overflowed).
    let required = need
        .values()
        .fold(0u64, |sum, (_, _, c)| sum.saturating_add(*c));
    let wanted = ((required as f64) * HEADROOM).ceil() as u64;
    let in_use = snap.mbufs.as_ref().and_then(|m| m.clusters_current);
    let denied = snap.mbufs.as_ref().map_or(0, |m| m.denied());
    let near = in_use.is_some_and(|u| u as f64 >= NEAR_LIMIT * limit as f64);
    let short = wanted > limit;
    let setup_failed = !snap.dmesg.rx_setup_failed.is_empty();
    if !short && !near && denied == 0 && !setup_failed {
        return Vec::new();
    }
    let severity = if short || setup_failed {
        Severity::Error
    } else {
        Severity::Warning
    };
    let mut f = Finding::new("mbuf-clusters", severity, "kern.ipc.nmbclusters")
        .evidence("kern.ipc.nmbclusters", limit)
        .evidence("receive clusters needed (Σ rxd × queues × ports)", required)
        .evidence(
            format!("with {:.0} % headroom", (HEADROOM - 1.0) * 100.0),
            wanted,
        );
    for (drv, (ports, queues, clusters)) in &need {
        f = f.evidence(
            drv.clone(),
            format!("{ports} ports × {queues} queues × rxd = {clusters}"),
        );
    }
    let target = target_limit(wanted, limit, short);
    vec![usage_evidence(f, snap, denied)
        .explain(
            "Each receive descriptor holds an mbuf cluster from the moment the interface comes up. \
             When the cluster limit is below what all rings need, interfaces fail to initialise \
             (\"could not setup receive structures\") or drop packets when allocations are denied.",
        )
        .fix(format!("sysctl kern.ipc.nmbclusters={target}"))
        .fix(format!("echo 'kern.ipc.nmbclusters={target}' >> /boot/loader.conf"))]
}

/// The cluster limit: the tunable when captured, else the maximum `netstat -m` reports.
fn cluster_limit(snap: &FreeBsdSnapshot) -> Option<u64> {
    snap.setting_i64("kern.ipc.nmbclusters")
        .and_then(|v| u64::try_from(v).ok())
        .or(snap.mbufs.as_ref().and_then(|m| m.clusters_max))
}

/// What `netstat -m` and dmesg show about clusters in use, denials and failed ring setup.
fn usage_evidence(mut f: Finding, snap: &FreeBsdSnapshot, denied: u64) -> Finding {
    if let Some(m) = &snap.mbufs {
        if let (Some(c), Some(max)) = (m.clusters_current, m.clusters_max) {
            f = f.evidence("clusters in use / max (netstat -m)", format!("{c}/{max}"));
        }
        f = f.evidence("denied requests (netstat -m)", denied);
    }
    if !snap.dmesg.rx_setup_failed.is_empty() {
        f = f.evidence(
            "could not setup receive structures (dmesg)",
            snap.dmesg.rx_setup_failed.join(", "),
        );
    }
    f
}

/// Short: exactly what the rings need with headroom; otherwise (in use near the limit,
/// denials) double the limit. Rounded up to a multiple of 1024.
fn target_limit(wanted: u64, limit: u64, short: bool) -> u64 {
    let target = if short {
        wanted
    } else {
        wanted.max(limit.saturating_mul(2))
    };
    target.div_ceil(1024).saturating_mul(1024)
}

/// Per driver: `(ports, queues per port, clusters)` for the receive rings.
fn ring_clusters(snap: &FreeBsdSnapshot) -> BTreeMap<String, (u64, u64, u64)> {
    let mut ports: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    for QueueVector { dev, queue, .. } in queue_vectors(snap) {
        let per_port = ports.entry(driver_of(&dev).to_string()).or_default();
        let q = per_port.entry(dev).or_default();
        *q = (*q).max(u64::from(queue) + 1);
    }
    ports
        .into_iter()
        .map(|(drv, per_port)| {
            let rxd = snap
                .setting_i64(&format!("hw.{drv}.rxd"))
                .and_then(|v| u64::try_from(v).ok())
                .unwrap_or(DEFAULT_RXD);
            let queues = snap
                .setting_i64(&format!("hw.{drv}.num_queues"))
                .filter(|q| *q > 0)
                .map(|q| q as u64)
                .unwrap_or_else(|| per_port.values().copied().max().unwrap_or(1));
            let n = per_port.len() as u64;
            (
                drv,
                (n, queues, n.saturating_mul(queues).saturating_mul(rxd)),
            )
        })
        .collect()
}
